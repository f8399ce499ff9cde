/*
 * The hosted card page (/pay on the link host) in a real browser:
 * Debian's chromium, headless, driven by t/browser/pay_card.py
 * (python3-selenium, chromium-driver) against this suite's stack, one
 * scenario per test. The script serves a test app on two loopback
 * origins, the client's registered one and another, types cards as the
 * end user (keyboard only in the embedded flow), checks what the page
 * shows (the amount, the bill's biller and due date, each error under its
 * field, in English and Spanish) and what the test app receives
 * (bds:payment_method only from a page framed or opened by the registered
 * origin, and only there), the console (no CSP or integrity refusal, no
 * card) and the network log (no other host, no request while the form
 * has errors, no card in a URL), runs axe-core in English and Spanish,
 * and saves screenshots under t/artifacts/<build dir name>/. This suite
 * then checks what the service holds: each method the page reported, of
 * that user, with the typed card's last four digits and brand, and no
 * method where the page was refused or never got a card. link_host checks
 * the link host's side over plain HTTP: the page's headers and frame
 * policy, the two pay API paths it passes (a pay token only) and the
 * envelopes nginx answers itself.
 *
 * The suite skips (77) only when chromium or chromium-driver is not
 * installed; scripts/test installs both (BDS_PKGS).
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>
#include <json-c/json.h>

#include "webpage.h"

#define N(a)		(sizeof(a) / sizeof((a)[0]))

/*
 * A pay token of t's client for client_user_id user whose expiry the suite
 * has moved a minute into the past (the page's "link expired" screen).
 * Free it.
 */
static char *
expired_token(const struct webpage_tenant *t, const char *user)
{
	struct harness_resp *r;
	char *token;

	r = devacct_call("POST", "sandbox", "/v1/pay-tokens", devacct_bearer(t->key),
	    harness_fmt("{\"client_user_id\":\"%s\"}", user), NULL);
	harness_expect(r, 201);
	token = strdup(devacct_str(r, "pay_token"));
	devacct_sql_exec("UPDATE pay_tokens SET expires_at = now() - interval '1 minute'"
	    " WHERE id = $1", devacct_str(r, "pay_token_id"), NULL);
	harness_resp_free(r);
	/* and the API agrees: 401 PAY_TOKEN_EXPIRED on the link host */
	r = devacct_call("GET", "link", "/v1/pay-tokens/current", devacct_bearer(token), NULL,
	    NULL);
	harness_expect(r, 401);
	ck_assert_pstr_eq(harness_json_string(r, "error_code"), "PAY_TOKEN_EXPIRED");
	harness_resp_free(r);
	return token;
}

/*
 * A PENDING bill of client_user_id user from a sandbox link of t's client
 * (user_good), its figures set to 43.21 owed by 2030-06-15: its id, and
 * its biller's name in *biller (both malloc'ed).
 */
static char *
pending_bill(const struct webpage_tenant *t, const char *user, char **biller)
{
	char *link, *bill;

	link = devacct_sandbox_link(t->key, user, "user_good");
	ck_assert_msg(harness_jobs_wait_idle(60000) == 0, "%s", harness_error());
	bill = devacct_sql_value("SELECT id FROM bills WHERE link_id = $1 AND status = 'PENDING'"
	    " AND deleted_at IS NULL ORDER BY due_date DESC NULLS LAST LIMIT 1", link, NULL);
	ck_assert_msg(bill != NULL, "no PENDING bill on %s", link);
	devacct_sql_exec("UPDATE bills SET total_minor = 4321, amount_due_minor = 4321,"
	    " balance_minor = NULL, due_date = '2030-06-15' WHERE id = $1", bill, NULL);
	*biller = devacct_sql_value("SELECT biller_name FROM bills WHERE id = $1", bill, NULL);
	ck_assert_ptr_nonnull(*biller);
	free(link);
	return bill;
}

/* pay_card.py SCENARIO for tenant t (other: a second client), with a
 * pay token aged past its expiry and a bill to pay with its biller's
 * name when the scenario wants them. Its result (json_object_put it). */
