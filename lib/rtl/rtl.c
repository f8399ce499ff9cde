/*
 * Requests to link (rtl.h): the API-key routes, the moves the connect flow
 * makes (the jobs of rtl_jobs.c), expiry, and the link_request.* events.
 *
 * Events: link_request.created when a request is made with a known biller
 * (given, or matched at once from its onboarding URL); link_request.cancelled
 * when an open request is cancelled (the cancel route with its reason, or
 * PATCH to CANCELLED); link_request.updated whenever else a request's
 * status, biller or link token changes afterwards (the flow, PATCH, expiry,
 * a discovery resolved by an operator).
 */
#include <stdlib.h>
#include <string.h>

#include "billers/billers.h"
#include "billers/billers_csv.h"
#include "core/arena.h"
#include "core/config.h"
#include "core/crypto.h"
#include "core/cursor.h"
#include "core/db.h"
#include "core/errors.h"
#include "core/json.h"
#include "core/req.h"
#include "core/sweep.h"
#include "core/validate.h"
#include "events/events.h"
#include "links/links_connect.h"
#include "rtl/rtl.h"
#include "rtl/rtl_int.h"

#define RTL_METADATA_MAX	4096	/* bytes of metadata as JSON text */
#define RTL_REASON_MAX		500
#define RTL_EXPIRE_BATCH	1000	/* per `bdsctl jobs` run */
#define RTL_SEARCH_MAX		100
#define FIELD_URL		"onboarding.biller_url"

/* SPEC "Limits": the request-to-links list's page size */
#define RTL_LIMIT_DEFAULT	50
#define RTL_LIMIT_MAX		200

/* A request (alias x) as every statement returns it. */
#define COLS(x) \
	x ".client_id, " x ".id, " x ".environment, " x ".client_user_id, " x ".biller_id, " \
	x ".status, " x ".link_token_id, encode(" x ".session_url, 'hex'), " \
	"array_to_json(" x ".consents)::text, " x ".metadata::text, " x ".onboarding_name, " \
	x ".onboarding_url, " x ".discovery_id, " x ".cancel_reason, " \
	DB_ISO(x ".created_at") ", " DB_ISO(x ".updated_at") ", " CURSOR_POS(x ".created_at")
enum rtl_col {
	C_CLIENT, C_ID, C_ENV, C_USER, C_BILLER, C_STATUS, C_LT, C_SESSION_URL, C_CONSENTS,
	C_METADATA, C_ONB_NAME, C_ONB_URL, C_DISCOVERY, C_REASON, C_CREATED, C_UPDATED,
	C_POS, C__MAX
};
/* A move returns the status, biller and link token before it, then COLS. */
#define MOVED_COLS(o, x) o ".status, " o ".biller_id, " o ".link_token_id, " COLS(x)
enum { MV_OLD_STATUS, MV_OLD_BILLER, MV_OLD_LT, MV__MAX };
/* The list: the filtered total, then COLS of the page's rows. */
enum { L_TOTAL, L__MAX };

/* The list's filters over request_to_links r: $1 client, $2 environment,
 * $3 status, $4 client_user_id, $5 biller_id, $6 search (LIKE wildcards
 * literal). */
#define FILTERED \
	"SELECT r.* FROM request_to_links r, q WHERE r.client_id = $1 AND r.environment = $2" \
	" AND ($3::text IS NULL OR r.status = $3) AND ($4::text IS NULL OR r.client_user_id = $4)" \
	" AND ($5::text IS NULL OR r.biller_id = $5) AND ($6::text IS NULL OR r.id = $6" \
	"  OR r.client_user_id ILIKE q.lk OR r.onboarding_name ILIKE q.lk" \
	"  OR EXISTS (SELECT 1 FROM billers b WHERE b.id = r.biller_id AND b.name ILIKE q.lk))"
#define SEARCH_LIKE \
	"q AS (SELECT '%' || replace(replace(replace($6::text, '\\', '\\\\'), '%', '\\%')," \
	" '_', '\\_') || '%' AS lk)"

