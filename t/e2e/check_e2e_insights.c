/*
 * Insights end to end: sandbox account links retrieved by bds-jobs, the
 * insights run the bill writes queue, the five routes through nginx, the
 * events at a receiver. user_insights plants every type, user_good none of
 * duplicate_charge or bill_anomaly; the whole lifecycle with one event per
 * change and none for a move that changes nothing; a snooze that ends by
 * itself (a two-second snooze, no clock games); 20 parallel moves of one
 * insight; an overdue risk the engine resolves when the bill is paid, and
 * a dismissal it leaves alone; tenants, users and the input rules.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <check.h>
#include <json-c/json.h>

#include "devacct.h"
#include "harness.h"
#include "receiver.h"

#define N(x) (sizeof(x) / sizeof((x)[0]))
#define IDLE_MS 60000
#define PARALLEL 20

static struct devacct dev;

static const char *const rule_types[] = { "duplicate_charge", "bill_anomaly", "new_biller",
	"overdue_risk", "new_fee", "line_item_spike", "usage_anomaly" };
static const char *const action_types[] = { "review_bill", "contact_biller",
	"dispute_charge", "set_reminder", "pay_now" };

/* A sandbox client of its own, a fixture's link and its one account. */
struct linked {
	char	*client, *key, *link, *account, *user;
};

static void
jobs_idle(void)
{
	ck_assert_msg(harness_jobs_wait_idle(IDLE_MS) == 0, "%s", harness_error());
}

static void
linked_new(struct linked *l, const char *username, struct receiver *rc)
{
	l->client = devacct_client_new(&dev);
	l->key = devacct_key_new(&dev, l->client, "sandbox");
	if (rc != NULL)
		devacct_subscribe(l->key, rc);
	l->user = strdup(harness_fmt("u-%s-%ld", username, (long)random()));
	l->link = devacct_sandbox_link(l->key, l->user, username);
	jobs_idle();
	l->account = devacct_sql_value("SELECT id FROM link_accounts WHERE link_id = $1",
	    l->link, NULL);
	ck_assert_ptr_nonnull(l->account);
}

static void
linked_free(struct linked *l)
{
	free(l->client);
	free(l->key);
	free(l->link);
	free(l->account);
	free(l->user);
}

static struct harness_resp *
call(const char *key, const char *method, const char *path, const char *body)
{
	return devacct_call(method, "sandbox", path, devacct_bearer(key), body, NULL);
}

/* GET /v1/insights of l's account with extra query (may be ""): 200. */
static struct harness_resp *
list(const struct linked *l, const char *extra)
{
	struct harness_resp *r = call(l->key, "GET", harness_fmt("/v1/insights?"
	    "account_link_id=%s&account_id=%s&user_aid=%s%s", l->link, l->account, l->user,
	    extra), NULL);

	harness_expect(r, 200);
	return r;
}

/* The id of l's insight of type (the newest), malloc'ed; NULL when none. */
static char *
insight_of(const struct linked *l, const char *type)
{
	return devacct_sql_value("SELECT id FROM insights WHERE link_id = $1 AND type = $2"
	    " ORDER BY created_at DESC LIMIT 1", l->link, type);
}

static long long
count_of(const struct linked *l, const char *type)
{
	return devacct_sql_int("SELECT count(*) FROM insights WHERE link_id = $1 AND type = $2",
	    l->link, type);
}

/* insight.updated events of insight id */
static long long
updates_of(const char *id)
{
	return devacct_sql_int("SELECT count(*) FROM events WHERE type = 'insight.updated'"
	    " AND data->'object'->>'id' = $1", id, NULL);
}

/* POST /v1/insights/{id}/<what>?user_aid= with body: the response. */
static struct harness_resp *
move(const struct linked *l, const char *id, const char *what, const char *body)
{
	return call(l->key, "POST", harness_fmt("/v1/insights/%s/%s?user_aid=%s", id, what,
	    l->user), body);
}

