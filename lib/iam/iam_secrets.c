/*
 * Client secrets (API keys) under /v1/iam/clients/{id}/client-secrets, and
 * GET /v1/identity, which reports on the key that called it.
 *
 * One live secret per (client, environment). A key is shown once, when it
 * is created or rotated; only its SHA-256 and a short prefix are stored.
 * Create and rotate are ROUTE_ONCE: the dispatcher claims the required
 * Idempotency-Key and keeps no body, so a retry with the same key is 409
 * IDEMPOTENCY_KEY_NOT_REPLAYABLE.
 *
 * Rotation is one transaction (ROUTE_ONCE): lock the live row (FOR UPDATE NOWAIT),
 * revoke it, insert its successor. A rotation that finds the row locked, or
 * finds a successor younger than SECRETS_ROTATE_SETTLE seconds, lost a race
 * and answers 409 CLIENT_SECRET_ROTATION_CONFLICT with nothing changed.
 */
#include <string.h>

#include "core/arena.h"
#include "core/auth.h"
#include "iam/iam_clients.h"
#include "core/crypto.h"
#include "core/db.h"
#include "core/env.h"
#include "core/errors.h"
#include "core/json.h"
#include "core/req.h"
#include "core/validate.h"

#define SECRETS_ROTATE_SETTLE	5	/* seconds a rotated secret is not rotated again */
#define SECRETS_PREFIX_CHARS	4	/* random characters shown after bds_<env>_ */
#define SQLSTATE_LOCK_NOT_AVAILABLE "55P03"

#define SECRET_COLS "id, environment, key_prefix, " DB_ISO("created_at") ", rotated_from"

enum {
	S_NEW,
	S_LIST,
	S_GET,
	S_REVOKE,
	S_LOCK,
	S_RETIRE,
	S_USER,
	S_GRACE,
	S__MAX
};
static struct db_stmt stmts[S__MAX] = {
	/* The partial unique index keeps one live secret per environment. */
	[S_NEW] = { "iam_secrets_new",
	    "INSERT INTO client_secrets (id, client_id, environment, key_hash, key_prefix,"
	    " rotated_from) VALUES ($1, $2, $3, decode($4, 'hex'), $5, $6)"
	    " ON CONFLICT (client_id, environment) WHERE revoked_at IS NULL DO NOTHING"
	    " RETURNING " SECRET_COLS },
	[S_LIST] = { "iam_secrets_list",
	    "SELECT " SECRET_COLS " FROM client_secrets"
	    " WHERE client_id = $1 AND revoked_at IS NULL ORDER BY created_at DESC, id DESC" },
	[S_GET] = { "iam_secrets_get",
	    "SELECT " SECRET_COLS " FROM client_secrets"
	    " WHERE client_id = $1 AND environment = $2 AND revoked_at IS NULL" },
	[S_REVOKE] = { "iam_secrets_revoke",
	    "UPDATE client_secrets SET revoked_at = now()"
	    " WHERE client_id = $1 AND environment = $2 AND revoked_at IS NULL"
	    " RETURNING " SECRET_COLS ", " DB_ISO("revoked_at") },
	/* The fifth column: a successor too young to be rotated again. */
	[S_LOCK] = { "iam_secrets_lock",
	    "SELECT " SECRET_COLS ","
	    " rotated_from IS NOT NULL AND created_at > now() - make_interval(secs => $3::int)"
	    " FROM client_secrets"
	    " WHERE client_id = $1 AND environment = $2 AND revoked_at IS NULL"
	    " FOR UPDATE NOWAIT" },
	[S_RETIRE] = { "iam_secrets_retire",
	    "UPDATE client_secrets SET revoked_at = now() WHERE id = $1 AND revoked_at IS NULL" },
	[S_USER] = { "iam_secrets_user",
	    "SELECT email_verified, live_access FROM users WHERE id = $1" },
	/* A claimed sandbox's key: revoked, still found by the key lookup
	 * (core/auth.c) until grace_until. */
	[S_GRACE] = { "iam_secrets_grace",
	    "UPDATE client_secrets SET revoked_at = now(),"
	    " grace_until = now() + make_interval(secs => $3::int)"
	    " WHERE client_id = $1 AND environment = $2 AND revoked_at IS NULL"
	    " RETURNING id, " DB_ISO("grace_until") },
};
/* SECRET_COLS, and the extra column of iam_secrets_revoke / iam_secrets_lock */
enum secret_col { SC_ID, SC_ENV, SC_PREFIX, SC_CREATED_AT, SC_ROTATED_FROM,
	SC_EXTRA, SC__MAX };
