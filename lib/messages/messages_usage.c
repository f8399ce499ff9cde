/* The customer messages' usage metric (core/module.h, lib/metering): messages_sent. */
#include <stddef.h>

#include "core/db.h"
#include "core/module.h"
#include "messages/messages.h"

enum { MESSAGES_USAGE_SENT, MESSAGES_USAGE__MAX };
static struct db_stmt stmts[MESSAGES_USAGE__MAX] = {
	/* accepted messages by the UTC day they were sent (sql/130's
	 * customer_messages_sent); a suppressed message is not sent */
	[MESSAGES_USAGE_SENT] = { "messages_usage_sent",
	    "SELECT to_char(day, 'YYYY-MM-DD'), environment, value"
	    " FROM customer_messages_sent($1, $2::text, $3::date, $4::date)", 0 },
};
const struct db_stmt_set messages_usage_stmt_set = { "messages_usage", stmts,
	MESSAGES_USAGE__MAX };

const struct module_usage messages_usage[] = {
	{ "messages_sent", &stmts[MESSAGES_USAGE_SENT], 0 },
	{ NULL, NULL, 0 }
};
