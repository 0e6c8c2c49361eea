#!/usr/bin/env bash
# Cold sequential read of one file through ccfs, interleaved before/after (issue 30, items 1 and 3).
#   seq_read.sh DIR ROUNDS BIN_BEFORE BIN_AFTER [RA_KB...]
# DIR holds data/f (the file) and mnt/. Each round, in order: the file read directly; then for each
# raw tier (daemon, kernel) and each binary: mount (memory=64MiB, compressed_percent=50), drop the
# kernel's caches, `cat MNT/f`, drop again, `dd bs=1M`, read stats.json, unmount. With RA_KB values,
# kernel mode with the after binary is run once per value, the mount's bdi read_ahead_kb set to it
# (0 = leave what the daemon set). Prints one line per run: round what mode ra cat_s dd_s misses
# backing_reads.
set -euo pipefail
dir=$1 rounds=$2 before=$3 after=$4
shift 4
ras=("$@")
[ ${#ras[@]} -eq 0 ] && ras=(0)
mnt=$dir/mnt data=$dir/data
drop() { sync; echo 3 >/proc/sys/vm/drop_caches; }
secs() { local t0 t1; t0=$(date +%s.%N); "$@" >/dev/null 2>&1; t1=$(date +%s.%N); echo "$t1 - $t0" | bc; }
run() {  # round label bin mode ra
  local round=$1 label=$2 bin=$3 mode=$4 ra=$5
  "$bin" mount -o memory=64MiB,compressed_percent=50,raw_tier=$mode "$data" "$mnt"
  for _ in $(seq 50); do mountpoint -q "$mnt" && break; sleep 0.1; done
  if [ "$ra" != 0 ]; then echo "$ra" >/sys/class/bdi/$(mountpoint -d "$mnt")/read_ahead_kb; fi
  local ra_now; ra_now=$(cat /sys/class/bdi/$(mountpoint -d "$mnt")/read_ahead_kb)
  drop; local c; c=$(secs cat "$mnt/f")
  drop; local d; d=$(secs dd if="$mnt/f" of=/dev/null bs=1M)
  local st; st=$(cat "$mnt/.ccfs/stats.json")
  local m b
  m=$(echo "$st" | python3 -c 'import json,sys; j=json.load(sys.stdin); print(j["misses"])')
  b=$(echo "$st" | python3 -c 'import json,sys; j=json.load(sys.stdin); print(j.get("backing_reads","-"))')
  fusermount3 -u "$mnt"
  for _ in $(seq 50); do mountpoint -q "$mnt" || break; sleep 0.1; done
  echo "$round $label $mode $ra_now $c $d $m $b"
}
echo "# load: $(cat /proc/loadavg)"
echo "round what mode ra_kb cat_s dd_s misses backing_reads"
for r in $(seq "$rounds"); do
  drop; c=$(secs cat "$data/f"); drop; d=$(secs dd if="$data/f" of=/dev/null bs=1M)
  echo "$r direct - - $c $d - -"
  for mode in daemon kernel; do
    run "$r" before "$before" "$mode" 0
    if [ "$mode" = kernel ]; then
      for ra in "${ras[@]}"; do run "$r" after "$after" kernel "$ra"; done
    else
      run "$r" after "$after" daemon 0
    fi
  done
  echo "# load: $(cat /proc/loadavg)"
done
