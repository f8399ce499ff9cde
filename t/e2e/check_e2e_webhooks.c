/*
 * Webhook subscriptions end to end, through nginx, the way developers and
 * their servers use them:
 *   api     one stack (allow_private_targets = 1, as dev and tests run):
 *           the developer's routes under /v1/iam/clients/{clientId}, the
 *           client's own /v1/webhook-endpoints with an API key, test
 *           deliveries to a local receiver (t/e2e/receiver) that checks the
 *           signature with OpenSSL, a closed port, a timeout, rotation, the
 *           webhook_endpoint.deleted activity row, tenant isolation, and no
 *           secret in the logs or at rest;
 *   strict  a stack with allow_private_targets = 0: private, loopback and
 *           metadata addresses in every spelling are refused at
 *           registration and again at delivery.
 * Developers are made once per stack in the unchecked fixture (t/e2e/
 * devacct: sign-up, the e-mailed code, confirm-and-signin); each test makes
 * fresh clients (POST /v1/iam/clients) and keys (POST .../client-secrets).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <pthread.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <check.h>
#include <curl/curl.h>
#include <json-c/json.h>
#include <libpq-fe.h>

#include "core/db.h"
#include "devacct.h"
#include "harness.h"
#include "receiver.h"
#include "webhooks/webhooks.h"

#define N(x) (sizeof(x) / sizeof((x)[0]))
#define WAIT_MS		5000
#define API_VERSION	"2026-11-01"	/* the config default */

static struct devacct dev_a, dev_b;

/* ------------------------------------------------------------------ */
/* Helpers                                                             */

/* A request with an API key, on the host its environment belongs to. */
static struct harness_resp *
key_call(const char *key, const char *method, const char *path, const char *body,
    const char *const extra[])
{
	const char *host = strncmp(key, "bds_sandbox_", 12) == 0 ? "sandbox" : "api";

	return devacct_call(method, host, path, devacct_bearer(key), body, extra);
}

static struct harness_resp *
wh_create(const struct devacct *d, const char *client, const char *body)
{
	const char *extra[] = { harness_idem_header(), NULL };

	return devacct_jwt(d, "POST", harness_fmt("/v1/iam/clients/%s/webhooks", client), body, extra);
}

struct wh {
	char	 id[96];
	char	 secret[192];
};

/* Register a webhook through the JWT route; 201 expected. */
static void
wh_register(const struct devacct *d, const char *client, const char *env, const char *url,
    const char *events, struct wh *w)
{
	struct harness_resp *r = wh_create(d, client,
	    harness_fmt("{\"environment\":\"%s\",\"url\":\"%s\",\"events\":%s}", env, url, events));

	harness_expect(r, 201);
	snprintf(w->id, sizeof(w->id), "%s", devacct_str(r, "webhook.id"));
	snprintf(w->secret, sizeof(w->secret), "%s", devacct_str(r, "webhook.secret"));
	harness_resp_free(r);
}

static struct harness_resp *
wh_test(const struct devacct *d, const char *client, const char *id, const char *type)
{
	return devacct_jwt(d, "POST", harness_fmt("/v1/iam/clients/%s/webhooks/%s/test", client, id),
	    harness_fmt("{\"event_type\":\"%s\"}", type), NULL);
}

/* A test delivery the endpoint accepted: 200 with success true. */
static void
wh_test_ok(const struct devacct *d, const char *client, const char *id, const char *type)
{
	struct harness_resp *r = wh_test(d, client, id, type);

	harness_expect(r, 200);
	ck_assert_msg(devacct_bool(r, "success"), "test not delivered: %s", r->body);
	harness_resp_free(r);
}

/* A loopback port nothing listens on. */
static int
closed_port(void)
{
	struct sockaddr_in sa;
	socklen_t len = sizeof(sa);
	int fd = socket(AF_INET, SOCK_STREAM, 0), port;

	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	ck_assert_int_eq(getsockname(fd, (struct sockaddr *)&sa, &len), 0);
	port = ntohs(sa.sin_port);
	close(fd);
	return port;
}

static struct receiver *
receiver_up(int status)
{
	struct receiver_opts o = { status, 0 };
	struct receiver *rc = receiver_start(&o);

	ck_assert_msg(rc != NULL, "receiver: %s", receiver_error());
	return rc;
}

/* The receiver's URL for path (static buffer per call). */
static const char *
rurl(const struct receiver *rc, const char *path)
{
	static char buf[4][256];
	static int next;

	return receiver_url(rc, path, buf[next++ % 4], sizeof(buf[0]));
}

/* ------------------------------------------------------------------ */
/* Fixtures                                                            */

static void
api_stack(void)
{
	harness_fixture_start_default();
	devacct_legal();
	devacct_new(&dev_a, "whk-a");
	devacct_new(&dev_b, "whk-b");
	/* development keys need a verified e-mail */
	devacct_verify_email(&dev_a);
	devacct_verify_email(&dev_b);
}

static void
strict_stack(void)
{
	struct harness_opts o;

	harness_opts_defaults(&o);
	o.extra_config = "allow_private_targets = 0";	/* the file's later line wins */
	harness_fixture_start(&o);
	devacct_legal();
	devacct_new(&dev_a, "whk-strict");
}

/* ------------------------------------------------------------------ */
/* Schema                                                              */

START_TEST(statements_prepare)
{
	struct db *db = db_new(harness_database_url());

	ck_assert_ptr_nonnull(db);
	ck_assert_int_eq(db_ensure(db), 0);
	for (size_t i = 0; i < webhooks_stmt_set.n; i++)
		ck_assert_msg(db_prepare(db, &webhooks_stmt_set.stmts[i]) == 0, "%s: %s",
		    webhooks_stmt_set.stmts[i].name, db_errmsg(db));
	db_free(db);
}
END_TEST

/* ------------------------------------------------------------------ */
/* POST /v1/iam/clients/{clientId}/webhooks                            */

START_TEST(create_shows_secret_once)
{
	char *client = devacct_client_new(&dev_a), *n, *body;
	const char *extra[] = { harness_idem_header(), NULL };
	struct harness_resp *r, *r2;
	const char *secret, *id;

	body = strdup(harness_fmt("{\"environment\":\"sandbox\",\"url\":\"http://127.0.0.1:9/hook\","
	    "\"events\":[\"bill.created\",\"bill.paid\"]}"));
	r = devacct_jwt(&dev_a, "POST", harness_fmt("/v1/iam/clients/%s/webhooks", client), body, extra);
	harness_expect(r, 201);
	ck_assert(devacct_bool(r, "success"));
	ck_assert_ptr_nonnull(id = devacct_str(r, "webhook.id"));
	ck_assert_msg(strncmp(id, "whk_", 4) == 0, "id %s", id);
	ck_assert_pstr_eq(devacct_str(r, "webhook.url"), "http://127.0.0.1:9/hook");
	ck_assert_pstr_eq(devacct_str(r, "webhook.environment"), "sandbox");
	ck_assert_pstr_eq(devacct_str(r, "webhook.clientId"), client);
	ck_assert_str_eq(devacct_text(r, "webhook.events"), "[\"bill.created\",\"bill.updated\"]");
	ck_assert(devacct_bool(r, "webhook.enabled"));
	ck_assert_ptr_nonnull(devacct_str(r, "webhook.createdAt"));
	ck_assert_ptr_nonnull(secret = devacct_str(r, "webhook.secret"));
	ck_assert_msg(strncmp(secret, "whsec_", 6) == 0 && strlen(secret) == 6 + 43,
	    "secret %s", secret);

	/* at rest the secret is sealed: its plaintext is nowhere in the row */
	n = devacct_sql_value("SELECT count(*) FROM webhooks WHERE client_id = $1 AND"
	    " position(convert_to($2, 'UTF8') IN secret) = 0 AND events::text NOT LIKE '%whsec%'",
	    client, secret);
	ck_assert_str_eq(n, "1");
	free(n);

	/* the same key again: not replayable, nothing new */
	r2 = devacct_jwt(&dev_a, "POST", harness_fmt("/v1/iam/clients/%s/webhooks", client), body, extra);
	devacct_assert_iam(r2, 409, "IDEMPOTENCY_KEY_NOT_REPLAYABLE");
	ck_assert_ptr_null(strstr(r2->body, "whsec_"));
	harness_resp_free(r2);
	/* the same key with another body: a conflict */
	r2 = devacct_jwt(&dev_a, "POST", harness_fmt("/v1/iam/clients/%s/webhooks", client),
	    "{\"environment\":\"sandbox\",\"url\":\"http://127.0.0.1:9/other\",\"events\":[\"*\"]}",
	    extra);
	devacct_assert_iam(r2, 409, "IDEMPOTENCY_CONFLICT");
	harness_resp_free(r2);
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM webhooks WHERE client_id = $1",
	    client, NULL), 1);

	/* the list never shows a secret */
	r2 = devacct_jwt(&dev_a, "GET", harness_fmt("/v1/iam/clients/%s/webhooks", client), NULL, NULL);
	harness_expect(r2, 200);
	ck_assert_pstr_eq(devacct_str(r2, "webhooks.0.id"), id);
	ck_assert_ptr_null(devacct_json(r2, "webhooks.0.secret"));
	ck_assert_ptr_null(strstr(r2->body, "whsec_"));
	harness_resp_free(r2);
	harness_resp_free(r);
	free(body);
	free(client);
}
END_TEST

/* A secret the developer chose is used (and echoed once). */
START_TEST(create_with_own_secret)
{
	struct receiver *rc = receiver_up(200);
	char *client = devacct_client_new(&dev_a);
	const char *mine = "my-own-secret-0123456789";
	const struct receiver_req *q;
	struct harness_resp *r;
	char id[96];

	r = wh_create(&dev_a, client, harness_fmt("{\"environment\":\"sandbox\",\"url\":\"%s\","
	    "\"events\":[\"all\"],\"secret\":\"%s\"}", rurl(rc, "/own"), mine));
	harness_expect(r, 201);
	ck_assert_pstr_eq(devacct_str(r, "webhook.secret"), mine);
	snprintf(id, sizeof(id), "%s", devacct_str(r, "webhook.id"));
	harness_resp_free(r);
	wh_test_ok(&dev_a, client, id, "insight.created");
	ck_assert_ptr_nonnull(q = receiver_wait(rc, 0, WAIT_MS));
	ck_assert_int_eq(receiver_verify(q, mine, (long long)time(NULL), 300), RECEIVER_SIG_OK);
	receiver_stop(rc);
	free(client);
}
END_TEST

/* Historic names are stored as the spec's table says; repeats go. */
static const struct {
	const char	*events;
	const char	*stored;
} normalised[] = {
	{ "[\"bill.paid\"]", "[\"bill.updated\"]" },
	{ "[\"link.expired\"]", "[\"link.disconnected\"]" },
	{ "[\"request-to-link.updated\"]", "[\"link_request.updated\"]" },
	{ "[\"bill.paid\",\"bill.updated\",\"bill.paid\"]", "[\"bill.updated\"]" },
	{ "[\"link.expired\",\"link.completed\",\"link.disconnected\"]",
	  "[\"link.disconnected\",\"link.completed\"]" },
	{ "[\"*\"]", "[\"*\"]" },
	{ "[\"all\"]", "[\"all\"]" },
	{ "[\"*\",\"*\",\"bill.created\"]", "[\"*\",\"bill.created\"]" },
	{ "[\"bill.created\",\"bill.created\"]", "[\"bill.created\"]" },
	{ "[\"bill.created\",\"bill.updated\",\"bill.deleted\",\"link.completed\","
	  "\"connection.ready\",\"link.disconnected\",\"link_request.created\","
	  "\"link_request.updated\",\"link_request.cancelled\",\"payment.observed\","
	  "\"biller.unsupported\",\"customer.message.created\",\"customer.message.complaint\","
	  "\"bill_import.updated\",\"link_token.completed\",\"link.session_finished\","
	  "\"link.failure_reason_corrected\",\"pay.scheduled\",\"pay.succeeded\",\"pay.failed\","
	  "\"pay.escalated\",\"insight.created\",\"insight.updated\",\"sandbox.claimed\","
	  "\"sandbox.expiring\"]", NULL },
};

