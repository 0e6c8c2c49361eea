#!/usr/bin/env bash
# Where kernel mode's time goes under fio at equal RAM: the page cache alone in a memory cgroup of
# M, against ccfs raw_tier = kernel C = 0 with its daemon and fio in one cgroup of M (memory as
# scripts/lib.sh's ccfs_memory_for gives it), on the local disk; QD1 8 KiB psync reads, Pareto 0.2
# (fio's pareto:0.2) over a 1 GiB file of random bytes; interleaved rounds.
#
#   results/miss-breakdown/equal-ram.sh OUT [M] [ROUNDS] [SECONDS] [CCFS_OPTIONS...]
#
# Each CCFS_OPTIONS (none: one run with no extra option) is one ccfs target per round, added to
# raw_tier=kernel,compressed_percent=0. EQUAL_RAM_LAW sets fio's law (pareto:0.2 by default, or
# random), EQUAL_RAM_SIZE the file (1G), EQUAL_RAM_MEMORY ccfs's memory, EQUAL_RAM_DATA the file's
# bytes (random, or mix: `ccfs mkdata`'s default mix, seed 1), EQUAL_RAM_WARM the seconds of fio
# before the measured run (10; time for `auto` to choose), EQUAL_RAM_STORE where the file is: local
# (the disk), sshfs or gluster (scripts/stores.sh: ccfs over the default mount, every read reaching
# the server; the page cache over a second mount of the same source with --page-cache). After the
# rounds the
# null-FUSE round trip is measured once (bench/fuse_rtt, when built): a ccfs miss crosses it.
#
# Per run: fio's mean; the pages the cgroup took in per fio read (memory.stat pgpgin: every page
# the kernel cached for a reader, read-ahead included, and the daemon's own pages); at the end the
# cgroup's cached file pages and anonymous memory (cache, rss) and the daemon's VmRSS; for ccfs the
# requests and misses the daemon saw per fio read, and its stats.json at the end (stats-rROUND-TAG).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
me=equal-ram
. "$root/scripts/lib.sh"
up_stores=()
out=${1:?OUT}; m=${2:-128MiB}; rounds=${3:-2}; secs=${4:-20}; shift $(( $# < 4 ? $# : 4 ))
configs=("$@"); [ ${#configs[@]} -gt 0 ] || configs=("")
law=${EQUAL_RAM_LAW:-pareto:0.2}; size=${EQUAL_RAM_SIZE:-1G}
data=${EQUAL_RAM_DATA:-random}; warm=${EQUAL_RAM_WARM:-10}; store=${EQUAL_RAM_STORE:-local}
equal_ram_checks "$m"
ccfs_memory=${EQUAL_RAM_MEMORY:-$ccfs_memory}
mkdir -p "$out"; out=$(cd "$out" && pwd)
work=/var/tmp/ccfs-equal-ram
cg=/sys/fs/cgroup/memory/ccfs-equal-ram
mnt=$work/mnt
cleanup() {
  set +e
  grep -q " $mnt fuse" /proc/mounts && { fusermount3 -u "$mnt" || fusermount3 -uz "$mnt"; }
  [ -n "${daemon_pid:-}" ] && wait "$daemon_pid"
  cgroup_remove "$cg"
  stores_down
  rm -rf "$work"
}
trap cleanup EXIT
rm -rf "$work"; mkdir -p "$work/data" "$mnt"
case $data in
  random) head -c "$size" /dev/urandom >"$work/data/f" ;;
  mix) "$ccfs" mkdata --size "$size" --seed 1 "$work/mix" >/dev/null
       find "$work/mix" -type f | sort | xargs cat | head -c "$(to_bytes "$size")" >"$work/data/f"
       rm -rf "$work/mix" ;;
  *) die "EQUAL_RAM_DATA: random or mix, not '$data'" ;;
esac
# What ccfs mounts, and the file the page cache's reader reads.
dataset=$work/data; pc_file=$work/data/f
case $store in
  local) ;;
  sshfs)
    store_up "$work/state" sshfs "$work/store" --source "$work/data"
    store_up "$work/state-pc" sshfs "$work/store-pc" --source "$work/data" --page-cache
    dataset=$work/store; pc_file=$work/store-pc/f ;;
  gluster)
    # --remote-dio: the client does not forward ccfs's O_DIRECT, so the brick answers both mounts'
    # misses alike; the page cache reads a second mount of the same volume that the kernel caches.
    store_up "$work/state" gluster "$work/store" --remote-dio
    volume=$(. "$work/state/gluster/info" && echo "$volume")
    STORES_GLUSTER_VOLUME=$volume store_up "$work/state-pc" gluster "$work/store-pc" --page-cache
    cp "$work/data/f" "$work/store/f"; rm -f "$work/data/f"
    dataset=$work/store; pc_file=$work/store-pc/f ;;
  *) die "EQUAL_RAM_STORE: local, sshfs or gluster, not '$store'" ;;
