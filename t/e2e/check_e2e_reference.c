/*
 * The OpenAPI document and the API reference on the real stack. nginx
 * serves the build's web/v1/openapi.json and openapi.yaml (web/local.mk)
 * at /v1/openapi.json and /v1/openapi.yaml on the api and sandbox hosts:
 * 200 with the type, nginx's ETag, public for five minutes and the static
 * pages' headers; 304 to If-None-Match; never on the link host, never a
 * write. The four parse to one and the same document
 * (t/browser/reference_page.py document). /docs/ is the reference page:
 * its strict headers, its scripts, and in headless chromium
 * (reference_page.py page) Redoc renders the document: an operation's
 * summary shows and search finds it, with no console error (no CSP
 * violation) and no request to another origin; screenshots go to
 * t/artifacts/<build dir name>/reference-*.png.
 *
 * Only the chromium test skips (it passes with a note) when chromium or
 * chromium-driver is missing; scripts/test installs both (BDS_PKGS).
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <check.h>

#include "core/errors.h"
#include "harness.h"

#define N(x)		((int)(sizeof(x) / sizeof((x)[0])))
#define CHROMIUM	"/usr/bin/chromium"
#define CHROMEDRIVER	"/usr/bin/chromedriver"
#define PYTHON		"/usr/bin/python3"
#define RUN_MS		150000	/* one script run, chromium's start included */
/* the error page's policy (nginx/bds-api-host.conf) */
#define CSP_STATIC	"default-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

static void
setup(void)
{
	harness_fixture_start_default();
}

/* The document at each of its URLs. */
static const struct {
	const char	*host;
	const char	*path;
	const char	*type;
} docs[] = {
	{ "api",	"/v1/openapi.json", "application/json" },
	{ "api",	"/v1/openapi.yaml", "application/yaml" },
	{ "sandbox",	"/v1/openapi.json", "application/json" },
	{ "sandbox",	"/v1/openapi.yaml", "application/yaml" },
};

/* The static headers every file here carries, whatever its status. */
static void
static_headers(const struct harness_resp *r, const char *cache)
{
	ck_assert_pstr_eq(harness_header(r, "Cache-Control"), cache);
	ck_assert_pstr_eq(harness_header(r, "X-Content-Type-Options"), "nosniff");
	ck_assert_pstr_eq(harness_header(r, "Referrer-Policy"), "no-referrer");
	ck_assert_msg(harness_header(r, "Retry-After") == NULL, "Retry-After on a file");
}

/* 200 with its type, ETag and caching; the same ETag in If-None-Match is
 * a 304 with no body and the same headers; another ETag is the 200. */
START_TEST(document_cached)
{
	struct harness_resp *r, *nm;
	const char *etag;

	r = harness_get(docs[_i].host, docs[_i].path);
	ck_assert_msg(r->status == 200, "%s %s: %ld %.200s", docs[_i].host, docs[_i].path,
	    r->status, r->body);
	ck_assert_pstr_eq(harness_header(r, "Content-Type"), docs[_i].type);
	static_headers(r, "public, max-age=300");
	ck_assert_pstr_eq(harness_header(r, "Content-Security-Policy"), CSP_STATIC);
	ck_assert_msg(harness_header(r, "Last-Modified") != NULL, "no Last-Modified");
	ck_assert_msg(r->body_len > 100, "a body of %zu bytes", r->body_len);
	etag = harness_header(r, "ETag");
	ck_assert_msg(etag != NULL && etag[0] == '"', "ETag %s", etag ? etag : "(none)");

	nm = harness_request("GET", docs[_i].host, docs[_i].path,
	    (const char *const[]){ harness_fmt("If-None-Match: %s", etag), NULL }, NULL, 0);
	ck_assert_msg(nm->status == 304, "If-None-Match %s: %ld", etag, nm->status);
	ck_assert_uint_eq(nm->body_len, 0);
	ck_assert_pstr_eq(harness_header(nm, "ETag"), etag);
	static_headers(nm, "public, max-age=300");
	harness_resp_free(nm);

	nm = harness_request("GET", docs[_i].host, docs[_i].path,
	    (const char *const[]){ "If-None-Match: \"0-0\"", NULL }, NULL, 0);
	ck_assert_int_eq(nm->status, 200);
	ck_assert_uint_eq(nm->body_len, r->body_len);
	harness_resp_free(nm);
	harness_resp_free(r);
}
END_TEST

/* Only there and only read: the link host, a near path and a write are
 * nginx's envelopes; the app never sees these paths. */
static const struct {
	const char	*method;
	const char	*host;
	const char	*path;
	long		 status;
	const char	*code;
} not_docs[] = {
	{ "GET",  "link",    "/v1/openapi.json", 404, ERR_NOT_FOUND },
	{ "GET",  "link",    "/v1/openapi.yaml", 404, ERR_NOT_FOUND },
	{ "GET",  "link",    "/docs/", 404, ERR_NOT_FOUND },
	{ "GET",  "link",    "/docs/index.html", 404, ERR_NOT_FOUND },
	{ "GET",  "link",    "/docs/reference.js", 404, ERR_NOT_FOUND },
	{ "GET",  "link",    "/docs/errors.html", 404, ERR_NOT_FOUND },
	{ "GET",  "api",     "/v1/openapi.yml", 404, ERR_NOT_FOUND },
	{ "GET",  "sandbox", "/v1/openapi", 404, ERR_NOT_FOUND },
	{ "GET",  "api",     "/docs/index.html", 404, ERR_NOT_FOUND },
	{ "GET",  "api",     "/docs/nope.js", 404, ERR_NOT_FOUND },
	{ "POST", "api",     "/v1/openapi.json", 405, ERR_METHOD_NOT_ALLOWED },
	{ "PUT",  "sandbox", "/v1/openapi.yaml", 405, ERR_METHOD_NOT_ALLOWED },
};

