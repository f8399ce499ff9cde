/*
 * The rows of customer messages, suppressions and consents: the module's
 * statements, and the one place its events are emitted, each in the
 * transaction of its change.
 */
#include <string.h>

#include <json-c/json.h>
#include <libpq-fe.h>

#include "core/arena.h"
#include "core/cursor.h"
#include "core/db.h"
#include "core/json.h"
#include "core/req.h"
#include "events/events.h"
#include "messages/messages.h"
#include "messages/messages_int.h"

/* the key's message: $1 client, $2 id, $3 environment */
#define KEYS_MESSAGE \
	"m.id = $2::uuid AND " DB_ROW_CHECK("m.client_id = $1 AND m.environment = $3")
/* the key's end user: $1 client, $2 environment, $3 user; the environment
 * checked on the row, so a plan takes the user's key, never the list's index */
#define KEYS_USER(p) \
	p "client_id = $1 AND " p "customer_user_aid = $3 AND " DB_ROW_CHECK(p "environment = $2")
/* the consents as the API shows them, of c (a customer_consents row or
 * none) for user $3 */
#define CONSENTS_JSON \
	"json_build_object('object', 'customer_consents', 'customer_user_aid', $3::text," \
	" 'marketing', coalesce(c.marketing, false)," \
	" 'account_update', coalesce(c.account_update, true)," \
	" 'updated_at', bds_iso(c.updated_at))"

/*
 * A page of messages, newest first: $1 client, $2 environment, user (the
 * condition on $3), $4..$8 the other filters (NULL: any), $9 $10 the
 * position to start below, $11 the page size + 1.
 */
#define LIST_SQL(user) \
	"SELECT m.id::text, " CURSOR_POS("m.created_at") ", customer_message_json(m)" \
	" FROM customer_messages m" \
	" WHERE m.client_id = $1 AND m.environment = $2 AND " user \
	" AND ($4::text IS NULL OR m.biller_id = $4)" \
	" AND ($5::text IS NULL OR m.category = $5)" \
	" AND ($6::text IS NULL OR m.delivery_status = $6)" \
	" AND ($7::timestamptz IS NULL OR m.created_at > $7::timestamptz)" \
	" AND ($8::timestamptz IS NULL OR m.created_at < $8::timestamptz)" \
	" AND m.created_at <= $9::timestamptz" \
	" AND (m.created_at < $9::timestamptz OR m.id < $10::uuid)" \
	" ORDER BY m.created_at DESC, m.id DESC LIMIT $11::int"

