/*
 * What the retrieval and connect jobs keep for the connectors
 * (connector.h, sql/022_portal.sql): the link's stored statements and its
 * since date (read from bills and links), the unstructured statements, the
 * connector's note on a link and its timings, the connect flow's pending
 * challenge.
 */
#include <stdlib.h>
#include <string.h>

#include "core/arena.h"
#include "core/config.h"
#include "core/crypto.h"
#include "core/db.h"
#include "core/req.h"
#include "jobs/connectors/connector.h"
#include "links/links.h"

enum {
	CD_TARGET, CD_KNOWN, CD_SINCE, CD_UNSTRUCTURED_PUT, CD_UNSTRUCTURED_SHA, CD_NOTE, CD_TIMING,
	CD_CHALLENGE_PUT, CD_CHALLENGE_TAKE, CD_CHALLENGE_DROP, CD_BASIS, CD__MAX
};
enum known_col { K_REF, K_ACCOUNT, K_DATE, K_REVISION, K_HAS_DOC };

static struct db_stmt stmts[CD__MAX] = {
	/* the day (UTC) the link was made: the sandbox dates its history from it */
	[CD_BASIS] = { "connector_basis",
	    "SELECT to_char((l.created_at AT TIME ZONE 'UTC')::date, 'YYYY-MM-DD')"
	    "  FROM links l WHERE " LINKS_BY_ID("l.", ""), 0 },
	[CD_TARGET] = { "connector_target",
	    "SELECT name, base_url FROM billers WHERE id = $1", 0 },
	[CD_KNOWN] = { "connector_known",
	    "SELECT statement_ref, account_id, to_char(statement_date, 'YYYY-MM-DD'), revision,"
	    "       statement_sha256 IS NOT NULL"
	    "  FROM bills WHERE " BILLS_OF_LINK " AND deleted_at IS NULL"
	    " ORDER BY statement_ref COLLATE \"C\"", 0 },
	/* LEAST ignores NULLs: no open bill, the window alone. The day before
	 * the oldest open bill, so that bill is inside the window (after since)
	 * and its absence is seen. */
	[CD_SINCE] = { "connector_since",
	    "SELECT to_char(LEAST((l.last_success_at AT TIME ZONE 'UTC')::date - $3::int,"
	    "  (SELECT min(b.statement_date) - 1 FROM bills b WHERE b.link_id = l.id"
	    "    AND " DB_ROW_CHECK("b.client_id = l.client_id")
	    "    AND b.deleted_at IS NULL AND b.status <> 'PAID')),"
	    "  'YYYY-MM-DD')"
	    "  FROM links l WHERE " LINKS_BY_ID("l.", " AND l.last_success_at IS NOT NULL"),
	    0 },
	[CD_UNSTRUCTURED_PUT] = { "connector_unstructured_put",
	    "INSERT INTO portal_unstructured AS u (client_id, link_id, statement_ref, account_id,"
	    " revision, statement_date, document_sha256, withdrawn_at)"
	    " VALUES ($1, $2, $3, $4, $5::int, $6::date, $7,"
	    "  CASE WHEN $8::boolean THEN now() END)"
	    " ON CONFLICT (client_id, link_id, statement_ref) DO UPDATE SET"
	    "  account_id = EXCLUDED.account_id, revision = EXCLUDED.revision,"
	    "  statement_date = EXCLUDED.statement_date,"
	    "  document_sha256 = coalesce(EXCLUDED.document_sha256, u.document_sha256),"
	    "  withdrawn_at = CASE WHEN $8::boolean THEN coalesce(u.withdrawn_at, now()) END,"
	    "  updated_at = now()", 0 },
	[CD_UNSTRUCTURED_SHA] = { "connector_unstructured_sha",
	    "SELECT document_sha256 FROM portal_unstructured WHERE client_id = $1"
	    " AND link_id = $2 AND statement_ref = $3 AND revision = $4::int", 0 },
	[CD_NOTE] = { "connector_note",
	    "INSERT INTO portal_link_state (client_id, link_id, detail, detail_at)"
	    " VALUES ($1, $2, $3, now()) ON CONFLICT (client_id, link_id) DO UPDATE SET"
	    "  detail = EXCLUDED.detail, detail_at = now(), updated_at = now()", 0 },
	[CD_TIMING] = { "connector_timing",
	    "INSERT INTO portal_link_state AS s (client_id, link_id, retrievals, portal_ns, run_ns)"
	    " VALUES ($1, $2, 1, $3::bigint, $4::bigint)"
	    " ON CONFLICT (client_id, link_id) DO UPDATE SET retrievals = s.retrievals + 1,"
	    "  portal_ns = s.portal_ns + EXCLUDED.portal_ns, run_ns = s.run_ns + EXCLUDED.run_ns,"
	    "  updated_at = now()", 0 },
	[CD_CHALLENGE_PUT] = { "connector_challenge_put",
	    "INSERT INTO portal_challenges (client_id, session_id, state)"
	    " VALUES ($1, $2, decode($3, 'hex')) ON CONFLICT (client_id, session_id)"
	    " DO UPDATE SET state = EXCLUDED.state, created_at = now()", 0 },
	[CD_CHALLENGE_TAKE] = { "connector_challenge_take",
	    "DELETE FROM portal_challenges WHERE client_id = $1 AND session_id = $2"
	    " RETURNING encode(state, 'hex')", 0 },
	[CD_CHALLENGE_DROP] = { "connector_challenge_drop",
	    "DELETE FROM portal_challenges WHERE client_id = $1 AND session_id = $2", 0 },
};

