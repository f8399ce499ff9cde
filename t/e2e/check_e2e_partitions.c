/*
 * Partitions (sql/140_partitions.sql): events, deliveries and delivery
 * attempts are monthly range partitions made by pg_partman; rows land in
 * their month or the default partition; `bdsctl jobs` runs pg_partman's
 * maintenance, which drops a month past retention and keeps the rest; and
 * migrating a database made before the partitions keeps every row.
 */
#include <check.h>
#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "accounts.h"
#include "harness.h"

static const char *const tables[] = { "events", "deliveries", "delivery_attempts", NULL };

/* A client, a subscription, and an event with one delivery and one attempt
 * at $2 (a time; NULL: now) + $3 (an interval), ids suffixed $1. */
#define FILL_ONE \
	"WITH c AS (INSERT INTO clients (id, name) VALUES ('cli_p' || $1, 'p')" \
	"  ON CONFLICT (id) DO UPDATE SET name = 'p' RETURNING id)," \
	" w AS (INSERT INTO webhooks (client_id, id, environment, url, events, secret)" \
	"  SELECT id, 'whk_p' || $1, 'sandbox', 'https://x.example', '[\"*\"]', '\\x00' FROM c" \
	"  ON CONFLICT DO NOTHING RETURNING client_id)," \
	" e AS (INSERT INTO events (client_id, id, environment, type, data, created_at)" \
	"  SELECT id, 'evt_p' || $1, 'sandbox', 'bill.updated', '{}'," \
	"  coalesce($2::timestamptz, now()) + $3::interval FROM c" \
	"  RETURNING client_id, id, created_at)," \
	" d AS (INSERT INTO deliveries (client_id, id, event_id, webhook_id, status, created_at)" \
	"  SELECT client_id, 'dlv_p' || $1, id, 'whk_p' || $1, 'succeeded', created_at FROM e" \
	"  RETURNING client_id, id, created_at)" \
	" INSERT INTO delivery_attempts (client_id, delivery_id, attempt, attempted_at, status_code)" \
	" SELECT client_id, id, 1, created_at, 200 FROM d"

/* The partition holding the row of table whose id column is sfx's. */
static char *
holder(const char *table, const char *sfx)
{
	const char *q = strcmp(table, "events") == 0 ?
	    "SELECT tableoid::regclass::text FROM events WHERE id = 'evt_p' || $1" :
	    strcmp(table, "deliveries") == 0 ?
	    "SELECT tableoid::regclass::text FROM deliveries WHERE id = 'dlv_p' || $1" :
	    "SELECT tableoid::regclass::text FROM delivery_attempts WHERE delivery_id = 'dlv_p' || $1";

	return acct_sql_value(q, sfx, NULL, NULL);
}

/* table's partition of the month of at (NULL: now) + offset. */
static char *
month_of(const char *table, const char *at, const char *offset)
{
	return acct_sql_value("SELECT $1 || '_p' || to_char(coalesce($2::timestamptz, now())"
	    " + $3::interval, 'YYYY_MM')", table, at, offset);
}

static long long
partition_exists(const char *name)
{
	return acct_sql_int("SELECT count(*) FROM pg_inherits i JOIN pg_class c ON"
	    " c.oid = i.inhrelid WHERE c.relname = $1", name, NULL, NULL);
}

START_TEST(test_partitioned_ahead)
{
	for (int i = 0; tables[i] != NULL; i++) {
		ck_assert_int_eq(acct_sql_int("SELECT count(*) FROM pg_partitioned_table"
		    " WHERE partrelid = $1::regclass AND partstrat = 'r'", tables[i], NULL, NULL), 1);
		ck_assert_int_eq(acct_sql_int("SELECT count(*) FROM partman.part_config"
		    " WHERE parent_table = 'public.' || $1 AND partition_interval = '1 mon'"
		    " AND retention = '30 days' AND NOT retention_keep_table"
		    " AND infinite_time_partitions", tables[i], NULL, NULL), 1);
		/* this month and the 4 ahead, and the default */
		for (int m = 0; m <= 4; m++) {
			char *name = month_of(tables[i], NULL, harness_fmt("%d months", m));

			ck_assert_msg(partition_exists(name) == 1, "%s missing", name);
			free(name);
		}
		ck_assert_int_eq(partition_exists(harness_fmt("%s_default", tables[i])), 1);
	}
}
END_TEST

