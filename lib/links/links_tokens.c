/*
 * Link tokens (POST /v1/link-tokens) and connect tickets (POST
 * /v1/biller-connect/ticket). A link token (lt_…) is shown only to the
 * client's backend and is the bearer of the ticket call; a ticket
 * (bds_tkt_…, single use, 60 s) is what a page carries, in the URL
 * fragment, to open a link session.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "billers/billers.h"
#include "core/arena.h"
#include "core/auth.h"
#include "core/config.h"
#include "core/crypto.h"
#include "core/db.h"
#include "core/errors.h"
#include "core/json.h"
#include "core/req.h"
#include "core/validate.h"
#include "links/links.h"
#include "links/links_attempts.h"
#include "links/links_connect.h"

#define LT_TICKET_PREFIX "bds_tkt_"

enum {
	LT_REDIRECT_OK, LT_LINK, LT_INSERT, LT_TICKET_INSERT, LT_BEARER,
	LT_END_RTL,	/* requests to link (lib/rtl) */
	LT_RTL,
	LT__MAX
};
static struct db_stmt stmts[LT__MAX] = {
	/* redirect_uri must be one of the client's registered redirectUris */
	[LT_REDIRECT_OK] = { "lt_redirect_ok",
	    "SELECT redirect_uris ? $2 FROM clients WHERE id = $1" },
	/* request_to_link_id: the key's own request to link */
	[LT_RTL] = { "lt_rtl",
	    "SELECT client_user_id, status FROM request_to_links"
	    " WHERE client_id = $1 AND environment = $2 AND id = $3" },
	/* by id across clients: another client's link is 403, not 404 */
	[LT_LINK] = { "lt_link",
	    "SELECT client_id, environment, client_user_id, status, biller_id FROM links"
	    " WHERE id = $1" },
	[LT_INSERT] = { "lt_insert",
	    "INSERT INTO link_tokens (client_id, id, environment, mode, client_user_id,"
	    " biller_id, connectivity_type, consents, redirect_uri, request_to_link_id,"
	    " metadata_json, update_link_id, update_reason, hosted, language, expires_at)"
	    " VALUES ($1, $2, $3, $4, $5, $6, $7, $8::text[], $9, $10, $11, $12, $13, $14,"
	    " $15, now() + make_interval(secs => $16::int))"
	    " RETURNING " DB_ISO("expires_at") },
	/* a ticket never outlives its link token */
	[LT_TICKET_INSERT] = { "lt_ticket_insert",
	    "INSERT INTO connect_tickets (token_sha256, client_id, link_token_id, expires_at)"
	    " SELECT decode($1, 'hex'), t.client_id, t.id,"
	    " LEAST(now() + make_interval(secs => $4::int), t.expires_at)"
	    " FROM link_tokens t WHERE t.client_id = $2 AND t.id = $3"
	    " RETURNING " DB_ISO("expires_at") },
	[LT_BEARER] = { "lt_bearer",
	    "SELECT client_id, environment, expires_at > now() AND finished_at IS NULL,"
	    " failed_attempts FROM link_tokens WHERE id = $1" },
	/* a request to link closed or proceeded again */
	[LT_END_RTL] = { "lt_end_rtl",
	    "UPDATE link_tokens SET expires_at = now() WHERE client_id = $1"
	    " AND request_to_link_id = $2 AND expires_at > now()"
	    " AND ($3::text IS NULL OR id <> $3)" },
};
const struct db_stmt_set links_tokens_stmt_set = { "links_tokens", stmts, LT__MAX };
enum { LINK_COL_CLIENT, LINK_COL_ENV, LINK_COL_USER, LINK_COL_STATUS, LINK_COL_BILLER };
enum { BEARER_COL_CLIENT, BEARER_COL_ENV, BEARER_COL_LIVE, BEARER_COL_FAILED };

static const char *const scopes[] = { "bills", "statements", "payment_history", "usage",
	"account_details", "payments", NULL };
static const char *const connectivity[] = { "credentials", "oauth", "document", NULL };
static const char *const update_reasons[] = { "credentials_invalid", "mfa_required",
	"session_expired", "consent_expired", NULL };

/* The connect page's languages: its catalogs, web/i18n/<language>.json. */
static const char *const page_languages[] = { "en", "es", NULL };
#define PAGE_LANGUAGES "en, es"

/*
 * A BCP-47 tag (a 2-8 letter primary subtag, then 1-8 alphanumeric
 * subtags) whose primary subtag, any case, is one of the page's languages:
 * es-MX is accepted (the page shows es) and kept as given; fr is refused
 * rather than shown in English.
 */
