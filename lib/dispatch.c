/*
 * The request pipeline after parsing: body syntax, route, host, auth,
 * declared input, handler. Everything the route table says is enforced
 * here, so handlers never re-check it.
 */
#include <string.h>

#include "arena.h"
#include "auth.h"
#include "db.h"
#include "errors.h"
#include "json.h"
#include "req.h"
#include "router.h"
#include "server.h"
#include "validate.h"

static int
is_iam_path(const char *path)
{
	return path != NULL && (strncmp(path, "/v1/iam/", 8) == 0 ||
	    strcmp(path, "/v1/iam") == 0);
}

/* Body syntax: checked for every request that carries one, before routing. */
static int
parse_body(struct req *r, struct json_object **doc)
{
	const char *why;

	*doc = NULL;
	if (r->http.body == NULL || r->http.body_len == 0)
		return 0;
	if (!validate_utf8(r->http.body, r->http.body_len))
		return api_error(r, 400, "INVALID_UTF8", "send the body as UTF-8 JSON",
		    "the request body is not valid UTF-8");
	if ((*doc = json_parse(r->arena, r->http.body, r->http.body_len, &why)) == NULL &&
	    why == NULL)	/* the JSON value null: well-formed, but no object */
		return api_field_error(r, 400, "VALIDATION_ERROR", "", "invalid_type",
		    "body must be a JSON object");
	if (*doc == NULL)
		return api_error(r, 400, strcmp(why, "invalid UTF-8") == 0 ?
		    "INVALID_UTF8" : "INVALID_JSON", "send a JSON object",
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

static int
run(struct req *r)
{
	struct json_object *doc, *out;
	struct verrs errs = { 0 };
	const struct route *rt;
	int rc;

	if ((rc = parse_body(r, &doc)) != 0)
		return rc;
	rc = router_match(routes, routes_count, r->http.method, r->http.path,
	    r->arena, &r->match);
	if (rc == 404)
		return api_error(r, 404, "NOT_FOUND", NULL, "no such endpoint: %s",
		    r->http.path);
	if (rc == 405) {
		req_header_add(r, "Allow", r->match.allow);
		return api_error(r, 405, "METHOD_NOT_ALLOWED", NULL,
		    "%s is not allowed here; allowed: %s", r->http.method_str,
		    r->match.allow);
	}
	rt = r->match.route;
	if (!host_allows(r, rt))
		return api_error(r, 404, "NOT_FOUND", NULL,
		    "no such endpoint on this host: %s", r->http.path);
	if (rt->auth != AUTH_NONE && (rc = auth_resolve(r)) != 0)
		return rc;

	if (rt->query != NULL)
		validate_query(r->arena, rt->query, r->http.query, r->http.nquery,
		    &r->query, &errs);
	else
		for (size_t i = 0; i < r->http.nquery; i++)
			verrs_add(r->arena, &errs, r->http.query[i].key, "unknown_field",
			    "unknown query parameter");
	if (rt->flags & ROUTE_ANY_BODY) {
		if (doc != NULL && !json_object_is_type(doc, json_type_object))
			verrs_add(r->arena, &errs, "", "invalid_type",
			    "body must be a JSON object");
		r->body = doc != NULL ? doc : json_obj(r->arena);
	} else if (rt->body != NULL)
		validate_body(r->arena, rt->body, doc, &r->body, &errs);
	else if (doc != NULL)
		validate_body(r->arena, no_fields, doc, &r->body, &errs);
	if (errs.n > 0)
		return api_verror(r, &errs);
	/* The client comes from the credential; a body naming another is refused. */
	if (r->client_id != NULL && json_get_str(r->body, "client_id") != NULL &&
	    strcmp(json_get_str(r->body, "client_id"), r->client_id) != 0)
		return api_error(r, 403, "CLIENT_ID_MISMATCH", "omit client_id or send your own",
		    "client_id does not match the credential");

	out = json_obj(r->arena);
	rc = rt->handler(r, out);
	if (r->out == NULL)
		r->out = out;
	if (r->db != NULL && db_in_tx(r->db))
		db_rollback(r->db);	/* a handler that returned mid-transaction */
	return rc;
}

void
dispatch(struct req *r)
{
	r->iam = is_iam_path(r->http.path);
	r->status = run(r);
}
