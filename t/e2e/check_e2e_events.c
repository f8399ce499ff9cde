/*
 * Events end to end, through nginx, the way a client's servers see them:
 * the sandbox trigger (POST /v1/triggers/{event_type}) and the outbox rows
 * events_emit() writes (one delivery per matching enabled subscription of
 * the client and environment), the activity feed (GET /v1/activity with
 * filters and cursors, GET /v1/activity/{event_id} with the attempt log),
 * replay (POST /v1/activity/replay), retention (`bdsctl jobs`), tenant
 * isolation, and events_emit() itself inside a transaction that commits
 * or rolls back. Delivery state the delivery side would write (statuses,
 * attempt rows) is set with SQL where a test needs it; one test sends a
 * triggered event through bds-deliver to a local receiver.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <check.h>
#include <json-c/json.h>
#include <libpq-fe.h>

#include "events/activity.h"
#include "core/arena.h"
#include "core/config.h"
#include "core/crypto.h"
#include "core/db.h"
#include "devacct.h"
#include "events/events.h"
#include "harness.h"
#include "receiver.h"
#include "core/req.h"

/* A bill.created event's data as events_emit writes it, for the events a
 * test inserts itself (the document's schema of the event holds for them) */
#define BILL_CREATED_DATA "(SELECT jsonb_build_object('object', jsonb_build_object(" \
	"'id', b, 'object', 'bill', 'user_id', 'usr_1', 'biller_id', 'blr_1', 'status', 'PENDING')," \
	" 'bill_id', b, 'user_id', 'usr_1', 'biller_id', 'blr_1')" \
	" FROM (SELECT 'bill_' || gen_random_uuid() AS b) x)"

#define N(x) (sizeof(x) / sizeof((x)[0]))
#define API_VERSION	"2026-11-01"	/* the config default */
#define WAIT_MS		5000

static struct devacct dev_a, dev_b;

/* ------------------------------------------------------------------ */
/* Helpers                                                             */

/* An instant as the API writes it: "2026-11-27T18:30:00.123Z". */
static int
iso_ms(const char *s)
{
	return s != NULL && validate_format(VF_DATETIME, s) && strlen(s) == 24 &&
	    s[4] == '-' && s[10] == 'T' && s[19] == '.' &&
	    strspn(s + 20, "0123456789") == 3 && s[23] == 'Z';
}

/* A request with an API key on the host its environment belongs to. */
static struct harness_resp *
key_call(const char *key, const char *method, const char *path, const char *body,
    const char *const extra[])
{
	const char *host = strncmp(key, "bds_sandbox_", 12) == 0 ? "sandbox" : "api";

	return devacct_call(method, host, path, devacct_bearer(key), body, extra);
}

struct wh {
	char	 id[96];
	char	 secret[192];
};

static void
wh_register(const struct devacct *d, const char *client, const char *env, const char *url,
    const char *events, struct wh *w)
{
	const char *extra[] = { harness_idem_header(), NULL };
	struct harness_resp *r = devacct_jwt(d, "POST",
	    harness_fmt("/v1/iam/clients/%s/webhooks", client),
	    harness_fmt("{\"environment\":\"%s\",\"url\":\"%s\",\"events\":%s}", env, url, events),
	    extra);

	harness_expect(r, 201);
	snprintf(w->id, sizeof(w->id), "%s", devacct_str(r, "webhook.id"));
	snprintf(w->secret, sizeof(w->secret), "%s", devacct_str(r, "webhook.secret"));
	harness_resp_free(r);
}

/* A sandbox subscription nothing listens to (bds-deliver is not run). */
static void
wh_sandbox(const struct devacct *d, const char *client, const char *events, struct wh *w)
{
	wh_register(d, client, "sandbox", "http://127.0.0.1:9/hook", events, w);
}

/* POST /v1/triggers/{type} with the sandbox key and extra headers. */
static struct harness_resp *
trigger_with(const char *key, const char *type, const char *body, const char *const extra[])
{
	return key_call(key, "POST", harness_fmt("/v1/triggers/%s", type), body, extra);
}

static struct harness_resp *
trigger(const char *key, const char *type, const char *body)
{
	return trigger_with(key, type, body, NULL);
}

/* Trigger and return the event id (malloc'ed); deliveries into *n. */
static char *
trigger_ok(const char *key, const char *type, const char *body, long long *n)
{
	struct harness_resp *r = trigger(key, type, body);
	char *id;

	harness_expect(r, 202);
	ck_assert_ptr_nonnull(devacct_str(r, "event_id"));
	id = strdup(devacct_str(r, "event_id"));
	if (n != NULL)
		*n = devacct_int(r, "deliveries");
	harness_resp_free(r);
	return id;
}

static long long
count_sql(const char *q, const char *p1, const char *p2)
{
	return devacct_sql_int(q, p1, p2);
}

/* How many events and deliveries a client has. */
static long long
events_of(const char *client)
{
	return count_sql("SELECT count(*) FROM events WHERE client_id = $1", client, NULL);
}

static long long
deliveries_of(const char *client)
{
	return count_sql("SELECT count(*) FROM deliveries WHERE client_id = $1", client, NULL);
}

/* The webhook ids event's deliveries went to, sorted, comma-separated. */
static char *
delivery_webhooks(const char *event)
{
	char *v = devacct_sql_value("SELECT coalesce(string_agg(webhook_id, ',' ORDER BY"
	    " webhook_id COLLATE \"C\"), '') FROM deliveries WHERE event_id = $1", event, NULL);

	ck_assert_ptr_nonnull(v);
	return v;
}

/* a,b,c sorted the same way as delivery_webhooks (malloc'ed). */
static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static char *
sorted_ids(const char *const ids[], size_t n)
{
	const char *v[16];
	char *out = calloc(1, 2048);

	ck_assert(n <= N(v));
	memcpy(v, ids, n * sizeof(*ids));
	qsort(v, n, sizeof(v[0]), cmp_str);
	for (size_t i = 0; i < n; i++) {
		if (i > 0)
			strcat(out, ",");
		strcat(out, v[i]);
	}
	return out;
}

/* GET path with key; the status is checked. */
static struct harness_resp *
get_ok(const char *key, const char *path, long status)
{
	struct harness_resp *r = key_call(key, "GET", path, NULL, NULL);

	harness_expect(r, status);
	return r;
}

static struct harness_resp *
replay(const char *key, const char *body, const char *const extra[])
{
	return key_call(key, "POST", "/v1/activity/replay", body, extra);
}

static long long
replay_ok(const char *key, const char *body)
{
	struct harness_resp *r = replay(key, body, NULL);
	long long n;

	harness_expect(r, 202);
	n = devacct_int(r, "queued");
	harness_resp_free(r);
	return n;
}

/* A client of d with a sandbox key. */
struct tenant {
	char	*client;
	char	*key;
};

static void
tenant_new(const struct devacct *d, struct tenant *t)
{
	t->client = devacct_client_new(d);
	t->key = devacct_key_new(d, t->client, "sandbox");
}

static void
tenant_free(struct tenant *t)
{
	free(t->client);
	free(t->key);
}

/* ------------------------------------------------------------------ */
/* Fixtures                                                            */

static void
stack_up(void)
{
	harness_fixture_start_default();
	devacct_legal();
	devacct_new(&dev_a, "evt-a");
	devacct_new(&dev_b, "evt-b");
	devacct_verify_email(&dev_a);	/* development keys */
}

/* ------------------------------------------------------------------ */
/* Schema                                                              */

START_TEST(statements_prepare)
{
	const struct db_stmt_set *sets[] = { &events_stmt_set, &activity_stmt_set };
	struct db *db = db_new(harness_database_url());

	ck_assert_ptr_nonnull(db);
	ck_assert_int_eq(db_ensure(db), 0);
	for (size_t s = 0; s < N(sets); s++)
		for (size_t i = 0; i < sets[s]->n; i++)
			ck_assert_msg(db_prepare(db, &sets[s]->stmts[i]) == 0, "%s: %s",
			    sets[s]->stmts[i].name, db_errmsg(db));
	db_free(db);
}
END_TEST

/* ------------------------------------------------------------------ */
/* POST /v1/triggers/{event_type}                                      */

/* One delivery per enabled matching sandbox subscription: "*" and "all"
 * match, another type, a disabled one and other environments do not. */
