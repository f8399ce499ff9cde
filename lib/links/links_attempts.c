/*
 * Bounded guessing in the connect flow (links_attempts.h). A link token
 * carries its own count (link_tokens.failed_attempts): it is read with the
 * token by every route that checks it, at no extra round trip. The
 * username's window is counted from connect_failures rows, one per failure,
 * keyed by the keyed hash of the username; the sandbox connector's fixture
 * usernames are shared test data with no account behind them, so its
 * billers have no username window (the token's bound still holds there).
 */
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "core/arena.h"
#include "core/config.h"
#include "core/crypto.h"
#include "core/db.h"
#include "core/errors.h"
#include "core/req.h"
#include "links/links_attempts.h"
#include "links/links_connect.h"

/* $4 (la_username) and $1 (la_sweep): LINKS_USERNAME_WINDOW_S */
#define LA_WINDOW(n)	"make_interval(secs => $" #n "::int)"

enum { LA_TOKEN, LA_USERNAME, LA_RECORD, LA_SWEEP, LA__MAX };
enum { TOKEN_FAILED };
enum { USER_COUNT, USER_RETRY_AFTER };
static struct db_stmt stmts[LA__MAX] = {
	[LA_TOKEN] = { "la_token",
	    "SELECT failed_attempts FROM link_tokens WHERE client_id = $1 AND id = $2" },
	/* the failures in the window, and the seconds until the oldest leaves it */
	[LA_USERNAME] = { "la_username",
	    "SELECT count(*), coalesce(ceil(extract(epoch FROM min(at) + " LA_WINDOW(4)
	    " - now()))::int, 0) FROM connect_failures"
	    " WHERE client_id = $1 AND biller_id = $2 AND username_hash = decode($3, 'hex')"
	    " AND at > now() - " LA_WINDOW(4)
	    " AND EXISTS (SELECT 1 FROM billers WHERE id = $2 AND connector <> 'sandbox')" },
	[LA_RECORD] = { "la_record",
	    "WITH t AS (UPDATE link_tokens SET failed_attempts = failed_attempts + 1"
	    " WHERE client_id = $1 AND id = $2 RETURNING client_id, id)"
	    " INSERT INTO connect_failures (client_id, link_token_id, biller_id, username_hash,"
	    " error_code) SELECT client_id, id, $3, decode($4, 'hex'), $5 FROM t" },
	[LA_SWEEP] = { "la_sweep",
	    "DELETE FROM connect_failures WHERE at < now() - " LA_WINDOW(1) },
};
const struct db_stmt_set links_attempts_stmt_set = { "links_attempts", stmts, LA__MAX };

const char *
links_username_hash(struct req *r, const char *username)
{
	size_t n = username != NULL ? strlen(username) : 0, i = 0;
	unsigned char h[32];
	char *norm;

	while (i < n && strchr(" \t\r\n", username[i]) != NULL)
		i++;
	while (n > i && strchr(" \t\r\n", username[n - 1]) != NULL)
		n--;
	norm = arena_strndup(r->arena, username != NULL ? username + i : "", n - i);
	for (char *c = norm; *c != '\0'; c++)
		if (*c >= 'A' && *c <= 'Z')
			*c = (char)(*c - 'A' + 'a');
	crypto_keyed_hash(r->cfg->secret_key, "connect_username", norm, h);
	sodium_memzero(norm, n - i);
	return crypto_hex_encode(r->arena, h, sizeof(h));
}

static const char *
window_s(struct arena *a)
{
	return arena_printf(a, "%d", LINKS_USERNAME_WINDOW_S);
}

/* The username's failures in the window: 0 ok (*count, *retry_after), -1. */
static int
username_count(struct req *r, const char *client_id, const char *biller_id, const char *uhash,
    long *count, int *retry_after)
{
	const char *p[4] = { client_id, biller_id, uhash, window_s(r->arena) };
	PGresult *res;

	*count = 0;
	*retry_after = 0;
	if (uhash == NULL || biller_id == NULL)
		return 0;
	if ((res = db_query(r, &stmts[LA_USERNAME], 4, p)) == NULL || PQntuples(res) != 1)
		return -1;
	*count = atol(PQgetvalue(res, 0, USER_COUNT));
	*retry_after = atoi(PQgetvalue(res, 0, USER_RETRY_AFTER));
	return 0;
}

int
links_attempts_or_reply(struct req *r, const char *client_id, long token_failures,
    const char *biller_id, const char *uhash)
{
	long count;
	int wait;

	if (token_failures >= LINKS_TOKEN_FAILURES_MAX)
		return api_error(r, 429, ERR_TOO_MANY_ATTEMPTS, "start again with a new link token",
		    "this link token has had %d failed logins or wrong answers",
		    LINKS_TOKEN_FAILURES_MAX);
	if (username_count(r, client_id, biller_id, uhash, &count, &wait) != 0)
		return api_db_error(r);
	if (count < LINKS_USERNAME_FAILURES_MAX)
		return 0;
	req_header_add(r, "Retry-After", arena_printf(r->arena, "%d", wait > 0 ? wait : 1));
	return api_error(r, 429, ERR_TOO_MANY_ATTEMPTS, "try this account again later",
	    "this biller account has had %d failed logins or wrong answers in 24 hours",
	    LINKS_USERNAME_FAILURES_MAX);
}

int
links_attempts_spent(struct req *r, const char *client_id, const char *link_token_id,
    const char *biller_id, const char *uhash)
{
	const char *p[2] = { client_id, link_token_id };
	PGresult *res;
	long count;
	int wait;

	if ((res = db_query(r, &stmts[LA_TOKEN], 2, p)) == NULL || PQntuples(res) != 1)
		return -1;
	if (atol(PQgetvalue(res, 0, TOKEN_FAILED)) >= LINKS_TOKEN_FAILURES_MAX)
		return 1;
	if (username_count(r, client_id, biller_id, uhash, &count, &wait) != 0)
		return -1;
	return count >= LINKS_USERNAME_FAILURES_MAX;
}

int
links_attempts_record(struct req *r, const char *client_id, const char *link_token_id,
    const char *biller_id, const char *uhash, const char *error_code)
{
	const char *p[5] = { client_id, link_token_id, biller_id, uhash, error_code };

	return db_exec_count(r->db, r->arena, &stmts[LA_RECORD], 5, p) == 1 ? 0 : -1;
}

long long
links_attempts_sweep(const struct config *cfg, struct db *d, struct arena *a)
{
	const char *p[1] = { window_s(a) };

	(void)cfg;
	return db_exec_count(d, a, &stmts[LA_SWEEP], 1, p);
}
