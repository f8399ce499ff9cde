/*
 * /v1/iam/auth: sign-up, confirmation, sign-in, sessions and passwords.
 * Every write runs in one transaction with the e-mail it causes (outbox).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/arena.h"
#include "core/auth.h"
#include "core/config.h"
#include "core/crypto.h"
#include "core/db.h"
#include "core/errors.h"
#include "iam/iam.h"
#include "core/json.h"
#include "core/jwt.h"
#include "mail/mail.h"
#include "core/req.h"
#include "core/validate.h"

#define SIGNUP_CODE_TTL		86400
#define RESET_CODE_TTL		900

enum {
	A_USER_NEW,
	A_CLIENT_NEW,
	A_ACCEPT,
	A_CONFIRM,
	A_SESSION_REVOKE,
	A_SESSION_REVOKE_REFRESH,
	A_SESSION_BY_REFRESH,
	A_SESSIONS_REVOKE_ALL,
	A_PASSWORD_SET,
	A__MAX
};
static struct db_stmt stmts[A__MAX] = {
	[A_USER_NEW] = { "iam_user_new",
	    "INSERT INTO users (id, email, password_hash, given_name, family_name)"
	    " VALUES ($1, $2, $3, $4, $5) ON CONFLICT (email) DO NOTHING RETURNING id" },
	[A_CLIENT_NEW] = { "iam_client_new",
	    "INSERT INTO clients (id, user_id, name) VALUES ($1, $2, $3)" },
	[A_ACCEPT] = { "iam_legal_accept",
	    "INSERT INTO legal_acceptances (user_id, kind, version, effective_date,"
	    " accepted_at, source, remote_addr)"
	    " VALUES ($1, $2, $3, $4::date, coalesce($5::timestamptz, now()), $6, $7)" },
	[A_CONFIRM] = { "iam_user_confirm",
	    "UPDATE users SET confirmed_at = coalesce(confirmed_at, now()), updated_at = now()"
	    " WHERE id = $1" },
	[A_SESSION_REVOKE] = { "iam_session_revoke",
	    "UPDATE sessions SET revoked_at = now() WHERE id = $1 AND user_id = $2"
	    " AND revoked_at IS NULL" },
	[A_SESSION_REVOKE_REFRESH] = { "iam_session_revoke_refresh",
	    "UPDATE sessions SET revoked_at = now() WHERE refresh_hash = decode($1, 'hex')"
	    " AND user_id = $2 AND revoked_at IS NULL" },
	[A_SESSION_BY_REFRESH] = { "iam_session_by_refresh",	/* SR_ columns */
	    "SELECT id, user_id FROM sessions WHERE refresh_hash = decode($1, 'hex')"
	    " AND revoked_at IS NULL AND refresh_expires_at > now()" },
	[A_SESSIONS_REVOKE_ALL] = { "iam_sessions_revoke_all",
	    "UPDATE sessions SET revoked_at = now() WHERE user_id = $1 AND revoked_at IS NULL" },
	[A_PASSWORD_SET] = { "iam_password_set",
	    "UPDATE users SET password_hash = $2, updated_at = now(),"
	    " confirmed_at = CASE WHEN $3::bool THEN coalesce(confirmed_at, now())"
	    "  ELSE confirmed_at END WHERE id = $1" },
};
const struct db_stmt_set iam_auth_stmt_set = { "iam_auth", stmts, A__MAX };

/* Result columns */
enum { SR_ID, SR_USER_ID, SR__MAX };			/* iam_session_by_refresh */
enum { UN_ID, UN__MAX };				/* iam_user_new */

/* ---- body specs: canonical names, with the other spelling as alias ---- */

static const struct vfield legal_acceptance_fields[] = {
	{ "document_kind", "documentKind", VT_STRING, V_REQUIRED, 1, 16 },
	{ "document_version", "documentVersion", VT_STRING, V_REQUIRED, 1, 64 },
	{ "document_effective_date", "documentEffectiveDate", VT_STRING, V_REQUIRED,
	  .format = VF_DATE },
	{ "accepted", NULL, VT_BOOL, V_REQUIRED },
	{ NULL }
};

