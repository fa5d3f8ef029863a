/**
 * "Show kube-proxy Rules for Node…": the nodes of a cluster to pick from, and the dump kube-proxy would
 * leave on the chosen node — its `iptables-save` view (iptables mode), or in IPVS mode the iptables rules
 * with `ipvsadm -Ln`, `ipset save` and the kube-ipvs0 addresses in the header comment — with every value the
 * manifests leave out listed as a prediction. The rules are exactly those an end-to-end trace runs through,
 * after the header, so a trace's line numbers map onto the document by a fixed offset.
 */
import { detectRulesetFormat, type ProxyModeName, synthesizedNode } from '../../engine/api.ts';
import type { ClusterView } from './cluster.ts';

export interface NodePick {
  readonly node: string;
  readonly label: string;
  readonly description: string;
  readonly detail: string;
}

export function nodePicks(view: ClusterView): NodePick[] {
  return view.model.nodes.map(n => {
    const pods = view.model.pods.filter(p => p.nodeName === n.name && !p.hostNetwork);
    const facts = [
      n.controlPlane ? 'control plane' : 'worker',
      ...(n.excludedFromLB ? ['excluded from load balancers'] : []),
      `${pods.length} pod${pods.length === 1 ? '' : 's'}${
        pods.length
          ? `: ${pods
              .slice(0, 5)
              .map(p => p.name)
              .join(', ')}${pods.length > 5 ? ', …' : ''}`
          : ''
      }`,
      ...(n.podCIDRs.length ? [`pod CIDR ${n.podCIDRs.join(', ')}`] : []),
      ...(n.predicted ? ['predicted from the kind config'] : []),
    ];
    return { node: n.name, label: n.name, description: n.ips.join(', '), detail: facts.join(' · ') };
  });
}

export interface NodeDump {
  readonly node: string;
  readonly mode: ProxyModeName;
  /** The document: header comment, then the rules. */
  readonly text: string;
  /** The rules alone, exactly as an end-to-end trace synthesizes them. */
  readonly rules: string;
  /** Lines of header before the rules. */
  readonly headerLines: number;
}

function predictionLines(view: ClusterView): string[] {
  const p = view.model.predictions;
  if (p.length === 0) return ['predicted: nothing (every value comes from the manifests)'];
  return p.map(x => `predicted: ${x.subject} ${x.field} = ${x.value} (${x.reason})`);
}

function commented(lines: readonly string[]): string {
  return lines.map(l => (l ? `# ${l}` : '#')).join('\n');
}

export function nodeDump(view: ClusterView, node: string): NodeDump {
  return view.memoize(`dump ${node}`, () => {
    const n = view.node(node);
    const title = `${view.proxy.wording.headline(view.model)} on node ${node}${n?.ips.length ? ` (${n.ips.join(', ')})` : ''}, synthesized by packetlens from the manifests of ${view.label}`;
    const partial = view.model.partial ? [`⚠ partial manifests: ${view.model.partial}`] : [];
    const head = [title, ...partial, ...(view.modeNote ? [view.modeNote] : []), ...predictionLines(view)];
    // The rules the node's traces run through (one synthesis per view, node and mode, shared with them).
    const out =
      synthesizedNode(view.model, node, { mode: view.mode }) ?? view.proxy.synthesize(view.model, { nodeName: node });
    const rules = out.rules;
    const extra: string[] = [...out.notes];
    if (out.facts.length || out.sideFiles.length) {
      extra.push('', ...out.facts);
      for (const f of out.sideFiles) extra.push('', f.title, ...f.text.replace(/\n$/, '').split('\n'));
      extra.push('', out.rulesTitle);
    }
    const header = `${commented([...head, ...extra])}\n`;
    return { node, mode: view.mode, text: header + rules, rules, headerLines: header.split('\n').length - 1 };
  });
}

/**
 * The file name a node's synthesized rules open under: `.nft` when the text is an nftables ruleset (kube-proxy's
 * nftables mode), so the editor gives it the nftables language, else `.rules` (iptables-save). Decided by the
 * text's content, as every other reader of rules does, never by the mode's name.
 */
export function nodeDumpFileName(node: string, text: string): string {
  return `${node}${detectRulesetFormat(text).startsWith('nft') ? '.nft' : '.rules'}`;
}
