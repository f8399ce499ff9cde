/*
 * Requests to link and biller discovery end to end, through
 * nginx, as a client's backend uses them: every route of SPEC's table
 * with its rules and errors, the sandbox host's 404s, idempotency, the
 * list's filters, limits and cursor; proceed's session_url opened as the
 * link page does (POST /v1/link-sessions with its ticket), the login in
 * bds-jobs with the sandbox connector, the request IN_PROGRESS then
 * COMPLETED with link_token.completed; cancel and PATCH rules; expiry by
 * `bdsctl jobs` over a backdated row; the events at a webhook receiver.
 *
 * Discovery: the onboarding URL forms that are refused (http, IP
 * literals, userinfo, other ports, names resolving to loopback or private
 * addresses, names that do not resolve, public suffixes) and the accepted
 * one canonicalised; the match by registrable domain against the catalog;
 * `bdsctl discovery` list, approve (bind or add a biller) and reject
 * (biller.unsupported); GET /v1/biller-discoveries.
 *
 * No test needs the internet: the stack's discovery_hosts gives the names
 * a "public" test biller lives at a public address; `localhost` resolves
 * through /etc/hosts; a .invalid name resolves nowhere.
 *
 * RTL routes other than creation answer on the live host only, so the
 * tests drive them with a development key on the api host; the sandbox
 * key (sandbox host, http webhooks allowed) carries what the receiver
 * hears. Rows are aged with SQL instead of waiting.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <json-c/json.h>
#include <libpq-fe.h>

#include "core/crypto.h"
#include "devacct.h"
#include "harness.h"
#include "sim.h"
#include "receiver.h"

#define N(x) ((int)(sizeof(x) / sizeof((x)[0])))
#define SANDBOX_BILLER	"blr_01900000-0000-7000-8000-000000000001"
#define PGE_BILLER	"blr_01900001-0000-7000-8000-000000000001"	/* pge.example */
/* What a development key links (docs/DECISIONS.md "Environments: which
 * connector links where"): a portal biller; this one is the simulator's
 * "power" (t/e2e/sim.h), so a live flow logs in for real. */
#define LIVE_BILLER	"blr_01900002-0000-7000-8000-0000000051a1"
#define LIVE_USER	"cust00001"	/* the simulator's customer, password pw-… */
#define LINK_ORIGIN	"https://link.bds.example"	/* config link_url default */
#define WAIT_MS		60000	/* a bound on a loaded machine, not a timing check */
#define PUBLIC_V4	"93.184.216.34"
#define PUBLIC_V6	"2606:2800:220:1:248:1893:25c8:1946"

/* What the stack's resolver answers for the test biller names. */
#define DISCOVERY_HOSTS \
	"discovery_hosts = www.acme-power.example=" PUBLIC_V4 \
	",acme-power.example=" PUBLIC_V4 "|" PUBLIC_V6 \
	",my.account.pge.example=" PUBLIC_V4 \
	",login.newco.example=" PUBLIC_V4 ",newco.example=" PUBLIC_V4 \
	",portal.nope.example=" PUBLIC_V4 ",www.nope.example=" PUBLIC_V4 \
	",www.xn--bcher-strom-thb.example=" PUBLIC_V6 \
	",intranet.acme.example=10.1.2.3,dual.acme.example=" PUBLIC_V4 "|127.0.0.1" \
	",v6.acme.example=fd00::7,meta.acme.example=169.254.169.254" \
	",mapped.acme.example=::ffff:192.168.0.1,github.io=" PUBLIC_V4 \
	",acme.github.io=" PUBLIC_V4 ",later.acme.example=" PUBLIC_V4 \
	",login.xn--pypal-4ve.example=" PUBLIC_V4 ",www.paypal-bills.example=" PUBLIC_V4

static struct devacct dev_a, dev_b;

/* ------------------------------------------------------------------ */
/* Helpers                                                             */

struct tenant {
	char	*client, *sbx, *dev;	/* client id, sandbox key, development key */
};

static void
tenant_new(const struct devacct *d, struct tenant *t)
{
	t->client = devacct_client_new(d);
	t->sbx = devacct_key_new(d, t->client, "sandbox");
	t->dev = devacct_key_new(d, t->client, "development");
}

static void
tenant_free(struct tenant *t)
{
	free(t->client);
	free(t->sbx);
	free(t->dev);
}

/* The backend on the live (api) host with the development key; extra
 * headers (NULL-terminated) or NULL. */
static struct harness_resp *
live_x(const struct tenant *t, const char *method, const char *path, const char *body,
    const char *const extra[])
{
	return devacct_call(method, "api", path, devacct_bearer(t->dev), body, extra);
}

static struct harness_resp *
live(const struct tenant *t, const char *method, const char *path, const char *body)
{
	return live_x(t, method, path, body, NULL);
}

/* The backend on the sandbox host with the sandbox key. */
static struct harness_resp *
sbx(const struct tenant *t, const char *method, const char *path, const char *body)
{
	return devacct_call(method, "sandbox", path, devacct_bearer(t->sbx), body, NULL);
}

/* r answered want: the member at path (malloc'ed; "" when null or
 * absent); r is freed. */
static char *
take(struct harness_resp *r, long want, const char *path)
{
	char *v;

	harness_expect(r, want);
	v = strdup(devacct_str(r, path) != NULL ? devacct_str(r, path) : "");
	harness_resp_free(r);
	return v;
}

/* POST /v1/request-to-links (live): 201 expected; the request's id. */
static char *
rtl_new(const struct tenant *t, const char *body)
{
	return take(live(t, "POST", "/v1/request-to-links", body), 201, "id");
}

/* A request (live) with the live biller for user. */
static char *
rtl_simple(const struct tenant *t, const char *user)
{
	return rtl_new(t, harness_fmt("{\"client_user_id\":\"%s\",\"biller_id\":\""
	    LIVE_BILLER "\"}", user));
}

/* GET the request (live): the member at path (malloc'ed; "" when null). */
static char *
rtl_field(const struct tenant *t, const char *id, const char *path)
{
	return take(live(t, "GET", harness_fmt("/v1/request-to-links/%s", id), NULL), 200, path);
}

static void
assert_status(const struct tenant *t, const char *id, const char *want)
{
	char *v = rtl_field(t, id, "status");

	ck_assert_msg(strcmp(v, want) == 0, "%s is %s, want %s", id, v, want);
	free(v);
}

/* Events of type about object id (data.object.id) for the client. */
static long long
events_of(const char *client, const char *type, const char *id)
{
	char *q = strdup(harness_fmt("SELECT count(*) FROM events WHERE client_id = $1"
	    " AND type = '%s' AND data->'object'->>'id' = $2", type));
	long long n = devacct_sql_int(q, client, id);

	free(q);
	return n;
}

/* A member of the newest such event's data.object (malloc'ed; NULL). */
static char *
event_member(const char *client, const char *type, const char *id, const char *member)
{
	char *q = strdup(harness_fmt("SELECT data->'object'->>'%s' FROM events"
	    " WHERE client_id = $1 AND type = '%s' AND data->'object'->>'id' = $2"
	    " ORDER BY created_at DESC, id DESC LIMIT 1", member, type));
	char *v = devacct_sql_value(q, client, id);

	free(q);
	return v;
}

static void
assert_event_member(const char *client, const char *type, const char *id, const char *member,
    const char *want)
{
	char *v = event_member(client, type, id, member);

	ck_assert_msg(v != NULL && strcmp(v, want) == 0, "%s %s.%s = %s, want %s", type, id,
	    member, v ? v : "(null)", want);
	free(v);
}

/* POST proceed (live): 201 expected; the session_url (malloc'ed) and, when
 * lt is not NULL, the link token (malloc'ed). */
static char *
proceed(const struct tenant *t, const char *id, char **lt)
{
	struct harness_resp *r = live(t, "POST", harness_fmt("/v1/request-to-links/%s/proceed",
	    id), NULL);
	char *url;

	harness_expect(r, 201);
	url = strdup(devacct_str(r, "session_url"));
	if (lt != NULL)
		*lt = strdup(devacct_str(r, "link_token"));
	harness_resp_free(r);
	return url;
}

/* What the link page does with a session_url: POST /v1/link-sessions with
 * its ticket. The status, and the session token (malloc'ed) on 201. A
 * session that opened has queued its request's move (IN_PROGRESS, a job
 * of bds-jobs): waited for, so callers see the request as the client
 * will. */
static long
open_session(const char *host, const char *session_url, char **st)
{
	const char *tk = strstr(session_url, "#ticket=");
	struct harness_resp *r;
	long status;

	ck_assert_msg(tk != NULL, "no ticket in %s", session_url);
	r = devacct_call("POST", host, "/v1/link-sessions", NULL,
	    harness_fmt("{\"ticket\":\"%s\"}", tk + 8), NULL);
	status = r->status;
	if (st != NULL)
		*st = status == 201 ? strdup(devacct_str(r, "session_token")) : NULL;
	harness_resp_free(r);
	if (status == 201)
		ck_assert_msg(harness_jobs_wait_settled("rtl.session_started", NULL, WAIT_MS) == 0,
		    "bds-jobs: %s", harness_error());
	return status;
}

/* The user logs in (the sandbox connector on the sandbox host, the
 * simulator's portal on the live one) and bds-jobs runs the login; the
 * session's current status (malloc'ed) and its link_id (malloc'ed). */
static char *
connect_and_wait(const char *host, const char *st, char **link_id)
{
	int sandbox = strcmp(host, "sandbox") == 0;
	struct harness_resp *r = devacct_call("POST", host, "/v1/link-sessions/connect",
	    devacct_bearer(st), harness_fmt("{\"username\":\"%s\",\"password\":\"%s\"}",
	    sandbox ? "user_good" : LIVE_USER, sandbox ? "pass_good" : "pw-" LIVE_USER), NULL);
	char *status;

	harness_expect(r, 202);
	harness_resp_free(r);
	/* the login settled, retries after a backoff included, and what it queued ran */
	ck_assert_msg(harness_jobs_wait_settled("connect", NULL, WAIT_MS) == 0, "bds-jobs: %s",
	    harness_error());
	ck_assert_msg(harness_jobs_wait_idle(WAIT_MS) == 0, "bds-jobs: %s", harness_error());
	r = devacct_call("GET", host, "/v1/link-sessions/current", devacct_bearer(st), NULL, NULL);
	harness_expect(r, 200);
	status = strdup(devacct_str(r, "status"));
	if (link_id != NULL)
		*link_id = devacct_str(r, "link_id") ? strdup(devacct_str(r, "link_id")) : NULL;
	harness_resp_free(r);
	return status;
}

static int
bdsctl(const char *const args[])
{
	return harness_bdsctl(args);
}

/* The tail of bdsctl.log holds s. */
static int
bdsctl_said(const char *s)
{
	char *log = harness_slurp(harness_fmt("%s/bdsctl.log", harness_dir()));
	int found = log != NULL && strstr(log, s) != NULL;

	free(log);
	return found;
}

/* The top-level member key of r's body is null (devacct_text cannot tell
 * null from absent). */
#define assert_null(r, key) \
	ck_assert_msg(strstr((r)->body, "\"" key "\":null") != NULL, "%s not null: %s", key, \
	    (r)->body)

/* ------------------------------------------------------------------ */
/* Create, get                                                         */

/* Every field of SPEC's table, and the ones DECISIONS adds, as created;
 * GET answers the same; link_request.created names the biller. */
START_TEST(create_and_get)
{
	struct tenant t;
	struct harness_resp *r, *g;
	char *id;

	tenant_new(&dev_a, &t);
	r = live(&t, "POST", "/v1/request-to-links", harness_fmt("{\"client_user_id\":\"user-1\","
	    "\"biller_id\":\"" SANDBOX_BILLER "\",\"client_id\":\"%s\",\"consents\":[\"bills\","
	    "\"usage\"],\"metadata\":{\"campaign\":\"spring\",\"n\":[1,2,{\"x\":null}]}}",
	    t.client));
	harness_expect(r, 201);
	id = strdup(devacct_str(r, "id"));
	ck_assert_msg(strncmp(id, "rtl_", 4) == 0, "%s", r->body);
	ck_assert_pstr_eq(devacct_str(r, "object"), "request_to_link");
	ck_assert_pstr_eq(devacct_str(r, "client_id"), t.client);
	ck_assert_pstr_eq(devacct_str(r, "client_user_id"), "user-1");
	ck_assert_pstr_eq(devacct_str(r, "biller_id"), SANDBOX_BILLER);
	ck_assert_pstr_eq(devacct_str(r, "status"), "PENDING");
	assert_null(r, "link_token_id");
	assert_null(r, "session_url");
	ck_assert_str_eq(devacct_text(r, "metadata"),
	    "{\"campaign\":\"spring\",\"n\":[1,2,{\"x\":null}]}");
	ck_assert_str_eq(devacct_text(r, "consents"), "[\"bills\",\"usage\"]");
	assert_null(r, "onboarding");
	assert_null(r, "biller_discovery_id");
	assert_null(r, "cancel_reason");
	ck_assert_ptr_nonnull(devacct_str(r, "created_at"));
	ck_assert_ptr_nonnull(devacct_str(r, "updated_at"));

	g = live(&t, "GET", harness_fmt("/v1/request-to-links/%s", id), NULL);
	harness_expect(g, 200);
	ck_assert_str_eq(g->body, r->body);
	harness_resp_free(g);
	harness_resp_free(r);

	ck_assert_int_eq(events_of(t.client, "link_request.created", id), 1);
	assert_event_member(t.client, "link_request.created", id, "biller_id", SANDBOX_BILLER);
	assert_event_member(t.client, "link_request.created", id, "status", "PENDING");
	assert_event_member(t.client, "link_request.created", id, "client_user_id", "user-1");
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM events WHERE client_id = $1"
	    " AND type = 'link_request.created' AND environment = 'development'"
	    " AND data->>'link_request_id' = $2", t.client, id), 1);
	/* the minimum: no consents, no metadata (null is none) */
	r = live(&t, "POST", "/v1/request-to-links", "{\"client_user_id\":\"user-2\","
	    "\"biller_id\":\"" SANDBOX_BILLER "\",\"metadata\":null}");
	harness_expect(r, 201);
	ck_assert_str_eq(devacct_text(r, "metadata"), "{}");
	ck_assert_str_eq(devacct_text(r, "consents"), "[]");
	harness_resp_free(r);
	free(id);
	tenant_free(&t);
}
END_TEST

