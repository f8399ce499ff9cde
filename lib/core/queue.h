#ifndef BDS_QUEUE_H
#define BDS_QUEUE_H
/*
 * bds-deliver's engine: one loop drains every outbox queue. A queue is a
 * "sender": the statements that claim and record its rows, its retry
 * schedule, and a send function that attempts a claimed batch (e-mail
 * today, webhooks beside it later). The engine owns what is common:
 *
 *   claim	due rows, leased for a while, in one statement (FOR UPDATE
 *		SKIP LOCKED), so deliverers running at once never share a row;
 *   record	each outcome: sent, retry after the schedule's delay, failed,
 *		or released untried; every record checks the claim is still
 *		ours (same id and attempt), so a lost lease records nothing;
 *   wait	LISTEN QUEUE_CHANNEL and sleep on the socket until a
 *		notification or the poll interval; a notification is only a
 *		wake-up, the claim finds everything;
 *   stop	at the time budget or when *stop is set (SIGTERM): the job in
 *		flight finishes, jobs of the batch not yet started are released.
 *
 * Every outbox table's insert trigger notifies QUEUE_CHANNEL.
 *
 * Adding a queue: a table with id, status ('pending' while queued),
 * attempts, next_attempt_at, lease_until, last_error; the five statements
 * below, or one record_batch function that records a whole batch in one
 * round trip (webhooks: an attempt log beside the outcome); a send function
 * (curl multi for many at once, Retry-After through retry_after); and one
 * more entry in bds-deliver's senders[]. The loop does not change.
 */
#include <signal.h>
#include <stddef.h>

#include <libpq-fe.h>

struct arena;
struct db;
struct db_stmt;

#define QUEUE_CHANNEL		"bds_outbox"

enum queue_outcome {
	QUEUE_RELEASED,	/* not attempted: back to the queue, attempt undone */
	QUEUE_SENT,		/* done */
	QUEUE_RETRY,		/* transient failure: again after the schedule's delay */
	QUEUE_FAILED,		/* permanent failure: never again */
	QUEUE__MAX
};

/* One claimed row. The sender sets outcome (and error) for each job it tries. */
struct queue_job {
	const char	*id;		/* the row id (claim column 0) */
	int		 attempt;	/* claim column 1: 1 on the first claim */
	const char	*kind;		/* claim column 2, for the log */
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
 *   claim   ($1 limit, $2 lease seconds) UPDATE ... RETURNING id, attempts,
 *           kind, then the sender's own columns; attempts + 1 on each claim
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
	volatile sig_atomic_t *stop;	/* set by a signal handler; may be NULL */
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

#endif
