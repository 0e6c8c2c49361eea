#!/usr/bin/env bash
# The main job on a built-in default: sets up, builds, generates a demo data set (8x the cache),
# mounts it through ccfs, replays an exact 80/20 (Pareto) trace through the mount while `ccfs stat`
# prints hit ratio and µs per buffer live, then repeats it with the compressed tier off (C = 0) on
# the same mount; then the same trace through a mount with raw_tier = kernel (the kernel's page
# cache as the raw tier, the reader and the daemon in one memory cgroup of the same size) and
# through the Linux page cache alone (in a memory cgroup of the same size); prints all four beside
# the model, and unmounts.
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
echo "== unmounting; mounting again with raw_tier = kernel, compressed_percent=$percent"
"$ccfs" umount "$mnt"
"$ccfs" mount -o "memory=$memory,compressed_percent=$percent,raw_tier=kernel,kernel_evict=false" \
  "$data" "$mnt"
run kernel
echo "== unmounting; the Linux page cache alone, in a memory cgroup of $memory"
"$ccfs" umount "$mnt"
trap - EXIT
"$ccfs" replay "$data" --memory "$memory" --dist pareto --duration "$seconds" --threads "$threads" \
  --no-progress --json > "$demo/replay-page-cache.json"

python3 - "$demo" "$percent" <<'PY'
import json, sys
demo, p = sys.argv[1], sys.argv[2]
runs = [("daemon C=" + p + "%", "compressed"), ("daemon C=0", "raw-only"),
        ("kernel C=" + p + "%", "kernel"), ("page cache", "page-cache")]
r = {label: json.load(open(f"{demo}/replay-{name}.json")) for label, name in runs}
def show(v, fmt):
    return "-" if v is None else fmt.format(v)
print()
print(f"{'':26}" + "".join(f"{label:>16}" for label, _ in runs))
rows = [("hit ratio (measured)", "hit_ratio", "{:.1%}"), ("hit ratio (model)", "model_hit_ratio", "{:.1%}"),
        ("µs per buffer (client)", "us_per_buffer", "{:.1f}"), ("µs per buffer (model)", "model_us_per_buffer", "{:.1f}"),
        ("p50 µs", "p50_us", "{:.1f}"), ("p99 µs", "p99_us", "{:.1f}"),
        ("kernel hits", "kernel_hits", "{:,}"), ("raw hits", "raw_hits", "{:,}"),
        ("compressed hits", "compressed_hits", "{:,}"), ("misses", "misses", "{:,}")]
for label, key, fmt in rows:
    print(f"{label:26}" + "".join(f"{show(r[l].get(key), fmt):>16}" for l, _ in runs))
pc = r["page cache"]["us_per_buffer"]
print()
for label, _ in runs[:3]:
    print(f"µs per buffer, {label}: {r[label]['us_per_buffer'] / pc:.2f}x the page cache's.")
print("Same trace, one run, equal RAM: the daemon mode's budget is its own; the kernel mode's reader "
      "and daemon, and the page cache's reader, are held to it by memory cgroups.")
print("daemon: every read crosses FUSE and is counted (raw hits are the daemon's); kernel: the "
      "kernel's page cache answers hot reads itself (kernel hits), the daemon holds the compressed "
      "tier beneath it (raw hits: its staging tier); page cache: raw hits are the kernel's.")
PY

echo "== done (data set kept in $data; remove $demo to free it)"
