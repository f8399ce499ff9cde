#ifndef BDS_ACTIVITY_H
#define BDS_ACTIVITY_H
/*
 * The activity feed over events and their deliveries (lib/events.c writes
 * them), scoped to the API key's client and environment: the list with
 * each event's delivery state, one event with its deliveries and attempt
 * logs, replay, and the sandbox trigger that emits a synthetic event.
 */
#include "core/validate.h"

struct req;
struct json_object;
struct db_stmt_set;

#define ACTIVITY_WINDOW_DAYS	30	/* longest replay window; also the retention */
#define ACTIVITY_REPLAY_MAX	10000	/* deliveries one replay may queue */
#define ACTIVITY_TRIGGER_DATA_MAX 65536	/* bytes of a trigger's body (its event data) */

/* GET /v1/activity: newest first, keyset cursor on (created_at, id);
 * core/cursor.h's page sizes. */
int	 activity_list(struct req *, struct json_object *out);
/* GET /v1/activity/{event_id}: the envelope, deliveries, attempt logs. */
int	 activity_get(struct req *, struct json_object *out);
/* POST /v1/activity/replay: 202 {queued}. */
int	 activity_replay(struct req *, struct json_object *out);
/* POST /v1/triggers/{event_type} (sandbox host, ROUTE_ANY_BODY, ROUTE_IDEM):
 * the body (at most ACTIVITY_TRIGGER_DATA_MAX bytes, else 413) becomes
 * data.object; 202 {event_id, type, deliveries}. */
int	 activity_trigger(struct req *, struct json_object *out);

extern const struct vfield activity_list_query[], activity_replay_fields[];
extern const struct db_stmt_set activity_stmt_set;

#endif
