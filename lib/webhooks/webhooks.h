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

#include "core/config.h"
#include "core/module.h"
#include "core/validate.h"

struct arena;
struct req;
struct json_object;
struct db_stmt_set;

#define WEBHOOKS_EVENTS_MAX		50	/* names in one subscription */
#define WEBHOOKS_PER_ENVIRONMENT	20	/* subscriptions per client and environment */
#define WEBHOOKS_ROTATE_HOURS		24	/* default grace window of a rotated secret */
#define WEBHOOKS_ROTATE_HOURS_MAX	168
/* The activity event of a deletion (no subscription can name it). */
#define WEBHOOKS_DELETED_EVENT		"webhook_endpoint.deleted"

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
 * The …_or_reply operations run inside the dispatcher's transaction
 * (ROUTE_TX) and return 0 when done, or the status already written: 404
 * WEBHOOK_NOT_FOUND / CLIENT_NOT_FOUND, 400 WEBHOOK_LIMIT_REACHED, or the
 * database's 503. Another client's (or environment's, when environment is
 * not NULL) webhook id finds nothing.
 */

/*
 * Create a subscription from the validated body (url, events, optional
 * secret and enabled) for client and environment: the client is locked
 * (and must belong to user_id when it is not NULL), at most
 * WEBHOOKS_PER_ENVIRONMENT per environment, the Idempotency-Key required
 * (the route is ROUTE_ONCE: the answer holds the secret). 0 with *row and
 * *secret (arena), else the error status already written.
 */
int	 webhooks_create(struct req *, const char *user_id, const char *client_id,
	    const char *environment, struct webhooks_row *row, const char **secret);
/* Lock the client row, checking its owner when user_id is not NULL. */
int	 webhooks_client_lock_or_reply(struct req *, const char *client_id,
	    const char *user_id);
/* Room for one more subscription in (client, environment). */
int	 webhooks_room_or_reply(struct req *, const char *client_id, const char *environment);
/* One subscription; environment NULL: any. */
int	 webhooks_get_or_reply(struct req *, const char *client_id, const char *environment,
	    const char *id, struct webhooks_row *);
/* Insert one; the secret is sealed. */
int	 webhooks_insert_or_reply(struct req *, const char *client_id, const char *environment,
	    const char *url, struct json_object *events, int enabled, const char *secret,
	    struct webhooks_row *row);
/* Change any of url, events (NULL: keep) and enabled (-1: keep). */
int	 webhooks_update_or_reply(struct req *, const char *client_id, const char *environment,
	    const char *id, const char *url, struct json_object *events, int enabled,
	    struct webhooks_row *);
/* Delete one and emit WEBHOOKS_DELETED_EVENT (an activity event: recorded
 * with no delivery). */
int	 webhooks_delete_or_reply(struct req *, const char *client_id, const char *environment,
	    const char *id);
/* New signing secret (*secret, arena); the old one stays valid for hours
 * (0: not at all) as the previous secret. */
int	 webhooks_rotate_or_reply(struct req *, const char *client_id, const char *environment,
	    const char *id, int hours, struct webhooks_row *, const char **secret);

/* Subscriptions of a client (environment NULL: all) as a JSON array in
 * creation order; NULL on a database failure. */
struct json_object *webhooks_list_json(struct req *, const char *client_id,
	    const char *environment, int iam);
/* The environment's primary subscription: the oldest enabled one. 1 found,
 * 0 none (PUT then creates one), -1 db. */
int	 webhooks_primary(struct req *, const char *client_id, const char *environment,
	    struct webhooks_row *);

/*
 * POST a signed test event of event_type (validated) to subscription id of
 * client, now, within a delivery's WEBHOOKS_TIMEOUT_MS (the spec's 10 s,
 * connect included; the test slots bound the workers it holds), and answer 200 {success,
 * status_code, delivery_id, event_id, message}; 404 WEBHOOK_NOT_FOUND; 400
 * when event_type is not in the subscription; 429 with Retry-After when
 * the developer already has a test running (WEBHOOK_TEST_IN_PROGRESS) or
 * this host's test slots are all taken (WEBHOOK_TESTS_BUSY).
 */
int	 webhooks_test_deliver(struct req *, struct json_object *out,
	    const char *client_id, const char *id, const char *event_type);

/* ---- the inbox (webhooks_inbox.c) ---- */

/*
 * A subscription whose URL starts with WEBHOOKS_INBOX_SCHEME is an inbox:
 * bds-deliver signs its deliveries as for any endpoint and writes the
 * exact body and headers into webhook_inbox instead of posting them; a
 * stored delivery is acknowledged (succeeded). Only the service makes
 * one: a client's URL must be http or https.
 */
#define WEBHOOKS_INBOX_SCHEME		"bds-inbox:"
#define WEBHOOKS_INBOX_LIMIT_DEFAULT	25
#define WEBHOOKS_INBOX_LIMIT_MAX	100

struct db;
struct events_wire;
/* 1 when url names an inbox. */
int	 webhooks_inbox_url(const char *url);
/* bds-deliver: keep delivery_id of subscription webhook_id, ev signed as
 * signature over body, in the inbox. 0, or -1 on a database failure. */
int	 webhooks_inbox_store(struct db *, struct arena *, const struct events_wire *ev,
	    const char *delivery_id, const char *webhook_id, const char *body,
	    const char *signature);
/* An inbox subscription of client_id's sandbox environment to every event
 * ("*"), its URL WEBHOOKS_INBOX_SCHEME + name: 0 with *row and *secret (the
 * signing secret, arena), else the error status written. */
int	 webhooks_inbox_create(struct req *, const char *client_id, const char *name,
	    struct webhooks_row *row, const char **secret);
/* A page of the inbox of webhook_id (newest first) into out: {object
 * "list", data [{delivery_id, event_id, event_type, received_at, headers,
 * body}], has_more, next_cursor}; 200, or the 400 INVALID_CURSOR / 503. */
int	 webhooks_inbox_list(struct req *, struct json_object *out, const char *client_id,
	    const char *webhook_id);
/* The deliveries any endpoint of client_id acknowledged in env: how many,
 * their event types (a sorted JSON array, arena) and the first and last
 * (ISO 8601, NULL when none). 0, or -1 on a database failure. */
struct webhooks_acks {
	long long		 count;
	struct json_object	*types;
	const char		*first_at, *last_at;
};
int	 webhooks_acknowledged(struct req *, const char *client_id, const char *env,
	    struct webhooks_acks *);
extern const struct db_stmt_set webhooks_inbox_stmt_set;

/* The module's settings (config keys of the same names). */
struct webhooks_settings {
	char	*webhook_retry_schedule;	/* seconds after attempt 1, 2...: "5,300,..." */
	int	 webhook_concurrency;	/* bds-deliver: requests in flight at once */
	int	 webhook_batch;		/* deliveries per claim */
	int	 webhook_lease;		/* seconds a claim holds its rows */
	int	 webhook_test_slots;	/* test deliveries at once per API host;
					 * 0: workers / 4, at least 1 */
};

/* The module (webhooks_module.c) and its settings block (core/config.h). */
extern const struct module webhooks_module;
static inline const struct webhooks_settings *
webhooks_settings(const struct config *c)
{
	return config_module(c, &webhooks_module);
}

/* The usage metric computed from its rows (core/module.h; webhooks_usage.c). */
extern const struct db_stmt_set webhooks_usage_stmt_set;
extern const struct module_usage webhooks_usage[];

#endif
