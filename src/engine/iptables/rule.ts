/**
 * Turns the words of one rule specification (`-s … -p tcp -m tcp --dport 80 -j DNAT --to-destination …`)
 * into the model: the fixed IP header checks, the match modules with compiled specs, and the target. It
 * follows iptables' own option handling (iptables/xshared.c, `command_default`): an option belongs to the
 * most recent module that knows it, `-p tcp` loads the tcp match implicitly for `--dport`, and `!` negates
 * the next option.
 */
import type { Diagnostic, DiagnosticCode, Range, Severity } from '../diagnostics.ts';
import { type Family, type Net, parseIPv4Number, parseNet } from '../net/addr.ts';
import { protoNumber } from '../eval/packet.ts';
import { findMatch } from '../matches/registry.ts';
import { unknownModule } from '../matches/unknown-module.ts';
import type { CompileContext, MatchModule, OptionSpec, ParsedOption } from '../matches/types.ts';
import { optionRange } from '../matches/types.ts';
import { STANDARD_TARGETS, TARGETS } from '../targets/registry.ts';
import type { TargetModule } from '../targets/types.ts';
import type { IfacePattern, IpMatch, MatchInstance, Negatable, StandardVerdict } from '../model.ts';
import type { TokenBuffer } from './tokenize.ts';

type Core = 'src' | 'dst' | 'proto' | 'in' | 'out' | 'frag' | 'match' | 'jump' | 'goto' | 'counters' | 'v4' | 'v6';

const CORE: Record<string, Core> = {
  '-s': 'src', '--source': 'src', '--src': 'src', '-d': 'dst', '--destination': 'dst', '--dst': 'dst',
  '-p': 'proto', '--protocol': 'proto', '-i': 'in', '--in-interface': 'in', '-o': 'out', '--out-interface': 'out',
  '-f': 'frag', '--fragment': 'frag', '-m': 'match', '--match': 'match', '-j': 'jump', '--jump': 'jump',
  '-g': 'goto', '--goto': 'goto', '-c': 'counters', '--set-counters': 'counters', '-4': 'v4', '--ipv4': 'v4',
  '-6': 'v6', '--ipv6': 'v6',
};

/** The options a module or target accepts, by every spelling, mapped to the canonical spec. */
const optionTables = new WeakMap<object, Map<string, OptionSpec>>();
function optionTable(mod: { options: readonly OptionSpec[] }): Map<string, OptionSpec> {
  let t = optionTables.get(mod);
  if (!t) {
    t = new Map();
    for (const o of mod.options) {
      t.set(o.name, o);
      for (const a of o.aliases ?? []) t.set(a, o);
    }
    optionTables.set(mod, t);
  }
  return t;
}

const IMPLICIT: Record<number, string> = { 6: 'tcp', 17: 'udp', 132: 'sctp', 1: 'icmp', 58: 'icmp6' };

export interface PendingTarget {
  readonly kind: 'jump' | 'goto';
  readonly name: string;
  readonly module: TargetModule<unknown> | null;
  readonly options: ParsedOption[];
  readonly range: Range;
}

export interface ParsedRuleSpec {
  readonly ip: IpMatch;
  readonly matches: MatchInstance[];
  readonly target: PendingTarget | null;
  readonly comment: string | null;
  readonly counters: { packets: string; bytes: string } | null;
}

export interface RuleSpecContext {
  readonly family: Family;
  readonly line: number;
  report(code: DiagnosticCode, severity: Severity, message: string, start: number, end: number): void;
}

interface ModuleSlot {
  readonly module: MatchModule<unknown>;
  readonly explicit: boolean;
  readonly options: ParsedOption[];
  readonly known: boolean;
}

function parseAddrArg(text: string, family: Family): Net | null {
  // Fast path for the common `a.b.c.d/nn` of IPv4 dumps.
  if (family === 4) {
    const slash = text.indexOf('/');
    const end = slash < 0 ? text.length : slash;
    const n = parseIPv4Number(text, 0, end);
    if (n >= 0 && (slash < 0 || (text.length - slash <= 3 && /^\/\d{1,2}$/.test(text.slice(slash))))) {
      const prefix = slash < 0 ? 32 : Number(text.slice(slash + 1));
      if (prefix <= 32) {
        const mask = prefix === 0 ? 0 : (0xffffffff << (32 - prefix)) >>> 0;
        return { v: 4, n: (n & mask) >>> 0, mask, prefix };
      }
      return null;
    }
  }
  return parseNet(text);
}

