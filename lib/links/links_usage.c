/* The links' usage metric (core/module.h, lib/metering): active_links. */
#include <stddef.h>

#include "core/db.h"
#include "core/module.h"
#include "links/links.h"

enum { LINKS_USAGE_ACTIVE, LINKS_USAGE__MAX };
static struct db_stmt stmts[LINKS_USAGE__MAX] = {
	/*
	 * A level per UTC day up to today: the links made by the end of the
	 * day and active on it. No history of a link's status is kept: a
	 * link disconnected or revoked counts up to the day of its last change.
	 */
	[LINKS_USAGE_ACTIVE] = { "links_usage_active",
	    "SELECT to_char(days.d, 'YYYY-MM-DD'), l.environment, count(*) "
	    "FROM (SELECT $3::date + i AS d FROM generate_series(0, "
	    "LEAST($4::date, (now() AT TIME ZONE 'UTC')::date) - $3::date) AS i) days "
	    "JOIN links l ON l.client_id = $1 AND ($2::text IS NULL OR l.environment = $2) "
	    "AND l.created_at < (days.d + 1)::timestamp AT TIME ZONE 'UTC' "
	    "AND (l.status = 'ACTIVE' OR l.updated_at >= days.d::timestamp AT TIME ZONE 'UTC') "
	    "GROUP BY days.d, l.environment", 0 },
};
const struct db_stmt_set links_usage_stmt_set = { "links_usage", stmts, LINKS_USAGE__MAX };

const struct module_usage links_usage[] = {
	{ "active_links", &stmts[LINKS_USAGE_ACTIVE], 1 },
	{ NULL, NULL, 0 }
};
