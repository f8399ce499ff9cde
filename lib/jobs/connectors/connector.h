#ifndef BDS_CONNECTOR_H
#define BDS_CONNECTOR_H
/*
 * Connectors (DOMAIN.md "Connectors and retrieval"): a table of functions
 * chosen per biller (billers.connector). They run in bds-jobs only, never in
 * an API worker. All strings are arena-owned; a connector never logs
 * credentials.
 */
#include <stddef.h>

#include "bills/bills.h"

struct arena;

enum connector_status {
	CONN_OK, CONN_MFA_REQUIRED, CONN_INVALID_CREDENTIALS, CONN_ACCOUNT_LOCKED,
	CONN_MFA_FAILED, CONN_UNAVAILABLE, CONN_DEGRADED, CONN_EXPIRED
};

struct connector_session {
	const char	*username;
	void		*priv;
	const char	*mfa_type, *mfa_prompt;
};

struct connector_account { const char *ref, *name, *type, *mask, *service_address; };

struct connector {
	const char	*name;		/* "sandbox" */
	/* Log in. CONN_OK, CONN_MFA_REQUIRED (s->mfa_type/prompt set) or a failure. */
	enum connector_status (*login)(struct arena *, const char *username,
	    const char *password, struct connector_session *s);
	enum connector_status (*mfa)(struct arena *, struct connector_session *s,
	    const char *answer);
	enum connector_status (*accounts)(struct arena *, struct connector_session *s,
	    struct connector_account **out, size_t *n);
	/* Statements of one account, newest first; refresh = how many refreshes
	 * the link has had before this one (0 on the first retrieval): fixtures
	 * that change on "the next refresh" answer by it. */
	enum connector_status (*statements)(struct arena *, struct connector_session *s,
	    const char *account_ref, int refresh, struct bills_statement **out, size_t *n);
	enum connector_status (*payments)(struct arena *, struct connector_session *s,
	    const char *account_ref, int refresh, struct bills_payment **out, size_t *n);
};

/* The connector of that name; NULL: unknown. */
const struct connector *connector_find(const char *name);

/* The sandbox connector (connectors/sandbox.c). */
extern const struct connector connector_sandbox;

#endif
