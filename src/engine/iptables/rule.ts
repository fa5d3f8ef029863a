/**
 * Turns the words of one rule specification (`-s … -p tcp -m tcp --dport 80 -j DNAT --to-destination …`)
 * into the model: the fixed IP header checks, the match modules with compiled specs, and the target. It
 * follows iptables' own option handling (iptables/xshared.c, `command_default`): an option belongs to the
 * most recent module that knows it, `-p tcp` loads the tcp match implicitly for `--dport`, and `!` negates
 * the next option.
 *
 * This is the parser's hot loop (a 320k-rule dump runs it 320k times), so it reuses one parser object and
 * allocates only what the rule keeps.
 */
import type { DiagnosticCode, Severity } from '../diagnostics.ts';
import { type Family, type Net, parseIPv4Number, parseNet } from '../net/addr.ts';
import { protoNumber } from '../net/proto.ts';
import { findMatch } from '../matches/registry.ts';
import { unknownModule } from '../matches/unknown-module.ts';
import type { CompileContext, MatchModule, OptionSpec, ParsedOption } from '../matches/types.ts';
import { STANDARD_TARGETS, TARGETS } from '../targets/registry.ts';
import type { TargetModule } from '../targets/types.ts';
import type { IfacePattern, IpMatch, MatchInstance, Negatable } from '../model.ts';
import type { TokenBuffer } from './tokenize.ts';

type Core = 'src' | 'dst' | 'proto' | 'in' | 'out' | 'frag' | 'match' | 'jump' | 'goto' | 'counters' | 'v4' | 'v6';

const CORE = new Map<string, Core>(
  Object.entries({
    '-s': 'src',
    '--source': 'src',
    '--src': 'src',
    '-d': 'dst',
    '--destination': 'dst',
    '--dst': 'dst',
    '-p': 'proto',
    '--protocol': 'proto',
    '-i': 'in',
    '--in-interface': 'in',
    '-o': 'out',
    '--out-interface': 'out',
    '-f': 'frag',
    '--fragment': 'frag',
    '-m': 'match',
    '--match': 'match',
    '-j': 'jump',
    '--jump': 'jump',
    '-g': 'goto',
    '--goto': 'goto',
    '-c': 'counters',
    '--set-counters': 'counters',
    '-4': 'v4',
    '--ipv4': 'v4',
    '-6': 'v6',
    '--ipv6': 'v6',
  } as Record<string, Core>),
);

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

/** A `-j`/`-g` as written; resolved to a verdict, chain or extension once the table is complete. */
export interface PendingTarget {
  readonly kind: 'jump' | 'goto';
  readonly name: string;
  readonly module: TargetModule<unknown> | null;
  /** Replaced, never pushed to, while the rule is read (`withOption`): a list of its own size. */
  options: ParsedOption[];
  readonly start: number;
  readonly end: number;
  readonly line: number;
}

export interface ParsedRuleSpec {
  readonly ip: IpMatch;
  readonly matches: MatchInstance[];
  readonly target: PendingTarget | null;
  readonly comment: string | null;
  readonly counters: { packets: string; bytes: string } | null;
}

export type Reporter = (
  code: DiagnosticCode,
  severity: Severity,
  message: string,
  line: number,
  start: number,
  end: number,
) => void;

interface Slot {
  readonly module: MatchModule<unknown>;
  readonly explicit: boolean;
  /** Replaced, never pushed to, while the rule is read (`withOption`). */
  options: ParsedOption[];
  readonly known: boolean;
}

/** Something that collects options: a match module's slot or the target. */
type OptionOwner = { options: ParsedOption[] };

/**
 * `list` with `o` added, as a new list of exactly that size: a rule has a few options per module, and a
 * pushed-to `[]` takes room for 17 (152 bytes of garbage, or kept by the compiled rule).
 */
function withOption(list: readonly ParsedOption[], o: ParsedOption): ParsedOption[] {
  if (list.length === 0) return [o];
  const out = new Array<ParsedOption>(list.length + 1);
  for (let k = 0; k < list.length; k++) out[k] = list[k]!;
  out[list.length] = o;
  return out;
}

const EMPTY_IP: IpMatch = Object.freeze({});

