/**
 * Issue 13: a match or target module owns everything the analyses know about it, in its own file. Every
 * registered module answers each knowledge hook (matches/knowledge.ts) or says in its own file that it has no
 * such knowledge (`diffFacts: 'opaque'`), and the analyses read those answers from the compiled rule: the diff
 * treats an opaque module's rule as unexplored, never as matching everything.
 */
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { ruleFacts } from '../../src/engine/diff/facts.ts';
import { ruleCriteria } from '../../src/engine/lint/criteria.ts';
import { MATCHES } from '../../src/engine/matches/registry.ts';
import type { CompileContext } from '../../src/engine/matches/types.ts';
import { unknownModule } from '../../src/engine/matches/unknown-module.ts';
import type { Rule } from '../../src/engine/model.ts';
import { TARGETS } from '../../src/engine/targets/registry.ts';
import { parseClean } from '../helpers/fixtures.ts';
import { ROOT } from '../helpers/fixtures.ts';

const ctx: CompileContext = { family: 4, proto: null, report: () => {} };

/** The rules of `lines`, all in `chain` of `table`. */
function rules(lines: string, table = 'filter', chain = 'INPUT'): Rule[] {
  const rs = parseClean(`*${table}\n:${chain} ACCEPT [0:0]\n${lines}\nCOMMIT\n`);
  return rs.tables.get(table)!.chains.get(chain)!.rules;
}

describe('match and target modules own their knowledge (issue 13)', () => {
  it('every registered match module answers diffFacts (or says it has none), lintAtoms and lintNature', () => {
    const missing: string[] = [];
    for (const m of [...MATCHES.values(), unknownModule('u32')]) {
      if (typeof m.diffFacts !== 'function' && m.diffFacts !== 'opaque') missing.push(`${m.name}: diffFacts`);
      if (typeof m.lintAtoms !== 'function') missing.push(`${m.name}: lintAtoms`);
      if (!['fixed', 'stateful', 'varying'].includes(m.lintNature)) missing.push(`${m.name}: lintNature`);
      // Each hook answers for the module's spec compiled from no options (a module loaded without options).
      const spec = m.compile([], ctx);
      if (typeof m.diffFacts === 'function') assert.equal(typeof m.diffFacts(spec, [], 4), 'object', m.name);
      if (typeof m.lintAtoms === 'function') assert.deepEqual(m.lintAtoms(spec, []), [], m.name);
    }
    assert.deepEqual(missing, []);
  });

  it('every registered target answers diffWrites and lintEffect', () => {
    const missing = [...TARGETS.values()].flatMap(t => [
      ...(typeof t.diffWrites !== 'function' ? [`${t.name}: diffWrites`] : []),
      ...(!['terminates', 'passive', 'mutates'].includes(t.lintEffect) ? [`${t.name}: lintEffect`] : []),
    ]);
    assert.deepEqual(missing, []);
  });

  it('each module says so in its own file: diffFacts, lintAtoms, lintNature per defineMatch; diffWrites, lintEffect per defineTarget', () => {
    for (const [dir, define, hooks] of [
      ['src/engine/matches', 'defineMatch', ['diffFacts', 'lintAtoms', 'lintNature']],
      ['src/engine/targets', 'defineTarget', ['diffWrites', 'lintEffect']],
    ] as const) {
      for (const name of readdirSync(join(ROOT, dir)).filter(n => n.endsWith('.ts') && n !== 'types.ts')) {
        const text = readFileSync(join(ROOT, dir, name), 'utf8');
        const defines = text.match(new RegExp(`(?<!function )\\b${define}\\s*(<[^(]*?>)?\\(`, 'g'))?.length ?? 0;
        // Files without modules (helpers, registries) are skipped; unknownModule is checked above.
        if (defines === 0) continue;
        for (const hook of hooks)
          assert.equal(
            text.match(new RegExp(`\\b${hook}:`, 'g'))?.length ?? 0,
            defines,
            `${dir}/${name}: ${defines} ${define} call(s), each needs its ${hook}`,
          );
      }
    }
  });

  it('an opaque module leaves the rule unexplored for the diff, never "matches everything"', () => {
    const [ttl, u32, tcp] = rules(
      [
        '-A INPUT -p tcp -m ttl --ttl-eq 5 -j DROP',
        '-A INPUT -m u32 --u32 "0>>22&0x3C@12>>26&0x3F=0x10" -j DROP',
        '-A INPUT -p tcp -m tcp --dport 80 -j DROP',
      ].join('\n'),
    );
    assert.deepEqual(ruleFacts(ttl!, 4).unsplit, ['ttl']);
    assert.deepEqual(ruleFacts(u32!, 4).unsplit, ['u32']);
    assert.deepEqual(ruleFacts(tcp!, 4).unsplit, []);
    assert.deepEqual(
      ruleFacts(tcp!, 4).dports.map(d => d.value.map(s => [s.lo, s.hi])),
      [[[80n, 80n]]],
    );
  });

  it('facts and atoms come from the compiled modules (aliases, implicit modules, `!`, target writes)', () => {
    const [a, b] = rules(
      [
        '-A INPUT -p tcp ! --destination-port 22 -m multiport --ports 80,443 -m conntrack --ctstate NEW,ESTABLISHED -j MARK --set-xmark 0x4000/0x4000',
        '-A INPUT -p tcp -m tcp ! --dport 22 -m conntrack --ctstate NEW,ESTABLISHED -j ACCEPT',
      ].join('\n'),
    );
    const [c] = rules(
      '-A PREROUTING -m recent --name web --rcheck --seconds 60 -j DNAT --to-destination 10.0.0.1-10.0.0.9:8080',
      'nat',
      'PREROUTING',
    );
    const fa = ruleFacts(a!, 4);
    assert.deepEqual(
      fa.dports.map(d => [d.negated, d.value.length]),
      [
        [true, 1],
        [false, 2],
      ],
    );
    assert.deepEqual(fa.ctstates, ['NEW', 'ESTABLISHED']);
    assert.deepEqual(fa.writes, [{ field: 'mark' }]);
    assert.deepEqual([...fa.tests].sort(), ['ctstate', 'dst', 'src']);
    // xt_TPROXY.c sets the packet mark before delivering: a rewrite a later `-m mark` rule can see.
    const [tp] = rules(
      '-A PREROUTING -p tcp --dport 80 -j TPROXY --on-port 3128 --tproxy-mark 0x1/0x1',
      'mangle',
      'PREROUTING',
    );
    assert.deepEqual(ruleFacts(tp!, 4).writes, [{ field: 'mark' }]);
    const fc = ruleFacts(c!, 4);
    assert.deepEqual(fc.recentLists, ['web']);
    assert.deepEqual(fc.writes, [
      { field: 'dst', to: { lo: 0x0a000001n, hi: 0x0a000009n }, ports: { lo: 8080n, hi: 8080n } },
    ]);
    // `! --destination-port 22` through the implicit tcp module is the same atom as `-m tcp ! --dport 22`.
    assert.deepEqual(ruleCriteria(b!).atoms, ['conntrack:--ctstate NEW,ESTABLISHED', 'p tcp', 'tcp:!--dport 22']);
    assert.ok(ruleCriteria(b!).atoms.every(x => ruleCriteria(a!).atoms.includes(x) || x === 'p tcp'));
  });
});
