#!/usr/bin/env python3
"""Regenerate the nftables kernel fixtures in test/fixtures/kernel-nft/ with the kernel oracle.

    python3 scripts/kernel-nft-oracle.py [--oracle PATH] [FIXTURE...]

A fixture folder holds `ruleset.nft` (an `nft -f` script, the ruleset as written), `probes.jsonl` and
`options.json` ({"node_ip", "node_ip6"?, "pods"?: [...], "random_probes": [...], "count": 12,
"keep_set_state"?: true}). A probe's `live_sets` names the dynamic sets that hold its source when it is sent
(what an earlier probe of the same run added); tests state them to the engine as caller-stated set content. For each
folder this script
  1. loads ruleset.nft into a private network namespace with the real nft and writes the kernel's own
     renderings of it: ruleset.txt (`nft list ruleset`), ruleset-a.txt (`nft -a list ruleset`) and
     ruleset.json (`nft -j list ruleset`), so the engine can be checked on all three input forms;
  2. runs ../shared/oracle/nforacle.py --nft ruleset.nft --trace on the probes (probes named in
     `random_probes` cross numgen branches and are sent `count` times), and writes oracle.json: each
     packet's verdict, destination, seen source, rejects and the ordered rule hits
     {family, table, chain, rule, line, verdict} the kernel's nftrace reported.
Needs root, network namespaces and nft (python3 stdlib only). Without them it prints "skipped: …" and exits 0.
"""
import argparse, datetime, json, os, shutil, subprocess, sys, tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXDIR = os.path.join(ROOT, "test", "fixtures", "kernel-nft")
KEEP = ("verdict", "delivered_to", "src_seen", "snat", "dnat", "rejects", "send_error", "note")


def skip(why):
    print("skipped: needs root + netns + nft (%s)" % why)
    sys.exit(0)


def forms(fdir):
    ns = "plknftforms%d" % os.getpid()
    subprocess.run(["ip", "netns", "add", ns], check=True)
    try:
        def nft(*args, **kw):
            return subprocess.run(["ip", "netns", "exec", ns, "nft"] + list(args), check=True, capture_output=True, text=True, **kw)
        nft("-f", os.path.join(fdir, "ruleset.nft"))
        for name, args in (("ruleset.txt", ["list", "ruleset"]), ("ruleset-a.txt", ["-a", "list", "ruleset"]), ("ruleset.json", ["-j", "list", "ruleset"])):
            out = nft(*args).stdout
            if name.endswith(".json"):
                out = json.dumps(json.loads(out), indent=1) + "\n"
            with open(os.path.join(fdir, name), "w") as f:
                f.write(out)
    finally:
        subprocess.run(["ip", "netns", "del", ns])


def trim(r):
    p = r["probe"]
    out = {"probe": {k: p[k] for k in ("name", "proto", "src", "sport", "dst", "dport", "from", "icmp_type", "family") if k in p}}
    for k in KEEP:
        out[k] = r.get(k)
    out["probe_rule_hits"] = [{k: h.get(k) for k in ("family", "table", "chain", "rule", "line", "verdict")} for h in r.get("probe_rule_hits", [])]
    out["probe_policies"] = r.get("probe_policies", [])
    return out


def run(fdir, oracle):
    o = json.load(open(os.path.join(fdir, "options.json")))
    probes = [json.loads(l) for l in open(os.path.join(fdir, "probes.jsonl")) if l.strip()]
    rnd = set(o.get("random_probes", []))
    base = ["python3", oracle, "--nft", os.path.join(fdir, "ruleset.nft"), "--trace", "--node-ip", o["node_ip"]]
    if o.get("node_ip6"):
        base += ["--node-ip6", o["node_ip6"]]
    for p in o.get("pods", []):
        base += ["--pod", p]
    for p in o.get("uplink_ips", []):
        base += ["--uplink-ip", p]
    for p in o.get("local_ips", []):
        base += ["--local-ip", p]
    if o.get("keep_set_state"):
        # dynamic sets (affinity) keep what earlier probes of the same run added; probes run in file order
        base += ["--keep-set-state"]
    if o.get("setup_cmd"):
        base += ["--setup-cmd", o["setup_cmd"]]
    results, argvs, pods = {}, [], {}
    tmp = tempfile.mkdtemp(prefix="plknft")
    try:
        for group, count in (([p for p in probes if p["name"] not in rnd], 1), ([p for p in probes if p["name"] in rnd], o.get("count", 12))):
            if not group:
                continue
            pf = os.path.join(tmp, "probes-%d.jsonl" % count)
            with open(pf, "w") as f:
                for p in group:
                    f.write(json.dumps(p) + "\n")
            out = os.path.join(tmp, "out-%d.json" % count)
            argv = base + ["--probes", pf, "--count", str(count), "--out", out]
            argvs.append(["nforacle.py"] + [os.path.basename(x) if x.startswith(tmp) or x.startswith(fdir) else x for x in argv[2:]])
            cp = subprocess.run(argv, capture_output=True, text=True)
            if cp.returncode != 0:
                sys.stderr.write(cp.stderr[-3000:])
                raise SystemExit("oracle failed for %s" % fdir)
            doc = json.load(open(out))
            pods.update(doc.get("pods", {}))
            for r in doc["results"]:
                results.setdefault(r["probe"]["name"], []).append(trim(r))
    finally:
        shutil.rmtree(tmp)
    ordered = [r for p in probes for r in results.get(p["name"], [])]
    doc = {
        "source": "Linux kernel, via ../shared/oracle/nforacle.py --nft (private network namespaces, nftrace)",
        "kernel": os.uname().release,
        "nft": subprocess.run(["nft", "--version"], capture_output=True, text=True).stdout.strip(),
        "generated_at": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "options": o, "argv": argvs, "pods": pods, "results": ordered,
    }
    with open(os.path.join(fdir, "oracle.json"), "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    return len(ordered)


def main():
    ap = argparse.ArgumentParser()
    near = [os.path.join(ROOT, *up, "shared", "oracle", "nforacle.py") for up in ((".."), ("..", ".."))]
    ap.add_argument("--oracle", default=os.environ.get("NFORACLE", next((p for p in near if os.path.exists(p)), near[0])))
    ap.add_argument("--forms-only", action="store_true")
    ap.add_argument("fixtures", nargs="*")
    a = ap.parse_args()
    if os.geteuid() != 0:
        skip("not root")
    if not shutil.which("nft") or not shutil.which("ip"):
        skip("nft or ip not found")
    if not os.path.exists(a.oracle):
        skip("nforacle.py not found at %s (set NFORACLE)" % a.oracle)
    names = a.fixtures or sorted(d for d in os.listdir(FIXDIR) if os.path.exists(os.path.join(FIXDIR, d, "ruleset.nft")))
    for n in names:
        fdir = os.path.join(FIXDIR, n.rstrip("/").split("/")[-1])
        forms(fdir)
        if a.forms_only:
            print("%s: forms written" % n)
            continue
        print("%s: %d kernel results" % (n, run(fdir, os.path.abspath(a.oracle))))


if __name__ == "__main__":
    main()
