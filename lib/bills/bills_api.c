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

/* A cursor position: the exact timestamp (PostgreSQL keeps microseconds). */
#define POS(col) "to_char(" col " AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"')"

/* Every list's columns: the item's JSON text, then its keyset position. */
enum page_col { PG_JSON, PG_POS, PG_ID, PG__MAX };

/*
 * GET /v1/bills: $1 client, $2 environment, $3 link, $4 client_user_id,
 * $5 status, $6 due_after, $7 due_before (NULL: no filter), $8/$9 the
 * position, $10 limit + 1. lead picks the index: the link's, the user's or
 * the client's (sql/017), so the page is read in index order.
 */
#define LIST_SQL(lead) \
	"SELECT entity, " POS("created_at") ", id FROM bills" \
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
	"SELECT payments_json(p)::text, " POS("p.paid_at") ", p.id" \
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
	{ "account_link_id", NULL, VT_STRING, 0, 1, 255 },
	{ "client_user_id", NULL, VT_STRING, 0, 1, 255 },
	{ "status", NULL, VT_STRING, 0, 0, 0, bill_states },
	{ "due_after", NULL, VT_STRING, 0, 0, 0, NULL, VF_DATE },
	{ "due_before", NULL, VT_STRING, 0, 0, 0, NULL, VF_DATE },
	{ "limit", NULL, VT_INT, 0, 1, BILLS_LIST_LIMIT_MAX },
	CURSOR_QUERY_FIELD,
	{ NULL }
};

const struct vfield bills_payments_query[] = {
	{ "limit", NULL, VT_INT, 0, 1, BILLS_LIST_LIMIT_MAX },
	CURSOR_QUERY_FIELD,
	{ NULL }
};

static int
not_found(struct req *r, const char *id)
{
	return api_error(r, 404, ERR_BILL_NOT_FOUND, NULL, "no bill %s", id);
}

/* "<limit + 1>" for the statement; the page size itself in *limit. */
static const char *
limit_param(struct req *r, int64_t *limit)
{
	*limit = json_get_int(r->query, "limit", BILLS_LIST_LIMIT_DEFAULT);
	return arena_printf(r->arena, "%lld", (long long)*limit + 1);
}

/*
 * One page of a keyset list into out: key: [items as stored text],
 * has_more, next_cursor (bound to list). res holds up to limit + 1 rows of
 * enum page_col.
 */
static int
page_reply(struct req *r, struct json_object *out, PGresult *res, int64_t limit,
    const char *key, const char *list)
{
	struct json_object *items = json_arr(r->arena);
	int n = PQntuples(res), more = n > limit;

	for (int i = 0; i < n && i < limit; i++)
		json_object_array_add(items, json_object_get(db_json_raw(r->arena, res, i,
		    PG_JSON)));
	json_set(out, key, json_object_get(items));
	json_set_bool(out, "has_more", more);
	cursor_keyset_next(r, out, list,
	    more ? PQgetvalue(res, (int)limit - 1, PG_POS) : NULL,
	    more ? PQgetvalue(res, (int)limit - 1, PG_ID) : NULL);
	return 200;
}

/* s as "<length>:<s>" ("-" for none): filters in a cursor scope, unambiguous. */
static const char *
scope_part(struct req *r, const char *s)
{
	return s == NULL ? "-" : arena_printf(r->arena, "%zu:%s", strlen(s), s);
}

/*
 * GET /v1/bills: the key's bills, newest first, filtered by
 * account_link_id, client_user_id, status and due date (inclusive). A
 * cursor works only with the filters it was made with.
 */
int
bills_list(struct req *r, struct json_object *out)
{
	const char *link = json_get_str(r->query, "account_link_id"), *list;
	int64_t limit;
	const char *p[10] = { r->client_id, r->env, NULL,
	    json_get_str(r->query, "client_user_id"), json_get_str(r->query, "status"),
	    json_get_str(r->query, "due_after"), json_get_str(r->query, "due_before"),
	    "infinity", "bill_~",	/* sorts after every "bill_<uuid>" */
	    limit_param(r, &limit) };
	struct db_stmt *st = &stmts[B_LIST];
	PGresult *res;
	int rc;

	if (link != NULL) {
		/* a bare UUID names the link too; anything else matches nothing */
		const char *canon = links_id_canonical(r, link);

		p[2] = canon != NULL ? canon : link;
		st = &stmts[B_LIST_LINK];
	} else if (p[3] != NULL)
		st = &stmts[B_LIST_USER];
	list = arena_printf(r->arena, "bills?%s&%s&%s&%s&%s", scope_part(r, p[2]),
	    scope_part(r, p[3]), scope_part(r, p[4]), scope_part(r, p[5]), scope_part(r, p[6]));
	if ((rc = cursor_keyset_or_reply(r, list, "bill", json_get_str(r->query, "cursor"),
	    &p[7], &p[8])) != 0)
		return rc;
	if ((res = db_query(r, st, 10, p)) == NULL)
		return api_db_error(r);
	return page_reply(r, out, res, limit, "bills", list);
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
    const char *subject, const char *list)
{
	int64_t limit;
	const char *p[6] = { r->client_id, r->env, subject, "infinity",
	    "obp_~",	/* sorts after every "obp_<uuid>" */
	    limit_param(r, &limit) };
	PGresult *res;
	int rc;

	if ((rc = cursor_keyset_or_reply(r, list, "obp", json_get_str(r->query, "cursor"),
	    &p[3], &p[4])) != 0)
		return rc;
	if ((res = db_query(r, st, 6, p)) == NULL)
		return api_db_error(r);
	return page_reply(r, out, res, limit, "payments", list);
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
	return payments_page(r, out, &stmts[B_PAY_BILL], id,
	    arena_printf(r->arena, "bill_payments/%s", id));
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
	return payments_page(r, out, &stmts[B_PAY_LINK], link,
	    arena_printf(r->arena, "link_payments/%s", link));
}
