// `npm run test:e2e`: the extension in a real VS Code (code-server) driven through headless Chromium,
// checking what a user sees. The checks are test/e2e/*.e2e.mjs, run in file order in one workbench.
//
// Steps: install (or reuse) the cached VS Code (scripts/e2e/install.mjs) → `npm run package` → copy
// examples/ (plus the hostile fixture and the node address setting) into a temporary workspace → start
// code-server on 127.0.0.1 with the .vsix installed → open the workspace in Debian's /usr/bin/chromium
// through playwright-core → run the checks → stop everything, even on failure or Ctrl-C.
// Screenshots: test-results/e2e/ (every run; failures as FAIL-*.png) and docs/screenshots/ (README).
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { startCodeServer, quietSettings, freePort, HOST } from './code-server.mjs';
import { CODE_SERVER_VERSION, ensureVsCode } from './install.mjs';
import { packageVsix } from './package-vsix.mjs';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const CHECKS_DIR = path.join(REPO, 'test', 'e2e');
const RESULTS = path.join(REPO, 'test-results', 'e2e');
const DOCS_SHOTS = path.join(REPO, 'docs', 'screenshots');
const NODE_ADDRESS = '172.18.0.4'; // seed 003's myk8s-worker, whose dump the checks trace

const HELP = `Usage: npm run test:e2e [-- options]

Runs the extension in a real VS Code (code-server ${CODE_SERVER_VERSION}, installed once into
~/.cache/packetlens-e2e) in headless Chromium and checks what a user sees. Prints "N passed, M failed"; exits 1 when a check fails.

Options:
  --only TEXT              run only the checks whose name contains TEXT (repeatable)
  --no-docs-screenshots    do not update docs/screenshots/*.png (test-results/e2e/ always gets them)
  --keep                   keep the temporary workspace, profiles and logs (their folder is printed)
  --vsix FILE              test this .vsix instead of building one with \`npm run package\`
  --chromium PATH          the browser (default: $CHROMIUM or /usr/bin/chromium)
  -h, --help               this text

Environment: PACKETLENS_E2E_CACHE (or XDG_CACHE_HOME) moves the VS Code cache.`;

const t0 = Date.now();
const secs = ms => `${(ms / 1000).toFixed(1)} s`;
const log = (...a) => console.log(`[e2e ${secs(Date.now() - t0).padStart(7)}]`, ...a);