static struct json_object *
browse(const struct webpage_tenant *t, const char *other, const char *expired,
    const char *bill, const char *biller, const char *scenario)
{
	const char *env[] = {
		"BDS_EXPIRED_TOKEN", expired ? expired : "",
		"BDS_BILL_ID", bill ? bill : "",
		"BDS_BILL_BILLER", biller ? biller : "",
		NULL
	};

	return webpage_browse("pay_card.py", "pay-", t, other, env, scenario);
}

static struct json_object *
res_array(struct json_object *res, const char *key)
{
	struct json_object *v;

	ck_assert_msg(json_object_object_get_ex(res, key, &v) &&
	    json_object_is_type(v, json_type_array), "no %s in %s", key,
	    json_object_to_json_string(res));
	return v;
}

static const char *
at(struct json_object *a, size_t i)
{
	return json_object_get_string(json_object_array_get_idx(a, i));
}

/* IIN ranges of the test cards, as the API names them */
static const char *
brand_of(const char *pan)
{
	if (pan[0] == '4')
		return "visa";
	if (pan[0] == '5')
		return "mastercard";
	if (pan[0] == '3')
		return "amex";
	return "discover";
}

/*
 * What the service holds after a scenario: method i of the result is the
 * only live one of user i (users without a method have none) under the
 * tenant's client, sandbox, with card i's brand and last four digits (the
 * result lists the cards saved first, in order, then any typed and
 * refused). The list API with the key names it too.
 */
static void
after(const struct webpage_tenant *t, struct json_object *res)
{
	struct json_object *users = res_array(res, "users"), *methods = res_array(res, "methods");
	struct json_object *cards = res_array(res, "cards");
	struct harness_resp *r;
	size_t i, nm = json_object_array_length(methods);
	const char *pan;
	char *row;

	for (i = 0; i < json_object_array_length(users); i++) {
		ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM payment_methods"
		    " WHERE client_id = $1 AND client_user_id = $2 AND deleted_at IS NULL",
		    t->client, at(users, i)), i < nm ? 1 : 0);
	}
	for (i = 0; i < nm; i++) {
		pan = at(cards, i);
		row = devacct_sql_value("SELECT client_user_id || ' ' || brand || ' '"
		    " || last4 || ' ' || environment FROM payment_methods WHERE client_id = $1"
		    " AND id = $2", t->client, at(methods, i));
		ck_assert_pstr_eq(row, harness_fmt("%s %s %s sandbox", at(users, i),
		    brand_of(pan), pan + strlen(pan) - 4));
		free(row);
		r = devacct_call("GET", "sandbox", harness_fmt("/v1/pay/payment-methods"
		    "?client_user_id=%s", at(users, i)), devacct_bearer(t->key), NULL, NULL);
		harness_expect(r, 200);
		ck_assert_pstr_eq(devacct_str(r, "payment_methods.0.payment_method_id"),
		    at(methods, i));
		harness_resp_free(r);
	}
}

#define ORIGIN_A	"http://127.0.0.1:47001"
#define ORIGIN_B	"https://app.example"
#define PAGE_CSP	"default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self';" \
			" connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors "

/* GET path on the link host: the card page, with the strict headers and
 * frame-ancestors want. */
static void
expect_page(const char *path, const char *want)
{
	struct harness_resp *r = harness_get("link", path);
	const char *csp = harness_header(r, "Content-Security-Policy");

	ck_assert_msg(r->status == 200, "%s: %ld %s", path, r->status, r->body);
	ck_assert_pstr_eq(harness_header(r, "Content-Type"), "text/html");
	ck_assert_msg(csp != NULL && strcmp(csp, harness_fmt(PAGE_CSP "%s", want)) == 0,
	    "%s: CSP %s, want frame-ancestors %s", path, csp ? csp : "(none)", want);
	ck_assert_pstr_eq(harness_header(r, "Referrer-Policy"), "no-referrer");
	ck_assert_pstr_eq(harness_header(r, "Cache-Control"), "no-store");
	ck_assert_pstr_eq(harness_header(r, "X-Content-Type-Options"), "nosniff");
	ck_assert_msg(strstr(r->body, "<form id=\"card-form\"") != NULL, "%s", r->body);
	harness_resp_free(r);
}

