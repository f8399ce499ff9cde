/*
 * The request pipeline after parsing: body syntax, route, host, auth,
 * declared input, handler. Everything the route table says is enforced
 * here, so handlers never re-check it.
 */
#include <string.h>
#include <strings.h>

#include <sodium.h>


#include "core/arena.h"
#include "core/auth.h"
#include "core/db.h"
#include "core/errors.h"
#include "core/idem.h"
#include "core/json.h"
#include "core/meter.h"
#include "core/req.h"
#include "core/router.h"
#include "core/server.h"
#include "core/standby.h"
#include "core/validate.h"

/* 1 when a Content-Type names JSON: application/json, any parameters. */
static int
is_json_type(const char *ct)
{
	size_t n = sizeof("application/json") - 1;

	if (ct == NULL)
		return 0;
	while (*ct == ' ' || *ct == '\t')
		ct++;
	return strncasecmp(ct, "application/json", n) == 0 &&
	    (ct[n] == '\0' || ct[n] == ';' || ct[n] == ' ' || ct[n] == '\t');
}

/*
 * Body syntax: checked for every request that carries one, before routing.
 * A body is JSON and says so: a form or text/plain type is refused, so a
 * cross-site form can never post to the API.
 */
static int
parse_body(struct req *r, struct json_object **doc)
{
	const char *why;

	*doc = NULL;
	if (r->http.body == NULL || r->http.body_len == 0)
		return 0;
	if (!is_json_type(r->http.content_type))
		return api_error(r, 415, ERR_UNSUPPORTED_MEDIA_TYPE,
		    "send the header Content-Type: application/json",
		    "the request body must be JSON with Content-Type application/json");
	if (!validate_utf8(r->http.body, r->http.body_len))
		return api_error(r, 400, ERR_INVALID_UTF8, "send the body as UTF-8 JSON",
		    "the request body is not valid UTF-8");
	if ((*doc = json_parse(r->arena, r->http.body, r->http.body_len, &why)) == NULL &&
	    why == NULL)	/* the JSON value null: well-formed, but no object */
		return api_field_error(r, 400, ERR_VALIDATION_ERROR, "", "invalid_type",
		    "body must be a JSON object");
	if (*doc == NULL)
		return api_error(r, 400, strcmp(why, "invalid UTF-8") == 0 ?
		    ERR_INVALID_UTF8 : ERR_INVALID_JSON, "send a JSON object",
		    "the request body is not valid JSON: %s", why);
	return 0;
}

/* A route without a body spec takes no body, or an empty object. */
static const struct vfield no_fields[] = { { NULL } };

static int
host_allows(const struct req *r, const struct route *rt)
{
	int sandbox = r->http.host_env != NULL && strcmp(r->http.host_env, "sandbox") == 0;

	if ((rt->flags & ROUTE_SANDBOX) && !sandbox)
		return 0;
	if ((rt->flags & ROUTE_LIVE) && sandbox)
		return 0;
	return 1;
}

/*
 * A ROUTE_TX route: begin, claim the Idempotency-Key when the route takes
 * one (a replay answers the stored response and runs nothing), run the
 * handler, and commit below 400 (recording the answer under the key: the
 * body, or nothing for ROUTE_ONCE) or roll back otherwise.
 */
static int
run_tx(struct req *r, const struct route *rt, struct json_object *out)
{
	const char *key = rt->flags & (ROUTE_IDEM | ROUTE_ONCE) ? r->http.idempotency_key : NULL;
	const char *owner = req_owner(r);
	struct json_object *stored;
	enum idem_state st;
	int rc, status;

	if (db_begin(r->db) != 0)
		return api_db_error(r);
	if (key != NULL) {
		if ((rc = idem_begin(r, owner, key, &st, &status, &stored)) != 0) {
			db_rollback(r->db);
			return rc;
		}
		if (st == IDEM_REPLAY) {
			db_rollback(r->db);
			r->out = stored;
			return status;
		}
	}
	rc = rt->handler(r, out);
	if (rc >= 400 || !db_in_tx(r->db)) {
		db_rollback(r->db);
		return rc;
	}
	if (key != NULL && idem_finish(r, owner, key, rc,
	    rt->flags & ROUTE_ONCE ? NULL : r->out) != 0) {
		db_rollback(r->db);
		return api_db_error(r);
	}
	if (db_commit(r->db) != 0)
		return api_db_error(r);
	return rc;
}

