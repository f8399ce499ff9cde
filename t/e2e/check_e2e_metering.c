/*
 * Usage metering end to end, through nginx on a stack of four workers
 * flushing every second: 10,000 requests counted exactly; a worker killed
 * -9 mid-run loses at most what it counted in one flush interval (bounded
 * by the requests answered in the interval before the kill); the computed
 * metrics (active_links, bills_retrieved, bill_imports_processed,
 * webhooks_delivered) equal the rows; a key reads its own client and
 * environment, a developer's JWT its own clients (another's is 404); the
 * input rules of the period, metric and granularity.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include <check.h>
#include <json-c/json.h>

#include "devacct.h"
#include "harness.h"
#include "receiver.h"

#define WORKERS		4
#define FLUSH_S		1
#define BURST		200
#define TOTAL		10000
/* a flush is due FLUSH_S after a worker's first unwritten count and runs
 * after the request in hand: this much more covers the write itself */
#define FLUSH_SLACK_MS	400
#define POLL_MS		(FLUSH_S * 1000 + 5000)

static struct devacct dev, other;

static void
stack_up(void)
{
	struct harness_opts o;

	harness_opts_defaults(&o);
	o.workers = WORKERS;
	o.extra_config = "metering = on\nmetering.flush_interval = 1\n";
	harness_fixture_start(&o);
	devacct_legal();
	devacct_new(&dev, "met");
	devacct_new(&other, "met-other");
	srandom((unsigned)getpid());
}

/* A new sandbox client of dev and its key (both malloc'ed). */
static void
client_new(char **client, char **key)
{
	*client = devacct_client_new(&dev);
	*key = devacct_key_new(&dev, *client, "sandbox");
}

static struct harness_resp *
key_get(const char *key, const char *path)
{
	return devacct_call("GET", "sandbox", path, devacct_bearer(key), NULL, NULL);
}

static const char *
today(void)
{
	static char buf[16];
	time_t t = time(NULL);

	strftime(buf, sizeof(buf), "%Y-%m-%d", gmtime(&t));
	return buf;
}

/* The value of metric on env in a usage answer's data (summed over its
 * days); 0 when absent. */
static long long
value_of(const struct harness_resp *r, const char *env, const char *metric)
{
	struct json_object *data = harness_json_get(r, "data");
	long long v = 0;

	ck_assert_ptr_nonnull(data);
	for (size_t i = 0; i < json_object_array_length(data); i++) {
		struct json_object *it = json_object_array_get_idx(data, i), *e, *m, *x;

		if (json_object_object_get_ex(it, "environment", &e) &&
		    json_object_object_get_ex(it, "metric", &m) &&
		    json_object_object_get_ex(it, "value", &x) &&
		    strcmp(json_object_get_string(e), env) == 0 &&
		    strcmp(json_object_get_string(m), metric) == 0)
			v += json_object_get_int64(x);
	}
	return v;
}

/* The key's api_requests.links of today, read through the usage route. */
static long long
links_requests(const char *key)
{
	struct harness_resp *r = key_get(key, harness_fmt("/v1/metering/usage?from=%s&to=%s"
	    "&metric=api_requests.links", today(), today()));
	long long v;

	harness_expect(r, 200);
	v = value_of(r, "sandbox", "api_requests.links");
	harness_resp_free(r);
	return v;
}

/* Poll until the key's count reaches want (or passes it), for at most
 * POLL_MS; the last value read. */
static long long
wait_count(const char *key, long long want)
{
	long long end = harness_now_ms() + POLL_MS, v;

	while ((v = links_requests(key)) < want && harness_now_ms() < end)
		harness_sleep_ms(100);
	return v;
}

