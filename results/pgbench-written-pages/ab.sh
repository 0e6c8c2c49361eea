#!/bin/bash
# ab.sh ROUNDS: pgbench -S then the TPC-B mix, 20 s each, through ccfs at the defaults, the build
# before (A) and with written pages kept (B) taking turns, on the apps data (local disk).
for r in $(seq $1); do
  for b in A B; do
    [ $(( r % 2 )) = 0 ] && b=$([ $b = A ] && echo B || echo A)
    bin=/var/tmp/apps-bin/ccfs; [ $b = B ] && bin=/var/tmp/wk-bin/ccfs
    echo "# round $r build $b $(date -u +%T)"
    STORE=${STORE:-appsdata} CCFS=$bin /tmp/pgp/probe.sh ccfs ${CFG:-raw_tier=kernel} 2>&1 | grep -E "^-|^  hit"
  done
done