/*
 * CORS (ROUTE_CORS routes only): a browser page of an allowed origin may
 * read the answer. Preflight: OPTIONS on such a path is 204 with the
 * methods and headers the route takes; the origin is echoed only when
 * routes_cors_allow() accepts it (no credential yet, so any client's
 * allowedOrigins or the link host). Other answers echo it when the
 * caller's client (known once the handler resolved the session) allows it.
 */
static void
cors_echo(struct req *r)
{
	if (r->http.origin == NULL || !routes_cors_allow(r, r->http.origin))
		return;
	req_header_add(r, "Access-Control-Allow-Origin", r->http.origin);
	req_header_add(r, "Vary", "Origin");
}

/* 204 for a preflight of a ROUTE_CORS path; 0 when the path has none. */
static int
cors_preflight(struct req *r)
{
	static const enum http_method tried[] = { M_GET, M_POST, M_PUT, M_PATCH, M_DELETE };
	struct route_match m;
	char allow[64] = "";

	for (size_t i = 0; i < sizeof(tried) / sizeof(tried[0]); i++) {
		if (router_match(routes, routes_count, tried[i], r->http.path, r->arena,
		    &m) != 0 || !(m.route->flags & ROUTE_CORS))
			continue;
		if (allow[0] != '\0')
			strcat(allow, ", ");
		strcat(allow, http_method_name(tried[i]));
	}
	if (allow[0] == '\0')
		return 0;	/* no CORS route here: routed as any other method */
	cors_echo(r);
	req_header_add(r, "Access-Control-Allow-Methods", allow);
	req_header_add(r, "Access-Control-Allow-Headers", "Authorization, Content-Type");
	req_header_add(r, "Access-Control-Max-Age", "600");
	r->out = NULL;
	return 204;
}

/*
 * ROUTE_IDEM_BODY: the body's idempotency_key (validated as the route
 * declares it) is the key when the header is absent. 0, or the 400
 * written when both are sent and differ.
 */
static int
idem_body(struct req *r, const struct route *rt)
{
	const char *k;

	if (!(rt->flags & ROUTE_IDEM_BODY) || r->body == NULL ||
	    (k = json_get_str(r->body, "idempotency_key")) == NULL)
		return 0;
	if (r->http.idempotency_key == NULL) {
		r->http.idempotency_key = k;
		return 0;
	}
	if (strcmp(r->http.idempotency_key, k) == 0)
		return 0;
	return api_field_error(r, 400, ERR_VALIDATION_ERROR, "idempotency_key",
	    "header_mismatch", "idempotency_key differs from the Idempotency-Key header");
}

/* ROUTE_SECRET_BODY: what the arena's reset wipes. */
struct secret_body {
	char			*buf;
	size_t			 len;
	struct json_object	*doc;
};

/* Every string of a parsed document, overwritten where json-c keeps it. */
static void
wipe_json(struct json_object *o)
{
	size_t n;

	switch (json_object_get_type(o)) {
	case json_type_string:
		sodium_memzero((char *)json_object_get_string(o),
		    (size_t)json_object_get_string_len(o));
		break;
	case json_type_object: {
		json_object_object_foreach(o, key, v) {
			(void)key;
			wipe_json(v);
		}
		break;
	}
	case json_type_array:
		n = json_object_array_length(o);
		for (size_t i = 0; i < n; i++)
			wipe_json(json_object_array_get_idx(o, i));
		break;
	default:
		break;
	}
}

