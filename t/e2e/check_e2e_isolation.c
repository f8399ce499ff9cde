/*
 * Tenant isolation, as a matrix generated from the route table. Two
 * tenants, A and B: each a developer whose sign-up client holds a sandbox
 * key, a sandbox account link with its bills and link access token, a
 * webhook endpoint, a bill import, a customer message, a second link whose
 * fixture plants insights, the events all that made, a payment method (a
 * test card), a link token, a webhook of the developer API, and (with a
 * development key) a request to link. The table comes from the built
 * `bds-api --routes --json` at run time, so a route added later joins the
 * matrix without an edit here.
 *
 * For every route with an id parameter: the parameter's kind is the path
 * segment before it (/v1/bills/{id}: a bill), looked up in kinds[] below.
 * Then for every credential A holds that the route accepts (developer JWT
 * on the api host, A's sandbox key or link access token on the sandbox
 * host, its development key on the api host for the live-only routes,
 * its link token on the link host)
 * the route is called twice through nginx, once with B's id of that kind
 * and once with an unknown id of the same shape (same prefix, the
 * rest random). DESIGN "Tenancy": both answers have the same status and the
 * same body shape (top-level keys, error_code), and B's id never answers
 * 2xx to A; where the contract names a 403 for another client's object
 * (spec_403[]), B's id answers exactly that 403 and the unknown one 404.
 * A POST/PUT/PATCH sends the route's required body fields with plain
 * values, every route its required query members (a user_aid is B's
 * user's, so only the tenant differs); an Idempotency-Key and
 * X-Client-User-Id go where the route's flags ask for them. The routes
 * that change state are called with B's ids too, so the matrix ends by
 * reading every object of B with B's credential: each must still answer
 * 200.
 *
 * A parameter whose segment kinds[] does not know fails the suite, naming
 * the route: add its kind. A's credentials also count its pay token (of
 * A's user) and its connect session token (of A's link token), on the
 * sandbox host. A kind known but not made by tenant_new(), or a
 * credential A does not hold, fails the suite too, naming the route; so are the routes no credential
 * reaches (signed URLs). A customer's aid is a name the client chooses
 * (K_NAME): there both may answer 2xx alike.
 */
#include <ctype.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <check.h>
#include <json-c/json.h>

#include "devacct.h"
#include "harness.h"

#define N(x) (sizeof(x) / sizeof((x)[0]))
#define IDLE_MS 60000
#define IMPORT_USER "u-iso"
#define BILLER "blr_01900000-0000-7000-8000-000000000001"	/* a seeded biller */

struct tenant {
	struct devacct	 dev;
	char		*key;		/* sandbox key of dev.client_id */
	char		*devkey;	/* its development key (the api host) */
	char		*link, *lat, *bill, *hook, *import;
	char		*insight, *event, *message, *user;
	char		*insight_user;	/* the user_aid of the insight's link */
	char		*rtl;		/* a request to link (development) */
	char		*method;	/* a payment method (a test card) of user */
	char		*lt;		/* a link token (lt_...) */
	char		*iamhook;	/* a webhook of the developer API (/v1/iam) */
	char		*paytok;	/* a pay token (bds_pay_...) of user */
	char		*st;		/* a connect session token (bds_lst_...) of lt */
	char		*payment;	/* a payment attempt of bill with method */
	char		*discovery;	/* a biller discovery (an onboarding) */
	char		*sandbox;	/* an anonymous evaluation sandbox */
};

static struct tenant ta, tb;

/*
 * The kind of a path parameter by the segment before it. id: B's object
 * of that kind; NULL with provisioned 0: a tenant's object this suite does
 * not make yet (not covered); fixed: not an id (the value sent as is).
 * K_NAME: a name the client chooses (a customer's aid), B's compared with an
 * unknown one like an id, but both may answer 2xx alike (a default).
 */
enum kind_use { K_ID, K_NAME, K_FIXED, K_OUTSIDE };
struct kind {
	const char	*segment;
	const char	*name;
	enum kind_use	 use;
	const char	*fixed;		/* K_FIXED: the value */
	size_t		 off;		/* K_ID: the member of struct tenant, or
					 * (size_t)-1 when not provisioned */
};

#define NOT_MADE ((size_t)-1)	/* a kind tenant_new() does not make: fails */
#define TOFF(m) offsetof(struct tenant, m)
#define CLIENT_OFF ((size_t)-2)		/* dev.client_id (an array) */

