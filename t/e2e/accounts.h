#ifndef BDS_E2E_ACCOUNTS_H
#define BDS_E2E_ACCOUNTS_H
/*
 * Helpers shared by the developer-account suites (check_e2e_accounts_*):
 * a stack with mail_transport = smtp, a checked fixture that gives every
 * test a clean throttle table, an empty outbox and the standard legal
 * registry, HTTP calls through nginx on the api host, the SMTP sink as a
 * mailbox, sign-up/confirm/sign-in flows, a libpq connection for checks
 * in the database, and the small encoders the JWT tests need.
 *
 * Check forks one child per test: everything here that holds state (the
 * database connection, a sink) lives inside one test. E-mail addresses
 * carry the test child's pid, so tests sharing one stack never collide.
 */
#include <stddef.h>
#include <stdint.h>

#include <check.h>
#include <json-c/json.h>
#include <libpq-fe.h>

#include "harness.h"
#include "smtp_sink.h"

/* The standard registry every test starts from (acct_setup()). */
#define ACCT_TERMS_VERSION	"2026-01"
#define ACCT_TERMS_DATE		"2026-01-01"
#define ACCT_PRIVACY_VERSION	"2026-02"
#define ACCT_PRIVACY_DATE	"2026-02-01"
#define ACCT_DPA_VERSION	"1.0"
#define ACCT_DPA_DATE		"2025-06-15"

/* ------------------------------------------------------------------ */
/* Stack and per-test fixture                                          */

/* Unchecked fixtures: a stack with mail_transport = smtp; deployment
 * development (the harness default) or production. */
void	 acct_stack_development(void);
void	 acct_stack_production(void);
/*
 * Checked fixture: healthy stack, no deliverer left running, a database
 * connection (acct_pg()), no sign-in throttles, an empty outbox, and the
 * standard legal registry (terms, privacy, dpa above).
 */
void	 acct_setup(void);
void	 acct_teardown(void);

/* ------------------------------------------------------------------ */
/* Database (the test's own connection)                                */

PGconn	*acct_pg(void);
/* Run q with up to 3 text parameters (NULL-terminated); fail the test on
 * an error. The result: PQclear it. */
PGresult *acct_sql(const char *q, const char *p1, const char *p2, const char *p3);
/* The first value of the first row (malloc'ed; NULL for SQL NULL); the
 * test fails when there is no row. */
char	*acct_sql_value(const char *q, const char *p1, const char *p2, const char *p3);
/* The first value as an integer. */
long long acct_sql_int(const char *q, const char *p1, const char *p2, const char *p3);
void	 acct_sql_exec(const char *q, const char *p1, const char *p2, const char *p3);

/* ------------------------------------------------------------------ */
/* Legal registry (bdsctl legal add)                                   */

void	 acct_legal_clear(void);
/* bdsctl legal add KIND VERSION DATE; returns its exit status. */
int	 acct_legal_add(const char *kind, const char *version, const char *date);
/* Clear and register the standard three documents. */
void	 acct_legal_standard(void);
/* UTC date `days` from today, YYYY-MM-DD (static buffer, one per call
 * site is enough: copy it). */
const char *acct_date(int days);
/* The legal_acceptances array (JSON text) accepting the standard set. */
extern const char acct_acceptances_json[];

/* ------------------------------------------------------------------ */
/* HTTP through nginx, api host                                        */

/*
 * method path on the api host. token: sent as Authorization: Bearer (NULL:
 * none). body: sent with Content-Type: application/json (NULL: no body).
 * extra: more "Name: value" headers (NULL-terminated, or NULL).
 */
struct harness_resp *acct_call(const char *method, const char *path, const char *token,
	    const char *body, const char *const extra[]);
struct harness_resp *acct_get(const char *path, const char *token);
struct harness_resp *acct_post(const char *path, const char *token, const char *body);
struct harness_resp *acct_postf(const char *path, const char *token, const char *fmt, ...)
	    __attribute__((format(printf, 3, 4)));

/* A member by dotted path ("user.id", "tokens.accessToken",
 * "errors.0.code"); NULL when absent. */
