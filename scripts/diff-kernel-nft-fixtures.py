#!/usr/bin/env python3
"""Build test/fixtures/diff/kernel-nft/: PR-like changes of nftables rulesets (seed 003's kube-proxy nftables
rules, test/fixtures/diff/nft/kube-seed003, and an inet host firewall with named sets), with what the Linux
kernel did to probe packets under the old and the new ruleset (nforacle.py --nft).

    python3 scripts/diff-kernel-nft-fixtures.py [--oracle PATH] [CASE...]     (as root)

Each case folder gets old.nft, new.nft, probes.jsonl and kernel.json: the oracle's answer per probe on each
side, reduced to the packet's fate (verdict, where it was delivered, the source the receiver saw). Nothing in
it comes from the TypeScript engine. Probes marked `random` hit a Service whose endpoint numgen picks: only the
verdict and the source seen count for them. Probes with `repeat: N` are sent N times (source ports 41000…,
each a new connection); their fate lists every endpoint the kernel delivered them to (`delivered`), so a
Service that lost an endpoint shows it.
"""
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, 'test', 'fixtures', 'diff', 'kernel-nft')
KUBE = os.path.join(ROOT, 'test', 'fixtures', 'diff', 'nft', 'kube-seed003')
ORACLE = '/work/shared/oracle/nforacle.py'
NODE = '172.18.0.4'
NODE6 = '2001:db8::4'
PODS = ['10.10.1.11', '10.10.4.12']


def kube(name):
    with open(os.path.join(KUBE, name + '.nft')) as f:
        return f.read()


FIREWALL = '''table inet filter {
  set allowed_tcp { type inet_service; elements = { 22, 80 } }
  set blocked4 { type ipv4_addr; flags interval; elements = { 198.51.100.0/24, 203.0.113.128/25 } }
  set trusted { type ipv4_addr . inet_service; elements = { 192.0.2.10 . 5432 } }
  chain input {
    type filter hook input priority filter; policy drop;
    ct state established,related accept
    iifname "lo" accept
    ip saddr @blocked4 drop
    ip saddr . tcp dport @trusted accept
    tcp dport vmap { 8080 : drop, 9090 : accept }
    tcp dport @allowed_tcp accept
    meta l4proto { icmp, ipv6-icmp } accept
  }
  chain forward {
    type filter hook forward priority filter; policy accept;
  }
}
'''


def ext(proto, src, dst, dport=None, **kw):
    p = {'proto': proto, 'src': src, 'dst': dst, 'from': 'ext'}
    if dport is not None:
        p['dport'] = dport
        p['sport'] = 40000
    p.update(kw)
    return p


def svc(proto, src, dst, dport):
    return ext(proto, src, dst, dport, random=True)


KUBE_PROBES = [
    svc('tcp', '203.0.113.10', '10.200.1.11', 80), svc('tcp', '203.0.113.10', '10.200.1.12', 80),
    svc('tcp', '203.0.113.10', '172.18.255.200', 80), svc('tcp', '203.0.113.10', '172.18.255.201', 80),
    svc('tcp', '198.51.100.10', '172.18.255.201', 80), ext('tcp', '203.0.113.10', '172.18.255.201', 8080),
    ext('tcp', '203.0.113.10', '172.18.255.201', 443), svc('tcp', '203.0.113.10', NODE, 30001),
    ext('tcp', '203.0.113.10', NODE, 22), ext('tcp', '198.51.100.10', NODE, 22), ext('tcp', '198.51.100.77', NODE, 22),
    ext('tcp', '198.51.100.10', NODE, 2222), ext('udp', '198.51.100.10', NODE, 22), ext('tcp', '198.51.100.10', '8.8.8.8', 22),
    ext('tcp', '203.0.113.10', '10.200.1.99', 80), ext('tcp', '203.0.113.10', '10.200.1.11', 8080),
    ext('tcp', '203.0.113.10', '8.8.8.8', 80), ext('icmp', '203.0.113.10', NODE),
]
FW_PROBES = [
    ext('tcp', '203.0.113.10', NODE, 22), ext('tcp', '203.0.113.10', NODE, 80), ext('tcp', '203.0.113.10', NODE, 443),
    ext('tcp', '198.51.100.7', NODE, 443), ext('tcp', '203.0.113.150', NODE, 22), ext('tcp', '203.0.113.200', NODE, 22),
    ext('tcp', '192.0.2.10', NODE, 5432), ext('tcp', '192.0.2.11', NODE, 5432), ext('tcp', '203.0.113.10', NODE, 8080),
    ext('tcp', '203.0.113.10', NODE, 9090), ext('udp', '203.0.113.10', NODE, 53), ext('icmp', '203.0.113.10', NODE),
    ext('tcp', '2001:db8:2::10', NODE6, 443), ext('tcp', '2001:db8:2::10', NODE6, 22), ext('tcp', '2001:db8:2::10', NODE6, 8080),
]

REPEAT = 40
RM_PROBES = [dict(ext('tcp', '203.0.113.10', '10.200.1.11', 80), repeat=REPEAT),
             dict(ext('tcp', '203.0.113.10', '172.18.255.200', 80), repeat=REPEAT),
             dict(ext('tcp', '203.0.113.10', '10.200.1.12', 80), repeat=REPEAT),
             dict(ext('tcp', '203.0.113.10', NODE, 30000), repeat=REPEAT)]

