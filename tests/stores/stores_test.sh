#!/usr/bin/env bash
# The backing stores of scripts/stores.sh, each brought up, used and torn down, to show that a
# read of the store's mount really reaches the store (no client cache answers it) and that nothing
# is left behind. For each store:
#   1. `stores.sh up`; a file of random bytes is copied in through the mount and compared back;
#   2. median µs of 8 KiB reads at random pages: with O_DIRECT, as the copy left the server's page
#      cache; without O_DIRECT, each page read twice in a row, the medians of the first reads
#      ("buffered") and of the second ("repeat": a client cache would answer it), interleaved so
#      that load falls on both alike; with O_DIRECT after `stores.sh evict` ("cold": the server's
#      disk answers the first read of each page);
#   3. the bytes the store's server processes (sftp session, GlusterFS brick, delay_fs; from
#      `stores.sh server-pids`) read from /proc/PID/io during the repeat reads: each repeat pair
#      must have made the server read both pages (>= 2 x COUNT pages), so the count, not only the
#      latency, says the store answered;
#   4. `stores.sh down`; then no mount at the mountpoint, none of the processes `up` started alive,
#      no glusterd that was not running before, no state directory, no mountpoint directory.
# Checks: local is the control (its repeat read is a page cache hit: at most half its O_DIRECT
# read, so this test can see a cache when there is one); for every other store the repeat read
# costs at least half its buffered read and at least 3x the local repeat read; delay:N reads all
# cost at least N µs. Prints a table: store, median µs of an 8 KiB O_DIRECT read (warm, cold),
# buffered read, repeat read, server pages read per repeat read.
#
#   tests/stores/stores_test.sh [STORE...]    default: local sshfs gluster delay:200 delay:1000
#
# STORE is a kind of scripts/stores.sh, delay:N for delay_fs at N µs. Knobs: STORES_TEST_READS
# (400 reads per median), STORES_TEST_FILE_MIB (32), STORES_TEST_UP_ARGS (more options for every
# `up`: with --page-cache, which lets the kernel cache the stores' files, the checks must fail).
# Needs root (sshd, GlusterFS) and installs
# openssh-server, sshfs, glusterfs-server and glusterfs-client if missing; runs in about a minute.
# Its stores use their own state directory and GlusterFS volume name, so a store someone has up
# is not touched. Exit status 0 if every check held.
set -euo pipefail
cd "$(dirname "$0")/../.."
repo=$PWD
stores=$repo/scripts/stores.sh
py=/usr/bin/python3
[ -x "$py" ] || py=python3
reader=$repo/tests/stores/page_reader.py
reads=${STORES_TEST_READS:-400}
file_mib=${STORES_TEST_FILE_MIB:-32}
specs=("$@")
[ ${#specs[@]} -gt 0 ] || specs=(local sshfs gluster delay:200 delay:1000)
[ "$(id -u)" -eq 0 ] || { echo "stores_test: SKIP: needs root (sshd, GlusterFS)"; exit 0; }

# On a real disk: the local store's O_DIRECT figure is the disk's.
work=$(mktemp -d /var/tmp/ccfs_stores_test.XXXXXX)
export STORES_STATE_DIR=$work/state STORES_GLUSTER_NAME=ccfs-store-test
current=""
cleanup() {
  set +e
  [ -n "$current" ] && "$stores" down "$current" >/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

failures=0
fail() { echo "stores_test: FAIL: $*" >&2; failures=$((failures + 1)); }
# ge A B: A >= B for decimals.
ge() { awk -v a="$1" -v b="$2" 'BEGIN {exit !(a >= b)}'; }
io_rchar() {  # the sum of rchar over the given pids (those that have exited count 0)
  local pid sum=0 v
  for pid in "$@"; do
    v=$(awk '$1 == "rchar:" {print $2}' "/proc/$pid/io" 2>/dev/null || true)
    sum=$((sum + ${v:-0}))
  done
  echo "$sum"
}

head -c "$((file_mib << 20))" /dev/urandom >"$work/data"
glusterd_before=$(pgrep -xc glusterd || true)
local_repeat=""
rows=()
for spec in "${specs[@]}"; do
  kind=${spec%%:*}
  read -r -a up_args <<<"${STORES_TEST_UP_ARGS:-}"
  if [ "$kind" = delay ]; then
    delay_us=${spec#delay}
    delay_us=${delay_us#:}
    delay_us=${delay_us:-200}
    up_args+=(--delay-us "$delay_us")
  fi
  label=${spec/:/@}
  [ "$kind" = delay ] && label="delay@${delay_us}us (EMULATED)"
  mnt=$work/mnt-${spec/:/-}
  echo "== $label" >&2
  "$stores" up "$kind" "$mnt" "${up_args[@]}" >/dev/null
  current=$kind
  started_pids=$(sed -n 's/^[a-z_]*_pid=//p' "$STORES_STATE_DIR/$kind/info")

  cp "$work/data" "$mnt/data"
  cmp -s "$work/data" "$mnt/data" || fail "$label: the file read back differs from the one written"

  direct=$("$py" "$reader" "$mnt/data" direct "$reads" 1)
  mapfile -t servers < <("$stores" server-pids "$kind")
  before=$(io_rchar "${servers[@]}")
  read -r buffered repeat < <("$py" "$reader" "$mnt/data" repeat "$reads" 2)
  after=$(io_rchar "${servers[@]}")
  # Last, so that the first and the repeat read above both find the server as warm (a cold first
  # read would go to the server's disk and its repeat to the server's RAM: a cache, but the
  # store's own).
  "$stores" evict "$kind"
  cold=$("$py" "$reader" "$mnt/data" direct "$reads" 3)
  served="-"
  if [ ${#servers[@]} -gt 0 ]; then
    served=$(awk -v d="$((after - before))" -v n="$reads" 'BEGIN {printf "%.2f", d / 8192 / n}')
    ge "$served" 2 ||
      fail "$label: the store's servers read $served pages per repeat pair; want >= 2" \
           "(a cache answered)"
  fi

  case $kind in
    local)
      local_repeat=$repeat
      ge "$(awk -v d="$direct" 'BEGIN {print d / 2}')" "$repeat" ||
        fail "local: a repeat read ($repeat us) should be a page cache hit, at most half an" \
             "O_DIRECT read ($direct us); without that this test cannot tell a cache from a store"
      ;;
    *)
      ge "$repeat" "$(awk -v b="$buffered" 'BEGIN {print b / 2}')" ||
        fail "$label: a repeat read ($repeat us) costs less than half a first read" \
             "($buffered us): a cache answers"
      floor=${local_repeat:-3}
      ge "$repeat" "$(awk -v f="$floor" 'BEGIN {print 3 * f}')" ||
        fail "$label: a repeat read ($repeat us) costs less than 3x a local page cache hit" \
             "($floor us)"
      if [ "$kind" = delay ]; then
        for v in "$direct" "$cold" "$buffered" "$repeat"; do
          ge "$v" "$delay_us" || fail "$label: a read took $v us, less than the delay"
        done
      fi
      ;;
  esac
  rows+=("$(printf '| %-26s | %9s | %9s | %9s | %9s | %12s |' \
              "$label" "$direct" "$cold" "$buffered" "$repeat" "$served")")

  "$stores" down "$kind" >/dev/null
  current=""
  awk -v d="$mnt" '$2 == d {found = 1} END {exit !found}' /proc/mounts &&
    fail "$label: $mnt is still mounted after down"
  for pid in $started_pids; do
    kill -0 "$pid" 2>/dev/null &&
      fail "$label: process $pid ($(cat /proc/"$pid"/comm)) outlived down"
  done
  [ -e "$STORES_STATE_DIR/$kind" ] && fail "$label: its state directory outlived down"
  [ -e "$mnt" ] && fail "$label: the mountpoint $mnt (made by up) outlived down"
done
[ "$(pgrep -xc glusterd || true)" = "$glusterd_before" ] ||
  fail "glusterd processes: $glusterd_before before, $(pgrep -xc glusterd || true) after"

echo
echo "8 KiB reads, median µs over $reads reads each (server pages: what the store's server"
echo "processes read per repeat pair, from /proc/PID/io; 2 = both reads reached the store)"
echo
printf '| %-26s | %-9s | %-9s | %-9s | %-9s | %-12s |\n' store O_DIRECT "O_D. cold" buffered repeat \
  "server pages"
echo "|----------------------------|-----------|-----------|-----------|-----------|--------------|"
printf '%s\n' "${rows[@]}"
echo
if [ $failures -gt 0 ]; then
  echo "stores_test: $failures check(s) failed" >&2
  exit 1
fi
echo "stores_test: PASS"
