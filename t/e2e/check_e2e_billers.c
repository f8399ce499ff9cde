/*
 * The biller catalog end to end, as a client's servers and an operator
 * see it: the stack loads data/billers.csv at start (bdsctl billers
 * import); a client lists it (default page, limit bounds, every filter,
 * both sorts, a cursor walk that visits each biller once, total_count,
 * ranked search that ignores case and accents and matches domains),
 * resolves an e-mail sender to billers by domain, and reads one biller
 * with an API key or a developer JWT (401 NEEDS_RESIGNIN without a valid
 * credential). The operator re-imports (unchanged), imports a bad file
 * (named line, nothing loaded) and marks a biller UNSUPPORTED, which
 * reaches the webhook of a client with a link on it and no other.
 *
 * The answer cache: each worker answers again from its cache what it
 * answered before; a change of the catalog (bdsctl, SQL) or a new
 * database connection shows in the very next answer of every worker, and
 * a cached answer is byte for byte the one the database gave.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <check.h>
#include <json-c/json.h>

#include "billers/billers.h"
#include "core/arena.h"
#include "core/config.h"
#include "core/crypto.h"
#include "core/db.h"
#include "core/req.h"
#include "devacct.h"
#include "harness.h"
#include "receiver.h"

#define N(x) (sizeof(x) / sizeof((x)[0]))
#define WAIT_MS		5000
#define SANDBOX_BILLER	"blr_01900000-0000-7000-8000-000000000001"
#define PGE		"blr_01900001-0000-7000-8000-000000000001"	/* Pacific Gas and Electric */
#define EDF		"blr_01900001-0000-7000-8000-000000000002"	/* Électricité de France */
#define DUSSELDORF	"blr_01900001-0000-7000-8000-000000000004"	/* Wasserwerke Düsseldorf */

static struct devacct dev;
/* Static copies: every test is a forked child, and leak checks see what
 * the fixture left on the heap. */
static char client_a[96], key_a[128], client_b[96];

static void
keep(char *dst, size_t len, char *s)
{
	snprintf(dst, len, "%s", s);
	free(s);
}

static void
stack_up(void)
{
	harness_fixture_start_default();
	devacct_legal();
	devacct_new(&dev, "blr");
	keep(client_a, sizeof(client_a), devacct_client_new(&dev));
	keep(key_a, sizeof(key_a), devacct_key_new(&dev, client_a, "sandbox"));
	keep(client_b, sizeof(client_b), devacct_client_new(&dev));
}

/* ------------------------------------------------------------------ */
/* Helpers                                                             */

static struct harness_resp *
get(const char *key, const char *path)
{
	return devacct_call("GET", "sandbox", path, devacct_bearer(key), NULL, NULL);
}

static struct harness_resp *
get_ok(const char *path)
{
	struct harness_resp *r = get(key_a, path);

	harness_expect(r, 200);
	return r;
}

/* Percent-encode s for a query string (static buffer). */
static const char *
qenc(const char *s)
{
	static char buf[512];
	char *o = buf;

	for (const unsigned char *p = (const unsigned char *)s; *p != '\0'; p++) {
		if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		    (*p >= '0' && *p <= '9') || *p == '-' || *p == '.' || *p == '_')
			*o++ = (char)*p;
		else
			o += sprintf(o, "%%%02X", *p);
	}
	*o = '\0';
	return buf;
}

static size_t
nbillers(const struct harness_resp *r)
{
	struct json_object *a = devacct_json(r, "billers");

	ck_assert_ptr_nonnull(a);
	ck_assert(json_object_is_type(a, json_type_array));
	return json_object_array_length(a);
}

static const char *
nth_id(const struct harness_resp *r, size_t i)
{
	return devacct_str(r, harness_fmt("billers.%zu.id", i));
}

static long long
sql_count(const char *q, const char *p1)
{
	return devacct_sql_int(q, p1, NULL);
}

/* Whether r's billers hold id. */
static int
holds(const struct harness_resp *r, const char *id)
{
	for (size_t i = 0; i < nbillers(r); i++)
		if (strcmp(nth_id(r, i), id) == 0)
			return 1;
	return 0;
}

/* ------------------------------------------------------------------ */
/* List                                                                */

START_TEST(list_default_page)
{
	long long total = sql_count("SELECT count(*) FROM billers", NULL);
	struct harness_resp *r = get_ok("/v1/billers");
	struct json_object *caps;

	ck_assert_int_ge(total, 300);
	ck_assert_uint_eq(nbillers(r), 100);
	ck_assert_int_eq(devacct_bool(r, "has_more"), 1);
	ck_assert_ptr_nonnull(devacct_str(r, "next_cursor"));
	ck_assert_int_eq(devacct_int(r, "total_count"), total);
	/* the entity: DOMAIN.md's fields, nothing internal */
	ck_assert_pstr_eq(devacct_str(r, "billers.0.object"), "biller");
	ck_assert_ptr_nonnull(devacct_str(r, "billers.0.name"));
	ck_assert_ptr_nonnull(devacct_str(r, "billers.0.created_at"));
	ck_assert_ptr_nonnull(devacct_json(r, "billers.0.domains"));
	ck_assert_ptr_nonnull(devacct_json(r, "billers.0.connectivity_types"));
	ck_assert_ptr_nonnull(devacct_json(r, "billers.0.consent_scopes"));
	caps = devacct_json(r, "billers.0.capabilities");
	ck_assert_ptr_nonnull(caps);
	ck_assert_int_eq(json_object_object_length(caps), 6);
	ck_assert(json_object_is_type(json_object_object_get(caps, "pay"), json_type_boolean));
	ck_assert_ptr_null(devacct_json(r, "billers.0.connector"));
	ck_assert_ptr_null(devacct_json(r, "billers.0.base_url"));
	ck_assert_ptr_null(devacct_json(r, "billers.0.search_text"));
	harness_resp_free(r);
}
END_TEST

START_TEST(list_limit_edges)
{
	long long total = sql_count("SELECT count(*) FROM billers", NULL);
	struct harness_resp *r = get_ok("/v1/billers?limit=1");

	ck_assert_uint_eq(nbillers(r), 1);
	ck_assert_int_eq(devacct_bool(r, "has_more"), 1);
	harness_resp_free(r);
	r = get_ok("/v1/billers?limit=500");
	ck_assert_uint_eq(nbillers(r), (size_t)(total < 500 ? total : 500));
	ck_assert_int_eq(devacct_bool(r, "has_more"), total > 500);
	ck_assert_ptr_null(devacct_str(r, "next_cursor"));
	harness_resp_free(r);
}
END_TEST

