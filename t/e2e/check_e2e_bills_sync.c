/*
 * The bills delta sync end to end: GET /v1/account-links/{link_id}/bills/sync
 * on sandbox account links retrieved by the stack's bds-jobs, and bills
 * written by the library itself (bills_store / bills_delete through a
 * struct req of the test's own, so every write takes the real bill_seq
 * lock and number).
 *
 * The sync client here follows the spec's loop rules and nothing else:
 * omit the cursor on the first sync, repeat while has_more passing
 * next_cursor, persist the cursor only after has_more is false, upsert
 * added and modified by id, apply removed as deletes. Its map holds each
 * bill's entity as JSON text.
 *
 * What it proves: a first sync is every bill in `added`, then an empty
 * cycle; pages of 5 over 1,000 bills give each once; the buckets
 * (added / modified / removed; created and deleted inside one window:
 * nowhere); a concurrent writer (a thread with its own connection, 1,000
 * random inserts, changes and deletes) during the client's pagination:
 * after every cycle the client holds exactly the server's bills as of the
 * cycle's upper bound, and at the end exactly the server's bills; cursors
 * truncated, bit-flipped, of another link or client, or garbage: 400
 * INVALID_CURSOR, never 500; a webhook-driven client (a sync per bill.*
 * delivery, deliveries repeated and out of order) ends equal to the
 * server; the errors (404, 400) and a REVOKED link's history.
 *
 * The per-cycle check reads the cycle's upper bound from the client's
 * persisted cursor with the stack's cursor_key (lib/core/cursor.c): the
 * test knows the format, a client never needs to.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>
#include <json-c/json.h>
#include <libpq-fe.h>

#include "core/arena.h"
#include "core/config.h"
#include "core/crypto.h"
#include "core/cursor.h"
#include "core/db.h"
#include "core/req.h"
#include "bills/bills.h"
#include "devacct.h"
#include "harness.h"
#include "receiver.h"

#define N(x) (sizeof(x) / sizeof((x)[0]))
#define IDLE_MS 60000
#define WAIT_MS 10000
#define WRITER_OPS 1000
#define MAX_PAGES 5000
#define MAX_CYCLES 100000

static struct devacct dev;

/* ------------------------------------------------------------------ */
/* Tenants, links, the API                                             */

struct tenant {
	char	*client;
	char	*key;
};

static void
tenant_new(struct tenant *t, const char *env)
{
	t->client = devacct_client_new(&dev);
	t->key = devacct_key_new(&dev, t->client, env);
}

static void
tenant_free(struct tenant *t)
{
	free(t->client);
	free(t->key);
}

static struct harness_resp *
key_call(const char *key, const char *method, const char *path, const char *body,
    const char *const extra[])
{
	const char *host = strncmp(key, "bds_sandbox_", 12) == 0 ? "sandbox" : "api";

	return devacct_call(method, host, path, devacct_bearer(key), body, extra);
}

static void
jobs_idle(void)
{
	ck_assert_msg(harness_jobs_wait_idle(IDLE_MS) == 0, "%s", harness_error());
}

/* A sandbox account link for the fixture, retrieved; its id (malloc'ed). */
static char *
sandbox_link(const struct tenant *t, const char *username)
{
	char *id = devacct_sandbox_link(t->key, harness_fmt("u-%s", username), username);

	jobs_idle();
	return id;
}

/* A new client with a sandbox key and a retrieved link of the fixture. */
static char *
tenant_link(struct tenant *t, const char *username)
{
	tenant_new(t, "sandbox");
	return sandbox_link(t, username);
}

/* GET the sync; query is appended as given ("" or "&limit=5"...). The
 * path may be longer than harness_fmt's buffer (a cursor over 4 KiB). */
static struct harness_resp *
sync_get(const char *key, const char *link, const char *cursor, const char *query)
{
	static char path[8192];
	int n = snprintf(path, sizeof(path), "/v1/account-links/%s/bills/sync?%s%s%s", link,
	    cursor != NULL ? "cursor=" : "", cursor != NULL ? cursor : "", query);

	ck_assert(n > 0 && (size_t)n < sizeof(path));
	return key_call(key, "GET", path, NULL, NULL);
}

static long long
nbills(const char *link)
{
	return devacct_sql_int("SELECT count(*) FROM bills WHERE link_id = $1 AND"
	    " deleted_at IS NULL", link, NULL);
}

/* ------------------------------------------------------------------ */
/* Library handles: the test writes bills as a retrieval does           */

static struct config cfg;
static int cfg_ready;

static void
cfg_setup(void)
{
	char err[256];

	if (cfg_ready)
		return;
	ck_assert_int_eq(crypto_setup(), 0);
	ck_assert_msg(config_load(&cfg, harness_config_path(), err, sizeof(err)) == 0,
	    "config: %s", err);
	cfg_ready = 1;
}

static void
cfg_teardown(void)
{
	if (cfg_ready)
		config_free(&cfg);
	cfg_ready = 0;
}

/* A writer: its own connection, arena and request, one link's bills. */
struct writer {
	struct db	*db;
	struct arena	 arena;
	struct req	 r;
	struct bills_link l;
	char		 client[96], link[96], user[128], biller[96], biller_name[128],
			 account[96];
	unsigned	 seed;
	int		 n;		/* statements made so far */
	int		 ops[3];	/* inserts, changes, deletes done */
};

/* The first value of q (params $1 $2) on conn, copied into buf; 0 if a row. */
static int
pg_value(PGconn *conn, const char *q, const char *p1, const char *p2, char *buf, size_t len)
{
	const char *p[2] = { p1, p2 };
	PGresult *res = PQexecParams(conn, q, 2, NULL, p, NULL, NULL, 0);
	int found;

	ck_assert_msg(PQresultStatus(res) == PGRES_TUPLES_OK, "%s: %s", q,
	    PQerrorMessage(conn));
	found = PQntuples(res) > 0 && !PQgetisnull(res, 0, 0);
	if (found)
		snprintf(buf, len, "%s", PQgetvalue(res, 0, 0));
	PQclear(res);
	return found ? 0 : -1;
}

