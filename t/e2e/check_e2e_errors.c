/*
 * The error catalogue on the real stack: nginx serves its page
 * (web/docs/errors.html) at /docs/errors on the api and sandbox hosts with
 * a static page's strict headers and one anchor per catalogued code; the
 * stack's config names no docs_url, so the default (api_url's /docs) is
 * the api host's, and the docs_url of an error answer on every host (the
 * app's, the /v1/iam one, the connect-session API's, nginx's own) opens
 * that page at its code; a call site without a hint sends the catalogue's
 * fix. The link host's other static pages, the legal texts at /legal/<kind>
 * (web/legal/), have the same headers with their stylesheet allowed.
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
#define CSP_LEGAL	"default-src 'none'; style-src 'self'; base-uri 'none'; " \
			"form-action 'none'; frame-ancestors 'none'"

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

/* GET path on host: the page, 200, with the static headers and policy csp. */
static struct harness_resp *
static_page(const char *host, const char *path, const char *csp)
{
	struct harness_resp *r = harness_get(host, path);

	ck_assert_msg(r->status == 200, "%s %s: %ld %s", host, path, r->status, r->body);
	ck_assert_pstr_eq(harness_header(r, "Content-Type"), "text/html; charset=utf-8");
	ck_assert_pstr_eq(harness_header(r, "Content-Security-Policy"), csp);
	ck_assert_pstr_eq(harness_header(r, "X-Content-Type-Options"), "nosniff");
	ck_assert_pstr_eq(harness_header(r, "Referrer-Policy"), "no-referrer");
	ck_assert_pstr_eq(harness_header(r, "Cache-Control"), "no-cache");
	ck_assert_msg(harness_header(r, "Retry-After") == NULL, "Retry-After on a page");
	ck_assert_msg(strncmp(r->body, "<!doctype html>", 15) == 0, "%.60s", r->body);
	return r;
}

static struct harness_resp *
page_at(const char *host, const char *path)
{
	return static_page(host, path, CSP);
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
	/* the legal texts: /legal/<kind> on the link host only */
	{ "link",	"/legal/terms.html" },
	{ "link",	"/legal/" },
	{ "link",	"/legal" },
	{ "link",	"/legal/nope" },
	{ "link",	"/legal/Terms" },
	{ "link",	"/legal/terms/" },
	{ "link",	"/legal/.terms" },
	{ "link",	"/legal/legal" },
	{ "api",	"/legal/terms" },
	{ "sandbox",	"/legal/privacy" },
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
	{ "GET",  "sandbox", "/nope", NULL, 404, ERR_NOT_FOUND, 0, 0 },
	{ "GET",  "link",    "/legal/nope", NULL, 404, ERR_NOT_FOUND, 0, 0 },
	/* the app on the link host: the connect-session API */
	{ "GET",  "link",    "/v1/link-sessions/current", NULL, 401, ERR_INVALID_SESSION, 0, 0 },
	{ "POST", "link",    "/v1/link-sessions", "{\"ticket\":\"nope\"}", 400,
	    ERR_INVALID_TICKET, 0, 0 },
	/* /v1/iam on the sandbox host */
	{ "GET",  "sandbox", "/v1/iam/auth/me", NULL, 401, ERR_UNAUTHORIZED, 1, 0 },
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

/*
 * The legal texts on the link host: each page the legal-documents answer
 * can name (its url, check_e2e_accounts_signup) and the end-user notice
 * the connect page links, under the static headers, with a title, a
 * heading and a way to write to someone; their one stylesheet.
 */
static const char *const legal_pages[] = {
	"/legal/terms", "/legal/privacy", "/legal/dpa", "/legal/end-user-privacy",
};

START_TEST(legal_pages_served)
{
	struct harness_resp *r = static_page("link", legal_pages[_i], CSP_LEGAL);

	ck_assert_msg(strstr(r->body, "<html lang=\"en\">") && strstr(r->body, "<title>") &&
	    strstr(r->body, "<h1>") && strstr(r->body, "<main>") &&
	    strstr(r->body, "href=\"mailto:"), "%s: %.200s", legal_pages[_i], r->body);
	ck_assert_msg(strstr(r->body, "<script") == NULL && strstr(r->body, "style=") == NULL &&
	    strstr(r->body, "<style") == NULL,
	    "%s: a script or an inline style the policy would block", legal_pages[_i]);
	ck_assert_msg(strstr(r->body, "http://") == NULL && strstr(r->body, "https://") == NULL,
	    "%s: names another host", legal_pages[_i]);
	harness_resp_free(r);
}
END_TEST

/* What the notice must say (the connect page's privacy link): what is
 * received, how it is kept, how to disconnect, whom to write to; in the
 * connect page's languages. */
START_TEST(end_user_notice_says)
{
	static const char *const says[] = {
		"id=\"receive\"", "id=\"keep\"", "id=\"disconnect\"", "id=\"contact\"",
		"DELETE /v1/links", "last four digits", "encrypted",
		"<article id=\"es\" lang=\"es\">", "id=\"es-disconnect\"",
	};
	struct harness_resp *r = static_page("link", "/legal/end-user-privacy", CSP_LEGAL);

	for (int i = 0; i < N(says); i++)
		ck_assert_msg(strstr(r->body, says[i]) != NULL, "no %s", says[i]);
	harness_resp_free(r);
}
END_TEST

START_TEST(legal_stylesheet)
{
	struct harness_resp *r = harness_get("link", "/legal/legal.css");

	harness_assert_status(r, 200);
	ck_assert_pstr_eq(harness_header(r, "Content-Type"), "text/css; charset=utf-8");
	ck_assert_pstr_eq(harness_header(r, "X-Content-Type-Options"), "nosniff");
	ck_assert_pstr_eq(harness_header(r, "Cache-Control"), "no-cache");
	ck_assert_msg(strstr(r->body, "max-width") != NULL, "%.80s", r->body);
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
	tcase_add_loop_test(tc, legal_pages_served, 0, N(legal_pages));
	tcase_add_test(tc, end_user_notice_says);
	tcase_add_test(tc, legal_stylesheet);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return harness_run_suite(errors_suite());
}
