/*
 * The connect page as nginx serves it on the link host, without
 * a browser (check_e2e_browser drives one): /connect is the static page
 * with a Content-Security-Policy whose frame-ancestors is the allowedOrigins
 * of the client the URL names, 'none' for anything else, and no page at
 * all when the app cannot say; the rest of web/ is never frameable; the
 * page's files carry no inline script or style and name no other host;
 * the session the page opens on its own origin tells it its client, whom
 * it may post to and where a hosted flow returns.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <json-c/json.h>

#include "webpage.h"

#define N(x)		((int)(sizeof(x) / sizeof((x)[0])))
#define CSP_BASE	"default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self';" \
			" connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors "
#define ORIGIN_A	"http://127.0.0.1:47001"
#define ORIGIN_B	"https://app.example"
#define REDIRECT	"http://127.0.0.1:47001/linked.html"

/* GET path on the link host: the page is served (200, text/html) with the
 * strict headers and frame-ancestors `want`. */
static void
expect_page(const char *path, const char *want)
{
	struct harness_resp *r = harness_get("link", path);
	const char *csp = harness_header(r, "Content-Security-Policy");

	ck_assert_msg(r->status == 200, "%s: %ld %s", path, r->status, r->body);
	ck_assert_pstr_eq(harness_header(r, "Content-Type"), "text/html");
	ck_assert_msg(csp != NULL && strcmp(csp, harness_fmt(CSP_BASE "%s", want)) == 0,
	    "%s: CSP %s, want frame-ancestors %s", path, csp ? csp : "(none)", want);
	ck_assert_pstr_eq(harness_header(r, "Referrer-Policy"), "no-referrer");
	ck_assert_pstr_eq(harness_header(r, "Cache-Control"), "no-store");
	ck_assert_pstr_eq(harness_header(r, "X-Content-Type-Options"), "nosniff");
	ck_assert_msg(strstr(r->body, "<main id=\"main\"") != NULL, "%s", r->body);
	harness_resp_free(r);
}

/* frame-ancestors follows the client_id of the URL: its allowedOrigins,
 * else 'none' (no id, unknown, malformed, an injection, no origins). */
START_TEST(frame_policy)
{
	struct webpage_tenant one, two, none;
	struct harness_resp *r;

	webpage_tenant_new(&one, ORIGIN_A, NULL);
	webpage_tenant_new(&none, NULL, NULL);
	webpage_tenant_new(&two, ORIGIN_A, NULL);
	r = devacct_jwt(&webpage_dev, "PUT", harness_fmt("/v1/iam/clients/%s", two.client),
	    "{\"allowedOrigins\":[\"" ORIGIN_A "\",\"" ORIGIN_B "\"]}", NULL);
	harness_expect(r, 200);
	harness_resp_free(r);

	expect_page(harness_fmt("/connect?client_id=%s", one.client), ORIGIN_A);
	expect_page(harness_fmt("/connect?client_id=%s", two.client), ORIGIN_A " " ORIGIN_B);
	/* other parameters change nothing; the first client_id counts */
	expect_page(harness_fmt("/connect?origin=x&client_id=%s&client_id=%s", one.client,
	    two.client), ORIGIN_A);
	expect_page("/connect", "'none'");
	expect_page("/connect?client_id=", "'none'");
	expect_page(harness_fmt("/connect?client_id=%s", none.client), "'none'");
	expect_page("/connect?client_id=cli_01900000-0000-7000-8000-00000000dead", "'none'");
	expect_page("/connect?client_id=garbage", "'none'");
	expect_page("/connect?client_id=%27none%27%3B%20script-src%20%2A", "'none'");
	expect_page("/connect?client_id=https%3A%2F%2Fevil.example", "'none'");
	/* what the app could not even decode: the page, framed by no one */
	expect_page("/connect?client_id=%ZZ", "'none'");
	expect_page("/connect?client_id=%00", "'none'");
	expect_page("/connect?client_id=%ff", "'none'");
	expect_page("/connect?client_id=cli_%00", "'none'");
	expect_page("/connect?client_id=%", "'none'");
	expect_page(harness_fmt("/connect?client_id=%s%0300d", one.client, 7), "'none'");
	expect_page(harness_fmt("/connect?client_id=cli_%0300d", 7), "'none'");
	webpage_tenant_free(&one);
	webpage_tenant_free(&two);
	webpage_tenant_free(&none);
}
END_TEST

/* An origin stored with a character a CSP source may not hold (only an
 * operator could write one) never reaches the header; the rest do. */
