/* The connectors by name (billers.connector). See connector.h. */
#include <stddef.h>
#include <string.h>

#include "jobs/connectors/connector.h"

/* Every connector: a new one is one line. */
static const struct connector *const connectors[] = {
	&connector_sandbox,
	&connector_portal,
};

const struct connector *
connector_find(const char *name)
{
	size_t i;

	if (name == NULL)
		return NULL;
	for (i = 0; i < sizeof(connectors) / sizeof(connectors[0]); i++)
		if (strcmp(connectors[i]->name, name) == 0)
			return connectors[i];
	return NULL;
}

void
connector_session_init(struct connector_session *s, const struct connector_target *t)
{
	memset(s, 0, sizeof(*s));
	s->target = t;
}

const char *
connector_status_name(enum connector_status st)
{
	static const char *const names[CONN__MAX] = {
		[CONN_OK] = "ok",
		[CONN_MFA_REQUIRED] = "mfa_required",
		[CONN_INVALID_CREDENTIALS] = "invalid_credentials",
		[CONN_ACCOUNT_LOCKED] = "account_locked",
		[CONN_MFA_FAILED] = "mfa_failed",
		[CONN_UNAVAILABLE] = "unavailable",
		[CONN_DEGRADED] = "degraded",
		[CONN_EXPIRED] = "expired",
		[CONN_TRANSIENT] = "transient",
	};

	return (unsigned)st < CONN__MAX ? names[st] : "unknown";
}
