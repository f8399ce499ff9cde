/*
 * Customer messages end to end, through nginx and PostgreSQL: every input
 * rule with its error (lengths in code points, multibyte text at the
 * limits, invalid UTF-8, control characters, the catalog's billers, the
 * categories); an accepted message and its customer.message.created at a
 * receiver with exactly the spec's fields; suppressed customers and
 * missing consents answered 200 suppressed, stored, with no event;
 * consents; a complaint (suppression, consent revoked, one event however
 * often it is sent); the suppression list; the list's filters and pages;
 * Idempotency-Key; complaints and suppressions sent at once; tenants and
 * environments; messages_sent as metering reads it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>
#include <json-c/json.h>

#include "devacct.h"
#include "harness.h"
#include "receiver.h"

#define BILLER	"blr_01900000-0000-7000-8000-000000000001"
#define BILLER2	"blr_01900000-0000-7000-8000-000000000002"
#define UNKNOWN	"blr_01900000-0000-7000-8000-00000000dead"
#define E_ACUTE	"\xc3\xa9"		/* U+00E9: two bytes, one code point */
#define PARALLEL 20

static struct devacct dev;

/* A client with a sandbox key, and (tenant a) a development key. */
static struct devacct_tenant ta, tb;
static char *dev_key;

static void
stack_up(void)
{
	harness_fixture_start(NULL);
	devacct_tenants_new(&dev, "msg", &ta, &tb, &dev_key);
	srandom((unsigned)getpid());
}

static void
stack_down(void)
{
	devacct_tenants_free(&ta, &tb, &dev_key);
	harness_fixture_stop();
}

/* A fresh sandbox client of its own (its events only), subscribed to rc. */
static void
tenant_new(struct devacct_tenant *t, struct receiver *rc)
{
	t->client = devacct_client_new(&dev);
	t->key = devacct_key_new(&dev, t->client, "sandbox");
	if (rc != NULL)
		devacct_subscribe(t->key, rc);
}

static void
tenant_free(struct devacct_tenant *t)
{
	free(t->client);
	free(t->key);
}

/* A user id no other test uses (malloc'ed). */
static char *
user_new(const char *tag)
{
	return strdup(harness_fmt("u-%s-%d-%ld", tag, (int)getpid(), (long)random()));
}

static struct harness_resp *
call_on(const char *host, const char *key, const char *method, const char *path,
    const char *body, const char *const extra[])
{
	return devacct_call(method, host, path, devacct_bearer(key), body, extra);
}

static struct harness_resp *
call(const char *key, const char *method, const char *path, const char *body)
{
	return call_on("sandbox", key, method, path, body, NULL);
}

/* A message's body as JSON text (malloc'ed); NULL members are left out. */
static char *
message(const char *user, const char *biller, const char *category, const char *subject,
    const char *text)
{
	struct json_object *o = json_object_new_object();
	char *s;

	if (user != NULL)
		json_object_object_add(o, "customer_user_aid", json_object_new_string(user));
	if (biller != NULL)
		json_object_object_add(o, "biller_id", json_object_new_string(biller));
	if (category != NULL)
		json_object_object_add(o, "category", json_object_new_string(category));
	if (subject != NULL)
		json_object_object_add(o, "subject", json_object_new_string(subject));
	if (text != NULL)
		json_object_object_add(o, "body", json_object_new_string(text));
	s = strdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
	    JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(o);
	return s;
}

/* POST a message of user: the response. */
static struct harness_resp *
send_on(const char *host, const char *key, const char *user, const char *category,
    const char *subject)
{
	char *b = message(user, BILLER, category, subject, "Your bill is ready.\nThank you.");
	struct harness_resp *r = call_on(host, key, "POST", "/v1/customer-messages", b, NULL);

	free(b);
	return r;
}

static struct harness_resp *
send_msg(const char *key, const char *user, const char *category, const char *subject)
{
	return send_on("sandbox", key, user, category, subject);
}

/* n copies of s (malloc'ed) */
static char *
repeat(const char *s, size_t n)
{
	size_t len = strlen(s);
	char *out = malloc(len * n + 1);

	ck_assert_ptr_nonnull(out);
	for (size_t i = 0; i < n; i++)
		memcpy(out + i * len, s, len);
	out[len * n] = '\0';
	return out;
}

/* 400 VALIDATION_ERROR naming field with code */
static void
invalid(const struct harness_resp *r, const char *field, const char *code)
{
	harness_assert_coded(r, 400, "VALIDATION_ERROR");
	devacct_assert_error(r, field, code);
}

/* POST the body (JSON text) and expect field's error code. */
static void
post_invalid(const char *body, const char *field, const char *code)
{
	struct harness_resp *r = call(ta.key, "POST", "/v1/customer-messages", body);

	invalid(r, field, code);
	harness_resp_free(r);
}

/* A message with subject (text) is refused on field with code. */
static void
subject_invalid(const char *subject, const char *text, const char *field, const char *code)
{
	char *b = message("u-rules", BILLER, "account_update", subject, text);

	post_invalid(b, field, code);
	free(b);
}

static long long
events_of(const char *client, const char *type)
{
	return devacct_sql_int("SELECT count(*) FROM events WHERE client_id = $1 AND type = $2",
	    client, type);
}

/* The data.object of a delivery body (the caller puts the envelope *env). */
static struct json_object *
delivered_object(const char *body, struct json_object **env)
{
	struct json_object *data, *obj;

	ck_assert_ptr_nonnull(body);
	*env = json_tokener_parse(body);
	ck_assert_ptr_nonnull(*env);
	ck_assert(json_object_object_get_ex(*env, "data", &data));
	ck_assert(json_object_object_get_ex(data, "object", &obj));
	return obj;
}

/* 1 when r's answer has key, as null */
static int
null_member(const struct harness_resp *r, const char *key)
{
	struct json_object *v = NULL;

	return r->json != NULL && json_object_object_get_ex(r->json, key, &v) && v == NULL;
}

static const char *
member(struct json_object *o, const char *key)
{
	return json_object_get_string(json_object_object_get(o, key));
}

