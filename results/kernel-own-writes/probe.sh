#!/usr/bin/env bash
# What a write through a raw_tier = kernel mount does to the kernel's pages of the file, and what
# that costs PostgreSQL.
#
#   results/kernel-own-writes/probe.sh [ROUNDS]
#   CCFS_BINS="before=/path/to/old/ccfs after=build/ccfs" results/kernel-own-writes/probe.sh [ROUNDS]
#
# CCFS_BINS names the ccfs builds to compare (LABEL=PATH, default "ccfs=build/ccfs"): each is a
# target of its own in every round, beside the page cache.
#
# 1. One file of 64 MiB read whole through the mount (raw_tier = kernel, C = 0), then one byte of it
#    written through the mount; fincore (an open and an fstat of the file, then mincore) prints the
#    kernel's pages of the file before the write, after it, and after a second full read.
# 2. pgbench -S (select only, 4 clients, 20 s) on a PostgreSQL 15 cluster of 256 MiB (scale 17,
#    shared_buffers = 16MB): the data directory read directly (the page cache) against the same
#    directory through ccfs (raw_tier = kernel, compressed_percent = 0, memory = 76MiB, as
#    scripts/lib.sh's ccfs_memory_for gives), each in a memory cgroup of 128 MiB with postgres and
#    pgbench; caches dropped before every run; ROUNDS interleaved rounds. First on the tables as
#    pgbench -i left them, then again after 20 s of pgbench's read-write mix on the data directory
#    directly (dead tuples whose hint bits the select-only run then writes back). Last, pgbench's
#    read-write mix itself (TPC-B-like, 4 clients, 20 s) on each target in turn.
# Per run: tps, the disk's reads during it (/proc/diskstats), and for ccfs its misses, the kernel's
# pages the daemon told it to drop (kernel_evictions), the pages the kernel asked for again while
# the daemon's ledger still held them (kernel_rerequests: pages the kernel dropped itself), the
# ledger's pages against its budget, and what the cgroup's page cache held at the end.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
me=probe
. "$root/scripts/lib.sh"
rounds=${1:-2}
read -r -a bins <<<"${CCFS_BINS:-ccfs=$root/build/ccfs}"
pg=/usr/lib/postgresql/15/bin
[ -x "$pg/pgbench" ] || { echo "probe: needs postgresql-15 (scripts/apps.sh installs it)" >&2; exit 1; }
w=/var/tmp/ccfs-kernel-own-writes; mnt=$w/mnt; sock=$w/sock
cg=/sys/fs/cgroup/memory/ccfs-kernel-own-writes
disk=$(lsblk -no pkname "$(findmnt -no source -T /var/tmp)" 2>/dev/null || true)
[ -n "$disk" ] || disk=$(basename "$(findmnt -no source -T /var/tmp)")
pg_dir=""
cleanup() {
  set +e
  [ -n "$pg_dir" ] && runuser -u postgres -- "$pg/pg_ctl" -D "$pg_dir" -m fast -w stop >/dev/null 2>&1
  grep -q " $mnt fuse" /proc/mounts && ccfs_unmount "$mnt"
  cgroup_remove "$cg"
  rm -rf "$w"
}
trap cleanup EXIT
rm -rf "$w"
mkdir -p "$w/data" "$mnt" "$sock"

echo "== one byte written through the mount"
head -c 64M /dev/urandom >"$w/data/f"
for b in "${bins[@]}"; do
  "${b#*=}" mount -o memory=256MiB,raw_tier=kernel,compressed_percent=0 "$w/data" "$mnt" 2>/dev/null
  cat "$mnt/f" >/dev/null
  echo "${b%%=*}: after a full read:   $(fincore -n -o RES "$mnt/f")"
  printf x | dd of="$mnt/f" bs=1 seek=100 conv=notrunc status=none
  echo "${b%%=*}: after a 1-byte write: $(fincore -n -o RES "$mnt/f")"
  cat "$mnt/f" >/dev/null
  echo "${b%%=*}: after a second read: $(fincore -n -o RES "$mnt/f")"
  ccfs_unmount "$mnt"
