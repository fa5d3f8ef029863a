/**
 * Generators of hostile and mistaken inputs, shared by the fast properties in `npm test`
 * (fuzz.test.ts, fixed seeds) and the long campaign (`npm run fuzz`, campaign.ts): generated iptables
 * dumps (random branches, loops, gotos, marks, undecidable modules), real dumps, nftables rulesets and
 * manifests mutated the ways files get damaged (cut, joined, re-encoded, lines lost or repeated, bytes
 * flipped), and YAML built to expand (aliases) or to be huge.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';

const ROOT = join(import.meta.dirname, '..', '..');
const read = (...p: string[]) => readFileSync(join(ROOT, ...p), 'utf8');

export const SEEDS = {
  dumps: [
    read('examples', 'seed-003', 'node-myk8s-worker.rules'),
    read('test', 'fixtures', 'kernel', 'host-firewall', 'rules'),
    read('test', 'fixtures', 'kernel', 'calico-policy', 'rules'),
    read('test', 'fixtures', 'bad-inputs', 'goto-loop-statistic.rules'),
  ],
  nft: [
    read('test', 'fixtures', 'nftables', 'nat-router.nft'),
    read('test', 'fixtures', 'nftables', 'golden', 'kube-proxy.json'),
  ],
  manifests: [
    read('examples', 'seed-003', 'services.yaml'),
    read('examples', 'seed-003', 'webpods.yaml'),
    read('examples', 'seed-003', 'nodes.yaml'),
  ],
};

const ip = fc
  .tuple(fc.integer({ min: 1, max: 223 }), fc.nat(255), fc.nat(255), fc.integer({ min: 1, max: 254 }))
  .map(p => p.join('.'));
const port = fc.integer({ min: 0, max: 70000 });
const chains = ['INPUT', 'FORWARD', 'OUTPUT', 'PREROUTING', 'POSTROUTING', 'A', 'B', 'C', 'D'];
const chain = fc.constantFrom(...chains);
const bit = fc.nat(31).map(b => `0x${((1 << b) >>> 0).toString(16)}`);

const matchPart = fc.oneof(
  ip.map(a => `-s ${a}`),
  fc.tuple(ip, fc.integer({ min: 0, max: 33 })).map(([a, p]) => `! -d ${a}/${p}`),
  fc
    .tuple(fc.constantFrom('tcp', 'udp', 'sctp', 'icmp', 'all', '47', 'bogus'), port)
    .map(([p, n]) => `-p ${p} -m ${p} --dport ${n}`),
  fc.integer({ min: 0, max: 100 }).map(n => `-m statistic --mode random --probability ${(n / 100).toFixed(11)}`),
  fc.integer({ min: 1, max: 6 }).map(n => `-m statistic --mode nth --every ${n} --packet 0`),
  bit.map(b => `-m mark --mark ${b}/${b}`),
  bit.map(b => `-m connmark ! --mark ${b}`),
  fc.constantFrom(
    '-m conntrack --ctstate NEW,ESTABLISHED',
    '-m addrtype --dst-type LOCAL',
    '-i eth+',
    '-o lo',
    '-m comment --comment "a b"',
    '-m comment --comment "unterminated',
    '-m u32 --u32 "0>>22&0x3C@ 12>>26&0x3C@ 0=0x1"',
    '-m recent --rcheck --seconds 10 --name X',
    '-m limit --limit 3/min',
    '--dprot 443',
    '-m set --match-set S src',
    '-f',
    '! -i',
    '-m',
  ),
);
const target = fc.oneof(
  fc.constantFrom(
    '-j ACCEPT',
    '-j DROP',
    '-j RETURN',
    '-j REJECT',
    '-j QUEUE',
    '-j LOG',
    '-j NOTRACK',
    '-j MASQUERADE',
    '-j DNAT --to-destination 10.0.0.9:80',
    '-j SNAT --to-source 1.2.3.4',
    '-j NOPE',
    '-j',
    '',
  ),
  bit.map(b => `-j MARK --or-mark ${b}`),
  bit.map(b => `-j CONNMARK --set-xmark ${b}/${b}`),
  fc.constantFrom('-j CONNMARK --save-mark', '-j CONNMARK --restore-mark'),
  chain.map(c => `-j ${c}`),
  chain.map(c => `-g ${c}`),
);
const ruleLine = fc
  .tuple(chain, fc.array(matchPart, { maxLength: 4 }), target)
  .map(([c, ms, t]) => `-A ${c} ${ms.join(' ')} ${t}`.replace(/\s+$/, ''));

/** A generated dump: a few tables with user chains, random branches, loops and mistakes. */
export const generatedDump = fc
  .tuple(
    fc.subarray(['raw', 'mangle', 'nat', 'filter'], { minLength: 1 }),
    fc.array(fc.array(ruleLine, { maxLength: 30 }), { minLength: 4, maxLength: 4 }),
  )
  .map(
    ([tables, rules]) =>
      tables
        .map((t, i) =>
          [
            `*${t}`,
            ...['PREROUTING', 'INPUT', 'FORWARD', 'OUTPUT', 'POSTROUTING'].map(c => `:${c} ACCEPT [0:0]`),
            ':A - [0:0]',
            ':B - [0:0]',
            ':C - [0:0]',
            ':D - [0:0]',
            ...rules[i]!,
            'COMMIT',
          ].join('\n'),
        )
        .join('\n') + '\n',
  );

