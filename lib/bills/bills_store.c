/*
 * The bill store: what a retrieval's statements become (DOMAIN.md "Bills
 * and sync"). Every write to a link's bills first locks the link's
 * bill_seq row (an upsert that changes nothing but locks), so one link's
 * writers are serialised and commit order equals sequence order; a bill
 * that is new or whose figures changed takes the next number
 * (created_seq / changed_seq), an unchanged re-store takes none and emits
 * nothing. Money is integer minor units; line items and usage are stored as
 * JSON with minor units ({"description", "category", "amount": {"minor",
 * "currency"}, "quantity", "unit"}; {"type", "quantity", "unit"}).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/arena.h"
#include "core/clock.h"
#include "core/crypto.h"
#include "core/db.h"
#include "core/jobq.h"
#include "core/json.h"
#include "core/req.h"
#include "events/events.h"
#include "bills/bills.h"

enum bills_stmt {
	BILLS_LOCK,
	BILLS_FIND,
	BILLS_SEQ,
	BILLS_INSERT,
	BILLS_UPDATE,
	BILLS_COUNT,
	BILLS_DELETE,
	BILLS_BY_REF,
	BILLS__MAX
};

/* The figures a statement sets, $4..$20, in one order for find, insert,
 * update: currency, total, amount_due, previous_balance, due_date,
 * statement_date, period_start, period_end, bill_number, mask, line_items,
 * usage, has_statement, account_id, revision, payments_received,
 * current_charges. Then $21 the status the portal reports, $22 the seq,
 * $23 the balance the source reports (not a figure: it moves with the
 * status), $24 paid_at, $25 paid_reason (the report's; the bill's own
 * status, paid_at and paid_reason move in bills_status.c). */
#define BILLS_FIGS \
	"currency, total_minor, amount_due_minor, previous_balance_minor," \
	" due_date, statement_date, period_start, period_end, bill_number," \
	" account_number_mask, line_items, usage, has_statement, account_id, revision," \
	" payments_received_minor, current_charges_minor"
#define BILLS_VALS \
	"$4::text, $5::bigint, $6::bigint, $7::bigint, $8::date, $9::date," \
	" $10::date, $11::date, $12::text, $13::text, $14::jsonb, $15::jsonb," \
	" $16::boolean, $17::text, $18::integer, $19::bigint, $20::bigint"
#define BILLS_NFIGS	20
#define BILLS_NUPDATE	23
#define BILLS_NINSERT	33

enum bills_find_col { BF_ID, BF_STATUS, BF_PORTAL, BF_CHANGED, BF_DELETED, BF_REVISION, BF__MAX };

