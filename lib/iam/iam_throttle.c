/*
 * Sign-in throttles: the attempt counts of sign-in and change-password
 * (auth_throttle) and the operator's view of sign-in alerts.
 */
#include <stdlib.h>

#include "core/arena.h"
#include "core/db.h"
#include "core/errors.h"
#include "core/log.h"
#include "core/req.h"
#include "iam/iam.h"

/*
 * Sign-in throttling (DECISIONS "Sign-in throttle"). An attempt is counted
 * before the password is checked (one atomic upsert), so parallel attempts
 * can never pass more than the limit; a right password takes its count
 * back. One address and one account: SIGNIN_PAIR_LIMIT attempts, then a
 * lock of SIGNIN_PAIR_DELAY seconds that doubles with every further
 * failure up to SIGNIN_WINDOW. One address, any accounts: SIGNIN_ADDR_LIMIT
 * attempts per window. One account, any addresses: never locked (that
 * would lock its owner out), but SIGNIN_ACCOUNT_ALERT failures in a window
 * raise an alert (log line and the signin_alerts view).
 */
#define SIGNIN_PAIR_LIMIT	5	/* attempts per (account, address) */
#define SIGNIN_PAIR_DELAY	60	/* seconds: the first lock of a pair */
#define SIGNIN_PAIR_WINDOW	3600	/* seconds the pair's count lasts */
#define SIGNIN_ADDR_LIMIT	20	/* failed sign-ins per address per window */
#define SIGNIN_ACCOUNT_ALERT	100	/* failures per account per window: alert */
#define SIGNIN_WINDOW		900	/* seconds: the window and the longest lock */

enum {
	T_CHECK,
	T_TAKE,
	T_CLEAR,
	T_GIVE_BACK,
	T_ACCOUNT,
	T_ALERTS,
	T__MAX
};
static struct db_stmt stmts[T__MAX] = {
	[T_CHECK] = { "iam_throttle_check",
	    "SELECT coalesce(max(ceil(extract(epoch FROM locked_until - now()))), 0)::bigint"
	    " FROM auth_throttle WHERE locked_until > now()"
	    " AND ((scope = 'pair' AND key = $1) OR (scope = 'addr' AND key = $2))" },
	/*
	 * Count one attempt ($1 scope, $2 key) unless the row is locked (then
	 * no row comes back). A count past the window ($4 seconds) starts a
	 * new one; reaching the limit $3 locks for $5 seconds, doubled for
	 * every attempt beyond it, at most $6.
	 */
	[T_TAKE] = { "iam_throttle_take",
	    "INSERT INTO auth_throttle AS t (scope, key, failures, window_start, locked_until)"
	    " VALUES ($1, $2, 1, now(), CASE WHEN $3::int <= 1"
	    "  THEN now() + make_interval(secs => least($5::int, $6::int)) END)"
	    " ON CONFLICT (scope, key) DO UPDATE SET"
	    "  failures = CASE WHEN t.window_start < now() - make_interval(secs => $4::int)"
	    "   THEN 1 ELSE t.failures + 1 END,"
	    "  window_start = CASE WHEN t.window_start < now() - make_interval(secs => $4::int)"
	    "   THEN now() ELSE t.window_start END,"
	    "  locked_until = CASE WHEN (CASE WHEN t.window_start < now() - make_interval(secs => $4::int)"
	    "   THEN 1 ELSE t.failures + 1 END) >= $3::int"
	    "   THEN now() + make_interval(secs => least($6::int, $5::int * power(2, greatest(0,"
	    "    t.failures + 1 - $3::int)))) ELSE NULL END"
	    " WHERE t.locked_until IS NULL OR t.locked_until <= now()"
	    " RETURNING failures" },
	/* A right password: the pair starts afresh. */
	[T_CLEAR] = { "iam_throttle_clear",
	    "DELETE FROM auth_throttle WHERE scope = 'pair' AND key = $1" },
	/* ... and its attempt no longer counts against the address. */
	[T_GIVE_BACK] = { "iam_throttle_give_back",
	    "UPDATE auth_throttle SET failures = greatest(failures - 1, 0),"
	    " locked_until = CASE WHEN failures - 1 < $2::int THEN NULL ELSE locked_until END"
	    " WHERE scope = 'addr' AND key = $1" },
	/* A failure account-wide; true when it just passed the ceiling $2 in
	 * this window ($3 seconds), once per window. */
	[T_ACCOUNT] = { "iam_throttle_account",
	    "INSERT INTO auth_throttle AS t (scope, key, failures, window_start)"
	    " VALUES ('account', $1, 1, now())"
	    " ON CONFLICT (scope, key) DO UPDATE SET"
	    "  failures = CASE WHEN t.window_start < now() - make_interval(secs => $3::int)"
	    "   THEN 1 ELSE t.failures + 1 END,"
	    "  window_start = CASE WHEN t.window_start < now() - make_interval(secs => $3::int)"
	    "   THEN now() ELSE t.window_start END,"
	    "  alerted_at = CASE WHEN t.failures + 1 >= $2::int"
	    "   AND t.window_start >= now() - make_interval(secs => $3::int)"
	    "   AND (t.alerted_at IS NULL OR t.alerted_at < t.window_start)"
	    "   THEN now() ELSE t.alerted_at END"
	    " RETURNING alerted_at IS NOT NULL AND alerted_at = now(), failures" },
	[T_ALERTS] = { "iam_signin_alerts",
	    "SELECT email, failures, " DB_ISO("window_start") ", " DB_ISO("alerted_at")
	    " FROM signin_alerts ORDER BY alerted_at DESC, email" },
};
const struct db_stmt_set iam_throttle_stmt_set = { "iam_throttle", stmts, T__MAX };

