/*
 * The kinds bds-jobs runs and their glue to the leased queue of
 * core/queue.c. See jobs.h.
 *
 * One claim takes one job (batch 1) and marks it running with the queue's
 * lease; the job's own lease (its kind's lease_s) then replaces it. The
 * kind's run() works inside ONE transaction; on JOBS_DONE the row is marked
 * done in that same transaction before it commits, so a job's effects and
 * its "done" are one commit: a runner killed mid-job, or one whose lease ran
 * out while another runner took the job over, commits nothing, and the job
 * runs again (exactly one committed run). RETRY and FAILED roll back and are
 * then recorded: retry after the schedule (jobs_retry_schedule) until the
 * kind's max_attempts, then dead with last_error.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sodium.h>

#include "core/arena.h"
#include "core/config.h"
#include "core/db.h"
#include "core/json.h"
#include "core/log.h"
#include "core/queue.h"
#include "core/req.h"
#include "jobs/connectors/connector.h"
#include "jobs/jobs.h"
#include "links/links.h"

#define JOBS_SCHEDULE_MAX	16
#define JOBS_CLAIM_LEASE	30	/* seconds, until the kind's lease applies */

static enum jobs_outcome test_run(struct req *, struct jobs_job *);

/*
 * Every kind bds-jobs runs: adding one is one line.
 *	name, run, max_attempts, lease_s
 */
static const struct jobs_kind kinds[] = {
	/* a link's retrieval: connector -> bills (links slice); user_many's
	 * 1,000 statements fit well inside the lease */
	{ "retrieval", jobs_retrieval_run, 5, 120, jobs_retrieval_failed },
	/* a link session's login and MFA (connect slice) */
	{ "connect", jobs_connect_run, 3, 60 },
	/* a link's bill reconciliation (issue 11 H3: lib/jobs/jobs_reconcile.c) */
	{ "reconcile", jobs_reconcile_run, 5, 60 },
	/* the runner's own tests (t/e2e/check_e2e_jobs): queued only by them */
	{ "test", test_run, 3, 5 },
};
#define NKINDS	(sizeof(kinds) / sizeof(kinds[0]))

/* Rows outside this claim's columns follow QUEUE_COL__MAX. */
enum jobs_col {
	JOBS_COL_CLIENT = QUEUE_COL__MAX,
	JOBS_COL_ENV,
	JOBS_COL_SUBJECT,
	JOBS_COL_PAYLOAD,
	JOBS_COL_REQUEST,	/* the request that queued it, or NULL */
	JOBS_COL_IDEM,		/* that request's Idempotency-Key */
	JOBS_COL__MAX
};

enum jobs_stmt {
	JOBS_CLAIM,
	JOBS_LEASE,
	JOBS_DONE_STMT,
	JOBS_RETRY_STMT,
	JOBS_DEAD,
	JOBS_RELEASE,
	JOBS_DEFER_STMT,
	JOBS_TEST_COUNT,
	JOBS__MAX
};

#define JOBS_OURS " WHERE id = $1 AND attempts = $2::int AND status = 'running'"
/* Back to pending, unless the same work is already pending again (queued
 * while this one ran): then that row does it and this one is done. */
#define JOBS_REQUEUE_STATUS							\
	" status = CASE WHEN EXISTS (SELECT 1 FROM jobs d WHERE d.kind = jobs.kind"	\
	"   AND d.subject_id = jobs.subject_id AND d.status = 'pending')"	\
	"   THEN 'done' ELSE 'pending' END"

