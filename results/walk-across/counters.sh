#!/usr/bin/env bash
# One read of a tree through ccfs and the daemon's counters it moved: misses, backing reads and
# read-ahead pages (read ahead, hit, wasted), for a same-tree comparison of two builds.
#
#   results/walk-across/counters.sh CCFS TREE KEYS CMD
#
# Mounts TREE with CCFS (memory = 539MiB, names and attributes kept 600 s, then KEYS), drops the
# caches, walks the mount once (find -printf, as walk_bench's walk phases), runs CMD in the mount's
# root (e.g. 'find . -type f -print0 | xargs -0 -P4 -n64 cat >/dev/null'), prints the counters'
# change as a JSON object and unmounts. No cgroup: the counters, not the time, are the figure.
set -euo pipefail
ccfs=${1:?CCFS} tree=${2:?TREE} keys=${3:?KEYS} cmd=${4:?CMD}
mnt=$(mktemp -d /var/tmp/ccfs-counters.XXXXXX)
stats=$(mktemp -d /var/tmp/ccfs-counters-stats.XXXXXX)
trap 'fusermount3 -u "$mnt" 2>/dev/null || true; rmdir "$mnt"; rm -rf "$stats"' EXIT
sync
echo 3 >/proc/sys/vm/drop_caches
"$ccfs" mount -o "memory=539MiB,entry_timeout=600,attr_timeout=600,$keys" "$tree" "$mnt" >/dev/null
find "$mnt" -type f -printf '%s\n' >/dev/null
cp "$mnt/.ccfs/stats.json" "$stats/before.json"
(cd "$mnt" && sh -c "$cmd")
cp "$mnt/.ccfs/stats.json" "$stats/after.json"
python3 - "$stats/before.json" "$stats/after.json" <<'PY'
import json, sys
a, b = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
keys = ["reads", "misses", "backing_reads", "readahead_pages", "readahead_hits", "readahead_wasted"]
print(json.dumps({k: b[k] - a[k] for k in keys}))
PY