enum {
	R_INSERT, R_GET, R_GET_LOCK, R_LIST, R_MOVE, R_STARTED, R_RESOLVE, R_WAITING,
	R_PROCEED, R_EXPIRE, R_TOKEN_OWNED, R__MAX
};
static struct db_stmt stmts[R__MAX] = {
	[R_INSERT] = { "rtl_insert",
	    "INSERT INTO request_to_links AS r (client_id, id, environment, client_user_id,"
	    " biller_id, consents, metadata, onboarding_name, onboarding_url, discovery_id)"
	    " VALUES ($1, $2, $3, $4, $5, ARRAY(SELECT json_array_elements_text($6::json)),"
	    " $7::json, $8, $9, $10)"
	    " RETURNING " COLS("r") },
	[R_GET] = { "rtl_get",
	    "SELECT " COLS("r") " FROM request_to_links r"
	    " WHERE r.client_id = $1 AND r.environment = $2 AND r.id = $3" },
	[R_GET_LOCK] = { "rtl_get_lock",
	    "SELECT " COLS("r") " FROM request_to_links r"
	    " WHERE r.client_id = $1 AND r.environment = $2 AND r.id = $3 FOR UPDATE" },
	/* newest first, keyset on (created_at, id); $7 $8 the cursor's
	 * position, $9 the page size + 1; one row even for an empty page */
	[R_LIST] = { "rtl_list",
	    "WITH " SEARCH_LIKE ", f AS (" FILTERED "),"
	    " p AS (SELECT * FROM f WHERE f.created_at <= $7::timestamptz"
	    "  AND (f.created_at < $7::timestamptz OR f.id < $8)"
	    "  ORDER BY f.created_at DESC, f.id DESC LIMIT $9::int)"
	    " SELECT c.total, " COLS("p")
	    " FROM (SELECT count(*) AS total FROM f) c LEFT JOIN p ON true"
	    " ORDER BY p.created_at DESC, p.id DESC" },
	/*
	 * Any move: $4 the status, $5 a biller (NULL: kept), $6 a link token
	 * (NULL: kept), $7 the cancel reason, $8 the states it may leave. The
	 * session URL is wiped once the request is no longer open.
	 */
	[R_MOVE] = { "rtl_move",
	    "UPDATE request_to_links r SET status = $4, biller_id = coalesce($5, r.biller_id),"
	    " link_token_id = coalesce($6, r.link_token_id),"
	    " cancel_reason = CASE WHEN $4 = 'CANCELLED' THEN coalesce($7,"
	    "  CASE WHEN o.status = 'CANCELLED' THEN r.cancel_reason END) END,"
	    " session_url = CASE WHEN $4 IN " RTL_OPEN_SQL " THEN r.session_url END,"
	    " updated_at = now()"
	    " FROM (SELECT client_id, id, status, biller_id, link_token_id FROM request_to_links"
	    "  WHERE client_id = $1 AND environment = $2 AND id = $3 FOR UPDATE) o"
	    " WHERE r.client_id = o.client_id AND r.id = o.id AND o.status = ANY ($8::text[])"
	    " RETURNING " MOVED_COLS("o", "r") },
	/* a session of the token opened: its PENDING request is under way */
	[R_STARTED] = { "rtl_started",
	    "UPDATE request_to_links r SET status = 'IN_PROGRESS', link_token_id = t.id,"
	    " updated_at = now() FROM link_tokens t"
	    " WHERE t.id = $2 AND " DB_ROW_CHECK("t.client_id = $1")
	    /* the token still live: a session_started job applied after the
	     * request moved on to another token changes nothing */
	    " AND t.expires_at > now() AND t.finished_at IS NULL"
	    " AND r.id = t.request_to_link_id AND " DB_ROW_CHECK("r.client_id = t.client_id"
	    " AND r.environment = t.environment AND r.status = 'PENDING'")
	    " RETURNING 'PENDING', r.biller_id, r.link_token_id, " COLS("r") },
	[R_RESOLVE] = { "rtl_resolve",
	    "UPDATE request_to_links r SET biller_id = $3, updated_at = now()"
	    " WHERE r.client_id = $1 AND r.discovery_id = $2 AND r.biller_id IS NULL"
	    " AND r.status IN " RTL_OPEN_SQL
	    " RETURNING r.status, NULL::text, r.link_token_id, " COLS("r") },
	[R_WAITING] = { "rtl_waiting",
	    "SELECT id FROM request_to_links WHERE client_id = $1 AND discovery_id = $2"
	    " AND biller_id IS NULL AND status IN " RTL_OPEN_SQL " ORDER BY id" },
	/* a new link token (and its session URL): a move of the token */
	[R_PROCEED] = { "rtl_proceed",
	    "UPDATE request_to_links r SET link_token_id = $4, session_url = decode($5, 'hex'),"
	    " updated_at = now()"
	    " FROM (SELECT client_id, id, status, biller_id, link_token_id FROM request_to_links"
	    "  WHERE client_id = $1 AND environment = $2 AND id = $3 FOR UPDATE) o"
	    " WHERE r.client_id = o.client_id AND r.id = o.id"
	    " RETURNING " MOVED_COLS("o", "r") },
	/* the oldest open requests past the age, a batch at a time */
	[R_EXPIRE] = { "rtl_expire",
	    "WITH due AS (SELECT client_id, id, status, biller_id, link_token_id"
	    "  FROM request_to_links"
	    "  WHERE status IN " RTL_OPEN_SQL
	    "  AND created_at < now() - make_interval(days => $1::int)"
	    "  ORDER BY created_at LIMIT $2::int FOR UPDATE SKIP LOCKED)"
	    " UPDATE request_to_links r SET status = 'EXPIRED', session_url = NULL,"
	    " updated_at = now() FROM due WHERE r.client_id = due.client_id AND r.id = due.id"
	    " RETURNING " MOVED_COLS("due", "r") },
	/* PATCH's link_token_id: one of the key's own tokens, and its end user */
	[R_TOKEN_OWNED] = { "rtl_token_owned",
	    "SELECT client_user_id FROM link_tokens"
	    " WHERE client_id = $1 AND environment = $2 AND id = $3" },
};
const struct db_stmt_set rtl_stmt_set = { "rtl", stmts, R__MAX };