START_TEST(test_rows_land)
{
	char *now_month;

	acct_sql_exec(FILL_ONE, "_now", NULL, "0");
	acct_sql_exec(FILL_ONE, "_past", NULL, "-10 years");
	acct_sql_exec(FILL_ONE, "_future", NULL, "3 years");
	for (int i = 0; tables[i] != NULL; i++) {
		char *h;

		now_month = month_of(tables[i], NULL, "0");
		h = holder(tables[i], "_now");
		ck_assert_str_eq(h, now_month);
		free(h);
		h = holder(tables[i], "_past");
		ck_assert_str_eq(h, harness_fmt("%s_default", tables[i]));
		free(h);
		h = holder(tables[i], "_future");
		ck_assert_str_eq(h, harness_fmt("%s_default", tables[i]));
		free(h);
		free(now_month);
	}
	/* the cascades the foreign keys gave: an event's deliveries and their
	 * attempts go with it */
	acct_sql_exec("DELETE FROM events WHERE id IN ('evt_p_past', 'evt_p_future')",
	    NULL, NULL, NULL);
	ck_assert_int_eq(acct_sql_int("SELECT count(*) FROM deliveries WHERE id IN"
	    " ('dlv_p_past', 'dlv_p_future')", NULL, NULL, NULL), 0);
	ck_assert_int_eq(acct_sql_int("SELECT count(*) FROM delivery_attempts WHERE"
	    " delivery_id IN ('dlv_p_past', 'dlv_p_future')", NULL, NULL, NULL), 0);
	ck_assert_int_eq(acct_sql_int("SELECT count(*) FROM delivery_attempts WHERE"
	    " delivery_id = 'dlv_p_now'", NULL, NULL, NULL), 1);
}
END_TEST

/* bdsctl jobs: the month all of which is past 30 days goes, with its rows;
 * the month 40 days back still holds days inside the 30 and stays. */
START_TEST(test_retention_drops)
{
	/* a day of the month 3 back, a day of the last 20 */
	char *old = acct_sql_value("SELECT (date_trunc('month', now()) - interval '3 months'"
	    " + interval '1 day')::text", NULL, NULL, NULL);
	char *recent = acct_sql_value("SELECT (now() - interval '20 days')::text",
	    NULL, NULL, NULL);
	const char *args[] = { "jobs", NULL };
	char *old_month[3], *recent_month[3];

	for (int i = 0; tables[i] != NULL; i++) {
		acct_sql_exec("SELECT partman.create_partition_time('public.' || $1,"
		    " ARRAY[$2::timestamptz, $3::timestamptz])", tables[i], old, recent);
		old_month[i] = month_of(tables[i], old, "0");
		recent_month[i] = month_of(tables[i], recent, "0");
	}
	acct_sql_exec(FILL_ONE, "_old", old, "0");
	acct_sql_exec(FILL_ONE, "_recent", recent, "0");
	acct_sql_exec(FILL_ONE, "_kept", NULL, "0");
	/* a replay of the old event made today, still pending */
	acct_sql_exec("INSERT INTO deliveries (client_id, id, event_id, webhook_id, status,"
	    " replay_of) VALUES ('cli_p_old', 'dlv_p_replay', 'evt_p_old', 'whk_p_old', 'pending',"
	    " 'dlv_p_old')", NULL, NULL, NULL);
	for (int i = 0; tables[i] != NULL; i++) {
		char *h = holder(tables[i], "_old");

		ck_assert_str_eq(h, old_month[i]);
		free(h);
	}

	ck_assert_int_eq(harness_bdsctl(args), 0);
	/* and says so: one month of each table (bdsctl.log, its last report) */
	{
		static const char what[] = "jobs: expired months of events and deliveries dropped: ";
		char *log = harness_slurp(harness_fmt("%s/bdsctl.log", harness_dir()));
		char *p, *last = NULL;

		ck_assert_ptr_nonnull(log);
		for (p = log; (p = strstr(p, what)) != NULL; p++)
			last = p;
		ck_assert_msg(last != NULL, "bdsctl jobs reported no dropped months");
		ck_assert_int_eq(atoi(last + sizeof(what) - 1), 3);
		free(log);
	}
	/* the replay's event went with its month: the replay failed, saying so */
	{
		char *st = acct_sql_value("SELECT status || ' ' || last_error FROM deliveries"
		    " WHERE id = 'dlv_p_replay'", NULL, NULL, NULL);

		ck_assert_pstr_eq(st, "failed the event is past its retention");
		free(st);
	}

	for (int i = 0; tables[i] != NULL; i++) {
		ck_assert_msg(partition_exists(old_month[i]) == 0, "%s kept", old_month[i]);
		ck_assert_msg(acct_sql_int("SELECT count(*) FROM pg_class WHERE relname = $1",
		    old_month[i], NULL, NULL) == 0, "%s detached, not dropped", old_month[i]);
		ck_assert_msg(partition_exists(recent_month[i]) == 1, "%s dropped",
		    recent_month[i]);
		free(old_month[i]);
		free(recent_month[i]);
	}
	ck_assert_int_eq(acct_sql_int("SELECT count(*) FROM events WHERE id = 'evt_p_old'",
	    NULL, NULL, NULL), 0);
	ck_assert_int_eq(acct_sql_int("SELECT count(*) FROM events WHERE id IN"
	    " ('evt_p_recent', 'evt_p_kept')", NULL, NULL, NULL), 2);
	ck_assert_int_eq(acct_sql_int("SELECT count(*) FROM delivery_attempts WHERE"
	    " delivery_id IN ('dlv_p_recent', 'dlv_p_kept')", NULL, NULL, NULL), 2);
	free(old);
	free(recent);
}
END_TEST

