/*
 * The bill read API end to end (lib/bills/bills_api.c,
 * lib/links/links_auth.c): real bills from sandbox account links retrieved
 * by the stack's bds-jobs through the sandbox connector, read back through
 * nginx as a client would.
 *
 *   GET /v1/bills                         filters, keyset pages, errors
 *   GET /v1/bills/{id}                    API key or the link access token
 *   GET /v1/bills/{id}/payments           observed payments of a bill
 *   GET /v1/account-links/{id}/payments   observed payments of a link
 *
 * and the money format (bds_money, the stored entity) for JPY, USD, BHD,
 * negatives and zero. The fixture makes the tenants and their links once
 * (user_many's 1,000 bills take a few seconds); tests that change rows
 * change tenant B's or their own.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <json-c/json.h>
#include <libpq-fe.h>

#include "core/json.h"
#include "devacct.h"
#include "harness.h"

#define N(x) (sizeof(x) / sizeof((x)[0]))
#define IDLE_MS 120000

static struct devacct dev;

struct link {
	char	id[64];
	char	token[96];	/* the access token the sandbox API returned */
};

struct tenant {
	char		*client;
	char		*key;		/* sandbox key */
	struct link	 good, multi, many;
};

/* A: user_good, user_multi (3 accounts), user_many; B: user_good only. */
static struct tenant ta, tb;
static char *dev_key;	/* A's client, development key (another environment) */

static struct harness_resp *
get(const char *key, const char *host, const char *path)
{
	return devacct_call("GET", host, path, key != NULL ? devacct_bearer(key) : NULL,
	    NULL, NULL);
}

/* GET on the sandbox host with a sandbox key or token, status want. */
static struct harness_resp *
sget(const char *key, const char *path, long want)
{
	struct harness_resp *r = get(key, "sandbox", path);

	harness_expect(r, want);
	return r;
}

static void
coded(const char *key, const char *host, const char *path, long status, const char *code)
{
	struct harness_resp *r = get(key, host, path);

	harness_assert_coded(r, status, code);
	harness_resp_free(r);
}

static void
sandbox_link(const struct tenant *t, const char *username, struct link *l)
{
	const char *extra[] = { harness_idem_header(), NULL };
	struct harness_resp *r = devacct_call("POST", "sandbox", "/v1/sandbox/account-links",
	    devacct_bearer(t->key),
	    harness_fmt("{\"client_user_id\":\"u-%s\",\"username\":\"%s\"}", username, username),
	    extra);

	harness_expect(r, 201);
	snprintf(l->id, sizeof(l->id), "%s", devacct_str(r, "link_id"));
	snprintf(l->token, sizeof(l->token), "%s", devacct_str(r, "access_token"));
	ck_assert_int_eq(strncmp(l->token, "bds_lat_", 8), 0);
	harness_resp_free(r);
}

static void
tenant_new(struct tenant *t)
{
	t->client = devacct_client_new(&dev);
	t->key = devacct_key_new(&dev, t->client, "sandbox");
}

static void
stack_up(void)
{
	struct harness_opts o;

	harness_opts_defaults(&o);
	/* the sandbox's dates as its header documents them for that day */
	o.extra_config = "sandbox_basis_day = 2026-10-15\n";
	harness_fixture_start(&o);
	devacct_legal();
	devacct_new(&dev, "bills");
	devacct_verify_email(&dev);	/* development keys */
	tenant_new(&ta);
	tenant_new(&tb);
	sandbox_link(&ta, "user_good", &ta.good);
	sandbox_link(&ta, "user_multi", &ta.multi);
	sandbox_link(&ta, "user_many", &ta.many);
	sandbox_link(&tb, "user_good", &tb.good);
	dev_key = devacct_key_new(&dev, ta.client, "development");
	ck_assert_msg(harness_jobs_wait_idle(IDLE_MS) == 0, "%s", harness_error());
}

static void
stack_down(void)
{
	free(ta.client);
	free(ta.key);
	free(tb.client);
	free(tb.key);
	free(dev_key);
	harness_fixture_stop();
}

/* One of the link's bills (the newest statement first: n = 0), malloc'ed. */
static char *
bill_of(const char *link, int n)
{
	return devacct_sql_value("SELECT id FROM bills WHERE link_id = $1 AND deleted_at IS NULL"
	    " ORDER BY statement_date DESC, id OFFSET $2::int LIMIT 1", link,
	    harness_fmt("%d", n));
}

/*
 * 1 when the JSON text s has no whitespace outside its strings: no
 * "a": 1, "a" : 1 or [1, 2] anywhere (one spelling for every body).
 */
static int
compact_text(const char *s)
{
	for (int in = 0; *s != '\0'; s++) {
		if (in && *s == '\\' && s[1] != '\0')
			s++;
		else if (*s == '"')
			in = !in;
		else if (!in && strchr(" \t\r\n", *s) != NULL)
			return 0;
	}
	return 1;
}

/* 1 when the body is the entity id of type object: {"id":"<id>","object":"<object>",... */
static int
entity_starts(const char *body, const char *id, const char *object)
{
	const char *want = harness_fmt("{\"id\":\"%s\",\"object\":\"%s\",", id, object);

	return strncmp(body, want, strlen(want)) == 0;
}

/* Every member of the array at path is an entity whose text in the body
 * starts {"id":"<its id>","object":"<object>",. */
static void
entities_first(const struct harness_resp *r, const char *path, const char *object)
{
	struct json_object *a = devacct_json(r, path);
	size_t n = a != NULL ? json_object_array_length(a) : 0;

	for (size_t i = 0; i < n; i++) {
		const char *id = devacct_str(r, harness_fmt("%s.%zu.id", path, i));

		ck_assert_ptr_nonnull(id);
		ck_assert_msg(strstr(r->body, harness_fmt("{\"id\":\"%s\",\"object\":\"%s\",",
		    id, object)) != NULL, "%s.%zu: %s", path, i, r->body);
	}
}

/* ------------------------------------------------------------------ */
/* Paging                                                              */

struct ids {
	char	**v;
	size_t	 n, cap;
	size_t	 pages;
};

static void
ids_free(struct ids *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->v[i]);
	free(s->v);
	memset(s, 0, sizeof(*s));
}

/*
 * Every page of path (with its query, or none) at limit: each item's id
 * appended in order; has_more true exactly when next_cursor is a string,
 * and every page but the last is full.
 */
