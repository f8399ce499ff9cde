/*
 * The bill status lifecycle (bills_status.h): status moves with their
 * bill.updated, observed payments and their match, the reconciliation,
 * mark-paid and the operator's revert. Every write to a link's bills locks
 * the link's sequence row first (bills_link_lock), as bills_store does, so
 * the order of locks is the same everywhere: sequence row, then bill row.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/arena.h"
#include "core/config.h"
#include "core/crypto.h"
#include "core/db.h"
#include "core/errors.h"
#include "core/jobq.h"
#include "core/json.h"
#include "core/req.h"
#include "core/validate.h"
#include "events/events.h"
#include "bills/bills.h"
#include "bills/bills_status.h"

enum bills_status_stmt {
	BS_LINK,
	BS_GET,
	BS_MOVE,
	BP_FIND,
	BP_INSERT,
	BP_REVERSE,
	BP_BY_REF,
	BP_BY_RULE,
	BP_SET_BILL,
	BP_BILL,
	BR_CANDIDATES,
	BR_SWEEP,
	BM_BILL,
	BM_ENTITY,
	BA_CLIENT,
	BS__MAX
};

enum bs_get_col { BG_STATUS, BG_MATCH, BG_REF, BG_CHANGED, BG__MAX };
/* the RETURNING of BS_MOVE: what bill.updated carries */
enum bs_move_col {
	BV_ID, BV_USER, BV_BILLER, BV_ENV, BV_STATUS, BV_PAID_AT, BV_PAID_REASON,
	BV_PREVIOUS, BV_REVERT_REASON, BV_REVERTED_AT, BV_MATCH, BV_REF, BV__MAX
};
enum bp_find_col { PF_ID, PF_STATUS, PF_BILL, PF__MAX };
enum bp_bill_col { PB_STATUS, PB_OWED, PB_PAID, PB__MAX };
enum bm_bill_col { MB_STATUS, MB_CURRENCY, MB_OWED, MB_EXPONENT, MB_FUTURE, MB_LINK, MB__MAX };

#define BS_MOVES(c) "$3::text IN (" c ")"
/* A link's observed payment by its ref ($2 link, $3 payment_ref, $1 the
 * tenant on the row): the unique (link_id, payment_ref) index. */
#define PAYMENT_BY_REF \
	"link_id = $2 AND payment_ref = $3 AND " DB_ROW_CHECK("client_id = $1")
/* The posted payments matched to a bill of a link (all of its payments
 * are its link's), found by the link's key alone: bill_id would offer
 * observed_payments_bill_list, which leads with the tenant. */
#define PAID_TO(client, link, bill) \
	"p.link_id = " link " AND " DB_ROW_CHECK("p.bill_id = " bill \
	" AND p.status = 'posted' AND p.client_id = " client)

static struct db_stmt stmts[BS__MAX] = {
	[BS_LINK] = { "bills_status_link",
	    "SELECT coalesce(link_id, '') FROM bills"
	    " WHERE " BILLS_BY_ID " AND deleted_at IS NULL", 0 },
	[BS_GET] = { "bills_status_get",
	    "SELECT status, match_status, matched_payment_ref, changed_seq FROM bills"
	    " WHERE " BILLS_BY_ID " AND deleted_at IS NULL FOR UPDATE", 0 },
	/* $3 the change; $4 paid_at, $5 paid_reason, $6 revert_reason,
	 * $7 reverted_by, $8 match_status (NULL: unchanged), $9 its ref,
	 * $10 the number (NULL: keep) */
	[BS_MOVE] = { "bills_status_move",
	    "UPDATE bills SET"
	    " status = CASE $3::text WHEN 'paid' THEN 'PAID' WHEN 'partially_paid' THEN"
	    "   'PARTIALLY_PAID' WHEN 'status_reverted' THEN 'PENDING' ELSE status END,"
	    " paid_at = CASE WHEN " BS_MOVES("'paid', 'partially_paid'") " THEN"
	    "   coalesce($4::timestamptz, now()) WHEN $3::text = 'status_reverted' THEN NULL"
	    "   ELSE paid_at END,"
	    " paid_reason = CASE WHEN " BS_MOVES("'paid', 'partially_paid'") " THEN $5::text"
	    "   WHEN $3::text = 'status_reverted' THEN NULL ELSE paid_reason END,"
	    " status_at = CASE WHEN " BS_MOVES("'paid', 'partially_paid', 'status_reverted'")
	    "   THEN now() ELSE status_at END,"
	    " previous_status = CASE WHEN $3::text = 'status_reverted' THEN status"
	    "   ELSE previous_status END,"
	    " revert_reason = CASE WHEN $3::text = 'status_reverted' THEN $6::text"
	    "   ELSE revert_reason END,"
	    " reverted_at = CASE WHEN $3::text = 'status_reverted' THEN now() ELSE reverted_at END,"
	    " reverted_by = CASE WHEN $3::text = 'status_reverted' THEN $7::text"
	    "   ELSE reverted_by END,"
	    " match_status = coalesce($8::text, match_status),"
	    " matched_payment_ref = CASE WHEN $8::text IS NULL THEN matched_payment_ref"
	    "   ELSE $9::text END,"
	    " changed_seq = coalesce($10::bigint, changed_seq), updated_at = now()"
	    " WHERE " BILLS_BY_ID
	    " RETURNING id, client_user_id, biller_id, environment, status, bds_iso(paid_at),"
	    "  paid_reason, lower(previous_status), revert_reason, bds_iso(reverted_at),"
	    "  match_status, matched_payment_ref", 0 },

