/*
 * Bill imports end to end, through nginx: create (Idempotency-Key
 * required: the same key and body give the same import, even 20 at once;
 * another body 409), the signed upload target nginx writes into a file
 * (good; expired, wrong signature, over 20 MiB, a size mismatch, a second
 * PUT: each refused, and the file nginx wrote is gone), complete_upload
 * (PROCESSING and an extraction job), GET and DELETE with, without and
 * with another x-client-user-id or client, the source document's signed
 * URL (the bytes uploaded, served by nginx), and bill_import.updated at
 * the client's webhook.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <check.h>
#include <curl/curl.h>
#include <json-c/json.h>

#include "devacct.h"
#include "harness.h"
#include "receiver.h"

#define SANDBOX_BILLER "blr_01900000-0000-7000-8000-000000000001"
#define UNKNOWN_BILLER "blr_01900000-0000-7000-8000-00000000dead"
#define DOC_MAX (20 * 1024 * 1024)

static struct devacct dev;

struct tenant {
	char	*client;
	char	*key;
};

static struct tenant ta, tb;

static void
tenant_new(struct tenant *t)
{
	t->client = devacct_client_new(&dev);
	t->key = devacct_key_new(&dev, t->client, "sandbox");
}

static void
tenant_free(struct tenant *t)
{
	free(t->client);
	free(t->key);
}

/* A KEY call on the sandbox host with optional x-client-user-id and
 * Idempotency-Key (NULL: not sent). */
static struct harness_resp *
call(const struct tenant *t, const char *method, const char *path, const char *body,
    const char *user, const char *idem)
{
	const char *extra[3] = { NULL };
	size_t n = 0;

	if (user != NULL)
		extra[n++] = harness_fmt("x-client-user-id: %s", user);
	if (idem != NULL)
		extra[n++] = harness_fmt("idempotency-key: %s", idem);
	return devacct_call(method, "sandbox", path, devacct_bearer(t->key), body, extra);
}

static const char *
create_body(const char *user, const char *name, const char *type, long long size)
{
	return harness_fmt("{\"client_user_id\":\"%s\",\"file_name\":\"%s\","
	    "\"content_type\":\"%s\",\"size_bytes\":%lld}", user, name, type, size);
}

/* A fresh key each call. */
static const char *
new_key(void)
{
	static unsigned n;

	return harness_fmt("imp-%ld-%u-%d", (long)time(NULL), ++n, (int)getpid());
}

struct import {
	char	*id;
	char	*upload;	/* the upload URL's path and query */
};

/* POST /v1/bill_imports → 201; the id and upload path. */
static void
import_new(const struct tenant *t, const char *user, const char *type, long long size,
    struct import *im)
{
	struct harness_resp *r = call(t, "POST", "/v1/bill_imports",
	    create_body(user, "bill.pdf", type, size), NULL, new_key());
	const char *url, *base = harness_base_url("sandbox");

	harness_expect(r, 201);
	im->id = strdup(devacct_str(r, "id"));
	url = devacct_str(r, "upload.url");
	ck_assert_msg(url != NULL && strncmp(url, base, strlen(base)) == 0, "url %s", url);
	im->upload = strdup(url + strlen(base));
	harness_resp_free(r);
}

static void
import_free(struct import *im)
{
	free(im->id);
	free(im->upload);
}

/* PUT bytes to path on the sandbox host. */
static struct harness_resp *
put(const char *path, const char *type, const void *bytes, size_t len)
{
	const char *h[2] = { harness_fmt("Content-Type: %s", type), NULL };

	return harness_request("PUT", "sandbox", path, h, bytes, len);
}

struct chunked {
	size_t	 left;	/* bytes still to send */
};

static size_t
chunk_read(char *buf, size_t size, size_t n, void *arg)
{
	struct chunked *c = arg;
	size_t k = size * n < c->left ? size * n : c->left;

	memset(buf, 'x', k);
	c->left -= k;
	return k;
}

static size_t
chunk_discard(char *p, size_t size, size_t n, void *arg)
{
	(void)p;
	(void)arg;
	return size * n;
}

/* PUT len bytes to path on the sandbox host with Transfer-Encoding: chunked
 * (no Content-Length); the status, or 0 when the exchange broke off. */
