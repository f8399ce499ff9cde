/*
 * Pay end to end (SPEC.md "Pay", docs/pay.md): pay tokens, payment
 * methods (cards) by each of the three bearers, hosted-page sessions and
 * payment attempts, on the sandbox host with sandbox keys of two clients
 * (a second tenant for the 404s), and a development key of the first on
 * the api host (another environment sees none of it). Two stacks: one
 * with the default config, where POST /v1/pay/payments answers 501 and
 * writes nothing, and one with `pay.execution = sandbox`, where bds-jobs
 * settles each attempt by the sandbox processor's rule (the amount's last
 * two digits) and the events reach a local receiver through bds-deliver.
 * Bills to pay are the PENDING bills of sandbox account links (fixture
 * user_good), their figures set with SQL. Each stack's last tests: no
 * process may dump core, and no card number or CVV the suite sent is in
 * the database or any file the stack wrote (harness_secret_scan).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <check.h>
#include <json-c/json.h>

#include "devacct.h"
#include "harness.h"
#include "receiver.h"

#define N(x)		(sizeof(x) / sizeof((x)[0]))
#define IDLE_MS		60000
#define SETTLE_MS	30000
#define PARALLEL	20
#define DEFAULT_LINK_URL "https://link.bds.example"

/* The sandbox's test cards, their brands, and every other number sent. */
#define VISA		"4242424242424242"
#define MASTERCARD	"5555555555554444"
#define AMEX		"378282246310005"
#define DISCOVER	"6011111111111117"
#define VISA_DEBIT	"4000056655665556"
#define BAD_LUHN	"4242424242424241"
/* far longer than any card: the same code as any other bad number */
#define LONG_PAN	"4242424242424242424242424242424242424242424242424242424242424242" \
			"4242424242"
#define LONG_CVV	"1234123412341234123412341234123412341234123412341234123412341234" \
			"1234"

static const struct {
	const char	*pan, *brand;
} cards[] = {
	{ VISA, "visa" }, { MASTERCARD, "mastercard" }, { AMEX, "amex" },
	{ DISCOVER, "discover" }, { VISA_DEBIT, "visa" },
};

/* every PAN and CVV a request of this suite carries */
#define VISA_2		"4111111111111111"
#define MASTERCARD_2	"5105105105105100"

/* more brands by their issuer ranges, Luhn-valid (digits varied enough
 * that a part of one is not found in the stack's files by chance) */
static const struct {
	const char	*pan, *brand;
} more_cards[] = {
	{ "2223003122003222", "mastercard" }, { "36227206271667", "diners" },
	{ "3056930009020004", "diners" }, { "3566002020360505", "jcb" },
	{ "6217834591204670", "unionpay" }, { "6011000990139424", "discover" },
	{ "9182736455019281", "unknown" },
	{ "4929183746524", "visa" },			/* 13 digits, the shortest */
	{ "6214830591726483014", "unionpay" },		/* 19, the longest */
};

static const char *const pans_sent[] = { VISA, MASTERCARD, AMEX, DISCOVER, VISA_DEBIT,
	VISA_2, MASTERCARD_2, BAD_LUHN, "424242424242", "42424242424242424242",
	"4242 4242 4242 4242", LONG_PAN,
	"4242-4242-4242-4242" };
/* (and more_cards, and the GEN_CARDS of gen_card) */
static const char *const cvvs_sent[] = { "123", "4321", "12", "12345", "12a", LONG_CVV };

#define GEN_CARDS	26

/* The i-th of GEN_CARDS visa numbers (Luhn-valid) into buf[17] */
static const char *
gen_card(int i, char buf[17])
{
	int sum = 0;

	snprintf(buf, 17, "4917182936%02u573", (unsigned)i % 100u);
	for (int k = 14, dbl = 1; k >= 0; k--, dbl = !dbl) {
		int d = (buf[k] - '0') * (dbl ? 2 : 1);

		sum += d > 9 ? d - 9 : d;
	}
	buf[15] = (char)('0' + (10 - sum % 10) % 10);
	buf[16] = '\0';
	return buf;
}

static struct devacct dev;

static struct devacct_tenant ta, tb;
static char *dev_key;	/* A's client, development key: the api host, another environment */

/* ---- stacks ---- */

static void
tenants_up(void)
{
	devacct_tenants_new(&dev, "pay", &ta, &tb, &dev_key);
}

static void
gated_up(void)
{
	harness_fixture_start(NULL);
	tenants_up();
}

static void
sandbox_up(void)
{
	struct harness_opts o;

	harness_opts_defaults(&o);
	o.extra_config = "pay.execution = sandbox\n" "webhook_concurrency = 1\n";
	harness_fixture_start(&o);
	tenants_up();
}

/* harness_fixture_recover, and bds-jobs running again after a test
 * stopped it */
static void
recover(void)
{
	harness_fixture_recover();
	if (harness_jobs_pid() == 0)
		ck_assert_msg(harness_jobs_start() == 0, "%s", harness_error());
}

static void
tenants_down(void)
{
	devacct_tenants_free(&ta, &tb, &dev_key);
	dev_key = NULL;
	memset(&ta, 0, sizeof(ta));
	memset(&tb, 0, sizeof(tb));
	harness_fixture_stop();
}

/* ---- requests ---- */

/* method path on host with bearer token (NULL: none). */
static struct harness_resp *
call_on(const char *host, const char *token, const char *method, const char *path,
    const char *body)
{
	return devacct_call(method, host, path,
	    token != NULL ? harness_fmt("Bearer %s", token) : NULL, body, NULL);
}

/* The same on the sandbox host, with more headers (NULL: none). */
static struct harness_resp *
call(const char *token, const char *method, const char *path, const char *body,
    const char *const extra[])
{
	return devacct_call(method, "sandbox", path,
	    token != NULL ? harness_fmt("Bearer %s", token) : NULL, body, extra);
}

/* The coded envelope of an error: status and error_code. */
static void
refused_at(const struct harness_resp *r, long status, const char *code, int line)
{
	const char *why = harness_check_coded(r, status, code);

	ck_assert_msg(why == NULL, "line %d: %s", line, why);
}
#define refused(r, s, c) refused_at((r), (s), (c), __LINE__)

/* 400 VALIDATION_ERROR with errors[] naming field (and code, when not
 * NULL): NULL when so, else why (static storage) */
static const char *
invalid_why(const struct harness_resp *r, const char *field, const char *code)
{
	const char *why = harness_check_coded(r, 400, "VALIDATION_ERROR");

	return why != NULL ? why : devacct_check_error(r, field, code);
}

static void
invalid_at(const struct harness_resp *r, const char *field, const char *code, int line)
{
	const char *why = invalid_why(r, field, code);

	ck_assert_msg(why == NULL, "line %d: %s", line, why);
}
#define invalid(r, f, c) invalid_at((r), (f), (c), __LINE__)

/* call, then the refusal; the response freed */
#define REFUSED(tok, m, p, b, x, s, c) do {					\
	struct harness_resp *r_ = call((tok), (m), (p), (b), (x));		\
	refused(r_, (s), (c));							\
	harness_resp_free(r_);							\
} while (0)
#define INVALID(tok, m, p, b, x, f, c) do {					\
	struct harness_resp *r_ = call((tok), (m), (p), (b), (x));		\
	invalid(r_, (f), (c));							\
	harness_resp_free(r_);							\
} while (0)

static const char *
jstr(struct json_object *o, const char *k)
{
	struct json_object *v;

	if (o == NULL || !json_object_object_get_ex(o, k, &v) || v == NULL)
		return NULL;
	return json_object_get_string(v);
}

static int
jnull(struct json_object *o, const char *k)
{
	struct json_object *v;

	return json_object_object_get_ex(o, k, &v) && v == NULL;
}

/* The object has exactly the keys of the NULL-terminated list. */
static void
keys_exactly(struct json_object *o, const char *const keys[])
{
	size_t n = 0;

	ck_assert_ptr_nonnull(o);
	for (; keys[n] != NULL; n++)
		ck_assert_msg(json_object_object_get_ex(o, keys[n], NULL), "no %s in %s", keys[n],
		    json_object_to_json_string(o));
	ck_assert_msg((size_t)json_object_object_length(o) == n, "extra keys in %s",
	    json_object_to_json_string(o));
}

/* a is b (a may be NULL) */
static int
same(const char *a, const char *b)
{
	return a != NULL && strcmp(a, b) == 0;
}

static int
prefixed(const char *s, const char *prefix)
{
	return s != NULL && strncmp(s, prefix, strlen(prefix)) == 0;
}

/* "pm_<uuidv7>" and the like */
static int
is_id(const char *s, const char *prefix)
{
	size_t p = strlen(prefix);

	return prefixed(s, prefix) && strlen(s) == p + 36 && s[p + 14] == '7' &&
	    s[p + 8] == '-' && s[p + 13] == '-' && s[p + 18] == '-' && s[p + 23] == '-';
}

/* an ISO-8601 UTC instant within [lo, hi] seconds of now */
static void
instant_near(const char *iso, long lo, long hi)
{
	struct tm tm;
	time_t t, now = time(NULL);

	ck_assert_ptr_nonnull(iso);
	memset(&tm, 0, sizeof(tm));
	ck_assert_msg(strptime(iso, "%Y-%m-%dT%H:%M:%S", &tm) != NULL, "not ISO: %s", iso);
	ck_assert_msg(iso[strlen(iso) - 1] == 'Z', "not UTC: %s", iso);
	t = timegm(&tm);
	ck_assert_msg(t >= now + lo && t <= now + hi, "%s is not within [%ld, %ld] s of now", iso,
	    lo, hi);
}

static int
this_year(void)
{
	time_t now = time(NULL);

	return gmtime(&now)->tm_year + 1900;
}

static int
this_month(void)
{
	time_t now = time(NULL);

	return gmtime(&now)->tm_mon + 1;
}

/* ---- the objects ---- */

/* A sandbox link (user_good) of user: its id and access token (malloc'ed);
 * its retrieval done. */
static void
link_new(const struct devacct_tenant *t, const char *user, char **link, char **token)
{
	const char *extra[] = { harness_idem_header(), NULL };
	struct harness_resp *r = call(t->key, "POST", "/v1/sandbox/account-links",
	    harness_fmt("{\"client_user_id\":\"%s\",\"username\":\"user_good\"}", user), extra);

	harness_expect(r, 201);
	*link = strdup(devacct_str(r, "link_id"));
	if (token != NULL) {
		*token = strdup(devacct_str(r, "access_token"));
		ck_assert_msg(prefixed(*token, "bds_lat_"), "%s", r->body);
	}
	harness_resp_free(r);
	ck_assert_msg(harness_jobs_wait_idle(IDLE_MS) == 0, "%s", harness_error());
}

/* A PENDING bill of link whose total and amount due are minor (0: as the
 * fixture made it); its id, malloc'ed. */
static char *
bill_of(const char *link, long long minor)
{
	char *bill = devacct_sql_value("SELECT id FROM bills WHERE link_id = $1 AND"
	    " status = 'PENDING' AND deleted_at IS NULL ORDER BY id DESC LIMIT 1", link, NULL);

	ck_assert_msg(bill != NULL, "link %s has no PENDING bill", link);
	if (minor > 0)
		devacct_sql_exec("UPDATE bills SET total_minor = $2::bigint,"
		    " amount_due_minor = $2::bigint, balance_minor = NULL WHERE id = $1", bill,
		    harness_fmt("%lld", minor));
	return bill;
}

/* A unique client_user_id, in a ring of buffers of its own (a test holds
 * a few at once, none for long: no copy to free) */
static const char *
user_new(const char *tag)
{
	static char ring[32][96];
	static int n;
	char *u = ring[n % 32];

	snprintf(u, sizeof(ring[0]), "u-%s-%d-%d-%ld", tag, (int)getpid(), n + 1,
	    (long)random() % 100000);
	n++;
	return u;
}

/* POST /v1/pay-tokens with the members of more (may be "") for user: 201;
 * the secret (malloc'ed), and its id into id (may be NULL). */
static char *
pay_token_new(const struct devacct_tenant *t, const char *user, const char *more, char *id, size_t idlen)
{
	struct harness_resp *r = call(t->key, "POST", "/v1/pay-tokens",
	    harness_fmt("{\"client_user_id\":\"%s\"%s}", user, more), NULL);
	char *tok;

	harness_expect(r, 201);
	ck_assert(devacct_bool(r, "success"));
	tok = strdup(devacct_str(r, "pay_token"));
	ck_assert_msg(prefixed(tok, "bds_pay_") && strlen(tok) == 8 + 43 + 6, "%s", r->body);
	for (const char *p = tok + 8; *p != '\0'; p++)
		ck_assert_msg((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'z') ||
		    (*p >= 'A' && *p <= 'Z'), "not base62: %s", tok);
	ck_assert_msg(is_id(devacct_str(r, "pay_token_id"), "pt_"), "%s", r->body);
	instant_near(devacct_str(r, "expires_at"), 15 * 60 - 60, 15 * 60 + 5);
	if (id != NULL)
		snprintf(id, idlen, "%s", devacct_str(r, "pay_token_id"));
	harness_resp_free(r);
	return tok;
}

static const char *const method_keys[] = { "payment_method_id", "id", "object", "bucket",
	"client_user_id", "brand", "last4", "exp_month", "exp_year", "created_at", NULL };

/* POST /v1/pay/payment-methods by bearer with body text: the response */
static struct harness_resp *
method_post(const char *bearer, const char *body)
{
	return call(bearer, "POST", "/v1/pay/payment-methods", body, NULL);
}

/* A card's body; user NULL: no client_user_id; more: further members */
static const char *
card_body(const char *user, const char *pan, int month, int year, const char *more)
{
	return harness_fmt("{\"pan\":\"%s\",\"expiry_month\":%d,\"expiry_year\":%d,"
	    "\"cvv\":\"123\"%s%s%s%s}", pan, month, year, user ? ",\"client_user_id\":\"" : "",
	    user ? user : "", user ? "\"" : "", more ? more : "");
}

/* A card of user saved by bearer: 201, the entity checked; its id
 * (malloc'ed). */
