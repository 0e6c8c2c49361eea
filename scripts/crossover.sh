#!/usr/bin/env bash
# Where a compressed cache pays: the crossover curves, in one command.
#
#   scripts/crossover.sh [--quick] [RESULTS_DIR]
#
# µs per buffer of the Linux page cache alone and of ccfs, at equal RAM, against the backing
# store's read latency and against the data set's size relative to memory, on Pareto 80/20 and
# uniform traces (`ccfs replay`, one reader, 8 KiB pages, the `ccfs mkdata` default mix):
#   - stores (scripts/stores.sh): local (the disk), sshfs (a loopback file server), gluster (a
#     single-node GlusterFS volume): real points; between them, delay (bench/delay_fs, an EMULATED
#     store that waits --delay-us before every read) at each of CROSS_DELAYS: the latency sweep.
#     A store's read cost, the x axis, is measured at the start and at the end of every round: the
#     median of 8 KiB O_DIRECT reads at random pages of its mount (tests/stores/page_reader.py).
#   - data sets of CROSS_RATIOS times CROSS_MEMORY (1.5x, 2x, 4x, 8x).
#   - systems: the page cache alone, on the SAME store (a second mount of it made with
#     `stores.sh up KIND DIR --page-cache`, whose pages the kernel caches), the replaying reader in
#     a memory cgroup of CROSS_MEMORY; ccfs over the store's default mount (every read reaches the
#     store), memory=CROSS_MEMORY, for each raw tier (daemon: the daemon's memory is all it holds;
#     kernel: the kernel's pages and the daemon together in one memory cgroup of CROSS_MEMORY, made
#     by `ccfs replay`, kernel_evict=false), at C = 0 and at each C of CROSS_CS with each codec of
#     CROSS_CODECS. The report takes each tier's and each codec's best C, and ccfs's best
#     configuration, per point.
#   - interleaved rounds (the machine is shared): at every store, each round visits every data
#     set, trace and configuration once; the report takes medians over rounds, and ratios against
#     the page cache of the same round.
#   - warm-up before every measured replay: max(CROSS_WARMUP_FACTOR x the data set's pages,
#     CROSS_WARMUP_MEMORY x memory's pages) reads of the same trace, so that every cache is full
#     (under Pareto a data set 2x memory needs ~3x its pages of reads for that, one 8x memory
#     ~0.5x).
# So that both sides pay the same store for a miss: sshfs's server reads its files through its own
# page cache for both mounts (a file server whose RAM holds the data set), and so does GlusterFS's
# brick (the volume is made with --remote-dio, so the client does not forward O_DIRECT; otherwise
# ccfs's O_DIRECT misses would reach the brick's disk and the page cache's buffered ones the
# server's RAM); the servers' caches are warmed by one read of every file before the first round.
# local and delay read the disk (delay_fs reads its source with O_DIRECT).
#
# Writes RESULTS_DIR (default results/crossover-DATE): crossover.jsonl (every replay's JSON line,
# tagged with store, emulated, delay_us, size_ratio, round and configuration), store-reads.jsonl,
# failures.jsonl (runs that failed, e.g. a daemon killed by its cgroup's OOM killer), fio.jsonl and
# fio.md (CROSS_FIO_SECONDS), and from
# bench/crossover_report.py: crossover.csv (one row per store x size ratio x trace x
# configuration: store, emulated, delay_us, store_read_us, size_ratio, dist, system, raw_tier,
# codec, C, hit_ratio, us_per_buffer, p50, p99, ratio_vs_pagecache, model_us_per_buffer, rounds,
# best), crossover-points.csv (the crossover latency per size ratio and trace, measured and as the
# model puts it), crossover.md (the sentences "ccfs is faster than the page cache at equal RAM
# when a page read costs more than X µs", one table per size ratio and trace), and PNGs:
# crossover-latency.png (µs per buffer vs store read latency, log x, per size ratio and trace,
# crossover marked), crossover-ratio.png (ccfs / page cache vs latency) and crossover-size.png
# (µs per buffer vs size ratio, per store). A grid run in pieces (one CROSS_STORES each, same
# CROSS_MEMORY) is reported together with: bench/crossover_report.py OUT DIR1 DIR2 ...
#
# --quick: the delay store only, at 2 latencies (0, 800 µs), data 2x and 8x of 32 MiB (64 + 256
# MiB), pareto and uniform, C = 0 and C = 50 (lz4, zstd), both raw tiers, 1 round, 2000 measured
# reads, warm-up 6x memory's pages: 8 minutes (480 s) on the 2-vCPU development VM at load 5-9
# (CROSS_STORES=sshfs --quick: 3.5 minutes; with fio beside each replay, 4 minutes on a quieter VM). It validates the whole pipeline; its figures are one
# noisy round. The full grid (the defaults below) was not run there: scaled from the quick run's
# measured cost per read at each latency and data set, it takes about 15 hours on that machine
# (the delay sweep ~13 h, 5 h of it at 1600 µs; local, sshfs and gluster 0.5-1 h each). Run it in
# pieces (one CROSS_STORES, or a few CROSS_DELAYS, each into its own directory) and report them
# together; any knob narrows it: e.g. CROSS_STORES=sshfs CROSS_RATIOS=8 CROSS_DISTS=pareto.
#
# Knobs (environment; --quick changes the defaults marked q):
#   CROSS_STORES (local sshfs gluster delay; q: delay)   CROSS_DELAYS (0 50 100 200 400 800 1600;
#   q: 0 800)   CROSS_RATIOS (1.5 2 4 8; q: 2 8)   CROSS_DISTS (pareto uniform)
#   CROSS_TIERS (daemon kernel)   CROSS_CODECS (lz4 zstd)   CROSS_CS (50 75; q: 50)
#   CROSS_MEMORY (64MiB; q: 32MiB)   CROSS_ROUNDS (3; q: 1)   CROSS_OPS (20000 measured reads per
#   replay; q: 2000)   CROSS_WARMUP_FACTOR (1; q: 0.5)   CROSS_WARMUP_MEMORY (8; q: 6)
#   CROSS_READS (300 reads per store latency probe; q: 200)
#   CROSS_FIO_SECONDS (10; q: 3; 0: none): beside each replay, fio (lib.sh fio_randread, QD1 8 KiB
#   random reads of the data set's files, the same law, CROSS_FIO_JOBS jobs: 1) on the page
#   cache's mount in a memory cgroup of CROSS_MEMORY and on a fresh ccfs mount of the same
#   configuration (kernel mode: the daemon started in such a cgroup, fio in it too; a C the
#   mount then refuses, its tiers and own memory not fitting, is skipped), after
#   CROSS_FIO_WARM (5; q: 2) seconds unmeasured: fio.jsonl and fio.md (bench/fio_report.py)
#   CROSS_MIX (empty: the mkdata default mix; e.g. binary=100 for data that compresses ~2x)
#   CROSS_TRANSPORTS (dev: every ccfs configuration on /dev/fuse; "dev uring" runs each one on
#   both; uring switches the kernel's enable_uring on for the run and back as it was afterwards)
#   CROSS_DATA_DIR (/var/tmp/ccfs-crossover-data: the data sets, made once and kept; a real disk)
#   CROSS_SKIP_BUILD=1 (use build-perf/ as it is).
# Why C tops out at 75 and memory starts at 32 MiB: in raw_tier=kernel the daemon shares the cgroup
# of `memory` with the kernel's pages, and its mapped code and libraries (~10 MB) and what it
# allocates beyond its tiers come on top of its compressed tier. At 16 MiB and C = 80 the cgroup's
# OOM killer killed the daemon (anon 18.5 MB + file 9.6 MB; failures.jsonl records such runs); at
# 64 MiB and C = 80 the same sum leaves the kernel next to no pages.
# Needs root (sshd, GlusterFS, memory cgroups; installs openssh-server, sshfs, glusterfs-server and
# glusterfs-client if missing). Nothing is left behind, also on failure or interrupt: every store
# is brought down (`stores.sh down`), every ccfs mount unmounted, every daemon and replay stopped
# and their memory cgroups removed.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
me=crossover.sh
source scripts/lib.sh
usage() { sed -n '2,/^set -euo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; exit "${1:-0}"; }
quick=0
out=""
while [ $# -gt 0 ]; do
  case $1 in
    --quick) quick=1 ;;
    -h | --help) usage 0 ;;
    -*) echo "crossover.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
    *) [ -z "$out" ] || { echo "crossover.sh: one RESULTS_DIR only" >&2; exit 2; }; out=$1 ;;
  esac
  shift