static void
writer_init(struct writer *w, const char *link, unsigned seed)
{
	PGconn *pg = devacct_pg();

	cfg_setup();
	memset(w, 0, sizeof(*w));
	ck_assert_ptr_nonnull(w->db = db_new(harness_database_url()));
	arena_init(&w->arena);
	req_init(&w->r, &cfg, w->db, &w->arena, "test-writer");
	w->seed = seed;
	snprintf(w->link, sizeof(w->link), "%s", link);
	ck_assert_int_eq(pg_value(pg, "SELECT client_id FROM links WHERE id = $1 AND $2::text"
	    " IS NULL", link, NULL, w->client, sizeof(w->client)), 0);
	ck_assert_int_eq(pg_value(pg, "SELECT client_user_id FROM links WHERE id = $1 AND"
	    " $2::text IS NULL", link, NULL, w->user, sizeof(w->user)), 0);
	ck_assert_int_eq(pg_value(pg, "SELECT l.biller_id FROM links l WHERE l.id = $1 AND"
	    " $2::text IS NULL", link, NULL, w->biller, sizeof(w->biller)), 0);
	ck_assert_int_eq(pg_value(pg, "SELECT b.name FROM links l JOIN billers b ON"
	    " b.id = l.biller_id WHERE l.id = $1 AND $2::text IS NULL", link, NULL,
	    w->biller_name, sizeof(w->biller_name)), 0);
	if (pg_value(pg, "SELECT account_id FROM bills WHERE link_id = $1 AND $2::text IS NULL"
	    " AND account_id IS NOT NULL LIMIT 1", link, NULL, w->account, sizeof(w->account)) != 0)
		w->account[0] = '\0';
	w->l.client_id = w->client;
	w->l.environment = "sandbox";
	w->l.link_id = w->link;
	w->l.client_user_id = w->user;
	w->l.biller_id = w->biller;
	w->l.biller_name = w->biller_name;
}

static void
writer_free(struct writer *w)
{
	arena_free(&w->arena);
	db_free(w->db);
}

static const char *const statuses[] = { "PENDING", "PAID", "PARTIALLY_PAID" };

/* Store statement ref with fresh random figures (a new bill or a change). */
static void
writer_store(struct writer *w, const char *ref, const char *status)
{
	struct bills_statement st;
	int created;

	memset(&st, 0, sizeof(st));
	st.ref = ref;
	st.account_ref = "acct-1";
	st.status = status != NULL ? status : statuses[rand_r(&w->seed) % N(statuses)];
	st.total.minor = 1000 + rand_r(&w->seed) % 900000;
	st.total.currency = st.amount_due.currency = st.previous_balance.currency = "USD";
	st.amount_due.minor = strcmp(st.status, "PAID") == 0 ? 0 :
	    strcmp(st.status, "PARTIALLY_PAID") == 0 ? st.total.minor / 2 : st.total.minor;
	st.previous_balance.minor = rand_r(&w->seed) % 5000;
	st.due_date = "2027-01-21";
	st.statement_date = "2027-01-01";
	st.period_start = "2026-12-01";
	st.period_end = "2026-12-31";
	st.bill_number = ref;
	if (strcmp(st.status, "PENDING") != 0) {
		st.paid_at = "2027-01-10T12:00:00Z";
		st.paid_reason = "portal_payment_observed";
	}
	ck_assert_int_eq(bills_store(&w->r, &w->l, w->account[0] ? w->account : NULL, "9876",
	    &st, &created), 0);
}

/* A random bill of the link that is not deleted: its id or statement ref. */
static int
writer_pick(struct writer *w, const char *col, char *buf, size_t len)
{
	return pg_value(db_conn(w->db), harness_fmt("SELECT %s FROM bills WHERE link_id = $1"
	    " AND client_id = $2 AND deleted_at IS NULL ORDER BY random() LIMIT 1", col),
	    w->link, w->client, buf, len);
}

/* One random operation (in the caller's transaction). */
static void
writer_op(struct writer *w)
{
	char buf[128];
	int k = rand_r(&w->seed) % 10;

	if (k < 4 || writer_pick(w, k < 7 ? "statement_ref" : "id", buf, sizeof(buf)) != 0) {
		writer_store(w, arena_printf(&w->arena, "w-%s-%d", w->link, w->n++), NULL);
		w->ops[0]++;
	} else if (k < 7) {
		writer_store(w, buf, NULL);
		w->ops[1]++;
	} else {
		ck_assert_int_eq(bills_delete(&w->r, w->client, w->link, buf), 1);
		w->ops[2]++;
	}
}

/* n operations, 1-3 per transaction, committed. */
static void
writer_run(struct writer *w, int n, int pause_us)
{
	while (n > 0) {
		int batch = 1 + rand_r(&w->seed) % 3;

		ck_assert_int_eq(db_begin(w->db), 0);
		for (; batch > 0 && n > 0; batch--, n--)
			writer_op(w);
		ck_assert_int_eq(db_commit(w->db), 0);
		arena_reset(&w->arena);
		if (pause_us > 0)
			usleep((useconds_t)(rand_r(&w->seed) % pause_us));
	}
}

/* ------------------------------------------------------------------ */
/* The sync client                                                     */

#define MAP_BUCKETS 4096

struct node {
	char		*id;
	char		*entity;
	struct node	*next;
};

struct map {
	struct node	*b[MAP_BUCKETS];
	size_t		 n;
};

static unsigned
map_hash(const char *s)
{
	unsigned h = 2166136261u;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h % MAP_BUCKETS;
}

static struct node *
map_get(struct map *m, const char *id)
{
	for (struct node *x = m->b[map_hash(id)]; x != NULL; x = x->next)
		if (strcmp(x->id, id) == 0)
			return x;
	return NULL;
}

