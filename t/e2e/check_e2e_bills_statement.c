/*
 * Statement documents end to end: a sandbox account link's
 * retrieval (the stack's bds-jobs) renders and stores every statement's PDF
 * under data_dir and records its hash; GET /v1/bills/{id}/statement answers
 * a signed URL on the same host; fetching it through nginx streams the
 * stored file (X-Accel-Redirect to the internal /_statements/ location)
 * with the document's headers. Refused: an expired URL (signed here with
 * the harness's secret_key, as docs/DECISIONS.md documents the MAC), a
 * tampered signature or expiry, another bill's signature, the other host,
 * a direct request for /_statements/...; 404 for a bill without a document,
 * another client's, a deleted or an unknown bill.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <check.h>
#include <json-c/json.h>

#include "devacct.h"
#include "harness.h"

#define IDLE_MS 60000

static struct devacct dev;

struct tenant {
	char	*client;
	char	*key;
	char	*link;
};

static struct tenant ta, tb;

static struct harness_resp *
sbx(const struct tenant *t, const char *method, const char *path)
{
	return devacct_call(method, "sandbox", path, t->key ? devacct_bearer(t->key) : NULL,
	    NULL, NULL);
}

/* A client with a sandbox key and a retrieved user_good link. */
static void
tenant_new(struct tenant *t)
{
	t->client = devacct_client_new(&dev);
	t->key = devacct_key_new(&dev, t->client, "sandbox");
	t->link = devacct_sandbox_link(t->key, "u-stmt", "user_good");
	ck_assert_msg(harness_jobs_wait_idle(IDLE_MS) == 0, "%s", harness_error());
}

static void
tenant_free(struct tenant *t)
{
	free(t->client);
	free(t->key);
	free(t->link);
}

/* The link's bill of statement month ym ("2026-09"): malloc'ed id. */
static char *
bill_of(const struct tenant *t, const char *ym)
{
	char *id = devacct_sql_value("SELECT id FROM bills WHERE link_id = $1 AND"
	    " to_char(period_start, 'YYYY-MM') = $2", t->link, ym);

	ck_assert_ptr_nonnull(id);
	return id;
}

static char *
sha_of(const char *bill)
{
	return devacct_sql_value("SELECT statement_sha256 FROM bills WHERE id = $1", bill, NULL);
}

/* GET /v1/bills/{id}/statement → 200; the URL's path and query (malloc'ed). */
static char *
statement_path(const struct tenant *t, const char *bill)
{
	struct harness_resp *r = sbx(t, "GET", harness_fmt("/v1/bills/%s/statement", bill));
	const char *url, *base = harness_base_url("sandbox");
	char *path;

	harness_expect(r, 200);
	url = devacct_str(r, "url");
	ck_assert_ptr_nonnull(url);
	/* on the host the call came to */
	ck_assert_msg(strncmp(url, base, strlen(base)) == 0, "url %s not on %s", url, base);
	path = strdup(url + strlen(base));
	ck_assert_msg(strncmp(path, harness_fmt("/v1/statements/%s?expires=", bill),
	    strlen(harness_fmt("/v1/statements/%s?expires=", bill))) == 0, "url %s", url);
	ck_assert_ptr_nonnull(strstr(path, "&sig="));
	/* expires_at five minutes ahead, and the same instant as expires= */
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) WHERE $1::timestamptz - now()"
	    " BETWEEN interval '4 minutes' AND interval '5 minutes 1 second'",
	    devacct_str(r, "expires_at"), NULL), 1);
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) WHERE"
	    " extract(epoch FROM $1::timestamptz)::bigint = split_part($2, '&', 1)::bigint",
	    devacct_str(r, "expires_at"), strstr(path, "expires=") + 8), 1);
	harness_resp_free(r);
	return path;
}

