/*
 * The one catalogue of event types (SPEC "Events", with the historic names
 * mapped) and the wire envelope every delivery and the activity feed use.
 */
#include <stdint.h>
#include <string.h>
#include <time.h>

#include <json-c/json.h>

#include "core/arena.h"
#include "core/clock.h"
#include "core/json.h"
#include "events/events.h"

/* ------------------------------------------------------------------ */
/* Event types                                                         */

/* SPEC "Events": the subscribable names, then the further delivered types. */
static const char *const event_types[] = {
	"bill.created", "bill.updated", "bill.deleted", "link.completed",
	"connection.ready", "link.disconnected", "link_request.created",
	"link_request.updated", "link_request.cancelled", "payment.observed",
	"biller.unsupported", "customer.message.created", "customer.message.complaint",
	"bill_import.updated", "link_token.completed", "link.session_finished",
	"link.failure_reason_corrected", "pay.scheduled", "pay.succeeded", "pay.failed",
	"pay.escalated", "insight.created", "insight.updated", "sandbox.claimed",
	"sandbox.expiring",
};

/* The spec's table of historic names, accepted and stored as the new one. */
static const struct {
	const char	*historic;
	const char	*type;
} historic_types[] = {
	{ "bill.paid", "bill.updated" },
	{ "link.expired", "link.disconnected" },
	{ "request-to-link.updated", "link_request.updated" },
};

static int
is_wildcard(const char *s)
{
	return strcmp(s, "*") == 0 || strcmp(s, "all") == 0;
}

const char *
events_type(const char *name)
{
	size_t i;

	if (name == NULL)
		return NULL;
	for (i = 0; i < sizeof(event_types) / sizeof(event_types[0]); i++)
		if (strcmp(name, event_types[i]) == 0)
			return event_types[i];
	for (i = 0; i < sizeof(historic_types) / sizeof(historic_types[0]); i++)
		if (strcmp(name, historic_types[i].historic) == 0)
			return historic_types[i].type;
	return NULL;
}

/* Replace *v by the stored name when it differs. */
static int
event_normalise(struct arena *a, struct json_object **v, int wildcard_ok,
    const char **code, const char **msg)
{
	const char *s = json_object_get_string(*v), *type;

	if (wildcard_ok && is_wildcard(s))
		return 0;
	if ((type = events_type(s)) == NULL) {
		*code = "unknown_event_type";
		*msg = wildcard_ok ? "is not a deliverable event type, \"*\" or \"all\"" :
		    "is not a deliverable event type";
		return -1;
	}
	if (strcmp(type, s) != 0)
		*v = json_own(a, json_object_new_string(type));
	return 0;
}

int
events_type_item_check(struct arena *a, struct json_object **v, const char **code,
    const char **msg)
{
	return event_normalise(a, v, 1, code, msg);
}

int
events_type_check(struct arena *a, struct json_object **v, const char **code,
    const char **msg)
{
	return event_normalise(a, v, 0, code, msg);
}

struct json_object *
events_types_unique(struct arena *a, struct json_object *events)
{
	struct json_object *out = json_arr(a);
	size_t n = events != NULL ? json_object_array_length(events) : 0;

	for (size_t i = 0; i < n; i++) {
		const char *s = json_object_get_string(json_object_array_get_idx(events, i));
		size_t j, m = json_object_array_length(out);

		for (j = 0; j < m; j++)
			if (strcmp(s, json_object_get_string(json_object_array_get_idx(out, j))) == 0)
				break;
		if (j == m)
			json_object_array_add(out, json_object_new_string(s));
	}
	return out;
}

int
events_types_match(struct json_object *events, const char *type)
{
	size_t n = events != NULL && json_object_is_type(events, json_type_array) ?
	    json_object_array_length(events) : 0;

	for (size_t i = 0; i < n; i++) {
		const char *s = json_object_get_string(json_object_array_get_idx(events, i));

		if (s != NULL && (is_wildcard(s) || strcmp(s, type) == 0))
			return 1;
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* The envelope                                                        */

int64_t
events_created(const struct events_wire *ev)
{
	int64_t s = ev->created_ms / 1000;

	return ev->created_ms % 1000 < 0 ? s - 1 : s;
}

struct json_object *
events_envelope(struct arena *a, const struct events_wire *ev)
{
	struct json_object *o = json_obj(a), *req = json_object_new_object();
	struct json_object *v;
	char iso[TIME_ISO_SIZE];

	json_set_str(o, "id", ev->id);
	json_set_str(o, "object", "event");
	json_set_str(o, "type", ev->type);
	json_set_str(o, "event_type", ev->type);
	json_set_str(o, "event_id", ev->id);
	json_set_str(o, "api_version", ev->api_version);
	json_set_int(o, "created", events_created(ev));
	json_set_str(o, "timestamp", time_iso(iso, ev->created_ms));
	json_set_str(o, "client_id", ev->client_id);
	json_set_str(o, "mode", ev->mode);
	json_set_str(o, "producer_service", ev->producer_service);
	json_set_str(o, "correlation_id", ev->correlation_id);
	json_set_str(req, "id", ev->request_id);
	json_set_str(req, "idempotency_key", ev->idempotency_key);
	json_set(o, "request", req);
	json_set(o, "data", ev->data != NULL ? json_object_get(ev->data) :
	    json_object_new_object());
	/* data.object read back from jsonb has its keys sorted */
	if (ev->data != NULL && json_object_object_get_ex(ev->data, "object", &v)) {
		struct json_object *n = json_entity_order(v);

		if (n != v)
			json_set(ev->data, "object", n);
		else
			json_object_put(n);
	}
	return o;
}
