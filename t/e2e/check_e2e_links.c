/*
 * Links end to end, the way a client's servers use them: a sandbox
 * account link (POST /v1/sandbox/account-links: the body, Idempotency-Key
 * rules, replay, conflict, 20 identical requests at once, revoke dropping
 * the replay record), then the link routes with an API key (list with
 * filters and cursors, get, delete, refresh, access-token) with every
 * error, and tenant isolation (another client's link: 403 on GET, 404
 * elsewhere; the client's own link in another environment: 404).
 * Retrieval (bds-jobs, which every stack runs) is check_e2e_sandbox_links;
 * here only that a retrieval job is queued and runs.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <json-c/json.h>

#include "core/crypto.h"
#include "core/db.h"
#include "core/json.h"
#include "devacct.h"
#include "harness.h"
#include "links/links.h"

#define N(x) (sizeof(x) / sizeof((x)[0]))
#define SANDBOX_BILLER "blr_01900000-0000-7000-8000-000000000001"
#define PORTAL_BILLER "blr_01900000-0000-7000-8000-0000000000ff"

static struct devacct dev_a, dev_b;

struct tenant {
	char	*client;
	char	*key;
};

static void
tenant_new(const struct devacct *d, struct tenant *t, const char *env)
{
	t->client = devacct_client_new(d);
	t->key = devacct_key_new(d, t->client, env);
}

static void
tenant_free(struct tenant *t)
{
	free(t->client);
	free(t->key);
}

/* A request with an API key on the host its environment belongs to. */
static struct harness_resp *
key_call(const char *key, const char *method, const char *path, const char *body,
    const char *const extra[])
{
	const char *host = strncmp(key, "bds_sandbox_", 12) == 0 ? "sandbox" : "api";

	return devacct_call(method, host, path, devacct_bearer(key), body, extra);
}

/* A sandbox account link for user; the link id (malloc'ed). */
static char *
sandbox_link(const char *key, const char *user, const char *extra_body)
{
	const char *extra[] = { harness_idem_header(), NULL };
	struct harness_resp *r = key_call(key, "POST", "/v1/sandbox/account-links",
	    harness_fmt("{\"client_user_id\":\"%s\"%s}", user, extra_body ? extra_body : ""),
	    extra);
	char *id;

	harness_expect(r, 201);
	id = strdup(devacct_str(r, "link_id"));
	harness_resp_free(r);
	return id;
}

static long long
events_of(const char *client, const char *type)
{
	return devacct_sql_int("SELECT count(*) FROM events WHERE client_id = $1 AND type = $2",
	    client, type);
}

/* ------------------------------------------------------------------ */
/* Fixtures                                                            */

static void
stack_up(void)
{
	harness_fixture_start_default();
	devacct_legal();
	devacct_new(&dev_a, "lnk-a");
	devacct_new(&dev_b, "lnk-b");
	devacct_verify_email(&dev_a);	/* development keys */
	/* Until the catalog is loaded by the billers slice: the default
	 * sandbox biller and a portal biller. */
	devacct_sql_exec("INSERT INTO billers (id, name, type, country, connector,"
	    " connectivity_types, consent_scopes, capabilities) VALUES ($1,"
	    " 'Sandbox Power & Light', 'electric', 'US', 'sandbox', '{credentials}',"
	    " '{bills,statements,payment_history,usage,account_details,payments}',"
	    " '{bills,statements,payment_history,usage,mfa}') ON CONFLICT DO NOTHING",
	    SANDBOX_BILLER, NULL);
	devacct_sql_exec("INSERT INTO billers (id, name, type, country, connector)"
	    " VALUES ($1, 'Portal Gas', 'gas', 'US', 'portal') ON CONFLICT DO NOTHING",
	    PORTAL_BILLER, NULL);
}

START_TEST(statements_prepare)
{
	const struct db_stmt_set *sets[] = { &links_stmt_set, &links_api_stmt_set,
	    &links_sandbox_stmt_set };
	struct db *db = db_new(harness_database_url());

	ck_assert_int_eq(db_ensure(db), 0);
	for (size_t s = 0; s < N(sets); s++)
		for (size_t i = 0; i < sets[s]->n; i++)
			ck_assert_msg(db_prepare(db, &sets[s]->stmts[i]) == 0, "%s: %s",
			    sets[s]->stmts[i].name, db_errmsg(db));
	db_free(db);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Sandbox account links                                               */

/* 201 {link_id, access_token, link}: the entity as DOMAIN.md draws it,
 * credentials sealed (never the password in the row), a retrieval queued,
 * no event yet (the retrieval emits them) and never link.completed. */
START_TEST(sandbox_create_shape)
{
	const char *extra[] = { harness_idem_header(), NULL };
	struct tenant t;
	struct harness_resp *r;
	char *sealed;

	tenant_new(&dev_a, &t, "sandbox");
	r = key_call(t.key, "POST", "/v1/sandbox/account-links",
	    "{\"client_user_id\":\"u-1\",\"consents\":[\"bills\",\"usage\"]}", extra);
	harness_expect(r, 201);
	ck_assert(crypto_id_valid(devacct_str(r, "link_id"), "link", 0));
	ck_assert(strncmp(devacct_str(r, "access_token"), "bds_lat_", 8) == 0);
	ck_assert_pstr_eq(devacct_str(r, "link.id"), devacct_str(r, "link_id"));
	ck_assert_pstr_eq(devacct_str(r, "link.object"), "link");
	ck_assert_pstr_eq(devacct_str(r, "link.client_id"), t.client);
	ck_assert_pstr_eq(devacct_str(r, "link.client_user_id"), "u-1");
	ck_assert_pstr_eq(devacct_str(r, "link.biller_id"), SANDBOX_BILLER);
	ck_assert_pstr_eq(devacct_str(r, "link.biller.id"), SANDBOX_BILLER);
	ck_assert_pstr_eq(devacct_str(r, "link.biller.name"), "Sandbox Power & Light");
	ck_assert_pstr_eq(devacct_str(r, "link.biller.type"), "electric");
	ck_assert_pstr_eq(devacct_str(r, "link.status"), "ACTIVE");
	ck_assert_ptr_nonnull(strstr(r->body, "\"disconnect_reason\":null"));
	ck_assert_pstr_eq(devacct_text(r, "link.scopes"), "[\"bills\",\"usage\"]");
	ck_assert_pstr_eq(devacct_text(r, "link.accounts"), "[]");
	ck_assert_pstr_eq(devacct_str(r, "link.sync.status"), "pending");
	ck_assert_int_eq(devacct_int(r, "link.sync.bill_count"), 0);
	ck_assert_ptr_nonnull(strstr(r->body, "\"first_sync_completed_at\":null"));
	ck_assert_ptr_nonnull(devacct_str(r, "link.created_at"));
	/* the token is stored as SHA-256 only */
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM link_access_tokens WHERE"
	    " token_sha256 = sha256(convert_to($1, 'UTF8')) AND expires_at IS NULL",
	    devacct_str(r, "access_token"), NULL), 1);
	sealed = devacct_sql_value("SELECT encode(credentials, 'escape') FROM links WHERE id = $1",
	    devacct_str(r, "link_id"), NULL);
	ck_assert_ptr_nonnull(sealed);
	ck_assert_ptr_null(strstr(sealed, "pass_good"));
	ck_assert_ptr_null(strstr(sealed, "user_good"));
	free(sealed);
	/* one retrieval queued for the link (bds-jobs may have run it already:
	 * any status) */
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM jobs WHERE kind = 'retrieval'"
	    " AND subject_id = $1 AND client_id = $2", devacct_str(r, "link_id"), t.client), 1);
	ck_assert_int_eq(harness_jobs_wait_idle(30000), 0);
	ck_assert_int_eq(events_of(t.client, "link.completed"), 0);
	harness_resp_free(r);
	tenant_free(&t);
}
END_TEST

