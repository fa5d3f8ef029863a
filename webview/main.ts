/**
 * The webview of both panels: the flow diagram (receives the diagram model, draws it, sends back clicks —
 * reveal a rule — and edited packets — trace again) and the behaviour comparison (draws the report, sends
 * back which class to trace on which side). It keeps its UI state with `setState` so a reload restores it.
 */
import type { DiagramModel, ExtensionToWebview, PanelState, TraceOrigin } from '../src/shared/protocol.ts';
import { renderDiff } from './diff-render.ts';
import { packetForm } from './packet-form.ts';
import { render, renderMessage } from './render.ts';
import { registerToolkit } from './toolkit.ts';
import { vscode } from './vscode-api.ts';

registerToolkit();

const app = document.getElementById('app')!;
let model: DiagramModel | null = null;
let uri = '';
let origin: TraceOrigin = 'dump';

function restoredState(): PanelState | null {
  const s = vscode.getState() as Partial<PanelState> | undefined;
  if (!s || typeof s.uri !== 'string' || typeof s.packet !== 'string' || !Array.isArray(s.collapsed)) return null;
  return {
    uri: s.uri,
    packet: s.packet,
    selectedOutcome: typeof s.selectedOutcome === 'number' ? s.selectedOutcome : null,
    collapsed: s.collapsed.filter((c): c is string => typeof c === 'string'),
    origin: s.origin === 'manifests' ? 'manifests' : 'dump',
  };
}

const saved = restoredState();
const collapsed = new Set<string>(saved?.collapsed ?? []);
let selectedOutcome: number | null = saved?.selectedOutcome ?? null;

function save(): void {
  if (model) vscode.setState({ uri, packet: model.packet, selectedOutcome, collapsed: [...collapsed], origin });
}

function draw(): void {
  if (!model) return;
  const form = packetForm(
    model.fields,
    fields => {
      renderMessage(app, 'Tracing…', 'busy');
      vscode.postMessage({ type: 'retrace', fields });
    },
    () => vscode.postMessage({ type: 'openSettings' }),
  );
  render(
    app,
    model,
    { collapsed, selectedOutcome },
    {
      reveal: line => vscode.postMessage({ type: 'reveal', line }),
      toggle: id => {
        if (collapsed.has(id)) collapsed.delete(id);
        else collapsed.add(id);
        save();
        draw();
      },
      select: i => {
        selectedOutcome = selectedOutcome === i ? null : i;
        save();
        draw();
      },
    },
    form,
  );
}

window.addEventListener('message', (event: MessageEvent<ExtensionToWebview>) => {
  const m = event.data;
  if (m.type === 'model') {
    if (model && model.packet !== m.model.packet) {
      collapsed.clear();
      selectedOutcome = null;
    }
    model = m.model;
    uri = m.uri;
    origin = m.origin;
    save();
    draw();
  } else if (m.type === 'diff') {
    model = null;
    vscode.setState(m.state);
    renderDiff(app, m.model, {
      trace: (side, change) => vscode.postMessage({ type: 'traceClass', side, change }),
      reveal: (side, line) => vscode.postMessage({ type: 'revealRule', side, line }),
    });
  } else if (m.type === 'error') renderMessage(app, m.message, 'error');
  else if (m.type === 'busy') renderMessage(app, m.message, 'busy');
});

vscode.postMessage({ type: 'ready' });
