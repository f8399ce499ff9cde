/*
 * bds-jobs, the jobs runner, on the real stack: jobs queued with jobq_add
 * (the function every module calls) and run by the stack's bds-jobs and
 * by more instances this suite starts, through the "test" kind of
 * lib/jobs/jobs.c (payload sleep_ms, outcome, fail_times; it counts its
 * committed runs in payload.runs and the worker pid in payload.ran_by).
 * What it proves: a NOTIFY wakes a runner that would not poll for an hour;
 * two runners with two workers each run each of 200 jobs exactly once;
 * retries follow the schedule until done, max attempts end dead with the
 * error, a permanent failure is dead at once; a runner SIGKILLed mid-job
 * leaves nothing committed and the job runs again after its lease and
 * completes once; a second enqueue of pending work is a no-op. And the
 * bill store (bills_store, called as a retrieval does, with the sandbox
 * connector's statements): a link's sequence rises with each new or changed
 * bill, the same statement stored twice is one bill, one bill.created and
 * no new number, a bill created PAID also gets bill.updated paid, a move to
 * PAID emits bill.updated paid.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <json-c/json.h>
#include <libpq-fe.h>

#include "core/arena.h"
#include "core/config.h"
#include "core/crypto.h"
#include "core/db.h"
#include "core/jobq.h"
#include "bills/bills.h"
#include "core/req.h"
#include "jobs/connectors/connector.h"
#include "devacct.h"
#include "harness.h"

/* The test's own handles for calling library functions as a module does. */
static struct config cfg;
static struct db *db;
static struct arena arena;
static int lib_ready;

static void
stack(void)
{
	struct harness_opts o;

	harness_opts_defaults(&o);
	/* retries a second apart, so the retry tests end quickly */
	o.extra_config = "jobs_retry_schedule = 1,1,1\n";
	harness_fixture_start(&o);
}

static void
lib_setup(void)
{
	char err[256];

	if (lib_ready)
		return;
	ck_assert_int_eq(crypto_setup(), 0);
	ck_assert_msg(config_load(&cfg, harness_config_path(), err, sizeof(err)) == 0,
	    "config: %s", err);
	ck_assert_ptr_nonnull(db = db_new(harness_database_url()));
	arena_init(&arena);
	lib_ready = 1;
}

/* A request as a module's handler or job has it: db, arena, cfg. */
static struct req *
lib_req(void)
{
	static struct req r;

	lib_setup();
	req_init(&r, &cfg, db, &arena, "test");
	return &r;
}

/* jobq_add of a test job in its own transaction; payload JSON text. */
static void
enqueue(const char *subject, const char *payload)
{
	struct req *r = lib_req();
	struct json_object *p = json_tokener_parse(payload);

	ck_assert_ptr_nonnull(p);
	ck_assert_int_eq(db_begin(r->db), 0);
	ck_assert_int_eq(jobq_add(r, "test", NULL, NULL, subject, p, 0), 0);
	ck_assert_int_eq(db_commit(r->db), 0);
	json_object_put(p);
	arena_reset(&arena);
}

/* The first row's first column of q with one parameter, malloc'ed. */
static char *
sql1(const char *q, const char *param)
{
	const char *p[1] = { param };
	PGresult *res = PQexecParams(devacct_pg(), q, param ? 1 : 0, NULL, p, NULL, NULL, 0);
	char *v;

	ck_assert_msg(PQresultStatus(res) == PGRES_TUPLES_OK, "%s: %s", q,
	    PQerrorMessage(devacct_pg()));
	ck_assert_int_ge(PQntuples(res), 1);
	v = strdup(PQgetisnull(res, 0, 0) ? "(null)" : PQgetvalue(res, 0, 0));
	PQclear(res);
	return v;
}

/* Wait (bounded by timeout_ms) until q with param answers true; what names
 * the wait in the failure. */
static void
wait_true(const char *q, const char *param, int timeout_ms, const char *what)
{
	long long end = harness_now_ms() + timeout_ms;

	for (;;) {
		char *v = sql1(q, param);
		int ok = strcmp(v, "t") == 0;

		free(v);
		if (ok)
			return;
		ck_assert_msg(harness_now_ms() < end, "%s: not in %d ms", what, timeout_ms);
		harness_sleep_ms(20);
	}
}

