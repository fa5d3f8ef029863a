/**
 * The small part of the VS Code API the glue tests need, with listener bookkeeping: every `Event` counts
 * its live listeners, so a test can see a leak.
 */
export class Disposable {
  constructor(private readonly fn: () => void) {}
  static from(...ds: { dispose(): unknown }[]): Disposable {
    return new Disposable(() => ds.forEach(d => d.dispose()));
  }
  dispose(): void {
    this.fn();
  }
}

export type Event<T> = (listener: (e: T) => unknown) => Disposable;

export class EventEmitter<T> {
  readonly listeners = new Set<(e: T) => unknown>();
  readonly event: Event<T> = listener => {
    this.listeners.add(listener);
    return new Disposable(() => this.listeners.delete(listener));
  };
  fire(e: T): void {
    for (const l of [...this.listeners]) l(e);
  }
  dispose(): void {
    this.listeners.clear();
  }
}

export class Uri {
  private constructor(
    readonly scheme: string,
    readonly path: string,
  ) {}
  static parse(s: string): Uri {
    const i = s.indexOf(':');
    if (i <= 0) throw new Error(`not a URI: ${s}`);
    return new Uri(s.slice(0, i), s.slice(i + 1).replace(/^\/\//, ''));
  }
  static file(p: string): Uri {
    return new Uri('file', p);
  }
  static joinPath(base: Uri, ...parts: string[]): Uri {
    return new Uri(base.scheme, [base.path, ...parts].join('/'));
  }
  toString(): string {
    return `${this.scheme}://${this.path}`;
  }
}

export enum ViewColumn {
  Active = -1,
  Beside = -2,
  One = 1,
}

export class FakeWebview {
  html = '';
  options: unknown = {};
  readonly cspSource = 'fake-csp';
  readonly received = new EventEmitter<unknown>();
  readonly posted: unknown[] = [];
  readonly onDidReceiveMessage = this.received.event;
  asWebviewUri(u: Uri): Uri {
    return u;
  }
  postMessage(m: unknown): Promise<boolean> {
    this.posted.push(m);
    return Promise.resolve(true);
  }
}

export class FakeWebviewPanel {
  readonly webview = new FakeWebview();
  readonly disposed = new EventEmitter<void>();
  readonly onDidDispose = this.disposed.event;
  visible = true;
  title: string;
  iconPath: unknown;
  /** The column it was opened in. */
  column: ViewColumn | null = null;
  private gone = false;
  constructor(
    readonly viewType: string,
    title: string,
  ) {
    this.title = title;
  }
  reveal(): void {
    this.visible = true;
  }
  /** What closing the panel does: fires onDidDispose once. */
  dispose(): void {
    if (this.gone) return;
    this.gone = true;
    this.disposed.fire();
  }
}

export const created: FakeWebviewPanel[] = [];

export enum QuickPickItemKind {
  Separator = -1,
  Default = 0,
}

/**
 * A quick pick the test drives: `type` puts text in the box (as a keystroke does; the rows the workbench
 * shows, `activeItems`, change only when the test says so), `accept` is Enter, `hide` Escape.
 */
export class FakeQuickPick<T> {
  title = '';
  placeholder = '';
  matchOnDescription = true;
  value = '';
  items: readonly T[] = [];
  activeItems: readonly T[] = [];
  selectedItems: readonly T[] = [];
  shown = false;
  disposed = false;
  private readonly changed = new EventEmitter<string>();
  private readonly accepted = new EventEmitter<void>();
  private readonly hidden = new EventEmitter<void>();
  readonly onDidChangeValue = this.changed.event;
  readonly onDidAccept = this.accepted.event;
  readonly onDidHide = this.hidden.event;
  show(): void {
    this.shown = true;
  }
  dispose(): void {
    this.disposed = true;
  }
  type(value: string): void {
    this.value = value;
    this.changed.fire(value);
  }
  accept(): void {
    this.accepted.fire();
  }
  hide(): void {
    this.hidden.fire();
  }
}

/** Quick picks created through the API, in order. */
export const quickPicks: FakeQuickPick<unknown>[] = [];

/** The notifications shown (information, warning, error), in order. */
export const shownMessages: string[] = [];

function show(message: string): Promise<undefined> {
  shownMessages.push(message);
  return Promise.resolve(undefined);
}

export const window = {
  showInformationMessage: show,
  showWarningMessage: show,
  showErrorMessage: show,
  createQuickPick<T>(): FakeQuickPick<T> {
    const qp = new FakeQuickPick<T>();
    quickPicks.push(qp as FakeQuickPick<unknown>);
    return qp;
  },
  createWebviewPanel(viewType: string, title: string, show?: { viewColumn?: ViewColumn }): FakeWebviewPanel {
    const p = new FakeWebviewPanel(viewType, title);
    p.column = show?.viewColumn ?? null;
    created.push(p);
    return p;
  },
};

/** Commands run through the API, in order (a new editor group, …). */
export const executed: string[] = [];

export const commands = {
  executeCommand(id: string): Promise<undefined> {
    executed.push(id);
    return Promise.resolve(undefined);
  },
};

export class Position {
  constructor(
    readonly line: number,
    readonly character: number,
  ) {}
}

export class Range {
  readonly start: Position;
  readonly end: Position;
  constructor(startLine: number, startCharacter: number, endLine: number, endCharacter: number) {
    this.start = new Position(startLine, startCharacter);
    this.end = new Position(endLine, endCharacter);
  }
}

/** A text document: `edit` replaces its text and bumps its version, as typing does. */
export class FakeTextDocument {
  version = 1;
  isClosed = false;
  readonly languageId = 'iptables-save';
  private starts: number[] = [];
  constructor(
    readonly uri: Uri,
    private text: string,
  ) {
    this.index();
  }
  private index(): void {
    this.starts = [0];
    for (let i = this.text.indexOf('\n'); i >= 0; i = this.text.indexOf('\n', i + 1)) this.starts.push(i + 1);
  }
  get lineCount(): number {
    return this.starts.length;
  }
  private offset(line: number, character: number): number {
    if (line >= this.starts.length) return this.text.length;
    return Math.min(this.starts[line]! + character, this.text.length);
  }
  getText(range?: Range): string {
    if (!range) return this.text;
    return this.text.slice(
      this.offset(range.start.line, range.start.character),
      this.offset(range.end.line, range.end.character),
    );
  }
  edit(text: string): void {
    this.text = text;
    this.version++;
    this.index();
  }
}

const noListener = () => ({ dispose() {} });

export const workspace = {
  /** The open documents (a test puts its own here). */
  textDocuments: [] as FakeTextDocument[],
  /** No workspace folder: every file is outside one. */
  workspaceFolders: undefined,
  getWorkspaceFolder(): undefined {
    return undefined;
  },
  asRelativePath(uri: Uri | string): string {
    return uri.toString();
  },
  createFileSystemWatcher() {
    return { onDidCreate: noListener, onDidDelete: noListener, onDidChange: noListener, dispose() {} };
  },
  onDidChangeWorkspaceFolders: noListener,
  fs: {
    stat(): Promise<never> {
      return Promise.reject(new Error('no file system in the fake'));
    },
    readFile(): Promise<never> {
      return Promise.reject(new Error('no file system in the fake'));
    },
  },
};

export enum DiagnosticSeverity {
  Error = 0,
  Warning = 1,
  Information = 2,
  Hint = 3,
}

export enum DiagnosticTag {
  Unnecessary = 1,
}

export class Diagnostic {
  source?: string;
  code?: string;
  tags?: DiagnosticTag[];
  constructor(
    readonly range: Range,
    readonly message: string,
    readonly severity: DiagnosticSeverity,
  ) {}
}

/** A diagnostic collection that keeps what was set, by URI string. */
export class FakeDiagnosticCollection {
  readonly entries = new Map<string, Diagnostic[]>();
  constructor(readonly name: string) {}
  set(uri: Uri, diagnostics: Diagnostic[]): void {
    if (diagnostics.length) this.entries.set(uri.toString(), diagnostics);
    else this.entries.delete(uri.toString());
  }
  delete(uri: Uri): void {
    this.entries.delete(uri.toString());
  }
  clear(): void {
    this.entries.clear();
  }
  dispose(): void {
    this.entries.clear();
  }
}

export const collections: FakeDiagnosticCollection[] = [];

export const languages = {
  createDiagnosticCollection(name: string): FakeDiagnosticCollection {
    const c = new FakeDiagnosticCollection(name);
    collections.push(c);
    return c;
  },
};
