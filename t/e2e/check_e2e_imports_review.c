/*
 * Reviewing and confirming bill imports end to end (PATCH
 * /v1/bill_imports/{id}/review_draft, POST .../confirm): set and clear on
 * the draft, the status following the draft (NEEDS_REVIEW <->
 * READY_TO_COMMIT), every refusal (types, unknown keys, the user header,
 * another user's import, a stale draft_version, a status out of review),
 * 20 PATCHes of one version at once (one 200, nineteen 409), then confirm:
 * the bill as GET /v1/bills/{id} shows it, in the link's sync as added
 * when the user has a link of the biller, else linkless and listed by
 * client_user_id, bill.created and bill_import.updated COMMITTED at the
 * receiver, the statement served with the document's type, a second
 * confirm 409.
 *
 * The imports these tests review are put in review through the test's
 * own SQL access (devacct_sql_*: a row as the extraction job leaves it,
 * with a draft of extract.h's shape), so each test picks its draft and
 * status; upload_to_commit drives one import through the whole stack
 * instead: create, the signed PUT, complete_upload, bds-jobs running
 * bds-extract on a text PDF, review, confirm.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <check.h>
#include <json-c/json.h>

#include "core/crypto.h"
#include "devacct.h"
#include "harness.h"
#include "receiver.h"

#define IDLE_MS 60000
#define USER	"u-imp"

static struct devacct dev;
/* a test's own receiver: its thread lives in the test's process (Check
 * forks one per test), subscribed by hooks_on() */
static struct receiver *rc;

struct tenant {
	char	*client, *key, *link, *biller;
};

static struct tenant ta, tb;

/* A draft as extraction leaves one: payee, account, total 86.15 USD found;
 * due date not found, so NEEDS_REVIEW. */
#define DRAFT \
	"{\"payee_name\":{\"value\":\"%s\",\"confidence\":0.95," \
	"  \"source\":{\"page\":1,\"bbox\":[72,90,300,104]}}," \
	" \"account_number\":{\"value\":\"ACCT-%s\",\"confidence\":0.9,\"source\":null}," \
	" \"bill_number\":{\"value\":\"INV-42\",\"confidence\":0.9,\"source\":null}," \
	" \"total_amount\":{\"value\":{\"value\":\"86.15\",\"currency\":\"USD\"}," \
	"  \"confidence\":0.95,\"source\":{\"page\":1,\"bbox\":[400,300,480,314]}}," \
	" \"currency\":{\"value\":\"USD\",\"confidence\":0.95,\"source\":null}," \
	" \"due_date_iso\":{\"value\":null,\"confidence\":0,\"source\":null}," \
	" \"statement_date\":{\"value\":\"2026-11-01\",\"confidence\":0.9,\"source\":null}," \
	" \"checks\":[]}"

/*
 * An import of t's client for user, in status, with the draft above for
 * payee (its account number ending in tail), biller_id biller (NULL none)
 * and document sha (NULL none): its id (malloc'ed). Written as the
 * extraction job leaves a row.
 */
static char *
import_seed(const struct tenant *t, const char *user, const char *status, const char *payee,
    const char *tail, const char *biller, const char *sha, const char *type)
{
	return devacct_sql_value(harness_fmt(
	    "INSERT INTO bill_imports (client_id, id, environment, client_user_id, biller_id,"
	    "  file_name, content_type, size_bytes, status, lifecycle_version, draft_version,"
	    "  draft, upload_expires_at, uploaded_at, expires_at, document_sha256,"
	    "  document_path)"
	    " VALUES ($1, 'bimp_' || gen_random_uuid(), 'sandbox', $2, %s, 'bill.pdf', '%s', 1234,"
	    "  '%s', 3, 1, '%s'::jsonb, now(), now(), now() + interval '7 days', %s,"
	    "  '/nonexistent/imports/x') RETURNING id",
	    biller != NULL ? harness_fmt("'%s'", biller) : "NULL", type, status,
	    harness_fmt(DRAFT, payee, tail), sha != NULL ? harness_fmt("'%s'", sha) : "NULL"),
	    t->client, user);
}

static struct harness_resp *
call(const struct tenant *t, const char *method, const char *path, const char *user,
    const char *body)
{
	const char *extra[] = { user != NULL ? harness_fmt("X-Client-User-Id: %s", user) : NULL,
		NULL };

	return devacct_call(method, "sandbox", path, devacct_bearer(t->key), body,
	    user != NULL ? extra : NULL);
}

static struct harness_resp *
patch(const struct tenant *t, const char *id, const char *user, const char *body)
{
	return call(t, "PATCH", harness_fmt("/v1/bill_imports/%s/review_draft", id), user, body);
}

static struct harness_resp *
confirm(const struct tenant *t, const char *id, const char *user, const char *body)
{
	return call(t, "POST", harness_fmt("/v1/bill_imports/%s/confirm", id), user, body);
}

static void
tenant_new(struct tenant *t)
{
	t->client = devacct_client_new(&dev);
	t->key = devacct_key_new(&dev, t->client, "sandbox");
	t->link = devacct_sandbox_link(t->key, USER, "user_good");
	ck_assert_msg(harness_jobs_wait_idle(IDLE_MS) == 0, "%s", harness_error());
	t->biller = devacct_sql_value("SELECT biller_id FROM links WHERE id = $1", t->link,
	    NULL);
}

