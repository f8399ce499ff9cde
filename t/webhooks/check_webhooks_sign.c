/*
 * lib/webhook_sign.c: signing secrets (format, sealing), the signature
 * (fixed vectors and OpenSSL's HMAC as an independent implementation), the
 * Service-Signature header and its verification (rotation, replay window,
 * tampering), the envelope, ISO timestamps and transport messages.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <curl/curl.h>
#include <json-c/json.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "core/arena.h"
#include "core/crypto.h"
#include "core/json.h"
#include "tcheck.h"
#include "webhooks/webhooks_sign.h"

#define N(x) (sizeof(x) / sizeof((x)[0]))

static struct arena a;
static unsigned char key[32];

static void
setup(void)
{
	ck_assert_int_eq(crypto_setup(), 0);
	arena_init(&a);
	for (size_t i = 0; i < sizeof(key); i++)
		key[i] = (unsigned char)(0xa0 + i);
}

static void
teardown(void)
{
	arena_free(&a);
}

/* The signature as OpenSSL computes it: hex HMAC-SHA256(secret, "<t>.<body>"). */
static void
openssl_v1(const char *secret, long long t, const char *body, size_t len, char hex[65])
{
	unsigned char mac[EVP_MAX_MD_SIZE];
	unsigned int maclen = 0;
	char *msg;
	int n;

	n = snprintf(NULL, 0, "%lld.", t);
	ck_assert_ptr_nonnull(msg = malloc((size_t)n + len + 1));
	snprintf(msg, (size_t)n + 1, "%lld.", t);
	memcpy(msg + n, body, len);
	ck_assert_ptr_nonnull(HMAC(EVP_sha256(), secret, (int)strlen(secret),
	    (unsigned char *)msg, (size_t)n + len, mac, &maclen));
	ck_assert_uint_eq(maclen, 32);
	for (unsigned i = 0; i < maclen; i++)
		snprintf(hex + 2 * i, 3, "%02x", mac[i]);
	free(msg);
}

/* ---- secrets ---- */

START_TEST(secret_format)
{
	char *s1 = webhooks_secret_new(&a), *s2 = webhooks_secret_new(&a);
	unsigned char *raw;
	size_t n;

	ck_assert_msg(strncmp(s1, WEBHOOKS_SECRET_PREFIX, 6) == 0, "%s", s1);
	ck_assert_uint_eq(strlen(s1), 6 + 43);	/* 32 bytes base64url, no padding */
	ck_assert_uint_eq(strspn(s1 + 6, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	    "0123456789-_"), 43);
	ck_assert_int_eq(crypto_b64url_decode(&a, s1 + 6, &raw, &n), 0);
	ck_assert_uint_eq(n, WEBHOOKS_SECRET_BYTES);
	ck_assert_str_ne(s1, s2);
}
END_TEST

START_TEST(secret_seal_round_trip)
{
	const char *secret = "whsec_round_trip_secret";
	char *sealed = webhooks_secret_seal(&a, key, "whk_1", secret), *open;
	unsigned char key2[32];

	ck_assert_ptr_nonnull(sealed);
	ck_assert_msg(strncmp(sealed, "\\x", 2) == 0, "%s", sealed);
	/* at rest: neither the secret nor its hex */
	ck_assert_ptr_null(strstr(sealed, secret));
	ck_assert_ptr_null(strstr(sealed, crypto_hex_encode(&a, secret, strlen(secret))));
	ck_assert_ptr_nonnull(open = webhooks_secret_open(&a, key, "whk_1", sealed));
	ck_assert_str_eq(open, secret);
	/* bound to the row and the key */
	ck_assert_ptr_null(webhooks_secret_open(&a, key, "whk_2", sealed));
	memcpy(key2, key, sizeof(key2));
	key2[0] ^= 1;
	ck_assert_ptr_null(webhooks_secret_open(&a, key2, "whk_1", sealed));
	ck_assert_ptr_null(webhooks_secret_open(&a, key, "whk_1", "\\x00"));
	ck_assert_ptr_null(webhooks_secret_open(&a, key, "whk_1", NULL));
}
END_TEST

