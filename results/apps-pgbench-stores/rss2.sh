#!/bin/bash
# rss2.sh [ENV...]: daemon mode memory=76MiB over /var/tmp/pgprobe/store, warm-up of pg/, RSS vs tiers after
set -u
store=/var/tmp/pgprobe/store; mnt=/var/tmp/pgprobe/mnt
ccfs=/work/main/build/ccfs
sync; echo 3 > /proc/sys/vm/drop_caches
env "$@" $ccfs mount -o "memory=76MiB,allow_other=true,raw_tier=daemon,compressed_percent=75,compressor=zstd" $store $mnt >/dev/null 2>&1 || exit 1
s() { python3 -c "
import json; d=json.load(open('$mnt/.ccfs/stats.json'))
print('$1 rss %.1f MiB tiers %.1f (raw %.1f comp %.1f) logical %.0f MiB' % (d['daemon']['rss_bytes']/2**20, (d['raw_bytes']+d['compressed_bytes'])/2**20, d['raw_bytes']/2**20, d['compressed_bytes']/2**20, d['compressed_logical_bytes']/2**20))"; }
s start
$ccfs warmup -q $mnt pg >/dev/null
s warmed
cat $mnt/pg/base/*/* > /dev/null 2>&1; cat $mnt/pg/pg_wal/* > /dev/null 2>&1
s "cat all"
fusermount3 -u $mnt
