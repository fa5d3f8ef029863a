// Driving VS Code's workbench (code-server in Chromium) the way a user does — keyboard, mouse, what is on
// screen — for the end-to-end checks. Selectors are VS Code 1.139's (code-server 4.139.1), the version
// scripts/e2e/install.mjs pins. Every wait is bounded; a failed wait says what it was waiting for.
/* global document, getComputedStyle, DOMParser */
import fs from 'node:fs';
import path from 'node:path';

/** Thrown by checks: the message is what the user would not see. */
export class CheckFailure extends Error {}

export function expect(condition, message) {
  if (!condition) throw new CheckFailure(message);
}

/**
 * A pattern for `text` in which every space also matches the no-break spaces the editor renders (view
 * lines and CodeLens use U+00A0 between words), for playwright's `hasText`.
 */
export function spaced(text, { exact = false } = {}) {
  const body = text
    .split(' ')
    .map(w => w.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
    .join('\\s');
  return new RegExp(exact ? `^\\s*${body}\\s*$` : body);
}

const oneLine = s => String(s).replace(/\s+/g, ' ').trim();
export const clip = (s, n = 300) => {
  const t = oneLine(s);
  return t.length > n ? `${t.slice(0, n)}…` : t;
};

/**
 * Fails unless each of `parts` is a token of the rendered `rule` line and at least `distinct` different
 * colours are among them: the grammar split the line and the theme coloured it (a plain-text editor draws
 * everything in one colour).
 */
export function expectColouredApart(rule, parts, distinct) {
  const colours = parts.map(text => rule.tokens.find(t => t.text.trim() === text)?.color);
  expect(
    colours.every(Boolean),
    `line ${rule.line} is not split into the grammar's tokens ${parts.join(', ')} (tokens: ${clip(rule.tokens.map(t => t.text).join('|'))})`,
  );
  expect(
    new Set(colours).size >= distinct,
    `line ${rule.line}'s tokens ${parts.join(', ')} are not coloured apart: ${colours.join(', ')}`,
  );
}

export class Workbench {
  /**
   * @param page      playwright Page showing the workbench
   * @param options   { workspace, shotsDir, docsShotsDir (null: do not write docs screenshots), log }
   */
  constructor(page, options) {
    this.page = page;
    this.workspace = options.workspace;
    this.shotsDir = options.shotsDir;
    this.docsShotsDir = options.docsShotsDir;
    this.log = options.log;
    this.quickInput = page.locator('.quick-input-widget .quick-input-box input');
    /** Set by the runner when this check timed out: its next step throws instead of acting on the page. */
    this.cancelled = false;
  }

  guard() {
    if (this.cancelled) throw new CheckFailure('cancelled: the check timed out');
  }

  /** Saves a screenshot to the run's folder and, for README material, to docs/screenshots. */
  async shot(name, { docs = false } = {}) {
    this.guard();
    const file = path.join(this.shotsDir, `${name}.png`);
    await this.page.screenshot({ path: file });
    if (docs && this.docsShotsDir) {
      fs.mkdirSync(this.docsShotsDir, { recursive: true });
      fs.copyFileSync(file, path.join(this.docsShotsDir, `${name}.png`));
    }
    return file;
  }

  /** Escape out of widgets and quick inputs and move the mouse off the editor, so no hover lingers. */
  async settle() {
    this.guard();
    await this.page.mouse.move(2, 450);
    for (let i = 0; i < 3; i++) await this.page.keyboard.press('Escape');
  }

  /** F1, type the command's title, wait for its row, Enter. */
  async runCommand(title, { timeout = 15_000 } = {}) {
    this.guard();
    await this.page.keyboard.press('F1');
    await this.quickInput.waitFor({ state: 'visible', timeout });
    await this.page.keyboard.type(title);
    const row = this.page.locator('.quick-input-list .monaco-list-row', { hasText: title }).first();
    try {
      await row.waitFor({ state: 'visible', timeout });
    } catch {
      const rows = await this.page.locator('.quick-input-list .monaco-list-row').allInnerTexts();
      throw new CheckFailure(`the command palette has no "${title}" (rows: ${clip(rows.join(' | '), 200) || 'none'})`);
    }
    await this.page.keyboard.press('Enter');
  }

  async closeAllEditors() {
    this.guard();
    await this.settle();
    await this.runCommand('View: Close All Editors');
    await this.page.locator('.tabs-container .tab').first().waitFor({ state: 'detached', timeout: 10_000 });
  }

  /** Opens a workspace file with Quick Open (Ctrl+P), as a user does; waits for its tab and text. */
  async openFile(relPath, { timeout = 20_000 } = {}) {
    this.guard();
    const name = path.basename(relPath);
    await this.page.keyboard.press('Control+P');
    await this.quickInput.waitFor({ state: 'visible', timeout });
    await this.page.keyboard.type(relPath);
    // Enter opens the focused row: wait until the search has put the file there (results arrive late).
    const row = this.page.locator('.quick-input-list .monaco-list-row.focused', { hasText: name }).first();
    try {
      await row.waitFor({ state: 'visible', timeout });
    } catch {
      const rows = await this.page.locator('.quick-input-list .monaco-list-row').allInnerTexts();
      throw new CheckFailure(`Quick Open does not offer ${relPath} (rows: ${clip(rows.join(' | '), 200) || 'none'})`);
    }
    const offered = await this.page.locator('.quick-input-list .monaco-list-row').allInnerTexts();
    await this.page.keyboard.press('Enter');
    try {
      await this.page.locator('.tabs-container .tab.active', { hasText: name }).waitFor({ timeout });
    } catch {
      // Seen in full runs only: the workbench showed another file (the node bundle's dump) instead; the
      // extension's log then shows no request of its own to open it (see README, "The end-to-end suite").
      const active = await this.page.locator('.tabs-container .tab.active').allInnerTexts();
      throw new CheckFailure(
        `Quick Open on ${relPath} showed ${clip(active.join(' | ')) || 'no editor'} (its rows when Enter was pressed: ${clip(offered.join(' | '), 300)})`,
      );
    }
    const editor = this.editorFor(relPath);
    await editor.locator('.view-lines .view-line').first().waitFor({ timeout });
    return editor;
  }

  /** The text editor showing `relPath` (VS Code puts the document's URI on the editor element). */
  editorFor(relPath) {
    return this.page.locator(`.monaco-editor[data-uri$="${relPath.replace(/"/g, '\\"')}"]`).first();
  }

  /** Clicks the file's editor tab, which puts the keyboard in its editor. */
  async focusEditor(relPath) {
    this.guard();
    await this.page
      .locator('.tabs-container .tab', { hasText: path.basename(relPath) })
      .first()
      .click();
    await this.editorFor(relPath)
      .locator('.monaco-editor-background, .view-lines')
      .first()
      .waitFor({ timeout: 10_000 });
  }

  /** Ctrl+G to a 1-based line: the cursor goes there and the line is scrolled into view. */
  async goToLine(line) {
    this.guard();
    await this.page.keyboard.press('Control+G');
    await this.quickInput.waitFor({ state: 'visible', timeout: 10_000 });
    await this.page.keyboard.type(String(line));
    await this.page.keyboard.press('Enter');
    await this.quickInput.waitFor({ state: 'hidden', timeout: 10_000 });
  }

  /** "Ln 92, Col 1" from the status bar, as { line, column }; null when no text editor has the focus. */
  async cursor() {
    this.guard();
    const item = this.page.locator('.statusbar-item', { hasText: /^\s*Ln \d+, Col \d+/ }).first();
    if (!(await item.count())) return null;
    const m = /Ln (\d+), Col (\d+)/.exec(await item.innerText({ timeout: 5000 }).catch(() => ''));
    return m ? { line: Number(m[1]), column: Number(m[2]) } : null;
  }

  /**
   * What each rendered line of an editor shows: its number, text, the colours of its tokens, and the
   * whole-line decorations drawn behind it (class and background colour), and whether it is the cursor's.
   */
  async renderedLines(editor) {
    this.guard();
    return editor.evaluate(root => {
      const byTop = new Map();
      for (const row of root.querySelectorAll('.view-overlays > div')) {
        byTop.set(
          row.style.top,
          [...row.children].map(c => ({ cls: c.className, bg: getComputedStyle(c).backgroundColor })),
        );
      }
      const textByTop = new Map();
      for (const l of root.querySelectorAll('.view-lines > .view-line')) {
        const tokens = [...l.querySelectorAll(':scope > span > span')].map(s => ({
          text: s.textContent.replace(/\u00a0/g, ' '),
          cls: s.className,
          color: getComputedStyle(s).color,
        }));
        textByTop.set(l.style.top, { text: l.textContent.replace(/\u00a0/g, ' '), tokens });
      }
      const out = [];
      for (const row of root.querySelectorAll('.margin-view-overlays > div')) {
        const num = Number(row.querySelector('.line-numbers')?.textContent);
        if (!num) continue;
        const overlays = byTop.get(row.style.top) ?? [];
        out.push({
          line: num,
          ...(textByTop.get(row.style.top) ?? { text: '', tokens: [] }),
          decorations: overlays.filter(o => /\bced-/.test(o.cls)),
          current: overlays.some(o => /\bcurrent-line\b/.test(o.cls)),
        });
      }
      return out.sort((a, b) => a.line - b.line);
    });
  }

  /** Moves the real mouse onto `locator` (its first box inside the viewport) and waits for a hover with `hasText`. */
  async hover(locator, hasText, { timeout = 15_000 } = {}) {
    this.guard();
    const viewport = this.page.viewportSize();
    let box = null;
    for (let i = 0; i < (await locator.count()); i++) {
      const b = await locator.nth(i).boundingBox();
      if (b && b.x >= 0 && b.y >= 0 && b.x + 40 < viewport.width - 20 && b.y + b.height < viewport.height - 30) {
        box = b;
        break;
      }
    }
    if (!box) throw new CheckFailure(`nothing to hover: ${locator} is not on screen`);
    const x = box.x + Math.min(box.width / 2, 30);
    const y = box.y + box.height / 2;
    const hover = this.page.locator('.monaco-hover-content', { hasText }).first();
    // The editor drops a hover whose answer arrives after something redrew the lines (CodeLens arriving
    // from the engine worker): as a user would, move off and back once if the first try shows nothing.
    const approach = async () => {
      await this.page.mouse.move(x - 40, y - 40);
      await this.page.mouse.move(x, y, { steps: 4 });
    };
    await approach();
    try {
      await hover.waitFor({ state: 'visible', timeout: timeout / 2 });
      return hover;
    } catch {
      await this.page.mouse.move(2, 450);
      await approach();
    }
    try {
      await hover.waitFor({ state: 'visible', timeout: timeout / 2 });
    } catch {
      const seen = (await this.page.locator('.monaco-hover-content').allInnerTexts()).filter(t => t.trim());
      throw new CheckFailure(
        `no hover containing "${hasText}" appeared (hovers on screen: ${seen.length ? clip(seen.join(' | ')) : 'none'})`,
      );
    }
    return hover;
  }

  /**
   * The webview content frame whose document has `selector`. VS Code nests two iframes: the host page
   * (pre/index.html) and the content (#active-frame); code-server serves both from its own origin.
   */
  async webviewFrame(selector, { timeout = 30_000, interval = 200 } = {}) {
    this.guard();
    const end = Date.now() + timeout;
    while (Date.now() < end) {
      for (const f of this.page.frames()) {
        if (f === this.page.mainFrame()) continue;
        try {
          if (await f.locator(selector).count()) return f;
        } catch {
          /* detached while looking */
        }
      }
      await this.page.waitForTimeout(interval);
    }
    throw new CheckFailure(`no webview shows ${selector} after ${timeout / 1000} s`);
  }

  /** Polls `fn` until it returns a truthy value (returned) or the time is up (then the last value). */
  async until(fn, { timeout = 15_000, interval = 250 } = {}) {
    this.guard();
    const end = Date.now() + timeout;
    let last;
    while (Date.now() < end) {
      last = await fn();
      if (last) return last;
      await this.page.waitForTimeout(interval);
    }
    return last;
  }
}

/**
 * Elements a hostile text would have created if it had been parsed as HTML: a script holding the marker,
 * an event-handler attribute holding it, or the payload's image (`<img src=x onerror=PLXSS()>` → an IMG
 * with src="x" and onerror="PLXSS()"). Text attributes such as aria-label may quote the payload: that is
 * text, not markup. Runs in a page; given a string, it checks that markup instead (the detector's test).
 */
export function injectedElements({ marker, markup }) {
  const doc = markup === undefined ? document : new DOMParser().parseFromString(markup, 'text/html');
  const found = [];
  for (const el of doc.querySelectorAll('*')) {
    const tag = el.tagName.toLowerCase();
    if (tag === 'script' && el.textContent.includes(marker)) found.push(`<script>${el.textContent.slice(0, 60)}`);
    else if (tag === 'img' && el.getAttribute('src') === 'x') found.push(`<img src="x">`);
    else {
      for (const a of el.getAttributeNames()) {
        if (/^on/i.test(a) && (el.getAttribute(a) ?? '').includes(marker))
          found.push(`<${tag} ${a}="${el.getAttribute(a).slice(0, 60)}">`);
      }
    }
  }
  return found;
}

/**
 * The extension host's event-loop stalls (issue 12). With PACKETLENS_STALL_LOG (set by the runner) the
 * extension logs every stall above 50 ms as `event loop stalled N ms (this thread ran M ms of it)`
 * (src/vscode/spawn-node.ts): M is what the extension host's own thread ran, the rest of a stall is the
 * 2-core machine running other threads (the engine workers, the renderer). A stall logged without the
 * figure (Node before 23.9) counts whole. Marks are lengths of the log (`ctx.extensionLog().length`).
 */
export function hostStalls(ctx, from, to = ctx.extensionLog().length) {
  const text = ctx.extensionLog().slice(from, to);
  const found = [...text.matchAll(/event loop stalled (\d+) ms(?: \(this thread ran (\d+) ms of it\))?/g)];
  const stalls = found.map(m => Number(m[1]));
  const busy = found.map(m => Number(m[2] ?? m[1]));
  return {
    stalls,
    busy,
    longest: longestOf(stalls),
    longestBusy: longestOf(busy),
    text: `${stalls.length} (longest ${longestOf(stalls)} ms, of which the thread ran at most ${longestOf(busy)} ms)`,
  };
}

const longestOf = list => (list.length ? Math.max(...list) : 0);

/**
 * Measures the host's stalls while `action` runs: first 5 s of the machine's own noise with nothing of
 * ours running (`idleFile`, a small dump, open and idle), then `action()` with all editors closed, then
 * 1.5 s for the log to reach its file (and, in a diagnostic run with PACKETLENS_CPU_PROFILE, 16 s for the
 * last profile). Returns `{ idle, during, result }`, `result` being what `action` returned.
 */
export async function measureHostStalls(wb, ctx, idleFile, action) {
  await wb.closeAllEditors();
  await wb.openFile(idleFile);
  await wb.page.waitForTimeout(1500);
  const idleMark = ctx.extensionLog().length;
  await wb.page.waitForTimeout(5000);
  const idle = hostStalls(ctx, idleMark);
  await wb.closeAllEditors();
  const mark = ctx.extensionLog().length;
  const result = await action();
  await wb.page.waitForTimeout(1500);
  if (process.env.PACKETLENS_CPU_PROFILE) await wb.page.waitForTimeout(16_000);
  return {
    idle: { ...idle, text: `${idle.stalls.length} in 5 s (longest ${idle.longest} ms)` },
    during: hostStalls(ctx, mark),
    result,
  };
}

/**
 * Fails when the extension host's thread itself ran more than `bound` ms in one stall: the goal is no
 * stall above 50 ms, and on this shared machine a stall is mostly other threads running.
 */
export function expectHostThreadWithin(phase, bound, what) {
  expect(
    phase.longestBusy <= bound,
    `the extension host's thread itself ran ${phase.longestBusy} ms during one stall (bound ${bound} ms) while ${what} (${phase.busy.join(', ')} ms)`,
  );
}
