/* The bills' usage metric (core/module.h, lib/metering): bills_retrieved. */
#include <stddef.h>

#include "core/db.h"
#include "core/module.h"
#include "bills/bills.h"

enum { BILLS_USAGE_RETRIEVED, BILLS_USAGE__MAX };
static struct db_stmt stmts[BILLS_USAGE__MAX] = {
	/* bills a link (a connector or the sandbox) brought, by the UTC day
	 * they were first stored; imported bills are bill_imports_processed */
	[BILLS_USAGE_RETRIEVED] = { "bills_usage_retrieved",
	    "SELECT to_char((created_at AT TIME ZONE 'UTC')::date, 'YYYY-MM-DD'), environment, "
	    "count(*) FROM bills "
	    "WHERE client_id = $1 AND ($2::text IS NULL OR environment = $2) "
	    "AND source <> 'import' "
	    "AND created_at >= $3::date::timestamp AT TIME ZONE 'UTC' "
	    "AND created_at < ($4::date + 1)::timestamp AT TIME ZONE 'UTC' "
	    "GROUP BY 1, 2", 0 },
};
const struct db_stmt_set bills_usage_stmt_set = { "bills_usage", stmts, BILLS_USAGE__MAX };

const struct module_usage bills_usage[] = {
	{ "bills_retrieved", &stmts[BILLS_USAGE_RETRIEVED], 0 },
	{ NULL, NULL, 0 }
};