function parseAddrArg(text: string, family: Family): Net | null {
  // Fast path for the `a.b.c.d/nn` and `a.b.c.d` of IPv4 dumps.
  if (family === 4) {
    const slash = text.indexOf('/');
    const end = slash < 0 ? text.length : slash;
    const n = parseIPv4Number(text, 0, end);
    if (n >= 0) {
      let prefix = 32;
      if (slash >= 0) {
        const len = text.length - slash - 1;
        const c1 = text.charCodeAt(slash + 1) - 48;
        const c2 = len === 2 ? text.charCodeAt(slash + 2) - 48 : 0;
        if (len < 1 || len > 2 || c1 < 0 || c1 > 9 || c2 < 0 || c2 > 9) return parseNet(text);
        prefix = len === 2 ? c1 * 10 + c2 : c1;
        if (prefix > 32) return null;
      }
      const mask = prefix === 0 ? 0 : (0xffffffff << (32 - prefix)) >>> 0;
      return { v: 4, n: (n & mask) >>> 0, mask, prefix };
    }
  }
  return parseNet(text);
}

type MutableIp = { -readonly [K in keyof IpMatch]: IpMatch[K] };

export class RuleSpecParser implements CompileContext {
  family: Family = 4;
  proto: number | null = null;
  private tok!: TokenBuffer;
  private line = 0;
  private from = 0;
  private slot: Slot | null = null;
  // The rule being read (reset by `parse`).
  private ip: MutableIp | null = null;
  /** The match modules of the rule being read: the first `nSlots` (one list for every rule: no garbage list per rule). */
  private readonly slots: Slot[] = [];
  private nSlots = 0;
  private target: PendingTarget | null = null;
  private counters: ParsedRuleSpec['counters'] = null;
  private negStart = -1;

  constructor(private readonly reportFn: Reporter) {}

  /** CompileContext.report, for match modules compiling their options. */
  report(
    option: ParsedOption | null,
    code: Parameters<CompileContext['report']>[1],
    message: string,
    severity: 'error' | 'warning' = 'error',
  ): void {
    if (option) this.reportFn(code, severity, message, this.line, option.start, option.end);
    else {
      const mod = this.slot ? `-m ${this.slot.module.name}: ` : '';
      this.reportFn(
        code,
        severity,
        `${mod}${message}`,
        this.line,
        this.tok.start[this.from] ?? 0,
        this.tok.end[this.tok.count - 1] ?? 0,
      );
    }
  }

  private err(code: DiagnosticCode, message: string, i: number, j = i, severity: Severity = 'error'): void {
    const n = this.tok.count;
    this.reportFn(
      code,
      severity,
      message,
      this.line,
      this.tok.start[Math.min(i, n - 1)]!,
      this.tok.end[Math.min(j, n - 1)]!,
    );
  }

  /** Reads words `from`… of `tok` (one rule specification) and compiles its match modules. */
  parse(tok: TokenBuffer, from: number, line: number, family: Family): ParsedRuleSpec {
    this.tok = tok;
    this.line = line;
    this.from = from;
    this.family = family;
    this.ip = null;
    this.nSlots = 0;
    this.target = null;
    this.counters = null;
    let negate = false;
    const n = tok.count;
    const text = tok.text;
    for (let i = from; i < n; i++) {
      const word = text[i]!;
      if (word === '!') {
        if (negate) this.err('invalid-negation', `'!' given twice`, i);
        negate = true;
        this.negStart = i;
        continue;
      }
      const dash = word.charCodeAt(0) === 45;
      const core = dash ? CORE.get(word) : undefined;
      if (core !== undefined) i = this.coreOption(core, i, negate);
      else if (dash && word.length > 1) i = this.extensionOption(i, negate);
      else {
        // A stray word leaves a pending '!' for the next option, as before.
        this.err('unknown-option', `unexpected word '${word}'`, i);
        continue;
      }
      negate = false;
    }
    if (negate) this.err('invalid-negation', `'!' at the end of the rule negates nothing`, this.negStart);
    return this.compileMatches();
  }

  /** One of iptables' own options (`-s -d -p -i -o -f -m -j -g -c -4 -6`) at word i; returns its last word. */
  private coreOption(core: Core, i: number, neg: boolean): number {
    const word = this.tok.text[i]!;
    if (i + 1 >= this.tok.count && core !== 'frag' && core !== 'v4' && core !== 'v6') {
      this.err('missing-argument', `${word} needs a value`, i);
      return i;
    }
    switch (core) {
      case 'src':
      case 'dst':
        return this.address(core, i, neg);
      case 'proto':
        return this.protocol(i, neg);
      case 'in':
      case 'out':
        return this.iface(core, i, neg);
      case 'frag':
        if (this.family === 6) this.err('unknown-option', `-f does not exist in ip6tables (use -m frag)`, i);
        else (this.ip ??= {}).fragment = { negated: neg, value: true };
        return i;
      case 'match':
        return this.loadMatch(i, neg);
      case 'jump':
      case 'goto':
        return this.setTarget(core, i, neg);
      case 'counters': {
        const text = this.tok.text;
        if (i + 2 >= this.tok.count) this.err('missing-argument', `${word} needs packets and bytes`, i);
        else this.counters = { packets: text[i + 1]!, bytes: text[i + 2]! };
        return i + 2;
      }
      case 'v4':
      case 'v6':
        // iptables-restore skips a rule meant for the other family.
        if ((core === 'v4' ? 4 : 6) !== this.family)
          this.err('family-mismatch', `rule marked ${word} in an IPv${this.family} ruleset`, i, i, 'warning');
        return i;
    }
  }

