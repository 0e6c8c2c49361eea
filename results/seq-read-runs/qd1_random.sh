#!/usr/bin/env bash
# QD1 random 8 KiB reads through the mount, interleaved before/after (issue 30: random readers must
# not pay). qd1_random.sh DIR ROUNDS BIN_BEFORE BIN_AFTER. fio psync, Pareto 80/20
# (random_distribution=pareto:0.2), 15 s per run after the mount is fresh; memory=64MiB,
# compressed_percent=50, both raw tiers. Prints: round what mode mean_us p50_us IOPS.
set -euo pipefail
dir=$1 rounds=$2 before=$3 after=$4
mnt=$dir/mnt data=$dir/data
one() {
  local round=$1 label=$2 bin=$3 mode=$4
  "$bin" mount -o memory=64MiB,compressed_percent=50,raw_tier=$mode "$data" "$mnt"
  for _ in $(seq 50); do mountpoint -q "$mnt" && break; sleep 0.1; done
  sync; echo 3 >/proc/sys/vm/drop_caches
  local j
  j=$(fio --name=r --filename="$mnt/f" --rw=randread --bs=8k --ioengine=psync --iodepth=1 \
        --random_distribution=pareto:0.2 --time_based --runtime=15 --ramp_time=3 \
        --output-format=json 2>/dev/null)
  fusermount3 -u "$mnt"
  for _ in $(seq 50); do mountpoint -q "$mnt" || break; sleep 0.1; done
  echo "$j" | python3 -c "import json,sys; r=json.load(sys.stdin)['jobs'][0]['read']; print('$round $label $mode %.1f %.1f %.0f' % (r['clat_ns']['mean']/1e3, r['clat_ns']['percentile']['50.000000']/1e3, r['iops']))"
}
echo "# load: $(cat /proc/loadavg)"
echo "round what mode mean_us p50_us iops"
for r in $(seq "$rounds"); do
  for mode in daemon kernel; do
    if [ $((r % 2)) = 1 ]; then one "$r" before "$before" "$mode"; one "$r" after "$after" "$mode"
    else one "$r" after "$after" "$mode"; one "$r" before "$before" "$mode"; fi
  done
  echo "# load: $(cat /proc/loadavg)"
done
