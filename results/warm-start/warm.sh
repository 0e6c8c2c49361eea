#!/usr/bin/env bash
# The first minute after a mount, on network stores: cold, remounted with `persist`, and cold with
# `ccfs warmup` beside the reader; and warm-up speed against the store's streaming speed.
#
#   results/warm-start/warm.sh [--stores "sshfs gluster"] [--laws "pareto uniform"] [--rounds N]
#                              [--memory 256MiB] [--seconds 60] [--no-stream]
#
# As root, from the checkout, after `cmake --build build`. Per store (scripts/stores.sh, its
# clients' caches off; GlusterFS with --remote-dio): one file `big` of 2 x memory of text and
# database pages (`ccfs mkdata --mix text=50,db=50`, about 3x with zstd). ccfs over the store:
# memory as given, zstd, compressed_percent = 75, raw_tier = daemon, everything else default.
# The reader: fio, QD1 8 KiB random reads of big (psync), --random_distribution pareto:0.2 or
# random (uniform), a mean latency per second. --norandommap: without it fio reads every block of
# the file once, in a random order, before it reads any again (a uniform reader then hits nothing
# until the file is read whole, and everything after).
#
# Per store, round and law:
#   before   mount with persist = DIR; the reader 30 s (the cache fills), then one window: its hit
#            ratio is the one before the unmount; unmount (the cache file is written).
#   then, in an order turned every round, each with the store's and the kernel's caches dropped:
#   persist  mount again with persist; the reader starts at once.
#   cold     mount without persist; the reader starts at once.
#   warmup   mount without persist; `ccfs warmup MNT .` and the reader start at once, side by side.
#   Each prints the hit ratio and mean µs per 10 s of the reader's first SECONDS.
# Per store and round, once: the store's streaming speed (dd bs=1M of big, one stream; fio, four
# sequential streams of 1 MiB reads over quarters of big) against `ccfs warmup` of big alone on a
# cold mount, with C = 75 (zstd, then lz4) and with C = 0 (what it prints: MiB read from the store
# per second), each
# with the machine's busy CPU seconds meanwhile and the bound they set: size x nproc / (dd's busy
# CPU s + the warm-up's compression CPU s); not with --no-stream.
# Everything it brings up (stores, mounts) goes at exit; the data stays under /var/tmp/ccfs-warm.
set -euo pipefail
me=warm.sh
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/scripts/lib.sh"

stores="sshfs gluster" laws="pareto uniform" rounds=2 memory=256MiB seconds=60 stream=1
while [ $# -gt 0 ]; do
  case $1 in
    --stores) stores=$2; shift 2 ;;
    --laws) laws=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --memory) memory=$2; shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    --no-stream) stream=0; shift ;;
    *) die "unknown argument $1" ;;
  esac
done
equal_ram_checks "$memory"
command -v fio >/dev/null || die "needs fio (scripts/setup.sh)"
bench_workspace warm
size_bytes=$((2 * memory_bytes))
persist=$work/persist
daemon_log=$work/daemon.log
opts=memory=$memory,compressor=zstd,compressed_percent=75,raw_tier=daemon
mkdir -p "$mnt" "$persist"

mount_bg() {  # mount_bg STORE OPTIONS: ccfs mount -f in the background, stderr to $daemon_log
  "$ccfs" mount -f -o "$2" "$1" "$mnt" 2>>"$daemon_log" &
  daemon=$!
  for _ in $(seq 500); do grep -q " $mnt fuse.ccfs " /proc/mounts && return; sleep 0.02; done
  die "mount failed: $(tail -3 "$daemon_log")"
}
umount_fg() { fusermount3 -u "$mnt"; wait "$daemon"; }
# busy: the machine's busy CPU time so far (/proc/stat, ticks); cpu_since TICKS: seconds since.
busy() { awk '/^cpu /{print $2 + $3 + $4 + $7 + $8}' /proc/stat; }
cpu_since() { python3 -c "print('%.2f' % (($(busy) - $1) / $(getconf CLK_TCK)))"; }
# counts: "READS HITS" from one read of stats.json (reads == hits + misses holds within one).
counts() {
  python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(d['reads'], d['raw_hits'] + d['compressed_hits'])" "$mnt/.ccfs/stats.json"
}

# reader LAW SECONDS: fio on big in the background; $fio_pid, per-second latency log under $work.
reader() {
  local dist=random
  [ "$1" = pareto ] && dist=pareto:0.2
  rm -f "$work"/lat_*.log
  fio --name=r --filename="$mnt/big" --rw=randread --bs=8k --ioengine=psync --iodepth=1 \
      --invalidate=0 --random_distribution="$dist" --norandommap --time_based --runtime="$2" \
      --write_lat_log="$work/lat" --log_avg_msec=1000 --output-format=json \
      >"$work/fio.json" 2>/dev/null &
  fio_pid=$!
}
# windows LAW SECONDS: the reader for SECONDS; prints "hit h1 h2 ... us u1 u2 ..." per 10 s.
windows() {
  local n=$(($2 / 10)) i r h hr=() reads hitsv
  read -r r h < <(counts)
  reads=("$r"); hitsv=("$h")
  reader "$1" "$2"
  local t0=$SECONDS
  for ((i = 1; i <= n; i++)); do
    while ((SECONDS - t0 < i * 10)); do sleep 0.05; done
    read -r r h < <(counts)
    hr+=("$(python3 -c "print('%.3f' % (($h - ${hitsv[-1]}) / max(1, $r - ${reads[-1]})))")")
    reads+=("$r"); hitsv+=("$h")
  done
  wait "$fio_pid"
  echo "hit ${hr[*]} us $(python3 - "$work/lat_clat.1.log" "$n" <<'PY'
import sys
rows = [l.split(',') for l in open(sys.argv[1])]
out = []
for i in range(int(sys.argv[2])):
    v = [int(r[1]) / 1e3 for r in rows if i * 10000 <= int(r[0]) < (i + 1) * 10000]
    out.append('%.1f' % (sum(v) / len(v)) if v else 'nan')
print(' '.join(out))
PY
)"
}

