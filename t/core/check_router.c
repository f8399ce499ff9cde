/*
 * lib/router.c: segment matching, captures, 404/405 with Allow, table order,
 * and the invariants of the application's own table (lib/routes.c).
 */
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "core/arena.h"
#include "core/router.h"
#include "core/validate.h"
#include "tarena.h"
#include "tcheck.h"

static int
h_stub(struct req *r, struct json_object *out)
{
	return 200;
}

/*
 * A test-local table. Row numbers are the route's identity in the cases
 * below; keep the comments in step with them.
 */
static const struct route tbl[] = {
	/* 0 */ { M_GET,    "/v1/items",                    0, NULL, NULL, h_stub, 0 },
	/* 1 */ { M_POST,   "/v1/items",                    0, NULL, NULL, h_stub, 0 },
	/* 2 */ { M_GET,    "/v1/items/new",                0, NULL, NULL, h_stub, 0 },
	/* 3 */ { M_GET,    "/v1/items/{id}",               0, NULL, NULL, h_stub, 0 },
	/* 4 */ { M_DELETE, "/v1/items/:id",                0, NULL, NULL, h_stub, 0 },
	/* 5 */ { M_GET,    "/v1/items/{id}/parts/{part}",  0, NULL, NULL, h_stub, 0 },
	/* 6 */ { M_GET,    "/v1/users/:uid/items/{item_id}/tags/:tag", 0, NULL, NULL, h_stub, 0 },
	/* 7 */ { M_GET,    "/v1/orders/{id}",              0, NULL, NULL, h_stub, 0 },
	/* 8 */ { M_GET,    "/v1/orders/first",             0, NULL, NULL, h_stub, 0 },
	/* 9 */ { M_PUT,    "/v1/all",                      0, NULL, NULL, h_stub, 0 },
	/* 10 */ { M_DELETE, "/v1/all",                     0, NULL, NULL, h_stub, 0 },
	/* 11 */ { M_PATCH,  "/v1/all",                     0, NULL, NULL, h_stub, 0 },
	/* 12 */ { M_POST,   "/v1/all",                     0, NULL, NULL, h_stub, 0 },
	/* 13 */ { M_GET,    "/v1/all",                     0, NULL, NULL, h_stub, 0 },
	/* 14 */ { M_POST,   "/.well-known/jwks.json",      0, NULL, NULL, h_stub, 0 },
	/* 15 */ { M_PATCH,  "/v1/x/{a}/{b}/{c}/{d}/{e}/{f}/{g}/{h}", 0, NULL, NULL, h_stub, 0 },
	/* 16 */ { M_PUT,    "/v1/y/{a}",                   0, NULL, NULL, h_stub, 0 },
	/* 17 */ { M_GET,    "/v1/y/literal",               0, NULL, NULL, h_stub, 0 },
	/* 18 */ { M_GET,    "/v1/{a",                      0, NULL, NULL, h_stub, 0 },
	/* 19 */ { M_GET,    "/v1/:",                       0, NULL, NULL, h_stub, 0 },
};
#define NTBL (sizeof(tbl) / sizeof(tbl[0]))

#define MAXC ROUTER_MAX_CAPS

