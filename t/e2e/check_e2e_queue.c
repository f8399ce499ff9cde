/*
 * The leased job queue (lib/core/queue) on a real PostgreSQL, through a
 * test kind of its own: a table queue_test this suite creates (the queue
 * columns, an insert trigger notifying bds_queue_test), statements written
 * with the QUEUE_SQL_* macros every kind uses, and a send function that
 * does what each row's tag says (ok, retry, fail, ra = retry with
 * Retry-After, stop = succeed, then stop the runner). What it proves:
 * claims skip locked rows and runners never share a row, an expired lease
 * is claimed again (and the late record of the lost claim records
 * nothing), retries follow the schedule within the jitter bounds, the last
 * attempt fails, unstarted jobs are released on stop, and a notification
 * wakes a sleeping runner long before its poll interval.
 */
#include <pthread.h>
#include <signal.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <libpq-fe.h>

#include "core/arena.h"
#include "core/crypto.h"
#include "core/db.h"
#include "core/queue.h"
#include "devacct.h"
#include "harness.h"

#define CHANNEL		"bds_queue_test"
#define MAX_SEEN	1024

/* The test kind's statements: what a real kind writes, table aside. */
#define QT_COLS ", tag"
enum { QT_COL_TAG = QUEUE_COL__MAX, QT_COL__MAX };
enum { QT_CLAIM, QT_SENT, QT_RETRY, QT_FAIL, QT_RELEASE, QT__MAX };
static struct db_stmt stmts[QT__MAX] = {
	[QT_CLAIM] = { "qt_claim", QUEUE_SQL_CLAIM("queue_test", QT_COLS), 0 },
	[QT_SENT] = { "qt_sent", QUEUE_SQL_SENT("queue_test", ", sent_at = now()"), 0 },
	[QT_RETRY] = { "qt_retry", QUEUE_SQL_RETRY("queue_test"), 0 },
	[QT_FAIL] = { "qt_fail", QUEUE_SQL_FAIL("queue_test", ""), 0 },
	[QT_RELEASE] = { "qt_release", QUEUE_SQL_RELEASE("queue_test"), 0 },
};

static const char schema[] =
    "CREATE TABLE IF NOT EXISTS queue_test ("
    " id text PRIMARY KEY, kind text NOT NULL DEFAULT 'test',"
    " status text NOT NULL DEFAULT 'pending', attempts int NOT NULL DEFAULT 0,"
    " next_attempt_at timestamptz NOT NULL DEFAULT now(), lease_until timestamptz,"
    " last_error text, sent_at timestamptz, tag text NOT NULL);"
    "CREATE OR REPLACE FUNCTION queue_test_notify() RETURNS trigger LANGUAGE plpgsql"
    " AS $$ BEGIN PERFORM pg_notify('" CHANNEL "', TG_TABLE_NAME); RETURN NULL; END; $$;"
    "DROP TRIGGER IF EXISTS queue_test_notify ON queue_test;"
    "CREATE TRIGGER queue_test_notify AFTER INSERT ON queue_test"
    " FOR EACH STATEMENT EXECUTE FUNCTION queue_test_notify();"
    "DELETE FROM queue_test;";

/* What the send function saw (all runners of a test, under the lock). */
static pthread_mutex_t seen_lock = PTHREAD_MUTEX_INITIALIZER;
static char seen[MAX_SEEN][64];
static int seen_attempt[MAX_SEEN];
static size_t nseen;

static struct db *db;		/* the runner's */
static struct arena arena;
static volatile sig_atomic_t stopping;

static void
tsend(void *ctx, struct queue_batch *b)
{
	(void)ctx;
	for (size_t i = 0; i < b->n; i++) {
		struct queue_job *j = &b->jobs[i];
		const char *tag = PQgetvalue(b->res, j->row, QT_COL_TAG);

		if (!queue_may_start(b, 1))
			break;
		pthread_mutex_lock(&seen_lock);
		if (nseen < MAX_SEEN) {
			snprintf(seen[nseen], sizeof(seen[nseen]), "%s", j->id);
			seen_attempt[nseen++] = j->attempt;
		}
		pthread_mutex_unlock(&seen_lock);
		j->outcome = QUEUE_SENT;
		if (strcmp(tag, "retry") == 0 || strcmp(tag, "ra") == 0) {
			j->outcome = QUEUE_RETRY;
			j->error = "the test said retry";
			j->retry_after = tag[0] == 'r' && tag[1] == 'a' ? 500 : 0;
		} else if (strcmp(tag, "fail") == 0) {
			j->outcome = QUEUE_FAILED;
			j->error = "the test said fail";
		} else if (strcmp(tag, "stop") == 0 && b->stop != NULL) {
			*b->stop = 1;
		}
	}
}

