/*
 * The portal connector: the Biller Portal Protocol of shared PORTAL.md over
 * libcurl, as docs/portal.md writes it down. Answers are validated by
 * portal_parse.c; this file is the transport and the protocol's rules.
 *
 * Transport. The biller's base_url passes the outbound URL safety of
 * core/urlsafe.h once per session (https unless allow_private_targets, every
 * address public unless allow_private_targets, resolved once); every request
 * of the session is pinned to that address, follows no redirect and uses no
 * proxy. One easy handle per session keeps the connection alive between
 * calls. In bds-jobs each request is a transfer on the runner's multi
 * handle (conv_perform): the conversation waits, the runner does not. Each request has portal_connect_timeout_ms to connect and
 * portal_timeout_ms in all, never past the session's deadline; a JSON answer
 * may be PORTAL_JSON_MAX bytes, a document BILLS_DOC_MAX: the transfer stops
 * at the cap.
 *
 * Secrets. The login body (username, password, device token) and the MFA
 * answer are built in a buffer of this file that is wiped after the call;
 * the session token only ever goes into the Authorization header. Nothing of
 * them is logged or put into s->error.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <curl/curl.h>
#include <sodium.h>

#include "core/arena.h"
#include "core/clock.h"
#include "core/config.h"
#include "core/urlsafe.h"
#include "bills/bills_statement.h"
#include "jobs/connectors/connector.h"
#include "jobs/connectors/portal.h"
#include "jobs/jobs.h"
#include "jobs/jobs_conv.h"

#define PORTAL_USER_AGENT	"bds-portal/1"

/* The session's state (s->priv). */
struct portal {
	CURL		*c;
	struct urlsafe_target t;	/* the base URL, checked */
	const char	*session;	/* the bearer; NULL before login */
	/* for a login again after session_expired: the caller's strings, which
	 * it wipes when the session ends */
	const char	*username, *password;
};

/* What one request got. */
struct presp {
	long		 status;	/* 0: no HTTP answer */
	char		*body;		/* NUL-terminated (arena) */
	size_t		 len;
	const char	*ctype;		/* Content-Type, or NULL */
	long		 retry_after;	/* seconds, 0 none */
};

/* A growing answer buffer with a cap. */
struct pbuf {
	char		*p;
	size_t		 len, cap, max;
	int		 over;
};

static size_t
sink(char *d, size_t size, size_t nmemb, void *arg)
{
	struct pbuf *b = arg;
	size_t n = size * nmemb;

	if (b->len + n > b->max) {
		b->over = 1;
		return 0;	/* CURLE_WRITE_ERROR: stop reading */
	}
	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 16384;
		char *p;

		while (cap < b->len + n + 1)
			cap *= 2;
		if ((p = realloc(b->p, cap)) == NULL)
			return 0;
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->len, d, n);
	b->len += n;
	b->p[b->len] = '\0';
	return n;
}

static void
easy_free(void *c)
{
	curl_easy_cleanup(c);
}

static void
slist_free(void *l)
{
	curl_slist_free_all(l);
}

/* s->error = why (a static or arena string, "portal: ..."); returns st. */
static enum connector_status
fail(struct connector_session *s, enum connector_status st, const char *why)
{
	s->error = why;
	return st;
}

/* The session's state, the base URL checked on first use. */
static struct portal *
state(struct arena *a, struct connector_session *s, enum connector_status *st)
{
	const struct connector_target *t = s->target;
	struct portal *p = s->priv;
	unsigned flags = 0;
	const char *why;

	if (p != NULL)
		return p;
	if (t == NULL || t->base_url == NULL || t->cfg == NULL) {
		*st = fail(s, CONN_TRANSIENT, "portal: the biller has no base_url");
		return NULL;
	}
	p = arena_alloc(a, sizeof(*p));
	memset(p, 0, sizeof(*p));
	/* the dev and test allowance: plain http, loopback and private targets */
	if (t->cfg->allow_private_targets)
		flags = URLSAFE_ALLOW_HTTP | URLSAFE_ALLOW_PRIVATE;
	if (urlsafe_check(a, t->base_url, flags, &p->t, &why) != URLSAFE_OK) {
		*st = fail(s, CONN_TRANSIENT, arena_printf(a,
		    "portal: base_url refused: %s", why));
		return NULL;
	}
	if (strchr(p->t.url.target, '?') != NULL) {
		*st = fail(s, CONN_TRANSIENT, "portal: base_url has a query");
		return NULL;
	}
	if ((p->c = curl_easy_init()) == NULL) {
		*st = fail(s, CONN_TRANSIENT, "portal: out of memory");
		return NULL;
	}
	arena_defer(a, easy_free, p->c);
	s->priv = p;
	return p;
}