/* ---- input ---- */

static const char *const rtl_states[] = { "PENDING", "IN_PROGRESS", "COMPLETED", "CANCELLED",
	"EXPIRED", NULL };
static const char *const open_states = "{PENDING,IN_PROGRESS}";
static const char *const any_state = "{PENDING,IN_PROGRESS,COMPLETED,CANCELLED,EXPIRED}";

/* metadata: a JSON object of at most RTL_METADATA_MAX bytes as text. */
static int
check_metadata(struct arena *a, struct json_object **v, const char **code, const char **msg)
{
	size_t n;

	*code = "invalid_type";
	*msg = "must be a JSON object";
	if (!json_object_is_type(*v, json_type_object))
		return -1;
	json_dump(a, *v, &n);
	*code = "too_long";
	*msg = "must be at most 4096 bytes as JSON";
	return n > RTL_METADATA_MAX ? -1 : 0;
}

/* PATCH status: EXPIRED is the service's to set. */
static int
check_settable(struct arena *a, struct json_object **v, const char **code, const char **msg)
{
	(void)a;
	if (strcmp(json_object_get_string(*v), "EXPIRED") != 0)
		return 0;
	*code = "not_settable";
	*msg = "EXPIRED is set by the service only";
	return -1;
}

static int
check_lt(struct arena *a, struct json_object **v, const char **code, const char **msg)
{
	(void)a;
	if (crypto_id_valid(json_object_get_string(*v), "lt", 0))
		return 0;
	*code = "invalid_format";
	*msg = "must be a link token id (lt_…)";
	return -1;
}

/* an onboarding, and the connect page's biller request */
const struct vfield rtl_biller_request_fields[] = {
	{ "biller_name", NULL, VT_STRING, V_REQUIRED, 1, 200, .check = validate_name },
	{ "biller_url", NULL, VT_STRING, V_REQUIRED, 1, 2048 },
	{ NULL }
};

const struct vfield rtl_create_fields[] = {
	{ "client_user_id", NULL, VT_STRING, V_REQUIRED, 1, 255 },
	{ "biller_id", NULL, VT_STRING, 0, 1, 64 },
	{ "onboarding", NULL, VT_OBJECT, 0, .fields = rtl_biller_request_fields },
	/* as the link tokens' consents */
	{ "consents", NULL, VT_ARRAY, V_UNIQUE, 0, 16, billers_consent_scopes, .items = VT_STRING },
	{ "metadata", NULL, VT_ANY, 0, .check = check_metadata },
	{ NULL }
};