CASES = {
    'kube-rm-endpoint': dict(old=kube('old'), new=kube('rm-endpoint'), probes=RM_PROBES),
    'kube-drop-top': dict(old=kube('old'), new=kube('drop-top'), probes=KUBE_PROBES),
    'kube-vmap-elem': dict(old=kube('old'), new=kube('vmap-elem'), probes=KUBE_PROBES),
    'kube-reorder': dict(old=kube('old'), new=kube('reorder'), probes=KUBE_PROBES),
    'kube-counter': dict(old=kube('old'), new=kube('counter'), probes=KUBE_PROBES),
    'fw-set-added': dict(old=FIREWALL, new=FIREWALL.replace('elements = { 22, 80 }', 'elements = { 22, 80, 443 }'),
                         probes=FW_PROBES),
    'fw-interval-narrowed': dict(old=FIREWALL, new=FIREWALL.replace('203.0.113.128/25', '203.0.113.192/26'),
                                 probes=FW_PROBES),
    'fw-anon-vmap': dict(old=FIREWALL, new=FIREWALL.replace('8080 : drop', '8080 : accept'), probes=FW_PROBES),
    'fw-overlapping-moved': dict(
        old=FIREWALL,
        new=FIREWALL.replace('    ip saddr @blocked4 drop\n    ip saddr . tcp dport @trusted accept\n',
                             '    ip saddr . tcp dport @trusted accept\n').replace(
            '    meta l4proto { icmp, ipv6-icmp } accept\n',
            '    meta l4proto { icmp, ipv6-icmp } accept\n    ip saddr @blocked4 drop\n'),
        probes=FW_PROBES),
}


def fate(r):
    """The kernel's answer reduced to a fate: verdict, delivery address, source seen by the receiver."""
    return {'verdict': r['verdict'], 'delivered_to': r.get('delivered_to'), 'src_seen': r.get('src_seen'),
            'rejects': len(r.get('rejects') or []), 'send_error': r.get('send_error')}


def expand(probes):
    """Each probe once, or `repeat` times from source ports 41000… (new connections each)."""
    out = []
    for p in probes:
        base = {k: v for k, v in p.items() if k not in ('random', 'repeat')}
        if not p.get('repeat'):
            out.append(base)
            continue
        for k in range(p['repeat']):
            out.append(dict(base, sport=41000 + k))
    return out


def fold(probes, results):
    """The fate of every probe; a repeated probe's fate is the set of its runs' outcomes."""
    out, i = [], 0
    for p in probes:
        n = p.get('repeat') or 1
        runs = [fate(r) for r in results[i:i + n]]
        i += n
        if n == 1:
            out.append(runs[0])
            continue
        one = lambda k: runs[0][k] if all(r[k] == runs[0][k] for r in runs) else None
        out.append({'verdict': one('verdict'), 'delivered_to': None, 'src_seen': one('src_seen'),
                    'delivered': sorted({r['delivered_to'] for r in runs if r['delivered_to']}),
                    'rejects': sum(r['rejects'] for r in runs), 'send_error': one('send_error')})
    return out


def run(rules, probes, tmp):
    with open(os.path.join(tmp, 'p.jsonl'), 'w') as f:
        for p in expand(probes):
            f.write(json.dumps(p) + '\n')
    out = os.path.join(tmp, 'r.json')
    argv = [sys.executable, ORACLE, '--nft', rules, '--node-ip', NODE, '--node-ip6', NODE6, '--probes',
            os.path.join(tmp, 'p.jsonl'), '--out', out]
    for p in PODS:
        argv += ['--pod', p]
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL)
    with open(out) as f:
        return json.load(f)


def main(argv):
    global ORACLE
    if '--oracle' in argv:
        i = argv.index('--oracle')
        ORACLE = argv[i + 1]
        argv = argv[:i] + argv[i + 2:]
    for name in argv or list(CASES):
        case = CASES[name]
        d = os.path.join(OUT, name)
        os.makedirs(d, exist_ok=True)
        for side in ('old', 'new'):
            with open(os.path.join(d, side + '.nft'), 'w') as f:
                f.write(case[side])
        with open(os.path.join(d, 'probes.jsonl'), 'w') as f:
            for p in case['probes']:
                f.write(json.dumps(p) + '\n')
        with tempfile.TemporaryDirectory() as tmp:
            res = {side: run(os.path.join(d, side + '.nft'), case['probes'], tmp) for side in ('old', 'new')}
        kernel = os.popen('uname -r').read().strip()
        rows = []
        olds, news = fold(case['probes'], res['old']['results']), fold(case['probes'], res['new']['results'])
        for i, p in enumerate(case['probes']):
            a, b = olds[i], news[i]
            if p.get('random'):
                a['delivered_to'] = b['delivered_to'] = None
            rows.append({'probe': p, 'old': a, 'new': b, 'changed': a != b})
        doc = {'source': 'Linux kernel %s via nforacle.py --nft, one packet per probe on old.nft and new.nft, node %s / %s; '
                         'regenerate with scripts/diff-kernel-nft-fixtures.py' % (kernel, NODE, NODE6),
               'probes': rows}
        with open(os.path.join(d, 'kernel.json'), 'w') as f:
            json.dump(doc, f, indent=1)
            f.write('\n')
        print('%s: %d probes, %d change' % (name, len(rows), sum(r['changed'] for r in rows)))


if __name__ == '__main__':
    main(sys.argv[1:])
