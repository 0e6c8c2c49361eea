#!/bin/bash
# profile.sh CCFS OPTS OUT: as run.sh, one ccfs mount (OPTS must hold metrics=9567), with a walk
# (find -printf) first, then read1 under `perf record -g` of the daemon: the daemon's CPU per file
# in each, OUT/perf.data, and the FUSE requests the kernel sent (OUT/requests.txt).
set -u
ccfs=$1; opts=$2; out=$3
mkdir -p "$out" /var/tmp/probe/mnt
tree=/var/tmp/probe/tree
cleanup() { fusermount3 -u /var/tmp/probe/mnt 2>/dev/null; }
trap cleanup EXIT
$ccfs mount "$tree" /var/tmp/probe/mnt -o "memory=2GiB,entry_timeout=600,attr_timeout=600,negative_timeout=600,$opts" || exit 1
sleep 1
pid=$(pgrep -f " mount $tree /var/tmp/probe/mnt" | head -1)
cpu() { awk '{print $14+$15}' /proc/$pid/stat; }
sync; echo 3 > /proc/sys/vm/drop_caches
t0=$(date +%s.%N); c0=$(cpu)
(cd /var/tmp/probe/mnt && find . -type f -printf '%s\n' > /dev/null)
t1=$(date +%s.%N); c1=$(cpu)
echo 3 > /proc/sys/vm/drop_caches
perf record -F 999 -g -p $pid -o "$out/perf.data" 2>/dev/null &
perf_pid=$!
sleep 0.5
c2=$(cpu); t2=$(date +%s.%N)
(cd /var/tmp/probe/mnt && find . -type f -print0 | xargs -0 -P4 -n64 cat > /dev/null)
t3=$(date +%s.%N); c3=$(cpu)
kill -INT $perf_pid; wait $perf_pid
n=$(find $tree -type f | wc -l)
hz=$(getconf CLK_TCK)
python3 - <<PY
n=$n; hz=$hz
print(f"walk1 {float('$t1')-float('$t0'):.2f} s, daemon cpu {($c1-$c0)/hz:.2f} s, {($c1-$c0)/hz/n*1e6:.0f} us/file")
print(f"read1 {float('$t3')-float('$t2'):.2f} s, daemon cpu {($c3-$c2)/hz:.2f} s, {($c3-$c2)/hz/n*1e6:.0f} us/file")
PY
curl -s localhost:9567/metrics 2>/dev/null | grep -E "^ccfs_fuse_requests_total" > "$out/requests.txt"
