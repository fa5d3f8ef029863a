// `npm start`: the product in two views. First the CLI's trace of the example's headline packet (seed 003:
// an outside client → svc1's MetalLB address), then the extension in a real VS Code (code-server) serving
// examples/ on 127.0.0.1, until Ctrl-C. Plain Node ESM, no build step. `npm start -- --help` for options.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { HOST, freePort, portInUse, quietSettings, startCodeServer } from './e2e/code-server.mjs';
import { CODE_SERVER_VERSION, cacheRoot, ensureVsCode } from './e2e/install.mjs';
import { packageVsix } from './e2e/package-vsix.mjs';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const EXAMPLES = path.join(REPO, 'examples');
const HEADLINE = ['trace', '--manifests', 'examples/seed-003', '--packet', 'tcp 172.18.0.100 -> 172.18.255.200:80'];
const DEFAULT_PORT = 8080;

const HELP = `Usage: npm start [-- options]

Prints the CLI's trace of the example's headline packet, then builds the extension and opens a folder
(examples/ by default) in a real VS Code — code-server ${CODE_SERVER_VERSION}, installed once into
${cacheRoot()} — with the extension installed, served on http://${HOST}:PORT only. It keeps serving
until Ctrl-C.

Options:
  --port N            port on ${HOST} (default ${DEFAULT_PORT}; 0 picks a free one)
  --folder DIR        the folder to open (default: examples/)
  --no-browser        do not try to open a browser (without a display none is tried anyway: open the
                      printed URL yourself, or tunnel it: ssh -L N:${HOST}:N this-host)
  --no-trace          skip the CLI trace
  --exit-when-ready   stop as soon as the workbench answers (for scripts; the default when CI is set)
  -h, --help          this text`;

