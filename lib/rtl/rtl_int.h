#ifndef BDS_RTL_INT_H
#define BDS_RTL_INT_H
/*
 * Inside lib/rtl: what its files ask of each other, one way: the discovery
 * records' routes and operator (rtl_discovery.c) call the requests (rtl.c),
 * which call the onboarding (rtl_onboard.c). Not for other modules.
 */
struct json_object;
struct req;

#define RTL_OPEN_SQL		"('PENDING', 'IN_PROGRESS')"

/* An onboarding {biller_name, biller_url} as a request keeps it. */
struct rtl_onboarding {
	const char	*name;		/* as sent */
	const char	*url;		/* canonical */
	const char	*discovery_id;	/* its record (bdisc_…) */
	const char	*biller_id;	/* the record's biller, or NULL: it waits */
	const char	*status;	/* the record's: PENDING, MATCHED, ... */
};

/*
 * The onboarding of a new request (r's client and environment): the URL
 * canonicalised and checked (every address public), the discovery record
 * of its registrable domain found or made, and matched against the
 * catalog. 0 with *o filled, or the status written (400 naming
 * field, e.g. onboarding.biller_url, 503).
 */
int	 rtl_onboard_or_reply(struct req *, struct json_object *onboarding,
	    const char *field, struct rtl_onboarding *o);

/*
 * The requests of (client_id) waiting on discovery record discovery_id (no
 * biller, open) get biller_id, each with link_request.updated. How many,
 * or -1.
 */
int	 rtl_resolve_waiting(struct req *, const char *client_id, const char *discovery_id,
	    const char *biller_id);
/* The ids of those waiting requests as a JSON array (arena), NULL on a
 * database failure. */
struct json_object *rtl_waiting_ids(struct req *, const char *client_id,
	    const char *discovery_id);

/*
 * The connect flow's moves of a request to link (rtl_jobs.c applies them
 * as the jobs links queues). session_started: a link session of
 * (client_id, link_token_id) opened: a PENDING request the token is bound
 * to becomes IN_PROGRESS (link_request.updated). linked: link_id was made
 * with link_token_id of request rtl_id: the request becomes COMPLETED
 * (link_request.updated) and, hosted (a server-side exchange),
 * link_token.completed fires. In the caller's transaction; 0 ok (also
 * when no request moved), -1.
 */
int	 rtl_session_started(struct req *, const char *client_id, const char *link_token_id);
struct rtl_linked {
	const char	*client_id, *environment, *request_to_link_id, *link_token_id;
	const char	*link_id, *client_user_id, *biller_id;
	int		 hosted;
};
int	 rtl_linked(struct req *, const struct rtl_linked *);

#endif
