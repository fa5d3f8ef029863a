// The one process of `npm test` (scripts/run-tests.mjs): imports each test file it is given, in order;
// node:test runs the tests they register and sets the exit status when one fails.
import { pathToFileURL } from 'node:url';

const files = JSON.parse(process.env.PACKETLENS_TEST_FILES ?? '[]');
if (files.length === 0) throw new Error('test/entry.mjs: no test files (run it through scripts/run-tests.mjs)');
for (const file of files) await import(pathToFileURL(file).href);