/* An UNSUPPORTED biller for the bad-body table. */
#define UNSUPPORTED_BILLER "blr_01900002-0000-7000-8000-00000000dead"

static const struct {
	const char	*body;
	long		 status;
	const char	*code, *field, *field_code;
} bad_creates[] = {
	{ "{}", 400, "VALIDATION_ERROR", "client_user_id", "required" },
	{ "{\"client_user_id\":\"\",\"biller_id\":\"" SANDBOX_BILLER "\"}", 400,
	  "VALIDATION_ERROR", "client_user_id", NULL },
	{ "{\"client_user_id\":\"u\"}", 400, "VALIDATION_ERROR", "biller_id", "required" },
	{ "{\"client_user_id\":\"u\",\"biller_id\":\"" SANDBOX_BILLER "\",\"onboarding\":"
	  "{\"biller_name\":\"Acme\",\"biller_url\":\"https://www.acme-power.example/\"}}", 400,
	  "VALIDATION_ERROR", "onboarding", "exclusive" },
	{ "{\"client_user_id\":\"u\",\"biller_id\":\"blr_01900000-0000-7000-8000-0000000000ff\"}",
	  400, "VALIDATION_ERROR", "biller_id", "unknown_biller" },
	{ "{\"client_user_id\":\"u\",\"biller_id\":\"nonsense\"}", 400, "VALIDATION_ERROR",
	  "biller_id", "unknown_biller" },
	{ "{\"client_user_id\":\"u\",\"biller_id\":\"" UNSUPPORTED_BILLER "\"}", 400,
	  "VALIDATION_ERROR", "biller_id", "biller_unsupported" },
	{ "{\"client_user_id\":\"u\",\"biller_id\":\"" SANDBOX_BILLER "\",\"consents\":"
	  "[\"bills\",\"teleport\"]}", 400, "VALIDATION_ERROR", "consents[1]", NULL },
	{ "{\"client_user_id\":\"u\",\"biller_id\":\"" SANDBOX_BILLER "\",\"consents\":\"bills\"}",
	  400, "VALIDATION_ERROR", "consents", NULL },
	{ "{\"client_user_id\":\"u\",\"biller_id\":\"" SANDBOX_BILLER "\",\"metadata\":\"{}\"}",
	  400, "VALIDATION_ERROR", "metadata", "invalid_type" },
	{ "{\"client_user_id\":\"u\",\"biller_id\":\"" SANDBOX_BILLER "\",\"metadata\":[1]}",
	  400, "VALIDATION_ERROR", "metadata", "invalid_type" },
	{ "{\"client_user_id\":\"u\",\"onboarding\":null}", 400, "VALIDATION_ERROR",
	  "onboarding", NULL },
	{ "{\"client_user_id\":\"u\",\"onboarding\":{\"biller_name\":\"A\",\"biller_url\":"
	  "\"https://www.acme-power.example/\",\"x\":1}}", 400, "VALIDATION_ERROR",
	  "onboarding.x", "unknown_field" },
	{ "{\"client_user_id\":\"u\",\"biller_id\":\"" SANDBOX_BILLER "\",\"status\":\"PENDING\"}",
	  400, "VALIDATION_ERROR", "status", "unknown_field" },
	{ "{\"client_user_id\":\"u\",\"onboarding\":{\"biller_url\":\"https://www.acme-power."
	  "example/\"}}", 400, "VALIDATION_ERROR", "onboarding.biller_name", "required" },
	{ "{\"client_user_id\":\"u\",\"onboarding\":{\"biller_name\":\"Acme\"}}", 400,
	  "VALIDATION_ERROR", "onboarding.biller_url", "required" },
	{ "{\"client_user_id\":\"u\",\"onboarding\":{\"biller_name\":\"   \",\"biller_url\":"
	  "\"https://www.acme-power.example/\"}}", 400, "VALIDATION_ERROR",
	  "onboarding.biller_name", "blank" },
	{ "{\"client_user_id\":\"u\",\"onboarding\":{\"biller_name\":\"a\\tb\",\"biller_url\":"
	  "\"https://www.acme-power.example/\"}}", 400, "VALIDATION_ERROR",
	  "onboarding.biller_name", "control_character" },
	{ "{\"client_user_id\":\"u\",\"biller_id\":\"" SANDBOX_BILLER "\",\"consents\":"
	  "[\"bills\",\"usage\",\"bills\"]}", 400, "VALIDATION_ERROR", "consents[2]",
	  "duplicate_item" },
	{ "{\"client_user_id\":\"u\",\"biller_id\":\"" SANDBOX_BILLER "\",\"client_id\":"
	  "\"cli_someone_else\"}", 403, "CLIENT_ID_MISMATCH", NULL, NULL },
};

/* Each bad body is its 4xx naming the field, and creates nothing. */
START_TEST(create_bad)
{
	struct tenant t;
	struct harness_resp *r;

	tenant_new(&dev_a, &t);
	r = live(&t, "POST", "/v1/request-to-links", bad_creates[_i].body);
	harness_assert_coded(r, bad_creates[_i].status, bad_creates[_i].code);
	if (bad_creates[_i].field != NULL)
		ck_assert_pstr_eq(devacct_str(r, "errors.0.field"), bad_creates[_i].field);
	if (bad_creates[_i].field_code != NULL)
		ck_assert_pstr_eq(devacct_str(r, "errors.0.code"), bad_creates[_i].field_code);
	harness_resp_free(r);
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM request_to_links"
	    " WHERE client_id = $1", t.client, NULL), 0);
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM events WHERE client_id = $1",
	    t.client, NULL), 0);
	tenant_free(&t);
}
END_TEST

/* metadata up to 4096 bytes as JSON is taken; one more is refused. */
START_TEST(create_metadata_size)
{
	struct tenant t;
	struct harness_resp *r;
	char *body = malloc(5000), *pad = malloc(5000);

	tenant_new(&dev_a, &t);
	for (int len = 4096; len <= 4097; len++) {
		/* {"k":"xxx…"} is len bytes: 8 of punctuation and key */
		memset(pad, 'x', (size_t)len - 8);
		pad[len - 8] = '\0';
		snprintf(body, 5000, "{\"client_user_id\":\"u\",\"biller_id\":\"" SANDBOX_BILLER
		    "\",\"metadata\":{\"k\":\"%s\"}}", pad);
		r = live(&t, "POST", "/v1/request-to-links", body);
		if (len == 4096)
			harness_expect(r, 201);
		else {
			harness_assert_coded(r, 400, "VALIDATION_ERROR");
			ck_assert_pstr_eq(devacct_str(r, "errors.0.code"), "too_long");
		}
		harness_resp_free(r);
	}
	free(body);
	free(pad);
	tenant_free(&t);
}
END_TEST

/* Idempotency-Key as on the other POSTs: the same body replays the first
 * 201 (one request, one event); another body is 409 IDEMPOTENCY_CONFLICT;
 * cancel replays too; proceed (a secret in its answer) is not replayable. */
START_TEST(idempotency)
{
	const char *key = harness_idem_header(), *extra[] = { key, NULL };
	/* metadata's members out of order: the replay keeps them as sent */
	const char *body = "{\"client_user_id\":\"u-idem\",\"biller_id\":\"" LIVE_BILLER "\","
	    "\"metadata\":{\"zeta\":1,\"a\":{\"y\":2,\"b\":3}}}";
	struct tenant t;
	struct harness_resp *r1, *r2;
	char *id;

	tenant_new(&dev_a, &t);
	r1 = live_x(&t, "POST", "/v1/request-to-links", body, extra);
	harness_expect(r1, 201);
	ck_assert_msg(strstr(r1->body, "{\"zeta\":1,\"a\":{\"y\":2,\"b\":3}}") != NULL, "%s",
	    r1->body);
	r2 = live_x(&t, "POST", "/v1/request-to-links", body, extra);
	harness_expect(r2, 201);
	/* the same answer, byte for byte */
	ck_assert_str_eq(r1->body, r2->body);
	id = strdup(devacct_str(r1, "id"));
	harness_resp_free(r1);
	harness_resp_free(r2);
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM request_to_links WHERE"
	    " client_id = $1", t.client, NULL), 1);
	ck_assert_int_eq(events_of(t.client, "link_request.created", id), 1);
	r2 = live_x(&t, "POST", "/v1/request-to-links", "{\"client_user_id\":\"other\","
	    "\"biller_id\":\"" SANDBOX_BILLER "\"}", extra);
	harness_assert_coded(r2, 409, "IDEMPOTENCY_CONFLICT");
	harness_resp_free(r2);

	/* proceed: the answer holds a ticket, so the key is not replayable */
	extra[0] = harness_idem_header();
	r1 = live_x(&t, "POST", harness_fmt("/v1/request-to-links/%s/proceed", id), NULL, extra);
	harness_expect(r1, 201);
	r2 = live_x(&t, "POST", harness_fmt("/v1/request-to-links/%s/proceed", id), NULL, extra);
	harness_assert_coded(r2, 409, "IDEMPOTENCY_KEY_NOT_REPLAYABLE");
	harness_resp_free(r1);
	harness_resp_free(r2);
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM link_tokens WHERE client_id = $1",
	    t.client, NULL), 1);

	/* cancel replays its 201 and cancels once */
	extra[0] = harness_idem_header();
	r1 = live_x(&t, "POST", harness_fmt("/v1/request-to-links/%s/cancel", id),
	    "{\"reason\":\"dup\"}", extra);
	harness_expect(r1, 201);
	r2 = live_x(&t, "POST", harness_fmt("/v1/request-to-links/%s/cancel", id),
	    "{\"reason\":\"dup\"}", extra);
	harness_expect(r2, 201);
	ck_assert_msg(json_object_equal(r1->json, r2->json), "%s\n%s", r1->body, r2->body);
	harness_resp_free(r1);
	harness_resp_free(r2);
	ck_assert_int_eq(events_of(t.client, "link_request.cancelled", id), 1);
	free(id);
	tenant_free(&t);
}
END_TEST

/* On the sandbox host creation works (sandbox key) and every other RTL
 * route is 404 NOT_FOUND, with or without a key; the live host serves
 * them. */
START_TEST(sandbox_host)
{
	/* path: "/v1/request-to-links", then the id when with_id, then suffix */
	static const struct {
		const char *method, *suffix, *body;
		int with_id;
	} routes[] = {
		{ "GET", "", NULL, 0 },
		{ "GET", "?status=PENDING", NULL, 0 },
		{ "GET", "", NULL, 1 },
		{ "PATCH", "/status", "{\"status\":\"IN_PROGRESS\"}", 1 },
		{ "POST", "/cancel", "{}", 1 },
		{ "POST", "/proceed", NULL, 1 },
	};
	struct tenant t;
	struct harness_resp *r;
	char *id, *live_id;

	tenant_new(&dev_a, &t);
	r = sbx(&t, "POST", "/v1/request-to-links", "{\"client_user_id\":\"u-sbx\","
	    "\"biller_id\":\"" SANDBOX_BILLER "\"}");
	harness_expect(r, 201);
	id = strdup(devacct_str(r, "id"));
	harness_resp_free(r);
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM request_to_links WHERE id = $1"
	    " AND environment = 'sandbox'", id, NULL), 1);
	live_id = rtl_simple(&t, "u-live");
	for (int i = 0; i < N(routes); i++) {
		const char *path = harness_fmt("/v1/request-to-links%s%s%s",
		    routes[i].with_id ? "/" : "", routes[i].with_id ? id : "", routes[i].suffix);

		r = sbx(&t, routes[i].method, path, routes[i].body);
		harness_assert_coded(r, 404, "NOT_FOUND");
		harness_resp_free(r);
		r = devacct_call(routes[i].method, "sandbox", path, NULL, routes[i].body, NULL);
		harness_assert_coded(r, 404, "NOT_FOUND");
		harness_resp_free(r);
	}
	/* nothing moved */
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM request_to_links WHERE id = $1"
	    " AND status = 'PENDING'", id, NULL), 1);
	/* the live host: its own environment's requests */
	r = live(&t, "GET", "/v1/request-to-links", NULL);
	harness_expect(r, 200);
	ck_assert_int_eq(devacct_int(r, "total"), 1);
	ck_assert_pstr_eq(devacct_str(r, "items.0.id"), live_id);
	harness_resp_free(r);
	/* a sandbox request is unknown to the development key */
	r = live(&t, "GET", harness_fmt("/v1/request-to-links/%s", id), NULL);
	harness_assert_coded(r, 404, "REQUEST_TO_LINK_NOT_FOUND");
	harness_resp_free(r);
	/* no key: 401 on the live host */
	r = devacct_call("GET", "api", "/v1/request-to-links", NULL, NULL, NULL);
	harness_assert_coded(r, 401, NULL);
	harness_resp_free(r);
	free(id);
	free(live_id);
	tenant_free(&t);
}
END_TEST

