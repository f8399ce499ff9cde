/*
 * /v1/iam account state: the legal registry, e-mail verification, the
 * business verification form and live access.
 */
#include <stdlib.h>
#include <string.h>

#include "core/arena.h"
#include "core/config.h"
#include "core/db.h"
#include "core/errors.h"
#include "iam/iam.h"
#include "core/json.h"
#include "mail/mail.h"
#include "core/req.h"
#include "core/validate.h"

#define VERIFY_CODE_TTL 1800

enum {
	B_LEGAL,
	B_VERIFIED,
	B_FORM_NEW,
	B_FORM_EXISTS,
	B_LIVE_GRANT,
	B_LIVE_QUEUE,
	B__MAX
};
static struct db_stmt stmts[B__MAX] = {
	/* Per kind the newest version; future ones flag the registry unready. */
	[B_LEGAL] = { "iam_legal_current",
	    "SELECT kind, version, to_char(effective_date, 'YYYY-MM-DD'),"
	    " effective_date > current_date"
	    " FROM legal_documents ORDER BY kind, effective_date DESC, created_at DESC" },
	[B_VERIFIED] = { "iam_email_verified",
	    "UPDATE users SET email_verified = true, updated_at = now() WHERE id = $1" },
	/* The form's company becomes the profile's companyName. */
	[B_FORM_NEW] = { "iam_verification_new",
	    "WITH f AS (INSERT INTO verification_requests (user_id, company_name, website,"
	    " use_case, country, contact_name) VALUES ($1, $2, $3, $4, $5, $6)"
	    " ON CONFLICT (user_id) DO NOTHING RETURNING user_id, company_name)"
	    " UPDATE users u SET company_name = f.company_name, updated_at = now()"
	    " FROM f WHERE u.id = f.user_id RETURNING u.id" },
	[B_FORM_EXISTS] = { "iam_verification_exists",
	    "SELECT 1 FROM verification_requests WHERE user_id = $1" },
	[B_LIVE_GRANT] = { "iam_live_grant",
	    "UPDATE users SET live_access = 'granted', updated_at = now() WHERE id = $1" },
	/* Production: one pending request per user for the operator queue. */
	[B_LIVE_QUEUE] = { "iam_live_queue",
	    "WITH q AS (INSERT INTO live_access_requests (user_id) VALUES ($1)"
	    "  ON CONFLICT (user_id) DO UPDATE SET status = 'pending', requested_at = now(),"
	    "  decided_at = NULL, reason = NULL"
	    "  WHERE live_access_requests.status = 'denied' RETURNING user_id)"
	    " UPDATE users SET live_access = 'pending', updated_at = now()"
	    " WHERE id = $1 AND live_access <> 'granted'" },
};
/* iam_legal_current's columns */
enum legal_col { LG_KIND, LG_VERSION, LG_DATE, LG_FUTURE, LG__MAX };
const struct db_stmt_set iam_account_stmt_set = { "iam_account", stmts, B__MAX };

const struct vfield iam_verify_code_fields[] = {
	{ "code", NULL, VT_STRING, V_REQUIRED, 6, 6, .format = VF_DIGITS },
	{ NULL }
};

static const char *const country_codes_hint = "an ISO 3166-1 alpha-2 code, e.g. US";

/* Two upper-case letters. */
static int
check_country(struct arena *a, struct json_object **v, const char **code, const char **msg)
{
	const char *s = json_object_get_string(*v);

	if (strlen(s) == 2 && s[0] >= 'A' && s[0] <= 'Z' && s[1] >= 'A' && s[1] <= 'Z')
		return 0;
	*code = "invalid_format";
	*msg = country_codes_hint;
	return -1;
}

const struct vfield iam_verification_fields[] = {
	{ "companyName", "company_name", VT_STRING, V_REQUIRED, 1, 200 },
	{ "website", NULL, VT_STRING, V_NULLABLE, 0, 2048, .format = VF_URL },
	{ "useCase", "use_case", VT_STRING, V_REQUIRED, 1, 2000 },
	{ "country", NULL, VT_STRING, V_REQUIRED, 2, 2, .check = check_country },
	{ "contactName", "contact_name", VT_STRING, V_REQUIRED, 1, 200 },
	{ NULL }
};

/* ---- legal registry ---- */

/* A kind's title (the kinds legal_documents allows). */
static const struct {
	const char	*kind, *title;
} legal_titles[] = {
	{ "dpa", "Data Processing Agreement" },
	{ "privacy", "Privacy Policy" },
	{ "terms", "Terms of Service" },
};