static const struct kind kinds[] = {
	{ "clients", "client", K_ID, NULL, CLIENT_OFF },
	{ "links", "link", K_ID, NULL, TOFF(link) },
	{ "account-links", "link", K_ID, NULL, TOFF(link) },
	{ "bills", "bill", K_ID, NULL, TOFF(bill) },
	{ "webhook-endpoints", "webhook endpoint", K_ID, NULL, TOFF(hook) },
	{ "bill_imports", "bill import", K_ID, NULL, TOFF(import) },
	{ "webhooks", "iam webhook", K_ID, NULL, TOFF(iamhook) },
	/* a statement's URL names its bill (a signed URL: no credential) */
	{ "statements", "bill", K_ID, NULL, TOFF(bill) },
	{ "insights", "insight", K_ID, NULL, TOFF(insight) },
	{ "payment-methods", "payment method", K_ID, NULL, TOFF(method) },
	{ "payments", "payment attempt", K_ID, NULL, TOFF(payment) },
	{ "customer-messages", "customer message", K_ID, NULL, TOFF(message) },
	{ "customer-suppressions", "customer", K_NAME, NULL, TOFF(user) },
	{ "customers", "customer", K_NAME, NULL, TOFF(user) },
	{ "request-to-links", "request to link", K_ID, NULL, TOFF(rtl) },
	{ "biller-discoveries", "biller discovery", K_ID, NULL, TOFF(discovery) },
	{ "link-tokens", "link token", K_ID, NULL, TOFF(lt) },
	{ "activity", "event", K_ID, NULL, TOFF(event) },
	{ "sandboxes", "sandbox", K_ID, NULL, TOFF(sandbox) },
	/* not ids */
	{ "client-secrets", "environment", K_FIXED, "sandbox", 0 },
	/* the shared biller catalogue and event types belong to no tenant */
	{ "billers", "biller", K_OUTSIDE, NULL, 0 },
	{ "triggers", "event type", K_OUTSIDE, NULL, 0 },
};

static const struct kind *
kind_of(const char *segment)
{
	size_t i;

	for (i = 0; i < N(kinds); i++)
		if (strcmp(kinds[i].segment, segment) == 0)
			return &kinds[i];
	return NULL;
}

static const char *
tenant_id(const struct tenant *t, const struct kind *k)
{
	if (k->off == CLIENT_OFF)
		return t->dev.client_id;
	if (k->off == NOT_MADE)
		return NULL;
	return *(char *const *)(const void *)((const char *)t + k->off);
}

/* ---- the route table ---- */

static json_object *
routes_load(void)
{
	const char *bd = getenv("BDS_BUILDDIR");
	char cmd[1024], buf[8192];
	size_t n, len = 0, cap = 0;
	char *text = NULL;
	json_object *j;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "'%s/app/bds-api' --routes --json", bd ? bd : ".");
	p = popen(cmd, "r");
	ck_assert_msg(p != NULL, "%s", cmd);
	while ((n = fread(buf, 1, sizeof(buf), p)) > 0) {
		if (len + n + 1 > cap) {
			cap = (len + n + 1) * 2;
			text = realloc(text, cap);
			ck_assert_ptr_nonnull(text);
		}
		memcpy(text + len, buf, n);
		len += n;
	}
	ck_assert_msg(pclose(p) == 0 && text != NULL, "%s failed", cmd);
	text[len] = '\0';
	j = json_tokener_parse(text);
	free(text);
	ck_assert_msg(j != NULL && json_object_is_type(j, json_type_array),
	    "%s: not a JSON array", cmd);
	return j;
}

static const char *
jstr(json_object *o, const char *key)
{
	json_object *v;

	if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_string))
		return NULL;
	return json_object_get_string(v);
}

static int
jarray_has(json_object *o, const char *key, const char *word)
{
	json_object *a;
	size_t i;

	if (!json_object_object_get_ex(o, key, &a) || !json_object_is_type(a, json_type_array))
		return 0;
	for (i = 0; i < json_object_array_length(a); i++)
		if (strcmp(json_object_get_string(json_object_array_get_idx(a, i)), word) == 0)
			return 1;
	return 0;
}

/* The parameters of pattern, each with the segment before it. */
struct param {
	char	 name[64];
	char	 segment[64];
};

static size_t
params_of(const char *pattern, struct param *out, size_t max)
{
	char prev[64] = "", seg[128];
	const char *s = pattern, *e;
	size_t n = 0, l;

	while (*s == '/') {
		s++;
		e = strchr(s, '/');
		l = e ? (size_t)(e - s) : strlen(s);
		if (l >= sizeof(seg))
			l = sizeof(seg) - 1;
		memcpy(seg, s, l);
		seg[l] = '\0';
		if (seg[0] == '{' && n < max) {
			snprintf(out[n].name, sizeof(out[n].name), "%.*s", (int)(l - 2), seg + 1);
			snprintf(out[n].segment, sizeof(out[n].segment), "%s", prev);
			n++;
		}
		snprintf(prev, sizeof(prev), "%.63s", seg);
		s += l;
	}
	return n;
}

/* ---- ids ---- */

