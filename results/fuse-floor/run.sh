#!/usr/bin/env bash
# What any FUSE file system costs on the local disk, beside ccfs: the same readers through the page
# cache, through two FUSE floors that cache nothing themselves, and through ccfs raw_tier = kernel,
# equal RAM (one memory cgroup of 128 MiB per run: the reader, and the daemon where there is one),
# caches dropped before every run, the targets' order turned by one each round.
#
#   results/fuse-floor/run.sh TREE DB [ROUNDS] [SECONDS] > OUT
#
# Floors:
#   passthrough_ll  libfuse's own example (/usr/share/doc/libfuse3-dev/examples/passthrough_ll.c,
#                   built here), `-o cache=always,timeout=600`: the kernel keeps pages and names as
#                   ccfs's kernel mode does; each miss is its read of the file on the disk. It
#                   holds a descriptor per inode, so TREE must have fewer files than the
#                   descriptor limit (e.g. 15,000: fifteen top directories of
#                   scripts/walk_bench.sh's tree, hard-linked: README.md).
#   null_fuse       bench/null_fuse --backing FILE (DB, and the 1 GiB file): one file, each READ one
#                   O_DIRECT pread, nothing else done.
# Both get the disk's own read-ahead window (its read_ahead_kb, the page cache's), set on their
# mount after it is up; ccfs sets its own.
# Phases:
#   tree    walk1 `find TREE -type f -printf '%s\n'`, then read1 `find | xargs -0 -P4 -n64 cat`
#           (walk_bench.sh's), seconds; floors: passthrough_ll; ccfs with names and attributes
#           kept 600 s and close_to_open = false, as walk_bench runs it
#   sqlite  bench/sqlite_queries.py on DB (scripts/apps.sh's query set and database:
#           /var/tmp/ccfs-apps/local/apps/db.sqlite after `scripts/apps.sh --stores local --apps
#           sqlite`) for SECONDS (default 20), queries/s; floors: both
#   cat     one cold `cat` of a 1 GiB file of mkdata text, MiB/s; floors: both
# ccfs runs at compressed_percent = 0 and at its default (auto), ro, kernel_evict = false (the
# cgroup holds the kernel's share, as scripts/apps.sh's `ro` rows ran).
# Prints one line per run: phase, target, round, figure(s), the daemon's CPU seconds, and the
# disk's reads (count, MiB) from /proc/diskstats.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
me=fuse-floor
. "$root/scripts/lib.sh"
tree=$(realpath "${1:?usage: run.sh TREE DB [ROUNDS] [SECONDS]}")
db=$(realpath "${2:?usage: run.sh TREE DB [ROUNDS] [SECONDS]}")
rounds=${3:-2}
seconds=${4:-20}
[ -d "$tree" ] || die "$tree: not a directory"
[ -f "$db" ] || die "$db: no such database (scripts/apps.sh --stores local --apps sqlite writes one)"
[ "$(find "$tree" | wc -l)" -lt "$(( $(ulimit -n) - 100 ))" ] ||
  die "$tree: more names than passthrough_ll can hold open under this descriptor limit ($(ulimit -n))"