static long
put_chunked(const char *path, size_t len)
{
	struct chunked c = { len };
	struct curl_slist *h = curl_slist_append(NULL, "Transfer-Encoding: chunked");
	CURL *k = curl_easy_init();
	long status = 0;

	ck_assert_ptr_nonnull(k);
	h = curl_slist_append(h, "Content-Type: application/pdf");
	curl_easy_setopt(k, CURLOPT_URL, harness_fmt("%s%s", harness_base_url("sandbox"), path));
	curl_easy_setopt(k, CURLOPT_UPLOAD, 1L);
	curl_easy_setopt(k, CURLOPT_READFUNCTION, chunk_read);
	curl_easy_setopt(k, CURLOPT_READDATA, &c);
	curl_easy_setopt(k, CURLOPT_HTTPHEADER, h);
	curl_easy_setopt(k, CURLOPT_WRITEFUNCTION, chunk_discard);
	curl_easy_setopt(k, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(k, CURLOPT_PROXY, "");
	curl_easy_setopt(k, CURLOPT_TIMEOUT_MS, 30000L);
	if (curl_easy_perform(k) == CURLE_OK)
		curl_easy_getinfo(k, CURLINFO_RESPONSE_CODE, &status);
	curl_easy_cleanup(k);
	curl_slist_free_all(h);
	return status;
}

/* A document of len bytes (malloc'ed), seeded so two differ. */
static char *
doc(size_t len, int seed)
{
	char *b = malloc(len + 1);

	ck_assert_ptr_nonnull(b);
	memcpy(b, "%PDF-1.4\n", len < 9 ? len : 9);
	for (size_t i = 9; i < len; i++)
		b[i] = (char)('a' + (i * 7 + (size_t)seed) % 26);
	return b;
}

/* Regular files below <data_dir>/imports not named bimp_*: uploads nginx
 * wrote that the app left behind. */
static int
stray_files(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	if (d == NULL)
		return 0;
	while ((e = readdir(d)) != NULL) {
		char path[4096];
		struct stat st;

		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (lstat(path, &st) != 0)
			continue;
		if (S_ISDIR(st.st_mode))
			n += stray_files(path);
		else if (strncmp(e->d_name, "bimp_", 5) != 0)
			n++;
	}
	closedir(d);
	return n;
}

static const char *
imports_dir(void)
{
	return harness_fmt("%s/data/imports", harness_dir());
}

/* The signature the app makes (core/urlsign.h), for a URL of our own. */
static char *
sign(const char *purpose, const char *id, const char *client, long long expires)
{
	return devacct_url_sig(purpose, id, client, "sandbox", expires);
}

/* path with its last character (the signature's) changed. */
static const char *
tampered(const char *path)
{
	size_t n = strlen(path);

	return harness_fmt("%.*s%c", (int)n - 1, path, path[n - 1] == 'A' ? 'B' : 'A');
}

/* Whether the JSON body has key, as null. */
static int
is_null(const struct harness_resp *r, const char *key)
{
	struct json_object *v = NULL;

	return r->json != NULL && json_object_object_get_ex(r->json, key, &v) && v == NULL;
}

static void
expect_coded(struct harness_resp *r, long status, const char *code)
{
	harness_assert_coded(r, status, code);
	harness_resp_free(r);
}

/* ------------------------------------------------------------------ */

static void
stack_up(void)
{
	harness_fixture_start(NULL);
	devacct_legal();
	devacct_new(&dev, "imports");
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
 * The whole flow of one import: the record as created, the upload (the
 * file under its stable name, the bytes as sent), complete_upload (a
 * job), the source document's bytes through nginx, DELETE, and the
 * bill_import.updated events with their lifecycle versions.
 */
START_TEST(import_flow)
{
	struct receiver *rc = receiver_start(NULL);
	struct harness_resp *r;
	struct import im;
	char *bytes = doc(5000, 1), *path, *url;
	const char *b, *base = harness_base_url("sandbox");
	struct stat st;

	ck_assert_msg(rc != NULL, "receiver: %s", receiver_error());
	devacct_subscribe(ta.key, rc);
	r = call(&ta, "POST", "/v1/bill_imports", harness_fmt("{\"client_user_id\":\"u-flow\","
	    "\"file_name\":\"March bill.png\",\"content_type\":\"image/png\",\"size_bytes\":5000,"
	    "\"biller_id\":\"%s\"}", SANDBOX_BILLER), NULL, new_key());
	harness_expect(r, 201);
	im.id = strdup(devacct_str(r, "id"));
	ck_assert_msg(strncmp(im.id, "bimp_", 5) == 0, "%s", im.id);
	ck_assert_str_eq(devacct_str(r, "object"), "bill_import");
	ck_assert_str_eq(devacct_str(r, "client_user_id"), "u-flow");
	ck_assert_str_eq(devacct_str(r, "status"), "AWAITING_UPLOAD");
	ck_assert_int_eq(devacct_int(r, "lifecycle_version"), 1);
	ck_assert_int_eq(devacct_int(r, "draft_version"), 0);
	ck_assert_str_eq(devacct_text(r, "draft"), "{}");
	ck_assert(is_null(r, "duplicate_of"));
	ck_assert(is_null(r, "rejection_reason"));
	ck_assert(is_null(r, "committed_bill_id"));
	ck_assert(is_null(r, "amount_due"));
	ck_assert(is_null(r, "due_date"));
	ck_assert(is_null(r, "currency"));
	ck_assert_str_eq(devacct_str(r, "file_name"), "March bill.png");
	ck_assert_str_eq(devacct_str(r, "content_type"), "image/png");
	ck_assert_int_eq(devacct_int(r, "size_bytes"), 5000);
	ck_assert_str_eq(devacct_str(r, "source"), "upload");
	ck_assert_str_eq(devacct_str(r, "biller_id"), SANDBOX_BILLER);
	ck_assert_str_eq(devacct_str(r, "upload.method"), "PUT");
	ck_assert_str_eq(devacct_str(r, "upload.headers.Content-Type"), "image/png");
	/* expires_at 7 days ahead; the upload URL's 15 minutes, as its expires= */
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) WHERE $1::timestamptz - now()"
	    " BETWEEN interval '6 days 23 hours' AND interval '7 days 1 minute'",
	    devacct_str(r, "expires_at"), NULL), 1);
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) WHERE $1::timestamptz - now()"
	    " BETWEEN interval '14 minutes' AND interval '15 minutes 1 second'",
	    devacct_str(r, "upload.expires_at"), NULL), 1);
	url = strdup(devacct_str(r, "upload.url"));
	ck_assert_msg(strncmp(url, harness_fmt("%s/v1/bill_imports/%s/upload?expires=", base,
	    im.id), strlen(harness_fmt("%s/v1/bill_imports/%s/upload?expires=", base, im.id))) == 0,
	    "%s", url);
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) WHERE"
	    " extract(epoch FROM $1::timestamptz)::bigint = split_part($2, '&', 1)::bigint",
	    devacct_str(r, "upload.expires_at"), strstr(url, "expires=") + 8), 1);
	im.upload = strdup(url + strlen(base));
	harness_resp_free(r);

	/* no document yet: complete_upload and source_document refuse */
	expect_coded(call(&ta, "POST", harness_fmt("/v1/bill_imports/%s/complete_upload", im.id),
	    "{}", NULL, NULL), 409, "UPLOAD_NOT_RECEIVED");
	expect_coded(call(&ta, "GET", harness_fmt("/v1/bill_imports/%s/source_document", im.id),
	    NULL, "u-flow", NULL), 404, "SOURCE_DOCUMENT_NOT_FOUND");

	/* the upload: recorded under the import's id, the bytes as sent */
	r = put(im.upload, "image/png", bytes, 5000);
	harness_expect(r, 200);
	ck_assert_str_eq(devacct_str(r, "id"), im.id);
	ck_assert_str_eq(devacct_str(r, "status"), "AWAITING_UPLOAD");
	ck_assert_int_eq(devacct_int(r, "size_bytes"), 5000);
	harness_resp_free(r);
	path = devacct_sql_value("SELECT document_path FROM bill_imports WHERE id = $1"
	    " AND uploaded_at IS NOT NULL", im.id, NULL);
	ck_assert_ptr_nonnull(path);
	ck_assert_msg(strncmp(path, imports_dir(), strlen(imports_dir())) == 0 &&
	    strcmp(strrchr(path, '/') + 1, im.id) == 0, "%s", path);
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_int_eq(st.st_size, 5000);
	ck_assert_int_eq(stray_files(imports_dir()), 0);

	/* a second PUT: 409, and its file is gone */
	expect_coded(put(im.upload, "image/png", bytes, 5000), 409, "UPLOAD_ALREADY_RECEIVED");
	ck_assert_int_eq(stray_files(imports_dir()), 0);

	/* complete_upload: PROCESSING, lifecycle 2, one extraction job; again: 202 */
	r = call(&ta, "POST", harness_fmt("/v1/bill_imports/%s/complete_upload", im.id),
	    "{\"client_user_id\":\"u-flow\"}", NULL, NULL);
	harness_expect(r, 202);
	ck_assert_str_eq(devacct_str(r, "status"), "PROCESSING");
	ck_assert_int_eq(devacct_int(r, "lifecycle_version"), 2);
	ck_assert_ptr_nonnull(devacct_str(r, "uploaded_at"));
	harness_resp_free(r);
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM jobs WHERE kind = 'imports.extract'"
	    " AND subject_id = $1 AND client_id = $2", im.id, ta.client), 1);
	r = call(&ta, "POST", harness_fmt("/v1/bill_imports/%s/complete_upload", im.id), NULL,
	    NULL, NULL);
	harness_expect(r, 202);
	ck_assert_int_ge(devacct_int(r, "lifecycle_version"), 2);
	harness_resp_free(r);
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM jobs WHERE kind = 'imports.extract'"
	    " AND subject_id = $1", im.id, NULL), 1);
	/* another end user named in the body: not found */
	expect_coded(call(&ta, "POST", harness_fmt("/v1/bill_imports/%s/complete_upload", im.id),
	    "{\"client_user_id\":\"u-other\"}", NULL, NULL), 404, "BILL_IMPORT_NOT_FOUND");

	/* the source document: a signed URL nginx serves, the bytes uploaded */
	r = call(&ta, "GET", harness_fmt("/v1/bill_imports/%s/source_document", im.id), NULL,
	    "u-flow", NULL);
	harness_expect(r, 200);
	free(url);
	url = strdup(devacct_str(r, "url"));
	ck_assert_msg(strncmp(url, base, strlen(base)) == 0, "%s", url);
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) WHERE $1::timestamptz - now()"
	    " BETWEEN interval '4 minutes' AND interval '5 minutes 1 second'",
	    devacct_str(r, "expires_at"), NULL), 1);
	harness_resp_free(r);
	r = harness_get("sandbox", url + strlen(base));
	ck_assert_int_eq(r->status, 200);
	ck_assert_int_eq(r->body_len, 5000);
	ck_assert_int_eq(memcmp(r->body, bytes, 5000), 0);
	ck_assert_str_eq(harness_header(r, "Content-Type"), "image/png");
	ck_assert_str_eq(harness_header(r, "Content-Disposition"),
	    "attachment; filename=\"March_bill.png\"");
	harness_resp_free(r);
	/* nginx's internal location is not reachable from outside */
	expect_coded(harness_get("sandbox", harness_fmt("/_imports/%s",
	    path + strlen(imports_dir()) + 1)), 404, "NOT_FOUND");
	/* a tampered signature; the other host */
	expect_coded(harness_get("sandbox", tampered(url + strlen(base))), 403,
	    "INVALID_SIGNATURE");
	expect_coded(harness_get("api", url + strlen(base)), 403, "INVALID_SIGNATURE");

	/* DELETE: CANCELLED; again: the same */
	r = call(&ta, "DELETE", harness_fmt("/v1/bill_imports/%s", im.id), NULL, "u-flow", NULL);
	harness_expect(r, 200);
	ck_assert_str_eq(devacct_str(r, "status"), "CANCELLED");
	ck_assert_int_ge(devacct_int(r, "lifecycle_version"), 3);
	harness_resp_free(r);
	r = call(&ta, "DELETE", harness_fmt("/v1/bill_imports/%s", im.id), NULL, "u-flow", NULL);
	harness_expect(r, 200);
	ck_assert_str_eq(devacct_str(r, "status"), "CANCELLED");
	harness_resp_free(r);

	/* the events: PROCESSING at version 2, CANCELLED at the last one */
	b = devacct_received(rc, "bill_import.updated", "\"status\":\"PROCESSING\"");
	ck_assert_msg(b != NULL, "no bill_import.updated PROCESSING");
	ck_assert_msg(strstr(b, harness_fmt("\"bill_import_id\":\"%s\"", im.id)) != NULL, "%s", b);
	ck_assert_msg(strstr(b, "\"lifecycle_version\":2") != NULL, "%s", b);
	ck_assert_msg(strstr(b, "\"object\":\"bill_import\"") != NULL, "%s", b);
	ck_assert_msg(strstr(b, harness_fmt("\"client_id\":\"%s\"", ta.client)) != NULL, "%s", b);
	ck_assert_msg(strstr(b, "\"client_user_id\":\"u-flow\"") != NULL, "%s", b);
	ck_assert_msg(strstr(b, "\"committed_bill_id\":null") != NULL, "%s", b);
	ck_assert_msg(strstr(b, "\"updated_at\":\"") != NULL, "%s", b);
	b = devacct_received(rc, "bill_import.updated", "\"status\":\"CANCELLED\"");
	ck_assert_msg(b != NULL, "no bill_import.updated CANCELLED");
	ck_assert_msg(strstr(b, harness_fmt("\"lifecycle_version\":%lld", devacct_sql_int(
	    "SELECT lifecycle_version FROM bill_imports WHERE id = $1", im.id, NULL))) != NULL,
	    "%s", b);
	/* one event per move, each its own version */
	ck_assert_int_eq(devacct_sql_int("SELECT count(DISTINCT e.data->'object'->>'lifecycle_version')"
	    " - count(*) FROM events e WHERE e.type = 'bill_import.updated'"
	    " AND e.data->'object'->>'bill_import_id' = $1", im.id, NULL), 0);
	receiver_stop(rc);
	free(bytes);
	free(path);
	free(url);
	import_free(&im);
}
END_TEST

