/*
 * The portal connector end to end: the real stack, bds-jobs and
 * the biller simulator (tools/biller-sim, t/e2e/sim.h) as the biller. A
 * client's end user links a simulator customer through the connect flow
 * (token, ticket, session, credentials, MFA), the retrieval brings the
 * statements, payments and PDFs, and the simulator's knobs make every
 * failure of shared PORTAL.md happen: rejected credentials, a lock, an
 * expired consent or session, MFA on a refresh, 5xx and 503 with
 * Retry-After, malformed answers, a killed biller; and every status signal:
 * a zero balance, a payment observed or partial or reversed, a statement
 * withdrawn, unlisted, corrected, one whose document is all there is, a
 * next statement carrying the balance. Each test asserts the link's state
 * and the exact events (the events table; some at a webhook receiver).
 *
 * Every test uses its own simulator customer (cust000NN) and its own
 * client, so knobs and event counts never mix. Refreshes go through
 * `bdsctl links refresh` (no throttle); a test waits for the link's newest
 * retrieval job to end.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>
#include <json-c/json.h>
#include <libpq-fe.h>

#include "core/crypto.h"
#include "devacct.h"
#include "harness.h"
#include "receiver.h"
#include "sim.h"

#define POWER		"blr_01900000-0000-7000-8000-0000000000b1"
#define TOKYO		"blr_01900000-0000-7000-8000-0000000000b2"
#define WATER		"blr_01900000-0000-7000-8000-0000000000b3"	/* no sandbox_portal */
#define WAIT_MS		60000
#define STATEMENTS	12

static struct devacct dev;

/* ------------------------------------------------------------------ */
/* SQL and events                                                      */

/* The first value of q with up to three text parameters (malloc'ed, NULL
 * for no row or SQL NULL). */
static char *
sqlv(const char *q, const char *p1, const char *p2, const char *p3)
{
	const char *p[3] = { p1, p2, p3 };
	int n = p3 != NULL ? 3 : p2 != NULL ? 2 : p1 != NULL ? 1 : 0;
	PGresult *res = PQexecParams(devacct_pg(), q, n, NULL, p, NULL, NULL, 0);
	char *v = NULL;

	ck_assert_msg(PQresultStatus(res) == PGRES_TUPLES_OK ||
	    PQresultStatus(res) == PGRES_COMMAND_OK, "%s: %s", q, PQresultErrorMessage(res));
	if (PQntuples(res) >= 1 && !PQgetisnull(res, 0, 0))
		v = strdup(PQgetvalue(res, 0, 0));
	PQclear(res);
	return v;
}

static long long
sqln(const char *q, const char *p1, const char *p2, const char *p3)
{
	char *v = sqlv(q, p1, p2, p3);
	long long n = v != NULL ? atoll(v) : -1;

	free(v);
	return n;
}

/* Events of the client of a type whose data.object contains match (a JSON
 * object; "{}" for all). */
static long long
evn(const char *client, const char *type, const char *match)
{
	return sqln("SELECT count(*) FROM events WHERE client_id = $1 AND type = $2"
	    " AND data->'object' @> $3::jsonb", client, type, match);
}

/* Every event of the client. */
static long long
ev_all(const char *client)
{
	/* the bills' and links' own events: the insights run each bill write
	 * queues adds its own (check_e2e_insights counts those) */
	return sqln("SELECT count(*) FROM events WHERE client_id = $1"
	    " AND type NOT LIKE 'insight.%'", client, NULL, NULL);
}

/* ------------------------------------------------------------------ */
/* The simulator                                                       */

static char *
user_of(int n)
{
	char *u = malloc(16);

	snprintf(u, 16, "cust%05d", n);
	return u;
}

static const char *
pass_of(const char *user)
{
	return harness_fmt("pw-%s", user);
}

/* Knobs on a customer of a biller key ("power"). */
static void
knobs(const char *key, const char *user, const char *json)
{
	ck_assert_msg(sim_knobs(key, user, json) == 0, "knobs %s/%s %s", key, user, json);
}

/* Statement i (newest first) of the customer's first account as the
 * simulator lists it now: a member as text (malloc'ed). */
static char *
sim_statement(const char *key, const char *user, int i, const char *member)
{
	struct json_object *o, *accts, *sts, *st, *v;
	char *out = NULL;

	ck_assert_int_eq(sim_admin("GET", harness_fmt("/_admin/accounts/%s/%s", key, user), NULL,
	    &o), 200);
	ck_assert(json_object_object_get_ex(o, "accounts", &accts));
	ck_assert(json_object_object_get_ex(json_object_array_get_idx(accts, 0), "statements",
	    &sts));
	st = json_object_array_get_idx(sts, (size_t)i);
	ck_assert_ptr_nonnull(st);
	if (json_object_object_get_ex(st, member, &v) && v != NULL)
		out = strdup(json_object_get_string(v));
	json_object_put(o);
	return out;
}

/* A counter of the simulator's stats for a biller (sim.h), which must be
 * readable. */
static long long
stat_of(const char *key, const char *name)
{
	long long n = sim_counter(key, name);

	ck_assert_msg(n >= 0, "the simulator's stat %s of %s", name, key);
	return n;
}

/* ------------------------------------------------------------------ */
/* A client and its end user's connect flow                            */

struct tenant {
	char		*client, *key;
	struct receiver	*rc;
};

/* A client of the developer, its sandbox key, and (webhook) a receiver
 * subscribed to every event. */
static void
tenant_new(struct tenant *t, int webhook)
{
	t->client = devacct_client_new(&dev);
	t->key = devacct_key_new(&dev, t->client, "sandbox");
	t->rc = NULL;
	if (webhook) {
		t->rc = receiver_start(NULL);
		ck_assert_msg(t->rc != NULL, "receiver: %s", receiver_error());
		devacct_subscribe(t->key, t->rc);
	}
}

static void
tenant_free(struct tenant *t)
{
	receiver_stop(t->rc);
	free(t->client);
	free(t->key);
}

/* A request of the page (bearer: the link token or session token). */
static struct harness_resp *
page(const char *bearer, const char *method, const char *path, const char *body)
{
	return devacct_call(method, "sandbox", path, bearer ? devacct_bearer(bearer) : NULL,
	    body, NULL);
}

/* body's member as a malloc'ed copy after the expected status. */
static char *
answer(struct harness_resp *r, long status, const char *member)
{
	char *v;

	harness_expect(r, status);
	v = strdup(devacct_str(r, member));
	harness_resp_free(r);
	return v;
}

/* A link token (create mode, or update mode for link) and a session on it:
 * the session token (malloc'ed); *lt the link token (malloc'ed). */
static char *
session_open(const struct tenant *t, const char *user, const char *update, char **lt)
{
	char *tk, *st;

	*lt = answer(devacct_call("POST", "sandbox", "/v1/link-tokens", devacct_bearer(t->key),
	    update == NULL ? harness_fmt("{\"client_user_id\":\"u-%s\"}", user) :
	    harness_fmt("{\"client_user_id\":\"u-%s\",\"update\":{\"link_id\":\"%s\","
	    "\"reason\":\"credentials_invalid\"}}", user, update), NULL), 201, "link_token");
	tk = answer(page(*lt, "POST", "/v1/biller-connect/ticket", NULL), 201, "ticket");
	st = answer(page(NULL, "POST", "/v1/link-sessions", harness_fmt("{\"ticket\":\"%s\"}",
	    tk)), 201, "session_token");
	free(tk);
	return st;
}

/* The session's state once bds-jobs ran its connect job. */
static struct harness_resp *
current(const char *st)
{
	struct harness_resp *r;

	ck_assert_msg(harness_jobs_wait_idle(WAIT_MS) == 0, "%s", harness_error());
	r = page(st, "GET", "/v1/link-sessions/current", NULL);
	harness_expect(r, 200);
	return r;
}

/* The session's state once its connect job ran, without waiting for the
 * retrieval it queued. */
static struct harness_resp *
current_connected(const char *st)
{
	long long end = harness_now_ms() + WAIT_MS;

	for (;;) {
		struct harness_resp *r = page(st, "GET", "/v1/link-sessions/current", NULL);

		harness_expect(r, 200);
		if (strcmp(devacct_str(r, "status"), "connecting") != 0)
			return r;
		harness_resp_free(r);
		ck_assert_msg(harness_now_ms() < end, "the connect job never ran");
		harness_sleep_ms(20);
	}
}

/* Credentials sent; the session's state after the connect job. */
static struct harness_resp *
connect_as(const char *st, const char *biller, const char *user, const char *pass)
{
	struct harness_resp *r = page(st, "POST", "/v1/link-sessions/connect", harness_fmt(
	    "{\"biller_id\":\"%s\",\"username\":\"%s\",\"password\":\"%s\"}", biller, user, pass));

	harness_expect(r, 202);
	harness_resp_free(r);
	return current(st);
}

static struct harness_resp *
mfa_answer(const char *st, const char *answer_text)
{
	struct harness_resp *r = page(st, "POST", "/v1/link-sessions/mfa",
	    harness_fmt("{\"answer\":\"%s\"}", answer_text));

	harness_expect(r, 202);
	harness_resp_free(r);
	return current(st);
}

/* A connected session's public token exchanged: the link id (malloc'ed). */
static char *
exchange(const struct tenant *t, struct harness_resp *cur, const char *lt)
{
	char *pub, *link;

	ck_assert_pstr_eq(devacct_str(cur, "status"), "connected");
	pub = strdup(devacct_str(cur, "public_token"));
	harness_resp_free(cur);
	link = answer(devacct_call("POST", "sandbox", harness_fmt("/v1/link-tokens/%s/exchange",
	    lt), devacct_bearer(t->key), harness_fmt("{\"public_token\":\"%s\"}", pub), NULL), 200,
	    "link_id");
	free(pub);
	return link;
}

/* "status attempts last_error" of the link's newest retrieval job. */
static char *
job_state(const char *link)
{
	return sqlv("SELECT status || ' ' || attempts || ' ' || coalesce(last_error, '-')"
	    " FROM jobs WHERE kind = 'retrieval' AND subject_id = $1"
	    " ORDER BY created_at DESC, id DESC LIMIT 1", link, NULL, NULL);
}

