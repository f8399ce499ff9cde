/*
 * Client secrets and client-credential auth end to end: create (with its
 * Idempotency-Key and environment gating), list, get, revoke, rotate (20 at
 * once: exactly one wins), the key in Bearer and Basic form on the sandbox
 * and live hosts, GET /v1/identity, tenant isolation, and a scan of every
 * table and every file of the stack for the plaintext keys.
 *
 * Developers, made once in the unchecked fixture: A has a verified e-mail
 * and live access, B has neither, C has a verified e-mail only.
 */
#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <check.h>
#include <json-c/json.h>

#include "core/crypto.h"
#include "devacct.h"
#include "harness.h"

#define ROTATIONS	20
#define SETTLE_MS	5000	/* SECRETS_ROTATE_SETTLE in lib/iam_secrets.c */

static struct devacct dev_a, dev_b, dev_c;

static void
setup(void)
{
	struct harness_opts o;

	ck_assert_int_eq(crypto_setup(), 0);	/* random Idempotency-Keys, SHA-256 */
	harness_opts_defaults(&o);
	o.workers = 4;		/* rotations really run side by side */
	o.extra_config = "billing = none";
	harness_fixture_start(&o);
	devacct_legal();
	devacct_new(&dev_a, "sec-a");
	devacct_verify_email(&dev_a);
	devacct_live_access(&dev_a);
	devacct_new(&dev_b, "sec-b");
	devacct_new(&dev_c, "sec-c");
	devacct_verify_email(&dev_c);
}

/* ------------------------------------------------------------------ */
/* Helpers                                                             */

static char *
str_cat3(const char *a, const char *b, const char *c)
{
	char *s = malloc(strlen(a) + strlen(b) + strlen(c) + 1);

	ck_assert_ptr_nonnull(s);
	sprintf(s, "%s%s%s", a, b, c);
	return s;
}

/* /v1/iam/clients/<id>/client-secrets<suffix> (malloc'ed) */
static char *
secrets_path(const char *client, const char *suffix)
{
	char *head = str_cat3("/v1/iam/clients/", client, "/client-secrets");
	char *p = str_cat3(head, suffix, "");

	free(head);
	return p;
}

/* POST .../client-secrets {environment} with the header given (NULL: a
 * fresh key). */
static struct harness_resp *
secret_post(const struct devacct *d, const char *client, const char *env, const char *idem)
{
	const char *h[2] = { idem ? idem : harness_idem_header(), NULL };
	char *path = secrets_path(client, ""), body[96];
	struct harness_resp *r;

	snprintf(body, sizeof(body), "{\"environment\":\"%s\"}", env);
	r = devacct_jwt(d, "POST", path, body, h);
	free(path);
	return r;
}

/* Create and return the plaintext key (malloc'ed); 201 expected. */
static char *
secret_new(const struct devacct *d, const char *client, const char *env)
{
	struct harness_resp *r = secret_post(d, client, env, NULL);
	char *key;

	harness_assert_status(r, 201);
	key = strdup(devacct_str(r, "secret.secret"));
	harness_resp_free(r);
	return key;
}

static struct harness_resp *
rotate(const struct devacct *d, const char *client, const char *env, const char *idem)
{
	const char *h[2] = { idem ? idem : harness_idem_header(), NULL };
	char *suffix = str_cat3("/", env, "/rotate"), *path = secrets_path(client, suffix);
	struct harness_resp *r = devacct_call("POST", "api", path, devacct_bearer(d->access),
	    NULL, h);

	free(path);
	free(suffix);
	return r;
}

/* The status of GET /v1/identity with this Authorization on host. */
static long
identity_status(const char *host, const char *auth)
{
	struct harness_resp *r = devacct_call("GET", host, "/v1/identity", auth, NULL, NULL);
	long s = r->status;

	if (s != 200)
		ck_assert_msg(harness_check_coded(r, s, NULL) == NULL, "%s",
		    harness_check_coded(r, s, NULL));
	harness_resp_free(r);
	return s;
}

static const char *
host_of(const char *env)
{
	return strcmp(env, "sandbox") == 0 ? "sandbox" : "api";
}

static long
key_status(const char *key, const char *env)
{
	return identity_status(host_of(env), devacct_bearer(key));
}

static long long
live_count(const char *client, const char *env)
{
	return devacct_sql_int("SELECT count(*) FROM client_secrets WHERE client_id = $1"
	    " AND environment = $2 AND revoked_at IS NULL", client, env);
}

/* ------------------------------------------------------------------ */
/* Create                                                              */

START_TEST(create_sandbox)
{
	char *client = devacct_client_new(&dev_b);
	struct harness_resp *r = secret_post(&dev_b, client, "sandbox", NULL);
	const char *key, *prefix;

	harness_assert_status(r, 201);
	harness_assert_common(r);
	ck_assert(json_object_get_boolean(harness_json_get(r, "success")));
	ck_assert_msg(strncmp(devacct_str(r, "secret.id"), "sec_", 4) == 0, "%s", r->body);
	ck_assert_pstr_eq(devacct_str(r, "secret.clientId"), client);
	ck_assert_pstr_eq(devacct_str(r, "secret.environment"), "sandbox");
	ck_assert_ptr_nonnull(devacct_str(r, "secret.createdAt"));
	key = devacct_str(r, "secret.secret");
	prefix = devacct_str(r, "secret.prefix");
	ck_assert_ptr_nonnull(key);
	ck_assert_ptr_nonnull(prefix);
	ck_assert_msg(strncmp(key, "bds_sandbox_", 12) == 0, "%s", key);
	ck_assert_uint_eq(strlen(key), 12 + 43 + 6);
	ck_assert_uint_eq(strlen(prefix), 12 + 4);
	ck_assert_msg(strncmp(key, prefix, strlen(prefix)) == 0, "%s vs %s", key, prefix);
	ck_assert_int_eq(key_status(key, "sandbox"), 200);
	harness_resp_free(r);
	free(client);
}
END_TEST

