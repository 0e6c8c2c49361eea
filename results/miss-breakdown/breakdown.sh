#!/usr/bin/env bash
# The time of one miss, broken down, on each store: what an 8 KiB random read costs when nearly
# every read misses, through the page cache and through ccfs, beside the store's own read and (for
# GlusterFS) the store's native client, libgfapi, as fio's gfapi engine reaches it.
#
#   results/miss-breakdown/breakdown.sh OUT [STORES] [ROUNDS] [SECONDS]
#   results/miss-breakdown/breakdown.sh OUT --report    the table again from OUT/runs.jsonl
#
# STORES: "local sshfs gluster" by default. Per store, a 1 GiB file of random bytes; per round, in
# this order (interleaved rounds):
#   direct      fio --direct=1 on the store's mount: the store's own 8 KiB read (two FUSE hops
#               less than ccfs's miss over a network store's FUSE client: none of ccfs's)
#   gfapi       fio --ioengine=gfapi: the same read through libgfapi, no FUSE at all (gluster)
#   libssh      build/sftp_read: the same read over SFTP through libssh, no FUSE at all (sshfs;
#               when built: Debian libssh-dev)
#   pagecache   fio buffered in a 48 MiB memory cgroup on the store's page-cache mount: ~95% of
#               reads miss; the page cache's miss
#   kernel-dev  ccfs raw_tier=kernel C=0 memory=16MiB, daemon and fio in the same 48 MiB cgroup:
#               ~98% of reads miss; the daemon's own time per miss (stats.json latency "miss",
#               which holds the backing read) is read beside fio's mean, the rest is the trip
#   daemon-dev  the same in raw_tier=daemon
#   kernel-uring, daemon-uring   the same over FUSE over io_uring (when the kernel offers it)
# QD1 psync uniform random 8 KiB reads with --norandommap, SECONDS each (default 10); ccfs with
# readahead = 0 (BREAKDOWN_READAHEAD), which in raw_tier = kernel is a window of one ccfs page.
# BREAKDOWN_JOBS: readers at once in the page cache's and ccfs's runs (1); BREAKDOWN_CCFS: another
# ccfs binary; BREAKDOWN_OPTIONS: more ccfs options.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
me=breakdown
. "$root/scripts/lib.sh"
out=${1:?OUT}; stores=${2:-local sshfs gluster}; rounds=${3:-2}; secs=${4:-10}
report() {
python3 - "$out/runs.jsonl" <<'PY' | tee "$out/breakdown.md"
import json, sys, collections
rows = [json.loads(l) for l in open(sys.argv[1])]
by = collections.defaultdict(list)
for r in rows: by[(r["store"], r["target"])].append(r)
def rng(v, f="%.0f"):
    lo, hi = min(v), max(v)
    return f % lo if f % lo == f % hi else (f % lo) + "-" + (f % hi)
print("| store | target | fio mean µs | fio p50 µs | requests per read | misses per read | daemon µs per miss (holds the store read) | rest: trips, copies, kernel |")
print("|---|---|---|---|---|---|---|---|")
for (store, target), v in by.items():
    mean = [r["mean_us"] for r in v]
    if "daemon_miss_us" in v[0]:
        mr = [r["miss_ratio"] for r in v]; dm = [r["daemon_miss_us"] for r in v]
        rest = [r["mean_us"] - r["miss_ratio"] * r["daemon_miss_us"] for r in v]
        rq = [r["daemon_reads"] / max(1, r["reads"]) for r in v]
        print(f"| {store} | {target} | {rng(mean)} | {rng([r['p50_us'] for r in v])} | {rng(rq, '%.2f')} | {rng(mr, '%.2f')} | {rng(dm)} | {rng(rest)} |")
    else:
        print(f"| {store} | {target} | {rng(mean)} | {rng([r['p50_us'] for r in v])} | | | | |")
PY
}
[ "$stores" = --report ] && { report; exit 0; }
equal_ram_checks 48MiB
ccfs=${BREAKDOWN_CCFS:-$ccfs}
mkdir -p "$out"; out=$(cd "$out" && pwd)
work=/var/tmp/ccfs-miss-breakdown
cg=/sys/fs/cgroup/memory/ccfs-miss-breakdown
mnt=$work/mnt
up=()
uring_was=$(cat /sys/module/fuse/parameters/enable_uring 2>/dev/null || echo N)
cleanup() {
  set +e
  grep -q " $mnt fuse" /proc/mounts && { fusermount3 -u "$mnt" || fusermount3 -uz "$mnt"; }
  [ -n "${daemon_pid:-}" ] && wait "$daemon_pid"
  cgroup_remove "$cg"
  local i
  for ((i = ${#up[@]} - 1; i >= 0; i--)); do
    STORES_STATE_DIR=${up[$i]% *} "$root/scripts/stores.sh" down "${up[$i]#* }" >/dev/null 2>&1
  done
  [ -w /sys/module/fuse/parameters/enable_uring ] &&
    echo "$uring_was" >/sys/module/fuse/parameters/enable_uring
  rm -rf "$work"
}
trap cleanup EXIT
rm -rf "$work"; mkdir -p "$work/data" "$mnt"
echo Y >/sys/module/fuse/parameters/enable_uring 2>/dev/null || true
transports=(dev)
[ "$(cat /sys/module/fuse/parameters/enable_uring 2>/dev/null)" = Y ] && transports+=(uring)
head -c 1G /dev/urandom >"$work/data/f"
: >"$out/runs.jsonl"
echo "{\"date\": \"$(date -Is)\", \"commit\": \"$(git -C "$root" rev-parse --short HEAD)\", \"stores\": \"$stores\", \"rounds\": $rounds, \"seconds\": $secs, \"transports\": \"${transports[*]}\"}" >"$out/meta.json"

fio_one() {  # TAG FILE [fio options...]: one run, its line appended to runs.jsonl
  local tag=$1 file=$2; shift 2
  fio --name=r --filename="$file" --rw=randread --bs=8k --iodepth=1 --norandommap \
    --time_based --runtime="$secs" --invalidate=0 --output-format=json \
    --output="$work/fio.json" "$@" >/dev/null
}
line() {  # STORE ROUND TAG [DAEMON_STATS_JSON]
  python3 - "$work/fio.json" "$@" <<'PY' >>"$out/runs.jsonl"
import json, sys
run, store, rnd, tag = sys.argv[1:5]
r = json.load(open(run))["jobs"][0]["read"]
d = {"store": store, "round": int(rnd), "target": tag, "mean_us": r["clat_ns"]["mean"] / 1e3,
     "p50_us": r["clat_ns"]["percentile"]["50.000000"] / 1e3, "reads": r["total_ios"]}
if len(sys.argv) > 5:
    before, after = (json.loads(s) for s in sys.argv[5].split("\n"))
    reads = after["reads"] - before["reads"]
    misses = after["misses"] - before["misses"]
    m0, m1 = before["latency"]["miss"], after["latency"]["miss"]
    n = m1["count"] - m0["count"]
    d.update({"daemon_reads": reads, "daemon_misses": misses,
              "miss_ratio": misses / max(1, d["reads"]),
              "daemon_miss_us": (m1["sum_ns"] - m0["sum_ns"]) / 1e3 / max(1, n)})
print(json.dumps(d))
PY
}
stats() { python3 -c "import json,sys; d=json.load(open(sys.argv[1]+'/.ccfs/stats.json')); print(json.dumps({'reads': d['reads'], 'misses': d['misses'], 'latency': {'miss': {k: d['latency']['miss'][k] for k in ('count','sum_ns')}}}))" "$mnt"; }

for store in $stores; do
  store_dir=$work/store pc_dir=$work/store-pc volume=""
  case $store in
    local) store_dir=$work/data pc_dir=$work/data ;;
    sshfs)
      STORES_STATE_DIR=$work/state "$root/scripts/stores.sh" up sshfs "$store_dir" --source "$work/data" >/dev/null
      up+=("$work/state sshfs")
      STORES_STATE_DIR=$work/state-pc "$root/scripts/stores.sh" up sshfs "$pc_dir" --source "$work/data" --page-cache >/dev/null
      up+=("$work/state-pc sshfs") ;;
    gluster)
      STORES_STATE_DIR=$work/state STORES_GLUSTER_NAME=ccfs-breakdown \
        "$root/scripts/stores.sh" up gluster "$store_dir" --remote-dio >/dev/null
      up+=("$work/state gluster")
      volume=$(. "$work/state/gluster/info" && echo "$volume")
      STORES_STATE_DIR=$work/state-pc STORES_GLUSTER_VOLUME=$volume \
        "$root/scripts/stores.sh" up gluster "$pc_dir" --page-cache >/dev/null
      up+=("$work/state-pc gluster")
      cp "$work/data/f" "$store_dir/f"; sync ;;
  esac
  for rnd in $(seq "$rounds"); do
    log "$store round $rnd: direct"
    fio_one x "$store_dir/f" --ioengine=psync --direct=1; line "$store" "$rnd" direct
    if [ -n "$volume" ]; then
      log "$store round $rnd: gfapi"
      fio_one x f --ioengine=gfapi --volume="${volume#*:}" --brick="${volume%%:*}" --size=1g --direct=1
      line "$store" "$rnd" gfapi
    fi
    if [ "$store" = sshfs ] && [ -x "$root/build/sftp_read" ]; then
      log "$store round $rnd: libssh"
      "$root/build/sftp_read" --port "$(. "$work/state/sshfs/info" && echo "$port")" \
        --user "$(id -un)" --key "$work/state/sshfs/client_key" \
        --known-hosts "$work/state/sshfs/known_hosts" --path "$work/data/f" --seconds "$secs" |
        python3 -c "import json,sys; d=json.loads(sys.stdin.read()); d.update(store='sshfs', round=$rnd, target='libssh'); print(json.dumps(d))" \
        >>"$out/runs.jsonl"
    fi
    log "$store round $rnd: pagecache"
    cgroup_make "$cg" $((48 << 20))
    echo 3 >/proc/sys/vm/drop_caches
    in_cgroup "$cg" fio --name=r --filename="$pc_dir/f" --rw=randread --bs=8k --iodepth=1 \
      --norandommap --time_based --runtime="$secs" --invalidate=0 --ioengine=psync \
          --numjobs="${BREAKDOWN_JOBS:-1}" --group_reporting \
      --output-format=json --output="$work/fio.json" >/dev/null
    line "$store" "$rnd" pagecache
    cgroup_remove "$cg"
    for tier in kernel daemon; do
      for t in "${transports[@]}"; do
        log "$store round $rnd: $tier-$t"
        cgroup_make "$cg" $((48 << 20))
        in_cgroup "$cg" "$ccfs" mount -f -o "memory=16MiB,raw_tier=$tier,compressed_percent=0,transport=$t,readahead=${BREAKDOWN_READAHEAD:-0}${BREAKDOWN_OPTIONS:+,$BREAKDOWN_OPTIONS}" \
          "$store_dir" "$mnt" 2>>"$work/daemon.log" &
        daemon_pid=$!
        for _ in $(seq 200); do grep -q " $mnt fuse" /proc/mounts && break; sleep 0.05; done
        grep -q " $mnt fuse" /proc/mounts || die "mount failed: $(tail -3 "$work/daemon.log")"
        s0=$(stats)
        in_cgroup "$cg" fio --name=r --filename="$mnt/f" --rw=randread --bs=8k --iodepth=1 \
          --norandommap --time_based --runtime="$secs" --invalidate=0 --ioengine=psync \
          --numjobs="${BREAKDOWN_JOBS:-1}" --group_reporting \
          --output-format=json --output="$work/fio.json" >/dev/null
        s1=$(stats)
        line "$store" "$rnd" "$tier-$t" "$s0
$s1"
        fusermount3 -u "$mnt"; wait "$daemon_pid"; daemon_pid=""
        cgroup_remove "$cg"
      done
    done
  done
  for ((i = ${#up[@]} - 1; i >= 0; i--)); do
    STORES_STATE_DIR=${up[$i]% *} "$root/scripts/stores.sh" down "${up[$i]#* }" >/dev/null
  done
  up=()
done
report
