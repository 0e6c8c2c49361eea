#!/usr/bin/env bash
# A/B of two ccfs binaries in kernel mode against the page cache, fio QD1 8 KiB random, equal RAM.
# results/kernel-ledger/ab.sh ROUNDS FIO_LAW MOUNT_OPTIONS BIN_A BIN_B: per round (order reversed
# every other round) the page cache alone, then ccfs BIN_A and BIN_B (raw_tier=kernel, C=0), each in a
# fresh 128 MiB memory cgroup with fio, caches dropped first; prints mean µs and MiB/s, and the
# daemon's misses and ledger counters. Data: /var/tmp/ccfs-ab/data/big, 1 GiB of text (made once).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd); me=ab; source $root/scripts/lib.sh
rounds=$1 law=$2 mem=$3 A=$4 B=$5
work=/var/tmp/ccfs-ab; mnt=$work/mnt; cg=/sys/fs/cgroup/memory/ccfs-ab-$$
mkdir -p $work/data $mnt
trap 'mountpoint -q $mnt && fusermount3 -u $mnt; cgroup_remove $cg 2>/dev/null || true' EXIT
[ -f $work/data/big ] || python3 -c "
import os,random
r=random.Random(1); words=[bytes(r.choice(b'abcdefghij klmnop') for _ in range(r.randint(3,9))) for _ in range(5000)]
with open('$work/data/big','wb') as f:
  for i in range(1024):
    f.write(b' '.join(r.choice(words) for _ in range(200000))[:1<<20])
"
run() { # target dir
  in_cgroup $cg fio --name=r --filename=$2/big --rw=randread --bs=8k --ioengine=psync --invalidate=0 \
    $law --time_based --runtime=20 --output-format=json --output=$work/fio.json >/dev/null
  python3 -c "import json;d=json.load(open('$work/fio.json'))['jobs'][0]['read'];print('$1', round(d['lat_ns']['mean']/1000,1), round(d['bw']/1024,1))"
}
for r in $(seq 1 $rounds); do
  ts="store A B"; [ $((r%2)) = 0 ] && ts="B A store"
  for t in $ts; do
    sync; echo 3 >/proc/sys/vm/drop_caches
    cgroup_make $cg $((128<<20))
    if [ $t = store ]; then echo -n "r$r "; run store $work/data
    else
      bin=$A; [ $t = B ] && bin=$B
      in_cgroup $cg $bin mount -o "$mem,raw_tier=kernel,compressed_percent=0" $work/data $mnt >/dev/null 2>&1
      echo -n "r$r "; run $t $mnt
      python3 -c "import json;d=json.load(open('$mnt/.ccfs/stats.json'));print('   misses',d['misses'],'kernel_evictions',d.get('kernel_evictions'),'rereq',d.get('kernel_rerequests'),'held',d.get('kernel_held_bytes',0)>>20)"
      ccfs_unmount $mnt
    fi
    cgroup_remove $cg
  done
done