export function parseRuleSpec(tok: TokenBuffer, from: number, ctx: RuleSpecContext): ParsedRuleSpec {
  const ip: { -readonly [K in keyof IpMatch]: IpMatch[K] } = {};
  const slots: ModuleSlot[] = [];
  let target: PendingTarget | null = null;
  let targetOptions: ParsedOption[] = [];
  let counters: ParsedRuleSpec['counters'] = null;
  let negate = false;
  let negStart = -1;
  const n = tok.count;
  const err = (code: DiagnosticCode, message: string, i: number, j = i, severity: Severity = 'error') =>
    ctx.report(code, severity, message, tok.start[i]!, tok.end[Math.min(j, n - 1)]!);

  const takeArg = (i: number, what: string): string | null => {
    if (i + 1 >= n) {
      err('missing-argument', `${tok.text[i]} needs ${what}`, i);
      return null;
    }
    return tok.text[i + 1]!;
  };

  for (let i = from; i < n; i++) {
    const word = tok.text[i]!;
    if (word === '!') {
      if (negate) err('invalid-negation', `'!' given twice`, i);
      negate = true;
      negStart = i;
      continue;
    }
    const core = CORE[word];
    if (core !== undefined) {
      const neg = negate;
      negate = false;
      switch (core) {
        case 'src':
        case 'dst': {
          let arg = takeArg(i, 'an address');
          if (arg === null) break;
          let argIdx = i + 1;
          let negated = neg;
          if (arg === '!' && i + 2 < n) {
            // `-s ! 1.2.3.4` is the old negation syntax; iptables still accepts it with a warning.
            negated = true;
            argIdx = i + 2;
            arg = tok.text[argIdx]!;
            err('deprecated-syntax', `'${word} ! addr' is deprecated: write '! ${word} addr'`, i, argIdx, 'warning');
          }
          const net = parseAddrArg(arg, ctx.family);
          if (!net) err('bad-address', arg.includes(',') ? `'${arg}': address lists expand into one rule per address; a dump has one address per rule` : `'${arg}' is not an IPv${ctx.family} address or network`, argIdx);
          else if (net.v !== ctx.family) err('family-mismatch', `'${arg}' is an IPv${net.v} address in an IPv${ctx.family} ruleset`, argIdx);
          else ip[core] = { negated, value: net };
          i = argIdx;
          break;
        }
        case 'proto': {
          const arg = takeArg(i, 'a protocol');
          if (arg === null) break;
          const p = protoNumber(arg);
          if (p === null) err('bad-argument', `'${arg}' is not a protocol name or number`, i + 1);
          else if (p !== 0 || neg) {
            ip.proto = { negated: neg, value: p };
            ip.protoName = arg;
          }
          i++;
          break;
        }
        case 'in':
        case 'out': {
          const arg = takeArg(i, 'an interface name');
          if (arg === null) break;
          if (arg.length > 15 || arg.length === 0 || /[\s/]/.test(arg)) err('bad-argument', `'${arg}' is not a valid interface name (at most 15 characters, no '/' or spaces)`, i + 1);
          const value: IfacePattern = { name: arg, wildcard: arg.endsWith('+') };
          const v: Negatable<IfacePattern> = { negated: neg, value };
          if (core === 'in') ip.inIface = v;
          else ip.outIface = v;
          i++;
          break;
        }
        case 'frag':
          if (ctx.family === 6) err('unknown-option', `-f does not exist in ip6tables (use -m frag)`, i);
          else ip.fragment = { negated: neg, value: true };
          break;
        case 'match': {
          if (neg) err('invalid-negation', `'!' cannot negate -m`, negStart, i);
          const name = takeArg(i, 'a module name');
          if (name === null) break;
          const mod = findMatch(name);
          if (!mod) err('unknown-module', `match module '${name}' is not modelled: traces through this rule are marked unknown`, i, i + 1, 'warning');
          else if (mod.families && !mod.families.includes(ctx.family)) err('family-mismatch', `match '${name}' does not exist for IPv${ctx.family}`, i, i + 1);
          slots.push({ module: mod ?? unknownModule(name), explicit: true, options: [], known: mod !== undefined });
          i++;
          break;
        }
        case 'jump':
        case 'goto': {
          if (neg) err('invalid-negation', `'!' cannot negate ${word}`, negStart, i);
          const name = takeArg(i, 'a target or chain');
          if (name === null) break;
          if (target) err('bad-argument', `a rule has one target; '${word} ${name}' repeats it`, i, i + 1);
          const module = core === 'jump' ? (TARGETS.get(name) ?? null) : null;
          targetOptions = [];
          target = {
            kind: core,
            name,
            module,
            options: targetOptions,
            range: { start: { line: ctx.line, character: tok.start[i]! }, end: { line: ctx.line, character: tok.end[i + 1]! } },
          };
          i++;
          break;
        }
        case 'counters': {
          if (i + 2 >= n) {
            err('missing-argument', `${word} needs packets and bytes`, i);
            i = n;
            break;
          }
          counters = { packets: tok.text[i + 1]!, bytes: tok.text[i + 2]! };
          i += 2;
          break;
        }
        case 'v4':
        case 'v6':
          if ((core === 'v4' ? 4 : 6) !== ctx.family) {
            // iptables-restore skips a rule meant for the other family.
            err('family-mismatch', `rule marked ${word} in an IPv${ctx.family} ruleset`, i, i, 'warning');
          }
          break;
      }
      continue;
    }

    if (word.startsWith('-') && word.length > 1) {
      const neg = negate;
      negate = false;
      // Target options follow the target.
      if (target?.module) {
        const spec = optionTable(target.module).get(word);
        if (spec) {
          i = collectOption(tok, i, spec, neg, ctx, targetOptions, err);
          continue;
        }
      }
      // Match options: the latest module that knows the option, then an implicit protocol match.
      let slot: ModuleSlot | undefined;
      let spec: OptionSpec | undefined;
      for (let k = slots.length - 1; k >= 0 && !spec; k--) {
        const s = slots[k]!;
        const o = optionTable(s.module).get(word);
        if (o) {
          slot = s;
          spec = o;
        }
      }
      if (!spec && ip.proto && !ip.proto.negated) {
        const implicitName = IMPLICIT[ip.proto.value];
        const mod = implicitName ? findMatch(implicitName) : undefined;
        const o = mod ? optionTable(mod).get(word) : undefined;
        if (mod && o) {
          slot = { module: mod, explicit: false, options: [], known: true };
          slots.push(slot);
          spec = o;
        }
      }
      if (!spec) {
        if (target && !target.module && !STANDARD_TARGETS.has(target.name)) {
          // A target we do not model (or a chain, which resolution will check): keep the words as written.
          i = collectOption(tok, i, null, neg, ctx, targetOptions, err);
          continue;
        }
        const last = slots[slots.length - 1];
        if (last && !last.known && !target) {
          i = collectOption(tok, i, null, neg, ctx, last.options, err);
          continue;
        }
        err('unknown-option', target ? `'${word}' is not an option of ${target.name}` : slots.length ? `'${word}' is not an option of ${slots.map((s) => `-m ${s.module.name}`).join(', ')}` : `unknown option '${word}'`, i);
        // Skip its probable arguments so one typo gives one diagnostic.
        while (i + 1 < n && !tok.text[i + 1]!.startsWith('-') && tok.text[i + 1] !== '!') i++;
        continue;
      }
      i = collectOption(tok, i, spec, neg, ctx, slot!.options, err);
      continue;
    }
    err('unknown-option', `unexpected word '${word}'`, i);
  }
  if (negate) err('invalid-negation', `'!' at the end of the rule negates nothing`, negStart);

  const matches: MatchInstance[] = [];
  let comment: string | null = null;
  const proto = ip.proto && !ip.proto.negated ? ip.proto.value : null;
  for (const s of slots) {
    const cctx: CompileContext = {
      family: ctx.family,
      proto,
      report(option, code, message, severity = 'error') {
        if (option) ctx.report(code, severity, message, option.start, option.end);
        else ctx.report(code, severity, `-m ${s.module.name}: ${message}`, tok.start[from] ?? 0, tok.end[n - 1] ?? 0);
      },
    };
    const spec = s.module.compile(s.options, cctx);
    if (s.module.name === 'comment' && comment === null) comment = (spec as { text: string }).text;
    matches.push({ module: s.module, spec, explicit: s.explicit, options: s.options });
  }
  return { ip, matches, target, comment, counters };
}