/* Today's messages_sent of key's environment (sandbox), read through
 * GET /v1/metering/usage. */
static long long
messages_sent(const char *key)
{
	char *today = devacct_sql_value("SELECT to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD')",
	    NULL, NULL);
	struct harness_resp *r = call(key, "GET", harness_fmt("/v1/metering/usage?from=%s&to=%s"
	    "&metric=messages_sent", today, today), NULL);
	struct json_object *items, *it;
	long long v = 0;

	harness_expect(r, 200);
	items = harness_json_get(r, "data");
	ck_assert_ptr_nonnull(items);
	for (size_t i = 0; i < json_object_array_length(items); i++) {
		it = json_object_array_get_idx(items, i);
		ck_assert_pstr_eq(member(it, "metric"), "messages_sent");
		ck_assert_pstr_eq(member(it, "environment"), "sandbox");
		ck_assert_pstr_eq(member(it, "date"), today);
		v += json_object_get_int64(json_object_object_get(it, "value"));
	}
	harness_resp_free(r);
	free(today);
	return v;
}

/* ------------------------------------------------------------------ */

/* Every input rule, each with the field and code it is refused with. */
START_TEST(input_rules)
{
	struct harness_resp *r;
	char *s, *b;

	/* 140 code points of two bytes each are fine; 141 are not */
	s = repeat(E_ACUTE, 140);
	b = message("u-rules", BILLER, "account_update", s, "body");
	r = call(ta.key, "POST", "/v1/customer-messages", b);
	harness_expect(r, 201);
	ck_assert_pstr_eq(devacct_str(r, "subject"), s);
	harness_resp_free(r);
	free(b);
	free(s);
	s = repeat(E_ACUTE, 141);
	subject_invalid(s, "body", "subject", "too_long");
	free(s);
	/* 2048 code points of body (three bytes each), and 2049 */
	s = repeat("\xe2\x82\xac", 2048);
	b = message("u-rules", BILLER, "account_update", "Euro", s);
	r = call(ta.key, "POST", "/v1/customer-messages", b);
	harness_expect(r, 201);
	ck_assert_int_eq(strlen(devacct_str(r, "body")), 3 * 2048);
	harness_resp_free(r);
	free(b);
	free(s);
	s = repeat("a", 2049);
	subject_invalid("Long", s, "body", "too_long");
	free(s);
	subject_invalid("", "body", "subject", "too_short");
	subject_invalid("Hi", "", "body", "too_short");
	/* control characters: none in a subject; line feed and tab in a body */
	subject_invalid("Line\nbreak", "body", "subject", "control_character");
	subject_invalid("Tab\there", "body", "subject", "control_character");
	subject_invalid("Del\x7f", "body", "subject", "control_character");
	subject_invalid("C1 \xc2\x85 next line", "body", "subject", "control_character");
	subject_invalid("Bell", "ring\x07", "body", "control_character");
	subject_invalid("CSI", "esc \xc2\x9b", "body", "control_character");
	subject_invalid("Del", "x\x7f", "body", "control_character");
	b = message("u-rules", BILLER, "account_update", "Lines", "one\n\ttwo\r\n");
	post_invalid(b, "body", "control_character");	/* CR is C0 too */
	free(b);
	b = message("u-rules", BILLER, "account_update", "Lines", "one\n\ttwo");
	r = call(ta.key, "POST", "/v1/customer-messages", b);
	harness_expect(r, 201);
	harness_resp_free(r);
	free(b);
	/* invalid UTF-8: a NUL in a field; raw bytes refuse the whole body */
	post_invalid("{\"customer_user_aid\":\"u\",\"biller_id\":\"" BILLER "\","
	    "\"category\":\"marketing\",\"subject\":\"a\\u0000b\",\"body\":\"x\"}",
	    "subject", "invalid_utf8");
	r = call(ta.key, "POST", "/v1/customer-messages", "{\"customer_user_aid\":\"u\","
	    "\"biller_id\":\"" BILLER "\",\"category\":\"marketing\",\"subject\":\"\xc3\x28\","
	    "\"body\":\"x\"}");
	harness_assert_coded(r, 400, "INVALID_UTF8");
	harness_resp_free(r);
	/* the catalog's billers only */
	b = message("u-rules", UNKNOWN, "account_update", "Hi", "body");
	r = call(ta.key, "POST", "/v1/customer-messages", b);
	harness_assert_coded(r, 404, "BILLER_NOT_FOUND");
	harness_resp_free(r);
	free(b);
	b = message("u-rules", "power-co", "account_update", "Hi", "body");
	r = call(ta.key, "POST", "/v1/customer-messages", b);
	harness_assert_coded(r, 404, "BILLER_NOT_FOUND");
	harness_resp_free(r);
	free(b);
	/* category, required fields, the user's id, metadata */
	b = message("u-rules", BILLER, "promotion", "Hi", "body");
	post_invalid(b, "category", "invalid_enum");
	free(b);
	b = message("u-rules", BILLER, "marketing", NULL, "body");
	post_invalid(b, "subject", "required");
	free(b);
	b = message(NULL, BILLER, "marketing", "Hi", "body");
	post_invalid(b, "customer_user_aid", "required");
	free(b);
	b = message("u\trules", BILLER, "marketing", "Hi", "body");
	post_invalid(b, "customer_user_aid", "invalid_format");
	free(b);
	s = repeat("u", 256);
	b = message(s, BILLER, "marketing", "Hi", "body");
	post_invalid(b, "customer_user_aid", "too_long");
	free(b);
	free(s);
	post_invalid("{\"customer_user_aid\":\"u\",\"biller_id\":\"" BILLER "\","
	    "\"category\":\"marketing\",\"subject\":\"a\",\"body\":\"x\",\"metadata\":[1]}",
	    "metadata", "invalid_type");
	s = repeat("m", 4100);
	b = malloc(strlen(s) + 256);
	ck_assert_ptr_nonnull(b);
	sprintf(b, "{\"customer_user_aid\":\"u\",\"biller_id\":\"" BILLER "\","
	    "\"category\":\"marketing\",\"subject\":\"a\",\"body\":\"x\",\"metadata\":"
	    "{\"k\":\"%s\"}}", s);
	post_invalid(b, "metadata", "too_long");
	free(b);
	free(s);
	post_invalid("{\"customer_user_aid\":\"u\",\"biller_id\":\"" BILLER "\","
	    "\"category\":\"marketing\",\"subject\":\"a\",\"body\":\"x\",\"priority\":1}",
	    "priority", "unknown_field");
}
END_TEST