/* An id as one path segment: every byte but the unreserved ones escaped. */
static const char *
segment(struct arena *a, const char *id)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t n = strlen(id);
	char *out = arena_alloc(a, 3 * n + 1), *o = out;

	for (const unsigned char *u = (const unsigned char *)id; *u != '\0'; u++) {
		if ((*u >= 'a' && *u <= 'z') || (*u >= 'A' && *u <= 'Z') ||
		    (*u >= '0' && *u <= '9') || *u == '-' || *u == '.' || *u == '_' || *u == '~') {
			*o++ = (char)*u;
		} else {
			*o++ = '%';
			*o++ = hex[*u >> 4];
			*o++ = hex[*u & 15];
		}
	}
	*o = '\0';
	return out;
}

/* 1 when ctype is type (any case), parameters allowed. */
static int
ctype_is(const char *ctype, const char *type)
{
	size_t n = strlen(type);

	return ctype != NULL && strncasecmp(ctype, type, n) == 0 &&
	    (ctype[n] == '\0' || ctype[n] == ';' || ctype[n] == ' ');
}

static const char *
transport_error(CURLcode cc)
{
	switch (cc) {
	case CURLE_OPERATION_TIMEDOUT:
		return "timeout";
	case CURLE_COULDNT_CONNECT:
		return "could not connect";
	case CURLE_PEER_FAILED_VERIFICATION:
		return "TLS certificate refused";
	case CURLE_SSL_CONNECT_ERROR:
		return "TLS handshake failed";
	case CURLE_GOT_NOTHING:
		return "connection closed without an answer";
	case CURLE_SEND_ERROR:
	case CURLE_RECV_ERROR:
	case CURLE_PARTIAL_FILE:
		return "connection broken";
	case CURLE_WEIRD_SERVER_REPLY:
		return "not an HTTP answer";
	default:
		return "request failed";
	}
}

/*
 * One request: path under the base URL, a JSON body (POST) or none (GET).
 * CONN_OK with *r filled whatever the status; CONN_TRANSIENT when there is
 * no usable answer (s->error says why).
 */
