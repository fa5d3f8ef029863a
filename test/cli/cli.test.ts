import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { ROOT, tempFile } from '../helpers/fixtures.ts';
import { cli } from '../helpers/cli.ts';

const EXAMPLE = join(ROOT, 'examples', 'seed-003', 'node-myk8s-worker.rules');

const tmp = (name: string, text: string) => tempFile(name, text);

describe('packetlens trace', () => {
  it('--json prints the documented contract, one object per packet in input order', () => {
    const r = cli(
      'trace',
      EXAMPLE,
      '--packet',
      'tcp 172.18.0.100 -> 172.18.255.200:80',
      '--packet',
      'udp 172.18.0.100 -> 172.18.255.200:53',
      '--node-ip',
      '172.18.0.4',
      '--json',
    );
    assert.equal(r.code, 0);
    assert.equal(r.out.length, 2);
    const first = JSON.parse(r.out[0]!);
    assert.equal(first.packet.dst, '172.18.255.200');
    assert.deepEqual(
      first.outcomes.map((o: Record<string, unknown>) => [o.probability, o.disposition, o.dnat, o.snat, o.masquerade]),
      [
        [0.5, 'forwarded', '10.10.1.11:80', '172.18.0.4', true],
        [0.5, 'forwarded', '10.10.4.12:80', '172.18.0.4', true],
      ],
    );
    assert.deepEqual(Object.keys(first.outcomes[0].steps[0]).sort(), [
      'chain',
      'hook',
      'line',
      'rule',
      'table',
      'verdict',
    ]);
    assert.deepEqual(first.outcomes[0].steps[1], {
      hook: 'PREROUTING',
      table: 'nat',
      chain: 'KUBE-SERVICES',
      rule: 4,
      line: 96,
      verdict: 'jump KUBE-EXT-DLGPAL4ZCYSJ7UPR',
    });
    const second = JSON.parse(r.out[1]!);
    assert.deepEqual(
      second.outcomes.map((o: Record<string, unknown>) => [o.probability, o.dnat, o.snat]),
      [[1, null, null]],
    );
  });

  it('reads --packets JSON lines and names the line of a bad one', () => {
    const good = tmp(
      'p.jsonl',
      '{"protocol":"tcp","src":"172.18.0.100","sport":40000,"dst":"172.18.255.200","dport":80,"from":"auto","in":"eth0"}\n\n',
    );
    const r = cli('trace', EXAMPLE, '--packets', good, '--node-ip', '172.18.0.4', '--json');
    assert.equal(r.code, 0);
    assert.equal(JSON.parse(r.out[0]!).packet.sport, 40000);
    const bad = tmp(
      'bad.jsonl',
      '{"protocol":"tcp","dst":"1.2.3.4","dport":80}\n{"protocol":"tcp","dst":"1.2.3.4","dport":"x"}\n',
    );
    const e = cli('trace', EXAMPLE, '--packets', bad, '--json');
    assert.equal(e.code, 2);
    assert.match(e.err.join('\n'), /bad\.jsonl:2: packet field "dport" must be a number/);
  });

  it('prints a readable tree with percentages by default', () => {
    const r = cli('trace', EXAMPLE, '--packet', 'tcp 172.18.0.100 -> 172.18.255.200:80', '--node-ip', '172.18.0.4');
    assert.equal(r.code, 0);
    assert.match(r.out[0]!, /^tcp 172\.18\.0\.100:40000 -> 172\.18\.255\.200:80 {2}\(arrives on eth0\)/);
    assert.match(r.out.join('\n'), /├─ +50% {2}forwarded → 10\.10\.1\.11:80 .*masqueraded to 172\.18\.0\.4/);
  });

  it("--why-not=grouped writes each outcome's misses grouped, in JSON and as text", () => {
    const svc = Array.from({ length: 60 }, (_, i) => `-A SVC -d 10.0.0.${i + 1}/32 -p tcp -m tcp --dport 80 -j HIT`);
    const f = tmp(
      'svc.rules',
      ['*nat', ':PREROUTING ACCEPT [0:0]', ':SVC - [0:0]', ':HIT - [0:0]', '-A PREROUTING -j SVC', ...svc]
        .concat(['-A HIT -j DNAT --to-destination 10.1.0.1:8080', 'COMMIT', ''])
        .join('\n'),
    );
    const args = ['trace', f, '--packet', 'tcp 172.18.0.9 -> 10.0.0.42:80', '--node-ip', '172.18.0.4'];
    const json = cli(...args, '--json', '--why-not=grouped');
    assert.equal(json.code, 0);
    const o = JSON.parse(json.out[0]!).outcomes[0];
    assert.equal(o.misses, undefined);
    assert.deepEqual(o.missesGrouped, [
      {
        hook: 'PREROUTING',
        table: 'nat',
        chain: 'SVC',
        rule: 1,
        line: 6,
        reason: "-d ∌ 10.0.0.42: each rule's -d is another address",
        count: 41,
        lastRule: 41,
        lastLine: 46,
      },
    ]);
    // The full list is unchanged: every rule, one entry each.
    assert.equal(JSON.parse(cli(...args, '--json', '--why-not').out[0]!).outcomes[0].misses.length, 41);
    const text = cli(...args, '--why-not=grouped');
    assert.match(
      text.out.join('\n'),
      /✗ nat SVC {2}#1–41 lines 6–46 -d ∌ 10\.0\.0\.42: each rule's -d is another address \(41 rules\)/,
    );
    const bad = cli(...args, '--why-not=some');
    assert.equal(bad.code, 2);
    assert.match(bad.err.join('\n'), /--why-not takes no value \(every miss\) or =grouped, not 'some'/);
  });

  it('exits 2 with file and reason on unreadable input', () => {
    const r = cli('trace', '/nonexistent.rules', '--packet', 'tcp 1.2.3.4 -> 5.6.7.8:80');
    assert.equal(r.code, 2);
    assert.match(r.err[0]!, /\/nonexistent\.rules: cannot read: ENOENT/);
    const p = cli('trace', EXAMPLE, '--packet', 'tcp 1.2.3.4 5.6.7.8');
    assert.equal(p.code, 2);
    assert.match(p.err[0]!, /--packet: a tcp packet needs a destination port|cannot read packet/);
  });
});

describe('packetlens check', () => {
  it('prints file:line:col diagnostics and a summary; exit 2 with an error, 0 without', () => {
    const clean = cli('check', EXAMPLE);
    assert.equal(clean.code, 0);
    assert.match(clean.out.at(-1)!, /2 tables, 36 chains, 69 rules \(IPv4\); 0 errors, 0 warnings/);
    const f = tmp('bad.rules', '*filter\n-A INPUT -s 10.0.0.300/33 -j DROP\n-A INPUT -j NOPE-CHAIN\n');
    const r = cli('check', f);
    assert.equal(r.code, 2);
    assert.match(r.out.join('\n'), /bad\.rules:2:13: error: '10\.0\.0\.300\/33' is not an IPv4 address or network/);
    assert.match(
      r.out.join('\n'),
      /bad\.rules:3:\d+: error: jump to NOPE-CHAIN, which is not a chain of table filter .*Couldn't load target `NOPE-CHAIN'/,
    );
    assert.match(r.out.join('\n'), /bad\.rules:1:1: error: table filter \(line 1\) has no COMMIT/);
  });
});
