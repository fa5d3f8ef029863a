// An iptables-save dump as a user first meets it: coloured by the grammar, its tables and chains in the
// Outline, and a hover on a kube-proxy Service chain that lists its endpoints with their shares.
import { clip, expect, expectColouredApart } from './workbench.mjs';

export const DUMP = 'seed-003/node-myk8s-worker.rules';
const SVC = 'KUBE-SVC-DLGPAL4ZCYSJ7UPR'; // svc1's Service chain: 10.10.1.11:80 and 10.10.4.12:80, 1/2 each

export const checks = [
  {
    name: 'dump: the grammar colours it and the Outline lists its tables and chains',
    timeoutMs: 90_000,
    async run(wb) {
      await wb.closeAllEditors();
      const editor = await wb.openFile(DUMP);
      // The language of the file is the extension's.
      await wb.page
        .locator('.statusbar-item', { hasText: /^\s*iptables-save\s*$/ })
        .first()
        .waitFor({ timeout: 20_000 });

      // Tokens in different colours: `-A`, the chain, a match module, an option and a quoted comment on a
      // rule line, `*filter` and `COMMIT`. A plain-text editor draws all of them in one colour.
      const lines = await wb.until(
        async () => {
          const l = await wb.renderedLines(editor);
          return l.some(x => x.text.startsWith('-A INPUT -m conntrack')) ? l : null;
        },
        { timeout: 15_000 },
      );
      expect(lines, `${DUMP} shows no line starting "-A INPUT -m conntrack"`);
      const rule = lines.find(x => x.text.startsWith('-A INPUT -m conntrack'));
      expectColouredApart(rule, ['-A', 'INPUT', 'conntrack', '--ctstate', '"kubernetes load balancer firewall"'], 4);
      const commit = lines.find(x => x.text === 'COMMIT');
      const table = lines.find(x => x.text === '*filter');
      expect(commit && table, `${DUMP}'s first screen lacks *filter or COMMIT`);
      const plain = rule.tokens.find(t => t.text.trim() === '')?.color;
      expect(
        commit.tokens[0].color !== plain && table.tokens.some(t => t.color !== plain),
        `COMMIT (${commit.tokens[0].color}) and *filter are drawn in the plain text colour (${plain})`,
      );

      // The Outline (Explorer › Outline): tables at the top level, each table's chains inside.
      await wb.runCommand('Explorer: Focus on Outline View');
      const folders = wb.page.locator('.pane-header', { hasText: 'examples' }).first();
      if ((await folders.getAttribute('aria-expanded')) === 'true') await folders.click(); // give the Outline the room
      const pane = wb.page.locator('.pane', { has: wb.page.locator('.pane-header', { hasText: 'Outline' }) });
      // The Outline's rows in order, each chain under its table: { filter: ['INPUT 4 rules · …', …], nat: […] }.
      const outline = () =>
        pane.locator('.monaco-list-row').evaluateAll(rows => {
          const tree = {};
          let table = null;
          for (const r of rows) {
            const label = r.querySelector('.label-name')?.textContent ?? r.textContent;
            if (r.getAttribute('aria-level') === '1') tree[(table = label.trim())] = { row: r.textContent, chains: [] };
            else if (table) tree[table].chains.push(label.trim());
          }
          return tree;
        });
      const needs = {
        filter: ['INPUT', 'FORWARD', 'OUTPUT', 'KUBE-FORWARD', 'KUBE-FIREWALL'],
        nat: ['PREROUTING', 'POSTROUTING', 'KUBE-SERVICES', 'KUBE-MARK-MASQ', SVC],
      };
      const seen = {};
      for (const table of ['filter', 'nat']) {
        // Read a table's chains while it is expanded, then collapse it so the next one fits on screen.
        const tree =
          (await wb.until(
            async () => {
              const t = await outline();
              return t[table] && needs[table].every(c => t[table].chains.includes(c)) ? t : null;
            },
            { timeout: 20_000 },
          )) ?? (await outline());
        expect(tree[table], `the Outline does not list the table ${table} (rows: ${clip(JSON.stringify(tree))})`);
        const missing = needs[table].filter(c => !tree[table].chains.includes(c));
        expect(
          !missing.length,
          `the Outline's ${table} table lacks the chains ${missing.join(', ')} (has: ${clip(tree[table].chains.join(', '))})`,
        );
        seen[table] = tree[table];
        if (table === 'filter') await wb.shot('dump-outline', { docs: true });
        const row = pane.locator('.monaco-list-row[aria-level="1"]', { hasText: new RegExp(`^${table}`) }).first();
        if ((await row.getAttribute('aria-expanded')) === 'true') await row.locator('.monaco-tl-twistie').click();
      }
      expect(
        /26 chains/.test(seen.nat.row) && /10 chains/.test(seen.filter.row),
        `the Outline's table rows do not count 10 and 26 chains: "${clip(seen.filter.row)}", "${clip(seen.nat.row)}"`,
      );
    },
  },
  {
    name: 'dump: hovering a KUBE-SVC chain lists its endpoints with percentages',
    timeoutMs: 60_000,
    async run(wb) {
      const editor = wb.editorFor(DUMP);
      if (!(await editor.count())) await wb.openFile(DUMP);
      await wb.settle();
      await wb.focusEditor(DUMP);
      // The chain's first rule (line 108): its name is the token right after `-A`.
      await wb.goToLine(108);
      const token = editor.locator('.view-lines .view-line span > span', { hasText: new RegExp(`^${SVC}$`) });
      const hover = await wb.hover(token, SVC);
      const text = await hover.innerText();
      const rows = await hover.locator('table tr').allInnerTexts();
      const row = ep => rows.find(r => r.includes(ep));
      for (const ep of ['10.10.1.11:80', '10.10.4.12:80']) {
        expect(
          row(ep) && /\b50%/.test(row(ep)) && /1\/2/.test(row(ep)),
          `the hover's endpoint table has no "${ep} 50% 1/2" row (rows: ${clip(rows.join(' | '))})`,
        );
      }
      expect(
        /Service port\s+default\/svc1:svc1-webport/.test(text),
        `the hover does not name the Service port default/svc1:svc1-webport: ${clip(text)}`,
      );
      await wb.shot('chain-hover', { docs: true });
      await wb.settle();
    },
  },
];
