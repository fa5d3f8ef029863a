/**
 * iptables-restore's commands, one handler each (`-A -I -R -D -N -P -F -X -Z -E`, long spellings too), as
 * iptables/iptables-restore.c and iptables/xshared.c apply them to the table being read. A handler reports
 * what iptables-restore would refuse and goes on; none throws.
 */
import type { Chain, Rule, Table } from '../model.ts';
import { IptChain, IptRule } from './rule-node.ts';
import { findTargetInTokens } from './find-target.ts';
import type { TokenBuffer } from './tokenize.ts';
import type { RestoreReader } from './reader.ts';

/** One command line, its words read: what every handler gets. */
export interface CommandLine {
  readonly reader: RestoreReader;
  readonly table: Table;
  readonly tok: TokenBuffer;
  /** The index of the command word (1 after a `[pkts:bytes]` prefix). */
  readonly first: number;
  readonly cmd: string;
  readonly chainName: string | undefined;
  readonly line: string;
  readonly lineNo: number;
  /** Where the line's first word starts. */
  readonly k: number;
  /** The end of the line's `[pkts:bytes]` prefix (which starts at `k`), 0 without one. */
  readonly countersEnd: number;
}

type Handler = (c: CommandLine) => void;

function report(c: CommandLine, code: Parameters<RestoreReader['report']>[0], message: string, s: number, e: number) {
  c.reader.report(code, 'error', message, c.lineNo, s, e);
}

/** The chain-name word's range. */
function nameStart(c: CommandLine): number {
  return c.tok.start[c.first + 1]!;
}
function nameEnd(c: CommandLine): number {
  return c.tok.end[c.first + 1]!;
}

function needChain(c: CommandLine): c is CommandLine & { chainName: string } {
  if (c.chainName !== undefined) return true;
  report(c, 'missing-argument', `${c.cmd} needs a chain name`, c.tok.start[c.first]!, c.tok.end[c.first]!);
  return false;
}

/** The named chain of a rule command (created when `create`, so the rest of the file still reads). */
function ruleChain(c: CommandLine, create: boolean): Chain | null {
  if (!needChain(c)) return null;
  return c.reader.getChain(c.chainName, c.lineNo, nameStart(c), nameEnd(c), create);
}

/**
 * The optional rule number after the chain name (`-I CHAIN 3`, `-D CHAIN 2`): `{position, specIdx}`,
 * position -1 when absent, null when out of range (reported).
 */
function rulePosition(c: CommandLine, chain: Chain, max: number): { position: number; specIdx: number } | null {
  const specIdx = c.first + 2;
  const numText = c.tok.text[specIdx];
  if (numText === undefined || !/^\d+$/.test(numText)) return { position: -1, specIdx };
  const position = Number(numText);
  if (position < 1 || position > max) {
    report(
      c,
      'bad-rule-number',
      `${c.cmd} ${chain.name} ${position}: the chain has ${chain.rules.length} rule${chain.rules.length === 1 ? '' : 's'}`,
      c.tok.start[specIdx]!,
      c.tok.end[specIdx]!,
    );
    return null;
  }
  return { position, specIdx: specIdx + 1 };
}

/** Adds the row of the rule whose specification starts at word `specIdx` (compiled later, on demand). */
function newRow(c: CommandLine, specIdx: number): number {
  const tok = c.tok;
  const specStart = tok.start[specIdx] ?? c.line.length;
  const t = findTargetInTokens(tok, specIdx);
  const reader = c.reader;
  if (t < 0)
    return reader.rows!.add(reader.lineStart, c.line.length, c.lineNo, specStart, c.k, c.countersEnd, 0, 0, 0, 0);
  const w = tok.text[t]!;
  const name = tok.text[t + 1]!;
  const nameStart = tok.start[t + 1]!;
  const end = tok.end[t + 1]!;
  return reader.rows!.add(
    reader.lineStart,
    c.line.length,
    c.lineNo,
    specStart,
    c.k,
    c.countersEnd,
    w === '-g' || w === '--goto' ? 2 : 1,
    tok.start[t]!,
    nameStart,
    end,
    tok.quoted[t + 1] ? name : undefined,
  );
}

/** The rule object of a new row, for the commands that edit a chain's array of rules. */
function newRule(c: CommandLine, chain: Chain, specIdx: number): Rule {
  return new IptRule(c.reader.rows!, newRow(c, specIdx), chain.name);
}

/** `-A CHAIN spec`: appends. */
const appendRule: Handler = c => {
  const chain = ruleChain(c, true);
  if (chain instanceof IptChain) chain.append(newRow(c, c.first + 2));
  else if (chain) chain.rules.push(newRule(c, chain, c.first + 2));
};

/** `-I CHAIN [n] spec`: inserts before rule n (default 1). */
const insertRule: Handler = c => {
  const chain = ruleChain(c, true);
  const at = chain && rulePosition(c, chain, chain.rules.length + 1);
  if (!chain || !at) return;
  chain.rules.splice(at.position > 0 ? at.position - 1 : 0, 0, newRule(c, chain, at.specIdx));
};

/** `-R CHAIN n spec`: replaces rule n. */
const replaceRule: Handler = c => {
  const chain = ruleChain(c, false);
  const at = chain && rulePosition(c, chain, chain.rules.length);
  if (!chain || !at) return;
  if (at.position < 0) {
    report(c, 'missing-argument', `-R needs a rule number`, c.tok.start[c.first]!, c.tok.end[c.first]!);
    return;
  }
  chain.rules[at.position - 1] = newRule(c, chain, at.specIdx);
};

