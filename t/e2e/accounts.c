/* Helpers of the developer-account suites; see accounts.h. */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>

#include <check.h>
#include <json-c/json.h>
#include <libpq-fe.h>

#include "accounts.h"
#include "harness.h"
#include "smtp_sink.h"

#define MAIL_WAIT_MS	5000

static PGconn *pg;

/* ------------------------------------------------------------------ */
/* Stack and fixture                                                   */

static void
stack(const char *extra)
{
	struct harness_opts o;

	harness_opts_defaults(&o);
	o.mail = "smtp";
	o.extra_config = extra;
	harness_fixture_start(&o);
}

void
acct_stack_development(void)
{
	stack(NULL);
}

void
acct_stack_production(void)
{
	stack("deployment = production");
}

void
acct_setup(void)
{
	char *cur;

	harness_fixture_recover();
	harness_deliver_stop();
	pg = PQconnectdb(harness_database_url());
	ck_assert_msg(PQstatus(pg) == CONNECTION_OK, "connect: %s", PQerrorMessage(pg));
	acct_sql_exec("SET client_min_messages = warning", NULL, NULL, NULL);
	acct_sql_exec("DELETE FROM auth_throttle", NULL, NULL, NULL);
	acct_sql_exec("DELETE FROM outbox_email", NULL, NULL, NULL);
	cur = acct_sql_value("SELECT coalesce(string_agg(kind || ' ' || version || ' ' ||"
	    " effective_date, ',' ORDER BY kind), '') FROM legal_documents", NULL, NULL, NULL);
	if (strcmp(cur, "dpa " ACCT_DPA_VERSION " " ACCT_DPA_DATE
	    ",privacy " ACCT_PRIVACY_VERSION " " ACCT_PRIVACY_DATE
	    ",terms " ACCT_TERMS_VERSION " " ACCT_TERMS_DATE) != 0)
		acct_legal_standard();
	free(cur);
}

void
acct_teardown(void)
{
	harness_deliver_stop();
	if (pg != NULL)
		PQfinish(pg);
	pg = NULL;
}

/* ------------------------------------------------------------------ */
/* Database                                                            */

PGconn *
acct_pg(void)
{
	return pg;
}

PGresult *
acct_sql(const char *q, const char *p1, const char *p2, const char *p3)
{
	const char *p[3] = { p1, p2, p3 };
	int n = p3 != NULL ? 3 : p2 != NULL ? 2 : p1 != NULL ? 1 : 0;
	PGresult *res;

	ck_assert_msg(pg != NULL, "no database connection (acct_setup?)");
	res = PQexecParams(pg, q, n, NULL, p, NULL, NULL, 0);
	ck_assert_msg(PQresultStatus(res) == PGRES_TUPLES_OK ||
	    PQresultStatus(res) == PGRES_COMMAND_OK, "%s: %s", q, PQerrorMessage(pg));
	return res;
}

char *
acct_sql_value(const char *q, const char *p1, const char *p2, const char *p3)
{
	PGresult *res = acct_sql(q, p1, p2, p3);
	char *v;

	ck_assert_msg(PQntuples(res) >= 1, "%s: no row", q);
	v = PQgetisnull(res, 0, 0) ? NULL : strdup(PQgetvalue(res, 0, 0));
	PQclear(res);
	return v;
}

long long
acct_sql_int(const char *q, const char *p1, const char *p2, const char *p3)
{
	char *v = acct_sql_value(q, p1, p2, p3);
	long long n;

	ck_assert_msg(v != NULL, "%s: NULL", q);
	n = atoll(v);
	free(v);
	return n;
}

void
acct_sql_exec(const char *q, const char *p1, const char *p2, const char *p3)
{
	PQclear(acct_sql(q, p1, p2, p3));
}

/* ------------------------------------------------------------------ */
/* Legal registry                                                      */

