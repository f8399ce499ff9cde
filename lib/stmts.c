/* Every module's statements, so one test can prepare them all. */
#include <stddef.h>

#include "db.h"
#include "activity.h"
#include "auth.h"
#include "clients.h"
#include "events.h"
#include "health.h"
#include "iam.h"
#include "idem.h"
#include "mail.h"
#include "webhooks.h"
#include "webhook_deliver.h"

const struct db_stmt_set *const db_stmt_sets[] = {
	&health_stmt_set,
	&auth_stmt_set,
	&iam_common_stmt_set,
	&iam_auth_stmt_set,
	&iam_account_stmt_set,
	&mail_stmt_set,
	&idem_stmt_set,
	&iam_clients_stmt_set,
	&iam_secrets_stmt_set,
	&webhooks_stmt_set,
	&events_stmt_set,
	&activity_stmt_set,
	&webhook_deliver_stmt_set,
	NULL
};