const struct vfield rtl_list_query[] = {
	{ "search", NULL, VT_STRING, 0, 1, RTL_SEARCH_MAX },
	{ "status", NULL, VT_STRING, 0, 0, 0, rtl_states },
	{ "client_user_id", NULL, VT_STRING, 0, 1, 255 },
	{ "biller_id", NULL, VT_STRING, 0, 1, 64 },
	CURSOR_LIMIT_FIELD(RTL_LIMIT_MAX),
	CURSOR_QUERY_FIELD,
	{ NULL }
};

const struct vfield rtl_status_fields[] = {
	{ "status", NULL, VT_STRING, V_REQUIRED, 0, 0, rtl_states, .check = check_settable },
	{ "biller_id", NULL, VT_STRING, 0, 1, 64 },
	{ "link_token_id", NULL, VT_STRING, 0, 1, 64, .check = check_lt },
	{ NULL }
};

const struct vfield rtl_cancel_fields[] = {
	{ "reason", NULL, VT_STRING, 0, 0, RTL_REASON_MAX },
	{ NULL }
};

/* ---- a request: row, entity, events ---- */

struct rtl_row {
	const char	*v[C__MAX];
	const char	*old_status, *old_biller, *old_lt;	/* a move's "before" */
};

/* Row i of res into *w, its COLS starting at column off (arena strings). */
static void
row_fill(struct req *r, PGresult *res, int i, int off, struct rtl_row *w)
{
	for (int c = 0; c < C__MAX; c++)
		w->v[c] = PQgetisnull(res, i, off + c) ? NULL :
		    arena_strdup(r->arena, PQgetvalue(res, i, off + c));
	w->old_status = w->old_biller = w->old_lt = NULL;
	if (off == MV__MAX) {
		w->old_status = arena_strdup(r->arena, PQgetvalue(res, i, MV_OLD_STATUS));
		w->old_biller = PQgetisnull(res, i, MV_OLD_BILLER) ? NULL :
		    arena_strdup(r->arena, PQgetvalue(res, i, MV_OLD_BILLER));
		w->old_lt = PQgetisnull(res, i, MV_OLD_LT) ? NULL :
		    arena_strdup(r->arena, PQgetvalue(res, i, MV_OLD_LT));
	}
}

static const char *
url_ad(struct req *r, const char *id)
{
	return arena_printf(r->arena, "%s:session_url", id);
}

static struct json_object *
parsed(struct req *r, const char *text)
{
	const char *why;

	return text != NULL ? json_parse(r->arena, text, strlen(text), &why) : NULL;
}

/* The request as the API shows it (arena-owned). */
static struct json_object *
entity(struct req *r, const struct rtl_row *w)
{
	struct json_object *o = json_obj(r->arena), *v;

	json_set_str(o, "id", w->v[C_ID]);
	json_set_str(o, "object", "request_to_link");
	json_set_str(o, "client_id", w->v[C_CLIENT]);
	json_set_str(o, "client_user_id", w->v[C_USER]);
	json_set_str(o, "biller_id", w->v[C_BILLER]);
	json_set_str(o, "status", w->v[C_STATUS]);
	json_set_str(o, "link_token_id", w->v[C_LT]);
	json_set_str(o, "session_url", w->v[C_SESSION_URL] == NULL ? NULL :
	    crypto_open_hex(r->arena, r->cfg->secret_key, w->v[C_SESSION_URL],
	    url_ad(r, w->v[C_ID])));
	v = parsed(r, w->v[C_METADATA]);
	json_set(o, "metadata", v != NULL ? json_object_get(v) : json_object_new_object());
	v = parsed(r, w->v[C_CONSENTS]);
	json_set(o, "consents", v != NULL ? json_object_get(v) : json_object_new_array());
	if (w->v[C_ONB_URL] != NULL) {
		v = json_obj(r->arena);
		json_set_str(v, "biller_name", w->v[C_ONB_NAME]);
		json_set_str(v, "biller_url", w->v[C_ONB_URL]);
		json_set(o, "onboarding", json_object_get(v));
	} else
		json_set_null(o, "onboarding");
	json_set_str(o, "biller_discovery_id", w->v[C_DISCOVERY]);
	json_set_str(o, "cancel_reason", w->v[C_REASON]);
	json_set_str(o, "created_at", w->v[C_CREATED]);
	json_set_str(o, "updated_at", w->v[C_UPDATED]);
	return o;
}

