/* CGI parameters to struct http_req: pure, so tests and the fuzzer drive it. */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/arena.h"
#include "core/crypto.h"
#include "core/http.h"
#include "core/validate.h"

static const char *const method_names[M__MAX] = {
	[M_GET] = "GET",
	[M_POST] = "POST",
	[M_PUT] = "PUT",
	[M_PATCH] = "PATCH",
	[M_DELETE] = "DELETE",
};

const char *
http_method_name(enum http_method m)
{
	return m < M__MAX ? method_names[m] : "OTHER";
}

enum http_method
http_method_parse(const char *s)
{
	for (int m = 0; m < M__MAX; m++)
		if (s != NULL && strcmp(s, method_names[m]) == 0)
			return (enum http_method)m;
	return M__MAX;
}

static int
hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = tolower(c);
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

char *
http_pct_decode(struct arena *a, const char *s, size_t len, int plus_is_space)
{
	char *out = arena_alloc(a, len + 1);
	size_t j = 0;

	for (size_t i = 0; i < len; i++) {
		if (s[i] == '%') {
			int hi, lo;

			if (len - i < 3)
				return NULL;
			hi = hexval((unsigned char)s[i + 1]);
			lo = hexval((unsigned char)s[i + 2]);
			if (hi < 0 || lo < 0)
				return NULL;
			out[j++] = (char)(hi << 4 | lo);
			i += 2;
		} else if (s[i] == '+' && plus_is_space) {
			out[j++] = ' ';
		} else {
			out[j++] = s[i];
		}
	}
	out[j] = '\0';
	if (!validate_utf8(out, j))
		return NULL;
	return out;
}

int
http_query_parse(struct arena *a, const char *qs, struct http_kv **out, size_t *n)
{
	size_t cap = 1, cnt = 0;
	const char *p;
	struct http_kv *kv;

	*out = NULL;
	*n = 0;
	if (qs == NULL || *qs == '\0')
		return 0;
	for (p = qs; *p != '\0'; p++)
		if (*p == '&')
			cap++;
	kv = arena_alloc(a, cap * sizeof(*kv));
	for (p = qs; *p != '\0';) {
		size_t len = strcspn(p, "&");
		const char *eq = memchr(p, '=', len);

		if (len > 0) {
			size_t klen = eq ? (size_t)(eq - p) : len;

			kv[cnt].key = http_pct_decode(a, p, klen, 1);
			kv[cnt].val = eq ? http_pct_decode(a, eq + 1, len - klen - 1, 1) : "";
			/* a cursor is opaque: one that is not text (a byte
			 * flipped) is a cursor that does not open, "%" (no
			 * cursor decodes it: 400 INVALID_CURSOR), not a
			 * malformed request */
			if (kv[cnt].val == NULL && kv[cnt].key != NULL &&
			    strcmp(kv[cnt].key, "cursor") == 0)
				kv[cnt].val = "%";
			if (kv[cnt].key == NULL || kv[cnt].val == NULL || *kv[cnt].key == '\0')
				return -1;
			cnt++;
		}
		p += len;
		if (*p == '&')
			p++;
	}
	*out = kv;
	*n = cnt;
	return 0;
}

const char *
http_query_get(const struct http_req *h, const char *key)
{
	for (size_t i = 0; i < h->nquery; i++)
		if (strcmp(h->query[i].key, key) == 0)
			return h->query[i].val;
	return NULL;
}

/* The CGI parameters the request reads, looked up once each. */
enum http_param {
	P_REQUEST_METHOD,
	P_REQUEST_ID,
	P_BDS_HOST_ENV,
	P_REMOTE_ADDR,
	P_HTTP_AUTHORIZATION,
	P_HTTP_IDEMPOTENCY_KEY,
	P_HTTP_X_CLIENT_USER_ID,
	P_CONTENT_TYPE,
	P_HTTP_COOKIE,
	P_HTTP_ORIGIN,
	P_CONTENT_LENGTH,
	P_REQUEST_URI,
	P_DOCUMENT_URI,
	P_QUERY_STRING,
	P_BDS_UPLOAD_FILE,
	P__MAX
};