START_TEST(trigger_fans_out_to_matching)
{
	struct tenant t;
	struct wh exact, star, all, other, off, dev, prod;
	struct harness_resp *r;
	const char *extra[] = { "Idempotency-Key: trig-1", NULL };
	char *ev, *got, *want, *v;

	tenant_new(&dev_a, &t);
	wh_sandbox(&dev_a, t.client, "[\"bill.created\"]", &exact);
	wh_sandbox(&dev_a, t.client, "[\"*\"]", &star);
	wh_sandbox(&dev_a, t.client, "[\"all\"]", &all);
	wh_sandbox(&dev_a, t.client, "[\"bill.updated\",\"link.completed\"]", &other);
	wh_sandbox(&dev_a, t.client, "[\"bill.created\"]", &off);
	devacct_sql_exec("UPDATE webhooks SET enabled = false WHERE id = $1", off.id, NULL);
	wh_register(&dev_a, t.client, "development", "https://hooks.example.test/d", "[\"*\"]",
	    &dev);
	wh_register(&dev_a, t.client, "production", "https://hooks.example.test/p",
	    "[\"bill.created\"]", &prod);

	r = key_call(t.key, "POST", "/v1/triggers/bill.created",
	    "{\"id\":\"bill_123\",\"object\":\"bill\",\"user_id\":\"usr_9\",\"status\":\"PAID\","
	    "\"extra\":{\"nested\":[1,2]}}", extra);
	harness_expect(r, 202);
	ck_assert_int_eq(devacct_int(r, "deliveries"), 3);
	ck_assert_pstr_eq(devacct_str(r, "type"), "bill.created");
	ck_assert_pstr_eq(devacct_str(r, "object"), "event");
	ev = strdup(devacct_str(r, "event_id"));
	ck_assert(crypto_id_valid(ev, "evt", 0));

	{
		const char *ids[] = { exact.id, star.id, all.id };

		got = delivery_webhooks(ev);
		want = sorted_ids(ids, N(ids));
		ck_assert_str_eq(got, want);
		free(got);
		free(want);
	}
	/* pending, untried, time-ordered dlv_ ids (UUIDv7), not replays */
	ck_assert_int_eq(count_sql("SELECT count(*) FROM deliveries WHERE event_id = $1"
	    " AND client_id = $2 AND status = 'pending' AND attempts = 0 AND replay_of IS NULL"
	    " AND id ~ '^dlv_[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$'"
	    " AND next_attempt_at <= now()", ev, t.client), 3);
	/* the event row: the envelope's fields */
	v = devacct_sql_value("SELECT type || ' ' || environment || ' ' || api_version || ' ' ||"
	    " producer_service || ' ' || idempotency_key || ' ' || (correlation_id IS NULL)"
	    " FROM events WHERE id = $1 AND client_id = $2", ev, t.client);
	ck_assert_ptr_nonnull(v);
	ck_assert_str_eq(v, "bill.created sandbox " API_VERSION " bds-api trig-1 true");
	free(v);
	v = devacct_sql_value("SELECT request_id FROM events WHERE id = $1", ev, NULL);
	ck_assert_ptr_nonnull(v);
	ck_assert_str_eq(v, harness_header(r, "X-Request-Id"));
	free(v);
	/* data: the body as data.object, the flat ids beside it */
	v = devacct_sql_value("SELECT data::text FROM events WHERE id = $1", ev, NULL);
	ck_assert_ptr_nonnull(v);
	{
		struct json_object *d = json_tokener_parse(v), *o, *x;

		ck_assert_ptr_nonnull(d);
		ck_assert(json_object_object_get_ex(d, "object", &o));
		ck_assert_str_eq(json_object_get_string(json_object_object_get(o, "id")), "bill_123");
		ck_assert_str_eq(json_object_get_string(json_object_object_get(o, "status")), "PAID");
		ck_assert(json_object_object_get_ex(o, "extra", &x));
		ck_assert_str_eq(json_object_get_string(json_object_object_get(d, "bill_id")),
		    "bill_123");
		ck_assert_str_eq(json_object_get_string(json_object_object_get(d, "user_id")),
		    "usr_9");
		json_object_put(d);
	}
	free(v);
	harness_resp_free(r);

	/* a type only "*" and "all" cover */
	free(ev);
	ev = trigger_ok(t.key, "insight.created", NULL, NULL);
	{
		const char *ids[] = { star.id, all.id };

		got = delivery_webhooks(ev);
		want = sorted_ids(ids, N(ids));
		ck_assert_str_eq(got, want);
		free(got);
		free(want);
	}
	free(ev);
	tenant_free(&t);
}
END_TEST

/* Historic names are accepted and stored as the spec's table says. */
static const struct {
	const char *sent, *stored;
} historic[] = {
	{ "bill.paid", "bill.updated" },
	{ "link.expired", "link.disconnected" },
	{ "request-to-link.updated", "link_request.updated" },
};

START_TEST(trigger_historic_name)
{
	struct tenant t;
	struct wh w;
	struct harness_resp *r;
	char *v;

	tenant_new(&dev_a, &t);
	wh_sandbox(&dev_a, t.client, harness_fmt("[\"%s\"]", historic[_i].stored), &w);
	r = trigger(t.key, historic[_i].sent, "{}");
	harness_expect(r, 202);
	ck_assert_pstr_eq(devacct_str(r, "type"), historic[_i].stored);
	ck_assert_int_eq(devacct_int(r, "deliveries"), 1);
	v = devacct_sql_value("SELECT type FROM events WHERE id = $1",
	    devacct_str(r, "event_id"), NULL);
	ck_assert_ptr_nonnull(v);
	ck_assert_str_eq(v, historic[_i].stored);
	free(v);
	harness_resp_free(r);
	tenant_free(&t);
}
END_TEST

/* Not a deliverable type: 400 naming event_type, nothing written. */
static const char *const bad_types[] = {
	"bill.unknown", "*", "all", "webhook_endpoint.deleted", "BILL.CREATED", "bill",
};

START_TEST(trigger_unknown_type)
{
	struct tenant t;
	struct harness_resp *r;

	tenant_new(&dev_a, &t);
	r = trigger(t.key, bad_types[_i], "{}");
	harness_assert_coded(r, 400, "VALIDATION_ERROR");
	devacct_assert_error(r, "event_type", "unknown_event_type");
	harness_resp_free(r);
	ck_assert_int_eq(events_of(t.client), 0);
	tenant_free(&t);
}
END_TEST

/* The sandbox host only: on the live host the route does not exist. */
START_TEST(trigger_live_host_404)
{
	struct tenant t;
	struct harness_resp *r;
	char *dkey;

	tenant_new(&dev_a, &t);
	dkey = devacct_key_new(&dev_a, t.client, "development");
	r = devacct_call("POST", "api", "/v1/triggers/bill.created", devacct_bearer(t.key),
	    "{}", NULL);
	harness_assert_coded(r, 404, "NOT_FOUND");
	harness_resp_free(r);
	r = devacct_call("POST", "api", "/v1/triggers/bill.created", devacct_bearer(dkey),
	    "{}", NULL);
	harness_assert_coded(r, 404, "NOT_FOUND");
	harness_resp_free(r);
	/* a development key on the sandbox host is refused by auth */
	r = devacct_call("POST", "sandbox", "/v1/triggers/bill.created", devacct_bearer(dkey),
	    "{}", NULL);
	ck_assert_msg(r->status == 401 || r->status == 403, "%ld: %s", r->status, r->body);
	harness_resp_free(r);
	r = devacct_call("POST", "sandbox", "/v1/triggers/bill.created", NULL, "{}", NULL);
	harness_assert_coded(r, 401, NULL);
	harness_resp_free(r);
	ck_assert_int_eq(events_of(t.client), 0);
	free(dkey);
	tenant_free(&t);
}
END_TEST

/* Bodies: none and {} give an empty data.object; anything but an object
 * is 400; a client_id naming another client is 403. */
START_TEST(trigger_bodies)
{
	struct tenant t;
	struct harness_resp *r;
	char *ev, *v;

	tenant_new(&dev_a, &t);
	ev = trigger_ok(t.key, "bill.created", NULL, NULL);
	v = devacct_sql_value("SELECT data::text FROM events WHERE id = $1", ev, NULL);
	ck_assert_str_eq(v, "{\"object\": {}}");
	free(v);
	free(ev);
	ev = trigger_ok(t.key, "bill.created", "{}", NULL);
	free(ev);
	/* the client's own client_id is fine (bill_import.updated carries it) */
	ev = trigger_ok(t.key, "bill_import.updated", harness_fmt("{\"client_id\":\"%s\"}", t.client),
	    NULL);
	free(ev);

	r = trigger(t.key, "bill.created", "[1,2]");
	harness_assert_coded(r, 400, "VALIDATION_ERROR");
	harness_resp_free(r);
	r = trigger(t.key, "bill.created", "\"text\"");
	harness_assert_coded(r, 400, "VALIDATION_ERROR");
	harness_resp_free(r);
	r = trigger(t.key, "bill.created", "null");
	harness_assert_coded(r, 400, NULL);
	harness_resp_free(r);
	r = trigger(t.key, "bill.created", "{\"a\":");
	harness_assert_coded(r, 400, "INVALID_JSON");
	harness_resp_free(r);
	r = trigger(t.key, "bill.created", "{\"client_id\":\"cli_0190a2b4-0000-7000-8000-000000000000\"}");
	harness_assert_coded(r, 403, "CLIENT_ID_MISMATCH");
	harness_resp_free(r);
	ck_assert_int_eq(events_of(t.client), 3);
	tenant_free(&t);
}
END_TEST

/* ------------------------------------------------------------------ */
/* events_emit() in a handler's transaction                            */

static struct config cfg;
static struct arena arena;
static struct db *db;
static struct req req;

static void
req_open(void)
{
	char err[512];

	ck_assert_msg(config_load(&cfg, harness_config_path(), err, sizeof(err)) == 0,
	    "config: %s", err);
	ck_assert_int_eq(crypto_setup(), 0);
	arena_init(&arena);
	ck_assert_ptr_nonnull(db = db_new(harness_database_url()));
	req_init(&req, &cfg, db, &arena, NULL);
}

static void
req_close(void)
{
	arena_free(&arena);
	db_free(db);
	db = NULL;
	config_free(&cfg);
}

/* A rolled-back transaction emits nothing; a committed one its event and
 * deliveries; a type nothing subscribes to is recorded without any. */