static enum connector_status
request(struct arena *a, struct connector_session *s, const char *endpoint, const char *path,
    const char *body, size_t blen, size_t max, const char *accept, struct presp *r)
{
	const struct connector_target *t = s->target;
	enum connector_status st = CONN_TRANSIENT;
	struct portal *p = state(a, s, &st);
	struct urlsafe_target call;
	struct curl_slist *h = NULL, *n;
	struct pbuf b = { NULL, 0, 0, max, 0 };
	const char *url, *why, *lines[4];
	long long timeout = jobs_settings(t->cfg)->portal_timeout_ms, t0, left;
	curl_off_t ra = 0;
	char *ct = NULL;
	CURLcode cc;
	size_t nl = 0;

	memset(r, 0, sizeof(*r));
	if (p == NULL)
		return st;
	if (t->deadline_ms > 0) {
		left = t->deadline_ms - mono_ns() / 1000000;
		if (left <= 0)
			return fail(s, CONN_TRANSIENT, arena_printf(a,
			    "portal: out of time before %s", endpoint));
		if (left < timeout)
			timeout = left;
	}
	/* the same scheme, host and port as the checked base, by construction
	 * and checked again */
	url = arena_printf(a, "%s%s", p->t.url.canonical,
	    p->t.url.canonical[strlen(p->t.url.canonical) - 1] == '/' ? path + 1 : path);
	call = p->t;
	if (urlsafe_parse(a, url, &call.url, &why) != URLSAFE_OK ||
	    strcmp(call.url.host, p->t.url.host) != 0 || call.url.port != p->t.url.port ||
	    strcmp(call.url.scheme, p->t.url.scheme) != 0)
		return fail(s, CONN_TRANSIENT, arena_printf(a, "portal: bad URL for %s", endpoint));
	lines[nl++] = accept;
	lines[nl++] = "Expect:";
	if (body != NULL)
		lines[nl++] = "Content-Type: application/json";
	if (p->session != NULL)
		lines[nl++] = arena_printf(a, "Authorization: Bearer %s", p->session);
	for (size_t i = 0; i < nl; i++) {
		if ((n = curl_slist_append(h, lines[i])) == NULL) {
			curl_slist_free_all(h);
			return fail(s, CONN_TRANSIENT, "portal: out of memory");
		}
		h = n;
	}
	arena_defer(a, slist_free, h);
	curl_easy_reset(p->c);
	if (urlsafe_curl_pin(p->c, a, &call) != 0 ||
	    curl_easy_setopt(p->c, CURLOPT_HTTPHEADER, h) != CURLE_OK ||
	    curl_easy_setopt(p->c, CURLOPT_USERAGENT, PORTAL_USER_AGENT) != CURLE_OK ||
	    curl_easy_setopt(p->c, CURLOPT_CONNECTTIMEOUT_MS,
	    (long)jobs_settings(t->cfg)->portal_connect_timeout_ms) != CURLE_OK ||
	    curl_easy_setopt(p->c, CURLOPT_TIMEOUT_MS, (long)timeout) != CURLE_OK ||
	    curl_easy_setopt(p->c, CURLOPT_NOSIGNAL, 1L) != CURLE_OK ||
	    curl_easy_setopt(p->c, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)max) != CURLE_OK ||
	    curl_easy_setopt(p->c, CURLOPT_WRITEFUNCTION, sink) != CURLE_OK ||
	    curl_easy_setopt(p->c, CURLOPT_WRITEDATA, &b) != CURLE_OK ||
	    (body != NULL ?
	    curl_easy_setopt(p->c, CURLOPT_POSTFIELDS, body) != CURLE_OK ||
	    curl_easy_setopt(p->c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)blen) != CURLE_OK :
	    curl_easy_setopt(p->c, CURLOPT_HTTPGET, 1L) != CURLE_OK))
		return fail(s, CONN_TRANSIENT, "portal: libcurl refused an option");
	t0 = mono_ns();
	cc = conv_perform(p->c);	/* yields to the runner's loop meanwhile */
	s->portal_ns += mono_ns() - t0;
	s->calls++;
	if (b.p != NULL)
		arena_defer(a, free, b.p);
	if (b.over || cc == CURLE_FILESIZE_EXCEEDED)
		return fail(s, CONN_TRANSIENT, arena_printf(a,
		    "portal: %s answer over its size cap", endpoint));
	if (cc != CURLE_OK)
		return fail(s, CONN_TRANSIENT, arena_printf(a, "portal: %s on %s",
		    transport_error(cc), endpoint));
	curl_easy_getinfo(p->c, CURLINFO_RESPONSE_CODE, &r->status);
	curl_easy_getinfo(p->c, CURLINFO_CONTENT_TYPE, &ct);
	if (curl_easy_getinfo(p->c, CURLINFO_RETRY_AFTER, &ra) == CURLE_OK && ra > 0)
		r->retry_after = ra > 86400 ? 86400 : (long)ra;
	r->ctype = ct != NULL ? arena_strdup(a, ct) : NULL;
	r->body = b.p != NULL ? b.p : arena_strdup(a, "");
	r->len = b.len;
	return CONN_OK;
}

/* What an answer other than 200 means (PORTAL.md's statuses); *expired set
 * for session_expired. */
