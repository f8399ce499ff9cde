/* Helpers shared by the account modules: passwords, users, codes, sessions. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "core/arena.h"
#include "core/auth.h"
#include "core/config.h"
#include "core/crypto.h"
#include "core/db.h"
#include "core/errors.h"
#include "iam/iam.h"
#include "core/json.h"
#include "core/jwt.h"
#include "core/req.h"
#include "core/validate.h"

#define USER_COLS "id, email, password_hash, given_name, family_name, company_name, " \
	DB_ISO("created_at") ", " DB_ISO("updated_at") ", live_access, " \
	"confirmed_at IS NOT NULL, email_verified, billing_done_at IS NOT NULL"
enum user_col {
	UC_ID, UC_EMAIL, UC_PASSWORD_HASH, UC_GIVEN_NAME, UC_FAMILY_NAME,
	UC_COMPANY_NAME, UC_CREATED_AT, UC_UPDATED_AT, UC_LIVE_ACCESS,
	UC_CONFIRMED, UC_EMAIL_VERIFIED, UC_BILLING_DONE, UC__MAX
};
/* iam_code_get's columns */
enum code_col { CC_HASH, CC_EXPIRED, CC_USED, CC_LOCKED_SECS, CC__MAX };

enum {
	C_USER_BY_EMAIL,
	C_USER_BY_ID,
	C_CODE_UPSERT,
	C_CODE_GET,
	C_CODE_WRONG,
	C_CODE_USED,
	C_CODE_COOLDOWN,
	C_SESSION_NEW,
	C__MAX
};
static struct db_stmt stmts[C__MAX] = {
	[C_USER_BY_EMAIL] = { "iam_user_by_email",
	    "SELECT " USER_COLS " FROM users WHERE email = $1" },
	[C_USER_BY_ID] = { "iam_user_by_id",
	    "SELECT " USER_COLS " FROM users WHERE id = $1" },
	/* A new code replaces the old one; a running lockout survives it. */
	[C_CODE_UPSERT] = { "iam_code_upsert",
	    "INSERT INTO email_codes (user_id, purpose, code_hash, expires_at)"
	    " VALUES ($1, $2, decode($3, 'hex'), now() + make_interval(secs => $4::int))"
	    " ON CONFLICT (user_id, purpose) DO UPDATE SET"
	    "  code_hash = EXCLUDED.code_hash, expires_at = EXCLUDED.expires_at,"
	    "  sent_at = now(), used_at = NULL,"
	    "  attempts = CASE WHEN email_codes.locked_until > now()"
	    "   THEN email_codes.attempts ELSE 0 END,"
	    "  locked_until = CASE WHEN email_codes.locked_until > now()"
	    "   THEN email_codes.locked_until END"
	    " WHERE email_codes.sent_at <= now() - make_interval(secs => $5::int)"
	    " RETURNING 1" },
	[C_CODE_GET] = { "iam_code_get",
	    "SELECT encode(code_hash, 'hex'), expires_at <= now(), used_at IS NOT NULL,"
	    " coalesce(ceil(extract(epoch FROM locked_until - now())), 0)::bigint"
	    " FROM email_codes WHERE user_id = $1 AND purpose = $2 FOR UPDATE" },
	/* A lockout that ran out starts the count again. */
	[C_CODE_WRONG] = { "iam_code_wrong",
	    "UPDATE email_codes SET"
	    " attempts = CASE WHEN locked_until <= now() THEN 1 ELSE attempts + 1 END,"
	    " locked_until = CASE"
	    "  WHEN (CASE WHEN locked_until <= now() THEN 1 ELSE attempts + 1 END) >= $3::int"
	    "   THEN now() + make_interval(secs => $4::int)"
	    "  WHEN locked_until <= now() THEN NULL ELSE locked_until END"
	    " WHERE user_id = $1 AND purpose = $2"
	    " RETURNING coalesce(ceil(extract(epoch FROM locked_until - now())), 0)::bigint" },
	[C_CODE_USED] = { "iam_code_used",
	    "UPDATE email_codes SET used_at = now(), attempts = 0, locked_until = NULL"
	    " WHERE user_id = $1 AND purpose = $2" },
	/* capped at the cooldown: a request whose transaction began just
	 * before a concurrent one wrote sent_at sees it in its future */
	[C_CODE_COOLDOWN] = { "iam_code_cooldown",
	    "SELECT least($3::int, greatest(0, ceil(extract(epoch FROM"
	    " sent_at + make_interval(secs => $3::int) - now()))))::bigint"
	    " FROM email_codes WHERE user_id = $1 AND purpose = $2" },
	[C_SESSION_NEW] = { "iam_session_new",
	    "INSERT INTO sessions (id, user_id, refresh_hash, refresh_expires_at)"
	    " VALUES ($1, $2, decode($3, 'hex'), now() + make_interval(days => $4::int))" },
};
const struct db_stmt_set iam_common_stmt_set = { "iam_common", stmts, C__MAX };

