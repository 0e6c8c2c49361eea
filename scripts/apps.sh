#!/usr/bin/env bash
# Real programs: ccfs against the page cache on the same store, equal RAM, interleaved rounds.
#
#   scripts/apps.sh [--stores "local sshfs gluster"] [--apps "pgbench sqlite grep pyimport tar"]
#                   [--memory SIZE] [--ratio R] [--rounds N] [--config KEY=V,...] [--warmup]
#                   [--seconds S] [--out DIR]
#
# Each program runs unchanged (a) on the store directly, in a memory cgroup (v1) of --memory
# (default 128MiB), so the page cache of its files is held to it: "page cache"; and (b) on a fresh
# ccfs mount over the same store, the program and the ccfs daemon in one cgroup of that size, ccfs's
# memory = 85% of it less 32 MiB (lib.sh, ccfs_memory_for) with the keys of --config (default
# raw_tier=kernel,compressed_percent=75,compressor=zstd). The caches are dropped before every run
# (the kernel's and the store server's: stores.sh evict). Rounds alternate the order (page cache
# first, then ccfs first). The program's data is --ratio (default 2) times --memory, written once per
# store (pyimport's modules excepted: they are what they are, 146 MiB):
#   pgbench   PostgreSQL 15 (Debian), the data directory on the store (ccfs: on the mount),
#             shared_buffers = 16MB, pgbench's tables at the scale that fills the data size;
#             `pgbench -S` (select only) then the default read-write mix (TPC-B like, commits
#             fsync'd), 4 clients, --seconds each. Figure: tps. Over sshfs the store's mounts
#             show every file as postgres's (stores.sh --owner): the server writes as root.
#   sqlite    a database file of one table (id, key, 200-byte text payload) with an index on key;
#             Python's sqlite3 module opens it read-only and runs for --seconds: 90% point lookups
#             by key on Pareto 80/20 keys (scattered), 10% range scans of 100 rows by id at
#             uniform starts. Figure: queries/s.
#   grep      `grep -r -c WORD DIR` over a tree of text files of 4-64 KiB, twice (grep1 cold, grep2
#             again at once). Figure: MiB/s.
#   pyimport  a program start: Python 3.11 imports 138 modules (the standard library, numpy,
#             matplotlib.pyplot, PIL, yaml, pygments, cryptography) from a copy of them on the
#             store (PYTHONHOME, PYTHONPATH, -S: nothing from /usr/lib), twice (import1 cold,
#             import2 again). Figure: seconds.
#   tar       `tar cf - DIR | cat >/dev/null` of the grep tree, cold. Figure: MiB/s.
# --warmup: before the program, `ccfs warmup MNT DATA` on the ccfs side and `cat` of the same
# files into /dev/null on the page-cache side (both inside the cgroup): "warmed" in the table.
# Stores as in scripts/stream_bench.sh: ccfs reads a mount of the store whose every read reaches it
# (sshfs direct_io, GlusterFS direct-io-mode with --remote-dio); the page cache reads a second mount
# of the same store that the kernel caches (--page-cache). The stores' own client caches are off.
#
# Writes OUT/apps.csv (one row per run and figure: the figure, seconds, the --config keys of the
# call (page cache rows too: the ccfs runs they alternated with), for ccfs the hit ratio of the
# reads that reached its daemon, the daemon's CPU seconds (/proc/PID/stat, user + system), the
# bytes it answered and CPU s per GiB of them) and, by bench/apps_report.py, OUT/apps.md and
# OUT/apps.png. Runs in pieces (a store, a few programs, a configuration): a later call with the
# same --out appends. Needs root. Leaves no mount, store, daemon, cgroup or postgres behind.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
me=apps
source scripts/lib.sh

