/* The billers module: the biller catalog. */
#include <stddef.h>

#include "billers/billers.h"
#include "billers/billers_logos.h"
#include "core/db.h"
#include "core/module.h"

const struct module billers_module = {
	.name = "billers",
	.stmt_sets = MODULE_SETS(&billers_stmt_set, &billers_admin_stmt_set,
	    &billers_logos_stmt_set),
};
