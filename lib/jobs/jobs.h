#ifndef BDS_JOBS_H
#define BDS_JOBS_H
/*
 * The kinds of work bds-jobs runs (lib/jobs/jobs.c's table), the runner's
 * loop (lib/jobs/jobs_loop.c) and its glue to the leased queue of
 * core/queue.c. Queue a job with jobq_add (core/jobq.h); adding a kind is
 * one entry of the table.
 */
#include <signal.h>
#include <stddef.h>

#include <libpq-fe.h>

struct arena;
struct config;
struct db;
struct req;
struct json_object;
struct queue_batch;
struct queue_job;
struct queue_opts;
struct queue_sender;
struct db_stmt_set;

/*
 * DONE commits; RETRY and FAILED roll back and count an attempt; DEFER rolls
 * back and puts the job back without counting an attempt, due again in
 * defer_ms (a resource is busy).
 */
enum jobs_outcome { JOBS_DONE, JOBS_RETRY, JOBS_FAILED, JOBS_DEFER };

struct jobs_job {
	const char	*id, *kind, *client_id, *environment, *subject_id;
	struct json_object *payload;	/* the stored payload ({} when none) */
	int		 attempt;	/* 1 on the first run */
	const char	*error;		/* set on RETRY/FAILED: recorded, never secret */
	int		 retry_after;	/* RETRY: wait at least this many seconds (Retry-After) */
	int		 defer_ms;	/* DEFER: due again after this long (default 1 s) */
	void		*state;		/* what fetch keeps for apply (the job's arena) */
};

/*
 * A kind runs in two phases, so that no transaction is ever open while a
 * job waits on the network (lib/jobs/jobs_loop.c):
 *
 * fetch	may be NULL. Outside any transaction, as a conversation of the
 *		runner's loop (jobs_conv.h): reads what the job needs (each
 *		statement on its own) and talks to the biller; its HTTP
 *		exchanges yield to the loop, so hundreds of jobs wait at once in
 *		one process. Keeps what apply needs in job->state. JOBS_DONE goes
 *		on to apply; another outcome ends the run with nothing written.
 * apply	in ONE transaction the runner opens: writes the outcome. On
 *		JOBS_DONE the row is marked done in that same transaction, only
 *		while the claim is still ours (same attempt, running), so a run
 *		whose lease was lost commits nothing; otherwise it rolls back.
 *
 * Both run with r a synthetic request: r->db, r->arena (the job's own),
 * r->cfg set, r->client_id/r->env = the job's, r->http.request_id and
 * idempotency_key = the request's that queued it (else the job's id,
 * "job_<uuid>", and none), so events_emit(r, ...) works as in the API and
 * its events name their originating request.
 */
struct jobs_kind {
	const char	*name;		/* "retrieval" */
	enum jobs_outcome (*fetch)(struct req *r, struct jobs_job *job);
	enum jobs_outcome (*apply)(struct req *r, struct jobs_job *job);
	int		 max_attempts, lease_s;
	/*
	 * May be NULL. After a RETRY or FAILED run, in a transaction of its
	 * own that commits when it returns 0: what the subject keeps of a
	 * failed attempt (dead: no attempt follows).
	 */
	int		 (*failed)(struct req *r, struct jobs_job *job, int dead);
};

/* The kinds table; NULL when name is not a kind. */
const struct jobs_kind *jobs_kind_find(const char *name);

/*
 * Set up the queue sender of the jobs table for cfg (the retry schedule
 * cfg->jobs_retry_schedule, the claim's caps); 0 ok, -1 with err.
 * Matches struct queue_kind's init.
 */
int	 jobs_sender_init(struct queue_sender *s, const struct config *cfg,
	    char *err, size_t errlen);
void	 jobs_sender_free(struct queue_sender *s);

/*
 * The runner's loop in this process (jobs_loop.c): claims jobs while it
 * has room for more conversations (cfg->jobs_conversations), drives their
 * fetch phases concurrently, applies each as it ends. Stops claiming at
 * the budget or on *o->stop and returns once the jobs in flight are done.
 * 0 on a normal end, -1 when the database failed in once mode.
 */
int	 jobs_loop_run(struct db *d, const struct config *cfg, const struct queue_opts *o);

/*
 * What the loop asks of the kinds and the queue (jobs.c).
 *
 * jobs_claim: up to n due jobs, leased (0 < network: also jobs that talk
 * to a biller; otherwise only the others), the per-biller and per-client
 * caps applied; the rows, or NULL when the database failed.
 *
 * jobs_begin: lease claimed row i of res to its kind and fill qj, job and
 * r for its run in the job's arena a: 1 ready, 0 nothing to run (qj's
 * outcome is set: a kind unknown here, or claims without an outcome used
 * up), -1 lease lost or the database failed (leave it).
 *
 * jobs_finish: after fetch ended with out, apply in its transaction, then
 * record the outcome on the job's row (and run the kind's failed() hook).
 */
PGresult *jobs_claim(const struct queue_sender *s, struct db *d, struct arena *a, int n,
	    int network);
int	 jobs_begin(const struct queue_sender *s, struct db *d, struct arena *a,
	    PGresult *res, int i, struct queue_job *qj, struct jobs_job *job, struct req *r);
void	 jobs_finish(const struct queue_sender *s, struct db *d, struct arena *a,
	    struct queue_job *qj, struct jobs_job *job, struct req *r, enum jobs_outcome out);

/* The kinds of the other files (jobs_retrieval.c, jobs_connect.c,
 * jobs_reconcile.c). */
enum jobs_outcome jobs_retrieval_fetch(struct req *, struct jobs_job *);
enum jobs_outcome jobs_retrieval_apply(struct req *, struct jobs_job *);
int	 jobs_retrieval_failed(struct req *, struct jobs_job *, int dead);
enum jobs_outcome jobs_connect_fetch(struct req *, struct jobs_job *);
enum jobs_outcome jobs_connect_apply(struct req *, struct jobs_job *);
enum jobs_outcome jobs_reconcile_apply(struct req *, struct jobs_job *);

extern const struct db_stmt_set jobs_stmt_set;

#endif
