/**
 * "Which node is this file's?" — the node context a trace, a comparison and the status bar use for one
 * dump, resolved from ordered sources, the first that knows a field wins:
 *
 * 1. the user's choice for the file, else for the nearest folder that has one (the status item's quick
 *    pick, kept in workspace state);
 * 2. the settings (`packetlens.node.*`, resource-scoped: user, workspace or folder);
 * 3. the node's own files (`ip -j addr`, `ip -j route`, `ip -j rule`, `sysctl -a`) beside the dump or named
 *    by `packetlens.node.contextFiles` (node-files.ts): read by the engine with their interfaces, routes and
 *    sysctls, so the trace routes and masquerades as that node does;
 * 4. what the files suggest: the Node object of the manifests next to the dump whose name is in the dump's
 *    file name (kube/dump-node.ts), and the addresses the dump itself implies (eval/node-inference.ts) —
 *    used as *inferred* addresses, so every answer that depends on them says where they came from;
 * 5. nothing: the node's address is the symbolic `node(eth0)` and every trace says so.
 *
 * A source is a value of `NodeLayer`; a new one (node-context files next to the dump) is one more layer in
 * the list handed to `resolveNodeContext`, in its place. Pure: no `vscode`, unit-tested.
 */
import { type InferredAddress, type NodeConfig, parseAddr, parseNet } from '../engine/api.ts';
import { type NodeFileText, type NodeFilesSummary, baseName } from './node-files.ts';

/** One interface: its name and addresses in CIDR form. */
export interface NodeInterface {
  readonly name: string;
  readonly addresses: readonly string[];
}

export interface NodeRoute {
  readonly dst: string;
  readonly iface: string;
}

/** What the user chose for a file or folder (plain data, kept in workspace state). Absent fields defer. */
export interface NodeChoice {
  readonly addresses?: readonly string[];
  readonly uplink?: string;
  readonly interfaces?: readonly NodeInterface[];
  readonly routes?: readonly NodeRoute[];
  readonly routeLocalnet?: boolean;
}

export type NodeSourceKind = 'chosen' | 'settings' | 'files' | 'inferred' | 'assumed';

/** One source of node facts: the fields it knows (absent: ask the next source) and how to name it. */
export interface NodeLayer {
  readonly kind: NodeSourceKind;
  /** How the source is named to the user: `chosen for seed-003/`, `settings`, `node-a.rules:76`. */
  readonly origin: string;
  readonly addresses?: readonly string[];
  /** Addresses the files imply: the trace uses them labelled (never as if the user had said them). */
  readonly inferred?: readonly InferredAddress[];
  readonly uplink?: string;
  readonly interfaces?: readonly NodeInterface[];
  readonly routes?: readonly NodeRoute[];
  readonly routeLocalnet?: boolean;
  /**
   * The engine reads `inferred` off the dump itself, with the same labels (the CLI without flags gives the
   * same answer): it is given none, so it also keeps the extra local addresses it finds (IPVS's).
   */
  readonly engineInfers?: boolean;
  /** The node's files (kind `files`): sent with every trace, read by the engine worker. */
  readonly nodeFiles?: readonly NodeFileText[];
  readonly filesSummary?: NodeFilesSummary;
  /** Where the files were found: `beside the dump`, `packetlens.node.contextFiles`. */
  readonly where?: string;
}

/** The node's files in use for a dump, what the worker made of them, and where they were found. */
export interface NodeFilesInUse {
  readonly origin: string;
  readonly where: string;
  readonly summary: NodeFilesSummary;
}

/** The node context in use for one file. */
export interface NodeContext {
  /** Where the node's addresses came from. */
  readonly kind: NodeSourceKind;
  readonly origin: string;
  /** The node's addresses as shown: given, or inferred (then `inferred` holds their evidence). */
  readonly addresses: readonly string[];
  readonly inferred: readonly InferredAddress[];
  readonly uplink: string;
  readonly interfaces: readonly NodeInterface[];
  readonly routes: readonly NodeRoute[];
  readonly routeLocalnet: boolean;
  /** What the engine is given for a trace or a comparison. */
  readonly node: NodeConfig;
  /** The node's files the trace reads (sent with each trace to the worker); empty without them. */
  readonly nodeFiles: readonly NodeFileText[];
  readonly files: NodeFilesInUse | null;
  /** Where each field came from, for the tooltip: `interfaces: settings`. */
  readonly fieldOrigins: Readonly<Record<'uplink' | 'interfaces' | 'routes', string>>;
}