#define SC_REVOKED_AT	SC_EXTRA
#define SC_TOO_YOUNG	SC_EXTRA
/* iam_secrets_user */
enum { SU_EMAIL_VERIFIED, SU_LIVE_ACCESS, SU__MAX };
/* iam_secrets_grace */
enum { SG_ID, SG_UNTIL, SG__MAX };
const struct db_stmt_set iam_secrets_stmt_set = { "iam_secrets", stmts, S__MAX };

const struct vfield iam_secrets_create_fields[] = {
	{ "environment", NULL, VT_STRING, V_REQUIRED, .enumv = env_names },
	{ NULL }
};
/* Rotation takes no body; declaring none refuses unknown members. */
const struct vfield iam_secrets_rotate_fields[] = { { NULL } };

/* ---- helpers ---- */

/* The {environment} of the path: 0 when valid, else the 400 written. */
static int
path_env(struct req *r, const char **env)
{
	int status = 0;

	return (*env = env_path_or_reply(r, &status)) != NULL ? 0 : status;
}

/* Development keys need a verified e-mail, production keys live access. */
static int
env_allowed(struct req *r, const char *env)
{
	const char *p[1] = { r->user_id };
	PGresult *res;

	if (strcmp(env, "sandbox") == 0)
		return 0;
	if ((res = db_query(r, &stmts[S_USER], 1, p)) == NULL)
		return api_db_error(r);
	if (PQntuples(res) != 1)
		return api_error(r, 401, ERR_UNAUTHORIZED, NULL, "the account no longer exists");
	if (strcmp(env, "development") == 0 && PQgetvalue(res, 0, SU_EMAIL_VERIFIED)[0] != 't')
		return api_error(r, 403, ERR_EMAIL_NOT_VERIFIED,
		    "verify your e-mail with POST /v1/iam/auth/email/request-verification",
		    "development secrets need a verified e-mail address");
	if (strcmp(env, "production") == 0 &&
	    strcmp(PQgetvalue(res, 0, SU_LIVE_ACCESS), "granted") != 0)
		return api_error(r, 403, ERR_LIVE_ACCESS_REQUIRED,
		    "request live access with POST /v1/iam/request-live-access",
		    "production secrets need live access");
	return 0;
}

/* One secret row (SECRET_COLS) as metadata: never the key or its hash. */
static struct json_object *
secret_json(const char *client_id, PGresult *res, int row)
{
	struct json_object *o = json_object_new_object();

	json_set_str(o, "id", PQgetvalue(res, row, SC_ID));
	json_set_str(o, "clientId", client_id);
	json_set_str(o, "environment", PQgetvalue(res, row, SC_ENV));
	json_set_str(o, "prefix", PQgetvalue(res, row, SC_PREFIX));
	json_set_str(o, "createdAt", PQgetvalue(res, row, SC_CREATED_AT));
	if (!PQgetisnull(res, row, SC_ROTATED_FROM))
		json_set_str(o, "rotatedFrom", PQgetvalue(res, row, SC_ROTATED_FROM));
	return o;
}

static int
secret_not_found(struct req *r, const char *env)
{
	return api_error(r, 404, ERR_CLIENT_SECRET_NOT_FOUND,
	    "create one with POST /v1/iam/clients/{id}/client-secrets",
	    "no live %s secret for client %s", env, req_cap(r, "id"));
}

static int
rotation_conflict(struct req *r, const char *why)
{
	return api_error(r, 409, ERR_CLIENT_SECRET_ROTATION_CONFLICT,
	    "another rotation of this secret just happened; list the secrets and use the new one",
	    "the secret was not rotated: %s", why);
}

/*
 * Make a key for env of client_id, insert it (rotated_from: the secret it
 * replaces, or NULL) and put {id, clientId, environment, secret, prefix,
 * createdAt} in out. Inside the caller's transaction; 1 inserted, 0 when a
 * live secret for env exists, -1 on a database failure.
 */
