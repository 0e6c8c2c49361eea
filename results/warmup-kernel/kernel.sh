#!/usr/bin/env bash
# A restarted mount under raw_tier = kernel, cold or warmed up first, by two ccfs binaries taking
# turns. kernel.sh DIR ROUNDS OLD_CCFS NEW_CCFS [MIB [LAW]]. The EMULATED store (bench/delay_fs via
# scripts/stores.sh: 250 µs before every read, 400 MiB/s shared) serves one file of MIB (512) MiB
# of text and database pages (mkdata, about 3x smaller with zstd); ccfs over it with memory=256MiB, zstd,
# C = 75, raw_tier = kernel. Each run mounts afresh with the caches dropped: `cold` (NEW) starts
# fio at once; `warm-old` and `warm-new` run `ccfs warmup MNT big` of that binary first (the mount
# is NEW's in all three). fio: QD1 8 KiB random buffered reads (--invalidate=0, so fio keeps the
# kernel's pages of the file), random_distribution=LAW (pareto:0.2; `random`: uniform),
# 30 s, a mean latency per second.
# Prints: round what warmup_s kernel_MiB compressed_MiB mean_us(0-5 s) (5-10 s) (10-30 s)
# daemon_reads (the reads that reached the daemon: the kernel answered the rest).
set -euo pipefail
dir=$1 rounds=$2 old=$3 new=$4 mib=${5:-512} law=${6:-pareto:0.2}
repo=$(cd "$(dirname "$0")/../.." && pwd)
mnt=$dir/mnt store=$dir/store src=$dir/src state=$dir/state
mkdir -p "$mnt" "$store" "$src"
if [ ! -f "$src/big" ]; then
  "$new" mkdata --size 512MiB --mix text=50,db=50 "$dir/gen" >/dev/null
  cat "$dir"/gen/* >"$src/big"
  rm -rf "$dir/gen"
fi
file=big
if [ "$mib" != 512 ]; then
  file=f$mib
  [ -f "$src/$file" ] || head -c "${mib}M" "$src/big" >"$src/$file"
fi
STORES_STATE_DIR=$state "$repo/scripts/stores.sh" up delay "$store" --source "$src" --delay-us 250 \
  --mib-per-s 400 >/dev/null
trap 'grep -q " $mnt fuse.ccfs " /proc/mounts && fusermount3 -u "$mnt"; STORES_STATE_DIR=$state "$repo/scripts/stores.sh" down delay >/dev/null 2>&1' EXIT
trap 'exit 130' INT TERM
one() {
  local round=$1 what=$2 warm_s=0 kernel=- comp=-
  "$new" mount -o memory=256MiB,compressor=zstd,compressed_percent=75,raw_tier=kernel "$store" "$mnt"
  sync; echo 3 >/proc/sys/vm/drop_caches
  if [ "$what" != cold ]; then
    local bin=$new t0; [ "$what" = warm-old ] && bin=$old
    t0=$(date +%s.%N)
    "$bin" warmup -q "$mnt" "$file" >"$dir/warmup.txt"
    warm_s=$(echo "$(date +%s.%N) - $t0" | bc)
    kernel=$(grep -o "kernel's page cache [0-9.]* MiB" "$dir/warmup.txt" | head -1 | awk '{print $4}')
    comp=$(grep -o "compressed [0-9.]* MiB" "$dir/warmup.txt" | head -1 | awk '{print $2}')
  fi
  local r0; r0=$(python3 -c "import json; print(json.load(open('$mnt/.ccfs/stats.json'))['reads'])")
  rm -f "$dir"/lat_*.log
  fio --name=r --filename="$mnt/$file" --norandommap --rw=randread --bs=8k --ioengine=psync --iodepth=1 \
      --invalidate=0 --random_distribution="$law" --time_based --runtime=30 \
      --write_lat_log="$dir/lat" --log_avg_msec=1000 --output-format=json >"$dir/fio.json" 2>/dev/null
  local reads
  reads=$(python3 -c "import json; print(json.load(open('$mnt/.ccfs/stats.json'))['reads'] - $r0)")
  "$new" umount "$mnt"
  echo "$round $what $(printf %.1f "$warm_s") $kernel $comp $("$repo/results/warmup-restart/lat_means.py" "$dir/lat_clat.1.log") $reads"
}
echo "# load: $(cat /proc/loadavg)"
echo "round what warmup_s kernel_MiB compressed_MiB mean_us_0-5s mean_us_5-10s mean_us_10-30s daemon_reads"
for r in $(seq "$rounds"); do
  if [ $((r % 2)) = 1 ]; then order="cold warm-old warm-new"; else order="warm-new warm-old cold"; fi
  for w in $order; do one "$r" "$w"; done
  echo "# load: $(cat /proc/loadavg)"
done
