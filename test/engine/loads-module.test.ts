// loadsModule answers "does this rule load -m NAME?" from the rule as read, before and after compiling,
// so long scans never re-read rule text themselves (a comment that mentions a module does not count).
import { strict as assert } from 'node:assert';
import { describe, it } from 'node:test';
import { loadsModule, parseIptables } from '../../src/engine/api.ts';

const DUMP = `*nat
:PREROUTING ACCEPT [0:0]
:X - [0:0]
-A X -m comment --comment "statistic and recent are only words here" -j RETURN
-A X -m statistic --mode random --probability 0.5 -j RETURN
-A X -m recent --name aff --rcheck --seconds 10 --reap -j RETURN
-A X --match statistic --mode nth --every 2 -j RETURN
COMMIT
`;

describe('loadsModule', () => {
  it('reads -m / --match words, not comments, and agrees once the rule is compiled', () => {
    const want = [
      { statistic: false, recent: false, comment: true },
      { statistic: true, recent: false, comment: false },
      { statistic: false, recent: true, comment: false },
      { statistic: true, recent: false, comment: false },
    ];
    for (const pass of ['lazy', 'compiled']) {
      const rs = parseIptables(DUMP, { lazy: true });
      const rules = rs.tables.get('nat')!.chains.get('X')!.rules;
      if (pass === 'compiled') for (const r of rules) void r.matches;
      rules.forEach((r, i) => {
        for (const [name, expected] of Object.entries(want[i]!))
          assert.equal(loadsModule(r, name), expected, `${pass} rule ${i + 1} ${name}`);
      });
    }
  });
});