const char acct_acceptances_json[] =
    "[{\"document_kind\":\"terms\",\"document_version\":\"" ACCT_TERMS_VERSION "\","
    "\"document_effective_date\":\"" ACCT_TERMS_DATE "\",\"accepted\":true},"
    "{\"document_kind\":\"privacy\",\"document_version\":\"" ACCT_PRIVACY_VERSION "\","
    "\"document_effective_date\":\"" ACCT_PRIVACY_DATE "\",\"accepted\":true},"
    "{\"document_kind\":\"dpa\",\"document_version\":\"" ACCT_DPA_VERSION "\","
    "\"document_effective_date\":\"" ACCT_DPA_DATE "\",\"accepted\":true}]";

void
acct_legal_clear(void)
{
	acct_sql_exec("DELETE FROM legal_documents", NULL, NULL, NULL);
}

int
acct_legal_add(const char *kind, const char *version, const char *date)
{
	const char *args[] = { "legal", "add", kind, version, date, NULL };

	return harness_bdsctl(args);
}

void
acct_legal_standard(void)
{
	acct_legal_clear();
	ck_assert_int_eq(acct_legal_add("terms", ACCT_TERMS_VERSION, ACCT_TERMS_DATE), 0);
	ck_assert_int_eq(acct_legal_add("privacy", ACCT_PRIVACY_VERSION, ACCT_PRIVACY_DATE), 0);
	ck_assert_int_eq(acct_legal_add("dpa", ACCT_DPA_VERSION, ACCT_DPA_DATE), 0);
}

const char *
acct_date(int days)
{
	static char buf[16];
	time_t t = time(NULL) + (time_t)days * 86400;
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(buf, sizeof(buf), "%Y-%m-%d", &tm);
	return buf;
}

/* ------------------------------------------------------------------ */
/* HTTP                                                                */

struct harness_resp *
acct_call(const char *method, const char *path, const char *token, const char *body,
    const char *const extra[])
{
	const char *hdrs[16];
	char *auth = NULL;
	struct harness_resp *r;
	size_t n = 0;

	if (body != NULL)
		hdrs[n++] = "Content-Type: application/json";
	if (token != NULL) {
		size_t len = strlen(token) + 32;

		ck_assert_ptr_nonnull(auth = malloc(len));
		snprintf(auth, len, "Authorization: Bearer %s", token);
		hdrs[n++] = auth;
	}
	for (size_t i = 0; extra != NULL && extra[i] != NULL && n < 15; i++)
		hdrs[n++] = extra[i];
	hdrs[n] = NULL;
	r = harness_request(method, "api", path, hdrs, body, body ? strlen(body) : 0);
	free(auth);
	ck_assert_msg(r->status != 0, "%s %s: %s", method, path, r->error);
	return r;
}

struct harness_resp *
acct_get(const char *path, const char *token)
{
	return acct_call("GET", path, token, NULL, NULL);
}

struct harness_resp *
acct_post(const char *path, const char *token, const char *body)
{
	return acct_call("POST", path, token, body, NULL);
}

struct harness_resp *
acct_postf(const char *path, const char *token, const char *fmt, ...)
{
	struct harness_resp *r;
	va_list ap;
	char *body;

	va_start(ap, fmt);
	ck_assert_int_ge(vasprintf(&body, fmt, ap), 0);
	va_end(ap);
	r = acct_post(path, token, body);
	free(body);
	return r;
}

struct json_object *
acct_json(const struct harness_resp *r, const char *path)
{
	struct json_object *o = r->json, *next;
	char key[128];
	const char *p = path;

	while (o != NULL && *p != '\0') {
		size_t n = strcspn(p, ".");

		if (n >= sizeof(key))
			return NULL;
		memcpy(key, p, n);
		key[n] = '\0';
		p += n;
		if (*p == '.')
			p++;
		if (json_object_is_type(o, json_type_array)) {
			char *end;
			long i = strtol(key, &end, 10);

			if (*end != '\0' || i < 0 || (size_t)i >= json_object_array_length(o))
				return NULL;
			o = json_object_array_get_idx(o, (size_t)i);
		} else if (json_object_is_type(o, json_type_object)) {
			if (!json_object_object_get_ex(o, key, &next))
				return NULL;
			o = next;
		} else {
			return NULL;
		}
	}
	return o;
}

const char *
acct_str(const struct harness_resp *r, const char *path)
{
	struct json_object *o = acct_json(r, path);

	return o != NULL && json_object_is_type(o, json_type_string) ?
	    json_object_get_string(o) : NULL;
}

