/**
 * The catalogue of bad inputs (docs/bad-inputs.md): each gives a clear message or a bounded answer within
 * seconds, in the CLI. The messages asserted here are the ones the catalogue quotes.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { lintRuleset, parseIptables } from '../../src/engine/api.ts';
import { cli } from '../helpers/cli.ts';
import { ROOT, productManifests } from '../helpers/fixtures.ts';

const BAD = join(ROOT, 'test/fixtures/bad-inputs');
const REFUSALS = join(ROOT, 'test/fixtures/kernel/restore-refusals');
const tmp = mkdtempSync(join(tmpdir(), 'packetlens-bad-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

function file(name: string, text: string | Buffer): string {
  const p = join(tmp, name);
  writeFileSync(p, text);
  return p;
}

function timedCli(...argv: string[]) {
  const start = performance.now();
  const r = cli(...argv);
  return { ...r, ms: performance.now() - start, text: [...r.out, ...r.err].join('\n') };
}

const PACKET = ['--packet', 'tcp 1.2.3.4:5000 -> 10.0.0.1:22', '--node-ip', '10.0.0.1'];

describe('bad inputs in the CLI', () => {
  it('a dump with 5 errors: the trace starts by saying the kernel would refuse the file', () => {
    // Before: "100% local" and nothing else on stdout (`--dprot 443` read as any TCP, DNAT in filter).
    const f = join(BAD, 'five-errors.rules');
    const r = timedCli('trace', f, ...PACKET);
    assert.equal(r.code, 0);
    assert.match(
      r.out[0]!,
      /^⚠ this file has 5 errors; the kernel would refuse it \(iptables-restore loads none of it\); results assume the file as packetlens could read it, ignoring what it could not/,
    );
    assert.match(r.out[0]!, /line 9: unknown option '--dprot'/);
    assert.ok(
      r.out.some(l => /filter INPUT\s+#3\s+line 9\s+ACCEPT\s+⚠ this line has an error/.test(l)),
      r.text,
    );
    const json = JSON.parse(timedCli('trace', f, ...PACKET, '--json').out[0]!);
    assert.equal(json.fileErrors.count, 5);
    assert.deepEqual(json.fileErrors.lines, [6, 9, 10, 11, 12]);
  });

  it('an unterminated quote on the fast -A path is a warning, and the rule without a target shadows nothing', () => {
    // Before: no diagnostic, and two false warnings "rule 6 never matches: rule 4 takes every packet first".
    const f = join(BAD, 'quote-shadow.rules');
    const r = timedCli('check', f);
    assert.equal(r.code, 0);
    assert.match(
      r.text,
      /quote-shadow\.rules:8:31: warning: unterminated quote: the rest of the line is the comment, so `-j ACCEPT` is not the target and this rule has none/,
    );
    const rs = parseIptables(readFileSync(f, 'utf8'));
    assert.deepEqual(
      lintRuleset(rs).filter(d => d.code === 'shadowed-rule'),
      [],
    );
  });

  it('a goto loop reached through random branches: an answer within seconds that names the cycle', () => {
    const r = timedCli(
      'trace',
      join(BAD, 'goto-loop-statistic.rules'),
      '--packet',
      'tcp 1.2.3.4:1000 -> 10.0.0.1:80',
      '--node-ip',
      '10.0.0.1',
    );
    assert.ok(r.ms < 5000, `${r.ms} ms`);
    assert.match(
      r.text,
      /jump loop PING → PONG → PING in table filter: PING rule 2 \(line 11\) goes to PONG, PONG rule 2 \(line 14\) goes to PING/,
    );
  });

  it('40 chained random MARK branches: one outcome, the unread mark bits said to vary', () => {
    const lines = ['*mangle', ':PREROUTING ACCEPT [0:0]'];
    for (let i = 0; i < 40; i++)
      lines.push(
        `-A PREROUTING -m statistic --mode random --probability 0.50000000000 -j MARK --or-mark 0x${((1 << (i % 32)) >>> 0).toString(16)}`,
      );
    lines.push('COMMIT', '');
    const r = timedCli('trace', file('marks.rules', lines.join('\n')), ...PACKET);
    assert.ok(r.ms < 5000, `${r.ms} ms`);
    const printed = r.text.split('\n');
    assert.match(printed[1]!, /100%\s+local → 10\.0\.0\.1:22\s+\[1099511627776 paths\]/);
    assert.match(
      printed[2]!,
      /packet mark bits 0xffffffff differ among these paths \(no rule reads them, so they were merged\)/,
    );
  });

  it('a 20 MB single line is refused as iptables-restore refuses it, without reading it into rules', () => {
    const f = file(
      'line20.rules',
      `*filter\n:INPUT ACCEPT [0:0]\n-A INPUT ${'-m comment --comment abcdefgh '.repeat(700_000)}-j ACCEPT\nCOMMIT\n`,
    );
    const r = timedCli('check', f);
    assert.equal(r.code, 2);
    assert.ok(r.ms < 5000, `${r.ms} ms`);
    assert.match(
      r.out[0]!,
      /line20\.rules:3:1: error: iptables-restore refuses this line: "Parser cannot handle more arguments" \(at most 251 words a line; this one has 2800004\); the line is not read/,
    );
    assert.ok(r.out.every(l => l.length < 1000));
  });

  it('a 200 MB file is refused before it is read', () => {
    const f = join(tmp, 'huge.rules');
    writeFileSync(f, '');
    truncateSync(f, 200 * 1024 * 1024);
    const r = timedCli('trace', f, ...PACKET);
    assert.equal(r.code, 2);
    assert.match(r.err[0]!, /huge\.rules: 200 MiB is above the 128 MiB limit/);
  });

  it('binary, UTF-16, BOM, CRLF and NUL inputs each say what is wrong and what to do', () => {
    const bin = Buffer.alloc(4096);
    for (let i = 0; i < bin.length; i++) bin[i] = (i * 7919) & 0xff;
    assert.match(
      timedCli('check', file('bin.rules', bin)).text,
      /is not text \(binary data\); expected iptables-save output/,
    );
    assert.match(
      timedCli('check', join(REFUSALS, 'utf-16.rules')).text,
      /is UTF-16 text: iptables-restore refuses it \("line 1 failed"\); convert it to UTF-8/,
    );
    assert.match(
      timedCli('check', join(REFUSALS, 'utf8-bom.rules')).text,
      /starts with a UTF-8 byte-order mark \(U\+FEFF\): iptables-restore refuses it/,
    );
    assert.match(
      timedCli('check', join(REFUSALS, 'crlf.rules')).text,
      /this file has Windows line ends \(\\r\\n\): iptables-restore refuses it at line 1/,
    );
    assert.match(
      timedCli('check', join(REFUSALS, 'nul-byte.rules')).text,
      /NUL byte \(\\0\) in this line: iptables-restore reads a line only up to its first NUL/,
    );
  });

  it('a dump cut off mid-table, a line of spaces, a rule to an undefined chain, lost line breaks', () => {
    assert.match(
      timedCli('check', join(REFUSALS, 'cut-mid-table.rules')).text,
      /has no COMMIT: iptables-restore refuses the file \("COMMIT expected at line 7"\); the file ends in the middle of line 6, so it was probably cut off/,
    );
    assert.match(
      timedCli('check', join(REFUSALS, 'spaces-line.rules')).text,
      /:5:1: error: this line holds only spaces: iptables-restore refuses the file here \("no command specified"; line 5 failed\)/,
    );
    assert.match(
      timedCli('check', join(REFUSALS, 'undeclared-jump.rules')).text,
      /:5:35: error: jump to NOPE, which is not a chain of table filter .*"Couldn't load target `NOPE':No such file or directory"/,
    );
    assert.match(
      timedCli('check', join(REFUSALS, 'lost-line-breaks.rules')).text,
      /:1:1: error: this line holds several commands \(iptables-save writes one per line\): the file's line breaks seem to have been lost/,
    );
    const escaped = file(
      'escaped.rules',
      '*filter\\n:INPUT ACCEPT [0:0]\\n-A INPUT -p tcp -m tcp --dport 22 -j ACCEPT\\n-A INPUT -p tcp -m tcp --dport 80 -j ACCEPT\\nCOMMIT\\n\n',
    );
    assert.match(timedCli('check', escaped).text, /holds '\\n' written as two characters between commands/);
  });

  it('no error message copies a line longer than 200 characters whole', () => {
    const long = `-A INPUT -s ${'1'.repeat(900)} -j ACCEPT`;
    const r = timedCli(
      'check',
      file('long.rules', `*filter\n:INPUT ACCEPT [0:0]\n${long}\n*${'x'.repeat(600)}\nCOMMIT\n`),
    );
    assert.equal(r.code, 2);
    for (const l of r.out) assert.ok(!l.includes('1'.repeat(201)) && !l.includes('x'.repeat(201)), l);
    assert.match(r.text, /…\[\d+ characters\]…/);
    // Found by the fuzz campaign: a 600-character table name reached the target-placement and linter messages.
    const rs = parseIptables(
      `*fi${'x'.repeat(600)}\n:INPUT ACCEPT [0:0]\n-A INPUT -j DNAT --to-destination 1.2.3.4\n-A INPUT -j ACCEPT\n-A INPUT -j ACCEPT\nCOMMIT\n`,
    );
    const messages = [...rs.diagnostics, ...lintRuleset(rs)].map(d => d.message);
    assert.ok(messages.some(m => m.startsWith('rule 3 of fix')));
    for (const m of messages) assert.ok(!m.includes('x'.repeat(201)), m.slice(0, 100));
  });

  it('a manifest that is not Kubernetes is refused with what it looks like', () => {
    const r = timedCli(
      'trace',
      '--manifests',
      file('compose.yaml', 'services:\n  web:\n    image: nginx\n    ports:\n      - "80:80"\n'),
      '--packet',
      'tcp 10.0.0.1:1000 -> 10.96.0.10:80',
    );
    assert.equal(r.code, 2);
    assert.match(
      r.err.at(-1)!,
      /compose\.yaml: no Kubernetes objects here \(a manifest has apiVersion: and kind: at the top of each document; this looks like other YAML, e.g\. Helm values or a docker-compose file\)/,
    );
  });

  it('YAML alias bombs and long Service lists end within seconds, with a message', () => {
    // 50,000 aliases of one Service: each expands to a whole object (the kube reader's tests cover nested bombs).
    const text = `apiVersion: v1\nkind: List\ndefs:\n  s: &s {apiVersion: v1, kind: Service, metadata: {name: a}, spec: {ports: [{port: 80}]}}\nitems: [${Array(50_000).fill('*s').join(', ')}]\n`;
    const r = timedCli('synth', file('bomb.yaml', text));
    assert.ok(r.ms < 10_000, `${r.ms} ms`);
    assert.match(
      r.text,
      /bomb\.yaml:1:1: error: .*bomb\.yaml: this document expands aliases beyond 100000 nodes \(an alias bomb\?\); the rest of it was not read/,
    );
    const items = Array.from(
      { length: 3000 },
      (_, i) => `- {apiVersion: v1, kind: Service, metadata: {name: s${i}}, spec: {ports: [{port: 80}]}}`,
    );
    const big = timedCli('synth', file('list.yaml', `apiVersion: v1\nkind: List\nitems:\n${items.join('\n')}\n`));
    assert.ok(big.ms < 20_000, `${big.ms} ms`);
    assert.ok(big.err.length <= 51, `${big.err.length} lines on stderr`);
  });

  it('a product of ports × endpoints in a small file (also through YAML aliases) stops at the model budget, with a message', () => {
    // 80 KB: 1,000 ports × 1,000 endpoints (before: 1 GB, then Node aborted out of memory after 12 s).
    const r = timedCli('synth', file('product.yaml', productManifests()));
    assert.ok(r.ms < 10_000, `${r.ms} ms`);
    assert.equal(r.code, 0);
    assert.match(
      r.text,
      /product\.yaml:13:1: error: .*product\.yaml: Service default\/big \(line 13\) has 1000 ports × 1000 endpoints = 1000000 endpoint-port pairs \(endpoints from EndpointSlice default\/big-1, .*product\.yaml:20\), past the cluster model's budget of 300000 \(1 already taken by the Services before it\): kube-proxy's rules grow with this product; this Service and the Services after it, from line 13, were left out: the answer is partial/,
    );
    // Aliases repeat one list of 300 endpoints in five slices: 100,000 node reads is far from an alias bomb,
    // but 1,000 ports × 1,500 endpoints is the same kind of product.
    const ports = Array.from({ length: 1000 }, (_, i) => `{name: p${i}, port: ${8000 + i}}`).join(', ');
    const eps = Array.from({ length: 300 }, (_, i) => `{addresses: [10.1.${i >> 8}.${i & 255}]}`).join(', ');
    const slice = (k: number) =>
      `- apiVersion: discovery.k8s.io/v1\n  kind: EndpointSlice\n  metadata: {name: s${k}, labels: {kubernetes.io/service-name: big}}\n  addressType: IPv4\n${k === 0 ? `  ports: &ps [${ports}]\n  endpoints: &eps [${eps}]` : '  ports: *ps\n  endpoints: *eps'}`;
    const svc = `- apiVersion: v1\n  kind: Service\n  metadata: {name: big}\n  spec: {clusterIP: 10.96.0.10, ports: [${ports.replaceAll('port: 8', 'port: 1')}]}`;
    const aliased = `apiVersion: v1\nkind: List\nitems:\n${[svc, ...[0, 1, 2, 3, 4].map(slice)].join('\n')}\n`;
    const a = timedCli('synth', file('aliased.yaml', aliased));
    assert.ok(a.ms < 10_000, `${a.ms} ms`);
    assert.doesNotMatch(a.text, /alias bomb/);
    assert.match(
      a.text,
      /aliased\.yaml: Service default\/big \(line 4\) has 1000 ports × 1500 endpoints = 1500000 endpoint-port pairs/,
    );
  });
});
