#!/usr/bin/env bash
# bench/standby.sh [SECS] [REPEAT]: reads on the primary against reads on the
# standby, in one run (bench/RESULTS.md "Reads on a standby").
#
# A pg_auto_failover formation (scripts/ha, loopback), bds-api (4 workers)
# and bds-jobs on it, nginx from nginx/bds-dev.conf.in on free ports; a
# sandbox, one sandbox link (user_good) and its bills. Then, REPEAT times
# (default 3), for the bill GET (GET /v1/bills/{id}) and the bills list (GET
# /v1/bills?limit=25): wrk for SECS seconds (default 10) at 32 connections
# with db.read_url unset (every read on the primary) and set (the ROUTE_READ
# routes on the standby, core/standby.h), switched by a rolling reload
# (SIGHUP). Prints req/s, p50, p99 and the CPU each node's PostgreSQL spent
# per request (from /proc), with the machine's load. Both nodes share this
# machine's CPUs: the figure that moves is where the database work is done,
# not the throughput a second machine would add.
set -euo pipefail
. "$(dirname "$0")/../scripts/lib.sh"
SECS=${1:-10}
REPEAT=${2:-3}
CONNS=32
WORKERS=4
BUILD=$BDS_TOP/build
HA=$BDS_TOP/scripts/ha
HZ=$(getconf CLK_TCK)

need_pkgs $BDS_PKGS wrk
RUN=$(mktemp -d /tmp/bds-standby-XXXXXX)
chmod 0755 "$RUN"
mkdir -p "$RUN/nginx" "$RUN/data/statements" "$RUN/mail"
[ "$(id -u)" -eq 0 ] && chgrp nogroup "$RUN/data" "$RUN/data/statements"
chmod 0750 "$RUN/data"; chmod 2750 "$RUN/data/statements"
API_PID="" JOBS_PID=""
cleanup() {
  [ -f "$RUN/nginx/nginx.pid" ] && nginx -p "$RUN/nginx/" -c "$RUN/nginx/nginx.conf" -s stop 2>/dev/null
  [ -n "$API_PID" ] && kill -TERM "$API_PID" 2>/dev/null
  [ -n "$JOBS_PID" ] && kill -TERM "$JOBS_PID" 2>/dev/null
  sleep 1
  "$HA" destroy "$RUN/ha" >/dev/null 2>&1 || true
  rm -rf "$RUN"
}
trap cleanup EXIT

BASE=$((20000 + RANDOM % 12000))
API_PORT=$((BASE + 10)) SANDBOX_PORT=$((BASE + 11)) LINK_PORT=$((BASE + 12))
say "formation (scripts/ha, monitor on :$BASE)"
"$HA" create "$RUN/ha" "$BASE"
DBURL=$("$HA" url "$RUN/ha")
READURL=$("$HA" read-url "$RUN/ha")
CONF=$RUN/bds.conf
cat > "$CONF" <<CONF
# Written by bench/standby.sh.
database_url = $DBURL
socket_path = $RUN/api.sock
socket_mode = 0666
workers = $WORKERS
deployment = development
log_path = $RUN/bds-api.log
allow_private_targets = 1
sql_dir = $BDS_TOP/sql
data_dir = $RUN/data
mail_spool_dir = $RUN/mail
extract_program = $BUILD/app/bds-extract
api_url = http://127.0.0.1:$API_PORT
sandbox_url = http://127.0.0.1:$SANDBOX_PORT
CONF
for k in $(sed -n 's/.*{ *"\([a-z0-9_]*\)", *CONFIG_KEY32,.*/\1/p' "$BDS_TOP/lib/core/config.c"); do
  echo "$k = $(od -An -tx1 -N32 /dev/urandom | tr -d ' \n')" >> "$CONF"
done
"$BUILD/app/bdsctl" --config "$CONF" migrate >"$RUN/migrate.out" 2>&1 || { tail "$RUN/migrate.out"; die "migrate"; }
"$BUILD/app/bdsctl" --config "$CONF" billers import "$BDS_TOP/data/billers.csv" >>"$RUN/migrate.out" 2>&1
"$BUILD/app/bds-api" --config "$CONF" --workers "$WORKERS" >"$RUN/bds-api.out" 2>&1 &
API_PID=$!
"$BUILD/app/bds-jobs" --config "$CONF" --max-seconds 0 >"$RUN/bds-jobs.out" 2>&1 &
JOBS_PID=$!
render_nginx "$BDS_TOP/nginx/bds-dev.conf.in" "$RUN/nginx/nginx.conf" \
  PREFIX="$RUN/nginx" NGINX_DIR="$BDS_TOP/nginx" SOCKET="$RUN/api.sock" \
  API_PORT="$API_PORT" SANDBOX_PORT="$SANDBOX_PORT" LINK_PORT="$LINK_PORT" \
  WEB_ROOT="$BDS_TOP/web" WEB_BUILD="$BUILD/web" USER="nobody nogroup" \
  RATE_IP=100000r/s BURST_IP=100000 RATE_KEY=100000r/s BURST_KEY=100000 \
  DOCS_URL="http://127.0.0.1:$API_PORT/docs" DATA_DIR="$RUN/data"