START_TEST(create_normalises_events)
{
	char *client = devacct_client_new(&dev_a), *stored;
	struct harness_resp *r;
	const char *want = normalised[_i].stored ? normalised[_i].stored : normalised[_i].events;

	r = wh_create(&dev_a, client, harness_fmt("{\"environment\":\"production\","
	    "\"url\":\"https://127.0.0.1:9/h\",\"events\":%s}", normalised[_i].events));
	harness_expect(r, 201);
	ck_assert_str_eq(devacct_text(r, "webhook.events"), want);
	stored = devacct_sql_value("SELECT events::text FROM webhooks WHERE id = $1",
	    devacct_str(r, "webhook.id"), NULL);
	{
		/* jsonb's text has spaces after commas: compare without them */
		char *p, *o;

		for (p = o = stored; *p; p++)
			if (*p != ' ')
				*o++ = *p;
		*o = '\0';
	}
	ck_assert_str_eq(stored, want);
	free(stored);
	harness_resp_free(r);
	free(client);
}
END_TEST

/* One error per unknown name, each naming its item; nothing stored. */
START_TEST(create_unknown_event_types)
{
	char *client = devacct_client_new(&dev_a);
	struct harness_resp *r = wh_create(&dev_a, client, "{\"environment\":\"sandbox\","
	    "\"url\":\"http://127.0.0.1:9/h\",\"events\":[\"bill.created\",\"bill.exploded\","
	    "\"BILL.CREATED\",\"**\",\"webhook_endpoint.deleted\",\"bill.paid\"]}");
	struct json_object *errs;

	devacct_assert_iam(r, 400, "VALIDATION_ERROR");
	devacct_assert_error(r, "events[1]", "unknown_event_type");
	devacct_assert_error(r, "events[2]", "unknown_event_type");
	devacct_assert_error(r, "events[3]", "unknown_event_type");
	devacct_assert_error(r, "events[4]", "unknown_event_type");
	ck_assert_ptr_nonnull(errs = harness_json_get(r, "errors"));
	ck_assert_uint_eq(json_object_array_length(errs), 4);
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM webhooks WHERE client_id = $1",
	    client, NULL), 0);
	harness_resp_free(r);
	free(client);
}
END_TEST

#define VALID_REST "\"url\":\"http://127.0.0.1:9/h\",\"events\":[\"*\"]"

static const struct {
	const char	*name;
	const char	*body;
	const char	*field;
	const char	*code;
} create_bad[] = {
	{ "no environment", "{" VALID_REST "}", "environment", "required" },
	{ "unknown environment", "{\"environment\":\"staging\"," VALID_REST "}", "environment",
	  "invalid_enum" },
	{ "environment not a string", "{\"environment\":1," VALID_REST "}", "environment",
	  "invalid_type" },
	{ "no url", "{\"environment\":\"sandbox\",\"events\":[\"*\"]}", "url", "required" },
	{ "url not a string", "{\"environment\":\"sandbox\",\"url\":42,\"events\":[\"*\"]}",
	  "url", "invalid_type" },
	{ "url null", "{\"environment\":\"sandbox\",\"url\":null,\"events\":[\"*\"]}", "url",
	  "invalid_type" },
	{ "url empty", "{\"environment\":\"sandbox\",\"url\":\"\",\"events\":[\"*\"]}", "url",
	  "too_short" },
	{ "url not http", "{\"environment\":\"sandbox\",\"url\":\"ftp://example.com/x\","
	  "\"events\":[\"*\"]}", "url", "invalid_url" },
	{ "url relative", "{\"environment\":\"sandbox\",\"url\":\"/hook\",\"events\":[\"*\"]}",
	  "url", "invalid_url" },
	{ "url with userinfo", "{\"environment\":\"sandbox\","
	  "\"url\":\"http://user:pw@127.0.0.1:9/h\",\"events\":[\"*\"]}", "url", "invalid_url" },
	{ "url with fragment", "{\"environment\":\"sandbox\","
	  "\"url\":\"http://127.0.0.1:9/h#x\",\"events\":[\"*\"]}", "url", "invalid_url" },
	{ "url with a bad numeric host", "{\"environment\":\"sandbox\","
	  "\"url\":\"http://1.2.3.999/h\",\"events\":[\"*\"]}", "url", "invalid_url" },
	{ "url with a space", "{\"environment\":\"sandbox\","
	  "\"url\":\"http://127.0.0.1:9/a b\",\"events\":[\"*\"]}", "url", "invalid_url" },
	{ "http in production", "{\"environment\":\"production\"," VALID_REST "}", "url",
	  "insecure_url" },
	{ "http in development", "{\"environment\":\"development\"," VALID_REST "}", "url",
	  "insecure_url" },
	{ "no events", "{\"environment\":\"sandbox\",\"url\":\"http://127.0.0.1:9/h\"}",
	  "events", "required" },
	{ "events not an array", "{\"environment\":\"sandbox\","
	  "\"url\":\"http://127.0.0.1:9/h\",\"events\":\"bill.created\"}", "events",
	  "invalid_type" },
	{ "events empty", "{\"environment\":\"sandbox\",\"url\":\"http://127.0.0.1:9/h\","
	  "\"events\":[]}", "events", "too_few_items" },
	{ "event not a string", "{\"environment\":\"sandbox\",\"url\":\"http://127.0.0.1:9/h\","
	  "\"events\":[\"*\",1]}", "events[1]", "invalid_type" },
	{ "event null", "{\"environment\":\"sandbox\",\"url\":\"http://127.0.0.1:9/h\","
	  "\"events\":[null]}", "events[0]", "invalid_type" },
	{ "secret too short", "{\"environment\":\"sandbox\"," VALID_REST
	  ",\"secret\":\"short\"}", "secret", "too_short" },
	{ "secret not a string", "{\"environment\":\"sandbox\"," VALID_REST ",\"secret\":true}",
	  "secret", "invalid_type" },
	{ "secret with a control character", "{\"environment\":\"sandbox\"," VALID_REST
	  ",\"secret\":\"0123456789abcdef\\n\"}", "secret", "invalid_format" },
	{ "unknown field", "{\"environment\":\"sandbox\"," VALID_REST ",\"foo\":1}", "foo",
	  "unknown_field" },
	{ "body is an array", "[]", "", "invalid_type" },
	{ "body is a string", "\"x\"", "", "invalid_type" },
};

START_TEST(create_bad_input)
{
	char *client = devacct_client_new(&dev_a);
	struct harness_resp *r = wh_create(&dev_a, client, create_bad[_i].body);

	ck_assert_msg(r->status == 400, "%s: status %ld: %s", create_bad[_i].name, r->status,
	    r->body);
	devacct_assert_iam(r, 400, "VALIDATION_ERROR");
	devacct_assert_error(r, create_bad[_i].field, create_bad[_i].code);
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM webhooks WHERE client_id = $1",
	    client, NULL), 0);
	harness_resp_free(r);
	free(client);
}
END_TEST

START_TEST(create_bad_bodies)
{
	char *client = devacct_client_new(&dev_a), *big;
	const char *path = harness_fmt("/v1/iam/clients/%s/webhooks", client);
	const char *extra[] = { harness_idem_header(), NULL };
	struct harness_resp *r;
	size_t i, off;

	/* no Idempotency-Key header */
	r = devacct_jwt(&dev_a, "POST", path, "{\"environment\":\"sandbox\"," VALID_REST "}",
	    NULL);
	devacct_assert_iam(r, 400, "VALIDATION_ERROR");
	devacct_assert_error(r, "Idempotency-Key", "required");
	harness_resp_free(r);
	/* a key that is not printable ASCII */
	{
		const char *bad[] = { "Idempotency-Key: caf\xc3\xa9", NULL };

		r = devacct_jwt(&dev_a, "POST", path, "{\"environment\":\"sandbox\"," VALID_REST "}",
		    bad);
		ck_assert_msg(r->status == 400, "status %ld: %s", r->status, r->body);
		harness_resp_free(r);
	}
	/* invalid UTF-8, invalid JSON */
	r = devacct_jwt(&dev_a, "POST", path, "{\"environment\":\"sand\xff\"}", extra);
	devacct_assert_iam(r, 400, "INVALID_UTF8");
	harness_resp_free(r);
	r = devacct_jwt(&dev_a, "POST", path, "{\"environment\":", extra);
	devacct_assert_iam(r, 400, "INVALID_JSON");
	harness_resp_free(r);
	/* 51 events */
	big = malloc(65536);
	ck_assert_ptr_nonnull(big);
	off = (size_t)sprintf(big, "{\"environment\":\"sandbox\",\"url\":\"http://127.0.0.1:9/h\","
	    "\"events\":[");
	for (i = 0; i < 51; i++)
		off += (size_t)sprintf(big + off, "%s\"bill.created\"", i ? "," : "");
	strcpy(big + off, "]}");
	r = devacct_jwt(&dev_a, "POST", path, big, extra);
	devacct_assert_iam(r, 400, "VALIDATION_ERROR");
	devacct_assert_error(r, "events", "too_many_items");
	harness_resp_free(r);
	/* a URL over 2048 characters */
	off = (size_t)sprintf(big, "{\"environment\":\"sandbox\",\"events\":[\"*\"],"
	    "\"url\":\"http://127.0.0.1:9/");
	memset(big + off, 'a', 2100);
	strcpy(big + off + 2100, "\"}");
	r = devacct_jwt(&dev_a, "POST", path, big, extra);
	devacct_assert_iam(r, 400, "VALIDATION_ERROR");
	devacct_assert_error(r, "url", "too_long");
	harness_resp_free(r);
	free(big);
	/* over the body limit (1 MiB): 413 */
	big = malloc(1536 * 1024 + 64);
	ck_assert_ptr_nonnull(big);
	off = (size_t)sprintf(big, "{\"environment\":\"sandbox\",\"url\":\"");
	memset(big + off, 'a', 1536 * 1024);
	strcpy(big + off + 1536 * 1024, "\"}");
	r = devacct_jwt(&dev_a, "POST", path, big, extra);
	ck_assert_msg(r->status == 413, "status %ld", r->status);
	harness_resp_free(r);
	free(big);
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM webhooks WHERE client_id = $1",
	    client, NULL), 0);
	free(client);
}
END_TEST

START_TEST(create_environments_and_schemes)
{
	char *client = devacct_client_new(&dev_a);
	struct harness_resp *r;

	r = wh_create(&dev_a, client, "{\"environment\":\"sandbox\"," VALID_REST "}");
	harness_expect(r, 201);
	harness_resp_free(r);
	r = wh_create(&dev_a, client, "{\"environment\":\"development\","
	    "\"url\":\"https://127.0.0.1:9/h\",\"events\":[\"*\"]}");
	harness_expect(r, 201);
	ck_assert_pstr_eq(devacct_str(r, "webhook.environment"), "development");
	harness_resp_free(r);
	r = wh_create(&dev_a, client, "{\"environment\":\"production\","
	    "\"url\":\"HTTPS://127.0.0.1:9/h\",\"events\":[\"*\"]}");
	harness_expect(r, 201);
	harness_resp_free(r);
	ck_assert_int_eq(devacct_sql_int("SELECT count(DISTINCT environment) FROM webhooks"
	    " WHERE client_id = $1", client, NULL), 3);
	free(client);
}
END_TEST

