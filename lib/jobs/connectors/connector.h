#ifndef BDS_CONNECTOR_H
#define BDS_CONNECTOR_H
/*
 * Connectors (DOMAIN.md "Connectors and retrieval"): a table of functions
 * chosen per biller (billers.connector). They run in bds-jobs only, never in
 * an API worker. All strings are arena-owned; a connector never logs
 * credentials, session tokens, device tokens or MFA answers.
 *
 * A session is made with connector_session_init() (the biller it talks to),
 * then login, maybe mfa, then accounts, statements, payments and documents.
 * Every function answers a status (its outputs are set on CONN_OK only); on
 * anything but CONN_OK and CONN_MFA_REQUIRED, s->error holds a short reason
 * fit for jobs.last_error
 * ("portal: 503 on statements", "portal: malformed statements[3].amount_due"),
 * never a secret.
 */
#include <stddef.h>

#include "bills/bills.h"

struct arena;
struct config;
struct req;
struct db_stmt_set;

enum connector_status {
	CONN_OK,
	CONN_MFA_REQUIRED,		/* s->mfa_type/prompt set (and s->mfa_state) */
	CONN_INVALID_CREDENTIALS,
	CONN_ACCOUNT_LOCKED,
	CONN_MFA_FAILED,
	CONN_UNAVAILABLE,		/* the biller is away (sandbox: unknown account) */
	CONN_DEGRADED,			/* sandbox user_degraded */
	CONN_EXPIRED,			/* consent expired: the user must reconnect */
	CONN_TRANSIENT,			/* 5xx, timeout, malformed answer, 429/503:
					 * retry later (s->error, s->retry_after) */
	CONN__MAX
};

/* The biller a session talks to. */
struct connector_target {
	const char		*biller_id, *biller_name;
	const char		*base_url;	/* portal billers: every path is under it */
	const struct config	*cfg;		/* timeouts, allow_private_targets */
	long long		 deadline_ms;	/* CLOCK_MONOTONIC ms after which no call
						 * starts (0: none): the job's lease */
};

struct connector_session {
	const struct connector_target *target;
	const char	*username;
	void		*priv;
	const char	*mfa_type, *mfa_prompt;
	/*
	 * What mfa() needs to answer the challenge in a later run (the portal's
	 * challenge id), set with CONN_MFA_REQUIRED; the connect job keeps it
	 * sealed until the user's answer comes. NULL: login and answer must go
	 * together in one run (the sandbox).
	 */
	const char	*mfa_state;
	/*
	 * In: the stored "remember this device" token sent with the login (NULL
	 * none). Out: device_token_new is set when mfa() got a new one from the
	 * biller (device_token then holds it): store it sealed with the link.
	 */
	const char	*device_token;
	int		 device_token_new;
	const char	*error;		/* see above; NULL when none */
	int		 retry_after;	/* seconds the biller asked to wait (429/503), 0 */
	long long	 portal_ns;	/* time spent inside the biller's calls */
	int		 calls;		/* requests made */
};

struct connector_account {
	const char	*ref, *name, *type, *mask, *service_address;
	int		 closed;	/* the biller lists it closed */
};

/* A retrieved statement: the bill's figures and what the retrieval needs
 * beside them. */
struct connector_statement {
	struct bills_statement b;
	struct bills_money balance;	/* what is still owed on it today */
	int		 structured;	/* 0: only the document is authoritative */
	int		 document;	/* a document can be fetched (document()) */
};

/* What a retrieval asks for. */
struct connector_query {
	int		 refresh;	/* the link's successful retrievals so far:
					 * sandbox fixtures change "on the next refresh" */
	const char	*since;		/* YYYY-MM-DD, or NULL for all */
	int		 repairs;	/* its update-mode repairs so far */
	const char	*basis;		/* YYYY-MM-DD the sandbox dates its history
					 * from (sandbox.c); NULL: its fixed day */
};

struct connector {
	const char	*name;		/* "sandbox", "portal" */
	/* Log in (s from connector_session_init). CONN_OK, CONN_MFA_REQUIRED
	 * or a failure. */
	enum connector_status (*login)(struct arena *, struct connector_session *s,
	    const char *username, const char *password);
	/* Answer the challenge of this session's login, or of s->mfa_state. */
	enum connector_status (*mfa)(struct arena *, struct connector_session *s,
	    const char *answer);
	enum connector_status (*accounts)(struct arena *, struct connector_session *s,
	    struct connector_account **out, size_t *n);
	/* Statements of one account, newest first, every one validated. */
	enum connector_status (*statements)(struct arena *, struct connector_session *s,
	    const char *account_ref, const struct connector_query *q,
	    struct connector_statement **out, size_t *n);
	enum connector_status (*payments)(struct arena *, struct connector_session *s,
	    const char *account_ref, const struct connector_query *q,
	    struct bills_payment **out, size_t *n);
	/* The statement's document (a PDF, at most BILLS_DOC_MAX bytes, arena).
	 * NULL: the retrieval asks render for one. */
	enum connector_status (*document)(struct arena *, struct connector_session *s,
	    const char *statement_ref, const unsigned char **bytes, size_t *len);
	/* Without document(): the connector's own PDF of a statement that has
	 * a document (arena, *len), which the retrieval stores; NULL when it
	 * cannot be made. NULL: no documents at all. */
	unsigned char *(*render)(struct arena *, const char *biller_name,
	    const struct bills_statement *, size_t *len);
};

