/*
 * The request path end to end, as a client sees it through nginx: health,
 * the error envelopes (404, 405, 413, 400, 429, 502), the security headers
 * and the request id. One stack for the suite (body_limit 64 KiB, a tiny
 * per-key rate limit); the test that kills bds-api runs last and restarts it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>
#include <json-c/json.h>
#include <sodium.h>

#include "devacct.h"
#include "harness.h"

#define APP_BODY_LIMIT	65536

static const char *const json_ct[] = { "Content-Type: application/json", NULL };

static void
setup(void)
{
	struct harness_opts o;

	harness_opts_defaults(&o);
	o.workers = 2;
	o.body_limit = APP_BODY_LIMIT;
	o.rate_key = "1r/s";		/* only requests carrying Authorization */
	o.burst_key = "1";
	harness_fixture_start(&o);
}

/* A JSON object of exactly len bytes: {"a":"xxx...x"}. */
static char *
json_of_size(size_t len)
{
	char *s = malloc(len + 1);

	ck_assert_ptr_nonnull(s);
	ck_assert_uint_ge(len, 8);
	memset(s, 'x', len);
	memcpy(s, "{\"a\":\"", 6);
	memcpy(s + len - 2, "\"}", 2);
	s[len] = '\0';
	return s;
}

/* ------------------------------------------------------------------ */

static const char *const all_hosts[] = { "api", "sandbox" };

START_TEST(health_ok)
{
	struct harness_resp *r = harness_get(all_hosts[_i], "/v1/health");

	harness_assert_status(r, 200);
	harness_assert_common(r);
	ck_assert_pstr_eq(harness_json_string(r, "status"), "ok");
	ck_assert_pstr_eq(harness_json_string(r, "database"), "ok");
	harness_resp_free(r);
}
END_TEST

START_TEST(health_live_ok)
{
	struct harness_resp *r = harness_get("api", "/v1/health/live");

	harness_assert_status(r, 200);
	harness_assert_common(r);
	ck_assert_pstr_eq(harness_json_string(r, "status"), "ok");
	harness_resp_free(r);
}
END_TEST

/*
 * The link host serves its pages and the connect-session routes only:
 * every other /v1 path (and the JWKS) is nginx's 404 envelope there, while
 * the same path on the api host reaches the app.
 */
static const struct {
	const char	*method;
	const char	*path;
	long		 api_status;	/* the same request on the api host */
} link_closed[] = {
	{ "GET",	"/v1/health",			200 },
	{ "GET",	"/v1/health/live",		200 },
	{ "GET",	"/v1/identity",			401 },
	{ "GET",	"/v1/webhook-endpoints",	401 },
	{ "POST",	"/v1/iam/auth/signin",		400 },
	{ "GET",	"/v1/link-sessionsx",		404 },
	{ "GET",	"/v1/x/link-sessions",		404 },
	{ "GET",	"/.well-known/jwks.json",	200 },
};

START_TEST(link_host_closed)
{
	struct harness_resp *r = harness_request(link_closed[_i].method, "link",
	    link_closed[_i].path, json_ct, "{}", 2);

	harness_assert_coded(r, 404, "NOT_FOUND");
	harness_resp_free(r);
	r = harness_request(link_closed[_i].method, "api", link_closed[_i].path,
	    json_ct, "{}", 2);
	harness_assert_status(r, link_closed[_i].api_status);
	harness_resp_free(r);
}
END_TEST

/*
 * The connect-session routes reach the app on the link host: the app's own
 * answers (GET on the create route is its 405 naming POST; current without
 * a session is its 401 INVALID_SESSION), never nginx's 404 envelope.
 */
START_TEST(link_host_sessions_reach_app)
{
	struct harness_resp *r = harness_get("link", "/v1/link-sessions");

	harness_assert_coded(r, 405, "METHOD_NOT_ALLOWED");
	ck_assert_ptr_nonnull(strstr(harness_json_string(r, "error_message"), "allowed: POST"));
	harness_resp_free(r);
	r = harness_get("link", "/v1/link-sessions/current");
	harness_assert_coded(r, 401, "INVALID_SESSION");
	harness_resp_free(r);
}
END_TEST