const char iam_password_rule[] =
    "the password needs at least 12 characters with upper case, lower case, "
    "digits and special characters";

int
iam_password_acceptable(const char *pw)
{
	int up = 0, low = 0, digit = 0, special = 0;
	size_t n = 0;

	for (const unsigned char *p = (const unsigned char *)pw; *p; p++) {
		if ((*p & 0xc0) != 0x80)
			n++;	/* count code points, not bytes */
		if (isupper(*p))
			up = 1;
		else if (islower(*p))
			low = 1;
		else if (isdigit(*p))
			digit = 1;
		else
			special = 1;	/* punctuation, space, non-ASCII */
	}
	return n >= 12 && up && low && digit && special;
}

char *
iam_password_hash(struct req *r, const char *pw)
{
	char *out = arena_alloc(r->arena, crypto_pwhash_STRBYTES);

	if (crypto_pwhash_str(out, pw, strlen(pw), crypto_pwhash_OPSLIMIT_INTERACTIVE,
	    crypto_pwhash_MEMLIMIT_INTERACTIVE) != 0)
		return NULL;
	return out;
}

int
iam_password_verify(const char *hash, const char *pw)
{
	static char dummy[crypto_pwhash_STRBYTES];

	if (hash != NULL)
		return crypto_pwhash_str_verify(hash, pw, strlen(pw)) == 0;
	/* Same cost as a real verification, for an unknown account. */
	if (dummy[0] == '\0' && crypto_pwhash_str(dummy, "not a password", 14,
	    crypto_pwhash_OPSLIMIT_INTERACTIVE, crypto_pwhash_MEMLIMIT_INTERACTIVE) != 0)
		return 0;
	{
		volatile int spent = crypto_pwhash_str_verify(dummy, pw, strlen(pw));

		(void)spent;
	}
	return 0;
}

char *
iam_email_normalise(struct req *r, const char *email)
{
	char *e = arena_strdup(r->arena, email);

	for (char *p = e; *p; p++)
		*p = (char)tolower((unsigned char)*p);
	return e;
}

static void
user_from_row(struct req *r, PGresult *res, struct iam_user *u)
{
#define COL(i) (PQgetisnull(res, 0, i) ? NULL : arena_strdup(r->arena, PQgetvalue(res, 0, i)))
	u->id = COL(UC_ID);
	u->email = COL(UC_EMAIL);
	u->password_hash = COL(UC_PASSWORD_HASH);
	u->given_name = COL(UC_GIVEN_NAME);
	u->family_name = COL(UC_FAMILY_NAME);
	u->company_name = COL(UC_COMPANY_NAME);
	u->created_at = COL(UC_CREATED_AT);
	u->updated_at = COL(UC_UPDATED_AT);
	u->live_access = COL(UC_LIVE_ACCESS);
	u->confirmed = PQgetvalue(res, 0, UC_CONFIRMED)[0] == 't';
	u->email_verified = PQgetvalue(res, 0, UC_EMAIL_VERIFIED)[0] == 't';
	u->billing_done = PQgetvalue(res, 0, UC_BILLING_DONE)[0] == 't';
#undef COL
}