/* Gating: development needs a verified e-mail, production live access. */
static const struct {
	const struct devacct	*dev;
	const char		*env;
	long			 status;
	const char		*code;
} gating[] = {
	{ &dev_b, "sandbox",		201, NULL },
	{ &dev_b, "development",	403, "EMAIL_NOT_VERIFIED" },
	{ &dev_b, "production",		403, "LIVE_ACCESS_REQUIRED" },
	{ &dev_c, "sandbox",		201, NULL },
	{ &dev_c, "development",	201, NULL },
	{ &dev_c, "production",		403, "LIVE_ACCESS_REQUIRED" },
	{ &dev_a, "sandbox",		201, NULL },
	{ &dev_a, "development",	201, NULL },
	{ &dev_a, "production",		201, NULL },
};

START_TEST(create_gating)
{
	char *client = devacct_client_new(gating[_i].dev);
	struct harness_resp *r = secret_post(gating[_i].dev, client, gating[_i].env, NULL);

	if (gating[_i].code != NULL) {
		devacct_assert_iam(r, gating[_i].status, gating[_i].code);
		ck_assert_int_eq(live_count(client, gating[_i].env), 0);
	} else {
		char prefix[32];

		harness_assert_status(r, 201);
		snprintf(prefix, sizeof(prefix), "bds_%s_", gating[_i].env);
		ck_assert_msg(strncmp(devacct_str(r, "secret.secret"), prefix, strlen(prefix)) == 0,
		    "%s", r->body);
		ck_assert_int_eq(key_status(devacct_str(r, "secret.secret"), gating[_i].env), 200);
		ck_assert_int_eq(live_count(client, gating[_i].env), 1);
	}
	harness_resp_free(r);
	free(client);
}
END_TEST

/* One live secret per (client, environment): rotate instead. */
START_TEST(create_exists)
{
	char *client = devacct_client_new(&dev_a);
	char *key = secret_new(&dev_a, client, "sandbox");
	struct harness_resp *r = secret_post(&dev_a, client, "sandbox", NULL);

	devacct_assert_iam(r, 409, "CLIENT_SECRET_EXISTS");
	harness_resp_free(r);
	ck_assert_int_eq(live_count(client, "sandbox"), 1);
	ck_assert_int_eq(key_status(key, "sandbox"), 200);
	/* another environment is another slot */
	free(secret_new(&dev_a, client, "development"));
	free(key);
	free(client);
}
END_TEST

/* The same Idempotency-Key again: 409 not replayable, nothing changes. */
START_TEST(create_idempotency)
{
	char *client = devacct_client_new(&dev_a);
	char hdr[96];
	struct harness_resp *r;
	char *key;

	snprintf(hdr, sizeof(hdr), "%s", harness_idem_header());
	r = secret_post(&dev_a, client, "sandbox", hdr);
	harness_assert_status(r, 201);
	key = strdup(devacct_str(r, "secret.secret"));
	harness_resp_free(r);

	for (int i = 0; i < 2; i++) {
		r = secret_post(&dev_a, client, "sandbox", hdr);
		devacct_assert_iam(r, 409, "IDEMPOTENCY_KEY_NOT_REPLAYABLE");
		ck_assert_msg(strstr(r->body, key) == NULL, "the key came back: %s", r->body);
		harness_resp_free(r);
	}
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM client_secrets WHERE client_id = $1",
	    client, NULL), 1);
	ck_assert_int_eq(key_status(key, "sandbox"), 200);

	/* after a revoke the old key still does not create a second secret */
	{
		char *path = secrets_path(client, "/sandbox");

		r = devacct_jwt(&dev_a, "DELETE", path, NULL, NULL);
		harness_assert_status(r, 200);
		harness_resp_free(r);
		free(path);
	}
	r = secret_post(&dev_a, client, "sandbox", hdr);
	devacct_assert_iam(r, 409, "IDEMPOTENCY_KEY_NOT_REPLAYABLE");
	harness_resp_free(r);
	ck_assert_int_eq(live_count(client, "sandbox"), 0);
	free(key);
	free(client);
}
END_TEST

#define X16	"xxxxxxxxxxxxxxxx"
#define X64	X16 X16 X16 X16
#define X256	X64 X64 X64 X64		/* one over the Idempotency-Key limit */
#define X5120	X256 X256 X256 X256 X256 X256 X256 X256 X256 X256 \
		X256 X256 X256 X256 X256 X256 X256 X256 X256 X256

/* Bad bodies and headers on create: 400 naming what is wrong. */
static const struct {
	const char	*body;		/* NULL: no body */
	const char	*idem;		/* header line; NULL: a fresh key; "": none */
	const char	*error_code;
	const char	*field;
	const char	*code;
} bad_create[] = {
	{ "{}",					NULL, "VALIDATION_ERROR", "environment", "required" },
	{ NULL,					NULL, "VALIDATION_ERROR", "environment", "required" },
	{ "{\"environment\":1}",		NULL, "VALIDATION_ERROR", "environment", "invalid_type" },
	{ "{\"environment\":null}",		NULL, "VALIDATION_ERROR", "environment", "invalid_type" },
	{ "{\"environment\":\"staging\"}",	NULL, "VALIDATION_ERROR", "environment", "invalid_enum" },
	{ "{\"environment\":\"Sandbox\"}",	NULL, "VALIDATION_ERROR", "environment", "invalid_enum" },
	{ "{\"environment\":\"" X5120 "\"}",	NULL, "VALIDATION_ERROR", "environment", "too_long" },
	{ "{\"environment\":\"sandbox\",\"secret\":\"bds_x\"}", NULL, "VALIDATION_ERROR", "secret", "unknown_field" },
	{ "{\"environment\":\"sandbox\",\"client_id\":\"cli_x\"}", NULL, "VALIDATION_ERROR", "client_id", "unknown_field" },
	{ "[\"sandbox\"]",			NULL, "VALIDATION_ERROR", "", "invalid_type" },
	{ "{\"environment\":\"\xff\"}",		NULL, "INVALID_UTF8", NULL, NULL },
	{ "{\"environment\":\"sandbox\"",	NULL, "INVALID_JSON", NULL, NULL },
	{ "{\"environment\":\"sandbox\"}",	"", "VALIDATION_ERROR", "Idempotency-Key", "required" },
	{ "{\"environment\":\"sandbox\"}",	"Idempotency-Key: " X256, "VALIDATION_ERROR", "Idempotency-Key", "invalid_format" },
	{ "{\"environment\":\"sandbox\"}",	"Idempotency-Key: caf\xc3\xa9", "VALIDATION_ERROR", "Idempotency-Key", "invalid_format" },
};

