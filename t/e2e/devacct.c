/* Developers for the client suites: see devacct.h. */
#include <dirent.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>
#include <json-c/json.h>
#include <libpq-fe.h>

#include "core/arena.h"
#include "core/crypto.h"
#include "devacct.h"
#include "receiver.h"
#include "harness.h"

#define LEGAL_VERSION	"v1"
#define LEGAL_DATE	"2026-01-01"
#define CONFIRM_SUBJECT	"Confirm your Bill Data Service account"
#define VERIFY_SUBJECT	"Verify your e-mail address"

const char devacct_acceptances[] =
    "[{\"document_kind\":\"terms\",\"document_version\":\"" LEGAL_VERSION "\","
    "\"document_effective_date\":\"" LEGAL_DATE "\",\"accepted\":true},"
    "{\"document_kind\":\"privacy\",\"document_version\":\"" LEGAL_VERSION "\","
    "\"document_effective_date\":\"" LEGAL_DATE "\",\"accepted\":true}]";

static char msgbuf[4096];

static const char *
why(const struct harness_resp *r, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(msgbuf, sizeof(msgbuf), fmt, ap);
	va_end(ap);
	if (n >= 0 && (size_t)n < sizeof(msgbuf) && r != NULL)
		snprintf(msgbuf + n, sizeof(msgbuf) - (size_t)n, " (status %ld, body %.1500s)",
		    r->status, r->body ? r->body : "");
	return msgbuf;
}

/* ------------------------------------------------------------------ */
/* HTTP                                                                */

struct harness_resp *
devacct_call(const char *method, const char *host, const char *path, const char *auth,
    const char *body, const char *const extra[])
{
	const char *h[16];
	char *ah = NULL;
	size_t n = 0;
	struct harness_resp *r;

	if (auth != NULL) {
		ah = malloc(strlen(auth) + 16);
		ck_assert_ptr_nonnull(ah);
		sprintf(ah, "Authorization: %s", auth);
		h[n++] = ah;
	}
	if (body != NULL)
		h[n++] = "Content-Type: application/json";
	for (size_t i = 0; extra != NULL && extra[i] != NULL && n < 15; i++)
		h[n++] = extra[i];
	h[n] = NULL;
	r = harness_request(method, host, path, h, body, body ? strlen(body) : 0);
	free(ah);
	return r;
}

const char *
devacct_bearer(const char *token)
{
	static _Thread_local char buf[4096];

	snprintf(buf, sizeof(buf), "Bearer %s", token);
	return buf;
}

struct harness_resp *
devacct_jwt(const struct devacct *d, const char *method, const char *path,
    const char *body, const char *const extra[])
{
	return devacct_call(method, "api", path, devacct_bearer(d->access), body, extra);
}

char *
devacct_basic(const char *user, const char *pass)
{
	static const char tbl[] =
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	size_t ul = strlen(user), pl = strlen(pass), n = ul + 1 + pl, o = 6;
	unsigned char *in = malloc(n);
	char *out = malloc(6 + (n + 2) / 3 * 4 + 1);

	ck_assert_ptr_nonnull(in);
	ck_assert_ptr_nonnull(out);
	memcpy(in, user, ul);
	in[ul] = ':';
	memcpy(in + ul + 1, pass, pl);
	memcpy(out, "Basic ", 6);
	for (size_t i = 0; i < n; i += 3) {
		unsigned v = (unsigned)in[i] << 16 | (i + 1 < n ? (unsigned)in[i + 1] << 8 : 0) |
		    (i + 2 < n ? in[i + 2] : 0);

		out[o++] = tbl[v >> 18 & 63];
		out[o++] = tbl[v >> 12 & 63];
		out[o++] = i + 1 < n ? tbl[v >> 6 & 63] : '=';
		out[o++] = i + 2 < n ? tbl[v & 63] : '=';
	}
	out[o] = '\0';
	free(in);
	return out;
}