	[BP_FIND] = { "bills_payment_find",
	    "SELECT id, status, bill_id FROM observed_payments"
	    " WHERE " PAYMENT_BY_REF " FOR UPDATE", 0 },
	/* $14 the bill it pays, or NULL; returns payment.observed's object */
	[BP_INSERT] = { "bills_payment_insert",
	    "INSERT INTO observed_payments (client_id, id, environment, link_id, account_id,"
	    " payment_ref, statement_ref, currency, amount_minor, paid_at, client_user_id,"
	    " biller_id, status, reversed_at, bill_id)"
	    " VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9::bigint, $10::timestamptz, $11, $12,"
	    "  $13::text, CASE WHEN $13::text = 'reversed' THEN now() END, $14)"
	    " RETURNING payments_json(observed_payments)::text", 0 },
	[BP_REVERSE] = { "bills_payment_reverse",
	    "UPDATE observed_payments SET status = 'reversed', reversed_at = now(),"
	    " updated_at = now() WHERE " PAYMENT_BY_REF, 0 },
	/* and whether the payment $4 has paid it already (the bill insert
	 * writes a new bill matched to the payment of its answer) */
	[BP_BY_REF] = { "bills_payment_by_ref",
	    "SELECT id, status <> 'PENDING' AND match_status = 'MATCHED'"
	    "  AND matched_payment_ref = $4::text, currency = $5::text"
	    " FROM bills WHERE " BILLS_BY_STATEMENT " AND deleted_at IS NULL", 0 },
	/* the rule: same account and currency, not matched yet, the amount
	 * is the bill's total or its amount due, paid from the statement
	 * date to 45 days after the due date; the oldest such bill */
	[BP_BY_RULE] = { "bills_payment_by_rule",
	    "SELECT id FROM bills WHERE " BILLS_OF_LINK
	    " AND account_id IS NOT DISTINCT FROM $3::text AND currency = $4::text"
	    " AND deleted_at IS NULL AND match_status IS DISTINCT FROM 'MATCHED'"
	    " AND $5::bigint IN (total_minor, amount_due_minor)"
	    " AND $6::timestamptz >= statement_date"
	    " AND $6::timestamptz < coalesce(due_date, statement_date) + 45"
	    " ORDER BY statement_date, id LIMIT 1", 0 },
	[BP_SET_BILL] = { "bills_payment_set_bill",
	    "UPDATE observed_payments SET bill_id = $4, updated_at = now()"
	    " WHERE " PAYMENT_BY_REF, 0 },
	/* a bill's status, what it owes, the posted payments matched to it
	 * (all of them its link's: payment_bill looks inside the link) */
	[BP_BILL] = { "bills_payment_bill",
	    "SELECT status,"
	    " CASE WHEN amount_due_minor > 0 THEN amount_due_minor ELSE total_minor END,"
	    " (SELECT coalesce(sum(p.amount_minor), 0) FROM observed_payments p"
	    "   WHERE " PAID_TO("b.client_id", "b.link_id", "b.id") ")"
	    " FROM bills b WHERE " BILLS_BY_ID, 0 },

