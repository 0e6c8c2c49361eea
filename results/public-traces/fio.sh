#!/usr/bin/env bash
# The table of replay.sh checked by a client ccfs did not write: the same page reads, recorded by
# `ccfs replay --record` and replayed by fio (--read_iolog, psync, QD1, no stalls between reads,
# POSIX_FADV_RANDOM), through the page cache and through ccfs at equal RAM.
#
#   results/public-traces/fio.sh OUT TRACE [MEMORY] [ROUNDS]
#
# TRACE as for replay.sh, its reads alone, folded onto the same data set (mkdata 1 GiB, seed 1);
# TRACES_STORE=sshfs (default) or local. Per round, taking turns: fio in a memory cgroup of MEMORY
# (default 128MiB) on the page cache's mount, and on a fresh ccfs mount (daemon mode, zstd
# C = 75, readahead = 0, memory = MEMORY). Writes OUT/fio.jsonl: fio's mean and p50 per read.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
me=public-traces-fio
. "$root/scripts/lib.sh"
out=${1:?OUT}; trace=${2:?TRACE}; m=${3:-128MiB}; rounds=${4:-2}
equal_ram_checks "$m"
mkdir -p "$out"; out=$(cd "$out" && pwd)
work=/var/tmp/ccfs-public-traces
data=$work/data mnt=$work/mnt cg=/sys/fs/cgroup/memory/ccfs-public-traces-fio
store=${TRACES_STORE:-sshfs}
up=()
cleanup() {
  set +e
  grep -q " $mnt fuse" /proc/mounts && { fusermount3 -u "$mnt" || fusermount3 -uz "$mnt"; }
  [ -n "${daemon_pid:-}" ] && wait "$daemon_pid"
  cgroup_remove "$cg"
  local i
  for ((i = ${#up[@]} - 1; i >= 0; i--)); do
    STORES_STATE_DIR=${up[$i]% *} "$root/scripts/stores.sh" down "${up[$i]#* }" >/dev/null 2>&1
  done
}
trap cleanup EXIT
mkdir -p "$mnt"
awk -F, 'NR == 1 || tolower($3) ~ /^(8|08|28|88)$/' "$trace" >"$work/reads.csv"
[ -f "$data/.mkdata-done" ] || { "$ccfs" mkdata "$data" --size 1GiB --seed 1 --force >/dev/null && touch "$data/.mkdata-done"; }
ops=$("$ccfs" replay "$data" --trace "$work/reads.csv" --ops 1 --warmup 0 --json --no-progress 2>/dev/null |
      python3 -c "import json,sys; print(json.load(sys.stdin)['trace_ops'])")
"$ccfs" replay "$data" --trace "$work/reads.csv" --ops "$ops" --warmup 0 --no-progress \
  --record "$work/ops.csv" >/dev/null
store_dir=$data pc_dir=$data
if [ "$store" = sshfs ]; then
  store_dir=$work/store pc_dir=$work/store-pc
  STORES_STATE_DIR=$work/state "$root/scripts/stores.sh" up sshfs "$store_dir" --source "$data" >/dev/null
  up+=("$work/state sshfs")
  STORES_STATE_DIR=$work/state-pc "$root/scripts/stores.sh" up sshfs "$pc_dir" --source "$data" \
    --page-cache >/dev/null
  up+=("$work/state-pc sshfs")
fi
# A fio version 2 iolog of the recorded operations under DIR.
iolog() {
  python3 - "$work/ops.csv" "$1" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
d = sys.argv[2]
files = sorted({r["file"] for r in rows})
print("fio version 2 iolog")
for f in files: print(f"{d}/{f} add")
for f in files: print(f"{d}/{f} open")
for r in rows: print(f"{d}/{r['file']} {r['op']} {r['offset']} {r['length']}")
for f in files: print(f"{d}/{f} close")
PY
}
iolog "$pc_dir" >"$work/pc.log"
iolog "$mnt" >"$work/ccfs.log"
: >"$out/fio.jsonl"
run() {  # TARGET LOG
  in_cgroup "$cg" fio --name=trace --read_iolog="$2" --replay_no_stall=1 --ioengine=psync \
    --invalidate=0 --fadvise_hint=random --output-format=json --output="$work/fio.json" >/dev/null
  python3 -c "
import json, sys
r = json.load(open(sys.argv[1]))['jobs'][0]['read']
print(json.dumps({'memory': sys.argv[2], 'store': sys.argv[3], 'round': int(sys.argv[4]), 'run': sys.argv[5],
                  'reads': r['total_ios'], 'mean_us': r['clat_ns']['mean'] / 1e3,
                  'p50_us': r['clat_ns']['percentile']['50.000000'] / 1e3}))" \
    "$work/fio.json" "$m" "$store" "$rnd" "$1" >>"$out/fio.jsonl"
}
for rnd in $(seq "$rounds"); do
  targets=(pagecache ccfs); (( rnd % 2 == 0 )) && targets=(ccfs pagecache)
  for t in "${targets[@]}"; do
    log "round $rnd: $t"
    sync; echo 3 >/proc/sys/vm/drop_caches
    cgroup_make "$cg" "$memory_bytes"
    if [ "$t" = pagecache ]; then
      run pagecache "$work/pc.log"
    else
      "$ccfs" mount -f -o "memory=$m,raw_tier=daemon,compressor=zstd,compressed_percent=75,readahead=0" \
        "$store_dir" "$mnt" 2>>"$work/daemon.log" &
      daemon_pid=$!
      for _ in $(seq 200); do grep -q " $mnt fuse" /proc/mounts && break; sleep 0.05; done
      run ccfs:zstd:75 "$work/ccfs.log"
      fusermount3 -u "$mnt"; wait "$daemon_pid"; daemon_pid=""
    fi
    cgroup_remove "$cg"
  done
done
cat "$out/fio.jsonl"
