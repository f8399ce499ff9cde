/*
 * Every module's statements: one descriptor per module (its name and its
 * statement sets), so one test (t/e2e/check_e2e_schema) prepares every
 * statement of every module against the migrated schema. A new module
 * adds its line here and its sets to it; nothing else knows the list.
 */
#include <stddef.h>

#include "billers/billers.h"
#include "bills/bills.h"
#include "bills/bills_sync.h"
#include "bills/bills_statement.h"
#include "bills/bills_status.h"
#include "core/auth.h"
#include "core/db.h"
#include "core/health.h"
#include "core/idem.h"
#include "core/jobq.h"
#include "core/migrate.h"
#include "events/activity.h"
#include "events/events.h"
#include "events/events_sweep.h"
#include "iam/iam.h"
#include "iam/iam_clients.h"
#include "iam/iam_ops.h"
#include "jobs/jobs.h"
#include "links/links.h"
#include "links/links_connect.h"
#include "mail/mail.h"
#include "webhooks/webhooks.h"
#include "webhooks/webhooks_deliver.h"
/* the bill read API, link access tokens */
#include "bills/bills_api.h"
#include "links/links_auth.h"
#include "rtl/rtl.h"	/* requests to link, biller discovery */
#include "links/links_page.h"	/* the connect page's side of the API */
/* the connectors (DOMAIN.md "Connectors and retrieval") */
#include "jobs/connectors/connector.h"

static const struct db_stmt_set *const core_sets[] = {
	&health_stmt_set, &auth_stmt_set, &idem_stmt_set, &migrate_stmt_set, &jobq_stmt_set,
	NULL
};
static const struct db_stmt_set *const events_sets[] = {
	&events_stmt_set, &activity_stmt_set, &events_sweep_stmt_set, NULL
};
static const struct db_stmt_set *const mail_sets[] = {
	&mail_stmt_set, NULL
};
static const struct db_stmt_set *const iam_sets[] = {
	&iam_common_stmt_set, &iam_auth_stmt_set, &iam_account_stmt_set,
	&iam_clients_stmt_set, &iam_secrets_stmt_set, &iam_ops_stmt_set, &iam_throttle_stmt_set, NULL
};
static const struct db_stmt_set *const webhooks_sets[] = {
	&webhooks_stmt_set, &webhooks_deliver_stmt_set, NULL
};
static const struct db_stmt_set *const billers_sets[] = {
	&billers_stmt_set, &billers_admin_stmt_set, NULL
};
static const struct db_stmt_set *const links_sets[] = {
	&links_stmt_set, &links_api_stmt_set, &links_sandbox_stmt_set,
	&links_tokens_stmt_set, &links_sessions_stmt_set, &links_exchange_stmt_set,
	&links_vault_stmt_set, &links_refresh_stmt_set, &links_attempts_stmt_set, NULL
};
static const struct db_stmt_set *const bills_sets[] = {
	&bills_stmt_set,
	&bills_sync_stmt_set,	/* the bills sync */
	&bills_statement_stmt_set,	/* statement documents */
	&bills_docs_stmt_set,		/* the document store's sweep */
	NULL
};
/* the bill status lifecycle */
static const struct db_stmt_set *const bills_status_sets[] = {
	&bills_status_stmt_set, NULL
};
static const struct db_stmt_set *const jobs_sets[] = {
	&jobs_stmt_set, NULL
};
/* the bill read API and the link access token */
static const struct db_stmt_set *const bills_read_sets[] = {
	&bills_api_stmt_set, &links_auth_stmt_set, NULL
};

/* requests to link and biller discovery (lib/rtl) */
static const struct db_stmt_set *const rtl_sets[] = {
	&rtl_stmt_set, &rtl_discovery_stmt_set, &rtl_onboard_stmt_set, NULL
};
/* the connect page's frame policy and session extras (links_page) */
static const struct db_stmt_set *const links_page_sets[] = {
	&links_page_stmt_set, NULL
};
/* the connectors: what the jobs keep for them */
static const struct db_stmt_set *const connector_sets[] = {
	&connector_stmt_set, NULL
};

const struct db_module db_modules[] = {
	{ "core", core_sets },
	{ "events", events_sets },
	{ "mail", mail_sets },
	{ "iam", iam_sets },
	{ "webhooks", webhooks_sets },
	{ "billers", billers_sets },
	{ "links", links_sets },
	{ "bills", bills_sets },
	{ "jobs", jobs_sets },
	{ "bills-read", bills_read_sets },	/* the read API, link access tokens */
	{ "bills_status", bills_status_sets },	/* the bill status lifecycle */
	{ "rtl", rtl_sets },
	{ "links_page", links_page_sets },	/* the connect page */
	{ "connector", connector_sets },	/* the connectors' records */
	{ NULL, NULL }
};
