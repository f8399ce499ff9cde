/*
 * Developer accounts end to end, part 3: the business verification form and
 * live access. Two stacks, one after the other: a development deployment
 * (live access granted at once once e-mail, form and billing are done) and
 * a production one (the request is queued; `bdsctl live-access
 * list|approve|deny` decides). Billing is marked by `bdsctl billing done`.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include <check.h>
#include <json-c/json.h>

#include "accounts.h"
#include "harness.h"
#include "smtp_sink.h"

#define FORM_PATH	"/v1/iam/verification-request"
#define LIVE_PATH	"/v1/iam/request-live-access"
#define ME_PATH		"/v1/iam/auth/me"
#define FORM_OK		"{\"companyName\":\"Acme Utilities\",\"website\":\"https://acme.example\"," \
			"\"useCase\":\"pay household bills\",\"country\":\"US\"," \
			"\"contactName\":\"Ada Lovelace\"}"

/* Run bdsctl; its exit status, and what it printed (malloc'ed) in *out. */
static int
bdsctl(const char *const args[], char **out)
{
	char path[1024], *all;
	struct stat st;
	off_t before;
	size_t len;
	int rc;

	snprintf(path, sizeof(path), "%s/bdsctl.log", harness_dir());
	before = stat(path, &st) == 0 ? st.st_size : 0;
	rc = harness_bdsctl(args);
	all = acct_slurp(path, &len);
	ck_assert_ptr_nonnull(all);
	ck_assert_msg((size_t)before <= len, "bdsctl.log shrank");
	if (out != NULL)
		*out = strdup(all + before);
	free(all);
	return rc;
}

static int
billing_done(const char *who)
{
	const char *args[] = { "billing", "done", who, NULL };

	return bdsctl(args, NULL);
}

static void
submit_form(const struct acct_user *u)
{
	struct harness_resp *r = acct_post(FORM_PATH, u->access, FORM_OK);

	acct_assert_outcome(r, 1, NULL);
	harness_resp_free(r);
}

/* A user with every prerequisite of live access. */
static void
ready_user(struct acct_user *u, const char *tag, struct acct_mail *mb)
{
	acct_new_user(u, tag, mb);
	acct_verify_email(u, mb);
	submit_form(u);
	ck_assert_int_eq(billing_done(u->email), 0);
}

/* 400 PREREQUISITES_NOT_MET naming exactly the missing steps. */
static void
assert_missing(const struct harness_resp *r, const char *const missing[], size_t n)
{
	static const char *const all[] = { "emailVerified", "verificationRequest", "billing" };

	acct_assert_iam(r, 400, "PREREQUISITES_NOT_MET");
	ck_assert_msg(json_object_array_length(acct_json(r, "errors")) == n,
	    "want %zu missing steps: %s", n, r->body);
	for (size_t i = 0; i < 3; i++) {
		int want = 0;

		for (size_t j = 0; j < n; j++)
			want |= strcmp(missing[j], all[i]) == 0;
		if (want)
			acct_assert_error(r, all[i], "prerequisite_missing");
		else
			ck_assert_msg(acct_check_error(r, all[i], "prerequisite_missing") != NULL,
			    "%s named though done: %s", all[i], r->body);
	}
}

static void
assert_status(const struct harness_resp *r, long status, const char *want)
{
	harness_assert_status(r, status);
	harness_assert_common(r);
	ck_assert_msg(json_object_get_boolean(acct_json(r, "success")), "%s", r->body);
	ck_assert_msg(acct_str(r, "status") && strcmp(acct_str(r, "status"), want) == 0,
	    "status is not %s: %s", want, r->body);
}

/* ------------------------------------------------------------------ */
/* verification-request (development stack)                            */

