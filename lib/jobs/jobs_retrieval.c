/*
 * The retrieval job (kind "retrieval", subject a link id): log in to the
 * link's biller with its sealed credentials (and its "remember this device"
 * token), list the accounts and, per account, the statements and payments
 * since the link's since date (connector_since: the first retrieval asks
 * for everything), and fetch the documents it does not hold yet. Every
 * answer is validated by the connector before anything is written: a
 * malformed or failed call fails the run with nothing written.
 *
 * That is the fetch: no transaction is open and no row is locked while the
 * biller answers (the runner's claim keeps two runs of one link apart).
 * Then the apply, in the one transaction the runner opens, per account:
 * upsert it;
 * the payments turned reversed (bills_payment_store: the bill goes back,
 * status_reverted observed_payment_reversed, before its statement shows
 * the balance again); every statement oldest first (bills_store:
 * bill.created, the status the statement reports, statement_refreshed; a
 * withdrawn one bills_withdraw: bill.deleted; a structured:false one is
 * recorded with its document, connector_unstructured_put, and that
 * document becomes a bill import of source portal, imports_from_portal:
 * its extraction makes the bill, or an import the client reviews); every
 * stored statement the biller no longer lists inside the since window
 * (bills_withdraw); the posted payments oldest first (payment.observed, the
 * match, paid / partially_paid). Then the link's reconciliation when a
 * statement was new, its sync fields and, after the first successful
 * retrieval, connection.ready (once, emitted last in the same transaction).
 * Last, the link's row is locked to the commit and looked at again: a link
 * revoked or disconnected meanwhile gets nothing written.
 * A run killed midway leaves nothing behind (its job is retried after the
 * lease).
 *
 * Failures: rejected credentials or a lock → DISCONNECTED
 * credentials_rejected INVALID_CREDENTIALS; CONN_DEGRADED →
 * credentials_rejected CONNECTION_DEGRADED; consent expired, or an MFA
 * challenge a refresh cannot answer (no user is there) → expired; each emits
 * link.disconnected once per transition and notes why beside the link
 * (connector_link_note: mfa_required, consent_expired...). A transient
 * failure (5xx, timeout, malformed answer, 429/503) is retried with the
 * runner's backoff, job->error saying why. The sandbox connector's MFA
 * fixture remembers the device: its known answer is given on refresh.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/arena.h"
#include "core/clock.h"
#include "core/config.h"
#include "core/db.h"
#include "core/errcodes.h"
#include "core/jobq.h"
#include "core/log.h"
#include "core/module.h"
#include "core/money.h"
#include "core/req.h"
#include "bills/bills.h"
#include "bills/bills_statement.h"
#include "bills/bills_status.h"
#include "imports/imports.h"
#include "jobs/connectors/connector.h"
#include "jobs/jobs.h"
#include "links/links.h"

#define SANDBOX_MFA_ANSWER	"1234"
#define RETRIEVAL_MARGIN_S	20	/* no portal call starts this close to the lease's end */
#define DOCUMENTS_RESERVE_MS	30000	/* documents stop this long before that: the writes */

/* One account of the run: what the biller listed, validated. */
struct racct {
	const struct connector_account *acct;
	const char	*id;			/* acct_… once upserted */
	struct connector_statement *st;		/* newest first */
	size_t		 nst;
	struct bills_payment *pay;		/* newest first */
	size_t		 npay;
	const char	**sha;			/* per statement: a fetched document */
	const char	**listed;		/* the statement refs, sorted */
};

struct run {
	struct req		*r;
	struct jobs_job		*job;
	const struct connector	*conn;
	struct connector_target	 t;
	struct connector_session s;
	struct connector_query	 q;
	struct bills_link	 bl;
	struct connector_known	*known;
	size_t			 nknown;
	struct racct		*acct;
	size_t			 nacct;
	long long		 since_seq;
	int			 gone;		/* nothing to do: revoked, disconnected */
	enum connector_status	 st;		/* the conversation's outcome */
	long long		 t0;		/* the run's start (monotonic ns) */
	int			 fresh;		/* a statement was new */
	int			 ours;		/* failed on the service's own side
						 * (its document store, a full disk):
						 * not counted on the link */
};

