#!/usr/bin/env bash
# Backing stores for ccfs to sit in front of, started from Debian packages and torn down again:
#
#   scripts/stores.sh up KIND DIR [OPTIONS]   start a store of KIND and make it appear at DIR
#   scripts/stores.sh down KIND               undo everything `up KIND` did
#   scripts/stores.sh status                  which stores are up, where, and their processes
#   scripts/stores.sh server-pids KIND        the processes that serve the store's reads (sftp
#                                             sessions, GlusterFS bricks, delay_fs): to count the
#                                             bytes they read (/proc/PID/io) or the CPU they use
#   scripts/stores.sh evict KIND              drop the server's page cache of the store's files
#                                             (sshfs source, GlusterFS brick, delay_fs source, local
#                                             DIR), so that the next reads start from its disk
#   scripts/stores.sh stop-server KIND        the store's server goes away (kill -9): sshfs's sshd
#                                             and its sessions, the GlusterFS volume's bricks; the
#                                             client mount at DIR stays (reads fail meanwhile)
#   scripts/stores.sh start-server KIND       brings it back (the same sshd port, key and source;
#                                             `gluster volume start force`); the mount reconnects
#   scripts/stores.sh tune-gluster VOLUME     turn a GlusterFS volume's client caches off (run it
#                                             on a server of that volume; `up gluster` does it
#                                             for the volume it creates)
#
# KIND:
#   local    DIR is a plain directory (created if missing); nothing runs.
#   sshfs    a private sshd on 127.0.0.1 (a free port, its own host key and config, a throwaway key
#            pair authorized for it alone, sftp only) serving --source (default: an empty
#            directory made for it), mounted with sshfs at DIR. Stand-in for a file server.
#   gluster  a single-node GlusterFS volume, one brick, mounted with the FUSE client at DIR.
#            glusterd is started (with a working directory of its own) only if none runs.
#   delay    bench/delay_fs at DIR over --source (default: an empty directory made for it),
#            waiting --delay-us before every read. An EMULATED store: say so wherever it is used.
#
# OPTIONS (each ignored by the kinds it does not concern):
#   --source SRC     sshfs, delay: the directory served (kept at `down`; a default one is not)
#   --delay-us N     delay: the wait before each read, µs (default 200)
#   --mib-per-s R    delay: cap the rate reads stream at, MiB/s, shared by all reads (default 0:
#                    no cap; e.g. 100 or 400 for a store behind a 1 GbE link or a cloud volume)
#   --wait KIND      delay: hybrid (default) | sleep | spin (see `delay_fs --measure-wait`)
#   --page-cache     let the kernel cache the store's files at DIR (sshfs auto_cache, glusterfs
#                    direct-io-mode=disable + fopen-keep-cache, delay_fs without direct_io; sshfs
#                    and glusterfs keep a name's absence 1 s, as ccfs's negative_timeout): for a
#                    page cache baseline "on the same store". Without it every read of DIR reaches
#                    the store (the default).
#   --timeouts S     sshfs, gluster: how long the kernel keeps a name and its attributes, seconds
#                    (default 1, as ccfs's entry_timeout and attr_timeout): compare ccfs with its
#                    store at the same timeouts when ccfs's are set longer
#   --brick-dir D    gluster: where the brick goes (default under the state directory; a real
#                    disk, not tmpfs)
#   --owner USER     sshfs: every file shows as USER's and other users may use the mount
#                    (allow_other, uid=, gid=; the server still acts as the user sshfs logs in
#                    as): for a program that runs as USER and checks who owns its files
#                    (PostgreSQL). A GlusterFS mount lets others in already, with the owners kept.
#   --remote-dio     gluster: network.remote-dio=enable, so the client does not forward O_DIRECT to
#                    the brick: O_DIRECT and buffered reads then cost the same (the server's page
#                    cache may answer both). By default O_DIRECT reaches the brick's disk, while a
#                    buffered read may be answered by the server's page cache.
#
# What keeps the clients' caches out of the way (the default; the figures mean nothing otherwise):
#   sshfs 3.7:  -o direct_io (no kernel page cache, no kernel readahead: one read(2) is one SFTP
#               read), dir_cache=no (sshfs's own cache of attributes, names and symlinks off),
#               no_readahead (one SFTP request per read, none speculative), and neither
#               kernel_cache nor auto_cache; attr_timeout=1,entry_timeout=1 (--timeouts) bound how stale a stat
#               may be (sshfs 3 has no data cache of its own; `-o cache=no` of sshfs 2 is gone);
#               reconnect (a lost connection is made again, so the mount outlives its server).
#   glusterfs:  the volume's client-side performance translators off (kGlusterCachesOff below:
#               write-behind, read-ahead, readdir-ahead, io-cache, open-behind, quick-read,
#               nl-cache, stat-prefetch = md-cache, parallel-readdir), the FUSE client mounted with
#               --direct-io-mode=enable (no kernel page cache), attribute/entry timeouts 1 s.
#   delay_fs:   direct_io files, O_DIRECT reads of its source (bench/delay_fs.cc).
# The server side is the store: sftp-server reads its files through the server's page cache, as
# a file server with RAM would; a GlusterFS brick reads with O_DIRECT when the client asked for it
# (network.remote-dio=disable, GlusterFS's default) and through its page cache otherwise.
#
# A multi-node GlusterFS volume (the "outgrew one machine" story: the data on a shared volume,
# every client running ccfs as its compressed cache in front of its own mount of it):
#   on every server:   apt-get install glusterfs-server && glusterd   (or systemctl start glusterd)
#   on one server:     gluster peer probe server2; gluster peer probe server3
#                      gluster volume create ccfs-store replica 3 \
#                        server1:/bricks/ccfs server2:/bricks/ccfs server3:/bricks/ccfs
#                      (or a distribute volume: list the bricks without `replica N`)
#                      gluster volume start ccfs-store
#                      scripts/stores.sh tune-gluster ccfs-store
#   on every client:   STORES_GLUSTER_VOLUME=server1:ccfs-store \
#                        STORES_GLUSTER_BACKUP=server2:server3 \
#                        scripts/stores.sh up gluster /mnt/store
#                      ccfs mount /mnt/store /mnt/ccfs ...
#                      ... and later `scripts/stores.sh down gluster` (it unmounts; the volume,
#                      which it did not create, is left alone).
# With STORES_GLUSTER_VOLUME set, `up gluster` starts no server and creates no volume: it mounts
# that volume with the same client options as above, and warns about any client cache still on.
#
# Environment: STORES_STATE_DIR (/var/tmp/ccfs-stores: state, keys, logs, default sources and
# bricks, one directory per kind), STORES_GLUSTER_HOST (this node's address for the brick;
# default the first of `hostname -I`: GlusterFS refuses loopback addresses),
# STORES_GLUSTER_VOLUME, STORES_GLUSTER_BACKUP (above), STORES_GLUSTER_NAME (the name of the
# volume `up gluster` creates; ccfs-store), DELAY_FS (the delay_fs binary; default
# build*/delay_fs, built into build/ when there is none), STORES_TIMEOUT (30 s for each start).
#
# Every `up` writes, as it goes, what undoes each step into STATE/KIND/undo; `down KIND` (or the
# trap when `up` fails) runs it backwards: unmount, stop the processes it started (by pid, checked
# against their name), stop and delete the volume it created, remove the files GlusterFS left in
# /var/{lib,log,run}/gluster* if this script started glusterd, remove the state. Needs root (for
# the packages, sshd and GlusterFS; FUSE mounts by root are visible to root only unless
# allow_other). Packages are installed with apt-get if missing, without starting their services.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
state_root=${STORES_STATE_DIR:-/var/tmp/ccfs-stores}
timeout_s=${STORES_TIMEOUT:-30}
kinds=(local sshfs gluster delay)
# GlusterFS client-side performance translators; each is turned off on the volume.
kGlusterCachesOff=(write-behind read-ahead readdir-ahead io-cache open-behind quick-read nl-cache
                   stat-prefetch parallel-readdir)