static char *
method_new(const char *bearer, const char *user, const char *pan, const char *brand)
{
	struct harness_resp *r = method_post(bearer, card_body(user, pan, 12, this_year() + 3,
	    NULL));
	struct json_object *o = r->json;
	char *id;

	harness_expect(r, 201);
	keys_exactly(o, method_keys);
	ck_assert_msg(is_id(jstr(o, "payment_method_id"), "pm_"), "%s", r->body);
	ck_assert_pstr_eq(jstr(o, "id"), jstr(o, "payment_method_id"));
	ck_assert_pstr_eq(jstr(o, "object"), "payment_method");
	if (user != NULL)
		ck_assert_pstr_eq(jstr(o, "client_user_id"), user);
	ck_assert_pstr_eq(jstr(o, "brand"), brand);
	ck_assert_pstr_eq(jstr(o, "last4"), pan + strlen(pan) - 4);
	ck_assert_int_eq(devacct_int(r, "exp_month"), 12);
	ck_assert_int_eq(devacct_int(r, "exp_year"), this_year() + 3);
	instant_near(jstr(o, "created_at"), -120, 5);
	ck_assert_msg(strstr(r->body, pan) == NULL, "the PAN is in the answer: %s", r->body);
	id = strdup(jstr(o, "payment_method_id"));
	harness_resp_free(r);
	return id;
}

static long long
rows(const char *q, const char *p1)
{
	return devacct_sql_int(q, p1, NULL);
}

/* ---- pay tokens ---- */

/* amounts a pay token refuses, and the field named */
static const struct {
	const char	*json, *field;
} bad_amounts[] = {
	{ "{\"value\":0,\"currency\":\"USD\"}", "amount.value" },
	{ "{\"value\":-5,\"currency\":\"USD\"}", "amount.value" },
	{ "{\"value\":\"12.00\",\"currency\":\"USD\"}", "amount.value" },
	{ "{\"value\":12.5,\"currency\":\"USD\"}", "amount.value" },
	{ "{\"currency\":\"USD\"}", "amount.value" },
	{ "{\"value\":1200,\"currency\":\"usd\"}", "amount.currency" },
	{ "{\"value\":1200,\"currency\":\"US\"}", "amount.currency" },
	{ "{\"value\":1200,\"currency\":\"USDX\"}", "amount.currency" },
	{ "{\"value\":1200}", "amount.currency" },
};

START_TEST(tokens_create)
{
	char *link, *bill, *other_link, *other_bill, *pm, *pm_other_user, *tok;
	const char *user = user_new("tok"), *user2 = user_new("tok2");
	const char *p = "/v1/pay-tokens";
	char big[4200 + 64], body[4400], id[64];
	struct harness_resp *r;

	link_new(&ta, user, &link, NULL);
	bill = bill_of(link, 4200);
	link_new(&tb, user, &other_link, NULL);
	other_bill = bill_of(other_link, 0);
	pm = method_new(ta.key, user, VISA, "visa");
	pm_other_user = method_new(ta.key, user2, MASTERCARD, "mastercard");

	/* client_user_id */
	INVALID(ta.key, "POST", p, "{}", NULL, "client_user_id", NULL);
	INVALID(ta.key, "POST", p, "{\"client_user_id\":\"\"}", NULL, "client_user_id", NULL);
	memset(big, 'u', 256);
	big[256] = '\0';
	INVALID(ta.key, "POST", p, harness_fmt("{\"client_user_id\":\"%s\"}", big), NULL,
	    "client_user_id", NULL);
	INVALID(ta.key, "POST", p, "{\"client_user_id\":7}", NULL, "client_user_id", NULL);
	big[255] = '\0';
	tok = pay_token_new(&ta, big, "", NULL, 0);
	free(tok);

	/* bill_id: unknown, another tenant's, deleted, another user's */
	REFUSED(ta.key, "POST", p, harness_fmt("{\"client_user_id\":\"%s\",\"bill_id\":"
	    "\"bill_01900000-0000-7000-8000-000000000000\"}", user), NULL, 404, "BILL_NOT_FOUND");
	REFUSED(ta.key, "POST", p, harness_fmt("{\"client_user_id\":\"%s\",\"bill_id\":\"%s\"}",
	    user, other_bill), NULL, 404, "BILL_NOT_FOUND");
	REFUSED(tb.key, "POST", p, harness_fmt("{\"client_user_id\":\"%s\",\"bill_id\":\"%s\"}",
	    user, bill), NULL, 404, "BILL_NOT_FOUND");
	INVALID(ta.key, "POST", p, harness_fmt("{\"client_user_id\":\"%s\",\"bill_id\":\"%s\"}",
	    user2, bill), NULL, "bill_id", "user_mismatch");

	/* amount */
	for (size_t i = 0; i < N(bad_amounts); i++)
		INVALID(ta.key, "POST", p, harness_fmt("{\"client_user_id\":\"%s\",\"amount\":%s}",
		    user, bad_amounts[i].json), NULL, bad_amounts[i].field, NULL);
	INVALID(ta.key, "POST", p, harness_fmt("{\"client_user_id\":\"%s\",\"bill_id\":\"%s\","
	    "\"amount\":{\"value\":1200,\"currency\":\"EUR\"}}", user, bill), NULL,
	    "amount.currency", "currency_mismatch");

	/* payment_method_id: unknown, another user's, another tenant's, deleted */
	REFUSED(ta.key, "POST", p, harness_fmt("{\"client_user_id\":\"%s\",\"payment_method_id\":"
	    "\"pm_01900000-0000-7000-8000-000000000000\"}", user), NULL, 404,
	    "PAYMENT_METHOD_NOT_FOUND");
	REFUSED(ta.key, "POST", p, harness_fmt("{\"client_user_id\":\"%s\",\"payment_method_id\":"
	    "\"%s\"}", user, pm_other_user), NULL, 404, "PAYMENT_METHOD_NOT_FOUND");
	REFUSED(tb.key, "POST", p, harness_fmt("{\"client_user_id\":\"%s\",\"payment_method_id\":"
	    "\"%s\"}", user, pm), NULL, 404, "PAYMENT_METHOD_NOT_FOUND");
	r = call(ta.key, "DELETE", harness_fmt("/v1/pay/payment-methods/%s", pm_other_user), NULL,
	    NULL);
	harness_expect(r, 200);
	harness_resp_free(r);
	REFUSED(ta.key, "POST", p, harness_fmt("{\"client_user_id\":\"%s\",\"payment_method_id\":"
	    "\"%s\"}", user2, pm_other_user), NULL, 404, "PAYMENT_METHOD_NOT_FOUND");

	/* metadata_json */
	INVALID(ta.key, "POST", p, harness_fmt("{\"client_user_id\":\"%s\",\"metadata_json\":"
	    "\"{not json\"}", user), NULL, "metadata_json", "invalid_json");
	memset(big, 'x', sizeof(big));
	memcpy(big, "[\\\"", 3);
	snprintf(big + 3 + 4094, 8, "\\\"]");	/* ["x...x"]: 4098 bytes of JSON */
	/* (harness_fmt's buffers are 4 KiB) */
	snprintf(body, sizeof(body), "{\"client_user_id\":\"%s\",\"metadata_json\":\"%s\"}",
	    user, big);
	INVALID(ta.key, "POST", p, body, NULL, "metadata_json", NULL);
	INVALID(ta.key, "POST", p, harness_fmt("{\"client_user_id\":\"%s\",\"metadata_json\":"
	    "{\"a\":1}}", user), NULL, "metadata_json", NULL);

	/* 4096 bytes exactly: ["x...x"] with 4092 x */
	memset(big, 'x', sizeof(big));
	memcpy(big, "[\\\"", 3);
	snprintf(big + 3 + 4092, 8, "\\\"]");
	snprintf(body, sizeof(body), "{\"client_user_id\":\"%s\",\"metadata_json\":\"%s\"}",
	    user, big);
	r = call(ta.key, "POST", p, body, NULL);
	harness_expect(r, 201);
	ck_assert_int_eq(rows("SELECT octet_length(metadata_json) FROM pay_tokens WHERE id = $1",
	    devacct_str(r, "pay_token_id")), 4096);
	harness_resp_free(r);

	/* the body's client_id: the dispatcher's 403 */
	REFUSED(ta.key, "POST", p, harness_fmt("{\"client_user_id\":\"%s\",\"client_id\":\"%s\"}",
	    user, tb.client), NULL, 403, "CLIENT_ID_MISMATCH");
	free(pay_token_new(&ta, user, harness_fmt(",\"client_id\":\"%s\"", ta.client), NULL, 0));

	/* every member at once; stored as given, the secret only as its hash */
	tok = pay_token_new(&ta, user, harness_fmt(",\"bill_id\":\"%s\",\"amount\":{\"value\":1234,"
	    "\"currency\":\"USD\"},\"payment_method_id\":\"%s\",\"metadata_json\":"
	    "\"{\\\"order\\\":\\\"o-1\\\"}\"", bill, pm), id, sizeof(id));
	ck_assert_int_eq(rows("SELECT count(*) FROM pay_tokens WHERE id = $1", id), 1);
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM pay_tokens WHERE id = $1 AND"
	    " client_id = $2 AND environment = 'sandbox' AND amount_minor = 1234 AND"
	    " currency = 'USD' AND metadata_json::jsonb = '{\"order\":\"o-1\"}'",
	    id, ta.client), 1);
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM pay_tokens t WHERE id = $1 AND"
	    " position($2 in t::text) = 0 AND position(substr($2, 9) in t::text) = 0", id, tok),
	    1);
	r = call(tok, "GET", "/v1/pay-tokens/current", NULL, NULL);
	harness_expect(r, 200);
	harness_resp_free(r);
	/* the bearer is not an API key */
	REFUSED(tok, "POST", p, harness_fmt("{\"client_user_id\":\"%s\"}", user), NULL, 401, NULL);
	REFUSED(NULL, "POST", p, harness_fmt("{\"client_user_id\":\"%s\"}", user), NULL, 401, NULL);
	/* a deleted bill is no bill */
	devacct_sql_exec("UPDATE bills SET deleted_at = now() WHERE id = $1", bill, NULL);
	REFUSED(ta.key, "POST", p, harness_fmt("{\"client_user_id\":\"%s\",\"bill_id\":\"%s\"}",
	    user, bill), NULL, 404, "BILL_NOT_FOUND");
	free(tok);
	free(link);
	free(bill);
	free(other_link);
	free(other_bill);
	free(pm);
	free(pm_other_user);
}
END_TEST

/* metadata_json's bound is in bytes, not characters: 2100 two-byte
 * characters are 4204 bytes */
START_TEST(tokens_metadata_bytes)
{
	const char *user = user_new("meta");
	char body[4400];
	size_t k;

	k = (size_t)snprintf(body, sizeof(body), "{\"client_user_id\":\"%s\","
	    "\"metadata_json\":\"[\\\"", user);
	for (int i = 0; i < 2100 && k + 16 < sizeof(body); i++) {
		body[k++] = '\xc3';
		body[k++] = '\xa9';
	}
	snprintf(body + k, sizeof(body) - k, "\\\"]\"}");
	INVALID(ta.key, "POST", "/v1/pay-tokens", body, NULL, "metadata_json", NULL);
}
END_TEST

static const char *const current_keys[] = { "pay_token_id", "object", "client_user_id",
	"expires_at", "bill_id", "amount", "bill", "payment_method_id", "client", NULL };

START_TEST(tokens_current)
{
	const char *user = user_new("cur");
	const char *p = "/v1/pay-tokens/current";
	char *link, *bill, *pm, *tok, id[64], *due, *balance;
	struct json_object *b, *c;
	char unknown[64];
	struct harness_resp *r;

	link_new(&ta, user, &link, NULL);
	bill = bill_of(link, 4217);
	pm = method_new(ta.key, user, VISA, "visa");

	/* a bare token */
	tok = pay_token_new(&ta, user, "", id, sizeof(id));
	r = call(tok, "GET", p, NULL, NULL);
	harness_expect(r, 200);
	keys_exactly(r->json, current_keys);
	ck_assert_pstr_eq(devacct_str(r, "pay_token_id"), id);
	ck_assert_pstr_eq(devacct_str(r, "object"), "pay_token");
	ck_assert_pstr_eq(devacct_str(r, "client_user_id"), user);
	instant_near(devacct_str(r, "expires_at"), 15 * 60 - 60, 15 * 60 + 5);
	ck_assert(jnull(r->json, "bill_id") && jnull(r->json, "amount") &&
	    jnull(r->json, "bill") && jnull(r->json, "payment_method_id"));
	c = devacct_json(r, "client");
	ck_assert_pstr_eq(jstr(c, "id"), ta.client);
	ck_assert_ptr_nonnull(jstr(c, "name"));
	ck_assert(json_object_is_type(json_object_object_get(c, "allowed_embed_origins"),
	    json_type_array));
	harness_resp_free(r);
	free(tok);

	/* bound to the bill: the amount is the bill's balance remaining */
	r = call(ta.key, "GET", harness_fmt("/v1/bills/%s", bill), NULL, NULL);
	harness_expect(r, 200);
	balance = strdup(devacct_str(r, "balance_remaining.value"));
	due = devacct_json(r, "due_date") != NULL ? strdup(devacct_str(r, "due_date")) : NULL;
	harness_resp_free(r);
	ck_assert_pstr_eq(balance, "42.17");
	tok = pay_token_new(&ta, user, harness_fmt(",\"bill_id\":\"%s\",\"payment_method_id\":"
	    "\"%s\"", bill, pm), id, sizeof(id));
	r = call(tok, "GET", p, NULL, NULL);
	harness_expect(r, 200);
	keys_exactly(r->json, current_keys);
	ck_assert_pstr_eq(devacct_str(r, "bill_id"), bill);
	ck_assert_pstr_eq(devacct_str(r, "payment_method_id"), pm);
	ck_assert_pstr_eq(devacct_str(r, "amount.value"), balance);
	ck_assert_pstr_eq(devacct_str(r, "amount.currency"), "USD");
	b = devacct_json(r, "bill");
	keys_exactly(b, (const char *const[]){ "id", "biller_name", "due_date_iso", "amount_due",
	    NULL });
	ck_assert_pstr_eq(jstr(b, "id"), bill);
	ck_assert_ptr_nonnull(jstr(b, "biller_name"));
	ck_assert_pstr_eq(devacct_str(r, "bill.amount_due.value"), "42.17");
	ck_assert_pstr_eq(devacct_str(r, "bill.amount_due.currency"), "USD");
	if (due != NULL && !jnull(b, "due_date_iso"))
		ck_assert_msg(prefixed(jstr(b, "due_date_iso"), due), "due %s, bill says %s",
		    jstr(b, "due_date_iso"), due);
	harness_resp_free(r);
	free(tok);

	/* the token's own amount comes first */
	tok = pay_token_new(&ta, user, harness_fmt(",\"bill_id\":\"%s\",\"amount\":{\"value\":"
	    "1205,\"currency\":\"USD\"}", bill), id, sizeof(id));
	r = call(tok, "GET", p, NULL, NULL);
	harness_expect(r, 200);
	ck_assert_pstr_eq(devacct_str(r, "amount.value"), "12.05");
	ck_assert_pstr_eq(devacct_str(r, "amount.currency"), "USD");
	ck_assert_pstr_eq(devacct_str(r, "bill.id"), bill);
	harness_resp_free(r);

	/* the client's embed origins, as the card page checks them */
	{
		struct harness_resp *cr = devacct_jwt(&dev, "POST", "/v1/iam/clients",
		    "{\"name\":\"pay embed\",\"allowedOrigins\":[\"https://shop.example\","
		    "\"http://127.0.0.1:8080\"]}", NULL);
		struct json_object *arr;
		char *client, *key, *t;

		harness_expect(cr, 201);
		client = strdup(devacct_str(cr, "client.id"));
		harness_resp_free(cr);
		key = devacct_key_new(&dev, client, "sandbox");
		t = pay_token_new(&(struct devacct_tenant){ client, key }, user, "", NULL, 0);
		cr = call(t, "GET", p, NULL, NULL);
		harness_expect(cr, 200);
		ck_assert_pstr_eq(devacct_str(cr, "client.id"), client);
		ck_assert_pstr_eq(devacct_str(cr, "client.name"), "pay embed");
		arr = devacct_json(cr, "client.allowed_embed_origins");
		ck_assert_int_eq(json_object_array_length(arr), 2);
		ck_assert_str_eq(json_object_get_string(json_object_array_get_idx(arr, 0)),
		    "https://shop.example");
		ck_assert_str_eq(json_object_get_string(json_object_array_get_idx(arr, 1)),
		    "http://127.0.0.1:8080");
		harness_resp_free(cr);
		free(client);
		free(key);
		free(t);
	}

	/* malformed, unknown, an API key, none */
	REFUSED("bds_pay_xyz", "GET", p, NULL, NULL, 401, "INVALID_PAY_TOKEN");
	REFUSED("bds_pay_", "GET", p, NULL, NULL, 401, "INVALID_PAY_TOKEN");
	REFUSED(harness_fmt("%.*s%s", (int)(strlen(tok) - 1), tok,
	    tok[strlen(tok) - 1] == 'A' ? "B" : "A"), "GET", p, NULL, NULL, 401,
	    "INVALID_PAY_TOKEN");
	memset(unknown, '0', sizeof(unknown));
	memcpy(unknown, "bds_pay_", 8);
	unknown[8 + 43 + 6] = '\0';
	REFUSED(unknown, "GET", p, NULL, NULL, 401, "INVALID_PAY_TOKEN");
	REFUSED(NULL, "GET", p, NULL, NULL, 401, NULL);
	REFUSED(ta.key, "GET", p, NULL, NULL, 401, NULL);

	/* expired: aged with SQL */
	devacct_sql_exec("UPDATE pay_tokens SET expires_at = now() - interval '1 second'"
	    " WHERE id = $1", id, NULL);
	REFUSED(tok, "GET", p, NULL, NULL, 401, "PAY_TOKEN_EXPIRED");
	REFUSED(tok, "POST", "/v1/pay/payment-methods", card_body(NULL, VISA, 12,
	    this_year() + 2, NULL), NULL, 401, "PAY_TOKEN_EXPIRED");
	/* one that did not expire yet still works */
	devacct_sql_exec("UPDATE pay_tokens SET expires_at = now() + interval '30 seconds'"
	    " WHERE id = $1", id, NULL);
	r = call(tok, "GET", p, NULL, NULL);
	harness_expect(r, 200);
	harness_resp_free(r);
	free(tok);
	free(link);
	free(bill);
	free(pm);
	free(balance);
	free(due);
}
END_TEST

