#!/usr/bin/env bash
# The longer reliability suite. CI (scripts/test.sh) runs a short version of everything;
# this runs the same tests longer and harder, with a bounded run time:
#   - integrity under load, crash cycles, changes underneath, memory pressure, paths, bad input
#     (tests/reliability) and the POSIX conformance suite (tests/posix), at CCFS_RELIABILITY_SCALE
#     times their CI length (default 10: ~80 s of integrity load, 30 kill -9 cycles, ...), on the
#     release build and again under ASan+UBSan;
#     each in every mode (CCFS_RELIABILITY_MODES, default "daemon:dev kernel:dev daemon:uring
#     kernel:uring": raw_tier and transport; the uring modes only where the kernel allows them);
#   - each libFuzzer target for CCFS_FUZZ_SECONDS (default 300) from its seed corpus;
#   - the backing stores (tests/stores/stores_test.sh: sshfs, GlusterFS, delay_fs brought up from
#     Debian packages, shown to answer every read themselves, torn down).
# Bound: about 15 + 3*CCFS_FUZZ_SECONDS/60 + 2.5*CCFS_RELIABILITY_SCALE minutes per mode on a
# 2-core VM (~55 minutes for one mode, most of it the ASan pass; about 3 hours for the four); each test binary run is killed after
# CCFS_RELIABILITY_TIMEOUT seconds (default 2400). Figures (threads, bytes, seconds, cycles,
# executions, RSS) are printed as [integrity] / [crash] / [pressure] / fuzz lines.
# Usage: scripts/reliability.sh [--no-asan] [--no-fuzz]
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/stages.sh  # the builds, the reliability filter and the fuzz runs of scripts/test.sh
scale=${CCFS_RELIABILITY_SCALE:-10}
fuzz_s=${CCFS_FUZZ_SECONDS:-300}
limit=${CCFS_RELIABILITY_TIMEOUT:-2400}
asan=1 fuzz=1
for a in "$@"; do
  case $a in
    --no-asan) asan=0 ;;
    --no-fuzz) fuzz=0 ;;
    *) echo "usage: $0 [--no-asan] [--no-fuzz]" >&2; exit 2 ;;
  esac
done
scripts/setup.sh
start=$(date +%s)

# The modes: raw_tier:transport. The kernel's io_uring switch is turned on for the uring modes and
# left as it was found afterwards.
modes=${CCFS_RELIABILITY_MODES:-"daemon:dev kernel:dev daemon:uring kernel:uring"}
uring_switch=/sys/module/fuse/parameters/enable_uring
if [[ -w $uring_switch ]]; then
  uring_was=$(cat "$uring_switch")
  trap 'echo "$uring_was" > "$uring_switch"' EXIT
  echo Y > "$uring_switch"
else
  modes=$(tr ' ' '\n' <<<"$modes" | grep -v ':uring$' | tr '\n' ' ')
  echo "(no FUSE over io_uring here: $uring_switch is missing or not writable; modes: $modes)"
fi
# in_mode MODE COMMAND...: runs COMMAND with the tests' mounts in MODE.
in_mode() {
  local mode=$1; shift
  CCFS_TEST_RAW_TIER=${mode%%:*} CCFS_TEST_TRANSPORT=${mode##*:} "$@"
}

build_in build ccfs_tests
for mode in $modes; do
  echo "== release build, raw_tier:transport = $mode: reliability and POSIX suites, scale $scale"
  CCFS_RELIABILITY_SCALE=$scale in_mode "$mode" timeout -k 10 "$limit" build/ccfs_tests \
    --gtest_filter="$reliability_filter" | grep -E '^\[(integrity|crash|pressure|underneath)\]|FAILED|PASSED|^\[  FAILED'
done

# A tree of a million files (1-16 KiB, nested) walked, stat'ed and read whole with the daemon
# under a descriptor limit of 1024, in each raw tier (tests/fs/many_files_test.cc).
for mode in daemon:dev kernel:dev; do
  echo "== release build, raw_tier:transport = $mode: a million files under a descriptor limit of 1024"
  CCFS_MANY_FILES=${CCFS_MANY_FILES:-1000000} in_mode "$mode" timeout -k 10 "$limit" build/ccfs_tests \
    --gtest_filter='ManyFilesMountTest.WalkedStatAndReadUnderALimitOf1024' | grep -E 'FAILED|PASSED'
done

if [ $asan = 1 ]; then
  build_in build-asan ccfs_tests
  for mode in $modes; do
    echo "== ASan+UBSan build, raw_tier:transport = $mode: the same suites, scale $(( (scale + 1) / 2 ))"
    LSAN_OPTIONS="suppressions=$PWD/tests/lsan.supp" ASAN_OPTIONS="detect_leaks=1:abort_on_error=1" UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1" \
    CCFS_RELIABILITY_SCALE=$(( (scale + 1) / 2 )) in_mode "$mode" timeout -k 10 "$limit" \
      build-asan/ccfs_tests --gtest_filter="$reliability_filter" \
      | grep -E '^\[(integrity|crash|pressure|underneath)\]|FAILED|PASSED|^\[  FAILED'
  done
fi

if [ $fuzz = 1 ]; then
  echo "== libFuzzer: $fuzz_s s per target"
  build_in build-fuzz "${fuzz_targets[@]/%/_fuzzer}"
  fuzz_run "$fuzz_s" $(( fuzz_s + 120 ))
fi
echo "== backing stores: local, sshfs, GlusterFS, delay_fs (each up, read, down; nothing left)"
tests/stores/stores_test.sh
echo "== shared store: another client's changes and store outages under a mount"; tests/stores/shared_store_test.sh
if grep -q ccfs_fs_test /proc/mounts; then echo "reliability: a test mount was left behind" >&2; exit 1; fi
echo "== reliability suite passed in $(( ($(date +%s) - start) / 60 )) min"