struct json_object *
devacct_json(const struct harness_resp *r, const char *path)
{
	struct json_object *cur = r != NULL ? r->json : NULL;
	char *copy = strdup(path), *save = NULL;

	ck_assert_ptr_nonnull(copy);
	for (char *seg = strtok_r(copy, ".", &save); seg != NULL && cur != NULL;
	    seg = strtok_r(NULL, ".", &save)) {
		if (json_object_is_type(cur, json_type_array)) {
			char *end;
			long i = strtol(seg, &end, 10);

			cur = *end == '\0' && i >= 0 &&
			    (size_t)i < json_object_array_length(cur) ?
			    json_object_array_get_idx(cur, (size_t)i) : NULL;
		} else if (json_object_is_type(cur, json_type_object)) {
			if (!json_object_object_get_ex(cur, seg, &cur))
				cur = NULL;
		} else {
			cur = NULL;
		}
	}
	free(copy);
	return cur;
}

const char *
devacct_str(const struct harness_resp *r, const char *path)
{
	struct json_object *v = devacct_json(r, path);

	return v != NULL && json_object_is_type(v, json_type_string) ?
	    json_object_get_string(v) : NULL;
}

const char *
devacct_check_iam(const struct harness_resp *r, long status, const char *code)
{
	const char *m = harness_check_iam(r, status), *got;

	if (m != NULL)
		return m;
	got = harness_json_string(r, "error_code");
	if (code != NULL && (got == NULL || strcmp(got, code) != 0))
		return why(r, "error_code is \"%s\", want \"%s\"", got ? got : "(none)", code);
	return NULL;
}

const char *
devacct_check_error(const struct harness_resp *r, const char *field, const char *code)
{
	struct json_object *errs = harness_json_get(r, "errors");

	for (size_t i = 0; errs != NULL && json_object_is_type(errs, json_type_array) &&
	    i < json_object_array_length(errs); i++) {
		struct json_object *it = json_object_array_get_idx(errs, i), *f, *c;

		if (json_object_object_get_ex(it, "field", &f) &&
		    json_object_object_get_ex(it, "code", &c) && f != NULL && c != NULL &&
		    strcmp(json_object_get_string(f), field) == 0 &&
		    (code == NULL || strcmp(json_object_get_string(c), code) == 0))
			return NULL;
	}
	return why(r, "errors[] has no {field: %s, code: %s}", field, code ? code : "*");
}

/* ------------------------------------------------------------------ */
/* Database                                                            */

static PGconn *pg;
static pid_t pg_pid;
/* The parent's connection as a forked test inherits it: kept reachable,
 * never used or closed here (closing would end the parent's session). */
static PGconn *volatile pg_inherited;	/* volatile: never read, still kept */

PGconn *
devacct_pg(void)
{
	if (pg == NULL || pg_pid != getpid()) {
		/* A connection inherited from the parent is the parent's. */
		if (pg != NULL)
			pg_inherited = pg;
		pg = PQconnectdb(harness_database_url());
		pg_pid = getpid();
		ck_assert_msg(PQstatus(pg) == CONNECTION_OK, "connect: %s", PQerrorMessage(pg));
	}
	return pg;
}

static PGresult *
sql(const char *q, const char *p1, const char *p2)
{
	const char *p[2] = { p1, p2 };
	int n = p2 != NULL ? 2 : p1 != NULL ? 1 : 0;
	PGresult *res = PQexecParams(devacct_pg(), q, n, NULL, p, NULL, NULL, 0);

	ck_assert_msg(PQresultStatus(res) == PGRES_TUPLES_OK ||
	    PQresultStatus(res) == PGRES_COMMAND_OK, "%s: %s", q, PQerrorMessage(pg));
	return res;
}

char *
devacct_sql_value(const char *q, const char *p1, const char *p2)
{
	PGresult *res = sql(q, p1, p2);
	char *v = NULL;

	if (PQntuples(res) >= 1 && !PQgetisnull(res, 0, 0))
		v = strdup(PQgetvalue(res, 0, 0));
	PQclear(res);
	return v;
}

long long
devacct_sql_int(const char *q, const char *p1, const char *p2)
{
	char *v = devacct_sql_value(q, p1, p2);
	long long n;

	ck_assert_msg(v != NULL, "%s: no value", q);
	n = atoll(v);
	free(v);
	return n;
}