nginx -p "$RUN/nginx/" -c "$RUN/nginx/nginx.conf" -q
SBX=http://127.0.0.1:$SANDBOX_PORT
wait_http "$SBX/v1/health" 20 || die "not healthy ($RUN/bds-api.log)"

# a sandbox, its key, one link retrieved, the link's bills
KEY=$(curl -sf -X POST "$SBX/v1/sandboxes" -H 'Content-Type: application/json' -d '{}' \
  | python3 -c 'import json, sys; print(json.load(sys.stdin)["api_key"])')
AUTH="Authorization: Bearer $KEY"
curl -sf -X POST "$SBX/v1/sandbox/account-links" -H "$AUTH" -H 'Content-Type: application/json' \
  -H "Idempotency-Key: standby-bench-$$" \
  -d '{"client_user_id":"bench-user","username":"user_good"}' >/dev/null || die "no link"
PSQL=(as_pg "$PG_BIN/psql" -X -Atq "$DBURL")
for ((i = 0; i < 300; i++)); do
  [ "$("${PSQL[@]}" -c "SELECT count(*) FROM jobs WHERE status IN ('pending', 'running')")" = 0 ] \
    && [ "$("${PSQL[@]}" -c "SELECT count(*) FROM bills")" -gt 0 ] && break
  sleep 0.2
done
BILL=$("${PSQL[@]}" -c "SELECT id FROM bills ORDER BY id LIMIT 1")
[ -n "$BILL" ] || die "the link has no bill"
NBILLS=$("${PSQL[@]}" -c "SELECT count(*) FROM bills")
declare -A URL=([bill]="$SBX/v1/bills/$BILL" [list]="$SBX/v1/bills?limit=25")
for t in bill list; do
  [ "$(curl -s -o /dev/null -w '%{http_code}' -H "$AUTH" "${URL[$t]}")" = 200 ] || die "$t not 200"
done

# The CPU ticks of one node's PostgreSQL: its postmaster and every child.
node_ticks() {
  local pm
  pm=$(head -n 1 "$RUN/ha/$1/postmaster.pid")
  { echo "$pm"; pgrep -P "$pm"; } | while read -r p; do
    awk '{ print $14 + $15 }' "/proc/$p/stat" 2>/dev/null || true
  done | awk '{ s += $1 } END { print s + 0 }'
}
PRIMARY=$("$HA" primary "$RUN/ha")
STANDBY=a; [ "$PRIMARY" = a ] && STANDBY=b

workers() { pgrep -P "$API_PID" | sort; }
MODE=primary
set_mode() {	# primary | standby: db.read_url off or on, by a rolling reload
  local want=$1 old p i
  [ "$want" = "$MODE" ] && return 0
  old=$(workers | tr '\n' ' ')
  sed -i '/^db\.read_url/d' "$CONF"
  [ "$want" = standby ] && echo "db.read_url = $READURL" >> "$CONF"
  kill -HUP "$API_PID"
  for ((i = 0; i < 300; i++)); do
    sleep 0.1
    [ "$(workers | grep -c .)" = "$WORKERS" ] || continue
    for p in $old; do workers | grep -qx "$p" && continue 2; done
    MODE=$want
    sleep 1
    return 0
  done
  die "bds-api did not replace its workers (db.read_url $want)"
}

say "bills: $NBILLS on one link; primary node $PRIMARY, standby $STANDBY; ${SECS}s x $REPEAT, c=$CONNS"
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '| rep | route | reads on | req/s | p50 ms | p99 ms | non-2xx | primary pg CPU us/req | standby pg CPU us/req |\n'
printf '|---|---|---|---|---|---|---|---|---|\n'
for ((rep = 1; rep <= REPEAT; rep++)); do
  for t in bill list; do
    for mode in primary standby; do
      set_mode "$mode"
      wrk -t2 -c"$CONNS" -d2s -H "$AUTH" "${URL[$t]}" >/dev/null 2>&1	# warm-up
      p0=$(node_ticks "$PRIMARY") s0=$(node_ticks "$STANDBY")
      out=$(wrk -t2 -c"$CONNS" -d"${SECS}s" --latency -H "$AUTH" "${URL[$t]}")
      p1=$(node_ticks "$PRIMARY") s1=$(node_ticks "$STANDBY")
      n=$(awk '/requests in/ { print $1 }' <<<"$out")
      awk -v rep="$rep" -v t="$t" -v m="$mode" -v n="$n" -v hz="$HZ" \
        -v dp="$((p1 - p0))" -v ds="$((s1 - s0))" '
        function ms(v) { if (v ~ /us$/) return v / 1000; if (v ~ /ms$/) return v + 0; return v * 1000 }
        /^Requests\/sec:/ { rps = $2 }
        $1 == "50%" { p50 = ms($2) } $1 == "99%" { p99 = ms($2) }
        /Non-2xx/ { bad = $NF }
        END { printf "| %d | %s | %s | %.0f | %.2f | %.2f | %d | %.1f | %.1f |\n", rep,
          t == "bill" ? "GET /v1/bills/{id}" : "GET /v1/bills?limit=25", m, rps, p50, p99, bad,
          dp * 1e6 / hz / n, ds * 1e6 / hz / n }' <<<"$out"
    done
  done
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
