/* The imports' usage metric (core/module.h, lib/metering):
 * bill_imports_processed. */
#include <stddef.h>

#include "core/db.h"
#include "core/module.h"
#include "imports/imports.h"

enum { IMPORTS_USAGE_PROCESSED, IMPORTS_USAGE__MAX };
static struct db_stmt stmts[IMPORTS_USAGE__MAX] = {
	/* imports that ended processed, by the UTC day they did: committed
	 * into a bill (committed_at) or rejected (their last change) */
	[IMPORTS_USAGE_PROCESSED] = { "imports_usage_processed",
	    "SELECT to_char((t.at AT TIME ZONE 'UTC')::date, 'YYYY-MM-DD'), t.environment, count(*) "
	    "FROM (SELECT environment, CASE status WHEN 'COMMITTED' THEN committed_at "
	    "ELSE updated_at END AS at FROM bill_imports "
	    "WHERE client_id = $1 AND ($2::text IS NULL OR environment = $2) "
	    "AND status IN ('COMMITTED', 'REJECTED')) t "
	    "WHERE t.at >= $3::date::timestamp AT TIME ZONE 'UTC' "
	    "AND t.at < ($4::date + 1)::timestamp AT TIME ZONE 'UTC' "
	    "GROUP BY 1, 2", 0 },
};
const struct db_stmt_set imports_usage_stmt_set = { "imports_usage", stmts, IMPORTS_USAGE__MAX };

const struct module_usage imports_usage[] = {
	{ "bill_imports_processed", &stmts[IMPORTS_USAGE_PROCESSED], 0 },
	{ NULL, NULL, 0 }
};
