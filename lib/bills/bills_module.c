/* The bills module: bills, sync, statements, status, the read API. */
#include <stddef.h>

#include "bills/bills.h"
#include "bills/bills_api.h"
#include "bills/bills_statement.h"
#include "bills/bills_status.h"
#include "bills/bills_sync.h"
#include "core/db.h"
#include "core/module.h"

const struct module bills_module = {
	.name = "bills",
	.stmt_sets = MODULE_SETS(&bills_stmt_set, &bills_sync_stmt_set, &bills_statement_stmt_set,
	    &bills_docs_stmt_set, &bills_status_stmt_set, &bills_status_store_stmt_set,
	    &bills_status_api_stmt_set, &bills_api_stmt_set, &bills_dupes_stmt_set, &bills_import_stmt_set,
	    &bills_usage_stmt_set),
	.usage = bills_usage,
	.sweeps = (const struct module_sweep[]){
		{ "links queued for reconciliation", bills_reconcile_enqueue },
		{ "unreferenced statement documents removed", bills_docs_sweep },
		{ NULL, NULL }
	},
};
