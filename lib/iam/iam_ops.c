/* Operator actions on developer accounts (bdsctl's legal, live-access,
 * billing and sweeps). */
#include <stddef.h>

#include "core/arena.h"
#include "core/db.h"
#include "iam/iam_ops.h"

enum {
	IO_USER_FIND,
	IO_LEGAL_LIST,
	IO_LEGAL_ADD,
	IO_LIVE_LIST,
	IO_LIVE_APPROVE,
	IO_LIVE_DENY,
	IO_BILLING_DONE,
	IO_SWEEP_THROTTLES,
	IO_SWEEP_SESSIONS,
	IO__MAX
};

#define IO_LEGAL_COLS "kind, version, effective_date"
enum { IO_LEGAL_KIND, IO_LEGAL_VERSION, IO_LEGAL_DATE, IO_LEGAL__MAX };
#define IO_LIVE_COLS "u.id, u.email, q.status, q.requested_at"
enum { IO_LIVE_USER, IO_LIVE_EMAIL, IO_LIVE_STATUS, IO_LIVE_AT, IO_LIVE__MAX };
/* IO_USER_FIND */
enum { IO_USER_ID, IO_USER__MAX };

static struct db_stmt stmts[IO__MAX] = {
	[IO_USER_FIND] = { "iam_ops_user_find",
	    "SELECT id FROM users WHERE id = $1 OR email = lower($1)", 0 },
	[IO_LEGAL_LIST] = { "iam_ops_legal_list",
	    "SELECT " IO_LEGAL_COLS " FROM legal_documents ORDER BY kind, effective_date", 0 },
	[IO_LEGAL_ADD] = { "iam_ops_legal_add",
	    "INSERT INTO legal_documents (kind, version, effective_date)"
	    " VALUES ($1, $2, $3::date) ON CONFLICT DO NOTHING RETURNING kind", 0 },
	[IO_LIVE_LIST] = { "iam_ops_live_list",
	    "SELECT " IO_LIVE_COLS
	    " FROM live_access_requests q JOIN users u ON u.id = q.user_id"
	    " WHERE q.status = 'pending' ORDER BY q.requested_at", 0 },
	[IO_LIVE_APPROVE] = { "iam_ops_live_approve",
	    "WITH d AS (UPDATE live_access_requests SET status = 'approved', decided_at = now()"
	    " WHERE user_id = $1 AND status = 'pending' RETURNING user_id)"
	    " UPDATE users SET live_access = 'granted', updated_at = now()"
	    " WHERE id IN (SELECT user_id FROM d) RETURNING id", 0 },
	[IO_LIVE_DENY] = { "iam_ops_live_deny",
	    "WITH d AS (UPDATE live_access_requests SET status = 'denied', decided_at = now(),"
	    " reason = $2 WHERE user_id = $1 AND status = 'pending' RETURNING user_id)"
	    " UPDATE users SET live_access = 'denied', updated_at = now()"
	    " WHERE id IN (SELECT user_id FROM d) RETURNING id", 0 },
	[IO_BILLING_DONE] = { "iam_ops_billing_done",
	    "UPDATE users SET billing_done_at = coalesce(billing_done_at, now()),"
	    " updated_at = now() WHERE id = $1", 0 },
	[IO_SWEEP_THROTTLES] = { "iam_ops_sweep_throttles",
	    "DELETE FROM auth_throttle WHERE window_start < now() - interval '1 day'"
	    " AND (locked_until IS NULL OR locked_until < now())", 0 },
	[IO_SWEEP_SESSIONS] = { "iam_ops_sweep_sessions",
	    "DELETE FROM sessions WHERE"
	    " (revoked_at IS NOT NULL AND revoked_at < now() - interval '30 days')"
	    " OR refresh_expires_at < now() - interval '30 days'", 0 },
};
const struct db_stmt_set iam_ops_stmt_set = { "iam_ops", stmts, IO__MAX };

int
iam_ops_legal_list(struct db *d, struct arena *a, struct iam_ops_legal **out)
{
	PGresult *res = db_exec(d, a, &stmts[IO_LEGAL_LIST], 0, NULL);
	int n;

	if (res == NULL)
		return -1;
	n = PQntuples(res);
	*out = arena_alloc(a, ((size_t)n + 1) * sizeof(**out));
	for (int i = 0; i < n; i++) {
		(*out)[i].kind = PQgetvalue(res, i, IO_LEGAL_KIND);
		(*out)[i].version = PQgetvalue(res, i, IO_LEGAL_VERSION);
		(*out)[i].effective_date = PQgetvalue(res, i, IO_LEGAL_DATE);
	}
	return n;
}

int
iam_ops_legal_add(struct db *d, struct arena *a, const char *kind,
    const char *version, const char *date)
{
	const char *p[3] = { kind, version, date };
	PGresult *res = db_exec(d, a, &stmts[IO_LEGAL_ADD], 3, p);

	return res == NULL ? -1 : PQntuples(res) == 1;
}

int
iam_ops_user_find(struct db *d, struct arena *a, const char *who, const char **id)
{
	const char *p[1] = { who };
	PGresult *res = db_exec(d, a, &stmts[IO_USER_FIND], 1, p);

	*id = NULL;
	if (res == NULL)
		return -1;
	if (PQntuples(res) != 1)
		return 0;
	*id = PQgetvalue(res, 0, IO_USER_ID);
	return 1;
}

int
iam_ops_live_access_list(struct db *d, struct arena *a,
    struct iam_ops_live_request **out)
{
	PGresult *res = db_exec(d, a, &stmts[IO_LIVE_LIST], 0, NULL);
	int n;

	if (res == NULL)
		return -1;
	n = PQntuples(res);
	*out = arena_alloc(a, ((size_t)n + 1) * sizeof(**out));
	for (int i = 0; i < n; i++) {
		(*out)[i].user_id = PQgetvalue(res, i, IO_LIVE_USER);
		(*out)[i].email = PQgetvalue(res, i, IO_LIVE_EMAIL);
		(*out)[i].status = PQgetvalue(res, i, IO_LIVE_STATUS);
		(*out)[i].requested_at = PQgetvalue(res, i, IO_LIVE_AT);
	}
	return n;
}

int
iam_ops_live_access_decide(struct db *d, struct arena *a, const char *user_id,
    int approve, const char *reason)
{
	const char *p[2] = { user_id, reason };
	PGresult *res = approve ?
	    db_exec(d, a, &stmts[IO_LIVE_APPROVE], 1, p) :
	    db_exec(d, a, &stmts[IO_LIVE_DENY], 2, p);

	return res == NULL ? -1 : PQntuples(res) == 1;
}

int
iam_ops_billing_done(struct db *d, struct arena *a, const char *user_id)
{
	const char *p[1] = { user_id };

	return db_exec(d, a, &stmts[IO_BILLING_DONE], 1, p) != NULL ? 0 : -1;
}

long long
iam_ops_sweep_throttles(const struct config *cfg, struct db *d, struct arena *a)
{
	(void)cfg;
	return db_exec_count(d, a, &stmts[IO_SWEEP_THROTTLES], 0, NULL);
}

long long
iam_ops_sweep_sessions(const struct config *cfg, struct db *d, struct arena *a)
{
	(void)cfg;
	return db_exec_count(d, a, &stmts[IO_SWEEP_SESSIONS], 0, NULL);
}