START_TEST(frame_policy_unsafe_origin)
{
	struct webpage_tenant t;

	webpage_tenant_new(&t, ORIGIN_A, NULL);
	devacct_sql_exec("UPDATE clients SET allowed_origins = $2::jsonb WHERE id = $1", t.client,
	    "[\"https://a.example; script-src *\", \"" ORIGIN_B "\", \"javascript:x\","
	    " \"https://UPPER.example\", 7]");
	expect_page(harness_fmt("/connect?client_id=%s", t.client), ORIGIN_B);
	webpage_tenant_free(&t);
}
END_TEST

/* When the app cannot answer (bds-api away), the page is not served
 * (fails closed). */
START_TEST(frame_policy_fails_closed)
{
	struct webpage_tenant t;
	struct harness_resp *r;

	webpage_tenant_new(&t, ORIGIN_A, NULL);
	ck_assert_int_eq(harness_api_kill(), 0);
	r = harness_get("link", harness_fmt("/connect?client_id=%s", t.client));
	harness_assert_coded(r, 500, NULL);
	/* the error envelope's own policy: framed by no one */
	ck_assert_pstr_eq(harness_header(r, "Content-Security-Policy"),
	    "default-src 'none'; frame-ancestors 'none'");
	ck_assert_msg(strstr(r->body, "<main") == NULL, "%s", r->body);
	harness_resp_free(r);
	ck_assert_int_eq(harness_api_start(), 0);
	expect_page(harness_fmt("/connect?client_id=%s", t.client), ORIGIN_A);
	webpage_tenant_free(&t);
}
END_TEST

/* The resolver nginx asks, as any caller sees it (public data: the same
 * as the embed-origins resolver). */
START_TEST(frame_endpoint)
{
	struct webpage_tenant t;
	struct harness_resp *r;

	webpage_tenant_new(&t, ORIGIN_A, NULL);
	r = harness_get("link", harness_fmt("/v1/link-sessions/frame-ancestors?client_id=%s",
	    t.client));
	harness_expect(r, 200);
	ck_assert_pstr_eq(devacct_str(r, "frame_ancestors"), ORIGIN_A);
	ck_assert_pstr_eq(harness_header(r, "X-Bds-Frame-Ancestors"), ORIGIN_A);
	harness_resp_free(r);
	r = harness_get("api", "/v1/link-sessions/frame-ancestors");
	harness_expect(r, 200);
	ck_assert_pstr_eq(devacct_str(r, "frame_ancestors"), "'none'");
	harness_resp_free(r);
	r = harness_get("api", "/v1/link-sessions/frame-ancestors?client=x");
	harness_assert_coded(r, 400, "VALIDATION_ERROR");
	harness_resp_free(r);
	webpage_tenant_free(&t);
}
END_TEST

static const struct {
	const char	*path, *type;
} statics[] = {
	{ "/", "text/html" },
	{ "/connect.js", "text/javascript" },
	{ "/assets/page.js", "text/javascript" },
	{ "/assets/api.js", "text/javascript" },
	{ "/assets/picker.js", "text/javascript" },
	{ "/assets/i18n.js", "text/javascript" },
	{ "/assets/connect.css", "text/css" },
	{ "/assets/icon.svg", "image/svg+xml" },
	{ "/i18n/en.json", "application/json" },
	{ "/i18n/es.json", "application/json" },
};

/* Every other file of web/ is served with the strict policy and is never
 * frameable; the page's file itself only as /connect. */
START_TEST(static_files)
{
	struct harness_resp *r = harness_get("link", statics[_i].path);

	ck_assert_msg(r->status == 200, "%s: %ld", statics[_i].path, r->status);
	ck_assert_pstr_eq(harness_header(r, "Content-Type"), statics[_i].type);
	ck_assert_pstr_eq(harness_header(r, "Content-Security-Policy"), CSP_BASE "'none'");
	ck_assert_pstr_eq(harness_header(r, "Referrer-Policy"), "no-referrer");
	ck_assert_pstr_eq(harness_header(r, "X-Content-Type-Options"), "nosniff");
	harness_resp_free(r);
}
END_TEST

START_TEST(page_file_hidden)
{
	struct harness_resp *r = harness_get("link", "/connect.html");

	harness_assert_coded(r, 404, "NOT_FOUND");
	harness_resp_free(r);
	r = harness_get("link", "/connect/");
	harness_assert_coded(r, 404, "NOT_FOUND");
	harness_resp_free(r);
	/* a directory without an index is the 404 envelope too, not a 403; and
	 * the envelope is data: it may not be rendered, framed or refer */
	for (int i = 0; i < 2; i++) {
		r = harness_get("link", i == 0 ? "/assets/" : "/i18n");
		harness_assert_coded(r, 404, "NOT_FOUND");
		ck_assert_pstr_eq(harness_header(r, "Content-Security-Policy"),
		    "default-src 'none'; frame-ancestors 'none'");
		ck_assert_pstr_eq(harness_header(r, "Referrer-Policy"), "no-referrer");
		harness_resp_free(r);
	}
}
END_TEST

