/* Idempotency keys: claim, compare the body's canonical hash, replay or refuse. */
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "core/arena.h"
#include "core/crypto.h"
#include "core/db.h"
#include "core/errors.h"
#include "core/idem.h"
#include "core/json.h"
#include "core/req.h"
#include "core/validate.h"
#include "core/vault.h"

/* Every bearer secret the service hands out starts so (DOMAIN.md
 * "Identifiers": bds_pub_, bds_lat_, bds_pay_, bds_tkt_, ...). */
#define IDEM_SECRET_PREFIX "bds_"

enum { I_CLAIM, I_GET, I_FINISH, I_SWEEP, I_FORGET, I__MAX };
/* Columns of I_GET. */
#define I_GET_COLS "encode(body_sha256, 'hex'), status, response, replayable," \
	" encode(secrets, 'hex'), secrets_key_id"
enum { I_COL_SHA256, I_COL_STATUS, I_COL_RESPONSE, I_COL_REPLAYABLE, I_COL_SECRETS,
	I_COL_SECRETS_KEY, I_COL__MAX };
static struct db_stmt stmts[I__MAX] = {
	/* An expired key is taken over as if new. */
	[I_CLAIM] = { "idem_claim",
	    "INSERT INTO idempotency_keys AS k (owner_id, route, key, body_sha256)"
	    " VALUES ($1, $2, $3, decode($4, 'hex'))"
	    " ON CONFLICT (owner_id, route, key) DO UPDATE SET"
	    "  body_sha256 = EXCLUDED.body_sha256, status = NULL, response = NULL,"
	    "  replayable = true, secrets = NULL, secrets_key_id = NULL, created_at = now(),"
	    "  expires_at = now() + interval '24 hours'"
	    "  WHERE k.expires_at < now()"
	    " RETURNING 1" },
	[I_GET] = { "idem_get",
	    "SELECT " I_GET_COLS " FROM idempotency_keys WHERE owner_id = $1 AND route = $2 AND key = $3"
	    " FOR UPDATE" },
	[I_FINISH] = { "idem_finish",
	    "UPDATE idempotency_keys SET status = $4::int, response = $5::json,"
	    " replayable = $6::bool, secrets = decode($7, 'hex'), secrets_key_id = $8"
	    " WHERE owner_id = $1 AND route = $2 AND key = $3" },
	[I_SWEEP] = { "idem_sweep",
	    "DELETE FROM idempotency_keys WHERE expires_at < now()" },
	[I_FORGET] = { "idem_forget",
	    "DELETE FROM idempotency_keys WHERE owner_id = $1 AND (response ->> $2) IS NOT NULL"
	    " AND response ->> $2 = $3" },
};
const struct db_stmt_set idem_stmt_set = { "idem", stmts, I__MAX };

static const char *
route_name(struct req *r)
{
	return arena_printf(r->arena, "%s %s", http_method_name(r->match.route->method),
	    r->http.path);
}

/*
 * The hash of the validated body's canonical text (json_canonical): the
 * same JSON sent again with other whitespace, key order or escapes is the
 * same request; any other value is another body.
 */
static const char *
body_hash(struct req *r)
{
	unsigned char h[32];
	size_t n;
	const char *c = json_canonical(r->arena, r->body, &n);

	crypto_sha256(c, n, h);
	return crypto_hex_encode(r->arena, h, sizeof(h));
}

/* The associated data a record's secrets are sealed with: its owner, route
 * and key (p as idem_begin's), so no other record's can be swapped in. */
static const char *
secrets_ad(struct req *r, const char *const *p)
{
	return arena_printf(r->arena, "idem\n%s\n%s\n%s", p[0], p[1], p[2]);
}

static int
is_secret(struct json_object *v)
{
	return json_object_is_type(v, json_type_string) &&
	    strncmp(json_object_get_string(v), IDEM_SECRET_PREFIX,
	    strlen(IDEM_SECRET_PREFIX)) == 0;
}

/*
 * body's text with every top-level bearer secret as null (*text), and the
 * secrets themselves as one sealed object (*sealed, hex; NULL when there
 * are none). body is left as it was. 0, or -1 when sealing failed.
 */
static int
secrets_seal(struct req *r, const char *const *p, struct json_object *body,
    const char **text, const char **sealed)
{
	struct json_object *secrets = json_obj(r->arena);
	const char *plain;
	char *copy;
	size_t len;

	*sealed = NULL;
	*text = json_dump(r->arena, body, NULL);
	if (!json_object_is_type(body, json_type_object))
		return 0;
	json_object_object_foreach(body, k, v) {
		if (is_secret(v))
			json_object_object_add(secrets, k, json_object_get(v));
	}
	if (json_object_object_length(secrets) == 0)
		return 0;
	/* replaced in place (member order kept), then put back */
	json_object_object_foreach(secrets, k1, v1) {
		(void)v1;
		json_object_object_add(body, k1, NULL);
	}
	*text = json_dump(r->arena, body, NULL);
	json_object_object_foreach(secrets, k2, v2)
		json_object_object_add(body, k2, json_object_get(v2));
	plain = json_object_to_json_string_ext(secrets, JSON_C_TO_STRING_PLAIN);
	len = strlen(plain);
	copy = arena_memdup(r->arena, plain, len);
	*sealed = vault_seal_hex(r->arena, r->cfg, secrets_ad(r, p), copy, len);
	sodium_memzero(copy, len);
	return *sealed != NULL ? 0 : -1;
}

