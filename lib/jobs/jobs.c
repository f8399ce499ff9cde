/*
 * The kinds bds-jobs runs and their glue to the jobs table. See jobs.h;
 * the loop that drives them is jobs_loop.c.
 *
 * A claim leases due jobs (status running, attempts + 1, the claim's
 * lease); jobs_begin then gives each its kind's lease. A kind's fetch runs
 * outside any transaction; its apply runs in ONE transaction, and on
 * JOBS_DONE the row is marked done in that same transaction before it
 * commits, so a job's effects and its "done" are one commit: a runner
 * killed mid-job, or one whose lease ran out while another runner took the
 * job over, commits nothing, and the job runs again (exactly one committed
 * run). RETRY and FAILED roll back and are then recorded: retry after the
 * schedule (jobs_retry_schedule) until the kind's max_attempts, then dead
 * with last_error.
 *
 * The claim is where the runner's fairness lives, since no transaction
 * holds a biller's slot any more: claims are serialised (an advisory lock
 * for the claim's own short transaction), and one claims a job only when
 * no other run of the same kind and subject holds a live lease, its biller
 * has fewer than biller_max_sessions jobs running and its client fewer
 * than client_max_sessions biller jobs running. A runner whose
 * conversations are all taken claims only jobs that talk to no biller
 * (slot_key NULL: the sandbox's, reconciliation), so they never queue
 * behind a slow portal.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/arena.h"
#include "core/config.h"
#include "core/db.h"
#include "core/json.h"
#include "core/log.h"
#include "core/module.h"
#include "core/queue.h"
#include "core/req.h"
#include "jobs/jobs.h"
#include "jobs/jobs_conv.h"

#define JOBS_SCHEDULE_MAX	16
#define JOBS_CLAIM_LEASE	30	/* seconds, until the kind's lease applies */

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
	JOBS_CLAIM_LOCK,
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
/* A biller job running under a live lease: it holds one of its biller's
 * and its client's sessions. */
#define JOBS_LIVE_SLOT								\
	" status = 'running' AND slot_key IS NOT NULL AND lease_until >= now()"

