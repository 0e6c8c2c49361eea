#!/usr/bin/env bash
# A restarted mount, cold or warmed up first (issue 35: "a cold restart in front of a 250 µs store
# costs minutes of misses"). restart.sh DIR ROUNDS CCFS. The EMULATED store (bench/delay_fs via
# scripts/stores.sh: 250 µs before every read, 400 MiB/s shared) serves one 512 MiB file of text
# and database pages (mkdata, about 3x smaller with zstd); ccfs over it with memory=256MiB, zstd,
# C = 75 (the whole file fits compressed), daemon mode. Each run mounts afresh (a restart): `cold`
# starts fio at once; `warm` runs `ccfs warmup MNT big` first. fio: QD1 8 KiB random reads,
# random_distribution=pareto:0.2, 30 s, a mean latency per second. The two take turns, the order
# swapped per round. Prints: round what warmup_s mean_us(0-5 s) (5-10 s) (10-30 s) hit_ratio.
set -euo pipefail
dir=$1 rounds=$2 ccfs=$3
repo=$(cd "$(dirname "$0")/../.." && pwd)
mnt=$dir/mnt store=$dir/store src=$dir/src state=$dir/state
mkdir -p "$mnt" "$store" "$src"
if [ ! -f "$src/big" ]; then
  "$ccfs" mkdata --size 512MiB --mix text=50,db=50 "$dir/gen" >/dev/null
  cat "$dir"/gen/* >"$src/big"
  rm -rf "$dir/gen"
fi
STORES_STATE_DIR=$state "$repo/scripts/stores.sh" up delay "$store" --source "$src" --delay-us 250 \
  --mib-per-s 400 >/dev/null
trap 'grep -q " $mnt fuse.ccfs " /proc/mounts && fusermount3 -u "$mnt"; STORES_STATE_DIR=$state "$repo/scripts/stores.sh" down delay >/dev/null 2>&1' EXIT
trap 'exit 130' INT TERM
one() {
  local round=$1 what=$2 warm_s=0
  "$ccfs" mount -o memory=256MiB,compressor=zstd,compressed_percent=75 "$store" "$mnt"
  sync; echo 3 >/proc/sys/vm/drop_caches
  if [ "$what" = warm ]; then
    local t0; t0=$(date +%s.%N)
    "$ccfs" warmup -q "$mnt" big >"$dir/warmup.txt"
    warm_s=$(echo "$(date +%s.%N) - $t0" | bc)
  fi
  rm -f "$dir"/lat_*.log
  fio --name=r --filename="$mnt/big" --rw=randread --bs=8k --ioengine=psync --iodepth=1 \
      --random_distribution=pareto:0.2 --time_based --runtime=30 --write_lat_log="$dir/lat" \
      --log_avg_msec=1000 --output-format=json >"$dir/fio.json" 2>/dev/null
  local hit
  hit=$(python3 -c "import json; d=json.load(open('$mnt/.ccfs/stats.json')); print('%.3f' % d['hit_ratio'])")
  "$ccfs" umount "$mnt"
  echo "$round $what $(printf %.1f "$warm_s") $("$repo/results/warmup-restart/lat_means.py" "$dir/lat_clat.1.log") $hit"
}
echo "# load: $(cat /proc/loadavg)"
echo "round what warmup_s mean_us_0-5s mean_us_5-10s mean_us_10-30s hit_ratio"
for r in $(seq "$rounds"); do
  if [ $((r % 2)) = 1 ]; then one "$r" cold; one "$r" warm; else one "$r" warm; one "$r" cold; fi
  echo "# load: $(cat /proc/loadavg)"
done
