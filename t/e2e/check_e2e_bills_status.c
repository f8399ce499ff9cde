/*
 * The bill status lifecycle end to end (SPEC.md "Bill status",
 * DOMAIN.md "Bills and sync" Status): sandbox account links retrieved by
 * the stack's bds-jobs, the events delivered by bds-deliver to a local
 * receiver subscribed to bill.created, bill.updated, bill.deleted and
 * payment.observed. Checked: the exact events and their data for the
 * user_paid / user_partial / user_reverted fixtures (no duplicate on a
 * further advance), the reconciliation's idempotence (a second reconcile
 * job, and `bdsctl jobs` queueing one), POST /v1/bills/{id}/mark-paid (its
 * errors change nothing; Idempotency-Key replays), `bdsctl bills revert`,
 * and through the library on a stored link: a payment matched by the
 * amount/date rule paying a PENDING bill, its reversal, a match_status,
 * statement_refreshed on a new revision and bill.deleted on a withdrawn
 * statement. The bill entity is read from bills.entity.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <json-c/json.h>
#include <libpq-fe.h>

#include "core/arena.h"
#include "core/config.h"
#include "core/crypto.h"
#include "core/db.h"
#include "core/json.h"
#include "core/req.h"
#include "bills/bills.h"
#include "bills/bills_status.h"
#include "jobs/connectors/connector.h"
#include "devacct.h"
#include "harness.h"
#include "receiver.h"

#define IDLE_MS 60000
#define WAIT_MS 10000
#define SANDBOX_BILLER "blr_01900000-0000-7000-8000-000000000001"

static struct devacct dev;
static struct config cfg;
static struct db *db;
static struct arena arena;
static int lib_ready;

struct tenant {
	char		*client, *key, *link;
	struct receiver	*rc;
	size_t		 seen;		/* deliveries checked so far */
};

static void
stack_up(void)
{
	struct harness_opts o;

	harness_opts_defaults(&o);
	/* and the sandbox's dates as its header documents them for that day */
	o.extra_config = "webhook_concurrency = 1\n" "sandbox_basis_day = 2026-10-15\n";
	harness_fixture_start(&o);
	devacct_legal();
	devacct_new(&dev, "bst");
}

/* ---- the stack, as a client sees it ---- */

static struct harness_resp *
call(const struct tenant *t, const char *method, const char *path, const char *body,
    const char *const extra[])
{
	return devacct_call(method, "sandbox", path, devacct_bearer(t->key), body, extra);
}

static void
jobs_idle(void)
{
	ck_assert_msg(harness_jobs_wait_idle(IDLE_MS) == 0, "%s", harness_error());
}

/* A tenant with a receiver subscribed to the bill and payment events and a
 * sandbox link of the fixture, retrieved once. */
static void
tenant_new(struct tenant *t, const char *username)
{
	const char *extra[] = { harness_idem_header(), NULL };
	struct harness_resp *r;
	char url[256];

	memset(t, 0, sizeof(*t));
	t->rc = receiver_start(NULL);
	ck_assert_msg(t->rc != NULL, "receiver: %s", receiver_error());
	t->client = devacct_client_new(&dev);
	t->key = devacct_key_new(&dev, t->client, "sandbox");
	r = devacct_jwt(&dev, "POST", harness_fmt("/v1/iam/clients/%s/webhooks", t->client),
	    harness_fmt("{\"environment\":\"sandbox\",\"url\":\"%s\",\"events\":"
	    "[\"bill.created\",\"bill.updated\",\"bill.deleted\",\"payment.observed\"]}",
	    receiver_url(t->rc, "/hook", url, sizeof(url))), extra);
	harness_expect(r, 201);
	harness_resp_free(r);
	t->link = devacct_sandbox_link(t->key, harness_fmt("u-%s", username), username);
	jobs_idle();
}

static void
tenant_free(struct tenant *t)
{
	receiver_stop(t->rc);
	free(t->client);
	free(t->key);
	free(t->link);
}

static void deliver(struct tenant *, size_t);
static char *bill_of(const struct tenant *, const char *);

/* tenant_new, its first retrieval's 34 deliveries taken (12 bill.created,
 * 11 bill.updated paid, 11 payment.observed); the September bill's id
 * (malloc'ed) and total (cents). */
static char *
tenant_retrieved(struct tenant *t, const char *username, long long *total)
{
	char *sept;

	tenant_new(t, username);
	deliver(t, 34);
	t->seen = 34;
	sept = bill_of(t, "2026-09");
	ck_assert_ptr_nonnull(sept);
	if (total != NULL)
		*total = devacct_sql_int("SELECT total_minor FROM bills WHERE id = $1", sept,
		    NULL);
	return sept;
}

