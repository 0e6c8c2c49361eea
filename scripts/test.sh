#!/usr/bin/env bash
# Sets up, builds and runs every test: the unit tests, the mount tests (need /dev/fuse and root or
# fusermount3), and the engine and pool tests again under ThreadSanitizer.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
jobs=$(nproc)

cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j"$jobs"
echo "== unit and mount tests"
build/ccfs_tests --gtest_brief=1

echo "== ThreadSanitizer: engine, compression pool, stats"
cmake -S . -B build-tsan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCCFS_SANITIZE=thread >/dev/null
cmake --build build-tsan -j"$jobs" --target ccfs_tests
TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 suppressions=$PWD/tests/tsan.supp" \
  build-tsan/ccfs_tests --gtest_brief=1 --gtest_filter='EngineTest.*:CompressionPool*:LatencyHistogram*'
echo "== all tests passed"