START_TEST(create_bad_input)
{
	char *client = devacct_client_new(&dev_a), *path = secrets_path(client, "");
	const char *h[2] = { NULL, NULL };
	struct harness_resp *r;

	if (bad_create[_i].idem == NULL)
		h[0] = harness_idem_header();
	else if (*bad_create[_i].idem != '\0')
		h[0] = bad_create[_i].idem;
	r = devacct_jwt(&dev_a, "POST", path, bad_create[_i].body, h);
	devacct_assert_iam(r, 400, bad_create[_i].error_code);
	if (bad_create[_i].field != NULL)
		devacct_assert_error(r, bad_create[_i].field, bad_create[_i].code);
	harness_resp_free(r);
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM client_secrets WHERE client_id = $1",
	    client, NULL), 0);
	free(path);
	free(client);
}
END_TEST

/* ------------------------------------------------------------------ */
/* List, get, revoke                                                   */

START_TEST(list_and_get_metadata_only)
{
	char *client = devacct_client_new(&dev_a), *path = secrets_path(client, "");
	char *k1 = secret_new(&dev_a, client, "sandbox");
	char *k2 = secret_new(&dev_a, client, "production");
	struct harness_resp *r = devacct_jwt(&dev_a, "GET", path, NULL, NULL);
	struct json_object *arr;
	char *gpath;

	harness_assert_status(r, 200);
	harness_assert_common(r);
	ck_assert(json_object_get_boolean(harness_json_get(r, "success")));
	arr = harness_json_get(r, "secrets");
	ck_assert_int_eq(json_object_array_length(arr), 2);
	ck_assert_pstr_eq(devacct_str(r, "secrets.0.environment"), "production");
	ck_assert_pstr_eq(devacct_str(r, "secrets.1.environment"), "sandbox");
	ck_assert_pstr_eq(devacct_str(r, "secrets.0.clientId"), client);
	ck_assert_ptr_nonnull(devacct_str(r, "secrets.0.id"));
	ck_assert_ptr_nonnull(devacct_str(r, "secrets.0.prefix"));
	ck_assert_ptr_nonnull(devacct_str(r, "secrets.0.createdAt"));
	ck_assert_ptr_null(devacct_json(r, "secrets.0.secret"));
	ck_assert_msg(strstr(r->body, k1) == NULL && strstr(r->body, k2) == NULL &&
	    strstr(r->body, "hash") == NULL, "%s", r->body);
	harness_resp_free(r);

	gpath = secrets_path(client, "/production");
	r = devacct_jwt(&dev_a, "GET", gpath, NULL, NULL);
	harness_assert_status(r, 200);
	ck_assert_pstr_eq(devacct_str(r, "secret.environment"), "production");
	ck_assert_pstr_eq(devacct_str(r, "secret.clientId"), client);
	ck_assert_ptr_null(devacct_json(r, "secret.secret"));
	ck_assert_msg(strstr(r->body, k2) == NULL, "%s", r->body);
	ck_assert_msg(strncmp(k2, devacct_str(r, "secret.prefix"),
	    strlen(devacct_str(r, "secret.prefix"))) == 0, "%s", r->body);
	harness_resp_free(r);
	free(gpath);

	gpath = secrets_path(client, "/development");
	r = devacct_jwt(&dev_a, "GET", gpath, NULL, NULL);
	devacct_assert_iam(r, 404, "CLIENT_SECRET_NOT_FOUND");
	harness_resp_free(r);
	free(gpath);

	/* a client without secrets lists none */
	{
		char *c2 = devacct_client_new(&dev_a), *p2 = secrets_path(c2, "");

		r = devacct_jwt(&dev_a, "GET", p2, NULL, NULL);
		harness_assert_status(r, 200);
		ck_assert_int_eq(json_object_array_length(harness_json_get(r, "secrets")), 0);
		harness_resp_free(r);
		free(p2);
		free(c2);
	}
	free(k1);
	free(k2);
	free(path);
	free(client);
}
END_TEST

START_TEST(revoke)
{
	char *client = devacct_client_new(&dev_a), *path = secrets_path(client, "/development");
	char *key = secret_new(&dev_a, client, "development"), *key2;
	struct harness_resp *r;

	ck_assert_int_eq(key_status(key, "development"), 200);
	r = devacct_jwt(&dev_a, "DELETE", path, NULL, NULL);
	harness_assert_status(r, 200);
	harness_assert_common(r);
	ck_assert(json_object_get_boolean(harness_json_get(r, "success")));
	ck_assert_pstr_eq(devacct_str(r, "secret.environment"), "development");
	ck_assert_ptr_nonnull(devacct_str(r, "secret.revokedAt"));
	ck_assert_msg(strstr(r->body, key) == NULL, "%s", r->body);
	harness_resp_free(r);

	/* at once */
	ck_assert_int_eq(key_status(key, "development"), 401);
	r = devacct_jwt(&dev_a, "GET", path, NULL, NULL);
	devacct_assert_iam(r, 404, "CLIENT_SECRET_NOT_FOUND");
	harness_resp_free(r);
	r = devacct_jwt(&dev_a, "DELETE", path, NULL, NULL);
	devacct_assert_iam(r, 404, "CLIENT_SECRET_NOT_FOUND");
	harness_resp_free(r);

	/* the slot is free again */
	key2 = secret_new(&dev_a, client, "development");
	ck_assert_int_eq(key_status(key2, "development"), 200);
	ck_assert_int_eq(key_status(key, "development"), 401);
	free(key2);
	free(key);
	free(path);
	free(client);
}
END_TEST

