#!/usr/bin/env bash
# One cold `cat` of a 1 GiB text file through raw_tier = kernel against the page cache, both in a
# memory cgroup of 256 MiB (ccfs memory=185MiB, as scripts/lib.sh's ccfs_memory_for gives), on the
# local disk; per ccfs run the kernel's read-ahead window of the mount (its bdi's read_ahead_kb)
# as ccfs sets it, or set by hand after the mount; caches dropped before every run; ROUNDS rounds.
#
#   results/stream-kernel-window/probe.sh [ROUNDS]
#
# Prints one line per run: MiB/s, the daemon's backing reads and its CPU seconds (utime + stime).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
me=probe
. "$root/scripts/lib.sh"
rounds=${1:-2}
ccfs=${CCFS_BIN:-$root/build/ccfs}
w=/var/tmp/ccfs-stream-kernel-window; mnt=$w/mnt; cg=/sys/fs/cgroup/memory/ccfs-stream-kernel-window
dp=""
trap probe_cleanup EXIT
mkdir -p "$w/data" "$mnt"
"$ccfs" mkdata --size 1GiB --mix text=100 "$w/gen" >/dev/null
find "$w/gen" -type f | sort | xargs cat | head -c 1G >"$w/data/big"
rm -rf "$w/gen"
cgroup_make "$cg" $((256 << 20))
mibs() { echo "1024 / ($2 - $1)" | bc -l | cut -c1-6; }
ccfs_run() {  # OPTIONS WINDOW_KB|-
  sync; echo 3 >/proc/sys/vm/drop_caches
  in_cgroup "$cg" "$ccfs" mount -f -o "memory=185MiB,raw_tier=kernel$1" "$w/data" "$mnt" \
    2>>"$w/daemon.log" &
  dp=$!
  for _ in $(seq 100); do grep -q " $mnt fuse" /proc/mounts && break; sleep 0.05; done
  local bdi; bdi=/sys/class/bdi/$(mountpoint -d "$mnt")/read_ahead_kb
  local set_by=ccfs; [ "$2" = - ] || { echo "$2" >"$bdi"; set_by=hand; }
  local window; window=$(cat "$bdi")
  local t0 t1; t0=$(date +%s.%N); in_cgroup "$cg" cat "$mnt/big" >/dev/null; t1=$(date +%s.%N)
  local reads pid cpu  # the daemon's pid from its stats.json: $dp is the shell in_cgroup runs it from
  read -r reads pid < <(python3 -c "import json, sys; d = json.load(open(sys.argv[1])); print(d['backing_reads'], d['daemon']['pid'])" "$mnt/.ccfs/stats.json")
  cpu=$(awk '{print ($14 + $15) / 100}' "/proc/$pid/stat")
  fusermount3 -u "$mnt"; wait "$dp"; dp=""
  echo "ccfs kernel${1:+ ${1#,}}, window ${window} KiB ($set_by): $(mibs "$t0" "$t1") MiB/s, backing reads $reads, daemon CPU ${cpu} s"
}
for r in $(seq "$rounds"); do
  echo "# round $r, load $(cut -d' ' -f1-3 /proc/loadavg)"
  sync; echo 3 >/proc/sys/vm/drop_caches
  t0=$(date +%s.%N); in_cgroup "$cg" cat "$w/data/big" >/dev/null; t1=$(date +%s.%N)
  echo "page cache: $(mibs "$t0" "$t1") MiB/s"
  ccfs_run ",compressed_percent=0" -
  ccfs_run ",compressed_percent=0" 2048
  ccfs_run ",compressed_percent=0" 8192
  ccfs_run "" -
  ccfs_run "" 2048
done
