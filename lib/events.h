#ifndef BDS_EVENTS_H
#define BDS_EVENTS_H
/*
 * Events: written in the same transaction as the change that causes them
 * (no event for a rolled-back change, no change without its event), with
 * one delivery row per matching enabled subscription of the client and
 * environment ("*" and "all" match every type). bds-deliver sends them.
 */
struct req;
struct json_object;
struct db_stmt_set;

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
 * round trip per subscription): "dlv_" + a UUIDv7 (48-bit unix ms from
 * clock_timestamp(), version 7, the rest from gen_random_uuid(), whose
 * variant bits are kept), so delivery ids are time-ordered like every id.
 */
#define EVENTS_DELIVERY_ID_SQL \
	"('dlv_' || (lpad(to_hex(floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint)," \
	" 12, '0') || '7' || substr(replace(gen_random_uuid()::text, '-', ''), 14))::uuid::text)"

extern const struct db_stmt_set events_stmt_set;

#endif