/* The connector of that name; NULL: unknown. */
const struct connector *connector_find(const char *name);
/* A fresh session for t (which must outlive it). */
void	 connector_session_init(struct connector_session *s, const struct connector_target *t);
/* "ok", "mfa_required", ...: for logs. */
const char *connector_status_name(enum connector_status);

/* The sandbox connector (connectors/sandbox.c). */
extern const struct connector connector_sandbox;
/*
 * The sandbox's render (connectors/sandbox_pdf.c): a small valid PDF 1.4
 * of one statement, one A4 page in Helvetica with the biller's name, bill
 * number, service period, statement and due date, the line items and the
 * total, amounts at their currency's exponent (core/money.h). The same
 * input gives the same bytes (no dates of rendering, no ids). Arena-owned,
 * *len its length; NULL when a part could not be formatted.
 */
unsigned char *sandbox_pdf_render(struct arena *, const char *biller_name,
	    const struct bills_statement *, size_t *len);
/* The Biller Portal Protocol connector (connectors/portal.c, docs/portal.md). */
extern const struct connector connector_portal;

/* ---- what the jobs keep for the connectors (connector_db.c, sql/022) ---- */

/* The catalog's biller as a target (name, base_url; cfg = r->cfg, no
 * deadline): 1 found, 0 no such biller, -1 database failure. */
int	 connector_target_load(struct req *, const char *biller_id, struct connector_target *t);

/* A statement of a link as stored: a bill not deleted. */
struct connector_known {
	const char	*ref, *account_id, *statement_date;	/* YYYY-MM-DD or NULL */
	int		 revision, has_document;
};
/*
 * The link's stored statements, sorted by ref (connector_known_find). 0 ok,
 * -1 database failure.
 */
int	 connector_known_load(struct req *, const char *client_id, const char *link_id,
	    struct connector_known **out, size_t *n);
const struct connector_known *connector_known_find(const struct connector_known *k,
	    size_t n, const char *ref);
/*
 * The since date of the link's next retrieval (arena, YYYY-MM-DD): the
 * earlier of its last successful retrieval's date (UTC) minus days and the
 * day before the statement date of its oldest bill still not PAID; *since
 * NULL when the link never had a successful retrieval (ask for
 * everything). 0 ok, -1.
 */
int	 connector_since(struct req *, const char *client_id, const char *link_id, int days,
	    const char **since);
/* The day (UTC, YYYY-MM-DD, arena) the link was made in *day, NULL when
 * no such link: 0, or -1 on a database failure. */
int	 connector_basis(struct req *, const char *client_id, const char *link_id,
	    const char **day);
/*
 * A statement the biller lists as structured:false (no bill is made from
 * it): recorded with its document's hash (NULL: none) until the import
 * extraction pipeline reads it; withdrawn marks it withdrawn. 0 ok, -1.
 */
int	 connector_unstructured_put(struct req *, const char *client_id, const char *link_id,
	    const char *account_id, const struct connector_statement *st, const char *sha,
	    int withdrawn);
/* The hash of a recorded unstructured statement's document at revision
 * (arena), NULL when none is recorded at that revision. *err on failure. */
const char *connector_unstructured_sha(struct req *, const char *client_id,
	    const char *link_id, const char *ref, int revision, int *err);
/*
 * Why the connector last disconnected the link, beside the link's own
 * reason (mfa_required, consent_expired, session_expired, ...). 0 ok, -1.
 */
int	 connector_link_note(struct req *, const char *client_id, const char *link_id,
	    const char *detail);
/* One more successful retrieval of the link and its time: inside the
 * biller's calls (portal_ns) and in the whole run (run_ns). 0 ok, -1. */
int	 connector_link_timing(struct req *, const char *client_id, const char *link_id,
	    long long portal_ns, long long run_ns);
/*
 * The connect flow's pending challenge (s->mfa_state) of a link session,
 * sealed at rest: put replaces it, take returns it (arena, NULL when none;
 * *err on failure) and deletes it, drop deletes it. 0 ok, -1.
 */
int	 connector_challenge_put(struct req *, const char *client_id, const char *session_id,
	    const char *state);
const char *connector_challenge_take(struct req *, const char *client_id,
	    const char *session_id, int *err);
int	 connector_challenge_drop(struct req *, const char *client_id, const char *session_id);

extern const struct db_stmt_set connector_stmt_set;

#endif