START_TEST(emit_follows_the_transaction)
{
	struct tenant t;
	struct wh w, star;
	struct json_object *obj;
	const char *id;
	int n = -1;

	tenant_new(&dev_a, &t);
	wh_sandbox(&dev_a, t.client, "[\"bill.created\"]", &w);
	wh_sandbox(&dev_a, t.client, "[\"*\"]", &star);
	req_open();
	obj = json_object_new_object();
	json_object_object_add(obj, "id", json_object_new_string("bill_rb"));
	json_object_object_add(obj, "object", json_object_new_string("bill"));

	ck_assert_int_eq(db_begin(db), 0);
	id = events_emit(&req, t.client, "sandbox", "bill.created", obj, &n);
	ck_assert_msg(id != NULL, "emit: %s", db_errmsg(db));
	ck_assert_int_eq(n, 2);
	db_rollback(db);
	ck_assert_int_eq(events_of(t.client), 0);
	ck_assert_int_eq(deliveries_of(t.client), 0);

	ck_assert_int_eq(db_begin(db), 0);
	id = events_emit(&req, t.client, "sandbox", "bill.paid", obj, &n);
	ck_assert_ptr_nonnull(id);
	ck_assert_int_eq(n, 1);	/* normalised to bill.updated: only "*" */
	ck_assert_int_eq(db_commit(db), 0);
	ck_assert_int_eq(count_sql("SELECT count(*) FROM events WHERE id = $1 AND"
	    " type = 'bill.updated' AND api_version = '" API_VERSION "' AND request_id IS NULL",
	    id, NULL), 1);
	ck_assert_int_eq(count_sql("SELECT count(*) FROM deliveries WHERE event_id = $1"
	    " AND webhook_id = $2", id, star.id), 1);

	/* an activity-only type and an internal path: no deliveries, even to "*" */
	ck_assert_int_eq(db_begin(db), 0);
	id = events_emit(&req, t.client, "sandbox", "webhook_endpoint.deleted", obj, &n);
	ck_assert_ptr_nonnull(id);
	ck_assert_int_eq(n, 0);
	id = events_emit(&req, t.client, NULL, "bill.created", obj, &n);
	ck_assert_ptr_nonnull(id);
	ck_assert_int_eq(n, 0);
	ck_assert_int_eq(db_commit(db), 0);
	ck_assert_int_eq(deliveries_of(t.client), 1);
	ck_assert_int_eq(events_of(t.client), 3);

	json_object_put(obj);
	req_close();
	tenant_free(&t);
}
END_TEST

/* ------------------------------------------------------------------ */
/* GET /v1/activity                                                    */

/* Walk every page with limit; the ids in order (malloc'ed array, *n). */
static char **
walk(const char *key, const char *query, int limit, size_t *n, int *pages)
{
	char **ids = NULL, *cursor = NULL;
	size_t cap = 0;

	*n = 0;
	*pages = 0;
	for (;;) {
		struct harness_resp *r = get_ok(key, harness_fmt("/v1/activity?limit=%d%s%s%s", limit,
		    query, cursor != NULL ? "&cursor=" : "", cursor != NULL ? cursor : ""), 200);
		struct json_object *data = devacct_json(r, "data"), *hm = devacct_json(r, "has_more");
		size_t m = json_object_array_length(data);

		ck_assert_pstr_eq(devacct_str(r, "object"), "list");
		ck_assert((int)m <= limit);
		for (size_t i = 0; i < m; i++) {
			if (*n == cap)
				ids = realloc(ids, (cap = cap * 2 + 16) * sizeof(*ids));
			ids[(*n)++] = strdup(json_object_get_string(json_object_object_get(
			    json_object_array_get_idx(data, i), "id")));
		}
		(*pages)++;
		free(cursor);
		cursor = NULL;
		if (!json_object_get_boolean(hm)) {
			ck_assert_ptr_null(devacct_str(r, "next_cursor"));
			harness_resp_free(r);
			break;
		}
		ck_assert_int_eq((int)m, limit);
		ck_assert_ptr_nonnull(devacct_str(r, "next_cursor"));
		cursor = strdup(devacct_str(r, "next_cursor"));
		harness_resp_free(r);
		ck_assert_int_lt(*pages, 100);
	}
	return ids;
}

static void
ids_free(char **ids, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(ids[i]);
	free(ids);
}

/* Newest first over more than two pages: no duplicate, no gap, including
 * events that share one created_at (the id breaks the tie). */
START_TEST(list_pages_without_gaps)
{
	struct tenant t;
	char *made[40], **ids;
	size_t n;
	int pages;

	tenant_new(&dev_a, &t);
	for (int i = 0; i < 22; i++)
		made[i] = trigger_ok(t.key, i % 2 ? "bill.created" : "link.completed", NULL, NULL);
	/* 8 events at the very same instant, older than the rest */
	for (int i = 22; i < 30; i++) {
		made[i] = devacct_sql_value("INSERT INTO events (client_id, id, environment, type,"
		    " data, created_at) VALUES ($1, 'evt_' || gen_random_uuid(), 'sandbox',"
		    " 'bill.created', " BILL_CREATED_DATA ", date_trunc('day', now()) - interval '1 day')"
		    " RETURNING id", t.client, NULL);
	}

	ids = walk(t.key, "", 7, &n, &pages);
	ck_assert_int_eq(n, 30);
	ck_assert_int_eq(pages, 5);
	/* each made event exactly once */
	for (int i = 0; i < 30; i++) {
		int seen = 0;

		for (size_t j = 0; j < n; j++)
			seen += strcmp(ids[j], made[i]) == 0;
		ck_assert_msg(seen == 1, "%s seen %d times", made[i], seen);
	}
	/* newest first: the triggered ones in reverse order of making */
	for (int i = 0; i < 22; i++)
		ck_assert_str_eq(ids[i], made[21 - i]);
	/* the database order is what the list says */
	for (size_t j = 1; j < n; j++)
		ck_assert_int_eq(count_sql("SELECT count(*) FROM events a, events b WHERE"
		    " a.id = $1 AND b.id = $2 AND (a.created_at, a.id) > (b.created_at, b.id)",
		    ids[j - 1], ids[j]), 1);
	ids_free(ids, n);

	/* other page sizes agree */
	ids = walk(t.key, "", 1, &n, &pages);
	ck_assert_int_eq(n, 30);
	ck_assert_int_eq(pages, 30);
	ids_free(ids, n);
	ids = walk(t.key, "", 100, &n, &pages);
	ck_assert_int_eq(n, 30);
	ck_assert_int_eq(pages, 1);
	ids_free(ids, n);

	/* the default page is 100 (core/cursor.h): 71 more events, older than
	 * the rest, make 101 */
	free(devacct_sql_value("WITH i AS (INSERT INTO events (client_id, id, environment,"
	    " type, data, created_at) SELECT $1, 'evt_' || gen_random_uuid(), 'sandbox',"
	    " 'bill.created', " BILL_CREATED_DATA ", date_trunc('day', now()) - interval '2 days'"
	    " FROM generate_series(1, 71) RETURNING 1) SELECT count(*) FROM i", t.client, NULL));
	{
		struct harness_resp *r = get_ok(t.key, "/v1/activity", 200);

		ck_assert_int_eq(json_object_array_length(devacct_json(r, "data")), 100);
		ck_assert(json_object_get_boolean(devacct_json(r, "has_more")));
		harness_resp_free(r);
	}
	for (int i = 0; i < 30; i++)
		free(made[i]);
	tenant_free(&t);
}
END_TEST

/* One item: id, object, type, created_at and the delivery summary. */
START_TEST(list_item_shape)
{
	struct tenant t;
	struct wh a, b;
	struct harness_resp *r;
	char *ev;

	tenant_new(&dev_a, &t);
	wh_sandbox(&dev_a, t.client, "[\"*\"]", &a);
	wh_sandbox(&dev_a, t.client, "[\"*\"]", &b);
	ev = trigger_ok(t.key, "bill.created", NULL, NULL);
	r = get_ok(t.key, "/v1/activity", 200);
	ck_assert_int_eq(json_object_array_length(devacct_json(r, "data")), 1);
	ck_assert_pstr_eq(devacct_str(r, "data.0.id"), ev);
	ck_assert_pstr_eq(devacct_str(r, "data.0.object"), "event");
	ck_assert_pstr_eq(devacct_str(r, "data.0.type"), "bill.created");
	ck_assert(iso_ms(devacct_str(r, "data.0.created_at")));
	ck_assert_str_eq(devacct_text(r, "data.0.delivery"), "{\"status\":\"pending\",\"attempts\":0,"
	    "\"deliveries\":2,\"succeeded\":0,\"failed\":0,\"pending\":2}");
	ck_assert(!json_object_get_boolean(devacct_json(r, "has_more")));
	ck_assert_ptr_null(devacct_str(r, "next_cursor"));
	harness_resp_free(r);

	/* one succeeded after 2 attempts, the other failed after 8 */
	devacct_sql_exec("UPDATE deliveries SET status = 'succeeded', attempts = 2 WHERE"
	    " event_id = $1 AND webhook_id = $2", ev, a.id);
	devacct_sql_exec("UPDATE deliveries SET status = 'failed', attempts = 8 WHERE"
	    " event_id = $1 AND webhook_id = $2", ev, b.id);
	r = get_ok(t.key, "/v1/activity", 200);
	ck_assert_str_eq(devacct_text(r, "data.0.delivery"), "{\"status\":\"failed\",\"attempts\":10,"
	    "\"deliveries\":2,\"succeeded\":1,\"failed\":1,\"pending\":0}");
	harness_resp_free(r);
	/* a replay that succeeded supersedes the failure */
	devacct_sql_exec("INSERT INTO deliveries (client_id, id, event_id, webhook_id, status,"
	    " attempts, replay_of) SELECT client_id, 'dlv_' || gen_random_uuid(), event_id,"
	    " webhook_id, 'succeeded', 1, id FROM deliveries WHERE event_id = $1 AND webhook_id = $2",
	    ev, b.id);
	r = get_ok(t.key, "/v1/activity", 200);
	ck_assert_str_eq(devacct_text(r, "data.0.delivery"), "{\"status\":\"succeeded\",\"attempts\":11,"
	    "\"deliveries\":3,\"succeeded\":2,\"failed\":1,\"pending\":0}");
	harness_resp_free(r);
	free(ev);
	tenant_free(&t);
}
END_TEST

