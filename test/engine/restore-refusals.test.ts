/**
 * The parser agrees with the kernel's tools on which files they refuse (issue 12, deliverable 7). Truth:
 * test/fixtures/kernel/restore-refusals/results.json, recorded by scripts/restore-refusals.sh from
 * iptables-legacy-restore and iptables-nft-restore 1.8.9 run in a private network namespace.
 */
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { parseIptables } from '../../src/engine/api.ts';
import { ROOT } from '../helpers/fixtures.ts';

const DIR = join(ROOT, 'test/fixtures/kernel/restore-refusals');
interface Run {
  readonly status: number;
  readonly stderr: readonly string[];
}
const results = JSON.parse(readFileSync(join(DIR, 'results.json'), 'utf8')) as {
  files: Record<string, { legacy: Run; nft: Run }>;
};

function errorsOf(name: string) {
  const rs = parseIptables(readFileSync(join(DIR, name), 'utf8'), { file: name });
  return rs.diagnostics.filter(d => d.severity === 'error');
}

/** The tool's own words, as the message must quote them, and the line its error names (1-based). */
const WORDS: Record<string, { words: RegExp; line: number }> = {
  'undeclared-jump.rules': { words: /Couldn't load target `NOPE'/, line: 5 },
  'undeclared-goto.rules': { words: /goto 'NOPE' is not a chain/, line: 5 },
  'spaces-line.rules': { words: /no command specified"; line 5 failed/, line: 5 },
  'tab-line.rules': { words: /no command specified"; line 5 failed/, line: 5 },
  'no-commit.rules': { words: /COMMIT expected at line 7/, line: 1 },
  'cut-mid-table.rules': {
    words: /COMMIT expected at line 7"\); the file ends in the middle of line 6, so it was probably cut off/,
    line: 1,
  },
  'utf8-bom.rules': { words: /line 1 failed/, line: 1 },
  'utf-16.rules': { words: /UTF-16 text: iptables-restore refuses it \("line 1 failed"\)/, line: 1 },
  'crlf.rules': { words: /Windows line ends.*unable to initialize table 'filter\\r'/, line: 1 },
  'nul-byte.rules': { words: /Couldn't load target `ACC'/, line: 5 },
  'no-policy.rules': { words: /LOGDROP is declared without a policy: .*"line 4 policy invalid"/, line: 4 },
  'word-1024.rules': {
    words: /"Parameter too long!" \(a word may have at most 1023 characters; the longest here has 1024\)/,
    line: 5,
  },
  'words-252.rules': {
    words: /"Parser cannot handle more arguments" \(at most 251 words a line; this one has 252\)/,
    line: 5,
  },
};

describe('files iptables-restore refuses are errors; files it loads are not', () => {
  const names = readdirSync(DIR)
    .filter(n => n.endsWith('.rules'))
    .sort();
  it('has a recorded kernel-tool result for every input', () => {
    assert.deepEqual(Object.keys(results.files).sort(), names);
  });
  for (const name of names) {
    const { legacy, nft } = results.files[name]!;
    const refused = legacy.status !== 0;
    it(`${name}: ${refused ? `refused (${legacy.stderr.join(' ').slice(0, 90)})` : 'loaded'}`, () => {
      assert.equal(nft.status !== 0, refused, 'both backends agree');
      const errors = errorsOf(name);
      assert.equal(errors.length > 0, refused, errors.map(e => e.message).join('\n'));
      const want = WORDS[name];
      if (want) {
        const hit = errors.find(e => want.words.test(e.message));
        assert.ok(hit, `no error says ${want.words}: ${errors.map(e => e.message).join('\n')}`);
        assert.equal(hit.range.start.line + 1, want.line);
      }
    });
  }

  it('an unterminated quote, which the tools accept, is a warning that says -j ACCEPT is not the target', () => {
    const rs = parseIptables(readFileSync(join(DIR, 'unterminated-quote.rules'), 'utf8'));
    const w = rs.diagnostics.filter(d => d.code === 'unterminated-quote');
    assert.deepEqual(
      w.map(d => [d.severity, d.range.start.line + 1]),
      [['warning', 6]],
    );
    assert.match(w[0]!.message, /the rest of the line is the comment, so `-j ACCEPT` is not the target/);
    assert.equal(rs.tables.get('filter')!.chains.get('INPUT')!.rules[1]!.target, null);
  });
});

// An editor decodes the bytes first: VS Code shows a UTF-16 file or one with a UTF-8 byte-order mark as
// plain text (the BOM gone) and says which encoding it decoded (`TextDocument.encoding`). The tools read
// the bytes and refuse both files, so the editor's reading must refuse them in the same words.
describe('files an editor decoded: the same refusals as from the bytes', () => {
  for (const [name, encoding, decoder] of [
    ['utf-16.rules', 'utf16le', new TextDecoder('utf-16le')],
    ['utf8-bom.rules', 'utf8bom', new TextDecoder('utf-8')],
  ] as const)
    it(`${name} decoded from ${encoding}`, () => {
      const bytes = readFileSync(join(DIR, name));
      // TextDecoder drops the byte-order mark, as VS Code does.
      const text = decoder.decode(bytes);
      assert.notEqual(text.charCodeAt(0), 0xfeff);
      assert.equal(results.files[name]!.legacy.status !== 0 && results.files[name]!.nft.status !== 0, true);
      const fromBytes = errorsOf(name).map(d => [d.message, d.range.start.line]);
      const decoded = parseIptables(text, { file: name, decodedFrom: encoding });
      assert.deepEqual(
        decoded.diagnostics.filter(d => d.severity === 'error').map(d => [d.message, d.range.start.line]),
        fromBytes,
      );
      // Decoded from plain UTF-8, the same text is a clean dump.
      assert.deepEqual(
        parseIptables(text, { file: name, decodedFrom: 'utf8' }).diagnostics.filter(d => d.severity === 'error'),
        [],
      );
    });
});