static enum jobs_outcome
retry(struct jobs_job *job, const char *why)
{
	job->error = why;
	/* the runner's failure hook (jobs_retrieval_failed) keeps it on the
	 * link once this run is rolled back: backoff, CONNECTION_DEGRADED */
	return JOBS_RETRY;
}

/* A retry for a failure of the service's own (the document store), not the
 * biller's: jobs_retrieval_failed leaves the link as it is, so a full disk
 * never moves it towards CONNECTION_DEGRADED. */
static enum jobs_outcome
retry_ours(struct run *u, const char *why)
{
	u->ours = 1;
	return retry(u->job, why);
}

/* The link's new state for a failed login or fetch; JOBS_RETRY for a
 * biller that is away or answered badly. */
static enum jobs_outcome
failed(struct run *u, enum connector_status st)
{
	const char *reason = "credentials_rejected", *rejection = ERR_INVALID_CREDENTIALS;
	const char *note = connector_status_name(st);
	int rc;

	switch (st) {
	case CONN_UNAVAILABLE:
	case CONN_TRANSIENT:
		u->job->retry_after = u->s.retry_after;
		return retry(u->job, u->s.error != NULL ? u->s.error : "biller unavailable");
	case CONN_DEGRADED:
		rejection = ERR_CONNECTION_DEGRADED;
		break;
	case CONN_EXPIRED:
		reason = "expired";
		rejection = NULL;
		note = "consent_expired";
		break;
	case CONN_MFA_REQUIRED:
		/* PORTAL.md: nobody is there to answer; the client repairs the
		 * link in update mode (reason mfa_required) */
		reason = "expired";
		rejection = NULL;
		break;
	default:
		break;
	}
	if ((rc = links_disconnect(u->r, u->job->client_id, u->job->subject_id, reason,
	    rejection)) < 0 ||
	    (rc == 1 && connector_link_note(u->r, u->job->client_id, u->job->subject_id,
	    note) != 0))
		return retry(u->job, "database failure");
	log_msg("info", "retrieval %s: %s: disconnected %s", u->job->subject_id, note, reason);
	return JOBS_DONE;
}

static int
ref_cmp(const void *x, const void *y)
{
	return strcmp(*(const char *const *)x, *(const char *const *)y);
}

/* A posted payment (no status: posted) that names the statement b, in its
 * currency (a payment in another one pays nothing of it). */
static int
names_posted(const struct bills_payment *p, const struct bills_statement *b)
{
	return p->statement_ref != NULL && strcmp(p->statement_ref, b->ref) == 0 &&
	    (p->status == NULL || strcmp(p->status, "posted") == 0) &&
	    strcmp(p->amount.currency, b->total.currency) == 0;
}

/* Newest first, whatever order the biller answered in (PORTAL.md gives
 * none): statements by statement date, payments by paid_at; then by ref. */
static int
newest(const char *a, const char *b, const char *ra, const char *rb)
{
	int c = strcmp(b != NULL ? b : "", a != NULL ? a : "");

	return c != 0 ? c : strcmp(ra, rb);
}

static int
statement_newest(const void *x, const void *y)
{
	const struct bills_statement *a = &((const struct connector_statement *)x)->b,
	    *b = &((const struct connector_statement *)y)->b;

	return newest(a->statement_date, b->statement_date, a->ref, b->ref);
}

static int
payment_newest(const void *x, const void *y)
{
	const struct bills_payment *a = x, *b = y;

	return newest(a->paid_at, b->paid_at, a->ref, b->ref);
}

/*
 * A statement the biller reports paid by its balance alone is paid by the
 * posted payments of the same answer that name it when they cover it
 * (portal_payment_observed, the latest one's paid_at); a paid statement
 * with no date is paid as of now.
 */