/* method path on the link host with auth (a whole Authorization value or
 * NULL): status, and the coded envelope's code when code is not NULL. */
static void
expect_call(const char *method, const char *path, const char *auth, const char *body,
    long status, const char *code)
{
	struct harness_resp *r = devacct_call(method, "link", path, auth, body, NULL);

	ck_assert_msg(r->status == status, "%s %s: %ld %s", method, path, r->status, r->body);
	if (code != NULL) {
		ck_assert_pstr_eq(harness_json_string(r, "error_code"), code);
		ck_assert_ptr_nonnull(harness_json_string(r, "request_id"));
	}
	harness_resp_free(r);
}

/*
 * The link host's side of the card page, over plain HTTP: /pay framed per
 * client_id as /connect, its file by that name only, its assets static;
 * the two pay API paths with a pay token only (any environment), nginx's
 * own 401 and 405 envelopes, every other pay path the 404 envelope.
 */
START_TEST(link_host)
{
	struct webpage_tenant one, two;
	struct harness_resp *r;
	char *token, *key_auth;
	const char *card = "{\"pan\":\"4242424242424242\",\"expiry_month\":12,"
	    "\"expiry_year\":2099,\"cvv\":\"123\"}";

	webpage_tenant_new(&one, ORIGIN_A, NULL);
	webpage_tenant_new(&two, ORIGIN_A, NULL);
	r = devacct_jwt(&webpage_dev, "PUT", harness_fmt("/v1/iam/clients/%s", two.client),
	    "{\"allowedOrigins\":[\"" ORIGIN_A "\",\"" ORIGIN_B "\"]}", NULL);
	harness_expect(r, 200);
	harness_resp_free(r);

	expect_page(harness_fmt("/pay?client_id=%s", one.client), ORIGIN_A);
	expect_page(harness_fmt("/pay?client_id=%s", two.client), ORIGIN_A " " ORIGIN_B);
	expect_page("/pay", "'none'");
	expect_page("/pay?client_id=garbage", "'none'");
	expect_page("/pay?client_id=%27none%27%3B%20script-src%20%2A", "'none'");
	expect_page("/pay?client_id=cli_01900000-0000-7000-8000-00000000dead", "'none'");
	/* the file by no other name */
	expect_call("GET", "/pay/index.html", NULL, NULL, 404, "NOT_FOUND");
	expect_call("GET", "/pay/", NULL, NULL, 404, "NOT_FOUND");
	/* its assets: static, framed by no one */
	r = harness_get("link", "/pay/pay.js");
	ck_assert_int_eq(r->status, 200);
	ck_assert_pstr_eq(harness_header(r, "Content-Type"), "text/javascript");
	ck_assert_msg(strstr(harness_header(r, "Content-Security-Policy"),
	    "frame-ancestors 'none'") != NULL, "%s", harness_header(r, "Content-Security-Policy"));
	harness_resp_free(r);
	r = harness_get("link", "/pay/pay.css");
	ck_assert_int_eq(r->status, 200);
	ck_assert_pstr_eq(harness_header(r, "Content-Type"), "text/css");
	harness_resp_free(r);

	/* a sandbox pay token works on the link host */
	r = devacct_call("POST", "sandbox", "/v1/pay-tokens", devacct_bearer(one.key),
	    "{\"client_user_id\":\"pay-link-host\",\"amount\":{\"value\":1250,\"currency\":\"USD\"}}",
	    NULL);
	harness_expect(r, 201);
	token = strdup(devacct_str(r, "pay_token"));
	harness_resp_free(r);
	r = devacct_call("GET", "link", "/v1/pay-tokens/current", devacct_bearer(token), NULL,
	    NULL);
	harness_expect(r, 200);
	ck_assert_pstr_eq(devacct_str(r, "client.id"), one.client);
	ck_assert_pstr_eq(devacct_text(r, "client.allowed_embed_origins"), "[\"" ORIGIN_A "\"]");
	ck_assert_pstr_eq(devacct_str(r, "amount.value"), "12.50");
	harness_resp_free(r);
	/* the scheme in any case, as the app reads it */
	expect_call("GET", "/v1/pay-tokens/current", harness_fmt("bearer %s", token), NULL, 200,
	    NULL);

	/* nginx's 401 envelope: no Authorization, an API key, a link token,
	 * a Basic pair; the app's for a pay token it does not know */
	expect_call("GET", "/v1/pay-tokens/current", NULL, NULL, 401, "INVALID_PAY_TOKEN");
	expect_call("GET", "/v1/pay-tokens/current", devacct_bearer(one.key), NULL, 401,
	    "INVALID_PAY_TOKEN");
	key_auth = devacct_basic(one.client, one.key);
	expect_call("POST", "/v1/pay/payment-methods", key_auth, card, 401, "INVALID_PAY_TOKEN");
	free(key_auth);
	expect_call("POST", "/v1/pay/payment-methods", devacct_bearer(one.key),
	    "{\"client_user_id\":\"pay-link-host\",\"pan\":\"4242424242424242\","
	    "\"expiry_month\":12,\"expiry_year\":2099}", 401, "INVALID_PAY_TOKEN");
	expect_call("GET", "/v1/pay-tokens/current", "Bearer bds_lat_x", NULL, 401,
	    "INVALID_PAY_TOKEN");
	expect_call("GET", "/v1/pay-tokens/current", devacct_bearer("bds_pay_" "x"), NULL, 401,
	    "INVALID_PAY_TOKEN");
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM payment_methods"
	    " WHERE client_id = $1", one.client, NULL), 0);

	/* another method: nginx's 405 */
	expect_call("POST", "/v1/pay-tokens/current", devacct_bearer(token), "{}", 405,
	    "METHOD_NOT_ALLOWED");
	expect_call("GET", "/v1/pay/payment-methods", devacct_bearer(token), NULL, 405,
	    "METHOD_NOT_ALLOWED");
	expect_call("DELETE", "/v1/pay/payment-methods", devacct_bearer(token), NULL, 405,
	    "METHOD_NOT_ALLOWED");
	/* every other pay path, even with a pay token: 404 */
	expect_call("POST", "/v1/pay-tokens", devacct_bearer(token),
	    "{\"client_user_id\":\"x\"}", 404, "NOT_FOUND");
	expect_call("POST", "/v1/pay/sessions", devacct_bearer(token),
	    "{\"client_user_id\":\"x\"}", 404, "NOT_FOUND");
	expect_call("POST", "/v1/pay/payments", devacct_bearer(token), "{}", 404, "NOT_FOUND");
	expect_call("GET", "/v1/pay/payment-methods/pm_x", devacct_bearer(token), NULL, 404,
	    "NOT_FOUND");
	expect_call("GET", "/v1/pay-tokens/current/", devacct_bearer(token), NULL, 404,
	    "NOT_FOUND");
	expect_call("GET", "/v1/pay-tokens/current%0a", devacct_bearer(token), NULL, 404,
	    "NOT_FOUND");

	/* the card, with the pay token: saved, the token's user */
	r = devacct_call("POST", "link", "/v1/pay/payment-methods", devacct_bearer(token), card,
	    NULL);
	harness_expect(r, 201);
	ck_assert_pstr_eq(devacct_str(r, "client_user_id"), "pay-link-host");
	ck_assert_pstr_eq(devacct_str(r, "last4"), "4242");
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM payment_methods WHERE"
	    " client_id = $1 AND id = $2 AND environment = 'sandbox'", one.client,
	    devacct_str(r, "payment_method_id")), 1);
	harness_resp_free(r);
	free(token);
	webpage_tenant_free(&one);
	webpage_tenant_free(&two);
}
END_TEST

