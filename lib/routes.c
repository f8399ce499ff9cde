/*
 * The map of the API: every endpoint, its auth and its declared input.
 * The dispatcher enforces all of it before a handler runs.
 */
#include <stddef.h>

#include "health.h"
#include "router.h"

const struct route routes[] = {
	/* method  pattern               auth       body  query handler      flags */
	{ M_GET,   "/v1/health",         AUTH_NONE, NULL, NULL, health_get,  0 },
	{ M_GET,   "/v1/health/live",    AUTH_NONE, NULL, NULL, health_live, 0 },
};
const size_t routes_count = sizeof(routes) / sizeof(routes[0]);