/*
 * A key every worker has cached (its principal kept, its liveness checked
 * with the request's first query) is refused at once after a revoke, on
 * every kind of request: a read whose check rides with its query, a read
 * refused by validation before any query, a write (nothing written), and
 * a ROUTE_RESIGNIN read (NEEDS_RESIGNIN).
 */
START_TEST(revoke_cached_key)
{
	char *client = devacct_client_new(&dev_a), *path = secrets_path(client, "/sandbox");
	char *key = secret_new(&dev_a, client, "sandbox");
	const char *extra[] = { harness_idem_header(), NULL };
	struct harness_resp *r;

	/* more requests than workers: each worker has the key cached */
	for (int i = 0; i < 24; i++)
		ck_assert_int_eq(key_status(key, "sandbox"), 200);
	r = devacct_jwt(&dev_a, "DELETE", path, NULL, NULL);
	harness_assert_status(r, 200);
	harness_resp_free(r);

	for (int i = 0; i < 8; i++) {
		ck_assert_int_eq(key_status(key, "sandbox"), 401);
		r = devacct_call("GET", "sandbox", "/v1/webhook-endpoints", devacct_bearer(key),
		    NULL, NULL);
		harness_assert_coded(r, 401, "UNAUTHORIZED");
		harness_resp_free(r);
		r = devacct_call("GET", "sandbox", "/v1/links?limit=0", devacct_bearer(key),
		    NULL, NULL);
		harness_assert_coded(r, 401, "UNAUTHORIZED");
		harness_resp_free(r);
		r = devacct_call("GET", "sandbox", "/v1/links/link_01900000-0000-7000-8000-000000000001",
		    devacct_bearer(key), NULL, NULL);
		harness_assert_coded(r, 401, "NEEDS_RESIGNIN");
		harness_resp_free(r);
		r = devacct_call("POST", "sandbox", "/v1/webhook-endpoints", devacct_bearer(key),
		    "{\"url\":\"https://example.com/hook\",\"events\":[\"*\"]}", extra);
		harness_assert_coded(r, 401, "UNAUTHORIZED");
		harness_resp_free(r);
	}
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM webhooks"
	    " WHERE client_id = $1", client, NULL), 0);
	free(key);
	free(path);
	free(client);
}
END_TEST

/*
 * Revocation reaches every worker's key cache whoever makes it: an UPDATE
 * outside the API, a client's delete cascading to its secrets. A revoke of
 * another key leaves a cached live key working (its next request confirms
 * it by a query and serves it).
 */
START_TEST(revoke_cached_key_by_sql)
{
	char *client = devacct_client_new(&dev_a), *other = devacct_client_new(&dev_a);
	char *key = secret_new(&dev_a, client, "sandbox");
	char *live = secret_new(&dev_a, other, "sandbox");
	char *dev = secret_new(&dev_a, other, "development");

	for (int i = 0; i < 24; i++) {
		ck_assert_int_eq(key_status(key, "sandbox"), 200);
		ck_assert_int_eq(key_status(live, "sandbox"), 200);
		ck_assert_int_eq(key_status(dev, "development"), 200);
	}
	devacct_sql_exec("UPDATE client_secrets SET revoked_at = now()"
	    " WHERE client_id = $1 AND revoked_at IS NULL", client, NULL);
	for (int i = 0; i < 16; i++) {
		ck_assert_int_eq(key_status(key, "sandbox"), 401);
		ck_assert_int_eq(key_status(live, "sandbox"), 200);
	}
	/* the other client deleted: both its keys stop at once */
	devacct_sql_exec("DELETE FROM clients WHERE id = $1", other, NULL);
	for (int i = 0; i < 16; i++) {
		ck_assert_int_eq(key_status(live, "sandbox"), 401);
		ck_assert_int_eq(key_status(dev, "development"), 401);
	}
	free(dev);
	free(live);
	free(key);
	free(other);
	free(client);
}
END_TEST

/* The environment in the path must be one of the three. */
static const struct {
	const char	*method;
	const char	*suffix;
} bad_env_paths[] = {
	{ "GET",	"/staging" },
	{ "DELETE",	"/live" },
	{ "POST",	"/Sandbox/rotate" },
	{ "GET",	"/%C3%A9" },
	{ "DELETE",	"/sandbox%20" },
};

