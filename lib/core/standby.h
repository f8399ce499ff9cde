#ifndef BDS_STANDBY_H
#define BDS_STANDBY_H
/*
 * Reads on a standby (db.read_url, a route flagged ROUTE_READ).
 *
 * Read-your-writes: before the handler runs, one small query on the
 * primary takes the WAL position it has flushed (every write acknowledged
 * to anyone so far lies before it, the caller's own included), and the
 * standby serves the read only once it has replayed that far, which it
 * is asked for at most STANDBY_WAIT_MS (not at all while the position it
 * last reported is already past the primary's: replay only moves
 * forward). Not caught up by then, away, or
 * no standby configured: the primary serves it. The primary's query also
 * confirms a key taken from the worker's cache (auth.h), so a revoked key
 * is refused before anything is read.
 *
 *	standby_begin(r);
 *	rc = handler(r, out);
 *	if (standby_end(r, rc))	(the standby went away mid-read)
 *		rc = handler(r, out);	(again, on the primary)
 */
#include "core/db.h"

struct req;

/* How long a read waits for the standby to catch up before it goes to the
 * primary (ms). */
#define STANDBY_WAIT_MS	20

/* r->db becomes r->db_read when the standby has caught up (above); else it
 * stays the primary. */
void	 standby_begin(struct req *r);
/*
 * After the handler answered rc: r->db is the primary again. 1 when the
 * answer was the standby's connection lost (503) and nothing of it may be
 * kept: r's response (body, extra headers, error code) is reset for the
 * caller to run the handler again on the primary; else 0.
 */
int	 standby_end(struct req *r, int rc);

/* A write a read route makes (rare: the sandbox's sync statistics): on the
 * primary, where the rest of the read then stays; db_query's result. */
PGresult *standby_write(struct req *r, struct db_stmt *s, int nparams,
	    const char *const *params);

extern const struct db_stmt_set standby_stmt_set;

#endif