static void
page_all(const char *key, const char *path, const char *member, int limit, struct ids *s)
{
	char cursor[2048] = "";
	const char *sep = strchr(path, '?') != NULL ? "&" : "?";

	for (;;) {
		struct harness_resp *r = sget(key, cursor[0] != '\0' ?
		    harness_fmt("%s%slimit=%d&cursor=%s", path, sep, limit, cursor) :
		    harness_fmt("%s%slimit=%d", path, sep, limit), 200);
		struct json_object *items = devacct_json(r, member);
		int more = devacct_bool(r, "has_more");
		size_t n;

		ck_assert_ptr_nonnull(items);
		n = json_object_array_length(items);
		s->pages++;
		for (size_t i = 0; i < n; i++) {
			struct json_object *id;

			ck_assert(json_object_object_get_ex(json_object_array_get_idx(items, i),
			    "id", &id));
			if (s->n == s->cap) {
				s->cap = s->cap ? s->cap * 2 : 64;
				s->v = realloc(s->v, s->cap * sizeof(*s->v));
				ck_assert_ptr_nonnull(s->v);
			}
			s->v[s->n++] = strdup(json_object_get_string(id));
		}
		if (!more) {
			ck_assert_ptr_null(devacct_str(r, "next_cursor"));
			ck_assert_ptr_nonnull(strstr(r->body, "\"next_cursor\":null"));
			harness_resp_free(r);
			return;
		}
		ck_assert_uint_eq(n, (size_t)limit);
		ck_assert_ptr_nonnull(devacct_str(r, "next_cursor"));
		snprintf(cursor, sizeof(cursor), "%s", devacct_str(r, "next_cursor"));
		harness_resp_free(r);
	}
}

/* The ids joined with ",", malloc'ed. */
static char *
ids_join(const struct ids *s)
{
	size_t len = 1;
	char *out;

	for (size_t i = 0; i < s->n; i++)
		len += strlen(s->v[i]) + 1;
	out = calloc(1, len);
	ck_assert_ptr_nonnull(out);
	for (size_t i = 0; i < s->n; i++) {
		if (i > 0)
			strcat(out, ",");
		strcat(out, s->v[i]);
	}
	return out;
}

/* The API's order is the SQL order want (a string_agg of ids): no bill
 * missed, none repeated, none foreign. */
static void
ids_expect(const struct ids *s, const char *sql, const char *p1, const char *p2)
{
	char *got = ids_join(s), *want = devacct_sql_value(sql, p1, p2);

	ck_assert_str_eq(got, want != NULL ? want : "");
	free(got);
	free(want);
}

#define ORDERED_BILLS(where) \
	"SELECT string_agg(id, ',' ORDER BY created_at DESC, id DESC) FROM bills" \
	" WHERE deleted_at IS NULL AND " where

/* user_many: 1,000 bills paged at 500 (2 pages) and 100 (10 pages), newest
 * first, exactly the link's bills; the default page is 100. */
START_TEST(pages_many)
{
	static const int limits[] = { 500, 100 };
	struct harness_resp *r;
	struct ids s = { 0 };

	for (size_t i = 0; i < N(limits); i++) {
		page_all(ta.key, harness_fmt("/v1/bills?account_link_id=%s", ta.many.id), "bills",
		    limits[i], &s);
		ck_assert_uint_eq(s.n, 1000);
		ck_assert_uint_eq(s.pages, 1000 / (size_t)limits[i]);
		ids_expect(&s, ORDERED_BILLS("link_id = $1"), ta.many.id, NULL);
		ids_free(&s);
	}
	r = sget(ta.key, harness_fmt("/v1/bills?account_link_id=%s", ta.many.id), 200);
	ck_assert_uint_eq(json_object_array_length(devacct_json(r, "bills")), 100);
	ck_assert(devacct_bool(r, "has_more"));
	harness_resp_free(r);

	/* the whole tenant (12 + 36 + 1,000), never tenant B's */
	page_all(ta.key, "/v1/bills", "bills", 500, &s);
	ck_assert_uint_eq(s.n, 1048);
	ck_assert_uint_eq(s.pages, 3);
	ids_expect(&s, ORDERED_BILLS("client_id = $1 AND environment = 'sandbox'"), ta.client,
	    NULL);
	ids_free(&s);
	/* an odd limit over a page boundary */
	page_all(ta.key, harness_fmt("/v1/bills?client_user_id=u-user_multi"), "bills", 7, &s);
	ck_assert_uint_eq(s.n, 36);
	ck_assert_uint_eq(s.pages, 6);
	ids_expect(&s, ORDERED_BILLS("link_id = $1"), ta.multi.id, NULL);
	ids_free(&s);
}
END_TEST

/* The number of bills a filtered list shows (one page of 500). */
static size_t
count_of(const char *key, const char *query)
{
	struct harness_resp *r = sget(key, harness_fmt("/v1/bills?limit=500&%s", query), 200);
	size_t n = json_object_array_length(devacct_json(r, "bills"));

	ck_assert(!devacct_bool(r, "has_more"));
	harness_resp_free(r);
	return n;
}

/*
 * Filters: link (either id form), user, status, due dates (inclusive
 * bounds), combined; an unknown or foreign link shows nothing. The
 * user_good dues are the 21st of Nov 2025 … Oct 2026, the newest PENDING.
 */
static const struct {
	int		 link;	/* account_link_id: 0 none, 1 good, 2 good's bare
				 * UUID, 3 multi, 4 tenant B's good */
	const char	*query;	/* the rest */
	size_t		 want;
} filter_cases[] = {
	{ 1, "", 12 }, { 2, "", 12 }, { 3, "", 36 },
	{ 0, "client_user_id=u-user_multi", 36 }, { 0, "client_user_id=u-nobody", 0 },
	{ 3, "&status=PENDING", 3 }, { 1, "&status=PAID", 11 },
	{ 1, "&status=PARTIALLY_PAID", 0 },
	{ 1, "&due_after=2026-10-21", 1 }, { 1, "&due_after=2026-10-22", 0 },
	{ 1, "&due_before=2025-11-21", 1 }, { 1, "&due_before=2025-11-20", 0 },
	{ 1, "&due_after=2026-01-01&due_before=2026-06-21", 6 },
	{ 0, "client_user_id=u-user_good&due_after=2026-01-01&due_before=2026-06-21"
	  "&status=PAID", 6 },
	{ 0, "due_after=2026-06-21&due_before=2026-01-01", 0 },
	/* another client's link, an unknown one, a malformed one: nothing */
	{ 4, "", 0 }, { 0, "account_link_id=link_01900000-0000-7000-8000-000000000000", 0 },
	{ 0, "account_link_id=nope", 0 },
};

