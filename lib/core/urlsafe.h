#ifndef BDS_URLSAFE_H
#define BDS_URLSAFE_H
/*
 * Outbound URL safety (DESIGN "Outbound safety") for every URL the service
 * calls: webhook endpoints today, biller URLs later.
 *
 *	struct urlsafe_target t;
 *	const char *why;
 *	if (urlsafe_check(a, url, flags, &t, &why) != URLSAFE_OK) refuse (why);
 *	urlsafe_curl_pin(curl, a, &t);	then perform: the connection goes to
 *					t.addr and nowhere else
 *
 * The URL is parsed here, not by the resolver or libcurl: an absolute
 * http(s) URL without userinfo or fragment, a host that is a DNS name, an
 * IPv4 address in any form inet_aton(3) takes (decimal 2130706433, octal
 * 0177.0.0.1, hex 0x7f.0.0.1, short 127.1) or a bracketed IPv6 address,
 * and a path and query of URL characters. libcurl is then handed the
 * canonical URL rebuilt from the parts, so both read the same host.
 *
 * The host is resolved once; every address it resolves to must be public
 * (unless URLSAFE_ALLOW_PRIVATE): loopback, private, shared (CGNAT),
 * link-local, multicast, unspecified, documentation, benchmarking and other
 * reserved ranges are refused, IPv4-mapped and NAT64/6to4 IPv6 by the IPv4
 * address inside, IPv4-compatible IPv6 always. The connection is then pinned
 * to the first address (CURLOPT_CONNECT_TO), so a second DNS answer (DNS
 * rebinding) is never used; redirects are never followed and no proxy is
 * used. TLS still verifies the certificate against the URL's host name.
 */
#include <stddef.h>

#include <curl/curl.h>
#include <netdb.h>
#include <netinet/in.h>

struct arena;

#define URLSAFE_URL_MAX	2048	/* characters */
#define URLSAFE_RESOLVE_TIMEOUT_MS 2000	/* a DNS answer later than this: no answer */

/* flags of urlsafe_check */
#define URLSAFE_ALLOW_HTTP	0x01u	/* plain http too (sandbox endpoints) */
#define URLSAFE_ALLOW_PRIVATE	0x02u	/* config allow_private_targets (dev, tests) */
#define URLSAFE_NO_RESOLVE	0x04u	/* parse and check literals only; no DNS */

enum urlsafe_err {
	URLSAFE_OK,
	URLSAFE_SYNTAX,		/* not an absolute http(s) URL of the accepted form */
	URLSAFE_USERINFO,	/* user:password@ in the authority */
	URLSAFE_SCHEME,		/* http where https is required */
	URLSAFE_HOST,		/* malformed host (e.g. a numeric host no parser agrees on) */
	URLSAFE_RESOLVE,	/* the name does not resolve */
	URLSAFE_REFUSED,	/* an address it resolves to is not public */
	URLSAFE__MAX
};

/* What an address is; anything but URLSAFE_PUBLIC is refused. */
enum urlsafe_class {
	URLSAFE_PUBLIC,
	URLSAFE_LOOPBACK,	/* 127/8, ::1 */
	URLSAFE_PRIVATE,	/* 10/8, 172.16/12, 192.168/16, 100.64/10, fc00::/7, fec0::/10 */
	URLSAFE_LINK_LOCAL,	/* 169.254/16 (cloud metadata), fe80::/10 */
	URLSAFE_MULTICAST,	/* 224/4, ff00::/8 */
	URLSAFE_UNSPECIFIED,	/* 0/8, :: */
	URLSAFE_RESERVED,	/* documentation, benchmarking, 240/4, IPv4-compatible... */
	URLSAFE_CLASS__MAX
};

/* A parsed URL; strings in the arena. */
struct urlsafe_url {
	const char	*scheme;	/* "http" or "https" (lower case) */
	const char	*host;		/* lower-case name, dotted IPv4, or IPv6 without brackets */
	int		 port;		/* explicit, else 80 / 443 */
	int		 ip;		/* 4 or 6 when the host is an address, else 0 */
	const char	*target;	/* path and query; "/" when empty */
	const char	*canonical;	/* scheme://host[:port]target, what libcurl gets */
};

/* A URL that passed: where the connection goes. */
struct urlsafe_target {
	struct urlsafe_url url;
	char		 addr[INET6_ADDRSTRLEN];	/* the checked address ("" with NO_RESOLVE) */
	int		 family;			/* AF_INET or AF_INET6 (0 with NO_RESOLVE) */
};

/*
 * Parse url into *u. URLSAFE_OK, or SYNTAX / USERINFO / HOST with *why a
 * short static reason fit for a client.
 */
enum urlsafe_err urlsafe_parse(struct arena *, const char *url, struct urlsafe_url *u,
	    const char **why);

/*
 * The whole check (see above): parse, scheme (https unless
 * URLSAFE_ALLOW_HTTP), resolve once (within URLSAFE_RESOLVE_TIMEOUT_MS;
 * numeric hosts need no
 * DNS), every address public unless URLSAFE_ALLOW_PRIVATE. Fills *t.
 * Returns URLSAFE_OK or the first failure with *why a static reason that
 * names no address (safe to show the client).
 */
enum urlsafe_err urlsafe_check(struct arena *, const char *url, unsigned flags,
	    struct urlsafe_target *t, const char **why);

/*
 * getaddrinfo(host, NULL, hints, res) that gives up after ms (a resolver
 * that does not answer cannot hold the caller: glibc's getaddrinfo_a,
 * waited for with gai_suspend, cancelled at the deadline). A numeric host
 * (AI_NUMERICHOST) is converted directly. Returns getaddrinfo's codes;
 * EAI_AGAIN also when the deadline passed. *res is freeaddrinfo's.
 */
int	 urlsafe_resolve(const char *host, const struct addrinfo *hints, int ms,
	    struct addrinfo **res);

/* Classify one address (AF_INET or AF_INET6 sockaddr). */
enum urlsafe_class urlsafe_classify(const struct sockaddr *);
enum urlsafe_class urlsafe_classify_v4(const struct in_addr *);
enum urlsafe_class urlsafe_classify_v6(const struct in6_addr *);
/* "public", "loopback", "private"...: for messages and logs. */
const char *urlsafe_class_name(enum urlsafe_class);

/*
 * Point an easy handle at t: CURLOPT_URL = the canonical URL, the
 * connection pinned to t->addr:port (CURLOPT_CONNECT_TO), protocols http
 * and https only, no redirects, no proxy. The pin list is freed at the
 * arena's reset, so the transfer must end before it. 0 ok, -1 when libcurl
 * refused an option (or t was checked with URLSAFE_NO_RESOLVE).
 */
int	 urlsafe_curl_pin(CURL *, struct arena *, const struct urlsafe_target *t);

#endif