START_TEST(create_limit_per_environment)
{
	char *client = devacct_client_new(&dev_a);
	struct harness_resp *r;

	for (int i = 0; i < WEBHOOKS_PER_ENVIRONMENT; i++) {
		r = wh_create(&dev_a, client, "{\"environment\":\"sandbox\"," VALID_REST "}");
		harness_expect(r, 201);
		harness_resp_free(r);
	}
	r = wh_create(&dev_a, client, "{\"environment\":\"sandbox\"," VALID_REST "}");
	devacct_assert_iam(r, 400, "WEBHOOK_LIMIT_REACHED");
	harness_resp_free(r);
	/* another environment has its own room */
	r = wh_create(&dev_a, client, "{\"environment\":\"production\","
	    "\"url\":\"https://127.0.0.1:9/h\",\"events\":[\"*\"]}");
	harness_expect(r, 201);
	harness_resp_free(r);
	free(client);
}
END_TEST

/* ------------------------------------------------------------------ */
/* GET list, tenant isolation on every JWT route                       */

START_TEST(list_in_creation_order)
{
	char *client = devacct_client_new(&dev_a), *other = devacct_client_new(&dev_a);
	struct harness_resp *r;
	struct wh w1, w2, w3;

	r = devacct_jwt(&dev_a, "GET", harness_fmt("/v1/iam/clients/%s/webhooks", client), NULL, NULL);
	harness_expect(r, 200);
	ck_assert_str_eq(devacct_text(r, "webhooks"), "[]");
	harness_resp_free(r);
	wh_register(&dev_a, client, "sandbox", "http://127.0.0.1:9/1", "[\"bill.created\"]", &w1);
	wh_register(&dev_a, client, "production", "https://127.0.0.1:9/2", "[\"*\"]", &w2);
	wh_register(&dev_a, other, "sandbox", "http://127.0.0.1:9/3", "[\"*\"]", &w3);
	r = devacct_jwt(&dev_a, "GET", harness_fmt("/v1/iam/clients/%s/webhooks", client), NULL, NULL);
	harness_expect(r, 200);
	ck_assert(devacct_bool(r, "success"));
	ck_assert_uint_eq(json_object_array_length(devacct_json(r, "webhooks")), 2);
	ck_assert_pstr_eq(devacct_str(r, "webhooks.0.id"), w1.id);
	ck_assert_pstr_eq(devacct_str(r, "webhooks.1.id"), w2.id);
	ck_assert_pstr_eq(devacct_str(r, "webhooks.0.url"), "http://127.0.0.1:9/1");
	ck_assert_str_eq(devacct_text(r, "webhooks.0.events"), "[\"bill.created\"]");
	ck_assert_pstr_eq(devacct_str(r, "webhooks.1.environment"), "production");
	ck_assert_ptr_null(strstr(r->body, "whsec_"));
	harness_resp_free(r);
	/* page and page_size are refused on every list */
	r = devacct_jwt(&dev_a, "GET", harness_fmt("/v1/iam/clients/%s/webhooks?page=1", client),
	    NULL, NULL);
	devacct_assert_iam(r, 400, "VALIDATION_ERROR");
	devacct_assert_error(r, "page", "unknown_field");
	harness_resp_free(r);
	free(client);
	free(other);
}
END_TEST

/* Developer B with A's client ids and webhook ids: 404 everywhere, and
 * nothing changes; A with a mix of its client and B's webhook: 404. */
START_TEST(jwt_tenant_isolation)
{
	char *ca = devacct_client_new(&dev_a), *cb = devacct_client_new(&dev_b);
	const char *extra[] = { harness_idem_header(), NULL };
	struct harness_resp *r;
	struct wh wa, wb;

	wh_register(&dev_a, ca, "sandbox", "http://127.0.0.1:9/a", "[\"*\"]", &wa);
	wh_register(&dev_b, cb, "sandbox", "http://127.0.0.1:9/b", "[\"*\"]", &wb);

	r = devacct_jwt(&dev_b, "GET", harness_fmt("/v1/iam/clients/%s/webhooks", ca), NULL, NULL);
	devacct_assert_iam(r, 404, "CLIENT_NOT_FOUND");
	harness_resp_free(r);
	r = devacct_jwt(&dev_b, "POST", harness_fmt("/v1/iam/clients/%s/webhooks", ca),
	    "{\"environment\":\"sandbox\"," VALID_REST "}", extra);
	devacct_assert_iam(r, 404, "CLIENT_NOT_FOUND");
	harness_resp_free(r);
	r = devacct_jwt(&dev_b, "DELETE", harness_fmt("/v1/iam/clients/%s/webhooks/%s", ca, wa.id),
	    NULL, NULL);
	devacct_assert_iam(r, 404, NULL);
	harness_resp_free(r);
	r = wh_test(&dev_b, ca, wa.id, "bill.created");
	devacct_assert_iam(r, 404, NULL);
	harness_resp_free(r);
	r = devacct_jwt(&dev_b, "GET", harness_fmt("/v1/iam/clients/%s/client-secrets/sandbox/webhook",
	    ca), NULL, NULL);
	devacct_assert_iam(r, 404, NULL);
	harness_resp_free(r);
	r = devacct_jwt(&dev_b, "PUT", harness_fmt("/v1/iam/clients/%s/client-secrets/sandbox/webhook",
	    ca), "{\"enabled\":false}", NULL);
	devacct_assert_iam(r, 404, NULL);
	harness_resp_free(r);
	/* B's own client with A's webhook id, and A's client with B's */
	r = devacct_jwt(&dev_b, "DELETE", harness_fmt("/v1/iam/clients/%s/webhooks/%s", cb, wa.id),
	    NULL, NULL);
	devacct_assert_iam(r, 404, "WEBHOOK_NOT_FOUND");
	harness_resp_free(r);
	r = wh_test(&dev_a, ca, wb.id, "bill.created");
	devacct_assert_iam(r, 404, "WEBHOOK_NOT_FOUND");
	harness_resp_free(r);
	/* unknown and malformed ids */
	r = devacct_jwt(&dev_a, "GET", "/v1/iam/clients/cli_nope/webhooks", NULL, NULL);
	devacct_assert_iam(r, 404, "CLIENT_NOT_FOUND");
	harness_resp_free(r);
	r = devacct_jwt(&dev_a, "DELETE", harness_fmt("/v1/iam/clients/%s/webhooks/whk_nope", ca),
	    NULL, NULL);
	devacct_assert_iam(r, 404, "WEBHOOK_NOT_FOUND");
	harness_resp_free(r);
	/* nothing changed */
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM webhooks WHERE client_id = $1"
	    " AND enabled", ca, NULL), 1);
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM webhooks WHERE client_id = $1",
	    cb, NULL), 1);
	/* no token, a bad token */
	r = devacct_call("GET", "api", harness_fmt("/v1/iam/clients/%s/webhooks", ca), NULL, NULL, NULL);
	devacct_assert_iam(r, 401, NULL);
	harness_resp_free(r);
	r = devacct_call("GET", "api", harness_fmt("/v1/iam/clients/%s/webhooks", ca),
	    "Bearer not-a-token", NULL, NULL);
	devacct_assert_iam(r, 401, NULL);
	harness_resp_free(r);
	free(ca);
	free(cb);
}
END_TEST

/* ------------------------------------------------------------------ */
/* PUT/GET .../client-secrets/{environment}/webhook                    */

START_TEST(primary_webhook)
{
	char *client = devacct_client_new(&dev_a);
	const char *path = harness_fmt("/v1/iam/clients/%s/client-secrets/production/webhook", client);
	struct harness_resp *r;
	char id[96];

	r = devacct_jwt(&dev_a, "GET", path, NULL, NULL);
	devacct_assert_iam(r, 404, "WEBHOOK_NOT_FOUND");
	harness_resp_free(r);
	/* creating needs url and events */
	r = devacct_jwt(&dev_a, "PUT", path, "{\"enabled\":true}", NULL);
	devacct_assert_iam(r, 400, "VALIDATION_ERROR");
	devacct_assert_error(r, "url", "required");
	devacct_assert_error(r, "events", "required");
	harness_resp_free(r);
	r = devacct_jwt(&dev_a, "PUT", path, "{\"url\":\"http://127.0.0.1:9/p\","
	    "\"events\":[\"*\"]}", NULL);
	devacct_assert_iam(r, 400, "VALIDATION_ERROR");
	devacct_assert_error(r, "url", "insecure_url");
	harness_resp_free(r);
	r = devacct_jwt(&dev_a, "PUT", path, "{\"url\":\"https://127.0.0.1:9/p\","
	    "\"events\":[\"bill.paid\"]}", NULL);
	harness_expect(r, 201);
	ck_assert_ptr_nonnull(devacct_str(r, "webhook.secret"));
	ck_assert_str_eq(devacct_text(r, "webhook.events"), "[\"bill.updated\"]");
	snprintf(id, sizeof(id), "%s", devacct_str(r, "webhook.id"));
	harness_resp_free(r);

	r = devacct_jwt(&dev_a, "GET", path, NULL, NULL);
	harness_expect(r, 200);
	ck_assert_pstr_eq(devacct_str(r, "webhook.id"), id);
	ck_assert_pstr_eq(devacct_str(r, "webhook.environment"), "production");
	ck_assert_ptr_null(devacct_json(r, "webhook.secret"));
	harness_resp_free(r);

	/* update: the same webhook, no secret */
	r = devacct_jwt(&dev_a, "PUT", path, "{\"events\":[\"link.expired\",\"bill.created\"]}",
	    NULL);
	harness_expect(r, 200);
	ck_assert_pstr_eq(devacct_str(r, "webhook.id"), id);
	ck_assert_str_eq(devacct_text(r, "webhook.events"),
	    "[\"link.disconnected\",\"bill.created\"]");
	ck_assert_pstr_eq(devacct_str(r, "webhook.url"), "https://127.0.0.1:9/p");
	ck_assert_ptr_null(devacct_json(r, "webhook.secret"));
	harness_resp_free(r);
	r = devacct_jwt(&dev_a, "PUT", path, "{\"url\":\"https://127.0.0.1:9/q\"}", NULL);
	harness_expect(r, 200);
	ck_assert_pstr_eq(devacct_str(r, "webhook.url"), "https://127.0.0.1:9/q");
	harness_resp_free(r);
	r = devacct_jwt(&dev_a, "PUT", path, "{}", NULL);
	devacct_assert_iam(r, 400, "VALIDATION_ERROR");
	harness_resp_free(r);
	r = devacct_jwt(&dev_a, "PUT", path, "{\"enabled\":\"no\"}", NULL);
	devacct_assert_error(r, "enabled", "invalid_type");
	harness_resp_free(r);
	r = devacct_jwt(&dev_a, "PUT", path, "{\"secret\":\"0123456789abcdefgh\"}", NULL);
	devacct_assert_error(r, "secret", "unknown_field");
	harness_resp_free(r);

	/* disabled: still the primary (no other), shown disabled; the PUT
	 * enables it again */
	r = devacct_jwt(&dev_a, "PUT", path, "{\"enabled\":false}", NULL);
	harness_expect(r, 200);
	ck_assert(!devacct_bool(r, "webhook.enabled"));
	ck_assert_pstr_eq(devacct_str(r, "webhook.disabledReason"), "disabled by request");
	harness_resp_free(r);
	r = devacct_jwt(&dev_a, "GET", path, NULL, NULL);
	harness_expect(r, 200);
	ck_assert_pstr_eq(devacct_str(r, "webhook.id"), id);
	ck_assert(!devacct_bool(r, "webhook.enabled"));
	harness_resp_free(r);
	r = devacct_jwt(&dev_a, "PUT", path, "{\"enabled\":true}", NULL);
	harness_expect(r, 200);
	ck_assert_pstr_eq(devacct_str(r, "webhook.id"), id);
	ck_assert(devacct_bool(r, "webhook.enabled"));
	ck_assert_ptr_null(devacct_str(r, "webhook.disabledReason"));
	harness_resp_free(r);
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM webhooks WHERE client_id = $1",
	    client, NULL), 1);

	/* environments other than the three */
	r = devacct_jwt(&dev_a, "GET", harness_fmt("/v1/iam/clients/%s/client-secrets/staging/webhook",
	    client), NULL, NULL);
	devacct_assert_iam(r, 400, "VALIDATION_ERROR");
	devacct_assert_error(r, "environment", "invalid_enum");
	harness_resp_free(r);
	free(client);
}
END_TEST

