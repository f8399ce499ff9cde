/*
 * The connect job (kind "connect", subject: a link session): logs in to the
 * biller with the session's sealed credentials, in bds-jobs and never in an
 * API worker (its fetch, no transaction open), and records the outcome on
 * the session (its apply, one transaction). On success the link
 * is made (create mode: links_create, then link.completed once) or repaired
 * in place (update mode: same link id, no second link.completed), and the
 * session gets its public token or, in a hosted flow, is exchanged here.
 *
 * MFA. A biller whose challenge lives between runs (the portal's challenge
 * id, s.mfa_state) has it kept sealed with the session
 * (connector_challenge_put) while the user reads the prompt; the user's
 * answer then goes to that very challenge in the next run, never to a new
 * one. After a wrong answer (MFA_FAILED, counted as a failed login) the
 * job logs in again for a new challenge once per session; after that the
 * same challenge takes the next answers, so the biller's own limit on it
 * holds (links_connect_job_rechallenge). A new connect (no answer yet)
 * drops any kept challenge. Before any login, links_connect_job_load ends a
 * session that must not log in (too many failures, a revoked or another
 * person's link in update mode). The sandbox logs in and
 * answers in one run. A "remember this device" token the biller gives is
 * stored sealed with the link's credentials.
 */
#include <string.h>
#include <time.h>

#include "core/arena.h"
#include "core/db.h"
#include "core/errcodes.h"
#include "core/module.h"
#include "core/req.h"
#include "jobs/connectors/connector.h"
#include "jobs/jobs.h"
#include "links/links.h"
#include "links/links_connect.h"
#include "links/links_same.h"

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
		return ERR_INVALID_CREDENTIALS;
	case CONN_ACCOUNT_LOCKED:
		return ERR_ACCOUNT_LOCKED;
	case CONN_MFA_FAILED:
		*counts = 1;
		return ERR_MFA_FAILED;
	default:
		return ERR_BILLER_UNAVAILABLE;
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
	int err, fresh;

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
		*wrong = 1;
		/* one new challenge per session; then the same one again */
		if ((fresh = links_connect_job_rechallenge(r, j)) <= 0) {
			cs->mfa_state = kept;
			cs->mfa_type = j->mfa_type;
			cs->mfa_prompt = j->mfa_prompt;
			return fresh < 0 ? -1 : CONN_MFA_FAILED;
		}
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

/* What the fetch leaves for the apply. */
struct connect_run {
	int		 gone;		/* nothing to do: exited, expired or done */
	int		 st;		/* the connector's status, -1: no biller */
	int		 wrong;		/* the user's MFA answer was refused */
	struct connector_session cs;
	struct connector_target t;
};

/*
 * The fetch: the session and its credentials loaded in a short transaction
 * of their own (the session's guards may end it there), then, with no
 * transaction open, the login or the answer to the kept challenge, each
 * HTTP exchange a yield to the runner's loop.
 */
enum jobs_outcome
jobs_connect_fetch(struct req *r, struct jobs_job *job)
{
	const struct jobs_kind *kind = module_job_kind("connect");
	struct connect_run *u = arena_alloc(r->arena, sizeof(*u));
	struct links_connect_job j;
	const struct connector *c;
	struct timespec now;
	int rc;

	memset(u, 0, sizeof(*u));
	job->state = u;
	/* a short transaction of its own: the load may end the session (too
	 * many failures, a revoked or another person's link) before any login */
	if (db_begin(r->db) != 0)
		return retry(job, "cannot load the link session");
	if ((rc = links_connect_job_load(r, job->client_id, job->subject_id, &j)) < 0 ||
	    db_commit(r->db) != 0) {
		db_rollback(r->db);
		return retry(job, "cannot load the link session");
	}
	if (rc == 0) {
		u->gone = 1;	/* exited, expired or already done */
		return JOBS_DONE;
	}
	/* a biller the session's environment may not link (the catalog
	 * changed after the connect call): no login, as for an unknown one */
	if (!j.linkable || (c = connector_find(j.connector)) == NULL ||
	    (rc = connector_target_load(r, j.biller_id, &u->t)) == 0) {
		u->st = -1;
		return JOBS_DONE;
	}
	if (rc < 0)
		return retry(job, "cannot load the biller");
	clock_gettime(CLOCK_MONOTONIC, &now);
	u->t.deadline_ms = (long long)now.tv_sec * 1000 + now.tv_nsec / 1000000 +
	    ((kind != NULL ? kind->lease_s : 60) - CONNECT_MARGIN_S) * 1000LL;
	connector_session_init(&u->cs, &u->t);
	if ((u->st = attempt(r, c, &j, &u->cs, &u->wrong)) < 0)
		return retry(job, "database failure");
	return JOBS_DONE;
}

/*
 * The apply, in the runner's one transaction: the session locked again
 * (one that ended meanwhile takes nothing), then the outcome recorded.
 */
enum jobs_outcome
jobs_connect_apply(struct req *r, struct jobs_job *job)
{
	struct connect_run *u = job->state;
	struct connector_session *cs = &u->cs;
	struct links_connect_job j;
	const char *link_id;
	int rc, counts, st = u->st;

	if (u->gone)
		return JOBS_DONE;
	if ((rc = links_connect_job_load(r, job->client_id, job->subject_id, &j)) < 0)
		return retry(job, "cannot load the link session");
	if (rc == 0)
		return JOBS_DONE;	/* exited or expired while the biller answered */
	if (st < 0) {
		if (links_connect_job_failed(r, &j, ERR_BILLER_UNAVAILABLE, 0) != 0)
			return retry(job, "cannot record the outcome");
		return JOBS_DONE;
	}
	if (st == CONN_MFA_REQUIRED || (st == CONN_MFA_FAILED && cs->mfa_type != NULL)) {
		/* ask (again): a wrong answer is shown as MFA_FAILED and counted */
		if ((cs->mfa_state != NULL &&
		    connector_challenge_put(r, j.client_id, j.session_id, cs->mfa_state) != 0) ||
		    links_connect_job_mfa(r, &j, cs->mfa_type, cs->mfa_prompt,
		    u->wrong ? ERR_MFA_FAILED : NULL) != 0)
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
		    (cs->device_token_new && links_credentials_device_set(r, j.client_id,
		    j.update_link_id, cs->device_token) != 0))
			return retry(job, "cannot repair the link");
		link_id = j.update_link_id;
	} else {
		struct links_new n = { j.client_id, j.environment, j.client_user_id, j.biller_id,
			j.scopes, j.username, j.password, j.link_token_id,
			cs->device_token_new ? cs->device_token : NULL };
		struct links_row row;

		/* the same login linked again by the same end user: its ACTIVE
		 * link, not a second one (links_same.h) */
		if ((rc = links_same(r, &n, &row)) < 0 ||
		    (rc == 0 && links_create(r, &n, &row) != 0) ||
		    links_completed(r, j.client_id, row.id) != 0)
			return retry(job, "cannot create the link");
		link_id = row.id;
	}
	if (links_connect_job_connected(r, &j, link_id) != 0)
		return retry(job, "cannot record the outcome");
	return JOBS_DONE;
}
