/*
 * Onboarding biller URLs in one canonical form (rtl_canon.h): pure string
 * work plus libidn2 (IDNA) and libpsl (registrable domain); no network.
 */
#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <idn2.h>
#include <libpsl.h>

#include "core/arena.h"
#include "rtl/rtl_canon.h"

#define HOST_MAX	253
#define LABEL_MAX	63

static enum rtl_canon_err
fail(const char **code, const char **why, enum rtl_canon_err e, const char *c, const char *w)
{
	*code = c;
	*why = w;
	return e;
}

static int
is_alpha(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static int
is_digit(int c)
{
	return c >= '0' && c <= '9';
}

static int
hexval(int c)
{
	if (is_digit(c))
		return c - '0';
	c |= 0x20;	/* ASCII lower case */
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

static int
unreserved(int c)
{
	return is_alpha(c) || is_digit(c) || c == '-' || c == '.' || c == '_' || c == '~';
}

/* RFC 3986 pchar without '%' (and '/', '?' where they belong). */
static int
kept(int c, int query)
{
	return unreserved(c) || strchr("!$&'()*+,;=:@/", c) != NULL || (query && c == '?');
}

/*
 * One path or query s[0..n) with escapes normalised: escapes of unreserved
 * characters decoded, the rest upper-case hex, a '%' that starts no escape
 * and every character outside RFC 3986 encoded. The caller refused
 * controls, spaces and backslashes already.
 */
static char *
encode(struct arena *a, const char *s, size_t n, int query)
{
	static const char hex[] = "0123456789ABCDEF";
	char *out = arena_alloc(a, 3 * n + 1), *o = out;

	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		int hi, lo;

		if (c == '%' && i + 2 < n && (hi = hexval(s[i + 1])) >= 0 &&
		    (lo = hexval(s[i + 2])) >= 0) {
			int v = hi * 16 + lo;

			if (unreserved(v)) {
				*o++ = (char)v;
			} else {
				*o++ = '%';
				*o++ = hex[hi];
				*o++ = hex[lo];
			}
			i += 2;
		} else if (c != '%' && c < 0x80 && kept(c, query)) {
			*o++ = (char)c;
		} else {
			*o++ = '%';
			*o++ = hex[c >> 4];
			*o++ = hex[c & 15];
		}
	}
	*o = '\0';
	return out;
}

/*
 * An encoded path (starting with '/') with runs of '/' folded and dot
 * segments removed (RFC 3986 5.2.4); a trailing "." or ".." keeps its
 * slash, so "/a/b/.." is "/a/".
 */
static char *
normalise_path(struct arena *a, const char *p)
{
	size_t n = strlen(p), nseg = 0;
	const char **seg = arena_alloc(a, (n + 2) * sizeof(*seg));
	size_t *len = arena_alloc(a, (n + 2) * sizeof(*len));
	char *out = arena_alloc(a, n + 2), *o = out;

	while (*p != '\0') {
		size_t l;
		int last;

		while (*p == '/')
			p++;
		l = strcspn(p, "/");
		last = p[l] == '\0';
		if ((l == 1 && p[0] == '.') || (l == 2 && p[0] == '.' && p[1] == '.')) {
			if (l == 2 && nseg > 0)
				nseg--;
			if (last) {
				seg[nseg] = "";
				len[nseg++] = 0;
			}
		} else if (l > 0 || last) {
			seg[nseg] = p;
			len[nseg++] = l;
		}
		p += l;
	}
	*o++ = '/';
	for (size_t i = 0; i < nseg; i++) {
		if (i > 0)
			*o++ = '/';
		memcpy(o, seg[i], len[i]);
		o += len[i];
	}
	*o = '\0';
	return out;
}

/* The WHATWG "ends in a number" rule: a last label (a trailing dot aside)
 * of digits or 0x-hex makes the host an IPv4 address or an error. */
static int
ends_in_number(const char *h)
{
	size_t end = strlen(h), start;

	if (end > 0 && h[end - 1] == '.')
		end--;
	for (start = end; start > 0 && h[start - 1] != '.'; start--)
		;
	if (start == end)
		return 0;
	if (end - start >= 2 && h[start] == '0' && (h[start + 1] | 0x20) == 'x') {
		for (size_t i = start + 2; i < end; i++)
			if (hexval(h[i]) < 0)
				return 0;
		return 1;
	}
	for (size_t i = start; i < end; i++)
		if (!is_digit(h[i]))
			return 0;
	return 1;
}

/* LDH labels of 1-63 characters, not starting or ending with '-'. */
static int
ldh_ok(const char *h)
{
	size_t n = strlen(h), start = 0;

	if (n == 0 || n > HOST_MAX)
		return 0;
	for (size_t i = 0; i <= n; i++) {
		if (i < n && h[i] != '.') {
			if (!is_alpha(h[i]) && !is_digit(h[i]) && h[i] != '-')
				return 0;
			continue;
		}
		if (i == start || i - start > LABEL_MAX || h[start] == '-' || h[i - 1] == '-')
			return 0;
		start = i + 1;
	}
	return 1;
}

/* The host h[0..n) as lower-case A-labels into *host. */
static enum rtl_canon_err
canon_host(struct arena *a, const char *h, size_t n, const char **host, const char **code,
    const char **why)
{
	char *raw, *ascii = NULL;
	struct in_addr a4;
	int rc;

	if (n > 0 && h[n - 1] == '.')
		n--;	/* the root's dot: one name */
	if (n == 0)
		return fail(code, why, RTL_CANON_SYNTAX, "invalid_url", "the URL has no host");
	if (memchr(h, '%', n) != NULL)
		return fail(code, why, RTL_CANON_HOST, "invalid_host",
		    "the URL's host must not hold percent-escapes");
	raw = arena_strndup(a, h, n);
	/* numeric forms before IDNA (which leaves them alone) and after it
	 * (full-width digits map to ASCII ones) */
	if (inet_aton(raw, &a4) != 0 || ends_in_number(raw))
		return fail(code, why, RTL_CANON_IP, "ip_literal",
		    "the URL's host must be a name, not an IP address");
	rc = idn2_to_ascii_8z(raw, &ascii, IDN2_NONTRANSITIONAL | IDN2_NFC_INPUT);
	if (rc != IDN2_OK) {
		free(ascii);
		return fail(code, why, RTL_CANON_HOST, "invalid_host",
		    "the URL's host is not a valid domain name");
	}
	*host = arena_strdup(a, ascii);
	free(ascii);
	if (inet_aton(*host, &a4) != 0 || ends_in_number(*host))
		return fail(code, why, RTL_CANON_IP, "ip_literal",
		    "the URL's host must be a name, not an IP address");
	if (!ldh_ok(*host))
		return fail(code, why, RTL_CANON_HOST, "invalid_host",
		    "the URL's host is not a valid domain name");
	return RTL_CANON_OK;
}

/* The authority auth[0..n): host and an optional port (443 or none). */
static enum rtl_canon_err
canon_authority(struct arena *a, const char *auth, size_t n, const char **host,
    const char **code, const char **why)
{
	const char *colon;
	size_t hlen = n;

	if (memchr(auth, '@', n) != NULL)
		return fail(code, why, RTL_CANON_USERINFO, "userinfo",
		    "the URL must not hold a user name or password");
	if (n > 0 && auth[0] == '[')
		return fail(code, why, RTL_CANON_IP, "ip_literal",
		    "the URL's host must be a name, not an IP address");
	if ((colon = memchr(auth, ':', n)) != NULL) {
		const char *p = colon + 1, *end = auth + n;
		long port = 0;

		hlen = (size_t)(colon - auth);
		if (memchr(p, ':', (size_t)(end - p)) != NULL)
			return fail(code, why, RTL_CANON_SYNTAX, "invalid_url",
			    "the URL's host is not valid");
		if (end - p > 5)
			return fail(code, why, RTL_CANON_SYNTAX, "invalid_url", "invalid port");
		for (; p < end; p++) {
			if (!is_digit(*p))
				return fail(code, why, RTL_CANON_SYNTAX, "invalid_url", "invalid port");
			port = port * 10 + (*p - '0');
		}
		if (colon + 1 < end && port != 443)
			return fail(code, why, RTL_CANON_PORT, "port_not_allowed",
			    "the URL must use the default https port (443)");
	}
	return canon_host(a, auth, hlen, host, code, why);
}

enum rtl_canon_err
rtl_canon_url(struct arena *a, const char *in, struct rtl_canon *c, const char **code,
    const char **why)
{
	const char *s, *rest, *end, *q, *host;
	size_t n, alen;
	enum rtl_canon_err e;
	char *path, *query = NULL;

	memset(c, 0, sizeof(*c));
	if (in == NULL)
		return fail(code, why, RTL_CANON_SYNTAX, "invalid_url", "the URL is empty");
	for (s = in; *s == ' ' || *s == '\t' || *s == '\n' || *s == '\r' || *s == '\f'; s++)
		;
	n = strlen(s);
	while (n > 0 && strchr(" \t\n\r\f", s[n - 1]) != NULL)
		n--;
	if (n == 0)
		return fail(code, why, RTL_CANON_SYNTAX, "invalid_url", "the URL is empty");
	if (n > RTL_CANON_URL_MAX)
		return fail(code, why, RTL_CANON_SYNTAX, "invalid_url", "the URL is too long");
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] <= 0x20 || s[i] == 0x7f || s[i] == '\\')
			return fail(code, why, RTL_CANON_SYNTAX, "invalid_url",
			    "the URL holds a space, a backslash or a control character");
	if (n >= 8 && strncasecmp(s, "https://", 8) == 0)
		rest = s + 8;
	else if (n >= 7 && strncasecmp(s, "http://", 7) == 0)
		return fail(code, why, RTL_CANON_SCHEME, "https_required", "the URL must use https");
	else
		return fail(code, why, RTL_CANON_SYNTAX, "invalid_url",
		    "the URL must be an absolute https:// URL");
	end = s + n;
	/* the fragment never reaches a server: dropped */
	if ((q = memchr(rest, '#', (size_t)(end - rest))) != NULL)
		end = q;
	for (alen = 0; rest + alen < end && strchr("/?", rest[alen]) == NULL; alen++)
		;
	if ((e = canon_authority(a, rest, alen, &host, code, why)) != RTL_CANON_OK)
		return e;
	rest += alen;
	q = memchr(rest, '?', (size_t)(end - rest));
	path = encode(a, rest, (size_t)((q != NULL ? q : end) - rest), 0);
	if (q != NULL && q + 1 < end)
		query = encode(a, q + 1, (size_t)(end - q - 1), 1);
	c->host = host;
	c->url = arena_printf(a, "https://%s%s%s%s", host, normalise_path(a,
	    path[0] == '/' ? path : arena_printf(a, "/%s", path)),
	    query != NULL ? "?" : "", query != NULL ? query : "");
	if (strlen(c->url) > RTL_CANON_URL_MAX)
		return fail(code, why, RTL_CANON_SYNTAX, "invalid_url", "the URL is too long");
	c->domain = rtl_canon_domain(a, host);
	*code = NULL;
	*why = NULL;
	return RTL_CANON_OK;
}

const char *
rtl_canon_domain(struct arena *a, const char *host)
{
	/* loaded once per process (the newest of libpsl's built-in list and
	 * Debian's publicsuffix file) and kept: reachable, never freed */
	static const psl_ctx_t *psl;
	const char *d;

	if (psl == NULL && (psl = psl_latest(NULL)) == NULL)
		psl = psl_builtin();
	if (psl == NULL || host == NULL || *host == '\0')
		return NULL;
	d = psl_registrable_domain(psl, host);
	return d != NULL ? arena_strdup(a, d) : NULL;
}
