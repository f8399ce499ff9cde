/*
 * The runner's loop: one per bds-jobs worker process, on one database
 * connection and one libcurl multi handle.
 *
 *   claim	while fewer than jobs_conversations jobs are in flight, claim
 *		due jobs (jobs_claim: the caps per biller, per client and per
 *		subject); when all are taken, claim only jobs that talk to no
 *		biller, which end at once;
 *   fetch	each claimed job's fetch starts as a conversation
 *		(jobs_conv.h) and runs until its first HTTP exchange; the
 *		loop then waits on every transfer at once, on the database
 *		socket (LISTEN bds_jobs) and on timers, and resumes each
 *		conversation whose transfer ended;
 *   apply	a job whose fetch returned is applied in its one transaction
 *		and recorded (jobs_finish) right away, between two waits, so
 *		no transaction is open while anything waits on the network;
 *   stop	at the time budget or on *stop nothing more is claimed; the
 *		jobs in flight end (each within its lease) and the loop returns.
 *
 * A conversation never holds the database connection across a yield, so
 * the one connection serves them all in turn.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/arena.h"
#include "core/clock.h"
#include "core/config.h"
#include "core/db.h"
#include "core/log.h"
#include "core/module.h"
#include "core/queue.h"
#include "core/req.h"
#include "jobs/jobs.h"
#include "jobs/jobs_conv.h"

#define LOOP_CLAIM_BATCH	16	/* jobs per claim */
#define LOOP_WAIT_MAX_MS	250	/* longest wait: *stop is looked at this often */

/* One claimed job in flight. */
struct jrun {
	struct arena	 arena;		/* the job's: freed when it is recorded */
	struct req	 r;
	struct jobs_job	 job;
	struct queue_job qj;
	const struct jobs_kind *k;
	struct conv	*conv;
	int		 fetched;	/* fetch returned (or there is none) */
	enum jobs_outcome out;
	struct jrun	*next;
};

struct loop {
	struct db		*db;
	const struct config	*cfg;
	struct queue_sender	 s;
	struct conv_loop	 conv;
	struct jrun		*runs, **tail;	/* in claim order */
	int			 nruns;
};

static void
fetch_run(void *arg)
{
	struct jrun *j = arg;

	j->out = j->k->fetch(&j->r, &j->job);
}

static void
jrun_free(struct jrun *j)
{
	conv_free(j->conv);
	arena_free(&j->arena);
	free(j);
}

/* Lease claimed row i and start its fetch; it joins the runs in flight. */
static void
start(struct loop *l, PGresult *res, int i)
{
	struct jrun *j = calloc(1, sizeof(*j));
	int rc;

	if (j == NULL) {
		log_msg("error", "jobs: out of memory for a claimed job (its lease frees it)");
		return;
	}
	arena_init(&j->arena);
	j->out = JOBS_DONE;
	if ((rc = jobs_begin(&l->s, l->db, &j->arena, res, i, &j->qj, &j->job, &j->r)) < 0) {
		jrun_free(j);
		return;
	}
	if (rc == 0) {
		j->fetched = 1;
		j->qj.priv = NULL;	/* recorded as it stands */
	} else if ((j->k = module_job_kind(j->qj.kind))->fetch == NULL) {
		j->fetched = 1;
	} else if ((j->conv = conv_start(&l->conv, fetch_run, j, &j->fetched)) == NULL) {
		/* no stack to be had: the fetch blocks this loop, once */
		log_msg("warn", "jobs: no conversation stack for job %s; run in place",
		    j->qj.id);
		fetch_run(j);
		j->fetched = 1;
	}
	*l->tail = j;
	l->tail = &j->next;
	l->nruns++;
}

/* Apply and record every run whose fetch has returned; how many. */
static int
finish_fetched(struct loop *l)
{
	struct jrun **pp = &l->runs, *j;
	int n = 0;

	while ((j = *pp) != NULL) {
		if (!j->fetched) {
			pp = &j->next;
			continue;
		}
		if ((*pp = j->next) == NULL)
			l->tail = pp;
		l->nruns--;
		/* one that never ran (a kind unknown here, given up) is recorded
		 * as jobs_begin left it */
		jobs_finish(&l->s, l->db, &j->arena, &j->qj, &j->job, &j->r, j->out);
		jrun_free(j);
		n++;
	}
	return n;
}

