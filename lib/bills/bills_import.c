/*
 * Bills from imports (bills.h bills_import_create; docs/DECISIONS.md
 * "Bills from imports"): the one write of a bill whose statement a client
 * uploaded, or a portal gave only as a PDF. The bill lands where a
 * connector's would when the user has a link of its biller (the link's
 * change sequence, so its sync carries it as added), else beside the
 * links, with no link: the bills list finds it by client_user_id.
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "core/arena.h"
#include "core/crypto.h"
#include "core/db.h"
#include "core/json.h"
#include "core/req.h"
#include "events/events.h"
#include "bills/bills.h"

enum bi_stmt { BI_BILLER, BI_BILLER_NAMED, BI_LINK, BI_ACCOUNT, BI_INSERT, BI_BY_REF, BI__MAX };

/* BI_INSERT's parameters */
enum bi_param {
	BP_CLIENT, BP_ID, BP_ENV, BP_LINK, BP_ACCOUNT, BP_USER, BP_BILLER, BP_BILLER_NAME,
	BP_REF, BP_CURRENCY, BP_TOTAL, BP_DUE, BP_PREV, BP_DUE_DATE, BP_STATEMENT_DATE,
	BP_START, BP_END, BP_NUMBER, BP_MASK, BP_ITEMS, BP_SHA, BP_TYPE, BP_SOURCE,
	BP_IMPORT, BP_SEQ, BP_RECEIVED, BP_CHARGES, BP__MAX
};

static struct db_stmt stmts[BI__MAX] = {
	[BI_BILLER] = { "bills_import_biller", "SELECT id, name FROM billers WHERE id = $1", 0 },
	/* the catalog biller the payee names: only when one does */
	[BI_BILLER_NAMED] = { "bills_import_biller_named",
	    "SELECT id, name FROM billers WHERE lower(name) = lower($1) LIMIT 2", 0 },
	/* the user's link of the biller; a disconnected one still syncs */
	[BI_LINK] = { "bills_import_link",
	    "SELECT id FROM links"
	    " WHERE client_id = $1 AND environment = $2 AND client_user_id = $3"
	    "   AND biller_id = $4 AND status <> 'REVOKED'"
	    " ORDER BY status = 'ACTIVE' DESC, created_at DESC, id DESC LIMIT 1", 0 },
	[BI_ACCOUNT] = { "bills_import_account",
	    "SELECT id FROM link_accounts"
	    " WHERE link_id = $2 AND account_number_mask = $3 AND " DB_ROW_CHECK("client_id = $1")
	    " LIMIT 2", 0 },
	/* a bill of no link takes no number: no sync carries it */
	[BI_INSERT] = { "bills_import_insert",
	    "INSERT INTO bills (client_id, id, environment, link_id, account_id, client_user_id,"
	    "                   biller_id, biller_name, statement_ref, status, currency,"
	    "                   total_minor, amount_due_minor, previous_balance_minor, due_date,"
	    "                   statement_date, period_start, period_end, bill_number,"
	    "                   account_number_mask, line_items, has_statement,"
	    "                   statement_sha256, statement_type, source, import_id,"
	    "                   created_seq, changed_seq, payments_received_minor,"
	    "                   current_charges_minor)"
	    " VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, 'PENDING', $10, $11::bigint,"
	    "         $12::bigint, $13::bigint, $14::date, $15::date, $16::date, $17::date, $18,"
	    "         $19, $20::jsonb, $21::text IS NOT NULL, $21, $22, $23, $24,"
	    "         $25::bigint, $25::bigint, $26::bigint, $27::bigint)"
	    " ON CONFLICT (link_id, statement_ref) DO NOTHING RETURNING id, entity", 0 },
	[BI_BY_REF] = { "bills_import_by_ref",
	    "SELECT id, entity FROM bills WHERE " BILLS_BY_STATEMENT, 0 },
};

const struct db_stmt_set bills_import_stmt_set = { "bills_import", stmts, BI__MAX };

/* The last four letters or digits of an account number (the mask links
 * keep), or NULL when it has none. */
static const char *
mask_of(struct arena *a, const char *number)
{
	char tail[5];
	size_t n = 0, len;

	if (number == NULL)
		return NULL;
	for (len = strlen(number); len > 0 && n < 4; len--)
		if (isalnum((unsigned char)number[len - 1]))
			tail[3 - n++] = number[len - 1];
	if (n == 0)
		return NULL;
	tail[4] = '\0';
	return arena_printf(a, "%s", tail + 4 - n);
}

/* The biller: the import's (its name), else the one the payee names. */
static int
biller_of(struct req *r, const struct bills_import *imp, const char **id, const char **name)
{
	const char *p[1];
	PGresult *res;

	*id = NULL;
	*name = imp->payee != NULL ? imp->payee : "";
	if ((p[0] = imp->biller_id != NULL ? imp->biller_id : imp->payee) == NULL)
		return 0;
	if ((res = db_exec(r->db, r->arena, &stmts[imp->biller_id != NULL ? BI_BILLER :
	    BI_BILLER_NAMED], 1, p)) == NULL)
		return -1;
	if (imp->biller_id != NULL)
		*id = imp->biller_id;
	if (PQntuples(res) == 1) {
		*id = PQgetvalue(res, 0, 0);
		*name = PQgetvalue(res, 0, 1);
	}
	return 0;
}