function parseOptions() {
  const { values } = parseArgs({
    options: {
      port: { type: 'string', default: String(DEFAULT_PORT) },
      folder: { type: 'string' },
      'no-browser': { type: 'boolean', default: false },
      'no-trace': { type: 'boolean', default: false },
      'exit-when-ready': { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
    allowPositionals: false,
  });
  const port = Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`--port ${values.port}: not a port number`);
  // npm runs scripts in the package folder; a relative --folder means relative to where npm was run.
  const base = process.env.INIT_CWD || process.cwd();
  const folder = values.folder ? path.resolve(base, values.folder) : EXAMPLES;
  return { ...values, port, folder };
}

const t0 = Date.now();
const say = m => console.log(`[start] ${m}`);

/**
 * The headline trace, exactly as `packetlens trace` prints it. The CLI is rebuilt first (about a second):
 * a dist/ left from before a `git pull` would otherwise show the old engine's answers.
 */
function headlineTrace() {
  const cli = path.join(REPO, 'dist', 'cli.js');
  const b = spawnSync(process.execPath, ['esbuild.mjs'], { cwd: REPO, stdio: ['ignore', 'ignore', 'inherit'] });
  if (b.status !== 0) throw new Error('building the CLI (node esbuild.mjs) failed');
  console.log(`$ packetlens ${HEADLINE.map(a => (/\s/.test(a) ? `"${a}"` : a)).join(' ')}`);
  const r = spawnSync(process.execPath, [cli, ...HEADLINE], { cwd: REPO, stdio: 'inherit' });
  if (r.status !== 0) throw new Error(`packetlens ${HEADLINE.join(' ')} exited with ${r.status}`);
}

/** Asks the desktop to open `url` when there is one; says so when there is not. */
function openBrowser(url) {
  const opener =
    process.platform === 'darwin' ? 'open' : process.env.DISPLAY || process.env.WAYLAND_DISPLAY ? 'xdg-open' : null;
  if (!opener)
    return say('no display here: open the URL above in a browser on this machine (or through an SSH tunnel)');
  const child = spawn(opener, [url], { stdio: 'ignore', detached: true });
  child.on('error', () => say(`could not run ${opener}: open the URL yourself`));
  child.unref();
}

async function main() {
  const opts = parseOptions();
  if (opts.help) {
    console.log(HELP);
    return 0;
  }
  if (!fs.statSync(opts.folder, { throwIfNoEntry: false })?.isDirectory())
    throw new Error(`--folder ${opts.folder}: no such folder`);
  const exitWhenReady = opts['exit-when-ready'] || Boolean(process.env.CI && process.env.CI !== 'false');

  if (!opts['no-trace']) {
    headlineTrace();
    console.log('');
  }

  const port = opts.port === 0 ? await freePort() : opts.port;
  if (await portInUse(port))
    throw new Error(`port ${port} on ${HOST} is in use: pass --port N, or --port 0 for a free one`);
  const { node, entry } = await ensureVsCode(say);
  say('building the extension (npm run package)');
  const vsix = await packageVsix(REPO);

  // Inside the project's ignored cache: npm start writes nothing outside the project but the VS Code
  // install it shares with the e2e suite (~/.cache/packetlens-e2e).
  const runRoot = path.join(REPO, '.cache', 'start');
  fs.mkdirSync(runRoot, { recursive: true });
  const runDir = fs.mkdtempSync(path.join(runRoot, 'packetlens-start-'));
  // The example dump is myk8s-worker's: its address decides local delivery and the MASQUERADE source.
  const settings = quietSettings(opts.folder === EXAMPLES ? { 'packetlens.node.addresses': ['172.18.0.4'] } : {});
  const server = await startCodeServer({
    node,
    entry,
    folder: opts.folder,
    port,
    runDir,
    vsix,
    settings,
    logFile: path.join(runDir, 'code-server.log'),
  });
  let stopping = null;
  // Stops code-server (its whole process group), removes the run folder, then exits.
  const stop = code => (stopping ??= server.stop().then(() => process.exit(code)));
  process.on('SIGINT', () => void stop(0));
  process.on('SIGTERM', () => void stop(0));
  process.on('SIGHUP', () => void stop(0));

  // Ready when the page a browser opens answers, not only /healthz.
  const status = await fetch(server.folderUrl, { signal: AbortSignal.timeout(30_000) }).then(
    r => r.status,
    e => e.message,
  );
  if (status !== 200) {
    await server.stop();
    throw new Error(`${server.folderUrl} did not answer: ${status}`);
  }
  const ready = ((Date.now() - t0) / 1000).toFixed(1);
  console.log(`
Packet Lens in VS Code (code-server ${CODE_SERVER_VERSION}) is serving ${path.relative(process.env.INIT_CWD || process.cwd(), opts.folder) || '.'} at

    ${server.folderUrl}

(ready in ${ready} s; only this machine can connect: ${HOST}). In it: open seed-003/node-myk8s-worker.rules,
hover a KUBE-SVC chain, then F1 → "Packet Lens: Trace Packet…" → tcp 172.18.0.100 -> 172.18.255.200:80.`);
  if (exitWhenReady) {
    say(`stopping (${opts['exit-when-ready'] ? '--exit-when-ready' : 'CI is set'})`);
    await stop(0);
  }
  console.log('Press Ctrl-C to stop.');
  if (!opts['no-browser']) openBrowser(server.folderUrl);
  const { code, signal } = await server.exited;
  // Ctrl-C: code-server exits first; let stop() finish (wait for its children, remove the folder).
  if (stopping) await stopping;
  else {
    const tail = fs.readFileSync(server.logFile, 'utf8').split('\n').slice(-20).join('\n');
    console.error(`code-server stopped by itself (${signal ?? `exit ${code}`}); the end of its log:\n${tail}`);
    await server.stop();
    return 1;
  }
  return 0;
}

main().then(
  code => process.exit(code),
  e => {
    console.error(`npm start failed: ${e.message}`);
    process.exit(1);
  },
);
