/*
 * Review and commit of bill imports (imports_review.h): PATCH review_draft,
 * POST confirm, and imports_commit, the one way from a draft to a bill
 * (the confirm's, and the extraction's for a portal statement ready as it
 * came).
 *
 * Concurrency: both routes run in a transaction (ROUTE_TX) and read the
 * import FOR UPDATE before comparing draft_version, so calls carrying the
 * same version queue on the row and every one after the first finds the
 * version moved on: exactly one winner. The draft write also names the
 * version it replaces.
 */
#include <limits.h>
#include <string.h>

#include "core/arena.h"
#include "core/db.h"
#include "core/errors.h"
#include "core/json.h"
#include "core/money.h"
#include "core/req.h"
#include "core/validate.h"
#include "bills/bills.h"
#include "imports/extract/extract.h"
#include "imports/imports.h"
#include "imports/imports_changes.h"
#include "imports/imports_int.h"
#include "imports/imports_review.h"

enum ir_stmt { IR_DRAFT, IR__MAX };

static struct db_stmt stmts[IR__MAX] = {
	/* a review that leaves the status as it is: no lifecycle move, no event */
	[IR_DRAFT] = { "imports_review_draft",
	    "UPDATE bill_imports SET draft = $3::jsonb, draft_version = draft_version + 1,"
	    " updated_at = now()"
	    " WHERE " DB_BY_ID("", " AND draft_version = $4::integer"), 0 },
};

const struct db_stmt_set imports_review_stmt_set = { "imports_review", stmts, IR__MAX };

const struct vfield imports_review_fields[] = {
	{ "changes", NULL, VT_OBJECT, V_REQUIRED, .fields = imports_changes_fields },
	{ "draft_version", NULL, VT_INT, V_REQUIRED, 0, INT_MAX },
	{ NULL }
};

const struct vfield imports_confirm_fields[] = {
	{ "final_changes", NULL, VT_OBJECT, V_REQUIRED, .fields = imports_changes_fields },
	{ "draft_version", NULL, VT_INT, 0, 0, INT_MAX },
	{ NULL }
};

/* The statuses a draft may be reviewed and confirmed in. */
static int
in_review(const char *status)
{
	return bills_is(status, "NEEDS_REVIEW") || bills_is(status, "READY_TO_COMMIT") ||
	    bills_is(status, "POSSIBLE_DUPLICATE");
}

/*
 * The caller's import, locked, in review, at draft version `version` (-1:
 * any). 0 with *w, or the status written.
 */
static int
reviewable_or_reply(struct req *r, long long version, struct imports_rec *w)
{
	int rc;

	if ((rc = imports_or_reply(r, r->http.client_user_id, 1, w)) != 0)
		return rc;
	if (bills_is(w->row.status, "COMMITTED"))
		return api_error(r, 409, ERR_BILL_IMPORT_ALREADY_COMMITTED, NULL,
		    "bill import %s is committed already, to bill %s", w->row.id,
		    w->committed_bill_id != NULL ? w->committed_bill_id : "(none)");
	if (!in_review(w->row.status))
		return api_error(r, 409, ERR_BILL_IMPORT_STATE_CONFLICT, "only an import in"
		    " NEEDS_REVIEW, READY_TO_COMMIT or POSSIBLE_DUPLICATE can be reviewed or"
		    " confirmed", "bill import %s is %s", w->row.id, w->row.status);
	if (version >= 0 && version != w->row.draft_version)
		return api_error(r, 409, ERR_DRAFT_VERSION_CONFLICT, NULL, "draft_version %lld"
		    " is not the draft's: it is at %d", version, w->row.draft_version);
	return 0;
}

/* The body's changes (member) applied to w's draft: 0, or the 400 written. */
static int
changes_or_reply(struct req *r, const char *member, struct imports_rec *w)
{
	struct verrs e = { 0 };

	if (imports_changes_apply(r->arena, w->row.draft, json_object_object_get(r->body,
	    member), member, &e) == 0)
		return 0;
	if (e.n > 0)
		return api_verror(r, &e);
	return api_error(r, 500, ERR_INTERNAL_ERROR, NULL, "internal error");
}