done
q() { if [ $quick = 1 ]; then echo "$2"; else echo "$1"; fi; }  # q FULL QUICK
read -r -a stores <<<"${CROSS_STORES:-$(q "local sshfs gluster delay" delay)}"
read -r -a delays <<<"${CROSS_DELAYS:-$(q "0 50 100 200 400 800 1600" "0 800")}"
read -r -a ratios <<<"${CROSS_RATIOS:-$(q "1.5 2 4 8" "2 8")}"
read -r -a dists <<<"${CROSS_DISTS:-pareto uniform}"
read -r -a tiers <<<"${CROSS_TIERS:-daemon kernel}"
read -r -a codecs <<<"${CROSS_CODECS:-lz4 zstd}"
read -r -a cs <<<"${CROSS_CS:-$(q "50 75" 50)}"
read -r -a transports <<<"${CROSS_TRANSPORTS:-dev}"
memory=${CROSS_MEMORY:-$(q 64MiB 32MiB)}
mix=${CROSS_MIX:-}
rounds=${CROSS_ROUNDS:-$(q 3 1)}
ops=${CROSS_OPS:-$(q 20000 2000)}
warmup_factor=${CROSS_WARMUP_FACTOR:-$(q 1 0.5)}
warmup_memory=${CROSS_WARMUP_MEMORY:-$(q 8 6)}
probe_reads=${CROSS_READS:-$(q 300 200)}
fio_secs=${CROSS_FIO_SECONDS:-$(q 10 3)}
fio_warm=${CROSS_FIO_WARM:-$(q 5 2)}
read -r -a fio_jobs <<<"${CROSS_FIO_JOBS:-1}"
[ "$fio_secs" = 0 ] || command -v fio >/dev/null ||
  die "CROSS_FIO_SECONDS=$fio_secs needs fio (scripts/setup.sh installs it; 0 runs without)"
