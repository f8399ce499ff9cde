#ifndef BDS_EVENTS_H
#define BDS_EVENTS_H
/*
 * Events: written in the same transaction as the change that causes them
 * (no event for a rolled-back change, no change without its event), with
 * one delivery row per matching enabled subscription of the client and
 * environment ("*" and "all" match every type). bds-deliver sends them.
 */
#include <stdint.h>

struct req;
struct json_object;
struct db_stmt_set;
struct arena;

/*
 * Emit `type` for client_id in environment (NULL for internal paths) with
 * data_object as the envelope's data.object (not consumed; copied). Inside
 * the caller's transaction (db_begin done). The request's id and its
 * Idempotency-Key are recorded. Returns the event id (arena) and sets
 * *deliveries to the number of deliveries queued (may be NULL); NULL on
 * database failure.
 */
const char *events_emit(struct req *, const char *client_id, const char *environment,
	    const char *type, struct json_object *data_object, int *deliveries);

/*
 * A delivery id made by SQL, one per row of an INSERT ... SELECT (no
 * round trip per subscription): "dlv_" + a UUIDv7 whose 12 rand_a bits
 * hold the microseconds within the millisecond (sql/031), so deliveries
 * made one after another sort, and are claimed, in the order they were
 * made.
 */
#define EVENTS_DELIVERY_ID_SQL "bds_delivery_id()"

extern const struct db_stmt_set events_stmt_set;

/*
 * Retention: the days of events kept (SPEC: the feed keeps 30). A month's
 * partition goes only once all of it is past them, so every read of
 * events (alias e) keeps to the window itself.
 */
#define EVENTS_KEPT_DAYS "30"
#define EVENTS_KEPT_SQL "e.created_at >= now() - interval '" EVENTS_KEPT_DAYS " days'"

/* ---- event types (events_wire.c) ---- */

/*
 * The deliverable type name is stored as (the spec's historic names mapped:
 * bill.paid -> bill.updated, link.expired -> link.disconnected,
 * request-to-link.updated -> link_request.updated), a static string; NULL
 * for an unknown name and for "*" / "all", which are not types.
 */
const char *events_type(const char *name);
/* vcheck_fn for subscription items: a type (normalised), "*" or "all";
 * anything else fails with code unknown_event_type. */
int	 events_type_item_check(struct arena *, struct json_object **value,
	    const char **code, const char **message);
/* vcheck_fn for one event type (no wildcard), normalised. */
int	 events_type_check(struct arena *, struct json_object **value,
	    const char **code, const char **message);
/* The validated array without repeats, first occurrence kept (arena). */
struct json_object *events_types_unique(struct arena *, struct json_object *events);
/* 1 when a subscription's events array covers type ("*", "all" or type). */
int	 events_types_match(struct json_object *events, const char *type);

/* ---- the wire envelope (events_wire.c) ---- */

/*
 * One event as delivered. data is the envelope's data member ({object:
 * {id, object, ...}, plus flat ids such as bill_id}); the envelope takes a
 * reference. Strings may be NULL where the envelope allows null (mode,
 * correlation_id, request_id, idempotency_key).
 */
struct events_wire {
	const char	*id;		/* evt_... */
	const char	*type;		/* bill.updated */
	int64_t		 created_ms;	/* epoch milliseconds */
	const char	*client_id;
	const char	*mode;		/* sandbox, development, production, or NULL */
	const char	*api_version;	/* cfg->api_version */
	const char	*producer_service;
	const char	*correlation_id;
	const char	*request_id;
	const char	*idempotency_key;
	struct json_object *data;
};

/* The event's epoch seconds (created_ms rounded down): envelope "created". */
int64_t	 events_created(const struct events_wire *);

/*
 * The envelope (DESIGN "Webhook envelope"): both of the spec's envelopes in
 * one object: id = event_id, object "event", type = event_type,
 * api_version, created (epoch seconds) and timestamp (time_iso: to the
 * millisecond), client_id, mode,
 * producer_service, correlation_id, request {id, idempotency_key}, data
 * (its object's members put in entity order in place: id, object first).
 * Owned by the arena.
 */
struct json_object *events_envelope(struct arena *, const struct events_wire *);

#endif