static char check_msg[8192];

__attribute__((format(printf, 2, 3)))
static const char *
fail_msg(const struct harness_resp *r, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(check_msg, sizeof(check_msg), fmt, ap);
	va_end(ap);
	if (n >= 0 && (size_t)n < sizeof(check_msg))
		snprintf(check_msg + n, sizeof(check_msg) - (size_t)n, " (status %ld): %.4000s",
		    r->status, r->body);
	return check_msg;
}

const char *
acct_check_iam(const struct harness_resp *r, long status, const char *code)
{
	const char *m = harness_check_iam(r, status), *ec;

	if (m != NULL)
		return m;
	ec = acct_str(r, "error_code");
	if (ec == NULL || strcmp(ec, code) != 0)
		return fail_msg(r, "error_code is %s, want %s", ec ? ec : "(none)", code);
	return NULL;
}

const char *
acct_check_error(const struct harness_resp *r, const char *field, const char *code)
{
	struct json_object *errs = acct_json(r, "errors");

	if (errs == NULL || !json_object_is_type(errs, json_type_array))
		return fail_msg(r, "no errors array");
	for (size_t i = 0; i < json_object_array_length(errs); i++) {
		struct json_object *it = json_object_array_get_idx(errs, i), *f, *c;

		if (json_object_object_get_ex(it, "field", &f) &&
		    json_object_object_get_ex(it, "code", &c) &&
		    json_object_is_type(f, json_type_string) &&
		    json_object_is_type(c, json_type_string) &&
		    strcmp(json_object_get_string(f), field) == 0 &&
		    strcmp(json_object_get_string(c), code) == 0)
			return NULL;
	}
	return fail_msg(r, "no errors[] item {field \"%s\", code \"%s\"}", field, code);
}

const char *
acct_check_outcome(const struct harness_resp *r, int want, const char *code)
{
	struct json_object *s;
	const char *m, *ec;

	if ((m = harness_check_status(r, 200)) != NULL || (m = harness_check_common(r)) != NULL)
		return m;
	s = acct_json(r, "success");
	if (s == NULL || !json_object_is_type(s, json_type_boolean) ||
	    json_object_get_boolean(s) != (want != 0))
		return fail_msg(r, "success is not %s", want ? "true" : "false");
	if (acct_str(r, "message") == NULL)
		return fail_msg(r, "no message string");
	if (code != NULL && ((ec = acct_str(r, "error_code")) == NULL || strcmp(ec, code) != 0))
		return fail_msg(r, "error_code is not %s", code);
	return NULL;
}

const char *
acct_check_success(const struct harness_resp *r)
{
	struct json_object *s;
	const char *m;

	if ((m = harness_check_status(r, 200)) != NULL || (m = harness_check_common(r)) != NULL)
		return m;
	s = acct_json(r, "success");
	if (s == NULL || !json_object_is_type(s, json_type_boolean) || !json_object_get_boolean(s))
		return fail_msg(r, "success is not true");
	return NULL;
}

/* ------------------------------------------------------------------ */
/* Mail                                                                */

void
acct_mail_start(struct acct_mail *mb)
{
	struct smtp_sink_opts so = { 0 };

	so.port = harness_smtp_port();
	ck_assert_msg(so.port > 0, "the stack has no smtp port");
	mb->sink = smtp_sink_start(&so);
	ck_assert_msg(mb->sink != NULL, "smtp sink: %s", smtp_sink_error());
}

void
acct_mail_stop(struct acct_mail *mb)
{
	smtp_sink_stop(mb->sink);
	mb->sink = NULL;
}

static void
deliver_once(void)
{
	int rc = harness_deliver_once();

	if (rc != 0)
		harness_dump_logs();
	ck_assert_msg(rc == 0, "bds-deliver --once: %d %s", rc, rc < 0 ? harness_error() : "");
}

