#!/usr/bin/env bash
# What a read through GlusterFS's FUSE client costs beyond one through libgfapi, the client
# library ccfs would link for a gluster:// store: fio QD1 8 KiB random reads of one 256 MiB file,
# O_DIRECT (the client's caches bypassed; the brick's page cache holds the file, so the server
# answers from memory and what differs is the client side), through the FUSE mount
# (ioengine=psync) and through libgfapi in fio's own process (ioengine=gfapi), rounds
# alternating which goes first.
#
#   results/gfapi-reads/run.sh OUT [ROUNDS] [SECONDS] [JOBS]
#
# Writes OUT/runs.jsonl (one line per run: path, round, jobs, IOPS, mean and p50/p99 µs) and
# OUT/summary.md. Needs root (scripts/stores.sh up gluster); leaves no mount, volume or server.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:?OUT}
rounds=${2:-3}
seconds=${3:-15}
jobs=${4:-1}
mkdir -p "$out"
work=$(mktemp -d /var/tmp/ccfs-gfapi.XXXXXX)
export STORES_STATE_DIR=$work/state
down() { "$root/scripts/stores.sh" down gluster >/dev/null 2>&1 || true; rm -rf "$work"; }
trap down EXIT
"$root/scripts/stores.sh" up gluster "$work/mnt" >/dev/null
# shellcheck disable=SC1091
. "$work/state/gluster/info"  # volume=HOST:NAME
host=${volume%%:*} name=${volume#*:}
head -c 268435456 /dev/urandom >"$work/mnt/f256"
sync
common=(--rw=randread --bs=8k --direct=1 --size=256m --runtime="$seconds" --time_based
        --numjobs="$jobs" --group_reporting --output-format=json)
run() {  # run PATH ROUND
  local json
  if [ "$1" = fuse ]; then
    json=$(fio --name=fuse --ioengine=psync --filename="$work/mnt/f256" "${common[@]}")
  else
    json=$(fio --name=gfapi --ioengine=gfapi --volume="$name" --brick="$host" --filename=f256 \
      "${common[@]}")
  fi
  printf '%s' "$json" >"$work/run.json"
  python3 - "$1" "$2" "$jobs" "$work/run.json" >>"$out/runs.jsonl" <<'PY'
import json, sys
r = json.load(open(sys.argv[4]))["jobs"][0]["read"]
c = r["clat_ns"]
print(json.dumps({"path": sys.argv[1], "round": int(sys.argv[2]), "jobs": int(sys.argv[3]),
                  "iops": round(r["iops"]), "mean_us": round(c["mean"] / 1000, 1),
                  "p50_us": c["percentile"]["50.000000"] / 1000,
                  "p99_us": c["percentile"]["99.000000"] / 1000}))
PY
}
for round in $(seq 1 "$rounds"); do
  order="fuse gfapi"
  [ $((round % 2)) = 0 ] && order="gfapi fuse"
  for path in $order; do run "$path" "$round"; done
done
python3 - "$out/runs.jsonl" >"$out/summary.md" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
print("| path | jobs | rounds | IOPS | mean µs | p50 µs | p99 µs |")
print("|---|---|---|---|---|---|---|")
for jobs in sorted({r["jobs"] for r in rows}):
    for path in ["fuse", "gfapi"]:
        mine = [r for r in rows if r["path"] == path and r["jobs"] == jobs]
        if not mine:
            continue
        def span(k):
            v = sorted(r[k] for r in mine)
            return f"{v[0]:g}-{v[-1]:g}" if v[0] != v[-1] else f"{v[0]:g}"
        print(f"| {path} | {jobs} | {len(mine)} | {span('iops')} | {span('mean_us')} | "
              f"{span('p50_us')} | {span('p99_us')} |")
PY
cat "$out/summary.md"
