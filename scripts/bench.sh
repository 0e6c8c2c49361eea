#!/usr/bin/env bash
# The benchmark suite, in one command (about 17 minutes on a 2-core VM):
#
#   scripts/bench.sh [RESULTS_DIR]
#
# Builds Release into build-perf/, generates (once, then reused) a `ccfs mkdata` data set of
# BENCH_DATA (512MiB) and one twice that size, and at one memory budget BENCH_MEMORY (64MiB, so the
# data set is 8x the memory) runs, on Pareto 80/20 and uniform traces:
#   - ccfs through the mount: a sweep of compressed_percent (lz4, then zstd), C = 0 included;
#   - the Linux page cache on the data set directly, in a memory cgroup of the same size;
#   - RocksDB's LRUCache + CompressedSecondaryCache against ccfs's engine, in-process, same trace
#     (bench/rocksdb_tiered), over the same C values;
#   - the physical floors: null-FUSE round trip and O_DIRECT pread (bench/fuse_rtt,
#     bench/engine_bench), memcpy and decompress of a page;
#   - compression throughput vs compress_threads (bench/compress_scale) and stalls at the highest
#     miss rate (uniform, in-process and through the mount);
#   - daemon resident memory vs the budget; scaling (data and memory doubled together) and the page
#     index lookup from 10^4 to 10^7 pages (bench/index_scale).
# Every figure is printed as a ratio against a baseline measured in this run, and written to
# RESULTS_DIR (default results/bench-DATE): figures.csv, summary.json, table.md, the raw JSON/CSV
# of each step, and PNG plots (µs per buffer and hit ratio vs C%, with page-cache and RocksDB
# lines). Nothing is left behind: mounts are unmounted, the daemons and cgroups it made are gone.
#
# And the two levels (raw_tier = kernel): the page cache alone, ccfs with raw pages in the
# daemon and ccfs with raw pages in the kernel's page cache, at C = 0 and at each codec's best C,
# interleaved rounds, equal RAM held by the kernel (the page cache alone in a memory cgroup of
# BENCH_MEMORY; the replaying reader and the daemon together in one of the same size), on the data
# set (8x memory) and on one of 2x memory, Pareto 80/20 and uniform, with the null-FUSE round trip
# of the same run: levels.jsonl, levels.md.
#
# Knobs (environment): BENCH_STEPS (all; or a comma list of floors, mount, pinned, inproc, onoff,
# compress, scale, levels, fio), BENCH_MEMORY (64MiB), BENCH_DATA (512MiB), BENCH_DATA_DIR
# (/var/tmp/ccfs-bench-data: must be a real disk, not tmpfs), BENCH_OPS (100000 measured page reads
# per mount run), BENCH_ENGINE_OPS (100000 per in-process run), BENCH_SWEEP (0:80:20),
# BENCH_SKIP_BUILD=1, BENCH_SKIP_SCALE=1, BENCH_SCALE_ROUNDS (3); for fio (step 2e): BENCH_FIO_C (75),
# BENCH_FIO_KERNEL_C (50), BENCH_FIO_SECONDS (20), BENCH_FIO_WARM (10).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
me=bench.sh
source scripts/lib.sh
memory=${BENCH_MEMORY:-64MiB}
data_size=${BENCH_DATA:-512MiB}
data_root=${BENCH_DATA_DIR:-/var/tmp/ccfs-bench-data}
ops=${BENCH_OPS:-100000}
engine_ops=${BENCH_ENGINE_OPS:-100000}
sweep=${BENCH_SWEEP:-0:80:20}
out=${1:-$root/results/bench-$(date +%Y%m%d-%H%M%S)}
build=$root/build-perf
py=/usr/bin/python3
[ -x "$py" ] || py=python3
mkdir -p "$out" "$data_root"
out=$(cd "$out" && pwd)
log_file=$out/bench.log
t_start=$(date +%s)
# step NAME: whether BENCH_STEPS asks for that step.
step() { [[ ${BENCH_STEPS:-all} == all || ,${BENCH_STEPS}, == *,$1,* ]]; }