static const struct {
	enum http_method	 method;
	const char		*path;
	size_t			 row;
	size_t			 ncaps;
	const char		*names[MAXC];
	const char		*vals[MAXC];
} valid[] = {
	{ M_GET,    "/v1/items",                    0, 0, { NULL }, { NULL } },
	{ M_POST,   "/v1/items",                    1, 0, { NULL }, { NULL } },
	/* literal before capture in the table: the literal wins */
	{ M_GET,    "/v1/items/new",                2, 0, { NULL }, { NULL } },
	{ M_GET,    "/v1/items/abc",                3, 1, { "id" }, { "abc" } },
	/* "new" is not special for another method: the capture route takes it */
	{ M_DELETE, "/v1/items/new",                4, 1, { "id" }, { "new" } },
	{ M_DELETE, "/v1/items/it_1",               4, 1, { "id" }, { "it_1" } },
	{ M_GET,    "/v1/items/a b/parts/p%20q",    5, 2, { "id", "part" }, { "a b", "p%20q" } },
	{ M_GET,    "/v1/items/7/parts/new",        5, 2, { "id", "part" }, { "7", "new" } },
	{ M_GET,    "/v1/users/u1/items/i2/tags/t3", 6, 3,
	    { "uid", "item_id", "tag" }, { "u1", "i2", "t3" } },
	{ M_GET,    "/v1/users/:uid/items/{id}/tags/x", 6, 3,
	    { "uid", "item_id", "tag" }, { ":uid", "{id}", "x" } },
	/* capture before literal in the table: the capture wins */
	{ M_GET,    "/v1/orders/first",             7, 1, { "id" }, { "first" } },
	{ M_GET,    "/v1/orders/o_9",               7, 1, { "id" }, { "o_9" } },
	{ M_GET,    "/v1/all",                      13, 0, { NULL }, { NULL } },
	{ M_PATCH,  "/v1/all",                      11, 0, { NULL }, { NULL } },
	{ M_POST,   "/.well-known/jwks.json",       14, 0, { NULL }, { NULL } },
	{ M_PATCH,  "/v1/x/1/2/3/4/5/6/7/8",        15, 8,
	    { "a", "b", "c", "d", "e", "f", "g", "h" },
	    { "1", "2", "3", "4", "5", "6", "7", "8" } },
	/* a PUT capture earlier in the table does not shadow a GET literal */
	{ M_GET,    "/v1/y/literal",                17, 0, { NULL }, { NULL } },
	{ M_PUT,    "/v1/y/literal",                16, 1, { "a" }, { "literal" } },
	/* "{a" (no closing brace) and ":" alone are literal segments */
	{ M_GET,    "/v1/{a",                       18, 0, { NULL }, { NULL } },
	{ M_GET,    "/v1/:",                        19, 0, { NULL }, { NULL } },
	/* a long capture value is copied whole */
	{ M_GET,    "/v1/orders/0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
	    7, 1, { "id" }, { "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef" } },
};

static const struct {
	enum http_method	 method;
	const char		*path;
	int			 rc;
	const char		*allow;		/* exact Allow on 405 */
} invalid[] = {
	/* unknown paths */
	{ M_GET,    "/",                            404, "" },
	{ M_GET,    "",                             404, "" },
	{ M_GET,    "/v1",                          404, "" },
	{ M_GET,    "/v1/nothing",                  404, "" },
	{ M_GET,    "/v2/items",                    404, "" },
	{ M_GET,    "/V1/items",                    404, "" },
	{ M_GET,    "/v1/itemsx",                   404, "" },
	{ M_GET,    "/v1/item",                     404, "" },
	{ M_GET,    "v1/items",                     404, "" },
	{ M_GET,    "/v1/items/a/b",                404, "" },
	{ M_GET,    "/v1/items/a/parts",            404, "" },
	{ M_GET,    "/v1/items/a/parts/b/c",        404, "" },
	{ M_GET,    "/v1/users/u/items/i/tags",     404, "" },
	{ M_GET,    "/v1/x/1/2/3/4/5/6/7",          404, "" },
	{ M_GET,    "/v1/{b",                       404, "" },
	/* trailing slash and empty segments */
	{ M_GET,    "/v1/items/",                   404, "" },
	{ M_POST,   "/v1/items/",                   404, "" },
	{ M_GET,    "//v1/items",                   404, "" },
	{ M_GET,    "/v1//items",                   404, "" },
	{ M_GET,    "/v1/items//",                  404, "" },
	{ M_GET,    "/v1/items//parts/p",           404, "" },
	{ M_GET,    "/v1/items/a/parts/",           404, "" },
	{ M_DELETE, "/v1/items/",                   404, "" },
	{ M_GET,    "/v1/all/",                     404, "" },
	/* known path, other method: 405, Allow in enum order, no duplicates */
	{ M_PUT,    "/v1/items",                    405, "GET, POST" },
	{ M_DELETE, "/v1/items",                    405, "GET, POST" },
	{ M_PATCH,  "/v1/items",                    405, "GET, POST" },
	{ M_POST,   "/v1/items/abc",                405, "GET, DELETE" },
	{ M_PATCH,  "/v1/items/new",                405, "GET, DELETE" },
	{ M_DELETE, "/v1/items/a/parts/b",          405, "GET" },
	{ M_POST,   "/v1/orders/first",             405, "GET" },
	{ M_GET,    "/.well-known/jwks.json",       405, "POST" },
	{ M_GET,    "/v1/x/1/2/3/4/5/6/7/8",        405, "PATCH" },
	{ M_DELETE, "/v1/y/literal",                405, "GET, PUT" },
	{ M_POST,   "/v1/y/other",                  405, "PUT" },
	/* an unknown method on a known path: 405 listing what is there */
	{ M__MAX,   "/v1/items",                    405, "GET, POST" },
	{ M__MAX,   "/v1/items/new",                405, "GET, DELETE" },
	{ M__MAX,   "/v1/all",                      405, "GET, POST, PUT, PATCH, DELETE" },
	{ M__MAX,   "/v1/nothing",                  404, "" },
};

