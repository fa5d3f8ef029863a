import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { chainTokensOnLine } from '../../src/editor/chain-tokens.ts';
import {
  chainAt,
  definitionOf,
  invalidChainName,
  prepareRename,
  referencesOf,
  renameChain,
} from '../../src/editor/navigation.ts';
import { parseIptables } from '../../src/engine/api.ts';
import { analyze, applyEdits, at, dump, lineOf, seedText } from './helpers.ts';

const HAND = dump([
  '*filter',
  ':INPUT DROP [0:0]',
  ':FORWARD ACCEPT [0:0]',
  ':OUTPUT ACCEPT [0:0]',
  ':WEB - [0:0]',
  '-A INPUT -p tcp -m tcp --dport 80 -m comment --comment "to WEB" -j WEB',
  '-A INPUT -p tcp --dport 8080 -g WEB',
  '-A WEB -s 10.0.0.0/8 -j ACCEPT',
  '-A WEB -j DROP',
  'COMMIT',
  '*nat',
  ':PREROUTING ACCEPT [0:0]',
  ':WEB - [0:0]',
  '-A PREROUTING -j WEB',
  'COMMIT',
]);

describe('chain names on a line', () => {
  it('finds declarations, command arguments and -j/-g targets, not words in comments', () => {
    assert.deepEqual(
      chainTokensOnLine(':KUBE-SVC-X - [0:0]').map(t => [t.name, t.role, t.start]),
      [['KUBE-SVC-X', 'declaration', 1]],
    );
    assert.deepEqual(
      chainTokensOnLine('[3:180] -A INPUT -m comment --comment "-j FAKE" -j WEB').map(t => [t.name, t.role]),
      [
        ['INPUT', 'command'],
        ['WEB', 'target'],
      ],
    );
    assert.deepEqual(
      chainTokensOnLine('-E OLD NEW').map(t => t.name),
      ['OLD', 'NEW'],
    );
    assert.deepEqual(chainTokensOnLine('# -A INPUT -j X'), []);
  });
});

describe('definition, references and rename', () => {
  const idx = analyze(HAND);

  it('resolves a chain name in the table whose section holds the line', () => {
    const filterJump = chainAt(idx, 5, HAND.split('\n')[5]!.lastIndexOf('WEB') + 1)!;
    assert.equal(filterJump.span.table.name, 'filter');
    assert.deepEqual(definitionOf(idx, filterJump)?.start, { line: 4, character: 1 });
    const natJump = chainAt(idx, 13, 18)!;
    assert.equal(natJump.span.table.name, 'nat');
    assert.deepEqual(definitionOf(idx, natJump)?.start, { line: 12, character: 1 });
  });

  it('verdicts and target extensions are not chains', () => {
    assert.equal(chainAt(idx, 7, HAND.split('\n')[7]!.indexOf('ACCEPT') + 1), null);
  });

  it('lists every occurrence in the section, with or without the declaration', () => {
    const a = chainAt(idx, 4, 2)!;
    const lines = (incl: boolean) => referencesOf(idx, a, incl).map(r => `${r.start.line}:${r.start.character}`);
    const src = HAND.split('\n');
    const jump = `5:${src[5]!.lastIndexOf('WEB')}`;
    const go = `6:${src[6]!.lastIndexOf('WEB')}`;
    assert.deepEqual(lines(true), ['4:1', jump, go, '7:3', '8:3']);
    assert.deepEqual(lines(false), [jump, go, '7:3', '8:3']);
  });

  it('renames a chain everywhere in its table and nowhere else; the result parses the same', () => {
    const r = renameChain(idx, 4, 2, 'HTTP');
    assert.ok(r.ok);
    const text = applyEdits(HAND, r.edits);
    assert.match(text, /:HTTP - \[0:0\]/);
    assert.match(text, /-j HTTP\n/);
    assert.match(text, /-g HTTP\n/);
    assert.match(text, /"to WEB"/);
    assert.match(text, /-A PREROUTING -j WEB/);
    const rs = parseIptables(text);
    assert.deepEqual(rs.diagnostics, []);
    assert.equal(rs.tables.get('filter')!.chains.get('HTTP')!.rules.length, 2);
  });

  it('refuses built-in chains, names iptables refuses, and names already taken', () => {
    const p = prepareRename(idx, 1, 2);
    assert.ok(!p.ok && /built-in/.test(p.message));
    const span = idx.tableAt(4)!;
    assert.match(invalidChainName('DNAT', span)!, /target/);
    assert.match(invalidChainName('A'.repeat(29), span)!, /28/);
    assert.match(invalidChainName('-X', span)!, /start/);
    assert.match(invalidChainName('has space', span)!, /blanks/);
    assert.match(invalidChainName('INPUT', span)!, /already/);
    assert.equal(invalidChainName('KUBE-NEW', span), null);
    const r = renameChain(idx, 4, 2, 'OUTPUT');
    assert.ok(!r.ok);
  });

  it('finds kube-proxy chains across the seed dump', () => {
    const seed = seedText();
    const sidx = analyze(seed);
    const pos = at(seed, ':KUBE-SEP-ZNBEHD3XV5ZTBRAT', 'KUBE-SEP');
    const a = chainAt(sidx, pos.line, pos.character)!;
    const refs = referencesOf(sidx, a, false).map(r => r.start.line);
    assert.deepEqual(refs, [
      lineOf(seed, '-A KUBE-SEP-ZNBEHD3XV5ZTBRAT -s'),
      lineOf(seed, '-A KUBE-SEP-ZNBEHD3XV5ZTBRAT -p'),
      lineOf(seed, '-j KUBE-SEP-ZNBEHD3XV5ZTBRAT'),
    ]);
  });
});
