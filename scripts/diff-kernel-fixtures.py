#!/usr/bin/env python3
"""Build test/fixtures/diff/kernel/: PR-like changes of seed 003's worker dump, with what the Linux kernel
did to probe packets under the old and the new dump (nforacle.py, legacy backend).

    sudo python3 scripts/diff-kernel-fixtures.py [--oracle PATH] [CASE...]

Each case folder gets old.rules, new.rules, probes.jsonl and kernel.json. kernel.json is the oracle's
answer per probe on each side, reduced to the packet's fate: verdict, where it was delivered, and the
source address the receiver saw (SNAT / MASQUERADE). Nothing in it comes from the TypeScript engine.

The base is examples/seed-003/node-myk8s-worker.rules without its one `-m nfacct` match: iptables-restore
refuses it unless the nfacct object exists, and xt_nfacct always matches (it only counts), so removing it
changes no packet's fate.
"""
import json
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, 'test', 'fixtures', 'diff', 'kernel')
ORACLE = os.path.join(ROOT, '..', '..', 'shared', 'oracle', 'nforacle.py')
if not os.path.exists(ORACLE):
    ORACLE = '/work/shared/oracle/nforacle.py'

with open(os.path.join(ROOT, 'examples', 'seed-003', 'node-myk8s-worker.rules')) as f:
    BASE = f.read().replace(' -m nfacct --nfacct-name ct_state_invalid_dropped_pkts', '')


def before_first(text, prefix, lines):
    """Insert lines before the first line starting with prefix."""
    out, done = [], False
    for line in text.split('\n'):
        if not done and line.startswith(prefix):
            out.extend(lines)
            done = True
        out.append(line)
    assert done, prefix
    return '\n'.join(out)


def after_last(text, prefix, lines):
    rows = text.split('\n')
    idx = max(i for i, l in enumerate(rows) if l.startswith(prefix))
    return '\n'.join(rows[:idx + 1] + lines + rows[idx + 1:])


def declare(text, table, chain):
    return text.replace('*%s\n' % table, '*%s\n:%s - [0:0]\n' % (table, chain), 1)


def ext(proto, src, dst, dport=None, **kw):
    p = {'proto': proto, 'src': src, 'dst': dst, 'from': 'ext'}
    if dport is not None:
        p['dport'] = dport
        p['sport'] = 40000
    p.update(kw)
    return p


def pod(proto, src, dst, dport=None, **kw):
    p = ext(proto, src, dst, dport, **kw)
    p['from'] = 'pod'
    return p


NODE = '172.18.0.4'
INPUT_RULE = '-A INPUT -s 198.51.100.0/24 -p tcp -m tcp --dport 22 -j DROP'
SHARED = declare(
    after_last(
        before_first(before_first(BASE, '-A INPUT ', ['-A INPUT -p tcp -m tcp --dport 22 -j SSHGATE']), '-A FORWARD ',
                     ['-A FORWARD -p tcp -m tcp --dport 22 -j SSHGATE']),
        '-A KUBE-FORWARD ', ['-A SSHGATE -s 10.0.0.0/8 -j RETURN', '-A SSHGATE -p tcp -j REJECT --reject-with tcp-reset']),
    'filter', 'SSHGATE')
SSH_PROBES = [ext('tcp', '203.0.113.10', NODE, 22), ext('tcp', '198.51.100.10', NODE, 22), ext('tcp', '203.0.113.10', '8.8.8.8', 22),
              ext('tcp', '198.51.100.10', '8.8.8.8', 22), ext('tcp', '203.0.113.10', NODE, 80), ext('tcp', '10.1.2.3', NODE, 22),
              ext('udp', '203.0.113.10', NODE, 22)]
