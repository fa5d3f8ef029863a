/**
 * Where names stand in nftables text (`nft list ruleset` output and `nft -f` scripts): chain names
 * (`chain NAME {`, `add chain ip t NAME`, `add rule ip t NAME …`, `jump NAME`, `goto NAME`, verdict-map data),
 * set and map names (`set NAME {`, `map NAME {`, `add set|map|element ip t NAME`, `@NAME`) and `define`s
 * (`define NAME =`, `$NAME`), each with its range and the table it belongs to (`family name`; nft resolves
 * chain and set names inside one table, defines are global). Read from the tokens of the engine's nft lexer
 * (the one the parser uses), not from the AST, because the AST has defines substituted and keeps one range
 * per node, not per name. Work is one pass over the tokens.
 */
import { NftLexer, type NftToken, type Range } from '../../engine/api.ts';

export type NftNameKind = 'chain' | 'set' | 'define';

/** How a name stands: declared, jumped to, looked up (`@s`), substituted (`$d`), or named by a command. */
export type NftNameRole = 'declaration' | 'jump' | 'goto' | 'setref' | 'variable' | 'command';

export interface NftName {
  readonly kind: NftNameKind;
  readonly name: string;
  /** `family table` for chains and sets; '' for defines. */
  readonly scope: string;
  readonly range: Range;
  readonly role: NftNameRole;
}

const FAMILIES = new Set(['ip', 'ip6', 'inet', 'arp', 'bridge', 'netdev']);
const COMMANDS = new Set(['add', 'create', 'insert', 'replace', 'delete', 'destroy', 'flush', 'list', 'reset']);
/** The raw payload bases (`@nh,16,16`), which are not set references. */
const RAW_BASES = new Set(['ll', 'nh', 'th', 'ih']);

interface Block {
  readonly kind: 'table' | 'chain' | 'set' | 'other';
  readonly scope: string;
}

const KINDS: readonly NftNameKind[] = ['chain', 'set', 'define'];
const ROLES: readonly NftNameRole[] = ['declaration', 'jump', 'goto', 'setref', 'variable', 'command'];
/** Numbers kept per name: kind, role, scope, start line and character, end line and character. */
const FIELDS = 7;

/**
 * The names of a file, in file order. Kept as numbers (kind, role, scope, range) and one shared string per
 * distinct name; the `NftName` objects are made when asked for: kube-proxy's 101 MB script has 1.3M names,
 * which as objects with ranges held 270 MB of the editor's engine worker.
 */
export class NftNames {
  private nums = new Int32Array(FIELDS * 64);
  private texts: string[] = [];
  private readonly scopes: string[] = [];
  private readonly scopeIds = new Map<string, number>();
  private readonly shared = new Map<string, string>();
  /** Start lines never decrease in the order names were added (the scan reads tokens in order). */
  private inLineOrder = true;

  get size(): number {
    return this.texts.length;
  }

  add(n: NftName): void {
    const i = this.texts.length;
    if ((i + 1) * FIELDS > this.nums.length) {
      const grown = new Int32Array(this.nums.length * 2);
      grown.set(this.nums);
      this.nums = grown;
    }
    let scope = this.scopeIds.get(n.scope);
    if (scope === undefined) {
      scope = this.scopes.length;
      this.scopes.push(n.scope);
      this.scopeIds.set(n.scope, scope);
    }
    const o = i * FIELDS;
    const a = this.nums;
    if (i > 0 && a[o - FIELDS + 3]! > n.range.start.line) this.inLineOrder = false;
    a[o] = KINDS.indexOf(n.kind);
    a[o + 1] = ROLES.indexOf(n.role);
    a[o + 2] = scope;
    a[o + 3] = n.range.start.line;
    a[o + 4] = n.range.start.character;
    a[o + 5] = n.range.end.line;
    a[o + 6] = n.range.end.character;
    let name = this.shared.get(n.name);
    if (name === undefined) this.shared.set(n.name, (name = n.name));
    this.texts.push(name);
  }

  /** The i-th name in file order. */
  get(i: number): NftName {
    const a = this.nums;
    const o = i * FIELDS;
    return {
      kind: KINDS[a[o]!]!,
      name: this.texts[i]!,
      scope: this.scopes[a[o + 2]!]!,
      range: { start: { line: a[o + 3]!, character: a[o + 4]! }, end: { line: a[o + 5]!, character: a[o + 6]! } },
      role: ROLES[a[o + 1]!]!,
    };
  }

