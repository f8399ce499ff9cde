#ifndef BDS_LINKS_PAGE_H
#define BDS_LINKS_PAGE_H
/*
 * What the connect page (web/connect.html, served by nginx on the link
 * host) needs beyond the connect session API: the frame policy
 * nginx puts in the page's Content-Security-Policy, and the session
 * facts the page checks before it talks to its embedder or redirects.
 */
#include "core/validate.h"

struct req;
struct json_object;
struct db_stmt_set;

/* The longest list the policy carries: the clients' allowedOrigins cap. */
#define LINKS_PAGE_ORIGINS_MAX	20

extern const struct vfield links_page_frame_query[];

/*
 * GET /v1/link-sessions/frame-ancestors?client_id=cli_… (no auth): 200
 * {frame_ancestors} and the same value in the header X-Bds-Frame-Ancestors,
 * the CSP source list of the origins that may frame the page: the client's
 * allowedOrigins separated by spaces, or 'none' when the id is missing,
 * malformed or unknown, the client has none, or the database fails (fails
 * closed). nginx asks it with auth_request for every /connect.
 */
int	 links_page_frame_ancestors(struct req *, struct json_object *out);

/*
 * Adds to a POST /v1/link-sessions answer what the page checks: client.id
 * and client.allowed_embed_origins (the only targets of its postMessage),
 * and `hosted`; a hosted flow also gets `link_token` (the token's id, sent
 * back on the redirect) and `redirect_uri` (when registered). 0, or -1 on
 * a database failure.
 */
int	 links_page_session_extras(struct req *, const char *client_id,
	    const char *link_token_id, struct json_object *out);

/*
 * A client's allowedOrigins (the JSON array text clients.allowed_origins
 * holds) as an arena array of those fit for a CSP source list and a
 * postMessage target (http(s)://host[:port], at most
 * LINKS_PAGE_ORIGINS_MAX): what every hosted page may talk to.
 */
struct json_object *links_page_origins(struct req *, const char *text);

extern const struct db_stmt_set links_page_stmt_set;

#endif