START_TEST(verification_request_ok)
{
	struct acct_mail mb;
	struct acct_user u, v;
	struct harness_resp *r;
	char *row;

	acct_mail_start(&mb);
	acct_new_user(&u, "form-ok", &mb);
	r = acct_post(FORM_PATH, u.access, FORM_OK);
	acct_assert_outcome(r, 1, NULL);
	harness_resp_free(r);
	row = acct_sql_value("SELECT company_name || '|' || website || '|' || use_case || '|' ||"
	    " country || '|' || contact_name FROM verification_requests WHERE user_id = $1",
	    u.user_id, NULL, NULL);
	ck_assert_pstr_eq(row, "Acme Utilities|https://acme.example|pay household bills|US|"
	    "Ada Lovelace");
	free(row);

	/* once only */
	r = acct_post(FORM_PATH, u.access, FORM_OK);
	harness_assert_iam(r, 400);
	harness_resp_free(r);

	/* snake_case spellings; website is optional (absent or null) */
	acct_new_user(&v, "form-snake", &mb);
	r = acct_post(FORM_PATH, v.access, "{\"company_name\":\"B Co\",\"use_case\":\"x\","
	    "\"country\":\"DE\",\"contact_name\":\"Bea\",\"website\":null}");
	acct_assert_outcome(r, 1, NULL);
	harness_resp_free(r);
	ck_assert_int_eq(acct_sql_int("SELECT count(*) FROM verification_requests"
	    " WHERE user_id = $1 AND website IS NULL AND company_name = 'B Co'",
	    v.user_id, NULL, NULL), 1);
	acct_mail_stop(&mb);
}
END_TEST

static const struct {
	const char	*body;		/* NULL: no body; "@L@" → 201 'a' */
	const char	*error_code;
	const char	*field;
	const char	*code;
} form_bad[] = {
	{ "{\"website\":\"https://a.example\",\"useCase\":\"x\",\"country\":\"US\","
	  "\"contactName\":\"A\"}", "VALIDATION_ERROR", "companyName", "required" },
	{ "{\"companyName\":\"A\",\"useCase\":\"x\",\"country\":\"usa\",\"contactName\":\"A\"}",
	  "VALIDATION_ERROR", "country", "too_long" },
	{ "{\"companyName\":\"A\",\"useCase\":\"x\",\"country\":\"us\",\"contactName\":\"A\"}",
	  "VALIDATION_ERROR", "country", "invalid_format" },
	{ "{\"companyName\":\"A\",\"useCase\":\"x\",\"country\":\"U1\",\"contactName\":\"A\"}",
	  "VALIDATION_ERROR", "country", "invalid_format" },
	{ "{\"companyName\":\"A\",\"useCase\":\"x\",\"country\":840,\"contactName\":\"A\"}",
	  "VALIDATION_ERROR", "country", "invalid_type" },
	{ "{\"companyName\":\"A\",\"useCase\":\"x\",\"country\":\"US\",\"contactName\":\"A\","
	  "\"website\":\"not a url\"}", "VALIDATION_ERROR", "website", "invalid_format" },
	{ "{\"companyName\":\"A\",\"useCase\":\"x\",\"country\":\"US\",\"contactName\":\"A\","
	  "\"website\":\"ftp://files.example\"}", "VALIDATION_ERROR", "website", "invalid_format" },
	{ "{\"companyName\":\"A\",\"useCase\":\"x\",\"country\":\"US\",\"contactName\":\"A\","
	  "\"website\":\"https://\"}", "VALIDATION_ERROR", "website", "invalid_format" },
	{ "{\"companyName\":\"A\",\"country\":\"US\",\"contactName\":\"A\"}",
	  "VALIDATION_ERROR", "useCase", "required" },
	{ "{\"companyName\":\"A\",\"useCase\":\"x\",\"country\":\"US\",\"contactName\":\"\"}",
	  "VALIDATION_ERROR", "contactName", "too_short" },
	{ "{\"companyName\":\"@L@\",\"useCase\":\"x\",\"country\":\"US\",\"contactName\":\"A\"}",
	  "VALIDATION_ERROR", "companyName", "too_long" },
	{ "{\"companyName\":[\"A\"],\"useCase\":\"x\",\"country\":\"US\",\"contactName\":\"A\"}",
	  "VALIDATION_ERROR", "companyName", "invalid_type" },
	{ "{\"companyName\":\"A\",\"useCase\":\"x\",\"country\":\"US\",\"contactName\":\"A\","
	  "\"verified\":true}", "VALIDATION_ERROR", "verified", "unknown_field" },
	{ "{\"companyName\":\"A\",\"company_name\":\"B\",\"useCase\":\"x\",\"country\":\"US\","
	  "\"contactName\":\"A\"}", "VALIDATION_ERROR", "companyName", "duplicate_field" },
	{ NULL, "VALIDATION_ERROR", "companyName", "required" },
	{ "{\"companyName\":\"A\xff\",\"useCase\":\"x\",\"country\":\"US\",\"contactName\":\"A\"}",
	  "INVALID_UTF8", NULL, NULL },
	{ "{\"companyName\":\"A\",", "INVALID_JSON", NULL, NULL },
};