/* The signature the app makes (docs/DECISIONS.md), for a URL of our own. */
static char *
sign(const char *bill, const char *client, const char *host, long long expires)
{
	return devacct_url_sig("bds statement url v1", bill, client, host, expires);
}

static size_t
header_count(const struct harness_resp *r, const char *name)
{
	size_t n = 0;

	for (size_t i = 0; i < r->nheaders; i++)
		if (strcasecmp(r->headers[i].name, name) == 0)
			n++;
	return n;
}

/* A coded refusal on the sandbox host. */
static void
refused(const char *host, const char *path, long status, const char *code)
{
	struct harness_resp *r = harness_get(host, path);

	harness_assert_coded(r, status, code);
	harness_resp_free(r);
}

/* GET /v1/bills/{id}/statement as t: a coded refusal. */
static void
url_refused(const struct tenant *t, const char *bill, long status, const char *code)
{
	struct harness_resp *r = sbx(t, "GET", harness_fmt("/v1/bills/%s/statement", bill));

	harness_assert_coded(r, status, code);
	harness_resp_free(r);
}

/* ------------------------------------------------------------------ */

static void
stack_up(void)
{
	struct harness_opts o;

	harness_opts_defaults(&o);
	/* the sandbox's dates as its header documents them for that day */
	o.extra_config = "sandbox_basis_day = 2026-10-15\n";
	harness_fixture_start(&o);
	devacct_legal();
	devacct_new(&dev, "stmt");
	tenant_new(&ta);
	tenant_new(&tb);
}

static void
stack_down(void)
{
	tenant_free(&ta);
	tenant_free(&tb);
	harness_fixture_stop();
}

/*
 * The retrieval stored one PDF per statement (0640, under <aa>/), recorded
 * its hash, moved no seq; the signed URL through nginx gives that file.
 */
START_TEST(download_streams_the_file)
{
	char *bill = bill_of(&ta, "2026-09"), *sha = sha_of(bill), *path, *file, *number;
	const char *doc;
	struct harness_resp *r;
	struct stat st;

	ck_assert_ptr_nonnull(sha);
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM bills WHERE link_id = $1"
	    " AND has_statement AND statement_sha256 ~ '^[0-9a-f]{64}$'", ta.link, NULL), 12);
	/* recording the hash took no number: 12 bills, 12 seqs, none changed */
	ck_assert_int_eq(devacct_sql_int("SELECT last_seq FROM bill_seq WHERE link_id = $1",
	    ta.link, NULL), 12);
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM bills WHERE link_id = $1"
	    " AND changed_seq <> created_seq", ta.link, NULL), 0);
	/* the same statement of two clients: the same bytes, one file */
	ck_assert_int_eq(devacct_sql_int("SELECT count(DISTINCT statement_sha256) FROM bills"
	    " WHERE link_id IN ($1, $2)", ta.link, tb.link), 12);
	doc = harness_fmt("%s/data/statements/%.2s/%s.pdf", harness_dir(), sha, sha);
	ck_assert_int_eq(stat(doc, &st), 0);
	ck_assert_int_eq(st.st_mode & 07777, 0640);
	file = harness_slurp(doc);
	ck_assert_ptr_nonnull(file);

	path = statement_path(&ta, bill);
	r = harness_get("sandbox", path);
	ck_assert_msg(r->status == 200, "status %ld: %s", r->status, r->body);
	ck_assert_pstr_eq(harness_header(r, "Content-Type"), "application/pdf");
	number = devacct_sql_value("SELECT bill_number FROM bills WHERE id = $1", bill, NULL);
	ck_assert_pstr_eq(harness_header(r, "Content-Disposition"),
	    harness_fmt("attachment; filename=\"%s.pdf\"", number));
	ck_assert_pstr_eq(harness_header(r, "Cache-Control"), "private, no-store");
	ck_assert_uint_eq(header_count(r, "Cache-Control"), 1);
	ck_assert_uint_eq(header_count(r, "Content-Type"), 1);
	ck_assert_pstr_eq(harness_header(r, "X-Content-Type-Options"), "nosniff");
	ck_assert_ptr_nonnull(harness_header(r, "X-Request-Id"));
	/* nginx consumed it: the internal path never reaches the client */
	ck_assert_ptr_null(harness_header(r, "X-Accel-Redirect"));
	ck_assert_uint_gt(r->body_len, 5);
	ck_assert_int_eq(memcmp(r->body, "%PDF-", 5), 0);
	ck_assert_uint_eq(r->body_len, (size_t)st.st_size);
	ck_assert_int_eq(memcmp(r->body, file, r->body_len), 0);
	ck_assert_ptr_nonnull(memmem(r->body, r->body_len, number, strlen(number)));
	ck_assert_ptr_nonnull(memmem(r->body, r->body_len, "Sandbox", 7));
	harness_resp_free(r);

	/* the URL works until it expires, more than once */
	r = harness_get("sandbox", path);
	ck_assert_int_eq(r->status, 200);
	ck_assert_uint_eq(r->body_len, (size_t)st.st_size);
	harness_resp_free(r);
	/* a refresh renders the same bytes: same hash, the file not rewritten */
	{
		struct harness_resp *a = sbx(&ta, "POST",
		    harness_fmt("/v1/sandbox/links/%s/advance", ta.link));
		struct stat st2;
		char *sha2;

		harness_expect(a, 202);
		harness_resp_free(a);
		ck_assert_msg(harness_jobs_wait_idle(IDLE_MS) == 0, "%s", harness_error());
		sha2 = sha_of(bill);
		ck_assert_pstr_eq(sha2, sha);
		ck_assert_int_eq(stat(doc, &st2), 0);
		/* the same file (its mtime made young again: bills_docs_sweep) */
		ck_assert(st.st_ino == st2.st_ino && st.st_size == st2.st_size);
		free(sha2);
	}
	free(number);
	free(file);
	free(path);
	free(sha);
	free(bill);
}
END_TEST