static const char *
iso_in(long seconds)
{
	time_t t = time(NULL) + seconds;
	static char buf[32];

	strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", gmtime(&t));
	return buf;
}

/* The envelope of an error: status and error_code. */
static void
refused(const struct harness_resp *r, long status, const char *code)
{
	ck_assert_msg(r->status == status, "status %ld, want %ld: %s", r->status, status, r->body);
	ck_assert_pstr_eq(harness_json_string(r, "error_code"), code);
	ck_assert_ptr_nonnull(harness_json_string(r, "error_message"));
}

/* 400 VALIDATION_ERROR naming field (with code, when not NULL) */
static void
invalid(const struct harness_resp *r, const char *field, const char *code)
{
	refused(r, 400, "VALIDATION_ERROR");
	devacct_assert_error(r, field, code);
}

/* 1 when s is one of list's n words */
static int
one_of(const char *s, const char *const *list, size_t n)
{
	for (size_t i = 0; s != NULL && i < n; i++)
		if (strcmp(s, list[i]) == 0)
			return 1;
	return 0;
}

/* An insight as the API shows it keeps the entity's rules. */
static void
check_entity(struct json_object *o, const struct linked *l)
{
	struct json_object *ev, *acts, *ids;
	const char *text;

	ck_assert_pstr_eq(json_object_get_string(json_object_object_get(o, "object")), "insight");
	ck_assert_pstr_eq(json_object_get_string(json_object_object_get(o, "user_aid")), l->user);
	ck_assert_pstr_eq(json_object_get_string(json_object_object_get(o, "account_link_id")),
	    l->link);
	ck_assert_pstr_eq(json_object_get_string(json_object_object_get(o, "account_id")),
	    l->account);
	ck_assert(one_of(json_object_get_string(json_object_object_get(o, "severity")),
	    (const char *const[]){ "low", "medium", "high" }, 3));
	text = json_object_get_string(json_object_object_get(o, "reasoning"));
	ck_assert(text != NULL && strlen(text) > 20 && strchr(text, '\n') == NULL);
	ck_assert(json_object_object_get_ex(o, "evidence", &ev));
	ck_assert(json_object_object_get_ex(ev, "bill_ids", &ids));
	ck_assert(json_object_is_type(ids, json_type_array));
	ck_assert(json_object_object_get_ex(o, "proposed_actions", &acts));
	ck_assert_int_gt(json_object_array_length(acts), 0);
	for (size_t i = 0; i < json_object_array_length(acts); i++) {
		struct json_object *a = json_object_array_get_idx(acts, i);

		ck_assert(one_of(json_object_get_string(json_object_object_get(a, "action_type")),
		    action_types, N(action_types)));
		ck_assert_ptr_nonnull(json_object_object_get(a, "label"));
		ck_assert(json_object_is_type(json_object_object_get(a, "params"),
		    json_type_object));
	}
	/* suggestions, never something to run */
	text = json_object_to_json_string(acts);
	ck_assert(strstr(text, "\"url\"") == NULL && strstr(text, "http") == NULL &&
	    strstr(text, "\"command\"") == NULL);
}

/* ------------------------------------------------------------------ */

static void
stack_up(void)
{
	struct harness_opts o;

	harness_opts_defaults(&o);
	harness_fixture_start(&o);
	devacct_legal();
	devacct_new(&dev, "ins");
	srandom((unsigned)getpid());
}

/*
 * user_insights: every type of the rules, each with evidence and actions,
 * each an insight.created at the receiver, each the same through GET.
 */