/* ---- payment methods ---- */

START_TEST(methods_validation)
{
	const char *user = user_new("val");
	const char *p = "/v1/pay/payment-methods";
	int y = this_year() + 2, py, pmon;
	char *link, *lat, *tok, big[80];
	struct harness_resp *r;

	/* pan */
	INVALID(ta.key, "POST", p, card_body(user, "424242424242", 1, y, NULL), NULL, "pan",
	    "invalid_format");
	INVALID(ta.key, "POST", p, card_body(user, "42424242424242424242", 1, y, NULL), NULL,
	    "pan", "invalid_format");
	INVALID(ta.key, "POST", p, card_body(user, "4242 4242 4242 4242", 1, y, NULL), NULL,
	    "pan", "invalid_format");
	INVALID(ta.key, "POST", p, card_body(user, "4242-4242-4242-4242", 1, y, NULL), NULL,
	    "pan", "invalid_format");
	INVALID(ta.key, "POST", p, card_body(user, "", 1, y, NULL), NULL, "pan", "invalid_format");
	INVALID(ta.key, "POST", p, card_body(user, BAD_LUHN, 1, y, NULL), NULL, "pan",
	    "luhn_check_failed");
	INVALID(ta.key, "POST", p, harness_fmt("{\"client_user_id\":\"%s\",\"expiry_month\":1,"
	    "\"expiry_year\":%d}", user, y), NULL, "pan", NULL);
	INVALID(ta.key, "POST", p, harness_fmt("{\"client_user_id\":\"%s\",\"pan\":%s,"
	    "\"expiry_month\":1,\"expiry_year\":%d}", user, VISA, y), NULL, "pan", NULL);

	/* expiry_month */
	INVALID(ta.key, "POST", p, card_body(user, VISA, 13, y, NULL), NULL, "expiry_month",
	    "out_of_range");
	INVALID(ta.key, "POST", p, card_body(user, VISA, 0, y, NULL), NULL, "expiry_month",
	    "out_of_range");
	INVALID(ta.key, "POST", p, harness_fmt("{\"client_user_id\":\"%s\",\"pan\":\"%s\","
	    "\"expiry_month\":\"12\",\"expiry_year\":%d}", user, VISA, y), NULL, "expiry_month",
	    "invalid_type");
	INVALID(ta.key, "POST", p, harness_fmt("{\"client_user_id\":\"%s\",\"pan\":\"%s\","
	    "\"expiry_month\":1.5,\"expiry_year\":%d}", user, VISA, y), NULL, "expiry_month",
	    NULL);
	INVALID(ta.key, "POST", p, harness_fmt("{\"client_user_id\":\"%s\",\"pan\":\"%s\","
	    "\"expiry_year\":%d}", user, VISA, y), NULL, "expiry_month", NULL);

	/* expiry_year */
	INVALID(ta.key, "POST", p, card_body(user, VISA, 12, 99, NULL), NULL, "expiry_year",
	    "invalid_format");
	INVALID(ta.key, "POST", p, card_body(user, VISA, 12, 10000, NULL), NULL, "expiry_year",
	    "invalid_format");
	INVALID(ta.key, "POST", p, harness_fmt("{\"client_user_id\":\"%s\",\"pan\":\"%s\","
	    "\"expiry_month\":12}", user, VISA), NULL, "expiry_year", NULL);
	/* last month: expired; this month: good until its end */
	py = this_month() == 1 ? this_year() - 1 : this_year();
	pmon = this_month() == 1 ? 12 : this_month() - 1;
	INVALID(ta.key, "POST", p, card_body(user, VISA, pmon, py, NULL), NULL, "expiry_year",
	    "card_expired");
	INVALID(ta.key, "POST", p, card_body(user, VISA, 12, this_year() - 1, NULL), NULL,
	    "expiry_year", "card_expired");
	INVALID(ta.key, "POST", p, card_body(user, VISA, 12, 1000, NULL), NULL,
	    "expiry_year", "card_expired");
	r = method_post(ta.key, card_body(user, VISA, this_month(), this_year(), NULL));
	harness_expect(r, 201);
	harness_resp_free(r);

	/* cvv */
	INVALID(ta.key, "POST", p, harness_fmt("{\"client_user_id\":\"%s\",\"pan\":\"%s\","
	    "\"expiry_month\":1,\"expiry_year\":%d,\"cvv\":\"12\"}", user, VISA, y), NULL, "cvv",
	    "invalid_format");
	INVALID(ta.key, "POST", p, harness_fmt("{\"client_user_id\":\"%s\",\"pan\":\"%s\","
	    "\"expiry_month\":1,\"expiry_year\":%d,\"cvv\":\"12345\"}", user, VISA, y), NULL,
	    "cvv", "invalid_format");
	INVALID(ta.key, "POST", p, harness_fmt("{\"client_user_id\":\"%s\",\"pan\":\"%s\","
	    "\"expiry_month\":1,\"expiry_year\":%d,\"cvv\":\"12a\"}", user, VISA, y), NULL,
	    "cvv", "invalid_format");
	/* no cvv is fine; four digits too */
	r = method_post(ta.key, harness_fmt("{\"client_user_id\":\"%s\",\"pan\":\"%s\","
	    "\"expiry_month\":1,\"expiry_year\":%d}", user, MASTERCARD, y));
	harness_expect(r, 201);
	harness_resp_free(r);
	r = method_post(ta.key, harness_fmt("{\"client_user_id\":\"%s\",\"pan\":\"%s\","
	    "\"expiry_month\":1,\"expiry_year\":%d,\"cvv\":\"4321\"}", user, AMEX, y));
	harness_expect(r, 201);
	harness_resp_free(r);

	/* bucket */
	INVALID(ta.key, "POST", p, card_body(user, VISA, 12, y, ",\"bucket\":\"\""), NULL,
	    "bucket", NULL);
	memset(big, 'b', 65);
	big[65] = '\0';
	INVALID(ta.key, "POST", p, card_body(user, VISA, 12, y,
	    harness_fmt(",\"bucket\":\"%s\"", big)), NULL, "bucket", NULL);
	big[64] = '\0';
	r = method_post(ta.key, card_body(user, VISA, 12, y, harness_fmt(",\"bucket\":\"%s\"",
	    big)));
	harness_expect(r, 201);
	ck_assert_pstr_eq(devacct_str(r, "bucket"), big);
	harness_resp_free(r);

	/* client_user_id: required with a key, the token's with the others */
	INVALID(ta.key, "POST", p, card_body(NULL, VISA, 12, y, NULL), NULL, "client_user_id",
	    "required");
	tok = pay_token_new(&ta, user, "", NULL, 0);
	INVALID(tok, "POST", p, card_body("someone-else", VISA, 12, y, NULL), NULL,
	    "client_user_id", "user_mismatch");
	link_new(&ta, user, &link, &lat);
	INVALID(lat, "POST", p, card_body("someone-else", VISA, 12, y, NULL), NULL,
	    "client_user_id", "user_mismatch");

	/* nothing of the refused cards was kept */
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM payment_methods WHERE"
	    " client_id = $1 AND client_user_id = $2", ta.client, user), 3);
	/* the CVV is wiped, not stored: no column holds it */
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM information_schema.columns"
	    " WHERE table_name = 'payment_methods' AND column_name ILIKE '%cvv%'", NULL, NULL),
	    0);
	free(link);
	free(lat);
	free(tok);
}
END_TEST

/* A number or CVV far too long is refused with the same code as any
 * other malformed one (both checked before the test fails) */
START_TEST(methods_long_values)
{
	const char *user = user_new("long");
	int y = this_year() + 2;
	struct harness_resp *a, *b;
	char why[2][1024];

	a = method_post(ta.key, card_body(user, LONG_PAN, 1, y, NULL));
	b = method_post(ta.key, harness_fmt("{\"client_user_id\":\"%s\",\"pan\":\"%s\","
	    "\"expiry_month\":1,\"expiry_year\":%d,\"cvv\":\"%s\"}", user, VISA, y, LONG_CVV));
	snprintf(why[0], sizeof(why[0]), "%s", invalid_why(a, "pan", "invalid_format") ?
	    invalid_why(a, "pan", "invalid_format") : "ok");
	snprintf(why[1], sizeof(why[1]), "%s", invalid_why(b, "cvv", "invalid_format") ?
	    invalid_why(b, "cvv", "invalid_format") : "ok");
	harness_resp_free(a);
	harness_resp_free(b);
	ck_assert_msg(strcmp(why[0], "ok") == 0 && strcmp(why[1], "ok") == 0, "pan: %s; cvv: %s",
	    why[0], why[1]);
}
END_TEST

START_TEST(methods_credentials)
{
	const char *user = user_new("cred"), *p = "/v1/pay/payment-methods";
	char *link, *lat, *tok, *ids[N(cards)], *again, *by_tok, *by_lat;
	struct harness_resp *r;

	/* by API key: every test card and its brand */
	for (size_t i = 0; i < N(cards); i++)
		ids[i] = method_new(ta.key, user, cards[i].pan, cards[i].brand);
	for (size_t i = 0; i < N(cards); i++)
		for (size_t j = i + 1; j < N(cards); j++)
			ck_assert_str_ne(ids[i], ids[j]);
	for (size_t i = 0; i < N(more_cards); i++)
		free(method_new(ta.key, user, more_cards[i].pan, more_cards[i].brand));
	/* the stored row: brand, last4, sealed number, no number in clear */
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM payment_methods WHERE id = $1 AND"
	    " client_id = $2 AND environment = 'sandbox' AND last4 = '4242' AND brand = 'visa'"
	    " AND pan_sealed IS NOT NULL AND position(convert_to('" VISA "', 'UTF8') in"
	    " pan_sealed) = 0", ids[0], ta.client), 1);

	/* the same card twice: the same method, expiry and bucket the latest */
	r = method_post(ta.key, harness_fmt("{\"client_user_id\":\"%s\",\"pan\":\"%s\","
	    "\"expiry_month\":3,\"expiry_year\":%d,\"bucket\":\"rent\"}", user, VISA,
	    this_year() + 5));
	harness_expect(r, 201);
	ck_assert_pstr_eq(devacct_str(r, "payment_method_id"), ids[0]);
	ck_assert_int_eq(devacct_int(r, "exp_month"), 3);
	ck_assert_int_eq(devacct_int(r, "exp_year"), this_year() + 5);
	ck_assert_pstr_eq(devacct_str(r, "bucket"), "rent");
	harness_resp_free(r);
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM payment_methods WHERE"
	    " client_id = $1 AND client_user_id = $2", ta.client, user),
	    (long long)(N(cards) + N(more_cards)));
	ck_assert_int_eq(rows("SELECT exp_month * 10000 + exp_year FROM payment_methods"
	    " WHERE id = $1", ids[0]), 30000 + this_year() + 5);

	/* by pay token: the token's user, the same card the same method */
	tok = pay_token_new(&ta, user, "", NULL, 0);
	r = method_post(tok, card_body(NULL, VISA, 12, this_year() + 3, NULL));
	harness_expect(r, 201);
	ck_assert_pstr_eq(devacct_str(r, "payment_method_id"), ids[0]);
	ck_assert_pstr_eq(devacct_str(r, "client_user_id"), user);
	harness_resp_free(r);
	r = method_post(tok, card_body(user, VISA, 12, this_year() + 3, NULL));
	harness_expect(r, 201);
	ck_assert_pstr_eq(devacct_str(r, "payment_method_id"), ids[0]);
	harness_resp_free(r);
	by_tok = method_new(tok, NULL, VISA_2, "visa");

	/* by link access token: the link's user */
	link_new(&ta, user, &link, &lat);
	r = method_post(lat, card_body(NULL, MASTERCARD, 12, this_year() + 3, NULL));
	harness_expect(r, 201);
	ck_assert_pstr_eq(devacct_str(r, "payment_method_id"), ids[1]);
	ck_assert_pstr_eq(devacct_str(r, "client_user_id"), user);
	harness_resp_free(r);
	by_lat = method_new(lat, user, MASTERCARD_2, "mastercard");

	/* another user's same card is another method; another tenant's too */
	again = method_new(ta.key, "another-user", VISA, "visa");
	ck_assert_str_ne(again, ids[0]);
	free(again);
	again = method_new(tb.key, user, VISA, "visa");
	ck_assert_str_ne(again, ids[0]);
	free(again);

	/* the body's client_id of another client: the dispatcher's 403 */
	REFUSED(ta.key, "POST", p, card_body(user, VISA, 12, this_year() + 3,
	    harness_fmt(",\"client_id\":\"%s\"", tb.client)), NULL, 403, "CLIENT_ID_MISMATCH");
	REFUSED(ta.key, "POST", "/v1/pay/sessions", harness_fmt("{\"client_user_id\":\"%s\","
	    "\"client_id\":\"%s\"}", user, tb.client), NULL, 403, "CLIENT_ID_MISMATCH");
	/* no bearer, a bad one */
	REFUSED(NULL, "POST", p, card_body(user, VISA, 12, this_year() + 3, NULL), NULL, 401,
	    NULL);
	REFUSED("bds_pay_nope", "POST", p, card_body(user, VISA, 12, this_year() + 3, NULL),
	    NULL, 401, "INVALID_PAY_TOKEN");
	for (size_t i = 0; i < N(cards); i++)
		free(ids[i]);
	free(by_tok);
	free(by_lat);
	free(tok);
	free(link);
	free(lat);
}
END_TEST

