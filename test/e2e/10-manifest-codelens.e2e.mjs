// Kubernetes manifests: the CodeLens above a Service port names the address a client reaches and the
// share of new connections each endpoint gets. Run first, on a fresh workbench, so it also checks that
// opening a manifest alone (no dump opened yet) is enough for the extension to answer.
import { CheckFailure, clip, expect, spaced } from './workbench.mjs';

const FILE = 'seed-003/services.yaml';
// svc1 is the first LoadBalancer Service: MetalLB gives it 172.18.255.200; its port reaches webpod1 and
// webpod2 with probability 1/2 each (the same answer as `packetlens trace --manifests examples/seed-003`).
const TITLE = '▶ tcp 172.18.255.200:80 → webpod1 50% · webpod2 50%';

export const checks = [
  {
    name: 'manifest: the CodeLens above a Service port shows its endpoints and shares',
    timeoutMs: 90_000,
    async run(wb) {
      const editor = await wb.openFile(FILE);
      const lens = editor.locator('.codelens-decoration a', { hasText: spaced(TITLE) }).first();
      try {
        await lens.waitFor({ state: 'visible', timeout: 45_000 });
      } catch {
        const seen = await editor.locator('.codelens-decoration').allInnerTexts();
        throw new CheckFailure(
          `no CodeLens "${TITLE}" in ${FILE} after 45 s (CodeLens shown: ${seen.filter(t => t.trim()).length ? clip(seen.join(' | ')) : 'none'})`,
        );
      }
      // It belongs to svc1: below svc1's metadata, above the next Service (svc2), where svc1's port is.
      const top = editor.locator('.view-lines .view-line', { hasText: spaced('name: svc1', { exact: true }) }).first();
      const next = editor.locator('.view-lines .view-line', { hasText: spaced('name: svc2', { exact: true }) }).first();
      const [lensBox, topBox, nextBox] = [await lens.boundingBox(), await top.boundingBox(), await next.boundingBox()];
      expect(
        lensBox && topBox && nextBox && topBox.y < lensBox.y && lensBox.y < nextBox.y,
        `the CodeLens "${TITLE}" is not within Service svc1 (lens at y=${lensBox?.y}, "name: svc1" at y=${topBox?.y}, "name: svc2" at y=${nextBox?.y})`,
      );
      await wb.shot('service-codelens', { docs: true });
    },
  },
];
