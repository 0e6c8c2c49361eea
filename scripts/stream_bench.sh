#!/usr/bin/env bash
# Cold streaming reads: ccfs against the page cache on the same store, same run, interleaved
# rounds, equal RAM.
#
#   scripts/stream_bench.sh [--stores "local sshfs gluster delay:100"] [--file-size SIZE]
#                           [--memory SIZE] [--rounds R] [--configs "daemon:1MiB kernel:0 ..."]
#                           [--phases "dd cat fio par4 pareto uniform rand8 epochs"]
#                           [--scan-data text|hex] [--file-data hex|mix] [--out DIR]
#
# Per store, a file `big` of --file-size (default 1GiB) and four files p0..p3 of a quarter of it,
# written once. --file-data hex (default): text-like hex words, 2x per 8 KiB page with zstd level
# 1, and lz4 keeps almost nothing of it (results/epochs-unit-of-compression); mix: the files of
# `ccfs mkdata`'s default mix (text, binaries, database pages, random, zeros; seed 1) one after
# another, each p the matching quarter of big, so that both codecs meet the data of the demo. delay:R is bench/delay_fs over a local source
# with a 200 µs wait per read and a link of R MiB/s shared by every read (an EMULATED store, so
# named in the results). Each store is mounted twice (stores.sh, two state directories): a mount
# whose every read reaches the store (sshfs direct_io, GlusterFS direct-io-mode, delay_fs
# direct_io), ccfs's backing directory; and the same store with --page-cache, whose pages the
# kernel caches: the page cache baseline "store" (local: one directory for both). The GlusterFS
# volume is made with --remote-dio, so ccfs's O_DIRECT misses and the page cache's buffered ones
# reach the brick alike. Per store and round, for "store" and each ccfs configuration
# RAW_TIER:READAHEAD[:OPTIONS] (OPTIONS: more -o keys, e.g. request_threads=16; a fresh ccfs mount
# over the store's first mount per phase, memory = 85% of --memory - 32 MiB, the room of its own
# memory), with the caches dropped first (the kernel's and the store server's):
#   dd    dd if=big of=/dev/null bs=1M
#   cat   cat big                              (128 KiB reads)
#   fio   fio --rw=read --bs=128k on big       (psync, QD1)
#   par4  cat p0 & cat p1 & cat p2 & cat p3    (four readers of different files at once)
# and, when asked for with --phases (they are not streams: they check that random readers do not
# pay for read-ahead, e.g. --configs "daemon:1MiB daemon:0"):
#   pareto  fio QD1 random 8 KiB reads of big, 20 s, random_distribution=pareto:0.2 (psync)
#   uniform the same, uniformly random
#   rand8   eight fio jobs at once, each QD1 uniformly random 8 KiB reads of big, 20 s: how many
#           misses a configuration keeps in flight (the page cache keeps one per reader)
#   epochs  repeated scans: a directory scan/ of 4 MiB files, twice --memory in all, read whole
#           by four readers (xargs -P4 cat) in an order shuffled per epoch, three
#           epochs in one mount (caches dropped before the first only), recorded as epoch1..3.
#           Data that fits in RAM only compressed: an LRU page cache evicts each epoch what the
#           next needs first. --scan-data: text (default) is `ccfs mkdata --mix text=100` cut into
#           4 MiB files (2.6x per 8 KiB page with zstd level 1, 1.7x with lz4); hex is the
#           hex-word block above (2x with zstd; the result sets epochs-* of 2026-11-28 to
#           2026-12-01 used it).
#   hot     NOT a comparison at equal RAM but the bound on any: ccfs (daemon mode) with memory
#           twice the file, outside any cgroup, reads big once with cat, then again with cat and
#           with dd bs=1M; the second and third (every page a raw hit: a FUSE trip and a copy per
#           request) are recorded as hot-cat and hot-dd. ccfs cannot stream a cold file faster
#           than it streams a cached one.
# Equal RAM: the reader of "store" runs in a memory cgroup (v1) of --memory, so the page cache of
# the store's files is held to it; for ccfs the reader and the daemon run in one cgroup of that
# size (the daemon's tiers, its own memory and, raw_tier = kernel, the kernel's pages of its files).
#
# Writes OUT/stream.jsonl (one line per run: store, target, round, phase, seconds, MiB/s and, for
# ccfs, the hit ratio, backing reads and read-ahead counters) and OUT/stream.md (median MiB/s per
# phase and the ratio to the store's page cache; above 1: ccfs faster). Needs root. Leaves no
# mount, store, daemon or cgroup behind.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
me=stream_bench
source scripts/lib.sh

