/*
 * The link routes of an API key (GET /v1/links/{id} also takes the
 * developer's JWT): scoped to the key's client and environment. Another
 * client's link is 404 LINK_NOT_FOUND everywhere except GET
 * /v1/links/{id}, which answers the spec's 403 CLIENT_ID_MISMATCH; the
 * client's own link in another environment is 404 (a sandbox key never
 * sees live data).
 */
#include <stdlib.h>
#include <string.h>

#include "core/arena.h"
#include "core/config.h"
#include "core/crypto.h"
#include "core/cursor.h"
#include "core/db.h"
#include "core/errors.h"
#include "core/idem.h"
#include "core/jobq.h"
#include "core/json.h"
#include "core/req.h"
#include "core/validate.h"
#include "links/links.h"
#include "links/links_entity.h"

#define LIST_COLS LINKS_JSON_SQL ", " CURSOR_POS("l.created_at") ", l.id"
enum list_col { LC_JSON, LC_POS, LC_ID, LC__MAX };
/* the developer's user id only for a developer JWT ($2): an API key's GET
 * reads the one row */
#define OWNER_COLS "l.client_id, l.environment," \
	" CASE WHEN $2::boolean THEN (SELECT c.user_id FROM clients c WHERE c.id = l.client_id) END"
enum owner_col { OW_CLIENT_ID, OW_ENVIRONMENT, OW_USER_ID, OW_ENTITY, OW__MAX };
#define REVOKE_COLS "client_user_id, biller_id"
enum revoke_col { RV_USER_ID, RV_BILLER_ID, RV__MAX };
#define REFRESH_COLS "ok, retry_after"
enum refresh_col { RF_OK, RF_RETRY_AFTER, RF__MAX };

enum { A_LIST, A_OWNER, A_REVOKE, A_TOKENS_DROP, A_REFRESH, A__MAX };
static struct db_stmt stmts[A__MAX] = {
	/* Newest first; keyset on (created_at, id) with real bounds. */
	[A_LIST] = { "links_list",
	    "SELECT " LIST_COLS " FROM links l"
	    " WHERE l.client_id = $1 AND l.environment = $2"
	    "  AND ($3::text IS NULL OR l.client_user_id = $3)"
	    "  AND ($4::text IS NULL OR l.status = $4)"
	    "  AND l.created_at <= $5::timestamptz"
	    "  AND (l.created_at < $5::timestamptz OR l.id < $6)"
	    " ORDER BY l.created_at DESC, l.id DESC LIMIT $7::int" },
	/* The link with its owner, whoever asks (GET's 403): the caller
	 * checks tenancy. */
	[A_OWNER] = { "links_owner",
	    "SELECT " OWNER_COLS ", " LINKS_JSON_SQL " FROM links l WHERE l.id = $1" },
	[A_REVOKE] = { "links_revoke",
	    "UPDATE links SET status = 'REVOKED', disconnect_reason = 'revoked',"
	    " credential_rejection_reason = NULL, credentials = NULL, credentials_key_id = NULL,"
	    " sync_status = CASE WHEN sync_status = 'syncing' THEN 'error' ELSE sync_status END,"
	    " next_sync_at = NULL, updated_at = now()"
	    " WHERE " LINKS_BY_ID("", " AND environment = $3 AND status <> 'REVOKED'")
	    " RETURNING " REVOKE_COLS },
	[A_TOKENS_DROP] = { "links_tokens_drop",
	    "DELETE FROM link_access_tokens WHERE client_id = $1 AND link_id = $2" },
	/* One accepted refresh per 10 minutes: the row is claimed only past the
	 * window; otherwise the seconds left. */
	[A_REFRESH] = { "links_refresh",
	    "WITH u AS (UPDATE links SET refresh_requested_at = now()"
	    "  WHERE " LINKS_BY_ID("", " AND (refresh_requested_at IS NULL"
	    "   OR refresh_requested_at <= now() - make_interval(secs => $3::int))")
	    "  RETURNING 1)"
	    " SELECT EXISTS (SELECT 1 FROM u),"
	    "  coalesce((SELECT ceil(extract(epoch FROM refresh_requested_at"
	    "   + make_interval(secs => $3::int) - now()))::int FROM links"
	    "   WHERE " LINKS_BY_ID("", "") "), 0)" },
};
const struct db_stmt_set links_api_stmt_set = { "links_api", stmts, A__MAX };

