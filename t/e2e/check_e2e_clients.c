/*
 * Clients end to end, as a developer sees them through nginx: create, list,
 * get, update, delete, the public embed-origins lookup, every input error,
 * and tenant isolation (developer B never sees developer A's clients: 404).
 * One stack; developers A and B are made once in the unchecked fixture and
 * inherited by every test.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <json-c/json.h>

#include "devacct.h"
#include "harness.h"

static struct devacct dev_a, dev_b;

static void
setup(void)
{
	struct harness_opts o;

	harness_opts_defaults(&o);
	harness_fixture_start(&o);
	devacct_legal();
	devacct_new(&dev_a, "cli-a");
	devacct_new(&dev_b, "cli-b");
}

/* tmpl with every "@LONG@" replaced by n 'x' characters (malloc'ed). */
static char *
expand(const char *tmpl, size_t n)
{
	const char *at = strstr(tmpl, "@LONG@");
	char *out;

	if (at == NULL)
		return strdup(tmpl);
	out = malloc(strlen(tmpl) + n + 1);
	ck_assert_ptr_nonnull(out);
	memcpy(out, tmpl, (size_t)(at - tmpl));
	memset(out + (at - tmpl), 'x', n);
	strcpy(out + (at - tmpl) + n, at + 6);
	return out;
}

/* POST /v1/iam/clients as d with body; 201 expected; the client id (malloc'ed). */
static char *
client_new(const struct devacct *d, const char *body)
{
	struct harness_resp *r = devacct_jwt(d, "POST", "/v1/iam/clients", body, NULL);
	char *id;

	harness_assert_status(r, 201);
	ck_assert_ptr_nonnull(devacct_str(r, "client.id"));
	id = strdup(devacct_str(r, "client.id"));
	harness_resp_free(r);
	return id;
}

static char *
path_of(const char *fmt_prefix, const char *id, const char *suffix)
{
	char *p = malloc(strlen(fmt_prefix) + strlen(id) + strlen(suffix) + 1);

	ck_assert_ptr_nonnull(p);
	sprintf(p, "%s%s%s", fmt_prefix, id, suffix);
	return p;
}

#define CLIENT_PATH(id)		path_of("/v1/iam/clients/", (id), "")
#define EMBED_PATH(id)		path_of("/v1/iam/clients/", (id), "/embed-origins")

static int
array_has(struct json_object *arr, const char *s)
{
	for (size_t i = 0; arr != NULL && i < json_object_array_length(arr); i++)
		if (strcmp(json_object_get_string(json_object_array_get_idx(arr, i)), s) == 0)
			return 1;
	return 0;
}

/* ------------------------------------------------------------------ */

START_TEST(create_full)
{
	struct harness_resp *r = devacct_jwt(&dev_a, "POST", "/v1/iam/clients",
	    "{\"name\":\"Billing app\",\"description\":\"reminders\","
	    "\"redirectUris\":[\"https://app.example.com/cb\",\"http://localhost:3000/cb\","
	    "\"http://127.0.0.1:8080/x?y=1\"],"
	    "\"allowedOrigins\":[\"https://App.Example.com:443/\",\"http://localhost:3000\"]}",
	    NULL);
	struct json_object *c;

	harness_assert_status(r, 201);
	harness_assert_common(r);
	ck_assert(json_object_get_boolean(harness_json_get(r, "success")));
	ck_assert_ptr_nonnull(harness_json_string(r, "message"));
	c = harness_json_get(r, "client");
	ck_assert_ptr_nonnull(c);
	ck_assert_msg(strncmp(devacct_str(r, "client.id"), "cli_", 4) == 0, "%s", r->body);
	ck_assert_pstr_eq(devacct_str(r, "client.name"), "Billing app");
	ck_assert_pstr_eq(devacct_str(r, "client.description"), "reminders");
	ck_assert_pstr_eq(devacct_str(r, "client.userId"), dev_a.user_id);
	ck_assert_pstr_eq(devacct_str(r, "client.redirectUris.0"), "https://app.example.com/cb");
	ck_assert_pstr_eq(devacct_str(r, "client.redirectUris.2"), "http://127.0.0.1:8080/x?y=1");
	/* origins are stored as a browser sends them */
	ck_assert_pstr_eq(devacct_str(r, "client.allowedOrigins.0"), "https://app.example.com");
	ck_assert_pstr_eq(devacct_str(r, "client.allowedOrigins.1"), "http://localhost:3000");
	ck_assert_ptr_nonnull(devacct_str(r, "client.createdAt"));
	ck_assert_ptr_nonnull(devacct_str(r, "client.updatedAt"));
	harness_resp_free(r);
}
END_TEST