/* Another client's request, a malformed or unknown id: 404 on every route,
 * and nothing changes. */
START_TEST(tenancy)
{
	static const struct { const char *method, *suffix, *body; } routes[] = {
		{ "GET", "", NULL },
		{ "PATCH", "/status", "{\"status\":\"COMPLETED\"}" },
		{ "POST", "/cancel", "{}" },
		{ "POST", "/proceed", NULL },
	};
	const char *ids[3];
	struct tenant a, b;
	struct harness_resp *r;
	char *theirs;

	tenant_new(&dev_a, &a);
	tenant_new(&dev_b, &b);
	theirs = rtl_simple(&b, "u-b");
	ids[0] = theirs;
	ids[1] = "rtl_01900000-0000-7000-8000-0000000000aa";
	ids[2] = "not-an-id";
	for (int i = 0; i < N(routes); i++)
		for (int k = 0; k < 3; k++) {
			r = live(&a, routes[i].method, harness_fmt("/v1/request-to-links/%s%s",
			    ids[k], routes[i].suffix), routes[i].body);
			harness_assert_coded(r, 404, "REQUEST_TO_LINK_NOT_FOUND");
			harness_resp_free(r);
		}
	assert_status(&b, theirs, "PENDING");
	r = live(&a, "GET", "/v1/request-to-links", NULL);
	harness_expect(r, 200);
	ck_assert_int_eq(devacct_int(r, "total"), 0);
	harness_resp_free(r);
	free(theirs);
	tenant_free(&a);
	tenant_free(&b);
}
END_TEST

/* ------------------------------------------------------------------ */
/* The list                                                            */

/* Filters (status, client_user_id, biller_id, search), the total of the
 * filtered set, limit default 50 and max 200, cursor pages that neither
 * skip nor repeat, a cursor bound to its filters, page/page_size 400. */
START_TEST(list)
{
	struct tenant t;
	struct harness_resp *r;
	char *ids[55], *seen = calloc(1, 8192), *cursor = NULL;
	int pages = 0, count = 0;

	tenant_new(&dev_a, &t);
	for (int i = 0; i < 55; i++)
		ids[i] = rtl_new(&t, harness_fmt("{\"client_user_id\":\"%s\",\"biller_id\":\"%s\"}",
		    i < 3 ? "alice-search" : "bob", i == 1 ? PGE_BILLER : SANDBOX_BILLER));
	devacct_sql_exec("UPDATE request_to_links SET status = 'CANCELLED' WHERE id = $1",
	    ids[2], NULL);

	/* default limit 50, newest first, total of everything */
	r = live(&t, "GET", "/v1/request-to-links", NULL);
	harness_expect(r, 200);
	ck_assert_int_eq(json_object_array_length(devacct_json(r, "items")), 50);
	ck_assert_int_eq(devacct_int(r, "total"), 55);
	ck_assert_int_eq(devacct_int(r, "limit"), 50);
	ck_assert(devacct_bool(r, "has_more"));
	ck_assert_ptr_nonnull(devacct_str(r, "next_cursor"));
	ck_assert_pstr_eq(devacct_str(r, "items.0.id"), ids[54]);
	harness_resp_free(r);

	/* pages of 7: every request once */
	do {
		r = live(&t, "GET", cursor ? harness_fmt("/v1/request-to-links?limit=7&cursor=%s",
		    cursor) : "/v1/request-to-links?limit=7", NULL);
		harness_expect(r, 200);
		ck_assert_int_eq(devacct_int(r, "total"), 55);
		for (size_t i = 0; i < json_object_array_length(devacct_json(r, "items")); i++) {
			const char *id = devacct_str(r, harness_fmt("items.%zu.id", i));

			ck_assert_msg(strstr(seen, id) == NULL, "%s twice", id);
			strcat(seen, id);
			count++;
		}
		free(cursor);
		cursor = devacct_bool(r, "has_more") ? strdup(devacct_str(r, "next_cursor")) : NULL;
		if (cursor == NULL)
			assert_null(r, "next_cursor");
		harness_resp_free(r);
		pages++;
	} while (cursor != NULL && pages < 20);
	ck_assert_int_eq(count, 55);
	ck_assert_int_eq(pages, 8);

	/* filters */
	r = live(&t, "GET", "/v1/request-to-links?client_user_id=alice-search", NULL);
	ck_assert_int_eq(devacct_int(r, "total"), 3);
	harness_resp_free(r);
	r = live(&t, "GET", "/v1/request-to-links?status=CANCELLED", NULL);
	ck_assert_int_eq(devacct_int(r, "total"), 1);
	ck_assert_pstr_eq(devacct_str(r, "items.0.id"), ids[2]);
	harness_resp_free(r);
	r = live(&t, "GET", "/v1/request-to-links?biller_id=" PGE_BILLER, NULL);
	ck_assert_int_eq(devacct_int(r, "total"), 1);
	ck_assert_pstr_eq(devacct_str(r, "items.0.id"), ids[1]);
	harness_resp_free(r);
	r = live(&t, "GET", "/v1/request-to-links?status=PENDING&client_user_id=alice-search", NULL);
	ck_assert_int_eq(devacct_int(r, "total"), 2);
	harness_resp_free(r);
	/* search: the end user (substring, any case), the biller's name, the id;
	 * LIKE wildcards are literal */
	r = live(&t, "GET", "/v1/request-to-links?search=ALICE-S", NULL);
	ck_assert_int_eq(devacct_int(r, "total"), 3);
	harness_resp_free(r);
	r = live(&t, "GET", "/v1/request-to-links?search=pacific%20gas", NULL);
	ck_assert_int_eq(devacct_int(r, "total"), 1);
	harness_resp_free(r);
	r = live(&t, "GET", harness_fmt("/v1/request-to-links?search=%s", ids[7]), NULL);
	ck_assert_int_eq(devacct_int(r, "total"), 1);
	harness_resp_free(r);
	r = live(&t, "GET", "/v1/request-to-links?search=%25", NULL);
	ck_assert_int_eq(devacct_int(r, "total"), 0);
	ck_assert_str_eq(devacct_text(r, "items"), "[]");
	ck_assert(!devacct_bool(r, "has_more"));
	harness_resp_free(r);

	/* limits and refusals */
	r = live(&t, "GET", "/v1/request-to-links?limit=200", NULL);
	harness_expect(r, 200);
	ck_assert_int_eq(json_object_array_length(devacct_json(r, "items")), 55);
	ck_assert(!devacct_bool(r, "has_more"));
	harness_resp_free(r);
	{
		static const char *const bad[] = { "limit=201", "limit=0", "limit=x", "page=2",
		    "page_size=10", "status=DONE", "cursor=garbage", "sort=asc" };

		for (int i = 0; i < N(bad); i++) {
			r = live(&t, "GET", harness_fmt("/v1/request-to-links?%s", bad[i]), NULL);
			ck_assert_msg(r->status == 400, "%s: %ld", bad[i], r->status);
			harness_resp_free(r);
		}
	}
	/* a cursor made under other filters does not open */
	r = live(&t, "GET", "/v1/request-to-links?limit=1&client_user_id=bob", NULL);
	cursor = strdup(devacct_str(r, "next_cursor"));
	harness_resp_free(r);
	r = live(&t, "GET", harness_fmt("/v1/request-to-links?limit=1&cursor=%s", cursor), NULL);
	harness_assert_coded(r, 400, "INVALID_CURSOR");
	harness_resp_free(r);
	r = live(&t, "GET", harness_fmt("/v1/request-to-links?limit=1&client_user_id=bob"
	    "&cursor=%s", cursor), NULL);
	harness_expect(r, 200);
	harness_resp_free(r);
	free(cursor);
	for (int i = 0; i < 55; i++)
		free(ids[i]);
	free(seen);
	tenant_free(&t);
}
END_TEST

/* ------------------------------------------------------------------ */
/* PATCH status, cancel                                                */

/* Any status but EXPIRED may be set from any other; biller_id must exist,
 * link_token_id must be one of the key's tokens; link_request.updated on
 * each status or biller change and not otherwise; a closed request's
 * live link tokens end. */
START_TEST(patch_status)
{
	struct tenant t, other;
	struct harness_resp *r;
	char *id, *url, *lt, *theirs_lt = NULL, *v;
	const char *path;

	tenant_new(&dev_a, &t);
	tenant_new(&dev_b, &other);
	id = rtl_simple(&t, "u-patch");
	path = strdup(harness_fmt("/v1/request-to-links/%s/status", id));

	r = live(&t, "PATCH", path, "{\"status\":\"EXPIRED\"}");
	harness_assert_coded(r, 400, "VALIDATION_ERROR");
	ck_assert_pstr_eq(devacct_str(r, "errors.0.field"), "status");
	ck_assert_pstr_eq(devacct_str(r, "errors.0.code"), "not_settable");
	harness_resp_free(r);
	r = live(&t, "PATCH", path, "{\"status\":\"DONE\"}");
	harness_assert_coded(r, 400, "VALIDATION_ERROR");
	ck_assert_pstr_eq(devacct_str(r, "errors.0.code"), "invalid_enum");
	harness_resp_free(r);
	r = live(&t, "PATCH", path, "{}");
	harness_assert_coded(r, 400, "VALIDATION_ERROR");
	harness_resp_free(r);
	r = live(&t, "PATCH", path, "{\"status\":\"PENDING\",\"biller_id\":"
	    "\"blr_01900000-0000-7000-8000-0000000000ff\"}");
	harness_assert_coded(r, 400, "VALIDATION_ERROR");
	ck_assert_pstr_eq(devacct_str(r, "errors.0.code"), "unknown_biller");
	harness_resp_free(r);
	r = live(&t, "PATCH", path, "{\"status\":\"PENDING\",\"link_token_id\":\"x\"}");
	harness_assert_coded(r, 400, "VALIDATION_ERROR");
	harness_resp_free(r);
	/* another client's link token is unknown here */
	r = live(&other, "POST", "/v1/link-tokens", "{\"client_user_id\":\"x\"}");
	harness_expect(r, 201);
	theirs_lt = strdup(devacct_str(r, "link_token"));
	harness_resp_free(r);
	r = live(&t, "PATCH", path, harness_fmt("{\"status\":\"PENDING\",\"link_token_id\":\"%s\"}",
	    theirs_lt));
	harness_assert_coded(r, 400, "VALIDATION_ERROR");
	ck_assert_pstr_eq(devacct_str(r, "errors.0.code"), "unknown_link_token");
	harness_resp_free(r);
	/* the key's own token, but for another end user: refused as
	 * POST /v1/link-tokens refuses the pairing */
	v = take(live(&t, "POST", "/v1/link-tokens", "{\"client_user_id\":\"u-someone-else\"}"),
	    201, "link_token");
	r = live(&t, "PATCH", path, harness_fmt("{\"status\":\"PENDING\",\"link_token_id\":\"%s\"}",
	    v));
	harness_assert_coded(r, 400, "VALIDATION_ERROR");
	ck_assert_pstr_eq(devacct_str(r, "errors.0.field"), "link_token_id");
	ck_assert_pstr_eq(devacct_str(r, "errors.0.code"), "other_user");
	harness_resp_free(r);
	free(v);
	ck_assert_int_eq(events_of(t.client, "link_request.updated", id), 0);

	/* same status, nothing else: stored, no event */
	r = live(&t, "PATCH", path, "{\"status\":\"PENDING\"}");
	harness_expect(r, 200);
	ck_assert_pstr_eq(devacct_str(r, "status"), "PENDING");
	harness_resp_free(r);
	ck_assert_int_eq(events_of(t.client, "link_request.updated", id), 0);
	/* only the link token changes: that is an update too */
	v = take(live(&t, "POST", "/v1/link-tokens", "{\"client_user_id\":\"u-patch\"}"), 201,
	    "link_token");
	r = live(&t, "PATCH", path, harness_fmt("{\"status\":\"PENDING\",\"link_token_id\":\"%s\"}",
	    v));
	harness_expect(r, 200);
	ck_assert_pstr_eq(devacct_str(r, "link_token_id"), v);
	harness_resp_free(r);
	ck_assert_int_eq(events_of(t.client, "link_request.updated", id), 1);
	assert_event_member(t.client, "link_request.updated", id, "link_token_id", v);
	free(v);

	/* proceed is an update (a new link token); so is a biller change */
	url = proceed(&t, id, &lt);
	ck_assert_int_eq(events_of(t.client, "link_request.updated", id), 2);
	assert_event_member(t.client, "link_request.updated", id, "link_token_id", lt);
	r = live(&t, "PATCH", path, harness_fmt("{\"status\":\"IN_PROGRESS\",\"biller_id\":\""
	    PGE_BILLER "\",\"link_token_id\":\"%s\"}", lt));
	harness_expect(r, 200);
	ck_assert_pstr_eq(devacct_str(r, "status"), "IN_PROGRESS");
	ck_assert_pstr_eq(devacct_str(r, "biller_id"), PGE_BILLER);
	ck_assert_pstr_eq(devacct_str(r, "link_token_id"), lt);
	harness_resp_free(r);
	ck_assert_int_eq(events_of(t.client, "link_request.updated", id), 3);
	assert_event_member(t.client, "link_request.updated", id, "previous_status", "PENDING");
	assert_event_member(t.client, "link_request.updated", id, "biller_id", PGE_BILLER);

	/* COMPLETED, then back to PENDING: any to any */
	r = live(&t, "PATCH", path, "{\"status\":\"COMPLETED\"}");
	harness_expect(r, 200);
	assert_null(r, "session_url");	/* wiped when closed */
	harness_resp_free(r);
	ck_assert_int_eq(events_of(t.client, "link_request.updated", id), 4);
	/* closed: its session_url's ticket no longer opens a session */
	ck_assert_int_eq(open_session("api", url, NULL), 400);
	r = live(&t, "PATCH", path, "{\"status\":\"PENDING\"}");
	harness_expect(r, 200);
	harness_resp_free(r);
	ck_assert_int_eq(events_of(t.client, "link_request.updated", id), 5);
	v = event_member(t.client, "link_request.updated", id, "previous_status");
	ck_assert_str_eq(v, "COMPLETED");
	free(v);
	/* PATCH may cancel too: an open request cancelled, so the cancel
	 * event (no reason), as the cancel route sends it */
	r = live(&t, "PATCH", path, "{\"status\":\"CANCELLED\"}");
	harness_expect(r, 200);
	assert_null(r, "cancel_reason");
	harness_resp_free(r);
	ck_assert_int_eq(events_of(t.client, "link_request.cancelled", id), 1);
	ck_assert_int_eq(events_of(t.client, "link_request.updated", id), 5);
	assert_event_member(t.client, "link_request.cancelled", id, "previous_status", "PENDING");
	/* CANCELLED again: no change, no event */
	r = live(&t, "PATCH", path, "{\"status\":\"CANCELLED\"}");
	harness_expect(r, 200);
	harness_resp_free(r);
	ck_assert_int_eq(events_of(t.client, "link_request.cancelled", id), 1);
	ck_assert_int_eq(events_of(t.client, "link_request.updated", id), 5);
	free(url);
	free(lt);
	free(theirs_lt);
	free((char *)path);
	free(id);
	tenant_free(&t);
	tenant_free(&other);
}
END_TEST

