/*
 * The connect job (kind "connect", subject: a link session): logs in to the
 * biller with the session's sealed credentials, in bds-jobs and never in an
 * API worker, and records the outcome on the session. On success the link
 * is made (create mode: links_create, then link.completed once) or repaired
 * in place (update mode: same link id, no second link.completed), and the
 * session gets its public token or, in a hosted flow, is exchanged here.
 *
 * MFA. A biller whose challenge lives between runs (the portal's challenge
 * id, s.mfa_state) has it kept sealed with the session
 * (connector_challenge_put) while the user reads the prompt; the user's
 * answer then goes to that very challenge in the next run, never to a new
 * one. A wrong answer ends that challenge: the job logs in again for a new
 * one and shows it with MFA_FAILED (counted as a failed login). A new
 * connect (no answer yet) drops any kept challenge. The sandbox logs in and
 * answers in one run. A "remember this device" token the biller gives is
 * stored sealed with the link's credentials.
 */
#include <string.h>
#include <time.h>

#include "core/req.h"
#include "jobs/connectors/connector.h"
#include "jobs/jobs.h"
#include "links/links.h"
#include "links/links_connect.h"

#define CONNECT_MARGIN_S	20	/* no biller call starts this close to the lease's end */

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

/*
 * Log in, or answer the kept challenge: the connector's status, *wrong = 1
 * when the user's answer was refused; -1 (as a status) on a database
 * failure.
 */
static int
attempt(struct req *r, const struct connector *c, const struct links_connect_job *j,
    struct connector_session *cs, int *wrong)
{
	enum connector_status st;
	const char *kept;
	int err;

	*wrong = 0;
	if (j->mfa_answer == NULL) {
		/* a new login: a challenge of an earlier one is void */
		if (connector_challenge_drop(r, j->client_id, j->session_id) != 0)
			return -1;
		return c->login(r->arena, cs, j->username, j->password);
	}
	if ((kept = connector_challenge_take(r, j->client_id, j->session_id, &err)) == NULL &&
	    err)
		return -1;
	if (kept != NULL) {
		cs->mfa_state = kept;
		if ((st = c->mfa(r->arena, cs, j->mfa_answer)) != CONN_MFA_FAILED)
			return st;
		/* that challenge is spent: a new one for the next answer */
		*wrong = 1;
		return c->login(r->arena, cs, j->username, j->password);
	}
	st = c->login(r->arena, cs, j->username, j->password);
	/* a challenge that only lives in this run (the sandbox) takes the
	 * answer now; a kept one that was lost is shown anew */
	if (st == CONN_MFA_REQUIRED && cs->mfa_state == NULL) {
		st = c->mfa(r->arena, cs, j->mfa_answer);
		*wrong = st == CONN_MFA_FAILED;
	}
	return st;
}

enum jobs_outcome
jobs_connect_run(struct req *r, struct jobs_job *job)
{
	const struct jobs_kind *kind = jobs_kind_find("connect");
	struct connector_target t;
	struct connector_session cs;
	struct links_connect_job j;
	const struct connector *c;
	struct timespec now;
	const char *link_id;
	int rc, counts, wrong, st;

	if ((rc = links_connect_job_load(r, job->client_id, job->subject_id, &j)) < 0)
		return retry(job, "cannot load the link session");
	if (rc == 0)
		return JOBS_DONE;	/* exited, expired or already done */
	/* a biller the session's environment may not link (the catalog
	 * changed after the connect call): no login, as for an unknown one */
	if (!j.linkable || (c = connector_find(j.connector)) == NULL ||
	    (rc = connector_target_load(r, j.biller_id, &t)) == 0) {
		if (links_connect_job_failed(r, &j, "BILLER_UNAVAILABLE", 0) != 0)
			return retry(job, "cannot record the outcome");
		return JOBS_DONE;
	}
	if (rc < 0)
		return retry(job, "cannot load the biller");
	if ((rc = jobs_biller_slot(r, job, c, j.biller_id)) != 1)
		return rc == 0 ? JOBS_DEFER : retry(job, "cannot take a biller session slot");
	clock_gettime(CLOCK_MONOTONIC, &now);
	t.deadline_ms = (long long)now.tv_sec * 1000 + now.tv_nsec / 1000000 +
	    ((kind != NULL ? kind->lease_s : 60) - CONNECT_MARGIN_S) * 1000LL;
	connector_session_init(&cs, &t);
	if ((st = attempt(r, c, &j, &cs, &wrong)) < 0)
		return retry(job, "database failure");
	if (st == CONN_MFA_REQUIRED || (st == CONN_MFA_FAILED && cs.mfa_type != NULL)) {
		/* ask (again): a wrong answer is shown as MFA_FAILED and counted */
		if ((cs.mfa_state != NULL &&
		    connector_challenge_put(r, j.client_id, j.session_id, cs.mfa_state) != 0) ||
		    links_connect_job_mfa(r, &j, cs.mfa_type, cs.mfa_prompt,
		    wrong ? "MFA_FAILED" : NULL) != 0)
			return retry(job, "cannot record the outcome");
		return JOBS_DONE;
	}
	if (st != CONN_OK) {
		const char *code = failure((enum connector_status)st, &counts);

		if (links_connect_job_failed(r, &j, code, counts) != 0)
			return retry(job, "cannot record the outcome");
		return JOBS_DONE;
	}

	/* "remember this device": sealed with the credentials, sent with every
	 * later login of the link */
	if (strcmp(j.mode, "update") == 0) {
		if (links_repair(r, j.client_id, j.update_link_id, j.username, j.password) != 0 ||
		    (cs.device_token_new && links_credentials_device_set(r, j.client_id,
		    j.update_link_id, cs.device_token) != 0))
			return retry(job, "cannot repair the link");
		link_id = j.update_link_id;
	} else {
		struct links_new n = { j.client_id, j.environment, j.client_user_id, j.biller_id,
			j.scopes, j.username, j.password, j.link_token_id,
			cs.device_token_new ? cs.device_token : NULL };
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
