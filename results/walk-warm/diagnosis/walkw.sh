#!/bin/bash
bin=$1; label=$2; warm=$3
mnt=/var/tmp/wl/mnt
$bin mount -o memory=1872MiB,entry_timeout=600,attr_timeout=600,compressed_percent=90,close_to_open=false /var/tmp/wl/tree $mnt >/dev/null 2>&1
sync; echo 3 > /proc/sys/vm/drop_caches
t0=$(date +%s.%N)
[ "$warm" = 1 ] && find /var/tmp/wl/tree -printf '%s\n' >/dev/null &
find $mnt -type f -printf '%s\n' >/dev/null; t1=$(date +%s.%N)
wait
printf '%s warm=%s walk1 %.2f s\n' $label $warm $(echo "$t1-$t0"|bc)
fusermount3 -u $mnt