START_TEST(test_match_valid)
{
	struct route_match m;
	int rc;

	memset(&m, 0xa5, sizeof(m));
	rc = router_match(tbl, NTBL, valid[_i].method, valid[_i].path, &a, &m);
	ck_assert_msg(rc == 0, "%s: rc %d", valid[_i].path, rc);
	ck_assert_ptr_eq(m.route, &tbl[valid[_i].row]);
	ck_assert_uint_eq(m.ncaps, valid[_i].ncaps);
	ck_assert_str_eq(m.allow, "");
	for (size_t k = 0; k < valid[_i].ncaps; k++) {
		ck_assert_str_eq(m.cap_names[k], valid[_i].names[k]);
		ck_assert_str_eq(m.caps[k], valid[_i].vals[k]);
		ck_assert_str_eq(router_cap(&m, valid[_i].names[k]), valid[_i].vals[k]);
	}
	ck_assert_ptr_null(router_cap(&m, "nope"));
	ck_assert_ptr_null(router_cap(&m, ""));
	/* names are given without their braces or colon */
	ck_assert_ptr_null(router_cap(&m, "{id}"));
	ck_assert_ptr_null(router_cap(&m, ":id"));
}
END_TEST

START_TEST(test_match_invalid)
{
	struct route_match m;
	int rc;

	memset(&m, 0xa5, sizeof(m));
	rc = router_match(tbl, NTBL, invalid[_i].method, invalid[_i].path, &a, &m);
	ck_assert_msg(rc == invalid[_i].rc, "%s: rc %d, want %d",
	    invalid[_i].path, rc, invalid[_i].rc);
	ck_assert_ptr_null(m.route);
	ck_assert_uint_eq(m.ncaps, 0);
	ck_assert_str_eq(m.allow, invalid[_i].allow);
}
END_TEST

/* A capture lives in the arena: it outlives the caller's path buffer. */
START_TEST(test_capture_copied)
{
	struct route_match m;
	char path[] = "/v1/items/abc";

	ck_assert_int_eq(router_match(tbl, NTBL, M_GET, path, &a, &m), 0);
	memset(path, 'z', sizeof(path) - 1);
	ck_assert_str_eq(m.caps[0], "abc");
	ck_assert_str_eq(router_cap(&m, "id"), "abc");
}
END_TEST

/* An empty table knows no path at all. */
START_TEST(test_empty_table)
{
	struct route_match m;

	ck_assert_int_eq(router_match(tbl, 0, M_GET, "/v1/items", &a, &m), 404);
	ck_assert_ptr_null(m.route);
	ck_assert_str_eq(m.allow, "");
}
END_TEST