void
devacct_sql_exec(const char *q, const char *p1, const char *p2)
{
	PQclear(sql(q, p1, p2));
}

/* ------------------------------------------------------------------ */
/* Mail: the spool                                                     */

/* Deliver the outbox and read the 6-digit code of the message to `to`
 * with that subject. */
static void
mail_code(const char *to, const char *subject, char code[7])
{
	char want_to[192], want_subject[128];
	struct dirent *e;
	DIR *d;
	int found = 0;

	ck_assert_msg(harness_deliver_once() == 0, "bds-deliver --once failed");
	snprintf(want_to, sizeof(want_to), "%s", to);
	snprintf(want_subject, sizeof(want_subject), "Subject: %s", subject);
	ck_assert_msg((d = opendir(harness_mail_dir())) != NULL, "no mail spool %s",
	    harness_mail_dir());
	while (!found && (e = readdir(d)) != NULL) {
		char path[1024], *text, *p;
		size_t n = strlen(e->d_name);

		if (n < 5 || strcmp(e->d_name + n - 4, ".eml") != 0 || e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", harness_mail_dir(), e->d_name);
		if ((text = harness_slurp(path)) == NULL)
			continue;
		if (strstr(text, want_to) != NULL && strstr(text, want_subject) != NULL &&
		    (p = strstr(text, "code is ")) != NULL && strspn(p + 8, "0123456789") >= 6) {
			memcpy(code, p + 8, 6);
			code[6] = '\0';
			found = 1;
		}
		free(text);
	}
	closedir(d);
	ck_assert_msg(found, "no \"%s\" e-mail to %s in the spool", subject, to);
}

/* ------------------------------------------------------------------ */
/* Developers                                                          */

void
devacct_legal(void)
{
	static const char *const terms[] = { "legal", "add", "terms", LEGAL_VERSION,
	    LEGAL_DATE, NULL };
	static const char *const privacy[] = { "legal", "add", "privacy", LEGAL_VERSION,
	    LEGAL_DATE, NULL };

	ck_assert_int_eq(harness_bdsctl(terms), 0);
	ck_assert_int_eq(harness_bdsctl(privacy), 0);
}

static void
expect(struct harness_resp *r, long status, const char *what)
{
	ck_assert_msg(r->status == status, "%s: status %ld, want %ld: %s", what, r->status,
	    status, r->body);
}

void
devacct_new(struct devacct *d, const char *tag)
{
	static int seq;
	char body[2048], code[7];
	struct harness_resp *r;

	memset(d, 0, sizeof(*d));
	snprintf(d->email, sizeof(d->email), "%s-%ld-%d@example.test", tag, (long)getpid(),
	    ++seq);
	snprintf(d->password, sizeof(d->password), "Pw-%ld-%d-Secret!", (long)getpid(), seq);
	snprintf(body, sizeof(body), "{\"email\":\"%s\",\"password\":\"%s\","
	    "\"given_name\":\"Dev\",\"family_name\":\"%s\",\"legal_acceptances\":%s}",
	    d->email, d->password, tag, devacct_acceptances);
	r = devacct_call("POST", "api", "/v1/iam/auth/signup", NULL, body, NULL);
	expect(r, 201, "sign-up");
	snprintf(d->user_id, sizeof(d->user_id), "%s", harness_json_string(r, "user_id"));
	snprintf(d->client_id, sizeof(d->client_id), "%s", harness_json_string(r, "client_id"));
	harness_resp_free(r);

	mail_code(d->email, CONFIRM_SUBJECT, code);
	snprintf(body, sizeof(body), "{\"email\":\"%s\",\"code\":\"%s\",\"password\":\"%s\"}",
	    d->email, code, d->password);
	r = devacct_call("POST", "api", "/v1/iam/auth/confirm-and-signin", NULL, body, NULL);
	expect(r, 200, "confirm-and-signin");
	ck_assert_ptr_nonnull(devacct_str(r, "tokens.accessToken"));
	snprintf(d->access, sizeof(d->access), "%s", devacct_str(r, "tokens.accessToken"));
	harness_resp_free(r);
}

void
devacct_verify_email(struct devacct *d)
{
	char body[64], code[7];
	struct harness_resp *r;

	r = devacct_jwt(d, "POST", "/v1/iam/auth/email/request-verification", NULL, NULL);
	expect(r, 200, "request-verification");
	harness_resp_free(r);
	mail_code(d->email, VERIFY_SUBJECT, code);
	snprintf(body, sizeof(body), "{\"code\":\"%s\"}", code);
	r = devacct_jwt(d, "POST", "/v1/iam/auth/email/verify", body, NULL);
	expect(r, 200, "email/verify");
	ck_assert_msg(json_object_get_boolean(harness_json_get(r, "success")),
	    "email/verify: %s", r->body);
	harness_resp_free(r);
}

void
devacct_live_access(struct devacct *d)
{
	struct harness_resp *r;

	r = devacct_jwt(d, "POST", "/v1/iam/verification-request",
	    "{\"companyName\":\"Example Ltd\",\"useCase\":\"bill reminders\","
	    "\"country\":\"US\",\"contactName\":\"Dev\"}", NULL);
	expect(r, 200, "verification-request");
	harness_resp_free(r);
	r = devacct_jwt(d, "POST", "/v1/iam/request-live-access", NULL, NULL);
	expect(r, 200, "request-live-access");
	ck_assert_pstr_eq(harness_json_string(r, "status"), "granted");
	harness_resp_free(r);
}

long long
devacct_int(const struct harness_resp *r, const char *path)
{
	struct json_object *v = devacct_json(r, path);

	ck_assert_msg(v != NULL && json_object_is_type(v, json_type_int),
	    "%s is not an integer: %s", path, r->body);
	return json_object_get_int64(v);
}

int
devacct_bool(const struct harness_resp *r, const char *path)
{
	struct json_object *v = devacct_json(r, path);

	ck_assert_msg(v != NULL && json_object_is_type(v, json_type_boolean),
	    "%s is not a boolean: %s", path, r->body);
	return json_object_get_boolean(v);
}

const char *
devacct_text(const struct harness_resp *r, const char *path)
{
	struct json_object *v = devacct_json(r, path);

	return v != NULL ? json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN |
	    JSON_C_TO_STRING_NOSLASHESCAPE) : "(absent)";
}

