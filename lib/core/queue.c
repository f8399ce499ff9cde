/* The leased job queue: claim, send, record, wait. See queue.h. */
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/arena.h"
#include "core/clock.h"
#include "core/crypto.h"
#include "core/db.h"
#include "core/log.h"
#include "core/queue.h"

/* A job must be recorded at least this long before its lease ends. */
#define QUEUE_LEASE_MARGIN_MS	2000

static const char *const outcome_names[QUEUE__MAX] = {
	[QUEUE_RELEASED] = "released",
	[QUEUE_SENT] = "sent",
	[QUEUE_RETRY] = "retry",
	[QUEUE_FAILED] = "failed",
};

int
queue_backoff(const struct queue_sender *s, int attempt)
{
	size_t i;

	if (attempt >= s->max_attempts || s->nschedule == 0)
		return -1;
	i = attempt < 1 ? 0 : (size_t)attempt - 1;
	if (i >= s->nschedule)
		i = s->nschedule - 1;
	return s->schedule[i];
}

/* delay_ms ± pct percent, uniformly, to the millisecond. */
static long long
jitter_ms(long long delay_ms, int pct)
{
	long long span = delay_ms * pct / 100;
	uint64_t u;

	if (span <= 0)
		return delay_ms;
	crypto_random_bytes(&u, sizeof(u));
	return delay_ms - span + (long long)(u % (uint64_t)(2 * span + 1));
}

int
queue_may_start(const struct queue_batch *b, int need_seconds)
{
	if (b->stop != NULL && *b->stop)
		return 0;
	return mono_ms() + (long long)need_seconds * 1000 <= b->lease_end_ms;
}

/* Never sooner than the endpoint asked (Retry-After). */
void
queue_resolve(const struct queue_sender *s, struct queue_job *j)
{
	int delay;

	j->delay_ms = 0;
	if (j->outcome != QUEUE_RETRY)
		return;
	if ((delay = queue_backoff(s, j->attempt)) < 0) {
		j->outcome = QUEUE_FAILED;	/* that was the last attempt */
		return;
	}
	j->delay_ms = jitter_ms((long long)delay * 1000, s->jitter_pct);
	if (j->retry_after > 0 && (long long)j->retry_after * 1000 > j->delay_ms)
		j->delay_ms = (long long)j->retry_after * 1000;
}

void
queue_log_outcome(const struct queue_sender *s, const struct queue_job *j)
{
	const char *error = j->error != NULL ? j->error : "unknown error";

	if (!j->recorded)
		/* the lease ran out and another runner claimed the row */
		log_msg("warn", "queue=%s id=%s attempt=%d outcome=%s: lease lost,"
		    " not recorded", s->name, j->id, j->attempt, outcome_names[j->outcome]);
	else if (j->outcome == QUEUE_RETRY)
		log_msg("info", "queue=%s id=%s kind=%s attempt=%d outcome=retry"
		    " retry_in=%lldms error=\"%s\"", s->name, j->id, j->kind, j->attempt,
		    j->delay_ms, error);
	else if (j->outcome == QUEUE_FAILED)
		log_msg("warn", "queue=%s id=%s kind=%s attempt=%d outcome=failed"
		    " error=\"%s\"", s->name, j->id, j->kind, j->attempt, error);
	else
		log_msg("info", "queue=%s id=%s kind=%s attempt=%d outcome=%s",
		    s->name, j->id, j->kind, j->attempt, outcome_names[j->outcome]);
}

/* Record one resolved job with the sender's statements; -1 when the
 * database failed. */
static int
record(struct db *d, struct arena *a, const struct queue_sender *s,
    struct queue_job *j)
{
	const char *error = j->error != NULL ? j->error : "unknown error";
	const char *p[4];
	char attempt[16], delay_s[24];
	struct db_stmt *st;
	PGresult *res;
	int n = 2;