	/* each account's bills in statement order; a PAID or PARTIALLY_PAID
	 * one inside the window whose next statement carries its total and
	 * whose posted payments do not cover it (PAID: its total; PARTIALLY_PAID:
	 * anything), not reverted for that statement already */
	[BR_CANDIDATES] = { "bills_reconcile_candidates",
	    "SELECT id, next_id FROM (SELECT b.id, b.status, b.status_at, b.total_minor,"
	    "   b.currency, b.reverted_by,"
	    "   lead(b.id) OVER w AS next_id,"
	    "   lead(b.previous_balance_minor) OVER w AS next_prev,"
	    "   lead(b.currency) OVER w AS next_currency"
	    "  FROM bills b WHERE " BILLS_OF_LINK " AND b.deleted_at IS NULL"
	    "  WINDOW w AS (PARTITION BY b.account_id ORDER BY b.statement_date, b.id)) x"
	    " WHERE next_id IS NOT NULL AND status IN ('PAID', 'PARTIALLY_PAID')"
	    "  AND status_at > now() - interval '" BILLS_REVERT_WINDOW "'"
	    "  AND next_currency = currency AND next_prev >= total_minor"
	    "  AND reverted_by IS DISTINCT FROM next_id"
	    "  AND (SELECT coalesce(sum(p.amount_minor), 0) FROM observed_payments p"
	    "       WHERE " PAID_TO("$1", "$2", "x.id") ")"
	    "      < CASE WHEN status = 'PAID' THEN total_minor ELSE 1 END"
	    " ORDER BY id", 0 },
	[BR_SWEEP] = { "bills_reconcile_sweep",
	    "SELECT l.client_id, l.environment, l.id FROM links l"
	    " WHERE l.status = 'ACTIVE'"
	    "  AND EXISTS (SELECT 1 FROM bills b WHERE b.client_id = l.client_id"
	    "   AND b.link_id = l.id AND b.deleted_at IS NULL)"
	    "  AND NOT EXISTS (SELECT 1 FROM jobs j WHERE j.kind = 'reconcile'"
	    "   AND j.subject_id = l.id AND j.created_at > now() - interval '23 hours')"
	    " ORDER BY l.id", 0 },

	/* mark-paid: the bill of the key's tenant; $4 paid_at or NULL */
	[BM_BILL] = { "bills_mark_paid_bill",
	    "SELECT status, currency,"
	    " CASE WHEN amount_due_minor > 0 THEN amount_due_minor ELSE total_minor END,"
	    " bds_currency_exponent(currency), $4::timestamptz > now(), coalesce(link_id, '')"
	    " FROM bills WHERE client_id = $1 AND environment = $2 AND id = $3"
	    " AND deleted_at IS NULL", 0 },
	[BM_ENTITY] = { "bills_mark_paid_entity",
	    "SELECT entity FROM bills WHERE " BILLS_BY_ID, 0 },
	[BA_CLIENT] = { "bills_revert_client",
	    "SELECT client_id FROM bills WHERE id = $1 AND deleted_at IS NULL", 0 },
};

const struct db_stmt_set bills_status_stmt_set = { "bills_status", stmts, BS__MAX };

static int
is(const char *a, const char *b)
{
	return a != NULL && b != NULL && strcmp(a, b) == 0;
}

/* bill.updated from BS_MOVE's row: the spec's fields for the change. */
static int
emit_updated(struct req *r, const char *client_id, PGresult *res, const char *change)
{
	struct json_object *o = json_obj(r->arena);

#define COL(c) (PQgetisnull(res, 0, (c)) ? NULL : PQgetvalue(res, 0, (c)))
	json_set_str(o, "id", COL(BV_ID));
	json_set_str(o, "object", "bill");
	json_set_str(o, "user_id", COL(BV_USER));
	json_set_str(o, "biller_id", COL(BV_BILLER));
	json_set_str(o, "status", COL(BV_STATUS));
	json_set_str(o, "change", change);
	if (is(change, "paid") || is(change, "partially_paid")) {
		json_set_str(o, "paid_reason", COL(BV_PAID_REASON));
		json_set_str(o, "paid_at", COL(BV_PAID_AT));
	} else if (is(change, "status_reverted")) {
		json_set_str(o, "previous_status", COL(BV_PREVIOUS));
		json_set_str(o, "revert_reason", COL(BV_REVERT_REASON));
		json_set_str(o, "reverted_at", COL(BV_REVERTED_AT));
	} else if (is(change, "match_status")) {
		json_set_str(o, "match_status", COL(BV_MATCH));
		json_set_str(o, "matched_payment_ref", COL(BV_REF));
	}
	return events_emit(r, client_id, COL(BV_ENV), "bill.updated", o, NULL) == NULL ? -1 : 0;
#undef COL
}

