/* The webhooks' usage metric (core/module.h, lib/metering):
 * webhooks_delivered. */
#include <stddef.h>

#include "core/db.h"
#include "core/module.h"
#include "webhooks/webhooks.h"

enum { WEBHOOKS_USAGE_DELIVERED, WEBHOOKS_USAGE__MAX };
static struct db_stmt stmts[WEBHOOKS_USAGE__MAX] = {
	/* deliveries an endpoint acknowledged (2xx), by the UTC day they
	 * succeeded (their last change); a delivery's environment is its
	 * subscription's */
	[WEBHOOKS_USAGE_DELIVERED] = { "webhooks_usage_delivered",
	    "SELECT to_char((d.updated_at AT TIME ZONE 'UTC')::date, 'YYYY-MM-DD'), w.environment, "
	    "count(*) FROM deliveries d "
	    "JOIN webhooks w ON w.client_id = d.client_id AND w.id = d.webhook_id "
	    "WHERE d.client_id = $1 AND ($2::text IS NULL OR w.environment = $2) "
	    "AND d.status = 'succeeded' "
	    "AND d.updated_at >= $3::date::timestamp AT TIME ZONE 'UTC' "
	    "AND d.updated_at < ($4::date + 1)::timestamp AT TIME ZONE 'UTC' "
	    "GROUP BY 1, 2", 0 },
};
const struct db_stmt_set webhooks_usage_stmt_set = { "webhooks_usage", stmts,
	WEBHOOKS_USAGE__MAX };

const struct module_usage webhooks_usage[] = {
	{ "webhooks_delivered", &stmts[WEBHOOKS_USAGE_DELIVERED], 0 },
	{ NULL, NULL, 0 }
};