/* "/v1/items/{id}" and "/v1/items/:key" are the same pattern. */
static char *
normalise(const char *pat, char *buf, size_t len)
{
	size_t j = 0;

	while (*pat != '\0' && j + 4 < len) {
		size_t seg;

		if (*pat == '/') {
			buf[j++] = *pat++;
			continue;
		}
		seg = strcspn(pat, "/");
		if ((pat[0] == '{' && seg >= 3 && pat[seg - 1] == '}') ||
		    (pat[0] == ':' && seg >= 2)) {
			memcpy(buf + j, "{}", 2);
			j += 2;
		} else {
			if (j + seg + 1 >= len)
				break;
			memcpy(buf + j, pat, seg);
			j += seg;
		}
		pat += seg;
	}
	buf[j] = '\0';
	return buf;
}

START_TEST(test_normalise)
{
	char b[128];

	ck_assert_str_eq(normalise("/v1/a/{id}/b/:x", b, sizeof(b)), "/v1/a/{}/b/{}");
	ck_assert_str_eq(normalise("/v1/{a", b, sizeof(b)), "/v1/{a");
	ck_assert_str_eq(normalise("/v1/:", b, sizeof(b)), "/v1/:");
}
END_TEST

START_TEST(test_routes_unique)
{
	char pi[512], pj[512];

	ck_assert_uint_gt(routes_count, 0);
	for (size_t i = 0; i < routes_count; i++) {
		normalise(routes[i].pattern, pi, sizeof(pi));
		for (size_t j = i + 1; j < routes_count; j++)
			ck_assert_msg(routes[i].method != routes[j].method ||
			    strcmp(pi, normalise(routes[j].pattern, pj, sizeof(pj))) != 0,
			    "routes[%zu] %s and routes[%zu] %s are the same route",
			    i, routes[i].pattern, j, routes[j].pattern);
	}
}
END_TEST

START_TEST(test_routes_shape)
{
	for (size_t i = 0; i < routes_count; i++) {
		const struct route *rt = &routes[i];
		const char *p = rt->pattern;
		size_t ncaps = 0;

		ck_assert_msg(strncmp(p, "/v1/", 4) == 0 ||
		    strncmp(p, "/.well-known/", 13) == 0,
		    "routes[%zu] %s: not under /v1/ or /.well-known/", i, p);
		ck_assert_msg((unsigned)rt->method < M__MAX, "routes[%zu] %s: bad method", i, p);
		ck_assert_msg(rt->handler != NULL, "routes[%zu] %s: no handler", i, p);
		ck_assert_msg(strstr(p, "//") == NULL && p[strlen(p) - 1] != '/',
		    "routes[%zu] %s: empty segment", i, p);
		for (const char *s = p; (s = strchr(s, '/')) != NULL; s++)
			if (s[1] == '{' || s[1] == ':')
				ncaps++;
		ck_assert_msg(ncaps <= ROUTER_MAX_CAPS, "routes[%zu] %s: too many captures", i, p);
		ck_assert_msg((rt->flags & (ROUTE_SANDBOX | ROUTE_LIVE)) !=
		    (ROUTE_SANDBOX | ROUTE_LIVE), "routes[%zu] %s: on no host", i, p);
		ck_assert_msg(!(rt->flags & ROUTE_IDEM_REQUIRED) ||
		    (rt->flags & (ROUTE_IDEM | ROUTE_ONCE)),
		    "routes[%zu] %s: a required Idempotency-Key that is never claimed", i, p);
	}
}
END_TEST

/* Every route in the real table is reachable: its own pattern routes to it. */
START_TEST(test_routes_reachable)
{
	for (size_t i = 0; i < routes_count; i++) {
		struct route_match m;
		const char *p = routes[i].pattern;
		char path[512];
		size_t j = 0;

		/* Instantiate captures with a value no literal segment uses. */
		while (*p != '\0' && j + 8 < sizeof(path)) {
			size_t seg;

			if (*p == '/') {
				path[j++] = *p++;
				continue;
			}
			seg = strcspn(p, "/");
			if (p[0] == '{' || p[0] == ':') {
				memcpy(path + j, "zz9q", 4);
				j += 4;
			} else {
				ck_assert_uint_lt(j + seg, sizeof(path) - 8);
				memcpy(path + j, p, seg);
				j += seg;
			}
			p += seg;
		}
		path[j] = '\0';
		ck_assert_int_eq(router_match(routes, routes_count, routes[i].method,
		    path, &a, &m), 0);
		ck_assert_msg(m.route == &routes[i], "routes[%zu] %s is shadowed by %s",
		    i, routes[i].pattern, m.route->pattern);
	}
}
END_TEST

