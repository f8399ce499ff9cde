/*
 * The retrieval job (kind "retrieval", subject a link id): log in to the
 * link's biller with its sealed credentials, upsert the accounts, store
 * every statement (bills_store: bill.created per new bill; a withdrawn one
 * bills_withdraw: bill.deleted), then every observed payment
 * (bills_payment_store: payment.observed, the match, a reversal), queue
 * the link's reconciliation when a statement was new, update the
 * link's sync fields and, after the first successful retrieval,
 * connection.ready (once, emitted last in the same transaction). Runs in
 * bds-jobs inside the one transaction the runner opens; the link's row is
 * locked for the whole run, so two runners never retrieve one link at once
 * and a run killed midway leaves nothing behind (its job is retried after
 * the lease).
 *
 * Failures: rejected credentials (or a lock, or an MFA challenge a refresh
 * cannot answer) → DISCONNECTED credentials_rejected INVALID_CREDENTIALS;
 * CONN_DEGRADED → credentials_rejected CONNECTION_DEGRADED; CONN_EXPIRED →
 * expired; each emits link.disconnected once per transition. An unavailable
 * biller is retried with the runner's backoff. The sandbox connector's MFA
 * fixture remembers the device: its known answer is given on refresh.
 */
#include <stdlib.h>
#include <string.h>

#include "core/arena.h"
#include "core/jobq.h"
#include "core/log.h"
#include "core/req.h"
#include "bills/bills.h"
#include "bills/bills_statement.h"
#include "bills/bills_status.h"
#include "jobs/connectors/connector.h"
#include "jobs/jobs.h"
#include "links/links.h"

#define SANDBOX_MFA_ANSWER "1234"

/* The link's new state for a failed login or fetch; JOBS_RETRY for a
 * biller that is away. */
static enum jobs_outcome
failed(struct req *r, struct jobs_job *job, enum connector_status st)
{
	const char *reason = "credentials_rejected", *rejection = "INVALID_CREDENTIALS";

	switch (st) {
	case CONN_UNAVAILABLE:
		job->error = "biller unavailable";
		return JOBS_RETRY;
	case CONN_DEGRADED:
		rejection = "CONNECTION_DEGRADED";
		break;
	case CONN_EXPIRED:
		reason = "expired";
		rejection = NULL;
		break;
	default:
		break;
	}
	if (links_disconnect(r, job->client_id, job->subject_id, reason, rejection) < 0) {
		job->error = "database failure";
		return JOBS_RETRY;
	}
	return JOBS_DONE;
}

