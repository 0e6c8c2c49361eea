#!/usr/bin/env bash
# A remount with persist against a cold one. restart.sh DIR ROUNDS CCFS [PART [CCFS_B]], as root;
# PART 1 or 2 runs that part alone (default: both). CCFS_B: part 2's reloads alternate between
# CCFS and CCFS_B (A B B A ...), both reading the cache file the other wrote.
#
# Part 1, hit ratio after a restart. The EMULATED store (bench/delay_fs via scripts/stores.sh:
# 250 µs before every read, 400 MiB/s shared) serves one 512 MiB file of text and database pages
# (mkdata); ccfs over it with memory=256MiB, zstd, C = 75, daemon mode, persist = DIR/persist.
# Each round: `before` mounts with persist, runs the reader 30 s, then 10 s more (the hit ratio of
# those 10 s is the one before the unmount) and unmounts (the cache file is written); `persist`
# mounts again with persist and starts the reader at once; `cold` mounts without persist and
# starts the reader at once. The reader: fio, QD1 8 KiB random reads, pareto:0.2, 10 s, a mean
# latency per second. Prints: round what mean_us(0-5 s) (5-10 s) hit_ratio(the 10 s), and the
# daemon's lines about the cache file (write time, reload time).
#
# Part 2, reload speed (local disk, no emulation): 3 GiB of text and database pages (mkdata),
# memory=2GiB, zstd, C = 90; `ccfs warmup` fills the compressed tier, the unmount writes the cache
# file; then ROUNDS times the page cache is dropped and a mount reloads it (its unmount writes it
# again). Prints the daemon's write and reload lines (pages, bytes, seconds).
set -euo pipefail
dir=$1 rounds=$2 ccfs=$3 part=${4:-both} ccfs_b=${5:-$3}
repo=$(cd "$(dirname "$0")/../.." && pwd)
mnt=$dir/mnt store=$dir/store src=$dir/src state=$dir/state persist=$dir/persist log=$dir/daemon.log
mkdir -p "$mnt" "$store" "$src" "$persist"
if [ ! -f "$src/big" ]; then
  "$ccfs" mkdata --size 512MiB --mix text=50,db=50 "$dir/gen" >/dev/null
  cat "$dir"/gen/* >"$src/big"
  rm -rf "$dir/gen"
fi
STORES_STATE_DIR=$state "$repo/scripts/stores.sh" up delay "$store" --source "$src" --delay-us 250 \
  --mib-per-s 400 >/dev/null
cleanup() {
  grep -q " $mnt fuse.ccfs " /proc/mounts && fusermount3 -u "$mnt"
  sleep 1
  STORES_STATE_DIR=$state "$repo/scripts/stores.sh" down delay >/dev/null 2>&1 || true
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# mount_f SOURCE OPTIONS: ccfs mount -f in the background, its stderr appended to $log.
mount_f() {
  "$ccfs" mount -f -o "$2" "$1" "$mnt" 2>>"$log" &
  daemon=$!
  for _ in $(seq 500); do grep -q " $mnt fuse.ccfs " /proc/mounts && return; sleep 0.02; done
  echo "mount failed: $(tail -3 "$log")" >&2; exit 1
}
umount_f() { fusermount3 -u "$mnt"; wait "$daemon"; }
stat_of() { python3 -c "import json; d=json.load(open('$mnt/.ccfs/stats.json')); print(d['$1'])"; }
# reader SECONDS: fio on big; prints mean µs over 0-5 s and 5-10 s.
reader() {
  rm -f "$dir"/lat_*.log
  fio --name=r --filename="$mnt/big" --rw=randread --bs=8k --ioengine=psync --iodepth=1 \
      --random_distribution=pareto:0.2 --time_based --runtime="$1" --write_lat_log="$dir/lat" \
      --log_avg_msec=1000 --output-format=json >"$dir/fio.json" 2>/dev/null
  python3 - "$dir/lat_clat.1.log" <<'PY'
import sys
rows = [l.split(',') for l in open(sys.argv[1])]
def mean(a, b):
    v = [int(r[1]) / 1e3 for r in rows if a * 1000 <= int(r[0]) < b * 1000]
    return sum(v) / len(v) if v else float('nan')
print(f"{mean(0, 5):.1f} {mean(5, 11):.1f}")
PY
}
opts=memory=256MiB,compressor=zstd,compressed_percent=75
window() {  # the reader for 10 s; prints its means and the hit ratio of those 10 s
  local r0 h0 r1 h1 us
  r0=$(stat_of reads); h0=$(( $(stat_of raw_hits) + $(stat_of compressed_hits) ))
  us=$(reader 10)
  r1=$(stat_of reads); h1=$(( $(stat_of raw_hits) + $(stat_of compressed_hits) ))
  echo "$us $(python3 -c "print('%.3f' % (($h1 - $h0) / max(1, $r1 - $r0)))")"
}
if [ "$part" != 2 ]; then
echo "# part 1; load: $(cat /proc/loadavg)"
echo "round what mean_us_0-5s mean_us_5-10s hit_ratio_10s"
for r in $(seq "$rounds"); do
  rm -f "$persist"/*
  mount_f "$store" "$opts,persist=$persist"
  reader 30 >/dev/null
  echo "$r before $(window)"
  umount_f
  sync; echo 3 >/proc/sys/vm/drop_caches
  order=(persist cold); [ $((r % 2)) = 0 ] && order=(cold persist)
  for what in "${order[@]}"; do
    if [ "$what" = persist ]; then mount_f "$store" "$opts,persist=$persist"
    else mount_f "$store" "$opts"; fi
    echo "$r $what $(window)"
    [ "$what" = persist ] && stat_of persist_pages_restored | sed 's/^/# restored pages at 10 s: /'
    umount_f
    sync; echo 3 >/proc/sys/vm/drop_caches
  done
  echo "# load: $(cat /proc/loadavg)"
done
grep '^reload \|persist: \(wrote\|restored\)' "$log" | sed 's/^/# /'
fi
cleanup
trap - EXIT
[ "$part" = 1 ] && exit 0

echo "# part 2; load: $(cat /proc/loadavg)"
: >"$log"
data=$dir/data2
if [ ! -d "$data" ]; then
  "$ccfs" mkdata --size 3GiB --mix text=50,db=50 "$data" >/dev/null
fi
rm -f "$persist"/*
mount_f "$data" "memory=2GiB,compressor=zstd,compressed_percent=90,persist=$persist"
"$ccfs" warmup -q "$mnt" . >/dev/null || true
echo "# after warmup: compressed_bytes $(stat_of compressed_bytes)" \
  "compressed_pages $(stat_of compressed_pages) raw_pages $(stat_of raw_pages)"
umount_f
ls -l "$persist" | sed 's/^/# /'
# ROUNDS reloads, each from a cold disk (the page cache dropped), each unmount writing it again.
a=$ccfs
for r in $(seq "$rounds"); do
  sync; echo 3 >/proc/sys/vm/drop_caches
  n=$(grep -c 'persist: restored' "$log" || true)
  ccfs=$ccfs_b; [ $(( r / 2 % 2 )) = 0 ] && ccfs=$a
  echo "reload $r: $ccfs" >>"$log"
  mount_f "$data" "memory=2GiB,compressor=zstd,compressed_percent=90,persist=$persist"
  for _ in $(seq 600); do
    [ "$(grep -c 'persist: restored' "$log" || true)" -gt "$n" ] && break
    sleep 0.1
  done
  umount_f
done
grep '^reload \|persist: \(wrote\|restored\)' "$log" | sed 's/^/# /'
