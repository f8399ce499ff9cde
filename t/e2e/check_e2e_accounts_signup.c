/*
 * Developer accounts end to end, part 1: the legal registry, sign-up,
 * confirmation and sign-in, through nginx on the api host, with the
 * confirmation codes read from what bds-deliver really sent over SMTP to
 * the local sink. One stack (mail_transport = smtp); every test starts
 * with the standard legal registry, no sign-in throttles and an empty
 * outbox (accounts.c), so tests do not depend on their order.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>
#include <json-c/json.h>

#include "accounts.h"
#include "harness.h"
#include "smtp_sink.h"

#define LEGAL_PATH	"/v1/iam/auth/legal-documents"
#define SIGNUP_PATH	"/v1/iam/auth/signup"
#define CONFIRM_PATH	"/v1/iam/auth/confirm-signup"
#define CONFIRM_SIGNIN	"/v1/iam/auth/confirm-and-signin"
#define SIGNIN_PATH	"/v1/iam/auth/signin"
#define ME_PATH		"/v1/iam/auth/me"
/* legal_url's default, ${link_url}/legal, with link_url's default: where the
 * link host's /legal/ pages are in production; here the harness's link host */
#define LEGAL_BASE	"https://link.bds.example/legal"

/* A code that is not `code` (k = 1..9 give different ones). */
static void
wrong_code(const char *code, int k, char out[7])
{
	unsigned v = ((unsigned)atoi(code) + (unsigned)k * 111111u) % 1000000u;

	snprintf(out, 7, "%06u", v);
}

static long long
users_with(const char *email)
{
	return acct_sql_int("SELECT count(*) FROM users WHERE email = lower($1)", email, NULL, NULL);
}

/* An ISO 8601 UTC timestamp with milliseconds, as the user fields carry. */
static int
is_iso(const char *s)
{
	int y, mo, d, h, mi, sec, ms;
	char z;

	return s != NULL && strlen(s) == 24 && sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2d.%3d%c",
	    &y, &mo, &d, &h, &mi, &sec, &ms, &z) == 8 && z == 'Z';
}

/* ------------------------------------------------------------------ */
/* legal-documents                                                     */

START_TEST(legal_empty_is_503)
{
	struct acct_user u;
	struct harness_resp *r;
	char *body;

	acct_legal_clear();
	r = acct_get(LEGAL_PATH, NULL);
	acct_assert_iam(r, 503, "LEGAL_REGISTRY_UNAVAILABLE");
	harness_resp_free(r);

	/* sign-up is closed too, and creates nothing */
	acct_user_init(&u, "legal-empty");
	body = acct_signup_body(&u);
	r = acct_post(SIGNUP_PATH, NULL, body);
	acct_assert_iam(r, 503, "LEGAL_REGISTRY_UNAVAILABLE");
	harness_resp_free(r);
	free(body);
	ck_assert_int_eq(users_with(u.email), 0);
}
END_TEST

/* A registry holding a document whose effective date is ahead: a new kind,
 * or a newer version of a kind already in effect. */
START_TEST(legal_not_yet_effective_is_503)
{
	static const char *const kinds[] = { "privacy", "terms" };
	struct acct_user u;
	struct harness_resp *r;
	char future[16], *body;

	snprintf(future, sizeof(future), "%s", acct_date(30));
	acct_legal_clear();
	ck_assert_int_eq(acct_legal_add("terms", "2026-01", "2026-01-01"), 0);
	ck_assert_int_eq(acct_legal_add(kinds[_i], "next", future), 0);
	r = acct_get(LEGAL_PATH, NULL);
	acct_assert_iam(r, 503, "LEGAL_REGISTRY_UNAVAILABLE");
	harness_resp_free(r);

	acct_user_init(&u, "legal-future");
	ck_assert_int_ge(asprintf(&body, "{\"email\":\"%s\",\"password\":\"%s\","
	    "\"legal_acceptances\":[{\"document_kind\":\"terms\",\"document_version\":"
	    "\"2026-01\",\"document_effective_date\":\"2026-01-01\",\"accepted\":true}]}",
	    u.email, u.password), 0);
	r = acct_post(SIGNUP_PATH, NULL, body);
	acct_assert_iam(r, 503, "LEGAL_REGISTRY_UNAVAILABLE");
	harness_resp_free(r);
	free(body);
	ck_assert_int_eq(users_with(u.email), 0);
}
END_TEST

/* 1 to 3 documents, each echoing exactly what was registered, with its
 * title and the url of its text. */
static const struct {
	const char	*kind, *version, *date, *title;
} legal_docs[] = {
	{ "terms", "2025-11", "2025-11-01", "Terms of Service" },
	{ "privacy", "p-7", "2024-02-29", "Privacy Policy" },
	{ "dpa", "3.1.4", "2026-06-30", "Data Processing Agreement" },
};

/* The document's url resolves: the same path on the stack's link host is
 * the text, an HTML page whose title starts with the document's. */
static void
assert_legal_text(const char *url, const char *kind, const char *title)
{
	struct harness_resp *r;
	const char *path;

	ck_assert_pstr_eq(url, harness_fmt(LEGAL_BASE "/%s", kind));
	path = url + strlen("https://link.bds.example");
	r = harness_get("link", path);
	harness_assert_status(r, 200);
	ck_assert_pstr_eq(harness_header(r, "Content-Type"), "text/html; charset=utf-8");
	ck_assert_msg(strstr(r->body, harness_fmt("<title>%s", title)) != NULL &&
	    strstr(r->body, harness_fmt("<h1>%s</h1>", title)) != NULL,
	    "%s: not the text of \"%s\": %.200s", path, title, r->body);
	harness_resp_free(r);
}

START_TEST(legal_documents_echo)
{
	size_t n = (size_t)_i, i, j;
	struct harness_resp *r;
	struct json_object *docs;

	acct_legal_clear();
	for (i = 0; i < n; i++)
		ck_assert_int_eq(acct_legal_add(legal_docs[i].kind, legal_docs[i].version,
		    legal_docs[i].date), 0);
	r = acct_get(LEGAL_PATH, NULL);
	harness_assert_status(r, 200);
	harness_assert_common(r);
	docs = acct_json(r, "documents");
	ck_assert_msg(docs != NULL && json_object_is_type(docs, json_type_array),
	    "no documents array: %s", r->body);
	ck_assert_uint_eq(json_object_array_length(docs), n);
	for (i = 0; i < n; i++) {
		int found = 0;

		for (j = 0; j < n; j++) {
			struct json_object *d = json_object_array_get_idx(docs, j), *k, *v, *e;
			struct json_object *t, *u;

			ck_assert(json_object_object_get_ex(d, "document_kind", &k));
			ck_assert(json_object_object_get_ex(d, "document_version", &v));
			ck_assert(json_object_object_get_ex(d, "document_effective_date", &e));
			ck_assert(json_object_object_get_ex(d, "title", &t));
			ck_assert(json_object_object_get_ex(d, "url", &u));
			ck_assert_int_eq(json_object_object_length(d), 5);
			if (strcmp(json_object_get_string(k), legal_docs[i].kind) != 0)
				continue;
			found++;
			ck_assert_str_eq(json_object_get_string(v), legal_docs[i].version);
			ck_assert_str_eq(json_object_get_string(e), legal_docs[i].date);
			ck_assert_str_eq(json_object_get_string(t), legal_docs[i].title);
			assert_legal_text(json_object_get_string(u), legal_docs[i].kind,
			    legal_docs[i].title);
		}
		ck_assert_msg(found == 1, "%s listed %d times: %s", legal_docs[i].kind, found,
		    r->body);
	}
	harness_resp_free(r);
}
END_TEST

/* Several versions per kind: only the newest effective one is current, and
 * sign-up must accept that one. */