/* link_request.<type> for w: its ids, status and (for a move) the one before. */
static int
emit(struct req *r, const struct rtl_row *w, const char *type)
{
	struct json_object *o = json_obj(r->arena);

	json_set_str(o, "id", w->v[C_ID]);
	json_set_str(o, "object", "link_request");
	json_set_str(o, "request_to_link_id", w->v[C_ID]);
	json_set_str(o, "status", w->v[C_STATUS]);
	if (w->old_status != NULL)
		json_set_str(o, "previous_status", w->old_status);
	json_set_str(o, "client_user_id", w->v[C_USER]);
	json_set_str(o, "biller_id", w->v[C_BILLER]);
	json_set_str(o, "link_token_id", w->v[C_LT]);
	json_set_str(o, "biller_discovery_id", w->v[C_DISCOVERY]);
	if (strcmp(type, "link_request.cancelled") == 0)
		json_set_str(o, "reason", w->v[C_REASON]);
	return events_emit(r, w->v[C_CLIENT], w->v[C_ENV], type, o, NULL) != NULL ? 0 : -1;
}

static int
same(const char *a, const char *b)
{
	return (a == NULL && b == NULL) || (a != NULL && b != NULL && strcmp(a, b) == 0);
}

/* PENDING or IN_PROGRESS: what cancel and proceed take (RTL_OPEN_SQL). */
static int
is_open(const char *status)
{
	return strcmp(status, "PENDING") == 0 || strcmp(status, "IN_PROGRESS") == 0;
}

/*
 * After a move: link_request.cancelled when it cancelled an open request
 * (the cancel route, or PATCH to CANCELLED), else link_request.updated when
 * the status, the biller or the link token changed; and a request no
 * longer open ends its live link tokens (except keep).
 */
static int
moved(struct req *r, const struct rtl_row *w, const char *keep)
{
	if (strcmp(w->v[C_STATUS], "CANCELLED") == 0 && is_open(w->old_status)) {
		if (emit(r, w, "link_request.cancelled") != 0)
			return -1;
	} else if (!same(w->old_status, w->v[C_STATUS]) || !same(w->old_biller, w->v[C_BILLER]) ||
	    !same(w->old_lt, w->v[C_LT]))
		if (emit(r, w, "link_request.updated") != 0)
			return -1;
	if (!is_open(w->v[C_STATUS]))
		return links_tokens_end_rtl(r, w->v[C_CLIENT], w->v[C_ID], keep) < 0 ? -1 : 0;
	return 0;
}

/* One row statement of stmt (params p) whose rows are moves: each one's
 * consequences. How many rows, or -1. */
static int
moves(struct req *r, struct db_stmt *stmt, int n, const char *const *p, const char *keep)
{
	PGresult *res = db_query(r, stmt, n, p);
	struct rtl_row w;

	if (res == NULL)
		return -1;
	for (int i = 0; i < PQntuples(res); i++) {
		row_fill(r, res, i, MV__MAX, &w);
		if (moved(r, &w, keep) != 0)
			return -1;
	}
	return PQntuples(res);
}

static int
not_found(struct req *r, const char *id)
{
	return api_error(r, 404, ERR_REQUEST_TO_LINK_NOT_FOUND, "list them with GET"
	    " /v1/request-to-links", "no request to link %s", id);
}

/* The key's request {id} (locked for a write): 0 with *w, or the status
 * written (404 for an unknown id and for another client's). */
static int
request_or_reply(struct req *r, int lock, struct rtl_row *w)
{
	const char *id = req_cap(r, "id"), *p[3] = { r->client_id, r->env, id };
	PGresult *res;

	if (!crypto_id_valid(id, "rtl", 0))
		return not_found(r, id);
	if ((res = db_query(r, &stmts[lock ? R_GET_LOCK : R_GET], 3, p)) == NULL)
		return api_db_error(r);
	if (PQntuples(res) != 1)
		return not_found(r, id);
	row_fill(r, res, 0, 0, w);
	return 0;
}

/* A biller a request may name: 0, or the 400 written (field). */
static int
biller_or_reply(struct req *r, const char *id, const char *field)
{
	struct billers_row b;

	switch (billers_get(r, id, &b)) {
	case 1:
		if (strcmp(b.status, "UNSUPPORTED") != 0)
			return 0;
		return api_field_error(r, 400, ERR_VALIDATION_ERROR, field, "biller_unsupported",
		    "the biller is not supported; choose another");
	case 0:
		return api_field_error(r, 400, ERR_VALIDATION_ERROR, field, "unknown_biller",
		    "no such biller");
	default:
		return api_db_error(r);
	}
}