static const struct { const char *query, *field; } bad_queries[] = {
	{ "limit=0", "limit" },
	{ "limit=501", "limit" },
	{ "limit=ten", "limit" },
	{ "page=2", "page" },
	{ "page_size=10", "page_size" },
	{ "sort_by=popularity", "sort_by" },
	{ "sort_order=up", "sort_order" },
	{ "status=active", "status" },
	{ "type=power", "type" },
	{ "consent_scope=everything", "consent_scope" },
};

START_TEST(list_bad_query)
{
	struct harness_resp *r = get(key_a, harness_fmt("/v1/billers?%s",
	    bad_queries[_i].query));

	harness_assert_coded(r, 400, "VALIDATION_ERROR");
	devacct_assert_error(r, bad_queries[_i].field, NULL);
	harness_resp_free(r);
}
END_TEST

/* Walk every page of query; the ids in order, joined by ','. */
static char *
walk(const char *query, int limit, long long *total)
{
	char *ids = calloc(1, 65536), *cursor = NULL;
	int pages = 0;

	for (;;) {
		struct harness_resp *r = get_ok(harness_fmt("/v1/billers?%s%slimit=%d%s%s",
		    query, query[0] ? "&" : "", limit, cursor ? "&cursor=" : "",
		    cursor ? cursor : ""));

		ck_assert_int_lt(++pages, 100);
		*total = devacct_int(r, "total_count");
		ck_assert_uint_le(nbillers(r), (size_t)limit);
		for (size_t i = 0; i < nbillers(r); i++) {
			ck_assert_ptr_null(strstr(ids, nth_id(r, i)));	/* never twice */
			strcat(ids, nth_id(r, i));
			strcat(ids, ",");
		}
		free(cursor);
		cursor = NULL;
		if (!devacct_bool(r, "has_more")) {
			ck_assert_ptr_null(devacct_str(r, "next_cursor"));
			harness_resp_free(r);
			break;
		}
		ck_assert_uint_eq(nbillers(r), (size_t)limit);
		cursor = strdup(qenc(devacct_str(r, "next_cursor")));
		harness_resp_free(r);
	}
	return ids;
}

static size_t
count_ids(const char *ids)
{
	size_t n = 0;

	for (; *ids != '\0'; ids++)
		n += *ids == ',';
	return n;
}

/* Each walk visits every matching biller once, in the order SQL gives. */
static const struct { const char *query, *order_sql; } walks[] = {
	{ "", "ORDER BY billers_fold(name), id" },
	{ "sort_order=desc", "ORDER BY billers_fold(name) DESC, id DESC" },
	{ "sort_by=created_at&sort_order=desc", "ORDER BY created_at DESC, id DESC" },
	{ "type=water&sort_by=name&sort_order=asc", NULL },
	{ "search_term=energy", NULL },
	{ "search_term=water&status=ACTIVE", NULL },
};

START_TEST(list_cursor_walk)
{
	long long total;
	char *ids = walk(walks[_i].query, 37, &total);

	ck_assert_int_gt(total, 0);
	ck_assert_uint_eq(count_ids(ids), (size_t)total);
	if (walks[_i].order_sql != NULL) {
		char *want = devacct_sql_value(harness_fmt("SELECT string_agg(id, ',' %s) || ','"
		    " FROM billers", walks[_i].order_sql), NULL, NULL);

		ck_assert_str_eq(ids, want);
		free(want);
	}
	free(ids);
}
END_TEST

START_TEST(list_filters)
{
	static const struct { const char *query, *sql, *param, *member; } f[] = {
		{ "status=DEGRADED", "SELECT count(*) FROM billers WHERE status = $1", "DEGRADED",
		  "status" },
		{ "status=UNSUPPORTED", "SELECT count(*) FROM billers WHERE status = $1",
		  "UNSUPPORTED", "status" },
		{ "type=sewer", "SELECT count(*) FROM billers WHERE type = $1", "sewer", "type" },
		{ "type=other", "SELECT count(*) FROM billers WHERE type = $1", "other", "type" },
		{ "consent_scope=payments",
		  "SELECT count(*) FROM billers WHERE $1 = ANY (consent_scopes)", "payments", NULL },
	};

	for (size_t k = 0; k < N(f); k++) {
		long long want = sql_count(f[k].sql, f[k].param);
		struct harness_resp *r = get_ok(harness_fmt("/v1/billers?%s&limit=500",
		    f[k].query));

		ck_assert_int_gt(want, 0);
		ck_assert_int_eq(devacct_int(r, "total_count"), want);
		ck_assert_uint_eq(nbillers(r), (size_t)want);
		for (size_t i = 0; i < nbillers(r); i++) {
			if (f[k].member != NULL) {
				ck_assert_pstr_eq(devacct_str(r, harness_fmt("billers.%zu.%s", i,
				    f[k].member)), f[k].param);
			} else {
				const char *scopes = devacct_text(r,
				    harness_fmt("billers.%zu.consent_scopes", i));

				ck_assert_ptr_nonnull(strstr(scopes, "\"payments\""));
			}
		}
		harness_resp_free(r);
	}
	/* filters combine */
	{
		struct harness_resp *r = get_ok("/v1/billers?type=water&status=ACTIVE&limit=500");

		ck_assert_int_eq(devacct_int(r, "total_count"), devacct_sql_int(
		    "SELECT count(*) FROM billers WHERE type = $1 AND status = $2", "water",
		    "ACTIVE"));
		harness_resp_free(r);
	}
}
END_TEST

/* The best match comes first, whatever the case, accents or word. */
static const struct { const char *term, *first; } searches[] = {
	{ "pge", PGE },
	{ "PGE", PGE },
	{ "Pacific Gas", PGE },
	{ "pacificgas", PGE },
	{ "électricité", EDF },
	{ "ELECTRICITE", EDF },
	{ "electricite de france", EDF },
	{ "Düsseldorf", DUSSELDORF },
	{ "dusseldorf", DUSSELDORF },
	{ "Sandbox Power", SANDBOX_BILLER },
};