/* GET and DELETE: the header is required, another end user's, client's or
 * environment's import is not found; a COMMITTED one cannot be cancelled. */
START_TEST(get_and_delete_scoping)
{
	struct harness_resp *r;
	struct import im;
	char *dev_key;

	import_new(&ta, "u-scope", "application/pdf", 100, &im);
	r = call(&ta, "GET", harness_fmt("/v1/bill_imports/%s", im.id), NULL, "u-scope", NULL);
	harness_expect(r, 200);
	ck_assert_str_eq(devacct_str(r, "id"), im.id);
	ck_assert_str_eq(devacct_str(r, "status"), "AWAITING_UPLOAD");
	harness_resp_free(r);
	r = call(&ta, "GET", harness_fmt("/v1/bill_imports/%s", im.id), NULL, NULL, NULL);
	harness_assert_coded(r, 400, "VALIDATION_ERROR");
	devacct_assert_error(r, "X-Client-User-Id", "required");
	harness_resp_free(r);
	expect_coded(call(&ta, "GET", harness_fmt("/v1/bill_imports/%s", im.id), NULL, "u-other",
	    NULL), 404, "BILL_IMPORT_NOT_FOUND");
	expect_coded(call(&tb, "GET", harness_fmt("/v1/bill_imports/%s", im.id), NULL, "u-scope",
	    NULL), 404, "BILL_IMPORT_NOT_FOUND");
	expect_coded(call(&ta, "GET", "/v1/bill_imports/bimp_nope", NULL, "u-scope", NULL), 404,
	    "BILL_IMPORT_NOT_FOUND");
	/* the same client's development key: another environment */
	devacct_verify_email(&dev);
	dev_key = devacct_key_new(&dev, ta.client, "development");
	r = devacct_call("GET", "api", harness_fmt("/v1/bill_imports/%s", im.id),
	    devacct_bearer(dev_key), NULL, (const char *const[]){ "x-client-user-id: u-scope",
	    NULL });
	harness_assert_coded(r, 404, "BILL_IMPORT_NOT_FOUND");
	harness_resp_free(r);
	free(dev_key);

	r = call(&ta, "DELETE", harness_fmt("/v1/bill_imports/%s", im.id), NULL, NULL, NULL);
	harness_assert_coded(r, 400, "VALIDATION_ERROR");
	harness_resp_free(r);
	expect_coded(call(&ta, "DELETE", harness_fmt("/v1/bill_imports/%s", im.id), NULL,
	    "u-other", NULL), 404, "BILL_IMPORT_NOT_FOUND");
	expect_coded(call(&tb, "DELETE", harness_fmt("/v1/bill_imports/%s", im.id), NULL,
	    "u-scope", NULL), 404, "BILL_IMPORT_NOT_FOUND");
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM bill_imports WHERE id = $1"
	    " AND status = 'AWAITING_UPLOAD' AND lifecycle_version = 1", im.id, NULL), 1);

	/* no credential: 401 on every KEY route; another client's id in a body: 403 */
	{
		static const struct {
			const char	*method, *suffix;
		} ops[] = {
			{ "GET", "" }, { "DELETE", "" }, { "POST", "/complete_upload" },
			{ "GET", "/source_document" },
		};
		const char *const h[] = { "x-client-user-id: u-scope", "idempotency-key: k-401",
			NULL };

		expect_coded(devacct_call("POST", "sandbox", "/v1/bill_imports", NULL,
		    create_body("u-scope", "a.pdf", "application/pdf", 1), h), 401, "UNAUTHORIZED");
		for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
			expect_coded(devacct_call(ops[i].method, "sandbox", harness_fmt(
			    "/v1/bill_imports/%s%s", im.id, ops[i].suffix), NULL, NULL, h), 401,
			    "UNAUTHORIZED");
	}
	expect_coded(call(&ta, "POST", harness_fmt("/v1/bill_imports/%s/complete_upload", im.id),
	    harness_fmt("{\"client_id\":\"%s\"}", tb.client), NULL, NULL), 403,
	    "CLIENT_ID_MISMATCH");

	/* a COMMITTED import stays */
	devacct_sql_exec("UPDATE bill_imports SET status = 'COMMITTED' WHERE id = $1", im.id,
	    NULL);
	expect_coded(call(&ta, "DELETE", harness_fmt("/v1/bill_imports/%s", im.id), NULL,
	    "u-scope", NULL), 409, "BILL_IMPORT_STATE_CONFLICT");
	import_free(&im);
}
END_TEST