/* The same card saved PARALLEL times at once: one method */
START_TEST(methods_parallel)
{
	struct harness_resp *out[PARALLEL];
	const char *user = user_new("mpar"), *body;
	char auth[256];

	snprintf(auth, sizeof(auth), "Authorization: Bearer %s", ta.key);
	body = card_body(user, DISCOVER, 12, this_year() + 3, NULL);
	harness_request_burst(PARALLEL, "POST", "sandbox", "/v1/pay/payment-methods",
	    (const char *const[]){ auth, "Content-Type: application/json", NULL }, body,
	    strlen(body), out);
	for (size_t i = 0; i < PARALLEL; i++) {
		harness_expect(out[i], 201);
		ck_assert_pstr_eq(devacct_str(out[i], "payment_method_id"),
		    devacct_str(out[0], "payment_method_id"));
	}
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM payment_methods WHERE"
	    " client_id = $1 AND client_user_id = $2", ta.client, user), 1);
	for (size_t i = 0; i < PARALLEL; i++)
		harness_resp_free(out[i]);
}
END_TEST

START_TEST(methods_list_delete)
{
	const char *user = user_new("list"), *p = "/v1/pay/payment-methods";
	char *ids[4], *cursor = NULL, *tok;
	const char *seen[8];
	size_t nseen = 0;
	struct harness_resp *r;
	struct json_object *items;

	ids[0] = method_new(ta.key, user, VISA, "visa");
	ids[1] = method_new(ta.key, user, MASTERCARD, "mastercard");
	ids[2] = method_new(ta.key, user, AMEX, "amex");
	ids[3] = method_new(ta.key, user, DISCOVER, "discover");

	/* the query */
	INVALID(ta.key, "GET", p, NULL, NULL, "client_user_id", NULL);
	INVALID(ta.key, "GET", harness_fmt("%s?client_user_id=%s&limit=0", p, user), NULL, NULL,
	    "limit", NULL);
	INVALID(ta.key, "GET", harness_fmt("%s?client_user_id=%s&limit=101", p, user), NULL, NULL,
	    "limit", NULL);
	INVALID(ta.key, "GET", harness_fmt("%s?client_user_id=%s&limit=x", p, user), NULL, NULL,
	    "limit", NULL);
	tok = pay_token_new(&ta, user, "", NULL, 0);
	REFUSED(tok, "GET", harness_fmt("%s?client_user_id=%s", p, user), NULL, NULL, 401, NULL);
	REFUSED(tok, "DELETE", harness_fmt("%s/%s", p, ids[0]), NULL, NULL, 401, NULL);

	/* delete one: 200, then 404 for it; its number erased */
	r = call(ta.key, "DELETE", harness_fmt("%s/%s", p, ids[1]), NULL, NULL);
	harness_expect(r, 200);
	keys_exactly(r->json, (const char *const[]){ "payment_method_id", "id", "object",
	    "deleted", NULL });
	ck_assert_pstr_eq(devacct_str(r, "payment_method_id"), ids[1]);
	ck_assert_pstr_eq(devacct_str(r, "id"), ids[1]);
	ck_assert_pstr_eq(devacct_str(r, "object"), "payment_method");
	ck_assert(devacct_bool(r, "deleted"));
	harness_resp_free(r);
	ck_assert_int_eq(rows("SELECT count(*) FROM payment_methods WHERE id = $1 AND"
	    " pan_sealed IS NULL AND deleted_at IS NOT NULL", ids[1]), 1);
	REFUSED(ta.key, "DELETE", harness_fmt("%s/%s", p, ids[1]), NULL, NULL, 404,
	    "PAYMENT_METHOD_NOT_FOUND");
	REFUSED(ta.key, "DELETE", harness_fmt("%s/pm_01900000-0000-7000-8000-000000000000", p),
	    NULL, NULL, 404, "PAYMENT_METHOD_NOT_FOUND");
	REFUSED(ta.key, "DELETE", harness_fmt("%s/nonsense", p), NULL, NULL, 404,
	    "PAYMENT_METHOD_NOT_FOUND");
	REFUSED(tb.key, "DELETE", harness_fmt("%s/%s", p, ids[0]), NULL, NULL, 404,
	    "PAYMENT_METHOD_NOT_FOUND");
	ck_assert_int_eq(rows("SELECT count(*) FROM payment_methods WHERE id = $1 AND"
	    " deleted_at IS NULL", ids[0]), 1);

	/* list by one: newest first, the deleted one left out */
	for (int pages = 0; pages < 8; pages++) {
		r = call(ta.key, "GET", harness_fmt("%s?client_user_id=%s&limit=1%s%s", p, user,
		    cursor ? "&cursor=" : "", cursor ? cursor : ""), NULL, NULL);
		harness_expect(r, 200);
		keys_exactly(r->json, (const char *const[]){ "payment_methods", "has_more",
		    "next_cursor", NULL });
		items = devacct_json(r, "payment_methods");
		ck_assert_int_eq(json_object_array_length(items), 1);
		keys_exactly(json_object_array_get_idx(items, 0), method_keys);
		seen[nseen++] = strdup(jstr(json_object_array_get_idx(items, 0), "id"));
		free(cursor);
		cursor = NULL;
		if (!devacct_bool(r, "has_more")) {
			ck_assert(jnull(r->json, "next_cursor"));
			harness_resp_free(r);
			break;
		}
		cursor = strdup(devacct_str(r, "next_cursor"));
		harness_resp_free(r);
	}
	ck_assert_int_eq(nseen, 3);
	ck_assert_str_eq(seen[0], ids[3]);
	ck_assert_str_eq(seen[1], ids[2]);
	ck_assert_str_eq(seen[2], ids[0]);
	for (size_t i = 0; i < nseen; i++)
		free((char *)seen[i]);
	/* the whole list at once, the default limit */
	r = call(ta.key, "GET", harness_fmt("%s?client_user_id=%s", p, user), NULL, NULL);
	harness_expect(r, 200);
	ck_assert_int_eq(json_object_array_length(devacct_json(r, "payment_methods")), 3);
	ck_assert(!devacct_bool(r, "has_more"));
	harness_resp_free(r);
	/* cursors: garbage, another user's, another tenant's */
	{
		char *c;

		r = call(ta.key, "GET", harness_fmt("%s?client_user_id=%s&limit=1", p, user), NULL,
		    NULL);
		harness_expect(r, 200);
		c = strdup(devacct_str(r, "next_cursor"));
		harness_resp_free(r);
		REFUSED(ta.key, "GET", harness_fmt("%s?client_user_id=%s&cursor=garbage", p, user),
		    NULL, NULL, 400, "INVALID_CURSOR");
		REFUSED(ta.key, "GET", harness_fmt("%s?client_user_id=other-%s&cursor=%s", p, user,
		    c), NULL, NULL, 400, "INVALID_CURSOR");
		REFUSED(tb.key, "GET", harness_fmt("%s?client_user_id=%s&cursor=%s", p, user, c),
		    NULL, NULL, 400, "INVALID_CURSOR");
		free(c);
	}

	/* the default limit is 25 */
	{
		const char *many = user_new("many");
		char pan[17];

		for (int i = 0; i < GEN_CARDS; i++)
			free(method_new(ta.key, many, gen_card(i, pan), "visa"));
		r = call(ta.key, "GET", harness_fmt("%s?client_user_id=%s", p, many), NULL, NULL);
		harness_expect(r, 200);
		ck_assert_int_eq(json_object_array_length(devacct_json(r, "payment_methods")), 25);
		ck_assert(devacct_bool(r, "has_more"));
		harness_resp_free(r);
		r = call(ta.key, "GET", harness_fmt("%s?client_user_id=%s&limit=100", p, many),
		    NULL, NULL);
		harness_expect(r, 200);
		ck_assert_int_eq(json_object_array_length(devacct_json(r, "payment_methods")),
		    GEN_CARDS);
		ck_assert(!devacct_bool(r, "has_more"));
		harness_resp_free(r);
	}
	/* another tenant sees none of them */
	r = call(tb.key, "GET", harness_fmt("%s?client_user_id=%s", p, user), NULL, NULL);
	harness_expect(r, 200);
	ck_assert_int_eq(json_object_array_length(devacct_json(r, "payment_methods")), 0);
	harness_resp_free(r);
	/* a deleted card saved again is a new method */
	r = method_post(ta.key, card_body(user, MASTERCARD, 12, this_year() + 3, NULL));
	harness_expect(r, 201);
	ck_assert_str_ne(devacct_str(r, "payment_method_id"), ids[1]);
	harness_resp_free(r);
	for (size_t i = 0; i < 4; i++)
		free(ids[i]);
	free(tok);
}
END_TEST

/* ---- sessions ---- */

START_TEST(sessions)
{
	const char *user = user_new("ses"), *url, *frag;
	char *link, *bill, want[256];
	struct harness_resp *r, *c;

	link_new(&ta, user, &link, NULL);
	bill = bill_of(link, 9900);
	INVALID(ta.key, "POST", "/v1/pay/sessions", "{}", NULL, "client_user_id", NULL);
	INVALID(ta.key, "POST", "/v1/pay/sessions", harness_fmt("{\"client_user_id\":\"%s\","
	    "\"bill_id\":\"%s\"}", "not-the-user", bill), NULL, "bill_id", "user_mismatch");
	INVALID(ta.key, "POST", "/v1/pay/sessions", harness_fmt("{\"client_user_id\":\"%s\","
	    "\"amount\":{\"value\":0,\"currency\":\"USD\"}}", user), NULL, "amount.value", NULL);
	REFUSED(tb.key, "POST", "/v1/pay/sessions", harness_fmt("{\"client_user_id\":\"%s\","
	    "\"bill_id\":\"%s\"}", user, bill), NULL, 404, "BILL_NOT_FOUND");
	INVALID(ta.key, "POST", "/v1/pay/sessions", harness_fmt("{\"client_user_id\":\"%s\","
	    "\"bill_id\":\"%s\",\"amount\":{\"value\":100,\"currency\":\"EUR\"}}", user, bill),
	    NULL, "amount.currency", "currency_mismatch");

	r = call(ta.key, "POST", "/v1/pay/sessions", harness_fmt("{\"client_user_id\":\"%s\","
	    "\"bill_id\":\"%s\",\"amount\":{\"value\":5000,\"currency\":\"USD\"}}", user, bill),
	    NULL);
	harness_expect(r, 201);
	keys_exactly(r->json, (const char *const[]){ "url", "pay_token_id", "expires_at", NULL });
	ck_assert_msg(is_id(devacct_str(r, "pay_token_id"), "pt_"), "%s", r->body);
	instant_near(devacct_str(r, "expires_at"), 15 * 60 - 60, 15 * 60 + 5);
	url = devacct_str(r, "url");
	snprintf(want, sizeof(want), "%s/pay?client_id=%s#pay_token=bds_pay_", DEFAULT_LINK_URL,
	    ta.client);
	ck_assert_msg(prefixed(url, want), "url %s, want %s...", url, want);
	frag = strstr(url, "#pay_token=") + strlen("#pay_token=");
	ck_assert_int_eq(strlen(frag), 8 + 43 + 6);

	/* the token works, and is the session's */
	c = call(frag, "GET", "/v1/pay-tokens/current", NULL, NULL);
	harness_expect(c, 200);
	ck_assert_pstr_eq(devacct_str(c, "pay_token_id"), devacct_str(r, "pay_token_id"));
	ck_assert_pstr_eq(devacct_str(c, "client_user_id"), user);
	ck_assert_pstr_eq(devacct_str(c, "bill_id"), bill);
	ck_assert_pstr_eq(devacct_str(c, "amount.value"), "50.00");
	ck_assert_pstr_eq(devacct_str(c, "client.id"), ta.client);
	harness_resp_free(c);
	/* and saves a card */
	free(method_new(frag, NULL, VISA, "visa"));
	harness_resp_free(r);
	free(link);
	free(bill);
}
END_TEST

/* ---- environments ---- */

/* call_on's refusal: status and code; the response freed */
#define ON_REFUSED(host, tok, m, p, b, s, c) do {				\
	struct harness_resp *r_ = call_on((host), (tok), (m), (p), (b));	\
	refused(r_, (s), (c));							\
	harness_resp_free(r_);							\
} while (0)

/* POST /v1/pay-tokens for user with the development key on the api host:
 * the secret (malloc'ed) */
static char *
dev_pay_token(const char *user)
{
	struct harness_resp *r = call_on("api", dev_key, "POST", "/v1/pay-tokens",
	    harness_fmt("{\"client_user_id\":\"%s\"}", user));
	char *tok;

	harness_expect(r, 201);
	tok = strdup(devacct_str(r, "pay_token"));
	harness_resp_free(r);
	return tok;
}