/** `-D CHAIN n` deletes rule n; `-D CHAIN spec` the first rule with the same specification text. */
const deleteRule: Handler = c => {
  const chain = ruleChain(c, false);
  const at = chain && rulePosition(c, chain, chain.rules.length);
  if (!chain || !at) return;
  if (at.position > 0) {
    chain.rules.splice(at.position - 1, 1);
    return;
  }
  const specStart = c.tok.start[at.specIdx] ?? c.line.length;
  // The front end compares the words as written: this is the reader's own text, not a rule re-read.
  const want = c.line.slice(specStart).trim();
  const idx = chain.rules.findIndex(r => r.raw.slice(r.specStart).trim() === want);
  if (idx < 0)
    report(
      c,
      'bad-rule-number',
      `-D ${chain.name}: no rule in the chain matches this specification`,
      specStart,
      c.line.length,
    );
  else chain.rules.splice(idx, 1);
};

/** `-N CHAIN`: declares a user chain. */
const newChain: Handler = c => {
  if (!needChain(c)) return;
  const t = c.table;
  if (t.chains.has(c.chainName)) {
    report(c, 'duplicate-chain', `chain ${c.chainName} already exists`, nameStart(c), nameEnd(c));
    return;
  }
  t.chains.set(
    c.chainName,
    new IptChain(c.chainName, t.name, false, undefined, null, null, c.lineNo, nameStart(c), nameEnd(c), c.reader.rows!),
  );
};

/** `-P CHAIN ACCEPT|DROP`: a built-in chain's policy. */
const setPolicy: Handler = c => {
  if (!needChain(c)) return;
  const chain = c.reader.getChain(c.chainName, c.lineNo, nameStart(c), nameEnd(c), false);
  const policy = c.tok.text[c.first + 2];
  if (!chain) return;
  if (!chain.builtin)
    report(
      c,
      'policy-on-user-chain',
      `only built-in chains have a policy; ${chain.name} is a user chain`,
      nameStart(c),
      nameEnd(c),
    );
  else if (policy !== 'ACCEPT' && policy !== 'DROP')
    report(
      c,
      'bad-argument',
      `policy must be ACCEPT or DROP, not '${policy ?? ''}'`,
      c.tok.start[c.first]!,
      c.line.length,
    );
  else chain.policy = policy;
};

/** `-F [CHAIN]`: empties one chain or all of the table's. */
const flushChain: Handler = c => {
  if (c.chainName === undefined) {
    for (const ch of c.table.chains.values()) ch.rules = [];
    return;
  }
  const chain = c.reader.getChain(c.chainName, c.lineNo, nameStart(c), nameEnd(c), false);
  if (chain) chain.rules = [];
};

/** `-X [CHAIN]`: deletes one user chain or all of them. */
const deleteChain: Handler = c => {
  const t = c.table;
  const victims =
    c.chainName === undefined
      ? [...t.chains.values()].filter(ch => !ch.builtin)
      : [t.chains.get(c.chainName)].filter((ch): ch is Chain => ch !== undefined);
  if (c.chainName !== undefined && victims.length === 0)
    report(c, 'unknown-chain', `-X: chain ${c.chainName} does not exist`, nameStart(c), nameEnd(c));
  for (const ch of victims) {
    if (ch.builtin)
      report(
        c,
        'builtin-chain',
        `-X: built-in chain ${ch.name} cannot be deleted`,
        c.tok.start[c.first]!,
        c.line.length,
      );
    else {
      t.chains.delete(ch.name);
      if (ch instanceof IptChain) ch.retired = true;
    }
  }
};

/** `-Z [CHAIN]`: zeroes counters, which a trace does not read. */
const zeroCounters: Handler = () => {};

/** `-E OLD NEW`: renames a chain. */
const renameChain: Handler = c => {
  if (!needChain(c)) return;
  const chain = c.reader.getChain(c.chainName, c.lineNo, nameStart(c), nameEnd(c), false);
  const newName = c.tok.text[c.first + 2];
  if (!chain || !newName) return;
  c.table.chains.delete(chain.name);
  c.table.chains.set(
    newName,
    chain instanceof IptChain
      ? chain.moved(newName, chain.line, chain.range.start.character, chain.range.end.character)
      : { ...chain, name: newName, rules: chain.rules },
  );
};

export function unknownCommand(c: CommandLine): void {
  report(
    c,
    'unknown-command',
    `'${c.cmd}' is not an iptables-restore command (expected -A, -I, -D, -R, -N, -P, -F, -X, -Z, -E, a ':CHAIN' declaration or COMMIT)`,
    c.tok.start[c.first]!,
    c.tok.end[c.first]!,
  );
}

/** Every command by both of its spellings. */
export const COMMANDS: ReadonlyMap<string, Handler> = new Map<string, Handler>([
  ['-A', appendRule],
  ['--append', appendRule],
  ['-I', insertRule],
  ['--insert', insertRule],
  ['-R', replaceRule],
  ['--replace', replaceRule],
  ['-D', deleteRule],
  ['--delete', deleteRule],
  ['-N', newChain],
  ['--new-chain', newChain],
  ['-P', setPolicy],
  ['--policy', setPolicy],
  ['-F', flushChain],
  ['--flush', flushChain],
  ['-X', deleteChain],
  ['--delete-chain', deleteChain],
  ['-Z', zeroCounters],
  ['--zero', zeroCounters],
  ['-E', renameChain],
  ['--rename-chain', renameChain],
]);
