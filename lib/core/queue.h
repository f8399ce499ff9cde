#ifndef BDS_QUEUE_H
#define BDS_QUEUE_H
/*
 * The leased job queue: one loop that every background runner shares
 * (bds-deliver's e-mail and webhooks today; bds-jobs' retrieval,
 * extraction, insights and expiry next). A queue is a "sender": the
 * statements that claim and record its rows, its retry schedule, and a send
 * function that attempts a claimed batch. The loop owns what is common:
 *
 *   claim	due rows, leased for a while, in one statement (FOR UPDATE
 *		SKIP LOCKED), so runners working at once never share a row;
 *   record	each outcome: sent, retry after the schedule's delay (with
 *		jitter), failed, or released untried; every record checks the
 *		claim is still ours (same id and attempt), so a lost lease
 *		records nothing;
 *   wait	LISTEN on the runner's channel and sleep on the socket until a
 *		notification or the poll interval; a notification is only a
 *		wake-up, the claim finds everything;
 *   stop	at the time budget or when *stop is set (SIGTERM): the job in
 *		flight finishes, jobs of the batch not yet started are released.
 *
 * Adding a kind: a table with the queue columns (id, kind, status
 * 'pending'/'sent'/'failed', attempts, next_attempt_at, lease_until,
 * last_error) whose insert trigger notifies the runner's channel; its five
 * statements written with the QUEUE_SQL_* macros below (or one
 * record_batch function that records a whole batch in one round trip, as
 * webhooks do to keep an attempt log); a send function; an init function of
 * the queue_kind shape; and one entry in the runner's kinds[] table. The
 * loop does not change.
 */
#include <signal.h>
#include <stdio.h>
#include <stddef.h>

#include <libpq-fe.h>

struct arena;
struct config;
struct db;
struct db_stmt;

/* The claim's first columns; a sender's own columns follow from
 * QUEUE_COL__MAX (an enum beside its claim, starting there). */
enum queue_col {
	QUEUE_COL_ID,		/* the row id */
	QUEUE_COL_ATTEMPTS,	/* 1 on the first claim */
	QUEUE_COL_KIND,		/* for the log */
	QUEUE_COL__MAX
};

/*
 * The five statements of a kind with its own table (see queue_sender for
 * the parameters). String literals only, joined at compile time: never
 * formatted. cols: the sender's own claim columns after id, attempts, kind
 * (", to_addr, sealed" or ""); set: more assignments when a row ends
 * (", sent_at = now()" or "").
 */
#define QUEUE_SQL_OURS	" WHERE id = $1 AND attempts = $2::int AND status = 'pending'"
/* RETURNING has no order: the outer SELECT takes the oldest first. */
#define QUEUE_SQL_CLAIM(table, cols)						\
	"WITH claimed AS ("							\
	" UPDATE " table							\
	"    SET lease_until = now() + make_interval(secs => $2::int),"	\
	"        attempts = attempts + 1"					\
	"  WHERE id IN (SELECT id FROM " table					\
	"                WHERE status = 'pending' AND next_attempt_at <= now()"	\
	"                  AND (lease_until IS NULL OR lease_until < now())"	\
	"                ORDER BY next_attempt_at LIMIT $1::int"		\
	"                FOR UPDATE SKIP LOCKED)"				\
	"  RETURNING id, attempts, kind" cols ", next_attempt_at)"		\
	" SELECT id, attempts, kind" cols " FROM claimed"			\
	"  ORDER BY next_attempt_at, id"
#define QUEUE_SQL_SENT(table, set)						\
	"UPDATE " table " SET status = 'sent', lease_until = NULL" set		\
	QUEUE_SQL_OURS
#define QUEUE_SQL_RETRY(table)							\
	"UPDATE " table							\
	"   SET next_attempt_at = now() + make_interval(secs => $3::int),"	\
	"       lease_until = NULL, last_error = $4" QUEUE_SQL_OURS