  /** `-s`/`-d` (and the deprecated `-s ! addr`). */
  private address(core: 'src' | 'dst', i: number, neg: boolean): number {
    const text = this.tok.text;
    const word = text[i]!;
    const family = this.family;
    let argIdx = i + 1;
    let value = text[argIdx]!;
    let negated = neg;
    if (value === '!' && i + 2 < this.tok.count) {
      // `-s ! 1.2.3.4` is the old negation syntax; iptables still accepts it with a warning.
      negated = true;
      argIdx = i + 2;
      value = text[argIdx]!;
      this.err('deprecated-syntax', `'${word} ! addr' is deprecated: write '! ${word} addr'`, i, argIdx, 'warning');
    }
    const net = parseAddrArg(value, family);
    if (!net)
      this.err(
        'bad-address',
        value.includes(',')
          ? `'${value}': address lists expand into one rule per address; a dump has one address per rule`
          : `'${value}' is not an IPv${family} address or network`,
        argIdx,
      );
    else if (net.v !== family)
      this.err('family-mismatch', `'${value}' is an IPv${net.v} address in an IPv${family} ruleset`, argIdx);
    else (this.ip ??= {})[core] = { negated, value: net };
    return argIdx;
  }

  /** `-p NAME|NUMBER` (`-p all`, i.e. 0, checks nothing). */
  private protocol(i: number, neg: boolean): number {
    const arg = this.tok.text[i + 1]!;
    const p = protoNumber(arg);
    if (p === null) this.err('bad-argument', `'${arg}' is not a protocol name or number`, i + 1);
    else if (p !== 0 || neg) {
      const ip = (this.ip ??= {});
      ip.proto = { negated: neg, value: p };
      ip.protoName = arg;
    }
    return i + 1;
  }

  /** `-i`/`-o` with an interface name (`eth+` a prefix). */
  private iface(core: 'in' | 'out', i: number, neg: boolean): number {
    const arg = this.tok.text[i + 1]!;
    if (arg.length > 15 || arg.length === 0 || arg.includes('/') || arg.includes(' '))
      this.err(
        'bad-argument',
        `'${arg}' is not a valid interface name (at most 15 characters, no '/' or spaces)`,
        i + 1,
      );
    const v: Negatable<IfacePattern> = { negated: neg, value: { name: arg, wildcard: arg.endsWith('+') } };
    const ip = (this.ip ??= {});
    if (core === 'in') ip.inIface = v;
    else ip.outIface = v;
    return i + 1;
  }

  /** `-m NAME`: loads a match module (an unmodelled one keeps its words and answers unknown). */
  private loadMatch(i: number, neg: boolean): number {
    const arg = this.tok.text[i + 1]!;
    if (neg) this.err('invalid-negation', `'!' cannot negate -m`, this.negStart, i);
    const mod = findMatch(arg);
    if (!mod)
      this.err(
        'unknown-module',
        `match module '${arg}' is not modelled: traces through this rule are marked unknown`,
        i,
        i + 1,
        'warning',
      );
    else if (mod.families && !mod.families.includes(this.family))
      this.err('family-mismatch', `match '${arg}' does not exist for IPv${this.family}`, i, i + 1);
    this.slots[this.nSlots++] = {
      module: mod ?? unknownModule(arg),
      explicit: true,
      options: [],
      known: mod !== undefined,
    };
    return i + 1;
  }

  /** `-j NAME` / `-g CHAIN`. */
  private setTarget(core: 'jump' | 'goto', i: number, neg: boolean): number {
    const tok = this.tok;
    const word = tok.text[i]!;
    const arg = tok.text[i + 1]!;
    if (neg) this.err('invalid-negation', `'!' cannot negate ${word}`, this.negStart, i);
    if (this.target) this.err('bad-argument', `a rule has one target; '${word} ${arg}' repeats it`, i, i + 1);
    this.target = {
      kind: core,
      name: arg,
      module: core === 'jump' ? (TARGETS.get(arg) ?? null) : null,
      options: [],
      start: tok.start[i]!,
      end: tok.end[i + 1]!,
      line: this.line,
    };
    return i + 1;
  }

