/* Event retention: pg_partman's maintenance drops the expired months. */
#include <stddef.h>
#include <stdlib.h>

#include "core/db.h"
#include "events/events.h"
#include "events/events_sweep.h"

enum { ES_EXPIRED, ES_MAINTAIN, ES__MAX };
static struct db_stmt stmts[ES__MAX] = {
	/* the months of the three tables all of which is past retention */
	[ES_EXPIRED] = { "events_sweep_expired",
	    "SELECT count(*) FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid"
	    " WHERE i.inhparent IN ('events'::regclass, 'deliveries'::regclass,"
	    "  'delivery_attempts'::regclass) AND c.relname ~ '_p[0-9]{4}_[0-9]{2}$'"
	    " AND to_timestamp(right(c.relname, 7), 'YYYY_MM') + interval '1 month'"
	    "  < now() - interval '" EVENTS_KEPT_DAYS " days'", 0 },
	/* makes the months ahead (premake) and drops the expired ones */
	[ES_MAINTAIN] = { "events_sweep_maintain",
	    "SELECT partman.run_maintenance(p_analyze := false)", 0 },
};
const struct db_stmt_set events_sweep_stmt_set = { "events_sweep", stmts, ES__MAX };

long long
events_sweep(const struct config *cfg, struct db *d, struct arena *a)
{
	PGresult *res;
	long long n;

	(void)cfg;
	if ((res = db_exec(d, a, &stmts[ES_EXPIRED], 0, NULL)) == NULL)
		return -1;
	n = strtoll(PQgetvalue(res, 0, 0), NULL, 10);
	if (db_exec(d, a, &stmts[ES_MAINTAIN], 0, NULL) == NULL)
		return -1;
	return n;
}