/* Wait until the link's newest retrieval job ended (done or dead), then
 * until bds-jobs is idle (the reconciliation it queued); its state. */
static char *
wait_done(const char *link)
{
	long long end = harness_now_ms() + WAIT_MS;
	char *s;

	for (;;) {
		s = job_state(link);
		if (s != NULL && (strncmp(s, "done ", 5) == 0 || strncmp(s, "dead ", 5) == 0))
			break;
		ck_assert_msg(harness_now_ms() < end, "retrieval of %s: still %s", link, s);
		free(s);
		harness_sleep_ms(50);
	}
	ck_assert_msg(harness_jobs_wait_idle(WAIT_MS) == 0, "%s", harness_error());
	return s;
}

/* Wait until the link's newest retrieval job failed an attempt (pending
 * again with its error); its state. */
static char *
wait_failed(const char *link)
{
	long long end = harness_now_ms() + WAIT_MS;
	char *s;

	for (;;) {
		s = job_state(link);
		if (s != NULL && strncmp(s, "pending ", 8) == 0 && strstr(s, " -") == NULL)
			return s;
		ck_assert_msg(s == NULL || strncmp(s, "done ", 5) != 0,
		    "retrieval of %s: done, no failure seen", link);
		ck_assert_msg(harness_now_ms() < end, "retrieval of %s: still %s", link, s);
		free(s);
		harness_sleep_ms(20);
	}
}

/* No more attempts of the link's failing retrieval: the pending one marked
 * done (waiting out one that a runner holds). */
static void
stop_retries(const char *link)
{
	long long end = harness_now_ms() + WAIT_MS;

	for (;;) {
		devacct_sql_exec("UPDATE jobs SET status = 'done' WHERE kind = 'retrieval'"
		    " AND subject_id = $1 AND status = 'pending'", link, NULL);
		if (sqln("SELECT count(*) FROM jobs WHERE kind = 'retrieval' AND subject_id = $1"
		    " AND status IN ('pending', 'running')", link, NULL, NULL) == 0)
			return;
		ck_assert_msg(harness_now_ms() < end, "retrieval of %s never stops", link);
		harness_sleep_ms(20);
	}
}

/* The link's newest retrieval failed an attempt with error. */
static void
failed_with(const char *link, const char *error)
{
	char *s = wait_failed(link);

	ck_assert_str_eq(s, harness_fmt("pending 1 %s", error));
	free(s);
}

/* `bdsctl links refresh ID`: the link's retrieval now. */
static void
refresh(const char *link)
{
	const char *args[] = { "links", "refresh", link, NULL };

	ck_assert_int_eq(harness_bdsctl(args), 0);
}

/* refresh, then wait for its end: its state must be done. */
static void
refresh_done(const char *link)
{
	char *s;

	refresh(link);
	s = wait_done(link);
	ck_assert_msg(strncmp(s, "done ", 5) == 0, "retrieval of %s: %s", link, s);
	free(s);
	ck_assert_int_eq(devacct_bills_unreconciled(link), 0);
}

/* Link the biller's customer user through the connect flow: the link id
 * (malloc'ed); its first retrieval queued, not awaited. */
static char *
connect_link(const struct tenant *t, const char *biller, const char *user)
{
	char *lt, *st = session_open(t, user, NULL, &lt), *link;

	link = exchange(t, connect_as(st, biller, user, pass_of(user)), lt);
	free(st);
	free(lt);
	return link;
}

/* connect_link, its first retrieval ended. */
static char *
link_portal(const struct tenant *t, const char *biller, const char *user)
{
	char *link = connect_link(t, biller, user);

	free(wait_done(link));
	return link;
}

/* A client (and a receiver when webhook) whose end user linked the
 * biller's customer user: the link id (malloc'ed), retrieved. */
static char *
linked(struct tenant *t, int webhook, const char *biller, const char *user)
{
	tenant_new(t, webhook);
	return link_portal(t, biller, user);
}

/* The end of a test: its strings (NULL allowed) and its client. */
static void
finish(struct tenant *t, char *user, char *link, char *bill)
{
	/* whatever the test did, every bill's money reconciles */
	if (link != NULL)
		ck_assert_int_eq(devacct_bills_unreconciled(link), 0);
	free(bill);
	free(link);
	free(user);
	tenant_free(t);
}

static char *
link_status(const char *link)
{
	return sqlv("SELECT status || '/' || coalesce(disconnect_reason, '-') || '/' ||"
	    " coalesce(credential_rejection_reason, '-') FROM links WHERE id = $1", link, NULL,
	    NULL);
}

static void
assert_link(const char *link, const char *want)
{
	char *s = link_status(link);

	ck_assert_pstr_eq(s, want);
	free(s);
}

/* knob on the customer, then a refresh the connector refuses whole with
 * error: no more attempts after it (while the next case is set up), no
 * event since events were counted, the link still ACTIVE. */
static void
refresh_refused(const struct tenant *t, const char *user, const char *link, const char *knob,
    const char *error, long long events)
{
	knobs("power", user, knob);
	refresh(link);
	failed_with(link, error);
	stop_retries(link);
	ck_assert_int_eq(ev_all(t->client), events);
	assert_link(link, "ACTIVE/-/-");
}

/* The bill of the simulator's statement i of the link's customer. */
static char *
bill_of(const char *link, const char *key, const char *user, int i)
{
	char *ref = sim_statement(key, user, i, "id"), *id;

	id = sqlv("SELECT id FROM bills WHERE link_id = $1 AND statement_ref = $2", link, ref,
	    NULL);
	ck_assert_msg(id != NULL, "no bill of %s", ref);
	free(ref);
	return id;
}

static long long
bills_live(const char *link)
{
	return sqln("SELECT count(*) FROM bills WHERE link_id = $1 AND deleted_at IS NULL", link,
	    NULL, NULL);
}

/* ------------------------------------------------------------------ */
/* Linking and the first retrieval                                     */

/*
 * A link through the connect flow: connect job, exchange, link.completed;
 * the first retrieval stores every statement as the simulator lists it
 * (figures, dates, items, paid by its posted payment), the payments
 * (payment.observed, matched), the PDFs (served by the statement URL,
 * byte for byte), and connection.ready once. A second retrieval writes
 * nothing and fetches no document again.
 */
START_TEST(link_and_first_retrieval)
{
	struct tenant t;
	struct harness_resp *r;
	char *user = user_of(1), *link, *bill, *v, *url, *sha;
	long long docs, events;

	link = linked(&t, 1, POWER, user);
	assert_link(link, "ACTIVE/-/-");
	ck_assert_int_eq(evn(t.client, "link.completed", harness_fmt("{\"id\":\"%s\"}", link)), 1);
	ck_assert_int_eq(bills_live(link), STATEMENTS);
	ck_assert_int_eq(evn(t.client, "bill.created", "{}"), STATEMENTS);
	/* every statement but the newest is paid by its posted payment */
	ck_assert_int_eq(evn(t.client, "payment.observed", "{}"), STATEMENTS - 1);
	ck_assert_int_eq(evn(t.client, "bill.updated", "{\"change\":\"paid\","
	    "\"paid_reason\":\"portal_payment_observed\"}"), STATEMENTS - 1);
	/* their paid_at written as the entity writes it (the portal's instant
	 * to the millisecond, UTC, Z) */
	ck_assert_int_eq(sqln("SELECT count(*) FROM events e JOIN bills b ON b.client_id ="
	    " e.client_id AND b.id = e.data->'object'->>'id' WHERE e.client_id = $1"
	    " AND e.type = 'bill.updated' AND e.data->'object'->>'change' = 'paid'"
	    " AND e.data->'object'->>'paid_at' = bds_iso(b.paid_at)"
	    " AND e.data->'object'->>'paid_at' LIKE '____-__-__T__:__:__.___Z'", t.client, NULL,
	    NULL), STATEMENTS - 1);
	ck_assert_int_eq(evn(t.client, "connection.ready", harness_fmt("{\"link_id\":\"%s\","
	    "\"bill_count\":%d}", link, STATEMENTS)), 1);
	ck_assert_int_eq(sqln("SELECT count(*) FROM bills WHERE link_id = $1 AND status = 'PAID'"
	    " AND paid_reason = 'portal_payment_observed' AND match_status = 'MATCHED'", link, NULL,
	    NULL), STATEMENTS - 1);
	/* each matched to its own payment, in the row and in the entity */
	ck_assert_int_eq(sqln("SELECT count(*) FROM bills b JOIN observed_payments p"
	    " ON p.bill_id = b.id AND p.payment_ref = b.matched_payment_ref"
	    " AND p.statement_ref = b.statement_ref WHERE b.link_id = $1"
	    " AND b.entity::jsonb ->> 'match_status' = 'MATCHED'"
	    " AND b.entity::jsonb ->> 'matched_payment_ref' = p.payment_ref", link, NULL, NULL),
	    STATEMENTS - 1);

	/* the newest as the simulator lists it */
	bill = bill_of(link, "power", user, 0);
	r = devacct_call("GET", "sandbox", harness_fmt("/v1/bills/%s", bill), devacct_bearer(t.key),
	    NULL, NULL);
	harness_expect(r, 200);
	ck_assert_pstr_eq(devacct_str(r, "status"), "PENDING");
	v = sim_statement("power", user, 0, "amount_due");
	ck_assert_pstr_eq(devacct_str(r, "total_amount.value"), v);
	ck_assert_pstr_eq(devacct_str(r, "amount_due.value"), v);
	ck_assert_pstr_eq(devacct_str(r, "total_amount.currency"), "USD");
	free(v);
	v = sim_statement("power", user, 0, "due_date");
	ck_assert_pstr_eq(devacct_str(r, "due_date_iso"), v);
	free(v);
	v = sim_statement("power", user, 0, "bill_number");
	ck_assert_pstr_eq(devacct_str(r, "bill_number"), v);
	free(v);
	ck_assert_pstr_eq(devacct_str(r, "line_items.0.category"), "usage");
	ck_assert_ptr_nonnull(devacct_json(r, "usage.0.quantity"));
	ck_assert(devacct_bool(r, "has_statement"));
	harness_resp_free(r);

	/* its PDF, as nginx serves it, is the one stored */
	url = answer(devacct_call("GET", "sandbox", harness_fmt("/v1/bills/%s/statement", bill),
	    devacct_bearer(t.key), NULL, NULL), 200, "url");
	r = harness_get("sandbox", strstr(url, "/v1/"));
	ck_assert_int_eq(r->status, 200);
	ck_assert_pstr_eq(harness_header(r, "Content-Type"), "application/pdf");
	ck_assert(r->body_len > 5 && memcmp(r->body, "%PDF-", 5) == 0);
	{
		unsigned char md[32];
		char hex[65];

		crypto_sha256(r->body, r->body_len, md);
		for (int i = 0; i < 32; i++)
			snprintf(hex + 2 * i, 3, "%02x", md[i]);
		sha = sqlv("SELECT statement_sha256 FROM bills WHERE id = $1", bill, NULL, NULL);
		ck_assert_pstr_eq(sha, hex);
	}
	harness_resp_free(r);
	ck_assert_int_eq(sqln("SELECT count(*) FROM bills WHERE link_id = $1"
	    " AND statement_sha256 IS NOT NULL", link, NULL, NULL), STATEMENTS);

	/* at the client's webhook */
	ck_assert_int_eq(harness_deliver_once(), 0);
	{
		int ready = 0;

		for (size_t i = 0; receiver_wait(t.rc, i, 2000) != NULL; i++)
			ready += strstr(receiver_wait(t.rc, i, 0)->body,
			    "\"type\":\"connection.ready\"") != NULL;
		ck_assert_int_eq(ready, 1);
	}

	/* nothing new: nothing written, no document fetched again */
	events = ev_all(t.client);
	docs = stat_of("power", "requests.document");
	refresh_done(link);
	ck_assert_int_eq(ev_all(t.client), events);
	ck_assert_int_eq(stat_of("power", "requests.document"), docs);
	ck_assert_int_eq(bills_live(link), STATEMENTS);
	/* the time inside the biller, kept for the benchmark */
	ck_assert_int_eq(sqln("SELECT count(*) FROM portal_link_state WHERE link_id = $1"
	    " AND retrievals = 2 AND portal_ns > 0 AND run_ns >= portal_ns", link, NULL, NULL), 1);
	/* nothing of the credentials in plaintext */
	ck_assert_int_eq(sqln("SELECT count(*) FROM links WHERE id = $1"
	    " AND position(convert_to($2, 'UTF8') IN credentials) > 0", link, pass_of(user), NULL),
	    0);
	free(sha);
	free(url);
	finish(&t, user, link, bill);
}
END_TEST

