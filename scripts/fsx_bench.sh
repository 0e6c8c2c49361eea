#!/usr/bin/env bash
# fsx through ccfs under pressure: raw_tier = kernel against raw_tier = daemon (or any two arms),
# same run, interleaved rounds.
#
#   scripts/fsx_bench.sh --fsx PATH [--memory MIB] [--ops N] [--seeds "7 11"] [--rounds R]
#                        [--arms "kernel daemon"] [--out DIR]
#
# fsx is xfstests' ltp/fsx.c (not packaged by Debian: build it from an xfstests checkout; the
# script takes the binary). Per round and seed, for each raw tier: a fresh mount with
# memory=MIB over a local directory holding one file of twice MIB (a working set of twice the
# budget), `fsx -q -N N -l SIZE -S SEED` on it (reads, writes, truncations, mapped reads and writes,
# all checked by fsx against its own copy), then the mount's misses and stalls. The two arms run
# in turn (kernel, daemon, kernel, ...) so the ratio is taken pair by pair. An arm is a raw tier,
# or `kernel@KB`: kernel mode with the mount's read-ahead window set to KB KiB through sysfs
# after the daemon set its own (to compare windows on the same build).
#
# Writes OUT/fsx.jsonl (arm, round, seed, seconds, misses, stalls, the window read back after the
# run, fsx's exit) and OUT/fsx.md (median seconds per arm, and the median and range of the paired
# ratio first/second arm). A run fsx fails makes the script exit 1 after the table. Needs root
# (the kernel tier sets the mount's read-ahead through sysfs). Leaves no mount or daemon behind.
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
arms="kernel daemon"
out="$root/results/fsx-$(date +%Y%m%d-%H%M)"
while [ $# -gt 0 ]; do
  case "$1" in
    --fsx) fsx=$2; shift 2 ;;
    --memory) memory=$2; shift 2 ;;
    --ops) ops=$2; shift 2 ;;
    --seeds) seeds=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --arms) arms=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    *) echo "fsx_bench: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
[ -n "$fsx" ] || { echo "fsx_bench: --fsx PATH is required (xfstests' ltp/fsx.c, built)" >&2; exit 2; }
[ -x "$fsx" ] || die "--fsx $fsx: not an executable"
[[ $memory =~ ^[1-9][0-9]*$ ]] || { echo "fsx_bench: --memory $memory: a whole number of MiB" >&2; exit 2; }
read -r -a arm_list <<<"$arms"
[ "${#arm_list[@]}" -eq 2 ] || { echo "fsx_bench: --arms '$arms': two arms" >&2; exit 2; }
for a in "${arm_list[@]}"; do
  [[ $a =~ ^(daemon|kernel(@[1-9][0-9]*)?)$ ]] ||
    { echo "fsx_bench: --arms: '$a' is not daemon, kernel or kernel@KB" >&2; exit 2; }
done
[ "$(id -u)" -eq 0 ] || die "needs root (the kernel tier's read-ahead is set through sysfs)"
ccfs=$root/build/ccfs
[ -x "$ccfs" ] || die "build ccfs first (cmake --build build)"

bench_workspace fsx-bench
mkdir -p "$out"
: >"$out/fsx.jsonl"
size=$((2 * memory * 1048576))
failed=0

# run ARM ROUND SEED: one fsx run through a fresh mount; a line of fsx.jsonl.
run() {
  local tier=${1%@*} window=""
  [ "$tier" = "$1" ] || window=${1#*@}
  rm -rf "$work/ds" && mkdir -p "$work/ds" "$mnt"
  head -c "$size" /dev/urandom >"$work/ds/f"
  "$ccfs" mount -o "memory=${memory}MiB,raw_tier=$tier" "$work/ds" "$mnt" 2>>"$out/daemon.log"
  local bdi
  bdi=/sys/class/bdi/$(mountpoint -d "$mnt")/read_ahead_kb
  if [ -n "$window" ]; then
    # The daemon sets its window once the kernel's INIT is answered, which a first request
    # ensures; the override goes in after it.
    ccfs_stat "$mnt" misses >/dev/null
    sleep 0.5
    echo "$window" >"$bdi"
  fi
  local start end rc=0
  start=$(date +%s.%N)
  "$fsx" -q -N "$ops" -l "$size" -S "$3" "$mnt/f" >"$work/fsx.out" 2>&1 || rc=$?
  end=$(date +%s.%N)
  local misses stalls
  misses=$(ccfs_stat "$mnt" misses)
  stalls=$(ccfs_stat "$mnt" stalls)
  local window_kb
  window_kb=$(cat "$bdi")
  ccfs_unmount "$mnt"
  if [ "$rc" != 0 ]; then
    failed=1
    log "fsx failed ($1, round $2, seed $3): $(tail -3 "$work/fsx.out" | tr '\n' ' ')"
  fi
  printf '{"tier": "%s", "round": %d, "seed": %d, "seconds": %.3f, "misses": %s, "stalls": %s, "window_kb": %d, "exit": %d}\n' \
    "$1" "$2" "$3" "$(echo "$end - $start" | bc)" "$misses" "$stalls" "$window_kb" "$rc" >>"$out/fsx.jsonl"
}

for r in $(seq 1 "$rounds"); do
  for s in $seeds; do
    for tier in "${arm_list[@]}"; do
      run "$tier" "$r" "$s"
      tail -1 "$out/fsx.jsonl" >&2
    done
  done
done

rm -rf "$work/ds" "$work/fsx.out"
python3 - "$out" "$memory" "$ops" "${arm_list[@]}" <<'EOF' | tee "$out/fsx.md"
import json, statistics, sys
out, memory, ops, first, second = sys.argv[1:6]
runs = [json.loads(l) for l in open(out + "/fsx.jsonl")]
by = {(r["tier"], r["round"], r["seed"]): r for r in runs}
print(f"fsx -N {ops} on a file of {2 * int(memory)} MiB through a {memory} MiB mount "
      f"({len(runs) // 2} pairs)\n")
print("| arm | read-ahead KiB | median s | min-max s | median misses | median stalls |")
print("|---|---|---|---|---|---|")
for arm in (first, second):
    rs = [r for r in runs if r["tier"] == arm]
    s = [r["seconds"] for r in rs]
    print(f"| {arm} | {statistics.median(r['window_kb'] for r in rs):.0f} | "
          f"{statistics.median(s):.2f} | {min(s):.2f}-{max(s):.2f} | "
          f"{statistics.median(r['misses'] for r in rs):.0f} | "
          f"{statistics.median(r['stalls'] for r in rs):.0f} |")
ratios = [by[k]["seconds"] / by[(second,) + k[1:]]["seconds"]
          for k in by if k[0] == first and (second,) + k[1:] in by]
print(f"\n{first} / {second}, pair by pair: median {statistics.median(ratios):.3f}, "
      f"range {min(ratios):.3f}-{max(ratios):.3f}")
EOF
exit "$failed"