static enum connector_status
refused(struct arena *a, struct connector_session *s, const char *endpoint,
    const struct presp *r, int *expired)
{
	const char *code = portal_parse_error(a, r->body, r->len);
	int login = strcmp(endpoint, "session") == 0, mfa = strcmp(endpoint, "mfa") == 0;

	*expired = 0;
	if (code == NULL)
		code = "";
	if (r->status == 401 && login && strcmp(code, "invalid_credentials") == 0)
		return fail(s, CONN_INVALID_CREDENTIALS, "portal: invalid credentials");
	if (r->status == 401 && mfa && strcmp(code, "mfa_failed") == 0)
		return fail(s, CONN_MFA_FAILED, "portal: MFA answer refused");
	if (r->status == 401 && !login && !mfa && strcmp(code, "session_expired") == 0) {
		*expired = 1;
		return fail(s, CONN_TRANSIENT, arena_printf(a,
		    "portal: session expired on %s", endpoint));
	}
	if (r->status == 403 && strcmp(code, "consent_expired") == 0)
		return fail(s, CONN_EXPIRED, "portal: consent expired");
	if (r->status == 423 && strcmp(code, "account_locked") == 0)
		return fail(s, CONN_ACCOUNT_LOCKED, "portal: account locked");
	s->retry_after = (r->status == 429 || r->status == 503) ? (int)r->retry_after : 0;
	s->error = arena_printf(a, "portal: %ld on %s%s", r->status, endpoint,
	    s->retry_after > 0 ? arena_printf(a, " (retry after %d s)", s->retry_after) : "");
	return CONN_TRANSIENT;
}

/* A 200 JSON answer, else what the status means. */
static enum connector_status
json_answer(struct arena *a, struct connector_session *s, const char *endpoint,
    const struct presp *r, int *expired)
{
	*expired = 0;
	if (r->status != 200)
		return refused(a, s, endpoint, r, expired);
	if (!ctype_is(r->ctype, "application/json"))
		return fail(s, CONN_TRANSIENT, arena_printf(a,
		    "portal: malformed %s answer (not JSON)", endpoint));
	return CONN_OK;
}

static enum connector_status
malformed(struct arena *a, struct connector_session *s, const char *endpoint, const char *why)
{
	if (strcmp(why, "body") == 0)
		return fail(s, CONN_TRANSIENT, arena_printf(a,
		    "portal: malformed %s answer", endpoint));
	return fail(s, CONN_TRANSIENT, arena_printf(a, "portal: malformed %s", why));
}

/* ---- secrets in a JSON body ---- */

/* A JSON object of string members (name, value; NULL value: left out)
 * in a malloc'ed buffer the caller wipes (wipe_free). */
struct secret_body {
	char	*p;
	size_t	 len, cap;
};

