#!/usr/bin/env bash
# ccfs in front of a shared store while another client changes it, and while the store goes away.
# For each store, each raw tier mode:
#   1. `stores.sh up`; for sshfs the "other client" writes straight into the directory its sshd
#      serves, for GlusterFS it is a second client mount of the same volume (stores.sh up gluster
#      with STORES_GLUSTER_VOLUME and a state directory of its own);
#   2. ccfs mounted over the store (memory 2 MiB, compressed_percent 50, attr_timeout 1,
#      raw_tier daemon or kernel);
#   3. shared_store_check.py changes: the other side rewrites, shrinks, grows, renames over,
#      deletes and recreates, deletes files ccfs has cached (some pages compressed); before the
#      bound every page read is the old or the new version, after it exactly the new one; writes
#      acknowledged through ccfs (fsync, close) are in the store's copy byte for byte;
#   4. shared_store_check.py outage: the store's server stopped (sshd killed, GlusterFS brick
#      killed) and started again: EIO for uncached pages, no hang, the daemon up, right bytes
#      again without remounting ccfs;
#   5. sshfs only, shared_store_check.py kill-client: the sshfs process killed with -9 and the store
#      mounted again at the same path: EIO, never wrong bytes; ccfs reads right again by itself;
#      then ccfs remounted reads right too;
#   6. kernel mode mounted ro (files opened without OPEN, read through the daemon's read handles):
#      2-5 again, without the writes through ccfs; for sshfs once more with `sftp` (the misses read
#      over the daemon's own SFTP connections to the sshd: at least one must be);
#   7. kernel mode again with long timeouts (attr_timeout, entry_timeout and negative_timeout 4 s;
#      over GlusterFS with close_to_open = false as well): shared_store_check.py changes with the
#      bound those give, 5 s;
#   8. persist_check: a remount with `persist` restores the pages of unchanged files (sshfs numbers
#      inodes anew) and none of a file the other client rewrote meanwhile;
#   9. ccfs unmounted (the daemon must exit 0), the stores down, and nothing left: no mount under
#      the work directory, no sshd or glusterd of ours, no work directory.
# The bound checked is ccfs's attr_timeout + the store client's attribute and entry timeout (1 s
# each, scripts/stores.sh): 2 s. See docs/STORES.md for what it covers and what it does not.
#
#   tests/stores/shared_store_test.sh [STORE...]    default: sshfs gluster
#
# A read over cached then uncached pages with the store away (--spanning of the checker) must fail
# with EIO in both modes, never answer short: the kernel takes a short read for the end of the file
# (docs/STORES.md, "When the store goes away").
#
# Knobs: SHARED_TEST_MODES ("daemon kernel"), CCFS_BINARY (build/ccfs). Needs root (sshd,
# GlusterFS) and installs openssh-server, sshfs, glusterfs-server and glusterfs-client if missing.
# Its stores use their own state directories and GlusterFS volume name, so a store someone has up
# is not touched. Exit status 0 if every check held.
set -euo pipefail
cd "$(dirname "$0")/../.."
repo=$PWD
stores=$repo/scripts/stores.sh
check=$repo/tests/stores/shared_store_check.py
ccfs=${CCFS_BINARY:-$repo/build/ccfs}
py=/usr/bin/python3
[ -x "$py" ] || py=python3
read -r -a modes <<<"${SHARED_TEST_MODES:-daemon kernel}"
specs=("$@")
[ ${#specs[@]} -gt 0 ] || specs=(sshfs gluster)
[ "$(id -u)" -eq 0 ] || { echo "shared_store_test: SKIP: needs root (sshd, GlusterFS)"; exit 0; }
[ -x "$ccfs" ] ||
  { echo "shared_store_test: no ccfs binary at $ccfs (build it first)" >&2; exit 1; }
attr_timeout=1
bound=2  # ccfs attr_timeout + the store client's 1 s (stores.sh)
long_timeout=4  # the second pass: a bound other than the defaults' must hold as well

work=$(mktemp -d /var/tmp/ccfs_shared_test.XXXXXX)
export STORES_STATE_DIR=$work/state STORES_GLUSTER_NAME=ccfs-store-shared-test
other_state=$work/state-other
ccfs_pid=""
glusterd_before=$(pgrep -xc glusterd || true)
cleanup() {
  set +e
  if [ -n "$ccfs_pid" ]; then
    fusermount3 -u "$work/mnt" 2>/dev/null || fusermount3 -u -z "$work/mnt" 2>/dev/null
    timeout 10 tail --pid="$ccfs_pid" -f /dev/null || kill -9 "$ccfs_pid" 2>/dev/null
  fi
  STORES_STATE_DIR=$other_state "$stores" down gluster >/dev/null 2>&1
  for kind in sshfs gluster; do "$stores" down "$kind" >/dev/null 2>&1; done
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

failures=0
fail() { echo "shared_store_test: FAIL: $*" >&2; failures=$((failures + 1)); }
is_mounted() { awk -v d="$1" '$2 == d {found = 1} END {exit !found}' /proc/mounts; }

mount_ccfs() {  # mount_ccfs MODE [OPTIONS]: ccfs over $work/store at $work/mnt, in the background
  mkdir -p "$work/mnt"
  local opts="raw_tier=$1,memory=2MiB,compressed_percent=50,attr_timeout=$attr_timeout"
  "$ccfs" mount -f -o "$opts${2:+,$2}" "$work/store" "$work/mnt" 2>>"$work/ccfs.log" &
  ccfs_pid=$!
  local i
  for i in $(seq 1 100); do
    is_mounted "$work/mnt" && return 0
    kill -0 "$ccfs_pid" 2>/dev/null || break
    sleep 0.1
  done
  cat "$work/ccfs.log" >&2
  echo "shared_store_test: ccfs did not mount" >&2
  exit 1
}

unmount_ccfs() {  # the daemon must exit 0
  local rc=0
  if ! fusermount3 -u "$work/mnt"; then
    fail "fusermount3 -u $work/mnt failed"
    fusermount3 -u -z "$work/mnt"
  fi
  wait "$ccfs_pid" || rc=$?
  ccfs_pid=""
  [ $rc -eq 0 ] || { fail "the ccfs daemon exited $rc"; tail -n 20 "$work/ccfs.log" >&2; }
}

run_check() {  # run_check LABEL ARGS...: the checker, its output indented, failures counted
  local label=$1
  shift
  if ! "$py" "$check" --bound "$bound" "$@" --mnt "$work/mnt" 2>&1 | sed "s|^|  [$label] |"; then
    fail "$label: $1"
  fi
}

ccfs_counter() { "$py" -c "import json,sys; print(json.load(open(sys.argv[1])).get(sys.argv[2], 0))" "$work/mnt/.ccfs/stats.json" "$1"; }

# persist_check: a remount with persist = DIR restores the pages of a file left as it was, even
# where the store numbers its inodes anew (sshfs, once the kernel has forgotten its nodes), and
# never serves those of a file the other client rewrote while ccfs was down.
persist_check() {
  local dir=$work/persist-$kind opts="memory=16MiB,persist=$work/persist-$kind" f i
  mkdir -p "$dir" "$other/persist"
  for f in kept changed; do seq 1 300000 >"$other/persist/$f"; done  # compressible, as kept pages are
  sleep 1.1  # sftp's mtime is in seconds: the rewrite below must get another one
  mount_ccfs daemon "$opts"
  cat "$work/mnt/persist/kept" "$work/mnt/persist/changed" >/dev/null
  unmount_ccfs
  sync; echo 3 >/proc/sys/vm/drop_caches
  head -c "$(stat -c %s "$truth/persist/changed")" /dev/zero | tr '\0' x >"$other/persist/changed"
  local from
  from=$(wc -c <"$work/ccfs.log")
  mount_ccfs daemon "$opts"
  for i in $(seq 100); do
    tail -c +"$from" "$work/ccfs.log" | grep -q "persist: restored" && break
    sleep 0.1
  done
  local restored stale
  restored=$(ccfs_counter persist_pages_restored) stale=$(ccfs_counter persist_pages_dropped_stale)
  echo "  [$kind/persist] restored $restored pages, dropped $stale" >&2
  [ "$restored" -gt 0 ] || fail "$kind: persist restored nothing: $(grep persist: "$work/ccfs.log")"
  [ "$stale" -gt 0 ] || fail "$kind: persist kept the pages of a file changed while unmounted"
  for f in kept changed; do
    cmp -s "$work/mnt/persist/$f" "$truth/persist/$f" || fail "$kind: persist: $f read wrong bytes"
  done
  unmount_ccfs
}

start=$(date +%s)
for kind in "${specs[@]}"; do
  echo "== $kind" >&2
  t_store=$(date +%s)
  case $kind in
    sshfs)
      mkdir -p "$work/server"
      "$stores" up sshfs "$work/store" --source "$work/server" >/dev/null
      other=$work/server truth=$work/server
      ;;
    gluster)
      "$stores" up gluster "$work/store" >/dev/null
      volume=$(. "$STORES_STATE_DIR/gluster/info" && echo "$volume")
      brick=$(. "$STORES_STATE_DIR/gluster/info" && echo "${brick#*:}")
      STORES_STATE_DIR=$other_state STORES_GLUSTER_VOLUME=$volume \
        "$stores" up gluster "$work/other" >/dev/null
      other=$work/other truth=$brick
      ;;
    *) echo "shared_store_test: unknown store '$kind' (sshfs, gluster)" >&2; exit 2 ;;
  esac
  extra=()
  [ "$kind" = sshfs ] && extra=(sftp)
  for mode in "${modes[@]}" ro "${extra[@]}"; do
    # ro: kernel mode mounted read-only, whose files are opened without OPEN and read through the
    # daemon's own read handles (src/fuse/read_handles.h). sftp: the same, its misses read over
    # the daemon's own SFTP connections to the sshd, not through the sshfs mount.
    if [ "$mode" = ro ]; then
      [[ " ${modes[*]} " == *" kernel "* ]] || continue
      opts=(kernel ro) only=(--read-only)
    elif [ "$mode" = sftp ]; then
      [[ " ${modes[*]} " == *" kernel "* ]] || continue
      opts=(kernel "ro,sftp=ccfs-store:$work/server,ssh_config=$STORES_STATE_DIR/sshfs/ssh_config")
      only=(--read-only)
    else
      opts=("$mode") only=()
    fi
    echo "-- $kind, raw_tier=${opts[*]}" >&2
    mount_ccfs "${opts[@]}"
    label="$kind/$mode"
    run_check "$label" changes --other "$other" --truth "$truth" --sub "changes-$mode" "${only[@]}"
    if [ "$mode" = sftp ]; then
      sftp_reads=$(ccfs_counter sftp_reads)
      echo "  [$label] sftp_reads $sftp_reads, sftp_fallbacks $(ccfs_counter sftp_fallbacks)" >&2
      [ "$sftp_reads" -gt 0 ] || fail "$label: no read went over SFTP"
    fi
    run_check "$label" outage --other "$other" --sub "outage-$mode" --pid "$ccfs_pid" \
      --stores "$stores" --kind "$kind" --spanning
    if [ "$kind" = sshfs ]; then
      run_check "$label" kill-client --other "$other" --sub "killed-$mode" --pid "$ccfs_pid" \
        --stores "$stores" --kind "$kind" --spanning
      unmount_ccfs
      mount_ccfs "${opts[@]}"
      run_check "$label" after-remount --sub "killed-$mode"
    fi
    unmount_ccfs
  done
  # The staleness bound follows the keys (docs/STORES.md): the default mode with long timeouts;
  # over GlusterFS with close_to_open = false too, where attributes read less than attr_timeout ago
  # stand for the checks at open and before a read.
  c2o=""
  [ "$kind" = gluster ] && c2o=",close_to_open=false"
  attr_timeout=$long_timeout mount_ccfs kernel \
    "entry_timeout=$long_timeout,negative_timeout=$long_timeout$c2o"
  run_check "$kind/kernel, timeouts ${long_timeout} s$c2o" changes --other "$other" \
    --truth "$truth" --sub changes-long --bound $((long_timeout + 1))
  unmount_ccfs
  persist_check
  [ "$kind" = gluster ] && STORES_STATE_DIR=$other_state "$stores" down gluster >/dev/null
  "$stores" down "$kind" >/dev/null
  echo "  [$kind] $(( $(date +%s) - t_store )) s" >&2
done

# Nothing left behind.
grep -F "$work" /proc/mounts && fail "mounts under $work remain"
pgrep -f "sshd.*$work" >/dev/null && fail "an sshd of ours outlived down"
[ "$(pgrep -xc glusterd || true)" = "$glusterd_before" ] ||
  fail "glusterd processes: $glusterd_before before, $(pgrep -xc glusterd || true) after"
[ -e "$STORES_STATE_DIR" ] && fail "the stores' state directory outlived down"
echo "shared_store_test: $(( $(date +%s) - start )) s" >&2
if [ $failures -gt 0 ]; then
  echo "shared_store_test: $failures check(s) failed" >&2
  exit 1
fi
echo "shared_store_test: PASS"
