// The catalogue of bad inputs (docs/bad-inputs.md, issue 12) in the real editor: each file the kernel's
// tools refuse shows the same first problem as `packetlens check` prints for it (the CLI is run here on the
// same file, so nothing is written down twice), a file they accept shows none; the generated hostile inputs
// (a 20 MB line, 40 chained random branches, chains 5,000 deep, a YAML alias bomb, a List of 100,000
// Services, YAML that is not Kubernetes) each give their message or a bounded answer within seconds.
// Last in the suite: its manifests (written when it runs) are read by the manifests' worker from then on.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { CheckFailure, clip, expect, spaced } from './workbench.mjs';
import { tracePacket } from './30-trace.e2e.mjs';
import { BAD_DIR, BAD_MANIFESTS, writeBadInputs, writeBadManifests } from './fixtures/bad-inputs.mjs';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const REFUSALS = path.join(REPO, 'test', 'fixtures', 'kernel', 'restore-refusals');

/** The first problem `packetlens check` prints for `file`, as words the editor's row must hold; null if none. */
function cliFirstProblem(file) {
  let out;
  try {
    out = execFileSync(process.execPath, [path.join(REPO, 'dist', 'cli.js'), 'check', file], { encoding: 'utf8' });
  } catch (e) {
    out = String(e.stdout ?? '');
  }
  const line = out.split('\n').find(l => / (error|warning): /.test(l));
  if (!line) return null;
  let message = line.slice(line.search(/ (error|warning): /)).replace(/^ (error|warning): /, '');
  // A message that names the file names it by the path it was given: keep the words after it.
  const at = message.lastIndexOf(path.basename(file));
  if (at >= 0) message = message.slice(at + path.basename(file).length);
  return message.trim().slice(0, 48);
}

/**
 * Shows only `name`'s problems (the panel's filter, a glob): the panel draws only the rows in view, and the
 * workspace's manifests (a List of 100,000 Services) would push a dump's rows out of it.
 */
async function filterProblems(wb, name, dir = BAD_DIR) {
  const box = wb.page.locator('input[placeholder^="Filter (e.g. text"]').filter({ visible: true }).first();
  const glob = name ? `**/${dir}/${name}` : '';
  await box.fill(glob);
  const value = await box.inputValue();
  expect(value === glob, `the Problems filter holds "${value}", not "${glob}"`);
  await wb.page.waitForTimeout(300);
}

/** The dumps, written into the workspace when the first of these checks runs (fixtures/bad-inputs.mjs). */
function ensureBadInputs(wb) {
  if (!fs.existsSync(path.join(wb.workspace, BAD_DIR, 'marks40.rules'))) writeBadInputs(wb.workspace, REPO);
}

/** Waits for a row of the Problems panel holding `words` (whitespace as the panel lays it out). */
async function problemRow(wb, words, timeout = 30_000) {
  const pattern = words instanceof RegExp ? words : spaced(words);
  const row = wb.page.locator('.markers-panel .monaco-list-row', { hasText: pattern }).first();
  try {
    await row.waitFor({ timeout });
  } catch {
    const rows = await wb.page.locator('.markers-panel .monaco-list-row').allInnerTexts();
    throw new CheckFailure(`the Problems panel has no row with "${words}" (rows: ${clip(rows.join(' | ')) || 'none'})`);
  }
  return row.innerText();
}

async function problemRows(wb) {
  return wb.page.locator('.markers-panel .monaco-list-row').allInnerTexts();
}

/**
 * Opens a bad input as a user does: Quick Open, then "Open Anyway" where VS Code calls the file binary (a
 * NUL byte) or large, and the text editor in the "Select editor" pick that follows a binary file's.
 */
async function openBad(wb, name, dir = BAD_DIR) {
  await wb.closeAllEditors();
  const rel = `${dir}/${name}`;
  await wb.page.keyboard.press('Control+P');
  await wb.quickInput.waitFor({ state: 'visible', timeout: 20_000 });
  await wb.page.keyboard.type(rel);
  await wb.page
    .locator('.quick-input-list .monaco-list-row.focused', { hasText: path.basename(name) })
    .first()
    .waitFor({ timeout: 20_000 });
  await wb.page.keyboard.press('Enter');
  const lines = wb.editorFor(rel).locator('.view-lines .view-line').first();
  const anyway = wb.page.getByRole('button', { name: 'Open Anyway' }).first();
  await Promise.any([lines.waitFor({ timeout: 60_000 }), anyway.waitFor({ timeout: 60_000 })]);
  if (await anyway.isVisible()) {
    await anyway.click();
    // A binary file's "Open Anyway" asks which editor: the text editor, its first and default choice.
    const pick = wb.page.locator('.quick-input-list .monaco-list-row', { hasText: 'Text Editor' }).first();
    const asked = await pick.waitFor({ state: 'visible', timeout: 5_000 }).then(
      () => true,
      () => false,
    );
    if (asked) await pick.click();
  }
  await lines.waitFor({ timeout: 60_000 });
  return wb.editorFor(rel);
}

/** The Problems panel's rows under the file `name` (its header row, then its problems up to the next header). */
async function rowsOf(wb, name) {
  const rows = await problemRows(wb);
  const out = [];
  let inside = false;
  for (const r of rows) {
    const header = /^\S+\.(rules|ya?ml|nft)\b/.test(r) && !r.includes(':');
    if (header) inside = r.startsWith(name);
    else if (inside) out.push(r);
  }
  return { header: rows.some(r => r.startsWith(name)), rows: out };
}

