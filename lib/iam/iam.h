#ifndef BDS_IAM_H
#define BDS_IAM_H
/*
 * Developer accounts: the handlers of the /v1/iam/auth routes and the other
 * /v1/iam account routes (iam_auth.c: sign-up to sessions; iam_account.c: legal registry,
 * e-mail verification, business verification, live access), and the
 * helpers they share (iam_common.c); the sign-in throttles (iam_throttle.c).
 */
#include <stddef.h>
#include <stdint.h>

#include "core/config.h"
#include "core/validate.h"

struct req;
struct json_object;
struct db_stmt_set;

/* ---- handlers (lib/routes.c) ---- */
int	 iam_legal_documents(struct req *, struct json_object *);
int	 iam_signup(struct req *, struct json_object *);
int	 iam_confirm_signup(struct req *, struct json_object *);
int	 iam_confirm_and_signin(struct req *, struct json_object *);
int	 iam_signin(struct req *, struct json_object *);
int	 iam_signout(struct req *, struct json_object *);
int	 iam_refresh(struct req *, struct json_object *);
int	 iam_forgot_password(struct req *, struct json_object *);
int	 iam_reset_password(struct req *, struct json_object *);
int	 iam_change_password(struct req *, struct json_object *);
int	 iam_me(struct req *, struct json_object *);
int	 iam_email_request(struct req *, struct json_object *);
int	 iam_email_verify(struct req *, struct json_object *);
int	 iam_verification_request(struct req *, struct json_object *);
int	 iam_request_live_access(struct req *, struct json_object *);
int	 iam_jwks(struct req *, struct json_object *);

/* ---- body specs ---- */
extern const struct vfield iam_signup_fields[], iam_confirm_fields[],
	iam_confirm_signin_fields[], iam_signin_fields[], iam_signout_fields[],
	iam_refresh_fields[], iam_forgot_fields[], iam_reset_fields[],
	iam_change_password_fields[], iam_verify_code_fields[],
	iam_verification_fields[];

extern const struct db_stmt_set iam_auth_stmt_set, iam_account_stmt_set,
	iam_common_stmt_set, iam_throttle_stmt_set;

/* ---- shared helpers (iam_common.c) ---- */

#define IAM_CODE_ATTEMPTS	5	/* wrong codes before a lockout */
#define IAM_LOCKOUT_SECONDS	900	/* 15 minutes */
#define IAM_COOLDOWN_SECONDS	300	/* between e-mail verification requests */
#define IAM_REFRESH_DAYS	30

/* Password rule: >= 12 characters with upper, lower, digit and special. */
int	 iam_password_acceptable(const char *);
extern const char iam_password_rule[];
/* Argon2id (crypto_pwhash_str, INTERACTIVE limits); arena string or NULL. */
char	*iam_password_hash(struct req *, const char *password);
/* 1 when password matches hash; with hash NULL burns the same time and
 * returns 0 (unknown e-mail takes as long as a wrong password). */
int	 iam_password_verify(const char *hash, const char *password);

/* The user's row as a view. All strings are arena copies; NULL when absent. */
struct iam_user {
	const char	*id, *email, *password_hash, *given_name, *family_name,
			*company_name, *created_at, *updated_at, *live_access;
	int		 confirmed, email_verified, billing_done;
};
/* 1 found, 0 none, -1 database failure. email is matched lower-cased. */
int	 iam_user_by_email(struct req *, const char *email, struct iam_user *);
int	 iam_user_by_id(struct req *, const char *id, struct iam_user *);
char	*iam_email_normalise(struct req *, const char *email);
/* The signed-in developer's row: 0 with *u filled, else the status already
 * written (401 UNAUTHORIZED when the account is gone, or a database error). */
int	 iam_user_or_reply(struct req *, const char *id, struct iam_user *);