#define EMAIL_FIELD { "email", NULL, VT_STRING, V_REQUIRED, 3, 254, .format = VF_EMAIL }
#define PASSWORD(name, alias) { name, alias, VT_STRING, V_REQUIRED, 1, 1024 }
#define CODE_FIELD { "code", NULL, VT_STRING, V_REQUIRED, 6, 6, .format = VF_DIGITS }

const struct vfield iam_signup_fields[] = {
	EMAIL_FIELD,
	PASSWORD("password", NULL),
	{ "given_name", "givenName", VT_STRING, 0, 0, 100 },
	{ "family_name", "familyName", VT_STRING, 0, 0, 100 },
	{ "client_name", "clientName", VT_STRING, 0, 1, 100 },
	{ "legal_acceptances", "legalAcceptances", VT_ARRAY, 0, 0, 10,
	  .items = VT_OBJECT, .fields = legal_acceptance_fields },
	{ "terms_accepted", "termsAccepted", VT_BOOL },
	{ "terms_version", "termsVersion", VT_STRING, 0, 1, 64 },
	{ "privacy_version", "privacyVersion", VT_STRING, 0, 1, 64 },
	{ "accepted_at", "acceptedAt", VT_STRING, .format = VF_DATETIME },
	{ "acceptance_source", "acceptanceSource", VT_STRING, 0, 1, 64 },
	{ NULL }
};
const struct vfield iam_confirm_fields[] = { EMAIL_FIELD, CODE_FIELD, { NULL } };
const struct vfield iam_confirm_signin_fields[] = {
	EMAIL_FIELD, CODE_FIELD, PASSWORD("password", NULL), { NULL }
};
const struct vfield iam_signin_fields[] = { EMAIL_FIELD, PASSWORD("password", NULL), { NULL } };
const struct vfield iam_signout_fields[] = {
	{ "refreshToken", "refresh_token", VT_STRING, 0, 1, 512 }, { NULL }
};
const struct vfield iam_refresh_fields[] = {
	{ "refreshToken", "refresh_token", VT_STRING, V_REQUIRED, 1, 512 }, { NULL }
};
const struct vfield iam_forgot_fields[] = { EMAIL_FIELD, { NULL } };
const struct vfield iam_reset_fields[] = {
	EMAIL_FIELD, CODE_FIELD, PASSWORD("newPassword", "new_password"), { NULL }
};
const struct vfield iam_change_password_fields[] = {
	PASSWORD("currentPassword", "current_password"),
	PASSWORD("newPassword", "new_password"),
	{ NULL }
};

/* ---- helpers ---- */

static const char *
refresh_hash_hex(struct req *r, const char *token)
{
	unsigned char h[32];

	crypto_sha256(token, strlen(token), h);
	return crypto_hex_encode(r->arena, h, sizeof(h));
}

static void
user_json(struct json_object *out, const struct iam_user *u, int full)
{
	struct json_object *o = json_object_new_object();
	char name[256];

	snprintf(name, sizeof(name), "%s%s%s", u->given_name ? u->given_name : "",
	    u->given_name && *u->given_name && u->family_name && *u->family_name ? " " : "",
	    u->family_name ? u->family_name : "");
	json_set_str(o, "id", u->id);
	json_set_str(o, "email", u->email);
	json_set_str(o, "name", name);
	json_set_str(o, "given_name", u->given_name);
	json_set_str(o, "family_name", u->family_name);
	if (full) {
		json_set_str(o, "companyName", u->company_name);
		json_set_bool(o, "emailVerified", u->email_verified);
	}
	json_set_str(o, "createdAt", u->created_at);
	if (full)
		json_set_str(o, "updatedAt", u->updated_at);
	json_set(out, "user", o);
}