  /** The name whose range holds the position (its end included, as editors place the cursor). */
  at(line: number, character: number): NftName | undefined {
    // Names are added in file order: the first one starting on the line, by binary search.
    const a = this.nums;
    let lo = 0;
    let hi = this.inLineOrder ? this.texts.length : 0;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (a[mid * FIELDS + 3]! < line) lo = mid + 1;
      else hi = mid;
    }
    for (let i = lo; i < this.texts.length && (a[i * FIELDS + 3] === line || !this.inLineOrder); i++)
      if (a[i * FIELDS + 3] === line && character >= a[i * FIELDS + 4]! && character <= a[i * FIELDS + 6]!)
        return this.get(i);
    return undefined;
  }

  /** Every occurrence of a name of this kind in this scope, in file order. */
  occurrences(kind: NftNameKind, scope: string, name: string): NftName[] {
    const k = KINDS.indexOf(kind);
    const sc = this.scopeIds.get(scope);
    const out: NftName[] = [];
    if (sc === undefined) return out;
    const a = this.nums;
    for (let i = 0; i < this.texts.length; i++)
      if (a[i * FIELDS] === k && a[i * FIELDS + 2] === sc && this.texts[i] === name) out.push(this.get(i));
    return out;
  }

  /** The first declaration, or (a script that names a chain only in commands) the first occurrence. */
  declaration(kind: NftNameKind, scope: string, name: string): NftName | undefined {
    const all = this.occurrences(kind, scope, name);
    return all.find(n => n.role === 'declaration') ?? undefined;
  }
}

/** A token's name and range: a word, or a quoted string without its quotes. */
function nameOf(t: NftToken): { name: string; range: Range } | null {
  if (t.kind === 'word') return { name: t.text, range: t.range };
  if (t.kind === 'string' && !t.unterminated)
    return {
      name: t.text,
      range: {
        start: { line: t.line, character: t.col + 1 },
        end: { line: t.endLine, character: t.endCol - 1 },
      },
    };
  return null;
}

/** Tokens by index, read from the lexer as they are asked for; the scan looks at most a few ahead. */
interface Tokens {
  at(i: number): NftToken | undefined;
}

/**
 * The lexer's tokens (handles left out) as a window that forgets what lies behind: holding every token
 * of kube-proxy's 43 MB script at once took 0.9 GB.
 */
class TokenWindow implements Tokens {
  private buf: NftToken[] = [];
  private base = 0;
  private read = 0;
  private done = false;

  constructor(
    private readonly lexer: InstanceType<typeof NftLexer>,
    private readonly maxTokens: number,
  ) {}

  at(i: number): NftToken | undefined {
    while (!this.done && i >= this.base + this.buf.length) {
      const t = this.lexer.next();
      if (t.kind === 'eof' || this.read >= this.maxTokens) this.done = true;
      else if (t.kind !== 'handle') {
        this.buf.push(t);
        this.read++;
      }
    }
    return i >= this.base ? this.buf[i - this.base] : undefined;
  }

  /** Tokens before `i` are not asked for again. */
  forget(i: number): void {
    if (i - this.base >= 4096) {
      this.buf = this.buf.slice(i - this.base);
      this.base = i;
    }
  }
}

