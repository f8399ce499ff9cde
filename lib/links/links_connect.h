#ifndef BDS_LINKS_CONNECT_H
#define BDS_LINKS_CONNECT_H
/*
 * The connect flow (DOMAIN.md "Link tokens, the connect flow, links"): link
 * tokens (links_tokens.c), connect tickets and link sessions
 * (links_sessions.c), public tokens and their exchange (links_exchange.c).
 * Logging in to a biller is the connect job's (lib/jobs/jobs_connect.c, in
 * bds-jobs): it reads a session through links_connect_job_* below and
 * records the outcome through them, so every statement of the flow stays in
 * this module.
 *
 * Credentials of the session routes: the link-session token bds_lst_… (or
 * the link token itself, for server-side SDKs) resolved inside the handlers
 * by links_session_or_reply(); the routes are AUTH_NONE in the table.
 */
#include "core/validate.h"

struct req;
struct json_object;
struct db_stmt_set;

#define LINKS_TOKEN_TTL		(4 * 3600)	/* create mode */
#define LINKS_TOKEN_UPDATE_TTL	(30 * 60)	/* update mode */
#define LINKS_TICKET_TTL	60
#define LINKS_SESSION_IDLE	(30 * 60)
#define LINKS_PUBLIC_TTL	(30 * 60)
#define LINKS_FAILED_LOGINS_MAX	5
#define LINKS_FRESH_CHALLENGES	1	/* new MFA challenges per session after a wrong answer */
#define LINKS_MFA_RESENDS_MAX	3	/* POST /v1/link-sessions/mfa/resend per session */
#define LINKS_METADATA_MAX	4096

/* ---- handlers (lib/routes.c) ---- */

extern const struct vfield links_token_create_fields[];
extern const struct vfield links_ticket_fields[];
extern const struct vfield links_session_create_fields[];
extern const struct vfield links_session_billers_query[];
extern const struct vfield links_session_connect_fields[];
extern const struct vfield links_session_mfa_fields[];
extern const struct vfield links_session_exit_fields[];
extern const struct vfield links_exchange_fields[];

/* POST /v1/link-tokens (KEY, ROUTE_TX): 201 the token; 400 a bad field; 403
 * update.link_id of another client or user; 404 update.link_id unknown. */
int	 links_token_create(struct req *, struct json_object *out);
/*
 * A new link token for r's client and environment, what POST
 * /v1/link-tokens makes from its body, for other modules (requests to
 * link) with plain arguments: 201 with out filled as the route answers, or
 * the error status written (400 naming the field, 403, 404, 503).
 */
struct links_token_args {
	const char	*client_user_id;	/* required */
	const char	*biller_id;		/* or NULL */
	const char	*request_to_link_id;	/* or NULL */
	struct json_object *consents;		/* array of strings, or NULL */
	int		 hosted;		/* a hosted connect URL too */
	int		 expires_in;		/* seconds; 0: the default */
	const char	*redirect_uri, *redirect_field;	/* the field named on a 400 */
	const char	*connectivity_type, *metadata_json, *language;
	int		 update;		/* update mode: update_link_id's link */
	const char	*update_link_id, *update_reason;
};
int	 links_token_new_or_reply(struct req *, const struct links_token_args *,
	    struct json_object *out);
/* POST /v1/biller-connect/ticket (bearer: the link token lt_…, ROUTE_TX):
 * 201 {ticket, expires_at, connect_url, embed_url (the connect page
 * with ?client_id=, to be framed)}; 401 unknown or expired token. */
int	 links_ticket_create(struct req *, struct json_object *out);
/* POST /v1/link-sessions {ticket} (ROUTE_TX): 201 the session (with
 * environment, client{name, domain}, privacy_url, the pinned biller as a
 * picker item); 409 LINK_SESSION_COMPLETED for a redeemed ticket whose
 * link token made its link; 400 INVALID_TICKET for any other used, expired
 * or unknown ticket. */
int	 links_session_create(struct req *, struct json_object *out);
/* GET /v1/link-sessions/billers: the picker (ACTIVE and DEGRADED):
 * {object: list, data, total_count, match_count}. */
int	 links_session_billers(struct req *, struct json_object *out);
/* POST /v1/link-sessions/connect (ROUTE_TX): 202 {status: connecting}. */
int	 links_session_connect(struct req *, struct json_object *out);
/* GET /v1/link-sessions/current: the session's state. */
int	 links_session_current(struct req *, struct json_object *out);
/* POST /v1/link-sessions/mfa {answer} (ROUTE_TX): 202. */
int	 links_session_mfa(struct req *, struct json_object *out);
/* POST /v1/link-sessions/mfa/resend (ROUTE_TX): 202, a new challenge (the
 * connect job logs in again with the sealed credentials); 409
 * INVALID_SESSION_STATE unless mfa_required, SESSION_ENDED, MFA_RESEND_LIMIT
 * after LINKS_MFA_RESENDS_MAX. */
int	 links_session_mfa_resend(struct req *, struct json_object *out);
/*
 * For the other session routes (lib/rtl's biller request): the bearer's
 * live session resolved as the routes here do (r->client_id and r->env set
 * to its client and environment): 0, or the 401/409/503 written.
 */
int	 links_session_auth_or_reply(struct req *);
/* POST /v1/link-sessions/exit {reason} (ROUTE_TX): 200; fires
 * link.session_finished (exited). */
int	 links_session_exit(struct req *, struct json_object *out);
/* POST /v1/link-tokens/{linkTokenId}/exchange (KEY, ROUTE_TX): 200 {link_id,
 * access_token, link}; 400 INVALID_PUBLIC_TOKEN. */
int	 links_exchange(struct req *, struct json_object *out);