#define PNAME(s) { s, sizeof(s) - 1 }
static const struct {
	const char	*name;
	size_t		 len;
} param_names[P__MAX] = {
	[P_REQUEST_METHOD] = PNAME("REQUEST_METHOD"),
	[P_REQUEST_ID] = PNAME("REQUEST_ID"),
	[P_BDS_HOST_ENV] = PNAME("BDS_HOST_ENV"),
	[P_REMOTE_ADDR] = PNAME("REMOTE_ADDR"),
	[P_HTTP_AUTHORIZATION] = PNAME("HTTP_AUTHORIZATION"),
	[P_HTTP_IDEMPOTENCY_KEY] = PNAME("HTTP_IDEMPOTENCY_KEY"),
	[P_HTTP_X_CLIENT_USER_ID] = PNAME("HTTP_X_CLIENT_USER_ID"),
	[P_CONTENT_TYPE] = PNAME("CONTENT_TYPE"),
	[P_HTTP_COOKIE] = PNAME("HTTP_COOKIE"),
	[P_HTTP_ORIGIN] = PNAME("HTTP_ORIGIN"),
	[P_CONTENT_LENGTH] = PNAME("CONTENT_LENGTH"),
	[P_REQUEST_URI] = PNAME("REQUEST_URI"),
	[P_DOCUMENT_URI] = PNAME("DOCUMENT_URI"),
	[P_QUERY_STRING] = PNAME("QUERY_STRING"),
	[P_BDS_UPLOAD_FILE] = PNAME("BDS_UPLOAD_FILE"),
};

static const char *
pdup(struct arena *a, const char *v)
{
	return v != NULL ? arena_strdup(a, v) : NULL;
}

/* 1 when a header value is text (it reaches SQL parameters and logs). */
static int
is_text(const char *s)
{
	return s == NULL || validate_utf8(s, strlen(s));
}

/* Everything after collecting the parameters: v[] indexed by enum http_param. */
static enum http_parse
parse(struct arena *a, struct http_req *h, const char *const v[P__MAX], size_t body_limit)
{
	const char *uri, *q, *cl;
	unsigned char rid[16];

	memset(h, 0, sizeof(*h));
	h->content_length = -1;
	h->method_str = pdup(a, v[P_REQUEST_METHOD]);
	h->method = http_method_parse(h->method_str);
	/* HEAD is GET without the body: same route, status and headers. */
	if (h->method_str != NULL && strcmp(h->method_str, "HEAD") == 0) {
		h->method = M_GET;
		h->head = 1;
	}
	h->request_id = pdup(a, v[P_REQUEST_ID]);
	if (h->request_id == NULL || *h->request_id == '\0' ||
	    strlen(h->request_id) > 64 || !validate_format(VF_PRINTABLE, h->request_id)) {
		crypto_random_bytes(rid, sizeof(rid));
		h->request_id = crypto_hex_encode(a, rid, sizeof(rid));
	}
	h->host_env = pdup(a, v[P_BDS_HOST_ENV]);
	h->remote_addr = pdup(a, v[P_REMOTE_ADDR]);
	h->authorization = pdup(a, v[P_HTTP_AUTHORIZATION]);
	h->idempotency_key = pdup(a, v[P_HTTP_IDEMPOTENCY_KEY]);
	h->client_user_id = pdup(a, v[P_HTTP_X_CLIENT_USER_ID]);
	h->content_type = pdup(a, v[P_CONTENT_TYPE]);
	h->cookie = pdup(a, v[P_HTTP_COOKIE]);
	h->origin = pdup(a, v[P_HTTP_ORIGIN]);
	h->upload_file = v[P_BDS_UPLOAD_FILE] != NULL && *v[P_BDS_UPLOAD_FILE] != '\0' ?
	    arena_strdup(a, v[P_BDS_UPLOAD_FILE]) : NULL;

	if ((cl = v[P_CONTENT_LENGTH]) != NULL && *cl != '\0') {
		char *end;
		long long n;

		errno = 0;
		n = strtoll(cl, &end, 10);
		if (errno != 0 || *end != '\0' || n < 0 || !isdigit((unsigned char)*cl))
			return HTTP_PARSE_BAD;
		h->content_length = n;
		if ((unsigned long long)n > body_limit)
			return HTTP_PARSE_TOO_LARGE;
	}

	if ((uri = v[P_REQUEST_URI]) == NULL || *uri == '\0')
		uri = v[P_DOCUMENT_URI];
	if (uri == NULL || uri[0] != '/')
		return HTTP_PARSE_BAD;
	h->uri = uri;
	q = strchr(uri, '?');
	h->path = http_pct_decode(a, uri, q ? (size_t)(q - uri) : strlen(uri), 0);
	if (h->path == NULL)
		return HTTP_PARSE_BAD;
	h->query_raw = q ? arena_strdup(a, q + 1) : pdup(a, v[P_QUERY_STRING]);
	if (http_query_parse(a, h->query_raw, &h->query, &h->nquery) != 0)
		return HTTP_PARSE_BAD;
	if (!is_text(h->idempotency_key) || !is_text(h->client_user_id) ||
	    !is_text(h->authorization) || !is_text(h->origin))
		return HTTP_PARSE_BAD;
	return HTTP_PARSE_OK;
}