/** Scans nftables text for names. Bounded: one pass, at most `maxTokens` tokens. */
export function scanNftNames(text: string, maxTokens = 5_000_000): NftNames {
  const names = new NftNames();
  const toks = new TokenWindow(new NftLexer(text), maxTokens);
  // One string per scope (`family table`), not one per command naming it.
  const scopes = new Map<string, string>();
  const intern = (sc: string): string => {
    const known = scopes.get(sc);
    if (known !== undefined) return known;
    scopes.set(sc, sc);
    return sc;
  };
  const stack: Block[] = [];
  /** The scope a script command set for the rest of its statement, and the depth it was set at. */
  let cmd = null as { scope: string; depth: number } | null;
  /** The block the next `{` opens (set by a header), or null for an anonymous one. */
  let pending: Block | null = null;
  let atStart = true;
  const scope = (): string => {
    for (let i = stack.length - 1; i >= 0; i--) if (stack[i]!.kind !== 'other') return stack[i]!.scope;
    if (cmd) return cmd.scope;
    return stack.length ? stack[stack.length - 1]!.scope : '';
  };
  const inside = (): Block['kind'] | null => (stack.length ? stack[stack.length - 1]!.kind : null);
  const push = (kind: NftNameKind, tok: NftToken | undefined, sc: string, role: NftNameRole): void => {
    const n = tok && nameOf(tok);
    if (n) names.add({ kind, name: n.name, scope: sc, range: n.range, role });
  };

  for (let i = 0; toks.at(i); i++) {
    toks.forget(i);
    const t = toks.at(i)!;
    if (t.kind === 'nl' || (t.kind === 'punct' && t.text === ';')) {
      if (cmd && stack.length <= cmd.depth) cmd = null;
      atStart = true;
      continue;
    }
    if (t.kind === 'punct' && t.text === '{') {
      stack.push(pending ?? { kind: 'other', scope: scope() });
      pending = null;
      atStart = true;
      continue;
    }
    if (t.kind === 'punct' && t.text === '}') {
      stack.pop();
      if (cmd && stack.length < cmd.depth) cmd = null;
      atStart = true;
      continue;
    }
    const start = atStart;
    atStart = false;
    if (t.kind === 'punct' && t.text === '$') {
      const n = toks.at(i + 1);
      if (n?.kind === 'word' && n.line === t.line && n.col === t.endCol) {
        names.add({
          kind: 'define',
          name: n.text,
          scope: '',
          range: { start: t.range.start, end: n.range.end },
          role: 'variable',
        });
        i++;
      }
      continue;
    }
    if (t.kind === 'punct' && t.text === '@') {
      const n = toks.at(i + 1);
      const after = toks.at(i + 2);
      if (n?.kind !== 'word' || n.line !== t.line || n.col !== t.endCol) continue;
      if (RAW_BASES.has(n.text) && after?.kind === 'punct' && after.text === ',') continue;
      push('set', n, scope(), 'setref');
      i++;
      continue;
    }
    if (t.kind !== 'word') continue;
    if (t.text === 'jump' || t.text === 'goto') {
      push('chain', toks.at(i + 1), scope(), t.text);
      i++;
      continue;
    }
    if (!start) continue;
    const where = inside();
    if (t.text === 'define' || t.text === 'redefine' || t.text === 'undefine') {
      if (where === null || where === 'other') {
        push('define', toks.at(i + 1), '', t.text === 'undefine' ? 'command' : 'declaration');
        i++;
      }
      continue;
    }
    if (t.text === 'table' && (where === null || where === 'other')) {
      const r = tableHeader(toks, i + 1, intern);
      pending = { kind: 'table', scope: r.scope };
      i = r.next - 1;
      continue;
    }
    if (where === 'table' && (t.text === 'chain' || t.text === 'set' || t.text === 'map')) {
      const kind = t.text === 'chain' ? 'chain' : 'set';
      const sc = scope();
      push(kind, toks.at(i + 1), sc, 'declaration');
      pending = { kind: kind === 'chain' ? 'chain' : 'set', scope: sc };
      i++;
      continue;
    }
    if (COMMANDS.has(t.text) && (where === null || where === 'other')) {
      const c = command(toks, i, names, stack.length, intern);
      i = c.last;
      if (c.cmd) cmd = c.cmd;
      pending = c.pending;
    }
  }
  return names;
}

/** `[family] name` after `table`: the scope and the index after it. */
function tableHeader(toks: Tokens, i: number, intern: (s: string) => string): { scope: string; next: number } {
  const a = toks.at(i);
  const b = toks.at(i + 1);
  if (a?.kind === 'word' && FAMILIES.has(a.text) && b && (b.kind === 'word' || b.kind === 'string'))
    return { scope: intern(`${a.text} ${b.text}`), next: i + 2 };
  if (a && (a.kind === 'word' || a.kind === 'string')) return { scope: intern(`ip ${a.text}`), next: i + 1 };
  return { scope: '', next: i };
}

/**
 * A script command at `i` (`add chain ip t NAME`, `add rule ip t CHAIN …`, `add element ip t SET { … }`):
 * records the names it carries and sets the scope for the rest of the statement. Returns the index of the
 * last token consumed.
 */
function command(
  toks: Tokens,
  i: number,
  names: NftNames,
  depth: number,
  intern: (s: string) => string,
): { last: number; cmd: { scope: string; depth: number } | null; pending: Block | null } {
  const verb = toks.at(i)!.text;
  const object = toks.at(i + 1);
  if (object?.kind !== 'word') return { last: i, cmd: null, pending: null };
  const declares = verb === 'add' || verb === 'create';
  const r = tableHeader(toks, i + 2, intern);
  if (!r.scope) return { last: i + 1, cmd: null, pending: null };
  const sc = r.scope;
  const name = toks.at(r.next);
  const add = (kind: NftNameKind, role: NftNameRole) => {
    const n = name && nameOf(name);
    if (n) names.add({ kind, name: n.name, scope: sc, range: n.range, role });
  };
  switch (object.text) {
    case 'table':
      return { last: r.next - 1, cmd: { scope: sc, depth }, pending: { kind: 'other', scope: sc } };
    case 'chain':
      add('chain', declares ? 'declaration' : 'command');
      return { last: r.next, cmd: { scope: sc, depth }, pending: { kind: 'other', scope: sc } };
    case 'set':
    case 'map':
      add('set', declares ? 'declaration' : 'command');
      return { last: r.next, cmd: { scope: sc, depth }, pending: { kind: 'other', scope: sc } };
    case 'rule':
      add('chain', 'command');
      return { last: r.next, cmd: { scope: sc, depth }, pending: null };
    case 'element':
      add('set', 'command');
      return { last: r.next, cmd: { scope: sc, depth }, pending: null };
    default:
      return { last: r.next - 1, cmd: { scope: sc, depth }, pending: null };
  }
}