/* Forged, tampered, borrowed and expired URLs; nginx's internal location. */
START_TEST(signature_refusals)
{
	char *bill = bill_of(&ta, "2026-08"), *other = bill_of(&ta, "2026-07");
	char *path = statement_path(&ta, bill), *opath = statement_path(&ta, other);
	char *sha = sha_of(bill), *sig, *tampered;
	const char *q = strchr(path, '?'), *oq = strchr(opath, '?');
	long long expires = strtoll(strstr(path, "expires=") + 8, NULL, 10);
	size_t n;

	/* the genuine URL is fine on its host, refused on the other one */
	refused("api", path, 403, "INVALID_SIGNATURE");
	/* one character of the signature changed */
	tampered = strdup(path);
	n = strlen(tampered);
	tampered[n - 1] = tampered[n - 1] == 'A' ? 'B' : 'A';
	refused("sandbox", tampered, 403, "INVALID_SIGNATURE");
	/* the expiry moved: the signature no longer covers it */
	refused("sandbox", harness_fmt("/v1/statements/%s?expires=%lld%s", bill, expires + 3600,
	    strstr(path, "&sig=")), 403, "INVALID_SIGNATURE");
	/* another bill's expiry and signature on this bill */
	refused("sandbox", harness_fmt("/v1/statements/%s%s", bill, oq), 403, "INVALID_SIGNATURE");
	refused("sandbox", harness_fmt("/v1/statements/%s%s", other, q), 403, "INVALID_SIGNATURE");
	/* the other tenant's bill with this tenant's signature */
	{
		char *b2 = bill_of(&tb, "2026-08");

		refused("sandbox", harness_fmt("/v1/statements/%s%s", b2, q), 403,
		    "INVALID_SIGNATURE");
		free(b2);
	}
	/* unknown and malformed bill ids say nothing more */
	refused("sandbox", harness_fmt("/v1/statements/bill_01900000-0000-7000-8000-00000000dead%s",
	    q), 403, "INVALID_SIGNATURE");
	refused("sandbox", harness_fmt("/v1/statements/nope%s", q), 403, "INVALID_SIGNATURE");
	/* no signature, or a parameter it does not know: invalid input */
	refused("sandbox", harness_fmt("/v1/statements/%s?expires=%lld", bill, expires), 400,
	    "VALIDATION_ERROR");
	refused("sandbox", harness_fmt("%s&x=1", path), 400, "VALIDATION_ERROR");

	/* a genuine signature whose time is over: URL_EXPIRED */
	sig = sign(bill, ta.client, "sandbox", (long long)time(NULL) - 1);
	refused("sandbox", harness_fmt("/v1/statements/%s?expires=%lld&sig=%s", bill,
	    (long long)time(NULL) - 1, sig), 403, "URL_EXPIRED");
	free(sig);
	/* and the test's own signature of a live URL is accepted: the MAC is
	 * exactly the documented one */
	sig = sign(bill, ta.client, "sandbox", expires);
	ck_assert_pstr_eq(strstr(path, "&sig=") + 5, sig);
	free(sig);

	/* the internal location is not reachable from outside, on any host */
	refused("sandbox", harness_fmt("/_statements/%.2s/%s.pdf", sha, sha), 404, "NOT_FOUND");
	refused("api", harness_fmt("/_statements/%.2s/%s.pdf", sha, sha), 404, "NOT_FOUND");
	refused("link", harness_fmt("/_statements/%.2s/%s.pdf", sha, sha), 404, "NOT_FOUND");
	refused("sandbox", "/_statements/", 404, "NOT_FOUND");

	free(tampered);
	free(sha);
	free(path);
	free(opath);
	free(other);
	free(bill);
}
END_TEST