/* ---- migrating a database made before the partitions ---- */

/* The conninfo of database name in the stack's cluster. */
static const char *
db_url(const char *name)
{
	const char *url = harness_database_url();

	return harness_fmt("%.*s dbname=%s user=bds",
	    (int)(strstr(url, " dbname=") - url), url, name);
}

static PGconn *
connect_db(const char *name)
{
	PGconn *pg = PQconnectdb(db_url(name));

	ck_assert_msg(PQstatus(pg) == CONNECTION_OK, "connect: %s", PQerrorMessage(pg));
	return pg;
}

static char *
one_value(PGconn *pg, const char *q)
{
	PGresult *res = PQexec(pg, q);
	char *v;

	ck_assert_msg(PQresultStatus(res) == PGRES_TUPLES_OK ||
	    PQresultStatus(res) == PGRES_COMMAND_OK, "%s: %s", q, PQerrorMessage(pg));
	v = strdup(PQntuples(res) > 0 ? PQgetvalue(res, 0, 0) : "");
	PQclear(res);
	return v;
}

static void
expect_value(PGconn *pg, const char *q, const char *want)
{
	char *v = one_value(pg, q);

	ck_assert_str_eq(v, want);
	free(v);
}

/* `bdsctl migrate` on database db with the migrations of sql_dir. */
static void
migrate(const char *db, const char *sql_dir)
{
	const char *bdsctl = harness_fmt("%s/app/bdsctl",
	    getenv("BDS_BUILDDIR") != NULL ? getenv("BDS_BUILDDIR") : ".");
	const char *argv[] = { bdsctl, "--config", harness_config_path(), "migrate", NULL };
	const char *set[] = { "BDS_DATABASE_URL", db_url(db), "BDS_SQL_DIR", sql_dir, NULL };
	struct harness_child c = { argv, set, NULL, NULL, 120000 };

	ck_assert_int_eq(harness_run_child(&c), 0);
}

/* Counts and a checksum of every row of the three tables. */
#define CHECKSUM \
	"SELECT (SELECT count(*) || ':' || md5(string_agg(e::text, ',' ORDER BY client_id, id))" \
	"  FROM events e) || ' ' ||" \
	" (SELECT count(*) || ':' || md5(string_agg(d::text, ',' ORDER BY client_id, id))" \
	"  FROM deliveries d) || ' ' ||" \
	" (SELECT count(*) || ':' || md5(string_agg(a::text, ',' ORDER BY client_id, delivery_id," \
	"  attempt)) FROM delivery_attempts a)"