/* The create body: every field checked; the biller in the catalog; a body
 * client_id as on every KEY POST. */
START_TEST(create_validation)
{
	static const struct {
		const char	*body, *field, *code;
	} bad[] = {
		{ "{\"file_name\":\"a.pdf\",\"content_type\":\"application/pdf\",\"size_bytes\":1}",
		  "client_user_id", "required" },
		{ "{\"client_user_id\":\"u\",\"content_type\":\"application/pdf\",\"size_bytes\":1}",
		  "file_name", "required" },
		{ "{\"client_user_id\":\"u\",\"file_name\":\"../etc/passwd\","
		  "\"content_type\":\"application/pdf\",\"size_bytes\":1}",
		  "file_name", "invalid_file_name" },
		{ "{\"client_user_id\":\"u\",\"file_name\":\"a\\\\b.pdf\","
		  "\"content_type\":\"application/pdf\",\"size_bytes\":1}",
		  "file_name", "invalid_file_name" },
		{ "{\"client_user_id\":\"u\",\"file_name\":\"a\\nb.pdf\","
		  "\"content_type\":\"application/pdf\",\"size_bytes\":1}",
		  "file_name", "control_character" },
		{ "{\"client_user_id\":\"u\",\"file_name\":\"a.pdf\",\"content_type\":\"text/plain\","
		  "\"size_bytes\":1}", "content_type", "invalid_enum" },
		{ "{\"client_user_id\":\"u\",\"file_name\":\"a.pdf\","
		  "\"content_type\":\"application/pdf\",\"size_bytes\":0}", "size_bytes", "out_of_range" },
		{ "{\"client_user_id\":\"u\",\"file_name\":\"a.pdf\","
		  "\"content_type\":\"application/pdf\",\"size_bytes\":20971521}", "size_bytes",
		  "out_of_range" },
		{ "{\"client_user_id\":\"u\",\"file_name\":\"a.pdf\","
		  "\"content_type\":\"application/pdf\",\"size_bytes\":\"12\"}", "size_bytes",
		  "invalid_type" },
	};
	struct harness_resp *r;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		r = call(&ta, "POST", "/v1/bill_imports", bad[i].body, NULL, new_key());
		harness_assert_coded(r, 400, "VALIDATION_ERROR");
		devacct_assert_error(r, bad[i].field, bad[i].code);
		harness_resp_free(r);
	}
	/* the Idempotency-Key is required */
	r = call(&ta, "POST", "/v1/bill_imports", create_body("u", "a.pdf", "application/pdf", 1),
	    NULL, NULL);
	harness_assert_coded(r, 400, "VALIDATION_ERROR");
	devacct_assert_error(r, "Idempotency-Key", "required");
	harness_resp_free(r);
	/* an unknown biller */
	expect_coded(call(&ta, "POST", "/v1/bill_imports", harness_fmt("{\"client_user_id\":\"u\","
	    "\"file_name\":\"a.pdf\",\"content_type\":\"application/pdf\",\"size_bytes\":1,"
	    "\"biller_id\":\"%s\"}", UNKNOWN_BILLER), NULL, new_key()), 404, "BILLER_NOT_FOUND");
	/* another client's id in the body */
	expect_coded(call(&ta, "POST", "/v1/bill_imports", harness_fmt("{\"client_user_id\":\"u\","
	    "\"file_name\":\"a.pdf\",\"content_type\":\"application/pdf\",\"size_bytes\":1,"
	    "\"client_id\":\"%s\"}", tb.client), NULL, new_key()), 403, "CLIENT_ID_MISMATCH");
	/* its own: fine; a 255-character name too */
	r = call(&ta, "POST", "/v1/bill_imports", harness_fmt("{\"client_user_id\":\"u\","
	    "\"file_name\":\"%0255d\",\"content_type\":\"image/jpeg\",\"size_bytes\":%d,"
	    "\"client_id\":\"%s\"}", 7, DOC_MAX, ta.client), NULL, new_key());
	harness_expect(r, 201);
	harness_resp_free(r);
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM bill_imports WHERE client_id = $1"
	    " AND client_user_id = 'u'", ta.client, NULL), 1);
}
END_TEST