static void
tenant_free(struct tenant *t)
{
	free(t->client);
	free(t->key);
	free(t->link);
	free(t->biller);
}

static void
stack_up(void)
{
	struct harness_opts o;

	harness_opts_defaults(&o);
	o.extra_config = "sandbox_basis_day = 2026-10-15\n";
	harness_fixture_start(&o);
	ck_assert_int_eq(crypto_setup(), 0);
	devacct_legal();
	devacct_new(&dev, "imprev");
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

/* ------------------------------------------------------------------ */

/* A reviewed field: {value, confidence, source null, reviewed true}. */
static void
reviewed(const struct harness_resp *r, const char *field, const char *value, int confidence)
{
	struct json_object *f = devacct_json(r, field), *v;

	ck_assert_ptr_nonnull(f);
	ck_assert(json_object_object_get_ex(f, "value", &v));
	ck_assert_str_eq(v != NULL ? json_object_to_json_string(v) : "null", value);
	ck_assert_int_eq(devacct_int(r, harness_fmt("%s.confidence", field)), confidence);
	ck_assert(json_object_object_get_ex(f, "source", &v) && v == NULL);
	ck_assert(devacct_bool(r, harness_fmt("%s.reviewed", field)));
	ck_assert_int_eq(json_object_object_length(f), 4);
}

/* Webhooks of t's client from now on at a receiver of this test. */
static void
hooks_on(const struct tenant *t)
{
	rc = receiver_start(NULL);
	ck_assert_msg(rc != NULL, "receiver: %s", receiver_error());
	devacct_subscribe(t->key, rc);
}

/* The webhook of type whose body holds needle, delivered to rc. */
static const char *
hook(const char *type, const char *needle)
{
	const char *b = devacct_received(rc, type, needle);

	ck_assert_msg(b != NULL, "no %s with %s delivered; events: %s; deliveries: %s", type,
	    needle, devacct_sql_value("SELECT string_agg(type || ' ' || data::text, ' | ')"
	    " FROM events WHERE data::text LIKE '%' || $1 || '%'", needle, NULL),
	    devacct_sql_value("SELECT string_agg(d.status || ' ' || d.attempts || ' ' ||"
	    " coalesce(d.last_error, ''), ' | ') FROM deliveries d JOIN events e ON"
	    " e.id = d.event_id WHERE e.data::text LIKE '%' || $1 || '%'", needle, NULL));
	return b;
}

/*
 * set then clear: each PATCH answers the whole record, draft_version one
 * up, the field reviewed; the due date found makes it READY_TO_COMMIT (a
 * lifecycle move: bill_import.updated), clearing it NEEDS_REVIEW again; a
 * change that leaves the status moves no lifecycle_version.
 */
START_TEST(set_and_clear)
{
	char *id = import_seed(&ta, USER, "NEEDS_REVIEW", "City Water", "1111", NULL, NULL,
	    "application/pdf");
	struct harness_resp *r;

	hooks_on(&ta);
	r = patch(&ta, id, USER, "{\"draft_version\":1,\"changes\":{"
	    "\"payee_name\":{\"operation\":\"set\",\"value\":\"City Water Co\"},"
	    "\"bill_number\":{\"operation\":\"clear\"}}}");
	harness_expect(r, 200);
	ck_assert_pstr_eq(devacct_str(r, "id"), id);
	ck_assert_pstr_eq(devacct_str(r, "object"), "bill_import");
	ck_assert_pstr_eq(devacct_str(r, "status"), "NEEDS_REVIEW");
	ck_assert_int_eq(devacct_int(r, "draft_version"), 2);
	ck_assert_int_eq(devacct_int(r, "lifecycle_version"), 3);
	reviewed(r, "draft.payee_name", "\"City Water Co\"", 1);
	reviewed(r, "draft.bill_number", "null", 0);
	/* untouched fields as extraction left them */
	ck_assert_pstr_eq(devacct_str(r, "draft.account_number.value"), "ACCT-1111");
	ck_assert(json_object_is_type(devacct_json(r, "draft.checks"), json_type_array));
	harness_resp_free(r);

	/* the due date: ready */
	r = patch(&ta, id, USER, "{\"draft_version\":2,\"changes\":{"
	    "\"due_date_iso\":{\"operation\":\"set\",\"value\":\"2026-12-15\"}}}");
	harness_expect(r, 200);
	ck_assert_pstr_eq(devacct_str(r, "status"), "READY_TO_COMMIT");
	ck_assert_int_eq(devacct_int(r, "draft_version"), 3);
	ck_assert_int_eq(devacct_int(r, "lifecycle_version"), 4);
	ck_assert_pstr_eq(devacct_str(r, "due_date"), "2026-12-15");
	harness_resp_free(r);
	ck_assert_ptr_nonnull(strstr(hook("bill_import.updated",
	    harness_fmt("\"bill_import_id\":\"%s\"", id)), "\"status\":\"READY_TO_COMMIT\""));

	/* the deprecated key clears it again: back in review */
	r = patch(&ta, id, USER, "{\"draft_version\":3,\"changes\":{"
	    "\"due_date\":{\"operation\":\"clear\"}}}");
	harness_expect(r, 200);
	ck_assert_pstr_eq(devacct_str(r, "status"), "NEEDS_REVIEW");
	ck_assert_int_eq(devacct_int(r, "draft_version"), 4);
	ck_assert_int_eq(devacct_int(r, "lifecycle_version"), 5);
	ck_assert(json_object_get_type(devacct_json(r, "draft.due_date_iso.value")) ==
	    json_type_null);
	harness_resp_free(r);

	/* the deprecated amount in the draft's currency, major units */
	r = patch(&ta, id, USER, "{\"draft_version\":4,\"changes\":{"
	    "\"amount_due\":{\"operation\":\"set\",\"value\":90.5}}}");
	harness_expect(r, 200);
	ck_assert_pstr_eq(devacct_text(r, "draft.total_amount.value"),
	    "{\"value\":\"90.50\",\"currency\":\"USD\"}");
	ck_assert_pstr_eq(devacct_text(r, "amount_due"), "90.50");
	harness_resp_free(r);
	/* what the row holds is what was answered */
	ck_assert_int_eq(devacct_sql_int("SELECT draft_version FROM bill_imports WHERE id = $1",
	    id, NULL), 5);
	receiver_stop(rc);
	free(id);
}
END_TEST

static const struct {
	const char *body, *field, *code;
} invalid[] = {
	{ "{\"changes\":{}}", "draft_version", "required" },
	{ "{\"draft_version\":1}", "changes", "required" },
	{ "{\"draft_version\":\"1\",\"changes\":{}}", "draft_version", "invalid_type" },
	{ "{\"draft_version\":1,\"changes\":[]}", "changes", "invalid_type" },
	{ "{\"draft_version\":1,\"changes\":{\"payee\":{\"operation\":\"clear\"}}}",
	  "changes.payee", "unknown_field" },
	{ "{\"draft_version\":1,\"changes\":{\"payee_name\":{\"operation\":\"replace\"}}}",
	  "changes.payee_name.operation", "invalid_enum" },
	{ "{\"draft_version\":1,\"changes\":{\"payee_name\":{\"operation\":\"set\"}}}",
	  "changes.payee_name", "required" },
	{ "{\"draft_version\":1,\"changes\":{\"payee_name\":{\"operation\":\"set\",\"value\":5}}}",
	  "changes.payee_name.value", "invalid_type" },
	{ "{\"draft_version\":1,\"changes\":{\"total_amount\":{\"operation\":\"set\","
	  "\"value\":{\"value\":\"1.005\",\"currency\":\"USD\"}}}}",
	  "changes.total_amount.value", "invalid_format" },
	{ "{\"draft_version\":1,\"changes\":{\"total_amount\":{\"operation\":\"set\","
	  "\"value\":{\"value\":\"10\",\"currency\":\"DOLLAR\"}}}}",
	  "changes.total_amount.value.currency", "invalid_format" },
	{ "{\"draft_version\":1,\"changes\":{\"due_date_iso\":{\"operation\":\"set\","
	  "\"value\":\"2026-02-30\"}}}", "changes.due_date_iso.value", "invalid_format" },
	{ "{\"draft_version\":1,\"changes\":{\"amount_due\":{\"operation\":\"set\","
	  "\"value\":\"9\"}}}", "changes.amount_due.value", "invalid_type" },
	{ "{\"draft_version\":1,\"changes\":{\"payment_url\":{\"operation\":\"set\","
	  "\"value\":\"http://pay.example.com\"}}}", "changes.payment_url.value", "invalid_format" },
	{ "{\"draft_version\":1,\"changes\":{\"line_items\":{\"operation\":\"set\","
	  "\"value\":{}}}}", "changes.line_items.value", "invalid_type" },
	/* what only the draft answers: 1.5 is not a whole number of JPY */
	{ "{\"draft_version\":1,\"changes\":{\"currency\":{\"operation\":\"set\",\"value\":\"JPY\"},"
	  "\"amount_due\":{\"operation\":\"set\",\"value\":1.5}}}",
	  "changes.amount_due.value", "invalid_format" },
	{ "{\"draft_version\":1,\"changes\":{\"due_date\":{\"operation\":\"clear\"},"
	  "\"due_date_iso\":{\"operation\":\"clear\"}}}", "changes.due_date", "duplicate_field" },
};

/* every refusal names its field and changes nothing */
START_TEST(refusals)
{
	char *id = import_seed(&ta, USER, "NEEDS_REVIEW", "City Water", "2222", NULL, NULL,
	    "application/pdf");
	struct harness_resp *r;
	size_t i;

	for (i = 0; i < sizeof(invalid) / sizeof(invalid[0]); i++) {
		r = patch(&ta, id, USER, invalid[i].body);
		harness_assert_coded(r, 400, "VALIDATION_ERROR");
		devacct_assert_error(r, invalid[i].field, invalid[i].code);
		harness_resp_free(r);
	}
	/* confirm names final_changes */
	r = confirm(&ta, id, USER, "{\"final_changes\":{\"payee_name\":{\"operation\":\"set\"}}}");
	harness_assert_coded(r, 400, "VALIDATION_ERROR");
	devacct_assert_error(r, "final_changes.payee_name", "required");
	harness_resp_free(r);
	r = confirm(&ta, id, USER, "{}");
	harness_assert_coded(r, 400, "VALIDATION_ERROR");
	devacct_assert_error(r, "final_changes", "required");
	harness_resp_free(r);

	/* the end user's header is required; another user's import is none */
	r = patch(&ta, id, NULL, "{\"draft_version\":1,\"changes\":{}}");
	harness_assert_coded(r, 400, "VALIDATION_ERROR");
	harness_resp_free(r);
	r = confirm(&ta, id, NULL, "{\"final_changes\":{}}");
	harness_assert_coded(r, 400, "VALIDATION_ERROR");
	harness_resp_free(r);
	r = patch(&ta, id, "someone-else", "{\"draft_version\":1,\"changes\":{}}");
	harness_assert_coded(r, 404, "BILL_IMPORT_NOT_FOUND");
	harness_resp_free(r);
	r = confirm(&ta, id, "someone-else", "{\"final_changes\":{}}");
	harness_assert_coded(r, 404, "BILL_IMPORT_NOT_FOUND");
	harness_resp_free(r);
	/* another client's */
	r = patch(&tb, id, USER, "{\"draft_version\":1,\"changes\":{}}");
	harness_assert_coded(r, 404, "BILL_IMPORT_NOT_FOUND");
	harness_resp_free(r);
	r = patch(&ta, "bimp_01900000-0000-7000-8000-000000000000", USER,
	    "{\"draft_version\":1,\"changes\":{}}");
	harness_assert_coded(r, 404, "BILL_IMPORT_NOT_FOUND");
	harness_resp_free(r);

	/* a stale version */
	r = patch(&ta, id, USER, "{\"draft_version\":0,\"changes\":{}}");
	harness_assert_coded(r, 409, "DRAFT_VERSION_CONFLICT");
	harness_resp_free(r);
	r = confirm(&ta, id, USER, "{\"final_changes\":{},\"draft_version\":7}");
	harness_assert_coded(r, 409, "DRAFT_VERSION_CONFLICT");
	harness_resp_free(r);

	/* nothing of it written */
	ck_assert_int_eq(devacct_sql_int("SELECT draft_version FROM bill_imports WHERE id = $1",
	    id, NULL), 1);
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM bills WHERE import_id = $1",
	    id, NULL), 0);
	free(id);
}
END_TEST

