#ifndef BDS_RTL_CANON_H
#define BDS_RTL_CANON_H
/*
 * The canonical form of an onboarding biller URL, without any
 * network: what a client sends as onboarding.biller_url becomes one https
 * URL, so two spellings of one login page are one discovery record.
 *
 *	https only (http is refused); no userinfo; no IP literal (IPv4 in any
 *	form a resolver takes, bracketed IPv6); port 443 or none (any other
 *	port is refused); host lower case, IDNA2008 (UTS #46 non-transitional)
 *	A-labels, one trailing dot dropped, LDH labels; fragment removed; path
 *	dot segments resolved, runs of '/' folded to one, percent-escapes of
 *	unreserved characters decoded and the rest upper-cased, characters
 *	outside RFC 3986 percent-encoded; the query kept as sent (encoded the
 *	same way), an empty one dropped.
 *
 * The registrable domain (the Public Suffix List's "eTLD+1", from libpsl
 * and Debian's publicsuffix data) is what a record is matched by; a host
 * that is itself a public suffix has none and is refused.
 */
#include <stddef.h>

struct arena;

#define RTL_CANON_URL_MAX	2048	/* bytes of input and of the result */

enum rtl_canon_err {
	RTL_CANON_OK,
	RTL_CANON_SYNTAX,	/* not an absolute URL of the accepted form */
	RTL_CANON_SCHEME,	/* not https */
	RTL_CANON_USERINFO,	/* user[:password]@ in the authority */
	RTL_CANON_IP,		/* the host is an IP address */
	RTL_CANON_PORT,		/* a port other than 443 */
	RTL_CANON_HOST,		/* not a valid (internationalised) DNS name */
	RTL_CANON_SUFFIX,	/* the host is a public suffix: no registrable domain */
	RTL_CANON__MAX
};

struct rtl_canon {
	const char	*url;		/* https://host/path[?query] */
	const char	*host;		/* A-labels, lower case */
	const char	*domain;	/* registrable domain of host */
};

/*
 * Canonicalise in (leading and trailing ASCII white space ignored) into *c
 * (arena strings). RTL_CANON_OK, or the failure with *code a short
 * machine code (e.g. "ip_literal") and *why a message fit for the client.
 */
enum rtl_canon_err rtl_canon_url(struct arena *, const char *in, struct rtl_canon *c,
	    const char **code, const char **why);

/* The registrable domain of a lower-case A-label host (arena), or NULL
 * when it is a public suffix or empty. */
const char *rtl_canon_domain(struct arena *, const char *host);

/*
 * UTS #39 "single script" per label of a lower-case A-label host: the
 * scripts a label mixes ("Latin+Cyrillic", arena), with *label that label
 * in Unicode (arena; for a log or a terminal, show the A-labels), or NULL
 * when every label keeps to one script (Common and Inherited characters,
 * digits and '-', go with any). Scripts come from a compact table: Latin,
 * Greek and Cyrillic by name, any other letter as "Other", so Latin with
 * Han (allowed by the "highly restrictive" profile) is flagged too: this is
 * a flag for an operator's second look, never a refusal.
 */
const char *rtl_canon_mixed_script(struct arena *, const char *host, const char **label);

#endif