data_root=${CROSS_DATA_DIR:-/var/tmp/ccfs-crossover-data}
out=${out:-$root/results/crossover-$(date +%Y%m%d-%H%M%S)}
build=$root/build-perf
py=/usr/bin/python3
[ -x "$py" ] || py=python3

for s in "${stores[@]}"; do
  case $s in local | sshfs | gluster | delay) ;; *) die "CROSS_STORES: unknown store '$s'" ;; esac
done
for t in "${tiers[@]}"; do
  case $t in daemon | kernel) ;; *) die "CROSS_TIERS: unknown raw tier '$t'" ;; esac
done
for c in "${codecs[@]}"; do
  case $c in lz4 | zstd) ;; *) die "CROSS_CODECS: unknown codec '$c'" ;; esac
done
uring_switch=/sys/module/fuse/parameters/enable_uring
uring_was=""
for t in "${transports[@]}"; do
  case $t in
    dev) ;;
    uring)
      [ -w "$uring_switch" ] ||
        die "CROSS_TRANSPORTS: uring needs FUSE over io_uring ($uring_switch is missing or not writable)" ;;
    *) die "CROSS_TRANSPORTS: unknown transport '$t' (dev, uring)" ;;
  esac
done
for c in "${cs[@]}"; do
  [[ $c =~ ^[0-9]+$ ]] && [ "$c" -ge 1 ] && [ "$c" -le 95 ] ||
    die "CROSS_CS: '$c' is not a percentage 1..95 (C = 0 is always run)"
done
for d in "${delays[@]}"; do [[ $d =~ ^[0-9]+$ ]] || die "CROSS_DELAYS: '$d' is not whole µs"; done
for r in "${ratios[@]}"; do
  [[ $r =~ ^[0-9]+(\.[0-9]+)?$ ]] || die "CROSS_RATIOS: '$r' is not a number"
