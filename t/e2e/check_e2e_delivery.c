/*
 * Webhook delivery end to end: bds-deliver sends the deliveries the API
 * queued to a receiver on loopback (t/e2e/receiver, which verifies every
 * signature with OpenSSL, independently of lib/), and the faults a
 * deliverer must survive: kill -9 in the middle of a batch, two deliverers
 * at once, the receiver down then up, 410, 429 with Retry-After, the end of
 * the retry schedule.
 *
 * One stack with a short retry schedule (1 s steps), a 20 s lease and small
 * batches so two deliverers share the work. Events and their deliveries are
 * written with SQL in one transaction, as events_emit writes them (the API
 * side has its own suite); each test makes its own client, sandbox webhook
 * and receiver, so tests never see each other's deliveries.
 */
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include <check.h>
#include <json-c/json.h>
#include <libpq-fe.h>

#include "core/db.h"
#include "devacct.h"
#include "harness.h"
#include "receiver.h"
#include "webhooks/webhooks_deliver.h"

#define WAIT_MS		15000
#define SCHEDULE	"1,1,1,1"	/* 5 attempts */
#define ATTEMPTS	5
#define LEASE		20

static struct devacct dev;

/* ------------------------------------------------------------------ */
/* Helpers                                                             */

/* Run q with up to 4 text params; the result (the caller clears it). */
static PGresult *
sql(const char *q, int n, const char *p0, const char *p1, const char *p2, const char *p3)
{
	const char *p[4] = { p0, p1, p2, p3 };
	PGresult *res = PQexecParams(devacct_pg(), q, n, NULL, p, NULL, NULL, 0);
	ExecStatusType st = PQresultStatus(res);

	ck_assert_msg(st == PGRES_TUPLES_OK || st == PGRES_COMMAND_OK, "%s: %s", q,
	    PQerrorMessage(devacct_pg()));
	return res;
}

static long long
sql_int(const char *q, const char *p0, const char *p1)
{
	return devacct_sql_int(q, p0, p1);
}

/* A subscriber: a fresh client and a sandbox webhook for every type. */
struct sub {
	char	 client[96];
	char	 webhook[96];
	char	 secret[192];
};

/* How many of s's deliveries (or logged attempts) match cond (SQL). */
static long long
count_where(const char *table, const struct sub *s, const char *cond)
{
	return sql_int(harness_fmt("SELECT count(*) FROM %s WHERE client_id = $1 AND %s",
	    table, cond), s->client, NULL);
}

static long long
deliveries(const struct sub *s, const char *cond)
{
	return count_where("deliveries", s, cond);
}

static long long
attempts(const struct sub *s, const char *cond)
{
	return count_where("delivery_attempts", s, cond);
}

/* Poll until count_where() is want (at most ms); the last count. */
static long long
wait_count(const char *table, const struct sub *s, const char *cond, long long want,
    int ms)
{
	long long end = harness_now_ms() + ms, v;

	while ((v = count_where(table, s, cond)) != want && harness_now_ms() < end)
		harness_sleep_ms(50);
	return v;
}

static long long
wait_deliveries(const struct sub *s, const char *cond, long long want, int ms)
{
	return wait_count("deliveries", s, cond, want, ms);
}

static long long
wait_attempts(const struct sub *s, const char *cond, long long want, int ms)
{
	return wait_count("delivery_attempts", s, cond, want, ms);
}

static void
sub_new(struct sub *s, const char *url)
{
	struct harness_resp *r = devacct_jwt(&dev, "POST", "/v1/iam/clients",
	    "{\"name\":\"delivery e2e\"}", NULL);
	const char *extra[] = { harness_idem_header(), NULL };

	ck_assert_msg(r->status == 201, "client: %ld %s", r->status, r->body);
	snprintf(s->client, sizeof(s->client), "%s", devacct_str(r, "client.id"));
	harness_resp_free(r);
	r = devacct_jwt(&dev, "POST", harness_fmt("/v1/iam/clients/%s/webhooks", s->client),
	    harness_fmt("{\"environment\":\"sandbox\",\"url\":\"%s\",\"events\":[\"*\"]}", url), extra);
	ck_assert_msg(r->status == 201, "webhook: %ld %s", r->status, r->body);
	snprintf(s->webhook, sizeof(s->webhook), "%s", devacct_str(r, "webhook.id"));
	snprintf(s->secret, sizeof(s->secret), "%s", devacct_str(r, "webhook.secret"));
	harness_resp_free(r);
}