const DEFAULT_UPLINK = 'eth0';

/**
 * The choice that applies to `uri`: the file's own, else the nearest enclosing folder's (keys are URIs as
 * strings; a folder key ends in `/`). Returns the key it was found under.
 */
export function choiceFor(
  uri: string,
  choices: Readonly<Record<string, NodeChoice>>,
): { key: string; choice: NodeChoice } | null {
  for (let key: string | null = uri; key; key = parentOf(key.endsWith('/') ? key.slice(0, -1) : key)) {
    const choice = choices[key];
    if (choice) return { key, choice };
  }
  return null;
}

/** `file:///a/b/c.rules` → `file:///a/b/`; null above the root of the path. */
export function parentOf(uri: string): string | null {
  const scheme = uri.indexOf('://');
  const pathStart = scheme < 0 ? 0 : uri.indexOf('/', scheme + 3);
  const cut = uri.lastIndexOf('/');
  if (pathStart < 0 || cut < pathStart) return null;
  return uri.slice(0, cut + 1);
}

/** The layer of a stored choice; `scopeLabel` names the file or folder it was made for. */
export function choiceLayer(choice: NodeChoice, scopeLabel: string): NodeLayer {
  return {
    kind: 'chosen',
    origin: `chosen for ${scopeLabel}`,
    ...(choice.addresses?.length ? { addresses: choice.addresses } : {}),
    ...(choice.uplink ? { uplink: choice.uplink } : {}),
    ...(choice.interfaces ? { interfaces: choice.interfaces } : {}),
    ...(choice.routes ? { routes: choice.routes } : {}),
    ...(choice.routeLocalnet !== undefined ? { routeLocalnet: choice.routeLocalnet } : {}),
  };
}

/**
 * The layer of the settings: a field counts as set when it differs from the contributed default, so the
 * files' suggestions are used while the settings say nothing.
 */
export function settingsLayer(node: NodeConfig): NodeLayer {
  const interfaces = (node.interfaces ?? []).map(i => ({ name: i.name, addresses: [...(i.addresses ?? [])] }));
  return {
    kind: 'settings',
    origin: 'settings',
    ...(node.addresses?.length ? { addresses: node.addresses } : {}),
    ...(node.uplink && node.uplink !== DEFAULT_UPLINK ? { uplink: node.uplink } : {}),
    ...(interfaces.length ? { interfaces } : {}),
    ...(node.routes?.length ? { routes: node.routes } : {}),
    ...(node.routeLocalnet ? { routeLocalnet: true } : {}),
  };
}

/**
 * The layer of what the files suggest: the Node object of the manifests beside the dump first (kube-proxy
 * runs on it), then the addresses the dump implies (extra local addresses, like IPVS's, are not the node's).
 */
export function inferredLayer(
  fromManifests: readonly InferredAddress[],
  fromDump: readonly InferredAddress[],
): NodeLayer {
  const inferred = fromManifests.length ? fromManifests : fromDump.filter(i => !i.extra);
  const first = inferred[0];
  return {
    kind: 'inferred',
    origin: first ? `inferred from ${shortLocation(first.from)}` : 'inferred',
    ...(inferred.length ? { inferred } : {}),
    ...(fromManifests.length ? {} : { engineInfers: true }),
  };
}

/** Resolves the node context from layers in order, most explicit first: the first layer knowing a field wins. */
export function resolveNodeContext(layers: readonly NodeLayer[]): NodeContext {
  const first = <K extends keyof NodeLayer>(key: K): NodeLayer | undefined => layers.find(l => l[key] !== undefined);
  const given = first('addresses');
  const guessed = given ? undefined : first('inferred');
  const addrLayer = given ?? guessed;
  const uplinkLayer = first('uplink');
  const ifaceLayer = first('interfaces');
  const routeLayer = first('routes');
  const addresses = given?.addresses ?? guessed?.inferred?.map(i => i.address) ?? [];
  const inferred = guessed?.inferred ?? [];
  const uplink = uplinkLayer?.uplink ?? DEFAULT_UPLINK;
  const interfaces = ifaceLayer?.interfaces ?? [];
  const routes = routeLayer?.routes ?? [];
  const routeLocalnet = first('routeLocalnet')?.routeLocalnet ?? false;
  const filesLayer = layers.find(l => l.kind === 'files' && l.filesSummary);
  const node: NodeConfig = {
    // The files' addresses reach the engine with their interfaces, through the files themselves.
    addresses: given && given.kind !== 'files' ? (given.addresses ?? []) : [],
    uplink,
    interfaces,
    routes,
    routeLocalnet,
    ...(inferred.length && !guessed?.engineInfers ? { inferred } : {}),
  };
  return {
    kind: addrLayer?.kind ?? 'assumed',
    origin: addrLayer?.origin ?? 'assumed',
    addresses,
    inferred,
    uplink,
    interfaces,
    routes,
    routeLocalnet,
    node,
    nodeFiles: filesLayer?.nodeFiles ?? [],
    files: filesLayer
      ? { origin: filesLayer.origin, where: filesLayer.where ?? '', summary: filesLayer.filesSummary! }
      : null,
    fieldOrigins: {
      uplink: uplinkLayer?.origin ?? 'default',
      interfaces: ifaceLayer?.origin ?? 'none',
      routes: routeLayer?.origin ?? 'none',
    },
  };
}

