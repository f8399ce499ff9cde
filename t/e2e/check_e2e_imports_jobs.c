/*
 * Bill imports on the jobs side, end to end: documents uploaded through
 * nginx (the signed PUT), complete_upload, and bds-jobs running the
 * extraction job with the real bds-extract (app/bds-extract of the build).
 *
 * Every hostile file of t/imports/hostile.py ends REJECTED with its reason,
 * and the runner goes on: the same bds-jobs process extracts a good
 * document after them. An extractor that hangs is killed at the wall-clock
 * limit (processing_limit_exceeded) while the one runner process (one
 * worker) completes a sandbox retrieval meanwhile; one that crashes or
 * answers garbage is extraction_failed. The same document twice is
 * POSSIBLE_DUPLICATE of the first; another file of the same figures too,
 * and of the bill the first became once confirmed. The sweeps (`bdsctl jobs`): an import
 * past expires_at goes EXPIRED with bill_import.updated at the client's
 * receiver, and the documents of expired and cancelled imports are
 * removed; a rejected import's document stays 7 days.
 *
 * The extractor is reached through a wrapper script the suite writes
 * (extract_program): it runs app/bds-extract unless its mode file says to
 * hang, crash or answer garbage. PDF-only portal statements made imports
 * are in check_e2e_portal (unstructured_statement).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <check.h>
#include <json-c/json.h>

#include "devacct.h"
#include "harness.h"
#include "receiver.h"

#define EXTRACT_KIND	"imports.extract"
#define WAIT_MS		90000
#define TIMEOUT_S	"20"	/* extract_timeout_s of the suite */

static struct devacct dev;
static char wrapdir[64];	/* the wrapper and its mode file */
static char casedir[512];	/* hostile.py's output */

/* The suite's client and its sandbox key. */
static struct {
	char	*client, *key;
} ta;

/* ------------------------------------------------------------------ */
/* The stack                                                           */

static void
write_text(const char *path, const char *text, mode_t mode)
{
	FILE *f = fopen(path, "w");

	ck_assert_msg(f != NULL, "%s: %s", path, strerror(errno));
	fputs(text, f);
	ck_assert_int_eq(fclose(f), 0);
	ck_assert_int_eq(chmod(path, mode), 0);
}

/* The extractor's mode: "" (the real one), sleep, crash, garbage. */
static void
mode(const char *m)
{
	write_text(harness_fmt("%s/mode", wrapdir), m, 0644);
}

static void
stack_up(void)
{
	const char *build = getenv("BDS_BUILDDIR") ? getenv("BDS_BUILDDIR") : ".";
	const char *src = getenv("BDS_SRCDIR") ? getenv("BDS_SRCDIR") : ".";
	char abuild[512], asrc[512], *extra;
	struct harness_opts o;

	ck_assert_ptr_nonnull(realpath(build, abuild));
	ck_assert_ptr_nonnull(realpath(src, asrc));
	snprintf(wrapdir, sizeof(wrapdir), "/tmp/bds-e2e-extract-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(wrapdir));
	ck_assert_int_eq(chmod(wrapdir, 0755), 0);
	write_text(harness_fmt("%s/extract", wrapdir), harness_fmt(
	    "#!/bin/sh\n"
	    "case \"$(cat %s/mode 2>/dev/null)\" in\n"
	    "sleep) exec sleep 600 ;;\n"
	    "crash) kill -SEGV $$ ;;\n"
	    "garbage) echo 'no JSON here'; exit 0 ;;\n"
	    "esac\n"
	    "exec %s/app/bds-extract \"$@\"\n", wrapdir, abuild), 0755);
	mode("");
	harness_opts_defaults(&o);
	/* one runner process: what it does meanwhile shows it never blocks */
	extra = strdup(harness_fmt("jobs_workers = 1\njobs_retry_schedule = 1,1,1\n"
	    "sandbox_basis_day = 2026-10-15\nextract_program = %s/extract\n"
	    "extract_timeout_s = " TIMEOUT_S "\n", wrapdir));
	o.extra_config = extra;
	harness_fixture_start(&o);
	free(extra);
	snprintf(casedir, sizeof(casedir), "%s/hostile", harness_dir());
	ck_assert_int_eq(system(harness_fmt("/usr/bin/python3 %s/t/imports/hostile.py %s",
	    asrc, casedir)), 0);
	devacct_legal();
	devacct_new(&dev, "impjobs");
	ta.client = devacct_client_new(&dev);
	ta.key = devacct_key_new(&dev, ta.client, "sandbox");
}

static void
stack_down(void)
{
	free(ta.client);
	free(ta.key);
	harness_fixture_stop();
	(void)unlink(harness_fmt("%s/extract", wrapdir));
	(void)unlink(harness_fmt("%s/mode", wrapdir));
	(void)rmdir(wrapdir);
}

/* ------------------------------------------------------------------ */
/* Imports through the API                                             */

static struct harness_resp *
call(const char *method, const char *path, const char *user, const char *body)
{
	const char *extra[] = { harness_idem_header(), NULL, NULL };

	if (user != NULL)
		extra[1] = harness_fmt("x-client-user-id: %s", user);
	return devacct_call(method, "sandbox", path, devacct_bearer(ta.key), body, extra);
}

static unsigned char *
slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	unsigned char *buf;
	long n;

	ck_assert_msg(f != NULL, "%s: %s", path, strerror(errno));
	ck_assert_int_eq(fseek(f, 0, SEEK_END), 0);
	n = ftell(f);
	ck_assert_int_ge(n, 0);
	rewind(f);
	buf = malloc((size_t)n + 1);
	ck_assert_uint_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	*len = (size_t)n;
	return buf;
}

