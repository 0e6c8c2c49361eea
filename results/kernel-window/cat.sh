#!/bin/bash
# A cold `cat` through kernel mode at a read-ahead window set by hand, or the daemon's own:
#   results/kernel-window/cat.sh DIR WINDOW_KB|own
# DIR holds one file `big`; a fresh mount of DIR at DIR.m (memory=256MiB, the defaults), its bdi's
# read_ahead_kb set to WINDOW_KB (or left as the daemon set it), the caches dropped, then `cat` of
# the file to /dev/null. Prints the window, MiB/s, the daemon's backing reads and pages passed
# through. Needs root.
set -euo pipefail
dir=$1 w=$2
ccfs=${CCFS_BIN:-$(dirname "$0")/../../build/ccfs}
mnt=$dir.m
mkdir -p "$mnt"
"$ccfs" mount -o memory=256MiB "$dir" "$mnt" 2>/dev/null
trap 'fusermount3 -u "$mnt" 2>/dev/null || true' EXIT
bdi=/sys/class/bdi/$(mountpoint -d "$mnt")/read_ahead_kb
# The daemon sets its window once INIT is answered, which a first request ensures.
cat "$mnt/.ccfs/stats.json" >/dev/null
sleep 0.5
[ "$w" = own ] || echo "$w" >"$bdi"
echo 3 > /proc/sys/vm/drop_caches
bytes=$(stat -c %s "$dir/big")
start=$(date +%s.%N)
cat "$mnt/big" >/dev/null
end=$(date +%s.%N)
stats=$(python3 -c "import json;d=json.load(open('$mnt/.ccfs/stats.json'));print(d['backing_reads'], d['pass_through_pages'])")
python3 -c "print('window %s KiB: %.0f MiB/s; backing reads, pages passed: $stats'
      % ($(cat "$bdi"), $bytes / 1048576 / ($end - $start)))"