static struct db_stmt stmts[JOBS__MAX] = {
	/* held for the claim's own transaction: claims one at a time, so the
	 * caps below count every job claimed before */
	[JOBS_CLAIM_LOCK] = { "jobs_claim_lock",
	    "SELECT pg_advisory_xact_lock(hashtext('bds jobs claim'))", 0 },
	/*
	 * $1 how many, $2 the claim's lease (s), $3 biller_max_sessions, $4
	 * also biller jobs (else only slot_key NULL), $5 client_max_sessions.
	 * Due pending rows, and running rows whose lease ended (their runner
	 * died): the claim is the only way a row becomes running. A job is
	 * passed over while another run of its kind and subject holds a live
	 * lease, and a biller job while its biller or its client has its
	 * sessions running (counting the jobs this claim takes before it, by
	 * rank). A connect job (someone waits on the link page) goes before
	 * queued refreshes.
	 */
	[JOBS_CLAIM] = { "jobs_claim",
	    "WITH due AS ("
	    " SELECT j.id, j.kind, j.next_attempt_at, j.slot_key,"
	    "        row_number() OVER (PARTITION BY j.slot_key"
	    "          ORDER BY j.kind <> 'connect', j.next_attempt_at, j.id) AS nb,"
	    "        row_number() OVER (PARTITION BY j.slot_key IS NULL, j.client_id"
	    "          ORDER BY j.kind <> 'connect', j.next_attempt_at, j.id) AS nc,"
	    "        (SELECT count(*) FROM jobs l WHERE" JOBS_LIVE_SLOT
	    "          AND l.slot_key = j.slot_key) AS lb,"
	    "        (SELECT count(*) FROM jobs l WHERE" JOBS_LIVE_SLOT
	    "          AND l.client_id = j.client_id) AS lc"
	    "   FROM jobs j"
	    "  WHERE ((j.status = 'pending' AND j.next_attempt_at <= now())"
	    "      OR (j.status = 'running' AND j.lease_until < now()))"
	    "    AND ($4::bool OR j.slot_key IS NULL)"
	    "    AND NOT EXISTS (SELECT 1 FROM jobs o"
	    "                     WHERE o.status = 'running' AND o.lease_until >= now()"
	    "                       AND o.kind = j.kind AND o.subject_id = j.subject_id"
	    "                       AND o.id <> j.id)),"
	    " pick AS ("
	    " SELECT id FROM due"
	    "  WHERE slot_key IS NULL OR (lb + nb <= $3::int AND lc + nc <= $5::int)"
	    "  ORDER BY kind <> 'connect', next_attempt_at LIMIT $1::int),"
	    " claimed AS ("
	    " UPDATE jobs SET status = 'running', updated_at = now(),"
	    "        lease_until = now() + make_interval(secs => $2::int),"
	    "        attempts = attempts + 1"
	    "  WHERE id IN (SELECT id FROM jobs WHERE id IN (SELECT id FROM pick)"
	    "                FOR UPDATE SKIP LOCKED)"
	    "  RETURNING id, attempts, kind, client_id, environment, subject_id,"
	    "            payload, next_attempt_at, request_id, idempotency_key)"
	    " SELECT id, attempts, kind, client_id, environment, subject_id, payload::text,"
	    "        request_id, idempotency_key"
	    "   FROM claimed ORDER BY kind <> 'connect', next_attempt_at, id", 0 },
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

/* The sender's state: the retry schedule parsed from the config, and the
 * claim's caps as parameters. */
struct jobs_ctx {
	const struct config *cfg;
	int		 schedule[JOBS_SCHEDULE_MAX];
	char		 biller_max[16], client_max[16];
};

/* What a run left for its record. */
struct jobs_ran {
	int		 in_tx;		/* JOBS_DONE: the apply transaction is still open */
	int		 defer_ms;	/* JOBS_DEFER: due again after this long */
};

/*
 * The test kind: payload {"sleep_ms": N, "outcome": "done"|"retry"|"failed",
 * "fail_times": N (retry until attempt N+1)}. It waits sleep_ms in its
 * fetch (a conversation's pause: the runner goes on meanwhile) and counts
 * its committed runs in payload.runs in its apply, so a test sees a run that
 * was rolled back not counted.
 */
enum jobs_outcome
jobs_test_fetch(struct req *r, struct jobs_job *job)
{
	struct json_object *v;
	int sleep_ms = 0;

	(void)r;
	if (json_object_object_get_ex(job->payload, "sleep_ms", &v))
		sleep_ms = json_object_get_int(v);
	if (sleep_ms > 0 && sleep_ms <= 600000)
		conv_sleep(sleep_ms);
	return JOBS_DONE;
}

enum jobs_outcome
jobs_test_apply(struct req *r, struct jobs_job *job)
{
	struct json_object *v;
	const char *outcome = "done";
	char pid[16];
	const char *p[2] = { job->id, pid };
	int fail_times = 0;

	if (json_object_object_get_ex(job->payload, "outcome", &v))
		outcome = json_object_get_string(v);
	if (json_object_object_get_ex(job->payload, "fail_times", &v))
		fail_times = json_object_get_int(v);
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

PGresult *
jobs_claim(const struct queue_sender *s, struct db *d, struct arena *a, int n, int network)
{
	const struct jobs_ctx *c = s->ctx;
	char limit[16], lease[16];
	const char *p[5] = { limit, lease, c->biller_max, network ? "true" : "false",
		c->client_max };
	PGresult *res;

	snprintf(limit, sizeof(limit), "%d", n);
	snprintf(lease, sizeof(lease), "%d", s->lease);
	if (db_begin(d) != 0)
		return NULL;
	if (db_exec(d, a, &stmts[JOBS_CLAIM_LOCK], 0, NULL) == NULL ||
	    (res = db_exec(d, a, &stmts[JOBS_CLAIM], 5, p)) == NULL || db_commit(d) != 0) {
		log_msg("error", "jobs: claim failed: %s", db_errmsg(d));
		db_rollback(d);
		return NULL;
	}
	return res;
}

int
jobs_begin(const struct queue_sender *s, struct db *d, struct arena *a, PGresult *res,
    int i, struct queue_job *qj, struct jobs_job *job, struct req *r)
{
	const struct jobs_kind *k;
	struct jobs_ran *ran = arena_alloc(a, sizeof(*ran));
	char attempt[16], lease[16];
	const char *p[3] = { NULL, attempt, lease }, *text, *why;
	struct json_object *payload;

#define COL(c) (PQgetisnull(res, i, (c)) ? NULL : arena_strdup(a, PQgetvalue(res, i, (c))))
	memset(qj, 0, sizeof(*qj));
	memset(ran, 0, sizeof(*ran));
	qj->id = COL(QUEUE_COL_ID);
	qj->attempt = atoi(PQgetvalue(res, i, QUEUE_COL_ATTEMPTS));
	qj->kind = COL(QUEUE_COL_KIND);
	qj->outcome = QUEUE_RELEASED;
	qj->priv = ran;
	if ((k = module_job_kind(qj->kind)) == NULL) {
		/* a kind of a newer runner: try again later, dead at the end */
		qj->outcome = QUEUE_RETRY;
		qj->error = "no such kind in this runner";
		return 0;
	}
	if (qj->attempt > k->max_attempts) {
		/* every claim so far ended without an outcome (killed mid-job?) */
		qj->outcome = QUEUE_FAILED;
		qj->error = arena_printf(a, "gave up: %d claims without an outcome",
		    qj->attempt - 1);
		return 0;
	}
	p[0] = qj->id;
	snprintf(attempt, sizeof(attempt), "%d", qj->attempt);
	snprintf(lease, sizeof(lease), "%d", k->lease_s);
	if (db_exec_count(d, a, &stmts[JOBS_LEASE], 3, p) != 1) {
		/* lost already, or the database failed: leave it released */
		qj->priv = NULL;
		return -1;
	}
	text = PQgetvalue(res, i, JOBS_COL_PAYLOAD);
	if ((payload = json_parse(a, text, strlen(text), &why)) == NULL ||
	    !json_object_is_type(payload, json_type_object))
		payload = json_parse(a, "{}", 2, &why);
	memset(job, 0, sizeof(*job));
	job->id = qj->id;
	job->kind = qj->kind;
	job->client_id = COL(JOBS_COL_CLIENT);
	job->environment = COL(JOBS_COL_ENV);
	job->subject_id = COL(JOBS_COL_SUBJECT);
	job->payload = payload;
	job->attempt = qj->attempt;

	/* Its events name the request that queued it, else the job itself. */
	req_init(r, ((const struct jobs_ctx *)s->ctx)->cfg, d, a,
	    PQgetisnull(res, i, JOBS_COL_REQUEST) ? qj->id : COL(JOBS_COL_REQUEST));
	r->http.idempotency_key = COL(JOBS_COL_IDEM);
#undef COL
	r->client_id = job->client_id;
	r->env = job->environment;
	return 1;
}

/* The kind's failed() hook in a transaction of its own (its errors are
 * logged: the job's own outcome is recorded whatever happens here). */
static void
record_failure(const struct jobs_kind *k, struct db *d, struct req *r, struct jobs_job *job,
    int dead)
{
	if (db_begin(d) != 0 || k->failed(r, job, dead) != 0 || db_commit(d) != 0) {
		db_rollback(d);
		log_msg("warn", "jobs: %s job %s: its failure was not recorded on its subject",
		    job->kind, job->id);
	}
}

/* Record j on its row; a done job's row is updated in its apply
 * transaction, which then commits (or rolls back when the claim was lost). */
static void
record(struct db *d, struct arena *a, struct queue_job *j)
{
	struct jobs_ran *ran = j->priv;
	const char *error = j->error != NULL ? j->error : "unknown error";
	char attempt[16], delay[24];
	const char *p[4] = { j->id, attempt, NULL, NULL };
	struct db_stmt *st;
	long long n;
	int np = 2;

	snprintf(attempt, sizeof(attempt), "%d", j->attempt);
	if (ran != NULL && ran->in_tx) {
		n = db_exec_count(d, a, &stmts[JOBS_DONE_STMT], 2, p);
		if (n == 1 && db_commit(d) == 0) {
			j->recorded = 1;
		} else {
			/* lease lost (another runner has it) or the database
			 * failed: nothing of this run is kept */
			db_rollback(d);
			j->recorded = 0;
		}
		return;
	}
	if (ran != NULL && ran->defer_ms > 0) {
		snprintf(delay, sizeof(delay), "%d", ran->defer_ms);
		p[2] = delay;
		j->recorded = db_exec_count(d, a, &stmts[JOBS_DEFER_STMT], 3, p) == 1;
		return;
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
	j->recorded = db_exec_count(d, a, st, np, p) == 1;
}

void
jobs_finish(const struct queue_sender *s, struct db *d, struct arena *a,
    struct queue_job *qj, struct jobs_job *job, struct req *r, enum jobs_outcome out)
{
	const struct jobs_kind *k = qj->priv != NULL ? module_job_kind(qj->kind) : NULL;
	struct jobs_ran *ran = qj->priv;

	if (k != NULL && out == JOBS_DONE) {
		if (db_begin(d) != 0) {
			out = JOBS_RETRY;
			job->error = "database failed";
		} else if ((out = k->apply(r, job)) != JOBS_DONE) {
			db_rollback(d);
		}
	}
	if (k != NULL) {
		switch (out) {
		case JOBS_DONE:
			ran->in_tx = 1;		/* record() marks it done, then commits */
			qj->outcome = QUEUE_SENT;
			break;
		case JOBS_DEFER:
			ran->defer_ms = job->defer_ms > 0 ? job->defer_ms : 1000;
			qj->outcome = QUEUE_RELEASED;	/* not an attempt: no backoff */
			qj->error = job->error;
			break;
		case JOBS_FAILED:
			qj->outcome = QUEUE_FAILED;
			break;
		default:
			/* the kind's last attempt: dead (resolve keeps FAILED) */
			qj->outcome = qj->attempt >= k->max_attempts ? QUEUE_FAILED : QUEUE_RETRY;
			qj->retry_after = job->retry_after;
			break;
		}
		if (out == JOBS_FAILED || out == JOBS_RETRY) {
			qj->error = job->error != NULL ? job->error : "failed without a reason";
			if (k->failed != NULL)
				record_failure(k, d, r, job, qj->outcome == QUEUE_FAILED);
		}
	}
	queue_resolve(s, qj);
	record(d, a, qj);
	queue_log_outcome(s, qj);
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
	int n;

	memset(s, 0, sizeof(*s));
	if ((c = calloc(1, sizeof(*c))) == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if ((n = schedule_parse(jobs_settings(cfg)->jobs_retry_schedule, c->schedule,
	    JOBS_SCHEDULE_MAX)) < 0) {
		snprintf(err, errlen, "jobs_retry_schedule: 1 to %d comma-separated"
		    " numbers of seconds", JOBS_SCHEDULE_MAX);
		free(c);
		return -1;
	}
	c->cfg = cfg;
	s->name = "jobs";
	s->schedule = c->schedule;
	s->nschedule = (size_t)n;
	/* per kind in jobs_begin; the engine's bound is the largest */
	s->max_attempts = module_job_attempts_max();
	s->jitter_pct = 10;
	s->lease = JOBS_CLAIM_LEASE;
	snprintf(c->biller_max, sizeof(c->biller_max), "%d", jobs_settings(cfg)->biller_max_sessions);
	snprintf(c->client_max, sizeof(c->client_max), "%d", jobs_settings(cfg)->client_max_sessions);
	s->ctx = c;
	return 0;
}

void
jobs_sender_free(struct queue_sender *s)
{
	free(s->ctx);
	s->ctx = NULL;
}
