/*
 * bench/retrieval_bench: retrieval throughput (issue 12). The e2e
 * harness's stack (PostgreSQL, nginx, bds-api, bds-jobs with --workers jobs
 * workers) and the biller simulator serving --accounts customers over
 * --billers billers with --statements monthly statements each (every
 * statement with its PDF and its payment); as many portal links, made with
 * bds-jobs stopped; then bds-jobs is started and timed until every
 * retrieval is done. Prints a markdown section: bills per second, the
 * simulator's requests and sessions at once, and where the time went —
 * inside the portal's calls (the connector's own clock, summed per link in
 * portal_link_state) against the jobs' whole runs, and against the
 * workers' wall time. A measurement, never an assertion: bench/retrieval
 * runs it (bench/README.md).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <check.h>
#include <json-c/json.h>

#include "devacct.h"
#include "fleet.h"
#include "harness.h"
#include "sim.h"

static int accounts = 1000, statements = 12, workers = 16, nbillers = 4, limit = 4;
static const char *out_path = "bench/out/retrieval-latest.md";

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static long long
sim_total(const char *member)
{
	struct json_object *o, *t, *v;
	long long n = -1;

	if (sim_admin("GET", "/_admin/stats", NULL, &o) != 200)
		return -1;
	if (json_object_object_get_ex(o, "overall", &t) && json_object_object_get_ex(t, member, &v))
		n = json_object_get_int64(v);
	json_object_put(o);
	return n;
}

/* max_concurrent_sessions of the busiest biller */
static long long
sim_max_sessions(void)
{
	struct json_object *o, *b;
	long long m = -1;

	if (sim_admin("GET", "/_admin/stats", NULL, &o) != 200)
		return -1;
	if (json_object_object_get_ex(o, "billers", &b)) {
		json_object_object_foreach(b, k, v) {
			struct json_object *x;

			(void)k;
			if (json_object_object_get_ex(v, "max_concurrent_sessions", &x) &&
			    json_object_get_int64(x) > m)
				m = json_object_get_int64(x);
		}
	}
	json_object_put(o);
	return m;
}