static void
sql_ok(const char *q)
{
	PGresult *res = PQexec(devacct_pg(), q);

	ck_assert_msg(PQresultStatus(res) == PGRES_COMMAND_OK ||
	    PQresultStatus(res) == PGRES_TUPLES_OK, "%s: %s", q,
	    PQerrorMessage(devacct_pg()));
	PQclear(res);
}

/* "status attempts runs last_error" of the job of subject. */
static char *
job_state(const char *subject)
{
	return sql1("SELECT status || ' ' || attempts || ' ' ||"
	    " COALESCE(payload->>'runs', '0') || ' ' || COALESCE(last_error, '-')"
	    " FROM jobs WHERE kind = 'test' AND subject_id = $1"
	    " ORDER BY created_at DESC LIMIT 1", subject);
}

/* Wait (bounded) until the job of subject has status; its state then. */
static char *
wait_status(const char *subject, const char *status, int timeout_ms)
{
	long long end = harness_now_ms() + timeout_ms;

	for (;;) {
		char *s = job_state(subject);

		if (strncmp(s, status, strlen(status)) == 0 && s[strlen(status)] == ' ')
			return s;
		if (harness_now_ms() >= end)
			ck_abort_msg("job %s: still \"%s\", not %s", subject, s, status);
		free(s);
		harness_sleep_ms(20);
	}
}

static void
test_setup(void)
{
	sql_ok("DELETE FROM jobs WHERE kind = 'test'");
	ck_assert_msg(harness_jobs_start() == 0, "%s", harness_error());
}

struct run_args {
	const char *const *argv;
	int	 rc;
};

static void *
run_thread(void *p)
{
	struct run_args *a = p;

	a->rc = harness_jobs_run(a->argv, 60000);
	return NULL;
}

START_TEST(notify_wakes_a_sleeping_runner)
{
	static const char *const argv[] = {
		"--workers", "1", "--poll-ms", "3600000", "--max-seconds", "6", NULL
	};
	struct run_args a = { argv, -1 };
	pthread_t t;

	/* only a runner that polls once an hour: the notification must wake it */
	ck_assert_msg(harness_jobs_stop() == 0, "%s", harness_error());
	ck_assert_int_eq(pthread_create(&t, NULL, run_thread, &a), 0);
	/* a bds-jobs backend other than the stack's sits idle after its claim
	 * (the claim's short transaction committed): the runner listens and
	 * sleeps */
	wait_true("SELECT count(*) >= 1 FROM pg_stat_activity"
	    " WHERE application_name = 'bds-jobs' AND state = 'idle'"
	    "   AND query = 'COMMIT'", NULL, 15000, "the runner going idle");
	enqueue("wake", "{}");
	free(wait_status("wake", "done", 5000));
	pthread_join(t, NULL);
	ck_assert_int_eq(a.rc, 0);
	{
		char *st = job_state("wake");

		ck_assert_str_eq(st, "done 1 1 -");
		free(st);
	}
}
END_TEST

START_TEST(two_runners_run_each_job_once)
{
	static const char *const argv[] = {
		"--workers", "2", "--max-seconds", "5", NULL
	};
	struct run_args a = { argv, -1 };
	pthread_t t;
	char *v;

	/* the stack's runner (2 workers) and one more (2 workers) at once */
	ck_assert_int_eq(pthread_create(&t, NULL, run_thread, &a), 0);
	sql_ok("INSERT INTO jobs (id, kind, subject_id, payload)"
	    " SELECT 'job_many_' || i, 'test', 'many-' || i, '{\"sleep_ms\": 10}'"
	    "   FROM generate_series(1, 200) i");
	ck_assert_msg(harness_jobs_wait_idle(60000) == 0, "%s", harness_error());
	pthread_join(t, NULL);
	ck_assert_int_eq(a.rc, 0);
	v = sql1("SELECT count(*) FILTER (WHERE status = 'done' AND attempts = 1"
	    "   AND (payload->>'runs')::int = 1) || ' of ' || count(*)"
	    " FROM jobs WHERE id LIKE 'job_many_%'", NULL);
	ck_assert_str_eq(v, "200 of 200");
	free(v);
	/* more than one worker took part */
	v = sql1("SELECT count(DISTINCT payload->>'ran_by') >= 2 FROM jobs"
	    " WHERE id LIKE 'job_many_%'", NULL);
	ck_assert_str_eq(v, "t");
	free(v);
}
END_TEST

