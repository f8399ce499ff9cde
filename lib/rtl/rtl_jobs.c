/*
 * The job kinds of lib/rtl (rtl_jobs.h): the connect flow's notifications,
 * applied in the job's one transaction with the events they cause.
 */
#include <stddef.h>

#include "core/jobq.h"
#include "core/json.h"
#include "core/req.h"
#include "links/links_connect.h"
#include "rtl/rtl_int.h"
#include "rtl/rtl_jobs.h"

static enum jobs_outcome
session_started_apply(struct req *r, struct jobs_job *job)
{
	if (job->client_id == NULL || job->subject_id == NULL) {
		job->error = "session_started job without a link token";
		return JOBS_FAILED;
	}
	if (rtl_session_started(r, job->client_id, job->subject_id) != 0) {
		job->error = "database failure";
		return JOBS_RETRY;
	}
	return JOBS_DONE;
}

static enum jobs_outcome
link_activated_apply(struct req *r, struct jobs_job *job)
{
	struct rtl_linked l = {
		.client_id = job->client_id,
		.environment = job->environment,
		.link_id = json_get_str(job->payload, "link_id"),
		.request_to_link_id = json_get_str(job->payload, "request_to_link_id"),
		.link_token_id = job->subject_id,
		.client_user_id = json_get_str(job->payload, "client_user_id"),
		.biller_id = json_get_str(job->payload, "biller_id"),
		.hosted = json_get_bool(job->payload, "hosted", 0),
	};

	if (l.client_id == NULL || l.environment == NULL || l.link_id == NULL ||
	    l.request_to_link_id == NULL || l.link_token_id == NULL) {
		job->error = "link_activated job without its link, token or request";
		return JOBS_FAILED;
	}
	if (rtl_linked(r, &l) != 0) {
		job->error = "database failure";
		return JOBS_RETRY;
	}
	return JOBS_DONE;
}

/* name, fetch, apply, max_attempts, lease_s, failed: no fetch, no biller */
const struct jobs_kind rtl_session_started_kind = { LINKS_JOB_SESSION_STARTED, NULL,
	session_started_apply, 5, 60, NULL };
const struct jobs_kind rtl_link_activated_kind = { LINKS_JOB_LINK_ACTIVATED, NULL,
	link_activated_apply, 5, 60, NULL };
