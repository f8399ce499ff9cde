/* The insights module: the rules' engine in bds-jobs and the API. */
#include <stddef.h>

#include "core/config.h"
#include "core/db.h"
#include "core/module.h"
#include "insights/insights.h"

/* name, fetch, apply, max_attempts, lease_s, failed */
/* a link's run: read, evaluate, reconcile (no network: apply only) */
static const struct jobs_kind run = { INSIGHTS_JOB_LINK, NULL, insights_run_apply, 5, 60, NULL };
/* a snoozed insight back to OPEN at snoozed_until */
static const struct jobs_kind wake = { INSIGHTS_JOB_WAKE, NULL, insights_wake_apply, 5, 60,
	NULL };

#define S struct insights_settings
const struct module insights_module = {
	.name = "insights",
	.stmt_sets = MODULE_SETS(&insights_stmt_set, &insights_engine_stmt_set,
	    &insights_api_stmt_set),
	.job_kinds = MODULE_KINDS(&run, &wake),
	.sweeps = (const struct module_sweep[]){
		{ "snoozed insights reopened", insights_wake_due },
		{ "links queued for their daily insights run", insights_daily },
		{ NULL, NULL }
	},
	/* the thresholds of the rules: docs/insights.md says why each */
	.settings = (const struct config_key[]){
		CONFIG_INT_KEY(S, insights_history_bills, "40", 20, 1000),
		CONFIG_INT_KEY(S, insights_duplicate_days, "5", 0, 60),
		CONFIG_INT_KEY(S, insights_baseline_bills, "6", 1, 24),
		CONFIG_INT_KEY(S, insights_baseline_min, "3", 1, 24),
		CONFIG_INT_KEY(S, insights_anomaly_pct, "30", 1, 1000),
		CONFIG_INT_KEY(S, insights_anomaly_mads, "3", 0, 100),
		CONFIG_INT_KEY(S, insights_overdue_days, "3", 0, 60),
		CONFIG_INT_KEY(S, insights_spike_pct, "50", 1, 1000),
		CONFIG_INT_KEY(S, insights_spike_units, "5", 0, 1000000),
		CONFIG_INT_KEY(S, insights_usage_bills, "12", 3, 24),
		CONFIG_INT_KEY(S, insights_usage_sds, "2", 1, 100),
		CONFIG_INT_KEY(S, insights_usage_floor_pct, "25", 0, 1000),
		{ NULL }
	},
	.settings_size = sizeof(S),
};
#undef S
