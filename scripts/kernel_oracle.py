#!/usr/bin/env python3
"""Run the nforacle kernel oracle for one packetlens fixture folder and trim its output.

usage:
  kernel_oracle.py run FIXTURE_DIR --backend legacy|nft --out FILE [--oracle PATH] [--raw-dir DIR]
  kernel_oracle.py diff COMMITTED.json NEW.json [--label NAME]
  kernel_oracle.py count FIXTURE_DIR...

A fixture folder holds `rules` (iptables-save dump), `probes.jsonl` (one probe per line, each with a
unique "name" and an explicit "sport") and `options.json`:

  {"node_ip": "172.18.0.4", "node_if": "eth0", "gw": null, "pod_if_prefix": "veth", "pod_gw": null,
   "local_ips": [], "pods": [], "setup_cmd": null, "count": 1, "statistic_count": 12,
   "statistic_probes": [], "extra_args": []}

Probes named in `statistic_probes` cross `-m statistic` rules; they are run in a second oracle run
with `--count statistic_count` so that every random branch shows up. All other probes are sent once
(`count`), in file order, in one run (so `-m recent` / `-m limit` state carries over between them
exactly as in that order). Both runs use the same topology: every `from: pod` source must be listed
in `pods` (they are passed as `--pod`, which fixes the pod interface numbering).

Only the python3 standard library is used.
"""
import argparse
import datetime
import json
import os
import platform
import re
import subprocess
import sys
import tempfile

DEFAULT_ORACLE = os.environ.get("NFORACLE", "/work/shared/oracle/nforacle.py")
PROBE_KEYS = ("name", "proto", "src", "sport", "dst", "dport", "from", "icmp_type", "sender_lo_down")
RESULT_KEYS = ("verdict", "delivered_to", "delivered_ns", "src_seen", "sport_seen", "snat", "dnat",
               "rejects", "send_error", "note", "probe_rule_hits")


def load_probes(path):
    probes = []
    for n, line in enumerate(open(path), 1):
        s = line.strip()
        if not s or s.startswith("#"):
            continue
        try:
            p = json.loads(s)
        except ValueError as e:
            raise SystemExit("%s:%d: bad JSON: %s" % (path, n, e))
        probes.append(p)
    names = [p.get("name") for p in probes]
    if None in names or len(set(names)) != len(names):
        dup = sorted({x for x in names if names.count(x) > 1 or x is None}, key=str)
        raise SystemExit("%s: every probe needs a unique name (problem: %s)" % (path, dup))
    for p in probes:
        if p.get("sport") is None:
            raise SystemExit("%s: probe %s has no explicit sport" % (path, p["name"]))
    return probes


def load_options(fdir):
    o = json.load(open(os.path.join(fdir, "options.json")))
    o.setdefault("node_ip", "172.18.0.4")
    o.setdefault("node_if", "eth0")
    o.setdefault("gw", None)
    o.setdefault("pod_if_prefix", "veth")
    o.setdefault("pod_gw", None)
    o.setdefault("local_ips", [])
    o.setdefault("pods", [])
    o.setdefault("setup_cmd", None)
    o.setdefault("count", 1)
    o.setdefault("statistic_count", 12)
    o.setdefault("statistic_probes", [])
    o.setdefault("extra_args", [])
    return o


def setup_cmds(o):
    sc = o.get("setup_cmd")
    if not sc:
        return []
    return sc if isinstance(sc, list) else [sc]


def oracle_args(oracle, rules, o, backend):
    a = [oracle, rules, "--backend", backend, "--trace", "--node-ip", o["node_ip"], "--node-if", o["node_if"],
         "--pod-if-prefix", o["pod_if_prefix"]]
    if o.get("gw"):
        a += ["--gw", o["gw"]]
    if o.get("pod_gw"):
        a += ["--pod-gw", o["pod_gw"]]
    for ip in o["local_ips"]:
        a += ["--local-ip", ip]
    for ip in o["pods"]:
        a += ["--pod", ip]
    for c in setup_cmds(o):
        a += ["--setup-cmd", c]
    return a + list(o["extra_args"])


def stat_chains(rules_path):
    out, table = set(), None
    for line in open(rules_path):
        s = re.sub(r"^\[\d+:\d+\]\s*", "", line.strip())
        if s.startswith("*"):
            table = s[1:]
        elif s.startswith("-A ") and "-m statistic" in s:
            out.add((table, s.split()[1]))
    return out