START_TEST(fixture_plants_every_type)
{
	struct receiver *rc = receiver_start(NULL);
	struct harness_resp *r, *g;
	struct json_object *items;
	struct linked l;
	size_t n;

	linked_new(&l, "user_insights", rc);
	for (size_t i = 0; i < N(rule_types); i++)
		ck_assert_msg(count_of(&l, rule_types[i]) >= 1, "no %s", rule_types[i]);
	r = list(&l, "&limit=100");
	items = harness_json_get(r, "insights");
	n = json_object_array_length(items);
	ck_assert_int_eq(n, devacct_sql_int("SELECT count(*) FROM insights WHERE link_id = $1",
	    l.link, NULL));
	for (size_t i = 0; i < n; i++) {
		struct json_object *o = json_object_array_get_idx(items, i);
		const char *id = json_object_get_string(json_object_object_get(o, "id"));

		check_entity(o, &l);
		ck_assert_pstr_eq(json_object_get_string(json_object_object_get(o, "status")),
		    "OPEN");
		g = call(l.key, "GET", harness_fmt("/v1/insights/%s?user_aid=%s", id, l.user),
		    NULL);
		harness_expect(g, 200);
		ck_assert_str_eq(json_object_to_json_string(g->json),
		    json_object_to_json_string(o));
		harness_resp_free(g);
		ck_assert_msg(devacct_received(rc, "insight.created", id) != NULL,
		    "no insight.created for %s", id);
	}
	/* the duplicate charge is the bill's "Energy charge" twice, the fee its
	 * late payment fee, the overdue risk its newest bill, due in 2 days */
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM insights WHERE link_id = $1"
	    " AND type = 'new_fee' AND subject LIKE '%:late payment fee'", l.link, NULL),
	    1);
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM insights WHERE link_id = $1"
	    " AND type = 'overdue_risk' AND severity = 'medium'", l.link, NULL), 1);
	/* a second run (the daily pass) finds the same: nothing new, nothing
	 * changed */
	devacct_sql_exec("UPDATE insight_runs SET evaluated_at = now() - interval '2 days',"
	    " queued_on = NULL WHERE link_id = $1 AND client_id = $2", l.link, l.client);
	ck_assert_int_eq(harness_bdsctl((const char *const[]){ "jobs", NULL }), 0);
	jobs_idle();
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM insight_runs WHERE link_id = $1"
	    " AND evaluated_at > now() - interval '1 minute'", l.link, NULL), 1);
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM insights WHERE link_id = $1",
	    l.link, NULL), (long long)n);
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM events e WHERE client_id = $1"
	    " AND type = 'insight.updated'", l.client, NULL), 0);
	harness_resp_free(r);
	linked_free(&l);
	receiver_stop(rc);
}
END_TEST

/* user_good: no duplicate charge, no bill anomaly (its first bill is a new biller). */
START_TEST(good_plants_no_alarm)
{
	struct linked l;

	linked_new(&l, "user_good", NULL);
	ck_assert_int_eq(count_of(&l, "duplicate_charge"), 0);
	ck_assert_int_eq(count_of(&l, "bill_anomaly"), 0);
	ck_assert_int_eq(count_of(&l, "new_biller"), 1);
	linked_free(&l);
}
END_TEST

/*
 * The lifecycle: each change one insight.updated; the moves that change
 * nothing answer 200 with the insight as it is and send nothing.
 */