static void
map_put(struct map *m, const char *id, const char *entity)
{
	struct node *x = map_get(m, id);

	if (x == NULL) {
		unsigned h = map_hash(id);

		x = calloc(1, sizeof(*x));
		x->id = strdup(id);
		x->next = m->b[h];
		m->b[h] = x;
		m->n++;
	}
	free(x->entity);
	x->entity = entity != NULL ? strdup(entity) : NULL;
}

static void
map_del(struct map *m, const char *id)
{
	for (struct node **p = &m->b[map_hash(id)]; *p != NULL; p = &(*p)->next)
		if (strcmp((*p)->id, id) == 0) {
			struct node *x = *p;

			*p = x->next;
			free(x->id);
			free(x->entity);
			free(x);
			m->n--;
			return;
		}
}

static void
map_clear(struct map *m)
{
	for (size_t i = 0; i < MAP_BUCKETS; i++)
		while (m->b[i] != NULL) {
			struct node *x = m->b[i];

			m->b[i] = x->next;
			free(x->id);
			free(x->entity);
			free(x);
		}
	m->n = 0;
}

/* One JSON text per entity: parsed and printed plain, on both sides. */
static char *
canon(struct json_object *o)
{
	return strdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
}

static char *
canon_text(const char *text)
{
	struct json_object *o = json_tokener_parse(text);
	char *s;

	ck_assert_ptr_nonnull(o);
	s = canon(o);
	json_object_put(o);
	return s;
}

struct client {
	const char	*key, *link;
	char		*cursor;	/* persisted: only after has_more false */
	struct map	 bills;
	int		 limit;
	long		 pages, cycles;
	long		 added, modified, removed;	/* over all cycles */
};

static void
client_init(struct client *c, const char *key, const char *link, int limit)
{
	memset(c, 0, sizeof(*c));
	c->key = key;
	c->link = link;
	c->limit = limit;
}

static void
client_free(struct client *c)
{
	map_clear(&c->bills);
	free(c->cursor);
	c->cursor = NULL;
}

/* Each id at most once in one cycle, across its pages and buckets. */
static void
seen_once(struct map *seen, const char *id)
{
	ck_assert_msg(map_get(seen, id) == NULL, "bill %s twice in one cycle", id);
	map_put(seen, id, NULL);
}

/* Apply one bucket of a page. */
static void
client_apply(struct client *c, struct map *seen, struct json_object *arr, int removed)
{
	ck_assert_ptr_nonnull(arr);
	ck_assert(json_object_is_type(arr, json_type_array));
	for (size_t i = 0; i < json_object_array_length(arr); i++) {
		struct json_object *o = json_object_array_get_idx(arr, i), *v;
		const char *id;

		/* the spec's loop upserts by bill_id: the same value as id */
		ck_assert(json_object_object_get_ex(o, "bill_id", &v));
		id = json_object_get_string(v);
		ck_assert(json_object_object_get_ex(o, "id", &v));
		ck_assert_str_eq(json_object_get_string(v), id);
		seen_once(seen, id);
		if (removed) {
			ck_assert_uint_eq(json_object_object_length(o), 2);
			map_del(&c->bills, id);
		} else {
			char *s = canon(o);

			map_put(&c->bills, id, s);
			free(s);
		}
	}
}

/* One cycle by the loop rules; the number of pages it took. */
static long
client_cycle(struct client *c)
{
	char *cur = c->cursor != NULL ? strdup(c->cursor) : NULL;
	struct map seen = { 0 };
	long pages = 0;

	for (;;) {
		struct harness_resp *r = sync_get(c->key, c->link, cur,
		    harness_fmt("%slimit=%d", cur != NULL ? "&" : "", c->limit));
		struct json_object *a, *m, *d;
		const char *next;
		int more;

		ck_assert_int_lt(++pages, MAX_PAGES);
		harness_expect(r, 200);
		a = devacct_json(r, "data.added");
		m = devacct_json(r, "data.modified");
		d = devacct_json(r, "data.removed");
		client_apply(c, &seen, a, 0);
		client_apply(c, &seen, m, 0);
		client_apply(c, &seen, d, 1);
		ck_assert_int_le((int)(json_object_array_length(a) + json_object_array_length(m) +
		    json_object_array_length(d)), c->limit);
		c->added += (long)json_object_array_length(a);
		c->modified += (long)json_object_array_length(m);
		c->removed += (long)json_object_array_length(d);
		more = devacct_bool(r, "data.has_more");
		next = devacct_str(r, "data.next_cursor");
		ck_assert_ptr_nonnull(next);
		free(cur);
		cur = strdup(next);
		harness_resp_free(r);
		if (!more)
			break;
	}
	free(c->cursor);
	c->cursor = cur;	/* persisted only now */
	map_clear(&seen);
	c->pages += pages;
	c->cycles++;
	return pages;
}

/* The start a persisted cursor holds (the last cycle's upper bound). */
static long long
cursor_start(const char *client, const char *link, const char *cursor)
{
	struct arena a;
	char **f;
	size_t n;
	long long v;

	cfg_setup();
	arena_init(&a);
	ck_assert_int_eq(cursor_decode(&a, cfg.cursor_key,
	    arena_printf(&a, "bills_sync/%s/sandbox/%s", client, link), cursor, &f, &n), 0);
	ck_assert_uint_eq(n, 1);
	v = atoll(f[0]);
	arena_free(&a);
	return v;
}

/*
 * The client against the server as of upper: every bill last changed at
 * or below upper is held by the client iff it is not deleted, with the
 * same entity; a bill created above upper is not held; nothing the server
 * does not have is held. With upper < 0 (the end, nothing writing): the
 * client holds exactly the server's bills that are not deleted.
 */