/* Each bad form is refused and stores nothing; a good one still goes in. */
START_TEST(verification_request_bad_input)
{
	struct acct_mail mb;
	struct acct_user u;
	struct harness_resp *r;

	acct_mail_start(&mb);
	acct_new_user(&u, "form-bad", &mb);
	for (size_t i = 0; i < sizeof(form_bad) / sizeof(form_bad[0]); i++) {
		const char *t = form_bad[i].body, *at = t ? strstr(t, "@L@") : NULL, *m;
		char *body = NULL;

		if (t != NULL) {
			ck_assert_ptr_nonnull(body = malloc(strlen(t) + 202));
			if (at == NULL) {
				strcpy(body, t);
			} else {
				memcpy(body, t, (size_t)(at - t));
				memset(body + (at - t), 'a', 201);
				strcpy(body + (at - t) + 201, at + 3);
			}
		}
		r = acct_post(FORM_PATH, u.access, body);
		m = acct_check_iam(r, 400, form_bad[i].error_code);
		ck_assert_msg(m == NULL, "%s: %s", t ? t : "(no body)", m);
		if (form_bad[i].field != NULL) {
			m = acct_check_error(r, form_bad[i].field, form_bad[i].code);
			ck_assert_msg(m == NULL, "%s: %s", t ? t : "(no body)", m);
		}
		harness_resp_free(r);
		free(body);
	}
	ck_assert_int_eq(acct_sql_int("SELECT count(*) FROM verification_requests WHERE user_id = $1",
	    u.user_id, NULL, NULL), 0);
	submit_form(&u);
	acct_mail_stop(&mb);
}
END_TEST

START_TEST(verification_request_unauthenticated)
{
	struct harness_resp *r = acct_post(FORM_PATH, NULL, FORM_OK);

	acct_assert_iam(r, 401, "UNAUTHORIZED");
	harness_resp_free(r);
	r = acct_post(FORM_PATH, "abc.def.ghi", FORM_OK);
	acct_assert_iam(r, 401, "UNAUTHORIZED");
	harness_resp_free(r);
	ck_assert_int_eq(acct_sql_int("SELECT count(*) FROM verification_requests"
	    " WHERE company_name = 'Acme Utilities' AND user_id NOT IN (SELECT id FROM users)",
	    NULL, NULL, NULL), 0);
}
END_TEST

/* The company named on the form is the profile's companyName (me). */
START_TEST(verification_request_sets_company_name)
{
	struct acct_mail mb;
	struct acct_user u;
	struct harness_resp *r;

	acct_mail_start(&mb);
	acct_new_user(&u, "form-company", &mb);
	submit_form(&u);
	r = acct_get(ME_PATH, u.access);
	acct_assert_success(r);
	ck_assert_msg(acct_str(r, "user.companyName") != NULL &&
	    strcmp(acct_str(r, "user.companyName"), "Acme Utilities") == 0,
	    "me.companyName after the verification form: %s", r->body);
	harness_resp_free(r);
	acct_mail_stop(&mb);
}
END_TEST

/* ------------------------------------------------------------------ */
/* request-live-access (development stack)                             */

START_TEST(live_access_granted_in_development)
{
	static const char *const m3[] = { "emailVerified", "verificationRequest", "billing" };
	static const char *const m2[] = { "verificationRequest", "billing" };
	static const char *const m1[] = { "billing" };
	struct acct_mail mb;
	struct acct_user u;
	struct harness_resp *r;

	acct_mail_start(&mb);
	acct_new_user(&u, "live-dev", &mb);
	r = acct_post(LIVE_PATH, u.access, NULL);
	assert_missing(r, m3, 3);
	harness_resp_free(r);
	acct_verify_email(&u, &mb);
	r = acct_post(LIVE_PATH, u.access, NULL);
	assert_missing(r, m2, 2);
	harness_resp_free(r);
	submit_form(&u);
	r = acct_post(LIVE_PATH, u.access, NULL);
	assert_missing(r, m1, 1);
	harness_resp_free(r);

	ck_assert_int_eq(billing_done(u.email), 0);
	r = acct_post(LIVE_PATH, u.access, NULL);
	assert_status(r, 200, "granted");
	harness_resp_free(r);
	ck_assert_int_eq(acct_sql_int("SELECT count(*) FROM users WHERE id = $1"
	    " AND live_access = 'granted'", u.user_id, NULL, NULL), 1);
	/* asking again: still granted, nothing queued */
	r = acct_post(LIVE_PATH, u.access, NULL);
	assert_status(r, 200, "granted");
	harness_resp_free(r);
	ck_assert_int_eq(acct_sql_int("SELECT count(*) FROM live_access_requests WHERE user_id = $1",
	    u.user_id, NULL, NULL), 0);
	acct_mail_stop(&mb);
}
END_TEST