struct json_object *acct_json(const struct harness_resp *r, const char *path);
/* ... as a string (NULL when absent or not a string). */
const char *acct_str(const struct harness_resp *r, const char *path);
/*
 * Checks in the harness's style: NULL when right, else a message (static).
 * iam: harness_check_iam() and error_code == code.
 * error: errors[] holds an item {field, code}.
 * outcome: 200, the common headers, a boolean success == want, a message
 *   string, and (code non-NULL) error_code == code.
 * success: 200, the common headers and success true.
 */
const char *acct_check_iam(const struct harness_resp *, long status, const char *code);
const char *acct_check_error(const struct harness_resp *, const char *field, const char *code);
const char *acct_check_outcome(const struct harness_resp *, int want, const char *code);
const char *acct_check_success(const struct harness_resp *);

#define acct_assert_iam(r, status, code)	HARNESS_ASSERT_(acct_check_iam((r), (status), (code)))
#define acct_assert_error(r, field, code)	HARNESS_ASSERT_(acct_check_error((r), (field), (code)))
#define acct_assert_outcome(r, want, code)	HARNESS_ASSERT_(acct_check_outcome((r), (want), (code)))
#define acct_assert_success(r)			HARNESS_ASSERT_(acct_check_success((r)))

/* ------------------------------------------------------------------ */
/* Mail: the SMTP sink as a mailbox                                    */

struct acct_mail {
	struct smtp_sink	*sink;	/* read with smtp_sink_take() */
};

/* Start a sink on harness_smtp_port() (inside the test). */
void	 acct_mail_start(struct acct_mail *);
void	 acct_mail_stop(struct acct_mail *);
/*
 * Run bds-deliver --once, then take the oldest message to `to` not taken
 * yet, and its 6-digit code. The test fails when none arrives. The
 * message is returned (valid until acct_mail_stop()).
 */
const struct smtp_msg *acct_mail_code(struct acct_mail *, const char *to, char code[7]);
/* Run bds-deliver --once; the number of messages to `to` not taken yet
 * (they are taken now). */
size_t	 acct_mail_count(struct acct_mail *, const char *to);

/* ------------------------------------------------------------------ */
/* Developer accounts                                                  */

struct acct_user {
	char	 email[160];
	char	 password[96];
	char	 user_id[96];
	char	 client_id[96];
	char	 code[7];		/* the last code read from the mailbox */
	char	 access[2048];		/* from the last sign-in */
	char	 refresh[256];
	char	 id_token[2048];
};

/* A unique address "<tag>-<pid>-<n>@example.test" and a fresh password
 * meeting the rule (unique too, so a leak of it is recognisable). */
void	 acct_user_init(struct acct_user *, const char *tag);
/* The standard sign-up body for u (malloc'ed). */
char	*acct_signup_body(const struct acct_user *);
/* POST signup (201, ids kept) and read the confirmation code. */
void	 acct_signup(struct acct_user *, struct acct_mail *);
/* POST confirm-signup with u->code (200). */
void	 acct_confirm(struct acct_user *);
/* POST signin (200); keeps the tokens. */
void	 acct_signin(struct acct_user *);
/* init + sign-up + confirm + sign-in. */
void	 acct_new_user(struct acct_user *, const char *tag, struct acct_mail *);
/* request-verification, read the code, email/verify (success true). */
void	 acct_verify_email(struct acct_user *, struct acct_mail *);

/* ------------------------------------------------------------------ */
/* Odds and ends                                                       */

/* A file's content, NUL-terminated (malloc'ed), or NULL. */
char	*acct_slurp(const char *path, size_t *len);
/* base64url without padding (malloc'ed); standard base64 with padding. */
char	*acct_b64url(const void *data, size_t len);
char	*acct_b64(const void *data, size_t len);
/* Decode base64url (padding optional) into a malloc'ed buffer, NUL-terminated
 * for convenience; NULL when it is not base64url. */
unsigned char *acct_b64url_decode(const char *s, size_t len, size_t *outlen);
/* Run a shell command, its stdout+stderr into a malloc'ed string; the exit
 * status in *status. */
char	*acct_run(const char *cmd, int *status);

#endif