/* ---- routes ---- */

int
rtl_create(struct req *r, struct json_object *out)
{
	struct json_object *b = r->body, *onb = NULL, *v = NULL;
	struct rtl_onboarding o = { 0 };
	const char *p[10];
	struct rtl_row w;
	PGresult *res;
	int rc;

	json_object_object_get_ex(b, "onboarding", &onb);
	o.biller_id = json_get_str(b, "biller_id");
	if ((o.biller_id != NULL) == (onb != NULL))
		return api_field_error(r, 400, ERR_VALIDATION_ERROR, o.biller_id ? "onboarding" :
		    "biller_id", o.biller_id ? "exclusive" : "required",
		    "send exactly one of biller_id or onboarding");
	if (o.biller_id != NULL && (rc = biller_or_reply(r, o.biller_id, "biller_id")) != 0)
		return rc;
	if (onb != NULL && ((rc = rtl_onboard_or_reply(r, onb, FIELD_URL, &o)) != 0 ||
	    (o.biller_id != NULL && (rc = biller_or_reply(r, o.biller_id, FIELD_URL)) != 0)))
		return rc;
	p[0] = r->client_id;
	p[1] = crypto_id_new(r->arena, "rtl");
	p[2] = r->env;
	p[3] = json_get_str(b, "client_user_id");
	p[4] = o.biller_id;
	p[5] = json_object_object_get_ex(b, "consents", &v) ? json_dump(r->arena, v, NULL) : "[]";
	p[6] = json_object_object_get_ex(b, "metadata", &v) && v != NULL ?	/* null: none */
	    json_dump(r->arena, v, NULL) : "{}";
	p[7] = o.name;
	p[8] = o.url;
	p[9] = o.discovery_id;
	if ((res = db_query(r, &stmts[R_INSERT], 10, p)) == NULL || PQntuples(res) != 1)
		return api_db_error(r);
	row_fill(r, res, 0, 0, &w);
	if (w.v[C_BILLER] != NULL && emit(r, &w, "link_request.created") != 0)
		return api_db_error(r);
	json_merge(out, entity(r, &w));
	return 201;
}

/* A row of the list: the request. */
static struct json_object *
list_item(struct req *r, PGresult *res, int i)
{
	struct rtl_row w;

	row_fill(r, res, i, L__MAX, &w);
	return entity(r, &w);
}

/* Newest first on (created_at, id), one row even for an empty page; the
 * cursor is bound to the key's client and environment and the filters. */
static const struct cursor_list rtl_page = {
	.name = "request_to_links", .flags = CURSOR_TENANT | CURSOR_KEYSET,
	.shape = CURSOR_TOTALLED, .key = "items", .limit = RTL_LIMIT_DEFAULT,
	.prefix = "rtl", .cols = { L__MAX + C_POS, L__MAX + C_ID }, .total_col = L_TOTAL,
	.item = list_item,
};

int
rtl_list(struct req *r, struct json_object *out)
{
	struct json_object *q = r->query;
	const char *p[9] = { r->client_id, r->env, json_get_str(q, "status"),
	    json_get_str(q, "client_user_id"), json_get_str(q, "biller_id"),
	    json_get_str(q, "search") };
	struct cursor_page pg;
	PGresult *res;
	int rc;

	if ((rc = cursor_page_open(r, &rtl_page, &p[2], 4, &pg)) != 0)
		return rc;
	p[6] = pg.pos[0];
	p[7] = pg.pos[1];
	p[8] = pg.limit1;
	if ((res = db_query(r, &stmts[R_LIST], 9, p)) == NULL)
		return api_db_error(r);
	return cursor_page_reply(r, out, &pg, res);
}

int
rtl_get(struct req *r, struct json_object *out)
{
	struct rtl_row w;
	int rc;

	if ((rc = request_or_reply(r, 0, &w)) != 0)
		return rc;
	json_merge(out, entity(r, &w));
	return 200;
}

/* A move of the locked request w by one of the routes: 0 with *w the
 * request after it, or the status written. */