/* The claim passes over the jobs of a biller whose sessions are all in use
 * (sql/033_jobs_slot.sql): they would only defer. */
START_TEST(claim_passes_over_a_full_biller)
{
	char *s;

	/* biller_max_sessions (4) jobs of blr_full running elsewhere, a fifth
	 * queued first, then a job of no biller */
	sql_ok("INSERT INTO jobs (id, kind, subject_id, status, lease_until, slot_key)"
	    " SELECT 'job_full_' || i, 'test', 'full-' || i, 'running',"
	    "        now() + interval '1 hour', 'blr_full' FROM generate_series(1, 4) i");
	sql_ok("INSERT INTO jobs (id, kind, subject_id, slot_key, next_attempt_at)"
	    " VALUES ('job_full_wait', 'test', 'full-wait', 'blr_full', now() - interval '1 minute')");
	enqueue("free", "{}");
	free(wait_status("free", "done", 10000));
	s = job_state("full-wait");
	ck_assert_str_eq(s, "pending 0 0 -");
	free(s);
	/* a running job whose lease ended holds no session: once only three
	 * are live, the waiting job runs (its runner woken by a notification) */
	sql_ok("UPDATE jobs SET lease_until = now() - interval '1 second',"
	    " payload = '{\"sleep_ms\": 0}' WHERE id = 'job_full_1'");
	sql_ok("NOTIFY bds_jobs, 'jobs'");
	s = wait_status("full-wait", "done", 10000);
	ck_assert_str_eq(s, "done 1 1 -");
	free(s);
}
END_TEST

/* A connect job (a user waits on the link page) is claimed before work
 * queued earlier. */
START_TEST(connect_goes_first)
{
	static const char *const argv[] = {
		"--workers", "1", "--max-seconds", "3", NULL
	};
	char *v;

	ck_assert_msg(harness_jobs_stop() == 0, "%s", harness_error());
	sql_ok("DELETE FROM jobs WHERE kind = 'connect' AND subject_id = 'lses_none'");
	sql_ok("INSERT INTO jobs (id, kind, subject_id, next_attempt_at)"
	    " SELECT 'job_before_' || i, 'test', 'before-' || i, now() - interval '1 minute'"
	    "   FROM generate_series(1, 5) i");
	/* a session that is gone: the job is done at once */
	sql_ok("INSERT INTO jobs (id, kind, subject_id) VALUES ('job_connect_first', 'connect',"
	    " 'lses_none')");
	ck_assert_int_eq(harness_jobs_run(argv, 60000), 0);
	v = sql1("SELECT count(*) FILTER (WHERE status = 'done') || ' ' ||"
	    " bool_and(updated_at > (SELECT updated_at FROM jobs WHERE id = 'job_connect_first'))"
	    " FROM jobs WHERE id LIKE 'job_before_%'", NULL);
	ck_assert_str_eq(v, "5 true");
	free(v);
	v = sql1("SELECT status FROM jobs WHERE id = 'job_connect_first'", NULL);
	ck_assert_str_eq(v, "done");
	free(v);
	sql_ok("DELETE FROM jobs WHERE id = 'job_connect_first'");
}
END_TEST

START_TEST(retries_then_done)
{
	char *s;

	/* fails twice, then succeeds: the failed runs were rolled back */
	enqueue("flaky", "{\"fail_times\": 2}");
	s = wait_status("flaky", "done", 30000);
	ck_assert_str_eq(s, "done 3 1 -");
	free(s);
}
END_TEST

START_TEST(max_attempts_end_dead_with_the_error)
{
	char *s;

	enqueue("hopeless", "{\"outcome\": \"retry\"}");
	s = wait_status("hopeless", "dead", 30000);
	ck_assert_str_eq(s, "dead 3 0 test failure on attempt 3");
	free(s);
}
END_TEST

START_TEST(permanent_failure_is_dead_at_once)
{
	char *s;

	enqueue("broken", "{\"outcome\": \"failed\"}");
	s = wait_status("broken", "dead", 10000);
	ck_assert_str_eq(s, "dead 1 0 test failure, permanent");
	free(s);
}
END_TEST