START_TEST(filters)
{
	const char *uuid = ta.good.id + strlen("link_");
	struct harness_resp *r;
	struct json_object *b;

	for (size_t i = 0; i < N(filter_cases); i++) {
		const char *link[] = { NULL, ta.good.id, uuid, ta.multi.id, tb.good.id };
		const char *q = filter_cases[i].link == 0 ? filter_cases[i].query :
		    harness_fmt("account_link_id=%s%s", link[filter_cases[i].link],
		    filter_cases[i].query);

		ck_assert_msg(count_of(ta.key, q) == filter_cases[i].want, "%s: want %zu", q,
		    filter_cases[i].want);
	}

	/* the items are the stored entities */
	r = sget(ta.key, harness_fmt("/v1/bills?account_link_id=%s&status=PENDING", ta.good.id),
	    200);
	ck_assert_uint_eq(json_object_array_length(devacct_json(r, "bills")), 1);
	b = json_object_array_get_idx(devacct_json(r, "bills"), 0);
	{
		char *want = devacct_sql_value("SELECT entity::jsonb::text FROM bills WHERE id = $1",
		    devacct_str(r, "bills.0.id"), NULL);
		char *got = devacct_sql_value("SELECT $1::jsonb::text",
		    json_object_to_json_string_ext(b, JSON_C_TO_STRING_PLAIN), NULL);

		ck_assert_str_eq(got, want);
		free(want);
		free(got);
	}
	ck_assert_pstr_eq(devacct_str(r, "bills.0.object"), "bill");
	ck_assert_pstr_eq(devacct_str(r, "bills.0.link_id"), ta.good.id);
	ck_assert_pstr_eq(devacct_str(r, "bills.0.user_id"), "u-user_good");
	ck_assert_pstr_eq(devacct_str(r, "bills.0.due_date_iso"), "2026-10-21");
	ck_assert_str_eq(devacct_text(r, "has_more"), "false");
	ck_assert_ptr_nonnull(strstr(r->body, "\"next_cursor\":null"));
	harness_resp_free(r);
}
END_TEST

/* A first page's next_cursor for path at limit 1 (malloc'ed). */
static char *
cursor_of(const char *key, const char *path)
{
	const char *sep = strchr(path, '?') != NULL ? "&" : "?";
	struct harness_resp *r = sget(key, harness_fmt("%s%slimit=1", path, sep), 200);
	char *c = strdup(devacct_str(r, "next_cursor"));

	harness_resp_free(r);
	return c;
}

/*
 * link_id, the bill's own field name, is account_link_id's other name: the
 * same bills, the same cursor; both names at once are 400. An unknown
 * parameter's 400 names the closest known one in hint.
 */
START_TEST(link_id_synonym)
{
	size_t n = count_of(ta.key, harness_fmt("account_link_id=%s", ta.good.id));
	struct harness_resp *r;
	char *c;

	ck_assert_uint_gt(n, 1);
	ck_assert_uint_eq(count_of(ta.key, harness_fmt("link_id=%s", ta.good.id)), n);
	ck_assert_uint_eq(count_of(ta.key, harness_fmt("link_id=%s", ta.multi.id)),
	    count_of(ta.key, harness_fmt("account_link_id=%s", ta.multi.id)));
	ck_assert_uint_eq(count_of(ta.key, harness_fmt("link_id=%s", tb.good.id)), 0);
	/* a cursor of one name pages the other's list */
	c = cursor_of(ta.key, harness_fmt("/v1/bills?link_id=%s", ta.good.id));
	r = sget(ta.key, harness_fmt("/v1/bills?account_link_id=%s&limit=500&cursor=%s",
	    ta.good.id, c), 200);
	ck_assert_uint_eq(json_object_array_length(devacct_json(r, "bills")), n - 1);
	harness_resp_free(r);
	free(c);
	/* both names: refused, whatever the values */
	r = get(ta.key, "sandbox", harness_fmt("/v1/bills?link_id=%s&account_link_id=%s",
	    ta.good.id, ta.multi.id));
	harness_assert_coded(r, 400, "VALIDATION_ERROR");
	ck_assert_pstr_eq(devacct_str(r, "errors.0.field"), "account_link_id");
	ck_assert_pstr_eq(devacct_str(r, "errors.0.code"), "duplicate_field");
	harness_resp_free(r);
	/* a misspelt parameter: the hint names the one meant */
	r = get(ta.key, "sandbox", "/v1/bills?limt=5");
	harness_assert_coded(r, 400, "VALIDATION_ERROR");
	ck_assert_pstr_eq(devacct_str(r, "errors.0.field"), "limt");
	ck_assert_pstr_eq(devacct_str(r, "errors.0.code"), "unknown_field");
	ck_assert_pstr_eq(devacct_str(r, "hint"), "limt is not a known parameter: did you mean `limit`?");
	harness_resp_free(r);
	r = get(ta.key, "sandbox", harness_fmt("/v1/bills?lnk_id=%s", ta.good.id));
	harness_assert_coded(r, 400, "VALIDATION_ERROR");
	ck_assert_pstr_eq(devacct_str(r, "hint"),
	    "lnk_id is not a known parameter: did you mean `link_id`?");
	harness_resp_free(r);
	/* nothing close: the accepted ones */
	r = get(ta.key, "sandbox", "/v1/bills?zzzzzz=1");
	harness_assert_coded(r, 400, "VALIDATION_ERROR");
	ck_assert_pstr_eq(devacct_str(r, "hint"), "the accepted parameters: account_link_id, "
	    "client_user_id, status, due_after, due_before, limit, cursor");
	harness_resp_free(r);
}
END_TEST


/* Every refusal of the list: the query validator's 400s, the cursor's 400
 * INVALID_CURSOR (malformed, truncated, bit-flipped, other filters, other
 * tenant), and 401 for a missing, wrong-host or link credential. */