stores="local sshfs gluster"
file_size=1GiB
memory=256MiB
rounds=2
configs="daemon:1MiB daemon:0 kernel:1MiB"
phases="dd cat fio par4"
scan_data=text
file_data=hex
out="$root/results/stream-$(date +%Y%m%d-%H%M)"
while [ $# -gt 0 ]; do
  case "$1" in
    --stores) stores=$2; shift 2 ;;
    --file-size) file_size=$2; shift 2 ;;
    --memory) memory=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --configs) configs=$2; shift 2 ;;
    --phases) phases=$2; shift 2 ;;
    --scan-data) scan_data=$2; shift 2 ;;
    --file-data) file_data=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    *) echo "stream_bench: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
equal_ram_checks "$memory"
case $scan_data in text|hex) ;; *) die "--scan-data: '$scan_data' is not text or hex" ;; esac
case $file_data in mix|hex) ;; *) die "--file-data: '$file_data' is not hex or mix" ;; esac
command -v fio >/dev/null || die "fio not found (Debian fio)"
size_bytes=$(to_bytes "$file_size")

bench_workspace stream-bench
mkdir -p "$out"

# The files, written once into DIR: a 16 MiB text-like block repeated (each 8 KiB page still
# compresses on its own bytes only).
make_files() {
  local d=$1 block=$work/block
  if [ "$file_data" = mix ]; then
    rm -rf "$work/mix"
    "$ccfs" mkdata --size "$file_size" --seed 1 "$work/mix" >/dev/null
    { find "$work/mix" -type f -print0 | sort -z | xargs -0 cat || true; } |
      head -c "$size_bytes" >"$d/big"
    rm -rf "$work/mix"
    local i
    for i in 0 1 2 3; do
      dd if="$d/big" of="$d/p$i" bs=1M skip=$(( i * size_bytes / 4 >> 20 )) \
        count=$(( size_bytes / 4 >> 20 )) status=none
    done
    echo mix >"$d/.big-kind"
    return
  fi
  [ -f "$block" ] || python3 - "$block" <<'PY'
import random, sys
rng = random.Random(1)
words = ["%x" % (i * 2654435761 % 99991) for i in range(5000)]
out, have = [], 0
while have < 16 << 20:
    line = " ".join(rng.choice(words) for _ in range(12)) + " %d\n" % rng.randrange(10**6)
    out.append(line); have += len(line)
open(sys.argv[1], "w").write("".join(out)[:16 << 20])
PY
  local n=$(( size_bytes / (16 << 20) ))
  [ "$n" -ge 4 ] || die "--file-size $file_size: at least 64MiB"
  for f in big p0 p1 p2 p3; do
    local k=$n
    [ "$f" = big ] || k=$(( n / 4 ))
    for _ in $(seq "$k"); do cat "$block"; done >"$d/$f"
  done
  echo hex >"$d/.big-kind"
}

