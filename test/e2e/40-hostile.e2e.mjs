// A hostile dump (fixtures/hostile.rules, copied into the workspace as hostile/hostile.rules): comments
// and LOG prefixes hold `<img src=x onerror=PLXSS()>`, `<script>PLXSS()</script>` and a markdown command
// link. Hovers and the flow diagram must show them as the characters written, and nothing may run.
//
// How "nothing runs" is seen: every frame gets a `PLXSS` function before its own scripts (the runner's
// init script) that logs "PLXSS-FIRED" — so a payload that ran would log it, or, where PLXSS is missing,
// throw "PLXSS is not defined"; the runner records every console message, page error, dialog and request
// of every frame. Markup parsed but stopped by a Content Security Policy still shows: as a CSP report,
// as a request for the image `x`, or as an element with the payload in an attribute (the DOM is scanned).
// Both detectors are tested at the end against a planted control, so this check cannot pass blind.
import { clip, expect, injectedElements, spaced } from './workbench.mjs';
import { tracePacket } from './30-trace.e2e.mjs';

const FILE = 'hostile/hostile.rules';
const IMG = '<img src=x onerror=PLXSS()>';
const SCRIPT = '<script>PLXSS()</script>';
const LINK = '[run](command:workbench.action.quit)';

async function domScan(frame) {
  return frame.evaluate(injectedElements, { marker: 'PLXSS' });
}

export const checks = [
  {
    name: 'hostile dump: HTML and markdown in comments show as text in hovers and the diagram, and nothing runs',
    timeoutMs: 120_000,
    async run(wb, ctx) {
      const { sentinel } = ctx;
      sentinel.reset();
      await wb.closeAllEditors();
      const editor = await wb.openFile(FILE);
      await editor
        .locator('.codelens-decoration a:visible', { hasText: /referenced\sby|hook\s/ })
        .first()
        .waitFor({ timeout: 30_000 });

      // Hover a rule's comment: the rule hover quotes it. Line 16's comment holds the <img> payload, line
      // 18's a markdown command link and <b>; both must come out as the characters written. (The editor
      // draws a long token in chunks of about 50 characters: hover the comment's first one.)
      const commentOf = (rule, part) =>
        editor.locator('.view-lines .view-line', { hasText: spaced(rule) }).locator('span > span', { hasText: part });
      const imgHover = await wb.hover(commentOf('-A KUBE-SERVICES -d 10.96.0.66/32', '"default/xss:http'), 'Comment');
      const imgText = await imgHover.innerText();
      expect(
        imgText.includes(`default/xss:http cluster IP ${IMG}`),
        `the rule hover does not show the comment "${IMG}" as written: ${clip(imgText)}`,
      );
      await wb.shot('hostile-rule-hover');
      await wb.settle();
      const linkHover = await wb.hover(commentOf('-j KUBE-SEP-BBBBBBBBBBBBBBBB', '"default/xss:http'), 'Comment');
      const linkText = await linkHover.innerText();
      expect(
        linkText.includes(`${LINK} <b>bold</b>`),
        `the rule hover does not show "${LINK} <b>bold</b>" as written: ${clip(linkText)}`,
      );
      const links = await linkHover
        .locator('a')
        .evaluateAll(as => as.map(a => `${a.getAttribute('href') ?? ''} ${a.getAttribute('data-href') ?? ''}`));
      expect(
        !links.some(h => /command:/i.test(h)),
        `the rule hover turned dump text into a command link: ${links.join(', ')}`,
      );
      expect(
        (await linkHover.locator('b, strong', { hasText: /^bold$/ }).count()) === 0,
        'the rule hover rendered <b>bold</b> from the dump as bold text',
      );
      await wb.settle();

      // Trace through it: the diagram shows the LOG prefixes (and so the payloads) as text.
      await tracePacket(wb, 'tcp 172.18.0.100 -> 10.96.0.66:80');
      await wb.page.keyboard.press('Enter');
      const frame = await wb.webviewFrame('#flow', { timeout: 30_000 });
      const text =
        (await wb.until(
          async () => {
            const t = await frame.locator('body').innerText();
            return t.includes(`LOG --log-prefix ${SCRIPT}`) ? t : null;
          },
          { timeout: 15_000 },
        )) ?? (await frame.locator('body').innerText());
      expect(
        text.includes('hostile.rules') && /\b2 outcomes\b/.test(text),
        `the diagram is not the hostile dump's trace: ${clip(text, 300)}`,
      );
      // Give an injected image time to fail loading and fire its handler, then gather every sign of
      // markup or code from the dump, and report them all together.
      await wb.page.waitForTimeout(2000);
      await frame
        .getByText(`LOG --log-prefix ${IMG}`)
        .first()
        .scrollIntoViewIfNeeded({ timeout: 5000 })
        .catch(() => {});
      await wb.shot('hostile-diagram');
      const problems = [];
      for (const payload of [IMG, SCRIPT]) {
        if (!text.includes(`LOG --log-prefix ${payload}`))
          problems.push(`the diagram does not show the LOG prefix "${payload}" as text`);
      }
      // The literal characters are on screen (visible, not only in the DOM).
      if (!(await frame.getByText(`LOG --log-prefix ${IMG}`).first().isVisible()))
        problems.push(`"LOG --log-prefix ${IMG}" is not visible in the diagram`);
      const injectedInDiagram = await domScan(frame);
      const injectedInWorkbench = await domScan(wb.page.mainFrame());
      if (injectedInDiagram.length)
        problems.push(`the diagram parsed dump text as HTML: ${injectedInDiagram.join(', ')}`);
      if (injectedInWorkbench.length)
        problems.push(`the workbench parsed dump text as HTML: ${injectedInWorkbench.join(', ')}`);
      const fired = sentinel.events();
      if (fired.length) problems.push(`dump text ran or was parsed as markup: ${fired.join(' | ')}`);
      expect(!problems.length, problems.join('; '));

      // The detectors work: a planted call in the diagram's frame is seen, and planted markup is found.
      await frame.evaluate(() => {
        setTimeout(() => console.error('PLXSS-CONTROL from the diagram frame'), 0);
        setTimeout(() => {
          throw new Error('PLXSS-CONTROL from the diagram frame');
        }, 0);
      });
      const seen = await wb.until(() => sentinel.controlSeen(), { timeout: 5000 });
      expect(
        seen,
        'the detector did not see a planted console message and uncaught error in the diagram frame: this check would be blind',
      );
      const planted = await frame.evaluate(injectedElements, { marker: 'PLXSS', markup: `<p>${IMG}${SCRIPT}</p>` });
      expect(
        planted.length === 2,
        `the DOM scan does not find planted markup (found ${planted.length} of 2): this check would be blind`,
      );
      expect(ctx.sentinel.events().length === 0, `a payload ran: ${ctx.sentinel.events().join(' | ')}`);
      ctx.log(`hostile: the literal payloads are on screen; 0 executions, 0 injected elements; detector control seen`);
    },
  },
];