static void
paid_reasons(struct racct *ra, const char *now)
{
	for (size_t i = 0; i < ra->nst; i++) {
		struct bills_statement *b = &ra->st[i].b;
		const char *latest = NULL;
		long long sum = 0;

		if (b->status == NULL || strcmp(b->status, "PAID") != 0 || b->paid_reason == NULL ||
		    strcmp(b->paid_reason, "portal_balance_zero") != 0)
			continue;
		for (size_t j = 0; j < ra->npay; j++) {
			const struct bills_payment *p = &ra->pay[j];

			if (!names_posted(p, b))
				continue;
			/* posted amounts are positive: past the top, they cover it */
			if (money_add(sum, p->amount.minor, &sum) != 0)
				sum = LLONG_MAX;
			if (latest == NULL || strcmp(p->paid_at, latest) > 0)
				latest = p->paid_at;
		}
		if (latest != NULL && sum >= b->amount_due.minor) {
			b->paid_reason = "portal_payment_observed";
			b->paid_at = latest;
		}
		if (b->paid_at == NULL)
			b->paid_at = now;
	}
}

/*
 * The posted payment of the answer that names each statement and is stored
 * last (payments_store goes oldest first: the lowest index), so a new
 * bill is written with the match that payment makes (bills_store).
 */
static void
answer_matches(struct racct *ra)
{
	for (size_t i = 0; i < ra->nst; i++) {
		struct bills_statement *b = &ra->st[i].b;

		for (size_t j = 0; j < ra->npay && b->matched_payment_ref == NULL; j++)
			if (names_posted(&ra->pay[j], b))
				b->matched_payment_ref = ra->pay[j].ref;
	}
}

/*
 * A statement id is the biller's, across its accounts (PORTAL.md: stable
 * per statement; its document is /statements/{id}/document): one listed
 * under two accounts is a malformed answer, refused whole, never one bill
 * moved between them.
 */
static enum connector_status
unique_refs(struct run *u)
{
	size_t n = 0, k, i;
	const char **all;

	for (k = 0; k < u->nacct; k++)
		n += u->acct[k].nst;
	all = arena_alloc(u->r->arena, (n + 1) * sizeof(*all));
	for (n = 0, k = 0; k < u->nacct; k++)
		for (i = 0; i < u->acct[k].nst; i++)
			all[n++] = u->acct[k].listed[i];
	qsort(all, n, sizeof(*all), ref_cmp);
	for (i = 1; i < n; i++)
		if (strcmp(all[i - 1], all[i]) == 0) {
			u->s.error = arena_printf(u->r->arena, "malformed statements answer:"
			    " statement %s listed under two accounts", all[i]);
			return CONN_TRANSIENT;
		}
	return CONN_OK;
}

/* Every account's statements and payments, validated; nothing written. */
static enum connector_status
fetch(struct run *u, const struct connector_account *accts)
{
	struct arena *a = u->r->arena;
	enum connector_status st;
	char now[TIME_ISO_SIZE];

	time_iso(now, time_now_ms());
	for (size_t k = 0; k < u->nacct; k++) {
		struct racct *ra = &u->acct[k];

		ra->acct = &accts[k];
		if ((st = u->conn->statements(a, &u->s, accts[k].ref, &u->q, &ra->st,
		    &ra->nst)) != CONN_OK)
			return st;
		if (u->conn->payments != NULL && (st = u->conn->payments(a, &u->s, accts[k].ref,
		    &u->q, &ra->pay, &ra->npay)) != CONN_OK)
			return st;
		qsort(ra->st, ra->nst, sizeof(*ra->st), statement_newest);
		if (ra->npay > 0)
			qsort(ra->pay, ra->npay, sizeof(*ra->pay), payment_newest);
		paid_reasons(ra, arena_strdup(a, now));
		answer_matches(ra);
		ra->sha = arena_alloc(a, (ra->nst + 1) * sizeof(*ra->sha));
		ra->listed = arena_alloc(a, (ra->nst + 1) * sizeof(*ra->listed));
		for (size_t i = 0; i < ra->nst; i++) {
			ra->sha[i] = NULL;
			ra->listed[i] = ra->st[i].b.ref;
		}
		qsort(ra->listed, ra->nst, sizeof(*ra->listed), ref_cmp);
	}
	return unique_refs(u);
}