/* Cancel: only PENDING or IN_PROGRESS, else 409 RTL_STATE_CONFLICT; the
 * reason is kept; link_request.cancelled carries it; 201. */
START_TEST(cancel_rules)
{
	static const char *const closed[] = { "COMPLETED", "CANCELLED", "EXPIRED" };
	struct tenant t;
	struct harness_resp *r;
	char *id, *id2;

	tenant_new(&dev_a, &t);
	id = rtl_simple(&t, "u-cancel");
	r = live(&t, "POST", harness_fmt("/v1/request-to-links/%s/cancel", id),
	    "{\"reason\":\"user asked us to stop\"}");
	harness_expect(r, 201);
	ck_assert_pstr_eq(devacct_str(r, "status"), "CANCELLED");
	ck_assert_pstr_eq(devacct_str(r, "cancel_reason"), "user asked us to stop");
	harness_resp_free(r);
	ck_assert_int_eq(events_of(t.client, "link_request.cancelled", id), 1);
	assert_event_member(t.client, "link_request.cancelled", id, "reason",
	    "user asked us to stop");
	assert_event_member(t.client, "link_request.cancelled", id, "previous_status", "PENDING");
	ck_assert_int_eq(events_of(t.client, "link_request.updated", id), 0);

	/* from IN_PROGRESS, without a reason */
	id2 = rtl_simple(&t, "u-cancel-2");
	devacct_sql_exec("UPDATE request_to_links SET status = 'IN_PROGRESS' WHERE id = $1", id2,
	    NULL);
	r = live(&t, "POST", harness_fmt("/v1/request-to-links/%s/cancel", id2), NULL);
	harness_expect(r, 201);
	assert_null(r, "cancel_reason");
	harness_resp_free(r);

	/* closed states: 409, nothing changes */
	for (int i = 0; i < N(closed); i++) {
		devacct_sql_exec("UPDATE request_to_links SET status = $2 WHERE id = $1", id2,
		    closed[i]);
		r = live(&t, "POST", harness_fmt("/v1/request-to-links/%s/cancel", id2),
		    "{\"reason\":\"again\"}");
		harness_assert_coded(r, 409, "RTL_STATE_CONFLICT");
		harness_resp_free(r);
		assert_status(&t, id2, closed[i]);
	}
	ck_assert_int_eq(events_of(t.client, "link_request.cancelled", id2), 1);
	r = live(&t, "POST", harness_fmt("/v1/request-to-links/%s/cancel", id),
	    "{\"reason\":1}");
	harness_assert_coded(r, 400, "VALIDATION_ERROR");
	harness_resp_free(r);
	free(id);
	free(id2);
	tenant_free(&t);
}
END_TEST

/*
 * Authentication rule 2 on status, cancel and proceed, which declare no
 * client_id: the key's own is ignored, another's is 403 CLIENT_ID_MISMATCH
 * and changes nothing.
 */
START_TEST(body_client_id)
{
	struct tenant t;
	struct harness_resp *r;
	const char *own, *other = "{\"client_id\":\"cli_someone_else\"}";
	char *id, *id2;

	tenant_new(&dev_a, &t);
	own = strdup(harness_fmt("\"client_id\":\"%s\"", t.client));
	id = rtl_simple(&t, "u-cid");
	id2 = rtl_simple(&t, "u-cid-2");
	/* another client's id: refused before anything happens */
	r = live(&t, "PATCH", harness_fmt("/v1/request-to-links/%s/status", id),
	    "{\"status\":\"IN_PROGRESS\",\"client_id\":\"cli_someone_else\"}");
	harness_assert_coded(r, 403, "CLIENT_ID_MISMATCH");
	harness_resp_free(r);
	r = live(&t, "POST", harness_fmt("/v1/request-to-links/%s/cancel", id), other);
	harness_assert_coded(r, 403, "CLIENT_ID_MISMATCH");
	harness_resp_free(r);
	r = live(&t, "POST", harness_fmt("/v1/request-to-links/%s/proceed", id), other);
	harness_assert_coded(r, 403, "CLIENT_ID_MISMATCH");
	harness_resp_free(r);
	assert_status(&t, id, "PENDING");
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM link_tokens WHERE client_id = $1",
	    t.client, NULL), 0);
	/* an unknown body field: the hint names the one meant */
	r = live(&t, "POST", harness_fmt("/v1/request-to-links/%s/cancel", id),
	    "{\"reasn\":\"x\"}");
	harness_assert_coded(r, 400, "VALIDATION_ERROR");
	ck_assert_pstr_eq(devacct_str(r, "errors.0.message"),
	    "is not a known field; did you mean reason?");
	ck_assert_pstr_eq(devacct_str(r, "hint"), "reasn is not a known field: did you mean `reason`?");
	harness_resp_free(r);
	r = live(&t, "POST", harness_fmt("/v1/request-to-links/%s/proceed", id),
	    "{\"clientId\":\"x\"}");
	harness_assert_coded(r, 400, "VALIDATION_ERROR");
	ck_assert_pstr_eq(devacct_str(r, "hint"),
	    "clientId is not a known field: did you mean `client_id`?");
	harness_resp_free(r);
	/* the key's own: as if it were not there */
	r = live(&t, "POST", harness_fmt("/v1/request-to-links/%s/proceed", id),
	    harness_fmt("{%s}", own));
	harness_expect(r, 201);
	harness_resp_free(r);
	r = live(&t, "PATCH", harness_fmt("/v1/request-to-links/%s/status", id),
	    harness_fmt("{\"status\":\"IN_PROGRESS\",%s}", own));
	harness_expect(r, 200);
	ck_assert_pstr_eq(devacct_str(r, "status"), "IN_PROGRESS");
	harness_resp_free(r);
	r = live(&t, "POST", harness_fmt("/v1/request-to-links/%s/cancel", id2),
	    harness_fmt("{\"reason\":\"done\",%s}", own));
	harness_expect(r, 201);
	ck_assert_pstr_eq(devacct_str(r, "status"), "CANCELLED");
	harness_resp_free(r);
	/* the route that declared it before: the same rule */
	r = live(&t, "POST", "/v1/request-to-links", harness_fmt("{\"client_user_id\":\"u\","
	    "\"biller_id\":\"" LIVE_BILLER "\",%s}", own));
	harness_expect(r, 201);
	ck_assert_pstr_eq(devacct_str(r, "client_id"), t.client);
	harness_resp_free(r);
	free((char *)own);
	free(id);
	free(id2);
	tenant_free(&t);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Proceed and the flow                                                */

/* Proceed: a hosted link token bound to the request, pinned to its biller,
 * for its end user and consents; session_url under the link host with a
 * ticket; kept sealed (GET shows it; no plaintext at rest); a second
 * proceed ends the first token; closed requests and requests without a
 * biller are 409. */
START_TEST(proceed_rules)
{
	struct tenant t;
	struct harness_resp *r;
	char *id, *url, *url2, *lt, *lt2, *v;
	const char *tk;

	tenant_new(&dev_a, &t);
	id = rtl_new(&t, "{\"client_user_id\":\"u-proceed\",\"biller_id\":\"" LIVE_BILLER
	    "\",\"consents\":[\"bills\",\"statements\"]}");
	r = live(&t, "POST", harness_fmt("/v1/request-to-links/%s/proceed", id), NULL);
	harness_expect(r, 201);
	lt = strdup(devacct_str(r, "link_token"));
	url = strdup(devacct_str(r, "session_url"));
	ck_assert_msg(strncmp(lt, "lt_", 3) == 0, "%s", r->body);
	ck_assert_msg(strncmp(url, LINK_ORIGIN "/connect#ticket=bds_tkt_",
	    strlen(LINK_ORIGIN "/connect#ticket=bds_tkt_")) == 0, "%s", url);
	ck_assert_ptr_nonnull(devacct_str(r, "expires_at"));
	ck_assert_pstr_eq(devacct_str(r, "request_to_link_id"), id);
	harness_resp_free(r);
	/* the token */
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM link_tokens WHERE id = $1"
	    " AND request_to_link_id = $2 AND hosted AND biller_id = '" LIVE_BILLER "'"
	    " AND client_user_id = 'u-proceed' AND consents = '{bills,statements}'"
	    " AND environment = 'development' AND mode = 'create'", lt, id), 1);
	/* the request: its link token and session_url; status unchanged */
	v = rtl_field(&t, id, "link_token_id");
	ck_assert_str_eq(v, lt);
	free(v);
	v = rtl_field(&t, id, "session_url");
	ck_assert_str_eq(v, url);
	free(v);
	assert_status(&t, id, "PENDING");
	/* the new token is an update of the request (its status unchanged) */
	ck_assert_int_eq(events_of(t.client, "link_request.updated", id), 1);
	assert_event_member(t.client, "link_request.updated", id, "link_token_id", lt);
	assert_event_member(t.client, "link_request.updated", id, "status", "PENDING");
	/* the ticket is nowhere in plaintext */
	tk = strstr(url, "#ticket=") + 8;
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM request_to_links r"
	    " WHERE position(convert_to($1, 'UTF8') IN r.session_url) > 0"
	    " OR r::text LIKE '%' || $1 || '%'", tk, NULL), 0);

	/* again: a new token; the first one is ended */
	url2 = proceed(&t, id, &lt2);
	ck_assert_str_ne(lt2, lt);
	ck_assert_int_eq(open_session("api", url, NULL), 400);
	r = devacct_call("POST", "api", "/v1/biller-connect/ticket", devacct_bearer(lt), NULL,
	    NULL);
	harness_assert_coded(r, 401, "INVALID_LINK_TOKEN");
	harness_resp_free(r);
	v = rtl_field(&t, id, "link_token_id");
	ck_assert_str_eq(v, lt2);
	free(v);
	ck_assert_int_eq(events_of(t.client, "link_request.updated", id), 2);
	assert_event_member(t.client, "link_request.updated", id, "link_token_id", lt2);

	/* closed requests: 409 */
	devacct_sql_exec("UPDATE request_to_links SET status = 'COMPLETED' WHERE id = $1", id,
	    NULL);
	r = live(&t, "POST", harness_fmt("/v1/request-to-links/%s/proceed", id), NULL);
	harness_assert_coded(r, 409, "RTL_STATE_CONFLICT");
	harness_resp_free(r);
	/* a request whose biller became unsupported: 409 */
	devacct_sql_exec("UPDATE request_to_links SET status = 'PENDING', biller_id = $2"
	    " WHERE id = $1", id, UNSUPPORTED_BILLER);
	r = live(&t, "POST", harness_fmt("/v1/request-to-links/%s/proceed", id), NULL);
	harness_assert_coded(r, 409, "BILLER_UNSUPPORTED");
	harness_resp_free(r);
	/* no biller yet: 409 */
	devacct_sql_exec("UPDATE request_to_links SET biller_id = NULL WHERE id = $1", id, NULL);
	r = live(&t, "POST", harness_fmt("/v1/request-to-links/%s/proceed", id), NULL);
	harness_assert_coded(r, 409, "RTL_BILLER_PENDING");
	harness_resp_free(r);
	/* proceed takes no body */
	r = live(&t, "POST", harness_fmt("/v1/request-to-links/%s/proceed", id), "{\"x\":1}");
	harness_assert_coded(r, 400, "VALIDATION_ERROR");
	harness_resp_free(r);
	free(url);
	free(url2);
	free(lt);
	free(lt2);
	free(id);
	tenant_free(&t);
}
END_TEST

