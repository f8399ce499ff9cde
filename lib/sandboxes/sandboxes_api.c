/*
 * The /v1/sandboxes routes: create (no credential), the inbox (the
 * sandbox client's key), the claim (a developer's JWT) and the evaluation
 * proof (the key, or the owner's JWT).
 */
#include <string.h>

#include "core/arena.h"
#include "core/auth.h"
#include "core/config.h"
#include "core/crypto.h"
#include "core/cursor.h"
#include "core/errors.h"
#include "core/json.h"
#include "core/jwt.h"
#include "core/req.h"
#include "core/validate.h"
#include "iam/iam_clients.h"
#include "sandboxes/sandboxes.h"
#include "webhooks/webhooks.h"

const struct vfield sandboxes_create_fields[] = {
	{ "name", NULL, VT_STRING, 0, 1, SANDBOXES_NAME_MAX, .check = validate_name },
	{ NULL }
};

const struct vfield sandboxes_claim_fields[] = {
	/* any text: a wrong token is 403, never a 400 that tells its shape */
	{ "claim_token", NULL, VT_STRING, V_REQUIRED | V_OPAQUE, 0, 0 },
	{ NULL }
};

const struct vfield sandboxes_inbox_query[] = {
	CURSOR_LIMIT_FIELD(WEBHOOKS_INBOX_LIMIT_MAX),
	CURSOR_QUERY_FIELD,
	{ NULL }
};

static const char *
inbox_url(struct req *r, const char *id)
{
	return arena_printf(r->arena, "%s/v1/sandboxes/%s/inbox", r->cfg->sandbox_url, id);
}

/* What every answer about s shows. */
static void
sandbox_json(struct req *r, struct json_object *out, const struct sandboxes_row *s)
{
	json_set_str(out, "sandbox_id", s->id);
	json_set_str(out, "object", "sandbox");
	json_set_str(out, "name", s->name);
	json_set_str(out, "client_id", s->client_id);
	json_set_str(out, "inbox_url", inbox_url(r, s->id));
	json_set_str(out, "webhook_endpoint_id", s->webhook_id);
	json_set_bool(out, "claimed", s->claimed_at != NULL);
	json_set_str(out, "expires_at", s->expires_at);
	json_set_str(out, "created_at", s->created_at);
}

int
sandboxes_create(struct req *r, struct json_object *out)
{
	const char *name = json_get_str(r->body, "name"), *key, *secret, *token;
	struct sandboxes_row s;
	struct webhooks_row w;
	int rc;

	memset(&s, 0, sizeof(s));
	s.id = crypto_id_new(r->arena, SANDBOXES_PREFIX);
	s.name = name != NULL ? name : SANDBOXES_DEFAULT_NAME;
	if ((s.client_id = iam_clients_new_unowned(r, s.name)) == NULL ||
	    (key = iam_secrets_issue(r, s.client_id, "sandbox")) == NULL)
		return api_db_error(r);
	if ((rc = webhooks_inbox_create(r, s.client_id, s.id, &w, &secret)) != 0)
		return rc;
	s.webhook_id = w.id;
	token = auth_token_new(r->arena, SANDBOXES_CLAIM_PREFIX);
	if (sandboxes_store_insert(r, &s, auth_key_hash(r->arena, token)) != 0)
		return api_db_error(r);
	sandbox_json(r, out, &s);
	json_set_str(out, "api_key", key);
	json_set_str(out, "claim_token", token);
	json_set_str(out, "webhook_secret", secret);
	return 201;
}

int
sandboxes_inbox(struct req *r, struct json_object *out)
{
	struct sandboxes_row s;
	int rc;

	if ((rc = sandboxes_get_or_reply(r, req_cap(r, "sandbox_id"), 0, &s)) != 0)
		return rc;
	return webhooks_inbox_list(r, out, s.client_id, s.webhook_id);
}

/* The claim token against the stored hash, in constant time. */
static int
token_matches(struct req *r, const struct sandboxes_row *s, const char *token)
{
	const char *h = auth_key_hash(r->arena, token);

	return s->claim_sha256 != NULL && strlen(s->claim_sha256) == strlen(h) &&
	    crypto_ct_equal(h, s->claim_sha256, strlen(h));
}

int
sandboxes_claim(struct req *r, struct json_object *out)
{
	const char *id = req_cap(r, "sandbox_id"), *key, *until;
	struct sandboxes_row s;
	int rc;

	if (!crypto_id_valid(id, SANDBOXES_PREFIX, 0))
		return api_error(r, 404, ERR_SANDBOX_NOT_FOUND, NULL, "no sandbox %s", id);
	if ((rc = sandboxes_store_get(r, id, 1, &s)) < 0)
		return api_db_error(r);
	if (rc == 0 || s.expired)
		return api_error(r, 404, ERR_SANDBOX_NOT_FOUND, NULL, "no sandbox %s", id);
	/* the token first: only its holder learns whether it was claimed */
	if (!token_matches(r, &s, json_get_str(r->body, "claim_token")))
		return api_error(r, 403, ERR_INVALID_CLAIM_TOKEN, NULL,
		    "claim_token is not the token of sandbox %s", id);
	if (s.claimed_at != NULL)
		return api_error(r, 409, ERR_SANDBOX_ALREADY_CLAIMED, NULL,
		    "sandbox %s was claimed at %s", id, s.claimed_at);
	if ((rc = iam_clients_adopt(r, s.client_id, r->user_id)) < 0)
		return api_db_error(r);
	if (rc == 2)
		return iam_clients_limit_reply(r);
	if (rc == 0 || (rc = sandboxes_store_claim(r, id, r->user_id, &s)) == 0)
		return api_error(r, 409, ERR_SANDBOX_ALREADY_CLAIMED, NULL,
		    "sandbox %s was claimed already", id);
	if (rc < 0 || (key = iam_secrets_replace(r, s.client_id, "sandbox",
	    sandboxes_settings(r->cfg)->sandboxes_previous_key_ttl, &until)) == NULL ||
	    sandboxes_claimed_emit(r, &s, until) == NULL)
		return api_db_error(r);
	json_set_str(out, "sandbox_id", s.id);
	json_set_str(out, "object", "sandbox_claim");
	json_set_str(out, "client_id", s.client_id);
	json_set_str(out, "claimed_at", s.claimed_at);
	json_set_str(out, "api_key", key);
	json_set_str(out, "previous_key_expires_at", until);
	return 200;
}

int
sandboxes_proof(struct req *r, struct json_object *out)
{
	const struct jwt_key *k = auth_jwt_key(r->cfg);
	struct json_object *claims;
	struct sandboxes_row s;
	int rc;

	if ((rc = sandboxes_get_or_reply(r, req_cap(r, "sandbox_id"), 1, &s)) != 0)
		return rc;
	if (k == NULL)
		return api_error(r, 500, ERR_INTERNAL_ERROR, NULL, "internal error");
	if ((claims = sandboxes_claims(r, &s)) == NULL)
		return api_db_error(r);
	json_set_str(out, "sandbox_id", s.id);
	json_set_str(out, "object", "evaluation_proof");
	json_set_str(out, "kid", k->kid);
	json_set_str(out, "proof", jwt_sign(r->arena, k, claims));
	json_set(out, "claims", json_object_get(claims));
	return 200;
}
