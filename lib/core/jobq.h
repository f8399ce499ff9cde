#ifndef BDS_JOBQ_H
#define BDS_JOBQ_H
/*
 * The jobs queue of bds-jobs (table jobs, sql/013_jobs_bills.sql): every
 * module queues its background work here and declares the kinds it queues
 * in its descriptor (core/module.h); bds-jobs runs them with the leased
 * queue of core/queue.c (lib/jobs/jobs_loop.c).
 */
struct req;
struct json_object;
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

/*
 * Queue one job of kind for subject_id (e.g. a link id) inside the caller's
 * transaction (r->db, in a transaction when the route is ROUTE_TX); runs no
 * earlier than delay_s seconds from now. payload may be NULL ({}). A pending
 * job of the same kind and subject makes this a no-op. client_id and
 * environment may be NULL (global kinds). The job keeps r's request id and
 * Idempotency-Key for the events it emits (none for a sweep's). 0 ok
 * (queued or already pending), -1 database failure.
 */
int	 jobq_add(struct req *r, const char *kind, const char *client_id,
	    const char *environment, const char *subject_id,
	    struct json_object *payload, int delay_s);

extern const struct db_stmt_set jobq_stmt_set;

#endif