/* A JPY biller: money at exponent 0 all the way. */
START_TEST(jpy_biller)
{
	struct tenant t;
	struct harness_resp *r;
	char *user = user_of(2), *link, *bill, *v;

	link = linked(&t, 0, TOKYO, user);
	ck_assert_int_eq(bills_live(link), STATEMENTS);
	bill = bill_of(link, "tokyo-gas", user, 0);
	r = devacct_call("GET", "sandbox", harness_fmt("/v1/bills/%s", bill), devacct_bearer(t.key),
	    NULL, NULL);
	harness_expect(r, 200);
	v = sim_statement("tokyo-gas", user, 0, "amount_due");
	ck_assert_ptr_null(strchr(v, '.'));
	ck_assert_pstr_eq(devacct_str(r, "total_amount.value"), v);
	ck_assert_pstr_eq(devacct_str(r, "total_amount.currency"), "JPY");
	harness_resp_free(r);
	free(v);
	finish(&t, user, link, bill);
}
END_TEST

/* ------------------------------------------------------------------ */
/* The connect flow's MFA and failures                                 */

/*
 * MFA at connect: the biller's challenge is shown, a wrong answer is
 * MFA_FAILED with a new challenge, the right one connects; the device
 * token it gave is stored sealed and sent on every refresh, which the
 * biller then lets in without a challenge.
 */
START_TEST(mfa_and_device_token)
{
	struct tenant t;
	struct harness_resp *r;
	char *user = user_of(3), *lt, *st, *link;
	long long challenges;

	tenant_new(&t, 0);
	knobs("power", user, "{\"mfa\":\"424242\"}");
	challenges = stat_of("power", "mfa_challenges");
	st = session_open(&t, user, NULL, &lt);
	r = connect_as(st, POWER, user, pass_of(user));
	ck_assert_pstr_eq(devacct_str(r, "status"), "mfa_required");
	ck_assert_pstr_eq(devacct_str(r, "mfa.type"), "code");
	ck_assert_ptr_nonnull(devacct_str(r, "mfa.prompt"));
	harness_resp_free(r);
	ck_assert_int_eq(stat_of("power", "mfa_challenges"), challenges + 1);
	/* the challenge is kept sealed, never in plaintext */
	ck_assert_int_eq(sqln("SELECT count(*) FROM portal_challenges c JOIN link_sessions s"
	    " ON s.client_id = c.client_id AND s.id = c.session_id WHERE s.client_id = $1",
	    t.client, NULL, NULL), 1);

	r = mfa_answer(st, "000000");
	ck_assert_pstr_eq(devacct_str(r, "status"), "mfa_required");
	ck_assert_pstr_eq(devacct_str(r, "error_code"), "MFA_FAILED");
	harness_resp_free(r);
	/* a new challenge for the next answer */
	ck_assert_int_eq(stat_of("power", "mfa_challenges"), challenges + 2);

	link = exchange(&t, mfa_answer(st, "424242"), lt);
	free(wait_done(link));
	assert_link(link, "ACTIVE/-/-");
	ck_assert_int_eq(bills_live(link), STATEMENTS);
	ck_assert_int_eq(sqln("SELECT count(*) FROM portal_challenges WHERE client_id = $1",
	    t.client, NULL, NULL), 0);
	ck_assert_int_eq(stat_of("power", "mfa_challenges"), challenges + 2);
	/* the device token: sealed with the credentials, never in plaintext */
	ck_assert_int_eq(sqln("SELECT count(*) FROM links WHERE id = $1"
	    " AND position(convert_to('dt-', 'UTF8') IN credentials) > 0", link, NULL, NULL), 0);

	/* a refresh sends it: no challenge, the link stays */
	refresh_done(link);
	assert_link(link, "ACTIVE/-/-");
	ck_assert_int_eq(stat_of("power", "mfa_challenges"), challenges + 2);
	ck_assert_int_eq(evn(t.client, "link.disconnected", "{}"), 0);
	free(link);
	free(st);
	free(lt);
	free(user);
	tenant_free(&t);
}
END_TEST

/* Wrong password, a lock, a biller that is away: the session shows each;
 * no link is made. */