/* Result columns */
enum { TC_LEFT_SECS, TC__MAX };				/* iam_throttle_check */
enum { TA_ALERTED, TA_FAILURES, TA__MAX };		/* iam_throttle_account */
enum { AL_EMAIL, AL_FAILURES, AL_WINDOW, AL_ALERTED, AL__MAX };	/* iam_signin_alerts */

static const char *
client_addr(struct req *r)
{
	return r->http.remote_addr != NULL ? r->http.remote_addr : "-";
}

static const char *
pair_key(struct req *r, const char *email)
{
	return arena_printf(r->arena, "%s %s", email, client_addr(r));
}

/* The 429 of a locked pair or address: Retry-After the longest lock. */
static int
throttled(struct req *r, const char *email)
{
	const char *p[2] = { pair_key(r, email), client_addr(r) };
	PGresult *res = db_query(r, &stmts[T_CHECK], 2, p);
	long long left;

	if (res == NULL)
		return api_db_error(r);
	left = atoll(PQgetvalue(res, 0, TC_LEFT_SECS));
	req_header_add(r, "Retry-After", arena_printf(r->arena, "%lld", left > 0 ? left : 1));
	return api_error(r, 429, ERR_TOO_MANY_ATTEMPTS, "wait before signing in again",
	    "too many failed sign-ins; try again in %lld seconds", left > 0 ? left : 1);
}

/* Count one attempt on (scope, key); 1 counted, 0 locked, -1 db failure. */
static int
throttle_take1(struct req *r, const char *scope, const char *key, int limit,
    int window, int delay)
{
	const char *p[6] = { scope, key, arena_printf(r->arena, "%d", limit),
	    arena_printf(r->arena, "%d", window), arena_printf(r->arena, "%d", delay),
	    arena_printf(r->arena, "%d", SIGNIN_WINDOW) };
	PGresult *res = db_query(r, &stmts[T_TAKE], 6, p);

	return res == NULL ? -1 : PQntuples(res) == 1;
}

/*
 * Count a sign-in attempt for email from this address before the password
 * is checked: 0 to go on, else the 429 (or database error) written.
 */
int
iam_throttle_take(struct req *r, const char *email)
{
	int rc;

	if ((rc = throttle_take1(r, "pair", pair_key(r, email), SIGNIN_PAIR_LIMIT,
	    SIGNIN_PAIR_WINDOW, SIGNIN_PAIR_DELAY)) == 1)
		rc = throttle_take1(r, "addr", client_addr(r), SIGNIN_ADDR_LIMIT,
		    SIGNIN_WINDOW, SIGNIN_WINDOW);
	if (rc < 0)
		return api_db_error(r);
	return rc == 1 ? 0 : throttled(r, email);
}

/* The right password: the pair starts afresh, the address gets its
 * attempt back. 0 ok, -1 db failure. */
int
iam_throttle_pass(struct req *r, const char *email)
{
	const char *pc[1] = { pair_key(r, email) };
	const char *pg[2] = { client_addr(r), arena_printf(r->arena, "%d", SIGNIN_ADDR_LIMIT) };

	return db_query(r, &stmts[T_CLEAR], 1, pc) != NULL &&
	    db_query(r, &stmts[T_GIVE_BACK], 2, pg) != NULL ? 0 : -1;
}

/* A wrong password: count it account-wide; past the ceiling, alert the
 * operator once per window. 0 ok, -1 db failure. */
int
iam_throttle_fail(struct req *r, const char *email)
{
	const char *p[3] = { email, arena_printf(r->arena, "%d", SIGNIN_ACCOUNT_ALERT),
	    arena_printf(r->arena, "%d", SIGNIN_WINDOW) };
	PGresult *res = db_query(r, &stmts[T_ACCOUNT], 3, p);

	if (res == NULL)
		return -1;
	if (PQntuples(res) == 1 && PQgetvalue(res, 0, TA_ALERTED)[0] == 't')
		log_msg("warn", "sign-in alert: %s failed sign-ins for account %s within %d"
		    " seconds (latest from %s); see bdsctl signin-alerts",
		    PQgetvalue(res, 0, TA_FAILURES), email, SIGNIN_WINDOW, client_addr(r));
	return 0;
}

int
iam_signin_alerts(struct db *db, struct arena *a, struct iam_signin_alert **out, size_t *n)
{
	PGresult *res = db_exec(db, a, &stmts[T_ALERTS], 0, NULL);
	int rows;

	*out = NULL;
	*n = 0;
	if (res == NULL)
		return -1;
	rows = PQntuples(res);
	*out = arena_alloc(a, (size_t)(rows > 0 ? rows : 1) * sizeof(**out));
	for (int i = 0; i < rows; i++) {
		(*out)[i].email = arena_strdup(a, PQgetvalue(res, i, AL_EMAIL));
		(*out)[i].failures = atoll(PQgetvalue(res, i, AL_FAILURES));
		(*out)[i].window_start = arena_strdup(a, PQgetvalue(res, i, AL_WINDOW));
		(*out)[i].alerted_at = arena_strdup(a, PQgetvalue(res, i, AL_ALERTED));
	}
	*n = (size_t)rows;
	return 0;
}
