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
#include "core/log.h"
#include "mail/mail.h"
#include "core/req.h"
#include "core/validate.h"

/*
 * Sign-in throttling (DECISIONS "Sign-in throttle"). An attempt is counted
 * before the password is checked (one atomic upsert), so parallel attempts
 * can never pass more than the limit; a right password takes its count
 * back. One address and one account: SIGNIN_PAIR_LIMIT attempts, then a
 * lock of SIGNIN_PAIR_DELAY seconds that doubles with every further
 * failure up to SIGNIN_WINDOW. One address, any accounts: SIGNIN_ADDR_LIMIT
 * attempts per window. One account, any addresses: never locked (that
 * would lock its owner out), but SIGNIN_ACCOUNT_ALERT failures in a window
 * raise an alert (log line and the signin_alerts view).
 */
#define SIGNIN_PAIR_LIMIT	5	/* attempts per (account, address) */
#define SIGNIN_PAIR_DELAY	60	/* seconds: the first lock of a pair */
#define SIGNIN_PAIR_WINDOW	3600	/* seconds the pair's count lasts */
#define SIGNIN_ADDR_LIMIT	20	/* failed sign-ins per address per window */
#define SIGNIN_ACCOUNT_ALERT	100	/* failures per account per window: alert */
#define SIGNIN_WINDOW		900	/* seconds: the window and the longest lock */
#define SIGNUP_CODE_TTL		86400
#define RESET_CODE_TTL		900

