/**
 * Import this first (before any src/vscode module): `require('vscode')` — what tsx makes of the glue's
 * `import * as vscode from 'vscode'` — then resolves to the fake in this folder.
 */
import Module from 'node:module';
import { join } from 'node:path';

const fake = join(__dirname, 'vscode.ts');
const M = Module as unknown as { _resolveFilename(request: string, ...rest: unknown[]): string };
const original = M._resolveFilename;
M._resolveFilename = function (request: string, ...rest: unknown[]) {
  return request === 'vscode' ? fake : original.call(this, request, ...rest);
};