static int
move_or_reply(struct req *r, struct rtl_row *w, const char *status, const char *biller,
    const char *lt, const char *reason)
{
	const char *p[8] = { r->client_id, r->env, w->v[C_ID], status, biller, lt, reason,
	    any_state };
	PGresult *res;

	if ((res = db_query(r, &stmts[R_MOVE], 8, p)) == NULL || PQntuples(res) != 1)
		return api_db_error(r);
	row_fill(r, res, 0, MV__MAX, w);
	return 0;
}

int
rtl_status(struct req *r, struct json_object *out)
{
	const char *biller = json_get_str(r->body, "biller_id");
	const char *lt = json_get_str(r->body, "link_token_id"), *p[3];
	struct rtl_row w;
	PGresult *res;
	int rc;

	if ((rc = request_or_reply(r, 1, &w)) != 0)
		return rc;
	if (biller != NULL && (rc = biller_or_reply(r, biller, "biller_id")) != 0)
		return rc;
	if (lt != NULL) {
		p[0] = r->client_id;
		p[1] = r->env;
		p[2] = lt;
		if ((res = db_query(r, &stmts[R_TOKEN_OWNED], 3, p)) == NULL)
			return api_db_error(r);
		if (PQntuples(res) != 1)
			return api_field_error(r, 400, ERR_VALIDATION_ERROR, "link_token_id",
			    "unknown_link_token", "no such link token");
		/* as POST /v1/link-tokens refuses the pairing the other way */
		if (strcmp(PQgetvalue(res, 0, 0), w.v[C_USER]) != 0)
			return api_field_error(r, 400, ERR_VALIDATION_ERROR, "link_token_id",
			    "other_user", "the link token is for another end user");
	}
	if ((rc = move_or_reply(r, &w, json_get_str(r->body, "status"), biller, lt, NULL)) != 0)
		return rc;
	if (moved(r, &w, NULL) != 0)
		return api_db_error(r);
	json_merge(out, entity(r, &w));
	return 200;
}

/* The key's request {id}, locked and open: 0 with *w, or the status
 * written (404; 409 RTL_STATE_CONFLICT when it cannot `what`). */
static int
open_request_or_reply(struct req *r, struct rtl_row *w, const char *what)
{
	int rc;

	if ((rc = request_or_reply(r, 1, w)) != 0)
		return rc;
	if (is_open(w->v[C_STATUS]))
		return 0;
	return api_error(r, 409, ERR_RTL_STATE_CONFLICT, "only PENDING and IN_PROGRESS requests"
	    " can be cancelled or proceeded", "cannot %s a request to link that is %s", what,
	    w->v[C_STATUS]);
}

int
rtl_cancel(struct req *r, struct json_object *out)
{
	struct rtl_row w;
	int rc;

	if ((rc = open_request_or_reply(r, &w, "cancel")) != 0)
		return rc;
	if ((rc = move_or_reply(r, &w, "CANCELLED", NULL, NULL,
	    json_get_str(r->body, "reason"))) != 0)
		return rc;
	if (moved(r, &w, NULL) != 0)
		return api_db_error(r);
	json_merge(out, entity(r, &w));
	return 201;
}

/*
 * Proceed: a hosted link token for the request's end user, pinned to its
 * biller and bound to it (request_to_link_id), made by the link-token code
 * itself; its hosted_url (a ticket that lives as long as the token) is the
 * session_url. Earlier tokens of the request end. The status stays: the
 * session opening moves it; the new token is a link_request.updated.
 */