START_TEST(retrieval)
{
	struct devacct dev;
	struct harness_opts o;
	struct sim_opts so = { 0 };
	char billers[256] = "", csv[1024], base[256], conf[512], *client;
	const char *args[] = { "billers", "import", csv, NULL };
	int per = accounts / nbillers;
	double t0, t1, secs;
	long long bills, portal_ns, run_ns, reqs, dead;
	FILE *f;

	for (int i = 0; i < nbillers; i++)
		snprintf(billers + strlen(billers), sizeof(billers) - strlen(billers), "%sb%d",
		    i ? "," : "", i + 1);
	snprintf(conf, sizeof(conf), "allow_private_targets = 1\njobs_workers = %d\n"
	    "biller_max_sessions = %d\n", workers, limit);
	harness_opts_defaults(&o);
	o.extra_config = conf;
	harness_fixture_start(&o);
	so.billers = billers;
	so.customers = per;
	so.statements = statements;
	so.session_ttl = 900;
	so.today = "2026-11-01";
	ck_assert_int_eq(sim_start(&so), 0);
	devacct_legal();
	devacct_new(&dev, "bench");
	client = devacct_client_new(&dev);
	snprintf(csv, sizeof(csv), "%s/bench-billers.csv", harness_dir());
	ck_assert_ptr_nonnull(f = fopen(csv, "w"));
	fputs("id,name,type,status,domains,website,login_url,logo_url,country,"
	    "connectivity_types,consent_scopes,capabilities,connector,base_url\n", f);
	for (int i = 0; i < nbillers; i++)
		fprintf(f, "blr_01900000-0000-7000-8000-0000000be%03d,Bench Power %d,electric,"
		    "ACTIVE,bench%d.example,https://bench%d.example,https://bench%d.example/login,,"
		    "US,credentials,bills|statements|payment_history,"
		    "bills|statements|payment_history,portal,%s\n", i + 1, i + 1, i + 1, i + 1,
		    i + 1, sim_base_url(harness_fmt("b%d", i + 1), base, sizeof(base)));
	ck_assert_int_eq(fclose(f), 0);
	ck_assert_int_eq(harness_bdsctl(args), 0);
	ck_assert_int_eq(harness_jobs_stop(), 0);
	for (int i = 0; i < nbillers; i++)
		fleet_links(client, "production",
		    harness_fmt("blr_01900000-0000-7000-8000-0000000be%03d", i + 1),
		    harness_fmt("bench%d", i + 1), 1, (size_t)per, NULL);
	ck_assert_int_eq(sim_admin("POST", "/_admin/stats/reset", "{}", NULL), 200);

	t0 = now_s();
	ck_assert_msg(harness_jobs_start() == 0, "%s", harness_error());
	ck_assert_msg(harness_jobs_wait_settled("retrieval", NULL, 3600 * 1000) == 0, "%s",
	    harness_error());
	t1 = now_s();
	secs = t1 - t0;

	bills = devacct_sql_int("SELECT count(*) FROM bills WHERE client_id = $1", client, NULL);
	dead = devacct_sql_int("SELECT count(*) FROM jobs WHERE kind = 'retrieval'"
	    " AND status = 'dead'", NULL, NULL);
	portal_ns = devacct_sql_int("SELECT coalesce(sum(portal_ns), 0) FROM portal_link_state"
	    " WHERE client_id = $1", client, NULL);
	run_ns = devacct_sql_int("SELECT coalesce(sum(run_ns), 0) FROM portal_link_state"
	    " WHERE client_id = $1", client, NULL);
	reqs = sim_total("requests_total");

	ck_assert_ptr_nonnull(f = fopen(out_path, "w"));
	fprintf(f, "### Retrieval throughput\n\n"
	    "- %d simulator accounts over %d portal billers, %d statements each (PDF and"
	    " payment per statement), %d jobs workers, biller_max_sessions %d\n\n"
	    "| measure | value |\n|---|---|\n"
	    "| wall time, bds-jobs start to the last retrieval done | %.2f s |\n"
	    "| bills stored | %lld (%lld dead jobs) |\n"
	    "| **bills per second** | **%.0f** |\n"
	    "| links per second | %.1f |\n"
	    "| portal requests (simulator count) | %lld (%.0f/s) |\n"
	    "| most sessions at once on one biller | %lld |\n"
	    "| time inside portal calls ÷ the jobs' runs | %.1f %% |\n"
	    "| **our side within the jobs' runs** | **%.1f %%** |\n"
	    "| our side of the workers' wall time (%d × %.2f s; includes claims,"
	    " commits, deferrals, idle) | %.1f %% |\n",
	    accounts, nbillers, statements, workers, limit, secs, bills, dead,
	    bills / secs, accounts / secs, reqs, reqs / secs, sim_max_sessions(),
	    run_ns > 0 ? 100.0 * portal_ns / run_ns : 0.0,
	    run_ns > 0 ? 100.0 * (run_ns - portal_ns) / run_ns : 0.0,
	    workers, secs, 100.0 * (workers * secs * 1e9 - portal_ns) / (workers * secs * 1e9));
	fclose(f);
	free(client);
	sim_stop();
	harness_fixture_stop();
}
END_TEST

int
main(int argc, char **argv)
{
	Suite *s = suite_create("bench_retrieval");
	TCase *tc = tcase_create("retrieval");
	SRunner *sr;
	int failed;

	for (int i = 1; i + 1 < argc; i += 2) {
		if (strcmp(argv[i], "--accounts") == 0)
			accounts = atoi(argv[i + 1]);
		else if (strcmp(argv[i], "--statements") == 0)
			statements = atoi(argv[i + 1]);
		else if (strcmp(argv[i], "--workers") == 0)
			workers = atoi(argv[i + 1]);
		else if (strcmp(argv[i], "--billers") == 0)
			nbillers = atoi(argv[i + 1]);
		else if (strcmp(argv[i], "--limit") == 0)
			limit = atoi(argv[i + 1]);
		else if (strcmp(argv[i], "--out") == 0)
			out_path = argv[i + 1];
	}
	if (accounts < 1 || nbillers < 1 || nbillers > 99 || accounts % nbillers != 0) {
		fprintf(stderr, "retrieval_bench: --accounts must be a multiple of --billers\n");
		return 2;
	}
	tcase_set_timeout(tc, 3600);
	tcase_add_test(tc, retrieval);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_set_fork_status(sr, CK_NOFORK);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? 0 : 1;
}