function parseOptions() {
  const { values } = parseArgs({
    options: {
      only: { type: 'string', multiple: true, default: [] },
      'no-docs-screenshots': { type: 'boolean', default: false },
      keep: { type: 'boolean', default: false },
      chromium: { type: 'string' },
      vsix: { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
    allowPositionals: false,
  });
  return values;
}

async function loadChecks(only) {
  const files = fs
    .readdirSync(CHECKS_DIR)
    .filter(f => f.endsWith('.e2e.mjs'))
    .sort();
  const all = [];
  for (const f of files) {
    const mod = await import(pathToFileURL(path.join(CHECKS_DIR, f)).href);
    for (const c of mod.checks ?? []) all.push({ ...c, file: f });
  }
  if (!all.length) throw new Error(`no checks found in ${CHECKS_DIR}/*.e2e.mjs`);
  const picked = only.length ? all.filter(c => only.some(o => c.name.includes(o))) : all;
  if (!picked.length) throw new Error(`no check name contains ${only.map(o => `"${o}"`).join(' or ')}`);
  return picked;
}

/** kube-proxy's rules for 10,000 Services × 10 endpoints (bench/generate.ts): 320,008 rules, 45 MB. */
const BIG_DUMP = 'big/kube-320k.rules';
const BIG_DUMP_CHANGED = 'big/kube-320k-changed.rules';
/** The same text as plain text (not a dump): what opening 45 MB costs VS Code itself, for comparison. */
const BIG_CONTROL = 'big/control-320k.txt';
/**
 * A cluster of 10,000 Services with their EndpointSlices (10 endpoints each) and one Node, as manifests
 * (bench/synth-measure.ts): `nodes.yaml` and ten files of 1,000 Services each, 8 MB in all.
 */
const BIG_CLUSTER = 'big-cluster';

/**
 * A copy of examples/ with what the checks need: the node address setting, the hostile dump, the bad
 * inputs of test/e2e/fixtures/responsive/, a 320k-rule dump and a 10k-Service cluster's manifests
 * generated for this run.
 */
function makeWorkspace(runDir) {
  const ws = path.join(runDir, 'examples');
  fs.cpSync(path.join(REPO, 'examples'), ws, { recursive: true });
  fs.mkdirSync(path.join(ws, '.vscode'), { recursive: true });
  fs.writeFileSync(
    path.join(ws, '.vscode', 'settings.json'),
    `${JSON.stringify({ 'packetlens.node.addresses': [NODE_ADDRESS] }, null, 2)}\n`,
  );
  fs.mkdirSync(path.join(ws, 'hostile'), { recursive: true });
  fs.copyFileSync(path.join(CHECKS_DIR, 'fixtures', 'hostile.rules'), path.join(ws, 'hostile', 'hostile.rules'));
  fs.cpSync(path.join(CHECKS_DIR, 'fixtures', 'responsive'), path.join(ws, 'responsive'), { recursive: true });
  fs.mkdirSync(path.join(ws, path.dirname(BIG_DUMP)), { recursive: true });
  // And the same dump with one Service's first endpoint at 25% instead of 10%, to compare with it, and
  // as plain text.
  const generate = `const { generateKubeProxyDump } = require(${JSON.stringify(path.join(REPO, 'bench', 'generate.ts'))}); const fs = require('node:fs'); const text = generateKubeProxyDump(10000, 10); fs.writeFileSync(${JSON.stringify(path.join(ws, BIG_DUMP))}, text); fs.writeFileSync(${JSON.stringify(path.join(ws, BIG_DUMP_CHANGED))}, text.replace('--probability 0.10000000000 ', '--probability 0.25000000000 ')); fs.writeFileSync(${JSON.stringify(path.join(ws, BIG_CONTROL))}, 'a copy of kube-320k.rules that is not a dump\\n' + text); const { generateManifests } = require(${JSON.stringify(path.join(REPO, 'bench', 'synth-measure.ts'))}); const docs = generateManifests(10000, 10).split('\\n---\\n'); const dir = ${JSON.stringify(path.join(ws, BIG_CLUSTER))}; fs.mkdirSync(dir, { recursive: true }); fs.writeFileSync(dir + '/nodes.yaml', docs[0] + '\\n'); for (let i = 0; i < 10; i++) fs.writeFileSync(dir + '/services-' + i + '.yaml', docs.slice(1 + i * 2000, 1 + (i + 1) * 2000).join('\\n---\\n') + '\\n');`;
  execFileSync(process.execPath, ['--import', 'tsx', '-e', generate], { cwd: REPO, stdio: 'inherit' });
  return ws;
}

/**
 * Watches every frame for signs that text from a dump ran or was parsed as markup (see
 * test/e2e/40-hostile.e2e.mjs): PLXSS calls and errors, dialogs, CSP refusals of inline code or images,
 * requests for the payload's image `x`.
 */
function makeSentinel(page) {
  let hits = [];
  let control = { console: false, error: false };
  const hit = what => hits.push(what.slice(0, 300));
  page.on('console', m => {
    const t = m.text();
    if (/PLXSS-CONTROL/.test(t)) control.console = true;
    else if (t.includes('PLXSS')) hit(`console.${m.type()}: ${t}`);
    else if (/Refused to (execute inline|load the image)/.test(t)) hit(`CSP: ${t}`);
  });
  page.on('pageerror', e => {
    if (e.message.includes('PLXSS-CONTROL')) control.error = true;
    else if (e.message.includes('PLXSS')) hit(`uncaught: ${e.message}`);
  });
  page.on('dialog', d => {
    // "Leave site?" when the runner reloads the workbench is not the dump's doing.
    if (d.type() === 'beforeunload') return void d.accept().catch(() => {});
    hit(`dialog: ${d.type()} "${d.message()}"`);
    d.dismiss().catch(() => {});
  });
  page.on('request', r => {
    try {
      if (new URL(r.url()).pathname.endsWith('/x')) hit(`request for the payload's image: ${r.url()}`);
    } catch {
      /* not a URL */
    }
  });
  return {
    reset() {
      hits = [];
      control = { console: false, error: false };
    },
    events: () => hits.slice(),
    controlSeen: () => control.console && control.error,
  };
}

function withTimeout(promise, ms, what) {
  let timer;
  return Promise.race([
    promise.finally(() => clearTimeout(timer)),
    new Promise((_, reject) => {
      timer = setTimeout(
        () => reject(Object.assign(new Error(`${what} timed out after ${secs(ms)}`), { timedOut: true })),
        ms,
      );
    }),
  ]);
}

/** The workbench has loaded and the server's file system answered: the explorer lists the workspace. */
async function workbenchReady(page) {
  await page.locator('.monaco-workbench').waitFor({ timeout: 60_000 });
  await page.locator('.explorer-folders-view .monaco-list-row', { hasText: 'seed-003' }).waitFor({ timeout: 60_000 });
}

const slug = s =>
  s
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '')
    .slice(0, 60);

async function main() {
  const opts = parseOptions();
  if (opts.help) {
    console.log(HELP);
    return 0;
  }
  const chromiumPath = opts.chromium || process.env.CHROMIUM || '/usr/bin/chromium';
  if (!fs.existsSync(chromiumPath)) {
    throw new Error(
      `no browser at ${chromiumPath}: install Debian's chromium (apt-get install chromium) or pass --chromium PATH`,
    );
  }
  const { chromium } = await import('playwright-core');
  const checks = await loadChecks(opts.only);
  fs.rmSync(RESULTS, { recursive: true, force: true });
  fs.mkdirSync(RESULTS, { recursive: true });
  const timings = {};
  let mark = Date.now();
  const lap = name => {
    timings[name] = Date.now() - mark;
    mark = Date.now();
  };

  const { node, entry, root } = await ensureVsCode(m => log(m));
  lap('install');
  log(`VS Code (code-server) from ${root}`);
  let vsix;
  if (opts.vsix) {
    vsix = path.resolve(opts.vsix);
    if (!fs.existsSync(vsix)) throw new Error(`no such .vsix: ${vsix}`);
    log(`testing ${vsix}`);
  } else {
    vsix = await packageVsix(REPO);
    log(`packaged ${path.relative(REPO, vsix)}`);
  }
  lap('package');

  const runDir = fs.mkdtempSync(path.join(os.tmpdir(), 'packetlens-e2e-'));
  let server = null;
  let context = null;
  let interrupted = false;
  /** Processes a check started, to stop if the run is interrupted while it runs (they stop them otherwise). */
  const cleanups = new Set();
  // Once, whoever asks first (the end of the run or a signal); every step runs even if one fails.
  let tornDown = null;
  const teardown = () =>
    (tornDown ??= (async () => {
      const step = async (what, f) => {
        try {
          await f();
        } catch (e) {
          log(`warning: ${what}: ${e.message}`);
        }
      };
      await step('stopping what the checks started', () => Promise.all([...cleanups].map(f => f())));
      if (context) await step('closing Chromium', () => withTimeout(context.close(), 15_000, 'closing Chromium'));
      if (server) await step('stopping code-server', () => server.stop());
      if (!opts.keep)
        await step(`removing ${runDir}`, () =>
          fs.rmSync(runDir, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 }),
        );
    })());
  const onSignal = sig => {
    if (interrupted) return;
    interrupted = true;
    log(`${sig}: stopping code-server and Chromium`);
    teardown().finally(() => process.exit(130));
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);

  const results = [];
  try {
    const workspace = makeWorkspace(runDir);
    // The extension logs every stall of the extension host's event loop above 50 ms (src/vscode/spawn-node.ts).
    process.env.PACKETLENS_STALL_LOG = '1';
    const port = await freePort();
    // Calmer screenshots: no minimap, no highlights of the word under the cursor.
    const calm = {
      'editor.minimap.enabled': false,
      'editor.occurrencesHighlight': 'off',
      'editor.selectionHighlight': false,
      'editor.hover.delay': 100,
    };
    server = await startCodeServer({
      node,
      entry,
      folder: workspace,
      port,
      vsix,
      runDir: path.join(runDir, 'code-server'),
      settings: quietSettings(calm),
      logFile: path.join(RESULTS, 'code-server.log'),
      keepRunDir: opts.keep,
    });
    lap('serverStart');
    log(`code-server ${server.url} (pid ${server.pid}) serves ${workspace}`);

    const profile = path.join(runDir, 'chromium');
    context = await chromium.launchPersistentContext(profile, {
      executablePath: chromiumPath,
      headless: true,
      viewport: { width: 1440, height: 900 },
      timeout: 60_000,
      // Ctrl-C and kill are the runner's to handle (teardown closes Chromium): playwright's own handlers
      // would exit before code-server is stopped and the temporary folders removed.
      handleSIGINT: false,
      handleSIGTERM: false,
      handleSIGHUP: false,
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        '--disable-default-apps',
      ],
    });
    // Hermetic: the page may only talk to this machine's code-server (blocked requests are listed).
    const blocked = [];
    await context.route(
      u => /^(https?|wss?):$/.test(u.protocol) && u.hostname !== HOST,
      r => {
        blocked.push(r.request().url());
        return r.abort();
      },
    );
    // In every frame, before its own scripts: the function the hostile dump's payloads call.
    await context.addInitScript(() => {
      globalThis.PLXSS = tag => {
        console.error(`PLXSS-FIRED ${String(tag)} in ${globalThis.location?.href}`);
        try {
          globalThis.document.title = 'PLXSS-FIRED';
        } catch {
          /* no document */
        }
      };
    });
    const page = context.pages()[0] ?? (await context.newPage());
    page.setDefaultTimeout(30_000);
    const consoleErrors = [];
    page.on('console', m => {
      if (m.type() === 'error') consoleErrors.push(m.text());
    });
    page.on('pageerror', e => consoleErrors.push(`uncaught: ${e.message}`));
    const sentinel = makeSentinel(page);

    await page.goto(server.folderUrl);
    await workbenchReady(page);
    lap('workbenchReady');
    log('workbench ready');

    const { Workbench, CheckFailure } = await import(pathToFileURL(path.join(CHECKS_DIR, 'workbench.mjs')).href);
    /** The extension's output channel log so far (where code-server keeps it), or ''. */
    const extensionLog = () => readExtensionLog(path.join(runDir, 'code-server'));
    /**
     * A second workbench on the same workspace with other settings (the web-worker extension host,
     * Restricted Mode), stopped at the end of the check that started it.
     */
    const startServer = async ({ name, settings = {}, restricted = false }) => {
      const s = await startCodeServer({
        node,
        entry,
        folder: workspace,
        port: await freePort(),
        vsix,
        runDir: path.join(runDir, `code-server-${name}`),
        settings: { ...quietSettings(calm), ...settings },
        logFile: path.join(RESULTS, `code-server-${name}.log`),
        restricted,
      });
      cleanups.add(() => s.stop());
      return s;
    };
    const ctx = { sentinel, log, repo: REPO, context, cleanups, extensionLog, startServer };
    for (const check of checks) {
      if (interrupted) throw new Error('interrupted');
      const start = Date.now();
      log(`▶ ${check.name}`);
      // One Workbench per check: a check that timed out is cancelled and cannot act on the next one's page.
      const wb = new Workbench(page, {
        workspace,
        shotsDir: RESULTS,
        docsShotsDir: opts['no-docs-screenshots'] ? null : DOCS_SHOTS,
        log,
      });
      let error = null;
      if (check.needs && !ctx[check.needs]) {
        error = new CheckFailure(`cannot run: it needs "${check.needs}", which an earlier check did not establish`);
      } else {
        try {
          await withTimeout(check.run(wb, ctx), check.timeoutMs ?? 90_000, 'the check');
        } catch (e) {
          error = e;
        }
      }
      const ms = Date.now() - start;
      if (error) {
        const shot = path.join(RESULTS, `FAIL-${slug(check.name)}.png`);
        await page.screenshot({ path: shot }).catch(() => {});
        const why =
          error instanceof CheckFailure || error.timedOut
            ? error.message
            : (error.stack ?? String(error)).split('\n').slice(0, 4).join('\n    ');
        results.push({ name: check.name, ok: false, ms, why, shot });
        log(`✘ FAILED (${secs(ms)}): ${why}\n    screenshot: ${path.relative(REPO, shot)}`);
        if (error.timedOut) {
          wb.cancelled = true;
          // The timed-out check may still be acting on the page: reload it, so the next check starts
          // on a fresh workbench and the stale one's next step fails instead of interfering.
          await page.reload({ waitUntil: 'domcontentloaded' });
          await workbenchReady(page);
        } else await wb.settle().catch(() => {});
      } else {
        results.push({ name: check.name, ok: true, ms });
        log(`✔ passed (${secs(ms)})`);
      }
    }
    lap('checks');
    const extensionErrors = consoleErrors.filter(e => /packetlens|packet lens/i.test(e));
    for (const e of extensionErrors.slice(0, 10)) log(`browser console error about the extension: ${e.slice(0, 300)}`);
    if (blocked.length)
      log(
        `blocked ${blocked.length} requests to other hosts: ${[...new Set(blocked.map(u => new URL(u).host))].join(', ')}`,
      );
    const activation = findActivation(path.join(runDir, 'code-server'));
    if (activation) log(`the extension's log: ${activation}`);
  } catch (e) {
    // Not a check's failure (those are caught above): the setup or the harness broke. Every check that
    // did not run fails with the reason.
    log(`✘ ${e.message}`);
    for (const c of checks.slice(results.length))
      results.push({ name: c.name, ok: false, ms: 0, why: `not run: ${e.message.split('\n')[0]}` });
  } finally {
    await teardown();
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }

  const passed = results.filter(r => r.ok).length;
  const failed = results.length - passed;
  fs.writeFileSync(
    path.join(RESULTS, 'summary.json'),
    `${JSON.stringify({ passed, failed, timings, results }, null, 2)}\n`,
  );
  console.log('');
  for (const r of results)
    console.log(`${r.ok ? '  ✔' : '  ✘'} ${r.name} (${secs(r.ms)})${r.ok ? '' : `\n      ${r.why}`}`);
  console.log(
    `\ntimings: ${Object.entries(timings)
      .map(([k, v]) => `${k} ${secs(v)}`)
      .join(', ')}; total ${secs(Date.now() - t0)}`,
  );
  if (!opts['no-docs-screenshots'])
    console.log(`screenshots: ${path.relative(REPO, RESULTS)}/ and ${path.relative(REPO, DOCS_SHOTS)}/`);
  console.log(`${passed} passed, ${failed} failed`);
  if (failed)
    console.error(
      `E2E FAILED: ${results
        .filter(r => !r.ok)
        .map(r => r.name)
        .join('; ')}`,
    );
  return failed ? 1 : 0;
}

/** The text of the extension's output channel log files under `dir` (code-server's run folder). */
function readExtensionLog(dir) {
  const stack = [dir];
  let out = '';
  while (stack.length) {
    const d = stack.pop();
    let entries = [];
    try {
      entries = fs.readdirSync(d, { withFileTypes: true });
    } catch {
      continue;
    }
    for (const e of entries) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) stack.push(p);
      else if (e.name.includes('Packet Lens')) out += fs.readFileSync(p, 'utf8');
    }
  }
  return out;
}

/** "activated in 12.3 ms" from the extension's output channel log, when code-server kept it. */
function findActivation(dir) {
  return /activat(ed in [\d.]+ ms|ion failed[^\n]*)/.exec(readExtensionLog(dir))?.[0] ?? null;
}

main().then(
  code => process.exit(code),
  e => {
    console.error(`E2E FAILED: ${e.message}`);
    process.exit(1);
  },
);
