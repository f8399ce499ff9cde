/* The environments. See env.h. */
#include <string.h>

#include "core/env.h"
#include "core/errors.h"
#include "core/req.h"

const char *const env_names[ENV__MAX + 1] = {
	[ENV_SANDBOX] = "sandbox",
	[ENV_DEVELOPMENT] = "development",
	[ENV_PRODUCTION] = "production",
	[ENV__MAX] = NULL,
};

int
env_from_name(const char *name)
{
	for (int i = 0; name != NULL && i < ENV__MAX; i++)
		if (strcmp(name, env_names[i]) == 0)
			return i;
	return -1;
}

const char *
env_path_or_reply(struct req *r, int *status)
{
	int e = env_from_name(req_cap(r, "environment"));

	if (e >= 0)
		return env_names[e];
	*status = api_field_error(r, 400, ERR_VALIDATION_ERROR, "environment", "invalid_enum",
	    "environment must be one of: sandbox, development, production");
	return NULL;
}
