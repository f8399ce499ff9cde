#!/usr/bin/env bash
# bench/retention.sh [ROWS]: event retention by partition drop vs DELETE
# (bench/RESULTS.md). In a throwaway cluster (initdb in a temp dir, unix
# socket only), ROWS (default 10,000,000) events spread evenly over the 120
# days up to now go into two copies of the events table: one in pg_partman's
# monthly partitions (as sql/140_partitions.sql makes them) and one plain
# table (as before it). Retention then removes the same rows from each: the
# months all of which is older than 30 days, by pg_partman's
# run_maintenance() (DROP TABLE) on one, by DELETE and the VACUUM it needs on
# the other. Prints the time, the WAL written and the sizes before and after.
set -euo pipefail
ROWS=${1:-10000000}
PGBIN=${BDS_PG_BINDIR:-/usr/lib/postgresql/15/bin}
DIR=$(mktemp -d /tmp/bds-retention-XXXXXX)
RUN=()
if [ "$(id -u)" -eq 0 ]; then chown postgres "$DIR"; RUN=(runuser -u postgres --); fi
cleanup() {
  "${RUN[@]}" "$PGBIN/pg_ctl" -D "$DIR/data" -m immediate stop >/dev/null 2>&1 || true
  rm -rf "$DIR"
}
trap cleanup EXIT
"${RUN[@]}" "$PGBIN/initdb" -D "$DIR/data" -A trust -U bds --no-sync >/dev/null
"${RUN[@]}" "$PGBIN/pg_ctl" -D "$DIR/data" -l "$DIR/log" -w start -o \
  "-k $DIR -c listen_addresses='' -c shared_buffers=256MB -c max_wal_size=4GB -c checkpoint_timeout=30min" >/dev/null
psql() { "$PGBIN/psql" -X -q -v ON_ERROR_STOP=1 -h "$DIR" -U bds -d postgres "$@"; }

# run SQL, print "label: seconds, WAL MB"
timed() {
  local label=$1 sql=$2
  psql -At <<EOF
SELECT pg_current_wal_lsn() AS l0, clock_timestamp() AS t0 \gset
$sql
SELECT '$label: ' || round(extract(epoch FROM clock_timestamp() - :'t0'::timestamptz)::numeric, 2)
  || ' s, WAL ' || round(pg_wal_lsn_diff(pg_current_wal_lsn(), :'l0') / 1048576.0) || ' MB';
EOF
}
sizes() {
  psql -At -c "SELECT '$1: partitioned ' || pg_size_pretty(sum(pg_total_relation_size(c.oid)))
    FROM pg_class c JOIN pg_inherits i ON i.inhrelid = c.oid
    WHERE i.inhparent = 'events_part'::regclass" \
    -c "SELECT '$1: plain ' || pg_size_pretty(pg_total_relation_size('events_plain'))"
}

psql <<'EOF'
CREATE SCHEMA partman;
CREATE EXTENSION pg_partman SCHEMA partman;
CREATE TABLE events_plain (
    client_id text NOT NULL, id text NOT NULL, environment text, type text NOT NULL,
    data jsonb NOT NULL, request_id text, created_at timestamptz NOT NULL,
    PRIMARY KEY (client_id, id));
CREATE INDEX events_plain_client_created ON events_plain (client_id, created_at);
CREATE INDEX events_plain_created ON events_plain (created_at);
CREATE TABLE events_part (LIKE events_plain INCLUDING DEFAULTS) PARTITION BY RANGE (created_at);
SELECT partman.create_parent('public.events_part', 'created_at', 'native', '1 month',
    p_premake := 4, p_start_partition := date_trunc('month', now() - interval '120 days')::text);
ALTER TABLE events_part ADD PRIMARY KEY (client_id, id, created_at);
CREATE INDEX events_part_client_created ON events_part (client_id, created_at);
UPDATE partman.part_config SET retention = '30 days', retention_keep_table = false
 WHERE parent_table = 'public.events_part';
EOF
GEN="SELECT 'cli_' || (g % 100), 'evt_' || lpad(g::text, 10, '0'), 'production', 'bill.updated',
  jsonb_build_object('bill_id', 'bill_' || g, 'status', 'paid'), 'req_' || g,
  now() - (g::float8 / $ROWS) * interval '120 days' FROM generate_series(1, $ROWS) g"
timed "load partitioned ($ROWS rows)" "INSERT INTO events_part $GEN;"
timed "load plain ($ROWS rows)" "INSERT INTO events_plain $GEN;"
psql -c "VACUUM ANALYZE events_part" -c "VACUUM ANALYZE events_plain" -c CHECKPOINT
sizes before
# the end of the newest month all of which is past the 30 days
CUT=$(psql -At -c "SELECT date_trunc('month', now() - interval '30 days')::text")
echo "expired: rows before $CUT: $(psql -At -c "SELECT count(*) FROM events_plain WHERE created_at < '$CUT'")"
timed "drop (partman.run_maintenance)" "SELECT partman.run_maintenance('public.events_part');"
timed "DELETE" "DELETE FROM events_plain WHERE created_at < '$CUT';"
timed "VACUUM after DELETE" "VACUUM events_plain;"
psql -c CHECKPOINT
sizes after
echo "left: partitioned $(psql -At -c "SELECT count(*) FROM events_part"), plain $(psql -At -c "SELECT count(*) FROM events_plain")"
