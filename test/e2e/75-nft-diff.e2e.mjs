// Comparing two nftables rulesets in the real editor (issue 14): with both kube-proxy nft files open,
// "Packet Lens: Compare Packet Behaviour" offers them, and the Packet Behaviour panel reports the change.
//
// examples/nftables/kube-proxy-after.nft is examples/nftables/kube-proxy.nft with Service ns4/svc4's endpoint
// 10.180.0.5 removed from its numgen verdict map. `packetlens diff examples/nftables/kube-proxy.nft
// examples/nftables/kube-proxy-after.nft --node-ip 172.18.0.4` reports the classes to svc4 (its ClusterIP
// 172.30.0.44:80 and its external IP 192.168.99.33:80) whose traffic, half of it DNATed to 10.180.0.5:80
// before, now all goes to 10.180.0.4:80; every class proven.
import { CheckFailure, clip } from './workbench.mjs';

const OLD = 'nftables/kube-proxy.nft';
const NEW = 'nftables/kube-proxy-after.nft';

async function pick(wb, text) {
  const row = wb.page.locator('.quick-input-list .monaco-list-row', { hasText: text }).first();
  try {
    await row.waitFor({ state: 'visible', timeout: 15_000 });
  } catch {
    const rows = await wb.page.locator('.quick-input-list .monaco-list-row').allInnerTexts();
    throw new CheckFailure(`the comparison's quick pick offers no "${text}" (rows: ${clip(rows.join(' | '), 300)})`);
  }
  await row.click();
}

export const checks = [
  {
    name: 'nft diff: Compare Packet Behaviour on two nftables rulesets reports the Service that lost an endpoint',
    timeoutMs: 150_000,
    async run(wb) {
      await wb.closeAllEditors();
      await wb.openFile(OLD);
      await wb.openFile(NEW);
      await wb.runCommand('Packet Lens: Compare Packet Behaviour');
      await pick(wb, 'kube-proxy.nft');
      await pick(wb, 'kube-proxy-after.nft');
      const frame = await wb.webviewFrame('p.summary', { timeout: 90_000 });
      const summary = frame.locator('p.summary').first();
      const text = await wb.until(
        async () => {
          const t = (await summary.textContent()) ?? '';
          return /packet class(es)? changes?/.test(t) ? t : null;
        },
        { timeout: 60_000 },
      );
      if (!text)
        throw new CheckFailure(
          `the Packet Behaviour panel shows no change for the two nft rulesets: "${clip((await summary.textContent()) ?? '', 200)}"`,
        );
      if (/approximate|not supported/i.test(text))
        throw new CheckFailure(`the nft comparison is not a proven change: "${clip(text, 200)}"`);
      const body = (await frame.locator('body').textContent()) ?? '';
      for (const want of ['10.180.0.4:80', '10.180.0.5:80', '172.30.0.44'])
        if (!body.includes(want))
          throw new CheckFailure(`the nft comparison's report does not mention ${want}: "${clip(body, 400)}"`);
      await wb.shot('nft-diff');
      await wb.closeAllEditors();
    },
  },
];