START_TEST(bad_environment_in_path)
{
	static const char *const h[] = { "Idempotency-Key: env-path", NULL };
	char *client = devacct_client_new(&dev_a), *path = secrets_path(client, bad_env_paths[_i].suffix);
	struct harness_resp *r = devacct_call(bad_env_paths[_i].method, "api", path,
	    devacct_bearer(dev_a.access), NULL, h);

	devacct_assert_iam(r, 400, "VALIDATION_ERROR");
	devacct_assert_error(r, "environment", "invalid_enum");
	harness_resp_free(r);
	free(path);
	free(client);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Rotate                                                              */

START_TEST(rotate_once)
{
	char *client = devacct_client_new(&dev_a);
	char *old = secret_new(&dev_a, client, "production"), *old_id, *fresh;
	struct harness_resp *r;

	old_id = devacct_sql_value("SELECT id FROM client_secrets WHERE client_id = $1"
	    " AND environment = $2 AND revoked_at IS NULL", client, "production");
	r = rotate(&dev_a, client, "production", NULL);
	harness_assert_status(r, 200);
	harness_assert_common(r);
	ck_assert(json_object_get_boolean(harness_json_get(r, "success")));
	ck_assert_pstr_eq(devacct_str(r, "secret.environment"), "production");
	ck_assert_pstr_eq(devacct_str(r, "secret.clientId"), client);
	ck_assert_pstr_eq(devacct_str(r, "secret.rotatedFrom"), old_id);
	ck_assert_msg(strncmp(devacct_str(r, "secret.secret"), "bds_production_", 15) == 0,
	    "%s", r->body);
	fresh = strdup(devacct_str(r, "secret.secret"));
	ck_assert_str_ne(fresh, old);
	harness_resp_free(r);

	/* one atomic swap: the old key fails at once, the new one works */
	ck_assert_int_eq(key_status(old, "production"), 401);
	ck_assert_int_eq(key_status(fresh, "production"), 200);
	ck_assert_int_eq(live_count(client, "production"), 1);
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM client_secrets WHERE id = $1"
	    " AND revoked_at IS NOT NULL", old_id, NULL), 1);
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM client_secrets"
	    " WHERE rotated_from = $1 AND revoked_at IS NULL", old_id, NULL), 1);
	free(old_id);
	free(fresh);
	free(old);
	free(client);
}
END_TEST

/* A rotated secret is not rotated again within the settle window; after
 * it, it is. */
START_TEST(rotate_settle_window)
{
	char *client = devacct_client_new(&dev_a), *key = secret_new(&dev_a, client, "sandbox"), *k2;
	struct harness_resp *r = rotate(&dev_a, client, "sandbox", NULL);

	harness_assert_status(r, 200);
	k2 = strdup(devacct_str(r, "secret.secret"));
	harness_resp_free(r);

	r = rotate(&dev_a, client, "sandbox", NULL);
	devacct_assert_iam(r, 409, "CLIENT_SECRET_ROTATION_CONFLICT");
	harness_resp_free(r);
	ck_assert_int_eq(key_status(k2, "sandbox"), 200);
	ck_assert_int_eq(live_count(client, "sandbox"), 1);

	harness_sleep_ms(SETTLE_MS + 300);
	r = rotate(&dev_a, client, "sandbox", NULL);
	harness_assert_status(r, 200);
	ck_assert_int_eq(key_status(devacct_str(r, "secret.secret"), "sandbox"), 200);
	harness_resp_free(r);
	ck_assert_int_eq(key_status(k2, "sandbox"), 401);
	ck_assert_int_eq(key_status(key, "sandbox"), 401);
	free(k2);
	free(key);
	free(client);
}
END_TEST

START_TEST(rotate_errors)
{
	char *client = devacct_client_new(&dev_a), *key = secret_new(&dev_a, client, "sandbox");
	char *path = secrets_path(client, "/sandbox/rotate"), hdr[96];
	struct harness_resp *r;

	/* Idempotency-Key is required */
	r = devacct_call("POST", "api", path, devacct_bearer(dev_a.access), NULL, NULL);
	devacct_assert_iam(r, 400, "VALIDATION_ERROR");
	devacct_assert_error(r, "Idempotency-Key", "required");
	harness_resp_free(r);
	/* rotation takes no body */
	{
		const char *h[2] = { harness_idem_header(), NULL };

		r = devacct_jwt(&dev_a, "POST", path, "{\"environment\":\"sandbox\"}", h);
		devacct_assert_iam(r, 400, "VALIDATION_ERROR");
		devacct_assert_error(r, "environment", "unknown_field");
		harness_resp_free(r);
	}
	ck_assert_int_eq(key_status(key, "sandbox"), 200);

	/* a retry with the same key: not replayable, nothing changes */
	snprintf(hdr, sizeof(hdr), "%s", harness_idem_header());
	r = rotate(&dev_a, client, "sandbox", hdr);
	harness_assert_status(r, 200);
	{
		char *fresh = strdup(devacct_str(r, "secret.secret"));

		harness_resp_free(r);
		harness_sleep_ms(SETTLE_MS + 300);	/* not the window's 409 */
		r = rotate(&dev_a, client, "sandbox", hdr);
		devacct_assert_iam(r, 409, "IDEMPOTENCY_KEY_NOT_REPLAYABLE");
		harness_resp_free(r);
		ck_assert_int_eq(key_status(fresh, "sandbox"), 200);
		ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM client_secrets"
		    " WHERE client_id = $1", client, NULL), 2);
		free(fresh);
	}

	/* nothing to rotate */
	r = rotate(&dev_a, client, "development", NULL);
	devacct_assert_iam(r, 404, "CLIENT_SECRET_NOT_FOUND");
	harness_resp_free(r);
	/* gating applies to rotation too */
	{
		char *cb = devacct_client_new(&dev_b);

		r = rotate(&dev_b, cb, "production", NULL);
		devacct_assert_iam(r, 403, "LIVE_ACCESS_REQUIRED");
		harness_resp_free(r);
		r = rotate(&dev_b, cb, "development", NULL);
		devacct_assert_iam(r, 403, "EMAIL_NOT_VERIFIED");
		harness_resp_free(r);
		free(cb);
	}
	free(path);
	free(key);
	free(client);
}
END_TEST

struct rotation {
	const char		*client;
	pthread_barrier_t	*go;
	struct harness_resp	*resp;
};

static void *
rotate_thread(void *arg)
{
	struct rotation *x = arg;

	pthread_barrier_wait(x->go);
	x->resp = rotate(&dev_a, x->client, "sandbox", NULL);
	return NULL;
}

