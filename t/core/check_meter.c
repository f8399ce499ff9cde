/*
 * core/meter: the route family of a pattern, the worker's counters (what
 * counts, one counter per key), when a flush is due, and counters kept
 * when the database is away.
 */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "core/arena.h"
#include "core/clock.h"
#include "core/db.h"
#include "core/meter.h"
#include "core/req.h"
#include "core/router.h"
#include "tcheck.h"

static const struct {
	const char	*pattern, *metric;	/* NULL: no family */
} families[] = {
	{ "/v1/bills/{id}", "api_requests.bills" },
	{ "/v1/bills", "api_requests.bills" },
	{ "/v1/link-sessions/{id}/connect", "api_requests.link-sessions" },
	{ "/v1/metering/usage", "api_requests.metering" },
	{ "/v1/{x}", NULL },
	{ "/v1/", NULL },
	{ "/.well-known/jwks.json", NULL },
	{ "/v2/bills", NULL },
	{ "/v1/a-family-name-far-too-long-for-the-counter-table/x", NULL },
};

START_TEST(test_family)
{
	char out[METER_FAMILY_MAX];
	int rc = meter_family(families[_i].pattern, out, sizeof(out));

	if (families[_i].metric == NULL) {
		ck_assert_int_eq(rc, -1);
		return;
	}
	ck_assert_int_eq(rc, 0);
	ck_assert_str_eq(out, families[_i].metric);
}
END_TEST

static const struct route bills = { M_GET, "/v1/bills/{id}", AUTH_KEY, NULL, NULL, NULL, 0 };
static const struct route links = { M_GET, "/v1/links", AUTH_KEY, NULL, NULL, NULL, 0 };

static void
answer(const struct route *rt, const char *client, const char *env, int status)
{
	struct req r;

	memset(&r, 0, sizeof(r));
	r.match.route = rt;
	r.client_id = client;
	r.env = env;
	r.status = status;
	meter_count(&r);
}

/*
 * Nothing counts before meter_start; then a request of a client counts, a
 * 401, one without a client or without a route does not; a flush against
 * a database that is away keeps every counter (one per client,
 * environment and metric) and is due again an interval later.
 */
START_TEST(test_count_and_keep)
{
	struct arena a;
	struct db *db;

	answer(&bills, "cli_a", "sandbox", 200);
	ck_assert_int_eq(meter_wait_ms(mono_us()), -1);
	meter_start(2);
	answer(&bills, "cli_a", "sandbox", 401);
	answer(&bills, NULL, NULL, 200);
	answer(NULL, "cli_a", "sandbox", 404);
	ck_assert_int_eq(meter_wait_ms(mono_us()), -1);
	for (int i = 0; i < 1000; i++) {
		answer(&bills, "cli_a", "sandbox", 200);
		answer(&bills, "cli_a", "production", 404);
		answer(&links, "cli_a", "sandbox", 200);
		answer(&bills, "cli_b", "sandbox", 200);
	}
	for (int i = 0; i < 200; i++) {	/* the table grows past its first size */
		char client[16];

		snprintf(client, sizeof(client), "cli_%03d", i);
		answer(&links, client, "sandbox", 200);
	}
	ck_assert_int_gt(meter_wait_ms(mono_us()), 1000);
	ck_assert_int_le(meter_wait_ms(mono_us()), 2000);
	ck_assert_int_eq(meter_wait_ms(mono_us() + 2000001), 0);

	arena_init(&a);
	db = db_new("host=/nonexistent/bds-meter-test dbname=none connect_timeout=1");
	ck_assert_ptr_nonnull(db);
	/* kept, one counter per client, environment and metric: the
	 * database is away */
	ck_assert_int_eq(meter_flush(db, &a), 4 + 200);
	ck_assert_int_gt(meter_wait_ms(mono_us()), 1000);
	db_free(db);
	arena_free(&a);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("meter");
	TCase *tc = tcase_create("meter");

	tcase_add_loop_test(tc, test_family, 0, sizeof(families) / sizeof(families[0]));
	tcase_add_test(tc, test_count_and_keep);
	suite_add_tcase(s, tc);
	return tcheck_run(s);
}