/* An id shaped like id: the same up to its last '_' (or none), then each
 * character replaced by a random one of its class. */
static void
unknown_like(const char *id, char *out, size_t outlen)
{
	const char *rest = strrchr(id, '_');
	size_t i, start = rest ? (size_t)(rest - id) + 1 : 0;
	int hex = 1;

	snprintf(out, outlen, "%s", id);
	for (i = start; out[i] != '\0'; i++)
		if (isalpha((unsigned char)out[i]) && !isxdigit((unsigned char)out[i]))
			hex = 0;
	for (i = start; out[i] != '\0'; i++) {
		unsigned char c = (unsigned char)out[i];

		if (isdigit(c))
			out[i] = (char)('0' + random() % 10);
		else if (islower(c))
			out[i] = (char)((hex ? 'a' + random() % 6 : 'a' + random() % 26));
		else if (isupper(c))
			out[i] = (char)((hex ? 'A' + random() % 6 : 'A' + random() % 26));
	}
	ck_assert_msg(strcmp(out, id) != 0, "unknown id %s equals %s", out, id);
}

/* pattern with each parameter replaced by vals[i]. */
static void
path_fill(const char *pattern, const char *const *vals, char *out, size_t outlen)
{
	size_t o = 0, i = 0;
	const char *s = pattern;

	while (*s != '\0' && o + 1 < outlen) {
		if (*s == '{') {
			const char *e = strchr(s, '}');
			int w = snprintf(out + o, outlen - o, "%s", vals[i++]);

			o += (size_t)w < outlen - o ? (size_t)w : outlen - o - 1;
			s = e ? e + 1 : s + strlen(s);
		} else
			out[o++] = *s++;
	}
	out[o] = '\0';
}

/* ---- bodies ---- */

static json_object *
plain_value(json_object *schema)
{
	json_object *t, *en;
	const char *type = "string";

	if (json_object_object_get_ex(schema, "enum", &en) &&
	    json_object_is_type(en, json_type_array) && json_object_array_length(en) > 0)
		return json_object_get(json_object_array_get_idx(en, 0));
	if (json_object_object_get_ex(schema, "type", &t)) {
		if (json_object_is_type(t, json_type_array) && json_object_array_length(t) > 0)
			t = json_object_array_get_idx(t, 0);
		if (json_object_is_type(t, json_type_string))
			type = json_object_get_string(t);
	}
	if (strcmp(type, "integer") == 0 || strcmp(type, "number") == 0)
		return json_object_new_int(1);
	if (strcmp(type, "boolean") == 0)
		return json_object_new_boolean(1);
	if (strcmp(type, "array") == 0)
		return json_object_new_array();
	if (strcmp(type, "object") == 0)
		return json_object_new_object();
	return json_object_new_string("x");
}

/* The route's required body members (client_id never), malloc'ed JSON;
 * NULL when the route takes no body. */
static char *
body_of(json_object *route)
{
	json_object *schema, *props, *req, *out;
	char *text;
	size_t i;

	if (!json_object_object_get_ex(route, "body", &schema) || schema == NULL ||
	    !json_object_is_type(schema, json_type_object))
		return NULL;
	out = json_object_new_object();
	if (json_object_object_get_ex(schema, "required", &req) &&
	    json_object_is_type(req, json_type_array) &&
	    json_object_object_get_ex(schema, "properties", &props)) {
		for (i = 0; i < json_object_array_length(req); i++) {
			const char *name = json_object_get_string(json_object_array_get_idx(req, i));
			json_object *ps = NULL;

			if (strcmp(name, "client_id") == 0)
				continue;
			json_object_object_get_ex(props, name, &ps);
			json_object_object_add(out, name, plain_value(ps));
		}
	}
	text = strdup(json_object_to_json_string_ext(out, JSON_C_TO_STRING_PLAIN));
	json_object_put(out);
	return text;
}

/*
 * "?name=value&..." of the route's required query members (B's insight
 * user for a user_aid, so only the tenant differs), or "".
 */
static void
query_of(json_object *route, char *out, size_t outlen)
{
	json_object *schema, *req;
	size_t i, o = 0;

	out[0] = '\0';
	if (!json_object_object_get_ex(route, "query", &schema) || schema == NULL ||
	    !json_object_object_get_ex(schema, "required", &req) ||
	    !json_object_is_type(req, json_type_array))
		return;
	for (i = 0; i < json_object_array_length(req) && o < outlen; i++) {
		const char *name = json_object_get_string(json_object_array_get_idx(req, i));

		o += (size_t)snprintf(out + o, outlen - o, "%c%s=%s", i ? '&' : '?', name,
		    strcmp(name, "user_aid") == 0 ? tb.insight_user : "x");
	}
}

/* ---- answers ---- */