/* bds-deliver until the receiver holds exactly seen + n more requests. */
static void
deliver(struct tenant *t, size_t n)
{
	size_t want = t->seen + n;

	ck_assert_int_eq(harness_deliver_once(), 0);
	ck_assert_msg(want == 0 || receiver_wait(t->rc, want - 1, WAIT_MS) != NULL,
	    "receiver got %zu of %zu", receiver_count(t->rc), want);
	ck_assert_int_eq(harness_deliver_once(), 0);
	ck_assert_uint_eq(receiver_count(t->rc), want);
}

/* Delivery i: its type and data.object (a new object, caller puts). */
static struct json_object *
delivery(struct tenant *t, size_t i, char *type, size_t tlen)
{
	const struct receiver_req *q = receiver_wait(t->rc, i, 0);
	struct json_object *b, *v, *d, *o;

	ck_assert_ptr_nonnull(q);
	ck_assert_ptr_nonnull(b = json_tokener_parse(q->body));
	ck_assert(json_object_object_get_ex(b, "type", &v));
	snprintf(type, tlen, "%s", json_object_get_string(v));
	ck_assert(json_object_object_get_ex(b, "data", &d));
	ck_assert(json_object_object_get_ex(d, "object", &o));
	json_object_get(o);
	json_object_put(b);
	return o;
}

static const char *
member(struct json_object *o, const char *k)
{
	struct json_object *v;

	if (!json_object_object_get_ex(o, k, &v) || v == NULL)
		return NULL;
	return json_object_get_string(v);
}

/* The object has exactly the keys of the NULL-terminated list. */
static void
keys_exactly(struct json_object *o, const char *const keys[])
{
	size_t n = 0;

	for (; keys[n] != NULL; n++)
		ck_assert_msg(json_object_object_get_ex(o, keys[n], NULL), "no %s in %s", keys[n],
		    json_object_to_json_string(o));
	ck_assert_msg((size_t)json_object_object_length(o) == n, "extra keys in %s",
	    json_object_to_json_string(o));
}

static const char *const paid_keys[] = { "id", "object", "user_id", "biller_id", "status",
	"change", "paid_reason", "paid_at", NULL };
static const char *const reverted_keys[] = { "id", "object", "user_id", "biller_id",
	"status", "change", "previous_status", "revert_reason", "reverted_at", NULL };
static const char *const match_keys[] = { "id", "object", "user_id", "biller_id", "status",
	"change", "match_status", "matched_payment_ref", NULL };
static const char *const refreshed_keys[] = { "id", "object", "user_id", "biller_id",
	"status", "change", NULL };

/* The next delivery is bill.updated with change for bill; its object. */
static struct json_object *
next_updated(struct tenant *t, const char *bill, const char *change, const char *status)
{
	char type[64];
	struct json_object *o = delivery(t, t->seen++, type, sizeof(type));

	ck_assert_str_eq(type, "bill.updated");
	ck_assert_pstr_eq(member(o, "id"), bill);
	ck_assert_pstr_eq(member(o, "object"), "bill");
	ck_assert_pstr_eq(member(o, "change"), change);
	ck_assert_pstr_eq(member(o, "status"), status);
	ck_assert_pstr_eq(member(o, "biller_id"), SANDBOX_BILLER);
	ck_assert_ptr_nonnull(member(o, "user_id"));
	return o;
}

static void
advance(struct tenant *t)
{
	struct harness_resp *r = call(t, "POST",
	    harness_fmt("/v1/sandbox/links/%s/advance", t->link), NULL, NULL);

	harness_expect(r, 202);
	harness_resp_free(r);
	jobs_idle();
}

static long long
events_of(const struct tenant *t, const char *type)
{
	return devacct_sql_int("SELECT count(*) FROM events WHERE client_id = $1 AND type = $2",
	    t->client, type);
}

/* The link's bill of the statement month (YYYY-MM), malloc'ed id. */
static char *
bill_of(const struct tenant *t, const char *month)
{
	return devacct_sql_value("SELECT id FROM bills WHERE link_id = $1 AND"
	    " to_char(period_start, 'YYYY-MM') = $2", t->link, month);
}

/* bills.entity's member (text), malloc'ed; NULL for JSON null. */
static char *
entity(const char *bill, const char *key)
{
	return devacct_sql_value("SELECT entity::jsonb->>$2 FROM bills WHERE id = $1", bill, key);
}

static void
entity_is(const char *bill, const char *key, const char *want)
{
	char *v = entity(bill, key);

	ck_assert_pstr_eq(v, want);
	free(v);
}

