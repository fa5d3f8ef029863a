import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { hoverAt } from '../../src/editor/hover/hover.ts';
import { escapeMarkdown } from '../../src/editor/hover/markdown.ts';
import { analyze, at, dump, seedText } from './helpers.ts';

/** A Service with three endpoints as kube-proxy writes it (1/3, then 1/2, then the rest). */
const THREE = dump([
  '*nat',
  ':PREROUTING ACCEPT [0:0]',
  ':KUBE-SERVICES - [0:0]',
  ':KUBE-SVC-AAAA - [0:0]',
  ':KUBE-SEP-E1 - [0:0]',
  ':KUBE-SEP-E2 - [0:0]',
  ':KUBE-SEP-E3 - [0:0]',
  ':KUBE-MARK-MASQ - [0:0]',
  '-A PREROUTING -j KUBE-SERVICES',
  '-A KUBE-SERVICES -d 10.96.0.10/32 -p udp -m comment --comment "kube-system/kube-dns:dns cluster IP" -m udp --dport 53 -j KUBE-SVC-AAAA',
  '-A KUBE-SVC-AAAA ! -s 10.244.0.0/16 -d 10.96.0.10/32 -p udp -m comment --comment "kube-system/kube-dns:dns cluster IP" -m udp --dport 53 -j KUBE-MARK-MASQ',
  '-A KUBE-SVC-AAAA -m comment --comment "kube-system/kube-dns:dns -> 10.244.1.2:53" -m statistic --mode random --probability 0.33333333349 -j KUBE-SEP-E1',
  '-A KUBE-SVC-AAAA -m comment --comment "kube-system/kube-dns:dns -> 10.244.1.3:53" -m statistic --mode random --probability 0.50000000000 -j KUBE-SEP-E2',
  '-A KUBE-SVC-AAAA -m comment --comment "kube-system/kube-dns:dns -> 10.244.2.4:53" -j KUBE-SEP-E3',
  '-A KUBE-SEP-E1 -p udp -m comment --comment "kube-system/kube-dns:dns" -m udp -j DNAT --to-destination 10.244.1.2:53',
  '-A KUBE-SEP-E2 -p udp -m comment --comment "kube-system/kube-dns:dns" -m udp -j DNAT --to-destination 10.244.1.3:53',
  '-A KUBE-SEP-E3 -p udp -m comment --comment "kube-system/kube-dns:dns" -m udp -j DNAT --to-destination 10.244.2.4:53',
  '-A KUBE-MARK-MASQ -j MARK --or-mark 0x4000',
  'COMMIT',
]);

// The kernel's share of each endpoint, from the definition (iptables stores round(p·2^31); the kernel
// takes a rule with probability stored/2^31), computed here with BigInt, not by the engine.
const TWO31 = 2n ** 31n;
const p1 = BigInt(Math.round(0.33333333349 * 2 ** 31));
// Endpoint 2 (and 3) get (1 − p1) · 1/2 = (2^31 − p1) / 2^32; the numerator is odd, so the fraction is reduced.
const share2 = `${TWO31 - p1}/${2n ** 32n}`;

function hover(text: string, needle: string, word: string, offset = 1): string {
  const idx = analyze(text);
  const p = at(text, needle, word, offset);
  const h = hoverAt(idx, p.line, p.character);
  assert.ok(h, `no hover at ${needle} / ${word}`);
  return h.markdown;
}