START_TEST(killed_mid_job_runs_again_after_its_lease_once)
{
	char *s;

	/* the test kind's lease is 5 s; the job takes 3 s */
	enqueue("killed", "{\"sleep_ms\": 3000}");
	free(wait_status("killed", "running", 10000));
	/* the job holds its kind's lease: the claim's own lease is 30 s
	 * (JOBS_CLAIM_LEASE) until the run replaces it, so a runner killed in
	 * between would leave the job for 30 s */
	wait_true("SELECT status = 'running' AND lease_until < now() + interval '6 s'"
	    " FROM jobs WHERE kind = 'test' AND subject_id = $1"
	    " ORDER BY created_at DESC LIMIT 1", "killed", 10000,
	    "job killed taking its kind's lease");
	ck_assert_msg(harness_jobs_kill() == 0, "%s", harness_error());
	ck_assert_int_eq(harness_jobs_pid(), 0);
	s = job_state("killed");
	ck_assert_str_eq(s, "running 1 0 -");	/* nothing of the run committed */
	free(s);
	ck_assert_msg(harness_jobs_start() == 0, "%s", harness_error());
	s = wait_status("killed", "done", 30000);
	ck_assert_str_eq(s, "done 2 1 -");
	free(s);
}
END_TEST

START_TEST(second_enqueue_of_pending_work_is_a_no_op)
{
	char *v;

	ck_assert_msg(harness_jobs_stop() == 0, "%s", harness_error());
	enqueue("twice", "{\"n\": 1}");
	enqueue("twice", "{\"n\": 2}");
	v = sql1("SELECT count(*) || ' ' || min(payload->>'n') FROM jobs"
	    " WHERE kind = 'test' AND subject_id = 'twice'", NULL);
	ck_assert_str_eq(v, "1 1");
	free(v);
	ck_assert_msg(harness_jobs_start() == 0, "%s", harness_error());
	free(wait_status("twice", "done", 10000));
	/* once it ran, the same work queues again */
	enqueue("twice", "{\"n\": 3}");
	v = sql1("SELECT count(*) FROM jobs WHERE kind = 'test' AND subject_id = 'twice'",
	    NULL);
	ck_assert_str_eq(v, "2");
	free(v);
}
END_TEST

/* ---- the bill store ---- */

#define SANDBOX_BILLER "blr_01900000-0000-7000-8000-000000000001"

/* A client of a new developer, and the sandbox biller. */
static const char *
bills_client(void)
{
	static struct devacct d;

	devacct_legal();
	devacct_new(&d, "bills");
	sql_ok("INSERT INTO billers (id, name, type, country, connector,"
	    " connectivity_types, consent_scopes, capabilities) VALUES"
	    " ('" SANDBOX_BILLER "', 'Sandbox Power & Light', 'electric', 'US', 'sandbox',"
	    " '{credentials}', '{}', '{bills}') ON CONFLICT DO NOTHING");
	return d.client_id;
}

/* The sandbox's statements of username's first account at refresh. */
static struct bills_statement *
sandbox_statements(const char *user, int refresh, size_t *n)
{
	static const struct connector_target target;
	const struct connector *c = connector_find("sandbox");
	struct connector_query q = { .refresh = refresh };
	struct connector_session s;
	struct connector_statement *cs;
	struct bills_statement *st;

	lib_setup();
	connector_session_init(&s, &target);
	ck_assert_int_eq(c->login(&arena, &s, user, "pass_good"), CONN_OK);
	ck_assert_int_eq(c->statements(&arena, &s, arena_printf(&arena, "sbx-%s-1", user),
	    &q, &cs, n), CONN_OK);
	st = arena_alloc(&arena, (*n + 1) * sizeof(*st));
	for (size_t i = 0; i < *n; i++)
		st[i] = cs[i].b;
	return st;
}

/* Store st[0..n) in one transaction; how many were new. */
static int
store(const struct bills_link *l, struct bills_statement *st, size_t n)
{
	struct req *r = lib_req();
	int created, total = 0;
	size_t i;

	ck_assert_int_eq(db_begin(r->db), 0);
	for (i = 0; i < n; i++) {
		ck_assert_int_eq(bills_store(r, l, "acct_test", "1234", &st[i], &created), 0);
		total += created;
	}
	ck_assert_int_eq(db_commit(r->db), 0);
	return total;
}