START_TEST(create_minimal_and_alias)
{
	struct harness_resp *r = devacct_jwt(&dev_a, "POST", "/v1/iam/clients",
	    "{\"name\":\"m\"}", NULL);

	harness_assert_status(r, 201);
	ck_assert_ptr_null(devacct_str(r, "client.description"));
	ck_assert_int_eq(json_object_array_length(devacct_json(r, "client.redirectUris")), 0);
	ck_assert_int_eq(json_object_array_length(devacct_json(r, "client.allowedOrigins")), 0);
	harness_resp_free(r);

	/* snake_case spellings are accepted too */
	r = devacct_jwt(&dev_a, "POST", "/v1/iam/clients",
	    "{\"name\":\"s\",\"redirect_uris\":[\"https://a.example/cb\"],"
	    "\"allowed_origins\":[\"https://a.example\"]}", NULL);
	harness_assert_status(r, 201);
	ck_assert_pstr_eq(devacct_str(r, "client.redirectUris.0"), "https://a.example/cb");
	ck_assert_pstr_eq(devacct_str(r, "client.allowedOrigins.0"), "https://a.example");
	harness_resp_free(r);
}
END_TEST

/* List: 200 clients newest first, the sign-up client among them. */
START_TEST(list_newest_first)
{
	char *first = client_new(&dev_a, "{\"name\":\"first\"}");
	char *second = client_new(&dev_a, "{\"name\":\"second\"}");
	struct harness_resp *r = devacct_jwt(&dev_a, "GET", "/v1/iam/clients", NULL, NULL);
	struct json_object *arr = harness_json_get(r, "clients");
	size_t n, i_first = 0, i_second = 0, i_signup = 0;
	int seen_signup = 0;

	harness_assert_status(r, 200);
	harness_assert_common(r);
	ck_assert_ptr_nonnull(arr);
	n = json_object_array_length(arr);
	ck_assert_uint_ge(n, 3);
	for (size_t i = 0; i < n; i++) {
		struct json_object *c = json_object_array_get_idx(arr, i), *v;
		const char *id;

		json_object_object_get_ex(c, "id", &v);
		id = json_object_get_string(v);
		if (strcmp(id, first) == 0)
			i_first = i;
		if (strcmp(id, second) == 0)
			i_second = i;
		if (strcmp(id, dev_a.client_id) == 0) {
			i_signup = i;
			seen_signup = 1;
		}
		json_object_object_get_ex(c, "userId", &v);
		ck_assert_str_eq(json_object_get_string(v), dev_a.user_id);
		ck_assert(json_object_object_get_ex(c, "name", NULL));
		ck_assert(json_object_object_get_ex(c, "createdAt", NULL));
		ck_assert(json_object_object_get_ex(c, "redirectUris", NULL));
	}
	ck_assert(seen_signup);
	ck_assert_uint_lt(i_second, i_first);
	ck_assert_uint_lt(i_first, i_signup);
	harness_resp_free(r);

	/* lists take no query parameters: page is a 400 */
	r = devacct_jwt(&dev_a, "GET", "/v1/iam/clients?page=2", NULL, NULL);
	devacct_assert_iam(r, 400, "VALIDATION_ERROR");
	devacct_assert_error(r, "page", "unknown_field");
	harness_resp_free(r);
	free(first);
	free(second);
}
END_TEST