/* type, status and time filters, alone and together. */
START_TEST(list_filters)
{
	struct tenant t;
	struct wh w;
	struct harness_resp *r;
	char *bc[3], *bu, *lc, **ids;
	size_t n;
	int pages;

	tenant_new(&dev_a, &t);
	wh_sandbox(&dev_a, t.client, "[\"bill.created\",\"bill.updated\"]", &w);
	for (int i = 0; i < 3; i++)
		bc[i] = trigger_ok(t.key, "bill.created", NULL, NULL);
	bu = trigger_ok(t.key, "bill.paid", NULL, NULL);
	lc = trigger_ok(t.key, "link.completed", NULL, NULL);	/* nobody subscribes */
	devacct_sql_exec("UPDATE deliveries SET status = 'succeeded' WHERE event_id = $1", bc[0], NULL);
	devacct_sql_exec("UPDATE deliveries SET status = 'failed' WHERE event_id = $1", bc[1], NULL);
	/* spread them in time */
	devacct_sql_exec("UPDATE events SET created_at = '2031-03-01T10:00:00Z' WHERE id = $1", bc[0], NULL);
	devacct_sql_exec("UPDATE events SET created_at = '2031-03-02T10:00:00Z' WHERE id = $1", bc[1], NULL);
	devacct_sql_exec("UPDATE events SET created_at = '2031-03-03T10:00:00Z' WHERE id = $1", bc[2], NULL);
	devacct_sql_exec("UPDATE events SET created_at = '2031-03-04T10:00:00Z' WHERE id = $1", bu, NULL);
	devacct_sql_exec("UPDATE events SET created_at = '2031-03-05T10:00:00Z' WHERE id = $1", lc, NULL);

	ids = walk(t.key, "&type=bill.created", 2, &n, &pages);
	ck_assert_int_eq(n, 3);
	ck_assert_str_eq(ids[0], bc[2]);
	ck_assert_str_eq(ids[2], bc[0]);
	ids_free(ids, n);
	/* a historic name is the stored one */
	ids = walk(t.key, "&type=bill.paid", 10, &n, &pages);
	ck_assert_int_eq(n, 1);
	ck_assert_str_eq(ids[0], bu);
	ids_free(ids, n);
	ids = walk(t.key, "&status=succeeded", 10, &n, &pages);
	ck_assert_int_eq(n, 1);
	ck_assert_str_eq(ids[0], bc[0]);
	ids_free(ids, n);
	ids = walk(t.key, "&status=failed", 10, &n, &pages);
	ck_assert_int_eq(n, 1);
	ck_assert_str_eq(ids[0], bc[1]);
	ids_free(ids, n);
	ids = walk(t.key, "&status=pending", 1, &n, &pages);
	ck_assert_int_eq(n, 2);
	ck_assert_str_eq(ids[0], bu);
	ck_assert_str_eq(ids[1], bc[2]);
	ids_free(ids, n);
	ids = walk(t.key, "&status=none", 10, &n, &pages);
	ck_assert_int_eq(n, 1);
	ck_assert_str_eq(ids[0], lc);
	ids_free(ids, n);
	/* both bounds exclusive; offsets accepted */
	ids = walk(t.key, "&created_after=2031-03-02T10:00:00Z&created_before=2031-03-05T10:00:00Z",
	    10, &n, &pages);
	ck_assert_int_eq(n, 2);
	ck_assert_str_eq(ids[0], bu);
	ck_assert_str_eq(ids[1], bc[2]);
	ids_free(ids, n);
	ids = walk(t.key, "&created_after=2031-03-02T12:00:00%2B02:00&type=bill.created", 10, &n,
	    &pages);	/* = bc[1]'s instant, excluded */
	ck_assert_int_eq(n, 1);
	ck_assert_str_eq(ids[0], bc[2]);
	ids_free(ids, n);
	ids = walk(t.key, "&created_before=2031-03-03T10:00:00.000001Z&status=pending", 10, &n,
	    &pages);
	ck_assert_int_eq(n, 1);
	ck_assert_str_eq(ids[0], bc[2]);
	ids_free(ids, n);
	/* an empty result */
	r = get_ok(t.key, "/v1/activity?type=pay.failed", 200);
	ck_assert_str_eq(devacct_text(r, "data"), "[]");
	harness_resp_free(r);
	for (int i = 0; i < 3; i++)
		free(bc[i]);
	free(bu);
	free(lc);
	tenant_free(&t);
}
END_TEST

/* Bad query input: every case a 400 naming the parameter. */
static const struct {
	const char *query, *field, *code;
} bad_queries[] = {
	{ "page=2", "page", "unknown_field" },
	{ "page_size=10", "page_size", "unknown_field" },
	{ "limit=0", "limit", NULL },
	{ "limit=501", "limit", NULL },
	{ "limit=-1", "limit", NULL },
	{ "limit=ten", "limit", NULL },
	{ "limit=", "limit", NULL },
	{ "status=done", "status", "invalid_enum" },
	{ "type=bill.nope", "type", "unknown_event_type" },
	{ "type=*", "type", "unknown_event_type" },
	{ "created_after=yesterday", "created_after", "invalid_format" },
	{ "created_before=2031-02-30T00:00:00Z", "created_before", "invalid_format" },
	{ "created_after=2031-01-01T00:00:00", "created_after", "invalid_format" },
	{ "offset=5", "offset", "unknown_field" },
	{ "limit=5&limit=6", "limit", NULL },
};

START_TEST(list_bad_query)
{
	struct tenant t;
	struct harness_resp *r;

	tenant_new(&dev_a, &t);
	r = key_call(t.key, "GET", harness_fmt("/v1/activity?%s", bad_queries[_i].query), NULL, NULL);
	harness_assert_coded(r, 400, "VALIDATION_ERROR");
	if (bad_queries[_i].code != NULL)
		devacct_assert_error(r, bad_queries[_i].field, bad_queries[_i].code);
	else
		ck_assert_pstr_eq(devacct_str(r, "errors.0.field"), bad_queries[_i].field);
	harness_resp_free(r);
	tenant_free(&t);
}
END_TEST

/* A cursor works only as issued: for this list, client and environment. */
START_TEST(list_cursor_tampered)
{
	struct tenant t, u;
	struct harness_resp *r;
	char *cursor, *bad;
	size_t len;

	tenant_new(&dev_a, &t);
	tenant_new(&dev_a, &u);
	for (int i = 0; i < 3; i++) {
		free(trigger_ok(t.key, "bill.created", NULL, NULL));
		free(trigger_ok(u.key, "bill.created", NULL, NULL));
	}
	r = get_ok(t.key, "/v1/activity?limit=1", 200);
	cursor = strdup(devacct_str(r, "next_cursor"));
	harness_resp_free(r);
	r = get_ok(t.key, harness_fmt("/v1/activity?limit=1&cursor=%s", cursor), 200);
	harness_resp_free(r);

	/* each character changed in turn */
	len = strlen(cursor);
	bad = strdup(cursor);
	for (size_t i = 0; i < len; i += 3) {
		bad[i] = cursor[i] == 'A' ? 'B' : 'A';
		r = key_call(t.key, "GET", harness_fmt("/v1/activity?cursor=%s", bad), NULL, NULL);
		harness_assert_coded(r, 400, "INVALID_CURSOR");
		harness_resp_free(r);
		bad[i] = cursor[i];
	}
	free(bad);
	/* truncated, extended, garbage */
	r = key_call(t.key, "GET", harness_fmt("/v1/activity?cursor=%.*s", (int)len - 2, cursor), NULL, NULL);
	harness_assert_coded(r, 400, "INVALID_CURSOR");
	harness_resp_free(r);
	r = key_call(t.key, "GET", harness_fmt("/v1/activity?cursor=%sAA", cursor), NULL, NULL);
	harness_assert_coded(r, 400, "INVALID_CURSOR");
	harness_resp_free(r);
	r = key_call(t.key, "GET", "/v1/activity?cursor=not-a-cursor", NULL, NULL);
	harness_assert_coded(r, 400, "INVALID_CURSOR");
	harness_resp_free(r);
	/* another client's list */
	r = key_call(u.key, "GET", harness_fmt("/v1/activity?cursor=%s", cursor), NULL, NULL);
	harness_assert_coded(r, 400, "INVALID_CURSOR");
	harness_resp_free(r);
	free(cursor);
	tenant_free(&t);
	tenant_free(&u);
}
END_TEST

/* ------------------------------------------------------------------ */
/* GET /v1/activity/{event_id}                                         */

