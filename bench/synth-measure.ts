/**
 * Synthesis benchmark measurement (issue 3): 10k Services × 10 endpoints as manifests (Services + EndpointSlices +
 * Node) → cluster model → kube-proxy's iptables rules for one node → iptables-save text. Reading the YAML
 * and synthesizing are timed separately. Run on the esbuild bundle by bench.ts, or directly with tsx.
 */
import { performance } from 'node:perf_hooks';
import { readManifests } from '../src/engine/kube/manifest/read.ts';
import { buildClusterModel } from '../src/engine/kube/model/build.ts';
import { synthesizeIptables } from '../src/engine/kube/modes/iptables/synth.ts';
import { renderNodeSave } from '../src/engine/kube/modes/iptables/render.ts';
import { serviceAt } from './generate.ts';

export function generateManifests(services: number, endpoints: number): string {
  const out: string[] = [
    'apiVersion: v1\nkind: Node\nmetadata: {name: bench-node}\nstatus: {addresses: [{type: InternalIP, address: 172.18.0.4}]}',
  ];
  for (let i = 0; i < services; i++) {
    const s = serviceAt(i, endpoints);
    const [ns, rest] = s.name.split('/') as [string, string];
    const name = rest.split(':')[0]!;
    out.push(
      `apiVersion: v1\nkind: Service\nmetadata: {name: ${name}, namespace: ${ns}}\nspec: {clusterIP: ${s.clusterIP}, ports: [{name: http, port: ${s.port}, targetPort: 8080}]}`,
    );
    out.push(
      `apiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata: {name: ${name}-1, namespace: ${ns}, labels: {kubernetes.io/service-name: ${name}}}\naddressType: IPv4\nports: [{name: http, port: 8080, protocol: TCP}]\nendpoints:\n${s.endpoints.map((ip, k) => `- {addresses: [${ip}], nodeName: node-${k % 3}}`).join('\n')}`,
    );
  }
  return out.join('\n---\n');
}

/** CPU time (user + system, all threads: the garbage collector's helpers included) in milliseconds. */
function cpuMs(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}

export function measureSynth(services: number, endpoints: number): Record<string, number> {
  const text = generateManifests(services, endpoints);
  const c0 = cpuMs();
  const t0 = performance.now();
  const set = readManifests([{ file: 'bench.yaml', text }]);
  const t1 = performance.now();
  const c1 = cpuMs();
  const model = buildClusterModel(set, { predict: false });
  const tm = performance.now();
  const cm = cpuMs();
  const rules = synthesizeIptables(model, { nodeName: 'bench-node' });
  const ts = performance.now();
  const cs = cpuMs();
  const dump = renderNodeSave(rules);
  const t2 = performance.now();
  const c2 = cpuMs();
  return {
    services,
    endpoints,
    manifestMB: +(text.length / 1048576).toFixed(1),
    readYamlMs: Math.round(t1 - t0),
    synthesizeMs: Math.round(t2 - t1),
    modelMs: Math.round(tm - t1),
    rulesMs: Math.round(ts - tm),
    renderMs: Math.round(t2 - ts),
    // The same phases in CPU time: on a shared machine wall time also counts other processes' turns.
    readYamlCpuMs: Math.round(c1 - c0),
    synthesizeCpuMs: Math.round(c2 - c1),
    modelCpuMs: Math.round(cm - c1),
    rulesCpuMs: Math.round(cs - cm),
    renderCpuMs: Math.round(c2 - cs),
    peakRssMB: Math.round(process.resourceUsage().maxRSS / 1024),
    rules: rules.nat.rules.length + rules.filter.rules.length,
    dumpMB: +(dump.length / 1048576).toFixed(1),
  };
}

if (process.argv.includes('--measure')) {
  const i = process.argv.indexOf('--measure');
  console.log(JSON.stringify(measureSynth(Number(process.argv[i + 1] ?? 10000), Number(process.argv[i + 2] ?? 10))));
}