START_TEST(test_routes_health)
{
	struct route_match m;

	ck_assert_int_eq(router_match(routes, routes_count, M_GET, "/v1/health", &a, &m), 0);
	ck_assert_str_eq(m.route->pattern, "/v1/health");
	ck_assert_int_eq(router_match(routes, routes_count, M_GET, "/v1/health/live", &a, &m), 0);
	ck_assert_str_eq(m.route->pattern, "/v1/health/live");
	ck_assert_int_eq(router_match(routes, routes_count, M_POST, "/v1/health", &a, &m), 405);
	ck_assert_str_eq(m.allow, "GET");
	ck_assert_int_eq(router_match(routes, routes_count, M_GET, "/v1/health/", &a, &m), 404);
}
END_TEST

/* The headers a route requires: each flag names its header, and only
 * when it is missing. */
START_TEST(test_header_missing)
{
	static const struct route plain = { M_POST, "/v1/x", 0, NULL, NULL, h_stub, 0 };
	static const struct route idem = { M_POST, "/v1/x", 0, NULL, NULL, h_stub,
	    ROUTE_IDEM | ROUTE_IDEM_REQUIRED };
	static const struct route user = { M_GET, "/v1/x", 0, NULL, NULL, h_stub,
	    ROUTE_USER_HEADER };
	static const struct route both = { M_POST, "/v1/x", 0, NULL, NULL, h_stub,
	    ROUTE_ONCE | ROUTE_IDEM_REQUIRED | ROUTE_USER_HEADER };
	struct http_req h = { 0 };

	ck_assert_ptr_null(router_header_missing(&plain, &h));
	ck_assert_str_eq(router_header_missing(&idem, &h), "Idempotency-Key");
	ck_assert_str_eq(router_header_missing(&user, &h), "X-Client-User-Id");
	ck_assert_str_eq(router_header_missing(&both, &h), "Idempotency-Key");
	h.idempotency_key = "k1";
	ck_assert_ptr_null(router_header_missing(&idem, &h));
	ck_assert_str_eq(router_header_missing(&both, &h), "X-Client-User-Id");
	ck_assert_str_eq(router_header_missing(&user, &h), "X-Client-User-Id");
	h.client_user_id = "user-1";
	ck_assert_ptr_null(router_header_missing(&both, &h));
	ck_assert_ptr_null(router_header_missing(&user, &h));
	h.idempotency_key = NULL;
	ck_assert_ptr_null(router_header_missing(&user, &h));
	ck_assert_str_eq(router_header_missing(&both, &h), "Idempotency-Key");
}
END_TEST

/* The application's routes that take a required key say so in the table
 * (SPEC: client-secret creation and rotation, webhook registration,
 * sandbox account links). */
START_TEST(test_routes_idem_required)
{
	static const struct { enum http_method m; const char *path; } req[] = {
		{ M_POST, "/v1/iam/clients/zz9q/client-secrets" },
		{ M_POST, "/v1/iam/clients/zz9q/client-secrets/sandbox/rotate" },
		{ M_POST, "/v1/iam/clients/zz9q/webhooks" },
		{ M_POST, "/v1/webhook-endpoints" },
		{ M_POST, "/v1/sandbox/account-links" },
	};
	struct route_match m;

	for (size_t i = 0; i < sizeof(req) / sizeof(req[0]); i++) {
		ck_assert_int_eq(router_match(routes, routes_count, req[i].m, req[i].path,
		    &a, &m), 0);
		ck_assert_msg(m.route->flags & ROUTE_IDEM_REQUIRED, "%s: key not required",
		    req[i].path);
	}
}
END_TEST

/*
 * The token table: one row per token kind (one AUTH_ bit, neither JWT nor
 * KEY), prefixes that cannot shadow each other, and every kind a route
 * takes has a row with a resolver (a row without one answers 401 and no
 * route may take its kind yet).
 */