START_TEST(detail_with_attempt_log)
{
	struct tenant t;
	struct wh a, b;
	struct harness_resp *r;
	struct json_object *ds;
	const char *extra[] = { "Idempotency-Key: detail-1", NULL };
	char *ev, *da, *db_, *rid;

	tenant_new(&dev_a, &t);
	wh_sandbox(&dev_a, t.client, "[\"bill.created\"]", &a);
	wh_sandbox(&dev_a, t.client, "[\"*\"]", &b);
	r = key_call(t.key, "POST", "/v1/triggers/bill.created",
	    "{\"id\":\"bill_77\",\"object\":\"bill\",\"user_id\":\"usr_1\"}", extra);
	harness_expect(r, 202);
	ev = strdup(devacct_str(r, "event_id"));
	rid = strdup(harness_header(r, "X-Request-Id"));
	harness_resp_free(r);
	da = devacct_sql_value("SELECT id FROM deliveries WHERE event_id = $1 AND webhook_id = $2",
	    ev, a.id);
	db_ = devacct_sql_value("SELECT id FROM deliveries WHERE event_id = $1 AND webhook_id = $2",
	    ev, b.id);
	/* what bds-deliver records: a 500 then a 200 for a; b timed out once */
	devacct_sql_exec("INSERT INTO delivery_attempts (client_id, delivery_id, attempt,"
	    " attempted_at, status_code, latency_ms, error) SELECT client_id, id, 1,"
	    " '2031-01-01T00:00:00Z', 500, 12, NULL FROM deliveries WHERE id = $1", da, NULL);
	devacct_sql_exec("INSERT INTO delivery_attempts (client_id, delivery_id, attempt,"
	    " attempted_at, status_code, latency_ms, error) SELECT client_id, id, 2,"
	    " '2031-01-01T00:00:05Z', 200, 7, NULL FROM deliveries WHERE id = $1", da, NULL);
	devacct_sql_exec("UPDATE deliveries SET status = 'succeeded', attempts = 2,"
	    " last_status_code = 200 WHERE id = $1", da, NULL);
	devacct_sql_exec("INSERT INTO delivery_attempts (client_id, delivery_id, attempt,"
	    " status_code, latency_ms, error) SELECT client_id, id, 1, 0, 10000,"
	    " 'no response within 10 seconds' FROM deliveries WHERE id = $1", db_, NULL);
	devacct_sql_exec("UPDATE deliveries SET attempts = 1, last_status_code = 0,"
	    " last_error = 'no response within 10 seconds',"
	    " next_attempt_at = '2031-01-01T00:00:10Z' WHERE id = $1", db_, NULL);

	r = get_ok(t.key, harness_fmt("/v1/activity/%s", ev), 200);
	/* the envelope (DESIGN "Webhook envelope") */
	ck_assert_pstr_eq(devacct_str(r, "id"), ev);
	ck_assert_pstr_eq(devacct_str(r, "event_id"), ev);
	ck_assert_pstr_eq(devacct_str(r, "object"), "event");
	ck_assert_pstr_eq(devacct_str(r, "type"), "bill.created");
	ck_assert_pstr_eq(devacct_str(r, "event_type"), "bill.created");
	ck_assert_pstr_eq(devacct_str(r, "api_version"), API_VERSION);
	ck_assert_pstr_eq(devacct_str(r, "client_id"), t.client);
	ck_assert_pstr_eq(devacct_str(r, "mode"), "sandbox");
	ck_assert_pstr_eq(devacct_str(r, "producer_service"), "bds-api");
	ck_assert_pstr_eq(devacct_str(r, "request.id"), rid);
	ck_assert_pstr_eq(devacct_str(r, "request.idempotency_key"), "detail-1");
	ck_assert(json_object_object_get_ex(r->json, "correlation_id", NULL));
	ck_assert_int_gt(devacct_int(r, "created"), 1700000000);
	ck_assert(iso_ms(devacct_str(r, "timestamp")));
	ck_assert_str_eq(devacct_text(r, "data.object"),
	    "{\"id\":\"bill_77\",\"object\":\"bill\",\"user_id\":\"usr_1\"}");
	ck_assert_pstr_eq(devacct_str(r, "data.bill_id"), "bill_77");
	ck_assert_pstr_eq(devacct_str(r, "data.user_id"), "usr_1");
	ck_assert_str_eq(devacct_text(r, "delivery"), "{\"status\":\"pending\",\"attempts\":3,"
	    "\"deliveries\":2,\"succeeded\":1,\"failed\":0,\"pending\":1}");
	/* the deliveries (made together: in id order), with their attempt logs */
	ds = devacct_json(r, "deliveries");
	ck_assert_int_eq(json_object_array_length(ds), 2);
	{
		int ia = strcmp(devacct_str(r, "deliveries.0.id"), da) == 0 ? 0 : 1, ib = 1 - ia;

		ck_assert_pstr_eq(devacct_str(r, harness_fmt("deliveries.%d.id", ia)), da);
		ck_assert_pstr_eq(devacct_str(r, harness_fmt("deliveries.%d.object", ia)), "delivery");
		ck_assert_pstr_eq(devacct_str(r, harness_fmt("deliveries.%d.webhook_id", ia)), a.id);
		ck_assert_pstr_eq(devacct_str(r, harness_fmt("deliveries.%d.url", ia)), "http://127.0.0.1:9/hook");
		ck_assert_pstr_eq(devacct_str(r, harness_fmt("deliveries.%d.status", ia)), "succeeded");
		ck_assert_int_eq(devacct_int(r, harness_fmt("deliveries.%d.attempts", ia)), 2);
		ck_assert_int_eq(devacct_int(r, harness_fmt("deliveries.%d.last_status_code", ia)), 200);
		ck_assert_ptr_null(devacct_str(r, harness_fmt("deliveries.%d.next_attempt_at", ia)));
		ck_assert_ptr_null(devacct_str(r, harness_fmt("deliveries.%d.replay_of", ia)));
		ck_assert_str_eq(devacct_text(r, harness_fmt("deliveries.%d.attempt_log", ia)),
		    "[{\"attempt\":1,\"attempted_at\":\"2031-01-01T00:00:00.000Z\",\"status_code\":500,"
		    "\"latency_ms\":12,\"error\":null},{\"attempt\":2,\"attempted_at\":"
		    "\"2031-01-01T00:00:05.000Z\",\"status_code\":200,\"latency_ms\":7,\"error\":null}]");
		ck_assert_pstr_eq(devacct_str(r, harness_fmt("deliveries.%d.id", ib)), db_);
		ck_assert_pstr_eq(devacct_str(r, harness_fmt("deliveries.%d.status", ib)), "pending");
		ck_assert_pstr_eq(devacct_str(r, harness_fmt("deliveries.%d.next_attempt_at", ib)),
		    "2031-01-01T00:00:10.000Z");
		ck_assert_int_eq(devacct_int(r, harness_fmt("deliveries.%d.last_status_code", ib)), 0);
		ck_assert_pstr_eq(devacct_str(r, harness_fmt("deliveries.%d.last_error", ib)),
		    "no response within 10 seconds");
		ck_assert_pstr_eq(devacct_str(r, harness_fmt("deliveries.%d.attempt_log.0.error", ib)),
		    "no response within 10 seconds");
		ck_assert_int_eq(devacct_int(r, harness_fmt("deliveries.%d.attempt_log.0.status_code", ib)), 0);
	}
	/* no secret of the subscription anywhere */
	ck_assert_ptr_null(strstr(r->body, a.secret));
	ck_assert_ptr_null(strstr(r->body, b.secret));
	harness_resp_free(r);

	/* an event without deliveries */
	free(ev);
	devacct_sql_exec("UPDATE webhooks SET enabled = false WHERE client_id = $1", t.client, NULL);
	ev = trigger_ok(t.key, "link.completed", NULL, NULL);
	r = get_ok(t.key, harness_fmt("/v1/activity/%s", ev), 200);
	ck_assert_str_eq(devacct_text(r, "deliveries"), "[]");
	ck_assert_pstr_eq(devacct_str(r, "delivery.status"), "none");
	harness_resp_free(r);
	free(ev);
	free(da);
	free(db_);
	free(rid);
	tenant_free(&t);
}
END_TEST

/* Another client's, another environment's, an unknown or malformed id:
 * 404; another client's list never shows them. */
