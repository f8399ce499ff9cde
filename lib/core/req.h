#ifndef BDS_REQ_H
#define BDS_REQ_H
/*
 * One request in flight: the parsed HTTP request, the matched route, the
 * validated input, the authenticated principal and the response being built.
 * Lives in the worker; every pointer in it belongs to r->arena.
 */
#include <stddef.h>
#include <stdint.h>
#include "core/http.h"
#include "core/router.h"

struct arena;
struct config;
struct db;
struct json_object;

#define REQ_MAX_HEADERS 8

struct req {
	struct arena		*arena;
	const struct config	*cfg;
	struct db		*db;		/* where statements go: the primary, or
						 * the standby while a ROUTE_READ
						 * handler runs there */
	struct db		*db_primary;	/* the primary, always (a read route's
						 * rare write: the sandbox's sync
						 * statistics) */
	struct db		*db_read;	/* the standby (db.read_url), or NULL */
	struct http_req		 http;
	struct route_match	 match;
	struct json_object	*body;		/* validated body (canonical names) */
	struct json_object	*query;		/* validated query */
	int			 iam;		/* error envelope: 1 = /v1/iam */
	int64_t			 start_us;	/* monotonic, for the log */

	/* principal, filled by auth */
	const char		*user_id;	/* AUTH_JWT */
	const char		*session_id;
	const char		*client_id;	/* AUTH_KEY */
	const char		*env;		/* sandbox, development, production */
	const char		*secret_id;	/* AUTH_KEY: the key's client_secrets row */
	const char		*owner_id;	/* AUTH_KEY: the developer owning the client */
	/* AUTH_KEY from the worker's key cache: the secret whose liveness is
	 * still to be confirmed (with the first query, or before the handler
	 * of a write); set to NULL once confirmed */
	const char		*key_unconfirmed;
	unsigned long long	 key_version;	/* bds_keys' version it was confirmed at */
	int			 key_revoked;	/* the confirmation found it revoked */
	/* set by auth while key_unconfirmed is: db_query runs it after a
	 * query outside a transaction; nonzero drops the result */
	int			(*after_query)(struct req *);
	const char		*link_id;	/* AUTH_LINK: the token's link (client_id
						 * and env are the link's) */
	const char		*pay_token_id;	/* AUTH_PAYTOKEN: the token's id (client_id
						 * and env are the token's) */

	/* response */
	int			 status;
	struct json_object	*out;		/* response body; NULL: no body */
	struct http_kv		 headers[REQ_MAX_HEADERS];	/* extra headers */
	size_t			 nheaders;
	size_t			 read_mark;	/* nheaders when a read began on the
						 * standby (core/standby.h) */
	const char		*error_code;	/* for the log */
};

/*
 * A request context outside the FastCGI path (bds-jobs, bdsctl), so library
 * code that takes a struct req (events_emit above all) runs as it does in
 * the API: everything zero but the handles and the request id (an arena or
 * static string; it names the work in logs and events).
 */
void	 req_init(struct req *, const struct config *, struct db *, struct arena *,
	    const char *request_id);
/* The request id of a scheduler's sweep (bdsctl jobs, bds-jobs): not a
 * request, so the jobs it queues name none (jobq_add). */
#define REQ_ID_SWEEP	"bdsctl-jobs"
/* req_init for an operator's bdsctl command: request id "bdsctl-<uuid>". */
void	 req_init_operator(struct req *, const struct config *, struct db *, struct arena *);
/* Set a response header (name and value copied into the arena). A header
 * of that name set before is replaced, so two paths that both answer, say,
 * a 503 with Retry-After send it once; Set-Cookie alone may repeat. */
void	 req_header_add(struct req *, const char *name, const char *value);
/*
 * The principal's one owner scope (idempotency keys and whatever else is
 * kept per caller): an API key's client and environment "cli_…/sandbox", a
 * developer's user id "usr_…"; NULL without a principal. Arena string.
 */
const char *req_owner(struct req *);
/* A path capture by name, e.g. req_cap(r, "id"). */
const char *req_cap(const struct req *, const char *name);

#endif