/* 20 rotations at once, each with its own Idempotency-Key: exactly one
 * 200, 19 × 409 CLIENT_SECRET_ROTATION_CONFLICT; then one live secret,
 * whose key works, and the pre-rotation key fails. */
START_TEST(rotate_parallel)
{
	char *client = devacct_client_new(&dev_a), *old = secret_new(&dev_a, client, "sandbox");
	struct rotation xs[ROTATIONS];
	pthread_t th[ROTATIONS];
	pthread_barrier_t go;
	const char *winner = NULL;
	int ok = 0, conflict = 0;

	pthread_barrier_init(&go, NULL, ROTATIONS);
	for (int i = 0; i < ROTATIONS; i++) {
		xs[i].client = client;
		xs[i].go = &go;
		xs[i].resp = NULL;
		ck_assert_int_eq(pthread_create(&th[i], NULL, rotate_thread, &xs[i]), 0);
	}
	for (int i = 0; i < ROTATIONS; i++)
		pthread_join(th[i], NULL);
	pthread_barrier_destroy(&go);

	for (int i = 0; i < ROTATIONS; i++) {
		struct harness_resp *r = xs[i].resp;

		if (r->status == 200) {
			ok++;
			winner = devacct_str(r, "secret.secret");
		} else {
			devacct_assert_iam(r, 409, "CLIENT_SECRET_ROTATION_CONFLICT");
			conflict++;
		}
	}
	ck_assert_int_eq(ok, 1);
	ck_assert_int_eq(conflict, ROTATIONS - 1);
	ck_assert_int_eq(live_count(client, "sandbox"), 1);
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM client_secrets WHERE client_id = $1",
	    client, NULL), 2);
	ck_assert_int_eq(key_status(winner, "sandbox"), 200);
	ck_assert_int_eq(key_status(old, "sandbox"), 401);
	/* the losers kept no Idempotency-Key: the create's and the winner's
	 * (one owner scope: the developer; the route names the client) */
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM idempotency_keys"
	    " WHERE owner_id = $1 AND route LIKE '%/' || $2 || '/client-secrets%'",
	    dev_a.user_id, client), 2);
	for (int i = 0; i < ROTATIONS; i++)
		harness_resp_free(xs[i].resp);
	free(old);
	free(client);
}
END_TEST

/* ------------------------------------------------------------------ */
/* The key as a credential                                             */

struct keys {
	char	*client, *other_client;
	char	*sandbox, *development, *production, *other_sandbox;
};

static void
keys_make(struct keys *k)
{
	k->client = devacct_client_new(&dev_a);
	k->other_client = devacct_client_new(&dev_a);
	k->sandbox = secret_new(&dev_a, k->client, "sandbox");
	k->development = secret_new(&dev_a, k->client, "development");
	k->production = secret_new(&dev_a, k->client, "production");
	k->other_sandbox = secret_new(&dev_a, k->other_client, "sandbox");
}

static void
keys_free(struct keys *k)
{
	free(k->client);
	free(k->other_client);
	free(k->sandbox);
	free(k->development);
	free(k->production);
	free(k->other_sandbox);
}

/* Bearer and Basic, sandbox and live hosts. */
START_TEST(key_forms_and_hosts)
{
	struct keys k;
	char *basic, *bad;

	keys_make(&k);
	/* Bearer: each key only on its host */
	ck_assert_int_eq(identity_status("sandbox", devacct_bearer(k.sandbox)), 200);
	ck_assert_int_eq(identity_status("api", devacct_bearer(k.sandbox)), 401);
	ck_assert_int_eq(identity_status("api", devacct_bearer(k.development)), 200);
	ck_assert_int_eq(identity_status("sandbox", devacct_bearer(k.development)), 401);
	ck_assert_int_eq(identity_status("api", devacct_bearer(k.production)), 200);
	ck_assert_int_eq(identity_status("sandbox", devacct_bearer(k.production)), 401);
	/* scheme names are case-insensitive */
	bad = str_cat3("bearer ", k.sandbox, "");
	ck_assert_int_eq(identity_status("sandbox", bad), 200);
	free(bad);

	/* Basic client_id:key */
	basic = devacct_basic(k.client, k.sandbox);
	ck_assert_int_eq(identity_status("sandbox", basic), 200);
	free(basic);
	basic = devacct_basic(k.client, k.production);
	ck_assert_int_eq(identity_status("api", basic), 200);
	free(basic);
	/* ... with another client's id, a real one or not: 401 */
	basic = devacct_basic(k.other_client, k.sandbox);
	ck_assert_int_eq(identity_status("sandbox", basic), 401);
	free(basic);
	basic = devacct_basic("cli_0190f5d2-0000-7000-8000-000000000000", k.sandbox);
	ck_assert_int_eq(identity_status("sandbox", basic), 401);
	free(basic);
	basic = devacct_basic("", k.sandbox);
	ck_assert_int_eq(identity_status("sandbox", basic), 401);
	free(basic);
	ck_assert_int_eq(identity_status("sandbox", "Basic !!!notbase64"), 401);

	/* malformed keys and a bad checksum */
	ck_assert_int_eq(identity_status("sandbox", NULL), 401);
	ck_assert_int_eq(identity_status("sandbox", "Bearer "), 401);
	ck_assert_int_eq(identity_status("sandbox", "Bearer bds_sandbox_short"), 401);
	ck_assert_int_eq(identity_status("sandbox", "Token abc"), 401);
	bad = strdup(k.sandbox);
	bad[strlen(bad) - 1] = bad[strlen(bad) - 1] == 'A' ? 'B' : 'A';
	ck_assert_int_eq(identity_status("sandbox", devacct_bearer(bad)), 401);
	bad[strlen(bad) - 1] = k.sandbox[strlen(bad) - 1];
	bad[20] = bad[20] == 'A' ? 'B' : 'A';	/* the body: checksum no longer fits */
	ck_assert_int_eq(identity_status("sandbox", devacct_bearer(bad)), 401);
	free(bad);
	bad = str_cat3(k.sandbox, "x", "");
	ck_assert_int_eq(identity_status("sandbox", devacct_bearer(bad)), 401);
	free(bad);
	/* a developer's access token is not a client credential */
	ck_assert_int_eq(identity_status("api", devacct_bearer(dev_a.access)), 401);
	keys_free(&k);
}
END_TEST

