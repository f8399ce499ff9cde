/*
 * The error catalogue on the real stack: nginx serves its page
 * (web/docs/errors.html) at /docs/errors on the api and sandbox hosts with
 * a static page's strict headers and one anchor per catalogued code; the
 * stack's docs_url is the api host's /docs, so the docs_url of an error
 * answer (the app's, the /v1/iam one, nginx's own) opens that page at its
 * code; a call site without a hint sends the catalogue's fix.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <json-c/json.h>

#include "core/errors.h"
#include "harness.h"

#define N(x)	((int)(sizeof(x) / sizeof((x)[0])))
#define CSP	"default-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

static const char *const codes[] = {
#define CODE(code, status, meaning, fix)	code,
	ERRCODES(CODE)
#undef CODE
};

static void
setup(void)
{
	struct harness_opts o;

	harness_opts_defaults(&o);	/* docs_url NULL: the api host's /docs */
	harness_fixture_start(&o);
}

/* GET path on host: the page, 200, with the static headers. */
static struct harness_resp *
page_at(const char *host, const char *path)
{
	struct harness_resp *r = harness_get(host, path);

	ck_assert_msg(r->status == 200, "%s: %ld %s", host, r->status, r->body);
	ck_assert_pstr_eq(harness_header(r, "Content-Type"), "text/html; charset=utf-8");
	ck_assert_pstr_eq(harness_header(r, "Content-Security-Policy"), CSP);
	ck_assert_pstr_eq(harness_header(r, "X-Content-Type-Options"), "nosniff");
	ck_assert_pstr_eq(harness_header(r, "Referrer-Policy"), "no-referrer");
	ck_assert_pstr_eq(harness_header(r, "Cache-Control"), "no-cache");
	ck_assert_msg(harness_header(r, "Retry-After") == NULL, "Retry-After on a page");
	ck_assert_msg(strncmp(r->body, "<!doctype html>", 15) == 0, "%.60s", r->body);
	return r;
}

static int
has_anchor(const char *body, const char *code)
{
	return strstr(body, harness_fmt("<section id=\"%s\">", code)) != NULL;
}

static const char *const page_hosts[] = { "api", "sandbox" };

/* Every code of the catalogue has its anchor on the page, on both hosts. */
START_TEST(page_has_every_code)
{
	struct harness_resp *r = page_at(page_hosts[_i], "/docs/errors");

	ck_assert_int_eq(N(codes), ERRCODES_N);
	for (int i = 0; i < N(codes); i++)
		ck_assert_msg(has_anchor(r->body, codes[i]), "%s: no anchor for %s",
		    page_hosts[_i], codes[i]);
	ck_assert(!has_anchor(r->body, "NO_SUCH_CODE"));
	harness_resp_free(r);
}
END_TEST

/* Only that one path, and never on the link host (its 404 envelope). */
static const struct {
	const char	*host;
	const char	*path;
} not_pages[] = {
	{ "api",	"/docs/errors.html" },
	{ "api",	"/docs/errors/" },
	{ "api",	"/docs/errors/x" },
	{ "api",	"/docs/index.html" },	/* the reference is /docs/ */
	{ "sandbox",	"/docs/errorsx" },
	{ "link",	"/docs/errors" },
};

START_TEST(only_the_page)
{
	struct harness_resp *r = harness_get(not_pages[_i].host, not_pages[_i].path);

	harness_assert_coded(r, 404, ERR_NOT_FOUND);
	harness_resp_free(r);
}
END_TEST

/* Error answers of each kind: their docs_url opens the page at their code. */
static const struct {
	const char	*method;
	const char	*host;
	const char	*path;
	const char	*body;
	long		 status;
	const char	*code;
	int		 iam;
	int		 default_hint;	/* the call site gives none: the fix */
} answers[] = {
	{ "GET",  "api",     "/v1/no-such-thing", NULL, 404, ERR_NOT_FOUND, 0, 1 },
	{ "POST", "api",     "/v1/health", NULL, 405, ERR_METHOD_NOT_ALLOWED, 0, 1 },
	{ "GET",  "sandbox", "/v1/links/link_nope", NULL, 401, ERR_NEEDS_RESIGNIN, 0, 0 },
	{ "GET",  "api",     "/v1/bills", NULL, 401, ERR_UNAUTHORIZED, 0, 0 },
	{ "POST", "api",     "/v1/iam/auth/signin", "{\"email\":1}", 400,
	    ERR_VALIDATION_ERROR, 1, 1 },
	{ "GET",  "api",     "/v1/iam/nope", NULL, 404, ERR_NOT_FOUND, 1, 1 },
	/* a path that does not decode (a UTF-16 surrogate): still the /v1/iam envelope */
	{ "GET",  "api",     "/v1/iam/clients/x%ED%A0%80", NULL, 400, ERR_INVALID_REQUEST, 1, 1 },
	/* nginx's own envelope (no app): docs_url from the same base */
	{ "GET",  "api",     "/nope", NULL, 404, ERR_NOT_FOUND, 0, 0 },
	{ "GET",  "link",    "/v1/links", NULL, 404, ERR_NOT_FOUND, 0, 0 },
};

START_TEST(docs_url_resolves)
{
	const char *hdrs[] = { "Content-Type: application/json", NULL };
	const char *api = harness_base_url("api");
	const char *body = answers[_i].body, *docs, *hash;
	struct harness_resp *r, *p;
	char path[256];

	r = harness_request(answers[_i].method, answers[_i].host, answers[_i].path,
	    body ? hdrs : NULL, body, body ? strlen(body) : 0);
	harness_assert_coded(r, answers[_i].status, answers[_i].code);
	if (answers[_i].iam)
		harness_assert_iam(r, answers[_i].status);
	docs = harness_json_string(r, "docs_url");
	ck_assert_pstr_eq(docs, harness_fmt("%s/docs/errors#%s", api, answers[_i].code));
	if (answers[_i].default_hint)
		ck_assert_pstr_eq(harness_json_string(r, "hint"), errors_fix(answers[_i].code));

	/* fetched as a browser would: the api host, the path without the
	 * fragment; the fragment names an anchor of the page */
	hash = strchr(docs, '#');
	ck_assert(hash != NULL && strncmp(docs, api, strlen(api)) == 0);
	ck_assert_uint_lt((size_t)(hash - docs) - strlen(api), sizeof(path));
	snprintf(path, sizeof(path), "%.*s", (int)(hash - docs - strlen(api)), docs + strlen(api));
	ck_assert_str_eq(hash + 1, answers[_i].code);
	p = page_at("api", path);
	ck_assert_msg(has_anchor(p->body, answers[_i].code), "no anchor for %s",
	    answers[_i].code);
	harness_resp_free(p);
	harness_resp_free(r);
}
END_TEST

static Suite *
errors_suite(void)
{
	Suite *s = suite_create("e2e_errors");
	TCase *tc = tcase_create("errors");

	tcase_add_unchecked_fixture(tc, setup, harness_fixture_stop);
	tcase_add_checked_fixture(tc, harness_fixture_recover, NULL);
	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, page_has_every_code, 0, N(page_hosts));
	tcase_add_loop_test(tc, only_the_page, 0, N(not_pages));
	tcase_add_loop_test(tc, docs_url_resolves, 0, N(answers));
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return harness_run_suite(errors_suite());
}