static void
wipe_body(void *arg)
{
	struct secret_body *s = arg;

	if (s->buf != NULL)
		sodium_memzero(s->buf, s->len);
	if (s->doc != NULL)
		wipe_json(s->doc);
}

/* The headers the route requires (ROUTE_IDEM_REQUIRED, ROUTE_USER_HEADER):
 * 0 when sent, else the 400 written naming the missing one. */
static int
headers_or_reply(struct req *r, const struct route *rt)
{
	const char *h = router_header_missing(rt, &r->http);

	if (h == NULL)
		return 0;
	if (strcmp(h, "Idempotency-Key") == 0)
		return idem_key_or_reply(r, NULL);
	return api_field_error(r, 400, ERR_VALIDATION_ERROR, h, "required",
	    arena_printf(r->arena, "the %s header is required", h));
}

/* 401 for a missing, invalid or revoked credential: NEEDS_RESIGNIN on the
 * routes that name it. Replaces whatever answer was being built. */
static int
refused(struct req *r)
{
	r->nheaders = 0;
	if (r->match.route != NULL && (r->match.route->flags & ROUTE_RESIGNIN))
		return api_error(r, 401, ERR_NEEDS_RESIGNIN, "sign in again or send a valid API key",
		    "missing or invalid credentials");
	return api_error(r, 401, ERR_UNAUTHORIZED, NULL, "missing or invalid credentials");
}

/*
 * Authentication rule 2 (router_body_client_id): the body's client_id,
 * checked as a declared field and taken out of the body (a ROUTE_ANY_BODY
 * body keeps it: the handler owns that shape), so that no route declares
 * it. Returns the id given (an arena copy), or NULL.
 */
static const char *
body_client_id(struct req *r, const struct route *rt, struct json_object *doc,
    struct verrs *errs)
{
	struct json_object *v, *one, *ok = NULL;
	const char *cid = NULL;

	if (!router_body_client_id(rt) || doc == NULL ||
	    !json_object_is_type(doc, json_type_object) ||
	    !json_object_object_get_ex(doc, "client_id", &v))
		return NULL;
	one = json_object_new_object();
	json_object_object_add(one, "client_id", json_object_get(v));
	if (validate_body(r->arena, router_client_id_field, one, &ok, errs) == 0)
		cid = arena_strdup(r->arena, json_object_get_string(v));
	json_object_put(one);
	if (!(rt->flags & ROUTE_ANY_BODY))
		json_object_object_del(doc, "client_id");
	return cid;
}