/* statuses out of review: 409 on both routes */
START_TEST(not_in_review)
{
	static const char *const statuses[] = { "AWAITING_UPLOAD", "PROCESSING", "REJECTED",
		"EXPIRED", "CANCELLED" };
	struct harness_resp *r;
	size_t i;

	for (i = 0; i < sizeof(statuses) / sizeof(statuses[0]); i++) {
		char *id = import_seed(&ta, USER, statuses[i], "City Water", "3333", NULL, NULL,
		    "application/pdf");

		r = patch(&ta, id, USER, "{\"draft_version\":1,\"changes\":{}}");
		harness_assert_coded(r, 409, "BILL_IMPORT_STATE_CONFLICT");
		harness_resp_free(r);
		r = confirm(&ta, id, USER, "{\"final_changes\":{\"total_amount\":{\"operation\":"
		    "\"set\",\"value\":{\"value\":\"1.00\",\"currency\":\"USD\"}}}}");
		harness_assert_coded(r, 409, "BILL_IMPORT_STATE_CONFLICT");
		harness_resp_free(r);
		free(id);
	}
}
END_TEST

/* 20 PATCHes of the same draft_version at once: exactly one wins */
START_TEST(one_winner)
{
	char *id = import_seed(&ta, USER, "NEEDS_REVIEW", "City Water", "4444", NULL, NULL,
	    "application/pdf");
	const char *h[] = { "Content-Type: application/json", NULL, NULL, NULL };
	const char *body = "{\"draft_version\":1,\"changes\":{\"reference_number\":"
	    "{\"operation\":\"set\",\"value\":\"R-1\"}}}";
	struct harness_resp *out[20];
	size_t i, ok = 0, conflict = 0;

	h[1] = harness_fmt("Authorization: Bearer %s", ta.key);
	h[2] = "X-Client-User-Id: " USER;
	harness_request_burst(20, "PATCH", "sandbox",
	    harness_fmt("/v1/bill_imports/%s/review_draft", id), h, body, strlen(body), out);
	for (i = 0; i < 20; i++) {
		if (out[i]->status == 200)
			ok++;
		else if (harness_check_coded(out[i], 409, "DRAFT_VERSION_CONFLICT") == NULL)
			conflict++;
		else
			ck_abort_msg("answer %zu: %ld %s", i, out[i]->status, out[i]->body);
		harness_resp_free(out[i]);
	}
	ck_assert_uint_eq(ok, 1);
	ck_assert_uint_eq(conflict, 19);
	ck_assert_int_eq(devacct_sql_int("SELECT draft_version FROM bill_imports WHERE id = $1",
	    id, NULL), 2);
	free(id);
}
END_TEST

