/*
 * The retrieval path end to end: sandbox account links (POST
 * /v1/sandbox/account-links) retrieved by the stack's bds-jobs through the
 * sandbox connector, the bills stored, the events emitted and delivered by
 * bds-deliver to a local receiver subscribed to "*". Every DOMAIN.md
 * fixture (user_good ... user_insights), the sandbox lifecycle routes
 * (reset-login, advance), the link entity's sync{} after a retrieval, and
 * a fault test: bds-jobs SIGKILLed in the middle of user_many's
 * retrieval, then started again: the job runs again once its lease is over
 * and leaves exactly 1,000 bills and one bill.created per bill.
 *
 * The stack delivers webhooks one at a time (webhook_concurrency = 1), so
 * the receiver sees them in the order bds-deliver claims them (creation
 * order): that is what "connection.ready after the bill.created events"
 * is checked against. The receiver keeps 256 requests, so user_many is
 * counted in the events table only.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <json-c/json.h>
#include <libpq-fe.h>

#include "devacct.h"
#include "harness.h"
#include "receiver.h"

#define N(x) (sizeof(x) / sizeof((x)[0]))
#define SANDBOX_BILLER "blr_01900000-0000-7000-8000-000000000001"
#define IDLE_MS 60000
#define WAIT_MS 10000

static struct devacct dev;

struct tenant {
	char	*client;
	char	*key;
};

static void
tenant_new(struct tenant *t)
{
	t->client = devacct_client_new(&dev);
	t->key = devacct_key_new(&dev, t->client, "sandbox");
}

static void
tenant_free(struct tenant *t)
{
	free(t->client);
	free(t->key);
}

static struct harness_resp *
sbx_call(const char *key, const char *method, const char *path, const char *body,
    const char *const extra[])
{
	return devacct_call(method, "sandbox", path, devacct_bearer(key), body, extra);
}

/* A sandbox account link for the fixture; its id (malloc'ed). */
static char *
sandbox_link(const struct tenant *t, const char *username)
{
	return devacct_sandbox_link(t->key, harness_fmt("u-%s", username), username);
}

static void
jobs_idle(void)
{
	ck_assert_msg(harness_jobs_wait_idle(IDLE_MS) == 0, "%s", harness_error());
}

/* POST /v1/sandbox/links/{id}/advance → 202, then the retrieval has run. */
static void
advance(const struct tenant *t, const char *id)
{
	struct harness_resp *r = sbx_call(t->key, "POST",
	    harness_fmt("/v1/sandbox/links/%s/advance", id), NULL, NULL);

	harness_expect(r, 202);
	ck_assert_pstr_eq(devacct_str(r, "status"), "queued");
	harness_resp_free(r);
	jobs_idle();
}

static struct harness_resp *
link_get(const struct tenant *t, const char *id)
{
	struct harness_resp *r = sbx_call(t->key, "GET", harness_fmt("/v1/links/%s", id), NULL,
	    NULL);

	harness_expect(r, 200);
	return r;
}

static long long
events_of(const struct tenant *t, const char *type)
{
	return devacct_sql_int("SELECT count(*) FROM events WHERE client_id = $1 AND type = $2",
	    t->client, type);
}

/* Events of the insights runs the bill writes queue (check_e2e_insights
 * counts them; here they are counted to be left aside). */
static size_t
insight_events(const struct tenant *t)
{
	return (size_t)devacct_sql_int("SELECT count(*) FROM events WHERE client_id = $1"
	    " AND type LIKE 'insight.%'", t->client, NULL);
}

static long long
bills_of(const char *link)
{
	return devacct_sql_int("SELECT count(*) FROM bills WHERE link_id = $1 AND"
	    " deleted_at IS NULL", link, NULL);
}

/* The newest bill of the link (by statement date), malloc'ed id. */
static char *
newest_bill(const char *link)
{
	return devacct_sql_value("SELECT id FROM bills WHERE link_id = $1"
	    " ORDER BY statement_date DESC LIMIT 1", link, NULL);
}

/* A webhook subscription of the tenant's sandbox to "*" at the receiver. */
static void
subscribe(const struct tenant *t, struct receiver *rc)
{
	const char *extra[] = { harness_idem_header(), NULL };
	char url[256];
	struct harness_resp *r;

	r = devacct_jwt(&dev, "POST", harness_fmt("/v1/iam/clients/%s/webhooks", t->client),
	    harness_fmt("{\"environment\":\"sandbox\",\"url\":\"%s\",\"events\":[\"*\"]}",
	    receiver_url(rc, "/hook", url, sizeof(url))), extra);
	harness_expect(r, 201);
	harness_resp_free(r);
}

/* bds-deliver until the receiver holds want requests; then no more come. */
static void
deliver_all(struct receiver *rc, size_t want)
{
	ck_assert_int_eq(harness_deliver_once(), 0);
	ck_assert_msg(want == 0 || receiver_wait(rc, want - 1, WAIT_MS) != NULL,
	    "receiver got %zu of %zu", receiver_count(rc), want);
	ck_assert_int_eq(harness_deliver_once(), 0);
	ck_assert_uint_eq(receiver_count(rc), want);
}

