// Starting and stopping a code-server (a real VS Code served to a browser) with the packetlens .vsix
// installed, for the end-to-end tests and `npm start`. It binds to 127.0.0.1 only, asks for no password
// (nothing but this machine can reach it), and keeps everything — settings, extensions, IPC sockets — in
// one run folder (XDG data and config homes included), so nothing leaks into ~/.config, ~/.local or /tmp
// and a stop removes it all.
import { execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';

export const HOST = '127.0.0.1';

/**
 * User settings that keep the workbench quiet, offline and deterministic: no welcome page, no trust
 * prompt, no Chat panel, no telemetry, no update or gallery checks, no type acquisition downloads.
 */
export function quietSettings(extra = {}) {
  return {
    'security.workspace.trust.enabled': false,
    'workbench.startupEditor': 'none',
    'workbench.tips.enabled': false,
    'workbench.enableExperiments': false,
    'workbench.secondarySideBar.defaultVisibility': 'hidden',
    'workbench.colorTheme': 'Default Dark Modern',
    'chat.disableAIFeatures': true,
    'telemetry.telemetryLevel': 'off',
    'update.mode': 'none',
    'extensions.autoCheckUpdates': false,
    'extensions.autoUpdate': false,
    'extensions.ignoreRecommendations': true,
    'typescript.disableAutomaticTypeAcquisition': true,
    'json.schemaDownload.enable': false,
    'npm.fetchOnlinePackageInfo': false,
    'git.enabled': false,
    'remote.autoForwardPorts': false, // no "Your application running on port … is available" toasts
    // …and no scan for listening ports: a process spawned every few seconds from the extension host's
    // thread, 60–190 ms each time on this machine (a remote-only VS Code feature), which the stall checks
    // of 60-responsive would count against the extension.
    'remote.autoForwardPortsSource': 'output',
    'editor.codeLens': true,
    'editor.hover.delay': 150,
    // A user "just trying" edits on an example dump (npm start) must not have them written to the file.
    'files.autoSave': 'off',
    ...extra,
  };
}

/** A free TCP port on 127.0.0.1 (the OS picks one; it is free again when this returns). */
export function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, HOST, () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

/** Whether something already listens on 127.0.0.1:port. */
export function portInUse(port) {
  return new Promise(resolve => {
    const srv = net.createServer();
    srv.once('error', () => resolve(true));
    srv.listen(port, HOST, () => srv.close(() => resolve(false)));
  });
}

async function waitHttp(url, timeoutMs, alive) {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    if (!alive()) throw new Error(`code-server exited before ${url} answered`);
    try {
      const r = await fetch(url, { signal: AbortSignal.timeout(2000) });
      if (r.ok) return;
    } catch {
      /* not up yet */
    }
    await new Promise(r => setTimeout(r, 100));
  }
  throw new Error(`code-server did not answer ${url} within ${timeoutMs / 1000} s`);
}

function execFileP(cmd, args, options) {
  return new Promise((resolve, reject) => {
    execFile(cmd, args, options, (err, stdout, stderr) => {
      if (err) reject(new Error(`${path.basename(cmd)} ${args.join(' ')} failed: ${err.message}\n${stdout}${stderr}`));
      else resolve(stdout);
    });
  });
}

const groupAlive = pid => {
  try {
    process.kill(-pid, 0);
    return true;
  } catch {
    return false;
  }
};
const signalGroup = (pid, sig) => {
  try {
    process.kill(-pid, sig);
  } catch {
    /* already gone */
  }
};

/**
 * Installs `vsix` and starts code-server on 127.0.0.1:`port` opening `folder`. Everything lives under
 * `runDir` (created; removed by `stop()` unless `keepRunDir`). Resolves once /healthz answers.
 * Returns { url, folderUrl, pid, logFile, stop(), exited } — `exited` resolves when the server exits.
 * `restricted`: workspace trust is left on, so the folder opens in Restricted Mode.
 */