static const struct {
	const char	*name;
	int		 other;		/* needs a second client */
	int		 expired;	/* needs an expired pay token */
	int		 bill;		/* needs a PENDING bill of pay-bill */
} scenarios[] = {
	{ "embedded",		0, 0, 0 },
	{ "amount",		0, 0, 0 },
	{ "bill",		0, 0, 1 },
	{ "not_allowed",	0, 0, 0 },
	{ "popups",		0, 0, 0 },
	{ "inline_errors",	0, 0, 0 },
	{ "api_errors",		0, 0, 0 },
	{ "refused",		1, 1, 0 },
	{ "es",			0, 0, 0 },
	{ "axe_en",		0, 0, 0 },
	{ "axe_es",		0, 0, 0 },
};

START_TEST(scenario)
{
	struct webpage_tenant t, other = { NULL, NULL };
	struct json_object *res;
	char *expired = NULL, *bill = NULL, *biller = NULL;

	if (!webpage_scenario_wanted(scenarios[_i].name))
		return;
	webpage_tenant_new(&t, NULL, NULL);
	if (scenarios[_i].other)
		webpage_tenant_new(&other, NULL, NULL);
	if (scenarios[_i].expired)
		expired = expired_token(&t, "pay-expired");
	if (scenarios[_i].bill)
		bill = pending_bill(&t, "pay-bill", &biller);
	res = browse(&t, other.client, expired, bill, biller, scenarios[_i].name);
	after(&t, res);
	json_object_put(res);
	free(expired);
	free(bill);
	free(biller);
	webpage_tenant_free(&t);
	webpage_tenant_free(&other);
}
END_TEST