static const char *const link_states[] = { "ACTIVE", "DISCONNECTED", "REVOKED", NULL };

const struct vfield links_list_query[] = {
	{ "client_user_id", NULL, VT_STRING, 0, 1, 255 },
	{ "status", NULL, VT_STRING, 0, 0, 0, link_states },
	CURSOR_LIMIT_FIELD(CURSOR_LIMIT_MAX),
	CURSOR_QUERY_FIELD,
	{ NULL }
};

static int
not_found(struct req *r, const char *id)
{
	return api_error(r, 404, ERR_LINK_NOT_FOUND, NULL, "no link %s", id);
}

/* The key's link by id (any form) in the key's environment: 0 with *row,
 * or the 404/503 written. */
static int
link_or_reply(struct req *r, const char *id, struct links_row *row)
{
	int rc = links_get(r, r->client_id, id, row);

	if (rc < 0)
		return api_db_error(r);
	if (rc == 0 || strcmp(row->environment, r->env) != 0)
		return not_found(r, id);
	return 0;
}

static int
entity_or_reply(struct req *r, const char *id, struct json_object *out)
{
	struct json_object *o = links_json_by_id(r, r->client_id, id);

	if (o == NULL)
		return api_db_error(r);
	json_merge(out, o);
	return 0;
}

/* A row of the list: the link entity. */
static struct json_object *
list_item(struct req *r, PGresult *res, int i)
{
	const char *why;

	return json_parse(r->arena, PQgetvalue(res, i, LC_JSON),
	    (size_t)PQgetlength(res, i, LC_JSON), &why);
}

/* Newest first on (created_at, id); the cursor is bound to the list and
 * the key's client and environment. */
static const struct cursor_list links_page = {
	.name = "links", .flags = CURSOR_TENANT | CURSOR_KEYSET, .shape = CURSOR_NAMED,
	.key = "links", .limit = CURSOR_LIMIT_DEFAULT, .prefix = "link",
	.cols = { LC_POS, LC_ID }, .item = list_item,
};

int
links_list(struct req *r, struct json_object *out)
{
	const char *p[7] = { r->client_id, r->env, json_get_str(r->query, "client_user_id"),
	    json_get_str(r->query, "status") };
	struct cursor_page pg;
	PGresult *res;
	int rc;

	if ((rc = cursor_page_open(r, &links_page, NULL, 0, &pg)) != 0)
		return rc;
	p[4] = pg.pos[0];
	p[5] = pg.pos[1];
	p[6] = pg.limit1;
	if ((res = db_query(r, &stmts[A_LIST], 7, p)) == NULL)
		return api_db_error(r);
	return cursor_page_reply(r, out, &pg, res);
}

/*
 * GET /v1/links/{id}: the key's client and environment, or (developer
 * JWT) any client the developer owns. Another client's link: 403
 * CLIENT_ID_MISMATCH (whatever its environment); the client's own link in
 * another environment: 404.
 */
int
links_get_one(struct req *r, struct json_object *out)
{
	const char *id = req_cap(r, "id"), *p[2] = { links_id_canonical(r, id),
	    r->client_id == NULL ? "t" : "f" };
	PGresult *res;

	if (p[0] == NULL)
		return not_found(r, id);
	if ((res = db_query(r, &stmts[A_OWNER], 2, p)) == NULL)
		return api_db_error(r);
	if (PQntuples(res) != 1)
		return not_found(r, id);
	if (r->client_id != NULL) {
		if (strcmp(PQgetvalue(res, 0, OW_CLIENT_ID), r->client_id) != 0)
			return api_error(r, 403, ERR_CLIENT_ID_MISMATCH, NULL,
			    "link %s belongs to another client", id);
		if (strcmp(PQgetvalue(res, 0, OW_ENVIRONMENT), r->env) != 0)
			return not_found(r, id);
	} else if (r->user_id == NULL ||
	    strcmp(PQgetvalue(res, 0, OW_USER_ID), r->user_id) != 0) {
		return api_error(r, 403, ERR_CLIENT_ID_MISMATCH, NULL,
		    "link %s belongs to another client", id);
	}
	(void)out;
	r->out = db_json_raw(r->arena, res, 0, OW_ENTITY);
	return 200;
}