static struct db_stmt stmts[BILLS__MAX] = {
	/* lock the link's sequence row (created at 0), return the last number */
	[BILLS_LOCK] = { "bills_lock",
	    "INSERT INTO bill_seq (client_id, link_id) VALUES ($1, $2)"
	    " ON CONFLICT (client_id, link_id) DO UPDATE SET last_seq = bill_seq.last_seq"
	    " RETURNING last_seq", 0 },
	[BILLS_FIND] = { "bills_find",
	    "SELECT id, status, coalesce(portal_status, status),"
	    "       (" BILLS_FIGS ") IS DISTINCT FROM (" BILLS_VALS "), deleted_at IS NOT NULL,"
	    "       revision"
	    "  FROM bills WHERE " BILLS_BY_STATEMENT, 0 },
	/* the number, and the link's environment (its insights run) */
	[BILLS_SEQ] = { "bills_seq",
	    "UPDATE bill_seq SET last_seq = last_seq + 1"
	    " WHERE client_id = $1 AND link_id = $2"
	    " RETURNING last_seq, (SELECT environment FROM links WHERE id = $2)", 0 },
	/* $32: the answer's posted payment naming a new PAID or PARTIALLY_PAID
	 * statement; its match is written with the bill unless that payment
	 * is known already matched or reversed (bills_payment_store then
	 * finds the match made and writes nothing) */
	[BILLS_INSERT] = { "bills_insert",
	    "WITH m AS (SELECT CASE WHEN NOT EXISTS (SELECT 1 FROM observed_payments"
	    "   WHERE link_id = $2 AND payment_ref = $32::text AND " DB_ROW_CHECK("client_id = $1")
	    "   AND (bill_id IS NOT NULL OR status <> 'posted')) THEN $32::text END AS ref)"
	    " INSERT INTO bills (client_id, link_id, statement_ref, " BILLS_FIGS ","
	    "                   status, portal_status, paid_at, paid_reason, status_at,"
	    "                   id, environment, client_user_id, biller_id, biller_name,"
	    "                   created_seq, changed_seq, source, statement_sha256,"
	    "                   match_status, matched_payment_ref, balance_minor)"
	    " VALUES ($1, $2, $3, " BILLS_VALS ", $21::text, $21::text, $24::timestamptz,"
	    "         $25::text, CASE WHEN $21::text <> 'PENDING' THEN now() END,"
	    "         $26, $27, $28, $29, $30, $22::bigint, $22::bigint,"
	    "         coalesce($33::text, CASE WHEN $27 = 'sandbox' THEN 'sandbox'"
	    "          ELSE 'connector' END), $31,"
	    "         (SELECT CASE WHEN ref IS NOT NULL THEN 'MATCHED' END FROM m),"
	    "         (SELECT ref FROM m), $23::bigint)", 0 },
	[BILLS_UPDATE] = { "bills_update",
	/* a tombstone listed again is the bill again */
	    "UPDATE bills SET (" BILLS_FIGS ") = (" BILLS_VALS "), portal_status = $21::text,"
	    "       balance_minor = $23::bigint,"
	    "       changed_seq = $22::bigint, deleted_at = NULL, deleted_seq = NULL,"
	    "       updated_at = now()"
	    " WHERE " BILLS_BY_STATEMENT, 0 },
	[BILLS_COUNT] = { "bills_count",
	    "SELECT count(*) FROM bills"
	    " WHERE " BILLS_OF_LINK " AND deleted_at IS NULL", 0 },
	/* the tombstone: the bill keeps its row, takes the seq ($4) as both
	 * changed_seq and deleted_seq */
	[BILLS_DELETE] = { "bills_delete",
	    "UPDATE bills SET deleted_at = now(), deleted_seq = $4::bigint,"
	    " changed_seq = $4::bigint, updated_at = now()"
	    " WHERE id = $3 AND " DB_ROW_CHECK("client_id = $1 AND link_id = $2")
	    "   AND deleted_at IS NULL"
	    " RETURNING client_user_id, biller_id, environment", 0 },
	[BILLS_BY_REF] = { "bills_by_ref",
	    "SELECT id FROM bills WHERE " BILLS_BY_STATEMENT " AND deleted_at IS NULL", 0 },
};

const struct db_stmt_set bills_stmt_set = { "bills", stmts, BILLS__MAX };

static struct json_object *
money_json(const struct bills_money *m)
{
	struct json_object *o = json_object_new_object();

	json_set_int(o, "minor", m->minor);
	json_set_str(o, "currency", m->currency);
	return o;
}

const char *
bills_items_json(struct arena *a, const struct bills_statement *st)
{
	struct json_object *arr = json_object_new_array();
	const char *text;
	size_t i;

	for (i = 0; i < st->nitems; i++) {
		const struct bills_line_item *it = &st->items[i];
		struct json_object *o = json_object_new_object();

		json_set_str(o, "description", it->description);
		json_set_str(o, "category", it->category != NULL ? it->category : "other");
		json_object_object_add(o, "amount", money_json(&it->amount));
		if (it->has_quantity)
			json_object_object_add(o, "quantity", json_object_new_double(it->quantity));
		else
			json_set_null(o, "quantity");
		json_set_str(o, "unit", it->unit);
		json_object_array_add(arr, o);
	}
	text = json_dump(a, arr, NULL);
	json_object_put(arr);
	return text;
}

static const char *
usage_json(struct arena *a, const struct bills_statement *st)
{
	struct json_object *arr = json_object_new_array();
	const char *text;
	size_t i;

	for (i = 0; i < st->nusage; i++) {
		struct json_object *o = json_object_new_object();

		json_set_str(o, "type", st->usage[i].type);
		json_object_object_add(o, "quantity",
		    json_object_new_double(st->usage[i].quantity));
		json_set_str(o, "unit", st->usage[i].unit);
		json_object_array_add(arr, o);
	}
	text = json_dump(a, arr, NULL);
	json_object_put(arr);
	return text;
}

/* bill.created, or the bill.updated paid that confirms a bill created PAID. */
static int
emit(struct req *r, const struct bills_link *l, const char *id,
    const struct bills_statement *st, const char *change)
{
	struct json_object *o = json_object_new_object();
	const char *ev;
	char iso[TIME_ISO_SIZE];
	int64_t ms;

	json_set_str(o, "id", id);
	json_set_str(o, "object", "bill");
	json_set_str(o, "user_id", l->client_user_id);
	json_set_str(o, "biller_id", l->biller_id);
	json_set_str(o, "status", st->status);
	if (change != NULL) {
		json_set_str(o, "change", change);
		json_set_str(o, "paid_reason", st->paid_reason);
		/* the connector's instant, written as the entity writes it */
		json_set_str(o, "paid_at", time_parse(st->paid_at, &ms) == 0 ?
		    time_iso(iso, ms) : st->paid_at);
	}
	ev = events_emit(r, l->client_id, l->environment,
	    change != NULL ? "bill.updated" : "bill.created", o, NULL);
	json_object_put(o);
	return ev == NULL ? -1 : 0;
}

