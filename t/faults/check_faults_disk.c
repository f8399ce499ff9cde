/*
 * A full documents disk: data_dir is a small tmpfs (harness option
 * data_disk_bytes) that a test fills with a file of its own, then frees.
 * Every writer into data_dir is driven while it is full:
 *
 *   - a bill import upload, which nginx writes (client_body_temp_path
 *     <data_dir>/imports): 507 INSUFFICIENT_STORAGE in the envelope with
 *     Retry-After, no file left, the import still without a document; the
 *     same URL takes the document once there is room;
 *   - a sandbox link's retrieval in bds-jobs, which stores each statement's
 *     PDF under <data_dir>/statements: the job fails retryably, leaves no
 *     file, no bill; with room again its retry makes the same bills a link
 *     retrieved with room makes, each naming a stored file, the job done
 *     once;
 *   - an import's extraction in bds-jobs, which stores a copy of the
 *     document in the statements store: retried, the import PROCESSING
 *     until its retry with room extracts it once;
 *   - a biller's logo fetch in bds-jobs (<data_dir>/logos): the same.
 *
 * bds-jobs is stopped between the failed attempt and the freed disk, so
 * what the failure left is looked at with nothing running, and the retry
 * is the one due when it starts again.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include <check.h>

#include "e2e/devacct.h"
#include "e2e/harness.h"
#include "e2e/receiver.h"

#define DISK_BYTES	(16LL * 1024 * 1024)
#define WAIT_MS		60000
#define FILLER		"filler"

static struct devacct dev;
static char *client, *key;

/* ---- the disk ---- */

/* Fill data_dir's disk with FILLER until ENOSPC, then give back `leave`
 * bytes of it: what is free after. */
static long long
disk_fill(long long leave)
{
	static char chunk[65536];
	const char *path = harness_fmt("%s/" FILLER, harness_data_dir());
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	long long size = 0;
	struct statvfs vf;
	ssize_t n;

	ck_assert_msg(fd >= 0, "%s: %s", path, strerror(errno));
	memset(chunk, 'f', sizeof(chunk));
	/* bounded: the disk is DISK_BYTES */
	for (int i = 0; i < (int)(DISK_BYTES / (long long)sizeof(chunk)) + 16; i++) {
		if ((n = write(fd, chunk, sizeof(chunk))) <= 0)
			break;
		size += n;
	}
	ck_assert_msg(errno == ENOSPC, "filling %s: %s", path, strerror(errno));
	if (leave > 0)
		ck_assert_int_eq(ftruncate(fd, size > leave ? size - leave : 0), 0);
	ck_assert_int_eq(fsync(fd), 0);
	close(fd);
	ck_assert_int_eq(statvfs(harness_data_dir(), &vf), 0);
	return (long long)vf.f_bavail * (long long)vf.f_frsize;
}

static void
disk_free(void)
{
	const char *path = harness_fmt("%s/" FILLER, harness_data_dir());

	ck_assert_msg(unlink(path) == 0 || errno == ENOENT, "%s: %s", path, strerror(errno));
}

/*
 * Files below dir a failed write could have left: nginx's temp names
 * under imports/ (an upload the app took is bimp_…), the document store's
 * .tmp-… and the logos' ….tmp.<pid>. The filler is not counted.
 */
static int
partial_files(const char *dir, int imports)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	if (d == NULL)
		return 0;
	while ((e = readdir(d)) != NULL) {
		const char *path = harness_fmt("%s/%s", dir, e->d_name);
		struct stat st;

		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0 ||
		    strcmp(e->d_name, FILLER) == 0 || lstat(path, &st) != 0)
			continue;
		if (S_ISDIR(st.st_mode))
			n += partial_files(path, imports || strcmp(e->d_name, "imports") == 0);
		else if ((imports && strncmp(e->d_name, "bimp_", 5) != 0) ||
		    strncmp(e->d_name, ".tmp-", 5) == 0 || strstr(e->d_name, ".tmp.") != NULL) {
			fprintf(stderr, "partial file: %s (%lld bytes)\n", path,
			    (long long)st.st_size);
			n++;
		}
	}
	closedir(d);
	return n;
}