static const char *
legal_title(const char *kind)
{
	for (size_t i = 0; i < sizeof(legal_titles) / sizeof(legal_titles[0]); i++)
		if (strcmp(legal_titles[i].kind, kind) == 0)
			return legal_titles[i].title;
	return kind;
}

int
iam_legal_current(struct req *r, struct iam_legal **docs, size_t *n)
{
	PGresult *res = db_query(r, &stmts[B_LEGAL], 0, NULL);
	int rows;

	*docs = NULL;
	*n = 0;
	if (res == NULL)
		return -1;
	rows = PQntuples(res);
	if (rows == 0)
		return 0;
	*docs = arena_alloc(r->arena, (size_t)rows * sizeof(**docs));
	for (int i = 0; i < rows; i++) {
		const char *kind = PQgetvalue(res, i, LG_KIND);

		if (PQgetvalue(res, i, LG_FUTURE)[0] == 't')
			return 0;	/* a document not yet effective */
		if (*n > 0 && strcmp((*docs)[*n - 1].kind, kind) == 0)
			continue;	/* an older version of the same kind */
		(*docs)[*n].kind = arena_strdup(r->arena, kind);
		(*docs)[*n].version = arena_strdup(r->arena, PQgetvalue(res, i, LG_VERSION));
		(*docs)[*n].effective_date = arena_strdup(r->arena, PQgetvalue(res, i, LG_DATE));
		(*n)++;
	}
	return 1;
}

int
iam_legal_documents(struct req *r, struct json_object *out)
{
	struct json_object *arr;
	struct iam_legal *docs;
	size_t n;
	int rc = iam_legal_current(r, &docs, &n);

	if (rc < 0)
		return api_db_error(r);
	if (rc == 0) {
		req_header_add(r, "Retry-After", "60");
		return api_error(r, 503, ERR_LEGAL_REGISTRY_UNAVAILABLE, "try again later",
		    "the legal documents are not available");
	}
	arr = json_object_new_array();
	for (size_t i = 0; i < n; i++) {
		struct json_object *d = json_object_new_object();

		json_set_str(d, "document_kind", docs[i].kind);
		json_set_str(d, "document_version", docs[i].version);
		json_set_str(d, "document_effective_date", docs[i].effective_date);
		/* where to read it: the link host's page of its kind */
		json_set_str(d, "title", legal_title(docs[i].kind));
		json_set_str(d, "url", arena_printf(r->arena, "%s/%s",
		    iam_settings(r->cfg)->legal_url, docs[i].kind));
		json_object_array_add(arr, d);
	}
	json_set_bool(out, "success", 1);
	json_set(out, "documents", arr);
	return 200;
}

/* ---- e-mail verification ---- */

int
iam_email_request(struct req *r, struct json_object *out)
{
	struct iam_user u;
	const char *code;
	int64_t wait;
	int issued, rc;

	if ((rc = iam_user_or_reply(r, r->user_id, &u)) != 0)
		return rc;
	if (u.email_verified) {
		iam_outcome(r, out, 1, ERR_ALREADY_VERIFIED, "the e-mail address is already verified");
		json_set_int(out, "cooldown_seconds", 0);
		return 200;
	}
	if ((issued = iam_code_issue(r, u.id, "verify_email", VERIFY_CODE_TTL,
	    IAM_COOLDOWN_SECONDS, &code)) < 0)
		return api_db_error(r);
	if (issued == 0) {
		if ((wait = iam_code_cooldown(r, u.id, "verify_email", IAM_COOLDOWN_SECONDS)) < 0)
			return api_db_error(r);
		wait = wait > 0 ? wait : 1;
		req_header_add(r, "Retry-After", arena_printf(r->arena, "%lld", (long long)wait));
		api_error(r, 429, ERR_COOLDOWN, "wait before asking again",
		    "a code was sent less than 5 minutes ago; try again in %lld seconds",
		    (long long)wait);
		json_set_int(r->out, "cooldown_seconds", wait);
		json_set_int(r->out, "retry_after", wait);
		return 429;
	}
	if (mail_enqueue(r, "verify_email", u.email, "Verify your e-mail address",
	    arena_printf(r->arena, "Hello,\n\nYour e-mail verification code is %s\n\n"
	    "It expires in 30 minutes.\n\n-- Bill Data Service\n", code)) != 0) {
		req_header_add(r, "Retry-After", "60");
		return api_error(r, 503, ERR_EMAIL_NOT_SENT, "try again later",
		    "the verification e-mail could not be sent");
	}
	iam_outcome(r, out, 1, NULL, "verification code sent");
	json_set_int(out, "cooldown_seconds", IAM_COOLDOWN_SECONDS);
	return 200;
}