/* The sign-in body: success, message, tokens, user. */
static int
signed_in(struct req *r, struct json_object *out, const struct iam_user *u,
    struct json_object *tokens, const char *message)
{
	json_set_bool(out, "success", 1);
	json_set_str(out, "message", message);
	json_set(out, "tokens", json_object_get(tokens));
	user_json(out, u, 0);
	return 200;
}

/* Map a code outcome to the answer of confirm and reset (400/429). */
static int
code_error(struct req *r, enum iam_code c, int64_t retry_after)
{
	if (c == IAM_CODE_LOCKED) {
		req_header_add(r, "Retry-After", arena_printf(r->arena, "%lld",
		    (long long)retry_after));
		return api_error(r, 429, ERR_TOO_MANY_ATTEMPTS, "wait and request a new code",
		    "too many wrong codes; try again in %lld seconds", (long long)retry_after);
	}
	if (c == IAM_CODE_EXPIRED)
		return api_field_error(r, 400, ERR_CODE_EXPIRED, "code", "expired",
		    "the code has expired; request a new one");
	return api_field_error(r, 400, ERR_INVALID_CODE, "code", "invalid",
	    "invalid or expired code");
}

/* Commit, or answer the database error. 0 ok. */
static int
commit_or_error(struct req *r)
{
	if (db_commit(r->db) != 0)
		return api_db_error(r);
	return 0;
}

/* ---- sign-up and confirmation ---- */

/* 1 when the acceptance item names doc (kind, version, date). */
static int
names_doc(struct json_object *it, const struct iam_legal *d)
{
	const char *k = json_get_str(it, "document_kind");
	const char *v = json_get_str(it, "document_version");
	const char *e = json_get_str(it, "document_effective_date");

	return k && v && e && strcmp(k, d->kind) == 0 && strcmp(v, d->version) == 0 &&
	    strcmp(e, d->effective_date) == 0;
}

/* 1 when the body accepts exactly doc (kind, version, date, accepted). */
static int
accepts(struct json_object *body, const struct iam_legal *d)
{
	struct json_object *arr;
	const char *tv, *pv;

	if (json_object_object_get_ex(body, "legal_acceptances", &arr) &&
	    json_object_is_type(arr, json_type_array)) {
		for (size_t i = 0; i < json_object_array_length(arr); i++) {
			struct json_object *it = json_object_array_get_idx(arr, i);

			if (names_doc(it, d) && json_get_bool(it, "accepted", 0))
				return 1;
		}
		return 0;
	}
	/* The older flat form: terms_accepted with terms_version/privacy_version. */
	if (!json_get_bool(body, "terms_accepted", 0))
		return 0;
	tv = json_get_str(body, "terms_version");
	pv = json_get_str(body, "privacy_version");
	if (strcmp(d->kind, "terms") == 0)
		return tv != NULL && strcmp(tv, d->version) == 0;
	if (strcmp(d->kind, "privacy") == 0)
		return pv != NULL && strcmp(pv, d->version) == 0;
	return 0;
}

/*
 * Each acceptance must echo a document the registry returns now (SPEC.md:
 * "echoing exactly the metadata returned by the legal-documents
 * endpoint"): one naming anything else is an error, not ignored.
 */
static void
unknown_acceptances(struct req *r, struct json_object *body, const struct iam_legal *docs,
    size_t ndocs, struct verrs *errs)
{
	struct json_object *arr;

	if (!json_object_object_get_ex(body, "legal_acceptances", &arr) ||
	    !json_object_is_type(arr, json_type_array))
		return;
	for (size_t i = 0; i < json_object_array_length(arr); i++) {
		struct json_object *it = json_object_array_get_idx(arr, i);
		size_t k = 0;

		while (k < ndocs && !names_doc(it, &docs[k]))
			k++;
		if (k == ndocs)
			verrs_add(r->arena, errs, arena_printf(r->arena, "legal_acceptances[%zu]", i),
			    "unknown_document", "names no current legal document: send what"
			    " GET /v1/iam/auth/legal-documents returns");
	}
}

