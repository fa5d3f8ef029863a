#!/usr/bin/env bash
# Re-run the Linux-kernel oracle (nforacle) for the golden fixtures in test/fixtures/kernel/.
#
#   scripts/kernel-oracle.sh [--backend legacy|nft|both] [--write] [--strict] [FIXTURE...]
#
# Default: regenerate every fixture with the legacy backend into a temp dir and print a short
# diff summary against the committed oracle.json (verdicts, destinations, rejects and
# probe_rule_hits that changed; for -m statistic probes only outcomes never seen before).
#   --backend nft|both  also/only regenerate oracle-nft.json (both: also run compare_backends.py)
#   --write             overwrite the committed oracle.json / oracle-nft.json (and
#                       compare-backends.txt when both backends ran) instead of only diffing
#   --strict            exit 1 when a deterministic probe changed (default: report only, exit 0)
# Needs root, network namespaces, iptables (legacy + nft), nft, conntrack and nforacle.py
# (NFORACLE=/path/to/nforacle.py, default ../shared/oracle/nforacle.py beside the checkout). Without them it
# prints "skipped: ..." and exits 0, so `npm run test:kernel` is safe everywhere.
set -uo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
FIXDIR="$ROOT/test/fixtures/kernel"
HELPER="$ROOT/scripts/kernel_oracle.py"
ORACLE=${NFORACLE:-$ROOT/../shared/oracle/nforacle.py}
COMPARE=${NFORACLE_COMPARE:-$(dirname "$ORACLE")/compare_backends.py}

BACKEND=legacy
WRITE=0
STRICT=0
FIXTURES=()
while [ $# -gt 0 ]; do
  case "$1" in
    --backend) BACKEND=${2:-}; shift 2 ;;
    --backend=*) BACKEND=${1#*=}; shift ;;
    --write) WRITE=1; shift ;;
    --strict) STRICT=1; shift ;;
    -h|--help) sed -n '2,18p' "$0"; exit 0 ;;
    -*) echo "unknown option $1" >&2; exit 2 ;;
    *) FIXTURES+=("${1%/}"); shift ;;
  esac
done
case "$BACKEND" in legacy) BACKENDS=(legacy) ;; nft) BACKENDS=(nft) ;; both) BACKENDS=(legacy nft) ;;
  *) echo "--backend must be legacy, nft or both" >&2; exit 2 ;; esac

skip() { echo "skipped: needs root + netns + iptables ($1)"; exit 0; }
[ "$(uname -s)" = Linux ] || skip "not Linux"
[ "$(id -u)" = 0 ] || skip "not running as root"
for t in python3 ip nft conntrack iptables-legacy iptables-legacy-restore iptables-nft iptables-nft-restore xtables-monitor; do
  command -v "$t" >/dev/null 2>&1 || skip "$t not found; apt-get install -y iptables nftables conntrack iproute2"
done
[ -f "$ORACLE" ] || skip "nforacle.py not found at $ORACLE (set NFORACLE)"
probe_ns="plkcheck$$"
if ! ip netns add "$probe_ns" >/dev/null 2>&1; then skip "cannot create network namespaces"; fi
ip netns del "$probe_ns" >/dev/null 2>&1

if [ ${#FIXTURES[@]} -eq 0 ]; then
  for d in "$FIXDIR"/*/; do [ -f "$d/rules" ] && FIXTURES+=("$(basename "$d")"); done
fi

TMP=$(mktemp -d /tmp/packetlens-kernel.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
echo "kernel $(uname -r); $(iptables-legacy --version); $(iptables-nft --version); oracle $ORACLE"
changed=0
failed=0
for name in "${FIXTURES[@]}"; do
  fx="$FIXDIR/$name"
  [ -f "$fx/rules" ] && [ -f "$fx/probes.jsonl" ] && [ -f "$fx/options.json" ] || { echo "$name: not a fixture folder" >&2; failed=1; continue; }
  mkdir -p "$TMP/$name"
  for b in "${BACKENDS[@]}"; do
    f=oracle.json; [ "$b" = nft ] && f=oracle-nft.json
    t0=$(date +%s)
    if ! python3 "$HELPER" run "$fx" --backend "$b" --oracle "$ORACLE" --out "$TMP/$name/$f"; then
      echo "$name [$b]: oracle run FAILED" >&2; failed=1; continue
    fi
    echo "$name [$b]: regenerated in $(( $(date +%s) - t0 ))s"
    if [ -f "$fx/$f" ]; then
      python3 "$HELPER" diff "$fx/$f" "$TMP/$name/$f" --label "$name" || changed=1
    else
      echo "$name [$b]: no committed $f yet"
    fi
    [ "$WRITE" = 1 ] && cp "$TMP/$name/$f" "$fx/$f"
  done
  if [ -f "$TMP/$name/oracle.json" ] && [ -f "$TMP/$name/oracle-nft.json" ] && [ -f "$COMPARE" ]; then
    cp "$fx/rules" "$TMP/$name/rules"
    ( cd "$TMP/$name" && python3 "$COMPARE" oracle-nft.json oracle.json > compare-backends.txt 2>&1 )
    tail -1 "$TMP/$name/compare-backends.txt" | sed "s/^/$name nft vs legacy: /"
    [ "$WRITE" = 1 ] && sed "s#^\#\# oracle-nft.json vs oracle.json#\#\# $name: oracle-nft.json vs oracle.json#" \
        "$TMP/$name/compare-backends.txt" > "$fx/compare-backends.txt"
  fi
done
leftover=$(ip netns list 2>/dev/null | grep -E '^orc[0-9]+-' || true)
[ -n "$leftover" ] && echo "warning: leftover oracle namespaces: $leftover" >&2
[ "$failed" = 1 ] && exit 1
[ "$STRICT" = 1 ] && [ "$changed" = 1 ] && exit 1
exit 0