	snprintf(attempt, sizeof(attempt), "%d", j->attempt);
	p[0] = j->id;
	p[1] = attempt;
	switch (j->outcome) {
	case QUEUE_SENT:
		st = s->sent;
		break;
	case QUEUE_RETRY:
		/* whole seconds, rounded up: never sooner than resolved */
		snprintf(delay_s, sizeof(delay_s), "%lld", (j->delay_ms + 999) / 1000);
		p[2] = delay_s;
		p[3] = error;
		n = 4;
		st = s->retry;
		break;
	case QUEUE_FAILED:
		p[2] = error;
		n = 3;
		st = s->fail;
		break;
	default:
		j->outcome = QUEUE_RELEASED;
		st = s->release;
		break;
	}
	if ((res = db_exec(d, a, st, n, p)) == NULL) {
		log_msg("error", "queue=%s id=%s attempt=%d: cannot record %s: %s",
		    s->name, j->id, j->attempt, outcome_names[j->outcome], db_errmsg(d));
		return -1;
	}
	j->recorded = strcmp(PQcmdTuples(res), "1") == 0;
	queue_log_outcome(s, j);
	return 0;
}

int
queue_batch_run(struct db *d, struct arena *a, const struct queue_sender *s,
    volatile sig_atomic_t *stop)
{
	char limit[16], lease[16];
	const char *p[3] = { limit, lease, s->claim_arg };
	struct queue_job *gave_up;
	struct queue_batch b;
	long long t0 = mono_ms();
	size_t ngave = 0, i;
	PGresult *res;
	int n, rc;

	snprintf(limit, sizeof(limit), "%d", s->batch);
	snprintf(lease, sizeof(lease), "%d", s->lease);
	if ((res = db_exec(d, a, s->claim, s->claim_arg != NULL ? 3 : 2, p)) == NULL) {
		log_msg("error", "queue=%s: claim failed: %s", s->name, db_errmsg(d));
		arena_reset(a);
		return -1;
	}
	n = PQntuples(res);
	memset(&b, 0, sizeof(b));
	b.db = d;
	b.arena = a;
	b.res = res;
	b.stop = stop;
	b.lease_end_ms = t0 + (long long)s->lease * 1000 - QUEUE_LEASE_MARGIN_MS;
	b.jobs = arena_alloc(a, ((size_t)n + 1) * sizeof(*b.jobs));
	gave_up = arena_alloc(a, ((size_t)n + 1) * sizeof(*gave_up));
	for (i = 0; i < (size_t)n; i++) {
		struct queue_job j;

		memset(&j, 0, sizeof(j));
		j.id = PQgetvalue(res, (int)i, QUEUE_COL_ID);
		j.attempt = atoi(PQgetvalue(res, (int)i, QUEUE_COL_ATTEMPTS));
		j.kind = PQgetvalue(res, (int)i, QUEUE_COL_KIND);
		j.row = (int)i;
		j.outcome = QUEUE_RELEASED;
		if (j.attempt > s->max_attempts) {
			/* every claim so far ended without a record (killed mid-send?) */
			j.outcome = QUEUE_FAILED;
			j.error = arena_printf(a, "gave up: %d claims without an outcome",
			    j.attempt - 1);
			gave_up[ngave++] = j;
		} else {
			b.jobs[b.n++] = j;
		}
	}
	if (b.n > 0)
		s->send(s->ctx, &b);
	/* the jobs given up on are recorded with the rest (room for n) */
	for (i = 0; i < ngave; i++)
		b.jobs[b.n++] = gave_up[i];
	for (i = 0; i < b.n; i++)
		queue_resolve(s, &b.jobs[i]);
	rc = n;
	if (s->record_batch != NULL && b.n > 0) {
		if (s->record_batch(s->ctx, &b) == -1) {
			log_msg("error", "queue=%s: cannot record a batch of %zu: %s",
			    s->name, b.n, db_errmsg(d));
			rc = -1;
		} else {
			for (i = 0; i < b.n; i++)
				queue_log_outcome(s, &b.jobs[i]);
		}
	} else {
		for (i = 0; i < b.n; i++)
			if (record(d, a, s, &b.jobs[i]) == -1)
				rc = -1;
	}
	arena_reset(a);
	return rc;
}

int
queue_drain_notifies(PGconn *c)
{
	PGnotify *nt;
	int n = 0;

	if (c == NULL)
		return 0;
	(void)PQconsumeInput(c);
	while ((nt = PQnotifies(c)) != NULL) {
		PQfreemem(nt);
		n++;
	}
	return n;
}