START_TEST(legal_newest_version_per_kind)
{
	struct acct_mail mb;
	struct acct_user u;
	struct harness_resp *r;
	struct json_object *docs;
	char *body, *v;

	acct_legal_clear();
	ck_assert_int_eq(acct_legal_add("terms", "t-old", "2025-01-01"), 0);
	ck_assert_int_eq(acct_legal_add("terms", "t-new", "2026-03-01"), 0);
	ck_assert_int_eq(acct_legal_add("terms", "t-mid", "2025-06-01"), 0);	/* added last */
	ck_assert_int_eq(acct_legal_add("privacy", "p-1", "2024-01-01"), 0);
	ck_assert_int_eq(acct_legal_add("privacy", "p-2", "2026-01-01"), 0);
	r = acct_get(LEGAL_PATH, NULL);
	harness_assert_status(r, 200);
	docs = acct_json(r, "documents");
	ck_assert_msg(docs != NULL && json_object_array_length(docs) == 2, "%s", r->body);
	ck_assert_msg(strstr(r->body, "\"t-new\"") && strstr(r->body, "\"2026-03-01\"") &&
	    strstr(r->body, "\"p-2\"") && !strstr(r->body, "t-old") && !strstr(r->body, "t-mid") &&
	    !strstr(r->body, "\"p-1\""), "not the newest versions: %s", r->body);
	harness_resp_free(r);

	acct_mail_start(&mb);
	acct_user_init(&u, "legal-newest");
	/* an older terms version is refused, naming what is missing */
	r = acct_postf(SIGNUP_PATH, NULL, "{\"email\":\"%s\",\"password\":\"%s\","
	    "\"legal_acceptances\":["
	    "{\"document_kind\":\"terms\",\"document_version\":\"t-mid\","
	    "\"document_effective_date\":\"2025-06-01\",\"accepted\":true},"
	    "{\"document_kind\":\"privacy\",\"document_version\":\"p-2\","
	    "\"document_effective_date\":\"2026-01-01\",\"accepted\":true}]}",
	    u.email, u.password);
	acct_assert_iam(r, 400, "VALIDATION_ERROR");
	acct_assert_error(r, "legal_acceptances", "legal_acceptance_missing");
	/* and the old version's item itself names no current document */
	acct_assert_error(r, "legal_acceptances[0]", "unknown_document");
	ck_assert_uint_eq(json_object_array_length(acct_json(r, "errors")), 2);
	ck_assert_msg(strstr(acct_str(r, "errors.0.message"), "terms") &&
	    strstr(acct_str(r, "errors.0.message"), "t-new"), "%s", r->body);
	harness_resp_free(r);
	ck_assert_int_eq(users_with(u.email), 0);

	ck_assert_int_ge(asprintf(&body, "{\"email\":\"%s\",\"password\":\"%s\","
	    "\"legal_acceptances\":["
	    "{\"document_kind\":\"terms\",\"document_version\":\"t-new\","
	    "\"document_effective_date\":\"2026-03-01\",\"accepted\":true},"
	    "{\"document_kind\":\"privacy\",\"document_version\":\"p-2\","
	    "\"document_effective_date\":\"2026-01-01\",\"accepted\":true}]}",
	    u.email, u.password), 0);
	r = acct_post(SIGNUP_PATH, NULL, body);
	harness_assert_status(r, 201);
	harness_resp_free(r);
	free(body);
	v = acct_sql_value("SELECT string_agg(a.kind || ' ' || a.version, ',' ORDER BY a.kind)"
	    " FROM legal_acceptances a JOIN users u ON u.id = a.user_id WHERE u.email = $1",
	    u.email, NULL, NULL);
	ck_assert_pstr_eq(v, "privacy p-2,terms t-new");
	free(v);
	acct_mail_stop(&mb);
}
END_TEST

/* bdsctl legal add refuses what the registry cannot hold. */
START_TEST(legal_bdsctl_refuses_bad_input)
{
	const char *const usage[] = { "legal", "add", "terms", "v9", NULL };

	ck_assert_int_ne(acct_legal_add("eula", "1", "2025-01-01"), 0);
	ck_assert_int_ne(acct_legal_add("terms", "v9", "2026-13-01"), 0);
	ck_assert_int_ne(acct_legal_add("terms", "v9", "2026-02-30"), 0);
	ck_assert_int_ne(acct_legal_add("terms", ACCT_TERMS_VERSION, "2020-01-01"), 0);
	ck_assert_int_ne(harness_bdsctl(usage), 0);
	ck_assert_int_eq(acct_sql_int("SELECT count(*) FROM legal_documents", NULL, NULL, NULL), 3);
}
END_TEST

/*
 * The usage says DATE is YYYY-MM-DD. Anything else PostgreSQL happens to
 * parse must be refused too: "01/02/2026" is January or February by the
 * server's DateStyle, "yesterday" is not a date an operator means to
 * record for a legal document.
 */
static const char *const loose_dates[] = { "yesterday", "01/02/2026", "20260101",
	"Jan 5 2026", "2026-1-5" };

START_TEST(legal_bdsctl_date_is_strict)
{
	ck_assert_msg(acct_legal_add("terms", "v9", loose_dates[_i]) != 0,
	    "bdsctl legal add terms v9 \"%s\" was accepted (usage: YYYY-MM-DD)", loose_dates[_i]);
	ck_assert_int_eq(acct_sql_int("SELECT count(*) FROM legal_documents", NULL, NULL, NULL), 3);
}
END_TEST

/* ------------------------------------------------------------------ */
/* signup                                                              */

START_TEST(signup_created)
{
	struct acct_mail mb;
	struct acct_user u;
	const struct smtp_msg *m;
	struct harness_resp *r;
	char *v, *subject, mixed[200];

	acct_mail_start(&mb);
	acct_user_init(&u, "Signup-Created");
	/* the address as typed, mixed case; it is kept lower-cased */
	snprintf(mixed, sizeof(mixed), "%s", u.email);
	for (char *p = u.email; *p; p++)
		*p = (char)(*p >= 'A' && *p <= 'Z' ? *p - 'A' + 'a' : *p);
	r = acct_postf(SIGNUP_PATH, NULL, "{\"email\":\"%s\",\"password\":\"%s\","
	    "\"given_name\":\"Ada\",\"family_name\":\"Lovelace\",\"client_name\":\"Engine\","
	    "\"legal_acceptances\":%s,\"accepted_at\":\"2026-11-01T10:00:00Z\","
	    "\"acceptance_source\":\"web\"}", mixed, u.password, acct_acceptances_json);
	harness_assert_status(r, 201);
	harness_assert_common(r);
	ck_assert_msg(json_object_get_boolean(acct_json(r, "success")) &&
	    acct_str(r, "message") != NULL, "%s", r->body);
	ck_assert_msg(acct_str(r, "user_id") && strncmp(acct_str(r, "user_id"), "usr_", 4) == 0,
	    "user_id: %s", r->body);
	ck_assert_msg(acct_str(r, "client_id") && strncmp(acct_str(r, "client_id"), "cli_", 4) == 0,
	    "client_id: %s", r->body);
	snprintf(u.user_id, sizeof(u.user_id), "%s", acct_str(r, "user_id"));
	snprintf(u.client_id, sizeof(u.client_id), "%s", acct_str(r, "client_id"));
	harness_resp_free(r);

	/* the confirmation code arrives over SMTP, to the lower-cased address */
	m = acct_mail_code(&mb, u.email, u.code);
	ck_assert_uint_eq(strlen(u.code), 6);
	subject = smtp_msg_header(m, "Subject");
	ck_assert_msg(subject != NULL && *subject != '\0', "no Subject");
	free(subject);

	/* the user, unconfirmed, with an Argon2id hash; the first client */
	v = acct_sql_value("SELECT email || ' ' || (password_hash LIKE '$argon2id$%')::text"
	    " || ' ' || (confirmed_at IS NULL)::text || ' ' || email_verified::text || ' ' ||"
	    " given_name || ' ' || family_name FROM users WHERE id = $1", u.user_id, NULL, NULL);
	{
		char want[300];

		snprintf(want, sizeof(want), "%s true true false Ada Lovelace", u.email);
		ck_assert_pstr_eq(v, want);
	}
	free(v);
	v = acct_sql_value("SELECT user_id || ' ' || name FROM clients WHERE id = $1",
	    u.client_id, NULL, NULL);
	ck_assert_ptr_nonnull(v);
	ck_assert_msg(strncmp(v, u.user_id, strlen(u.user_id)) == 0 &&
	    strcmp(v + strlen(u.user_id), " Engine") == 0, "client row: %s", v);
	free(v);

	/* each acceptance recorded for audit: document, version, date, time,
	 * source and address */
	v = acct_sql_value("SELECT string_agg(kind || ' ' || version || ' ' || effective_date"
	    " || ' ' || (accepted_at = '2026-11-01T10:00:00Z')::text || ' ' || source || ' ' ||"
	    " coalesce(remote_addr, '-'), ',' ORDER BY kind) FROM legal_acceptances"
	    " WHERE user_id = $1", u.user_id, NULL, NULL);
	ck_assert_pstr_eq(v, "dpa " ACCT_DPA_VERSION " " ACCT_DPA_DATE " true web 127.0.0.1,"
	    "privacy " ACCT_PRIVACY_VERSION " " ACCT_PRIVACY_DATE " true web 127.0.0.1,"
	    "terms " ACCT_TERMS_VERSION " " ACCT_TERMS_DATE " true web 127.0.0.1");
	free(v);

	/* the code is stored hashed, expiring in about 24 hours */
	v = acct_sql_value("SELECT (length(code_hash) = 32)::text || ' ' ||"
	    " (position(convert_to($2, 'UTF8') IN code_hash) = 0)::text || ' ' ||"
	    " (expires_at BETWEEN now() + interval '23 hours' AND now() + interval '25 hours')::text"
	    " FROM email_codes WHERE user_id = $1 AND purpose = 'signup'", u.user_id, u.code, NULL);
	ck_assert_pstr_eq(v, "true true true");
	free(v);
	acct_mail_stop(&mb);
}
END_TEST

