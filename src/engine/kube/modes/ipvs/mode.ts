/**
 * kube-proxy's IPVS mode as a ProxyMode (modes/types.ts). The node's service addresses are bound on
 * kube-ipvs0, so they are local: the packet crosses PREROUTING (nat KUBE-SERVICES marks and accepts) and
 * filter INPUT (KUBE-IPVS-FILTER), then IPVS (an interceptor at LOCAL_IN priority 99, engine/ipvs/
 * intercept.ts) schedules a real server and sends the packet on through LOCAL_OUT and POSTROUTING
 * (KUBE-POSTROUTING masquerades marked packets, KUBE-LOOP-BACK hairpins).
 */
import { parseIpsetSave } from '../../../ipset/store.ts';
import { ipvsInterceptors } from '../../../ipvs/intercept.ts';
import { renderIpvsadmList, renderIpvsadmRules } from '../../../ipvs/render.ts';
import { parseIptables } from '../../../iptables/parse.ts';
import type { ClusterModel } from '../../model/types.ts';
import type { ProxyMode } from '../types.ts';
import { renderIpsetSave, renderIpvsNodeSave, renderIpvsRestore } from './render.ts';
import { synthesizeIpvs } from './synth.ts';

function scheduler(model: ClusterModel): string {
  return model.kubeProxy.ipvsScheduler || 'rr';
}

export const ipvsMode: ProxyMode = {
  name: 'ipvs',
  // synth.ts: a virtual server per address of the port (ClusterIP, external and load-balancer IPs, a NodePort on
  // each node address), each with every endpoint as a real server.
  cost: { addressesMultiplyEndpoints: true, unit: 'IPVS real servers' },
  formats: ['save', 'restore', 'ipvsadm', 'ipvsadm-save', 'ipset'],
  synthesize(model, opts) {
    const state = synthesizeIpvs(model, {
      nodeName: opts.nodeName,
      ...(opts.nodeIPs ? { nodeIPs: opts.nodeIPs } : {}),
      ...(opts.randomFully !== undefined ? { randomFully: opts.randomFully } : {}),
    });
    const facts = [`kube-ipvs0: ${state.bound.join(' ') || '(no addresses)'}`];
    // Each text is rendered when first read: `synth --format ipvsadm` needs one of them only.
    const lazy = (make: () => string) => {
      let text: string | undefined;
      return () => (text ??= make());
    };
    const list = lazy(() => renderIpvsadmList(state.table));
    const ipsets = lazy(() => renderIpsetSave(state));
    const save = lazy(() => renderIpvsNodeSave(state));
    const sideFiles = [
      {
        title: 'ipvsadm -Ln',
        get text() {
          return list();
        },
      },
      {
        title: 'ipset save',
        get text() {
          return ipsets();
        },
      },
    ];
    return {
      get rules() {
        return save();
      },
      rulesTitle: 'iptables-save',
      notes: state.notes,
      facts,
      sideFiles,
      traceOptions(context) {
        // kube-ipvs0 carries the service addresses as /32 (/128) host addresses (netlink_linux.go EnsureAddressBind).
        const ipvs0 = { name: 'kube-ipvs0', addresses: state.bound.map(a => `${a}/${a.includes(':') ? 128 : 32}`) };
        return {
          node: { ...context, interfaces: [...(context.interfaces ?? []), ipvs0] },
          ipsets: parseIpsetSave(
            renderIpsetSave(state, { protocolQualifiedPorts: true }),
            `${opts.nodeName} (synthesized ipsets)`,
          ),
          interceptors: ipvsInterceptors(state.table, opts.ipvs),
        };
      },
      render(format, header) {
        if (format === 'save') return renderIpvsNodeSave(state, { header });
        if (format === 'restore') return renderIpvsRestore(state);
        if (format === 'ipvsadm') return list();
        if (format === 'ipvsadm-save') return renderIpvsadmRules(state.table);
        if (format === 'ipset') return ipsets();
        return [
          ...header.split('\n').map(l => `# ${l}`),
          ...facts.map(l => `# ${l}`),
          '',
          ...sideFiles.flatMap(f => [`# ${f.title}`, f.text]),
          `# iptables-save`,
          save(),
        ].join('\n');
      },
    };
  },
  parse: (rules, file) => parseIptables(rules, { file, lazy: true }),
  wording: {
    headline: model => `kube-proxy v1.31 IPVS mode (scheduler ${scheduler(model)})`,
    traceNote: (model, node) =>
      `kube-proxy IPVS mode on ${node} (scheduler ${scheduler(model)}): service addresses are bound on kube-ipvs0; IPVS schedules new connections at LOCAL_IN (see packetlens synth --mode ipvs --format ipvsadm)`,
    lensSuffix: ', kube-proxy IPVS mode',
    affinityNone: (model, balance, { code }) =>
      `**None**: the IPVS scheduler ${code(scheduler(model))} picks an endpoint for each new connection on its own${balance}.`,
    affinityClientIP: (_model, _sp, t, balance, { code }) =>
      `**ClientIP**: IPVS persistence (${code(`-p ${t}`)}): a client's new connections go to the real server its first one reached, for ${t} s of idleness; the first is scheduled as usual${balance}.`,
    portObjects: (model, _sp, { code }) => [
      '',
      `**kube-proxy IPVS mode**: a virtual server per address (scheduler ${code(scheduler(model))}) bound on kube-ipvs0; its iptables rules only mark and masquerade, through ipsets, with no per-Service chains.`,
    ],
  },
};
