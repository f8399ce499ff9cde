/* Event retention: pg_partman's maintenance drops the expired months. */
#include <stddef.h>
#include <stdlib.h>

#include "core/db.h"
#include "events/events.h"
#include "events/events_sweep.h"

enum { ES_PAST, ES_MAINTAIN, ES_ORPHANS, ES__MAX };
static struct db_stmt stmts[ES__MAX] = {
	/* the past months of the three tables (maintenance makes only months
	 * ahead, so what it dropped is how many fewer of these there are: the
	 * retention rule itself is pg_partman's, in part_config) */
	[ES_PAST] = { "events_sweep_past",
	    "SELECT count(*) FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid"
	    " WHERE i.inhparent IN ('events'::regclass, 'deliveries'::regclass,"
	    "  'delivery_attempts'::regclass) AND c.relname ~ '_p[0-9]{4}_[0-9]{2}$'"
	    " AND to_timestamp(right(c.relname, 7), 'YYYY_MM') < date_trunc('month', now())", 0 },
	/* makes the months ahead (premake) and drops the expired ones */
	[ES_MAINTAIN] = { "events_sweep_maintain",
	    "SELECT partman.run_maintenance(p_analyze := false)", 0 },
	/* a delivery still pending whose event's month was dropped (a replay
	 * of an old event, made in a later month): DROP TABLE fires no row
	 * trigger, so the cascade does not reach it, and the deliverer, which
	 * sends the event's body, would pass over it for ever. It fails,
	 * saying why; its attempts stay. */
	[ES_ORPHANS] = { "events_sweep_orphans",
	    "UPDATE deliveries d SET status = 'failed', lease_until = NULL, updated_at = now(),"
	    " last_error = 'the event is past its retention'"
	    " WHERE d.status = 'pending' AND NOT EXISTS (SELECT 1 FROM events e"
	    "  WHERE e.client_id = d.client_id AND e.id = d.event_id)", 0 },
};
const struct db_stmt_set events_sweep_stmt_set = { "events_sweep", stmts, ES__MAX };

static long long
past_months(struct db *d, struct arena *a)
{
	PGresult *res = db_exec(d, a, &stmts[ES_PAST], 0, NULL);

	return res != NULL ? strtoll(PQgetvalue(res, 0, 0), NULL, 10) : -1;
}

long long
events_sweep(const struct config *cfg, struct db *d, struct arena *a)
{
	long long before, after;

	(void)cfg;
	if ((before = past_months(d, a)) < 0 ||
	    db_exec(d, a, &stmts[ES_MAINTAIN], 0, NULL) == NULL ||
	    (after = past_months(d, a)) < 0)
		return -1;
	return before - after;
}

long long
events_sweep_orphans(const struct config *cfg, struct db *d, struct arena *a)
{
	PGresult *res;

	(void)cfg;
	if ((res = db_exec(d, a, &stmts[ES_ORPHANS], 0, NULL)) == NULL)
		return -1;
	return strtoll(PQcmdTuples(res), NULL, 10);
}