/* The status a reviewed draft puts its import in. */
static const char *
status_after(const struct imports_row *row)
{
	const char *why;

	if (bills_is(row->status, "POSSIBLE_DUPLICATE"))
		return row->status;
	return ex_draft_ready(row->draft, &why) ? "READY_TO_COMMIT" : "NEEDS_REVIEW";
}

int
imports_review(struct req *r, struct json_object *out)
{
	const char *to, *p[4];
	struct imports_set s = { 0 };
	struct imports_rec w;
	int rc;

	if ((rc = reviewable_or_reply(r, json_get_int(r->body, "draft_version", -1), &w)) != 0 ||
	    (rc = changes_or_reply(r, "changes", &w)) != 0)
		return rc;
	to = status_after(&w.row);
	if (strcmp(to, w.row.status) != 0) {
		s.draft = w.row.draft;
		rc = imports_move_rec(r, r->client_id, w.row.id, w.row.status, to, &s, &w);
	} else {
		p[0] = r->client_id;
		p[1] = w.row.id;
		p[2] = json_dump(r->arena, w.row.draft, NULL);
		p[3] = arena_printf(r->arena, "%d", w.row.draft_version);
		rc = db_exec_count(r->db, r->arena, &stmts[IR_DRAFT], 4, p) == 1 &&
		    imports_read(r, r->client_id, w.row.id, 0, &w) == 1 ? 1 : -1;
	}
	if (rc != 1)
		return api_db_error(r);
	json_merge(out, imports_entity(r, &w));
	return 200;
}

/* ---- commit ---- */

/* The value of a draft field, when it is a string (and a date when date). */
static const char *
draft_str(struct json_object *draft, const char *key, int date)
{
	const char *s = imports_draft_str(draft, key);

	return s == NULL || !date || validate_format(VF_DATE, s) ? s : NULL;
}

/* {value, currency} at currency cur: 0 with *minor, else -1. */
static int
money_of(struct json_object *m, const char *cur, long long *minor)
{
	const char *c = m != NULL ? json_get_str(m, "currency") : NULL;
	int exp = money_exponent(cur);

	if (m == NULL || !json_object_is_type(m, json_type_object) || !bills_is(c, cur) ||
	    exp < 0 || json_get_str(m, "value") == NULL)
		return -1;
	return money_parse(json_get_str(m, "value"), exp, MONEY_SIGNED, minor) == MONEY_OK ?
	    0 : -1;
}

/* The statement's figures (previous balance, payments, charges) when the
 * draft shows all three in the total's currency. */
static void
figures(struct json_object *d, struct bills_statement *st)
{
	const char *cur = st->total.currency;

	st->previous_balance.currency = st->payments_received.currency =
	    st->current_charges.currency = cur;
	st->has_figures =
	    money_of(imports_draft_value(d, "previous_balance", json_type_object), cur,
	    &st->previous_balance.minor) == 0 &&
	    money_of(imports_draft_value(d, "payments_received", json_type_object), cur,
	    &st->payments_received.minor) == 0 &&
	    money_of(imports_draft_value(d, "current_charges", json_type_object), cur,
	    &st->current_charges.minor) == 0;
}

/* The draft's line items that carry an amount in a known currency. */
static void
items(struct arena *a, struct json_object *d, struct bills_statement *st)
{
	struct json_object *arr = imports_draft_value(d, "line_items", json_type_array), *it, *q;
	size_t i, n = arr != NULL ? json_object_array_length(arr) : 0;

	st->items = n > 0 ? arena_alloc(a, n * sizeof(*st->items)) : NULL;
	for (i = 0; i < n; i++) {
		struct bills_line_item *li = &st->items[st->nitems];
		struct json_object *m;
		long long minor;

		it = json_object_array_get_idx(arr, i);
		if (it == NULL || !json_object_is_type(it, json_type_object) ||
		    !json_object_object_get_ex(it, "amount", &m) || m == NULL ||
		    money_of(m, json_get_str(m, "currency"), &minor) != 0)
			continue;
		memset(li, 0, sizeof(*li));
		li->amount.minor = minor;
		li->amount.currency = json_get_str(m, "currency");
		li->description = json_get_str(it, "description") != NULL ?
		    json_get_str(it, "description") : "";
		li->category = json_get_str(it, "category");
		li->unit = json_get_str(it, "unit");
		if (json_object_object_get_ex(it, "quantity", &q) && q != NULL &&
		    (json_object_is_type(q, json_type_double) ||
		    json_object_is_type(q, json_type_int))) {
			li->quantity = json_object_get_double(q);
			li->has_quantity = 1;
		}
		st->nitems++;
	}
}

