#!/usr/bin/env bash
# Two ccfs builds against each other and the store's own mount: scripts/walk_bench.sh (find twice,
# then four cats over every file twice) over a network store, one round per call, the builds
# alternating within each round, each call with its own run of the store's mount.
#
#   OLD=OLD/build/ccfs NEW=build/ccfs STORES="gluster sshfs" ROUNDS=2 FILES=10000 MEMORY=160MiB \
#     OPTS=ro OUT=DIR walk_ab.sh
#
# Writes DIR/STORE-BUILD-ROUND/walk.{jsonl,md} and DIR/summary.md (one row per call and phase).
set -euo pipefail
cd "$(dirname "$0")/../.."
: "${OLD:?set OLD to another build of ccfs}" "${NEW:=build/ccfs}" "${STORES:=gluster sshfs}"
: "${ROUNDS:=2}" "${FILES:=10000}" "${MEMORY:=160MiB}" "${OPTS:=}" "${OUT:?set OUT}"
mkdir -p "$OUT"
for round in $(seq 1 "$ROUNDS"); do
  for store in $STORES; do
    for build in old new; do
      bin=$OLD
      [ "$build" = new ] && bin=$NEW
      CCFS_BIN=$(realpath "$bin") scripts/walk_bench.sh --stores "$store" --files "$FILES" \
        --memory "$MEMORY" --rounds 1 ${OPTS:+--ccfs-opts "$OPTS"} \
        --out "$OUT/$store-$build-$round" > "$OUT/$store-$build-$round.log" 2>&1
    done
  done
done
{
  echo "| store | build | round | phase | store s | ccfs s | ratio |"
  echo "|---|---|---|---|---|---|---|"
  for md in "$OUT"/*/walk.md; do
    run=$(basename "$(dirname "$md")")
    IFS=- read -r store build round <<<"$run"
    grep -E '^\| [a-z]+ \| (walk|read)' "$md" |
      awk -F'|' -v b="$build" -v r="$round" '{printf "|%s| %s | %s |%s|%s|%s|%s|\n", $2, b, r, $3, $4, $5, $6}'
  done
} > "$OUT/summary.md"
cat "$OUT/summary.md"
