/*
 * The connect flow end to end, through nginx, as a client's backend and its
 * end user's browser use it: the backend creates a link token (every error
 * of the body), the page gets a single-use ticket with the link token as
 * bearer, opens a link session with it, picks a biller, sends credentials
 * (the login runs in bds-jobs), answers MFA and ends with a public token the
 * backend exchanges; the hosted flow exchanges server-side and fires
 * link.session_finished; exits fire it too; five failed logins end a
 * session; update mode repairs a link in place. CORS answers the link host
 * and the client's allowedOrigins only. Guessing is bounded: per link
 * token, per username (the biller simulator, tools/biller-sim, is the
 * portal biller there), one fresh MFA challenge per session; update mode
 * refuses a revoked link and another person's login before any login.
 *
 * Logins run in the stack's bds-jobs (harness): a test waits for the
 * runner to be idle, then reads the session. Rows are aged with SQL
 * instead of sleeping (tickets, sessions, public tokens); links another
 * test needs are inserted with SQL when the flow itself is not what is
 * tested.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>
#include <json-c/json.h>
#include <libpq-fe.h>

#include "core/crypto.h"
#include "devacct.h"
#include "harness.h"
#include "receiver.h"
#include "sim.h"

#define N(x) ((int)(sizeof(x) / sizeof((x)[0])))
#define SANDBOX_BILLER	"blr_01900000-0000-7000-8000-000000000001"
/* a real biller's portal: development and production link it, the sandbox
 * does not (docs/DECISIONS.md "Environments: which connector links where") */
#define PORTAL_BILLER	"blr_01900000-0000-7000-8000-0000000e0001"
#define LINK_ORIGIN	"https://link.bds.example"	/* config link_url default */
#define APP_ORIGIN	"https://app.example"
#define OTHER_ORIGIN	"https://other-client.example"
#define APP_REDIRECT	"https://app.example/linked"
#define WAIT_MS		10000
/* a portal biller: the simulator's "power" (its customers cust000NN,
 * password pw-cust000NN) */
#define POWER		"blr_01900000-0000-7000-8000-0000000000c1"

static struct devacct dev_a, dev_b;

/* ------------------------------------------------------------------ */
/* Helpers                                                             */

/* One SQL statement of the test (text parameters); the result (caller
 * PQclear's) must be ok. */
static PGresult *
sql(const char *q, int n, const char *const *p)
{
	PGresult *res = PQexecParams(devacct_pg(), q, n, NULL, p, NULL, NULL, 0);

	ck_assert_msg(PQresultStatus(res) == PGRES_TUPLES_OK ||
	    PQresultStatus(res) == PGRES_COMMAND_OK, "%s: %s", q,
	    PQresultErrorMessage(res));
	return res;
}

/* The first column of the first row as a malloc'ed string ("" when none). */
static char *
sql_str(const char *q, int n, const char *const *p)
{
	PGresult *res = sql(q, n, p);
	char *s = strdup(PQntuples(res) > 0 ? PQgetvalue(res, 0, 0) : "");

	PQclear(res);
	return s;
}

static long
sql_int(const char *q, int n, const char *const *p)
{
	char *s = sql_str(q, n, p);
	long v = atol(s);

	free(s);
	return v;
}

struct tenant {
	char	*client, *key;
};

/* A client of d with a redirect URI and an allowed origin, and its sandbox key. */
static void
tenant_new(const struct devacct *d, struct tenant *t)
{
	struct harness_resp *r;

	t->client = devacct_client_new(d);
	t->key = devacct_key_new(d, t->client, "sandbox");
	r = devacct_jwt(d, "PUT", harness_fmt("/v1/iam/clients/%s", t->client),
	    "{\"redirectUris\":[\"" APP_REDIRECT "\"],\"allowedOrigins\":[\"" APP_ORIGIN "\"]}",
	    NULL);
	harness_expect(r, 200);
	harness_resp_free(r);
}

static void
tenant_free(struct tenant *t)
{
	free(t->client);
	free(t->key);
}

/* The client's backend: a request with its sandbox key on the sandbox host. */
static struct harness_resp *
key_call(const struct tenant *t, const char *method, const char *path, const char *body)
{
	return devacct_call(method, "sandbox", path, devacct_bearer(t->key), body, NULL);
}

/* The browser: a request with a bearer (session token or link token). */
static struct harness_resp *
page_call(const char *bearer, const char *method, const char *path, const char *body)
{
	return devacct_call(method, "sandbox", path, bearer ? devacct_bearer(bearer) : NULL,
	    body, NULL);
}

/* POST /v1/link-tokens with body: 201 expected; the link token (malloc'ed). */
static char *
link_token(const struct tenant *t, const char *body)
{
	struct harness_resp *r = key_call(t, "POST", "/v1/link-tokens", body);
	char *lt;

	harness_expect(r, 201);
	lt = strdup(devacct_str(r, "link_token"));
	harness_resp_free(r);
	return lt;
}

/* A ticket for the link token (malloc'ed). */
static char *
ticket(const char *lt)
{
	struct harness_resp *r = page_call(lt, "POST", "/v1/biller-connect/ticket", NULL);
	char *tk;

	harness_expect(r, 201);
	tk = strdup(devacct_str(r, "ticket"));
	harness_resp_free(r);
	return tk;
}

/* A session opened with a fresh ticket of lt: the session token (malloc'ed). */
static char *
session(const char *lt)
{
	char *tk = ticket(lt), *st;
	struct harness_resp *r = page_call(NULL, "POST", "/v1/link-sessions",
	    harness_fmt("{\"ticket\":\"%s\"}", tk));

	harness_expect(r, 201);
	st = strdup(devacct_str(r, "session_token"));
	harness_resp_free(r);
	free(tk);
	return st;
}

/* Insert a link row (the flow is not what such a test is about). */
static char *
link_insert(const char *client, const char *user, const char *status)
{
	char *id = malloc(64);
	unsigned char u[16];
	char uuid[CRYPTO_UUID_STRLEN + 1];
	const char *p[4];

	crypto_uuid7(u);
	crypto_uuid_format(u, uuid);
	snprintf(id, 64, "link_%s", uuid);
	p[0] = client;
	p[1] = id;
	p[2] = user;
	p[3] = status;
	PQclear(sql("INSERT INTO links (client_id, id, environment, client_user_id, biller_id,"
	    " status, disconnect_reason) VALUES ($1, $2, 'sandbox', $3,"
	    " '" SANDBOX_BILLER "', $4, CASE $4 WHEN 'REVOKED' THEN 'revoked'"
	    " WHEN 'DISCONNECTED' THEN 'credentials_rejected' END)", 4, p));
	return id;
}

/* Events of a type for the client, as "status/exit_reason/link_id" of the
 * newest (malloc'ed; "" when none) and the count. */
static long
events_count(const char *client, const char *type)
{
	const char *p[2] = { client, type };

	return sql_int("SELECT count(*) FROM events WHERE client_id = $1 AND type = $2", 2, p);
}

static char *
event_field(const char *client, const char *type, const char *field)
{
	const char *p[3] = { client, type, field };

	return sql_str("SELECT data->'object'->>$3 FROM events WHERE client_id = $1"
	    " AND type = $2 ORDER BY created_at DESC LIMIT 1", 3, p);
}

/* ------------------------------------------------------------------ */
/* Link tokens                                                         */

/* Every body field of the spec's table is taken and echoed as DOMAIN.md
 * says; a hosted token carries a hosted_url whose ticket is a fragment. */
START_TEST(token_create)
{
	struct tenant t;
	struct harness_resp *r;
	char *lt, *rtl;
	const char *p[1];

	tenant_new(&dev_a, &t);
	r = key_call(&t, "POST", "/v1/request-to-links", "{\"client_user_id\":\"user-1\","
	    "\"biller_id\":\"" SANDBOX_BILLER "\"}");
	harness_expect(r, 201);
	rtl = strdup(devacct_str(r, "id"));
	harness_resp_free(r);
	r = key_call(&t, "POST", "/v1/link-tokens", harness_fmt(
	    "{\"client_user_id\":\"user-1\",\"consents\":[\"bills\",\"usage\"],"
	    "\"client_id\":\"%s\",\"biller_id\":\"" SANDBOX_BILLER "\","
	    "\"connectivity_type\":\"credentials\",\"redirect_uri\":\"" APP_REDIRECT "\","
	    "\"request_to_link_id\":\"%s\","
	    "\"metadata_json\":\"{\\\"cart\\\":42}\",\"hosted\":true,\"language\":\"es-MX\","
	    "\"webhook_url\":\"https://ignored.example/hook\"}", t.client, rtl));
	harness_expect(r, 201);
	ck_assert_msg(strncmp(devacct_str(r, "link_token"), "lt_", 3) == 0, "%s", r->body);
	ck_assert_pstr_eq(devacct_str(r, "mode"), "create");
	ck_assert_pstr_eq(devacct_str(r, "client_user_id"), "user-1");
	ck_assert_pstr_eq(devacct_str(r, "biller_id"), SANDBOX_BILLER);
	ck_assert_pstr_eq(devacct_str(r, "request_to_link_id"), rtl);
	free(rtl);
	ck_assert_pstr_eq(devacct_str(r, "language"), "es-MX");
	ck_assert_pstr_eq(devacct_str(r, "metadata_json"), "{\"cart\":42}");
	ck_assert_ptr_nonnull(devacct_str(r, "expiration"));
	ck_assert_ptr_nonnull(devacct_str(r, "request_id"));
	ck_assert_msg(strncmp(devacct_str(r, "hosted_url"),
	    LINK_ORIGIN "/connect#ticket=bds_tkt_", strlen(LINK_ORIGIN) + 24) == 0,
	    "%s", devacct_str(r, "hosted_url"));
	p[0] = devacct_str(r, "link_token");
	/* 4 h */
	ck_assert_int_eq(sql_int("SELECT extract(epoch FROM expires_at - created_at)::int"
	    " FROM link_tokens WHERE id = $1", 1, p), 4 * 3600);
	harness_resp_free(r);

	/* the minimum: defaults */
	r = key_call(&t, "POST", "/v1/link-tokens", "{\"client_user_id\":\"user-1\"}");
	harness_expect(r, 201);
	ck_assert_pstr_eq(devacct_str(r, "language"), "en");
	ck_assert_ptr_null(devacct_json(r, "hosted_url"));
	/* null, not absent (devacct_text cannot tell the two apart) */
	ck_assert_msg(strstr(r->body, "\"biller_id\":null") != NULL, "%s", r->body);
	harness_resp_free(r);

	/* hosted as options: its own lifetime, a registered redirect */
	lt = link_token(&t, "{\"client_user_id\":\"user-1\",\"hosted\":{\"redirect_uri\":\""
	    APP_REDIRECT "\",\"expires_in\":600}}");
	p[0] = lt;
	ck_assert_int_eq(sql_int("SELECT extract(epoch FROM expires_at - created_at)::int"
	    " FROM link_tokens WHERE id = $1", 1, p), 600);
	free(lt);
	tenant_free(&t);
}
END_TEST

static const struct {
	const char	*body;
	long		 status;
	const char	*code, *field;
} bad_tokens[] = {
	{ "{}", 400, "VALIDATION_ERROR", "client_user_id" },
	{ "{\"client_user_id\":\"\"}", 400, "VALIDATION_ERROR", "client_user_id" },
	{ "{\"client_user_id\":\"u\",\"consents\":[\"bills\",\"teleport\"]}", 400,
	  "VALIDATION_ERROR", "consents[1]" },
	{ "{\"client_user_id\":\"u\",\"biller_id\":\"blr_01900000-0000-7000-8000-0000000000ff\"}",
	  400, "VALIDATION_ERROR", "biller_id" },
	{ "{\"client_user_id\":\"u\",\"redirect_uri\":\"https://evil.example/steal\"}", 400,
	  "VALIDATION_ERROR", "redirect_uri" },
	{ "{\"client_user_id\":\"u\",\"hosted\":{\"redirect_uri\":\"https://evil.example/x\"}}",
	  400, "VALIDATION_ERROR", "hosted.redirect_uri" },
	{ "{\"client_user_id\":\"u\",\"hosted\":\"yes\"}", 400, "VALIDATION_ERROR", "hosted" },
	{ "{\"client_user_id\":\"u\",\"hosted\":{\"expires_in\":5}}", 400, "VALIDATION_ERROR",
	  "hosted" },
	/* DOMAIN.md: a link token lives 4 h; a hosted one no longer */
	{ "{\"client_user_id\":\"u\",\"hosted\":{\"expires_in\":14401}}", 400,
	  "VALIDATION_ERROR", "hosted" },
	{ "{\"client_user_id\":\"u\",\"hosted\":{\"expires_in\":86400}}", 400,
	  "VALIDATION_ERROR", "hosted" },
	{ "{\"client_user_id\":\"u\",\"metadata_json\":\"not json\"}", 400, "VALIDATION_ERROR",
	  "metadata_json" },
	{ "{\"client_user_id\":\"u\",\"metadata_json\":{\"a\":1}}", 400, "VALIDATION_ERROR",
	  "metadata_json" },
	{ "{\"client_user_id\":\"u\",\"request_to_link_id\":\"req_1\"}", 400, "VALIDATION_ERROR",
	  "request_to_link_id" },
	{ "{\"client_user_id\":\"u\",\"request_to_link_id\":"
	  "\"rtl_01900000-0000-7000-8000-000000000009\"}", 400, "VALIDATION_ERROR",
	  "request_to_link_id" },
	{ "{\"client_user_id\":\"u\",\"language\":\"e\"}", 400, "VALIDATION_ERROR", "language" },
	{ "{\"client_user_id\":\"u\",\"language\":\"en_US\"}", 400, "VALIDATION_ERROR",
	  "language" },
	/* well-formed, but not a language of the connect page */
	{ "{\"client_user_id\":\"u\",\"language\":\"fr\"}", 400, "VALIDATION_ERROR", "language" },
	{ "{\"client_user_id\":\"u\",\"language\":\"fr-CA\"}", 400, "VALIDATION_ERROR",
	  "language" },
	{ "{\"client_user_id\":\"u\",\"language\":\"esp\"}", 400, "VALIDATION_ERROR",
	  "language" },
	{ "{\"client_user_id\":\"u\",\"connectivity_type\":\"fax\"}", 400, "VALIDATION_ERROR",
	  "connectivity_type" },
	{ "{\"client_user_id\":\"u\",\"update\":{}}", 400, "VALIDATION_ERROR", "update.link_id" },
	{ "{\"client_user_id\":\"u\",\"update\":{\"link_id\":\"x\",\"reason\":\"bored\"}}", 400,
	  "VALIDATION_ERROR", "update.reason" },
	{ "{\"client_user_id\":\"u\",\"update\":{\"link_id\":"
	  "\"link_01900000-0000-7000-8000-0000000000aa\"}}", 404, "LINK_NOT_FOUND", NULL },
	{ "{\"client_user_id\":\"u\",\"client_id\":\"cli_someone_else\"}", 403,
	  "CLIENT_ID_MISMATCH", NULL },
};