/*
 * A connector without documents of its own (the sandbox): every
 * statement's PDF rendered by the connector and stored content-addressed,
 * before the apply's transaction. 0 ok, -1 on a render or store failure
 * (*why).
 */
static int
rendered(struct run *u, const char **why)
{
	if (u->conn->render == NULL)
		return 0;
	for (size_t k = 0; k < u->nacct; k++) {
		struct racct *ra = &u->acct[k];

		for (size_t i = 0; i < ra->nst; i++) {
			struct connector_statement *cs = &ra->st[i];
			unsigned char *pdf;
			size_t len;

			if (!cs->b.has_document || cs->b.withdrawn || !cs->structured)
				continue;
			if ((pdf = u->conn->render(u->r->arena, u->bl.biller_name, &cs->b,
			    &len)) == NULL) {
				*why = "document render failure";
				return -1;
			}
			if ((ra->sha[i] = bills_docs_put(u->r->arena, u->r->cfg, pdf, len)) ==
			    NULL) {
				*why = "document store failure";
				return -1;
			}
			cs->b.sha256 = ra->sha[i];	/* a new bill is inserted with it */
		}
	}
	return 0;
}

/*
 * The documents the link does not hold yet (a new statement, a new
 * revision, or none stored), newest first, fetched and stored
 * content-addressed: a file is harmless if the transaction later rolls
 * back. Once less than DOCUMENTS_RESERVE_MS is left before the run's
 * deadline the rest wait for the next run (their bills say no statement
 * yet), so a long history still gets its bills. 0 ok, the failure's status
 * (s.error set), or -1 on a database or store failure (*why).
 */
static int
documents(struct run *u, const char **why)
{
	struct req *r = u->r;
	enum connector_status st;
	size_t later = 0;

	if (u->conn->document == NULL)
		return rendered(u, why);
	for (size_t k = 0; k < u->nacct; k++) {
		struct racct *ra = &u->acct[k];

		for (size_t i = 0; i < ra->nst; i++) {
			struct connector_statement *cs = &ra->st[i];
			const struct connector_known *kn;
			const unsigned char *bytes;
			int rev = cs->b.revision > 0 ? cs->b.revision : 1, err;
			size_t len;

			if (!cs->document || cs->b.withdrawn)
				continue;
			if (cs->structured) {
				kn = connector_known_find(u->known, u->nknown, cs->b.ref);
				/* held, or an older revision (not stored) */
				if (kn != NULL && (kn->revision > rev ||
				    (kn->has_document && kn->revision == rev)))
					continue;
			} else if (connector_unstructured_sha(r, u->job->client_id,
			    u->job->subject_id, cs->b.ref, rev, &err) != NULL || err) {
				if (err) {
					*why = "database failure";
					return -1;
				}
				continue;
			}
			if (mono_ns() / 1000000 > u->t.deadline_ms - DOCUMENTS_RESERVE_MS) {
				cs->document = cs->b.has_document = 0;
				later++;
				continue;
			}
			if ((st = u->conn->document(r->arena, &u->s, cs->b.ref, &bytes, &len)) !=
			    CONN_OK)
				return (int)st;
			if ((ra->sha[i] = bills_docs_put(r->arena, r->cfg, bytes, len)) == NULL) {
				*why = "document store failure";
				return -1;
			}
			cs->b.sha256 = ra->sha[i];	/* a new bill is inserted with it */
		}
	}
	if (later > 0)
		log_msg("info", "retrieval %s: %zu documents left for the next run",
		    u->job->subject_id, later);
	return 0;
}

static int
payments_store(struct run *u, const struct racct *ra, const char *status)
{
	/* oldest first, as the statements */
	for (size_t i = ra->npay; i-- > 0;) {
		const char *ps = ra->pay[i].status != NULL ? ra->pay[i].status : "posted";

		if (strcmp(ps, status) == 0 &&
		    bills_payment_store(u->r, &u->bl, ra->id, &ra->pay[i], u->since_seq) < 0)
			return -1;
	}
	return 0;
}