/* The whole flow as the end user lives it: proceed, the page opens the
 * session_url (IN_PROGRESS, link_request.updated), the user logs in to the
 * sandbox biller (bds-jobs), the link is made and exchanged server-side:
 * COMPLETED, link_token.completed {link_token_id, link_id,
 * request_to_link_id, user_id, biller_id}; the link is the client's. */
START_TEST(flow_completes)
{
	struct tenant t;
	struct harness_resp *r;
	char *id, *url, *lt, *st, *status, *link = NULL, *v;

	tenant_new(&dev_a, &t);
	id = rtl_simple(&t, "u-flow");
	url = proceed(&t, id, &lt);
	ck_assert_int_eq(open_session("api", url, &st), 201);
	assert_status(&t, id, "IN_PROGRESS");
	ck_assert_int_eq(events_of(t.client, "link_request.updated", id), 2);
	assert_event_member(t.client, "link_request.updated", id, "status", "IN_PROGRESS");
	assert_event_member(t.client, "link_request.updated", id, "link_token_id", lt);
	/* the ticket was single use */
	ck_assert_int_eq(open_session("api", url, NULL), 400);

	status = connect_and_wait("api", st, &link);
	ck_assert_str_eq(status, "connected");
	ck_assert_msg(link != NULL && strncmp(link, "link_", 5) == 0, "no link_id");
	assert_status(&t, id, "COMPLETED");
	v = rtl_field(&t, id, "session_url");
	ck_assert_str_eq(v, "");	/* wiped once closed */
	free(v);
	ck_assert_int_eq(events_of(t.client, "link_request.updated", id), 3);
	assert_event_member(t.client, "link_request.updated", id, "status", "COMPLETED");
	assert_event_member(t.client, "link_request.updated", id, "previous_status", "IN_PROGRESS");
	ck_assert_int_eq(events_of(t.client, "link_token.completed", lt), 1);
	assert_event_member(t.client, "link_token.completed", lt, "link_token_id", lt);
	assert_event_member(t.client, "link_token.completed", lt, "link_id", link);
	assert_event_member(t.client, "link_token.completed", lt, "request_to_link_id", id);
	assert_event_member(t.client, "link_token.completed", lt, "user_id", "u-flow");
	assert_event_member(t.client, "link_token.completed", lt, "biller_id", LIVE_BILLER);
	r = live(&t, "GET", harness_fmt("/v1/links/%s", link), NULL);
	harness_expect(r, 200);
	ck_assert_pstr_eq(devacct_str(r, "client_user_id"), "u-flow");
	harness_resp_free(r);
	/* done: no more cancel or proceed */
	r = live(&t, "POST", harness_fmt("/v1/request-to-links/%s/cancel", id), NULL);
	harness_assert_coded(r, 409, "RTL_STATE_CONFLICT");
	harness_resp_free(r);
	r = live(&t, "POST", harness_fmt("/v1/request-to-links/%s/proceed", id), NULL);
	harness_assert_coded(r, 409, "RTL_STATE_CONFLICT");
	harness_resp_free(r);
	free(status);
	free(link);
	free(st);
	free(lt);
	free(url);
	free(id);
	tenant_free(&t);
}
END_TEST

/* A cancelled request's session_url stops working, and a session already
 * open ends with its token: its login does not run, nothing is linked. */
START_TEST(cancel_ends_flow)
{
	struct tenant t;
	struct harness_resp *r;
	char *id, *url, *url2, *st, *status;

	tenant_new(&dev_a, &t);
	id = rtl_simple(&t, "u-cancel-flow");
	url = proceed(&t, id, NULL);
	url2 = proceed(&t, id, NULL);
	ck_assert_int_eq(open_session("api", url2, &st), 201);
	r = live(&t, "POST", harness_fmt("/v1/request-to-links/%s/cancel", id),
	    "{\"reason\":\"changed my mind\"}");
	harness_expect(r, 201);
	harness_resp_free(r);
	ck_assert_int_eq(open_session("api", url, NULL), 400);
	/* the open session ended with its token: a login is refused at once */
	r = devacct_call("POST", "api", "/v1/link-sessions/connect", devacct_bearer(st),
	    "{\"username\":\"user_good\",\"password\":\"pass_good\"}", NULL);
	harness_assert_coded(r, 401, "SESSION_EXPIRED");
	harness_resp_free(r);
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM jobs WHERE kind = 'connect'"
	    " AND client_id = $1", t.client, NULL), 0);
	r = devacct_call("GET", "api", "/v1/link-sessions/current", devacct_bearer(st), NULL, NULL);
	harness_expect(r, 200);
	status = strdup(devacct_str(r, "status"));
	harness_resp_free(r);
	ck_assert_str_eq(status, "expired");
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM links WHERE client_id = $1",
	    t.client, NULL), 0);
	assert_status(&t, id, "CANCELLED");
	free(status);
	free(st);
	free(url);
	free(url2);
	free(id);
	tenant_free(&t);
}
END_TEST

/* The events at the client's webhook (sandbox: an http receiver): created
 * on creation; the client's own hosted link token bound to the request
 * moves it (updated IN_PROGRESS, COMPLETED) and the server-side exchange
 * fires link_token.completed. */
START_TEST(events_at_receiver)
{
	struct receiver *rc = receiver_start(NULL);
	struct tenant t;
	struct harness_resp *r;
	char *id, *lt, *hosted, *st, *status;
	const char *b;

	ck_assert_msg(rc != NULL, "receiver: %s", receiver_error());
	tenant_new(&dev_a, &t);
	devacct_subscribe(t.sbx, rc);
	r = sbx(&t, "POST", "/v1/request-to-links", "{\"client_user_id\":\"u-hook\","
	    "\"biller_id\":\"" SANDBOX_BILLER "\"}");
	harness_expect(r, 201);
	id = strdup(devacct_str(r, "id"));
	harness_resp_free(r);
	b = devacct_received(rc, "link_request.created", id);
	ck_assert_msg(b != NULL, "no link_request.created");
	ck_assert_msg(strstr(b, "\"biller_id\":\"" SANDBOX_BILLER "\"") != NULL, "%s", b);
	ck_assert_msg(strstr(b, harness_fmt("\"link_request_id\":\"%s\"", id)) != NULL, "%s", b);

	r = sbx(&t, "POST", "/v1/link-tokens", harness_fmt("{\"client_user_id\":\"u-hook\","
	    "\"biller_id\":\"" SANDBOX_BILLER "\",\"request_to_link_id\":\"%s\",\"hosted\":true}",
	    id));
	harness_expect(r, 201);
	lt = strdup(devacct_str(r, "link_token"));
	hosted = strdup(devacct_str(r, "hosted_url"));
	harness_resp_free(r);
	ck_assert_int_eq(open_session("sandbox", hosted, &st), 201);
	b = devacct_received(rc, "link_request.updated", "\"status\":\"IN_PROGRESS\"");
	ck_assert_msg(b != NULL && strstr(b, id) != NULL, "no link_request.updated IN_PROGRESS");
	status = connect_and_wait("sandbox", st, NULL);
	ck_assert_str_eq(status, "connected");
	b = devacct_received(rc, "link_request.updated", "\"status\":\"COMPLETED\"");
	ck_assert_msg(b != NULL && strstr(b, id) != NULL, "no link_request.updated COMPLETED");
	b = devacct_received(rc, "link_token.completed", lt);
	ck_assert_msg(b != NULL, "no link_token.completed");
	ck_assert_msg(strstr(b, harness_fmt("\"request_to_link_id\":\"%s\"", id)) != NULL, "%s", b);
	ck_assert_msg(strstr(b, "\"link_id\":\"link_") != NULL, "%s", b);
	ck_assert_msg(strstr(b, "\"user_id\":\"u-hook\"") != NULL, "%s", b);
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM request_to_links WHERE id = $1"
	    " AND status = 'COMPLETED' AND link_token_id = $2", id, lt), 1);
	receiver_stop(rc);
	free(status);
	free(st);
	free(hosted);
	free(lt);
	free(id);
	tenant_free(&t);
}
END_TEST

/* bdsctl jobs expires PENDING and IN_PROGRESS requests older than
 * rtl_expiry_days (30): EXPIRED, link_request.updated with the status
 * before, their link tokens ended; younger or closed ones stay. */
START_TEST(expiry)
{
	const char *jobs[] = { "jobs", NULL };
	struct tenant t;
	char *old_p, *old_ip, *old_done, *young, *url, *v;

	tenant_new(&dev_a, &t);
	old_p = rtl_simple(&t, "u-exp-1");
	old_ip = rtl_simple(&t, "u-exp-2");
	old_done = rtl_simple(&t, "u-exp-3");
	young = rtl_simple(&t, "u-exp-4");
	url = proceed(&t, old_p, NULL);
	devacct_sql_exec("UPDATE request_to_links SET status = 'IN_PROGRESS' WHERE id = $1",
	    old_ip, NULL);
	devacct_sql_exec("UPDATE request_to_links SET status = 'COMPLETED' WHERE id = $1",
	    old_done, NULL);
	devacct_sql_exec("UPDATE request_to_links SET created_at = now() - interval '31 days'"
	    " WHERE client_id = $1 AND id <> $2", t.client, young);
	devacct_sql_exec("UPDATE request_to_links SET created_at = now() - interval '29 days'"
	    " WHERE id = $1", young, NULL);
	ck_assert_int_eq(bdsctl(jobs), 0);
	ck_assert(bdsctl_said("jobs: requests to link expired: "));
	assert_status(&t, old_p, "EXPIRED");
	assert_status(&t, old_ip, "EXPIRED");
	assert_status(&t, old_done, "COMPLETED");
	assert_status(&t, young, "PENDING");
	assert_event_member(t.client, "link_request.updated", old_p, "status", "EXPIRED");
	assert_event_member(t.client, "link_request.updated", old_p, "previous_status", "PENDING");
	assert_event_member(t.client, "link_request.updated", old_ip, "previous_status",
	    "IN_PROGRESS");
	ck_assert_int_eq(events_of(t.client, "link_request.updated", old_done), 0);
	ck_assert_int_eq(events_of(t.client, "link_request.updated", young), 0);
	v = rtl_field(&t, old_p, "session_url");
	ck_assert_str_eq(v, "");
	free(v);
	ck_assert_int_eq(open_session("api", url, NULL), 400);
	/* once: a second run changes nothing */
	ck_assert_int_eq(bdsctl(jobs), 0);
	ck_assert_int_eq(events_of(t.client, "link_request.updated", old_p), 2);
	free(url);
	free(old_p);
	free(old_ip);
	free(old_done);
	free(young);
	tenant_free(&t);
}
END_TEST

/* POST /v1/link-tokens with body: 400 VALIDATION_ERROR naming field/code. */
static void
token_refused(const struct tenant *t, const char *body, const char *field, const char *code)
{
	struct harness_resp *r = sbx(t, "POST", "/v1/link-tokens", body);

	harness_assert_coded(r, 400, "VALIDATION_ERROR");
	devacct_assert_error(r, field, code);
	harness_resp_free(r);
}

#define BIND_BODY "{\"client_user_id\":\"%s\",\"request_to_link_id\":\"%s\"}"

/*
 * A link token's request_to_link_id must be an open request of the key's
 * own client, environment and end user (else a 400 naming it: another
 * client's request answers as an unknown one); its biller_id must be one a
 * session can connect to (not UNSUPPORTED). Nothing is made on a 400.
 */