START_TEST(list_errors)
{
	static const char *const bad[] = {
		"page=1", "page_size=10", "page=1&page_size=10", "limit=0", "limit=501",
		"limit=-1", "limit=abc", "limit=", "status=OPEN", "status=paid",
		"due_after=2026-13-01", "due_before=2026-02-30", "due_after=20260101",
		"due_before=2026-1-1", "due_after=", "account_link_id=",
		"unknown=1", "limit=1&limit=2",
	};
	char *c = cursor_of(ta.key, harness_fmt("/v1/bills?account_link_id=%s", ta.good.id));
	char *flipped = strdup(c);

	for (size_t i = 0; i < N(bad); i++)
		coded(ta.key, "sandbox", harness_fmt("/v1/bills?%s", bad[i]), 400,
		    "VALIDATION_ERROR");
	coded(ta.key, "sandbox", "/v1/bills?cursor=garbage", 400, "INVALID_CURSOR");
	/* empty, no text, longer than any cursor: still a cursor that does not open */
	coded(ta.key, "sandbox", "/v1/bills?cursor=", 400, "INVALID_CURSOR");
	coded(ta.key, "sandbox", "/v1/bills?cursor=%ff%fe", 400, "INVALID_CURSOR");
	{
		static char path[6000];

		snprintf(path, sizeof(path), "/v1/bills?cursor=%s%05000d", c, 0);
		coded(ta.key, "sandbox", path, 400, "INVALID_CURSOR");
	}
	coded(ta.key, "sandbox", harness_fmt("/v1/bills?account_link_id=%s&cursor=%.*s",
	    ta.good.id, (int)strlen(c) / 2, c), 400, "INVALID_CURSOR");
	flipped[strlen(flipped) / 2] = flipped[strlen(flipped) / 2] == 'A' ? 'B' : 'A';
	coded(ta.key, "sandbox", harness_fmt("/v1/bills?account_link_id=%s&cursor=%s",
	    ta.good.id, flipped), 400, "INVALID_CURSOR");
	/* the cursor is bound to its filters and its tenant */
	coded(ta.key, "sandbox", harness_fmt("/v1/bills?cursor=%s", c), 400, "INVALID_CURSOR");
	coded(ta.key, "sandbox", harness_fmt("/v1/bills?account_link_id=%s&status=PAID&cursor=%s",
	    ta.good.id, c), 400, "INVALID_CURSOR");
	coded(tb.key, "sandbox", harness_fmt("/v1/bills?account_link_id=%s&cursor=%s",
	    ta.good.id, c), 400, "INVALID_CURSOR");
	/* the same cursor with its filters works, with another limit too */
	{
		struct harness_resp *r = sget(ta.key,
		    harness_fmt("/v1/bills?account_link_id=%s&limit=50&cursor=%s", ta.good.id, c),
		    200);

		ck_assert_uint_eq(json_object_array_length(devacct_json(r, "bills")), 11);
		harness_resp_free(r);
	}
	/* credentials */
	coded(NULL, "sandbox", "/v1/bills", 401, "UNAUTHORIZED");
	coded("bds_sandbox_nope", "sandbox", "/v1/bills", 401, "UNAUTHORIZED");
	coded(ta.key, "api", "/v1/bills", 401, "WRONG_ENVIRONMENT");
	coded(ta.good.token, "sandbox", "/v1/bills", 401, NULL);
	free(c);
	free(flipped);
}
END_TEST

/* ------------------------------------------------------------------ */
/* GET /v1/bills/{id}                                                  */

/* GET /v1/bills/{id} answers the stored entity text itself. */
START_TEST(get_by_key)
{
	char *id = bill_of(ta.good.id, 0), *entity, *other = bill_of(tb.good.id, 0);
	struct harness_resp *r = sget(ta.key, harness_fmt("/v1/bills/%s", id), 200);

	entity = devacct_sql_value("SELECT entity FROM bills WHERE id = $1", id, NULL);
	/* the stored text without PostgreSQL's whitespace between tokens */
	entity[json_compact(entity, entity, strlen(entity))] = '\0';
	ck_assert_str_eq(r->body, entity);
	ck_assert(compact_text(r->body));
	ck_assert_msg(entity_starts(r->body, id, "bill"), "%s", r->body);
	ck_assert_pstr_eq(devacct_str(r, "id"), id);
	ck_assert_pstr_eq(devacct_str(r, "object"), "bill");
	ck_assert_pstr_eq(devacct_str(r, "status"), "PENDING");
	ck_assert_pstr_eq(devacct_str(r, "total_amount.currency"), "USD");
	harness_resp_free(r);
	/* HEAD: the same headers, no body */
	r = harness_request("HEAD", "sandbox", harness_fmt("/v1/bills/%s", id),
	    (const char *const[]){ harness_fmt("Authorization: Bearer %s", ta.key), NULL },
	    NULL, 0);
	ck_assert_int_eq(r->status, 200);
	harness_resp_free(r);

	/* another client's bill, an unknown or malformed id: 404 */
	coded(ta.key, "sandbox", harness_fmt("/v1/bills/%s", other), 404, "BILL_NOT_FOUND");
	coded(tb.key, "sandbox", harness_fmt("/v1/bills/%s", id), 404, "BILL_NOT_FOUND");
	coded(ta.key, "sandbox", "/v1/bills/bill_01900000-0000-7000-8000-000000000000", 404,
	    "BILL_NOT_FOUND");
	coded(ta.key, "sandbox", "/v1/bills/nope", 404, "BILL_NOT_FOUND");
	coded(ta.key, "sandbox", harness_fmt("/v1/bills/%s", id + strlen("bill_")), 404,
	    "BILL_NOT_FOUND");
	/* the client's own bill with its development key: another environment */
	coded(dev_key, "api", harness_fmt("/v1/bills/%s", id), 404, "BILL_NOT_FOUND");
	/* credentials */
	coded(NULL, "sandbox", harness_fmt("/v1/bills/%s", id), 401, "UNAUTHORIZED");
	coded(ta.key, "api", harness_fmt("/v1/bills/%s", id), 401, "WRONG_ENVIRONMENT");
	coded(dev_key, "sandbox", harness_fmt("/v1/bills/%s", id), 401, "WRONG_ENVIRONMENT");
	/* no query accepted */
	coded(ta.key, "sandbox", harness_fmt("/v1/bills/%s?expand=1", id), 400,
	    "VALIDATION_ERROR");
	free(entity);
	free(id);
	free(other);
}
END_TEST

/*
 * One JSON spelling in every body, whoever wrote it (json-c, or PostgreSQL
 * through the stored entities): no whitespace between tokens, and every
 * entity's text starts with its id and object. A list of several bills, a
 * bill, a link and the links list, a biller, a bill's payments, the
 * activity list and one event.
 */
static char *payment_add(const char *client, const char *link, const char *bill,
    const char *paid_at, long long minor, const char *currency);

