#!/usr/bin/env bash
# The evictor's least batch on small raw tiers: two ccfs binaries taking turns over in-process
# replays (one reader thread, lz4 C = 50, 200,000 measured reads after the default warm-up).
# batch.sh OLD_CCFS NEW_CCFS DATASET ROUNDS (DATASET: `ccfs mkdata --size 48MiB DIR`).
# Prints: round memory law binary hit_ratio us_per_buffer.
set -euo pipefail
old=$1 new=$2 data=$3 rounds=$4
for round in $(seq "$rounds"); do
  for mem in 2MiB 4MiB 16MiB; do
    for dist in uniform pareto; do
      for b in old new; do
        bin=$old; [ "$b" = new ] && bin=$new
        "$bin" replay --engine "$data" --memory "$mem" -o compressed_percent=50 --dist "$dist" \
            --ops 200000 --json --no-progress 2>/dev/null |
          python3 -c "import json,sys; d=json.load(sys.stdin); print('$round $mem $dist $b', '%.4f' % d['hit_ratio'], '%.1f' % d['us_per_buffer'])"
      done
    done
  done
done