/* Unknown /v1 paths: the app's 404 (the iam envelope under /v1/iam). */
static const struct {
	const char	*host;
	const char	*path;
	int		 iam;
} unknown_v1[] = {
	{ "api",	"/v1/nope",		0 },
	{ "api",	"/v1/health/x/y",	0 },
	{ "api",	"/v1/",			0 },
	{ "api",	"/v1/health/",		0 },
	{ "api",	"/v1/nope?x=1",		0 },
	{ "sandbox",	"/v1/nope",		0 },
	{ "link",	"/v1/nope",		0 },
	{ "api",	"/v1/iam/nope",		1 },
	{ "api",	"/v1/iam/auth/nope",	1 },
};

START_TEST(unknown_v1_is_404)
{
	struct harness_resp *r = harness_get(unknown_v1[_i].host, unknown_v1[_i].path);

	harness_assert_coded(r, 404, "NOT_FOUND");
	if (unknown_v1[_i].iam)
		harness_assert_iam(r, 404);
	harness_resp_free(r);
}
END_TEST

/* Paths outside /v1: nginx answers 404 itself, in the same envelope. */
static const struct {
	const char	*host;
	const char	*path;
} unknown_other[] = {
	{ "api",	"/" },
	{ "api",	"/nope" },
	{ "api",	"/v1" },
	{ "api",	"/index.html" },
	{ "sandbox",	"/nope" },
	{ "link",	"/no-such-page.html" },
};

START_TEST(non_v1_is_nginx_404)
{
	struct harness_resp *r = harness_get(unknown_other[_i].host, unknown_other[_i].path);

	harness_assert_coded(r, 404, "NOT_FOUND");
	harness_resp_free(r);
}
END_TEST

/* Known path, wrong method: 405 with Allow, whatever the host. */
static const struct {
	const char	*method;
	const char	*path;
	const char	*allow;
} wrong_method[] = {
	{ "POST",	"/v1/health",		"GET" },
	{ "PUT",	"/v1/health",		"GET" },
	{ "DELETE",	"/v1/health",		"GET" },
	{ "PATCH",	"/v1/health/live",	"GET" },
};

START_TEST(wrong_method_is_405)
{
	struct harness_resp *r = harness_request(wrong_method[_i].method, "api",
	    wrong_method[_i].path, NULL, NULL, 0);

	harness_assert_coded(r, 405, "METHOD_NOT_ALLOWED");
	ck_assert_pstr_eq(harness_header(r, "Allow"), wrong_method[_i].allow);
	harness_resp_free(r);
}
END_TEST

/*
 * The app checks the body (size, UTF-8, JSON) before routing, so a bad
 * body is 400/413 on any path; a good body then meets the router (405/404).
 */
static const struct {
	const char	*path;
	const char	*body;
	long		 status;
	const char	*code;
	int		 iam;
} bodies[] = {
	{ "/v1/nope",		"{bad",				400, "INVALID_JSON", 0 },
	{ "/v1/nope",		"{\"a\":1",			400, "INVALID_JSON", 0 },
	{ "/v1/nope",		"{\"a\":1}}",			400, "INVALID_JSON", 0 },
	{ "/v1/nope",		"nul\x01l",			400, "INVALID_JSON", 0 },
	{ "/v1/health",		"{bad",				400, "INVALID_JSON", 0 },
	{ "/v1/iam/nope",	"{bad",				400, "INVALID_JSON", 1 },
	{ "/v1/nope",		"{\"a\":\"\xff\"}",		400, "INVALID_UTF8", 0 },
	{ "/v1/nope",		"{\"a\":\"\xc3\x28\"}",		400, "INVALID_UTF8", 0 },
	{ "/v1/nope",		"{\"a\":\"\xed\xa0\x80\"}",	400, "INVALID_UTF8", 0 },
	{ "/v1/health",		"{\"a\":\"\xc0\xaf\"}",		400, "INVALID_UTF8", 0 },
	{ "/v1/iam/nope",	"{\"a\":\"\xff\"}",		400, "INVALID_UTF8", 1 },
	{ "/v1/nope",		"{\"a\":\"\xc3\xa9\"}",		404, "NOT_FOUND", 0 },
	{ "/v1/health",		"{\"a\":1}",			405, "METHOD_NOT_ALLOWED", 0 },
	/* a key twice in one object, at any depth (json-c would keep the last) */
	{ "/v1/nope",		"{\"a\":1,\"a\":2}",		400, "INVALID_JSON", 0 },
	{ "/v1/health",		"{\"x\":[{\"b\":1,\"b\":1}]}",	400, "INVALID_JSON", 0 },
	{ "/v1/iam/nope",	"{\"a\":1,\"\\u0061\":2}",	400, "INVALID_JSON", 1 },
};