/* The same client's development key on the api host sees nothing of the
 * sandbox's: bills, cards, tokens; and its own work there */
START_TEST(environments)
{
	const char *user = user_new("env"), *pt = "/v1/pay-tokens";
	char *link, *bill, *pm, *tok, *dtok, *dpm;
	struct harness_resp *r;

	link_new(&ta, user, &link, NULL);
	bill = bill_of(link, 1000);
	pm = method_new(ta.key, user, VISA, "visa");
	tok = pay_token_new(&ta, user, "", NULL, 0);

	ON_REFUSED("api", dev_key, "POST", pt, harness_fmt("{\"client_user_id\":\"%s\","
	    "\"bill_id\":\"%s\"}", user, bill), 404, "BILL_NOT_FOUND");
	ON_REFUSED("api", dev_key, "POST", pt, harness_fmt("{\"client_user_id\":\"%s\","
	    "\"payment_method_id\":\"%s\"}", user, pm), 404, "PAYMENT_METHOD_NOT_FOUND");
	ON_REFUSED("api", dev_key, "DELETE", harness_fmt("/v1/pay/payment-methods/%s", pm), NULL,
	    404, "PAYMENT_METHOD_NOT_FOUND");
	r = call_on("api", dev_key, "GET",
	    harness_fmt("/v1/pay/payment-methods?client_user_id=%s", user), NULL);
	harness_expect(r, 200);
	ck_assert_int_eq(json_object_array_length(devacct_json(r, "payment_methods")), 0);
	harness_resp_free(r);
	/* a sandbox pay token is not taken on the api host */
	ON_REFUSED("api", tok, "GET", "/v1/pay-tokens/current", NULL, 401, NULL);

	/* the development environment's own token and card */
	dtok = dev_pay_token(user);
	r = call_on("api", dtok, "GET", "/v1/pay-tokens/current", NULL);
	harness_expect(r, 200);
	ck_assert_pstr_eq(devacct_str(r, "client_user_id"), user);
	harness_resp_free(r);
	r = call_on("api", dtok, "POST", "/v1/pay/payment-methods", card_body(NULL, VISA, 12,
	    this_year() + 3, NULL));
	harness_expect(r, 201);
	dpm = strdup(devacct_str(r, "payment_method_id"));
	harness_resp_free(r);
	/* the same card of the same user in another environment: another method */
	ck_assert_str_ne(dpm, pm);
	ck_assert_int_eq(rows("SELECT count(*) FROM payment_methods WHERE id = $1 AND"
	    " environment = 'development'", dpm), 1);
	/* and not the sandbox's to delete */
	REFUSED(ta.key, "DELETE", harness_fmt("/v1/pay/payment-methods/%s", dpm), NULL, NULL, 404,
	    "PAYMENT_METHOD_NOT_FOUND");
	free(link);
	free(bill);
	free(pm);
	free(tok);
	free(dtok);
	free(dpm);
}
END_TEST

/* ---- the link host ---- */

/* The card page's two calls on the link host: a pay token of either
 * environment, nothing else; no other pay route there */
START_TEST(link_host)
{
	const char *user = user_new("lnk"), *cur = "/v1/pay-tokens/current";
	const char *pm = "/v1/pay/payment-methods";
	char *link, *lat, *tok, *dtok, *card, id[64];
	struct harness_resp *r;

	link_new(&ta, user, &link, &lat);
	tok = pay_token_new(&ta, user, "", id, sizeof(id));
	r = call_on("link", tok, "GET", cur, NULL);
	harness_expect(r, 200);
	ck_assert_pstr_eq(devacct_str(r, "pay_token_id"), id);
	harness_resp_free(r);
	r = call_on("link", tok, "POST", pm, card_body(NULL, VISA_DEBIT, 12, this_year() + 3,
	    NULL));
	harness_expect(r, 201);
	ck_assert_pstr_eq(devacct_str(r, "client_user_id"), user);
	ck_assert_pstr_eq(devacct_str(r, "brand"), "visa");
	harness_resp_free(r);
	r = call_on("link", tok, "POST", pm, card_body(NULL, BAD_LUHN, 12, this_year() + 3,
	    NULL));
	invalid(r, "pan", "luhn_check_failed");
	harness_resp_free(r);

	/* a development pay token too */
	dtok = dev_pay_token(user);
	r = call_on("link", dtok, "GET", cur, NULL);
	harness_expect(r, 200);
	ck_assert_pstr_eq(devacct_str(r, "client_user_id"), user);
	harness_resp_free(r);

	/* no pay token: the coded 401 */
	card = strdup(card_body(user, VISA, 12, this_year() + 3, NULL));
	ON_REFUSED("link", NULL, "GET", cur, NULL, 401, "INVALID_PAY_TOKEN");
	ON_REFUSED("link", ta.key, "GET", cur, NULL, 401, "INVALID_PAY_TOKEN");
	ON_REFUSED("link", lat, "POST", pm, card, 401, "INVALID_PAY_TOKEN");
	ON_REFUSED("link", ta.key, "POST", pm, card, 401, "INVALID_PAY_TOKEN");
	ON_REFUSED("link", "bds_pay_nope", "GET", cur, NULL, 401, "INVALID_PAY_TOKEN");

	/* the other pay routes are not there */
	ON_REFUSED("link", tok, "POST", "/v1/pay-tokens",
	    harness_fmt("{\"client_user_id\":\"%s\"}", user), 404, NULL);
	ON_REFUSED("link", tok, "POST", "/v1/pay/payments", "{}", 404, NULL);
	ON_REFUSED("link", tok, "GET", "/v1/pay/payments/pay_01900000-0000-7000-8000-000000000000",
	    NULL, 404, NULL);
	ON_REFUSED("link", tok, "POST", "/v1/pay/sessions",
	    harness_fmt("{\"client_user_id\":\"%s\"}", user), 404, NULL);
	ON_REFUSED("link", tok, "GET", "/v1/pay-tokens/current/x", NULL, 404, NULL);

	/* an expired one: the app's answer */
	devacct_sql_exec("UPDATE pay_tokens SET expires_at = now() - interval '1 second'"
	    " WHERE id = $1", id, NULL);
	ON_REFUSED("link", tok, "GET", cur, NULL, 401, "PAY_TOKEN_EXPIRED");
	free(card);
	free(link);
	free(lat);
	free(tok);
	free(dtok);
}
END_TEST

/* ---- payments, gated ---- */

static long long
writes(const char *client)
{
	return devacct_sql_int("SELECT (SELECT count(*) FROM payment_attempts) * 1000000 +"
	    " (SELECT count(*) FROM idempotency_keys) * 1000 +"
	    " (SELECT count(*) FROM events WHERE client_id = $1) +"
	    " (SELECT count(*) FROM jobs WHERE kind = 'pay.process') * 100000000", client, NULL);
}

START_TEST(payments_gated)
{
	const char *user = user_new("gate"), *p = "/v1/pay/payments";
	char *link, *lat, *bill, *pm, *tok;
	const char *bearers[3];
	long long before;

	link_new(&ta, user, &link, &lat);
	bill = bill_of(link, 2500);
	pm = method_new(ta.key, user, VISA, "visa");
	tok = pay_token_new(&ta, user, harness_fmt(",\"bill_id\":\"%s\"", bill), NULL, 0);
	bearers[0] = ta.key, bearers[1] = lat, bearers[2] = tok;
	/* let the link's events and jobs settle, then count */
	ck_assert_msg(harness_jobs_wait_idle(IDLE_MS) == 0, "%s", harness_error());
	before = writes(ta.client);
	for (size_t i = 0; i < N(bearers); i++) {
		const char *extra[] = { harness_idem_header(), NULL };
		struct harness_resp *r = call(bearers[i], "POST", p,
		    harness_fmt("{\"bill_id\":\"%s\",\"payment_method_id\":\"%s\"}", bill, pm),
		    extra);

		refused(r, 501, "PAYMENT_EXECUTION_NOT_AVAILABLE");
		harness_resp_free(r);
		r = call(bearers[i], "POST", p, harness_fmt("{\"bill_id\":\"%s\","
		    "\"payment_method_id\":\"%s\",\"idempotency_key\":\"gate-%zu-%d\","
		    "\"amount_minor_units\":100,\"currency\":\"USD\"}", bill, pm, i, (int)getpid()),
		    NULL);
		refused(r, 501, "PAYMENT_EXECUTION_NOT_AVAILABLE");
		harness_resp_free(r);
	}
	ck_assert_int_eq(writes(ta.client), before);
	ck_assert_int_eq(rows("SELECT count(*) FROM payment_attempts WHERE bill_id = $1", bill),
	    0);
	ck_assert_int_eq(rows("SELECT count(*) FROM events WHERE type LIKE 'pay.%' AND"
	    " client_id = $1", ta.client), 0);
	/* auth comes first */
	REFUSED(NULL, "POST", p, harness_fmt("{\"bill_id\":\"%s\",\"payment_method_id\":\"%s\"}",
	    bill, pm), ((const char *const[]){ harness_idem_header(), NULL }), 401, NULL);
	REFUSED("bds_pay_nope", "POST", p, harness_fmt("{\"bill_id\":\"%s\","
	    "\"payment_method_id\":\"%s\"}", bill, pm),
	    ((const char *const[]){ harness_idem_header(), NULL }), 401, "INVALID_PAY_TOKEN");
	/* the body's shape before the gate */
	INVALID(ta.key, "POST", p, harness_fmt("{\"payment_method_id\":\"%s\"}", pm),
	    ((const char *const[]){ harness_idem_header(), NULL }), "bill_id", NULL);
	INVALID(ta.key, "POST", p, harness_fmt("{\"bill_id\":\"%s\"}", bill),
	    ((const char *const[]){ harness_idem_header(), NULL }), "payment_method_id", NULL);
	INVALID(ta.key, "POST", p, harness_fmt("{\"bill_id\":\"%s\",\"payment_method_id\":\"%s\","
	    "\"amount_minor_units\":\"10\"}", bill, pm),
	    ((const char *const[]){ harness_idem_header(), NULL }), "amount_minor_units", NULL);
	INVALID(ta.key, "POST", p, harness_fmt("{\"bill_id\":\"%s\",\"payment_method_id\":\"%s\","
	    "\"currency\":\"dollars\"}", bill, pm),
	    ((const char *const[]){ harness_idem_header(), NULL }), "currency", NULL);
	ck_assert_int_eq(writes(ta.client), before);
	free(link);
	free(lat);
	free(bill);
	free(pm);
	free(tok);
}
END_TEST

/* ---- payments, sandbox ---- */

static const char *const attempt_keys[] = { "payment_attempt_id", "id", "object", "bill_id",
	"payment_method_id", "status", "amount", "currency", "confirmation_number",
	"failure_code", "escalation_reason", "user_id", "created_at", "updated_at", NULL };

/* A payer: a user with a link, its PENDING bill of minor, a card, a pay
 * token bound to the bill and the link's access token. */
struct payer {
	char	*user, *link, *lat, *bill, *pm, *tok;
};

static void
payer_new(struct payer *y, const struct devacct_tenant *t, const char *tag, long long minor)
{
	y->user = strdup(user_new(tag));
	link_new(t, y->user, &y->link, &y->lat);
	y->bill = bill_of(y->link, minor);
	y->pm = method_new(t->key, y->user, VISA, "visa");
	y->tok = pay_token_new(t, y->user, harness_fmt(",\"bill_id\":\"%s\"", y->bill), NULL, 0);
}

static void
payer_free(struct payer *y)
{
	free(y->user);
	free(y->link);
	free(y->lat);
	free(y->bill);
	free(y->pm);
	free(y->tok);
}

/* POST /v1/pay/payments by bearer of bill with method pm, a fresh key and
 * body members more (may be NULL): the response */
static struct harness_resp *
pay_with(const char *bearer, const char *bill, const char *pm, const char *more)
{
	const char *extra[] = { harness_idem_header(), NULL };

	return call(bearer, "POST", "/v1/pay/payments", harness_fmt("{\"bill_id\":\"%s\","
	    "\"payment_method_id\":\"%s\"%s}", bill, pm, more ? more : ""), extra);
}

/* the same of y's bill with y's card */
static struct harness_resp *
pay(const char *bearer, const struct payer *y, const char *more)
{
	return pay_with(bearer, y->bill, y->pm, more);
}

/* pay_with's refusal: status and code; the response freed */
#define PAY_REFUSED(bearer, bill, pm, more, s, c) do {				\
	struct harness_resp *r_ = pay_with((bearer), (bill), (pm), (more));	\
	refused(r_, (s), (c));							\
	harness_resp_free(r_);							\
} while (0)
/* pay's 400 naming field (and code) */
#define PAY_INVALID(bearer, y, more, f, c) do {					\
	struct harness_resp *r_ = pay((bearer), (y), (more));			\
	invalid(r_, (f), (c));							\
	harness_resp_free(r_);							\
} while (0)

/* The attempt entity's rules; status as given */
static void
attempt_ok(struct json_object *o, const struct payer *y, const char *status,
    const char *amount)
{
	keys_exactly(o, attempt_keys);
	ck_assert_msg(is_id(jstr(o, "payment_attempt_id"), "pay_"), "%s",
	    json_object_to_json_string(o));
	ck_assert_pstr_eq(jstr(o, "id"), jstr(o, "payment_attempt_id"));
	ck_assert_pstr_eq(jstr(o, "object"), "payment_attempt");
	ck_assert_pstr_eq(jstr(o, "bill_id"), y->bill);
	ck_assert_pstr_eq(jstr(o, "payment_method_id"), y->pm);
	ck_assert_pstr_eq(jstr(o, "user_id"), y->user);
	ck_assert_pstr_eq(jstr(o, "status"), status);
	ck_assert_pstr_eq(jstr(o, "amount"), amount);
	ck_assert_pstr_eq(jstr(o, "currency"), "USD");
	instant_near(jstr(o, "created_at"), -300, 5);
	instant_near(jstr(o, "updated_at"), -300, 5);
}

/* Schedule a payment of minor by bearer: 202 SCHEDULED; its id (malloc'ed) */
static char *
scheduled(const char *bearer, const struct payer *y, long long minor, const char *amount)
{
	struct harness_resp *r = pay(bearer, y, minor > 0 ?
	    harness_fmt(",\"amount_minor_units\":%lld,\"currency\":\"USD\"", minor) : NULL);
	char *id;

	harness_expect(r, 202);
	attempt_ok(r->json, y, "SCHEDULED", amount);
	ck_assert(jnull(r->json, "confirmation_number") && jnull(r->json, "failure_code") &&
	    jnull(r->json, "escalation_reason"));
	id = strdup(devacct_str(r, "payment_attempt_id"));
	harness_resp_free(r);
	return id;
}

