/**
 * No CLI flag in the editor (src/editor/editor-words.ts): every phrase of the engine's sources that tells
 * the user to pass or give a flag has editor wording, and what the engine worker sends the editor (traces,
 * comparisons) and manifest traces carry none.
 */
import assert from 'node:assert/strict';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { editorWords } from '../../src/editor/editor-words.ts';
import { editorMessage } from '../../src/editor/messages.ts';
import { EngineHost } from '../../src/worker/engine-host.ts';
import type { EngineRequest } from '../../src/shared/engine-protocol.ts';
import { seedText } from './helpers.ts';

const ROOT = join(__dirname, '..', '..');
/** The CLI's flags (src/cli/main.ts's usage): none may reach an editor message. */
const CLI_FLAG =
  /--(node-ip|node-context|node|iface|uplink|route|route-localnet|affinity|from|in|manifests|packet|ipset)\b/;

function sources(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) sources(p, out);
    else if (name.endsWith('.ts')) out.push(p);
  }
  return out;
}

describe('editor words', () => {
  it('words every engine phrase that names a CLI flag for the editor, with a button where one helps', () => {
    let phrases = 0;
    for (const file of sources(join(ROOT, 'src', 'engine'))) {
      for (const line of readFileSync(file, 'utf8').split('\n')) {
        if (!/(pass|give) --|with --node-context/.test(line) || /^\s*(\/\/|\*)/.test(line)) continue;
        phrases++;
        const w = editorWords(line);
        assert.doesNotMatch(w.text, CLI_FLAG, `${file}: ${line.trim()}`);
        // A phrase naming a setting gets the Open Setting button (messages.ts) instead of an action.
        const opensSetting = editorMessage(w.text, 'warning').buttons.some(b => b.kind === 'openSetting');
        assert.ok(
          w.actions.length > 0 || opensSetting || /affinity/.test(line),
          `${file}: no action for ${line.trim()}`,
        );
      }
    }
    assert.ok(phrases >= 10, `found ${phrases} phrases: the scan is broken`);
  });

  it('a trace from the worker names the status bar’s Node item, not --node-ip', async () => {
    const host = new EngineHost();
    let id = 0;
    const ask = async (method: string, params: object) => {
      const r = await host.handle({ id: ++id, method, params } as EngineRequest);
      if (!r.ok) throw new Error(r.error);
      return r.result as never;
    };
    await ask('load', { key: 'd', file: 'node-myk8s-worker.rules', maxBytes: 1 << 26, source: { text: seedText() } });
    const r: { ok: boolean; trace: { warnings: string[]; outcomes: { notes: string[] }[] } } = await ask('trace', {
      key: 'd',
      packet: 'tcp 172.18.0.100 -> 172.18.255.200:80',
      node: {},
    });
    assert.ok(r.ok);
    const words = [...r.trace.warnings, ...r.trace.outcomes.flatMap(o => o.notes)].join('\n');
    assert.match(words, /Node item in the status bar/);
    assert.doesNotMatch(words, CLI_FLAG);
    const hints: { inferred: unknown[] } = await ask('nodeHints', { key: 'd' });
    assert.ok(Array.isArray(hints.inferred));
  });
});

describe('editor messages', () => {
  it('have one "Packet Lens:" prefix, name the setting with a button, and offer Show Log on errors', () => {
    const m = editorMessage(
      'Packet Lens: Packet Lens settings: f.rules is 200 MB, above packetlens.limits.maxFileSizeMB (128 MB)',
      'warning',
    );
    assert.equal(m.text, 'Packet Lens: f.rules is 200 MB, above packetlens.limits.maxFileSizeMB (128 MB)');
    assert.deepEqual(m.buttons, [
      { kind: 'openSetting', title: 'Open Setting', setting: 'packetlens.limits.maxFileSizeMB' },
    ]);
    const e = editorMessage(
      'the packet has no source address and the node has no IPv4 address (give --node-ip or a source)',
      'error',
    );
    assert.match(e.text, /^Packet Lens: The packet has no source address/);
    assert.doesNotMatch(e.text, CLI_FLAG);
    assert.deepEqual(
      e.buttons.map(b => b.title),
      ['Set Node…', 'Show Log'],
    );
  });
});