START_TEST(test_routes_tokens)
{
	unsigned used = 0;

	for (size_t i = 0; i < routes_count; i++)
		used |= routes[i].auth;
	ck_assert_uint_gt(routes_tokens_count, 0);
	for (size_t i = 0; i < routes_tokens_count; i++) {
		const struct route_token *t = &routes_tokens[i];

		ck_assert_msg(t->kind != 0 && (t->kind & (t->kind - 1)) == 0 &&
		    !(t->kind & (AUTH_JWT | AUTH_KEY)), "token row %zu: kind %#x", i, t->kind);
		ck_assert_msg(strncmp(t->prefix, "bds_", 4) == 0 &&
		    t->prefix[strlen(t->prefix) - 1] == '_', "token row %zu: prefix %s", i,
		    t->prefix);
		ck_assert_msg(t->resolve != NULL || !(used & t->kind),
		    "token row %zu (%s): a route takes it but nothing resolves it", i, t->prefix);
		for (size_t j = 0; j < routes_tokens_count; j++)
			ck_assert_msg(i == j || (t->kind != routes_tokens[j].kind &&
			    strncmp(t->prefix, routes_tokens[j].prefix, strlen(t->prefix)) != 0),
			    "token rows %zu and %zu overlap", i, j);
	}
	for (unsigned k = AUTH_LINK; k <= AUTH_PAYTOKEN; k <<= 1) {
		int found = 0;

		if (!(used & k))
			continue;
		for (size_t i = 0; i < routes_tokens_count; i++)
			found |= routes_tokens[i].kind == k && routes_tokens[i].resolve != NULL;
		ck_assert_msg(found, "auth kind %#x is used by a route but has no token row", k);
	}
}
END_TEST

/* Authentication rule 2 is the dispatcher's: a KEY route that takes a body
 * (POST, PUT, PATCH) accepts client_id without declaring it. */
START_TEST(test_routes_client_id_rule)
{
	static const struct route key_post = { M_POST, "/x", AUTH_KEY, NULL, NULL, NULL, 0 };
	static const struct route key_get = { M_GET, "/x", AUTH_KEY, NULL, NULL, NULL, 0 };
	static const struct route key_delete = { M_DELETE, "/x", AUTH_KEY, NULL, NULL, NULL, 0 };
	static const struct route jwt_post = { M_POST, "/x", AUTH_JWT, NULL, NULL, NULL, 0 };
	static const struct route both_patch = { M_PATCH, "/x", AUTH_KEY | AUTH_JWT, NULL, NULL,
		NULL, 0 };

	ck_assert_int_eq(router_body_client_id(&key_post), 1);
	ck_assert_int_eq(router_body_client_id(&both_patch), 1);
	ck_assert_int_eq(router_body_client_id(&key_get), 0);
	ck_assert_int_eq(router_body_client_id(&key_delete), 0);
	ck_assert_int_eq(router_body_client_id(&jwt_post), 0);
	ck_assert_str_eq(router_client_id_field[0].name, "client_id");
	ck_assert_ptr_null(router_client_id_field[1].name);
}
END_TEST

static Suite *
router_suite(void)
{
	Suite *s = suite_create("router");
	TCase *tc;

	tc = tcase_create("table");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_loop_test(tc, test_match_valid, 0, sizeof(valid) / sizeof(valid[0]));
	tcase_add_loop_test(tc, test_match_invalid, 0, sizeof(invalid) / sizeof(invalid[0]));
	tcase_add_test(tc, test_capture_copied);
	tcase_add_test(tc, test_empty_table);
	suite_add_tcase(s, tc);

	tc = tcase_create("routes");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_normalise);
	tcase_add_test(tc, test_routes_unique);
	tcase_add_test(tc, test_routes_shape);
	tcase_add_test(tc, test_routes_reachable);
	tcase_add_test(tc, test_routes_health);
	tcase_add_test(tc, test_header_missing);
	tcase_add_test(tc, test_routes_idem_required);
	tcase_add_test(tc, test_routes_tokens);
	tcase_add_test(tc, test_routes_client_id_rule);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tcheck_run(router_suite());
}