/* n requests of GET /v1/links with key, at most BURST at once; the 200s. */
static long long
send_links(const char *key, size_t n)
{
	const char *hdr[] = { harness_fmt("Authorization: Bearer %s", key), NULL };
	struct harness_resp *out[BURST];
	char auth[256];
	long long ok = 0;

	snprintf(auth, sizeof(auth), "%s", hdr[0]);
	hdr[0] = auth;
	while (n > 0) {
		size_t k = n < BURST ? n : BURST;

		harness_request_burst(k, "GET", "sandbox", "/v1/links?limit=1", hdr, NULL, 0, out);
		for (size_t i = 0; i < k; i++) {
			ok += out[i]->status == 200;
			harness_resp_free(out[i]);
		}
		n -= k;
	}
	return ok;
}

/*
 * 10,000 requests over four workers, every one answered: the usage route
 * reads exactly 10,000 once the workers flushed (one interval and a bit),
 * and no more after another interval.
 */
START_TEST(counts_exact_over_workers)
{
	pid_t pids[16];
	char *client, *key;
	long long ok, v;

	ck_assert_uint_eq(harness_api_workers(pids, 16), WORKERS);
	client_new(&client, &key);
	ok = send_links(key, TOTAL);
	ck_assert_int_eq(ok, TOTAL);
	v = wait_count(key, TOTAL);
	ck_assert_int_eq(v, TOTAL);
	harness_sleep_ms(FLUSH_S * 1000 + FLUSH_SLACK_MS);
	ck_assert_int_eq(links_requests(key), TOTAL);
	/* the rows hold it: one per day, environment and metric */
	ck_assert_int_eq(devacct_sql_int("SELECT sum(value) FROM usage_counters"
	    " WHERE client_id = $1 AND metric = 'api_requests.links'", client, NULL), TOTAL);
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM usage_counters"
	    " WHERE client_id = $1 AND metric = 'api_requests.links'", client, NULL), 1);
	free(client);
	free(key);
}
END_TEST

/* One burst's answers and when it ended. */
struct burst {
	long long	ok;
	long long	end_ms;
};

/*
 * A worker killed -9 between two bursts loses at most its counts since
 * its last flush. It flushed everything it counted more than one interval
 * (and the slack of the write) before the kill, so the loss is at most the
 * requests answered in that window by every worker: the bound. The count
 * never exceeds the requests answered.
 */
START_TEST(killed_worker_loses_one_interval_at_most)
{
	enum { B = 100, MAXB = 2000, BEFORE_MS = 4000, AFTER_MS = 1500 };
	struct burst *bursts = calloc(MAXB, sizeof(*bursts));
	pid_t pids[16], victim;
	char *client, *key;
	long long answered = 0, window = 0, kill_ms = 0, start, v;
	int n = 0, before = 0;

	ck_assert_ptr_nonnull(bursts);
	client_new(&client, &key);
	ck_assert_uint_eq(harness_api_workers(pids, 16), WORKERS);
	victim = pids[random() % WORKERS];
	start = harness_now_ms();
	while (n < MAXB && harness_now_ms() < start + BEFORE_MS + AFTER_MS) {
		if (kill_ms == 0 && harness_now_ms() >= start + BEFORE_MS) {
			kill_ms = harness_now_ms();
			before = n;
			ck_assert_int_eq(kill(victim, SIGKILL), 0);
		}
		bursts[n].ok = send_links(key, B);
		bursts[n].end_ms = harness_now_ms();
		answered += bursts[n++].ok;
	}
	ck_assert_int_gt(kill_ms, 0);
	/* every burst ending inside the window before the kill */
	for (int i = 0; i < before; i++)
		if (bursts[i].end_ms >= kill_ms - FLUSH_S * 1000 - FLUSH_SLACK_MS)
			window += bursts[i].ok;
	ck_assert_int_gt(window, 0);
	ck_assert_int_lt(window, answered / 2);	/* the bound says something */
	/* the count settles: no more than answered, short by at most window */
	(void)wait_count(key, answered);
	harness_sleep_ms(FLUSH_S * 1000 + FLUSH_SLACK_MS);
	v = links_requests(key);
	fprintf(stderr, "killed worker: %lld answered, %lld counted, %lld in the window\n",
	    answered, v, window);
	ck_assert_msg(v <= answered, "counted %lld of %lld answered", v, answered);
	ck_assert_msg(answered - v <= window, "counted %lld of %lld answered: short by %lld,"
	    " more than the %lld answered in the interval before the kill", v, answered,
	    answered - v, window);
	/* the master replaced the worker */
	ck_assert_int_eq(harness_api_wait_workers(WORKERS, &victim, 1, 10000), 0);
	free(bursts);
	free(client);
	free(key);
}
END_TEST

