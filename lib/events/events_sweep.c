/* Event retention: the 30-day purge. */
#include <stddef.h>

#include "core/db.h"
#include "events/events_sweep.h"

enum { ES_PURGE, ES__MAX };
static struct db_stmt stmts[ES__MAX] = {
	/* the created_at index (sql/008) makes it a range scan */
	[ES_PURGE] = { "events_sweep_purge",
	    "DELETE FROM events WHERE created_at < now() - interval '30 days'", 0 },
};
const struct db_stmt_set events_sweep_stmt_set = { "events_sweep", stmts, ES__MAX };

long long
events_sweep(const struct config *cfg, struct db *d, struct arena *a)
{
	(void)cfg;
	return db_exec_count(d, a, &stmts[ES_PURGE], 0, NULL);
}