const struct smtp_msg *
acct_mail_code(struct acct_mail *mb, const char *to, char code[7])
{
	const struct smtp_msg *m;

	deliver_once();
	/* bds-deliver has exited: whatever it sent has been accepted; the
	 * wait only covers a slow sink thread. */
	if ((m = smtp_sink_take(mb->sink, to, MAIL_WAIT_MS)) == NULL) {
		harness_dump_logs();
		ck_abort_msg("no e-mail to %s arrived at the SMTP sink", to);
	}
	ck_assert_msg(smtp_msg_code(m, code) == 0,
	    "no 6-digit code in the message to %s:\n%s", to, m->data);
	return m;
}

size_t
acct_mail_count(struct acct_mail *mb, const char *to)
{
	size_t n = 0;

	deliver_once();
	harness_sleep_ms(100);
	while (smtp_sink_take(mb->sink, to, 0) != NULL)
		n++;
	return n;
}

/* ------------------------------------------------------------------ */
/* Accounts                                                            */

void
acct_user_init(struct acct_user *u, const char *tag)
{
	static unsigned n;
	unsigned char rnd[6];
	FILE *f;

	memset(u, 0, sizeof(*u));
	n++;
	snprintf(u->email, sizeof(u->email), "%s-%ld-%u@example.test", tag, (long)getpid(), n);
	memset(rnd, 0, sizeof(rnd));
	if ((f = fopen("/dev/urandom", "rb")) != NULL) {
		if (fread(rnd, 1, sizeof(rnd), f) != sizeof(rnd))
			memset(rnd, 0x5a, sizeof(rnd));
		fclose(f);
	}
	/* upper, lower, digit, special; unique, so a leak is recognisable */
	snprintf(u->password, sizeof(u->password), "Pw#%02x%02x%02x%02x%02x%02x-%ld-%u!zQ",
	    rnd[0], rnd[1], rnd[2], rnd[3], rnd[4], rnd[5], (long)getpid(), n);
}

char *
acct_signup_body(const struct acct_user *u)
{
	char *body;

	ck_assert_int_ge(asprintf(&body, "{\"email\":\"%s\",\"password\":\"%s\","
	    "\"given_name\":\"Ada\",\"family_name\":\"Lovelace\",\"client_name\":\"Engine\","
	    "\"legal_acceptances\":%s}", u->email, u->password, acct_acceptances_json), 0);
	return body;
}

static void
copy(char *dst, size_t size, const char *src, const char *what)
{
	ck_assert_msg(src != NULL, "no %s", what);
	ck_assert_msg(strlen(src) < size, "%s too long", what);
	memcpy(dst, src, strlen(src) + 1);
}

void
acct_signup(struct acct_user *u, struct acct_mail *mb)
{
	char *body = acct_signup_body(u);
	struct harness_resp *r = acct_post("/v1/iam/auth/signup", NULL, body);

	free(body);
	harness_assert_status(r, 201);
	copy(u->user_id, sizeof(u->user_id), acct_str(r, "user_id"), "user_id");
	copy(u->client_id, sizeof(u->client_id), acct_str(r, "client_id"), "client_id");
	harness_resp_free(r);
	acct_mail_code(mb, u->email, u->code);
}

void
acct_confirm(struct acct_user *u)
{
	struct harness_resp *r = acct_postf("/v1/iam/auth/confirm-signup", NULL,
	    "{\"email\":\"%s\",\"code\":\"%s\"}", u->email, u->code);

	acct_assert_outcome(r, 1, NULL);
	harness_resp_free(r);
}

void
acct_signin(struct acct_user *u)
{
	struct harness_resp *r = acct_postf("/v1/iam/auth/signin", NULL,
	    "{\"email\":\"%s\",\"password\":\"%s\"}", u->email, u->password);

	acct_assert_outcome(r, 1, NULL);
	copy(u->access, sizeof(u->access), acct_str(r, "tokens.accessToken"), "accessToken");
	copy(u->refresh, sizeof(u->refresh), acct_str(r, "tokens.refreshToken"), "refreshToken");
	copy(u->id_token, sizeof(u->id_token), acct_str(r, "tokens.idToken"), "idToken");
	harness_resp_free(r);
}

void
acct_new_user(struct acct_user *u, const char *tag, struct acct_mail *mb)
{
	acct_user_init(u, tag);
	acct_signup(u, mb);
	acct_confirm(u);
	acct_signin(u);
}

