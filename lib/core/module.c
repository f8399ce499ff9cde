/* What the programs ask of the module list (core/module.h). */
#include <stddef.h>
#include <string.h>

#include "core/jobq.h"
#include "core/module.h"

const struct jobs_kind *
module_job_kind(const char *name)
{
	for (size_t m = 0; modules[m] != NULL; m++)
		for (const struct jobs_kind *const *k = modules[m]->job_kinds; k != NULL && *k != NULL;
		    k++)
			if (strcmp((*k)->name, name) == 0)
				return *k;
	return NULL;
}
