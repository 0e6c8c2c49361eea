#!/usr/bin/env bash
# negative_timeout = 0 (the old default) against 1 (the default now) under the real programs at
# equal RAM (scripts/apps.sh), the two configurations alternating, one round per call.
#
#   results/negative-timeout/run.sh OUT [STORES] [ROUNDS]
#
# STORES: "local sshfs gluster" by default. The programs: SQLite (its journal and WAL are looked
# for at every query), the Python start (a metadata-heavy one) and grep (few lookups of absent
# names). Writes OUT/apps.csv, apps.md and apps.png (apps.sh's).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:?OUT}
stores=${2:-local sshfs gluster}
rounds=${3:-2}
cd "$root"
for store in $stores; do
  for ((r = 0; r < rounds; r++)); do
    for cfg in kernel_evict=false,negative_timeout=0 kernel_evict=false,negative_timeout=1; do
      scripts/apps.sh --stores "$store" --apps "sqlite pyimport grep" --rounds 1 --config "$cfg" \
        --out "$out"
    done
  done
done