/* ---- signatures ---- */

static const struct {
	const char	*secret;
	long long	 t;
	const char	*body;
	const char	*hex;	/* NULL: compare with OpenSSL only */
} vectors[] = {
	{ "whsec_test_secret_0001", 1700000000,
	  "{\"id\":\"evt_1\",\"type\":\"bill.created\"}",
	  "2341d01b16d7666b828a22b7b9ec294c2b94b7287270ce24c9dfccec9b78766e" },
	{ "0123456789abcdef", 1767225600, "",
	  "94c938d2b1c578578ee7f11ebcdb10788f36c591914e4d4362ff7dad5839d209" },
	{ "whsec_" "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", 0, "{}", NULL },
	{ "a secret longer than the sixty-four byte HMAC block of SHA-256, hashed first",
	  4102444800LL, "{\"x\":\"\xc3\xa9\"}", NULL },
	{ "whsec_x", 1, "line\nbreaks\r\nand \"quotes\"", NULL },
};

START_TEST(sign_vectors)
{
	char want[65];
	char *got = webhooks_sign_v1(&a, vectors[_i].secret, vectors[_i].t, vectors[_i].body,
	    strlen(vectors[_i].body));

	openssl_v1(vectors[_i].secret, vectors[_i].t, vectors[_i].body,
	    strlen(vectors[_i].body), want);
	ck_assert_str_eq(got, want);
	if (vectors[_i].hex != NULL)
		ck_assert_str_eq(got, vectors[_i].hex);
}
END_TEST

START_TEST(signature_header)
{
	const char *body = "{\"id\":\"evt_1\"}";
	const char *one[] = { "whsec_current_secret" };
	const char *two[] = { "whsec_current_secret", "whsec_previous_secret" };
	char v_cur[65], v_prev[65], want[256];

	openssl_v1(one[0], 1767225600, body, strlen(body), v_cur);
	openssl_v1(two[1], 1767225600, body, strlen(body), v_prev);
	snprintf(want, sizeof(want), "t=1767225600,v1=%s", v_cur);
	ck_assert_str_eq(webhooks_signature(&a, 1767225600, body, strlen(body), one, 1), want);
	snprintf(want, sizeof(want), "t=1767225600,v1=%s,v1=%s", v_cur, v_prev);
	ck_assert_str_eq(webhooks_signature(&a, 1767225600, body, strlen(body), two, 2), want);
}
END_TEST

/* ---- verification (what a receiver does) ---- */

#define NOW	1767225600LL
#define BODY	"{\"id\":\"evt_9\",\"type\":\"bill.updated\"}"

static const struct {
	const char		*name;
	long long		 t;		/* signing time */
	const char		*secrets[2];	/* signing secrets (1 or 2) */
	const char		*verify_with;
	const char		*body;		/* as received; NULL: as signed */
	enum webhooks_verify	 want;
} verifies[] = {
	{ "fresh", NOW, { "whsec_a" }, "whsec_a", NULL, WEBHOOKS_VERIFY_OK },
	{ "4 min old", NOW - 240, { "whsec_a" }, "whsec_a", NULL, WEBHOOKS_VERIFY_OK },
	{ "exactly 5 min", NOW - 300, { "whsec_a" }, "whsec_a", NULL, WEBHOOKS_VERIFY_OK },
	{ "5 min 1 s old", NOW - 301, { "whsec_a" }, "whsec_a", NULL, WEBHOOKS_VERIFY_STALE },
	{ "from the future", NOW + 301, { "whsec_a" }, "whsec_a", NULL, WEBHOOKS_VERIFY_STALE },
	{ "wrong secret", NOW, { "whsec_a" }, "whsec_b", NULL, WEBHOOKS_VERIFY_MISMATCH },
	{ "tampered body", NOW, { "whsec_a" }, "whsec_a",
	  "{\"id\":\"evt_9\",\"type\":\"bill.deleted\"}", WEBHOOKS_VERIFY_MISMATCH },
	{ "body with a space", NOW, { "whsec_a" }, "whsec_a",
	  "{\"id\": \"evt_9\",\"type\":\"bill.updated\"}", WEBHOOKS_VERIFY_MISMATCH },
	{ "rotation: new secret", NOW, { "whsec_new", "whsec_old" }, "whsec_new", NULL,
	  WEBHOOKS_VERIFY_OK },
	{ "rotation: old secret", NOW, { "whsec_new", "whsec_old" }, "whsec_old", NULL,
	  WEBHOOKS_VERIFY_OK },
	{ "rotation: other secret", NOW, { "whsec_new", "whsec_old" }, "whsec_x", NULL,
	  WEBHOOKS_VERIFY_MISMATCH },
};