/* A file of web/ (relative path) as a string (malloc'ed). */
static char *
web_file(const char *rel)
{
	const char *src = getenv("BDS_SRCDIR");
	char *text = harness_slurp(harness_fmt("%s/web/%s", src ? src : ".", rel));

	ck_assert_msg(text != NULL, "web/%s unreadable", rel);
	return text;
}

/* What CSP would block, or a request to another host, in one file. */
static void
scan_file(const char *rel)
{
	static const char *const html_bad[] = { " style=", "<style", "javascript:", " onclick=",
		" onload=", " onerror=", " onsubmit=", " oninput=", " onkeydown=", "<base", NULL };
	static const char *const any_bad[] = { "http://", "https://", "//fonts.", "eval(",
		"new Function", "innerHTML", "outerHTML", "insertAdjacentHTML",
		"document.write", "localStorage", "sessionStorage", "document.cookie", NULL };
	char *text = web_file(rel), *p;
	int html = strstr(rel, ".html") != NULL;
	/* the session, kept for the tab so that a reload resumes: api.js only */
	int tab = strcmp(rel, "assets/api.js") == 0;

	for (int i = 0; any_bad[i] != NULL; i++)
		ck_assert_msg(strstr(text, any_bad[i]) == NULL ||
		    (tab && strcmp(any_bad[i], "sessionStorage") == 0), "web/%s holds %s", rel,
		    any_bad[i]);
	if (html) {
		for (int i = 0; html_bad[i] != NULL; i++)
			ck_assert_msg(strstr(text, html_bad[i]) == NULL, "web/%s holds %s", rel,
			    html_bad[i]);
		/* every script is a file of the host */
		for (p = text; (p = strstr(p, "<script")) != NULL; p++)
			ck_assert_msg(strncmp(p, "<script src=\"/assets/", 21) == 0,
			    "web/%s: an inline or foreign script: %.60s", rel, p);
	}
	free(text);
}

/* The page's own files: no inline script or style, no other host. */
START_TEST(page_files_clean)
{
	const char *src = getenv("BDS_SRCDIR");
	const char *dirs[] = { "assets", "i18n" };
	struct dirent *e;
	DIR *d;
	int n = 0;

	scan_file("connect.html");
	scan_file("index.html");
	scan_file("docs/errors.html");	/* the error page, served on the api hosts */
	for (int i = 0; i < N(dirs); i++) {
		d = opendir(harness_fmt("%s/web/%s", src ? src : ".", dirs[i]));
		ck_assert_ptr_nonnull(d);
		while ((e = readdir(d)) != NULL) {
			/* an image fetches nothing (an SVG's xmlns is no request) */
			if (e->d_name[0] == '.' || strstr(e->d_name, ".svg") != NULL)
				continue;
			scan_file(harness_fmt("%s/%s", dirs[i], e->d_name));
			n++;
		}
		closedir(d);
	}
	ck_assert_int_ge(n, 7);
}
END_TEST

/* Both catalogs hold the same keys. */
START_TEST(catalogs_match)
{
	char *en = web_file("i18n/en.json"), *es = web_file("i18n/es.json");
	struct json_object *a = json_tokener_parse(en), *b = json_tokener_parse(es), *v;

	ck_assert_ptr_nonnull(a);
	ck_assert_ptr_nonnull(b);
	ck_assert_int_eq(json_object_object_length(a), json_object_object_length(b));
	json_object_object_foreach(a, key, val) {
		(void)val;
		ck_assert_msg(json_object_object_get_ex(b, key, &v), "es.json lacks %s", key);
	}
	json_object_put(a);
	json_object_put(b);
	free(en);
	free(es);
}
END_TEST

/* POST /v1/link-sessions on the link host, as the page does: 201 (free it). */
static struct harness_resp *
page_session(const char *ticket)
{
	struct harness_resp *r = devacct_call("POST", "link", "/v1/link-sessions", NULL,
	    harness_fmt("{\"ticket\":\"%s\"}", ticket), NULL);

	harness_expect(r, 201);
	return r;
}

/* The embedded flow: the ticket's embed_url names the client; the session
 * tells the page its client and the origins it may post to, not hosted. */
