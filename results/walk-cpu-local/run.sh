#!/bin/bash
# run.sh CCFS OPTS ROUNDS: read1 (four cats over every file, the caches and dentries dropped after
# a walk) of /var/tmp/probe/tree (mktree.py) directly and through a ccfs mount of it (memory = 2GiB,
# names and attributes kept 600 s, OPTS after), the two taking turns; per file read, the seconds,
# the readers' CPU and the daemon's CPU. No memory cgroup: the question is the CPU per file. Needs
# root (drop_caches); leaves the tree and no mount.
set -u
ccfs=$1; opts=$2; rounds=$3
tree=/var/tmp/probe/tree; mnt=/var/tmp/probe/mnt
mkdir -p $mnt
trap 'fusermount3 -u $mnt 2>/dev/null' EXIT
hz=$(getconf CLK_TCK)
n=$(find $tree -type f | wc -l)
read1() {  # DIR LABEL [PID]
  local dir=$1 label=$2 pid=${3:-} c0=0 c1=0
  sync; echo 3 > /proc/sys/vm/drop_caches
  (cd $dir && find . -type f -printf '%s\n' >/dev/null)
  sync; echo 3 > /proc/sys/vm/drop_caches
  [ -n "$pid" ] && c0=$(awk '{print $14+$15}' /proc/$pid/stat)
  local t=$( { /usr/bin/time -f "%e %U %S" bash -c "cd $dir && find . -type f -print0 | xargs -0 -P4 -n64 cat > /dev/null"; } 2>&1 )
  [ -n "$pid" ] && c1=$(awk '{print $14+$15}' /proc/$pid/stat)
  read -r s u y <<<"$t"
  python3 -c "n=$n; print(f'$label read1 {$s:.2f} s  reader cpu {($u+$y)/n*1e6:.0f} us/file  daemon cpu {($c1-$c0)/$hz/n*1e6:.0f} us/file')"
}
for r in $(seq $rounds); do
  $ccfs mount $tree $mnt -o "memory=2GiB,entry_timeout=600,attr_timeout=600,negative_timeout=600,$opts" 2>/dev/null || exit 1
  sleep 1
  pid=$(pgrep -f " mount $tree $mnt" | head -1)
  if [ $((r % 2)) = 1 ]; then read1 $tree "page cache"; read1 $mnt "ccfs" $pid
  else read1 $mnt "ccfs" $pid; read1 $tree "page cache"; fi
  fusermount3 -u $mnt; sleep 1
done