stores="local"
apps="sqlite grep pyimport tar pgbench"
memory=128MiB
ratio=2
rounds=2
config="raw_tier=kernel,compressed_percent=75,compressor=zstd"
warmup=0
seconds=20
out="$root/results/apps-$(date +%Y%m%d)"
while [ $# -gt 0 ]; do
  case "$1" in
    --stores) stores=$2; shift 2 ;;
    --apps) apps=$2; shift 2 ;;
    --memory) memory=$2; shift 2 ;;
    --ratio) ratio=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --config) config=$2; shift 2 ;;
    --warmup) warmup=1; shift ;;
    --seconds) seconds=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    *) echo "apps: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
equal_ram_checks "$memory"
data_bytes=$(( ratio * memory_bytes ))
pg_bin=/usr/lib/postgresql/15/bin

# What the programs need, from the Debian packages.
need=()
for p in postgresql-15 python3 python3-numpy python3-matplotlib python3-pil python3-yaml \
         python3-pygments python3-cryptography grep tar; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || need+=("$p")
done
if [ ${#need[@]} -gt 0 ]; then
  log "installing ${need[*]}"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

bench_workspace apps
pg_dir=""  # a postgres data directory with a server running, stopped at exit
pg_sock=$work/pgsock
pg_stop() {
  if [ -n "$pg_dir" ]; then
    runuser -u postgres -- "$pg_bin/pg_ctl" -D "$pg_dir" -m fast -w stop >/dev/null 2>&1 || true
    pg_dir=""
  fi
}
daemon_pid=""  # the ccfs daemon of the run in progress, if any
# A run that failed because its ccfs daemon went away says so (daemon_check), whatever the program.
on_exit() {
  local rc=$1
  if [ "$rc" -ne 0 ] && [ -n "$daemon_pid" ] && [ -z "${daemon_told:-}" ]; then
    (daemon_check "the run") || true
  fi
  pg_stop
  bench_cleanup
}
trap 'on_exit $?' EXIT
mkdir -p "$out" "$pg_sock"
chown postgres "$pg_sock"
csv=$out/apps.csv
[ -s "$csv" ] || echo "store,app,phase,target,config,warmup,round,value,unit,seconds,hit_ratio,daemon_cpu_s,served_bytes,cpu_s_per_gib,memory,data_bytes" >"$csv"

# --- the programs' data, written once per store into DIR/apps ---------------------------------

# A tree of text files of 4-64 KiB (a 16 MiB text block, each file a slice after a line of its
# own; compresses ~3x), data_bytes in all.
make_tree() {
  python3 - "$1" "$data_bytes" <<'PY'
import os, random, sys
root, total = sys.argv[1], int(sys.argv[2])
rng = random.Random(1)
words = ["%x" % (i * 2654435761 % 99991) for i in range(5000)] + ["needle"]
out, have = [], 0
while have < 16 << 20:
    line = " ".join(rng.choice(words) for _ in range(12)) + " %d\n" % rng.randrange(10**6)
    out.append(line); have += len(line)
block = "".join(out).encode()[:16 << 20]
k, have = 0, 0
while have < total:
    d = os.path.join(root, "d%02d" % (k % 50), "e%d" % ((k // 50) % 10))
    os.makedirs(d, exist_ok=True)
    size = 4096 + rng.randrange(60 * 1024)
    at = rng.randrange(len(block) - size)
    head = b"file %d\n" % k
    with open(os.path.join(d, "f%d.txt" % k), "wb") as f:
        f.write(head + block[at:at + size - len(head)])
    k += 1; have += size
PY
}

# One table of rows (id, key, payload) filling about data_bytes, an index on key.
make_sqlite() {
  python3 - "$1" "$data_bytes" <<'PY'
import random, sqlite3, sys
path, total = sys.argv[1], int(sys.argv[2])
rows = total // 250  # ~250 bytes per row with the index
rng = random.Random(2)
words = ["%x" % (i * 2654435761 % 99991) for i in range(5000)]
db = sqlite3.connect(path)
db.execute("PRAGMA page_size=4096")
db.execute("PRAGMA journal_mode=OFF")
db.execute("PRAGMA synchronous=OFF")
db.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, key INTEGER, payload TEXT)")
def gen():
    for i in range(rows):
        yield (i, (i * 2654435761) % (1 << 32), " ".join(rng.choice(words) for _ in range(40))[:200])
db.executemany("INSERT INTO t VALUES (?,?,?)", gen())
db.execute("CREATE INDEX t_key ON t(key)")
db.commit()
db.close()
print(rows)
PY
}

# Python's standard library and a set of packages, copied so that imports find them there alone.
make_py() {
  local d=$1
  mkdir -p "$d/lib" "$d/dist"
  cp -a /usr/lib/python3.11 "$d/lib/"
  rm -rf "$d/lib/python3.11/site-packages" "$d/lib/python3.11/dist-packages"
  local p
  for p in numpy matplotlib PIL dateutil pyparsing fontTools kiwisolver contourpy cycler.py \
           mpl_toolkits packaging six.py pygments yaml _yaml cryptography cffi _cffi_backend.cpython-311-x86_64-linux-gnu.so; do
    [ -e "/usr/lib/python3/dist-packages/$p" ] && cp -a "/usr/lib/python3/dist-packages/$p" "$d/dist/"
  done
  # Compiled once here, as the distribution ships them: the runs read .pyc files, write none.
  /usr/bin/python3 -S -m compileall -q "$d/dist" >/dev/null 2>&1 || true
}

# A PostgreSQL cluster and pgbench's tables at the scale that fills data_bytes (~15 MiB a unit).
make_pg() {
  local d=$1 scale=$(( data_bytes / (15 << 20) ))
  [ "$scale" -ge 1 ] || scale=1
  mkdir -p "$d"
  chown postgres: "$d"
  chmod 700 "$d"
  runuser -u postgres -- "$pg_bin/initdb" -D "$d" -A trust --no-sync >/dev/null
  cat >>"$d/postgresql.conf" <<EOF
shared_buffers = 16MB
listen_addresses = ''
unix_socket_directories = '$pg_sock'
port = 5499
max_connections = 20
EOF
  pg_start "$d" ""
  runuser -u postgres -- "$pg_bin/pgbench" -h "$pg_sock" -p 5499 -i -q -s "$scale" postgres >/dev/null 2>&1
  pg_stop
}
pg_start() {  # DIR CGROUP ("": none)
  local cmd=(runuser -u postgres -- "$pg_bin/pg_ctl" -D "$1" -l "$pg_sock/pg.log" -w start)
  if [ -n "$2" ]; then in_cgroup "$2" "${cmd[@]}" >/dev/null; else "${cmd[@]}" >/dev/null; fi
  pg_dir=$1
}

make_data() {  # FILES (the store's files, written directly)
  local a=$1/apps
  mkdir -p "$a"
  local want=$data_bytes
  if [[ " $apps " == *" grep "* || " $apps " == *" tar "* ]] && [ "$(cat "$a/tree.done" 2>/dev/null)" != "$want" ]; then
    log "writing the text tree ($(( want >> 20 )) MiB)"
    rm -rf "$a/tree"; mkdir -p "$a/tree"; make_tree "$a/tree"
    du -sb --apparent-size "$a/tree" | cut -f1 >"$a/tree.bytes"
    echo "$want" >"$a/tree.done"
  fi
  if [[ " $apps " == *" sqlite "* ]] && [ "$(cat "$a/sqlite.done" 2>/dev/null)" != "$want" ]; then
    log "writing the SQLite database"
    rm -f "$a/db.sqlite"; make_sqlite "$a/db.sqlite" >"$a/sqlite.rows"; echo "$want" >"$a/sqlite.done"
  fi
  if [[ " $apps " == *" pyimport "* ]] && [ ! -f "$a/py.done" ]; then
    log "copying Python's modules"
    rm -rf "$a/py"; make_py "$a/py"; touch "$a/py.done"
  fi
  if [[ " $apps " == *" pgbench "* ]] && [ "$(cat "$a/pg.done" 2>/dev/null)" != "$want" ]; then
    log "initializing PostgreSQL and pgbench's tables"
    rm -rf "$a/pg"; make_pg "$a/pg"; echo "$want" >"$a/pg.done"
  fi
}

# --- one run -------------------------------------------------------------------------------------

# The modules pyimport imports.
py_modules="abc argparse ast asyncio base64 bisect bz2 calendar cmd codecs collections
colorsys concurrent.futures configparser contextlib copy csv ctypes dataclasses datetime decimal
difflib dis email email.mime.text email.parser enum filecmp fnmatch fractions ftplib functools
getopt gettext glob gzip hashlib heapq hmac html html.parser http.client http.server imaplib
importlib inspect io ipaddress itertools json logging logging.handlers lzma mailbox mimetypes
multiprocessing numbers operator optparse os pathlib pickle pkgutil platform plistlib poplib pprint
profile pstats queue quopri random re reprlib sched secrets selectors shelve shlex shutil signal
smtplib socket socketserver sqlite3 ssl stat statistics string struct subprocess tarfile tempfile
textwrap threading timeit tokenize trace traceback types typing unittest unittest.mock urllib.parse
urllib.request uuid warnings wave weakref xml.dom.minidom xml.etree.ElementTree xml.sax xmlrpc.client
zipfile zipimport zlib numpy numpy.linalg numpy.fft numpy.random matplotlib matplotlib.pyplot
matplotlib.figure PIL.Image yaml pygments pygments.lexers pygments.formatters
cryptography.fernet cryptography.hazmat.primitives.hashes dateutil.parser pyparsing packaging.version
fontTools.ttLib kiwisolver contourpy cycler six"

cpu_of() {  # PID: user + system seconds of the process (0 if it is gone)
  awk '{printf "%.2f", ($14 + $15) / 100}' "/proc/$1/stat" 2>/dev/null || echo 0
}
stat_of() {  # MNT: "HITS READS SERVED_BYTES" of its stats.json (pages; bytes answered)
  python3 - "$1" <<'PY' 2>/dev/null || echo "0 0 0"
import json, sys
d = json.load(open(sys.argv[1] + "/.ccfs/stats.json"))
print(d["raw_hits"] + d["compressed_hits"], d["reads"],
      d["raw_hit_bytes"] + d["compressed_hit_bytes"] + d["miss_bytes"])
PY
}

# STORE TARGET ROUND APP PHASE VALUE UNIT SECONDS: one CSV row; for ccfs with its hit ratio, CPU
# and bytes served since the previous row of this mount ($stat0: stat_of then, $cpu0: cpu_of then).
row() {
  local s=$1 t=$2 r=$3 a=$4 p=$5 v=$6 u=$7 sec=$8 hit="" cpu="" served="" per="" cfg
  if [ "$t" = ccfs ]; then
    local now_cpu st
    now_cpu=$(cpu_of "$daemon_pid")
    st=$(stat_of "$mnt")
    read -r hit cpu served per < <(python3 -c "
import sys
h0, r0, b0 = map(int, sys.argv[1].split()); h1, r1, b1 = map(int, sys.argv[2].split())
cpu = float(sys.argv[3]) - float(sys.argv[4]); b = b1 - b0
print(f'{(h1 - h0) / (r1 - r0):.3f}' if r1 > r0 else 'nan', f'{cpu:.2f}', b,
      f'{cpu / (b / 2**30):.2f}' if b else 'nan')" "$stat0" "$st" "$now_cpu" "$cpu0")
    cpu0=$now_cpu
    stat0=$st
  fi
  cfg=$(echo "$config" | tr , ' ')  # page cache rows too: the ccfs runs they alternated with
  echo "$s,$a,$p,$t,$cfg,$warm,$r,$v,$u,$sec,$hit,$cpu,$served,$per,$memory,$data_bytes" >>"$csv"
  log "$s $t round $r $a/$p: $v $u (${sec} s${hit:+, hit $hit, daemon CPU $cpu s, $per s/GiB})"
}

# daemon_check WHAT: dies saying so if the ccfs daemon is gone (a program on the mount then fails
# with ENOTCONN), and whether the kernel's OOM killer took it (the cgroup holds the daemon beside
# the program).
daemon_check() {
  local state
  state=$(awk '{print $3}' "/proc/$daemon_pid/stat" 2>/dev/null || true)
  [ -n "$state" ] && [ "$state" != Z ] && return 0  # a zombie is gone too
  daemon_told=1
  local oom
  oom=$(dmesg 2>/dev/null | grep "Killed process $daemon_pid (ccfs)" | tail -n 1 || true)
  if [ -n "$oom" ]; then
    die "the ccfs daemon (pid $daemon_pid) was killed by the OOM killer of the $memory cgroup" \
        "during $1 (ccfs memory=$ccfs_memory; kernel: ${oom#*] })"
  fi
  die "the ccfs daemon (pid $daemon_pid) exited during $1"
}

now() { date +%s.%N; }
elapsed() { python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.3f}')" "$1" "$2"; }
mib_s() { python3 -c "import sys; print(f'{int(sys.argv[1]) / 2**20 / float(sys.argv[2]):.1f}')" "$1" "$2"; }

# STORE TARGET ROUND APP D (D: the apps directory as the program sees it)
run_app() {
  local s=$1 t=$2 r=$3 a=$4 d=$5 t0 t1 sec
  case $a in
    grep)
      local bytes
      bytes=$(cat "$files/apps/tree.bytes")
      for p in grep1 grep2; do
        t0=$(now)
        in_cgroup "$cg" grep -r -c needle "$d/tree" >/dev/null || true
        t1=$(now); sec=$(elapsed "$t0" "$t1")
        row "$s" "$t" "$r" grep "$p" "$(mib_s "$bytes" "$sec")" MiB/s "$sec"
      done ;;
    tar)
      local bytes
      bytes=$(cat "$files/apps/tree.bytes")
      t0=$(now)
      in_cgroup "$cg" sh -c 'tar cf - -C "$0" tree | cat >/dev/null' "$d"
      t1=$(now); sec=$(elapsed "$t0" "$t1")
      row "$s" "$t" "$r" tar tar "$(mib_s "$bytes" "$sec")" MiB/s "$sec" ;;
    sqlite)
      local q
      q=$(in_cgroup "$cg" python3 "$root/bench/sqlite_queries.py" "$d/db.sqlite" "$seconds")
      row "$s" "$t" "$r" sqlite queries "$q" queries/s "$seconds" ;;
    pyimport)
      for p in import1 import2; do
        t0=$(now)
        in_cgroup "$cg" env PYTHONHOME="$d/py" PYTHONPATH="$d/py/dist" PYTHONDONTWRITEBYTECODE=1 \
          MPLBACKEND=Agg MPLCONFIGDIR="$work/mpl" /usr/bin/python3 -S -c \
          "import importlib, sys
for m in sys.argv[1].split(): importlib.import_module(m)
assert sys.modules['numpy'].__file__.startswith(sys.argv[2]), sys.modules['numpy'].__file__" \
          "$py_modules" "$d/py" >/dev/null
        t1=$(now); sec=$(elapsed "$t0" "$t1")
        row "$s" "$t" "$r" pyimport "$p" "$sec" s "$sec"
      done ;;
    pgbench)
      pg_start "$d/pg" "$cg"
      local mode tps out
      for mode in select rw; do
        local flag=""
        [ "$mode" = select ] && flag=-S
        if ! out=$(in_cgroup "$cg" runuser -u postgres -- "$pg_bin/pgbench" -h "$pg_sock" -p 5499 \
                     $flag -c 4 -j 2 -T "$seconds" -n postgres 2>&1); then
          [ "$t" = ccfs ] && daemon_check "pgbench ($mode)"
          die "$s $t round $r: pgbench ($mode) failed: $(tail -n 3 <<<"$out" | tr '\n' ' ')"
        fi
        tps=$(awk '/^tps = / {printf "%.1f", $3}' <<<"$out")
        row "$s" "$t" "$r" pgbench "$mode" "${tps:-0}" tps "$seconds"
      done
      pg_stop ;;
    *) die "--apps: unknown program '$a' (pgbench sqlite grep pyimport tar)" ;;
  esac
}