/* Same key and body (the same JSON, however written): the original 201
 * (same link, same token, sealed in the record), one link, no new event;
 * another body: 409 IDEMPOTENCY_CONFLICT, nothing made. */
START_TEST(sandbox_idempotent_replay)
{
	const char *extra[] = { "Idempotency-Key: acct-link-1", NULL };
	const char *body = "{\"client_user_id\":\"u-2\",\"username\":\"user_empty\"}";
	struct tenant t, u;
	struct harness_resp *a, *b, *c, *d;

	tenant_new(&dev_a, &t, "sandbox");
	a = key_call(t.key, "POST", "/v1/sandbox/account-links", body, extra);
	harness_expect(a, 201);
	b = key_call(t.key, "POST", "/v1/sandbox/account-links", body, extra);
	harness_expect(b, 201);
	ck_assert_pstr_eq(devacct_str(b, "link_id"), devacct_str(a, "link_id"));
	ck_assert_pstr_eq(devacct_str(b, "access_token"), devacct_str(a, "access_token"));
	ck_assert_pstr_eq(devacct_text(b, "link"), devacct_text(a, "link"));
	/* the replay record keeps the token sealed: nowhere in the clear */
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM idempotency_keys WHERE owner_id = $1 || '/sandbox'"
	    " AND secrets IS NOT NULL AND response ->> 'access_token' IS NULL"
	    " AND strpos(response::text, $2) = 0 AND strpos(encode(secrets, 'escape'), $2) = 0",
	    t.client, devacct_str(a, "access_token")), 1);
	/* the same JSON written otherwise (whitespace, key order, escapes)
	 * is the same request */
	d = key_call(t.key, "POST", "/v1/sandbox/account-links",
	    " {\n \"username\" : \"user_\\u0065mpty\",\t\"client_user_id\":\"u-2\" } ", extra);
	harness_expect(d, 201);
	ck_assert_pstr_eq(devacct_str(d, "link_id"), devacct_str(a, "link_id"));
	ck_assert_pstr_eq(devacct_str(d, "access_token"), devacct_str(a, "access_token"));
	harness_resp_free(d);
	/* no consents: the bills (docs/DECISIONS.md, Consents) */
	ck_assert_pstr_eq(devacct_text(a, "link.scopes"), "[\"bills\"]");
	c = key_call(t.key, "POST", "/v1/sandbox/account-links",
	    "{\"client_user_id\":\"u-3\"}", extra);
	harness_assert_coded(c, 409, "IDEMPOTENCY_CONFLICT");
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM links WHERE client_id = $1",
	    t.client, NULL), 1);
	harness_resp_free(c);
	/* scoped to the client: another client's same key is its own */
	tenant_new(&dev_b, &u, "sandbox");
	c = key_call(u.key, "POST", "/v1/sandbox/account-links", body, extra);
	harness_expect(c, 201);
	ck_assert_str_ne(devacct_str(c, "link_id"), devacct_str(a, "link_id"));
	harness_resp_free(a);
	harness_resp_free(b);
	harness_resp_free(c);
	tenant_free(&t);
	tenant_free(&u);
}
END_TEST

/* 20 identical requests at once: all 201 with one link id, one link. */
START_TEST(sandbox_parallel_identical)
{
	const char *body = "{\"client_user_id\":\"u-par\"}";
	struct harness_resp *out[20];
	struct tenant t;
	char auth[256];
	const char *hdrs[4];

	tenant_new(&dev_a, &t, "sandbox");
	snprintf(auth, sizeof(auth), "Authorization: Bearer %s", t.key);
	hdrs[0] = auth;
	hdrs[1] = "Content-Type: application/json";
	hdrs[2] = "Idempotency-Key: parallel-1";
	hdrs[3] = NULL;
	harness_request_burst(N(out), "POST", "sandbox", "/v1/sandbox/account-links", hdrs,
	    body, strlen(body), out);
	for (size_t i = 0; i < N(out); i++) {
		harness_expect(out[i], 201);
		ck_assert_pstr_eq(devacct_str(out[i], "link_id"), devacct_str(out[0], "link_id"));
	}
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM links WHERE client_id = $1",
	    t.client, NULL), 1);
	/* one retrieval (its reconciliation may follow once it has run) */
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM jobs WHERE client_id = $1"
	    " AND kind = 'retrieval'", t.client, NULL), 1);
	for (size_t i = 0; i < N(out); i++)
		harness_resp_free(out[i]);
	tenant_free(&t);
}
END_TEST

/* Revoking the link drops its replay record: the same key makes a new link. */
START_TEST(sandbox_revoke_drops_replay)
{
	const char *extra[] = { "Idempotency-Key: revoke-me", NULL };
	const char *body = "{\"client_user_id\":\"u-4\"}";
	struct tenant t;
	struct harness_resp *a, *b;

	tenant_new(&dev_a, &t, "sandbox");
	a = key_call(t.key, "POST", "/v1/sandbox/account-links", body, extra);
	harness_expect(a, 201);
	b = key_call(t.key, "DELETE", harness_fmt("/v1/links/%s", devacct_str(a, "link_id")),
	    NULL, NULL);
	harness_expect(b, 200);
	harness_resp_free(b);
	b = key_call(t.key, "POST", "/v1/sandbox/account-links", body, extra);
	harness_expect(b, 201);
	ck_assert_str_ne(devacct_str(b, "link_id"), devacct_str(a, "link_id"));
	ck_assert_pstr_eq(devacct_str(b, "link.status"), "ACTIVE");
	harness_resp_free(a);
	harness_resp_free(b);
	tenant_free(&t);
}
END_TEST