START_TEST(search_ranked)
{
	struct harness_resp *r = get_ok(harness_fmt("/v1/billers?search_term=%s",
	    qenc(searches[_i].term)));

	ck_assert_uint_ge(nbillers(r), 1);
	ck_assert_pstr_eq(nth_id(r, 0), searches[_i].first);
	ck_assert_int_lt(devacct_int(r, "total_count"),
	    sql_count("SELECT count(*) FROM billers", NULL));
	harness_resp_free(r);
}
END_TEST

/* Nothing matches; LIKE's wildcards in a term are plain characters. */
static const char *const no_match[] = { "zqxjvw", "%25", "_", "%25%25%25", "%5C" };

START_TEST(search_no_match)
{
	struct harness_resp *r = get_ok(harness_fmt("/v1/billers?search_term=%s",
	    no_match[_i]));

	ck_assert_uint_eq(nbillers(r), 0);
	ck_assert_int_eq(devacct_int(r, "total_count"), 0);
	ck_assert_int_eq(devacct_bool(r, "has_more"), 0);
	harness_resp_free(r);
}
END_TEST

START_TEST(list_bad_cursor)
{
	struct harness_resp *r = get_ok("/v1/billers?status=ACTIVE&limit=5");
	char *cursor = strdup(qenc(devacct_str(r, "next_cursor")));
	const char *other[] = { "status=DEGRADED", "status=ACTIVE&sort_order=desc",
	    "status=ACTIVE&search_term=gas", "", "status=ACTIVE&sort_by=created_at" };

	harness_resp_free(r);
	/* the same filters open it */
	r = get_ok(harness_fmt("/v1/billers?status=ACTIVE&limit=5&cursor=%s", cursor));
	harness_resp_free(r);
	for (size_t i = 0; i < N(other); i++) {
		r = get(key_a, harness_fmt("/v1/billers?%s%slimit=5&cursor=%s", other[i],
		    other[i][0] ? "&" : "", cursor));
		harness_assert_coded(r, 400, "INVALID_CURSOR");
		harness_resp_free(r);
	}
	r = get(key_a, "/v1/billers?cursor=bm90LWEtY3Vyc29y");
	harness_assert_coded(r, 400, "INVALID_CURSOR");
	harness_resp_free(r);
	free(cursor);
}
END_TEST

START_TEST(list_needs_a_key)
{
	struct harness_resp *r = devacct_call("GET", "sandbox", "/v1/billers", NULL, NULL, NULL);

	harness_assert_coded(r, 401, "UNAUTHORIZED");
	harness_resp_free(r);
}
END_TEST

/* ------------------------------------------------------------------ */
/* By e-mail                                                           */

static const struct { const char *email, *id; int match; } emails[] = {
	{ "bills@pge.example", PGE, 1 },
	{ "bills@e.mail.pge.example", PGE, 1 },
	{ "Bills@Mail.PGE.Example", PGE, 1 },
	{ "no-reply@pacificgas.example", PGE, 1 },
	{ "x@notpge.example", PGE, 0 },
	{ "x@pge.example.org", PGE, 0 },
	{ "factures@edf.example", EDF, 1 },
};

START_TEST(by_email)
{
	struct harness_resp *r = get_ok(harness_fmt("/v1/billers/search/by-email?email=%s",
	    qenc(emails[_i].email)));

	ck_assert_int_eq(holds(r, emails[_i].id), emails[_i].match);
	if (emails[_i].match)
		ck_assert_pstr_eq(devacct_str(r, "billers.0.object"), "biller");
	else
		ck_assert_uint_eq(nbillers(r), 0);
	harness_resp_free(r);
}
END_TEST

static const char *const bad_emails[] = {
	"nobody", "@pge.example", "a@b@pge.example", "a@pge", "a@pge..example",
	"a@-pge.example", "a b@pge.example", "a@pge_x.example", "a@",
};

START_TEST(by_email_bad)
{
	struct harness_resp *r = get(key_a, harness_fmt("/v1/billers/search/by-email?email=%s",
	    qenc(bad_emails[_i])));

	harness_assert_coded(r, 400, "VALIDATION_ERROR");
	devacct_assert_error(r, "email", NULL);
	harness_resp_free(r);
}
END_TEST

START_TEST(by_email_required)
{
	struct harness_resp *r = get(key_a, "/v1/billers/search/by-email");

	harness_assert_coded(r, 400, "VALIDATION_ERROR");
	devacct_assert_error(r, "email", "required");
	harness_resp_free(r);
}
END_TEST

/* ------------------------------------------------------------------ */
/* One biller                                                          */

START_TEST(get_one)
{
	struct harness_resp *r = get_ok("/v1/billers/" SANDBOX_BILLER);

	ck_assert_pstr_eq(devacct_str(r, "id"), SANDBOX_BILLER);
	ck_assert_pstr_eq(devacct_str(r, "object"), "biller");
	ck_assert_pstr_eq(devacct_str(r, "name"), "Sandbox Power & Light");
	ck_assert_pstr_eq(devacct_str(r, "type"), "electric");
	ck_assert_pstr_eq(devacct_str(r, "status"), "ACTIVE");
	ck_assert_pstr_eq(devacct_text(r, "connectivity_types"), "[\"credentials\"]");
	ck_assert_int_eq(devacct_bool(r, "capabilities.bills"), 1);
	ck_assert_int_eq(devacct_bool(r, "capabilities.mfa"), 1);
	ck_assert_int_eq(devacct_bool(r, "capabilities.pay"), 0);
	ck_assert_ptr_null(devacct_json(r, "connector"));
	harness_resp_free(r);
	/* with the developer's JWT too */
	r = devacct_jwt(&dev, "GET", "/v1/billers/" PGE, NULL, NULL);
	harness_expect(r, 200);
	ck_assert_pstr_eq(devacct_str(r, "name"), "Pacific Gas and Electric");
	ck_assert_pstr_eq(devacct_text(r, "domains"), "[\"pge.example\",\"pacificgas.example\"]");
	harness_resp_free(r);
}
END_TEST

static const char *const unknown_ids[] = {
	"blr_01900000-0000-7000-8000-0000000000ff",	/* well-formed, unknown */
	"01900000-0000-7000-8000-000000000001",		/* bare uuid */
	"link_01900000-0000-7000-8000-000000000001",
	"blr_nope",
};

