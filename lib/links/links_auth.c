/*
 * Link-scoped reads: the link access token (bds_lat_…) a front end holds to
 * read one link's bills, and the key's tenancy check of a link for routes
 * under /v1/account-links/{link_id}. The token is stored as SHA-256 only
 * (link_access_tokens); revoking a link deletes its tokens, and the join
 * below refuses a REVOKED link's token even so.
 */
#include <string.h>

#include "core/arena.h"
#include "core/auth.h"
#include "core/db.h"
#include "core/errors.h"
#include "core/req.h"
#include "links/links.h"
#include "links/links_auth.h"

#define TOKEN_COLS "t.client_id, t.environment, t.link_id," \
	" t.expires_at IS NOT NULL AND t.expires_at <= now(), l.status = 'REVOKED'"
enum token_col { TK_CLIENT_ID, TK_ENVIRONMENT, TK_LINK_ID, TK_EXPIRED, TK_REVOKED, TK__MAX };
#define OWNER_COLS "client_id, environment"
enum owner_col { OW_CLIENT_ID, OW_ENVIRONMENT, OW__MAX };

enum { LA_TOKEN, LA_OWNER, LA__MAX };
static struct db_stmt stmts[LA__MAX] = {
	/* One primary-key lookup (and the link's row by its key). */
	[LA_TOKEN] = { "links_auth_token",
	    "SELECT " TOKEN_COLS " FROM link_access_tokens t"
	    " JOIN links l ON l.client_id = t.client_id AND l.id = t.link_id"
	    " WHERE t.token_sha256 = decode($1, 'hex')" },
	/* Whose link an id is, whatever the caller. */
	[LA_OWNER] = { "links_auth_owner",
	    "SELECT " OWNER_COLS " FROM links WHERE id = $1" },
};
const struct db_stmt_set links_auth_stmt_set = { "links_auth", stmts, LA__MAX };

static int
invalid(struct req *r)
{
	return api_error(r, 401, ERR_INVALID_ACCESS_TOKEN,
	    "mint a new one with POST /v1/links/{id}/access-token",
	    "missing or invalid link access token");
}

int
links_auth_token(struct req *r, const char *token)
{
	const char *p[1];
	PGresult *res;

	if (!auth_token_wellformed(token, LINKS_TOKEN_LAT))
		return invalid(r);
	p[0] = auth_key_hash(r->arena, token);
	if ((res = db_query(r, &stmts[LA_TOKEN], 1, p)) == NULL)
		return api_db_error(r);
	if (PQntuples(res) != 1 || strcmp(PQgetvalue(res, 0, TK_REVOKED), "t") == 0)
		return invalid(r);
	if (strcmp(PQgetvalue(res, 0, TK_EXPIRED), "t") == 0)
		return api_error(r, 401, ERR_ACCESS_TOKEN_EXPIRED,
		    "mint a new one with POST /v1/links/{id}/access-token",
		    "the link access token has expired");
	r->client_id = arena_strdup(r->arena, PQgetvalue(res, 0, TK_CLIENT_ID));
	r->env = arena_strdup(r->arena, PQgetvalue(res, 0, TK_ENVIRONMENT));
	r->link_id = arena_strdup(r->arena, PQgetvalue(res, 0, TK_LINK_ID));
	/* As keys: a sandbox link's token on the sandbox host only. */
	return auth_host_or_reply(r, "link access token");
}

int
links_auth_link_or_reply(struct req *r, const char *id, const char **link_id)
{
	const char *p[1] = { links_id_canonical(r, id) };
	PGresult *res;

	if (p[0] == NULL)
		return api_error(r, 404, ERR_LINK_NOT_FOUND, NULL, "no link %s", id);
	if ((res = db_query(r, &stmts[LA_OWNER], 1, p)) == NULL)
		return api_db_error(r);
	/* Another client's link answers as an unknown one (DOMAIN.md: the
	 * spec names 403 only on GET /v1/links/{id}), as does the client's
	 * own link in another environment. */
	if (PQntuples(res) != 1 || strcmp(PQgetvalue(res, 0, OW_CLIENT_ID), r->client_id) != 0 ||
	    strcmp(PQgetvalue(res, 0, OW_ENVIRONMENT), r->env) != 0)
		return api_error(r, 404, ERR_LINK_NOT_FOUND, NULL, "no link %s", id);
	*link_id = p[0];
	return 0;
}