/* The duplicate is named in the message, so the client can find it. */
START_TEST(duplicate_key_named)
{
	static const char body[] = "{\"amount\":1,\"currency\":\"EUR\",\"amount\":2}";
	struct harness_resp *r = harness_request("POST", "api", "/v1/nope", json_ct,
	    body, sizeof(body) - 1);

	harness_assert_coded(r, 400, "INVALID_JSON");
	ck_assert_msg(strstr(harness_json_string(r, "error_message"),
	    "duplicate key \"amount\"") != NULL, "message: %s",
	    harness_json_string(r, "error_message"));
	harness_resp_free(r);
}
END_TEST

START_TEST(body_checked_before_routing)
{
	struct harness_resp *r = harness_request("POST", "api", bodies[_i].path, json_ct,
	    bodies[_i].body, strlen(bodies[_i].body));

	harness_assert_coded(r, bodies[_i].status, bodies[_i].code);
	if (bodies[_i].iam)
		harness_assert_iam(r, bodies[_i].status);
	harness_resp_free(r);
}
END_TEST

/* Sizes around the app's limit (nginx lets them all through: 1 MiB). */
static const struct {
	size_t		 len;
	long		 status;
	const char	*code;
} app_sizes[] = {
	{ APP_BODY_LIMIT,		405, "METHOD_NOT_ALLOWED" },
	{ APP_BODY_LIMIT + 1,		413, "PAYLOAD_TOO_LARGE" },
	{ 100 * 1024,			413, "PAYLOAD_TOO_LARGE" },
};

START_TEST(app_body_limit)
{
	char *body = json_of_size(app_sizes[_i].len);
	struct harness_resp *r = harness_request("POST", "api", "/v1/health", json_ct,
	    body, app_sizes[_i].len);

	harness_assert_coded(r, app_sizes[_i].status, app_sizes[_i].code);
	harness_resp_free(r);
	free(body);
}
END_TEST

/* The same straight at the app, proving the 413 is the app's own. */
START_TEST(app_body_limit_fastcgi)
{
	char *body = json_of_size(100 * 1024);
	struct harness_resp *r = harness_fcgi_request("POST", "/v1/health", json_ct, body,
	    100 * 1024);

	harness_assert_coded(r, 413, "PAYLOAD_TOO_LARGE");
	ck_assert_msg(r->fcgi_complete, "no FCGI_END_REQUEST");
	harness_resp_free(r);
	free(body);
}
END_TEST

/* Over nginx's client_max_body_size (1m): nginx's 413, never the app. */
START_TEST(nginx_body_limit)
{
	size_t len = 1536 * 1024;
	char *body = json_of_size(len);
	struct harness_resp *r = harness_request("POST", "api", "/v1/health", json_ct,
	    body, len);

	harness_assert_coded(r, 413, "PAYLOAD_TOO_LARGE");
	harness_resp_free(r);
	free(body);
}
END_TEST

/* Chunked bodies (no Content-Length from the client): nginx buffers them
 * and the app checks them exactly like the others. */
static const struct {
	size_t		 len;		/* 0: the body below */
	const char	*body;
	long		 status;
	const char	*code;
} chunked[] = {
	{ 0,			"{bad",		400, "INVALID_JSON" },
	{ 0,			"{\"a\":\"\xff\"}",	400, "INVALID_UTF8" },
	{ 0,			"{\"a\":1}",	405, "METHOD_NOT_ALLOWED" },
	{ APP_BODY_LIMIT + 1,	NULL,		413, "PAYLOAD_TOO_LARGE" },
	{ 1536 * 1024,		NULL,		413, "PAYLOAD_TOO_LARGE" },
};

START_TEST(chunked_body)
{
	static const char *const hdrs[] = {
		"Content-Type: application/json", "Transfer-Encoding: chunked", NULL
	};
	size_t len = chunked[_i].len ? chunked[_i].len : strlen(chunked[_i].body);
	char *big = chunked[_i].len ? json_of_size(len) : NULL;
	struct harness_resp *r = harness_request("POST", "api", "/v1/health", hdrs,
	    big ? big : chunked[_i].body, len);

	harness_assert_coded(r, chunked[_i].status, chunked[_i].code);
	harness_resp_free(r);
	free(big);
}
END_TEST