/* Every card pay_card.py types (the test cards, the bad Luhn digit)
 * and every security code. */
static const char *const pans_typed[] = { "4242424242424242", "5555555555554444",
	"378282246310005", "6011111111111117", "4000056655665556", "4242424242424241" };
/* the same as the page shows them while they are typed */
static const char *const pans_shown[] = { "4242 4242 4242 4242", "5555 5555 5555 4444",
	"3782 822463 10005", "6011 1111 1111 1117", "4000 0566 5566 5556",
	"4242 4242 4242 4241" };
static const char *const cvvs_typed[] = { "123", "4321", "12", "1", "12a" };

/*
 * Last: nothing the page was given is kept by the stack (a pg_dump of its
 * database, every log and file of its temp dir): no card number whole, as
 * the page groups it, without its last four digits or without its first
 * six (the brand's digits and the last four alone may be kept), and no
 * security code as a JSON member.
 */
START_TEST(secrets_not_kept)
{
	const char *needles[4 * N(pans_typed) + 2 * N(cvvs_typed)];
	char *made[N(pans_typed) + 2 * N(cvvs_typed)];
	char found[512];
	size_t n = 0, m = 0, i;
	int rc;

	for (i = 0; i < N(pans_typed); i++) {
		needles[n++] = pans_typed[i];
		needles[n++] = made[m++] = strdup(harness_fmt("%.*s",
		    (int)strlen(pans_typed[i]) - 4, pans_typed[i]));
		needles[n++] = pans_typed[i] + 6;
		needles[n++] = pans_shown[i];
	}
	for (i = 0; i < N(cvvs_typed); i++) {
		needles[n++] = made[m++] = strdup(harness_fmt("\"cvv\":\"%s\"", cvvs_typed[i]));
		needles[n++] = made[m++] = strdup(harness_fmt("\"cvv\": \"%s\"", cvvs_typed[i]));
	}
	rc = harness_secret_scan(needles, n, found, sizeof(found));
	while (m > 0)
		free(made[--m]);
	ck_assert_msg(rc != -1, "secret scan: %s", harness_error());
	ck_assert_msg(rc == 0, "the stack keeps a secret the page was given: %s", found);
}
END_TEST

static Suite *
pay_browser_suite(void)
{
	Suite *s = suite_create("e2e_pay_browser");
	TCase *tc = tcase_create("pay_browser");

	tcase_add_unchecked_fixture(tc, webpage_start, harness_fixture_stop);
	tcase_add_checked_fixture(tc, harness_fixture_recover, NULL);
	tcase_set_timeout(tc, WEBPAGE_RUN_MS / 1000 + 60);
	tcase_add_test(tc, link_host);
	tcase_add_loop_test(tc, scenario, 0, (int)(sizeof(scenarios) / sizeof(scenarios[0])));
	tcase_add_test(tc, secrets_not_kept);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	if (webpage_browser_missing("check_e2e_pay_browser"))
		return 77;
	return harness_run_suite(pay_browser_suite());
}
