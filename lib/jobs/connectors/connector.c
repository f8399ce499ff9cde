/* The connectors by name (billers.connector). See connector.h. */
#include <stddef.h>
#include <string.h>

#include "jobs/connectors/connector.h"

/* Every connector: a new one is one line. */
static const struct connector *const connectors[] = {
	&connector_sandbox,
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