/* Wait for bds-jobs to settle attempt; GET it by bearer: 200, status */
static struct harness_resp *
settled(const char *bearer, const struct payer *y, const char *id, const char *status,
    const char *amount)
{
	struct harness_resp *r;

	ck_assert_msg(harness_jobs_wait_settled("pay.process", NULL, SETTLE_MS) == 0, "%s",
	    harness_error());
	r = call(bearer, "GET", harness_fmt("/v1/pay/payments/%s", id), NULL, NULL);
	harness_expect(r, 200);
	attempt_ok(r->json, y, status, amount);
	return r;
}

/* The event of type about attempt id at the receiver: its data.object (a
 * new reference, caller puts) */
static struct json_object *
event_of(struct receiver *rc, const char *type, const char *id)
{
	const char *body = devacct_received(rc, type, id);
	struct json_object *b, *o, *t;

	ck_assert_msg(body != NULL, "no %s of %s at the receiver", type, id);
	ck_assert_ptr_nonnull(b = json_tokener_parse(body));
	ck_assert(json_object_object_get_ex(b, "type", &t));
	ck_assert_str_eq(json_object_get_string(t), type);
	ck_assert_ptr_nonnull(o = json_object_object_get(json_object_object_get(b, "data"),
	    "object"));
	ck_assert_pstr_eq(jstr(o, "id"), id);
	json_object_get(o);
	json_object_put(b);
	return o;
}

/* bds-deliver, then the receiver holds bill.updated of bill with change,
 * status and paid_reason pay_succeeded */
static void
bill_paid_event(struct receiver *rc, const char *bill, const char *change, const char *status)
{
	int seen = 0;

	ck_assert_int_eq(harness_deliver_once(), 0);
	for (size_t i = 0; !seen && receiver_wait(rc, i, 2000) != NULL; i++) {
		struct json_object *ev = json_tokener_parse(receiver_wait(rc, i, 0)->body), *o;

		ck_assert_ptr_nonnull(ev);
		o = json_object_object_get(json_object_object_get(ev, "data"), "object");
		if (same(jstr(ev, "type"), "bill.updated") && same(jstr(o, "id"), bill) &&
		    same(jstr(o, "change"), change)) {
			ck_assert_pstr_eq(jstr(o, "status"), status);
			ck_assert_pstr_eq(jstr(o, "paid_reason"), "pay_succeeded");
			seen = 1;
		}
		json_object_put(ev);
	}
	ck_assert_msg(seen, "no bill.updated %s of %s", change, bill);
}

/* The bill's status as the API shows it */
static void
bill_status(const struct payer *y, const char *status)
{
	struct harness_resp *r = call(ta.key, "GET", harness_fmt("/v1/bills/%s", y->bill), NULL,
	    NULL);

	harness_expect(r, 200);
	ck_assert_msg(strcmp(devacct_str(r, "status"), status) == 0, "bill %s is %s, want %s",
	    y->bill, devacct_str(r, "status"), status);
	harness_resp_free(r);
}

START_TEST(outcomes)
{
	static const struct {
		long long	 minor;
		const char	*amount, *status, *code, *reason, *event;
	} o[] = {
		{ 50001, "500.01", "FAILED", "card_declined", NULL, "pay.failed" },
		{ 50002, "500.02", "ESCALATED", NULL, "manual_review", "pay.escalated" },
		{ 50003, "500.03", "FAILED", "insufficient_funds", NULL, "pay.failed" },
		{ 50004, "500.04", "FAILED", "processing_error", NULL, "pay.failed" },
	};
	struct receiver *rc = receiver_start(NULL);
	struct payer y;
	struct json_object *e;
	struct harness_resp *r;
	char *id;
	const char *conf;

	ck_assert_msg(rc != NULL, "%s", receiver_error());
	devacct_subscribe(ta.key, rc);
	payer_new(&y, &ta, "out", 100000);
	/* each outcome of the sandbox processor leaves the bill PENDING */
	for (size_t i = 0; i < N(o); i++) {
		id = scheduled(ta.key, &y, o[i].minor, o[i].amount);
		e = event_of(rc, "pay.scheduled", id);
		keys_exactly(e, attempt_keys);
		ck_assert_pstr_eq(jstr(e, "status"), "SCHEDULED");
		ck_assert_pstr_eq(jstr(e, "amount"), o[i].amount);
		json_object_put(e);
		r = settled(ta.key, &y, id, o[i].status, o[i].amount);
		ck_assert(jnull(r->json, "confirmation_number"));
		if (o[i].code != NULL) {
			ck_assert_pstr_eq(devacct_str(r, "failure_code"), o[i].code);
			ck_assert(jnull(r->json, "escalation_reason"));
		} else {
			ck_assert_pstr_eq(devacct_str(r, "escalation_reason"), o[i].reason);
			ck_assert(jnull(r->json, "failure_code"));
		}
		harness_resp_free(r);
		e = event_of(rc, o[i].event, id);
		/* the attempt, and the code of a failure or the reason of an escalation */
		ck_assert_int_eq(json_object_object_length(e), N(attempt_keys));
		ck_assert_pstr_eq(jstr(e, "payment_attempt_id"), id);
		ck_assert_pstr_eq(jstr(e, "bill_id"), y.bill);
		ck_assert_pstr_eq(jstr(e, "status"), o[i].status);
		if (o[i].code != NULL) {
			ck_assert_pstr_eq(jstr(e, "code"), o[i].code);
			ck_assert_pstr_eq(jstr(e, "failure_code"), o[i].code);
		} else {
			ck_assert_pstr_eq(jstr(e, "reason"), o[i].reason);
			ck_assert_pstr_eq(jstr(e, "escalation_reason"), o[i].reason);
		}
		json_object_put(e);
		bill_status(&y, "PENDING");
		free(id);
	}
	ck_assert_int_eq(rows("SELECT count(*) FROM events WHERE type = 'bill.updated' AND"
	    " data->'object'->>'id' = $1 AND data->'object'->>'change' IN ('paid',"
	    " 'partially_paid')", y.bill), 0);

	/* success, the whole balance by default: PAID */
	id = scheduled(ta.key, &y, 0, "1000.00");
	r = settled(ta.key, &y, id, "SUCCEEDED", "1000.00");
	conf = devacct_str(r, "confirmation_number");
	ck_assert_msg(prefixed(conf, "SBX-") && strlen(conf) == 16, "%s", r->body);
	for (size_t i = 4; i < 16; i++)
		ck_assert_msg((conf[i] >= 'A' && conf[i] <= 'Z') || (conf[i] >= '0' &&
		    conf[i] <= '9'), "confirmation %s", conf);
	ck_assert(jnull(r->json, "failure_code") && jnull(r->json, "escalation_reason"));
	e = event_of(rc, "pay.succeeded", id);
	keys_exactly(e, attempt_keys);
	ck_assert_pstr_eq(jstr(e, "status"), "SUCCEEDED");
	ck_assert_pstr_eq(jstr(e, "confirmation_number"), conf);
	ck_assert_pstr_eq(jstr(e, "amount"), "1000.00");
	ck_assert_pstr_eq(jstr(e, "currency"), "USD");
	json_object_put(e);
	harness_resp_free(r);
	bill_paid_event(rc, y.bill, "paid", "PAID");
	bill_status(&y, "PAID");

	/* the bill's pay token shows nothing left to pay */
	r = call(y.tok, "GET", "/v1/pay-tokens/current", NULL, NULL);
	harness_expect(r, 200);
	ck_assert_pstr_eq(devacct_str(r, "amount.value"), "0.00");
	ck_assert_pstr_eq(devacct_str(r, "amount.currency"), "USD");
	harness_resp_free(r);

	/* a PAID bill: 409, by each bearer */
	PAY_REFUSED(ta.key, y.bill, y.pm, NULL, 409, "BILL_ALREADY_PAID");
	PAY_REFUSED(y.lat, y.bill, y.pm, NULL, 409, "BILL_ALREADY_PAID");
	PAY_REFUSED(y.tok, y.bill, y.pm, NULL, 409, "BILL_ALREADY_PAID");
	ck_assert_int_eq(rows("SELECT count(*) FROM payment_attempts WHERE bill_id = $1", y.bill),
	    5);
	free(id);
	payer_free(&y);
	receiver_stop(rc);
}
END_TEST

START_TEST(partial)
{
	struct receiver *rc = receiver_start(NULL);
	struct harness_resp *r;
	struct payer y;
	char *id;

	ck_assert_msg(rc != NULL, "%s", receiver_error());
	devacct_subscribe(ta.key, rc);
	payer_new(&y, &ta, "part", 10000);
	/* by the link's access token: 30.00 of 100.00 */
	id = scheduled(y.lat, &y, 3000, "30.00");
	r = settled(y.lat, &y, id, "SUCCEEDED", "30.00");
	harness_resp_free(r);
	bill_status(&y, "PARTIALLY_PAID");
	bill_paid_event(rc, y.bill, "partially_paid", "PARTIALLY_PAID");
	free(id);

	/* the bill's pay token now shows what is left */
	r = call(y.tok, "GET", "/v1/pay-tokens/current", NULL, NULL);
	harness_expect(r, 200);
	ck_assert_pstr_eq(devacct_str(r, "amount.value"), "70.00");
	harness_resp_free(r);

	/* the rest: more than it is refused, by default the rest, then PAID */
	PAY_INVALID(y.tok, &y, ",\"amount_minor_units\":7001", "amount_minor_units",
	    "out_of_range");
	id = scheduled(y.tok, &y, 0, "70.00");
	r = settled(y.tok, &y, id, "SUCCEEDED", "70.00");
	harness_resp_free(r);
	bill_status(&y, "PAID");
	bill_paid_event(rc, y.bill, "paid", "PAID");
	free(id);
	payer_free(&y);
	receiver_stop(rc);
}
END_TEST

START_TEST(payments_refused)
{
	struct payer y, z, w;
	struct harness_resp *r;
	const char *p = "/v1/pay/payments";
	char *pm_other, *pm_del, *id, *tok_pm;

	payer_new(&y, &ta, "ref", 20000);
	payer_new(&z, &ta, "ref2", 20000);	/* same tenant, another user */
	payer_new(&w, &tb, "ref3", 20000);	/* another tenant */

	/* the idempotency key */
	INVALID(ta.key, "POST", p, harness_fmt("{\"bill_id\":\"%s\",\"payment_method_id\":\"%s\"}",
	    y.bill, y.pm), NULL, "Idempotency-Key", "required");
	INVALID(ta.key, "POST", p, harness_fmt("{\"bill_id\":\"%s\",\"payment_method_id\":\"%s\","
	    "\"idempotency_key\":\"one-%d\"}", y.bill, y.pm, (int)getpid()),
	    ((const char *const[]){ "Idempotency-Key: two", NULL }), "idempotency_key",
	    "header_mismatch");
	/* the body */
	PAY_INVALID(ta.key, &y, ",\"amount_minor_units\":0", "amount_minor_units", NULL);
	PAY_INVALID(ta.key, &y, ",\"amount_minor_units\":\"10\"", "amount_minor_units", NULL);
	PAY_INVALID(ta.key, &y, ",\"currency\":\"usd\"", "currency", NULL);
	PAY_INVALID(ta.key, &y, ",\"currency\":\"EUR\"", "currency", "currency_mismatch");
	PAY_INVALID(ta.key, &y, ",\"amount_minor_units\":20001", "amount_minor_units",
	    "out_of_range");
	PAY_INVALID(ta.key, &y, ",\"amount_minor_units\":9223372036854775807",
	    "amount_minor_units", NULL);
	PAY_INVALID(ta.key, &y, ",\"amount_minor_units\":1e30", "amount_minor_units", NULL);
	PAY_INVALID(ta.key, &y, ",\"amount_minor_units\":-1", "amount_minor_units", NULL);

	/* bills not the caller's; a link token: its link's bills only; a bound
	 * pay token: its bill only */
	PAY_REFUSED(ta.key, w.bill, y.pm, NULL, 404, "BILL_NOT_FOUND");
	PAY_REFUSED(ta.key, "bill_01900000-0000-7000-8000-000000000000",
	    "pm_01900000-0000-7000-8000-000000000000", NULL, 404, "BILL_NOT_FOUND");
	PAY_REFUSED(y.lat, z.bill, z.pm, NULL, 404, "BILL_NOT_FOUND");
	PAY_REFUSED(y.tok, z.bill, z.pm, NULL, 404, "BILL_NOT_FOUND");

	/* methods: another user's, another tenant's, deleted, not the bound one */
	PAY_REFUSED(ta.key, y.bill, z.pm, NULL, 404, "PAYMENT_METHOD_NOT_FOUND");
	PAY_REFUSED(ta.key, y.bill, w.pm, NULL, 404, "PAYMENT_METHOD_NOT_FOUND");
	pm_del = method_new(ta.key, y.user, MASTERCARD, "mastercard");
	r = call(ta.key, "DELETE", harness_fmt("/v1/pay/payment-methods/%s", pm_del), NULL, NULL);
	harness_expect(r, 200);
	harness_resp_free(r);
	PAY_REFUSED(ta.key, y.bill, pm_del, NULL, 404, "PAYMENT_METHOD_NOT_FOUND");
	pm_other = method_new(ta.key, y.user, AMEX, "amex");
	tok_pm = pay_token_new(&ta, y.user, harness_fmt(",\"bill_id\":\"%s\",\"payment_method_id\":"
	    "\"%s\"", y.bill, y.pm), NULL, 0);
	PAY_REFUSED(tok_pm, y.bill, pm_other, NULL, 404, "PAYMENT_METHOD_NOT_FOUND");
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM payment_attempts WHERE"
	    " bill_id IN ($1, $2)", y.bill, z.bill), 0);
	ck_assert_int_eq(rows("SELECT count(*) FROM payment_attempts WHERE bill_id = $1", w.bill),
	    0);

	/* an expired pay token; a deleted bill */
	{
		char tid[64], *t = pay_token_new(&ta, y.user, "", tid, sizeof(tid));

		devacct_sql_exec("UPDATE pay_tokens SET expires_at = now() - interval '1 second'"
		    " WHERE id = $1", tid, NULL);
		PAY_REFUSED(t, y.bill, y.pm, NULL, 401, "PAY_TOKEN_EXPIRED");
		free(t);
	}
	devacct_sql_exec("UPDATE bills SET deleted_at = now() WHERE id = $1", z.bill, NULL);
	PAY_REFUSED(ta.key, z.bill, z.pm, NULL, 404, "BILL_NOT_FOUND");
	PAY_REFUSED(z.lat, z.bill, z.pm, NULL, 404, "BILL_NOT_FOUND");

	/* one in flight: 409 PAYMENT_IN_PROGRESS while bds-jobs is stopped */
	ck_assert_msg(harness_jobs_stop() == 0, "%s", harness_error());
	id = scheduled(tok_pm, &y, 1000, "10.00");
	PAY_REFUSED(ta.key, y.bill, y.pm, ",\"amount_minor_units\":2000", 409,
	    "PAYMENT_IN_PROGRESS");
	PAY_REFUSED(y.lat, y.bill, y.pm, NULL, 409, "PAYMENT_IN_PROGRESS");
	/* the card expires before the job runs: FAILED expired_card */
	devacct_sql_exec("UPDATE payment_methods SET exp_year = 2020, exp_month = 1"
	    " WHERE id = $1 AND $2 <> ''", y.pm, "x");
	ck_assert_msg(harness_jobs_start() == 0, "%s", harness_error());
	r = settled(ta.key, &y, id, "FAILED", "10.00");
	ck_assert_pstr_eq(devacct_str(r, "failure_code"), "expired_card");
	harness_resp_free(r);
	bill_status(&y, "PENDING");
	free(id);
	free(pm_other);
	free(pm_del);
	free(tok_pm);
	payer_free(&y);
	payer_free(&z);
	payer_free(&w);
}
END_TEST