START_TEST(verify)
{
	size_t n = verifies[_i].secrets[1] != NULL ? 2 : 1;
	const char *hdr = webhooks_signature(&a, verifies[_i].t, BODY, strlen(BODY),
	    verifies[_i].secrets, n);
	const char *body = verifies[_i].body != NULL ? verifies[_i].body : BODY;
	enum webhooks_verify got = webhooks_verify(hdr, body, strlen(body),
	    verifies[_i].verify_with, NOW, WEBHOOKS_TOLERANCE);

	ck_assert_msg(got == verifies[_i].want, "%s: got %d, want %d", verifies[_i].name,
	    got, verifies[_i].want);
}
END_TEST

START_TEST(verify_malformed)
{
	char v1[65], h[256];
	static const char *const bad[] = {
		"", "t=", "v1=00", "t=abc,v1=00", "t=1767225600", "t=1767225600,v0=abc",
		"t=-5,v1=00", "garbage",
	};

	for (size_t i = 0; i < N(bad); i++)
		ck_assert_msg(webhooks_verify(bad[i], BODY, strlen(BODY), "whsec_a", NOW,
		    WEBHOOKS_TOLERANCE) == WEBHOOKS_VERIFY_MALFORMED, "\"%s\" accepted", bad[i]);
	ck_assert_int_eq(webhooks_verify(NULL, BODY, strlen(BODY), "whsec_a", NOW, 300),
	    WEBHOOKS_VERIFY_MALFORMED);
	/* a short or non-hex v1 matches nothing */
	ck_assert_int_eq(webhooks_verify("t=1767225600,v1=abc", BODY, strlen(BODY), "whsec_a",
	    NOW, 300), WEBHOOKS_VERIFY_MISMATCH);
	/* spaces after commas and unknown schemes are tolerated */
	openssl_v1("whsec_a", NOW, BODY, strlen(BODY), v1);
	snprintf(h, sizeof(h), "t=%lld, v0=deadbeef, v1=%s", NOW, v1);
	ck_assert_int_eq(webhooks_verify(h, BODY, strlen(BODY), "whsec_a", NOW, 300),
	    WEBHOOKS_VERIFY_OK);
}
END_TEST

/* ---- envelope and timestamps ---- */

static const char *
str_at(struct json_object *o, const char *k1, const char *k2)
{
	struct json_object *v;

	if (!json_object_object_get_ex(o, k1, &v))
		return "(absent)";
	if (k2 != NULL && !json_object_object_get_ex(v, k2, &v))
		return "(absent)";
	return v == NULL ? "(null)" : json_object_get_string(v);
}

