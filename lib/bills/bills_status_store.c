/*
 * The one write of a bill's status (bills.h, bills_status_move): a move,
 * its match to a payment or its corrected figures, with the link's next
 * change number and one bill.updated. Below the lifecycle (bills_status.c)
 * and beside the statement store (bills_store.c), which both call it.
 */
#include <stdlib.h>
#include <string.h>

#include "core/db.h"
#include "core/json.h"
#include "core/req.h"
#include "events/events.h"
#include "bills/bills.h"

enum bills_status_store_stmt {
	BS_LINK,
	BS_GET,
	BS_MOVE,
	BS__MAX
};

enum bs_get_col { BG_STATUS, BG_MATCH, BG_REF, BG_CHANGED, BG__MAX };
/* the RETURNING of BS_MOVE: what bill.updated carries */
enum bs_move_col {
	BV_ID, BV_USER, BV_BILLER, BV_ENV, BV_STATUS, BV_PAID_AT, BV_PAID_REASON,
	BV_PREVIOUS, BV_REVERT_REASON, BV_REVERTED_AT, BV_MATCH, BV_REF, BV__MAX
};

#define BS_MOVES(c) "$3::text IN (" c ")"

static struct db_stmt stmts[BS__MAX] = {
	[BS_LINK] = { "bills_status_link",
	    "SELECT coalesce(link_id, '') FROM bills"
	    " WHERE " BILLS_BY_ID " AND deleted_at IS NULL", 0 },
	[BS_GET] = { "bills_status_get",
	    "SELECT status, match_status, matched_payment_ref, changed_seq FROM bills"
	    " WHERE " BILLS_BY_ID " AND deleted_at IS NULL FOR UPDATE", 0 },
	/* $3 the change; $4 paid_at, $5 paid_reason, $6 revert_reason,
	 * $7 reverted_by, $8 match_status (NULL: unchanged), $9 its ref,
	 * $10 the number (NULL: keep), $11 what is still owed after a
	 * partially_paid (NULL: keep) */
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
	    " balance_minor = CASE $3::text WHEN 'paid' THEN 0 WHEN 'status_reverted' THEN NULL"
	    "   WHEN 'partially_paid' THEN coalesce($11::bigint, balance_minor)"
	    "   ELSE balance_minor END,"
	    " changed_seq = coalesce($10::bigint, changed_seq), updated_at = now()"
	    " WHERE " BILLS_BY_ID
	    " RETURNING id, client_user_id, biller_id, environment, status, bds_iso(paid_at),"
	    "  paid_reason, lower(previous_status), revert_reason, bds_iso(reverted_at),"
	    "  match_status, matched_payment_ref", 0 },
};

const struct db_stmt_set bills_status_store_stmt_set = { "bills_status_store", stmts, BS__MAX };

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
	if (bills_is(change, "paid") || bills_is(change, "partially_paid")) {
		json_set_str(o, "paid_reason", COL(BV_PAID_REASON));
		json_set_str(o, "paid_at", COL(BV_PAID_AT));
	} else if (bills_is(change, "status_reverted")) {
		json_set_str(o, "previous_status", COL(BV_PREVIOUS));
		json_set_str(o, "revert_reason", COL(BV_REVERT_REASON));
		json_set_str(o, "reverted_at", COL(BV_REVERTED_AT));
	} else if (bills_is(change, "match_status")) {
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
	if (bills_is(m->change, "paid") || bills_is(m->change, "partially_paid"))
		return !bills_is(st, "PAID");
	if (bills_is(m->change, "status_reverted"))
		return bills_is(st, "PAID") || bills_is(st, "PARTIALLY_PAID");
	if (bills_is(m->change, "match_status"))
		return !bills_is(m->match_status, ms) ||
		    !(m->matched_payment_ref == NULL ? mr == NULL : bills_is(m->matched_payment_ref, mr));
	return bills_is(m->change, "statement_refreshed");
}

int
bills_status_move(struct req *r, const char *client_id, const char *bill_id,
    const struct bills_move *m)
{
	const char *p[11] = { client_id, bill_id };
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
	quiet = bills_is(m->change, "match_status") && m->fold &&
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
	p[10] = m->remaining;
	if ((res = db_exec(r->db, r->arena, &stmts[BS_MOVE], 11, p)) == NULL ||
	    PQntuples(res) != 1)
		return -1;
	if (!quiet && emit_updated(r, client_id, res, m->change) != 0)
		return -1;
	return 1;
}
