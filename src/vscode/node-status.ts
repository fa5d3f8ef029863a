/**
 * The status bar's Node item for the active dump ("Node 172.18.0.4 · eth0", "Node: assumed") and the quick
 * pick behind it (Packet Lens: Set Node for This File…): the addresses the files suggest, "Type one…", the
 * uplink, interfaces and routes as quick inputs (no JSON), and the settings. Choices are kept per file or
 * folder in workspace state (node-contexts.ts); what they mean is decided in src/editor/node-context.ts.
 */
import * as vscode from 'vscode';
import { info } from './notify.ts';
import {
  type NodeChoice,
  type NodeContext,
  type Parsed,
  nodeFilesDisagree,
  nodeStatusText,
  nodeStatusTooltip,
  parseAddressesInput,
  parseInterfaceInput,
  parseRouteInput,
  parentOf,
  withField,
} from '../editor/node-context.ts';
import { COMMANDS, RULESET_LANGUAGES } from './commands.ts';
import { toCommandMarkdown } from './convert.ts';
import type { DumpStore } from './dump-store.ts';
import { fileName } from './dump-store.ts';
import { type NodeContexts, scopeLabel } from './node-contexts.ts';
import { SECTION } from './settings.ts';

type Action = 'address' | 'type' | 'uplink' | 'interfaces' | 'routes' | 'localnet' | 'forget' | 'settings';
interface Item extends vscode.QuickPickItem {
  readonly action?: Action;
  readonly address?: string;
}