kGlusterVolume=${STORES_GLUSTER_NAME:-ccfs-store}
# Where glusterd and its brick processes write whatever its working directory does not hold.
kGlusterSystemDirs=(/var/lib/glusterd /var/log/glusterfs /var/run/gluster)

die() { echo "stores.sh: $*" >&2; exit 1; }
note() { echo "stores.sh: $*" >&2; }
usage() { sed -n '2,/^set -euo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//' >&2; exit 2; }

# ---- the undo log ----------------------------------------------------------------------------
# STATE/undo holds one action per line (shell-quoted words); `down` runs them last to first.
# Each is recorded as soon as the step it undoes has happened (or, for a process, has started).
record() { printf '%q ' "$@" >>"$state/undo"; printf '\n' >>"$state/undo"; }
info() { printf '%s=%q\n' "$1" "$2" >>"$state/info"; }
info_get() { (. "$state_root/$1/info" && eval "printf '%s' \"\${$2:-}\""); }  # KIND KEY

is_mounted() { awk -v d="$1" '$2 == d {found = 1} END {exit !found}' /proc/mounts; }

unmount() {
  local dir=$1 i
  for i in $(seq 1 50); do
    is_mounted "$dir" || return 0
    fusermount3 -u "$dir" 2>/dev/null || umount "$dir" 2>/dev/null || true
    is_mounted "$dir" || return 0
    sleep 0.1
  done
  note "$dir is busy; detaching it lazily (umount -l)"
  umount -l "$dir" || fusermount3 -u -z "$dir"
}

