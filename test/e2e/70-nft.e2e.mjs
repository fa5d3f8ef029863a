// An `nft list ruleset` file in the editor (issue 14): the nftables grammar colours it, the Outline lists the
// table with its sets, maps and chains, chains carry CodeLens, a hover on kube-proxy's Service chain gives
// its endpoints with exact shares, and Trace Packet follows the numgen verdict map to both endpoints.
//
// examples/nftables/kube-proxy.nft is test/fixtures/kernel-nft/kube-proxy/ruleset.txt with a header (the
// kernel's own listing of kube-proxy's nftables rules, node address 172.18.0.4, which the runner's
// settings give too). Its svc4 (172.30.0.44:80) has two endpoints picked by `numgen random mod 2 vmap`:
// `packetlens trace examples/nftables/kube-proxy.nft --node-ip 172.18.0.4 --packet "tcp 10.0.0.2 ->
// 172.30.0.44:80"` prints 50 % to 10.180.0.4:80 and 50 % to 10.180.0.5:80, as the kernel did for the
// fixture's random probes.
import { CheckFailure, clip, expect, expectColouredApart, spaced } from './workbench.mjs';
import { tracePacket } from './30-trace.e2e.mjs';

const NFT = 'nftables/kube-proxy.nft';
const SVC = 'service-LAUZTJTB-ns4/svc4/tcp/p80';
const PACKET = 'tcp 10.0.0.2 -> 172.30.0.44:80';

/** The 1-based line of the first line of the file that contains `needle` (read from the rendered editor). */
async function lineWith(wb, editor, needle, around) {
  await wb.goToLine(around);
  const lines = await wb.renderedLines(editor);
  return lines.find(l => l.text.includes(needle)) ?? null;
}

