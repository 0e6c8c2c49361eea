#!/usr/bin/env bash
# The passthrough key against kernel mode without it and the page cache, same runs (README.md).
# Usage: results/passthrough-streams/run.sh OUT
set -euo pipefail
out=${1:?usage: run.sh OUT}
root=$(cd "$(dirname "$0")/../.." && pwd)
configs="kernel:2MiB kernel:2MiB:passthrough=true"
mkdir -p "$out/local" "$out/network" "$out/random"
"$root/scripts/stream_bench.sh" --stores local --rounds 3 --configs "$configs" \
  --phases "dd cat fio par4 epochs" --out "$out/local"
"$root/scripts/stream_bench.sh" --stores "sshfs gluster" --rounds 2 --configs "$configs" \
  --phases "dd cat fio par4 epochs" --out "$out/network"
"$root/scripts/stream_bench.sh" --stores local --rounds 2 --configs "$configs" \
  --phases "pareto uniform" --out "$out/random"
