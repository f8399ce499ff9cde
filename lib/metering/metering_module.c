/* The metering module: the usage routes over usage_counters and the
 * other modules' computed metrics. */
#include <stddef.h>

#include "core/db.h"
#include "core/module.h"
#include "metering/metering.h"

const struct module metering_module = {
	.name = "metering",
	.stmt_sets = MODULE_SETS(&metering_stmt_set),
};
