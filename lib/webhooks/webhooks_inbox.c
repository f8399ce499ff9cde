/*
 * The inbox: a delivery target inside the service. A subscription whose
 * URL starts with WEBHOOKS_INBOX_SCHEME is signed and "sent" by
 * bds-deliver like any other, but instead of a POST the exact body and
 * headers it would have sent are written into webhook_inbox, and the
 * delivery counts as acknowledged. An anonymous sandbox's subscription is
 * one (lib/sandboxes/); no client can make one (webhooks_url_check takes
 * http and https only).
 */
#include <stdlib.h>
#include <string.h>

#include "core/arena.h"
#include "core/cursor.h"
#include "core/db.h"
#include "core/errors.h"
#include "core/json.h"
#include "core/req.h"
#include "webhooks/webhooks.h"
#include "webhooks/webhooks_sign.h"

#define INBOX_ITEM_SQL "json_build_object('delivery_id', id, 'event_id', event_id," \
	" 'event_type', event_type, 'received_at', " DB_ISO("received_at") "," \
	" 'headers', headers, 'body', body)::text"
enum inbox_col { IC_ID, IC_POS, IC_ITEM, IC__MAX };
/* webhooks_inbox_acked */
enum { AK_COUNT, AK_TYPES, AK_FIRST, AK_LAST, AK__MAX };

enum { WI_STORE, WI_LIST, WI_ACKED, WI__MAX };
static struct db_stmt stmts[WI__MAX] = {
	/* a delivery tried again replaces what its last attempt left */
	[WI_STORE] = { "webhooks_inbox_store",
	    "INSERT INTO webhook_inbox AS i (client_id, id, webhook_id, event_id, event_type,"
	    " headers, body) VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7)"
	    " ON CONFLICT (client_id, id) DO UPDATE SET headers = EXCLUDED.headers,"
	    " body = EXCLUDED.body, received_at = now()" },
	/* newest first; $3 $4 the cursor's position, $5 page + 1 */
	[WI_LIST] = { "webhooks_inbox_list",
	    "SELECT id, " CURSOR_POS("received_at") ", " INBOX_ITEM_SQL
	    " FROM webhook_inbox WHERE client_id = $1 AND webhook_id = $2"
	    " AND received_at <= $3::timestamptz AND (received_at < $3::timestamptz OR id < $4)"
	    " ORDER BY received_at DESC, id DESC LIMIT $5::int" },
	/* what any endpoint of the client acknowledged in the environment */
	[WI_ACKED] = { "webhooks_inbox_acked",
	    "SELECT count(*), coalesce(json_agg(DISTINCT e.type ORDER BY e.type), '[]')::text,"
	    " " DB_ISO("min(d.updated_at)") ", " DB_ISO("max(d.updated_at)")
	    " FROM deliveries d JOIN events e ON e.client_id = d.client_id AND e.id = d.event_id"
	    " WHERE d.client_id = $1 AND e.environment = $2 AND d.status = 'succeeded'" },
};
const struct db_stmt_set webhooks_inbox_stmt_set = { "webhooks_inbox", stmts, WI__MAX };

int
webhooks_inbox_url(const char *url)
{
	return url != NULL &&
	    strncmp(url, WEBHOOKS_INBOX_SCHEME, strlen(WEBHOOKS_INBOX_SCHEME)) == 0;
}

int
webhooks_inbox_store(struct db *d, struct arena *a, const struct events_wire *ev,
    const char *delivery_id, const char *webhook_id, const char *body,
    const char *signature)
{
	const char *names[WEBHOOKS_HEADERS], *values[WEBHOOKS_HEADERS];
	struct json_object *h = json_obj(a);
	size_t n = webhooks_headers(a, ev, signature, names, values);
	const char *p[7] = { ev->client_id, delivery_id, webhook_id, ev->id, ev->type, NULL,
	    body };

	for (size_t i = 0; i < n; i++)
		json_set_str(h, names[i], values[i]);
	p[5] = json_dump(a, h, NULL);
	return db_exec(d, a, &stmts[WI_STORE], 7, p) != NULL ? 0 : -1;
}

int
webhooks_inbox_create(struct req *r, const char *client_id, const char *name,
    struct webhooks_row *row, const char **secret)
{
	struct json_object *all = json_arr(r->arena);

	json_object_array_add(all, json_object_new_string("*"));
	*secret = webhooks_secret_new(r->arena);
	return webhooks_insert_or_reply(r, client_id, "sandbox",
	    arena_printf(r->arena, "%s%s", WEBHOOKS_INBOX_SCHEME, name), all, 1, *secret, row);
}

static const struct cursor_list inbox_page = {
	.name = "webhook_inbox", .flags = CURSOR_TENANT | CURSOR_KEYSET,
	.shape = CURSOR_OBJECT_LIST, .key = "data", .limit = WEBHOOKS_INBOX_LIMIT_DEFAULT,
	.prefix = "dlv", .cols = { IC_POS, IC_ID }, .json_col = IC_ITEM,
};

int
webhooks_inbox_list(struct req *r, struct json_object *out, const char *client_id,
    const char *webhook_id)
{
	const char *p[5] = { client_id, webhook_id };
	struct cursor_page pg;
	PGresult *res;
	int rc;

	if ((rc = cursor_page_open(r, &inbox_page, &webhook_id, 1, &pg)) != 0)
		return rc;
	p[2] = pg.pos[0];
	p[3] = pg.pos[1];
	p[4] = pg.limit1;
	if ((res = db_query(r, &stmts[WI_LIST], 5, p)) == NULL)
		return api_db_error(r);
	return cursor_page_reply(r, out, &pg, res);
}

int
webhooks_acknowledged(struct req *r, const char *client_id, const char *env,
    struct webhooks_acks *ak)
{
	const char *p[2] = { client_id, env }, *why;
	PGresult *res;

	memset(ak, 0, sizeof(*ak));
	if ((res = db_query(r, &stmts[WI_ACKED], 2, p)) == NULL || PQntuples(res) != 1)
		return -1;
	ak->count = strtoll(PQgetvalue(res, 0, AK_COUNT), NULL, 10);
	ak->types = json_parse(r->arena, PQgetvalue(res, 0, AK_TYPES),
	    (size_t)PQgetlength(res, 0, AK_TYPES), &why);
	if (ak->types == NULL)
		return -1;
	if (!PQgetisnull(res, 0, AK_FIRST))
		ak->first_at = arena_strdup(r->arena, PQgetvalue(res, 0, AK_FIRST));
	if (!PQgetisnull(res, 0, AK_LAST))
		ak->last_at = arena_strdup(r->arena, PQgetvalue(res, 0, AK_LAST));
	return 0;
}