enum {
	A_USER_NEW,
	A_CLIENT_NEW,
	A_ACCEPT,
	A_CONFIRM,
	A_THROTTLE_CHECK,
	A_THROTTLE_TAKE,
	A_THROTTLE_CLEAR,
	A_THROTTLE_GIVE_BACK,
	A_THROTTLE_ACCOUNT,
	A_ALERTS,
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
	[A_THROTTLE_CHECK] = { "iam_throttle_check",
	    "SELECT coalesce(max(ceil(extract(epoch FROM locked_until - now()))), 0)::bigint"
	    " FROM auth_throttle WHERE locked_until > now()"
	    " AND ((scope = 'pair' AND key = $1) OR (scope = 'addr' AND key = $2))" },
	/*
	 * Count one attempt ($1 scope, $2 key) unless the row is locked (then
	 * no row comes back). A count past the window ($4 seconds) starts a
	 * new one; reaching the limit $3 locks for $5 seconds, doubled for
	 * every attempt beyond it, at most $6.
	 */
	[A_THROTTLE_TAKE] = { "iam_throttle_take",
	    "INSERT INTO auth_throttle AS t (scope, key, failures, window_start, locked_until)"
	    " VALUES ($1, $2, 1, now(), CASE WHEN $3::int <= 1"
	    "  THEN now() + make_interval(secs => least($5::int, $6::int)) END)"
	    " ON CONFLICT (scope, key) DO UPDATE SET"
	    "  failures = CASE WHEN t.window_start < now() - make_interval(secs => $4::int)"
	    "   THEN 1 ELSE t.failures + 1 END,"
	    "  window_start = CASE WHEN t.window_start < now() - make_interval(secs => $4::int)"
	    "   THEN now() ELSE t.window_start END,"
	    "  locked_until = CASE WHEN (CASE WHEN t.window_start < now() - make_interval(secs => $4::int)"
	    "   THEN 1 ELSE t.failures + 1 END) >= $3::int"
	    "   THEN now() + make_interval(secs => least($6::int, $5::int * power(2, greatest(0,"
	    "    t.failures + 1 - $3::int)))) ELSE NULL END"
	    " WHERE t.locked_until IS NULL OR t.locked_until <= now()"
	    " RETURNING failures" },
	/* A right password: the pair starts afresh. */
	[A_THROTTLE_CLEAR] = { "iam_throttle_clear",
	    "DELETE FROM auth_throttle WHERE scope = 'pair' AND key = $1" },
	/* ... and its attempt no longer counts against the address. */
	[A_THROTTLE_GIVE_BACK] = { "iam_throttle_give_back",
	    "UPDATE auth_throttle SET failures = greatest(failures - 1, 0),"
	    " locked_until = CASE WHEN failures - 1 < $2::int THEN NULL ELSE locked_until END"
	    " WHERE scope = 'addr' AND key = $1" },
	/* A failure account-wide; true when it just passed the ceiling $2 in
	 * this window ($3 seconds), once per window. */
	[A_THROTTLE_ACCOUNT] = { "iam_throttle_account",
	    "INSERT INTO auth_throttle AS t (scope, key, failures, window_start)"
	    " VALUES ('account', $1, 1, now())"
	    " ON CONFLICT (scope, key) DO UPDATE SET"
	    "  failures = CASE WHEN t.window_start < now() - make_interval(secs => $3::int)"
	    "   THEN 1 ELSE t.failures + 1 END,"
	    "  window_start = CASE WHEN t.window_start < now() - make_interval(secs => $3::int)"
	    "   THEN now() ELSE t.window_start END,"
	    "  alerted_at = CASE WHEN t.failures + 1 >= $2::int"
	    "   AND t.window_start >= now() - make_interval(secs => $3::int)"
	    "   AND (t.alerted_at IS NULL OR t.alerted_at < t.window_start)"
	    "   THEN now() ELSE t.alerted_at END"
	    " RETURNING alerted_at IS NOT NULL AND alerted_at = now(), failures" },
	[A_ALERTS] = { "iam_signin_alerts",
	    "SELECT email, failures, " DB_ISO("window_start") ", " DB_ISO("alerted_at")
	    " FROM signin_alerts ORDER BY alerted_at DESC, email" },
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
enum { TC_LEFT_SECS, TC__MAX };				/* iam_throttle_check */
enum { TA_ALERTED, TA_FAILURES, TA__MAX };		/* iam_throttle_account */
enum { AL_EMAIL, AL_FAILURES, AL_WINDOW, AL_ALERTED, AL__MAX };	/* iam_signin_alerts */
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

static const char *
client_addr(struct req *r)
{
	return r->http.remote_addr != NULL ? r->http.remote_addr : "-";
}

static const char *
pair_key(struct req *r, const char *email)
{
	return arena_printf(r->arena, "%s %s", email, client_addr(r));
}

/* The 429 of a locked pair or address: Retry-After the longest lock. */
static int
throttled(struct req *r, const char *email)
{
	const char *p[2] = { pair_key(r, email), client_addr(r) };
	PGresult *res = db_query(r, &stmts[A_THROTTLE_CHECK], 2, p);
	long long left;

	if (res == NULL)
		return api_db_error(r);
	left = atoll(PQgetvalue(res, 0, TC_LEFT_SECS));
	req_header_add(r, "Retry-After", arena_printf(r->arena, "%lld", left > 0 ? left : 1));
	return api_error(r, 429, ERR_TOO_MANY_ATTEMPTS, "wait before signing in again",
	    "too many failed sign-ins; try again in %lld seconds", left > 0 ? left : 1);
}

/* Count one attempt on (scope, key); 1 counted, 0 locked, -1 db failure. */
static int
throttle_take1(struct req *r, const char *scope, const char *key, int limit,
    int window, int delay)
{
	const char *p[6] = { scope, key, arena_printf(r->arena, "%d", limit),
	    arena_printf(r->arena, "%d", window), arena_printf(r->arena, "%d", delay),
	    arena_printf(r->arena, "%d", SIGNIN_WINDOW) };
	PGresult *res = db_query(r, &stmts[A_THROTTLE_TAKE], 6, p);

	return res == NULL ? -1 : PQntuples(res) == 1;
}

/*
 * Count a sign-in attempt for email from this address before the password
 * is checked: 0 to go on, else the 429 (or database error) written.
 */
static int
throttle_take(struct req *r, const char *email)
{
	int rc;

	if ((rc = throttle_take1(r, "pair", pair_key(r, email), SIGNIN_PAIR_LIMIT,
	    SIGNIN_PAIR_WINDOW, SIGNIN_PAIR_DELAY)) == 1)
		rc = throttle_take1(r, "addr", client_addr(r), SIGNIN_ADDR_LIMIT,
		    SIGNIN_WINDOW, SIGNIN_WINDOW);
	if (rc < 0)
		return api_db_error(r);
	return rc == 1 ? 0 : throttled(r, email);
}

/* The right password: the pair starts afresh, the address gets its
 * attempt back. 0 ok, -1 db failure. */
static int
throttle_pass(struct req *r, const char *email)
{
	const char *pc[1] = { pair_key(r, email) };
	const char *pg[2] = { client_addr(r), arena_printf(r->arena, "%d", SIGNIN_ADDR_LIMIT) };

	return db_query(r, &stmts[A_THROTTLE_CLEAR], 1, pc) != NULL &&
	    db_query(r, &stmts[A_THROTTLE_GIVE_BACK], 2, pg) != NULL ? 0 : -1;
}

/* A wrong password: count it account-wide; past the ceiling, alert the
 * operator once per window. 0 ok, -1 db failure. */
static int
throttle_fail(struct req *r, const char *email)
{
	const char *p[3] = { email, arena_printf(r->arena, "%d", SIGNIN_ACCOUNT_ALERT),
	    arena_printf(r->arena, "%d", SIGNIN_WINDOW) };
	PGresult *res = db_query(r, &stmts[A_THROTTLE_ACCOUNT], 3, p);

	if (res == NULL)
		return -1;
	if (PQntuples(res) == 1 && PQgetvalue(res, 0, TA_ALERTED)[0] == 't')
		log_msg("warn", "sign-in alert: %s failed sign-ins for account %s within %d"
		    " seconds (latest from %s); see bdsctl signin-alerts",
		    PQgetvalue(res, 0, TA_FAILURES), email, SIGNIN_WINDOW, client_addr(r));
	return 0;
}

int
iam_signin_alerts(struct db *db, struct arena *a, struct iam_signin_alert **out, size_t *n)
{
	PGresult *res = db_exec(db, a, &stmts[A_ALERTS], 0, NULL);
	int rows;

	*out = NULL;
	*n = 0;
	if (res == NULL)
		return -1;
	rows = PQntuples(res);
	*out = arena_alloc(a, (size_t)(rows > 0 ? rows : 1) * sizeof(**out));
	for (int i = 0; i < rows; i++) {
		(*out)[i].email = arena_strdup(a, PQgetvalue(res, i, AL_EMAIL));
		(*out)[i].failures = atoll(PQgetvalue(res, i, AL_FAILURES));
		(*out)[i].window_start = arena_strdup(a, PQgetvalue(res, i, AL_WINDOW));
		(*out)[i].alerted_at = arena_strdup(a, PQgetvalue(res, i, AL_ALERTED));
	}
	*n = (size_t)rows;
	return 0;
}

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

	if ((rc = throttle_take(r, email)) != 0)
		return rc;
	if ((found = iam_user_by_email(r, email, &u)) < 0)
		return api_db_error(r);
	/* An unknown e-mail costs one Argon2id verification too. */
	if (!iam_password_verify(found ? u.password_hash : NULL,
	    json_get_str(r->body, "password"))) {
		if (throttle_fail(r, email) != 0)
			return api_db_error(r);
		return api_error(r, 401, ERR_INVALID_CREDENTIALS, NULL, "invalid e-mail or password");
	}
	if (throttle_pass(r, email) != 0)
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
	    (rc = throttle_take(r, u.email)) != 0)
		return rc;
	if (!iam_password_verify(u.password_hash, json_get_str(r->body, "currentPassword"))) {
		if (throttle_fail(r, u.email) != 0)
			return api_db_error(r);
		return iam_outcome(r, out, 0, ERR_INVALID_PASSWORD, "the current password is wrong");
	}
	if (throttle_pass(r, u.email) != 0)
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
