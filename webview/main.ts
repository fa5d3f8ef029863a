/**
 * The webview of both panels: the flow diagram (receives the diagram model, draws it, sends back clicks —
 * reveal a rule — and edited packets — trace again) and the behaviour comparison (draws the report, sends
 * back which class to trace on which side). It keeps its UI state with `setState` so a reload restores it.
 */
import type { DiagramModel, ExtensionToWebview, PanelState, TraceOrigin } from '../src/shared/protocol.ts';
import { renderDiff } from './diff-render.ts';
import { packetForm } from './packet-form.ts';
import { pngOf, standaloneSvg } from './graph-export.ts';
import { render, renderMessage } from './render.ts';
import { vscode } from './vscode-api.ts';

const app = document.getElementById('app')!;
// When the script started, each model arrived and was drawn (ms since the epoch): the e2e reads them to
// split a Trace Packet's time between the extension, the webview's loading and the drawing.
document.body.dataset['loadedAt'] = String(Date.now());
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
    showWalks: s.showWalks === true,
    fit: s.fit === true,
    focus: typeof s.focus === 'string' ? s.focus : null,
  };
}

const saved = restoredState();
let selectedOutcome: number | null = saved?.selectedOutcome ?? null;
let showWalks = saved?.showWalks ?? false;
let fit: boolean | null = saved?.fit ?? null;
let focus: string | null = saved?.focus ?? null;

function save(): void {
  if (model)
    vscode.setState({
      uri,
      packet: model.packet,
      selectedOutcome,
      collapsed: [],
      origin,
      showWalks,
      ...(fit === null ? {} : { fit }),
      focus,
    });
}

async function exportGraph(format: 'svg' | 'png'): Promise<void> {
  const root = document.querySelector<SVGSVGElement>('svg.flow-graph');
  if (!root) return;
  const text = standaloneSvg(root);
  if (format === 'svg') vscode.postMessage({ type: 'export', format, data: text });
  else {
    const vb = root.viewBox.baseVal;
    try {
      vscode.postMessage({ type: 'export', format, data: await pngOf(text, vb.width, vb.height) });
    } catch (e) {
      renderMessage(
        app,
        `Packet Lens: the PNG could not be made (${e instanceof Error ? e.message : String(e)})`,
        'error',
      );
    }
  }
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
    { selectedOutcome, showWalks, fit, focus },
    {
      reveal: line => vscode.postMessage({ type: 'reveal', line }),
      toggleWalks: () => {
        showWalks = !showWalks;
        save();
        draw();
      },
      toggleFit: fitted => {
        fit = !fitted;
        save();
        draw();
      },
      focused: id => {
        focus = id;
        save();
      },
      exportAs: format => void exportGraph(format),
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
      selectedOutcome = null;
      focus = null;
    }
    document.body.dataset['modelAt'] = String(Date.now());
    model = m.model;
    uri = m.uri;
    origin = m.origin;
    save();
    draw();
    document.body.dataset['drawnAt'] = String(Date.now());
    vscode.postMessage({ type: 'drawn', packet: m.model.packet });
  } else if (m.type === 'diff') {
    model = null;
    vscode.setState(m.state);
    renderDiff(app, m.model, {
      trace: (side, change) => vscode.postMessage({ type: 'traceClass', side, change }),
      reveal: (side, line) => vscode.postMessage({ type: 'revealRule', side, line }),
      copyMarkdown: () => vscode.postMessage({ type: 'copyMarkdown' }),
    });
  } else if (m.type === 'error') renderMessage(app, m.message, 'error');
  else if (m.type === 'busy') renderMessage(app, m.message, 'busy');
});

vscode.postMessage({ type: 'ready' });