START_TEST(one_spelling)
{
	char *bill = bill_of(ta.multi.id, 0), *biller, *pay;
	struct harness_resp *r;
	char *ev;

	biller = devacct_sql_value("SELECT biller_id FROM bills WHERE id = $1", bill, NULL);
	pay = payment_add(ta.client, ta.multi.id, bill, "2026-09-15T18:00:00.5Z", 1234, "USD");
	r = sget(ta.key, harness_fmt("/v1/bills?account_link_id=%s", ta.multi.id), 200);
	ck_assert_uint_ge(json_object_array_length(devacct_json(r, "bills")), 3);
	ck_assert_msg(compact_text(r->body), "%s", r->body);
	entities_first(r, "bills", "bill");
	harness_resp_free(r);

	r = sget(ta.key, harness_fmt("/v1/bills/%s", bill), 200);
	ck_assert_msg(compact_text(r->body), "%s", r->body);
	ck_assert_ptr_nonnull(strstr(r->body, "\"line_items\":["));
	harness_resp_free(r);

	r = sget(ta.key, harness_fmt("/v1/bills/%s/payments", bill), 200);
	ck_assert_msg(compact_text(r->body), "%s", r->body);
	entities_first(r, "payments", "payment");
	ck_assert_ptr_nonnull(strstr(r->body, harness_fmt("{\"id\":\"%s\",\"object\":\"payment\","
	    "\"user_id\":\"u-user_multi\",", pay)));
	ck_assert_ptr_nonnull(strstr(r->body, "\"paid_at\":\"2026-09-15T18:00:00.500Z\""));
	harness_resp_free(r);

	r = sget(ta.key, harness_fmt("/v1/links/%s", ta.multi.id), 200);
	ck_assert_msg(compact_text(r->body), "%s", r->body);
	ck_assert_msg(entity_starts(r->body, ta.multi.id, "link"), "%s", r->body);
	ck_assert_ptr_nonnull(strstr(r->body, "\"accounts\":[{\"id\":"));
	harness_resp_free(r);

	r = sget(ta.key, "/v1/links?limit=2", 200);
	ck_assert_msg(compact_text(r->body), "%s", r->body);
	ck_assert_uint_eq(json_object_array_length(devacct_json(r, "links")), 2);
	entities_first(r, "links", "link");
	harness_resp_free(r);

	r = sget(ta.key, harness_fmt("/v1/billers/%s", biller), 200);
	ck_assert_msg(compact_text(r->body), "%s", r->body);
	ck_assert_msg(entity_starts(r->body, biller, "biller"), "%s", r->body);
	harness_resp_free(r);

	r = sget(ta.key, "/v1/activity?limit=3", 200);
	ck_assert_msg(compact_text(r->body), "%s", r->body);
	ck_assert_uint_ge(json_object_array_length(devacct_json(r, "data")), 1);
	entities_first(r, "data", "event");
	ev = strdup(devacct_str(r, "data.0.id"));
	harness_resp_free(r);
	r = sget(ta.key, harness_fmt("/v1/activity/%s", ev), 200);
	ck_assert_msg(compact_text(r->body), "%s", r->body);
	ck_assert_msg(entity_starts(r->body, ev, "event"), "%s", r->body);
	ck_assert_ptr_nonnull(strstr(r->body, harness_fmt("\"data\":{\"object\":{\"id\":\"%s\","
	    "\"object\":\"", devacct_str(r, "data.object.id"))));
	harness_resp_free(r);
	/* a bill reported PAID: its bill.updated "paid" writes paid_at as the
	 * entity does (the connector's "...T12:00:00Z" to the millisecond) */
	ck_assert_int_gt(devacct_sql_int("SELECT count(*) FROM events WHERE client_id = $1"
	    " AND type = 'bill.updated' AND data->'object'->>'change' = 'paid'"
	    " AND data->'object'->>'paid_at' LIKE '____-__-__T__:__:__.___Z'", ta.client, NULL), 0);
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM events e JOIN bills b"
	    " ON b.client_id = e.client_id AND b.id = e.data->'object'->>'id'"
	    " WHERE e.client_id = $1 AND e.type = 'bill.updated'"
	    " AND e.data->'object'->>'change' = 'paid'"
	    " AND e.data->'object'->>'paid_at' IS DISTINCT FROM b.entity::json->>'paid_at'",
	    ta.client, NULL), 0);
	free(ev);
	free(pay);
	free(biller);
	free(bill);
}
END_TEST

/*
 * The link access token: its own link's bills only (another link of the
 * same client, another client's bill → 404); a minted 1 h token works
 * until it expires (401 ACCESS_TOKEN_EXPIRED); malformed, unknown (its row
 * gone) and a REVOKED link's tokens → 401 INVALID_ACCESS_TOKEN; a sandbox
 * link's token on the live host → 401 WRONG_ENVIRONMENT.
 */
START_TEST(get_by_link_token)
{
	char *own = bill_of(ta.good.id, 3), *sibling = bill_of(ta.multi.id, 0);
	char *foreign = bill_of(tb.good.id, 0), *entity, *minted, *bare;
	struct harness_resp *r;

	r = sget(ta.good.token, harness_fmt("/v1/bills/%s", own), 200);
	entity = devacct_sql_value("SELECT entity FROM bills WHERE id = $1", own, NULL);
	entity[json_compact(entity, entity, strlen(entity))] = '\0';
	ck_assert_str_eq(r->body, entity);
	harness_resp_free(r);
	coded(ta.good.token, "sandbox", harness_fmt("/v1/bills/%s", sibling), 404,
	    "BILL_NOT_FOUND");
	coded(ta.good.token, "sandbox", harness_fmt("/v1/bills/%s", foreign), 404,
	    "BILL_NOT_FOUND");
	coded(tb.good.token, "sandbox", harness_fmt("/v1/bills/%s", own), 404, "BILL_NOT_FOUND");
	coded(ta.good.token, "api", harness_fmt("/v1/bills/%s", own), 401, "WRONG_ENVIRONMENT");
	/* the token reads bills only: the key routes refuse it */
	coded(ta.good.token, "sandbox", harness_fmt("/v1/bills/%s/payments", own), 401, NULL);
	coded(ta.good.token, "sandbox", harness_fmt("/v1/links/%s", ta.good.id), 401, NULL);

	/* a minted token (POST /v1/links/{id}/access-token, 1 h) */
	r = devacct_call("POST", "sandbox", harness_fmt("/v1/links/%s/access-token", ta.multi.id),
	    devacct_bearer(ta.key), NULL, NULL);
	harness_expect(r, 201);
	minted = strdup(devacct_str(r, "access_token"));
	harness_resp_free(r);
	harness_resp_free(sget(minted, harness_fmt("/v1/bills/%s", sibling), 200));
	coded(minted, "sandbox", harness_fmt("/v1/bills/%s", own), 404, "BILL_NOT_FOUND");
	devacct_sql_exec("UPDATE link_access_tokens SET expires_at = now() - interval '1 second'"
	    " WHERE token_sha256 = sha256(convert_to($1, 'UTF8'))", minted, NULL);
	coded(minted, "sandbox", harness_fmt("/v1/bills/%s", sibling), 401,
	    "ACCESS_TOKEN_EXPIRED");
	/* its row gone: unknown */
	devacct_sql_exec("DELETE FROM link_access_tokens WHERE token_sha256 ="
	    " sha256(convert_to($1, 'UTF8'))", minted, NULL);
	coded(minted, "sandbox", harness_fmt("/v1/bills/%s", sibling), 401,
	    "INVALID_ACCESS_TOKEN");
	/* malformed: short, bad checksum */
	coded("bds_lat_nope", "sandbox", harness_fmt("/v1/bills/%s", own), 401,
	    "INVALID_ACCESS_TOKEN");
	bare = strdup(ta.good.token);
	bare[strlen(bare) - 1] = bare[strlen(bare) - 1] == 'a' ? 'b' : 'a';
	coded(bare, "sandbox", harness_fmt("/v1/bills/%s", own), 401, "INVALID_ACCESS_TOKEN");
	free(minted);
	free(bare);
	free(entity);
	free(own);
	free(sibling);
	free(foreign);
}
END_TEST

