/**
 * `-m helper` (net/netfilter/xt_helper.c `helper_mt`) tests the conntrack helper of the connection's *master*:
 * it matches only packets of an expected connection (FTP data, SIP media…) whose master has that helper.
 * A NEW packet's connection has no master (an expected connection's packets are RELATED), nor does an
 * INVALID or UNTRACKED packet have a connection; for RELATED and ESTABLISHED packets the master is kernel
 * state the dump does not show, so the answer is unknown unless the packet states it (`helper=NAME|none`).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parsePacketText, probabilitySums, tracePacket, type PacketInput, type Trace } from '../../src/engine/api.ts';
import { parseClean } from '../helpers/fixtures.ts';

const RULES = `*filter
:INPUT DROP [0:0]
:FORWARD ACCEPT [0:0]
:OUTPUT ACCEPT [0:0]
-A INPUT -m helper --helper ftp -j ACCEPT
COMMIT
`;

function trace(packet: string): Trace {
  const p = parsePacketText(packet);
  if (!p.ok) throw new Error(p.error);
  const r = tracePacket(parseClean(RULES), p.input as PacketInput, { node: { addresses: ['10.0.0.1'] } });
  if (!r.ok) throw new Error(r.error);
  return r.trace;
}
const fates = (t: Trace) => t.outcomes.map(o => `${o.probabilityExact} ${o.disposition}`);

describe('-m helper (xt_helper.c): the helper of the connection master', () => {
  it('an ESTABLISHED packet with no helper stated: unknown, both ways, never a silent "no helper"', () => {
    const t = trace('tcp 10.0.0.2:20 -> 10.0.0.1:40001 state=ESTABLISHED');
    assert.equal(t.unknown, true);
    assert.deepEqual(fates(t).sort(), ['1 dropped', '1 local']);
    assert.deepEqual(new Set(probabilitySums(t)), new Set(['1']));
    const reasons = t.outcomes.flatMap(o => o.assumptions.map(a => a.reason));
    assert.ok(
      reasons.some(r => /helper=NAME or helper=none/.test(r)),
      reasons.join('\n'),
    );
  });

  it('a RELATED packet with helper=ftp stated matches; helper=none or another helper does not', () => {
    assert.deepEqual(fates(trace('tcp 10.0.0.2:20 -> 10.0.0.1:40001 state=RELATED helper=ftp')), ['1 local']);
    assert.deepEqual(fates(trace('tcp 10.0.0.2:20 -> 10.0.0.1:40001 state=RELATED helper=none')), ['1 dropped']);
    assert.deepEqual(fates(trace('tcp 10.0.0.2:20 -> 10.0.0.1:40001 state=RELATED helper=sip')), ['1 dropped']);
  });

  it('a NEW packet (the default) has no master: no match, decided', () => {
    const t = trace('tcp 10.0.0.2 -> 10.0.0.1:21');
    assert.equal(t.unknown, false);
    assert.deepEqual(fates(t), ['1 dropped']);
  });

  it('a NEW packet cannot have a helper master: stating one is an error', () => {
    const p = parsePacketText('tcp 10.0.0.2 -> 10.0.0.1:21 helper=ftp');
    assert.ok(p.ok);
    const r = tracePacket(parseClean(RULES), p.input, { node: { addresses: ['10.0.0.1'] } });
    assert.equal(r.ok, false);
  });
});
