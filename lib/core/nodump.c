/* No core dumps (nodump.h). */
#include <sys/prctl.h>
#include <sys/resource.h>

#include "core/nodump.h"

int
nodump(void)
{
	const struct rlimit none = { 0, 0 };

	if (setrlimit(RLIMIT_CORE, &none) != 0)
		return -1;
	return prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) == 0 ? 0 : -1;
}