/* A case file of hostile.py uploaded for user as type and completed: the
 * import's id (malloc'ed), its extraction queued. */
static char *
upload(const char *user, const char *file, const char *type)
{
	struct harness_resp *r;
	const char *url, *path;
	unsigned char *doc;
	size_t len;
	char *id;

	doc = slurp(harness_fmt("%s/%s", casedir, file), &len);
	r = call("POST", "/v1/bill_imports", NULL, harness_fmt("{\"client_user_id\":\"%s\","
	    "\"file_name\":\"%s\",\"content_type\":\"%s\",\"size_bytes\":%zu}", user, file,
	    type, len));
	harness_expect(r, 201);
	id = strdup(devacct_str(r, "id"));
	ck_assert_str_eq(devacct_str(r, "status"), "AWAITING_UPLOAD");
	ck_assert_ptr_nonnull(url = devacct_str(r, "upload.url"));
	/* the URL is on the host the call came to: its path */
	ck_assert_ptr_nonnull(path = strstr(url, "://"));
	ck_assert_ptr_nonnull(path = strchr(path + 3, '/'));
	{
		const char *h[] = { harness_fmt("Content-Type: %s", type), NULL };
		struct harness_resp *p = harness_request("PUT", "sandbox", path, h, doc, len);

		ck_assert_msg(p->status == 200, "PUT %s: %ld %s", file, p->status, p->body);
		harness_resp_free(p);
	}
	harness_resp_free(r);
	free(doc);
	r = call("POST", harness_fmt("/v1/bill_imports/%s/complete_upload", id), user,
	    harness_fmt("{\"client_user_id\":\"%s\"}", user));
	harness_expect(r, 202);
	harness_resp_free(r);
	return id;
}

/* The import's column (malloc'ed; NULL for SQL NULL). */
static char *
col(const char *id, const char *column)
{
	return devacct_sql_value(harness_fmt("SELECT %s::text FROM bill_imports WHERE id = $1",
	    column), id, NULL);
}

static void
assert_col(const char *id, const char *column, const char *want)
{
	char *v = col(id, column);

	ck_assert_msg(v != NULL && strcmp(v, want) == 0, "%s %s: %s, want %s", id, column,
	    v ? v : "NULL", want);
	free(v);
}

/* Wait until the import's extraction job ended; its status (malloc'ed). */
static char *
extracted(const char *id)
{
	ck_assert_msg(harness_jobs_wait_settled(EXTRACT_KIND, id, WAIT_MS) == 0, "%s: %s", id,
	    harness_error());
	return col(id, "status");
}

/* GET the import as user: the response (200). */
static struct harness_resp *
get_import(const char *id, const char *user)
{
	struct harness_resp *r = call("GET", harness_fmt("/v1/bill_imports/%s", id), user, NULL);

	harness_expect(r, 200);
	return r;
}