START_TEST(lifecycle_events)
{
	struct harness_resp *r;
	const char *until = NULL;
	struct receiver *rc = receiver_start(NULL);
	char *id, *other, u1[32], u2[32];
	long long usage, fees;
	struct linked l;

	linked_new(&l, "user_insights", rc);
	id = insight_of(&l, "usage_anomaly");
	other = insight_of(&l, "new_fee");
	usage = count_of(&l, "usage_anomaly");
	fees = count_of(&l, "new_fee");
	snprintf(u1, sizeof(u1), "%s", iso_in(3600));
	snprintf(u2, sizeof(u2), "%s", iso_in(7200));
	r = move(&l, id, "snooze", harness_fmt("{\"until\":\"%s\"}", u1));
	harness_expect(r, 200);
	ck_assert_pstr_eq(devacct_str(r, "status"), "SNOOZED");
	until = devacct_str(r, "snoozed_until");
	ck_assert(until != NULL && strncmp(until, u1, 19) == 0);
	harness_resp_free(r);
	ck_assert_int_eq(updates_of(id), 1);
	/* the same until: idempotent */
	r = move(&l, id, "snooze", harness_fmt("{\"until\":\"%s\"}", u1));
	harness_expect(r, 200);
	ck_assert_pstr_eq(devacct_str(r, "status"), "SNOOZED");
	harness_resp_free(r);
	ck_assert_int_eq(updates_of(id), 1);
	/* another until moves it */
	r = move(&l, id, "snooze", harness_fmt("{\"until\":\"%s\"}", u2));
	harness_expect(r, 200);
	harness_resp_free(r);
	ck_assert_int_eq(updates_of(id), 2);
	r = move(&l, id, "dismiss", NULL);
	harness_expect(r, 200);
	ck_assert_pstr_eq(devacct_str(r, "status"), "DISMISSED");
	ck_assert_ptr_null(devacct_str(r, "snoozed_until"));
	harness_resp_free(r);
	ck_assert_int_eq(updates_of(id), 3);
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM events WHERE type ="
	    " 'insight.updated' AND data->'object'->>'id' = $1 AND data->'object'->>'status' ="
	    " 'DISMISSED' AND data->'object'->>'previous_status' = 'SNOOZED'", id, NULL), 1);
	/* dismissed: terminal; the user's dismissal wins over resolve */
	r = move(&l, id, "dismiss", "{}");
	harness_expect(r, 200);
	harness_resp_free(r);
	r = move(&l, id, "resolve", NULL);
	harness_expect(r, 200);
	ck_assert_pstr_eq(devacct_str(r, "status"), "DISMISSED");
	ck_assert_ptr_null(devacct_str(r, "resolved_at"));
	harness_resp_free(r);
	r = move(&l, id, "snooze", harness_fmt("{\"until\":\"%s\"}", u1));
	refused(r, 409, "INSIGHT_STATE_CONFLICT");
	harness_resp_free(r);
	ck_assert_int_eq(updates_of(id), 3);
	/* resolve with a time; again: nothing; then it cannot be snoozed */
	r = move(&l, other, "resolve", "{\"resolved_at\":\"2026-01-02T03:04:05Z\"}");
	harness_expect(r, 200);
	ck_assert_pstr_eq(devacct_str(r, "status"), "RESOLVED");
	ck_assert_pstr_eq(devacct_str(r, "resolved_at"), "2026-01-02T03:04:05.000Z");
	harness_resp_free(r);
	r = move(&l, other, "resolve", NULL);
	harness_expect(r, 200);
	ck_assert_pstr_eq(devacct_str(r, "resolved_at"), "2026-01-02T03:04:05.000Z");
	harness_resp_free(r);
	r = move(&l, other, "snooze", harness_fmt("{\"until\":\"%s\"}", u1));
	ck_assert_int_eq(r->status, 409);
	harness_resp_free(r);
	ck_assert_int_eq(updates_of(other), 1);
	/* a run of the engine never reopens what the user settled */
	devacct_sql_exec("UPDATE insight_runs SET evaluated_at = now() - interval '2 days',"
	    " queued_on = NULL WHERE link_id = $1 AND client_id = $2", l.link, l.client);
	ck_assert_int_eq(harness_bdsctl((const char *const[]){ "jobs", NULL }), 0);
	jobs_idle();
	ck_assert_int_eq(count_of(&l, "usage_anomaly"), usage);
	ck_assert_int_eq(count_of(&l, "new_fee"), fees);
	ck_assert_int_eq(updates_of(id), 3);
	ck_assert_int_eq(updates_of(other), 1);
	/* the receiver has them as they were sent */
	ck_assert_ptr_nonnull(devacct_received(rc, "insight.updated", "\"previous_status\":\"SNOOZED\""));
	ck_assert_ptr_nonnull(devacct_received(rc, "insight.updated", "\"status\":\"RESOLVED\""));
	free(id);
	free(other);
	linked_free(&l);
	receiver_stop(rc);
}
END_TEST