/* "status keys error_code" of an answer: its shape (static rotating). */
static const char *
shape_of(const struct harness_resp *r)
{
	static char bufs[4][1024];
	static int k;
	char *b = bufs[k++ % 4];
	const char *code = NULL;
	size_t o;

	o = (size_t)snprintf(b, 1024, "%ld {", r->status);
	if (r->json != NULL && json_object_is_type(r->json, json_type_object)) {
		const char *keys[64];
		size_t n = 0, i, j;

		json_object_object_foreach(r->json, key, val) {
			(void)val;
			if (n < N(keys))
				keys[n++] = key;
		}
		for (i = 1; i < n; i++)		/* sorted: the order is no shape */
			for (j = i; j > 0 && strcmp(keys[j - 1], keys[j]) > 0; j--) {
				const char *x = keys[j];

				keys[j] = keys[j - 1];
				keys[j - 1] = x;
			}
		for (i = 0; i < n && o < 1000; i++)
			o += (size_t)snprintf(b + o, 1024 - o, "%s%s", i ? "," : "", keys[i]);
		code = harness_json_string(r, "error_code");
	} else if (o < 1000)
		o += (size_t)snprintf(b + o, 1024 - o, "not json");
	snprintf(b + o, 1024 - o, "} %s", code ? code : "-");
	return b;
}

/*
 * The 403s the contract names for another tenant's id (SPEC: GET
 * /v1/links/{id}; docs/DECISIONS.md "Link tenancy" and its alias
 * GET /v1/account-links/{id}): there B's id must answer exactly so.
 */
static const struct {
	const char	*method, *pattern, *code;
} spec_403[] = {
	{ "GET", "/v1/links/{id}", "CLIENT_ID_MISMATCH" },
	{ "GET", "/v1/account-links/{id}", "CLIENT_ID_MISMATCH" },
};

static const char *
spec_403_code(const char *method, const char *pattern)
{
	size_t i;

	for (i = 0; i < N(spec_403); i++)
		if (strcmp(spec_403[i].method, method) == 0 &&
		    strcmp(spec_403[i].pattern, pattern) == 0)
			return spec_403[i].code;
	return NULL;
}

/* Whether B's answer r and the unknown id's u are as the contract says. */
static int
answers_alike(const struct harness_resp *r, const struct harness_resp *u,
    const char *code403, int named)
{
	const char *rc;

	if (r->status == 0 || u->status == 0)
		return 0;
	if (!named && r->status >= 200 && r->status < 300)
		return 0;
	if (code403 != NULL && r->status == 403) {
		rc = harness_json_string(r, "error_code");
		return rc != NULL && strcmp(rc, code403) == 0 && u->status == 404;
	}
	return strcmp(shape_of(r), shape_of(u)) == 0;
}

/* ---- the credentials of A ---- */

struct cred {
	const char	*scheme;	/* as --routes names it */
	const char	*host;
	const char	*token;		/* NULL: A holds none of this kind here */
	int		 live;		/* a key for the live-only routes */
};

static void
creds_of(const struct tenant *t, struct cred *c, size_t *n)
{
	*n = 0;
	c[(*n)++] = (struct cred){ "developerJwt", "api", t->dev.access, 0 };
	c[(*n)++] = (struct cred){ "apiKey", "sandbox", t->key, 0 };
	c[(*n)++] = (struct cred){ "apiKey", "api", t->devkey, 1 };
	c[(*n)++] = (struct cred){ "linkAccessToken", "sandbox", t->lat, 0 };
	c[(*n)++] = (struct cred){ "linkToken", "link", t->lt, 0 };
	c[(*n)++] = (struct cred){ "payToken", "sandbox", t->paytok, 0 };
	c[(*n)++] = (struct cred){ "sessionToken", "sandbox", t->st, 0 };
}

/* Whether the route takes c: c's scheme in its auth[] (a key of the
 * development environment on a live-only route, the sandbox key elsewhere,
 * as B's objects live there), or for an AUTH_NONE route the bearer its
 * flags name. */
static int
route_takes(json_object *route, const struct cred *c)
{
	const char *scheme = c->scheme;

	if (strcmp(scheme, "apiKey") == 0 && jarray_has(route, "flags", "live") != c->live)
		return 0;
	if (jarray_has(route, "auth", scheme))
		return 1;
	if (strcmp(scheme, "linkToken") == 0 &&
	    (jarray_has(route, "flags", "link_token") || jarray_has(route, "flags", "session_token")))
		return 1;
	if (strcmp(scheme, "sessionToken") == 0 && jarray_has(route, "flags", "session_token"))
		return 1;
	return 0;
}