enum {
	S_INSERT, S_GET, S_LIST, S_LIST_USER, S_LOCK, S_COMPLAIN, S_SUP_ADD, S_SUP_GET,
	S_SUP_DELETE, S_SUP_LIST, S_CONSENTS, S_CONSENTS_SET, S__MAX
};
static struct db_stmt stmts[S__MAX] = {
	/*
	 * A message, accepted unless its user is suppressed or has not
	 * consented to its category: $1 client, $2 id, $3 environment, $4
	 * user, $5 biller, $6 category, $7 subject, $8 body, $9 metadata.
	 * Returns the entity and, when accepted, the event's object.
	 */
	[S_INSERT] = { "messages_insert",
	    "INSERT INTO customer_messages AS m (client_id, id, environment, customer_user_aid,"
	    " biller_id, category, subject, body, metadata, delivery_status, suppression_reason)"
	    " SELECT $1, $2::uuid, $3, $4, $5, $6, $7, $8, $9::json,"
	    "  CASE WHEN w.reason IS NULL THEN 'accepted' ELSE 'suppressed' END, w.reason"
	    " FROM (SELECT CASE"
	    "  WHEN EXISTS (SELECT 1 FROM customer_suppressions s WHERE s.client_id = $1"
	    "   AND s.environment = $3 AND s.customer_user_aid = $4) THEN 'suppressed'"
	    "  WHEN $6 = 'marketing' AND NOT coalesce((SELECT c.marketing FROM customer_consents c"
	    "   WHERE c.client_id = $1 AND c.environment = $3 AND c.customer_user_aid = $4),"
	    "   false) THEN 'no_marketing_consent'"
	    "  WHEN $6 = 'account_update' AND NOT coalesce((SELECT c.account_update"
	    "   FROM customer_consents c WHERE c.client_id = $1 AND c.environment = $3"
	    "   AND c.customer_user_aid = $4), true) THEN 'no_account_update_consent'"
	    "  END AS reason) w"
	    " RETURNING customer_message_json(m),"
	    " CASE WHEN m.delivery_status = 'accepted' THEN json_build_object("
	    "  'message_id', m.id, 'client_id', m.client_id,"
	    "  'customer_user_aid', m.customer_user_aid, 'biller_id', m.biller_id,"
	    "  'category', m.category, 'subject', m.subject, 'body', m.body,"
	    "  'created_at', bds_iso(m.created_at)) END" },
	[S_GET] = { "messages_get",
	    "SELECT customer_message_json(m) FROM customer_messages m WHERE " KEYS_MESSAGE },
	/* every end user's */
	[S_LIST] = { "messages_list",
	    LIST_SQL("($3::text IS NULL OR m.customer_user_aid = $3)") },
	/* the same of one end user ($3): its own index */
	[S_LIST_USER] = { "messages_list_user", LIST_SQL("m.customer_user_aid = $3") },
	/* the message a complaint is about, locked: its user and the
	 * complaint it has */
	[S_LOCK] = { "messages_lock",
	    "SELECT m.customer_user_aid, m.complaint_reason, bds_iso(m.complained_at)"
	    " FROM customer_messages m WHERE " KEYS_MESSAGE " FOR UPDATE" },
	/* $4 the reason. Returns the complaint's time and the event's object. */
	[S_COMPLAIN] = { "messages_complain",
	    "UPDATE customer_messages m SET complaint_reason = $4, complained_at = now()"
	    " WHERE " KEYS_MESSAGE " AND m.complained_at IS NULL"
	    " RETURNING bds_iso(m.complained_at), json_build_object('message_id', m.id,"
	    "  'customer_user_aid', m.customer_user_aid, 'reason', m.complaint_reason,"
	    "  'client_id', m.client_id, 'biller_id', m.biller_id,"
	    "  'created_at', bds_iso(m.complained_at))" },
	/* $4 the reason; no row when the user is on the list already */
	[S_SUP_ADD] = { "messages_suppression_add",
	    "INSERT INTO customer_suppressions AS s (client_id, environment, customer_user_aid,"
	    " reason) VALUES ($1, $2, $3, $4)"
	    " ON CONFLICT (client_id, environment, customer_user_aid) DO NOTHING"
	    " RETURNING customer_suppression_json(s)" },
	[S_SUP_GET] = { "messages_suppression_get",
	    "SELECT customer_suppression_json(s) FROM customer_suppressions s"
	    " WHERE " KEYS_USER("s.") },
	[S_SUP_DELETE] = { "messages_suppression_delete",
	    "DELETE FROM customer_suppressions s WHERE " KEYS_USER("s.")
	    " RETURNING s.customer_user_aid" },
	/* newest first; $3 $4 the position to start below, $5 the page size + 1 */
	[S_SUP_LIST] = { "messages_suppression_list",
	    "SELECT s.customer_user_aid, " CURSOR_POS("s.created_at") ","
	    " customer_suppression_json(s) FROM customer_suppressions s"
	    " WHERE s.client_id = $1 AND s.environment = $2"
	    " AND s.created_at <= $3::timestamptz"
	    " AND (s.created_at < $3::timestamptz OR s.customer_user_aid < $4)"
	    " ORDER BY s.created_at DESC, s.customer_user_aid DESC LIMIT $5::int" },
	[S_CONSENTS] = { "messages_consents",
	    "SELECT " CONSENTS_JSON " FROM (SELECT 1) o"
	    " LEFT JOIN customer_consents c ON " KEYS_USER("c.") },
	/* $4 marketing, $5 account_update: "true", "false" or NULL (kept) */
	[S_CONSENTS_SET] = { "messages_consents_set",
	    "INSERT INTO customer_consents AS c (client_id, environment, customer_user_aid,"
	    " marketing, account_update)"
	    " VALUES ($1, $2, $3, coalesce($4::boolean, false), coalesce($5::boolean, true))"
	    " ON CONFLICT (client_id, environment, customer_user_aid) DO UPDATE"
	    " SET marketing = coalesce($4::boolean, c.marketing),"
	    "  account_update = coalesce($5::boolean, c.account_update), updated_at = now()"
	    " RETURNING " CONSENTS_JSON },
};
const struct db_stmt_set messages_stmt_set = { "messages", stmts, S__MAX };

/* the columns of S_INSERT, S_LOCK and S_COMPLAIN */
enum { I_ENTITY, I_EVENT };
enum { L_USER, L_REASON, L_AT };
enum { C_AT, C_EVENT };

/* The one-row result's JSON column col, or its absence: 1, 0, -1. */
static int
one(struct req *r, PGresult *res, int col, struct json_object **entity)
{
	if (res == NULL)
		return -1;
	if (PQntuples(res) != 1)
		return 0;
	*entity = db_json_raw(r->arena, res, 0, col);
	return 1;
}

/* Emit type with the object of res's column col (JSON text): 0 or -1. */
static int
emit(struct req *r, const char *type, PGresult *res, int col)
{
	struct json_object *o;
	const char *why;

	if ((o = json_parse(r->arena, PQgetvalue(res, 0, col), (size_t)PQgetlength(res, 0, col),
	    &why)) == NULL)
		return -1;
	return events_emit(r, r->client_id, r->env, type, o, NULL) != NULL ? 0 : -1;
}