/* The oldest enabled webhook is the primary one; with none enabled, the
 * oldest. */
START_TEST(primary_is_oldest_enabled)
{
	char *client = devacct_client_new(&dev_a);
	const char *path = harness_fmt("/v1/iam/clients/%s/client-secrets/sandbox/webhook", client);
	struct harness_resp *r;
	struct wh w1, w2;

	wh_register(&dev_a, client, "sandbox", "http://127.0.0.1:9/1", "[\"*\"]", &w1);
	wh_register(&dev_a, client, "sandbox", "http://127.0.0.1:9/2", "[\"*\"]", &w2);
	r = devacct_jwt(&dev_a, "GET", path, NULL, NULL);
	harness_expect(r, 200);
	ck_assert_pstr_eq(devacct_str(r, "webhook.id"), w1.id);
	harness_resp_free(r);
	devacct_sql_exec("UPDATE webhooks SET enabled = false WHERE id = $1", w1.id, NULL);
	r = devacct_jwt(&dev_a, "GET", path, NULL, NULL);
	harness_expect(r, 200);
	ck_assert_pstr_eq(devacct_str(r, "webhook.id"), w2.id);
	harness_resp_free(r);
	devacct_sql_exec("UPDATE webhooks SET enabled = false WHERE id = $1", w2.id, NULL);
	r = devacct_jwt(&dev_a, "GET", path, NULL, NULL);
	harness_expect(r, 200);
	ck_assert_pstr_eq(devacct_str(r, "webhook.id"), w1.id);
	ck_assert(!devacct_bool(r, "webhook.enabled"));
	harness_resp_free(r);
	free(client);
}
END_TEST

/* Ten PUTs at once on an environment without a webhook create one. */
START_TEST(primary_concurrent_puts_create_one)
{
	char *client = devacct_client_new(&dev_a);
	const char *h[] = { harness_fmt("Authorization: Bearer %s", dev_a.access),
	    "Content-Type: application/json", NULL };
	const char *body = "{\"url\":\"http://127.0.0.1:9/c\",\"events\":[\"*\"]}";
	struct harness_resp *out[10];
	int created = 0, updated = 0;

	harness_request_burst(10, "PUT", "api",
	    harness_fmt("/v1/iam/clients/%s/client-secrets/sandbox/webhook", client), h, body,
	    strlen(body), out);
	for (int i = 0; i < 10; i++) {
		if (out[i]->status == 201)
			created++;
		else if (out[i]->status == 200)
			updated++;
		else
			ck_abort_msg("status %ld: %s", out[i]->status, out[i]->body);
		harness_resp_free(out[i]);
	}
	ck_assert_int_eq(created, 1);
	ck_assert_int_eq(updated, 9);
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM webhooks WHERE client_id = $1",
	    client, NULL), 1);
	free(client);
}
END_TEST

/* ------------------------------------------------------------------ */
/* DELETE and the activity event                                       */

START_TEST(delete_records_activity)
{
	char *client = devacct_client_new(&dev_a), *v;
	struct harness_resp *r;
	struct wh w;

	wh_register(&dev_a, client, "development", "https://127.0.0.1:9/d", "[\"*\"]", &w);
	r = devacct_jwt(&dev_a, "DELETE", harness_fmt("/v1/iam/clients/%s/webhooks/%s", client, w.id),
	    NULL, NULL);
	harness_expect(r, 200);
	ck_assert(devacct_bool(r, "success"));
	ck_assert_ptr_nonnull(devacct_str(r, "message"));
	ck_assert_pstr_eq(devacct_str(r, "webhook_id"), w.id);
	harness_resp_free(r);
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM webhooks WHERE client_id = $1",
	    client, NULL), 0);
	v = devacct_sql_value("SELECT type || ' ' || environment || ' ' ||"
	    " (data->'object'->>'id') || ' ' || (data->'object'->>'object') || ' ' ||"
	    " (data->>'webhook_id') || ' ' || (id LIKE 'evt\\_%') || ' ' ||"
	    " (request_id IS NOT NULL) FROM events WHERE client_id = $1", client, NULL);
	ck_assert_ptr_nonnull(v);
	ck_assert_str_eq(v, harness_fmt("webhook_endpoint.deleted development %s webhook_endpoint %s"
	    " true true", w.id, w.id));
	free(v);
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM events WHERE client_id = $1",
	    client, NULL), 1);
	/* gone: a second delete is 404 and records nothing */
	r = devacct_jwt(&dev_a, "DELETE", harness_fmt("/v1/iam/clients/%s/webhooks/%s", client, w.id),
	    NULL, NULL);
	devacct_assert_iam(r, 404, "WEBHOOK_NOT_FOUND");
	harness_resp_free(r);
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM events WHERE client_id = $1",
	    client, NULL), 1);
	free(client);
}
END_TEST

/* ------------------------------------------------------------------ */
/* POST .../webhooks/{webhookId}/test                                  */

/* The delivery a client's server sees: headers, signature, envelope. */
START_TEST(test_delivery_signed)
{
	struct receiver *rc = receiver_up(200);
	char *client = devacct_client_new(&dev_a);
	const struct receiver_req *q;
	struct harness_resp *r;
	struct json_object *env, *v;
	char v1[RECEIVER_MAX_V1][65], want[65], iso[32];
	long long now, t = 0;
	struct tm tm;
	time_t ts;
	struct wh w;

	wh_register(&dev_a, client, "sandbox", rurl(rc, "/hooks/in?src=bds"),
	    "[\"bill.created\",\"bill.paid\"]", &w);
	r = wh_test(&dev_a, client, w.id, "bill.created");
	harness_expect(r, 200);
	ck_assert(devacct_bool(r, "success"));
	ck_assert_int_eq(devacct_int(r, "status_code"), 200);
	ck_assert_msg(devacct_str(r, "delivery_id") != NULL &&
	    strncmp(devacct_str(r, "delivery_id"), "dlv_", 4) == 0, "%s", r->body);
	ck_assert_ptr_nonnull(devacct_str(r, "message"));

	ck_assert_ptr_nonnull(q = receiver_wait(rc, 0, WAIT_MS));
	now = (long long)time(NULL);
	ck_assert_str_eq(q->method, "POST");
	ck_assert_str_eq(q->target, "/hooks/in?src=bds");
	ck_assert_pstr_eq(receiver_header(q, "Content-Type"), "application/json");
	ck_assert_pstr_eq(receiver_header(q, "X-Webhook-Event-Type"), "bill.created");
	ck_assert_pstr_eq(receiver_header(q, "X-Webhook-Client-Id"), client);
	ck_assert_pstr_eq(receiver_header(q, "X-Webhook-Source"), "service");
	ck_assert_ptr_nonnull(receiver_header(q, "X-Webhook-Id"));
	ck_assert_pstr_eq(receiver_header(q, "X-Webhook-Id"), devacct_str(r, "event_id"));

	/* the signature, checked with OpenSSL: one v1, t within 5 minutes */
	ck_assert_int_eq(receiver_verify(q, w.secret, now, 300), RECEIVER_SIG_OK);
	ck_assert_int_eq(receiver_sig_parse(receiver_header(q, "Service-Signature"), &t, v1,
	    RECEIVER_MAX_V1), 1);
	ck_assert_msg(t >= now - 300 && t <= now + 5, "t=%lld now=%lld", t, now);
	receiver_hmac_hex(w.secret, t, q->body, q->body_len, want);
	ck_assert_str_eq(v1[0], want);
	ck_assert_int_eq(receiver_verify(q, "whsec_wrong", now, 300), RECEIVER_SIG_MISMATCH);
	ck_assert_int_eq(receiver_verify(q, w.secret, now + 301, 300), RECEIVER_SIG_STALE);

	/* X-Webhook-Timestamp: ISO 8601 UTC of the event to the millisecond
	 * (its second is t's), within 5 minutes */
	ts = (time_t)t;
	gmtime_r(&ts, &tm);
	strftime(iso, sizeof(iso), "%Y-%m-%dT%H:%M:%S", &tm);
	ck_assert_ptr_nonnull(receiver_header(q, "X-Webhook-Timestamp"));
	ck_assert_msg(strlen(receiver_header(q, "X-Webhook-Timestamp")) == 24 &&
	    strncmp(receiver_header(q, "X-Webhook-Timestamp"), iso, 19) == 0 &&
	    receiver_header(q, "X-Webhook-Timestamp")[19] == '.' &&
	    strspn(receiver_header(q, "X-Webhook-Timestamp") + 20, "0123456789") == 3 &&
	    receiver_header(q, "X-Webhook-Timestamp")[23] == 'Z', "X-Webhook-Timestamp: %s",
	    receiver_header(q, "X-Webhook-Timestamp"));
	snprintf(iso, sizeof(iso), "%s", receiver_header(q, "X-Webhook-Timestamp"));

	/* the envelope, both spellings */
	ck_assert_ptr_nonnull(env = json_tokener_parse(q->body));
#define S(k) (json_object_object_get_ex(env, k, &v) && v != NULL ? json_object_get_string(v) : "(null)")
	ck_assert_str_eq(S("id"), receiver_header(q, "X-Webhook-Id"));
	ck_assert_msg(strncmp(S("id"), "evt_", 4) == 0, "%s", S("id"));
	ck_assert_str_eq(S("event_id"), S("id"));
	ck_assert_str_eq(S("object"), "event");
	ck_assert_str_eq(S("type"), "bill.created");
	ck_assert_str_eq(S("event_type"), "bill.created");
	ck_assert_str_eq(S("api_version"), API_VERSION);
	ck_assert_str_eq(S("timestamp"), iso);
	ck_assert_str_eq(S("client_id"), client);
	ck_assert_str_eq(S("mode"), "sandbox");
	ck_assert_str_eq(S("producer_service"), "webhook-test");
	ck_assert(json_object_object_get_ex(env, "correlation_id", &v) && v == NULL);
	ck_assert(json_object_object_get_ex(env, "created", &v) &&
	    json_object_is_type(v, json_type_int) && json_object_get_int64(v) == t);
	ck_assert(json_object_object_get_ex(env, "request", &v));
	{
		struct json_object *id, *k;

		ck_assert(json_object_object_get_ex(v, "id", &id) &&
		    json_object_is_type(id, json_type_string));
		ck_assert(json_object_object_get_ex(v, "idempotency_key", &k) && k == NULL);
	}
	ck_assert(json_object_object_get_ex(env, "data", &v));
	{
		struct json_object *o, *id, *obj, *flat;

		ck_assert(json_object_object_get_ex(v, "object", &o));
		ck_assert(json_object_object_get_ex(o, "id", &id));
		ck_assert(json_object_object_get_ex(o, "object", &obj));
		ck_assert_str_eq(json_object_get_string(obj), "bill");
		ck_assert_msg(strncmp(json_object_get_string(id), "bill_", 5) == 0, "%s",
		    json_object_get_string(id));
		ck_assert(json_object_object_get_ex(v, "bill_id", &flat));
		ck_assert_str_eq(json_object_get_string(flat), json_object_get_string(id));
	}
#undef S
	json_object_put(env);
	harness_resp_free(r);

	/* every test is a new event and a new delivery */
	r = wh_test(&dev_a, client, w.id, "bill.created");
	harness_expect(r, 200);
	ck_assert_ptr_nonnull(q = receiver_wait(rc, 1, WAIT_MS));
	ck_assert_str_ne(receiver_header(q, "X-Webhook-Id"),
	    receiver_header(receiver_wait(rc, 0, 0), "X-Webhook-Id"));
	harness_resp_free(r);
	receiver_stop(rc);
	free(client);
}
END_TEST

