// Builds the bundles: the CLI (node). The extension (node + browser) and webview bundles are added by
// their own entries below as they exist. `node esbuild.mjs --watch` rebuilds on change.
import { build, context } from 'esbuild';
import { chmodSync, existsSync } from 'node:fs';

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
];

for (const t of targets) {
  if (!existsSync(t.entryPoints[0])) continue;
  const options = { bundle: true, sourcemap: !production, minify: production, logLevel: 'warning', ...t };
  if (watch) await (await context(options)).watch();
  else await build(options);
}
if (!watch) chmodSync('dist/cli.js', 0o755);