static const int schedule[] = { 100, 200 };

/* The test kind: batch rows a claim, lease seconds, max attempts, jitter. */
static void
tsender(struct queue_sender *s, int batch, int lease, int max_attempts, int jitter)
{
	memset(s, 0, sizeof(*s));
	s->name = "test";
	s->claim = &stmts[QT_CLAIM];
	s->sent = &stmts[QT_SENT];
	s->retry = &stmts[QT_RETRY];
	s->fail = &stmts[QT_FAIL];
	s->release = &stmts[QT_RELEASE];
	s->schedule = schedule;
	s->nschedule = sizeof(schedule) / sizeof(schedule[0]);
	s->max_attempts = max_attempts;
	s->jitter_pct = jitter;
	s->batch = batch;
	s->lease = lease;
	s->send = tsend;
}

/* Setup and inspection on the test's own connection (devacct's). */
#define sql_value(q, p0)	devacct_sql_value((q), (p0), NULL)
#define sql_int(q, p0)		devacct_sql_int((q), (p0), NULL)
#define sql_exec(q, p0)		devacct_sql_exec((q), (p0), NULL)

/* n rows tagged tag, ids <tag>-<i>. */
static void
rows(int n, const char *tag)
{
	sql_exec(harness_fmt("INSERT INTO queue_test (id, tag) SELECT '%s-' ||"
	    " lpad(g::text, 4, '0'), '%s' FROM generate_series(1, %d) g", tag, tag, n), NULL);
}

static void
stack(void)
{
	harness_fixture_start_default();
	ck_assert_int_eq(crypto_setup(), 0);
}

static void
test_setup(void)
{
	PGconn *pg = devacct_pg();
	PGresult *res;

	PQclear(PQexec(pg, "SET client_min_messages = warning"));
	res = PQexec(pg, schema);	/* several statements: the simple protocol */
	ck_assert_msg(PQresultStatus(res) == PGRES_COMMAND_OK, "%s", PQerrorMessage(pg));
	PQclear(res);
	db = db_new(harness_database_url());
	ck_assert_ptr_nonnull(db);
	arena_init(&arena);
	nseen = 0;
	stopping = 0;
}

static void
test_teardown(void)
{
	arena_free(&arena);
	db_free(db);
}

/* ------------------------------------------------------------------ */
/* Claims                                                              */

/* Runners are processes (a struct db_stmt tracks one connection per
 * process): each drains the queue and lists what it sent in shared memory. */
#define RUNNERS		4
#define ROWS		200
struct shared {
	char		 ids[RUNNERS][ROWS][16];
	int		 n[RUNNERS];
	int		 failed[RUNNERS];
};

static int
cmp_id(const void *a, const void *b)
{
	return strcmp(a, b);
}

/* Four runners at once, small batches: every row sent exactly once. */
START_TEST(runners_never_share_a_row)
{
	struct shared *sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
	    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	char (*all)[16] = calloc(RUNNERS * ROWS, sizeof(*all));
	pid_t pid[RUNNERS];
	size_t total = 0;

	ck_assert_ptr_ne(sh, MAP_FAILED);
	memset(sh, 0, sizeof(*sh));
	rows(ROWS, "ok");
	for (int i = 0; i < RUNNERS; i++) {
		ck_assert_int_ge(pid[i] = fork(), 0);
		if (pid[i] == 0) {
			struct db *d = db_new(harness_database_url());
			struct queue_sender s;
			struct arena a;
			int k;

			arena_init(&a);
			tsender(&s, 7, 60, 3, 0);
			nseen = 0;
			while ((k = queue_batch_run(d, &a, &s, NULL)) > 0)
				;
			sh->failed[i] = k < 0;
			for (size_t j = 0; j < nseen && j < ROWS; j++)
				snprintf(sh->ids[i][j], sizeof(sh->ids[i][j]), "%s", seen[j]);
			sh->n[i] = (int)nseen;
			arena_free(&a);
			db_free(d);
			_exit(0);
		}
	}
	for (int i = 0; i < RUNNERS; i++) {
		int st;

		ck_assert_int_eq(waitpid(pid[i], &st, 0), pid[i]);
		ck_assert_msg(WIFEXITED(st) && !sh->failed[i], "runner %d failed", i);
		for (int j = 0; j < sh->n[i]; j++)
			memcpy(all[total++], sh->ids[i][j], sizeof(all[0]));
	}
	ck_assert_uint_eq(total, ROWS);
	qsort(all, total, sizeof(all[0]), cmp_id);
	for (size_t i = 1; i < total; i++)
		ck_assert_msg(strcmp(all[i - 1], all[i]) != 0, "%s sent twice", all[i]);
	ck_assert_int_eq(sql_int("SELECT count(*) FROM queue_test WHERE status = 'sent'"
	    " AND attempts = 1 AND lease_until IS NULL AND sent_at IS NOT NULL", NULL), ROWS);
	free(all);
	munmap(sh, sizeof(*sh));
}
END_TEST

