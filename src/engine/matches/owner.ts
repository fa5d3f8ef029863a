/**
 * `-m owner` (`xt_owner.c`): the local socket's uid/gid, only for locally generated packets. A packet with
 * no local socket (received or forwarded) matches only when every given test is inverted, as the kernel's
 * `(info->match ^ info->invert) == 0` for a missing socket.
 */
import { defineMatch, unknown } from './types.ts';
import { optionAtoms } from './knowledge.ts';

interface OwnerSpec {
  readonly uid: { negated: boolean; from: number; to: number } | null;
  readonly gid: { negated: boolean; from: number; to: number } | null;
  readonly socketExists: { negated: boolean } | null;
}

function range(text: string): { from: number; to: number } | null {
  const m = /^(\d+)(?:-(\d+))?$/.exec(text);
  return m ? { from: Number(m[1]), to: Number(m[2] ?? m[1]) } : null;
}

export const ownerMatch = defineMatch<OwnerSpec>({
  name: 'owner',
  options: [
    { name: '--uid-owner', args: 1, negatable: true },
    { name: '--gid-owner', args: 1, negatable: true },
    { name: '--socket-exists', args: 0, negatable: true },
    { name: '--suppl-groups', args: 0 },
  ],
  compile(opts, ctx) {
    const spec: { uid: OwnerSpec['uid']; gid: OwnerSpec['gid']; socketExists: OwnerSpec['socketExists'] } = {
      uid: null,
      gid: null,
      socketExists: null,
    };
    for (const o of opts) {
      if (o.name === '--socket-exists') spec.socketExists = { negated: o.negated };
      else if (o.name === '--uid-owner' || o.name === '--gid-owner') {
        const r = range(o.args[0] ?? '');
        if (!r)
          ctx.report(o, 'bad-argument', `${o.name} takes a numeric id or range (names are not resolved from files)`);
        else spec[o.name === '--uid-owner' ? 'uid' : 'gid'] = { negated: o.negated, ...r };
      }
    }
    return spec;
  },
  test(s, pkt, env) {
    const local = env.hook === 'OUTPUT' || env.hook === 'POSTROUTING';
    const tests = [s.uid, s.gid, s.socketExists].filter(t => t !== null);
    if (!local || pkt.ct.state === 'INVALID') return tests.every(t => t.negated);
    if (s.socketExists && s.socketExists.negated) return false;
    if ((s.uid && pkt.uid === null) || (s.gid && pkt.gid === null))
      return unknown('the sending process of the packet is not given (uid/gid)');
    if (s.uid && (pkt.uid! >= s.uid.from && pkt.uid! <= s.uid.to) === s.uid.negated) return false;
    if (s.gid && (pkt.gid! >= s.gid.from && pkt.gid! <= s.gid.to) === s.gid.negated) return false;
    return true;
  },
  why: (s, pkt) =>
    s.uid
      ? `--uid-owner ${s.uid.from}${s.uid.to !== s.uid.from ? `-${s.uid.to}` : ''} ≠ ${pkt.uid ?? 'no local socket'}`
      : 'owner differs',
  describe: s =>
    [
      s.uid && `sent by uid ${s.uid.negated ? 'other than ' : ''}${s.uid.from}`,
      s.gid && `sent by gid ${s.gid.negated ? 'other than ' : ''}${s.gid.from}`,
      s.socketExists && `${s.socketExists.negated ? 'without' : 'with'} a local socket`,
    ]
      .filter(Boolean)
      .join(', '),
  // The sending socket's owner is not a header field the diff models.
  diffFacts: 'opaque',
  lintAtoms: optionAtoms,
  lintNature: 'fixed',
});