/* Bad input: a clear 400 naming the field (or the header), nothing made. */
static const struct {
	const char *body, *idem, *field, *code;
} bad_sandbox[] = {
	{ "{}", "k-1", "client_user_id", "required" },
	{ "{\"client_user_id\":\"\"}", "k-2", "client_user_id", "too_short" },
	{ "{\"client_user_id\":\"u\",\"username\":\"mallory\"}", "k-3", "username",
	  "invalid_enum" },
	{ "{\"client_user_id\":\"u\",\"consents\":[\"telepathy\"]}", "k-4", "consents[0]",
	  "invalid_enum" },
	{ "{\"client_user_id\":\"u\",\"biller_id\":\"blr_nope\"}", "k-5", "biller_id",
	  "unknown_biller" },
	{ "{\"client_user_id\":\"u\",\"biller_id\":\"blr_01900000-0000-7000-8000-0000000000ff\"}",
	  "k-6", "biller_id", "not_sandbox" },
	{ "{\"client_user_id\":\"u\",\"password\":\"x\"}", "k-7", "password", "unknown_field" },
	{ "{\"client_user_id\":\"u\"}", NULL, "Idempotency-Key", "required" },
	{ "{\"client_user_id\":\"u\"}", "bad\x01key", "Idempotency-Key", "invalid_format" },
};

START_TEST(sandbox_bad_input)
{
	char idem[300];
	const char *extra[] = { idem, NULL };
	struct tenant t;
	struct harness_resp *r;

	tenant_new(&dev_a, &t, "sandbox");
	snprintf(idem, sizeof(idem), "Idempotency-Key: %s", bad_sandbox[_i].idem ?
	    bad_sandbox[_i].idem : "");
	r = key_call(t.key, "POST", "/v1/sandbox/account-links", bad_sandbox[_i].body,
	    bad_sandbox[_i].idem ? extra : NULL);
	harness_assert_coded(r, 400, "VALIDATION_ERROR");
	devacct_assert_error(r, bad_sandbox[_i].field, bad_sandbox[_i].code);
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM links WHERE client_id = $1",
	    t.client, NULL), 0);
	harness_resp_free(r);
	tenant_free(&t);
}
END_TEST

/* A key longer than 255 characters is refused like any bad key. */
START_TEST(sandbox_key_too_long)
{
	char idem[400];
	const char *extra[] = { idem, NULL };
	struct tenant t;
	struct harness_resp *r;

	tenant_new(&dev_a, &t, "sandbox");
	memcpy(idem, "Idempotency-Key: ", 17);
	memset(idem + 17, 'k', 256);
	idem[17 + 256] = '\0';
	r = key_call(t.key, "POST", "/v1/sandbox/account-links", "{\"client_user_id\":\"u\"}",
	    extra);
	harness_assert_coded(r, 400, "VALIDATION_ERROR");
	devacct_assert_error(r, "Idempotency-Key", "invalid_format");
	harness_resp_free(r);
	idem[17 + 255] = '\0';	/* 255 is fine */
	r = key_call(t.key, "POST", "/v1/sandbox/account-links", "{\"client_user_id\":\"u\"}",
	    extra);
	harness_expect(r, 201);
	harness_resp_free(r);
	tenant_free(&t);
}
END_TEST

/* Sandbox key on the sandbox host only: the live host has no such route;
 * a development key on the sandbox host is refused. */
START_TEST(sandbox_host_and_key)
{
	const char *extra[] = { harness_idem_header(), NULL };
	struct tenant s, d;
	struct harness_resp *r;

	tenant_new(&dev_a, &s, "sandbox");
	tenant_new(&dev_a, &d, "development");
	r = devacct_call("POST", "api", "/v1/sandbox/account-links", devacct_bearer(s.key),
	    "{\"client_user_id\":\"u\"}", extra);
	ck_assert_int_eq(r->status, 404);
	harness_resp_free(r);
	r = devacct_call("POST", "sandbox", "/v1/sandbox/account-links", devacct_bearer(d.key),
	    "{\"client_user_id\":\"u\"}", extra);
	ck_assert_int_eq(r->status, 401);
	harness_resp_free(r);
	r = devacct_call("POST", "sandbox", "/v1/sandbox/account-links", NULL,
	    "{\"client_user_id\":\"u\"}", extra);
	ck_assert_int_eq(r->status, 401);
	harness_resp_free(r);
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM links WHERE client_id IN ($1, $2)",
	    s.client, d.client), 0);
	tenant_free(&s);
	tenant_free(&d);
}
END_TEST

/* ------------------------------------------------------------------ */
/* The link routes                                                     */

/* The link's two paths: GET /v1/account-links/{id}, the name the bills
 * and the sync call use, answers as /v1/links/{id}. */
static const char *const link_paths[] = { "/v1/links", "/v1/account-links" };

/* GET /v1/links/{id}: by id and by bare UUID; the same entity as the 201. */
START_TEST(get_by_id_and_uuid)
{
	struct tenant t;
	struct harness_resp *r;
	char *id;

	tenant_new(&dev_a, &t, "sandbox");
	id = sandbox_link(t.key, "u-get", NULL);
	r = key_call(t.key, "GET", harness_fmt("%s/%s", link_paths[_i], id), NULL, NULL);
	harness_expect(r, 200);
	ck_assert_pstr_eq(devacct_str(r, "id"), id);
	ck_assert_pstr_eq(devacct_str(r, "client_user_id"), "u-get");
	harness_resp_free(r);
	r = key_call(t.key, "GET", harness_fmt("%s/%s", link_paths[_i], id + 5), NULL, NULL);
	harness_expect(r, 200);
	ck_assert_pstr_eq(devacct_str(r, "id"), id);
	harness_resp_free(r);
	/* the developer who owns the client, with a JWT */
	r = devacct_jwt(&dev_a, "GET", harness_fmt("%s/%s", link_paths[_i], id), NULL, NULL);
	harness_expect(r, 200);
	ck_assert_pstr_eq(devacct_str(r, "id"), id);
	harness_resp_free(r);
	r = devacct_jwt(&dev_b, "GET", harness_fmt("%s/%s", link_paths[_i], id), NULL, NULL);
	harness_assert_coded(r, 403, "CLIENT_ID_MISMATCH");
	harness_resp_free(r);
	free(id);
	tenant_free(&t);
}
END_TEST

/* GET /v1/account-links/{id} answers /v1/links/{id}'s very body; another
 * client's key is refused alike; the other methods are /v1/links' only. */
START_TEST(account_links_path)
{
	struct tenant t, other;
	struct harness_resp *r, *l;
	char *id;

	tenant_new(&dev_a, &t, "sandbox");
	tenant_new(&dev_b, &other, "sandbox");
	id = sandbox_link(t.key, "u-alias", NULL);
	l = key_call(t.key, "GET", harness_fmt("/v1/links/%s", id), NULL, NULL);
	harness_expect(l, 200);
	r = key_call(t.key, "GET", harness_fmt("/v1/account-links/%s", id), NULL, NULL);
	harness_expect(r, 200);
	ck_assert_str_eq(r->body, l->body);
	harness_resp_free(r);
	harness_resp_free(l);
	r = key_call(other.key, "GET", harness_fmt("/v1/account-links/%s", id), NULL, NULL);
	harness_assert_coded(r, 403, "CLIENT_ID_MISMATCH");
	harness_resp_free(r);
	r = key_call(t.key, "DELETE", harness_fmt("/v1/account-links/%s", id), NULL, NULL);
	harness_assert_coded(r, 405, "METHOD_NOT_ALLOWED");
	harness_resp_free(r);
	free(id);
	tenant_free(&t);
	tenant_free(&other);
}
END_TEST

