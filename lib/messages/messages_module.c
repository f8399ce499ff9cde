/* The customer messages module: its routes' statements, its usage metric. */
#include <stddef.h>

#include "core/db.h"
#include "core/module.h"
#include "messages/messages.h"

const struct module messages_module = {
	.name = "messages",
	.stmt_sets = MODULE_SETS(&messages_stmt_set, &messages_usage_stmt_set),
	.usage = messages_usage,
};