/* event_type: historic names normalised; must be in the subscription. */
START_TEST(test_event_type_rules)
{
	struct receiver *rc = receiver_up(200);
	char *client = devacct_client_new(&dev_a);
	const struct receiver_req *q;
	struct harness_resp *r;
	struct wh w, all;

	wh_register(&dev_a, client, "sandbox", rurl(rc, "/t"), "[\"bill.paid\"]", &w);
	wh_test_ok(&dev_a, client, w.id, "bill.paid");
	ck_assert_ptr_nonnull(q = receiver_wait(rc, 0, WAIT_MS));
	ck_assert_pstr_eq(receiver_header(q, "X-Webhook-Event-Type"), "bill.updated");

	r = wh_test(&dev_a, client, w.id, "bill.deleted");
	devacct_assert_iam(r, 400, "EVENT_TYPE_NOT_SUBSCRIBED");
	devacct_assert_error(r, "event_type", "not_subscribed");
	harness_resp_free(r);
	r = wh_test(&dev_a, client, w.id, "bill.nope");
	devacct_assert_iam(r, 400, "VALIDATION_ERROR");
	devacct_assert_error(r, "event_type", "unknown_event_type");
	harness_resp_free(r);
	r = wh_test(&dev_a, client, w.id, "*");
	devacct_assert_error(r, "event_type", "unknown_event_type");
	harness_resp_free(r);
	r = devacct_jwt(&dev_a, "POST", harness_fmt("/v1/iam/clients/%s/webhooks/%s/test", client, w.id),
	    "{}", NULL);
	devacct_assert_error(r, "event_type", "required");
	harness_resp_free(r);
	r = devacct_jwt(&dev_a, "POST", harness_fmt("/v1/iam/clients/%s/webhooks/%s/test", client, w.id),
	    "{\"event_type\":7}", NULL);
	devacct_assert_error(r, "event_type", "invalid_type");
	harness_resp_free(r);
	r = devacct_jwt(&dev_a, "POST", harness_fmt("/v1/iam/clients/%s/webhooks/%s/test", client, w.id),
	    "{\"eventType\":\"bill.updated\",\"extra\":1}", NULL);
	devacct_assert_error(r, "extra", "unknown_field");
	harness_resp_free(r);
	ck_assert_uint_eq(receiver_count(rc), 1);

	/* "all" covers every type; camelCase eventType is accepted */
	wh_register(&dev_a, client, "sandbox", rurl(rc, "/all"), "[\"all\"]", &all);
	r = devacct_jwt(&dev_a, "POST", harness_fmt("/v1/iam/clients/%s/webhooks/%s/test", client,
	    all.id), "{\"eventType\":\"sandbox.expiring\"}", NULL);
	harness_expect(r, 200);
	ck_assert(devacct_bool(r, "success"));
	harness_resp_free(r);
	ck_assert_ptr_nonnull(q = receiver_wait(rc, 1, WAIT_MS));
	ck_assert_str_eq(q->target, "/all");
	ck_assert_int_eq(receiver_verify(q, all.secret, (long long)time(NULL), 300),
	    RECEIVER_SIG_OK);
	receiver_stop(rc);
	free(client);
}
END_TEST

/* The endpoint's answer is reported inside a 200, never as the status. */
static const int answers[] = { 201, 204, 400, 410, 500, 503 };

START_TEST(test_reports_endpoint_status)
{
	struct receiver *rc = receiver_up(answers[_i]);
	char *client = devacct_client_new(&dev_a);
	struct harness_resp *r;
	struct wh w;

	wh_register(&dev_a, client, "sandbox", rurl(rc, "/s"), "[\"*\"]", &w);
	r = wh_test(&dev_a, client, w.id, "link.completed");
	harness_expect(r, 200);
	ck_assert_int_eq(devacct_int(r, "status_code"), answers[_i]);
	ck_assert_int_eq(devacct_bool(r, "success"), answers[_i] >= 200 && answers[_i] < 300);
	ck_assert_ptr_nonnull(devacct_str(r, "delivery_id"));
	ck_assert_ptr_nonnull(devacct_str(r, "message"));
	ck_assert_ptr_nonnull(receiver_wait(rc, 0, WAIT_MS));
	harness_resp_free(r);
	receiver_stop(rc);
	free(client);
}
END_TEST

/* No HTTP response at all: status_code 0, success false, the reason. */
START_TEST(test_closed_port)
{
	char *client = devacct_client_new(&dev_a);
	struct harness_resp *r;
	struct wh w;

	wh_register(&dev_a, client, "production", harness_fmt("https://127.0.0.1:%d/x", closed_port()),
	    "[\"*\"]", &w);
	r = wh_test(&dev_a, client, w.id, "pay.failed");
	harness_expect(r, 200);
	ck_assert(!devacct_bool(r, "success"));
	ck_assert_int_eq(devacct_int(r, "status_code"), 0);
	ck_assert_ptr_nonnull(devacct_str(r, "delivery_id"));
	ck_assert_pstr_eq(devacct_str(r, "message"), "could not connect to the endpoint");
	harness_resp_free(r);
	free(client);
}
END_TEST

/* Not HTTPS where https:// was asked for: a TLS failure, status_code 0. */
START_TEST(test_tls_failure)
{
	struct receiver *rc = receiver_up(200);
	char *client = devacct_client_new(&dev_a);
	struct harness_resp *r;
	struct wh w;

	wh_register(&dev_a, client, "production",
	    harness_fmt("https://127.0.0.1:%d/tls", receiver_port(rc)), "[\"*\"]", &w);
	r = wh_test(&dev_a, client, w.id, "pay.failed");
	harness_expect(r, 200);
	ck_assert(!devacct_bool(r, "success"));
	ck_assert_int_eq(devacct_int(r, "status_code"), 0);
	ck_assert_msg(devacct_str(r, "message") != NULL && *devacct_str(r, "message") != '\0',
	    "%s", r->body);
	harness_resp_free(r);
	receiver_stop(rc);
	free(client);
}
END_TEST

/* A sealed secret moved to another row does not open there: nothing is
 * sent unsigned or signed with the wrong secret. */
START_TEST(test_unsealable_secret)
{
	struct receiver *rc = receiver_up(200);
	char *client = devacct_client_new(&dev_a);
	struct harness_resp *r;
	struct wh w1, w2;

	wh_register(&dev_a, client, "sandbox", rurl(rc, "/1"), "[\"*\"]", &w1);
	wh_register(&dev_a, client, "sandbox", rurl(rc, "/2"), "[\"*\"]", &w2);
	devacct_sql_exec("UPDATE webhooks SET secret = (SELECT secret FROM webhooks"
	    " WHERE id = $2) WHERE id = $1", w1.id, w2.id);
	r = wh_test(&dev_a, client, w1.id, "bill.created");
	devacct_assert_iam(r, 500, "INTERNAL_ERROR");
	harness_resp_free(r);
	wh_test_ok(&dev_a, client, w2.id, "bill.created");
	ck_assert_ptr_nonnull(receiver_wait(rc, 0, WAIT_MS));
	harness_sleep_ms(200);
	ck_assert_uint_eq(receiver_count(rc), 1);
	ck_assert_str_eq(receiver_wait(rc, 0, 0)->target, "/2");
	receiver_stop(rc);
	free(client);
}
END_TEST

/* One call with a timeout longer than the harness's 10 s. */
struct slow {
	long		 status;
	char		*body;
	size_t		 len;
};

static size_t
slow_write(char *p, size_t s, size_t n, void *arg)
{
	struct slow *o = arg;
	char *b = realloc(o->body, o->len + s * n + 1);

	ck_assert_ptr_nonnull(b);
	memcpy(b + o->len, p, s * n);
	o->body = b;
	o->len += s * n;
	o->body[o->len] = '\0';
	return s * n;
}

/* The test's answer to the test route: status and body. */
static void
slow_test_call(const char *client, const char *id, struct slow *out)
{
	struct curl_slist *h = NULL;
	CURL *c;

	ck_assert_ptr_nonnull(c = curl_easy_init());
	h = curl_slist_append(h, harness_fmt("Authorization: Bearer %s", dev_a.access));
	h = curl_slist_append(h, "Content-Type: application/json");
	curl_easy_setopt(c, CURLOPT_URL, harness_fmt("%s/v1/iam/clients/%s/webhooks/%s/test",
	    harness_base_url("api"), client, id));
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
	curl_easy_setopt(c, CURLOPT_POSTFIELDS, "{\"event_type\":\"bill.created\"}");
	curl_easy_setopt(c, CURLOPT_TIMEOUT, 30L);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, slow_write);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, out);
	ck_assert_int_eq(curl_easy_perform(c), CURLE_OK);
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &out->status);
	curl_easy_cleanup(c);
	curl_slist_free_all(h);
	ck_assert_msg(out->status == 200, "status %ld: %s", out->status, out->body);
}

/*
 * A test gives the endpoint a delivery's 10 s: an answer in 7 s (more than
 * the old 5 s test budget) is reported as it answered, one after 12 s as
 * none (status_code 0), after the whole 10 s.
 */
static const struct {
	int		 delay_ms;
	int		 status_code;
	const char	*message;	/* NULL: not checked */
} slow_cases[] = {
	{ 7000, 200, NULL },
	{ 12000, 0, "no response within 10 seconds" },
};