INPUT_PROBES = [ext('tcp', '198.51.100.7', NODE, 22), ext('tcp', '198.51.100.7', NODE, 2222), ext('tcp', '203.0.113.10', NODE, 22),
                ext('udp', '198.51.100.7', NODE, 22), ext('udp', '198.51.100.7', NODE, 53), ext('tcp', '198.51.100.7', NODE, 80),
                ext('tcp', '198.51.100.7', '8.8.8.8', 22), ext('icmp', '198.51.100.7', NODE)]
SVC_PROBES = [ext('tcp', '198.51.100.7', '10.200.1.1', 443), ext('tcp', '198.51.100.200', '10.200.1.1', 443), ext('tcp', '203.0.113.10', '10.200.1.1', 443),
              ext('tcp', '198.51.100.7', '172.18.255.202', 80, random=True), ext('tcp', '198.51.100.7', '8.8.8.8', 80)]
KSVC = '-A KUBE-SERVICES '
# A host firewall in front of kube-proxy's INPUT rules: enough sources, ports and states that the old diff
# stopped enumerating their combinations (more than 2048 classes) and varied one dimension at a time.
BUSY_RULES = [
    '-A INPUT -i lo -j ACCEPT',
    '-A INPUT -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT',
    '-A INPUT -s 192.0.2.0/24 -p tcp -m tcp --dport 22 -j ACCEPT',
    '-A INPUT -s 198.18.0.0/15 -p tcp -m multiport --dports 80,443 -j ACCEPT',
    '-A INPUT -s 100.64.0.0/10 -p udp -m udp --dport 53 -j ACCEPT',
    '-A INPUT -s 10.0.0.0/8 -p tcp -m tcp --dport 9100 -j ACCEPT',
    '-A INPUT -p tcp -m tcp --dport 6443 -j ACCEPT',
    '-A INPUT -s 172.18.0.0/16 -p udp -m udp --dport 8472 -j ACCEPT',
    '-A INPUT -s 172.18.0.0/16 -p tcp -m tcp --dport 10250 -j ACCEPT',
    '-A INPUT -p icmp -m icmp --icmp-type 8 -j ACCEPT',
    '-A INPUT -p icmp -j DROP',
    '-A INPUT -p tcp -m tcp --dport 22 -j REJECT --reject-with tcp-reset',
]
BUSY = before_first(BASE, '-A INPUT ', BUSY_RULES)
BUSY_PROBES = [ext('tcp', '203.0.113.10', NODE, 22), ext('tcp', '192.0.2.10', NODE, 22), ext('tcp', '198.51.100.7', NODE, 22),
               ext('tcp', '198.51.100.7', NODE, 8080), ext('tcp', '203.0.113.10', NODE, 8080), ext('icmp', '203.0.113.10', NODE),
               ext('icmp', '203.0.113.10', NODE, icmp_type=13), ext('tcp', '203.0.113.10', '8.8.8.8', 22),
               ext('tcp', '203.0.113.99', NODE, 22, sport=51000), ext('tcp', '198.51.100.99', NODE, 8080, sport=51000), ext('icmp', '192.0.2.77', NODE, icmp_type=13)]