static int
secret_insert(struct req *r, const char *client_id, const char *env,
    const char *rotated_from, struct json_object *out)
{
	char *key = auth_key_new(r->arena, env);
	const char *p[6] = { crypto_id_new(r->arena, "sec"), client_id, env,
	    auth_key_hash(r->arena, key),
	    arena_strndup(r->arena, key, 4 + strlen(env) + 1 + SECRETS_PREFIX_CHARS),
	    rotated_from };
	struct json_object *s;
	PGresult *res;

	if ((res = db_query(r, &stmts[S_NEW], 6, p)) == NULL)
		return -1;
	if (PQntuples(res) != 1)
		return 0;
	s = secret_json(client_id, res, 0);
	json_set_str(s, "secret", key);
	json_set(out, "secret", s);
	return 1;
}

/* The key of a secret_insert's out (arena): shown once, by its caller. */
static const char *
inserted_key(struct json_object *out)
{
	struct json_object *s;

	return json_object_object_get_ex(out, "secret", &s) ? json_get_str(s, "secret") : NULL;
}

const char *
iam_secrets_issue(struct req *r, const char *client_id, const char *env)
{
	struct json_object *o = json_obj(r->arena);

	return secret_insert(r, client_id, env, NULL, o) == 1 ? inserted_key(o) : NULL;
}

const char *
iam_secrets_replace(struct req *r, const char *client_id, const char *env, int grace_s,
    const char **grace_until)
{
	const char *p[3] = { client_id, env, arena_printf(r->arena, "%d", grace_s) };
	struct json_object *o = json_obj(r->arena);
	PGresult *res;

	if ((res = db_query(r, &stmts[S_GRACE], 3, p)) == NULL || PQntuples(res) != 1)
		return NULL;
	*grace_until = arena_strdup(r->arena, PQgetvalue(res, 0, SG_UNTIL));
	return secret_insert(r, client_id, env, PQgetvalue(res, 0, SG_ID), o) == 1 ?
	    inserted_key(o) : NULL;
}

/* ---- handlers ---- */

int
iam_secrets_create(struct req *r, struct json_object *out)
{
	const char *env = json_get_str(r->body, "environment");
	int rc;

	if ((rc = iam_clients_own_or_reply(r, req_cap(r, "id"))) != 0 ||
	    (rc = env_allowed(r, env)) != 0)
		return rc;
	if ((rc = secret_insert(r, req_cap(r, "id"), env, NULL, out)) < 0)
		return api_db_error(r);
	if (rc == 0)
		return api_error(r, 409, ERR_CLIENT_SECRET_EXISTS,
		    "rotate it with POST .../client-secrets/{environment}/rotate, or revoke it first",
		    "client %s already has a live %s secret", req_cap(r, "id"), env);
	json_set_bool(out, "success", 1);
	json_set_str(out, "message", "secret created; it is shown only once");
	return 201;
}

int
iam_secrets_list(struct req *r, struct json_object *out)
{
	const char *p[1] = { req_cap(r, "id") };
	struct json_object *arr;
	PGresult *res;
	int rc;

	if ((rc = iam_clients_own_or_reply(r, p[0])) != 0)
		return rc;
	if ((res = db_query(r, &stmts[S_LIST], 1, p)) == NULL)
		return api_db_error(r);
	arr = json_object_new_array();
	for (int i = 0; i < PQntuples(res); i++)
		json_object_array_add(arr, secret_json(req_cap(r, "id"), res, i));
	json_set_bool(out, "success", 1);
	json_set(out, "secrets", arr);
	return 200;
}

int
iam_secrets_get(struct req *r, struct json_object *out)
{
	const char *env, *p[2];
	PGresult *res;
	int rc;

	if ((rc = path_env(r, &env)) != 0 ||
	    (rc = iam_clients_own_or_reply(r, req_cap(r, "id"))) != 0)
		return rc;
	p[0] = req_cap(r, "id");
	p[1] = env;
	if ((res = db_query(r, &stmts[S_GET], 2, p)) == NULL)
		return api_db_error(r);
	if (PQntuples(res) != 1)
		return secret_not_found(r, env);
	json_set_bool(out, "success", 1);
	json_set(out, "secret", secret_json(req_cap(r, "id"), res, 0));
	return 200;
}

