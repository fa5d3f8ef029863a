// Builds the extension and packs it as a .vsix with the project's own `npm run package` (esbuild in
// production mode, then vsce), returning the file's path.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

export function packageVsix(repo) {
  const vsix = path.join(repo, 'packetlens.vsix');
  return new Promise((resolve, reject) => {
    execFile(
      'npm',
      ['run', 'package'],
      { cwd: repo, timeout: 180_000, maxBuffer: 32 << 20, env: { ...process.env, npm_config_yes: 'true' } },
      (err, stdout, stderr) => {
        if (err) return reject(new Error(`npm run package failed: ${err.message}\n${stdout}\n${stderr}`));
        if (!fs.existsSync(vsix)) return reject(new Error(`npm run package did not write ${vsix}\n${stdout}`));
        resolve(vsix);
      },
    );
  });
}