/* Accepted: 201, the message as stored, and its event with exactly the
 * spec's fields. */
START_TEST(accepted_event)
{
	static const char *const spec[] = { "message_id", "client_id", "customer_user_aid",
	    "biller_id", "category", "subject", "body", "created_at" };
	struct receiver *rc = receiver_start(NULL);
	struct json_object *env, *obj;
	struct harness_resp *r, *g;
	struct devacct_tenant t;
	char *user = user_new("acc"), *id;

	ck_assert_ptr_nonnull(rc);
	tenant_new(&t, rc);
	r = call(t.key, "POST", "/v1/customer-messages", harness_fmt("{\"customer_user_aid\":"
	    "\"%s\",\"biller_id\":\"" BILLER "\",\"category\":\"account_update\",\"subject\":"
	    "\"Your bill is ready\",\"body\":\"Hello \xc3\xa9!\\nIt is $42.10.\","
	    "\"metadata\":{\"campaign\":\"nov\",\"n\":[1,2]}}", user));
	harness_expect(r, 201);
	id = strdup(devacct_str(r, "message_id"));
	ck_assert_int_eq(strlen(id), 36);	/* a bare UUID */
	ck_assert_pstr_eq(devacct_str(r, "object"), "customer_message");
	ck_assert_pstr_eq(devacct_str(r, "delivery_status"), "accepted");
	ck_assert(null_member(r, "suppression_reason"));
	ck_assert_pstr_eq(devacct_str(r, "client_id"), t.client);
	ck_assert_pstr_eq(devacct_str(r, "customer_user_aid"), user);
	ck_assert_pstr_eq(devacct_str(r, "biller_id"), BILLER);
	ck_assert_pstr_eq(devacct_str(r, "category"), "account_update");
	ck_assert_pstr_eq(devacct_str(r, "body"), "Hello \xc3\xa9!\nIt is $42.10.");
	ck_assert_pstr_eq(devacct_text(r, "metadata"), "{\"campaign\":\"nov\",\"n\":[1,2]}");
	ck_assert_ptr_nonnull(devacct_str(r, "created_at"));
	/* GET answers the same message */
	g = call(t.key, "GET", harness_fmt("/v1/customer-messages/%s", id), NULL);
	harness_expect(g, 200);
	ck_assert_str_eq(g->body, r->body);
	harness_resp_free(g);
	/* the event: data.object is the spec's eight fields, no more */
	obj = delivered_object(devacct_received(rc, "customer.message.created", id), &env);
	ck_assert_int_eq(json_object_object_length(obj), 8);
	for (size_t i = 0; i < sizeof(spec) / sizeof(spec[0]); i++)
		ck_assert_msg(json_object_object_get_ex(obj, spec[i], NULL), "no %s", spec[i]);
	ck_assert_pstr_eq(member(obj, "message_id"), id);
	ck_assert_pstr_eq(member(obj, "client_id"), t.client);
	ck_assert_pstr_eq(member(obj, "customer_user_aid"), user);
	ck_assert_pstr_eq(member(obj, "biller_id"), BILLER);
	ck_assert_pstr_eq(member(obj, "category"), "account_update");
	ck_assert_pstr_eq(member(obj, "subject"), "Your bill is ready");
	ck_assert_pstr_eq(member(obj, "body"), "Hello \xc3\xa9!\nIt is $42.10.");
	ck_assert_pstr_eq(member(obj, "created_at"), devacct_str(r, "created_at"));
	ck_assert_pstr_eq(member(env, "type"), "customer.message.created");
	json_object_put(env);
	ck_assert_int_eq(events_of(t.client, "customer.message.created"), 1);
	harness_resp_free(r);
	receiver_stop(rc);
	tenant_free(&t);
	free(user);
	free(id);
}
END_TEST

/* A suppressed customer, missing consents: 200 suppressed, stored, no event. */
START_TEST(suppressed_no_event)
{
	struct receiver *rc = receiver_start(NULL);
	struct harness_resp *r, *g;
	struct devacct_tenant t;
	char *sup = user_new("sup"), *plain = user_new("plain"), *id;

	ck_assert_ptr_nonnull(rc);
	tenant_new(&t, rc);
	r = call(t.key, "POST", "/v1/customer-suppressions",
	    harness_fmt("{\"customer_user_aid\":\"%s\"}", sup));
	harness_expect(r, 201);
	harness_resp_free(r);
	/* on the suppression list: any category */
	r = send_msg(t.key, sup, "account_update", "Suppressed");
	harness_expect(r, 200);
	ck_assert_pstr_eq(devacct_str(r, "delivery_status"), "suppressed");
	ck_assert_pstr_eq(devacct_str(r, "suppression_reason"), "suppressed");
	ck_assert_pstr_eq(devacct_str(r, "object"), "customer_message");
	id = strdup(devacct_str(r, "message_id"));
	harness_resp_free(r);
	g = call(t.key, "GET", harness_fmt("/v1/customer-messages/%s", id), NULL);
	harness_expect(g, 200);
	ck_assert_pstr_eq(devacct_str(g, "delivery_status"), "suppressed");
	harness_resp_free(g);
	/* marketing is opt-in */
	r = send_msg(t.key, plain, "marketing", "Offer");
	harness_expect(r, 200);
	ck_assert_pstr_eq(devacct_str(r, "suppression_reason"), "no_marketing_consent");
	harness_resp_free(r);
	/* account updates are opt-out */
	r = call(t.key, "PUT", harness_fmt("/v1/customers/%s/consents", plain),
	    "{\"account_update\":false}");
	harness_expect(r, 200);
	harness_resp_free(r);
	r = send_msg(t.key, plain, "account_update", "Update");
	harness_expect(r, 200);
	ck_assert_pstr_eq(devacct_str(r, "suppression_reason"), "no_account_update_consent");
	harness_resp_free(r);
	/* with consent, accepted */
	r = call(t.key, "PUT", harness_fmt("/v1/customers/%s/consents", plain),
	    "{\"marketing\":true}");
	harness_expect(r, 200);
	harness_resp_free(r);
	r = send_msg(t.key, plain, "marketing", "Offer");
	harness_expect(r, 201);
	ck_assert_pstr_eq(devacct_str(r, "delivery_status"), "accepted");
	ck_assert_ptr_nonnull(devacct_received(rc, "customer.message.created",
	    devacct_str(r, "message_id")));
	harness_resp_free(r);
	ck_assert_ptr_null(devacct_received(rc, "customer.message.created", id));
	ck_assert_int_eq(events_of(t.client, "customer.message.created"), 1);
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM customer_messages"
	    " WHERE client_id = $1 AND delivery_status = 'suppressed'", t.client, NULL), 3);
	/* metering's messages_sent counts the accepted one only */
	ck_assert_int_eq(messages_sent(t.key), 1);
	receiver_stop(rc);
	tenant_free(&t);
	free(sup);
	free(plain);
	free(id);
}
END_TEST

