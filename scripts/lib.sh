# Shell helpers the benchmark scripts share: source it after setting `me` (the script's name for
# its messages) and `root` (the checkout).
#
#   log MSG / die MSG            a line on stderr named by $me (die exits 1); with $log_file set,
#                                log's line is "== [HH:MM:SS] MSG", appended to that file too
#   to_bytes SIZE                256MiB, 1GiB, 512M -> bytes (dies naming SIZE otherwise)
#   cgroup_make CG BYTES         a cgroup-v1 memory cgroup at CG limited to BYTES
#   in_cgroup CG CMD...          runs CMD inside CG
#   cgroup_remove CG             moves what is left in CG out, then removes it
#   replay_cgroup PID            the memory cgroup `ccfs replay` (PID) makes for raw_tier = kernel
#   drop_caches STORE            the kernel's caches and the store server's (stores.sh evict)
#   ccfs_stat MNT KEY            one top-level key of MNT/.ccfs/stats.json
#   ccfs_unmount MNT             unmounts a ccfs mount and waits for its daemon to exit
#   bench_workspace NAME         $work, $mnt, $cg, $up_store, and their removal at exit
#   store_up / stores_down       stores up under state directories of their own, and down again
#   probe_cleanup                the EXIT trap of a probe: unmounts $mnt, waits for $dp, removes
#                                $cg and $w
#   ccfs_memory_for BYTES        ccfs's `memory` in a cgroup of BYTES shared with its readers
#   equal_ram_checks MEMORY      root, the cgroup v1 memory controller and a built ccfs, or dies;
#                                sets $ccfs, $memory_bytes and $ccfs_memory for MEMORY
#   fio_randread DIR DIST JOBS SECONDS OUT [CG]   fio's QD1 8 KiB random reads of DIR's files
#   fio_line OUT TARGET DATA DIST JOBS ROUND R0 M0 R1 M1   one JSON line of such a run
#   ccfs_reads_misses MNT        "READS MISSES" of a ccfs mount now

log() {
  if [ -n "${log_file:-}" ]; then
    printf '== [%s] %s\n' "$(date +%T)" "$*" | tee -a "$log_file" >&2
  else
    echo "$me: $*" >&2
  fi
}
die() { echo "$me: $*" >&2; exit 1; }

to_bytes() {
  local v=${1%B}
  case $v in *i) numfmt --from=iec-i "$v" ;; *) numfmt --from=iec "$v" ;; esac 2>/dev/null ||
    die "$1: not a size"
}

# cpu_snapshot: "BUSY CCFS STORE", CPU seconds so far: the machine's busy time (/proc/stat, all but
# idle and iowait), and user + system of the processes named ccfs (or ccfs-NAME, ccfs.NAME: a
# copy of another build, such as walk_bench's --base-bin) and of the stores' clients and servers
# (glusterfs, glusterfsd, sshfs, sshd, sftp-server). The difference of two snapshots is what a phase
# cost, a process that exited in between aside.
cpu_snapshot() {
  { head -1 /proc/stat; cat /proc/[0-9]*/stat 2>/dev/null; } | awk '
    $1 == "cpu" { busy = ($2 + $3 + $4 + $7 + $8 + $9) / 100; next }
    $2 ~ /^\(ccfs([-.][^)]*)?\)$/ { c += ($14 + $15) / 100 }
    $2 ~ /^\((glusterfs|glusterfsd|sshfs|sshd|sftp-server)\)$/ { s += ($14 + $15) / 100 }
    END { printf "%.2f %.2f %.2f\n", busy, c, s }'
}

cgroup_make() {
  mkdir -p "$1"
  echo "$2" >"$1/memory.limit_in_bytes"
}
in_cgroup() { sh -c 'echo $$ >"$0/cgroup.procs"; exec "$@"' "$@"; }
cgroup_remove() {
  [ -d "$1" ] || return 0
  local p
  while read -r p; do echo "$p" >/sys/fs/cgroup/memory/cgroup.procs 2>/dev/null; done <"$1/cgroup.procs"
  rmdir "$1"
}
replay_cgroup() { echo "/sys/fs/cgroup/memory/ccfs-replay-$1"; }

drop_caches() {
  sync
  "$root/scripts/stores.sh" evict "$1" >/dev/null 2>&1 || true
  echo 3 >/proc/sys/vm/drop_caches
}

ccfs_stat() {
  python3 -c "import json,sys; print(json.load(open(sys.argv[1] + '/.ccfs/stats.json')).get(sys.argv[2], 0))" "$1" "$2"
}

ccfs_unmount() {
  local pid
  pid=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1] + '/.ccfs/stats.json'))['daemon']['pid'])" "$1" 2>/dev/null || echo 0)
  fusermount3 -u "$1" || fusermount3 -uz "$1"
  while [ "$pid" != 0 ] && kill -0 "$pid" 2>/dev/null; do sleep 0.1; done
}