export class NodeStatus implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem('packetlens.node', vscode.StatusBarAlignment.Right, 101);
  private generation = 0;

  constructor(
    private readonly store: DumpStore,
    private readonly contexts: NodeContexts,
  ) {
    this.item.name = 'Packet Lens: Node';
    this.item.command = COMMANDS.setNode;
  }

  /** Shows the node context of the active dump (after its parse; nothing for other files). */
  async update(): Promise<void> {
    const generation = ++this.generation;
    const doc = vscode.window.activeTextEditor?.document;
    if (doc && !RULESET_LANGUAGES.includes(doc.languageId)) {
      const nodes = await this.contexts.manifestNodes(doc).catch(() => null);
      if (generation !== this.generation) return;
      if (nodes) return this.showManifestNodes(nodes);
    }
    if (!doc || !RULESET_LANGUAGES.includes(doc.languageId)) {
      this.item.hide();
      return;
    }
    this.item.command = COMMANDS.setNode;
    const a = this.store.peek(doc);
    if (!a) {
      this.item.text = '$(server-environment) Node…';
      this.item.tooltip = 'Packet Lens: reading the dump to see which node it is from…';
      this.item.show();
      return;
    }
    const ctx = await this.contexts.contextFor(a);
    if (generation !== this.generation) return;
    const disagree = nodeFilesDisagree(ctx);
    this.item.text = `$(${disagree ? 'warning' : 'server-environment'}) ${nodeStatusText(ctx)}`;
    this.item.tooltip = toCommandMarkdown(
      `${nodeStatusTooltip(ctx, fileName(a.uri))}\n\n[Set Node for This File…](command:${COMMANDS.setNode})`,
      [COMMANDS.setNode],
    );
    this.item.backgroundColor =
      ctx.kind === 'assumed' || disagree ? new vscode.ThemeColor('statusBarItem.warningBackground') : undefined;
    this.item.show();
  }

  /**
   * On a manifest, the nodes of its cluster: a packet's receiving node follows from the packet (the trace
   * says why), so the item lists them and opens their kube-proxy rules.
   */
  private showManifestNodes(nodes: readonly { name: string; ips: readonly string[] }[]): void {
    const names = nodes.map(n => n.name);
    this.item.text = nodes.length
      ? `$(server-environment) Nodes: ${names.slice(0, 2).join(', ')}${names.length > 2 ? ` +${names.length - 2}` : ''}`
      : '$(server-environment) Nodes: none (predicted)';
    this.item.tooltip = toCommandMarkdown(
      [
        '**Packet Lens: the nodes of these manifests**',
        nodes.length
          ? nodes.map(n => `- ${n.name} ${n.ips.join(', ')}`).join('\n')
          : 'No Node objects or kind config: a default cluster is predicted.',
        "A traced packet's receiving node follows from the packet; the trace says why.",
        `[Show kube-proxy Rules for Node…](command:${COMMANDS.showKubeProxyRules})`,
      ].join('\n\n'),
      [COMMANDS.showKubeProxyRules],
    );
    this.item.command = COMMANDS.showKubeProxyRules;
    this.item.backgroundColor = undefined;
    this.item.show();
  }

  /** Packet Lens: Set Node for This File… — on the active dump, or the one given. */
  async pick(arg?: vscode.Uri): Promise<void> {
    const uri = arg instanceof vscode.Uri ? arg : vscode.window.activeTextEditor?.document.uri;
    const doc = uri && vscode.workspace.textDocuments.find(d => d.uri.toString() === uri.toString());
    if (!uri || !doc || !RULESET_LANGUAGES.includes(doc.languageId)) {
      void info(
        'Packet Lens: open an iptables-save dump or nftables ruleset first: the node is set for each dump (or for its folder).',
      );
      return;
    }
    const a = await this.store.get(doc);
    const [ctx, suggestions] = await Promise.all([this.contexts.contextFor(a), this.contexts.suggestions(a)]);
    const items: Item[] = [];
    if (suggestions.length) items.push({ label: 'Suggested by the files', kind: vscode.QuickPickItemKind.Separator });
    for (const s of suggestions)
      items.push({
        label: `$(lightbulb) ${s.address}`,
        description: `${s.from}${ctx.addresses[0] === s.address ? ' · in use' : ''}`,
        detail: s.why,
        action: 'address',
        address: s.address,
      });
    const chosen = this.contexts.choiceOf(uri);
    items.push(
      { label: 'Set', kind: vscode.QuickPickItemKind.Separator },
      { label: '$(edit) Type one…', description: 'the node’s own IP address(es)', action: 'type' },
      {
        label: `$(arrow-both) Uplink: ${ctx.uplink}…`,
        description: 'the interface of the default route',
        action: 'uplink',
      },
      {
        label: `$(symbol-interface) Interfaces…`,
        description: ctx.interfaces.length ? ctx.interfaces.map(i => i.name).join(', ') : 'none besides the uplink',
        action: 'interfaces',
      },
      {
        label: `$(git-merge) Routes…`,
        description: ctx.routes.length ? `${ctx.routes.length} route${ctx.routes.length === 1 ? '' : 's'}` : 'none',
        action: 'routes',
      },
      {
        label: `$(${ctx.routeLocalnet ? 'check' : 'circle-large-outline'}) route_localnet`,
        description: ctx.routeLocalnet ? 'on: click to turn it off' : 'off: click to turn it on (kube-proxy sets it)',
        action: 'localnet',
      },
    );
    if (chosen)
      items.push({
        label: `$(discard) Forget the choice for ${scopeLabel(chosen.key, uri)}`,
        description: 'use the settings and what the files suggest',
        action: 'forget',
      });
    items.push({ label: '$(gear) Open Settings', description: 'packetlens.node.* for every file', action: 'settings' });
    const pick = await vscode.window.showQuickPick(items, {
      title: `Packet Lens: node of ${fileName(uri)} — ${nodeStatusText(ctx)} (${ctx.origin})`,
      placeHolder: 'Choose the node’s address, or set its interfaces and routes',
      matchOnDescription: true,
      matchOnDetail: true,
    });
    if (pick?.action) await this.act(pick, uri, ctx, chosen?.choice);
  }

  private async act(pick: Item, uri: vscode.Uri, ctx: NodeContext, current: NodeChoice | undefined): Promise<void> {
    const save = async (choice: NodeChoice) => {
      const key = await this.askScope(uri);
      if (key) await this.contexts.choose(key, choice);
    };
    switch (pick.action) {
      case 'address':
        return save(withField(ctx, current, 'addresses', [pick.address!]));
      case 'type': {
        const value = await input(
          'The node’s IP address(es), e.g. 172.18.0.4',
          ctx.addresses.join(', '),
          parseAddressesInput,
        );
        return value ? save(withField(ctx, current, 'addresses', value)) : undefined;
      }
      case 'uplink': {
        const value = await input(
          'The interface of the default route (outside packets arrive on it), e.g. eth0',
          ctx.uplink,
          t =>
            /^[A-Za-z0-9_.:@-]{1,15}$/.test(t.trim())
              ? { ok: true, value: t.trim() }
              : { ok: false, error: 'Type an interface name, e.g. eth0.' },
        );
        return value ? save(withField(ctx, current, 'uplink', value)) : undefined;
      }
      case 'interfaces': {
        const list = await editList(
          'Interfaces',
          ctx.interfaces,
          i => `${i.name} ${i.addresses.join(' ')}`,
          'Add an interface… (name and address, e.g. docker0 172.17.0.1/16)',
          parseInterfaceInput,
        );
        return list ? save(withField(ctx, current, 'interfaces', list)) : undefined;
      }
      case 'routes': {
        const list = await editList(
          'Routes (longest prefix wins)',
          ctx.routes,
          r => `${r.dst} → ${r.iface}`,
          'Add a route… (destination and interface, e.g. 10.244.1.0/24 cni0)',
          parseRouteInput,
        );
        return list ? save(withField(ctx, current, 'routes', list)) : undefined;
      }
      case 'localnet':
        return save(withField(ctx, current, 'routeLocalnet', !ctx.routeLocalnet));
      case 'forget': {
        const found = this.contexts.choiceOf(uri);
        if (found) await this.contexts.choose(found.key, null);
        return;
      }
      case 'settings':
        await vscode.commands.executeCommand('workbench.action.openSettings', `${SECTION}.node`);
        return;
    }
  }

  /** For this file, or for every dump of its folder? Returns the key to store the choice under. */
  private async askScope(uri: vscode.Uri): Promise<string | undefined> {
    const file = uri.toString();
    const folder = parentOf(file);
    if (!folder || uri.scheme === 'untitled') return file;
    const pick = await vscode.window.showQuickPick(
      [
        { label: `$(file) ${fileName(uri)}`, description: 'this file only', key: file },
        {
          label: `$(folder) ${scopeLabel(folder, uri)}`,
          description: 'every dump in this folder and below',
          key: folder,
        },
      ],
      { title: 'Packet Lens: use this node context for…' },
    );
    return pick?.key;
  }

  dispose(): void {
    this.item.dispose();
  }
}