export async function startCodeServer({
  node,
  entry,
  folder,
  port,
  runDir,
  vsix,
  settings,
  logFile,
  keepRunDir = false,
  restricted = false,
}) {
  const userData = path.join(runDir, 'user-data');
  const extensions = path.join(runDir, 'extensions');
  const childTmp = path.join(runDir, 'tmp');
  for (const d of [path.join(userData, 'User'), extensions, childTmp]) fs.mkdirSync(d, { recursive: true });
  fs.writeFileSync(path.join(userData, 'User', 'settings.json'), `${JSON.stringify(settings, null, 2)}\n`);
  // Its own config file: otherwise code-server writes ~/.config/code-server/config.yaml with a password.
  const config = path.join(runDir, 'config.yaml');
  fs.writeFileSync(config, `bind-addr: ${HOST}:${port}\nauth: none\ncert: false\n`);
  // TMPDIR inside runDir: VS Code leaves vscode-ipc-*.sock and vscode-git-*.sock in os.tmpdir().
  // EXTENSIONS_GALLERY={} leaves code-server without an extension gallery (open-vsx.org by default), so
  // neither it nor the page tries to reach one; nothing here may leave this machine.
  // XDG_* inside runDir too: code-server keeps its heartbeat and coder-logs in $XDG_DATA_HOME/code-server
  // and looks for config.yaml in $XDG_CONFIG_HOME/code-server (~/.local/share, ~/.config otherwise).
  const xdg = name => {
    const d = path.join(runDir, 'xdg', name);
    fs.mkdirSync(d, { recursive: true });
    return d;
  };
  const env = {
    ...process.env,
    TMPDIR: childTmp,
    EXTENSIONS_GALLERY: '{}',
    XDG_DATA_HOME: xdg('data'),
    XDG_CONFIG_HOME: xdg('config'),
    XDG_STATE_HOME: xdg('state'),
  };
  const common = ['--config', config, '--user-data-dir', userData, '--extensions-dir', extensions];
  await execFileP(node, [entry, ...common, '--install-extension', vsix, '--force'], {
    env,
    timeout: 120_000,
    maxBuffer: 16 << 20,
  });

  const out = fs.openSync(logFile, 'a');
  const args = [
    entry,
    ...common,
    '--auth',
    'none',
    '--bind-addr',
    `${HOST}:${port}`,
    '--disable-telemetry',
    '--disable-update-check',
    // Restricted Mode: workspace trust stays on, so the folder opens untrusted.
    ...(restricted ? [] : ['--disable-workspace-trust']),
    '--disable-getting-started-override',
    '--ignore-last-opened',
    folder,
  ];
  // detached: its own process group (id = its pid), so stop() signals code-server with its extension
  // host and other children together, and nothing else.
  const child = spawn(node, args, { stdio: ['ignore', out, out], env, detached: true });
  fs.closeSync(out);
  let running = true;
  const exited = new Promise(resolve =>
    child.on('exit', (code, signal) => {
      running = false;
      resolve({ code, signal });
    }),
  );
  const pid = child.pid;
  // Last resort if the caller dies without stopping it.
  const onExit = () => {
    if (groupAlive(pid)) signalGroup(pid, 'SIGKILL');
  };
  process.on('exit', onExit);

  let stopped = null;
  const stop = () =>
    (stopped ??= (async () => {
      signalGroup(pid, 'SIGTERM');
      // Children outlive the main process briefly and still write into TMPDIR: wait for the whole group.
      for (let i = 0; i < 50 && groupAlive(pid); i++) await new Promise(r => setTimeout(r, 100));
      if (groupAlive(pid)) {
        signalGroup(pid, 'SIGKILL');
        for (let i = 0; i < 30 && groupAlive(pid); i++) await new Promise(r => setTimeout(r, 100));
      }
      process.off('exit', onExit);
      if (!keepRunDir) fs.rmSync(runDir, { recursive: true, force: true, maxRetries: 3 });
    })());

  const url = `http://${HOST}:${port}`;
  try {
    await waitHttp(`${url}/healthz`, 90_000, () => running);
  } catch (e) {
    const tail = fs.existsSync(logFile) ? fs.readFileSync(logFile, 'utf8').split('\n').slice(-20).join('\n') : '';
    await stop();
    throw new Error(`${e.message}\n--- code-server log (${logFile}) ---\n${tail}`);
  }
  return { url, folderUrl: `${url}/?folder=${encodeURIComponent(folder)}`, pid, logFile, stop, exited };
}