START_TEST(test_budget_10s)
{
	struct receiver_opts o = { 200, slow_cases[_i].delay_ms };
	struct receiver *rc = receiver_start(&o);
	char *client = devacct_client_new(&dev_a);
	struct json_object *doc, *v;
	struct slow out = { 0 };
	long long t0, ms;
	struct wh w;

	ck_assert_ptr_nonnull(rc);
	wh_register(&dev_a, client, "sandbox", rurl(rc, "/slow"), "[\"*\"]", &w);
	t0 = harness_now_ms();
	slow_test_call(client, w.id, &out);
	ms = harness_now_ms() - t0;
	ck_assert_ptr_nonnull(doc = json_tokener_parse(out.body));
	ck_assert_msg(json_object_object_get_ex(doc, "status_code", &v) &&
	    json_object_get_int(v) == slow_cases[_i].status_code, "%s", out.body);
	ck_assert(json_object_object_get_ex(doc, "success", &v) &&
	    json_object_get_boolean(v) == (slow_cases[_i].status_code == 200));
	if (slow_cases[_i].message != NULL) {
		ck_assert_msg(ms >= 9500, "answered after %lld ms", ms);
		ck_assert(json_object_object_get_ex(doc, "message", &v));
		ck_assert_str_eq(json_object_get_string(v), slow_cases[_i].message);
	}
	json_object_put(doc);
	free(out.body);
	/* it did arrive (in time or not) */
	ck_assert_ptr_nonnull(receiver_wait(rc, 0, 0));
	receiver_stop(rc);
	free(client);
}
END_TEST

/* ------------------------------------------------------------------ */
/* /v1/webhook-endpoints (API key)                                     */

START_TEST(endpoints_crud)
{
	char *client = devacct_client_new(&dev_a), *key = devacct_key_new(&dev_a, client, "sandbox"), *v;
	const char *extra[] = { harness_idem_header(), NULL };
	struct harness_resp *r;
	char id[96];

	r = key_call(key, "GET", "/v1/webhook-endpoints", NULL, NULL);
	harness_expect(r, 200);
	ck_assert_pstr_eq(devacct_str(r, "object"), "list");
	ck_assert_str_eq(devacct_text(r, "data"), "[]");
	ck_assert(!devacct_bool(r, "has_more"));
	harness_resp_free(r);

	r = key_call(key, "POST", "/v1/webhook-endpoints",
	    "{\"url\":\"http://127.0.0.1:9/k\",\"events\":[\"bill.paid\",\"insight.created\"]}",
	    extra);
	harness_expect(r, 201);
	ck_assert_pstr_eq(devacct_str(r, "object"), "webhook_endpoint");
	ck_assert_pstr_eq(devacct_str(r, "client_id"), client);
	ck_assert_pstr_eq(devacct_str(r, "environment"), "sandbox");
	ck_assert_pstr_eq(devacct_str(r, "url"), "http://127.0.0.1:9/k");
	ck_assert_str_eq(devacct_text(r, "events"), "[\"bill.updated\",\"insight.created\"]");
	ck_assert(devacct_bool(r, "enabled"));
	ck_assert_msg(devacct_str(r, "secret") != NULL &&
	    strncmp(devacct_str(r, "secret"), "whsec_", 6) == 0, "%s", r->body);
	ck_assert_ptr_nonnull(devacct_str(r, "created_at"));
	ck_assert(devacct_json(r, "previous_secret_expires_at") == NULL);
	snprintf(id, sizeof(id), "%s", devacct_str(r, "id"));
	harness_resp_free(r);
	/* the retry is not replayable */
	r = key_call(key, "POST", "/v1/webhook-endpoints",
	    "{\"url\":\"http://127.0.0.1:9/k\",\"events\":[\"bill.paid\",\"insight.created\"]}",
	    extra);
	harness_assert_coded(r, 409, "IDEMPOTENCY_KEY_NOT_REPLAYABLE");
	harness_resp_free(r);

	r = key_call(key, "GET", "/v1/webhook-endpoints", NULL, NULL);
	harness_expect(r, 200);
	ck_assert_uint_eq(json_object_array_length(devacct_json(r, "data")), 1);
	ck_assert_pstr_eq(devacct_str(r, "data.0.id"), id);
	ck_assert_ptr_null(strstr(r->body, "whsec_"));
	harness_resp_free(r);
	r = key_call(key, "GET", harness_fmt("/v1/webhook-endpoints/%s", id), NULL, NULL);
	harness_expect(r, 200);
	ck_assert_pstr_eq(devacct_str(r, "id"), id);
	ck_assert_ptr_null(devacct_json(r, "secret"));
	harness_resp_free(r);

	/* PATCH: partial; each field alone */
	r = key_call(key, "PATCH", harness_fmt("/v1/webhook-endpoints/%s", id),
	    "{\"events\":[\"*\"]}", NULL);
	harness_expect(r, 200);
	ck_assert_str_eq(devacct_text(r, "events"), "[\"*\"]");
	ck_assert_pstr_eq(devacct_str(r, "url"), "http://127.0.0.1:9/k");
	harness_resp_free(r);
	r = key_call(key, "PATCH", harness_fmt("/v1/webhook-endpoints/%s", id),
	    "{\"url\":\"http://127.0.0.1:9/k2\",\"enabled\":false}", NULL);
	harness_expect(r, 200);
	ck_assert_pstr_eq(devacct_str(r, "url"), "http://127.0.0.1:9/k2");
	ck_assert(!devacct_bool(r, "enabled"));
	harness_resp_free(r);
	r = key_call(key, "PATCH", harness_fmt("/v1/webhook-endpoints/%s", id), "{\"enabled\":true}",
	    NULL);
	harness_expect(r, 200);
	ck_assert(devacct_bool(r, "enabled"));
	ck_assert(devacct_json(r, "disabled_reason") == NULL);
	harness_resp_free(r);
	r = key_call(key, "PATCH", harness_fmt("/v1/webhook-endpoints/%s", id), "{}", NULL);
	harness_assert_coded(r, 400, "VALIDATION_ERROR");
	harness_resp_free(r);
	r = key_call(key, "PATCH", harness_fmt("/v1/webhook-endpoints/%s", id),
	    "{\"events\":[\"bill.nope\"]}", NULL);
	harness_assert_coded(r, 400, "VALIDATION_ERROR");
	devacct_assert_error(r, "events[0]", "unknown_event_type");
	harness_resp_free(r);
	r = key_call(key, "PATCH", harness_fmt("/v1/webhook-endpoints/%s", id),
	    "{\"url\":\"gopher://127.0.0.1/\"}", NULL);
	devacct_assert_error(r, "url", "invalid_url");
	harness_resp_free(r);
	r = key_call(key, "PUT", harness_fmt("/v1/webhook-endpoints/%s", id), "{\"enabled\":true}", NULL);
	harness_assert_coded(r, 405, "METHOD_NOT_ALLOWED");
	harness_resp_free(r);

	/* DELETE, Stripe's shape, and the activity row */
	r = key_call(key, "DELETE", harness_fmt("/v1/webhook-endpoints/%s", id), NULL, NULL);
	harness_expect(r, 200);
	ck_assert_pstr_eq(devacct_str(r, "id"), id);
	ck_assert_pstr_eq(devacct_str(r, "object"), "webhook_endpoint");
	ck_assert(devacct_bool(r, "deleted"));
	harness_resp_free(r);
	v = devacct_sql_value("SELECT type || ' ' || environment FROM events WHERE client_id = $1"
	    " AND data->>'webhook_id' = $2", client, id);
	ck_assert_pstr_eq(v, "webhook_endpoint.deleted sandbox");
	free(v);
	r = key_call(key, "GET", harness_fmt("/v1/webhook-endpoints/%s", id), NULL, NULL);
	harness_assert_coded(r, 404, "WEBHOOK_NOT_FOUND");
	harness_resp_free(r);
	r = key_call(key, "DELETE", harness_fmt("/v1/webhook-endpoints/%s", id), NULL, NULL);
	harness_assert_coded(r, 404, "WEBHOOK_NOT_FOUND");
	harness_resp_free(r);
	free(key);
	free(client);
}
END_TEST

static const struct {
	const char	*name;
	const char	*body;
	const char	*field;
	const char	*code;
} endpoint_bad[] = {
	{ "no url", "{\"events\":[\"*\"]}", "url", "required" },
	{ "no events", "{\"url\":\"http://127.0.0.1:9/h\"}", "events", "required" },
	{ "unknown type", "{\"url\":\"http://127.0.0.1:9/h\",\"events\":[\"x.y\"]}", "events[0]",
	  "unknown_event_type" },
	{ "enabled not a boolean", "{\"url\":\"http://127.0.0.1:9/h\",\"events\":[\"*\"],"
	  "\"enabled\":1}", "enabled", "invalid_type" },
	{ "environment is the key's", "{\"url\":\"http://127.0.0.1:9/h\",\"events\":[\"*\"],"
	  "\"environment\":\"production\"}", "environment", "unknown_field" },
	{ "url not a URL", "{\"url\":\"not a url\",\"events\":[\"*\"]}", "url", "invalid_url" },
};

START_TEST(endpoints_bad_input)
{
	char *client = devacct_client_new(&dev_a), *key = devacct_key_new(&dev_a, client, "sandbox");
	const char *extra[] = { harness_idem_header(), NULL };
	struct harness_resp *r = key_call(key, "POST", "/v1/webhook-endpoints",
	    endpoint_bad[_i].body, extra);

	harness_assert_coded(r, 400, "VALIDATION_ERROR");
	devacct_assert_error(r, endpoint_bad[_i].field, endpoint_bad[_i].code);
	harness_resp_free(r);
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM webhooks WHERE client_id = $1",
	    client, NULL), 0);
	free(key);
	free(client);
}
END_TEST

START_TEST(endpoints_idempotency_and_client_id)
{
	char *client = devacct_client_new(&dev_a), *key = devacct_key_new(&dev_a, client, "sandbox");
	const char *extra[] = { harness_idem_header(), NULL };
	struct harness_resp *r;

	r = key_call(key, "POST", "/v1/webhook-endpoints",
	    "{\"url\":\"http://127.0.0.1:9/h\",\"events\":[\"*\"]}", NULL);
	harness_assert_coded(r, 400, "VALIDATION_ERROR");
	devacct_assert_error(r, "Idempotency-Key", "required");
	harness_resp_free(r);
	/* a body naming another client is refused; naming its own is fine */
	r = key_call(key, "POST", "/v1/webhook-endpoints",
	    "{\"url\":\"http://127.0.0.1:9/h\",\"events\":[\"*\"],\"client_id\":\"cli_other\"}",
	    extra);
	harness_assert_coded(r, 403, "CLIENT_ID_MISMATCH");
	harness_resp_free(r);
	r = key_call(key, "POST", "/v1/webhook-endpoints",
	    harness_fmt("{\"url\":\"http://127.0.0.1:9/h\",\"events\":[\"*\"],\"client_id\":\"%s\"}",
	    client), extra);
	harness_expect(r, 201);
	harness_resp_free(r);
	/* no key, a malformed key */
	r = devacct_call("GET", "sandbox", "/v1/webhook-endpoints", NULL, NULL, NULL);
	harness_assert_coded(r, 401, NULL);
	harness_resp_free(r);
	r = devacct_call("GET", "sandbox", "/v1/webhook-endpoints", "Bearer bds_sandbox_nope",
	    NULL, NULL);
	harness_assert_coded(r, 401, NULL);
	harness_resp_free(r);
	free(key);
	free(client);
}
END_TEST