/* camelCase spellings are accepted; without acceptance_source the
 * acceptance is recorded as coming from the API. */
START_TEST(signup_camel_case_aliases)
{
	struct acct_mail mb;
	struct acct_user u;
	struct harness_resp *r;
	char *v;

	acct_mail_start(&mb);
	acct_user_init(&u, "signup-camel");
	r = acct_postf(SIGNUP_PATH, NULL, "{\"email\":\"%s\",\"password\":\"%s\","
	    "\"givenName\":\"Grace\",\"familyName\":\"Hopper\",\"clientName\":\"Cobol\","
	    "\"legalAcceptances\":["
	    "{\"documentKind\":\"terms\",\"documentVersion\":\"" ACCT_TERMS_VERSION "\","
	    "\"documentEffectiveDate\":\"" ACCT_TERMS_DATE "\",\"accepted\":true},"
	    "{\"documentKind\":\"privacy\",\"documentVersion\":\"" ACCT_PRIVACY_VERSION "\","
	    "\"documentEffectiveDate\":\"" ACCT_PRIVACY_DATE "\",\"accepted\":true},"
	    "{\"documentKind\":\"dpa\",\"documentVersion\":\"" ACCT_DPA_VERSION "\","
	    "\"documentEffectiveDate\":\"" ACCT_DPA_DATE "\",\"accepted\":true}]}",
	    u.email, u.password);
	harness_assert_status(r, 201);
	snprintf(u.user_id, sizeof(u.user_id), "%s", acct_str(r, "user_id"));
	harness_resp_free(r);
	v = acct_sql_value("SELECT u.given_name || ' ' || u.family_name || ' ' || c.name"
	    " FROM users u JOIN clients c ON c.user_id = u.id WHERE u.id = $1",
	    u.user_id, NULL, NULL);
	ck_assert_pstr_eq(v, "Grace Hopper Cobol");
	free(v);
	v = acct_sql_value("SELECT string_agg(source, ',') || ' ' || count(*) ||"
	    " ' ' || bool_and(accepted_at > now() - interval '1 minute')::text"
	    " FROM legal_acceptances WHERE user_id = $1", u.user_id, NULL, NULL);
	ck_assert_pstr_eq(v, "api,api,api 3 true");
	free(v);
	acct_mail_code(&mb, u.email, u.code);
	acct_mail_stop(&mb);
}
END_TEST

/* The older flat form (terms_accepted, terms_version, privacy_version)
 * while no DPA is current. */
START_TEST(signup_flat_legal_form)
{
	struct acct_user u;
	struct harness_resp *r;
	char *v;

	acct_legal_clear();
	ck_assert_int_eq(acct_legal_add("terms", "t1", "2025-01-01"), 0);
	ck_assert_int_eq(acct_legal_add("privacy", "p1", "2025-01-01"), 0);
	acct_user_init(&u, "signup-flat");
	r = acct_postf(SIGNUP_PATH, NULL, "{\"email\":\"%s\",\"password\":\"%s\","
	    "\"terms_accepted\":true,\"terms_version\":\"t0\",\"privacy_version\":\"p1\"}",
	    u.email, u.password);
	acct_assert_iam(r, 400, "VALIDATION_ERROR");
	acct_assert_error(r, "legal_acceptances", "legal_acceptance_missing");
	ck_assert_msg(strstr(r->body, "terms") != NULL, "%s", r->body);
	harness_resp_free(r);
	r = acct_postf(SIGNUP_PATH, NULL, "{\"email\":\"%s\",\"password\":\"%s\","
	    "\"terms_accepted\":false,\"terms_version\":\"t1\",\"privacy_version\":\"p1\"}",
	    u.email, u.password);
	acct_assert_iam(r, 400, "VALIDATION_ERROR");
	harness_resp_free(r);
	ck_assert_int_eq(users_with(u.email), 0);
	r = acct_postf(SIGNUP_PATH, NULL, "{\"email\":\"%s\",\"password\":\"%s\","
	    "\"terms_accepted\":true,\"terms_version\":\"t1\",\"privacy_version\":\"p1\"}",
	    u.email, u.password);
	harness_assert_status(r, 201);
	snprintf(u.user_id, sizeof(u.user_id), "%s", acct_str(r, "user_id"));
	harness_resp_free(r);
	v = acct_sql_value("SELECT string_agg(kind || ' ' || version, ',' ORDER BY kind)"
	    " FROM legal_acceptances WHERE user_id = $1", u.user_id, NULL, NULL);
	ck_assert_pstr_eq(v, "privacy p1,terms t1");
	free(v);
}
END_TEST

/* Every current document must be accepted, exactly as listed; the 400
 * names each one missing, and each item that names no current document
 * (legal_acceptances[i] unknown_document). */
#define ACCEPT_ALL \
	"{\"document_kind\":\"terms\",\"document_version\":\"" ACCT_TERMS_VERSION "\"," \
	"\"document_effective_date\":\"" ACCT_TERMS_DATE "\",\"accepted\":true}," \
	"{\"document_kind\":\"privacy\",\"document_version\":\"" ACCT_PRIVACY_VERSION "\"," \
	"\"document_effective_date\":\"" ACCT_PRIVACY_DATE "\",\"accepted\":true}," \
	"{\"document_kind\":\"dpa\",\"document_version\":\"" ACCT_DPA_VERSION "\"," \
	"\"document_effective_date\":\"" ACCT_DPA_DATE "\",\"accepted\":true}"
static const struct {
	const char	*name;
	const char	*legal;		/* members after email and password */
	const char	*missing[3];	/* kinds named */
	const char	*unknown;	/* the item named unknown_document, if any */
} legal_missing[] = {
	{ "no acceptance at all", "", { "terms", "privacy", "dpa" } },
	{ "empty array", ",\"legal_acceptances\":[]", { "terms", "privacy", "dpa" } },
	{ "terms not accepted", ",\"legal_acceptances\":["
	  "{\"document_kind\":\"terms\",\"document_version\":\"" ACCT_TERMS_VERSION "\","
	  "\"document_effective_date\":\"" ACCT_TERMS_DATE "\",\"accepted\":false},"
	  "{\"document_kind\":\"privacy\",\"document_version\":\"" ACCT_PRIVACY_VERSION "\","
	  "\"document_effective_date\":\"" ACCT_PRIVACY_DATE "\",\"accepted\":true},"
	  "{\"document_kind\":\"dpa\",\"document_version\":\"" ACCT_DPA_VERSION "\","
	  "\"document_effective_date\":\"" ACCT_DPA_DATE "\",\"accepted\":true}]",
	  { "terms" } },
	{ "privacy wrong version", ",\"legal_acceptances\":["
	  "{\"document_kind\":\"terms\",\"document_version\":\"" ACCT_TERMS_VERSION "\","
	  "\"document_effective_date\":\"" ACCT_TERMS_DATE "\",\"accepted\":true},"
	  "{\"document_kind\":\"privacy\",\"document_version\":\"2025-01\","
	  "\"document_effective_date\":\"" ACCT_PRIVACY_DATE "\",\"accepted\":true},"
	  "{\"document_kind\":\"dpa\",\"document_version\":\"" ACCT_DPA_VERSION "\","
	  "\"document_effective_date\":\"" ACCT_DPA_DATE "\",\"accepted\":true}]",
	  { "privacy" }, "legal_acceptances[1]" },
	{ "dpa absent", ",\"legal_acceptances\":["
	  "{\"document_kind\":\"terms\",\"document_version\":\"" ACCT_TERMS_VERSION "\","
	  "\"document_effective_date\":\"" ACCT_TERMS_DATE "\",\"accepted\":true},"
	  "{\"document_kind\":\"privacy\",\"document_version\":\"" ACCT_PRIVACY_VERSION "\","
	  "\"document_effective_date\":\"" ACCT_PRIVACY_DATE "\",\"accepted\":true}]",
	  { "dpa" } },
	{ "terms wrong date", ",\"legal_acceptances\":["
	  "{\"document_kind\":\"terms\",\"document_version\":\"" ACCT_TERMS_VERSION "\","
	  "\"document_effective_date\":\"2026-01-02\",\"accepted\":true},"
	  "{\"document_kind\":\"privacy\",\"document_version\":\"" ACCT_PRIVACY_VERSION "\","
	  "\"document_effective_date\":\"" ACCT_PRIVACY_DATE "\",\"accepted\":true},"
	  "{\"document_kind\":\"dpa\",\"document_version\":\"" ACCT_DPA_VERSION "\","
	  "\"document_effective_date\":\"" ACCT_DPA_DATE "\",\"accepted\":true}]",
	  { "terms" }, "legal_acceptances[0]" },
	{ "a kind the registry has not", ",\"legal_acceptances\":[" ACCEPT_ALL ","
	  "{\"document_kind\":\"cookies\",\"document_version\":\"" ACCT_TERMS_VERSION "\","
	  "\"document_effective_date\":\"" ACCT_TERMS_DATE "\",\"accepted\":true}]",
	  { NULL }, "legal_acceptances[3]" },
	{ "flat form while a DPA is current", ",\"terms_accepted\":true,"
	  "\"terms_version\":\"" ACCT_TERMS_VERSION "\","
	  "\"privacy_version\":\"" ACCT_PRIVACY_VERSION "\"", { "dpa" } },
};