/* Whether m applies to a bill of status st, match ms, ref mr. */
static int
applies(const struct bills_move *m, const char *st, const char *ms, const char *mr)
{
	if (is(m->change, "paid") || is(m->change, "partially_paid"))
		return !is(st, "PAID");
	if (is(m->change, "status_reverted"))
		return is(st, "PAID") || is(st, "PARTIALLY_PAID");
	if (is(m->change, "match_status"))
		return !is(m->match_status, ms) ||
		    !(m->matched_payment_ref == NULL ? mr == NULL : is(m->matched_payment_ref, mr));
	return is(m->change, "statement_refreshed");
}

int
bills_status_move(struct req *r, const char *client_id, const char *bill_id,
    const struct bills_move *m)
{
	const char *p[10] = { client_id, bill_id };
	const char *link, *seq = m->seq;
	PGresult *res;
	int quiet;

	if ((link = m->link_id) == NULL) {
		if ((res = db_exec(r->db, r->arena, &stmts[BS_LINK], 2, p)) == NULL)
			return -1;
		if (PQntuples(res) != 1)
			return BILLS_NO_BILL;
		link = PQgetvalue(res, 0, 0);
		if (bills_link_lock(r, client_id, link) == NULL)
			return -1;
	}
	if ((res = db_exec(r->db, r->arena, &stmts[BS_GET], 2, p)) == NULL)
		return -1;
	if (PQntuples(res) != 1)
		return BILLS_NO_BILL;	/* deleted meanwhile */
	if (!applies(m, PQgetvalue(res, 0, BG_STATUS),
	    PQgetisnull(res, 0, BG_MATCH) ? NULL : PQgetvalue(res, 0, BG_MATCH),
	    PQgetisnull(res, 0, BG_REF) ? NULL : PQgetvalue(res, 0, BG_REF)))
		return 0;
	quiet = is(m->change, "match_status") && m->fold &&
	    strtoll(PQgetvalue(res, 0, BG_CHANGED), NULL, 10) > m->since_seq;
	if (!quiet && seq == NULL && (seq = bills_link_next(r, client_id, link)) == NULL)
		return -1;
	p[2] = m->change;
	p[3] = m->paid_at;
	p[4] = m->paid_reason;
	p[5] = m->revert_reason;
	p[6] = m->reverted_by;
	p[7] = m->match_status;
	p[8] = m->matched_payment_ref;
	p[9] = quiet ? NULL : seq;
	if ((res = db_exec(r->db, r->arena, &stmts[BS_MOVE], 10, p)) == NULL ||
	    PQntuples(res) != 1)
		return -1;
	if (!quiet && emit_updated(r, client_id, res, m->change) != 0)
		return -1;
	return 1;
}

/* ---- observed payments ---- */

/* obp_ + a UUID (version 8) from HMAC(secret_key, client, link, ref). */
static const char *
payment_id(struct req *r, const char *client_id, const char *link_id, const char *ref)
{
	unsigned char h[32];
	char uuid[CRYPTO_UUID_STRLEN + 1];

	crypto_keyed_hash(r->cfg->secret_key, "observed_payment",
	    arena_printf(r->arena, "%s\n%s\n%s", client_id, link_id, ref), h);
	h[6] = (unsigned char)((h[6] & 0x0f) | 0x80);
	h[8] = (unsigned char)((h[8] & 0x3f) | 0x80);
	crypto_uuid_format(h, uuid);
	return arena_printf(r->arena, "obp_%s", uuid);
}

/* The bill a posted payment pays: by its statement ref, else the rule.
 * NULL when none; *err on failure. *done: the bill is paid and matched to
 * this payment already, so payment_apply has nothing to do. */