const struct db_stmt_set connector_stmt_set = { "connector", stmts, CD__MAX };

int
connector_target_load(struct req *r, const char *biller_id, struct connector_target *t)
{
	const char *p[1] = { biller_id };
	PGresult *res;

	memset(t, 0, sizeof(*t));
	if ((res = db_exec(r->db, r->arena, &stmts[CD_TARGET], 1, p)) == NULL)
		return -1;
	if (PQntuples(res) != 1)
		return 0;
	t->biller_id = biller_id;
	t->biller_name = PQgetvalue(res, 0, 0);
	t->base_url = PQgetisnull(res, 0, 1) ? NULL : PQgetvalue(res, 0, 1);
	t->cfg = r->cfg;
	return 1;
}

int
connector_known_load(struct req *r, const char *client_id, const char *link_id,
    struct connector_known **out, size_t *n)
{
	const char *p[2] = { client_id, link_id };
	struct connector_known *k;
	PGresult *res;
	int rows;

	*out = NULL;
	*n = 0;
	if ((res = db_exec(r->db, r->arena, &stmts[CD_KNOWN], 2, p)) == NULL)
		return -1;
	rows = PQntuples(res);
	k = arena_alloc(r->arena, ((size_t)rows + 1) * sizeof(*k));
	for (int i = 0; i < rows; i++) {
		k[i].ref = PQgetvalue(res, i, K_REF);
		k[i].account_id = PQgetisnull(res, i, K_ACCOUNT) ? NULL :
		    PQgetvalue(res, i, K_ACCOUNT);
		k[i].statement_date = PQgetisnull(res, i, K_DATE) ? NULL :
		    PQgetvalue(res, i, K_DATE);
		k[i].revision = atoi(PQgetvalue(res, i, K_REVISION));
		k[i].has_document = strcmp(PQgetvalue(res, i, K_HAS_DOC), "t") == 0;
	}
	*out = k;
	*n = (size_t)rows;
	return 0;
}

static int
known_cmp(const void *key, const void *e)
{
	return strcmp(key, ((const struct connector_known *)e)->ref);
}

const struct connector_known *
connector_known_find(const struct connector_known *k, size_t n, const char *ref)
{
	return n == 0 ? NULL : bsearch(ref, k, n, sizeof(*k), known_cmp);
}

int
connector_since(struct req *r, const char *client_id, const char *link_id, int days,
    const char **since)
{
	const char *p[3] = { client_id, link_id, arena_printf(r->arena, "%d", days) };
	PGresult *res;

	*since = NULL;
	if ((res = db_exec(r->db, r->arena, &stmts[CD_SINCE], 3, p)) == NULL)
		return -1;
	if (PQntuples(res) == 1 && !PQgetisnull(res, 0, 0))
		*since = PQgetvalue(res, 0, 0);
	return 0;
}

