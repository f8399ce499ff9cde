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

/* ---- mixed scripts (UTS #39) ---- */

/*
 * The scripts a homograph mixes, as a compact table of code point ranges
 * (Unicode's Scripts.txt for Latin, Greek and Cyrillic; Common and
 * Inherited for what every script may use): enough to tell a Latin label
 * with a Cyrillic or Greek letter in it. Anything not listed counts as one
 * further script, "Other". Ranges sorted, closed.
 */
enum rtl_script { SC_COMMON, SC_LATIN, SC_GREEK, SC_CYRILLIC, SC_OTHER, SC__MAX };
static const char *const script_names[SC__MAX] = {
	[SC_COMMON] = "Common", [SC_LATIN] = "Latin", [SC_GREEK] = "Greek",
	[SC_CYRILLIC] = "Cyrillic", [SC_OTHER] = "Other"
};
static const struct { unsigned lo, hi; enum rtl_script sc; } scripts[] = {
	{ 0x0000, 0x0040, SC_COMMON }, { 0x0041, 0x005a, SC_LATIN },
	{ 0x005b, 0x0060, SC_COMMON }, { 0x0061, 0x007a, SC_LATIN },
	{ 0x007b, 0x00a9, SC_COMMON }, { 0x00aa, 0x00aa, SC_LATIN },
	{ 0x00ab, 0x00b9, SC_COMMON }, { 0x00ba, 0x00ba, SC_LATIN },
	{ 0x00bb, 0x00bf, SC_COMMON }, { 0x00c0, 0x00d6, SC_LATIN },
	{ 0x00d7, 0x00d7, SC_COMMON }, { 0x00d8, 0x00f6, SC_LATIN },
	{ 0x00f7, 0x00f7, SC_COMMON }, { 0x00f8, 0x02b8, SC_LATIN },
	{ 0x02b9, 0x02df, SC_COMMON }, { 0x02e0, 0x02e4, SC_LATIN },
	{ 0x02e5, 0x036f, SC_COMMON },	/* modifiers; combining marks (Inherited) */
	{ 0x0370, 0x0373, SC_GREEK }, { 0x0374, 0x0374, SC_COMMON },
	{ 0x0375, 0x03e1, SC_GREEK }, { 0x03e2, 0x03ef, SC_OTHER },	/* Coptic */
	{ 0x03f0, 0x03ff, SC_GREEK }, { 0x0400, 0x0484, SC_CYRILLIC },
	{ 0x0485, 0x0486, SC_COMMON }, { 0x0487, 0x052f, SC_CYRILLIC },
	{ 0x1ab0, 0x1aff, SC_COMMON }, { 0x1c80, 0x1c8f, SC_CYRILLIC },
	{ 0x1d00, 0x1d25, SC_LATIN }, { 0x1d26, 0x1d2a, SC_GREEK },
	{ 0x1d2b, 0x1d2b, SC_CYRILLIC }, { 0x1d2c, 0x1d5c, SC_LATIN },
	{ 0x1d5d, 0x1d61, SC_GREEK }, { 0x1d62, 0x1d65, SC_LATIN },
	{ 0x1d66, 0x1d6a, SC_GREEK }, { 0x1d6b, 0x1d77, SC_LATIN },
	{ 0x1d78, 0x1d78, SC_CYRILLIC }, { 0x1d79, 0x1dbe, SC_LATIN },
	{ 0x1dbf, 0x1dbf, SC_GREEK }, { 0x1dc0, 0x1dff, SC_COMMON },
	{ 0x1e00, 0x1eff, SC_LATIN }, { 0x1f00, 0x1fff, SC_GREEK },
	{ 0x2000, 0x2070, SC_COMMON }, { 0x2071, 0x2071, SC_LATIN },
	{ 0x2072, 0x207e, SC_COMMON }, { 0x207f, 0x207f, SC_LATIN },
	{ 0x2080, 0x208f, SC_COMMON }, { 0x2090, 0x209c, SC_LATIN },
	{ 0x209d, 0x2125, SC_COMMON }, { 0x2126, 0x2126, SC_GREEK },
	{ 0x2127, 0x2129, SC_COMMON }, { 0x212a, 0x212b, SC_LATIN },
	{ 0x212c, 0x2131, SC_COMMON }, { 0x2132, 0x2132, SC_LATIN },
	{ 0x2133, 0x214d, SC_COMMON }, { 0x214e, 0x214e, SC_LATIN },
	{ 0x214f, 0x215f, SC_COMMON }, { 0x2160, 0x2188, SC_LATIN },
	{ 0x2c60, 0x2c7f, SC_LATIN }, { 0x2de0, 0x2dff, SC_CYRILLIC },
	{ 0xa640, 0xa69f, SC_CYRILLIC }, { 0xa722, 0xa7ff, SC_LATIN },
	{ 0xab30, 0xab5a, SC_LATIN }, { 0xab5c, 0xab64, SC_LATIN },
	{ 0xab65, 0xab65, SC_GREEK }, { 0xfb00, 0xfb06, SC_LATIN },
	{ 0xfe00, 0xfe0f, SC_COMMON }, { 0xfe20, 0xfe2d, SC_COMMON },
	{ 0xfe2e, 0xfe2f, SC_CYRILLIC }, { 0xff21, 0xff3a, SC_LATIN },
	{ 0xff41, 0xff5a, SC_LATIN },
};