START_TEST(get_unknown)
{
	struct harness_resp *r = get(key_a, harness_fmt("/v1/billers/%s", unknown_ids[_i]));

	harness_assert_coded(r, 404, "BILLER_NOT_FOUND");
	harness_resp_free(r);
}
END_TEST

START_TEST(get_needs_resignin)
{
	const char *auths[] = {
		NULL,
		"Bearer bds_sandbox_0000000000000000000000000000000000000000000000000",
		"Bearer not-a-token",
		"Bearer eyJhbGciOiJFZERTQSJ9.eyJzdWIiOiJ4In0.c2ln",
	};

	for (size_t i = 0; i < N(auths); i++) {
		struct harness_resp *r = devacct_call("GET", "sandbox", "/v1/billers/" PGE,
		    auths[i], NULL, NULL);

		harness_assert_coded(r, 401, "NEEDS_RESIGNIN");
		harness_resp_free(r);
	}
}
END_TEST

/* ------------------------------------------------------------------ */
/* The lookups links and jobs call, and the connect picker             */

static struct config cfg;
static struct arena arena;
static struct req req;

static void
req_open(void)
{
	char err[512];

	ck_assert_msg(config_load(&cfg, harness_config_path(), err, sizeof(err)) == 0,
	    "config: %s", err);
	ck_assert_int_eq(crypto_setup(), 0);
	arena_init(&arena);
	req_init(&req, &cfg, db_new(harness_database_url()), &arena, NULL);
	ck_assert_ptr_nonnull(req.db);
}

static void
req_close(void)
{
	arena_free(&arena);
	db_free(req.db);
	config_free(&cfg);
}

START_TEST(module_lookups)
{
	struct billers_row b;
	struct json_object *o;

	req_open();
	memset(&b, 0, sizeof(b));
	ck_assert_int_eq(billers_get(&req, SANDBOX_BILLER, &b), 1);
	ck_assert_str_eq(b.id, SANDBOX_BILLER);
	ck_assert_str_eq(b.name, "Sandbox Power & Light");
	ck_assert_str_eq(b.type, "electric");
	ck_assert_str_eq(b.status, "ACTIVE");
	ck_assert_str_eq(b.connector, "sandbox");
	ck_assert_str_eq(b.country, "US");
	ck_assert_ptr_null(b.base_url);
	ck_assert_int_eq(billers_get(&req, PGE, &b), 1);
	ck_assert_str_eq(b.connector, "portal");
	ck_assert_str_eq(b.base_url, "https://pge.example/bpp/v1");
	ck_assert_int_eq(billers_get(&req, "blr_01900000-0000-7000-8000-0000000000ff", &b), 0);
	ck_assert_int_eq(billers_get(&req, "nonsense", &b), 0);
	ck_assert_int_eq(billers_get(&req, NULL, &b), 0);

	o = billers_json_by_id(&req, PGE);
	ck_assert_ptr_nonnull(o);
	ck_assert_str_eq(json_object_get_string(json_object_object_get(o, "object")), "biller");
	ck_assert_ptr_null(json_object_object_get(o, "connector"));
	ck_assert_ptr_null(billers_json_by_id(&req, "blr_01900000-0000-7000-8000-0000000000ff"));
	req_close();
}
END_TEST

/* billers_picker with its counts in *total and *matches. */
static struct json_object *
pick(const char *env, const char *term, int limit, long long *total, long long *matches)
{
	return billers_picker(&req, env, term, limit, total, matches);
}

START_TEST(module_picker)
{
	struct json_object *a;
	long long total, matches;
	long long linkable = devacct_sql_int("SELECT count(*) FROM billers WHERE status IN"
	    " ('ACTIVE', 'DEGRADED') AND connector = 'portal'", NULL, NULL);
	long long sandbox = devacct_sql_int("SELECT count(*) FROM billers WHERE status IN"
	    " ('ACTIVE', 'DEGRADED') AND (connector = 'sandbox' OR sandbox_portal)", NULL, NULL);

	req_open();
	/* ranked; only billers one can link, in the environment */
	a = pick("development", "pacific gas", 10, &total, &matches);
	ck_assert_ptr_nonnull(a);
	ck_assert_uint_ge(json_object_array_length(a), 1);
	ck_assert_str_eq(json_object_get_string(json_object_object_get(
	    json_object_array_get_idx(a, 0), "id")), PGE);
	ck_assert_int_eq(total, linkable);
	ck_assert_int_eq(matches, (long long)json_object_array_length(a));
	a = pick("development", NULL, 1000, &total, &matches);
	ck_assert_ptr_nonnull(a);
	ck_assert_uint_eq(json_object_array_length(a), (size_t)linkable);
	ck_assert_int_eq(matches, linkable);
	for (size_t i = 0; i < json_object_array_length(a); i++)
		ck_assert_str_ne(json_object_get_string(json_object_object_get(
		    json_object_array_get_idx(a, i), "status")), "UNSUPPORTED");
	ck_assert_uint_eq(json_object_array_length(pick("development", "", 5, &total,
	    &matches)), 5);
	ck_assert_uint_eq(json_object_array_length(pick("development", "zqxjvw", 5, &total,
	    &matches)), 0);
	ck_assert_int_eq(matches, 0);
	ck_assert_int_eq(total, linkable);
	/* the sandbox: its fixtures (and flagged simulator portals) only */
	a = pick("sandbox", NULL, 1000, &total, &matches);
	ck_assert_uint_ge((size_t)sandbox, 1);
	ck_assert_uint_eq(json_object_array_length(a), (size_t)sandbox);
	ck_assert_uint_eq(json_object_array_length(pick("sandbox", "pacific gas", 10, &total,
	    &matches)), 0);
	req_close();
}
END_TEST

