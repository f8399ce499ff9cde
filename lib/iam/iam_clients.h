#ifndef BDS_IAM_CLIENTS_H
#define BDS_IAM_CLIENTS_H
/*
 * Clients and their credentials (SPEC.md "Client", "Client secret"): the
 * /v1/iam/clients routes (iam_clients.c), the client secrets under them
 * and GET /v1/identity (iam_secrets.c). A developer sees only their own
 * clients: another developer's client id is 404, exactly like an unknown
 * one.
 */
#include "core/validate.h"

struct req;
struct json_object;
struct db_stmt_set;

/* ---- handlers (lib/routes.c) ---- */

/* GET /v1/iam/clients: 200 {success, clients} of the developer, newest first. */
int	 iam_clients_list(struct req *, struct json_object *out);
/* POST /v1/iam/clients (ROUTE_TX): 201 {success, message, client}; 409
 * CLIENT_LIMIT_REACHED past the clients_max setting. */
int	 iam_clients_create(struct req *, struct json_object *out);
/* GET /v1/iam/clients/{id}: 200 {success, client}; 404 CLIENT_NOT_FOUND. */
int	 iam_clients_get(struct req *, struct json_object *out);
/* PUT /v1/iam/clients/{id}: any of name, description, redirectUris,
 * allowedOrigins; 200 {success, message, client}; 404. */
int	 iam_clients_update(struct req *, struct json_object *out);
/* DELETE /v1/iam/clients/{id}: removes the client and (cascade) its
 * secrets and webhooks; its keys stop at once. 200; 404. */
int	 iam_clients_delete(struct req *, struct json_object *out);
/* GET /v1/iam/clients/{id}/embed-origins (no auth): always 200
 * {allowed_embed_origins, pci_approved}; empty and false on any failure. */
int	 iam_clients_embed_origins(struct req *, struct json_object *out);

/* POST .../client-secrets (Idempotency-Key): 201 with the key, once. */
int	 iam_secrets_create(struct req *, struct json_object *out);
/* GET .../client-secrets: 200 {success, secrets} (metadata only). */
int	 iam_secrets_list(struct req *, struct json_object *out);
/* GET .../client-secrets/{environment}: 200 {success, secret}; 404. */
int	 iam_secrets_get(struct req *, struct json_object *out);
/* DELETE .../client-secrets/{environment}: revoke; 200; 404. */
int	 iam_secrets_revoke(struct req *, struct json_object *out);
/* POST .../client-secrets/{environment}/rotate (Idempotency-Key): 200 with
 * the new key, once; 409 CLIENT_SECRET_ROTATION_CONFLICT. */
int	 iam_secrets_rotate(struct req *, struct json_object *out);
/* GET /v1/identity (key): the credential's client, environment and the
 * owning developer's e-mail and live-access state. */
int	 iam_secrets_identity(struct req *, struct json_object *out);

/* ---- body specs ---- */
extern const struct vfield iam_clients_create_fields[], iam_clients_update_fields[],
	iam_secrets_create_fields[], iam_secrets_rotate_fields[];

extern const struct db_stmt_set iam_clients_stmt_set, iam_secrets_stmt_set;

/* ---- shared with the other client modules ---- */

/* 1 when client_id names a client of user_id, 0 when not (unknown or
 * another developer's), -1 on a database failure. */
int	 iam_clients_owned(struct req *, const char *client_id, const char *user_id);
/* 0 when client_id names a client of the signed-in developer, else the
 * status already written: 404 CLIENT_NOT_FOUND (unknown or another
 * developer's, alike) or a database error. */
int	 iam_clients_own_or_reply(struct req *, const char *client_id);
/* 409 CLIENT_LIMIT_REACHED (the developer has clients_max clients): its status. */
int	 iam_clients_limit_reply(struct req *);

/* ---- anonymous sandboxes (lib/sandboxes/) ---- */

/*
 * Inside the caller's transaction. A client of no developer (user_id
 * NULL: no developer's check ever matches it) named name: its id (arena),
 * or NULL on a database failure.
 */
const char *iam_clients_new_unowned(struct req *, const char *name);
/* Give the unowned client_id to user_id: 1 done, 0 when it has a developer
 * already (or is gone), 2 when user_id has clients_max clients (nothing
 * done), -1 on a database failure. */
int	 iam_clients_adopt(struct req *, const char *client_id, const char *user_id);
/* Delete the unowned client_id and everything its rows cascade to: 1
 * deleted, 0 none (owned or gone), -1 on a database failure. */
int	 iam_clients_remove_unowned(struct req *, const char *client_id);
/* A live key of env for client_id, which has none (arena; shown once by
 * the caller); NULL when it has one or on a database failure. */
const char *iam_secrets_issue(struct req *, const char *client_id, const char *env);
/*
 * Replace client_id's live env key by a new one (returned, arena); the old
 * one is revoked but still authenticates for grace_s seconds, until
 * *grace_until (ISO 8601, arena). NULL when there was no live key, or on a
 * database failure.
 */
const char *iam_secrets_replace(struct req *, const char *client_id, const char *env,
	    int grace_s, const char **grace_until);

#endif