const char *
bills_link_lock(struct req *r, const char *client_id, const char *link_id)
{
	const char *p[2] = { client_id, link_id };
	PGresult *res = db_exec(r->db, r->arena, &stmts[BILLS_LOCK], 2, p);

	return res != NULL && PQntuples(res) == 1 ? PQgetvalue(res, 0, 0) : NULL;
}

/*
 * Every write of a link's bills takes its next number here, so this is
 * where the link's insights run is queued (kind "insights" of lib/insights:
 * one pending run per link, so a retrieval's many writes make one run, after
 * their commit).
 */
const char *
bills_link_next(struct req *r, const char *client_id, const char *link_id)
{
	const char *p[2] = { client_id, link_id };
	PGresult *res = db_exec(r->db, r->arena, &stmts[BILLS_SEQ], 2, p);

	if (res == NULL || PQntuples(res) != 1)
		return NULL;
	if (!PQgetisnull(res, 0, 1) && jobq_add(r, "insights", client_id,
	    PQgetvalue(res, 0, 1), link_id, NULL, 0) != 0)
		return NULL;
	return PQgetvalue(res, 0, 0);
}

/*
 * The move a changed report of the portal makes on a bill whose status is
 * cur: to PAID or PARTIALLY_PAID with the report's paid fields, or back to
 * PENDING (the statement shows the balance again). seq: the write's number.
 */
static int
portal_move(struct req *r, const struct bills_link *l, const char *id,
    const struct bills_statement *st, const char *seq)
{
	struct bills_move m = { 0 };

	m.seq = seq;
	m.link_id = l->link_id;	/* bills_store locked it */
	if (strcmp(st->status, "PAID") == 0 || strcmp(st->status, "PARTIALLY_PAID") == 0) {
		m.change = strcmp(st->status, "PAID") == 0 ? "paid" : "partially_paid";
		m.paid_at = st->paid_at;
		m.paid_reason = st->paid_reason != NULL ? st->paid_reason : "portal_balance_zero";
	} else {
		m.change = "status_reverted";
		m.revert_reason = "next_statement_shows_balance";
	}
	return bills_status_move(r, l->client_id, id, &m);
}