static struct db_stmt stmts[JOBS__MAX] = {
	/* due pending rows, and running rows whose lease ended (their runner
	 * died): the claim is the only way a row becomes running. It passes
	 * over the jobs of a biller with $3 (biller_max_sessions) jobs
	 * running: those would only defer (sql/033_jobs_slot.sql). A connect
	 * job (someone waits on the link page) goes before queued refreshes. */
	[JOBS_CLAIM] = { "jobs_claim",
	    "WITH full_billers AS ("
	    " SELECT slot_key FROM jobs"
	    "  WHERE status = 'running' AND slot_key IS NOT NULL AND lease_until >= now()"
	    "  GROUP BY slot_key HAVING count(*) >= $3::int),"
	    " claimed AS ("
	    " UPDATE jobs SET status = 'running', updated_at = now(),"
	    "        lease_until = now() + make_interval(secs => $2::int),"
	    "        attempts = attempts + 1"
	    "  WHERE id IN (SELECT id FROM jobs"
	    "                WHERE ((status = 'pending' AND next_attempt_at <= now())"
	    "                    OR (status = 'running' AND lease_until < now()))"
	    "                  AND (slot_key IS NULL"
	    "                       OR slot_key NOT IN (SELECT slot_key FROM full_billers))"
	    "                ORDER BY kind <> 'connect', next_attempt_at LIMIT $1::int"
	    "                FOR UPDATE SKIP LOCKED)"
	    "  RETURNING id, attempts, kind, client_id, environment, subject_id,"
	    "            payload, next_attempt_at, request_id, idempotency_key)"
	    " SELECT id, attempts, kind, client_id, environment, subject_id, payload::text,"
	    "        request_id, idempotency_key"
	    "   FROM claimed ORDER BY next_attempt_at, id", 0 },
	[JOBS_LEASE] = { "jobs_lease",
	    "UPDATE jobs SET lease_until = now() + make_interval(secs => $3::int)"
	    JOBS_OURS, 0 },
	[JOBS_DONE_STMT] = { "jobs_done",
	    "UPDATE jobs SET status = 'done', lease_until = NULL, last_error = NULL,"
	    "       updated_at = now()" JOBS_OURS, 0 },
	[JOBS_RETRY_STMT] = { "jobs_retry",
	    "UPDATE jobs SET" JOBS_REQUEUE_STATUS ","
	    "       next_attempt_at = now() + make_interval(secs => $3::int),"
	    "       lease_until = NULL, last_error = $4, updated_at = now()" JOBS_OURS, 0 },
	[JOBS_DEAD] = { "jobs_dead",
	    "UPDATE jobs SET status = 'dead', lease_until = NULL, last_error = $3,"
	    "       updated_at = now()" JOBS_OURS, 0 },
	[JOBS_RELEASE] = { "jobs_release",
	    "UPDATE jobs SET" JOBS_REQUEUE_STATUS ", lease_until = NULL,"
	    "       attempts = attempts - 1, updated_at = now()" JOBS_OURS, 0 },
	/* DEFER: back to pending without counting the attempt, due in $3 ms */
	[JOBS_DEFER_STMT] = { "jobs_defer",
	    "UPDATE jobs SET" JOBS_REQUEUE_STATUS ", lease_until = NULL,"
	    "       next_attempt_at = now() + make_interval(secs => $3::int / 1000.0),"
	    "       attempts = attempts - 1, updated_at = now()" JOBS_OURS, 0 },
	/* the test kind's committed side effect: payload.runs + 1, and the
	 * worker that ran it (payload.ran_by, a pid) */
	[JOBS_TEST_COUNT] = { "jobs_test_count",
	    "UPDATE jobs SET payload = payload || jsonb_build_object("
	    "       'runs', COALESCE((payload->>'runs')::int, 0) + 1,"
	    "       'ran_by', $2::int)"
	    " WHERE id = $1", 0 },
};

const struct db_stmt_set jobs_stmt_set = { "jobs", stmts, JOBS__MAX };

/* The sender's state: the retry schedule parsed from the config. */
struct jobs_ctx {
	const struct config *cfg;
	int		 schedule[JOBS_SCHEDULE_MAX];
	char		 max_sessions[16];	/* the claim's $3 */
};

/* What send left for record_batch on each job it ran. */
struct jobs_ran {
	int		 in_tx;		/* JOBS_DONE: the transaction is still open */
	int		 defer_ms;	/* JOBS_DEFER: due again after this long */
};