static int
send_code(struct req *r, const char *kind, const char *to, const char *code,
    const char *subject, const char *what, const char *expiry)
{
	return mail_enqueue(r, kind, to, subject, arena_printf(r->arena,
	    "Hello,\n\nYour %s code is %s\n\nIt expires in %s. If you did not ask for it,\n"
	    "you can ignore this message.\n\n-- Bill Data Service\n", what, code, expiry));
}

int
iam_signup(struct req *r, struct json_object *out)
{
	struct json_object *b = r->body;
	struct iam_legal *docs;
	struct verrs errs = { 0 };
	const char *email, *pw, *uid, *cid, *code, *cname;
	size_t ndocs;
	PGresult *res;
	char *hash;
	int rc;

	if ((rc = iam_legal_current(r, &docs, &ndocs)) < 0)
		return api_db_error(r);
	if (rc == 0)
		return api_error(r, 503, ERR_LEGAL_REGISTRY_UNAVAILABLE, "try again later",
		    "sign-up is closed: the legal documents are not configured");
	for (size_t i = 0; i < ndocs; i++)
		if (!accepts(b, &docs[i]))
			verrs_add(r->arena, &errs, "legal_acceptances", "legal_acceptance_missing",
			    "accept %s version %s effective %s", docs[i].kind,
			    docs[i].version, docs[i].effective_date);
	unknown_acceptances(r, b, docs, ndocs, &errs);
	pw = json_get_str(b, "password");
	if (!iam_password_acceptable(pw))
		verrs_add(r->arena, &errs, "password", "weak_password", "%s", iam_password_rule);
	if (errs.n > 0)
		return api_verror(r, &errs);

	email = iam_email_normalise(r, json_get_str(b, "email"));
	if ((hash = iam_password_hash(r, pw)) == NULL)
		return api_error(r, 500, ERR_INTERNAL_ERROR, NULL, "internal error");
	uid = crypto_id_new(r->arena, "usr");
	cid = crypto_id_new(r->arena, "cli");
	cname = json_get_str(b, "client_name");
	{
		const char *p[5] = { uid, email, hash,
		    json_get_str(b, "given_name") ? json_get_str(b, "given_name") : "",
		    json_get_str(b, "family_name") ? json_get_str(b, "family_name") : "" };

		if ((res = db_query(r, &stmts[A_USER_NEW], 5, p)) == NULL)
			return api_db_error(r);
		if (PQntuples(res) != 1)
			return api_field_error(r, 400, ERR_EMAIL_ALREADY_EXISTS, "email",
			    "already_exists", "an account with this e-mail already exists");
	}
	{
		const char *p[3] = { cid, uid, cname ? cname : "My first client" };

		if (db_query(r, &stmts[A_CLIENT_NEW], 3, p) == NULL)
			return api_db_error(r);
	}
	for (size_t i = 0; i < ndocs; i++) {
		const char *src = json_get_str(b, "acceptance_source");
		const char *p[7] = { uid, docs[i].kind, docs[i].version,
		    docs[i].effective_date, json_get_str(b, "accepted_at"),
		    src ? src : "api", r->http.remote_addr };

		if (db_query(r, &stmts[A_ACCEPT], 7, p) == NULL)
			return api_db_error(r);
	}
	if (iam_code_issue(r, uid, "signup", SIGNUP_CODE_TTL, 0, &code) != 1 ||
	    send_code(r, "signup_confirm", email, code, "Confirm your Bill Data Service account",
	    "sign-up confirmation", "24 hours") != 0)
		return api_db_error(r);
	json_set_bool(out, "success", 1);
	json_set_str(out, "message", "account created; check your e-mail for the confirmation code");
	json_set_str(out, "user_id", uid);
	json_set_str(out, "client_id", cid);
	return 201;
}