/* Consents: the defaults, a change of one keeps the other, the input. */
START_TEST(consents)
{
	char *user = user_new("con");
	const char *path = strdup(harness_fmt("/v1/customers/%s/consents", user));
	struct harness_resp *r;

	r = call(ta.key, "GET", path, NULL);
	harness_expect(r, 200);
	ck_assert_pstr_eq(devacct_str(r, "object"), "customer_consents");
	ck_assert_pstr_eq(devacct_str(r, "customer_user_aid"), user);
	ck_assert_int_eq(devacct_bool(r, "marketing"), 0);
	ck_assert_int_eq(devacct_bool(r, "account_update"), 1);
	ck_assert(null_member(r, "updated_at"));
	harness_resp_free(r);
	r = call(ta.key, "PUT", path, "{}");
	invalid(r, "", "required");
	harness_resp_free(r);
	r = call(ta.key, "PUT", path, "{\"marketing\":\"yes\"}");
	invalid(r, "marketing", "invalid_type");
	harness_resp_free(r);
	r = call(ta.key, "PUT", path, "{\"marketing\":true}");
	harness_expect(r, 200);
	ck_assert_int_eq(devacct_bool(r, "marketing"), 1);
	ck_assert_int_eq(devacct_bool(r, "account_update"), 1);
	ck_assert_ptr_nonnull(devacct_str(r, "updated_at"));
	harness_resp_free(r);
	r = call(ta.key, "PUT", path, "{\"account_update\":false}");
	harness_expect(r, 200);
	ck_assert_int_eq(devacct_bool(r, "marketing"), 1);
	ck_assert_int_eq(devacct_bool(r, "account_update"), 0);
	harness_resp_free(r);
	r = call(ta.key, "GET", path, NULL);
	harness_expect(r, 200);
	ck_assert_int_eq(devacct_bool(r, "marketing"), 1);
	ck_assert_int_eq(devacct_bool(r, "account_update"), 0);
	harness_resp_free(r);
	/* another tenant's user of the same id has its own consents */
	r = call(tb.key, "GET", path, NULL);
	harness_expect(r, 200);
	ck_assert_int_eq(devacct_bool(r, "marketing"), 0);
	harness_resp_free(r);
	r = call(ta.key, "GET", "/v1/customers/u%01x/consents", NULL);
	invalid(r, "customer_user_aid", "invalid_format");
	harness_resp_free(r);
	free((char *)path);
	free(user);
}
END_TEST