/* The i-th delivery's type and data.object member (a string, "" if none). */
static void
delivery(struct receiver *rc, size_t i, char *type, size_t tlen, const char *member,
    char *val, size_t vlen)
{
	const struct receiver_req *q = receiver_wait(rc, i, 0);
	struct json_object *b, *v, *d, *o;

	ck_assert_ptr_nonnull(q);
	b = json_tokener_parse(q->body);
	ck_assert_ptr_nonnull(b);
	ck_assert(json_object_object_get_ex(b, "type", &v));
	snprintf(type, tlen, "%s", json_object_get_string(v));
	val[0] = '\0';
	if (member != NULL && json_object_object_get_ex(b, "data", &d) &&
	    json_object_object_get_ex(d, "object", &o) &&
	    json_object_object_get_ex(o, member, &v) && v != NULL)
		snprintf(val, vlen, "%s", json_object_get_string(v));
	json_object_put(b);
}

/* seed(u) of the sandbox connector: the sum of u's bytes mod 1000. */
static long long
seed(const char *u)
{
	long long s = 0;

	for (; *u; u++)
		s += (unsigned char)*u;
	return s % 1000;
}

/* The total of statement i of account k (sandbox.c's formula), cents. */
static long long
sbx_total(const char *u, int i, int k)
{
	long long e = 500 + (seed(u) + 37 * i + 11 * k) % 100, energy = 15 * e;

	return energy + 1200 + (energy + 1200) * 5 / 100;
}

/* ------------------------------------------------------------------ */

static void
stack_up(void)
{
	struct harness_opts o;

	harness_opts_defaults(&o);
	/* one delivery at a time: the receiver sees creation order */
	/* and the sandbox's dates as its header documents them for that day */
	o.extra_config = "webhook_concurrency = 1\n" "sandbox_basis_day = 2026-10-15\n";
	harness_fixture_start(&o);
	devacct_legal();
	devacct_new(&dev, "sbxl");
}

/*
 * user_good: 12 bills (newest PENDING with the formula's total, the rest
 * PAID), 12 bill.created (and 11 bill.updated paid: created PAID), then
 * connection.ready {bill_count 12, first_sync_completed_at} last, at the
 * receiver too; never link.completed; the entity's sync{} after it.
 */
START_TEST(good_events_and_sync)
{
	struct receiver *rc = receiver_start(NULL);
	struct harness_resp *r;
	struct tenant t;
	char type[64], val[256], *id, *v;
	size_t n, created = 0, ready = SIZE_MAX, all;

	ck_assert_msg(rc != NULL, "receiver: %s", receiver_error());
	tenant_new(&t);
	subscribe(&t, rc);
	id = sandbox_link(&t, "user_good");
	jobs_idle();

	ck_assert_int_eq(bills_of(id), 12);
	ck_assert_int_eq(events_of(&t, "bill.created"), 12);
	ck_assert_int_eq(events_of(&t, "bill.updated"), 11);
	ck_assert_int_eq(events_of(&t, "connection.ready"), 1);
	ck_assert_int_eq(events_of(&t, "link.completed"), 0);
	/* the 11 observed payments of the paid statements */
	ck_assert_int_eq(events_of(&t, "payment.observed"), 11);
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM bills WHERE link_id = $1 AND"
	    " status = 'PAID'", id, NULL), 11);
	v = newest_bill(id);
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM bills WHERE id = $1 AND"
	    " status = 'PENDING' AND statement_date = '2026-10-01' AND due_date = '2026-10-21'"
	    " AND total_minor = $2::bigint AND amount_due_minor = total_minor", v,
	    harness_fmt("%lld", sbx_total("user_good", 0, 0))), 1);
	free(v);
	/* one bill.created per bill, and connection.ready the link's last event */
	ck_assert_int_eq(devacct_sql_int("SELECT count(DISTINCT e.data->'object'->>'id')"
	    " FROM events e JOIN bills b ON b.id = e.data->'object'->>'id'"
	    " WHERE e.client_id = $1 AND e.type = 'bill.created' AND b.link_id = $2",
	    t.client, id), 12);
	v = devacct_sql_value("SELECT type FROM events WHERE client_id = $1"
	    " AND type NOT LIKE 'insight.%' ORDER BY id DESC LIMIT 1", t.client, NULL);
	ck_assert_pstr_eq(v, "connection.ready");
	free(v);
	v = devacct_sql_value("SELECT data->'object'->>'bill_count' || ' ' ||"
	    " (data->'object'->>'link_id') FROM events WHERE client_id = $1"
	    " AND type = 'connection.ready'", t.client, NULL);
	ck_assert_pstr_eq(v, harness_fmt("12 %s", id));
	free(v);

	/* created order (event ids are uuidv7, monotonic in one bds-jobs
	 * process): the bill.created oldest statement first, then
	 * connection.ready after every one of them */
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM (SELECT e.type, b.statement_date,"
	    "  lag(b.statement_date) OVER (ORDER BY e.id) AS prev FROM events e"
	    "  JOIN bills b ON b.id = e.data->'object'->>'id'"
	    "  WHERE e.client_id = $1 AND e.type = 'bill.created') x"
	    " WHERE prev IS NOT NULL AND prev >= statement_date", t.client, NULL), 0);
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM events WHERE client_id = $1 AND"
	    " type = 'bill.created' AND id > (SELECT id FROM events WHERE client_id = $1 AND"
	    " type = 'connection.ready')", t.client, NULL), 0);

	/* at the receiver: every event exactly once, never link.completed (arrival
	 * order is bds-deliver's: by delivery id, random within a millisecond) */
	all = 35 + insight_events(&t);
	deliver_all(rc, all);
	for (n = 0; n < all; n++) {
		const char *ev = receiver_header(receiver_wait(rc, n, 0), "X-Webhook-Id");

		delivery(rc, n, type, sizeof(type), NULL, val, sizeof(val));
		if (strcmp(type, "bill.created") == 0)
			created++;
		ck_assert_str_ne(type, "link.completed");
		ck_assert_ptr_nonnull(ev);
		ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM events WHERE client_id = $1"
		    " AND id = $2", t.client, ev), 1);
		for (size_t m = 0; m < n; m++)
			ck_assert_str_ne(receiver_header(receiver_wait(rc, m, 0), "X-Webhook-Id"), ev);
		if (strcmp(type, "connection.ready") == 0)
			ready = n;
	}
	ck_assert_uint_eq(created, 12);
	ck_assert_uint_lt(ready, all);
	delivery(rc, ready, type, sizeof(type), "bill_count", val, sizeof(val));
	ck_assert_str_eq(val, "12");
	delivery(rc, ready, type, sizeof(type), "first_sync_completed_at", val, sizeof(val));
	ck_assert_uint_gt(strlen(val), 0);

	/* the entity's sync{} */
	r = link_get(&t, id);
	ck_assert_pstr_eq(devacct_str(r, "status"), "ACTIVE");
	ck_assert_pstr_eq(devacct_str(r, "sync.status"), "ok");
	ck_assert_int_eq(devacct_int(r, "sync.bill_count"), 12);
	ck_assert_pstr_eq(devacct_str(r, "sync.first_sync_completed_at"), val);
	ck_assert_ptr_nonnull(devacct_str(r, "sync.last_attempt_at"));
	ck_assert_ptr_nonnull(devacct_str(r, "sync.last_success_at"));
	/* the refresh interval (24 h) ± the jitter (20 %) */
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) WHERE $1::timestamptz - now()"
	    " BETWEEN interval '19 hours 7 minutes' AND interval '28 hours 48 minutes'",
	    devacct_str(r, "sync.next_at"), NULL), 1);
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) WHERE $1::timestamptz"
	    " BETWEEN now() - interval '5 minutes' AND now()",
	    devacct_str(r, "sync.last_success_at"), NULL), 1);
	ck_assert_uint_eq(json_object_array_length(devacct_json(r, "accounts")), 1);
	ck_assert_ptr_nonnull(devacct_str(r, "accounts.0.id"));
	harness_resp_free(r);
	receiver_stop(rc);
	free(id);
	tenant_free(&t);
}
END_TEST

