/*
 * /v1/webhook-endpoints: a client's own servers manage its webhook
 * subscriptions with an API key. Everything is scoped to the credential's
 * client and environment: another client's (or environment's) endpoint is
 * 404. Shapes follow what a Stripe user expects: the endpoint object with
 * "object": "webhook_endpoint", lists as {object: "list", data, has_more},
 * PATCH for a partial update, DELETE answering {id, object, deleted}.
 */
#include <string.h>

#include "core/arena.h"
#include "core/cursor.h"
#include "core/errors.h"
#include "core/json.h"
#include "core/req.h"
#include "core/validate.h"
#include "webhooks/webhooks_sign.h"
#include "webhooks/webhooks.h"

#define EVENTS_FIELD(flags) { "events", NULL, VT_ARRAY, flags, 1, WEBHOOKS_EVENTS_MAX, \
	.items = VT_STRING, .check = events_type_item_check }
#define URL_FIELD(flags) { "url", NULL, VT_STRING, flags, 1, 2048 }

const struct vfield webhooks_endpoints_create_fields[] = {
	URL_FIELD(V_REQUIRED),
	EVENTS_FIELD(V_REQUIRED),
	{ "secret", NULL, VT_STRING, 0, WEBHOOKS_SECRET_MIN, WEBHOOKS_SECRET_MAX,
	  .format = VF_PRINTABLE },
	{ "enabled", NULL, VT_BOOL },
	{ NULL }
};
const struct vfield webhooks_endpoints_update_fields[] = {
	URL_FIELD(0),
	EVENTS_FIELD(0),
	{ "enabled", NULL, VT_BOOL },
	{ NULL }
};
const struct vfield webhooks_endpoints_rotate_fields[] = {
	{ "expires_in_hours", NULL, VT_INT, 0, 0, WEBHOOKS_ROTATE_HOURS_MAX },
	{ NULL }
};

/* At most WEBHOOKS_PER_ENVIRONMENT: one page holds them all, no cursor. */
static const struct cursor_list endpoints_page = {
	.name = "webhook_endpoints", .shape = CURSOR_OBJECT_LIST, .key = "data",
};

int
webhooks_endpoints_list(struct req *r, struct json_object *out)
{
	struct cursor_page pg = { .list = &endpoints_page };

	if ((pg.items = webhooks_list_json(r, r->client_id, r->env, 0)) == NULL)
		return api_db_error(r);
	return cursor_page_reply(r, out, &pg, NULL);
}

/* ROUTE_ONCE: the Idempotency-Key (scoped to the key's client and
 * environment) is not replayable. */
int
webhooks_endpoints_create(struct req *r, struct json_object *out)
{
	const char *secret;
	struct webhooks_row w;
	int rc;

	if ((rc = webhooks_create(r, NULL, r->client_id, r->env, &w, &secret)) != 0)
		return rc;
	json_merge(out, webhooks_json(r, &w, 0, secret));
	return 201;
}

int
webhooks_endpoints_get(struct req *r, struct json_object *out)
{
	struct webhooks_row w;
	int rc;

	if ((rc = webhooks_get_or_reply(r, r->client_id, r->env, req_cap(r, "id"), &w)) != 0)
		return rc;
	json_merge(out, webhooks_json(r, &w, 0, NULL));
	return 200;
}

int
webhooks_endpoints_update(struct req *r, struct json_object *out)
{
	const char *id = req_cap(r, "id"), *url = json_get_str(r->body, "url");
	struct json_object *events = NULL;
	struct webhooks_row w;
	int rc, enabled;

	if (json_object_object_get_ex(r->body, "events", &events))
		events = events_types_unique(r->arena, events);
	enabled = json_object_object_get_ex(r->body, "enabled", NULL) ?
	    json_get_bool(r->body, "enabled", 1) : -1;
	if (url == NULL && events == NULL && enabled < 0)
		return api_field_error(r, 400, ERR_VALIDATION_ERROR, "", "required",
		    "send any of url, events, enabled");
	if (url != NULL && (rc = webhooks_url_check(r, "url", url, r->env)) != 0)
		return rc;
	if ((rc = webhooks_update_or_reply(r, r->client_id, r->env, id, url, events, enabled,
	    &w)) != 0)
		return rc;
	json_merge(out, webhooks_json(r, &w, 0, NULL));
	return 200;
}

int
webhooks_endpoints_delete(struct req *r, struct json_object *out)
{
	const char *id = req_cap(r, "id");
	int rc;

	if ((rc = webhooks_delete_or_reply(r, r->client_id, r->env, id)) != 0)
		return rc;
	json_set_str(out, "id", id);
	json_set_str(out, "object", "webhook_endpoint");
	json_set_bool(out, "deleted", 1);
	return 200;
}

/*
 * A new signing secret, shown once; the old one keeps signing (a second v1)
 * until previous_secret_expires_at (expires_in_hours, default 24; 0 ends it
 * now). ROUTE_ONCE: an Idempotency-Key is optional; with one, a retry is
 * 409 IDEMPOTENCY_KEY_NOT_REPLAYABLE and rotates nothing.
 */
int
webhooks_endpoints_rotate(struct req *r, struct json_object *out)
{
	int hours = (int)json_get_int(r->body, "expires_in_hours", WEBHOOKS_ROTATE_HOURS);
	const char *secret;
	struct webhooks_row w;
	int rc;

	if ((rc = webhooks_rotate_or_reply(r, r->client_id, r->env, req_cap(r, "id"), hours,
	    &w, &secret)) != 0)
		return rc;
	json_merge(out, webhooks_json(r, &w, 0, secret));
	return 200;
}