# ---- cleanup: only what this script started ---------------------------------------------------
mounts=()
pids=()
cleanup() {
  set +e
  # The levels step turns FUSE over io_uring on; leave the switch as it was found.
  [ -n "${uring_was:-}" ] && echo "$uring_was" >/sys/module/fuse/parameters/enable_uring
  cgroup_remove "${fio_cg:-}" 2>/dev/null
  for m in "${mounts[@]}"; do
    if grep -q " $m fuse" /proc/mounts; then fusermount3 -u "$m" 2>/dev/null || fusermount3 -u -z "$m"; fi
  done
  for p in "${pids[@]}"; do
    if kill -0 "$p" 2>/dev/null; then kill "$p" 2>/dev/null; sleep 0.5; kill -9 "$p" 2>/dev/null; fi
    [ -d "$(replay_cgroup "$p")" ] && rmdir "$(replay_cgroup "$p")"
  done
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# A pid this script reaped is forgotten (with the memory cgroup a killed replay of that pid left):
# over hours of benchmarks the number can come back as someone else's process.
forget() {
  local q keep=()
  [ -d "$(replay_cgroup "$1")" ] && rmdir "$(replay_cgroup "$1")" 2>/dev/null
  for q in "${pids[@]}"; do [ "$q" = "$1" ] || keep+=("$q"); done
  pids=("${keep[@]}")
}

# Runs a command in the background, remembering its pid for cleanup while it runs; returns its
# status.
run() {
  "$@" &
  local p=$! rc=0
  pids+=("$p")
  wait "$p" || rc=$?
  forget "$p"
  return "$rc"
}

# ---- build ------------------------------------------------------------------------------------
if [ "${BENCH_SKIP_BUILD:-0}" != 1 ]; then
  scripts/setup.sh
  log "build (Release) in $build"
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release >"$out/cmake.log"
  targets=(ccfs engine_bench fuse_rtt null_fuse tiered_compare compress_scale index_scale)
  grep -q "^build rocksdb_tiered:" "$build/build.ninja" && targets+=(rocksdb_tiered)
  cmake --build "$build" -j"$(nproc)" --target "${targets[@]}" >>"$out/cmake.log"
fi
ccfs=$build/ccfs
for b in ccfs engine_bench fuse_rtt null_fuse tiered_compare compress_scale index_scale; do
  [ -x "$build/$b" ] || { echo "bench: $build/$b missing" >&2; exit 1; }
done
have_rocksdb=0
[ -x "$build/rocksdb_tiered" ] && have_rocksdb=1

# ---- data sets (kept between runs) --------------------------------------------------------------
make_data() {  # $1 = size -> prints the directory
  local dir=$data_root/mix-$1
  if [ ! -f "$data_root/.made-mix-$1" ]; then
    log "mkdata $1 -> $dir"
    "$ccfs" mkdata "$dir" --size "$1" --force >"$data_root/mkdata-$1.txt"
    touch "$data_root/.made-mix-$1"
  fi
  cp "$data_root/mkdata-$1.txt" "$out/" 2>/dev/null || true
  echo "$dir"
}
# Doubles a size given as NUMBER+UNIT.
double() { echo "$(( ${1%%[!0-9]*} * 2 ))${1##*[0-9]}"; }
data=$(make_data "$data_size")
data2_size=$(double "$data_size")
memory2=$(double "$memory")
if [ "${BENCH_SKIP_SCALE:-0}" != 1 ] && step scale; then data2=$(make_data "$data2_size"); fi
# Warm-up before each measured run: twice the data set in page reads, so that every configuration
# (a compressed tier that holds 2-3x its memory in pages, a cache just reconfigured from another
# split) is full and steady when measurement starts. BENCH_WARMUP_FACTOR changes the multiple.
pages_of() { echo $(( $(du -sb "$1" | cut -f1) / 8192 )); }
warmup=$(( ${BENCH_WARMUP_FACTOR:-2} * $(pages_of "$data") ))

cat >"$out/machine.json" <<EOF
{"cpus": $(nproc), "cpu": "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')",
 "mem_total_kib": $(awk '/MemTotal/{print $2}' /proc/meminfo), "kernel": "$(uname -r)",
 "libfuse": "$(pkg-config --modversion fuse3)", "rocksdb": "$(pkg-config --modversion rocksdb 2>/dev/null || echo none)",
 "disk": "$(df --output=source "$data_root" | tail -1)", "memory": "$memory", "data": "$data_size",
 "ops": $ops, "engine_ops": $engine_ops, "sweep": "$sweep"}
EOF

# ---- 1. physical floors and engine per-path costs -------------------------------------------------
if step floors; then
for codec in lz4 zstd; do
  log "engine_bench ($codec): raw/compressed hit, miss vs memcpy/decompress/pread"
  run "$build/engine_bench" --dir "$data_root" --size 64MiB --ops 20000 --compressor "$codec" \
    >"$out/engine_bench-$codec.txt" || true
done
log "fuse_rtt: null-FUSE floor vs ccfs raw hit, 1 and 2 readers"
run "$build/fuse_rtt" --dir "$data_root" --file-mib 32 --ops 20000 --seconds 2 --rounds 1 \
  --null-loops single,fixed:1,fixed:2 --ccfs-threads 1,2 >"$out/fuse_rtt.txt" || true
fi

# ---- 2. through the mount: sweeps, page cache, RSS ------------------------------------------------
mnt=$out/mnt
mkdir -p "$mnt"
daemon_pid=""
mount_in=()  # a command prefix the daemon runs under (the fio step's in_cgroup CGROUP)
mount_ccfs() {  # $1 = data dir, $2 = memory, $3 = -o extra
  "${mount_in[@]}" "$ccfs" mount -f -o "memory=$2,$3" "$1" "$mnt" 2>>"$out/daemon.log" &
  daemon_pid=$!
  pids+=("$daemon_pid")
  mounts+=("$mnt")
  for _ in $(seq 200); do
    grep -q " $mnt fuse" /proc/mounts && return 0
    kill -0 "$daemon_pid" 2>/dev/null || break
    sleep 0.05
  done
  echo "bench: mount failed (see $out/daemon.log)" >&2
  exit 1
}
umount_ccfs() {
  "$ccfs" umount "$mnt" >/dev/null 2>&1 || fusermount3 -u "$mnt" || fusermount3 -u -z "$mnt"
  wait "$daemon_pid" || echo "bench: daemon exited $?" >&2
  forget "$daemon_pid"
  daemon_pid=""
}
rss_kib() { awk "/^$1:/{print \$2}" "/proc/$daemon_pid/status"; }

# Best C > 0 per codec (lowest µs per buffer through the mount in the sweep): the compressed
# configuration the headline measures against C = 0.
best_c() {  # $1 = csv -> C
  "$py" - "$1" <<'PY'
import csv, sys
rows = [r for r in csv.DictReader(open(sys.argv[1]))
        if r["mode"] != "baseline" and r["compressed_percent"] not in ("", "0")]
print(min(rows, key=lambda r: float(r["us_per_buffer"]))["compressed_percent"] if rows else 0)
PY
}

best_pareto_lz4=${BENCH_BEST_LZ4:-40}
best_pareto_zstd=${BENCH_BEST_ZSTD:-60}
if step mount; then
mount_ccfs "$data" "$memory" "raw_tier=daemon,compressed_percent=0,compressor=lz4"
for dist in pareto uniform; do
  for codec in lz4 zstd; do
    "$ccfs" set "$mnt" "compressor=$codec" >/dev/null
    base_args=()
    # The page cache baseline once per trace, after the lz4 sweep, at the same memory.
    [ "$codec" = lz4 ] && base_args=(--baseline "$data" --memory "$memory")
    log "mount sweep: $dist, $codec, C=$sweep${base_args:+, then the page cache in a $memory cgroup}"
    run "$ccfs" replay "$mnt" --dist "$dist" --ops "$ops" --warmup "$warmup" --sweep "compressed_percent=$sweep" \
      "${base_args[@]}" --no-progress --json --sweep-out "$out/mount-$dist-$codec" \
      --plot-script /dev/null >"$out/mount-$dist-$codec.jsonl" 2>>"$out/bench.log" || true
  done
done

best_pareto_lz4=$(best_c "$out/mount-pareto-lz4.csv")
best_pareto_zstd=$(best_c "$out/mount-pareto-zstd.csv")
log "best C > 0 (pareto, mount sweep): lz4 $best_pareto_lz4%, zstd $best_pareto_zstd%"

# The headline (Pareto): C = 0, best C lz4, best C zstd and the page cache, interleaved for
# BENCH_ROUNDS rounds so that load from other users of the machine falls on all of them alike;
# the report takes the median of each.
: >"$out/headline.jsonl"
for round in $(seq "${BENCH_ROUNDS:-3}"); do
  for cfg in "lz4:0" "lz4:$best_pareto_lz4" "zstd:$best_pareto_zstd"; do
    "$ccfs" set "$mnt" "compressor=${cfg%%:*}" "compressed_percent=${cfg##*:}" >/dev/null
    log "headline round $round: mount, pareto, ${cfg%%:*}, C=${cfg##*:}%"
    run "$ccfs" replay "$mnt" --dist pareto --ops "$ops" --warmup "$warmup" --no-progress --json \
      >>"$out/headline.jsonl" 2>>"$out/bench.log" || true
  done
  log "headline round $round: Linux page cache, pareto, $memory cgroup"
  run "$ccfs" replay "$data" --memory "$memory" --dist pareto --ops "$ops" --warmup "$warmup" \
    --no-progress --json \
    >>"$out/headline.jsonl" 2>>"$out/bench.log" || true
done
cat "$mnt/.ccfs/stats.json" >"$out/daemon-stats-end.json"
echo "{\"vmrss_kib\": $(rss_kib VmRSS), \"vmhwm_kib\": $(rss_kib VmHWM), \"memory\": \"$memory\"}" \
  >"$out/daemon-rss.json"
umount_ccfs
fi

# ---- 2c. the headline again with the threads pinned -----------------------------------------------
# pin_threads=true and request_threads=1: the request thread on the first CPU, the compression
# workers on the others; every client (the page cache's too) runs on that first CPU with taskset,
# so a FUSE round trip does not wake another CPU. The floors are measured the same way.
pin_cpu=$(taskset -pc $$ | sed 's/.*: //; s/[,-].*//')
if step pinned; then
log "fuse_rtt pinned: null-FUSE floor vs ccfs raw hit, everything on CPU $pin_cpu"
run taskset -c "$pin_cpu" "$build/fuse_rtt" --dir "$data_root" --file-mib 32 --ops 20000 --seconds 2 \
  --rounds 1 --null-loops single --ccfs-threads 1 >"$out/fuse_rtt-pinned.txt" || true
mount_ccfs "$data" "$memory" "raw_tier=daemon,compressed_percent=0,compressor=lz4,pin_threads=true,request_threads=1"
: >"$out/headline-pinned.jsonl"
for round in $(seq "${BENCH_ROUNDS:-3}"); do
  for cfg in "lz4:0" "lz4:$best_pareto_lz4" "zstd:$best_pareto_zstd"; do
    "$ccfs" set "$mnt" "compressor=${cfg%%:*}" "compressed_percent=${cfg##*:}" >/dev/null
    log "pinned headline round $round: mount, pareto, ${cfg%%:*}, C=${cfg##*:}%, client on CPU $pin_cpu"
    run taskset -c "$pin_cpu" "$ccfs" replay "$mnt" --dist pareto --ops "$ops" --warmup "$warmup" \
      --no-progress --json >>"$out/headline-pinned.jsonl" 2>>"$out/bench.log" || true
  done
  log "pinned headline round $round: Linux page cache, pareto, $memory cgroup, client on CPU $pin_cpu"
  run taskset -c "$pin_cpu" "$ccfs" replay "$data" --memory "$memory" --dist pareto --ops "$ops" \
    --warmup "$warmup" --no-progress --json >>"$out/headline-pinned.jsonl" 2>>"$out/bench.log" || true
done
umount_ccfs
fi

# ---- 2d. the two levels: raw pages in the daemon or in the kernel's page cache ---------------------
if step levels; then
log "fuse_rtt: null-FUSE floor of this run (the uniform target is the page cache + one trip)"
run "$build/fuse_rtt" --dir "$data_root" --file-mib 32 --ops 20000 --seconds 2 --rounds 1 \
  --null-loops fixed:2 --ccfs-threads 2 >"$out/levels-fuse_rtt.txt" || true
data_2x=$(make_data "$(double "$memory")")
warmup_2x=$(( ${BENCH_WARMUP_FACTOR:-2} * $(pages_of "$data_2x") ))
levels_c=${BENCH_LEVELS_SWEEP:-"0 25 50 75"}
# FUSE over io_uring for the uring rounds, where the kernel allows it (switched back afterwards).
uring_switch=/sys/module/fuse/parameters/enable_uring
levels_uring=0
if [[ -w $uring_switch ]]; then
  uring_was=$(cat "$uring_switch")
  echo Y >"$uring_switch"
  levels_uring=1
fi
# A short sweep of C in kernel mode (both codecs; the kernel's share held by the memory cgroup the
# replay shares with the daemon) picks each codec's best C for the rounds below.
: >"$out/levels-sweep.jsonl"
for codec in lz4 zstd; do
  mount_ccfs "$data" "$memory" "raw_tier=kernel,kernel_evict=false,compressed_percent=0,compressor=$codec"
  for c in $levels_c; do
    [ "$c" = 0 ] && [ "$codec" = zstd ] && continue
    "$ccfs" set "$mnt" "compressed_percent=$c" >/dev/null
    log "levels sweep: kernel mode, pareto, $codec, C=$c%"
    run "$ccfs" replay "$mnt" --dist pareto --ops "$ops" --warmup "$warmup" --no-progress --json \
      >>"$out/levels-sweep.jsonl" 2>>"$out/bench.log" || true
  done
  umount_ccfs
done
read -r kbest_lz4 kbest_zstd < <("$py" - "$out/levels-sweep.jsonl" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
def best(codec):
    r = [x for x in rows if x.get("compressor") == codec and x.get("compressed_percent", 0) > 0]
    return min(r, key=lambda x: x["us_per_buffer"])["compressed_percent"] if r else 50
print(best("lz4"), best("zstd"))
PY
)
log "levels: best C in kernel mode: lz4 $kbest_lz4%, zstd $kbest_zstd%"
: >"$out/levels.jsonl"
for round in $(seq "${BENCH_ROUNDS:-3}"); do
  for set in "$data:$warmup" "$data_2x:$warmup_2x"; do
    d=${set%%:*}; w=${set##*:}
    for dist in pareto uniform; do
      log "levels round $round: $(basename "$d"), $dist: the page cache in a $memory cgroup"
      run "$ccfs" replay "$d" --memory "$memory" --dist "$dist" --ops "$ops" --warmup "$w" \
        --no-progress --json >>"$out/levels.jsonl" 2>>"$out/bench.log" || true
      # raw_tier:codec:C:kernel_evict:transport:kernel_demote
      cfgs=("daemon:lz4:0:true:dev:off" "daemon:zstd:$best_pareto_zstd:true:dev:off"
            "kernel:lz4:0:true:dev:off" "kernel:lz4:0:false:dev:off"
            "kernel:lz4:$kbest_lz4:false:dev:off" "kernel:zstd:$kbest_zstd:false:dev:off"
            "kernel:zstd:$kbest_zstd:true:dev:off" "kernel:zstd:$kbest_zstd:true:dev:exclusive"
            "kernel:zstd:$kbest_zstd:true:dev:mix")
      [ $levels_uring = 1 ] &&
        cfgs+=("daemon:lz4:0:true:uring:off" "kernel:zstd:$kbest_zstd:false:uring:off")
      for cfg in "${cfgs[@]}"; do
        IFS=: read -r tier codec c evict transport demote <<<"$cfg"
        mount_ccfs "$d" "$memory" "raw_tier=$tier,compressed_percent=$c,compressor=$codec,kernel_evict=$evict,transport=$transport,kernel_demote=$demote"
        log "levels round $round: $(basename "$d"), $dist: ccfs raw_tier=$tier, $codec, C=$c%, kernel_evict=$evict, $transport, kernel_demote=$demote"
        # The line carries the configuration (kernel_evict, transport and kernel_demote are not in
        # replay's JSON).
        run "$ccfs" replay "$mnt" --dist "$dist" --ops "$ops" --warmup "$w" --no-progress --json \
          2>>"$out/bench.log" | sed "s/^{/{\"config\": \"$cfg\", /" >>"$out/levels.jsonl" || true
        umount_ccfs
      done
    done
  done
done
# A sequential reader (cat of every file, cold: a fresh mount, its pages read with O_DIRECT) must
# stream at least as fast in kernel mode (kernel readahead) as in daemon mode.
: >"$out/levels-seq.jsonl"
for round in $(seq "${BENCH_ROUNDS:-3}"); do
  for tier in daemon kernel; do
    mount_ccfs "$data" "$memory" "raw_tier=$tier,compressed_percent=0"
    t0=$(date +%s.%N)
    find "$mnt" -path "$mnt/.ccfs" -prune -o -type f -print0 | xargs -0 cat >/dev/null
    secs=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.3f", b - a }')
    log "levels sequential round $round: cat of the data set, raw_tier=$tier: $secs s"
    echo "{\"raw_tier\": \"$tier\", \"bytes\": $(du -sb "$data" | cut -f1), \"seconds\": $secs}" \
      >>"$out/levels-seq.jsonl"
    umount_ccfs
  done
done
if [ $levels_uring = 1 ]; then echo "$uring_was" >"$uring_switch"; uring_was=""; fi
"$py" "$root/bench/levels_report.py" "$out" | tee "$out/levels.md"
fi

# ---- 2e. an outside client: fio beside the replayer ------------------------------------------------
# fio (lib.sh fio_randread: QD1 8 KiB psync random reads of every file of the data set; one job
# and four) on the page cache in a memory cgroup of BENCH_MEMORY, and through ccfs with memory =
# BENCH_MEMORY: daemon mode (lz4 C = 0, zstd C = BENCH_FIO_C) and kernel mode (lz4 C = 0, also with
# kernel_evict = false, where the cgroup's reclaim holds the kernel's share instead of the daemon's
# ledger: results/miss-breakdown; zstd C = BENCH_FIO_KERNEL_C; the daemon, started in it, and fio
# in one memory cgroup of BENCH_MEMORY, as
# the replay's kernel-mode runs: a C whose compressed tier and the daemon's own memory would not
# fit is refused by the mount). Each run: caches dropped, a fresh mount, BENCH_FIO_WARM seconds of
# fio unmeasured, then BENCH_FIO_SECONDS measured, the daemon's counters read around it.
# Interleaved rounds (the order turned each round): fio.jsonl, fio.md.
fio_cg=/sys/fs/cgroup/memory/ccfs-bench-fio-$$
if step fio; then
fio_c=${BENCH_FIO_C:-75}
fio_kc=${BENCH_FIO_KERNEL_C:-50}
fio_secs=${BENCH_FIO_SECONDS:-20}
fio_warm=${BENCH_FIO_WARM:-10}
data_2x=$(make_data "$(double "$memory")")
: >"$out/fio.jsonl"
for round in $(seq "${BENCH_ROUNDS:-3}"); do
  targets=("pagecache" "daemon:lz4:0" "daemon:zstd:$fio_c" "kernel:lz4:0" "kernel:lz4:0:noevict"
           "kernel:zstd:$fio_kc")
  (( round % 2 == 0 )) && targets=("kernel:zstd:$fio_kc" "kernel:lz4:0:noevict" "kernel:lz4:0"
                                   "daemon:zstd:$fio_c" "daemon:lz4:0" "pagecache")
  for d in "$data" "$data_2x"; do
    for dist in pareto uniform; do
      for jobs in 1 4; do
        for t in "${targets[@]}"; do
          sync; echo 3 >/proc/sys/vm/drop_caches
          cgroup_make "$fio_cg" "$(to_bytes "$memory")"
          before="0 0" after="0 0" dir=$d cg=$fio_cg
          if [ "$t" != pagecache ]; then
            IFS=: read -r tier codec c noevict <<<"$t"
            # Daemon mode caches nothing in the kernel (direct I/O): only kernel mode's daemon
            # shares the reader's cgroup, as in the replay's runs.
            mount_in=(); [ "$tier" = kernel ] && mount_in=(in_cgroup "$fio_cg")
            [ "$tier" = kernel ] || cg=""
            mount_ccfs "$d" "$memory" \
              "raw_tier=$tier,compressor=$codec,compressed_percent=$c${noevict:+,kernel_evict=false}"
            mount_in=()
            dir=$mnt
          fi
          log "fio round $round: $(basename "$d"), $dist, $jobs job(s): $t"
          run fio_randread "$dir" "$dist" "$jobs" "$fio_warm" "$out/fio-run.json" "$cg" \
            2>>"$out/bench.log" || true
          [ "$t" != pagecache ] && before=$(ccfs_reads_misses "$mnt")
          run fio_randread "$dir" "$dist" "$jobs" "$fio_secs" "$out/fio-run.json" "$cg" \
            2>>"$out/bench.log" || true
          [ "$t" != pagecache ] && after=$(ccfs_reads_misses "$mnt")
          fio_line "$out/fio-run.json" "$t" "$(basename "$d")" "$dist" "$jobs" "$round" $before \
            $after >>"$out/fio.jsonl" || true
          [ "$t" != pagecache ] && umount_ccfs
          cgroup_remove "$fio_cg"
        done
      done
    done
  done
done
"$py" "$root/bench/fio_report.py" "$out/fio.jsonl" | tee "$out/fio.md"
fi

# ---- 3. RocksDB tiered cache vs ccfs engine, in-process, same trace -----------------------------
IFS=: read -r s_from s_to s_step <<<"$sweep"
if step inproc; then
for dist in pareto uniform; do
  : >"$out/inproc-$dist.jsonl"
  # Both codecs on Pareto (the targets); lz4 alone on uniform, to stay within the time budget.
  codecs="lz4 zstd"
  [ "$dist" = uniform ] && codecs=lz4
  for codec in $codecs; do
    for c in $(seq "$s_from" "$s_step" "$s_to"); do
      # C=0 compresses nothing: one run serves both codecs.
      if [ "$c" = 0 ] && [ "$codec" != lz4 ]; then continue; fi
      if [ "$have_rocksdb" = 1 ]; then
        log "in-process: ccfs engine and RocksDB tiered, $dist, $codec, C=$c%"
        run "$build/rocksdb_tiered" --data "$data" --memory "$memory" --percent "$c" \
          --compressor "$codec" --dist "$dist" --ops "$engine_ops" --warmup "$warmup" \
          >>"$out/inproc-$dist.jsonl" \
          2>>"$out/bench.log" || true
      else
        log "in-process: ccfs engine, $dist, $codec, C=$c% (RocksDB not built)"
        run "$build/tiered_compare" --data "$data" --memory "$memory" --percent "$c" \
          --compressor "$codec" --dist "$dist" --ops "$engine_ops" --warmup "$warmup" \
          >>"$out/inproc-$dist.jsonl" || true
      fi
    done
  done
done
fi

# ---- 3b/3c. what one engine switch buys: the same in-process run with KEY on and off --------------
# onoff_step KEY FILE "C CODEC"...: every (C, codec) pair run with KEY=true, then KEY=false.
onoff_step() {
  local key=$1 file=$2 c codec value; shift 2
  : >"$file"
  for run_c in "$@"; do
    read -r c codec <<<"$run_c"
    for value in true false; do
      log "in-process $key: pareto, $codec, C=$c%, $key=$value"
      run "$build/tiered_compare" --data "$data" --memory "$memory" --percent "$c" \
        --compressor "$codec" --dist pareto --ops "$engine_ops" --warmup "$warmup" \
        -o "$key=$value" >>"$file" || true
    done
  done
}
if step onoff; then
onoff_step admission_filter "$out/admission.jsonl" "40 lz4" "80 lz4" "40 zstd" "80 zstd"
onoff_step probation "$out/probation.jsonl" "0 lz4" "40 zstd" "80 lz4"
fi

# ---- 4. compression keeps up: threads and stalls -------------------------------------------------
if step compress; then
: >"$out/compress_scale.jsonl"
for codec in lz4 zstd; do
  log "compress_scale ($codec): pool throughput vs compress_threads 1..$(nproc)"
  run "$build/compress_scale" --data "$data" --compressor "$codec" --sample 32MiB --rounds 3 \
    >>"$out/compress_scale.jsonl" || true
done
: >"$out/stalls.jsonl"
stall_c=$(( s_to > 50 ? s_to : 50 ))
for threads in $(seq 1 "$(nproc)"); do
  log "stalls at the highest miss rate: uniform, lz4, C=$stall_c%, compress_threads=$threads"
  run "$build/tiered_compare" --data "$data" --memory "$memory" --percent "$stall_c" \
    --compressor lz4 --dist uniform --ops "$engine_ops" --compress-threads "$threads" \
    >>"$out/stalls.jsonl" || true
done
fi

# ---- 5. scaling: data and memory doubled together; the page index --------------------------------
if [ "${BENCH_SKIP_SCALE:-0}" != 1 ] && step scale; then
  : >"$out/scale.jsonl"
  # Rounds alternate the two sizes, so that the machine's drift falls on both; the report compares
  # medians.
  for round in $(seq 1 "${BENCH_SCALE_ROUNDS:-3}"); do
    for pair in "$data:$memory" "$data2:$memory2"; do
      d=${pair%%:*}; m=${pair##*:}
      for c in 0 "$best_pareto_lz4"; do
        log "scaling round $round: mount $d, memory $m, pareto, lz4, C=$c%"
        mount_ccfs "$d" "$m" "raw_tier=daemon,compressed_percent=$c,compressor=lz4"
        run "$ccfs" replay "$mnt" --dist pareto --ops "$ops" \
          --warmup $(( ${BENCH_WARMUP_FACTOR:-2} * $(pages_of "$d") )) --no-progress --json \
          >>"$out/scale.jsonl" 2>>"$out/bench.log" || true
        echo "{\"memory\": \"$m\", \"c\": $c, \"vmrss_kib\": $(rss_kib VmRSS), \"vmhwm_kib\": $(rss_kib VmHWM)}" \
          >>"$out/scale-rss.jsonl"
        umount_ccfs
      done
    done
  done
  log "index_scale: page index lookup, 10^4..10^7 pages"
  run "$build/index_scale" --sizes 10000,100000,1000000,10000000 --lookups 2000000 --insert-limit 15 \
    >"$out/index_scale.jsonl" || true
fi

# ---- report ----------------------------------------------------------------------------------------
t_end=$(date +%s)
echo "{\"seconds\": $((t_end - t_start))}" >"$out/elapsed.json"
log "report"
[ "${BENCH_STEPS:-all}" = all ] && "$py" "$root/bench/bench_report.py" "$out"
rmdir "$mnt" 2>/dev/null || true
log "done in $((t_end - t_start)) s: $out"