/*
 * n bill.created events of s's client and one delivery each, in one
 * transaction (what events_emit writes); the trigger notifies bds_outbox
 * at commit.
 */
static void
emit(const struct sub *s, int n)
{
	char nb[16];

	snprintf(nb, sizeof(nb), "%d", n);
	PQclear(sql("WITH e AS ("
	    " INSERT INTO events (client_id, id, environment, type, data, request_id,"
	    "                     idempotency_key, api_version)"
	    " SELECT $1, 'evt_' || gen_random_uuid(), 'sandbox', 'bill.created',"
	    "        jsonb_build_object('object', jsonb_build_object('id', 'bill_' || g,"
	    "            'object', 'bill', 'user_id', 'usr_1', 'biller_id', 'blr_1',"
	    "            'status', 'PENDING'),"
	    "            'bill_id', 'bill_' || g, 'user_id', 'usr_1', 'biller_id', 'blr_1'),"
	    "        'req-' || g, 'idem-' || g, '2026-11-01'"
	    "   FROM generate_series(1, $3::int) g RETURNING client_id, id)"
	    " INSERT INTO deliveries (client_id, id, event_id, webhook_id)"
	    " SELECT client_id, 'dlv_' || gen_random_uuid(), id, $2 FROM e",
	    3, s->client, s->webhook, nb, NULL));
}

static struct receiver *
receiver_up(int status, int delay_ms, int port)
{
	struct receiver_opts o = { status, delay_ms, port };
	struct receiver *rc = receiver_start(&o);

	ck_assert_msg(rc != NULL, "receiver: %s", receiver_error());
	return rc;
}

static const char *
rurl(const struct receiver *rc)
{
	static char buf[256];

	return receiver_url(rc, "/hook", buf, sizeof(buf));
}

/* Distinct X-Webhook-Id values among the receiver's first n requests. */
static size_t
distinct_ids(struct receiver *rc, size_t n)
{
	size_t d = 0;

	for (size_t i = 0; i < n; i++) {
		const struct receiver_req *q = receiver_wait(rc, i, 0);
		const char *id = q != NULL ? receiver_header(q, "X-Webhook-Id") : NULL;
		int seen = 0;

		ck_assert_ptr_nonnull(id);
		for (size_t k = 0; k < i && !seen; k++)
			seen = strcmp(receiver_header(receiver_wait(rc, k, 0), "X-Webhook-Id"),
			    id) == 0;
		d += !seen;
	}
	return d;
}

/* A second bds-deliver of our own (the harness runs one). */
static pid_t
deliverer_spawn(const char *log)
{
	pid_t pid = fork();

	ck_assert_int_ne(pid, -1);
	if (pid == 0) {
		const char *bin = harness_fmt("%s/app/bds-deliver", getenv("BDS_BUILDDIR") != NULL ?
		    getenv("BDS_BUILDDIR") : ".");

		execl(bin, "bds-deliver", "--config", harness_config_path(), "--max-seconds",
		    "0", "--log", log, (char *)NULL);
		_exit(127);
	}
	return pid;
}

/* ------------------------------------------------------------------ */
/* Fixtures                                                            */

static void
stack(void)
{
	struct harness_opts o;

	harness_opts_defaults(&o);
	o.extra_config = "webhook_retry_schedule = " SCHEDULE "\n"
	    "webhook_lease = 20\n"
	    "webhook_batch = 16\n"
	    "webhook_concurrency = 16";
	harness_fixture_start(&o);
	devacct_legal();
	devacct_new(&dev, "dlv");
}

/* The stack up and one long-running deliverer (a test may have killed it). */
static void
recover(void)
{
	harness_fixture_recover();
	if (harness_deliver_pid() == 0)
		ck_assert_msg(harness_deliver_start(NULL) == 0, "%s", harness_error());
}

/* ------------------------------------------------------------------ */
/* Settings                                                            */