/* Malformed paths through nginx: 400 in the envelope (from nginx for a
 * bad escape, from the app for bytes that decode to invalid UTF-8). */
static const char *const bad_paths[] = {
	"/v1/health%zz",
	"/v1/health%4",
	"/v1/%ff",
	"/v1/%c3%28",
	"/v1/%ed%a0%80",
	"/v1/a%00b",
	"/v1/iam/%ff",
};

START_TEST(bad_path_is_400)
{
	struct harness_resp *r = harness_get("api", bad_paths[_i]);

	harness_assert_coded(r, 400, NULL);
	harness_resp_free(r);
}
END_TEST

/* The same and worse straight at the app (nginx would refuse some). */
static const char *const bad_uris[] = {
	"/v1/health%zz",
	"/v1/health%",
	"/v1/health%4",
	"/v1/%ff",
	"/v1/%c3%28",
	"/v1/%c0%af",
	"/v1/a%00b",
	"/v1/\xff",
	"/v1/health?a=%zz",
	"/v1/health?a=%ff",
};

START_TEST(bad_uri_fastcgi_is_400)
{
	struct harness_resp *r = harness_fcgi_request("GET", bad_uris[_i], NULL, NULL, 0);

	harness_assert_coded(r, 400, "INVALID_REQUEST");
	harness_resp_free(r);
}
END_TEST

/* Every response carries X-Request-Id, equal to the body's request_id
 * and different every time; the app echoes nginx's id. */
START_TEST(request_id_everywhere)
{
	static const struct {
		const char *method, *host, *path;
	} reqs[] = {
		{ "GET",	"api",		"/v1/health" },
		{ "GET",	"api",		"/v1/health" },
		{ "GET",	"sandbox",	"/v1/health/live" },
		{ "GET",	"api",		"/v1/nope" },
		{ "POST",	"api",		"/v1/health" },
		{ "GET",	"api",		"/nope" },
		{ "GET",	"link",		"/nope" },
		{ "GET",	"api",		"/v1/health%zz" },
	};
	char ids[sizeof(reqs) / sizeof(reqs[0])][128];
	size_t i, j, n = sizeof(reqs) / sizeof(reqs[0]);

	for (i = 0; i < n; i++) {
		struct harness_resp *r = harness_request(reqs[i].method, reqs[i].host,
		    reqs[i].path, NULL, NULL, 0);
		const char *hdr = harness_header(r, "X-Request-Id"), *body_id;

		ck_assert_msg(hdr != NULL && *hdr != '\0', "%s %s: no X-Request-Id",
		    reqs[i].method, reqs[i].path);
		ck_assert_msg(strlen(hdr) < sizeof(ids[i]), "X-Request-Id too long");
		/* error envelopes carry it in the body too (success bodies need not) */
		body_id = harness_json_string(r, "request_id");
		ck_assert_msg(body_id != NULL || r->status < 400,
		    "%s %s: %ld without request_id: %s", reqs[i].method, reqs[i].path,
		    r->status, r->body);
		ck_assert_msg(body_id == NULL || strcmp(body_id, hdr) == 0,
		    "%s %s: body request_id differs from X-Request-Id %s: %s",
		    reqs[i].method, reqs[i].path, hdr, r->body);
		strcpy(ids[i], hdr);
		harness_resp_free(r);
	}
	for (i = 0; i < n; i++)
		for (j = i + 1; j < n; j++)
			ck_assert_msg(strcmp(ids[i], ids[j]) != 0,
			    "requests %zu and %zu share request id %s", i, j, ids[i]);
}
END_TEST

START_TEST(request_id_passed_through)
{
	struct harness_fcgi *f = harness_fcgi_open();
	struct harness_resp *r;
	char sent[64];

	ck_assert_msg(f != NULL, "%s", harness_error());
	harness_fcgi_params_std(f, "GET", "/v1/nope", NULL, 0);
	snprintf(sent, sizeof(sent), "%s", harness_fcgi_request_id(f));
	ck_assert_int_eq(harness_fcgi_end_params(f), 0);
	ck_assert_int_eq(harness_fcgi_send_stdin(f, NULL, 0), 0);
	r = harness_fcgi_read(f, 5000);
	harness_assert_coded(r, 404, "NOT_FOUND");
	ck_assert_pstr_eq(harness_header(r, "X-Request-Id"), sent);
	harness_resp_free(r);
	harness_fcgi_close(f);
}
END_TEST