/*
 * The events of the retrieval a request queued name that request (SPEC.md
 * "Envelope": request.id, request.idempotency_key): the POST that made the
 * link, then the advance, each with its own X-Request-Id and key.
 */
START_TEST(events_name_request)
{
	const char *extra[] = { "Idempotency-Key: origin-key-1", NULL };
	struct harness_resp *r;
	struct tenant t;
	char *id, *rid, *adv;

	tenant_new(&t);
	r = sbx_call(t.key, "POST", "/v1/sandbox/account-links",
	    "{\"client_user_id\":\"u-origin\",\"username\":\"user_paid\"}", extra);
	harness_expect(r, 201);
	id = strdup(devacct_str(r, "link_id"));
	rid = strdup(harness_header(r, "X-Request-Id"));
	harness_resp_free(r);
	jobs_idle();
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM events WHERE client_id = $1"
	    " AND type = 'bill.created' AND request_id = $2", t.client, rid), 12);
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM events WHERE client_id = $1"
	    " AND (request_id IS DISTINCT FROM $2 OR idempotency_key IS DISTINCT FROM"
	    " 'origin-key-1')", t.client, rid), 0);
	ck_assert_uint_eq(strspn(rid, "0123456789abcdef"), strlen(rid));	/* nginx's */

	r = sbx_call(t.key, "POST", harness_fmt("/v1/sandbox/links/%s/advance", id), NULL, NULL);
	harness_expect(r, 202);
	adv = strdup(harness_header(r, "X-Request-Id"));
	harness_resp_free(r);
	jobs_idle();
	ck_assert_str_ne(adv, rid);
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM events WHERE client_id = $1"
	    " AND type = 'bill.updated' AND data->'object'->>'change' = 'paid'"
	    " AND request_id = $2 AND idempotency_key IS NULL", t.client, adv), 1);
	/* every event names one of the two requests */
	ck_assert_int_eq(devacct_sql_int(harness_fmt("SELECT count(*) FROM events"
	    " WHERE client_id = $1 AND request_id IS DISTINCT FROM $2"
	    " AND request_id IS DISTINCT FROM '%s'", rid), t.client, adv), 0);
	free(adv);
	free(rid);
	free(id);
	tenant_free(&t);
}
END_TEST

