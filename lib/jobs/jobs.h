#ifndef BDS_JOBS_H
#define BDS_JOBS_H
/*
 * The runner of bds-jobs: its loop (lib/jobs/jobs_loop.c) and its glue to
 * the leased queue of core/queue.c, running the job kinds every module
 * declares in its descriptor (core/module.h; the kind's shape is in
 * core/jobq.h). The jobs module's own kinds are retrieval, connect,
 * reconcile and the runner's test kind.
 */
#include <signal.h>
#include <stddef.h>

#include <libpq-fe.h>

#include "core/config.h"
#include "core/jobq.h"

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
/* a bill import's extraction (jobs_extract.c) */
enum jobs_outcome jobs_extract_fetch(struct req *, struct jobs_job *);
enum jobs_outcome jobs_extract_apply(struct req *, struct jobs_job *);
int	 jobs_extract_failed(struct req *, struct jobs_job *, int dead);
/* a biller's logo (jobs_logos.c) */
enum jobs_outcome jobs_logo_fetch(struct req *, struct jobs_job *);
enum jobs_outcome jobs_logo_apply(struct req *, struct jobs_job *);
/* The runner's own test kind (t/e2e/check_e2e_jobs queues it). */
enum jobs_outcome jobs_test_fetch(struct req *, struct jobs_job *);
enum jobs_outcome jobs_test_apply(struct req *, struct jobs_job *);

extern const struct db_stmt_set jobs_stmt_set;

/* The module's settings (config keys of the same names). */
struct jobs_settings {
	int	 jobs_workers;		/* forked workers per bds-jobs run */
	char	*jobs_retry_schedule;	/* seconds after attempt 1, 2...: "5,30,..." */
	int	 jobs_poll_ms;		/* longest wait between claims */
	int	 jobs_conversations;	/* biller jobs in flight at once per worker */
	int	 biller_max_sessions;	/* portal sessions at once per biller */
	int	 client_max_sessions;	/* portal sessions at once per client */
	/* the portal connector (docs/portal.md) */
	int	 portal_connect_timeout_ms;	/* TCP + TLS connect, per request */
	int	 portal_timeout_ms;	/* a whole request, answer included */
	int	 portal_since_days;	/* the since window before the last success */
	/* the day (YYYY-MM-DD) every sandbox history is dated from; "": each
	 * link's own creation day (sandbox.c). Tests pin it. */
	char	*sandbox_basis_day;
	/* bill imports' extraction (jobs_extract.c; docs/DECISIONS.md
	 * "Extraction sandbox") */
	char	*extract_program;	/* bds-extract's absolute path */
	int	 extract_timeout_s;	/* wall clock per document */
	int	 extract_cpu_s;		/* RLIMIT_CPU */
	int	 extract_memory_mb;	/* RLIMIT_AS; 0: none */
	int	 extract_concurrency;	/* children at once per runner process */
	int	 extract_netns;		/* try an empty network namespace */
};

/* The module (jobs_module.c) and its settings block (core/config.h). */
extern const struct module jobs_module;
static inline const struct jobs_settings *
jobs_settings(const struct config *c)
{
	return config_module(c, &jobs_module);
}

#endif
