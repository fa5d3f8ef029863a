// Builds the bundles: the CLI (node), the VS Code extension for the desktop (node) and the web (browser,
// where no Node-only module may be reached: esbuild fails the build if one is), and the flow-diagram
// webview. `node esbuild.mjs --watch` rebuilds on change; `--production` minifies without source maps.
import { build, context } from 'esbuild';
import { chmodSync, cpSync, existsSync, mkdirSync } from 'node:fs';

const watch = process.argv.includes('--watch');
const production = process.argv.includes('--production');

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
    entryPoints: ['src/extension.ts'],
    outfile: 'dist/web/extension.js',
    platform: 'browser',
    format: 'cjs',
    target: 'es2022',
    external: ['vscode'],
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