/* A complaint: suppression, consent revoked, one event; the second the same. */
START_TEST(complaint)
{
	static const char *const spec[] = { "message_id", "customer_user_aid", "reason",
	    "client_id", "biller_id", "created_at" };
	struct receiver *rc = receiver_start(NULL);
	struct json_object *env, *obj;
	struct harness_resp *r, *again;
	struct devacct_tenant t;
	char *user = user_new("cpl"), *id, *path;

	ck_assert_ptr_nonnull(rc);
	tenant_new(&t, rc);
	r = call(t.key, "PUT", harness_fmt("/v1/customers/%s/consents", user),
	    "{\"marketing\":true}");
	harness_expect(r, 200);
	harness_resp_free(r);
	r = send_msg(t.key, user, "marketing", "Offer");
	harness_expect(r, 201);
	id = strdup(devacct_str(r, "message_id"));
	harness_resp_free(r);
	path = strdup(harness_fmt("/v1/customer-messages/%s/complaint", id));
	r = call(t.key, "POST", path, harness_fmt("{\"reason\":\"%s\"}", ""));
	invalid(r, "reason", "too_short");
	harness_resp_free(r);
	r = call(t.key, "POST", path, "{\"reason\":\"spam\"}");
	harness_expect(r, 200);
	ck_assert_pstr_eq(devacct_str(r, "message_id"), id);
	ck_assert_pstr_eq(devacct_str(r, "customer_user_aid"), user);
	ck_assert_pstr_eq(devacct_str(r, "reason"), "spam");
	ck_assert_int_eq(devacct_bool(r, "suppressed"), 1);
	ck_assert_int_eq(devacct_bool(r, "marketing_consent"), 0);
	ck_assert_ptr_nonnull(devacct_str(r, "created_at"));
	/* the second: the same answer, no second event */
	again = call(t.key, "POST", path, "{\"reason\":\"other\"}");
	harness_expect(again, 200);
	ck_assert_str_eq(again->body, r->body);
	harness_resp_free(again);
	again = call(t.key, "POST", path, NULL);
	harness_expect(again, 200);
	ck_assert_str_eq(again->body, r->body);
	harness_resp_free(again);
	obj = delivered_object(devacct_received(rc, "customer.message.complaint", id), &env);
	ck_assert_int_eq(json_object_object_length(obj), 6);
	for (size_t i = 0; i < sizeof(spec) / sizeof(spec[0]); i++)
		ck_assert_msg(json_object_object_get_ex(obj, spec[i], NULL), "no %s", spec[i]);
	ck_assert_pstr_eq(member(obj, "message_id"), id);
	ck_assert_pstr_eq(member(obj, "customer_user_aid"), user);
	ck_assert_pstr_eq(member(obj, "reason"), "spam");
	ck_assert_pstr_eq(member(obj, "client_id"), t.client);
	ck_assert_pstr_eq(member(obj, "biller_id"), BILLER);
	ck_assert_pstr_eq(member(obj, "created_at"), devacct_str(r, "created_at"));
	json_object_put(env);
	harness_resp_free(r);
	ck_assert_int_eq(events_of(t.client, "customer.message.complaint"), 1);
	/* the user is suppressed (reason complaint) and marketing revoked */
	r = call(t.key, "GET", harness_fmt("/v1/customer-suppressions/%s", user), NULL);
	harness_expect(r, 200);
	ck_assert_pstr_eq(devacct_str(r, "reason"), "complaint");
	harness_resp_free(r);
	r = call(t.key, "GET", harness_fmt("/v1/customers/%s/consents", user), NULL);
	harness_expect(r, 200);
	ck_assert_int_eq(devacct_bool(r, "marketing"), 0);
	harness_resp_free(r);
	r = send_msg(t.key, user, "account_update", "After");
	harness_expect(r, 200);
	ck_assert_pstr_eq(devacct_str(r, "suppression_reason"), "suppressed");
	harness_resp_free(r);
	/* unknown and malformed ids */
	r = call(t.key, "POST", "/v1/customer-messages/01900000-0000-7000-8000-00000000dead"
	    "/complaint", NULL);
	harness_assert_coded(r, 404, "CUSTOMER_MESSAGE_NOT_FOUND");
	harness_resp_free(r);
	r = call(t.key, "POST", "/v1/customer-messages/msg_1/complaint", NULL);
	harness_assert_coded(r, 404, "CUSTOMER_MESSAGE_NOT_FOUND");
	harness_resp_free(r);
	receiver_stop(rc);
	tenant_free(&t);
	free(user);
	free(id);
	free(path);
}
END_TEST

/* Complaints and suppressions sent at once: one complaint, one event, one
 * entry; every answer the same. */
START_TEST(parallel_writes)
{
	struct harness_resp *r, *out[PARALLEL];
	struct devacct_tenant t;
	char *user = user_new("par"), *id, auth[512], *body;
	int created = 0;

	tenant_new(&t, NULL);
	snprintf(auth, sizeof(auth), "Authorization: Bearer %s", t.key);
	r = send_msg(t.key, user, "account_update", "Once");
	harness_expect(r, 201);
	id = strdup(devacct_str(r, "message_id"));
	harness_resp_free(r);
	harness_request_burst(PARALLEL, "POST", "sandbox",
	    harness_fmt("/v1/customer-messages/%s/complaint", id),
	    (const char *const[]){ auth, "Content-Type: application/json", NULL }, "{}", 2, out);
	for (size_t i = 0; i < PARALLEL; i++) {
		harness_expect(out[i], 200);
		ck_assert_str_eq(out[i]->body, out[0]->body);
	}
	for (size_t i = 0; i < PARALLEL; i++)
		harness_resp_free(out[i]);
	ck_assert_int_eq(events_of(t.client, "customer.message.complaint"), 1);
	free(user);
	/* one entry of a user added PARALLEL times at once */
	user = user_new("par");
	body = strdup(harness_fmt("{\"customer_user_aid\":\"%s\"}", user));
	harness_request_burst(PARALLEL, "POST", "sandbox", "/v1/customer-suppressions",
	    (const char *const[]){ auth, "Content-Type: application/json", NULL }, body,
	    strlen(body), out);
	for (size_t i = 0; i < PARALLEL; i++) {
		ck_assert_msg(out[i]->status == 200 || out[i]->status == 201, "%ld: %s",
		    out[i]->status, out[i]->body);
		created += out[i]->status == 201;
		ck_assert_pstr_eq(devacct_str(out[i], "created_at"), devacct_str(out[0], "created_at"));
	}
	for (size_t i = 0; i < PARALLEL; i++)
		harness_resp_free(out[i]);
	ck_assert_int_eq(created, 1);
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM customer_suppressions"
	    " WHERE client_id = $1 AND customer_user_aid = $2", t.client, user), 1);
	free(body);
	free(user);
	free(id);
	tenant_free(&t);
}
END_TEST