/*
 * DELETE /v1/links/{id}: REVOKED (terminal), credentials destroyed, access
 * tokens dropped, link.disconnected (revoked) emitted, the sandbox replay
 * record dropped. Deleting a REVOKED link again answers 200 with the same
 * entity and emits nothing.
 */
int
links_delete(struct req *r, struct json_object *out)
{
	const char *id = req_cap(r, "id");
	struct links_row row;
	PGresult *res;
	int rc;

	if ((rc = link_or_reply(r, id, &row)) != 0)
		return rc;
	{
		const char *p[3] = { r->client_id, row.id, r->env };

		if ((res = db_query(r, &stmts[A_REVOKE], 3, p)) == NULL)
			return api_db_error(r);
	}
	if (PQntuples(res) == 1) {
		const char *p[2] = { r->client_id, row.id };

		if (db_exec_count(r->db, r->arena, &stmts[A_TOKENS_DROP], 2, p) < 0 ||
		    idem_forget(r, req_owner(r), "link_id", row.id) != 0 ||
		    links_disconnected_emit(r, r->client_id, r->env, row.id,
		    PQgetvalue(res, 0, RV_USER_ID), PQgetvalue(res, 0, RV_BILLER_ID), "revoked",
		    NULL, NULL, NULL) != 0)
			return api_db_error(r);
	}
	if ((rc = entity_or_reply(r, row.id, out)) != 0)
		return rc;
	return 200;
}

/*
 * POST /v1/links/{id}/refresh: 202 {link_id, status: "queued"}, a
 * retrieval queued now; 429 (Retry-After) within 10 minutes of the last
 * accepted request; 409 LINK_REVOKED / LINK_DISCONNECTED when a retrieval
 * cannot run (a disconnected link is repaired through update mode).
 */
int
links_refresh(struct req *r, struct json_object *out)
{
	const char *id = req_cap(r, "id");
	struct links_row row;
	PGresult *res;
	int rc;

	if ((rc = link_or_reply(r, id, &row)) != 0)
		return rc;
	if (strcmp(row.status, "REVOKED") == 0)
		return api_error(r, 409, ERR_LINK_REVOKED, "a revoked link needs a new link",
		    "link %s is revoked", row.id);
	if (strcmp(row.status, "ACTIVE") != 0)
		return api_error(r, 409, ERR_LINK_DISCONNECTED,
		    "repair it with a link token in update mode", "link %s is disconnected",
		    row.id);
	{
		const char *p[3] = { r->client_id, row.id,
		    arena_printf(r->arena, "%d", LINKS_REFRESH_COOLDOWN) };

		if ((res = db_query(r, &stmts[A_REFRESH], 3, p)) == NULL || PQntuples(res) != 1)
			return api_db_error(r);
	}
	if (strcmp(PQgetvalue(res, 0, RF_OK), "t") != 0) {
		const char *after = PQgetvalue(res, 0, RF_RETRY_AFTER);

		req_header_add(r, "Retry-After", atoi(after) > 0 ? after : "1");
		return api_error(r, 429, ERR_RATE_LIMITED, "one refresh per link every 10 minutes",
		    "link %s was refreshed less than 10 minutes ago", row.id);
	}
	if (jobq_add(r, "retrieval", r->client_id, r->env, row.id, NULL, 0) != 0)
		return api_db_error(r);
	json_set_str(out, "link_id", row.id);
	json_set_str(out, "status", "queued");
	return 202;
}

/* POST /v1/links/{id}/access-token: 201 {access_token, expires_at} (1 h),
 * for a front end reading that link's bills; 409 on a REVOKED link. */
int
links_access_token(struct req *r, struct json_object *out)
{
	const char *id = req_cap(r, "id"), *tok, *expires_at;
	struct links_row row;
	int rc;

	if ((rc = link_or_reply(r, id, &row)) != 0)
		return rc;
	if (strcmp(row.status, "REVOKED") == 0)
		return api_error(r, 409, ERR_LINK_REVOKED, "a revoked link needs a new link",
		    "link %s is revoked", row.id);
	if ((tok = links_token_mint(r, r->client_id, r->env, row.id, LINKS_ACCESS_TOKEN_TTL,
	    &expires_at)) == NULL)
		return api_db_error(r);
	json_set_str(out, "access_token", tok);
	json_set_str(out, "link_id", row.id);
	json_set_str(out, "expires_at", expires_at);
	return 201;
}