/* A two-second snooze ends by itself: OPEN again, one insight.updated. */
START_TEST(snooze_expires)
{
	struct harness_resp *r;
	struct linked l;
	char *id;
	int i;

	linked_new(&l, "user_insights", NULL);
	id = insight_of(&l, "bill_anomaly");
	r = move(&l, id, "snooze", harness_fmt("{\"until\":\"%s\"}", iso_in(2)));
	harness_expect(r, 200);
	harness_resp_free(r);
	for (i = 0; i < 150; i++) {
		if (devacct_sql_int("SELECT count(*) FROM insights WHERE id = $1 AND"
		    " status = 'OPEN'", id, NULL) == 1)
			break;
		usleep(100 * 1000);
	}
	ck_assert_int_lt(i, 150);
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM insights WHERE id = $1 AND"
	    " snoozed_until IS NULL AND updated_at >= now() - interval '1 minute'", id, NULL), 1);
	ck_assert_int_eq(updates_of(id), 2);
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM events WHERE type ="
	    " 'insight.updated' AND data->'object'->>'id' = $1 AND data->'object'->>'status' ="
	    " 'OPEN' AND data->'object'->>'previous_status' = 'SNOOZED'", id, NULL), 1);
	free(id);
	linked_free(&l);
}
END_TEST

struct racer {
	const struct linked *l;
	const char	*id, *what, *body;
	long		 status;
};

static void *
race(void *arg)
{
	struct racer *x = arg;
	struct harness_resp *r = move(x->l, x->id, x->what, x->body);

	x->status = r->status;
	harness_resp_free(r);
	return NULL;
}

/*
 * 20 parallel snooze, dismiss and resolve calls on one OPEN insight: every
 * answer 200 or 409, the end DISMISSED (a dismissal is terminal and wins),
 * one event per real change (lifecycle_version counts them).
 */
START_TEST(parallel_moves)
{
	static const char *const whats[] = { "snooze", "dismiss", "resolve", "snooze" };
	struct racer x[PARALLEL];
	pthread_t th[PARALLEL];
	char body[64];
	struct linked l;
	long long version;
	char *id;

	linked_new(&l, "user_insights", NULL);
	id = insight_of(&l, "line_item_spike");
	snprintf(body, sizeof(body), "{\"until\":\"%s\"}", iso_in(3600));
	for (int i = 0; i < PARALLEL; i++) {
		x[i].l = &l;
		x[i].id = id;
		x[i].what = whats[i % N(whats)];
		x[i].body = strcmp(x[i].what, "snooze") == 0 ? body : NULL;
		ck_assert_int_eq(pthread_create(&th[i], NULL, race, &x[i]), 0);
	}
	for (int i = 0; i < PARALLEL; i++) {
		ck_assert_int_eq(pthread_join(th[i], NULL), 0);
		ck_assert_msg(x[i].status == 200 || (x[i].status == 409 &&
		    strcmp(x[i].what, "snooze") == 0), "%s answered %ld", x[i].what, x[i].status);
	}
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM insights WHERE id = $1 AND"
	    " status = 'DISMISSED'", id, NULL), 1);
	version = devacct_sql_int("SELECT lifecycle_version FROM insights WHERE id = $1", id,
	    NULL);
	ck_assert_int_ge(version, 2);
	/* at most: snooze, resolve, dismiss */
	ck_assert_int_le(version, 4);
	ck_assert_int_eq(updates_of(id), version - 1);
	ck_assert_int_eq(devacct_sql_int("SELECT count(DISTINCT data->'object'->>"
	    "'lifecycle_version') FROM events WHERE type = 'insight.updated' AND"
	    " data->'object'->>'id' = $1", id, NULL), version - 1);
	free(id);
	linked_free(&l);
}
END_TEST

/*
 * Paid: the overdue risk is resolved by the engine (insight.updated
 * RESOLVED); on a second link the user dismissed it first, and it stays
 * DISMISSED.
 */
