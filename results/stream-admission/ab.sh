#!/bin/bash
# Two builds taking turns, one scripts/stream_bench.sh call per build per round:
#   [STORES="local gluster"] results/stream-admission/ab.sh OLD_CCFS NEW_CCFS OUT [ROUNDS]
# then: python3 results/stream-admission/summary.py OUT > OUT/summary.md
set -euo pipefail
old=$1 new=$2 out=$3 rounds=${4:-2}
cd "$(dirname "$0")/../.."
mkdir -p "$out"
for r in $(seq 1 "$rounds"); do
  for b in old new; do
    if [ $b = old ]; then bin=$old; else bin=$new; fi
    CCFS_BIN=$bin scripts/stream_bench.sh --stores "${STORES:-local delay:100 gluster}" --memory 256MiB \
      --file-size 1GiB --rounds 1 --configs "kernel:2MiB daemon:2MiB" --phases "cat par4 epochs" \
      --out "$out/$b-r$r" > "$out/$b-r$r.log" 2>&1
  done
done