/* ---- the library, as bds-jobs runs it ---- */

static struct req *
lib_req(void)
{
	static struct req r;
	char err[256];

	if (!lib_ready) {
		ck_assert_int_eq(crypto_setup(), 0);
		ck_assert_msg(config_load(&cfg, harness_config_path(), err, sizeof(err)) == 0,
		    "config: %s", err);
		ck_assert_ptr_nonnull(db = db_new(harness_database_url()));
		arena_init(&arena);
		lib_ready = 1;
	}
	req_init(&r, &cfg, db, &arena, "test");
	return &r;
}

/* The tenant's link as bills_store / bills_payment_store take it. */
static struct bills_link
link_of(const struct tenant *t)
{
	struct bills_link l = { t->client, "sandbox", t->link, NULL, SANDBOX_BILLER,
	    "Sandbox Power & Light" };

	l.client_user_id = devacct_sql_value("SELECT client_user_id FROM links WHERE id = $1",
	    t->link, NULL);
	return l;
}

/* bills_payment_store of one payment in its own transaction (as a
 * retrieval: since_seq is the link's number before it). */
static int
store_payment(const struct tenant *t, const struct bills_payment *p)
{
	struct bills_link l = link_of(t);
	struct req *r = lib_req();
	char *acct = devacct_sql_value("SELECT account_id FROM bills WHERE link_id = $1 LIMIT 1",
	    t->link, NULL);
	long long since = devacct_sql_int("SELECT last_seq FROM bill_seq WHERE link_id = $1",
	    t->link, NULL);
	int rc;

	ck_assert_int_eq(db_begin(r->db), 0);
	rc = bills_payment_store(r, &l, acct, p, since);
	ck_assert_int_ge(rc, 0);
	ck_assert_int_eq(db_commit(r->db), 0);
	arena_reset(&arena);
	free(acct);
	free((char *)l.client_user_id);
	return rc;
}

/* ------------------------------------------------------------------ */

/*
 * user_paid: the first retrieval's 12 bill.created, 11 bill.updated paid
 * (created PAID) and 11 payment.observed; advance → exactly one
 * bill.updated paid portal_balance_zero for the newest bill, with the
 * spec's fields only; advance again → nothing.
 */
START_TEST(user_paid_one_update)
{
	struct tenant t;
	struct json_object *o;
	char *sept;

	sept = tenant_retrieved(&t, "user_paid", NULL);
	ck_assert_int_eq(events_of(&t, "bill.created"), 12);
	ck_assert_int_eq(events_of(&t, "bill.updated"), 11);
	ck_assert_int_eq(events_of(&t, "payment.observed"), 11);
	advance(&t);
	deliver(&t, 1);
	o = next_updated(&t, sept, "paid", "PAID");
	keys_exactly(o, paid_keys);
	ck_assert_pstr_eq(member(o, "paid_reason"), "portal_balance_zero");
	ck_assert_pstr_eq(member(o, "paid_at"), "2026-10-15T12:00:00.000Z");
	json_object_put(o);
	entity_is(sept, "status", "PAID");
	entity_is(sept, "paid_reason", "portal_balance_zero");
	/* the same report again: no event, no number */
	advance(&t);
	deliver(&t, 0);
	ck_assert_int_eq(events_of(&t, "bill.updated"), 12);
	free(sept);
	tenant_free(&t);
}
END_TEST

/*
 * user_partial: advance → bill.updated partially_paid and payment.observed
 * (payments_json: obp_ id, the bill, total / 2), the match recorded on the
 * bill without another event; advance again → nothing (the payment's id
 * is stable, no second row).
 */