/*
 * Check the sign-up code and confirm; 0 confirmed, else the error status.
 * Its own transaction, committed either way: a wrong code answers 400 and
 * still counts toward the lockout, which a ROUTE_TX would roll back.
 */
static int
confirm(struct req *r, struct iam_user *u)
{
	enum iam_code c;
	int64_t retry;
	int found = iam_user_by_email(r, json_get_str(r->body, "email"), u);

	if (found < 0)
		return api_db_error(r);
	if (found == 0)
		return code_error(r, IAM_CODE_INVALID, 0);
	if (db_begin(r->db) != 0 ||
	    iam_code_check(r, u->id, "signup", json_get_str(r->body, "code"), &c, &retry) != 0)
		return api_db_error(r);
	if (c == IAM_CODE_OK) {
		const char *p[1] = { u->id };

		if (db_query(r, &stmts[A_CONFIRM], 1, p) == NULL)
			return api_db_error(r);
		u->confirmed = 1;
	}
	/* Commit either way: a wrong code counts toward the lockout. */
	if (db_commit(r->db) != 0)
		return api_db_error(r);
	return c == IAM_CODE_OK ? 0 : code_error(r, c, retry);
}

int
iam_confirm_signup(struct req *r, struct json_object *out)
{
	struct iam_user u;
	int rc;

	if ((rc = confirm(r, &u)) != 0)
		return rc;
	json_set_bool(out, "success", 1);
	json_set_str(out, "message", "e-mail confirmed; you can sign in");
	return 200;
}

int
iam_confirm_and_signin(struct req *r, struct json_object *out)
{
	struct json_object *tokens;
	struct iam_user u;
	int rc;

	if ((rc = confirm(r, &u)) != 0)
		return rc;
	if (!iam_password_verify(u.password_hash, json_get_str(r->body, "password")))
		return api_error(r, 401, ERR_INVALID_CREDENTIALS, NULL,
		    "the account is confirmed, but the password is wrong");
	if (db_begin(r->db) != 0 || (tokens = iam_session_start(r, &u)) == NULL)
		return api_db_error(r);
	if ((rc = commit_or_error(r)) != 0)
		return rc;
	return signed_in(r, out, &u, tokens, "confirmed and signed in");
}

/* ---- sign-in and sessions ---- */

/*
 * Not ROUTE_TX: a wrong password answers 401 and its count must stay, so
 * the attempt is counted on its own (autocommit, before the slow
 * Argon2id check, which is what makes the limit hold under a burst) and
 * only the session of a right password is one transaction.
 */
int
iam_signin(struct req *r, struct json_object *out)
{
	const char *email = iam_email_normalise(r, json_get_str(r->body, "email"));
	struct json_object *tokens;
	struct iam_user u;
	int rc, found;

	if ((rc = iam_throttle_take(r, email)) != 0)
		return rc;
	if ((found = iam_user_by_email(r, email, &u)) < 0)
		return api_db_error(r);
	/* An unknown e-mail costs one Argon2id verification too. */
	if (!iam_password_verify(found ? u.password_hash : NULL,
	    json_get_str(r->body, "password"))) {
		if (iam_throttle_fail(r, email) != 0)
			return api_db_error(r);
		return api_error(r, 401, ERR_INVALID_CREDENTIALS, NULL, "invalid e-mail or password");
	}
	if (iam_throttle_pass(r, email) != 0)
		return api_db_error(r);
	if (!u.confirmed)
		return api_error(r, 401, ERR_USER_NOT_CONFIRMED, "confirm your e-mail first",
		    "the account is not confirmed yet");
	if (db_begin(r->db) != 0 || (tokens = iam_session_start(r, &u)) == NULL)
		return api_db_error(r);
	if ((rc = commit_or_error(r)) != 0)
		return rc;
	return signed_in(r, out, &u, tokens, "signed in");
}