/* The file at path holds exactly len bytes of want. */
static void
assert_file(const char *path, const void *want, size_t len)
{
	char *got = harness_slurp(path);
	struct stat st;

	ck_assert_msg(got != NULL && stat(path, &st) == 0, "%s: %s", path, strerror(errno));
	ck_assert_int_eq((long long)st.st_size, (long long)len);
	ck_assert_int_eq(memcmp(got, want, len), 0);
	free(got);
}

/* Until no partial file is left below data_dir: nginx removes an upload's
 * file when its request ends, which is after the answer was sent (it reads
 * and drops the rest of the body first). 0, or how many are left after
 * 10 s. */
static int
partial_files_gone(void)
{
	long long end = harness_now_ms() + 10000;
	int n;

	while ((n = partial_files(harness_data_dir(), 0)) > 0 && harness_now_ms() < end)
		harness_sleep_ms(50);
	return n;
}

/* ---- jobs ---- */

/* Until the job of kind and subject has failed `attempts` attempts and
 * waits for its retry: its last_error (malloc'ed). bds-jobs is stopped
 * then. */
static char *
job_failed(const char *kind, const char *subject, int attempts)
{
	long long end = harness_now_ms() + WAIT_MS;
	char *err = NULL;

	while (harness_now_ms() < end) {
		if (devacct_sql_int("SELECT COALESCE(max(attempts), 0) FROM jobs WHERE kind = $1"
		    " AND subject_id = $2 AND status = 'pending' AND last_error IS NOT NULL",
		    kind, subject) >= attempts) {
			err = devacct_sql_value("SELECT last_error FROM jobs WHERE kind = $1"
			    " AND subject_id = $2 AND status = 'pending'", kind, subject);
			break;
		}
		harness_sleep_ms(100);
	}
	ck_assert_msg(err != NULL, "no %s job of %s failed %d times within %d ms", kind,
	    subject, attempts, WAIT_MS);
	ck_assert_msg(harness_jobs_stop() == 0, "%s", harness_error());
	/* the attempt that may have been running when it stopped */
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM jobs WHERE kind = $1"
	    " AND subject_id = $2 AND status = 'done'", kind, subject), 0);
	return err;
}

/* bds-jobs again, with room: the job's retry completes, and it is the only
 * job of its kind and subject. */
static void
job_retried(const char *kind, const char *subject)
{
	ck_assert_msg(harness_jobs_start() == 0, "%s", harness_error());
	ck_assert_msg(harness_jobs_wait_settled(kind, subject, WAIT_MS) == 0, "%s",
	    harness_error());
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM jobs WHERE kind = $1"
	    " AND subject_id = $2", kind, subject), 1);
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM jobs WHERE kind = $1"
	    " AND subject_id = $2 AND status = 'done' AND attempts >= 2", kind, subject), 1);
}

/* ---- uploads ---- */

/* A bill import of size bytes: its id and upload path (malloc'ed). */
static void
import_new(long long size, char **id, char **upload)
{
	const char *extra[] = { harness_idem_header(), NULL }, *base, *url;
	struct harness_resp *r = devacct_call("POST", "sandbox", "/v1/bill_imports",
	    devacct_bearer(key), harness_fmt("{\"client_user_id\":\"u-disk\","
	    "\"file_name\":\"bill.pdf\",\"content_type\":\"application/pdf\","
	    "\"size_bytes\":%lld}", size), extra);

	harness_expect(r, 201);
	base = harness_base_url("sandbox");
	url = devacct_str(r, "upload.url");
	ck_assert_msg(url != NULL && strncmp(url, base, strlen(base)) == 0, "%s", url);
	*id = strdup(devacct_str(r, "id"));
	*upload = strdup(url + strlen(base));
	harness_resp_free(r);
}