/* The same key and body: the same import (20 at once too: one row); another
 * body with that key: 409 IDEMPOTENCY_CONFLICT. */
START_TEST(create_idempotency)
{
	const char *key = new_key(), *body = create_body("u-idem", "a.pdf", "application/pdf", 10);
	const char *h[4];
	struct harness_resp *r, *burst[20];
	char *id, *k2;

	r = call(&ta, "POST", "/v1/bill_imports", body, NULL, key);
	harness_expect(r, 201);
	id = strdup(devacct_str(r, "id"));
	harness_resp_free(r);
	r = call(&ta, "POST", "/v1/bill_imports", body, NULL, key);
	harness_expect(r, 201);
	ck_assert_str_eq(devacct_str(r, "id"), id);
	harness_resp_free(r);
	expect_coded(call(&ta, "POST", "/v1/bill_imports", create_body("u-idem", "b.pdf",
	    "application/pdf", 10), NULL, key), 409, "IDEMPOTENCY_CONFLICT");
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM bill_imports WHERE client_id = $1"
	    " AND client_user_id = 'u-idem'", ta.client, NULL), 1);

	/* 20 at once with a fresh key: one import, every answer it */
	k2 = strdup(new_key());
	body = create_body("u-burst", "a.pdf", "application/pdf", 10);
	h[0] = harness_fmt("Authorization: %s", devacct_bearer(ta.key));
	h[1] = harness_fmt("idempotency-key: %s", k2);
	h[2] = "Content-Type: application/json";
	h[3] = NULL;
	harness_request_burst(20, "POST", "sandbox", "/v1/bill_imports", h, body, strlen(body),
	    burst);
	free(id);
	id = NULL;
	for (size_t i = 0; i < 20; i++) {
		harness_expect(burst[i], 201);
		if (id == NULL)
			id = strdup(devacct_str(burst[i], "id"));
		ck_assert_str_eq(devacct_str(burst[i], "id"), id);
		harness_resp_free(burst[i]);
	}
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM bill_imports WHERE client_id = $1"
	    " AND client_user_id = 'u-burst'", ta.client, NULL), 1);
	free(id);
	free(k2);
}
END_TEST