void
acct_verify_email(struct acct_user *u, struct acct_mail *mb)
{
	struct harness_resp *r = acct_post("/v1/iam/auth/email/request-verification",
	    u->access, NULL);

	acct_assert_outcome(r, 1, NULL);
	harness_resp_free(r);
	acct_mail_code(mb, u->email, u->code);
	r = acct_postf("/v1/iam/auth/email/verify", u->access, "{\"code\":\"%s\"}", u->code);
	acct_assert_outcome(r, 1, NULL);
	harness_resp_free(r);
}

/* ------------------------------------------------------------------ */
/* Odds and ends                                                       */

char *
acct_slurp(const char *path, size_t *lenp)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t len = 0, cap = 0, n;

	if (f == NULL)
		return NULL;
	do {
		if (cap - len < 4096)
			ck_assert_ptr_nonnull(buf = realloc(buf, cap = cap * 2 + 8192));
		n = fread(buf + len, 1, cap - len - 1, f);
		len += n;
	} while (n > 0);
	fclose(f);
	buf[len] = '\0';
	if (lenp != NULL)
		*lenp = len;
	return buf;
}

static char *
b64_any(const void *data, size_t len, const char *alphabet, int pad)
{
	const unsigned char *p = data;
	char *out = malloc(len / 3 * 4 + 5), *o = out;
	size_t i;

	ck_assert_ptr_nonnull(out);
	for (i = 0; i + 2 < len; i += 3) {
		uint32_t v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8 | p[i + 2];

		*o++ = alphabet[v >> 18 & 63];
		*o++ = alphabet[v >> 12 & 63];
		*o++ = alphabet[v >> 6 & 63];
		*o++ = alphabet[v & 63];
	}
	if (len - i == 1) {
		uint32_t v = (uint32_t)p[i] << 16;

		*o++ = alphabet[v >> 18 & 63];
		*o++ = alphabet[v >> 12 & 63];
		if (pad) {
			*o++ = '=';
			*o++ = '=';
		}
	} else if (len - i == 2) {
		uint32_t v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8;

		*o++ = alphabet[v >> 18 & 63];
		*o++ = alphabet[v >> 12 & 63];
		*o++ = alphabet[v >> 6 & 63];
		if (pad)
			*o++ = '=';
	}
	*o = '\0';
	return out;
}

char *
acct_b64url(const void *data, size_t len)
{
	return b64_any(data, len,
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_", 0);
}

char *
acct_b64(const void *data, size_t len)
{
	return b64_any(data, len,
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/", 1);
}

static int
b64url_val(int c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '-')
		return 62;
	if (c == '_')
		return 63;
	return -1;
}

unsigned char *
acct_b64url_decode(const char *s, size_t len, size_t *outlen)
{
	unsigned char *out;
	uint32_t acc = 0;
	size_t n = 0;
	int bits = 0;

	while (len > 0 && s[len - 1] == '=')
		len--;
	if (len % 4 == 1 || (out = malloc(len * 3 / 4 + 2)) == NULL)
		return NULL;
	for (size_t i = 0; i < len; i++) {
		int v = b64url_val((unsigned char)s[i]);

		if (v < 0) {
			free(out);
			return NULL;
		}
		acc = acc << 6 | (uint32_t)v;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			out[n++] = (unsigned char)(acc >> bits & 0xff);
		}
	}
	out[n] = '\0';
	*outlen = n;
	return out;
}

char *
acct_run(const char *cmd, int *status)
{
	char *full, *out = NULL;
	size_t len = 0, cap = 0, n;
	FILE *p;
	int st;

	ck_assert_int_ge(asprintf(&full, "%s 2>&1", cmd), 0);
	fflush(NULL);
	p = popen(full, "r");
	free(full);
	ck_assert_msg(p != NULL, "popen %s", cmd);
	do {
		if (cap - len < 1024)
			ck_assert_ptr_nonnull(out = realloc(out, cap = cap * 2 + 4096));
		n = fread(out + len, 1, cap - len - 1, p);
		len += n;
	} while (n > 0);
	out[len] = '\0';
	st = pclose(p);
	*status = st != -1 && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
	return out;
}
