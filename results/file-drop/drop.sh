#!/bin/bash
# drop.sh WORKDIR ROUNDS CCFS... : what dropping a file's pages costs beside a large cache. For
# each ccfs binary in turn (ROUNDS interleaved rounds): a dataset of one 1 GiB file of random bytes
# and N small files of 4 KiB (N = $N, default 2000) under WORKDIR; caches dropped; a mount with
# memory = 1536MiB, compressed_percent = 0; `cat` of the 1 GiB file through the mount (its 131,072
# pages are then cached); then, timed through the mount, an O_TRUNC open of every small file
# (`: > FILE`) and `rm -r` of their directory. Each of these drops the file's pages from the cache.
# Prints one line per run; removes the mount, and WORKDIR's dataset at the end.
set -u
work=$1 rounds=$2; shift 2
ds=$work/ds mnt=$work/mnt pid=""
N=${N:-2000}
cleanup() {
  grep -q " $mnt fuse" /proc/mounts && fusermount3 -u "$mnt"
  [ -n "$pid" ] && wait "$pid"
  rm -rf "$ds" "$mnt"
}
trap cleanup EXIT
mkdir -p "$ds" "$mnt"
head -c 1G /dev/urandom >"$ds/big.bin"
for r in $(seq "$rounds"); do
  for b in "$@"; do
    rm -rf "$ds/small" && mkdir "$ds/small"
    for i in $(seq "$N"); do head -c 4096 /dev/zero >"$ds/small/f$i"; done
    sync && echo 3 >/proc/sys/vm/drop_caches
    "$b" mount -f -o memory=1536MiB,compressed_percent=0 "$ds" "$mnt" 2>>"$work/daemon.log" &
    pid=$!
    for _ in $(seq 100); do grep -q " $mnt fuse" /proc/mounts && break; sleep 0.1; done
    cat "$mnt/big.bin" >/dev/null
    pages=$(python3 -c "import json, sys; print(json.load(open(sys.argv[1]))['raw_pages'])" \
      "$mnt/.ccfs/stats.json")
    t0=$(date +%s.%N)
    for i in $(seq "$N"); do : >"$mnt/small/f$i"; done
    t1=$(date +%s.%N)
    rm -r "$mnt/small"
    t2=$(date +%s.%N)
    printf 'round %s %s: %s pages cached; O_TRUNC of %s files %.2f s; rm -r of them %.2f s\n' \
      "$r" "$b" "$pages" "$N" "$(echo "$t1 - $t0" | bc)" "$(echo "$t2 - $t1" | bc)"
    fusermount3 -u "$mnt" && wait "$pid"
    pid=""
  done
done
