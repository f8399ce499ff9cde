/*
 * A database failover under load. The stack runs on a pg_auto_failover
 * formation (scripts/ha: a monitor, a primary and its synchronous
 * secondary on loopback) through the multi-host URL every program is
 * given (target_session_attrs=read-write). While a load of mixed writes
 * runs at LOAD_RATE requests a second (sign-ups, link tokens, bill status
 * moves, sandbox events delivered to a webhook receiver), the primary is
 * stopped with pg_autoctl, and in the next test killed -9, and the
 * secondary is promoted. Then:
 *   - every answer was a success or 503 SERVICE_UNAVAILABLE in the
 *     envelope: no other status, no transport failure, no hang;
 *   - every write the client saw acknowledged is in the database (a write
 *     answered 503 may or may not have committed: its COMMIT may have been
 *     the statement whose connection broke);
 *   - every event committed reaches the receiver (at least once);
 *   - bds-api, bds-jobs and bds-deliver are the processes they were: the
 *     workers reconnected through the URL by themselves.
 * Reads on the standby (db.read_url, core/standby.h) come first: the read
 * routes' queries run on the secondary, a client reads its own write at
 * once, and with the secondary stopped under reads they go to the primary
 * with no failure. The load's reads use the standby too.
 * The window of 503s is printed (bench/RESULTS.md "Failover" collects it);
 * no timing is asserted. The node stopped or killed is started again by
 * the next run and rejoins as the secondary.
 */
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <check.h>
#include <json-c/json.h>
#include <libpq-fe.h>

#include "e2e/devacct.h"
#include "e2e/harness.h"
#include "e2e/receiver.h"

#define LOAD_RATE	200	/* requests a second, all threads */
#define LOAD_THREADS	8
#define LOAD_BEFORE_MS	4000	/* load before the primary goes */
#define LOAD_AFTER_MS	12000	/* and after */
#define LINKS		4	/* sandbox links whose unpaid bill is moved */
#define SHOTS_MAX	((LOAD_BEFORE_MS + LOAD_AFTER_MS) * LOAD_RATE / 1000)

static char ha_dir[PATH_MAX];
static pid_t ha_owner;		/* the process that made the formation */
static char ha_url[512];
static char ha_read_url[512];
static int ha_base;		/* the monitor's port; node a +1, b +2 */
static struct devacct dev;

/* The tenant the load writes as: a sandbox client subscribed to every
 * event, and the unpaid bill of each of its sandbox links. */
static char *client, *key;
static char *bills[LINKS];
static char currency[8];

/* ---- the formation ---- */

/* scripts/ha CMD DIR [ARG]; its output into out (a file in ha_dir) when
 * not NULL. The exit status. */
static int
ha(const char *cmd, const char *arg, const char *out)
{
	const char *src = getenv("BDS_SRCDIR") != NULL ? getenv("BDS_SRCDIR") : ".";
	char script[PATH_MAX];
	const char *argv[] = { script, cmd, ha_dir, arg, NULL };
	struct harness_child c = { argv, NULL, NULL, out, 240000 };

	snprintf(script, sizeof(script), "%s/scripts/ha", src);
	return harness_run_child(&c);
}

/* The name of the node the monitor calls primary ("a" or "b"), or "". */
static const char *
ha_primary(void)
{
	static char name[8];
	char out[PATH_MAX + 16], *text;

	snprintf(out, sizeof(out), "%s/primary.out", ha_dir);
	name[0] = '\0';
	if (ha("primary", NULL, out) == 0 && (text = harness_slurp(out)) != NULL) {
		sscanf(text, "%7s", name);
		free(text);
	}
	return name;
}

/* A base port with it and the next two free on 127.0.0.1, below the
 * kernel's range for outgoing connections (see free_port in harness.c). */
static int
free_ports(void)
{
	for (int tries = 0; tries < 64; tries++) {
		int base = 20000 + (int)(((unsigned)getpid() * 7919u + (unsigned)tries * 104729u)
		    % 12000u), ok = 1;

		for (int i = 0; i < 3 && ok; i++) {
			struct sockaddr_in sa = { .sin_family = AF_INET,
			    .sin_port = htons((uint16_t)(base + i)) };
			int fd = socket(AF_INET, SOCK_STREAM, 0);

			sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
			ok = fd != -1 && bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0;
			if (fd != -1)
				close(fd);
		}
		if (ok)
			return base;
	}
	return -1;
}

