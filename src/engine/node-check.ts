/**
 * What a node's own files (nodectx/) leave out or contradict, said before a trace leans on them: a file
 * kind missing from the set (no `ip route`: the outgoing interface is assumed), a family the routes do not
 * cover, errors in the files, and an address the dump itself implies for its node (an `SNAT --to-source`,
 * kube-proxy's `--nodeport-addresses`) that the node's `ip addr` does not have — files of another node, or a
 * dump taken elsewhere. A top-level file: it joins the node files (nodectx/) and the dump's own hints
 * (eval/node-inference.ts) without a new folder edge between them.
 */
import type { FileDiagnostic } from './diagnostics.ts';
import { inferNodeAddresses } from './eval/node-inference.ts';
import type { Ruleset } from './model.ts';
import { parseAddr } from './net/addr.ts';
import type { NodeContext } from './nodectx/types.ts';

/** `dir/ip-addr.json` → `ip-addr.json`; a tarball member `b.tgz:ip-addr.json` → `ip-addr.json`. */
function base(file: string): string {
  const m = /([^/\\:]+)$/.exec(file);
  return m ? m[1]! : file;
}

/** A contradiction or an error in the files (`warning`), or a piece they leave out (`info`). */
export interface NodeContextNote {
  readonly severity: 'warning' | 'info';
  readonly message: string;
}

/**
 * The gaps and contradictions of a node context against the dump it is used with, one sentence each, most
 * serious first. `diagnostics` are the files' own (readNodeContext's); only errors are counted here.
 */
export function nodeContextNotes(
  ctx: NodeContext,
  rs: Ruleset | null,
  diagnostics: readonly FileDiagnostic[] = [],
): NodeContextNote[] {
  const notes: NodeContextNote[] = [];
  const say = (severity: NodeContextNote['severity'], message: string) => notes.push({ severity, message });
  const kinds = new Set(ctx.sources.map(s => s.kind));
  const addrFiles = ctx.sources.filter(s => s.kind === 'ip-addr').map(s => base(s.file));
  const own = new Set<string>();
  for (const itf of ctx.interfaces)
    for (const a of itf.addrs) {
      const addr = parseAddr(a.local);
      if (addr) own.add(`${addr.v}:${addr.n}`);
    }
  if (rs && kinds.has('ip-addr')) {
    for (const inf of inferNodeAddresses(rs)) {
      if (inf.extra) continue;
      const addr = parseAddr(inf.address);
      if (!addr || own.has(`${addr.v}:${addr.n}`)) continue;
      say(
        'warning',
        `the dump implies the node address ${inf.address} (${inf.from}: ${inf.why}), but the node's ${addrFiles.join(', ')} has no such address: are the files and the dump from the same node?`,
      );
    }
  }
  const errors = diagnostics.filter(d => d.severity === 'error');
  if (errors.length)
    say(
      'warning',
      `${errors.length} error${errors.length === 1 ? '' : 's'} in the node's files (first: ${base(errors[0]!.file)}:${errors[0]!.range.start.line + 1}: ${errors[0]!.message}): what they say there is not used`,
    );
  if (!kinds.has('ip-addr'))
    say(
      'info',
      "no `ip addr` output among the node's files: its addresses come from elsewhere (settings, the dump) or are assumed",
    );
  if (!kinds.has('ip-route'))
    say(
      'info',
      "no `ip route` output among the node's files: the outgoing interface is the uplink (eth0 unless set) and the MASQUERADE source is that interface's address",
    );
  else if (rs && rs.tables.size > 0 && !ctx.routes.some(r => r.family === rs.family))
    say(
      'info',
      `the node's \`ip route\` output has no IPv${rs.family} routes (for IPv6: \`ip -j -6 route show table all\`): IPv${rs.family} packets use the uplink`,
    );
  if (!kinds.has('sysctl'))
    say(
      'info',
      "no `sysctl -a` output among the node's files: assumed ip_forward=1, rp_filter=0, route_localnet=0 (what a Kubernetes node usually has)",
    );
  return notes;
}
