/*
 * /v1/iam/clients/{clientId}/webhooks and .../client-secrets/{environment}/webhook:
 * a signed-in developer's webhook subscriptions for the clients they own.
 * Another developer's client or webhook is 404, never 403.
 */
#include <string.h>

#include "core/arena.h"
#include "iam/iam_clients.h"
#include "core/env.h"
#include "core/errors.h"
#include "core/json.h"
#include "core/req.h"
#include "core/validate.h"
#include "webhooks/webhooks_sign.h"
#include "webhooks/webhooks.h"

#define EVENTS_FIELD(flags) { "events", NULL, VT_ARRAY, flags, 1, WEBHOOKS_EVENTS_MAX, \
	.items = VT_STRING, .check = events_type_item_check }
#define URL_FIELD(flags) { "url", NULL, VT_STRING, flags, 1, 2048 }

const struct vfield webhooks_iam_create_fields[] = {
	{ "environment", NULL, VT_STRING, V_REQUIRED, .enumv = env_names },
	URL_FIELD(V_REQUIRED),
	EVENTS_FIELD(V_REQUIRED),
	{ "secret", NULL, VT_STRING, 0, WEBHOOKS_SECRET_MIN, WEBHOOKS_SECRET_MAX,
	  .format = VF_PRINTABLE },
	{ NULL }
};
/* UpdateWebhookDto: any of url, events, enabled. */
const struct vfield webhooks_iam_put_fields[] = {
	URL_FIELD(0),
	EVENTS_FIELD(0),
	{ "enabled", NULL, VT_BOOL },
	{ NULL }
};
const struct vfield webhooks_iam_test_fields[] = {
	{ "event_type", "eventType", VT_STRING, V_REQUIRED, 1, 64,
	  .check = events_type_check },
	{ NULL }
};

/* The {clientId} of the path when r's developer owns it: 0, else the 404
 * (or database error) written. */
static int
owned_client_or_reply(struct req *r, const char **client_id)
{
	int rc;

	*client_id = req_cap(r, "clientId");
	if ((rc = iam_clients_owned(r, *client_id, r->user_id)) < 0)
		return api_db_error(r);
	if (rc == 0)
		return api_error(r, 404, ERR_CLIENT_NOT_FOUND, NULL, "no client %s", *client_id);
	return 0;
}

static int
answer(struct req *r, struct json_object *out, const char *message,
    const struct webhooks_row *w, const char *secret, int status)
{
	json_set_bool(out, "success", 1);
	json_set_str(out, "message", message);
	json_set(out, "webhook", json_object_get(webhooks_json(r, w, 1, secret)));
	return status;
}

/* ROUTE_ONCE: the Idempotency-Key (scoped by the dispatcher to the
 * developer and this client's path) is not replayable. */
int
webhooks_iam_create(struct req *r, struct json_object *out)
{
	const char *secret;
	struct webhooks_row w;
	int rc;

	if ((rc = webhooks_create(r, r->user_id, req_cap(r, "clientId"),
	    json_get_str(r->body, "environment"), &w, &secret)) != 0)
		return rc;
	return answer(r, out, "webhook registered; the secret is shown only now", &w, secret, 201);
}

int
webhooks_iam_list(struct req *r, struct json_object *out)
{
	struct json_object *list;
	const char *cid;
	int rc;

	if ((rc = owned_client_or_reply(r, &cid)) != 0)
		return rc;
	if ((list = webhooks_list_json(r, cid, NULL, 1)) == NULL)
		return api_db_error(r);
	json_set_bool(out, "success", 1);
	json_set(out, "webhooks", json_object_get(list));
	return 200;
}

int
webhooks_iam_primary_get(struct req *r, struct json_object *out)
{
	struct webhooks_row w;
	const char *cid, *env;
	int rc = 0, found;

	if ((env = env_path_or_reply(r, &rc)) == NULL || (rc = owned_client_or_reply(r, &cid)) != 0)
		return rc;
	if ((found = webhooks_primary(r, cid, env, &w)) < 0)
		return api_db_error(r);
	if (found == 0)
		return api_error(r, 404, ERR_WEBHOOK_NOT_FOUND, "register one with PUT",
		    "no %s webhook for client %s", env, cid);
	json_set_bool(out, "success", 1);
	json_set(out, "webhook", json_object_get(webhooks_json(r, &w, 1, NULL)));
	return 200;
}

/*
 * The environment's primary webhook (ROUTE_TX): update it, or create it
 * when there is none (then url and events are required and the new secret
 * is shown once, 201). The client row lock makes concurrent PUTs create
 * one webhook.
 */
int
webhooks_iam_primary_put(struct req *r, struct json_object *out)
{
	const char *cid = req_cap(r, "clientId"), *env, *url = json_get_str(r->body, "url");
	const char *secret;
	struct json_object *events = NULL;
	struct verrs errs = { 0 };
	struct webhooks_row w;
	int rc = 0, found, enabled;

	if ((env = env_path_or_reply(r, &rc)) == NULL)
		return rc;
	if (json_object_object_get_ex(r->body, "events", &events))
		events = events_types_unique(r->arena, events);
	enabled = json_object_object_get_ex(r->body, "enabled", NULL) ?
	    json_get_bool(r->body, "enabled", 1) : -1;
	if (url != NULL && (rc = webhooks_url_check(r, "url", url, env)) != 0)
		return rc;
	if ((rc = webhooks_client_lock_or_reply(r, cid, r->user_id)) != 0)
		return rc;
	if ((found = webhooks_primary(r, cid, env, &w)) < 0)
		return api_db_error(r);
	if (found) {
		if (url == NULL && events == NULL && enabled < 0)
			return api_field_error(r, 400, ERR_VALIDATION_ERROR, "", "required",
			    "send any of url, events, enabled");
		if ((rc = webhooks_update_or_reply(r, cid, env, w.id, url, events, enabled,
		    &w)) != 0)
			return rc;
		return answer(r, out, "webhook updated", &w, NULL, 200);
	}
	if (url == NULL)
		verrs_add(r->arena, &errs, "url", "required",
		    "is required to create the %s webhook", env);
	if (events == NULL)
		verrs_add(r->arena, &errs, "events", "required",
		    "is required to create the %s webhook", env);
	if (errs.n > 0)
		return api_verror(r, &errs);
	secret = webhooks_secret_new(r->arena);
	if ((rc = webhooks_room_or_reply(r, cid, env)) != 0 ||
	    (rc = webhooks_insert_or_reply(r, cid, env, url, events, enabled != 0, secret,
	    &w)) != 0)
		return rc;
	return answer(r, out, "webhook registered; the secret is shown only now", &w, secret, 201);
}

int
webhooks_iam_delete(struct req *r, struct json_object *out)
{
	const char *cid = req_cap(r, "clientId"), *id = req_cap(r, "webhookId");
	int rc;

	if ((rc = webhooks_client_lock_or_reply(r, cid, r->user_id)) != 0 ||
	    (rc = webhooks_delete_or_reply(r, cid, NULL, id)) != 0)
		return rc;
	json_set_bool(out, "success", 1);
	json_set_str(out, "message", "webhook deleted");
	json_set_str(out, "webhook_id", id);
	return 200;
}

int
webhooks_iam_test(struct req *r, struct json_object *out)
{
	const char *cid;
	int rc;

	if ((rc = owned_client_or_reply(r, &cid)) != 0)
		return rc;
	return webhooks_test_deliver(r, out, cid, req_cap(r, "webhookId"),
	    json_get_str(r->body, "event_type"));
}
