/** `-m comment --comment TEXT` (`xt_comment.c`): always matches; kube-proxy names Services with it. */
import { NO_FACTS, noAtoms } from './knowledge.ts';
import { defineMatch } from './types.ts';

export const commentMatch = defineMatch<{ text: string }>({
  name: 'comment',
  options: [{ name: '--comment', args: 1 }],
  compile: opts => ({ text: opts.find(o => o.name === '--comment')?.args[0] ?? '' }),
  test: () => true,
  why: () => 'never fails',
  describe: spec => `comment "${spec.text}"`,
  // A comment tests nothing.
  diffFacts: () => NO_FACTS,
  lintAtoms: noAtoms,
  lintNature: 'fixed',
});
