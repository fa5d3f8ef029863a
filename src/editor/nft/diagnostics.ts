/**
 * The diagnostics of an nftables file: the parser's (syntax, references, defines), the lowering's (every
 * rule lowered, in slices, as a trace would) and the engine's nft linter (unused and unreachable chains,
 * loops, unused sets and maps, shadowed rules). Same shape and limits as the iptables ones (diagnostics.ts).
 */
import { type Diagnostic, checkLowering, lintNft } from '../../engine/api.ts';
import type { DiagnosticsOptions, DumpDiagnostics, EditorDiagnostic } from '../diagnostics.ts';
import { lineSpan } from '../ranges.ts';
import type { NftIndex } from './nft-index.ts';
import type { LineSource } from '../text-lines.ts';

const plain = (d: Diagnostic): EditorDiagnostic => ({ ...d, unnecessary: false, related: [] });

export function* nftDiagnosticSteps(
  nft: NftIndex,
  lines: LineSource,
  options: DiagnosticsOptions,
): Generator<void, DumpDiagnostics> {
  const rs = nft.ruleset;
  const notes: string[] = [];
  const full = rs.ruleCount <= options.maxRulesForFullCheck;
  const lint: EditorDiagnostic[] = [];
  if (full) {
    // Lowering a rule adds its diagnostics to the ruleset's list (lazily lowered rules do it on first use).
    let n = 0;
    for (const t of rs.tables.values())
      for (const c of t.chains.values())
        for (const r of c.rules) {
          checkLowering(r);
          if (++n % 2000 === 0) yield;
        }
    yield;
    for (const d of lintNft(nft.ast)) {
      const related =
        d.relatedLine !== null
          ? [{ range: lineSpan(d.relatedLine, 0, lines.lineAt(d.relatedLine).length), message: d.relatedMessage ?? '' }]
          : [];
      lint.push({
        code: d.code,
        severity: d.severity,
        message: d.message,
        range: d.range,
        unnecessary: d.code !== 'jump-loop',
        related,
      });
    }
  } else {
    notes.push(
      `rules are not lowered and the linter did not run: ${rs.ruleCount.toLocaleString('en-US')} rules is above packetlens.limits.fullCheckMaxRules (${options.maxRulesForFullCheck.toLocaleString('en-US')})`,
    );
  }
  const seen = new Set<string>();
  const out: EditorDiagnostic[] = [];
  for (const d of [...rs.diagnostics.map(plain), ...lint]) {
    const k = `${d.code}@${d.range.start.line}:${d.range.start.character}:${d.message}`;
    if (seen.has(k)) continue;
    seen.add(k);
    out.push(d);
  }
  out.sort((a, b) => a.range.start.line - b.range.start.line || a.range.start.character - b.range.start.character);
  if (out.length > options.maxDiagnostics) {
    notes.push(
      `${(out.length - options.maxDiagnostics).toLocaleString('en-US')} more diagnostics are not shown (packetlens.limits.maxDiagnostics is ${options.maxDiagnostics.toLocaleString('en-US')})`,
    );
    return { diagnostics: out.slice(0, options.maxDiagnostics), notes };
  }
  return { diagnostics: out, notes };
}
