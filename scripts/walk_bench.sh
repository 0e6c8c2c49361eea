#!/usr/bin/env bash
# Many small files: ccfs against the store's own mount, same run, interleaved rounds, equal RAM.
#
#   scripts/walk_bench.sh [--stores "local sshfs gluster"] [--files N] [--memory SIZE]
#                         [--rounds R] [--timeouts S] [--ccfs-opts KEY=V,...] [--out DIR]
#                         [--base-bin CCFS] [--base-opts KEY=V,...]
#
# A tree of N files (default 100000) of 4-64 KiB, text-like lines (compresses ~3x), in 100
# directories of 10 sub-directories, made once per store. Per store and round, for "store" (the
# store's own mount, its files cached by the kernel: sshfs auto_cache, GlusterFS
# direct-io-mode=disable, as a user mounts it) and "ccfs" (a fresh ccfs mount over a second mount
# of the same store that the kernel does not cache, memory = 85% of SIZE - 32 MiB, the room of its
# own memory, plus --ccfs-opts), both with the caches dropped first (the kernel's and the store
# server's: stores.sh evict); each round starts one place further into the targets' order:
#   walk1  find DIR -type f -printf '%s\n'   (a lookup and the attributes of every name)
#   walk2  the same again at once
#   read1  4 readers cat every file (find | xargs -P4 cat), in the same order
#   read2  the same again (the data is SIZE x several: what a cache holds of it counts here)
# --base-bin CCFS adds "base": ccfs as "ccfs" is run, but from another build (a before beside an
# after, same run and rounds; its ratio to the store in a column of its own), with --base-opts in
# place of --ccfs-opts when given (a key the other build does not know).
# Equal RAM: the reader of "store" runs in a memory cgroup (v1) of SIZE, so the page cache of the
# store's files is held to it; for "ccfs" the reader and the daemon run in one cgroup of SIZE (the
# daemon's tiers, its own memory and the kernel's pages of its files, raw_tier = kernel).
# Timeouts: both mounts of the store and ccfs keep names and attributes S seconds (--timeouts,
# default 1: ccfs's defaults and stores.sh's); the stores' own client caches are otherwise off as
# scripts/stores.sh sets them.
#
# Writes OUT/walk.jsonl (one line per run: store, target, round, phase, seconds) and
# OUT/walk.md (median seconds per phase, the ratio ccfs/store, the CPU seconds each phase cost the
# machine, ccfs's daemon and the store's processes, the daemon's descriptors and RSS).
# Needs root (stores, cgroups, drop_caches). Leaves no mount, store, daemon or cgroup behind.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
me=walk_bench
source scripts/lib.sh

stores="local sshfs gluster"
files=100000
memory=256MiB
rounds=2
timeouts=1
ccfs_opts=""
base_bin=""
base_opts=unset
out="$root/results/walk-$(date +%Y%m%d-%H%M)"
while [ $# -gt 0 ]; do
  case "$1" in
    --stores) stores=$2; shift 2 ;;
    --files) files=$2; shift 2 ;;
    --memory) memory=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --timeouts) timeouts=$2; shift 2 ;;
    --ccfs-opts) ccfs_opts=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --base-bin) base_bin=$2; shift 2 ;;
    --base-opts) base_opts=$2; shift 2 ;;
    *) echo "walk_bench: unknown argument '$1'" >&2; exit 2 ;;
  esac
done

# Everything ccfs uses shares the cgroup of SIZE with its tiers: the daemon's own ~20 MiB, the index
# entries of its pages, the inode table and the kernel's objects of the files a walk names (FUSE
# and backing inodes and dentries), which grow with the tree. ccfs gets memory = 85% of SIZE less
# 32 MiB (at SIZE - 64 MiB over 50,000 files its daemon held 774 MiB at memory = 704 MiB, and the
# cgroup's OOM killer ended it).
equal_ram_checks "$memory"
[[ $timeouts =~ ^[0-9]+$ ]] || die "--timeouts $timeouts: want a whole number of seconds"
[ -z "$base_bin" ] || [ -x "$base_bin" ] || die "--base-bin $base_bin: not an executable"

bench_workspace walk-bench
mkdir -p "$out"

make_cgroup() { cgroup_make "$cg" "$memory_bytes"; }

