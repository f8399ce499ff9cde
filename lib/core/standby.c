/* Reads on a standby with read-your-writes (standby.h). */
#include <string.h>
#include <time.h>

#include "core/arena.h"
#include "core/db.h"
#include "core/json.h"
#include "core/req.h"
#include "core/standby.h"

enum { SB_PRIMARY_LSN, SB_CAUGHT_UP, SB__MAX };
static struct db_stmt stmts[SB__MAX] = {
	[SB_PRIMARY_LSN] = { "standby_primary_lsn", "SELECT pg_current_wal_flush_lsn()", 0 },
	/* on a server that is no standby (the URL fell back to the primary)
	 * everything committed is there */
	[SB_CAUGHT_UP] = { "standby_caught_up",
	    "SELECT NOT pg_is_in_recovery() OR pg_last_wal_replay_lsn() >= $1::pg_lsn", 0 },
};
const struct db_stmt_set standby_stmt_set = { "standby", stmts, SB__MAX };


static void
sleep_ms(int ms)
{
	struct timespec ts = { 0, (long)ms * 1000000L };

	while (nanosleep(&ts, &ts) == -1)
		;
}

void
standby_begin(struct req *r)
{
	const char *p[1];
	PGresult *res;

	if (r->db_read == NULL)
		return;
	/* db_query: the round trip also confirms a cached key */
	if ((res = db_query(r, &stmts[SB_PRIMARY_LSN], 0, NULL)) == NULL || r->key_revoked)
		return;
	p[0] = arena_strdup(r->arena, PQgetvalue(res, 0, 0));
	for (int waited = 0; waited <= STANDBY_WAIT_MS; waited++) {
		if ((res = db_exec(r->db_read, r->arena, &stmts[SB_CAUGHT_UP], 1, p)) == NULL)
			return;		/* away: the primary */
		if (strcmp(PQgetvalue(res, 0, 0), "t") == 0) {
			r->db = r->db_read;
			r->read_mark = r->nheaders;
			return;
		}
		sleep_ms(1);
	}
}

PGresult *
standby_write(struct req *r, struct db_stmt *s, int nparams, const char *const *params)
{
	r->db = r->db_primary;
	return db_query(r, s, nparams, params);
}

int
standby_end(struct req *r, int rc)
{
	int again;

	if (r->db != r->db_read || r->db_read == NULL)
		return 0;
	r->db = r->db_primary;
	again = rc == 503 && db_last_fail(r->db_read) == DB_UNAVAILABLE;
	if (again) {
		r->nheaders = r->read_mark;
		r->error_code = NULL;
		r->out = json_obj(r->arena);
	}
	return again;
}