/* One statement's write. 0 ok, -1 database failure. */
static int
statement_store(struct run *u, const struct racct *ra, size_t i)
{
	struct req *r = u->r;
	const struct connector_statement *cs = &ra->st[i];
	int created;

	if (!cs->structured)
		return connector_unstructured_put(r, u->job->client_id, u->job->subject_id,
		    ra->id, cs, ra->sha[i], cs->b.withdrawn) != 0 ||
		    (cs->b.withdrawn && bills_withdraw(r, &u->bl, cs->b.ref) < 0) ||
		    (!cs->b.withdrawn && ra->sha[i] != NULL && imports_from_portal(r,
		    u->job->client_id, u->bl.environment, u->job->subject_id, ra->id,
		    u->bl.client_user_id, u->bl.biller_id, cs->b.ref, ra->sha[i]) != 0) ? -1 : 0;
	if (cs->b.withdrawn)
		return bills_withdraw(r, &u->bl, cs->b.ref) < 0 ? -1 : 0;
	if (bills_store(r, &u->bl, ra->id, ra->acct->mask, &cs->b, &created) != 0)
		return -1;
	u->fresh |= created;
	if (ra->sha[i] != NULL && !created)
		return bills_statement_attach(r, u->job->client_id, u->job->subject_id,
		    cs->b.ref, ra->sha[i]) == 0 ? 0 : -1;
	return 0;
}

/*
 * The stored statements of the account the biller no longer lists: only
 * inside the since window (an older one is simply not asked for), or all
 * of them when everything was asked for. bill.deleted each.
 */
static int
unlisted_withdraw(struct run *u, const struct racct *ra)
{
	for (size_t i = 0; i < u->nknown; i++) {
		const struct connector_known *kn = &u->known[i];

		if (kn->account_id == NULL || strcmp(kn->account_id, ra->id) != 0)
			continue;
		/* after since (not on it): a biller that reads since as
		 * "after" still lists it */
		if (u->q.since != NULL && (kn->statement_date == NULL ||
		    strcmp(kn->statement_date, u->q.since) <= 0))
			continue;
		if (bsearch(&kn->ref, ra->listed, ra->nst, sizeof(*ra->listed), ref_cmp) != NULL)
			continue;
		if (bills_withdraw(u->r, &u->bl, kn->ref) < 0)
			return -1;
	}
	return 0;
}

/* Everything fetched, written in the runner's transaction. 0 ok, -1
 * database failure. */
static int
store(struct run *u)
{
	struct req *r = u->r;
	const char *last;
	int rc;

	/* the link's last number before this run: a bill written after it was
	 * announced by this run already (bills_payment_store folds its match) */
	if ((last = bills_link_lock(r, u->job->client_id, u->job->subject_id)) == NULL)
		return -1;
	u->bl.locked = 1;	/* held to the end of the runner's transaction */
	u->since_seq = strtoll(last, NULL, 10);
	for (size_t k = 0; k < u->nacct; k++) {
		struct racct *ra = &u->acct[k];
		const struct connector_account *ac = ra->acct;

		if ((ra->id = links_account_upsert(r, u->job->client_id, u->job->subject_id,
		    ac->ref, ac->name, ac->type, ac->mask, ac->service_address,
		    ac->closed)) == NULL ||
		    payments_store(u, ra, "reversed") != 0)
			return -1;
		/* oldest first, so bill ids and change sequence follow statement
		 * order (connectors answer newest first) */
		for (size_t i = ra->nst; i-- > 0;)
			if ((rc = statement_store(u, ra, i)) != 0)
				return rc;
		if (unlisted_withdraw(u, ra) != 0 || payments_store(u, ra, "posted") != 0)
			return -1;
	}
	return 0;
}

/* The conversation after login: accounts, statements and payments,
 * documents; nothing written but content-addressed document files. The
 * connector's status; on a document store failure CONN__MAX (*why set). */
