#!/usr/bin/env bash
# A read-only open on a read-write mount in kernel mode: the build before opens the store's file at
# OPEN unless a descriptor of it is kept (max_open_files / 4 of them), the build after opens
# nothing there and leaves the open to the first read that must reach the store. Same run, over
# sshfs and GlusterFS (scripts/stores.sh, client caches off, names and attributes kept 1 s): a
# tree of 10,000 files of 4-64 KiB (scripts/walk_bench.sh's), more than the 2,500 descriptors
# kept at the default limit of 20,000, read three times by four `cat`s (`find | xargs -P4 -n64
# cat`) through the store's own mount, the build before and the build after, in that order per
# round, each in a memory cgroup of MEMORY (ccfs: memory = 85% of it less 32 MiB, the mount's
# defaults otherwise) with the caches dropped first. At the default MEMORY the tree (340 MB, ~3x
# compressible) fits the tiers: the second and third passes are the case the change is for.
#
#   results/open-without-store/run.sh OUT OLD_CCFS [STORES] [ROUNDS] [MEMORY_MIB]
#
# Writes OUT/runs.jsonl (one line per pass) and OUT/table.md (median seconds per pass).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:?OUT}
old=${2:?OLD_CCFS}
stores=${3:-sshfs gluster}
rounds=${4:-3}
me=open-without-store
cd "$root"
source scripts/lib.sh
files=10000
memory_bytes=$((${5:-768} << 20))
bench_workspace open-without-store
eval "$(sed -n '/^make_tree() {/,/^}/p' scripts/walk_bench.sh)"
mkdir -p "$out" "$mnt"
jsonl=$out/runs.jsonl
: >"$jsonl"

passes() {  # STORE TARGET ROUND DIR
  local p t0 t1
  for p in 1 2 3; do
    t0=$(date +%s.%N)
    in_cgroup "$cg" sh -c 'find "$0" -type f -print0 | xargs -0 -P4 -n64 cat >/dev/null' "$4"
    t1=$(date +%s.%N)
    printf '{"store":"%s","target":"%s","round":%d,"pass":%d,"seconds":%.3f}\n' \
      "$1" "$2" "$3" "$p" "$(echo "$t1 - $t0" | bc -l)" >>"$jsonl"
  done
  log "$1 $2 round $3: $(tail -3 "$jsonl" | python3 -c 'import json,sys; print(" ".join("%.2f" % json.loads(l)["seconds"] for l in sys.stdin))') s"
}

for store in $stores; do
  dir=$work/$store
  case $store in
    sshfs) mkdir -p "$work/src"; scripts/stores.sh up sshfs "$dir" --source "$work/src" >/dev/null
           tree=$work/src ;;
    gluster) scripts/stores.sh up gluster "$dir" >/dev/null; tree=$dir ;;
    *) die "unknown store '$store' (sshfs, gluster)" ;;
  esac
  up_store=$store
  [ -d "$tree/d00" ] || make_tree "$tree"
  for round in $(seq 1 "$rounds"); do
    for target in store before after; do
      drop_caches "$store"
      cgroup_make "$cg" "$memory_bytes"
      if [ "$target" = store ]; then
        passes "$store" "$target" "$round" "$dir"
      else
        bin=$root/build/ccfs
        [ "$target" = before ] && bin=$old
        in_cgroup "$cg" "$bin" mount -o "memory=$(ccfs_memory_for "$memory_bytes")" "$dir" "$mnt" \
          >/dev/null 2>&1
        passes "$store" "$target" "$round" "$mnt"
        ccfs_unmount "$mnt"
      fi
      cgroup_remove "$cg"
    done
  done
  scripts/stores.sh down "$store" >/dev/null
  up_store=""
  rm -rf "$work/src"
done

python3 - "$jsonl" >"$out/table.md" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
print("| store | pass | store s | before s | after s | after / before | after / store |")
print("|---|---|---|---|---|---|---|")
for store in dict.fromkeys(r["store"] for r in rows):
    for p in (1, 2, 3):
        med = {t: statistics.median(r["seconds"] for r in rows
                                    if r["store"] == store and r["target"] == t and r["pass"] == p)
               for t in ("store", "before", "after")}
        print(f"| {store} | {p} | {med['store']:.2f} | {med['before']:.2f} | {med['after']:.2f} | "
              f"{med['after'] / med['before']:.2f} | {med['after'] / med['store']:.2f} |")
PY
cat "$out/table.md"
