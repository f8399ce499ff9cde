#ifndef BDS_WEBHOOKS_DELIVER_H
#define BDS_WEBHOOKS_DELIVER_H
/*
 * bds-deliver's webhook queue: the rows of `deliveries` (one per event and
 * subscription, written by events_emit in the event's transaction) sent as
 * signed POSTs, many at once through one libcurl multi handle.
 *
 *   claim	due rows, leased (FOR UPDATE SKIP LOCKED), joined with their
 *		event and subscription in the same statement;
 *   send	each one: the subscription disabled → failed untried; the URL
 *		checked again (urlsafe_check, pinned, no redirects: a refused
 *		URL is an attempt with status 0 and the reason); the DESIGN
 *		envelope of the event row signed with every live secret;
 *		up to webhook_concurrency in flight; 2xx within 10 s is success;
 *   outcome	2xx sent; 410 failed and the subscription disabled (with the
 *		reason); anything else retried on webhook_retry_schedule with
 *		±10% jitter (429/503: not before Retry-After, capped at 10 h),
 *		failed after the schedule's last step;
 *   record	the whole batch in one statement: every attempt into
 *		delivery_attempts (time, status code, latency, error) and the
 *		delivery's status, attempts, last_status_code, last_error.
 */
#include <stddef.h>

struct config;
struct queue_sender;
struct db_stmt_set;

/* Retry-After is honoured up to this many seconds. */
#define WEBHOOKS_RETRY_AFTER_MAX	36000

/*
 * Set up s from cfg (retry schedule, concurrency, batch, lease). cfg must
 * outlive the sender. 0 ok; -1 with err filled when a setting is invalid
 * or libcurl fails. Free with webhooks_sender_free().
 */
int	 webhooks_sender_init(struct queue_sender *s, const struct config *cfg,
	    char *err, size_t errlen);
/* Release what init made (the curl handles). Safe on a zeroed sender. */
void	 webhooks_sender_free(struct queue_sender *s);

/*
 * Parse a retry schedule "5,300,1800" (seconds, 1 to 32 steps, each 1 to
 * 86400) into out[0..max); returns the number of steps, -1 when malformed.
 */
int	 webhooks_schedule_parse(const char *text, int *out, size_t max);

extern const struct db_stmt_set webhooks_deliver_stmt_set;

#endif
