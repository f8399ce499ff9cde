#ifndef BDS_E2E_RECEIVER_H
#define BDS_E2E_RECEIVER_H
/*
 * A webhook receiver for the end-to-end suites: an HTTP/1.1 server thread
 * on 127.0.0.1 (an ephemeral port) that records every request (method,
 * target, headers, raw body, arrival time) and answers each with a status
 * the test chooses, optionally after a delay and with one extra header
 * (Retry-After...). One connection per request (it answers "Connection:
 * close"); each connection is served on its own thread, so slow answers
 * overlap as they would on a real server.
 *
 * Signatures are checked the way a client's server would, with OpenSSL's
 * HMAC() and none of lib/: receiver_verify() parses Service-Signature
 * ("t=<unix>,v1=<hex>[,v1=<hex>]"), rejects a t more than `tolerance`
 * seconds from now, and accepts when any v1 equals hex HMAC-SHA256(secret,
 * "<t>.<raw body>") under a constant-time comparison (CRYPTO_memcmp).
 *
 *	struct receiver *rc = receiver_start(NULL);
 *	... register receiver_url(rc, "/hook", buf, sizeof(buf)) ...
 *	const struct receiver_req *q = receiver_wait(rc, 0, 5000);
 *	ck_assert_int_eq(receiver_verify(q, secret, time(NULL), 300, NULL), RECEIVER_SIG_OK);
 *	receiver_stop(rc);
 *
 * It lives in the test (a forked Check child); stop it before the test ends.
 */
#include <stddef.h>

#define RECEIVER_MAX_HEADERS	48
#define RECEIVER_MAX_REQUESTS	1024
#define RECEIVER_MAX_V1		8

struct receiver_header {
	char	*name;
	char	*value;
};

struct receiver_req {
	char			 method[16];
	char			 target[1024];
	struct receiver_header	 headers[RECEIVER_MAX_HEADERS];
	size_t			 nheaders;
	char			*body;		/* raw, NUL-terminated */
	size_t			 body_len;
	long long		 received_at;	/* unix seconds */
};

struct receiver_opts {
	int	 status;	/* the answer's status (default 200) */
	int	 delay_ms;	/* wait this long before answering (default 0) */
	int	 port;		/* listen on this port (default 0: an ephemeral one) */
};

struct receiver;

/* Start listening (opts NULL: answer 200 at once); NULL on failure with
 * receiver_error() saying why. */
struct receiver *receiver_start(const struct receiver_opts *);
/* Stop the thread, close the socket, free every request. NULL is fine. */
void	 receiver_stop(struct receiver *);
const char *receiver_error(void);

int	 receiver_port(const struct receiver *);
/* "http://127.0.0.1:<port><path>" into buf; returns buf. */
char	*receiver_url(const struct receiver *, const char *path, char *buf, size_t len);
/* Change the status and delay of later answers. */
void	 receiver_set(struct receiver *, int status, int delay_ms);
/* Later answers carry body (len bytes, copied) as content_type instead of
 * "ok" as text/plain; body NULL: back to "ok". */
void	 receiver_set_body(struct receiver *, const char *content_type, const void *body,
	    size_t len);
/* One more header line ("Retry-After: 3") on later answers; NULL: none. */
void	 receiver_set_header(struct receiver *, const char *line);
/* Answers being written now (a slow answer's thread still runs). */
size_t	 receiver_busy(struct receiver *);

/* Requests received so far. */
size_t	 receiver_count(struct receiver *);
/* The i-th request (0-based), waiting up to ms for it; NULL if it did not
 * come. Valid until receiver_stop(). */
const struct receiver_req *receiver_wait(struct receiver *, size_t i, int ms);
/* A header of q by name (case-insensitive), or NULL. */
const char *receiver_header(const struct receiver_req *q, const char *name);

enum receiver_sig {
	RECEIVER_SIG_OK,
	RECEIVER_SIG_MISSING,	/* no Service-Signature header */
	RECEIVER_SIG_MALFORMED,	/* no t= or no v1= */
	RECEIVER_SIG_STALE,	/* t outside the tolerance */
	RECEIVER_SIG_MISMATCH	/* no v1 matches */
};

/* Verify q's Service-Signature with secret (see above). */
enum receiver_sig receiver_verify(const struct receiver_req *q, const char *secret,
	    long long now, int tolerance);
/*
 * Split a Service-Signature value: *t and up to RECEIVER_MAX_V1 v1 values
 * (copied into v1[i], 64 hex characters each). Returns how many v1 values
 * there were, or -1 when t is missing or malformed.
 */
int	 receiver_sig_parse(const char *header, long long *t, char v1[][65], size_t max);
/* hex HMAC-SHA256(secret, "<t>.<body>") with OpenSSL. */
void	 receiver_hmac_hex(const char *secret, long long t, const char *body, size_t len,
	    char out[65]);

#endif