/* The prerequisites in another order: billing (by user id) and the form
 * first, the e-mail last. */
START_TEST(live_access_any_order)
{
	static const char *const m1[] = { "emailVerified" };
	struct acct_mail mb;
	struct acct_user u;
	struct harness_resp *r;

	acct_mail_start(&mb);
	acct_new_user(&u, "live-order", &mb);
	ck_assert_int_eq(billing_done(u.user_id), 0);
	submit_form(&u);
	r = acct_post(LIVE_PATH, u.access, NULL);
	assert_missing(r, m1, 1);
	harness_resp_free(r);
	acct_verify_email(&u, &mb);
	r = acct_post(LIVE_PATH, u.access, NULL);
	assert_status(r, 200, "granted");
	harness_resp_free(r);
	acct_mail_stop(&mb);
}
END_TEST

/* request-live-access takes no body (route table: "NULL: no body
 * accepted"): a member is unknown, and nothing is granted by it. */
START_TEST(live_access_refuses_a_body)
{
	struct acct_mail mb;
	struct acct_user u;
	struct harness_resp *r;

	acct_mail_start(&mb);
	acct_new_user(&u, "live-body", &mb);
	r = acct_post(LIVE_PATH, u.access, "{\"force\":true}");
	acct_assert_iam(r, 400, "VALIDATION_ERROR");
	acct_assert_error(r, "force", "unknown_field");
	harness_resp_free(r);
	r = acct_post(LIVE_PATH, u.access, "{\"force\":");
	acct_assert_iam(r, 400, "INVALID_JSON");
	harness_resp_free(r);
	acct_mail_stop(&mb);
}
END_TEST

START_TEST(live_access_unauthenticated)
{
	struct harness_resp *r = acct_post(LIVE_PATH, NULL, NULL);

	acct_assert_iam(r, 401, "UNAUTHORIZED");
	harness_resp_free(r);
	r = acct_call("GET", LIVE_PATH, NULL, NULL, NULL);
	harness_assert_iam(r, 405);
	harness_resp_free(r);
}
END_TEST

START_TEST(bdsctl_operator_errors)
{
	const char *const usage[] = { "billing", "finished", "x@example.test", NULL };
	const char *const nobody[] = { "billing", "done", "nobody@example.test", NULL };
	const char *const approve_none[] = { "live-access", "approve", "nobody@example.test", NULL };
	const char *const bad_verb[] = { "live-access", "grant", "x@example.test", NULL };
	char *out;

	ck_assert_int_ne(bdsctl(usage, NULL), 0);
	ck_assert_int_ne(bdsctl(nobody, &out), 0);
	ck_assert_msg(strstr(out, "nobody@example.test") != NULL, "bdsctl said: %s", out);
	free(out);
	ck_assert_int_ne(bdsctl(approve_none, NULL), 0);
	ck_assert_int_ne(bdsctl(bad_verb, NULL), 0);
}
END_TEST

/* ------------------------------------------------------------------ */
/* request-live-access (production stack)                              */

static int
listed(const char *email)
{
	const char *const args[] = { "live-access", "list", NULL };
	char *out;
	int found;

	ck_assert_int_eq(bdsctl(args, &out), 0);
	found = strstr(out, email) != NULL;
	ck_assert_msg(!found || strstr(out, "pending") != NULL, "list: %s", out);
	free(out);
	return found;
}