/* A REVOKED link's token: refused even if its row were kept; DELETE
 * /v1/links/{id} drops the rows too. Its own tenant: nothing else moves. */
/* A link access token syncs and fetches statements of its own link only. */
START_TEST(link_token_scope)
{
	char *own = bill_of(ta.good.id, 0), *sibling = bill_of(ta.multi.id, 0);
	struct harness_resp *r;

	r = get(ta.good.token, "sandbox",
	    harness_fmt("/v1/account-links/%s/bills/sync", ta.good.id));
	harness_expect(r, 200);
	ck_assert_int_eq(json_object_array_length(devacct_json(r, "data.added")), 12);
	harness_resp_free(r);
	coded(ta.good.token, "sandbox", harness_fmt("/v1/account-links/%s/bills/sync",
	    ta.multi.id), 404, "LINK_NOT_FOUND");
	coded(ta.good.token, "sandbox", harness_fmt("/v1/account-links/%s/bills/sync",
	    tb.good.id), 404, "LINK_NOT_FOUND");

	r = get(ta.good.token, "sandbox", harness_fmt("/v1/bills/%s/statement", own));
	harness_expect(r, 200);
	ck_assert_ptr_nonnull(devacct_str(r, "url"));
	harness_resp_free(r);
	coded(ta.good.token, "sandbox", harness_fmt("/v1/bills/%s/statement", sibling), 404,
	    "BILL_NOT_FOUND");
	free(own);
	free(sibling);
}
END_TEST

START_TEST(revoked_link_token)
{
	struct tenant t;
	struct link l;
	char *id;

	tenant_new(&t);
	sandbox_link(&t, "user_good", &l);
	ck_assert_msg(harness_jobs_wait_idle(IDLE_MS) == 0, "%s", harness_error());
	id = bill_of(l.id, 0);
	harness_resp_free(sget(l.token, harness_fmt("/v1/bills/%s", id), 200));
	devacct_sql_exec("UPDATE links SET status = 'REVOKED' WHERE id = $1", l.id, NULL);
	coded(l.token, "sandbox", harness_fmt("/v1/bills/%s", id), 401, "INVALID_ACCESS_TOKEN");
	devacct_sql_exec("UPDATE links SET status = 'ACTIVE' WHERE id = $1", l.id, NULL);
	harness_resp_free(sget(l.token, harness_fmt("/v1/bills/%s", id), 200));
	harness_resp_free(devacct_call("DELETE", "sandbox", harness_fmt("/v1/links/%s", l.id),
	    devacct_bearer(t.key), NULL, NULL));
	coded(l.token, "sandbox", harness_fmt("/v1/bills/%s", id), 401, "INVALID_ACCESS_TOKEN");
	/* the key still reads the revoked link's bills */
	harness_resp_free(sget(t.key, harness_fmt("/v1/bills/%s", id), 200));
	free(id);
	free(t.client);
	free(t.key);
}
END_TEST

/* A deleted bill (tombstone) is gone from GET, the list, the token's view
 * and its payments; tenant B's link. */