const struct jobs_kind *
jobs_kind_find(const char *name)
{
	size_t i;

	for (i = 0; i < NKINDS; i++)
		if (strcmp(kinds[i].name, name) == 0)
			return &kinds[i];
	return NULL;
}

/*
 * The test kind: payload {"sleep_ms": N, "outcome": "done"|"retry"|"failed",
 * "fail_times": N (retry until attempt N+1)}. Counts its committed runs in
 * payload.runs, so a test sees a run that was rolled back not counted.
 */
static enum jobs_outcome
test_run(struct req *r, struct jobs_job *job)
{
	struct json_object *v;
	const char *outcome = "done";
	char pid[16];
	const char *p[2] = { job->id, pid };
	int sleep_ms = 0, fail_times = 0;

	if (json_object_object_get_ex(job->payload, "sleep_ms", &v))
		sleep_ms = json_object_get_int(v);
	if (json_object_object_get_ex(job->payload, "outcome", &v))
		outcome = json_object_get_string(v);
	if (json_object_object_get_ex(job->payload, "fail_times", &v))
		fail_times = json_object_get_int(v);
	if (sleep_ms > 0 && sleep_ms <= 600000) {
		struct timespec ts = { sleep_ms / 1000, (long)(sleep_ms % 1000) * 1000000L };

		while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
			;
	}
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	if (db_exec(r->db, r->arena, &stmts[JOBS_TEST_COUNT], 2, p) == NULL) {
		job->error = "database failed";
		return JOBS_RETRY;
	}
	if (job->attempt <= fail_times || strcmp(outcome, "retry") == 0) {
		job->error = arena_printf(r->arena, "test failure on attempt %d",
		    job->attempt);
		return JOBS_RETRY;
	}
	if (strcmp(outcome, "failed") == 0) {
		job->error = "test failure, permanent";
		return JOBS_FAILED;
	}
	log_msg("info", "jobs: test job %s ran (attempt %d)", job->id, job->attempt);
	return JOBS_DONE;
}

int
jobs_biller_slot(struct req *r, struct jobs_job *job, const struct connector *c,
    const char *biller_id)
{
	int rc;

	if (strcmp(c->name, "sandbox") == 0)
		return 1;
	if ((rc = links_biller_slot(r, biller_id)) < 0) {
		job->error = "database failure";
		return -1;
	}
	if (rc == 0) {
		/* spread the retries: the slots free up at random moments */
		job->defer_ms = 100 + (int)randombytes_uniform(400);
		job->error = "biller session slots busy";
	}
	return rc;
}

/* The kind's failed() hook in a transaction of its own (its errors are
 * logged: the job's own outcome is recorded whatever happens here). */
static void
record_failure(const struct jobs_kind *k, struct queue_batch *b, struct req *r,
    struct jobs_job *job, int dead)
{
	if (db_begin(b->db) != 0 || k->failed(r, job, dead) != 0 || db_commit(b->db) != 0) {
		db_rollback(b->db);
		log_msg("warn", "jobs: %s job %s: its failure was not recorded on its subject",
		    job->kind, job->id);
	}
}

