/*
 * lib/http.c: CGI parameters to struct http_req through a fake parameter
 * getter; method, path and query decoding, CONTENT_LENGTH, REQUEST_ID,
 * header fields; and the status texts.
 */
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "core/arena.h"
#include "core/errors.h"
#include "core/http.h"
#include "tarena.h"
#include "tcheck.h"

#define LIMIT 1024	/* body limit used by the cases */
#define MAXP 12		/* name/value pairs per case */
#define MAXQ 6		/* query pairs per case */

/* The fake FastCGI environment: name/value pairs ending with a NULL name. */
struct env {
	const char *kv[MAXP][2];
};

static const char *
get_param(void *ctx, const char *name)
{
	const struct env *e = ctx;

	for (size_t i = 0; i < MAXP && e->kv[i][0] != NULL; i++)
		if (strcmp(e->kv[i][0], name) == 0)
			return e->kv[i][1];
	return NULL;
}

#define GET(u)	{ "REQUEST_METHOD", "GET" }, { "REQUEST_URI", u }

/* Requests that parse: every decoded field is checked. */
static const struct {
	struct env	 env;
	enum http_method method;
	const char	*method_str;
	const char	*path;
	const char	*query_raw;
	size_t		 nquery;
	const char	*q[MAXQ][2];
	long long	 content_length;
} valid[] = {
	/* methods */
	{ { { GET("/v1/x") } }, M_GET, "GET", "/v1/x", NULL, 0, { { NULL } }, -1 },
	{ { { { "REQUEST_METHOD", "POST" }, { "REQUEST_URI", "/v1/x" } } },
	    M_POST, "POST", "/v1/x", NULL, 0, { { NULL } }, -1 },
	{ { { { "REQUEST_METHOD", "PUT" }, { "REQUEST_URI", "/v1/x" } } },
	    M_PUT, "PUT", "/v1/x", NULL, 0, { { NULL } }, -1 },
	{ { { { "REQUEST_METHOD", "PATCH" }, { "REQUEST_URI", "/v1/x" } } },
	    M_PATCH, "PATCH", "/v1/x", NULL, 0, { { NULL } }, -1 },
	{ { { { "REQUEST_METHOD", "DELETE" }, { "REQUEST_URI", "/v1/x" } } },
	    M_DELETE, "DELETE", "/v1/x", NULL, 0, { { NULL } }, -1 },
	/* HEAD is GET without the body (head set, checked below) */
	{ { { { "REQUEST_METHOD", "HEAD" }, { "REQUEST_URI", "/v1/x" } } },
	    M_GET, "HEAD", "/v1/x", NULL, 0, { { NULL } }, -1 },
	{ { { { "REQUEST_METHOD", "OPTIONS" }, { "REQUEST_URI", "/v1/x" } } },
	    M__MAX, "OPTIONS", "/v1/x", NULL, 0, { { NULL } }, -1 },
	{ { { { "REQUEST_METHOD", "get" }, { "REQUEST_URI", "/v1/x" } } },
	    M__MAX, "get", "/v1/x", NULL, 0, { { NULL } }, -1 },
	{ { { { "REQUEST_METHOD", "GETX" }, { "REQUEST_URI", "/v1/x" } } },
	    M__MAX, "GETX", "/v1/x", NULL, 0, { { NULL } }, -1 },
	{ { { { "REQUEST_METHOD", "" }, { "REQUEST_URI", "/v1/x" } } },
	    M__MAX, "", "/v1/x", NULL, 0, { { NULL } }, -1 },
	{ { { { "REQUEST_URI", "/v1/x" } } },
	    M__MAX, NULL, "/v1/x", NULL, 0, { { NULL } }, -1 },

	/* path decoding */
	{ { { GET("/") } }, M_GET, "GET", "/", NULL, 0, { { NULL } }, -1 },
	{ { { GET("/v1/a%2Fb") } }, M_GET, "GET", "/v1/a/b", NULL, 0, { { NULL } }, -1 },
	{ { { GET("/v1/a%2fb") } }, M_GET, "GET", "/v1/a/b", NULL, 0, { { NULL } }, -1 },
	{ { { GET("/v1/a%20b") } }, M_GET, "GET", "/v1/a b", NULL, 0, { { NULL } }, -1 },
	{ { { GET("/v1/a+b") } }, M_GET, "GET", "/v1/a+b", NULL, 0, { { NULL } }, -1 },
	{ { { GET("/v1/%41%42c") } }, M_GET, "GET", "/v1/ABc", NULL, 0, { { NULL } }, -1 },
	{ { { GET("/v1/%25") } }, M_GET, "GET", "/v1/%", NULL, 0, { { NULL } }, -1 },
	{ { { GET("/v1/%3F") } }, M_GET, "GET", "/v1/?", NULL, 0, { { NULL } }, -1 },
	{ { { GET("/v1/%C3%A9") } }, M_GET, "GET", "/v1/\xc3\xa9", NULL, 0, { { NULL } }, -1 },
	{ { { GET("/v1/%e2%82%ac") } }, M_GET, "GET", "/v1/\xe2\x82\xac", NULL, 0, { { NULL } }, -1 },
	{ { { GET("/v1/%f0%9f%98%80") } }, M_GET, "GET", "/v1/\xf0\x9f\x98\x80", NULL, 0, { { NULL } }, -1 },
	{ { { GET("/v1/\xc3\xa9") } }, M_GET, "GET", "/v1/\xc3\xa9", NULL, 0, { { NULL } }, -1 },
	{ { { GET("/v1//x/") } }, M_GET, "GET", "/v1//x/", NULL, 0, { { NULL } }, -1 },
	/* DOCUMENT_URI when REQUEST_URI is absent or empty */
	{ { { { "REQUEST_METHOD", "GET" }, { "DOCUMENT_URI", "/v1/doc" },
	    { "QUERY_STRING", "a=1" } } },
	    M_GET, "GET", "/v1/doc", "a=1", 1, { { "a", "1" } }, -1 },
	{ { { { "REQUEST_METHOD", "GET" }, { "REQUEST_URI", "" },
	    { "DOCUMENT_URI", "/v1/doc" } } },
	    M_GET, "GET", "/v1/doc", NULL, 0, { { NULL } }, -1 },

	/* query parsing: the URI's query wins over QUERY_STRING */
	{ { { GET("/v1/x?b=2&a=1&c=3") } }, M_GET, "GET", "/v1/x", "b=2&a=1&c=3", 3,
	    { { "b", "2" }, { "a", "1" }, { "c", "3" } }, -1 },
	{ { { GET("/v1/x?a=1"), { "QUERY_STRING", "z=9" } } }, M_GET, "GET", "/v1/x", "a=1", 1,
	    { { "a", "1" } }, -1 },
	{ { { GET("/v1/x"), { "QUERY_STRING", "z=9&y" } } }, M_GET, "GET", "/v1/x", "z=9&y", 2,
	    { { "z", "9" }, { "y", "" } }, -1 },
	{ { { GET("/v1/x?") } }, M_GET, "GET", "/v1/x", "", 0, { { NULL } }, -1 },
	{ { { GET("/v1/x?a=1&a=2&a=") } }, M_GET, "GET", "/v1/x", "a=1&a=2&a=", 3,
	    { { "a", "1" }, { "a", "2" }, { "a", "" } }, -1 },
	{ { { GET("/v1/x?q=a+b%20c%2B") } }, M_GET, "GET", "/v1/x", "q=a+b%20c%2B", 1,
	    { { "q", "a b c+" } }, -1 },
	{ { { GET("/v1/x?a+b=c+d") } }, M_GET, "GET", "/v1/x", "a+b=c+d", 1,
	    { { "a b", "c d" } }, -1 },
	{ { { GET("/v1/x?&&a=1&&b=2&") } }, M_GET, "GET", "/v1/x", "&&a=1&&b=2&", 2,
	    { { "a", "1" }, { "b", "2" } }, -1 },
	{ { { GET("/v1/x?&") } }, M_GET, "GET", "/v1/x", "&", 0, { { NULL } }, -1 },
	{ { { GET("/v1/x?flag&k=v") } }, M_GET, "GET", "/v1/x", "flag&k=v", 2,
	    { { "flag", "" }, { "k", "v" } }, -1 },
	{ { { GET("/v1/x?a=b=c") } }, M_GET, "GET", "/v1/x", "a=b=c", 1,
	    { { "a", "b=c" } }, -1 },
	{ { { GET("/v1/x?a%3Db=c%26d") } }, M_GET, "GET", "/v1/x", "a%3Db=c%26d", 1,
	    { { "a=b", "c&d" } }, -1 },
	{ { { GET("/v1/x?cursor=abc-_123&limit=10") } }, M_GET, "GET", "/v1/x",
	    "cursor=abc-_123&limit=10", 2, { { "cursor", "abc-_123" }, { "limit", "10" } }, -1 },
	{ { { GET("/v1/x?n=%C3%A9") } }, M_GET, "GET", "/v1/x", "n=%C3%A9", 1,
	    { { "n", "\xc3\xa9" } }, -1 },
	{ { { GET("/v1/x?a=?b") } }, M_GET, "GET", "/v1/x", "a=?b", 1,
	    { { "a", "?b" } }, -1 },
	{ { { GET("/v1/a%2Fb?p=%2F") } }, M_GET, "GET", "/v1/a/b", "p=%2F", 1,
	    { { "p", "/" } }, -1 },

	/* CONTENT_LENGTH */
	{ { { GET("/v1/x"), { "CONTENT_LENGTH", "" } } }, M_GET, "GET", "/v1/x", NULL, 0,
	    { { NULL } }, -1 },
	{ { { GET("/v1/x"), { "CONTENT_LENGTH", "0" } } }, M_GET, "GET", "/v1/x", NULL, 0,
	    { { NULL } }, 0 },
	{ { { GET("/v1/x"), { "CONTENT_LENGTH", "17" } } }, M_GET, "GET", "/v1/x", NULL, 0,
	    { { NULL } }, 17 },
	{ { { GET("/v1/x"), { "CONTENT_LENGTH", "1024" } } }, M_GET, "GET", "/v1/x", NULL, 0,
	    { { NULL } }, LIMIT },
	{ { { GET("/v1/x"), { "CONTENT_LENGTH", "0001024" } } }, M_GET, "GET", "/v1/x", NULL, 0,
	    { { NULL } }, LIMIT },
};

