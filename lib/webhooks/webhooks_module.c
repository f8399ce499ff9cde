/* The webhooks module: subscriptions and their signed delivery. */
#include <stddef.h>

#include "core/config.h"
#include "core/db.h"
#include "core/module.h"
#include "webhooks/webhooks.h"
#include "webhooks/webhooks_deliver.h"

#define S struct webhooks_settings
const struct module webhooks_module = {
	.name = "webhooks",
	.stmt_sets = MODULE_SETS(&webhooks_stmt_set, &webhooks_deliver_stmt_set,
	    &webhooks_usage_stmt_set, &webhooks_inbox_stmt_set),
	.settings = (const struct config_key[]){
		CONFIG_STR_KEY(S, webhook_retry_schedule, "5,300,1800,7200,18000,36000,36000"),
		CONFIG_INT_KEY(S, webhook_concurrency, "64", 0, 0),
		CONFIG_INT_KEY(S, webhook_batch, "256", 0, 0),
		CONFIG_INT_KEY(S, webhook_lease, "120", 0, 0),
		CONFIG_INT_KEY(S, webhook_test_slots, "0", 0, 0),
		{ NULL }
	},
	.settings_size = sizeof(S),
	.usage = webhooks_usage,
};
#undef S
