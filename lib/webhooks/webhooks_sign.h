#ifndef BDS_WEBHOOKS_SIGN_H
#define BDS_WEBHOOKS_SIGN_H
/*
 * The webhook wire format, shared by the API's test deliveries and
 * bds-deliver: signing secrets (generated, sealed at rest), the envelope,
 * the Service-Signature header, the X-Webhook-* headers, and one signed
 * POST prepared on a libcurl easy handle (for curl_easy_perform or a multi
 * handle).
 *
 *	body = json_dump(a, events_envelope(a, &ev), &len);
 *	sig = webhooks_signature(a, now, body, len, secrets, nsecrets);
 *	webhooks_request(c, a, &target, &ev, body, len, sig, &res);
 *	cc = curl_easy_perform(c);	(or through curl_multi)
 *	webhooks_result_finish(c, cc, &res);	res.status, res.error
 *
 * Signature (SPEC "Events"): HMAC-SHA256 keyed by the secret over
 * "<t>.<raw body>", hex; header "t=<t>,v1=<hex>[,v1=<hex>]" with one v1 per
 * live secret (the current one first, then the previous one during a
 * rotation's grace window).
 */
#include <stddef.h>
#include <stdint.h>

#include <curl/curl.h>

#include "events/events.h"

struct arena;
struct json_object;
struct urlsafe_target;

#define WEBHOOKS_SECRET_PREFIX	"whsec_"
#define WEBHOOKS_SECRET_BYTES	32		/* random bytes, base64url after the prefix */
#define WEBHOOKS_SECRET_MIN	16		/* characters of a secret the client chooses */
#define WEBHOOKS_SECRET_MAX	128
#define WEBHOOKS_TIMEOUT_MS	10000		/* the spec's 10 s answer limit */
#define WEBHOOKS_TOLERANCE	300		/* seconds: the receiver's replay window */
#define WEBHOOKS_SOURCE		"service"	/* X-Webhook-Source */
#define WEBHOOKS_MAX_SECRETS	2		/* current and previous */
#define WEBHOOKS_USER_AGENT	"bds-webhooks/1"

/* "whsec_" + base64url of 32 random bytes (arena). */
char	*webhooks_secret_new(struct arena *);

/*
 * Secrets at rest (DESIGN "Secrets at rest"): XChaCha20-Poly1305 under key
 * (cfg->secret_key) bound to the webhook id, so a sealed secret moved to
 * another row does not open. seal returns bytea input text ("\x<hex>") for a
 * statement parameter; open takes a bytea column as libpq returns it (text
 * format) and returns the secret, or NULL when it does not open.
 */
char	*webhooks_secret_seal(struct arena *, const unsigned char key[32],
	    const char *webhook_id, const char *secret);
char	*webhooks_secret_open(struct arena *, const unsigned char key[32],
	    const char *webhook_id, const char *bytea_text);

/* Lower-case hex HMAC-SHA256(secret, "<t>.<body>") (arena). */
char	*webhooks_sign_v1(struct arena *, const char *secret, int64_t t,
	    const char *body, size_t len);
/* "t=<t>,v1=<hex>..." with one v1 per secret, in order (arena). n >= 1. */
char	*webhooks_signature(struct arena *, int64_t t, const char *body, size_t len,
	    const char *const secrets[], size_t n);

enum webhooks_verify {
	WEBHOOKS_VERIFY_OK,
	WEBHOOKS_VERIFY_MALFORMED,	/* no t= or no v1= */
	WEBHOOKS_VERIFY_STALE,		/* t more than tolerance from now */
	WEBHOOKS_VERIFY_MISMATCH		/* no v1 matches the secret */
};
/*
 * What a receiver does: parse header, check t within tolerance seconds of
 * now, and accept when any v1 equals the HMAC under secret (constant-time).
 * The reference for the docs and for tests of this module.
 */
enum webhooks_verify webhooks_verify(const char *header, const char *body, size_t len,
	    const char *secret, int64_t now, int tolerance);

/* The outcome of one delivery attempt. */
struct webhooks_result {
	long		 status;	/* HTTP status; 0 when no HTTP response came */
	int		 curl_code;	/* CURLcode of the transfer */
	const char	*error;		/* status 0: what failed, fit for the client
					 * (never an address or libcurl's own text) */
	long long	 latency_ms;	/* total time */
	char		 errbuf[CURL_ERROR_SIZE];	/* libcurl's detail: the log only */
	size_t		 received;	/* response body bytes read (kept: none) */
};

/*
 * The headers of a delivery of ev signed with signature, as names[i]:
 * values[i] (arena strings; a missing value is ""): Content-Type,
 * X-Webhook-Event-Type, X-Webhook-Id, X-Webhook-Timestamp,
 * X-Webhook-Client-Id, X-Webhook-Source, Service-Signature, User-Agent.
 * The POST sends them, an inbox keeps them. Returns WEBHOOKS_HEADERS.
 */
#define WEBHOOKS_HEADERS	8
size_t	 webhooks_headers(struct arena *, const struct events_wire *ev, const char *signature,
	    const char *names[WEBHOOKS_HEADERS], const char *values[WEBHOOKS_HEADERS]);

/*
 * Prepare c for one signed POST of body to t (urlsafe_curl_pin: pinned,
 * no redirects, no proxy): the X-Webhook-* headers from ev, Service-Signature
 * signature, Content-Type application/json, a 10 s limit, the response body
 * read and dropped. body, the header list and *res must outlive the
 * transfer (the list is freed at the arena's reset). 0 ok, -1 when libcurl
 * refused an option.
 */
int	 webhooks_request(CURL *c, struct arena *, const struct urlsafe_target *t,
	    const struct events_wire *ev, const char *body, size_t len,
	    const char *signature, struct webhooks_result *res);

/* Fill res from the finished transfer (its CURLcode cc). 2xx is success. */
void	 webhooks_result_finish(CURL *c, int cc, struct webhooks_result *res);

/* A transport failure as a short message fit for the client. */
const char *webhooks_transport_error(int curl_code);

#endif