/* The upload target's refusals, each leaving no file behind: an expired
 * URL, a wrong signature, the other host, over 20 MiB (nginx's 413 in the
 * coded envelope), a size mismatch (then the right size works), a
 * cancelled import. */
START_TEST(upload_refusals)
{
	struct import im, gone;
	char *bytes = doc(3000, 2), *sig, *big;
	long long expires, past;
	struct harness_resp *r;

	import_new(&ta, "u-up", "application/pdf", 3000, &im);
	expires = strtoll(strstr(im.upload, "expires=") + 8, NULL, 10);

	/* a genuine signature whose time is over */
	past = (long long)time(NULL) - 1;
	sig = sign("bds import upload url v1", im.id, ta.client, past);
	expect_coded(put(harness_fmt("/v1/bill_imports/%s/upload?expires=%lld&sig=%s", im.id,
	    past, sig), "application/pdf", bytes, 3000), 403, "URL_EXPIRED");
	free(sig);
	ck_assert_int_eq(stray_files(imports_dir()), 0);
	/* a wrong signature: tampered, the expiry moved, none, the document URL's purpose */
	expect_coded(put(tampered(im.upload), "application/pdf", bytes, 3000), 403,
	    "INVALID_SIGNATURE");
	expect_coded(put(harness_fmt("/v1/bill_imports/%s/upload?expires=%lld%s", im.id,
	    expires + 60, strstr(im.upload, "&sig=")), "application/pdf", bytes, 3000), 403,
	    "INVALID_SIGNATURE");
	expect_coded(put(harness_fmt("/v1/bill_imports/%s/upload", im.id), "application/pdf",
	    bytes, 3000), 403, "INVALID_SIGNATURE");
	sig = sign("bds import document url v1", im.id, ta.client, expires);
	expect_coded(put(harness_fmt("/v1/bill_imports/%s/upload?expires=%lld&sig=%s", im.id,
	    expires, sig), "application/pdf", bytes, 3000), 403, "INVALID_SIGNATURE");
	free(sig);
	r = harness_request("PUT", "api", im.upload, NULL, bytes, 3000);
	harness_assert_coded(r, 403, "INVALID_SIGNATURE");
	harness_resp_free(r);
	ck_assert_int_eq(stray_files(imports_dir()), 0);

	/* over the 20 MiB ceiling: nginx refuses it, in the coded envelope */
	big = doc(DOC_MAX + 1, 3);
	r = put(im.upload, "application/pdf", big, DOC_MAX + 1);
	harness_assert_coded(r, 413, "PAYLOAD_TOO_LARGE");
	harness_resp_free(r);
	free(big);
	/* chunked, of any size: 411, since nginx would learn the size only
	 * while writing the file */
	ck_assert_int_eq(put_chunked(im.upload, DOC_MAX + 65536), 411);
	ck_assert_int_eq(put_chunked(im.upload, 3000), 411);
	ck_assert_int_eq(stray_files(imports_dir()), 0);
	/* another method than PUT: refused before the body is stored */
	r = harness_request("POST", "sandbox", im.upload, (const char *const[]){
	    "Content-Type: application/pdf", NULL }, bytes, 3000);
	harness_assert_coded(r, 405, "METHOD_NOT_ALLOWED");
	harness_resp_free(r);
	ck_assert_int_eq(stray_files(imports_dir()), 0);
	/* a size other than size_bytes, and none at all */
	r = put(im.upload, "application/pdf", bytes, 2999);
	harness_assert_coded(r, 400, "UPLOAD_SIZE_MISMATCH");
	harness_resp_free(r);
	expect_coded(put(im.upload, "application/pdf", NULL, 0), 400, "UPLOAD_SIZE_MISMATCH");
	ck_assert_int_eq(stray_files(imports_dir()), 0);
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM bill_imports WHERE id = $1"
	    " AND document_path IS NULL AND uploaded_at IS NULL", im.id, NULL), 1);
	/* the right size still goes in */
	r = put(im.upload, "application/pdf", bytes, 3000);
	harness_expect(r, 200);
	harness_resp_free(r);
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM bill_imports WHERE id = $1"
	    " AND document_path LIKE '%/' || id", im.id, NULL), 1);

	/* a cancelled import takes no upload */
	import_new(&ta, "u-up", "application/pdf", 3000, &gone);
	r = call(&ta, "DELETE", harness_fmt("/v1/bill_imports/%s", gone.id), NULL, "u-up", NULL);
	harness_expect(r, 200);
	harness_resp_free(r);
	expect_coded(put(gone.upload, "application/pdf", bytes, 3000), 409,
	    "BILL_IMPORT_STATE_CONFLICT");
	expect_coded(call(&ta, "POST", harness_fmt("/v1/bill_imports/%s/complete_upload",
	    gone.id), NULL, NULL, NULL), 409, "BILL_IMPORT_STATE_CONFLICT");
	ck_assert_int_eq(stray_files(imports_dir()), 0);
	free(bytes);
	import_free(&im);
	import_free(&gone);
}
END_TEST