# Stops PID if it is still the process named COMM (a pid may have been reused since).
stop_pid() {
  local pid=$1 comm=$2 i
  [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = "$comm" ] || return 0
  kill "$pid" 2>/dev/null || return 0
  for i in $(seq 1 50); do
    [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = "$comm" ] || return 0
    sleep 0.1
  done
  note "$comm ($pid) did not stop on SIGTERM; SIGKILL"
  kill -9 "$pid" 2>/dev/null || true
}

gluster_cli() { gluster --mode=script "$@"; }

# Stops and deletes a volume this script created, then stops any brick process of it that
# outlived `volume stop` (their pid files are read first: stopping removes them).
delete_volume() {
  local vol=$1 pidfile pids=()
  for pidfile in /var/run/gluster/vols/"$vol"/*.pid; do
    [ -f "$pidfile" ] && pids+=("$(cat "$pidfile")")
  done
  gluster_cli volume stop "$vol" force >/dev/null 2>&1 || true
  gluster_cli volume delete "$vol" >/dev/null 2>&1 || note "could not delete volume $vol"
  for pid in "${pids[@]}"; do stop_pid "$pid" glusterfsd; done
}

# Removes what appeared under kGlusterSystemDirs since SNAPSHOT was taken (deepest first).
prune_new() {
  local snapshot=$1 path
  find "${kGlusterSystemDirs[@]}" 2>/dev/null | sort -r | while read -r path; do
    grep -qxF -- "$path" "$snapshot" && continue
    if [ -d "$path" ] && [ ! -L "$path" ]; then rm -rf -- "$path"; else rm -f -- "$path"; fi
  done
}

undo_step() {
  local action=$1
  shift
  case $action in
    unmount) unmount "$1" ;;
    stop) stop_pid "$1" "$2" ;;
    volume) delete_volume "$1" ;;
    prune) prune_new "$1" ;;
    rmdir) rmdir -- "$1" 2>/dev/null || true ;;
    rmtree) rm -rf -- "$1" ;;
    *) note "unknown undo action '$action'" ;;
  esac
}

teardown() {
  local kind=$1 line
  state=$state_root/$kind
  [ -d "$state" ] || return 0
  if [ -f "$state/undo" ]; then
    tac "$state/undo" | while read -r line; do
      eval "set -- $line"
      undo_step "$@" || note "undo step failed: $line"
    done
  fi
  rm -rf -- "$state"
  rmdir -- "$state_root" 2>/dev/null || true
}

# ---- helpers for `up` ------------------------------------------------------------------------
wait_for() {  # wait_for WHAT COMMAND...: polls COMMAND for STORES_TIMEOUT seconds
  local what=$1 i
  shift
  for i in $(seq 1 $((timeout_s * 10))); do
    "$@" >/dev/null 2>&1 && return 0
    sleep 0.1
  done
  die "timed out after ${timeout_s}s waiting for $what"
}

# Installs the Debian packages that are missing. Their services are kept from starting (the
# stores run private daemons): a policy-rc.d that says no is put in place for the install if the
# machine has none.
ensure_packages() {
  local p missing=() policy=/usr/sbin/policy-rc.d made_policy=0
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
      missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  [ "$(id -u)" -eq 0 ] || die "needs root to install ${missing[*]}"
  note "installing ${missing[*]}"
  if [ ! -e "$policy" ]; then
    printf '#!/bin/sh\nexit 101\n' >"$policy" && chmod 755 "$policy" && made_policy=1
  fi
  export DEBIAN_FRONTEND=noninteractive
  local rc=0
  { apt-get update -qq && apt-get install -y -qq --no-install-recommends "${missing[@]}"; } \
    >"$state/apt.log" 2>&1 || rc=$?
  [ $made_policy -eq 1 ] && rm -f "$policy"
  [ $rc -eq 0 ] || { cat "$state/apt.log" >&2; die "apt-get install ${missing[*]} failed"; }
}

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])'
}

# DIR must be an empty directory (made if missing: then `down` removes it) with nothing mounted.
prepare_mountpoint() {
  local dir=$1
  is_mounted "$dir" && die "$dir: something is already mounted there"
  if [ ! -e "$dir" ]; then
    mkdir -p -- "$dir"
    record rmdir "$dir"
  fi
  [ -d "$dir" ] || die "$dir: not a directory"
  [ -z "$(ls -A -- "$dir")" ] || die "$dir: not empty"
}

# The source directory of sshfs and delay: --source, or a new one under the state (removed at
# `down` with the data written into it).
prepare_source() {
  if [ -n "$source" ]; then
    [ -d "$source" ] || die "--source $source: not a directory"
    source=$(cd "$source" && pwd)
  else
    source=$state/source
    mkdir -p "$source"
  fi
  info source "$source"
}

# ---- the kinds -------------------------------------------------------------------------------
up_local() {
  if [ ! -e "$dir" ]; then
    mkdir -p -- "$dir"
    record rmtree "$dir"
  fi
  [ -d "$dir" ] || die "$dir: not a directory"
}

# Starts the sshd of $state/sshd_config (listening on PORT), records it, waits until it answers.
start_sshd() {
  local port=$1
  setsid /usr/sbin/sshd -D -f "$state/sshd_config" -E "$state/sshd.log" \
    </dev/null >/dev/null 2>&1 &
  local sshd_pid=$!
  record stop "$sshd_pid" sshd
  info sshd_pid "$sshd_pid"
  wait_for "sshd on 127.0.0.1:$port" bash -c "exec 3<>/dev/tcp/127.0.0.1/$port"
}

up_sshfs() {
  ensure_packages openssh-server sshfs
  prepare_source
  local user port
  user=$(id -un)
  ssh-keygen -q -t ed25519 -N '' -C ccfs-stores-host -f "$state/host_key"
  ssh-keygen -q -t ed25519 -N '' -C ccfs-stores-client -f "$state/client_key"
  echo "restrict $(cat "$state/client_key.pub")" >"$state/authorized_keys"
  # sshd's privilege separation directory; Debian's sshd service makes it, a bare sshd does not.
  if [ ! -d /run/sshd ]; then
    mkdir -p /run/sshd && chmod 755 /run/sshd
    record rmdir /run/sshd
  fi
  port=$(free_port)
  info port "$port"
  cat >"$state/sshd_config" <<EOF
# A private sshd for scripts/stores.sh: loopback only, one key, sftp only.
ListenAddress 127.0.0.1:$port
HostKey $state/host_key
PidFile none
AuthorizedKeysFile $state/authorized_keys
AuthenticationMethods publickey
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
PermitRootLogin prohibit-password
AllowUsers $user
# The state directory sits under /var/tmp (world-writable, sticky), which StrictModes refuses.
StrictModes no
UsePAM no
PermitTTY no
X11Forwarding no
AllowTcpForwarding no
AllowAgentForwarding no
Subsystem sftp internal-sftp
ForceCommand internal-sftp
EOF
  /usr/sbin/sshd -t -f "$state/sshd_config" || die "sshd rejects $state/sshd_config"
  start_sshd "$port"
  echo "[127.0.0.1]:$port $(cut -d' ' -f1,2 "$state/host_key.pub")" >"$state/known_hosts"
  cat >"$state/ssh_config" <<EOF
Host ccfs-store
  HostName 127.0.0.1
  Port $port
  User $user
  IdentityFile $state/client_key
  IdentitiesOnly yes
  UserKnownHostsFile $state/known_hosts
  GlobalKnownHostsFile /dev/null
  StrictHostKeyChecking yes
  BatchMode yes
  ServerAliveInterval 5
  ServerAliveCountMax 3
  Compression no
  ControlMaster no
  LogLevel ERROR
EOF
  local opts=dir_cache=no,no_readahead,attr_timeout=$timeouts,entry_timeout=$timeouts,reconnect
  opts+=,fsname=ccfs-store-sshfs
  # The page-cache baseline keeps a name's absence as long as ccfs does (negative_timeout); the
  # mount ccfs reads asks the store each time, as ccfs's own lookups must reach it.
  if [ $page_cache -eq 1 ]; then opts+=,auto_cache,negative_timeout=1; else opts+=,direct_io; fi
  if [ -n "$owner" ]; then
    opts+=,allow_other,uid=$(id -u "$owner"),gid=$(id -g "$owner")
  fi
  info options "$opts"
  setsid sshfs -f -F "$state/ssh_config" "ccfs-store:$source" "$dir" -o "$opts" \
    </dev/null >"$state/sshfs.log" 2>&1 &
  local sshfs_pid=$!
  record stop "$sshfs_pid" sshfs
  record unmount "$dir"
  info sshfs_pid "$sshfs_pid"
  wait_for "sshfs at $dir (log: $state/sshfs.log)" is_mounted "$dir"
}

gluster_host() {
  if [ -n "${STORES_GLUSTER_HOST:-}" ]; then echo "$STORES_GLUSTER_HOST"; return; fi
  local ip
  ip=$(hostname -I | awk '{print $1}')
  [ -n "$ip" ] || die "no non-loopback address for the brick: set STORES_GLUSTER_HOST"
  echo "$ip"
}

tune_gluster() {
  local vol=$1 o
  for o in "${kGlusterCachesOff[@]}"; do
    gluster_cli volume set "$vol" "performance.$o" off >/dev/null ||
      die "gluster volume set $vol performance.$o off failed"
  done
}

# Warns about client caches of VOLUME not set off (asking SERVER's glusterd with `volume info`,
# which, unlike `volume get`, answers a remote CLI; it lists only the options that were set, and
# some are on by default, so each must be there and off).
check_gluster_caches() {
  local server=$1 vol=$2 o volinfo on=()
  volinfo=$(gluster --remote-host="$server" --mode=script volume info "$vol" 2>&1) ||
    die "gluster --remote-host=$server volume info $vol: $volinfo"
  for o in "${kGlusterCachesOff[@]}"; do
    awk -v k="performance.$o:" '$1 == k && ($2 == "off" || $2 == "false" || $2 == "disable") {f = 1}
                               END {exit !f}' <<<"$volinfo" || on+=("$o")
  done
  [ ${#on[@]} -eq 0 ] ||
    note "WARNING: $server:$vol does not have these client caches set off: ${on[*]}; reads" \
         "may not reach the store. On a server run: scripts/stores.sh tune-gluster $vol"
}

up_gluster() {
  local server vol
  if [ -n "${STORES_GLUSTER_VOLUME:-}" ]; then
    ensure_packages glusterfs-client glusterfs-cli
    # An existing (multi-node) volume: only this client's mount is ours.
    [[ $STORES_GLUSTER_VOLUME == *:* ]] ||
      die "STORES_GLUSTER_VOLUME=$STORES_GLUSTER_VOLUME: want SERVER:VOLUME"
    server=${STORES_GLUSTER_VOLUME%%:*}
    vol=${STORES_GLUSTER_VOLUME#*:}
    vol=${vol#/}
    check_gluster_caches "$server" "$vol"
  else
    ensure_packages glusterfs-server glusterfs-client
    server=$(gluster_host)
    vol=$kGlusterVolume
    if ! pgrep -x glusterd >/dev/null; then
      # glusterd's own state goes to a working directory of its own; what it and the bricks still
      # write under /var/{lib,log,run} is removed at `down` (prune: taken before it starts).
      find "${kGlusterSystemDirs[@]}" 2>/dev/null >"$state/system-dirs.before" || true
      record prune "$state/system-dirs.before"
      mkdir -p "$state/glusterd"
      sed "s#option working-directory .*#option working-directory $state/glusterd#" \
        /etc/glusterfs/glusterd.vol >"$state/glusterd.vol"
      setsid glusterd -N -f "$state/glusterd.vol" -l "$state/glusterd.log" \
        </dev/null >>"$state/glusterd.log" 2>&1 &
      local glusterd_pid=$!
      record stop "$glusterd_pid" glusterd
      info glusterd_pid "$glusterd_pid"
      info started_glusterd 1
    else
      # A glusterd that another state's `up` started keeps its volumes in that state and stops at
      # that state's `down`, taking ours with it (and we would prune its files at ours): not shared.
      local other
      for other in $(pgrep -x glusterd); do
        other=$(tr '\0' '\n' <"/proc/$other/cmdline" 2>/dev/null | sed -n '/^-f$/{n;p;}')
        [[ $other == */gluster/glusterd.vol ]] &&
          die "the running glusterd was started by scripts/stores.sh for ${other%/gluster/*}" \
              "and stops at its \`down\`: wait for that, or point STORES_STATE_DIR there"
      done
      note "using the glusterd already running (it is left running at down)"
    fi
    wait_for "glusterd (log: $state/glusterd.log)" gluster_cli volume list
    gluster_cli volume info "$vol" >/dev/null 2>&1 &&
      die "a volume $vol exists already (not made by this state: $state); delete it first"
    local brick_parent=${brick_dir:-$state/bricks}
    mkdir -p "$brick_parent"
    brick_parent=$(cd "$brick_parent" && pwd)
    [ -e "$brick_parent/$vol" ] && die "$brick_parent/$vol exists already"
    record rmtree "$brick_parent/$vol"
    # `force`: GlusterFS refuses a brick on the root file system without it.
    gluster_cli volume create "$vol" "$server:$brick_parent/$vol" force >/dev/null
    record volume "$vol"
    tune_gluster "$vol"
    if [ $remote_dio -eq 1 ]; then
      gluster_cli volume set "$vol" network.remote-dio enable >/dev/null
    fi
    gluster_cli volume start "$vol" >/dev/null
    info brick "$server:$brick_parent/$vol"
  fi
  local opts=(--process-name fuse --volfile-server="$server" --volfile-id="$vol"
              --attribute-timeout="$timeouts" --entry-timeout="$timeouts"
              --log-file="$state/client.log")
  local backup
  for backup in $(tr ':' ' ' <<<"${STORES_GLUSTER_BACKUP:-}"); do
    opts+=(--volfile-server="$backup")
  done
  # As for sshfs: the page-cache baseline keeps a name's absence as long as ccfs does.
  if [ $page_cache -eq 1 ]; then
    opts+=(--direct-io-mode=disable --fopen-keep-cache=yes --negative-timeout=1)
  else
    opts+=(--direct-io-mode=enable --fopen-keep-cache=no --negative-timeout=0)
  fi
  info volume "$server:$vol"
  info options "${opts[*]}"
  setsid glusterfs -N "${opts[@]}" "$dir" </dev/null >>"$state/client.log" 2>&1 &
  local client_pid=$!
  record stop "$client_pid" glusterfs
  record unmount "$dir"
  info client_pid "$client_pid"
  wait_for "the GlusterFS mount at $dir (log: $state/client.log)" is_mounted "$dir"
}