enum jobs_outcome
jobs_retrieval_run(struct req *r, struct jobs_job *job)
{
	const struct connector *conn;
	struct connector_session s = { 0 };
	struct connector_account *accts = NULL;
	struct links_credentials cred;
	struct links_retrieval lr;
	struct bills_link bl;
	enum connector_status st;
	size_t nacct = 0;
	long long count, since;
	const char *last;
	int rc, fresh = 0;

	if (job->client_id == NULL || job->subject_id == NULL) {
		job->error = "retrieval job without a link";
		return JOBS_FAILED;
	}
	if ((rc = links_retrieval_load(r, job->client_id, job->subject_id, &lr)) < 0) {
		job->error = "database failure";
		return JOBS_RETRY;
	}
	/* A link revoked or disconnected since the job was queued: nothing to do. */
	if (rc == 0 || strcmp(lr.status, "ACTIVE") != 0)
		return JOBS_DONE;
	if ((conn = connector_find(lr.connector)) == NULL) {
		job->error = "unknown connector";
		return JOBS_FAILED;
	}
	if ((rc = jobs_biller_slot(r, job, conn, lr.biller_id)) != 1)
		return rc == 0 ? JOBS_DEFER : JOBS_RETRY;
	bl.client_id = job->client_id;
	bl.environment = lr.environment;
	bl.link_id = job->subject_id;
	bl.client_user_id = lr.client_user_id;
	bl.biller_id = lr.biller_id;
	bl.biller_name = lr.biller_name;

	/* Locks the link's row until the runner commits or rolls back. */
	if ((rc = links_credentials_open(r, job->client_id, job->subject_id, &cred)) <= 0) {
		if (rc == 0)
			return JOBS_DONE;	/* revoked meanwhile */
		job->error = "credentials unavailable";
		return JOBS_RETRY;
	}
	st = conn->login(r->arena, cred.username, cred.password, &s);
	links_credentials_wipe(&cred);
	if (st == CONN_MFA_REQUIRED)
		st = strcmp(conn->name, "sandbox") == 0 ?
		    conn->mfa(r->arena, &s, SANDBOX_MFA_ANSWER) : CONN_MFA_FAILED;
	if (st != CONN_OK)
		return failed(r, job, st);
	if ((st = conn->accounts(r->arena, &s, &accts, &nacct)) != CONN_OK)
		return failed(r, job, st);
	/* the link's last number before this run: a bill written after it was
	 * announced by this run already (bills_payment_store folds its match) */
	if ((last = bills_link_lock(r, job->client_id, job->subject_id)) == NULL)
		goto db_fail;
	since = strtoll(last, NULL, 10);
	for (size_t a = 0; a < nacct; a++) {
		struct bills_statement *sts = NULL;
		struct bills_payment *pays = NULL;
		const char *acct_id;
		size_t nst = 0, npay = 0;
		int created;

		if ((acct_id = links_account_upsert(r, job->client_id, job->subject_id,
		    accts[a].ref, accts[a].name, accts[a].type, accts[a].mask,
		    accts[a].service_address)) == NULL)
			goto db_fail;
		if ((st = conn->statements(r->arena, &s, accts[a].ref, cred.refresh_count, &sts,
		    &nst)) != CONN_OK)
			return failed(r, job, st);
		/* Oldest first, so bill ids and change sequence follow statement
		 * order (the connector answers newest first). */
		for (size_t i = nst; i-- > 0;) {
			if (sts[i].withdrawn) {
				if (bills_withdraw(r, &bl, sts[i].ref) < 0)
					goto db_fail;
				continue;
			}
			if (bills_store(r, &bl, acct_id, accts[a].mask, &sts[i], &created) != 0)
				goto db_fail;
			fresh |= created;
			/* the statement's PDF, stored and its hash recorded */
			if (sts[i].has_document && (rc = bills_statement_keep(r, &bl, &sts[i])) != 0) {
				if (rc == -2)
					goto db_fail;
				job->error = "document store failure";
				return JOBS_RETRY;
			}
		}
		if (conn->payments == NULL)
			continue;
		if ((st = conn->payments(r->arena, &s, accts[a].ref, cred.refresh_count, &pays,
		    &npay)) != CONN_OK)
			return failed(r, job, st);
		/* oldest first, as the statements */
		for (size_t i = npay; i-- > 0;)
			if (bills_payment_store(r, &bl, acct_id, &pays[i], since) < 0)
				goto db_fail;
	}
	/* a new statement may show an older bill's balance unpaid */
	if (fresh && jobq_add(r, "reconcile", job->client_id, lr.environment, job->subject_id,
	    NULL, 0) != 0)
		goto db_fail;
	if ((count = bills_count(r, job->client_id, job->subject_id)) < 0 ||
	    links_sync_done(r, job->client_id, job->subject_id, count) != 0)
		goto db_fail;
	return JOBS_DONE;
db_fail:
	job->error = "database failure";
	return JOBS_RETRY;
}

/* The runner's failure hook: a transient failure (RETRY, or the last
 * attempt's) is kept on the link: sync status, backoff, degraded. */
int
jobs_retrieval_failed(struct req *r, struct jobs_job *job, int dead)
{
	if (job->client_id == NULL || job->subject_id == NULL)
		return 0;
	return links_retrieval_failed(r, job->client_id, job->subject_id, dead);
}
