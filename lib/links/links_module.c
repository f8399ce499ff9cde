/* The links module: links, the connect flow, link access tokens, refresh. */
#include <limits.h>
#include <stddef.h>

#include "core/config.h"
#include "core/db.h"
#include "core/module.h"
#include "links/links.h"
#include "links/links_attempts.h"
#include "links/links_auth.h"
#include "links/links_connect.h"
#include "links/links_page.h"

#define S struct links_settings
const struct module links_module = {
	.name = "links",
	.stmt_sets = MODULE_SETS(&links_stmt_set, &links_api_stmt_set, &links_sandbox_stmt_set,
	    &links_tokens_stmt_set, &links_sessions_stmt_set, &links_exchange_stmt_set,
	    &links_vault_stmt_set, &links_refresh_stmt_set, &links_attempts_stmt_set,
	    &links_auth_stmt_set, &links_page_stmt_set, &links_usage_stmt_set),
	.sweeps = (const struct module_sweep[]){
		{ "secrets of expired connect sessions removed", links_sessions_sweep },
		{ "connect failures out of their window removed", links_attempts_sweep },
		{ "links queued for refresh", links_refresh_due },
		{ NULL, NULL }
	},
	.settings = (const struct config_key[]){
		CONFIG_STR_KEY(S, link_url, "https://link.bds.example"),
		CONFIG_INT_KEY(S, refresh_interval_s, "86400", 60, INT_MAX),
		CONFIG_INT_KEY(S, refresh_jitter_pct, "20", 0, 50),
		CONFIG_INT_KEY(S, refresh_backoff_s, "300", 0, 0),
		CONFIG_INT_KEY(S, refresh_backoff_max_s, "21600", 0, 0),
		CONFIG_INT_KEY(S, degraded_after_s, "86400", 0, 0),
		{ NULL }
	},
	.settings_size = sizeof(S),
	.usage = links_usage,
};
#undef S