done
rm -f "$w/data/f"

echo "== pgbench -S, 128 MiB cgroups"
chown postgres: "$w/data" "$sock"
chmod 700 "$w/data"
runuser -u postgres -- "$pg/initdb" -D "$w/data/d" -A trust --no-sync >/dev/null
cat >>"$w/data/d/postgresql.conf" <<EOF
shared_buffers = 16MB
listen_addresses = ''
unix_socket_directories = '$sock'
port = 5498
max_connections = 20
EOF
pg_up() {  # DIR [CGROUP]
  local cmd=(runuser -u postgres -- "$pg/pg_ctl" -D "$1" -l "$sock/pg.log" -w start)
  if [ -n "${2:-}" ]; then in_cgroup "$2" "${cmd[@]}" >/dev/null; else "${cmd[@]}" >/dev/null; fi
  pg_dir=$1
}
pg_down() { runuser -u postgres -- "$pg/pg_ctl" -D "$pg_dir" -m fast -w stop >/dev/null; pg_dir=""; }
bench() {  # FLAGS [CGROUP]
  local cmd=(runuser -u postgres -- "$pg/pgbench" -h "$sock" -p 5498 $1 -c 4 -j 2 -T 20 -n postgres)
  if [ -n "${2:-}" ]; then in_cgroup "$2" "${cmd[@]}"; else "${cmd[@]}"; fi 2>/dev/null |
    awk '/^tps = / {printf "%.0f", $3}'
}
pg_up "$w/data/d"
runuser -u postgres -- "$pg/pgbench" -h "$sock" -p 5498 -i -q -s 17 postgres >/dev/null 2>&1
pg_down
reads() { awk -v d="$disk" '$3 == d {print $4}' /proc/diskstats; }
run() {  # TARGET PHASE ROUND (TARGET: store, or a LABEL=PATH of CCFS_BINS)
  sync; echo 3 >/proc/sys/vm/drop_caches
  cgroup_make "$cg" $((128 << 20))
  local dir=$w/data/d extra="" label=${1%%=*}
  if [ "$1" != store ]; then
    in_cgroup "$cg" "${1#*=}" mount -o memory=76MiB,raw_tier=kernel,compressed_percent=0,allow_other=true \
      "$w/data" "$mnt" 2>/dev/null
    dir=$mnt/d
  fi
  local r0; r0=$(reads)
  pg_up "$dir" "$cg"
  local tps; tps=$(bench "$([ "$2" = rw ] || echo -S)" "$cg")
  pg_down
  local disk_reads=$(( $(reads) - r0 ))
  if [ "$1" != store ]; then
    extra=$(python3 -c "
import json, sys
s = json.load(open(sys.argv[1] + '/.ccfs/stats.json'))
print(f\"misses {s['misses']} kernel_evictions {s['kernel_evictions']} kernel_rerequests {s['kernel_rerequests']}\",
      f\"ledger {s['kernel_held_bytes'] >> 20}/{s['kernel_budget_bytes'] >> 20} MiB\")" "$mnt")
    extra="$extra, cgroup page cache $(( $(awk '$1 == "cache" {print $2}' "$cg/memory.stat") >> 20 )) MiB"
    ccfs_unmount "$mnt"
  fi
  cgroup_remove "$cg"
  echo "$2 round $3 $label: $tps tps, disk reads $disk_reads${extra:+, $extra}"
}
targets=(store "${bins[@]}")
for phase in fresh written rw; do
  if [ "$phase" = written ]; then
    pg_up "$w/data/d"
    echo "read-write mix on the data directory directly: $(bench "") tps"
    pg_down
  fi
  for r in $(seq 1 "$rounds"); do
    # Odd rounds in the list's order, even rounds reversed.
    order=("${targets[@]}")
    if [ $((r % 2)) = 0 ]; then
      order=(); for ((k = ${#targets[@]} - 1; k >= 0; k--)); do order+=("${targets[k]}"); done
    fi
    for t in "${order[@]}"; do run "$t" "$phase" "$r"; done
  done
done
