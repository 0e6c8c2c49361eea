#!/usr/bin/env bash
# A third floor beside results/fuse-floor's two: a FUSE file system whose reads the kernel passes
# through to the backing file (FUSE passthrough: FOPEN_PASSTHROUGH with a backing id from
# FUSE_DEV_IOC_BACKING_OPEN; no READ reaches the daemon), against the page cache, the same daemon
# without passthrough, and ccfs raw_tier = kernel at compressed_percent = 0. Method of
# results/fuse-floor/run.sh: equal RAM (one memory cgroup of 128 MiB per run holding the reader and
# the daemon), caches dropped before every run, the targets' order turned by one each round.
#
#   results/kernel-passthrough-floor/run.sh TREE PASSTHROUGH_HP [ROUNDS] > OUT
#
# TREE            many small files (e.g. `python3 results/walk-cpu-local/mktree.py TREE 15000`);
#                 passthrough_hp holds a descriptor per inode, so fewer names than `ulimit -Hn`.
# PASSTHROUGH_HP  libfuse >= 3.16's example/passthrough_hp (README.md: how it was built; its
#                 entry/attribute timeout set to 600 s, as the other floors keep names).
# Targets:
#   pagecache     the reader on TREE directly
#   hp_pt         passthrough_hp (default: kernel passthrough on); names, attributes kept 600 s
#   hp_nopt       passthrough_hp --nopassthrough: keep_cache, names and attributes 600 s (its
#                 cache=always-like mode), each miss a splice from the backing file in the daemon
#   ccfs_c0       ccfs (CCFS_BIN, default build/ccfs) memory=76MiB, raw_tier=kernel,
#                 kernel_evict=false, ro, names and attributes 600 s, close_to_open=false,
#                 compressed_percent=0, as results/fuse-floor/run.sh runs it
# The passthrough_hp mounts get the disk's read_ahead_kb on their bdi, as fuse-floor's floors do.
# Phases:
#   tree   walk1 `find TREE -type f -printf '%s\n'`, then read1 `find . -type f -print0 | xargs -0
#          -P4 -n64 cat`, seconds
#   cat    one cold `cat` of a 1 GiB file of mkdata text (made here as fuse-floor's is), MiB/s
# Prints one line per run: phase, target, round, figure(s), the daemon's CPU seconds (user +
# system), the bytes the daemon's own threads read from the disk (/proc/PID/io read_bytes, MiB:
# about 0 when the kernel passes reads through), and the disk's reads (count, MiB, /proc/diskstats).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
me=kernel-passthrough-floor
. "$root/scripts/lib.sh"
tree=$(realpath "${1:?usage: run.sh TREE PASSTHROUGH_HP [ROUNDS]}")
hp=$(realpath "${2:?usage: run.sh TREE PASSTHROUGH_HP [ROUNDS]}")
rounds=${3:-3}
[ -d "$tree" ] || die "$tree: not a directory"
[ -x "$hp" ] || die "$hp: not executable"
[ "$(id -u)" -eq 0 ] || die "needs root (memory cgroups, drop_caches, FUSE passthrough)"
ulimit -n "$(ulimit -Hn)"
[ "$(find "$tree" | wc -l)" -lt "$(( $(ulimit -n) - 100 ))" ] ||
  die "$tree: more names than passthrough_hp can hold open under this descriptor limit ($(ulimit -n))"