/* A statement document in the store, as the extraction job leaves the copy
 * (bills_docs layout): its hash. */
static char *
store_doc(const char *bytes, size_t len)
{
	unsigned char md[32];
	char *sha = malloc(65), *dir;
	FILE *f;
	size_t i;

	ck_assert_ptr_nonnull(sha);
	crypto_sha256(bytes, len, md);
	for (i = 0; i < 32; i++)
		snprintf(sha + 2 * i, 3, "%02x", md[i]);
	dir = strdup(harness_fmt("%s/data/statements/%.2s", harness_dir(), sha));

	mkdir(harness_fmt("%s/data", harness_dir()), 0755);
	mkdir(harness_fmt("%s/data/statements", harness_dir()), 0755);
	mkdir(dir, 0755);
	f = fopen(harness_fmt("%s/%s.pdf", dir, sha), "w");
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(bytes, 1, len, f), len);
	fclose(f);
	chmod(harness_fmt("%s/%s.pdf", dir, sha), 0644);
	free(dir);
	return sha;
}

/* The path and query of a bill's signed statement URL (malloc'ed). */
static char *
statement_path(const struct tenant *t, const char *bill)
{
	struct harness_resp *r = call(t, "GET", harness_fmt("/v1/bills/%s/statement", bill),
	    NULL, NULL);
	char *p;

	harness_expect(r, 200);
	p = strdup(strstr(devacct_str(r, "url"), "/v1/statements/"));
	harness_resp_free(r);
	return p;
}

