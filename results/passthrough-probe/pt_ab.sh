#!/bin/bash
# pt_ab.sh ROUNDS [PHASES] (paths under /var/tmp/ab; the probe build as /var/tmp/ab/ccfs-pt): read1
# of /var/tmp/probe/tree (four cats over every file after a walk and dropped
# caches) and one cold cat of /var/tmp/ab/bigdir/big (1 GiB), through the page cache, ccfs (kernel mode,
# C = 0, rw, close_to_open = false, names kept 600 s) and the same build with the kernel's FUSE
# passthrough for read-only opens (CCFS_PROBE_PASSTHROUGH, probe-passthrough.diff), the three
# taking turns; no cgroup. Per run: seconds or MiB/s, the readers' and the daemon's CPU.
set -u
rounds=$1
phases=${2:-read1 cat}
bin=/var/tmp/ab/ccfs-pt
tree=/var/tmp/probe/tree; big=/var/tmp/ab/bigdir; mnt=/var/tmp/ab/mnt; bmnt=/var/tmp/ab/bmnt
mkdir -p $mnt $bmnt
cleanup() { fusermount3 -u $mnt 2>/dev/null; fusermount3 -u $bmnt 2>/dev/null; }
trap cleanup EXIT
hz=$(getconf CLK_TCK)
n=$(find $tree -type f | wc -l)
opts="memory=2GiB,raw_tier=kernel,compressed_percent=0,close_to_open=false,entry_timeout=600,attr_timeout=600,negative_timeout=600"
cpu() { [ -n "$1" ] && awk '{print $14+$15}' /proc/$1/stat || echo 0; }
mountit() {  # TARGET: mounts the tree and the big file's directory; prints the two daemons' pids
  local env=()
  [ "$1" = ccfs-pt ] && env=(CCFS_PROBE_PASSTHROUGH=1)
  env "${env[@]}" $bin mount $tree $mnt -o "$opts" 2>/dev/null || exit 1
  env "${env[@]}" $bin mount $big $bmnt -o "$opts" 2>/dev/null || exit 1
  sleep 1
}
one() {  # TARGET
  local t=$1 dir=$tree bdir=$big p1= p2= c0 c1 r s u y
  if [ $t != pagecache ]; then
    mountit $t; dir=$mnt; bdir=$bmnt
    p1=$(pgrep -f " mount $tree $mnt" | head -1); p2=$(pgrep -f " mount $big $bmnt" | head -1)
  fi
  if [[ " $phases " == *" read1 "* ]]; then
  sync; echo 3 > /proc/sys/vm/drop_caches
  (cd $dir && find . -type f -printf '%s\n' >/dev/null)
  sync; echo 3 > /proc/sys/vm/drop_caches
  c0=$(cpu "$p1")
  r=$( { /usr/bin/time -f "%e %U %S" bash -c "cd $dir && find . -type f -print0 | xargs -0 -P4 -n64 cat > /dev/null"; } 2>&1 )
  c1=$(cpu "$p1")
  read -r s u y <<<"$r"
  python3 -c "n=$n; print(f'read1 $t {$s:.2f} s  readers {($u+$y)/n*1e6:.0f} us/file  daemon {($c1-$c0)/$hz/n*1e6:.0f} us/file')"
  fi
  [[ " $phases " == *" cat "* ]] || { [ $t != pagecache ] && { fusermount3 -u $mnt; fusermount3 -u $bmnt; sleep 1; }; return 0; }
  sync; echo 3 > /proc/sys/vm/drop_caches; sleep 2
  c0=$(cpu "$p2")
  r=$( { /usr/bin/time -f "%e %U %S" cat $bdir/big > /dev/null; } 2>&1 )
  c1=$(cpu "$p2")
  read -r s u y <<<"$r"
  python3 -c "print(f'cat   $t {1024/$s:.0f} MiB/s  reader {$u+$y:.2f} s  daemon {($c1-$c0)/$hz:.2f} s')"
  [ $t != pagecache ] && { fusermount3 -u $mnt; fusermount3 -u $bmnt; sleep 1; }
}
targets=(pagecache ccfs ccfs-pt)
for r in $(seq $rounds); do
  echo "# round $r $(date -u +%T)"
  for k in 0 1 2; do one ${targets[$(((k + r) % 3))]}; done
done
