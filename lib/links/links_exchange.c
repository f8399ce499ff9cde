/*
 * POST /v1/link-tokens/{linkTokenId}/exchange: an embedded flow's public
 * token (bds_pub_…, single use, 30 min) for the link and a link access
 * token. The public token comes in the body, or as the path segment
 * itself. A used, expired, unknown or foreign one is 400
 * INVALID_PUBLIC_TOKEN: the answer never tells which. So is the token of a
 * link to a biller the key's environment does not link (the catalog
 * changed after the login), with errors[].code biller_not_in_environment:
 * it stays unused.
 */
#include <string.h>

#include "billers/billers.h"
#include "core/arena.h"
#include "core/auth.h"
#include "core/db.h"
#include "core/errors.h"
#include "core/json.h"
#include "core/req.h"
#include "core/validate.h"
#include "links/links.h"
#include "links/links_connect.h"

#define LX_PUBLIC_PREFIX "bds_pub_"

enum { LX_USE, LX_FORGET, LX__MAX };
static struct db_stmt stmts[LX__MAX] = {
	/* single use: the first exchange takes it */
	[LX_USE] = { "lx_use",
	    "UPDATE public_tokens SET used_at = now() WHERE token_sha256 = decode($1, 'hex')"
	    " AND client_id = $2 AND environment = $3 AND used_at IS NULL"
	    " AND expires_at > now() AND ($4::text IS NULL OR link_token_id = $4)"
	    " RETURNING link_id, link_token_id" },
	/* the session shows it no more */
	[LX_FORGET] = { "lx_forget",
	    "UPDATE link_sessions SET public_token = NULL, updated_at = now()"
	    " WHERE client_id = $1 AND link_token_id = $2 AND public_token IS NOT NULL" },
};
const struct db_stmt_set links_exchange_stmt_set = { "links_exchange", stmts, LX__MAX };

const struct vfield links_exchange_fields[] = {
	{ "public_token", NULL, VT_STRING, 0, 1, 128 },
	{ NULL }
};

static int
invalid(struct req *r)
{
	return api_field_error(r, 400, ERR_INVALID_PUBLIC_TOKEN, "public_token", "invalid",
	    "the public token is invalid, expired or already exchanged");
}

/* 1 when the key's environment does not link the link's biller
 * (billers_linkable), 0 when it does, -1 on a database failure. */
static int
other_env(struct req *r, const char *link_id)
{
	struct links_row row;
	int rc = links_get(r, r->client_id, link_id, &row);

	if (rc <= 0)
		return rc;
	switch (billers_linkable(r, r->env, row.biller_id)) {
	case BILLERS_LINK_FAILED:
		return -1;
	case BILLERS_LINK_OTHER_ENV:
		return 1;
	default:
		return 0;	/* an UNSUPPORTED biller since: the link is made */
	}
}

int
links_exchange(struct req *r, struct json_object *out)
{
	const char *seg = req_cap(r, "linkTokenId"), *pub = json_get_str(r->body, "public_token");
	const char *lt = NULL, *p[4], *link_id, *access;
	struct json_object *link;
	PGresult *res;
	int rc;

	if (pub == NULL && seg != NULL && strncmp(seg, LX_PUBLIC_PREFIX, 8) == 0)
		pub = seg;
	else if (seg != NULL && strncmp(seg, LX_PUBLIC_PREFIX, 8) != 0)
		lt = seg;	/* the link token id: the public token must be its */
	if (pub == NULL)
		return api_field_error(r, 400, ERR_VALIDATION_ERROR, "public_token", "required",
		    "send the public token in the body or the path");
	if (!auth_token_wellformed(pub, LX_PUBLIC_PREFIX))
		return invalid(r);
	p[0] = auth_key_hash(r->arena, pub);
	p[1] = r->client_id;
	p[2] = r->env;
	p[3] = lt;
	if ((res = db_query(r, &stmts[LX_USE], 4, p)) == NULL)
		return api_db_error(r);
	if (PQntuples(res) != 1)
		return invalid(r);
	link_id = arena_strdup(r->arena, PQgetvalue(res, 0, 0));
	if ((rc = other_env(r, link_id)) < 0)
		return api_db_error(r);
	if (rc == 1)	/* rolled back: the token stays unused */
		return api_field_error(r, 400, ERR_INVALID_PUBLIC_TOKEN, "public_token",
		    "biller_not_in_environment", "the public token links a biller this"
		    " environment does not link");
	p[0] = r->client_id;
	p[1] = arena_strdup(r->arena, PQgetvalue(res, 0, 1));
	if (db_exec_count(r->db, r->arena, &stmts[LX_FORGET], 2, p) < 0)
		return api_db_error(r);
	if ((access = links_access_token_new(r, r->client_id, r->env, link_id, 0)) == NULL ||
	    (link = links_json_by_id(r, r->client_id, link_id)) == NULL)
		return api_db_error(r);
	json_set_str(out, "link_id", link_id);
	json_set_str(out, "access_token", access);
	json_set(out, "link", json_object_get(link));
	json_set_str(out, "request_id", r->http.request_id);
	return 200;
}