/** Ways real files get damaged. */
const mutation = fc.oneof(
  fc.tuple(fc.constant('cut'), fc.double({ min: 0, max: 1, noNaN: true })),
  fc.tuple(
    fc.constant('splice'),
    fc.double({ min: 0, max: 1, noNaN: true }),
    fc.nat(400),
    fc.string({ maxLength: 60 }),
  ),
  fc.tuple(
    fc.constant('bytes'),
    fc.double({ min: 0, max: 1, noNaN: true }),
    fc.string({ unit: 'binary', maxLength: 30 }),
  ),
  fc.tuple(fc.constant('join')),
  fc.tuple(fc.constant('crlf')),
  fc.tuple(fc.constant('bom')),
  fc.tuple(fc.constant('utf16')),
  fc.tuple(fc.constant('nul'), fc.double({ min: 0, max: 1, noNaN: true })),
  fc.tuple(fc.constant('spaces'), fc.double({ min: 0, max: 1, noNaN: true })),
  fc.tuple(fc.constant('dropline'), fc.double({ min: 0, max: 1, noNaN: true })),
  fc.tuple(fc.constant('dupline'), fc.double({ min: 0, max: 1, noNaN: true }), fc.integer({ min: 1, max: 50 })),
  fc.tuple(fc.constant('longword'), fc.double({ min: 0, max: 1, noNaN: true }), fc.integer({ min: 100, max: 5000 })),
  fc.tuple(fc.constant('swap'), fc.double({ min: 0, max: 1, noNaN: true }), fc.double({ min: 0, max: 1, noNaN: true })),
);

type Mutation = typeof mutation extends fc.Arbitrary<infer T> ? T : never;

function at(text: string, f: number): number {
  return Math.min(text.length, Math.floor(f * text.length));
}

export function mutate(text: string, m: Mutation): string {
  const lines = () => text.split('\n');
  const lineAt = (f: number, ls: string[]) => Math.min(ls.length - 1, Math.floor(f * ls.length));
  switch (m[0]) {
    case 'cut':
      return text.slice(0, at(text, m[1]));
    case 'splice': {
      const p = at(text, m[1]);
      return text.slice(0, p) + m[3] + text.slice(p + m[2]);
    }
    case 'bytes': {
      const p = at(text, m[1]);
      return text.slice(0, p) + m[2] + text.slice(p);
    }
    case 'join':
      return text.replace(/\n/g, ' ');
    case 'crlf':
      return text.replace(/\n/g, '\r\n');
    case 'bom':
      return `\ufeff${text}`;
    case 'utf16':
      return [...text].map(c => `${c}\0`).join('');
    case 'nul': {
      const p = at(text, m[1]);
      return `${text.slice(0, p)}\0${text.slice(p)}`;
    }
    case 'spaces': {
      const ls = lines();
      ls.splice(lineAt(m[1], ls), 0, '   ');
      return ls.join('\n');
    }
    case 'dropline': {
      const ls = lines();
      ls.splice(lineAt(m[1], ls), 1);
      return ls.join('\n');
    }
    case 'dupline': {
      const ls = lines();
      const i = lineAt(m[1], ls);
      ls.splice(i, 0, ...Array<string>(m[2]).fill(ls[i] ?? ''));
      return ls.join('\n');
    }
    case 'longword': {
      const p = at(text, m[1]);
      return `${text.slice(0, p)}${'x'.repeat(m[2])}${text.slice(p)}`;
    }
    case 'swap': {
      const ls = lines();
      const i = lineAt(m[1], ls);
      const j = lineAt(m[2], ls);
      [ls[i], ls[j]] = [ls[j]!, ls[i]!];
      return ls.join('\n');
    }
  }
}

const mutated = (seeds: readonly string[]) =>
  fc
    .tuple(fc.constantFrom(...seeds), fc.array(mutation, { minLength: 1, maxLength: 3 }))
    .map(([s, ms]) => ms.reduce(mutate, s));

export const dumpInput = fc.oneof(
  { arbitrary: generatedDump, weight: 4 },
  { arbitrary: mutated(SEEDS.dumps), weight: 4 },
  {
    arbitrary: fc.tuple(generatedDump, fc.array(mutation, { maxLength: 2 })).map(([s, ms]) => ms.reduce(mutate, s)),
    weight: 2,
  },
  { arbitrary: fc.string({ maxLength: 500 }), weight: 1 },
);