# The scan/ directory of the epochs phase: twice --memory of 4 MiB files. text: mkdata's text
# kind, seeded, cut into files; hex: each a different quarter of the block after a line of its own.
# A file scan/.kind names the data, so a directory written by the other kind is written again.
scan_files=$(( 2 * $(to_bytes "$memory") / (4 << 20) ))
make_scan_files() {
  rm -rf "$1/scan" "$work/scan-text"
  mkdir -p "$1/scan"
  if [ "$scan_data" = text ]; then
    "$ccfs" mkdata --size "$(( scan_files * 4 ))MiB" --mix text=100 --seed 1 "$work/scan-text" \
      >/dev/null
    cat "$work/scan-text"/* | split -b 4MiB -d -a 4 - "$1/scan/f"
    rm -rf "$work/scan-text"
    echo text >"$1/scan/.kind"
    return
  fi
  python3 - "$work/block" "$1/scan" "$scan_files" <<'PY'
import sys
block = open(sys.argv[1], "rb").read()
for i in range(int(sys.argv[3])):
    head = b"file %d\n" % i
    at = (i % 4) * (4 << 20)
    open(f"{sys.argv[2]}/f{i}", "wb").write(head + block[at:at + (4 << 20) - len(head)])
PY
  echo hex >"$1/scan/.kind"
}

# RAW_TIER:READAHEAD[:OPTIONS] -> the -o keys of that configuration.
ccfs_options() {
  local raw=${1%%:*} rest=${1#*:} extra=""
  local ra=${rest%%:*}
  [ "$rest" != "$ra" ] && extra=,${rest#*:}
  echo "raw_tier=$raw,readahead=$ra$extra"
}

jsonl=$out/stream.jsonl
: >"$jsonl"
# STORE TARGET ROUND PHASE DIR: runs one phase in the cgroup, records it (and ccfs's counters).
phase() {
  local s=$1 t=$2 r=$3 p=$4 d=$5 bytes=$size_bytes
  local t0 t1
  t0=$(date +%s.%N)
  case $p in
    dd) in_cgroup "$cg" dd if="$d/big" of=/dev/null bs=1M status=none ;;
    cat) in_cgroup "$cg" cat "$d/big" >/dev/null ;;
    fio) in_cgroup "$cg" fio --name=seq --filename="$d/big" --rw=read --bs=128k --ioengine=psync \
           --invalidate=0 --output=/dev/null ;;
    par4) in_cgroup "$cg" sh -c 'for f in p0 p1 p2 p3; do cat "$0/$f" >/dev/null & done; wait' "$d"
          bytes=$(( 4 * (size_bytes / (16 << 20) / 4) * (16 << 20) )) ;;
    pareto|uniform)
      local law=""
      [ "$p" = pareto ] && law=--random_distribution=pareto:0.2
      in_cgroup "$cg" fio --name=rnd --filename="$d/big" --rw=randread --bs=8k --ioengine=psync \
        --invalidate=0 $law --time_based --runtime=20 --output-format=json --output="$work/fio.json" ;;
    rand8)
      in_cgroup "$cg" fio --name=rnd --filename="$d/big" --rw=randread --bs=8k --ioengine=psync \
        --invalidate=0 --numjobs=8 --group_reporting --time_based --runtime=20 \
        --output-format=json --output="$work/fio.json" ;;
    epoch*)
      # Shuffled per epoch (seeded by its number), four readers.
      (cd "$d/scan" && ls | shuf --random-source=<(yes "${p#epoch}") |
         in_cgroup "$cg" xargs -P4 -n4 cat >/dev/null)
      bytes=$(( scan_files * (4 << 20) )) ;;
    hot-cat) in_cgroup "$cg" cat "$d/big" >/dev/null ;;
    hot-dd) in_cgroup "$cg" dd if="$d/big" of=/dev/null bs=1M status=none ;;
    *) die "--phases: unknown phase '$p' (dd, cat, fio, par4, pareto, uniform, rand8, epochs, hot)" ;;
  esac
  t1=$(date +%s.%N)
  python3 - "$s" "$t" "$r" "$p" "$t0" "$t1" "$bytes" "$d" "$work/fio.json" >>"$jsonl" <<'PY'
import json, os, sys
s, t, r, p, t0, t1, b, d, fio = sys.argv[1:]
sec = float(t1) - float(t0)
row = {"store": s, "target": t, "round": int(r), "phase": p, "seconds": round(sec, 3),
       "mib_s": round(int(b) / 1048576 / sec, 1)}
if p in ("pareto", "uniform", "rand8"):
    rd = json.load(open(fio))["jobs"][0]["read"]
    b = str(rd["io_bytes"])
    row.update({"mib_s": round(rd["bw_bytes"] / 1048576, 2), "mean_us": round(rd["clat_ns"]["mean"] / 1e3, 1)})
st = os.path.join(d, ".ccfs/stats.json")
if t != "store" and os.path.exists(st):
    j = json.load(open(st))
    row.update({k: j.get(k) for k in ["hit_ratio", "misses", "backing_reads", "readahead_pages",
                                      "readahead_hits", "readahead_wasted", "stalls"]})
    # Epochs after the first: the hit ratio of this epoch's reads alone (the counters are since mount).
    prev = os.path.join(os.path.dirname(fio), "epoch-stats.json")
    if p.startswith("epoch") and p != "epoch1" and os.path.exists(prev):
        q = json.load(open(prev))
        reads = j["reads"] - q["reads"]
        hits = j["raw_hits"] + j["compressed_hits"] - q["raw_hits"] - q["compressed_hits"]
        row["hit_ratio"] = round(hits / reads, 4) if reads else None
    if p.startswith("epoch"):
        json.dump(j, open(prev, "w"))
    row["backing_reads_per_mib"] = round(j.get("backing_reads", 0) / (int(b) / 1048576), 2)
print(json.dumps(row))
PY
  log "$s $t round $r $p: $(tail -1 "$jsonl")"
}

for store in $stores; do
  kind=${store%%:*}
  dir=$work/$kind       # ccfs's backing directory: every read reaches the store
  pc_dir=$work/$kind-pc # the page cache baseline: the same store mounted so the kernel caches it
  src=$work/$kind-source
  state=$work/state-$kind
  case $store in
    local) mkdir -p "$dir"; files=$dir; pc_dir=$dir ;;
    sshfs|delay:*)
      mkdir -p "$src"
      opts=()
      [ "$kind" = delay ] && opts=(--delay-us 200 --mib-per-s "${store#delay:}")
      store_up "$state" "$kind" "$dir" --source "$src" "${opts[@]}"
      store_up "$state-pc" "$kind" "$pc_dir" --source "$src" --page-cache "${opts[@]}"
      files=$src ;;
    gluster)
      # --remote-dio: the client does not forward ccfs's O_DIRECT, so the brick answers both
      # mounts' misses alike (through the server's page cache, dropped before every phase).
      store_up "$state" gluster "$dir" --remote-dio
      volume=$(. "$state/gluster/info" && echo "$volume")
      STORES_GLUSTER_VOLUME=$volume store_up "$state-pc" gluster "$pc_dir" --page-cache
      files=$dir ;;
    *) die "--stores: unknown store '$store' (local, sshfs, gluster, delay:MIB_PER_S)" ;;
  esac
  if [ "$(stat -c %s "$files/big" 2>/dev/null || echo 0)" -ne "$size_bytes" ] ||
     [ "$(cat "$files/.big-kind" 2>/dev/null || echo hex)" != "$file_data" ]; then
    log "$store: writing the files"
    make_files "$files"
  fi
  if [[ " $phases " == *" epochs "* ]] &&
     { [ "$(ls "$files/scan" 2>/dev/null | wc -l)" -ne "$scan_files" ] ||
       [ "$(cat "$files/scan/.kind" 2>/dev/null)" != "$scan_data" ]; }; then
    log "$store: writing scan/ ($scan_files files of 4 MiB, $scan_data)"
    make_scan_files "$files"
  fi
  mkdir -p "$mnt"
  for round in $(seq 1 "$rounds"); do
    targets="store $configs"
    # Interleaved: every other round runs the targets in the reverse order.
    [ $((round % 2)) = 0 ] && targets=$(echo "$targets" | tr ' ' '\n' | tac | tr '\n' ' ')
    for target in $targets; do
      if [ "$target" != store ] && [[ " $phases " == *" hot "* ]] && [ "${target%%:*}" = daemon ]; then
        # The bound (see the top): no cgroup limit, memory twice the file.
        cgroup_make "$cg" $(( 1 << 62 ))
        in_cgroup "$cg" "$ccfs" mount -o "memory=$(( 2 * size_bytes >> 20 ))MiB,$(ccfs_options "$target")" \
          "$dir" "$mnt" >/dev/null
        cat "$mnt/big" >/dev/null
        phase "$store" "ccfs-$target" "$round" hot-cat "$mnt"
        phase "$store" "ccfs-$target" "$round" hot-dd "$mnt"
        ccfs_unmount "$mnt"
        cgroup_remove "$cg"
      fi
      for p in $phases; do
        [ "$p" = hot ] && continue
        STORES_STATE_DIR=$state drop_caches "$kind"
        cgroup_make "$cg" "$memory_bytes"
        # epochs: three phases in one mount and cgroup.
        steps=$p
        [ "$p" = epochs ] && steps="epoch1 epoch2 epoch3"
        if [ "$target" = store ]; then
          for step in $steps; do phase "$store" store "$round" "$step" "$pc_dir"; done
        else
          in_cgroup "$cg" "$ccfs" mount -o "memory=$ccfs_memory,$(ccfs_options "$target")" \
            "$dir" "$mnt" >/dev/null
          for step in $steps; do phase "$store" "ccfs-$target" "$round" "$step" "$mnt"; done
          ccfs_unmount "$mnt"
        fi
        cgroup_remove "$cg"
      done
    done
  done
  stores_down
done

python3 - "$jsonl" "$file_size" "$memory" "$ccfs_memory" >"$out/stream.md" <<'PY'
import sys
sys.path.insert(0, "bench")
from report_lib import median, read_jsonl
rows = read_jsonl(sys.argv[1])
print(f"Cold streaming reads of {sys.argv[2]} (par4: four files of a quarter each), memory cgroups "
      f"of {sys.argv[3]} (ccfs memory = {sys.argv[4]}); median MiB/s of the rounds; ratio = ccfs / "
      "the store's page cache (above 1: ccfs faster); ccfs targets are RAW_TIER:READAHEAD.\n")
print("| store | phase | target | MiB/s | ratio | hit ratio | backing reads / MiB | read ahead | ra hits | ra wasted |")
print("|---|---|---|---|---|---|---|---|---|---|")
def med(v): return median(v, float("nan"))
for store in dict.fromkeys(r["store"] for r in rows):
    for phase in ["dd", "cat", "fio", "par4", "pareto", "uniform", "rand8", "epoch1", "epoch2",
                  "epoch3", "hot-cat", "hot-dd"]:
        sel = [r for r in rows if r["store"] == store and r["phase"] == phase]
        if not sel:
            continue
        # The hot bound is set against the cold page cache's cat or dd.
        cold = phase.replace("hot-", "")
        base = med([r["mib_s"] for r in rows if r["store"] == store and r["phase"] == cold
                    and r["target"] == "store"])
        for t in dict.fromkeys(r["target"] for r in sel):
            tr = [r for r in sel if r["target"] == t]
            m = med([r["mib_s"] for r in tr])
            if t == "store":
                print(f"| {store} | {phase} | page cache | {m:.0f} | 1 | | | | | |")
                continue
            g = lambda k: med([r.get(k) or 0 for r in tr])
            print(f"| {store} | {phase} | {t} | {m:.0f} | {m / base:.2f} | {g('hit_ratio'):.3f} | "
                  f"{g('backing_reads_per_mib'):.1f} | {g('readahead_pages'):.0f} | "
                  f"{g('readahead_hits'):.0f} | {g('readahead_wasted'):.0f} |")
PY
cat "$out/stream.md"