START_TEST(paid_resolves_overdue)
{
	struct harness_resp *r;
	struct linked a, b;
	char *id, *bill, *bid;

	linked_new(&a, "user_insights", NULL);
	linked_new(&b, "user_insights", NULL);
	id = insight_of(&a, "overdue_risk");
	bid = insight_of(&b, "overdue_risk");
	r = move(&b, bid, "dismiss", NULL);
	harness_expect(r, 200);
	harness_resp_free(r);
	for (int k = 0; k < 2; k++) {
		const struct linked *l = k == 0 ? &a : &b;

		bill = devacct_sql_value("SELECT bill_id FROM insights WHERE link_id = $1 AND"
		    " type = 'overdue_risk'", l->link, NULL);
		r = call(l->key, "POST", harness_fmt("/v1/bills/%s/mark-paid", bill), "{}");
		harness_expect(r, 200);
		harness_resp_free(r);
		free(bill);
	}
	jobs_idle();
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM insights WHERE id = $1 AND"
	    " status = 'RESOLVED' AND resolved_by = 'engine' AND resolved_at IS NOT NULL", id,
	    NULL), 1);
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM events WHERE type ="
	    " 'insight.updated' AND data->'object'->>'id' = $1 AND data->'object'->>'status' ="
	    " 'RESOLVED' AND data->'object'->>'previous_status' = 'OPEN'", id, NULL), 1);
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM insights WHERE id = $1 AND"
	    " status = 'DISMISSED'", bid, NULL), 1);
	ck_assert_int_eq(updates_of(bid), 1);
	/* no new overdue risk for the paid bills */
	ck_assert_int_eq(count_of(&a, "overdue_risk"), 1);
	ck_assert_int_eq(count_of(&b, "overdue_risk"), 1);
	free(id);
	free(bid);
	linked_free(&a);
	linked_free(&b);
}
END_TEST