/*
 * The user has a link of the biller: the bill joins it (its sync's added
 * bucket), bill.created and bill_import.updated COMMITTED are delivered,
 * GET /v1/bills/{id} shows what confirm answered, the document is its
 * statement; a second confirm is 409.
 */
START_TEST(confirm_to_link)
{
	static const char doc[] = "%PDF-1.4\n% an imported statement\n%%EOF\n";
	char *sha = store_doc(doc, sizeof(doc) - 1);
	char *tail = devacct_sql_value("SELECT account_number_mask FROM link_accounts"
	    " WHERE link_id = $1 LIMIT 1", ta.link, NULL);
	char *id = import_seed(&ta, USER, "NEEDS_REVIEW", "Sandbox Power & Light", tail,
	    ta.biller, sha, "application/pdf");
	char *acct = devacct_sql_value("SELECT id FROM link_accounts WHERE link_id = $1 LIMIT 1",
	    ta.link, NULL);
	struct harness_resp *r, *g;
	const char *bill, *cursor;
	char *path, *bill_id;
	long long seq = devacct_sql_int("SELECT last_seq FROM bill_seq WHERE link_id = $1",
	    ta.link, NULL);

	hooks_on(&ta);
	/* the link's sync, all of it, before */
	r = call(&ta, "GET", harness_fmt("/v1/account-links/%s/bills/sync?limit=500", ta.link),
	    NULL, NULL);
	harness_expect(r, 200);
	ck_assert(!devacct_bool(r, "data.has_more"));
	cursor = harness_fmt("%s", devacct_str(r, "data.next_cursor"));
	harness_resp_free(r);

	r = confirm(&ta, id, USER, "{\"draft_version\":1,\"final_changes\":{"
	    "\"due_date_iso\":{\"operation\":\"set\",\"value\":\"2026-12-15\"}}}");
	harness_expect(r, 200);
	ck_assert_pstr_eq(devacct_str(r, "outcome"), "committed");
	bill = devacct_str(r, "bill.id");
	ck_assert_ptr_nonnull(bill);
	bill_id = strdup(bill);
	ck_assert_pstr_eq(devacct_text(r, "bill.total_amount"),
	    "{\"value\":\"86.15\",\"currency\":\"USD\"}");
	ck_assert_pstr_eq(devacct_str(r, "bill.due_date_iso"), "2026-12-15");
	ck_assert_pstr_eq(devacct_text(r, "bill.amount"), "86.15");
	ck_assert_pstr_eq(devacct_str(r, "bill.currency"), "USD");
	ck_assert_pstr_eq(devacct_str(r, "bill.due_date"), "2026-12-15");
	ck_assert_pstr_eq(devacct_str(r, "bill.link_id"), ta.link);
	ck_assert_pstr_eq(devacct_str(r, "bill.account_id"), acct);
	ck_assert_pstr_eq(devacct_str(r, "bill.biller_id"), ta.biller);
	ck_assert_pstr_eq(devacct_str(r, "bill.user_id"), USER);
	ck_assert_pstr_eq(devacct_str(r, "bill.status"), "PENDING");
	ck_assert_pstr_eq(devacct_str(r, "bill.source"), "import");
	ck_assert_pstr_eq(devacct_str(r, "bill.import_id"), id);
	ck_assert_pstr_eq(devacct_str(r, "bill.bill_number"), "INV-42");
	ck_assert_pstr_eq(devacct_str(r, "bill.statement_date"), "2026-11-01");
	ck_assert_pstr_eq(devacct_str(r, "bill.account_number_mask"), tail);
	ck_assert(devacct_bool(r, "bill.has_statement"));
	ck_assert_pstr_eq(devacct_str(r, "bill_import.status"), "COMMITTED");
	ck_assert_pstr_eq(devacct_str(r, "bill_import.committed_bill_id"), bill_id);
	ck_assert_int_eq(devacct_int(r, "bill_import.lifecycle_version"), 4);
	ck_assert_int_eq(devacct_int(r, "bill_import.draft_version"), 2);
	ck_assert_pstr_eq(devacct_str(r, "bill_import.draft.due_date_iso.value"), "2026-12-15");

	/* GET /v1/bills/{id}: the same bill */
	g = call(&ta, "GET", harness_fmt("/v1/bills/%s", bill_id), NULL, NULL);
	harness_expect(g, 200);
	ck_assert_pstr_eq(devacct_text(g, ""), devacct_text(r, "bill"));
	harness_resp_free(g);
	harness_resp_free(r);

	/* the link's next number; the sync from where it stood: added */
	ck_assert_int_eq(devacct_sql_int("SELECT created_seq FROM bills WHERE id = $1", bill_id,
	    NULL), seq + 1);
	r = call(&ta, "GET", harness_fmt("/v1/account-links/%s/bills/sync?cursor=%s", ta.link,
	    cursor), NULL, NULL);
	harness_expect(r, 200);
	ck_assert_int_eq(json_object_array_length(devacct_json(r, "data.added")), 1);
	ck_assert_pstr_eq(devacct_str(r, "data.added.0.id"), bill_id);
	ck_assert_int_eq(json_object_array_length(devacct_json(r, "data.modified")), 0);
	harness_resp_free(r);

	/* at the receiver */
	ck_assert_ptr_nonnull(hook("bill.created", bill_id));
	ck_assert_ptr_nonnull(hook("bill_import.updated",
	    harness_fmt("\"committed_bill_id\":\"%s\"", bill_id)));
	ck_assert_ptr_nonnull(strstr(hook("bill_import.updated",
	    harness_fmt("\"committed_bill_id\":\"%s\"", bill_id)), "\"status\":\"COMMITTED\""));

	/* the document is the bill's statement */
	path = statement_path(&ta, bill_id);
	r = harness_get("sandbox", path);
	ck_assert_msg(r->status == 200, "%ld %s", r->status, r->body);
	ck_assert_pstr_eq(harness_header(r, "Content-Type"), "application/pdf");
	ck_assert_pstr_eq(harness_header(r, "Content-Disposition"),
	    "attachment; filename=\"INV-42.pdf\"");
	ck_assert_uint_eq(r->body_len, sizeof(doc) - 1);
	ck_assert_int_eq(memcmp(r->body, doc, r->body_len), 0);
	harness_resp_free(r);

	/* again: committed already */
	r = confirm(&ta, id, USER, "{\"final_changes\":{}}");
	harness_assert_coded(r, 409, "BILL_IMPORT_ALREADY_COMMITTED");
	harness_resp_free(r);
	r = patch(&ta, id, USER, "{\"draft_version\":2,\"changes\":{}}");
	harness_assert_coded(r, 409, "BILL_IMPORT_ALREADY_COMMITTED");
	harness_resp_free(r);
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM bills WHERE import_id = $1", id,
	    NULL), 1);
	receiver_stop(rc);
	free(path);
	free(bill_id);
	free(acct);
	free(id);
	free(tail);
	free(sha);
}
END_TEST