/* One-time codes. */
enum iam_code {
	IAM_CODE_OK,
	IAM_CODE_INVALID,	/* wrong, used, or none issued */
	IAM_CODE_EXPIRED,
	IAM_CODE_LOCKED		/* *retry_after seconds left */
};
/* Issue a fresh 6-digit code (replacing any previous one of that purpose;
 * a running lockout is kept) unless the previous one was sent less than
 * cooldown_seconds ago: the check and the write are one statement, so
 * concurrent requests issue one code. Inside the caller's transaction.
 * 1 issued with *code (arena, for the e-mail only), 0 cooling down, -1
 * database failure. */
int	 iam_code_issue(struct req *, const char *user_id, const char *purpose,
	    int ttl_seconds, int cooldown_seconds, const char **code);
/* Check a code inside the caller's transaction; counts wrong attempts and
 * marks a right one used. -1 on database failure. */
int	 iam_code_check(struct req *, const char *user_id, const char *purpose,
	    const char *code, enum iam_code *, int64_t *retry_after);
/* Seconds left in the request cooldown of purpose (0: none); -1 db failure. */
int64_t	 iam_code_cooldown(struct req *, const char *user_id, const char *purpose,
	    int cooldown_seconds);

/*
 * Start a session (inside the caller's transaction) and build
 * {accessToken, refreshToken, idToken, expiresIn, tokenType}; also sets the
 * auth cookie. NULL on database failure.
 */
struct json_object *iam_session_start(struct req *, const struct iam_user *);
/* New access + id tokens for an existing session (no refresh token). */
struct json_object *iam_tokens(struct req *, const struct iam_user *,
	    const char *session_id, const char *refresh_token);
void	 iam_cookie(struct req *, const char *access_token, int max_age);

/* The current legal documents (newest effective version of each kind).
 * 1 ok with *docs (arena) and *n in 1..3; 0 when the registry is empty or
 * holds a document not yet effective (sign-up is closed); -1 db failure. */
struct iam_legal {
	const char	*kind, *version, *effective_date;
};
int	 iam_legal_current(struct req *, struct iam_legal **docs, size_t *n);

/* Answer a 200 with {success, message, error_code} (success false keeps 200:
 * the spec's "branch on success" bodies). Returns 200. */
int	 iam_outcome(struct req *, struct json_object *out, int success,
	    const char *error_code, const char *message);

/* ---- sign-in throttles (iam_throttle.c) ---- */

/*
 * Count a sign-in attempt for email from the request's address before the
 * password is checked: 0 to go on, else the 429 (Retry-After) or database
 * error already written.
 */
int	 iam_throttle_take(struct req *, const char *email);
/* The right password: the pair starts afresh, the address gets its
 * attempt back. 0 ok, -1 db failure. */
int	 iam_throttle_pass(struct req *, const char *email);
/* A wrong password: count it account-wide; past the ceiling, alert the
 * operator once per window. 0 ok, -1 db failure. */
int	 iam_throttle_fail(struct req *, const char *email);

/*
 * The operator's view of sign-in alerts: accounts whose failed sign-ins
 * passed the account-wide ceiling (they are never locked for it), newest
 * alert first. 0 with *alerts (arena array, *n entries, arena strings), -1
 * on a database failure. For bdsctl; runs outside any request.
 */
struct iam_signin_alert {
	const char	*email;
	long long	 failures;	/* in the current window */
	const char	*window_start, *alerted_at;	/* ISO 8601 UTC */
};
struct db;
struct arena;
int	 iam_signin_alerts(struct db *, struct arena *, struct iam_signin_alert **alerts,
	    size_t *n);

/* The module's settings (config keys of the same names). */
struct iam_settings {
	char	*billing;	/* manual (bdsctl billing done) | none (done at once) */
	int	 cookie_secure;	/* Secure attribute on the developer auth cookie */
	int	 clients_max;	/* clients per developer */
	char	*legal_url;	/* the legal texts: <legal_url>/<kind>; default
				 * ${link_url}/legal, the link host's pages */
};

/* The module (iam_module.c) and its settings block (core/config.h). */
extern const struct module iam_module;
static inline const struct iam_settings *
iam_settings(const struct config *c)
{
	return config_module(c, &iam_module);
}

#endif