/*
 * The same case through the getter (http_parse_params) or through a
 * FastCGI environment array read in one pass (http_parse_env).
 */
static enum http_parse
parse_case(struct http_req *h, const struct env *e, int via_env)
{
	const char *envp[MAXP + 1];
	size_t n = 0;

	if (!via_env)
		return http_parse_params(&a, h, get_param, (void *)e, LIMIT);
	for (size_t i = 0; i < MAXP && e->kv[i][0] != NULL; i++)
		if (e->kv[i][1] != NULL)
			envp[n++] = arena_printf(&a, "%s=%s", e->kv[i][0], e->kv[i][1]);
	envp[n] = NULL;
	return http_parse_env(&a, h, envp, LIMIT);
}

static void
check_valid(int i, int via_env)
{
	struct http_req h;
	enum http_parse rc;

	memset(&h, 0xa5, sizeof(h));
	rc = parse_case(&h, &valid[i].env, via_env);
	ck_assert_int_eq(rc, HTTP_PARSE_OK);
	ck_assert_int_eq(h.method, valid[i].method);
	if (valid[i].method_str == NULL)
		ck_assert_ptr_null(h.method_str);
	else
		ck_assert_str_eq(h.method_str, valid[i].method_str);
	ck_assert_int_eq(h.head, valid[i].method_str != NULL &&
	    strcmp(valid[i].method_str, "HEAD") == 0);
	ck_assert_str_eq(h.path, valid[i].path);
	if (valid[i].query_raw == NULL)
		ck_assert_ptr_null(h.query_raw);
	else
		ck_assert_str_eq(h.query_raw, valid[i].query_raw);
	ck_assert_uint_eq(h.nquery, valid[i].nquery);
	for (size_t k = 0; k < valid[i].nquery; k++) {
		ck_assert_str_eq(h.query[k].key, valid[i].q[k][0]);
		ck_assert_str_eq(h.query[k].val, valid[i].q[k][1]);
	}
	if (valid[i].nquery > 0)
		ck_assert_str_eq(http_query_get(&h, valid[i].q[0][0]), valid[i].q[0][1]);
	ck_assert_ptr_null(http_query_get(&h, "no-such-key"));
	ck_assert_int_eq(h.content_length, valid[i].content_length);
	ck_assert_ptr_null(h.body);
	ck_assert_uint_eq(h.body_len, 0);
	/* no header given: all NULL */
	ck_assert_ptr_null(h.authorization);
	ck_assert_ptr_null(h.host_env);
}

