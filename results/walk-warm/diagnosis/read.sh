#!/bin/bash
# read.sh BIN LABEL: in a 2240 MiB cgroup, mount, walk once, then time read1.
bin=$1; label=$2
cg=/sys/fs/cgroup/memory/ccfs-wl
mnt=/var/tmp/wl/mnt
mkdir -p $cg; echo $((2240*1024*1024)) > $cg/memory.limit_in_bytes
sync; echo 3 > /proc/sys/vm/drop_caches
sh -c 'echo $$ >"$0/cgroup.procs"; exec "$@"' $cg $bin mount -o memory=1872MiB,entry_timeout=600,attr_timeout=600,compressed_percent=90,close_to_open=false /var/tmp/wl/tree $mnt >/dev/null 2>&1
sh -c 'echo $$ >"$0/cgroup.procs"; exec "$@"' $cg find $mnt -type f -printf '%s\n' >/dev/null
t0=$(date +%s.%N)
sh -c 'echo $$ >"$0/cgroup.procs"; exec "$@"' $cg sh -c 'find "$0" -type f -print0 | xargs -0 -P4 -n64 cat' $mnt >/dev/null
t1=$(date +%s.%N)
printf '%s read1 %.2f s\n' $label $(echo "$t1-$t0"|bc)
fusermount3 -u $mnt
sleep 1
while read -r p; do echo "$p" >/sys/fs/cgroup/memory/cgroup.procs 2>/dev/null; done <$cg/cgroup.procs
rmdir $cg