static void
ha_destroy(void)
{
	if (ha_dir[0] != '\0' && getpid() == ha_owner) {
		ha("destroy", NULL, NULL);
		ha_dir[0] = '\0';
	}
}

static void
setup(void)
{
	char port[16], out[PATH_MAX + 16], *text;
	struct harness_opts o;

	snprintf(ha_dir, sizeof(ha_dir), "/tmp/bds-ha-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(ha_dir));
	ha_owner = getpid();
	atexit(ha_destroy);	/* a test child exits too: ha_owner tells */
	ck_assert_int_gt(ha_base = free_ports(), 0);
	snprintf(port, sizeof(port), "%d", ha_base);
	ck_assert_msg(ha("create", port, NULL) == 0, "scripts/ha create %s failed", ha_dir);
	snprintf(out, sizeof(out), "%s/url.out", ha_dir);
	ck_assert_int_eq(ha("url", NULL, out), 0);
	ck_assert_ptr_nonnull(text = harness_slurp(out));
	ck_assert_int_eq(sscanf(text, "%511s", ha_url), 1);
	free(text);
	ck_assert_int_eq(ha("read-url", NULL, out), 0);
	ck_assert_ptr_nonnull(text = harness_slurp(out));
	ck_assert_int_eq(sscanf(text, "%511s", ha_read_url), 1);
	free(text);

	harness_opts_defaults(&o);
	o.workers = 4;
	o.database_url = ha_url;
	o.read_url = ha_read_url;
	harness_fixture_start(&o);
	ck_assert_int_eq(harness_deliver_start(NULL), 0);
	devacct_legal();
	devacct_new(&dev, "ha");
}

static void
teardown(void)
{
	harness_fixture_stop();
	ha_destroy();
}

/* The tenant, once: a client, its sandbox key, a webhook to rc, LINKS
 * sandbox links retrieved, and the unpaid bill of each. */
static void
tenant(struct receiver *rc)
{
	char *v;

	if (client == NULL) {
		client = devacct_client_new(&dev);
		key = devacct_key_new(&dev, client, "sandbox");
		for (int i = 0; i < LINKS; i++)
			free(devacct_sandbox_link(key, harness_fmt("ha-user-%d", i), "user_good"));
		ck_assert_int_eq(harness_jobs_wait_idle(60000), 0);
		for (int i = 0; i < LINKS; i++) {
			bills[i] = devacct_sql_value("SELECT id FROM bills WHERE client_id = $1"
			    " AND status <> 'PAID' AND deleted_at IS NULL ORDER BY id"
			    " OFFSET $2::int LIMIT 1", client, harness_fmt("%d", i));
			ck_assert_msg(bills[i] != NULL, "link %d has no unpaid bill", i);
		}
		v = devacct_sql_value("SELECT currency FROM bills WHERE id = $1", bills[0], NULL);
		snprintf(currency, sizeof(currency), "%s", v);
		free(v);
	}
	devacct_subscribe(key, rc);
}

/* ---- the load ---- */

enum op { OP_SIGNUP, OP_LINK_TOKEN, OP_MARK_PAID, OP_TRIGGER, OP_READ };

struct shot {
	enum op		 op;
	int		 bill;		/* OP_MARK_PAID: index in bills[] */
	long long	 done_ms;	/* when the answer came */
	long		 status;
	int		 coded_503;	/* 503 in the envelope, SERVICE_UNAVAILABLE */
	char		 id[96];	/* what an acknowledged write made */
	char		 body[160];	/* the start of any other answer */
};

static struct shot shots[SHOTS_MAX];
static atomic_int next_shot;
static long long load_t0;

/* Of 80 requests: 2 sign-ups, 3 status moves, 2 sandbox events (about
 * 200 events a run, what a receiver records); of the rest, link tokens and
 * reads of the bills. */
static enum op
op_of(int i)
{
	int k = i % 80;

	if (k <= 1)
		return OP_SIGNUP;
	if (k <= 4)
		return OP_MARK_PAID;
	if (k <= 6)
		return OP_TRIGGER;
	return k % 2 == 0 ? OP_LINK_TOKEN : OP_READ;
}

static struct harness_resp *
send_shot(struct shot *s, int i)
{
	char auth[256], body[1024], idem[96];
	const char *hdr[] = { auth, "Content-Type: application/json", idem, NULL };
	const char *host = "sandbox", *path;

	snprintf(auth, sizeof(auth), "Authorization: Bearer %s", key);
	snprintf(idem, sizeof(idem), "Idempotency-Key: ha-%ld-%lld-%d", (long)getpid(),
	    load_t0, i);
	switch (s->op) {
	case OP_SIGNUP:
		host = "api";
		path = "/v1/iam/auth/signup";
		snprintf(body, sizeof(body), "{\"email\":\"ha-%ld-%lld-%d@example.test\","
		    "\"password\":\"Pw-%d-Failover-Secret!\",\"given_name\":\"Ha\","
		    "\"family_name\":\"Load\",\"legal_acceptances\":%s}", (long)getpid(),
		    load_t0, i, i, devacct_acceptances);
		hdr[0] = "Content-Type: application/json";	/* no key */
		hdr[1] = NULL;
		break;
	case OP_LINK_TOKEN:
		path = "/v1/link-tokens";
		snprintf(body, sizeof(body), "{\"client_user_id\":\"ha-%d\"}", i);
		break;
	case OP_MARK_PAID:
		/* a cent: the bill stays unpaid, and each move is one more */
		s->bill = i % LINKS;
		path = harness_fmt("/v1/bills/%s/mark-paid", bills[s->bill]);
		snprintf(body, sizeof(body),
		    "{\"amount\":{\"value\":\"0.01\",\"currency\":\"%s\"}}", currency);
		break;
	case OP_TRIGGER:
		path = "/v1/triggers/bill.updated";
		snprintf(body, sizeof(body), "{\"load\":%d}", i);
		break;
	default:	/* OP_READ */
		hdr[1] = NULL;
		return harness_request("GET", "sandbox", "/v1/bills?limit=5", hdr, NULL, 0);
	}
	return harness_request("POST", host, path, hdr, body, strlen(body));
}

/* The id an acknowledged write made, from its answer. */
static void
note_id(struct shot *s, const struct harness_resp *r)
{
	const char *id = NULL;

	if (s->op == OP_SIGNUP)
		id = harness_json_string(r, "user_id");
	else if (s->op == OP_LINK_TOKEN)
		id = harness_json_string(r, "link_token");
	else if (s->op == OP_TRIGGER)
		id = harness_json_string(r, "event_id");
	snprintf(s->id, sizeof(s->id), "%s", id != NULL ? id : "");
}

static void *
load_thread(void *arg)
{
	int total = (LOAD_BEFORE_MS + LOAD_AFTER_MS) * LOAD_RATE / 1000, i;

	(void)arg;
	while ((i = atomic_fetch_add(&next_shot, 1)) < total) {
		struct shot *s = &shots[i];
		long long due = load_t0 + (long long)i * 1000 / LOAD_RATE;
		struct harness_resp *r;
		const char *why = NULL;

		if (due > harness_now_ms())
			harness_sleep_ms((int)(due - harness_now_ms()));
		s->op = op_of(i);
		r = send_shot(s, i);
		s->done_ms = harness_now_ms() - load_t0;
		s->status = r->status;
		if (r->status >= 200 && r->status < 300)
			note_id(s, r);
		else if (r->status == 503)
			s->coded_503 = (why = harness_check_coded(r, 503,
			    "SERVICE_UNAVAILABLE")) == NULL;
		if (!(r->status >= 200 && r->status < 300) && !s->coded_503)
			snprintf(s->body, sizeof(s->body), "%.*s", (int)sizeof(s->body) - 1,
			    r->status == 0 ? r->error : why != NULL ? why : r->body);
		harness_resp_free(r);
	}
	return NULL;
}

/* ---- the checks ---- */

/* A fresh connection through the URL: the new primary. */
static PGconn *
primary_conn(void)
{
	PGconn *pg = PQconnectdb(ha_url);

	ck_assert_msg(PQstatus(pg) == CONNECTION_OK, "%s", PQerrorMessage(pg));
	return pg;
}

static long long
count_ids(PGconn *pg, const char *sql, const char *array)
{
	const char *p[1] = { array };
	PGresult *res = PQexecParams(pg, sql, 1, NULL, p, NULL, NULL, 0);
	long long n;

	ck_assert_msg(PQresultStatus(res) == PGRES_TUPLES_OK, "%s", PQerrorMessage(pg));
	n = strtoll(PQgetvalue(res, 0, 0), NULL, 10);
	PQclear(res);
	return n;
}

/* The acknowledged ids of op as a text[] literal (malloc'ed); *n of them. */
static char *
acked_ids(enum op op, int total, long long *n)
{
	size_t len = 2, at = 1;
	char *a;

	for (int i = 0; i < total; i++)
		len += strlen(shots[i].id) + 1;
	ck_assert_ptr_nonnull(a = malloc(len + 1));
	a[0] = '{';
	*n = 0;
	for (int i = 0; i < total; i++) {
		if (shots[i].op != op || shots[i].id[0] == '\0')
			continue;
		at += (size_t)sprintf(a + at, "%s%s", *n > 0 ? "," : "", shots[i].id);
		(*n)++;
	}
	strcpy(a + at, "}");
	return a;
}

static void
check_present(PGconn *pg, enum op op, const char *sql, const char *what, int total)
{
	long long n, found;
	char *a = acked_ids(op, total, &n);

	found = count_ids(pg, sql, a);
	free(a);
	ck_assert_msg(found == n, "%s: %lld acknowledged, %lld in the database", what, n, found);
	ck_assert_msg(n > 0, "%s: none was acknowledged", what);
}

/* Each bill's moves in the database lie between the acknowledged ones and
 * those plus the ones answered 503. */
static void
check_moves(PGconn *pg, int total, const char *since)
{
	for (int b = 0; b < LINKS; b++) {
		const char *p[3] = { client, bills[b], since };
		long long acked = 0, maybe = 0, moves;
		PGresult *res;

		for (int i = 0; i < total; i++) {
			if (shots[i].op != OP_MARK_PAID || shots[i].bill != b)
				continue;
			acked += shots[i].status == 200;
			maybe += shots[i].status == 503;
		}
		res = PQexecParams(pg, "SELECT count(*) FROM events WHERE client_id = $1"
		    " AND type = 'bill.updated' AND data->'object'->>'id' = $2"
		    " AND data->'object'->>'change' = 'partially_paid' AND created_at >= $3",
		    3, NULL, p, NULL, NULL, 0);
		ck_assert_msg(PQresultStatus(res) == PGRES_TUPLES_OK, "%s", PQerrorMessage(pg));
		moves = strtoll(PQgetvalue(res, 0, 0), NULL, 10);
		PQclear(res);
		ck_assert_msg(moves >= acked && moves <= acked + maybe,
		    "bill %s: %lld moves in the database, %lld acknowledged, %lld answered 503",
		    bills[b], moves, acked, maybe);
	}
}

/* Every event of the client since `since` reaches rc: bds-deliver is left
 * to drain (it retries what failed while the database was away). */
static void
check_delivered(PGconn *pg, struct receiver *rc, const char *since)
{
	const char *p[2] = { client, since };
	PGresult *res = PQexecParams(pg, "SELECT id FROM events WHERE client_id = $1"
	    " AND created_at >= $2 ORDER BY id", 2, NULL, p, NULL, NULL, 0);
	long long end = harness_now_ms() + 90000;
	int n, missing = -1;

	ck_assert_msg(PQresultStatus(res) == PGRES_TUPLES_OK, "%s", PQerrorMessage(pg));
	n = PQntuples(res);
	ck_assert_msg(n > 0 && n < RECEIVER_MAX_REQUESTS, "%d events", n);
	while (missing != 0 && harness_now_ms() < end) {
		missing = 0;
		for (int i = 0; i < n; i++) {
			const char *id = PQgetvalue(res, i, 0);
			size_t k, got = receiver_count(rc);

			for (k = 0; k < got; k++) {
				const struct receiver_req *q = receiver_wait(rc, k, 0);

				if (q != NULL && strstr(q->body, id) != NULL)
					break;
			}
			missing += k == got;
		}
		if (missing != 0)
			harness_sleep_ms(500);
	}
	PQclear(res);
	ck_assert_msg(missing == 0, "%d of %d events committed never reached the receiver",
	    missing, n);
}

/* ---- reads on the standby ---- */

/* The transactions database bds has run on node. A backend reports its
 * statistics at most once a second, and an idle one within
 * STATS_IDLE_MS: wait that long before reading them. */
#define STATS_IDLE_MS	11000

static long long
node_xacts(const char *node)
{
	PGconn *pg = PQconnectdb(harness_fmt("host=127.0.0.1 port=%d dbname=bds user=bds"
	    " connect_timeout=2", ha_base + (node[0] == 'a' ? 1 : 2)));
	PGresult *res;
	long long n;

	ck_assert_msg(PQstatus(pg) == CONNECTION_OK, "%s", PQerrorMessage(pg));
	res = PQexec(pg, "SELECT xact_commit + xact_rollback FROM pg_stat_database"
	    " WHERE datname = 'bds'");
	ck_assert_msg(PQresultStatus(res) == PGRES_TUPLES_OK, "%s", PQerrorMessage(pg));
	n = strtoll(PQgetvalue(res, 0, 0), NULL, 10);
	PQclear(res);
	PQfinish(pg);
	return n;
}

static struct harness_resp *
key_get(const char *path)
{
	char auth[256];
	const char *hdr[] = { auth, NULL };

	snprintf(auth, sizeof(auth), "Authorization: Bearer %s", key);
	return harness_request("GET", "sandbox", path, hdr, NULL, 0);
}

static void
formation_settled(void)
{
	ck_assert_int_eq(ha("start", NULL, NULL), 0);
	ck_assert_msg(ha("wait", "120", NULL) == 0, "the formation did not settle");
}

#define READS	200

START_TEST(reads_go_to_the_standby)
{
	struct receiver *rc;
	char secondary[2];
	long long before, after;

	formation_settled();
	ck_assert_ptr_nonnull(rc = receiver_start(NULL));
	tenant(rc);
	snprintf(secondary, sizeof(secondary), "%s", ha_primary()[0] == 'a' ? "b" : "a");
	harness_sleep_ms(STATS_IDLE_MS);	/* the set-up's statistics */
	before = node_xacts(secondary);
	for (int i = 0; i < READS; i++) {
		struct harness_resp *r = key_get(i % 2 ? "/v1/bills?limit=5" :
		    harness_fmt("/v1/bills/%s", bills[i % LINKS]));

		harness_expect(r, 200);
		harness_resp_free(r);
	}
	harness_sleep_ms(STATS_IDLE_MS);
	after = node_xacts(secondary);
	/* each read is at least the handler's query there (and the caught-up
	 * check, when the primary has moved on since the last) */
	ck_assert_msg(after - before >= READS, "the standby ran %lld transactions for %d"
	    " reads", after - before, READS);
	receiver_stop(rc);
}
END_TEST

/* A write acknowledged, then read at once: found, every time. */
START_TEST(a_client_reads_its_own_write)
{
	struct receiver *rc;
	char auth[256];
	const char *hdr[] = { auth, "Content-Type: application/json", NULL };

	formation_settled();
	ck_assert_ptr_nonnull(rc = receiver_start(NULL));
	tenant(rc);
	snprintf(auth, sizeof(auth), "Authorization: Bearer %s", key);
	for (int i = 0; i < READS; i++) {
		struct harness_resp *w = harness_request("POST", "sandbox",
		    "/v1/triggers/bill.updated", hdr, "{}", 2), *r;
		const char *id = harness_json_string(w, "event_id");

		harness_expect(w, 202);
		ck_assert_ptr_nonnull(id);
		r = key_get(harness_fmt("/v1/activity/%s", id));
		ck_assert_msg(r->status == 200, "write %d: its event %s read back %ld: %s", i,
		    id, r->status, r->body);
		harness_resp_free(r);
		harness_resp_free(w);
	}
	receiver_stop(rc);
}
END_TEST

static atomic_int reads_stop, reads_done, reads_failed;
static char reads_failure[256];

static void *
read_loop(void *arg)
{
	(void)arg;
	while (!atomic_load(&reads_stop)) {
		struct harness_resp *r = key_get("/v1/bills?limit=5");

		if (r->status != 200 && atomic_fetch_add(&reads_failed, 1) == 0)
			snprintf(reads_failure, sizeof(reads_failure), "%ld %.200s", r->status,
			    r->status == 0 ? r->error : r->body);
		atomic_fetch_add(&reads_done, 1);
		harness_resp_free(r);
		harness_sleep_ms(5);
	}
	return NULL;
}

/* The standby stopped, and killed, under reads: the primary answers them. */
START_TEST(standby_gone_reads_go_to_the_primary)
{
	static const char *const how[] = { "stop", "kill" };
	struct receiver *rc;
	pthread_t th[4];

	ck_assert_ptr_nonnull(rc = receiver_start(NULL));
	for (size_t k = 0; k < sizeof(how) / sizeof(how[0]); k++) {
		char secondary[2];

		formation_settled();
		if (k == 0)
			tenant(rc);
		snprintf(secondary, sizeof(secondary), "%s", ha_primary()[0] == 'a' ? "b" : "a");
		atomic_store(&reads_stop, 0);
		atomic_store(&reads_done, 0);
		atomic_store(&reads_failed, 0);
		for (int i = 0; i < 4; i++)
			ck_assert_int_eq(pthread_create(&th[i], NULL, read_loop, NULL), 0);
		harness_sleep_ms(1000);
		ck_assert_int_eq(ha(how[k], secondary, NULL), 0);
		harness_sleep_ms(3000);
		atomic_store(&reads_stop, 1);
		for (int i = 0; i < 4; i++)
			pthread_join(th[i], NULL);
		fprintf(stderr, "standby %s under reads: %d reads, %d failed\n", how[k],
		    atomic_load(&reads_done), atomic_load(&reads_failed));
		ck_assert_msg(atomic_load(&reads_failed) == 0, "%s of the standby: %d of %d reads"
		    " failed, the first %s", how[k], atomic_load(&reads_failed),
		    atomic_load(&reads_done), reads_failure);
		ck_assert_int_gt(atomic_load(&reads_done), 40);
	}
	receiver_stop(rc);
}
END_TEST

/* ---- the runs ---- */

/*
 * The load, the fault at LOAD_BEFORE_MS (scripts/ha CMD on the primary),
 * the answers classified and the checks above. The node is started again
 * at the end, and the formation waited for.
 */
static void
failover_run(const char *cmd)
{
	int total = (LOAD_BEFORE_MS + LOAD_AFTER_MS) * LOAD_RATE / 1000, ok = 0, n503 = 0;
	int other = 0;
	pid_t api = harness_api_pid(), jobs = harness_jobs_pid(), deliver = harness_deliver_pid();
	long long first503 = -1, last503 = -1;
	pthread_t th[LOAD_THREADS];
	struct receiver *rc;
	char primary[8], *since;
	PGconn *pg;

	/* every node running, a primary and its secondary (an earlier run's
	 * node rejoins here) */
	formation_settled();
	ck_assert_ptr_nonnull(rc = receiver_start(NULL));
	tenant(rc);
	since = devacct_sql_value("SELECT now()::text", NULL, NULL);
	snprintf(primary, sizeof(primary), "%s", ha_primary());
	ck_assert_msg(primary[0] != '\0', "the monitor names no primary");

	memset(shots, 0, sizeof(shots));
	atomic_store(&next_shot, 0);
	load_t0 = harness_now_ms();
	for (int i = 0; i < LOAD_THREADS; i++)
		ck_assert_int_eq(pthread_create(&th[i], NULL, load_thread, NULL), 0);
	harness_sleep_ms(LOAD_BEFORE_MS);
	ck_assert_int_eq(ha(cmd, primary, NULL), 0);
	for (int i = 0; i < LOAD_THREADS; i++)
		pthread_join(th[i], NULL);

	for (int i = 0; i < total; i++) {
		const struct shot *s = &shots[i];

		if (s->status >= 200 && s->status < 300) {
			ok++;
		} else if (s->coded_503) {
			n503++;
			if (first503 < 0 || s->done_ms < first503)
				first503 = s->done_ms;
			if (s->done_ms > last503)
				last503 = s->done_ms;
		} else if (other++ < 5) {
			fprintf(stderr, "failover (%s): request %d (op %d) at %lld ms: %ld %s\n",
			    cmd, i, (int)s->op, s->done_ms, s->status, s->body);
		}
	}
	{
		int per_s[(LOAD_BEFORE_MS + LOAD_AFTER_MS) / 1000 + 32] = { 0 };
		char line[512];
		size_t at = 0;

		for (int i = 0; i < total; i++)
			if (shots[i].coded_503 && shots[i].done_ms / 1000 < (long long)(sizeof(per_s) /
			    sizeof(per_s[0])))
				per_s[shots[i].done_ms / 1000]++;
		for (size_t k = 0; k < sizeof(per_s) / sizeof(per_s[0]) && at < sizeof(line) - 16;
		    k++)
			at += (size_t)snprintf(line + at, sizeof(line) - at, " %d", per_s[k]);
		fprintf(stderr, "failover (%s): 503s in each second of the run:%s\n", cmd, line);
	}
	fprintf(stderr, "failover (%s of node %s at %d ms): %d requests at %d/s, %d succeeded,"
	    " %d answered 503 from %lld to %lld ms (a window of %lld ms), %d other\n",
	    cmd, primary, LOAD_BEFORE_MS, total, LOAD_RATE, ok, n503, first503, last503,
	    n503 > 0 ? last503 - first503 : 0, other);
	ha("events", "12", NULL);	/* the failover's steps, into the log */
	ck_assert_msg(other == 0, "%d answers were neither a success nor a 503 envelope", other);
	ck_assert_msg(strcmp(ha_primary(), primary) != 0, "node %s is still the primary",
	    primary);
	/* the service healed by itself: a request succeeds, nothing restarted */
	ck_assert_int_eq(harness_wait_health(200, 30000), 0);
	ck_assert_int_eq(harness_wait_workers_healthy(30000), 0);
	ck_assert_int_eq(harness_api_pid(), api);
	ck_assert_int_eq(harness_jobs_pid(), jobs);
	ck_assert_int_eq(harness_deliver_pid(), deliver);

	pg = primary_conn();
	check_present(pg, OP_SIGNUP, "SELECT count(*) FROM users WHERE id = ANY($1::text[])",
	    "sign-ups", total);
	check_present(pg, OP_LINK_TOKEN,
	    "SELECT count(*) FROM link_tokens WHERE id = ANY($1::text[])", "link tokens", total);
	check_present(pg, OP_TRIGGER, "SELECT count(*) FROM events WHERE id = ANY($1::text[])",
	    "sandbox events", total);
	check_moves(pg, total, since);
	check_delivered(pg, rc, since);
	PQfinish(pg);
	receiver_stop(rc);
	free(since);
}

START_TEST(primary_stopped_under_load)
{
	failover_run("stop");
}
END_TEST

START_TEST(primary_killed_under_load)
{
	failover_run("kill");
}
END_TEST

static Suite *
failover_suite(void)
{
	Suite *s = suite_create("faults_failover");
	TCase *tc = tcase_create("failover");

	tcase_add_unchecked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 420);
	tcase_add_test(tc, reads_go_to_the_standby);
	tcase_add_test(tc, a_client_reads_its_own_write);
	tcase_add_test(tc, standby_gone_reads_go_to_the_primary);
	tcase_add_test(tc, primary_stopped_under_load);
	tcase_add_test(tc, primary_killed_under_load);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return harness_run_suite(failover_suite());
}