START_TEST(get_one)
{
	char *id = client_new(&dev_a, "{\"name\":\"get me\",\"redirectUris\":[\"https://g.example/cb\"]}");
	char *path = CLIENT_PATH(id);
	struct harness_resp *r = devacct_jwt(&dev_a, "GET", path, NULL, NULL);

	harness_assert_status(r, 200);
	harness_assert_common(r);
	ck_assert(json_object_get_boolean(harness_json_get(r, "success")));
	ck_assert_pstr_eq(devacct_str(r, "client.id"), id);
	ck_assert_pstr_eq(devacct_str(r, "client.name"), "get me");
	ck_assert_pstr_eq(devacct_str(r, "client.redirectUris.0"), "https://g.example/cb");
	harness_resp_free(r);
	free(path);
	free(id);
}
END_TEST

/* Unknown and malformed ids: 404 CLIENT_NOT_FOUND in the iam envelope. */
static const char *const unknown_ids[] = {
	"cli_0190f5d2-0000-7000-8000-000000000000", "nope", "cli_", "%27%20OR%201%3D1--",
};

START_TEST(unknown_id_is_404)
{
	static const char *const methods[] = { "GET", "PUT", "DELETE" };

	for (size_t m = 0; m < 3; m++) {
		char *path = CLIENT_PATH(unknown_ids[_i]);
		struct harness_resp *r = devacct_jwt(&dev_a, methods[m], path,
		    strcmp(methods[m], "PUT") == 0 ? "{\"name\":\"x\"}" : NULL, NULL);

		devacct_assert_iam(r, 404, "CLIENT_NOT_FOUND");
		harness_resp_free(r);
		free(path);
	}
}
END_TEST