/* The metric named in a summary answer's environments.env. */
static long long
summary_of(const struct harness_resp *r, const char *env, const char *metric)
{
	return devacct_int(r, harness_fmt("environments.%s.%s", env, metric));
}

/*
 * A sandbox link with bills, a webhook delivered, an import committed in
 * sandbox and one in development: each computed metric equals its rows,
 * by key (its environment only) and by JWT (every environment, or one).
 */
START_TEST(computed_metrics_match_rows)
{
	struct receiver *rc = receiver_start(NULL);
	char *client, *key, *link, *user;
	struct harness_resp *r;
	long long bills, delivered;
	const char *q;

	ck_assert_ptr_nonnull(rc);
	client_new(&client, &key);
	devacct_subscribe(key, rc);
	user = strdup(harness_fmt("u-met-%ld", (long)random()));
	link = devacct_sandbox_link(key, user, "user_good");
	ck_assert_int_eq(harness_jobs_wait_idle(60000), 0);
	/* bds-deliver sends what the link's retrieval emitted */
	for (long long end = harness_now_ms() + 20000; devacct_sql_int("SELECT count(*)"
	    " FROM deliveries WHERE client_id = $1 AND status = 'succeeded'", client, NULL) == 0 &&
	    harness_now_ms() < end;)
		ck_assert_int_eq(harness_deliver_once(), 0);
	devacct_sql_exec("INSERT INTO bill_imports (client_id, id, environment, client_user_id,"
	    " file_name, content_type, size_bytes, status, upload_expires_at, expires_at,"
	    " committed_at) VALUES ($1, 'bimp_met_' || $2, 'sandbox', 'u', 'a.pdf',"
	    " 'application/pdf', 1, 'COMMITTED', now(), now(), now()),"
	    " ($1, 'bimp_met_dev_' || $2, 'development', 'u', 'a.pdf', 'application/pdf', 1,"
	    " 'REJECTED', now(), now(), NULL)", client, user);
	bills = devacct_sql_int("SELECT count(*) FROM bills WHERE client_id = $1"
	    " AND source <> 'import'", client, NULL);
	delivered = devacct_sql_int("SELECT count(*) FROM deliveries WHERE client_id = $1"
	    " AND status = 'succeeded'", client, NULL);
	ck_assert_int_gt(bills, 0);
	ck_assert_int_gt(delivered, 0);

	q = harness_fmt("/v1/metering/usage?from=%s&to=%s", today(), today());
	r = key_get(key, q);
	harness_expect(r, 200);
	ck_assert_str_eq(devacct_str(r, "object"), "list");
	ck_assert_str_eq(devacct_str(r, "client_id"), client);
	ck_assert_str_eq(devacct_str(r, "granularity"), "day");
	ck_assert_str_eq(devacct_str(r, "from"), today());
	ck_assert_int_eq(value_of(r, "sandbox", "active_links"), 1);
	ck_assert_int_eq(value_of(r, "sandbox", "bills_retrieved"), bills);
	ck_assert_int_eq(value_of(r, "sandbox", "webhooks_delivered"), delivered);
	ck_assert_int_eq(value_of(r, "sandbox", "bill_imports_processed"), 1);
	ck_assert_int_eq(value_of(r, "development", "bill_imports_processed"), 0);
	harness_resp_free(r);

	/* one metric only */
	r = key_get(key, harness_fmt("%s&metric=bills_retrieved", q));
	harness_expect(r, 200);
	ck_assert_int_eq(value_of(r, "sandbox", "bills_retrieved"), bills);
	ck_assert_int_eq(value_of(r, "sandbox", "active_links"), 0);
	harness_resp_free(r);

	/* the developer sees every environment, or the one asked */
	r = devacct_jwt(&dev, "GET", harness_fmt("%s&client_id=%s", q, client), NULL, NULL);
	harness_expect(r, 200);
	ck_assert_int_eq(value_of(r, "sandbox", "bill_imports_processed"), 1);
	ck_assert_int_eq(value_of(r, "development", "bill_imports_processed"), 1);
	ck_assert_int_eq(value_of(r, "sandbox", "bills_retrieved"), bills);
	harness_resp_free(r);
	r = devacct_jwt(&dev, "GET", harness_fmt("%s&client_id=%s&environment=development", q,
	    client), NULL, NULL);
	harness_expect(r, 200);
	ck_assert_int_eq(value_of(r, "sandbox", "bill_imports_processed"), 0);
	ck_assert_int_eq(value_of(r, "development", "bill_imports_processed"), 1);
	harness_resp_free(r);

	/* the month's summary: the key's environment only */
	r = key_get(key, "/v1/metering/summary");
	harness_expect(r, 200);
	ck_assert_str_eq(devacct_str(r, "object"), "metering_summary");
	ck_assert_int_eq(summary_of(r, "sandbox", "active_links"), 1);
	ck_assert_int_eq(summary_of(r, "sandbox", "bills_retrieved"), bills);
	ck_assert_int_eq(summary_of(r, "sandbox", "webhooks_delivered"), delivered);
	ck_assert_int_eq(summary_of(r, "sandbox", "bill_imports_processed"), 1);
	ck_assert_ptr_null(devacct_json(r, "environments.development"));
	ck_assert_int_eq(strncmp(devacct_str(r, "period_start"), today(), 8), 0);
	ck_assert_str_eq(devacct_str(r, "period_start") + 8, "01");
	harness_resp_free(r);
	r = devacct_jwt(&dev, "GET", harness_fmt("/v1/metering/summary?client_id=%s", client),
	    NULL, NULL);
	harness_expect(r, 200);
	ck_assert_int_eq(summary_of(r, "development", "bill_imports_processed"), 1);
	ck_assert_int_eq(summary_of(r, "production", "active_links"), 0);
	harness_resp_free(r);

	receiver_stop(rc);
	free(client);
	free(key);
	free(link);
	free(user);
}
END_TEST

