#!/usr/bin/env bash
# fsx through ccfs under pressure: raw_tier = kernel against raw_tier = daemon, same run,
# interleaved rounds.
#
#   scripts/fsx_bench.sh --fsx PATH [--memory MIB] [--ops N] [--seeds "7 11"] [--rounds R]
#                        [--out DIR]
#
# fsx is xfstests' ltp/fsx.c (not packaged by Debian: build it from an xfstests checkout; the
# script takes the binary). Per round and seed, for each raw tier: a fresh mount with
# memory=MIB over a local directory holding one file of twice MIB (a working set of twice the
# budget), `fsx -q -N N -l SIZE -S SEED` on it (reads, writes, truncations, mapped reads and writes,
# all checked by fsx against its own copy), then the mount's misses and stalls. The two tiers run
# in turn (kernel, daemon, kernel, ...) so the ratio is taken pair by pair.
#
# Writes OUT/fsx.jsonl (tier, round, seed, seconds, misses, stalls, fsx's exit) and OUT/fsx.md
# (median seconds per tier, and the median and range of the paired ratio kernel/daemon). A run
# fsx fails makes the script exit 1 after the table. Needs root (the kernel tier sets the mount's
# read-ahead through sysfs). Leaves no mount or daemon behind.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
me=fsx_bench
source scripts/lib.sh

fsx=""
memory=4
ops=20000
seeds="7 11"
rounds=4
out="$root/results/fsx-$(date +%Y%m%d-%H%M)"
while [ $# -gt 0 ]; do
  case "$1" in
    --fsx) fsx=$2; shift 2 ;;
    --memory) memory=$2; shift 2 ;;
    --ops) ops=$2; shift 2 ;;
    --seeds) seeds=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    *) echo "fsx_bench: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
[ -n "$fsx" ] || { echo "fsx_bench: --fsx PATH is required (xfstests' ltp/fsx.c, built)" >&2; exit 2; }
[ -x "$fsx" ] || die "--fsx $fsx: not an executable"
[[ $memory =~ ^[1-9][0-9]*$ ]] || { echo "fsx_bench: --memory $memory: a whole number of MiB" >&2; exit 2; }
[ "$(id -u)" -eq 0 ] || die "needs root (the kernel tier's read-ahead is set through sysfs)"
ccfs=$root/build/ccfs
[ -x "$ccfs" ] || die "build ccfs first (cmake --build build)"

bench_workspace fsx-bench
mkdir -p "$out"
: >"$out/fsx.jsonl"
size=$((2 * memory * 1048576))
failed=0

# run TIER ROUND SEED: one fsx run through a fresh mount; a line of fsx.jsonl.
run() {
  rm -rf "$work/ds" && mkdir -p "$work/ds" "$mnt"
  head -c "$size" /dev/urandom >"$work/ds/f"
  "$ccfs" mount -o "memory=${memory}MiB,raw_tier=$1" "$work/ds" "$mnt" 2>>"$out/daemon.log"
  local start end rc=0
  start=$(date +%s.%N)
  "$fsx" -q -N "$ops" -l "$size" -S "$3" "$mnt/f" >"$work/fsx.out" 2>&1 || rc=$?
  end=$(date +%s.%N)
  local misses stalls
  misses=$(ccfs_stat "$mnt" misses)
  stalls=$(ccfs_stat "$mnt" stalls)
  ccfs_unmount "$mnt"
  if [ "$rc" != 0 ]; then
    failed=1
    log "fsx failed ($1, round $2, seed $3): $(tail -3 "$work/fsx.out" | tr '\n' ' ')"
  fi
  printf '{"tier": "%s", "round": %d, "seed": %d, "seconds": %.3f, "misses": %s, "stalls": %s, "exit": %d}\n' \
    "$1" "$2" "$3" "$(echo "$end - $start" | bc)" "$misses" "$stalls" "$rc" >>"$out/fsx.jsonl"
}

for r in $(seq 1 "$rounds"); do
  for s in $seeds; do
    for tier in kernel daemon; do
      run "$tier" "$r" "$s"
      tail -1 "$out/fsx.jsonl" >&2
    done
  done
done

rm -rf "$work/ds" "$work/fsx.out"
python3 - "$out" "$memory" "$ops" <<'EOF' | tee "$out/fsx.md"
import json, statistics, sys
out, memory, ops = sys.argv[1], sys.argv[2], sys.argv[3]
runs = [json.loads(l) for l in open(out + "/fsx.jsonl")]
by = {(r["tier"], r["round"], r["seed"]): r for r in runs}
print(f"fsx -N {ops} on a file of {2 * int(memory)} MiB through a {memory} MiB mount "
      f"({len(runs) // 2} pairs)\n")
print("| raw tier | median s | min-max s | median misses | median stalls |")
print("|---|---|---|---|---|")
for tier in ("kernel", "daemon"):
    rs = [r for r in runs if r["tier"] == tier]
    s = [r["seconds"] for r in rs]
    print(f"| {tier} | {statistics.median(s):.2f} | {min(s):.2f}-{max(s):.2f} | "
          f"{statistics.median(r['misses'] for r in rs):.0f} | "
          f"{statistics.median(r['stalls'] for r in rs):.0f} |")
ratios = [by[k]["seconds"] / by[("daemon",) + k[1:]]["seconds"]
          for k in by if k[0] == "kernel" and ("daemon",) + k[1:] in by]
print(f"\nkernel / daemon, pair by pair: median {statistics.median(ratios):.3f}, "
      f"range {min(ratios):.3f}-{max(ratios):.3f}")
EOF
exit "$failed"