#define QUEUE_SQL_FAIL(table, set)						\
	"UPDATE " table " SET status = 'failed', lease_until = NULL,"		\
	"       last_error = $3" set QUEUE_SQL_OURS
#define QUEUE_SQL_RELEASE(table)						\
	"UPDATE " table " SET lease_until = NULL, attempts = attempts - 1"	\
	QUEUE_SQL_OURS

enum queue_outcome {
	QUEUE_RELEASED,	/* not attempted: back to the queue, attempt undone */
	QUEUE_SENT,		/* done */
	QUEUE_RETRY,		/* transient failure: again after the schedule's delay */
	QUEUE_FAILED,		/* permanent failure: never again */
	QUEUE__MAX
};

/* One claimed row. The sender sets outcome (and error) for each job it tries. */
struct queue_job {
	const char	*id;		/* QUEUE_COL_ID */
	int		 attempt;	/* QUEUE_COL_ATTEMPTS: 1 on the first claim */
	const char	*kind;		/* QUEUE_COL_KIND, for the log */
	int		 row;		/* its row in batch->res */
	enum queue_outcome outcome;	/* QUEUE_RELEASED until tried */
	const char	*error;		/* last_error: what failed, never content */
	int		 retry_after;	/* > 0: the retry waits at least this many seconds */
	void		*priv;		/* the sender's own detail of the attempt */
	/* set by the engine before recording */
	long long	 delay_ms;	/* QUEUE_RETRY: from now to the next attempt */
	int		 recorded;	/* record_batch: 1 when the claim was still ours */
};

struct queue_batch {
	struct db	*db;		/* for a sender's own statements (attempt logs) */
	struct arena	*arena;		/* freed once the batch is recorded */
	PGresult	*res;		/* the claim's rows (the arena clears it) */
	struct queue_job *jobs;
	size_t		 n;
	long long	 lease_end_ms;	/* monotonic; a job must end before it */
	volatile sig_atomic_t *stop;	/* may be NULL */
};

/*
 * A queue. Statement parameters, fixed so the engine can run them:
 *   claim   ($1 limit, $2 lease seconds, and $3 claim_arg when set)
 *           UPDATE ... RETURNING id, attempts, kind, then the sender's own
 *           columns; attempts + 1 on each claim
 *   sent    ($1 id, $2 attempt)
 *   retry   ($1 id, $2 attempt, $3 delay seconds, $4 error)
 *   fail    ($1 id, $2 attempt, $3 error)
 *   release ($1 id, $2 attempt) lease ended and attempt undone
 * each recording only while status is pending and attempts = $2.
 */
struct queue_sender {
	const char	*name;		/* the log's queue name: "mail" */
	struct db_stmt	*claim, *sent, *retry, *fail, *release;
	const int	*schedule;	/* delay after attempt 1, 2...; the last repeats */
	size_t		 nschedule;
	int		 max_attempts;	/* a transient failure of this attempt fails */
	int		 jitter_pct;	/* delays vary by ± this percentage */
	int		 batch;		/* rows per claim */
	int		 lease;		/* seconds a claim holds its rows */
	const char	*claim_arg;	/* the claim's $3, or NULL: no $3 */
	/*
	 * Attempt the batch's jobs (one by one or concurrently) and set their
	 * outcomes. Before starting a job ask queue_may_start(); a job it
	 * does not start stays QUEUE_RELEASED.
	 */
	void		(*send)(void *ctx, struct queue_batch *);
	/*
	 * Optional: record every job of the batch at once instead of the
	 * five statements (NULL: they are used). Outcomes are final (a retry
	 * after the last attempt is already QUEUE_FAILED) and delay_ms set;
	 * jobs the batch gave up on without sending have priv NULL. Set
	 * recorded on each job whose claim was still ours. 0 ok, -1 when the
	 * database failed.
	 */
	int		(*record_batch)(void *ctx, struct queue_batch *);
	void		*ctx;
};

