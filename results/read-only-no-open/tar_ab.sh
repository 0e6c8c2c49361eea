#!/usr/bin/env bash
# Two ccfs builds against each other and the local disk: `tar cf - . | cat` of a tree of 2,000
# text files of 1-64 KiB (67 MB, 20 directories), cold (a fresh mount, caches dropped) and at
# once again (warm), mounted `ro` in kernel mode at the defaults, no cgroup; rounds interleave
# the builds. Prints one line per run with the daemon's FUSE requests by op.
#
#   OLD=OLD/build/ccfs NEW=build/ccfs MEMORY=128MiB ROUNDS=6 tar_ab.sh [TREE]
#
# TREE (default /var/tmp/ccfs-tar-ab) is made once. Needs root (drop_caches), curl, fusermount3.
set -euo pipefail
tree=${1:-/var/tmp/ccfs-tar-ab}
mnt=$(mktemp -d /tmp/ccfs-tar-ab-mnt.XXXXXX)
port=9571
trap 'fusermount3 -u "$mnt" 2>/dev/null || true; rmdir "$mnt"' EXIT
if [ ! -d "$tree/d19" ]; then
  python3 - "$tree" <<'EOF'
import os, random, sys
random.seed(1)
root = sys.argv[1]
words = ["w%x" % random.getrandbits(24) for _ in range(5000)]
for d in range(20):
    os.makedirs(f"{root}/d{d}", exist_ok=True)
    for f in range(100):
        n = random.randint(1024, 65536)
        s, size = [], 0
        while size < n:
            w = random.choice(words)
            s.append(w)
            size += len(w) + 1
        open(f"{root}/d{d}/f{f}.txt", "w").write(" ".join(s)[:n])
EOF
fi
secs() { local s; s=$(date +%s.%N); tar cf - -C "$1" . | cat >/dev/null; echo "$(date +%s.%N) - $s" | bc; }
for r in $(seq "${ROUNDS:-6}"); do
  for which in old new direct; do
    sync; echo 3 >/proc/sys/vm/drop_caches
    if [ "$which" = direct ]; then
      echo "$r direct cold $(secs "$tree") warm $(secs "$tree")"
      continue
    fi
    bin=$OLD; [ "$which" = new ] && bin=$NEW
    "$bin" mount -o "memory=${MEMORY:-128MiB},ro,metrics=$port" "$tree" "$mnt" 2>/dev/null
    sync; echo 3 >/proc/sys/vm/drop_caches
    cold=$(secs "$mnt"); warm=$(secs "$mnt")
    req=$(curl -s "http://127.0.0.1:$port/metrics" | grep '^ccfs_fuse_requests_total' |
          sed 's/ccfs_fuse_requests_total{op="//; s/"}//' | tr '\n' ' ')
    fusermount3 -u "$mnt"
    echo "$r $which cold $cold warm $warm  $req"
  done
done
