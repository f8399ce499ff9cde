#ifndef BDS_IAM_OPS_H
#define BDS_IAM_OPS_H
/*
 * Operator actions on developer accounts (bdsctl): the legal-document
 * registry, the live-access queue, billing, and the sweeps of sign-in
 * throttles and ended sessions. Every function runs on the caller's
 * connection and allocates what it returns in the arena; -1 means the
 * database failed (db_errmsg says why).
 */
struct arena;
struct config;
struct db;
struct db_stmt_set;

struct iam_ops_legal {
	const char	*kind;		/* terms, privacy, dpa */
	const char	*version;
	const char	*effective_date;	/* YYYY-MM-DD */
};

struct iam_ops_live_request {
	const char	*user_id;
	const char	*email;
	const char	*status;
	const char	*requested_at;
};

/* The registry, by kind and date: the count (*out in the arena), or -1. */
int	 iam_ops_legal_list(struct db *, struct arena *, struct iam_ops_legal **out);
/* Register a version (date YYYY-MM-DD): 1 registered, 0 when it already
 * was, -1. */
int	 iam_ops_legal_add(struct db *, struct arena *, const char *kind,
	    const char *version, const char *date);

/* A user by id or e-mail: 1 and *id (in the arena), 0 none, -1. */
int	 iam_ops_user_find(struct db *, struct arena *, const char *who,
	    const char **id);
/* Pending live-access requests, oldest first: the count, or -1. */
int	 iam_ops_live_access_list(struct db *, struct arena *,
	    struct iam_ops_live_request **out);
/* Decide user_id's pending request (reason: deny only, may be NULL): 1
 * decided, 0 when none is pending, -1. */
int	 iam_ops_live_access_decide(struct db *, struct arena *, const char *user_id,
	    int approve, const char *reason);
/* Billing is set up (the first time counts): 0, or -1. */
int	 iam_ops_billing_done(struct db *, struct arena *, const char *user_id);

/* Sweeps: rows removed, or -1. Throttles idle for a day and not locking;
 * sessions revoked or expired 30 days ago. */
long long iam_ops_sweep_throttles(const struct config *, struct db *, struct arena *);
long long iam_ops_sweep_sessions(const struct config *, struct db *, struct arena *);

extern const struct db_stmt_set iam_ops_stmt_set;

#endif
