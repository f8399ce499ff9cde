/*
 * The bill read routes. Every read is scoped to the credential's client and
 * environment and never shows a deleted bill (deleted_at set: the tombstone
 * the sync reports as removed); another client's or environment's bill is
 * 404 BILL_NOT_FOUND like an unknown id. A link access token (AUTH_LINK,
 * r->link_id set) sees only its link's bills.
 *
 * Lists page newest first on a keyset: (created_at, id) for bills,
 * (paid_at, id) for payments, with lib/core/cursor.h's MAC'd cursor bound
 * to the list, the tenant and (for bills) the filters.
 */
#include <stdio.h>
#include <string.h>

#include "core/arena.h"
#include "core/crypto.h"
#include "core/cursor.h"
#include "core/db.h"
#include "core/errors.h"
#include "core/json.h"
#include "core/req.h"
#include "core/validate.h"
#include "bills/bills_api.h"
#include "links/links.h"
#include "links/links_auth.h"

/* Every list's columns: the item's JSON text, then its keyset position. */
enum page_col { PG_JSON, PG_POS, PG_ID, PG__MAX };

/*
 * GET /v1/bills: $1 client, $2 environment, $3 link, $4 client_user_id,
 * $5 status, $6 due_after, $7 due_before (NULL: no filter), $8/$9 the
 * position, $10 limit + 1. lead picks the index: the link's, the user's or
 * the client's (sql/017), so the page is read in index order.
 */
#define LIST_SQL(lead) \
	"SELECT entity, " CURSOR_POS("created_at") ", id FROM bills" \
	" WHERE client_id = $1 AND environment = $2 AND " lead \
	"  AND deleted_at IS NULL" \
	"  AND ($3::text IS NULL OR link_id = $3::text)" \
	"  AND ($4::text IS NULL OR client_user_id = $4::text)" \
	"  AND ($5::text IS NULL OR status = $5::text)" \
	"  AND ($6::date IS NULL OR due_date >= $6::date)" \
	"  AND ($7::date IS NULL OR due_date <= $7::date)" \
	"  AND created_at <= $8::timestamptz" \
	"  AND (created_at < $8::timestamptz OR id < $9)" \
	" ORDER BY created_at DESC, id DESC LIMIT $10::int"

/* Payments of a bill or a link ($3, by the column named), newest paid_at
 * first: $4/$5 the position, $6 limit + 1. */
#define PAYMENTS_SQL(col) \
	"SELECT payments_json(p)::text, " CURSOR_POS("p.paid_at") ", p.id" \
	" FROM observed_payments p" \
	" WHERE p.client_id = $1 AND p.environment = $2 AND p." col " = $3" \
	"  AND p.paid_at <= $4::timestamptz" \
	"  AND (p.paid_at < $4::timestamptz OR p.id < $5)" \
	" ORDER BY p.paid_at DESC, p.id DESC LIMIT $6::int"

enum {
	B_GET, B_EXISTS, B_LIST, B_LIST_LINK, B_LIST_USER, B_PAY_BILL, B_PAY_LINK, B__MAX
};
static struct db_stmt stmts[B__MAX] = {
	/* The one query of GET /v1/bills/{id} (bills_by_id); $4 the access
	 * token's link, NULL for a key. */
	[B_GET] = { "bills_api_get",
	    "SELECT entity FROM bills WHERE id = $1 AND " DB_ROW_CHECK("client_id = $2"
	    " AND environment = $3 AND deleted_at IS NULL AND ($4::text IS NULL OR link_id = $4::text)") },
	[B_EXISTS] = { "bills_api_exists",
	    "SELECT 1 FROM bills WHERE id = $1 AND " DB_ROW_CHECK("client_id = $2"
	    " AND environment = $3 AND deleted_at IS NULL") },
	[B_LIST] = { "bills_api_list", LIST_SQL("true") },
	[B_LIST_LINK] = { "bills_api_list_link", LIST_SQL("link_id = $3::text") },
	[B_LIST_USER] = { "bills_api_list_user", LIST_SQL("client_user_id = $4::text") },
	[B_PAY_BILL] = { "bills_api_payments_bill", PAYMENTS_SQL("bill_id") },
	[B_PAY_LINK] = { "bills_api_payments_link", PAYMENTS_SQL("link_id") },
};
const struct db_stmt_set bills_api_stmt_set = { "bills_api", stmts, B__MAX };

static const char *const bill_states[] = { "PENDING", "PAID", "PARTIALLY_PAID", NULL };

const struct vfield bills_list_query[] = {
	{ "account_link_id", "link_id", VT_STRING, 0, 1, 255 },
	{ "client_user_id", NULL, VT_STRING, 0, 1, 255 },
	{ "status", NULL, VT_STRING, 0, 0, 0, bill_states },
	{ "due_after", NULL, VT_STRING, 0, 0, 0, NULL, VF_DATE },
	{ "due_before", NULL, VT_STRING, 0, 0, 0, NULL, VF_DATE },
	CURSOR_LIMIT_FIELD(CURSOR_LIMIT_MAX),
	CURSOR_QUERY_FIELD,
	{ NULL }
};