/*
 * nginx's per-key zone (1r/s, burst 1, nodelay) counts only requests that
 * carry Authorization: a burst without it all pass, a burst with the same
 * key is cut to 1 + burst and the rest get nginx's 429 envelope.
 */
#define BURST 10

START_TEST(rate_limit_per_key)
{
	static const char *const auth[] = { "Authorization: Bearer x", NULL };
	struct harness_resp *rs[BURST];
	size_t i, ok = 0, limited = 0;

	harness_request_burst(BURST, "GET", "api", "/v1/health", NULL, NULL, 0, rs);
	for (i = 0; i < BURST; i++) {
		harness_assert_status(rs[i], 200);
		harness_resp_free(rs[i]);
	}

	harness_request_burst(BURST, "GET", "api", "/v1/health", auth, NULL, 0, rs);
	for (i = 0; i < BURST; i++) {
		if (rs[i]->status == 200) {
			ok++;
		} else {
			harness_assert_coded(rs[i], 429, "RATE_LIMITED");
			ck_assert_pstr_eq(harness_header(rs[i], "Retry-After"), "1");
			limited++;
		}
		harness_resp_free(rs[i]);
	}
	ck_assert_msg(ok >= 1 && ok <= 2, "%zu of %d passed, want 1 + burst 1", ok, BURST);
	ck_assert_uint_eq(ok + limited, BURST);
}
END_TEST

/*
 * HEAD is GET without the body, through nginx: the same status and headers
 * (Content-Length of the GET body included), and no body.
 */
static const char *const head_paths[] = {
	"/v1/health/live", "/v1/health", "/v1/nope", "/v1/iam/auth/signin",
};

START_TEST(head_is_get_without_body)
{
	static const char *const same[] = {
		"Content-Type", "Content-Length", "Cache-Control", "X-Content-Type-Options",
		"Allow",
	};
	struct harness_resp *g = harness_get("api", head_paths[_i]);
	struct harness_resp *h = harness_request("HEAD", "api", head_paths[_i], NULL, NULL, 0);

	ck_assert_msg(g->status >= 200, "GET: %s", g->error);
	ck_assert_int_eq(h->status, g->status);
	ck_assert_uint_gt(g->body_len, 0);
	ck_assert_uint_eq(h->body_len, 0);
	ck_assert_pstr_eq(harness_header(h, "Content-Length"), harness_fmt("%zu", g->body_len));
	for (size_t i = 0; i < sizeof(same) / sizeof(same[0]); i++)
		ck_assert_pstr_eq(harness_header(h, same[i]), harness_header(g, same[i]));
	ck_assert_ptr_nonnull(harness_header(h, "X-Request-Id"));
	harness_resp_free(g);
	harness_resp_free(h);
}
END_TEST

/* "Basic base64(user:key)" where user may hold NULs (static buffer). */
static const char *
basic_raw(const char *user, size_t ulen, const char *key)
{
	static char out[512];
	unsigned char in[256];
	size_t klen = strlen(key), n = ulen + 1 + klen;

	ck_assert_uint_lt(n, sizeof(in));
	ck_assert_uint_lt(sodium_base64_ENCODED_LEN(n, sodium_base64_VARIANT_ORIGINAL) + 6,
	    sizeof(out));
	memcpy(in, user, ulen);
	in[ulen] = ':';
	memcpy(in + ulen + 1, key, klen);
	memcpy(out, "Basic ", 6);
	sodium_bin2base64(out + 6, sizeof(out) - 6, in, n, sodium_base64_VARIANT_ORIGINAL);
	return out;
}

/*
 * A Basic client id with a NUL or any other control character is refused
 * (401), never compared as the C string before it: "<client>\0junk" must
 * not authenticate as <client>.
 */