/* The source document's refusals: another end user, an expired URL, the
 * document deleted by the sweep (the URL made before, and a new one). */
START_TEST(source_document_refusals)
{
	struct import im;
	struct harness_resp *r;
	char *bytes = doc(700, 4), *sig, *path;
	const char *base = harness_base_url("sandbox");
	long long past;

	import_new(&ta, "u-src", "image/jpeg", 700, &im);
	r = put(im.upload, "image/jpeg", bytes, 700);
	harness_expect(r, 200);
	harness_resp_free(r);
	expect_coded(call(&ta, "GET", harness_fmt("/v1/bill_imports/%s/source_document", im.id),
	    NULL, "u-other", NULL), 404, "BILL_IMPORT_NOT_FOUND");
	expect_coded(call(&tb, "GET", harness_fmt("/v1/bill_imports/%s/source_document", im.id),
	    NULL, "u-src", NULL), 404, "BILL_IMPORT_NOT_FOUND");
	r = call(&ta, "GET", harness_fmt("/v1/bill_imports/%s/source_document", im.id), NULL,
	    "u-src", NULL);
	harness_expect(r, 200);
	path = strdup(devacct_str(r, "url") + strlen(base));
	harness_resp_free(r);
	/* a genuine signature whose time is over; the upload URL's purpose */
	past = (long long)time(NULL) - 1;
	sig = sign("bds import document url v1", im.id, ta.client, past);
	expect_coded(harness_get("sandbox", harness_fmt("/v1/bill_imports/%s/source_document/content"
	    "?expires=%lld&sig=%s", im.id, past, sig)), 403, "URL_EXPIRED");
	free(sig);
	sig = sign("bds import upload url v1", im.id, ta.client, past + 600);
	expect_coded(harness_get("sandbox", harness_fmt("/v1/bill_imports/%s/source_document/content"
	    "?expires=%lld&sig=%s", im.id, past + 600, sig)), 403, "INVALID_SIGNATURE");
	free(sig);
	/* the sweep deleted the document: the URL made before, and a new one */
	devacct_sql_exec("UPDATE bill_imports SET document_deleted_at = now() WHERE id = $1",
	    im.id, NULL);
	expect_coded(harness_get("sandbox", path), 404, "SOURCE_DOCUMENT_NOT_FOUND");
	expect_coded(call(&ta, "GET", harness_fmt("/v1/bill_imports/%s/source_document", im.id),
	    NULL, "u-src", NULL), 404, "SOURCE_DOCUMENT_NOT_FOUND");
	free(path);
	free(bytes);
	import_free(&im);
}
END_TEST

static Suite *
imports_suite(void)
{
	Suite *s = suite_create("e2e_imports");
	TCase *tc = tcase_create("imports");

	tcase_add_unchecked_fixture(tc, stack_up, stack_down);
	tcase_add_checked_fixture(tc, harness_fixture_recover, NULL);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, create_validation);
	tcase_add_test(tc, create_idempotency);
	tcase_add_test(tc, import_flow);
	tcase_add_test(tc, upload_refusals);
	tcase_add_test(tc, get_and_delete_scoping);
	tcase_add_test(tc, source_document_refusals);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return harness_run_suite(imports_suite());
}