static struct harness_resp *
upload(const char *path, const void *bytes, size_t len)
{
	const char *h[] = { "Content-Type: application/pdf", NULL };

	return harness_request("PUT", "sandbox", path, h, bytes, len);
}

/*
 * An upload nginx cannot write: 507 INSUFFICIENT_STORAGE with Retry-After,
 * nothing stored, the import still waiting for its document. Once there is
 * room the same URL takes it.
 */
START_TEST(upload_disk_full)
{
	const size_t len = 512 * 1024;
	char *bytes = malloc(len), *id, *path, *doc;
	struct harness_resp *r;
	long long left;

	ck_assert_ptr_nonnull(bytes);
	memcpy(bytes, "%PDF-1.4\n", 9);
	for (size_t i = 9; i < len; i++)
		bytes[i] = (char)('a' + i % 26);
	import_new((long long)len, &id, &path);

	/* room for part of the body: nginx writes some of it, then fails */
	left = disk_fill(128 * 1024);
	ck_assert_msg(left > 0 && left < (long long)len, "%lld bytes free", left);
	r = upload(path, bytes, len);
	harness_assert_coded(r, 507, "INSUFFICIENT_STORAGE");
	ck_assert_pstr_eq(harness_header(r, "Retry-After"), "60");
	harness_resp_free(r);
	ck_assert_int_eq(partial_files_gone(), 0);
	doc = devacct_sql_value("SELECT COALESCE(document_path, '') FROM bill_imports"
	    " WHERE id = $1 AND status = 'AWAITING_UPLOAD'", id, NULL);
	ck_assert_pstr_eq(doc, "");
	free(doc);
	/* a full disk, not one of room for part: the same */
	disk_fill(0);
	r = upload(path, bytes, len);
	harness_assert_coded(r, 507, "INSUFFICIENT_STORAGE");
	harness_resp_free(r);
	ck_assert_int_eq(partial_files_gone(), 0);

	disk_free();
	r = upload(path, bytes, len);
	harness_expect(r, 200);
	harness_resp_free(r);
	doc = devacct_sql_value("SELECT document_path FROM bill_imports WHERE id = $1",
	    id, NULL);
	ck_assert_ptr_nonnull(doc);
	assert_file(doc, bytes, len);
	ck_assert_int_eq(partial_files_gone(), 0);
	free(doc);
	free(id);
	free(path);
	free(bytes);
}
END_TEST

/* ---- statements ---- */

/* The link's bills, and how many of them name a statement whose file is
 * there (not empty). */
static long long
bills_stored(const char *link, long long *with_file)
{
	char *shas = devacct_sql_value("SELECT COALESCE(string_agg(statement_sha256, ','), '')"
	    " FROM bills WHERE link_id = $1 AND statement_sha256 IS NOT NULL", link, NULL);
	char *save = NULL;

	*with_file = 0;
	for (char *s = strtok_r(shas, ",", &save); s != NULL; s = strtok_r(NULL, ",", &save)) {
		struct stat st;

		if (stat(harness_fmt("%s/statements/%.2s/%s.pdf", harness_data_dir(), s, s),
		    &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0)
			(*with_file)++;
	}
	free(shas);
	return devacct_sql_int("SELECT count(*) FROM bills WHERE link_id = $1", link, NULL);
}

/*
 * A retrieval that cannot store its statements fails retryably with
 * nothing written; retried with room, it makes what a retrieval with room
 * makes, once.
 */
START_TEST(statements_disk_full)
{
	char *link, *ref, *err;
	long long bills, files, want, want_files;

	disk_fill(0);
	link = devacct_sandbox_link(key, "u-disk", "user_good");
	/* two failures further apart than degraded_after_s: a biller's would
	 * disconnect the link, the service's own disk must not */
	err = job_failed("retrieval", link, 2);
	ck_assert_msg(strstr(err, "document store") != NULL, "%s", err);
	free(err);
	ck_assert_int_eq(bills_stored(link, &files), 0);
	ck_assert_int_eq(partial_files_gone(), 0);
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM links WHERE id = $1"
	    " AND status = 'ACTIVE'", link, NULL), 1);

	disk_free();
	job_retried("retrieval", link);
	bills = bills_stored(link, &files);
	ck_assert_int_gt(bills, 0);
	ck_assert_int_gt(files, 0);
	ck_assert_int_eq(partial_files_gone(), 0);

	/* what the same user's retrieval with room makes (its documents are
	 * the same: content-addressed, stored once) */
	ref = devacct_sandbox_link(key, "u-disk-ref", "user_good");
	ck_assert_msg(harness_jobs_wait_settled("retrieval", ref, WAIT_MS) == 0, "%s",
	    harness_error());
	want = bills_stored(ref, &want_files);
	ck_assert_int_eq(bills, want);
	ck_assert_int_eq(files, want_files);
	free(link);
	free(ref);
}
END_TEST