static int
user_lookup(struct req *r, int stmt, const char *key, struct iam_user *u)
{
	const char *p[1] = { key };
	PGresult *res = db_query(r, &stmts[stmt], 1, p);

	memset(u, 0, sizeof(*u));
	if (res == NULL)
		return -1;
	if (PQntuples(res) != 1)
		return 0;
	user_from_row(r, res, u);
	return 1;
}

int
iam_user_by_email(struct req *r, const char *email, struct iam_user *u)
{
	return user_lookup(r, C_USER_BY_EMAIL, iam_email_normalise(r, email), u);
}

int
iam_user_by_id(struct req *r, const char *id, struct iam_user *u)
{
	return user_lookup(r, C_USER_BY_ID, id, u);
}

int
iam_user_or_reply(struct req *r, const char *id, struct iam_user *u)
{
	int found = user_lookup(r, C_USER_BY_ID, id, u);

	if (found < 0)
		return api_db_error(r);
	if (found == 0)
		return api_error(r, 401, ERR_UNAUTHORIZED, NULL, "the account no longer exists");
	return 0;
}

/* The keyed hash of a code, bound to its user, as hex. */
static char *
code_hash(struct req *r, const char *user_id, const char *purpose, const char *code)
{
	unsigned char h[32];

	crypto_keyed_hash(r->cfg->secret_key, purpose,
	    arena_printf(r->arena, "%s:%s", user_id, code), h);
	return crypto_hex_encode(r->arena, h, sizeof(h));
}

int
iam_code_issue(struct req *r, const char *user_id, const char *purpose, int ttl,
    int cooldown, const char **out)
{
	char *code = arena_printf(r->arena, "%06u", (unsigned)randombytes_uniform(1000000));
	const char *p[5] = { user_id, purpose, code_hash(r, user_id, purpose, code),
	    arena_printf(r->arena, "%d", ttl), arena_printf(r->arena, "%d", cooldown) };
	PGresult *res = db_query(r, &stmts[C_CODE_UPSERT], 5, p);

	*out = NULL;
	if (res == NULL)
		return -1;
	if (PQntuples(res) != 1)
		return 0;
	*out = code;
	return 1;
}

int
iam_code_check(struct req *r, const char *user_id, const char *purpose,
    const char *code, enum iam_code *out, int64_t *retry_after)
{
	const char *p[4] = { user_id, purpose,
	    arena_printf(r->arena, "%d", IAM_CODE_ATTEMPTS),
	    arena_printf(r->arena, "%d", IAM_LOCKOUT_SECONDS) };
	PGresult *res;
	long long locked;

	*retry_after = 0;
	if ((res = db_query(r, &stmts[C_CODE_GET], 2, p)) == NULL)
		return -1;
	if (PQntuples(res) != 1) {
		*out = IAM_CODE_INVALID;
		return 0;
	}
	if ((locked = atoll(PQgetvalue(res, 0, CC_LOCKED_SECS))) > 0) {
		*out = IAM_CODE_LOCKED;
		*retry_after = locked;
		return 0;
	}
	if (PQgetvalue(res, 0, CC_USED)[0] == 't') {
		*out = IAM_CODE_INVALID;	/* single use */
		return 0;
	}
	if (crypto_ct_streq(PQgetvalue(res, 0, CC_HASH), code_hash(r, user_id, purpose, code))) {
		if (PQgetvalue(res, 0, CC_EXPIRED)[0] == 't') {
			*out = IAM_CODE_EXPIRED;
			return 0;
		}
		*out = IAM_CODE_OK;
		return db_query(r, &stmts[C_CODE_USED], 2, p) != NULL ? 0 : -1;
	}
	if ((res = db_query(r, &stmts[C_CODE_WRONG], 4, p)) == NULL)
		return -1;
	locked = PQntuples(res) == 1 ? atoll(PQgetvalue(res, 0, 0)) : 0;
	*out = locked > 0 ? IAM_CODE_LOCKED : IAM_CODE_INVALID;
	*retry_after = locked;
	return 0;
}

