/*
 * The bill status lifecycle (bills_status.h): observed payments and their
 * match to a bill, the reconciliation of a link and its nightly sweep.
 * Every status move is one bills_status_move (bills_status_store.c); every
 * write to a link's bills locks the link's sequence row first
 * (bills_link_lock), as bills_store does, so the order of locks is the same
 * everywhere: sequence row, then bill row.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/arena.h"
#include "core/config.h"
#include "core/crypto.h"
#include "core/db.h"
#include "core/jobq.h"
#include "core/json.h"
#include "core/req.h"
#include "events/events.h"
#include "bills/bills.h"
#include "bills/bills_status.h"

enum bills_status_stmt {
	BP_FIND,
	BP_INSERT,
	BP_REVERSE,
	BP_BY_REF,
	BP_BY_RULE,
	BP_SET_BILL,
	BP_BILL,
	BR_CANDIDATES,
	BR_SWEEP,
	BS__MAX
};

enum bp_find_col { PF_ID, PF_STATUS, PF_BILL, PF__MAX };
enum bp_bill_col { PB_STATUS, PB_OWED, PB_PAID, PB__MAX };

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
};

const struct db_stmt_set bills_status_stmt_set = { "bills_status", stmts, BS__MAX };

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
			if (!bills_is(PQgetvalue(res, 0, 2), "t"))
				return NULL;
			*done = bills_is(PQgetvalue(res, 0, 1), "t");
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
	if (bills_is(PQgetvalue(res, 0, PB_STATUS), "PENDING")) {
		long long paid = strtoll(PQgetvalue(res, 0, PB_PAID), NULL, 10),
		    owed = strtoll(PQgetvalue(res, 0, PB_OWED), NULL, 10);

		m.change = paid >= owed ? "paid" : "partially_paid";
		m.remaining = arena_printf(r->arena, "%lld", owed - paid);
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
		if (bills_is(was, "posted") && bills_is(status, "reversed")) {
			if (db_exec(r->db, r->arena, &stmts[BP_REVERSE], 3, key) == NULL)
				return -1;
			return bill != NULL && payment_reversed(r, l, bill) != 0 ? -1 : 0;
		}
		if (!bills_is(was, "posted") || bill != NULL)
			return 0;
		if ((bill = payment_bill(r, l, account_id, p, &err, &done)) == NULL)
			return err ? -1 : 0;
		key[3] = bill;
		if (db_exec(r->db, r->arena, &stmts[BP_SET_BILL], 4, key) == NULL)
			return -1;
		return done ? 0 : payment_apply(r, l, bill, p, since_seq);
	}
	/* a new one: its bill first, so the insert records the match */
	if (bills_is(status, "posted") &&
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
	struct req r;
	PGresult *res;
	long long n = 0;
	int i;

	req_init(&r, cfg, d, a, REQ_ID_SWEEP);
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