def trim_probe(p):
    return {k: p[k] for k in PROBE_KEYS if k in p and p[k] is not None and
            not (k == "icmp_type" and p.get("proto") != "icmp") and not (k == "sender_lo_down" and not p[k])}


def trim_result(r):
    t = {"probe": trim_probe(r["probe"])}
    for k in RESULT_KEYS:
        t[k] = r.get(k)
    if t["rejects"] is None:
        t["rejects"] = []
    if r.get("trace_counter_mismatch"):
        t["trace_counter_mismatch"] = r["trace_counter_mismatch"]
    return t


def tool_version(backend):
    exe = "iptables-legacy" if backend == "legacy" else "iptables-nft"
    try:
        return subprocess.run([exe, "--version"], capture_output=True, text=True).stdout.strip()
    except OSError:
        return None


def cmd_run(a):
    fdir = a.fixture.rstrip("/")
    rules = os.path.join(fdir, "rules")
    o = load_options(fdir)
    probes = load_probes(os.path.join(fdir, "probes.jsonl"))
    names = [p["name"] for p in probes]
    stat = set(o["statistic_probes"])
    unknown = stat - set(names)
    if unknown:
        raise SystemExit("%s: statistic_probes not in probes.jsonl: %s" % (fdir, sorted(unknown)))
    for p in probes:
        if p.get("from") == "pod" and p["src"] not in o["pods"]:
            raise SystemExit("%s: pod source %s (probe %s) must be listed in options.json pods" % (fdir, p["src"], p["name"]))
    runs = [([p for p in probes if p["name"] not in stat], o["count"]),
            ([p for p in probes if p["name"] in stat], o["statistic_count"])]
    base = oracle_args(a.oracle, rules, o, a.backend)
    by_name, pods, argvs = {}, {}, []
    with tempfile.TemporaryDirectory(prefix="plk-") as td:
        for i, (ps, count) in enumerate(runs):
            if not ps:
                continue
            pf = os.path.join(td, "probes-%d.jsonl" % i)
            with open(pf, "w") as f:
                for p in ps:
                    f.write(json.dumps(p) + "\n")
            out = os.path.join(td, "out-%d.json" % i)
            argv = base + ["--probes", pf, "--count", str(count), "--out", out]
            shown = [os.path.basename(x) if x == rules else x for x in argv[1:]]
            shown[shown.index("--probes") + 1] = "<probes.jsonl: %s>" % ("statistic_probes" if i else "all other probes")
            shown[shown.index("--out") + 1] = "<out>"
            argvs.append(["nforacle.py"] + shown)
            cp = subprocess.run(["python3"] + argv, capture_output=True, text=True)
            if cp.returncode != 0:
                sys.stderr.write(cp.stdout[-3000:] + cp.stderr[-3000:])
                raise SystemExit("%s: oracle failed (exit %d)" % (fdir, cp.returncode))
            d = json.load(open(out))
            if a.raw_dir:
                os.makedirs(a.raw_dir, exist_ok=True)
                with open(os.path.join(a.raw_dir, "%s-%s-run%d.json" % (os.path.basename(fdir), a.backend, i)), "w") as f:
                    json.dump(d, f, indent=1)
            pods.update(d.get("pods") or {})
            for r in d["results"]:
                by_name.setdefault(r["probe"]["name"], []).append(r)
    sc = stat_chains(rules)
    warnings = []
    results = []
    for n in names:
        rs = by_name.get(n, [])
        if not rs:
            raise SystemExit("%s: no result for probe %s" % (fdir, n))
        for r in rs:
            if r.get("trace_counter_mismatch"):
                warnings.append("%s: trace_counter_mismatch %s" % (n, json.dumps(r["trace_counter_mismatch"])))
            crosses = any((h["table"], h["chain"]) in sc for h in r.get("probe_rule_hits") or [])
            if crosses and n not in stat and n not in o.get("single_shot_statistic_probes", []):
                warnings.append("%s: crosses a -m statistic chain but is not in statistic_probes" % n)
            results.append(trim_result(r))
    for w in sorted(set(warnings)):
        print("warning: %s: %s" % (os.path.basename(fdir), w), file=sys.stderr)
    opts = dict(o)
    opts["argv"] = argvs
    doc = {"backend": a.backend, "rules": "rules", "node_ip": o["node_ip"], "pods": pods, "options": opts,
           "kernel": platform.release(), "iptables_version": tool_version(a.backend),
           "generated_at": datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0).isoformat(),
           "results": results}
    write_doc(doc, a.out)


