#ifndef BDS_WEBHOOKS_H
#define BDS_WEBHOOKS_H
/*
 * Webhook subscriptions: the developer's routes under
 * /v1/iam/clients/{clientId} (iam_webhooks.c, JWT), the client's own
 * /v1/webhook-endpoints (webhook_endpoints.c, API key), and what both share
 * (webhooks_core.c): the event-type catalogue, the rows, URL checks and the
 * signed test delivery. The wire format (secrets, envelope, signature,
 * headers) is lib/webhook_sign.h; outbound URL safety is lib/urlsafe.h.
 *
 * A subscription matches an event of type T in environment E of client C
 * when it is enabled, belongs to (C, E), and its events array holds T, "*"
 * or "all" (events_types_match; in SQL: events ? T OR events ? '*' OR
 * events ? 'all').
 */
#include <stddef.h>

#include "core/validate.h"

struct arena;
struct req;
struct json_object;
struct db_stmt_set;

#define WEBHOOKS_EVENTS_MAX		50	/* names in one subscription */
#define WEBHOOKS_PER_ENVIRONMENT	20	/* subscriptions per client and environment */
#define WEBHOOKS_ROTATE_HOURS		24	/* default grace window of a rotated secret */
#define WEBHOOKS_ROTATE_HOURS_MAX	168

/* ---- handlers (lib/routes.c) ---- */

/* JWT, owner only (another developer's client or webhook is 404). */
int	 webhooks_iam_create(struct req *, struct json_object *);
int	 webhooks_iam_list(struct req *, struct json_object *);
int	 webhooks_iam_primary_get(struct req *, struct json_object *);
int	 webhooks_iam_primary_put(struct req *, struct json_object *);
int	 webhooks_iam_delete(struct req *, struct json_object *);
int	 webhooks_iam_test(struct req *, struct json_object *);

/* KEY, scoped to the credential's client and environment. */
int	 webhooks_endpoints_list(struct req *, struct json_object *);
int	 webhooks_endpoints_create(struct req *, struct json_object *);
int	 webhooks_endpoints_get(struct req *, struct json_object *);
int	 webhooks_endpoints_update(struct req *, struct json_object *);
int	 webhooks_endpoints_delete(struct req *, struct json_object *);
int	 webhooks_endpoints_rotate(struct req *, struct json_object *);

/* ---- body specs ---- */
extern const struct vfield webhooks_iam_create_fields[], webhooks_iam_put_fields[],
	webhooks_iam_test_fields[], webhooks_endpoints_create_fields[],
	webhooks_endpoints_update_fields[], webhooks_endpoints_rotate_fields[];

extern const struct db_stmt_set webhooks_stmt_set;

/* ---- rows and shared operations (webhooks_core.c) ---- */

/* One subscription as stored (no secret). Strings are arena copies. */
struct webhooks_row {
	const char	*id, *client_id, *environment, *url, *disabled_reason,
			*created_at, *updated_at,
			*previous_expires_at;	/* NULL unless a rotated secret is live */
	struct json_object *events;
	int		 enabled;
};

/* The subscription as JSON: iam spelling (camelCase, /v1/iam) or the
 * client API's (snake_case, object "webhook_endpoint"). secret is added
 * when not NULL (creation and rotation only). Owned by the arena. */
struct json_object *webhooks_json(struct req *, const struct webhooks_row *, int iam,
	    const char *secret);

/*
 * Check a delivery URL for environment (https unless sandbox; no private
 * address unless allow_private_targets). 0 ok, else the 400 written
 * (VALIDATION_ERROR naming field).
 */
int	 webhooks_url_check(struct req *, const char *field, const char *url,
	    const char *environment);

/*
 * Create a subscription from the validated body (url, events, optional
 * secret and enabled) for client and environment, in one transaction:
 * the client is locked (and must belong to user_id when it is not NULL:
 * else 404 CLIENT_NOT_FOUND), the Idempotency-Key header is claimed under
 * idem_owner (its retry is 409 IDEMPOTENCY_KEY_NOT_REPLAYABLE: the answer
 * held the secret), at most WEBHOOKS_PER_ENVIRONMENT per environment.
 * 0 with *row and *secret (arena), else the error status already written.
 */
int	 webhooks_create(struct req *, const char *user_id, const char *client_id,
	    const char *environment, const char *idem_owner, struct webhooks_row *row,
	    const char **secret);

/* Lock the client row inside the caller's transaction, checking its owner
 * when user_id is not NULL. 1 found, 0 not (or not the owner's), -1 db. */
int	 webhooks_client_lock(struct req *, const char *client_id, const char *user_id);
/* (Reads check ownership with iam_clients_owned, lib/clients.h.) */

/* Subscriptions of a client (environment NULL: all) as a JSON array in
 * creation order; NULL on a database failure. */
struct json_object *webhooks_list_json(struct req *, const char *client_id,
	    const char *environment, int iam);
/* One subscription; environment NULL: any. 1 found, 0 none, -1 db. */
int	 webhooks_get(struct req *, const char *client_id, const char *environment,
	    const char *id, struct webhooks_row *);
/* The environment's primary subscription: the oldest enabled one. */
int	 webhooks_primary(struct req *, const char *client_id, const char *environment,
	    struct webhooks_row *);
/* How many subscriptions (client, environment) has; -1 db. */
long	 webhooks_count(struct req *, const char *client_id, const char *environment);
/* Insert one (inside the caller's transaction); the secret is sealed.
 * 0 ok with *row, -1 db. */
int	 webhooks_insert(struct req *, const char *client_id, const char *environment,
	    const char *url, struct json_object *events, int enabled, const char *secret,
	    struct webhooks_row *row);
/* Change any of url, events (NULL: keep) and enabled (-1: keep). 1 updated,
 * 0 none such, -1 db. */
int	 webhooks_update(struct req *, const char *client_id, const char *environment,
	    const char *id, const char *url, struct json_object *events, int enabled,
	    struct webhooks_row *);
/* Delete one and record webhook_endpoint.deleted in the same (caller's)
 * transaction. 1 deleted, 0 none such, -1 db. */
int	 webhooks_delete(struct req *, const char *client_id, const char *environment,
	    const char *id);
/* New signing secret; the old one stays valid for hours (0: not at all)
 * as the previous secret. 1 with *row and *secret, 0 none such, -1 db. */
int	 webhooks_rotate(struct req *, const char *client_id, const char *environment,
	    const char *id, int hours, struct webhooks_row *, const char **secret);

/*
 * Record an activity event (table events) inside the caller's
 * transaction. data is the event's data member. 0 ok, -1 db.
 */
int	 webhooks_event_record(struct req *, const char *client_id,
	    const char *environment, const char *type, struct json_object *data);

/*
 * POST a signed test event of event_type (validated) to subscription id of
 * client, now, with the 10 s limit, and answer 200 {success, status_code,
 * delivery_id, message}; 404 WEBHOOK_NOT_FOUND; 400 when event_type is not
 * in the subscription.
 */
int	 webhooks_test_deliver(struct req *, struct json_object *out,
	    const char *client_id, const char *id, const char *event_type);

#endif