START_TEST(signup_legal_acceptance_missing)
{
	struct acct_user u;
	struct harness_resp *r;
	size_t want = 0;

	acct_user_init(&u, "signup-legal");
	r = acct_postf(SIGNUP_PATH, NULL, "{\"email\":\"%s\",\"password\":\"%s\"%s}",
	    u.email, u.password, legal_missing[_i].legal);
	acct_assert_iam(r, 400, "VALIDATION_ERROR");
	for (size_t k = 0; k < 3 && legal_missing[_i].missing[k] != NULL; k++) {
		const char *kind = legal_missing[_i].missing[k];
		const char *version = strcmp(kind, "terms") == 0 ? ACCT_TERMS_VERSION :
		    strcmp(kind, "privacy") == 0 ? ACCT_PRIVACY_VERSION : ACCT_DPA_VERSION;
		struct json_object *errs = acct_json(r, "errors");
		int named = 0;

		for (size_t i = 0; i < json_object_array_length(errs); i++) {
			struct json_object *it = json_object_array_get_idx(errs, i), *f, *c, *m;

			if (json_object_object_get_ex(it, "field", &f) &&
			    json_object_object_get_ex(it, "code", &c) &&
			    json_object_object_get_ex(it, "message", &m) &&
			    strcmp(json_object_get_string(f), "legal_acceptances") == 0 &&
			    strcmp(json_object_get_string(c), "legal_acceptance_missing") == 0 &&
			    strstr(json_object_get_string(m), kind) != NULL &&
			    strstr(json_object_get_string(m), version) != NULL)
				named = 1;
		}
		ck_assert_msg(named, "%s: %s %s not named: %s", legal_missing[_i].name, kind,
		    version, r->body);
		want++;
	}
	if (legal_missing[_i].unknown != NULL) {
		acct_assert_error(r, legal_missing[_i].unknown, "unknown_document");
		want++;
	}
	ck_assert_msg(json_object_array_length(acct_json(r, "errors")) == want,
	    "%s: want %zu errors: %s", legal_missing[_i].name, want, r->body);
	harness_resp_free(r);
	ck_assert_int_eq(users_with(u.email), 0);
}
END_TEST

/* Each rule of the password policy on its own. */
static const struct {
	const char	*name;
	const char	*password;
} weak[] = {
	{ "11 characters", "Sh0rt!Pass1" },
	{ "no upper case", "no-upper-case-17" },
	{ "no lower case", "NO-LOWER-CASE-17" },
	{ "no digit", "No-Digits-Here!" },
	{ "no special", "NoSpecials12345" },
	{ "11 code points, 13 bytes", "\xc3\x84\xc3\xa4Short1!xy" },
};

START_TEST(signup_weak_password)
{
	struct acct_user u;
	struct harness_resp *r;

	acct_user_init(&u, "signup-weak");
	r = acct_postf(SIGNUP_PATH, NULL, "{\"email\":\"%s\",\"password\":\"%s\","
	    "\"legal_acceptances\":%s}", u.email, weak[_i].password, acct_acceptances_json);
	acct_assert_iam(r, 400, "VALIDATION_ERROR");
	acct_assert_error(r, "password", "weak_password");
	harness_resp_free(r);
	ck_assert_int_eq(users_with(u.email), 0);
}
END_TEST

/* Exactly 12 characters with every class is enough. */
START_TEST(signup_password_boundary)
{
	struct acct_user u;
	struct harness_resp *r;

	acct_user_init(&u, "signup-12");
	snprintf(u.password, sizeof(u.password), "Abcdefgh12!x");
	r = acct_postf(SIGNUP_PATH, NULL, "{\"email\":\"%s\",\"password\":\"%s\","
	    "\"legal_acceptances\":%s}", u.email, u.password, acct_acceptances_json);
	harness_assert_status(r, 201);
	harness_resp_free(r);
}
END_TEST

START_TEST(signup_duplicate_email)
{
	struct acct_user u;
	struct harness_resp *r;
	char upper[160], *body;

	acct_user_init(&u, "signup-dup");
	body = acct_signup_body(&u);
	r = acct_post(SIGNUP_PATH, NULL, body);
	harness_assert_status(r, 201);
	harness_resp_free(r);

	r = acct_post(SIGNUP_PATH, NULL, body);
	acct_assert_iam(r, 400, "EMAIL_ALREADY_EXISTS");
	acct_assert_error(r, "email", "already_exists");
	harness_resp_free(r);
	free(body);

	/* the same address in other case is the same account */
	for (size_t i = 0; i <= strlen(u.email); i++)
		upper[i] = (char)(u.email[i] >= 'a' && u.email[i] <= 'z' ?
		    u.email[i] - 'a' + 'A' : u.email[i]);
	r = acct_postf(SIGNUP_PATH, NULL, "{\"email\":\"%s\",\"password\":\"Another-Pass-99\","
	    "\"legal_acceptances\":%s}", upper, acct_acceptances_json);
	acct_assert_iam(r, 400, "EMAIL_ALREADY_EXISTS");
	harness_resp_free(r);
	ck_assert_int_eq(users_with(u.email), 1);
	ck_assert_int_eq(acct_sql_int("SELECT count(*) FROM clients c JOIN users u ON"
	    " u.id = c.user_id WHERE u.email = $1", u.email, NULL, NULL), 1);
}
END_TEST

/*
 * Bad input. "@L@" in a body is replaced by `fill` characters 'a'. The
 * valid members are a password and the acceptances; the address used is
 * bad-input@example.test, which must never become an account.
 */
#define OK_REST "\"password\":\"Valid-Pass-123\",\"legal_acceptances\":" \
	"[{\"document_kind\":\"terms\",\"document_version\":\"" ACCT_TERMS_VERSION "\"," \
	"\"document_effective_date\":\"" ACCT_TERMS_DATE "\",\"accepted\":true}," \
	"{\"document_kind\":\"privacy\",\"document_version\":\"" ACCT_PRIVACY_VERSION "\"," \
	"\"document_effective_date\":\"" ACCT_PRIVACY_DATE "\",\"accepted\":true}," \
	"{\"document_kind\":\"dpa\",\"document_version\":\"" ACCT_DPA_VERSION "\"," \
	"\"document_effective_date\":\"" ACCT_DPA_DATE "\",\"accepted\":true}]"
#define BAD_EMAIL "\"email\":\"bad-input@example.test\""