int
iam_secrets_revoke(struct req *r, struct json_object *out)
{
	const char *env, *p[2];
	struct json_object *s;
	PGresult *res;
	int rc;

	if ((rc = path_env(r, &env)) != 0 ||
	    (rc = iam_clients_own_or_reply(r, req_cap(r, "id"))) != 0)
		return rc;
	p[0] = req_cap(r, "id");
	p[1] = env;
	/* A rotation committing meanwhile leaves its successor out of this
	 * statement's snapshot; the second try sees it. */
	for (int attempt = 0; attempt < 2; attempt++) {
		if ((res = db_query(r, &stmts[S_REVOKE], 2, p)) == NULL)
			return api_db_error(r);
		if (PQntuples(res) == 1)
			break;
	}
	if (PQntuples(res) != 1)
		return secret_not_found(r, env);
	s = secret_json(req_cap(r, "id"), res, 0);
	json_set_str(s, "revokedAt", PQgetvalue(res, 0, SC_REVOKED_AT));
	json_set_bool(out, "success", 1);
	json_set_str(out, "message", "secret revoked; its key no longer works");
	json_set(out, "secret", s);
	return 200;
}

int
iam_secrets_rotate(struct req *r, struct json_object *out)
{
	const char *env, *old, *p[3];
	PGresult *res;
	int rc;

	if ((rc = path_env(r, &env)) != 0 ||
	    (rc = iam_clients_own_or_reply(r, req_cap(r, "id"))) != 0 ||
	    (rc = env_allowed(r, env)) != 0)
		return rc;
	p[0] = req_cap(r, "id");
	p[1] = env;
	p[2] = arena_printf(r->arena, "%d", SECRETS_ROTATE_SETTLE);
	if ((res = db_query(r, &stmts[S_LOCK], 3, p)) == NULL) {
		if (strcmp(db_sqlstate(r->db), SQLSTATE_LOCK_NOT_AVAILABLE) == 0)
			return rotation_conflict(r, "another rotation holds it");
		return api_db_error(r);
	}
	if (PQntuples(res) != 1) {
		/* None live in this statement's snapshot: a rotation that
		 * committed just now, or really none? A fresh statement sees. */
		if ((res = db_query(r, &stmts[S_GET], 2, p)) == NULL)
			return api_db_error(r);
		if (PQntuples(res) == 1)
			return rotation_conflict(r, "another rotation replaced it just now");
		return secret_not_found(r, env);
	}
	if (PQgetvalue(res, 0, SC_TOO_YOUNG)[0] == 't')
		return rotation_conflict(r, arena_printf(r->arena,
		    "it was itself rotated less than %d seconds ago", SECRETS_ROTATE_SETTLE));
	old = arena_strdup(r->arena, PQgetvalue(res, 0, SC_ID));
	/* Revoke first: the live-secret index allows one at a time. */
	if (db_query(r, &stmts[S_RETIRE], 1, &old) == NULL ||
	    (rc = secret_insert(r, req_cap(r, "id"), env, old, out)) < 0)
		return api_db_error(r);
	if (rc == 0)	/* cannot happen while the row lock is held */
		return rotation_conflict(r, "another secret appeared");
	json_set_bool(out, "success", 1);
	json_set_str(out, "message", "secret rotated; the old key no longer works and the new "
	    "one is shown only once");
	return 200;
}

int
iam_secrets_identity(struct req *r, struct json_object *out)
{
	const char *p[1] = { r->owner_id };
	PGresult *res;

	/* an unclaimed sandbox's client has no developer (owner "") */
	if (p[0] == NULL || p[0][0] == '\0') {
		json_set_str(out, "client_id", r->client_id);
		json_set_str(out, "environment", r->env);
		json_set_bool(out, "email_verified", 0);
		json_set_str(out, "live_access", "none");
		json_set_bool(out, "live_access_granted", 0);
		return 200;
	}
	if ((res = db_query(r, &stmts[S_USER], 1, p)) == NULL)
		return api_db_error(r);
	if (PQntuples(res) != 1)
		return api_error(r, 401, ERR_UNAUTHORIZED, NULL, "missing or invalid credentials");
	json_set_str(out, "client_id", r->client_id);
	json_set_str(out, "environment", r->env);
	json_set_bool(out, "email_verified", PQgetvalue(res, 0, SU_EMAIL_VERIFIED)[0] == 't');
	json_set_str(out, "live_access", PQgetvalue(res, 0, SU_LIVE_ACCESS));
	json_set_bool(out, "live_access_granted",
	    strcmp(PQgetvalue(res, 0, SU_LIVE_ACCESS), "granted") == 0);
	return 200;
}
