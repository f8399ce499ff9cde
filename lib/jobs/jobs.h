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

enum jobs_outcome { JOBS_DONE, JOBS_RETRY, JOBS_FAILED };

struct jobs_job {
	const char	*id, *kind, *client_id, *environment, *subject_id;
	struct json_object *payload;	/* the stored payload ({} when none) */
	int		 attempt;	/* 1 on the first run */
	const char	*error;		/* set by run() on RETRY/FAILED: recorded, never secret */
};

struct jobs_kind {
	const char	*name;		/* "retrieval" */
	/*
	 * Runs in a forked worker inside ONE transaction the runner opens on
	 * r->db (commit on JOBS_DONE, rollback otherwise, then the outcome is
	 * recorded), with r a synthetic request: r->db, r->arena, r->cfg set,
	 * r->client_id/r->env = the job's, r->http.request_id = "job_<job id>",
	 * so events_emit(r, ...) works as in the API.
	 */
	enum jobs_outcome (*run)(struct req *r, struct jobs_job *job);
	int		 max_attempts, lease_s;
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

extern const struct db_stmt_set jobs_stmt_set;

#endif