/* The good document for user: READY_TO_COMMIT or NEEDS_REVIEW with a draft. */
static char *
good_import(const char *user)
{
	char *id = upload(user, "good.pdf", "application/pdf"), *st = extracted(id);
	struct harness_resp *r;

	ck_assert_msg(strcmp(st, "READY_TO_COMMIT") == 0 || strcmp(st, "NEEDS_REVIEW") == 0,
	    "good.pdf: %s", st);
	r = get_import(id, user);
	ck_assert_str_eq(devacct_str(r, "status"), st);
	ck_assert_ptr_nonnull(devacct_json(r, "draft.total_amount"));
	ck_assert_ptr_nonnull(devacct_json(r, "draft.payee_name"));
	ck_assert_int_ge(devacct_int(r, "draft_version"), 1);
	harness_resp_free(r);
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM bill_imports WHERE id = $1"
	    " AND document_sha256 IS NOT NULL AND extraction->>'outcome' = 'extracted'", id,
	    NULL), 1);
	free(st);
	return id;
}

/* ------------------------------------------------------------------ */

/*
 * Every hostile case that fits the upload cap ends REJECTED with its
 * reason, no copy of it in the statements store; the runner process is the
 * same afterwards and extracts a good document.
 */
START_TEST(hostile_files_rejected)
{
	struct json_object *cases, *c, *v;
	pid_t runner = harness_jobs_pid();
	char *wrong = NULL;
	int n = 0;

	ck_assert_int_gt(runner, 0);
	cases = json_object_from_file(harness_fmt("%s/cases.json", casedir));
	ck_assert_ptr_nonnull(cases);
	json_object_object_foreach(cases, file, kase) {
		const char *type, *reason;
		char *id, *st, *user, *got;

		c = kase;
		if (!json_object_object_get_ex(c, "upload", &v) || !json_object_get_boolean(v) ||
		    !json_object_object_get_ex(c, "rejection_reason", &v) || v == NULL)
			continue;
		reason = json_object_get_string(v);
		ck_assert(json_object_object_get_ex(c, "type", &v));
		type = json_object_get_string(v);
		user = strdup(harness_fmt("hostile-%d", n++));
		id = upload(user, file, type);
		st = extracted(id);
		got = col(id, "rejection_reason");
		/* every case is looked at before the test fails */
		if (strcmp(st, "REJECTED") != 0 || got == NULL || strcmp(got, reason) != 0) {
			char *w = strdup(harness_fmt("%s%s %s %s (want REJECTED %s); ",
			    wrong != NULL ? wrong : "", file, st, got != NULL ? got : "-", reason));

			free(wrong);
			wrong = w;
		}
		free(got);
		free(st);
		/* a rejected document is never copied into the statements store */
		st = col(id, "document_sha256");
		ck_assert_ptr_nonnull(st);
		ck_assert_int_ne(access(harness_fmt("%s/data/statements/%.2s/%s.pdf", harness_dir(),
		    st, st), F_OK), 0);
		free(st);
		free(id);
		free(user);
	}
	json_object_put(cases);
	ck_assert_msg(wrong == NULL, "%s", wrong);
	ck_assert_int_ge(n, 10);
	ck_assert_int_eq(harness_jobs_pid(), runner);
	free(good_import("after-hostile"));
	ck_assert_int_eq(harness_jobs_pid(), runner);
}
END_TEST

/*
 * An extractor that hangs is killed at extract_timeout_s: REJECTED
 * processing_limit_exceeded. Meanwhile the one runner process completes a
 * sandbox link's retrieval. One that dies by a signal, or answers what is
 * not JSON: extraction_failed.
 */
START_TEST(extractor_limits)
{
	static const struct { const char *mode, *reason; } cases[] = {
		{ "crash", "extraction_failed" },
		{ "garbage", "extraction_failed" },
	};
	char *id, *link, *st;

	mode("sleep");
	id = upload("limits-0", "good.pdf", "application/pdf");
	/* the extraction has started: its child is there */
	link = devacct_sandbox_link(ta.key, "limits-link", "user_good");
	ck_assert_msg(harness_jobs_wait_settled("retrieval", link, WAIT_MS) == 0, "%s",
	    harness_error());
	ck_assert_int_gt(devacct_sql_int("SELECT count(*) FROM bills WHERE link_id = $1", link,
	    NULL), 0);
	assert_col(id, "status", "PROCESSING");
	st = extracted(id);
	ck_assert_str_eq(st, "REJECTED");
	assert_col(id, "rejection_reason", "processing_limit_exceeded");
	free(st);
	free(id);
	free(link);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		mode(cases[i].mode);
		id = upload(harness_fmt("limits-%zu", i + 1), "good.pdf", "application/pdf");
		st = extracted(id);
		ck_assert_msg(strcmp(st, "REJECTED") == 0, "%s: %s", cases[i].mode, st);
		assert_col(id, "rejection_reason", cases[i].reason);
		free(st);
		free(id);
	}
	mode("");
	free(good_import("limits-after"));
}
END_TEST

