#!/usr/bin/env bash
# Installs every Debian package ccfs needs to build, test and benchmark. Idempotent: packages that
# are already present are not downloaded again. Needs root (or sudo).
set -euo pipefail

PKGS=(
  build-essential cmake ninja-build pkg-config git
  fuse3 libfuse3-dev            # the FUSE daemon and fusermount3
  libzstd-dev liblz4-dev        # the two codecs
  liburcu-dev                   # lock-free page index (RCU hash table)
  liburing-dev                  # transport = uring: the rings of FUSE over io_uring
  libjemalloc-dev               # compressed blobs: allocator with exact size classes
  libgtest-dev libgmock-dev     # unit and mount tests
  libtomlplusplus-dev           # config file parser
  libcli11-dev                  # command line
  nlohmann-json3-dev            # stats.json, replay --json
  libfmt-dev                    # formatting of tables and messages
  libbenchmark-dev              # microbenchmarks
  libxxhash-dev                 # page-key hashing, trace bijection
  python3 python3-matplotlib    # sweep plots
  util-linux fio                # fincore / fio for baselines
  rsync git tar                 # tools the mount tests run on a mount
  librocksdb-dev                # bench/rocksdb_tiered: RocksDB's tiered cache as a comparison
  clang libclang-rt-14-dev      # libFuzzer fuzzers (CCFS_FUZZ=ON) and their sanitizer runtimes
  dpkg-dev                      # cpack -G DEB: dpkg-shlibdeps works out the package's Depends
  groff-base man-db             # man pages: groff -ww checks them, man -l renders them
)

missing=()
for p in "${PKGS[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
echo "setup: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq || true
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