find_delay_fs() {
  local b
  for b in "${DELAY_FS:-}" "$repo"/build/delay_fs "$repo"/build-perf/delay_fs \
           "$repo"/build*/delay_fs; do
    [ -n "$b" ] && [ -x "$b" ] && { echo "$b"; return; }
  done
  note "no delay_fs binary: building it in $repo/build"
  [ -f "$repo/build/build.ninja" ] || [ -f "$repo/build/Makefile" ] ||
    cmake -S "$repo" -B "$repo/build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >&2
  cmake --build "$repo/build" --target delay_fs >&2
  echo "$repo/build/delay_fs"
}

up_delay() {
  local bin
  bin=$(find_delay_fs)
  prepare_source
  local args=("$source" "$dir" --delay-us "$delay_us" --mib-per-s "$mib_per_s" --wait "$wait_kind")
  [ $page_cache -eq 1 ] && args+=(--page-cache)
  info delay_us "$delay_us"
  info mib_per_s "$mib_per_s"
  setsid "$bin" "${args[@]}" </dev/null >"$state/delay_fs.log" 2>&1 &
  local pid=$!
  record stop "$pid" delay_fs
  record unmount "$dir"
  info delay_fs_pid "$pid"
  wait_for "delay_fs at $dir (log: $state/delay_fs.log)" is_mounted "$dir"
}

