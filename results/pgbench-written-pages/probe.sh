#!/bin/bash
# probe.sh TARGET [CONFIG] : pgbench -S on local pg data, page cache (store) or ccfs, 128MiB cgroup
set -u
t=$1 cfg=${2:-}
base=/var/tmp/pgprobe; store=$base/${STORE:-store}; pcstore=$base/${PCSTORE:-${STORE:-store}}; mnt=$base/mnt; sock=$base/sock
pg=/usr/lib/postgresql/15/bin; ccfs=${CCFS:-/work/main/build/ccfs}
cg=/sys/fs/cgroup/memory/pgprobe
mkdir -p $store $mnt $sock; chown postgres $sock
if [ ! -f $store/done ]; then
  mkdir -p $store/pg; chown postgres: $store/pg; chmod 700 $store/pg
  runuser -u postgres -- $pg/initdb -D $store/pg -A trust --no-sync >/dev/null
  cat >>$store/pg/postgresql.conf <<EOC
shared_buffers = 16MB
listen_addresses = ''
unix_socket_directories = '$sock'
port = 5499
max_connections = 20
EOC
  runuser -u postgres -- $pg/pg_ctl -D $store/pg -l $sock/pg.log -w start >/dev/null
  runuser -u postgres -- $pg/pgbench -h $sock -p 5499 -i -q -s 17 postgres >/dev/null 2>&1
  runuser -u postgres -- $pg/pg_ctl -D $store/pg -m fast -w stop >/dev/null
  touch $store/done
fi
sync; [ -n "${STORE:-}" ] && STORES_STATE_DIR=/var/tmp/pgprobe/st /work/main/scripts/stores.sh evict gluster >/dev/null 2>&1; echo 3 > /proc/sys/vm/drop_caches
mkdir -p $cg; echo 128M > $cg/memory.limit_in_bytes
inc() { sh -c 'echo $$ > '$cg'/cgroup.procs; exec "$@"' sh "$@"; }
d=$pcstore
if [ $t = ccfs ]; then
  inc $ccfs mount -o "memory=76MiB,allow_other=true${cfg:+,$cfg}" $store $mnt >/dev/null || exit 1
  d=$mnt
  cp $mnt/.ccfs/stats.json /tmp/pgp/s0.json
fi
inc runuser -u postgres -- $pg/pg_ctl -D $d/pg -l $sock/pg.log -w start >/dev/null
for flag in -S "-b tpcb-like"; do
inc runuser -u postgres -- $pg/pgbench -h $sock -p 5499 $flag -c 4 -j 2 -T ${SECS:-20} -n postgres 2>&1 | grep -E "^tps" | sed "s/^/$flag /"
[ $t = ccfs ] && python3 -c "import json; d=json.load(open('$mnt/.ccfs/stats.json')); print('  hit', round(d['hit_ratio'],3), 'written_kept', d.get('written_kept'), 'page_writes', d['page_writes'], 'misses', d['misses'])"
done
[ $t = ccfs ] && cp $mnt/.ccfs/stats.json /tmp/pgp/s1.json
runuser -u postgres -- $pg/pg_ctl -D $d/pg -m fast -w stop >/dev/null
grep -E "^(cache|rss|shmem|mapped_file|total_cache|total_rss|total_shmem) " $cg/memory.stat | tr '\n' ' '; echo; echo failcnt $(cat $cg/memory.failcnt)
if [ $t = ccfs ]; then
  python3 - <<'PY'
import json
a=json.load(open('/tmp/pgp/s0.json')); b=json.load(open('/tmp/pgp/s1.json'))
for k,v in b.items():
    if isinstance(v,(int,float)) and not isinstance(v,bool) and v!=a.get(k):
        print(k, v-a.get(k,0) if isinstance(a.get(k),(int,float)) else v, end='; ')
print()
PY
  fusermount3 -u $mnt
fi
while read p; do echo $p > /sys/fs/cgroup/memory/cgroup.procs; done < $cg/cgroup.procs; rmdir $cg