/* One claim: how many rows it took, -1 when the database failed. */
static int
claim(struct loop *l, struct arena *a)
{
	int room = jobs_settings(l->cfg)->jobs_conversations - l->nruns;
	int network = room > 0, want = LOOP_CLAIM_BATCH, n, i;
	PGresult *res;

	if (network && room < want)
		want = room;
	if ((res = jobs_claim(&l->s, l->db, a, want, network)) == NULL)
		return -1;
	n = PQntuples(res);
	for (i = 0; i < n; i++)
		start(l, res, i);
	arena_reset(a);
	return n >= want ? want : n;
}

int
jobs_loop_run(struct db *d, const struct config *cfg, const struct queue_opts *o)
{
	long long end = o->max_seconds > 0 ? mono_ms() + o->max_seconds * 1000LL : 0;
	long long next_claim = 0;
	PGconn *listening = NULL;
	int backend = 0, rc = 0, down = 0, more = 1;
	char err[256];
	struct arena a;
	struct loop l;

	memset(&l, 0, sizeof(l));
	l.db = d;
	l.cfg = cfg;
	l.tail = &l.runs;
	if (jobs_sender_init(&l.s, cfg, err, sizeof(err)) != 0) {
		log_msg("error", "jobs: %s", err);
		return -1;
	}
	if (conv_loop_init(&l.conv) != 0) {
		log_msg("error", "jobs: libcurl multi handle: out of memory");
		jobs_sender_free(&l.s);
		return -1;
	}
	arena_init(&a);
	for (;;) {
		int stopping = (o->stop != NULL && *o->stop) || (end != 0 && mono_ms() >= end);
		struct curl_waitfd wfd = { 0, CURL_WAIT_POLLIN, 0 };
		long long now = mono_ms(), wait;
		PGconn *c;
		int failed = 0, k;

		if (!stopping && (more || now >= next_claim)) {
			/* LISTEN before the claim: a row committed after the
			 * claim's snapshot then always wakes us */
			if (db_ensure(d) != 0 ||
			    queue_listen(d, o->channel, &listening, &backend) != 0 ||
			    (k = claim(&l, &a)) < 0) {
				failed = 1;
				listening = NULL;
				more = 0;
			} else {
				/* a full claim: more may be due */
				more = k == LOOP_CLAIM_BATCH ||
				    (k > 0 && l.nruns < jobs_settings(cfg)->jobs_conversations);
			}
			next_claim = mono_ms() + o->poll_ms;
			if (failed != down) {
				log_msg(failed ? "warn" : "info", failed ?
				    "jobs: database failing, retrying every %d ms" :
				    "jobs: database working again", o->poll_ms);
				down = failed;
			}
			if (failed && o->once)
				rc = -1;
		}
		if (finish_fetched(&l) > 0 && !stopping)
			more = 1;	/* room again, and its work may have queued more */
		if (l.nruns == 0 && (stopping || (o->once && (!more || rc != 0))))
			break;
		if (o->once && rc != 0)
			more = 0;
		wait = more ? 0 : next_claim - mono_ms();
		if (wait > LOOP_WAIT_MAX_MS)
			wait = LOOP_WAIT_MAX_MS;
		if (wait < 0)
			wait = 0;
		c = db_conn(d);
		wfd.fd = c != NULL && !failed ? PQsocket(c) : -1;
		if ((k = conv_loop_step(&l.conv, &wfd, wfd.fd >= 0 ? 1 : 0, (int)wait)) < 0)
			log_msg("error", "jobs: libcurl's multi interface failed");
		/* a notification (or one that came with a result) is a wake-up:
		 * the claim finds everything */
		if (c != NULL && !failed && (k > 0 || listening != NULL) &&
		    queue_drain_notifies(c) > 0)
			more = 1;
		(void)finish_fetched(&l);
	}
	arena_free(&a);
	conv_loop_free(&l.conv);
	jobs_sender_free(&l.s);
	return rc;
}