/*
 * Who reads what: a key its own client and environment (another client_id
 * 403, another environment 400); the developer's JWT its own clients with
 * client_id (required), another developer's or an unknown one 404 alike;
 * no credential 401. A JWT's request counts for no client.
 */
START_TEST(jwt_and_key_access)
{
	char *client, *key, *theirs;
	struct harness_resp *r;

	client_new(&client, &key);
	theirs = devacct_client_new(&other);

	r = key_get(key, harness_fmt("/v1/metering/usage?client_id=%s", theirs));
	harness_assert_coded(r, 403, "CLIENT_ID_MISMATCH");
	harness_resp_free(r);
	r = key_get(key, harness_fmt("/v1/metering/usage?client_id=%s", client));
	harness_expect(r, 200);
	harness_resp_free(r);
	r = key_get(key, "/v1/metering/summary?environment=production");
	harness_assert_coded(r, 400, "VALIDATION_ERROR");
	devacct_assert_error(r, "environment", "environment_mismatch");
	harness_resp_free(r);

	r = devacct_jwt(&dev, "GET", "/v1/metering/usage", NULL, NULL);
	harness_assert_coded(r, 400, "VALIDATION_ERROR");
	devacct_assert_error(r, "client_id", "required");
	harness_resp_free(r);
	r = devacct_jwt(&dev, "GET", harness_fmt("/v1/metering/usage?client_id=%s", theirs),
	    NULL, NULL);
	harness_assert_coded(r, 404, "CLIENT_NOT_FOUND");
	harness_resp_free(r);
	r = devacct_jwt(&dev, "GET", harness_fmt("/v1/metering/summary?client_id=%s", theirs),
	    NULL, NULL);
	harness_assert_coded(r, 404, "CLIENT_NOT_FOUND");
	harness_resp_free(r);
	r = devacct_jwt(&dev, "GET", "/v1/metering/usage?client_id=cli_nosuchclient", NULL, NULL);
	harness_assert_coded(r, 404, "CLIENT_NOT_FOUND");
	harness_resp_free(r);
	r = devacct_jwt(&other, "GET", harness_fmt("/v1/metering/usage?client_id=%s", theirs),
	    NULL, NULL);
	harness_expect(r, 200);
	ck_assert_str_eq(devacct_str(r, "client_id"), theirs);
	harness_resp_free(r);

	r = devacct_call("GET", "sandbox", "/v1/metering/usage", NULL, NULL, NULL);
	harness_assert_coded(r, 401, "UNAUTHORIZED");
	harness_resp_free(r);

	/* the key's own reads of the usage route count as metering requests */
	{
		long long end = harness_now_ms() + POLL_MS, v = 0;

		while ((v = devacct_sql_int("SELECT coalesce(sum(value), 0) FROM usage_counters"
		    " WHERE client_id = $1 AND metric = 'api_requests.metering'", client,
		    NULL)) < 3 && harness_now_ms() < end)
			harness_sleep_ms(100);
		ck_assert_int_eq(v, 3);
		ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM usage_counters"
		    " WHERE client_id = $1", theirs, NULL), 0);
	}
	free(client);
	free(key);
	free(theirs);
}
END_TEST

