#ifndef BDS_ENV_H
#define BDS_ENV_H
/*
 * The three environments a client secret, a key and an event belong to
 * (SPEC "Environments"). The one list: validation enums, key prefixes and
 * the {environment} path segment all read it.
 */
struct req;

enum env {
	ENV_SANDBOX,
	ENV_DEVELOPMENT,
	ENV_PRODUCTION,
	ENV__MAX
};

/* "sandbox", "development", "production", then NULL (a vfield enumv). */
extern const char *const env_names[ENV__MAX + 1];

/* The environment named name, or -1. */
int	 env_from_name(const char *name);

/*
 * The path capture {environment} as its static name; NULL with the 400
 * already written (VALIDATION_ERROR, invalid_enum, naming "environment")
 * and *status set, when it names none.
 */
const char *env_path_or_reply(struct req *, int *status);

#endif
