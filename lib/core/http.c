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

static const char *
param(struct arena *a, http_param_fn get, void *ctx, const char *name)
{
	const char *v = get(ctx, name);

	return v != NULL ? arena_strdup(a, v) : NULL;
}

enum http_parse
http_parse_params(struct arena *a, struct http_req *h, http_param_fn get,
    void *ctx, size_t body_limit)
{
	const char *uri, *q, *cl;
	unsigned char rid[16];

	memset(h, 0, sizeof(*h));
	h->content_length = -1;
	h->method_str = param(a, get, ctx, "REQUEST_METHOD");
	h->method = http_method_parse(h->method_str);
	h->request_id = param(a, get, ctx, "REQUEST_ID");
	if (h->request_id == NULL || *h->request_id == '\0' ||
	    strlen(h->request_id) > 64 || !validate_format(VF_PRINTABLE, h->request_id)) {
		crypto_random_bytes(rid, sizeof(rid));
		h->request_id = crypto_hex_encode(a, rid, sizeof(rid));
	}
	h->host_env = param(a, get, ctx, "BDS_HOST_ENV");
	h->remote_addr = param(a, get, ctx, "REMOTE_ADDR");
	h->authorization = param(a, get, ctx, "HTTP_AUTHORIZATION");
	h->idempotency_key = param(a, get, ctx, "HTTP_IDEMPOTENCY_KEY");
	h->client_user_id = param(a, get, ctx, "HTTP_X_CLIENT_USER_ID");
	h->content_type = param(a, get, ctx, "CONTENT_TYPE");
	h->cookie = param(a, get, ctx, "HTTP_COOKIE");

	if ((cl = get(ctx, "CONTENT_LENGTH")) != NULL && *cl != '\0') {
		char *end;
		long long v;

		errno = 0;
		v = strtoll(cl, &end, 10);
		if (errno != 0 || *end != '\0' || v < 0 || !isdigit((unsigned char)*cl))
			return HTTP_PARSE_BAD;
		h->content_length = v;
		if ((unsigned long long)v > body_limit)
			return HTTP_PARSE_TOO_LARGE;
	}

	if ((uri = get(ctx, "REQUEST_URI")) == NULL || *uri == '\0')
		uri = get(ctx, "DOCUMENT_URI");
	if (uri == NULL || uri[0] != '/')
		return HTTP_PARSE_BAD;
	q = strchr(uri, '?');
	h->path = http_pct_decode(a, uri, q ? (size_t)(q - uri) : strlen(uri), 0);
	if (h->path == NULL)
		return HTTP_PARSE_BAD;
	h->query_raw = q ? arena_strdup(a, q + 1) : param(a, get, ctx, "QUERY_STRING");
	if (http_query_parse(a, h->query_raw, &h->query, &h->nquery) != 0)
		return HTTP_PARSE_BAD;
	/* Headers are echoed into SQL parameters and logs: keep them text. */
	if ((h->idempotency_key && !validate_utf8(h->idempotency_key, strlen(h->idempotency_key))) ||
	    (h->client_user_id && !validate_utf8(h->client_user_id, strlen(h->client_user_id))) ||
	    (h->authorization && !validate_utf8(h->authorization, strlen(h->authorization))))
		return HTTP_PARSE_BAD;
	return HTTP_PARSE_OK;
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