/* May environment E link biller B: the biller's connector and its flag. */
START_TEST(module_linkable)
{
	static const struct {
		const char *env, *biller;
		enum billers_link want;
	} cases[] = {
		{ "sandbox", SANDBOX_BILLER, BILLERS_LINK_OK },
		{ "development", SANDBOX_BILLER, BILLERS_LINK_OTHER_ENV },
		{ "production", SANDBOX_BILLER, BILLERS_LINK_OTHER_ENV },
		{ "development", PGE, BILLERS_LINK_OK },
		{ "production", PGE, BILLERS_LINK_OK },
		{ "sandbox", PGE, BILLERS_LINK_OTHER_ENV },
		{ "staging", PGE, BILLERS_LINK_OTHER_ENV },
		{ "sandbox", "blr_01900000-0000-7000-8000-0000000000ff", BILLERS_LINK_UNKNOWN },
		{ "sandbox", "nonsense", BILLERS_LINK_UNKNOWN },
	};

	req_open();
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		ck_assert_msg(billers_linkable(&req, cases[i].env, cases[i].biller) == cases[i].want,
		    "%s %s", cases[i].env, cases[i].biller);
	/* sandbox_portal: a portal a sandbox key links too (the simulator) */
	devacct_sql_exec("UPDATE billers SET sandbox_portal = true WHERE id = $1", PGE, NULL);
	ck_assert_int_eq(billers_linkable(&req, "sandbox", PGE), BILLERS_LINK_OK);
	ck_assert_int_eq(billers_linkable(&req, "development", PGE), BILLERS_LINK_OK);
	devacct_sql_exec("UPDATE billers SET sandbox_portal = false WHERE id = $1", PGE, NULL);
	ck_assert_int_eq(billers_linkable(&req, "sandbox", PGE), BILLERS_LINK_OTHER_ENV);
	/* never on a sandbox biller */
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM billers WHERE connector = 'sandbox'"
	    " AND sandbox_portal", NULL, NULL), 0);
	req_close();
}
END_TEST

/* ------------------------------------------------------------------ */
/* Operator: import and status                                         */

/* The bdsctl log's text after offset (malloc'ed). */
static char *
ctl_log_since(size_t off)
{
	char *all = harness_slurp(harness_fmt("%s/bdsctl.log", harness_dir()));
	char *s;

	ck_assert_ptr_nonnull(all);
	s = strdup(strlen(all) >= off ? all + off : "");
	free(all);
	return s;
}

static size_t
ctl_log_size(void)
{
	char *all = harness_slurp(harness_fmt("%s/bdsctl.log", harness_dir()));
	size_t n = all ? strlen(all) : 0;

	free(all);
	return n;
}

static void
write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
}

#define HEADER "id,name,type,status,domains,website,login_url,logo_url,country," \
	"connectivity_types,consent_scopes,capabilities,connector,base_url\n"
#define NEW_ID "blr_01900002-0000-7000-8000-000000000001"
#define NEW_ROW(name, type) NEW_ID ",\"" name "\"," type ",ACTIVE,newco.example," \
	"https://newco.example,,,US,credentials,bills,bills,portal,https://newco.example/bpp/v1\n"

START_TEST(import_reimport_unchanged)
{
	long long total = sql_count("SELECT count(*) FROM billers", NULL);
	const char *args[] = { "billers", "import", NULL, NULL };
	size_t off = ctl_log_size();
	char *log;

	ck_assert_ptr_nonnull(getenv("BDS_SRCDIR"));
	args[2] = harness_fmt("%s/data/billers.csv", getenv("BDS_SRCDIR"));
	ck_assert_int_eq(harness_bdsctl(args), 0);
	log = ctl_log_since(off);
	ck_assert_msg(strstr(log, harness_fmt("0 inserted, 0 updated, %lld unchanged", total)),
	    "%s", log);
	free(log);
}
END_TEST

/* The catalog file never sets sandbox_portal: a re-import keeps a flag
 * the dev seed set, and clears it when the row stops being a portal (the
 * flag is for portal rows only). */
START_TEST(import_keeps_sandbox_portal)
{
	const char *id = "blr_01900002-0000-7000-8000-0000000005bf";
	const char *path = harness_fmt("%s/flag.csv", harness_dir());
	const char *args[] = { "billers", "import", NULL, NULL };
	char *row = strdup(harness_fmt("%s,Flagged Sim,electric,ACTIVE,flagged.example,,,,US,"
	    "credentials,bills,bills,", id));

	args[2] = path;
	write_file(path, harness_fmt(HEADER "%sportal,https://flagged.example/bpp/v1\n", row));
	ck_assert_int_eq(harness_bdsctl(args), 0);
	ck_assert_int_eq(sql_count("SELECT count(*) FROM billers WHERE id = $1"
	    " AND NOT sandbox_portal", id), 1);
	devacct_sql_exec("UPDATE billers SET sandbox_portal = true WHERE id = $1", id, NULL);
	write_file(path, harness_fmt(HEADER "%sportal,https://flagged.example/bpp/v2\n", row));
	ck_assert_int_eq(harness_bdsctl(args), 0);
	ck_assert_int_eq(sql_count("SELECT count(*) FROM billers WHERE id = $1 AND sandbox_portal"
	    " AND base_url = 'https://flagged.example/bpp/v2'", id), 1);
	write_file(path, harness_fmt(HEADER "%ssandbox,\n", row));
	ck_assert_int_eq(harness_bdsctl(args), 0);
	ck_assert_int_eq(sql_count("SELECT count(*) FROM billers WHERE id = $1"
	    " AND connector = 'sandbox' AND NOT sandbox_portal", id), 1);
	devacct_sql_exec("DELETE FROM billers WHERE id = $1", id, NULL);
	free(row);
}
END_TEST

static const struct { const char *csv, *want; } bad_files[] = {
	/* a good row, then a bad one: nothing loaded, line 3 named */
	{ HEADER NEW_ROW("NewCo Power", "electric") NEW_ROW("NewCo", "power"),
	  "line 3: type" },
	/* blank lines count; a quoted field may span lines (a name may not) */
	{ HEADER "\n" NEW_ROW("NewCo", "electric")
	  "blr_01900002-0000-7000-8000-000000000002,X,gas,ACTIVE,x.example,,,,USA,"
	  "credentials,bills,bills,portal,https://x.example/bpp/v1\n", "line 4: country" },
	{ HEADER NEW_ROW("NewCo\nPower", "electric"), "line 2: name" },
	{ HEADER NEW_ROW("NewCo", "electric") "\"unterminated,\n", "line 3: unterminated" },
	{ "id,name\n" NEW_ROW("NewCo", "electric"), "line 1" },
	{ HEADER NEW_ROW("NewCo", "electric") NEW_ROW("NewCo again", "gas"), "line 3: id repeats" },
};