/* user_empty: connection.ready with bill_count 0, no bill.created. */
START_TEST(empty_ready_zero)
{
	struct receiver *rc = receiver_start(NULL);
	struct harness_resp *r;
	struct tenant t;
	char type[64], val[64], *id;

	ck_assert_msg(rc != NULL, "receiver: %s", receiver_error());
	tenant_new(&t);
	subscribe(&t, rc);
	id = sandbox_link(&t, "user_empty");
	jobs_idle();
	ck_assert_int_eq(bills_of(id), 0);
	ck_assert_int_eq(events_of(&t, "bill.created"), 0);
	ck_assert_int_eq(events_of(&t, "connection.ready"), 1);
	/* a sandbox biller takes no session slot: its job names none */
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM jobs WHERE kind = 'retrieval'"
	    " AND subject_id = $1 AND slot_key IS NULL", id, NULL), 1);
	deliver_all(rc, 1);
	delivery(rc, 0, type, sizeof(type), "bill_count", val, sizeof(val));
	ck_assert_str_eq(type, "connection.ready");
	ck_assert_str_eq(val, "0");
	r = link_get(&t, id);
	ck_assert_int_eq(devacct_int(r, "sync.bill_count"), 0);
	ck_assert_pstr_eq(devacct_str(r, "sync.status"), "ok");
	ck_assert_ptr_nonnull(devacct_str(r, "sync.first_sync_completed_at"));
	harness_resp_free(r);
	receiver_stop(rc);
	free(id);
	tenant_free(&t);
}
END_TEST

/* user_multi: 3 accounts on the entity, 12 bills on each. */
START_TEST(multi_accounts)
{
	struct harness_resp *r;
	struct tenant t;
	char *id;

	tenant_new(&t);
	id = sandbox_link(&t, "user_multi");
	jobs_idle();
	r = link_get(&t, id);
	ck_assert_uint_eq(json_object_array_length(devacct_json(r, "accounts")), 3);
	ck_assert_int_eq(devacct_int(r, "sync.bill_count"), 36);
	harness_resp_free(r);
	ck_assert_int_eq(bills_of(id), 36);
	ck_assert_int_eq(devacct_sql_int("SELECT count(DISTINCT account_id) FROM bills"
	    " WHERE link_id = $1", id, NULL), 3);
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM (SELECT account_id FROM bills"
	    " WHERE link_id = $1 GROUP BY account_id HAVING count(*) = 12) x", id, NULL), 3);
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM bills b JOIN link_accounts a"
	    " ON a.id = b.account_id AND a.link_id = b.link_id WHERE b.link_id = $1", id, NULL),
	    36);
	ck_assert_int_eq(events_of(&t, "bill.created"), 36);
	ck_assert_int_eq(events_of(&t, "connection.ready"), 1);
	free(id);
	tenant_free(&t);
}
END_TEST

/* user_many: 1,000 bills, bill_count 1000 (counted in the events table). */
START_TEST(many_thousand)
{
	struct harness_resp *r;
	struct tenant t;
	char *id, *v;

	tenant_new(&t);
	id = sandbox_link(&t, "user_many");
	jobs_idle();
	ck_assert_int_eq(bills_of(id), 1000);
	ck_assert_int_eq(events_of(&t, "bill.created"), 1000);
	ck_assert_int_eq(events_of(&t, "connection.ready"), 1);
	v = devacct_sql_value("SELECT data->'object'->>'bill_count' FROM events WHERE"
	    " client_id = $1 AND type = 'connection.ready'", t.client, NULL);
	ck_assert_pstr_eq(v, "1000");
	free(v);
	r = link_get(&t, id);
	ck_assert_int_eq(devacct_int(r, "sync.bill_count"), 1000);
	harness_resp_free(r);
	free(id);
	tenant_free(&t);
}
END_TEST

/* user_mfa: the sandbox remembers the device, so the link retrieves. */
START_TEST(mfa_retrieves)
{
	struct harness_resp *r;
	struct tenant t;
	char *id;

	tenant_new(&t);
	id = sandbox_link(&t, "user_mfa");
	jobs_idle();
	ck_assert_int_eq(bills_of(id), 12);
	ck_assert_int_eq(events_of(&t, "connection.ready"), 1);
	ck_assert_int_eq(events_of(&t, "link.disconnected"), 0);
	r = link_get(&t, id);
	ck_assert_pstr_eq(devacct_str(r, "status"), "ACTIVE");
	harness_resp_free(r);
	free(id);
	tenant_free(&t);
}
END_TEST

/* Fixtures that fail at the first retrieval: one link.disconnected. */
static const struct {
	const char *user, *reason, *rejection;
} first_fail[] = {
	{ "user_locked", "credentials_rejected", "INVALID_CREDENTIALS" },
	{ "user_degraded", "credentials_rejected", "CONNECTION_DEGRADED" },
};

static void
assert_disconnected(const struct tenant *t, const char *id, const char *reason,
    const char *rejection)
{
	struct harness_resp *r = link_get(t, id);
	char *v;

	ck_assert_pstr_eq(devacct_str(r, "status"), "DISCONNECTED");
	ck_assert_pstr_eq(devacct_str(r, "disconnect_reason"), reason);
	if (rejection != NULL)
		ck_assert_pstr_eq(devacct_str(r, "credential_rejection_reason"), rejection);
	else {	/* present and null */
		ck_assert_ptr_null(devacct_str(r, "credential_rejection_reason"));
		ck_assert_ptr_nonnull(strstr(r->body, "\"credential_rejection_reason\""));
	}
	harness_resp_free(r);
	ck_assert_int_eq(events_of(t, "link.disconnected"), 1);
	v = devacct_sql_value("SELECT (data->'object'->>'reason') || ' ' ||"
	    " coalesce(data->'object'->>'credential_rejection_reason', '-') || ' ' ||"
	    " (data->'object'->>'id') FROM events WHERE client_id = $1 AND"
	    " type = 'link.disconnected'", t->client, NULL);
	ck_assert_pstr_eq(v, harness_fmt("%s %s %s", reason, rejection ? rejection : "-", id));
	free(v);
}

