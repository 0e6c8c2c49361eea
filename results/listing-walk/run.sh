#!/usr/bin/env bash
# Walks through a directory read ahead (the build after) or not (the build before), under the
# programs of scripts/apps.sh that walk a tree (grep -r, tar) at equal RAM, each call ccfs against
# the page cache on the same store in interleaved rounds; then, on the local disk, a read of the
# same tree in the order of its names (`find | sort | xargs cat`), both builds and the page cache
# alternating in one loop.
#
#   results/listing-walk/run.sh OUT OLD_CCFS [STORES] [ROUNDS]
#
# OLD_CCFS: the earlier build's ccfs binary (apps.sh's CCFS_BIN); the later one is build/ccfs.
# Writes OUT/before/ and OUT/after/ (apps.sh's apps.csv, apps.md, apps.png) and OUT/sorted.txt.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:?OUT}
old=${2:?OLD_CCFS}
stores=${3:-local sshfs gluster}
rounds=${4:-2}
cfg=raw_tier=kernel,compressed_percent=50,compressor=zstd,kernel_evict=false
cd "$root"
for store in $stores; do
  CCFS_BIN=$old scripts/apps.sh --stores "$store" --apps "grep tar" --memory 128MiB --ratio 2 \
    --rounds "$rounds" --config "$cfg" --out "$out/before"
  scripts/apps.sh --stores "$store" --apps "grep tar" --memory 128MiB --ratio 2 \
    --rounds "$rounds" --config "$cfg" --out "$out/after"
done

# The order of names: apps.sh's text tree, as `find | sort | xargs cat` reads it, in a memory
# cgroup of 128 MiB (ccfs: memory = 85% of it less 32 MiB, as apps.sh), caches dropped before each.
me=listing-walk
source "$root/scripts/lib.sh"
work=/var/tmp/ccfs-listing-walk
cg=/sys/fs/cgroup/memory/ccfs-listing-walk
cleanup() {
  mountpoint -q "$work/mnt" && fusermount3 -u "$work/mnt"
  cgroup_remove "$cg" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
mkdir -p "$work/store" "$work/mnt"
data_bytes=$((256 << 20))
eval "$(sed -n '/^make_tree() {/,/^}/p' scripts/apps.sh)"
make_tree "$work/store/tree"
for ((r = 1; r <= rounds; r++)); do
  for target in pagecache before after; do
    cgroup_make "$cg" $((128 << 20))
    dir=$work/store
    if [ "$target" != pagecache ]; then
      bin=$root/build/ccfs
      [ "$target" = before ] && bin=$old
      in_cgroup "$cg" "$bin" mount -o "memory=76MiB,$cfg" "$work/store" "$work/mnt" 2>/dev/null
      dir=$work/mnt
    fi
    sync
    echo 3 >/proc/sys/vm/drop_caches
    t0=$(date +%s.%N)
    in_cgroup "$cg" sh -c 'cd "$0" && find tree -type f | sort | xargs cat >/dev/null' "$dir"
    t1=$(date +%s.%N)
    [ "$target" != pagecache ] && fusermount3 -u "$work/mnt"
    cgroup_remove "$cg"
    printf "round %d %-9s %.2f s\n" "$r" "$target" "$(echo "$t1 - $t0" | bc)" | tee -a "$out/sorted.txt"
  done
done
