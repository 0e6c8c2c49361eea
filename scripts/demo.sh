#!/usr/bin/env bash
# The main job on a built-in default: sets up, builds, generates a demo data set (twice the RAM
# given to the cache), serves it from a file server (a private sshd on 127.0.0.1, mounted with
# sshfs: scripts/stores.sh), mounts it through ccfs with the default settings, replays uniformly
# random 8 KiB reads through the mount while `ccfs stat` prints hit ratio and µs per buffer live,
# then the same with the compressed tier off (C = 0, set live on the same mount), then through the
# Linux page cache alone on a caching mount of the same store; prints the three beside the model,
# and takes everything down.
#
# This is the case a compressed cache is for: a store where a page read is dear and a working set
# that fits in RAM compressed but not raw. On a local disk, or with a hot set that fits, the page
# cache is as fast or faster (DEMO_STORE=local, DEMO_DIST=pareto show it).
#
# Equal RAM, held by the kernel: `ccfs replay` runs the reader and the daemon in one memory cgroup
# of DEMO_MEMORY, ccfs's `memory` (raw_tier = kernel, the default: the daemon's tiers, its own
# memory and the kernel's pages of the mount's files together), and the page cache's reader in a
# memory cgroup of the same size. The store's server (sshd, like any file server) keeps its files
# in its own RAM for both.
#
# Environment knobs: DEMO_DIR (default .demo in the repo), DEMO_STORE (sshfs or local), DEMO_SIZE
# (512MiB), DEMO_MEMORY (256MiB), DEMO_DIST (uniform, or pareto), DEMO_SECONDS (20 per run),
# DEMO_THREADS (2).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
me=demo
. scripts/lib.sh
scripts/setup.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j"$(nproc)" --target ccfs
ccfs=$root/build/ccfs

demo=${DEMO_DIR:-$root/.demo}
store=${DEMO_STORE:-sshfs}
size=${DEMO_SIZE:-512MiB}
memory=${DEMO_MEMORY:-256MiB}
dist=${DEMO_DIST:-uniform}
seconds=${DEMO_SECONDS:-20}
threads=${DEMO_THREADS:-2}
case $store in local|sshfs) ;; *) die "DEMO_STORE: '$store' is not sshfs or local" ;; esac
case $dist in uniform|pareto) ;; *) die "DEMO_DIST: '$dist' is not uniform or pareto" ;; esac
data=$demo/data
mnt=$demo/mnt
up_store=""
up_stores=()
mkdir -p "$demo" "$mnt"

if [ ! -f "$demo/.made-$size" ]; then
  echo "== generating a $size demo data set in $data"
  "$ccfs" mkdata "$data" --size "$size" --force
  touch "$demo/.made-$size"
fi

stat_pid=""
cleanup() {
  set +e
  [ -n "$stat_pid" ] && kill "$stat_pid" 2>/dev/null
  if grep -q " $mnt fuse" /proc/mounts; then
    "$ccfs" umount "$mnt" || fusermount3 -u -z "$mnt"
  fi
  stores_down
}
trap cleanup EXIT
trap 'exit 130' INT TERM

backing=$data  # what ccfs reads: every read reaches the store
cached=$data   # what the page cache's reader reads: the same store, its pages cached by the kernel
if [ "$store" = sshfs ]; then
  echo "== serving $data from a file server (sshd on 127.0.0.1, mounted with sshfs)"
  backing=$demo/store cached=$demo/store-pc
  store_up "$demo/state" sshfs "$backing" --source "$data"
  store_up "$demo/state-pc" sshfs "$cached" --source "$data" --page-cache
  # The server's own RAM holds the files for both sides alike, as a file server's would.
  find "$data" -type f -exec cat {} + >/dev/null
fi

echo "== mounting $backing at $mnt: memory=$memory, every other key at its default"
"$ccfs" mount -o "memory=$memory" "$backing" "$mnt"

run() {  # $1 = label
  echo "== replay, $dist, $threads readers, $seconds s ($1)"
  "$ccfs" stat "$mnt" --interval 2 &
  stat_pid=$!
  "$ccfs" replay "$mnt" --dist "$dist" --duration "$seconds" --threads "$threads" \
    --no-progress --json > "$demo/replay-$1.json"
  kill "$stat_pid" 2>/dev/null || true
  wait "$stat_pid" 2>/dev/null || true
  stat_pid=""
}

read -r raw_tier codec percent < <(python3 -c 'import json, sys
j = json.load(open(sys.argv[1]))
print(j["raw_tier"], j["compressor"], j["compressed_percent"])' "$mnt/.ccfs/stats.json")
run defaults
"$ccfs" set "$mnt" compressed_percent=0 >/dev/null
run raw-only
echo "== unmounting; the Linux page cache alone, in a memory cgroup of $memory"
"$ccfs" umount "$mnt"
"$ccfs" replay "$cached" --memory "$memory" --dist "$dist" --duration "$seconds" \
  --threads "$threads" --no-progress --json > "$demo/replay-page-cache.json"

python3 - "$demo" "$raw_tier $codec C=$percent%" "$store" "$dist" "$size" "$memory" <<'PY'
import json, sys
demo, defaults, store, dist, size, memory = sys.argv[1:]
runs = [("ccfs " + defaults, "defaults"), ("ccfs C=0", "raw-only"), ("page cache", "page-cache")]
r = {label: json.load(open(f"{demo}/replay-{name}.json")) for label, name in runs}
if store != "local":
    # The replay prices a miss by O_DIRECT reads of its target, which a caching mount of the
    # store may answer from the kernel's pages: no model figure for that side.
    r["page cache"]["model_us_per_buffer"] = None
def show(v, fmt):
    return "-" if v is None else fmt.format(v)
w = 24
print()
print(f"{'':26}" + "".join(f"{label:>{w}}" for label, _ in runs))
rows = [("hit ratio (measured)", "hit_ratio", "{:.1%}"), ("hit ratio (model)", "model_hit_ratio", "{:.1%}"),
        ("µs per buffer (client)", "us_per_buffer", "{:.1f}"), ("µs per buffer (model)", "model_us_per_buffer", "{:.1f}"),
        ("p50 µs", "p50_us", "{:.1f}"), ("p99 µs", "p99_us", "{:.1f}"),
        ("kernel hits", "kernel_hits", "{:,}"), ("raw hits", "raw_hits", "{:,}"),
        ("compressed hits", "compressed_hits", "{:,}"), ("misses", "misses", "{:,}")]
for label, key, fmt in rows:
    print(f"{label:26}" + "".join(f"{show(r[l].get(key), fmt):>{w}}" for l, _ in runs))
pc = r["page cache"]["us_per_buffer"]
print()
for label, _ in runs[:2]:
    print(f"µs per buffer, {label}: {r[label]['us_per_buffer'] / pc:.2f}x the page cache's.")
print(f"Same trace ({dist}, {size} of data, {store}), one run each, equal RAM: every side's "
      f"readers, and ccfs's daemon and the kernel's pages of its files, held to {memory} by "
      "memory cgroups.")
print("kernel hits: reads the kernel's page cache answered; raw hits: the daemon's raw pages; "
      "compressed hits: pages the compressed tier held; misses: reads of the store.")
PY

echo "== done (data set kept in $data; remove $demo to free it)"