export const checks = [
  {
    name: 'nft: the nftables grammar colours an nft list ruleset file and the Outline lists its table, maps and chains',
    timeoutMs: 90_000,
    async run(wb) {
      await wb.closeAllEditors();
      const editor = await wb.openFile(NFT);
      await wb.page
        .locator('.statusbar-item', { hasText: /^\s*nftables\s*$/ })
        .first()
        .waitFor({ timeout: 20_000 })
        .catch(() => {
          throw new CheckFailure(`${NFT} did not open with the nftables language (status bar)`);
        });
      // svc4's endpoint choice, line 194 of the file.
      const rule = await wb.until(() => lineWith(wb, editor, 'numgen random mod 2 vmap', 194), { timeout: 15_000 });
      expect(rule, `${NFT} shows no line with "numgen random mod 2 vmap" around line 194`);
      expectColouredApart(rule, ['numgen', 'random', 'vmap', 'goto', '0'], 3);

      await wb.runCommand('Explorer: Focus on Outline View');
      const pane = wb.page.locator('.pane', { has: wb.page.locator('.pane-header', { hasText: 'Outline' }) });
      const rows = () =>
        pane.locator('.monaco-list-row').evaluateAll(rs =>
          rs.map(r => ({
            level: r.getAttribute('aria-level'),
            name: (r.querySelector('.label-name')?.textContent ?? '').trim(),
            text: r.textContent,
          })),
        );
      // The Outline draws only the rows on screen: the table's first objects (file order: sets and maps first).
      const needed = ['cluster-ips', 'nodeport-ips', 'firewall-ips'];
      const seen =
        (await wb.until(
          async () => {
            const r = await rows();
            return r.some(x => x.level === '1' && x.name === 'ip kube-proxy') &&
              needed.every(n => r.some(x => x.level === '2' && x.name === n))
              ? r
              : null;
          },
          { timeout: 20_000 },
        )) ?? (await rows());
      const table = seen.find(x => x.level === '1');
      expect(
        table?.name === 'ip kube-proxy' && /32 chains · 8 sets · 57 rules/.test(table.text),
        `the Outline's top row is not "ip kube-proxy … 32 chains · 8 sets · 57 rules": ${clip(JSON.stringify(seen.slice(0, 5)))}`,
      );
      const missing = needed.filter(n => !seen.some(x => x.level === '2' && x.name === n));
      expect(
        !missing.length,
        `the Outline lacks ${missing.join(', ')} (rows: ${clip(seen.map(x => x.name).join(', '))})`,
      );
      await wb.shot('nft-outline');
    },
  },
  {
    name: 'nft: chains carry CodeLens, and a hover on a kube-proxy service chain gives its endpoints with exact shares',
    timeoutMs: 60_000,
    async run(wb) {
      const editor = wb.editorFor(NFT);
      if (!(await editor.count())) await wb.openFile(NFT);
      await wb.settle();
      await wb.focusEditor(NFT);
      await wb.goToLine(192);
      // A regular chain's lens counts who jumps there; a base chain's names its hook.
      await editor
        .locator('.codelens-decoration a:visible', { hasText: /referenced\sby\s2/ })
        .first()
        .waitFor({ timeout: 30_000 })
        .catch(() => {
          throw new CheckFailure(`no "referenced by 2" CodeLens above ${SVC}`);
        });
      const token = editor.locator('.view-lines .view-line span > span', { hasText: SVC });
      const hover = await wb.hover(token, 'share of new connections');
      const rows = await hover.locator('table tr').allInnerTexts();
      for (const ep of ['10.180.0.4:80', '10.180.0.5:80']) {
        const row = rows.find(r => r.includes(ep));
        expect(
          row && /\b50%/.test(row) && /1\/2/.test(row),
          `the hover has no "${ep} 50% 1/2" row (rows: ${clip(rows.join(' | '))})`,
        );
      }
      const text = await hover.innerText();
      expect(/Service port\s+ns4\/svc4 port p80 \(tcp\)/.test(text), `the hover does not name ns4/svc4: ${clip(text)}`);
      await wb.shot('nft-chain-hover');
      await wb.page.mouse.move(2, 450);
    },
  },
  {
    name: 'nft: Trace Packet… follows the numgen verdict map to both endpoints, 50% each',
    timeoutMs: 120_000,
    async run(wb) {
      const editor = wb.editorFor(NFT);
      if (!(await editor.count())) await wb.openFile(NFT);
      await wb.focusEditor(NFT);
      await tracePacket(wb, PACKET);
      await wb.page.keyboard.press('Enter');
      await wb.page
        .locator('.tabs-container .tab', { hasText: 'Packet Flow' })
        .first()
        .waitFor({ timeout: 30_000 })
        .catch(async () => {
          const toasts = await wb.page.locator('.notifications-toasts').allInnerTexts();
          throw new CheckFailure(`no "Packet Flow" tab after the trace (notifications: ${clip(toasts.join(' | '))})`);
        });
      const frame = await wb.webviewFrame('#flow', { timeout: 30_000 });
      const text =
        (await wb.until(
          async () => {
            const t = await frame.locator('body').innerText();
            return /10\.180\.0\.4:80/.test(t) && /10\.180\.0\.5:80/.test(t) ? t : null;
          },
          { timeout: 20_000 },
        )) ?? (await frame.locator('body').innerText());
      for (const ep of ['10.180.0.4:80', '10.180.0.5:80'])
        expect(
          new RegExp(`50%[^\\n]*${ep.replace(/\./g, '\\.')}`).test(text),
          `the diagram has no "50% … ${ep}" outcome: ${clip(text, 600)}`,
        );
      expect(/numgen/.test(text), `the diagram does not show the numgen branch: ${clip(text, 600)}`);
      await wb.shot('nft-trace-diagram');

      // The nft rules the packet went through carry the trace's CodeLens: the numgen rule matched (100%).
      await wb.focusEditor(NFT);
      await wb.goToLine(194);
      const lens = editor.locator('.codelens-decoration a:visible', { hasText: spaced('✓ matched') }).first();
      await lens.waitFor({ state: 'visible', timeout: 15_000 }).catch(() => {
        throw new CheckFailure('no "✓ matched" CodeLens on the traced nft rules');
      });
      const lenses = await editor.locator('.codelens-decoration a:visible').allInnerTexts();
      expect(
        lenses.some(l => /✓\s*matched.*100%/.test(l)),
        `no rule near line 194 was matched by every path: ${clip(lenses.join(' | '))}`,
      );
      await wb.shot('nft-trace-lenses');
    },
  },
];