char *
devacct_client_new(const struct devacct *d)
{
	struct harness_resp *r = devacct_jwt(d, "POST", "/v1/iam/clients",
	    "{\"name\":\"e2e client\"}", NULL);
	char *id;

	harness_expect(r, 201);
	ck_assert_ptr_nonnull(devacct_str(r, "client.id"));
	id = strdup(devacct_str(r, "client.id"));
	harness_resp_free(r);
	return id;
}

char *
devacct_key_new(const struct devacct *d, const char *client, const char *env)
{
	const char *extra[] = { harness_idem_header(), NULL };
	struct harness_resp *r = devacct_jwt(d, "POST",
	    harness_fmt("/v1/iam/clients/%s/client-secrets", client),
	    harness_fmt("{\"environment\":\"%s\"}", env), extra);
	char *key;

	harness_expect(r, 201);
	ck_assert_ptr_nonnull(devacct_str(r, "secret.secret"));
	key = strdup(devacct_str(r, "secret.secret"));
	harness_resp_free(r);
	return key;
}

char *
devacct_sandbox_link(const char *key, const char *user, const char *username)
{
	const char *extra[] = { harness_idem_header(), NULL };
	struct harness_resp *r = devacct_call("POST", "sandbox", "/v1/sandbox/account-links",
	    devacct_bearer(key), harness_fmt("{\"client_user_id\":\"%s\",\"username\":\"%s\"}",
	    user, username), extra);
	char *id;

	harness_expect(r, 201);
	id = strdup(devacct_str(r, "link_id"));
	harness_resp_free(r);
	return id;
}

/* ------------------------------------------------------------------ */
/* Webhooks at a receiver (receiver.h)                                 */

