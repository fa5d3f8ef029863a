/**
 * `packetlens check` validates a dump with `validateRules(rs, { release: true })`, which asks each rule for
 * its diagnostics only (`IptRule.checkDiagnostics`: no compiled form kept, no chain lookup for a target
 * without options). Those must be exactly the diagnostics of compiling every rule in full.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseIptables } from '../../src/engine/api.ts';
import { validateRules } from '../../src/engine/iptables/resolve.ts';

const TARGET_OPTIONS = `*nat
:PREROUTING ACCEPT [0:0]
:POSTROUTING ACCEPT [0:0]
:DNAT - [0:0]
:SVC - [0:0]
-A PREROUTING -p tcp -j DNAT --to-destination 10.0.0.1:99999
-A PREROUTING -p tcp -j SVC --to-destination 10.0.0.1:80
-A PREROUTING -j ACCEPT --log-prefix x
-A PREROUTING -p tcp -j REDIRECT --to-ports 80-
-A POSTROUTING -j MASQUERADE --random-fully --bogus
-A POSTROUTING -m statistic --mode random --probability 1.5 -j RETURN
-A POSTROUTING -p tcp -m tcp --dport 70000 -j SNAT --to-source 10.0.0.300
-A SVC -g NOWHERE
COMMIT
*filter
:INPUT ACCEPT [0:0]
-A INPUT -j REJECT --reject-with nonsense
-A INPUT -j MARK
-A INPUT -m comment --comment "open -j ACCEPT
-A INPUT -m comment --comment "a \\"quoted\\" word" -j REJECT --reject-with nonsense
COMMIT
`;

describe('check diagnostics', () => {
  it('are those of compiling every rule, target options included', () => {
    const full = parseIptables(TARGET_OPTIONS, { file: 'rules' }).diagnostics;
    const rs = parseIptables(TARGET_OPTIONS, { file: 'rules', lazy: true });
    validateRules(rs, { release: true });
    assert.ok(full.length >= 8, `expected the target and option errors, got ${JSON.stringify(full)}`);
    assert.deepEqual(rs.diagnostics, full);
  });
});