static struct harness_resp *
call(const struct cred *c, json_object *route, const char *path, const char *body)
{
	const char *method = jstr(route, "method");
	const char *extra[3] = { NULL };
	size_t n = 0;

	if (jarray_has(route, "flags", "idem") || jarray_has(route, "flags", "once"))
		extra[n++] = harness_idem_header();
	if (jarray_has(route, "flags", "user_header"))
		extra[n++] = "X-Client-User-Id: " IMPORT_USER;
	return devacct_call(method, c->host, path, devacct_bearer(c->token), body, extra);
}

/* ---- the tenants ---- */

/* POST body to path on host with bearer (may be NULL): 201 expected; the
 * answer's member (malloc'ed). */
static char *
made(const char *host, const char *path, const char *bearer, const char *body,
    const char *member)
{
	struct harness_resp *r = devacct_call("POST", host, path,
	    bearer ? devacct_bearer(bearer) : NULL, body, NULL);
	char *v;

	harness_expect(r, 201);
	ck_assert_msg(devacct_str(r, member) != NULL, "no %s in %s", member, r->body);
	v = strdup(devacct_str(r, member));
	harness_resp_free(r);
	return v;
}

static void
tenant_new(struct tenant *t, const char *tag, const char *user)
{
	const char *extra[] = { harness_idem_header(), NULL };
	struct harness_resp *r;
	time_t now = time(NULL);

	devacct_new(&t->dev, tag);
	t->key = devacct_key_new(&t->dev, t->dev.client_id, "sandbox");
	devacct_verify_email(&t->dev);
	t->devkey = devacct_key_new(&t->dev, t->dev.client_id, "development");

	r = devacct_call("POST", "sandbox", "/v1/sandbox/account-links", devacct_bearer(t->key),
	    harness_fmt("{\"client_user_id\":\"%s\",\"username\":\"user_good\"}", user), extra);
	harness_expect(r, 201);
	t->link = strdup(devacct_str(r, "link_id"));
	t->lat = strdup(devacct_str(r, "access_token"));
	harness_resp_free(r);
	ck_assert_msg(harness_jobs_wait_idle(IDLE_MS) == 0, "%s", harness_error());
	t->bill = devacct_sql_value("SELECT id FROM bills WHERE link_id = $1"
	    " AND deleted_at IS NULL ORDER BY id LIMIT 1", t->link, NULL);
	ck_assert_msg(t->bill != NULL, "link %s has no bill", t->link);

	extra[0] = harness_idem_header();
	r = devacct_call("POST", "sandbox", "/v1/webhook-endpoints", devacct_bearer(t->key),
	    "{\"url\":\"http://127.0.0.1:9/iso\",\"events\":[\"bill.updated\"]}", extra);
	harness_expect(r, 201);
	t->hook = strdup(devacct_str(r, "id"));
	harness_resp_free(r);

	extra[0] = harness_idem_header();
	r = devacct_call("POST", "sandbox", "/v1/bill_imports", devacct_bearer(t->key),
	    "{\"client_user_id\":\"" IMPORT_USER "\",\"file_name\":\"bill.pdf\","
	    "\"content_type\":\"application/pdf\",\"size_bytes\":1000}", extra);
	harness_expect(r, 201);
	t->import = strdup(devacct_str(r, "id"));
	harness_resp_free(r);

	t->user = strdup(user);
	r = devacct_call("POST", "sandbox", "/v1/customer-messages", devacct_bearer(t->key),
	    harness_fmt("{\"customer_user_aid\":\"%s\",\"biller_id\":\"%s\","
	    "\"category\":\"account_update\",\"subject\":\"Your bill\","
	    "\"body\":\"Your bill is ready.\"}", user, BILLER), NULL);
	harness_expect(r, 201);
	t->message = strdup(devacct_str(r, "message_id"));
	harness_resp_free(r);

	/* a second link whose fixture plants insights */
	t->insight_user = strdup(harness_fmt("%s-ins", user));
	free(devacct_sandbox_link(t->key, t->insight_user, "user_insights"));
	ck_assert_msg(harness_jobs_wait_idle(IDLE_MS) == 0, "%s", harness_error());
	t->insight = devacct_sql_value("SELECT id FROM insights WHERE client_id = $1"
	    " AND user_aid = $2 ORDER BY id LIMIT 1", t->dev.client_id, t->insight_user);
	ck_assert_msg(t->insight != NULL, "client %s has no insight", t->dev.client_id);
	t->event = devacct_sql_value("SELECT id FROM events WHERE client_id = $1"
	    " AND environment = 'sandbox' ORDER BY id LIMIT 1", t->dev.client_id, NULL);
	ck_assert_msg(t->event != NULL, "client %s has no event", t->dev.client_id);

	r = devacct_call("POST", "api", "/v1/request-to-links", devacct_bearer(t->devkey),
	    harness_fmt("{\"client_user_id\":\"%s\",\"biller_id\":\"%s\","
	    "\"consents\":[\"bills\"]}", user, BILLER), NULL);
	harness_expect(r, 201);
	t->rtl = strdup(devacct_str(r, "id"));
	harness_resp_free(r);

	r = devacct_call("POST", "sandbox", "/v1/pay/payment-methods", devacct_bearer(t->key),
	    harness_fmt("{\"client_user_id\":\"%s\",\"pan\":\"4242424242424242\","
	    "\"expiry_month\":12,\"expiry_year\":%d,\"cvv\":\"123\"}", user,
	    gmtime(&now)->tm_year + 1902), NULL);
	harness_expect(r, 201);
	t->method = strdup(devacct_str(r, "payment_method_id"));
	harness_resp_free(r);

	t->lt = made("sandbox", "/v1/link-tokens", t->key,
	    harness_fmt("{\"client_user_id\":\"%s\"}", user), "link_token");

	{
		char *due = devacct_sql_value("SELECT id FROM bills WHERE link_id = $1 AND"
		    " status = 'PENDING' AND deleted_at IS NULL ORDER BY id LIMIT 1", t->link, NULL);

		ck_assert_msg(due != NULL, "link %s has no PENDING bill", t->link);
		extra[0] = harness_idem_header();
		r = devacct_call("POST", "sandbox", "/v1/pay/payments", devacct_bearer(t->key),
		    harness_fmt("{\"bill_id\":\"%s\",\"payment_method_id\":\"%s\"}", due,
		    t->method), extra);
		free(due);
	}
	ck_assert_msg(r->status == 201 || r->status == 202, "%ld %s", r->status, r->body);
	t->payment = strdup(devacct_str(r, "payment_attempt_id"));
	harness_resp_free(r);

	/* an onboarding request makes a biller discovery */
	r = devacct_call("POST", "sandbox", "/v1/request-to-links", devacct_bearer(t->key),
	    harness_fmt("{\"client_user_id\":\"%s\",\"onboarding\":{\"biller_name\":"
	    "\"NewCo\",\"biller_url\":\"https://newco-%s.example/\"}}", user, tag), NULL);
	harness_expect(r, 201);
	harness_resp_free(r);
	t->discovery = devacct_sql_value("SELECT id FROM biller_discoveries WHERE client_id = $1"
	    " ORDER BY id LIMIT 1", t->dev.client_id, NULL);
	ck_assert_msg(t->discovery != NULL, "client %s has no biller discovery", t->dev.client_id);

	t->sandbox = made("sandbox", "/v1/sandboxes", NULL, "{\"name\":\"Evaluation\"}",
	    "sandbox_id");
	t->paytok = made("sandbox", "/v1/pay-tokens", t->key,
	    harness_fmt("{\"client_user_id\":\"%s\"}", user), "pay_token");
	/* a connect session: a ticket of the link token, then the session */
	{
		char *tk = made("sandbox", "/v1/biller-connect/ticket", t->lt, NULL, "ticket");

		t->st = made("sandbox", "/v1/link-sessions", NULL,
		    harness_fmt("{\"ticket\":\"%s\"}", tk), "session_token");
		free(tk);
	}

	extra[0] = harness_idem_header();
	r = devacct_jwt(&t->dev, "POST", harness_fmt("/v1/iam/clients/%s/webhooks",
	    t->dev.client_id), "{\"environment\":\"sandbox\",\"url\":"
	    "\"http://127.0.0.1:9/iam\",\"events\":[\"bill.created\"]}", extra);
	harness_expect(r, 201);
	t->iamhook = strdup(devacct_str(r, "webhook.id") != NULL ? devacct_str(r, "webhook.id") :
	    devacct_str(r, "id") != NULL ? devacct_str(r, "id") : "(none)");
	ck_assert_msg(strcmp(t->iamhook, "(none)") != 0, "%s", r->body);
	harness_resp_free(r);
}