/* The period, the metric and the granularity, each refused naming its field. */
START_TEST(validation_errors)
{
	static const struct {
		const char	*query, *field, *code;
	} bad[] = {
		{ "from=2026-03-02&to=2026-03-01", "from", "out_of_range" },
		{ "from=2025-01-01&to=2026-01-02", "to", "out_of_range" },
		{ "from=2026-02-30", "from", "invalid_format" },
		{ "from=1969-12-31&to=1970-01-01", "from", "out_of_range" },
		{ "to=1970-01-10", "from", "out_of_range" },
		{ "to=yesterday", "to", "invalid_format" },
		{ "metric=nonsense", "metric", "invalid_enum" },
		{ "metric=api_requests.nosuchfamily", "metric", "invalid_enum" },
		{ "granularity=week", "granularity", "invalid_enum" },
		{ "environment=staging", "environment", "invalid_enum" },
		{ "color=blue", "color", "unknown_field" },
	};
	char *client, *key;
	struct harness_resp *r;

	client_new(&client, &key);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		r = key_get(key, harness_fmt("/v1/metering/usage?%s", bad[i].query));
		harness_assert_coded(r, 400, "VALIDATION_ERROR");
		devacct_assert_error(r, bad[i].field, bad[i].code);
		harness_resp_free(r);
	}
	/* the longest period passes: 366 days, both ends counted */
	r = key_get(key, "/v1/metering/usage?from=2025-01-01&to=2026-01-01");
	harness_expect(r, 200);
	ck_assert_str_eq(devacct_str(r, "to"), "2026-01-01");
	harness_resp_free(r);
	/* the default period: the 30 days up to today */
	r = key_get(key, "/v1/metering/usage?granularity=day&metric=api_requests.links");
	harness_expect(r, 200);
	ck_assert_str_eq(devacct_str(r, "to"), today());
	harness_resp_free(r);
	free(client);
	free(key);
}
END_TEST

static Suite *
metering_suite(void)
{
	Suite *s = suite_create("e2e_metering");
	TCase *tc = tcase_create("metering");

	tcase_add_unchecked_fixture(tc, stack_up, harness_fixture_stop);
	tcase_add_checked_fixture(tc, harness_fixture_recover, NULL);
	tcase_set_timeout(tc, 180);
	tcase_add_test(tc, counts_exact_over_workers);
	tcase_add_test(tc, killed_worker_loses_one_interval_at_most);
	tcase_add_test(tc, computed_metrics_match_rows);
	tcase_add_test(tc, jwt_and_key_access);
	tcase_add_test(tc, validation_errors);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return harness_run_suite(metering_suite());
}