/* Each bad body is its 4xx naming the field, and creates nothing. */
START_TEST(token_create_bad)
{
	struct tenant t;
	struct harness_resp *r;
	const char *p[1];

	tenant_new(&dev_a, &t);
	r = key_call(&t, "POST", "/v1/link-tokens", bad_tokens[_i].body);
	harness_assert_coded(r, bad_tokens[_i].status, bad_tokens[_i].code);
	if (bad_tokens[_i].field != NULL)
		ck_assert_pstr_eq(devacct_str(r, "errors.0.field"), bad_tokens[_i].field);
	harness_resp_free(r);
	p[0] = t.client;
	ck_assert_int_eq(sql_int("SELECT count(*) FROM link_tokens WHERE client_id = $1", 1, p), 0);
	tenant_free(&t);
}
END_TEST

/* The connect page's languages (web/i18n: en, es), any case, with a region
 * or not: kept as given; another language is 400 naming the supported ones. */
START_TEST(token_language)
{
	static const char *const ok[] = { "en", "es", "es-MX", "EN-us", "es-419" };
	struct tenant t;
	struct harness_resp *r;

	tenant_new(&dev_a, &t);
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		r = key_call(&t, "POST", "/v1/link-tokens", harness_fmt(
		    "{\"client_user_id\":\"u\",\"language\":\"%s\"}", ok[i]));
		harness_expect(r, 201);
		ck_assert_pstr_eq(devacct_str(r, "language"), ok[i]);
		harness_resp_free(r);
	}
	r = key_call(&t, "POST", "/v1/link-tokens", "{\"client_user_id\":\"u\",\"language\":\"fr\"}");
	harness_assert_coded(r, 400, "VALIDATION_ERROR");
	ck_assert_pstr_eq(devacct_str(r, "errors.0.field"), "language");
	ck_assert_pstr_eq(devacct_str(r, "errors.0.code"), "unsupported_language");
	ck_assert_msg(strncmp(devacct_str(r, "error_message"), "language: ", 10) == 0 &&
	    strstr(devacct_str(r, "error_message"), "supported: en, es") != NULL,
	    "%s", devacct_str(r, "error_message"));
	harness_resp_free(r);
	tenant_free(&t);
}
END_TEST

/* metadata_json above 4 KiB is refused; 4 KiB itself is taken. */
START_TEST(token_metadata_size)
{
	struct tenant t;
	struct harness_resp *r;
	char *meta = malloc(5000), *body = malloc(5200);

	tenant_new(&dev_a, &t);
	for (int len = 4096; len <= 4097; len++) {
		/* "\"xxxx…\"" as a JSON string of len bytes, escaped into the body */
		memset(meta, 'x', (size_t)len);
		meta[len] = '\0';
		meta[0] = '[';
		meta[len - 1] = ']';
		memset(meta + 1, ' ', (size_t)len - 2);
		/* not harness_fmt: its 4 KiB buffer would cut the body short */
		snprintf(body, 5200, "{\"client_user_id\":\"u\",\"metadata_json\":\"%s\"}",
		    meta);
		r = key_call(&t, "POST", "/v1/link-tokens", body);
		if (len == 4096)
			harness_expect(r, 201);
		else
			harness_assert_coded(r, 400, "VALIDATION_ERROR");
		harness_resp_free(r);
	}
	free(meta);
	free(body);
	tenant_free(&t);
}
END_TEST

/* update.link_id: another client's link is 403 CLIENT_ID_MISMATCH (the
 * spec's code), another end user's 403 LINK_FORBIDDEN, a
 * REVOKED one 400; the owner's gets an update token (30 min) pinned to the
 * link's biller. */