START_TEST(user_partial_payment_observed)
{
	struct tenant t;
	struct json_object *o;
	char type[64], *sept, *v;
	long long total;

	sept = tenant_retrieved(&t, "user_partial", &total);
	advance(&t);
	deliver(&t, 2);
	o = next_updated(&t, sept, "partially_paid", "PARTIALLY_PAID");
	keys_exactly(o, paid_keys);
	ck_assert_pstr_eq(member(o, "paid_reason"), "portal_payment_observed");
	json_object_put(o);
	o = delivery(&t, t.seen++, type, sizeof(type));
	ck_assert_str_eq(type, "payment.observed");
	ck_assert_uint_eq(strncmp(member(o, "id"), "obp_", 4), 0);
	ck_assert_pstr_eq(member(o, "object"), "payment");
	ck_assert_pstr_eq(member(o, "bill_id"), sept);
	ck_assert_pstr_eq(member(o, "link_id"), t.link);
	ck_assert_pstr_eq(member(o, "status"), "posted");
	ck_assert_pstr_eq(member(o, "user_id"), "u-user_partial");
	v = devacct_sql_value("SELECT (payments_json(p) -> 'amount')::text FROM"
	    " observed_payments p WHERE id = $1", member(o, "id"), NULL);
	ck_assert_pstr_eq(v, harness_fmt("{\"value\": \"%lld.%02lld\", \"currency\": \"USD\"}",
	    total / 2 / 100, total / 2 % 100));
	free(v);
	/* the payment's id is the keyed hash of client, link and ref */
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM observed_payments WHERE"
	    " id = $1 AND payment_ref = 'sbx-user_partial-1-2026-09-pay'", member(o, "id"),
	    NULL), 1);
	json_object_put(o);
	entity_is(sept, "match_status", "MATCHED");
	entity_is(sept, "matched_payment_ref", "sbx-user_partial-1-2026-09-pay");
	advance(&t);
	deliver(&t, 0);
	ck_assert_int_eq(events_of(&t, "payment.observed"), 12);
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM observed_payments WHERE"
	    " link_id = $1", t.link, NULL), 12);
	free(sept);
	tenant_free(&t);
}
END_TEST

/*
 * user_reverted: advance → September paid; advance → bill.created for
 * October and, through the reconcile job, bill.updated status_reverted
 * next_statement_shows_balance for September. A second reconcile job, and
 * one queued by `bdsctl jobs`, emit nothing more.
 */
START_TEST(user_reverted_through_reconcile)
{
	const char *jobs_args[] = { "jobs", NULL };
	struct tenant t;
	struct json_object *o;
	char type[64], *sept, *oct;

	sept = tenant_retrieved(&t, "user_reverted", NULL);
	advance(&t);
	deliver(&t, 1);
	o = next_updated(&t, sept, "paid", "PAID");
	json_object_put(o);
	advance(&t);
	deliver(&t, 2);
	oct = bill_of(&t, "2026-10");
	ck_assert_ptr_nonnull(oct);
	o = delivery(&t, t.seen++, type, sizeof(type));
	ck_assert_str_eq(type, "bill.created");
	ck_assert_pstr_eq(member(o, "id"), oct);
	ck_assert_pstr_eq(member(o, "status"), "PENDING");
	json_object_put(o);
	o = next_updated(&t, sept, "status_reverted", "PENDING");
	keys_exactly(o, reverted_keys);
	ck_assert_pstr_eq(member(o, "previous_status"), "paid");
	ck_assert_pstr_eq(member(o, "revert_reason"), "next_statement_shows_balance");
	ck_assert_ptr_nonnull(member(o, "reverted_at"));
	json_object_put(o);
	entity_is(sept, "status", "PENDING");
	entity_is(sept, "paid_at", NULL);
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM jobs WHERE kind = 'reconcile'"
	    " AND subject_id = $1 AND status = 'done'", t.link, NULL), 2);
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM bills WHERE id = $1 AND"
	    " reverted_by = $2", sept, oct), 1);

	/* reconcile again: nothing */
	devacct_sql_exec("INSERT INTO jobs (id, kind, client_id, environment, subject_id)"
	    " VALUES ('job_' || gen_random_uuid(), 'reconcile', $1, 'sandbox', $2)",
	    t.client, t.link);
	jobs_idle();
	/* the nightly sweep queues a link with no reconcile for a day */
	devacct_sql_exec("UPDATE jobs SET created_at = now() - interval '2 days'"
	    " WHERE subject_id = $1 AND kind = $2", t.link, "reconcile");
	ck_assert_int_eq(harness_bdsctl(jobs_args), 0);
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM jobs WHERE kind = 'reconcile'"
	    " AND subject_id = $1 AND created_at > now() - interval '1 hour'", t.link, NULL), 1);
	jobs_idle();
	/* a further refresh: the portal's same report does not re-pay it */
	advance(&t);
	deliver(&t, 0);
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM events WHERE client_id = $1 AND"
	    " type = 'bill.updated' AND data->'object'->>'change' = 'status_reverted'",
	    t.client, NULL), 1);
	entity_is(sept, "status", "PENDING");
	free(oct);
	free(sept);
	tenant_free(&t);
}
END_TEST