CASES = {
    # Why 1: a DROP of a partner range, two conditions beyond the source (the false "identical").
    'forward-drop-partner': dict(
        old=BASE,
        new=before_first(BASE, '-A FORWARD ', ['-A FORWARD -s 198.51.100.0/24 -p tcp -m tcp --dport 80 -m comment --comment "block partner range" -j DROP']),
        probes=[ext('tcp', '198.51.100.7', '172.18.255.201', 80, random=True), ext('tcp', '198.51.100.7', '8.8.8.8', 80),
                ext('tcp', '198.51.100.7', '8.8.8.8', 443), ext('udp', '198.51.100.7', '8.8.8.8', 80), ext('tcp', '203.0.113.10', '8.8.8.8', 80),
                ext('tcp', '198.51.100.7', NODE, 80)]),
    # Why 1: a MASQUERADE whose source narrows from /24 to /28.
    'masquerade-narrowed': dict(
        old=after_last(BASE, '-A POSTROUTING ', ['-A POSTROUTING -s 10.10.1.0/24 ! -d 10.10.0.0/16 -j MASQUERADE']),
        new=after_last(BASE, '-A POSTROUTING ', ['-A POSTROUTING -s 10.10.1.0/28 ! -d 10.10.0.0/16 -j MASQUERADE']),
        probes=[pod('tcp', '10.10.1.5', '8.8.8.8', 80), pod('tcp', '10.10.1.200', '8.8.8.8', 80), pod('udp', '10.10.1.200', '8.8.8.8', 53),
                pod('tcp', '10.10.2.200', '8.8.8.8', 80), pod('tcp', '10.10.1.200', '10.10.2.13', 80)]),
    # Why 1: a rule added to a chain reached from INPUT and FORWARD that only changes 203.0.113.0/24.
    'shared-chain-added': dict(old=SHARED, new=before_first(SHARED, '-A SSHGATE ', ['-A SSHGATE -s 203.0.113.0/24 -p tcp -j DROP']), probes=SSH_PROBES),
    'shared-chain-removed': dict(old=before_first(SHARED, '-A SSHGATE ', ['-A SSHGATE -s 203.0.113.0/24 -p tcp -j DROP']), new=SHARED, probes=SSH_PROBES),
    'shared-chain-edited': dict(old=before_first(SHARED, '-A SSHGATE ', ['-A SSHGATE -s 203.0.113.0/24 -p tcp -j DROP']),
                                new=before_first(SHARED, '-A SSHGATE ', ['-A SSHGATE -s 203.0.113.0/25 -p tcp -j ACCEPT']), probes=SSH_PROBES),
    # Why 1: routed UDP and ICMP after a FORWARD policy change.
    'forward-policy': dict(old=BASE, new=BASE.replace(':FORWARD ACCEPT', ':FORWARD DROP', 1),
                           probes=[ext('udp', '203.0.113.10', '8.8.8.8', 53), ext('icmp', '203.0.113.10', '8.8.8.8'), ext('tcp', '203.0.113.10', '8.8.8.8', 443),
                                   ext('tcp', '203.0.113.10', NODE, 22), ext('tcp', '203.0.113.10', '172.18.255.201', 80, random=True)]),
    # Why 1: a port forward's target changes; the hairpin MASQUERADE still names the old target.
    'nat-reflection': dict(
        old=after_last(before_first(BASE, '-A PREROUTING ', ['-A PREROUTING -d 172.18.0.4/32 -p tcp -m tcp --dport 8080 -j DNAT --to-destination 10.10.1.10:80']),
                       '-A POSTROUTING ', ['-A POSTROUTING -s 10.10.0.0/16 -d 10.10.1.10/32 -p tcp -m tcp --dport 80 -j MASQUERADE']),
        new=after_last(before_first(BASE, '-A PREROUTING ', ['-A PREROUTING -d 172.18.0.4/32 -p tcp -m tcp --dport 8080 -j DNAT --to-destination 10.10.1.20:80']),
                       '-A POSTROUTING ', ['-A POSTROUTING -s 10.10.0.0/16 -d 10.10.1.10/32 -p tcp -m tcp --dport 80 -j MASQUERADE']),
        probes=[pod('tcp', '10.10.2.50', NODE, 8080), ext('tcp', '203.0.113.10', NODE, 8080), pod('tcp', '10.10.2.50', NODE, 8081)]),
    # Why 1: a new first INPUT rule (three conditions), and its removal and edit.
    'input-first-added': dict(old=BASE, new=before_first(BASE, '-A INPUT ', [INPUT_RULE]), probes=INPUT_PROBES),
    'input-first-removed': dict(old=before_first(BASE, '-A INPUT ', ['-A INPUT -s 198.51.100.0/24 -p udp -j DROP']), new=BASE, probes=INPUT_PROBES),
    'input-first-edited': dict(old=before_first(BASE, '-A INPUT ', [INPUT_RULE]), new=before_first(BASE, '-A INPUT ', [INPUT_RULE.replace('--dport 22', '--dport 2222')]),
                               probes=INPUT_PROBES),
    # Rules at the head of nat KUBE-SERVICES: two conditions added, three removed, one edited.
    'kube-services-added': dict(old=BASE, new=before_first(BASE, KSVC, [KSVC + '-s 198.51.100.0/24 -p tcp -j RETURN']), probes=SVC_PROBES),
    'kube-services-removed': dict(old=before_first(BASE, KSVC, [KSVC + '-s 198.51.100.0/24 -d 10.200.1.1/32 -p tcp -j RETURN']), new=BASE, probes=SVC_PROBES),
    'kube-services-edited': dict(old=before_first(BASE, KSVC, [KSVC + '-s 198.51.100.0/24 -p tcp -j RETURN']),
                                 new=before_first(BASE, KSVC, [KSVC + '-s 198.51.100.0/25 -p tcp -j RETURN']), probes=SVC_PROBES),
    # Why 1: an ACCEPT inserted before a REJECT.
    'accept-before-reject': dict(
        old=before_first(BASE, '-A INPUT ', ['-A INPUT -p tcp -m tcp --dport 22 -j REJECT --reject-with tcp-reset']),
        new=before_first(BASE, '-A INPUT ', ['-A INPUT -s 10.0.0.0/8 -p tcp -m tcp --dport 22 -j ACCEPT', '-A INPUT -p tcp -m tcp --dport 22 -j REJECT --reject-with tcp-reset']),
        probes=[ext('tcp', '10.1.2.3', NODE, 22), ext('tcp', '203.0.113.10', NODE, 22), ext('tcp', '10.1.2.3', NODE, 80)]),
    # Why 1: an ICMP type change.
    'icmp-type': dict(
        old=before_first(BASE, '-A INPUT ', ['-A INPUT -p icmp -m icmp --icmp-type 8 -j ACCEPT', '-A INPUT -p icmp -j DROP']),
        new=before_first(BASE, '-A INPUT ', ['-A INPUT -p icmp -m icmp --icmp-type 13 -j ACCEPT', '-A INPUT -p icmp -j DROP']),
        probes=[ext('icmp', '203.0.113.10', NODE), ext('icmp', '203.0.113.10', NODE, icmp_type=13), ext('icmp', '203.0.113.10', NODE, icmp_type=0),
                ext('tcp', '203.0.113.10', NODE, 22)]),
    # The same kinds of change behind a busy host firewall.
    'busy-accept-before-reject': dict(old=BUSY, new=BUSY.replace(BUSY_RULES[-1], '-A INPUT -s 203.0.113.0/24 -p tcp -m tcp --dport 22 -j ACCEPT\n' + BUSY_RULES[-1]),
                                      probes=BUSY_PROBES),
    'busy-icmp-type': dict(old=BUSY, new=BUSY.replace('--icmp-type 8 -j ACCEPT', '--icmp-type 13 -j ACCEPT'), probes=BUSY_PROBES),
    'busy-input-first-added': dict(old=BUSY, new=before_first(BUSY, '-A INPUT ', ['-A INPUT -s 198.51.100.0/24 -p tcp -m tcp --dport 8080 -j DROP']),
                                   probes=BUSY_PROBES),
    'busy-reorder': dict(old=BUSY, new=BUSY.replace(BUSY_RULES[2] + '\n' + BUSY_RULES[3], BUSY_RULES[3] + '\n' + BUSY_RULES[2]), probes=BUSY_PROBES),
    # No change: two disjoint rules swap places; a comment changes.
    'reorder-disjoint': dict(
        old=before_first(BASE, '-A INPUT ', ['-A INPUT -s 198.51.100.0/24 -p tcp -m tcp --dport 22 -j DROP', '-A INPUT -s 203.0.113.0/24 -p udp -m udp --dport 53 -j ACCEPT']),
        new=before_first(BASE, '-A INPUT ', ['-A INPUT -s 203.0.113.0/24 -p udp -m udp --dport 53 -j ACCEPT', '-A INPUT -s 198.51.100.0/24 -p tcp -m tcp --dport 22 -j DROP']),
        probes=[ext('tcp', '198.51.100.7', NODE, 22), ext('udp', '203.0.113.10', NODE, 53), ext('tcp', '203.0.113.10', NODE, 22)]),
    'comment-only': dict(
        old=before_first(BASE, '-A INPUT ', ['-A INPUT -s 198.51.100.0/24 -p tcp -m tcp --dport 22 -m comment --comment "old note" -j DROP']),
        new=before_first(BASE, '-A INPUT ', ['-A INPUT -s 198.51.100.0/24 -p tcp -m tcp --dport 22 -m comment --comment "new note" -j DROP']),
        probes=[ext('tcp', '198.51.100.7', NODE, 22), ext('tcp', '203.0.113.10', NODE, 22)]),
}