/* The same document again for the same end user: POSSIBLE_DUPLICATE of the
 * first; for another end user, not. */
START_TEST(same_document_twice)
{
	char *first = good_import("dupe-a"), *again, *other, *st;
	struct harness_resp *r;

	again = upload("dupe-a", "good.pdf", "application/pdf");
	st = extracted(again);
	ck_assert_str_eq(st, "POSSIBLE_DUPLICATE");
	free(st);
	assert_col(again, "duplicate_of", first);
	r = get_import(again, "dupe-a");
	ck_assert_str_eq(devacct_str(r, "duplicate_of"), first);
	ck_assert_ptr_nonnull(devacct_json(r, "draft.total_amount"));
	harness_resp_free(r);
	other = good_import("dupe-b");
	free(first);
	free(again);
	free(other);
}
END_TEST

/*
 * Another file with the same figures (payee, account, total, due date) for
 * the same end user: POSSIBLE_DUPLICATE of the first import; once that one
 * is confirmed, of its bill (the bills module's answer: its biller name,
 * account mask, total and due date).
 */
START_TEST(same_figures_other_file)
{
	char *first = good_import("figures-a"), *again, *third, *bill, *st;
	unsigned char *doc;
	struct harness_resp *r;
	size_t len;
	FILE *f;

	/* good.pdf with one byte of its binary comment changed: another file */
	doc = slurp(harness_fmt("%s/good.pdf", casedir), &len);
	ck_assert_uint_gt(len, 16);
	ck_assert_int_eq(memcmp(doc, "%PDF-1.", 7), 0);
	ck_assert_int_eq(doc[9], '%');
	doc[13] ^= 1;
	ck_assert_ptr_nonnull(f = fopen(harness_fmt("%s/good-again.pdf", casedir), "wb"));
	ck_assert_uint_eq(fwrite(doc, 1, len, f), len);
	ck_assert_int_eq(fclose(f), 0);
	free(doc);
	again = upload("figures-a", "good-again.pdf", "application/pdf");
	st = extracted(again);
	ck_assert_str_eq(st, "POSSIBLE_DUPLICATE");
	free(st);
	assert_col(again, "duplicate_of", first);
	/* the first confirmed: a bill; the second cancelled */
	r = call("POST", harness_fmt("/v1/bill_imports/%s/confirm", first), "figures-a",
	    "{\"final_changes\":{}}");
	harness_expect(r, 200);
	bill = strdup(devacct_str(r, "bill.id"));
	harness_resp_free(r);
	r = call("DELETE", harness_fmt("/v1/bill_imports/%s", again), "figures-a", NULL);
	harness_expect(r, 200);
	harness_resp_free(r);
	third = upload("figures-a", "good-again.pdf", "application/pdf");
	st = extracted(third);
	ck_assert_str_eq(st, "POSSIBLE_DUPLICATE");
	free(st);
	assert_col(third, "duplicate_of", bill);
	free(first);
	free(again);
	free(third);
	free(bill);
}
END_TEST

/* `bdsctl jobs`: the sweeps */
static void
sweep(void)
{
	const char *args[] = { "jobs", NULL };

	ck_assert_int_eq(harness_bdsctl(args), 0);
}

/*
 * An uncommitted import past its expires_at: EXPIRED by the sweep,
 * lifecycle_version + 1, bill_import.updated at the receiver; its uploaded
 * document removed in the same run. Another one not yet due stays.
 */