/*
 * CORS of the connect-session routes (ROUTE_CORS): 1 when origin may read
 * the answer: the link host's origin (config link_url), or one of the
 * allowedOrigins of the caller's client (r->client_id), or, before the
 * client is known (a preflight, an error before the session resolved), of
 * any client. 0 otherwise or on a database failure.
 */
int	 links_connect_cors_allow(struct req *, const char *origin);

/* ---- the connect job (lib/jobs/jobs_connect.c) ---- */

struct links_connect_job {
	const char	*session_id, *client_id, *environment, *link_token_id;
	const char	*mode;			/* create, update */
	int		 hosted;
	const char	*client_user_id, *biller_id, *connector, *update_link_id;
	int		 linkable;		/* the session's environment may
						 * link the biller now
						 * (billers_linkable): else no
						 * login is tried */
	const char	*request_to_link_id;
	struct json_object *scopes;		/* the token's consents (array) */
	const char	*username, *password;	/* opened; arena strings */
	const char	*username_hash;		/* links_attempts.h: keyed, hex */
	const char	*mfa_answer;		/* opened, NULL when none */
	const char	*mfa_type, *mfa_prompt;	/* the challenge last shown, or NULL */
};
/*
 * The session of a connect job, with its sealed credentials opened; locked
 * (FOR UPDATE) when the caller is in a transaction (the job's apply), only
 * read in its fetch. 1 when it waits for a
 * login (status connecting), 0 when there is nothing to do (exited,
 * expired, already done), -1 on a database failure or a seal that does
 * not open. Before any login it also ends, and answers 0 for, a session
 * whose link token or username has had too many failures
 * (TOO_MANY_ATTEMPTS), an update session whose link is revoked
 * (LINK_REVOKED; the link's row stays locked for the job otherwise), and
 * an update session whose username is not the link's
 * (INVALID_UPDATED_USERNAME, counted as a failed login).
 */
int	 links_connect_job_load(struct req *, const char *client_id,
	    const char *session_id, struct links_connect_job *j);
/* The biller asks a second factor: status mfa_required with type and prompt;
 * error_code (NULL or MFA_FAILED after a wrong answer, counted as
 * links_connect_job_failed counts one). 0 ok, -1 db. */
int	 links_connect_job_mfa(struct req *, const struct links_connect_job *,
	    const char *type, const char *prompt, const char *error_code);
/*
 * After a wrong answer to a kept challenge: 1 when the job may log in once
 * more for a new challenge (the first time in the session; counted), 0
 * when the session had its one (the next answer goes to the same
 * challenge, so the biller's own limit on it holds), -1 db.
 */
int	 links_connect_job_rechallenge(struct req *, const struct links_connect_job *);
/* The login failed: status failed with error_code (INVALID_CREDENTIALS,
 * ACCOUNT_LOCKED, BILLER_UNAVAILABLE, MFA_FAILED); counts_login adds one
 * failed login (the fifth ends the session) and counts it against the link
 * token and the username (links_attempts.h: spending either ends the
 * session, TOO_MANY_ATTEMPTS). Credentials wiped. A create
 * session's INVALID_CREDENTIALS also emits the pre-completion
 * link.disconnected. 0 ok, -1. */
int	 links_connect_job_failed(struct req *, const struct links_connect_job *,
	    const char *error_code, int counts_login);
/*
 * The login succeeded and link_id is made (or repaired): status connected,
 * credentials wiped; embedded flow: a public token (bds_pub_…, 30 min)
 * sealed into the session for `current`; hosted flow: exchanged here,
 * link_id in `current` and link.session_finished (completed). 0 ok, -1.
 */
int	 links_connect_job_connected(struct req *, const struct links_connect_job *,
	    const char *link_id);

/* ---- requests to link (lib/rtl) ---- */
/*
 * The link tokens of request to link rtl_id (its proceed made them) that
 * still live, except keep (NULL: none), end now: their tickets, hosted
 * URLs and sessions stop working. Inside the caller's transaction; how
 * many, or -1.
 */
long long links_tokens_end_rtl(struct req *, const char *client_id, const char *rtl_id,
	    const char *keep);
/*
 * What a request to link hears of its token's flow, told by a job queued
 * in the caller's transaction (core/jobq.h) of a kind lib/rtl applies
 * (links never calls rtl). LINKS_JOB_SESSION_STARTED: a link session of a
 * token bound to a request opened (PENDING -> IN_PROGRESS); subject the
 * link token. LINKS_JOB_LINK_ACTIVATED: the connect job made or repaired
 * a link for such a token (-> COMPLETED; a server-side exchange fires
 * link_token.completed); subject the link token, payload
 * {request_to_link_id, link_id, hosted, client_user_id, biller_id}.
 */
#define LINKS_JOB_SESSION_STARTED	"rtl.session_started"
#define LINKS_JOB_LINK_ACTIVATED	"rtl.link_activated"

/* ---- statements and sweeps (links_module.c) ---- */

extern const struct db_stmt_set links_tokens_stmt_set;
extern const struct db_stmt_set links_sessions_stmt_set;
/* bdsctl jobs: wipe the sealed secrets of connect sessions that expired
 * unfinished (credentials, MFA answer; the public token once it is past
 * its own lifetime). Rows touched, -1 on failure. */
struct config;
struct db;
struct arena;
long long links_sessions_sweep(const struct config *, struct db *, struct arena *);
extern const struct db_stmt_set links_exchange_stmt_set;
/* bdsctl jobs: drop the counted connect failures no window counts any more
 * (links_attempts.h; a link token keeps its own count). Rows, -1. */
long long links_attempts_sweep(const struct config *, struct db *, struct arena *);
extern const struct db_stmt_set links_attempts_stmt_set;

#endif