/* Bad create bodies: 400 naming the field. */
static const struct {
	const char	*body;
	size_t		 len;		/* of @LONG@ */
	const char	*error_code;
	const char	*field;		/* NULL: no errors[] check */
	const char	*code;
} bad_create[] = {
	{ "{}",						0, "VALIDATION_ERROR", "name", "required" },
	{ "{\"name\":123}",				0, "VALIDATION_ERROR", "name", "invalid_type" },
	{ "{\"name\":null}",				0, "VALIDATION_ERROR", "name", "invalid_type" },
	{ "{\"name\":\"\"}",				0, "VALIDATION_ERROR", "name", "too_short" },
	{ "{\"name\":\"   \"}",				0, "VALIDATION_ERROR", "name", "blank" },
	{ "{\"name\":\" \\t\\n \"}",			0, "VALIDATION_ERROR", "name", "blank" },
	{ "{\"name\":\"Acme\\u0007 app\"}",		0, "VALIDATION_ERROR", "name", "control_character" },
	{ "{\"name\":\"@LONG@\"}",			101, "VALIDATION_ERROR", "name", "too_long" },
	{ "{\"name\":\"@LONG@\"}",			5000, "VALIDATION_ERROR", "name", "too_long" },
	{ "{\"name\":\"a\",\"description\":7}",		0, "VALIDATION_ERROR", "description", "invalid_type" },
	{ "{\"name\":\"a\",\"description\":\"@LONG@\"}", 1001, "VALIDATION_ERROR", "description", "too_long" },
	{ "{\"name\":\"a\",\"redirectUris\":\"https://a.example\"}", 0, "VALIDATION_ERROR", "redirectUris", "invalid_type" },
	{ "{\"name\":\"a\",\"redirectUris\":[1]}",	0, "VALIDATION_ERROR", "redirectUris[0]", "invalid_type" },
	{ "{\"name\":\"a\",\"redirectUris\":[\"https://ok.example/cb\",\"http://evil.example/cb\"]}",
							0, "VALIDATION_ERROR", "redirectUris[1]", "invalid_url" },
	{ "{\"name\":\"a\",\"redirectUris\":[\"/relative\"]}", 0, "VALIDATION_ERROR", "redirectUris[0]", "invalid_format" },
	{ "{\"name\":\"a\",\"redirectUris\":[\"ftp://a.example/x\"]}", 0, "VALIDATION_ERROR", "redirectUris[0]", "invalid_format" },
	{ "{\"name\":\"a\",\"redirectUris\":[\"javascript:alert(1)\"]}", 0, "VALIDATION_ERROR", "redirectUris[0]", "invalid_format" },
	{ "{\"name\":\"a\",\"redirectUris\":[\"https://a.example/cb#frag\"]}", 0, "VALIDATION_ERROR", "redirectUris[0]", "invalid_url" },
	{ "{\"name\":\"a\",\"redirectUris\":[\"https://user:pw@a.example/cb\"]}", 0, "VALIDATION_ERROR", "redirectUris[0]", "invalid_format" },
	{ "{\"name\":\"a\",\"redirectUris\":[\"https://a.example/@LONG@\"]}", 2100, "VALIDATION_ERROR", "redirectUris[0]", "invalid_url" },
	{ "{\"name\":\"a\",\"redirect_uris\":[\"http://evil.example/cb\"]}", 0, "VALIDATION_ERROR", "redirect_uris[0]", "invalid_url" },
	{ "{\"name\":\"a\",\"redirectUris\":[\"https://a.example/1\",\"https://a.example/2\","
	  "\"https://a.example/3\",\"https://a.example/4\",\"https://a.example/5\",\"https://a.example/6\","
	  "\"https://a.example/7\",\"https://a.example/8\",\"https://a.example/9\",\"https://a.example/10\","
	  "\"https://a.example/11\",\"https://a.example/12\",\"https://a.example/13\",\"https://a.example/14\","
	  "\"https://a.example/15\",\"https://a.example/16\",\"https://a.example/17\",\"https://a.example/18\","
	  "\"https://a.example/19\",\"https://a.example/20\",\"https://a.example/21\"]}",
							0, "VALIDATION_ERROR", "redirectUris", "too_many_items" },
	{ "{\"name\":\"a\",\"allowedOrigins\":[\"https://a.example/path\"]}", 0, "VALIDATION_ERROR", "allowedOrigins[0]", "invalid_origin" },
	{ "{\"name\":\"a\",\"allowedOrigins\":[\"https://a.example?q=1\"]}", 0, "VALIDATION_ERROR", "allowedOrigins[0]", "invalid_origin" },
	{ "{\"name\":\"a\",\"allowedOrigins\":[\"http://a.example\"]}", 0, "VALIDATION_ERROR", "allowedOrigins[0]", "invalid_origin" },
	{ "{\"name\":\"a\",\"allowedOrigins\":[\"a.example\"]}", 0, "VALIDATION_ERROR", "allowedOrigins[0]", "invalid_format" },
	{ "{\"name\":\"a\",\"allowedOrigins\":{}}",	0, "VALIDATION_ERROR", "allowedOrigins", "invalid_type" },
	{ "{\"name\":\"a\",\"owner\":\"usr_x\"}",	0, "VALIDATION_ERROR", "owner", "unknown_field" },
	{ "{\"name\":\"a\",\"userId\":\"usr_x\"}",	0, "VALIDATION_ERROR", "userId", "unknown_field" },
	{ "[\"name\"]",					0, "VALIDATION_ERROR", "", "invalid_type" },
	{ "{\"name\":\"\xff\"}",			0, "INVALID_UTF8", NULL, NULL },
	{ "{\"name\":\"\xed\xa0\x80\"}",		0, "INVALID_UTF8", NULL, NULL },
	{ "{\"name\":\"a\"",				0, "INVALID_JSON", NULL, NULL },
	{ "{\"name\":'a'}",				0, "INVALID_JSON", NULL, NULL },
};

START_TEST(create_bad_input)
{
	char *body = expand(bad_create[_i].body, bad_create[_i].len);
	struct harness_resp *r = devacct_jwt(&dev_a, "POST", "/v1/iam/clients", body, NULL);
	long long n;

	devacct_assert_iam(r, 400, bad_create[_i].error_code);
	if (bad_create[_i].field != NULL)
		devacct_assert_error(r, bad_create[_i].field, bad_create[_i].code);
	harness_resp_free(r);
	/* nothing was created */
	n = devacct_sql_int("SELECT count(*) FROM clients WHERE user_id = $1 AND name = 'a'",
	    dev_a.user_id, NULL);
	ck_assert_int_eq(n, 0);
	free(body);
}
END_TEST