/* The suppression list: add (again: unchanged), get, list, delete. */
START_TEST(suppression_list)
{
	struct harness_resp *r, *again;
	struct devacct_tenant t;
	char *users[5], *next = NULL;
	size_t seen = 0;

	tenant_new(&t, NULL);
	for (size_t i = 0; i < 5; i++) {
		users[i] = user_new("sl");
		r = call(t.key, "POST", "/v1/customer-suppressions", harness_fmt(
		    "{\"customer_user_aid\":\"%s\",\"reason\":\"asked by phone\"}", users[i]));
		harness_expect(r, 201);
		ck_assert_pstr_eq(devacct_str(r, "object"), "customer_suppression");
		ck_assert_pstr_eq(devacct_str(r, "customer_user_aid"), users[i]);
		ck_assert_pstr_eq(devacct_str(r, "reason"), "asked by phone");
		harness_resp_free(r);
	}
	r = call(t.key, "GET", harness_fmt("/v1/customer-suppressions/%s", users[0]), NULL);
	harness_expect(r, 200);
	again = call(t.key, "POST", "/v1/customer-suppressions",
	    harness_fmt("{\"customer_user_aid\":\"%s\",\"reason\":\"other\"}", users[0]));
	harness_expect(again, 200);
	ck_assert_str_eq(again->body, r->body);
	harness_resp_free(again);
	harness_resp_free(r);
	/* newest first, pages of 2, every entry once */
	r = call(t.key, "GET", "/v1/customer-suppressions?limit=2", NULL);
	for (;;) {
		struct json_object *items;

		harness_expect(r, 200);
		ck_assert_pstr_eq(devacct_str(r, "object"), "list");
		items = harness_json_get(r, "data");
		ck_assert_int_le(json_object_array_length(items), 2);
		for (size_t i = 0; i < json_object_array_length(items); i++, seen++)
			ck_assert_pstr_eq(member(json_object_array_get_idx(items, i),
			    "customer_user_aid"), users[4 - seen]);
		if (!devacct_bool(r, "has_more")) {
			ck_assert(null_member(r, "next_cursor"));
			break;
		}
		next = strdup(devacct_str(r, "next_cursor"));
		harness_resp_free(r);
		r = call(t.key, "GET", harness_fmt("/v1/customer-suppressions?limit=2&cursor=%s",
		    next), NULL);
		free(next);
	}
	harness_resp_free(r);
	ck_assert_int_eq(seen, 5);
	r = call(t.key, "DELETE", harness_fmt("/v1/customer-suppressions/%s", users[2]), NULL);
	harness_expect(r, 200);
	ck_assert_pstr_eq(devacct_str(r, "customer_user_aid"), users[2]);
	ck_assert_int_eq(devacct_bool(r, "deleted"), 1);
	harness_resp_free(r);
	r = call(t.key, "GET", harness_fmt("/v1/customer-suppressions/%s", users[2]), NULL);
	harness_assert_coded(r, 404, "CUSTOMER_SUPPRESSION_NOT_FOUND");
	harness_resp_free(r);
	r = call(t.key, "DELETE", harness_fmt("/v1/customer-suppressions/%s", users[2]), NULL);
	harness_assert_coded(r, 404, "CUSTOMER_SUPPRESSION_NOT_FOUND");
	harness_resp_free(r);
	/* deleted: the user gets messages again */
	r = send_msg(t.key, users[2], "account_update", "Back");
	harness_expect(r, 201);
	harness_resp_free(r);
	r = call(t.key, "POST", "/v1/customer-suppressions", "{\"reason\":\"x\"}");
	invalid(r, "customer_user_aid", "required");
	harness_resp_free(r);
	r = call(t.key, "GET", "/v1/customer-suppressions?limit=101", NULL);
	invalid(r, "limit", "out_of_range");
	harness_resp_free(r);
	r = call(t.key, "GET", "/v1/customer-suppressions?cursor=abc", NULL);
	harness_assert_coded(r, 400, "INVALID_CURSOR");
	harness_resp_free(r);
	for (size_t i = 0; i < 5; i++)
		free(users[i]);
	tenant_free(&t);
}
END_TEST

/* The ids of a list answer, in order, joined by ' ' (malloc'ed). */
static char *
page_ids(const struct harness_resp *r)
{
	struct json_object *items = harness_json_get(r, "data");
	char buf[4096] = "";

	for (size_t i = 0; i < json_object_array_length(items); i++) {
		strcat(buf, member(json_object_array_get_idx(items, i), "message_id"));
		strcat(buf, " ");
	}
	return strdup(buf);
}

static struct harness_resp *
list(const struct devacct_tenant *t, const char *query)
{
	struct harness_resp *r = call(t->key, "GET", harness_fmt("/v1/customer-messages?%s",
	    query), NULL);

	harness_expect(r, 200);
	ck_assert_pstr_eq(devacct_str(r, "object"), "list");
	return r;
}

