#!/usr/bin/env bash
# ccfs over sshfs at equal RAM, read-only, with and without `sftp` (the misses read over the
# daemon's own SSH connections), against the page cache on the same store: fio QD1 8 KiB random
# reads (results/miss-breakdown/equal-ram.sh) and the real programs (scripts/apps.sh).
#
#   results/sftp-reads/run.sh OUT
#
# Writes OUT/{pareto,uniform,mix-pareto,mix-uniform}/ (equal-ram.sh's) and OUT/apps/ (apps.sh's;
# the two configurations alternate, one round per call, twice).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:?OUT}
cd "$root"
w=/var/tmp/ccfs-equal-ram  # equal-ram.sh's work directory: its sshd serves $w/data
sftp="sftp=ccfs-store:$w/data,ssh_config=$w/state/sshfs/ssh_config"
auto="ro,compressed_percent=50,compressed_percent=auto"  # the mount's default split, from 50
export EQUAL_RAM_STORE=sshfs
# Random bytes at C = 0: the miss path alone. 1 GiB Pareto 0.2 (8x), 256 MiB uniform (2x).
results/miss-breakdown/equal-ram.sh "$out/pareto" 128MiB 2 20 ro "ro,$sftp"
EQUAL_RAM_LAW=random EQUAL_RAM_SIZE=256M \
  results/miss-breakdown/equal-ram.sh "$out/uniform" 128MiB 2 20 ro "ro,$sftp"
# mkdata's mix at the mount's default split (auto).
EQUAL_RAM_DATA=mix results/miss-breakdown/equal-ram.sh "$out/mix-pareto" 128MiB 2 20 \
  "$auto" "$auto,$sftp"
EQUAL_RAM_DATA=mix EQUAL_RAM_LAW=random EQUAL_RAM_SIZE=256M \
  results/miss-breakdown/equal-ram.sh "$out/mix-uniform" 128MiB 2 20 "$auto" "$auto,$sftp"
# The programs that read without writing, on a read-only mount.
a=/var/tmp/ccfs-apps  # apps.sh's work directory: its sshd serves $a/sshfs-source
for _ in 1 2; do
  for cfg in kernel_evict=false,ro \
             "kernel_evict=false,ro,sftp=ccfs-store:$a/sshfs-source,ssh_config=$a/state-sshfs/sshfs/ssh_config"; do
    scripts/apps.sh --stores sshfs --apps "sqlite grep pyimport tar" --rounds 1 --config "$cfg" \
      --out "$out/apps"
  done
done