START_TEST(connect_failures)
{
	struct tenant t;
	struct harness_resp *r;
	char *user = user_of(5), *lt, *st;

	tenant_new(&t, 0);
	st = session_open(&t, user, NULL, &lt);
	r = connect_as(st, POWER, user, "wrong");
	ck_assert_pstr_eq(devacct_str(r, "status"), "failed");
	ck_assert_pstr_eq(devacct_str(r, "error_code"), "INVALID_CREDENTIALS");
	ck_assert_int_eq(devacct_int(r, "attempts_remaining"), 4);
	harness_resp_free(r);

	knobs("power", user, "{\"locked\":true}");
	r = connect_as(st, POWER, user, pass_of(user));
	ck_assert_pstr_eq(devacct_str(r, "error_code"), "ACCOUNT_LOCKED");
	ck_assert_int_eq(devacct_int(r, "attempts_remaining"), 4);
	harness_resp_free(r);

	knobs("power", user, "{\"locked\":null,\"fail_always\":true,\"fail_endpoint\":\"session\","
	    "\"fail_status\":503}");
	r = connect_as(st, POWER, user, pass_of(user));
	ck_assert_pstr_eq(devacct_str(r, "error_code"), "BILLER_UNAVAILABLE");
	harness_resp_free(r);

	/* a broken answer to the login is the biller being away too */
	knobs("power", user, "{\"fail_always\":null,\"malformed\":\"missing_field\","
	    "\"malformed_endpoint\":\"session\"}");
	r = connect_as(st, POWER, user, pass_of(user));
	ck_assert_pstr_eq(devacct_str(r, "error_code"), "BILLER_UNAVAILABLE");
	harness_resp_free(r);

	knobs("power", user, "{\"malformed\":null}");
	r = connect_as(st, POWER, user, pass_of(user));
	ck_assert_pstr_eq(devacct_str(r, "status"), "connected");
	harness_resp_free(r);
	/* only the wrong password's pre-completion one (no link id) */
	ck_assert_int_eq(evn(t.client, "link.disconnected", "{}"), 1);
	ck_assert_int_eq(evn(t.client, "link.disconnected", harness_fmt("{\"id\":\"\","
	    "\"link_token_id\":\"%s\",\"reason\":\"credentials_rejected\","
	    "\"credential_rejection_reason\":\"INVALID_CREDENTIALS\"}", lt)), 1);
	free(st);
	free(lt);
	free(user);
	tenant_free(&t);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Disconnects on refresh, and update mode                             */

/* The link was disconnected once, with these reasons and the connector's
 * note. */
static void
assert_disconnected(const struct tenant *t, const char *link, const char *reason,
    const char *rejection, const char *note)
{
	char *v;

	assert_link(link, harness_fmt("DISCONNECTED/%s/%s", reason, rejection ? rejection : "-"));
	ck_assert_int_eq(evn(t->client, "link.disconnected", "{}"), 1);
	ck_assert_int_eq(evn(t->client, "link.disconnected", rejection != NULL ?
	    harness_fmt("{\"id\":\"%s\",\"object\":\"link\",\"reason\":\"%s\","
	    "\"credential_rejection_reason\":\"%s\",\"biller_id\":\"%s\"}", link, reason,
	    rejection, POWER) : harness_fmt("{\"id\":\"%s\",\"object\":\"link\",\"reason\":\"%s\","
	    "\"biller_id\":\"%s\"}", link, reason, POWER)), 1);
	v = sqlv("SELECT detail FROM portal_link_state WHERE link_id = $1", link, NULL, NULL);
	ck_assert_pstr_eq(v, note);
	free(v);
}

/* Update mode: a new session for the link, connected, the same link
 * ACTIVE again and retrieved; no second link.completed. */
static void
repair(const struct tenant *t, const char *link, const char *user, const char *pass)
{
	long long runs = sqln("SELECT refresh_count FROM links WHERE id = $1", link, NULL, NULL);
	char *lt, *st = session_open(t, user, link, &lt), *same;

	same = exchange(t, connect_as(st, POWER, user, pass), lt);
	ck_assert_str_eq(same, link);
	free(wait_done(link));
	assert_link(link, "ACTIVE/-/-");
	ck_assert_int_eq(sqln("SELECT refresh_count FROM links WHERE id = $1", link, NULL, NULL),
	    runs + 1);
	ck_assert_int_eq(sqln("SELECT count(*) FROM links WHERE id = $1 AND sync_status = 'ok'",
	    link, NULL, NULL), 1);
	ck_assert_int_eq(evn(t->client, "link.completed", "{}"), 1);
	free(same);
	free(st);
	free(lt);
}

/* Credentials rejected on a refresh: DISCONNECTED credentials_rejected
 * INVALID_CREDENTIALS, once; a refresh of it is refused; update mode with
 * the new password repairs it and retrieval resumes. */
START_TEST(credentials_rejected_then_repaired)
{
	struct tenant t;
	char *user = user_of(6), *link;
	const char *args[4] = { "links", "refresh", NULL, NULL };

	link = linked(&t, 0, POWER, user);
	knobs("power", user, "{\"password\":\"changed-at-the-biller\"}");
	refresh_done(link);
	assert_disconnected(&t, link, "credentials_rejected", "INVALID_CREDENTIALS",
	    "invalid_credentials");
	args[2] = link;
	ck_assert_int_ne(harness_bdsctl(args), 0);
	ck_assert_int_eq(evn(t.client, "link.disconnected", "{}"), 1);
	repair(&t, link, user, "changed-at-the-biller");
	/* retrieval resumes: a new statement arrives */
	knobs("power", user, "{\"new_statements\":1,\"new_statement_previous\":\"paid\"}");
	refresh_done(link);
	ck_assert_int_eq(bills_live(link), STATEMENTS + 1);
	ck_assert_int_eq(evn(t.client, "link.disconnected", "{}"), 1);
	finish(&t, user, link, NULL);
}
END_TEST

/* What a refresh meets that only the user can mend: the link's state, its
 * one link.disconnected and the connector's note. */
static const struct {
	int		 customer;
	const char	*knobs, *reason, *rejection, *note;
} disconnects[] = {
	{ 7, "{\"consent_expired\":true}", "expired", NULL, "consent_expired" },
	{ 21, "{\"locked\":true}", "credentials_rejected", "INVALID_CREDENTIALS", "account_locked" },
};

START_TEST(disconnected_on_refresh)
{
	struct tenant t;
	char *user = user_of(disconnects[_i].customer), *link;

	link = linked(&t, 0, POWER, user);
	knobs("power", user, disconnects[_i].knobs);
	refresh_done(link);
	assert_disconnected(&t, link, disconnects[_i].reason, disconnects[_i].rejection,
	    disconnects[_i].note);
	ck_assert_int_eq(bills_live(link), STATEMENTS);
	finish(&t, user, link, NULL);
}
END_TEST

/* An MFA challenge on a refresh (the device token not honoured): nobody is
 * there to answer: DISCONNECTED expired (mfa_required); update mode with
 * the MFA answered repairs it. */
START_TEST(mfa_on_refresh_expires)
{
	struct tenant t;
	struct harness_resp *r;
	char *user = user_of(4), *link, *lt, *st, *same;

	link = linked(&t, 0, POWER, user);
	knobs("power", user, "{\"mfa\":\"777777\",\"mfa_ignore_device_token\":true}");
	refresh_done(link);
	assert_disconnected(&t, link, "expired", NULL, "mfa_required");
	ck_assert_int_eq(bills_live(link), STATEMENTS);

	/* the biller honours device tokens again: the one update mode's MFA
	 * gives is stored and keeps the next refreshes from a challenge */
	knobs("power", user, "{\"mfa_ignore_device_token\":null}");
	st = session_open(&t, user, link, &lt);
	r = connect_as(st, POWER, user, pass_of(user));
	ck_assert_pstr_eq(devacct_str(r, "status"), "mfa_required");
	harness_resp_free(r);
	same = exchange(&t, mfa_answer(st, "777777"), lt);
	ck_assert_str_eq(same, link);
	free(wait_done(link));
	assert_link(link, "ACTIVE/-/-");
	ck_assert_int_eq(evn(t.client, "link.completed", "{}"), 1);
	refresh_done(link);
	assert_link(link, "ACTIVE/-/-");
	ck_assert_int_eq(evn(t.client, "link.disconnected", "{}"), 1);
	free(same);
	free(st);
	free(lt);
	finish(&t, user, link, NULL);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Transient failures                                                  */

/* session_expired: one login more and the call again; the same again after
 * that login is transient (retried), and the link stays ACTIVE. */
START_TEST(session_expired_relogin)
{
	struct tenant t;
	char *user = user_of(8), *link, *s;
	long long logins, events;

	link = linked(&t, 0, POWER, user);
	events = ev_all(t.client);
	logins = stat_of("power", "logins");
	knobs("power", user, "{\"expire_session\":\"once\"}");
	refresh(link);
	s = wait_done(link);
	ck_assert_str_eq(s, "done 1 -");
	free(s);
	ck_assert_int_eq(stat_of("power", "logins"), logins + 2);
	assert_link(link, "ACTIVE/-/-");
	ck_assert_int_eq(ev_all(t.client), events);

	knobs("power", user, "{\"expire_session\":\"always\"}");
	refresh(link);
	failed_with(link, "portal: session expired again on accounts after a new login");
	assert_link(link, "ACTIVE/-/-");
	ck_assert_int_eq(sqln("SELECT count(*) FROM links WHERE id = $1 AND sync_status = 'error'",
	    link, NULL, NULL), 1);
	knobs("power", user, "{\"expire_session\":null}");
	s = wait_done(link);
	ck_assert_msg(strncmp(s, "done ", 5) == 0, "%s", s);
	free(s);
	ck_assert_int_eq(ev_all(t.client), events);
	finish(&t, user, link, NULL);
}
END_TEST

/* 500s are retried until the biller answers; 503 with Retry-After is
 * recorded and waited for. Nothing is written twice. */
START_TEST(server_errors_retried)
{
	struct tenant t;
	char *user = user_of(9), *link, *s;
	long long events;

	link = linked(&t, 0, POWER, user);
	events = ev_all(t.client);
	knobs("power", user, "{\"fail_next\":2,\"fail_endpoint\":\"statements\"}");
	refresh(link);
	s = wait_done(link);
	ck_assert_str_eq(s, "done 3 -");
	free(s);
	ck_assert_int_eq(ev_all(t.client), events);
	ck_assert_int_eq(bills_live(link), STATEMENTS);

	knobs("power", user, "{\"fail_next\":1,\"fail_endpoint\":\"payments\",\"fail_status\":503,"
	    "\"retry_after\":4}");
	refresh(link);
	failed_with(link, "portal: 503 on payments (retry after 4 s)");
	/* the runner waits at least what the biller asked */
	ck_assert_int_ge(sqln("SELECT extract(epoch FROM next_attempt_at - updated_at)::int"
	    " FROM jobs WHERE kind = 'retrieval' AND subject_id = $1"
	    " ORDER BY created_at DESC LIMIT 1", link, NULL, NULL), 3);
	s = wait_done(link);
	ck_assert_str_eq(s, "done 2 -");
	free(s);
	ck_assert_int_eq(ev_all(t.client), events);
	finish(&t, user, link, NULL);
}
END_TEST

/* A malformed answer of each kind and endpoint fails the attempt with its
 * reason recorded; nothing is written; the next good answer goes through. */
static const struct { const char *kind, *endpoint, *error; } malformed[] = {
	{ "wrong_type", "statements", "portal: malformed statements[0].amount_due" },
	{ "missing_field", "statements", "portal: malformed statements[0].id" },
	{ "bad_money", "statements", "portal: malformed statements[0].amount_due" },
	{ "bad_date", "statements", "portal: malformed statements[0].statement_date" },
	{ "bad_enum", "statements", "portal: malformed statements[0].line_items[0].category" },
	{ "truncated_json", "statements", "portal: malformed statements answer" },
	{ "not_json", "statements", "portal: malformed statements answer (not JSON)" },
	{ "bad_content_type", "statements", "portal: malformed statements answer (not JSON)" },
	{ "cut_connection", "statements", "portal: connection broken on statements" },
	{ "wrong_type", "accounts", "portal: malformed accounts[0].id" },
	{ "bad_enum", "accounts", "portal: malformed accounts[0].status" },
	{ "bad_money", "payments", "portal: malformed payments[0].amount" },
	{ "bad_date", "payments", "portal: malformed payments[0].paid_at" },
	{ "bad_enum", "payments", "portal: malformed payments[0].status" },
	{ "wrong_type", "session", "portal: malformed expires_in" },
	{ "missing_field", "session", "portal: malformed session" },
	{ "oversized", "payments", "portal: payments answer over its size cap" },
};

START_TEST(malformed_answers)
{
	struct tenant t;
	char *user = user_of(10), *link, *s, *changed;
	long long events;

	link = linked(&t, 0, POWER, user);
	/* a corrected statement would be written if anything were */
	knobs("power", user, "{\"corrected\":[0]}");
	events = ev_all(t.client);
	changed = sqlv("SELECT max(updated_at)::text FROM bills WHERE link_id = $1", link, NULL,
	    NULL);
	for (size_t i = 0; i < sizeof(malformed) / sizeof(malformed[0]); i++) {
		refresh_refused(&t, user, link, harness_fmt("{\"malformed\":\"%s\","
		    "\"malformed_endpoint\":\"%s\",\"oversized_bytes\":5000000}", malformed[i].kind,
		    malformed[i].endpoint), malformed[i].error, events);
		s = sqlv("SELECT max(updated_at)::text FROM bills WHERE link_id = $1", link, NULL,
		    NULL);
		ck_assert_pstr_eq(s, changed);
		free(s);
	}
	knobs("power", user, "{\"malformed\":null}");
	refresh_done(link);
	ck_assert_int_eq(evn(t.client, "bill.updated", "{\"change\":\"statement_refreshed\"}"), 1);
	free(changed);
	finish(&t, user, link, NULL);
}
END_TEST

/* A malformed first retrieval: no bill, no event, no connection.ready until
 * the biller answers well. */
START_TEST(malformed_first_retrieval)
{
	struct tenant t;
	char *user = user_of(11), *link;

	tenant_new(&t, 0);
	knobs("power", user, "{\"malformed\":\"bad_money\",\"malformed_endpoint\":\"payments\"}");
	link = connect_link(&t, POWER, user);
	failed_with(link, "portal: malformed payments[0].amount");
	ck_assert_int_eq(bills_live(link), 0);
	ck_assert_int_eq(evn(t.client, "bill.created", "{}"), 0);
	ck_assert_int_eq(evn(t.client, "payment.observed", "{}"), 0);
	ck_assert_int_eq(evn(t.client, "connection.ready", "{}"), 0);
	knobs("power", user, "{\"malformed\":null}");
	free(wait_done(link));
	ck_assert_int_eq(bills_live(link), STATEMENTS);
	ck_assert_int_eq(evn(t.client, "bill.created", "{}"), STATEMENTS);
	ck_assert_int_eq(evn(t.client, "connection.ready", "{}"), 1);
	finish(&t, user, link, NULL);
}
END_TEST

/*
 * The first retrieval fails after the payments were read (a document
 * answer breaks): the retry stores each payment once, payment.observed
 * once per payment with the id the row has; a later retrieval listing them
 * again adds none.
 */
START_TEST(payment_ids_stable_across_retries)
{
	struct tenant t;
	char *user = user_of(19), *link, *s;

	tenant_new(&t, 0);
	knobs("power", user, "{\"fail_next\":1,\"fail_endpoint\":\"document\"}");
	link = connect_link(&t, POWER, user);
	s = wait_done(link);
	ck_assert_str_eq(s, "done 2 -");
	free(s);
	ck_assert_int_eq(evn(t.client, "payment.observed", "{}"), STATEMENTS - 1);
	ck_assert_int_eq(sqln("SELECT count(DISTINCT e.data->'object'->>'id') FROM events e"
	    " JOIN observed_payments p ON p.client_id = e.client_id"
	    "  AND p.id = e.data->'object'->>'id'"
	    " WHERE e.client_id = $1 AND e.type = 'payment.observed' AND p.link_id = $2",
	    t.client, link, NULL), STATEMENTS - 1);
	refresh_done(link);
	ck_assert_int_eq(evn(t.client, "payment.observed", "{}"), STATEMENTS - 1);
	finish(&t, user, link, NULL);
}
END_TEST

/* The simulator killed while a first retrieval waits on it: the attempt
 * fails, the job is retried once the biller is back, and every bill and
 * event exists exactly once. */
START_TEST(sim_killed_mid_retrieval)
{
	struct tenant t;
	char *user = user_of(20), *lt, *st, *link, *s;
	long long end;

	tenant_new(&t, 0);
	knobs("power", user, "{\"delay_ms\":4000,\"delay_endpoint\":\"payments\"}");
	st = session_open(&t, user, NULL, &lt);
	{
		struct harness_resp *r = page(st, "POST", "/v1/link-sessions/connect", harness_fmt(
		    "{\"biller_id\":\"" POWER "\",\"username\":\"%s\",\"password\":\"%s\"}", user,
		    pass_of(user)));

		harness_expect(r, 202);
		harness_resp_free(r);
	}
	{
		struct harness_resp *r = current_connected(st);

		ck_assert_pstr_eq(devacct_str(r, "status"), "connected");
		harness_resp_free(r);
	}
	/* the link by its row: an exchange would wait for the retrieval, which
	 * holds the link's row (links_credentials_open) */
	link = sqlv("SELECT id FROM links WHERE client_id = $1", t.client, NULL, NULL);
	ck_assert_ptr_nonnull(link);
	/* the retrieval is waiting on the slow payments answer */
	end = harness_now_ms() + WAIT_MS;
	while (sqln("SELECT count(*) FROM jobs WHERE kind = 'retrieval' AND subject_id = $1"
	    " AND status = 'running'", link, NULL, NULL) == 0 ||
	    stat_of("power", "concurrent_requests") < 1) {
		ck_assert_msg(harness_now_ms() < end, "the retrieval never reached the biller: %s, %lld"
		    " in flight", job_state(link), stat_of("power", "concurrent_requests"));
		harness_sleep_ms(20);
	}
	ck_assert_int_eq(sim_kill(), 0);
	s = wait_failed(link);
	ck_assert_msg(strstr(s, "portal: ") != NULL, "%s", s);
	free(s);
	ck_assert_int_eq(bills_live(link), 0);
	ck_assert_int_eq(sim_restart(), 0);
	s = wait_done(link);
	ck_assert_msg(strncmp(s, "done ", 5) == 0 && atoi(s + 5) >= 2, "%s", s);
	free(s);
	ck_assert_int_eq(bills_live(link), STATEMENTS);
	ck_assert_int_eq(sqln("SELECT count(*) FROM bills WHERE link_id = $1", link, NULL, NULL),
	    STATEMENTS);
	ck_assert_int_eq(evn(t.client, "bill.created", "{}"), STATEMENTS);
	ck_assert_int_eq(sqln("SELECT count(DISTINCT data->'object'->>'id') FROM events"
	    " WHERE client_id = $1 AND type = 'bill.created'", t.client, NULL, NULL), STATEMENTS);
	ck_assert_int_eq(evn(t.client, "payment.observed", "{}"), STATEMENTS - 1);
	ck_assert_int_eq(evn(t.client, "connection.ready", "{}"), 1);
	free(link);
	free(st);
	free(lt);
	free(user);
	tenant_free(&t);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Status signals                                                      */

/*
 * What the biller shows of the newest statement, and the one bill.updated
 * (with payment.observed for a payment) each change makes, and nothing
 * else; a second step on top of the first. A payment turned reversed goes
 * back as observed_payment_reversed (also at the client's webhook), never
 * as a next statement showing the balance.
 */
static const struct {
	int		 customer;
	const char	*knobs, *updated;	/* the change, and bill.updated's data.object */
	int		 observed;		/* payment.observed it adds */
	const char	*knobs2, *updated2;	/* a second step, or NULL */
} signals[] = {
	{ 12, "{\"paid\":\"balance_only\"}", "{\"status\":\"PAID\",\"change\":\"paid\","
	  "\"paid_reason\":\"portal_balance_zero\"}", 0, NULL, NULL },
	{ 14, "{\"paid\":\"partial\"}", "{\"status\":\"PARTIALLY_PAID\","
	  "\"change\":\"partially_paid\",\"paid_reason\":\"portal_payment_observed\"}", 1,
	  NULL, NULL },
	{ 13, "{\"paid\":\"full\"}", "{\"status\":\"PAID\",\"change\":\"paid\","
	  "\"paid_reason\":\"portal_payment_observed\"}", 1,
	  "{\"reverse_payments\":[0]}", "{\"status\":\"PENDING\",\"change\":\"status_reverted\","
	  "\"previous_status\":\"paid\",\"revert_reason\":\"observed_payment_reversed\"}" },
};

/* knobs on the link's customer, a refresh: exactly one bill.updated of the
 * bill containing updated, observed payment.observed of it, nothing else. */
static void
signal_step(const struct tenant *t, const char *user, const char *link, const char *bill,
    const char *knob, const char *updated, int observed)
{
	long long events = ev_all(t->client);
	char *match = strdup(harness_fmt("{\"id\":\"%s\",%s", bill, updated + 1));

	knobs("power", user, knob);
	refresh_done(link);
	ck_assert_msg(evn(t->client, "bill.updated", match) == 1, "no bill.updated %s", match);
	ck_assert_int_eq(ev_all(t->client), events + 1 + observed);
	free(match);
}

START_TEST(status_signals)
{
	struct tenant t;
	char *user = user_of(signals[_i].customer), *link, *bill;

	link = linked(&t, signals[_i].knobs2 != NULL, POWER, user);
	bill = bill_of(link, "power", user, 0);
	signal_step(&t, user, link, bill, signals[_i].knobs, signals[_i].updated,
	    signals[_i].observed);
	ck_assert_int_eq(evn(t.client, "payment.observed", harness_fmt("{\"bill_id\":\"%s\"}",
	    bill)), signals[_i].observed);
	if (signals[_i].observed > 0)
		/* paid as of the payment's time */
		ck_assert_int_eq(sqln("SELECT count(*) FROM bills b JOIN observed_payments p"
		    " ON p.client_id = b.client_id AND p.bill_id = b.id WHERE b.id = $1"
		    " AND p.paid_at = b.paid_at", bill, NULL, NULL), 1);
	if (signals[_i].knobs2 == NULL) {
		finish(&t, user, link, bill);
		return;
	}
	signal_step(&t, user, link, bill, signals[_i].knobs2, signals[_i].updated2, 0);
	ck_assert_int_eq(sqln("SELECT count(*) FROM observed_payments WHERE link_id = $1"
	    " AND status = 'reversed'", link, NULL, NULL), 1);
	ck_assert_int_eq(harness_deliver_once(), 0);
	{
		int seen = 0;

		for (size_t i = 0; receiver_wait(t.rc, i, 2000) != NULL; i++)
			seen += strstr(receiver_wait(t.rc, i, 0)->body,
			    "\"revert_reason\":\"observed_payment_reversed\"") != NULL;
		ck_assert_int_eq(seen, 1);
	}
	finish(&t, user, link, bill);
}
END_TEST

/*
 * Withdrawn → bill.deleted once. A statement the biller no longer lists
 * inside the since window (portal_since_days, 90 here) → bill.deleted; one
 * older than the window is simply not asked for, so its absence deletes
 * nothing.
 */
START_TEST(withdrawn_and_unlisted)
{
	struct tenant t;
	char *user = user_of(15), *link, *b1, *b2, *b8;
	long long events;

	link = linked(&t, 0, POWER, user);
	b1 = bill_of(link, "power", user, 1);
	b2 = bill_of(link, "power", user, 2);
	b8 = bill_of(link, "power", user, 8);
	/* a refresh asks since a date now */
	refresh_done(link);
	events = ev_all(t.client);
	knobs("power", user, "{\"withdrawn\":[1]}");
	refresh_done(link);
	ck_assert_int_eq(evn(t.client, "bill.deleted", harness_fmt("{\"id\":\"%s\"}", b1)), 1);
	ck_assert_int_eq(ev_all(t.client), events + 1);
	refresh_done(link);
	ck_assert_int_eq(ev_all(t.client), events + 1);

	knobs("power", user, "{\"unlisted\":[2,8]}");
	refresh_done(link);
	ck_assert_int_eq(evn(t.client, "bill.deleted", harness_fmt("{\"id\":\"%s\"}", b2)), 1);
	ck_assert_int_eq(evn(t.client, "bill.deleted", harness_fmt("{\"id\":\"%s\"}", b8)), 0);
	ck_assert_int_eq(ev_all(t.client), events + 2);
	ck_assert_int_eq(bills_live(link), STATEMENTS - 2);
	/* listed again (not withdrawn): the bill is back, same id, announced
	 * as new; then withdrawn no more: that one too */
	knobs("power", user, "{\"unlisted\":null}");
	refresh_done(link);
	ck_assert_int_eq(evn(t.client, "bill.created", harness_fmt("{\"id\":\"%s\"}", b2)), 2);
	ck_assert_int_eq(ev_all(t.client), events + 3);
	ck_assert_int_eq(bills_live(link), STATEMENTS - 1);
	ck_assert_int_eq(sqln("SELECT count(*) FROM bills WHERE id = $1 AND deleted_seq IS NULL"
	    " AND changed_seq > created_seq", b2, NULL, NULL), 1);
	/* and no more document fetches for it than for any held statement */
	refresh_done(link);
	ck_assert_int_eq(ev_all(t.client), events + 3);
	knobs("power", user, "{\"withdrawn\":null}");
	refresh_done(link);
	ck_assert_int_eq(evn(t.client, "bill.created", harness_fmt("{\"id\":\"%s\"}", b1)), 2);
	ck_assert_int_eq(bills_live(link), STATEMENTS);
	free(b1);
	free(b2);
	free(b8);
	finish(&t, user, link, NULL);
}
END_TEST

/*
 * Payments in another currency than the statements they name pay nothing:
 * at the first retrieval no bill is matched to one or paid by one (the
 * paid statements are paid by their balance; the reconciliation, which
 * finds no payment covering them, may revert them); a payment listed later
 * against the newest one leaves it PENDING and unmatched. The payments are
 * still observed.
 */
START_TEST(payment_other_currency)
{
	struct tenant t;
	char *user = user_of(30), *link, *bill;

	tenant_new(&t, 0);
	knobs("power", user, "{\"payment_currency\":\"EUR\"}");
	link = link_portal(&t, POWER, user);
	ck_assert_int_eq(bills_live(link), STATEMENTS);
	ck_assert_int_eq(sqln("SELECT count(*) FROM bills WHERE link_id = $1 AND"
	    " match_status IS NOT NULL", link, NULL, NULL), 0);
	ck_assert_int_eq(sqln("SELECT count(*) FROM bills WHERE link_id = $1 AND"
	    " paid_reason = 'portal_payment_observed'", link, NULL, NULL), 0);
	ck_assert_int_eq(sqln("SELECT count(*) FROM observed_payments WHERE link_id = $1"
	    " AND bill_id IS NULL", link, NULL, NULL), STATEMENTS - 1);
	bill = bill_of(link, "power", user, 0);
	knobs("power", user, "{\"paid\":\"payment_only\"}");
	refresh_done(link);
	ck_assert_int_eq(sqln("SELECT count(*) FROM bills WHERE id = $1 AND status = 'PENDING'"
	    " AND match_status IS NULL", bill, NULL, NULL), 1);
	ck_assert_int_eq(sqln("SELECT count(*) FROM observed_payments WHERE link_id = $1"
	    " AND bill_id IS NULL", link, NULL, NULL), STATEMENTS);
	ck_assert_int_eq(evn(t.client, "bill.updated", harness_fmt("{\"id\":\"%s\"}", bill)), 0);
	finish(&t, user, link, bill);
}
END_TEST

/*
 * A biller that lists oldest first (PORTAL.md gives no order): the bills
 * are written in statement order all the same (the newest has the highest
 * sequence) and each paid one is matched to its own payment.
 */
START_TEST(oldest_first)
{
	struct tenant t;
	char *user = user_of(31), *link, *newest;

	tenant_new(&t, 0);
	knobs("power", user, "{\"oldest_first\":true}");
	link = link_portal(&t, POWER, user);
	ck_assert_int_eq(bills_live(link), STATEMENTS);
	newest = bill_of(link, "power", user, 0);
	ck_assert_int_eq(sqln("SELECT count(*) FROM bills WHERE id = $1 AND created_seq ="
	    " (SELECT max(created_seq) FROM bills WHERE link_id = $2)", newest, link, NULL), 1);
	ck_assert_int_eq(sqln("SELECT count(*) FROM bills b WHERE b.link_id = $1 AND"
	    " b.status = 'PAID' AND b.matched_payment_ref = (SELECT p.payment_ref FROM"
	    " observed_payments p WHERE p.link_id = b.link_id AND p.bill_id = b.id)", link, NULL,
	    NULL), STATEMENTS - 1);
	ck_assert_int_eq(sqln("SELECT count(*) FROM bills WHERE link_id = $1 AND"
	    " source = 'connector'", link, NULL, NULL), STATEMENTS);
	finish(&t, user, link, newest);
}
END_TEST

/* One statement id under two accounts (ids are the biller's, across its
 * accounts): the answer is refused whole, with its reason; nothing is
 * written; the link stays ACTIVE. */
START_TEST(statement_id_under_two_accounts)
{
	struct tenant t;
	char *user = user_of(32), *link;

	link = linked(&t, 0, POWER, user);
	refresh_refused(&t, user, link, "{\"accounts\":2,\"shared_statement_ids\":true}",
	    "malformed statements answer: statement shared-0 listed under two accounts",
	    ev_all(t.client));
	ck_assert_int_eq(sqln("SELECT count(*) FROM bills WHERE link_id = $1 AND"
	    " statement_ref LIKE 'shared-%'", link, NULL, NULL), 0);
	finish(&t, user, link, NULL);
}
END_TEST

/* An account the biller lists closed: the link's account says CLOSED, its
 * bills stay; listed active again, ACTIVE. */
START_TEST(closed_account)
{
	struct tenant t;
	char *user = user_of(22), *link;
	struct harness_resp *r;
	struct json_object *acct, *v;

	link = linked(&t, 0, POWER, user);
	knobs("power", user, "{\"closed_accounts\":[1]}");
	for (int pass = 0; pass < 2; pass++) {
		refresh_done(link);
		r = devacct_call("GET", "sandbox", harness_fmt("/v1/links/%s", link),
		    devacct_bearer(t.key), NULL, NULL);
		harness_expect(r, 200);
		acct = json_object_array_get_idx(harness_json_get(r, "accounts"), 0);
		ck_assert_msg(json_object_object_get_ex(acct, "status", &v), "%s", r->body);
		ck_assert_str_eq(json_object_get_string(v), pass == 0 ? "CLOSED" : "ACTIVE");
		ck_assert_pstr_eq(harness_json_string(r, "status"), "ACTIVE");
		harness_resp_free(r);
		ck_assert_int_eq(bills_live(link), STATEMENTS);
		knobs("power", user, "{\"closed_accounts\":null}");
	}
	ck_assert_int_eq(sqln("SELECT count(*) FROM link_accounts WHERE link_id = $1 AND"
	    " status = 'ACTIVE'", link, NULL, NULL), 1);
	finish(&t, user, link, NULL);
}
END_TEST

/* A corrected statement (revision 2, new figures): statement_refreshed,
 * the new figures and revision, its new document fetched. */
START_TEST(corrected_statement)
{
	struct tenant t;
	char *user = user_of(16), *link, *bill, *sha, *sha2, *due;
	long long events;

	link = linked(&t, 0, POWER, user);
	bill = bill_of(link, "power", user, 0);
	sha = sqlv("SELECT statement_sha256 FROM bills WHERE id = $1", bill, NULL, NULL);
	events = ev_all(t.client);
	knobs("power", user, "{\"corrected\":[0]}");
	refresh_done(link);
	ck_assert_int_eq(evn(t.client, "bill.updated", harness_fmt("{\"id\":\"%s\","
	    "\"change\":\"statement_refreshed\"}", bill)), 1);
	ck_assert_int_eq(ev_all(t.client), events + 1);
	due = sim_statement("power", user, 0, "amount_due");
	ck_assert_int_eq(sqln("SELECT count(*) FROM bills WHERE id = $1 AND revision = 2"
	    " AND bds_money_major(total_minor, currency)::text = $2", bill, due, NULL), 1);
	sha2 = sqlv("SELECT statement_sha256 FROM bills WHERE id = $1", bill, NULL, NULL);
	ck_assert_ptr_nonnull(sha2);
	ck_assert_str_ne(sha, sha2);
	/* an older revision listed again changes nothing: the bill keeps 2 */
	knobs("power", user, "{\"corrected\":null,\"revisions\":{\"0\":1}}");
	refresh_done(link);
	ck_assert_int_eq(ev_all(t.client), events + 1);
	ck_assert_int_eq(sqln("SELECT count(*) FROM bills WHERE id = $1 AND revision = 2"
	    " AND bds_money_major(total_minor, currency)::text = $2", bill, due, NULL), 1);
	free(due);
	free(sha);
	free(sha2);
	finish(&t, user, link, bill);
}
END_TEST

/*
 * The newest bill paid by its balance, then a next statement that still
 * carries it in previous_balance (and the older statement shows it owed
 * again): the new bill is created and the older one goes back,
 * status_reverted next_statement_shows_balance, once.
 */
START_TEST(next_statement_shows_balance)
{
	struct tenant t;
	char *user = user_of(17), *link, *bill;

	link = linked(&t, 0, POWER, user);
	bill = bill_of(link, "power", user, 0);
	knobs("power", user, "{\"paid\":\"balance_only\"}");
	refresh_done(link);
	ck_assert_int_eq(sqln("SELECT count(*) FROM bills WHERE id = $1 AND status = 'PAID'", bill,
	    NULL, NULL), 1);
	knobs("power", user, "{\"paid\":null,\"new_statements\":1,"
	    "\"new_statement_previous\":\"unpaid\"}");
	refresh_done(link);
	ck_assert_int_eq(evn(t.client, "bill.created", "{}"), STATEMENTS + 1);
	ck_assert_int_eq(evn(t.client, "bill.updated", harness_fmt("{\"id\":\"%s\","
	    "\"change\":\"status_reverted\",\"revert_reason\":\"next_statement_shows_balance\"}",
	    bill)), 1);
	ck_assert_int_eq(evn(t.client, "bill.updated", "{\"change\":\"status_reverted\"}"), 1);
	ck_assert_int_eq(sqln("SELECT count(*) FROM bills WHERE id = $1 AND status = 'PENDING'",
	    bill, NULL, NULL), 1);
	finish(&t, user, link, bill);
}
END_TEST

/*
 * structured:false: the document stored and recorded, and made a bill
 * import of source portal whose extraction (bds-extract on the
 * simulator's PDF, which shows the statement's figures) is ready: it is
 * committed at once to a bill of the link with the statement's ref and
 * document (bill.created), the import COMMITTED, bill_import.updated at
 * the receiver. A refresh makes no second import.
 */
START_TEST(unstructured_statement)
{
	struct tenant t;
	char *user = user_of(18), *link, *ref, *sha, *imp, *bill, *v;
	const char *body;

	tenant_new(&t, 1);
	knobs("power", user, "{\"unstructured\":[0]}");
	link = link_portal(&t, POWER, user);
	ref = sim_statement("power", user, 0, "id");
	sha = sqlv("SELECT document_sha256 FROM portal_unstructured WHERE link_id = $1"
	    " AND statement_ref = $2 AND withdrawn_at IS NULL", link, ref, NULL);
	ck_assert_ptr_nonnull(sha);
	ck_assert_int_eq(access(harness_fmt("%s/data/statements/%.2s/%s.pdf", harness_dir(), sha,
	    sha), R_OK), 0);
	/* the import: the statement's link, ref and document */
	imp = sqlv("SELECT id FROM bill_imports WHERE link_id = $1 AND statement_ref = $2"
	    " AND source = 'portal' AND document_sha256 = $3", link, ref, sha);
	ck_assert_ptr_nonnull(imp);
	v = sqlv("SELECT status || ' ' || coalesce(extraction->>'review_reason', '-')"
	    " FROM bill_imports WHERE id = $1", imp, NULL, NULL);
	ck_assert_pstr_eq(v, "COMMITTED -");
	free(v);
	/* its bill: the link's, the statement's ref and document */
	bill = sqlv("SELECT id FROM bills WHERE link_id = $1 AND statement_ref = $2"
	    " AND statement_sha256 = $3 AND deleted_at IS NULL", link, ref, sha);
	ck_assert_ptr_nonnull(bill);
	ck_assert_int_eq(sqln("SELECT count(*) FROM bill_imports WHERE id = $1"
	    " AND committed_bill_id = $2", imp, bill, NULL), 1);
	ck_assert_int_eq(bills_live(link), STATEMENTS);
	ck_assert_int_eq(evn(t.client, "bill.created", "{}"), STATEMENTS);
	ck_assert_int_eq(evn(t.client, "bill_import.updated", harness_fmt("{\"bill_import_id\":"
	    "\"%s\",\"status\":\"COMMITTED\",\"committed_bill_id\":\"%s\"}", imp, bill)), 1);
	body = devacct_received(t.rc, "bill_import.updated", "COMMITTED");
	ck_assert_ptr_nonnull(body);
	ck_assert_ptr_nonnull(strstr(body, imp));
	/* the statement seen again: no second import */
	refresh_done(link);
	ck_assert_int_eq(sqln("SELECT count(*) FROM bill_imports WHERE link_id = $1", link, NULL,
	    NULL), 1);
	free(sha);
	free(ref);
	free(imp);
	finish(&t, user, link, bill);
}
END_TEST

/* ------------------------------------------------------------------ */
/* The runner while a biller answers slowly                            */

#define SLOW_MS		7000	/* under the suite's portal_timeout_ms */
#define SLOW_LINKS	4	/* biller_max_sessions: all at once */
#define SANDBOX_BILLER	"blr_01900000-0000-7000-8000-000000000001"

/* Requests of the biller in flight at the simulator now. */
static long long
in_flight(void)
{
	return stat_of("power", "concurrent_requests");
}

/*
 * SLOW_LINKS retrievals of one biller wait on its slow accounts call at
 * once: conversations of the runner, more than its two workers. While
 * every one of them is still in flight: another client's sandbox connect
 * connects (it queues behind no biller); a refresh and a revoke of held
 * links answer (no transaction or row lock is held across the network);
 * another client's API call answers. Afterwards the revoked link's
 * retrieval has written nothing, and the others stored their bills.
 */
START_TEST(slow_biller_holds_no_worker_and_no_lock)
{
	struct tenant t, other;
	char *users[SLOW_LINKS], *links[SLOW_LINKS], *lt, *st, *s;
	struct harness_resp *r;
	long long end;
	int i;

	tenant_new(&t, 0);
	tenant_new(&other, 0);
	for (i = 0; i < SLOW_LINKS; i++) {
		users[i] = user_of(33 + i);
		knobs("power", users[i], harness_fmt("{\"delay_ms\":%d,"
		    "\"delay_endpoint\":\"accounts\"}", SLOW_MS));
		/* linked without waiting for the runner to go idle: the
		 * retrievals before this one still wait on the biller */
		st = session_open(&t, users[i], NULL, &lt);
		r = page(st, "POST", "/v1/link-sessions/connect", harness_fmt("{\"biller_id\":\""
		    POWER "\",\"username\":\"%s\",\"password\":\"%s\"}", users[i],
		    pass_of(users[i])));
		harness_expect(r, 202);
		harness_resp_free(r);
		links[i] = exchange(&t, current_connected(st), lt);
		free(st);
		free(lt);
	}
	/* every first retrieval waits on the biller */
	for (end = harness_now_ms() + WAIT_MS; in_flight() < SLOW_LINKS;) {
		ck_assert_msg(harness_now_ms() < end, "at most %lld of %d retrievals in flight"
		    " at once", stat_of("power", "max_concurrent_requests"), SLOW_LINKS);
		harness_sleep_ms(20);
	}
	ck_assert_int_ge(stat_of("power", "max_concurrent_requests"), SLOW_LINKS);

	/* the sandbox connect of another client */
	st = session_open(&other, "sandbox-user", NULL, &lt);
	r = page(st, "POST", "/v1/link-sessions/connect", "{\"biller_id\":\"" SANDBOX_BILLER
	    "\",\"username\":\"user_good\",\"password\":\"pass_good\"}");
	harness_expect(r, 202);
	harness_resp_free(r);
	r = current_connected(st);
	ck_assert_pstr_eq(devacct_str(r, "status"), "connected");
	harness_resp_free(r);
	/* refresh and revoke of links whose retrieval talks to the biller */
	r = devacct_call("POST", "sandbox", harness_fmt("/v1/links/%s/refresh", links[0]),
	    devacct_bearer(t.key), NULL, NULL);
	ck_assert_msg(r->status == 202 || r->status == 429, "refresh: %ld %s", r->status,
	    r->body);
	harness_resp_free(r);
	r = devacct_call("DELETE", "sandbox", harness_fmt("/v1/links/%s", links[1]),
	    devacct_bearer(t.key), NULL, NULL);
	harness_expect(r, 200);
	harness_resp_free(r);
	r = devacct_call("GET", "sandbox", "/v1/links", devacct_bearer(other.key), NULL, NULL);
	harness_expect(r, 200);
	harness_resp_free(r);
	ck_assert_msg(in_flight() == SLOW_LINKS, "the slow retrievals ended first: %lld left",
	    in_flight());

	for (i = 0; i < SLOW_LINKS; i++) {
		s = wait_done(links[i]);
		ck_assert_msg(strncmp(s, "done 1 ", 7) == 0, "retrieval of %s: %s", links[i], s);
		free(s);
		ck_assert_int_eq(bills_live(links[i]), i == 1 ? 0 : STATEMENTS);
	}
	for (i = 0; i < SLOW_LINKS; i++) {
		knobs("power", users[i], "{\"delay_ms\":0}");
		free(users[i]);
		free(links[i]);
	}
	free(st);
	free(lt);
	tenant_free(&other);
	tenant_free(&t);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Environments: a sandbox key and a portal biller                     */

static void
sandbox_portal(const char *biller, int on)
{
	devacct_sql_exec("UPDATE billers SET sandbox_portal = $2::boolean WHERE id = $1", biller,
	    on ? "true" : "false");
}

/* A portal biller reaches a sandbox key only through the catalog's
 * sandbox_portal flag (the development deployment's simulator billers).
 * Without it: refused at link-token creation, not in the picker, refused
 * at connect, and the simulator sees no login. With it the sandbox key
 * links it. A connect job whose biller lost the flag after the connect
 * call does not log in, a public token whose biller lost it after the
 * login is not exchanged, and a link whose biller lost it is never
 * retrieved again (no login either). */
START_TEST(sandbox_portal_flag)
{
	struct tenant t;
	struct harness_resp *r;
	char *lt, *st, *link, *s, *user = user_of(1), *user2 = user_of(2), *user3 = user_of(3);
	long long refreshes, logins;
	const char *pinned = "{\"client_user_id\":\"u-flag\",\"biller_id\":\"" WATER "\"}";

	tenant_new(&t, 0);
	sandbox_portal(WATER, 0);
	r = devacct_call("POST", "sandbox", "/v1/link-tokens", devacct_bearer(t.key), pinned,
	    NULL);
	harness_assert_coded(r, 400, "VALIDATION_ERROR");
	ck_assert_pstr_eq(devacct_str(r, "errors.0.code"), "biller_not_in_environment");
	harness_resp_free(r);
	st = session_open(&t, user, NULL, &lt);
	r = page(st, "GET", "/v1/link-sessions/billers?search_term=sim&limit=100", NULL);
	harness_expect(r, 200);
	ck_assert_ptr_nonnull(strstr(r->body, POWER));		/* flagged */
	ck_assert_ptr_null(strstr(r->body, WATER));
	harness_resp_free(r);
	r = page(st, "POST", "/v1/link-sessions/connect", harness_fmt("{\"biller_id\":\"" WATER
	    "\",\"username\":\"%s\",\"password\":\"%s\"}", user, pass_of(user)));
	harness_assert_coded(r, 400, "VALIDATION_ERROR");
	ck_assert_pstr_eq(devacct_str(r, "errors.0.code"), "biller_not_in_environment");
	harness_resp_free(r);
	ck_assert_int_eq(stat_of("water", "logins"), 0);
	free(st);
	free(lt);

	/* the flag: the sandbox key links the simulator's biller */
	sandbox_portal(WATER, 1);
	r = devacct_call("POST", "sandbox", "/v1/link-tokens", devacct_bearer(t.key), pinned,
	    NULL);
	harness_expect(r, 201);
	harness_resp_free(r);
	st = session_open(&t, user, NULL, &lt);
	link = exchange(&t, connect_as(st, WATER, user, pass_of(user)), lt);
	s = wait_done(link);
	ck_assert_str_eq(s, "done 1 -");
	free(s);
	refreshes = sqln("SELECT refresh_count FROM links WHERE id = $1", link, NULL, NULL);
	ck_assert_int_ge(refreshes, 1);
	ck_assert_int_ge(stat_of("water", "logins"), 1);
	free(st);
	free(lt);

	/* the flag withdrawn between the connect call and its job: the job
	 * does not log in (BILLER_UNAVAILABLE) */
	st = session_open(&t, user3, NULL, &lt);
	ck_assert_int_eq(harness_jobs_stop(), 0);
	r = page(st, "POST", "/v1/link-sessions/connect", harness_fmt("{\"biller_id\":\"" WATER
	    "\",\"username\":\"%s\",\"password\":\"%s\"}", user3, pass_of(user3)));
	harness_expect(r, 202);
	harness_resp_free(r);
	sandbox_portal(WATER, 0);
	logins = stat_of("water", "logins");
	ck_assert_int_eq(harness_jobs_start(), 0);
	r = current(st);
	ck_assert_pstr_eq(devacct_str(r, "status"), "failed");
	ck_assert_pstr_eq(devacct_str(r, "error_code"), "BILLER_UNAVAILABLE");
	harness_resp_free(r);
	ck_assert_int_eq(stat_of("water", "logins"), logins);
	sandbox_portal(WATER, 1);
	free(st);
	free(lt);

	/* the flag withdrawn after a login: no exchange */
	st = session_open(&t, user2, NULL, &lt);
	r = connect_as(st, WATER, user2, pass_of(user2));
	ck_assert_pstr_eq(devacct_str(r, "status"), "connected");
	sandbox_portal(WATER, 0);
	s = answer(devacct_call("POST", "sandbox", harness_fmt("/v1/link-tokens/%s/exchange", lt),
	    devacct_bearer(t.key), harness_fmt("{\"public_token\":\"%s\"}",
	    devacct_str(r, "public_token")), NULL), 400, "errors.0.code");
	ck_assert_str_eq(s, "biller_not_in_environment");
	free(s);
	harness_resp_free(r);
	ck_assert_int_eq(harness_jobs_wait_idle(WAIT_MS), 0);
	/* nor a retrieval: the job ends without a login */
	logins = stat_of("water", "logins");
	refresh(link);
	s = wait_done(link);
	free(s);
	ck_assert_int_eq(stat_of("water", "logins"), logins);
	ck_assert_int_eq(sqln("SELECT refresh_count FROM links WHERE id = $1", link, NULL, NULL),
	    refreshes);
	free(st);
	free(lt);
	free(link);
	free(user);
	free(user2);
	free(user3);
	tenant_free(&t);
}
END_TEST

/* ------------------------------------------------------------------ */

static void
setup(void)
{
	struct harness_opts o;
	const struct sim_opts so = { "power,tokyo-gas:JPY:gas,water", 40, STATEMENTS, 900, NULL };
	const char *args[] = { "billers", "import", NULL, NULL };
	char csv[4096], url1[256], url2[256], url3[256];
	FILE *f;

	ck_assert_int_eq(crypto_setup(), 0);
	harness_opts_defaults(&o);
	/* quick retries; a window that holds a few statements */
	o.extra_config = "jobs_retry_schedule = 1,1,1,1,1\nportal_since_days = 90\n"
	    "portal_timeout_ms = 10000\n";
	harness_fixture_start(&o);
	ck_assert_msg(sim_start(&so) == 0, "the biller simulator did not start");
	/* the catalog's portal billers, as an operator adds them */
	snprintf(csv, sizeof(csv), "%s/portal-billers.csv", harness_dir());
	ck_assert_ptr_nonnull(f = fopen(csv, "w"));
	fprintf(f, "id,name,type,status,domains,website,login_url,logo_url,country,"
	    "connectivity_types,consent_scopes,capabilities,connector,base_url\n"
	    POWER ",Sim Power,electric,ACTIVE,simpower.example,https://simpower.example,"
	    "https://simpower.example/login,,US,credentials,bills|statements|payment_history,"
	    "bills|statements|payment_history|mfa,portal,%s\n"
	    TOKYO ",Sim Tokyo Gas,gas,ACTIVE,simtokyo.example,https://simtokyo.example,"
	    "https://simtokyo.example/login,,JP,credentials,bills|statements,bills|statements,"
	    "portal,%s\n"
	    WATER ",Sim Water,water,ACTIVE,simwater.example,https://simwater.example,"
	    "https://simwater.example/login,,US,credentials,bills|statements,bills|statements,"
	    "portal,%s\n", sim_base_url("power", url1, sizeof(url1)),
	    sim_base_url("tokyo-gas", url2, sizeof(url2)),
	    sim_base_url("water", url3, sizeof(url3)));
	ck_assert_int_eq(fclose(f), 0);
	args[2] = csv;
	ck_assert_int_eq(harness_bdsctl(args), 0);
	/* the simulator's billers: the suite links them with a sandbox key, as
	 * the development seed lets one (sandbox_portal); WATER stays a portal
	 * no sandbox key reaches until sandbox_portal_flag sets it */
	sandbox_portal(POWER, 1);
	sandbox_portal(TOKYO, 1);
	devacct_legal();
	devacct_new(&dev, "portal");
}

static void
teardown(void)
{
	sim_stop();
	harness_fixture_stop();
}

/* A test may have killed the simulator: it runs again for the next. */
static void
recover(void)
{
	harness_fixture_recover();
	if (!sim_running())
		ck_assert_int_eq(sim_restart(), 0);
}

/* BDS_E2E_ONLY=name runs that test alone (while working on one). */
static int
wanted(const char *name)
{
	const char *only = getenv("BDS_E2E_ONLY");

	return only == NULL || *only == '\0' || strcmp(only, name) == 0;
}
#define ADD(tc, t) do { if (wanted(#t)) tcase_add_test((tc), t); } while (0)

/*
 * The end user links the same portal login again through the connect flow
 * while its link is ACTIVE: the session ends connected with that link (its
 * public token exchanges for it), no second link, no second retrieval's
 * bills, link.completed once. Another end user: a link of its own.
 */
START_TEST(same_login_twice)
{
	struct tenant t;
	char *user = user_of(40), *link, *again, *lt, *st, *other;
	long long bills;

	link = linked(&t, 0, POWER, user);
	bills = sqln("SELECT count(*) FROM bills WHERE link_id = $1", link, NULL, NULL);
	ck_assert_int_gt(bills, 0);
	again = connect_link(&t, POWER, user);
	ck_assert_str_eq(again, link);
	ck_assert_int_eq(sqln("SELECT count(*) FROM links WHERE client_id = $1", t.client, NULL,
	    NULL), 1);
	ck_assert_int_eq(sqln("SELECT count(*) FROM bills WHERE client_id = $1", t.client, NULL,
	    NULL), bills);
	ck_assert_int_eq(sqln("SELECT count(*) FROM events WHERE client_id = $1"
	    " AND type = 'link.completed'", t.client, NULL, NULL), 1);
	/* another end user of the client with the same login: its own link */
	st = session_open(&t, "someone-else", NULL, &lt);
	other = exchange(&t, connect_as(st, POWER, user, pass_of(user)), lt);
	ck_assert_str_ne(other, link);
	free(st);
	free(lt);
	free(other);
	free(again);
	finish(&t, user, link, NULL);
}
END_TEST

static Suite *
portal_suite(void)
{
	Suite *s = suite_create("e2e_portal");
	TCase *tc = tcase_create("portal");

	tcase_add_unchecked_fixture(tc, setup, teardown);
	tcase_add_checked_fixture(tc, recover, NULL);
	tcase_set_timeout(tc, 240);
	ADD(tc, link_and_first_retrieval);
	ADD(tc, jpy_biller);
	ADD(tc, mfa_and_device_token);
	ADD(tc, connect_failures);
	ADD(tc, credentials_rejected_then_repaired);
	if (wanted("disconnected_on_refresh"))
		tcase_add_loop_test(tc, disconnected_on_refresh, 0,
		    (int)(sizeof(disconnects) / sizeof(disconnects[0])));
	ADD(tc, mfa_on_refresh_expires);
	ADD(tc, session_expired_relogin);
	ADD(tc, server_errors_retried);
	ADD(tc, malformed_answers);
	ADD(tc, malformed_first_retrieval);
	ADD(tc, payment_ids_stable_across_retries);
	if (wanted("status_signals"))
		tcase_add_loop_test(tc, status_signals, 0, (int)(sizeof(signals) / sizeof(signals[0])));
	ADD(tc, withdrawn_and_unlisted);
	ADD(tc, payment_other_currency);
	ADD(tc, oldest_first);
	ADD(tc, statement_id_under_two_accounts);
	ADD(tc, closed_account);
	ADD(tc, corrected_statement);
	ADD(tc, next_statement_shows_balance);
	ADD(tc, unstructured_statement);
	ADD(tc, sim_killed_mid_retrieval);
	ADD(tc, slow_biller_holds_no_worker_and_no_lock);
	ADD(tc, sandbox_portal_flag);
	ADD(tc, same_login_twice);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return harness_run_suite(portal_suite());
}
