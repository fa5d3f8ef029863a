/**
 * The status bar's spinner while long work runs — a big dump read, a comparison, a trace — saying what is
 * happening (`$(sync~spin) Packet Lens: reading node.rules (300,040 lines)…`); a click stops the work when
 * it can be stopped (its engine worker is terminated). Short work shows nothing: the item appears only
 * after `SHOW_AFTER_MS`.
 */
import * as vscode from 'vscode';
import { COMMANDS } from './commands.ts';
import { toMarkdown } from './convert.ts';

const SHOW_AFTER_MS = 400;

interface Job {
  readonly label: string;
  readonly cancel: (() => void) | null;
  shown: boolean;
}

/** VS Code for the Web asks before opening files above about 10 MB; the tooltip says so. */
export const WEB_LARGE_FILE_NOTE =
  'In VS Code for the Web, files above about 10 MB open only after "Open Anyway" in the editor; Packet Lens reads them after that.';

export class Busy implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem('packetlens.busy', vscode.StatusBarAlignment.Left, 1000);
  private readonly jobs: Job[] = [];

  constructor() {
    this.item.name = 'Packet Lens: Progress';
  }

  /**
   * Marks work as running until the returned function is called (or `work` settles, with `run`).
   * `cancel`, when given, is what a click on the spinner does.
   */
  start(label: string, cancel: (() => void) | null = null, immediately = false): () => void {
    const job: Job = { label, cancel, shown: false };
    this.jobs.push(job);
    const timer = setTimeout(
      () => {
        job.shown = true;
        this.render();
      },
      immediately ? 0 : SHOW_AFTER_MS,
    );
    return () => {
      clearTimeout(timer);
      const i = this.jobs.indexOf(job);
      if (i >= 0) this.jobs.splice(i, 1);
      this.render();
    };
  }

  async run<T>(label: string, work: Promise<T>, cancel: (() => void) | null = null): Promise<T> {
    const end = this.start(label, cancel);
    try {
      return await work;
    } finally {
      end();
    }
  }

  /** The spinner's click: stops the newest work that can be stopped. */
  cancel(): void {
    const job = [...this.jobs].reverse().find(j => j.shown && j.cancel);
    job?.cancel?.();
  }

  private render(): void {
    const shown = this.jobs.filter(j => j.shown);
    const job = shown[shown.length - 1];
    if (!job) {
      this.item.hide();
      return;
    }
    const more = shown.length > 1 ? ` (+${shown.length - 1})` : '';
    this.item.text = `$(sync~spin) Packet Lens: ${job.label}${more}`;
    this.item.command = job.cancel ? COMMANDS.cancelWork : undefined;
    this.item.tooltip = toMarkdown(
      [...shown.map(j => `- ${j.label}`), '', job.cancel ? 'Click to stop it.' : '', '', WEB_LARGE_FILE_NOTE].join(
        '\n',
      ),
    );
    this.item.show();
  }

  dispose(): void {
    this.item.dispose();
  }
}
