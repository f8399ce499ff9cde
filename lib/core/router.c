/* Match a decoded path against the static route table. */
#include <stdio.h>
#include <string.h>

#include <json-c/json.h>

#include "core/arena.h"
#include "core/router.h"
#include "core/validate.h"

static int
is_capture(const char *seg, size_t len)
{
	return (len >= 3 && seg[0] == '{' && seg[len - 1] == '}') ||
	    (len >= 2 && seg[0] == ':');
}

/*
 * Compare pattern and path segment by segment. On a match fill captures
 * (when m is not NULL) and return 1.
 */
static int
pattern_match(const char *pat, const char *path, struct arena *a, struct route_match *m)
{
	size_t ncaps = 0;

	for (;;) {
		size_t plen, slen;

		if (*pat != '/' || *path != '/')
			return 0;
		pat++;
		path++;
		plen = strcspn(pat, "/");
		slen = strcspn(path, "/");
		if (slen == 0)
			return 0;	/* empty segment: "//" or a trailing "/" */
		if (is_capture(pat, plen)) {
			if (ncaps == ROUTER_MAX_CAPS)
				return 0;
			if (m != NULL) {
				size_t off = 1;
				size_t nlen = pat[0] == '{' ? plen - 2 : plen - 1;

				m->cap_names[ncaps] = arena_strndup(a, pat + off, nlen);
				m->caps[ncaps] = arena_strndup(a, path, slen);
			}
			ncaps++;
		} else if (plen != slen || memcmp(pat, path, plen) != 0) {
			return 0;
		}
		pat += plen;
		path += slen;
		if (*pat == '\0' && *path == '\0')
			break;
	}
	if (m != NULL)
		m->ncaps = ncaps;
	return 1;
}

int
router_match(const struct route *table, size_t n, enum http_method method,
    const char *path, struct arena *a, struct route_match *m)
{
	const struct route *hit = NULL;
	unsigned allowed = 0;

	memset(m, 0, sizeof(*m));
	for (size_t i = 0; i < n; i++) {
		if (!pattern_match(table[i].pattern, path, NULL, NULL))
			continue;
		if (table[i].method == method) {
			hit = &table[i];
			break;
		}
		allowed |= 1u << table[i].method;
	}
	if (hit != NULL) {
		pattern_match(hit->pattern, path, a, m);
		m->route = hit;
		return 0;
	}
	if (allowed == 0)
		return 404;
	for (int k = 0; k < M__MAX; k++) {
		if (!(allowed & (1u << k)))
			continue;
		if (m->allow[0] != '\0')
			strcat(m->allow, ", ");
		strcat(m->allow, http_method_name((enum http_method)k));
	}
	return 405;
}

const char *
router_cap(const struct route_match *m, const char *name)
{
	for (size_t i = 0; i < m->ncaps; i++)
		if (strcmp(m->cap_names[i], name) == 0)
			return m->caps[i];
	return NULL;
}

const char *
router_header_missing(const struct route *rt, const struct http_req *h)
{
	if ((rt->flags & ROUTE_IDEM_REQUIRED) && h->idempotency_key == NULL)
		return "Idempotency-Key";
	if ((rt->flags & ROUTE_USER_HEADER) && h->client_user_id == NULL)
		return "X-Client-User-Id";
	return NULL;
}

/* ---- the table, printed ---- */

static const struct {
	unsigned	 bit;
	const char	*name;
} auth_names[] = {
	{ AUTH_JWT, "developerJwt" }, { AUTH_KEY, "apiKey" },
	{ AUTH_LINK, "linkAccessToken" }, { AUTH_PAYTOKEN, "payToken" },
}, flag_names[] = {
	{ ROUTE_SANDBOX, "sandbox" }, { ROUTE_LIVE, "live" }, { ROUTE_ANY_BODY, "any_body" },
	{ ROUTE_TX, "tx" }, { ROUTE_IDEM, "idem" }, { ROUTE_ONCE, "once" },
	{ ROUTE_RESIGNIN, "resignin" }, { ROUTE_CORS, "cors" },
	{ ROUTE_IDEM_REQUIRED, "idem_required" }, { ROUTE_USER_HEADER, "user_header" },
	{ ROUTE_LINK_TOKEN, "link_token" }, { ROUTE_SESSION_TOKEN, "session_token" },
	{ ROUTE_IDEM_BODY, "idem_body" }, { ROUTE_SECRET_BODY, "secret_body" },
	{ ROUTE_READ, "read" },
};