ccfs=${CCFS_BIN:-$root/build/ccfs}
null_fuse=${NULL_FUSE_BIN:-$root/build/null_fuse}
[ -x "$null_fuse" ] || die "build bench/null_fuse first (cmake --build build --target null_fuse)"
example=/usr/share/doc/libfuse3-dev/examples/passthrough_ll.c
[ -f "$example" ] || die "$example: missing (Debian's libfuse3-dev ships it)"
w=/var/tmp/ccfs-fuse-floor; mnt=$w/mnt; cg=/sys/fs/cgroup/memory/ccfs-fuse-floor
src=$(findmnt -no SOURCE --target "$tree")
disk=$(lsblk -no PKNAME "$src" 2>/dev/null || true)
[ -n "$disk" ] || disk=$(basename "$src")
window=$(cat "/sys/class/block/$disk/queue/read_ahead_kb")
dp=""
trap probe_cleanup EXIT
rm -rf "$w"; mkdir -p "$w/db" "$w/big" "$mnt"
cc -O2 "$example" $(pkg-config fuse3 --cflags --libs) -o "$w/passthrough_ll"
ln "$db" "$w/db/db.sqlite" 2>/dev/null || cp "$db" "$w/db/db.sqlite"
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
    sqlite) echo "$(in_cgroup "$cg" python3 "$root/bench/sqlite_queries.py" "$2/db.sqlite" "$seconds") queries/s" ;;
    cat)
      t0=$(date +%s.%N); in_cgroup "$cg" cat "$2/big" >/dev/null; t1=$(date +%s.%N)
      echo "$(echo "1024 / ($t1 - $t0)" | bc -l | cut -c1-7) MiB/s" ;;
  esac
}
wait_mount() { for _ in $(seq 100); do grep -q " $mnt fuse" /proc/mounts && return 0; sleep 0.05; done; die "$mnt: no mount"; }
run() {  # PHASE ROUND TARGET
  local dir figure cpu=- d0 d1 pid="" n0 s0 n1 s1
  case $1 in tree) dir=$tree ;; sqlite) dir=$w/db ;; cat) dir=$w/big ;; esac
  sync; echo 3 >/proc/sys/vm/drop_caches
  case $3 in
    pagecache) d0=$(diskstat); figure=$(measure "$1" "$dir"); d1=$(diskstat) ;;
    passthrough_ll|null_fuse)
      if [ "$3" = passthrough_ll ]; then
        in_cgroup "$cg" "$w/passthrough_ll" -f -o "source=$dir,cache=always,timeout=600" "$mnt" 2>>"$w/floor.log" &
      else
        in_cgroup "$cg" "$null_fuse" "$mnt" --backing "$dir/$( [ "$1" = cat ] && echo big || echo db.sqlite)" 2>>"$w/floor.log" &
      fi
      dp=$!
      wait_mount
      echo "$window" >"/sys/class/bdi/$(mountpoint -d "$mnt")/read_ahead_kb"
      pid=$(pgrep -P "$dp" | head -1); [ -n "$pid" ] || pid=$dp
      local md=$mnt
      if [ "$3" = null_fuse ]; then md=$w/nf; mkdir -p "$md"; ln -sf "$mnt/data" "$md/db.sqlite"; ln -sf "$mnt/data" "$md/big"; fi
      d0=$(diskstat); figure=$(measure "$1" "$md"); d1=$(diskstat)
      cpu=$(awk '{print ($14 + $15) / 100}' "/proc/$pid/stat")
      fusermount3 -u "$mnt"; wait "$dp"; dp="" ;;
    ccfs:*)
      local keys="memory=76MiB,raw_tier=kernel,kernel_evict=false,ro,entry_timeout=600,attr_timeout=600,close_to_open=false${3#ccfs:}"
      in_cgroup "$cg" "$ccfs" mount -f -o "$keys" "$dir" "$mnt" 2>>"$w/daemon.log" &
      dp=$!
      wait_mount
      d0=$(diskstat); figure=$(measure "$1" "$mnt"); d1=$(diskstat)
      pid=$(python3 -c "import json, sys; print(json.load(open(sys.argv[1]))['daemon']['pid'])" "$mnt/.ccfs/stats.json")
      cpu=$(awk '{print ($14 + $15) / 100}' "/proc/$pid/stat")
      fusermount3 -u "$mnt"; wait "$dp"; dp="" ;;
  esac
  read -r n0 s0 <<<"$d0"; read -r n1 s1 <<<"$d1"
  echo "$1 | $3 | $2 | $figure | $cpu | $((n1 - n0)) | $(((s1 - s0) / 2048))"
}
echo "# $(date -u +%FT%TZ), $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo '?'), disk $disk (read_ahead_kb $window), tree $(find "$tree" -type f | wc -l) files"
echo "phase | target | round | figure | daemon CPU s | disk reads | disk MiB"
for r in $(seq "$rounds"); do
  echo "# round $r, load $(cut -d' ' -f1-3 /proc/loadavg)"
  for phase in tree sqlite cat; do
    targets=(pagecache passthrough_ll)
    [ "$phase" = tree ] || targets+=(null_fuse)
    targets+=("ccfs:,compressed_percent=0" "ccfs:")
    n=${#targets[@]}
    for ((i = 0; i < n; i++)); do run "$phase" "$r" "${targets[$(((i + r - 1) % n))]}"; done
  done
done
