#!/usr/bin/env bash
# Two ccfs trees' `scripts/demo.sh` against each other (the defaults: sshfs, 512 MiB uniform, a
# 256 MiB mount in a 256 MiB cgroup), rounds interleaving the trees. Each demo's log goes to
# OUT/demo-SIDE-ROUND.log and the split in force, read every 2 s from stats.json, to
# OUT/split-SIDE-ROUND.txt (time, compressed_percent, kernel_budget_bytes, compressed_bytes,
# split_estimate.waiting_for).
#
#   demo-pair.sh OLD_TREE NEW_TREE OUT [ROUNDS]
#
# Each tree must be built (its demo.sh builds it otherwise, inside the measured time of none of
# the runs but beside the other's). DEMO_DIR is shared, so the data set is made once.
set -euo pipefail
old=${1:?OLD_TREE}; new=${2:?NEW_TREE}; out=${3:?OUT}; rounds=${4:-2}
mkdir -p "$out"
export DEMO_DIR=${DEMO_DIR:-/var/tmp/ccfs-demo-pair}
for round in $(seq "$rounds"); do
  for side in old new; do
    tree=$old; [ "$side" = new ] && tree=$new
    (cd "$tree" && scripts/demo.sh >"$out/demo-$side-$round.log" 2>&1) &
    dp=$!
    while kill -0 "$dp" 2>/dev/null; do
      f=$DEMO_DIR/mnt/.ccfs/stats.json
      [ -f "$f" ] && python3 -c "import json, sys, time; s = json.load(open(sys.argv[1])); print(time.strftime('%T'), s.get('compressed_percent'), s.get('kernel_budget_bytes'), s.get('compressed_bytes'), (s.get('split_estimate') or {}).get('waiting_for'))" "$f" \
        >>"$out/split-$side-$round.txt" 2>/dev/null || true
      sleep 2
    done
    wait "$dp"
  done
done