START_TEST(live_access_queued_then_approved)
{
	struct acct_mail mb;
	struct acct_user u;
	struct harness_resp *r;
	const char *approve[] = { "live-access", "approve", NULL, NULL };

	acct_mail_start(&mb);
	ready_user(&u, "live-approve", &mb);
	r = acct_post(LIVE_PATH, u.access, NULL);
	assert_status(r, 202, "pending");
	harness_resp_free(r);
	ck_assert_msg(listed(u.email), "bdsctl live-access list does not show %s", u.email);
	/* asking again while pending: still pending, one request */
	r = acct_post(LIVE_PATH, u.access, NULL);
	assert_status(r, 202, "pending");
	harness_resp_free(r);
	ck_assert_int_eq(acct_sql_int("SELECT count(*) FROM live_access_requests WHERE user_id = $1"
	    " AND status = 'pending'", u.user_id, NULL, NULL), 1);

	approve[2] = u.email;
	ck_assert_int_eq(bdsctl(approve, NULL), 0);
	ck_assert_msg(!listed(u.email), "still listed after approval");
	r = acct_post(LIVE_PATH, u.access, NULL);
	assert_status(r, 200, "granted");
	harness_resp_free(r);
	/* nothing left to approve */
	ck_assert_int_ne(bdsctl(approve, NULL), 0);
	acct_mail_stop(&mb);
}
END_TEST

START_TEST(live_access_denied_then_requeued)
{
	struct acct_mail mb;
	struct acct_user u;
	struct harness_resp *r;
	const char *deny[] = { "live-access", "deny", NULL, "website unreachable", NULL };
	const char *approve[] = { "live-access", "approve", NULL, NULL };
	char *v;

	acct_mail_start(&mb);
	ready_user(&u, "live-deny", &mb);
	r = acct_post(LIVE_PATH, u.access, NULL);
	assert_status(r, 202, "pending");
	harness_resp_free(r);
	deny[2] = u.user_id;		/* by id this time */
	ck_assert_int_eq(bdsctl(deny, NULL), 0);
	ck_assert_msg(!listed(u.email), "still listed after denial");
	v = acct_sql_value("SELECT q.status || '|' || q.reason || '|' || u.live_access"
	    " FROM live_access_requests q JOIN users u ON u.id = q.user_id WHERE q.user_id = $1",
	    u.user_id, NULL, NULL);
	ck_assert_pstr_eq(v, "denied|website unreachable|denied");
	free(v);
	/* not granted: a production secret stays out of reach; asking again
	 * queues a fresh request */
	r = acct_post(LIVE_PATH, u.access, NULL);
	assert_status(r, 202, "pending");
	harness_resp_free(r);
	ck_assert_msg(listed(u.email), "not queued again after a denial");
	approve[2] = u.email;
	ck_assert_int_eq(bdsctl(approve, NULL), 0);
	r = acct_post(LIVE_PATH, u.access, NULL);
	assert_status(r, 200, "granted");
	harness_resp_free(r);
	acct_mail_stop(&mb);
}
END_TEST

START_TEST(live_access_prerequisites_in_production)
{
	static const char *const m3[] = { "emailVerified", "verificationRequest", "billing" };
	struct acct_mail mb;
	struct acct_user u;
	struct harness_resp *r;

	acct_mail_start(&mb);
	acct_new_user(&u, "live-prod-prereq", &mb);
	r = acct_post(LIVE_PATH, u.access, NULL);
	assert_missing(r, m3, 3);
	harness_resp_free(r);
	ck_assert_msg(!listed(u.email), "queued without prerequisites");
	acct_mail_stop(&mb);
}
END_TEST

/* ------------------------------------------------------------------ */

static Suite *
accounts_live_suite(void)
{
	Suite *s = suite_create("e2e_accounts_live");
	TCase *tc;

	tc = tcase_create("development");
	tcase_add_unchecked_fixture(tc, acct_stack_development, harness_fixture_stop);
	tcase_add_checked_fixture(tc, acct_setup, acct_teardown);
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, verification_request_ok);
	tcase_add_test(tc, verification_request_bad_input);
	tcase_add_test(tc, verification_request_unauthenticated);
	tcase_add_test(tc, verification_request_sets_company_name);
	tcase_add_test(tc, live_access_granted_in_development);
	tcase_add_test(tc, live_access_any_order);
	tcase_add_test(tc, live_access_refuses_a_body);
	tcase_add_test(tc, live_access_unauthenticated);
	tcase_add_test(tc, bdsctl_operator_errors);
	suite_add_tcase(s, tc);

	tc = tcase_create("production");
	tcase_add_unchecked_fixture(tc, acct_stack_production, harness_fixture_stop);
	tcase_add_checked_fixture(tc, acct_setup, acct_teardown);
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, live_access_queued_then_approved);
	tcase_add_test(tc, live_access_denied_then_requeued);
	tcase_add_test(tc, live_access_prerequisites_in_production);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return harness_run_suite(accounts_live_suite());
}