START_TEST(envelope_fields)
{
	struct events_wire ev = { 0 };
	struct json_object *data = json_obj(&a), *obj = json_object_new_object(), *env, *v;
	const char *text;

	/* as read back from jsonb: keys sorted, "object" not second */
	json_set_str(obj, "id", "bill_1");
	json_set_str(obj, "amount", "1.00");
	json_set_str(obj, "object", "bill");
	json_set(data, "object", obj);
	json_set_str(data, "bill_id", "bill_1");
	ev.id = "evt_0001";
	ev.type = "bill.created";
	ev.created_ms = 1767225600123;
	ev.client_id = "cli_1";
	ev.mode = "sandbox";
	ev.api_version = "2026-11-01";
	ev.producer_service = "bills";
	ev.request_id = "req_1";
	ev.data = data;
	env = events_envelope(&a, &ev);
	ck_assert_str_eq(str_at(env, "id", NULL), "evt_0001");
	ck_assert_str_eq(str_at(env, "event_id", NULL), "evt_0001");
	ck_assert_str_eq(str_at(env, "object", NULL), "event");
	ck_assert_str_eq(str_at(env, "type", NULL), "bill.created");
	ck_assert_str_eq(str_at(env, "event_type", NULL), "bill.created");
	ck_assert_str_eq(str_at(env, "api_version", NULL), "2026-11-01");
	ck_assert_str_eq(str_at(env, "timestamp", NULL), "2026-01-01T00:00:00.123Z");
	ck_assert_str_eq(str_at(env, "client_id", NULL), "cli_1");
	ck_assert_str_eq(str_at(env, "mode", NULL), "sandbox");
	ck_assert_str_eq(str_at(env, "producer_service", NULL), "bills");
	ck_assert_str_eq(str_at(env, "correlation_id", NULL), "(null)");
	ck_assert_str_eq(str_at(env, "request", "id"), "req_1");
	ck_assert_str_eq(str_at(env, "request", "idempotency_key"), "(null)");
	ck_assert_str_eq(str_at(env, "data", "bill_id"), "bill_1");
	ck_assert(json_object_object_get_ex(env, "created", &v));
	ck_assert(json_object_is_type(v, json_type_int));
	ck_assert_int_eq(json_object_get_int64(v), 1767225600);
	ck_assert(json_object_object_get_ex(env, "data", &v));
	ck_assert(json_object_object_get_ex(v, "object", &v));
	ck_assert_str_eq(str_at(v, "object", NULL), "bill");
	ck_assert_str_eq(json_dump(&a, v, NULL),
	    "{\"id\":\"bill_1\",\"object\":\"bill\",\"amount\":\"1.00\"}");
	/* mode null for internal paths */
	ev.mode = NULL;
	env = events_envelope(&a, &ev);
	ck_assert_str_eq(str_at(env, "mode", NULL), "(null)");
	text = json_dump(&a, env, NULL);
	ck_assert_ptr_nonnull(strstr(text, "\"mode\":null"));
}
END_TEST

/* created: epoch seconds rounded down; timestamp: the same instant to the ms */
START_TEST(envelope_time)
{
	static const struct { int64_t ms, created; const char *iso; } c[] = {
		{ 0, 0, "1970-01-01T00:00:00.000Z" },
		{ 999, 0, "1970-01-01T00:00:00.999Z" },
		{ 1767225600000, 1767225600, "2026-01-01T00:00:00.000Z" },
		{ 951782400001, 951782400, "2000-02-29T00:00:00.001Z" },
		{ -1, -1, "1969-12-31T23:59:59.999Z" },
	};

	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		struct events_wire ev = { 0 };
		struct json_object *env, *v;

		ev.id = "evt_1";
		ev.type = "bill.created";
		ev.created_ms = c[i].ms;
		ck_assert_int_eq(events_created(&ev), c[i].created);
		env = events_envelope(&a, &ev);
		ck_assert_str_eq(str_at(env, "timestamp", NULL), c[i].iso);
		ck_assert(json_object_object_get_ex(env, "created", &v));
		ck_assert_int_eq(json_object_get_int64(v), c[i].created);
	}
}
END_TEST

