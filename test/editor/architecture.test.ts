/**
 * The extension's structural rules, checked on the sources: pure editor logic, no Node-only code on the
 * web extension's path, one converter, the webview's imports (no archived toolkit), themed CSS, and
 * a manifest that matches the code.
 */
import assert from 'node:assert/strict';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, it } from 'node:test';
import { ROOT } from '../helpers/fixtures.ts';

function files(dir: string, ext = '.ts'): string[] {
  const out: string[] = [];
  for (const name of readdirSync(join(ROOT, dir))) {
    const p = join(ROOT, dir, name);
    if (statSync(p).isDirectory()) out.push(...files(relative(ROOT, p), ext));
    else if (name.endsWith(ext)) out.push(relative(ROOT, p));
  }
  return out;
}

const read = (f: string) => readFileSync(join(ROOT, f), 'utf8');
const imports = (f: string) => [...read(f).matchAll(/^\s*(?:import|export)\s[^;]*?from\s+'([^']+)'/gm)].map(m => m[1]!);

describe('extension architecture', () => {
  it('editor logic, the protocol, the engine worker and the linter never import vscode', () => {
    for (const f of [
      ...files('src/editor'),
      ...files('src/shared'),
      ...files('src/worker'),
      ...files('src/engine/lint'),
    ]) {
      assert.ok(!imports(f).includes('vscode'), f);
    }
  });

  it('nothing on the extension path (node or web) uses Node-only modules or globals', () => {
    // Two exceptions, one per platform's worker: spawn-node.ts starts the desktop worker (the web bundle
    // has spawn-web.ts in its place, esbuild.mjs) and node-main.ts is the desktop worker's entry.
    const nodeOnly = new Set(['src/vscode/spawn-node.ts', 'src/worker/node-main.ts']);
    assert.match(
      read('esbuild.mjs'),
      /onResolve\(\{ filter: \/\\\/spawn-node\\\.ts\$\/ \}, \(\) => \(\{ path: resolve\('src\/vscode\/spawn-web\.ts'\) \}\)\)/,
    );
    for (const f of [
      ...files('src/editor'),
      ...files('src/shared'),
      ...files('src/vscode'),
      ...files('src/worker'),
      'src/extension.ts',
      ...files('src/engine/lint'),
    ]) {
      if (nodeOnly.has(f)) continue;
      const text = read(f);
      for (const m of imports(f))
        assert.ok(!/^(node:|fs$|path$|os$|child_process$|crypto$)/.test(m), `${f} imports ${m}`);
      assert.ok(!/\b(process\.|Buffer\.|require\(|__dirname)/.test(text), `${f} uses a Node global`);
    }
  });

  it("the extension host's thread neither reads manifests nor traces them: the engine worker does", () => {
    // Issue 12: reading 10k Services and tracing their ports held the extension host for seconds. The
    // cluster views live in the worker (src/worker/kube-host.ts); the glue may import their types only.
    const computing = [
      /editor\/kube\/(cluster|manifest-trace|manifest-hover|service-lens|service-hover|field-hover|node-rules|probe|shares)\.ts$/,
    ];
    const engineCalls = /\b(readManifests|buildClusterModel|traceFromManifests|dumpNode|synthesize\w*)\b/;
    for (const f of [...files('src/vscode'), 'src/extension.ts']) {
      for (const m of read(f).matchAll(/^\s*(?:import|export)\s+(?!type\b)([^;]*?)from\s+'([^']+)'/gm)) {
        assert.ok(!computing.some(c => c.test(m[2]!)), `${f} imports ${m[2]} (run it in the engine worker)`);
        if (m[2]!.endsWith('engine/api.ts'))
          assert.ok(
            !engineCalls.test(m[1]!.replace(/\btype\s+\w+/g, '')),
            `${f} imports ${m[1]!.trim()} from the engine`,
          );
      }
    }
  });

  it('engine values become editor values in src/vscode/convert.ts only', () => {
    for (const f of files('src/vscode').filter(x => !x.endsWith('convert.ts'))) {
      assert.ok(
        !/new vscode\.(Range|Position|Location|Diagnostic|DiagnosticRelatedInformation|DocumentSymbol|FoldingRange|TextEdit|MarkdownString)\(/.test(
          read(f),
        ),
        f,
      );
    }
  });

  it('the webview imports the protocol as types only, and no archived component library', () => {
    for (const f of files('webview')) {
      const text = read(f);
      for (const m of text.matchAll(/^import\s+(type\s+)?[^;]*from\s+'([^']+)'/gm)) {
        if (m[2]!.includes('src/')) assert.ok(m[1], `${f} imports ${m[2]} at run time`);
      }
      // @vscode/webview-ui-toolkit was archived in January 2025: the controls are plain HTML (controls.ts).
      assert.ok(!imports(f).some(m => m.startsWith('@vscode/webview-ui-toolkit')), f);
      assert.ok(!/innerHTML|outerHTML|insertAdjacentHTML|document\.write/.test(text), `${f} builds HTML from strings`);
    }
  });

  it('the webview is themed through --vscode-* variables only', () => {
    const css = read('webview/main.css');
    assert.ok(!/#[0-9a-fA-F]{3,8}\b|rgba?\(|hsla?\(/.test(css), 'literal colours in main.css');
    assert.ok(/var\(--vscode-/.test(css));
  });

  it('the panels have a strict Content Security Policy and one HTML shell', () => {
    const html = read('src/vscode/panel-html.ts');
    assert.match(html, /default-src 'none'/);
    assert.match(html, /script-src 'nonce-\$\{n\}'/);
    assert.ok(!/unsafe-inline|unsafe-eval/.test(html));
    // Both panels are hosted by PanelHost, which alone opens webviews, limited to the built webview folder.
    const host = read('src/vscode/panel-host.ts');
    assert.match(host, /localResourceRoots: \[webviewRoot\(this\.extensionUri\)\]/);
    assert.match(host, /panel\.webview\.html = panelHtml\(panel\.webview, this\.extensionUri\)/);
    for (const f of ['src/vscode/diagram-panel.ts', 'src/vscode/diff-panel.ts'])
      assert.match(read(f), /extends PanelHost\b/, f);
    for (const f of files('src/vscode').filter(x => !x.endsWith('panel-host.ts')))
      assert.ok(!/createWebviewPanel|webview\.options =/.test(read(f)), f);
    // Only the shell sets webview HTML: no panel builds it from strings of its own.
    for (const f of files('src/vscode').filter(x => !x.endsWith('panel-html.ts')))
      assert.ok(!/\.html = `/.test(read(f)), f);
  });

  it('package.json contributes what the code registers, and activates only on demand', () => {
    const pkg = JSON.parse(read('package.json'));
    const contributed = new Set(pkg.contributes.commands.map((c: { command: string }) => c.command));
    const commands = read('src/vscode/commands.ts');
    const block = /export const COMMANDS = \{([^}]*)\}/.exec(commands)![1]!;
    const registered = [...block.matchAll(/'(packetlens\.[A-Za-z]+)'/g)].map(m => m[1]!);
    assert.deepEqual([...contributed].sort(), registered.sort());
    const extension = read('src/extension.ts') + read('src/vscode/kube-manifests.ts');
    for (const c of Object.keys(Object.fromEntries(registered.map(r => [r, 1])))) {
      const key = /(\w+): '([^']+)'/g;
      const name = [...block.matchAll(key)].find(m => m[2] === c)![1]!;
      assert.match(
        extension,
        new RegExp(`registerCommand\\(COMMANDS\\.${name}\\b`),
        `${c} is contributed but never registered`,
      );
    }
    // Activation: the contributed languages (iptables-save, nftables; YAML only to look for Kubernetes objects, which is cheap), the
    // commands and the two panels' serializers.
    assert.ok(
      pkg.activationEvents.every((e: string) =>
        /^onLanguage:(iptables-save|nftables|yaml)$|^onCommand:packetlens\.|^onWebviewPanel:packetlens\.(flow|diff)$/.test(
          e,
        ),
      ),
      pkg.activationEvents.join(),
    );
    for (const c of registered)
      assert.ok(pkg.activationEvents.includes(`onCommand:${c}`), `no activation event for ${c}`);
    assert.equal(pkg.main, './dist/extension.js');
    assert.equal(pkg.browser, './dist/web/extension.js');
    assert.equal(pkg.capabilities.untrustedWorkspaces.supported, true);
    assert.equal(pkg.capabilities.virtualWorkspaces, true);
    const lang = pkg.contributes.languages[0];
    assert.deepEqual(lang.extensions, ['.rules', '.iptables', '.ipt']);
    const first = new RegExp(lang.firstLine);
    for (const l of [
      '# Generated by iptables-save v1.8.9 on Sat',
      '# Generated by ip6tables-save v1.8.7',
      '# Generated by iptables-nft-save v1.8.9',
      '# Generated by ip6tables-legacy-save v1.8.9',
    ])
      assert.ok(first.test(l), l);
    for (const c of pkg.contributes.colors) assert.ok(!/#/.test(JSON.stringify(c.defaults)), c.id);
  });

  it('.vscodeignore is an allow-list', () => {
    const lines = read('.vscodeignore')
      .split('\n')
      .filter(l => l.trim() && !l.startsWith('#'));
    assert.equal(lines[0], '**');
    assert.ok(
      lines.slice(1).every(l => l.startsWith('!') && !l.includes('**')),
      lines.join(' '),
    );
    assert.ok(
      lines.includes('!dist/extension.js') &&
        lines.includes('!dist/web/extension.js') &&
        lines.includes('!dist/webview/main.js'),
    );
    assert.ok(
      lines.includes('!dist/worker.js') && lines.includes('!dist/web/worker.js'),
      'the engine workers are shipped',
    );
  });

  it('npm test type-checks the webview first, and no unit test builds dist/', () => {
    // The webview's own type-check (webview/tsconfig.json, the DOM library) is `npm run check-types`, which
    // `npm test` runs before any test, so no test spawns tsc a second time; building the bundle belongs to
    // the slow suite (test/cli/bundle.slow.test.ts, scripts/run-tests.mjs).
    const pkg = JSON.parse(read('package.json'));
    assert.match(pkg.scripts['check-types'], /tsc --noEmit -p webview\b/);
    assert.match(pkg.scripts.test, /^npm run check-types && node scripts\/run-tests\.mjs$/);
    const unit = files('test').filter(
      f => f.endsWith('.test.ts') && !f.endsWith('.slow.test.ts') && f !== 'test/editor/architecture.test.ts',
    );
    assert.ok(unit.length > 40, `${unit.length} unit test files`);
    assert.deepEqual(
      unit.filter(f => /esbuild\.mjs|['"]tsc['"]|bin', 'tsc'/.test(read(f))),
      [],
    );
  });
});
