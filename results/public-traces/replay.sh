#!/usr/bin/env bash
# A published block trace replayed through the page cache and through ccfs at equal RAM, beside
# the exact LRU hit ratio of the same operations and the model's prediction (`ccfs advise`).
#
#   results/public-traces/replay.sh OUT TRACE [MEMORIES] [ROUNDS] [reads]
#   results/public-traces/replay.sh --clean     removes the data set kept under /var/tmp
#
# TRACE: a trace `ccfs replay --trace` reads (here libCacheSim's data/cloudPhysicsIO.csv, the
# CloudPhysics VSCSI trace in CSV). Its blocks are folded onto a data set of real bytes: mkdata's
# default mix (text, binaries, database pages, random, zeros), 1 GiB, seed 1, at
# /var/tmp/ccfs-public-traces/data (kept between runs; removed with --clean). One pass of the trace
# from a cold cache (--warmup 0, --ops the trace's page operations), so the exact LRU of advise and
# the replays see the same operations. MEMORIES: "128MiB 512MiB" by default. "reads" keeps the
# trace's reads alone (a VSCSI trace's lines with a READ opcode): the page cache writes back while
# ccfs writes through, so writes would compare two durabilities, and the exact LRU curve is the
# reads'. The table: results/public-traces/report.py OUT.
# Per memory and round, taking turns: the page cache (`ccfs replay DIR --memory M`: a memory
# cgroup of M, the data set's cached pages dropped first; replay reads with POSIX_FADV_RANDOM, so
# the kernel reads nothing ahead), ccfs daemon mode C = 0 and zstd C = 75 with readahead = 0 (a
# fresh mount of memory M; its caches dropped first), each with --json: no cache reads ahead, as
# the exact LRU curve does not; once per memory,
# `ccfs advise DIR --trace TRACE --memory M --warmup 0 --json` (exact LRU, model).
# TRACES_STORE=sshfs serves the data set over sshfs (scripts/stores.sh, torn down at the end): the
# page cache reads a second sshfs mount of it that lets the kernel cache its files, ccfs reads
# through one that does not (as crossover.sh does); advise measures the miss on the latter.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
me=public-traces
. "$root/scripts/lib.sh"
[ "${1:-}" = --clean ] && { rm -rf /var/tmp/ccfs-public-traces; exit 0; }
out=${1:?OUT}; trace=${2:?TRACE}; memories=${3:-128MiB 512MiB}; rounds=${4:-2}; only=${5:-}
equal_ram_checks 64MiB
mkdir -p "$out"; out=$(cd "$out" && pwd)
work=/var/tmp/ccfs-public-traces
data=$work/data mnt=$work/mnt
store=${TRACES_STORE:-local}
up=()
cleanup() {
  set +e
  grep -q " $mnt fuse" /proc/mounts && { fusermount3 -u "$mnt" || fusermount3 -uz "$mnt"; }
  [ -n "${daemon_pid:-}" ] && wait "$daemon_pid"
  local i
  for ((i = ${#up[@]} - 1; i >= 0; i--)); do
    STORES_STATE_DIR=${up[$i]% *} "$root/scripts/stores.sh" down "${up[$i]#* }" >/dev/null 2>&1
  done
}
trap cleanup EXIT
mkdir -p "$mnt"
if [ "$only" = reads ]; then
  # The header, then the lines whose op is READ(6), READ(10) or READ(16).
  awk -F, 'NR == 1 || tolower($3) ~ /^(8|08|28|88)$/' "$trace" >"$work/reads.csv"
  trace=$work/reads.csv
fi
[ -f "$data/.mkdata-done" ] || { "$ccfs" mkdata "$data" --size 1GiB --seed 1 --force >/dev/null && touch "$data/.mkdata-done"; }
store_dir=$data pc_dir=$data
case $store in
  local) ;;
  sshfs)
    store_dir=$work/store pc_dir=$work/store-pc
    STORES_STATE_DIR=$work/state "$root/scripts/stores.sh" up sshfs "$store_dir" --source "$data" >/dev/null
    up+=("$work/state sshfs")
    STORES_STATE_DIR=$work/state-pc "$root/scripts/stores.sh" up sshfs "$pc_dir" --source "$data" \
      --page-cache >/dev/null
    up+=("$work/state-pc sshfs") ;;
  *) die "TRACES_STORE=$store: local or sshfs" ;;
esac
# The trace's page operations, as replay splits them: one pass.
ops=$("$ccfs" replay "$data" --trace "$trace" --ops 1 --warmup 0 --json --no-progress 2>/dev/null |
      python3 -c "import json,sys; print(json.load(sys.stdin)['trace_ops'])")
: >"$out/runs.jsonl"
echo "{\"date\": \"$(date -Is)\", \"commit\": \"$(git -C "$root" rev-parse --short HEAD)\", \"trace\": \"${2}\", \"trace_sha1\": \"$(sha1sum "$2" | cut -c1-40)\", \"only\": \"$only\", \"page_ops\": $ops, \"memories\": \"$memories\", \"rounds\": $rounds, \"store\": \"$store\"}" >"$out/meta.json"
tagged() { sed "s/^{/{\"memory\": \"$1\", \"round\": $2, \"run\": \"$3\", /" >>"$out/runs.jsonl"; }
for m in $memories; do
  log "$m: advise (exact LRU, model)"
  "$ccfs" advise "$store_dir" --trace "$trace" --memory "$m" --warmup 0 --c-step 5 --json 2>/dev/null |
    python3 -c "import json,sys; d=json.load(sys.stdin); print(json.dumps(d))" | tagged "$m" 0 advise
  for rnd in $(seq "$rounds"); do
    targets=(pagecache daemon:0 daemon:75)
    (( rnd % 2 == 0 )) && targets=(daemon:75 daemon:0 pagecache)
    for t in "${targets[@]}"; do
      log "$m round $rnd: $t"
      sync; echo 3 >/proc/sys/vm/drop_caches
      if [ "$t" = pagecache ]; then
        "$ccfs" replay "$pc_dir" --trace "$trace" --memory "$m" --ops "$ops" --warmup 0 --json \
          --no-progress 2>>"$out/replay.log" | grep '^{' | tagged "$m" "$rnd" pagecache
      else
        c=${t#daemon:}
        "$ccfs" mount -f -o "memory=$m,raw_tier=daemon,compressor=zstd,compressed_percent=$c,readahead=0" \
          "$store_dir" "$mnt" 2>>"$out/replay.log" &
        daemon_pid=$!
        for _ in $(seq 200); do grep -q " $mnt fuse" /proc/mounts && break; sleep 0.05; done
        "$ccfs" replay "$mnt" --trace "$trace" --ops "$ops" --warmup 0 --json --no-progress \
          2>>"$out/replay.log" | grep '^{' | tagged "$m" "$rnd" "$t"
        fusermount3 -u "$mnt"; wait "$daemon_pid"; daemon_pid=""
      fi
    done
  done
done