/* The filters and the pages of GET /v1/customer-messages. */
START_TEST(list_filters_pages)
{
	struct harness_resp *r;
	struct devacct_tenant t;
	char *a = user_new("la"), *b = user_new("lb"), *ids[5], *got, *want, *next, *mid;
	char all[4096] = "";

	tenant_new(&t, NULL);
	for (int i = 0; i < 5; i++) {
		char *body = message(i < 3 ? a : b, i < 3 ? BILLER : BILLER2,
		    i == 1 ? "marketing" : "account_update", harness_fmt("Message %d", i), "Hi");

		r = call(t.key, "POST", "/v1/customer-messages", body);
		harness_expect(r, i == 1 ? 200 : 201);
		ids[i] = strdup(devacct_str(r, "message_id"));
		harness_resp_free(r);
		free(body);
	}
	for (int i = 4; i >= 0; i--) {
		strcat(all, ids[i]);
		strcat(all, " ");
	}
	/* everything, newest first */
	r = list(&t, "");
	got = page_ids(r);
	ck_assert_str_eq(got, all);
	ck_assert_int_eq(devacct_bool(r, "has_more"), 0);
	free(got);
	harness_resp_free(r);
	/* pages of 2 */
	r = list(&t, "limit=2");
	want = strdup("");
	for (;;) {
		char *page = page_ids(r), *joined;

		ck_assert(asprintf(&joined, "%s%s", want, page) > 0);
		free(want);
		free(page);
		want = joined;
		if (!devacct_bool(r, "has_more"))
			break;
		next = strdup(devacct_str(r, "next_cursor"));
		harness_resp_free(r);
		r = list(&t, harness_fmt("limit=2&cursor=%s", next));
		free(next);
	}
	harness_resp_free(r);
	ck_assert_str_eq(want, all);
	free(want);
	/* the filters */
	r = list(&t, harness_fmt("customer_user_aid=%s", b));
	got = page_ids(r);
	ck_assert_str_eq(got, harness_fmt("%s %s ", ids[4], ids[3]));
	free(got);
	harness_resp_free(r);
	r = list(&t, "biller_id=" BILLER);
	got = page_ids(r);
	ck_assert_str_eq(got, harness_fmt("%s %s %s ", ids[2], ids[1], ids[0]));
	free(got);
	harness_resp_free(r);
	r = list(&t, "category=marketing");
	got = page_ids(r);
	ck_assert_str_eq(got, harness_fmt("%s ", ids[1]));
	free(got);
	harness_resp_free(r);
	r = list(&t, harness_fmt("delivery_status=suppressed&customer_user_aid=%s", a));
	got = page_ids(r);
	ck_assert_str_eq(got, harness_fmt("%s ", ids[1]));
	free(got);
	harness_resp_free(r);
	r = list(&t, "delivery_status=accepted&category=account_update&limit=1");
	got = page_ids(r);
	ck_assert_str_eq(got, harness_fmt("%s ", ids[4]));
	ck_assert_int_eq(devacct_bool(r, "has_more"), 1);
	free(got);
	harness_resp_free(r);
	/* created_after and created_before: strictly after, strictly before */
	mid = devacct_sql_value("SELECT to_char(created_at AT TIME ZONE 'UTC',"
	    " 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"') FROM customer_messages WHERE id = $1::uuid",
	    ids[2], NULL);
	r = list(&t, harness_fmt("created_after=%s", mid));
	got = page_ids(r);
	ck_assert_str_eq(got, harness_fmt("%s %s ", ids[4], ids[3]));
	free(got);
	harness_resp_free(r);
	r = list(&t, harness_fmt("created_before=%s", mid));
	got = page_ids(r);
	ck_assert_str_eq(got, harness_fmt("%s %s ", ids[1], ids[0]));
	free(got);
	harness_resp_free(r);
	free(mid);
	/* a cursor is bound to its filters; the input */
	r = list(&t, "limit=1");
	next = strdup(devacct_str(r, "next_cursor"));
	harness_resp_free(r);
	r = call(t.key, "GET", harness_fmt("/v1/customer-messages?category=marketing&cursor=%s",
	    next), NULL);
	harness_assert_coded(r, 400, "INVALID_CURSOR");
	harness_resp_free(r);
	r = call(tb.key, "GET", harness_fmt("/v1/customer-messages?limit=1&cursor=%s", next),
	    NULL);
	harness_assert_coded(r, 400, "INVALID_CURSOR");
	harness_resp_free(r);
	free(next);
	r = call(t.key, "GET", "/v1/customer-messages?limit=0", NULL);
	invalid(r, "limit", "out_of_range");
	harness_resp_free(r);
	r = call(t.key, "GET", "/v1/customer-messages?category=sms", NULL);
	invalid(r, "category", "invalid_enum");
	harness_resp_free(r);
	r = call(t.key, "GET", "/v1/customer-messages?created_after=yesterday", NULL);
	invalid(r, "created_after", "invalid_format");
	harness_resp_free(r);
	r = call(t.key, "GET", "/v1/customer-messages?page=2", NULL);
	invalid(r, "page", "unknown_field");
	harness_resp_free(r);
	for (int i = 0; i < 5; i++)
		free(ids[i]);
	free(a);
	free(b);
	tenant_free(&t);
}
END_TEST

/* Idempotency-Key: the same body answers the same, another 409. */
START_TEST(idempotency)
{
	struct receiver *rc = receiver_start(NULL);
	struct harness_resp *r, *again;
	struct devacct_tenant t;
	char *user = user_new("idem"), *b = message(user, BILLER, "account_update", "Once", "x");
	char *other = message(user, BILLER, "account_update", "Twice", "x");
	const char *key[] = { harness_fmt("Idempotency-Key: msg-%d-%ld", (int)getpid(),
	    (long)random()), NULL };
	char hdr[128];

	ck_assert_ptr_nonnull(rc);
	snprintf(hdr, sizeof(hdr), "%s", key[0]);
	key[0] = hdr;
	tenant_new(&t, rc);
	r = call_on("sandbox", t.key, "POST", "/v1/customer-messages", b, key);
	harness_expect(r, 201);
	again = call_on("sandbox", t.key, "POST", "/v1/customer-messages", b, key);
	harness_expect(again, 201);
	ck_assert_str_eq(again->body, r->body);
	harness_resp_free(again);
	again = call_on("sandbox", t.key, "POST", "/v1/customer-messages", other, key);
	harness_assert_coded(again, 409, "IDEMPOTENCY_CONFLICT");
	harness_resp_free(again);
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM customer_messages"
	    " WHERE client_id = $1", t.client, NULL), 1);
	ck_assert_ptr_nonnull(devacct_received(rc, "customer.message.created",
	    devacct_str(r, "message_id")));
	ck_assert_int_eq(events_of(t.client, "customer.message.created"), 1);
	harness_resp_free(r);
	/* without a key, each send is a message */
	r = call(t.key, "POST", "/v1/customer-messages", b);
	harness_expect(r, 201);
	harness_resp_free(r);
	ck_assert_int_eq(events_of(t.client, "customer.message.created"), 2);
	receiver_stop(rc);
	tenant_free(&t);
	free(user);
	free(b);
	free(other);
}
END_TEST

