/* The iam module: developer accounts, sessions, clients and secrets. */
#include <stddef.h>

#include "core/config.h"
#include "core/db.h"
#include "core/module.h"
#include "iam/iam.h"
#include "iam/iam_clients.h"
#include "iam/iam_ops.h"

static const char *const billings[] = { "manual", "none", NULL };

#define S struct iam_settings
const struct module iam_module = {
	.name = "iam",
	.stmt_sets = MODULE_SETS(&iam_common_stmt_set, &iam_auth_stmt_set, &iam_account_stmt_set,
	    &iam_clients_stmt_set, &iam_secrets_stmt_set, &iam_ops_stmt_set, &iam_throttle_stmt_set),
	.sweeps = (const struct module_sweep[]){
		{ "stale sign-in throttles removed", iam_ops_sweep_throttles },
		{ "ended sessions removed", iam_ops_sweep_sessions },
		{ NULL, NULL }
	},
	.settings = (const struct config_key[]){
		CONFIG_ONEOF_KEY(S, billing, "manual", billings),
		CONFIG_BOOL_KEY(S, cookie_secure, "1"),
		CONFIG_INT_KEY(S, clients_max, "25", 0, 0),
		CONFIG_STR_KEY(S, legal_url, "${link_url}/legal"),
		{ NULL }
	},
	.settings_size = sizeof(S),
};
#undef S