START_TEST(first_retrieval_disconnects)
{
	struct receiver *rc = receiver_start(NULL);
	struct tenant t;
	char type[64], val[64], *id;

	ck_assert_msg(rc != NULL, "receiver: %s", receiver_error());
	tenant_new(&t);
	subscribe(&t, rc);
	id = sandbox_link(&t, first_fail[_i].user);
	jobs_idle();
	assert_disconnected(&t, id, first_fail[_i].reason, first_fail[_i].rejection);
	ck_assert_int_eq(bills_of(id), 0);
	ck_assert_int_eq(events_of(&t, "connection.ready"), 0);
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM jobs WHERE subject_id = $1"
	    " AND status = 'done'", id, NULL), 1);
	deliver_all(rc, 1);
	delivery(rc, 0, type, sizeof(type), "reason", val, sizeof(val));
	ck_assert_str_eq(type, "link.disconnected");
	ck_assert_str_eq(val, first_fail[_i].reason);
	receiver_stop(rc);
	free(id);
	tenant_free(&t);
}
END_TEST

/* Fixtures that fail at the next refresh (advance): one link.disconnected. */
static const struct {
	const char *user, *reason, *rejection;
} later_fail[] = {
	{ "user_expiring", "expired", NULL },
	{ "user_rejects_later", "credentials_rejected", "INVALID_CREDENTIALS" },
};

START_TEST(advance_disconnects_once)
{
	struct harness_resp *r;
	struct tenant t;
	char *id;

	tenant_new(&t);
	id = sandbox_link(&t, later_fail[_i].user);
	jobs_idle();
	ck_assert_int_eq(bills_of(id), 12);
	ck_assert_int_eq(events_of(&t, "connection.ready"), 1);
	ck_assert_int_eq(events_of(&t, "link.disconnected"), 0);
	advance(&t, id);
	assert_disconnected(&t, id, later_fail[_i].reason, later_fail[_i].rejection);
	/* not again: advance is 409 now, and nothing more is emitted */
	r = sbx_call(t.key, "POST", harness_fmt("/v1/sandbox/links/%s/advance", id), NULL, NULL);
	harness_assert_coded(r, 409, "LINK_DISCONNECTED");
	harness_resp_free(r);
	jobs_idle();
	ck_assert_int_eq(events_of(&t, "link.disconnected"), 1);
	ck_assert_int_eq(events_of(&t, "connection.ready"), 1);
	ck_assert_int_eq(bills_of(id), 12);
	free(id);
	tenant_free(&t);
}
END_TEST

/* user_paid / user_partial: advance → the newest bill moves, one
 * bill.updated (user_partial: and the partial payment's payment.observed). */
static const struct {
	const char *user, *status, *change;
	size_t more;
} paid_moves[] = {
	{ "user_paid", "PAID", "paid", 1 },
	{ "user_partial", "PARTIALLY_PAID", "partially_paid", 2 },
};

START_TEST(advance_pays_newest)
{
	struct receiver *rc = receiver_start(NULL);
	struct tenant t;
	char type[64], val[128], *id, *bill, *v;
	size_t seen = 0, before;

	ck_assert_msg(rc != NULL, "receiver: %s", receiver_error());
	tenant_new(&t);
	subscribe(&t, rc);
	id = sandbox_link(&t, paid_moves[_i].user);
	jobs_idle();
	bill = newest_bill(id);
	ck_assert_ptr_nonnull(bill);
	v = devacct_sql_value("SELECT status FROM bills WHERE id = $1", bill, NULL);
	ck_assert_pstr_eq(v, "PENDING");
	free(v);
	before = 35 + insight_events(&t);
	deliver_all(rc, before);
	advance(&t, id);
	v = devacct_sql_value("SELECT status FROM bills WHERE id = $1", bill, NULL);
	ck_assert_pstr_eq(v, paid_moves[_i].status);
	free(v);
	ck_assert_int_eq(bills_of(id), 12);
	ck_assert_int_eq(events_of(&t, "bill.created"), 12);
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM events WHERE client_id = $1 AND"
	    " type = 'bill.updated' AND data->'object'->>'id' = $2", t.client, bill), 1);
	v = devacct_sql_value("SELECT (data->'object'->>'change') || ' ' ||"
	    " (data->'object'->>'status') FROM events WHERE client_id = $1 AND"
	    " type = 'bill.updated' AND data->'object'->>'id' = $2", t.client, bill);
	ck_assert_pstr_eq(v, harness_fmt("%s %s", paid_moves[_i].change, paid_moves[_i].status));
	free(v);
	/* the statement's amount due stays; what is still owed moves */
	if (strcmp(paid_moves[_i].status, "PARTIALLY_PAID") == 0)
		ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM bills WHERE id = $1 AND"
		    " amount_due_minor = total_minor AND"
		    " balance_minor = total_minor - total_minor / 2", bill, NULL), 1);
	else
		ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM bills WHERE id = $1 AND"
		    " amount_due_minor = total_minor AND balance_minor = 0 AND"
		    " paid_at IS NOT NULL", bill, NULL), 1);
	/* the receiver: that bill.updated, then (user_partial) payment.observed */
	deliver_all(rc, 35 + insight_events(&t) + paid_moves[_i].more);
	delivery(rc, before, type, sizeof(type), "change", val, sizeof(val));
	ck_assert_str_eq(type, "bill.updated");
	ck_assert_str_eq(val, paid_moves[_i].change);
	delivery(rc, before, type, sizeof(type), "id", val, sizeof(val));
	ck_assert_str_eq(val, bill);
	if (paid_moves[_i].more == 2) {
		delivery(rc, before + 1, type, sizeof(type), "bill_id", val, sizeof(val));
		ck_assert_str_eq(type, "payment.observed");
		ck_assert_str_eq(val, bill);
	}
	(void)seen;
	receiver_stop(rc);
	free(bill);
	free(id);
	tenant_free(&t);
}
END_TEST