START_TEST(link_token_request_checked)
{
	struct tenant t, o;
	struct harness_resp *r;
	char *own, *dev, *theirs, *closed;

	tenant_new(&dev_a, &t);
	tenant_new(&dev_b, &o);
	own = take(sbx(&t, "POST", "/v1/request-to-links", "{\"client_user_id\":\"u-bind\","
	    "\"biller_id\":\"" SANDBOX_BILLER "\"}"), 201, "id");
	closed = take(sbx(&t, "POST", "/v1/request-to-links", "{\"client_user_id\":\"u-bind\","
	    "\"biller_id\":\"" SANDBOX_BILLER "\"}"), 201, "id");
	theirs = take(sbx(&o, "POST", "/v1/request-to-links", "{\"client_user_id\":\"u-bind\","
	    "\"biller_id\":\"" SANDBOX_BILLER "\"}"), 201, "id");
	dev = rtl_simple(&t, "u-bind");	/* development */
	devacct_sql_exec("UPDATE request_to_links SET status = 'CANCELLED' WHERE id = $1",
	    closed, NULL);

	r = sbx(&t, "POST", "/v1/link-tokens", harness_fmt(BIND_BODY, "u-bind", own));
	harness_expect(r, 201);
	ck_assert_pstr_eq(devacct_str(r, "request_to_link_id"), own);
	harness_resp_free(r);
	token_refused(&t, harness_fmt(BIND_BODY, "u-other", own), "request_to_link_id",
	    "other_user");
	token_refused(&t, harness_fmt(BIND_BODY, "u-bind", closed), "request_to_link_id",
	    "request_to_link_closed");
	token_refused(&t, harness_fmt(BIND_BODY, "u-bind", theirs), "request_to_link_id",
	    "unknown_request_to_link");
	token_refused(&t, harness_fmt(BIND_BODY, "u-bind", dev), "request_to_link_id",
	    "unknown_request_to_link");
	token_refused(&t, "{\"client_user_id\":\"u-bind\",\"biller_id\":\"" UNSUPPORTED_BILLER
	    "\"}", "biller_id", "biller_unsupported");
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM link_tokens WHERE client_id = $1",
	    t.client, NULL), 1);
	free(own);
	free(closed);
	free(theirs);
	free(dev);
	tenant_free(&t);
	tenant_free(&o);
}
END_TEST

/* bdsctl billers set-status UNSUPPORTED tells the clients with an open
 * request on the biller (no link needed); closed requests do not count. */
START_TEST(biller_unsupported_open_requests)
{
	const char *set[] = { "billers", "set-status", "blr_01900002-0000-7000-8000-00000000beef",
	    "UNSUPPORTED", NULL };
	struct tenant a, b;
	char *id_a, *id_b;

	tenant_new(&dev_a, &a);
	tenant_new(&dev_b, &b);
	id_a = rtl_new(&a, "{\"client_user_id\":\"u\",\"biller_id\":"
	    "\"blr_01900002-0000-7000-8000-00000000beef\"}");
	id_b = rtl_new(&b, "{\"client_user_id\":\"u\",\"biller_id\":"
	    "\"blr_01900002-0000-7000-8000-00000000beef\"}");
	devacct_sql_exec("UPDATE request_to_links SET status = 'CANCELLED' WHERE id = $1", id_b,
	    NULL);
	ck_assert_int_eq(bdsctl(set), 0);
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM events WHERE client_id = $1"
	    " AND type = 'biller.unsupported' AND environment = 'development'", a.client, NULL), 1);
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM events WHERE client_id = $1"
	    " AND type = 'biller.unsupported'", b.client, NULL), 0);
	free(id_a);
	free(id_b);
	tenant_free(&a);
	tenant_free(&b);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Discovery                                                           */

/* POST an onboarding request (sandbox host, sandbox key). */
static struct harness_resp *
onboard(const struct tenant *t, const char *name, const char *url)
{
	return sbx(t, "POST", "/v1/request-to-links", harness_fmt("{\"client_user_id\":"
	    "\"u-onb\",\"onboarding\":{\"biller_name\":\"%s\",\"biller_url\":\"%s\"}}", name, url));
}

static char *
onboard_ok(const struct tenant *t, const char *name, const char *url)
{
	return take(onboard(t, name, url), 201, "id");
}

/* An onboarding given the biller at once. */
static void
onboard_matched(const struct tenant *t, const char *name, const char *url, const char *biller)
{
	struct harness_resp *r = onboard(t, name, url);

	harness_expect(r, 201);
	ck_assert_pstr_eq(devacct_str(r, "biller_id"), biller);
	harness_resp_free(r);
}

/* An onboarding refused: 400 biller_unsupported. */
static void
onboard_unsupported(const struct tenant *t, const char *name, const char *url)
{
	struct harness_resp *r = onboard(t, name, url);

	harness_assert_coded(r, 400, "VALIDATION_ERROR");
	ck_assert_pstr_eq(devacct_str(r, "errors.0.code"), "biller_unsupported");
	harness_resp_free(r);
}

/* A request's member read with SQL (any host, any environment). */
static char *
rtl_sql(const char *id, const char *column)
{
	char *q = strdup(harness_fmt("SELECT %s FROM request_to_links WHERE id = $1", column));
	char *v = devacct_sql_value(q, id, NULL);

	free(q);
	return v;
}

static const struct {
	const char	*url;
	const char	*code;
} refused_urls[] = {
	{ "http://www.acme-power.example/login", "https_required" },
	{ "HTTP://www.acme-power.example/", "https_required" },
	{ "ftp://www.acme-power.example/", "invalid_url" },
	{ "www.acme-power.example/login", "invalid_url" },
	{ "https://" PUBLIC_V4 "/login", "ip_literal" },
	{ "https://1572395042/", "ip_literal" },		/* 93.184.216.34, decimal */
	{ "https://0x5d.0xb8.0xd8.0x22/", "ip_literal" },
	{ "https://127.0.0.1/", "ip_literal" },
	{ "https://[" PUBLIC_V6 "]/", "ip_literal" },
	{ "https://[::1]/", "ip_literal" },
	{ "https://user:secret@www.acme-power.example/", "userinfo" },
	{ "https://www.acme-power.example@evil.example/", "userinfo" },
	{ "https://www.acme-power.example:8443/", "port_not_allowed" },
	{ "https://www.acme-power.example:80/", "port_not_allowed" },
	{ "https://localhost/", "private_address" },		/* /etc/hosts: loopback */
	{ "https://localhost./login", "private_address" },
	{ "https://intranet.acme.example/", "private_address" },
	{ "https://dual.acme.example/", "private_address" },	/* one address of two */
	{ "https://v6.acme.example/", "private_address" },
	{ "https://meta.acme.example/", "private_address" },	/* link-local */
	{ "https://mapped.acme.example/", "private_address" },	/* IPv4-mapped IPv6 */
	{ "https://nosuch.invalid/", "unresolvable" },
	{ "https://github.io/", "public_suffix" },
	{ "https://bad_host.example/", "invalid_host" },
};

/* Each refused onboarding URL is 400 naming onboarding.biller_url with
 * its code; no request, no discovery record. */
START_TEST(disc_refused)
{
	struct tenant t;
	struct harness_resp *r;
	const char *body;

	tenant_new(&dev_a, &t);
	r = onboard(&t, "Acme", refused_urls[_i].url);
	harness_assert_coded(r, 400, "VALIDATION_ERROR");
	ck_assert_pstr_eq(devacct_str(r, "errors.0.field"), "onboarding.biller_url");
	ck_assert_msg(strcmp(devacct_str(r, "errors.0.code"), refused_urls[_i].code) == 0,
	    "%s: %s, want %s", refused_urls[_i].url, devacct_str(r, "errors.0.code"),
	    refused_urls[_i].code);
	/* the message names no address: the whole answer but docs_url (the
	 * stack's own api host, 127.0.0.1) */
	json_object_object_del(r->json, "docs_url");
	body = json_object_to_json_string(r->json);
	ck_assert_msg(strstr(body, "127.0.0.1") == NULL || strstr(refused_urls[_i].url,
	    "127.0.0.1") != NULL, "%s", body);
	ck_assert_msg(strstr(body, "10.1.2.3") == NULL, "%s", body);
	harness_resp_free(r);
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM request_to_links"
	    " WHERE client_id = $1", t.client, NULL), 0);
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM biller_discoveries"
	    " WHERE client_id = $1", t.client, NULL), 0);
	tenant_free(&t);
}
END_TEST

/* An accepted URL in its canonical form; an unknown domain waits (no
 * biller, no link_request.created, a PENDING record); another URL of the
 * same registrable domain waits on the same record; IDNA names too. */
START_TEST(disc_accepted_waits)
{
	struct tenant t;
	struct harness_resp *r;
	char *id, *id2, *disc;

	tenant_new(&dev_a, &t);
	r = onboard(&t, "Acme Power", "  HTTPS://WWW.Acme-Power.example:443/./login/../account"
	    "//home?next=%7e#frag");
	harness_expect(r, 201);
	id = strdup(devacct_str(r, "id"));
	ck_assert_pstr_eq(devacct_str(r, "onboarding.biller_url"),
	    "https://www.acme-power.example/account/home?next=~");
	ck_assert_pstr_eq(devacct_str(r, "onboarding.biller_name"), "Acme Power");
	assert_null(r, "biller_id");
	ck_assert_pstr_eq(devacct_str(r, "status"), "PENDING");
	disc = strdup(devacct_str(r, "biller_discovery_id"));
	ck_assert_msg(strncmp(disc, "bdisc_", 6) == 0, "%s", r->body);
	harness_resp_free(r);
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM events WHERE client_id = $1",
	    t.client, NULL), 0);

	r = sbx(&t, "GET", harness_fmt("/v1/biller-discoveries/%s", disc), NULL);
	harness_expect(r, 200);
	ck_assert_pstr_eq(devacct_str(r, "object"), "biller_discovery");
	ck_assert_pstr_eq(devacct_str(r, "status"), "PENDING");
	ck_assert_pstr_eq(devacct_str(r, "registrable_domain"), "acme-power.example");
	ck_assert_pstr_eq(devacct_str(r, "biller_url"),
	    "https://www.acme-power.example/account/home?next=~");
	assert_null(r, "biller_id");
	harness_resp_free(r);

	/* the bare domain (two addresses, both public) joins the same record */
	id2 = onboard_ok(&t, "ACME", "https://acme-power.example");
	{
		char *d2 = rtl_sql(id2, "discovery_id");

		ck_assert_str_eq(d2, disc);
		free(d2);
	}
	/* IDNA: a Unicode host becomes A-labels */
	r = onboard(&t, "B\xc3\xbc" "cher Strom", "https://www.B\xc3\xbc" "cher-Strom.example/");
	harness_expect(r, 201);
	ck_assert_pstr_eq(devacct_str(r, "onboarding.biller_url"),
	    "https://www.xn--bcher-strom-thb.example/");
	harness_resp_free(r);
	/* proceed is refused while the biller is unknown */
	free(id);
	id = rtl_new(&t, "{\"client_user_id\":\"u-live\",\"onboarding\":{\"biller_name\":"
	    "\"Acme\",\"biller_url\":\"https://www.acme-power.example/\"}}");
	r = live(&t, "POST", harness_fmt("/v1/request-to-links/%s/proceed", id), NULL);
	harness_assert_coded(r, 409, "RTL_BILLER_PENDING");
	harness_resp_free(r);
	free(id);
	free(id2);
	free(disc);
	tenant_free(&t);
}
END_TEST

/* A URL under a catalog biller's registrable domain (pge.example) gets
 * that biller at once: link_request.created names it, the record is
 * MATCHED, and proceed works. */
START_TEST(disc_matches_catalog)
{
	struct tenant t;
	struct harness_resp *r;
	char *id, *disc;

	tenant_new(&dev_a, &t);
	r = live(&t, "POST", "/v1/request-to-links", "{\"client_user_id\":\"u-pge\","
	    "\"onboarding\":{\"biller_name\":\"PG and E\",\"biller_url\":"
	    "\"https://my.account.pge.example/login\"}}");
	harness_expect(r, 201);
	id = strdup(devacct_str(r, "id"));
	ck_assert_pstr_eq(devacct_str(r, "biller_id"), PGE_BILLER);
	disc = strdup(devacct_str(r, "biller_discovery_id"));
	harness_resp_free(r);
	ck_assert_int_eq(events_of(t.client, "link_request.created", id), 1);
	assert_event_member(t.client, "link_request.created", id, "biller_id", PGE_BILLER);
	assert_event_member(t.client, "link_request.created", id, "biller_discovery_id", disc);
	r = live(&t, "GET", harness_fmt("/v1/biller-discoveries/%s", disc), NULL);
	harness_expect(r, 200);
	ck_assert_pstr_eq(devacct_str(r, "status"), "MATCHED");
	ck_assert_pstr_eq(devacct_str(r, "biller_id"), PGE_BILLER);
	ck_assert_pstr_eq(devacct_str(r, "registrable_domain"), "pge.example");
	harness_resp_free(r);
	r = live(&t, "POST", harness_fmt("/v1/request-to-links/%s/proceed", id), NULL);
	harness_expect(r, 201);
	harness_resp_free(r);
	free(id);
	free(disc);
	tenant_free(&t);
}
END_TEST

/* The line `bdsctl discovery list` printed for record id (malloc'ed), or
 * NULL. */
