/**
 * The hover on a Service (its `kind` or `name`) or on one of its ports: the addresses it is reached at
 * (ClusterIP, NodePort, LoadBalancer IPs, external IPs — each predicted value marked *predicted* with the
 * reason), its endpoints with each one's exact share of new connections, and the chains kube-proxy writes
 * for it. Text from the manifests is escaped: it renders as written, never as markdown or links.
 */
import {
  type ServiceM,
  type ServicePortInfo,
  endpointString,
  formatRational,
  l2Announcer,
  toNumber,
} from '../../engine/api.ts';
import { cell, code, escapeMarkdown } from '../hover/markdown.ts';
import { percent } from '../probability.ts';
import { type ClusterView, hostPort } from './cluster.ts';
import { clusterShares } from './cluster-shares.ts';
import { noRulesTitle, portLens } from './service-lens.ts';

const MAX_ENDPOINTS = 20;

/** Where a value comes from: the prediction that filled it in, or the manifests themselves. */
function predicted(reason: string | null): string {
  return reason ? `*predicted*: ${cell(reason)}` : 'in the manifests';
}

function addressRows(view: ClusterView, sp: ServicePortInfo): string[] {
  const rows = ['| | address | where it comes from |', '|---|---|---|'];
  if (sp.clusterIP)
    rows.push(
      `| ClusterIP | ${code(hostPort(sp.clusterIP, sp.port))} | ${predicted(sp.predicted.clusterIP ? view.prediction(sp, 'clusterIP') : null)} |`,
    );
  for (const ip of sp.lbIPs) {
    const who = view.model.metallb.pools.length ? l2Announcer(view.model, sp, ip) : null;
    const announced = who
      ? who.node
        ? `announced by **${escapeMarkdown(who.node)}** (MetalLB L2)`
        : `not announced: ${cell(who.reason)}`
      : 'the node that receives it is up to your load balancer';
    rows.push(
      `| LoadBalancer IP | ${code(hostPort(ip, sp.port))} | ${predicted(sp.predicted.lbIPs ? view.prediction(sp, 'loadBalancer IP') : null)} · ${announced} |`,
    );
  }
  for (const ip of sp.externalIPs)
    rows.push(`| external IP | ${code(hostPort(ip, sp.port))} | in the manifests · your network routes it to a node |`);
  if (sp.nodePort !== null) {
    const on = view.model.nodes.slice(0, 4).map(n => code(hostPort(n.ips[0] ?? n.name, sp.nodePort)));
    const more = view.model.nodes.length > 4 ? ` and ${view.model.nodes.length - 4} more nodes` : '';
    rows.push(
      `| NodePort | ${code(String(sp.nodePort))} on every node${on.length ? `: ${on.join(', ')}${more}` : ''} | ${predicted(sp.predicted.nodePort ? view.prediction(sp, 'nodePort') : null)} |`,
    );
  }
  return rows.length > 2 ? rows : ['No address: the apiserver has not given it one in these manifests.'];
}

function endpointSource(sp: ServicePortInfo): string {
  switch (sp.endpointSource) {
    case 'selector':
      return 'from the selector (*predicted*: the pods whose labels match, as the endpoint controller would list them)';
    case 'EndpointSlice':
      return 'from the EndpointSlices in the manifests';
    case 'Endpoints':
      return 'from the Endpoints object in the manifests';
    case 'none':
      return 'none: no selector and no EndpointSlice';
  }
}

function endpointRows(view: ClusterView, sp: ServicePortInfo): string[] {
  if (sp.endpoints.length === 0)
    return [
      '',
      `**Endpoints** ${endpointSource(sp)}: none, so kube-proxy rejects new connections ("${escapeMarkdown(sp.servicePortName)} has no endpoints").`,
    ];
  const cs = clusterShares(view, sp);
  const out = [
    '',
    `**Endpoints** ${endpointSource(sp)}${cs ? `; share of new connections to the ClusterIP (${cs.how})` : ''}:`,
    '',
    '| endpoint | pod | node | share | exact |',
    '|---|---|---|---:|---|',
  ];
  for (const e of sp.endpoints.slice(0, MAX_ENDPOINTS)) {
    const ep = endpointString(e);
    const s = cs?.shares.find(x => x.endpoint === ep);
    const share = s ? percent(toNumber(s.share)) : e.ready ? '0%' : '—';
    const state = e.ready ? '' : e.serving && e.terminating ? ' (terminating)' : ' (not ready)';
    out.push(
      `| ${code(ep)} | ${e.podName ? cell(e.podName) : ''} | ${e.nodeName ? cell(e.nodeName) : ''} | ${share}${state} | ${s ? formatRational(s.share) : ''} |`,
    );
  }
  if (sp.endpoints.length > MAX_ENDPOINTS) out.push(`| *and ${sp.endpoints.length - MAX_ENDPOINTS} more* | | | | |`);
  const assumed = view.predictedEndpoints(sp);
  if (assumed) out.push('', `*${cell(assumed)}*`);
  return out;
}

function chainNames(view: ClusterView, sp: ServicePortInfo): string[] {
  return view.proxy.wording.portObjects(view.model, sp, { code, escape: escapeMarkdown });
}

export function portSection(view: ClusterView, sp: ServicePortInfo): string[] {
  const lens = portLens(view, sp);
  return [
    `**port ${sp.portName ? `${code(sp.portName)} ` : ''}${sp.port}/${sp.protocol}** — ${code(sp.servicePortName)}`,
    '',
    `${escapeMarkdown(lens.title)}`,
    '',
    ...addressRows(view, sp),
    ...endpointRows(view, sp),
    ...chainNames(view, sp),
  ];
}

function header(view: ClusterView, service: ServiceM): string[] {
  const mode = `kube-proxy ${view.mode} mode${view.modeNote ? ` (${escapeMarkdown(view.modeNote)})` : ''}`;
  return [
    `**Service ${code(`${service.namespace}/${service.name}`)}** — ${escapeMarkdown(service.type)} · ${mode} · manifests of ${code(view.label)}`,
  ];
}

export function serviceHover(view: ClusterView, service: ServiceM): string {
  const out = header(view, service);
  const none = noRulesTitle(service);
  if (none) return [...out, '', escapeMarkdown(none)].join('\n');
  const ports = view.portsOf(service);
  if (ports.length === 0) return [...out, '', 'No ports: kube-proxy writes no rules for it.'].join('\n');
  for (const sp of ports) out.push('', '---', '', ...portSection(view, sp));
  return out.join('\n');
}

export function portHover(view: ClusterView, service: ServiceM, sp: ServicePortInfo): string {
  return [...header(view, service), '', ...portSection(view, sp)].join('\n');
}