const struct vfield bills_payments_query[] = {
	CURSOR_LIMIT_FIELD(CURSOR_LIMIT_MAX),
	CURSOR_QUERY_FIELD,
	{ NULL }
};

static int
not_found(struct req *r, const char *id)
{
	return api_error(r, 404, ERR_BILL_NOT_FOUND, NULL, "no bill %s", id);
}

/* Each list newest first on (timestamp, id), the item as stored; the bills
 * cursor is bound to the filters too, a payments one to its bill or link. */
#define KEYSET_PAGE(nm, k, pfx) { .name = nm, .flags = CURSOR_TENANT | CURSOR_KEYSET, \
	.shape = CURSOR_NAMED, .key = k, .limit = CURSOR_LIMIT_DEFAULT, .prefix = pfx, \
	.cols = { PG_POS, PG_ID }, .json_col = PG_JSON }
static const struct cursor_list bills_page = KEYSET_PAGE("bills", "bills", "bill");
static const struct cursor_list bill_payments_page =
	KEYSET_PAGE("bill_payments", "payments", "obp");
static const struct cursor_list link_payments_page =
	KEYSET_PAGE("link_payments", "payments", "obp");

/*
 * GET /v1/bills: the key's bills, newest first, filtered by
 * account_link_id, client_user_id, status and due date (inclusive). A
 * cursor works only with the filters it was made with.
 */
int
bills_list(struct req *r, struct json_object *out)
{
	const char *link = json_get_str(r->query, "account_link_id");
	const char *p[10] = { r->client_id, r->env, NULL,
	    json_get_str(r->query, "client_user_id"), json_get_str(r->query, "status"),
	    json_get_str(r->query, "due_after"), json_get_str(r->query, "due_before") };
	struct db_stmt *st = &stmts[B_LIST];
	struct cursor_page pg;
	PGresult *res;
	int rc;

	if (link != NULL) {
		/* a bare UUID names the link too; anything else matches nothing */
		const char *canon = links_id_canonical(r, link);

		p[2] = canon != NULL ? canon : link;
		st = &stmts[B_LIST_LINK];
	} else if (p[3] != NULL)
		st = &stmts[B_LIST_USER];
	if ((rc = cursor_page_open(r, &bills_page, &p[2], 5, &pg)) != 0)
		return rc;
	p[7] = pg.pos[0];
	p[8] = pg.pos[1];
	p[9] = pg.limit1;
	if ((res = db_query(r, st, 10, p)) == NULL)
		return api_db_error(r);
	return cursor_page_reply(r, out, &pg, res);
}

/*
 * GET /v1/bills/{id}: the entity as stored, in one query. A key sees its
 * client's and environment's bills, a link access token its link's only;
 * anything else is 404 BILL_NOT_FOUND.
 */
int
bills_get(struct req *r, struct json_object *out)
{
	const char *id = req_cap(r, "id"), *p[4] = { id, r->client_id, r->env, r->link_id };
	PGresult *res;

	(void)out;
	if (!crypto_id_valid(id, "bill", 0))
		return not_found(r, id);
	if ((res = db_query(r, &stmts[B_GET], 4, p)) == NULL)
		return api_db_error(r);
	if (PQntuples(res) != 1)
		return not_found(r, id);
	r->out = db_json_raw(r->arena, res, 0, 0);
	return 200;
}

/* A page of payments of subject (a bill or a link id) by statement st. */
static int
payments_page(struct req *r, struct json_object *out, struct db_stmt *st,
    const char *subject, const struct cursor_list *list)
{
	const char *p[6] = { r->client_id, r->env, subject };
	struct cursor_page pg;
	PGresult *res;
	int rc;

	if ((rc = cursor_page_open(r, list, &subject, 1, &pg)) != 0)
		return rc;
	p[3] = pg.pos[0];
	p[4] = pg.pos[1];
	p[5] = pg.limit1;
	if ((res = db_query(r, st, 6, p)) == NULL)
		return api_db_error(r);
	return cursor_page_reply(r, out, &pg, res);
}

/* GET /v1/bills/{id}/payments: the observed payments matched to the bill,
 * newest first; 404 BILL_NOT_FOUND as GET /v1/bills/{id}. */
int
bills_payments(struct req *r, struct json_object *out)
{
	const char *id = req_cap(r, "id"), *p[3] = { id, r->client_id, r->env };
	PGresult *res;

	if (!crypto_id_valid(id, "bill", 0))
		return not_found(r, id);
	if ((res = db_query(r, &stmts[B_EXISTS], 3, p)) == NULL)
		return api_db_error(r);
	if (PQntuples(res) != 1)
		return not_found(r, id);
	return payments_page(r, out, &stmts[B_PAY_BILL], id, &bill_payments_page);
}

/* GET /v1/account-links/{link_id}/payments: the link's observed payments,
 * newest first; a link the key may not see is 404. */
int
bills_link_payments(struct req *r, struct json_object *out)
{
	const char *link;
	int rc;

	if ((rc = links_auth_link_or_reply(r, req_cap(r, "link_id"), &link)) != 0)
		return rc;
	return payments_page(r, out, &stmts[B_PAY_LINK], link, &link_payments_page);
}
