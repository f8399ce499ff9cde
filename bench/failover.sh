#!/usr/bin/env bash
# bench/failover.sh [RUNS]: a failover's error window (bench/RESULTS.md
# "Failover"), two ways, each RUNS times (default 3):
#   - the formation alone: scripts/ha's formation on loopback, one psql
#     INSERT every 50 ms through its multi-host URL while the primary is
#     stopped (pg_autoctl stop) and, in a second formation, killed -9; the
#     window is from the first failed INSERT to the last;
#   - the service: t/faults/check_faults_failover from build/ (the stack
#     under 200 requests a second of mixed writes), whose "failover (...)"
#     lines give the window of 503s.
# Prints one line per run and the machine's load beside them.
set -euo pipefail
. "$(dirname "$0")/../scripts/lib.sh"
RUNS=${1:-3}
HA=$BDS_TOP/scripts/ha

alone() {	# alone stop|kill: one formation, one fault, the window in ms
  local how=$1 dir url base primary t0 i out
  dir=$(mktemp -d /tmp/bds-failover-XXXXXX)
  base=$((20000 + RANDOM % 12000))
  "$HA" create "$dir" "$base" >/dev/null
  url=$("$HA" url "$dir")
  as_pg "$PG_BIN/psql" -X -q "$url" -c "CREATE TABLE t (i int)"
  out=$dir/load.txt
  (
    for ((i = 0; i < 300; i++)); do
      if as_pg "$PG_BIN/psql" -X -Atq "$url" -c "INSERT INTO t VALUES ($i)" >/dev/null 2>&1
      then echo "$(date +%s%3N) ok"; else echo "$(date +%s%3N) fail"; fi
      sleep 0.05
    done > "$out"
  ) &
  sleep 2
  primary=$("$HA" primary "$dir")
  "$HA" "$how" "$dir" "$primary"
  wait
  awk -v how="$how" '$2 == "fail" { if (!f) f = $1; l = $1; n++ }
    END { printf "formation alone, %s: %d INSERTs failed over %d ms\n", how, n, n ? l - f : 0 }' "$out"
  "$HA" destroy "$dir"
}

for ((r = 1; r <= RUNS; r++)); do
  echo "run $r ($(uptime | sed 's/.*load/load/'))"
  alone stop
  alone kill
  make -C "$BDS_TOP/build" check TESTS=t/faults/check_faults_failover >/dev/null 2>&1 \
    || echo "check_faults_failover failed (build/t/faults/check_faults_failover.log)"
  grep -h '^failover (' "$BDS_TOP/build/t/faults/check_faults_failover.log" | sed 's/^/service, /'
done