int
msg_insert(struct req *r, const struct msg_new *m, struct json_object **entity)
{
	const char *p[9] = { r->client_id, m->id, r->env, m->user, m->biller, m->category,
	    m->subject, m->body, m->metadata };
	PGresult *res;

	if ((res = db_query(r, &stmts[S_INSERT], 9, p)) == NULL || PQntuples(res) != 1)
		return -1;
	*entity = db_json_raw(r->arena, res, 0, I_ENTITY);
	if (PQgetisnull(res, 0, I_EVENT))
		return 0;
	return emit(r, "customer.message.created", res, I_EVENT) == 0 ? 1 : -1;
}

int
msg_get(struct req *r, const char *id, struct json_object **entity)
{
	const char *p[3] = { r->client_id, id, r->env };

	return one(r, db_query(r, &stmts[S_GET], 3, p), 0, entity);
}

PGresult *
msg_page(struct req *r, const char *const f[9])
{
	const char *p[11] = { r->client_id, r->env, f[0], f[1], f[2], f[3], f[4], f[5], f[6],
	    f[7], f[8] };

	/* one end user's page takes the user's index */
	return db_query(r, &stmts[f[0] != NULL ? S_LIST_USER : S_LIST], 11, p);
}

/* The complaint's effects on its user: suppressed (an entry there is
 * kept), marketing consent revoked. 0 or -1. */
static int
complaint_effects(struct req *r, const char *user)
{
	const char *s[4] = { r->client_id, r->env, user, "complaint" };
	const char *c[5] = { r->client_id, r->env, user, "false", NULL };

	if (db_query(r, &stmts[S_SUP_ADD], 4, s) == NULL ||
	    db_query(r, &stmts[S_CONSENTS_SET], 5, c) == NULL)
		return -1;
	return 0;
}

int
msg_complain(struct req *r, const char *id, const char *reason, struct msg_complaint *c)
{
	const char *p[4] = { r->client_id, id, r->env, reason };
	PGresult *res;

	if ((res = db_query(r, &stmts[S_LOCK], 3, p)) == NULL)
		return -1;
	if (PQntuples(res) != 1)
		return 0;
	c->user = arena_strdup(r->arena, PQgetvalue(res, 0, L_USER));
	if (!PQgetisnull(res, 0, L_AT)) {		/* complained already */
		c->reason = arena_strdup(r->arena, PQgetvalue(res, 0, L_REASON));
		c->created_at = arena_strdup(r->arena, PQgetvalue(res, 0, L_AT));
		return 2;
	}
	if ((res = db_query(r, &stmts[S_COMPLAIN], 4, p)) == NULL || PQntuples(res) != 1)
		return -1;
	c->reason = reason;
	c->created_at = arena_strdup(r->arena, PQgetvalue(res, 0, C_AT));
	if (emit(r, "customer.message.complaint", res, C_EVENT) != 0 ||
	    complaint_effects(r, c->user) != 0)
		return -1;
	return 1;
}

int
msg_suppression_add(struct req *r, const char *user, const char *reason,
    struct json_object **entity)
{
	const char *p[4] = { r->client_id, r->env, user, reason };
	int rc;

	if ((rc = one(r, db_query(r, &stmts[S_SUP_ADD], 4, p), 0, entity)) != 0)
		return rc;
	/* there already: the entry as it is */
	return msg_suppression_get(r, user, entity) == 1 ? 2 : -1;
}

int
msg_suppression_get(struct req *r, const char *user, struct json_object **entity)
{
	const char *p[3] = { r->client_id, r->env, user };

	return one(r, db_query(r, &stmts[S_SUP_GET], 3, p), 0, entity);
}

int
msg_suppression_delete(struct req *r, const char *user)
{
	const char *p[3] = { r->client_id, r->env, user };
	PGresult *res;

	if ((res = db_query(r, &stmts[S_SUP_DELETE], 3, p)) == NULL)
		return -1;
	return PQntuples(res) == 1;
}

PGresult *
msg_suppression_page(struct req *r, const char *const f[3])
{
	const char *p[5] = { r->client_id, r->env, f[0], f[1], f[2] };

	return db_query(r, &stmts[S_SUP_LIST], 5, p);
}

int
msg_consents_get(struct req *r, const char *user, struct json_object **entity)
{
	const char *p[3] = { r->client_id, r->env, user };

	return one(r, db_query(r, &stmts[S_CONSENTS], 3, p), 0, entity);
}

int
msg_consents_set(struct req *r, const char *user, const char *marketing,
    const char *account_update, struct json_object **entity)
{
	const char *p[5] = { r->client_id, r->env, user, marketing, account_update };

	return one(r, db_query(r, &stmts[S_CONSENTS_SET], 5, p), 0, entity);
}