# The tree, written once into DIR (python: fast, and the same bytes every time).
make_tree() {
  python3 - "$1" "$files" <<'EOF'
import os, random, sys
root, n = sys.argv[1], int(sys.argv[2])
words = [w.strip() for w in open('/usr/share/dict/words')] if os.path.exists('/usr/share/dict/words') else \
        ["%x" % (i * 2654435761 % 99991) for i in range(5000)]
rng = random.Random(1)
for k in range(n):
    d = os.path.join(root, "d%02d" % (k % 100), "e%d" % ((k // 100) % 10))
    if k < 1000: os.makedirs(d, exist_ok=True)
    size = 4096 + rng.randrange(60 * 1024)
    out, have = [], 0
    while have < size:
        line = " ".join(rng.choice(words) for _ in range(12)) + " %d\n" % rng.randrange(10**6)
        out.append(line); have += len(line)
    with open(os.path.join(d, "f%d" % k), "w") as f: f.write("".join(out)[:size])
EOF
}

jsonl=$out/walk.jsonl
: >"$jsonl"
timed() {  # STORE TARGET ROUND PHASE CMD...
  local s=$1 t=$2 r=$3 p=$4; shift 4
  local t0 t1 b0 c0 s0 b1 c1 s1
  read -r b0 c0 s0 < <(cpu_snapshot)
  t0=$(date +%s.%N)
  in_cgroup "$cg" "$@" >/dev/null
  t1=$(date +%s.%N)
  read -r b1 c1 s1 < <(cpu_snapshot)
  local sec busy ccfs_cpu store_cpu
  sec=$(echo "$t1 - $t0" | bc -l)
  busy=$(echo "$b1 - $b0" | bc -l)
  ccfs_cpu=$(echo "$c1 - $c0" | bc -l)
  store_cpu=$(echo "$s1 - $s0" | bc -l)
  printf '{"store":"%s","target":"%s","round":%d,"phase":"%s","seconds":%.3f,"busy_cpu_s":%.2f,"ccfs_cpu_s":%.2f,"store_cpu_s":%.2f}\n' \
    "$s" "$t" "$r" "$p" "$sec" "$busy" "$ccfs_cpu" "$store_cpu" >>"$jsonl"
  log "$s $t round $r $p: $(printf %.2f "$sec") s, CPU s: machine $busy, ccfs $ccfs_cpu, store $store_cpu"
}

phases() {  # STORE TARGET ROUND DIR
  local s=$1 t=$2 r=$3 d=$4
  timed "$s" "$t" "$r" walk1 find "$d" -type f -printf '%s\n'
  timed "$s" "$t" "$r" walk2 find "$d" -type f -printf '%s\n'
  timed "$s" "$t" "$r" read1 sh -c 'find "$0" -type f -print0 | xargs -0 -P4 -n64 cat' "$d"
  timed "$s" "$t" "$r" read2 sh -c 'find "$0" -type f -print0 | xargs -0 -P4 -n64 cat' "$d"
}


for store in $stores; do
  dir=$work/$store        # ccfs's backing directory: every read reaches the store
  pc_dir=$work/$store-pc  # the store's own mount, its files cached by the kernel
  src=$work/$store-source
  state=$work/state-$store
  case $store in
    local) mkdir -p "$dir"; tree=$dir; pc_dir=$dir ;;
    sshfs)
      mkdir -p "$src"
      store_up "$state" sshfs "$dir" --source "$src" --timeouts "$timeouts"
      store_up "$state-pc" sshfs "$pc_dir" --source "$src" --page-cache --timeouts "$timeouts"
      tree=$src ;;
    gluster)
      store_up "$state" gluster "$dir" --timeouts "$timeouts"
      volume=$(. "$state/gluster/info" && echo "$volume")
      STORES_GLUSTER_VOLUME=$volume store_up "$state-pc" gluster "$pc_dir" --page-cache \
        --timeouts "$timeouts"
      tree=$dir ;;
    *) die "--stores: unknown store '$store' (local, sshfs, gluster)" ;;
  esac
  if [ "$(find "$tree" -type f | wc -l)" -ne "$files" ]; then
    log "$store: writing $files files"
    rm -rf "${tree:?}"/d*
    make_tree "$tree"
    # Walked once, untimed: the first walk of a tree just written to GlusterFS took 42-80 s, later
    # ones 14-17 s, and would count against whichever target a first round runs first.
    sync
    find "$tree" -type f -printf '%s\n' >/dev/null
  fi
  mkdir -p "$mnt"
  for round in $(seq 1 "$rounds"); do
    # Each target in each place in turn: a place fixed for one target (with --base-bin, "ccfs"
    # was in the middle of every round) would count that place's cost against it.
    order=(store ccfs ${base_bin:+base})
    turn=$(((round - 1) % ${#order[@]}))
    targets="${order[*]:turn} ${order[*]:0:turn}"
    for target in $targets; do
      STORES_STATE_DIR=$state drop_caches "$store"
      make_cgroup
      if [ "$target" = store ]; then
        phases "$store" store "$round" "$pc_dir"
        rmdir "$cg"
        continue
      fi
      bin=$ccfs opts=$ccfs_opts
      if [ "$target" = base ]; then
        bin=$base_bin
        [ "$base_opts" = unset ] || opts=$base_opts
      fi
      in_cgroup "$cg" "$bin" mount -o \
        "memory=$ccfs_memory,entry_timeout=$timeouts,attr_timeout=$timeouts${opts:+,$opts}" \
        "$dir" "$mnt" >/dev/null
      phases "$store" "$target" "$round" "$mnt"
      python3 - "$mnt" "$store" "$round" "$target" >>"$jsonl" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1] + "/.ccfs/stats.json"))