static enum connector_status
converse(struct run *u, const char **why)
{
	struct req *r = u->r;
	struct connector_account *accts = NULL;
	enum connector_status st;
	int rc;

	if ((st = u->conn->accounts(r->arena, &u->s, &accts, &u->nacct)) != CONN_OK)
		return st;
	u->acct = arena_alloc(r->arena, (u->nacct + 1) * sizeof(*u->acct));
	memset(u->acct, 0, (u->nacct + 1) * sizeof(*u->acct));
	if ((st = fetch(u, accts)) != CONN_OK)
		return st;
	if ((rc = documents(u, why)) != 0)
		return rc < 0 ? CONN__MAX : (enum connector_status)rc;
	return CONN_OK;
}

/* Everything fetched, written: store, reconciliation, sync fields. */
static enum jobs_outcome
write_all(struct run *u)
{
	struct req *r = u->r;
	const char *why = "database failure";
	long long count, run_ns;

	if (store(u) != 0)
		return retry(u->job, why);
	/* a new statement may show an older bill's balance unpaid */
	if (u->fresh && jobq_add(r, "reconcile", u->job->client_id, u->bl.environment,
	    u->job->subject_id, NULL, 0) != 0)
		return retry(u->job, why);
	if ((count = bills_count(r, u->job->client_id, u->job->subject_id)) < 0 ||
	    links_sync_done(r, u->job->client_id, u->job->subject_id, count) != 0)
		return retry(u->job, why);
	run_ns = mono_ns() - u->t0;
	if (connector_link_timing(r, u->job->client_id, u->job->subject_id, u->s.portal_ns,
	    run_ns) != 0)
		return retry(u->job, why);
	log_msg("info", "retrieval %s: %zu accounts, %d calls, %lld ms in the biller"
	    " of %lld ms", u->job->subject_id, u->nacct, u->s.calls, u->s.portal_ns / 1000000,
	    run_ns / 1000000);
	return JOBS_DONE;
}

/* The lease's end, less a margin, on the monotonic clock (ms). */
static long long
deadline_ms(void)
{
	const struct jobs_kind *k = module_job_kind("retrieval");
	long long lease = k != NULL ? k->lease_s : 120;

	if (lease - RETRIEVAL_MARGIN_S < 10)
		lease = 10 + RETRIEVAL_MARGIN_S;
	return mono_ns() / 1000000 + (lease - RETRIEVAL_MARGIN_S) * 1000;
}

/*
 * The fetch, outside any transaction: the link, its biller and its
 * credentials read (and let go: no lock is held while the biller answers;
 * the runner's claim keeps two runs of one link apart), what is stored of
 * it, then the whole conversation with the biller, each HTTP exchange a
 * yield to the runner's loop. A transient failure ends the run here.
 */
