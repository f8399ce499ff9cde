/* The rtl module: requests to link and biller discovery. */
#include <stddef.h>

#include "core/config.h"
#include "core/db.h"
#include "core/module.h"
#include "rtl/rtl.h"
#include "rtl/rtl_jobs.h"

#define S struct rtl_settings
const struct module rtl_module = {
	.name = "rtl",
	.stmt_sets = MODULE_SETS(&rtl_stmt_set, &rtl_discovery_stmt_set, &rtl_onboard_stmt_set),
	.job_kinds = MODULE_KINDS(&rtl_session_started_kind, &rtl_link_activated_kind),
	.sweeps = (const struct module_sweep[]){
		{ "requests to link expired", rtl_expire },
		{ NULL, NULL }
	},
	.settings = (const struct config_key[]){
		CONFIG_INT_KEY(S, rtl_expiry_days, "30", 0, 0),
		CONFIG_STR_KEY(S, discovery_hosts, ""),
		{ NULL }
	},
	.settings_size = sizeof(S),
};
#undef S
