/**
 * The editor on nftables files (issue 14, deliverables 4–5), through the engine worker's protocol as the
 * extension asks it: outline, folds, definition / references / rename of chains, sets and defines, chain
 * CodeLens, hovers (rule readings, numgen shares, set contents, kube-proxy names), diagnostics with the
 * nft linter, Trace Packet, and the comparison that says plainly it does not read nft yet. The rulesets are
 * the kernel-checked fixtures of test/fixtures/kernel-nft (their README says how the kernel ran them).
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { EngineMethods, Method } from '../../src/shared/engine-protocol.ts';
import { EngineHost } from '../../src/worker/engine-host.ts';
import { ROOT } from '../helpers/fixtures.ts';
import { applyEdits, at, lineOf } from './helpers.ts';

const fixture = (dir: string, file: string) =>
  readFileSync(join(ROOT, 'test', 'fixtures', 'kernel-nft', dir, file), 'utf8');
const KUBE = fixture('kube-proxy', 'ruleset.txt');
const KUBE_SCRIPT = fixture('kube-proxy', 'ruleset.nft');
const NUMGEN = fixture('numgen', 'ruleset.txt');
const HOST = fixture('host-firewall', 'ruleset.nft');

async function open(text: string, key = 'k') {
  const host = new EngineHost();
  const ask = async <M extends Method>(method: M, params: Omit<EngineMethods[M]['params'], 'key'>, k = key) => {
    const r = await host.handle({ id: 1, method, params: { key: k, ...params } as EngineMethods[M]['params'] });
    if (!r.ok) throw new Error(r.error);
    return r.result as EngineMethods[M]['result'];
  };
  const summary = await ask('load', { file: 'ruleset.txt', maxBytes: 1 << 26, source: { text } });
  return { ask, summary, host };
}

const FULL = { maxRulesForFullCheck: 100_000, maxDiagnostics: 1000 };

describe('nftables files in the editor', () => {
  it('outlines tables with their sets, maps and chains (list and script forms)', async () => {
    for (const text of [KUBE, KUBE_SCRIPT]) {
      const { ask, summary } = await open(text);
      assert.equal(summary.errorCount, 0);
      const rows = (await ask('outline', { offset: 0, limit: 1000, max: 1000 })).items;
      assert.equal(rows[0]!.name, 'ip kube-proxy');
      assert.equal(rows[0]!.kind, 'table');
      const byName = new Map(rows.map(r => [r.name, r]));
      assert.equal(byName.get('service-ips')!.kind, 'map');
      assert.match(
        byName.get('service-ips')!.detail,
        /verdict map · ipv4_addr \. inet_proto \. inet_service : verdict/,
      );
      assert.equal(byName.get('cluster-ips')!.kind, 'set');
      assert.match(
        byName.get('nat-prerouting')!.detail,
        /nat hook prerouting priority .*-100.* · policy accept · 1 rule/,
      );
      // The selection is the chain's name where it is declared.
      const sel = byName.get('nat-prerouting')!.selectionRange;
      assert.equal(text.split('\n')[sel.start.line]!.slice(sel.start.character, sel.end.character), 'nat-prerouting');
      for (const r of rows.filter(x => x.parent >= 0)) {
        const table = rows[r.parent]!;
        assert.ok(r.range.start.line >= table.range.start.line && r.range.end.line <= table.range.end.line, r.name);
      }
    }
  });

  it('folds table, chain and set blocks', async () => {
    const { ask } = await open(KUBE);
    const folds = (await ask('folding', { max: 1000 })).items;
    const setLine = lineOf(KUBE, 'map service-ips {');
    assert.ok(folds.some(f => f.start === setLine && KUBE.split('\n')[f.end]!.trim() === '}'));
    assert.ok(folds.some(f => f.start === 0 && f.end >= lineOf(KUBE, 'chain firewall-HVFWP5L3')));
  });

  it('goes to definitions and references of chains (jump, goto, map elements), sets and defines', async () => {
    const { ask } = await open(KUBE);
    const target = 'service-LAUZTJTB-ns4/svc4/tcp/p80';
    const def = await ask('definition', at(KUBE, `172.30.0.44 . tcp . 80 : goto ${target}`, target));
    assert.equal(def!.start.line, lineOf(KUBE, `chain ${target} {`));
    const refs = await ask('references', { ...at(KUBE, `chain ${target} {`, target), includeDeclaration: false });
    // The service-ips element and the external chain's goto.
    assert.deepEqual(
      refs!.map(r => r.start.line),
      [lineOf(KUBE, `172.30.0.44 . tcp . 80 : goto ${target}`), lineOf(KUBE, `		goto ${target}`)],
    );
    const setDef = await ask('definition', at(KUBE, 'vmap @service-nodeports', 'service-nodeports'));
    assert.equal(setDef!.start.line, lineOf(KUBE, 'map service-nodeports {'));
    const host = await open(HOST);
    const v = await host.ask('definition', at(HOST, 'elements = $ADMIN_V4', 'ADMIN_V4'));
    assert.equal(v!.start.line, lineOf(HOST, 'define ADMIN_V4'));
  });

  it('renames a chain everywhere in its table, and refuses names nft would not read', async () => {
    const { ask } = await open(KUBE);
    const pos = at(KUBE, 'jump mark-for-masquerade', 'mark-for-masquerade');
    const r = await ask('rename', { ...pos, newName: 'mark-it' });
    assert.ok(r.ok);
    const after = applyEdits(KUBE, r.edits);
    assert.ok(!after.includes('mark-for-masquerade'));
    assert.equal(after.split('jump mark-it').length - 1, KUBE.split('jump mark-for-masquerade').length - 1);
    assert.ok(after.includes('chain mark-it {'));
    const bad = await ask('rename', { ...pos, newName: 'two words' });
    assert.ok(!bad.ok);
    const taken = await ask('rename', { ...pos, newName: 'masquerading' });
    assert.ok(!taken.ok && /already has a chain named masquerading/.test(taken.message));
    // The renamed file reads the same, chain for chain.
    const again = await open(after);
    assert.equal(again.summary.errorCount, 0);
    assert.equal(again.summary.chainCount, (await open(KUBE)).summary.chainCount);
  });

  it('renames a define at its declaration and every $use', async () => {
    const { ask } = await open(HOST);
    const r = await ask('rename', { ...at(HOST, 'elements = $ADMIN_V4', 'ADMIN_V4'), newName: 'ADMINS' });
    assert.ok(r.ok);
    const after = applyEdits(HOST, r.edits);
    assert.ok(after.includes('define ADMINS = {') && after.includes('elements = $ADMINS'));
  });

  it('puts a CodeLens on each chain: hook, priority and policy, or how many jump there', async () => {
    const { ask } = await open(KUBE);
    const rows = (await ask('chainLenses', { fromLine: 0, toLine: 1e9, max: 1000 })).items;
    const by = new Map(rows.map(r => [r.chain, r]));
    assert.equal(by.get('filter-input')!.title, 'hook input · priority 0 · policy accept');
    assert.equal(
      by.get('mark-for-masquerade')!.title,
      `referenced by ${KUBE.split('jump mark-for-masquerade').length - 1}`,
    );
    const refs = await ask('chainReferences', { table: 'ip kube-proxy', chain: 'reject-chain' });
    assert.deepEqual(
      refs.map(r => r.start.line),
      [lineOf(KUBE, 'goto reject-chain')],
    );
  });

  it('reads numgen verdict maps with each branch’s exact share (nft_numgen reciprocal_scale)', async () => {
    const { ask } = await open(NUMGEN);
    const h = await ask('hover', { line: lineOf(NUMGEN, 'tcp dport 8001'), character: 2 });
    // 2^32 is not a multiple of 3: the kernel's shares are 1431655766, 1431655765 and 1431655765 in 2^32.
    assert.match(h!.markdown, /\| 0 \| jump `to_a` \| 33\.33% \| 715827883\/2147483648 \|/);
    assert.match(h!.markdown, /\| 1 \| jump `to_b` \| 33\.33% \| 1431655765\/4294967296 \|/);
    const k = await open(KUBE);
    const svc = await k.ask('hover', at(KUBE, 'chain service-LAUZTJTB-ns4/svc4/tcp/p80 {', 'service-'));
    assert.match(svc!.markdown, /Service port `ns4\/svc4 port p80 \(tcp\)`/);
    assert.match(svc!.markdown, /\| 10\\\.180\\\.0\\\.4:80 \| 50% \| 1\/2 \|/);
    const ep = await k.ask('hover', at(KUBE, 'chain endpoint-5RFCDDV7-ns4/svc4/tcp/p80__10.180.0.5/80 {', 'endpoint-'));
    assert.match(ep!.markdown, /endpoint `10\.180\.0\.5:80`/);
    assert.match(
      ep!.markdown,
      /Gets 50% \(exactly 1\/2\) of new connections through `service-LAUZTJTB-ns4\/svc4\/tcp\/p80`/,
    );
  });

  it('shows a set or map with its contents and counts, a rule in plain words, and a define’s value', async () => {
    const { ask } = await open(KUBE);
    const m = await ask('hover', at(KUBE, 'vmap @no-endpoint-services', 'no-endpoint-services'));
    assert.match(m!.markdown, /verdict map of table `ip kube-proxy` · ipv4\\_addr .* 3 elements · used by 1 reference/);
    assert.match(m!.markdown, /\| 172\\\.30\\\.0\\\.46 \\\. tcp \\\. 80 \| goto reject\\-chain \| ns6\/svc6:p80 \|/);
    const r = await ask('hover', { line: lineOf(KUBE, 'ip daddr @cluster-ips reject'), character: 3 });
    assert.match(r!.markdown, /When `ip daddr` is in `@cluster-ips` \(6 elements\): reject/);
    const h = await open(HOST);
    const d = await h.ask('hover', at(HOST, 'elements = $ADMIN_V4', 'ADMIN_V4'));
    assert.match(d!.markdown, /\$ADMIN\\_V4\*\* = `\{ 198\.51\.100\.0\/24, 203\.0\.113\.64-203\.0\.113\.95 \}`/);
  });

  it('reports the parser’s errors and the linter’s findings with ranges', async () => {
    const text = [
      'table inet t {',
      '\tset unused { type ipv4_addr; }',
      '\tchain in {',
      '\t\ttype filter hook input priority 0; policy accept;',
      '\t\ttcp dport 22 accept',
      '\t\ttcp dport 22 ip saddr 10.0.0.1 drop',
      '\t\tjump a',
      '\t\tjump nowhere',
      '\t}',
      '\tchain a {',
      '\t\tjump b',
      '\t}',
      '\tchain b {',
      '\t\tjump a',
      '\t}',
      '\tchain lonely {',
      '\t\tdrop',
      '\t}',
      '}',
      '',
    ].join('\n');
    const { ask } = await open(text);
    const d = (await ask('diagnostics', { options: FULL })).diagnostics;
    const codes = d.map(x => `${x.range.start.line}:${x.code}`);
    assert.ok(codes.includes('1:unused-set'), codes.join(' '));
    assert.ok(codes.includes('5:shadowed-rule'), codes.join(' '));
    assert.ok(codes.includes('7:unknown-chain'), codes.join(' '));
    assert.ok(codes.includes('15:unused-chain'), codes.join(' '));
    const loop = d.find(x => x.code === 'jump-loop')!;
    assert.equal(loop.severity, 'error');
    assert.equal(d.find(x => x.code === 'shadowed-rule')!.related[0]!.range.start.line, 4);
    // The kernel-checked rulesets have none.
    for (const clean of [KUBE, NUMGEN, HOST])
      assert.deepEqual(
        (await (await open(clean)).ask('diagnostics', { options: FULL })).diagnostics.filter(
          x => x.severity !== 'info',
        ),
        [],
      );
  });

  it('traces a packet through the numgen vmap: one outcome per endpoint, with the nft rule lines', async () => {
    const { ask } = await open(KUBE);
    const r = await ask('trace', { packet: 'tcp 10.0.0.5:40000 -> 172.30.0.44:80', node: {} });
    assert.ok(r.ok);
    assert.deepEqual(r.trace.outcomes.map(o => [o.probability, o.dnat]).sort(), [
      [0.5, '10.180.0.4:80'],
      [0.5, '10.180.0.5:80'],
    ]);
    const numgenLine = lineOf(KUBE, 'numgen random mod 2') + 1;
    for (const o of r.trace.outcomes) assert.ok(o.steps.some(s => s.line === numgenLine));
    assert.ok(r.verdicts.some(v => v.line === numgenLine - 1 && v.matched === 1));
  });

  it('compares two nft rulesets: the same ruleset in two forms is identical (proven), an edit is a change', async () => {
    const { ask } = await open(KUBE, 'old');
    await ask('load', { file: 'b.nft', maxBytes: 1 << 26, source: { text: KUBE_SCRIPT } }, 'new');
    const same = await ask('diff', { oldKey: 'old', newKey: 'new', node: {} });
    assert.ok(same.ok, same.ok ? '' : same.error);
    assert.equal(same.report.verdict, 'identical');
    const edited = KUBE.replace(
      /numgen random mod 2 vmap \{ 0 : goto (\S+), 1 : goto \S+ \}/,
      'numgen random mod 1 vmap { 0 : goto $1 }',
    );
    assert.notEqual(edited, KUBE);
    await ask('load', { file: 'c.txt', maxBytes: 1 << 26, source: { text: edited } }, 'edited');
    const r = await ask('diff', { oldKey: 'old', newKey: 'edited', node: { addresses: ['172.18.0.4'] } });
    assert.ok(r.ok, r.ok ? '' : r.error);
    assert.equal(r.report.verdict, 'changed');
    assert.ok(r.report.changes.length > 0);
  });
});