# bench_workspace NAME: work=/var/tmp/ccfs-NAME (made), mnt=$work/mnt, cg (a memory cgroup path
# named for NAME and this shell), up_store=""; on exit the ccfs mount at $mnt, the cgroup, the
# store named by $up_store (scripts/stores.sh, its default state) and those store_up brought up go.
bench_workspace() {
  work=/var/tmp/ccfs-$1
  mnt=$work/mnt
  cg=/sys/fs/cgroup/memory/ccfs-$1-$$
  up_store=""
  up_stores=()
  mkdir -p "$work"
  trap bench_cleanup EXIT
  # A signal with no trap would end the shell without its EXIT trap, leaving the mount, the
  # cgroup and the stores behind.
  trap 'exit 130' INT TERM
}
# store_up STATE_DIR KIND DIR [OPTIONS...]: scripts/stores.sh up with a state directory of its own
# (so that one KIND can be up twice: a second mount of the same store); stores_down undoes them all.
store_up() {
  local state=$1 kind=$2
  shift 2
  STORES_STATE_DIR=$state "$root/scripts/stores.sh" up "$kind" "$@" >/dev/null
  up_stores+=("$state $kind")
}
stores_down() {
  local i
  for ((i = ${#up_stores[@]} - 1; i >= 0; i--)); do
    set -- ${up_stores[$i]}
    STORES_STATE_DIR=$1 "$root/scripts/stores.sh" down "$2" >/dev/null 2>&1
  done
  up_stores=()
}
# probe_cleanup: the EXIT trap of a probe that mounts at $mnt from a daemon it started ($dp: its
# pid, or empty), in memory cgroup $cg, with its files under $w: unmounts, waits for the daemon,
# removes the cgroup and the files.
probe_cleanup() {
  set +e
  grep -q " $mnt fuse" /proc/mounts && fusermount3 -u "$mnt"
  [ -n "$dp" ] && wait "$dp"
  cgroup_remove "$cg"
  rm -rf "$w"
}
bench_cleanup() {
  set +e
  if grep -q " $mnt fuse.ccfs " /proc/mounts; then fusermount3 -u "$mnt" || fusermount3 -uz "$mnt"; fi
  cgroup_remove "$cg"
  [ -n "$up_store" ] && "$root/scripts/stores.sh" down "$up_store" >/dev/null 2>&1
  stores_down
}

# ccfs's memory in a cgroup of BYTES beside its readers: 85% of it less 32 MiB, the room of the
# daemon's own memory (walk_bench.sh says what grows there).
ccfs_memory_for() { echo "$(( ($1 >> 20) * 85 / 100 - 32 ))MiB"; }

# equal_ram_checks MEMORY: what a benchmark at equal RAM needs before it starts (root, the cgroup
# v1 memory controller, a built ccfs), or dies naming what is missing; then ccfs (the binary:
# build/ccfs, or $CCFS_BIN, e.g. another commit's build for a same-script comparison),
# memory_bytes (MEMORY in bytes) and ccfs_memory (ccfs's `memory` in a cgroup of MEMORY).
equal_ram_checks() {
  [ "$(id -u)" -eq 0 ] || die "needs root (stores, memory cgroups, drop_caches)"
  [ -f /sys/fs/cgroup/memory/memory.limit_in_bytes ] ||
    die "needs the cgroup v1 memory controller at /sys/fs/cgroup/memory"
  ccfs=${CCFS_BIN:-$root/build/ccfs}
  [ -x "$ccfs" ] || die "build ccfs first (cmake --build build), or set CCFS_BIN to a binary"
  memory_bytes=$(to_bytes "$1")
  ccfs_memory=$(ccfs_memory_for "$memory_bytes")
}

# fio_randread DIR DIST JOBS SECONDS OUT [CG]: fio over every file of DIR (an outside client beside
# `ccfs replay`): QD1 8 KiB psync random reads, DIST pareto (pareto:0.2) or uniform, JOBS jobs,
# SECONDS long, its JSON written to OUT; inside memory cgroup CG when given. --norandommap: without
# it fio reads every block once, in a random order, before it reads any again, and a uniform
# reader then hits nothing until the files were read whole.
fio_randread() {
  local law=random files pre=()
  [ "$2" = pareto ] && law=pareto:0.2
  [ -n "${6:-}" ] && pre=(in_cgroup "$6")
  files=$(find "$1" -path "$1/.ccfs" -prune -o -type f -print | sort | sed 's/:/\\:/g' | paste -sd: -)
  "${pre[@]}" fio --name=r --filename="$files" --rw=randread --bs=8k --ioengine=psync --iodepth=1 \
    --numjobs="$3" --group_reporting --invalidate=0 --random_distribution="$law" --norandommap \
    --file_service_type=random --time_based --runtime="$4" --output-format=json --output="$5" \
    >/dev/null
}

# fio_line OUT TARGET DATA DIST JOBS ROUND R0 M0 R1 M1: the JSON line bench/fio_report.py reads,
# from fio's JSON at OUT and the daemon's reads and misses before (R0 M0) and after (R1 M1).
fio_line() {
  python3 - "$@" <<'PY'
import json, sys
run, target, data, dist, jobs, rnd = sys.argv[1:7]
r0, m0, r1, m1 = map(int, sys.argv[7:11])
read = json.load(open(run))["jobs"][0]["read"]
print(json.dumps({"target": target, "data": data, "dist": dist, "jobs": int(jobs),
                  "round": int(rnd), "mean_us": read["clat_ns"]["mean"] / 1e3,
                  "iops": read["iops"], "fio_reads": read["total_ios"], "reads": r1 - r0,
                  "misses": m1 - m0}))
PY
}

ccfs_reads_misses() {
  python3 -c "import json, sys; d = json.load(open(sys.argv[1] + '/.ccfs/stats.json')); print(d['reads'], d['misses'])" "$1"
}
