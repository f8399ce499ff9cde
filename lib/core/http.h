#ifndef BDS_HTTP_H
#define BDS_HTTP_H
/*
 * The request as FastCGI hands it over: CGI parameters and a body. Parsing
 * is pure (a parameter getter in, a struct out) so tests and the fuzzer can
 * drive it without a server.
 */
#include <stddef.h>

struct arena;

enum http_method {
	M_GET,
	M_POST,
	M_PUT,
	M_PATCH,
	M_DELETE,
	M__MAX		/* any other method: never routed, answered 405 */
};

struct http_kv {
	const char	*key;
	const char	*val;
};

struct http_req {
	enum http_method method;	/* HEAD is M_GET with head set */
	const char	*method_str;	/* as sent: "HEAD" for HEAD */
	int		 head;		/* HEAD: answer as GET, without the body */
	const char	*path;		/* percent-decoded path, no query */
	const char	*uri;		/* the request URI as sent (set before the
					 * path is decoded, so a malformed one still
					 * tells which envelope answers it) */
	const char	*query_raw;
	struct http_kv	*query;		/* decoded pairs in order */
	size_t		 nquery;
	const char	*host_env;	/* BDS_HOST_ENV: "live", "sandbox" or NULL */
	const char	*request_id;	/* REQUEST_ID from nginx, or generated */
	const char	*remote_addr;
	const char	*authorization;
	const char	*idempotency_key;
	const char	*client_user_id;
	const char	*content_type;
	const char	*cookie;
	const char	*origin;	/* Origin header (CORS) */
	const char	*upload_file;	/* BDS_UPLOAD_FILE: the file nginx wrote a
					 * request body into (the bill import upload
					 * location only; no body is passed), or NULL */
	long long	 content_length;	/* -1 when absent */
	char		*body;		/* NUL-terminated; NULL when none */
	size_t		 body_len;
};

/* Look up one CGI parameter (e.g. "REQUEST_METHOD"); NULL when absent. */
typedef const char *(*http_param_fn)(void *ctx, const char *name);

enum http_parse {
	HTTP_PARSE_OK = 0,
	HTTP_PARSE_BAD = 400,		/* malformed path/query, bad escape, bad UTF-8 */
	HTTP_PARSE_TOO_LARGE = 413	/* CONTENT_LENGTH over limit */
};

/* Fill req from the CGI parameters; no body read yet. */
enum http_parse http_parse_params(struct arena *, struct http_req *,
	    http_param_fn, void *ctx, size_t body_limit);
/* The same from a FastCGI environment ("NAME=value" strings, NULL-ended),
 * read in one pass. */
enum http_parse http_parse_env(struct arena *, struct http_req *,
	    const char *const *envp, size_t body_limit);
/* Decode an application/x-www-form-urlencoded string. 0 ok, -1 malformed. */
int	 http_query_parse(struct arena *, const char *qs, struct http_kv **out, size_t *n);
/* Percent-decode s ('+' kept as is); NULL on a bad escape, NUL byte or bad UTF-8. */
char	*http_pct_decode(struct arena *, const char *s, size_t len, int plus_is_space);
const char *http_query_get(const struct http_req *, const char *key);
const char *http_method_name(enum http_method);
enum http_method http_method_parse(const char *);
const char *http_status_text(int status);
/* A download's file name for Content-Disposition: name (NULL or empty:
 * fallback) cut to 100 bytes, every byte but [A-Za-z0-9._-] made '_', so
 * no quote, CR or LF can reach the header. Arena string. */
char	*http_safe_filename(struct arena *, const char *name, const char *fallback);

#endif