/* ---- an import's extraction ---- */

/*
 * An extraction whose copy of the document cannot be stored (the statements
 * store, for the bill it may become): retried, the import still
 * PROCESSING with no copy; with room, extracted once, its copy stored.
 */
START_TEST(extraction_disk_full)
{
	const char *src = getenv("BDS_SRCDIR") ? getenv("BDS_SRCDIR") : ".";
	const char *cases = harness_fmt("%s/hostile", harness_dir());
	const char *user[] = { "x-client-user-id: u-disk", NULL };
	char *bytes, *id, *path, *err, *st, *sha;
	struct harness_resp *r;
	size_t len;

	ck_assert_int_eq(system(harness_fmt("/usr/bin/python3 %s/t/imports/hostile.py %s",
	    src, cases)), 0);
	bytes = harness_slurp(harness_fmt("%s/good.pdf", cases));
	ck_assert_ptr_nonnull(bytes);
	{
		struct stat sb;

		ck_assert_int_eq(stat(harness_fmt("%s/good.pdf", cases), &sb), 0);
		len = (size_t)sb.st_size;
	}
	import_new((long long)len, &id, &path);
	r = upload(path, bytes, len);
	harness_expect(r, 200);
	harness_resp_free(r);

	disk_fill(0);
	r = devacct_call("POST", "sandbox", harness_fmt("/v1/bill_imports/%s/complete_upload",
	    id), devacct_bearer(key), NULL, user);
	harness_expect(r, 202);
	harness_resp_free(r);
	err = job_failed("imports.extract", id, 1);
	ck_assert_msg(strstr(err, "copy") != NULL, "%s", err);
	free(err);
	st = devacct_sql_value("SELECT status || ' ' || (document_sha256 IS NULL)::text"
	    " FROM bill_imports WHERE id = $1", id, NULL);
	ck_assert_pstr_eq(st, "PROCESSING true");
	free(st);
	ck_assert_int_eq(partial_files_gone(), 0);

	disk_free();
	job_retried("imports.extract", id);
	st = devacct_sql_value("SELECT status FROM bill_imports WHERE id = $1", id, NULL);
	ck_assert_msg(st != NULL && (strcmp(st, "READY_TO_COMMIT") == 0 ||
	    strcmp(st, "NEEDS_REVIEW") == 0), "%s", st ? st : "(none)");
	free(st);
	sha = devacct_sql_value("SELECT document_sha256 FROM bill_imports WHERE id = $1", id,
	    NULL);
	ck_assert_ptr_nonnull(sha);
	assert_file(harness_fmt("%s/statements/%.2s/%s.pdf", harness_data_dir(), sha, sha),
	    bytes, len);
	ck_assert_int_eq(partial_files_gone(), 0);
	free(sha);
	free(id);
	free(path);
	free(bytes);
}
END_TEST

/* ---- logos ---- */

#define LOGO_BILLER	"blr_01900000-0000-7000-8000-0000000d15c0"