static void
client_check(struct client *c, const char *client_id, long long upper)
{
	const char *p[2] = { client_id, c->link };
	PGresult *res = PQexecParams(devacct_pg(), "SELECT id, entity, created_seq,"
	    " changed_seq, deleted_at IS NOT NULL FROM bills WHERE client_id = $1 AND"
	    " link_id = $2", 2, NULL, p, NULL, NULL, 0);
	size_t held = 0;

	ck_assert_int_eq(PQresultStatus(res), PGRES_TUPLES_OK);
	for (int i = 0; i < PQntuples(res); i++) {
		const char *id = PQgetvalue(res, i, 0);
		long long created = atoll(PQgetvalue(res, i, 2));
		long long changed = atoll(PQgetvalue(res, i, 3));
		int deleted = PQgetvalue(res, i, 4)[0] == 't';
		struct node *x = map_get(&c->bills, id);

		if (x != NULL)
			held++;
		if (upper >= 0 && changed > upper) {
			ck_assert_msg(created <= upper || x == NULL,
			    "bill %s created after the cycle (%lld > %lld) is held", id, created,
			    upper);
			continue;
		}
		if (deleted) {
			ck_assert_msg(x == NULL, "deleted bill %s still held (upper %lld)", id,
			    upper);
		} else {
			char *want = canon_text(PQgetvalue(res, i, 1));

			ck_assert_msg(x != NULL, "bill %s missed (changed %lld, upper %lld)", id,
			    changed, upper);
			ck_assert_msg(strcmp(x->entity, want) == 0,
			    "bill %s stale (upper %lld):\n held %s\n want %s", id, upper,
			    x->entity, want);
			free(want);
		}
	}
	PQclear(res);
	ck_assert_msg(held == c->bills.n, "the client holds %zu bills the server does not have",
	    c->bills.n - held);
}

/* ------------------------------------------------------------------ */

static void
stack_up(void)
{
	struct harness_opts o;

	harness_opts_defaults(&o);
	o.extra_config = "webhook_concurrency = 1\n";
	harness_fixture_start(&o);
	devacct_legal();
	devacct_new(&dev, "bsync");
	devacct_verify_email(&dev);	/* development keys */
}

/*
 * user_good: the first sync (no cursor) is the 12 bills in added, each the
 * stored entity; has_more false; the next cycle from that cursor is empty
 * and ends with a cursor that opens an empty cycle again.
 */
START_TEST(first_sync_then_empty_cycle)
{
	struct harness_resp *r;
	struct tenant t;
	struct client c;
	char *id;

	id = tenant_link(&t, "user_good");
	r = sync_get(t.key, id, NULL, "");
	harness_expect(r, 200);
	ck_assert_uint_eq(json_object_array_length(devacct_json(r, "data.added")), 12);
	ck_assert_pstr_eq(devacct_text(r, "data.modified"), "[]");
	ck_assert_pstr_eq(devacct_text(r, "data.removed"), "[]");
	ck_assert_int_eq(devacct_bool(r, "data.has_more"), 0);
	ck_assert_ptr_nonnull(devacct_str(r, "data.next_cursor"));
	ck_assert_pstr_eq(devacct_str(r, "data.added.0.object"), "bill");
	ck_assert_pstr_eq(devacct_str(r, "data.added.0.link_id"), id);
	harness_resp_free(r);

	client_init(&c, t.key, id, 100);
	ck_assert_int_eq(client_cycle(&c), 1);
	ck_assert_int_eq(c.added, 12);
	ck_assert_uint_eq(c.bills.n, 12);
	client_check(&c, t.client, -1);
	ck_assert_int_eq(cursor_start(t.client, id, c.cursor), 12);
	for (int i = 0; i < 2; i++) {
		r = sync_get(t.key, id, c.cursor, "");
		harness_expect(r, 200);
		ck_assert_pstr_eq(devacct_text(r, "data.added"), "[]");
		ck_assert_pstr_eq(devacct_text(r, "data.modified"), "[]");
		ck_assert_pstr_eq(devacct_text(r, "data.removed"), "[]");
		ck_assert_int_eq(devacct_bool(r, "data.has_more"), 0);
		ck_assert_int_eq(cursor_start(t.client, id, devacct_str(r, "data.next_cursor")), 12);
		harness_resp_free(r);
	}
	ck_assert_int_eq(client_cycle(&c), 1);
	ck_assert_int_eq(c.added, 12);
	client_free(&c);
	cfg_teardown();
	free(id);
	tenant_free(&t);
}
END_TEST

/* user_many: pages of 5, each of the 1,000 bills once, all added; the
 * default limit is 100 and 500 is accepted. */
START_TEST(many_paged_by_five)
{
	struct harness_resp *r;
	struct tenant t;
	struct client c;
	char *id;

	id = tenant_link(&t, "user_many");
	ck_assert_int_eq(nbills(id), 1000);
	client_init(&c, t.key, id, 5);
	ck_assert_int_eq(client_cycle(&c), 200);
	ck_assert_int_eq(c.added, 1000);
	ck_assert_int_eq(c.modified + c.removed, 0);
	ck_assert_uint_eq(c.bills.n, 1000);
	client_check(&c, t.client, -1);
	client_free(&c);
	r = sync_get(t.key, id, NULL, "");
	harness_expect(r, 200);
	ck_assert_uint_eq(json_object_array_length(devacct_json(r, "data.added")), 100);
	ck_assert_int_eq(devacct_bool(r, "data.has_more"), 1);
	harness_resp_free(r);
	r = sync_get(t.key, id, NULL, "limit=500");
	harness_expect(r, 200);
	ck_assert_uint_eq(json_object_array_length(devacct_json(r, "data.added")), 500);
	harness_resp_free(r);
	cfg_teardown();
	free(id);
	tenant_free(&t);
}
END_TEST

/* The id of the bill of statement ref, malloc'ed. */
static char *
bill_of_ref(const char *link, const char *ref)
{
	return devacct_sql_value("SELECT id FROM bills WHERE link_id = $1 AND"
	    " statement_ref = $2", link, ref);
}

/*
 * The buckets: after a full sync, A changed, B deleted, C created, D
 * created and deleted, E created then changed: the next cycle is added
 * [C, E] (E's last version), modified [A], removed [{id: B}], D nowhere.
 */