ccfs=${CCFS_BIN:-$root/build/ccfs}
[ -x "$ccfs" ] || die "$ccfs: no ccfs binary"
w=/var/tmp/ccfs-kpt-floor; mnt=$w/mnt; cg=/sys/fs/cgroup/memory/ccfs-kpt-floor
src=$(findmnt -no SOURCE --target "$tree")
disk=$(lsblk -no PKNAME "$src" 2>/dev/null || true)
[ -n "$disk" ] || disk=$(basename "$src")
window=$(cat "/sys/class/block/$disk/queue/read_ahead_kb")
dp=""
cleanup() {
  set +e
  if grep -q " $mnt fuse" /proc/mounts; then fusermount3 -u "$mnt" || fusermount3 -uz "$mnt"; fi
  if [ -n "$dp" ]; then kill "$dp" 2>/dev/null; wait "$dp"; fi
  cgroup_remove "$cg"
  rm -rf "$w"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
rm -rf "$w"; mkdir -p "$w/big" "$mnt"
"$ccfs" mkdata --size 1GiB --mix text=100 "$w/gen" >/dev/null
find "$w/gen" -type f | sort | xargs cat | head -c 1G >"$w/big/big"
rm -rf "$w/gen"
cgroup_make "$cg" $((128 << 20))
diskstat() { awk -v d="$disk" '$3 == d {print $4, $6}' /proc/diskstats; }
secs() { echo "$2 - $1" | bc -l | cut -c1-7; }
# measure PHASE DIR: the phase's figure(s), its reader inside the cgroup on DIR.
measure() {
  local t0 t1 t2
  case $1 in
    tree)
      t0=$(date +%s.%N)
      in_cgroup "$cg" find "$2" -type f -printf '%s\n' >/dev/null
      t1=$(date +%s.%N)
      in_cgroup "$cg" sh -c 'cd "$0" && find . -type f -print0 | xargs -0 -P4 -n64 cat >/dev/null' "$2"
      t2=$(date +%s.%N)
      echo "walk1 $(secs "$t0" "$t1") s, read1 $(secs "$t1" "$t2") s" ;;
    cat)
      t0=$(date +%s.%N); in_cgroup "$cg" cat "$2/big" >/dev/null; t1=$(date +%s.%N)
      echo "$(echo "1024 / ($t1 - $t0)" | bc -l | cut -c1-7) MiB/s" ;;
  esac
}
wait_mount() { for _ in $(seq 200); do grep -q " $mnt fuse" /proc/mounts && return 0; sleep 0.05; done; die "$mnt: no mount"; }
daemon_usage() {  # PID: "CPU_SECONDS READ_MIB"
  echo "$(awk '{print ($14 + $15) / 100}' "/proc/$1/stat") $(awk '$1 == "read_bytes:" {printf "%.1f", $2 / 1048576}' "/proc/$1/io")"
}
run() {  # PHASE ROUND TARGET
  local dir figure usage="- -" d0 d1 pid n0 s0 n1 s1 flags
  case $1 in tree) dir=$tree ;; cat) dir=$w/big ;; esac
  sync; echo 3 >/proc/sys/vm/drop_caches
  case $3 in
    pagecache) d0=$(diskstat); figure=$(measure "$1" "$dir"); d1=$(diskstat) ;;
    hp_pt|hp_nopt)
      flags=(--foreground); [ "$3" = hp_nopt ] && flags+=(--nopassthrough)
      in_cgroup "$cg" "$hp" "${flags[@]}" "$dir" "$mnt" 2>>"$w/hp.log" &
      dp=$!
      wait_mount
      echo "$window" >"/sys/class/bdi/$(mountpoint -d "$mnt")/read_ahead_kb"
      pid=$(pgrep -P "$dp" | head -1 || true); [ -n "$pid" ] || pid=$dp
      d0=$(diskstat); figure=$(measure "$1" "$mnt"); d1=$(diskstat)
      usage=$(daemon_usage "$pid")
      fusermount3 -u "$mnt"; wait "$dp"; dp="" ;;
    ccfs_c0)
      in_cgroup "$cg" "$ccfs" mount -f -o "memory=76MiB,raw_tier=kernel,kernel_evict=false,ro,entry_timeout=600,attr_timeout=600,close_to_open=false,compressed_percent=0" "$dir" "$mnt" 2>>"$w/daemon.log" &
      dp=$!
      wait_mount
      d0=$(diskstat); figure=$(measure "$1" "$mnt"); d1=$(diskstat)
      pid=$(python3 -c "import json, sys; print(json.load(open(sys.argv[1]))['daemon']['pid'])" "$mnt/.ccfs/stats.json")
      usage=$(daemon_usage "$pid")
      fusermount3 -u "$mnt"; wait "$dp"; dp="" ;;
  esac
  read -r n0 s0 <<<"$d0"; read -r n1 s1 <<<"$d1"
  echo "$1 | $3 | $2 | $figure | ${usage% *} | ${usage#* } | $((n1 - n0)) | $(((s1 - s0) / 2048))"
}
echo "# $(date -u +%FT%TZ), $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo '?'), kernel $(uname -r), disk $disk (read_ahead_kb $window), tree $(find "$tree" -type f | wc -l) files ($(du -sm "$tree" | cut -f1) MiB), passthrough_hp $(sha256sum "$hp" | cut -c1-12), ccfs $(sha256sum "$ccfs" | cut -c1-12)"
echo "phase | target | round | figure | daemon CPU s | daemon disk MiB | disk reads | disk MiB"
targets=(pagecache hp_pt hp_nopt ccfs_c0)
n=${#targets[@]}
for r in $(seq "$rounds"); do
  echo "# round $r, $(date -u +%TZ), load $(cut -d' ' -f1-3 /proc/loadavg)"
  for phase in tree cat; do
    for ((i = 0; i < n; i++)); do run "$phase" "$r" "${targets[$(((i + r - 1) % n))]}"; done
  done
done
echo "# end $(date -u +%FT%TZ)"