/*
 * A KEY route's body may name the key's client (Authentication rule 2):
 * access-token, which declares no body, and sandbox account-links, which
 * declared client_id itself before the dispatcher did. The key's own id
 * is ignored, another is 403 CLIENT_ID_MISMATCH (nothing done), a number
 * is 400.
 */
START_TEST(body_client_id)
{
	const char *extra[] = { harness_idem_header(), NULL };
	struct tenant t;
	struct harness_resp *r;
	long long tokens;
	char *id;

	tenant_new(&dev_a, &t, "sandbox");
	id = sandbox_link(t.key, "u-cid", harness_fmt(",\"client_id\":\"%s\"", t.client));
	r = key_call(t.key, "POST", harness_fmt("/v1/links/%s/access-token", id),
	    harness_fmt("{\"client_id\":\"%s\"}", t.client), NULL);
	harness_expect(r, 201);
	ck_assert(strncmp(devacct_str(r, "access_token"), "bds_lat_", 8) == 0);
	harness_resp_free(r);
	tokens = devacct_sql_int("SELECT count(*) FROM link_access_tokens WHERE link_id = $1",
	    id, NULL);
	r = key_call(t.key, "POST", harness_fmt("/v1/links/%s/access-token", id),
	    "{\"client_id\":\"cli_someone_else\"}", NULL);
	harness_assert_coded(r, 403, "CLIENT_ID_MISMATCH");
	harness_resp_free(r);
	r = key_call(t.key, "POST", harness_fmt("/v1/links/%s/access-token", id),
	    "{\"client_id\":7}", NULL);
	harness_assert_coded(r, 400, "VALIDATION_ERROR");
	ck_assert_pstr_eq(devacct_str(r, "errors.0.field"), "client_id");
	harness_resp_free(r);
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM link_access_tokens WHERE"
	    " link_id = $1", id, NULL), tokens);	/* the refused ones minted nothing */
	/* the route that declared it before */
	r = devacct_call("POST", "sandbox", "/v1/sandbox/account-links", devacct_bearer(t.key),
	    "{\"client_user_id\":\"u-cid2\",\"username\":\"user_good\","
	    "\"client_id\":\"cli_someone_else\"}", extra);
	harness_assert_coded(r, 403, "CLIENT_ID_MISMATCH");
	harness_resp_free(r);
	/* a GET takes no body: client_id there is still unknown */
	r = key_call(t.key, "GET", harness_fmt("/v1/links/%s", id),
	    harness_fmt("{\"client_id\":\"%s\"}", t.client), NULL);
	harness_assert_coded(r, 400, "VALIDATION_ERROR");
	harness_resp_free(r);
	free(id);
	tenant_free(&t);
}
END_TEST

/* 404 LINK_NOT_FOUND: unknown, malformed; 401 without a credential. */
START_TEST(get_errors)
{
	const char *unknown = strdup(harness_fmt("%s/link_01900000-0000-7000-8000-00000000abcd",
	    link_paths[_i]));
	struct tenant t;
	struct harness_resp *r;

	tenant_new(&dev_a, &t, "sandbox");
	r = key_call(t.key, "GET", unknown, NULL, NULL);
	harness_assert_coded(r, 404, "LINK_NOT_FOUND");
	harness_resp_free(r);
	r = key_call(t.key, "GET", harness_fmt("%s/not-a-link", link_paths[_i]), NULL, NULL);
	harness_assert_coded(r, 404, "LINK_NOT_FOUND");
	harness_resp_free(r);
	/* no valid credential: the spec's 401 NEEDS_RESIGNIN */
	r = devacct_call("GET", "sandbox", unknown, NULL, NULL, NULL);
	harness_assert_coded(r, 401, "NEEDS_RESIGNIN");
	harness_resp_free(r);
	r = devacct_call("GET", "api", unknown, "Bearer not-a-token", NULL, NULL);
	harness_assert_coded(r, 401, "NEEDS_RESIGNIN");
	harness_resp_free(r);
	free((char *)unknown);
	tenant_free(&t);
}
END_TEST

/*
 * Tenant isolation: another client's link is 403 CLIENT_ID_MISMATCH on GET
 * and 404 on every other route (nothing changes); the client's own link
 * seen with its development key (another environment) is 404.
 */
START_TEST(tenant_isolation)
{
	struct tenant t, other, dev;
	struct harness_resp *r;
	const char *paths[][2] = {
		{ "DELETE", "" }, { "POST", "/refresh" }, { "POST", "/access-token" },
		{ "POST", "/reset-login" }, { "POST", "/advance" },
	};
	char *id;

	tenant_new(&dev_a, &t, "sandbox");
	tenant_new(&dev_b, &other, "sandbox");
	dev.client = t.client;
	dev.key = devacct_key_new(&dev_a, t.client, "development");
	id = sandbox_link(t.key, "u-iso", NULL);

	r = key_call(other.key, "GET", harness_fmt("/v1/links/%s", id), NULL, NULL);
	harness_assert_coded(r, 403, "CLIENT_ID_MISMATCH");
	harness_resp_free(r);
	for (size_t i = 0; i < N(paths); i++) {
		const char *base = i >= 3 ? "/v1/sandbox/links" : "/v1/links";

		r = key_call(other.key, paths[i][0], harness_fmt("%s/%s%s", base, id, paths[i][1]),
		    NULL, NULL);
		harness_assert_coded(r, 404, "LINK_NOT_FOUND");
		harness_resp_free(r);
	}
	r = key_call(dev.key, "GET", harness_fmt("/v1/links/%s", id), NULL, NULL);
	harness_assert_coded(r, 404, "LINK_NOT_FOUND");
	harness_resp_free(r);
	r = key_call(dev.key, "DELETE", harness_fmt("/v1/links/%s", id), NULL, NULL);
	harness_assert_coded(r, 404, "LINK_NOT_FOUND");
	harness_resp_free(r);
	r = key_call(other.key, "GET", "/v1/links", NULL, NULL);
	harness_expect(r, 200);
	ck_assert_pstr_eq(devacct_text(r, "links"), "[]");
	harness_resp_free(r);
	r = key_call(dev.key, "GET", "/v1/links", NULL, NULL);
	harness_expect(r, 200);
	ck_assert_pstr_eq(devacct_text(r, "links"), "[]");
	harness_resp_free(r);
	/* nothing changed */
	r = key_call(t.key, "GET", harness_fmt("/v1/links/%s", id), NULL, NULL);
	harness_expect(r, 200);
	ck_assert_pstr_eq(devacct_str(r, "status"), "ACTIVE");
	harness_resp_free(r);
	ck_assert_int_eq(events_of(t.client, "link.disconnected"), 0);
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM link_access_tokens WHERE"
	    " link_id = $1", id, NULL), 1);
	free(id);
	free(dev.key);
	tenant_free(&t);
	tenant_free(&other);
}
END_TEST