int64_t
iam_code_cooldown(struct req *r, const char *user_id, const char *purpose, int secs)
{
	const char *p[3] = { user_id, purpose, arena_printf(r->arena, "%d", secs) };
	PGresult *res = db_query(r, &stmts[C_CODE_COOLDOWN], 3, p);

	if (res == NULL)
		return -1;
	return PQntuples(res) == 1 ? atoll(PQgetvalue(res, 0, 0)) : 0;
}

void
iam_cookie(struct req *r, const char *access, int max_age)
{
	req_header_add(r, "Set-Cookie", arena_printf(r->arena,
	    "%s=%s; Path=/; Max-Age=%d; HttpOnly; SameSite=Strict%s",
	    r->cfg->cookie_name, access ? access : "", max_age,
	    iam_settings(r->cfg)->cookie_secure ? "; Secure" : ""));
}

static struct json_object *
claims_base(struct req *r, const struct iam_user *u, const char *sid,
    const char *use, int64_t now)
{
	struct json_object *c = json_obj(r->arena);

	json_set_str(c, "iss", r->cfg->jwt_issuer);
	json_set_str(c, "sub", u->id);
	json_set_str(c, "aud", AUTH_AUDIENCE);
	json_set_int(c, "iat", now);
	json_set_int(c, "exp", now + AUTH_ACCESS_TTL);
	json_set_str(c, "jti", crypto_id_new(r->arena, "jti"));
	json_set_str(c, "sid", sid);
	json_set_str(c, "token_use", use);
	return c;
}

struct json_object *
iam_tokens(struct req *r, const struct iam_user *u, const char *sid, const char *refresh)
{
	const struct jwt_key *key = auth_jwt_key(r->cfg);
	int64_t now = auth_now();
	struct json_object *t = json_obj(r->arena), *idc;
	char *access;

	if (key == NULL)
		return NULL;
	access = jwt_sign(r->arena, key, claims_base(r, u, sid, "access", now));
	idc = claims_base(r, u, sid, "id", now);
	json_set_str(idc, "email", u->email);
	json_set_bool(idc, "email_verified", u->email_verified);
	json_set_str(idc, "given_name", u->given_name);
	json_set_str(idc, "family_name", u->family_name);
	json_set_str(t, "accessToken", access);
	if (refresh != NULL)
		json_set_str(t, "refreshToken", refresh);
	json_set_str(t, "idToken", jwt_sign(r->arena, key, idc));
	json_set_int(t, "expiresIn", AUTH_ACCESS_TTL);
	json_set_str(t, "tokenType", "Bearer");
	iam_cookie(r, access, AUTH_ACCESS_TTL);
	return t;
}

struct json_object *
iam_session_start(struct req *r, const struct iam_user *u)
{
	unsigned char raw[32], h[32];
	char *sid = crypto_id_new(r->arena, "ses"), *refresh;
	const char *p[4];

	crypto_random_bytes(raw, sizeof(raw));
	refresh = arena_printf(r->arena, "rt_%s", crypto_b64url_encode(r->arena, raw, sizeof(raw)));
	crypto_sha256(refresh, strlen(refresh), h);
	p[0] = sid;
	p[1] = u->id;
	p[2] = crypto_hex_encode(r->arena, h, sizeof(h));
	p[3] = arena_printf(r->arena, "%d", IAM_REFRESH_DAYS);
	if (db_query(r, &stmts[C_SESSION_NEW], 4, p) == NULL)
		return NULL;
	return iam_tokens(r, u, sid, refresh);
}

int
iam_outcome(struct req *r, struct json_object *out, int success,
    const char *error_code, const char *message)
{
	json_set_bool(out, "success", success);
	json_set_str(out, "message", message);
	json_set_str(out, "error_code", error_code);
	if (!success)
		r->error_code = error_code;
	return 200;
}
