#!/bin/bash
# A cold `cat` through kernel mode at a read-ahead window set by hand, or the daemon's own:
#   results/kernel-window/cat.sh DIR WINDOW_KB|own [OPTIONS]
# DIR holds one file `big`; a fresh mount of DIR at DIR.m (memory=256MiB, the defaults, then
# OPTIONS, e.g. raw_tier=daemon), its bdi's
# read_ahead_kb set to WINDOW_KB (or left as the daemon set it), the caches dropped, then `cat` of
# the file to /dev/null. Prints the window, MiB/s, the daemon's backing reads, pages passed
# through, page faults and CPU seconds (/proc/PID/stat, from its start). Needs root.
set -euo pipefail
dir=$1 w=$2 opts=${3:+,$3}
ccfs=${CCFS_BIN:-$(dirname "$0")/../../build/ccfs}
mnt=$dir.m
mkdir -p "$mnt"
"$ccfs" mount -o "memory=256MiB$opts" "$dir" "$mnt" 2>/dev/null
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
stats=$(python3 -c "
import json, os
d = json.load(open('$mnt/.ccfs/stats.json'))
f = open('/proc/%d/stat' % d['daemon']['pid']).read().rsplit(')', 1)[1].split()
print(d['backing_reads'], d['pass_through_pages'], f[7], '%.2f' % ((int(f[11]) + int(f[12])) / os.sysconf('SC_CLK_TCK')))")
python3 -c "print('window %s KiB: %.0f MiB/s; backing reads, pages passed, daemon page faults, CPU s: $stats'
      % ($(cat "$bdi"), $bytes / 1048576 / ($end - $start)))"