START_TEST(buckets)
{
	struct harness_resp *r;
	struct writer w;
	struct tenant t;
	struct client c;
	char *id, *a, *b, *d;

	id = tenant_link(&t, "user_good");
	client_init(&c, t.key, id, 100);
	client_cycle(&c);
	writer_init(&w, id, 7);
	a = devacct_sql_value("SELECT statement_ref FROM bills WHERE link_id = $1"
	    " ORDER BY statement_date LIMIT 1", id, NULL);
	b = devacct_sql_value("SELECT id FROM bills WHERE link_id = $1"
	    " ORDER BY statement_date DESC LIMIT 1", id, NULL);
	ck_assert_int_eq(db_begin(w.db), 0);
	writer_store(&w, a, "PENDING");
	ck_assert_int_eq(bills_delete(&w.r, w.client, id, b), 1);
	ck_assert_int_eq(bills_delete(&w.r, w.client, id, b), 0);	/* once */
	writer_store(&w, "ref-c", "PENDING");
	writer_store(&w, "ref-d", "PAID");
	writer_store(&w, "ref-e", "PENDING");
	writer_store(&w, "ref-e", "PAID");
	ck_assert_int_eq(db_commit(w.db), 0);
	ck_assert_int_eq(db_begin(w.db), 0);
	d = bill_of_ref(id, "ref-d");
	ck_assert_int_eq(bills_delete(&w.r, w.client, id, d), 1);
	ck_assert_int_eq(db_commit(w.db), 0);
	arena_reset(&w.arena);

	r = sync_get(t.key, id, c.cursor, "");
	harness_expect(r, 200);
	ck_assert_uint_eq(json_object_array_length(devacct_json(r, "data.added")), 2);
	ck_assert_pstr_eq(devacct_str(r, "data.added.0.bill_number"), "ref-c");
	ck_assert_pstr_eq(devacct_str(r, "data.added.1.bill_number"), "ref-e");
	ck_assert_pstr_eq(devacct_str(r, "data.added.1.status"), "PAID");
	ck_assert_uint_eq(json_object_array_length(devacct_json(r, "data.modified")), 1);
	ck_assert_pstr_eq(devacct_str(r, "data.modified.0.bill_number"), a);
	ck_assert_pstr_eq(devacct_text(r, "data.removed"),
	    harness_fmt("[{\"id\":\"%s\",\"bill_id\":\"%s\"}]", b, b));
	ck_assert_ptr_null(strstr(r->body, d));
	harness_resp_free(r);

	/* the same in pages of one: D still moves the position, nothing twice */
	{
		struct client one;

		client_init(&one, t.key, id, 1);
		one.cursor = strdup(c.cursor);
		client_cycle(&one);
		ck_assert_int_eq(one.added, 2);
		ck_assert_int_eq(one.modified, 1);
		ck_assert_int_eq(one.removed, 1);
		client_free(&one);
	}
	client_cycle(&c);
	ck_assert_uint_eq(c.bills.n, 13);
	client_check(&c, t.client, -1);
	free(a);
	free(b);
	free(d);
	writer_free(&w);
	client_free(&c);
	cfg_teardown();
	free(id);
	tenant_free(&t);
}
END_TEST

/* ------------------------------------------------------------------ */
/* The concurrent writer                                               */

struct writer_thread {
	struct writer	 w;
	volatile int	 done;
};

static void *
writer_main(void *arg)
{
	struct writer_thread *wt = arg;

	writer_run(&wt->w, WRITER_OPS, 3000);
	__atomic_store_n(&wt->done, 1, __ATOMIC_SEQ_CST);
	return NULL;
}

/* One cycle of c and the check as of its upper bound; 1 when the link's
 * sequence moved while the cycle paged (writes met the pagination). */
static int
cycle_checked(struct client *c, const char *client_id, long long *upper)
{
	long pages = client_cycle(c);
	long long last;

	*upper = cursor_start(client_id, c->link, c->cursor);
	client_check(c, client_id, *upper);
	last = devacct_sql_int("SELECT last_seq FROM bill_seq WHERE link_id = $1", c->link,
	    NULL);
	return pages > 1 && last > *upper;
}

/*
 * Two sync clients (pages of 7) run cycles while a thread with its own
 * connection makes 1,000 random inserts, changes and deletes on the same
 * link through bills_store / bills_delete: one keeps its cursor from cycle
 * to cycle, the other starts over (no cursor: the whole history, dozens of
 * pages) each time. After every cycle each equals the server as of the
 * cycle's upper bound (client_check); at the end (writer stopped, one more
 * full cycle) the first equals the server.
 */