START_TEST(import_bad_file_loads_nothing)
{
	const char *path = harness_fmt("%s/bad-%d.csv", harness_dir(), _i);
	const char *args[] = { "billers", "import", path, NULL };
	size_t off = ctl_log_size();
	char *log;

	write_file(path, bad_files[_i].csv);
	ck_assert_int_eq(harness_bdsctl(args), 1);
	log = ctl_log_since(off);
	ck_assert_msg(strstr(log, bad_files[_i].want) != NULL, "want %s in: %s",
	    bad_files[_i].want, log);
	ck_assert_msg(strstr(log, "nothing loaded") != NULL || _i == 4, "%s", log);
	free(log);
	ck_assert_int_eq(sql_count("SELECT count(*) FROM billers WHERE id = $1", NEW_ID), 0);
}
END_TEST

START_TEST(import_inserts_then_updates)
{
	const char *path = harness_fmt("%s/new.csv", harness_dir());
	const char *args[] = { "billers", "import", path, NULL };
	size_t off = ctl_log_size();
	struct harness_resp *r;
	char *log;

	write_file(path, HEADER NEW_ROW("Nouvelle Énergie, \"\"NE\"\"", "electric"));
	ck_assert_int_eq(harness_bdsctl(args), 0);
	write_file(path, HEADER NEW_ROW("Nouvelle Énergie, \"\"NE\"\" Co.", "electric"));
	ck_assert_int_eq(harness_bdsctl(args), 0);
	log = ctl_log_since(off);
	ck_assert_msg(strstr(log, "1 inserted, 0 updated, 0 unchanged") != NULL, "%s", log);
	ck_assert_msg(strstr(log, "0 inserted, 1 updated, 0 unchanged") != NULL, "%s", log);
	free(log);
	r = get_ok("/v1/billers/" NEW_ID);
	ck_assert_pstr_eq(devacct_str(r, "name"), "Nouvelle Énergie, \"NE\" Co.");
	harness_resp_free(r);
	/* search_text follows the write */
	r = get_ok("/v1/billers?search_term=nouvelle%20energie");
	ck_assert_pstr_eq(nth_id(r, 0), NEW_ID);
	harness_resp_free(r);
}
END_TEST

static void
wh_register(const char *client, const char *url, char *secret, size_t len)
{
	const char *extra[] = { harness_idem_header(), NULL };
	struct harness_resp *r = devacct_jwt(&dev, "POST",
	    harness_fmt("/v1/iam/clients/%s/webhooks", client),
	    harness_fmt("{\"environment\":\"sandbox\",\"url\":\"%s\","
	    "\"events\":[\"biller.unsupported\"]}", url), extra);

	harness_expect(r, 201);
	snprintf(secret, len, "%s", devacct_str(r, "webhook.secret"));
	harness_resp_free(r);
}

static void
link_insert(const char *client, const char *biller, const char *status)
{
	devacct_sql_exec(harness_fmt("INSERT INTO links (client_id, id, environment,"
	    " client_user_id, biller_id, status) VALUES ($1, 'link_' || gen_random_uuid(),"
	    " 'sandbox', 'user-1', $2, '%s')", status), client, biller);
}

START_TEST(set_status_unsupported_notifies_linked_clients)
{
	char *biller = devacct_sql_value("SELECT id FROM billers WHERE name = $1",
	    "Salem Cablevision", NULL);
	const char *args[] = { "billers", "set-status", NULL, "UNSUPPORTED", NULL };
	struct receiver *rc = receiver_start(NULL);
	const struct receiver_req *q;
	struct json_object *body;
	char url_a[256], url_b[256], secret[192];
	struct harness_resp *r;

	ck_assert_ptr_nonnull(biller);
	ck_assert_msg(rc != NULL, "receiver: %s", receiver_error());
	args[2] = biller;
	/* a has a live link on it (and a revoked one); b only a revoked one */
	link_insert(client_a, biller, "ACTIVE");
	link_insert(client_a, biller, "REVOKED");
	link_insert(client_b, biller, "REVOKED");
	wh_register(client_a, receiver_url(rc, "/a", url_a, sizeof(url_a)), secret,
	    sizeof(secret));
	wh_register(client_b, receiver_url(rc, "/b", url_b, sizeof(url_b)), secret,
	    sizeof(secret));

	ck_assert_int_eq(harness_bdsctl(args), 0);
	ck_assert_int_eq(harness_deliver_once(), 0);
	q = receiver_wait(rc, 0, WAIT_MS);
	ck_assert_ptr_nonnull(q);
	ck_assert_str_eq(q->target, "/a");
	body = json_tokener_parse(q->body);
	ck_assert_ptr_nonnull(body);
	ck_assert_str_eq(json_object_get_string(json_object_object_get(body, "type")),
	    "biller.unsupported");
	{
		struct json_object *data, *obj;

		ck_assert(json_object_object_get_ex(body, "data", &data));
		ck_assert(json_object_object_get_ex(data, "object", &obj));
		ck_assert_str_eq(json_object_get_string(json_object_object_get(obj, "biller_id")),
		    biller);
		ck_assert_str_eq(json_object_get_string(json_object_object_get(obj, "status")),
		    "UNSUPPORTED");
	}
	json_object_put(body);
	/* once per client and environment, and not again when set twice */
	ck_assert_int_eq(harness_bdsctl(args), 0);
	ck_assert_int_eq(harness_deliver_once(), 0);
	ck_assert_int_eq(sql_count("SELECT count(*) FROM events WHERE client_id = $1"
	    " AND type = 'biller.unsupported'", client_a), 1);
	ck_assert_int_eq(sql_count("SELECT count(*) FROM events WHERE client_id = $1"
	    " AND type = 'biller.unsupported'", client_b), 0);
	ck_assert_uint_eq(receiver_count(rc), 1);
	receiver_stop(rc);

	r = get_ok(harness_fmt("/v1/billers/%s", biller));
	ck_assert_pstr_eq(devacct_str(r, "status"), "UNSUPPORTED");
	harness_resp_free(r);
	/* a bad status or id changes nothing */
	args[3] = "GONE";
	ck_assert_int_eq(harness_bdsctl(args), 1);
	args[2] = "blr_01900000-0000-7000-8000-0000000000ff";
	args[3] = "ACTIVE";
	ck_assert_int_eq(harness_bdsctl(args), 1);
	free(biller);
}
END_TEST

