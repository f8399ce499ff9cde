#ifndef BDS_LINKS_ATTEMPTS_H
#define BDS_LINKS_ATTEMPTS_H
/*
 * Bounded guessing in the connect flow (links_attempts.c; docs/DECISIONS.md
 * "Bounded guessing in the connect flow"). Every failed login and wrong MFA
 * answer counts against its link token (for the token's whole life) and
 * against (client, biller, keyed hash of the username) over a sliding
 * window. A spent token mints no ticket or session and takes no connect or
 * answer; a spent username takes no connect or answer; the connect job
 * checks both again before any login.
 */
struct req;

#define LINKS_TOKEN_FAILURES_MAX	10	/* per link token, its life long */
#define LINKS_USERNAME_FAILURES_MAX	20	/* per (client, biller, username)... */
#define LINKS_USERNAME_WINDOW_S		86400	/* ...in any 24 hours */

/* The keyed hash of a username (surrounding white space dropped, ASCII
 * lower-cased: the same login however typed) as hex, in the arena. */
const char *links_username_hash(struct req *, const char *username);

/*
 * Whether a link token with token_failures failures so far, and the
 * username uhash (hex; NULL: none yet) at biller_id, may try again: 0, or
 * the 429 TOO_MANY_ATTEMPTS written (a spent username adds Retry-After),
 * or a 5xx on a database failure.
 */
int	 links_attempts_or_reply(struct req *, const char *client_id, long token_failures,
	    const char *biller_id, const char *uhash);
/* The same for the connect job, which reads the token's count itself:
 * 1 spent, 0 not, -1 database failure. */
int	 links_attempts_spent(struct req *, const char *client_id, const char *link_token_id,
	    const char *biller_id, const char *uhash);
/* One failure (error_code: INVALID_CREDENTIALS, MFA_FAILED,
 * INVALID_UPDATED_USERNAME) of the token and the username, in the caller's
 * transaction. 0 ok, -1. */
int	 links_attempts_record(struct req *, const char *client_id, const char *link_token_id,
	    const char *biller_id, const char *uhash, const char *error_code);
#endif