/* Another tenant's ids answer as unknown ones; a body's client_id. */
START_TEST(tenants)
{
	struct harness_resp *r;
	char *user = user_new("ten"), *id, *b;

	r = send_msg(ta.key, user, "account_update", "Mine");
	harness_expect(r, 201);
	id = strdup(devacct_str(r, "message_id"));
	harness_resp_free(r);
	r = call(ta.key, "POST", "/v1/customer-suppressions",
	    harness_fmt("{\"customer_user_aid\":\"%s\"}", user));
	harness_expect(r, 201);
	harness_resp_free(r);
	r = call(tb.key, "GET", harness_fmt("/v1/customer-messages/%s", id), NULL);
	harness_assert_coded(r, 404, "CUSTOMER_MESSAGE_NOT_FOUND");
	harness_resp_free(r);
	r = call(tb.key, "POST", harness_fmt("/v1/customer-messages/%s/complaint", id), NULL);
	harness_assert_coded(r, 404, "CUSTOMER_MESSAGE_NOT_FOUND");
	harness_resp_free(r);
	r = call(tb.key, "GET", harness_fmt("/v1/customer-suppressions/%s", user), NULL);
	harness_assert_coded(r, 404, "CUSTOMER_SUPPRESSION_NOT_FOUND");
	harness_resp_free(r);
	r = call(tb.key, "DELETE", harness_fmt("/v1/customer-suppressions/%s", user), NULL);
	harness_assert_coded(r, 404, "CUSTOMER_SUPPRESSION_NOT_FOUND");
	harness_resp_free(r);
	r = call(tb.key, "GET", harness_fmt("/v1/customer-messages?customer_user_aid=%s", user),
	    NULL);
	harness_expect(r, 200);
	ck_assert_int_eq(json_object_array_length(harness_json_get(r, "data")), 0);
	harness_resp_free(r);
	/* tb's own suppression list does not hold ta's user: tb's send is accepted */
	r = send_msg(tb.key, user, "account_update", "Theirs");
	harness_expect(r, 201);
	harness_resp_free(r);
	r = call(ta.key, "GET", harness_fmt("/v1/customer-suppressions/%s", user), NULL);
	harness_expect(r, 200);
	harness_resp_free(r);
	/* the body's client_id: another is 403, its own is fine */
	b = message(user, BILLER, "account_update", "Hi", "x");
	b[strlen(b) - 1] = '\0';
	r = call(ta.key, "POST", "/v1/customer-messages",
	    harness_fmt("%s,\"client_id\":\"%s\"}", b, tb.client));
	harness_assert_coded(r, 403, "CLIENT_ID_MISMATCH");
	harness_resp_free(r);
	r = call(ta.key, "POST", "/v1/customer-suppressions",
	    harness_fmt("{\"customer_user_aid\":\"x\",\"client_id\":\"%s\"}", tb.client));
	harness_assert_coded(r, 403, "CLIENT_ID_MISMATCH");
	harness_resp_free(r);
	r = call(ta.key, "PUT", harness_fmt("/v1/customers/%s/consents", user),
	    harness_fmt("{\"marketing\":true,\"client_id\":\"%s\"}", tb.client));
	harness_assert_coded(r, 403, "CLIENT_ID_MISMATCH");
	harness_resp_free(r);
	r = call(ta.key, "POST", "/v1/customer-messages",
	    harness_fmt("%s,\"client_id\":\"%s\"}", b, ta.client));
	harness_expect(r, 200);		/* ta's user is suppressed */
	ck_assert_pstr_eq(devacct_str(r, "client_id"), ta.client);
	harness_resp_free(r);
	free(b);
	free(id);
	free(user);
}
END_TEST

/* A key sees its environment's rows only. */
START_TEST(environments)
{
	struct harness_resp *r;
	char *user = user_new("env"), *id;

	r = send_on("api", dev_key, user, "account_update", "Development");
	harness_expect(r, 201);
	id = strdup(devacct_str(r, "message_id"));
	harness_resp_free(r);
	r = call_on("api", dev_key, "GET", harness_fmt("/v1/customer-messages/%s", id), NULL,
	    NULL);
	harness_expect(r, 200);
	harness_resp_free(r);
	/* the same client's sandbox key */
	r = call(ta.key, "GET", harness_fmt("/v1/customer-messages/%s", id), NULL);
	harness_assert_coded(r, 404, "CUSTOMER_MESSAGE_NOT_FOUND");
	harness_resp_free(r);
	r = call(ta.key, "GET", harness_fmt("/v1/customer-messages?customer_user_aid=%s", user),
	    NULL);
	harness_expect(r, 200);
	ck_assert_int_eq(json_object_array_length(harness_json_get(r, "data")), 0);
	harness_resp_free(r);
	r = call(ta.key, "POST", harness_fmt("/v1/customer-messages/%s/complaint", id), NULL);
	harness_assert_coded(r, 404, "CUSTOMER_MESSAGE_NOT_FOUND");
	harness_resp_free(r);
	/* a suppression and consents of one environment are not the other's */
	r = call_on("api", dev_key, "POST", "/v1/customer-suppressions",
	    harness_fmt("{\"customer_user_aid\":\"%s\"}", user), NULL);
	harness_expect(r, 201);
	harness_resp_free(r);
	r = call(ta.key, "GET", harness_fmt("/v1/customer-suppressions/%s", user), NULL);
	harness_assert_coded(r, 404, "CUSTOMER_SUPPRESSION_NOT_FOUND");
	harness_resp_free(r);
	r = send_msg(ta.key, user, "account_update", "Sandbox");
	harness_expect(r, 201);
	harness_resp_free(r);
	r = send_on("api", dev_key, user, "account_update", "Development again");
	harness_expect(r, 200);
	ck_assert_pstr_eq(devacct_str(r, "suppression_reason"), "suppressed");
	harness_resp_free(r);
	r = call_on("api", dev_key, "GET", harness_fmt("/v1/customer-messages?customer_user_aid=%s",
	    user), NULL, NULL);
	harness_expect(r, 200);
	ck_assert_int_eq(json_object_array_length(harness_json_get(r, "data")), 2);
	harness_resp_free(r);
	/* metering's count: accepted messages per day and environment */
	ck_assert_int_eq(devacct_sql_int("SELECT coalesce(sum(value), 0)"
	    " FROM customer_messages_sent($1, 'development', current_date - 1, current_date + 1)",
	    ta.client, NULL), devacct_sql_int("SELECT count(*) FROM customer_messages"
	    " WHERE client_id = $1 AND environment = 'development'"
	    " AND delivery_status = 'accepted'", ta.client, NULL));
	free(id);
	free(user);
}
END_TEST

static Suite *
messages_suite(void)
{
	Suite *s = suite_create("e2e_messages");
	TCase *tc = tcase_create("messages");

	tcase_add_unchecked_fixture(tc, stack_up, stack_down);
	tcase_add_checked_fixture(tc, harness_fixture_recover, NULL);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, input_rules);
	tcase_add_test(tc, accepted_event);
	tcase_add_test(tc, suppressed_no_event);
	tcase_add_test(tc, consents);
	tcase_add_test(tc, complaint);
	tcase_add_test(tc, parallel_writes);
	tcase_add_test(tc, suppression_list);
	tcase_add_test(tc, list_filters_pages);
	tcase_add_test(tc, idempotency);
	tcase_add_test(tc, tenants);
	tcase_add_test(tc, environments);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return harness_run_suite(messages_suite());
}
