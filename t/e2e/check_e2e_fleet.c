/*
 * 1,000 portal accounts: links of one client on one biller of the
 * simulator, retrieved by bds-jobs with 16 workers and a per-biller limit of
 * 4 sessions (biller_max_sessions), then refreshed once more through the
 * schedule (`bdsctl jobs` with every link due). The simulator counts the
 * sessions in use at once: never more than 4, and the limit is reached.
 * Every link ends ACTIVE with its bills, none twice. Then the credential
 * scan: no simulator password or session token in plaintext in any column
 * of any table (text or bytea) nor in any log the stack wrote.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>

#include <check.h>
#include <json-c/json.h>
#include <libpq-fe.h>

#include "devacct.h"
#include "fleet.h"
#include "harness.h"
#include "sim.h"

#define FLEET		1000
#define STATEMENTS	3
#define FLEET_BILLER	"blr_01900000-0000-7000-8000-00000000f1ee"
#define WAIT_MS		(15 * 60 * 1000)

static struct devacct dev;
static char *client;

/* Until no retrieval job is pending or running (deferred ones count). */
static void
retrievals_done(void)
{
	ck_assert_msg(harness_jobs_wait_settled("retrieval", NULL, WAIT_MS) == 0, "%s",
	    harness_error());
}

/* The simulator's max_concurrent_sessions (and logins) for the biller. */
static long long
sim_stat(const char *member)
{
	struct json_object *o, *b, *v;
	long long n;

	ck_assert_int_eq(sim_admin("GET", "/_admin/stats", NULL, &o), 200);
	ck_assert_msg(json_object_object_get_ex(o, "billers", &b) &&
	    json_object_object_get_ex(b, "fleet", &b) &&
	    json_object_object_get_ex(b, member, &v), "stats: %s",
	    json_object_to_json_string(o));
	n = json_object_get_int64(v);
	json_object_put(o);
	return n;
}

static void
check_round(long long want_logins)
{
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM jobs WHERE kind = 'retrieval'"
	    " AND status = 'dead'", NULL, NULL), 0);
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM links WHERE client_id = $1"
	    " AND status = 'ACTIVE' AND sync_status = 'ok'", client, NULL), FLEET);
	/* every retrieval job named its biller for the claim (sql/033) */
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM jobs j JOIN links l"
	    " ON l.id = j.subject_id WHERE j.kind = 'retrieval' AND l.client_id = $1"
	    " AND j.slot_key IS DISTINCT FROM l.biller_id", client, NULL), 0);
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM bills WHERE client_id = $1"
	    " AND deleted_at IS NULL", client, NULL), FLEET * STATEMENTS);
	/* one bill per statement: never twice */
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM (SELECT 1 FROM bills"
	    " WHERE client_id = $1 GROUP BY link_id, statement_ref HAVING count(*) > 1) d",
	    client, NULL), 0);
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM events WHERE client_id = $1"
	    " AND type = 'bill.created'", client, NULL), FLEET * STATEMENTS);
	ck_assert_int_eq(sim_stat("logins"), want_logins);
	ck_assert_int_le(sim_stat("max_concurrent_sessions"), 4);
	/* and the limit is what held the 16 workers back */
	ck_assert_int_eq(sim_stat("max_concurrent_sessions"), 4);
}

START_TEST(thousand_accounts_limit_four)
{
	/* a portal that takes its time (15 ms an answer), as real ones do:
	 * the 16 workers then wait on it, and only the limit holds them */
	ck_assert_int_eq(sim_biller_knobs("fleet", "{\"delay_ms\": 15}"), 0);
	ck_assert_int_eq(sim_admin("POST", "/_admin/stats/reset", "{}", NULL), 200);
	ck_assert_msg(harness_jobs_start() == 0, "%s", harness_error());
	retrievals_done();
	check_round(FLEET);

	/* the schedule: every link due, one refresh each, same limit */
	ck_assert_int_eq(sim_admin("POST", "/_admin/stats/reset", "{}", NULL), 200);
	devacct_sql_exec("UPDATE links SET next_sync_at = now() WHERE client_id = $1", client,
	    NULL);
	{
		const char *args[] = { "jobs", NULL };

		ck_assert_int_eq(harness_bdsctl(args), 0);
	}
	retrievals_done();
	check_round(FLEET);
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM links WHERE client_id = $1"
	    " AND refresh_count = 2", client, NULL), FLEET);
}
END_TEST

/* 1 when needle occurs in the file. */
static int
file_has(const char *path, const char *needle)
{
	FILE *f = fopen(path, "r");
	char *line = NULL;
	size_t cap = 0;
	int hit = 0;

	if (f == NULL)
		return 0;
	while (!hit && getline(&line, &cap, f) >= 0)
		hit = strstr(line, needle) != NULL;
	free(line);
	fclose(f);
	return hit;
}

/* Every regular file under dir (logs, configs, spools), recursively. */
static void
scan_dir(const char *dir, const char *needle, int depth)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	if (d == NULL || depth > 4) {
		if (d != NULL)
			closedir(d);
		return;
	}
	while ((e = readdir(d)) != NULL) {
		char path[1024];

		if (e->d_name[0] == '.' || strcmp(e->d_name, "pgdata") == 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (e->d_type == DT_DIR)
			scan_dir(path, needle, depth + 1);
		else if (e->d_type == DT_REG && strstr(e->d_name, ".sock") == NULL)
			ck_assert_msg(!file_has(path, needle), "%s holds \"%s\"", path, needle);
	}
	closedir(d);
}