/*
 * user_reverted: advance once → the newest (September) bill PAID; twice →
 * an October statement appears (PENDING, previous_balance September's
 * total, no payments received, amount_due its own charges plus that) and
 * September is PENDING
 * again (next_statement_shows_balance), as sandbox.c documents.
 */
START_TEST(reverted_twice)
{
	struct tenant t;
	char *id, *sept, *v;
	long long total0 = sbx_total("user_reverted", 0, 0);

	tenant_new(&t);
	id = sandbox_link(&t, "user_reverted");
	jobs_idle();
	sept = newest_bill(id);
	advance(&t, id);
	v = devacct_sql_value("SELECT status FROM bills WHERE id = $1", sept, NULL);
	ck_assert_pstr_eq(v, "PAID");
	free(v);
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM events WHERE client_id = $1 AND"
	    " type = 'bill.updated' AND data->'object'->>'id' = $2 AND"
	    " data->'object'->>'change' = 'paid'", t.client, sept), 1);
	advance(&t, id);
	ck_assert_int_eq(bills_of(id), 13);
	ck_assert_int_eq(events_of(&t, "bill.created"), 13);
	v = devacct_sql_value("SELECT status FROM bills WHERE id = $1", sept, NULL);
	ck_assert_pstr_eq(v, "PENDING");
	free(v);
	v = newest_bill(id);
	ck_assert_str_ne(v, sept);
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM bills WHERE id = $1 AND"
	    " status = 'PENDING' AND period_start = '2026-10-01' AND"
	    " previous_balance_minor = $2::bigint AND payments_received_minor = 0 AND"
	    " amount_due_minor = current_charges_minor + $2::bigint AND"
	    " total_minor = amount_due_minor", v, harness_fmt("%lld", total0)), 1);
	free(v);
	ck_assert_int_eq(devacct_sql_int("SELECT refresh_count FROM links WHERE id = $1", id,
	    NULL), 3);
	free(sept);
	free(id);
	tenant_free(&t);
}
END_TEST

/* user_insights: 12 bills, the newest with a duplicate charge and a new fee. */
START_TEST(insights_stored)
{
	struct tenant t;
	char *id, *bill;

	tenant_new(&t);
	id = sandbox_link(&t, "user_insights");
	jobs_idle();
	ck_assert_int_eq(bills_of(id), 12);
	bill = newest_bill(id);
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM bills b,"
	    " jsonb_array_elements(b.line_items) li WHERE b.id = $1 AND"
	    " li->>'description' = 'Energy charge'", bill, NULL), 2);
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM bills b,"
	    " jsonb_array_elements(b.line_items) li WHERE b.link_id = $1 AND"
	    " li->>'description' = 'Late payment fee'", id, NULL), 1);
	ck_assert_int_eq(events_of(&t, "connection.ready"), 1);
	free(bill);
	free(id);
	tenant_free(&t);
}
END_TEST

/* reset-login after the first retrieval: DISCONNECTED, one link.disconnected. */
START_TEST(reset_login_after_retrieval)
{
	struct harness_resp *r;
	struct tenant t;
	char *id;

	tenant_new(&t);
	id = sandbox_link(&t, "user_good");
	jobs_idle();
	for (int i = 0; i < 2; i++) {
		r = sbx_call(t.key, "POST", harness_fmt("/v1/sandbox/links/%s/reset-login", id),
		    NULL, NULL);
		harness_expect(r, 200);
		ck_assert_pstr_eq(devacct_str(r, "status"), "DISCONNECTED");
		harness_resp_free(r);
	}
	assert_disconnected(&t, id, "credentials_rejected", "INVALID_CREDENTIALS");
	ck_assert_int_eq(bills_of(id), 12);
	free(id);
	tenant_free(&t);
}
END_TEST

/*
 * The fault test: bds-jobs SIGKILLed in the middle of user_many's
 * retrieval. To kill it provably mid-run (not before, not after), the test
 * holds an uncommitted bill row with the statement ref of the 500th
 * statement the job stores (1985-01, oldest first): the job's insert of
 * that ref waits on the unique index with 499 bills and their events
 * written but not committed. Then bds-jobs is killed (supervisor and
 * workers), the test's row rolled back: nothing of the run is left, the
 * job stays 'running' under its 120 s lease. Instead of waiting two
 * minutes the test ages lease_until (SQL, the same state an expired lease
 * is), starts bds-jobs again, and the job is claimed a second time: in the
 * end exactly 1,000 bills, one bill.created per bill id, one
 * connection.ready, and the job done after 2 attempts.
 */