START_TEST(only_there)
{
	struct harness_resp *r = harness_request(not_docs[_i].method, not_docs[_i].host,
	    not_docs[_i].path, NULL, NULL, 0);

	harness_assert_coded(r, not_docs[_i].status, not_docs[_i].code);
	harness_resp_free(r);
}
END_TEST

/* The page and its files on the api host: the page's policy is the link
 * pages' plus what Redoc needs (nginx/bds-api-host.conf); /docs leads to
 * it. */
START_TEST(page_files)
{
	struct harness_resp *r;
	const char *csp;

	r = harness_get("api", "/docs/");
	ck_assert_msg(r->status == 200, "/docs/: %ld %.200s", r->status, r->body);
	ck_assert_pstr_eq(harness_header(r, "Content-Type"), "text/html; charset=utf-8");
	static_headers(r, "no-cache");
	csp = harness_header(r, "Content-Security-Policy");
	ck_assert_ptr_nonnull(csp);
	ck_assert_msg(strstr(csp, "default-src 'none'; script-src 'self'; style-src 'self' ") == csp,
	    "CSP %s", csp);
	ck_assert_msg(strstr(csp, "'unsafe-") == NULL, "CSP %s", csp);
	ck_assert_msg(strstr(csp, "; frame-ancestors 'none'") != NULL, "CSP %s", csp);
	ck_assert_msg(strstr(r->body, "<script src=\"/docs/redoc.standalone.js\" integrity=\"sha384-")
	    != NULL, "no Redoc with SRI: %.400s", r->body);
	ck_assert_msg(strstr(r->body, "<script>") == NULL, "an inline script");
	harness_resp_free(r);

	for (int i = 0; i < 2; i++) {
		r = harness_get("api", i ? "/docs/reference.js" : "/docs/redoc.standalone.js");
		ck_assert_int_eq(r->status, 200);
		ck_assert_pstr_eq(harness_header(r, "Content-Type"), "text/javascript; charset=utf-8");
		static_headers(r, "no-cache");
		ck_assert_msg(harness_header(r, "ETag") != NULL, "no ETag");
		ck_assert_msg(strstr(r->body, "cdn.redoc.ly") == NULL, "the CDN logo is back");
		harness_resp_free(r);
	}

	r = harness_get("api", "/docs");
	ck_assert_int_eq(r->status, 301);
	ck_assert_pstr_eq(harness_header(r, "Location"),
	    harness_fmt("%s/docs/", harness_base_url("api")));
	harness_resp_free(r);
}
END_TEST

/*
 * Run t/browser/reference_page.py MODE in its own process group, at most
 * RUN_MS; its exit status (77: chromium is missing), -1 when it had to be
 * killed.
 */
static int
script(const char *mode)
{
	const char *src = getenv("BDS_SRCDIR") ? getenv("BDS_SRCDIR") : ".";
	char path[4096];
	const char *argv[] = { PYTHON, path, mode, NULL };
	const char *set[] = {
		"BDS_API_URL", harness_base_url("api"),
		"BDS_SANDBOX_URL", harness_base_url("sandbox"),
		"BDS_SRCDIR", src,
		"BDS_ARTIFACTS", harness_artifacts_dir(),
		NULL
	};
	struct harness_child child = { argv, set, NULL, NULL, RUN_MS };

	snprintf(path, sizeof(path), "%s/t/browser/reference_page.py", src);
	return harness_run_child(&child);
}

/* JSON and YAML, api and sandbox: one document. */
START_TEST(one_document)
{
	ck_assert_msg(script("document") == 0, "the served documents differ (see above)");
}
END_TEST

/* Redoc renders it in chromium, cleanly. */
START_TEST(page_renders)
{
	int rc;

	if (access(CHROMIUM, X_OK) != 0 || access(CHROMEDRIVER, X_OK) != 0) {
		fprintf(stderr, "check_e2e_reference: page_renders skipped: %s or %s is not"
		    " installed (Debian: chromium chromium-driver)\n", CHROMIUM, CHROMEDRIVER);
		return;
	}
	rc = script("page");
	ck_assert_msg(rc == 0, "the reference page failed (exit %d; screenshot %s/"
	    "reference-failure.png)", rc, harness_artifacts_dir());
}
END_TEST

static Suite *
reference_suite(void)
{
	Suite *s = suite_create("e2e_reference");
	TCase *tc = tcase_create("reference");

	tcase_add_unchecked_fixture(tc, setup, harness_fixture_stop);
	tcase_add_checked_fixture(tc, harness_fixture_recover, NULL);
	tcase_set_timeout(tc, RUN_MS / 1000 + 60);
	tcase_add_loop_test(tc, document_cached, 0, N(docs));
	tcase_add_loop_test(tc, only_there, 0, N(not_docs));
	tcase_add_test(tc, page_files);
	tcase_add_test(tc, one_document);
	tcase_add_test(tc, page_renders);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return harness_run_suite(reference_suite());
}