static int
sb_put(struct secret_body *b, const char *s, size_t n)
{
	if (b->len + n + 1 > b->cap) {
		size_t cap = (b->len + n + 1) * 2;
		char *p = malloc(cap);

		if (p == NULL)
			return -1;
		if (b->p != NULL) {
			memcpy(p, b->p, b->len);
			sodium_memzero(b->p, b->cap);
			free(b->p);
		}
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
	return 0;
}

static int
sb_string(struct secret_body *b, const char *s)
{
	char esc[8];

	if (sb_put(b, "\"", 1) != 0)
		return -1;
	for (const unsigned char *u = (const unsigned char *)s; *u != '\0'; u++) {
		int rc;

		if (*u == '"' || *u == '\\') {
			esc[0] = '\\';
			esc[1] = (char)*u;
			rc = sb_put(b, esc, 2);
		} else if (*u < 0x20 || *u == 0x7f) {
			snprintf(esc, sizeof(esc), "\\u%04x", *u);
			rc = sb_put(b, esc, 6);
		} else {
			rc = sb_put(b, (const char *)u, 1);
		}
		if (rc != 0)
			return -1;
	}
	return sb_put(b, "\"", 1);
}

static void
sb_wipe(struct secret_body *b)
{
	if (b->p != NULL) {
		sodium_memzero(b->p, b->cap);
		free(b->p);
	}
	b->p = NULL;
}

/* {"k0": v0, ...} of n pairs (NULL values left out). 0 ok, -1. */
static int
sb_object(struct secret_body *b, const char *const *kv, size_t n)
{
	int first = 1;

	memset(b, 0, sizeof(*b));
	if (sb_put(b, "{", 1) != 0)
		return -1;
	for (size_t i = 0; i < n; i++) {
		if (kv[2 * i + 1] == NULL)
			continue;
		if ((!first && sb_put(b, ",", 1) != 0) || sb_string(b, kv[2 * i]) != 0 ||
		    sb_put(b, ":", 1) != 0 || sb_string(b, kv[2 * i + 1]) != 0)
			return -1;
		first = 0;
	}
	return sb_put(b, "}", 1);
}

/* POST a secret body to endpoint (session or mfa) and read the login answer. */
static enum connector_status
post_login(struct arena *a, struct connector_session *s, const char *endpoint,
    const char *path, const char *const *kv, size_t nkv, struct portal_login *out)
{
	struct secret_body b;
	struct presp r;
	enum connector_status st;
	const char *why;
	int expired;

	if (sb_object(&b, kv, nkv) != 0) {
		sb_wipe(&b);
		return fail(s, CONN_TRANSIENT, "portal: out of memory");
	}
	st = request(a, s, endpoint, path, b.p, b.len, (size_t)PORTAL_JSON_MAX,
	    "Accept: application/json", &r);
	sb_wipe(&b);
	if (st != CONN_OK || (st = json_answer(a, s, endpoint, &r, &expired)) != CONN_OK)
		return st;
	if (portal_parse_login(a, r.body, r.len, strcmp(endpoint, "mfa") == 0, out, &why) != 0)
		return malformed(a, s, endpoint, why);
	return CONN_OK;
}

/* POST /session with the session's credentials and device token. */
static enum connector_status
session_open(struct arena *a, struct connector_session *s, struct portal *p)
{
	const char *kv[] = { "username", p->username, "password", p->password,
		"device_token", s->device_token };
	struct portal_login l;
	enum connector_status st;

	p->session = NULL;
	if ((st = post_login(a, s, "session", "/session", kv, 3, &l)) != CONN_OK)
		return st;
	if (l.session == NULL) {
		s->mfa_type = l.mfa_type;
		s->mfa_prompt = l.mfa_prompt;
		s->mfa_state = l.challenge_id;
		s->error = "portal: MFA challenge";
		return CONN_MFA_REQUIRED;
	}
	p->session = l.session;
	return CONN_OK;
}

static enum connector_status
portal_login(struct arena *a, struct connector_session *s, const char *username,
    const char *password)
{
	enum connector_status st = CONN_TRANSIENT;
	struct portal *p = state(a, s, &st);

	s->mfa_type = s->mfa_prompt = s->mfa_state = NULL;
	s->device_token_new = 0;
	s->username = username;
	if (p == NULL)
		return st;
	if (username == NULL || password == NULL)
		return fail(s, CONN_INVALID_CREDENTIALS, "portal: no credentials");
	p->username = username;
	p->password = password;
	return session_open(a, s, p);
}

static enum connector_status
portal_mfa(struct arena *a, struct connector_session *s, const char *answer)
{
	const char *kv[] = { "challenge_id", s->mfa_state, "answer", answer };
	enum connector_status st = CONN_TRANSIENT;
	struct portal *p = state(a, s, &st);
	struct portal_login l;

	if (p == NULL)
		return st;
	if (s->mfa_state == NULL || answer == NULL)
		return fail(s, CONN_MFA_FAILED, "portal: no challenge to answer");
	if ((st = post_login(a, s, "mfa", "/session/mfa", kv, 2, &l)) != CONN_OK)
		return st;
	p->session = l.session;
	s->mfa_state = NULL;
	if (l.device_token != NULL) {
		s->device_token = l.device_token;
		s->device_token_new = 1;
	}
	return CONN_OK;
}

/*
 * A call after login: GET path, a 200 answer of content type want (NULL:
 * JSON) at most max bytes. session_expired: log in once more (no user is
 * there: a challenge then is CONN_MFA_REQUIRED) and retry the call once; a
 * second session_expired is transient.
 */
static enum connector_status
call(struct arena *a, struct connector_session *s, const char *endpoint, const char *path,
    size_t max, const char *accept, struct presp *r)
{
	enum connector_status st = CONN_TRANSIENT;
	struct portal *p = state(a, s, &st);
	int expired, again;

	if (p == NULL)
		return st;
	if (p->session == NULL)
		return fail(s, CONN_TRANSIENT, arena_printf(a,
		    "portal: %s before login", endpoint));
	for (again = 0; again < 2; again++) {
		if ((st = request(a, s, endpoint, path, NULL, 0, max, accept, r)) != CONN_OK)
			return st;
		if (r->status == 200)
			return CONN_OK;
		if ((st = refused(a, s, endpoint, r, &expired)) != CONN_TRANSIENT || !expired)
			return st;
		if (again)
			return fail(s, CONN_TRANSIENT, arena_printf(a,
			    "portal: session expired again on %s after a new login", endpoint));
		if ((st = session_open(a, s, p)) != CONN_OK)
			return st;
	}
	return st;
}

/* A JSON call: the answer's body once it is a 200 application/json. */
static enum connector_status
call_json(struct arena *a, struct connector_session *s, const char *endpoint,
    const char *path, struct presp *r)
{
	enum connector_status st;
	int expired;

	if ((st = call(a, s, endpoint, path, (size_t)PORTAL_JSON_MAX,
	    "Accept: application/json", r)) != CONN_OK)
		return st;
	return json_answer(a, s, endpoint, r, &expired);
}

static enum connector_status
portal_accounts(struct arena *a, struct connector_session *s,
    struct connector_account **out, size_t *n)
{
	enum connector_status st;
	struct presp r;
	const char *why;

	if ((st = call_json(a, s, "accounts", "/accounts", &r)) != CONN_OK)
		return st;
	if (portal_parse_accounts(a, r.body, r.len, out, n, &why) != 0)
		return malformed(a, s, "accounts", why);
	return CONN_OK;
}

/* GET /accounts/{id}/<what>[?since=D]: the 200 JSON answer. */
static enum connector_status
account_list(struct arena *a, struct connector_session *s, const char *what,
    const char *account_ref, const struct connector_query *q, struct presp *r)
{
	return call_json(a, s, what, arena_printf(a, "/accounts/%s/%s%s", segment(a, account_ref),
	    what, q != NULL && q->since != NULL ? arena_printf(a, "?since=%s", q->since) : ""), r);
}

static enum connector_status
portal_statements(struct arena *a, struct connector_session *s, const char *account_ref,
    const struct connector_query *q, struct connector_statement **out, size_t *n)
{
	enum connector_status st;
	struct presp r;
	const char *why;

	if ((st = account_list(a, s, "statements", account_ref, q, &r)) != CONN_OK)
		return st;
	return portal_parse_statements(a, r.body, r.len, account_ref, out, n, &why) == 0 ?
	    CONN_OK : malformed(a, s, "statements", why);
}

static enum connector_status
portal_payments(struct arena *a, struct connector_session *s, const char *account_ref,
    const struct connector_query *q, struct bills_payment **out, size_t *n)
{
	enum connector_status st;
	struct presp r;
	const char *why;

	if ((st = account_list(a, s, "payments", account_ref, q, &r)) != CONN_OK)
		return st;
	return portal_parse_payments(a, r.body, r.len, account_ref, out, n, &why) == 0 ?
	    CONN_OK : malformed(a, s, "payments", why);
}

static enum connector_status
portal_document(struct arena *a, struct connector_session *s, const char *statement_ref,
    const unsigned char **bytes, size_t *len)
{
	enum connector_status st;
	struct presp r;

	*bytes = NULL;
	*len = 0;
	if ((st = call(a, s, "document", arena_printf(a, "/statements/%s/document",
	    segment(a, statement_ref)), (size_t)BILLS_DOC_MAX, "Accept: application/pdf",
	    &r)) != CONN_OK)
		return st;
	if (!ctype_is(r.ctype, "application/pdf") || r.len < 5 ||
	    memcmp(r.body, "%PDF-", 5) != 0)
		return fail(s, CONN_TRANSIENT, "portal: malformed document (not a PDF)");
	*bytes = (const unsigned char *)r.body;
	*len = r.len;
	return CONN_OK;
}

const struct connector connector_portal = {
	"portal", portal_login, portal_mfa, portal_accounts, portal_statements,
	portal_payments, portal_document
};