echo "# warm.sh --stores '$stores' --laws '$laws' --rounds $rounds --memory $memory" \
     "--seconds $seconds; $(nproc) CPUs; load $(cat /proc/loadavg)"
for kind in $stores; do
  dir=$work/$kind src=$work/$kind-source state=$work/state-$kind
  case $kind in
    sshfs) mkdir -p "$src"; store_up "$state" sshfs "$dir" --source "$src"; files=$src ;;
    gluster) store_up "$state" gluster "$dir" --remote-dio; files=$dir ;;
    *) die "--stores: $kind is not sshfs or gluster" ;;
  esac
  if [ "$(stat -c %s "$files/big" 2>/dev/null || echo 0)" -ne "$size_bytes" ]; then
    log "$kind: writing big ($size_bytes bytes)"
    rm -rf "$work/gen"
    "$ccfs" mkdata --size "$((size_bytes >> 20))MiB" --mix text=50,db=50 "$work/gen" >/dev/null
    cat "$work"/gen/* | head -c "$size_bytes" >"$files/big"
    rm -rf "$work/gen"
  fi
  for round in $(seq "$rounds"); do
    if ((stream)); then
      drop_caches "$kind"
      t0=$(date +%s.%N) c0=$(busy)
      dd if="$dir/big" of=/dev/null bs=1M 2>/dev/null
      dd_mib=$(python3 -c "print('%.1f' % ($size_bytes / 2**20 / ($(date +%s.%N) - $t0)))")
      dd_cpu=$(cpu_since "$c0")
      drop_caches "$kind"
      fio --name=s --filename="$dir/big" --rw=read --bs=1M --ioengine=psync --numjobs=4 \
          --size=$((size_bytes / 4)) --offset_increment=$((size_bytes / 4)) --invalidate=0 \
          --group_reporting --output-format=json >"$work/stream.json" 2>/dev/null
      fio4_mib=$(python3 -c "import json; print('%.1f' % (json.load(open('$work/stream.json'))['jobs'][0]['read']['bw'] / 1024))")
      echo "$kind $round stream dd_MiB/s $dd_mib (busy CPU s $dd_cpu) fio4_MiB/s $fio4_mib"
      for cfg in zstd:75 lz4:75 zstd:0; do
        c=${cfg#*:}
        drop_caches "$kind"
        mount_bg "$dir" "$(echo "$opts" | sed "s/compressed_percent=75/compressed_percent=$c/; s/compressor=zstd/compressor=${cfg%:*}/")"
        c0=$(busy)
        warm_line=$("$ccfs" warmup -q "$mnt" big | head -1)
        warm_cpu=$(cpu_since "$c0")
        # The CPU bound of a warm-up that compresses: it does the store's work per MiB (dd's busy
        # CPU per MiB, dd's copy included) and its compression (the pool's CPU, read from the
        # daemon), on nproc CPUs at most.
        bound=$(python3 -c "import json; d = json.load(open('$mnt/.ccfs/stats.json')); z = d['cpu_compress_ns'] / 1e9; print('compression CPU s %.2f, CPU bound %.1f MiB/s' % (z, $size_bytes / 2**20 * $(nproc) / ($dd_cpu + z)))")
        echo "$kind $round warmup alone ${cfg%:*} C=$c: $warm_line (busy CPU s $warm_cpu; $bound)"
        umount_fg
      done
    fi
    for law in $laws; do
      rm -f "$persist"/*
      drop_caches "$kind"
      mount_bg "$dir" "$opts,persist=$persist"
      reader "$law" 30; wait "$fio_pid"
      echo "$kind $round $law before $(windows "$law" 10)"
      umount_fg
      order=(persist cold warmup)
      case $((round % 3)) in 2) order=(cold warmup persist) ;; 0) order=(warmup persist cold) ;; esac
      for what in "${order[@]}"; do
        drop_caches "$kind"
        case $what in
          persist) mount_bg "$dir" "$opts,persist=$persist" ;;
          *) mount_bg "$dir" "$opts" ;;
        esac
        warm_pid=""
        if [ "$what" = warmup ]; then
          "$ccfs" warmup -q "$mnt" . >"$work/warmup.out" 2>&1 &
          warm_pid=$!
        fi
        line=$(windows "$law" "$seconds")
        echo "$kind $round $law $what $line"
        if [ -n "$warm_pid" ]; then
          wait "$warm_pid" || true
          sed "s/^/# $kind $round $law warmup: /" "$work/warmup.out"
        fi
        umount_fg
      done
      grep 'persist: \(wrote\|restored\)' "$daemon_log" | sed "s/^/# $kind $round $law /" || true
      : >"$daemon_log"
    done
    echo "# load $(cat /proc/loadavg)"
  done
  stores_down
done