START_TEST(deleted_bill)
{
	char *id = bill_of(tb.good.id, 5);

	harness_resp_free(sget(tb.key, harness_fmt("/v1/bills/%s", id), 200));
	devacct_sql_exec("UPDATE bills SET deleted_at = now(), deleted_seq = changed_seq"
	    " WHERE id = $1", id, NULL);
	coded(tb.key, "sandbox", harness_fmt("/v1/bills/%s", id), 404, "BILL_NOT_FOUND");
	coded(tb.good.token, "sandbox", harness_fmt("/v1/bills/%s", id), 404, "BILL_NOT_FOUND");
	coded(tb.key, "sandbox", harness_fmt("/v1/bills/%s/payments", id), 404,
	    "BILL_NOT_FOUND");
	ck_assert_uint_eq(count_of(tb.key, harness_fmt("account_link_id=%s", tb.good.id)), 11);
	{
		struct ids s = { 0 };

		page_all(tb.key, "/v1/bills", "bills", 5, &s);
		ck_assert_uint_eq(s.n, 11);
		for (size_t i = 0; i < s.n; i++)
			ck_assert_str_ne(s.v[i], id);
		ids_free(&s);
	}
	free(id);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Payments                                                            */

/*
 * An observed payment row. The test inserts them straight into
 * observed_payments to exercise the read routes, beside those the bill
 * status lifecycle (bills_status.c) records from the retrieval; the
 * expectations below come from the table, so payments the retrieval stores
 * are counted too.
 */
static char *
payment_add(const char *client, const char *link, const char *bill, const char *paid_at,
    long long minor, const char *currency)
{
	PGconn *pg = devacct_pg();
	char minor_s[32];
	const char *p[6] = { client, link, bill, paid_at, minor_s, currency };
	PGresult *res;
	char *id;

	snprintf(minor_s, sizeof(minor_s), "%lld", minor);
	res = PQexecParams(pg,
	    "INSERT INTO observed_payments (client_id, id, environment, link_id, payment_ref,"
	    " currency, amount_minor, paid_at, bill_id, client_user_id, biller_id)"
	    " SELECT $1, 'obp_' || gen_random_uuid(), l.environment, l.id,"
	    "  'ref-' || gen_random_uuid(), $6, $5::bigint, $4::timestamptz, $3,"
	    "  l.client_user_id, l.biller_id FROM links l WHERE l.client_id = $1 AND l.id = $2"
	    " RETURNING id", 6, NULL, p, NULL, NULL, 0);
	ck_assert_msg(PQresultStatus(res) == PGRES_TUPLES_OK && PQntuples(res) == 1, "%s",
	    PQerrorMessage(pg));
	id = strdup(PQgetvalue(res, 0, 0));
	PQclear(res);
	return id;
}

#define ORDERED_PAYMENTS(where) \
	"SELECT string_agg(id, ',' ORDER BY paid_at DESC, id DESC) FROM observed_payments" \
	" WHERE " where

/* GET /v1/bills/{id}/payments and /v1/account-links/{id}/payments: newest
 * paid_at first, paged, the payment entity; the 404s, the 400s. */
START_TEST(payments)
{
	char *bill = bill_of(ta.good.id, 1), *other = bill_of(ta.good.id, 2);
	char *none = bill_of(ta.good.id, 0), *p[6], *c;
	struct harness_resp *r;
	struct ids s = { 0 };

	/* after the sandbox payment of the same bill (the 15th, 12:00) */
	p[0] = payment_add(ta.client, ta.good.id, bill, "2026-09-15T18:00:00Z", 5000, "USD");
	p[1] = payment_add(ta.client, ta.good.id, bill, "2026-09-16T12:00:00.123456Z", 2500,
	    "USD");
	/* two at the same instant: the id breaks the tie */
	p[2] = payment_add(ta.client, ta.good.id, bill, "2026-09-14T12:00:00Z", 100, "USD");
	p[3] = payment_add(ta.client, ta.good.id, bill, "2026-09-14T12:00:00Z", 200, "USD");
	p[4] = payment_add(ta.client, ta.good.id, other, "2026-08-15T12:00:00Z", 7000, "USD");
	p[5] = payment_add(ta.client, ta.good.id, NULL, "2026-07-01T00:00:00Z", 999, "USD");
	free(payment_add(tb.client, tb.good.id, NULL, "2026-07-01T00:00:00Z", 1, "USD"));

	/* the bill's: newest first, one page and pages of 1 */
	r = sget(ta.key, harness_fmt("/v1/bills/%s/payments", bill), 200);
	ck_assert_pstr_eq(devacct_str(r, "payments.0.id"), p[1]);
	ck_assert_pstr_eq(devacct_str(r, "payments.0.object"), "payment");
	ck_assert_pstr_eq(devacct_str(r, "payments.0.bill_id"), bill);
	ck_assert_pstr_eq(devacct_str(r, "payments.0.link_id"), ta.good.id);
	ck_assert_pstr_eq(devacct_str(r, "payments.0.user_id"), "u-user_good");
	ck_assert_pstr_eq(devacct_str(r, "payments.0.amount.value"), "25.00");
	ck_assert_pstr_eq(devacct_str(r, "payments.0.amount.currency"), "USD");
	ck_assert_pstr_eq(devacct_str(r, "payments.0.paid_at"), "2026-09-16T12:00:00.123Z");
	ck_assert_pstr_eq(devacct_str(r, "payments.0.status"), "posted");
	ck_assert_pstr_eq(devacct_str(r, "payments.1.id"), p[0]);
	ck_assert(!devacct_bool(r, "has_more"));
	harness_resp_free(r);
	page_all(ta.key, harness_fmt("/v1/bills/%s/payments", bill), "payments", 1, &s);
	ids_expect(&s, ORDERED_PAYMENTS("bill_id = $1"), bill, NULL);
	ck_assert_uint_ge(s.n, 4);
	ids_free(&s);
	/* a bill without payments */
	if (devacct_sql_int("SELECT count(*) FROM observed_payments WHERE bill_id = $1", none,
	    NULL) == 0) {
		r = sget(ta.key, harness_fmt("/v1/bills/%s/payments", none), 200);
		ck_assert_str_eq(devacct_text(r, "payments"), "[]");
		ck_assert_ptr_nonnull(strstr(r->body, "\"next_cursor\":null"));
		harness_resp_free(r);
	}

	/* the link's: every payment of the link (matched or not), paged */
	page_all(ta.key, harness_fmt("/v1/account-links/%s/payments", ta.good.id), "payments", 2,
	    &s);
	ids_expect(&s, ORDERED_PAYMENTS("link_id = $1"), ta.good.id, NULL);
	ck_assert_uint_ge(s.n, 6);
	ids_free(&s);
	page_all(ta.key, harness_fmt("/v1/account-links/%s/payments",
	    ta.good.id + strlen("link_")), "payments", 500, &s);
	ids_expect(&s, ORDERED_PAYMENTS("link_id = $1"), ta.good.id, NULL);
	ck_assert_uint_eq(s.pages, 1);
	ids_free(&s);

	/* 404 (another client's link too) / 401 */
	coded(ta.key, "sandbox", "/v1/bills/bill_01900000-0000-7000-8000-000000000000/payments",
	    404, "BILL_NOT_FOUND");
	coded(ta.key, "sandbox", "/v1/bills/nope/payments", 404, "BILL_NOT_FOUND");
	coded(tb.key, "sandbox", harness_fmt("/v1/bills/%s/payments", bill), 404,
	    "BILL_NOT_FOUND");
	coded(dev_key, "api", harness_fmt("/v1/bills/%s/payments", bill), 404, "BILL_NOT_FOUND");
	coded(ta.key, "sandbox",
	    "/v1/account-links/link_01900000-0000-7000-8000-000000000000/payments", 404,
	    "LINK_NOT_FOUND");
	coded(ta.key, "sandbox", "/v1/account-links/nope/payments", 404, "LINK_NOT_FOUND");
	coded(ta.key, "sandbox", harness_fmt("/v1/account-links/%s/payments", tb.good.id), 404,
	    "LINK_NOT_FOUND");
	coded(dev_key, "api", harness_fmt("/v1/account-links/%s/payments", ta.good.id), 404,
	    "LINK_NOT_FOUND");
	coded(NULL, "sandbox", harness_fmt("/v1/account-links/%s/payments", ta.good.id), 401,
	    "UNAUTHORIZED");
	coded(ta.key, "api", harness_fmt("/v1/account-links/%s/payments", ta.good.id), 401,
	    "WRONG_ENVIRONMENT");

	/* 400s: paging parameters, limits, cursors of another list */
	coded(ta.key, "sandbox", harness_fmt("/v1/bills/%s/payments?page=1", bill), 400,
	    "VALIDATION_ERROR");
	coded(ta.key, "sandbox", harness_fmt("/v1/account-links/%s/payments?page_size=2",
	    ta.good.id), 400, "VALIDATION_ERROR");
	coded(ta.key, "sandbox", harness_fmt("/v1/bills/%s/payments?limit=0", bill), 400,
	    "VALIDATION_ERROR");
	coded(ta.key, "sandbox", harness_fmt("/v1/account-links/%s/payments?limit=501",
	    ta.good.id), 400, "VALIDATION_ERROR");
	coded(ta.key, "sandbox", harness_fmt("/v1/bills/%s/payments?status=posted", bill), 400,
	    "VALIDATION_ERROR");
	coded(ta.key, "sandbox", harness_fmt("/v1/bills/%s/payments?cursor=xyz", bill), 400,
	    "INVALID_CURSOR");
	c = cursor_of(ta.key, harness_fmt("/v1/bills/%s/payments", bill));
	coded(ta.key, "sandbox", harness_fmt("/v1/bills/%s/payments?cursor=%s", other, c), 400,
	    "INVALID_CURSOR");
	coded(ta.key, "sandbox", harness_fmt("/v1/account-links/%s/payments?cursor=%s",
	    ta.good.id, c), 400, "INVALID_CURSOR");
	coded(ta.key, "sandbox", harness_fmt("/v1/bills?cursor=%s", c), 400, "INVALID_CURSOR");
	free(c);
	for (size_t i = 0; i < N(p); i++)
		free(p[i]);
	free(bill);
	free(other);
	free(none);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Money                                                               */

/* bds_money(minor, code) → {value, currency} at the ISO 4217 exponent. */
static const struct {
	long long	 minor;
	const char	*code, *value;
} money[] = {
	{ 12345, "JPY", "12345" },	{ 12345, "USD", "123.45" },	{ 12345, "BHD", "12.345" },
	{ -12345, "JPY", "-12345" },	{ -12345, "USD", "-123.45" },	{ -12345, "BHD", "-12.345" },
	{ 0, "JPY", "0" },		{ 0, "USD", "0.00" },		{ 0, "BHD", "0.000" },
	{ 5, "USD", "0.05" },		{ -5, "BHD", "-0.005" },	{ 100, "EUR", "1.00" },
	{ 1, "CLF", "0.0001" },		{ 7, "KWD", "0.007" },		{ 1234567, "UYW", "123.4567" },
	{ -1, "UYW", "-0.0001" },		{ 9223372036854775807LL,
	  "JPY", "9223372036854775807" },
};

START_TEST(money_sql)
{
	char *v = devacct_sql_value("SELECT bds_money($1::bigint, $2)::text",
	    harness_fmt("%lld", money[_i].minor), money[_i].code);

	ck_assert_str_eq(v, harness_fmt("{\"value\": \"%s\", \"currency\": \"%s\"}",
	    money[_i].value, money[_i].code));
	free(v);
	v = devacct_sql_value("SELECT bds_money(NULL, 'USD')::text", NULL, NULL);
	ck_assert_ptr_null(v);
}
END_TEST

/*
 * A bill whose currency is set to JPY / BHD / USD (and negative, zero) via
 * SQL: GET /v1/bills/{id} shows total_amount and amount_due at the
 * currency's exponent, the deprecated amount (number, major units),
 * currency and due_date equal to their successors. Tenant B's bill.
 */
static const struct {
	long long	 minor;
	const char	*code, *value, *amount;
} bill_money[] = {
	{ 12345, "JPY", "12345", "12345" },
	{ 12345, "BHD", "12.345", "12.345" },
	{ 12345, "USD", "123.45", "123.45" },
	{ -12345, "USD", "-123.45", "-123.45" },
	{ 0, "USD", "0.00", "0.00" },
	{ 0, "JPY", "0", "0" },
	/* four digits: read at four (the portal), shown at four */
	{ 1234567, "UYW", "123.4567", "123.4567" },
};

START_TEST(money_bill)
{
	char *id = bill_of(tb.good.id, 0);
	struct harness_resp *r;
	struct json_object *amount;

	{
		PGconn *pg = devacct_pg();
		char minor[32];
		const char *p[3] = { id, bill_money[_i].code, minor };
		PGresult *res;

		snprintf(minor, sizeof(minor), "%lld", bill_money[_i].minor);
		res = PQexecParams(pg, "UPDATE bills SET currency = $2, total_minor = $3::bigint,"
		    " amount_due_minor = $3::bigint WHERE id = $1", 3, NULL, p, NULL, NULL, 0);
		ck_assert_msg(PQresultStatus(res) == PGRES_COMMAND_OK, "%s", PQerrorMessage(pg));
		PQclear(res);
	}
	r = sget(tb.key, harness_fmt("/v1/bills/%s", id), 200);
	ck_assert_pstr_eq(devacct_str(r, "total_amount.value"), bill_money[_i].value);
	ck_assert_pstr_eq(devacct_str(r, "total_amount.currency"), bill_money[_i].code);
	ck_assert_pstr_eq(devacct_str(r, "amount_due.value"), bill_money[_i].value);
	ck_assert_pstr_eq(devacct_str(r, "amount_due.currency"), bill_money[_i].code);
	/* deprecated: a number in major units, as the stored text has it */
	amount = devacct_json(r, "amount");
	ck_assert(json_object_is_type(amount, json_type_double) ||
	    json_object_is_type(amount, json_type_int));
	ck_assert_ptr_nonnull(strstr(r->body, harness_fmt("\"amount\":%s,",
	    bill_money[_i].amount)));
	ck_assert_double_eq_tol(json_object_get_double(amount), strtod(bill_money[_i].amount,
	    NULL), 1e-9);
	ck_assert_pstr_eq(devacct_str(r, "currency"), devacct_str(r, "total_amount.currency"));
	ck_assert_ptr_nonnull(devacct_str(r, "due_date_iso"));
	ck_assert_pstr_eq(devacct_str(r, "due_date"), devacct_str(r, "due_date_iso"));
	harness_resp_free(r);
	free(id);
}
END_TEST

static Suite *
bills_suite(void)
{
	Suite *s = suite_create("e2e_bills");
	TCase *tc = tcase_create("bills");

	tcase_add_unchecked_fixture(tc, stack_up, stack_down);
	tcase_add_checked_fixture(tc, harness_fixture_recover, NULL);
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, pages_many);
	tcase_add_test(tc, filters);
	tcase_add_test(tc, list_errors);
	tcase_add_test(tc, link_id_synonym);
	tcase_add_test(tc, get_by_key);
	tcase_add_test(tc, one_spelling);
	tcase_add_test(tc, get_by_link_token);
	tcase_add_test(tc, link_token_scope);
	tcase_add_test(tc, revoked_link_token);
	tcase_add_test(tc, payments);
	tcase_add_test(tc, deleted_bill);
	tcase_add_loop_test(tc, money_sql, 0, N(money));
	tcase_add_loop_test(tc, money_bill, 0, N(bill_money));
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return harness_run_suite(bills_suite());
}