static int
run(struct req *r)
{
	struct json_object *doc, *out, *none;
	struct verrs errs = { 0 };
	const struct route *rt;
	const char *body_cid;
	int rc;

	if (r->http.method == M__MAX && r->http.method_str != NULL &&
	    strcmp(r->http.method_str, "OPTIONS") == 0 && (rc = cors_preflight(r)) != 0)
		return rc;
	if ((rc = parse_body(r, &doc)) != 0)
		return rc;
	rc = router_match(routes, routes_count, r->http.method, r->http.path,
	    r->arena, &r->match);
	if (rc == 404)
		return api_error(r, 404, ERR_NOT_FOUND, NULL, "no such endpoint: %s",
		    r->http.path);
	if (rc == 405) {
		req_header_add(r, "Allow", r->match.allow);
		return api_error(r, 405, ERR_METHOD_NOT_ALLOWED, NULL,
		    "%s is not allowed here; allowed: %s",
		    r->http.head ? "GET" : r->http.method_str,	/* HEAD: GET's answer */
		    r->match.allow);
	}
	rt = r->match.route;
	if (rt->flags & ROUTE_SECRET_BODY) {
		/* registered after the document's own release: runs before it */
		struct secret_body *sb = arena_alloc(r->arena, sizeof(*sb));

		sb->buf = r->http.body;
		sb->len = r->http.body_len;
		sb->doc = doc;
		arena_defer(r->arena, wipe_body, sb);
	}
	if (!host_allows(r, rt))
		return api_error(r, 404, ERR_NOT_FOUND, NULL,
		    "no such endpoint on this host: %s", r->http.path);
	if (rt->auth != AUTH_NONE && (rc = auth_resolve(r)) != 0) {
		/* A key on the wrong host is a valid credential: it keeps its code. */
		if (rc == 401 && (rt->flags & ROUTE_RESIGNIN) && !(r->error_code != NULL &&
		    strcmp(r->error_code, ERR_WRONG_ENVIRONMENT) == 0))
			return refused(r);
		return rc;
	}
	/* A cached key before anything that writes: confirmed first. */
	if (r->key_unconfirmed != NULL && (r->http.method != M_GET ||
	    (rt->flags & (ROUTE_TX | ROUTE_IDEM | ROUTE_ONCE)))) {
		if (auth_confirm(r) != 0)
			return api_db_error(r);
		if (r->key_revoked)
			return refused(r);
	}

	body_cid = body_client_id(r, rt, doc, &errs);
	if (rt->query != NULL)
		validate_query(r->arena, rt->query, r->http.query, r->http.nquery,
		    &r->query, &errs);
	else if (r->http.nquery > 0)
		validate_query(r->arena, no_fields, r->http.query, r->http.nquery,
		    &none, &errs);
	if (rt->flags & ROUTE_ANY_BODY) {
		if (doc != NULL && !json_object_is_type(doc, json_type_object))
			verrs_add(r->arena, &errs, "", "invalid_type",
			    "body must be a JSON object");
		r->body = doc != NULL ? doc : json_obj(r->arena);
	} else if (rt->body != NULL)
		validate_body(r->arena, rt->body, doc, &r->body, &errs);
	else if (doc != NULL)	/* none, or (taken out above) client_id */
		validate_body(r->arena, router_body_client_id(rt) ? router_client_id_field :
		    no_fields, doc, &r->body, &errs);
	if (errs.n > 0)
		return api_verror(r, &errs);
	/* The client comes from the credential; a body naming another is refused. */
	if (body_cid != NULL && r->client_id != NULL && strcmp(body_cid, r->client_id) != 0)
		return api_error(r, 403, ERR_CLIENT_ID_MISMATCH, "omit client_id or send your own",
		    "client_id does not match the credential");
	if ((rc = idem_body(r, rt)) != 0 || (rc = headers_or_reply(r, rt)) != 0)
		return rc;

	/* Handlers fill out; only an error (api_error) replaces it. */
	r->out = out = json_obj(r->arena);
	if (rt->flags & (ROUTE_TX | ROUTE_IDEM | ROUTE_ONCE))
		return run_tx(r, rt, out);
	if (rt->flags & ROUTE_READ) {
		standby_begin(r);
		if (r->key_revoked) {
			standby_end(r, 0);
			return refused(r);
		}
	}
	rc = rt->handler(r, out);
	if ((rt->flags & ROUTE_READ) && standby_end(r, rc))
		rc = rt->handler(r, r->out);	/* the standby went away mid-read */
	if (r->db != NULL && db_in_tx(r->db))
		db_rollback(r->db);	/* a handler that returned mid-transaction */
	return rc;
}

void
dispatch(struct req *r)
{
	r->iam = errors_iam_path(r->http.path);
	r->status = run(r);
	/* A cached key no query confirmed yet (an answer without a query, a
	 * validation error): confirmed now, before anything is written. */
	if (r->key_unconfirmed != NULL && auth_confirm(r) != 0)
		r->status = api_db_error(r);
	if (r->key_revoked)
		r->status = refused(r);
	if (r->match.route != NULL && (r->match.route->flags & ROUTE_CORS))
		cors_echo(r);
	meter_count(r);		/* in memory; the worker flushes between requests */
}