/* The list: newest first, filters, pages through a MAC'd cursor without
 * gaps or repeats; bad queries are 400. */
START_TEST(list_pages_and_filters)
{
	struct tenant t;
	struct harness_resp *r;
	char *ids[5], *cursor = NULL;
	size_t seen = 0;

	static const char *const logins[N(ids)] = { "user_good", "user_empty", "user_paid",
		"user_partial", "user_insights" };

	tenant_new(&dev_a, &t, "sandbox");
	/* each its own login: the same one again is the same link */
	for (size_t i = 0; i < N(ids); i++)
		ids[i] = sandbox_link(t.key, i % 2 ? "odd" : "even",
		    harness_fmt(",\"username\":\"%s\"", logins[i]));
	for (int page = 0; page < 5; page++) {
		r = key_call(t.key, "GET", cursor ? harness_fmt("/v1/links?limit=2&cursor=%s",
		    cursor) : "/v1/links?limit=2", NULL, NULL);
		harness_expect(r, 200);
		for (size_t k = 0; k < json_object_array_length(devacct_json(r, "links")); k++) {
			ck_assert_pstr_eq(devacct_str(r, harness_fmt("links.%zu.id", k)),
			    ids[N(ids) - 1 - seen]);
			seen++;
		}
		free(cursor);
		cursor = devacct_bool(r, "has_more") ? strdup(devacct_str(r, "next_cursor")) : NULL;
		if (cursor == NULL)
			ck_assert_ptr_nonnull(strstr(r->body, "\"next_cursor\":null"));
		harness_resp_free(r);
		if (cursor == NULL)
			break;
	}
	ck_assert_uint_eq(seen, N(ids));

	r = key_call(t.key, "GET", "/v1/links?client_user_id=odd", NULL, NULL);
	harness_expect(r, 200);
	ck_assert_uint_eq(json_object_array_length(devacct_json(r, "links")), 2);
	ck_assert_pstr_eq(devacct_str(r, "links.0.client_user_id"), "odd");
	harness_resp_free(r);
	r = key_call(t.key, "DELETE", harness_fmt("/v1/links/%s", ids[0]), NULL, NULL);
	harness_expect(r, 200);
	harness_resp_free(r);
	r = key_call(t.key, "GET", "/v1/links?status=REVOKED", NULL, NULL);
	harness_expect(r, 200);
	ck_assert_uint_eq(json_object_array_length(devacct_json(r, "links")), 1);
	ck_assert_pstr_eq(devacct_str(r, "links.0.id"), ids[0]);
	harness_resp_free(r);

	{
		const char *bad[][2] = {
			{ "/v1/links?page=2", "page" }, { "/v1/links?page_size=2", "page_size" },
			{ "/v1/links?limit=0", "limit" }, { "/v1/links?limit=501", "limit" },
			{ "/v1/links?status=GONE", "status" },
		};

		for (size_t i = 0; i < N(bad); i++) {
			r = key_call(t.key, "GET", bad[i][0], NULL, NULL);
			ck_assert_msg(r->status == 400, "%s: %ld", bad[i][0], r->status);
			harness_resp_free(r);
		}
		r = key_call(t.key, "GET", "/v1/links?cursor=AAAA", NULL, NULL);
		harness_assert_coded(r, 400, "INVALID_CURSOR");
		harness_resp_free(r);
	}
	for (size_t i = 0; i < N(ids); i++)
		free(ids[i]);
	tenant_free(&t);
}
END_TEST

/* DELETE: REVOKED, credentials destroyed, tokens dropped, one
 * link.disconnected (revoked); again: 200, the same state, no second event. */
START_TEST(delete_revokes_once)
{
	struct tenant t;
	struct harness_resp *r;
	char *id, *ev;

	tenant_new(&dev_a, &t, "sandbox");
	id = sandbox_link(t.key, "u-del", NULL);
	r = key_call(t.key, "DELETE", harness_fmt("/v1/links/%s", id), NULL, NULL);
	harness_expect(r, 200);
	ck_assert_pstr_eq(devacct_str(r, "status"), "REVOKED");
	ck_assert_pstr_eq(devacct_str(r, "disconnect_reason"), "revoked");
	harness_resp_free(r);
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM links WHERE id = $1 AND"
	    " credentials IS NULL AND credentials_key_id IS NULL", id, NULL), 1);
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM link_access_tokens WHERE"
	    " link_id = $1", id, NULL), 0);
	ck_assert_int_eq(events_of(t.client, "link.disconnected"), 1);
	ev = devacct_sql_value("SELECT data::text FROM events WHERE client_id = $1 AND"
	    " type = 'link.disconnected'", t.client, NULL);
	ck_assert_ptr_nonnull(strstr(ev, "\"reason\": \"revoked\""));
	ck_assert_ptr_nonnull(strstr(ev, id));
	ck_assert_ptr_nonnull(strstr(ev, "\"user_id\": \"u-del\""));
	ck_assert_ptr_nonnull(strstr(ev, SANDBOX_BILLER));
	free(ev);
	r = key_call(t.key, "DELETE", harness_fmt("/v1/links/%s", id), NULL, NULL);
	harness_expect(r, 200);
	ck_assert_pstr_eq(devacct_str(r, "status"), "REVOKED");
	harness_resp_free(r);
	ck_assert_int_eq(events_of(t.client, "link.disconnected"), 1);
	/* a revoked link cannot be refreshed or get a token */
	r = key_call(t.key, "POST", harness_fmt("/v1/links/%s/refresh", id), NULL, NULL);
	harness_assert_coded(r, 409, "LINK_REVOKED");
	harness_resp_free(r);
	r = key_call(t.key, "POST", harness_fmt("/v1/links/%s/access-token", id), NULL, NULL);
	harness_assert_coded(r, 409, "LINK_REVOKED");
	harness_resp_free(r);
	free(id);
	tenant_free(&t);
}
END_TEST

/*
 * A link's row held by someone else (a job's short write, another
 * request): refresh and revoke wait at most api_lock_timeout_ms and answer
 * 409 LOCK_TIMEOUT with Retry-After, changing nothing; once the row is
 * free they work. The test holds the lock from a connection of its own.
 */