enum http_parse
http_parse_params(struct arena *a, struct http_req *h, http_param_fn get,
    void *ctx, size_t body_limit)
{
	const char *v[P__MAX];

	for (int i = 0; i < P__MAX; i++)
		v[i] = get(ctx, param_names[i].name);
	return parse(a, h, v, body_limit);
}

enum http_parse
http_parse_env(struct arena *a, struct http_req *h, const char *const *envp,
    size_t body_limit)
{
	const char *v[P__MAX] = { NULL };

	for (; envp != NULL && *envp != NULL; envp++) {
		const char *e = *envp, *eq = strchr(e, '=');
		size_t klen;

		if (eq == NULL)
			continue;
		klen = (size_t)(eq - e);
		for (int i = 0; i < P__MAX; i++)
			if (param_names[i].len == klen && v[i] == NULL &&
			    memcmp(param_names[i].name, e, klen) == 0) {
				v[i] = eq + 1;	/* the first one wins, as FCGX_GetParam */
				break;
			}
	}
	return parse(a, h, v, body_limit);
}

char *
http_safe_filename(struct arena *a, const char *name, const char *fallback)
{
	char *s = arena_printf(a, "%.100s", name != NULL && *name != '\0' ? name : fallback);

	for (char *c = s; *c != '\0'; c++)
		if (!((*c >= 'A' && *c <= 'Z') || (*c >= 'a' && *c <= 'z') ||
		    (*c >= '0' && *c <= '9') || *c == '.' || *c == '_' || *c == '-'))
			*c = '_';
	return s;
}

const char *
http_status_text(int status)
{
	switch (status) {
	case 200: return "OK";
	case 201: return "Created";
	case 202: return "Accepted";
	case 204: return "No Content";
	case 400: return "Bad Request";
	case 401: return "Unauthorized";
	case 403: return "Forbidden";
	case 404: return "Not Found";
	case 405: return "Method Not Allowed";
	case 409: return "Conflict";
	case 410: return "Gone";
	case 413: return "Payload Too Large";
	case 415: return "Unsupported Media Type";
	case 422: return "Unprocessable Entity";
	case 429: return "Too Many Requests";
	case 500: return "Internal Server Error";
	case 501: return "Not Implemented";
	case 502: return "Bad Gateway";
	case 503: return "Service Unavailable";
	case 504: return "Gateway Timeout";
	default: return "Unknown";
	}
}
