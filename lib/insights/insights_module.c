/* The insights module: the rules' engine in bds-jobs and the API. */
#include <stddef.h>

#include "core/module.h"

const struct module insights_module = {
	.name = "insights",
};
