#!/usr/bin/env bash
# The daemon's stat of the store's file with the atime (the build before) against without it (the
# build after), under SQLite at equal RAM over sshfs and GlusterFS (scripts/apps.sh at the
# defaults, kernel_evict=false), the two builds alternating, one round per call.
#
#   results/store-attr/run.sh OUT OLD_CCFS [STORES] [ROUNDS]
#
# OLD_CCFS: the earlier build's ccfs binary (apps.sh's CCFS_BIN); the later one is build/ccfs.
# Writes OUT/before/ and OUT/after/ (apps.sh's apps.csv, apps.md, apps.png).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:?OUT}
old=${2:?OLD_CCFS}
stores=${3:-sshfs gluster}
rounds=${4:-2}
cd "$root"
for store in $stores; do
  for ((r = 0; r < rounds; r++)); do
    CCFS_BIN=$old scripts/apps.sh --stores "$store" --apps sqlite --rounds 1 \
      --config kernel_evict=false --out "$out/before"
    scripts/apps.sh --stores "$store" --apps sqlite --rounds 1 --config kernel_evict=false \
      --out "$out/after"
  done
done