/* Outside the reversal window the reconciliation leaves a PAID bill. */
START_TEST(reconcile_window)
{
	struct tenant t;
	char *sept;

	tenant_new(&t, "user_reverted");
	sept = bill_of(&t, "2026-09");
	advance(&t);
	devacct_sql_exec("UPDATE bills SET status_at = now() - interval '25 hours'"
	    " WHERE id = $1", sept, NULL);
	advance(&t);
	entity_is(sept, "status", "PAID");
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM events WHERE client_id = $1 AND"
	    " data->'object'->>'change' = 'status_reverted'", t.client, NULL), 0);
	free(sept);
	tenant_free(&t);
}
END_TEST

static struct harness_resp *
mark_paid(const struct tenant *t, const char *bill, const char *body, const char *key)
{
	const char *extra[] = { key != NULL ? harness_fmt("Idempotency-Key: %s", key) : NULL,
		NULL };

	return call(t, "POST", harness_fmt("/v1/bills/%s/mark-paid", bill), body, extra);
}

/* Bad input: 400 naming the field, nothing changed. */
static const struct {
	const char *body, *field;
} bad_marks[] = {
	{ "{\"amount\":{\"value\":\"1.00\",\"currency\":\"EUR\"}}", "amount.currency" },
	/* three capitals, but no ISO 4217 code (core/money's table) */
	{ "{\"amount\":{\"value\":\"1.00\",\"currency\":\"ZZZ\"}}", "amount.currency" },
	{ "{\"amount\":{\"value\":\"0\",\"currency\":\"USD\"}}", "amount.value" },
	{ "{\"amount\":{\"value\":\"1.234\",\"currency\":\"USD\"}}", "amount.value" },
	{ "{\"amount\":{\"value\":\"-1\",\"currency\":\"USD\"}}", "amount.value" },
	{ "{\"amount\":{\"value\":\"99999.00\",\"currency\":\"USD\"}}", "amount.value" },
	{ "{\"amount\":{\"currency\":\"USD\"}}", "amount.value" },
	/* a value as the service writes money, nothing looser */
	{ "{\"amount\":{\"value\":\".5\",\"currency\":\"USD\"}}", "amount.value" },
	{ "{\"amount\":{\"value\":\"5.\",\"currency\":\"USD\"}}", "amount.value" },
	{ "{\"amount\":{\"value\":\"05.00\",\"currency\":\"USD\"}}", "amount.value" },
	{ "{\"amount\":{\"value\":\"1e1\",\"currency\":\"USD\"}}", "amount.value" },
	{ "{\"amount\":{\"value\":\"+1\",\"currency\":\"USD\"}}", "amount.value" },
	{ "{\"amount\":{\"value\":\" 1\",\"currency\":\"USD\"}}", "amount.value" },
	{ "{\"amount\":{\"value\":\"1.\",\"currency\":\"USD\"}}", "amount.value" },
	{ "{\"amount\":{\"value\":\"999999999999999.99\",\"currency\":\"USD\"}}",
	  "amount.value" },
	{ "{\"paid_at\":\"0001-01-01T00:00:00Z\"}", "paid_at" },
	{ "{\"paid_at\":\"1999-12-31T23:59:59Z\"}", "paid_at" },
	{ "{\"paid_at\":\"2999-01-01T00:00:00Z\"}", "paid_at" },
	{ "{\"paid_at\":\"yesterday\"}", "paid_at" },
	{ "{\"paid_reason\":\"pay_succeeded\"}", "paid_reason" },
};

/*
 * mark-paid: errors (404 unknown, another client's, deleted; 400 bad
 * input) change nothing; a partial amount → PARTIALLY_PAID (replayed under
 * its Idempotency-Key: one event), no amount → PAID with paid_at given,
 * again → 409 BILL_ALREADY_PAID. The answer is the bill entity.
 */