static const char *
payment_bill(struct req *r, const struct bills_link *l, const char *account_id,
    const struct bills_payment *p, int *err, int *done)
{
	char amount[24];
	const char *q[6] = { l->client_id, l->link_id, p->statement_ref, p->ref,
	    p->amount.currency };
	PGresult *res;

	*err = *done = 0;
	if (p->statement_ref != NULL) {
		if ((res = db_exec(r->db, r->arena, &stmts[BP_BY_REF], 5, q)) == NULL)
			goto fail;
		if (PQntuples(res) == 1) {
			/* in another currency it pays nothing of the bill it names */
			if (!is(PQgetvalue(res, 0, 2), "t"))
				return NULL;
			*done = is(PQgetvalue(res, 0, 1), "t");
			return PQgetvalue(res, 0, 0);
		}
	}
	snprintf(amount, sizeof(amount), "%lld", p->amount.minor);
	q[2] = account_id;
	q[3] = p->amount.currency;
	q[4] = amount;
	q[5] = p->paid_at;
	if ((res = db_exec(r->db, r->arena, &stmts[BP_BY_RULE], 6, q)) == NULL)
		goto fail;
	return PQntuples(res) == 1 ? PQgetvalue(res, 0, 0) : NULL;
fail:
	*err = 1;
	return NULL;
}

/* A posted payment matched to bill: a PENDING bill is paid by the posted
 * payments matched to it (all of what it owes: PAID, else PARTIALLY_PAID);
 * otherwise the match alone. */
static int
payment_apply(struct req *r, const struct bills_link *l, const char *bill,
    const struct bills_payment *p, long long since_seq)
{
	const char *q[2] = { l->client_id, bill };
	struct bills_move m = { 0 };
	PGresult *res;

	if ((res = db_exec(r->db, r->arena, &stmts[BP_BILL], 2, q)) == NULL ||
	    PQntuples(res) != 1)
		return -1;
	m.link_id = l->link_id;
	m.match_status = "MATCHED";
	m.matched_payment_ref = p->ref;
	if (is(PQgetvalue(res, 0, PB_STATUS), "PENDING")) {
		m.change = strtoll(PQgetvalue(res, 0, PB_PAID), NULL, 10) >=
		    strtoll(PQgetvalue(res, 0, PB_OWED), NULL, 10) ? "paid" : "partially_paid";
		m.paid_at = p->paid_at;
		m.paid_reason = "portal_payment_observed";
	} else {
		m.change = "match_status";
		m.fold = 1;
		m.since_seq = since_seq;
	}
	return bills_status_move(r, l->client_id, bill, &m) < 0 ? -1 : 0;
}

/* A matched payment turned reversed: its bill back to PENDING and
 * unmatched (one write); a bill not paid is only unmatched. */
static int
payment_reversed(struct req *r, const struct bills_link *l, const char *bill)
{
	struct bills_move m = { 0 };
	int rc;

	m.link_id = l->link_id;
	m.change = "status_reverted";
	m.revert_reason = "observed_payment_reversed";
	m.match_status = "UNMATCHED";
	if ((rc = bills_status_move(r, l->client_id, bill, &m)) != 0)
		return rc == -1 ? -1 : 0;
	m.change = "match_status";
	return bills_status_move(r, l->client_id, bill, &m) == -1 ? -1 : 0;
}