int
rtl_proceed(struct req *r, struct json_object *out)
{
	struct json_object *tok = json_obj(r->arena);
	struct links_token_args args = { 0 };
	struct billers_row b;
	const char *p[5], *lt, *url;
	struct rtl_row w;
	int rc;

	if ((rc = open_request_or_reply(r, &w, "proceed with")) != 0)
		return rc;
	if (w.v[C_BILLER] == NULL)
		return api_error(r, 409, ERR_RTL_BILLER_PENDING, "set biller_id with PATCH"
		    " /v1/request-to-links/{id}/status, or wait for the biller discovery",
		    "the request to link has no biller yet");
	if ((rc = billers_get(r, w.v[C_BILLER], &b)) < 0)
		return api_db_error(r);
	if (rc == 0 || strcmp(b.status, "UNSUPPORTED") == 0)
		return api_error(r, 409, ERR_BILLER_UNSUPPORTED, "set another biller_id with PATCH"
		    " /v1/request-to-links/{id}/status", "the biller %s cannot be linked",
		    w.v[C_BILLER]);
	args.client_user_id = w.v[C_USER];
	args.biller_id = w.v[C_BILLER];
	args.request_to_link_id = w.v[C_ID];
	args.hosted = 1;
	args.consents = parsed(r, w.v[C_CONSENTS]);
	if ((rc = links_token_new_or_reply(r, &args, tok)) != 201)
		return rc;
	lt = json_get_str(tok, "link_token");
	url = json_get_str(tok, "hosted_url");
	p[0] = r->client_id;
	p[1] = r->env;
	p[2] = w.v[C_ID];
	p[3] = lt;
	/* link_request.updated: the request's link token changed */
	if ((p[4] = crypto_seal_hex(r->arena, r->cfg->secret_key, url, url_ad(r, w.v[C_ID]))) ==
	    NULL || moves(r, &stmts[R_PROCEED], 5, p, lt) != 1 ||
	    links_tokens_end_rtl(r, r->client_id, w.v[C_ID], lt) < 0)
		return api_db_error(r);
	json_set_str(out, "link_token", lt);
	json_set_str(out, "session_url", url);
	json_set_str(out, "expires_at", json_get_str(tok, "expiration"));
	json_set_str(out, "request_to_link_id", w.v[C_ID]);
	return 201;
}

/* ---- the connect flow's hooks ---- */

int
rtl_session_started(struct req *r, const char *client_id, const char *link_token_id)
{
	const char *p[2] = { client_id, link_token_id };

	return moves(r, &stmts[R_STARTED], 2, p, NULL) < 0 ? -1 : 0;
}

int
rtl_linked(struct req *r, const struct rtl_linked *j)
{
	const char *p[8] = { j->client_id, j->environment, j->request_to_link_id, "COMPLETED",
	    NULL, j->link_token_id, NULL, open_states };
	struct json_object *o;

	if (moves(r, &stmts[R_MOVE], 8, p, j->link_token_id) < 0)
		return -1;
	if (!j->hosted)
		return 0;	/* the client exchanges the public token itself */
	/* exchanged here: the client learns the link from this event */
	o = json_obj(r->arena);
	json_set_str(o, "id", j->link_token_id);
	json_set_str(o, "object", "link_token");
	json_set_str(o, "link_token_id", j->link_token_id);
	json_set_str(o, "link_id", j->link_id);
	json_set_str(o, "request_to_link_id", j->request_to_link_id);
	json_set_str(o, "user_id", j->client_user_id);
	json_set_str(o, "biller_id", j->biller_id);
	return events_emit(r, j->client_id, j->environment, "link_token.completed", o, NULL) !=
	    NULL ? 0 : -1;
}

/* ---- for the discovery records ---- */

int
rtl_resolve_waiting(struct req *r, const char *client_id, const char *discovery_id,
    const char *biller_id)
{
	const char *p[3] = { client_id, discovery_id, biller_id };

	return moves(r, &stmts[R_RESOLVE], 3, p, NULL);
}

struct json_object *
rtl_waiting_ids(struct req *r, const char *client_id, const char *discovery_id)
{
	const char *p[2] = { client_id, discovery_id };
	struct json_object *ids = json_arr(r->arena);
	PGresult *res;

	if ((res = db_query(r, &stmts[R_WAITING], 2, p)) == NULL)
		return NULL;
	for (int i = 0; i < PQntuples(res); i++)
		json_object_array_add(ids, json_object_new_string(PQgetvalue(res, i, 0)));
	return ids;
}

/* ---- expiry ---- */

/* One batch of the expiry (core/sweep.h): the requests expired, or -1. */
static long long
expire_batch(struct req *r, int limit)
{
	const char *p[2] = { arena_printf(r->arena, "%d", rtl_settings(r->cfg)->rtl_expiry_days),
	    arena_printf(r->arena, "%d", limit) };

	return moves(r, &stmts[R_EXPIRE], 2, p, NULL);
}

long long
rtl_expire(const struct config *cfg, struct db *d, struct arena *a)
{
	return sweep_batches(cfg, d, a, RTL_EXPIRE_BATCH, 0, expire_batch);
}