START_TEST(test_parse_valid)
{
	check_valid(_i, 0);
}
END_TEST

START_TEST(test_parse_valid_env)
{
	check_valid(_i, 1);
}
END_TEST

/* Requests refused before routing. */
static const struct {
	struct env	 env;
	enum http_parse	 rc;
	long long	 content_length;	/* as far as it was read */
} invalid[] = {
	/* no usable URI */
	{ { { { "REQUEST_METHOD", "GET" } } }, HTTP_PARSE_BAD, -1 },
	{ { { GET("") } }, HTTP_PARSE_BAD, -1 },
	{ { { GET("v1/x") } }, HTTP_PARSE_BAD, -1 },
	{ { { GET("http://h/v1/x") } }, HTTP_PARSE_BAD, -1 },
	{ { { GET("?a=1") } }, HTTP_PARSE_BAD, -1 },
	{ { { { "REQUEST_METHOD", "GET" }, { "DOCUMENT_URI", "x" } } }, HTTP_PARSE_BAD, -1 },
	/* bad escapes and bytes in the path */
	{ { { GET("/v1/%zz") } }, HTTP_PARSE_BAD, -1 },
	{ { { GET("/v1/%g0") } }, HTTP_PARSE_BAD, -1 },
	{ { { GET("/v1/%00") } }, HTTP_PARSE_BAD, -1 },
	{ { { GET("/v1/a%00b") } }, HTTP_PARSE_BAD, -1 },
	{ { { GET("/v1/%4") } }, HTTP_PARSE_BAD, -1 },
	{ { { GET("/v1/%") } }, HTTP_PARSE_BAD, -1 },
	{ { { GET("/v1/%4?a=1") } }, HTTP_PARSE_BAD, -1 },
	{ { { GET("/v1/%ff") } }, HTTP_PARSE_BAD, -1 },
	{ { { GET("/v1/%c3") } }, HTTP_PARSE_BAD, -1 },
	{ { { GET("/v1/%c3%28") } }, HTTP_PARSE_BAD, -1 },
	{ { { GET("/v1/%c0%af") } }, HTTP_PARSE_BAD, -1 },
	{ { { GET("/v1/%e0%80%af") } }, HTTP_PARSE_BAD, -1 },
	{ { { GET("/v1/%ed%a0%80") } }, HTTP_PARSE_BAD, -1 },
	{ { { GET("/v1/%f4%90%80%80") } }, HTTP_PARSE_BAD, -1 },
	{ { { GET("/v1/%80") } }, HTTP_PARSE_BAD, -1 },
	{ { { GET("/v1/\xff") } }, HTTP_PARSE_BAD, -1 },
	{ { { GET("/v1/\xc0\xaf") } }, HTTP_PARSE_BAD, -1 },
	/* bad query strings */
	{ { { GET("/v1/x?a=%zz") } }, HTTP_PARSE_BAD, -1 },
	{ { { GET("/v1/x?%zz=1") } }, HTTP_PARSE_BAD, -1 },
	{ { { GET("/v1/x?a=%4") } }, HTTP_PARSE_BAD, -1 },
	{ { { GET("/v1/x?a=%") } }, HTTP_PARSE_BAD, -1 },
	{ { { GET("/v1/x?a=%00") } }, HTTP_PARSE_BAD, -1 },
	{ { { GET("/v1/x?a=%ff") } }, HTTP_PARSE_BAD, -1 },
	{ { { GET("/v1/x?a=%c0%af") } }, HTTP_PARSE_BAD, -1 },
	{ { { GET("/v1/x?=v") } }, HTTP_PARSE_BAD, -1 },
	{ { { GET("/v1/x?a=1&=2") } }, HTTP_PARSE_BAD, -1 },
	{ { { GET("/v1/x?=") } }, HTTP_PARSE_BAD, -1 },
	{ { { GET("/v1/x"), { "QUERY_STRING", "a=%zz" } } }, HTTP_PARSE_BAD, -1 },
	/* CONTENT_LENGTH */
	{ { { GET("/v1/x"), { "CONTENT_LENGTH", "1025" } } }, HTTP_PARSE_TOO_LARGE, 1025 },
	{ { { GET("/v1/x"), { "CONTENT_LENGTH", "9223372036854775807" } } },
	    HTTP_PARSE_TOO_LARGE, 9223372036854775807LL },
	{ { { GET("/v1/x"), { "CONTENT_LENGTH", "9223372036854775808" } } }, HTTP_PARSE_BAD, -1 },
	{ { { GET("/v1/x"), { "CONTENT_LENGTH", "99999999999999999999999" } } }, HTTP_PARSE_BAD, -1 },
	{ { { GET("/v1/x"), { "CONTENT_LENGTH", "-1" } } }, HTTP_PARSE_BAD, -1 },
	{ { { GET("/v1/x"), { "CONTENT_LENGTH", "-0" } } }, HTTP_PARSE_BAD, -1 },
	{ { { GET("/v1/x"), { "CONTENT_LENGTH", "+5" } } }, HTTP_PARSE_BAD, -1 },
	{ { { GET("/v1/x"), { "CONTENT_LENGTH", " 5" } } }, HTTP_PARSE_BAD, -1 },
	{ { { GET("/v1/x"), { "CONTENT_LENGTH", "5 " } } }, HTTP_PARSE_BAD, -1 },
	{ { { GET("/v1/x"), { "CONTENT_LENGTH", "12a" } } }, HTTP_PARSE_BAD, -1 },
	{ { { GET("/v1/x"), { "CONTENT_LENGTH", "abc" } } }, HTTP_PARSE_BAD, -1 },
	{ { { GET("/v1/x"), { "CONTENT_LENGTH", "0x10" } } }, HTTP_PARSE_BAD, -1 },
	{ { { GET("/v1/x"), { "CONTENT_LENGTH", "1e3" } } }, HTTP_PARSE_BAD, -1 },
	/* the length is checked before the path: 413 even with a bad URI */
	{ { { GET("/v1/%zz"), { "CONTENT_LENGTH", "4096" } } }, HTTP_PARSE_TOO_LARGE, 4096 },
	/* header fields must be UTF-8 text */
	{ { { GET("/v1/x"), { "HTTP_AUTHORIZATION", "Bearer \xff" } } }, HTTP_PARSE_BAD, -1 },
	{ { { GET("/v1/x"), { "HTTP_IDEMPOTENCY_KEY", "k\xc0\xaf" } } }, HTTP_PARSE_BAD, -1 },
	{ { { GET("/v1/x"), { "HTTP_X_CLIENT_USER_ID", "u\xed\xa0\x80" } } }, HTTP_PARSE_BAD, -1 },
};