int
bills_payment_store(struct req *r, const struct bills_link *l, const char *account_id,
    const struct bills_payment *p, long long since_seq)
{
	const char *status = p->status != NULL ? p->status : "posted";
	/* the payment's key, then its bill: BP_FIND, REVERSE, SET_BILL */
	const char *key[4] = { l->client_id, l->link_id, p->ref, NULL };
	const char *q[14], *bill = NULL, *why;
	struct json_object *o;
	char amount[24];
	PGresult *res;
	int err, done = 0;

	if ((res = db_exec(r->db, r->arena, &stmts[BP_FIND], 3, key)) == NULL)
		return -1;
	if (PQntuples(res) == 1) {
		const char *was = PQgetvalue(res, 0, PF_STATUS);

		if (!PQgetisnull(res, 0, PF_BILL))
			bill = PQgetvalue(res, 0, PF_BILL);
		/* a reversal is final; a payment seen before its bill is
		 * matched once the bill is there */
		if (is(was, "posted") && is(status, "reversed")) {
			if (db_exec(r->db, r->arena, &stmts[BP_REVERSE], 3, key) == NULL)
				return -1;
			return bill != NULL && payment_reversed(r, l, bill) != 0 ? -1 : 0;
		}
		if (!is(was, "posted") || bill != NULL)
			return 0;
		if ((bill = payment_bill(r, l, account_id, p, &err, &done)) == NULL)
			return err ? -1 : 0;
		key[3] = bill;
		if (db_exec(r->db, r->arena, &stmts[BP_SET_BILL], 4, key) == NULL)
			return -1;
		return done ? 0 : payment_apply(r, l, bill, p, since_seq);
	}
	/* a new one: its bill first, so the insert records the match */
	if (is(status, "posted") &&
	    (bill = payment_bill(r, l, account_id, p, &err, &done)) == NULL && err)
		return -1;
	snprintf(amount, sizeof(amount), "%lld", p->amount.minor);
	q[0] = l->client_id;
	q[1] = payment_id(r, l->client_id, l->link_id, p->ref);
	q[2] = l->environment;
	q[3] = l->link_id;
	q[4] = account_id;
	q[5] = p->ref;
	q[6] = p->statement_ref;
	q[7] = p->amount.currency;
	q[8] = amount;
	q[9] = p->paid_at;
	q[10] = l->client_user_id;
	q[11] = l->biller_id;
	q[12] = status;
	q[13] = bill;
	if ((res = db_exec(r->db, r->arena, &stmts[BP_INSERT], 14, q)) == NULL ||
	    PQntuples(res) != 1 ||
	    (o = json_parse(r->arena, PQgetvalue(res, 0, 0), (size_t)PQgetlength(res, 0, 0),
	    &why)) == NULL)
		return -1;
	if (bill != NULL && !done && payment_apply(r, l, bill, p, since_seq) != 0)
		return -1;
	return events_emit(r, l->client_id, l->environment, "payment.observed", o, NULL) ==
	    NULL ? -1 : 1;
}

/* ---- the reconciliation ---- */

int
bills_reconcile_link(struct req *r, const char *client_id, const char *link_id)
{
	const char *p[2] = { client_id, link_id };
	PGresult *res;
	int i, n = 0, rc;

	if (bills_link_lock(r, client_id, link_id) == NULL ||
	    (res = db_exec(r->db, r->arena, &stmts[BR_CANDIDATES], 2, p)) == NULL)
		return -1;
	for (i = 0; i < PQntuples(res); i++) {
		struct bills_move m = { 0 };

		m.change = "status_reverted";
		m.revert_reason = "next_statement_shows_balance";
		m.reverted_by = PQgetvalue(res, i, 1);
		if ((rc = bills_status_move(r, client_id, PQgetvalue(res, i, 0), &m)) == -1)
			return -1;
		n += rc == 1;
	}
	return n;
}

long long
bills_reconcile_enqueue(const struct config *cfg, struct db *d, struct arena *a)
{
	(void)cfg;
	struct req r;
	PGresult *res;
	long long n = 0;
	int i;

	req_init(&r, NULL, d, a, REQ_ID_SWEEP);
	if (db_begin(d) != 0)
		return -1;
	if ((res = db_exec(d, a, &stmts[BR_SWEEP], 0, NULL)) == NULL)
		goto fail;
	for (i = 0; i < PQntuples(res); i++, n++)
		if (jobq_add(&r, "reconcile", PQgetvalue(res, i, 0), PQgetvalue(res, i, 1),
		    PQgetvalue(res, i, 2), NULL, 0) != 0)
			goto fail;
	if (db_commit(d) != 0)
		goto fail;
	return n;
fail:
	db_rollback(d);
	return -1;
}

/* ---- mark-paid ---- */

/* The earliest year a reported payment may carry: older is a typo (0001),
 * not a payment of a bill this service retrieved. */
#define BM_PAID_AT_YEAR_MIN	2000
/* Digits of a value's integer part: 14, and 4 fractional ones, keep any
 * minor amount below 10^18, inside a long long. */
#define BM_VALUE_DIGITS		14

