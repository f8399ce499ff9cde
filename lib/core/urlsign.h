#ifndef BDS_URLSIGN_H
#define BDS_URLSIGN_H
/*
 * Signed URLs: a short-lived URL on the host the call came to that carries
 * its own credential (statement downloads, bill import uploads and source
 * documents). For one purpose (a constant string per kind of URL):
 *   k = HMAC-SHA256(secret_key, purpose)
 *   S = base64url(HMAC-SHA256(k, id "\n" client_id "\n" host "\n" E))
 * host "live" or "sandbox" (BDS_HOST_ENV), E the expiry in unix seconds.
 * The checking route looks the resource up by id, recomputes S with the
 * resource's client and its own host and compares in constant time; only
 * then does it read E, so "expired" is said only of a genuine URL.
 */
struct req;

/* The host a request came to, as signed: "live" or "sandbox". */
const char *urlsign_host(const struct req *);
/* That host's base URL (config api_url or sandbox_url), never the Host header. */
const char *urlsign_base(const struct req *);
/* S for purpose, id, client, host and expiry (arena). */
const char *urlsign_sig(struct req *, const char *purpose, const char *id,
	    const char *client_id, const char *host, long long expires);

enum urlsign_check {
	URLSIGN_OK = 0,
	URLSIGN_BAD,		/* no signature, or not this one */
	URLSIGN_EXPIRED		/* genuine, but E is past */
};
/* Check sig (may be NULL) and expires of a URL of id for client_id,
 * against the host this request came to. */
enum urlsign_check urlsign_check(struct req *, const char *purpose, const char *id,
	    const char *client_id, const char *sig, long long expires);

#endif
