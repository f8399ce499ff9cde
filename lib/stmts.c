/* Every module's statements, so one test can prepare them all. */
#include <stddef.h>

#include "db.h"
#include "health.h"

const struct db_stmt_set *const db_stmt_sets[] = {
	&health_stmt_set,
	NULL
};