static void
check_invalid(int i, int via_env)
{
	struct http_req h;
	enum http_parse rc;

	rc = parse_case(&h, &invalid[i].env, via_env);
	ck_assert_int_eq(rc, invalid[i].rc);
	ck_assert_int_eq(h.content_length, invalid[i].content_length);
	/* The error envelope needs a request id even for a refused request. */
	ck_assert_ptr_nonnull(h.request_id);
	ck_assert_uint_eq(strlen(h.request_id), 32);
}

START_TEST(test_parse_invalid)
{
	check_invalid(_i, 0);
}
END_TEST

START_TEST(test_parse_invalid_env)
{
	check_invalid(_i, 1);
}
END_TEST

/* REQUEST_ID: passed through when short printable ASCII, else generated. */
static const struct {
	const char	*rid;		/* NULL: absent */
	int		 kept;
} rids[] = {
	{ "abc-123", 1 },
	{ "0123456789abcdef0123456789abcdef", 1 },
	{ "a b~!@#$%^&*()", 1 },
	{ "x", 1 },
	/* 64 characters: the longest kept */
	{ "0123456789012345678901234567890123456789012345678901234567890123", 1 },
	{ NULL, 0 },
	{ "", 0 },
	/* 65 characters */
	{ "01234567890123456789012345678901234567890123456789012345678901234", 0 },
	{ "a\x01" "b", 0 },
	{ "a\tb", 0 },
	{ "a\nb", 0 },
	{ "a\x7f", 0 },
	{ "\xc3\xa9t\xc3\xa9", 0 },
	{ "\xff", 0 },
};