/* Run one claimed job: its lease, the transaction, the kind. */
static void
run_one(struct jobs_ctx *c, struct queue_batch *b, struct queue_job *qj)
{
	const struct jobs_kind *k = jobs_kind_find(qj->kind);
	struct jobs_ran *ran = arena_alloc(b->arena, sizeof(*ran));
	char attempt[16], lease[16];
	const char *p[3] = { qj->id, attempt, lease };
	struct json_object *payload;
	enum jobs_outcome out;
	struct jobs_job job;
	const char *text, *why;
	struct req r;

	memset(ran, 0, sizeof(*ran));
	qj->priv = ran;
	if (k == NULL) {
		/* a kind of a newer runner: try again later, dead at the end */
		qj->outcome = QUEUE_RETRY;
		qj->error = "no such kind in this runner";
		return;
	}
	if (qj->attempt > k->max_attempts) {
		/* every claim so far ended without an outcome (killed mid-job?) */
		qj->outcome = QUEUE_FAILED;
		qj->error = arena_printf(b->arena, "gave up: %d claims without an outcome",
		    qj->attempt - 1);
		return;
	}
	snprintf(attempt, sizeof(attempt), "%d", qj->attempt);
	snprintf(lease, sizeof(lease), "%d", k->lease_s);
	if (db_exec_count(b->db, b->arena, &stmts[JOBS_LEASE], 3, p) != 1) {
		/* lost already, or the database failed: leave it released */
		qj->priv = NULL;
		return;
	}
	text = PQgetvalue(b->res, qj->row, JOBS_COL_PAYLOAD);
	if ((payload = json_parse(b->arena, text, strlen(text), &why)) == NULL ||
	    !json_object_is_type(payload, json_type_object))
		payload = json_parse(b->arena, "{}", 2, &why);
	memset(&job, 0, sizeof(job));
	job.id = qj->id;
	job.kind = qj->kind;
#define COL(i) (PQgetisnull(b->res, qj->row, (i)) ? NULL : PQgetvalue(b->res, qj->row, (i)))
	job.client_id = COL(JOBS_COL_CLIENT);
	job.environment = COL(JOBS_COL_ENV);
	job.subject_id = COL(JOBS_COL_SUBJECT);
	job.payload = payload;
	job.attempt = qj->attempt;

	/* Its events name the request that queued it, else the job itself. */
	req_init(&r, c->cfg, b->db, b->arena,
	    COL(JOBS_COL_REQUEST) != NULL ? COL(JOBS_COL_REQUEST) : qj->id);
	r.http.idempotency_key = COL(JOBS_COL_IDEM);
#undef COL
	r.client_id = job.client_id;
	r.env = job.environment;

	if (db_begin(b->db) != 0) {
		qj->outcome = QUEUE_RETRY;
		qj->error = "database failed";
		return;
	}
	out = k->run(&r, &job);
	switch (out) {
	case JOBS_DONE:
		ran->in_tx = 1;		/* record_batch marks it done, then commits */
		qj->outcome = QUEUE_SENT;
		return;
	case JOBS_DEFER:
		db_rollback(b->db);
		ran->defer_ms = job.defer_ms > 0 ? job.defer_ms : 1000;
		qj->outcome = QUEUE_RELEASED;	/* not an attempt: no backoff */
		qj->error = job.error;
		return;
	case JOBS_FAILED:
		db_rollback(b->db);
		qj->outcome = QUEUE_FAILED;
		break;
	default:
		db_rollback(b->db);
		/* the kind's last attempt: dead (resolve() keeps FAILED) */
		qj->outcome = qj->attempt >= k->max_attempts ? QUEUE_FAILED : QUEUE_RETRY;
		qj->retry_after = job.retry_after;
		break;
	}
	qj->error = job.error != NULL ? job.error : "failed without a reason";
	if (k->failed != NULL)
		record_failure(k, b, &r, &job, qj->outcome == QUEUE_FAILED);
}

static void
jobs_send(void *ctx, struct queue_batch *b)
{
	struct jobs_ctx *c = ctx;
	size_t i;

	for (i = 0; i < b->n; i++) {
		if (!queue_may_start(b, 1))
			break;
		run_one(c, b, &b->jobs[i]);
	}
}

/* Record each job; a done job's row is updated in its own transaction,
 * which then commits (or rolls back when the claim was lost). */
