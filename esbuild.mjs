// Builds the bundles: the CLI (node), the VS Code extension and its engine worker for the desktop (node,
// worker_threads) and the web (browser, a Web Worker; no Node-only module may be reached there: esbuild
// fails the build if one is), and the flow-diagram webview. `node esbuild.mjs --watch` rebuilds on change; `--production` minifies without source maps.
import { build, context } from 'esbuild';
import { chmodSync, cpSync, existsSync, mkdirSync } from 'node:fs';
import { resolve } from 'node:path';

const watch = process.argv.includes('--watch');
const production = process.argv.includes('--production');

// The web bundle starts the engine worker as a Web Worker: spawn-web.ts stands in for spawn-node.ts.
const webSpawner = {
  name: 'web-spawner',
  setup(b) {
    b.onResolve({ filter: /\/spawn-node\.ts$/ }, () => ({ path: resolve('src/vscode/spawn-web.ts') }));
  },
};

const targets = [
  {
    entryPoints: ['src/cli/cli.ts'],
    outfile: 'dist/cli.js',
    platform: 'node',
    format: 'cjs',
    target: 'node20',
  },
  {
    entryPoints: ['src/extension.ts'],
    outfile: 'dist/extension.js',
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    external: ['vscode'],
  },
  {
    entryPoints: ['src/worker/node-main.ts'],
    outfile: 'dist/worker.js',
    platform: 'node',
    format: 'cjs',
    target: 'node20',
  },
  {
    entryPoints: ['src/extension.ts'],
    outfile: 'dist/web/extension.js',
    platform: 'browser',
    format: 'cjs',
    target: 'es2022',
    external: ['vscode'],
    plugins: [webSpawner],
  },
  {
    entryPoints: ['src/worker/web-main.ts'],
    outfile: 'dist/web/worker.js',
    platform: 'browser',
    format: 'iife',
    target: 'es2022',
  },
  {
    entryPoints: ['webview/main.ts'],
    outfile: 'dist/webview/main.js',
    platform: 'browser',
    format: 'iife',
    target: 'es2022',
  },
  {
    entryPoints: ['webview/main.css'],
    outfile: 'dist/webview/main.css',
    loader: { '.css': 'css' },
  },
];

for (const t of targets) {
  if (!existsSync(t.entryPoints[0])) continue;
  const options = { bundle: true, sourcemap: !production, minify: production, logLevel: 'warning', ...t };
  if (watch) await (await context(options)).watch();
  else await build(options);
}
if (existsSync('src/vscode/icons')) {
  mkdirSync('dist/icons', { recursive: true });
  cpSync('src/vscode/icons', 'dist/icons', { recursive: true });
}
if (!watch) chmodSync('dist/cli.js', 0o755);