/* paid_at (already an RFC 3339 instant, VF_DATETIME): not before 2000. */
static int
check_paid_at(struct arena *a, struct json_object **v, const char **code, const char **msg)
{
	const char *s = json_object_get_string(*v);

	(void)a;
	if (atoi(s) >= BM_PAID_AT_YEAR_MIN)	/* YYYY- leads: atoi stops at '-' */
		return 0;
	*code = "out_of_range";
	*msg = "paid_at must not be before 2000-01-01";
	return -1;
}

/*
 * A money value as written: an integer part without sign or leading zero
 * ("0", "12", not "012", not ".5") and, optionally, '.' and 1 to 4
 * fractional digits (the currency's own exponent is checked against the
 * bill, bills_mark_paid). No exponent, no spaces.
 */
static int
value_syntax(const char *s, int *frac)
{
	size_t i = 0, f = 0;

	while (s[i] >= '0' && s[i] <= '9')
		i++;
	if (i == 0 || i > BM_VALUE_DIGITS || (s[0] == '0' && i > 1))
		return -1;
	if (s[i] == '.') {
		while (s[i + 1 + f] >= '0' && s[i + 1 + f] <= '9')
			f++;
		if (f == 0 || f > 4)
			return -1;
		i += 1 + f;
	}
	*frac = (int)f;
	return s[i] == '\0' ? 0 : -1;
}

static int
check_value(struct arena *a, struct json_object **v, const char **code, const char **msg)
{
	int frac;

	(void)a;
	if (value_syntax(json_object_get_string(*v), &frac) == 0)
		return 0;
	*code = "invalid_format";
	*msg = "value is a decimal string: digits, no leading zero, and at most the"
	    " currency's minor-unit digits after a '.' (\"12.50\", \"12\")";
	return -1;
}

static const struct vfield money_fields[] = {
	{ "value", NULL, VT_STRING, V_REQUIRED, 1, 32, .check = check_value },
	{ "currency", NULL, VT_STRING, V_REQUIRED, .format = VF_CURRENCY },
	{ NULL }
};

const struct vfield bills_mark_paid_fields[] = {
	{ "paid_at", NULL, VT_STRING, 0, .format = VF_DATETIME, .check = check_paid_at },
	{ "amount", NULL, VT_OBJECT, 0, .fields = money_fields },
	{ NULL }
};

/* A value (value_syntax) with at most exp fractional digits as minor
 * units; -1 when it has more. */
static long long
decimal_minor(const char *s, int exp)
{
	long long v = 0;
	int frac;

	if (value_syntax(s, &frac) != 0 || frac > exp)
		return -1;
	for (; *s != '\0'; s++)
		if (*s != '.')
			v = v * 10 + (*s - '0');
	for (; frac < exp; frac++)
		v *= 10;
	return v;
}

/*
 * The bill as mark-paid reads it: first to find its link, then again
 * once the link's sequence is locked (bills_link_lock), so what is
 * checked is what the write will see: of two calls at once, the second
 * reads the first one's PAID. 0 with *res, or the status written.
 */
static int
mark_bill_locked_or_reply(struct req *r, const char *const *p, PGresult **res)
{
	const char *id = p[2];

	if (!crypto_id_valid(id, "bill", 0))
		return api_error(r, 404, "BILL_NOT_FOUND", NULL, "no bill %s", id);
	if ((*res = db_exec(r->db, r->arena, &stmts[BM_BILL], 4, p)) == NULL)
		return api_db_error(r);
	if (PQntuples(*res) == 1 && PQgetvalue(*res, 0, MB_LINK)[0] != '\0' &&
	    (bills_link_lock(r, r->client_id, PQgetvalue(*res, 0, MB_LINK)) == NULL ||
	    (*res = db_exec(r->db, r->arena, &stmts[BM_BILL], 4, p)) == NULL))
		return api_db_error(r);
	if (PQntuples(*res) != 1)
		return api_error(r, 404, "BILL_NOT_FOUND", NULL, "no bill %s", id);
	return 0;
}

static int
already_paid(struct req *r, const char *id)
{
	return api_error(r, 409, "BILL_ALREADY_PAID", "a PAID bill cannot be marked paid again",
	    "bill %s is already paid", id);
}

