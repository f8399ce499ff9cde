/* Every module's statements, so one test can prepare them all. */
#include <stddef.h>

#include "core/db.h"
#include "events/activity.h"
#include "core/auth.h"
#include "iam/iam_clients.h"
#include "events/events.h"
#include "core/health.h"
#include "iam/iam.h"
#include "core/idem.h"
#include "mail/mail.h"
#include "webhooks/webhooks.h"
#include "webhooks/webhooks_deliver.h"

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
	&webhooks_deliver_stmt_set,
	NULL
};
