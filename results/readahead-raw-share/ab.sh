#!/bin/bash
# ab.sh OLD_CCFS OUT [MEMORY]: repeated scans (stream_bench.sh's epochs phase, mkdata text, the
# emulated store at 400 MiB/s) with the ccfs before the read-ahead window was held to 1/8 of the
# raw tier (OLD_CCFS) and build/ccfs, taking turns, two rounds; daemon mode at zstd C = 90 and at
# its defaults; memory cgroups of MEMORY (128MiB). One stream_bench run per binary and round, in
# OUT/{old,new}-ROUND.
set -eu
cd "$(dirname "$0")/../.."
old=$1 out=$2 memory=${3:-128MiB}
for r in 1 2; do
  for b in old new; do
    bin=$PWD/build/ccfs
    [ "$b" = old ] && bin=$old
    CCFS_BIN=$bin scripts/stream_bench.sh --stores delay:400 --memory "$memory" --file-size 64MiB \
      --rounds 1 --configs "daemon:2MiB:compressed_percent=90,compressor=zstd daemon:2MiB" \
      --phases epochs --out "$out/$b-$r" >"$out/$b-$r.log" 2>&1
  done
done
