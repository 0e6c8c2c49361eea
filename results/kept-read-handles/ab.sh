#!/usr/bin/env bash
# A tree of small files read twice over GlusterFS through a read-write mount in kernel mode, two
# builds alternating, beside the store's own mount: what keeping a read-only open's descriptor of
# the store's file past its close (src/fuse/read_handles.h) does to a program that reads the tree
# again. No memory cgroup: the tree (3,000 files of 4-64 KiB of text, 100 MB) fits in `memory`, so
# the second read is all hits and what is left per file is the open and close.
#
#   OLD=/path/to/old/ccfs NEW=build/ccfs ROUNDS=3 results/kept-read-handles/ab.sh [EXTRA_KEYS]
#
# EXTRA_KEYS (e.g. ,max_open_files=16000) is appended to every ccfs mount's options. Prints one
# line per run: target, round, read1 and read2 seconds (four cats: find | xargs -P4 -n64 cat).
# Needs root; brings GlusterFS up with scripts/stores.sh and takes it down after.
set -euo pipefail
cd "$(dirname "$0")/../.."
repo=$PWD
old=${OLD:?OLD=path of the older ccfs binary}
new=${NEW:-$repo/build/ccfs}
rounds=${ROUNDS:-3}
extra=${1:-}
work=$(mktemp -d /var/tmp/ccfs-kept-ab.XXXXXX)
export STORES_STATE_DIR=$work/state STORES_GLUSTER_NAME=ccfs-kept-ab
store=$work/store mnt=$work/mnt
cleanup() {
  set +e
  fusermount3 -u "$mnt" 2>/dev/null
  "$repo/scripts/stores.sh" down gluster >/dev/null 2>&1
  rm -rf "$work"
}
trap cleanup EXIT
mkdir -p "$mnt"
"$repo/scripts/stores.sh" up gluster "$store" >/dev/null
python3 - "$store" <<'PY'
import os, random, sys
random.seed(7)
root = sys.argv[1]
words = [''.join(random.choice('abcdefghij') for _ in range(random.randint(3, 9)))
         for _ in range(2000)]
for d in range(30):
    os.makedirs(f'{root}/d{d}', exist_ok=True)
    for k in range(100):
        size = random.randint(4096, 65536)
        out, n = [], 0
        while n < size:
            line = ' '.join(random.choice(words) for _ in range(12)) + '\n'
            out.append(line)
            n += len(line)
        with open(f'{root}/d{d}/f{k}.txt', 'w') as f:
            f.write(''.join(out)[:size])
PY
cold() { "$repo/scripts/stores.sh" evict gluster >/dev/null; sync; echo 3 >/proc/sys/vm/drop_caches; }
readall() { /usr/bin/time -f %e sh -c "find '$1' -type f -print0 | xargs -0 -P4 -n64 cat >/dev/null" 2>&1; }
for r in $(seq "$rounds"); do
  for target in old new store; do
    cold
    if [ "$target" = store ]; then
      echo "store round $r read1 $(readall "$store") read2 $(readall "$store")"
      continue
    fi
    bin=$old
    [ "$target" = new ] && bin=$new
    "$bin" mount -o "memory=104MiB$extra" "$store" "$mnt" 2>/dev/null
    echo "$target round $r read1 $(readall "$mnt") read2 $(readall "$mnt")"
    fusermount3 -u "$mnt"
    sleep 0.5
  done
done
