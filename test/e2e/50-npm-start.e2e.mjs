// `npm start` as a newcomer runs it: the CLI's headline trace comes first, then a URL on 127.0.0.1 whose
// page is VS Code with examples/ open and the extension installed; Ctrl-C stops it, frees the port and
// removes its temporary profile.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { portInUse } from '../../scripts/e2e/code-server.mjs';
import { Workbench, clip, expect } from './workbench.mjs';

const URL_LINE = /http:\/\/127\.0\.0\.1:(\d+)\/\?folder=(\S+)/;
/** npm start's run folders (profile, extensions, sockets) in the project's ignored cache. */
const START_DIR = path.join(path.dirname(new URL(import.meta.url).pathname), '..', '..', '.cache', 'start');
const runFolders = () =>
  new Set(fs.existsSync(START_DIR) ? fs.readdirSync(START_DIR).filter(n => n.startsWith('packetlens-start-')) : []);
/** What code-server writes in the user's home unless told otherwise (config.yaml, heartbeat, logs). */
const HOME_FILES = [
  path.join(os.homedir(), '.config', 'code-server', 'config.yaml'),
  path.join(os.homedir(), '.local', 'share', 'code-server', 'heartbeat'),
  path.join(os.homedir(), '.local', 'share', 'code-server', 'coder-logs', 'code-server-stdout.log'),
];
const homeStamp = () => HOME_FILES.map(f => fs.statSync(f, { throwIfNoEntry: false })?.mtimeMs ?? 0).join(',');

export const checks = [
  {
    name: 'npm start: prints the headline trace, serves examples/ in VS Code on 127.0.0.1 until Ctrl-C',
    timeoutMs: 180_000,
    async run(wb, ctx) {
      const before = runFolders();
      const homeBefore = homeStamp();
      const env = { ...process.env };
      delete env.CI; // under CI it would stop by itself once ready; a user's run serves until Ctrl-C
      // In the runner's process group, like a terminal's npm start: a Ctrl-C to the run reaches it too.
      const child = spawn(
        process.execPath,
        [path.join(ctx.repo, 'scripts', 'start.mjs'), '--port', '0', '--no-browser'],
        { cwd: ctx.repo, env, stdio: ['ignore', 'pipe', 'pipe'] },
      );
      let out = '';
      child.stdout.on('data', d => (out += d));
      child.stderr.on('data', d => (out += d));
      const exited = new Promise(resolve => child.on('exit', (code, signal) => resolve({ code, signal })));
      // Whatever happens, nothing of this start may outlive the check: ask it to stop (it stops its
      // code-server and removes its folder), and kill it only if it does not.
      const stopChild = async () => {
        if (child.exitCode !== null || child.signalCode !== null) return;
        child.kill('SIGTERM');
        if (!(await Promise.race([exited, new Promise(r => setTimeout(() => r(null), 15_000))]))) child.kill('SIGKILL');
      };
      ctx.cleanups.add(stopChild);
      let page = null;
      try {
        const url = await wb.until(async () => URL_LINE.exec(out)?.[0] ?? null, { timeout: 150_000, interval: 500 });
        expect(url, `npm start printed no http://127.0.0.1:PORT/?folder=… URL: ${clip(out, 600)}`);
        const first = out.trimStart().split('\n')[0];
        expect(
          first.startsWith('$ packetlens trace --manifests examples/seed-003'),
          `npm start's output does not begin with the CLI's trace: "${clip(first, 120)}"`,
        );
        expect(
          /├─\s+50%\s+forwarded → 10\.10\.1\.11:80/.test(out) && /└─\s+50%\s+forwarded → 10\.10\.4\.12:80/.test(out),
          `npm start's trace does not show the two 50% outcomes: ${clip(out, 400)}`,
        );
        expect(out.indexOf('├─') < out.indexOf(url), 'npm start printed the URL before the trace');
        expect(
          decodeURIComponent(URL_LINE.exec(out)[2]) === path.join(ctx.repo, 'examples'),
          `npm start does not open examples/: ${url}`,
        );

        page = await ctx.context.newPage();
        await page.goto(url);
        const user = new Workbench(page, { shotsDir: wb.shotsDir, docsShotsDir: null });
        await page
          .locator('.explorer-folders-view .monaco-list-row', { hasText: 'seed-003' })
          .waitFor({ timeout: 60_000 });
        await user.openFile('seed-003/node-myk8s-worker.rules');
        await page
          .locator('.statusbar-item', { hasText: /^\s*iptables-save\s*$/ })
          .first()
          .waitFor({ timeout: 20_000 });
        await user.shot('npm-start');
        await page.close();
        page = null;

        // Ctrl-C: the server stops, the port is free again.
        const port = Number(URL_LINE.exec(out)[1]);
        process.kill(child.pid, 'SIGINT');
        const end = await Promise.race([exited, new Promise(r => setTimeout(() => r(null), 20_000))]);
        expect(end, 'npm start did not stop within 20 s of Ctrl-C');
        expect(
          end.code === 0,
          `npm start exited with ${end.signal ?? end.code} after Ctrl-C: ${clip(out.slice(-400))}`,
        );
        expect(!(await portInUse(port)), `port ${port} is still in use after npm start stopped`);
        const left = [...runFolders()].filter(n => !before.has(n));
        expect(
          !left.length,
          `npm start left its run folder behind: ${left.map(n => path.join(START_DIR, n)).join(', ')}`,
        );
        expect(
          homeStamp() === homeBefore,
          `npm start wrote into the home folder (${HOME_FILES.join(', ')}): code-server's config, heartbeat or logs`,
        );
      } finally {
        await page?.close().catch(() => {});
        await stopChild();
        ctx.cleanups.delete(stopChild);
      }
    },
  },
];
