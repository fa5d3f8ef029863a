/** A small, strict argument reader: repeated flags collect, unknown flags are errors that name themselves. */
export interface FlagSpec {
  /** `switch`: a boolean that may also be given a value, `--why-not` or `--why-not=grouped` (never the next word). */
  readonly [name: string]: 'string' | 'strings' | 'boolean' | 'switch';
}

export type Parsed<F extends FlagSpec> = {
  positionals: string[];
  flags: {
    [K in keyof F]?: F[K] extends 'strings'
      ? string[]
      : F[K] extends 'boolean'
        ? boolean
        : F[K] extends 'switch'
          ? true | string
          : string;
  };
};

export class UsageError extends Error {}

export function parseArgs<F extends FlagSpec>(argv: readonly string[], spec: F): Parsed<F> {
  const positionals: string[] = [];
  const flags: Record<string, unknown> = {};
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--') {
      positionals.push(...argv.slice(i + 1));
      break;
    }
    if (!a.startsWith('--') || a === '-') {
      positionals.push(a);
      continue;
    }
    const eq = a.indexOf('=');
    const name = eq > 0 ? a.slice(2, eq) : a.slice(2);
    const kind = spec[name];
    if (!kind) throw new UsageError(`unknown option --${name}`);
    if (kind === 'switch') {
      flags[name] = eq > 0 ? a.slice(eq + 1) : true;
      continue;
    }
    if (kind === 'boolean') {
      if (eq > 0) throw new UsageError(`--${name} takes no value`);
      flags[name] = true;
      continue;
    }
    const value = eq > 0 ? a.slice(eq + 1) : argv[++i];
    if (value === undefined) throw new UsageError(`--${name} needs a value`);
    if (kind === 'strings') ((flags[name] ??= []) as string[]).push(value);
    else flags[name] = value;
  }
  return { positionals, flags: flags as Parsed<F>['flags'] };
}

/** `--why-not` (every miss) or `--why-not=grouped` (consecutive alike misses as one entry). */
export function whyNotFlag(v: true | string | undefined): boolean | 'grouped' {
  if (v === undefined) return false;
  if (v === true) return true;
  if (v === 'grouped') return 'grouped';
  throw new UsageError(`--why-not takes no value (every miss) or =grouped, not '${v}'`);
}