START_TEST(update_fields)
{
	char *id = client_new(&dev_a, "{\"name\":\"before\",\"description\":\"d\","
	    "\"redirectUris\":[\"https://u.example/cb\"],\"allowedOrigins\":[\"https://u.example\"]}");
	char *path = CLIENT_PATH(id), *created;
	struct harness_resp *r;

	r = devacct_jwt(&dev_a, "GET", path, NULL, NULL);
	created = strdup(devacct_str(r, "client.updatedAt"));
	harness_resp_free(r);

	/* only the name: the rest stays */
	r = devacct_jwt(&dev_a, "PUT", path, "{\"name\":\"after\"}", NULL);
	harness_assert_status(r, 200);
	harness_assert_common(r);
	ck_assert(json_object_get_boolean(harness_json_get(r, "success")));
	ck_assert_pstr_eq(devacct_str(r, "client.name"), "after");
	ck_assert_pstr_eq(devacct_str(r, "client.description"), "d");
	ck_assert_pstr_eq(devacct_str(r, "client.redirectUris.0"), "https://u.example/cb");
	ck_assert_pstr_eq(devacct_str(r, "client.allowedOrigins.0"), "https://u.example");
	ck_assert_msg(strcmp(devacct_str(r, "client.updatedAt"), created) >= 0, "%s", r->body);
	harness_resp_free(r);

	/* description null clears it; arrays are replaced whole */
	r = devacct_jwt(&dev_a, "PUT", path, "{\"description\":null,"
	    "\"redirectUris\":[\"https://v.example/a\",\"https://v.example/b\"],"
	    "\"allowed_origins\":[]}", NULL);
	harness_assert_status(r, 200);
	ck_assert_ptr_null(devacct_str(r, "client.description"));
	ck_assert_pstr_eq(devacct_str(r, "client.name"), "after");
	ck_assert_pstr_eq(devacct_str(r, "client.redirectUris.1"), "https://v.example/b");
	ck_assert_int_eq(json_object_array_length(devacct_json(r, "client.allowedOrigins")), 0);
	harness_resp_free(r);

	/* and the stored row says the same */
	r = devacct_jwt(&dev_a, "GET", path, NULL, NULL);
	ck_assert_pstr_eq(devacct_str(r, "client.redirectUris.0"), "https://v.example/a");
	harness_resp_free(r);
	free(created);
	free(path);
	free(id);
}
END_TEST

static const struct {
	const char	*body;
	const char	*field;
	const char	*code;
} bad_update[] = {
	{ "{\"name\":null}",				"name", "invalid_type" },
	{ "{\"name\":\"\"}",				"name", "too_short" },
	{ "{\"name\":\"  \"}",				"name", "blank" },
	{ "{\"redirectUris\":null}",			"redirectUris", "invalid_type" },
	{ "{\"redirectUris\":[\"https://a.example\",\"http://b.example\"]}", "redirectUris[1]", "invalid_url" },
	{ "{\"allowedOrigins\":[\"https://a.example/x\"]}", "allowedOrigins[0]", "invalid_origin" },
	{ "{\"id\":\"cli_other\"}",			"id", "unknown_field" },
	{ "{\"pciApproved\":true}",			"pciApproved", "unknown_field" },
};

START_TEST(update_bad_input)
{
	char *id = client_new(&dev_a, "{\"name\":\"keep\"}");
	char *path = CLIENT_PATH(id);
	struct harness_resp *r = devacct_jwt(&dev_a, "PUT", path, bad_update[_i].body, NULL);

	devacct_assert_iam(r, 400, "VALIDATION_ERROR");
	devacct_assert_error(r, bad_update[_i].field, bad_update[_i].code);
	harness_resp_free(r);
	r = devacct_jwt(&dev_a, "GET", path, NULL, NULL);
	ck_assert_pstr_eq(devacct_str(r, "client.name"), "keep");
	ck_assert_int_eq(json_object_array_length(devacct_json(r, "client.redirectUris")), 0);
	harness_resp_free(r);
	free(path);
	free(id);
}
END_TEST

/* The clients_max the harness writes into every stack's config. */
#define CLIENTS_MAX	1000