int
bills_store(struct req *r, const struct bills_link *l, const char *account_id,
    const char *account_mask, const struct bills_statement *st, int *created)
{
	char total[24], due[24], prev[24], rev[16], recv[24], chg[24], bal[24];
	const char *p[BILLS_NINSERT], *id, *seq;
	PGresult *res;

	*created = 0;
	snprintf(total, sizeof(total), "%lld", st->total.minor);
	snprintf(due, sizeof(due), "%lld", st->amount_due.minor);
	snprintf(prev, sizeof(prev), "%lld", st->previous_balance.minor);
	snprintf(rev, sizeof(rev), "%d", st->revision > 0 ? st->revision : 1);
	snprintf(recv, sizeof(recv), "%lld", st->payments_received.minor);
	snprintf(chg, sizeof(chg), "%lld", st->current_charges.minor);
	snprintf(bal, sizeof(bal), "%lld", st->balance.minor);
	p[0] = l->client_id;
	p[1] = l->link_id;
	p[2] = st->ref;
	p[3] = st->total.currency;
	p[4] = total;
	p[5] = due;
	p[6] = prev;
	p[7] = st->due_date;
	p[8] = st->statement_date;
	p[9] = st->period_start;
	p[10] = st->period_end;
	p[11] = st->bill_number;
	p[12] = account_mask;
	p[13] = bills_items_json(r->arena, st);
	p[14] = usage_json(r->arena, st);
	p[15] = st->has_document ? "true" : "false";
	p[16] = account_id;
	p[17] = rev;
	p[18] = st->has_figures ? recv : NULL;
	p[19] = st->has_figures ? chg : NULL;
	p[20] = st->status;
	p[22] = st->has_balance ? bal : NULL;

	if ((!l->locked && bills_link_lock(r, l->client_id, l->link_id) == NULL) ||
	    (res = db_exec(r->db, r->arena, &stmts[BILLS_FIND], BILLS_NFIGS, p)) == NULL)
		return -1;
	if (PQntuples(res) == 1) {
		int figs = strcmp(PQgetvalue(res, 0, BF_CHANGED), "t") == 0;
		int reported = strcmp(PQgetvalue(res, 0, BF_PORTAL), st->status) != 0;
		int gone = strcmp(PQgetvalue(res, 0, BF_DELETED), "t") == 0;
		struct bills_move m = { 0 };
		int rc = 0;

		/* the same statement again, or an older revision of it */
		if ((!gone && !figs && !reported) ||
		    (st->revision > 0 && st->revision < atoi(PQgetvalue(res, 0, BF_REVISION))))
			return 0;
		id = PQgetvalue(res, 0, BF_ID);
		if ((seq = bills_link_next(r, l->client_id, l->link_id)) == NULL)
			return -1;
		p[21] = seq;
		if (db_exec(r->db, r->arena, &stmts[BILLS_UPDATE], BILLS_NUPDATE, p) == NULL)
			return -1;
		/* deleted (withdrawn or unlisted) and listed again: the bill is
		 * back with its id, announced as new (the client removed it),
		 * with its status as it stood; then the report's status move */
		if (gone) {
			struct bills_statement was = *st;

			was.status = PQgetvalue(res, 0, BF_STATUS);
			*created = 1;
			if (emit(r, l, id, &was, NULL) != 0)
				return -1;
			figs = 0;
		}
		/* one event for the write: the status move the report makes,
		 * else the corrected figures */
		if (reported && strcmp(PQgetvalue(res, 0, BF_STATUS), st->status) != 0 &&
		    (rc = portal_move(r, l, id, st, seq)) != 0)
			return rc < 0 ? -1 : 0;
		if (!figs)
			return 0;
		m.change = "statement_refreshed";
		m.seq = seq;
		m.link_id = l->link_id;
		return bills_status_move(r, l->client_id, id, &m) < 0 ? -1 : 0;
	}
	if ((seq = bills_link_next(r, l->client_id, l->link_id)) == NULL)
		return -1;
	id = crypto_id_new(r->arena, "bill");
	p[21] = seq;
	p[23] = st->paid_at;
	p[24] = st->paid_reason;
	p[25] = id;
	p[26] = l->environment;
	p[27] = l->client_user_id;
	p[28] = l->biller_id;
	p[29] = l->biller_name != NULL ? l->biller_name : "";
	p[30] = st->sha256;
	p[31] = strcmp(st->status, "PENDING") != 0 ? st->matched_payment_ref : NULL;
	p[32] = l->source;
	if (db_exec(r->db, r->arena, &stmts[BILLS_INSERT], BILLS_NINSERT, p) == NULL)
		return -1;
	*created = 1;
	if (emit(r, l, id, st, NULL) != 0)
		return -1;
	/* created PAID: the spec's idempotent confirmation */
	if (strcmp(st->status, "PAID") == 0 && emit(r, l, id, st, "paid") != 0)
		return -1;
	return 0;
}

int
bills_withdraw(struct req *r, const struct bills_link *l, const char *statement_ref)
{
	const char *p[3] = { l->client_id, l->link_id, statement_ref };
	PGresult *res;

	if ((res = db_exec(r->db, r->arena, &stmts[BILLS_BY_REF], 3, p)) == NULL)
		return -1;
	if (PQntuples(res) != 1)
		return 0;
	return bills_delete(r, l->client_id, l->link_id, PQgetvalue(res, 0, 0));
}

int
bills_delete(struct req *r, const char *client_id, const char *link_id, const char *bill_id)
{
	const char *p[4] = { client_id, link_id, bill_id, NULL };
	struct json_object *o;
	PGresult *res;

	if (bills_link_lock(r, client_id, link_id) == NULL ||
	    (p[3] = bills_link_next(r, client_id, link_id)) == NULL)
		return -1;
	if ((res = db_exec(r->db, r->arena, &stmts[BILLS_DELETE], 4, p)) == NULL)
		return -1;
	/* already deleted (or not this link's): the number taken is a gap,
	 * which the sync tolerates */
	if (PQntuples(res) != 1)
		return 0;
	o = json_object_new_object();
	json_set_str(o, "id", bill_id);
	json_set_str(o, "object", "bill");
	json_set_str(o, "user_id", PQgetvalue(res, 0, 0));
	json_set_str(o, "biller_id", PQgetvalue(res, 0, 1));
	if (events_emit(r, client_id, PQgetvalue(res, 0, 2), "bill.deleted", o, NULL) == NULL) {
		json_object_put(o);
		return -1;
	}
	json_object_put(o);
	return 1;
}

long long
bills_count(struct req *r, const char *client_id, const char *link_id)
{
	const char *p[2] = { client_id, link_id };
	PGresult *res = db_exec(r->db, r->arena, &stmts[BILLS_COUNT], 2, p);

	if (res == NULL || PQntuples(res) != 1)
		return -1;
	return strtoll(PQgetvalue(res, 0, 0), NULL, 10);
}
