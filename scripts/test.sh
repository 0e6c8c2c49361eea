#!/usr/bin/env bash
# Sets up, builds and runs every test: the stages of scripts/stages.sh in order, and
# "== all tests passed" after the last. The unit tests, the mount tests (need /dev/fuse and root or
# fusermount3) in each raw tier and transport, the engine and pool tests under ThreadSanitizer, the
# lock analysis, the shared stores; then the reliability stages: the whole suite under ASan+UBSan,
# the mount and POSIX tests under TSan (daemon built with TSan too), and each libFuzzer target for
# CCFS_FUZZ_SECONDS (default 20) from its seed corpus. Longer runs: scripts/reliability.sh.
# Usage: scripts/test.sh [--list]    (--list: each stage's name and commands, nothing run)
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/stages.sh
case ${1:-} in
  "") ;;
  --list) listing=1 ;;
  *) echo "usage: $0 [--list]" >&2; exit 2 ;;
esac
run_stages