static enum rtl_script
script_of(unsigned cp)
{
	size_t lo = 0, hi = sizeof(scripts) / sizeof(scripts[0]);

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (cp < scripts[mid].lo)
			hi = mid;
		else if (cp > scripts[mid].hi)
			lo = mid + 1;
		else
			return scripts[mid].sc;
	}
	return SC_OTHER;
}

/* The next code point of valid UTF-8 (libidn2's output) at *s. */
static unsigned
utf8_next(const unsigned char **s)
{
	const unsigned char *p = *s;
	unsigned cp;
	int n;

	if (p[0] < 0x80) {
		*s = p + 1;
		return p[0];
	}
	n = p[0] >= 0xf0 ? 3 : p[0] >= 0xe0 ? 2 : 1;
	cp = p[0] & (0x3f >> n);
	for (int i = 1; i <= n && p[i] != '\0'; i++)
		cp = (cp << 6) | (p[i] & 0x3f);
	*s = p + 1;
	while ((**s & 0xc0) == 0x80)
		(*s)++;
	return cp;
}

/* The scripts (bit per enum rtl_script, Common left out) of one label. */
static unsigned
label_scripts(const char *label)
{
	const unsigned char *p = (const unsigned char *)label;
	unsigned set = 0;
	enum rtl_script sc;

	while (*p != '\0' && *p != '.')
		if ((sc = script_of(utf8_next(&p))) != SC_COMMON)
			set |= 1u << sc;
	return set;
}

const char *
rtl_canon_mixed_script(struct arena *a, const char *host, const char **label)
{
	const char *l, *names = NULL;
	char *u = NULL;
	unsigned set;

	*label = NULL;
	if (host == NULL || idn2_to_unicode_8z8z(host, &u, 0) != IDN2_OK) {
		idn2_free(u);
		return NULL;
	}
	for (l = u; l != NULL; l = strchr(l, '.') != NULL ? strchr(l, '.') + 1 : NULL) {
		set = label_scripts(l);
		if ((set & (set - 1)) == 0)
			continue;	/* one script, or none: UTS #39 single script */
		for (int sc = SC_LATIN; sc < SC__MAX; sc++)
			if (set & (1u << sc))
				names = names == NULL ? script_names[sc] :
				    arena_printf(a, "%s+%s", names, script_names[sc]);
		*label = arena_strndup(a, l, strcspn(l, "."));
		break;
	}
	idn2_free(u);
	return names;
}