static char *
list_line(const char *id)
{
	char *log = harness_slurp(harness_fmt("%s/bdsctl.log", harness_dir()));
	char *at = log != NULL ? strstr(log, id) : NULL, *line = NULL;

	if (at != NULL)
		line = strndup(at, strcspn(at, "\n"));
	free(log);
	return line;
}

/* A host label mixing scripts (UTS #39: a Cyrillic "а" in "pаypal") is
 * flagged in the operator's list; a single-script one is not. */
START_TEST(disc_mixed_script_flagged)
{
	const char *ls[] = { "discovery", "list", NULL };
	struct tenant t;
	char *id, *ok, *disc, *disc_ok, *line;

	tenant_new(&dev_a, &t);
	id = onboard_ok(&t, "PayPal Bills", "https://login.p\xd0\xb0ypal.example/");
	ok = onboard_ok(&t, "PayPal Bills", "https://www.paypal-bills.example/");
	disc = rtl_sql(id, "discovery_id");
	disc_ok = rtl_sql(ok, "discovery_id");
	ck_assert_int_eq(bdsctl(ls), 0);
	line = list_line(disc);
	ck_assert_msg(line != NULL, "no line for %s", disc);
	ck_assert_msg(strstr(line, " xn--pypal-4ve.example ") != NULL, "%s", line);
	ck_assert_msg(strstr(line, " MIXED_SCRIPT=Latin+Cyrillic") != NULL, "%s", line);
	/* the look-alike itself never reaches the terminal */
	ck_assert_msg(strstr(line, "\xd0\xb0") == NULL, "%s", line);
	free(line);
	line = list_line(disc_ok);
	ck_assert_msg(line != NULL, "no line for %s", disc_ok);
	ck_assert_msg(strstr(line, "MIXED_SCRIPT") == NULL, "%s", line);
	free(line);
	free(disc);
	free(disc_ok);
	free(id);
	free(ok);
	tenant_free(&t);
}
END_TEST

/* bdsctl discovery approve --biller: the record and every other client's
 * PENDING record of the domain are bound, each waiting request resolved
 * with link_request.updated (heard at the webhook); later onboardings of
 * the domain get the biller at once. list shows pending records. */
START_TEST(disc_approve_bind)
{
	struct receiver *rc = receiver_start(NULL);
	struct tenant a, b;
	char *ida1, *ida2, *idb, *disc, *v;
	const char *ls[] = { "discovery", "list", NULL };
	const char *b_;

	ck_assert_msg(rc != NULL, "receiver: %s", receiver_error());
	tenant_new(&dev_a, &a);
	tenant_new(&dev_b, &b);
	devacct_subscribe(a.sbx, rc);
	ida1 = onboard_ok(&a, "Nope Energy", "https://portal.nope.example/");
	ida2 = onboard_ok(&a, "Nope", "https://www.nope.example/x");
	idb = onboard_ok(&b, "Nope Energy Co", "https://www.nope.example/");
	devacct_sql_exec("UPDATE request_to_links SET status = 'CANCELLED' WHERE id = $1", ida2,
	    NULL);
	disc = rtl_sql(ida1, "discovery_id");
	ck_assert_int_eq(bdsctl(ls), 0);
	ck_assert(bdsctl_said(harness_fmt("%s PENDING - nope.example", disc)));
	{
		const char *bad1[] = { "discovery", "approve", disc, NULL };
		const char *bad2[] = { "discovery", "approve", disc, "--biller",
		    "blr_01900000-0000-7000-8000-0000000000ff", NULL };
		const char *bad3[] = { "discovery", "approve", "bdisc_01900000-0000-7000-8000-000000000000",
		    "--biller", SANDBOX_BILLER, NULL };
		const char *bad4[] = { "discovery", "approve", disc, "--biller", UNSUPPORTED_BILLER,
		    NULL };

		ck_assert_int_eq(bdsctl(bad1), 2);
		ck_assert_int_eq(bdsctl(bad2), 1);
		ck_assert_int_eq(bdsctl(bad3), 1);
		ck_assert_int_eq(bdsctl(bad4), 1);
	}
	{
		const char *ok[] = { "discovery", "approve", disc, "--biller", SANDBOX_BILLER, NULL };

		ck_assert_int_eq(bdsctl(ok), 0);
		ck_assert(bdsctl_said("discovery approve: 2 records of nope.example"));
		/* again: already decided */
		ck_assert_int_eq(bdsctl(ok), 1);
	}
	v = rtl_sql(ida1, "biller_id");
	ck_assert_str_eq(v, SANDBOX_BILLER);
	free(v);
	v = rtl_sql(idb, "biller_id");
	ck_assert_str_eq(v, SANDBOX_BILLER);
	free(v);
	v = rtl_sql(ida2, "biller_id");
	ck_assert_ptr_null(v);	/* cancelled: not resolved */
	ck_assert_int_eq(events_of(a.client, "link_request.updated", ida1), 1);
	ck_assert_int_eq(events_of(b.client, "link_request.updated", idb), 1);
	ck_assert_int_eq(events_of(a.client, "link_request.updated", ida2), 0);
	b_ = devacct_received(rc, "link_request.updated", ida1);
	ck_assert_msg(b_ != NULL && strstr(b_, "\"biller_id\":\"" SANDBOX_BILLER "\"") != NULL,
	    "no resolution at the webhook");
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM biller_discoveries WHERE"
	    " domain = 'nope.example' AND status = 'APPROVED' AND biller_id = '" SANDBOX_BILLER "'"
	    " AND decided_at IS NOT NULL", NULL, NULL), 2);
	/* a new onboarding of the domain: the biller at once */
	{
		struct harness_resp *r = onboard(&a, "Nope", "https://www.nope.example/again");

		harness_expect(r, 201);
		ck_assert_pstr_eq(devacct_str(r, "biller_id"), SANDBOX_BILLER);
		ck_assert_pstr_eq(devacct_str(r, "biller_discovery_id"), disc);
		harness_resp_free(r);
	}
	/* the approval is the catalog's: the domain is the biller's now, so
	 * a record that did not exist then (b's development one) matches at
	 * once */
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM billers WHERE id = '"
	    SANDBOX_BILLER "' AND 'nope.example' = ANY (domains)", NULL, NULL), 1);
	{
		struct harness_resp *r = live(&b, "POST", "/v1/request-to-links",
		    "{\"client_user_id\":\"u\",\"onboarding\":{\"biller_name\":\"Nope\","
		    "\"biller_url\":\"https://portal.nope.example/\"}}");

		harness_expect(r, 201);
		ck_assert_pstr_eq(devacct_str(r, "biller_id"), SANDBOX_BILLER);
		harness_resp_free(r);
	}
	receiver_stop(rc);
	free(ida1);
	free(ida2);
	free(idb);
	free(disc);
	tenant_free(&a);
	tenant_free(&b);
}
END_TEST

/* bdsctl discovery approve --base-url: a portal biller is added to the
 * catalog for the domain (checked like a CSV row) and the waiting request
 * resolved; another client's later onboarding matches it in the catalog. */
START_TEST(disc_approve_add)
{
	struct tenant a, b;
	char *ida, *disc, *v, *biller;
	struct harness_resp *r;

	tenant_new(&dev_a, &a);
	tenant_new(&dev_b, &b);
	ida = onboard_ok(&a, "NewCo Energy", "https://login.newco.example/");
	disc = rtl_sql(ida, "discovery_id");
	{
		const char *bad[] = { "discovery", "approve", disc, "--base-url",
		    "https://portal.newco.example/bpp", "--country", "usa", NULL };
		const char *ok[] = { "discovery", "approve", disc, "--base-url",
		    "https://portal.newco.example/bpp", "--name", "NewCo Energy, Inc.",
		    "--type", "electric", "--country", "CA", NULL };

		ck_assert_int_eq(bdsctl(bad), 1);
		ck_assert(bdsctl_said("country"));
		ck_assert_int_eq(bdsctl(ok), 0);
		ck_assert(bdsctl_said("\"NewCo Energy, Inc.\",electric,ACTIVE,newco.example,"));
	}
	biller = rtl_sql(ida, "biller_id");
	ck_assert_msg(biller != NULL && strncmp(biller, "blr_", 4) == 0, "not resolved");
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM billers WHERE id = $1"
	    " AND name = 'NewCo Energy, Inc.' AND type = 'electric' AND country = 'CA'"
	    " AND status = 'ACTIVE' AND domains = '{newco.example}' AND connector = 'portal'"
	    " AND base_url = 'https://portal.newco.example/bpp'"
	    " AND login_url = 'https://login.newco.example/'", biller, NULL), 1);
	/* the catalog serves it */
	r = sbx(&b, "GET", harness_fmt("/v1/billers/%s", biller), NULL);
	harness_expect(r, 200);
	harness_resp_free(r);
	/* client b's own onboarding of the domain: matched in the catalog */
	r = onboard(&b, "newco", "https://newco.example/");
	harness_expect(r, 201);
	ck_assert_pstr_eq(devacct_str(r, "biller_id"), biller);
	v = strdup(devacct_str(r, "biller_discovery_id"));
	ck_assert_str_ne(v, disc);	/* its own record */
	harness_resp_free(r);
	free(v);
	free(biller);
	free(ida);
	free(disc);
	tenant_free(&a);
	tenant_free(&b);
}
END_TEST

/* bdsctl discovery reject: the catalog gets an UNSUPPORTED biller for the
 * domain (named by it), the record is REJECTED with it, biller.unsupported
 * carries its biller_id to the client with a request waiting (at the
 * webhook); the requests stay PENDING without a biller (PATCH can give
 * one); a later onboarding of the domain is refused, another client's too;
 * only PENDING records can be rejected; a rejected one can still be
 * approved, and then the domain matches the approved biller. */
START_TEST(disc_reject)
{
	struct receiver *rc = receiver_start(NULL);
	struct tenant t, other;
	struct harness_resp *r;
	char *id, *disc, *biller;
	const char *b;

	ck_assert_msg(rc != NULL, "receiver: %s", receiver_error());
	tenant_new(&dev_a, &t);
	tenant_new(&dev_b, &other);
	devacct_subscribe(t.sbx, rc);
	id = onboard_ok(&t, "Acme Pages", "https://acme.github.io/");
	disc = rtl_sql(id, "discovery_id");
	{
		const char *rej[] = { "discovery", "reject", disc, NULL };
		const char *bad[] = { "discovery", "reject", "nonsense", NULL };

		ck_assert_int_eq(bdsctl(bad), 1);
		ck_assert_int_eq(bdsctl(rej), 0);
		ck_assert(bdsctl_said("biller.unsupported sent to 1 client environment(s)"));
		ck_assert_int_eq(bdsctl(rej), 1);	/* not PENDING any more */
	}
	biller = devacct_sql_value("SELECT biller_id FROM biller_discoveries WHERE id = $1"
	    " AND status = 'REJECTED'", disc, NULL);
	ck_assert_msg(biller != NULL && strncmp(biller, "blr_", 4) == 0, "no biller");
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM billers WHERE id = $1"
	    " AND status = 'UNSUPPORTED' AND name = 'acme.github.io'"
	    " AND domains = '{acme.github.io}' AND base_url IS NULL", biller, NULL), 1);
	b = devacct_received(rc, "biller.unsupported", disc);
	ck_assert_msg(b != NULL, "no biller.unsupported");
	ck_assert_msg(strstr(b, harness_fmt("\"request_to_link_ids\":[\"%s\"]", id)) != NULL,
	    "%s", b);
	ck_assert_msg(strstr(b, harness_fmt("\"biller_id\":\"%s\"", biller)) != NULL, "%s", b);
	ck_assert_msg(strstr(b, "\"object\":\"biller\"") != NULL, "%s", b);
	ck_assert_msg(strstr(b, "\"status\":\"UNSUPPORTED\"") != NULL, "%s", b);
	{
		char *s = rtl_sql(id, "status"), *bl = rtl_sql(id, "biller_id");

		ck_assert_str_eq(s, "PENDING");
		ck_assert_ptr_null(bl);
		free(s);
	}
	r = sbx(&t, "GET", harness_fmt("/v1/biller-discoveries/%s", disc), NULL);
	ck_assert_pstr_eq(devacct_str(r, "status"), "REJECTED");
	ck_assert_pstr_eq(devacct_str(r, "biller_id"), biller);
	harness_resp_free(r);
	r = sbx(&t, "GET", harness_fmt("/v1/billers/%s", biller), NULL);
	harness_expect(r, 200);
	ck_assert_pstr_eq(devacct_str(r, "status"), "UNSUPPORTED");
	harness_resp_free(r);
	onboard_unsupported(&t, "Acme Pages", "https://acme.github.io/other");
	/* another client: the catalog says unsupported; no record waits */
	onboard_unsupported(&other, "Acme", "https://acme.github.io/x");
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM biller_discoveries WHERE"
	    " client_id = $1", other.client, NULL), 0);
	/* the operator changes their mind */
	{
		const char *ok[] = { "discovery", "approve", disc, "--biller", SANDBOX_BILLER, NULL };

		ck_assert_int_eq(bdsctl(ok), 0);
	}
	{
		char *bl = rtl_sql(id, "biller_id");

		ck_assert_pstr_eq(bl, SANDBOX_BILLER);
		free(bl);
	}
	onboard_matched(&other, "Acme", "https://acme.github.io/x", SANDBOX_BILLER);
	receiver_stop(rc);
	free(id);
	free(disc);
	free(biller);
	tenant_free(&t);
	tenant_free(&other);
}
END_TEST