def fate(r):
    """The kernel's answer reduced to a fate: verdict, delivery address, source seen by the receiver."""
    return {'verdict': r['verdict'], 'delivered_to': r.get('delivered_to'), 'src_seen': r.get('src_seen'),
            'rejects': len(r.get('rejects') or []), 'send_error': r.get('send_error')}


def run(rules, probes, tmp):
    with open(os.path.join(tmp, 'p.jsonl'), 'w') as f:
        for p in probes:
            f.write(json.dumps({k: v for k, v in p.items() if k != 'random'}) + '\n')
    out = os.path.join(tmp, 'r.json')
    subprocess.run([sys.executable, ORACLE, rules, '--backend', 'legacy', '--node-ip', NODE, '--probes', os.path.join(tmp, 'p.jsonl'),
                    '--out', out], check=True, stdout=subprocess.DEVNULL)
    with open(out) as f:
        return json.load(f)


def main(argv):
    global ORACLE
    if '--oracle' in argv:
        i = argv.index('--oracle')
        ORACLE = argv[i + 1]
        argv = argv[:i] + argv[i + 2:]
    names = argv or list(CASES)
    for name in names:
        case = CASES[name]
        d = os.path.join(OUT, name)
        os.makedirs(d, exist_ok=True)
        for side in ('old', 'new'):
            with open(os.path.join(d, side + '.rules'), 'w') as f:
                f.write(case[side])
        with open(os.path.join(d, 'probes.jsonl'), 'w') as f:
            for p in case['probes']:
                f.write(json.dumps(p) + '\n')
        with tempfile.TemporaryDirectory() as tmp:
            res = {side: run(os.path.join(d, side + '.rules'), case['probes'], tmp) for side in ('old', 'new')}
        kernel = os.popen('uname -r').read().strip()
        rows = []
        for i, p in enumerate(case['probes']):
            a, b = fate(res['old']['results'][i]), fate(res['new']['results'][i])
            if p.get('random'):
                # kube-proxy picks the endpoint with -m statistic: only the verdict and the source seen count.
                a['delivered_to'] = b['delivered_to'] = None
            rows.append({'probe': p, 'old': a, 'new': b, 'changed': a != b})
        doc = {'source': 'Linux kernel %s via nforacle.py (iptables-legacy), one packet per probe on old.rules and new.rules, '
                         'node 172.18.0.4; regenerate with scripts/diff-kernel-fixtures.py' % kernel,
               'probes': rows}
        with open(os.path.join(d, 'kernel.json'), 'w') as f:
            json.dump(doc, f, indent=1)
            f.write('\n')
        print('%s: %d probes, %d change' % (name, len(rows), sum(r['changed'] for r in rows)))


if __name__ == '__main__':
    main(sys.argv[1:])