START_TEST(idempotency)
{
	struct payer y;
	struct harness_resp *a, *b;
	const char *p = "/v1/pay/payments";
	char key[96], hdr[128], body[512];

	payer_new(&y, &ta, "idem", 30000);
	snprintf(key, sizeof(key), "pay-idem-%d-%ld", (int)getpid(), (long)random());
	snprintf(hdr, sizeof(hdr), "Idempotency-Key: %s", key);
	snprintf(body, sizeof(body), "{\"bill_id\":\"%s\",\"payment_method_id\":\"%s\","
	    "\"amount_minor_units\":1500}", y.bill, y.pm);

	/* jobs stopped: the replay must not meet its own attempt as "in progress" */
	ck_assert_msg(harness_jobs_stop() == 0, "%s", harness_error());
	a = call(ta.key, "POST", p, body, (const char *const[]){ hdr, NULL });
	harness_expect(a, 202);
	b = call(ta.key, "POST", p, body, (const char *const[]){ hdr, NULL });
	harness_expect(b, 202);
	ck_assert_pstr_eq(devacct_str(b, "payment_attempt_id"),
	    devacct_str(a, "payment_attempt_id"));
	ck_assert_pstr_eq(devacct_str(b, "status"), "SCHEDULED");
	harness_resp_free(b);
	/* the same key with another body */
	b = call(ta.key, "POST", p, harness_fmt("{\"bill_id\":\"%s\",\"payment_method_id\":\"%s\","
	    "\"amount_minor_units\":1600}", y.bill, y.pm), (const char *const[]){ hdr, NULL });
	refused(b, 409, "IDEMPOTENCY_CONFLICT");
	harness_resp_free(b);
	ck_assert_int_eq(rows("SELECT count(*) FROM payment_attempts WHERE bill_id = $1", y.bill),
	    1);
	ck_assert_msg(harness_jobs_start() == 0, "%s", harness_error());
	ck_assert_msg(harness_jobs_wait_settled("pay.process", NULL, SETTLE_MS) == 0, "%s",
	    harness_error());
	/* after it settled, the replay is still the first answer */
	b = call(ta.key, "POST", p, body, (const char *const[]){ hdr, NULL });
	harness_expect(b, 202);
	ck_assert_pstr_eq(devacct_str(b, "payment_attempt_id"),
	    devacct_str(a, "payment_attempt_id"));
	harness_resp_free(b);
	harness_resp_free(a);

	/* the key in the body; the same in the header too is fine */
	snprintf(key, sizeof(key), "pay-body-%d-%ld", (int)getpid(), (long)random());
	snprintf(body, sizeof(body), "{\"bill_id\":\"%s\",\"payment_method_id\":\"%s\","
	    "\"amount_minor_units\":1700,\"idempotency_key\":\"%s\"}", y.bill, y.pm, key);
	snprintf(hdr, sizeof(hdr), "Idempotency-Key: %s", key);
	a = call(ta.key, "POST", p, body, NULL);
	harness_expect(a, 202);
	b = call(ta.key, "POST", p, body, (const char *const[]){ hdr, NULL });
	harness_expect(b, 202);
	ck_assert_pstr_eq(devacct_str(b, "payment_attempt_id"),
	    devacct_str(a, "payment_attempt_id"));
	harness_resp_free(b);
	b = call(ta.key, "POST", p, harness_fmt("{\"bill_id\":\"%s\",\"payment_method_id\":\"%s\","
	    "\"amount_minor_units\":1800,\"idempotency_key\":\"%s\"}", y.bill, y.pm, key), NULL);
	refused(b, 409, "IDEMPOTENCY_CONFLICT");
	harness_resp_free(b);
	harness_resp_free(a);
	ck_assert_msg(harness_jobs_wait_settled("pay.process", NULL, SETTLE_MS) == 0, "%s",
	    harness_error());
	ck_assert_int_eq(rows("SELECT count(*) FROM payment_attempts WHERE bill_id = $1", y.bill),
	    2);

	/* keys are each client's own: another tenant's same key is a payment of its own */
	{
		struct payer w;

		payer_new(&w, &tb, "idem2", 30000);
		a = call(tb.key, "POST", p, harness_fmt("{\"bill_id\":\"%s\","
		    "\"payment_method_id\":\"%s\",\"amount_minor_units\":1700,"
		    "\"idempotency_key\":\"%s\"}", w.bill, w.pm, key), NULL);
		harness_expect(a, 202);
		ck_assert_pstr_eq(devacct_str(a, "bill_id"), w.bill);
		harness_resp_free(a);
		ck_assert_int_eq(rows("SELECT count(*) FROM payment_attempts WHERE bill_id = $1",
		    w.bill), 1);
		ck_assert_msg(harness_jobs_wait_settled("pay.process", NULL, SETTLE_MS) == 0, "%s",
		    harness_error());
		payer_free(&w);
	}
	payer_free(&y);
}
END_TEST

START_TEST(parallel)
{
	struct harness_resp *out[PARALLEL];
	struct payer y;
	char hdr[128], auth[256];
	const char *body;

	payer_new(&y, &ta, "par", 40000);
	snprintf(hdr, sizeof(hdr), "Idempotency-Key: pay-par-%d-%ld", (int)getpid(),
	    (long)random());
	snprintf(auth, sizeof(auth), "Authorization: Bearer %s", ta.key);
	body = harness_fmt("{\"bill_id\":\"%s\",\"payment_method_id\":\"%s\","
	    "\"amount_minor_units\":2500}", y.bill, y.pm);
	harness_request_burst(PARALLEL, "POST", "sandbox", "/v1/pay/payments",
	    (const char *const[]){ hdr, auth, "Content-Type: application/json", NULL }, body,
	    strlen(body), out);
	for (size_t i = 0; i < PARALLEL; i++) {
		harness_expect(out[i], 202);
		ck_assert_pstr_eq(devacct_str(out[i], "payment_attempt_id"),
		    devacct_str(out[0], "payment_attempt_id"));
	}
	ck_assert_int_eq(rows("SELECT count(*) FROM payment_attempts WHERE bill_id = $1", y.bill),
	    1);
	ck_assert_msg(harness_jobs_wait_settled("pay.process", NULL, SETTLE_MS) == 0, "%s",
	    harness_error());
	ck_assert_int_eq(rows("SELECT count(*) FROM events WHERE type = 'pay.scheduled' AND"
	    " data->'object'->>'bill_id' = $1", y.bill), 1);
	for (size_t i = 0; i < PARALLEL; i++)
		harness_resp_free(out[i]);

	payer_free(&y);
}
END_TEST

/* One of the parallel requests with keys of their own */
struct racer {
	pthread_t		 th;
	const char		*auth, *body;
	char			 key[128];
	struct harness_resp	*r;
};

static void *
racer_run(void *arg)
{
	struct racer *x = arg;

	x->r = harness_request("POST", "sandbox", "/v1/pay/payments",
	    (const char *const[]){ x->key, x->auth, "Content-Type: application/json", NULL },
	    x->body, strlen(x->body));
	return NULL;
}

/* PARALLEL requests for one bill, each with its own key, at once: one
 * attempt, the others 409 PAYMENT_IN_PROGRESS */
START_TEST(parallel_keys)
{
	struct racer x[PARALLEL];
	struct payer y;
	char auth[256], body[512];
	size_t ok = 0, busy = 0;

	payer_new(&y, &ta, "race", 40000);
	snprintf(auth, sizeof(auth), "Authorization: Bearer %s", ta.key);
	snprintf(body, sizeof(body), "{\"bill_id\":\"%s\",\"payment_method_id\":\"%s\","
	    "\"amount_minor_units\":2500}", y.bill, y.pm);
	/* bds-jobs stopped: the one scheduled stays in flight */
	ck_assert_msg(harness_jobs_stop() == 0, "%s", harness_error());
	for (size_t i = 0; i < PARALLEL; i++) {
		x[i].auth = auth;
		x[i].body = body;
		snprintf(x[i].key, sizeof(x[i].key), "Idempotency-Key: pay-race-%d-%zu-%ld",
		    (int)getpid(), i, (long)random());
		ck_assert_int_eq(pthread_create(&x[i].th, NULL, racer_run, &x[i]), 0);
	}
	for (size_t i = 0; i < PARALLEL; i++)
		ck_assert_int_eq(pthread_join(x[i].th, NULL), 0);
	for (size_t i = 0; i < PARALLEL; i++) {
		if (x[i].r->status == 202)
			ok++;
		else {
			refused(x[i].r, 409, "PAYMENT_IN_PROGRESS");
			busy++;
		}
		harness_resp_free(x[i].r);
	}
	ck_assert_int_eq(ok, 1);
	ck_assert_int_eq(busy, PARALLEL - 1);
	ck_assert_int_eq(rows("SELECT count(*) FROM payment_attempts WHERE bill_id = $1", y.bill),
	    1);
	ck_assert_int_eq(rows("SELECT count(*) FROM events WHERE type = 'pay.scheduled' AND"
	    " data->'object'->>'bill_id' = $1", y.bill), 1);
	ck_assert_msg(harness_jobs_start() == 0, "%s", harness_error());
	ck_assert_msg(harness_jobs_wait_settled("pay.process", NULL, SETTLE_MS) == 0, "%s",
	    harness_error());
	bill_status(&y, "PARTIALLY_PAID");
	payer_free(&y);
}
END_TEST

START_TEST(payments_get)
{
	struct payer y;
	struct harness_resp *r;
	char *id, *unbound;
	const char *bearers[3];

	payer_new(&y, &ta, "get", 12300);
	/* a pay token bound to no bill pays its user's bill: part, then the rest */
	unbound = pay_token_new(&ta, y.user, "", NULL, 0);
	id = scheduled(unbound, &y, 2300, "23.00");
	r = settled(unbound, &y, id, "SUCCEEDED", "23.00");
	harness_resp_free(r);
	bill_status(&y, "PARTIALLY_PAID");
	free(id);
	id = scheduled(y.tok, &y, 0, "100.00");
	bearers[0] = ta.key, bearers[1] = y.lat, bearers[2] = y.tok;
	for (size_t i = 0; i < N(bearers); i++) {
		r = settled(bearers[i], &y, id, "SUCCEEDED", "100.00");
		harness_resp_free(r);
	}
	bill_status(&y, "PAID");
	free(unbound);
	REFUSED(tb.key, "GET", harness_fmt("/v1/pay/payments/%s", id), NULL, NULL, 404,
	    "PAYMENT_NOT_FOUND");
	REFUSED(ta.key, "GET", "/v1/pay/payments/pay_01900000-0000-7000-8000-000000000000", NULL,
	    NULL, 404, "PAYMENT_NOT_FOUND");
	REFUSED(ta.key, "GET", "/v1/pay/payments/nonsense", NULL, NULL, 404,
	    "PAYMENT_NOT_FOUND");
	REFUSED("bds_pay_nope", "GET", harness_fmt("/v1/pay/payments/%s", id), NULL, NULL, 401,
	    "INVALID_PAY_TOKEN");
	/* the same client's other user, another tenant's: their pay tokens and
	 * their links' tokens */
	for (int k = 0; k < 2; k++) {
		struct payer v;
		char path[128];

		snprintf(path, sizeof(path), "/v1/pay/payments/%s", id);
		payer_new(&v, k == 0 ? &ta : &tb, "get2", 12300);
		REFUSED(v.tok, "GET", path, NULL, NULL, 404, "PAYMENT_NOT_FOUND");
		REFUSED(v.lat, "GET", path, NULL, NULL, 404, "PAYMENT_NOT_FOUND");
		payer_free(&v);
	}
	free(id);
	payer_free(&y);
}
END_TEST

/* A pay token minted for an amount pays that amount (the one the card
 * page shows), and no other */
START_TEST(token_amount)
{
	struct payer y;
	struct harness_resp *r;
	char *tok, *id;

	payer_new(&y, &ta, "tamt", 10000);
	tok = pay_token_new(&ta, y.user, harness_fmt(",\"bill_id\":\"%s\",\"amount\":"
	    "{\"value\":1205,\"currency\":\"USD\"}", y.bill), NULL, 0);
	PAY_INVALID(tok, &y, ",\"amount_minor_units\":1300", "amount_minor_units", NULL);
	id = scheduled(tok, &y, 0, "12.05");
	r = settled(tok, &y, id, "SUCCEEDED", "12.05");
	harness_resp_free(r);
	bill_status(&y, "PARTIALLY_PAID");
	/* the API key pays what is left by default */
	free(id);
	id = scheduled(ta.key, &y, 0, "87.95");
	r = settled(ta.key, &y, id, "SUCCEEDED", "87.95");
	harness_resp_free(r);
	bill_status(&y, "PAID");
	free(id);
	free(tok);
	payer_free(&y);
}
END_TEST

/* A card deleted (its number erased) while its payment waits is not
 * charged: the attempt does not succeed (or the delete waits for it) */
