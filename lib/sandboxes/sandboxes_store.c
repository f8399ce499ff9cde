/*
 * The rows of anonymous sandboxes (sql/132_sandboxes.sql). The claim and
 * both sweeps lock the row they change, and the sweeps take only
 * unclaimed rows (SKIP LOCKED): a claim and an expiry never both happen.
 */
#include <stdlib.h>
#include <string.h>

#include "core/arena.h"
#include "core/db.h"
#include "core/req.h"
#include "sandboxes/sandboxes.h"

#define SBX_COLS "id, client_id, name, webhook_id, " DB_ISO("expires_at") ", " \
	DB_ISO("claimed_at") ", claimed_by, " DB_ISO("created_at") "," \
	" encode(claim_sha256, 'hex'), claimed_at IS NULL AND expires_at <= now()"
enum sbx_col {
	SB_ID, SB_CLIENT_ID, SB_NAME, SB_WEBHOOK_ID, SB_EXPIRES_AT, SB_CLAIMED_AT,
	SB_CLAIMED_BY, SB_CREATED_AT, SB_CLAIM_SHA256, SB_EXPIRED, SB__MAX
};

enum { S_INSERT, S_GET, S_LOCK, S_CLAIM, S_EXPIRING, S_EXPIRED, S__MAX };
static struct db_stmt stmts[S__MAX] = {
	[S_INSERT] = { "sandboxes_insert",
	    "INSERT INTO sandboxes (id, client_id, name, claim_sha256, webhook_id, expires_at)"
	    " VALUES ($1, $2, $3, decode($4, 'hex'), $5,"
	    "  now() + make_interval(days => $6::int)) RETURNING " SBX_COLS },
	[S_GET] = { "sandboxes_get",
	    "SELECT " SBX_COLS " FROM sandboxes WHERE id = $1" },
	[S_LOCK] = { "sandboxes_lock",
	    "SELECT " SBX_COLS " FROM sandboxes WHERE id = $1 FOR UPDATE" },
	[S_CLAIM] = { "sandboxes_claim",
	    "UPDATE sandboxes SET claimed_at = now(), claimed_by = $2"
	    " WHERE id = $1 AND claimed_at IS NULL RETURNING " SBX_COLS },
	/* warned once: expiring_at is set in the statement that picks them */
	[S_EXPIRING] = { "sandboxes_expiring",
	    "UPDATE sandboxes SET expiring_at = now() WHERE id IN ("
	    " SELECT id FROM sandboxes WHERE claimed_at IS NULL AND expiring_at IS NULL"
	    "  AND expires_at <= now() + make_interval(days => $2::int)"
	    "  AND expires_at > now()"
	    "  ORDER BY expires_at LIMIT $1::int FOR UPDATE SKIP LOCKED)"
	    " RETURNING " SBX_COLS },
	[S_EXPIRED] = { "sandboxes_expired",
	    "SELECT " SBX_COLS " FROM sandboxes"
	    " WHERE claimed_at IS NULL AND expires_at <= now()"
	    " ORDER BY expires_at LIMIT $1::int FOR UPDATE SKIP LOCKED" },
};
const struct db_stmt_set sandboxes_stmt_set = { "sandboxes", stmts, S__MAX };

static const char *
col(struct req *r, PGresult *res, int row, int c)
{
	return PQgetisnull(res, row, c) ? NULL : arena_strdup(r->arena,
	    PQgetvalue(res, row, c));
}

static void
row_fill(struct req *r, PGresult *res, int row, struct sandboxes_row *s)
{
	s->id = col(r, res, row, SB_ID);
	s->client_id = col(r, res, row, SB_CLIENT_ID);
	s->name = col(r, res, row, SB_NAME);
	s->webhook_id = col(r, res, row, SB_WEBHOOK_ID);
	s->expires_at = col(r, res, row, SB_EXPIRES_AT);
	s->claimed_at = col(r, res, row, SB_CLAIMED_AT);
	s->claimed_by = col(r, res, row, SB_CLAIMED_BY);
	s->created_at = col(r, res, row, SB_CREATED_AT);
	s->claim_sha256 = col(r, res, row, SB_CLAIM_SHA256);
	s->expired = PQgetvalue(res, row, SB_EXPIRED)[0] == 't';
}

/* The rows of res (arena array), or -1 when res is NULL. */
static int
rows_of(struct req *r, PGresult *res, struct sandboxes_row **rows)
{
	int n;

	if (res == NULL)
		return -1;
	n = PQntuples(res);
	*rows = arena_alloc(r->arena, (size_t)(n > 0 ? n : 1) * sizeof(**rows));
	for (int i = 0; i < n; i++)
		row_fill(r, res, i, &(*rows)[i]);
	return n;
}

int
sandboxes_store_insert(struct req *r, struct sandboxes_row *s, const char *claim_hex)
{
	const char *p[6] = { s->id, s->client_id, s->name, claim_hex, s->webhook_id,
	    arena_printf(r->arena, "%d", SANDBOXES_TTL_DAYS) };
	PGresult *res;

	if ((res = db_query(r, &stmts[S_INSERT], 6, p)) == NULL || PQntuples(res) != 1)
		return -1;
	row_fill(r, res, 0, s);
	return 0;
}

int
sandboxes_store_get(struct req *r, const char *id, int lock, struct sandboxes_row *s)
{
	PGresult *res;

	memset(s, 0, sizeof(*s));
	if ((res = db_query(r, &stmts[lock ? S_LOCK : S_GET], 1, &id)) == NULL)
		return -1;
	if (PQntuples(res) != 1)
		return 0;
	row_fill(r, res, 0, s);
	return 1;
}

int
sandboxes_store_claim(struct req *r, const char *id, const char *user_id,
    struct sandboxes_row *s)
{
	const char *p[2] = { id, user_id };
	PGresult *res;

	if ((res = db_query(r, &stmts[S_CLAIM], 2, p)) == NULL)
		return -1;
	if (PQntuples(res) != 1)
		return 0;
	row_fill(r, res, 0, s);
	return 1;
}

int
sandboxes_store_expiring(struct req *r, int n, struct sandboxes_row **rows)
{
	const char *p[2] = { arena_printf(r->arena, "%d", n),
	    arena_printf(r->arena, "%d", SANDBOXES_WARN_DAYS) };

	return rows_of(r, db_query(r, &stmts[S_EXPIRING], 2, p), rows);
}

int
sandboxes_store_expired(struct req *r, int n, struct sandboxes_row **rows)
{
	const char *p[1] = { arena_printf(r->arena, "%d", n) };

	return rows_of(r, db_query(r, &stmts[S_EXPIRED], 1, p), rows);
}