def write_doc(doc, path):
    """indented header, one compact line per result (small, line-diffable files)"""
    head = dict(doc)
    results = head.pop("results")
    s = json.dumps(head, indent=1)
    body = ",\n".join("  " + json.dumps(r, separators=(",", ":")) for r in results)
    with open(path, "w") as f:
        f.write(s[:-2] + ',\n "results": [\n' + body + "\n ]\n}\n")


# ---------------------------------------------------------------- diff
def hits_s(r):
    return " ".join("%s:%s#%s" % (h["table"], h["chain"], h["rule"]) for h in r.get("probe_rule_hits") or [])


def outcome(r):
    rej = ",".join(sorted({"%s%s" % (x.get("proto"), "/%s" % x.get("icmp_code") if "icmp_code" in x else "")
                           for x in r.get("rejects") or []}))
    return "%s to=%s src=%s%s%s | %s" % (r["verdict"], r.get("delivered_to"), r.get("src_seen"),
                                       " send_error=%s" % r["send_error"] if r.get("send_error") else "",
                                       " rejects=%s" % rej if rej else "", hits_s(r))


def cmd_diff(a):
    old, new = json.load(open(a.old)), json.load(open(a.new))
    label = a.label or os.path.basename(os.path.dirname(os.path.abspath(a.old)))
    rules = os.path.join(os.path.dirname(os.path.abspath(a.old)), "rules")
    sc = stat_chains(rules) if os.path.exists(rules) else set()
    go, gn = {}, {}
    for r in old["results"]:
        go.setdefault(r["probe"]["name"], []).append(r)
    for r in new["results"]:
        gn.setdefault(r["probe"]["name"], []).append(r)
    changed, sampling, same = [], [], 0
    for name in list(go) + [n for n in gn if n not in go]:
        ro, rn = go.get(name, []), gn.get(name, [])
        if not ro or not rn:
            changed.append("  %s: only in %s" % (name, "committed" if ro else "new run"))
            continue
        prob = any((h["table"], h["chain"]) in sc for r in ro + rn for h in r.get("probe_rule_hits") or [])
        so, sn = {outcome(r) for r in ro}, {outcome(r) for r in rn}
        if so == sn:
            same += 1
        elif prob:
            # random branches: a different sample is expected; report only outcomes never seen before
            extra = sn - so
            if extra:
                sampling.append("  %s (statistic): new outcome(s) %s" % (name, "; ".join(sorted(extra))))
            else:
                same += 1
        else:
            changed.append("  %s:\n      committed: %s\n      now:       %s" % (name, "\n                 ".join(sorted(so)),
                                                                         "\n                 ".join(sorted(sn))))
    total = len(set(go) | set(gn))
    print("%s [%s]: %d/%d probes unchanged, %d changed, %d statistic probes with new outcomes"
          % (label, new.get("backend"), same, total, len(changed), len(sampling)))
    for l in changed + sampling:
        print(l)
    return 1 if changed else 0


def cmd_count(a):
    tot = 0
    for fdir in a.fixtures:
        n = len(load_probes(os.path.join(fdir, "probes.jsonl")))
        tot += n
        print("%-40s %d" % (os.path.basename(fdir.rstrip("/")), n))
    print("%-40s %d" % ("TOTAL", tot))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("fixture")
    r.add_argument("--backend", choices=["legacy", "nft"], default="legacy")
    r.add_argument("--out", required=True)
    r.add_argument("--oracle", default=DEFAULT_ORACLE)
    r.add_argument("--raw-dir", help="also keep the untrimmed oracle output here")
    d = sub.add_parser("diff")
    d.add_argument("old")
    d.add_argument("new")
    d.add_argument("--label")
    c = sub.add_parser("count")
    c.add_argument("fixtures", nargs="+")
    a = ap.parse_args()
    if a.cmd == "run":
        cmd_run(a)
    elif a.cmd == "diff":
        sys.exit(cmd_diff(a))
    else:
        cmd_count(a)


if __name__ == "__main__":
    main()