START_TEST(mark_paid_route)
{
	const char *revert[] = { "bills", "revert", NULL, NULL };
	struct tenant t, other;
	struct harness_resp *r, *again;
	struct json_object *o;
	char *sept, *aug, *key;
	long long total;
	size_t i;

	sept = tenant_retrieved(&t, "user_good", &total);
	tenant_new(&other, "user_good");
	aug = bill_of(&t, "2026-08");

	r = mark_paid(&t, "bill_01900000-0000-7000-8000-000000000099", NULL, NULL);
	harness_assert_coded(r, 404, "BILL_NOT_FOUND");
	harness_resp_free(r);
	r = mark_paid(&other, sept, NULL, NULL);
	harness_assert_coded(r, 404, "BILL_NOT_FOUND");
	harness_resp_free(r);
	r = mark_paid(&t, "nonsense", NULL, NULL);
	harness_assert_coded(r, 404, "BILL_NOT_FOUND");
	harness_resp_free(r);
	for (i = 0; i < sizeof(bad_marks) / sizeof(bad_marks[0]); i++) {
		r = mark_paid(&t, sept, bad_marks[i].body, NULL);
		harness_assert_coded(r, 400, "VALIDATION_ERROR");
		ck_assert_msg(strstr(r->body, bad_marks[i].field) != NULL, "%s: %s",
		    bad_marks[i].body, r->body);
		harness_resp_free(r);
	}
	entity_is(sept, "status", "PENDING");
	ck_assert_int_eq(events_of(&t, "bill.updated"), 11);

	/* half of it, twice under one key: one write, the same answer */
	key = strdup(harness_fmt("mark-%s", t.client));
	r = mark_paid(&t, sept, harness_fmt("{\"amount\":{\"value\":\"%lld.%02lld\","
	    "\"currency\":\"USD\"}}", total / 2 / 100, total / 2 % 100), key);
	harness_expect(r, 200);
	ck_assert_pstr_eq(devacct_str(r, "id"), sept);
	ck_assert_pstr_eq(devacct_str(r, "object"), "bill");
	ck_assert_pstr_eq(devacct_str(r, "status"), "PARTIALLY_PAID");
	ck_assert_pstr_eq(devacct_str(r, "paid_reason"), "client_reported");
	again = mark_paid(&t, sept, harness_fmt("{\"amount\":{\"value\":\"%lld.%02lld\","
	    "\"currency\":\"USD\"}}", total / 2 / 100, total / 2 % 100), key);
	harness_expect(again, 200);
	ck_assert_pstr_eq(devacct_str(again, "id"), sept);
	ck_assert_pstr_eq(devacct_str(again, "status"), "PARTIALLY_PAID");
	ck_assert_pstr_eq(devacct_str(again, "updated_at"), devacct_str(r, "updated_at"));
	harness_resp_free(again);
	harness_resp_free(r);
	free(key);
	deliver(&t, 1);
	o = next_updated(&t, sept, "partially_paid", "PARTIALLY_PAID");
	keys_exactly(o, paid_keys);
	ck_assert_pstr_eq(member(o, "paid_reason"), "client_reported");
	json_object_put(o);

	/* the rest, with paid_at: PAID; the entity as stored (compacted) */
	r = mark_paid(&t, sept, "{\"paid_at\":\"2026-01-02T03:04:05Z\"}", NULL);
	harness_expect(r, 200);
	ck_assert_pstr_eq(devacct_str(r, "status"), "PAID");
	ck_assert_pstr_eq(devacct_str(r, "paid_at"), "2026-01-02T03:04:05.000Z");
	{
		char *stored = devacct_sql_value("SELECT entity FROM bills WHERE id = $1", sept,
		    NULL);

		stored[json_compact(stored, stored, strlen(stored))] = '\0';
		ck_assert_str_eq(r->body, stored);
		free(stored);
	}
	harness_resp_free(r);
	deliver(&t, 1);
	o = next_updated(&t, sept, "paid", "PAID");
	ck_assert_pstr_eq(member(o, "paid_at"), "2026-01-02T03:04:05.000Z");
	json_object_put(o);
	r = mark_paid(&t, sept, NULL, NULL);
	harness_assert_coded(r, 409, "BILL_ALREADY_PAID");
	harness_resp_free(r);
	r = mark_paid(&t, aug, NULL, NULL);	/* created PAID */
	harness_assert_coded(r, 409, "BILL_ALREADY_PAID");
	harness_resp_free(r);

	/* bdsctl bills revert: manual_admin; again, or unknown → exit 1 */
	revert[2] = sept;
	ck_assert_int_eq(harness_bdsctl(revert), 0);
	entity_is(sept, "status", "PENDING");
	deliver(&t, 1);
	o = next_updated(&t, sept, "status_reverted", "PENDING");
	keys_exactly(o, reverted_keys);
	ck_assert_pstr_eq(member(o, "previous_status"), "paid");
	ck_assert_pstr_eq(member(o, "revert_reason"), "manual_admin");
	json_object_put(o);
	ck_assert_int_eq(harness_bdsctl(revert), 1);
	revert[2] = "bill_01900000-0000-7000-8000-000000000099";
	ck_assert_int_eq(harness_bdsctl(revert), 1);
	revert[2] = "nonsense";
	ck_assert_int_eq(harness_bdsctl(revert), 1);
	deliver(&t, 0);

	/* a deleted bill is not found */
	devacct_sql_exec("UPDATE bills SET deleted_at = now() WHERE id = $1", sept, NULL);
	r = mark_paid(&t, sept, NULL, NULL);
	harness_assert_coded(r, 404, "BILL_NOT_FOUND");
	harness_resp_free(r);
	free(aug);
	free(sept);
	tenant_free(&other);
	tenant_free(&t);
}
END_TEST