/* A developer at the cap: one more client is 409 CLIENT_LIMIT_REACHED and
 * nothing is created; after a delete there is room for one again. */
START_TEST(create_beyond_the_cap)
{
	struct devacct d;
	struct harness_resp *r;
	char have[16], *id;

	devacct_new(&d, "cli-cap");
	snprintf(have, sizeof(have), "%d", CLIENTS_MAX - 2);
	/* sign-up made the first; these fill all but one place */
	devacct_sql_exec("INSERT INTO clients (id, user_id, name) SELECT"
	    " 'cli_' || md5($1 || g), $1, 'bulk' FROM generate_series(1, $2::int) g",
	    d.user_id, have);
	id = client_new(&d, "{\"name\":\"the last one\"}");
	r = devacct_jwt(&d, "POST", "/v1/iam/clients", "{\"name\":\"one too many\"}", NULL);
	devacct_assert_iam(r, 409, "CLIENT_LIMIT_REACHED");
	harness_resp_free(r);
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM clients WHERE user_id = $1",
	    d.user_id, NULL), CLIENTS_MAX);
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM clients WHERE user_id = $1"
	    " AND name = 'one too many'", d.user_id, NULL), 0);
	r = devacct_jwt(&d, "DELETE", harness_fmt("/v1/iam/clients/%s", id), NULL, NULL);
	harness_assert_status(r, 200);
	harness_resp_free(r);
	free(client_new(&d, "{\"name\":\"room again\"}"));
	free(id);
}
END_TEST

/* Delete removes the client and its secrets at once: its key stops. */
START_TEST(delete_client)
{
	static const char *const idem[] = { "Idempotency-Key: del-1", NULL };
	char *id = client_new(&dev_a, "{\"name\":\"doomed\"}");
	char *path = CLIENT_PATH(id), *spath = path_of("/v1/iam/clients/", id, "/client-secrets");
	char *key;
	struct harness_resp *r;

	r = devacct_jwt(&dev_a, "POST", spath, "{\"environment\":\"sandbox\"}", idem);
	harness_assert_status(r, 201);
	key = strdup(devacct_str(r, "secret.secret"));
	harness_resp_free(r);
	r = devacct_call("GET", "sandbox", "/v1/identity", devacct_bearer(key), NULL, NULL);
	harness_assert_status(r, 200);
	harness_resp_free(r);

	r = devacct_jwt(&dev_a, "DELETE", path, NULL, NULL);
	harness_assert_status(r, 200);
	harness_assert_common(r);
	ck_assert(json_object_get_boolean(harness_json_get(r, "success")));
	ck_assert_ptr_nonnull(harness_json_string(r, "message"));
	harness_resp_free(r);

	r = devacct_call("GET", "sandbox", "/v1/identity", devacct_bearer(key), NULL, NULL);
	harness_assert_coded(r, 401, "UNAUTHORIZED");
	harness_resp_free(r);
	r = devacct_jwt(&dev_a, "GET", path, NULL, NULL);
	devacct_assert_iam(r, 404, "CLIENT_NOT_FOUND");
	harness_resp_free(r);
	r = devacct_jwt(&dev_a, "DELETE", path, NULL, NULL);
	devacct_assert_iam(r, 404, "CLIENT_NOT_FOUND");
	harness_resp_free(r);
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM client_secrets WHERE client_id = $1",
	    id, NULL), 0);
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM clients WHERE id = $1", id, NULL), 0);
	free(key);
	free(spath);
	free(path);
	free(id);
}
END_TEST

/* Developer B on developer A's client: 404 for every method, and A's
 * client is untouched. */
