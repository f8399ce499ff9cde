#ifndef BDS_JOBS_H
#define BDS_JOBS_H
/*
 * The kinds of work bds-jobs runs (lib/jobs/jobs.c's table) and the runner
 * glue on the leased queue of core/queue.c. Queue a job with jobq_add
 * (core/jobq.h); adding a kind is one entry of the table.
 */
#include <signal.h>
#include <stddef.h>

struct config;
struct req;
struct json_object;
struct queue_sender;
struct db_stmt_set;

/*
 * DONE commits; RETRY and FAILED roll back and count an attempt; DEFER rolls
 * back and puts the job back without counting an attempt, due again in
 * defer_ms (a resource is busy: e.g. the biller's session slots).
 */
enum jobs_outcome { JOBS_DONE, JOBS_RETRY, JOBS_FAILED, JOBS_DEFER };

struct jobs_job {
	const char	*id, *kind, *client_id, *environment, *subject_id;
	struct json_object *payload;	/* the stored payload ({} when none) */
	int		 attempt;	/* 1 on the first run */
	const char	*error;		/* set by run() on RETRY/FAILED: recorded, never secret */
	int		 retry_after;	/* RETRY: wait at least this many seconds (Retry-After) */
	int		 defer_ms;	/* DEFER: due again after this long (default 1 s) */
};

struct jobs_kind {
	const char	*name;		/* "retrieval" */
	/*
	 * Runs in a forked worker inside ONE transaction the runner opens on
	 * r->db (commit on JOBS_DONE, rollback otherwise, then the outcome is
	 * recorded), with r a synthetic request: r->db, r->arena, r->cfg set,
	 * r->client_id/r->env = the job's, r->http.request_id and
	 * idempotency_key = the request's that queued it (else the job's id,
	 * "job_<uuid>", and none), so events_emit(r, ...) works as in the API
	 * and its events name their originating request.
	 */
	enum jobs_outcome (*run)(struct req *r, struct jobs_job *job);
	int		 max_attempts, lease_s;
	/*
	 * May be NULL. After a RETRY or FAILED run was rolled back, in a
	 * transaction of its own that commits when it returns 0: what the
	 * subject keeps of a failed attempt (dead: no attempt follows).
	 */
	int		 (*failed)(struct req *r, struct jobs_job *job, int dead);
};

/* The kinds table; NULL when name is not a kind. */
const struct jobs_kind *jobs_kind_find(const char *name);

/*
 * Set up the queue sender of the jobs table for cfg (retry schedule
 * cfg->jobs_retry_schedule..., one job per claim); 0 ok, -1 with err.
 * Matches struct queue_kind's init.
 */
int	 jobs_sender_init(struct queue_sender *s, const struct config *cfg,
	    char *err, size_t errlen);
void	 jobs_sender_free(struct queue_sender *s);

/* The kinds the other slices write (lib/jobs/jobs_retrieval.c,
 * lib/jobs/jobs_connect.c). */
enum jobs_outcome jobs_retrieval_run(struct req *, struct jobs_job *);
enum jobs_outcome jobs_connect_run(struct req *, struct jobs_job *);
enum jobs_outcome jobs_reconcile_run(struct req *, struct jobs_job *);
int	 jobs_retrieval_failed(struct req *, struct jobs_job *, int dead);

/*
 * One of the biller's biller_max_sessions session slots for the job's
 * transaction, for a connector that talks to a biller (the sandbox's
 * fixtures take none): 1 taken, 0 all busy (job->defer_ms set: return
 * JOBS_DEFER), -1 database failure (job->error set).
 */
struct connector;
int	 jobs_biller_slot(struct req *r, struct jobs_job *job, const struct connector *c,
	    const char *biller_id);

extern const struct db_stmt_set jobs_stmt_set;

#endif