static long
events_of(const char *client, const char *type)
{
	const char *p[2] = { client, type };
	PGresult *res = PQexecParams(devacct_pg(), "SELECT count(*) FROM events"
	    " WHERE client_id = $1 AND type = $2", 2, NULL, p, NULL, NULL, 0);
	long n;

	ck_assert_int_eq(PQresultStatus(res), PGRES_TUPLES_OK);
	n = atol(PQgetvalue(res, 0, 0));
	PQclear(res);
	return n;
}

START_TEST(bills_store_once_per_statement_with_sequence)
{
	const char *client = bills_client();
	struct bills_link l = { client, "sandbox", "link_test_store", "user-1",
	    SANDBOX_BILLER, "Sandbox Power & Light" };
	struct bills_statement *st;
	size_t n;
	char *v;

	st = sandbox_statements("user_paid", 0, &n);
	ck_assert_int_eq(store(&l, st, n), 12);
	v = sql1("SELECT last_seq FROM bill_seq WHERE link_id = 'link_test_store'", NULL);
	ck_assert_str_eq(v, "12");
	free(v);
	/* 12 bill.created; the 11 created PAID also bill.updated paid */
	ck_assert_int_eq(events_of(client, "bill.created"), 12);
	ck_assert_int_eq(events_of(client, "bill.updated"), 11);
	{
		struct req *r = lib_req();

		ck_assert_int_eq(bills_count(r, client, "link_test_store"), 12);
		arena_reset(&arena);
	}

	/* the same statements again: nothing new, no number, no event */
	st = sandbox_statements("user_paid", 0, &n);
	ck_assert_int_eq(store(&l, st, n), 0);
	v = sql1("SELECT last_seq || ' ' || count(*) FROM bill_seq, bills"
	    " WHERE bill_seq.link_id = 'link_test_store' AND bills.link_id = bill_seq.link_id"
	    " GROUP BY last_seq", NULL);
	ck_assert_str_eq(v, "12 12");
	free(v);
	ck_assert_int_eq(events_of(client, "bill.created"), 12);

	/* the next refresh: the newest goes PAID: one new number, one event */
	st = sandbox_statements("user_paid", 1, &n);
	ck_assert_int_eq(store(&l, st, n), 0);
	/* the statement still asked for its total; nothing is owed now */
	v = sql1("SELECT status || ' ' || (amount_due_minor = total_minor) || ' ' ||"
	    " balance_minor || ' ' || paid_reason || ' ' ||"
	    " created_seq || ' ' || changed_seq FROM bills"
	    " WHERE link_id = 'link_test_store' AND statement_ref = 'sbx-user_paid-1-2026-09'",
	    NULL);
	ck_assert_str_eq(v, "PAID true 0 portal_balance_zero 1 13");
	free(v);
	ck_assert_int_eq(events_of(client, "bill.updated"), 12);
	/* the figures as stored: the total and the items of the formula */
	v = sql1("SELECT (total_minor = (SELECT sum((i->'amount'->>'minor')::bigint)"
	    "   FROM jsonb_array_elements(line_items) i))::text || ' ' || currency"
	    " || ' ' || jsonb_array_length(line_items) || ' ' || (usage->0->>'unit')"
	    " FROM bills WHERE link_id = 'link_test_store'"
	    "  AND statement_ref = 'sbx-user_paid-1-2026-08'", NULL);
	ck_assert_str_eq(v, "true USD 3 kWh");
	free(v);
}
END_TEST

static Suite *
jobs_suite(void)
{
	Suite *s = suite_create("e2e_jobs");
	TCase *tc = tcase_create("runner");

	tcase_add_unchecked_fixture(tc, stack, harness_fixture_stop);
	tcase_add_checked_fixture(tc, test_setup, NULL);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, notify_wakes_a_sleeping_runner);
	tcase_add_test(tc, two_runners_run_each_job_once);
	tcase_add_test(tc, claim_passes_over_a_full_biller);
	tcase_add_test(tc, connect_goes_first);
	tcase_add_test(tc, retries_then_done);
	tcase_add_test(tc, max_attempts_end_dead_with_the_error);
	tcase_add_test(tc, permanent_failure_is_dead_at_once);
	tcase_add_test(tc, killed_mid_job_runs_again_after_its_lease_once);
	tcase_add_test(tc, second_enqueue_of_pending_work_is_a_no_op);
	tcase_add_test(tc, bills_store_once_per_statement_with_sequence);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return harness_run_suite(jobs_suite());
}