int
connector_basis(struct req *r, const char *client_id, const char *link_id, const char **day)
{
	const char *p[2] = { client_id, link_id };
	PGresult *res;

	*day = NULL;
	if ((res = db_exec(r->db, r->arena, &stmts[CD_BASIS], 2, p)) == NULL)
		return -1;
	if (PQntuples(res) == 1)
		*day = PQgetvalue(res, 0, 0);
	return 0;
}

int
connector_unstructured_put(struct req *r, const char *client_id, const char *link_id,
    const char *account_id, const struct connector_statement *st, const char *sha,
    int withdrawn)
{
	const char *p[8] = { client_id, link_id, st->b.ref, account_id,
		arena_printf(r->arena, "%d", st->b.revision > 0 ? st->b.revision : 1),
		st->b.statement_date, sha, withdrawn ? "true" : "false" };

	return db_exec(r->db, r->arena, &stmts[CD_UNSTRUCTURED_PUT], 8, p) == NULL ? -1 : 0;
}

const char *
connector_unstructured_sha(struct req *r, const char *client_id, const char *link_id,
    const char *ref, int revision, int *err)
{
	const char *p[4] = { client_id, link_id, ref,
		arena_printf(r->arena, "%d", revision > 0 ? revision : 1) };
	PGresult *res;

	*err = 0;
	if ((res = db_exec(r->db, r->arena, &stmts[CD_UNSTRUCTURED_SHA], 4, p)) == NULL) {
		*err = 1;
		return NULL;
	}
	return PQntuples(res) == 1 && !PQgetisnull(res, 0, 0) ? PQgetvalue(res, 0, 0) : NULL;
}

int
connector_link_note(struct req *r, const char *client_id, const char *link_id,
    const char *detail)
{
	const char *p[3] = { client_id, link_id, detail };

	return db_exec(r->db, r->arena, &stmts[CD_NOTE], 3, p) == NULL ? -1 : 0;
}

int
connector_link_timing(struct req *r, const char *client_id, const char *link_id,
    long long portal_ns, long long run_ns)
{
	const char *p[4] = { client_id, link_id, arena_printf(r->arena, "%lld", portal_ns),
		arena_printf(r->arena, "%lld", run_ns) };

	return db_exec(r->db, r->arena, &stmts[CD_TIMING], 4, p) == NULL ? -1 : 0;
}

/* The associated data a challenge is sealed with: its session. */
static const char *
challenge_ad(struct req *r, const char *session_id)
{
	return arena_printf(r->arena, "%s:portal-challenge", session_id);
}

int
connector_challenge_put(struct req *r, const char *client_id, const char *session_id,
    const char *state)
{
	const char *p[3] = { client_id, session_id, NULL };
	unsigned char *sealed;
	size_t slen;

	if ((sealed = crypto_seal(r->arena, r->cfg->secret_key, state, strlen(state),
	    challenge_ad(r, session_id), &slen)) == NULL)
		return -1;
	p[2] = crypto_hex_encode(r->arena, sealed, slen);
	return db_exec(r->db, r->arena, &stmts[CD_CHALLENGE_PUT], 3, p) == NULL ? -1 : 0;
}

const char *
connector_challenge_take(struct req *r, const char *client_id, const char *session_id,
    int *err)
{
	const char *p[2] = { client_id, session_id }, *hex;
	unsigned char *raw, *msg;
	size_t n, len;
	PGresult *res;

	*err = 0;
	if ((res = db_exec(r->db, r->arena, &stmts[CD_CHALLENGE_TAKE], 2, p)) == NULL) {
		*err = 1;
		return NULL;
	}
	if (PQntuples(res) != 1)
		return NULL;
	hex = PQgetvalue(res, 0, 0);
	n = strlen(hex) / 2;
	raw = arena_alloc(r->arena, n + 1);
	/* a value that does not open is no challenge: the user logs in again */
	if (n == 0 || crypto_hex_decode(hex, raw, n) != 0 ||
	    crypto_open(r->arena, r->cfg->secret_key, raw, n, challenge_ad(r, session_id),
	    &msg, &len) != 0)
		return NULL;
	return (const char *)msg;
}

int
connector_challenge_drop(struct req *r, const char *client_id, const char *session_id)
{
	const char *p[2] = { client_id, session_id };

	return db_exec(r->db, r->arena, &stmts[CD_CHALLENGE_DROP], 2, p) == NULL ? -1 : 0;
}