START_TEST(tenant_isolation)
{
	char *id = client_new(&dev_a, "{\"name\":\"mine\"}");
	char *path = CLIENT_PATH(id);
	struct harness_resp *r;
	struct json_object *arr;

	r = devacct_jwt(&dev_b, "GET", path, NULL, NULL);
	devacct_assert_iam(r, 404, "CLIENT_NOT_FOUND");
	harness_resp_free(r);
	r = devacct_jwt(&dev_b, "PUT", path, "{\"name\":\"stolen\"}", NULL);
	devacct_assert_iam(r, 404, "CLIENT_NOT_FOUND");
	harness_resp_free(r);
	r = devacct_jwt(&dev_b, "DELETE", path, NULL, NULL);
	devacct_assert_iam(r, 404, "CLIENT_NOT_FOUND");
	harness_resp_free(r);

	/* B's list holds only B's clients */
	r = devacct_jwt(&dev_b, "GET", "/v1/iam/clients", NULL, NULL);
	harness_assert_status(r, 200);
	arr = harness_json_get(r, "clients");
	for (size_t i = 0; i < json_object_array_length(arr); i++) {
		struct json_object *v;

		json_object_object_get_ex(json_object_array_get_idx(arr, i), "userId", &v);
		ck_assert_str_eq(json_object_get_string(v), dev_b.user_id);
	}
	harness_resp_free(r);

	r = devacct_jwt(&dev_a, "GET", path, NULL, NULL);
	harness_assert_status(r, 200);
	ck_assert_pstr_eq(devacct_str(r, "client.name"), "mine");
	harness_resp_free(r);
	free(path);
	free(id);
}
END_TEST

/* Every clients route needs a developer's access token. */
static const struct {
	const char	*method;
	const char	*path;
	const char	*auth;
} unauth[] = {
	{ "GET",	"/v1/iam/clients",			NULL },
	{ "POST",	"/v1/iam/clients",			NULL },
	{ "GET",	"/v1/iam/clients/cli_x",		NULL },
	{ "PUT",	"/v1/iam/clients/cli_x",		NULL },
	{ "DELETE",	"/v1/iam/clients/cli_x",		NULL },
	{ "GET",	"/v1/iam/clients",			"Bearer not.a.jwt" },
	{ "GET",	"/v1/iam/clients",			"Basic Zm9vOmJhcg==" },
	{ "GET",	"/v1/iam/clients",
	  "Bearer bds_sandbox_0000000000000000000000000000000000000000000000000" },
};

START_TEST(auth_required)
{
	struct harness_resp *r = devacct_call(unauth[_i].method, "api", unauth[_i].path,
	    unauth[_i].auth, strcmp(unauth[_i].method, "GET") != 0 &&
	    strcmp(unauth[_i].method, "DELETE") != 0 ? "{\"name\":\"x\"}" : NULL, NULL);

	devacct_assert_iam(r, 401, NULL);
	harness_resp_free(r);
}
END_TEST

/* embed-origins: public, and 200 with an empty list on any failure. */
START_TEST(embed_origins)
{
	char *id = client_new(&dev_a, "{\"name\":\"embed\",\"allowedOrigins\":"
	    "[\"https://shop.example\",\"http://localhost:8080\"]}");
	char *path = EMBED_PATH(id);
	struct harness_resp *r = harness_get("api", path);
	struct json_object *arr;

	harness_assert_status(r, 200);
	harness_assert_common(r);
	arr = harness_json_get(r, "allowed_embed_origins");
	ck_assert_ptr_nonnull(arr);
	ck_assert_int_eq(json_object_array_length(arr), 2);
	ck_assert(array_has(arr, "https://shop.example"));
	ck_assert(array_has(arr, "http://localhost:8080"));
	ck_assert(json_object_is_type(harness_json_get(r, "pci_approved"), json_type_boolean));
	ck_assert(!json_object_get_boolean(harness_json_get(r, "pci_approved")));
	harness_resp_free(r);

	/* the operator approves the client for PCI */
	devacct_sql_exec("UPDATE clients SET pci_approved = true WHERE id = $1", id, NULL);
	r = devacct_call("GET", "api", path, "Bearer garbage", NULL, NULL);
	harness_assert_status(r, 200);
	ck_assert(json_object_get_boolean(harness_json_get(r, "pci_approved")));
	harness_resp_free(r);

	/* the sandbox host answers the same */
	r = harness_get("sandbox", path);
	harness_assert_status(r, 200);
	ck_assert_int_eq(json_object_array_length(harness_json_get(r, "allowed_embed_origins")), 2);
	harness_resp_free(r);
	free(path);
	free(id);
}
END_TEST