static const struct {
	const char	*name;
	const char	*body;		/* NULL: no body */
	size_t		 fill;
	const char	*error_code;
	const char	*field;		/* NULL: no errors[] item expected */
	const char	*code;
} bad_input[] = {
	{ "no body", NULL, 0, "VALIDATION_ERROR", "email", "required" },
	{ "missing email", "{" OK_REST "}", 0, "VALIDATION_ERROR", "email", "required" },
	{ "missing password", "{" BAD_EMAIL ",\"legal_acceptances\":[]}", 0,
	  "VALIDATION_ERROR", "password", "required" },
	{ "email a number", "{\"email\":12345," OK_REST "}", 0,
	  "VALIDATION_ERROR", "email", "invalid_type" },
	{ "email null", "{\"email\":null," OK_REST "}", 0,
	  "VALIDATION_ERROR", "email", "invalid_type" },
	{ "password a number", "{" BAD_EMAIL ",\"password\":123456789012}", 0,
	  "VALIDATION_ERROR", "password", "invalid_type" },
	{ "legal_acceptances a string", "{" BAD_EMAIL ",\"password\":\"Valid-Pass-123\","
	  "\"legal_acceptances\":\"terms\"}", 0, "VALIDATION_ERROR", "legal_acceptances",
	  "invalid_type" },
	{ "accepted a string", "{" BAD_EMAIL ",\"password\":\"Valid-Pass-123\","
	  "\"legal_acceptances\":[{\"document_kind\":\"terms\",\"document_version\":\"x\","
	  "\"document_effective_date\":\"2026-01-01\",\"accepted\":\"yes\"}]}", 0,
	  "VALIDATION_ERROR", "legal_acceptances[0].accepted", "invalid_type" },
	{ "acceptance date not a date", "{" BAD_EMAIL ",\"password\":\"Valid-Pass-123\","
	  "\"legal_acceptances\":[{\"document_kind\":\"terms\",\"document_version\":\"x\","
	  "\"document_effective_date\":\"01/01/2026\",\"accepted\":true}]}", 0,
	  "VALIDATION_ERROR", "legal_acceptances[0].document_effective_date", "invalid_format" },
	{ "given_name a number", "{" BAD_EMAIL ",\"given_name\":7," OK_REST "}", 0,
	  "VALIDATION_ERROR", "given_name", "invalid_type" },
	{ "terms_accepted a string", "{" BAD_EMAIL ",\"terms_accepted\":\"true\"," OK_REST "}", 0,
	  "VALIDATION_ERROR", "terms_accepted", "invalid_type" },
	{ "email over 254", "{\"email\":\"@L@@example.test\"," OK_REST "}", 242,
	  "VALIDATION_ERROR", "email", "too_long" },
	{ "given_name over 100", "{" BAD_EMAIL ",\"given_name\":\"@L@\"," OK_REST "}", 101,
	  "VALIDATION_ERROR", "given_name", "too_long" },
	{ "family_name over 100", "{" BAD_EMAIL ",\"familyName\":\"@L@\"," OK_REST "}", 101,
	  "VALIDATION_ERROR", "familyName", "too_long" },
	{ "password over 1024", "{" BAD_EMAIL ",\"password\":\"Aa1!@L@\"}", 1021,
	  "VALIDATION_ERROR", "password", "too_long" },
	{ "email without @", "{\"email\":\"bad-input.example.test\"," OK_REST "}", 0,
	  "VALIDATION_ERROR", "email", "invalid_format" },
	{ "email with a space", "{\"email\":\"bad input@example.test\"," OK_REST "}", 0,
	  "VALIDATION_ERROR", "email", "invalid_format" },
	{ "email without domain", "{\"email\":\"bad-input@\"," OK_REST "}", 0,
	  "VALIDATION_ERROR", "email", "invalid_format" },
	{ "accepted_at not a timestamp", "{" BAD_EMAIL ",\"accepted_at\":\"yesterday\","
	  OK_REST "}", 0, "VALIDATION_ERROR", "accepted_at", "invalid_format" },
	{ "unknown field", "{" BAD_EMAIL ",\"role\":\"admin\"," OK_REST "}", 0,
	  "VALIDATION_ERROR", "role", "unknown_field" },
	{ "unknown field in an acceptance", "{" BAD_EMAIL ",\"password\":\"Valid-Pass-123\","
	  "\"legal_acceptances\":[{\"document_kind\":\"terms\",\"document_version\":\"x\","
	  "\"document_effective_date\":\"2026-01-01\",\"accepted\":true,\"signed\":1}]}", 0,
	  "VALIDATION_ERROR", "legal_acceptances[0].signed", "unknown_field" },
	{ "both spellings", "{" BAD_EMAIL ",\"given_name\":\"A\",\"givenName\":\"B\","
	  OK_REST "}", 0, "VALIDATION_ERROR", "given_name", "duplicate_field" },
	{ "body an array", "[1,2]", 0, "VALIDATION_ERROR", "", "invalid_type" },
	{ "NUL escaped in the password", "{" BAD_EMAIL ",\"password\":\"Valid-Pass-123\\u0000x\","
	  "\"legal_acceptances\":[]}", 0, "VALIDATION_ERROR", "password", "invalid_utf8" },
	{ "invalid UTF-8 in a string", "{" BAD_EMAIL ",\"given_name\":\"caf\xff\","
	  OK_REST "}", 0, "INVALID_UTF8", NULL, NULL },
	{ "overlong UTF-8", "{" BAD_EMAIL ",\"given_name\":\"\xc0\xaf\"," OK_REST "}", 0,
	  "INVALID_UTF8", NULL, NULL },
	{ "UTF-16 surrogate", "{" BAD_EMAIL ",\"given_name\":\"\xed\xa0\x80\"," OK_REST "}", 0,
	  "INVALID_UTF8", NULL, NULL },
	{ "malformed JSON", "{\"email\":\"bad-input@example.test\",", 0,
	  "INVALID_JSON", NULL, NULL },
	{ "trailing garbage", "{" BAD_EMAIL "," OK_REST "} {}", 0, "INVALID_JSON", NULL, NULL },
	{ "single quotes", "{'email':'bad-input@example.test'}", 0, "INVALID_JSON", NULL, NULL },
};

START_TEST(signup_bad_input)
{
	struct harness_resp *r;
	const char *m;
	char *body = NULL;

	if (bad_input[_i].body != NULL) {
		const char *t = bad_input[_i].body, *at = strstr(t, "@L@");
		size_t fill = bad_input[_i].fill, n = strlen(t);

		ck_assert_ptr_nonnull(body = malloc(n + fill + 1));
		if (at == NULL) {
			memcpy(body, t, n + 1);
		} else {
			memcpy(body, t, (size_t)(at - t));
			memset(body + (at - t), 'a', fill);
			memcpy(body + (at - t) + fill, at + 3, n - (size_t)(at - t) - 3 + 1);
		}
	}
	r = acct_post(SIGNUP_PATH, NULL, body);
	free(body);
	m = acct_check_iam(r, 400, bad_input[_i].error_code);
	ck_assert_msg(m == NULL, "%s: %s", bad_input[_i].name, m);
	if (bad_input[_i].field != NULL) {
		m = acct_check_error(r, bad_input[_i].field, bad_input[_i].code);
		ck_assert_msg(m == NULL, "%s: %s", bad_input[_i].name, m);
	}
	harness_resp_free(r);
	ck_assert_int_eq(users_with("bad-input@example.test"), 0);
}
END_TEST

/* ------------------------------------------------------------------ */
/* confirm-signup                                                      */

START_TEST(confirm_signup_single_use)
{
	struct acct_mail mb;
	struct acct_user u;
	struct harness_resp *r;
	char *v;

	acct_mail_start(&mb);
	acct_user_init(&u, "confirm-once");
	acct_signup(&u, &mb);
	r = acct_postf(CONFIRM_PATH, NULL, "{\"email\":\"%s\",\"code\":\"%s\"}", u.email, u.code);
	acct_assert_outcome(r, 1, NULL);
	harness_resp_free(r);
	v = acct_sql_value("SELECT (confirmed_at IS NOT NULL)::text FROM users WHERE id = $1",
	    u.user_id, NULL, NULL);
	ck_assert_pstr_eq(v, "true");
	free(v);

	/* single use */
	r = acct_postf(CONFIRM_PATH, NULL, "{\"email\":\"%s\",\"code\":\"%s\"}", u.email, u.code);
	acct_assert_iam(r, 400, "INVALID_CODE");
	acct_assert_error(r, "code", "invalid");
	harness_resp_free(r);

	acct_signin(&u);
	acct_mail_stop(&mb);
}
END_TEST

START_TEST(confirm_signup_wrong_code)
{
	struct acct_mail mb;
	struct acct_user u;
	struct harness_resp *r, *r2;
	char bad[7];

	acct_mail_start(&mb);
	acct_user_init(&u, "confirm-wrong");
	acct_signup(&u, &mb);
	wrong_code(u.code, 1, bad);
	r = acct_postf(CONFIRM_PATH, NULL, "{\"email\":\"%s\",\"code\":\"%s\"}", u.email, bad);
	acct_assert_iam(r, 400, "INVALID_CODE");

	/* an unknown address answers exactly as a wrong code does */
	r2 = acct_postf(CONFIRM_PATH, NULL, "{\"email\":\"nobody-%ld@example.test\","
	    "\"code\":\"%s\"}", (long)getpid(), u.code);
	acct_assert_iam(r2, 400, "INVALID_CODE");
	ck_assert_str_eq(acct_str(r2, "message"), acct_str(r, "message"));
	ck_assert_str_eq(json_object_to_json_string(acct_json(r2, "errors")),
	    json_object_to_json_string(acct_json(r, "errors")));
	harness_resp_free(r);
	harness_resp_free(r2);

	/* a few wrong tries do not spoil the right code */
	r = acct_postf(CONFIRM_PATH, NULL, "{\"email\":\"%s\",\"code\":\"%s\"}", u.email, u.code);
	acct_assert_outcome(r, 1, NULL);
	harness_resp_free(r);
	acct_mail_stop(&mb);
}
END_TEST

/* 5 wrong codes lock the confirmation for 15 minutes: even the right code
 * is refused, with Retry-After. */
