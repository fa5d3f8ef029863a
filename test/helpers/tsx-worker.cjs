// A worker_threads entry that runs the engine worker from its TypeScript source (src/worker/node-main.ts)
// through tsx, for tests that need a real Worker started by src/vscode/spawn-node.ts (its heap cap).
require('tsx/cjs');
require('../../src/worker/node-main.ts');