void
devacct_subscribe(const char *sandbox_key, struct receiver *rc)
{
	const char *extra[] = { harness_idem_header(), NULL };
	char url[256];
	struct harness_resp *r = devacct_call("POST", "sandbox", "/v1/webhook-endpoints",
	    devacct_bearer(sandbox_key), harness_fmt("{\"url\":\"%s\",\"events\":[\"*\"]}",
	    receiver_url(rc, "/hook", url, sizeof(url))), extra);

	harness_expect(r, 201);
	harness_resp_free(r);
}

const char *
devacct_received(struct receiver *rc, const char *type, const char *needle)
{
	ck_assert_int_eq(harness_deliver_once(), 0);
	for (size_t i = 0; receiver_wait(rc, i, 2000) != NULL; i++) {
		const char *b = receiver_wait(rc, i, 0)->body;

		if (strstr(b, harness_fmt("\"type\":\"%s\"", type)) != NULL &&
		    strstr(b, needle) != NULL)
			return b;
	}
	return NULL;
}

long long
devacct_bills_unreconciled(const char *link_id)
{
#define V(m) "(e->'" m "'->>'value')::numeric"
	return devacct_sql_int("SELECT count(*) FROM bills b,"
	    " LATERAL (SELECT b.entity::json AS e) x"
	    " WHERE b.link_id = $1 AND b.deleted_at IS NULL AND NOT coalesce("
	    V("previous_balance") " - " V("payments_received") " + " V("current_charges")
	    "  = " V("amount_due")
	    " AND " V("total_amount") " = " V("amount_due")
	    " AND e->>'bill_id' = e->>'id'"
	    " AND CASE e->>'status' WHEN 'PAID' THEN " V("balance_remaining") " = 0"
	    "  WHEN 'PENDING' THEN " V("balance_remaining") " > 0 AND "
	    V("balance_remaining") " <= " V("amount_due")
	    "  ELSE " V("balance_remaining") " > 0 AND "
	    V("balance_remaining") " < " V("amount_due") " END"
	    " AND (e->>'statement_url') IS NOT DISTINCT FROM CASE WHEN"
	    "  (e->>'has_statement')::boolean THEN '/v1/bills/' || b.id || '/statement' END,"
	    " false)", link_id, NULL);
#undef V
}

/* the harness's config (harness.c write_config) */
#define URL_SECRET_KEY "a0b1c2d3e4f5061728394a5b6c7d8e9fa0b1c2d3e4f5061728394a5b6c7d8e9f"

char *
devacct_url_sig(const char *purpose, const char *id, const char *client, const char *host,
    long long expires)
{
	unsigned char key[32], k[32], mac[32];
	struct arena a;
	char msg[512], *sig;

	arena_init(&a);
	ck_assert_int_eq(crypto_hex_decode(URL_SECRET_KEY, key, 32), 0);
	crypto_hmac_sha256(key, 32, purpose, strlen(purpose), k);
	snprintf(msg, sizeof(msg), "%s\n%s\n%s\n%lld", id, client, host, expires);
	crypto_hmac_sha256(k, 32, msg, strlen(msg), mac);
	sig = strdup(crypto_b64url_encode(&a, mac, 32));
	arena_free(&a);
	return sig;
}

void
devacct_tenants_new(struct devacct *d, const char *tag, struct devacct_tenant *a,
    struct devacct_tenant *b, char **dev_key)
{
	devacct_legal();
	devacct_new(d, tag);
	devacct_verify_email(d);	/* development keys */
	a->client = devacct_client_new(d);
	a->key = devacct_key_new(d, a->client, "sandbox");
	*dev_key = devacct_key_new(d, a->client, "development");
	b->client = devacct_client_new(d);
	b->key = devacct_key_new(d, b->client, "sandbox");
}

void
devacct_tenants_free(struct devacct_tenant *a, struct devacct_tenant *b, char **dev_key)
{
	free(a->client);
	free(a->key);
	free(b->client);
	free(b->key);
	free(*dev_key);
	a->client = a->key = b->client = b->key = *dev_key = NULL;
}