START_TEST(basic_auth_control_chars)
{
	static const char *const tails[] = { "\0junk", "\0", "\x01", "\n", "\t", "\x7f", "\x1f" };
	struct devacct d;
	char *key, id[160];
	struct harness_resp *r;

	devacct_legal();
	devacct_new(&d, "core-basic");
	key = devacct_key_new(&d, d.client_id, "sandbox");
	r = devacct_call("GET", "sandbox", "/v1/identity",
	    basic_raw(d.client_id, strlen(d.client_id), key), NULL, NULL);
	harness_assert_status(r, 200);
	harness_resp_free(r);
	for (size_t i = 0; i < sizeof(tails) / sizeof(tails[0]); i++) {
		size_t n = strlen(d.client_id), tl = tails[i][0] == '\0' ?
		    1 + strlen(tails[i] + 1) : strlen(tails[i]);

		memcpy(id, d.client_id, n);
		memcpy(id + n, tails[i], tl);
		r = devacct_call("GET", "sandbox", "/v1/identity", basic_raw(id, n + tl, key),
		    NULL, NULL);
		ck_assert_msg(r->status == 401, "tail %zu: %ld", i, r->status);
		harness_assert_coded(r, 401, "UNAUTHORIZED");
		harness_resp_free(r);
		/* leading, too */
		memcpy(id, tails[i], tl);
		memcpy(id + tl, d.client_id, n);
		r = devacct_call("GET", "sandbox", "/v1/identity", basic_raw(id, n + tl, key),
		    NULL, NULL);
		harness_assert_coded(r, 401, "UNAUTHORIZED");
		harness_resp_free(r);
	}
	free(key);
}
END_TEST

/* Last: with bds-api gone nginx answers 502 in the envelope; then the app
 * comes back and health is 200 again. */
START_TEST(app_down_is_502)
{
	struct harness_resp *r;

	ck_assert_msg(harness_api_kill() == 0, "%s", harness_error());
	ck_assert_msg(access(harness_socket_path(), F_OK) == -1, "socket still there");
	r = harness_get("api", "/v1/health");
	harness_assert_coded(r, 502, "BAD_GATEWAY");
	harness_resp_free(r);
	r = harness_get("sandbox", "/v1/nope");
	harness_assert_coded(r, 502, "BAD_GATEWAY");
	harness_resp_free(r);

	ck_assert_msg(harness_api_start() == 0, "%s", harness_error());
	r = harness_get("api", "/v1/health");
	harness_assert_status(r, 200);
	harness_resp_free(r);
}
END_TEST

#define N(a) ((int)(sizeof(a) / sizeof((a)[0])))

static Suite *
core_suite(void)
{
	Suite *s = suite_create("e2e_core");
	TCase *tc = tcase_create("core");

	tcase_add_unchecked_fixture(tc, setup, harness_fixture_stop);
	tcase_add_checked_fixture(tc, harness_fixture_recover, NULL);
	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, health_ok, 0, N(all_hosts));
	tcase_add_test(tc, health_live_ok);
	tcase_add_loop_test(tc, link_host_closed, 0, N(link_closed));
	tcase_add_test(tc, link_host_sessions_reach_app);
	tcase_add_loop_test(tc, unknown_v1_is_404, 0, N(unknown_v1));
	tcase_add_loop_test(tc, non_v1_is_nginx_404, 0, N(unknown_other));
	tcase_add_loop_test(tc, wrong_method_is_405, 0, N(wrong_method));
	tcase_add_loop_test(tc, body_checked_before_routing, 0, N(bodies));
	tcase_add_test(tc, duplicate_key_named);
	tcase_add_loop_test(tc, app_body_limit, 0, N(app_sizes));
	tcase_add_test(tc, app_body_limit_fastcgi);
	tcase_add_test(tc, nginx_body_limit);
	tcase_add_loop_test(tc, chunked_body, 0, N(chunked));
	tcase_add_loop_test(tc, bad_path_is_400, 0, N(bad_paths));
	tcase_add_loop_test(tc, bad_uri_fastcgi_is_400, 0, N(bad_uris));
	tcase_add_test(tc, request_id_everywhere);
	tcase_add_test(tc, request_id_passed_through);
	tcase_add_test(tc, rate_limit_per_key);
	tcase_add_loop_test(tc, head_is_get_without_body, 0, N(head_paths));
	tcase_add_test(tc, basic_auth_control_chars);
	tcase_add_test(tc, app_down_is_502);	/* last: it restarts bds-api */
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return harness_run_suite(core_suite());
}