/*
 * Two mark-paid calls at once (no Idempotency-Key): the second checks the
 * bill under the link's lock and sees the first one's PAID, so one 200,
 * one 409 BILL_ALREADY_PAID and one bill.updated, as if sent in turn.
 */
START_TEST(mark_paid_parallel)
{
	struct harness_resp *out[8];
	const char *hdrs[3];
	struct tenant t;
	char auth[256], *sept;
	long long total;
	size_t ok = 0, paid = 0;
	long long before;

	sept = tenant_retrieved(&t, "user_good", &total);
	before = events_of(&t, "bill.updated");
	snprintf(auth, sizeof(auth), "Authorization: Bearer %s", t.key);
	hdrs[0] = auth;
	hdrs[1] = "Content-Type: application/json";
	hdrs[2] = NULL;
	harness_request_burst(sizeof(out) / sizeof(out[0]), "POST", "sandbox",
	    harness_fmt("/v1/bills/%s/mark-paid", sept), hdrs, "{}", 2, out);
	for (size_t i = 0; i < sizeof(out) / sizeof(out[0]); i++) {
		if (out[i]->status == 200) {
			ck_assert_pstr_eq(devacct_str(out[i], "status"), "PAID");
			ok++;
		} else {
			harness_assert_coded(out[i], 409, "BILL_ALREADY_PAID");
			paid++;
		}
		harness_resp_free(out[i]);
	}
	ck_assert_uint_eq(ok, 1);
	ck_assert_uint_eq(paid, sizeof(out) / sizeof(out[0]) - 1);
	ck_assert_int_eq(events_of(&t, "bill.updated"), before + 1);
	free(sept);
	tenant_free(&t);
}
END_TEST

/*
 * Observed payments through the library: a payment without a statement
 * ref matched by the amount/date rule pays the PENDING September bill
 * (paid portal_payment_observed, MATCHED) and is observed once; turned
 * reversed it reverts the bill (observed_payment_reversed, UNMATCHED) and
 * is not observed again; a payment for a bill already PAID is a
 * match_status.
 */
START_TEST(payments_match_and_reverse)
{
	struct tenant t;
	struct bills_payment p = { 0 };
	struct json_object *o;
	char type[64], *sept, *obp;
	long long total;

	sept = tenant_retrieved(&t, "user_paid", &total);
	p.ref = "ext-1";
	p.paid_at = "2026-10-10T00:00:00Z";
	p.amount.minor = total;
	p.amount.currency = "USD";
	ck_assert_int_eq(store_payment(&t, &p), 1);
	ck_assert_int_eq(store_payment(&t, &p), 0);	/* a retry: known */
	deliver(&t, 2);
	o = next_updated(&t, sept, "paid", "PAID");
	ck_assert_pstr_eq(member(o, "paid_reason"), "portal_payment_observed");
	ck_assert_pstr_eq(member(o, "paid_at"), "2026-10-10T00:00:00.000Z");
	json_object_put(o);
	o = delivery(&t, t.seen++, type, sizeof(type));
	ck_assert_str_eq(type, "payment.observed");
	ck_assert_pstr_eq(member(o, "bill_id"), sept);
	obp = strdup(member(o, "id"));
	json_object_put(o);
	entity_is(sept, "match_status", "MATCHED");
	entity_is(sept, "matched_payment_ref", "ext-1");

	p.status = "reversed";
	ck_assert_int_eq(store_payment(&t, &p), 0);
	deliver(&t, 1);
	o = next_updated(&t, sept, "status_reverted", "PENDING");
	keys_exactly(o, reverted_keys);
	ck_assert_pstr_eq(member(o, "previous_status"), "paid");
	ck_assert_pstr_eq(member(o, "revert_reason"), "observed_payment_reversed");
	json_object_put(o);
	entity_is(sept, "match_status", "UNMATCHED");
	entity_is(sept, "matched_payment_ref", NULL);
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM observed_payments WHERE id = $1"
	    " AND status = 'reversed' AND reversed_at IS NOT NULL", obp, NULL), 1);
	ck_assert_int_eq(store_payment(&t, &p), 0);
	deliver(&t, 0);

	/* the client reports it paid, then a payment naming the statement
	 * arrives: the match alone */
	{
		struct harness_resp *r = call(&t, "POST",
		    harness_fmt("/v1/bills/%s/mark-paid", sept), NULL, NULL);

		harness_expect(r, 200);
		harness_resp_free(r);
	}
	deliver(&t, 1);
	json_object_put(next_updated(&t, sept, "paid", "PAID"));
	memset(&p, 0, sizeof(p));
	p.ref = "ext-2";
	p.statement_ref = "sbx-user_paid-1-2026-09";
	p.paid_at = "2026-10-12T00:00:00Z";
	p.amount.minor = 100;
	p.amount.currency = "USD";
	ck_assert_int_eq(store_payment(&t, &p), 1);
	deliver(&t, 2);
	o = next_updated(&t, sept, "match_status", "PAID");
	keys_exactly(o, match_keys);
	ck_assert_pstr_eq(member(o, "match_status"), "MATCHED");
	ck_assert_pstr_eq(member(o, "matched_payment_ref"), "ext-2");
	json_object_put(o);
	o = delivery(&t, t.seen++, type, sizeof(type));
	ck_assert_str_eq(type, "payment.observed");
	json_object_put(o);
	free(obp);
	free(sept);
	tenant_free(&t);
}
END_TEST

