/*
 * events_emit(): the transactional outbox. The event row and one delivery
 * row per matching enabled subscription of (client, environment) are
 * written by one statement inside the caller's transaction, so a rolled-
 * back change emits nothing and a committed one always has its event.
 * bds-deliver claims the deliveries; the activity feed (lib/activity.c)
 * reads both back.
 */
#include <stdlib.h>
#include <string.h>

#include "core/arena.h"
#include "core/config.h"
#include "core/crypto.h"
#include "core/db.h"
#include "events/events.h"
#include "core/json.h"
#include "core/req.h"

enum {
	EV_EMIT,	/* the event and its deliveries */
	EV_RECORD,	/* the event alone: a type nothing can subscribe to */
	EV__MAX
};

#define EV_INSERT \
	"INSERT INTO events (client_id, id, environment, type, data, request_id," \
	" idempotency_key, api_version) VALUES ($1, $2, $3, $4, $5::jsonb, $6, $7, $8)"

static struct db_stmt stmts[EV__MAX] = {
	/* The deliveries reference the event inserted by the CTE: foreign
	 * keys are checked at the end of the statement, when it exists. */
	[EV_EMIT] = { "events_emit",
	    "WITH e AS (" EV_INSERT " RETURNING client_id, id, environment, type),"
	    " d AS (INSERT INTO deliveries (client_id, id, event_id, webhook_id)"
	    "  SELECT w.client_id, " EVENTS_DELIVERY_ID_SQL ", e.id, w.id"
	    "  FROM e JOIN webhooks w ON w.client_id = e.client_id"
	    "   AND w.environment = e.environment"
	    "  WHERE w.enabled AND (w.events ? e.type OR w.events ? '*' OR w.events ? 'all')"
	    "  ORDER BY w.created_at, w.id RETURNING 1)"
	    " SELECT count(*) FROM d" },
	[EV_RECORD] = { "events_record", EV_INSERT },
};
const struct db_stmt_set events_stmt_set = { "events", stmts, EV__MAX };

/* "bill" -> 1: a name fit to make "<object>_id" from. */
static int
object_name_ok(const char *s)
{
	size_t i;

	for (i = 0; s[i] != '\0'; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || s[i] == '_'))
			return 0;
	return i > 0 && i <= 64;
}

/*
 * The envelope's data member for object (copied): {object, plus the flat
 * envelope's resource ids}. Owned by the arena.
 */
static struct json_object *
events_data(struct arena *a, struct json_object *object)
{
	struct json_object *data = json_obj(a), *copy = NULL, *v;
	const char *kind, *id;

	if (object != NULL && json_object_deep_copy(object, &copy, NULL) != 0)
		copy = NULL;
	if (copy == NULL || !json_object_is_type(copy, json_type_object)) {
		json_object_put(copy);
		copy = json_object_new_object();
	}
	/* The flat envelope's resource ids: every "*_id" member of the
	 * object (string or null), then "<object>_id" from its id. */
	json_object_object_foreach(copy, key, val) {
		size_t n = strlen(key);

		if (n > 3 && strcmp(key + n - 3, "_id") == 0 &&
		    (val == NULL || json_object_is_type(val, json_type_string)))
			json_set(data, key, json_object_get(val));
	}
	if (json_object_object_get_ex(copy, "object", &v) &&
	    json_object_is_type(v, json_type_string) &&
	    object_name_ok(kind = json_object_get_string(v)) &&
	    (id = json_get_str(copy, "id")) != NULL)
		json_set_str(data, arena_printf(a, "%s_id", kind), id);
	json_set(data, "object", copy);
	return data;
}

const char *
events_emit(struct req *r, const char *client_id, const char *environment,
    const char *type, struct json_object *data_object, int *deliveries)
{
	const char *stored = events_type(type);
	const char *id = crypto_id_new(r->arena, "evt");
	const char *p[8] = { client_id, id, environment, stored != NULL ? stored : type,
	    json_dump(r->arena, events_data(r->arena, data_object), NULL),
	    r->http.request_id, r->http.idempotency_key, r->cfg->api_version };
	PGresult *res;

	if (deliveries != NULL)
		*deliveries = 0;
	/* Subscriptions name deliverable types (and "*"), and belong to one
	 * environment: anything else has no delivery to queue. */
	if (stored == NULL || environment == NULL)
		return db_query(r, &stmts[EV_RECORD], 8, p) != NULL ? id : NULL;
	if ((res = db_query(r, &stmts[EV_EMIT], 8, p)) == NULL || PQntuples(res) != 1)
		return NULL;
	if (deliveries != NULL)
		*deliveries = (int)strtol(PQgetvalue(res, 0, 0), NULL, 10);
	return id;
}