static void
tenant_free(struct tenant *t)
{
	free(t->key);
	free(t->link);
	free(t->lat);
	free(t->bill);
	free(t->hook);
	free(t->import);
	free(t->insight);
	free(t->event);
	free(t->message);
	free(t->user);
	free(t->insight_user);
	free(t->devkey);
	free(t->rtl);
	free(t->method);
	free(t->lt);
	free(t->iamhook);
	free(t->paytok);
	free(t->st);
	free(t->payment);
	free(t->discovery);
	free(t->sandbox);
	memset(t, 0, sizeof(*t));
}

static void
stack_up(void)
{
	struct harness_opts o;

	harness_opts_defaults(&o);
	/* payment attempts; the onboarding's biller name resolving */
	o.extra_config = "pay.execution = sandbox\n"
	    "discovery_hosts = newco-iso-a.example=93.184.216.34,"
	    "newco-iso-b.example=93.184.216.34\n";
	harness_fixture_start(&o);
	devacct_legal();
	srandom((unsigned)getpid() ^ (unsigned)time(NULL));
	tenant_new(&ta, "iso-a", "u-iso-a");
	tenant_new(&tb, "iso-b", "u-iso-b");
}

static void
stack_down(void)
{
	tenant_free(&ta);
	tenant_free(&tb);
	harness_fixture_stop();
}