/*
 * A corrected statement (revision 2, other figures) → statement_refreshed;
 * a withdrawn one → bill.deleted (a tombstone) and nothing on a retry.
 */
START_TEST(refreshed_and_withdrawn)
{
	static const struct connector_target target;
	const struct connector *c = connector_find("sandbox");
	const struct connector_query q = { .refresh = 0 };
	struct connector_session s;
	struct connector_statement *cs;
	struct bills_statement *st;
	struct bills_link l;
	struct tenant t;
	struct json_object *o;
	struct req *r;
	char type[64], *sept, *acct;
	size_t n;
	int created, pass;

	sept = tenant_retrieved(&t, "user_good", NULL);
	acct = devacct_sql_value("SELECT account_id FROM bills WHERE id = $1", sept, NULL);
	l = link_of(&t);
	for (pass = 0; pass < 2; pass++) {
		r = lib_req();
		connector_session_init(&s, &target);
		ck_assert_int_eq(c->login(&arena, &s, "user_good", "pass_good"), CONN_OK);
		ck_assert_int_eq(c->statements(&arena, &s, "sbx-user_good-1", &q, &cs, &n),
		    CONN_OK);
		st = &cs[0].b;
		st[0].revision = 2;
		st[0].total.minor += 100;
		st[0].amount_due.minor += 100;
		ck_assert_int_eq(db_begin(r->db), 0);
		ck_assert_int_eq(bills_store(r, &l, acct, "0000", &st[0], &created), 0);
		ck_assert_int_eq(created, 0);
		ck_assert_int_eq(db_commit(r->db), 0);
		arena_reset(&arena);
	}
	deliver(&t, 1);
	o = next_updated(&t, sept, "statement_refreshed", "PENDING");
	keys_exactly(o, refreshed_keys);
	json_object_put(o);
	ck_assert_int_eq(devacct_sql_int("SELECT revision FROM bills WHERE id = $1", sept, NULL),
	    2);

	for (pass = 0; pass < 2; pass++) {
		r = lib_req();
		ck_assert_int_eq(db_begin(r->db), 0);
		ck_assert_int_eq(bills_withdraw(r, &l, "sbx-user_good-1-2026-09"), pass == 0);
		ck_assert_int_eq(db_commit(r->db), 0);
		arena_reset(&arena);
	}
	deliver(&t, 1);
	o = delivery(&t, t.seen++, type, sizeof(type));
	ck_assert_str_eq(type, "bill.deleted");
	ck_assert_pstr_eq(member(o, "id"), sept);
	json_object_put(o);
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM bills WHERE id = $1 AND"
	    " deleted_at IS NOT NULL", sept, NULL), 1);
	free((char *)l.client_user_id);
	free(acct);
	free(sept);
	tenant_free(&t);
}
END_TEST

static Suite *
bills_status_suite(void)
{
	Suite *s = suite_create("e2e_bills_status");
	TCase *tc = tcase_create("bills_status");

	tcase_add_unchecked_fixture(tc, stack_up, harness_fixture_stop);
	tcase_add_checked_fixture(tc, harness_fixture_recover, NULL);
	tcase_set_timeout(tc, 180);
	tcase_add_test(tc, user_paid_one_update);
	tcase_add_test(tc, user_partial_payment_observed);
	tcase_add_test(tc, user_reverted_through_reconcile);
	tcase_add_test(tc, reconcile_window);
	tcase_add_test(tc, mark_paid_route);
	tcase_add_test(tc, mark_paid_parallel);
	tcase_add_test(tc, payments_match_and_reverse);
	tcase_add_test(tc, refreshed_and_withdrawn);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return harness_run_suite(bills_status_suite());
}
