/*
 * The reconciliation job (kind "reconcile", subject a link id): queued by a
 * retrieval that stored a new statement and nightly by `bdsctl jobs`; runs
 * bills_reconcile_link (bills_status.h) as its apply, in the runner's one
 * transaction (it has no fetch: no network).
 * Idempotent: a bill is reverted at most once per newer statement, so a
 * retried or repeated job emits nothing more.
 */
#include <stddef.h>

#include "core/req.h"
#include "bills/bills_status.h"
#include "jobs/jobs.h"

enum jobs_outcome
jobs_reconcile_apply(struct req *r, struct jobs_job *job)
{
	if (job->client_id == NULL || job->subject_id == NULL) {
		job->error = "reconcile job without a link";
		return JOBS_FAILED;
	}
	if (bills_reconcile_link(r, job->client_id, job->subject_id) < 0) {
		job->error = "database failure";
		return JOBS_RETRY;
	}
	return JOBS_DONE;
}