START_TEST(deleted_card_in_flight)
{
	struct payer y;
	struct harness_resp *r;
	char *id;
	long del;

	payer_new(&y, &ta, "delc", 10000);
	ck_assert_msg(harness_jobs_stop() == 0, "%s", harness_error());
	id = scheduled(ta.key, &y, 4000, "40.00");
	r = call(ta.key, "DELETE", harness_fmt("/v1/pay/payment-methods/%s", y.pm), NULL, NULL);
	del = r->status;
	ck_assert_msg(del == 200 || del == 409, "delete: %ld %s", del, r->body);
	harness_resp_free(r);
	ck_assert_msg(harness_jobs_start() == 0, "%s", harness_error());
	ck_assert_msg(harness_jobs_wait_settled("pay.process", NULL, SETTLE_MS) == 0, "%s",
	    harness_error());
	r = call(ta.key, "GET", harness_fmt("/v1/pay/payments/%s", id), NULL, NULL);
	harness_expect(r, 200);
	if (del == 200) {
		ck_assert_msg(strcmp(devacct_str(r, "status"), "FAILED") == 0,
		    "the deleted card was charged: %s", r->body);
		ck_assert_ptr_nonnull(devacct_str(r, "failure_code"));
		harness_resp_free(r);
		bill_status(&y, "PENDING");
	} else
		harness_resp_free(r);
	free(id);
	payer_free(&y);
}
END_TEST

/* A bill paid by other means or deleted while a payment waits: the
 * payment fails, so no bill is paid twice */
START_TEST(bill_changes_in_flight)
{
	struct payer y, z;
	struct harness_resp *r;
	char *paid, *gone;

	payer_new(&y, &ta, "infl", 10000);
	payer_new(&z, &ta, "infl2", 10000);
	ck_assert_msg(harness_jobs_stop() == 0, "%s", harness_error());
	paid = scheduled(ta.key, &y, 0, "100.00");
	gone = scheduled(ta.key, &z, 0, "100.00");
	r = call(ta.key, "POST", harness_fmt("/v1/bills/%s/mark-paid", y.bill), "{}",
	    (const char *const[]){ harness_idem_header(), NULL });
	harness_expect(r, 200);
	harness_resp_free(r);
	devacct_sql_exec("UPDATE bills SET deleted_at = now() WHERE id = $1", z.bill, NULL);
	ck_assert_msg(harness_jobs_start() == 0, "%s", harness_error());
	r = settled(ta.key, &y, paid, "FAILED", "100.00");
	ck_assert_ptr_nonnull(devacct_str(r, "failure_code"));
	harness_resp_free(r);
	r = settled(ta.key, &z, gone, "FAILED", "100.00");
	ck_assert_ptr_nonnull(devacct_str(r, "failure_code"));
	harness_resp_free(r);
	bill_status(&y, "PAID");
	ck_assert_int_eq(rows("SELECT count(*) FROM events WHERE type = 'bill.updated' AND"
	    " data->'object'->>'id' = $1 AND data->'object'->>'paid_reason' = 'pay_succeeded'",
	    y.bill), 0);
	free(paid);
	free(gone);
	payer_free(&y);
	payer_free(&z);
}
END_TEST

/* A bill in a currency of no minor unit (JPY): amounts are whole yen */
START_TEST(yen)
{
	struct payer y;
	struct harness_resp *r;
	char *id;

	payer_new(&y, &ta, "yen", 5000);
	devacct_sql_exec("UPDATE bills SET currency = 'JPY' WHERE id = $1", y.bill, NULL);
	PAY_INVALID(ta.key, &y, ",\"currency\":\"USD\"", "currency", "currency_mismatch");
	r = pay(ta.key, &y, ",\"amount_minor_units\":1205,\"currency\":\"JPY\"");
	harness_expect(r, 202);
	ck_assert_pstr_eq(devacct_str(r, "amount"), "1205");
	ck_assert_pstr_eq(devacct_str(r, "currency"), "JPY");
	id = strdup(devacct_str(r, "payment_attempt_id"));
	harness_resp_free(r);
	ck_assert_msg(harness_jobs_wait_settled("pay.process", NULL, SETTLE_MS) == 0, "%s",
	    harness_error());
	r = call(ta.key, "GET", harness_fmt("/v1/pay/payments/%s", id), NULL, NULL);
	harness_expect(r, 200);
	ck_assert_pstr_eq(devacct_str(r, "status"), "SUCCEEDED");
	ck_assert_pstr_eq(devacct_str(r, "amount"), "1205");
	harness_resp_free(r);
	free(id);
	payer_free(&y);
}
END_TEST

/* ---- the stack's processes and what it keeps ---- */

/* ---- the card key ---- */

#define PAN_KEY2 "a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f90"
#define PAN_KEY3 "0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c4b5a69788796a5b4c3d2e1f0"

static void
config_append(const char *text)
{
	FILE *f = fopen(harness_config_path(), "a");

	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	ck_assert_int_eq(fclose(f), 0);
}

/* How many live cards are not sealed under key id */
static long long
cards_not_under(const char *id)
{
	return devacct_sql_int("SELECT count(*) FROM payment_methods WHERE pan_sealed IS NOT NULL"
	    " AND pan_key_id IS DISTINCT FROM $1", id, NULL);
}

/*
 * `bdsctl keys rotate-pan` (docs/pay.md "Keys and rotation"): the cards
 * sealed under the key derived from secret_key move to a configured key,
 * then to a newer one once the older is listed among the old keys; a
 * sealed number is never the same bytes twice; a card whose key left the
 * ring is named and left as it is (exit 1); the same card is still the
 * same method afterwards (the fingerprint has its own key). Last test of
 * the gated stack: it rewrites the config bdsctl reads (bds-api keeps the
 * one it started with).
 */
START_TEST(rotate_pan)
{
	const char *args[] = { "keys", "rotate-pan", NULL };
	const char *user = user_new("rotate");
	char *id = method_new(ta.key, user, VISA_2, "visa"), *again, *before, *after;

	ck_assert_int_eq(cards_not_under("secret_key.pan"), 0);
	/* the current key is the derived one: nothing to do */
	ck_assert_int_eq(harness_bdsctl(args), 0);
	before = devacct_sql_value("SELECT encode(pan_sealed, 'hex') FROM payment_methods"
	    " WHERE id = $1", id, NULL);

	config_append("pay.pan_key_id = pan.v2\npay_pan_key = " PAN_KEY2 "\n");
	ck_assert_int_eq(harness_bdsctl(args), 0);
	ck_assert_int_eq(cards_not_under("pan.v2"), 0);
	after = devacct_sql_value("SELECT encode(pan_sealed, 'hex') FROM payment_methods"
	    " WHERE id = $1", id, NULL);
	ck_assert_ptr_nonnull(after);
	ck_assert_str_ne(before, after);
	free(before);
	free(after);

	/* a newer key without the older one in the ring: every card named, none moved */
	config_append("pay_pan_key_id = pan.v3\npay_pan_key = " PAN_KEY3 "\n");
	ck_assert_int_eq(harness_bdsctl(args), 1);
	ck_assert_int_eq(cards_not_under("pan.v2"), 0);
	/* with it listed: all move */
	config_append("pay_pan_keys_old = pan.v2=" PAN_KEY2 "\n");
	ck_assert_int_eq(harness_bdsctl(args), 0);
	ck_assert_int_eq(cards_not_under("pan.v3"), 0);

	/* a sealed number copied to another row opens for none: named, left */
	again = method_new(ta.key, user_new("rotate"), MASTERCARD_2, "mastercard");
	devacct_sql_exec("UPDATE payment_methods SET pan_sealed = (SELECT pan_sealed FROM"
	    " payment_methods WHERE id = $1), pan_key_id = 'pan.v2' WHERE id = $2", id, again);
	ck_assert_int_eq(harness_bdsctl(args), 1);
	ck_assert_int_eq(cards_not_under("pan.v3"), 1);

	/* the same card of the same user: the same method, whatever its sealing */
	free(again);
	again = method_new(ta.key, user, VISA_2, "visa");
	ck_assert_str_eq(again, id);
	free(again);
	free(id);
}
END_TEST

/* /proc/pid/limits says "Max core file size 0 0" */
static void
no_core(pid_t pid, const char *what)
{
	char *text = harness_slurp(harness_fmt("/proc/%d/limits", (int)pid));
	const char *l;
	char soft[32], hard[32];

	ck_assert_msg(text != NULL, "%s %d: no limits", what, (int)pid);
	ck_assert_msg((l = strstr(text, "Max core file size")) != NULL, "%s", text);
	ck_assert_int_eq(sscanf(l + strlen("Max core file size"), "%31s %31s", soft, hard), 2);
	ck_assert_msg(strcmp(soft, "0") == 0 && strcmp(hard, "0") == 0,
	    "%s %d may dump core: %.60s", what, (int)pid, l);
	free(text);
}

START_TEST(no_core_dumps)
{
	pid_t w[16], jobs = harness_jobs_pid();
	size_t n = harness_api_workers(w, N(w));
	char *kids;

	ck_assert_int_gt(harness_api_pid(), 0);
	no_core(harness_api_pid(), "bds-api master");
	ck_assert_int_gt(n, 0);
	for (size_t i = 0; i < n && i < N(w); i++)
		no_core(w[i], "bds-api worker");
	ck_assert_int_gt(jobs, 0);
	no_core(jobs, "bds-jobs");
	/* and bds-jobs's own workers */
	kids = harness_slurp(harness_fmt("/proc/%d/task/%d/children", (int)jobs, (int)jobs));
	ck_assert_ptr_nonnull(kids);
	for (char *t = strtok(kids, " \n"); t != NULL; t = strtok(NULL, " \n"))
		no_core((pid_t)atoi(t), "bds-jobs child");
	free(kids);
}
END_TEST

START_TEST(secrets_not_kept)
{
	const char *needles[3 * (N(pans_sent) + N(more_cards) + GEN_CARDS) + 2 * N(cvvs_sent)];
	char *made[N(pans_sent) + N(more_cards) + GEN_CARDS + 2 * N(cvvs_sent)];
	size_t m = 0;
	char gen[GEN_CARDS][17];
	char found[512];
	size_t n = 0;
	int rc;

	/* every number as sent, without its last four, without its first six */
	for (size_t i = 0; i < N(pans_sent) + N(more_cards) + GEN_CARDS; i++) {
		const char *pan = i < N(pans_sent) ? pans_sent[i] :
		    i < N(pans_sent) + N(more_cards) ? more_cards[i - N(pans_sent)].pan :
		    gen_card((int)(i - N(pans_sent) - N(more_cards)),
		    gen[i - N(pans_sent) - N(more_cards)]);
		size_t l = strlen(pan);

		needles[n++] = pan;
		if (l >= 13 && strspn(pan, "0123456789") == l) {
			needles[n++] = made[m++] = strdup(harness_fmt("%.*s", (int)(l - 4), pan));
			needles[n++] = pan + 6;
		}
	}
	/* three or four digits alone are in every log by chance: the CVVs as
	 * the requests carried them */
	for (size_t i = 0; i < N(cvvs_sent); i++) {
		needles[n++] = made[m++] = strdup(harness_fmt("\"cvv\":\"%s\"", cvvs_sent[i]));
		needles[n++] = made[m++] = strdup(harness_fmt("\"cvv\": \"%s\"", cvvs_sent[i]));
	}
	/* the scan can fail: a needle planted in a log is found */
	{
		const char *probe[] = { "pay-secret-scan-probe-4242" };
		FILE *f = fopen(harness_fmt("%s/probe.log", harness_dir()), "w");

		ck_assert_ptr_nonnull(f);
		fputs("x pay-secret-scan-probe-4242 y\n", f);
		fclose(f);
		rc = harness_secret_scan(probe, 1, found, sizeof(found));
		ck_assert_msg(rc == 1, "probe: %d %s", rc, rc == -1 ? harness_error() : found);
		ck_assert_msg(strstr(found, "probe.log") != NULL, "%s", found);
		unlink(harness_fmt("%s/probe.log", harness_dir()));
		/* and one in the database (the client's id) */
		probe[0] = ta.client;
		rc = harness_secret_scan(probe, 1, found, sizeof(found));
		ck_assert_msg(rc == 1 && strstr(found, "pg_dump") != NULL, "probe: %d %s", rc,
		    rc == -1 ? harness_error() : found);
		probe[0] = "pay-secret-scan-probe-4242";
		rc = harness_secret_scan(probe, 1, found, sizeof(found));
		ck_assert_msg(rc == 0, "probe: %d %s", rc, rc == -1 ? harness_error() : found);
	}
	/* flush what bds-deliver and the jobs still hold, then scan */
	ck_assert_int_eq(harness_deliver_once(), 0);
	ck_assert_msg(harness_jobs_wait_idle(IDLE_MS) == 0, "%s", harness_error());
	rc = harness_secret_scan(needles, n, found, sizeof(found));
	while (m > 0)
		free(made[--m]);
	ck_assert_msg(rc != -1, "scan: %s", harness_error());
	ck_assert_msg(rc == 0, "a card secret is kept: %s", found);
}
END_TEST

static Suite *
pay_suite(void)
{
	Suite *s = suite_create("e2e_pay");
	TCase *tc = tcase_create("gated");

	tcase_add_unchecked_fixture(tc, gated_up, tenants_down);
	tcase_add_checked_fixture(tc, recover, NULL);
	tcase_set_timeout(tc, 180);
	tcase_add_test(tc, tokens_create);
	tcase_add_test(tc, tokens_metadata_bytes);
	tcase_add_test(tc, tokens_current);
	tcase_add_test(tc, methods_validation);
	tcase_add_test(tc, methods_long_values);
	tcase_add_test(tc, methods_credentials);
	tcase_add_test(tc, methods_parallel);
	tcase_add_test(tc, methods_list_delete);
	tcase_add_test(tc, sessions);
	tcase_add_test(tc, environments);
	tcase_add_test(tc, link_host);
	tcase_add_test(tc, payments_gated);
	tcase_add_test(tc, rotate_pan);
	tcase_add_test(tc, no_core_dumps);
	tcase_add_test(tc, secrets_not_kept);
	suite_add_tcase(s, tc);

	tc = tcase_create("sandbox");
	tcase_add_unchecked_fixture(tc, sandbox_up, tenants_down);
	tcase_add_checked_fixture(tc, recover, NULL);
	tcase_set_timeout(tc, 240);
	tcase_add_test(tc, outcomes);
	tcase_add_test(tc, partial);
	tcase_add_test(tc, payments_refused);
	tcase_add_test(tc, idempotency);
	tcase_add_test(tc, parallel);
	tcase_add_test(tc, parallel_keys);
	tcase_add_test(tc, payments_get);
	tcase_add_test(tc, token_amount);
	tcase_add_test(tc, deleted_card_in_flight);
	tcase_add_test(tc, bill_changes_in_flight);
	tcase_add_test(tc, yen);
	tcase_add_test(tc, no_core_dumps);
	tcase_add_test(tc, secrets_not_kept);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return harness_run_suite(pay_suite());
}