static int
check_language(struct arena *a, struct json_object **v, const char **code, const char **msg)
{
	static const char alpha[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
	static const char alnum[] = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
	const char *s = json_object_get_string(*v);
	size_t i = strspn(s, alpha), n, primary = i;

	(void)a;
	*code = "invalid_language";
	*msg = "must be a BCP-47 language tag such as en or es-MX; supported: " PAGE_LANGUAGES;
	if (i < 2 || i > 8)
		return -1;
	while (s[i] == '-') {
		n = strspn(s + i + 1, alnum);
		if (n < 1 || n > 8)
			return -1;
		i += 1 + n;
	}
	if (s[i] != '\0')
		return -1;
	for (const char *const *l = page_languages; *l != NULL; l++)
		if (strlen(*l) == primary && strncasecmp(s, *l, primary) == 0)
			return 0;
	*code = "unsupported_language";
	*msg = "is not a language of the connect page; supported: " PAGE_LANGUAGES
	    " (a regional tag such as es-MX names its base language)";
	return -1;
}

/* A string holding one JSON value, at most 4 KiB. */
static int
check_metadata(struct arena *a, struct json_object **v, const char **code, const char **msg)
{
	const char *s = json_object_get_string(*v), *why;
	size_t n = strlen(s);

	if (n > LINKS_METADATA_MAX) {
		*code = "too_long";
		*msg = "must be at most 4096 bytes";
		return -1;
	}
	if (json_parse(a, s, n, &why) == NULL && why != NULL) {
		*code = "invalid_json";
		*msg = "must be a string holding JSON";
		return -1;
	}
	return 0;
}

static int
check_rtl(struct arena *a, struct json_object **v, const char **code, const char **msg)
{
	(void)a;
	if (crypto_id_valid(json_object_get_string(*v), "rtl", 0))
		return 0;
	*code = "invalid_format";
	*msg = "must be a request-to-link id (rtl_…)";
	return -1;
}

/* hosted: true, false, or {redirect_uri, expires_in}; expires_in at most
 * the link token's own lifetime (DOMAIN.md: 4 h), never beyond it. */
static int
check_hosted(struct arena *a, struct json_object **v, const char **code, const char **msg)
{
	*code = "invalid_type";
	*msg = "must be true or an object {redirect_uri, expires_in}";
	if (json_object_is_type(*v, json_type_boolean))
		return 0;
	if (!json_object_is_type(*v, json_type_object))
		return -1;
	json_object_object_foreach(*v, key, val) {
		if (strcmp(key, "redirect_uri") == 0) {
			if (!json_object_is_type(val, json_type_string) ||
			    !validate_format(VF_URL, json_object_get_string(val))) {
				*code = "invalid_format";
				*msg = "redirect_uri must be an absolute http(s) URL";
				return -1;
			}
		} else if (strcmp(key, "expires_in") == 0) {
			int64_t n = json_object_get_int64(val);

			if (!json_object_is_type(val, json_type_int) || n < 60 ||
			    n > LINKS_TOKEN_TTL) {
				*code = "out_of_range";
				*msg = arena_printf(a, "expires_in must be whole seconds from 60 to %d",
				    LINKS_TOKEN_TTL);
				return -1;
			}
		} else {
			*code = "unknown_field";
			*msg = arena_printf(a, "hosted has no member %s", key);
			return -1;
		}
	}
	return 0;
}

static const struct vfield update_fields[] = {
	{ "link_id", NULL, VT_STRING, V_REQUIRED, 1, 64 },
	{ "reason", NULL, VT_STRING, 0, 0, 0, update_reasons },
	{ NULL }
};

const struct vfield links_token_create_fields[] = {
	{ "client_user_id", NULL, VT_STRING, V_REQUIRED, 1, 255 },
	{ "consents", NULL, VT_ARRAY, V_UNIQUE, 0, 16, scopes, .items = VT_STRING },
	{ "biller_id", NULL, VT_STRING, 0, 1, 64 },
	{ "connectivity_type", NULL, VT_STRING, 0, 0, 0, connectivity },
	{ "redirect_uri", NULL, VT_STRING, 0, 1, 2048, .format = VF_URL },
	{ "request_to_link_id", NULL, VT_STRING, 0, 1, 64, .check = check_rtl },
	{ "metadata_json", NULL, VT_STRING, 0, 0, 0, .check = check_metadata },
	{ "update", NULL, VT_OBJECT, 0, .fields = update_fields },
	{ "hosted", NULL, VT_ANY, 0, .check = check_hosted },
	{ "language", NULL, VT_STRING, 0, 2, 35, .check = check_language },
	{ "webhook_url", NULL, VT_STRING, 0, 0, 2048 },	/* deprecated, ignored */
	{ NULL }
};

const struct vfield links_ticket_fields[] = { { NULL } };

/* consents as a Postgres text[] literal (each a known scope: no quoting needed). */
static const char *
pg_array(struct arena *a, struct json_object *arr)
{
	const char *s = "{";
	size_t n = arr != NULL ? json_object_array_length(arr) : 0;

	for (size_t i = 0; i < n; i++)
		s = arena_printf(a, "%s%s%s", s, i ? "," : "",
		    json_object_get_string(json_object_array_get_idx(arr, i)));
	return arena_printf(a, "%s}", s);
}

/* Make a ticket for the link token (ttl_s, capped by the token's life):
 * the plaintext, or NULL on failure; *expires_at the ISO time. */
static const char *
ticket_new(struct req *r, const char *client_id, const char *lt, int ttl_s,
    const char **expires_at)
{
	const char *ticket = auth_token_new(r->arena, LT_TICKET_PREFIX);
	const char *p[4] = { auth_key_hash(r->arena, ticket), client_id, lt,
		arena_printf(r->arena, "%d", ttl_s) };
	PGresult *res;

	if ((res = db_query(r, &stmts[LT_TICKET_INSERT], 4, p)) == NULL ||
	    PQntuples(res) != 1)
		return NULL;
	*expires_at = arena_strdup(r->arena, PQgetvalue(res, 0, 0));
	return ticket;
}

static const char *
connect_url(struct req *r, const char *ticket)
{
	return arena_printf(r->arena, "%s/connect#ticket=%s", links_settings(r->cfg)->link_url, ticket);
}

/* update.link_id: 0 when r's client and end user may repair it, else the
 * status written. *id becomes the canonical link id, *biller the link's
 * biller (an update token is pinned to it). */
static int
update_link_or_reply(struct req *r, const char **id, const char *user, const char **biller)
{
	const char *canon = links_id_canonical(r, *id);
	PGresult *res;

	if (canon == NULL)
		return api_field_error(r, 404, ERR_LINK_NOT_FOUND, "update.link_id", "not_found",
		    "no such link");
	if ((res = db_query(r, &stmts[LT_LINK], 1, &canon)) == NULL)
		return api_db_error(r);
	/* another environment of the same client: unknown, like any foreign id
	 * would be were it not for the spec's 403 */
	if (PQntuples(res) != 1 || (strcmp(PQgetvalue(res, 0, LINK_COL_CLIENT), r->client_id) == 0 &&
	    strcmp(PQgetvalue(res, 0, LINK_COL_ENV), r->env) != 0))
		return api_field_error(r, 404, ERR_LINK_NOT_FOUND, "update.link_id", "not_found",
		    "no such link");
	if (strcmp(PQgetvalue(res, 0, LINK_COL_CLIENT), r->client_id) != 0)
		return api_field_error(r, 403, ERR_CLIENT_ID_MISMATCH, "update.link_id", "forbidden",
		    "the link belongs to another client");
	if (strcmp(PQgetvalue(res, 0, LINK_COL_USER), user) != 0)
		return api_field_error(r, 403, ERR_LINK_FORBIDDEN, "update.link_id", "forbidden",
		    "the link belongs to another end user");
	if (strcmp(PQgetvalue(res, 0, LINK_COL_STATUS), "REVOKED") == 0)
		return api_field_error(r, 400, ERR_VALIDATION_ERROR, "update.link_id",
		    "link_revoked", "a revoked link cannot be updated; create a new link");
	if (*biller != NULL && strcmp(*biller, PQgetvalue(res, 0, LINK_COL_BILLER)) != 0)
		return api_field_error(r, 400, ERR_VALIDATION_ERROR, "biller_id", "not_the_link_biller",
		    "an update token is for the link's own biller");
	*biller = arena_strdup(r->arena, PQgetvalue(res, 0, LINK_COL_BILLER));
	*id = canon;
	return 0;
}

/*
 * request_to_link_id: 0 when it names an open request to link of the key's
 * client and environment for this end user (its hosted flow then completes
 * it), else the 400 written. Another client's is unknown, as any foreign id.
 */
static int
rtl_or_reply(struct req *r, const char *rtl, const char *user)
{
	const char *p[3] = { r->client_id, r->env, rtl };
	const char *status;
	PGresult *res;

	if (rtl == NULL)
		return 0;
	if ((res = db_query(r, &stmts[LT_RTL], 3, p)) == NULL)
		return api_db_error(r);
	if (PQntuples(res) != 1)
		return api_field_error(r, 400, ERR_VALIDATION_ERROR, "request_to_link_id",
		    "unknown_request_to_link", "no such request to link");
	if (strcmp(PQgetvalue(res, 0, 0), user) != 0)
		return api_field_error(r, 400, ERR_VALIDATION_ERROR, "request_to_link_id",
		    "other_user", "the request to link is for another client_user_id");
	status = PQgetvalue(res, 0, 1);
	if (strcmp(status, "PENDING") != 0 && strcmp(status, "IN_PROGRESS") != 0)
		return api_field_error(r, 400, ERR_VALIDATION_ERROR, "request_to_link_id",
		    "request_to_link_closed", arena_printf(r->arena, "the request to link is %s",
		    status));
	return 0;
}

int
links_token_new_or_reply(struct req *r, const struct links_token_args *t,
    struct json_object *out)
{
	const char *user = t->client_user_id, *biller = t->biller_id;
	const char *redirect = t->redirect_uri;
	const char *update_id = t->update_link_id, *lt, *expiration, *p[16];
	const char *hosted_url = NULL, *ticket_exp;
	/* a caller's expires_in never outlives a token (the route's field
	 * check says so to a client; a module calling in is held here) */
	int ttl = t->expires_in > 0 && t->expires_in < LINKS_TOKEN_TTL ? t->expires_in :
	    LINKS_TOKEN_TTL, rc;
	PGresult *res;

	/* no session could ever connect to it: unknown, UNSUPPORTED, or a
	 * biller the key's environment does not link */
	if (biller != NULL && (rc = billers_linkable_or_reply(r, r->env, biller,
	    "biller_id")) != 0)
		return rc;
	if ((rc = rtl_or_reply(r, t->request_to_link_id, user)) != 0)
		return rc;
	if (redirect != NULL) {
		p[0] = r->client_id;
		p[1] = redirect;
		if ((res = db_query(r, &stmts[LT_REDIRECT_OK], 2, p)) == NULL)
			return api_db_error(r);
		if (PQntuples(res) != 1 || strcmp(PQgetvalue(res, 0, 0), "t") != 0)
			return api_field_error(r, 400, ERR_VALIDATION_ERROR,
			    t->redirect_field != NULL ? t->redirect_field : "redirect_uri",
			    "unregistered_redirect_uri",
			    "must equal one of the client's registered redirectUris");
	}
	if (t->update) {
		if ((rc = update_link_or_reply(r, &update_id, user, &biller)) != 0)
			return rc;
		/* the link's own biller, when the body named none: the key's
		 * environment must link it too (a link made before the gates) */
		if (t->biller_id == NULL && (rc = billers_linkable_or_reply(r,
		    r->env, biller, "update.link_id")) != 0)
			return rc;
		if (ttl > LINKS_TOKEN_UPDATE_TTL)
			ttl = LINKS_TOKEN_UPDATE_TTL;
	}

	lt = crypto_id_new(r->arena, "lt");
	p[0] = r->client_id;
	p[1] = lt;
	p[2] = r->env;
	p[3] = t->update ? "update" : "create";
	p[4] = user;
	p[5] = biller;
	p[6] = t->connectivity_type;
	p[7] = pg_array(r->arena, t->consents);
	p[8] = redirect;
	p[9] = t->request_to_link_id;
	p[10] = t->metadata_json;
	p[11] = update_id;
	p[12] = t->update ? t->update_reason : NULL;
	p[13] = t->hosted ? "true" : "false";
	p[14] = t->language != NULL ? t->language : "en";
	p[15] = arena_printf(r->arena, "%d", ttl);
	if ((res = db_query(r, &stmts[LT_INSERT], 16, p)) == NULL || PQntuples(res) != 1)
		return api_db_error(r);
	expiration = arena_strdup(r->arena, PQgetvalue(res, 0, 0));
	if (t->hosted) {
		const char *tk = ticket_new(r, r->client_id, lt, ttl, &ticket_exp);

		if (tk == NULL)
			return api_db_error(r);
		hosted_url = connect_url(r, tk);
	}

	json_set_str(out, "link_token", lt);
	json_set_str(out, "expiration", expiration);
	json_set_str(out, "mode", p[3]);
	json_set_str(out, "client_user_id", user);
	json_set_str(out, "biller_id", biller);
	json_set_str(out, "request_to_link_id", p[9]);
	json_set_str(out, "language", p[14]);
	json_set_str(out, "metadata_json", p[10]);
	if (update_id != NULL)
		json_set_str(out, "link_id", update_id);
	if (hosted_url != NULL)
		json_set_str(out, "hosted_url", hosted_url);
	json_set_str(out, "request_id", r->http.request_id);
	return 201;
}

int
links_token_create(struct req *r, struct json_object *out)
{
	struct json_object *b = r->body, *update = NULL, *hosted = NULL;
	struct links_token_args t = { 0 };

	t.client_user_id = json_get_str(b, "client_user_id");
	t.biller_id = json_get_str(b, "biller_id");
	t.redirect_uri = json_get_str(b, "redirect_uri");
	if (t.redirect_uri != NULL)
		t.redirect_field = "redirect_uri";
	json_object_object_get_ex(b, "update", &update);
	json_object_object_get_ex(b, "hosted", &hosted);
	if (hosted != NULL && json_object_is_type(hosted, json_type_object)) {
		struct json_object *v;

		t.hosted = 1;
		if (json_object_object_get_ex(hosted, "redirect_uri", &v) &&
		    t.redirect_uri == NULL) {
			t.redirect_uri = json_object_get_string(v);
			t.redirect_field = "hosted.redirect_uri";
		}
		if (json_object_object_get_ex(hosted, "expires_in", &v))
			t.expires_in = (int)json_object_get_int64(v);
	} else if (hosted != NULL)
		t.hosted = json_object_get_boolean(hosted);
	t.request_to_link_id = json_get_str(b, "request_to_link_id");
	json_object_object_get_ex(b, "consents", &t.consents);
	t.connectivity_type = json_get_str(b, "connectivity_type");
	t.metadata_json = json_get_str(b, "metadata_json");
	t.language = json_get_str(b, "language");
	if (update != NULL) {
		t.update = 1;
		t.update_link_id = json_get_str(update, "link_id");
		t.update_reason = json_get_str(update, "reason");
	}
	return links_token_new_or_reply(r, &t, out);
}

/*
 * The link token as the bearer of the ticket call: it is the credential the
 * client's backend hands its page, like the public half of a Plaid flow.
 * Sandbox tokens answer on the sandbox host only, live ones on the live
 * host, as keys do.
 */
int
links_ticket_create(struct req *r, struct json_object *out)
{
	const char *h = r->http.authorization, *lt, *ticket, *exp;
	int sandbox_host = r->http.host_env != NULL && strcmp(r->http.host_env, "sandbox") == 0;
	PGresult *res;
	int rc;

	if (h == NULL || strncmp(h, "Bearer ", 7) != 0 ||
	    !crypto_id_valid(lt = h + 7, "lt", 0))
		return api_error(r, 401, ERR_INVALID_LINK_TOKEN,
		    "send Authorization: Bearer <link_token>", "missing or invalid link token");
	if ((res = db_query(r, &stmts[LT_BEARER], 1, &lt)) == NULL)
		return api_db_error(r);
	if (PQntuples(res) != 1 || strcmp(PQgetvalue(res, 0, BEARER_COL_LIVE), "t") != 0 ||
	    sandbox_host != (strcmp(PQgetvalue(res, 0, BEARER_COL_ENV), "sandbox") == 0))
		return api_error(r, 401, ERR_INVALID_LINK_TOKEN, "create a new link token",
		    "the link token is unknown, expired or already used");
	r->client_id = arena_strdup(r->arena, PQgetvalue(res, 0, BEARER_COL_CLIENT));
	r->env = arena_strdup(r->arena, PQgetvalue(res, 0, BEARER_COL_ENV));
	/* a token that has had its failed logins mints no more tickets */
	if ((rc = links_attempts_or_reply(r, r->client_id,
	    atol(PQgetvalue(res, 0, BEARER_COL_FAILED)), NULL, NULL)) != 0)
		return rc;
	if ((ticket = ticket_new(r, r->client_id, lt, LINKS_TICKET_TTL, &exp)) == NULL)
		return api_db_error(r);
	json_set_str(out, "ticket", ticket);
	json_set_str(out, "expires_at", exp);
	json_set_str(out, "connect_url", connect_url(r, ticket));
	/* the URL to frame (web/connect.js): the client id tells
	 * nginx whose allowedOrigins may frame the page; the ticket stays in
	 * the fragment */
	json_set_str(out, "embed_url", arena_printf(r->arena, "%s/connect?client_id=%s#ticket=%s",
	    links_settings(r->cfg)->link_url, r->client_id, ticket));
	return 201;
}

/* requests to link (lib/rtl) */
long long
links_tokens_end_rtl(struct req *r, const char *client_id, const char *rtl_id, const char *keep)
{
	const char *p[3] = { client_id, rtl_id, keep };

	return db_exec_count(r->db, r->arena, &stmts[LT_END_RTL], 3, p);
}
