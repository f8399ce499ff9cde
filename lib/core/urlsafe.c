/* Outbound URL safety: parse, resolve once, refuse non-public addresses, pin. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <arpa/inet.h>
#include <netdb.h>
#include <sys/socket.h>

#include "core/arena.h"
#include "core/clock.h"
#include "core/urlsafe.h"

static const char *const class_names[URLSAFE_CLASS__MAX] = {
	[URLSAFE_PUBLIC] = "public",
	[URLSAFE_LOOPBACK] = "loopback",
	[URLSAFE_PRIVATE] = "private",
	[URLSAFE_LINK_LOCAL] = "link-local",
	[URLSAFE_MULTICAST] = "multicast",
	[URLSAFE_UNSPECIFIED] = "unspecified",
	[URLSAFE_RESERVED] = "reserved",
};

/* Why a resolved host is refused, by the class of the address. */
static const char *const refused_why[URLSAFE_CLASS__MAX] = {
	[URLSAFE_PUBLIC] = "",
	[URLSAFE_LOOPBACK] = "the host is a loopback address",
	[URLSAFE_PRIVATE] = "the host is a private network address",
	[URLSAFE_LINK_LOCAL] = "the host is a link-local address",
	[URLSAFE_MULTICAST] = "the host is a multicast address",
	[URLSAFE_UNSPECIFIED] = "the host is an unspecified address",
	[URLSAFE_RESERVED] = "the host is a reserved address",
};

const char *
urlsafe_class_name(enum urlsafe_class c)
{
	return (unsigned)c < URLSAFE_CLASS__MAX ? class_names[c] : "unknown";
}

/* ------------------------------------------------------------------ */
/* Address classes                                                     */

/* IPv4 blocks that are not public (RFC 6890 and friends), first match. */
static const struct {
	uint32_t		 net;
	unsigned		 bits;
	enum urlsafe_class	 cls;
} v4_blocks[] = {
	{ 0x00000000u, 8, URLSAFE_UNSPECIFIED },	/* 0.0.0.0/8 "this network" */
	{ 0x0a000000u, 8, URLSAFE_PRIVATE },		/* 10.0.0.0/8 */
	{ 0x64400000u, 10, URLSAFE_PRIVATE },		/* 100.64.0.0/10 shared (CGNAT) */
	{ 0x7f000000u, 8, URLSAFE_LOOPBACK },		/* 127.0.0.0/8 */
	{ 0xa9fe0000u, 16, URLSAFE_LINK_LOCAL },	/* 169.254.0.0/16 (metadata) */
	{ 0xac100000u, 12, URLSAFE_PRIVATE },		/* 172.16.0.0/12 */
	{ 0xc0000000u, 24, URLSAFE_RESERVED },		/* 192.0.0.0/24 IETF assignments */
	{ 0xc0000200u, 24, URLSAFE_RESERVED },		/* 192.0.2.0/24 TEST-NET-1 */
	{ 0xc0586300u, 24, URLSAFE_RESERVED },		/* 192.88.99.0/24 6to4 relay */
	{ 0xc0a80000u, 16, URLSAFE_PRIVATE },		/* 192.168.0.0/16 */
	{ 0xc6120000u, 15, URLSAFE_RESERVED },		/* 198.18.0.0/15 benchmarking */
	{ 0xc6336400u, 24, URLSAFE_RESERVED },		/* 198.51.100.0/24 TEST-NET-2 */
	{ 0xcb007100u, 24, URLSAFE_RESERVED },		/* 203.0.113.0/24 TEST-NET-3 */
	{ 0xe0000000u, 4, URLSAFE_MULTICAST },		/* 224.0.0.0/4 */
	{ 0xf0000000u, 4, URLSAFE_RESERVED },		/* 240.0.0.0/4, broadcast */
};

static enum urlsafe_class
classify_u32(uint32_t a)
{
	for (size_t i = 0; i < sizeof(v4_blocks) / sizeof(v4_blocks[0]); i++) {
		uint32_t mask = 0xffffffffu << (32 - v4_blocks[i].bits);

		if ((a & mask) == v4_blocks[i].net)
			return v4_blocks[i].cls;
	}
	return URLSAFE_PUBLIC;
}

enum urlsafe_class
urlsafe_classify_v4(const struct in_addr *in)
{
	return classify_u32(ntohl(in->s_addr));
}