/*
 * No link of the biller, no biller in the catalog by that name: the bill
 * has no link and no biller, biller_name the payee; GET /v1/bills lists it
 * by client_user_id; an image document is served as what it is. Confirm
 * without a total is 400 naming final_changes.total_amount; POSSIBLE_
 * DUPLICATE confirms too.
 */
START_TEST(confirm_without_link)
{
	static const char png[] = "\x89PNG\r\n\x1a\n not really an image";
	char *sha = store_doc(png, sizeof(png) - 1);
	char *id = import_seed(&ta, "u-nolink", "POSSIBLE_DUPLICATE", "Corner Gas Co-op", "9876",
	    NULL, sha, "image/png");
	struct harness_resp *r;
	char *bill_id, *path;

	hooks_on(&ta);
	r = confirm(&ta, id, "u-nolink", "{\"final_changes\":{\"total_amount\":"
	    "{\"operation\":\"clear\"}}}");
	harness_assert_coded(r, 400, "VALIDATION_ERROR");
	devacct_assert_error(r, "final_changes.total_amount", "required");
	harness_resp_free(r);
	/* rolled back: still in review, the draft as it was */
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM bill_imports WHERE id = $1"
	    " AND status = 'POSSIBLE_DUPLICATE' AND draft_version = 1", id, NULL), 1);

	r = confirm(&ta, id, "u-nolink", "{\"final_changes\":{\"currency\":"
	    "{\"operation\":\"set\",\"value\":\"EUR\"}}}");
	harness_expect(r, 200);
	bill_id = strdup(devacct_str(r, "bill.id"));
	ck_assert(json_object_get_type(devacct_json(r, "bill.link_id")) == json_type_null);
	ck_assert(json_object_get_type(devacct_json(r, "bill.biller_id")) == json_type_null);
	ck_assert(json_object_get_type(devacct_json(r, "bill.due_date_iso")) == json_type_null);
	ck_assert(json_object_get_type(devacct_json(r, "bill.due_date")) == json_type_null);
	ck_assert_pstr_eq(devacct_str(r, "bill.biller_name"), "Corner Gas Co-op");
	ck_assert_pstr_eq(devacct_text(r, "bill.total_amount"),
	    "{\"value\":\"86.15\",\"currency\":\"EUR\"}");
	ck_assert_pstr_eq(devacct_str(r, "bill.account_number_mask"), "9876");
	harness_resp_free(r);

	r = call(&ta, "GET", "/v1/bills?client_user_id=u-nolink", NULL, NULL);
	harness_expect(r, 200);
	ck_assert_ptr_nonnull(strstr(r->body, bill_id));
	harness_resp_free(r);
	ck_assert_ptr_nonnull(hook("bill.created", bill_id));

	path = statement_path(&ta, bill_id);
	r = harness_get("sandbox", path);
	ck_assert_msg(r->status == 200, "%ld %s", r->status, r->body);
	ck_assert_pstr_eq(harness_header(r, "Content-Type"), "image/png");
	ck_assert_pstr_eq(harness_header(r, "Content-Disposition"),
	    "attachment; filename=\"INV-42.png\"");
	ck_assert_uint_eq(r->body_len, sizeof(png) - 1);
	harness_resp_free(r);
	receiver_stop(rc);
	free(path);
	free(bill_id);
	free(id);
	free(sha);
}
END_TEST