/*
 * imports_commit, also handing back the bill's entity and the import as
 * committed (either may be NULL).
 */
static int
commit(struct req *r, const struct imports_row *imp, const char **bill_id,
    struct json_object **bill, struct imports_rec *after)
{
	struct bills_statement st = { 0 };
	struct bills_import bi = { 0 };
	struct imports_set s = { 0 };
	struct json_object *d = imp->draft, *period;
	int portal = bills_is(imp->source, "portal");

	*bill_id = NULL;
	if (!imports_draft_total(d, &st.total.minor, &st.total.currency))
		return 0;
	st.amount_due = st.total;
	st.ref = portal ? imp->statement_ref : imp->id;
	st.status = "PENDING";
	st.due_date = draft_str(d, "due_date_iso", 1);
	st.statement_date = draft_str(d, "statement_date", 1);
	if ((period = imports_draft_value(d, "service_period", json_type_object)) != NULL) {
		st.period_start = json_get_str(period, "start_date");
		st.period_end = json_get_str(period, "end_date");
		if (st.period_start != NULL && !validate_format(VF_DATE, st.period_start))
			st.period_start = NULL;
		if (st.period_end != NULL && !validate_format(VF_DATE, st.period_end))
			st.period_end = NULL;
	}
	st.bill_number = draft_str(d, "bill_number", 0);
	figures(d, &st);
	items(r->arena, d, &st);
	st.sha256 = imp->document_sha256;
	st.has_document = st.sha256 != NULL;

	bi.client_id = imp->client_id;
	bi.environment = imp->environment;
	bi.client_user_id = imp->client_user_id;
	bi.import_id = imp->id;
	bi.biller_id = imp->biller_id;
	bi.payee = draft_str(d, "payee_name", 0);
	bi.account_number = draft_str(d, "account_number", 0);
	bi.link_id = portal ? imp->link_id : NULL;
	bi.account_id = portal ? imp->account_id : NULL;
	bi.content_type = imp->content_type;
	if (bills_import_create(r, &bi, &st, bill_id, bill) < 0)
		return -1;
	s.draft = d;
	s.committed_bill_id = *bill_id;
	return imports_move_rec(r, imp->client_id, imp->id, imp->status, "COMMITTED", &s,
	    after) == 1 ? 1 : -1;
}

int
imports_commit(struct req *r, const struct imports_row *imp, const char **bill_id)
{
	return commit(r, imp, bill_id, NULL, NULL);
}

int
imports_confirm(struct req *r, struct json_object *out)
{
	struct json_object *bill = NULL, *v;
	struct imports_rec w;
	const char *bill_id;
	long long version = json_object_object_get_ex(r->body, "draft_version", &v) ?
	    json_get_int(r->body, "draft_version", -1) : -1;
	int rc;

	if ((rc = reviewable_or_reply(r, version, &w)) != 0 ||
	    (rc = changes_or_reply(r, "final_changes", &w)) != 0)
		return rc;
	switch (commit(r, &w.row, &bill_id, &bill, &w)) {
	case 1:
		break;
	case 0:
		return api_field_error(r, 400, ERR_VALIDATION_ERROR, "final_changes.total_amount",
		    "required", "the draft has no total amount with its currency: set"
		    " total_amount here");
	default:
		return api_db_error(r);
	}
	json_set_str(out, "outcome", "committed");
	json_set(out, "bill", json_object_get(bill));
	json_set(out, "bill_import", json_object_get(imports_entity(r, &w)));
	return 200;
}
