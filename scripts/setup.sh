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
  libssh-dev                    # the sftp key: misses over SFTP, not through sshfs; bench/sftp_read
  clang libclang-rt-14-dev      # libFuzzer fuzzers (CCFS_FUZZ=ON) and their sanitizer runtimes
  libcpp-httplib-dev            # the metrics endpoint's HTTP server (the `metrics` key)
  curl                          # the metrics tests scrape the endpoint as Prometheus would
  dpkg-dev                      # cpack -G DEB: dpkg-shlibdeps works out the package's Depends
  groff-base man-db             # man pages: groff -ww checks them, man -l renders them
)

missing=()
for p in "${PKGS[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}" >&2
  $SUDO apt-get update -qq || true
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# promtool, Prometheus's own checker of the text format: tests/fs/metrics_test.cc runs
# `promtool check metrics` on a scrape of a mount. Debian ships it only in the prometheus package,
# whose installation also starts a Prometheus server; so the binary is taken out of the package
# (apt-get download + dpkg-deb -x) into .tools/bin/ (git-ignored), and nothing is installed.
tools="$(cd "$(dirname "$0")/.." && pwd)/.tools/bin"
if [ ! -x "$tools/promtool" ] && ! command -v promtool >/dev/null; then
  tmp=$(mktemp -d)
  chmod 755 "$tmp"  # apt-get download drops to the _apt user to write the file
  if (cd "$tmp" && apt-get download -qq prometheus >/dev/null 2>&1) &&
     dpkg-deb -x "$tmp"/prometheus_*.deb "$tmp/root" && [ -x "$tmp/root/usr/bin/promtool" ]; then
    mkdir -p "$tools"
    cp "$tmp/root/usr/bin/promtool" "$tools/promtool"
  else
    echo "setup: could not extract promtool from Debian's prometheus package;" \
         "the metrics test will skip its format check" >&2
  fi
  rm -rf "$tmp"
fi