/** One value typed into an input box, checked as it is typed. */
async function input<T>(prompt: string, value: string, parse: (text: string) => Parsed<T>): Promise<T | undefined> {
  const text = await vscode.window.showInputBox({
    title: 'Packet Lens: Set Node',
    prompt,
    value,
    validateInput: t => {
      const r = parse(t);
      return r.ok ? null : r.error;
    },
  });
  if (text === undefined) return undefined;
  const r = parse(text);
  return r.ok ? r.value : undefined;
}

/**
 * A list edited in quick picks: each entry with a remove button, an "Add…" entry that asks for one more,
 * and "Done". Returns the new list, or undefined when dismissed.
 */
async function editList<T>(
  title: string,
  start: readonly T[],
  show: (t: T) => string,
  addLabel: string,
  parse: (text: string) => Parsed<T>,
): Promise<T[] | undefined> {
  const list = [...start];
  const remove: vscode.QuickInputButton = { iconPath: new vscode.ThemeIcon('trash'), tooltip: 'Remove' };
  for (;;) {
    const qp = vscode.window.createQuickPick<
      vscode.QuickPickItem & { index?: number; add?: boolean; done?: boolean }
    >();
    qp.title = `Packet Lens: ${title}`;
    qp.items = [
      ...list.map((t, index) => ({ label: show(t), index, buttons: [remove] })),
      { label: `$(add) ${addLabel}`, add: true },
      { label: '$(check) Done', done: true },
    ];
    const result = await new Promise<'dismissed' | 'done' | 'add' | number>(resolve => {
      qp.onDidTriggerItemButton(e => resolve((e.item as { index?: number }).index ?? 'dismissed'));
      qp.onDidAccept(() => {
        // An entry itself does nothing when picked (its button removes it): the list stays open.
        const it = qp.selectedItems[0];
        if (it?.add) resolve('add');
        else if (it?.done) resolve('done');
      });
      qp.onDidHide(() => resolve('dismissed'));
      qp.show();
    });
    qp.dispose();
    if (result === 'dismissed') return undefined;
    if (result === 'done') return list;
    if (result === 'add') {
      const value = await input(addLabel.replace(/….*$/, ''), '', parse);
      if (value !== undefined) list.push(value);
    } else list.splice(result, 1);
  }
}