/* ------------------------------------------------------------------ */
/* The workers' answer cache                                           */

#define CACHED		"/v1/billers?search_term=energy"
#define MAX_WORKERS	16

static pid_t workers[MAX_WORKERS];
static size_t nworkers;

/* Checked setup: every worker runs (a failed test may have stopped some). */
static void
workers_resume(void)
{
	nworkers = harness_api_workers(workers, MAX_WORKERS);
	if (nworkers > MAX_WORKERS)
		nworkers = MAX_WORKERS;
	for (size_t i = 0; i < nworkers; i++)
		kill(workers[i], SIGCONT);
}

/* pid is stopped (SIGSTOP taken): off its epoll wait, so the listening
 * socket's next connection wakes another worker. */
static int
stopped(pid_t pid)
{
	char *st = harness_slurp(harness_fmt("/proc/%d/stat", (int)pid));
	const char *p = st != NULL ? strrchr(st, ')') : NULL;
	int yes = p != NULL && p[1] == ' ' && p[2] == 'T';

	free(st);
	return yes;
}

/*
 * GET path with key on a new raw FastCGI connection, as nginx sends it: a
 * new connection is taken by a worker waiting on the listening socket, one
 * not stopped. (Not through nginx: nginx keeps connections for reads, and
 * one held by a stopped worker would wait.)
 */
static struct harness_resp *
get_new_conn(const char *key, const char *path)
{
	struct harness_fcgi *f = harness_fcgi_open();
	struct harness_resp *r;

	ck_assert_msg(f != NULL, "%s", harness_error());
	harness_fcgi_params_std(f, "GET", path, "sandbox", 0);
	harness_fcgi_param(f, "HTTP_AUTHORIZATION", devacct_bearer(key));
	ck_assert_msg(harness_fcgi_end_params(f) == 0, "%s", harness_error());
	ck_assert_msg(harness_fcgi_send_stdin(f, NULL, 0) == 0, "%s", harness_error());
	r = harness_fcgi_read(f, WAIT_MS);
	harness_fcgi_close(f);
	return r;
}

/*
 * GET path n times with only worker w taking requests (the others
 * stopped meanwhile): out[k] the answers. Assert after: a failure leaves
 * no worker stopped.
 */
static void
get_on(size_t w, const char *path, size_t n, struct harness_resp **out)
{
	long long end = harness_now_ms() + WAIT_MS;
	int all = 1;

	for (size_t i = 0; i < nworkers; i++)
		if (i != w)
			kill(workers[i], SIGSTOP);
	for (size_t i = 0; i < nworkers; i++)
		while (i != w && !stopped(workers[i]) && (all = harness_now_ms() < end))
			harness_sleep_ms(1);
	for (size_t k = 0; k < n; k++)
		out[k] = all ? get_new_conn(key_a, path) : NULL;
	workers_resume();
	ck_assert_msg(all, "a worker did not stop");
	for (size_t k = 0; k < n; k++)
		harness_expect(out[k], 200);
}

static void
expect_body(const struct harness_resp *r, const struct harness_resp *want)
{
	ck_assert_uint_eq(r->body_len, want->body_len);
	ck_assert_msg(memcmp(r->body, want->body, want->body_len) == 0,
	    "bodies differ:\n%s\n%s", r->body, want->body);
}

static void
set_status(const char *id, const char *status)
{
	const char *args[] = { "billers", "set-status", id, status, NULL };

	ck_assert_int_eq(harness_bdsctl(args), 0);
}

/* Change billers without its notification (nothing tells the workers). */
static void
sql_silently(const char *q, const char *p1, const char *p2)
{
	devacct_sql_exec("ALTER TABLE billers DISABLE TRIGGER billers_notify", NULL, NULL);
	devacct_sql_exec(q, p1, p2);
	devacct_sql_exec("ALTER TABLE billers ENABLE TRIGGER billers_notify", NULL, NULL);
}

/* The status of the first biller of the cached search, as answered. */
static char *
first_status(const struct harness_resp *r)
{
	return strdup(devacct_str(r, "billers.0.status"));
}

/*
 * An operator's change shows in the next answer of every worker, each of
 * which had the page cached (answered it twice before the change).
 */
START_TEST(cache_operator_change_reaches_every_worker)
{
	struct harness_resp *r[3];
	char *id, *was, *now;
	const char *other;

	ck_assert_uint_ge(nworkers, 2);
	r[0] = get_ok(CACHED);
	id = strdup(nth_id(r[0], 0));
	was = first_status(r[0]);
	other = strcmp(was, "DEGRADED") != 0 ? "DEGRADED" : "ACTIVE";
	harness_resp_free(r[0]);
	for (size_t w = 0; w < nworkers; w++) {
		get_on(w, CACHED, 2, r);
		expect_body(r[1], r[0]);
		harness_resp_free(r[0]);
		harness_resp_free(r[1]);
	}
	set_status(id, other);
	for (size_t w = 0; w < nworkers; w++) {
		get_on(w, CACHED, 1, r);
		ck_assert_str_eq(nth_id(r[0], 0), id);
		now = first_status(r[0]);
		ck_assert_msg(strcmp(now, other) == 0, "worker %zu answered %s, not %s", w,
		    now, other);
		free(now);
		harness_resp_free(r[0]);
	}
	/* and back */
	set_status(id, was);
	for (size_t w = 0; w < nworkers; w++) {
		get_on(w, CACHED, 1, r);
		now = first_status(r[0]);
		ck_assert_str_eq(now, was);
		free(now);
		harness_resp_free(r[0]);
	}
	free(id);
	free(was);
}
END_TEST

/*
 * A hit is the miss's answer byte for byte: a change nobody notified is
 * not seen (the answer came from the cache), a notification (a plain SQL
 * write, or NOTIFY itself) drops it, and the database's fresh answer for
 * the same catalog is the cached one again.
 */