START_TEST(tenant_isolation)
{
	struct tenant a, b;
	struct harness_resp *r;
	char *ev, *dkey, *bkey;
	size_t n;
	int pages;
	char **ids;

	tenant_new(&dev_a, &a);
	tenant_new(&dev_b, &b);
	ev = trigger_ok(a.key, "bill.created", "{\"id\":\"bill_secret\"}", NULL);
	free(trigger_ok(b.key, "bill.created", NULL, NULL));

	r = key_call(b.key, "GET", harness_fmt("/v1/activity/%s", ev), NULL, NULL);
	harness_assert_coded(r, 404, "NOT_FOUND");
	ck_assert_ptr_null(strstr(r->body, "bill_secret"));
	harness_resp_free(r);
	/* the same developer's other client too */
	{
		char *other = devacct_client_new(&dev_a);

		bkey = devacct_key_new(&dev_a, other, "sandbox");
		free(other);
	}
	r = key_call(bkey, "GET", harness_fmt("/v1/activity/%s", ev), NULL, NULL);
	harness_assert_coded(r, 404, "NOT_FOUND");
	harness_resp_free(r);
	/* the same client's development key: another environment */
	dkey = devacct_key_new(&dev_a, a.client, "development");
	r = key_call(dkey, "GET", harness_fmt("/v1/activity/%s", ev), NULL, NULL);
	harness_assert_coded(r, 404, "NOT_FOUND");
	harness_resp_free(r);
	r = get_ok(dkey, "/v1/activity", 200);
	ck_assert_str_eq(devacct_text(r, "data"), "[]");
	harness_resp_free(r);
	r = replay(b.key, harness_fmt("{\"event_id\":\"%s\"}", ev), NULL);
	harness_assert_coded(r, 404, "NOT_FOUND");
	harness_resp_free(r);

	r = key_call(a.key, "GET", "/v1/activity/evt_0190a2b4-0000-7000-8000-000000000000", NULL, NULL);
	harness_assert_coded(r, 404, "NOT_FOUND");
	harness_resp_free(r);
	r = key_call(a.key, "GET", "/v1/activity/not-an-id", NULL, NULL);
	harness_assert_coded(r, 404, "NOT_FOUND");
	harness_resp_free(r);
	r = key_call(a.key, "GET", "/v1/activity/evt_'%20OR%201=1--", NULL, NULL);
	harness_assert_coded(r, 404, "NOT_FOUND");
	harness_resp_free(r);

	ids = walk(b.key, "", 10, &n, &pages);
	ck_assert_int_eq(n, 1);
	ck_assert_str_ne(ids[0], ev);
	ids_free(ids, n);
	/* no key: 401 */
	r = devacct_call("GET", "sandbox", "/v1/activity", NULL, NULL, NULL);
	harness_assert_coded(r, 401, NULL);
	harness_resp_free(r);
	free(ev);
	free(dkey);
	free(bkey);
	tenant_free(&a);
	tenant_free(&b);
}
END_TEST

/* ------------------------------------------------------------------ */
/* POST /v1/activity/replay                                            */

static long long
replays_of(const char *event)
{
	return count_sql("SELECT count(*) FROM deliveries WHERE event_id = $1 AND"
	    " replay_of IS NOT NULL", event, NULL);
}

START_TEST(replay_by_event)
{
	struct tenant t;
	struct wh a, b, c, off, late;
	char *ev, *fa, *v;

	tenant_new(&dev_a, &t);
	wh_sandbox(&dev_a, t.client, "[\"bill.created\"]", &a);
	wh_sandbox(&dev_a, t.client, "[\"*\"]", &b);
	wh_sandbox(&dev_a, t.client, "[\"all\"]", &c);
	wh_sandbox(&dev_a, t.client, "[\"bill.created\"]", &off);
	ev = trigger_ok(t.key, "bill.created", NULL, NULL);
	ck_assert_int_eq(count_sql("SELECT count(*) FROM deliveries WHERE event_id = $1", ev, NULL), 4);
	devacct_sql_exec("UPDATE webhooks SET enabled = false WHERE id = $1", off.id, NULL);
	devacct_sql_exec("UPDATE deliveries SET status = 'succeeded', attempts = 1"
	    " WHERE event_id = $1", ev, NULL);
	devacct_sql_exec("UPDATE deliveries SET status = 'failed', attempts = 8"
	    " WHERE event_id = $1 AND webhook_id = $2", ev, a.id);
	fa = devacct_sql_value("SELECT id FROM deliveries WHERE event_id = $1 AND webhook_id = $2",
	    ev, a.id);

	/* only the failed pair */
	ck_assert_int_eq(replay_ok(t.key, harness_fmt("{\"event_id\":\"%s\",\"only_failed\":true}", ev)), 1);
	v = devacct_sql_value("SELECT webhook_id || ' ' || replay_of || ' ' || status || ' ' ||"
	    " attempts || ' ' || (id LIKE 'dlv\\_%') FROM deliveries WHERE event_id = $1 AND"
	    " replay_of IS NOT NULL", ev, NULL);
	ck_assert_str_eq(v, harness_fmt("%s %s pending 0 true", a.id, fa));
	free(v);
	/* the replay is now the latest of that pair: pending, not failed */
	ck_assert_int_eq(replay_ok(t.key, harness_fmt("{\"event_id\":\"%s\",\"only_failed\":true}", ev)), 0);
	/* one subscription */
	ck_assert_int_eq(replay_ok(t.key, harness_fmt("{\"event_id\":\"%s\",\"webhook_id\":\"%s\"}", ev,
	    b.id)), 1);
	ck_assert_int_eq(count_sql("SELECT count(*) FROM deliveries d JOIN deliveries o ON"
	    " o.id = d.replay_of WHERE d.event_id = $1 AND d.webhook_id = $2 AND"
	    " o.webhook_id = $2 AND o.event_id = $1", ev, b.id), 1);
	/* every current enabled matching subscription, a new one included
	 * (nothing to repeat: replay_of NULL), the disabled one not */
	wh_sandbox(&dev_a, t.client, "[\"bill.created\"]", &late);
	ck_assert_int_eq(replay_ok(t.key, harness_fmt("{\"event_id\":\"%s\"}", ev)), 4);
	ck_assert_int_eq(count_sql("SELECT count(*) FROM deliveries WHERE event_id = $1 AND"
	    " webhook_id = $2", ev, off.id), 1);
	ck_assert_int_eq(count_sql("SELECT count(*) FROM deliveries WHERE event_id = $1 AND"
	    " webhook_id = $2 AND replay_of IS NULL AND status = 'pending'", ev, late.id), 1);
	ck_assert_int_eq(replays_of(ev), 5);
	/* the a chain: each replay repeats the latest delivery of the pair */
	ck_assert_int_eq(count_sql("SELECT count(*) FROM deliveries d JOIN deliveries o ON"
	    " o.id = d.replay_of AND o.event_id = d.event_id AND o.webhook_id = d.webhook_id"
	    " WHERE d.event_id = $1 AND d.webhook_id = $2", ev, a.id), 2);
	(void)c;
	free(fa);
	free(ev);
	tenant_free(&t);
}
END_TEST

START_TEST(replay_webhook_rules)
{
	struct tenant t, u;
	struct wh a, off, theirs, other_type;
	struct harness_resp *r;
	char *ev;

	tenant_new(&dev_a, &t);
	tenant_new(&dev_b, &u);
	wh_sandbox(&dev_a, t.client, "[\"bill.created\"]", &a);
	wh_sandbox(&dev_a, t.client, "[\"bill.created\"]", &off);
	wh_sandbox(&dev_a, t.client, "[\"link.completed\"]", &other_type);
	wh_sandbox(&dev_b, u.client, "[\"*\"]", &theirs);
	devacct_sql_exec("UPDATE webhooks SET enabled = false WHERE id = $1", off.id, NULL);
	ev = trigger_ok(t.key, "bill.created", NULL, NULL);

	r = replay(t.key, harness_fmt("{\"event_id\":\"%s\",\"webhook_id\":\"%s\"}", ev, theirs.id), NULL);
	harness_assert_coded(r, 404, "WEBHOOK_NOT_FOUND");
	harness_resp_free(r);
	r = replay(t.key, harness_fmt("{\"event_id\":\"%s\",\"webhook_id\":\"whk_nope\"}", ev), NULL);
	harness_assert_coded(r, 404, "WEBHOOK_NOT_FOUND");
	harness_resp_free(r);
	r = replay(t.key, harness_fmt("{\"event_id\":\"%s\",\"webhook_id\":\"%s\"}", ev, off.id), NULL);
	harness_assert_coded(r, 409, "WEBHOOK_DISABLED");
	harness_resp_free(r);
	/* a subscription that does not cover the type queues nothing */
	ck_assert_int_eq(replay_ok(t.key, harness_fmt("{\"event_id\":\"%s\",\"webhook_id\":\"%s\"}", ev,
	    other_type.id)), 0);
	ck_assert_int_eq(replays_of(ev), 0);
	ck_assert_int_eq(deliveries_of(u.client), 0);
	free(ev);
	tenant_free(&t);
	tenant_free(&u);
}
END_TEST