START_TEST(token_update_mode)
{
	struct tenant a, b;
	struct harness_resp *r;
	char *mine, *revoked, *theirs;
	const char *p[1];

	tenant_new(&dev_a, &a);
	tenant_new(&dev_b, &b);
	mine = link_insert(a.client, "user-1", "DISCONNECTED");
	revoked = link_insert(a.client, "user-1", "REVOKED");
	theirs = link_insert(b.client, "user-1", "ACTIVE");

	r = key_call(&a, "POST", "/v1/link-tokens", harness_fmt(
	    "{\"client_user_id\":\"user-1\",\"update\":{\"link_id\":\"%s\"}}", theirs));
	harness_assert_coded(r, 403, "CLIENT_ID_MISMATCH");
	harness_resp_free(r);
	r = key_call(&a, "POST", "/v1/link-tokens", harness_fmt(
	    "{\"client_user_id\":\"user-2\",\"update\":{\"link_id\":\"%s\"}}", mine));
	harness_assert_coded(r, 403, "LINK_FORBIDDEN");
	harness_resp_free(r);
	r = key_call(&a, "POST", "/v1/link-tokens", harness_fmt(
	    "{\"client_user_id\":\"user-1\",\"update\":{\"link_id\":\"%s\"}}", revoked));
	harness_assert_coded(r, 400, "VALIDATION_ERROR");
	ck_assert_pstr_eq(devacct_str(r, "errors.0.field"), "update.link_id");
	harness_resp_free(r);

	/* the bare UUID names it too */
	r = key_call(&a, "POST", "/v1/link-tokens", harness_fmt(
	    "{\"client_user_id\":\"user-1\",\"update\":{\"link_id\":\"%s\","
	    "\"reason\":\"credentials_invalid\"}}", mine + 5));
	harness_expect(r, 201);
	ck_assert_pstr_eq(devacct_str(r, "mode"), "update");
	ck_assert_pstr_eq(devacct_str(r, "biller_id"), SANDBOX_BILLER);
	p[0] = devacct_str(r, "link_token");
	ck_assert_int_eq(sql_int("SELECT extract(epoch FROM expires_at - created_at)::int"
	    " FROM link_tokens WHERE id = $1", 1, p), 30 * 60);
	harness_resp_free(r);
	free(mine);
	free(revoked);
	free(theirs);
	tenant_free(&a);
	tenant_free(&b);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Tickets and sessions                                                */

/* A ticket opens one session: a second use, an expired or an unknown
 * ticket is 400 INVALID_TICKET; the ticket call needs a live link token of
 * the host's environment. */
START_TEST(ticket_single_use)
{
	struct tenant t;
	struct harness_resp *r;
	char *lt, *tk;
	const char *p[1];

	tenant_new(&dev_a, &t);
	lt = link_token(&t, "{\"client_user_id\":\"user-1\",\"consents\":[\"bills\"]}");
	r = page_call(lt, "POST", "/v1/biller-connect/ticket", NULL);
	harness_expect(r, 201);
	tk = strdup(devacct_str(r, "ticket"));
	ck_assert_msg(strncmp(tk, "bds_tkt_", 8) == 0, "%s", tk);
	ck_assert_pstr_eq(devacct_str(r, "connect_url"),
	    harness_fmt(LINK_ORIGIN "/connect#ticket=%s", tk));
	harness_resp_free(r);
	p[0] = tk;
	ck_assert_int_eq(sql_int("SELECT extract(epoch FROM expires_at - created_at)::int"
	    " FROM connect_tickets WHERE token_sha256 = sha256(convert_to($1, 'UTF8'))", 1, p), 60);

	r = page_call(NULL, "POST", "/v1/link-sessions", harness_fmt("{\"ticket\":\"%s\"}", tk));
	harness_expect(r, 201);
	ck_assert_msg(strncmp(devacct_str(r, "session_token"), "bds_lst_", 8) == 0, "%s", r->body);
	ck_assert_pstr_eq(devacct_str(r, "mode"), "create");
	ck_assert_ptr_nonnull(devacct_str(r, "client.name"));
	ck_assert_str_eq(devacct_text(r, "consents"), "[\"bills\"]");
	ck_assert_pstr_eq(devacct_str(r, "language"), "en");
	ck_assert_ptr_nonnull(devacct_str(r, "expires_at"));
	harness_resp_free(r);
	r = page_call(NULL, "POST", "/v1/link-sessions", harness_fmt("{\"ticket\":\"%s\"}", tk));
	harness_assert_coded(r, 400, "INVALID_TICKET");
	harness_resp_free(r);
	free(tk);

	/* expired: aged, not slept */
	tk = ticket(lt);
	p[0] = tk;
	PQclear(sql("UPDATE connect_tickets SET expires_at = now() - interval '1 second'"
	    " WHERE token_sha256 = sha256(convert_to($1, 'UTF8'))", 1, p));
	r = page_call(NULL, "POST", "/v1/link-sessions", harness_fmt("{\"ticket\":\"%s\"}", tk));
	harness_assert_coded(r, 400, "INVALID_TICKET");
	harness_resp_free(r);
	free(tk);

	/* unknown, malformed, missing */
	r = page_call(NULL, "POST", "/v1/link-sessions", "{\"ticket\":\"bds_tkt_nope\"}");
	harness_assert_coded(r, 400, "INVALID_TICKET");
	harness_resp_free(r);
	r = page_call(NULL, "POST", "/v1/link-sessions", "{}");
	harness_assert_coded(r, 400, "VALIDATION_ERROR");
	harness_resp_free(r);

	/* the ticket call: no bearer, a key, another host, an expired token */
	r = page_call(NULL, "POST", "/v1/biller-connect/ticket", NULL);
	ck_assert_int_eq(r->status, 401);
	harness_resp_free(r);
	r = page_call(t.key, "POST", "/v1/biller-connect/ticket", NULL);
	ck_assert_int_eq(r->status, 401);
	harness_resp_free(r);
	r = devacct_call("POST", "api", "/v1/biller-connect/ticket", devacct_bearer(lt), NULL, NULL);
	ck_assert_int_eq(r->status, 401);
	harness_resp_free(r);
	p[0] = lt;
	PQclear(sql("UPDATE link_tokens SET expires_at = now() - interval '1 second'"
	    " WHERE id = $1", 1, p));
	r = page_call(lt, "POST", "/v1/biller-connect/ticket", NULL);
	harness_assert_coded(r, 401, "INVALID_LINK_TOKEN");
	harness_resp_free(r);
	free(lt);
	tenant_free(&t);
}
END_TEST

/* The session token authenticates the session routes; an idle session
 * expires (current says so, the others are 401); connect queues a connect
 * job in bds-jobs, never logging in itself. */
START_TEST(session_auth_and_connect_queue)
{
	struct tenant t;
	struct harness_resp *r;
	char *lt, *lt2, *st;
	const char *p[1];

	tenant_new(&dev_a, &t);
	lt = link_token(&t, "{\"client_user_id\":\"user-1\"}");
	st = session(lt);

	r = page_call(NULL, "GET", "/v1/link-sessions/current", NULL);
	harness_assert_coded(r, 401, "INVALID_SESSION");
	harness_resp_free(r);
	r = page_call("bds_lst_forged", "GET", "/v1/link-sessions/current", NULL);
	harness_assert_coded(r, 401, "INVALID_SESSION");
	harness_resp_free(r);

	r = page_call(st, "GET", "/v1/link-sessions/current", NULL);
	harness_expect(r, 200);
	ck_assert_pstr_eq(devacct_str(r, "status"), "awaiting_credentials");
	ck_assert_pstr_eq(devacct_str(r, "mode"), "create");
	harness_resp_free(r);
	/* a server-side SDK: the link token itself names the token's newest session */
	r = page_call(lt, "GET", "/v1/link-sessions/current", NULL);
	harness_expect(r, 200);
	ck_assert_pstr_eq(devacct_str(r, "status"), "awaiting_credentials");
	harness_resp_free(r);
	p[0] = t.client;
	ck_assert_int_eq(sql_int("SELECT count(*) FROM link_sessions WHERE client_id = $1",
	    1, p), 1);

	/* the picker: ACTIVE and DEGRADED billers */
	r = page_call(st, "GET", "/v1/link-sessions/billers?search_term=sandbox&limit=5", NULL);
	harness_expect(r, 200);
	ck_assert_ptr_nonnull(devacct_json(r, "data"));
	harness_resp_free(r);
	/* its page sizes are core/cursor.h's: at most 500 */
	r = page_call(st, "GET", "/v1/link-sessions/billers?limit=500", NULL);
	harness_expect(r, 200);
	harness_resp_free(r);
	r = page_call(st, "GET", "/v1/link-sessions/billers?limit=501", NULL);
	harness_assert_coded(r, 400, "VALIDATION_ERROR");
	ck_assert_pstr_eq(devacct_str(r, "errors.0.field"), "limit");
	harness_resp_free(r);

	/* no biller chosen and none pinned */
	r = page_call(st, "POST", "/v1/link-sessions/connect",
	    "{\"username\":\"user_good\",\"password\":\"pass_good\"}");
	harness_assert_coded(r, 400, "VALIDATION_ERROR");
	ck_assert_pstr_eq(devacct_str(r, "errors.0.field"), "biller_id");
	harness_resp_free(r);

	r = page_call(st, "POST", "/v1/link-sessions/connect",
	    "{\"biller_id\":\"" SANDBOX_BILLER "\",\"username\":\"user_good\","
	    "\"password\":\"pass_good\"}");
	harness_expect(r, 202);
	ck_assert_pstr_eq(devacct_str(r, "status"), "connecting");
	harness_resp_free(r);
	/* queued for bds-jobs; the credentials only sealed */
	p[0] = t.client;
	ck_assert_int_ge(sql_int("SELECT count(*) FROM jobs WHERE kind = 'connect'"
	    " AND client_id = $1", 1, p), 1);
	ck_assert_int_eq(sql_int("SELECT count(*) FROM link_sessions WHERE client_id = $1"
	    " AND position(convert_to('pass_good', 'UTF8') IN credentials) > 0", 1, p), 0);

	/* bds-jobs runs the connect job at once: the sandbox logs in */
	ck_assert_msg(harness_jobs_wait_idle(30000) == 0, "%s", harness_error());
	r = page_call(st, "GET", "/v1/link-sessions/current", NULL);
	harness_expect(r, 200);
	ck_assert_pstr_eq(devacct_str(r, "status"), "connected");
	harness_resp_free(r);
	ck_assert_int_eq(sql_int("SELECT count(*) FROM jobs WHERE kind = 'connect'"
	    " AND client_id = $1 AND status = 'done'", 1, p), 1);
	free(st);

	/* a session left idle past 30 min (before connecting): aged */
	st = session(lt2 = link_token(&t, "{\"client_user_id\":\"user-1\"}"));
	PQclear(sql("UPDATE link_sessions SET expires_at = now() - interval '1 second'"
	    " WHERE client_id = $1 AND status = 'awaiting_credentials'", 1, p));
	r = page_call(st, "GET", "/v1/link-sessions/current", NULL);
	harness_expect(r, 200);
	ck_assert_pstr_eq(devacct_str(r, "status"), "expired");
	harness_resp_free(r);
	r = page_call(st, "POST", "/v1/link-sessions/mfa", "{\"answer\":\"1234\"}");
	harness_assert_coded(r, 401, "SESSION_EXPIRED");
	harness_resp_free(r);
	/* expiry fires nothing */
	ck_assert_int_eq(events_count(t.client, "link.session_finished"), 0);
	free(st);
	free(lt);
	free(lt2);
	tenant_free(&t);
}
END_TEST

/* An exit ends the session and fires link.session_finished (exited,
 * exit_reason) once. */
START_TEST(session_exit)
{
	struct tenant t;
	struct harness_resp *r;
	char *lt, *st, *v;

	tenant_new(&dev_a, &t);
	lt = link_token(&t, "{\"client_user_id\":\"user-9\",\"biller_id\":\"" SANDBOX_BILLER "\"}");
	st = session(lt);
	r = page_call(st, "POST", "/v1/link-sessions/exit", "{\"reason\":\"nope\"}");
	harness_assert_coded(r, 400, "VALIDATION_ERROR");
	harness_resp_free(r);
	r = page_call(st, "POST", "/v1/link-sessions/exit", "{\"reason\":\"user_closed\"}");
	harness_expect(r, 200);
	harness_resp_free(r);
	r = page_call(st, "GET", "/v1/link-sessions/current", NULL);
	harness_expect(r, 200);
	ck_assert_pstr_eq(devacct_str(r, "status"), "exited");
	harness_resp_free(r);
	r = page_call(st, "POST", "/v1/link-sessions/exit", "{\"reason\":\"error\"}");
	ck_assert_int_eq(r->status, 409);
	harness_resp_free(r);
	r = page_call(st, "POST", "/v1/link-sessions/connect",
	    "{\"username\":\"user_good\",\"password\":\"pass_good\"}");
	ck_assert_int_eq(r->status, 409);
	harness_resp_free(r);

	ck_assert_int_eq(events_count(t.client, "link.session_finished"), 1);
	v = event_field(t.client, "link.session_finished", "status");
	ck_assert_str_eq(v, "exited");
	free(v);
	v = event_field(t.client, "link.session_finished", "exit_reason");
	ck_assert_str_eq(v, "user_closed");
	free(v);
	v = event_field(t.client, "link.session_finished", "id");
	ck_assert_str_eq(v, lt);
	free(v);
	v = event_field(t.client, "link.session_finished", "user_id");
	ck_assert_str_eq(v, "user-9");
	free(v);
	v = event_field(t.client, "link.session_finished", "biller_id");
	ck_assert_str_eq(v, SANDBOX_BILLER);
	free(v);
	free(st);
	free(lt);
	tenant_free(&t);
}
END_TEST

/* CORS: the link host's origin and the client's allowedOrigins are echoed,
 * on the preflight and on the answer; any other origin gets no
 * Access-Control-Allow-Origin. */
START_TEST(cors)
{
	struct tenant t;
	struct harness_resp *r;
	char *lt, *st;
	const char *origins[] = { LINK_ORIGIN, APP_ORIGIN };

	tenant_new(&dev_a, &t);
	lt = link_token(&t, "{\"client_user_id\":\"user-1\"}");
	st = session(lt);
	for (int i = 0; i < 2; i++) {
		const char *pre[] = { harness_fmt("Origin: %s", origins[i]),
			"Access-Control-Request-Method: POST", NULL };
		const char *hdr[] = { harness_fmt("Origin: %s", origins[i]), NULL };

		r = harness_request("OPTIONS", "sandbox", "/v1/link-sessions/connect", pre, NULL, 0);
		ck_assert_int_eq(r->status, 204);
		ck_assert_pstr_eq(harness_header(r, "Access-Control-Allow-Origin"), origins[i]);
		ck_assert_ptr_nonnull(strstr(harness_header(r, "Access-Control-Allow-Methods"), "POST"));
		ck_assert_ptr_nonnull(strstr(harness_header(r, "Access-Control-Allow-Headers"),
		    "Authorization"));
		harness_resp_free(r);
		r = devacct_call("GET", "sandbox", "/v1/link-sessions/current", devacct_bearer(st),
		    NULL, hdr);
		harness_expect(r, 200);
		ck_assert_pstr_eq(harness_header(r, "Access-Control-Allow-Origin"), origins[i]);
		harness_resp_free(r);
	}
	{
		const char *pre[] = { "Origin: https://evil.example",
			"Access-Control-Request-Method: POST", NULL };
		const char *hdr[] = { "Origin: https://evil.example", NULL };

		r = harness_request("OPTIONS", "sandbox", "/v1/link-sessions/connect", pre, NULL, 0);
		ck_assert_int_eq(r->status, 204);
		ck_assert_ptr_null(harness_header(r, "Access-Control-Allow-Origin"));
		harness_resp_free(r);
		r = devacct_call("GET", "sandbox", "/v1/link-sessions/current", devacct_bearer(st),
		    NULL, hdr);
		harness_expect(r, 200);
		ck_assert_ptr_null(harness_header(r, "Access-Control-Allow-Origin"));
		harness_resp_free(r);
	}
	/* another client's origin: its preflight passes (a preflight carries
	 * no credential, so it cannot know the client), but the answer to
	 * this client's session is not shared with it */
	{
		const char *pre[] = { "Origin: " OTHER_ORIGIN,
			"Access-Control-Request-Method: POST", NULL };
		const char *hdr[] = { "Origin: " OTHER_ORIGIN, NULL };
		struct tenant o;

		tenant_new(&dev_b, &o);
		r = devacct_jwt(&dev_b, "PUT", harness_fmt("/v1/iam/clients/%s", o.client),
		    "{\"allowedOrigins\":[\"" OTHER_ORIGIN "\"]}", NULL);
		harness_expect(r, 200);
		harness_resp_free(r);
		r = harness_request("OPTIONS", "sandbox", "/v1/link-sessions/connect", pre, NULL, 0);
		ck_assert_int_eq(r->status, 204);
		ck_assert_pstr_eq(harness_header(r, "Access-Control-Allow-Origin"), OTHER_ORIGIN);
		ck_assert_ptr_nonnull(strstr(harness_header(r, "Vary"), "Origin"));
		ck_assert_ptr_null(harness_header(r, "Access-Control-Allow-Credentials"));
		harness_resp_free(r);
		r = devacct_call("GET", "sandbox", "/v1/link-sessions/current", devacct_bearer(st),
		    NULL, hdr);
		harness_expect(r, 200);
		ck_assert_ptr_null(harness_header(r, "Access-Control-Allow-Origin"));
		harness_resp_free(r);
		r = devacct_call("POST", "sandbox", "/v1/link-sessions/exit", devacct_bearer(st),
		    "{\"reason\":\"user_closed\"}", hdr);
		ck_assert_ptr_null(harness_header(r, "Access-Control-Allow-Origin"));
		harness_resp_free(r);
		tenant_free(&o);
	}
	/* not a CORS route: no preflight, OPTIONS is a method it does not take */
	{
		const char *pre[] = { "Origin: " LINK_ORIGIN, NULL };

		r = harness_request("OPTIONS", "sandbox", "/v1/link-tokens", pre, NULL, 0);
		ck_assert_int_eq(r->status, 405);
		ck_assert_ptr_null(harness_header(r, "Access-Control-Allow-Origin"));
		harness_resp_free(r);
	}
	free(st);
	free(lt);
	tenant_free(&t);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Exchange                                                            */

/* A well-formed public token nobody holds: the format the service makes
 * (checksum included) comes from a real exchange, so tests take one from
 * the database of a real flow or, here, a made-up one that must fail. */
START_TEST(exchange_errors)
{
	struct tenant a, b;
	struct harness_resp *r;

	tenant_new(&dev_a, &a);
	tenant_new(&dev_b, &b);
	r = key_call(&a, "POST", "/v1/link-tokens/lt_01900000-0000-7000-8000-000000000001/exchange",
	    "{\"public_token\":\"bds_pub_0000000000000000000000000000000000000000000000000\"}");
	harness_assert_coded(r, 400, "INVALID_PUBLIC_TOKEN");
	harness_resp_free(r);
	r = key_call(&a, "POST", "/v1/link-tokens/lt_01900000-0000-7000-8000-000000000001/exchange",
	    "{}");
	harness_assert_coded(r, 400, "VALIDATION_ERROR");
	harness_resp_free(r);
	r = key_call(&a, "POST", "/v1/link-tokens/bds_pub_garbage/exchange", NULL);
	harness_assert_coded(r, 400, "INVALID_PUBLIC_TOKEN");
	harness_resp_free(r);
	r = key_call(&a, "POST", "/v1/link-tokens/lt_01900000-0000-7000-8000-000000000001/exchange",
	    harness_fmt("{\"client_id\":\"%s\",\"public_token\":\"x\"}", b.client));
	harness_assert_coded(r, 403, "CLIENT_ID_MISMATCH");
	harness_resp_free(r);
	r = devacct_call("POST", "sandbox", "/v1/link-tokens/lt_x/exchange", NULL,
	    "{\"public_token\":\"x\"}", NULL);
	ck_assert_int_eq(r->status, 401);
	harness_resp_free(r);
	tenant_free(&a);
	tenant_free(&b);
}
END_TEST


/* ------------------------------------------------------------------ */
/* The flow: logins run by the connect job                             */

/* bds-jobs has run what is due (the connect job answers at once for the
 * sandbox biller). */
static void
drive_connect(const char *client)
{
	(void)client;
	ck_assert_msg(harness_jobs_wait_idle(WAIT_MS) == 0, "bds-jobs did not finish its jobs");
}

/* GET current after the connect job ran. */
static struct harness_resp *
current(const char *client, const char *st)
{
	struct harness_resp *r;

	drive_connect(client);
	r = page_call(st, "GET", "/v1/link-sessions/current", NULL);
	harness_expect(r, 200);
	return r;
}

/* A page POST with the session token: status, and the coded envelope's
 * code unless NULL; the answer freed. */
static void
page_post(const char *st, const char *path, const char *body, long status, const char *code)
{
	struct harness_resp *r = page_call(st, "POST", path, body);

	if (code != NULL)
		harness_assert_coded(r, status, code);
	else
		harness_expect(r, status);
	harness_resp_free(r);
}

/* POST connect to biller: the status (202 expected unless told). */
static void
connect_to(const char *st, const char *biller, const char *user, const char *pass, long status,
    const char *code)
{
	page_post(st, "/v1/link-sessions/connect", harness_fmt("{\"biller_id\":\"%s\","
	    "\"username\":\"%s\",\"password\":\"%s\"}", biller, user, pass), status, code);
}

static void
connect_as(const char *st, const char *user, const char *pass)
{
	connect_to(st, SANDBOX_BILLER, user, pass, 202, NULL);
}

/* POST mfa {answer}: 202, or status and code. */
static void
answer_mfa(const char *st, const char *answer, long status, const char *code)
{
	page_post(st, "/v1/link-sessions/mfa", harness_fmt("{\"answer\":\"%s\"}", answer),
	    status, code);
}

/* The session's current state after the jobs ran is status (and
 * error_code, NULL: none); the answer freed. */
static void
assert_state(const char *client, const char *st, const char *status, const char *code)
{
	struct harness_resp *r = current(client, st);

	ck_assert_pstr_eq(devacct_str(r, "status"), status);
	if (code != NULL)
		ck_assert_pstr_eq(devacct_str(r, "error_code"), code);
	else
		ck_assert_ptr_null(devacct_json(r, "error_code"));
	harness_resp_free(r);
}

/* The embedded flow: token, ticket, session, connect user_mfa, MFA
 * (a wrong answer first), connected with a public token, exchange, and
 * link.completed once at the client's webhook. */
START_TEST(embedded_flow)
{
	struct receiver *rc = receiver_start(NULL);
	struct tenant t, other;
	struct harness_resp *r;
	char *lt, *st, *pub, *link;
	const char *p[2];

	ck_assert_msg(rc != NULL, "receiver: %s", receiver_error());
	tenant_new(&dev_a, &t);
	tenant_new(&dev_b, &other);
	devacct_subscribe(t.key, rc);
	lt = link_token(&t, "{\"client_user_id\":\"user-7\",\"consents\":[\"bills\"]}");
	st = session(lt);
	connect_as(st, "user_mfa", "pass_good");

	r = current(t.client, st);
	ck_assert_pstr_eq(devacct_str(r, "status"), "mfa_required");
	ck_assert_ptr_nonnull(devacct_str(r, "mfa.type"));
	ck_assert_ptr_nonnull(devacct_str(r, "mfa.prompt"));
	ck_assert_ptr_null(devacct_json(r, "public_token"));
	harness_resp_free(r);

	r = page_call(st, "POST", "/v1/link-sessions/mfa", "{\"answer\":\"0000\"}");
	harness_expect(r, 202);
	harness_resp_free(r);
	r = current(t.client, st);
	ck_assert_pstr_eq(devacct_str(r, "status"), "mfa_required");
	ck_assert_pstr_eq(devacct_str(r, "error_code"), "MFA_FAILED");
	harness_resp_free(r);

	r = page_call(st, "POST", "/v1/link-sessions/mfa", "{\"answer\":\"1234\"}");
	harness_expect(r, 202);
	harness_resp_free(r);
	r = current(t.client, st);
	ck_assert_pstr_eq(devacct_str(r, "status"), "connected");
	ck_assert_ptr_null(devacct_json(r, "link_id"));	/* embedded: the client exchanges */
	pub = strdup(devacct_str(r, "public_token"));
	ck_assert_msg(strncmp(pub, "bds_pub_", 8) == 0, "%s", pub);
	harness_resp_free(r);
	/* nothing secret at rest: the public token only as its hash and sealed */
	p[0] = pub;
	ck_assert_int_eq(sql_int("SELECT count(*) FROM public_tokens"
	    " WHERE token_sha256 = sha256(convert_to($1, 'UTF8'))", 1, p), 1);
	ck_assert_int_eq(sql_int("SELECT count(*) FROM link_sessions"
	    " WHERE position(convert_to($1, 'UTF8') IN public_token) > 0", 1, p), 0);

	/* another client cannot exchange it */
	r = key_call(&other, "POST", harness_fmt("/v1/link-tokens/%s/exchange", pub), NULL);
	harness_assert_coded(r, 400, "INVALID_PUBLIC_TOKEN");
	harness_resp_free(r);
	/* nor under another link token */
	r = key_call(&t, "POST", "/v1/link-tokens/lt_01900000-0000-7000-8000-000000000001/exchange",
	    harness_fmt("{\"public_token\":\"%s\"}", pub));
	harness_assert_coded(r, 400, "INVALID_PUBLIC_TOKEN");
	harness_resp_free(r);

	r = key_call(&t, "POST", harness_fmt("/v1/link-tokens/%s/exchange", lt),
	    harness_fmt("{\"public_token\":\"%s\"}", pub));
	harness_expect(r, 200);
	link = strdup(devacct_str(r, "link_id"));
	ck_assert_msg(strncmp(link, "link_", 5) == 0, "%s", r->body);
	ck_assert_msg(strncmp(devacct_str(r, "access_token"), "bds_lat_", 8) == 0, "%s", r->body);
	ck_assert_pstr_eq(devacct_str(r, "link.id"), link);
	ck_assert_pstr_eq(devacct_str(r, "link.status"), "ACTIVE");
	ck_assert_pstr_eq(devacct_str(r, "link.client_user_id"), "user-7");
	harness_resp_free(r);
	/* single use; the page shows it no more */
	r = key_call(&t, "POST", harness_fmt("/v1/link-tokens/%s/exchange", lt),
	    harness_fmt("{\"public_token\":\"%s\"}", pub));
	harness_assert_coded(r, 400, "INVALID_PUBLIC_TOKEN");
	harness_resp_free(r);
	r = page_call(st, "GET", "/v1/link-sessions/current", NULL);
	harness_expect(r, 200);
	ck_assert_ptr_null(devacct_json(r, "public_token"));
	harness_resp_free(r);

	/* link.completed once, for this link, at the webhook */
	p[0] = t.client;
	p[1] = link;
	ck_assert_int_eq(sql_int("SELECT count(*) FROM events WHERE client_id = $1"
	    " AND type = 'link.completed' AND data->'object'->>'id' = $2", 2, p), 1);
	ck_assert(devacct_received(rc, "link.completed", "") != NULL);
	/* the first retrieval (bds-jobs) then makes the link ready, once */
	drive_connect(t.client);
	ck_assert_int_eq(sql_int("SELECT count(*) FROM events WHERE client_id = $1"
	    " AND type = 'connection.ready' AND data->'object'->>'link_id' = $2", 2, p), 1);
	ck_assert_int_eq(sql_int("SELECT count(*) FROM events c, events d WHERE c.client_id = $1"
	    " AND d.client_id = $1 AND c.type = 'link.completed' AND d.type = 'connection.ready'"
	    " AND c.data->'object'->>'id' = $2 AND c.created_at <= d.created_at", 2, p), 1);
	ck_assert(devacct_received(rc, "connection.ready", "") != NULL);
	/* the embedded flow fires no session_finished on success */
	ck_assert_int_eq(events_count(t.client, "link.session_finished"), 0);
	receiver_stop(rc);
	free(pub);
	free(link);
	free(st);
	free(lt);
	tenant_free(&t);
	tenant_free(&other);
}
END_TEST

/* A sandbox end user connected (user_good) on an embedded token of t: the
 * public token (malloc'ed); *lt the link token (malloc'ed). */
static char *
sandbox_public_token(const struct tenant *t, const char *user, char **lt)
{
	struct harness_resp *r;
	char *st, *pub;

	*lt = link_token(t, harness_fmt("{\"client_user_id\":\"%s\"}", user));
	st = session(*lt);
	connect_as(st, "user_good", "pass_good");
	r = current(t->client, st);
	ck_assert_pstr_eq(devacct_str(r, "status"), "connected");
	pub = strdup(devacct_str(r, "public_token"));
	harness_resp_free(r);
	free(st);
	return pub;
}

/* An expired public token is refused like an unknown one. */
START_TEST(exchange_expired)
{
	struct tenant t;
	struct harness_resp *r;
	char *lt, *pub;
	const char *p[1];

	tenant_new(&dev_a, &t);
	pub = sandbox_public_token(&t, "user-1", &lt);
	p[0] = pub;
	PQclear(sql("UPDATE public_tokens SET expires_at = now() - interval '1 second'"
	    " WHERE token_sha256 = sha256(convert_to($1, 'UTF8'))", 1, p));
	r = key_call(&t, "POST", harness_fmt("/v1/link-tokens/%s/exchange", pub), NULL);
	harness_assert_coded(r, 400, "INVALID_PUBLIC_TOKEN");
	harness_resp_free(r);
	free(pub);
	free(lt);
	tenant_free(&t);
}
END_TEST

/* The exchange's path form: nginx's access log shows the path with the
 * public token masked (its kind kept), never the token. */
START_TEST(exchange_path_not_logged)
{
	struct tenant t;
	struct harness_resp *r;
	char *lt, *pub, *text;
	const char *logs[] = { "nginx/access.log", "nginx/error.log" };

	tenant_new(&dev_a, &t);
	pub = sandbox_public_token(&t, "user-log", &lt);
	r = key_call(&t, "POST", harness_fmt("/v1/link-tokens/%s/exchange", pub), NULL);
	harness_expect(r, 200);
	harness_resp_free(r);
	/* refused too (used by now): the same */
	r = key_call(&t, "POST", harness_fmt("/v1/link-tokens/%s/exchange", pub), NULL);
	harness_assert_coded(r, 400, "INVALID_PUBLIC_TOKEN");
	harness_resp_free(r);
	harness_sleep_ms(400);		/* the access log is flushed every 100 ms */
	for (size_t i = 0; i < sizeof(logs) / sizeof(logs[0]); i++) {
		text = harness_slurp(harness_fmt("%s/%s", harness_dir(), logs[i]));
		ck_assert_msg(text != NULL, "%s not readable", logs[i]);
		ck_assert_msg(strstr(text, pub) == NULL && strstr(text, pub + 8) == NULL,
		    "%s holds the public token", logs[i]);
		if (i == 0)
			ck_assert_msg(strstr(text, "\"uri\":\"/v1/link-tokens/bds_pub_[masked]"
			    "/exchange\"") != NULL, "the masked exchange path is not logged");
		free(text);
	}
	free(pub);
	free(lt);
	tenant_free(&t);
}
END_TEST

/* The hosted flow: the hosted_url's ticket opens the session; the service
 * exchanges itself: link_id in current, link.session_finished completed. */
START_TEST(hosted_flow)
{
	struct tenant t;
	struct harness_resp *r;
	char *lt, *hosted, *st, *link, *v;
	const char *tk;

	tenant_new(&dev_a, &t);
	r = key_call(&t, "POST", "/v1/link-tokens", "{\"client_user_id\":\"user-h\","
	    "\"hosted\":{\"redirect_uri\":\"" APP_REDIRECT "\"}}");
	harness_expect(r, 201);
	lt = strdup(devacct_str(r, "link_token"));
	hosted = strdup(devacct_str(r, "hosted_url"));
	harness_resp_free(r);
	tk = strstr(hosted, "#ticket=") + 8;
	r = page_call(NULL, "POST", "/v1/link-sessions", harness_fmt("{\"ticket\":\"%s\"}", tk));
	harness_expect(r, 201);
	st = strdup(devacct_str(r, "session_token"));
	/* no consents named: the bills, as the consent screen shows and the link keeps */
	ck_assert_str_eq(devacct_text(r, "consents"), "[\"bills\"]");
	harness_resp_free(r);
	/* the hosted_url's ticket is single use too */
	r = page_call(NULL, "POST", "/v1/link-sessions", harness_fmt("{\"ticket\":\"%s\"}", tk));
	harness_assert_coded(r, 400, "INVALID_TICKET");
	harness_resp_free(r);

	connect_as(st, "user_good", "pass_good");
	r = current(t.client, st);
	ck_assert_pstr_eq(devacct_str(r, "status"), "connected");
	ck_assert_ptr_null(devacct_json(r, "public_token"));
	link = strdup(devacct_str(r, "link_id"));
	ck_assert_msg(strncmp(link, "link_", 5) == 0, "%s", r->body);
	harness_resp_free(r);
	/* the hosted URL opened again after success: "already linked" */
	r = page_call(NULL, "POST", "/v1/link-sessions", harness_fmt("{\"ticket\":\"%s\"}", tk));
	harness_assert_coded(r, 409, "LINK_SESSION_COMPLETED");
	harness_resp_free(r);

	ck_assert_int_eq(events_count(t.client, "link.session_finished"), 1);
	v = event_field(t.client, "link.session_finished", "status");
	ck_assert_str_eq(v, "completed");
	free(v);
	v = event_field(t.client, "link.session_finished", "link_id");
	ck_assert_str_eq(v, link);
	free(v);
	v = event_field(t.client, "link.session_finished", "link_token_id");
	ck_assert_str_eq(v, lt);
	free(v);
	ck_assert_int_eq(events_count(t.client, "link.completed"), 1);
	/* the link is the client's, no exchange needed */
	r = key_call(&t, "GET", harness_fmt("/v1/links/%s", link), NULL);
	harness_expect(r, 200);
	ck_assert_pstr_eq(devacct_str(r, "client_user_id"), "user-h");
	ck_assert_str_eq(devacct_text(r, "scopes"), "[\"bills\"]");
	harness_resp_free(r);
	/* a finished token opens no other session: no ticket is minted for it */
	r = page_call(lt, "POST", "/v1/biller-connect/ticket", NULL);
	harness_assert_coded(r, 401, "INVALID_LINK_TOKEN");
	harness_resp_free(r);
	free(link);
	free(st);
	free(hosted);
	free(lt);
	tenant_free(&t);
}
END_TEST

/* Wrong credentials fail and may be retried; the fifth failed login ends
 * the session. Each rejected login is the spec's pre-completion
 * link.disconnected (no id; the link token, no request to link). A locked
 * account is ACCOUNT_LOCKED, no event. */
START_TEST(failed_logins)
{
	struct tenant t;
	struct harness_resp *r;
	char *lt, *st;
	const char *p[2];

	tenant_new(&dev_a, &t);
	lt = link_token(&t, "{\"client_user_id\":\"user-1\"}");
	st = session(lt);
	for (int i = 1; i <= 5; i++) {
		connect_as(st, "user_good", "wrong");
		r = current(t.client, st);
		ck_assert_pstr_eq(devacct_str(r, "status"), "failed");
		/* the fifth is shown as what ended the session */
		ck_assert_pstr_eq(devacct_str(r, "error_code"), i == 5 ? "TOO_MANY_ATTEMPTS" :
		    "INVALID_CREDENTIALS");
		ck_assert_int_eq(devacct_int(r, "attempts_remaining"), 5 - i);
		ck_assert_int_eq(devacct_bool(r, "ended"), i == 5);
		harness_resp_free(r);
	}
	r = page_call(st, "POST", "/v1/link-sessions/connect", "{\"biller_id\":\""
	    SANDBOX_BILLER "\",\"username\":\"user_good\",\"password\":\"pass_good\"}");
	harness_assert_coded(r, 409, "SESSION_ENDED");
	harness_resp_free(r);
	ck_assert_int_eq(events_count(t.client, "link.completed"), 0);
	p[0] = t.client;
	p[1] = lt;
	ck_assert_int_eq(sql_int("SELECT count(*) FROM events WHERE client_id = $1"
	    " AND type = 'link.disconnected' AND data->'object'->>'id' = ''"
	    " AND data->>'link_id' = '' AND data->'object'->>'object' = 'link'"
	    " AND data->'object'->>'link_token_id' = $2"
	    " AND data->'object'->'link_request_id' = 'null'::jsonb"
	    " AND data->'object'->>'reason' = 'credentials_rejected'"
	    " AND data->'object'->>'credential_rejection_reason' = 'INVALID_CREDENTIALS'"
	    " AND data->'object'->>'user_id' = 'user-1'"
	    " AND data->'object'->>'biller_id' = '" SANDBOX_BILLER "'", 2, p), 5);
	ck_assert_int_eq(events_count(t.client, "link.disconnected"), 5);
	free(st);

	st = session(lt);
	connect_as(st, "user_locked", "pass_good");
	r = current(t.client, st);
	ck_assert_pstr_eq(devacct_str(r, "status"), "failed");
	ck_assert_pstr_eq(devacct_str(r, "error_code"), "ACCOUNT_LOCKED");
	harness_resp_free(r);
	/* a retry with the right account connects */
	connect_as(st, "user_good", "pass_good");
	r = current(t.client, st);
	ck_assert_pstr_eq(devacct_str(r, "status"), "connected");
	harness_resp_free(r);
	ck_assert_int_eq(events_count(t.client, "link.disconnected"), 5);
	free(st);
	free(lt);
	tenant_free(&t);
}
END_TEST

/*
 * Repair link in update mode as the end user user with the fixture
 * username (update token with body's extra members, session, login, the
 * embedded flow's exchange): the session says connected in update mode and
 * the exchange names the same link.
 */
static void
repair(const struct tenant *t, const char *link, const char *user, const char *username,
    const char *extra)
{
	struct harness_resp *r;
	char *lt, *st, *pub;

	lt = link_token(t, harness_fmt("{\"client_user_id\":\"%s\",\"update\":"
	    "{\"link_id\":\"%s\"%s}}", user, link, extra));
	st = session(lt);
	connect_as(st, username, "pass_good");
	r = current(t->client, st);
	ck_assert_pstr_eq(devacct_str(r, "status"), "connected");
	ck_assert_pstr_eq(devacct_str(r, "mode"), "update");
	pub = strdup(devacct_str(r, "public_token"));
	harness_resp_free(r);
	r = key_call(t, "POST", harness_fmt("/v1/link-tokens/%s/exchange", pub), NULL);
	harness_expect(r, 200);
	ck_assert_pstr_eq(devacct_str(r, "link_id"), link);
	harness_resp_free(r);
	free(pub);
	free(st);
	free(lt);
}

/* Update mode repairs a DISCONNECTED link in place: the same link id,
 * ACTIVE again, no link.completed. */
START_TEST(update_mode_repairs)
{
	struct tenant t;
	struct harness_resp *r;
	const char *idem[] = { harness_idem_header(), NULL };
	char *link;

	tenant_new(&dev_a, &t);
	r = devacct_call("POST", "sandbox", "/v1/sandbox/account-links", devacct_bearer(t.key),
	    "{\"client_user_id\":\"user-u\",\"username\":\"user_good\"}", idem);
	harness_expect(r, 201);
	link = strdup(devacct_str(r, "link_id"));
	harness_resp_free(r);
	r = key_call(&t, "POST", harness_fmt("/v1/sandbox/links/%s/reset-login", link), NULL);
	ck_assert_msg(r->status < 300, "%ld %s", r->status, r->body);
	harness_resp_free(r);
	r = key_call(&t, "GET", harness_fmt("/v1/links/%s", link), NULL);
	harness_expect(r, 200);
	ck_assert_pstr_eq(devacct_str(r, "status"), "DISCONNECTED");
	harness_resp_free(r);

	repair(&t, link, "user-u", "user_good", ",\"reason\":\"credentials_invalid\"");
	r = key_call(&t, "GET", harness_fmt("/v1/links/%s", link), NULL);
	harness_expect(r, 200);
	ck_assert_pstr_eq(devacct_str(r, "status"), "ACTIVE");
	harness_resp_free(r);
	ck_assert_int_eq(events_count(t.client, "link.completed"), 0);
	free(link);
	tenant_free(&t);
}
END_TEST

/*
 * The fixtures that fail on the next refresh (user_expiring: expired,
 * user_rejects_later: credentials_rejected) stop failing once update mode
 * repairs the link: the repair's retrieval and the next refresh keep it
 * ACTIVE, and link.disconnected fired once.
 */
static const char *const later_fixtures[] = { "user_expiring", "user_rejects_later" };

START_TEST(update_mode_repairs_fixture)
{
	const char *user = later_fixtures[_i];
	const char *idem[] = { harness_idem_header(), NULL };
	struct tenant t;
	struct harness_resp *r;
	char *link;

	tenant_new(&dev_a, &t);
	r = devacct_call("POST", "sandbox", "/v1/sandbox/account-links", devacct_bearer(t.key),
	    harness_fmt("{\"client_user_id\":\"user-f\",\"username\":\"%s\"}", user), idem);
	harness_expect(r, 201);
	link = strdup(devacct_str(r, "link_id"));
	harness_resp_free(r);
	drive_connect(t.client);
	for (int round = 0; round < 2; round++) {
		r = key_call(&t, "POST", harness_fmt("/v1/sandbox/links/%s/advance", link), NULL);
		harness_expect(r, 202);
		harness_resp_free(r);
		drive_connect(t.client);
		r = key_call(&t, "GET", harness_fmt("/v1/links/%s", link), NULL);
		harness_expect(r, 200);
		/* broken by the first refresh, repaired below, fine after */
		ck_assert_pstr_eq(devacct_str(r, "status"), round == 0 ? "DISCONNECTED" : "ACTIVE");
		harness_resp_free(r);
		if (round > 0)
			break;
		repair(&t, link, "user-f", user, "");
		drive_connect(t.client);	/* the repair's retrieval */
		r = key_call(&t, "GET", harness_fmt("/v1/links/%s", link), NULL);
		harness_expect(r, 200);
		ck_assert_pstr_eq(devacct_str(r, "status"), "ACTIVE");
		ck_assert_pstr_eq(devacct_str(r, "sync.status"), "ok");
		harness_resp_free(r);
	}
	ck_assert_int_eq(events_count(t.client, "link.disconnected"), 1);
	free(link);
	tenant_free(&t);
}
END_TEST

/* ------------------------------------------------------------------ */

/* bdsctl jobs wipes the sealed secrets of sessions that expired unfinished,
 * and nothing of a live session. */
START_TEST(sweep_expired_sessions)
{
	const char *jobs[] = { "jobs", NULL };
	struct tenant t;
	char *lt, *st_old, *st_live;
	const char *p[1];

	tenant_new(&dev_a, &t);
	lt = link_token(&t, "{\"client_user_id\":\"user-sweep\"}");
	st_old = session(lt);
	st_live = session(lt);
	p[0] = t.client;
	/* two sessions holding sealed bytes; the older one idle past its end,
	 * long enough that its public token is dead too */
	PQclear(sql("UPDATE link_sessions SET credentials = '\\x01', mfa_answer = '\\x02',"
	    " public_token = '\\x03' WHERE client_id = $1", 1, p));
	PQclear(sql("UPDATE link_sessions SET expires_at = now() - interval '31 minutes'"
	    " WHERE client_id = $1 AND created_at = (SELECT min(created_at) FROM link_sessions"
	    " WHERE client_id = $1)", 1, p));
	ck_assert_int_eq(harness_bdsctl(jobs), 0);
	ck_assert_int_eq(sql_int("SELECT count(*) FROM link_sessions WHERE client_id = $1"
	    " AND credentials IS NULL AND mfa_answer IS NULL AND public_token IS NULL", 1, p), 1);
	ck_assert_int_eq(sql_int("SELECT count(*) FROM link_sessions WHERE client_id = $1"
	    " AND credentials IS NOT NULL AND mfa_answer IS NOT NULL"
	    " AND public_token IS NOT NULL AND expires_at > now()", 1, p), 1);
	free(st_old);
	free(st_live);
	free(lt);
	tenant_free(&t);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Bounded guessing                                                    */

/* A counter of the simulator's power biller, which must be readable. */
static long long
power_stat(const char *name)
{
	long long n = sim_counter("power", name);

	ck_assert_msg(n >= 0, "the simulator's stat %s", name);
	return n;
}

/* The session's state: failed and ended with code. */
static void
assert_ended(const char *client, const char *st, const char *code)
{
	struct harness_resp *r = current(client, st);

	ck_assert_pstr_eq(devacct_str(r, "status"), "failed");
	ck_assert_pstr_eq(devacct_str(r, "error_code"), code);
	ck_assert_int_eq(devacct_bool(r, "ended"), 1);
	ck_assert_int_eq(devacct_int(r, "attempts_remaining"), 0);
	harness_resp_free(r);
}

/*
 * Per link token: ten failed logins or wrong answers across its sessions
 * spend it. The tenth ends its session (TOO_MANY_ATTEMPTS); in a session
 * still open, an eleventh wrong answer and then the right one are 429
 * TOO_MANY_ATTEMPTS; no ticket is minted and no session opened any more,
 * not even with a ticket minted before; nothing is linked.
 */
START_TEST(token_attempts_spent)
{
	struct tenant t;
	struct harness_resp *r;
	char *lt, *spare, *st[3];
	const char *p[1];

	tenant_new(&dev_a, &t);
	lt = link_token(&t, "{\"client_user_id\":\"user-g\"}");
	spare = ticket(lt);
	for (int i = 0; i < 3; i++) {
		st[i] = session(lt);
		connect_as(st[i], "user_mfa", "pass_good");
		assert_state(t.client, st[i], "mfa_required", NULL);
	}
	/* five wrong answers end the first session, four more go to the second */
	for (int i = 0; i < 9; i++) {
		answer_mfa(st[i / 5], "0000", 202, NULL);
		/* the answer that ends the session shows why it ended */
		assert_state(t.client, st[i / 5], i == 4 ? "failed" : "mfa_required",
		    i == 4 ? "TOO_MANY_ATTEMPTS" : "MFA_FAILED");
	}
	/* the second session has four of its own left, the token one */
	r = current(t.client, st[1]);
	ck_assert_int_eq(devacct_int(r, "attempts_remaining"), 1);
	harness_resp_free(r);
	answer_mfa(st[1], "0000", 202, NULL);
	assert_ended(t.client, st[1], "TOO_MANY_ATTEMPTS");

	answer_mfa(st[2], "0000", 429, "TOO_MANY_ATTEMPTS");
	answer_mfa(st[2], "1234", 429, "TOO_MANY_ATTEMPTS");
	connect_to(st[2], SANDBOX_BILLER, "user_good", "pass_good", 429, "TOO_MANY_ATTEMPTS");
	assert_state(t.client, st[2], "mfa_required", NULL);
	r = page_call(lt, "POST", "/v1/biller-connect/ticket", NULL);
	harness_assert_coded(r, 429, "TOO_MANY_ATTEMPTS");
	harness_resp_free(r);
	r = page_call(NULL, "POST", "/v1/link-sessions", harness_fmt("{\"ticket\":\"%s\"}", spare));
	harness_assert_coded(r, 429, "TOO_MANY_ATTEMPTS");
	harness_resp_free(r);
	p[0] = t.client;
	ck_assert_int_eq(sql_int("SELECT count(*) FROM links WHERE client_id = $1", 1, p), 0);
	ck_assert_int_eq(events_count(t.client, "link.completed"), 0);
	for (int i = 0; i < 3; i++)
		free(st[i]);
	free(spare);
	free(lt);
	tenant_free(&t);
}
END_TEST

/*
 * The connect job checks again before any login: a right answer taken
 * while the token still had one failure to go does not connect once the
 * token is spent (here by ten failures counted meanwhile, as other
 * sessions' jobs would).
 */
START_TEST(token_spent_job_refuses)
{
	struct tenant t;
	char *lt, *st;
	const char *p[1];

	tenant_new(&dev_a, &t);
	lt = link_token(&t, "{\"client_user_id\":\"user-j\"}");
	st = session(lt);
	connect_as(st, "user_mfa", "pass_good");
	assert_state(t.client, st, "mfa_required", NULL);
	ck_assert_msg(harness_jobs_stop() == 0, "%s", harness_error());
	answer_mfa(st, "1234", 202, NULL);
	p[0] = lt;
	PQclear(sql("UPDATE link_tokens SET failed_attempts = 10 WHERE id = $1", 1, p));
	ck_assert_msg(harness_jobs_start() == 0, "%s", harness_error());
	assert_ended(t.client, st, "TOO_MANY_ATTEMPTS");
	p[0] = t.client;
	ck_assert_int_eq(sql_int("SELECT count(*) FROM links WHERE client_id = $1", 1, p), 0);
	free(st);
	free(lt);
	tenant_free(&t);
}
END_TEST

/*
 * Per (client, biller, username): twenty failed logins in 24 hours, across
 * two link tokens, spend the username at that biller for every token of
 * the client, however it is typed (case, spaces), before any login: 429
 * TOO_MANY_ATTEMPTS with Retry-After, even with the right password.
 * Another username is not affected, nor this one once the failures are
 * older than the window.
 */
START_TEST(username_attempts_window)
{
	struct tenant t;
	struct harness_resp *r;
	char *lt, *st = NULL;
	const char *user = "cust00011", *pass = "pw-cust00011", *p[1];
	long long logins;

	tenant_new(&dev_a, &t);
	for (int k = 0; k < 2; k++) {
		lt = link_token(&t, "{\"client_user_id\":\"user-w\"}");
		for (int i = 0; i < 10; i++) {
			if (i % 5 == 0) {
				free(st);
				st = session(lt);
			}
			connect_to(st, POWER, k == 0 ? user : " CUST00011 ", "wrong", 202, NULL);
			/* each session's fifth failure ends it */
			assert_state(t.client, st, "failed", i % 5 == 4 ? "TOO_MANY_ATTEMPTS" :
			    "INVALID_CREDENTIALS");
		}
		free(lt);
	}
	free(st);
	lt = link_token(&t, "{\"client_user_id\":\"user-w\"}");
	st = session(lt);
	logins = power_stat("requests.session");
	r = page_call(st, "POST", "/v1/link-sessions/connect", harness_fmt("{\"biller_id\":\""
	    POWER "\",\"username\":\"%s\",\"password\":\"%s\"}", user, pass));
	harness_assert_coded(r, 429, "TOO_MANY_ATTEMPTS");
	ck_assert_msg(atol(harness_header(r, "Retry-After")) > 86000, "%s",
	    harness_header(r, "Retry-After"));
	harness_resp_free(r);
	ck_assert_int_eq(power_stat("requests.session"), logins);
	connect_to(st, POWER, "cust00012", "pw-cust00012", 202, NULL);
	assert_state(t.client, st, "connected", NULL);
	free(st);

	p[0] = t.client;
	PQclear(sql("UPDATE connect_failures SET at = at - interval '24 hours 1 minute'"
	    " WHERE client_id = $1", 1, p));
	st = session(lt);
	connect_to(st, POWER, user, pass, 202, NULL);
	assert_state(t.client, st, "connected", NULL);
	free(st);
	free(lt);
	tenant_free(&t);
}
END_TEST

/*
 * At most one fresh challenge per session: after the first wrong answer the
 * job logs in once more for a new challenge; the next wrong answers go to
 * that same challenge (the biller counts them), and the right one then
 * connects with it. The biller saw two logins and two challenges for
 * four answers.
 */
START_TEST(one_fresh_challenge)
{
	struct tenant t;
	char *lt, *st;
	const char *user = "cust00013";
	long long logins, challenges;

	tenant_new(&dev_a, &t);
	ck_assert_int_eq(sim_knobs("power", user, "{\"mfa\":\"135790\"}"), 0);
	logins = power_stat("requests.session");
	challenges = power_stat("mfa_challenges");
	lt = link_token(&t, "{\"client_user_id\":\"user-c\"}");
	st = session(lt);
	connect_to(st, POWER, user, "pw-cust00013", 202, NULL);
	assert_state(t.client, st, "mfa_required", NULL);
	for (int i = 0; i < 3; i++) {
		answer_mfa(st, "000000", 202, NULL);
		assert_state(t.client, st, "mfa_required", "MFA_FAILED");
		ck_assert_int_eq(power_stat("requests.session"), logins + 2);
		ck_assert_int_eq(power_stat("mfa_challenges"), challenges + 2);
	}
	/* the right answer goes to the second challenge too (the first
	 * retrieval logs in once more, with the device token: no challenge) */
	answer_mfa(st, "135790", 202, NULL);
	assert_state(t.client, st, "connected", NULL);
	ck_assert_int_eq(power_stat("mfa_challenges"), challenges + 2);
	free(st);
	free(lt);
	tenant_free(&t);
}
END_TEST

/*
 * An update session whose link was revoked after its token was made ends
 * failed (LINK_REVOKED, no more connects) before any login at the biller.
 */
START_TEST(update_revoked_link)
{
	struct tenant t;
	struct harness_resp *r;
	char *lt, *st, *link;
	const char *user = "cust00014", *pass = "pw-cust00014";
	long long logins;

	tenant_new(&dev_a, &t);
	lt = link_token(&t, "{\"client_user_id\":\"user-r\",\"hosted\":true}");
	st = session(lt);
	connect_to(st, POWER, user, pass, 202, NULL);
	r = current(t.client, st);
	ck_assert_pstr_eq(devacct_str(r, "status"), "connected");
	link = strdup(devacct_str(r, "link_id"));
	harness_resp_free(r);
	free(st);
	free(lt);

	lt = link_token(&t, harness_fmt("{\"client_user_id\":\"user-r\",\"update\":"
	    "{\"link_id\":\"%s\"}}", link));
	r = key_call(&t, "DELETE", harness_fmt("/v1/links/%s", link), NULL);
	harness_expect(r, 200);
	harness_resp_free(r);
	st = session(lt);
	logins = power_stat("requests.session");
	connect_to(st, POWER, user, pass, 202, NULL);
	assert_ended(t.client, st, "LINK_REVOKED");
	ck_assert_int_eq(power_stat("requests.session"), logins);
	r = key_call(&t, "GET", harness_fmt("/v1/links/%s", link), NULL);
	harness_expect(r, 200);
	ck_assert_pstr_eq(devacct_str(r, "status"), "REVOKED");
	harness_resp_free(r);
	free(link);
	free(st);
	free(lt);
	tenant_free(&t);
}
END_TEST

/*
 * Update mode with another biller login than the link's is refused before
 * any login (INVALID_UPDATED_USERNAME, a failed login of the session); the
 * link stays as it was; its own username then repairs it.
 */
START_TEST(update_other_username)
{
	struct tenant t;
	struct harness_resp *r;
	const char *idem[] = { harness_idem_header(), NULL };
	char *lt, *st, *link;
	const char *p[1];

	tenant_new(&dev_a, &t);
	r = devacct_call("POST", "sandbox", "/v1/sandbox/account-links", devacct_bearer(t.key),
	    "{\"client_user_id\":\"user-o\",\"username\":\"user_good\"}", idem);
	harness_expect(r, 201);
	link = strdup(devacct_str(r, "link_id"));
	harness_resp_free(r);
	drive_connect(t.client);	/* its first retrieval: one account */
	r = key_call(&t, "POST", harness_fmt("/v1/sandbox/links/%s/reset-login", link), NULL);
	ck_assert_msg(r->status < 300, "%ld %s", r->status, r->body);
	harness_resp_free(r);

	lt = link_token(&t, harness_fmt("{\"client_user_id\":\"user-o\",\"update\":"
	    "{\"link_id\":\"%s\"}}", link));
	st = session(lt);
	connect_as(st, "user_multi", "pass_good");
	r = current(t.client, st);
	ck_assert_pstr_eq(devacct_str(r, "status"), "failed");
	ck_assert_pstr_eq(devacct_str(r, "error_code"), "INVALID_UPDATED_USERNAME");
	ck_assert_int_eq(devacct_bool(r, "ended"), 0);
	ck_assert_int_eq(devacct_int(r, "attempts_remaining"), 4);
	harness_resp_free(r);
	r = key_call(&t, "GET", harness_fmt("/v1/links/%s", link), NULL);
	harness_expect(r, 200);
	ck_assert_pstr_eq(devacct_str(r, "status"), "DISCONNECTED");
	ck_assert_int_eq(json_object_array_length(devacct_json(r, "accounts")), 1);
	harness_resp_free(r);
	p[0] = link;
	ck_assert_int_eq(sql_int("SELECT repairs FROM links WHERE id = $1", 1, p), 0);

	connect_as(st, "user_good", "pass_good");
	assert_state(t.client, st, "connected", NULL);
	r = key_call(&t, "GET", harness_fmt("/v1/links/%s", link), NULL);
	harness_expect(r, 200);
	ck_assert_pstr_eq(devacct_str(r, "status"), "ACTIVE");
	harness_resp_free(r);
	ck_assert_int_eq(events_count(t.client, "link.completed"), 0);
	free(link);
	free(st);
	free(lt);
	tenant_free(&t);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Environments: which connector links where                           */

/* The gate's refusal: 400 VALIDATION_ERROR naming field, with errors[].code
 * biller_not_in_environment. Frees r. */
static void
assert_not_in_env(struct harness_resp *r, const char *field)
{
	harness_assert_coded(r, 400, "VALIDATION_ERROR");
	ck_assert_pstr_eq(devacct_str(r, "errors.0.field"), field);
	ck_assert_pstr_eq(devacct_str(r, "errors.0.code"), "biller_not_in_environment");
	harness_resp_free(r);
}

/* 1 when the picker of session st (on host) lists biller id for term. */
static int
picker_lists(const char *host, const char *st, const char *term, const char *id)
{
	struct harness_resp *r = devacct_call("GET", host, harness_fmt(
	    "/v1/link-sessions/billers?search_term=%s&limit=100", term), devacct_bearer(st),
	    NULL, NULL);
	int found;

	harness_expect(r, 200);
	ck_assert_ptr_nonnull(devacct_json(r, "data"));
	found = strstr(r->body, id) != NULL;
	harness_resp_free(r);
	return found;
}

/* A sandbox key never reaches a portal biller: refused at link-token
 * creation, absent from the picker, refused at connect (nothing queued for
 * bds-jobs), and a public token whose link names one is not exchanged
 * (the catalog changed after the login: made here by moving the link). */
START_TEST(env_sandbox_key_portal_biller)
{
	struct tenant t;
	struct harness_resp *r;
	char *lt, *st, *pub;
	const char *p[2];

	tenant_new(&dev_a, &t);
	assert_not_in_env(key_call(&t, "POST", "/v1/link-tokens", "{\"client_user_id\":"
	    "\"u-env\",\"biller_id\":\"" PORTAL_BILLER "\"}"), "biller_id");

	lt = link_token(&t, "{\"client_user_id\":\"u-env\"}");
	st = session(lt);
	ck_assert(picker_lists("sandbox", st, "sandbox", SANDBOX_BILLER));
	ck_assert(!picker_lists("sandbox", st, "envgate", PORTAL_BILLER));
	assert_not_in_env(page_call(st, "POST", "/v1/link-sessions/connect",
	    "{\"biller_id\":\"" PORTAL_BILLER "\",\"username\":\"someone\","
	    "\"password\":\"their-real-password\"}"), "biller_id");
	p[0] = t.client;
	ck_assert_int_eq(sql_int("SELECT count(*) FROM jobs WHERE kind = 'connect'"
	    " AND client_id = $1", 1, p), 0);
	free(st);
	free(lt);

	pub = sandbox_public_token(&t, "u-env-x", &lt);
	PQclear(sql("UPDATE links SET biller_id = '" PORTAL_BILLER "' WHERE client_id = $1",
	    1, p));
	r = key_call(&t, "POST", harness_fmt("/v1/link-tokens/%s/exchange", lt),
	    harness_fmt("{\"public_token\":\"%s\"}", pub));
	harness_assert_coded(r, 400, "INVALID_PUBLIC_TOKEN");
	ck_assert_pstr_eq(devacct_str(r, "errors.0.code"), "biller_not_in_environment");
	harness_resp_free(r);
	/* the refusal left the token unused: back on its sandbox biller it
	 * exchanges */
	PQclear(sql("UPDATE links SET biller_id = '" SANDBOX_BILLER "' WHERE client_id = $1",
	    1, p));
	r = key_call(&t, "POST", harness_fmt("/v1/link-tokens/%s/exchange", lt),
	    harness_fmt("{\"public_token\":\"%s\"}", pub));
	harness_expect(r, 200);
	harness_resp_free(r);
	free(pub);
	free(lt);
	tenant_free(&t);
}
END_TEST

/* The reverse: a development key never links the sandbox fixtures. Refused
 * at link-token creation, absent from the picker, refused at connect, and
 * a development public token whose link names the sandbox biller (moved
 * there from a sandbox flow) is not exchanged. */
START_TEST(env_live_key_sandbox_biller)
{
	struct tenant t;
	struct harness_resp *r;
	char *dkey, *lt, *tk, *st, *pub;
	const char *p[2];

	tenant_new(&dev_a, &t);
	dkey = devacct_key_new(&dev_a, t.client, "development");
	assert_not_in_env(devacct_call("POST", "api", "/v1/link-tokens", devacct_bearer(dkey),
	    "{\"client_user_id\":\"u-live\",\"biller_id\":\"" SANDBOX_BILLER "\"}", NULL),
	    "biller_id");

	r = devacct_call("POST", "api", "/v1/link-tokens", devacct_bearer(dkey),
	    "{\"client_user_id\":\"u-live\"}", NULL);
	harness_expect(r, 201);
	lt = strdup(devacct_str(r, "link_token"));
	harness_resp_free(r);
	r = devacct_call("POST", "api", "/v1/biller-connect/ticket", devacct_bearer(lt), NULL,
	    NULL);
	harness_expect(r, 201);
	tk = strdup(devacct_str(r, "ticket"));
	harness_resp_free(r);
	r = devacct_call("POST", "api", "/v1/link-sessions", NULL,
	    harness_fmt("{\"ticket\":\"%s\"}", tk), NULL);
	harness_expect(r, 201);
	st = strdup(devacct_str(r, "session_token"));
	harness_resp_free(r);
	ck_assert(picker_lists("api", st, "envgate", PORTAL_BILLER));
	ck_assert(!picker_lists("api", st, "sandbox", SANDBOX_BILLER));
	assert_not_in_env(devacct_call("POST", "api", "/v1/link-sessions/connect",
	    devacct_bearer(st), "{\"biller_id\":\"" SANDBOX_BILLER "\",\"username\":"
	    "\"user_good\",\"password\":\"pass_good\"}", NULL), "biller_id");
	p[0] = t.client;
	ck_assert_int_eq(sql_int("SELECT count(*) FROM jobs WHERE kind = 'connect'"
	    " AND client_id = $1", 1, p), 0);
	free(st);
	free(tk);
	free(lt);

	/* a public token and its link moved into development */
	pub = sandbox_public_token(&t, "u-live-x", &lt);
	PQclear(sql("UPDATE public_tokens SET environment = 'development' WHERE client_id = $1",
	    1, p));
	PQclear(sql("UPDATE links SET environment = 'development' WHERE client_id = $1", 1, p));
	r = devacct_call("POST", "api", harness_fmt("/v1/link-tokens/%s/exchange", lt),
	    devacct_bearer(dkey), harness_fmt("{\"public_token\":\"%s\"}", pub), NULL);
	harness_assert_coded(r, 400, "INVALID_PUBLIC_TOKEN");
	ck_assert_pstr_eq(devacct_str(r, "errors.0.code"), "biller_not_in_environment");
	harness_resp_free(r);
	free(pub);
	free(lt);
	free(dkey);
	tenant_free(&t);
}
END_TEST


/* ------------------------------------------------------------------ */
/* What the connect page shows                                         */

/* A session of a new link token of t (body): the 201 answer (caller frees). */
static struct harness_resp *
session_open(const struct tenant *t, const char *body)
{
	char *lt = link_token(t, body), *tk = ticket(lt);
	struct harness_resp *r = page_call(NULL, "POST", "/v1/link-sessions",
	    harness_fmt("{\"ticket\":\"%s\"}", tk));

	harness_expect(r, 201);
	free(tk);
	free(lt);
	return r;
}

/* The session answers the environment, the client's name and domain (its
 * first redirect URI's host, else null), the privacy notice's path and a
 * pinned biller as a picker item. */
START_TEST(session_page_fields)
{
	struct tenant t;
	struct harness_resp *r;
	char *client, *key;

	tenant_new(&dev_a, &t);
	r = session_open(&t, "{\"client_user_id\":\"user-p\",\"biller_id\":\"" SANDBOX_BILLER
	    "\"}");
	ck_assert_pstr_eq(devacct_str(r, "environment"), "sandbox");
	ck_assert_pstr_eq(devacct_str(r, "client.domain"), "app.example");
	ck_assert_ptr_nonnull(devacct_str(r, "client.name"));
	ck_assert_pstr_eq(devacct_str(r, "privacy_url"), "/legal/end-user-privacy");
	ck_assert_pstr_eq(devacct_str(r, "biller.id"), SANDBOX_BILLER);
	ck_assert_pstr_eq(devacct_str(r, "biller.object"), "biller");
	ck_assert_pstr_eq(devacct_str(r, "biller.login_url"),
	    "https://sandbox-power.example/login");
	ck_assert_pstr_eq(devacct_str(r, "biller.website"), "https://sandbox-power.example");
	ck_assert_ptr_nonnull(devacct_json(r, "biller.consent_scopes"));
	ck_assert_int_eq(devacct_bool(r, "biller.capabilities.mfa"), 1);
	ck_assert_msg(json_object_object_get_ex(json_object_object_get(r->json, "biller"),
	    "logo_src", NULL), "%s", r->body);
	/* the catalog entity as GET /v1/billers/{id} has it */
	ck_assert_pstr_eq(devacct_str(r, "biller.country"), "US");
	harness_resp_free(r);

	/* a client with neither redirect URIs nor origins: no domain */
	client = devacct_client_new(&dev_b);
	key = devacct_key_new(&dev_b, client, "sandbox");
	{
		struct tenant bare = { client, key };

		r = session_open(&bare, "{\"client_user_id\":\"user-p\"}");
		ck_assert_msg(json_object_object_get_ex(json_object_object_get(r->json, "client"),
		    "domain", NULL), "%s", r->body);
		ck_assert_ptr_null(devacct_json(r, "client.domain"));
		ck_assert_ptr_null(devacct_json(r, "biller"));
		harness_resp_free(r);
	}
	free(client);
	free(key);
	tenant_free(&t);
}
END_TEST

/* The ids of a picker answer's data, comma-joined (malloc'ed). */
static char *
picker_ids(const struct harness_resp *r)
{
	struct json_object *d = devacct_json(r, "data");
	size_t n = d != NULL ? json_object_array_length(d) : 0, len = 1;
	char *out = calloc(1, 1);

	for (size_t i = 0; i < n; i++) {
		const char *id = json_object_get_string(json_object_object_get(
		    json_object_array_get_idx(d, i), "id"));

		len += strlen(id) + 1;
		out = realloc(out, len);
		if (i > 0)
			strcat(out, ",");
		strcat(out, id);
	}
	return out;
}

#define SANDBOX_WATER		"blr_01900000-0000-7000-8000-000000000002"
#define SANDBOX_GAS		"blr_01900000-0000-7000-8000-000000000003"
#define SANDBOX_MOBILE		"blr_01900000-0000-7000-8000-000000000004"
#define SANDBOX_INSURANCE	"blr_01900000-0000-7000-8000-000000000006"

/* Whether the picker (no term) lists Sandbox Water Works before Sandbox Gas
 * Co.; both must be listed. */
static int
water_first(const char *st)
{
	struct harness_resp *r = page_call(st, "GET", "/v1/link-sessions/billers?limit=100", NULL);
	char *ids, *water, *gas;
	int first;

	harness_expect(r, 200);
	ids = picker_ids(r);
	harness_resp_free(r);
	water = strstr(ids, SANDBOX_WATER);
	gas = strstr(ids, SANDBOX_GAS);
	ck_assert_msg(water != NULL && gas != NULL, "%s", ids);
	first = water < gas;
	free(ids);
	return first;
}

/* The picker: total_count every biller the environment links, match_count
 * the matches; no term: the most linked first, then the sandbox billers,
 * then name; a term: only real matches, nothing for a term that matches
 * no word, domain or near spelling (not "as" inside "Gas"). */
START_TEST(picker_order_and_counts)
{
	struct tenant t;
	struct harness_resp *r;
	char *st, *ids, *lt;
	long linkable, before;
	const char *p[1] = { SANDBOX_INSURANCE }, *q[2];

	tenant_new(&dev_a, &t);
	lt = link_token(&t, "{\"client_user_id\":\"user-k\"}");
	st = session(lt);
	linkable = sql_int("SELECT count(*) FROM billers b WHERE b.status IN ('ACTIVE',"
	    " 'DEGRADED') AND billers_linkable('sandbox', b)", 0, NULL);
	ck_assert_int_gt(linkable, 3);

	/* a link made counts for its biller in its environment */
	before = sql_int("SELECT COALESCE(sum(links), 0) FROM biller_link_counts"
	    " WHERE environment = 'sandbox' AND biller_id = $1", 1, p);
	q[0] = t.client;
	q[1] = SANDBOX_INSURANCE;
	PQclear(sql("INSERT INTO links (client_id, id, environment, client_user_id, biller_id,"
	    " status, disconnect_reason) VALUES ($1, 'link_' || gen_random_uuid(), 'sandbox',"
	    " 'u', $2, 'REVOKED', 'revoked')", 2, q));
	ck_assert_int_eq(sql_int("SELECT links FROM biller_link_counts"
	    " WHERE environment = 'sandbox' AND biller_id = $1", 1, p), before + 1);
	/* ...and the most linked comes first */
	PQclear(sql("UPDATE biller_link_counts SET links = (SELECT max(links) + 1000"
	    " FROM biller_link_counts WHERE environment = 'sandbox')"
	    " WHERE environment = 'sandbox' AND biller_id = $1", 1, p));

	r = page_call(st, "GET", "/v1/link-sessions/billers?limit=3", NULL);
	harness_expect(r, 200);
	ck_assert_pstr_eq(devacct_str(r, "object"), "list");
	ck_assert_int_eq(devacct_int(r, "total_count"), linkable);
	ck_assert_int_eq(devacct_int(r, "match_count"), linkable);
	ck_assert_int_eq(json_object_array_length(devacct_json(r, "data")), 3);
	ck_assert_pstr_eq(devacct_str(r, "data.0.id"), SANDBOX_INSURANCE);
	ck_assert_pstr_eq(devacct_str(r, "data.0.connector"), NULL);
	ck_assert_ptr_nonnull(devacct_str(r, "data.0.login_url"));
	harness_resp_free(r);

	/* the curated order, among billers linked as often: Water before Gas */
	{
		const char *rank[] = { "billers", "set-rank", SANDBOX_WATER, "1", NULL };
		const char *unrank[] = { "billers", "set-rank", SANDBOX_WATER, "none", NULL };

		ck_assert_int_eq(water_first(st), 0);
		ck_assert_int_eq(harness_bdsctl(rank), 0);
		ck_assert_int_eq(water_first(st), 1);
		ck_assert_int_eq(harness_bdsctl(unrank), 0);
	}

	/* a word's start, a domain's start */
	r = page_call(st, "GET", "/v1/link-sessions/billers?search_term=INSUR", NULL);
	harness_expect(r, 200);
	ids = picker_ids(r);
	ck_assert_str_eq(ids, SANDBOX_INSURANCE);
	ck_assert_int_eq(devacct_int(r, "match_count"), 1);
	ck_assert_int_eq(devacct_int(r, "total_count"), linkable);
	free(ids);
	harness_resp_free(r);
	r = page_call(st, "GET", "/v1/link-sessions/billers?search_term=sandbox-mobile.ex", NULL);
	harness_expect(r, 200);
	ids = picker_ids(r);
	ck_assert_str_eq(ids, SANDBOX_MOBILE);
	free(ids);
	harness_resp_free(r);
	/* no loose partial matches: nothing, and said so */
	r = page_call(st, "GET", "/v1/link-sessions/billers?search_term=as", NULL);
	harness_expect(r, 200);
	ck_assert_int_eq(json_object_array_length(devacct_json(r, "data")), 0);
	ck_assert_int_eq(devacct_int(r, "match_count"), 0);
	ck_assert_int_eq(devacct_int(r, "total_count"), linkable);
	harness_resp_free(r);
	r = page_call(st, "GET", "/v1/link-sessions/billers?search_term=qqzzx", NULL);
	harness_expect(r, 200);
	ck_assert_int_eq(json_object_array_length(devacct_json(r, "data")), 0);
	harness_resp_free(r);
	PQclear(sql("UPDATE biller_link_counts SET links = 0 WHERE environment = 'sandbox'"
	    " AND biller_id = $1", 1, p));
	free(st);
	free(lt);
	tenant_free(&t);
}
END_TEST

/* "Resend code": a new challenge (the connect job logs in again), at most
 * three times a session; only while a challenge is shown. */
START_TEST(mfa_resend)
{
	struct tenant t;
	struct harness_resp *r;
	char *lt, *st;

	tenant_new(&dev_a, &t);
	lt = link_token(&t, "{\"client_user_id\":\"user-r\"}");
	st = session(lt);
	page_post(st, "/v1/link-sessions/mfa/resend", NULL, 409, "INVALID_SESSION_STATE");
	connect_as(st, "user_mfa", "pass_good");
	for (int i = 0; i <= 3; i++) {
		r = current(t.client, st);
		ck_assert_pstr_eq(devacct_str(r, "status"), "mfa_required");
		ck_assert_int_eq(devacct_bool(r, "mfa.can_resend"), i < 3);
		ck_assert_int_eq(devacct_int(r, "mfa.resends_remaining"), 3 - i);
		ck_assert_ptr_nonnull(devacct_str(r, "mfa.prompt"));
		harness_resp_free(r);
		if (i < 3) {
			r = page_call(st, "POST", "/v1/link-sessions/mfa/resend", "{}");
			harness_expect(r, 202);
			ck_assert_pstr_eq(devacct_str(r, "status"), "connecting");
			harness_resp_free(r);
		}
	}
	page_post(st, "/v1/link-sessions/mfa/resend", NULL, 409, "MFA_RESEND_LIMIT");
	answer_mfa(st, "1234", 202, NULL);
	assert_state(t.client, st, "connected", NULL);
	page_post(st, "/v1/link-sessions/mfa/resend", NULL, 409, "INVALID_SESSION_STATE");
	free(st);
	free(lt);
	tenant_free(&t);
}
END_TEST

/* A portal biller's resend logs in to it again: a second challenge. */
START_TEST(mfa_resend_portal)
{
	struct tenant t;
	char *lt, *st;
	const char *user = "cust00014";
	long long challenges;

	tenant_new(&dev_a, &t);
	ck_assert_int_eq(sim_knobs("power", user, "{\"mfa\":\"246810\"}"), 0);
	challenges = power_stat("mfa_challenges");
	lt = link_token(&t, "{\"client_user_id\":\"user-rp\"}");
	st = session(lt);
	connect_to(st, POWER, user, "pw-cust00014", 202, NULL);
	assert_state(t.client, st, "mfa_required", NULL);
	ck_assert_int_eq(power_stat("mfa_challenges"), challenges + 1);
	page_post(st, "/v1/link-sessions/mfa/resend", NULL, 202, NULL);
	assert_state(t.client, st, "mfa_required", NULL);
	ck_assert_int_eq(power_stat("mfa_challenges"), challenges + 2);
	answer_mfa(st, "246810", 202, NULL);
	assert_state(t.client, st, "connected", NULL);
	free(st);
	free(lt);
	tenant_free(&t);
}
END_TEST


#define LOGO_BILLER	"blr_01900000-0000-7000-8000-0000000e1060"
#define LOGO_PATH	"/logos/" LOGO_BILLER ".png"

/* A 1x1 PNG. */
static const unsigned char png_1x1[] = {
	0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48,
	0x44, 0x52, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x02, 0x00, 0x00,
	0x00, 0x90, 0x77, 0x53, 0xde, 0x00, 0x00, 0x00, 0x0c, 0x49, 0x44, 0x41, 0x54, 0x78,
	0x9c, 0x63, 0xf8, 0xcf, 0xc0, 0x00, 0x00, 0x03, 0x01, 0x01, 0x00, 0xc9, 0xfe, 0x92,
	0xef, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4e, 0x44, 0xae, 0x42, 0x60, 0x82
};

/* bdsctl billers fetch-logos LOGO_BILLER, and its job settled: the job's
 * last_error ("" when none). */
static char *
logo_fetch(void)
{
	const char *args[] = { "billers", "fetch-logos", LOGO_BILLER, NULL };
	const char *p[1] = { LOGO_BILLER };

	ck_assert_int_eq(harness_bdsctl(args), 0);
	ck_assert_msg(harness_jobs_wait_settled("billers.logo", LOGO_BILLER, WAIT_MS) == 0,
	    "bds-jobs: %s", harness_error());
	return sql_str("SELECT COALESCE(last_error, '') FROM jobs WHERE kind = 'billers.logo'"
	    " AND subject_id = $1 ORDER BY created_at DESC LIMIT 1", 1, p);
}

/* The picker's logo_src of LOGO_BILLER (malloc'ed; "" when null). */
static char *
logo_src(const char *st)
{
	struct harness_resp *r = page_call(st, "GET",
	    "/v1/link-sessions/billers?search_term=logofetch", NULL);
	char *v;

	harness_expect(r, 200);
	ck_assert_pstr_eq(devacct_str(r, "data.0.id"), LOGO_BILLER);
	v = strdup(devacct_str(r, "data.0.logo_src") ? devacct_str(r, "data.0.logo_src") : "");
	harness_resp_free(r);
	return v;
}

/*
 * Logos: the catalog's logo_url is fetched by bds-jobs and served by the
 * link host (type from the content, nosniff, its own CSP, a long cache);
 * what is not an image of the four types, or is over the cap, is not
 * stored (the stored one stays); the sandbox billers' logos ship with the
 * catalog.
 */
START_TEST(picker_logos)
{
	struct tenant t;
	struct harness_resp *r;
	struct receiver *rc = receiver_start(NULL);
	char url[256], *lt, *st, *v, *big;
	const char *p[2];

	ck_assert_msg(rc != NULL, "%s", receiver_error());
	tenant_new(&dev_a, &t);
	p[0] = receiver_url(rc, "/logo.png", url, sizeof(url));
	PQclear(sql("INSERT INTO billers (id, name, type, country, connector, logo_url,"
	    " connectivity_types, search_text) VALUES ('" LOGO_BILLER "', 'Logofetch Utility',"
	    " 'other', 'US', 'sandbox', $1, '{credentials}', billers_fold('Logofetch Utility'))"
	    " ON CONFLICT (id) DO UPDATE SET logo_url = $1", 1, p));
	PQclear(sql("DELETE FROM biller_logos WHERE biller_id = '" LOGO_BILLER "'", 0, NULL));
	lt = link_token(&t, "{\"client_user_id\":\"user-l\"}");
	st = session(lt);
	v = logo_src(st);
	ck_assert_str_eq(v, "");	/* none yet: the page shows a monogram */
	free(v);

	receiver_set_body(rc, "text/html", png_1x1, sizeof(png_1x1));
	v = logo_fetch();
	ck_assert_str_eq(v, "");
	free(v);
	ck_assert_uint_ge(receiver_count(rc), 1);
	v = logo_src(st);
	ck_assert_msg(strncmp(v, LOGO_PATH "?v=", strlen(LOGO_PATH) + 3) == 0, "%s", v);
	r = harness_get("link", v);
	free(v);
	ck_assert_int_eq(r->status, 200);
	ck_assert_uint_eq(r->body_len, sizeof(png_1x1));
	ck_assert_int_eq(memcmp(r->body, png_1x1, sizeof(png_1x1)), 0);
	ck_assert_pstr_eq(harness_header(r, "Content-Type"), "image/png");
	ck_assert_pstr_eq(harness_header(r, "X-Content-Type-Options"), "nosniff");
	ck_assert_ptr_nonnull(strstr(harness_header(r, "Content-Security-Policy"),
	    "default-src 'none'"));
	ck_assert_ptr_nonnull(strstr(harness_header(r, "Cache-Control"), "max-age=31536000"));
	harness_resp_free(r);

	/* a page that says it is a PNG is not one: refused, the logo stays */
	receiver_set_body(rc, "image/png", "<html><script>alert(1)</script></html>", 38);
	v = logo_fetch();
	ck_assert_msg(strstr(v, "not a PNG") != NULL, "%s", v);
	free(v);
	/* nor an SVG that scripts */
	receiver_set_body(rc, "image/svg+xml", "<svg xmlns=\"http://www.w3.org/2000/svg\">"
	    "<script>alert(1)</script></svg>", 71);
	v = logo_fetch();
	ck_assert_msg(strstr(v, "SVG with scripts") != NULL, "%s", v);
	free(v);
	/* nor one over the cap */
	big = calloc(1, 300 * 1024);
	memcpy(big, png_1x1, sizeof(png_1x1));
	receiver_set_body(rc, "image/png", big, 300 * 1024);
	free(big);
	v = logo_fetch();
	ck_assert_msg(strstr(v, "size cap") != NULL, "%s", v);
	free(v);
	r = harness_get("link", LOGO_PATH);
	ck_assert_int_eq(r->status, 200);
	ck_assert_uint_eq(r->body_len, sizeof(png_1x1));
	harness_resp_free(r);

	/* the sandbox billers' shipped logos */
	r = page_call(st, "GET", "/v1/link-sessions/billers?search_term=sandbox%20power", NULL);
	harness_expect(r, 200);
	ck_assert_pstr_eq(devacct_str(r, "data.0.id"), SANDBOX_BILLER);
	v = strdup(devacct_str(r, "data.0.logo_src"));
	harness_resp_free(r);
	ck_assert_msg(strncmp(v, "/logos/" SANDBOX_BILLER ".svg?v=",
	    strlen("/logos/" SANDBOX_BILLER ".svg?v=")) == 0, "%s", v);
	r = harness_get("link", v);
	ck_assert_int_eq(r->status, 200);
	ck_assert_pstr_eq(harness_header(r, "Content-Type"), "image/svg+xml");
	ck_assert_ptr_nonnull(strstr(r->body, "<svg"));
	harness_resp_free(r);
	free(v);
	/* nothing else under /logos/ */
	r = harness_get("link", "/logos/" LOGO_BILLER ".svg");
	ck_assert_int_eq(r->status, 404);
	harness_resp_free(r);
	r = harness_get("link", "/logos/../connect.html");
	ck_assert_int_eq(r->status, 404);
	harness_resp_free(r);

	receiver_stop(rc);
	free(st);
	free(lt);
	tenant_free(&t);
}
END_TEST

static void
setup(void)
{
	struct harness_opts o;
	const struct sim_opts so = { "power", 20, 1, 900, NULL };
	char url[256];

	ck_assert_int_eq(crypto_setup(), 0);
	harness_opts_defaults(&o);
	harness_fixture_start(&o);
	ck_assert_msg(sim_start(&so) == 0, "the biller simulator did not start");
	devacct_legal();
	devacct_new(&dev_a, "conn-a");
	devacct_verify_email(&dev_a);	/* development keys */
	devacct_new(&dev_b, "conn-b");
	/* the default sandbox biller, whatever the catalog holds; on a
	 * connection of its own, closed again: the tests are forked children
	 * and open theirs (devacct_pg) */
	{
		PGconn *pg = PQconnectdb(harness_database_url());
		PGresult *res = PQexec(pg, "INSERT INTO billers (id, name, type, country,"
		    " connector, connectivity_types, consent_scopes, capabilities) VALUES ('"
		    SANDBOX_BILLER "', 'Sandbox Power & Light', 'electric', 'US', 'sandbox',"
		    " '{credentials}', '{bills,statements,payment_history,usage,account_details,"
		    "payments}', '{bills,statements,payment_history,usage,mfa}')"
		    " ON CONFLICT DO NOTHING");

		ck_assert_msg(PQresultStatus(res) == PGRES_COMMAND_OK, "%s",
		    PQerrorMessage(pg));
		PQclear(res);
		/* and a portal biller: the simulator */
		sim_base_url("power", url, sizeof(url));
		{
			const char *p[1] = { url };

			res = PQexecParams(pg, "INSERT INTO billers (id, name, type, country,"
			    " connector, base_url, connectivity_types, consent_scopes, capabilities,"
			    " sandbox_portal) VALUES ('" POWER "', 'Sim Power', 'electric', 'US', 'portal',"
			    " $1, '{credentials}', '{bills}', '{bills,mfa}', true)", 1, NULL, p,
			    NULL, NULL, 0);
		}
		ck_assert_msg(PQresultStatus(res) == PGRES_COMMAND_OK, "%s",
		    PQerrorMessage(pg));
		PQclear(res);
		/* a portal biller (nothing behind it: no test logs in to it) */
		res = PQexec(pg, "INSERT INTO billers (id, name, type, country, connector,"
		    " base_url, connectivity_types, search_text) VALUES ('" PORTAL_BILLER "',"
		    " 'Envgate Portal Gas', 'gas', 'US', 'portal', 'https://envgate.example/bpp',"
		    " '{credentials}', billers_fold('Envgate Portal Gas envgate.example'))"
		    " ON CONFLICT DO NOTHING");
		ck_assert_msg(PQresultStatus(res) == PGRES_COMMAND_OK, "%s",
		    PQerrorMessage(pg));
		PQclear(res);
		PQfinish(pg);
	}
}

static void
teardown(void)
{
	sim_stop();
	harness_fixture_stop();
}

static Suite *
connect_suite(void)
{
	Suite *s = suite_create("e2e_connect");
	TCase *tc = tcase_create("connect");

	tcase_add_unchecked_fixture(tc, setup, teardown);
	tcase_add_checked_fixture(tc, harness_fixture_recover, NULL);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, token_create);
	tcase_add_loop_test(tc, token_create_bad, 0, N(bad_tokens));
	tcase_add_test(tc, token_language);
	tcase_add_test(tc, token_metadata_size);
	tcase_add_test(tc, token_update_mode);
	tcase_add_test(tc, ticket_single_use);
	tcase_add_test(tc, session_auth_and_connect_queue);
	tcase_add_test(tc, session_exit);
	tcase_add_test(tc, cors);
	tcase_add_test(tc, exchange_errors);
	tcase_add_test(tc, embedded_flow);
	tcase_add_test(tc, exchange_expired);
	tcase_add_test(tc, exchange_path_not_logged);
	tcase_add_test(tc, hosted_flow);
	tcase_add_test(tc, failed_logins);
	tcase_add_test(tc, update_mode_repairs);
	tcase_add_loop_test(tc, update_mode_repairs_fixture, 0, 2);
	tcase_add_test(tc, sweep_expired_sessions);
	tcase_add_test(tc, token_attempts_spent);
	tcase_add_test(tc, token_spent_job_refuses);
	tcase_add_test(tc, username_attempts_window);
	tcase_add_test(tc, one_fresh_challenge);
	tcase_add_test(tc, update_revoked_link);
	tcase_add_test(tc, update_other_username);
	tcase_add_test(tc, env_sandbox_key_portal_biller);
	tcase_add_test(tc, env_live_key_sandbox_biller);
	tcase_add_test(tc, session_page_fields);
	tcase_add_test(tc, picker_order_and_counts);
	tcase_add_test(tc, mfa_resend);
	tcase_add_test(tc, mfa_resend_portal);
	tcase_add_test(tc, picker_logos);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return harness_run_suite(connect_suite());
}
