#!/usr/bin/env bash
# The main job on a built-in default: sets up, builds, generates a demo data set (8x the cache),
# mounts it through ccfs, replays an exact 80/20 (Pareto) trace through the mount while `ccfs stat`
# prints hit ratio and µs per buffer live, then repeats it with the compressed tier off (C = 0) on
# the same mount, prints both beside the model, and unmounts.
#
# Environment knobs: DEMO_DIR (default .demo in the repo), DEMO_SIZE (512MiB), DEMO_MEMORY (64MiB),
# DEMO_PERCENT (50), DEMO_SECONDS (20 per run), DEMO_THREADS (2).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
scripts/setup.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j"$(nproc)" --target ccfs
ccfs=$root/build/ccfs

demo=${DEMO_DIR:-$root/.demo}
size=${DEMO_SIZE:-512MiB}
memory=${DEMO_MEMORY:-64MiB}
percent=${DEMO_PERCENT:-50}
seconds=${DEMO_SECONDS:-20}
threads=${DEMO_THREADS:-2}
data=$demo/data
mnt=$demo/mnt
mkdir -p "$demo" "$mnt"

if [ ! -f "$demo/.made-$size" ]; then
  echo "== generating a $size demo data set in $data"
  "$ccfs" mkdata "$data" --size "$size" --force
  touch "$demo/.made-$size"
fi

stat_pid=""
cleanup() {
  [ -n "$stat_pid" ] && kill "$stat_pid" 2>/dev/null || true
  if grep -q " $mnt fuse" /proc/mounts; then
    "$ccfs" umount "$mnt" || fusermount3 -u -z "$mnt" || true
  fi
}
trap cleanup EXIT INT TERM

echo "== mounting $data at $mnt: memory=$memory, compressed_percent=$percent"
"$ccfs" mount -o "memory=$memory,compressed_percent=$percent" "$data" "$mnt"

run() {  # $1 = label
  echo "== replay, Pareto 80/20, $threads readers, $seconds s ($1)"
  "$ccfs" stat "$mnt" --interval 2 &
  stat_pid=$!
  "$ccfs" replay "$mnt" --dist pareto --duration "$seconds" --threads "$threads" --no-progress \
    --json > "$demo/replay-$1.json"
  kill "$stat_pid" 2>/dev/null || true
  wait "$stat_pid" 2>/dev/null || true
  stat_pid=""
}

run compressed
"$ccfs" set "$mnt" compressed_percent=0 >/dev/null
run raw-only
"$ccfs" set "$mnt" "compressed_percent=$percent" >/dev/null

python3 - "$demo/replay-compressed.json" "$demo/replay-raw-only.json" "$percent" <<'PY'
import json, sys
c = json.load(open(sys.argv[1])); r = json.load(open(sys.argv[2])); p = sys.argv[3]
print()
print(f"{'':26}{'C = ' + p + '%':>14}{'C = 0':>14}")
rows = [("hit ratio (measured)", "hit_ratio", "{:.1%}"), ("hit ratio (model)", "model_hit_ratio", "{:.1%}"),
        ("µs per buffer (client)", "us_per_buffer", "{:.1f}"), ("µs per buffer (model)", "model_us_per_buffer", "{:.1f}"),
        ("p50 µs", "p50_us", "{:.1f}"), ("p99 µs", "p99_us", "{:.1f}"),
        ("raw hits", "raw_hits", "{:,}"), ("compressed hits", "compressed_hits", "{:,}"), ("misses", "misses", "{:,}")]
for label, key, fmt in rows:
    print(f"{label:26}{fmt.format(c[key]):>14}{fmt.format(r[key]):>14}")
ratio = c["us_per_buffer"] / r["us_per_buffer"] if r["us_per_buffer"] else float("nan")
print(f"\nµs per buffer at C = {p}% is {ratio:.2f}x that at C = 0 (same mount, same trace, one run).")
PY

echo "== unmounting"
"$ccfs" umount "$mnt"
trap - EXIT
echo "== done (data set kept in $data; remove $demo to free it)"