START_TEST(kill_mid_retrieval)
{
	struct tenant t;
	PGconn *hold;
	PGresult *res;
	char *id, *job, *v;
	const char *p[2];
	long long end;

	tenant_new(&t);
	/* the blocking row first: same link? it does not exist yet, so make the
	 * link with bds-jobs stopped, then block, then start it */
	ck_assert_int_eq(harness_jobs_stop(), 0);
	id = sandbox_link(&t, "user_many");
	job = devacct_sql_value("SELECT id FROM jobs WHERE subject_id = $1", id, NULL);
	ck_assert_ptr_nonnull(job);
	hold = PQconnectdb(harness_database_url());
	ck_assert_int_eq(PQstatus(hold), CONNECTION_OK);
	PQclear(PQexec(hold, "BEGIN"));
	p[0] = t.client;
	p[1] = id;
	res = PQexecParams(hold, "INSERT INTO bills (client_id, id, environment, link_id,"
	    " client_user_id, biller_id, statement_ref, status, currency, total_minor,"
	    " amount_due_minor, created_seq, changed_seq) VALUES ($1, 'bill_hold', 'sandbox', $2,"
	    " 'u-user_many', '" SANDBOX_BILLER "', 'sbx-user_many-1-1985-01', 'PAID', 'USD', 0,"
	    " 0, 0, 0)", 2, NULL, p, NULL, NULL, 0);
	ck_assert_msg(PQresultStatus(res) == PGRES_COMMAND_OK, "%s", PQerrorMessage(hold));
	PQclear(res);
	ck_assert_int_eq(harness_jobs_start(), 0);
	/* the job running and its insert waiting on our row */
	end = harness_now_ms() + 60000;
	while (devacct_sql_int("SELECT count(*) FROM pg_stat_activity WHERE"
	    " wait_event_type = 'Lock' AND query LIKE '%INSERT INTO bills%'", NULL, NULL) == 0) {
		ck_assert_msg(harness_now_ms() < end, "the retrieval never reached 1985-01");
		harness_sleep_ms(20);
	}
	v = devacct_sql_value("SELECT status FROM jobs WHERE id = $1", job, NULL);
	ck_assert_pstr_eq(v, "running");
	free(v);
	ck_assert_int_eq(harness_jobs_kill(), 0);
	PQclear(PQexec(hold, "ROLLBACK"));
	PQfinish(hold);
	/* nothing of the killed run is left; the job waits for its lease */
	end = harness_now_ms() + 30000;
	while (devacct_sql_int("SELECT count(*) FROM pg_stat_activity WHERE"
	    " query LIKE '%INSERT INTO bills%' AND pid <> pg_backend_pid()", NULL, NULL) > 0) {
		ck_assert_msg(harness_now_ms() < end, "the killed run's backend lingers");
		harness_sleep_ms(20);
	}
	ck_assert_int_eq(bills_of(id), 0);
	ck_assert_int_eq(events_of(&t, "bill.created"), 0);
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM jobs WHERE id = $1 AND"
	    " status = 'running' AND attempts = 1 AND lease_until > now() + interval '60 seconds'",
	    job, NULL), 1);
	/* the lease over (aged, not waited for), a new bds-jobs takes it again */
	devacct_sql_exec("UPDATE jobs SET lease_until = now() - interval '1 second'"
	    " WHERE id = $1", job, NULL);
	ck_assert_int_eq(harness_jobs_start(), 0);
	jobs_idle();
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM jobs WHERE id = $1 AND"
	    " status = 'done' AND attempts = 2", job, NULL), 1);
	ck_assert_int_eq(bills_of(id), 1000);
	ck_assert_int_eq(events_of(&t, "bill.created"), 1000);
	ck_assert_int_eq(devacct_sql_int("SELECT count(DISTINCT e.data->'object'->>'id')"
	    " FROM events e JOIN bills b ON b.id = e.data->'object'->>'id'"
	    " WHERE e.client_id = $1 AND e.type = 'bill.created' AND b.link_id = $2",
	    t.client, id), 1000);
	ck_assert_int_eq(events_of(&t, "connection.ready"), 1);
	ck_assert_int_eq(devacct_sql_int("SELECT max(created_seq) FROM bills WHERE link_id = $1",
	    id, NULL), 1000);
	free(job);
	free(id);
	tenant_free(&t);
}
END_TEST

/*
 * The money of every bill of every fixture that has bills, at the refreshes
 * that move them (docs/DECISIONS.md "A bill's money"): the identity on each
 * stored entity, then one bill read over HTTP (bill_id, the figures, its
 * statement_url answering the signed URL).
 */
static const struct {
	const char *user;
	int advances;
	long long bills;
} money_cases[] = {
	{ "user_good", 0, 12 }, { "user_mfa", 0, 12 }, { "user_multi", 0, 36 },
	{ "user_many", 0, 1000 }, { "user_expiring", 0, 12 }, { "user_rejects_later", 0, 12 },
	{ "user_paid", 1, 12 }, { "user_partial", 1, 12 }, { "user_reverted", 1, 12 },
	{ "user_reverted", 2, 13 }, { "user_insights", 0, 12 }, { "user_empty", 0, 0 },
};

/* a Money member's value as minor units (USD: two decimals) */
static long long
cents(const struct harness_resp *r, const char *member)
{
	const char *v = devacct_str(r, member);
	long long whole, frac;

	ck_assert_msg(v != NULL && sscanf(v, "%lld.%2lld", &whole, &frac) == 2, "%s: %s", member,
	    v != NULL ? v : "null");
	return v[0] == '-' ? whole * 100 - frac : whole * 100 + frac;
}

