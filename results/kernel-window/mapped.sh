#!/bin/bash
# Kernel mode's read-ahead window set by hand against a random reader of a mapped file:
#   results/kernel-window/mapped.sh DIR WINDOW_KB|own [pareto:0.2|random] [mmap|psync] [hint|nohint]
# DIR holds one file `big`; a fresh mount of DIR at DIR.m (memory=256MiB, the defaults), its bdi's
# read_ahead_kb set to WINDOW_KB (or left as the daemon set it: own), the caches dropped, then fio QD1 8 KiB random reads through a
# mapping (ioengine=mmap; or read(2), psync), 10 s of warm-up and 20 s measured. fio tells the
# kernel its reads are random (POSIX_FADV_RANDOM, which turns the kernel's read-ahead off for the
# file) unless the last argument is nohint. Prints IOPS, the mean latency, and
# the daemon's reads, backing reads and MiB missed. Needs root.
set -euo pipefail
dir=$1 w=$2 law=${3:-pareto:0.2} engine=${4:-mmap} hint=${5:-hint}
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
w=$(cat "$bdi")
echo 3 > /proc/sys/vm/drop_caches
dist=()
[ "$law" = random ] || dist=(--random_distribution="$law")
[ "$hint" = hint ] || dist+=(--fadvise_hint=0)
out=$(fio --name=r --filename="$mnt/big" --ioengine="$engine" --rw=randread --bs=8k "${dist[@]}" \
  --norandommap --invalidate=0 --ramp_time=10 --runtime=20 --time_based --output-format=json)
stats=$(python3 -c "import json;d=json.load(open('$mnt/.ccfs/stats.json'));print(d['reads'], d['backing_reads'], d['miss_bytes'] >> 20)")
echo "$out" | python3 -c "
import json, sys
j = json.load(sys.stdin)['jobs'][0]['read']
print('window $w KiB, $law, $engine, $hint: %.0f IOPS, mean %.1f us; daemon reads, backing reads, MiB missed: $stats'
      % (j['iops'], j['clat_ns']['mean'] / 1000))"