/* A 1x1 PNG. */
static const unsigned char png_1x1[] = {
	0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48,
	0x44, 0x52, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x02, 0x00, 0x00,
	0x00, 0x90, 0x77, 0x53, 0xde, 0x00, 0x00, 0x00, 0x0c, 0x49, 0x44, 0x41, 0x54, 0x78,
	0x9c, 0x63, 0xf8, 0xcf, 0xc0, 0x00, 0x00, 0x03, 0x01, 0x01, 0x00, 0xc9, 0xfe, 0x92,
	0xef, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4e, 0x44, 0xae, 0x42, 0x60, 0x82
};

/* A logo fetch that cannot write the file: retried, no file, no row; with
 * room, stored once. */
START_TEST(logo_disk_full)
{
	const char *args[] = { "billers", "fetch-logos", LOGO_BILLER, NULL };
	char *path = strdup(harness_fmt("%s/logos/%s.png", harness_data_dir(), LOGO_BILLER));
	struct receiver *rc = receiver_start(NULL);
	char url[256], *err;

	ck_assert_msg(rc != NULL, "%s", receiver_error());
	receiver_set_body(rc, "image/png", png_1x1, sizeof(png_1x1));
	devacct_sql_exec("INSERT INTO billers (id, name, type, country, connector, logo_url,"
	    " connectivity_types, search_text) VALUES ($1, 'Diskfull Utility', 'other', 'US',"
	    " 'sandbox', $2, '{credentials}', billers_fold('Diskfull Utility'))", LOGO_BILLER,
	    receiver_url(rc, "/logo.png", url, sizeof(url)));

	disk_fill(0);
	ck_assert_int_eq(harness_bdsctl(args), 0);
	err = job_failed("billers.logo", LOGO_BILLER, 1);
	ck_assert_msg(strstr(err, "cannot write the logo file") != NULL, "%s", err);
	free(err);
	ck_assert_int_eq(access(path, F_OK), -1);
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM biller_logos WHERE biller_id = $1",
	    LOGO_BILLER, NULL), 0);
	ck_assert_int_eq(partial_files_gone(), 0);

	disk_free();
	job_retried("billers.logo", LOGO_BILLER);
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM biller_logos WHERE biller_id = $1"
	    " AND size = $2::int", LOGO_BILLER, harness_fmt("%zu", sizeof(png_1x1))), 1);
	assert_file(path, png_1x1, sizeof(png_1x1));
	ck_assert_int_eq(partial_files_gone(), 0);
	free(path);
	receiver_stop(rc);
}
END_TEST

/* ------------------------------------------------------------------ */

static void
stack_up(void)
{
	struct harness_opts o;

	harness_opts_defaults(&o);
	o.data_disk_bytes = DISK_BYTES;
	/* a failed attempt's retry due soon, long enough for the test to stop
	 * bds-jobs first */
	o.extra_config = "jobs_retry_schedule = 3\n"
	    /* a link failing for longer is disconnected CONNECTION_DEGRADED */
	    "degraded_after_s = 1";
	harness_fixture_start(&o);
	devacct_legal();
	devacct_new(&dev, "disk");
	client = devacct_client_new(&dev);
	key = devacct_key_new(&dev, client, "sandbox");
}

static void
stack_down(void)
{
	free(client);
	free(key);
	harness_fixture_stop();
}

/* Each test starts with room, bds-jobs running. */
static void
disk_recover(void)
{
	disk_free();
	if (harness_jobs_pid() == 0)
		ck_assert_msg(harness_jobs_start() == 0, "%s", harness_error());
	harness_fixture_recover();
}

static Suite *
disk_suite(void)
{
	Suite *s = suite_create("faults_disk");
	TCase *tc = tcase_create("disk");

	tcase_add_unchecked_fixture(tc, stack_up, stack_down);
	tcase_add_checked_fixture(tc, disk_recover, NULL);
	tcase_set_timeout(tc, 180);
	tcase_add_test(tc, upload_disk_full);
	tcase_add_test(tc, statements_disk_full);
	tcase_add_test(tc, extraction_disk_full);
	tcase_add_test(tc, logo_disk_full);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return harness_run_suite(disk_suite());
}