START_TEST(locked_link_answers_409)
{
	struct tenant t;
	struct harness_resp *r;
	PGresult *res;
	PGconn *holder;
	const char *p[1];
	char *id;

	tenant_new(&dev_a, &t, "sandbox");
	id = sandbox_link(t.key, "u-locked", NULL);
	holder = PQconnectdb(harness_database_url());
	ck_assert_int_eq(PQstatus(holder), CONNECTION_OK);
	PQclear(PQexec(holder, "BEGIN"));
	p[0] = id;
	res = PQexecParams(holder, "SELECT 1 FROM links WHERE id = $1 FOR UPDATE", 1, NULL, p,
	    NULL, NULL, 0);
	ck_assert_int_eq(PQntuples(res), 1);
	PQclear(res);
	r = key_call(t.key, "POST", harness_fmt("/v1/links/%s/refresh", id), NULL, NULL);
	harness_assert_coded(r, 409, "LOCK_TIMEOUT");
	ck_assert_pstr_eq(harness_header(r, "Retry-After"), "1");
	harness_resp_free(r);
	r = key_call(t.key, "DELETE", harness_fmt("/v1/links/%s", id), NULL, NULL);
	harness_assert_coded(r, 409, "LOCK_TIMEOUT");
	harness_resp_free(r);
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM links WHERE id = $1"
	    " AND status = 'ACTIVE'", id, NULL), 1);
	ck_assert_int_eq(events_of(t.client, "link.disconnected"), 0);
	PQclear(PQexec(holder, "ROLLBACK"));
	PQfinish(holder);
	r = key_call(t.key, "DELETE", harness_fmt("/v1/links/%s", id), NULL, NULL);
	harness_expect(r, 200);
	ck_assert_pstr_eq(devacct_str(r, "status"), "REVOKED");
	harness_resp_free(r);
	free(id);
	tenant_free(&t);
}
END_TEST

/* refresh: 202 and a retrieval queued; 429 with Retry-After inside 10
 * minutes; accepted again once the window has passed. */
START_TEST(refresh_and_cooldown)
{
	struct tenant t;
	struct harness_resp *r;
	char *id;

	tenant_new(&dev_a, &t, "sandbox");
	id = sandbox_link(t.key, "u-ref", NULL);
	/* the first retrieval runs in bds-jobs */
	ck_assert_int_eq(harness_jobs_wait_idle(30000), 0);
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM jobs WHERE subject_id = $1 AND"
	    " kind = 'retrieval' AND status = 'done'", id, NULL), 1);
	r = key_call(t.key, "POST", harness_fmt("/v1/links/%s/refresh", id), NULL, NULL);
	harness_expect(r, 202);
	ck_assert_pstr_eq(devacct_str(r, "link_id"), id);
	ck_assert_pstr_eq(devacct_str(r, "status"), "queued");
	harness_resp_free(r);
	/* a second retrieval job row, which bds-jobs runs too (refresh 1) */
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM jobs WHERE subject_id = $1 AND"
	    " kind = 'retrieval'", id, NULL), 2);
	ck_assert_int_eq(harness_jobs_wait_idle(30000), 0);
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM jobs WHERE subject_id = $1 AND"
	    " kind = 'retrieval' AND status = 'done'", id, NULL), 2);
	ck_assert_int_eq(devacct_sql_int("SELECT refresh_count FROM links WHERE id = $1", id,
	    NULL), 2);
	r = key_call(t.key, "POST", harness_fmt("/v1/links/%s/refresh", id), NULL, NULL);
	harness_assert_coded(r, 429, "RATE_LIMITED");
	ck_assert_ptr_nonnull(harness_header(r, "Retry-After"));
	ck_assert_int_gt(atoi(harness_header(r, "Retry-After")), 0);
	ck_assert_int_le(atoi(harness_header(r, "Retry-After")), 600);
	harness_resp_free(r);
	devacct_sql_exec("UPDATE links SET refresh_requested_at = now() - interval '11 minutes'"
	    " WHERE id = $1", id, NULL);
	r = key_call(t.key, "POST", harness_fmt("/v1/links/%s/refresh", id), NULL, NULL);
	harness_expect(r, 202);
	harness_resp_free(r);
	/* a disconnected link is repaired, not refreshed */
	devacct_sql_exec("UPDATE links SET refresh_requested_at = NULL WHERE id = $1", id, NULL);
	r = key_call(t.key, "POST", harness_fmt("/v1/sandbox/links/%s/reset-login", id), NULL,
	    NULL);
	harness_expect(r, 200);
	harness_resp_free(r);
	r = key_call(t.key, "POST", harness_fmt("/v1/links/%s/refresh", id), NULL, NULL);
	harness_assert_coded(r, 409, "LINK_DISCONNECTED");
	harness_resp_free(r);
	free(id);
	tenant_free(&t);
}
END_TEST

/* access-token: 201, a bds_lat_ token of 1 h stored as SHA-256. */
START_TEST(access_token_minted)
{
	struct tenant t;
	struct harness_resp *r;
	char *id;

	tenant_new(&dev_a, &t, "sandbox");
	id = sandbox_link(t.key, "u-tok", NULL);
	r = key_call(t.key, "POST", harness_fmt("/v1/links/%s/access-token", id), NULL, NULL);
	harness_expect(r, 201);
	ck_assert(strncmp(devacct_str(r, "access_token"), "bds_lat_", 8) == 0);
	ck_assert_uint_eq(strlen(devacct_str(r, "access_token")), 8 + 43 + 6);
	ck_assert_ptr_nonnull(devacct_str(r, "expires_at"));
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM link_access_tokens WHERE"
	    " token_sha256 = sha256(convert_to($1, 'UTF8')) AND link_id = $2"
	    " AND expires_at BETWEEN now() + interval '59 minutes' AND now() + interval '61 minutes'",
	    devacct_str(r, "access_token"), id), 1);
	harness_resp_free(r);
	r = key_call(t.key, "POST", "/v1/links/link_01900000-0000-7000-8000-00000000abcd/access-token",
	    NULL, NULL);
	harness_assert_coded(r, 404, "LINK_NOT_FOUND");
	harness_resp_free(r);
	free(id);
	tenant_free(&t);
}
END_TEST

/* reset-login: DISCONNECTED credentials_rejected INVALID_CREDENTIALS and
 * one link.disconnected, however often it is called; advance on it: 409. */