START_TEST(replay_by_window)
{
	struct tenant t;
	struct wh a, b;
	char *e[4];

	tenant_new(&dev_a, &t);
	wh_sandbox(&dev_a, t.client, "[\"bill.created\",\"bill.updated\"]", &a);
	wh_sandbox(&dev_a, t.client, "[\"bill.updated\"]", &b);
	e[0] = trigger_ok(t.key, "bill.created", NULL, NULL);	/* a */
	e[1] = trigger_ok(t.key, "bill.updated", NULL, NULL);	/* a, b */
	e[2] = trigger_ok(t.key, "bill.updated", NULL, NULL);	/* a, b */
	e[3] = trigger_ok(t.key, "link.completed", NULL, NULL);	/* none */
	devacct_sql_exec("UPDATE events SET created_at = '2031-05-01T00:00:00Z' WHERE id = $1", e[0], NULL);
	devacct_sql_exec("UPDATE events SET created_at = '2031-05-10T00:00:00Z' WHERE id = $1", e[1], NULL);
	devacct_sql_exec("UPDATE events SET created_at = '2031-05-20T00:00:00Z' WHERE id = $1", e[2], NULL);
	devacct_sql_exec("UPDATE events SET created_at = '2031-05-15T00:00:00Z' WHERE id = $1", e[3], NULL);
	devacct_sql_exec("UPDATE deliveries SET status = 'failed' WHERE event_id = $1 AND"
	    " webhook_id = $2", e[1], b.id);
	devacct_sql_exec("UPDATE deliveries SET status = 'failed' WHERE event_id = $1", e[2], NULL);
	/* an activity-only event in the window: "*" does not make it deliverable */
	devacct_sql_exec("INSERT INTO events (client_id, id, environment, type, data, created_at)"
	    " VALUES ($1, 'evt_' || gen_random_uuid(), 'sandbox', 'webhook_endpoint.deleted', '{}',"
	    " '2031-05-02T00:00:00Z')", t.client, NULL);

	/* [from, to): e0 at from is in, e2 at to is out */
	ck_assert_int_eq(replay_ok(t.key, "{\"from\":\"2031-05-01T00:00:00Z\","
	    "\"to\":\"2031-05-20T00:00:00Z\",\"only_failed\":true}"), 1);
	ck_assert_int_eq(replays_of(e[1]), 1);
	ck_assert_int_eq(replay_ok(t.key, "{\"from\":\"2031-05-01T00:00:00Z\","
	    "\"to\":\"2031-05-20T00:00:00.001Z\",\"only_failed\":true}"), 2);
	ck_assert_int_eq(replays_of(e[2]), 2);
	ck_assert_int_eq(replay_ok(t.key, harness_fmt("{\"from\":\"2031-04-30T00:00:00Z\","
	    "\"to\":\"2031-05-30T00:00:00Z\",\"webhook_id\":\"%s\"}", b.id)), 2);
	ck_assert_int_eq(replay_ok(t.key, "{\"from\":\"2031-04-30T02:00:00+02:00\","
	    "\"to\":\"2031-05-30T00:00:00Z\"}"), 5);
	ck_assert_int_eq(replays_of(e[0]), 1);
	ck_assert_int_eq(replays_of(e[3]), 0);
	ck_assert_int_eq(replay_ok(t.key, "{\"from\":\"2031-06-01T00:00:00Z\","
	    "\"to\":\"2031-06-02T00:00:00Z\"}"), 0);
	/* "*" does not make the activity-only event deliverable */
	{
		struct wh star;

		wh_sandbox(&dev_a, t.client, "[\"*\"]", &star);
		ck_assert_int_eq(replay_ok(t.key, "{\"from\":\"2031-05-02T00:00:00Z\","
		    "\"to\":\"2031-05-02T00:00:01Z\"}"), 0);
	}
	/* the window may be exactly 30 days */
	ck_assert_int_eq(replay_ok(t.key, "{\"from\":\"2031-05-01T00:00:00Z\","
	    "\"to\":\"2031-05-31T00:00:00Z\",\"only_failed\":true}"), 0);
	for (int i = 0; i < 4; i++)
		free(e[i]);
	tenant_free(&t);
}
END_TEST

static const struct {
	const char *body, *field, *code;
} bad_replays[] = {
	{ "{}", "event_id", "required" },
	{ "{\"only_failed\":true}", "event_id", "required" },
	{ "{\"event_id\":\"evt_x\",\"from\":\"2031-01-01T00:00:00Z\"}", "from", "not_allowed" },
	{ "{\"event_id\":\"evt_x\",\"to\":\"2031-01-01T00:00:00Z\"}", "to", "not_allowed" },
	{ "{\"from\":\"2031-01-01T00:00:00Z\"}", "to", "required" },
	{ "{\"to\":\"2031-01-01T00:00:00Z\"}", "from", "required" },
	{ "{\"from\":\"2031-01-02T00:00:00Z\",\"to\":\"2031-01-01T00:00:00Z\"}", "to", "out_of_range" },
	{ "{\"from\":\"2031-01-01T00:00:00Z\",\"to\":\"2031-01-01T00:00:00Z\"}", "to", "out_of_range" },
	{ "{\"from\":\"2031-01-01T00:00:00Z\",\"to\":\"2031-01-31T00:00:00.001Z\"}", "to", "out_of_range" },
	{ "{\"from\":\"2031-01-01T00:00:00Z\",\"to\":\"2031-03-01T00:00:00Z\"}", "to", "out_of_range" },
	{ "{\"from\":\"yesterday\",\"to\":\"2031-01-01T00:00:00Z\"}", "from", "invalid_format" },
	{ "{\"from\":\"2031-01-01\",\"to\":\"2031-01-02\"}", "from", "invalid_format" },
	{ "{\"from\":\"2031-01-01T00:00:00Z\",\"to\":\"2031-13-01T00:00:00Z\"}", "to", "invalid_format" },
	{ "{\"from\":1,\"to\":2}", "from", "invalid_type" },
	{ "{\"event_id\":42}", "event_id", "invalid_type" },
	{ "{\"event_id\":null}", "event_id", "invalid_type" },
	{ "{\"event_id\":\"\"}", "event_id", "too_short" },
	{ "{\"event_id\":\"evt_x\",\"only_failed\":\"yes\"}", "only_failed", "invalid_type" },
	{ "{\"event_id\":\"evt_x\",\"webhook_id\":7}", "webhook_id", "invalid_type" },
	{ "{\"event_id\":\"evt_x\",\"mode\":\"all\"}", "mode", "unknown_field" },
	{ "[]", "", "invalid_type" },
};

START_TEST(replay_bad_input)
{
	struct tenant t;
	struct harness_resp *r;

	tenant_new(&dev_a, &t);
	r = replay(t.key, bad_replays[_i].body, NULL);
	harness_assert_coded(r, 400, "VALIDATION_ERROR");
	devacct_assert_error(r, bad_replays[_i].field, bad_replays[_i].code);
	harness_resp_free(r);
	tenant_free(&t);
}
END_TEST

START_TEST(replay_unknown_event)
{
	struct tenant t;
	struct harness_resp *r;

	tenant_new(&dev_a, &t);
	r = replay(t.key, "{\"event_id\":\"evt_0190a2b4-0000-7000-8000-000000000000\"}", NULL);
	harness_assert_coded(r, 404, "NOT_FOUND");
	harness_resp_free(r);
	r = replay(t.key, "{\"event_id\":\"evt_x\"}", NULL);
	harness_assert_coded(r, 404, "NOT_FOUND");
	harness_resp_free(r);
	/* GET is not the method */
	r = key_call(t.key, "GET", "/v1/activity/replay", NULL, NULL);
	harness_assert_coded(r, 404, "NOT_FOUND");	/* "replay" is no event id */
	harness_resp_free(r);
	tenant_free(&t);
}
END_TEST

/* The same key and body answer the first 202 and queue nothing more;
 * the same key with another body is 409. */
START_TEST(replay_idempotency)
{
	struct tenant t;
	struct wh a;
	struct harness_resp *r;
	const char *extra[] = { "Idempotency-Key: replay-once", NULL };
	char *ev, *body;

	tenant_new(&dev_a, &t);
	wh_sandbox(&dev_a, t.client, "[\"*\"]", &a);
	ev = trigger_ok(t.key, "bill.created", NULL, NULL);
	body = strdup(harness_fmt("{\"event_id\":\"%s\"}", ev));
	for (int i = 0; i < 2; i++) {
		r = replay(t.key, body, extra);
		harness_expect(r, 202);
		ck_assert_int_eq(devacct_int(r, "queued"), 1);
		harness_resp_free(r);
	}
	ck_assert_int_eq(replays_of(ev), 1);
	r = replay(t.key, harness_fmt("{\"event_id\":\"%s\",\"only_failed\":true}", ev), extra);
	harness_assert_coded(r, 409, "IDEMPOTENCY_CONFLICT");
	harness_resp_free(r);
	/* a refused request does not use its key up */
	{
		const char *k2[] = { "Idempotency-Key: replay-two", NULL };

		r = replay(t.key, "{\"event_id\":\"evt_0190a2b4-0000-7000-8000-000000000000\"}", k2);
		harness_assert_coded(r, 404, "NOT_FOUND");
		harness_resp_free(r);
		r = replay(t.key, body, k2);
		harness_expect(r, 202);
		harness_resp_free(r);
	}
	ck_assert_int_eq(replays_of(ev), 2);
	free(body);
	free(ev);
	tenant_free(&t);
}
END_TEST

/*
 * The trigger honours Idempotency-Key: the same key and body answer the
 * first 202 (the same event) and deliver once; another body is 409 and
 * emits nothing.
 */
START_TEST(trigger_idempotency)
{
	struct receiver *rc = receiver_start(NULL);
	const char *extra[] = { "Idempotency-Key: trigger-once", NULL };
	const char *body = "{\"id\":\"bill_i\",\"object\":\"bill\"}";
	struct harness_resp *r;
	struct tenant t;
	struct wh w;
	char url[256], *ev = NULL;

	ck_assert_msg(rc != NULL, "receiver: %s", receiver_error());
	tenant_new(&dev_a, &t);
	wh_register(&dev_a, t.client, "sandbox", receiver_url(rc, "/idem", url, sizeof(url)),
	    "[\"*\"]", &w);
	for (int i = 0; i < 2; i++) {
		r = trigger_with(t.key, "bill.created", body, extra);
		harness_expect(r, 202);
		ck_assert_int_eq(devacct_int(r, "deliveries"), 1);
		if (ev == NULL)
			ev = strdup(devacct_str(r, "event_id"));
		ck_assert_pstr_eq(devacct_str(r, "event_id"), ev);
		harness_resp_free(r);
	}
	r = trigger_with(t.key, "bill.created", "{\"id\":\"bill_j\",\"object\":\"bill\"}", extra);
	harness_assert_coded(r, 409, "IDEMPOTENCY_CONFLICT");
	harness_resp_free(r);
	ck_assert_int_eq(events_of(t.client), 1);
	ck_assert_int_eq(deliveries_of(t.client), 1);
	/* the receiver sees it once */
	ck_assert_int_eq(harness_deliver_once(), 0);
	ck_assert_ptr_nonnull(receiver_wait(rc, 0, WAIT_MS));
	ck_assert_int_eq(harness_deliver_once(), 0);
	harness_sleep_ms(200);
	ck_assert_uint_eq(receiver_count(rc), 1);
	ck_assert_pstr_eq(receiver_header(receiver_wait(rc, 0, 0), "X-Webhook-Id"), ev);
	receiver_stop(rc);
	free(ev);
	tenant_free(&t);
}
END_TEST