/* Put the sealed secrets back into stored, each in its place: 0, or -1
 * when they do not open (unknown key, tampering) or are not an object. */
static int
secrets_open(struct req *r, const char *const *p, const char *key_id, const char *hex,
    struct json_object *stored)
{
	struct json_object *secrets;
	unsigned char *msg;
	const char *why;
	size_t len;

	if (vault_open_hex(r->arena, r->cfg, key_id, hex, secrets_ad(r, p), &msg, &len) != 0)
		return -1;
	secrets = json_parse(r->arena, (const char *)msg, len, &why);
	sodium_memzero(msg, len);
	if (secrets == NULL || !json_object_is_type(secrets, json_type_object))
		return -1;
	json_object_object_foreach(secrets, k, v)
		json_object_object_add(stored, k, json_object_get(v));
	return 0;
}

int
idem_key_or_reply(struct req *r, const char *key)
{
	size_t len = key ? strlen(key) : 0;

	if (len == 0 || len > 255 || !validate_format(VF_PRINTABLE, key))
		return api_field_error(r, 400, ERR_VALIDATION_ERROR, "Idempotency-Key",
		    key ? "invalid_format" : "required",
		    "the Idempotency-Key header must be 1 to 255 printable ASCII characters");
	return 0;
}

int
idem_begin(struct req *r, const char *owner, const char *key, enum idem_state *st,
    int *status, struct json_object **stored)
{
	const char *hash = body_hash(r);
	const char *p[4] = { owner, route_name(r), key, hash };
	PGresult *res;
	int rc;

	*st = IDEM_NEW;
	*status = 0;
	*stored = NULL;
	if ((rc = idem_key_or_reply(r, key)) != 0)
		return rc;
	if ((res = db_query(r, &stmts[I_CLAIM], 4, p)) == NULL)
		return api_db_error(r);
	if (PQntuples(res) == 1)
		return 0;
	/* Taken: wait for its first use to finish, then compare. */
	if ((res = db_query(r, &stmts[I_GET], 3, p)) == NULL)
		return api_db_error(r);
	if (PQntuples(res) != 1 || !crypto_ct_streq(PQgetvalue(res, 0, I_COL_SHA256), hash))
		return api_error(r, 409, ERR_IDEMPOTENCY_CONFLICT, "use a new Idempotency-Key",
		    "this Idempotency-Key was used with a different request body");
	if (PQgetvalue(res, 0, I_COL_REPLAYABLE)[0] != 't' ||
	    PQgetisnull(res, 0, I_COL_STATUS))
		return api_error(r, 409, ERR_IDEMPOTENCY_KEY_NOT_REPLAYABLE,
		    "use a new Idempotency-Key; the secret is never shown twice",
		    "this Idempotency-Key was already used and its response held a one-time secret");
	if (!PQgetisnull(res, 0, I_COL_RESPONSE)) {
		const char *why;

		*stored = json_parse(r->arena, PQgetvalue(res, 0, I_COL_RESPONSE),
		    (size_t)PQgetlength(res, 0, I_COL_RESPONSE), &why);
	}
	if (!PQgetisnull(res, 0, I_COL_SECRETS) && (*stored == NULL ||
	    secrets_open(r, p, PQgetvalue(res, 0, I_COL_SECRETS_KEY),
	    PQgetvalue(res, 0, I_COL_SECRETS), *stored) != 0)) {
		/* the key that sealed them left the ring: the answer is lost */
		*stored = NULL;
		return api_error(r, 409, ERR_IDEMPOTENCY_KEY_NOT_REPLAYABLE,
		    "use a new Idempotency-Key", "this Idempotency-Key's answer can no longer "
		    "be replayed");
	}
	*st = IDEM_REPLAY;
	*status = atoi(PQgetvalue(res, 0, I_COL_STATUS));
	return 0;
}

int
idem_finish(struct req *r, const char *owner, const char *key, int status,
    struct json_object *body)
{
	const char *p[8] = { owner, route_name(r), key, arena_printf(r->arena, "%d", status),
	    NULL, body ? "true" : "false", NULL, NULL };

	if (body != NULL && secrets_seal(r, p, body, &p[4], &p[6]) != 0)
		return -1;
	if (p[6] != NULL)
		p[7] = vault_key_id(r->cfg);
	return db_query(r, &stmts[I_FINISH], 8, p) != NULL ? 0 : -1;
}

long long
idem_sweep(const struct config *cfg, struct db *d, struct arena *a)
{
	(void)cfg;
	return db_exec_count(d, a, &stmts[I_SWEEP], 0, NULL);
}

int
idem_forget(struct req *r, const char *owner, const char *member, const char *value)
{
	const char *p[3] = { owner, member, value };

	return db_exec_count(r->db, r->arena, &stmts[I_FORGET], 3, p) < 0 ? -1 : 0;
}
