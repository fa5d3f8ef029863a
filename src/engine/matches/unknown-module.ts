/**
 * Any match module the engine does not model (u32, string, bpf, time, quota, …). Its options are kept for
 * printing and hovers; evaluating it is *unknown*, never a silent yes or no.
 */
import type { MatchModule, ParsedOption } from './types.ts';
import { unknown } from './types.ts';
import { jointAtom } from './knowledge.ts';

export function unknownModule(name: string): MatchModule<unknown> {
  return {
    name,
    options: [],
    compile: (opts: readonly ParsedOption[]) => opts,
    test: () => unknown(`match module '${name}' is not modelled`),
    why: () => `module '${name}' is not modelled`,
    describe: () => `match '${name}' (not modelled: traces split on it)`,
    // Nothing is known about it: the diff leaves its classes open; the linter compares its words literally.
    diffFacts: 'opaque',
    lintAtoms: jointAtom,
    lintNature: 'varying',
  };
}