static int
jobs_record_batch(void *ctx, struct queue_batch *b)
{
	size_t i;
	int rc = 0;

	(void)ctx;
	for (i = 0; i < b->n; i++) {
		struct queue_job *j = &b->jobs[i];
		struct jobs_ran *ran = j->priv;
		const char *error = j->error != NULL ? j->error : "unknown error";
		char attempt[16], delay[24];
		const char *p[4] = { j->id, attempt, NULL, NULL };
		struct db_stmt *st;
		long long n;
		int np = 2;

		snprintf(attempt, sizeof(attempt), "%d", j->attempt);
		if (ran != NULL && ran->in_tx) {
			n = db_exec_count(b->db, b->arena, &stmts[JOBS_DONE_STMT], 2, p);
			if (n == 1 && db_commit(b->db) == 0) {
				j->recorded = 1;
			} else {
				/* lease lost (another runner has it) or the database
				 * failed: nothing of this run is kept */
				db_rollback(b->db);
				j->recorded = 0;
				if (n == -1)
					rc = -1;
			}
			continue;
		}
		if (ran != NULL && ran->defer_ms > 0) {
			snprintf(delay, sizeof(delay), "%d", ran->defer_ms);
			p[2] = delay;
			j->recorded = (n = db_exec_count(b->db, b->arena, &stmts[JOBS_DEFER_STMT],
			    3, p)) == 1;
			if (n == -1)
				rc = -1;
			continue;
		}
		switch (j->outcome) {
		case QUEUE_RETRY:
			snprintf(delay, sizeof(delay), "%lld", (j->delay_ms + 999) / 1000);
			p[2] = delay;
			p[3] = error;
			np = 4;
			st = &stmts[JOBS_RETRY_STMT];
			break;
		case QUEUE_FAILED:
			p[2] = error;
			np = 3;
			st = &stmts[JOBS_DEAD];
			break;
		case QUEUE_SENT:	/* not without its transaction */
		default:
			j->outcome = QUEUE_RELEASED;
			st = &stmts[JOBS_RELEASE];
			break;
		}
		if ((n = db_exec_count(b->db, b->arena, st, np, p)) == -1)
			rc = -1;
		j->recorded = n == 1;
	}
	return rc;
}

/* "5,30,120": 1..max positive numbers of seconds; how many, or -1. */
static int
schedule_parse(const char *text, int *out, size_t max)
{
	const char *s = text;
	size_t n = 0;

	while (*s != '\0') {
		char *end;
		long v;

		errno = 0;
		v = strtol(s, &end, 10);
		if (errno != 0 || end == s || v < 0 || v > 86400 * 7 || n == max)
			return -1;
		out[n++] = (int)v;
		s = end;
		if (*s == ',')
			s++;
		else if (*s != '\0')
			return -1;
	}
	return n == 0 ? -1 : (int)n;
}

int
jobs_sender_init(struct queue_sender *s, const struct config *cfg, char *err,
    size_t errlen)
{
	struct jobs_ctx *c;
	size_t i;
	int n;

	memset(s, 0, sizeof(*s));
	if ((c = calloc(1, sizeof(*c))) == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if ((n = schedule_parse(cfg->jobs_retry_schedule, c->schedule,
	    JOBS_SCHEDULE_MAX)) < 0) {
		snprintf(err, errlen, "jobs_retry_schedule: 1 to %d comma-separated"
		    " numbers of seconds", JOBS_SCHEDULE_MAX);
		free(c);
		return -1;
	}
	c->cfg = cfg;
	s->name = "jobs";
	s->claim = &stmts[JOBS_CLAIM];
	s->sent = &stmts[JOBS_DONE_STMT];
	s->retry = &stmts[JOBS_RETRY_STMT];
	s->fail = &stmts[JOBS_DEAD];
	s->release = &stmts[JOBS_RELEASE];
	s->schedule = c->schedule;
	s->nschedule = (size_t)n;
	/* per kind in run_one; the engine's bound is the largest */
	s->max_attempts = 1;
	for (i = 0; i < NKINDS; i++)
		if (kinds[i].max_attempts > s->max_attempts)
			s->max_attempts = kinds[i].max_attempts;
	s->jitter_pct = 10;
	s->batch = 1;		/* one job per claim: N workers share the queue */
	s->lease = JOBS_CLAIM_LEASE;
	snprintf(c->max_sessions, sizeof(c->max_sessions), "%d", cfg->biller_max_sessions);
	s->claim_arg = c->max_sessions;
	s->send = jobs_send;
	s->record_batch = jobs_record_batch;
	s->ctx = c;
	return 0;
}

void
jobs_sender_free(struct queue_sender *s)
{
	free(s->ctx);
	s->ctx = NULL;
}