enum jobs_outcome
jobs_retrieval_fetch(struct req *r, struct jobs_job *job)
{
	struct run *u = arena_alloc(r->arena, sizeof(*u));
	struct links_credentials cred;
	struct links_retrieval lr;
	const char *why = "database failure";
	int rc;

	memset(u, 0, sizeof(*u));
	job->state = u;
	u->r = r;
	u->job = job;
	u->t0 = mono_ns();
	if (job->client_id == NULL || job->subject_id == NULL) {
		job->error = "retrieval job without a link";
		return JOBS_FAILED;
	}
	if ((rc = links_retrieval_load(r, job->client_id, job->subject_id, &lr)) < 0)
		return retry(job, why);
	/* A link revoked or disconnected since the job was queued: nothing to do. */
	if (rc == 0 || strcmp(lr.status, "ACTIVE") != 0) {
		u->gone = 1;
		return JOBS_DONE;
	}
	if ((u->conn = connector_find(lr.connector)) == NULL) {
		job->error = "unknown connector";
		return JOBS_FAILED;
	}
	if ((rc = connector_target_load(r, lr.biller_id, &u->t)) <= 0) {
		u->gone = rc == 0;
		return rc < 0 ? retry(job, why) : JOBS_DONE;
	}
	u->t.deadline_ms = deadline_ms();
	u->bl.client_id = job->client_id;
	u->bl.environment = lr.environment;
	u->bl.link_id = job->subject_id;
	u->bl.client_user_id = lr.client_user_id;
	u->bl.biller_id = lr.biller_id;
	u->bl.biller_name = lr.biller_name;
	/* a portal biller's bills come from a real portal, whatever the key */
	u->bl.source = strcmp(u->conn->name, "sandbox") == 0 ? "sandbox" : "connector";

	if ((rc = links_credentials_open(r, job->client_id, job->subject_id, &cred)) <= 0) {
		u->gone = rc == 0;	/* 0: revoked */
		return rc == 0 ? JOBS_DONE : retry(job, "credentials unavailable");
	}
	u->q.refresh = cred.refresh_count;
	u->q.repairs = cred.repairs;
	u->q.basis = jobs_settings(r->cfg)->sandbox_basis_day;
	if (connector_since(r, job->client_id, job->subject_id, jobs_settings(r->cfg)->portal_since_days,
	    &u->q.since) != 0 ||
	    ((u->q.basis == NULL || u->q.basis[0] == '\0') &&
	    connector_basis(r, job->client_id, job->subject_id, &u->q.basis) != 0) ||
	    connector_known_load(r, job->client_id, job->subject_id, &u->known,
	    &u->nknown) != 0) {
		links_credentials_wipe(&cred);
		return retry(job, why);
	}
	connector_session_init(&u->s, &u->t);
	u->s.device_token = cred.device_token;
	/* the credentials stay open for a login again (session_expired) until
	 * the conversation ends */
	u->st = u->conn->login(r->arena, &u->s, cred.username, cred.password);
	if (u->st == CONN_MFA_REQUIRED && strcmp(u->conn->name, "sandbox") == 0)
		u->st = u->conn->mfa(r->arena, &u->s, SANDBOX_MFA_ANSWER);
	if (u->st == CONN_OK)
		u->st = converse(u, &why);
	links_credentials_wipe(&cred);
	if (u->st == CONN__MAX)
		return retry_ours(u, why);
	if (u->st == CONN_UNAVAILABLE || u->st == CONN_TRANSIENT)
		return failed(u, u->st);	/* a retry: nothing to write */
	return JOBS_DONE;
}

/*
 * The apply, in the runner's one transaction: the outcome written (the
 * link disconnected, or every statement and payment stored), then the
 * link's row locked to the commit and looked at again. A link revoked or
 * disconnected while the biller answered, or while this wrote, gets
 * nothing: the writes are undone to the mark before them. So a revoke
 * never waits for more than the commit, and never sees bills after it.
 */
enum jobs_outcome
jobs_retrieval_apply(struct req *r, struct jobs_job *job)
{
	struct run *u = job->state;
	enum jobs_outcome out;
	int rc;

	if (u->gone)
		return JOBS_DONE;
	u->r = r;
	if (db_savepoint(r->db) != 0)
		return retry(job, "database failure");
	out = u->st != CONN_OK ? failed(u, u->st) : write_all(u);
	if (out != JOBS_DONE)
		return out;
	if ((rc = links_retrieval_active(r, job->client_id, job->subject_id)) < 0)
		return retry(job, "database failure");
	if (rc == 0 && u->st == CONN_OK) {
		if (db_rollback_to_savepoint(r->db) != 0)
			return retry(job, "database failure");
		log_msg("info", "retrieval %s: the link is no longer ACTIVE; nothing written",
		    job->subject_id);
	}
	return JOBS_DONE;
}

/* The runner's failure hook: a transient failure (RETRY, or the last
 * attempt's) is kept on the link: sync status, backoff, degraded. One of
 * the service's own is not: the job's retries (or the next scheduled
 * refresh) take the link up again as it was. */
int
jobs_retrieval_failed(struct req *r, struct jobs_job *job, int dead)
{
	const struct run *u = job->state;

	if (job->client_id == NULL || job->subject_id == NULL || (u != NULL && u->ours))
		return 0;
	return links_retrieval_failed(r, job->client_id, job->subject_id, dead);
}