/** The flow diagram's text once it holds `expected` (or whatever it holds after 30 s). */
async function diagramText(wb, expected) {
  await wb.page.locator('.tabs-container .tab', { hasText: 'Packet Flow' }).first().waitFor({ timeout: 30_000 });
  const frame = await wb.webviewFrame('#flow', { timeout: 30_000 });
  const body = () => frame.locator('body').innerText();
  return (
    (await wb.until(async () => (t => (expected.test(t) ? t : null))(await body()), { timeout: 30_000 })) ?? body()
  );
}

export const checks = [
  {
    name: 'bad inputs: each file iptables-restore refuses shows the CLI’s first problem in the Problems panel; each it accepts shows none',
    timeoutMs: 600_000,
    async run(wb, ctx) {
      await wb.closeAllEditors();
      ensureBadInputs(wb);
      await wb.runCommand('Problems: Focus on Problems View');
      const names = fs.readdirSync(REFUSALS).filter(f => f.endsWith('.rules'));
      const seen = [];
      for (const name of names) {
        const words = cliFirstProblem(path.join(REFUSALS, name));
        const t0 = Date.now();
        await openBad(wb, name);
        await filterProblems(wb, name);
        if (words) {
          const row = await problemRow(wb, words);
          seen.push(`${name}: ${Date.now() - t0} ms: ${clip(row, 120)}`);
        } else {
          // Accepted by the kernel's tools and by the CLI: the status bar counts its rules, and no row
          // says the kernel refuses it.
          await wb.page
            .locator('.statusbar-item', { hasText: /\b\d+ rules?\b/ })
            .first()
            .waitFor({ timeout: 30_000 });
          await wb.page.waitForTimeout(1500);
          const { header, rows } = await rowsOf(wb, name);
          expect(
            !header,
            `${name} is accepted by iptables-restore and by packetlens check, but the Problems panel lists it: ${clip(rows.join(' | '))}`,
          );
          seen.push(`${name}: accepted, no problem`);
        }
      }
      await filterProblems(wb, null);
      ctx.log(`bad inputs, kernel-built files:\n  ${seen.join('\n  ')}`);
      await wb.shot('bad-inputs-problems');
      await wb.closeAllEditors();
    },
  },
  {
    name: 'bad inputs: a 20 MB line, a YAML alias bomb and a List of 100,000 Services each give their message within seconds; YAML that is not Kubernetes gets none',
    timeoutMs: 300_000,
    async run(wb, ctx) {
      await wb.closeAllEditors();
      ensureBadInputs(wb);
      writeBadManifests(wb.workspace);
      await wb.runCommand('Problems: Focus on Problems View');
      const log = [];
      for (const [name, words] of [
        ['line20mb.rules', 'iptables-restore refuses this line: "Parser cannot handle more arguments"'],
        ['bomb/alias-bomb.yaml', 'this document expands aliases beyond 100000 nodes'],
        ['list/svc100k.yaml', "the manifests hold more than the reader's budget of 160000 entries"],
      ]) {
        const t0 = Date.now();
        const dir = name.endsWith('.yaml') ? BAD_MANIFESTS : BAD_DIR;
        await openBad(wb, name, dir);
        await filterProblems(wb, name, dir);
        const row = await problemRow(wb, words, 60_000).catch(e => {
          // What the extension did meanwhile (its log), to tell a slow read from a file never read.
          throw new CheckFailure(`${e.message}\nthe extension's log ends:\n${ctx.extensionLog().slice(-4000)}`);
        });
        const ms = Date.now() - t0;
        log.push(`${name}: ${ms} ms: ${clip(row, 160)}`);
        expect(ms < 60_000, `${name}: the message took ${ms} ms`);
      }
      await filterProblems(wb, null);
      await openBad(wb, 'helm/values.yaml', BAD_MANIFESTS);
      await wb.page.waitForTimeout(3000);
      const { header, rows } = await rowsOf(wb, 'values.yaml');
      const lenses = await wb
        .editorFor(`${BAD_MANIFESTS}/helm/values.yaml`)
        .locator('.codelens-decoration')
        .allInnerTexts();
      expect(!header, `Helm values got problems: ${clip(rows.join(' | '))}`);
      expect(lenses.length === 0, `Helm values got CodeLens: ${clip(lenses.join(' | '))}`);
      log.push('helm/values.yaml: no problem, no CodeLens');
      ctx.log(`bad inputs, generated:\n  ${log.join('\n  ')}`);
      await wb.closeAllEditors();
    },
  },
  {
    name: 'bad inputs: Trace Packet on 40 chained random branches and on chains 5,000 deep answers within seconds',
    timeoutMs: 180_000,
    async run(wb, ctx) {
      ensureBadInputs(wb);
      const log = [];
      for (const [name, packet, expected] of [
        [
          'marks40.rules',
          'tcp 1.2.3.4 -> 172.18.0.4:22',
          /1099511627776 paths end here alike; they differ in packet mark bits 0xffffffff/,
        ],
        ['deep5000.rules', 'tcp 1.2.3.4 -> 172.18.0.4:22', /dropped|DROP/],
      ]) {
        await openBad(wb, name);
        await wb.page
          .locator('.statusbar-item', { hasText: /\b\d[\d,]* rules\b/ })
          .first()
          .waitFor({ timeout: 30_000 });
        await tracePacket(wb, packet);
        const t0 = Date.now();
        await wb.page.keyboard.press('Enter');
        const text = await diagramText(wb, expected);
        const ms = Date.now() - t0;
        expect(expected.test(text), `${name}: the diagram does not show ${expected}: ${clip(text)}`);
        expect(ms < 30_000, `${name}: the trace took ${ms} ms`);
        log.push(`${name}: diagram after ${ms} ms`);
        await wb.closeAllEditors();
      }
      ctx.log(`bad inputs, traces:\n  ${log.join('\n  ')}`);
    },
  },
];