/* The schemes a route takes, in the document's names. */
static struct json_object *
route_auth(const struct route *rt)
{
	struct json_object *a = json_object_new_array();

	for (size_t i = 0; i < sizeof(auth_names) / sizeof(auth_names[0]); i++)
		if (rt->auth & auth_names[i].bit)
			json_object_array_add(a, json_object_new_string(auth_names[i].name));
	if (rt->flags & ROUTE_LINK_TOKEN)
		json_object_array_add(a, json_object_new_string("linkToken"));
	if (rt->flags & ROUTE_SESSION_TOKEN)
		json_object_array_add(a, json_object_new_string("sessionToken"));
	return a;
}

static struct json_object *
route_flags(const struct route *rt)
{
	struct json_object *a = json_object_new_array();

	for (size_t i = 0; i < sizeof(flag_names) / sizeof(flag_names[0]); i++)
		if (rt->flags & flag_names[i].bit)
			json_object_array_add(a, json_object_new_string(flag_names[i].name));
	return a;
}

/* The array's strings joined by sep, or none when it is empty. */
static void
print_joined(FILE *f, struct json_object *a, const char *sep, const char *none)
{
	size_t n = json_object_array_length(a);

	if (n == 0)
		fputs(none, f);
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%s%s", i ? sep : "",
		    json_object_get_string(json_object_array_get_idx(a, i)));
}

static const struct vfield client_id_field[] = {
	{ "client_id", NULL, VT_STRING, 0, 1, 64 },
	{ NULL }
};
const struct vfield *const router_client_id_field = client_id_field;

int
router_body_client_id(const struct route *rt)
{
	return (rt->auth & AUTH_KEY) &&
	    (rt->method == M_POST || rt->method == M_PUT || rt->method == M_PATCH);
}

/* The declared body's schema, with the dispatcher's client_id (marked
 * x-dispatcher) on the routes router_body_client_id names; a route without
 * a body spec then takes an optional {client_id}. */
static struct json_object *
route_body_schema(const struct route *rt)
{
	struct json_object *o, *cid, *props;

	if (rt->flags & ROUTE_ANY_BODY)
		return json_object_new_object();
	if (!router_body_client_id(rt))
		return rt->body ? validate_schema(rt->body) : NULL;
	o = validate_schema(rt->body != NULL ? rt->body : router_client_id_field + 1);
	cid = validate_schema(router_client_id_field);
	props = json_object_object_get(json_object_object_get(cid, "properties"), "client_id");
	json_object_object_add(props, "x-dispatcher", json_object_new_boolean(1));
	json_object_object_add(json_object_object_get(o, "properties"), "client_id",
	    json_object_get(props));
	json_object_put(cid);
	return o;
}

void
router_print(FILE *f, const struct route *table, size_t n, int json)
{
	struct json_object *all = json_object_new_array();

	for (size_t i = 0; i < n; i++) {
		const struct route *rt = &table[i];
		struct json_object *o = json_object_new_object();

		json_object_object_add(o, "method",
		    json_object_new_string(http_method_name(rt->method)));
		json_object_object_add(o, "pattern", json_object_new_string(rt->pattern));
		json_object_object_add(o, "auth", route_auth(rt));
		json_object_object_add(o, "flags", route_flags(rt));
		if (json) {
			json_object_object_add(o, "body", route_body_schema(rt));
			json_object_object_add(o, "query",
			    rt->query ? validate_schema(rt->query) : NULL);
		} else {
			fprintf(f, "%s\t%s\t", http_method_name(rt->method), rt->pattern);
			print_joined(f, json_object_object_get(o, "auth"), ",", "none");
			fputc('\t', f);
			print_joined(f, json_object_object_get(o, "flags"), ",", "-");
			fputc('\n', f);
		}
		json_object_array_add(all, o);
	}
	if (json)
		fprintf(f, "%s\n", json_object_to_json_string_ext(all,
		    JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(all);
}