START_TEST(money_reconciles)
{
	struct tenant t;
	struct harness_resp *r;
	char *id, *bill;
	int i;

	tenant_new(&t);
	id = sandbox_link(&t, money_cases[_i].user);
	jobs_idle();
	for (i = 0; i < money_cases[_i].advances; i++)
		advance(&t, id);
	ck_assert_int_eq(bills_of(id), money_cases[_i].bills);
	ck_assert_int_eq(devacct_bills_unreconciled(id), 0);
	if (money_cases[_i].bills == 0)
		goto done;
	bill = newest_bill(id);
	r = sbx_call(t.key, "GET", harness_fmt("/v1/bills/%s", bill), NULL, NULL);
	harness_expect(r, 200);
	ck_assert_pstr_eq(devacct_str(r, "bill_id"), bill);
	ck_assert_int_eq(cents(r, "previous_balance.value") - cents(r, "payments_received.value") +
	    cents(r, "current_charges.value"), cents(r, "amount_due.value"));
	ck_assert_pstr_eq(devacct_str(r, "statement_url"),
	    harness_fmt("/v1/bills/%s/statement", bill));
	harness_resp_free(r);
	r = sbx_call(t.key, "GET", harness_fmt("/v1/bills/%s/statement", bill), NULL, NULL);
	harness_expect(r, 200);
	ck_assert_ptr_nonnull(devacct_str(r, "url"));
	harness_resp_free(r);
	free(bill);
done:
	free(id);
	tenant_free(&t);
}
END_TEST

/*
 * The same fixture login linked again by the same end user while its link
 * is ACTIVE: 200, that link, duplicate true, no second retrieval or bills;
 * another end user, or after the first is revoked: a new link (201).
 */
static struct harness_resp *
link_again(const struct tenant *t, const char *user, const char *username, long want)
{
	const char *extra[] = { harness_idem_header(), NULL };
	struct harness_resp *r = sbx_call(t->key, "POST", "/v1/sandbox/account-links",
	    harness_fmt("{\"client_user_id\":\"%s\",\"username\":\"%s\"}", user, username),
	    extra);

	harness_expect(r, want);
	ck_assert_int_eq(devacct_bool(r, "duplicate"), want == 200);
	return r;
}

START_TEST(same_account_twice)
{
	struct tenant t;
	struct harness_resp *r;
	char *id;

	tenant_new(&t);
	id = sandbox_link(&t, "user_good");
	jobs_idle();
	r = link_again(&t, "u-user_good", "user_good", 200);
	ck_assert_pstr_eq(devacct_str(r, "link_id"), id);
	ck_assert_pstr_eq(devacct_str(r, "link.status"), "ACTIVE");
	ck_assert_int_eq(strncmp(devacct_str(r, "access_token"), "bds_lat_", 8), 0);
	harness_resp_free(r);
	jobs_idle();
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM links WHERE client_id = $1",
	    t.client, NULL), 1);
	ck_assert_int_eq(bills_of(id), 12);
	ck_assert_int_eq(events_of(&t, "bill.created"), 12);
	ck_assert_int_eq(events_of(&t, "connection.ready"), 1);
	/* another fixture, or another end user: new links */
	r = link_again(&t, "u-user_good", "user_paid", 201);
	ck_assert_pstr_ne(devacct_str(r, "link_id"), id);
	harness_resp_free(r);
	r = link_again(&t, "u-other", "user_good", 201);
	ck_assert_pstr_ne(devacct_str(r, "link_id"), id);
	harness_resp_free(r);
	/* revoked: the login may be linked again */
	r = sbx_call(t.key, "DELETE", harness_fmt("/v1/links/%s", id), NULL, NULL);
	ck_assert_msg(r->status == 200 || r->status == 204, "revoke: %ld", r->status);
	harness_resp_free(r);
	r = link_again(&t, "u-user_good", "user_good", 201);
	ck_assert_pstr_ne(devacct_str(r, "link_id"), id);
	harness_resp_free(r);
	jobs_idle();
	free(id);
	tenant_free(&t);
}
END_TEST

static Suite *
sandbox_links_suite(void)
{
	Suite *s = suite_create("e2e_sandbox_links");
	TCase *tc = tcase_create("sandbox_links");

	tcase_add_unchecked_fixture(tc, stack_up, harness_fixture_stop);
	tcase_add_checked_fixture(tc, harness_fixture_recover, NULL);
	tcase_set_timeout(tc, 180);
	tcase_add_test(tc, good_events_and_sync);
	tcase_add_test(tc, events_name_request);
	tcase_add_test(tc, empty_ready_zero);
	tcase_add_test(tc, multi_accounts);
	tcase_add_test(tc, many_thousand);
	tcase_add_test(tc, mfa_retrieves);
	tcase_add_loop_test(tc, first_retrieval_disconnects, 0, N(first_fail));
	tcase_add_loop_test(tc, advance_disconnects_once, 0, N(later_fail));
	tcase_add_loop_test(tc, advance_pays_newest, 0, N(paid_moves));
	tcase_add_test(tc, reverted_twice);
	tcase_add_test(tc, insights_stored);
	tcase_add_test(tc, reset_login_after_retrieval);
	tcase_add_test(tc, kill_mid_retrieval);
	tcase_add_loop_test(tc, money_reconciles, 0, N(money_cases));
	tcase_add_test(tc, same_account_twice);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return harness_run_suite(sandbox_links_suite());
}