static const char *const closed_ids[] = {
	"cli_0190f5d2-0000-7000-8000-000000000000",	/* unknown */
	"nope",						/* malformed */
	"cli_zzzz",
	"%C3%A9t%C3%A9",				/* UTF-8, not an id */
};

static void
assert_closed(struct harness_resp *r)
{
	struct json_object *arr = harness_json_get(r, "allowed_embed_origins");

	harness_assert_status(r, 200);
	harness_assert_common(r);
	ck_assert_msg(arr != NULL && json_object_is_type(arr, json_type_array) &&
	    json_object_array_length(arr) == 0, "%s", r->body);
	ck_assert_msg(json_object_is_type(harness_json_get(r, "pci_approved"), json_type_boolean) &&
	    !json_object_get_boolean(harness_json_get(r, "pci_approved")), "%s", r->body);
}

START_TEST(embed_origins_fail_closed)
{
	char *path = EMBED_PATH(closed_ids[_i]);
	struct harness_resp *r = harness_get("api", path);

	assert_closed(r);
	harness_resp_free(r);
	free(path);
}
END_TEST

/* A deleted client has no origins; with the database down the answer is
 * still 200 and empty. */
START_TEST(embed_origins_deleted_and_db_down)
{
	char *id = client_new(&dev_a, "{\"name\":\"gone\",\"allowedOrigins\":[\"https://g.example\"]}");
	char *path = EMBED_PATH(id), *cpath = CLIENT_PATH(id);
	char *id2 = client_new(&dev_a, "{\"name\":\"live\",\"allowedOrigins\":[\"https://l.example\"]}");
	char *path2 = EMBED_PATH(id2);
	struct harness_resp *r;

	r = devacct_jwt(&dev_a, "DELETE", cpath, NULL, NULL);
	harness_assert_status(r, 200);
	harness_resp_free(r);
	r = harness_get("api", path);
	assert_closed(r);
	harness_resp_free(r);

	ck_assert_msg(harness_pg_stop() == 0, "%s", harness_error());
	r = harness_get("api", path2);
	assert_closed(r);
	harness_resp_free(r);
	ck_assert_msg(harness_pg_start() == 0, "%s", harness_error());
	ck_assert_msg(harness_wait_health(200, 15000) == 0, "%s", harness_error());
	ck_assert_msg(harness_wait_workers_healthy(5000) == 0, "%s", harness_error());
	r = harness_get("api", path2);
	harness_assert_status(r, 200);
	ck_assert_int_eq(json_object_array_length(harness_json_get(r, "allowed_embed_origins")), 1);
	harness_resp_free(r);
	free(path2);
	free(id2);
	free(cpath);
	free(path);
	free(id);
}
END_TEST

#define N(a) ((int)(sizeof(a) / sizeof((a)[0])))

static Suite *
clients_suite(void)
{
	Suite *s = suite_create("e2e_clients");
	TCase *tc = tcase_create("clients");

	tcase_add_unchecked_fixture(tc, setup, harness_fixture_stop);
	tcase_add_checked_fixture(tc, harness_fixture_recover, NULL);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, create_full);
	tcase_add_test(tc, create_minimal_and_alias);
	tcase_add_test(tc, list_newest_first);
	tcase_add_test(tc, get_one);
	tcase_add_loop_test(tc, unknown_id_is_404, 0, N(unknown_ids));
	tcase_add_loop_test(tc, create_bad_input, 0, N(bad_create));
	tcase_add_test(tc, update_fields);
	tcase_add_loop_test(tc, update_bad_input, 0, N(bad_update));
	tcase_add_test(tc, delete_client);
	tcase_add_test(tc, create_beyond_the_cap);
	tcase_add_test(tc, tenant_isolation);
	tcase_add_loop_test(tc, auth_required, 0, N(unauth));
	tcase_add_test(tc, embed_origins);
	tcase_add_loop_test(tc, embed_origins_fail_closed, 0, N(closed_ids));
	tcase_add_test(tc, embed_origins_deleted_and_db_down);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return harness_run_suite(clients_suite());
}
