#!/usr/bin/env bash
# What a warm-up costs a reader beside it (issue 35: "safe beside readers, no stall beyond
# read-ahead's"). beside_readers.sh DIR ROUNDS CCFS. One QD1 random 8 KiB reader (fio psync,
# uniform) of a 64 MiB file read whole once before it starts (its pages cached), 10 s, while, from
# its second second on: nothing (alone), `ccfs warmup MNT cold` (warmup), or `cat cold/*` (cat:
# the read path with its read-ahead) loads a directory of 1 GiB of text and db pages. A fresh mount
# per run (memory=256MiB, zstd, C=75, daemon mode, the local disk), the kernel's caches dropped
# first; the three take turns, their order rotated per round. Prints: round what mean_us p99_us
# max_us iops load_s (the seconds the warm-up or cat took).
set -euo pipefail
dir=$1 rounds=$2 ccfs=$3
mnt=$dir/mnt data=$dir/data
mkdir -p "$mnt"
if [ ! -d "$data/cold" ]; then
  "$ccfs" mkdata --size 1GiB --mix text=60,db=40 "$data/cold" >/dev/null
  head -c $((64 << 20)) "$data/cold/db-000.db" >"$data/hot"
fi
one() {
  local round=$1 what=$2
  "$ccfs" mount -o memory=256MiB,compressor=zstd,compressed_percent=75 "$data" "$mnt"
  sync; echo 3 >/proc/sys/vm/drop_caches
  cat "$mnt/hot" >/dev/null
  local j load_s=0
  fio --name=r --filename="$mnt/hot" --rw=randread --bs=8k --ioengine=psync --iodepth=1 \
      --time_based --runtime=10 --output-format=json >"$dir/fio.json" 2>/dev/null &
  local fio_pid=$!
  sleep 1
  local t0; t0=$(date +%s.%N)
  case $what in
    warmup) "$ccfs" warmup -q "$mnt" cold >/dev/null ;;
    cat) cat "$mnt"/cold/* >/dev/null ;;
  esac
  [ "$what" = alone ] || load_s=$(echo "$(date +%s.%N) - $t0" | bc)
  wait "$fio_pid"
  "$ccfs" umount "$mnt"
  python3 -c "import json; r=json.load(open('$dir/fio.json'))['jobs'][0]['read']; c=r['clat_ns']; print('$round $what %.1f %.1f %.1f %.0f %.2f' % (c['mean']/1e3, c['percentile']['99.000000']/1e3, c['max']/1e3, r['iops'], $load_s))"
}
echo "# load: $(cat /proc/loadavg)"
echo "round what mean_us p99_us max_us iops load_s"
order=(alone warmup cat)
for r in $(seq "$rounds"); do
  for k in 0 1 2; do one "$r" "${order[$(( (k + r) % 3 ))]}"; done
  echo "# load: $(cat /proc/loadavg)"
done