int
iam_signout(struct req *r, struct json_object *out)
{
	const char *p[2] = { r->session_id, r->user_id };
	const char *rt = json_get_str(r->body, "refreshToken");

	if (db_query(r, &stmts[A_SESSION_REVOKE], 2, p) == NULL)
		return api_db_error(r);
	if (rt != NULL) {
		const char *q[2] = { refresh_hash_hex(r, rt), r->user_id };

		if (db_query(r, &stmts[A_SESSION_REVOKE_REFRESH], 2, q) == NULL)
			return api_db_error(r);
	}
	iam_cookie(r, NULL, 0);
	json_set_bool(out, "success", 1);
	json_set_str(out, "message", "signed out");
	return 200;
}

int
iam_refresh(struct req *r, struct json_object *out)
{
	const char *p[1] = { refresh_hash_hex(r, json_get_str(r->body, "refreshToken")) };
	struct json_object *tokens;
	struct iam_user u;
	PGresult *res;
	int found;

	if ((res = db_query(r, &stmts[A_SESSION_BY_REFRESH], 1, p)) == NULL)
		return api_db_error(r);
	if (PQntuples(res) != 1)
		return api_error(r, 401, ERR_INVALID_REFRESH_TOKEN, "sign in again",
		    "invalid or expired refresh token");
	if ((found = iam_user_by_id(r, PQgetvalue(res, 0, SR_USER_ID), &u)) <= 0)
		return found < 0 ? api_db_error(r) : api_error(r, 401,
		    ERR_INVALID_REFRESH_TOKEN, "sign in again", "invalid or expired refresh token");
	if ((tokens = iam_tokens(r, &u, PQgetvalue(res, 0, SR_ID), NULL)) == NULL)
		return api_error(r, 500, ERR_INTERNAL_ERROR, NULL, "internal error");
	json_set_bool(out, "success", 1);
	json_set_str(out, "access_token", json_get_str(tokens, "accessToken"));
	json_set_int(out, "expires_in", AUTH_ACCESS_TTL);
	json_set_str(out, "token_type", "Bearer");
	json_set_str(out, "id_token", json_get_str(tokens, "idToken"));
	/* camelCase too, as sign-in spells them */
	json_set_str(out, "accessToken", json_get_str(tokens, "accessToken"));
	json_set_int(out, "expiresIn", AUTH_ACCESS_TTL);
	return 200;
}

/* ---- passwords ---- */

int
iam_forgot_password(struct req *r, struct json_object *out)
{
	struct iam_user u;
	int found = iam_user_by_email(r, json_get_str(r->body, "email"), &u);
	const char *code;
	int issued;

	if (found < 0)
		return api_db_error(r);
	/* The answer is the same whether or not the account exists, and
	 * within the cooldown no second e-mail goes out. */
	if (found && ((issued = iam_code_issue(r, u.id, "reset_password", RESET_CODE_TTL,
	    IAM_COOLDOWN_SECONDS, &code)) < 0 ||
	    (issued == 1 && send_code(r, "password_reset", u.email, code,
	    "Reset your Bill Data Service password", "password reset", "15 minutes") != 0)))
		return api_db_error(r);
	json_set_bool(out, "success", 1);
	json_set_str(out, "message",
	    "if an account exists for this e-mail, a reset code has been sent");
	return 200;
}