/* Other tenants, other users, the list's rules and the input rules. */
START_TEST(tenants_and_input)
{
	struct harness_resp *r;
	struct linked l, o;
	char *id, *next;
	long long total;
	size_t seen = 0;

	linked_new(&l, "user_insights", NULL);
	linked_new(&o, "user_good", NULL);
	id = insight_of(&l, "new_fee");
	/* another client's key, another user: 404 as an unknown id */
	r = call(o.key, "GET", harness_fmt("/v1/insights/%s?user_aid=%s", id, l.user), NULL);
	refused(r, 404, "INSIGHT_NOT_FOUND");
	harness_resp_free(r);
	r = call(o.key, "POST", harness_fmt("/v1/insights/%s/dismiss?user_aid=%s", id, l.user),
	    NULL);
	ck_assert_int_eq(r->status, 404);
	harness_resp_free(r);
	r = call(l.key, "GET", harness_fmt("/v1/insights/%s?user_aid=someone-else", id), NULL);
	ck_assert_int_eq(r->status, 404);
	harness_resp_free(r);
	r = call(l.key, "GET", "/v1/insights/ins_01900000-0000-7000-8000-000000000000"
	    "?user_aid=x", NULL);
	ck_assert_int_eq(r->status, 404);
	harness_resp_free(r);
	r = call(o.key, "GET", harness_fmt("/v1/insights?account_link_id=%s&account_id=%s",
	    l.link, l.account), NULL);
	harness_expect(r, 200);
	ck_assert_int_eq(json_object_array_length(harness_json_get(r, "insights")), 0);
	harness_resp_free(r);
	/* required and bounded */
	r = call(l.key, "GET", harness_fmt("/v1/insights/%s", id), NULL);
	invalid(r, "user_aid", NULL);
	harness_resp_free(r);
	r = call(l.key, "POST", harness_fmt("/v1/insights/%s/dismiss", id), NULL);
	invalid(r, "user_aid", NULL);
	harness_resp_free(r);
	r = call(l.key, "GET", harness_fmt("/v1/insights?account_link_id=%s", l.link), NULL);
	invalid(r, "account_id", NULL);
	harness_resp_free(r);
	r = call(l.key, "GET", harness_fmt("/v1/insights?account_id=%s", l.account), NULL);
	invalid(r, "account_link_id", NULL);
	harness_resp_free(r);
	for (int k = 0; k < 2; k++) {
		r = call(l.key, "GET", harness_fmt("/v1/insights?account_link_id=%s&account_id=%s"
		    "&limit=%d", l.link, l.account, k == 0 ? 0 : 101), NULL);
		invalid(r, "limit", NULL);
		harness_resp_free(r);
	}
	r = move(&l, id, "snooze", harness_fmt("{\"until\":\"%s\"}", iso_in(-5)));
	invalid(r, "until", "not_in_future");
	harness_resp_free(r);
	r = move(&l, id, "snooze", "{}");
	invalid(r, "until", NULL);
	harness_resp_free(r);
	r = move(&l, id, "snooze", "{\"until\":\"tomorrow\"}");
	invalid(r, "until", NULL);
	harness_resp_free(r);
	r = move(&l, id, "resolve", harness_fmt("{\"resolved_at\":\"%s\"}", iso_in(86400)));
	invalid(r, "resolved_at", "in_future");
	harness_resp_free(r);
	ck_assert_int_eq(updates_of(id), 0);
	/* a type this version does not know is answered as it is stored */
	devacct_sql_exec("INSERT INTO insights (client_id, id, environment, user_aid, link_id,"
	    " account_id, type, subject, severity, evidence, reasoning)"
	    " SELECT client_id, 'ins_01900000-0000-7000-8000-00000000abcd', environment, user_aid,"
	    " link_id, account_id, 'water_leak_suspected', 'x', 'low', '{\"bill_ids\":[]}',"
	    " 'A later engine found this.' FROM insights WHERE id = $1", id, NULL);
	r = call(l.key, "GET", harness_fmt("/v1/insights/ins_01900000-0000-7000-8000-00000000abcd"
	    "?user_aid=%s", l.user), NULL);
	harness_expect(r, 200);
	ck_assert_pstr_eq(devacct_str(r, "type"), "water_leak_suspected");
	harness_resp_free(r);
	/* newest first, in pages of 2, every insight once; a status filter */
	total = devacct_sql_int("SELECT count(*) FROM insights WHERE link_id = $1", l.link, NULL);
	r = list(&l, "&limit=2");
	for (;;) {
		struct json_object *items = harness_json_get(r, "insights");

		ck_assert_int_le(json_object_array_length(items), 2);
		seen += json_object_array_length(items);
		if (!devacct_bool(r, "has_more"))
			break;
		next = strdup(devacct_str(r, "next_cursor"));
		harness_resp_free(r);
		r = list(&l, harness_fmt("&limit=2&cursor=%s", next));
		free(next);
	}
	harness_resp_free(r);
	ck_assert_int_eq((long long)seen, total);
	r = list(&l, "&status=DISMISSED");
	ck_assert_int_eq(json_object_array_length(harness_json_get(r, "insights")), 0);
	harness_resp_free(r);
	r = list(&l, "&limit=1");
	ck_assert_pstr_eq(json_object_get_string(json_object_object_get(json_object_array_get_idx(
	    harness_json_get(r, "insights"), 0), "id")), "ins_01900000-0000-7000-8000-00000000abcd");
	harness_resp_free(r);
	free(id);
	linked_free(&l);
	linked_free(&o);
}
END_TEST

static Suite *
insights_suite(void)
{
	Suite *s = suite_create("e2e_insights");
	TCase *tc = tcase_create("insights");

	tcase_add_unchecked_fixture(tc, stack_up, harness_fixture_stop);
	tcase_add_checked_fixture(tc, harness_fixture_recover, NULL);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, fixture_plants_every_type);
	tcase_add_test(tc, good_plants_no_alarm);
	tcase_add_test(tc, lifecycle_events);
	tcase_add_test(tc, snooze_expires);
	tcase_add_test(tc, parallel_moves);
	tcase_add_test(tc, paid_resolves_overdue);
	tcase_add_test(tc, tenants_and_input);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return harness_run_suite(insights_suite());
}
