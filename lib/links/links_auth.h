#ifndef BDS_LINKS_AUTH_H
#define BDS_LINKS_AUTH_H
/*
 * Who may read a link's data (links_auth.c): the link access token
 * (bds_lat_…, AUTH_LINK routes) and the tenancy rule of GET /v1/links/{id}
 * for other modules' routes under a link (/v1/account-links/{link_id}/…).
 */

struct req;
struct db_stmt_set;

/*
 * AUTH_LINK (its row of lib/routes.c's routes_tokens): resolve a bds_lat_
 * bearer.
 * Looked up by SHA-256; the token's link must not be REVOKED and the token
 * not expired. Sets r->link_id, r->client_id, r->env (arena strings) and
 * returns 0, or writes 401 (INVALID_ACCESS_TOKEN, ACCESS_TOKEN_EXPIRED,
 * WRONG_ENVIRONMENT for a token of the other host) or 503 and returns it.
 */
int	 links_auth_token(struct req *, const char *token);

/*
 * The API key's link by id ("link_…" or a bare UUID) for the routes under
 * /v1/account-links/{link_id}: 0 with *link_id (canonical, arena); 404
 * LINK_NOT_FOUND when no such link, another client's (DOMAIN.md: the spec
 * names 403 only on GET /v1/links/{id}) or the client's own link in
 * another environment; 503. The status is already written when not 0.
 */
int	 links_auth_link_or_reply(struct req *, const char *id, const char **link_id);

extern const struct db_stmt_set links_auth_stmt_set;

#endif