START_TEST(sandbox_reset_login_once)
{
	struct tenant t;
	struct harness_resp *r;
	char *id, *ev;

	tenant_new(&dev_a, &t, "sandbox");
	id = sandbox_link(t.key, "u-rst", NULL);
	for (int i = 0; i < 2; i++) {
		r = key_call(t.key, "POST", harness_fmt("/v1/sandbox/links/%s/reset-login", id),
		    NULL, NULL);
		harness_expect(r, 200);
		ck_assert_pstr_eq(devacct_str(r, "status"), "DISCONNECTED");
		ck_assert_pstr_eq(devacct_str(r, "disconnect_reason"), "credentials_rejected");
		ck_assert_pstr_eq(devacct_str(r, "credential_rejection_reason"),
		    "INVALID_CREDENTIALS");
		harness_resp_free(r);
	}
	ck_assert_int_eq(events_of(t.client, "link.disconnected"), 1);
	ev = devacct_sql_value("SELECT data::text FROM events WHERE client_id = $1 AND"
	    " type = 'link.disconnected'", t.client, NULL);
	ck_assert_ptr_nonnull(strstr(ev, "\"reason\": \"credentials_rejected\""));
	ck_assert_ptr_nonnull(strstr(ev, "\"credential_rejection_reason\": \"INVALID_CREDENTIALS\""));
	free(ev);
	r = key_call(t.key, "POST", harness_fmt("/v1/sandbox/links/%s/advance", id), NULL, NULL);
	harness_assert_coded(r, 409, "LINK_DISCONNECTED");
	harness_resp_free(r);
	free(id);
	tenant_free(&t);
}
END_TEST

/* ------------------------------------------------------------------ */
/* The stored entity (sql/026_links_entity.sql)                        */

/*
 * Every link row's stored entity is what links_json builds now, and GET
 * /v1/links/{id} sends the stored one, byte for byte but the whitespace
 * between tokens (json_compact); the stored text (a static buffer,
 * overwritten by the next call).
 */
static const char *
entity_current(const char *key, const char *id, const char *step)
{
	static char body[16384];
	struct harness_resp *r;
	char *stored;

	ck_assert_msg(devacct_sql_int("SELECT count(*) FROM links l"
	    " WHERE l.entity IS DISTINCT FROM links_json(l)::text", NULL, NULL) == 0,
	    "%s: a stored link entity is stale", step);
	stored = devacct_sql_value("SELECT entity FROM links WHERE id = $1", id, NULL);
	ck_assert_uint_lt(strlen(stored), sizeof(body));
	strcpy(body, stored);
	r = key_call(key, "GET", harness_fmt("/v1/links/%s", id), NULL, NULL);
	harness_expect(r, 200);
	/* the stored text without PostgreSQL's whitespace between tokens */
	stored[json_compact(stored, stored, strlen(stored))] = '\0';
	ck_assert_msg(strcmp(r->body, stored) == 0, "%s: GET %s\n%s\nstored\n%s", step, id,
	    r->body, stored);
	harness_resp_free(r);
	free(stored);
	return body;
}

/* The entity's account names, in order, comma-separated (static). */
static const char *
account_names(const char *body)
{
	static char out[1024];
	struct json_object *o = json_tokener_parse(body), *accts;

	out[0] = '\0';
	ck_assert_ptr_nonnull(o);
	ck_assert(json_object_object_get_ex(o, "accounts", &accts));
	for (size_t i = 0; i < json_object_array_length(accts); i++) {
		struct json_object *a = json_object_array_get_idx(accts, i), *name;

		ck_assert(json_object_object_get_ex(a, "name", &name));
		if (i > 0)
			strcat(out, ",");
		strncat(out, json_object_get_string(name), sizeof(out) - strlen(out) - 2);
	}
	json_object_put(o);
	return out;
}

/*
 * The stored entity stays current through every kind of change: create,
 * the first retrieval (accounts, sync{}), account changes (without
 * touching the link's updated_at), a biller renamed and retyped, a
 * disconnect, a repair-free revoke; the list sends the same.
 */
START_TEST(entity_stored_current)
{
	struct tenant t;
	struct harness_resp *r;
	const char *body;
	char *id, *other, *updated, *acct;

	tenant_new(&dev_a, &t, "sandbox");
	id = sandbox_link(t.key, "u-ent", ",\"username\":\"user_multi\"");
	entity_current(t.key, id, "created");
	ck_assert_int_eq(harness_jobs_wait_settled("retrieval", id, 60000), 0);
	body = entity_current(t.key, id, "retrieved");
	ck_assert_ptr_nonnull(strstr(body, "\"status\" : \"ok\""));
	ck_assert_ptr_nonnull(strstr(body, "\"bill_count\" : 36"));
	ck_assert_int_eq(devacct_sql_int("SELECT json_array_length((entity::json)->'accounts')"
	    " FROM links WHERE id = $1", id, NULL), 3);

	/* accounts changed, added, dropped: the entity, not updated_at */
	updated = devacct_sql_value("SELECT updated_at::text FROM links WHERE id = $1", id, NULL);
	acct = devacct_sql_value("SELECT id FROM link_accounts WHERE link_id = $1"
	    " ORDER BY created_at, id LIMIT 1", id, NULL);
	devacct_sql_exec("UPDATE link_accounts SET name = 'Renamed account' WHERE id = $1", acct,
	    NULL);
	body = entity_current(t.key, id, "account renamed");
	ck_assert_ptr_nonnull(strstr(account_names(body), "Renamed account"));
	devacct_sql_exec("INSERT INTO link_accounts (client_id, id, link_id, external_ref, name)"
	    " SELECT client_id, 'acct_01900000-0000-7000-8000-0000000e0001', id, 'ent-extra',"
	    " 'Extra account' FROM links WHERE id = $1", id, NULL);
	body = entity_current(t.key, id, "account added");
	ck_assert_ptr_nonnull(strstr(account_names(body), "Extra account"));
	devacct_sql_exec("DELETE FROM link_accounts WHERE id = $1", acct, NULL);
	body = entity_current(t.key, id, "account dropped");
	ck_assert_ptr_null(strstr(account_names(body), "Renamed account"));
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM links WHERE id = $1"
	    " AND updated_at::text = $2", id, updated), 1);
	free(acct);
	free(updated);

	/* the biller renamed and retyped (then back): every link of it */
	other = sandbox_link(t.key, "u-ent-2", NULL);
	devacct_sql_exec("UPDATE billers SET name = 'Sandbox Renamed', type = 'gas'"
	    " WHERE id = $1", SANDBOX_BILLER, NULL);
	body = entity_current(t.key, id, "biller renamed");
	ck_assert_ptr_nonnull(strstr(body, "\"name\" : \"Sandbox Renamed\", \"type\" : \"gas\""));
	body = entity_current(t.key, other, "biller renamed");
	ck_assert_ptr_nonnull(strstr(body, "\"name\" : \"Sandbox Renamed\""));
	devacct_sql_exec("UPDATE billers SET name = 'Sandbox Power & Light', type = 'electric'"
	    " WHERE id = $1", SANDBOX_BILLER, NULL);
	body = entity_current(t.key, id, "biller restored");
	ck_assert_ptr_nonnull(strstr(body, "\"name\" : \"Sandbox Power & Light\""));

	/* disconnected, then revoked */
	r = key_call(t.key, "POST", harness_fmt("/v1/sandbox/links/%s/reset-login", id), NULL,
	    NULL);
	harness_expect(r, 200);
	harness_resp_free(r);
	body = entity_current(t.key, id, "disconnected");
	ck_assert_ptr_nonnull(strstr(body, "\"status\" : \"DISCONNECTED\""));
	r = key_call(t.key, "DELETE", harness_fmt("/v1/links/%s", id), NULL, NULL);
	harness_expect(r, 200);
	harness_resp_free(r);
	body = entity_current(t.key, id, "revoked");
	ck_assert_ptr_nonnull(strstr(body, "\"status\" : \"REVOKED\""));
	ck_assert_ptr_nonnull(strstr(body, "\"disconnect_reason\" : \"revoked\""));

	/* the list sends the stored entities */
	r = key_call(t.key, "GET", "/v1/links?client_user_id=u-ent", NULL, NULL);
	harness_expect(r, 200);
	ck_assert_pstr_eq(devacct_str(r, "links.0.id"), id);
	ck_assert_pstr_eq(devacct_str(r, "links.0.status"), "REVOKED");
	ck_assert_pstr_eq(devacct_str(r, "links.0.biller.name"), "Sandbox Power & Light");
	harness_resp_free(r);
	ck_assert_int_eq(harness_jobs_wait_settled("retrieval", other, 60000), 0);
	entity_current(t.key, other, "second link retrieved");
	free(other);
	free(id);
	tenant_free(&t);
}
END_TEST

