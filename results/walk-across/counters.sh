#!/usr/bin/env bash
# One read of a tree through ccfs and the daemon's counters it moved: misses, backing reads and
# read-ahead pages (read ahead, hit, wasted), for a same-tree comparison of two builds.
#
#   results/walk-across/counters.sh CCFS TREE KEYS CMD
#
# Mounts TREE with CCFS (memory = $MEMORY, default 539MiB, names and attributes kept 600 s, then
# KEYS), drops the caches, walks the mount once (find -printf, as walk_bench's walk phases), runs
# CMD in the mount's root (e.g. 'find . -type f -print0 | xargs -0 -P4 -n64 cat >/dev/null'),
# prints the counters' change as a JSON object and unmounts. No cgroup (the counters, not the time,
# are the figure) unless CGROUP_MIB is set: then the daemon, the walk and CMD run in one memory
# cgroup (v1) of that many MiB, and the JSON has CMD's seconds too.
set -euo pipefail
ccfs=${1:?CCFS} tree=${2:?TREE} keys=${3:?KEYS} cmd=${4:?CMD}
mnt=$(mktemp -d /var/tmp/ccfs-counters.XXXXXX)
stats=$(mktemp -d /var/tmp/ccfs-counters-stats.XXXXXX)
cg=""
run() { if [ -n "$cg" ]; then sh -c 'echo $$ >"$0/cgroup.procs"; exec "$@"' "$cg" "$@"; else "$@"; fi; }
cleanup() {
  fusermount3 -u "$mnt" 2>/dev/null || true
  rmdir "$mnt"; rm -rf "$stats"
  if [ -n "$cg" ] && [ -d "$cg" ]; then
    while read -r p; do echo "$p" >/sys/fs/cgroup/memory/cgroup.procs 2>/dev/null; done <"$cg/cgroup.procs"
    rmdir "$cg"
  fi
}
trap cleanup EXIT
if [ -n "${CGROUP_MIB:-}" ]; then
  cg=/sys/fs/cgroup/memory/ccfs-counters-$$
  mkdir "$cg"
  echo $((CGROUP_MIB << 20)) >"$cg/memory.limit_in_bytes"
fi
sync
echo 3 >/proc/sys/vm/drop_caches
run "$ccfs" mount -o "memory=${MEMORY:-539MiB},entry_timeout=600,attr_timeout=600,$keys" "$tree" "$mnt" >/dev/null
run find "$mnt" -type f -printf '%s\n' >/dev/null
cp "$mnt/.ccfs/stats.json" "$stats/before.json"
t0=$(date +%s.%N)
(cd "$mnt" && run sh -c "$cmd")
t1=$(date +%s.%N)
cp "$mnt/.ccfs/stats.json" "$stats/after.json"
python3 - "$stats/before.json" "$stats/after.json" "${cg:+$t0}" "${cg:+$t1}" <<'PY'
import json, sys
a, b = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
keys = ["reads", "misses", "backing_reads", "readahead_pages", "readahead_hits", "readahead_wasted"]
out = {k: b[k] - a[k] for k in keys}
if sys.argv[3]:
    out["seconds"] = round(float(sys.argv[4]) - float(sys.argv[3]), 3)
print(json.dumps(out))
PY
