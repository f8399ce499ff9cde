/* The jobs module: the runner's kinds (retrieval, connect, reconciliation)
 * and the connectors' records. */
#include <stddef.h>

#include "billers/billers_logos.h"
#include "core/config.h"
#include "core/db.h"
#include "core/module.h"
#include "imports/imports.h"
#include "jobs/connectors/connector.h"
#include "jobs/jobs.h"

/* name, fetch, apply, max_attempts, lease_s, failed */
/* a link's retrieval: connector -> bills (links); user_many's 1,000
 * statements fit well inside the lease */
static const struct jobs_kind retrieval = { "retrieval", jobs_retrieval_fetch,
	jobs_retrieval_apply, 5, 120, jobs_retrieval_failed };
/* a link session's login and MFA (the connect flow) */
static const struct jobs_kind connect = { "connect", jobs_connect_fetch, jobs_connect_apply,
	3, 60, NULL };
/* a link's bill reconciliation (jobs_reconcile.c) */
static const struct jobs_kind reconcile = { "reconcile", NULL, jobs_reconcile_apply, 5, 60, NULL };
/* a biller's logo fetched from the catalog's logo_url (jobs_logos.c) */
static const struct jobs_kind logo = { BILLERS_JOB_LOGO, jobs_logo_fetch, jobs_logo_apply,
	3, 60, NULL };
/* a bill import's extraction by bds-extract (jobs_extract.c): the lease
 * outlasts extract_timeout_s */
static const struct jobs_kind extract = { IMPORTS_JOB_EXTRACT, jobs_extract_fetch,
	jobs_extract_apply, 3, 300, jobs_extract_failed };
/* the runner's own tests (t/e2e/check_e2e_jobs): queued only by them */
static const struct jobs_kind test = { "test", jobs_test_fetch, jobs_test_apply, 3, 5, NULL };

/* where `make install` puts bds-extract (Makefile.am) */
#ifndef BDS_EXTRACT_PROGRAM
#define BDS_EXTRACT_PROGRAM	"/usr/local/libexec/bds/bds-extract"
#endif

#define S struct jobs_settings
const struct module jobs_module = {
	.name = "jobs",
	.stmt_sets = MODULE_SETS(&jobs_stmt_set, &connector_stmt_set),
	.job_kinds = MODULE_KINDS(&retrieval, &connect, &reconcile, &logo, &extract, &test),
	.settings = (const struct config_key[]){
		CONFIG_INT_KEY(S, jobs_workers, "2", 0, 0),
		CONFIG_STR_KEY(S, jobs_retry_schedule, "5,30,120,600,1800"),
		CONFIG_INT_KEY(S, jobs_poll_ms, "1000", 0, 0),
		CONFIG_INT_KEY(S, jobs_conversations, "200", 1, 10000),
		CONFIG_INT_KEY(S, biller_max_sessions, "4", 1, 1000),
		CONFIG_INT_KEY(S, client_max_sessions, "32", 1, 10000),
		CONFIG_INT_KEY(S, portal_connect_timeout_ms, "5000", 0, 0),
		CONFIG_INT_KEY(S, portal_timeout_ms, "30000", 0, 0),
		CONFIG_INT_KEY(S, portal_since_days, "35", 0, 0),
		CONFIG_STR_KEY(S, sandbox_basis_day, ""),
		CONFIG_STR_KEY(S, extract_program, BDS_EXTRACT_PROGRAM),
		CONFIG_INT_KEY(S, extract_timeout_s, "120", 1, 3600),
		CONFIG_INT_KEY(S, extract_cpu_s, "90", 1, 3600),
		CONFIG_INT_KEY(S, extract_memory_mb, "1536", 0, 65536),
		CONFIG_INT_KEY(S, extract_concurrency, "2", 1, 64),
		CONFIG_BOOL_KEY(S, extract_netns, "1"),
		{ NULL }
	},
	.settings_size = sizeof(S),
};
#undef S