/* ---- the tests ---- */

/* Every parameter of every route has a kind in kinds[]. */
START_TEST(every_parameter_has_a_kind)
{
	json_object *routes = routes_load();
	char missing[4096] = "";
	size_t i, j, np, o = 0;
	struct param ps[8];

	for (i = 0; i < json_object_array_length(routes); i++) {
		json_object *rt = json_object_array_get_idx(routes, i);
		const char *pattern = jstr(rt, "pattern");

		np = params_of(pattern, ps, N(ps));
		for (j = 0; j < np; j++)
			if (kind_of(ps[j].segment) == NULL && o < sizeof(missing) - 200)
				o += (size_t)snprintf(missing + o, sizeof(missing) - o,
				    " %s %s ({%s} after \"%s\");", jstr(rt, "method"), pattern,
				    ps[j].name, ps[j].segment);
	}
	json_object_put(routes);
	ck_assert_msg(missing[0] == '\0', "parameters of unknown kind: add each to kinds[]"
	    " in t/e2e/check_e2e_isolation.c (and make B's object of it):%s", missing);
}
END_TEST

/* A's credentials × B's ids × every id-taking route: as an unknown id. */
START_TEST(another_tenants_id_answers_as_unknown)
{
	json_object *routes = routes_load();
	struct cred creds[8];
	size_t ncred, i, j, c, percred[8];
	size_t nroutes = 0, ncalls = 0, ncalled, nfail = 0, nuncovered = 0, nnocred = 0;
	char fails[8192] = "", uncovered[4096] = "";
	size_t fo = 0, uo = 0;
	struct harness_resp *r;

	creds_of(&ta, creds, &ncred);
	memset(percred, 0, sizeof(percred));
	for (i = 0; i < json_object_array_length(routes); i++) {
		json_object *rt = json_object_array_get_idx(routes, i);
		const char *pattern = jstr(rt, "pattern"), *method = jstr(rt, "method");
		const char *bvals[8], *uvals[8];
		char ubuf[8][160], bpath[1024], upath[1024], query[512];
		struct param ps[8];
		size_t np = params_of(pattern, ps, N(ps));
		int ids = 0, made = 1, named = 0;
		char *body;

		for (j = 0; j < np; j++) {
			const struct kind *k = kind_of(ps[j].segment);

			ck_assert_msg(k != NULL, "%s %s: {%s} after \"%s\" is of no known kind:"
			    " add it to kinds[]", method, pattern, ps[j].name, ps[j].segment);
			if (k->use == K_OUTSIDE) {
				made = -1;
				break;
			}
			if (k->use == K_FIXED) {
				bvals[j] = uvals[j] = k->fixed;
				continue;
			}
			ids++;
			named |= k->use == K_NAME;
			bvals[j] = tenant_id(&tb, k);
			if (bvals[j] == NULL) {
				made = 0;
				continue;
			}
			unknown_like(bvals[j], ubuf[j], sizeof(ubuf[j]));
			uvals[j] = ubuf[j];
		}
		if (made < 0 || ids == 0)
			continue;		/* no tenant's id: outside the matrix */
		if (!made) {
			if (uo < sizeof(uncovered) - 200)
				uo += (size_t)snprintf(uncovered + uo, sizeof(uncovered) - uo,
				    "\n  %s %s (B's object not made)", method, pattern);
			nuncovered++;
			continue;
		}
		path_fill(pattern, bvals, bpath, sizeof(bpath));
		path_fill(pattern, uvals, upath, sizeof(upath));
		query_of(rt, query, sizeof(query));
		strncat(bpath, query, sizeof(bpath) - strlen(bpath) - 1);
		strncat(upath, query, sizeof(upath) - strlen(upath) - 1);
		body = body_of(rt);
		ncalled = ncalls;
		for (c = 0; c < ncred; c++) {
			const char *sb, *su;
			struct harness_resp *u;

			if (!route_takes(rt, &creds[c]))
				continue;
			if (creds[c].token == NULL) {
				if (uo < sizeof(uncovered) - 200)
					uo += (size_t)snprintf(uncovered + uo,
					    sizeof(uncovered) - uo, "\n  %s %s with %s (A holds none)",
					    method, pattern, creds[c].scheme);
				nuncovered++;
				continue;
			}
			r = call(&creds[c], rt, bpath, body);
			u = call(&creds[c], rt, upath, body);
			ncalls += 2;
			percred[c]++;
			sb = shape_of(r);
			su = shape_of(u);
			if (!answers_alike(r, u, spec_403_code(method, pattern), named)) {
				nfail++;
				if (fo < sizeof(fails) - 600)
					fo += (size_t)snprintf(fails + fo, sizeof(fails) - fo,
					    "\n  %s %s with A's %s: B's id %s → %s [%.160s];"
					    " unknown %s → %s", method, bpath, creds[c].scheme,
					    bvals[0], sb, r->body, uvals[0], su);
			}
			harness_resp_free(r);
			harness_resp_free(u);
		}
		free(body);
		if (ncalls > ncalled)
			nroutes++;
		else
			nnocred++;	/* a signed URL: no credential to cross */
	}
	json_object_put(routes);
	fprintf(stderr, "isolation matrix: %zu routes, %zu pairs of calls, %zu differ;"
	    " %zu routes without a credential (signed URLs); not covered: %zu%s\n", nroutes,
	    ncalls / 2, nfail, nnocred, nuncovered, uncovered);
	for (c = 0; c < ncred; c++)
		fprintf(stderr, "  %s on the %s host: %zu routes\n", creds[c].scheme,
		    creds[c].host, percred[c]);

	/* B's objects are all still there */
	r = devacct_jwt(&tb.dev, "GET", harness_fmt("/v1/iam/clients/%s", tb.dev.client_id),
	    NULL, NULL);
	harness_expect(r, 200);
	harness_resp_free(r);
	r = devacct_jwt(&tb.dev, "GET", harness_fmt("/v1/iam/clients/%s/webhooks",
	    tb.dev.client_id), NULL, NULL);
	ck_assert_msg(r->status == 200 && strstr(r->body, tb.iamhook) != NULL,
	    "B's iam webhook after the matrix: %ld %s", r->status, r->body);
	harness_resp_free(r);
	{
		const char *const paths[] = {
			harness_fmt("/v1/links/%s", tb.link),
			harness_fmt("/v1/bills/%s", tb.bill),
			harness_fmt("/v1/webhook-endpoints/%s", tb.hook),
			harness_fmt("/v1/bill_imports/%s", tb.import),
			harness_fmt("/v1/insights/%s?user_aid=%s", tb.insight, tb.insight_user),
			harness_fmt("/v1/activity/%s", tb.event),
			harness_fmt("/v1/customer-messages/%s", tb.message),
		};
		const char *extra[] = { "X-Client-User-Id: " IMPORT_USER, NULL };

		r = devacct_call("GET", "api", harness_fmt("/v1/request-to-links/%s", tb.rtl),
		    devacct_bearer(tb.devkey), NULL, NULL);
		ck_assert_msg(r->status == 200, "B's request to link after the matrix: %ld %s",
		    r->status, r->body);
		ck_assert_msg(devacct_str(r, "status") == NULL ||
		    strcmp(devacct_str(r, "status"), "CANCELLED") != 0, "%s", r->body);
		harness_resp_free(r);
		r = devacct_call("GET", "sandbox", harness_fmt("/v1/pay/payment-methods"
		    "?client_user_id=%s", tb.user), devacct_bearer(tb.key), NULL, NULL);
		ck_assert_msg(r->status == 200 && strstr(r->body, tb.method) != NULL,
		    "B's payment method after the matrix: %ld %s", r->status, r->body);
		harness_resp_free(r);
		for (j = 0; j < N(paths); j++) {
			r = devacct_call("GET", "sandbox", paths[j], devacct_bearer(tb.key), NULL,
			    extra);
			ck_assert_msg(r->status == 200, "B's %s after the matrix: %ld %s",
			    paths[j], r->status, r->body);
			harness_resp_free(r);
		}
	}
	ck_assert_msg(nroutes > 0 && ncalls > 0, "the matrix ran no call");
	ck_assert_msg(nuncovered == 0, "%zu not covered: make B's object of each kind, and"
	    " A's credential, in tenant_new():%s", nuncovered, uncovered);
	ck_assert_msg(nfail == 0, "%zu of %zu calls: another tenant's id answers unlike an"
	    " unknown one:%s", nfail, ncalls / 2, fails);
}
END_TEST

static Suite *
isolation_suite(void)
{
	Suite *s = suite_create("e2e_isolation");
	TCase *tc = tcase_create("isolation");

	tcase_add_unchecked_fixture(tc, stack_up, stack_down);
	tcase_add_checked_fixture(tc, harness_fixture_recover, NULL);
	tcase_set_timeout(tc, 240);
	tcase_add_test(tc, every_parameter_has_a_kind);
	tcase_add_test(tc, another_tenants_id_answers_as_unknown);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return harness_run_suite(isolation_suite());
}