/* The payee names a catalog biller (case aside): the bill is that biller's,
 * and joins the user's link of it. */
START_TEST(confirm_by_payee)
{
	char *name = devacct_sql_value("SELECT upper(name) FROM billers WHERE id = $1",
	    tb.biller, NULL);
	char *id = import_seed(&tb, USER, "READY_TO_COMMIT", name, "0000", NULL, NULL,
	    "application/pdf");
	struct harness_resp *r = confirm(&tb, id, USER, "{\"final_changes\":{}}");

	harness_expect(r, 200);
	ck_assert_pstr_eq(devacct_str(r, "bill.biller_id"), tb.biller);
	ck_assert_pstr_eq(devacct_str(r, "bill.link_id"), tb.link);
	ck_assert(json_object_get_type(devacct_json(r, "bill.account_id")) == json_type_null);
	ck_assert(!devacct_bool(r, "bill.has_statement"));
	harness_resp_free(r);
	free(name);
	free(id);
}
END_TEST

/* ---- the whole stack: upload, extraction, review, confirm ---- */

/* A statement of the link's biller as a text PDF (python3-reportlab): its
 * path, malloc'ed. */
static char *
statement_pdf(const char *tail)
{
	char *path = strdup(harness_fmt("%s/statement.pdf", harness_dir()));
	const char *py = harness_fmt("%s/statement.py", harness_dir());
	FILE *f = fopen(py, "w");

	ck_assert_ptr_nonnull(f);
	fprintf(f,
	    "import sys\n"
	    "from reportlab.lib.pagesizes import letter\n"
	    "from reportlab.pdfgen import canvas\n"
	    "c = canvas.Canvas(sys.argv[1], pagesize=letter)\n"
	    "c.setFont('Helvetica-Bold', 16)\n"
	    "c.drawString(72, 740, 'Sandbox Power & Light')\n"
	    "c.setFont('Helvetica', 11)\n"
	    "y = 712\n"
	    "for left, right in [('Statement date', 'November 1, 2026'),\n"
	    "        ('Account number', '4400-1234-%s'), ('Bill number', 'SPL-2026-11'),\n"
	    "        ('Previous balance', '$50.00'), ('Payments received', '-$50.00'),\n"
	    "        ('Current charges', '$91.40'), ('Total amount due', '$91.40'),\n"
	    "        ('Due date', 'December 15, 2026')]:\n"
	    "    c.drawString(72, y, left)\n"
	    "    c.drawRightString(540, y, right)\n"
	    "    y -= 18\n"
	    "c.showPage()\n"
	    "c.save()\n", tail);
	fclose(f);
	ck_assert_int_eq(system(harness_fmt("/usr/bin/python3 %s %s", py, path)), 0);
	return path;
}

static unsigned char *
slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	unsigned char *buf;
	long n;

	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(fseek(f, 0, SEEK_END), 0);
	ck_assert_int_ge(n = ftell(f), 1);
	rewind(f);
	ck_assert_ptr_nonnull(buf = malloc((size_t)n));
	ck_assert_uint_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	*len = (size_t)n;
	return buf;
}

/*
 * A real upload of a text PDF (create, the signed PUT, complete_upload),
 * extracted by bds-jobs running bds-extract; then a review at the version
 * the extraction left, and confirm: the bill of the link, its statement
 * the uploaded bytes. (Its figures differ from confirm_to_link's bill, of
 * the same link and account: the same ones would be POSSIBLE_DUPLICATE.)
 */
