#ifndef BDS_E2E_DEVACCT_H
#define BDS_E2E_DEVACCT_H
/*
 * Developers for the client suites (check_e2e_clients, check_e2e_secrets),
 * made the way a developer makes one: sign-up, the confirmation code read
 * from the e-mail (the harness's default spool transport: bds-deliver
 * --once writes .eml files into harness_mail_dir()), confirm-and-signin;
 * then, as needed, e-mail verification and live access (the stack needs
 * `billing = none` for the latter).
 *
 * Argon2id makes each sign-up cost a few hundred milliseconds, so a suite
 * makes its developers once, in its unchecked fixture (the suite's main
 * process), and every test (a forked child) inherits them.
 */
#include <stddef.h>

#include <json-c/json.h>
#include <libpq-fe.h>

#include "harness.h"

struct devacct {
	char	 email[128];
	char	 password[64];
	char	 user_id[96];
	char	 client_id[96];		/* the client sign-up made */
	char	 access[2048];		/* access token */
};

/* A sandbox client of a developer and its key (malloc'ed). */
struct devacct_tenant {
	char	*client, *key;
};

/*
 * The two tenants a suite compares: developer d (tag) with a verified
 * e-mail, then client A with a sandbox key and a development key
 * (*dev_key: the api host, another environment) and client B with a
 * sandbox key. The legal documents are registered first.
 */
void	 devacct_tenants_new(struct devacct *d, const char *tag, struct devacct_tenant *a,
	    struct devacct_tenant *b, char **dev_key);
void	 devacct_tenants_free(struct devacct_tenant *a, struct devacct_tenant *b, char **dev_key);

/* Register the legal documents sign-up needs (once per stack); the
 * legal_acceptances array of a sign-up body that accepts them. */
void	 devacct_legal(void);
extern const char devacct_acceptances[];
/* Sign up a developer ("<tag>-<pid>-<n>@example.test"), confirm with the
 * e-mailed code and sign in. */
void	 devacct_new(struct devacct *, const char *tag);
/* request-verification, read the code, email/verify. */
void	 devacct_verify_email(struct devacct *);
/* Business verification form and request-live-access (granted at once
 * outside production; needs a verified e-mail and billing = none). */
void	 devacct_live_access(struct devacct *);

/*
 * method path on host ("api" or "sandbox"). auth: the whole Authorization
 * value ("Bearer ...", "Basic ..."), or NULL. body: JSON text sent with
 * Content-Type: application/json, or NULL. extra: more "Name: value"
 * headers (NULL-terminated) or NULL.
 */
struct harness_resp *devacct_call(const char *method, const char *host, const char *path,
	    const char *auth, const char *body, const char *const extra[]);
/* The same with the developer's access token on the api host. */
struct harness_resp *devacct_jwt(const struct devacct *, const char *method,
	    const char *path, const char *body, const char *const extra[]);
/* "Bearer <token>" (static buffer per call site: use it at once). */
const char *devacct_bearer(const char *token);
/* "Basic base64(user:pass)" (malloc'ed). */
char	*devacct_basic(const char *user, const char *pass);

/* A member by dotted path ("secret.id", "errors.0.field"); NULL if absent. */
struct json_object *devacct_json(const struct harness_resp *, const char *path);
const char *devacct_str(const struct harness_resp *, const char *path);
/* The integer or boolean at path; the test fails when it is absent or of
 * another type. */
long long devacct_int(const struct harness_resp *, const char *path);
/* The compact JSON text of the member at path, "(absent)" when missing. */
const char *devacct_text(const struct harness_resp *, const char *path);
/* A fresh client of d, and a fresh API key of env for one of its clients
 * (both malloc'ed; the test fails when the API refuses). */
char	*devacct_client_new(const struct devacct *);
char	*devacct_key_new(const struct devacct *, const char *client, const char *env);
/* POST /v1/sandbox/account-links with a sandbox key: the fixture username
 * for client_user_id user (an Idempotency-Key each); the link's id
 * (malloc'ed; the test fails unless 201). Its retrieval is queued, not
 * awaited. */
char	*devacct_sandbox_link(const char *key, const char *user, const char *username);
int	 devacct_bool(const struct harness_resp *, const char *path);

/* iam envelope with error_code == code; NULL when right, else why. */
const char *devacct_check_iam(const struct harness_resp *, long status, const char *code);
/* errors[] holds {field, code}; NULL when so. */
const char *devacct_check_error(const struct harness_resp *, const char *field,
	    const char *code);
#define devacct_assert_iam(r, s, c)	HARNESS_ASSERT_(devacct_check_iam((r), (s), (c)))
#define devacct_assert_error(r, f, c)	HARNESS_ASSERT_(devacct_check_error((r), (f), (c)))

/* The test's own database connection (opened on first use, per process). */
PGconn	*devacct_pg(void);
/* First value of the first row of q ($1, $2 text params or NULL),
 * malloc'ed; NULL when no row or SQL NULL. The test fails on an error. */
char	*devacct_sql_value(const char *q, const char *p1, const char *p2);
long long devacct_sql_int(const char *q, const char *p1, const char *p2);
void	 devacct_sql_exec(const char *q, const char *p1, const char *p2);

/* ---- webhooks at a receiver (receiver.h) ---- */
struct receiver;
/* A webhook endpoint of the sandbox key's client (POST
 * /v1/webhook-endpoints: http allowed) for every event at rc's /hook. */
void	 devacct_subscribe(const char *sandbox_key, struct receiver *rc);
/* bds-deliver what is due, then the body of a request rc holds (waiting up
 * to 2 s for each) of event type whose body holds needle; NULL when none. */
const char *devacct_received(struct receiver *rc, const char *type, const char *needle);

/* ---- a bill's money (docs/DECISIONS.md "A bill's money") ---- */
/*
 * The bills of link_id (not deleted) whose entity, as the API answers it,
 * breaks the money rules: previous_balance - payments_received +
 * current_charges = amount_due = total_amount (all given), balance_remaining
 * 0 when PAID, above 0 and at most amount_due when PENDING, below
 * amount_due when PARTIALLY_PAID;
 * bill_id = id; statement_url the bill's statement route exactly when
 * has_statement. 0 when every bill keeps them.
 */
long long devacct_bills_unreconciled(const char *link_id);

/* ---- signed URLs (core/urlsign.h) ---- */
/* The signature the app makes for a URL of purpose ("bds statement url
 * v1"...) of id, client, host ("live" or "sandbox") and expiry, with the
 * harness's secret_key: a URL of the test's own (malloc'ed). */
char	*devacct_url_sig(const char *purpose, const char *id, const char *client,
	    const char *host, long long expires);

#endif