/* A key sees its own client and environment only. */
START_TEST(endpoints_scoped_to_key)
{
	char *ca = devacct_client_new(&dev_a), *cb = devacct_client_new(&dev_b);
	char *ka = devacct_key_new(&dev_a, ca, "sandbox"), *kad = devacct_key_new(&dev_a, ca, "development");
	char *kb = devacct_key_new(&dev_b, cb, "sandbox");
	const char *extra[] = { harness_idem_header(), NULL };
	const char *extra2[] = { harness_idem_header(), NULL };
	struct harness_resp *r;
	char id[96];

	r = key_call(ka, "POST", "/v1/webhook-endpoints",
	    "{\"url\":\"http://127.0.0.1:9/a\",\"events\":[\"*\"]}", extra);
	harness_expect(r, 201);
	snprintf(id, sizeof(id), "%s", devacct_str(r, "id"));
	harness_resp_free(r);

	/* client B's key: not found, not listed, not changed */
	r = key_call(kb, "GET", harness_fmt("/v1/webhook-endpoints/%s", id), NULL, NULL);
	harness_assert_coded(r, 404, "WEBHOOK_NOT_FOUND");
	harness_resp_free(r);
	r = key_call(kb, "PATCH", harness_fmt("/v1/webhook-endpoints/%s", id), "{\"enabled\":false}",
	    NULL);
	harness_assert_coded(r, 404, "WEBHOOK_NOT_FOUND");
	harness_resp_free(r);
	r = key_call(kb, "POST", harness_fmt("/v1/webhook-endpoints/%s/rotate-secret", id), NULL, NULL);
	harness_assert_coded(r, 404, "WEBHOOK_NOT_FOUND");
	harness_resp_free(r);
	r = key_call(kb, "DELETE", harness_fmt("/v1/webhook-endpoints/%s", id), NULL, NULL);
	harness_assert_coded(r, 404, "WEBHOOK_NOT_FOUND");
	harness_resp_free(r);
	r = key_call(kb, "GET", "/v1/webhook-endpoints", NULL, NULL);
	harness_expect(r, 200);
	ck_assert_str_eq(devacct_text(r, "data"), "[]");
	harness_resp_free(r);

	/* the same client's development key: another environment */
	r = key_call(kad, "GET", harness_fmt("/v1/webhook-endpoints/%s", id), NULL, NULL);
	harness_assert_coded(r, 404, "WEBHOOK_NOT_FOUND");
	harness_resp_free(r);
	r = key_call(kad, "GET", "/v1/webhook-endpoints", NULL, NULL);
	harness_expect(r, 200);
	ck_assert_str_eq(devacct_text(r, "data"), "[]");
	harness_resp_free(r);
	/* outside the sandbox: https only */
	r = key_call(kad, "POST", "/v1/webhook-endpoints",
	    "{\"url\":\"http://127.0.0.1:9/d\",\"events\":[\"*\"]}", extra2);
	harness_assert_coded(r, 400, "VALIDATION_ERROR");
	devacct_assert_error(r, "url", "insecure_url");
	harness_resp_free(r);
	r = key_call(kad, "POST", "/v1/webhook-endpoints",
	    "{\"url\":\"https://127.0.0.1:9/d\",\"events\":[\"*\"]}", extra2);
	harness_expect(r, 201);
	ck_assert_pstr_eq(devacct_str(r, "environment"), "development");
	harness_resp_free(r);
	/* the developer's view lists both */
	r = devacct_jwt(&dev_a, "GET", harness_fmt("/v1/iam/clients/%s/webhooks", ca), NULL, NULL);
	harness_expect(r, 200);
	ck_assert_uint_eq(json_object_array_length(devacct_json(r, "webhooks")), 2);
	harness_resp_free(r);
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM webhooks WHERE id = $1 AND enabled",
	    id, NULL), 1);
	free(ka);
	free(kad);
	free(kb);
	free(ca);
	free(cb);
}
END_TEST

/*
 * Rotation: the new secret once; during the grace window each delivery
 * carries two v1 values, the new secret's and the old one's, each valid
 * for its secret; with expires_in_hours 0 the old one stops at once.
 */
START_TEST(endpoints_rotate_secret)
{
	struct receiver *rc = receiver_up(200);
	char *client = devacct_client_new(&dev_a), *key = devacct_key_new(&dev_a, client, "sandbox"), *v;
	const char *extra[] = { harness_idem_header(), NULL };
	const char *rot[] = { harness_idem_header(), NULL };
	char id[96], old[192], fresh[192], v1[RECEIVER_MAX_V1][65], h_old[65], h_new[65];
	const struct receiver_req *q;
	struct harness_resp *r;
	long long t = 0;

	r = key_call(key, "POST", "/v1/webhook-endpoints",
	    harness_fmt("{\"url\":\"%s\",\"events\":[\"bill.created\"]}", rurl(rc, "/rot")), extra);
	harness_expect(r, 201);
	snprintf(id, sizeof(id), "%s", devacct_str(r, "id"));
	snprintf(old, sizeof(old), "%s", devacct_str(r, "secret"));
	harness_resp_free(r);

	r = key_call(key, "POST", harness_fmt("/v1/webhook-endpoints/%s/rotate-secret", id), NULL, rot);
	harness_expect(r, 200);
	ck_assert_ptr_nonnull(devacct_str(r, "secret"));
	snprintf(fresh, sizeof(fresh), "%s", devacct_str(r, "secret"));
	ck_assert_str_ne(fresh, old);
	ck_assert_msg(strncmp(fresh, "whsec_", 6) == 0, "%s", fresh);
	ck_assert_ptr_nonnull(devacct_str(r, "previous_secret_expires_at"));
	harness_resp_free(r);
	/* the window is 24 hours by default */
	v = devacct_sql_value("SELECT (previous_secret_expires_at BETWEEN now() + interval"
	    " '23 hours 59 minutes' AND now() + interval '24 hours 1 minute')::text"
	    " FROM webhooks WHERE id = $1", id, NULL);
	ck_assert_pstr_eq(v, "true");
	free(v);
	/* a retry of the rotation: not replayable, nothing rotated */
	r = key_call(key, "POST", harness_fmt("/v1/webhook-endpoints/%s/rotate-secret", id), NULL, rot);
	harness_assert_coded(r, 409, "IDEMPOTENCY_KEY_NOT_REPLAYABLE");
	harness_resp_free(r);

	/* the next delivery carries both signatures */
	wh_test_ok(&dev_a, client, id, "bill.created");
	ck_assert_ptr_nonnull(q = receiver_wait(rc, 0, WAIT_MS));
	ck_assert_int_eq(receiver_sig_parse(receiver_header(q, "Service-Signature"), &t, v1,
	    RECEIVER_MAX_V1), 2);
	receiver_hmac_hex(fresh, t, q->body, q->body_len, h_new);
	receiver_hmac_hex(old, t, q->body, q->body_len, h_old);
	ck_assert_str_eq(v1[0], h_new);
	ck_assert_str_eq(v1[1], h_old);
	ck_assert_int_eq(receiver_verify(q, fresh, (long long)time(NULL), 300), RECEIVER_SIG_OK);
	ck_assert_int_eq(receiver_verify(q, old, (long long)time(NULL), 300), RECEIVER_SIG_OK);

	/* rotate again, ending the window at once: one v1, the newest secret */
	r = key_call(key, "POST", harness_fmt("/v1/webhook-endpoints/%s/rotate-secret", id),
	    "{\"expires_in_hours\":0}", NULL);
	harness_expect(r, 200);
	ck_assert(devacct_json(r, "previous_secret_expires_at") == NULL);
	snprintf(old, sizeof(old), "%s", fresh);
	snprintf(fresh, sizeof(fresh), "%s", devacct_str(r, "secret"));
	harness_resp_free(r);
	r = wh_test(&dev_a, client, id, "bill.created");
	harness_expect(r, 200);
	harness_resp_free(r);
	ck_assert_ptr_nonnull(q = receiver_wait(rc, 1, WAIT_MS));
	ck_assert_int_eq(receiver_sig_parse(receiver_header(q, "Service-Signature"), &t, v1,
	    RECEIVER_MAX_V1), 1);
	ck_assert_int_eq(receiver_verify(q, fresh, (long long)time(NULL), 300), RECEIVER_SIG_OK);
	ck_assert_int_eq(receiver_verify(q, old, (long long)time(NULL), 300),
	    RECEIVER_SIG_MISMATCH);

	/* an expired window signs with one secret too */
	r = key_call(key, "POST", harness_fmt("/v1/webhook-endpoints/%s/rotate-secret", id),
	    "{\"expires_in_hours\":1}", NULL);
	harness_expect(r, 200);
	snprintf(fresh, sizeof(fresh), "%s", devacct_str(r, "secret"));
	harness_resp_free(r);
	devacct_sql_exec("UPDATE webhooks SET previous_secret_expires_at = now() -"
	    " interval '1 second' WHERE id = $1", id, NULL);
	r = key_call(key, "GET", harness_fmt("/v1/webhook-endpoints/%s", id), NULL, NULL);
	harness_expect(r, 200);
	ck_assert(devacct_json(r, "previous_secret_expires_at") == NULL);
	harness_resp_free(r);
	r = wh_test(&dev_a, client, id, "bill.created");
	harness_expect(r, 200);
	harness_resp_free(r);
	ck_assert_ptr_nonnull(q = receiver_wait(rc, 2, WAIT_MS));
	ck_assert_int_eq(receiver_sig_parse(receiver_header(q, "Service-Signature"), &t, v1,
	    RECEIVER_MAX_V1), 1);
	ck_assert_int_eq(receiver_verify(q, fresh, (long long)time(NULL), 300), RECEIVER_SIG_OK);

	/* bad windows */
	r = key_call(key, "POST", harness_fmt("/v1/webhook-endpoints/%s/rotate-secret", id),
	    "{\"expires_in_hours\":169}", NULL);
	harness_assert_coded(r, 400, "VALIDATION_ERROR");
	devacct_assert_error(r, "expires_in_hours", "out_of_range");
	harness_resp_free(r);
	r = key_call(key, "POST", harness_fmt("/v1/webhook-endpoints/%s/rotate-secret", id),
	    "{\"expires_in_hours\":\"24\"}", NULL);
	devacct_assert_error(r, "expires_in_hours", "invalid_type");
	harness_resp_free(r);
	r = key_call(key, "POST", "/v1/webhook-endpoints/whk_nope/rotate-secret", NULL, NULL);
	harness_assert_coded(r, 404, "WEBHOOK_NOT_FOUND");
	harness_resp_free(r);
	receiver_stop(rc);
	free(key);
	free(client);
}
END_TEST

/* Deleting the client removes its webhooks. */
START_TEST(client_delete_cascades)
{
	char *client = devacct_client_new(&dev_a);
	struct harness_resp *r;
	struct wh w;

	wh_register(&dev_a, client, "sandbox", "http://127.0.0.1:9/x", "[\"*\"]", &w);
	r = devacct_jwt(&dev_a, "DELETE", harness_fmt("/v1/iam/clients/%s", client), NULL, NULL);
	harness_expect(r, 200);
	harness_resp_free(r);
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM webhooks WHERE id = $1", w.id,
	    NULL), 0);
	free(client);
}
END_TEST

/* After everything above: no signing secret in any log. */
START_TEST(no_secret_in_logs)
{
	const char *logs[] = { harness_api_log_path(), harness_fmt("%s/requests.log", harness_dir()),
	    harness_deliver_log_path() };

	for (size_t i = 0; i < N(logs); i++) {
		char *text = harness_slurp(logs[i]);

		if (text == NULL)
			continue;	/* a log never written holds nothing */
		ck_assert_msg(strstr(text, "whsec_") == NULL, "%s holds a signing secret",
		    logs[i]);
		free(text);
	}
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM webhooks WHERE"
	    " position('whsec_'::bytea IN secret) > 0 OR"
	    " position('whsec_'::bytea IN coalesce(previous_secret, ''::bytea)) > 0",
	    NULL, NULL), 0);
}
END_TEST

/* ------------------------------------------------------------------ */
/* strict: allow_private_targets = 0                                   */