int
bills_mark_paid(struct req *r, struct json_object *out)
{
	const char *id = req_cap(r, "id"), *paid_at = json_get_str(r->body, "paid_at");
	const char *p[4] = { r->client_id, r->env, id, paid_at };
	struct json_object *amount = NULL;
	struct bills_move m = { 0 };
	long long owed, minor;
	PGresult *res = NULL;
	int rc;

	(void)out;
	if ((rc = mark_bill_locked_or_reply(r, p, &res)) != 0)
		return rc;
	if (is(PQgetvalue(res, 0, MB_STATUS), "PAID"))
		return already_paid(r, id);
	if (is(PQgetvalue(res, 0, MB_FUTURE), "t"))
		return api_field_error(r, 400, "VALIDATION_ERROR", "paid_at", "out_of_range",
		    "paid_at is in the future");
	owed = strtoll(PQgetvalue(res, 0, MB_OWED), NULL, 10);
	minor = owed;
	if (json_object_object_get_ex(r->body, "amount", &amount) &&
	    json_object_is_type(amount, json_type_object)) {
		if (!is(json_get_str(amount, "currency"), PQgetvalue(res, 0, MB_CURRENCY)))
			return api_field_error(r, 400, "VALIDATION_ERROR", "amount.currency",
			    "currency_mismatch", "the currency is not the bill's");
		minor = decimal_minor(json_get_str(amount, "value"),
		    atoi(PQgetvalue(res, 0, MB_EXPONENT)));
		if (minor < 0)
			return api_field_error(r, 400, "VALIDATION_ERROR", "amount.value",
			    "invalid_format", "value has more fractional digits than the"
			    " currency's minor unit");
		if (minor == 0 || minor > owed)
			return api_field_error(r, 400, "VALIDATION_ERROR", "amount.value",
			    "out_of_range", "value is above zero and at most the amount due");
	}
	m.change = minor >= owed ? "paid" : "partially_paid";
	m.paid_at = paid_at;
	m.paid_reason = "client_reported";
	if (PQgetvalue(res, 0, MB_LINK)[0] != '\0')
		m.link_id = PQgetvalue(res, 0, MB_LINK);	/* locked above */
	if ((rc = bills_status_move(r, r->client_id, id, &m)) < 0 && rc != BILLS_NO_BILL)
		return api_db_error(r);
	if (rc == BILLS_NO_BILL)
		return api_error(r, 404, "BILL_NOT_FOUND", NULL, "no bill %s", id);
	if (rc == 0)
		return already_paid(r, id);
	p[1] = id;
	if ((res = db_exec(r->db, r->arena, &stmts[BM_ENTITY], 2, p)) == NULL ||
	    PQntuples(res) != 1)
		return api_db_error(r);
	r->out = db_json_raw(r->arena, res, 0, 0);
	return 200;
}

/* ---- bdsctl bills revert ---- */

int
bills_revert_admin(const struct config *cfg, struct db *d, struct arena *a, const char *id)
{
	struct bills_move m = { 0 };
	struct req r;
	const char *p[1] = { id };
	PGresult *res;
	int rc;

	if (!crypto_id_valid(id, "bill", 0)) {
		fprintf(stderr, "bills revert: %s is not a bill id\n", id);
		return -1;
	}
	/* A synthetic request, so events_emit writes as it does in the API. */
	req_init_operator(&r, cfg, d, a);
	if (db_begin(d) != 0)
		goto dbfail;
	if ((res = db_exec(d, a, &stmts[BA_CLIENT], 1, p)) == NULL)
		goto dbfail;
	m.change = "status_reverted";
	m.revert_reason = "manual_admin";
	rc = PQntuples(res) == 1 ? bills_status_move(&r, PQgetvalue(res, 0, 0), id, &m) :
	    BILLS_NO_BILL;
	if (rc == -1)
		goto dbfail;
	if (rc != 1) {
		db_rollback(d);
		fprintf(stderr, "bills revert: %s\n", rc == 0 ?
		    "the bill is not PAID or PARTIALLY_PAID" : "no such bill");
		return -1;
	}
	if (db_commit(d) != 0)
		goto dbfail;
	printf("bills revert: %s -> PENDING (status_reverted manual_admin)\n", id);
	return 0;
dbfail:
	fprintf(stderr, "bills revert: %s\n", db_errmsg(d));
	db_rollback(d);
	return -1;
}