esac
: >"$out/equal-ram.jsonl"
# The daemon's pid, from its stats.json: $daemon_pid is the shell that in_cgroup runs it from.
daemon_of() { python3 -c "import json, sys; print(json.load(open(sys.argv[1] + '/.ccfs/stats.json'))['daemon']['pid'])" "$1"; }
miss_ns() { python3 -c "import json, sys; m = json.load(open(sys.argv[1] + '/.ccfs/stats.json'))['latency']['miss']; print(m['count'], m['sum_ns'])" "$1"; }
stat_of() { awk -v k="$1" '$1 == k {print $2}' "$cg/memory.stat"; }
# The split and codec in force, how often auto changed them, and the trip its prediction took.
split_of() { python3 -c "import json, sys; s = json.load(open(sys.argv[1] + '/.ccfs/stats.json')); print(s['compressed_percent'], s['compressor'], s['split_changes'], s['split_estimate'].get('trip_us', 0))" "$1"; }
run() {  # TAG FILE
  local tag=$1 file=$2 in0 in1 r0="0 0" r1="0 0" l0="0 0" l1="0 0" rss=0 split="- - 0 0"
  in_cgroup "$cg" fio --name=w --filename="$file" --rw=randread --bs=8k --ioengine=psync \
    --random_distribution=$law --norandommap --time_based --runtime="$warm" --invalidate=0 \
    --output=/dev/null
  in0=$(stat_of pgpgin)
  [ "$tag" = pagecache ] || { r0=$(ccfs_reads_misses "$mnt"); l0=$(miss_ns "$mnt"); }
  in_cgroup "$cg" fio --name=r --filename="$file" --rw=randread --bs=8k --ioengine=psync \
    --random_distribution=$law --norandommap --time_based --runtime="$secs" \
    --invalidate=0 --output-format=json --output="$work/fio.json" >/dev/null
  in1=$(stat_of pgpgin)
  [ "$tag" = pagecache ] || { r1=$(ccfs_reads_misses "$mnt"); l1=$(miss_ns "$mnt"); rss=$(awk '/VmRSS/ {print $2}' "/proc/$(daemon_of "$mnt")/status"); split=$(split_of "$mnt")
    python3 -c "import json, sys; print(json.dumps(json.load(open(sys.argv[1])), separators=(',', ':')))" \
      "$mnt/.ccfs/stats.json" >"$out/stats-r$rnd-$(echo "$tag" | tr -c 'A-Za-z0-9=_.\n-' _).json"; }
  python3 - "$work/fio.json" "$tag" "$rnd" "$law" "$size" "$in0" "$in1" "$(stat_of cache)" "$(stat_of rss)" \
    "$rss" $r0 $r1 $l0 $l1 $split "$data" "$store" <<'PY' >>"$out/equal-ram.jsonl"
import json, sys
f, tag, rnd, law, size, in0, in1, cache, rss, drss, q0, m0, q1, m1, c0, s0, c1, s1, pct, codec, changes, trip, data, store = sys.argv[1:]
r = json.load(open(f))["jobs"][0]["read"]
n = r["total_ios"]
print(json.dumps({"target": tag, "round": int(rnd), "law": law, "size": size, "mean_us": r["clat_ns"]["mean"] / 1e3,
                  "reads": n, "pgpgin_per_read": (int(in1) - int(in0)) / n,
                  "cg_cache_mib": int(cache) / 2**20, "cg_rss_mib": int(rss) / 2**20,
                  "daemon_rss_mib": int(drss) / 1024,
                  "requests_per_read": (int(q1) - int(q0)) / n,
                  "misses_per_read": (int(m1) - int(m0)) / n,
                  "daemon_miss_us": (int(s1) - int(s0)) / 1e3 / max(1, int(c1) - int(c0)),
                  "data": data, "store": store, "final_percent": pct, "final_codec": codec, "split_changes": int(changes), "trip_us": float(trip)}))
PY
}
for rnd in $(seq "$rounds"); do
  for i in -1 $(seq 0 $(( ${#configs[@]} - 1 ))); do
    if [ "$i" -lt 0 ]; then tag=pagecache; else extra=${configs[$i]}; tag="kernel${extra:+,$extra}"; fi
    log "round $rnd: $tag"
    cgroup_make "$cg" "$memory_bytes"
    sync; echo 3 >/proc/sys/vm/drop_caches
    if [ "$tag" = pagecache ]; then
      run pagecache "$pc_file"
    else
      in_cgroup "$cg" "$ccfs" mount -f -o "memory=$ccfs_memory,raw_tier=kernel,compressed_percent=0${extra:+,$extra}" \
        "$dataset" "$mnt" 2>>"$work/daemon.log" &
      daemon_pid=$!
      for _ in $(seq 200); do grep -q " $mnt fuse" /proc/mounts && break; sleep 0.05; done
      grep -q " $mnt fuse" /proc/mounts || die "mount failed: $(tail -3 "$work/daemon.log")"
      run "$tag" "$mnt/f"
      fusermount3 -u "$mnt"; wait "$daemon_pid"; daemon_pid=""
    fi
    cgroup_remove "$cg"
  done
done
python3 - "$out/equal-ram.jsonl" <<'PY' | tee "$out/equal-ram.md"
import json, sys, collections
by = collections.defaultdict(list)
for l in open(sys.argv[1]):
    d = json.loads(l); by[d["target"]].append(d)
def rng(v, f="%.1f"):
    a, b = f % min(v), f % max(v)
    return a if a == b else a + "-" + b
keys = ["mean_us", "pgpgin_per_read", "cg_cache_mib", "cg_rss_mib", "daemon_rss_mib", "requests_per_read", "misses_per_read", "daemon_miss_us"]
print("| target | " + " | ".join(keys) + " | split at the end, by round |")
print("|---|" + "---|" * (len(keys) + 1))
for t, v in by.items():
    ends = ", ".join(str(d.get("final_percent", "-")) for d in v)
    print(f"| {t} | " + " | ".join(rng([d[k] for d in v], "%.2f" if "per_read" in k else "%.1f") for k in keys) + f" | {ends} |")
PY
if [ -x "$root/build/fuse_rtt" ]; then
  log "the null-FUSE round trip now"
  "$root/build/fuse_rtt" --dir /var/tmp --ops 20000 2>/dev/null | tee "$out/fuse-rtt.txt"
fi
