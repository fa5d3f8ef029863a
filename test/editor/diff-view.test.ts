/**
 * The behaviour comparison as the editor shows it: the CodeLens title atop a diff editor and the report
 * panel's view model. The pairs are test/fixtures/diff's (see its README for where each expectation comes
 * from: an endpoint added to svc1 changes 43 classes of one Service; comments alone change nothing).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { classPacket, changePacket, diffLensTitle, diffViewModel, MAX_ALIKE } from '../../src/editor/diff-view.ts';
import { type DiffReport, diffRulesets, parsePacketText } from '../../src/engine/api.ts';
import { parseClean, readFixture } from '../helpers/fixtures.ts';

function compare(name: string): { report: DiffReport; oldText: string; newText: string } {
  const oldText = readFixture('diff', name, 'old.rules');
  const newText = readFixture('diff', name, 'new.rules');
  const r = diffRulesets(parseClean(oldText, `${name}/old.rules`), parseClean(newText, `${name}/new.rules`), {
    node: { addresses: ['172.18.0.4'] },
  });
  assert.ok(r.ok);
  return { report: r.report, oldText, newText };
}

describe('behaviour comparison in the editor', () => {
  it('the CodeLens summarises the report: N packet classes change · M Services affected', () => {
    // 43 since the diff cuts martian boxes at lo (commit 66562ab): packets arriving on lo fare otherwise.
    assert.equal(diffLensTitle(compare('endpoint-added').report), '43 packet classes change · 1 Service affected');
    assert.equal(
      diffLensTitle(compare('comments-only').report),
      '0 packet classes change · 0 Services affected · same behaviour',
    );
  });

  it('folds the classes that changed alike, keeps every packet traceable, and points at the rules', () => {
    const { report, oldText, newText } = compare('endpoint-added');
    const v = diffViewModel(report, 'old.rules', 'new.rules');
    assert.equal(v.summary, '43 packet classes change · 1 Service affected');
    // The panel leads with the CLI's first sentence (the fixture adds svc1's endpoint 10.10.2.13:80).
    assert.match(v.headlines[0] ?? '', /^default\/svc1:svc1-webport gained endpoint 10\.10\.2\.13:80; /);
    assert.equal(
      v.facts,
      `${report.classesTraced.toLocaleString('en-US')} packet classes traced · 2 chains differ (counters and comments aside)`,
    );
    assert.deepEqual(v.changedChains, [
      'nat KUBE-SVC-DLGPAL4ZCYSJ7UPR (rules +2 −1)',
      'nat KUBE-SEP-PXHLAW7W37ILZNFQ (added)',
    ]);
    assert.deepEqual(
      v.groups.map(g => [g.title, g.classes]),
      [['Service default/svc1:svc1-webport', 43]],
    );
    const g = v.groups[0]!;
    // Every class of the group is in exactly one item: as its representative or as one alike.
    const listed = g.items.flatMap(it => [it.change, ...it.alike.map(a => a.change)]).sort((a, b) => a - b);
    assert.deepEqual(
      listed,
      report.groups[0]!.changes.slice().sort((a, b) => a - b),
    );
    const outside = g.items.find(it => it.packet === 'tcp 203.0.113.10:40000 -> 10.200.1.230:80')!;
    assert.ok(outside, g.items.map(i => i.packet).join('\n'));
    assert.deepEqual(outside.aspects, ['dnat', 'probability']);
    assert.deepEqual(
      outside.old.map(f => [f.percent, f.text]),
      [
        ['50%', 'forwarded, DNAT 10.10.1.11:80, masqueraded to 172.18.0.4'],
        ['50%', 'forwarded, DNAT 10.10.4.12:80, masqueraded to 172.18.0.4'],
      ],
    );
    // round(0.3333333333·2^31)/2^31 for the first endpoint, the rest halved (fixture README).
    assert.deepEqual(
      outside.new.map(f => [f.percent, f.exact]),
      [
        ['33.33%', '715827883/2147483648'],
        ['33.33%', '1431655765/4294967296'],
        ['33.33%', '1431655765/4294967296'],
      ],
    );
    // Rule lines are 0-based and name the line that holds the rule.
    for (const r of outside.oldRules) assert.ok(oldText.split('\n')[r.line]!.includes(r.text), `${r.where}: ${r.text}`);
    for (const r of outside.newRules) assert.ok(newText.split('\n')[r.line]!.includes(r.text), `${r.where}: ${r.text}`);
    assert.deepEqual(
      outside.newRules.map(r => [r.side, r.where, r.rule]),
      [
        ['new', 'new.rules:112', 'nat KUBE-SVC-DLGPAL4ZCYSJ7UPR #2'],
        ['new', 'new.rules:113', 'nat KUBE-SVC-DLGPAL4ZCYSJ7UPR #3'],
        ['new', 'new.rules:85', 'nat KUBE-SEP-PXHLAW7W37ILZNFQ #2'],
      ],
    );
    // The trace buttons send back the change index; its packet parses as a Trace Packet input.
    for (const it of g.items) {
      const p = changePacket(report, it.change)!;
      assert.equal(p.packet, it.packet);
      assert.ok(parsePacketText(p.packet).ok, p.packet);
    }
    assert.equal(changePacket(report, report.changes.length), null);
    assert.equal(v.omitted, 0);
  });

  it('a rule that drops a Service: grouped by Service, then by the chain the others cross', () => {
    const v = diffViewModel(compare('drop-shadows-service').report, 'old.rules', 'new.rules');
    assert.deepEqual(
      v.groups.map(g => [g.title, g.classes]),
      [
        // Arrivals on lo are their own classes (commit 66562ab): 9 and 15, were 7 and 9.
        ['Service metallb-system/metallb-webhook-service', 9],
        ['chain filter FORWARD', 15],
      ],
    );
    assert.deepEqual(
      v.groups[0]!.items[0]!.new.map(f => f.text),
      ['dropped, (DROP in filter FORWARD rule 1)'],
    );
  });

  it('a session-affinity class: the packet to trace, and what it cannot carry', () => {
    assert.deepEqual(classPacket('tcp 1.2.3.4:40000 -> 10.96.0.10:80  (client in recent list KUBE-SEP-ABC)'), {
      packet: 'tcp 1.2.3.4:40000 -> 10.96.0.10:80',
      note: 'the client has a live entry in recent list KUBE-SEP-ABC (session affinity); the trace buttons trace the packet without it',
    });
    assert.deepEqual(classPacket('tcp 1.2.3.4 -> 10.96.0.10:80 from=local'), {
      packet: 'tcp 1.2.3.4 -> 10.96.0.10:80 from=local',
      note: null,
    });
  });

  it('lists at most MAX_ALIKE alike classes per item and says how many more', () => {
    const { report } = compare('endpoint-added');
    const first = report.changes[report.groups[0]!.changes[0]!]!;
    const many: DiffReport = {
      ...report,
      changes: Array.from({ length: MAX_ALIKE + 7 }, (_, i) => ({
        ...first,
        class: { ...first.class, packet: `tcp 10.0.${i >> 8}.${i & 255} -> 10.200.1.230:80` },
      })),
      groups: [{ ...report.groups[0]!, changes: Array.from({ length: MAX_ALIKE + 7 }, (_, i) => i) }],
    };
    const item = diffViewModel(many, 'a', 'b').groups[0]!.items;
    assert.equal(item.length, 1);
    assert.equal(item[0]!.alike.length, MAX_ALIKE);
    assert.equal(item[0]!.alikeMore, 6);
  });
});
