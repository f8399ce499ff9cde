/*
 * The connect page's side of the API. The page itself is a
 * static file on the link host; the app decides only two things for it:
 * which origins may frame it (nginx asks before serving /connect and puts
 * the answer in the page's CSP frame-ancestors), and, when a session
 * opens, which client it belongs to, whom the page may post to and where
 * a hosted flow returns.
 */
#include <string.h>

#include "core/arena.h"
#include "core/crypto.h"
#include "core/db.h"
#include "core/json.h"
#include "core/req.h"
#include "core/validate.h"
#include "links/links_page.h"

#define LP_NONE		"'none'"
#define LP_HEADER	"X-Bds-Frame-Ancestors"

enum { LP_ORIGINS, LP_EXTRAS, LP__MAX };
static struct db_stmt stmts[LP__MAX] = {
	[LP_ORIGINS] = { "lp_origins",
	    "SELECT allowed_origins::text FROM clients WHERE id = $1" },
	[LP_EXTRAS] = { "lp_extras",
	    "SELECT c.id, c.allowed_origins::text, t.hosted, t.redirect_uri"
	    " FROM link_tokens t JOIN clients c ON c.id = t.client_id"
	    " WHERE t.client_id = $1 AND t.id = $2" },
};
enum { EX_CLIENT, EX_ORIGINS, EX_HOSTED, EX_REDIRECT };
const struct db_stmt_set links_page_stmt_set = { "links_page", stmts, LP__MAX };

/* The id arrives from a URL anyone can write: anything is accepted here
 * and answered 'none' unless it names a client (a 400 would make nginx's
 * auth_request a 500 instead of an unframeable page). */
const struct vfield links_page_frame_query[] = {
	{ "client_id", NULL, VT_STRING, 0, 0, 256 },
	{ NULL }
};

/*
 * An origin fit for a CSP source list: http(s)://host[:port] of the
 * characters a stored origin has (lower-case host name, IPv4, [IPv6],
 * port). The clients API stores nothing else; this keeps a header from
 * ever carrying a separator (space, ';', ',') or a quote.
 */
static int
origin_safe(const char *o)
{
	static const char ok[] = "abcdefghijklmnopqrstuvwxyz0123456789.-:[]";
	const char *h;

	if (strncmp(o, "https://", 8) == 0)
		h = o + 8;
	else if (strncmp(o, "http://", 7) == 0)
		h = o + 7;
	else
		return 0;
	return *h != '\0' && strspn(h, ok) == strlen(h);
}

struct json_object *
links_page_origins(struct req *r, const char *text)
{
	struct json_object *in = json_own(r->arena, json_tokener_parse(text));
	struct json_object *out = json_arr(r->arena), *v;
	size_t n = in != NULL && json_object_is_type(in, json_type_array) ?
	    json_object_array_length(in) : 0;

	for (size_t i = 0; i < n && i < LINKS_PAGE_ORIGINS_MAX; i++) {
		v = json_object_array_get_idx(in, i);
		if (json_object_is_type(v, json_type_string) &&
		    origin_safe(json_object_get_string(v)))
			json_object_array_add(out, json_object_get(v));
	}
	return out;
}

int
links_page_frame_ancestors(struct req *r, struct json_object *out)
{
	const char *id = json_get_str(r->query, "client_id"), *policy = LP_NONE;
	struct json_object *origins;
	PGresult *res;
	size_t n;

	if (id != NULL && crypto_id_valid(id, "cli", 0) &&
	    (res = db_query(r, &stmts[LP_ORIGINS], 1, &id)) != NULL &&
	    PQntuples(res) == 1 && !PQgetisnull(res, 0, 0)) {
		origins = links_page_origins(r, PQgetvalue(res, 0, 0));
		n = json_object_array_length(origins);
		for (size_t i = 0; i < n; i++)
			policy = i == 0 ? json_object_get_string(json_object_array_get_idx(origins, i)) :
			    arena_printf(r->arena, "%s %s", policy,
			    json_object_get_string(json_object_array_get_idx(origins, i)));
	}
	req_header_add(r, LP_HEADER, policy);
	json_set_str(out, "frame_ancestors", policy);
	return 200;
}

int
links_page_session_extras(struct req *r, const char *client_id, const char *lt,
    struct json_object *out)
{
	const char *p[2] = { client_id, lt };
	struct json_object *client;
	PGresult *res;
	int hosted;

	if ((res = db_query(r, &stmts[LP_EXTRAS], 2, p)) == NULL || PQntuples(res) != 1)
		return -1;
	if (!json_object_object_get_ex(out, "client", &client)) {
		client = json_obj(r->arena);
		json_set(out, "client", json_object_get(client));
	}
	json_set_str(client, "id", PQgetvalue(res, 0, EX_CLIENT));
	json_set(client, "allowed_embed_origins",
	    json_object_get(links_page_origins(r, PQgetvalue(res, 0, EX_ORIGINS))));
	hosted = strcmp(PQgetvalue(res, 0, EX_HOSTED), "t") == 0;
	json_set_bool(out, "hosted", hosted);
	if (hosted) {
		json_set_str(out, "link_token", lt);
		if (!PQgetisnull(res, 0, EX_REDIRECT))
			json_set_str(out, "redirect_uri", PQgetvalue(res, 0, EX_REDIRECT));
	}
	return 0;
}