START_TEST(schedule_parse)
{
	static const struct { const char *text; int n; } cases[] = {
		{ "5,300,1800,7200,18000,36000,36000", 7 },
		{ "1", 1 },
		{ " 1 , 2 ", 2 },
		{ "", -1 },
		{ "0", -1 },
		{ "1,,2", -1 },
		{ "1,2,", -1 },
		{ "86401", -1 },
		{ "x", -1 },
		{ "-1", -1 },
	};
	int out[32];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		ck_assert_msg(webhooks_schedule_parse(cases[i].text, out, 32) == cases[i].n,
		    "\"%s\"", cases[i].text);
}
END_TEST

/* ------------------------------------------------------------------ */
/* What a receiver sees                                                */

START_TEST(delivers_signed_envelopes)
{
	struct receiver *rc = receiver_up(200, 0, 0);
	struct sub s;
	PGresult *ev;

	sub_new(&s, rurl(rc));
	emit(&s, 3);
	for (size_t i = 0; i < 3; i++)
		ck_assert_msg(receiver_wait(rc, i, WAIT_MS) != NULL, "delivery %zu did not come", i);
	ev = sql("SELECT id, floor(extract(epoch FROM created_at))::bigint,"
	    " bds_iso(created_at), request_id,"
	    " idempotency_key, data->'object'->>'id' FROM events WHERE client_id = $1",
	    1, s.client, NULL, NULL, NULL);
	ck_assert_int_eq(PQntuples(ev), 3);
	for (size_t i = 0; i < 3; i++) {
		const struct receiver_req *q = receiver_wait(rc, i, 0);
		const char *id = receiver_header(q, "X-Webhook-Id"), *sig;
		struct json_object *body = json_tokener_parse(q->body), *v, *req;
		char v1[4][65], want[65];
		long long t = 0, now = time(NULL);
		int row = -1;

		ck_assert_ptr_nonnull(body);
		ck_assert_str_eq(q->method, "POST");
		ck_assert_str_eq(q->target, "/hook");
		/* the signature, checked with OpenSSL as a client would */
		ck_assert_int_eq(receiver_verify(q, s.secret, now, 300), RECEIVER_SIG_OK);
		sig = receiver_header(q, "Service-Signature");
		ck_assert_int_eq(receiver_sig_parse(sig, &t, v1, 4), 1);
		ck_assert_msg(llabs(t - now) <= 10, "t=%lld now=%lld", t, now);
		receiver_hmac_hex(s.secret, t, q->body, q->body_len, want);
		ck_assert_str_eq(v1[0], want);
		/* the 5-minute replay window, and a body changed in transit */
		ck_assert_int_eq(receiver_verify(q, s.secret, t + 299, 300), RECEIVER_SIG_OK);
		ck_assert_int_eq(receiver_verify(q, s.secret, t + 301, 300), RECEIVER_SIG_STALE);
		ck_assert_int_eq(receiver_verify(q, s.secret, t - 301, 300), RECEIVER_SIG_STALE);
		ck_assert_int_eq(receiver_verify(q, "whsec_another", now, 300),
		    RECEIVER_SIG_MISMATCH);
		q->body[q->body_len - 2] ^= 1;
		ck_assert_int_eq(receiver_verify(q, s.secret, now, 300), RECEIVER_SIG_MISMATCH);
		q->body[q->body_len - 2] ^= 1;

		/* headers */
		ck_assert_ptr_nonnull(id);
		for (int r = 0; r < 3; r++)
			if (strcmp(PQgetvalue(ev, r, 0), id) == 0)
				row = r;
		ck_assert_msg(row >= 0, "X-Webhook-Id %s is no event", id);
		ck_assert_pstr_eq(receiver_header(q, "X-Webhook-Event-Type"), "bill.created");
		ck_assert_pstr_eq(receiver_header(q, "X-Webhook-Timestamp"),
		    PQgetvalue(ev, row, 2));
		ck_assert_pstr_eq(receiver_header(q, "X-Webhook-Client-Id"), s.client);
		ck_assert_pstr_eq(receiver_header(q, "X-Webhook-Source"), "service");
		ck_assert_pstr_eq(receiver_header(q, "Content-Type"), "application/json");

		/* the envelope: both of the spec's, in one object */
		{
			const char *const fields[][2] = {
				{ "id", id }, { "event_id", id }, { "object", "event" },
				{ "type", "bill.created" }, { "event_type", "bill.created" },
				{ "api_version", "2026-11-01" },
				{ "timestamp", PQgetvalue(ev, row, 2) },
				{ "client_id", s.client }, { "mode", "sandbox" },
				{ "producer_service", "bds-api" },
			};

			for (size_t k = 0; k < sizeof(fields) / sizeof(fields[0]); k++)
				ck_assert_pstr_eq(json_object_get_string(json_object_object_get(body,
				    fields[k][0])), fields[k][1]);
		}
		ck_assert_int_eq(json_object_get_int64(json_object_object_get(body, "created")),
		    atoll(PQgetvalue(ev, row, 1)));
		ck_assert(json_object_object_get_ex(body, "correlation_id", &v) && v == NULL);
		ck_assert(json_object_object_get_ex(body, "request", &req));
		ck_assert_str_eq(json_object_get_string(json_object_object_get(req, "id")),
		    PQgetvalue(ev, row, 3));
		ck_assert_str_eq(json_object_get_string(json_object_object_get(req,
		    "idempotency_key")), PQgetvalue(ev, row, 4));
		v = json_object_object_get(json_object_object_get(body, "data"), "object");
		ck_assert_str_eq(json_object_get_string(json_object_object_get(v, "id")),
		    PQgetvalue(ev, row, 5));
		ck_assert_str_eq(json_object_get_string(json_object_object_get(v, "object")),
		    "bill");
		json_object_put(body);
	}
	PQclear(ev);
	/* recorded: succeeded after one attempt, the attempt logged with 200 */
	ck_assert_int_eq(wait_deliveries(&s, "status = 'succeeded' AND attempts = 1"
	    " AND last_status_code = 200"
	    " AND last_error IS NULL AND lease_until IS NULL", 3, WAIT_MS), 3);
	ck_assert_int_eq(attempts(&s, "attempt = 1 AND status_code = 200"
	    " AND latency_ms >= 0 AND error IS NULL"
	    " AND attempted_at BETWEEN now() - interval '1 minute' AND now()"), 3);
	harness_sleep_ms(300);
	ck_assert_int_eq((int)receiver_count(rc), 3);
	receiver_stop(rc);
}
END_TEST

