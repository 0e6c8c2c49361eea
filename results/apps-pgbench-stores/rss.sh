#!/bin/bash
# rss.sh: daemon mode over the local copy of apps' pg dir, warm-up then pgbench -S and TPC-B, no cgroup limit; RSS vs budget every 2 s
set -u
store=/var/tmp/ccfs-apps/sshfs-source; mnt=/var/tmp/ccfs-apps/mnt; sock=/var/tmp/ccfs-apps/pgsock
pg=/usr/lib/postgresql/15/bin; ccfs=/var/tmp/apps-bin/ccfs
sync; echo 3 > /proc/sys/vm/drop_caches
$ccfs mount -o "memory=76MiB,allow_other=true,raw_tier=daemon,compressed_percent=75,compressor=zstd" $store $mnt >/dev/null || exit 1
pid=$(python3 -c "import json; print(json.load(open('$mnt/.ccfs/stats.json'))['daemon']['pid'])")
( while kill -0 $pid 2>/dev/null; do
  python3 -c "
import json; d=json.load(open('$mnt/.ccfs/stats.json'))
print('%s rss %.1f MiB raw %.1f comp %.1f pages raw %d comp %d' % ('$(date +%T)', d['daemon']['rss_bytes']/2**20, d['raw_bytes']/2**20, d['compressed_bytes']/2**20, d['raw_pages'], d['compressed_pages']))" 2>/dev/null
  sleep 2; done ) &
mon=$!
$ccfs warmup -q $mnt apps/pg >/dev/null
echo "# warmed"
runuser -u postgres -- $pg/pg_ctl -D $mnt/apps/pg -l $sock/pg.log -w start >/dev/null
for flag in -S "-b tpcb-like"; do
  runuser -u postgres -- $pg/pgbench -h $sock -p 5499 $flag -c 4 -j 2 -T 20 -n postgres 2>&1 | grep "^tps"
done
runuser -u postgres -- $pg/pg_ctl -D $mnt/apps/pg -m fast -w stop >/dev/null
python3 -c "
import json; d=json.load(open('$mnt/.ccfs/stats.json'))
print({k: v for k, v in d.items() if 'bytes' in k or 'memory' in k or 'budget' in k})" | cut -c1-1500
kill $mon; fusermount3 -u $mnt