/* Rows another runner holds locked (its claim not yet committed) are
 * skipped, not waited for: the claim takes the others at once. */
START_TEST(claim_skips_locked_rows)
{
	static const char *const p[2] = { "5", "60" };
	struct queue_sender s;
	PGresult *held;

	rows(10, "ok");
	/* the other runner: the test's own connection, inside a transaction */
	sql_exec("BEGIN", NULL);
	held = PQexecParams(devacct_pg(), stmts[QT_CLAIM].sql, 2, NULL, p, NULL, NULL, 0);
	ck_assert_msg(PQresultStatus(held) == PGRES_TUPLES_OK, "%s",
	    PQerrorMessage(devacct_pg()));
	ck_assert_int_eq(PQntuples(held), 5);
	/* a claim that waited for the lock would hit this instead */
	ck_assert_int_eq(db_ensure(db), 0);
	PQclear(PQexec(db_conn(db), "SET statement_timeout = 5000"));
	tsender(&s, 10, 60, 3, 0);
	ck_assert_int_eq(queue_batch_run(db, &arena, &s, NULL), 5);
	ck_assert_uint_eq(nseen, 5);
	for (size_t i = 0; i < nseen; i++)
		for (int k = 0; k < PQntuples(held); k++)
			ck_assert_str_ne(seen[i], PQgetvalue(held, k, QUEUE_COL_ID));
	PQclear(held);
	sql_exec("ROLLBACK", NULL);
	/* the rolled-back claim left its rows as they were */
	ck_assert_int_eq(sql_int("SELECT count(*) FROM queue_test WHERE status = 'pending'"
	    " AND attempts = 0 AND lease_until IS NULL", NULL), 5);
}
END_TEST

/* A runner that claimed and died: its rows wait out the lease, then the
 * next claim takes them (attempt 2), and the dead claim's late record
 * changes nothing. */
