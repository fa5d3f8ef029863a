import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { EMPTY_FIELDS, fieldsFromText, fieldsToText } from '../../src/editor/packet-fields.ts';
import {
  OUTSIDE_CLIENT,
  checkPacketText,
  pushHistory,
  queryKeyword,
  suggestPackets,
} from '../../src/editor/packet-suggest.ts';
import { traceText } from '../../src/editor/run-trace.ts';
import { packetsReaching } from '../../src/editor/trace-from-here.ts';
import { analyze, seedText } from './helpers.ts';

describe('packets: suggestions, checks, history, panel fields', () => {
  const seed = seedText();
  const idx = analyze(seed);

  it('suggests the Service addresses and ports found in the dump, labelled by their comments', () => {
    const s = suggestPackets(idx);
    assert.ok(
      s.some(
        x =>
          x.text === `tcp ${OUTSIDE_CLIENT[4]} -> 172.18.255.200:80` &&
          x.label === 'default/svc1:svc1-webport loadbalancer IP',
      ),
    );
    assert.ok(s.some(x => x.text === `tcp ${OUTSIDE_CLIENT[4]} -> 10.200.1.1:443`));
    assert.ok(s.some(x => x.text === `tcp ${OUTSIDE_CLIENT[4]} -> 10.10.1.11:80` && /after DNAT/.test(x.label)));
    assert.equal(new Set(s.map(x => x.text)).size, s.length);
  });

  it('filters suggestions by the address or name being typed', () => {
    assert.equal(queryKeyword(`tcp ${OUTSIDE_CLIENT[4]} -> 10.200.1.2`), '10.200.1.2');
    assert.equal(queryKeyword('svc2'), 'svc2');
    assert.equal(queryKeyword('tcp 1.2.3.4 -> 10.96.3'), '10.96.3');
    assert.deepEqual(
      suggestPackets(idx, 'tcp 1.2.3.4 -> 10.200.1.23').map(x => x.text),
      [`tcp ${OUTSIDE_CLIENT[4]} -> 10.200.1.230:80`],
    );
    assert.ok(suggestPackets(idx, 'svc2').every(x => /svc2/.test(x.label)));
    assert.equal(suggestPackets(idx, '', 3).length, 3);
  });

  it('a packet that reaches a chain, from the rules on the way there', () => {
    const chain = (name: string) => idx.chain('nat', name)!;
    assert.equal(
      packetsReaching(idx, 'nat', chain('KUBE-SVC-NPX46M4PTMTKRN6Y'), {})[0]?.packet,
      `tcp ${OUTSIDE_CLIENT[4]} -> 10.200.1.1:443`,
    );
    assert.equal(
      packetsReaching(idx, 'nat', chain('KUBE-SEP-V2PECCYPB6X2GSCW'), {})[0]?.packet,
      `tcp ${OUTSIDE_CLIENT[4]} -> 10.200.1.1:443`,
    );
    // The suggested packet does reach the chain when traced.
    const r = traceText(idx, packetsReaching(idx, 'nat', chain('KUBE-SEP-V2PECCYPB6X2GSCW'), {})[0]!.packet, {
      addresses: ['172.18.0.4'],
    });
    assert.ok(r.ok);
    assert.ok(r.trace.outcomes.every(o => o.steps.some(s => s.chain === 'KUBE-SEP-V2PECCYPB6X2GSCW')));
  });

  it('checks a packet as it is typed', () => {
    assert.deepEqual(checkPacketText('tcp 10.0.0.1 -> 10.96.0.10:53', 4), {
      ok: true,
      summary: 'TCP from 10.0.0.1 to 10.96.0.10:53',
    });
    assert.deepEqual(checkPacketText('udp 10.96.0.10:53', 4), {
      ok: true,
      summary: 'UDP sent by the node to 10.96.0.10:53',
    });
    assert.match(
      (checkPacketText('tcp 10.0.0.1 -> 10.96.0.10', 4) as { error: string }).error,
      /needs a destination port/,
    );
    assert.match(
      (checkPacketText('tcp 10.0.0.1 -> [2001:db8::1]:80', 4) as { error: string }).error,
      /IPv6, the dump is IPv4/,
    );
    assert.match((checkPacketText('tcp 10.0.0.999 -> 10.0.0.1:80', 4) as { error: string }).error, /not an IP address/);
    assert.match((checkPacketText('', 4) as { error: string }).error, /Type a packet/);
    assert.match(
      (checkPacketText('tcp 10.0.0.1 -> 10.0.0.2:80 colour=red', 4) as { error: string }).error,
      /unknown packet field/,
    );
  });

  it('keeps the newest packet first, without duplicates, at most 20', () => {
    let h: string[] = [];
    for (let i = 0; i < 25; i++) h = pushHistory(h, `udp 10.0.0.${i % 22} -> 10.0.0.1:53`);
    assert.equal(h.length, 20);
    assert.equal(h[0], 'udp 10.0.0.2 -> 10.0.0.1:53');
    assert.equal(new Set(h).size, 20);
  });

  it('panel fields and packet text convert both ways', () => {
    const text = 'udp [2001:db8::1]:5353 -> [2001:db8::2]:53 in=eth1 from=outside state=ESTABLISHED mark=0x4000';
    const f = fieldsFromText(text)!;
    assert.deepEqual(f, {
      protocol: 'udp',
      src: '2001:db8::1',
      sport: '5353',
      dst: '2001:db8::2',
      dport: '53',
      from: 'outside',
      in: 'eth1',
      state: 'ESTABLISHED',
      mark: '0x4000',
    });
    assert.equal(fieldsToText(f), text);
    assert.equal(fieldsToText({ ...EMPTY_FIELDS, dst: '10.0.0.1', dport: '80' }), 'tcp 10.0.0.1:80');
    assert.equal(fieldsFromText('nonsense'), null);
  });
});
