#ifndef BDS_JOBQ_H
#define BDS_JOBQ_H
/*
 * The jobs queue of bds-jobs (table jobs, sql/013_jobs_bills.sql): every
 * module queues its background work here (retrieval, connect, later
 * imports, insights, expiry); bds-jobs runs it with the leased queue of
 * core/queue.c and the kinds table of lib/jobs/jobs.c.
 */
struct req;
struct json_object;
struct db_stmt_set;

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