/* A rejected domain that the catalog gets a linkable biller for later (an
 * operator's import): the next onboarding matches it. */
START_TEST(disc_rejected_then_catalog)
{
	struct tenant t;
	char *id, *disc;

	tenant_new(&dev_a, &t);
	id = onboard_ok(&t, "Later", "https://later.acme.example/");
	disc = rtl_sql(id, "discovery_id");
	{
		const char *rej[] = { "discovery", "reject", disc, NULL };

		ck_assert_int_eq(bdsctl(rej), 0);
	}
	onboard_unsupported(&t, "Later", "https://later.acme.example/x");
	devacct_sql_exec("UPDATE billers SET domains = domains || '{acme.example}'::text[]"
	    " WHERE id = $1", SANDBOX_BILLER, NULL);
	onboard_matched(&t, "Later", "https://later.acme.example/y", SANDBOX_BILLER);
	free(id);
	free(disc);
	tenant_free(&t);
}
END_TEST

/* GET /v1/biller-discoveries: the key's own records (client and
 * environment), newest first, status filter, cursor, limit max 200;
 * another client's record is 404. */
START_TEST(disc_api)
{
	struct tenant a, b;
	struct harness_resp *r;
	char *theirs, *ids[3], *cursor;

	tenant_new(&dev_a, &a);
	tenant_new(&dev_b, &b);
	free(onboard_ok(&a, "Acme", "https://www.acme-power.example/"));
	free(onboard_ok(&a, "PGE", "https://my.account.pge.example/"));
	free(onboard_ok(&a, "NewCo", "https://newco.example/"));
	free(onboard_ok(&b, "Acme", "https://www.acme-power.example/"));
	for (int i = 0; i < 3; i++)
		ids[i] = devacct_sql_value(harness_fmt("SELECT id FROM biller_discoveries"
		    " WHERE client_id = $1 ORDER BY created_at DESC, id DESC OFFSET %d LIMIT 1", i),
		    a.client, NULL);
	theirs = devacct_sql_value("SELECT id FROM biller_discoveries WHERE client_id = $1",
	    b.client, NULL);

	r = sbx(&a, "GET", "/v1/biller-discoveries", NULL);
	harness_expect(r, 200);
	ck_assert_int_eq(devacct_int(r, "total"), 3);
	ck_assert_int_eq(devacct_int(r, "limit"), 100);	/* core/cursor.h's default */
	ck_assert_pstr_eq(devacct_str(r, "items.0.id"), ids[0]);
	ck_assert(!devacct_bool(r, "has_more"));
	harness_resp_free(r);
	r = sbx(&a, "GET", "/v1/biller-discoveries?limit=2", NULL);
	ck_assert(devacct_bool(r, "has_more"));
	cursor = strdup(devacct_str(r, "next_cursor"));
	harness_resp_free(r);
	r = sbx(&a, "GET", harness_fmt("/v1/biller-discoveries?limit=2&cursor=%s", cursor), NULL);
	harness_expect(r, 200);
	ck_assert_int_eq(json_object_array_length(devacct_json(r, "items")), 1);
	ck_assert_pstr_eq(devacct_str(r, "items.0.id"), ids[2]);
	ck_assert(!devacct_bool(r, "has_more"));
	harness_resp_free(r);
	r = sbx(&a, "GET", "/v1/biller-discoveries?status=MATCHED", NULL);
	ck_assert_int_eq(devacct_int(r, "total"), 2);	/* pge and newco: in the catalog */
	harness_resp_free(r);
	/* the other environment sees none */
	r = live(&a, "GET", "/v1/biller-discoveries", NULL);
	ck_assert_int_eq(devacct_int(r, "total"), 0);
	harness_resp_free(r);
	/* another client's, unknown, malformed: 404 */
	{
		const char *bad[] = { theirs, "bdisc_01900000-0000-7000-8000-000000000000", "x" };

		for (int i = 0; i < 3; i++) {
			r = sbx(&a, "GET", harness_fmt("/v1/biller-discoveries/%s", bad[i]), NULL);
			harness_assert_coded(r, 404, "BILLER_DISCOVERY_NOT_FOUND");
			harness_resp_free(r);
		}
	}
	{
		static const char *const bad[] = { "limit=501", "limit=0", "page=1", "page_size=5",
		    "status=NEW", "cursor=zzz" };

		for (int i = 0; i < N(bad); i++) {
			r = sbx(&a, "GET", harness_fmt("/v1/biller-discoveries?%s", bad[i]), NULL);
			ck_assert_msg(r->status == 400, "%s: %ld", bad[i], r->status);
			harness_resp_free(r);
		}
	}
	r = devacct_call("GET", "sandbox", "/v1/biller-discoveries", NULL, NULL, NULL);
	harness_assert_coded(r, 401, NULL);
	harness_resp_free(r);
	free(cursor);
	free(theirs);
	for (int i = 0; i < 3; i++)
		free(ids[i]);
	tenant_free(&a);
	tenant_free(&b);
}
END_TEST

/* ------------------------------------------------------------------ */


/* The connect page's "Can't find your biller?": a link session (any flow,
 * no request to link) records the same biller discovery an onboarding
 * does, for the session's client and environment; a bad URL is refused as
 * an onboarding's, naming biller_url; a catalog biller of the domain is
 * matched, offered only when the environment links it. */
START_TEST(disc_biller_request)
{
	struct tenant t;
	struct harness_resp *r;
	char *lt, *tk, *st, *disc;

	tenant_new(&dev_a, &t);
	lt = take(sbx(&t, "POST", "/v1/link-tokens", "{\"client_user_id\":\"u-br\"}"), 201,
	    "link_token");
	tk = take(devacct_call("POST", "sandbox", "/v1/biller-connect/ticket",
	    devacct_bearer(lt), NULL, NULL), 201, "ticket");
	st = take(devacct_call("POST", "link", "/v1/link-sessions", NULL,
	    harness_fmt("{\"ticket\":\"%s\"}", tk), NULL), 201, "session_token");

	r = devacct_call("POST", "link", "/v1/link-sessions/biller-request", devacct_bearer(st),
	    "{\"biller_name\":\"Acme Power\",\"biller_url\":\"https://www.acme-power.example/login\"}",
	    NULL);
	harness_expect(r, 201);
	disc = strdup(devacct_str(r, "discovery_id"));
	ck_assert_msg(strncmp(disc, "bdisc_", 6) == 0, "%s", r->body);
	ck_assert_pstr_eq(devacct_str(r, "status"), "PENDING");
	assert_null(r, "biller_id");
	harness_resp_free(r);
	r = sbx(&t, "GET", harness_fmt("/v1/biller-discoveries/%s", disc), NULL);
	harness_expect(r, 200);
	ck_assert_pstr_eq(devacct_str(r, "registrable_domain"), "acme-power.example");
	ck_assert_pstr_eq(devacct_str(r, "status"), "PENDING");
	harness_resp_free(r);
	/* another client's key does not see it */
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM biller_discoveries"
	    " WHERE client_id = $1 AND environment = 'sandbox'", t.client, NULL), 1);

	/* the onboarding's refusals, naming biller_url */
	r = devacct_call("POST", "link", "/v1/link-sessions/biller-request", devacct_bearer(st),
	    "{\"biller_name\":\"Acme\",\"biller_url\":\"https://intranet.acme.example/\"}", NULL);
	harness_assert_coded(r, 400, "VALIDATION_ERROR");
	ck_assert_pstr_eq(devacct_str(r, "errors.0.field"), "biller_url");
	ck_assert_pstr_eq(devacct_str(r, "errors.0.code"), "private_address");
	harness_resp_free(r);
	r = devacct_call("POST", "link", "/v1/link-sessions/biller-request", devacct_bearer(st),
	    "{\"biller_url\":\"https://www.acme-power.example/\"}", NULL);
	harness_assert_coded(r, 400, "VALIDATION_ERROR");
	ck_assert_pstr_eq(devacct_str(r, "errors.0.field"), "biller_name");
	harness_resp_free(r);
	/* a catalog biller's domain: matched; a portal biller is not the
	 * sandbox's to offer */
	r = devacct_call("POST", "link", "/v1/link-sessions/biller-request", devacct_bearer(st),
	    "{\"biller_name\":\"PG&E\",\"biller_url\":\"https://my.account.pge.example/\"}", NULL);
	harness_expect(r, 201);
	ck_assert_pstr_eq(devacct_str(r, "status"), "MATCHED");
	assert_null(r, "biller_id");
	harness_resp_free(r);
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM biller_discoveries WHERE"
	    " client_id = $1 AND biller_id = '" PGE_BILLER "'", t.client, NULL), 1);
	/* no session, no record */
	r = devacct_call("POST", "link", "/v1/link-sessions/biller-request", NULL,
	    "{\"biller_name\":\"Acme\",\"biller_url\":\"https://newco.example/\"}", NULL);
	harness_assert_coded(r, 401, "INVALID_SESSION");
	harness_resp_free(r);
	free(disc);
	free(st);
	free(tk);
	free(lt);
	tenant_free(&t);
}
END_TEST

static void
setup(void)
{
	struct harness_opts o;
	PGconn *pg;
	PGresult *res;
	char url[256];

	ck_assert_int_eq(crypto_setup(), 0);
	harness_opts_defaults(&o);
	o.extra_config = DISCOVERY_HOSTS;
	harness_fixture_start(&o);
	devacct_legal();
	devacct_new(&dev_a, "rtl-a");
	devacct_verify_email(&dev_a);
	devacct_new(&dev_b, "rtl-b");
	devacct_verify_email(&dev_b);
	/* two test billers (one UNSUPPORTED); on a connection of its own,
	 * closed again: the tests are forked children and open theirs */
	pg = PQconnectdb(harness_database_url());
	res = PQexec(pg, "INSERT INTO billers (id, name, type, status, country, connector,"
	    " connectivity_types, domains) VALUES ('" UNSUPPORTED_BILLER "', 'Gone Utility',"
	    " 'other', 'UNSUPPORTED', 'US', 'sandbox', '{credentials}', '{gone.example}'),"
	    " ('blr_01900002-0000-7000-8000-00000000beef', 'Soon Gone Utility', 'other',"
	    " 'ACTIVE', 'US', 'sandbox', '{credentials}', '{soongone.example}')");
	ck_assert_msg(PQresultStatus(res) == PGRES_COMMAND_OK, "%s", PQerrorMessage(pg));
	PQclear(res);
	PQfinish(pg);
	/* the live biller: a portal (the simulator) */
	ck_assert_msg(sim_start(NULL) == 0, "the biller simulator did not start");
	devacct_sql_exec("INSERT INTO billers (id, name, type, country, connector, base_url,"
	    " connectivity_types, domains, search_text) VALUES ($1, 'Sim Live Power',"
	    " 'electric', 'US', 'portal', $2, '{credentials}', '{simlive.example}',"
	    " billers_fold('Sim Live Power simlive.example'))", LIVE_BILLER,
	    sim_base_url("power", url, sizeof(url)));
}

static void
teardown(void)
{
	sim_stop();
	harness_fixture_stop();
}

static Suite *
rtl_suite(void)
{
	Suite *s = suite_create("e2e_rtl");
	TCase *tc = tcase_create("rtl");

	tcase_add_unchecked_fixture(tc, setup, teardown);
	tcase_add_checked_fixture(tc, harness_fixture_recover, NULL);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, create_and_get);
	tcase_add_loop_test(tc, create_bad, 0, N(bad_creates));
	tcase_add_test(tc, create_metadata_size);
	tcase_add_test(tc, idempotency);
	tcase_add_test(tc, sandbox_host);
	tcase_add_test(tc, tenancy);
	tcase_add_test(tc, list);
	tcase_add_test(tc, patch_status);
	tcase_add_test(tc, cancel_rules);
	tcase_add_test(tc, body_client_id);
	tcase_add_test(tc, proceed_rules);
	tcase_add_test(tc, flow_completes);
	tcase_add_test(tc, cancel_ends_flow);
	tcase_add_test(tc, events_at_receiver);
	tcase_add_test(tc, link_token_request_checked);
	tcase_add_test(tc, expiry);
	tcase_add_test(tc, biller_unsupported_open_requests);
	tcase_add_loop_test(tc, disc_refused, 0, N(refused_urls));
	tcase_add_test(tc, disc_accepted_waits);
	tcase_add_test(tc, disc_matches_catalog);
	tcase_add_test(tc, disc_approve_bind);
	tcase_add_test(tc, disc_mixed_script_flagged);
	tcase_add_test(tc, disc_approve_add);
	tcase_add_test(tc, disc_reject);
	tcase_add_test(tc, disc_rejected_then_catalog);
	tcase_add_test(tc, disc_api);
	tcase_add_test(tc, disc_biller_request);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return harness_run_suite(rtl_suite());
}