/* The one header list of a delivery (the POST sends it, an inbox keeps
 * it): every name once, in order, the values from the event. */
START_TEST(delivery_headers)
{
	static const char *const want[WEBHOOKS_HEADERS] = {
		"Content-Type", "X-Webhook-Event-Type", "X-Webhook-Id", "X-Webhook-Timestamp",
		"X-Webhook-Client-Id", "X-Webhook-Source", "Service-Signature", "User-Agent",
	};
	const char *names[WEBHOOKS_HEADERS], *values[WEBHOOKS_HEADERS];
	struct events_wire ev = { 0 };

	ev.id = "evt_0001";
	ev.type = "sandbox.claimed";
	ev.created_ms = 1767225600123;
	ev.client_id = "cli_1";
	ck_assert_uint_eq(webhooks_headers(&a, &ev, "t=1,v1=ab", names, values),
	    WEBHOOKS_HEADERS);
	for (size_t i = 0; i < WEBHOOKS_HEADERS; i++)
		ck_assert_str_eq(names[i], want[i]);
	ck_assert_str_eq(values[0], "application/json");
	ck_assert_str_eq(values[1], "sandbox.claimed");
	ck_assert_str_eq(values[2], "evt_0001");
	ck_assert_str_eq(values[3], "2026-01-01T00:00:00.123Z");
	ck_assert_str_eq(values[4], "cli_1");
	ck_assert_str_eq(values[5], WEBHOOKS_SOURCE);
	ck_assert_str_eq(values[6], "t=1,v1=ab");
	ck_assert_str_eq(values[7], WEBHOOKS_USER_AGENT);
	/* a missing value is empty, never NULL */
	ev.client_id = NULL;
	webhooks_headers(&a, &ev, "t=1,v1=ab", names, values);
	ck_assert_str_eq(values[4], "");
}
END_TEST

/* Messages for the client: present, and never libcurl's own wording. */
START_TEST(transport_errors)
{
	static const int codes[] = { CURLE_COULDNT_CONNECT, CURLE_OPERATION_TIMEDOUT,
	    CURLE_COULDNT_RESOLVE_HOST, CURLE_SSL_CONNECT_ERROR, CURLE_PEER_FAILED_VERIFICATION,
	    CURLE_GOT_NOTHING, CURLE_RECV_ERROR, CURLE_SEND_ERROR, CURLE_WEIRD_SERVER_REPLY,
	    CURLE_OK, CURLE_ABORTED_BY_CALLBACK };

	for (size_t i = 0; i < N(codes); i++) {
		const char *m = webhooks_transport_error(codes[i]);

		ck_assert_msg(m != NULL && *m != '\0', "code %d: no message", codes[i]);
		ck_assert_str_ne(m, curl_easy_strerror((CURLcode)codes[i]));
	}
	ck_assert_str_eq(webhooks_transport_error(CURLE_COULDNT_CONNECT),
	    "could not connect to the endpoint");
	ck_assert_str_eq(webhooks_transport_error(CURLE_OPERATION_TIMEDOUT),
	    "no response within 10 seconds");
}
END_TEST

static Suite *
sign_suite(void)
{
	Suite *s = suite_create("webhook_sign");
	TCase *tc;

	tc = tcase_create("secrets");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, secret_format);
	tcase_add_test(tc, secret_seal_round_trip);
	suite_add_tcase(s, tc);

	tc = tcase_create("signature");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_loop_test(tc, sign_vectors, 0, N(vectors));
	tcase_add_test(tc, signature_header);
	tcase_add_loop_test(tc, verify, 0, N(verifies));
	tcase_add_test(tc, verify_malformed);
	suite_add_tcase(s, tc);

	tc = tcase_create("envelope");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, envelope_fields);
	tcase_add_test(tc, envelope_time);
	tcase_add_test(tc, delivery_headers);
	tcase_add_test(tc, transport_errors);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tcheck_run(sign_suite());
}