START_TEST(expiry_and_document_removal)
{
	char *id = good_import("expiry-a"), *keep = good_import("expiry-b"), *path, *v;
	struct receiver *rc = receiver_start(NULL);
	const char *body;
	long long version;

	/* the receiver runs in this test's process: a webhook endpoint of its own */
	ck_assert_msg(rc != NULL, "receiver: %s", receiver_error());
	devacct_subscribe(ta.key, rc);
	path = col(id, "document_path");
	ck_assert_ptr_nonnull(path);
	ck_assert_int_eq(access(path, F_OK), 0);
	version = devacct_sql_int("SELECT lifecycle_version FROM bill_imports WHERE id = $1", id,
	    NULL);
	devacct_sql_exec("UPDATE bill_imports SET expires_at = now() - interval '1 minute'"
	    " WHERE id = $1", id, NULL);
	sweep();
	assert_col(id, "status", "EXPIRED");
	ck_assert_int_eq(devacct_sql_int("SELECT lifecycle_version FROM bill_imports"
	    " WHERE id = $1", id, NULL), version + 1);
	v = col(keep, "status");
	ck_assert_str_ne(v, "EXPIRED");
	free(v);
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM events WHERE client_id = $1"
	    " AND type = 'bill_import.updated' AND data->'object'->>'bill_import_id' = $2"
	    " AND data->'object'->>'status' = 'EXPIRED'", ta.client, id), 1);
	body = devacct_received(rc, "bill_import.updated", "\"status\":\"EXPIRED\"");
	ck_assert_ptr_nonnull(body);
	ck_assert_ptr_nonnull(strstr(body, id));
	receiver_stop(rc);
	/* the document is gone, and recorded so */
	ck_assert_int_ne(access(path, F_OK), 0);
	v = col(id, "document_deleted_at");
	ck_assert_ptr_nonnull(v);
	free(v);
	/* a second run finds nothing more of it */
	sweep();
	assert_col(id, "lifecycle_version", harness_fmt("%lld", version + 1));
	free(path);
	free(id);
	free(keep);
}
END_TEST

/*
 * A cancelled import's document is removed by the sweep; a rejected one's
 * stays for 7 days after its rejection, then goes too.
 */
START_TEST(cancelled_and_rejected_documents)
{
	char *id = good_import("cancel-a"), *rej, *path, *rpath, *st;
	struct harness_resp *r;

	path = col(id, "document_path");
	r = call("DELETE", harness_fmt("/v1/bill_imports/%s", id), "cancel-a", NULL);
	harness_expect(r, 200);
	ck_assert_str_eq(devacct_str(r, "status"), "CANCELLED");
	harness_resp_free(r);
	ck_assert_int_eq(access(path, F_OK), 0);
	rej = upload("cancel-b", "blank.pdf", "application/pdf");
	st = extracted(rej);
	ck_assert_str_eq(st, "REJECTED");
	free(st);
	rpath = col(rej, "document_path");
	sweep();
	ck_assert_int_ne(access(path, F_OK), 0);
	ck_assert_int_eq(access(rpath, F_OK), 0);
	devacct_sql_exec("UPDATE bill_imports SET updated_at = now() - interval '8 days'"
	    " WHERE id = $1", rej, NULL);
	sweep();
	ck_assert_int_ne(access(rpath, F_OK), 0);
	assert_col(rej, "status", "REJECTED");
	free(path);
	free(rpath);
	free(id);
	free(rej);
}
END_TEST

/* BDS_E2E_ONLY=name runs that test alone (while working on one). */
static int
wanted(const char *name)
{
	const char *only = getenv("BDS_E2E_ONLY");

	return only == NULL || *only == '\0' || strcmp(only, name) == 0;
}
#define ADD(tc, t) do { if (wanted(#t)) tcase_add_test((tc), t); } while (0)

static Suite *
imports_jobs_suite(void)
{
	Suite *s = suite_create("e2e_imports_jobs");
	TCase *tc = tcase_create("imports_jobs");

	tcase_add_unchecked_fixture(tc, stack_up, stack_down);
	tcase_add_checked_fixture(tc, harness_fixture_recover, NULL);
	tcase_set_timeout(tc, 300);
	ADD(tc, hostile_files_rejected);
	ADD(tc, extractor_limits);
	ADD(tc, same_document_twice);
	ADD(tc, same_figures_other_file);
	ADD(tc, expiry_and_document_removal);
	ADD(tc, cancelled_and_rejected_documents);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return harness_run_suite(imports_jobs_suite());
}
