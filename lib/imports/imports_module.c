/* The imports module: bill imports, their upload, review and commit. */
#include <stddef.h>

#include "core/config.h"
#include "core/db.h"
#include "core/module.h"
#include "imports/imports.h"
#include "imports/imports_int.h"
#include "imports/imports_jobs.h"
#include "imports/imports_review.h"

#define S struct imports_settings
const struct module imports_module = {
	.name = "imports",
	.stmt_sets = MODULE_SETS(&imports_store_stmt_set,
	    &imports_extracted_stmt_set, &imports_portal_stmt_set, &imports_sweep_stmt_set,
	    &imports_review_stmt_set, &imports_usage_stmt_set),
	.sweeps = (const struct module_sweep[]){
		{ "bill imports expired", imports_expire_sweep },
		{ "bill import documents removed", imports_docs_sweep },
		{ NULL, NULL }
	},
	.settings = (const struct config_key[]){
		CONFIG_INT_KEY(S, imports_upload_ttl, "900", 60, 86400),
		CONFIG_INT_KEY(S, imports_document_url_ttl, "300", 10, 3600),
		CONFIG_INT_KEY(S, imports_expiry_days, "7", 1, 365),
		{ NULL }
	},
	.settings_size = sizeof(S),
	.usage = imports_usage,
};
#undef S
