/* What the programs ask of the module list (core/module.h). */
#include <stddef.h>
#include <string.h>

#include "core/jobq.h"
#include "core/module.h"

/* Every module's job kinds in turn: the kind after (*m, *i), or NULL. */
static const struct jobs_kind *
next_kind(size_t *m, size_t *i)
{
	for (; modules[*m] != NULL; (*m)++, *i = 0) {
		const struct jobs_kind *const *k = modules[*m]->job_kinds;

		if (k != NULL && k[*i] != NULL)
			return k[(*i)++];
	}
	return NULL;
}

const struct jobs_kind *
module_job_kind(const char *name)
{
	const struct jobs_kind *k;
	size_t m = 0, i = 0;

	while ((k = next_kind(&m, &i)) != NULL)
		if (strcmp(k->name, name) == 0)
			return k;
	return NULL;
}

int
module_job_attempts_max(void)
{
	const struct jobs_kind *k;
	size_t m = 0, i = 0;
	int max = 1;

	while ((k = next_kind(&m, &i)) != NULL)
		if (k->max_attempts > max)
			max = k->max_attempts;
	return max;
}