done
[[ $memory =~ ^[0-9]+MiB$ ]] || die "CROSS_MEMORY=$memory: want a whole number of MiB (e.g. 32MiB)"
for n in "$rounds" "$ops" "$probe_reads"; do
  [[ $n =~ ^[0-9]+$ ]] && [ "$n" -ge 1 ] ||
    die "CROSS_ROUNDS, CROSS_OPS and CROSS_READS want whole numbers >= 1"
done
for n in "$warmup_factor" "$warmup_memory"; do
  [[ $n =~ ^[0-9]+(\.[0-9]+)?$ ]] ||
    die "CROSS_WARMUP_FACTOR, CROSS_WARMUP_MEMORY: '$n' is not a number"
done
[ "$(id -u)" -eq 0 ] || die "needs root (stores, memory cgroups)"
[ -f /sys/fs/cgroup/memory/memory.limit_in_bytes ] ||
  die "needs the cgroup v1 memory controller at /sys/fs/cgroup/memory (equal RAM is held there)"

mkdir -p "$out" "$data_root"
out=$(cd "$out" && pwd)
log_file=$out/crossover.log
t_start=$(date +%s)

# ---- cleanup: only what this script started ------------------------------------------------------
# Mounts, stores and state live under one work directory (removed at exit); the stores get a state
# directory and a GlusterFS volume name of their own, so a store someone else has up is not touched.
work=$(mktemp -d /var/tmp/ccfs-crossover.XXXXXX)
fio_cg=/sys/fs/cgroup/memory/ccfs-crossover-fio-$$
mnt=$work/mnt
mkdir -p "$mnt"
up_stores=()   # "STATE_DIR KIND" of every store up, in order
# The daemon and the replay running now, if any (a replay's cgroup is named after its pid). Only
# these: a pid kept after its process was reaped may belong to someone else's process hours later.
daemon_pid=""
replay_pid=""
# A replay's cgroup (ccfs-replay-PID) is gone when it exits cleanly; one killed (by us, or by the
# OOM killer in its own cgroup) leaves it, with the daemon inside in kernel mode: move what is left
# out, then remove it.
remove_replay_cgroup() {
  cgroup_remove "$(replay_cgroup "$1")" || echo "crossover.sh: could not remove $(replay_cgroup "$1")" >&2
}
cleanup() {
  set +e
  local p i entry pids=($replay_pid $daemon_pid)
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
  # (A daemon stopped above has usually unmounted itself already.)
  if grep -q " $mnt fuse" /proc/mounts; then
    fusermount3 -u "$mnt" 2>/dev/null || fusermount3 -u -z "$mnt" 2>/dev/null
    grep -q " $mnt fuse" /proc/mounts && echo "crossover.sh: $mnt is still mounted" >&2
  fi
  for p in "${pids[@]}"; do
    for i in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$p" 2>/dev/null
  done
  for p in "${pids[@]}"; do remove_replay_cgroup "$p"; done
  cgroup_remove "$fio_cg" 2>/dev/null
  for ((i = ${#up_stores[@]} - 1; i >= 0; i--)); do
    entry=${up_stores[$i]}
    STORES_STATE_DIR=${entry% *} "$root/scripts/stores.sh" down "${entry#* }" >/dev/null
  done
  stop_stray_bricks
  [ -z "$uring_was" ] || echo "$uring_was" >"$uring_switch"
  rm -rf "$work"
}
# The volume is made in whatever glusterd runs; if that is someone else's and it stops during the
# run, `down` can no longer find the brick of this run's volume: stop it by its pid (its brick
# directory is under this run's work directory).
stop_stray_bricks() {
  local p
  for p in $(pgrep -x glusterfsd || true); do
    if tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null | grep -qF -- "--brick-name $work/"; then
      echo "crossover.sh: stopping brick $p of this run's volume (its glusterd is gone)" >&2
      kill "$p" 2>/dev/null || true
    fi
  done
}
trap cleanup EXIT
trap 'exit 130' INT TERM
if [[ " ${transports[*]} " == *" uring "* ]]; then
  uring_was=$(cat "$uring_switch")
  echo Y >"$uring_switch"
fi

# ---- build, data sets ----------------------------------------------------------------------------
if [ "${CROSS_SKIP_BUILD:-0}" != 1 ]; then
  log "packages (scripts/setup.sh), then ccfs and delay_fs (Release) in $build"
  { scripts/setup.sh && cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release &&
    cmake --build "$build" -j"$(nproc)" --target ccfs delay_fs; } >"$out/build.log" 2>&1 ||
    die "the build failed: $out/build.log"
fi
ccfs=$build/ccfs
for b in ccfs delay_fs; do
  [ -x "$build/$b" ] || die "$build/$b missing (build it, or unset CROSS_SKIP_BUILD)"
done
export DELAY_FS=$build/delay_fs

memory_mib=${memory%MiB}
declare -A data_of warmup_of  # size ratio -> data set directory name, warm-up reads
for r in "${ratios[@]}"; do
  kib=$(awk -v m="$memory_mib" -v r="$r" 'BEGIN { printf "%d", m * 1024 * r }')
  if [ $((kib % 1024)) = 0 ]; then size=$((kib / 1024))MiB; else size=${kib}KiB; fi
  name=mix-$size
  mix_args=()
  if [ -n "$mix" ]; then
    name=${mix//[=,]/-}-$size
    mix_args=(--mix "$mix")
  fi
  if [ ! -f "$data_root/.made-$name" ] || [ ! -f "$data_root/mkdata-$name.txt" ]; then
    log "mkdata $size -> $data_root/$name (data ${r}x memory)"
    "$ccfs" mkdata "$data_root/$name" --size "$size" "${mix_args[@]}" --force \
      >"$data_root/mkdata-$name.txt"
    touch "$data_root/.made-$name"
  fi
  cp "$data_root/mkdata-$name.txt" "$out/"
  data_of[$r]=$name
  # Warm-up reads: enough for every cache to fill before measuring. Under Pareto a small data set
  # needs many reads to touch more pages than memory holds (2x: ~3x its pages), a large one few.
  warmup_of[$r]=$(awk -v f="$warmup_factor" -v b="$(du -sb "$data_root/$name" | cut -f1)" \
                      -v m="$warmup_memory" -v mem="$memory_mib" \
                      'BEGIN { w = f * b / 8192; if (m * mem * 128 > w) w = m * mem * 128
                               printf "%d", w }')
done
# The probe file for a store's read latency: the largest file of the data sets.
probe=$(for r in "${ratios[@]}"; do
          (cd "$data_root" && find "${data_of[$r]}" -type f -printf '%s %p\n')
        done | sort -n | tail -1 | cut -d' ' -f2)

cat >"$out/machine.json" <<EOF
{"cpus": $(nproc), "cpu": "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')",
 "mem_total_kib": $(awk '/MemTotal/{print $2}' /proc/meminfo), "kernel": "$(uname -r)",
 "libfuse": "$(pkg-config --modversion fuse3)",
 "disk": "$(df --output=source "$data_root" | tail -1)",
 "memory": "$memory", "ops": $ops, "warmup_factor": $warmup_factor,
 "warmup_memory": $warmup_memory, "rounds": $rounds,
 "cs": "${cs[*]}", "tiers": "${tiers[*]}", "codecs": "${codecs[*]}",
 "transports": "${transports[*]}",
 "mix": "${mix:-default}", "quick": $quick, "loadavg_start": "$(cut -d' ' -f1-3 /proc/loadavg)"}
EOF
: >"$out/crossover.jsonl"
: >"$out/store-reads.jsonl"
: >"$out/failures.jsonl"
: >"$out/fio.jsonl"

# ---- stores --------------------------------------------------------------------------------------
# Each store twice: at $work/store (every read reaches the store: ccfs's backing directory and the
# latency probe) and at $work/store-pc (--page-cache: the page cache baseline), from two state
# directories. local is one plain directory for both.
stores_up() {  # KIND [OPTIONS...]: brings up both mounts of KIND; sets store_dir, pc_dir
  local kind=$1 gluster_volume
  shift
  store_dir=$work/store pc_dir=$work/store-pc
  case $kind in
    local)
      store_dir=$data_root pc_dir=$data_root
      STORES_STATE_DIR=$work/state "$root/scripts/stores.sh" up local "$data_root" >/dev/null
      up_stores+=("$work/state local")
      ;;
    sshfs | delay)
      STORES_STATE_DIR=$work/state "$root/scripts/stores.sh" up "$kind" "$store_dir" \
        --source "$data_root" "$@" >/dev/null
      up_stores+=("$work/state $kind")
      STORES_STATE_DIR=$work/state-pc "$root/scripts/stores.sh" up "$kind" "$pc_dir" \
        --source "$data_root" --page-cache "$@" >/dev/null
      up_stores+=("$work/state-pc $kind")
      ;;
    gluster)
      STORES_STATE_DIR=$work/state STORES_GLUSTER_NAME=ccfs-crossover \
        "$root/scripts/stores.sh" up gluster "$store_dir" --remote-dio >/dev/null
      up_stores+=("$work/state gluster")
      # The same volume, mounted again by a client that lets the kernel cache its files.
      gluster_volume=$(. "$work/state/gluster/info" && echo "$volume")
      STORES_STATE_DIR=$work/state-pc STORES_GLUSTER_VOLUME=$gluster_volume \
        "$root/scripts/stores.sh" up gluster "$pc_dir" --page-cache >/dev/null
      up_stores+=("$work/state-pc gluster")
      local r
      for r in "${ratios[@]}"; do
        log "gluster: copying ${data_of[$r]} into the volume"
        cp -a "$data_root/${data_of[$r]}" "$store_dir/"
      done
      sync  # the brick's dirty pages on disk before any read is timed
      
      ;;
  esac
}
stores_down() {
  local i entry
  for ((i = ${#up_stores[@]} - 1; i >= 0; i--)); do
    entry=${up_stores[$i]}
    STORES_STATE_DIR=${entry% *} "$root/scripts/stores.sh" down "${entry#* }" >/dev/null
  done
  up_stores=()
  stop_stray_bricks
}

# ---- one configuration ---------------------------------------------------------------------------
mount_in=()  # a command prefix the daemon runs under (fio's in_cgroup CGROUP)
mount_ccfs() {  # $1 = backing directory, $2 = -o options, $3 = soft: return 1 rather than die
  "${mount_in[@]}" "$ccfs" mount -f -o "memory=$memory,$2" "$1" "$mnt" 2>>"$out/daemon.log" &
  daemon_pid=$!
  for _ in $(seq 400); do
    grep -q " $mnt fuse" /proc/mounts && return 0
    kill -0 "$daemon_pid" 2>/dev/null || break
    sleep 0.05
  done
  if [ "${3:-}" = soft ]; then
    wait "$daemon_pid" || true
    daemon_pid=""
    return 1
  fi
  die "mount of $1 failed (see $out/daemon.log)"
}
umount_ccfs() {  # sets daemon_rc
  "$ccfs" umount "$mnt" >/dev/null 2>&1 || fusermount3 -u "$mnt" || fusermount3 -u -z "$mnt"
  daemon_rc=0
  wait "$daemon_pid" || daemon_rc=$?
  [ $daemon_rc = 0 ] || log "warning: the daemon exited $daemon_rc$([ $daemon_rc != 137 ] ||
    echo " (SIGKILL: in raw_tier=kernel, most likely the memory cgroup's OOM killer; see dmesg)")"
  daemon_pid=""
}

# replay TAG TARGET [ARGS...]: one `ccfs replay --json` run; its line goes to crossover.jsonl with
# TAG (JSON members) in front. A failed run is logged, returns 1 and is left out of the medians
# (the caller records it in failures.jsonl; the report lists them).
replay() {
  local tag=$1 target=$2 t0
  shift 2
  t0=$(date +%s.%N)
  # In the background, so that a signal reaches the trap at once; its pid is kept for cleanup.
  local rc=0
  "$ccfs" replay "$target" --dist "$dist" --ops "$ops" --warmup "${warmup_of[$ratio]}" \
    --no-progress --json "$@" >"$work/replay.json" 2>>"$out/crossover.log" &
  replay_pid=$!
  wait "$replay_pid" || rc=$?
  [ $rc = 0 ] || remove_replay_cgroup "$replay_pid"
  replay_pid=""
  if [ $rc = 0 ] && grep -q '^{' "$work/replay.json"; then
    tag+=", \"wall_s\": $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')"
    grep '^{' "$work/replay.json" | sed "s/^{/{$tag, /" >>"$out/crossover.jsonl"
  else
    log "warning: replay failed: $tag"
    return 1
  fi
}

# fio_beside LABEL ROUND DIR [CFG]: fio on DIR, the page cache's mount (no CFG) or a fresh ccfs mount
# of DIR with CFG (tier:codec:C:transport), beside the replay of the same point (CROSS_FIO_SECONDS).
fio_beside() {
  [ "$fio_secs" != 0 ] || return 0
  local label=$1 round=$2 dir=$3 cfg=${4:-} target=pagecache jobs tier codec c transport on
  local before after cg
  for jobs in "${fio_jobs[@]}"; do
    before="0 0" after="0 0" cg=$fio_cg on=$dir
    cgroup_make "$fio_cg" "$(to_bytes "$memory")"
    if [ -n "$cfg" ]; then
      IFS=: read -r tier codec c transport <<<"$cfg"
      target=$cfg
      # Daemon mode caches nothing in the kernel (direct I/O): its daemon stays out of the cgroup.
      if [ "$tier" = kernel ]; then mount_in=(in_cgroup "$fio_cg"); else cg=""; fi
      if ! mount_ccfs "$dir" \
          "raw_tier=$tier,compressed_percent=$c,compressor=$codec,kernel_evict=false,transport=$transport" \
          soft; then
        # In kernel mode the mount's own check refuses tiers that, with the daemon's own memory,
        # would not fit the cgroup (the replay checks the daemon's real memory instead).
        mount_in=()
        log "warning: fio skipped: the mount of $cfg in a $memory cgroup was refused (daemon.log)"
        cgroup_remove "$fio_cg"
        continue
      fi
      mount_in=()
      on=$mnt
    else
      # The page cache's mount starts without the files' pages, as the replay's run does.
      find "$dir" -type f -exec dd if={} iflag=nocache count=0 status=none \;
    fi
    fio_randread "$on" "$dist" "$jobs" "$fio_warm" "$work/fio.json" "$cg" 2>>"$out/crossover.log" || true
    [ -z "$cfg" ] || before=$(ccfs_reads_misses "$mnt")
    if fio_randread "$on" "$dist" "$jobs" "$fio_secs" "$work/fio.json" "$cg" 2>>"$out/crossover.log"; then
      [ -z "$cfg" ] || after=$(ccfs_reads_misses "$mnt")
      fio_line "$work/fio.json" "$target" "$label ${ratio}x" "$dist" "$jobs" "$round" $before \
        $after >>"$out/fio.jsonl"
    else
      log "warning: fio failed: $label ${ratio}x $dist $target"
    fi
    [ -z "$cfg" ] || umount_ccfs
    cgroup_remove "$fio_cg"
  done
}

# probe_store LABEL TAG ROUND WHEN: the median of CROSS_READS 8 KiB O_DIRECT reads at random pages
# of the store's mount, at the start and at the end of each round (the report takes the median of
# all: the store's cost while the round ran).
probe_store() {
  local us seed=$(($3 * 2 + $([ "$4" = end ] && echo 1 || echo 0)))
  us=$("$py" "$root/tests/stores/page_reader.py" "$store_dir/$probe" direct "$probe_reads" "$seed")
  log "$1, round $3 ($4): an 8 KiB O_DIRECT read of the store: median $us µs"
  echo "{$2, \"round\": $3, \"when\": \"$4\", \"read_us\": $us, \"reads\": $probe_reads}" \
    >>"$out/store-reads.jsonl"
}

# One store point (a store up at one latency): its rounds. $1 = store name, $2 = delay µs or "".
store_point() {
  # ratio and dist are read by replay().
  local name=$1 delay_us=$2 emulated=false label=$1 round cfg tier codec c transport ratio dist
  [ "$name" = delay ] && emulated=true label="delay_fs ${delay_us} µs (EMULATED)"
  local base="\"store\": \"$name\", \"emulated\": $emulated, \"delay_us\": ${delay_us:-null}"
  # The configurations of ccfs: raw_tier:codec:C:transport.
  local cfgs=()
  for transport in "${transports[@]}"; do
    for tier in "${tiers[@]}"; do
      cfgs+=("$tier:lz4:0:$transport")
      for codec in "${codecs[@]}"; do
        for c in "${cs[@]}"; do cfgs+=("$tier:$codec:$c:$transport"); done
      done
    done
  done
  local t0
  t0=$(date +%s)
  for round in $(seq "$rounds"); do
    probe_store "$label" "$base" "$round" start
    for ratio in "${ratios[@]}"; do
      for dist in "${dists[@]}"; do
        local tag="$base, \"size_ratio\": $ratio, \"round\": $round"
        log "$label, round $round: data ${ratio}x memory, $dist: the page cache in a $memory cgroup"
        replay "$tag, \"system\": \"pagecache\"" "$pc_dir/${data_of[$ratio]}" --memory "$memory" ||
          echo "{$tag, \"dist\": \"$dist\", \"system\": \"pagecache\"}" >>"$out/failures.jsonl"
        fio_beside "$label" "$round" "$pc_dir/${data_of[$ratio]}"
        for cfg in "${cfgs[@]}"; do
          IFS=: read -r tier codec c transport <<<"$cfg"
          log "$label, round $round: data ${ratio}x memory, $dist: ccfs raw_tier=$tier," \
              "C=$c%$([ "$c" = 0 ] || echo ", $codec"), transport=$transport"
          mount_ccfs "$store_dir/${data_of[$ratio]}" \
            "raw_tier=$tier,compressed_percent=$c,compressor=$codec,kernel_evict=false,transport=$transport"
          local failed=0
          replay "$tag, \"system\": \"ccfs\", \"config\": \"$cfg\", \"transport\": \"$transport\"" \
            "$mnt" || failed=1
          umount_ccfs
          [ $failed = 0 ] ||
            echo "{$tag, \"dist\": \"$dist\", \"system\": \"ccfs\", \"config\": \"$cfg\"," \
                 "\"daemon_exit\": $daemon_rc}" >>"$out/failures.jsonl"
          fio_beside "$label" "$round" "$store_dir/${data_of[$ratio]}" "$cfg"
        done
      done
    done
    probe_store "$label" "$base" "$round" end
  done
  echo "{$base, \"seconds\": $(($(date +%s) - t0))}" >>"$out/store-times.jsonl"
  log "$label: done in $(($(date +%s) - t0)) s"
}

# The servers' page caches warm before the first round (sshfs, gluster): one read of every file.
warm_server() {
  local r
  for r in "${ratios[@]}"; do
    find "$store_dir/${data_of[$r]}" -type f -print0 | xargs -0 cat >/dev/null
  done
}

: >"$out/store-times.jsonl"
for kind in "${stores[@]}"; do
  if [ "$kind" = delay ]; then
    for d in "${delays[@]}"; do
      log "store: delay_fs at $d µs (EMULATED)"
      stores_up delay --delay-us "$d"
      store_point delay "$d"
      stores_down
    done
  else
    log "store: $kind"
    stores_up "$kind"
    [ "$kind" = local ] || warm_server
    store_point "$kind" ""
    stores_down
  fi
done

# ---- report --------------------------------------------------------------------------------------
t_end=$(date +%s)
echo "{\"seconds\": $((t_end - t_start)), \"loadavg_end\": \"$(cut -d' ' -f1-3 /proc/loadavg)\"}" \
  >"$out/elapsed.json"
log "report"
"$py" "$root/bench/crossover_report.py" "$out" | tee "$out/crossover.md"
[ ! -s "$out/fio.jsonl" ] || "$py" "$root/bench/fio_report.py" "$out/fio.jsonl" >"$out/fio.md"
log "done in $((t_end - t_start)) s: $out"