/** `file:///w/examples/seed-003/nodes.yaml:12` → `nodes.yaml:12`. */
export function shortLocation(from: string): string {
  const m = /([^/\\]+)$/.exec(from);
  return m ? m[1]! : from;
}

/** The status bar text: `Node 172.18.0.4 · eth0`, `Node 172.18.0.4 (inferred) · eth0`, `Node: assumed`. */
export function nodeStatusText(ctx: NodeContext): string {
  if (ctx.kind === 'assumed' || ctx.addresses.length === 0)
    return `Node: assumed${ctx.uplink !== DEFAULT_UPLINK ? ` · ${ctx.uplink}` : ''}`;
  const more = ctx.addresses.length > 1 ? ` +${ctx.addresses.length - 1}` : '';
  const from =
    ctx.kind === 'files' ? ` · ${ctx.origin}` : ctx.files ? ` · files: ${ctx.files.summary.used.length}` : '';
  return `Node ${ctx.addresses[0]}${more}${ctx.kind === 'inferred' ? ' (inferred)' : ''} · ${ctx.uplink}${from}`;
}

/** The status item's tooltip, in Markdown (every word names something the user can click or set). */
export function nodeStatusTooltip(ctx: NodeContext, file: string): string {
  const lines = [`**Packet Lens: node context for ${file}**`];
  if (ctx.kind === 'assumed')
    lines.push(
      "No node address is known: traces use a stand-in shown as `node(eth0)` and say so. Click to choose the node's address.",
    );
  else if (ctx.kind === 'inferred')
    lines.push(
      `Addresses ${ctx.addresses.join(', ')} read off the files (${ctx.inferred.map(i => shortLocation(i.from)).join(', ')}); traces say they were inferred. Click to confirm or choose another.`,
    );
  else if (ctx.kind === 'files' && ctx.files)
    lines.push(
      `Addresses ${ctx.addresses.join(', ')} read from the node's own \`ip addr\` (${baseName(ctx.files.summary.addressFile ?? '')}${ctx.files.summary.addressIface ? `; primary on ${ctx.files.summary.addressIface}` : ''}).`,
    );
  else lines.push(`Addresses ${ctx.addresses.join(', ')} (${ctx.origin}).`);
  if (ctx.files) lines.push(...nodeFilesTooltip(ctx.files));
  lines.push(
    `Uplink ${ctx.uplink} (${ctx.fieldOrigins.uplink}) · interfaces: ${ctx.interfaces.length ? ctx.interfaces.map(i => `${i.name} ${i.addresses.join(' ')}`).join(', ') : 'none'} · routes: ${ctx.routes.length ? ctx.routes.map(r => `${r.dst} → ${r.iface}`).join(', ') : 'none'}${ctx.routeLocalnet ? ' · route_localnet' : ''}.`,
  );
  return lines.join('\n\n');
}

