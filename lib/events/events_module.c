/* The events module: the outbox, the activity feed and their sweep. */
#include <stddef.h>

#include "core/db.h"
#include "core/module.h"
#include "events/activity.h"
#include "events/events.h"
#include "events/events_sweep.h"

const struct module events_module = {
	.name = "events",
	.stmt_sets = MODULE_SETS(&events_stmt_set, &activity_stmt_set, &events_sweep_stmt_set),
	.sweeps = (const struct module_sweep[]){
		{ "expired months of events and deliveries dropped", events_sweep },
		{ "pending deliveries of expired events failed", events_sweep_orphans },
		{ NULL, NULL }
	},
};