# ---- commands --------------------------------------------------------------------------------
check_kind() {
  local k
  for k in "${kinds[@]}"; do [ "$1" = "$k" ] && return 0; done
  die "unknown KIND '$1': want one of ${kinds[*]}"
}

cmd_up() {
  [ $# -ge 2 ] || usage
  kind=$1 dir=$2
  shift 2
  check_kind "$kind"
  source="" delay_us=200 mib_per_s=0 wait_kind=hybrid page_cache=0 brick_dir="" remote_dio=0
  owner=""
  timeouts=1
  while [ $# -gt 0 ]; do
    case $1 in
      --source) source=${2:?--source needs a directory}; shift ;;
      --delay-us) delay_us=${2:?--delay-us needs a number}; shift ;;
      --mib-per-s) mib_per_s=${2:?--mib-per-s needs a number}; shift ;;
      --wait) wait_kind=${2:?--wait needs hybrid, sleep or spin}; shift ;;
      --page-cache) page_cache=1 ;;
      --timeouts) timeouts=${2:?--timeouts needs a number of seconds}; shift ;;
      --brick-dir) brick_dir=${2:?--brick-dir needs a directory}; shift ;;
      --remote-dio) remote_dio=1 ;;
      --owner) owner=${2:?--owner needs a user}; id -u "$owner" >/dev/null 2>&1 ||
                 die "--owner $owner: no such user"; shift ;;
      *) die "up $kind: unknown option '$1' (see scripts/stores.sh --help)" ;;
    esac
    shift
  done
  [[ $delay_us =~ ^[0-9]+$ ]] || die "--delay-us $delay_us: want a whole number of µs"
  [[ $timeouts =~ ^[0-9]+$ ]] || die "--timeouts $timeouts: want a whole number of seconds"
  [[ $mib_per_s =~ ^[0-9]+(\.[0-9]+)?$ ]] || die "--mib-per-s $mib_per_s: want a number of MiB/s"
  [[ $dir == /* ]] || dir=$PWD/$dir
  dir=${dir%/}
  state=$state_root/$kind
  [ -e "$state" ] &&
    die "$kind is up already at $(info_get "$kind" dir); run: scripts/stores.sh down $kind"
  [ "$kind" = local ] || [ "$(id -u)" -eq 0 ] || die "up $kind needs root"
  mkdir -p "$state"
  : >"$state/undo"
  info kind "$kind"
  info dir "$dir"
  # Until `up` has finished, any exit (an error, a signal) undoes what it did.
  trap 'rc=$?; trap - EXIT; note "up $kind failed; undoing"; teardown "$kind"; exit $rc' EXIT
  trap 'exit 130' INT TERM
  [ "$kind" = local ] || prepare_mountpoint "$dir"
  "up_$kind"
  trap - EXIT INT TERM
  echo "$kind up at $dir"
}

cmd_down() {
  [ $# -eq 1 ] || usage
  check_kind "$1"
  [ -d "$state_root/$1" ] || { note "$1 is not up"; return 0; }
  local dir
  dir=$(info_get "$1" dir)
  teardown "$1"
  if [ "$1" != local ] && is_mounted "$dir"; then die "$dir is still mounted"; fi
  echo "$1 down"
}

cmd_status() {
  local k any=0
  for k in "${kinds[@]}"; do
    [ -f "$state_root/$k/info" ] || continue
    any=1
    echo "[$k]"
    sed 's/^/  /' "$state_root/$k/info"
    local dir
    dir=$(info_get "$k" dir)
    if [ "$k" != local ]; then
      if is_mounted "$dir"; then
        echo "  mounted: $(awk -v d="$dir" '$2 == d {print $1, $3}' /proc/mounts)"
      else
        echo "  mounted: NO"
      fi
    fi
    sed -n 's/^\([a-z_]*\)_pid=\(.*\)$/\1 \2/p' "$state_root/$k/info" | while read -r name pid; do
      if kill -0 "$pid" 2>/dev/null; then echo "  $name $pid: running"
      else echo "  $name $pid: GONE"; fi
    done
  done
  [ $any -eq 1 ] || echo "no store is up"
}

# The store side: sshd's descendants (the sftp sessions), the volume's bricks, delay_fs. None for
# local, nor for a GlusterFS volume this script did not create (its bricks are elsewhere).
cmd_server_pids() {
  [ $# -eq 1 ] || usage
  check_kind "$1"
  [ -f "$state_root/$1/info" ] || die "$1 is not up"
  local pid pidfile
  case $1 in
    sshfs)
      # The leaves under sshd: each session's sftp server (its parent only relays the bytes).
      local todo=("$(info_get sshfs sshd_pid)") children
      while [ ${#todo[@]} -gt 0 ]; do
        pid=${todo[0]}
        todo=("${todo[@]:1}")
        children=$(cat /proc/"$pid"/task/*/children 2>/dev/null || true)
        if [ -z "$children" ]; then [ "$pid" = "$(info_get sshfs sshd_pid)" ] || echo "$pid"; fi
        for child in $children; do todo+=("$child"); done
      done
      ;;
    gluster)
      [ -n "$(info_get gluster brick)" ] || return 0
      local vol
      vol=$(info_get gluster volume)
      for pidfile in /var/run/gluster/vols/"${vol#*:}"/*.pid; do
        [ -f "$pidfile" ] && cat "$pidfile"
      done
      ;;
    delay) info_get delay delay_fs_pid; echo ;;
    local) ;;
  esac
}

# A store outage and its end, for tests of what the client in front of it does.
# sshfs: sshd and its sftp sessions killed (the sshfs client, mounted with `reconnect`, keeps
# its mount and fails each request until it can connect again); started again from the same
# config. gluster: the volume's brick processes killed; `volume start force` starts them again.
cmd_stop_server() {
  [ $# -eq 1 ] || usage
  [ -f "$state_root/$1/info" ] || die "$1 is not up"
  state=$state_root/$1
  local pid p
  case $1 in
    sshfs)
      pid=$(info_get sshfs sshd_pid)
      [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = sshd ] || die "sshd ($pid) is not running"
      # The sessions first: once the listener is gone nothing would answer for them.
      for p in $(cmd_server_pids sshfs) $(cat /proc/"$pid"/task/*/children 2>/dev/null); do
        kill -9 "$p" 2>/dev/null || true
      done
      kill -9 "$pid"
      ;;
    gluster)
      [ -n "$(info_get gluster brick)" ] || die "the GlusterFS volume was not created here"
      pid=$(cmd_server_pids gluster)
      [ -n "$pid" ] || die "no brick process of the volume is running"
      kill -9 $pid  # one pid per brick
      # Until the brick has exited and glusterd has seen it go, `volume start force` takes it for
      # running (its pid file stays).
      wait_for "the bricks of $(info_get gluster volume) to stop" bricks_offline $pid
      ;;
    *) die "stop-server: $1 has no server to stop (sshfs, gluster)" ;;
  esac
}