/* A bill without a document: 404 STATEMENT_NOT_FOUND, and a URL made
 * before the document went away answers the same. */
START_TEST(no_document)
{
	char *bill = bill_of(&ta, "2026-06"), *bill2 = bill_of(&ta, "2026-05"), *path;

	path = statement_path(&ta, bill);
	devacct_sql_exec("UPDATE bills SET has_statement = false WHERE id = $1", bill, NULL);
	url_refused(&ta, bill, 404, "STATEMENT_NOT_FOUND");
	refused("sandbox", path, 404, "STATEMENT_NOT_FOUND");
	/* a document promised but never stored */
	devacct_sql_exec("UPDATE bills SET statement_sha256 = NULL WHERE id = $1", bill2, NULL);
	url_refused(&ta, bill2, 404, "STATEMENT_NOT_FOUND");
	free(path);
	free(bill);
	free(bill2);
}
END_TEST

/* Another client's, a deleted, an unknown bill: 404 BILL_NOT_FOUND; no
 * key: 401. */
START_TEST(bill_not_found)
{
	char *bill = bill_of(&ta, "2026-04"), *gone = bill_of(&ta, "2026-03"), *path;
	struct tenant anon = { NULL, NULL, NULL };
	struct harness_resp *r;

	url_refused(&tb, bill, 404, "BILL_NOT_FOUND");
	path = statement_path(&ta, gone);
	devacct_sql_exec("UPDATE bills SET deleted_at = now() WHERE id = $1", gone, NULL);
	url_refused(&ta, gone, 404, "BILL_NOT_FOUND");
	/* its URL, signed before the delete */
	refused("sandbox", path, 404, "STATEMENT_NOT_FOUND");
	url_refused(&ta, "bill_01900000-0000-7000-8000-00000000dead", 404, "BILL_NOT_FOUND");
	url_refused(&ta, "x'%20OR%201=1", 404, "BILL_NOT_FOUND");
	r = sbx(&anon, "GET", harness_fmt("/v1/bills/%s/statement", bill));
	harness_expect(r, 401);
	harness_resp_free(r);
	free(path);
	free(bill);
	free(gone);
}
END_TEST