START_TEST(confirm_signup_lockout)
{
	struct acct_mail mb;
	struct acct_user u;
	struct harness_resp *r;
	const char *ra;
	char bad[7];
	int k;

	acct_mail_start(&mb);
	acct_user_init(&u, "confirm-lock");
	acct_signup(&u, &mb);
	for (k = 1; k <= 4; k++) {
		wrong_code(u.code, k, bad);
		r = acct_postf(CONFIRM_PATH, NULL, "{\"email\":\"%s\",\"code\":\"%s\"}", u.email, bad);
		acct_assert_iam(r, 400, "INVALID_CODE");
		harness_resp_free(r);
	}
	wrong_code(u.code, 5, bad);
	r = acct_postf(CONFIRM_PATH, NULL, "{\"email\":\"%s\",\"code\":\"%s\"}", u.email, bad);
	acct_assert_iam(r, 429, "TOO_MANY_ATTEMPTS");
	harness_resp_free(r);

	r = acct_postf(CONFIRM_PATH, NULL, "{\"email\":\"%s\",\"code\":\"%s\"}", u.email, u.code);
	acct_assert_iam(r, 429, "TOO_MANY_ATTEMPTS");
	ra = harness_header(r, "Retry-After");
	ck_assert_msg(ra != NULL && atoi(ra) > 0 && atoi(ra) <= 900, "Retry-After: %s",
	    ra ? ra : "(none)");
	harness_resp_free(r);
	ck_assert_int_eq(acct_sql_int("SELECT count(*) FROM users WHERE id = $1"
	    " AND confirmed_at IS NULL", u.user_id, NULL, NULL), 1);
	r = acct_postf(SIGNIN_PATH, NULL, "{\"email\":\"%s\",\"password\":\"%s\"}",
	    u.email, u.password);
	acct_assert_iam(r, 401, "USER_NOT_CONFIRMED");
	harness_resp_free(r);
	acct_mail_stop(&mb);
}
END_TEST

START_TEST(confirm_signup_expired)
{
	struct acct_mail mb;
	struct acct_user u;
	struct harness_resp *r;

	acct_mail_start(&mb);
	acct_user_init(&u, "confirm-expired");
	acct_signup(&u, &mb);
	acct_sql_exec("UPDATE email_codes SET expires_at = now() - interval '1 minute'"
	    " WHERE user_id = $1 AND purpose = 'signup'", u.user_id, NULL, NULL);
	r = acct_postf(CONFIRM_PATH, NULL, "{\"email\":\"%s\",\"code\":\"%s\"}", u.email, u.code);
	acct_assert_iam(r, 400, "CODE_EXPIRED");
	acct_assert_error(r, "code", "expired");
	harness_resp_free(r);
	ck_assert_int_eq(acct_sql_int("SELECT count(*) FROM users WHERE id = $1"
	    " AND confirmed_at IS NULL", u.user_id, NULL, NULL), 1);
	acct_mail_stop(&mb);
}
END_TEST

START_TEST(confirm_signup_unknown_email)
{
	struct harness_resp *r = acct_post(CONFIRM_PATH, NULL,
	    "{\"email\":\"never-signed-up@example.test\",\"code\":\"123456\"}");

	acct_assert_iam(r, 400, "INVALID_CODE");
	harness_resp_free(r);
}
END_TEST

static const struct {
	const char	*body;
	const char	*field;
	const char	*code;
} confirm_bad[] = {
	{ "{\"email\":\"a@example.test\",\"code\":\"12345\"}", "code", "too_short" },
	{ "{\"email\":\"a@example.test\",\"code\":\"1234567\"}", "code", "too_long" },
	{ "{\"email\":\"a@example.test\",\"code\":\"abcdef\"}", "code", "invalid_format" },
	{ "{\"email\":\"a@example.test\",\"code\":\"12345a\"}", "code", "invalid_format" },
	{ "{\"email\":\"a@example.test\",\"code\":\"\xef\xbc\x91" "23456\"}", "code",
	  "invalid_format" },
	{ "{\"email\":\"a@example.test\",\"code\":123456}", "code", "invalid_type" },
	{ "{\"email\":\"a@example.test\"}", "code", "required" },
	{ "{\"code\":\"123456\"}", "email", "required" },
	{ "{\"email\":\"not-an-address\",\"code\":\"123456\"}", "email", "invalid_format" },
	{ "{\"email\":\"a@example.test\",\"code\":\"123456\",\"password\":\"x\"}", "password",
	  "unknown_field" },
};

START_TEST(confirm_signup_bad_format)
{
	struct harness_resp *r = acct_post(CONFIRM_PATH, NULL, confirm_bad[_i].body);
	const char *m;

	acct_assert_iam(r, 400, "VALIDATION_ERROR");
	/* a code of another length may also be reported as not 6 digits */
	if ((m = acct_check_error(r, confirm_bad[_i].field, confirm_bad[_i].code)) != NULL &&
	    acct_check_error(r, confirm_bad[_i].field, "invalid_format") == NULL)
		m = NULL;
	ck_assert_msg(m == NULL, "%s: %s", confirm_bad[_i].body, m);
	harness_resp_free(r);
}
END_TEST

/* ------------------------------------------------------------------ */
/* confirm-and-signin                                                  */

START_TEST(confirm_and_signin_ok)
{
	struct acct_mail mb;
	struct acct_user u;
	struct harness_resp *r;
	const char *cookie;

	acct_mail_start(&mb);
	acct_user_init(&u, "cands-ok");
	acct_signup(&u, &mb);
	r = acct_postf(CONFIRM_SIGNIN, NULL, "{\"email\":\"%s\",\"code\":\"%s\","
	    "\"password\":\"%s\"}", u.email, u.code, u.password);
	acct_assert_outcome(r, 1, NULL);
	ck_assert_pstr_eq(acct_str(r, "user.id"), u.user_id);
	ck_assert_pstr_eq(acct_str(r, "user.email"), u.email);
	ck_assert_pstr_eq(acct_str(r, "user.given_name"), "Ada");
	ck_assert_pstr_eq(acct_str(r, "user.family_name"), "Lovelace");
	ck_assert_ptr_nonnull(acct_str(r, "tokens.accessToken"));
	ck_assert_ptr_nonnull(acct_str(r, "tokens.refreshToken"));
	ck_assert_ptr_nonnull(acct_str(r, "tokens.idToken"));
	ck_assert_int_eq(json_object_get_int(acct_json(r, "tokens.expiresIn")), 3600);
	cookie = harness_header(r, "Set-Cookie");
	ck_assert_msg(cookie != NULL && strncmp(cookie, "bds_session=", 12) == 0,
	    "Set-Cookie: %s", cookie ? cookie : "(none)");
	snprintf(u.access, sizeof(u.access), "%s", acct_str(r, "tokens.accessToken"));
	harness_resp_free(r);
	r = acct_get(ME_PATH, u.access);
	harness_assert_status(r, 200);
	harness_resp_free(r);
	acct_mail_stop(&mb);
}
END_TEST

/* A right code with a wrong password confirms the account, then 401. */
START_TEST(confirm_and_signin_wrong_password)
{
	struct acct_mail mb;
	struct acct_user u;
	struct harness_resp *r;

	acct_mail_start(&mb);
	acct_user_init(&u, "cands-wrong");
	acct_signup(&u, &mb);
	r = acct_postf(CONFIRM_SIGNIN, NULL, "{\"email\":\"%s\",\"code\":\"%s\","
	    "\"password\":\"Not-The-Password-1\"}", u.email, u.code);
	acct_assert_iam(r, 401, "INVALID_CREDENTIALS");
	ck_assert_ptr_null(harness_header(r, "Set-Cookie"));
	harness_resp_free(r);
	ck_assert_int_eq(acct_sql_int("SELECT count(*) FROM users WHERE id = $1"
	    " AND confirmed_at IS NOT NULL", u.user_id, NULL, NULL), 1);
	/* the code was used */
	r = acct_postf(CONFIRM_SIGNIN, NULL, "{\"email\":\"%s\",\"code\":\"%s\","
	    "\"password\":\"%s\"}", u.email, u.code, u.password);
	acct_assert_iam(r, 400, "INVALID_CODE");
	harness_resp_free(r);
	acct_signin(&u);
	acct_mail_stop(&mb);
}
END_TEST

/* ------------------------------------------------------------------ */
/* signin                                                              */

START_TEST(signin_before_confirm)
{
	struct acct_mail mb;
	struct acct_user u;
	struct harness_resp *r;

	acct_mail_start(&mb);
	acct_user_init(&u, "signin-unconfirmed");
	acct_signup(&u, &mb);
	r = acct_postf(SIGNIN_PATH, NULL, "{\"email\":\"%s\",\"password\":\"%s\"}",
	    u.email, u.password);
	acct_assert_iam(r, 401, "USER_NOT_CONFIRMED");
	ck_assert_ptr_null(harness_header(r, "Set-Cookie"));
	harness_resp_free(r);
	/* without the right password it reveals nothing */
	r = acct_postf(SIGNIN_PATH, NULL, "{\"email\":\"%s\",\"password\":\"Wrong-Pass-123\"}",
	    u.email);
	acct_assert_iam(r, 401, "INVALID_CREDENTIALS");
	harness_resp_free(r);
	ck_assert_int_eq(acct_sql_int("SELECT count(*) FROM sessions WHERE user_id = $1",
	    u.user_id, NULL, NULL), 0);
	acct_mail_stop(&mb);
}
END_TEST