/* During a rotation's grace window: one v1 per live secret. */
START_TEST(rotation_signs_with_both_secrets)
{
	struct receiver *rc = receiver_up(200, 0, 0);
	const char *extra[] = { harness_idem_header(), NULL };
	const struct receiver_req *q;
	struct harness_resp *r;
	char key[256], fresh[192], v1[4][65];
	long long t;
	struct sub s;

	sub_new(&s, rurl(rc));
	r = devacct_jwt(&dev, "POST", harness_fmt("/v1/iam/clients/%s/client-secrets", s.client),
	    "{\"environment\":\"sandbox\"}", extra);
	ck_assert_msg(r->status == 201, "%s", r->body);
	snprintf(key, sizeof(key), "%s", devacct_str(r, "secret.secret"));
	harness_resp_free(r);
	r = devacct_call("POST", "sandbox", harness_fmt("/v1/webhook-endpoints/%s/rotate-secret",
	    s.webhook), devacct_bearer(key), "{\"expires_in_hours\":1}", NULL);
	ck_assert_msg(r->status == 200, "%s", r->body);
	snprintf(fresh, sizeof(fresh), "%s", devacct_str(r, "secret"));
	harness_resp_free(r);
	ck_assert_str_ne(fresh, s.secret);

	emit(&s, 1);
	ck_assert_ptr_nonnull(q = receiver_wait(rc, 0, WAIT_MS));
	ck_assert_int_eq(receiver_sig_parse(receiver_header(q, "Service-Signature"), &t, v1, 4), 2);
	ck_assert_int_eq(receiver_verify(q, fresh, time(NULL), 300), RECEIVER_SIG_OK);
	ck_assert_int_eq(receiver_verify(q, s.secret, time(NULL), 300), RECEIVER_SIG_OK);

	/* the window ends: one v1 again, the new secret's */
	PQclear(sql("UPDATE webhooks SET previous_secret_expires_at = now() - interval '1 s'"
	    " WHERE client_id = $1", 1, s.client, NULL, NULL, NULL));
	emit(&s, 1);
	ck_assert_ptr_nonnull(q = receiver_wait(rc, 1, WAIT_MS));
	ck_assert_int_eq(receiver_sig_parse(receiver_header(q, "Service-Signature"), &t, v1, 4), 1);
	ck_assert_int_eq(receiver_verify(q, fresh, time(NULL), 300), RECEIVER_SIG_OK);
	ck_assert_int_eq(receiver_verify(q, s.secret, time(NULL), 300), RECEIVER_SIG_MISMATCH);
	receiver_stop(rc);
}
END_TEST

