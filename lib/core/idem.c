/* Idempotency keys: claim, compare the body's hash, replay or refuse. */
#include <stdlib.h>
#include <string.h>

#include "core/arena.h"
#include "core/crypto.h"
#include "core/db.h"
#include "core/errors.h"
#include "core/idem.h"
#include "core/json.h"
#include "core/req.h"
#include "core/validate.h"

enum { I_CLAIM, I_GET, I_FINISH, I_SWEEP, I_FORGET, I__MAX };
/* Columns of I_GET. */
#define I_GET_COLS "encode(body_sha256, 'hex'), status, response, replayable"
enum { I_COL_SHA256, I_COL_STATUS, I_COL_RESPONSE, I_COL_REPLAYABLE, I_COL__MAX };
static struct db_stmt stmts[I__MAX] = {
	/* An expired key is taken over as if new. */
	[I_CLAIM] = { "idem_claim",
	    "INSERT INTO idempotency_keys AS k (owner_id, route, key, body_sha256)"
	    " VALUES ($1, $2, $3, decode($4, 'hex'))"
	    " ON CONFLICT (owner_id, route, key) DO UPDATE SET"
	    "  body_sha256 = EXCLUDED.body_sha256, status = NULL, response = NULL,"
	    "  replayable = true, created_at = now(), expires_at = now() + interval '24 hours'"
	    "  WHERE k.expires_at < now()"
	    " RETURNING 1" },
	[I_GET] = { "idem_get",
	    "SELECT " I_GET_COLS " FROM idempotency_keys WHERE owner_id = $1 AND route = $2 AND key = $3"
	    " FOR UPDATE" },
	[I_FINISH] = { "idem_finish",
	    "UPDATE idempotency_keys SET status = $4::int, response = $5::json,"
	    " replayable = $6::bool WHERE owner_id = $1 AND route = $2 AND key = $3" },
	[I_SWEEP] = { "idem_sweep",
	    "DELETE FROM idempotency_keys WHERE expires_at < now()" },
	[I_FORGET] = { "idem_forget",
	    "DELETE FROM idempotency_keys WHERE owner_id = $1 AND (response ->> 'link_id') IS NOT NULL"
	    " AND response ->> 'link_id' = $2" },
};
const struct db_stmt_set idem_stmt_set = { "idem", stmts, I__MAX };

static const char *
route_name(struct req *r)
{
	return arena_printf(r->arena, "%s %s", http_method_name(r->match.route->method),
	    r->http.path);
}

static const char *
body_hash(struct req *r)
{
	unsigned char h[32];

	crypto_sha256(r->http.body ? r->http.body : "", r->http.body_len, h);
	return crypto_hex_encode(r->arena, h, sizeof(h));
}

int
idem_begin(struct req *r, const char *owner, const char *key, enum idem_state *st,
    int *status, struct json_object **stored)
{
	const char *hash = body_hash(r);
	const char *p[4] = { owner, route_name(r), key, hash };
	PGresult *res;
	size_t len = key ? strlen(key) : 0;

	*st = IDEM_NEW;
	*status = 0;
	*stored = NULL;
	if (len == 0 || len > 255 || !validate_format(VF_PRINTABLE, key))
		return api_field_error(r, 400, "VALIDATION_ERROR", "Idempotency-Key",
		    key ? "invalid_format" : "required",
		    "the Idempotency-Key header must be 1 to 255 printable ASCII characters");
	if ((res = db_query(r, &stmts[I_CLAIM], 4, p)) == NULL)
		return api_db_error(r);
	if (PQntuples(res) == 1)
		return 0;
	/* Taken: wait for its first use to finish, then compare. */
	if ((res = db_query(r, &stmts[I_GET], 3, p)) == NULL)
		return api_db_error(r);
	if (PQntuples(res) != 1 || !crypto_ct_streq(PQgetvalue(res, 0, I_COL_SHA256), hash))
		return api_error(r, 409, "IDEMPOTENCY_CONFLICT", "use a new Idempotency-Key",
		    "this Idempotency-Key was used with a different request body");
	if (PQgetvalue(res, 0, I_COL_REPLAYABLE)[0] != 't' ||
	    PQgetisnull(res, 0, I_COL_STATUS))
		return api_error(r, 409, "IDEMPOTENCY_KEY_NOT_REPLAYABLE",
		    "use a new Idempotency-Key; the secret is never shown twice",
		    "this Idempotency-Key was already used and its response held a one-time secret");
	*st = IDEM_REPLAY;
	*status = atoi(PQgetvalue(res, 0, I_COL_STATUS));
	if (!PQgetisnull(res, 0, I_COL_RESPONSE)) {
		const char *why;

		*stored = json_parse(r->arena, PQgetvalue(res, 0, I_COL_RESPONSE),
		    (size_t)PQgetlength(res, 0, I_COL_RESPONSE), &why);
	}
	return 0;
}

int
idem_finish(struct req *r, const char *owner, const char *key, int status,
    struct json_object *body)
{
	const char *p[6] = { owner, route_name(r), key, arena_printf(r->arena, "%d", status),
	    body ? json_dump(r->arena, body, NULL) : NULL, body ? "true" : "false" };

	return db_query(r, &stmts[I_FINISH], 6, p) != NULL ? 0 : -1;
}

int
idem_required_or_reply(struct req *r)
{
	if (r->http.idempotency_key != NULL)
		return 0;
	return api_field_error(r, 400, "VALIDATION_ERROR", "Idempotency-Key", "required",
	    "the Idempotency-Key header must be 1 to 255 printable ASCII characters");
}

long long
idem_sweep(struct db *d, struct arena *a)
{
	return db_exec_count(d, a, &stmts[I_SWEEP], 0, NULL);
}

int
idem_forget_link(struct req *r, const char *owner, const char *link_id)
{
	const char *p[2] = { owner, link_id };

	return db_exec_count(r->db, r->arena, &stmts[I_FORGET], 2, p) < 0 ? -1 : 0;
}
