#!/usr/bin/env bash
# Records what the kernel's tools say about each input of test/fixtures/kernel/restore-refusals/*.rules:
# iptables-legacy-restore and iptables-nft-restore, each in a private network namespace (unshare -n), so
# the host's rules are never touched. Writes results.json there: exit status and stderr per backend.
#   scripts/restore-refusals.sh            (needs root, unshare, iptables 1.8 legacy + nft)
set -euo pipefail
DIR=$(cd "$(dirname "$0")/../test/fixtures/kernel/restore-refusals" && pwd)
[ "$(id -u)" = 0 ] || { echo "skipped: needs root"; exit 0; }
command -v iptables-legacy-restore >/dev/null && command -v iptables-nft-restore >/dev/null || { echo "skipped: needs iptables"; exit 0; }
python3 - "$DIR" <<'PY'
import json, os, subprocess, sys
d = sys.argv[1]
out = {"tool": subprocess.run(["iptables-legacy", "--version"], capture_output=True, text=True).stdout.strip()
       + " / " + subprocess.run(["iptables-nft", "--version"], capture_output=True, text=True).stdout.strip(),
       "kernel": os.uname().release, "files": {}}
for name in sorted(os.listdir(d)):
    if not name.endswith(".rules"):
        continue
    res = {}
    for backend in ("legacy", "nft"):
        with open(os.path.join(d, name), "rb") as f:
            p = subprocess.run(["unshare", "-n", f"iptables-{backend}-restore"], stdin=f, capture_output=True)
        err = p.stderr.decode("utf-8", "replace")
        res[backend] = {"status": p.returncode, "stderr": [l for l in err.splitlines() if l and not l.startswith("Try `")]}
    out["files"][name] = res
with open(os.path.join(d, "results.json"), "w") as f:
    json.dump(out, f, indent=1)
    f.write("\n")
print(f"wrote {len(out['files'])} results to {d}/results.json")
PY