# True once each PID has exited and glusterd shows no brick of the volume online (`volume status
# --xml`: <status>1</status> is an online brick).
bricks_offline() {
  local vol pid
  for pid in "$@"; do [ ! -e "/proc/$pid" ] || return 1; done
  vol=$(info_get gluster volume)
  ! gluster_cli volume status "${vol#*:}" --xml 2>/dev/null | grep -q '<status>1</status>'
}

brick_alive() {
  local pid
  for pid in $(cmd_server_pids gluster); do
    [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = glusterfsd ] && return 0
  done
  return 1
}

cmd_start_server() {
  [ $# -eq 1 ] || usage
  [ -f "$state_root/$1/info" ] || die "$1 is not up"
  state=$state_root/$1
  case $1 in
    sshfs) start_sshd "$(info_get sshfs port)" ;;
    gluster)
      local vol
      vol=$(info_get gluster volume)
      vol=${vol#*:}
      gluster_cli volume start "$vol" force >/dev/null
      wait_for "a brick of $vol" brick_alive
      ;;
    *) die "start-server: $1 has no server to start (sshfs, gluster)" ;;
  esac
}

# Drops the page cache of every file the store serves from (on this machine): `dd iflag=nocache
# count=0` is posix_fadvise(POSIX_FADV_DONTNEED) over the whole file. Dirty pages are written first.
cmd_evict() {
  [ $# -eq 1 ] || usage
  check_kind "$1"
  [ -f "$state_root/$1/info" ] || die "$1 is not up"
  local root
  case $1 in
    sshfs | delay) root=$(info_get "$1" source) ;;
    gluster)
      root=$(info_get gluster brick)
      [ -n "$root" ] || die "the GlusterFS volume was not created here: evict on its servers"
      root=${root#*:}
      ;;
    local) root=$(info_get local dir) ;;
  esac
  sync -f "$root"
  # POSIX_FADV_DONTNEED on every file (what `dd iflag=nocache count=0` does), in one process: a
  # tree of 100,000 files is evicted in seconds, not minutes of a process per file.
  python3 - "$root" <<'PY'
import os, sys
root = sys.argv[1]
for d, dirs, files in os.walk(root):
    if d == root and ".glusterfs" in dirs:
        dirs.remove(".glusterfs")
    for f in files:
        p = os.path.join(d, f)
        try:
            fd = os.open(p, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        except OSError:
            continue
        try:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)
PY
}

case ${1:-} in
  up) shift; cmd_up "$@" ;;
  evict) shift; cmd_evict "$@" ;;
  server-pids) shift; cmd_server_pids "$@" ;;
  stop-server) shift; cmd_stop_server "$@" ;;
  start-server) shift; cmd_start_server "$@" ;;
  down) shift; cmd_down "$@" ;;
  status) cmd_status ;;
  tune-gluster) [ $# -eq 2 ] || usage; tune_gluster "$2"; echo "client caches of $2 off" ;;
  -h | --help | help | "") usage ;;
  *) die "unknown command '$1' (up, down, status, server-pids, evict, stop-server, start-server," \
         "tune-gluster)" ;;
esac
