#!/bin/bash
# walk.sh BIN LABEL: mount, drop caches, time find walk1 + walk2
bin=$1; label=$2
mnt=/var/tmp/wl/mnt
$bin mount -o memory=1872MiB,entry_timeout=600,attr_timeout=600,compressed_percent=90,close_to_open=false /var/tmp/wl/tree $mnt >/dev/null
sync; echo 3 > /proc/sys/vm/drop_caches
pid=$(pgrep -n -f "mount -o memory=1872")
c0=$(awk '{print $14+$15}' /proc/$pid/stat)
t0=$(date +%s.%N); find $mnt -type f -printf '%s\n' >/dev/null; t1=$(date +%s.%N)
c1=$(awk '{print $14+$15}' /proc/$pid/stat)
find $mnt -type f -printf '%s\n' >/dev/null; t2=$(date +%s.%N)
printf '%s walk1 %.2f s daemon %d ticks walk2 %.2f\n' $label $(echo "$t1-$t0"|bc) $((c1-c0)) $(echo "$t2-$t1"|bc)
fusermount3 -u $mnt