int
iam_email_verify(struct req *r, struct json_object *out)
{
	const char *p[1] = { r->user_id };
	struct iam_user u;
	enum iam_code c;
	int64_t retry;
	int rc;

	if ((rc = iam_user_or_reply(r, r->user_id, &u)) != 0)
		return rc;
	if (u.email_verified)
		return iam_outcome(r, out, 1, NULL, "the e-mail address is already verified");
	/* A wrong code answers 200 (success false), so the dispatcher commits
	 * the attempt count with it. */
	if (iam_code_check(r, r->user_id, "verify_email",
	    json_get_str(r->body, "code"), &c, &retry) != 0 ||
	    (c == IAM_CODE_OK && db_query(r, &stmts[B_VERIFIED], 1, p) == NULL))
		return api_db_error(r);
	switch (c) {
	case IAM_CODE_OK:
		return iam_outcome(r, out, 1, NULL, "e-mail address verified");
	case IAM_CODE_EXPIRED:
		return iam_outcome(r, out, 0, ERR_CODE_EXPIRED, "the code has expired; request a new one");
	case IAM_CODE_LOCKED:
		iam_outcome(r, out, 0, ERR_TOO_MANY_ATTEMPTS,
		    "too many wrong codes; wait 15 minutes and request a new code");
		json_set_int(out, "retry_after", retry);
		return 200;
	default:
		return iam_outcome(r, out, 0, ERR_INVALID_CODE, "invalid or expired code");
	}
}

/* ---- business verification and live access ---- */

int
iam_verification_request(struct req *r, struct json_object *out)
{
	struct json_object *b = r->body;
	const char *p[6] = { r->user_id, json_get_str(b, "companyName"),
	    json_get_str(b, "website"), json_get_str(b, "useCase"),
	    json_get_str(b, "country"), json_get_str(b, "contactName") };
	PGresult *res = db_query(r, &stmts[B_FORM_NEW], 6, p);

	if (res == NULL)
		return api_db_error(r);
	if (PQntuples(res) != 1)
		return api_field_error(r, 400, ERR_ALREADY_SUBMITTED, "companyName",
		    "already_submitted", "the verification form was already submitted");
	json_set_bool(out, "success", 1);
	json_set_str(out, "message", "verification request received");
	return 200;
}

int
iam_request_live_access(struct req *r, struct json_object *out)
{
	const char *p[1] = { r->user_id };
	struct verrs errs = { 0 };
	struct iam_user u;
	PGresult *res;
	int rc, production = strcmp(r->cfg->deployment, "production") == 0;

	if ((rc = iam_user_or_reply(r, r->user_id, &u)) != 0)
		return rc;
	if (u.live_access != NULL && strcmp(u.live_access, "granted") == 0) {
		json_set_bool(out, "success", 1);
		json_set_str(out, "message", "live access is granted");
		json_set_str(out, "status", "granted");
		return 200;
	}
	if ((res = db_query(r, &stmts[B_FORM_EXISTS], 1, p)) == NULL)
		return api_db_error(r);
	if (!u.email_verified)
		verrs_add(r->arena, &errs, "emailVerified", "prerequisite_missing",
		    "verify your e-mail address first");
	if (PQntuples(res) == 0)
		verrs_add(r->arena, &errs, "verificationRequest", "prerequisite_missing",
		    "submit the business verification form first");
	if (!u.billing_done && strcmp(iam_settings(r->cfg)->billing, "none") != 0)
		verrs_add(r->arena, &errs, "billing", "prerequisite_missing",
		    "complete the billing setup first");
	if (errs.n > 0)
		return api_verror_as(r, 400, ERR_PREREQUISITES_NOT_MET, &errs);
	if (db_query(r, &stmts[production ? B_LIVE_QUEUE : B_LIVE_GRANT], 1, p) == NULL)
		return api_db_error(r);
	json_set_bool(out, "success", 1);
	json_set_str(out, "status", production ? "pending" : "granted");
	json_set_str(out, "message", production ?
	    "live access requested; an operator will review it" : "live access granted");
	return production ? 202 : 200;
}