int
iam_reset_password(struct req *r, struct json_object *out)
{
	const char *pw = json_get_str(r->body, "newPassword");
	struct iam_user u;
	enum iam_code c;
	int64_t retry;
	char *hash;
	int found;

	if (!iam_password_acceptable(pw))
		return api_field_error(r, 400, ERR_VALIDATION_ERROR, "newPassword",
		    "weak_password", iam_password_rule);
	if ((found = iam_user_by_email(r, json_get_str(r->body, "email"), &u)) < 0)
		return api_db_error(r);
	if (found == 0)
		return code_error(r, IAM_CODE_INVALID, 0);
	/* Its own transaction, committed either way: a wrong code answers 400
	 * and still counts toward the lockout. */
	if ((hash = iam_password_hash(r, pw)) == NULL)
		return api_error(r, 500, ERR_INTERNAL_ERROR, NULL, "internal error");
	if (db_begin(r->db) != 0 || iam_code_check(r, u.id, "reset_password",
	    json_get_str(r->body, "code"), &c, &retry) != 0)
		return api_db_error(r);
	if (c == IAM_CODE_OK) {
		/* The code proves the mailbox, so it also confirms the account. */
		const char *p[3] = { u.id, hash, "true" };

		if (db_query(r, &stmts[A_PASSWORD_SET], 3, p) == NULL ||
		    db_query(r, &stmts[A_SESSIONS_REVOKE_ALL], 1, p) == NULL)
			return api_db_error(r);
	}
	if (db_commit(r->db) != 0)
		return api_db_error(r);
	if (c != IAM_CODE_OK)
		return code_error(r, c, retry);
	json_set_bool(out, "success", 1);
	json_set_str(out, "message", "password changed; sign in with the new password");
	return 200;
}

/*
 * ROUTE_TX: a wrong current password answers 200 (success false), so its
 * throttle count commits with it. Every session of the user ends, this
 * one included (its access token stops at once); a fresh session's pair
 * is returned.
 */
int
iam_change_password(struct req *r, struct json_object *out)
{
	const char *pw = json_get_str(r->body, "newPassword");
	struct json_object *tokens;
	struct iam_user u;
	char *hash;
	int rc;

	if ((rc = iam_user_or_reply(r, r->user_id, &u)) != 0 ||
	    (rc = iam_throttle_take(r, u.email)) != 0)
		return rc;
	if (!iam_password_verify(u.password_hash, json_get_str(r->body, "currentPassword"))) {
		if (iam_throttle_fail(r, u.email) != 0)
			return api_db_error(r);
		return iam_outcome(r, out, 0, ERR_INVALID_PASSWORD, "the current password is wrong");
	}
	if (iam_throttle_pass(r, u.email) != 0)
		return api_db_error(r);
	if (!iam_password_acceptable(pw))
		return iam_outcome(r, out, 0, ERR_WEAK_PASSWORD, iam_password_rule);
	if ((hash = iam_password_hash(r, pw)) == NULL)
		return api_error(r, 500, ERR_INTERNAL_ERROR, NULL, "internal error");
	{
		const char *p[3] = { u.id, hash, "false" };

		if (db_query(r, &stmts[A_PASSWORD_SET], 3, p) == NULL ||
		    db_query(r, &stmts[A_SESSIONS_REVOKE_ALL], 1, p) == NULL ||
		    (tokens = iam_session_start(r, &u)) == NULL)
			return api_db_error(r);
	}
	iam_outcome(r, out, 1, NULL, "password changed; every session was signed out and "
	    "this one has a fresh pair");
	json_set(out, "tokens", json_object_get(tokens));
	return 200;
}

/* ---- the signed-in developer ---- */

int
iam_me(struct req *r, struct json_object *out)
{
	struct iam_user u;
	int rc;

	if ((rc = iam_user_or_reply(r, r->user_id, &u)) != 0)
		return rc;
	json_set_bool(out, "success", 1);
	user_json(out, &u, 1);
	return 200;
}

int
iam_jwks(struct req *r, struct json_object *out)
{
	const struct jwt_key *key = auth_jwt_key(r->cfg);
	struct json_object *jwks, *keys;

	if (key == NULL || (jwks = jwt_jwks(r->arena, key)) == NULL ||
	    !json_object_object_get_ex(jwks, "keys", &keys))
		return api_error(r, 500, ERR_INTERNAL_ERROR, NULL, "internal error");
	json_set(out, "keys", json_object_get(keys));
	return 200;
}