function collectOption(
  tok: TokenBuffer,
  i: number,
  spec: OptionSpec | null,
  neg: boolean,
  ctx: RuleSpecContext,
  into: ParsedOption[],
  err: (code: DiagnosticCode, message: string, i: number, j?: number, severity?: Severity) => void,
): number {
  const n = tok.count;
  const word = tok.text[i]!;
  let negated = neg;
  if (neg && spec && !spec.negatable) err('invalid-negation', `${word} cannot be negated with '!'`, i);
  let j = i + 1;
  if (spec?.negatable && j < n && tok.text[j] === '!' && spec.args > 0) {
    negated = true;
    err('deprecated-syntax', `'${word} ! value' is deprecated: write '! ${word} value'`, i, j, 'warning');
    j++;
  }
  const args: string[] = [];
  if (spec) {
    for (let k = 0; k < spec.args; k++) {
      if (j >= n || (tok.text[j] === '!' && tok.quoted[j] === 0)) {
        err('missing-argument', `${word} needs ${spec.args} value${spec.args > 1 ? 's' : ''}`, i);
        break;
      }
      args.push(tok.text[j]!);
      j++;
    }
  } else {
    // Unknown module or target: take the words up to the next option.
    while (j < n && !(tok.text[j]!.startsWith('-') && tok.text[j]!.length > 1 && tok.quoted[j] === 0) && tok.text[j] !== '!') {
      args.push(tok.text[j]!);
      j++;
    }
  }
  const lastIdx = Math.max(i, j - 1);
  into.push({ name: spec?.name ?? word, negated, args, line: ctx.line, start: tok.start[i]!, end: tok.end[lastIdx]! });
  return j - 1;
}

export { optionRange };
export type { StandardVerdict };