describe('hovers', () => {
  it('a kube-proxy Service chain: the Service port, where it is entered, endpoints with exact shares', () => {
    const md = hover(THREE, ':KUBE-SVC-AAAA', 'KUBE-SVC');
    assert.match(md, /Service port `kube-system\/kube-dns:dns`/);
    assert.match(md, /Entered for `10\.96\.0\.10:53\/udp \(cluster IP\)`/);
    assert.equal(p1, 715827883n);
    assert.match(md, new RegExp(`\\| 10\\\\\\.244\\\\\\.1\\\\\\.2:53 \\| 33\\.33% \\| ${p1}/2\\^31 \\|`));
    assert.match(md, new RegExp(`\\| 10\\\\\\.244\\\\\\.1\\\\\\.3:53 \\| 33\\.33% \\| ${share2} \\|`));
    assert.match(md, new RegExp(`\\| 10\\\\\\.244\\\\\\.2\\\\\\.4:53 \\| 33\\.33% \\| ${share2} \\|`));
    assert.match(md, /referenced by 1 rule/);
  });

  it('an endpoint chain: its endpoint and the share it gets', () => {
    const md = hover(THREE, ':KUBE-SEP-E1', 'KUBE-SEP');
    assert.match(md, /Endpoint `10\.244\.1\.2:53`/);
    assert.match(
      md,
      new RegExp(`Gets 33\\.33% \\(exactly ${p1}/2\\^31\\) of new connections through \`KUBE-SVC-AAAA\``),
    );
  });

  it('the seed: svc1 splits 50/50 between its two pods', () => {
    const seed = seedText();
    const md = hover(seed, ':KUBE-SVC-DLGPAL4ZCYSJ7UPR', 'KUBE-SVC');
    assert.match(md, /\| 10\\\.10\\\.1\\\.11:80 \| 50% \| 1\/2 \|/);
    assert.match(md, /\| 10\\\.10\\\.4\\\.12:80 \| 50% \| 1\/2 \|/);
    assert.match(md, /`172\.18\.255\.200:80\/tcp \(loadbalancer IP\)`/);
    assert.match(md, /`node port 30381\/tcp \(NodePort\)`/);
  });

  it('a rule: its criteria in words, its target, its random branch and share', () => {
    const md = hover(THREE, '10.244.1.3:53" -m statistic', '--probability');
    assert.match(md, /\*\*Rule 3\*\* of `nat KUBE-SVC-AAAA`/);
    assert.match(md, /randomly, with probability 0\\\.50000000000/);
    assert.match(md, /Then: jump to chain KUBE\\-SEP\\-E2/);
    assert.match(md, /taken by 50% \(exactly 1\/2\) of the packets that reach it/);
    assert.match(md, new RegExp(`Share of the chain's new connections: 33\\.33% \\(exactly ${share2}\\)`));
    const masq = hover(THREE, '-A KUBE-SVC-AAAA ! -s', '-d');
    assert.match(masq, /- source not in 10\\\.244\\\.0\\\.0\/16/);
    assert.match(masq, /- destination 10\\\.96\\\.0\\\.10\n/);
    assert.match(masq, /- protocol UDP/);
    assert.match(masq, /- UDP destination port 53|- udp/i);
  });

  it('a target: what it does and where the kernel allows it', () => {
    const md = hover(THREE, '-A KUBE-SEP-E1', 'DNAT');
    assert.match(md, /\*\*DNAT\*\* — target extension/);
    assert.match(md, /Here: rewrite the destination to 10\\\.244\\\.1\\\.2:53/);
    assert.match(md, /Allowed in table `nat`/);
    assert.match(hover(seedText(), '-A KUBE-POSTROUTING -m mark', 'RETURN'), /standard verdict/);
  });

  it('a table and a built-in chain', () => {
    assert.match(
      hover(THREE, '*nat', 'nat'),
      /only the first packet of a connection|Only the first packet of a connection/,
    );
    assert.match(
      hover(THREE, ':PREROUTING', 'PREROUTING'),
      /built-in chain of table `nat` on hook `PREROUTING` \(priority -100\)/,
    );
  });

  it('file text never becomes markup: links, images and HTML in comments are escaped', () => {
    const evil = dump([
      '*filter',
      ':INPUT ACCEPT [0:0]',
      '-A INPUT -m comment --comment "[x](command:workbench.action.quit) <img src=x> **b**" -j ACCEPT',
      'COMMIT',
    ]);
    const md = hover(evil, '-A INPUT', '-m');
    // Outside code spans (which CommonMark shows literally) nothing from the file is left unescaped.
    const outsideCode = md.replace(/`[^`]*`/g, '');
    assert.ok(!/\]\(|<img|\*\*b/.test(outsideCode), md);
    assert.match(md, /Comment: `\[x\]\(command:workbench\.action\.quit\) <img src=x> \*\*b\*\*`/);
    assert.equal(escapeMarkdown('<a>[b](c)'), '\\<a\\>\\[b\\]\\(c\\)');
  });

  it('an undeclared chain says so', () => {
    const text = dump(['*filter', ':INPUT ACCEPT [0:0]', '-A INPUT -j MISSING-CHAIN', 'COMMIT']);
    assert.match(hover(text, '-A INPUT', 'MISSING'), /not declared in table `filter`/);
  });
});