START_TEST(session_embedded)
{
	struct webpage_tenant t;
	struct harness_resp *r;
	char *lt, *ticket, *want;
	const char *st;

	webpage_tenant_new(&t, ORIGIN_A, REDIRECT);
	r = webpage_link_token(&t, "{\"client_user_id\":\"web-1\",\"redirect_uri\":\"" REDIRECT "\"}");
	lt = strdup(devacct_str(r, "link_token"));
	harness_resp_free(r);
	r = webpage_ticket(lt);
	ticket = strdup(devacct_str(r, "ticket"));
	want = strdup(harness_fmt("%s/connect?client_id=%s#ticket=%s", harness_base_url("link"),
	    t.client, ticket));
	ck_assert_pstr_eq(devacct_str(r, "embed_url"), want);
	ck_assert_pstr_eq(devacct_str(r, "connect_url"), harness_fmt("%s/connect#ticket=%s",
	    harness_base_url("link"), ticket));
	harness_resp_free(r);

	r = page_session(ticket);
	ck_assert_pstr_eq(devacct_str(r, "client.id"), t.client);
	ck_assert_ptr_nonnull(devacct_str(r, "client.name"));
	ck_assert_pstr_eq(devacct_text(r, "client.allowed_embed_origins"), "[\"" ORIGIN_A "\"]");
	ck_assert_int_eq(devacct_bool(r, "hosted"), 0);
	ck_assert_ptr_null(devacct_json(r, "redirect_uri"));
	ck_assert_ptr_null(devacct_json(r, "link_token"));
	st = devacct_str(r, "session_token");
	/* the rest of the page's calls work on its own origin too */
	{
		struct harness_resp *c = devacct_call("GET", "link", "/v1/link-sessions/current",
		    devacct_bearer(st), NULL, NULL);

		harness_expect(c, 200);
		ck_assert_pstr_eq(devacct_str(c, "status"), "awaiting_credentials");
		harness_resp_free(c);
		c = devacct_call("GET", "link", "/v1/link-sessions/billers?search_term=sandbox&limit=3",
		    devacct_bearer(st), NULL, NULL);
		harness_expect(c, 200);
		ck_assert_int_eq(json_object_array_length(devacct_json(c, "data")), 3);
		harness_resp_free(c);
	}
	harness_resp_free(r);
	free(want);
	free(ticket);
	free(lt);
	webpage_tenant_free(&t);
}
END_TEST

/* The hosted flow: hosted, the link token's id to send back, and the
 * registered redirect_uri when the token has one. */
START_TEST(session_hosted)
{
	struct webpage_tenant t;
	struct harness_resp *r;
	char *lt, *url;
	const char *base = harness_base_url("link");

	webpage_tenant_new(&t, NULL, REDIRECT);
	r = webpage_link_token(&t, "{\"client_user_id\":\"web-2\",\"hosted\":{\"redirect_uri\":\""
	    REDIRECT "\"}}");
	lt = strdup(devacct_str(r, "link_token"));
	url = strdup(devacct_str(r, "hosted_url"));
	harness_resp_free(r);
	ck_assert_msg(strncmp(url, base, strlen(base)) == 0 &&
	    strncmp(url + strlen(base), "/connect#ticket=", 16) == 0, "%s", url);
	r = page_session(strstr(url, "#ticket=") + 8);
	ck_assert_int_eq(devacct_bool(r, "hosted"), 1);
	ck_assert_pstr_eq(devacct_str(r, "link_token"), lt);
	ck_assert_pstr_eq(devacct_str(r, "redirect_uri"), REDIRECT);
	ck_assert_pstr_eq(devacct_str(r, "client.id"), t.client);
	ck_assert_pstr_eq(devacct_text(r, "client.allowed_embed_origins"), "[]");
	harness_resp_free(r);
	free(url);
	free(lt);

	/* hosted without a redirect: the page shows its done screen */
	r = webpage_link_token(&t, "{\"client_user_id\":\"web-2\",\"hosted\":true}");
	url = strdup(devacct_str(r, "hosted_url"));
	harness_resp_free(r);
	r = page_session(strstr(url, "#ticket=") + 8);
	ck_assert_int_eq(devacct_bool(r, "hosted"), 1);
	ck_assert_ptr_null(devacct_json(r, "redirect_uri"));
	harness_resp_free(r);
	free(url);
	webpage_tenant_free(&t);
}
END_TEST

static Suite *
web_suite(void)
{
	Suite *s = suite_create("e2e_web");
	TCase *tc = tcase_create("web");

	tcase_add_unchecked_fixture(tc, webpage_start, harness_fixture_stop);
	tcase_add_checked_fixture(tc, harness_fixture_recover, NULL);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, frame_policy);
	tcase_add_test(tc, frame_policy_unsafe_origin);
	tcase_add_test(tc, frame_policy_fails_closed);
	tcase_add_test(tc, frame_endpoint);
	tcase_add_loop_test(tc, static_files, 0, N(statics));
	tcase_add_test(tc, page_file_hidden);
	tcase_add_test(tc, page_files_clean);
	tcase_add_test(tc, catalogs_match);
	tcase_add_test(tc, session_embedded);
	tcase_add_test(tc, session_hosted);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return harness_run_suite(web_suite());
}