  /**
   * An option of the target or of a match module: the target's own options first, then the latest module
   * that knows it, then the implicit match of `-p tcp|udp|sctp|icmp|icmp6`; returns its last word.
   */
  private extensionOption(i: number, neg: boolean): number {
    const word = this.tok.text[i]!;
    const target = this.target;
    if (target?.module) {
      const spec = optionTable(target.module).get(word);
      if (spec) return this.collect(i, spec, neg, target);
    }
    const found = this.matchOption(word);
    if (found) return this.collect(i, found.spec, neg, found.slot);
    if (target && !target.module && !STANDARD_TARGETS.has(target.name)) {
      // A target we do not model (or a chain, which resolution will check): keep the words as written.
      return this.collect(i, null, neg, target);
    }
    const slots = this.slots.slice(0, this.nSlots);
    const last = slots[slots.length - 1];
    if (last && !last.known && !target) return this.collect(i, null, neg, last);
    this.err(
      'unknown-option',
      target
        ? `'${word}' is not an option of ${target.name}`
        : slots.length
          ? `'${word}' is not an option of ${slots.map(s => `-m ${s.module.name}`).join(', ')}`
          : `unknown option '${word}'`,
      i,
    );
    // Skip its probable arguments so one typo gives one diagnostic.
    const text = this.tok.text;
    while (i + 1 < this.tok.count && text[i + 1]!.charCodeAt(0) !== 45 && text[i + 1] !== '!') i++;
    return i;
  }

  /** The loaded (or implicitly loaded) match module that takes option `word`. */
  private matchOption(word: string): { slot: Slot; spec: OptionSpec } | null {
    const slots = this.slots;
    for (let k = this.nSlots - 1; k >= 0; k--) {
      const o = optionTable(slots[k]!.module).get(word);
      if (o) return { slot: slots[k]!, spec: o };
    }
    const ip = this.ip;
    if (!ip?.proto || ip.proto.negated) return null;
    const implicitName = IMPLICIT[ip.proto.value];
    const mod = implicitName ? findMatch(implicitName) : undefined;
    const o = mod ? optionTable(mod).get(word) : undefined;
    if (!mod || !o) return null;
    const slot: Slot = { module: mod, explicit: false, options: [], known: true };
    slots[this.nSlots++] = slot;
    return { slot, spec: o };
  }

  /** Compiles each loaded module's options, in load order. */
  private compileMatches(): ParsedRuleSpec {
    const ip = this.ip;
    const matches: MatchInstance[] = new Array(this.nSlots);
    let comment: string | null = null;
    this.proto = ip?.proto && !ip.proto.negated ? ip.proto.value : null;
    for (let k = 0; k < this.nSlots; k++) {
      const s = this.slots[k]!;
      this.slot = s;
      const spec = s.module.compile(s.options, this);
      if (comment === null && s.module.name === 'comment') comment = (spec as { text: string }).text;
      matches[k] = { module: s.module, spec, explicit: s.explicit, options: s.options };
    }
    this.slot = null;
    return { ip: ip ?? EMPTY_IP, matches, target: this.target, comment, counters: this.counters };
  }

  private collect(i: number, spec: OptionSpec | null, neg: boolean, owner: OptionOwner): number {
    const tok = this.tok;
    const n = tok.count;
    const word = tok.text[i]!;
    let negated = neg;
    if (neg && spec && !spec.negatable) this.err('invalid-negation', `${word} cannot be negated with '!'`, i);
    let j = i + 1;
    if (spec?.negatable && spec.args > 0 && j < n && tok.text[j] === '!') {
      negated = true;
      this.err('deprecated-syntax', `'${word} ! value' is deprecated: write '! ${word} value'`, i, j, 'warning');
      j++;
    }
    const first = j;
    if (spec) {
      for (let k = 0; k < spec.args; k++) {
        if (j >= n || (tok.text[j] === '!' && tok.quoted[j] === 0)) {
          this.err('missing-argument', `${word} needs ${spec.args} value${spec.args > 1 ? 's' : ''}`, i);
          break;
        }
        j++;
      }
    } else {
      // Unknown module or target: take the words up to the next option.
      while (
        j < n &&
        !(tok.text[j]!.charCodeAt(0) === 45 && tok.text[j]!.length > 1 && tok.quoted[j] === 0) &&
        tok.text[j] !== '!'
      )
        j++;
    }
    owner.options = withOption(owner.options, {
      name: spec?.name ?? word,
      negated,
      // The words taken, as a list of their own size (a pushed-to list would be garbage of 17 slots).
      args: j > first ? (tok.text.slice(first, j) as string[]) : [], // words before `count`: all defined
      line: this.line,
      start: tok.start[i]!,
      end: tok.end[Math.max(i, j - 1)]!,
    });
    return j - 1;
  }
}