START_TEST(test_migration_keeps_rows)
{
	const char *src = getenv("BDS_SRCDIR") != NULL ? getenv("BDS_SRCDIR") : ".";
	char *dir = strdup(harness_fmt("%s/sql_before_partitions", harness_dir()));
	PGconn *pg;
	char *before, *after;
	FILE *ls;
	char name[256];
	int n = 0;

	acct_sql_exec("DROP DATABASE IF EXISTS bds_before", NULL, NULL, NULL);
	acct_sql_exec("CREATE DATABASE bds_before", NULL, NULL, NULL);
	ck_assert_int_eq(system(harness_fmt("mkdir -p '%s'", dir)), 0);
	/* every migration before sql/140_partitions.sql */
	ls = popen(harness_fmt("ls '%s/sql'", src), "r");
	ck_assert_ptr_nonnull(ls);
	while (fgets(name, sizeof(name), ls) != NULL && n < 1000) {
		name[strcspn(name, "\n")] = '\0';
		if (strlen(name) > 8 && strcmp(name + strlen(name) - 4, ".sql") == 0 &&
		    strncmp(name, "140", 3) < 0) {
			ck_assert_int_eq(symlink(harness_fmt("%s/sql/%s", src, name),
			    harness_fmt("%s/%s", dir, name)), 0);
			n++;
		}
	}
	pclose(ls);
	ck_assert_int_gt(n, 40);
	migrate("bds_before", dir);

	pg = connect_db("bds_before");
	expect_value(pg, "SELECT relkind::text FROM pg_class WHERE relname = 'events'", "r");
	/* rows over 100 days: months before, now and one ahead */
	free(one_value(pg,
	    "INSERT INTO clients (id, name) SELECT 'cli_m' || c, 'm' FROM generate_series(1, 3) c;"
	    "INSERT INTO webhooks (client_id, id, environment, url, events, secret)"
	    " SELECT 'cli_m' || c, 'whk_m' || c, 'production', 'https://x.example', '[\"*\"]', '\\x01'"
	    " FROM generate_series(1, 3) c;"
	    "INSERT INTO events (client_id, id, environment, type, data, request_id, created_at)"
	    " SELECT 'cli_m' || (g % 3 + 1), 'evt_m' || g, 'production', 'bill.updated',"
	    "  jsonb_build_object('n', g), 'req_' || g, now() - (g - 10) * interval '1 day'"
	    " FROM generate_series(1, 100) g;"
	    "INSERT INTO deliveries (client_id, id, event_id, webhook_id, status, attempts, created_at)"
	    " SELECT client_id, 'dlv_m' || id, id, 'whk' || substr(client_id, 4), 'failed', 2,"
	    "  created_at FROM events;"
	    "INSERT INTO delivery_attempts (client_id, delivery_id, attempt, attempted_at, status_code)"
	    " SELECT client_id, id, a, created_at + a * interval '1 minute', 500"
	    " FROM deliveries, generate_series(1, 2) a"));
	before = one_value(pg, CHECKSUM);
	ck_assert_ptr_nonnull(strstr(before, "100:"));
	PQfinish(pg);

	ck_assert_int_eq(symlink(harness_fmt("%s/sql/140_partitions.sql", src),
	    harness_fmt("%s/140_partitions.sql", dir)), 0);
	migrate("bds_before", dir);

	pg = connect_db("bds_before");
	after = one_value(pg, CHECKSUM);
	ck_assert_str_eq(after, before);
	expect_value(pg, "SELECT relkind::text FROM pg_class WHERE relname = 'events'", "p");
	/* every row in its month: the default partitions are empty */
	expect_value(pg, "SELECT (SELECT count(*) FROM events_default)"
	    " + (SELECT count(*) FROM deliveries_default)"
	    " + (SELECT count(*) FROM delivery_attempts_default)", "0");
	PQfinish(pg);
	acct_sql_exec("DROP DATABASE bds_before", NULL, NULL, NULL);
	free(before);
	free(after);
	free(dir);
}
END_TEST

static Suite *
partitions_suite(void)
{
	Suite *s = suite_create("e2e_partitions");
	TCase *tc = tcase_create("partitions");

	tcase_add_unchecked_fixture(tc, harness_fixture_start_default, harness_fixture_stop);
	tcase_add_checked_fixture(tc, acct_setup, acct_teardown);
	tcase_set_timeout(tc, 180);
	tcase_add_test(tc, test_partitioned_ahead);
	tcase_add_test(tc, test_rows_land);
	tcase_add_test(tc, test_retention_drops);
	tcase_add_test(tc, test_migration_keeps_rows);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return harness_run_suite(partitions_suite());
}