/** The node files' part of the tooltip: which files, what they gave, what they leave out or contradict. */
export function nodeFilesTooltip(files: NodeFilesInUse): string[] {
  const s = files.summary;
  const out = [
    `Node files ${files.where}: ${s.used.map(u => `${baseName(u.file)} (${u.kind})`).join(', ')} — traces route, masquerade and check rp_filter as this node does${s.routeCount ? ` (${s.routeCount} routes${s.uplink ? `, default via ${s.uplink}` : ', no default route'}${s.ruleCount ? `, ${s.ruleCount} policy rules` : ''})` : ''}.`,
  ];
  if (s.ipvsServices)
    out.push(
      `IPVS: ${baseName(s.used.find(u => u.kind === 'ipvsadm')?.file ?? '')} (${s.ipvsServices} virtual service${s.ipvsServices === 1 ? '' : 's'}) schedules new connections at LOCAL_IN and LOCAL_OUT, as in the kernel.`,
    );
  if (s.unused.length)
    out.push(`Not read by the editor's traces: ${s.unused.map(u => `${baseName(u.file)} (${u.kind})`).join(', ')}.`);
  for (const n of s.notes)
    out.push(`${n.severity === 'warning' ? '$(warning) ' : ''}${n.message}${/[.?!]$/.test(n.message) ? '' : '.'}`);
  return out;
}

/** True when the node's files contradict the dump or have errors: the status item says so. */
export function nodeFilesDisagree(ctx: NodeContext): boolean {
  return !!ctx.files?.summary.notes.some(n => n.severity === 'warning');
}

export type Parsed<T> = { ok: true; value: T } | { ok: false; error: string };

/** "172.18.0.4, fc00::4" → the addresses; every word must be an IP address. */
export function parseAddressesInput(text: string): Parsed<string[]> {
  const words = text.split(/[\s,]+/).filter(Boolean);
  if (!words.length)
    return { ok: false, error: 'Type an IP address, e.g. 172.18.0.4 (several: separate them with commas).' };
  const bad = words.find(w => !parseAddr(w));
  return bad
    ? { ok: false, error: `${bad} is not an IP address (e.g. 172.18.0.4 or fd00::4).` }
    : { ok: true, value: words };
}

const IFACE_NAME = /^[A-Za-z0-9_.:@-]{1,15}$/; // IFNAMSIZ is 16 with the NUL (linux/if.h)

/** "docker0 172.17.0.1/16" (more addresses may follow) → an interface. */
export function parseInterfaceInput(text: string): Parsed<NodeInterface> {
  const [name, ...addresses] = text.split(/[\s,=]+/).filter(Boolean);
  if (!name || !IFACE_NAME.test(name))
    return {
      ok: false,
      error: 'Type an interface name and its address, e.g. docker0 172.17.0.1/16 (names are up to 15 characters).',
    };
  const bad = addresses.find(a => !parseNet(a) || !a.includes('/'));
  if (bad) return { ok: false, error: `${bad} is not an address/prefix (e.g. 172.17.0.1/16).` };
  return { ok: true, value: { name, addresses } };
}

/** "10.244.1.0/24 cni0" (or "10.244.1.0/24 → cni0") → a route. */
export function parseRouteInput(text: string): Parsed<NodeRoute> {
  const [dst, iface, ...rest] = text.split(/[\s,=]+|->|→/).filter(Boolean);
  if (!dst || !iface || rest.length)
    return { ok: false, error: 'Type a destination and an interface, e.g. 10.244.1.0/24 cni0.' };
  if (!parseNet(dst)) return { ok: false, error: `${dst} is not a destination in CIDR form (e.g. 10.244.1.0/24).` };
  if (!IFACE_NAME.test(iface)) return { ok: false, error: `${iface} is not an interface name.` };
  return { ok: true, value: { dst, iface } };
}

/** One address the files suggest, for the quick pick: the address, where it was read, why. */
export interface NodeSuggestion {
  readonly address: string;
  readonly from: string;
  readonly why: string;
}

/** Suggestions without repeats, the Node object's first; extra local addresses (IPVS) are not offered. */
export function nodeSuggestions(
  fromManifests: readonly InferredAddress[],
  fromDump: readonly InferredAddress[],
  hints: readonly NodeSuggestion[] = [],
): NodeSuggestion[] {
  const out: NodeSuggestion[] = [];
  for (const i of [...fromManifests, ...fromDump.filter(d => !d.extra), ...hints])
    if (!out.some(o => o.address === i.address))
      out.push({ address: i.address, from: shortLocation(i.from), why: i.why });
  return out;
}

/** A choice with one field replaced, starting from the context in use (so the rest stays as it is). */
export function withField<K extends keyof NodeChoice>(
  ctx: NodeContext,
  current: NodeChoice | undefined,
  key: K,
  value: NodeChoice[K],
): NodeChoice {
  const base: NodeChoice = current ?? {
    ...(ctx.kind === 'chosen' || ctx.kind === 'settings' ? { addresses: ctx.addresses } : {}),
  };
  return { ...base, [key]: value };
}