struct queue_opts {
	int		 once;		/* drain what is due now, then return */
	int		 max_seconds;	/* time budget; 0 = until *stop */
	int		 poll_ms;	/* longest sleep between claims */
	const char	*channel;	/* LISTEN here (the kinds' triggers notify
					 * it); NULL: poll only */
	volatile sig_atomic_t *stop;	/* set by a signal handler; may be NULL */
};

/*
 * One entry of a runner's kinds[] table: set s up from cfg (cfg outlives
 * it), 0 ok or -1 with err filled; free (may be NULL) releases what init
 * made and is safe on a zeroed sender.
 */
struct queue_kind {
	const char	*name;
	int		(*init)(struct queue_sender *s, const struct config *cfg,
			    char *err, size_t errlen);
	void		(*free)(struct queue_sender *s);
};

/*
 * Run the loop over senders[0..n) on d until the budget ends, *stop is set
 * or (once) nothing is due. 0 on a normal end; -1 when the database failed
 * in once mode (otherwise the loop waits and reconnects).
 */
int	 queue_run(struct db *d, struct queue_sender *const *senders, size_t n,
	    const struct queue_opts *o);

/*
 * One claim of one sender: claim, send, record, then reset arena. Returns
 * how many rows were claimed (the batch size means more may be due), -1
 * when the database failed.
 */
int	 queue_batch_run(struct db *d, struct arena *arena,
	    const struct queue_sender *s, volatile sig_atomic_t *stop);

/* 1 when a job needing up to need_seconds may start: not stopping and the
 * lease outlasts it; else 0 (leave the job released). */
int	 queue_may_start(const struct queue_batch *b, int need_seconds);

/* Seconds to wait after a transient failure of attempt (1-based), without
 * jitter; -1 when that attempt was the last. */
int	 queue_backoff(const struct queue_sender *s, int attempt);

/*
 * Make j's outcome final before it is recorded: a retry after the last
 * attempt fails, and a retry gets its delay_ms (the schedule's, with
 * jitter, or Retry-After when that is longer).
 */
void	 queue_resolve(const struct queue_sender *s, struct queue_job *j);
/* The log line of a recorded job. */
void	 queue_log_outcome(const struct queue_sender *s, const struct queue_job *j);
/*
 * LISTEN on channel on d's current connection unless *listening already is
 * that connection (backend pid *backend); 0 ok (also for a NULL channel),
 * -1. A runner with a loop of its own (bds-jobs) uses these two; queue_run
 * does the same.
 */
int	 queue_listen(struct db *d, const char *channel, PGconn **listening, int *backend);
/* Read the socket and drop the notifications queued (they are only
 * wake-ups); how many there were. */
int	 queue_drain_notifies(PGconn *c);

/* ---- the runners' command line (queue_cli.c) ---- */

/*
 * What both runners (bds-deliver, bds-jobs) take: --config, --once,
 * --max-seconds, --poll-ms, --log, --help, --version, and --workers for a
 * runner that forks (workers_max > 0).
 */
struct queue_cli {
	const char		*config_path, *log_path;
	struct queue_opts	 o;		/* set by the runner before parsing */
	int			 workers;	/* --workers; 0: not given */
};

/*
 * Parse argv into cli (cli->o keeps the runner's defaults for what is not
 * given). -1: go on; else the exit status, its message printed (0 after
 * --help or --version, 2 for a bad option). usage prints the runner's help.
 */
int	 queue_cli_parse(struct queue_cli *, const char *prog, int argc, char **argv,
	    int workers_max, void (*usage)(FILE *));

/*
 * Load the configuration, open the log, initialise libsodium and libcurl,
 * and install the SIGTERM/SIGINT handler that sets *stop (with sa_flags),
 * SIGPIPE ignored and PGAPPNAME = prog. 0 ok; 1 with the message printed
 * and nothing left to free.
 */
int	 queue_cli_start(const struct queue_cli *, const char *prog, struct config *,
	    volatile sig_atomic_t *stop, int sa_flags);

#endif