/* {"pad":"xxx…"} of exactly len bytes (malloc'ed). */
static char *
padded_body(size_t len)
{
	char *b = malloc(len + 1);

	ck_assert(len >= 10);
	memset(b, 'x', len);
	memcpy(b, "{\"pad\":\"", 8);
	memcpy(b + len - 2, "\"}", 2);
	b[len] = '\0';
	return b;
}

/* Event data is capped at 64 KiB: more is 413 and nothing is emitted or
 * forwarded (a ~1 MB body among them); 64 KiB itself passes. */
START_TEST(trigger_data_capped)
{
	static const size_t too_big[] = { ACTIVITY_TRIGGER_DATA_MAX + 1, 1000000 };
	struct harness_resp *r;
	struct tenant t;
	struct wh w;
	char *body, *ev;

	tenant_new(&dev_a, &t);
	wh_sandbox(&dev_a, t.client, "[\"*\"]", &w);
	for (size_t i = 0; i < N(too_big); i++) {
		body = padded_body(too_big[i]);
		r = trigger(t.key, "bill.created", body);
		harness_assert_coded(r, 413, "PAYLOAD_TOO_LARGE");
		harness_resp_free(r);
		free(body);
	}
	ck_assert_int_eq(events_of(t.client), 0);
	ck_assert_int_eq(deliveries_of(t.client), 0);
	body = padded_body(ACTIVITY_TRIGGER_DATA_MAX);
	ev = trigger_ok(t.key, "bill.created", body, NULL);
	ck_assert_int_eq(count_sql("SELECT length(data->'object'->>'pad') FROM events WHERE id = $1",
	    ev, NULL), ACTIVITY_TRIGGER_DATA_MAX - 10);
	free(body);
	free(ev);
	tenant_free(&t);
}
END_TEST

/*
 * A deleted subscription is an activity event written by events_emit: it
 * carries api_version and the request, shows in the feed, and queues no
 * delivery even to a "*" subscription that is left.
 */
START_TEST(webhook_deleted_is_an_event)
{
	struct harness_resp *r;
	struct tenant t;
	struct wh gone, left;
	char *ev;

	tenant_new(&dev_a, &t);
	wh_sandbox(&dev_a, t.client, "[\"*\"]", &gone);
	wh_sandbox(&dev_a, t.client, "[\"*\"]", &left);
	r = key_call(t.key, "DELETE", harness_fmt("/v1/webhook-endpoints/%s", gone.id), NULL, NULL);
	harness_expect(r, 200);
	harness_resp_free(r);
	ev = devacct_sql_value("SELECT id FROM events WHERE client_id = $1"
	    " AND type = 'webhook_endpoint.deleted' AND api_version = '" API_VERSION "'"
	    " AND request_id IS NOT NULL AND data->>'webhook_id' = $2", t.client, gone.id);
	ck_assert_ptr_nonnull(ev);
	ck_assert_int_eq(deliveries_of(t.client), 0);
	r = get_ok(t.key, harness_fmt("/v1/activity/%s", ev), 200);
	ck_assert_pstr_eq(devacct_str(r, "api_version"), API_VERSION);
	ck_assert_pstr_eq(devacct_str(r, "data.object.id"), gone.id);
	ck_assert_pstr_eq(devacct_str(r, "delivery.status"), "none");
	harness_resp_free(r);
	free(ev);
	tenant_free(&t);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Retention                                                           */

/* An event past the 30 days is served nowhere (its month's partition
 * stays until all of it is past them: check_e2e_partitions). */
START_TEST(retention_purges_after_30_days)
{
	const char *args[] = { "jobs", NULL };
	struct harness_resp *r;
	struct tenant t;
	struct wh a;
	char *old, *kept, *fresh, **ids;
	size_t n;
	int pages;

	tenant_new(&dev_a, &t);
	wh_sandbox(&dev_a, t.client, "[\"*\"]", &a);
	old = trigger_ok(t.key, "bill.created", NULL, NULL);
	kept = trigger_ok(t.key, "bill.created", NULL, NULL);
	fresh = trigger_ok(t.key, "bill.created", NULL, NULL);
	devacct_sql_exec("UPDATE events SET created_at = now() - interval '30 days 1 minute'"
	    " WHERE id = $1", old, NULL);
	devacct_sql_exec("UPDATE events SET created_at = now() - interval '29 days 23 hours'"
	    " WHERE id = $1", kept, NULL);
	ck_assert_int_eq(harness_bdsctl(args), 0);
	r = get_ok(t.key, harness_fmt("/v1/activity/%s", old), 404);
	harness_resp_free(r);
	r = get_ok(t.key, harness_fmt("/v1/activity/%s", kept), 200);
	harness_resp_free(r);
	ids = walk(t.key, "", 10, &n, &pages);
	ck_assert_int_eq(n, 2);
	ck_assert_str_eq(ids[0], fresh);
	ck_assert_str_eq(ids[1], kept);
	ids_free(ids, n);
	r = replay(t.key, harness_fmt("{\"event_id\":\"%s\"}", old), NULL);
	harness_expect(r, 404);
	harness_resp_free(r);
	free(old);
	free(kept);
	free(fresh);
	tenant_free(&t);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Through bds-deliver                                                 */

/* A triggered event reaches a receiver signed, and the feed shows it. */
START_TEST(trigger_delivered_and_shown)
{
	struct receiver *rc = receiver_start(NULL);
	const struct receiver_req *q;
	struct json_object *body;
	struct tenant t;
	struct wh w;
	struct harness_resp *r;
	char url[256], *ev;

	ck_assert_msg(rc != NULL, "receiver: %s", receiver_error());
	tenant_new(&dev_a, &t);
	wh_register(&dev_a, t.client, "sandbox", receiver_url(rc, "/events", url, sizeof(url)),
	    "[\"bill.created\"]", &w);
	ev = trigger_ok(t.key, "bill.created", "{\"id\":\"bill_d\",\"object\":\"bill\"}", NULL);
	ck_assert_int_eq(harness_deliver_once(), 0);
	q = receiver_wait(rc, 0, WAIT_MS);
	ck_assert_msg(q != NULL, "no delivery arrived");
	ck_assert_int_eq(receiver_verify(q, w.secret, time(NULL), 300), RECEIVER_SIG_OK);
	ck_assert_pstr_eq(receiver_header(q, "X-Webhook-Id"), ev);
	ck_assert_pstr_eq(receiver_header(q, "X-Webhook-Event-Type"), "bill.created");
	body = json_tokener_parse(q->body);
	ck_assert_ptr_nonnull(body);
	ck_assert_str_eq(json_object_get_string(json_object_object_get(body, "id")), ev);
	ck_assert_str_eq(json_object_get_string(json_object_object_get(body, "mode")), "sandbox");
	json_object_put(body);

	r = get_ok(t.key, harness_fmt("/v1/activity/%s", ev), 200);
	ck_assert_pstr_eq(devacct_str(r, "delivery.status"), "succeeded");
	ck_assert_int_eq(devacct_int(r, "deliveries.0.attempt_log.0.status_code"), 200);
	ck_assert_int_eq(devacct_int(r, "deliveries.0.attempt_log.0.attempt"), 1);
	harness_resp_free(r);
	receiver_stop(rc);
	free(ev);
	tenant_free(&t);
}
END_TEST

static Suite *
events_suite(void)
{
	Suite *s = suite_create("e2e_events");
	TCase *tc = tcase_create("events");

	tcase_add_unchecked_fixture(tc, stack_up, harness_fixture_stop);
	tcase_add_checked_fixture(tc, harness_fixture_recover, NULL);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, statements_prepare);
	tcase_add_test(tc, trigger_fans_out_to_matching);
	tcase_add_loop_test(tc, trigger_historic_name, 0, N(historic));
	tcase_add_loop_test(tc, trigger_unknown_type, 0, N(bad_types));
	tcase_add_test(tc, trigger_live_host_404);
	tcase_add_test(tc, trigger_bodies);
	tcase_add_test(tc, emit_follows_the_transaction);
	tcase_add_test(tc, list_pages_without_gaps);
	tcase_add_test(tc, list_item_shape);
	tcase_add_test(tc, list_filters);
	tcase_add_loop_test(tc, list_bad_query, 0, N(bad_queries));
	tcase_add_test(tc, list_cursor_tampered);
	tcase_add_test(tc, detail_with_attempt_log);
	tcase_add_test(tc, tenant_isolation);
	tcase_add_test(tc, replay_by_event);
	tcase_add_test(tc, replay_webhook_rules);
	tcase_add_test(tc, replay_by_window);
	tcase_add_loop_test(tc, replay_bad_input, 0, N(bad_replays));
	tcase_add_test(tc, replay_unknown_event);
	tcase_add_test(tc, replay_idempotency);
	tcase_add_test(tc, trigger_idempotency);
	tcase_add_test(tc, trigger_data_capped);
	tcase_add_test(tc, webhook_deleted_is_an_event);
	tcase_add_test(tc, retention_purges_after_30_days);
	tcase_add_test(tc, trigger_delivered_and_shown);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return harness_run_suite(events_suite());
}