START_TEST(identity)
{
	struct keys k;
	struct harness_resp *r;
	char *cb, *kb;

	keys_make(&k);
	r = devacct_call("GET", "sandbox", "/v1/identity", devacct_bearer(k.sandbox), NULL, NULL);
	harness_assert_status(r, 200);
	harness_assert_common(r);
	ck_assert_pstr_eq(harness_json_string(r, "client_id"), k.client);
	ck_assert_pstr_eq(harness_json_string(r, "environment"), "sandbox");
	ck_assert(json_object_get_boolean(harness_json_get(r, "email_verified")));
	ck_assert_pstr_eq(harness_json_string(r, "live_access"), "granted");
	ck_assert(json_object_get_boolean(harness_json_get(r, "live_access_granted")));
	ck_assert_msg(strstr(r->body, k.sandbox) == NULL, "%s", r->body);
	harness_resp_free(r);

	r = devacct_call("GET", "api", "/v1/identity", devacct_bearer(k.production), NULL, NULL);
	harness_assert_status(r, 200);
	ck_assert_pstr_eq(harness_json_string(r, "environment"), "production");
	harness_resp_free(r);

	/* developer B: neither verified nor live */
	cb = devacct_client_new(&dev_b);
	kb = secret_new(&dev_b, cb, "sandbox");
	r = devacct_call("GET", "sandbox", "/v1/identity", devacct_bearer(kb), NULL, NULL);
	harness_assert_status(r, 200);
	ck_assert_pstr_eq(harness_json_string(r, "client_id"), cb);
	ck_assert(!json_object_get_boolean(harness_json_get(r, "email_verified")));
	ck_assert_pstr_eq(harness_json_string(r, "live_access"), "none");
	ck_assert(!json_object_get_boolean(harness_json_get(r, "live_access_granted")));
	harness_resp_free(r);

	/* the client API's coded envelope, and no query parameters */
	r = devacct_call("GET", "sandbox", "/v1/identity", NULL, NULL, NULL);
	harness_assert_coded(r, 401, "UNAUTHORIZED");
	ck_assert_ptr_null(harness_json_get(r, "statusCode"));
	harness_resp_free(r);
	r = devacct_call("GET", "sandbox", "/v1/identity?page=1", devacct_bearer(kb), NULL, NULL);
	harness_assert_coded(r, 400, "VALIDATION_ERROR");
	harness_resp_free(r);
	free(kb);
	free(cb);
	keys_free(&k);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Tenancy                                                             */

START_TEST(tenant_isolation)
{
	static const struct {
		const char	*method;
		const char	*suffix;
		int		 body;
	} routes[] = {
		{ "POST",	"",			1 },
		{ "GET",	"",			0 },
		{ "GET",	"/sandbox",		0 },
		{ "DELETE",	"/sandbox",		0 },
		{ "POST",	"/sandbox/rotate",	0 },
		{ "GET",	"/development",		0 },
	};
	char *client = devacct_client_new(&dev_a), *key = secret_new(&dev_a, client, "sandbox");

	for (size_t i = 0; i < sizeof(routes) / sizeof(routes[0]); i++) {
		const char *h[2] = { harness_idem_header(), NULL };
		char *path = secrets_path(client, routes[i].suffix);
		struct harness_resp *r = devacct_jwt(&dev_b, routes[i].method, path,
		    routes[i].body ? "{\"environment\":\"sandbox\"}" : NULL, h);

		devacct_assert_iam(r, 404, "CLIENT_NOT_FOUND");
		ck_assert_msg(strstr(r->body, key) == NULL, "%s", r->body);
		harness_resp_free(r);
		free(path);
	}
	/* A's secret is untouched */
	ck_assert_int_eq(key_status(key, "sandbox"), 200);
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM client_secrets WHERE client_id = $1",
	    client, NULL), 1);
	free(key);
	free(client);
}
END_TEST

START_TEST(auth_required)
{
	static const char *const h[] = { "Idempotency-Key: no-auth", NULL };
	char *client = devacct_client_new(&dev_a), *key = secret_new(&dev_a, client, "sandbox");
	char *path = secrets_path(client, "");
	struct harness_resp *r;

	r = devacct_call("GET", "api", path, NULL, NULL, NULL);
	devacct_assert_iam(r, 401, "UNAUTHORIZED");
	harness_resp_free(r);
	r = devacct_call("POST", "api", path, NULL, "{\"environment\":\"sandbox\"}", h);
	devacct_assert_iam(r, 401, "UNAUTHORIZED");
	harness_resp_free(r);
	/* the client's own API key does not manage secrets */
	r = devacct_call("GET", "api", path, devacct_bearer(key), NULL, NULL);
	devacct_assert_iam(r, 401, "UNAUTHORIZED");
	harness_resp_free(r);
	free(path);
	free(key);
	free(client);
}
END_TEST

/* ------------------------------------------------------------------ */
/* No plaintext at rest                                                */

