// `npm start` as a newcomer runs it: the CLI's headline trace comes first, then a URL on 127.0.0.1 whose
// page is VS Code with examples/ open and the extension installed; Ctrl-C stops it and frees the port.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { portInUse } from '../../scripts/e2e/code-server.mjs';
import { Workbench, clip, expect } from './workbench.mjs';

const URL_LINE = /http:\/\/127\.0\.0\.1:(\d+)\/\?folder=(\S+)/;

export const checks = [
  {
    name: 'npm start: prints the headline trace, serves examples/ in VS Code on 127.0.0.1 until Ctrl-C',
    timeoutMs: 180_000,
    async run(wb, ctx) {
      const env = { ...process.env };
      delete env.CI; // under CI it would stop by itself once ready; a user's run serves until Ctrl-C
      const child = spawn(process.execPath, [path.join(ctx.repo, 'scripts', 'start.mjs'), '--port', '0', '--no-browser'], { cwd: ctx.repo, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
      let out = '';
      child.stdout.on('data', (d) => (out += d));
      child.stderr.on('data', (d) => (out += d));
      const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
      let page = null;
      try {
        const url = await wb.until(async () => URL_LINE.exec(out)?.[0] ?? null, { timeout: 150_000, interval: 500 });
        expect(url, `npm start printed no http://127.0.0.1:PORT/?folder=… URL: ${clip(out, 600)}`);
        const first = out.trimStart().split('\n')[0];
        expect(first.startsWith('$ packetlens trace --manifests examples/seed-003'), `npm start's output does not begin with the CLI's trace: "${clip(first, 120)}"`);
        expect(/├─\s+50%\s+forwarded → 10\.10\.1\.11:80/.test(out) && /└─\s+50%\s+forwarded → 10\.10\.4\.12:80/.test(out),
          `npm start's trace does not show the two 50% outcomes: ${clip(out, 400)}`);
        expect(out.indexOf('├─') < out.indexOf(url), 'npm start printed the URL before the trace');
        expect(decodeURIComponent(URL_LINE.exec(out)[2]) === path.join(ctx.repo, 'examples'), `npm start does not open examples/: ${url}`);

        page = await ctx.context.newPage();
        await page.goto(url);
        const user = new Workbench(page, { shotsDir: wb.shotsDir, docsShotsDir: null });
        await page.locator('.explorer-folders-view .monaco-list-row', { hasText: 'seed-003' }).waitFor({ timeout: 60_000 });
        await user.openFile('seed-003/node-myk8s-worker.rules');
        await page.locator('.statusbar-item', { hasText: /^\s*iptables-save\s*$/ }).first().waitFor({ timeout: 20_000 });
        await user.shot('npm-start');
        await page.close();
        page = null;

        // Ctrl-C: the server stops, the port is free again.
        const port = Number(URL_LINE.exec(out)[1]);
        process.kill(child.pid, 'SIGINT');
        const end = await Promise.race([exited, new Promise((r) => setTimeout(() => r(null), 20_000))]);
        expect(end, 'npm start did not stop within 20 s of Ctrl-C');
        expect(end.code === 0, `npm start exited with ${end.signal ?? end.code} after Ctrl-C: ${clip(out.slice(-400))}`);
        expect(!(await portInUse(port)), `port ${port} is still in use after npm start stopped`);
      } finally {
        await page?.close().catch(() => {});
        // Whatever happened, nothing of this start may outlive the check: ask it to stop (it stops its
        // code-server), and kill it only if it does not.
        if (child.exitCode === null && child.signalCode === null) {
          child.kill('SIGTERM');
          const gone = await Promise.race([exited, new Promise((r) => setTimeout(() => r(null), 15_000))]);
          if (!gone) child.kill('SIGKILL');
        }
      }
    },
  },
];