export const nftInput = fc.oneof(mutated(SEEDS.nft), fc.string({ maxLength: 300 }));

const yamlScalar = fc.oneof(
  fc.constantFrom(
    '80',
    '"eighty"',
    'tcp',
    'TCP',
    'null',
    '~',
    '[]',
    '{}',
    '-1',
    '65536',
    '10.96.0.10',
    'None',
    'LoadBalancer',
    'NodePort',
  ),
  fc.string({ maxLength: 12 }).map(s => JSON.stringify(s)),
);
const service = fc
  .record({
    name: fc.stringMatching(/^[a-z][a-z0-9-]{0,10}$/),
    port: yamlScalar,
    target: yamlScalar,
    type: yamlScalar,
    sel: yamlScalar,
  })
  .map(
    s =>
      `apiVersion: v1\nkind: Service\nmetadata:\n  name: ${s.name}\nspec:\n  type: ${s.type}\n  selector:\n    app: ${s.sel}\n  ports:\n  - port: ${s.port}\n    targetPort: ${s.target}\n`,
  );
const deployment = fc
  .record({ name: fc.stringMatching(/^[a-z][a-z0-9-]{0,10}$/), replicas: yamlScalar, app: yamlScalar })
  .map(
    d =>
      `apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: ${d.name}\nspec:\n  replicas: ${d.replicas}\n  selector:\n    matchLabels:\n      app: ${d.app}\n  template:\n    metadata:\n      labels:\n        app: ${d.app}\n    spec:\n      containers:\n      - name: c\n        image: x\n        ports:\n        - containerPort: 80\n`,
  );
/** `a: &a [x, x]`, `b: &b [*a, *a]`, … : 2^depth nodes from a few lines. */
const aliasBomb = fc.integer({ min: 3, max: 30 }).map(depth => {
  const lines = ['apiVersion: v1', 'kind: ConfigMap', 'metadata:', '  name: bomb', 'data:', '  l0: &l0 ["lol", "lol"]'];
  for (let i = 1; i < depth; i++) lines.push(`  l${i}: &l${i} [*l${i - 1}, *l${i - 1}]`);
  return `${lines.join('\n')}\n`;
});
const notKubernetes = fc.constantFrom(
  'name: x\nversion: 1\n',
  '- a\n- b\n',
  'just text',
  '{"json": true}',
  'kind: Service\n',
  'apiVersion: v1\nkind: Service\nspec: 5\n',
  '---\n---\n',
);
const list = fc
  .integer({ min: 0, max: 300 })
  .map(
    n =>
      `apiVersion: v1\nkind: List\nitems:\n${Array.from({ length: n }, (_, i) => `- apiVersion: v1\n  kind: Service\n  metadata: {name: s${i}}\n  spec: {ports: [{port: ${(i % 65535) + 1}}]}`).join('\n')}\n`,
  );

/**
 * A product the reader's entry count does not see: a Service of P ports over an EndpointSlice of P ports × E
 * endpoints, past the cluster model's budget (at least 550 × 550), sometimes with external IPs on every port.
 */
const product = fc
  .record({
    ports: fc.integer({ min: 550, max: 1000 }),
    endpoints: fc.integer({ min: 550, max: 1000 }),
    externalIPs: fc.nat(50),
  })
  .map(({ ports, endpoints, externalIPs }) => {
    const names = Array.from({ length: ports }, (_, i) => `p${i}`);
    const x = Array.from({ length: externalIPs }, (_, i) => `192.0.2.${i}`).join(', ');
    return [
      `apiVersion: v1\nkind: Service\nmetadata: {name: big}\nspec: {clusterIP: 10.96.0.10, externalIPs: [${x}], ports: [${names.map((n, i) => `{name: ${n}, port: ${1000 + i}}`).join(', ')}]}\n`,
      `apiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata: {name: big-1, labels: {kubernetes.io/service-name: big}}\naddressType: IPv4\nports: [${names.map((n, i) => `{name: ${n}, port: ${8000 + i}}`).join(', ')}]\nendpoints: [${Array.from({ length: endpoints }, (_, i) => `{addresses: [10.1.${i >> 8}.${i & 255}]}`).join(', ')}]\n`,
    ].join('---\n');
  });

export const manifestInput = fc.oneof(
  fc.array(fc.oneof(service, deployment), { minLength: 1, maxLength: 5 }).map(docs => docs.join('---\n')),
  aliasBomb,
  product,
  notKubernetes,
  list,
  mutated(SEEDS.manifests),
  fc
    .tuple(
      fc.array(fc.oneof(service, deployment), { minLength: 1, maxLength: 3 }),
      fc.array(mutation, { minLength: 1, maxLength: 2 }),
    )
    .map(([d, ms]) => ms.reduce(mutate, d.join('---\n'))),
);
