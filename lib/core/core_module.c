/* The core module: the request path's own statements and its sweep. */
#include <stddef.h>

#include "core/auth.h"
#include "core/db.h"
#include "core/health.h"
#include "core/idem.h"
#include "core/jobq.h"
#include "core/meter.h"
#include "core/migrate.h"
#include "core/module.h"
#include "core/standby.h"

const struct module core_module = {
	.name = "core",
	.stmt_sets = MODULE_SETS(&health_stmt_set, &auth_stmt_set, &idem_stmt_set,
	    &migrate_stmt_set, &jobq_stmt_set, &meter_stmt_set, &standby_stmt_set),
	.sweeps = (const struct module_sweep[]){
		{ "expired idempotency keys removed", idem_sweep },
		{ NULL, NULL }
	},
};