/*
 * A replayed delivery repeats the event id, and deliveries are not ordered:
 * a receiver that dedupes by X-Webhook-Id processes each event once.
 */
START_TEST(duplicates_keep_the_event_id)
{
	struct receiver *rc = receiver_up(200, 0, 0);
	const struct receiver_req *q;
	struct sub s;
	char *first;

	sub_new(&s, rurl(rc));
	emit(&s, 2);
	ck_assert_ptr_nonnull(receiver_wait(rc, 1, WAIT_MS));
	first = strdup(receiver_header(receiver_wait(rc, 0, 0), "X-Webhook-Id"));
	/* a replay of the first event (what POST /v1/activity/replay queues) */
	PQclear(sql("INSERT INTO deliveries (client_id, id, event_id, webhook_id, replay_of)"
	    " SELECT client_id, 'dlv_' || gen_random_uuid(), event_id, webhook_id, id"
	    "   FROM deliveries WHERE client_id = $1 AND event_id = $2",
	    2, s.client, first, NULL, NULL));
	ck_assert_ptr_nonnull(q = receiver_wait(rc, 2, WAIT_MS));
	ck_assert_str_eq(receiver_header(q, "X-Webhook-Id"), first);
	ck_assert_int_eq(receiver_verify(q, s.secret, time(NULL), 300), RECEIVER_SIG_OK);
	ck_assert_uint_eq(distinct_ids(rc, 3), 2);
	free(first);
	receiver_stop(rc);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Outcomes                                                            */

START_TEST(fails_after_the_schedule)
{
	struct receiver *rc = receiver_up(500, 0, 0);
	struct sub s;

	sub_new(&s, rurl(rc));
	emit(&s, 1);
	ck_assert_int_eq(wait_deliveries(&s, "status = 'failed'", 1, WAIT_MS + 10000), 1);
	harness_sleep_ms(1500);
	ck_assert_int_eq((int)receiver_count(rc), ATTEMPTS);
	ck_assert_int_eq(sql_int("SELECT attempts FROM deliveries WHERE client_id = $1",
	    s.client, NULL), ATTEMPTS);
	ck_assert_int_eq(sql_int("SELECT last_status_code FROM deliveries WHERE client_id = $1",
	    s.client, NULL), 500);
	ck_assert_int_eq(deliveries(&s, "last_error = 'the endpoint answered 500'"), 1);
	/* every attempt logged once, numbered 1..5, about a second apart */
	ck_assert_int_eq(sql_int("SELECT count(DISTINCT attempt) FILTER (WHERE status_code = 500"
	    " AND attempt BETWEEN 1 AND 5) FROM delivery_attempts WHERE client_id = $1",
	    s.client, NULL), ATTEMPTS);
	ck_assert_int_eq(attempts(&s, "true"), ATTEMPTS);
	ck_assert_int_eq(sql_int("SELECT count(*) FROM (SELECT attempted_at - lag(attempted_at)"
	    " OVER (ORDER BY attempt) AS gap FROM delivery_attempts WHERE client_id = $1) g"
	    " WHERE gap >= interval '850 ms'", s.client, NULL), ATTEMPTS - 1);
	receiver_stop(rc);
}
END_TEST

START_TEST(gone_disables_the_subscription)
{
	struct receiver *rc = receiver_up(410, 0, 0);
	char *reason;
	struct sub s;

	sub_new(&s, rurl(rc));
	emit(&s, 1);
	ck_assert_int_eq(wait_deliveries(&s, "status = 'failed' AND attempts = 1"
	    " AND last_status_code = 410", 1, WAIT_MS), 1);
	ck_assert_int_eq(sql_int("SELECT count(*) FROM webhooks WHERE client_id = $1"
	    " AND NOT enabled", s.client, NULL), 1);
	reason = devacct_sql_value("SELECT disabled_reason FROM webhooks WHERE client_id = $1",
	    s.client, NULL);
	ck_assert_pstr_eq(reason, "the endpoint answered 410 Gone");
	free(reason);

	/* what is still queued for it fails without being sent */
	PQclear(sql("INSERT INTO deliveries (client_id, id, event_id, webhook_id)"
	    " SELECT client_id, 'dlv_' || gen_random_uuid(), event_id, webhook_id"
	    "   FROM deliveries WHERE client_id = $1", 1, s.client, NULL, NULL, NULL));
	ck_assert_int_eq(wait_deliveries(&s, "status = 'failed' AND attempts = 0"
	    " AND last_error = 'the subscription is disabled'", 1, WAIT_MS), 1);
	ck_assert_int_eq((int)receiver_count(rc), 1);
	ck_assert_int_eq(attempts(&s, "true"), 1);
	/* the developer sees why */
	{
		struct harness_resp *r = devacct_jwt(&dev, "GET",
		    harness_fmt("/v1/iam/clients/%s/webhooks", s.client), NULL, NULL);

		ck_assert_msg(r->status == 200, "%s", r->body);
		ck_assert_pstr_eq(devacct_str(r, "webhooks.0.id"), s.webhook);
		ck_assert_pstr_eq(devacct_str(r, "webhooks.0.disabledReason"),
		    "the endpoint answered 410 Gone");
		harness_resp_free(r);
	}
	receiver_stop(rc);
}
END_TEST

START_TEST(retry_after_is_honoured)
{
	struct receiver *rc = receiver_up(429, 0, 0);
	const struct receiver_req *a, *b;
	struct sub s;

	receiver_set_header(rc, "Retry-After: 3");
	sub_new(&s, rurl(rc));
	emit(&s, 1);
	ck_assert_ptr_nonnull(a = receiver_wait(rc, 0, WAIT_MS));
	receiver_set(rc, 200, 0);
	receiver_set_header(rc, NULL);
	ck_assert_int_eq(wait_deliveries(&s, "attempts = 1"
	    " AND last_status_code = 429", 1, WAIT_MS), 1);
	/* the schedule says 1 s; the endpoint asked for 3 */
	ck_assert_int_eq(sql_int("SELECT count(*) FROM deliveries d JOIN delivery_attempts a"
	    " ON a.client_id = d.client_id AND a.delivery_id = d.id"
	    " WHERE d.client_id = $1 AND d.next_attempt_at - a.attempted_at"
	    "       >= interval '2900 ms'", s.client, NULL), 1);
	ck_assert_ptr_nonnull(b = receiver_wait(rc, 1, WAIT_MS));
	ck_assert_msg(b->received_at - a->received_at >= 2, "retried after %lld s",
	    b->received_at - a->received_at);
	ck_assert_int_eq(wait_deliveries(&s, "status = 'succeeded'"
	    " AND attempts = 2", 1, WAIT_MS), 1);
	receiver_stop(rc);
}
END_TEST

/* URL safety at every delivery: a refused URL is an attempt with status 0
 * and the reason, retried like any failure. */
START_TEST(refused_url_is_a_failed_attempt)
{
	struct sub s;

	sub_new(&s, "http://127.0.0.1:9/hook");
	/* a URL that could only have come from a bad row or an old rule */
	PQclear(sql("UPDATE webhooks SET url = 'http://user:pw@127.0.0.1:9/hook'"
	    " WHERE client_id = $1", 1, s.client, NULL, NULL, NULL));
	emit(&s, 1);
	ck_assert_int_eq(wait_attempts(&s, "status_code = 0 AND error IS NOT NULL"
	    " AND latency_ms IS NULL", 2, WAIT_MS), 2);
	ck_assert_int_eq(deliveries(&s, "last_status_code = 0"
	    " AND last_error ILIKE '%user%'"), 1);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Faults                                                              */

/* Nothing listens, then the receiver comes up on that port: the backlog drains. */
START_TEST(receiver_down_then_up_drains)
{
	struct receiver *probe = receiver_up(200, 0, 0), *rc;
	int port = receiver_port(probe);
	struct sub s;

	receiver_stop(probe);	/* the port is free: connections are refused */
	sub_new(&s, harness_fmt("http://127.0.0.1:%d/hook", port));
	emit(&s, 20);
	ck_assert_int_eq(wait_deliveries(&s, "attempts >= 1 AND last_status_code = 0"
	    " AND lease_until IS NULL", 20, WAIT_MS), 20);
	ck_assert_int_eq(attempts(&s, "error = 'could not connect to the endpoint'") >= 20, 1);
	rc = receiver_up(200, 0, port);
	ck_assert_int_eq(wait_deliveries(&s, "status = 'succeeded'", 20, WAIT_MS), 20);
	harness_sleep_ms(300);
	ck_assert_uint_eq(receiver_count(rc), 20);
	ck_assert_uint_eq(distinct_ids(rc, 20), 20);
	for (size_t i = 0; i < 20; i++)
		ck_assert_int_eq(receiver_verify(receiver_wait(rc, i, 0), s.secret, time(NULL),
		    300), RECEIVER_SIG_OK);
	receiver_stop(rc);
}
END_TEST

/*
 * kill -9 while a batch is in flight (the receiver answers slowly); the
 * restarted deliverer sends the leased rows once the lease ends: every
 * event arrives at least once.
 */
START_TEST(kill9_mid_batch_redelivers)
{
	struct receiver *rc = receiver_up(200, 4000, 0);
	pid_t pid = harness_deliver_pid();
	long long end;
	struct sub s;

	ck_assert_int_ne(pid, 0);
	sub_new(&s, rurl(rc));
	emit(&s, 12);
	/* the batch is in flight: requests arrived, none answered yet */
	ck_assert_ptr_nonnull(receiver_wait(rc, 0, WAIT_MS));
	harness_sleep_ms(300);
	ck_assert_int_eq(kill(pid, SIGKILL), 0);
	for (end = harness_now_ms() + 5000; harness_deliver_pid() != 0 &&
	    harness_now_ms() < end;)
		harness_sleep_ms(20);
	ck_assert_int_eq(harness_deliver_pid(), 0);
	ck_assert_int_eq(deliveries(&s, "status = 'pending'"
	    " AND lease_until > now()") > 0, 1);
	receiver_set(rc, 200, 0);
	ck_assert_msg(harness_deliver_start(NULL) == 0, "%s", harness_error());
	/* after the lease (20 s) every delivery is sent and recorded */
	ck_assert_int_eq(wait_deliveries(&s, "status = 'succeeded'", 12, (LEASE + 15) * 1000), 12);
	ck_assert_uint_eq(distinct_ids(rc, receiver_count(rc)), 12);
	/* the killed claim left no log; the one after it is attempt 2 */
	ck_assert_int_eq(deliveries(&s, "attempts = 2") > 0, 1);
	receiver_stop(rc);
}
END_TEST

/*
 * Two deliverers at once never send one attempt twice: with the receiver
 * failing, every delivery is received exactly once per attempt, and each
 * attempt number is logged exactly once.
 */
START_TEST(two_deliverers_never_double_send)
{
	struct receiver *rc = receiver_up(200, 0, 0);
	char log2[1024];
	char *both;
	pid_t second;
	struct sub s;
	int st;

	/* a copy: harness_fmt's buffers rotate under the queries below */
	snprintf(log2, sizeof(log2), "%s/bds-deliver-2.log", harness_dir());
	second = deliverer_spawn(log2);
	sub_new(&s, rurl(rc));
	harness_sleep_ms(500);	/* the second one listens */
	/* successes: each delivery exactly once */
	for (int i = 0; i < 8; i++)
		emit(&s, 20);
	ck_assert_int_eq(wait_deliveries(&s, "status = 'succeeded'", 160, WAIT_MS), 160);
	harness_sleep_ms(500);
	ck_assert_uint_eq(receiver_count(rc), 160);
	ck_assert_uint_eq(distinct_ids(rc, 160), 160);
	ck_assert_int_eq(attempts(&s, "attempt = 1"), 160);
	receiver_stop(rc);

	/* failures: every attempt exactly once, on either deliverer */
	rc = receiver_up(503, 0, 0);
	PQclear(sql("UPDATE webhooks SET url = $2 WHERE client_id = $1", 2, s.client,
	    rurl(rc), NULL, NULL));
	emit(&s, 16);
	ck_assert_int_eq(wait_deliveries(&s, "status = 'failed'", 16, WAIT_MS + 10000), 16);
	harness_sleep_ms(500);
	ck_assert_uint_eq(receiver_count(rc), 16 * ATTEMPTS);
	ck_assert_int_eq(sql_int("SELECT count(*) FROM (SELECT delivery_id FROM delivery_attempts"
	    " WHERE client_id = $1 AND status_code = 503 GROUP BY delivery_id"
	    " HAVING count(*) = 5 AND count(DISTINCT attempt) = 5 AND max(attempt) = 5) x",
	    s.client, NULL), 16);
	for (size_t i = 0; i < receiver_count(rc); i++) {
		const char *id = receiver_header(receiver_wait(rc, i, 0), "X-Webhook-Id");
		size_t same = 0;

		for (size_t k = 0; k < receiver_count(rc); k++)
			same += strcmp(receiver_header(receiver_wait(rc, k, 0), "X-Webhook-Id"),
			    id) == 0;
		ck_assert_uint_eq(same, ATTEMPTS);
	}
	kill(second, SIGTERM);
	ck_assert_int_eq(waitpid(second, &st, 0), second);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "second deliverer: %d", st);
	/* the second one did part of the work */
	both = harness_slurp(log2);
	ck_assert_msg(both != NULL && strstr(both, "queue=webhook id=") != NULL,
	    "the second deliverer sent nothing");
	free(both);
	receiver_stop(rc);
}
END_TEST

/* What a rolled-back transaction wrote is never sent (NOTIFY fires at commit
 * only, and the poll finds nothing). */
START_TEST(rolled_back_sends_nothing)
{
	struct receiver *rc = receiver_up(200, 0, 0);
	PGresult *res;
	struct sub s;

	sub_new(&s, rurl(rc));
	PQclear(sql("BEGIN", 0, NULL, NULL, NULL, NULL));
	emit(&s, 3);
	res = sql("SELECT count(*) FROM deliveries WHERE client_id = $1", 1, s.client, NULL,
	    NULL, NULL);
	ck_assert_str_eq(PQgetvalue(res, 0, 0), "3");
	PQclear(res);
	PQclear(sql("ROLLBACK", 0, NULL, NULL, NULL, NULL));
	harness_sleep_ms(2500);
	ck_assert_uint_eq(receiver_count(rc), 0);
	emit(&s, 1);
	ck_assert_ptr_nonnull(receiver_wait(rc, 0, WAIT_MS));
	harness_sleep_ms(300);
	ck_assert_uint_eq(receiver_count(rc), 1);
	receiver_stop(rc);
}
END_TEST

static Suite *
delivery_suite(void)
{
	Suite *s = suite_create("e2e_delivery");
	TCase *tc = tcase_create("delivery");

	tcase_add_unchecked_fixture(tc, stack, harness_fixture_stop);
	tcase_add_checked_fixture(tc, recover, NULL);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, schedule_parse);
	tcase_add_test(tc, delivers_signed_envelopes);
	tcase_add_test(tc, rotation_signs_with_both_secrets);
	tcase_add_test(tc, duplicates_keep_the_event_id);
	tcase_add_test(tc, fails_after_the_schedule);
	tcase_add_test(tc, gone_disables_the_subscription);
	tcase_add_test(tc, retry_after_is_honoured);
	tcase_add_test(tc, refused_url_is_a_failed_attempt);
	tcase_add_test(tc, receiver_down_then_up_drains);
	tcase_add_test(tc, rolled_back_sends_nothing);
	tcase_add_test(tc, two_deliverers_never_double_send);
	tcase_add_test(tc, kill9_mid_batch_redelivers);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return harness_run_suite(delivery_suite());
}
