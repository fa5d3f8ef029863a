/**
 * The packet input: a quick pick whose first row is what the user typed, checked as they type, followed
 * by recent packets and packets found in the dump or the manifests (filtered by what is typed). Accepting
 * a row traces it.
 */
import * as vscode from 'vscode';
import type { Analysis } from './dump-store.ts';
import { OUTSIDE_CLIENT, type PacketSuggestion, checkPacketText, queryKeyword } from '../editor/packet-suggest.ts';
import { type ReachingPacket, fromHereSuggestions } from '../editor/trace-from-here.ts';

interface PacketItem extends vscode.QuickPickItem {
  readonly packet: string | null;
  /** The row that stands for the text in the input box (always first). */
  readonly typed?: true;
}

/** Where suggestions come from: a dump's rules, or a cluster's Service ports. */
export interface PacketSource {
  /** The family packets must have, or null (an empty dump). */
  readonly family: 4 | 6 | null;
  /** The separator above the suggestions: `found in the dump`. */
  readonly heading: string;
  /** Suggestions wait this long after a keystroke (long dumps are scanned for each query). */
  readonly delayMs: number;
  suggest(query: string, limit: number): PacketSuggestion[] | Promise<PacketSuggestion[]>;
  /** The description of a suggestion: `its comment · line 12`. */
  describe(s: PacketSuggestion): string;
}

/**
 * Suggestions from the dump's engine worker (it scans the rules, the extension host only waits). From a
 * chain's "Trace from here": the packets that reach it first, then its Service's.
 */
export function dumpPacketSource(
  a: Analysis,
  fromHere: { readonly chain: string; readonly reaching: readonly ReachingPacket[] } | null = null,
): PacketSource {
  const ask = (query: string, limit: number) => a.ask('suggest', { query, limit }).catch(() => []);
  return {
    family: a.summary.tableCount ? a.summary.family : null,
    heading: fromHere ? `reaches ${fromHere.chain}, then found in the dump` : 'found in the dump',
    delayMs: a.summary.ruleCount > 50_000 ? 200 : 60,
    suggest: fromHere
      ? async (query, limit) => fromHereSuggestions(await ask(query, limit), fromHere.reaching, fromHere.chain)
      : ask,
    describe: s => `${s.label} · line ${s.line + 1}`,
  };
}

const PLACEHOLDER = `tcp ${OUTSIDE_CLIENT[4]} -> 10.96.0.10:80   (proto src[:port] -> dst[:port], then in=eth0 from=local state=NEW mark=0x1 …)`;

function typedItem(value: string, family: 4 | 6 | null): PacketItem {
  const check = checkPacketText(value, family);
  if (check.ok)
    return {
      label: `$(play) ${value.trim()}`,
      description: check.summary,
      packet: value.trim(),
      alwaysShow: true,
      typed: true,
    };
  return {
    label: value.trim() ? `$(warning) ${value.trim()}` : '$(edit) Type a packet',
    detail: check.error,
    packet: null,
    alwaysShow: true,
    typed: true,
  };
}

function recentOf(value: string, history: readonly string[]): string[] {
  const kw = queryKeyword(value);
  return history.filter(h => h !== value.trim() && (!kw || h.includes(kw))).slice(0, 8);
}

function items(
  source: PacketSource,
  value: string,
  history: readonly string[],
  suggestions: readonly PacketSuggestion[],
): PacketItem[] {
  const out: PacketItem[] = [typedItem(value, source.family)];
  const recent = recentOf(value, history);
  if (recent.length) {
    out.push({ label: 'recent', kind: vscode.QuickPickItemKind.Separator, packet: null });
    for (const h of recent) out.push({ label: h, description: 'recent', packet: h, alwaysShow: true });
  }
  const found = suggestions.filter(s => s.text !== value.trim() && !recent.includes(s.text));
  if (found.length) {
    out.push({ label: source.heading, kind: vscode.QuickPickItemKind.Separator, packet: null });
    for (const s of found)
      out.push({ label: s.text, description: source.describe(s), packet: s.text, alwaysShow: true });
  }
  return out;
}

/** Asks for a packet; resolves to its text, or undefined when the user cancels. */
export function askPacket(
  source: PacketSource,
  title: string,
  initial: string,
  history: readonly string[],
): Promise<string | undefined> {
  return new Promise(resolve => {
    const qp = vscode.window.createQuickPick<PacketItem>();
    qp.title = title;
    qp.placeholder = PLACEHOLDER;
    qp.matchOnDescription = false;
    qp.value = initial;
    qp.items = items(source, initial, history, []);
    let timer: ReturnType<typeof setTimeout> | undefined;
    let done = false;
    // Suggestions arrive asynchronously (the worker scans the dump): only the latest query's are shown.
    let asked = 0;
    const suggest = (v: string) => {
      const n = ++asked;
      void Promise.resolve(source.suggest(v, 40)).then(found => {
        if (!done && n === asked) qp.items = items(source, qp.value, history, found);
      });
    };
    suggest(initial);
    const finish = (v: string | undefined) => {
      if (done) return;
      done = true;
      if (timer) clearTimeout(timer);
      resolve(v);
      qp.dispose();
    };
    qp.onDidChangeValue(v => {
      // The typed row is checked at once; dump suggestions follow after a short pause (big dumps).
      const [, ...rest] = qp.items;
      qp.items = [typedItem(v, source.family), ...rest];
      if (timer) clearTimeout(timer);
      timer = setTimeout(() => suggest(v), source.delayMs);
    });
    qp.onDidAccept(() => {
      const picked = qp.selectedItems[0] ?? qp.activeItems[0];
      // The typed row means the text in the box now. Enter pressed right after typing or pasting can
      // arrive with the previous typed row still the active one (the workbench had not yet drawn the new
      // items), which traced the packet the box held before: read the box instead.
      if (picked?.typed) {
        const check = checkPacketText(qp.value, source.family);
        if (check.ok) finish(qp.value.trim());
        return;
      }
      if (picked?.packet) finish(picked.packet);
      else if (picked && !picked.packet && qp.value.trim()) {
        const check = checkPacketText(qp.value, source.family);
        if (check.ok) finish(qp.value.trim());
      }
    });
    qp.onDidHide(() => finish(undefined));
    qp.show();
  });
}