static const char *const private_urls[] = {
	"http://127.0.0.1:9/h",
	"http://2130706433/h",
	"http://0177.0.0.1/h",
	"http://0x7f.0.0.1/h",
	"http://0x7f000001/h",
	"http://127.1/h",
	"http://[::1]/h",
	"http://[::ffff:127.0.0.1]/h",
	"http://[::ffff:7f00:1]/h",
	"http://localhost:8080/h",
	"http://169.254.169.254/latest/meta-data/",
	"http://10.0.0.1/h",
	"http://192.168.1.1/h",
	"http://172.16.5.4/h",
	"http://100.64.0.1/h",
	"http://0.0.0.0/h",
	"http://[fd00::1]/h",
	"http://[fe80::1]/h",
	"http://224.0.0.1/h",
};

START_TEST(strict_refuses_private_targets)
{
	char *client = devacct_client_new(&dev_a);
	struct harness_resp *r = wh_create(&dev_a, client,
	    harness_fmt("{\"environment\":\"sandbox\",\"url\":\"%s\",\"events\":[\"*\"]}",
	    private_urls[_i]));

	ck_assert_msg(r->status == 400, "%s: status %ld: %s", private_urls[_i], r->status,
	    r->body);
	devacct_assert_iam(r, 400, "VALIDATION_ERROR");
	devacct_assert_error(r, "url", "forbidden_address");
	harness_resp_free(r);
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM webhooks WHERE client_id = $1",
	    client, NULL), 0);
	free(client);
}
END_TEST

START_TEST(strict_accepts_public_targets)
{
	char *client = devacct_client_new(&dev_a);
	struct harness_resp *r = wh_create(&dev_a, client,
	    "{\"environment\":\"production\",\"url\":\"https://8.8.8.8/hook\",\"events\":[\"*\"]}");

	harness_expect(r, 201);
	harness_resp_free(r);
	/* an update is checked the same way */
	r = devacct_jwt(&dev_a, "PUT", harness_fmt("/v1/iam/clients/%s/client-secrets/production/webhook",
	    client), "{\"url\":\"https://0x7f.1/hook\"}", NULL);
	devacct_assert_iam(r, 400, "VALIDATION_ERROR");
	devacct_assert_error(r, "url", "forbidden_address");
	harness_resp_free(r);
	free(client);
}
END_TEST

/*
 * A URL that was public when registered and is private now (DNS changed):
 * the delivery checks again and refuses before connecting.
 */
START_TEST(strict_delivery_checks_again)
{
	struct receiver *rc = receiver_up(200);
	char *client = devacct_client_new(&dev_a);
	struct harness_resp *r;
	struct wh w;

	wh_register(&dev_a, client, "sandbox", "http://8.8.8.8/hook", "[\"*\"]", &w);
	devacct_sql_exec("UPDATE webhooks SET url = $2 WHERE id = $1", w.id,
	    rurl(rc, "/private"));
	r = wh_test(&dev_a, client, w.id, "bill.created");
	harness_expect(r, 200);
	ck_assert(!devacct_bool(r, "success"));
	ck_assert_int_eq(devacct_int(r, "status_code"), 0);
	ck_assert_pstr_eq(devacct_str(r, "message"), "the host is a loopback address");
	harness_resp_free(r);
	harness_sleep_ms(200);
	ck_assert_uint_eq(receiver_count(rc), 0);
	receiver_stop(rc);
	free(client);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Stuck endpoints do not freeze the API                               */

/* A test call made on a thread (strings formatted before it starts). */
struct bg_test {
	char		 url[512];
	char		 auth[4096];
	pthread_t	 th;
	struct slow	 out;
};

static void *
bg_test_run(void *arg)
{
	struct bg_test *b = arg;
	struct curl_slist *h = NULL;
	CURL *c = curl_easy_init();

	if (c == NULL)
		return NULL;
	h = curl_slist_append(h, b->auth);
	h = curl_slist_append(h, "Content-Type: application/json");
	curl_easy_setopt(c, CURLOPT_URL, b->url);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
	curl_easy_setopt(c, CURLOPT_POSTFIELDS, "{\"event_type\":\"bill.created\"}");
	curl_easy_setopt(c, CURLOPT_TIMEOUT, 30L);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, slow_write);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &b->out);
	if (curl_easy_perform(c) == CURLE_OK)
		curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &b->out.status);
	curl_easy_cleanup(c);
	curl_slist_free_all(h);
	return NULL;
}

static void
bg_test_start(struct bg_test *b, const struct devacct *d, const char *client, const char *id)
{
	memset(b, 0, sizeof(*b));
	snprintf(b->url, sizeof(b->url), "%s/v1/iam/clients/%s/webhooks/%s/test",
	    harness_base_url("api"), client, id);
	snprintf(b->auth, sizeof(b->auth), "Authorization: Bearer %s", d->access);
	ck_assert_int_eq(pthread_create(&b->th, NULL, bg_test_run, b), 0);
}

/* The error_code of a finished background call ("" when none). */
static const char *
bg_test_code(struct bg_test *b)
{
	static char code[64];
	struct json_object *doc, *v;

	code[0] = '\0';
	if (b->out.body != NULL && (doc = json_tokener_parse(b->out.body)) != NULL) {
		if (json_object_object_get_ex(doc, "error_code", &v))
			snprintf(code, sizeof(code), "%s", json_object_get_string(v));
		json_object_put(doc);
	}
	return code;
}

/*
 * As many parallel tests as there are workers (2), to an endpoint that
 * accepts and does not answer: one runs (this host's one test slot), the
 * other is 429 at once, and health answers quickly while the first is
 * stuck. The developer's second test is 429 too. Once the stuck one ends
 * (its 10 s budget), tests run again.
 */
START_TEST(test_stuck_endpoint_bounded)
{
	struct receiver_opts o = { 200, 13000 };
	struct receiver *rc = receiver_start(&o);
	char *ca = devacct_client_new(&dev_a), *cb = devacct_client_new(&dev_b);
	struct harness_resp *r;
	struct bg_test bg[2];
	struct wh wa, wb;
	int ran = -1;

	ck_assert_ptr_nonnull(rc);
	wh_register(&dev_a, ca, "sandbox", rurl(rc, "/stuck"), "[\"*\"]", &wa);
	wh_register(&dev_b, cb, "sandbox", rurl(rc, "/stuck"), "[\"*\"]", &wb);
	bg_test_start(&bg[0], &dev_a, ca, wa.id);
	bg_test_start(&bg[1], &dev_b, cb, wb.id);
	ck_assert_ptr_nonnull(receiver_wait(rc, 0, WAIT_MS));	/* one is stuck in the endpoint */
	harness_sleep_ms(300);

	/* the API still answers, fast (within 50 ms) */
	for (int i = 0; i < 5; i++) {
		long long t0 = harness_now_ms(), ms;

		r = harness_get("api", "/v1/health");
		ms = harness_now_ms() - t0;
		harness_expect(r, 200);
		harness_resp_free(r);
		ck_assert_msg(ms < 50, "health took %lld ms while a test was stuck", ms);
	}
	/* the developer whose test runs: one at a time */
	ran = strcmp(receiver_header(receiver_wait(rc, 0, 0), "X-Webhook-Client-Id"), ca) == 0 ?
	    0 : 1;
	r = wh_test(ran == 0 ? &dev_a : &dev_b, ran == 0 ? ca : cb, ran == 0 ? wa.id : wb.id,
	    "bill.created");
	devacct_assert_iam(r, 429, "WEBHOOK_TEST_IN_PROGRESS");
	ck_assert_pstr_eq(harness_header(r, "Retry-After"), "10");
	harness_resp_free(r);

	for (int i = 0; i < 2; i++)
		ck_assert_int_eq(pthread_join(bg[i].th, NULL), 0);
	/* the other was refused at once: the host's slot was taken */
	ck_assert_msg(bg[1 - ran].out.status == 429, "status %ld: %s", bg[1 - ran].out.status,
	    bg[1 - ran].out.body);
	ck_assert_str_eq(bg_test_code(&bg[1 - ran]), "WEBHOOK_TESTS_BUSY");
	ck_assert_msg(bg[ran].out.status == 200, "status %ld: %s", bg[ran].out.status,
	    bg[ran].out.body);
	ck_assert_ptr_nonnull(strstr(bg[ran].out.body, "no response within 10 seconds"));
	ck_assert_uint_eq(receiver_count(rc), 1);	/* the refused ones sent nothing */
	for (int i = 0; i < 2; i++)
		free(bg[i].out.body);

	/* released: both developers test again */
	receiver_set(rc, 200, 0);
	for (int i = 0; i < 2; i++) {
		wh_test_ok(i == 0 ? &dev_a : &dev_b, i == 0 ? ca : cb, i == 0 ? wa.id : wb.id,
		    "bill.created");
	}
	receiver_stop(rc);
	free(ca);
	free(cb);
}
END_TEST

/* ------------------------------------------------------------------ */

static Suite *
webhooks_suite(void)
{
	Suite *s = suite_create("e2e_webhooks");
	TCase *tc;

	tc = tcase_create("api");
	tcase_add_unchecked_fixture(tc, api_stack, harness_fixture_stop);
	tcase_add_checked_fixture(tc, harness_fixture_recover, NULL);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, statements_prepare);
	tcase_add_test(tc, create_shows_secret_once);
	tcase_add_test(tc, create_with_own_secret);
	tcase_add_loop_test(tc, create_normalises_events, 0, N(normalised));
	tcase_add_test(tc, create_unknown_event_types);
	tcase_add_loop_test(tc, create_bad_input, 0, N(create_bad));
	tcase_add_test(tc, create_bad_bodies);
	tcase_add_test(tc, create_environments_and_schemes);
	tcase_add_test(tc, create_limit_per_environment);
	tcase_add_test(tc, list_in_creation_order);
	tcase_add_test(tc, jwt_tenant_isolation);
	tcase_add_test(tc, primary_webhook);
	tcase_add_test(tc, primary_is_oldest_enabled);
	tcase_add_test(tc, primary_concurrent_puts_create_one);
	tcase_add_test(tc, delete_records_activity);
	tcase_add_test(tc, test_delivery_signed);
	tcase_add_test(tc, test_event_type_rules);
	tcase_add_loop_test(tc, test_reports_endpoint_status, 0, N(answers));
	tcase_add_test(tc, test_closed_port);
	tcase_add_test(tc, test_tls_failure);
	tcase_add_test(tc, test_unsealable_secret);
	tcase_add_loop_test(tc, test_budget_10s, 0, N(slow_cases));
	tcase_add_test(tc, test_stuck_endpoint_bounded);
	tcase_add_test(tc, endpoints_crud);
	tcase_add_loop_test(tc, endpoints_bad_input, 0, N(endpoint_bad));
	tcase_add_test(tc, endpoints_idempotency_and_client_id);
	tcase_add_test(tc, endpoints_scoped_to_key);
	tcase_add_test(tc, endpoints_rotate_secret);
	tcase_add_test(tc, client_delete_cascades);
	tcase_add_test(tc, no_secret_in_logs);
	suite_add_tcase(s, tc);

	tc = tcase_create("strict");
	tcase_add_unchecked_fixture(tc, strict_stack, harness_fixture_stop);
	tcase_add_checked_fixture(tc, harness_fixture_recover, NULL);
	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, strict_refuses_private_targets, 0, N(private_urls));
	tcase_add_test(tc, strict_accepts_public_targets);
	tcase_add_test(tc, strict_delivery_checks_again);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return harness_run_suite(webhooks_suite());
}