START_TEST(signin_ok)
{
	struct acct_mail mb;
	struct acct_user u;
	struct harness_resp *r;
	const char *cookie, *tok;
	char upper[160], want[2200];
	struct json_object *ei;

	acct_mail_start(&mb);
	acct_user_init(&u, "signin-ok");
	acct_signup(&u, &mb);
	acct_confirm(&u);
	/* the address in any case */
	for (size_t i = 0; i <= strlen(u.email); i++)
		upper[i] = (char)(u.email[i] >= 'a' && u.email[i] <= 'z' ?
		    u.email[i] - 'a' + 'A' : u.email[i]);
	r = acct_postf(SIGNIN_PATH, NULL, "{\"email\":\"%s\",\"password\":\"%s\"}",
	    upper, u.password);
	acct_assert_outcome(r, 1, NULL);
	tok = acct_str(r, "tokens.accessToken");
	ck_assert_msg(tok != NULL && strchr(tok, '.') && strchr(strchr(tok, '.') + 1, '.'),
	    "accessToken: %s", r->body);
	ck_assert_msg(acct_str(r, "tokens.refreshToken") != NULL &&
	    strlen(acct_str(r, "tokens.refreshToken")) >= 32, "refreshToken: %s", r->body);
	ck_assert_msg(acct_str(r, "tokens.idToken") != NULL &&
	    strcmp(acct_str(r, "tokens.idToken"), tok) != 0, "idToken: %s", r->body);
	ei = acct_json(r, "tokens.expiresIn");
	ck_assert_msg(ei != NULL && json_object_is_type(ei, json_type_int) &&
	    json_object_get_int(ei) == 3600, "expiresIn: %s", r->body);
	ck_assert_pstr_eq(acct_str(r, "user.id"), u.user_id);
	ck_assert_pstr_eq(acct_str(r, "user.email"), u.email);
	ck_assert_pstr_eq(acct_str(r, "user.name"), "Ada Lovelace");
	ck_assert_msg(is_iso(acct_str(r, "user.createdAt")), "createdAt: %s", r->body);

	/* the session cookie carries the access token, HttpOnly */
	cookie = harness_header(r, "Set-Cookie");
	snprintf(want, sizeof(want), "bds_session=%s;", tok);
	ck_assert_msg(cookie != NULL && strncmp(cookie, want, strlen(want)) == 0,
	    "Set-Cookie: %s", cookie ? cookie : "(none)");
	ck_assert_msg(strstr(cookie, "HttpOnly") && strstr(cookie, "SameSite=Strict") &&
	    strstr(cookie, "Path=/") && strstr(cookie, "Max-Age=3600"), "Set-Cookie: %s", cookie);
	snprintf(u.access, sizeof(u.access), "%s", tok);
	snprintf(u.refresh, sizeof(u.refresh), "%s", acct_str(r, "tokens.refreshToken"));
	harness_resp_free(r);

	/* one session, its refresh token stored only as a hash */
	ck_assert_int_eq(acct_sql_int("SELECT count(*) FROM sessions WHERE user_id = $1"
	    " AND length(refresh_hash) = 32 AND revoked_at IS NULL", u.user_id, NULL, NULL), 1);
	ck_assert_int_eq(acct_sql_int("SELECT count(*) FROM sessions WHERE"
	    " position(convert_to($1, 'UTF8') IN refresh_hash) > 0", u.refresh, NULL, NULL), 0);
	r = acct_get(ME_PATH, u.access);
	harness_assert_status(r, 200);
	harness_resp_free(r);
	acct_mail_stop(&mb);
}
END_TEST

/* A wrong password and an unknown address answer alike (timing is not
 * asserted here: bench/ measures, tests do not time). */
START_TEST(signin_failures_look_alike)
{
	struct acct_mail mb;
	struct acct_user u;
	struct harness_resp *a, *b;

	acct_mail_start(&mb);
	acct_user_init(&u, "signin-alike");
	acct_signup(&u, &mb);
	acct_confirm(&u);
	a = acct_postf(SIGNIN_PATH, NULL, "{\"email\":\"%s\",\"password\":\"Wrong-Pass-123\"}",
	    u.email);
	b = acct_postf(SIGNIN_PATH, NULL, "{\"email\":\"nobody-%ld@example.test\","
	    "\"password\":\"%s\"}", (long)getpid(), u.password);
	acct_assert_iam(a, 401, "INVALID_CREDENTIALS");
	acct_assert_iam(b, 401, "INVALID_CREDENTIALS");
	ck_assert_str_eq(acct_str(a, "message"), acct_str(b, "message"));
	ck_assert_str_eq(json_object_to_json_string(acct_json(a, "errors")),
	    json_object_to_json_string(acct_json(b, "errors")));
	{
		struct json_object *ha = acct_json(a, "hint"), *hb = acct_json(b, "hint");

		ck_assert_str_eq(ha ? json_object_to_json_string(ha) : "null",
		    hb ? json_object_to_json_string(hb) : "null");
	}
	/* the same members */
	ck_assert_int_eq(json_object_object_length(a->json), json_object_object_length(b->json));
	json_object_object_foreach(a->json, key, val) {
		(void)val;
		ck_assert_msg(json_object_object_get_ex(b->json, key, NULL), "%s only in one", key);
	}
	ck_assert_ptr_null(harness_header(a, "Set-Cookie"));
	ck_assert_ptr_null(harness_header(b, "Set-Cookie"));
	harness_resp_free(a);
	harness_resp_free(b);
	acct_mail_stop(&mb);
}
END_TEST

/* 5 failures for one account: the 6th attempt is refused even with the
 * right password; another account from the same address still works. */
START_TEST(signin_throttle_account)
{
	struct acct_mail mb;
	struct acct_user a, b;
	struct harness_resp *r;
	const char *ra;

	acct_mail_start(&mb);
	acct_user_init(&a, "throttle-a");
	acct_signup(&a, &mb);
	acct_confirm(&a);
	acct_user_init(&b, "throttle-b");
	acct_signup(&b, &mb);
	acct_confirm(&b);
	for (int i = 0; i < 5; i++) {
		r = acct_postf(SIGNIN_PATH, NULL, "{\"email\":\"%s\",\"password\":\"Wrong-Pass-%d!\"}",
		    a.email, i);
		acct_assert_iam(r, 401, "INVALID_CREDENTIALS");
		harness_resp_free(r);
	}
	r = acct_postf(SIGNIN_PATH, NULL, "{\"email\":\"%s\",\"password\":\"%s\"}",
	    a.email, a.password);
	acct_assert_iam(r, 429, "TOO_MANY_ATTEMPTS");
	ra = harness_header(r, "Retry-After");
	ck_assert_msg(ra != NULL && atoi(ra) > 0 && atoi(ra) <= 900, "Retry-After: %s",
	    ra ? ra : "(none)");
	ck_assert_ptr_null(harness_header(r, "Set-Cookie"));
	harness_resp_free(r);

	acct_signin(&b);
	acct_mail_stop(&mb);
}
END_TEST

/* 20 failures from one address (each for a different unknown e-mail):
 * then even a right password for another account is refused. */
START_TEST(signin_throttle_address)
{
	struct acct_mail mb;
	struct acct_user b;
	struct harness_resp *r;
	const char *ra;

	acct_mail_start(&mb);
	acct_user_init(&b, "throttle-addr");
	acct_signup(&b, &mb);
	acct_confirm(&b);
	for (int i = 0; i < 20; i++) {
		r = acct_postf(SIGNIN_PATH, NULL, "{\"email\":\"ghost-%d-%ld@example.test\","
		    "\"password\":\"Wrong-Pass-123\"}", i, (long)getpid());
		acct_assert_iam(r, 401, "INVALID_CREDENTIALS");
		harness_resp_free(r);
	}
	r = acct_postf(SIGNIN_PATH, NULL, "{\"email\":\"%s\",\"password\":\"%s\"}",
	    b.email, b.password);
	acct_assert_iam(r, 429, "TOO_MANY_ATTEMPTS");
	ra = harness_header(r, "Retry-After");
	ck_assert_msg(ra != NULL && atoi(ra) > 0 && atoi(ra) <= 900, "Retry-After: %s",
	    ra ? ra : "(none)");
	harness_resp_free(r);
	acct_mail_stop(&mb);
}
END_TEST

static const struct {
	const char	*body;
	const char	*field;
	const char	*code;
} signin_bad[] = {
	{ "{\"email\":\"a@example.test\"}", "password", "required" },
	{ "{\"password\":\"Valid-Pass-123\"}", "email", "required" },
	{ "{\"email\":42,\"password\":\"Valid-Pass-123\"}", "email", "invalid_type" },
	{ "{\"email\":\"a@example.test\",\"password\":[]}", "password", "invalid_type" },
	{ "{\"email\":\"a@example.test\",\"password\":\"\"}", "password", "too_short" },
	{ "{\"email\":\"a-at-example.test\",\"password\":\"Valid-Pass-123\"}", "email",
	  "invalid_format" },
	{ "{\"email\":\"a@example.test\",\"password\":\"Valid-Pass-123\",\"remember\":true}",
	  "remember", "unknown_field" },
};

