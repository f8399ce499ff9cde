/* The sandboxes module: anonymous sandboxes, their claim and their sweeps. */
#include <limits.h>
#include <stddef.h>

#include "core/config.h"
#include "core/db.h"
#include "core/module.h"
#include "sandboxes/sandboxes.h"

#define S struct sandboxes_settings
const struct module sandboxes_module = {
	.name = "sandboxes",
	.stmt_sets = MODULE_SETS(&sandboxes_stmt_set),
	.sweeps = (const struct module_sweep[]){
		{ "sandboxes warned of their expiry", sandboxes_warn_due },
		{ "expired sandboxes deleted", sandboxes_delete_expired },
		{ NULL, NULL }
	},
	.settings = (const struct config_key[]){
		/* docs/sandboxes.md: the old key's grace after a claim */
		CONFIG_INT_KEY(S, sandboxes_previous_key_ttl, "86400", 1, 30 * 86400),
		{ NULL }
	},
	.settings_size = sizeof(S),
};
#undef S