/* The 32-bit IPv4 address in b[off..off+4). */
static uint32_t
v4_at(const unsigned char *b, size_t off)
{
	return (uint32_t)b[off] << 24 | (uint32_t)b[off + 1] << 16 |
	    (uint32_t)b[off + 2] << 8 | (uint32_t)b[off + 3];
}

static int
all_zero(const unsigned char *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (b[i] != 0)
			return 0;
	return 1;
}

enum urlsafe_class
urlsafe_classify_v6(const struct in6_addr *in)
{
	static const unsigned char mapped[12] =
	    { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
	static const unsigned char nat64[12] =
	    { 0x00, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0 };
	const unsigned char *b = in->s6_addr;
	enum urlsafe_class c;

	if (all_zero(b, 16))
		return URLSAFE_UNSPECIFIED;			/* :: */
	if (all_zero(b, 15) && b[15] == 1)
		return URLSAFE_LOOPBACK;			/* ::1 */
	if (memcmp(b, mapped, 12) == 0)
		return classify_u32(v4_at(b, 12));		/* ::ffff:a.b.c.d */
	if (all_zero(b, 12)) {
		/* IPv4-compatible ::a.b.c.d, deprecated: never a real target */
		c = classify_u32(v4_at(b, 12));
		return c != URLSAFE_PUBLIC ? c : URLSAFE_RESERVED;
	}
	if (memcmp(b, nat64, 12) == 0)
		return classify_u32(v4_at(b, 12));		/* 64:ff9b::/96 */
	if (b[0] == 0x00 && b[1] == 0x64 && b[2] == 0xff && b[3] == 0x9b &&
	    b[4] == 0x00 && b[5] == 0x01)
		return URLSAFE_PRIVATE;				/* 64:ff9b:1::/48 local NAT64 */
	if (b[0] == 0x01 && b[1] == 0x00 && all_zero(b + 2, 6))
		return URLSAFE_RESERVED;			/* 100::/64 discard */
	if (b[0] == 0x20 && b[1] == 0x01 && b[2] < 0x02)
		return URLSAFE_RESERVED;			/* 2001::/23 (Teredo...) */
	if (b[0] == 0x20 && b[1] == 0x01 && b[2] == 0x0d && b[3] == 0xb8)
		return URLSAFE_RESERVED;			/* 2001:db8::/32 docs */
	if (b[0] == 0x20 && b[1] == 0x02)
		return classify_u32(v4_at(b, 2));		/* 2002::/16 6to4 */
	if ((b[0] & 0xfe) == 0xfc)
		return URLSAFE_PRIVATE;				/* fc00::/7 unique local */
	if (b[0] == 0xfe && (b[1] & 0xc0) == 0x80)
		return URLSAFE_LINK_LOCAL;			/* fe80::/10 */
	if (b[0] == 0xfe && (b[1] & 0xc0) == 0xc0)
		return URLSAFE_PRIVATE;				/* fec0::/10 site-local */
	if (b[0] == 0xff)
		return URLSAFE_MULTICAST;			/* ff00::/8 */
	if ((b[0] & 0xe0) != 0x20)
		return URLSAFE_RESERVED;			/* outside 2000::/3 */
	return URLSAFE_PUBLIC;
}

enum urlsafe_class
urlsafe_classify(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET)
		return urlsafe_classify_v4(&((const struct sockaddr_in *)(const void *)sa)->sin_addr);
	if (sa->sa_family == AF_INET6)
		return urlsafe_classify_v6(&((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr);
	return URLSAFE_RESERVED;
}

/* ------------------------------------------------------------------ */
/* Parsing                                                             */

static int
is_alnum(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

static int
is_hex(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* RFC 3986 path and query characters: pchar, '/', '?', and %XX escapes. */
static int
target_ok(const char *s)
{
	for (; *s != '\0'; s++) {
		if (is_alnum(*s) || strchr("-._~!$&'()*+,;=:@/?", *s) != NULL)
			continue;
		if (*s == '%' && is_hex(s[1]) && is_hex(s[2])) {
			s += 2;
			continue;
		}
		return 0;
	}
	return 1;
}

/*
 * The WHATWG "ends in a number" rule: the last label (a trailing dot
 * aside) is all digits or 0x-hex. Such a host is an IPv4 address or an
 * error, never a name to look up.
 */
static int
ends_in_number(const char *h, size_t n)
{
	size_t end = n, start;

	if (end > 0 && h[end - 1] == '.')
		end--;
	for (start = end; start > 0 && h[start - 1] != '.'; start--)
		;
	if (start == end)
		return 0;
	if (end - start >= 2 && h[start] == '0' && (h[start + 1] == 'x' || h[start + 1] == 'X')) {
		for (size_t i = start + 2; i < end; i++)
			if (!is_hex(h[i]))
				return 0;
		return 1;
	}
	for (size_t i = start; i < end; i++)
		if (h[i] < '0' || h[i] > '9')
			return 0;
	return 1;
}

/* A DNS name: labels of 1-63 letters, digits, hyphens, not starting or
 * ending with one; 253 characters at most. */
static int
dns_name_ok(const char *h, size_t n)
{
	size_t start = 0;

	if (n == 0 || n > 253)
		return 0;
	for (size_t i = 0; i <= n; i++) {
		if (i < n && h[i] != '.') {
			if (!is_alnum(h[i]) && h[i] != '-')
				return 0;
			continue;
		}
		if (i == start || i - start > 63 || h[start] == '-' || h[i - 1] == '-')
			return 0;
		start = i + 1;
	}
	return 1;
}

static enum urlsafe_err
fail(const char **why, enum urlsafe_err e, const char *reason)
{
	*why = reason;
	return e;
}

/* The host h[0..n) (brackets included for IPv6) into u. */
static enum urlsafe_err
parse_host(struct arena *a, const char *h, size_t n, struct urlsafe_url *u, const char **why)
{
	char buf[INET6_ADDRSTRLEN], *host;
	struct in6_addr a6;
	struct in_addr a4;

	if (n == 0)
		return fail(why, URLSAFE_SYNTAX, "the URL has no host");
	if (h[0] == '[') {
		if (n < 3 || h[n - 1] != ']')
			return fail(why, URLSAFE_HOST, "invalid IPv6 address");
		host = arena_strndup(a, h + 1, n - 2);
		if (strchr(host, '%') != NULL)
			return fail(why, URLSAFE_HOST, "IPv6 zone identifiers are not accepted");
		if (inet_pton(AF_INET6, host, &a6) != 1)
			return fail(why, URLSAFE_HOST, "invalid IPv6 address");
		inet_ntop(AF_INET6, &a6, buf, sizeof(buf));
		u->host = arena_strdup(a, buf);
		u->ip = 6;
		return URLSAFE_OK;
	}
	for (size_t i = 0; i < n; i++)
		if (!is_alnum(h[i]) && h[i] != '-' && h[i] != '.')
			return fail(why, URLSAFE_HOST, "invalid host name");
	host = arena_strndup(a, h, n);
	/* Every IPv4 form a resolver or libcurl would take: decimal, octal,
	 * hex, short. Canonical dotted quad from here on. */
	if (inet_aton(host, &a4) != 0) {
		inet_ntop(AF_INET, &a4, buf, sizeof(buf));
		u->host = arena_strdup(a, buf);
		u->ip = 4;
		return URLSAFE_OK;
	}
	if (ends_in_number(host, n))
		return fail(why, URLSAFE_HOST, "a numeric host that is not a valid IPv4 address");
	if (!dns_name_ok(host, n))
		return fail(why, URLSAFE_HOST, "invalid host name");
	for (char *p = host; *p != '\0'; p++)
		if (*p >= 'A' && *p <= 'Z')
			*p = (char)(*p - 'A' + 'a');
	u->host = host;
	u->ip = 0;
	return URLSAFE_OK;
}

enum urlsafe_err
urlsafe_parse(struct arena *a, const char *url, struct urlsafe_url *u, const char **why)
{
	const char *rest, *auth_end, *host_end, *p;
	size_t len, alen;
	enum urlsafe_err e;
	int dflt;

	memset(u, 0, sizeof(*u));
	*why = NULL;
	if (url == NULL || (len = strlen(url)) == 0)
		return fail(why, URLSAFE_SYNTAX, "the URL is empty");
	if (len > URLSAFE_URL_MAX)
		return fail(why, URLSAFE_SYNTAX, "the URL is too long");
	for (p = url; *p != '\0'; p++)
		if ((unsigned char)*p <= 0x20 || (unsigned char)*p >= 0x7f || *p == '\\')
			return fail(why, URLSAFE_SYNTAX,
			    "the URL holds a space, a backslash, a control or a non-ASCII character");
	if (strncasecmp(url, "https://", 8) == 0) {
		u->scheme = "https";
		rest = url + 8;
		dflt = 443;
	} else if (strncasecmp(url, "http://", 7) == 0) {
		u->scheme = "http";
		rest = url + 7;
		dflt = 80;
	} else {
		return fail(why, URLSAFE_SYNTAX, "the URL must start with https:// or http://");
	}
	if (strchr(rest, '#') != NULL)
		return fail(why, URLSAFE_SYNTAX, "the URL must not have a fragment");
	alen = strcspn(rest, "/?");
	auth_end = rest + alen;
	if (memchr(rest, '@', alen) != NULL)
		return fail(why, URLSAFE_USERINFO, "the URL must not hold a user name or password");

	/* host, then an optional :port */
	if (rest[0] == '[') {
		const char *close = memchr(rest, ']', alen);

		if (close == NULL)
			return fail(why, URLSAFE_HOST, "invalid IPv6 address");
		host_end = close + 1;
	} else {
		host_end = memchr(rest, ':', alen);
		if (host_end == NULL)
			host_end = auth_end;
	}
	if ((e = parse_host(a, rest, (size_t)(host_end - rest), u, why)) != URLSAFE_OK)
		return e;
	u->port = dflt;
	if (host_end < auth_end) {
		long port = 0;

		if (*host_end != ':' || host_end + 1 == auth_end || auth_end - host_end > 6)
			return fail(why, URLSAFE_SYNTAX, "invalid port");
		for (p = host_end + 1; p < auth_end; p++) {
			if (*p < '0' || *p > '9')
				return fail(why, URLSAFE_SYNTAX, "invalid port");
			port = port * 10 + (*p - '0');
		}
		if (port < 1 || port > 65535)
			return fail(why, URLSAFE_SYNTAX, "invalid port");
		u->port = (int)port;
	}
	if (!target_ok(auth_end))
		return fail(why, URLSAFE_SYNTAX, "the URL's path or query holds an invalid character");
	u->target = *auth_end == '\0' ? "/" : *auth_end == '?' ?
	    arena_printf(a, "/%s", auth_end) : arena_strdup(a, auth_end);
	u->canonical = arena_printf(a, "%s://%s%s%s%s%s", u->scheme,
	    u->ip == 6 ? "[" : "", u->host, u->ip == 6 ? "]" : "",
	    u->port != dflt ? arena_printf(a, ":%d", u->port) : "", u->target);
	return URLSAFE_OK;
}

/* ------------------------------------------------------------------ */
/* The check                                                           */

int
urlsafe_resolve(const char *host, const struct addrinfo *hints, int ms,
    struct addrinfo **res)
{
	struct gaicb *req = NULL, *list[1];
	struct addrinfo *h = NULL;
	char *name = NULL;
	long long deadline = mono_ms() + (ms > 0 ? ms : 0), left;
	int rc;

	*res = NULL;
	if (hints->ai_flags & AI_NUMERICHOST)
		return getaddrinfo(host, NULL, hints, res);	/* no DNS: cannot block */
	if ((req = calloc(1, sizeof(*req))) == NULL || (h = malloc(sizeof(*h))) == NULL ||
	    (name = strdup(host)) == NULL) {
		rc = EAI_MEMORY;
		goto out;
	}
	*h = *hints;
	req->ar_name = name;
	req->ar_request = h;
	list[0] = req;
	if (getaddrinfo_a(GAI_NOWAIT, list, 1, NULL) != 0) {
		rc = EAI_AGAIN;
		goto out;
	}
	while ((rc = gai_error(req)) == EAI_INPROGRESS && (left = deadline - mono_ms()) > 0) {
		struct timespec ts = { (time_t)(left / 1000), (long)(left % 1000) * 1000000L };

		(void)gai_suspend((const struct gaicb *const *)list, 1, &ts);
	}
	if (rc == EAI_INPROGRESS) {
		switch (gai_cancel(req)) {
		case EAI_CANCELED:
			rc = EAI_AGAIN;
			break;
		case EAI_ALLDONE:	/* it finished meanwhile */
			rc = gai_error(req);
			break;
		default:
			/* Still running on glibc's thread, which will write into
			 * req: it is left to it (only when a resolver hangs). */
			return EAI_AGAIN;
		}
	}
	if (rc == 0)
		*res = req->ar_result;
	else if (req->ar_result != NULL)
		freeaddrinfo(req->ar_result);
out:
	free(name);
	free(h);
	free(req);
	return rc;
}

enum urlsafe_err
urlsafe_check(struct arena *a, const char *url, unsigned flags, struct urlsafe_target *t,
    const char **why)
{
	struct addrinfo hints, *res = NULL, *ai, *pick = NULL;
	enum urlsafe_err e;
	int rc;

	memset(t, 0, sizeof(*t));
	if ((e = urlsafe_parse(a, url, &t->url, why)) != URLSAFE_OK)
		return e;
	if (strcmp(t->url.scheme, "https") != 0 && !(flags & URLSAFE_ALLOW_HTTP))
		return fail(why, URLSAFE_SCHEME, "the URL must use https");
	if ((flags & URLSAFE_NO_RESOLVE) && t->url.ip == 0)
		return URLSAFE_OK;

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = t->url.ip != 0 ? AI_NUMERICHOST : 0;
	rc = urlsafe_resolve(t->url.host, &hints, URLSAFE_RESOLVE_TIMEOUT_MS, &res);
	if (rc == EAI_AGAIN && res == NULL)
		return fail(why, URLSAFE_RESOLVE, "the URL's host did not resolve in time");
	if (rc != 0 || res == NULL)
		return fail(why, URLSAFE_RESOLVE, "the URL's host does not resolve");
	e = URLSAFE_OK;
	for (ai = res; ai != NULL; ai = ai->ai_next) {
		enum urlsafe_class c;

		if (ai->ai_family != AF_INET && ai->ai_family != AF_INET6)
			continue;
		/* one refused address refuses the host: no mixing tricks */
		c = urlsafe_classify(ai->ai_addr);
		if (c != URLSAFE_PUBLIC && !(flags & URLSAFE_ALLOW_PRIVATE)) {
			e = fail(why, URLSAFE_REFUSED, refused_why[c]);
			break;
		}
		/* IPv4 first: the connection is pinned to one address */
		if (pick == NULL || (pick->ai_family != AF_INET && ai->ai_family == AF_INET))
			pick = ai;
	}
	if (e == URLSAFE_OK && pick == NULL)
		e = fail(why, URLSAFE_RESOLVE, "the URL's host does not resolve");
	if (e == URLSAFE_OK) {
		const void *src = pick->ai_family == AF_INET ?
		    (const void *)&((const struct sockaddr_in *)(const void *)pick->ai_addr)->sin_addr :
		    (const void *)&((const struct sockaddr_in6 *)(const void *)pick->ai_addr)->sin6_addr;

		t->family = pick->ai_family;
		if (inet_ntop(pick->ai_family, src, t->addr, sizeof(t->addr)) == NULL)
			e = fail(why, URLSAFE_RESOLVE, "the URL's host does not resolve");
	}
	freeaddrinfo(res);
	return e;
}

/* ------------------------------------------------------------------ */
/* libcurl                                                             */

static void
slist_free(void *l)
{
	curl_slist_free_all(l);
}

int
urlsafe_curl_pin(CURL *c, struct arena *a, const struct urlsafe_target *t)
{
	struct curl_slist *pin;
	const char *to;

	if (t->family == 0 || t->url.canonical == NULL)
		return -1;
	/* empty host and port: every connection of this handle goes there */
	to = arena_printf(a, t->family == AF_INET6 ? "::[%s]:%d" : "::%s:%d", t->addr,
	    t->url.port);
	if ((pin = curl_slist_append(NULL, to)) == NULL)
		return -1;
	arena_defer(a, slist_free, pin);
	if (curl_easy_setopt(c, CURLOPT_URL, t->url.canonical) != CURLE_OK ||
	    curl_easy_setopt(c, CURLOPT_CONNECT_TO, pin) != CURLE_OK ||
#if LIBCURL_VERSION_NUM >= 0x075500
	    curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https") != CURLE_OK ||
#else
	    curl_easy_setopt(c, CURLOPT_PROTOCOLS,
	    (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS)) != CURLE_OK ||
#endif
	    curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L) != CURLE_OK ||
	    curl_easy_setopt(c, CURLOPT_MAXREDIRS, 0L) != CURLE_OK ||
	    /* "" disables proxies, environment variables included */
	    curl_easy_setopt(c, CURLOPT_PROXY, "") != CURLE_OK)
		return -1;
	return 0;
}