static int
is_hex32(const char *s)
{
	size_t i;

	for (i = 0; s[i] != '\0'; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return 0;
	return i == 32;
}

START_TEST(test_request_id)
{
	struct env e = { { GET("/v1/x"), { "REQUEST_ID", rids[_i].rid } } };
	struct http_req h, h2;

	if (rids[_i].rid == NULL)
		e.kv[2][0] = NULL;
	ck_assert_int_eq(http_parse_params(&a, &h, get_param, &e, LIMIT), HTTP_PARSE_OK);
	if (rids[_i].kept) {
		ck_assert_str_eq(h.request_id, rids[_i].rid);
		/* a copy, not the caller's buffer */
		ck_assert_ptr_ne(h.request_id, rids[_i].rid);
		return;
	}
	ck_assert_msg(is_hex32(h.request_id), "generated id %s", h.request_id);
	/* generated ids are random */
	ck_assert_int_eq(http_parse_params(&a, &h2, get_param, &e, LIMIT), HTTP_PARSE_OK);
	ck_assert(is_hex32(h2.request_id));
	ck_assert_str_ne(h.request_id, h2.request_id);
}
END_TEST

/* Header fields and other parameters land in their fields, copied. */
START_TEST(test_header_fields)
{
	static const struct env e = { {
		{ "REQUEST_METHOD", "POST" },
		{ "REQUEST_URI", "/v1/links?x=1" },
		{ "BDS_HOST_ENV", "sandbox" },
		{ "REMOTE_ADDR", "192.0.2.7" },
		{ "HTTP_AUTHORIZATION", "Bearer bds_sandbox_abc" },
		{ "HTTP_IDEMPOTENCY_KEY", "idem-\xc3\xa9" },
		{ "HTTP_X_CLIENT_USER_ID", "user 1" },
		{ "CONTENT_TYPE", "application/json; charset=utf-8" },
		{ "HTTP_COOKIE", "a=b; c=d" },
		{ "CONTENT_LENGTH", "2" },
		{ "REQUEST_ID", "rid-7" },
	} };
	struct http_req h;

	ck_assert_int_eq(http_parse_params(&a, &h, get_param, (void *)&e, LIMIT), HTTP_PARSE_OK);
	ck_assert_int_eq(h.method, M_POST);
	ck_assert_str_eq(h.path, "/v1/links");
	ck_assert_str_eq(h.host_env, "sandbox");
	ck_assert_str_eq(h.remote_addr, "192.0.2.7");
	ck_assert_str_eq(h.authorization, "Bearer bds_sandbox_abc");
	ck_assert_str_eq(h.idempotency_key, "idem-\xc3\xa9");
	ck_assert_str_eq(h.client_user_id, "user 1");
	ck_assert_str_eq(h.content_type, "application/json; charset=utf-8");
	ck_assert_str_eq(h.cookie, "a=b; c=d");
	ck_assert_int_eq(h.content_length, 2);
	ck_assert_str_eq(h.request_id, "rid-7");
	ck_assert_ptr_ne(h.authorization, e.kv[4][1]);
	ck_assert_ptr_ne(h.path, e.kv[1][1]);
	ck_assert_ptr_null(h.body);
}
END_TEST

/* http_pct_decode on its own: length-bounded, '+' only when asked. */
static const struct {
	const char	*in;
	size_t		 len;
	int		 plus;
	const char	*out;	/* NULL: refused */
} pct[] = {
	{ "a+b", 3, 0, "a+b" },
	{ "a+b", 3, 1, "a b" },
	{ "%2B+", 4, 1, "+ " },
	{ "abc%zz", 3, 0, "abc" },
	{ "%41%", 3, 0, "A" },
	{ "%41%", 4, 0, NULL },
	{ "", 0, 0, "" },
	{ "%7e%7E", 6, 0, "~~" },
	{ "%0a", 3, 0, "\n" },
	{ "%00", 3, 0, NULL },
	{ "%c2%a0", 6, 0, "\xc2\xa0" },
	{ "%c2", 3, 0, NULL },
	{ "%f5%80%80%80", 12, 0, NULL },
	{ "%%41", 4, 0, NULL },
	{ "%4g", 3, 0, NULL },
	{ "% 4", 3, 0, NULL },
};

START_TEST(test_pct_decode)
{
	char *s = http_pct_decode(&a, pct[_i].in, pct[_i].len, pct[_i].plus);

	if (pct[_i].out == NULL)
		ck_assert_msg(s == NULL, "%s: decoded to \"%s\"", pct[_i].in, s);
	else
		ck_assert_str_eq(s, pct[_i].out);
}
END_TEST

START_TEST(test_query_parse_empty)
{
	struct http_kv *kv = (void *)1;
	size_t n = 7;

	ck_assert_int_eq(http_query_parse(&a, NULL, &kv, &n), 0);
	ck_assert_ptr_null(kv);
	ck_assert_uint_eq(n, 0);
	ck_assert_int_eq(http_query_parse(&a, "", &kv, &n), 0);
	ck_assert_ptr_null(kv);
	ck_assert_uint_eq(n, 0);
	ck_assert_int_eq(http_query_parse(&a, "=x", &kv, &n), -1);
}
END_TEST

/* A cursor that is not text is kept as "%" (it opens as no cursor: 400
 * INVALID_CURSOR); any other parameter that is not text fails the query. */
START_TEST(test_query_parse_opaque_cursor)
{
	struct http_kv *kv;
	size_t n;

	ck_assert_int_eq(http_query_parse(&a, "limit=5&cursor=%ff%00x", &kv, &n), 0);
	ck_assert_uint_eq(n, 2);
	ck_assert_str_eq(kv[1].key, "cursor");
	ck_assert_str_eq(kv[1].val, "%");
	ck_assert_int_eq(http_query_parse(&a, "cursor=%zz", &kv, &n), 0);
	ck_assert_str_eq(kv[0].val, "%");
	ck_assert_int_eq(http_query_parse(&a, "cursors=%ff", &kv, &n), -1);
	ck_assert_int_eq(http_query_parse(&a, "limit=%ff&cursor=x", &kv, &n), -1);
}
END_TEST

/* Method names round-trip in enum order; anything else is M__MAX. */
START_TEST(test_methods)
{
	static const char *const names[M__MAX] = { "GET", "POST", "PUT", "PATCH", "DELETE" };

	for (int m = 0; m < M__MAX; m++) {
		ck_assert_str_eq(http_method_name((enum http_method)m), names[m]);
		ck_assert_int_eq(http_method_parse(names[m]), m);
	}
	ck_assert_str_eq(http_method_name(M__MAX), "OTHER");
	ck_assert_int_eq(http_method_parse(NULL), M__MAX);
	ck_assert_int_eq(http_method_parse("OTHER"), M__MAX);
	ck_assert_int_eq(http_method_parse("Get"), M__MAX);
}
END_TEST

/* Every status errors_default_code knows, and the success ones, has a text. */
static const struct {
	int		 status;
	const char	*text;
} texts[] = {
	{ 200, "OK" },
	{ 201, "Created" },
	{ 202, "Accepted" },
	{ 204, "No Content" },
	{ 400, "Bad Request" },
	{ 401, "Unauthorized" },
	{ 403, "Forbidden" },
	{ 404, "Not Found" },
	{ 405, "Method Not Allowed" },
	{ 409, "Conflict" },
	{ 410, "Gone" },
	{ 413, "Payload Too Large" },
	{ 415, "Unsupported Media Type" },
	{ 422, "Unprocessable Entity" },
	{ 429, "Too Many Requests" },
	{ 500, "Internal Server Error" },
	{ 501, "Not Implemented" },
	{ 502, "Bad Gateway" },
	{ 503, "Service Unavailable" },
	{ 504, "Gateway Timeout" },
	{ 418, "Unknown" },
	{ 0, "Unknown" },
	{ -1, "Unknown" },
};

START_TEST(test_status_text)
{
	ck_assert_str_eq(http_status_text(texts[_i].status), texts[_i].text);
}
END_TEST

/* A status with its own default error code must have a real text. */
START_TEST(test_status_text_covers_codes)
{
	for (int st = 400; st < 600; st++) {
		const char *code = errors_default_code(st);

		if (strcmp(code, "BAD_REQUEST") == 0 || strcmp(code, "INTERNAL_ERROR") == 0)
			continue;
		ck_assert_msg(strcmp(http_status_text(st), "Unknown") != 0,
		    "%d (%s) has no status text", st, code);
	}
	ck_assert_str_ne(http_status_text(500), "Unknown");
}
END_TEST

static Suite *
http_suite(void)
{
	Suite *s = suite_create("http");
	TCase *tc;

	tc = tcase_create("parse");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_loop_test(tc, test_parse_valid, 0, sizeof(valid) / sizeof(valid[0]));
	tcase_add_loop_test(tc, test_parse_invalid, 0, sizeof(invalid) / sizeof(invalid[0]));
	tcase_add_loop_test(tc, test_parse_valid_env, 0, sizeof(valid) / sizeof(valid[0]));
	tcase_add_loop_test(tc, test_parse_invalid_env, 0, sizeof(invalid) / sizeof(invalid[0]));
	tcase_add_loop_test(tc, test_request_id, 0, sizeof(rids) / sizeof(rids[0]));
	tcase_add_test(tc, test_header_fields);
	tcase_add_loop_test(tc, test_pct_decode, 0, sizeof(pct) / sizeof(pct[0]));
	tcase_add_test(tc, test_query_parse_empty);
	tcase_add_test(tc, test_query_parse_opaque_cursor);
	suite_add_tcase(s, tc);

	tc = tcase_create("names");
	tcase_add_test(tc, test_methods);
	tcase_add_loop_test(tc, test_status_text, 0, sizeof(texts) / sizeof(texts[0]));
	tcase_add_test(tc, test_status_text_covers_codes);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tcheck_run(http_suite());
}