/* Bytes of needle in the file at path (regular files only). */
static int
file_has(const char *path, const char *needle)
{
	FILE *f = fopen(path, "rb");
	size_t nlen = strlen(needle), cap = 1 << 20, keep = 0, n;
	char *buf;
	int found = 0;

	if (f == NULL)
		return 0;
	buf = malloc(cap);
	ck_assert_ptr_nonnull(buf);
	while (!found && (n = fread(buf + keep, 1, cap - keep, f)) > 0) {
		size_t len = keep + n;

		found = memmem(buf, len, needle, nlen) != NULL;
		keep = len < nlen ? len : nlen - 1;
		memmove(buf, buf + len - keep, keep);
	}
	free(buf);
	fclose(f);
	return found;
}

/* Every file under dir holding needle; returns the count and names the
 * first in *where (malloc'ed). */
static int
tree_has(const char *dir, const char *needle, char **where, size_t *files)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	if (d == NULL)
		return 0;
	while ((e = readdir(d)) != NULL) {
		char *p;
		struct stat st;

		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		p = str_cat3(dir, "/", e->d_name);
		if (lstat(p, &st) == 0) {
			if (S_ISDIR(st.st_mode)) {
				n += tree_has(p, needle, where, files);
			} else if (S_ISREG(st.st_mode)) {
				(*files)++;
				if (file_has(p, needle)) {
					n++;
					if (*where == NULL)
						*where = strdup(p);
				}
			}
		}
		free(p);
	}
	closedir(d);
	return n;
}

START_TEST(no_plaintext_at_rest)
{
	char *client = devacct_client_new(&dev_a);
	char *keys[5];
	size_t nkeys = 0;
	PGresult *tables;
	struct harness_resp *r;

	keys[nkeys++] = secret_new(&dev_a, client, "sandbox");
	keys[nkeys++] = secret_new(&dev_a, client, "development");
	keys[nkeys++] = secret_new(&dev_a, client, "production");
	r = rotate(&dev_a, client, "production", NULL);
	harness_assert_status(r, 200);
	keys[nkeys++] = strdup(devacct_str(r, "secret.secret"));
	harness_resp_free(r);
	/* used, the way a client uses them, good and bad */
	for (size_t i = 0; i < nkeys; i++) {
		const char *env = strncmp(keys[i], "bds_sandbox_", 12) == 0 ? "sandbox" : "production";
		char *basic = devacct_basic(client, keys[i]);

		(void)identity_status(host_of(env), devacct_bearer(keys[i]));
		(void)identity_status("api", basic);
		(void)identity_status("sandbox", basic);
		free(basic);
	}
	/* make the stack write out what it holds */
	devacct_sql_exec("CHECKPOINT", NULL, NULL);

	tables = PQexec(devacct_pg(), "SELECT quote_ident(table_schema) || '.' ||"
	    " quote_ident(table_name) FROM information_schema.tables"
	    " WHERE table_schema NOT IN ('pg_catalog', 'information_schema')"
	    " AND table_type = 'BASE TABLE'");
	ck_assert_int_eq(PQresultStatus(tables), PGRES_TUPLES_OK);
	ck_assert_int_ge(PQntuples(tables), 10);
	for (size_t i = 0; i < nkeys; i++) {
		unsigned char h[32];
		char hex[65], *where = NULL;
		const char *secret_part = keys[i] + strcspn(keys[i] + 4, "_") + 5 + 4;
		long long hash_rows = 0;
		size_t files = 0;
		int hits;

		crypto_sha256(keys[i], strlen(keys[i]), h);
		for (size_t b = 0; b < 32; b++)
			sprintf(hex + 2 * b, "%02x", h[b]);
		for (int t = 0; t < PQntuples(tables); t++) {
			char *q = str_cat3("SELECT count(*) FROM ", PQgetvalue(tables, t, 0),
			    " x WHERE strpos(row_to_json(x)::text, $1) > 0");

			ck_assert_msg(devacct_sql_int(q, secret_part, NULL) == 0,
			    "key %zu found in table %s", i, PQgetvalue(tables, t, 0));
			hash_rows += devacct_sql_int(q, hex, NULL);
			free(q);
		}
		/* the scan works: the hash is there, exactly once */
		ck_assert_int_eq(hash_rows, 1);
		hits = tree_has(harness_dir(), secret_part, &where, &files);
		ck_assert_msg(hits == 0, "key %zu found in %d file(s), first %s", i, hits,
		    where ? where : "?");
		ck_assert_uint_gt(files, 20);
		free(where);
	}
	PQclear(tables);
	for (size_t i = 0; i < nkeys; i++)
		free(keys[i]);
	free(client);
}
END_TEST

#define N(a) ((int)(sizeof(a) / sizeof((a)[0])))

static Suite *
secrets_suite(void)
{
	Suite *s = suite_create("e2e_secrets");
	TCase *tc = tcase_create("secrets");

	tcase_add_unchecked_fixture(tc, setup, harness_fixture_stop);
	tcase_add_checked_fixture(tc, harness_fixture_recover, NULL);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, create_sandbox);
	tcase_add_loop_test(tc, create_gating, 0, N(gating));
	tcase_add_test(tc, create_exists);
	tcase_add_test(tc, create_idempotency);
	tcase_add_loop_test(tc, create_bad_input, 0, N(bad_create));
	tcase_add_test(tc, list_and_get_metadata_only);
	tcase_add_test(tc, revoke);
	tcase_add_test(tc, revoke_cached_key);
	tcase_add_test(tc, revoke_cached_key_by_sql);
	tcase_add_loop_test(tc, bad_environment_in_path, 0, N(bad_env_paths));
	tcase_add_test(tc, rotate_once);
	tcase_add_test(tc, rotate_settle_window);
	tcase_add_test(tc, rotate_errors);
	tcase_add_test(tc, rotate_parallel);
	tcase_add_test(tc, key_forms_and_hosts);
	tcase_add_test(tc, identity);
	tcase_add_test(tc, tenant_isolation);
	tcase_add_test(tc, auth_required);
	tcase_add_test(tc, no_plaintext_at_rest);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return harness_run_suite(secrets_suite());
}
