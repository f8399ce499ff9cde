/* Developer JWTs (AUTH_JWT): signature, claims, and a live session. */
#include <string.h>
#include <strings.h>
#include <time.h>

#include "arena.h"
#include "auth.h"
#include "config.h"
#include "db.h"
#include "errors.h"
#include "json.h"
#include "jwt.h"
#include "log.h"
#include "req.h"
#include "router.h"

enum { AUTH_SESSION_LIVE, AUTH__MAX };
static struct db_stmt stmts[AUTH__MAX] = {
	/* One indexed lookup per request: sign-out and password changes
	 * revoke at once. */
	[AUTH_SESSION_LIVE] = { "auth_session_live",
	    "SELECT 1 FROM sessions WHERE id = $1 AND user_id = $2"
	    " AND revoked_at IS NULL" },
};
const struct db_stmt_set auth_stmt_set = { "auth", stmts, AUTH__MAX };

int64_t
auth_now(void)
{
	return (int64_t)time(NULL);
}

const struct jwt_key *
auth_jwt_key(const struct config *cfg)
{
	static struct jwt_key key;
	static const unsigned char *seed_of;

	if (seed_of != cfg->jwt_seed) {
		if (jwt_key_from_seed(&key, cfg->jwt_seed) != 0)
			return NULL;
		seed_of = cfg->jwt_seed;
	}
	return &key;
}

/* The bearer token, or the auth cookie when no Authorization header. */
static const char *
bearer(struct req *r)
{
	const char *h = r->http.authorization, *c, *p;
	size_t nlen;

	if (h != NULL) {
		if (strncasecmp(h, "Bearer ", 7) != 0)
			return NULL;
		for (h += 7; *h == ' '; h++)
			;
		return *h ? h : NULL;
	}
	if ((c = r->http.cookie) == NULL)
		return NULL;
	nlen = strlen(r->cfg->cookie_name);
	for (p = c; (p = strstr(p, r->cfg->cookie_name)) != NULL; p += nlen) {
		if ((p == c || p[-1] == ' ' || p[-1] == ';') && p[nlen] == '=') {
			const char *v = p + nlen + 1;

			return arena_strndup(r->arena, v, strcspn(v, "; "));
		}
	}
	return NULL;
}

static int
auth_jwt(struct req *r)
{
	const struct jwt_key *key = auth_jwt_key(r->cfg);
	struct json_object *claims;
	const char *tok = bearer(r), *why = NULL, *use, *sub, *sid;
	const char *params[2];
	PGresult *res;

	if (tok == NULL)
		return api_error(r, 401, "UNAUTHORIZED", "send Authorization: Bearer <accessToken>",
		    "missing access token");
	if (key == NULL || jwt_verify(r->arena, key, tok, r->cfg->jwt_issuer,
	    AUTH_AUDIENCE, auth_now(), &claims, &why) != 0) {
		log_msg("info", "request %s: token refused: %s", r->http.request_id,
		    why ? why : "no key");
		return api_error(r, 401, "UNAUTHORIZED", "sign in again",
		    "invalid or expired access token");
	}
	use = json_get_str(claims, "token_use");
	sub = json_get_str(claims, "sub");
	sid = json_get_str(claims, "sid");
	if (use == NULL || strcmp(use, "access") != 0 || sub == NULL || sid == NULL)
		return api_error(r, 401, "UNAUTHORIZED", "use the access token",
		    "invalid or expired access token");
	params[0] = sid;
	params[1] = sub;
	if ((res = db_query(r, &stmts[AUTH_SESSION_LIVE], 2, params)) == NULL)
		return api_db_error(r);
	if (PQntuples(res) != 1)
		return api_error(r, 401, "UNAUTHORIZED", "sign in again",
		    "the session has ended");
	r->user_id = sub;
	r->session_id = sid;
	return 0;
}

int
auth_resolve(struct req *r)
{
	unsigned kinds = r->match.route->auth;

	if (kinds & AUTH_JWT)
		return auth_jwt(r);
	/* Client keys, link and pay tokens arrive with their modules. */
	return api_error(r, 401, "UNAUTHORIZED", NULL, "missing or invalid credentials");
}
