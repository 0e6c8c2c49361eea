#!/bin/bash
# read1.sh CCFS ROUNDS: read1 of /var/tmp/probe/tree (results/walk-cpu-local/mktree.py: four cats
# over every file after a walk, the caches dropped between) through the page cache, ccfs (kernel
# mode, C = 0, close_to_open = false, names kept 600 s) and the same with passthrough = true, the
# three taking turns; no cgroup. Per run: seconds, the readers' and the daemon's CPU per file, and
# the opens passed through. Needs root (drop_caches); leaves the tree and no mount.
set -u
bin=$1 rounds=$2
tree=/var/tmp/probe/tree; mnt=/var/tmp/probe/mnt
mkdir -p $mnt
trap 'fusermount3 -u $mnt 2>/dev/null' EXIT
hz=$(getconf CLK_TCK)
n=$(find $tree -type f | wc -l)
opts="memory=2GiB,raw_tier=kernel,compressed_percent=0,close_to_open=false,entry_timeout=600,attr_timeout=600,negative_timeout=600"
cpu() { [ -n "$1" ] && awk '{print $14+$15}' /proc/$1/stat || echo 0; }
one() {  # TARGET
  local t=$1 dir=$tree pid= c0 c1 r s u y passed=-
  if [ $t != pagecache ]; then
    local o=$opts
    [ $t = ccfs-passthrough ] && o="$o,passthrough=true"
    $bin mount $tree $mnt -o "$o" 2>/dev/null || exit 1
    sleep 1
    dir=$mnt; pid=$(pgrep -f " mount $tree $mnt" | head -1)
  fi
  sync; echo 3 > /proc/sys/vm/drop_caches
  (cd $dir && find . -type f -printf '%s\n' >/dev/null)
  sync; echo 3 > /proc/sys/vm/drop_caches
  c0=$(cpu "$pid")
  r=$( { /usr/bin/time -f "%e %U %S" bash -c "cd $dir && find . -type f -print0 | xargs -0 -P4 -n64 cat > /dev/null"; } 2>&1 )
  c1=$(cpu "$pid")
  read -r s u y <<<"$r"
  [ $t != pagecache ] && passed=$(python3 -c "import json; print(json.load(open('$mnt/.ccfs/stats.json'))['passthrough_opens'])")
  python3 -c "n=$n; print(f'read1 $t {$s:.2f} s  readers {($u+$y)/n*1e6:.0f} us/file  daemon {($c1-$c0)/$hz/n*1e6:.0f} us/file  passed through $passed')"
  [ $t != pagecache ] && { fusermount3 -u $mnt; sleep 1; }
}
targets=(pagecache ccfs ccfs-passthrough)
for r in $(seq $rounds); do
  echo "# round $r $(date -u +%T)"
  for k in 0 1 2; do one ${targets[$(((k + r) % 3))]}; done
done