dm = d.get("daemon", {})
print(json.dumps({"store": sys.argv[2], "target": sys.argv[4], "round": int(sys.argv[3]),
                  "phase": "daemon", "open_fds": dm.get("open_fds"), "rss_bytes": dm.get("rss_bytes"),
                  "hit_ratio": d.get("hit_ratio")}))
EOF
      ccfs_unmount "$mnt"
      rmdir "$cg"
    done
  done
  stores_down
done

python3 - "$jsonl" "$files" "$memory" "$timeouts" "${ccfs_opts:-none}" >"$out/walk.md" <<'EOF'
import os, sys
sys.path.insert(0, "bench")
from report_lib import median, read_jsonl
rows = read_jsonl(sys.argv[1])
print(f"{sys.argv[2]} files of 4-64 KiB, memory cgroups of {sys.argv[3]} (ccfs: memory = 85% of that - 32 MiB), "
      f"names and attributes kept {sys.argv[4]} s on both sides, ccfs's other keys: {sys.argv[5]}; "
      "median seconds of the rounds; "
      "ratio = ccfs / store (below 1: ccfs faster)\n")
base = any(r["target"] == "base" for r in rows)
print("| store | phase | store s | ccfs s | ratio |" + (" base s | base ratio |" if base else ""))
print("|---|---|---|---|---|" + ("---|---|" if base else ""))
for store in dict.fromkeys(r["store"] for r in rows):
    for phase in ["walk1", "walk2", "read1", "read2"]:
        def med(t):
            return median([r["seconds"] for r in rows
                           if r["store"] == store and r["target"] == t and r["phase"] == phase],
                          float("nan"))
        s, c = med("store"), med("ccfs")
        line = f"| {store} | {phase} | {s:.2f} | {c:.2f} | {c / s:.2f} |"
        if base:
            b = med("base")
            line += f" {b:.2f} | {b / s:.2f} |"
        print(line)
print("\nCPU seconds per phase (medians): the machine's busy time of its "
      f"{os.cpu_count()} CPUs, ccfs's daemon, the store's clients and servers\n")
targets = [t for t in ["store", "ccfs", "base"] if any(r["target"] == t for r in rows)]
print("| store | phase | " + " | ".join(f"{t} busy, ccfs, store" for t in targets) + " |")
print("|---|---|" + "---|" * len(targets))
for store in dict.fromkeys(r["store"] for r in rows):
    for phase in ["walk1", "walk2", "read1", "read2"]:
        cells = []
        for t in targets:
            mine = [r for r in rows if r["store"] == store and r["target"] == t and r["phase"] == phase
                    and "busy_cpu_s" in r]
            cells.append(", ".join(f"{median([r[k] for r in mine], float('nan')):.1f}"
                                   for k in ["busy_cpu_s", "ccfs_cpu_s", "store_cpu_s"]))
        print(f"| {store} | {phase} | " + " | ".join(cells) + " |")
print()
for r in rows:
    if r["phase"] == "daemon":
        rss = (r["rss_bytes"] or 0) / 1048576
        print(f"- {r['store']} {r['target']} round {r['round']}: daemon open descriptors "
              f"{r['open_fds']}, RSS {rss:.1f} MiB, hit ratio {r['hit_ratio']}")
EOF
cat "$out/walk.md"