START_TEST(cache_hit_is_the_answer_byte_for_byte)
{
	const char *path = "/v1/billers?search_term=energy&limit=3&sort_order=desc";
	struct harness_resp *r[2], *miss, *hit;
	char *id, *name;

	get_on(0, path, 2, r);
	miss = r[0];
	expect_body(r[1], miss);
	harness_resp_free(r[1]);
	id = strdup(nth_id(miss, 0));
	name = strdup(devacct_str(miss, "billers.0.name"));
	sql_silently("UPDATE billers SET name = name || ' Cached' WHERE id = $1", id, NULL);
	get_on(0, path, 1, r);
	hit = r[0];
	expect_body(hit, miss);
	/* a write through SQL notifies (the statement trigger) */
	devacct_sql_exec("UPDATE billers SET name = $2 WHERE id = $1", id,
	    harness_fmt("%s Changed", name));
	get_on(0, path, 1, r);
	ck_assert_pstr_eq(devacct_str(r[0], "billers.0.name"), harness_fmt("%s Changed", name));
	harness_resp_free(r[0]);
	/* the old name back, unseen; then NOTIFY alone drops the page */
	sql_silently("UPDATE billers SET name = $2 WHERE id = $1", id, name);
	get_on(0, path, 1, r);
	ck_assert_pstr_eq(devacct_str(r[0], "billers.0.name"), harness_fmt("%s Changed", name));
	harness_resp_free(r[0]);
	devacct_sql_exec("SELECT pg_notify('bds_billers', '')", NULL, NULL);
	get_on(0, path, 1, r);
	expect_body(r[0], hit);
	harness_resp_free(r[0]);
	harness_resp_free(miss);
	harness_resp_free(hit);
	free(id);
	free(name);
}
END_TEST

/* The by-email search and one biller are cached and dropped alike. */
START_TEST(cache_by_email_and_one_biller)
{
	const char *paths[] = { "/v1/billers/search/by-email?email=bills%40pge.example",
	    "/v1/billers/" PGE };
	struct harness_resp *r[2];

	for (size_t i = 0; i < N(paths); i++) {
		get_on(0, paths[i], 2, r);
		expect_body(r[1], r[0]);
		harness_resp_free(r[0]);
		harness_resp_free(r[1]);
	}
	devacct_sql_exec("UPDATE billers SET name = name || ' Now' WHERE id = $1", PGE, NULL);
	for (size_t i = 0; i < N(paths); i++) {
		get_on(0, paths[i], 1, r);
		ck_assert_pstr_eq(devacct_str(r[0], i == 0 ? "billers.0.name" : "name"),
		    "Pacific Gas and Electric Now");
		harness_resp_free(r[0]);
	}
	devacct_sql_exec("UPDATE billers SET name = 'Pacific Gas and Electric' WHERE id = $1",
	    PGE, NULL);
}
END_TEST

/*
 * A new database connection drops every worker's cache: what was notified
 * while none listened is lost. The change here notifies nobody; then
 * PostgreSQL restarts. (Last: the fixture's own connection is gone.)
 */
START_TEST(cache_reconnect_drops_it)
{
	struct harness_resp *r[2];
	char *id, *name;

	get_on(0, CACHED, 2, r);
	expect_body(r[1], r[0]);
	id = strdup(nth_id(r[0], 0));
	name = strdup(devacct_str(r[0], "billers.0.name"));
	harness_resp_free(r[0]);
	harness_resp_free(r[1]);
	sql_silently("UPDATE billers SET name = name || ' Reconnected' WHERE id = $1", id, NULL);
	ck_assert_msg(harness_pg_stop() == 0, "%s", harness_error());
	ck_assert_msg(harness_pg_start() == 0, "%s", harness_error());
	ck_assert_msg(harness_wait_health(200, 15000) == 0, "%s", harness_error());
	ck_assert_msg(harness_wait_workers_healthy(5000) == 0, "%s", harness_error());
	PQreset(devacct_pg());	/* this test's connection went with it */
	for (size_t w = 0; w < nworkers; w++) {
		get_on(w, CACHED, 1, r);
		ck_assert_pstr_eq(devacct_str(r[0], "billers.0.name"),
		    harness_fmt("%s Reconnected", name));
		harness_resp_free(r[0]);
	}
	devacct_sql_exec("UPDATE billers SET name = $2 WHERE id = $1", id, name);
	free(id);
	free(name);
}
END_TEST

static Suite *
billers_suite(void)
{
	Suite *s = suite_create("e2e_billers");
	TCase *tc = tcase_create("billers");

	tcase_add_unchecked_fixture(tc, stack_up, harness_fixture_stop);
	tcase_add_checked_fixture(tc, workers_resume, NULL);
	tcase_add_checked_fixture(tc, harness_fixture_recover, NULL);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, list_default_page);
	tcase_add_test(tc, list_limit_edges);
	tcase_add_loop_test(tc, list_bad_query, 0, N(bad_queries));
	tcase_add_loop_test(tc, list_cursor_walk, 0, N(walks));
	tcase_add_test(tc, list_filters);
	tcase_add_loop_test(tc, search_ranked, 0, N(searches));
	tcase_add_loop_test(tc, search_no_match, 0, N(no_match));
	tcase_add_test(tc, list_bad_cursor);
	tcase_add_test(tc, list_needs_a_key);
	tcase_add_loop_test(tc, by_email, 0, N(emails));
	tcase_add_loop_test(tc, by_email_bad, 0, N(bad_emails));
	tcase_add_test(tc, by_email_required);
	tcase_add_test(tc, get_one);
	tcase_add_loop_test(tc, get_unknown, 0, N(unknown_ids));
	tcase_add_test(tc, get_needs_resignin);
	tcase_add_test(tc, module_lookups);
	tcase_add_test(tc, module_picker);
	tcase_add_test(tc, module_linkable);
	tcase_add_test(tc, import_keeps_sandbox_portal);
	tcase_add_test(tc, import_reimport_unchanged);
	tcase_add_loop_test(tc, import_bad_file_loads_nothing, 0, N(bad_files));
	tcase_add_test(tc, import_inserts_then_updates);
	tcase_add_test(tc, set_status_unsupported_notifies_linked_clients);
	tcase_add_test(tc, cache_operator_change_reaches_every_worker);
	tcase_add_test(tc, cache_hit_is_the_answer_byte_for_byte);
	tcase_add_test(tc, cache_by_email_and_one_biller);
	tcase_add_test(tc, cache_reconnect_drops_it);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return harness_run_suite(billers_suite());
}
