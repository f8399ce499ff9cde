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
#include "core/crypto.h"
#include "core/db.h"
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
	BILLS__MAX
};

/* The figures a statement sets, $4..$20, in one order for find, insert,
 * update: status, currency, total, amount_due, previous_balance, due_date,
 * statement_date, period_start, period_end, bill_number, mask, line_items,
 * usage, paid_at, paid_reason, has_statement, account_id. */
#define BILLS_FIGS \
	"status, currency, total_minor, amount_due_minor, previous_balance_minor," \
	" due_date, statement_date, period_start, period_end, bill_number," \
	" account_number_mask, line_items, usage, paid_at, paid_reason, has_statement," \
	" account_id"
#define BILLS_VALS \
	"$4::text, $5::text, $6::bigint, $7::bigint, $8::bigint, $9::date, $10::date," \
	" $11::date, $12::date, $13::text, $14::text, $15::jsonb, $16::jsonb," \
	" $17::timestamptz, $18::text, $19::boolean, $20::text"

enum bills_find_col { BF_ID, BF_STATUS, BF_CHANGED, BF__MAX };

static struct db_stmt stmts[BILLS__MAX] = {
	/* lock the link's sequence row (created at 0), return the last number */
	[BILLS_LOCK] = { "bills_lock",
	    "INSERT INTO bill_seq (client_id, link_id) VALUES ($1, $2)"
	    " ON CONFLICT (client_id, link_id) DO UPDATE SET last_seq = bill_seq.last_seq"
	    " RETURNING last_seq", 0 },
	[BILLS_FIND] = { "bills_find",
	    "SELECT id, status, (" BILLS_FIGS ") IS DISTINCT FROM (" BILLS_VALS ")"
	    "  FROM bills WHERE client_id = $1 AND link_id = $2 AND statement_ref = $3", 0 },
	[BILLS_SEQ] = { "bills_seq",
	    "UPDATE bill_seq SET last_seq = last_seq + 1"
	    " WHERE client_id = $1 AND link_id = $2 RETURNING last_seq", 0 },
	[BILLS_INSERT] = { "bills_insert",
	    "INSERT INTO bills (client_id, link_id, statement_ref, " BILLS_FIGS ","
	    "                   id, environment, client_user_id, biller_id, biller_name,"
	    "                   created_seq, changed_seq, source)"
	    " VALUES ($1, $2, $3, " BILLS_VALS ", $21, $22, $23, $24, $25, $26::bigint,"
	    "         $26::bigint, CASE WHEN $22 = 'sandbox' THEN 'sandbox' ELSE 'connector' END)", 0 },
	[BILLS_UPDATE] = { "bills_update",
	    "UPDATE bills SET (" BILLS_FIGS ") = (" BILLS_VALS "),"
	    "       changed_seq = $21::bigint, updated_at = now()"
	    " WHERE client_id = $1 AND link_id = $2 AND statement_ref = $3", 0 },
	[BILLS_COUNT] = { "bills_count",
	    "SELECT count(*) FROM bills"
	    " WHERE client_id = $1 AND link_id = $2 AND deleted_at IS NULL", 0 },
	/* the tombstone: the bill keeps its row, takes the seq ($4) as both
	 * changed_seq and deleted_seq */
	[BILLS_DELETE] = { "bills_delete",
	    "UPDATE bills SET deleted_at = now(), deleted_seq = $4::bigint,"
	    " changed_seq = $4::bigint, updated_at = now()"
	    " WHERE client_id = $1 AND link_id = $2 AND id = $3 AND deleted_at IS NULL"
	    " RETURNING client_user_id, biller_id, environment", 0 },
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

static const char *
items_json(struct arena *a, const struct bills_statement *st)
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

/* bill.created, or bill.updated with change (paid, partially_paid). */
static int
emit(struct req *r, const struct bills_link *l, const char *id,
    const struct bills_statement *st, const char *change)
{
	struct json_object *o = json_object_new_object();
	const char *ev;

	json_set_str(o, "id", id);
	json_set_str(o, "object", "bill");
	json_set_str(o, "user_id", l->client_user_id);
	json_set_str(o, "biller_id", l->biller_id);
	json_set_str(o, "status", st->status);
	if (change != NULL) {
		json_set_str(o, "change", change);
		json_set_str(o, "paid_reason", st->paid_reason);
		json_set_str(o, "paid_at", st->paid_at);
	}
	ev = events_emit(r, l->client_id, l->environment,
	    change != NULL ? "bill.updated" : "bill.created", o, NULL);
	json_object_put(o);
	return ev == NULL ? -1 : 0;
}

/* The change a status move to st->status announces, or NULL. */
static const char *
paid_change(const char *status)
{
	if (strcmp(status, "PAID") == 0)
		return "paid";
	if (strcmp(status, "PARTIALLY_PAID") == 0)
		return "partially_paid";
	return NULL;
}

int
bills_store(struct req *r, const struct bills_link *l, const char *account_id,
    const char *account_mask, const struct bills_statement *st, int *created)
{
	char total[24], due[24], prev[24];
	const char *p[26], *id, *seq, *change;
	PGresult *res;

	*created = 0;
	snprintf(total, sizeof(total), "%lld", st->total.minor);
	snprintf(due, sizeof(due), "%lld", st->amount_due.minor);
	snprintf(prev, sizeof(prev), "%lld", st->previous_balance.minor);
	p[0] = l->client_id;
	p[1] = l->link_id;
	p[2] = st->ref;
	p[3] = st->status;
	p[4] = st->total.currency;
	p[5] = total;
	p[6] = due;
	p[7] = prev;
	p[8] = st->due_date;
	p[9] = st->statement_date;
	p[10] = st->period_start;
	p[11] = st->period_end;
	p[12] = st->bill_number;
	p[13] = account_mask;
	p[14] = items_json(r->arena, st);
	p[15] = usage_json(r->arena, st);
	p[16] = st->paid_at;
	p[17] = st->paid_reason;
	p[18] = st->has_document ? "true" : "false";
	p[19] = account_id;

	if (db_exec(r->db, r->arena, &stmts[BILLS_LOCK], 2, p) == NULL ||
	    (res = db_exec(r->db, r->arena, &stmts[BILLS_FIND], 20, p)) == NULL)
		return -1;
	if (PQntuples(res) == 1 && strcmp(PQgetvalue(res, 0, BF_CHANGED), "t") != 0)
		return 0;	/* the same statement again: nothing to do */
	{
		PGresult *s = db_exec(r->db, r->arena, &stmts[BILLS_SEQ], 2, p);

		if (s == NULL || PQntuples(s) != 1)
			return -1;
		seq = PQgetvalue(s, 0, 0);
	}
	if (PQntuples(res) == 1) {
		const char *was = PQgetvalue(res, 0, BF_STATUS);

		id = PQgetvalue(res, 0, BF_ID);
		p[20] = seq;
		if (db_exec(r->db, r->arena, &stmts[BILLS_UPDATE], 21, p) == NULL)
			return -1;
		/* other status events (reverts, refreshed figures) are the sync's */
		change = paid_change(st->status);
		if (change != NULL && strcmp(was, st->status) != 0 &&
		    emit(r, l, id, st, change) != 0)
			return -1;
		return 0;
	}
	id = crypto_id_new(r->arena, "bill");
	p[20] = id;
	p[21] = l->environment;
	p[22] = l->client_user_id;
	p[23] = l->biller_id;
	p[24] = l->biller_name != NULL ? l->biller_name : "";
	p[25] = seq;
	if (db_exec(r->db, r->arena, &stmts[BILLS_INSERT], 26, p) == NULL)
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
bills_delete(struct req *r, const char *client_id, const char *link_id, const char *bill_id)
{
	const char *p[4] = { client_id, link_id, bill_id, NULL };
	struct json_object *o;
	PGresult *res, *s;

	if (db_exec(r->db, r->arena, &stmts[BILLS_LOCK], 2, p) == NULL ||
	    (s = db_exec(r->db, r->arena, &stmts[BILLS_SEQ], 2, p)) == NULL ||
	    PQntuples(s) != 1)
		return -1;
	p[3] = PQgetvalue(s, 0, 0);
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