START_TEST(signin_bad_input)
{
	struct harness_resp *r = acct_post(SIGNIN_PATH, NULL, signin_bad[_i].body);

	acct_assert_iam(r, 400, "VALIDATION_ERROR");
	acct_assert_error(r, signin_bad[_i].field, signin_bad[_i].code);
	harness_resp_free(r);
}
END_TEST

START_TEST(signin_bad_syntax)
{
	struct harness_resp *r = acct_post(SIGNIN_PATH, NULL, "{\"email\":\"a@example.test\"");

	acct_assert_iam(r, 400, "INVALID_JSON");
	harness_resp_free(r);
	r = acct_post(SIGNIN_PATH, NULL, "{\"email\":\"a\xe9@example.test\",\"password\":\"x\"}");
	acct_assert_iam(r, 400, "INVALID_UTF8");
	harness_resp_free(r);
}
END_TEST


/* ------------------------------------------------------------------ */
/* Concurrency: single use, lockouts and uniqueness hold under a burst */

#define BURST 16
static const char *const json_ct[] = { "Content-Type: application/json", NULL };

/* Send the same body n times at once; count each status. */
static void
burst(const char *path, const char *body, size_t n, long *statuses)
{
	struct harness_resp *out[BURST];

	ck_assert_uint_le(n, BURST);
	harness_request_burst(n, "POST", "api", path, json_ct, body, strlen(body), out);
	for (size_t i = 0; i < n; i++) {
		statuses[i] = out[i]->status;
		if (out[i]->status >= 400 && out[i]->status < 500)
			harness_assert_iam(out[i], out[i]->status);
		harness_resp_free(out[i]);
	}
}

static size_t
count(const long *statuses, size_t n, long status)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++)
		k += statuses[i] == status;
	return k;
}

START_TEST(confirm_signup_burst_single_use)
{
	struct acct_mail mb;
	struct acct_user u;
	long st[BURST];
	char *body;

	acct_mail_start(&mb);
	acct_user_init(&u, "burst-confirm");
	acct_signup(&u, &mb);
	ck_assert_int_ge(asprintf(&body, "{\"email\":\"%s\",\"code\":\"%s\"}", u.email, u.code), 0);
	burst(CONFIRM_PATH, body, 8, st);
	free(body);
	ck_assert_msg(count(st, 8, 200) == 1 && count(st, 8, 400) == 7,
	    "8 confirmations at once with one code: %zu x 200, %zu x 400",
	    count(st, 8, 200), count(st, 8, 400));
	acct_mail_stop(&mb);
}
END_TEST

/* 16 wrong codes at once: exactly 4 are judged wrong, the 5th locks, the
 * rest meet the lockout; then the right code too. */
START_TEST(confirm_signup_burst_lockout)
{
	struct acct_mail mb;
	struct acct_user u;
	struct harness_resp *r;
	long st[BURST];
	char bad[7], *body;

	acct_mail_start(&mb);
	acct_user_init(&u, "burst-lock");
	acct_signup(&u, &mb);
	wrong_code(u.code, 3, bad);
	ck_assert_int_ge(asprintf(&body, "{\"email\":\"%s\",\"code\":\"%s\"}", u.email, bad), 0);
	burst(CONFIRM_PATH, body, BURST, st);
	free(body);
	ck_assert_msg(count(st, BURST, 400) == 4 && count(st, BURST, 429) == BURST - 4,
	    "%d wrong codes at once: %zu x 400, %zu x 429", BURST,
	    count(st, BURST, 400), count(st, BURST, 429));
	r = acct_postf(CONFIRM_PATH, NULL, "{\"email\":\"%s\",\"code\":\"%s\"}", u.email, u.code);
	acct_assert_iam(r, 429, "TOO_MANY_ATTEMPTS");
	harness_resp_free(r);
	acct_mail_stop(&mb);
}
END_TEST

START_TEST(signup_burst_one_account)
{
	struct acct_user u;
	long st[4];
	char *body;

	acct_user_init(&u, "burst-signup");
	body = acct_signup_body(&u);
	burst(SIGNUP_PATH, body, 4, st);
	free(body);
	ck_assert_msg(count(st, 4, 201) == 1 && count(st, 4, 400) == 3,
	    "4 identical sign-ups at once: %zu x 201, %zu x 400", count(st, 4, 201),
	    count(st, 4, 400));
	ck_assert_int_eq(users_with(u.email), 1);
}
END_TEST

/*
 * 16 wrong passwords for one account at once. Requests already past the
 * throttle check when the 5th failure locks may still be judged, one per
 * other worker (the stack runs 2): at most 5 + 1 answers are 401, the
 * rest 429, and the right password afterwards is refused.
 */
START_TEST(signin_burst_throttled)
{
	struct acct_mail mb;
	struct acct_user u;
	struct harness_resp *r;
	long st[BURST];
	char *body;

	acct_mail_start(&mb);
	acct_user_init(&u, "burst-signin");
	acct_signup(&u, &mb);
	acct_confirm(&u);
	ck_assert_int_ge(asprintf(&body, "{\"email\":\"%s\",\"password\":\"Wrong-Pass-123\"}",
	    u.email), 0);
	burst(SIGNIN_PATH, body, BURST, st);
	free(body);
	ck_assert_msg(count(st, BURST, 401) >= 5 && count(st, BURST, 401) <= 6 &&
	    count(st, BURST, 401) + count(st, BURST, 429) == BURST,
	    "%d wrong passwords at once: %zu x 401, %zu x 429", BURST,
	    count(st, BURST, 401), count(st, BURST, 429));
	r = acct_postf(SIGNIN_PATH, NULL, "{\"email\":\"%s\",\"password\":\"%s\"}",
	    u.email, u.password);
	acct_assert_iam(r, 429, "TOO_MANY_ATTEMPTS");
	harness_resp_free(r);
	acct_mail_stop(&mb);
}
END_TEST
/* ------------------------------------------------------------------ */

#define N(a) ((int)(sizeof(a) / sizeof((a)[0])))

static Suite *
accounts_signup_suite(void)
{
	Suite *s = suite_create("e2e_accounts_signup");
	TCase *tc = tcase_create("signup");

	tcase_add_unchecked_fixture(tc, acct_stack_development, harness_fixture_stop);
	tcase_add_checked_fixture(tc, acct_setup, acct_teardown);
	tcase_set_timeout(tc, 300);

	tcase_add_test(tc, legal_empty_is_503);
	tcase_add_loop_test(tc, legal_not_yet_effective_is_503, 0, 2);
	tcase_add_loop_test(tc, legal_documents_echo, 1, N(legal_docs) + 1);
	tcase_add_test(tc, legal_newest_version_per_kind);
	tcase_add_test(tc, legal_bdsctl_refuses_bad_input);
	tcase_add_loop_test(tc, legal_bdsctl_date_is_strict, 0, N(loose_dates));

	tcase_add_test(tc, signup_created);
	tcase_add_test(tc, signup_camel_case_aliases);
	tcase_add_test(tc, signup_flat_legal_form);
	tcase_add_loop_test(tc, signup_legal_acceptance_missing, 0, N(legal_missing));
	tcase_add_loop_test(tc, signup_weak_password, 0, N(weak));
	tcase_add_test(tc, signup_password_boundary);
	tcase_add_test(tc, signup_duplicate_email);
	tcase_add_loop_test(tc, signup_bad_input, 0, N(bad_input));

	tcase_add_test(tc, confirm_signup_single_use);
	tcase_add_test(tc, confirm_signup_wrong_code);
	tcase_add_test(tc, confirm_signup_lockout);
	tcase_add_test(tc, confirm_signup_expired);
	tcase_add_test(tc, confirm_signup_unknown_email);
	tcase_add_loop_test(tc, confirm_signup_bad_format, 0, N(confirm_bad));
	tcase_add_test(tc, confirm_and_signin_ok);
	tcase_add_test(tc, confirm_and_signin_wrong_password);

	tcase_add_test(tc, signin_before_confirm);
	tcase_add_test(tc, signin_ok);
	tcase_add_test(tc, signin_failures_look_alike);
	tcase_add_test(tc, signin_throttle_account);
	tcase_add_test(tc, signin_throttle_address);
	tcase_add_loop_test(tc, signin_bad_input, 0, N(signin_bad));
	tcase_add_test(tc, signin_bad_syntax);

	tcase_add_test(tc, confirm_signup_burst_single_use);
	tcase_add_test(tc, confirm_signup_burst_lockout);
	tcase_add_test(tc, signup_burst_one_account);
	tcase_add_test(tc, signin_burst_throttled);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return harness_run_suite(accounts_signup_suite());
}