/* An upload's link and account: the user's link of the biller, NULLs
 * when there is none. */
static int
link_of(struct req *r, const struct bills_import *imp, const char *biller_id,
    const char *mask, const char **link, const char **account)
{
	const char *p[4] = { imp->client_id, imp->environment, imp->client_user_id, biller_id };
	PGresult *res;

	*link = *account = NULL;
	if (biller_id == NULL)
		return 0;
	if ((res = db_exec(r->db, r->arena, &stmts[BI_LINK], 4, p)) == NULL)
		return -1;
	if (PQntuples(res) != 1)
		return 0;
	*link = PQgetvalue(res, 0, 0);
	if (mask == NULL)
		return 0;
	p[1] = *link;
	p[2] = mask;
	if ((res = db_exec(r->db, r->arena, &stmts[BI_ACCOUNT], 3, p)) == NULL)
		return -1;
	if (PQntuples(res) == 1)
		*account = PQgetvalue(res, 0, 0);
	return 0;
}

static const char *
minor_text(struct arena *a, long long minor)
{
	return arena_printf(a, "%lld", minor);
}

/* bill.created, as bills_store announces a new bill. */
static int
announce(struct req *r, const struct bills_import *imp, const char *id, const char *biller_id)
{
	struct json_object *o = json_obj(r->arena);

	json_set_str(o, "id", id);
	json_set_str(o, "object", "bill");
	json_set_str(o, "user_id", imp->client_user_id);
	json_set_str(o, "biller_id", biller_id);
	json_set_str(o, "status", "PENDING");
	return events_emit(r, imp->client_id, imp->environment, "bill.created", o, NULL) == NULL ?
	    -1 : 0;
}

int
bills_import_create(struct req *r, const struct bills_import *imp,
    const struct bills_statement *st, const char **bill_id, struct json_object **entity)
{
	const char *p[BP__MAX] = { 0 }, *biller, *name, *link = imp->link_id;
	const char *account = imp->account_id, *mask = mask_of(r->arena, imp->account_number);
	PGresult *res;

	*bill_id = NULL;
	if (biller_of(r, imp, &biller, &name) != 0 ||
	    (link == NULL && link_of(r, imp, biller, mask, &link, &account) != 0))
		return -1;
	/* the link's writers in sequence order, as bills_store */
	if (link != NULL && (bills_link_lock(r, imp->client_id, link) == NULL ||
	    (p[BP_SEQ] = bills_link_next(r, imp->client_id, link)) == NULL))
		return -1;
	p[BP_CLIENT] = imp->client_id;
	p[BP_ID] = crypto_id_new(r->arena, "bill");
	p[BP_ENV] = imp->environment;
	p[BP_LINK] = link;
	p[BP_ACCOUNT] = account;
	p[BP_USER] = imp->client_user_id;
	p[BP_BILLER] = biller;
	p[BP_BILLER_NAME] = name;
	p[BP_REF] = st->ref;
	p[BP_CURRENCY] = st->total.currency;
	p[BP_TOTAL] = minor_text(r->arena, st->total.minor);
	p[BP_DUE] = minor_text(r->arena, st->amount_due.minor);
	p[BP_PREV] = st->has_figures ? minor_text(r->arena, st->previous_balance.minor) : NULL;
	p[BP_DUE_DATE] = st->due_date;
	p[BP_STATEMENT_DATE] = st->statement_date;
	p[BP_START] = st->period_start;
	p[BP_END] = st->period_end;
	p[BP_NUMBER] = st->bill_number;
	p[BP_MASK] = mask;
	p[BP_ITEMS] = bills_items_json(r->arena, st);
	p[BP_SHA] = st->sha256;
	p[BP_TYPE] = imp->content_type != NULL ? imp->content_type : "application/pdf";
	p[BP_SOURCE] = imp->link_id != NULL ? "connector" : "import";
	p[BP_IMPORT] = imp->import_id;
	if (p[BP_SEQ] == NULL)
		p[BP_SEQ] = "0";
	p[BP_RECEIVED] = st->has_figures ? minor_text(r->arena, st->payments_received.minor) :
	    NULL;
	p[BP_CHARGES] = st->has_figures ? minor_text(r->arena, st->current_charges.minor) : NULL;
	if ((res = db_exec(r->db, r->arena, &stmts[BI_INSERT], BP__MAX, p)) == NULL)
		return -1;
	if (PQntuples(res) == 1) {
		*bill_id = PQgetvalue(res, 0, 0);
		if (entity != NULL)
			*entity = db_json_raw(r->arena, res, 0, 1);
		return announce(r, imp, *bill_id, biller) == 0 ? 1 : -1;
	}
	/* the link has this statement's bill already: the number taken is a
	 * gap, which the sync tolerates */
	p[1] = link;
	p[2] = st->ref;
	if ((res = db_exec(r->db, r->arena, &stmts[BI_BY_REF], 3, p)) == NULL ||
	    PQntuples(res) != 1)
		return -1;
	*bill_id = PQgetvalue(res, 0, 0);
	if (entity != NULL)
		*entity = db_json_raw(r->arena, res, 0, 1);
	return 0;
}