/* A reconnect brings a fresh session that listens to nothing. */
int
queue_listen(struct db *d, const char *channel, PGconn **listening, int *backend)
{
	PGconn *c = db_conn(d);
	PGresult *res;
	char sql[256], *id;
	int ok;

	if (channel == NULL)
		return 0;
	if (c == NULL)
		return -1;
	if (c == *listening && PQbackendPID(c) == *backend)
		return 0;
	/* LISTEN takes no parameter: the channel, a constant of the runner,
	 * goes in quoted as an identifier by libpq */
	if ((id = PQescapeIdentifier(c, channel, strlen(channel))) == NULL)
		return -1;
	snprintf(sql, sizeof(sql), "LISTEN %s", id);
	PQfreemem(id);
	res = PQexec(c, sql);
	ok = PQresultStatus(res) == PGRES_COMMAND_OK;
	PQclear(res);
	if (!ok) {
		log_msg("error", "queue: LISTEN %s failed: %s", channel, PQerrorMessage(c));
		return -1;
	}
	*listening = c;
	*backend = PQbackendPID(c);
	return 0;
}

/*
 * Sleep until the connection has input (a notification), a signal comes or
 * ms pass. Signals are blocked from the last look at *stop until ppoll
 * unblocks them atomically: one that comes in between still ends the sleep.
 */
static void
wait_wake(struct db *d, long long ms, volatile sig_atomic_t *stop)
{
	PGconn *c = db_conn(d);
	/* ppoll ignores a negative fd: without a connection this just sleeps */
	struct pollfd pfd = { c != NULL ? PQsocket(c) : -1, POLLIN, 0 };
	struct timespec ts = { (time_t)(ms / 1000), (long)(ms % 1000) * 1000000L };
	sigset_t all, old;
	int n = 0;

	if (ms <= 0)
		return;
	sigfillset(&all);
	sigprocmask(SIG_BLOCK, &all, &old);
	if (stop == NULL || !*stop)
		n = ppoll(&pfd, 1, &ts, &old);
	sigprocmask(SIG_SETMASK, &old, NULL);
	if (n > 0)
		(void)queue_drain_notifies(c);
}

int
queue_run(struct db *d, struct queue_sender *const *senders, size_t n,
    const struct queue_opts *o)
{
	long long end = o->max_seconds > 0 ? mono_ms() + o->max_seconds * 1000LL : 0;
	PGconn *listening = NULL;
	int backend = 0, rc = 0, down = 0;
	struct arena a;

	arena_init(&a);
	for (;;) {
		int more = 0, failed = 0;
		long long left = o->poll_ms;
		size_t i;

		if ((o->stop != NULL && *o->stop) || (end != 0 && mono_ms() >= end))
			break;
		/* LISTEN before the first claim: a row committed after the
		 * claim's snapshot then always wakes us */
		if (db_ensure(d) != 0 ||
		    queue_listen(d, o->channel, &listening, &backend) != 0)
			failed = 1;
		for (i = 0; i < n && !failed; i++) {
			int k;

			if (o->stop != NULL && *o->stop)
				break;
			if ((k = queue_batch_run(d, &a, senders[i], o->stop)) < 0)
				failed = 1;
			else if (k >= senders[i]->batch)
				more = 1;
		}
		if (failed && o->once) {
			rc = -1;
			break;
		}
		if (failed != down) {
			if (failed)
				log_msg("warn", "queue: database failing, retrying every %d ms",
				    o->poll_ms);
			else
				log_msg("info", "queue: database working again");
			down = failed;
		}
		if (failed)
			listening = NULL;
		else if (more)
			continue;	/* a full batch: more may be due */
		else if (o->once)
			break;
		/* a notification that arrived with a batch's results is queued */
		if (!failed && queue_drain_notifies(db_conn(d)) > 0)
			continue;
		if (end != 0 && end - mono_ms() < left)
			left = end - mono_ms();
		wait_wake(d, left, o->stop);
	}
	arena_free(&a);
	return rc;
}
