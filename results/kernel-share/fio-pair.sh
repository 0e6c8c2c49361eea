#!/usr/bin/env bash
# Two ccfs binaries under fio at equal RAM, the mount's memory the cgroup's own size (as `ccfs
# replay` and the demo hold it, where the kernel's share is squeezed): results/miss-breakdown/
# equal-ram.sh over sshfs, 256 MiB of mkdata's mix, uniform, a cgroup of 128 MiB, `auto` from the
# default split, 20 s of warm-up and 20 s measured; one round per binary per ROUND, interleaved.
#
#   fio-pair.sh OLD_BIN NEW_BIN OUT [ROUNDS]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
old=${1:?OLD_BIN}; new=${2:?NEW_BIN}; out=${3:?OUT}; rounds=${4:-2}
export EQUAL_RAM_DATA=mix EQUAL_RAM_WARM=20 EQUAL_RAM_STORE=sshfs EQUAL_RAM_LAW=random
export EQUAL_RAM_SIZE=256M EQUAL_RAM_MEMORY=128MiB
for round in $(seq "$rounds"); do
  for side in old new; do
    bin=$old; [ "$side" = new ] && bin=$new
    CCFS_BIN=$bin "$root/results/miss-breakdown/equal-ram.sh" "$out/$side-$round" 128MiB 1 20 \
      "compressed_percent=50,compressor=zstd,compressed_percent=auto" >"$out/$side-$round.log" 2>&1
  done
done