/* reset-login and advance act on the sandbox fixtures only: on a link to
 * a portal biller (moved there: the gates let no sandbox key make one)
 * they are 400 VALIDATION_ERROR not_sandbox and nothing moves: no
 * retrieval queued (advance skips the refresh limit), no disconnection.
 * An update-mode link token for it is refused as any token for that
 * biller is (biller_not_in_environment). */
START_TEST(sandbox_tools_portal_link)
{
	const char *tools[] = { "advance", "reset-login" };
	struct tenant t;
	struct harness_resp *r;
	long long jobs;
	char *id;

	tenant_new(&dev_a, &t, "sandbox");
	id = sandbox_link(t.key, "u-tools", NULL);
	ck_assert_int_eq(harness_jobs_wait_settled("retrieval", id, 60000), 0);
	devacct_sql_exec("UPDATE links SET biller_id = $2 WHERE id = $1", id, PORTAL_BILLER);
	jobs = devacct_sql_int("SELECT count(*) FROM jobs WHERE kind = 'retrieval'"
	    " AND subject_id = $1", id, NULL);
	for (size_t i = 0; i < N(tools); i++) {
		r = key_call(t.key, "POST", harness_fmt("/v1/sandbox/links/%s/%s", id, tools[i]),
		    NULL, NULL);
		harness_assert_coded(r, 400, "VALIDATION_ERROR");
		ck_assert_pstr_eq(devacct_str(r, "errors.0.field"), "id");
		ck_assert_pstr_eq(devacct_str(r, "errors.0.code"), "not_sandbox");
		harness_resp_free(r);
	}
	/* nor is it repaired through an update-mode token */
	r = key_call(t.key, "POST", "/v1/link-tokens", harness_fmt("{\"client_user_id\":"
	    "\"u-tools\",\"update\":{\"link_id\":\"%s\"}}", id), NULL);
	harness_assert_coded(r, 400, "VALIDATION_ERROR");
	ck_assert_pstr_eq(devacct_str(r, "errors.0.field"), "update.link_id");
	ck_assert_pstr_eq(devacct_str(r, "errors.0.code"), "biller_not_in_environment");
	harness_resp_free(r);
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM jobs WHERE kind = 'retrieval'"
	    " AND subject_id = $1", id, NULL), jobs);
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM links WHERE id = $1"
	    " AND status = 'ACTIVE'", id, NULL), 1);
	ck_assert_int_eq(events_of(t.client, "link.disconnected"), 0);
	free(id);
	tenant_free(&t);
}
END_TEST

/*
 * A sandbox history is dated from the link's creation day (this stack
 * does not pin it): the newest bill is PENDING, dated on or before that
 * day and due on or after it within 20 days; every paid one was paid
 * before its due date; every bill's money reconciles.
 */
START_TEST(sandbox_history_current)
{
	struct tenant t;
	char *id;

	tenant_new(&dev_a, &t, "sandbox");
	id = sandbox_link(t.key, "u-now", NULL);
	ck_assert_int_eq(harness_jobs_wait_settled("retrieval", id, 60000), 0);
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM bills b JOIN links l ON"
	    " l.id = b.link_id WHERE b.link_id = $1 AND b.status = 'PENDING'"
	    " AND b.statement_date <= (l.created_at AT TIME ZONE 'UTC')::date"
	    " AND b.due_date >= (l.created_at AT TIME ZONE 'UTC')::date"
	    " AND b.due_date <= (l.created_at AT TIME ZONE 'UTC')::date + 20"
	    " AND b.statement_date = (SELECT max(statement_date) FROM bills"
	    "  WHERE link_id = $1)", id, NULL), 1);
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM bills WHERE link_id = $1"
	    " AND status = 'PAID' AND paid_at < due_date", id, NULL), 11);
	ck_assert_int_eq(devacct_bills_unreconciled(id), 0);
	free(id);
	tenant_free(&t);
}
END_TEST

static Suite *
links_suite(void)
{
	Suite *s = suite_create("e2e_links");
	TCase *tc = tcase_create("links");

	tcase_add_unchecked_fixture(tc, stack_up, harness_fixture_stop);
	tcase_add_checked_fixture(tc, harness_fixture_recover, NULL);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, statements_prepare);
	tcase_add_test(tc, sandbox_create_shape);
	tcase_add_test(tc, sandbox_history_current);
	tcase_add_test(tc, sandbox_idempotent_replay);
	tcase_add_test(tc, sandbox_parallel_identical);
	tcase_add_test(tc, sandbox_revoke_drops_replay);
	tcase_add_loop_test(tc, sandbox_bad_input, 0, N(bad_sandbox));
	tcase_add_test(tc, sandbox_key_too_long);
	tcase_add_test(tc, sandbox_host_and_key);
	tcase_add_loop_test(tc, get_by_id_and_uuid, 0, N(link_paths));
	tcase_add_loop_test(tc, get_errors, 0, N(link_paths));
	tcase_add_test(tc, tenant_isolation);
	tcase_add_test(tc, list_pages_and_filters);
	tcase_add_test(tc, delete_revokes_once);
	tcase_add_test(tc, locked_link_answers_409);
	tcase_add_test(tc, refresh_and_cooldown);
	tcase_add_test(tc, access_token_minted);
	tcase_add_test(tc, account_links_path);
	tcase_add_test(tc, body_client_id);
	tcase_add_test(tc, sandbox_reset_login_once);
	tcase_add_test(tc, entity_stored_current);
	tcase_add_test(tc, sandbox_tools_portal_link);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return harness_run_suite(links_suite());
}