/* No column of any table holds needle: text through the row's text form,
 * bytea byte for byte. */
static void
scan_tables(const char *needle)
{
	PGconn *pg = devacct_pg();
	PGresult *tabs = PQexec(pg, "SELECT quote_ident(c.relname),"
	    " coalesce(string_agg(quote_ident(a.attname), ','), '')"
	    " FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
	    " LEFT JOIN pg_attribute a ON a.attrelid = c.oid AND a.atttypid = 'bytea'::regtype"
	    "  AND a.attnum > 0 AND NOT a.attisdropped"
	    " WHERE n.nspname = 'public' AND c.relkind = 'r' GROUP BY c.relname");

	ck_assert_msg(PQresultStatus(tabs) == PGRES_TUPLES_OK, "%s", PQerrorMessage(pg));
	ck_assert_int_gt(PQntuples(tabs), 20);
	for (int i = 0; i < PQntuples(tabs); i++) {
		const char *params[1] = { needle };
		char q[4096], *cols = strdup(PQgetvalue(tabs, i, 1)), *col, *save = NULL;
		PGresult *res;

		snprintf(q, sizeof(q), "SELECT count(*) FROM %s x WHERE x::text LIKE"
		    " '%%' || $1 || '%%'", PQgetvalue(tabs, i, 0));
		for (col = strtok_r(cols, ",", &save); col != NULL; col = strtok_r(NULL, ",", &save))
			snprintf(q + strlen(q), sizeof(q) - strlen(q),
			    " OR position(convert_to($1, 'UTF8') IN x.%s) > 0", col);
		res = PQexecParams(pg, q, 1, NULL, params, NULL, NULL, 0);
		ck_assert_msg(PQresultStatus(res) == PGRES_TUPLES_OK, "%s: %s", q,
		    PQerrorMessage(pg));
		ck_assert_msg(strcmp(PQgetvalue(res, 0, 0), "0") == 0, "table %s holds \"%s\"",
		    PQgetvalue(tabs, i, 0), needle);
		PQclear(res);
		free(cols);
	}
	PQclear(tabs);
}

START_TEST(no_credential_in_plaintext)
{
	/* the retrievals of the fleet have run: passwords went through the
	 * vault, bds-jobs, libcurl and the simulator */
	ck_assert_int_gt(devacct_sql_int("SELECT count(*) FROM links WHERE client_id = $1"
	    " AND refresh_count >= 1", client, NULL), 0);
	scan_tables("pw-cust");
	scan_tables("cust00001");
	scan_dir(harness_dir(), "pw-cust", 0);
	scan_dir(harness_dir(), "sess-", 0);
}
END_TEST

static void
stack_up(void)
{
	struct harness_opts o;
	struct sim_opts so = { "fleet", FLEET, STATEMENTS, 900, "2026-11-01" };
	char csv[1024], base[256];
	const char *args[] = { "billers", "import", csv, NULL };
	FILE *f;

	harness_opts_defaults(&o);
	o.extra_config = "allow_private_targets = 1\njobs_workers = 16\nbiller_max_sessions = 4\n";
	harness_fixture_start(&o);
	ck_assert_int_eq(sim_start(&so), 0);
	devacct_legal();
	devacct_new(&dev, "fleet");
	client = devacct_client_new(&dev);
	snprintf(csv, sizeof(csv), "%s/fleet-biller.csv", harness_dir());
	ck_assert_ptr_nonnull(f = fopen(csv, "w"));
	fprintf(f, "id,name,type,status,domains,website,login_url,logo_url,country,"
	    "connectivity_types,consent_scopes,capabilities,connector,base_url\n"
	    FLEET_BILLER ",Fleet Power,electric,ACTIVE,fleet-power.example,"
	    "https://fleet-power.example,https://fleet-power.example/login,,US,credentials,"
	    "bills|statements|payment_history,bills|statements|payment_history,portal,%s\n",
	    sim_base_url("fleet", base, sizeof(base)));
	ck_assert_int_eq(fclose(f), 0);
	ck_assert_int_eq(harness_bdsctl(args), 0);
	/* the links are made with bds-jobs stopped: the test starts it */
	ck_assert_int_eq(harness_jobs_stop(), 0);
	fleet_links(client, "production", FLEET_BILLER, "fleet", 1, FLEET, NULL);
}

static void
stack_down(void)
{
	free(client);
	sim_stop();
	harness_fixture_stop();
}

static Suite *
fleet_suite(void)
{
	Suite *s = suite_create("e2e_fleet");
	TCase *tc = tcase_create("fleet");

	tcase_add_unchecked_fixture(tc, stack_up, stack_down);
	tcase_set_timeout(tc, 1200);
	tcase_add_test(tc, thousand_accounts_limit_four);
	tcase_add_test(tc, no_credential_in_plaintext);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return harness_run_suite(fleet_suite());
}