# The files an app reads, for --warmup.
app_paths() {
  case $1 in grep|tar) echo tree ;; sqlite) echo db.sqlite ;; pyimport) echo py ;; pgbench) echo pg ;; esac
}

for store in $stores; do
  kind=$store
  dir=$work/$kind       # ccfs's backing directory: every read reaches the store
  pc_dir=$work/$kind-pc # the page cache's: the same store, mounted so that the kernel caches it
  src=$work/$kind-source
  state=$work/state-$kind
  owner=()  # PostgreSQL runs as postgres and wants its data directory to be its own
  [[ " $apps " == *" pgbench "* ]] && owner=(--owner postgres)
  case $store in
    local) mkdir -p "$dir"; files=$dir; pc_dir=$dir ;;
    sshfs)
      mkdir -p "$src"
      store_up "$state" sshfs "$dir" --source "$src" "${owner[@]}"
      store_up "$state-pc" sshfs "$pc_dir" --source "$src" --page-cache "${owner[@]}"
      files=$src ;;
    gluster)
      store_up "$state" gluster "$dir" --remote-dio
      volume=$(. "$state/gluster/info" && echo "$volume")
      STORES_GLUSTER_VOLUME=$volume store_up "$state-pc" gluster "$pc_dir" --page-cache
      files=$dir ;;
    *) die "--stores: unknown store '$store' (local, sshfs, gluster)" ;;
  esac
  make_data "$files"
  if [[ " $apps " == *" pyimport "* ]]; then
    # matplotlib's font list, made once outside the runs (its cache lives under $work/mpl).
    PYTHONHOME="$files/apps/py" PYTHONPATH="$files/apps/py/dist" PYTHONDONTWRITEBYTECODE=1 \
      MPLBACKEND=Agg MPLCONFIGDIR="$work/mpl" /usr/bin/python3 -S -c "import matplotlib.pyplot" 2>/dev/null
  fi
  mkdir -p "$mnt"
  for round in $(seq 1 "$rounds"); do
    targets="store ccfs"
    [ $((round % 2)) = 0 ] && targets="ccfs store"
    for app in $apps; do
      for target in $targets; do
        warm=no
        [ "$warmup" = 1 ] && warm=yes
        STORES_STATE_DIR=$state drop_caches "$kind"
        cgroup_make "$cg" "$memory_bytes"
        if [ "$target" = store ]; then
          if [ "$warmup" = 1 ]; then
            in_cgroup "$cg" sh -c 'find "$0" -type f -exec cat {} + >/dev/null' "$pc_dir/apps/$(app_paths "$app")"
          fi
          run_app "$store" store "$round" "$app" "$pc_dir/apps"
        else
          in_cgroup "$cg" "$ccfs" mount -o "memory=$ccfs_memory,allow_other=true,$config" "$dir" "$mnt" >/dev/null
          daemon_pid=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1] + '/.ccfs/stats.json'))['daemon']['pid'])" "$mnt")
          if [ "$warmup" = 1 ]; then
            in_cgroup "$cg" "$ccfs" warmup -q "$mnt" "apps/$(app_paths "$app")" >/dev/null
          fi
          cpu0=$(cpu_of "$daemon_pid")
          stat0=$(stat_of "$mnt")
          run_app "$store" ccfs "$round" "$app" "$mnt/apps"
          ccfs_unmount "$mnt"
          daemon_pid=""
        fi
        cgroup_remove "$cg"
      done
    done
  done
  stores_down
done

# The report needs matplotlib (python3-matplotlib): Debian's python3, whatever else is first on PATH.
/usr/bin/python3 bench/apps_report.py "$out"