START_TEST(expired_lease_is_claimed_again)
{
	static const char *const p[2] = { "1", "1" };
	static const char *const late[2] = { "ok-0001", "1" };
	struct queue_sender s;

	rows(1, "ok");
	ck_assert_ptr_nonnull(db_exec(db, &arena, &stmts[QT_CLAIM], 2, p));
	tsender(&s, 10, 60, 3, 0);
	ck_assert_int_eq(queue_batch_run(db, &arena, &s, NULL), 0);
	harness_sleep_ms(1500);
	ck_assert_int_eq(queue_batch_run(db, &arena, &s, NULL), 1);
	ck_assert_uint_eq(nseen, 1);
	ck_assert_int_eq(seen_attempt[0], 2);
	ck_assert_int_eq(db_exec_count(db, &arena, &stmts[QT_SENT], 2, late), 0);
	ck_assert_int_eq(sql_int("SELECT count(*) FROM queue_test WHERE status = 'sent'"
	    " AND attempts = 2", NULL), 1);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Outcomes                                                            */

START_TEST(backoff_follows_the_schedule)
{
	struct queue_sender s;

	tsender(&s, 1, 60, 4, 0);
	ck_assert_int_eq(queue_backoff(&s, 1), 100);
	ck_assert_int_eq(queue_backoff(&s, 2), 200);
	ck_assert_int_eq(queue_backoff(&s, 3), 200);	/* the last step repeats */
	ck_assert_int_eq(queue_backoff(&s, 4), -1);	/* that was the last attempt */
}
END_TEST

/*
 * n rows tagged tag, one batch that retries them all: each is pending
 * after attempt 1, unleased, with the sender's error, and due again in
 * (lo, hi] seconds. Returns how many different whole-second delays there
 * are.
 */
static long long
retried(const char *tag, int n, double lo, double hi)
{
	struct queue_sender s;
	PGresult *res;

	rows(n, tag);
	tsender(&s, n, 60, 3, 10);
	ck_assert_int_eq(queue_batch_run(db, &arena, &s, NULL), n);
	res = PQexec(devacct_pg(), "SELECT extract(epoch FROM next_attempt_at - now())::float8,"
	    " status, attempts, lease_until IS NULL, last_error FROM queue_test");
	ck_assert_int_eq(PQresultStatus(res), PGRES_TUPLES_OK);
	ck_assert_int_eq(PQntuples(res), n);
	for (int i = 0; i < PQntuples(res); i++) {
		double d = atof(PQgetvalue(res, i, 0));

		ck_assert_msg(d > lo && d <= hi, "retry in %.3f s, want %.0f..%.0f", d, lo, hi);
		ck_assert_str_eq(PQgetvalue(res, i, 1), "pending");
		ck_assert_str_eq(PQgetvalue(res, i, 2), "1");
		ck_assert_str_eq(PQgetvalue(res, i, 3), "t");
		ck_assert_str_eq(PQgetvalue(res, i, 4), "the test said retry");
	}
	PQclear(res);
	return sql_int("SELECT count(DISTINCT round(extract(epoch FROM"
	    " next_attempt_at - now()))) FROM queue_test", NULL);
}

/* 100 s ± 10%: every retry lands in [90, 110] s (less the few ms since),
 * and they differ (whole seconds: 21 possible values). */
START_TEST(retry_delay_within_jitter_bounds)
{
	ck_assert_int_gt(retried("retry", 40, 89.0, 110.0), 1);
}
END_TEST

/* Retry-After (500 s) longer than the schedule's delay wins. */
START_TEST(retry_after_is_honoured)
{
	ck_assert_int_eq(retried("ra", 3, 499.0, 500.0), 1);
}
END_TEST

/* A retry of the last attempt fails; a permanent failure fails at once; a
 * row claimed max_attempts times without an outcome is given up. */
START_TEST(max_attempts_fails)
{
	struct queue_sender s;
	char *v;

	rows(1, "retry");
	rows(1, "fail");
	tsender(&s, 10, 60, 2, 0);
	ck_assert_int_eq(queue_batch_run(db, &arena, &s, NULL), 2);
	v = sql_value("SELECT status || ' ' || attempts FROM queue_test WHERE id = 'fail-0001'",
	    NULL);
	ck_assert_str_eq(v, "failed 1");
	free(v);
	v = sql_value("SELECT status || ' ' || attempts FROM queue_test WHERE id = 'retry-0001'",
	    NULL);
	ck_assert_str_eq(v, "pending 1");
	free(v);
	sql_exec("UPDATE queue_test SET next_attempt_at = now()", NULL);
	ck_assert_int_eq(queue_batch_run(db, &arena, &s, NULL), 1);
	v = sql_value("SELECT status || ' ' || attempts || ' ' || last_error FROM queue_test"
	    " WHERE id = 'retry-0001'", NULL);
	ck_assert_str_eq(v, "failed 2 the test said retry");
	free(v);

	/* two claims that never recorded (runners killed mid-send) */
	rows(1, "ok");
	sql_exec("UPDATE queue_test SET attempts = 2 WHERE id = 'ok-0001'", NULL);
	nseen = 0;
	ck_assert_int_eq(queue_batch_run(db, &arena, &s, NULL), 1);
	ck_assert_uint_eq(nseen, 0);	/* not sent again */
	v = sql_value("SELECT status || ' ' || last_error FROM queue_test WHERE id = 'ok-0001'",
	    NULL);
	ck_assert_str_eq(v, "failed gave up: 2 claims without an outcome");
	free(v);
}
END_TEST

/* Stopping mid-batch: the job in flight is recorded, the rest go back
 * untried (attempt undone, lease cleared). */
START_TEST(stop_releases_unstarted_jobs)
{
	struct queue_sender s;

	rows(5, "stop");
	tsender(&s, 5, 60, 3, 0);
	ck_assert_int_eq(queue_batch_run(db, &arena, &s, &stopping), 5);
	ck_assert_uint_eq(nseen, 1);
	ck_assert_int_eq(sql_int("SELECT count(*) FROM queue_test WHERE status = 'sent'", NULL), 1);
	ck_assert_int_eq(sql_int("SELECT count(*) FROM queue_test WHERE status = 'pending'"
	    " AND attempts = 0 AND lease_until IS NULL", NULL), 4);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Waking                                                              */

struct loop {
	struct queue_sender s;
	struct queue_opts o;
	int		 rc;
};

static void *
run_loop(void *arg)
{
	struct loop *l = arg;
	struct queue_sender *senders[1] = { &l->s };
	struct db *d = db_new(harness_database_url());

	l->rc = queue_run(d, senders, 1, &l->o);
	db_free(d);
	return NULL;
}

/* Milliseconds until row id is sent, or -1 after wait_ms. */
static long long
sent_within(const char *id, int wait_ms)
{
	long long t0 = harness_now_ms();

	while (harness_now_ms() - t0 < wait_ms) {
		if (sql_int("SELECT count(*) FROM queue_test WHERE id = $1 AND status = 'sent'",
		    id) == 1)
			return harness_now_ms() - t0;
		harness_sleep_ms(20);
	}
	return -1;
}

/*
 * A runner asleep with a one-minute poll: a row inserted now is sent within
 * seconds only because its trigger's NOTIFY woke it. Without the channel
 * the same row waits for the poll.
 */
static void
wake(const char *channel, long long *first, long long *second)
{
	struct loop l;
	pthread_t t;

	memset(&l, 0, sizeof(l));
	tsender(&l.s, 10, 60, 3, 0);
	l.o.poll_ms = 60000;
	/* without a channel nothing wakes it: the budget ends the loop */
	l.o.max_seconds = channel != NULL ? 90 : 3;
	l.o.channel = channel;
	l.o.stop = &stopping;
	rows(1, "ok");
	ck_assert_int_eq(pthread_create(&t, NULL, run_loop, &l), 0);
	*first = sent_within("ok-0001", 10000);	/* the first claim */
	harness_sleep_ms(300);			/* now it sleeps */
	sql_exec("INSERT INTO queue_test (id, tag) VALUES ('wake-0001', 'ok')", NULL);
	*second = sent_within("wake-0001", channel != NULL ? 10000 : 1500);
	stopping = 1;
	sql_exec("SELECT pg_notify('" CHANNEL "', 'stop')", NULL);
	pthread_join(t, NULL);
	ck_assert_int_eq(l.rc, 0);
}

START_TEST(notify_wakes_the_runner)
{
	long long first, second;

	wake(CHANNEL, &first, &second);
	ck_assert_msg(first >= 0, "the first row was never sent");
	ck_assert_msg(second >= 0, "a notified row was not sent within 10 s (poll: 60 s)");
}
END_TEST

START_TEST(without_a_channel_the_poll_decides)
{
	long long first, second;

	wake(NULL, &first, &second);
	ck_assert_msg(first >= 0, "the first row was never sent");
	ck_assert_msg(second < 0, "sent after %lld ms with nothing to wake the runner", second);
}
END_TEST

static Suite *
queue_suite(void)
{
	Suite *s = suite_create("e2e_queue");
	TCase *tc = tcase_create("queue");

	tcase_add_unchecked_fixture(tc, stack, harness_fixture_stop);
	tcase_add_checked_fixture(tc, test_setup, test_teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, runners_never_share_a_row);
	tcase_add_test(tc, claim_skips_locked_rows);
	tcase_add_test(tc, expired_lease_is_claimed_again);
	tcase_add_test(tc, backoff_follows_the_schedule);
	tcase_add_test(tc, retry_delay_within_jitter_bounds);
	tcase_add_test(tc, retry_after_is_honoured);
	tcase_add_test(tc, max_attempts_fails);
	tcase_add_test(tc, stop_releases_unstarted_jobs);
	tcase_add_test(tc, notify_wakes_the_runner);
	tcase_add_test(tc, without_a_channel_the_poll_decides);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return harness_run_suite(queue_suite());
}
