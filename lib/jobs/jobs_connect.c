/*
 * The connect job (kind "connect", subject: a link session): logs in to the
 * biller with the session's sealed credentials, in bds-jobs and never in an
 * API worker, and records the outcome on the session. On success the link
 * is made (create mode: links_create, then link.completed once) or repaired
 * in place (update mode: same link id, no second link.completed), and the
 * session gets its public token or, in a hosted flow, is exchanged here.
 */
#include <string.h>

#include "core/req.h"
#include "jobs/connectors/connector.h"
#include "jobs/jobs.h"
#include "links/links.h"
#include "links/links_connect.h"

/* The session's error_code for a failed login, and whether it counts as one
 * of the failed logins that end the session. */
static const char *
failure(enum connector_status st, int *counts)
{
	*counts = 0;
	switch (st) {
	case CONN_INVALID_CREDENTIALS:
		*counts = 1;
		return "INVALID_CREDENTIALS";
	case CONN_ACCOUNT_LOCKED:
		return "ACCOUNT_LOCKED";
	case CONN_MFA_FAILED:
		*counts = 1;
		return "MFA_FAILED";
	default:
		return "BILLER_UNAVAILABLE";
	}
}

static enum jobs_outcome
retry(struct jobs_job *job, const char *why)
{
	job->error = why;
	return JOBS_RETRY;
}

enum jobs_outcome
jobs_connect_run(struct req *r, struct jobs_job *job)
{
	struct links_connect_job j;
	struct connector_session cs = { 0 };
	const struct connector *c;
	enum connector_status st;
	const char *link_id;
	int rc, counts;

	if ((rc = links_connect_job_load(r, job->client_id, job->subject_id, &j)) < 0)
		return retry(job, "cannot load the link session");
	if (rc == 0)
		return JOBS_DONE;	/* exited, expired or already done */
	if ((c = connector_find(j.connector)) == NULL) {
		if (links_connect_job_failed(r, &j, "BILLER_UNAVAILABLE", 0) != 0)
			return retry(job, "cannot record the outcome");
		return JOBS_DONE;
	}
	if ((rc = jobs_biller_slot(r, job, c, j.biller_id)) != 1)
		return rc == 0 ? JOBS_DEFER : retry(job, "cannot take a biller session slot");
	st = c->login(r->arena, j.username, j.password, &cs);
	if (st == CONN_MFA_REQUIRED && j.mfa_answer != NULL)
		st = c->mfa(r->arena, &cs, j.mfa_answer);
	if (st == CONN_MFA_REQUIRED || (st == CONN_MFA_FAILED && cs.mfa_type != NULL)) {
		/* ask (again): a wrong answer is shown as MFA_FAILED and counted */
		if (links_connect_job_mfa(r, &j, cs.mfa_type, cs.mfa_prompt,
		    st == CONN_MFA_FAILED ? "MFA_FAILED" : NULL) != 0)
			return retry(job, "cannot record the outcome");
		return JOBS_DONE;
	}
	if (st != CONN_OK) {
		const char *code = failure(st, &counts);

		if (links_connect_job_failed(r, &j, code, counts) != 0)
			return retry(job, "cannot record the outcome");
		return JOBS_DONE;
	}

	if (strcmp(j.mode, "update") == 0) {
		if (links_repair(r, j.client_id, j.update_link_id, j.username, j.password) != 0)
			return retry(job, "cannot repair the link");
		link_id = j.update_link_id;
	} else {
		struct links_new n = { j.client_id, j.environment, j.client_user_id, j.biller_id,
			j.scopes, j.username, j.password, j.link_token_id };
		struct links_row row;

		if (links_create(r, &n, &row) != 0 ||
		    links_completed(r, j.client_id, row.id) != 0)
			return retry(job, "cannot create the link");
		link_id = row.id;
	}
	if (links_connect_job_connected(r, &j, link_id) != 0)
		return retry(job, "cannot record the outcome");
	return JOBS_DONE;
}