START_TEST(concurrent_writer)
{
	struct writer_thread wt;
	struct tenant t;
	struct client c, full;
	pthread_t th;
	long long upper, prev = -1, last;
	long during = 0, fulls = 0;
	char *id;

	id = tenant_link(&t, "user_good");
	writer_init(&wt.w, id, 20261101);
	wt.done = 0;
	/* more bills first, so a cycle has pages to write between */
	writer_run(&wt.w, 150, 0);
	client_init(&c, t.key, id, 7);
	ck_assert_int_eq(pthread_create(&th, NULL, writer_main, &wt), 0);
	while (!__atomic_load_n(&wt.done, __ATOMIC_SEQ_CST)) {
		ck_assert_int_lt(c.cycles, MAX_CYCLES);
		during += cycle_checked(&c, t.client, &upper);
		ck_assert_int_ge(upper, prev);
		prev = upper;
		client_init(&full, t.key, id, 7);
		during += cycle_checked(&full, t.client, &upper);
		ck_assert_int_eq(full.modified + full.removed, 0);
		client_free(&full);
		fulls++;
	}
	ck_assert_int_eq(pthread_join(th, NULL), 0);
	ck_assert_int_eq(wt.w.ops[0] + wt.w.ops[1] + wt.w.ops[2], WRITER_OPS + 150);
	ck_assert_int_gt(wt.w.ops[1], 0);
	ck_assert_int_gt(wt.w.ops[2], 0);
	client_cycle(&c);
	client_check(&c, t.client, -1);
	ck_assert_uint_eq(c.bills.n, (size_t)nbills(id));
	last = devacct_sql_int("SELECT last_seq FROM bill_seq WHERE link_id = $1", id, NULL);
	ck_assert_int_eq(cursor_start(t.client, id, c.cursor), last);
	/* the writes did meet the pagination */
	ck_assert_int_gt(during, 0);
	ck_assert_int_gt(c.cycles, 2);
	fprintf(stderr, "concurrent_writer: %ld cycles (%ld pages) + %ld full syncs, %ld"
	    " multi-page cycles with writes during them; writer %d inserts %d changes"
	    " %d deletes; client added %ld modified %ld removed %ld; %zu bills\n", c.cycles,
	    c.pages, fulls, during, wt.w.ops[0], wt.w.ops[1], wt.w.ops[2], c.added,
	    c.modified, c.removed, c.bills.n);
	writer_free(&wt.w);
	client_free(&c);
	cfg_teardown();
	free(id);
	tenant_free(&t);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Cursors                                                             */

/* %XX for every byte: the cursor exactly as given reaches the API. */
static const char *
pct(const unsigned char *s, size_t n)
{
	static char buf[4 * 1024];
	size_t o = 0;

	ck_assert_uint_lt(n * 3, sizeof(buf));
	for (size_t i = 0; i < n; i++)
		o += (size_t)snprintf(buf + o, sizeof(buf) - o, "%%%02X", s[i]);
	buf[o] = '\0';
	return buf;
}

static void
expect_invalid(const char *key, const char *link, const char *cursor, const char *what)
{
	struct harness_resp *r = sync_get(key, link, cursor, "");
	const char *msg = harness_check_coded(r, 400, "INVALID_CURSOR");

	ck_assert_msg(msg == NULL, "%s: %s", what, msg);
	harness_resp_free(r);
}

/*
 * Truncated at every length, every bit of the decoded cursor flipped, every
 * bit of every character flipped (no NUL; the high bit makes it no text),
 * longer than any cursor, another link's cursor, another client's cursor,
 * random garbage: 400 INVALID_CURSOR each, never 500 or VALIDATION_ERROR;
 * the valid cursors still work after.
 */
START_TEST(cursor_property)
{
	struct tenant t, other;
	struct harness_resp *r;
	struct arena a;
	char *link, *link2, *olink, *mid, *end, *omid;
	const char *cursors[2];
	unsigned seed = 4242;
	long checked = 0;

	cfg_setup();
	arena_init(&a);
	tenant_new(&t, "sandbox");
	tenant_new(&other, "sandbox");
	link = sandbox_link(&t, "user_good");
	link2 = sandbox_link(&t, "user_multi");	/* another login: another link */
	olink = sandbox_link(&other, "user_good");
	r = sync_get(t.key, link, NULL, "limit=5");
	harness_expect(r, 200);
	mid = strdup(devacct_str(r, "data.next_cursor"));	/* (start, pos, upper) */
	harness_resp_free(r);
	r = sync_get(t.key, link, NULL, "");
	harness_expect(r, 200);
	end = strdup(devacct_str(r, "data.next_cursor"));	/* (start) */
	harness_resp_free(r);
	r = sync_get(other.key, olink, NULL, "limit=5");
	harness_expect(r, 200);
	omid = strdup(devacct_str(r, "data.next_cursor"));
	harness_resp_free(r);
	cursors[0] = mid;
	cursors[1] = end;

	for (size_t k = 0; k < N(cursors); k++) {
		const char *cur = cursors[k];
		size_t len = strlen(cur), blen;
		unsigned char *bytes;

		for (size_t n = 0; n < len; n++, checked++)
			expect_invalid(t.key, link, pct((const unsigned char *)cur, n), "truncated");
		ck_assert_int_eq(crypto_b64url_decode(&a, cur, &bytes, &blen), 0);
		for (size_t i = 0; i < blen * 8; i++, checked++) {
			bytes[i / 8] ^= (unsigned char)(1u << (i % 8));
			expect_invalid(t.key, link, crypto_b64url_encode(&a, bytes, blen),
			    "bit flipped");
			bytes[i / 8] ^= (unsigned char)(1u << (i % 8));
		}
		for (size_t i = 0; i < len; i++)
			for (int bit = 0; bit < 8; bit++) {
				unsigned char s[1024];

				memcpy(s, cur, len);
				s[i] ^= (unsigned char)(1u << bit);
				if (s[i] == 0)
					continue;
				/* a flip that only moves base64url padding bits of
				 * the last character may decode to the same bytes */
				{
					unsigned char *d1, *d2;
					size_t l1, l2;
					char tmp[1024];

					memcpy(tmp, s, len);
					tmp[len] = '\0';
					if (crypto_b64url_decode(&a, tmp, &d1, &l1) == 0 &&
					    crypto_b64url_decode(&a, cur, &d2, &l2) == 0 &&
					    l1 == l2 && memcmp(d1, d2, l1) == 0)
						continue;
				}
				expect_invalid(t.key, link, pct(s, len), "char flipped");
				checked++;
			}
		arena_reset(&a);
		/* the same cursor on another link of the client */
		expect_invalid(t.key, link2, cur, "another link");
	}
	/* another client's cursor on the client's own link; on the other's
	 * link the link itself is refused first */
	expect_invalid(t.key, link, omid, "another client");
	r = sync_get(t.key, olink, omid, "");
	harness_assert_coded(r, 404, "LINK_NOT_FOUND");
	harness_resp_free(r);
	/* garbage: random printable text of random length, and near misses */
	for (int i = 0; i < 200; i++, checked++) {
		unsigned char s[300];
		size_t n = (size_t)(rand_r(&seed) % sizeof(s));

		for (size_t j = 0; j < n; j++)
			s[j] = (unsigned char)(32 + rand_r(&seed) % 95);
		expect_invalid(t.key, link, pct(s, n), "garbage");
	}
	{
		char *huge = malloc(5001);
		const char *fixed[] = { "", "0", "AAAA", "null", "%7B%7D", "cursor",
		    "AQEAATA", harness_fmt("%s%s", mid, "A"), harness_fmt("%sA", end), "%ff",
		    "%c3%28", "%00", "%zz", huge };

		memset(huge, 'A', 5000);
		huge[5000] = '\0';

		for (size_t i = 0; i < N(fixed); i++)
			expect_invalid(t.key, link, fixed[i], fixed[i] == huge ? "5,000 characters" : fixed[i]);
		free(huge);
	}
	/* a cursor made with another key, the right scope and fields */
	{
		unsigned char k2[32];
		const char *f[3] = { "0", "0", "12" };

		memset(k2, 7, sizeof(k2));
		expect_invalid(t.key, link, cursor_encode(&a, k2, harness_fmt(
		    "bills_sync/%s/sandbox/%s", t.client, link), f, 3), "other key");
		/* the right key, fields out of order or above the link's last */
		f[1] = "13";
		expect_invalid(t.key, link, cursor_encode(&a, cfg.cursor_key, harness_fmt(
		    "bills_sync/%s/sandbox/%s", t.client, link), f, 3), "pos > upper");
		f[0] = "99";
		expect_invalid(t.key, link, cursor_encode(&a, cfg.cursor_key, harness_fmt(
		    "bills_sync/%s/sandbox/%s", t.client, link), f, 1), "start > last");
		f[0] = "-1";
		expect_invalid(t.key, link, cursor_encode(&a, cfg.cursor_key, harness_fmt(
		    "bills_sync/%s/sandbox/%s", t.client, link), f, 1), "negative");
	}
	ck_assert_int_gt(checked, 500);
	/* nothing 500 in the log of the stack either; the valid ones work */
	for (size_t k = 0; k < N(cursors); k++) {
		r = sync_get(t.key, link, cursors[k], "&limit=5");
		harness_expect(r, 200);
		harness_resp_free(r);
	}
	fprintf(stderr, "cursor_property: %ld bad cursors, all 400 INVALID_CURSOR\n", checked);
	arena_free(&a);
	free(mid);
	free(end);
	free(omid);
	free(link);
	free(link2);
	free(olink);
	tenant_free(&t);
	tenant_free(&other);
	cfg_teardown();
}
END_TEST

/* ------------------------------------------------------------------ */
/* The webhook-driven client                                           */

static void
subscribe(const struct tenant *t, struct receiver *rc)
{
	const char *extra[] = { harness_idem_header(), NULL };
	char url[256];
	struct harness_resp *r;

	r = devacct_jwt(&dev, "POST", harness_fmt("/v1/iam/clients/%s/webhooks", t->client),
	    harness_fmt("{\"environment\":\"sandbox\",\"url\":\"%s\",\"events\":"
	    "[\"bill.created\",\"bill.updated\",\"bill.deleted\"]}",
	    receiver_url(rc, "/hook", url, sizeof(url))), extra);
	harness_expect(r, 201);
	harness_resp_free(r);
}

/* bds-deliver until the receiver holds want requests. */
static void
deliver_until(struct receiver *rc, size_t want)
{
	for (int i = 0; i < 20 && receiver_count(rc) < want; i++) {
		ck_assert_int_eq(harness_deliver_once(), 0);
		if (want > 0)
			receiver_wait(rc, want - 1, 500);
	}
	ck_assert_uint_ge(receiver_count(rc), want);
}

/* The hint: its type must be bill.*; nothing else of it is used. */
static void
hint_sync(struct client *c, struct receiver *rc, size_t i)
{
	const struct receiver_req *q = receiver_wait(rc, i, 0);
	const char *type;

	ck_assert_ptr_nonnull(q);
	type = receiver_header(q, "X-Webhook-Event-Type");
	ck_assert_ptr_nonnull(type);
	ck_assert_int_eq(strncmp(type, "bill.", 5), 0);
	client_cycle(c);
}

/*
 * Subscribed to bill.*: the link's 23 hints (12 created, 11 paid), then 40
 * random writes' hints, then a replay of some events: the client syncs on
 * each delivery, taken in reverse and shuffled order with repeats, and
 * ends equal to the server; a hint after no change is an empty cycle.
 */
START_TEST(webhook_driven_client)
{
	struct receiver *rc = receiver_start(NULL);
	struct harness_resp *r;
	struct writer w;
	struct tenant t;
	struct client c;
	size_t first, total, i;
	unsigned seed = 99;
	long cycles;
	char *id, *ev;

	ck_assert_msg(rc != NULL, "receiver: %s", receiver_error());
	tenant_new(&t, "sandbox");
	subscribe(&t, rc);
	id = sandbox_link(&t, "user_good");
	client_init(&c, t.key, id, 4);
	deliver_until(rc, 23);
	first = receiver_count(rc);
	ck_assert_uint_eq(first, 23);
	/* in reverse order, the first twice */
	for (i = first; i-- > 0;)
		hint_sync(&c, rc, i);
	hint_sync(&c, rc, 0);
	client_check(&c, t.client, -1);
	ck_assert_uint_eq(c.bills.n, 12);

	writer_init(&w, id, 5);
	writer_run(&w, 40, 0);
	ev = devacct_sql_value("SELECT id FROM events WHERE client_id = $1 AND type LIKE"
	    " 'bill.%' ORDER BY id LIMIT 1", t.client, NULL);
	deliver_until(rc, first + 1);
	/* a replay of the oldest hint, delivered again (repeated, out of order) */
	r = key_call(t.key, "POST", "/v1/activity/replay",
	    harness_fmt("{\"event_id\":\"%s\"}", ev), NULL);
	harness_expect(r, 202);
	harness_resp_free(r);
	total = (size_t)devacct_sql_int("SELECT count(*) FROM deliveries d JOIN events e"
	    " ON e.id = d.event_id WHERE d.client_id = $1", t.client, NULL);
	deliver_until(rc, total);
	total = receiver_count(rc);
	ck_assert_uint_gt(total, first + 1);
	/* the new hints in a shuffled order, some twice */
	cycles = c.cycles;
	for (i = first; i < total; i++) {
		size_t j = first + (size_t)rand_r(&seed) % (total - first);

		hint_sync(&c, rc, j);
		if (rand_r(&seed) % 4 == 0)
			hint_sync(&c, rc, j);
		/* a cycle in the middle of the hints: the server as of its bound */
		client_check(&c, t.client, cursor_start(t.client, id, c.cursor));
	}
	ck_assert_int_ge(c.cycles - cycles, (long)(total - first));
	client_check(&c, t.client, -1);
	ck_assert_uint_eq(c.bills.n, (size_t)nbills(id));
	free(ev);
	writer_free(&w);
	client_free(&c);
	receiver_stop(rc);
	cfg_teardown();
	free(id);
	tenant_free(&t);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Errors                                                              */

/*
 * Unknown link (well-formed or not), another client's link (DOMAIN.md:
 * as an unknown id) and the client's own link with its development key:
 * 404 LINK_NOT_FOUND; limit 0, 501 and text, page, page_size, an unknown parameter:
 * 400 VALIDATION_ERROR; no key 401.
 */
START_TEST(errors)
{
	struct tenant t, other, devk;
	struct harness_resp *r;
	const char *bad_query[] = { "limit=0", "limit=501", "limit=abc", "limit=-1",
	    "page=1", "page_size=10", "page=2&limit=5", "offset=10", "limit=1&limit=2" };
	char *id;

	tenant_new(&t, "sandbox");
	tenant_new(&other, "sandbox");
	devk.client = t.client;
	devk.key = devacct_key_new(&dev, t.client, "development");
	id = sandbox_link(&t, "user_empty");

	r = sync_get(t.key, "link_01900000-0000-7000-8000-00000000dead", NULL, "");
	harness_assert_coded(r, 404, "LINK_NOT_FOUND");
	harness_resp_free(r);
	r = sync_get(t.key, "nope", NULL, "");
	harness_assert_coded(r, 404, "LINK_NOT_FOUND");
	harness_resp_free(r);
	r = sync_get(other.key, id, NULL, "");
	harness_assert_coded(r, 404, "LINK_NOT_FOUND");
	harness_resp_free(r);
	r = sync_get(devk.key, id, NULL, "");
	harness_assert_coded(r, 404, "LINK_NOT_FOUND");
	harness_resp_free(r);
	for (size_t i = 0; i < N(bad_query); i++) {
		r = sync_get(t.key, id, NULL, bad_query[i]);
		harness_assert_coded(r, 400, "VALIDATION_ERROR");
		harness_resp_free(r);
	}
	r = devacct_call("GET", "sandbox", harness_fmt("/v1/account-links/%s/bills/sync", id),
	    NULL, NULL, NULL);
	harness_assert_coded(r, 401, NULL);
	harness_resp_free(r);
	r = key_call(t.key, "POST", harness_fmt("/v1/account-links/%s/bills/sync", id), "{}",
	    NULL);
	harness_assert_coded(r, 405, NULL);
	harness_resp_free(r);
	/* user_empty: an empty first cycle; limit 1 and 500 are fine */
	r = sync_get(t.key, id, NULL, "limit=1");
	harness_expect(r, 200);
	ck_assert_pstr_eq(devacct_text(r, "data"), harness_fmt("{\"added\":[],\"modified\":[],"
	    "\"removed\":[],\"next_cursor\":\"%s\",\"has_more\":false}",
	    devacct_str(r, "data.next_cursor")));
	harness_resp_free(r);
	free(id);
	free(devk.key);
	tenant_free(&t);
	tenant_free(&other);
}
END_TEST

/* A REVOKED link keeps its history: the sync still answers its bills, and
 * the cursor of before the revocation still opens it. */
START_TEST(revoked_link_syncs)
{
	struct harness_resp *r;
	struct tenant t;
	struct client c;
	char *id;

	id = tenant_link(&t, "user_good");
	client_init(&c, t.key, id, 5);
	r = sync_get(t.key, id, NULL, "limit=5");
	harness_expect(r, 200);
	c.cursor = strdup(devacct_str(r, "data.next_cursor"));	/* mid-cycle */
	harness_resp_free(r);
	r = key_call(t.key, "DELETE", harness_fmt("/v1/links/%s", id), NULL, NULL);
	harness_expect(r, 200);
	ck_assert_pstr_eq(devacct_str(r, "status"), "REVOKED");
	harness_resp_free(r);
	client_cycle(&c);
	ck_assert_int_eq(c.added, 7);
	client_free(&c);
	client_init(&c, t.key, id, 5);
	client_cycle(&c);
	ck_assert_int_eq(c.added, 12);
	client_check(&c, t.client, -1);
	client_free(&c);
	cfg_teardown();
	free(id);
	tenant_free(&t);
}
END_TEST

static Suite *
bills_sync_suite(void)
{
	Suite *s = suite_create("e2e_bills_sync");
	TCase *tc = tcase_create("bills_sync");

	tcase_add_unchecked_fixture(tc, stack_up, harness_fixture_stop);
	tcase_add_checked_fixture(tc, harness_fixture_recover, NULL);
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, first_sync_then_empty_cycle);
	tcase_add_test(tc, many_paged_by_five);
	tcase_add_test(tc, buckets);
	tcase_add_test(tc, concurrent_writer);
	tcase_add_test(tc, cursor_property);
	tcase_add_test(tc, webhook_driven_client);
	tcase_add_test(tc, errors);
	tcase_add_test(tc, revoked_link_syncs);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return harness_run_suite(bills_sync_suite());
}