/* A file of the store, aged: mtime days ago. */
static void
age(const char *path, int days)
{
	struct timespec t[2] = { { time(NULL) - days * 86400, 0 },
		{ time(NULL) - days * 86400, 0 } };

	ck_assert_msg(utimensat(AT_FDCWD, path, t, 0) == 0, "utimensat %s", path);
}

static void
made(const char *path, int days)
{
	FILE *f = fopen(path, "w");

	ck_assert_msg(f != NULL, "fopen %s", path);
	fputs("%PDF-1.4\n%%EOF\n", f);
	ck_assert_int_eq(fclose(f), 0);
	age(path, days);
}

static int
exists(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0;
}

/*
 * bdsctl jobs sweeps the store once a day: a document no row names and a
 * dead writer's temp file, each older than a day, go; a referenced one
 * (of a live or a deleted bill), a young orphan and a file not the store's
 * stay. Within the day a second run walks nothing.
 */
START_TEST(sweep_removes_orphans)
{
	const char *jobs[] = { "jobs", NULL };
	const char *top = harness_fmt("%s/data/statements", harness_dir());
	char *bill = bill_of(&ta, "2026-08"), *sha = sha_of(bill);
	char *ref, *old, *young, *tmp, *other;

	ck_assert_ptr_nonnull(sha);
	ref = strdup(harness_fmt("%s/%.2s/%s.pdf", top, sha, sha));
	old = strdup(harness_fmt("%s/%.2s/%.2s%062d.pdf", top, sha, sha, 1));
	young = strdup(harness_fmt("%s/%.2s/%.2s%062d.pdf", top, sha, sha, 2));
	tmp = strdup(harness_fmt("%s/%.2s/.tmp-0123456789abcdef", top, sha));
	other = strdup(harness_fmt("%s/%.2s/notes.txt", top, sha));
	age(ref, 3);
	made(old, 3);
	made(young, 0);
	made(tmp, 3);
	made(other, 3);
	/* a deleted bill keeps its document (a tombstone still names it) */
	devacct_sql_exec("UPDATE bills SET deleted_at = now() WHERE id = $1", bill, NULL);
	unlink(harness_fmt("%s/.swept", top));

	ck_assert_int_eq(harness_bdsctl(jobs), 0);
	ck_assert_msg(exists(ref), "a referenced document was removed");
	ck_assert_msg(!exists(old), "an old orphan stayed");
	ck_assert_msg(!exists(tmp), "an old temp file stayed");
	ck_assert_msg(exists(young), "a young orphan was removed");
	ck_assert_msg(exists(other), "a file not the store's was removed");
	ck_assert(exists(harness_fmt("%s/.swept", top)));

	/* within the day: nothing walked */
	age(young, 3);
	ck_assert_int_eq(harness_bdsctl(jobs), 0);
	ck_assert(exists(young));
	/* a day later: it goes */
	age(harness_fmt("%s/.swept", top), 2);
	ck_assert_int_eq(harness_bdsctl(jobs), 0);
	ck_assert(!exists(young));
	ck_assert(exists(ref));
	unlink(other);
	free(ref);
	free(old);
	free(young);
	free(tmp);
	free(other);
	free(sha);
	free(bill);
}
END_TEST

static Suite *
statement_suite(void)
{
	Suite *s = suite_create("e2e_bills_statement");
	TCase *tc = tcase_create("statement");

	tcase_add_unchecked_fixture(tc, stack_up, stack_down);
	tcase_add_checked_fixture(tc, harness_fixture_recover, NULL);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, download_streams_the_file);
	tcase_add_test(tc, signature_refusals);
	tcase_add_test(tc, no_document);
	tcase_add_test(tc, bill_not_found);
	tcase_add_test(tc, sweep_removes_orphans);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return harness_run_suite(statement_suite());
}
