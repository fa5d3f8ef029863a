/**
 * Targets that do not change where a packet goes: logging (`LOG`, `NFLOG`, `ULOG`, `TRACE`), conntrack
 * setup (`NOTRACK`, `CT`), and header or accounting tweaks (`CHECKSUM`, `TCPMSS`, `DSCP`, `TOS`, `TTL`,
 * `HL`, `CLASSIFY`, `SET`, `AUDIT`, `SECMARK`, `CONNSECMARK`, `IDLETIMER`, `LED`, `TEE`). All return
 * XT_CONTINUE; NOTRACK and `CT --notrack` make the connection untracked, so later nat tables are skipped
 * and conntrack matches see UNTRACKED.
 */
import type { OptionSpec } from '../matches/types.ts';
import { WRITES_NOTHING } from '../matches/knowledge.ts';
import { CONTINUE, defineTarget, type TargetModule } from './types.ts';

/**
 * `observes`: it only logs or counts (lintEffect 'passive'); the others change a header field, a mark, a set
 * or a timer a later match may read ('mutates').
 */
function passive(name: string, options: OptionSpec[], what: string, observes = false): TargetModule<unknown> {
  return defineTarget<{ text: string }>({
    name,
    options,
    compile: opts => ({ text: opts.map(o => [o.name, ...o.args].join(' ')).join(' ') }),
    apply: spec => ({ effect: CONTINUE, text: `${name}${spec.text ? ` ${spec.text}` : ''}` }),
    describe: spec => `${what}${spec.text ? ` (${spec.text})` : ''}; the packet continues`,
    // What these change (TTL, TOS, DSCP, ipset members, security marks…) is read only by match modules whose
    // diff facts are opaque (ttl, hl, set), whose classes the diff leaves open anyway.
    diffWrites: WRITES_NOTHING,
    lintEffect: observes ? 'passive' : 'mutates',
  });
}

const a1 = (...names: string[]): OptionSpec[] => names.map(name => ({ name, args: 1 }));
const a0 = (...names: string[]): OptionSpec[] => names.map(name => ({ name, args: 0 }));

export const PASSIVE_TARGETS: TargetModule<unknown>[] = [
  passive(
    'LOG',
    [
      ...a1('--log-level', '--log-prefix'),
      ...a0('--log-tcp-sequence', '--log-tcp-options', '--log-ip-options', '--log-uid', '--log-macdecode'),
    ],
    'log the packet to the kernel log',
    true,
  ),
  passive(
    'NFLOG',
    [...a1('--nflog-group', '--nflog-prefix', '--nflog-range', '--nflog-size', '--nflog-threshold')],
    'send the packet to userspace logging (nfnetlink_log)',
    true,
  ),
  passive(
    'ULOG',
    a1('--ulog-nlgroup', '--ulog-prefix', '--ulog-cprange', '--ulog-qthreshold'),
    'log the packet (ULOG)',
    true,
  ),
  passive('TRACE', [], 'trace the packet through every table (kernel TRACE)', true),
  passive('CHECKSUM', a0('--checksum-fill'), 'fill in the checksum'),
  passive('TCPMSS', [...a1('--set-mss'), ...a0('--clamp-mss-to-pmtu')], 'change the TCP MSS option'),
  passive('DSCP', a1('--set-dscp', '--set-dscp-class'), 'set the DSCP field'),
  passive('TOS', a1('--set-tos', '--and-tos', '--or-tos', '--xor-tos'), 'set the TOS field'),
  passive('TTL', a1('--ttl-set', '--ttl-dec', '--ttl-inc'), 'change the TTL'),
  passive('HL', a1('--hl-set', '--hl-dec', '--hl-inc'), 'change the hop limit'),
  passive('CLASSIFY', a1('--set-class'), 'set the traffic-control class'),
  passive(
    'SET',
    [
      ...a1('--add-set', '--del-set', '--map-set', '--timeout'),
      ...a0('--exist', '--map-mark', '--map-prio', '--map-queue'),
    ],
    "add or remove the packet's addresses in an ipset",
  ),
  passive('AUDIT', a1('--type'), 'write an audit record', true),
  passive('SECMARK', a1('--selctx'), 'set the SELinux security mark'),
  passive('CONNSECMARK', a0('--save', '--restore'), 'copy the SELinux security mark'),
  passive('IDLETIMER', a1('--timeout', '--label'), 'reset an idle timer'),
  passive('LED', a1('--led-trigger-id', '--led-delay'), 'blink an LED'),
  passive('TEE', a1('--gateway'), 'send a copy of the packet to another host'),
];