START_TEST(upload_to_commit)
{
	char *tail = devacct_sql_value("SELECT account_number_mask FROM link_accounts"
	    " WHERE link_id = $1 LIMIT 1", ta.link, NULL);
	char *file = statement_pdf(tail), *id, *bill_id, *spath;
	const char *extra[] = { harness_idem_header(), NULL };
	const char *url, *path, *st;
	struct harness_resp *r, *p;
	unsigned char *doc;
	long long v;
	size_t len;

	doc = slurp(file, &len);
	r = devacct_call("POST", "sandbox", "/v1/bill_imports", devacct_bearer(ta.key),
	    harness_fmt("{\"client_user_id\":\"%s\",\"file_name\":\"statement.pdf\","
	    "\"content_type\":\"application/pdf\",\"size_bytes\":%zu,\"biller_id\":\"%s\"}",
	    USER, len, ta.biller), extra);
	harness_expect(r, 201);
	id = strdup(devacct_str(r, "id"));
	ck_assert_ptr_nonnull(url = devacct_str(r, "upload.url"));
	ck_assert_ptr_nonnull(path = strstr(url, "/v1/bill_imports/"));
	{
		const char *h[] = { "Content-Type: application/pdf", NULL };

		p = harness_request("PUT", "sandbox", path, h, doc, len);
		ck_assert_msg(p->status == 200, "PUT: %ld %s", p->status, p->body);
		harness_resp_free(p);
	}
	harness_resp_free(r);
	r = call(&ta, "POST", harness_fmt("/v1/bill_imports/%s/complete_upload", id), USER,
	    NULL);
	harness_expect(r, 202);
	harness_resp_free(r);
	ck_assert_msg(harness_jobs_wait_settled("imports.extract", id, 90000) == 0, "%s",
	    harness_error());

	r = call(&ta, "GET", harness_fmt("/v1/bill_imports/%s", id), USER, NULL);
	harness_expect(r, 200);
	st = devacct_str(r, "status");
	ck_assert_msg(st != NULL && (strcmp(st, "READY_TO_COMMIT") == 0 ||
	    strcmp(st, "NEEDS_REVIEW") == 0), "extracted: %s", r->body);
	ck_assert_pstr_eq(devacct_text(r, "draft.total_amount.value"),
	    "{\"value\":\"91.40\",\"currency\":\"USD\"}");
	v = devacct_int(r, "draft_version");
	ck_assert_int_ge(v, 1);
	harness_resp_free(r);

	/* a stale version, then the right one */
	r = patch(&ta, id, USER, harness_fmt("{\"draft_version\":%lld,\"changes\":{"
	    "\"reference_number\":{\"operation\":\"set\",\"value\":\"R-77\"}}}", v - 1));
	harness_assert_coded(r, 409, "DRAFT_VERSION_CONFLICT");
	harness_resp_free(r);
	r = patch(&ta, id, USER, harness_fmt("{\"draft_version\":%lld,\"changes\":{"
	    "\"reference_number\":{\"operation\":\"set\",\"value\":\"R-77\"},"
	    "\"due_date_iso\":{\"operation\":\"set\",\"value\":\"2026-12-15\"}}}", v));
	harness_expect(r, 200);
	ck_assert_int_eq(devacct_int(r, "draft_version"), v + 1);
	harness_resp_free(r);

	r = confirm(&ta, id, USER, harness_fmt("{\"draft_version\":%lld,\"final_changes\":{}}",
	    v + 1));
	harness_expect(r, 200);
	bill_id = strdup(devacct_str(r, "bill.id"));
	ck_assert_pstr_eq(devacct_str(r, "bill.link_id"), ta.link);
	ck_assert_pstr_eq(devacct_text(r, "bill.total_amount"),
	    "{\"value\":\"91.40\",\"currency\":\"USD\"}");
	ck_assert_pstr_eq(devacct_str(r, "bill.due_date_iso"), "2026-12-15");
	ck_assert_pstr_eq(devacct_str(r, "bill.account_number_mask"), tail);
	ck_assert(devacct_bool(r, "bill.has_statement"));
	harness_resp_free(r);

	/* the statement is the document uploaded */
	spath = statement_path(&ta, bill_id);
	r = harness_get("sandbox", spath);
	ck_assert_msg(r->status == 200, "%ld %s", r->status, r->body);
	ck_assert_pstr_eq(harness_header(r, "Content-Type"), "application/pdf");
	ck_assert_uint_eq(r->body_len, len);
	ck_assert_int_eq(memcmp(r->body, doc, len), 0);
	harness_resp_free(r);
	free(spath);
	free(bill_id);
	free(id);
	free(doc);
	free(file);
	free(tail);
}
END_TEST

static Suite *
review_suite(void)
{
	Suite *s = suite_create("e2e_imports_review");
	TCase *tc = tcase_create("review");

	tcase_add_unchecked_fixture(tc, stack_up, stack_down);
	tcase_add_checked_fixture(tc, harness_fixture_recover, NULL);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, set_and_clear);
	tcase_add_test(tc, refusals);
	tcase_add_test(tc, not_in_review);
	tcase_add_test(tc, one_winner);
	tcase_add_test(tc, confirm_to_link);
	tcase_add_test(tc, confirm_without_link);
	tcase_add_test(tc, confirm_by_payee);
	tcase_add_test(tc, upload_to_commit);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return harness_run_suite(review_suite());
}
