/* Reads on a standby with read-your-writes (standby.h). */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/arena.h"
#include "core/db.h"
#include "core/json.h"
#include "core/req.h"
#include "core/standby.h"

enum { SB_PRIMARY_LSN, SB_REPLAYED, SB__MAX };
static struct db_stmt stmts[SB__MAX] = {
	[SB_PRIMARY_LSN] = { "standby_primary_lsn", "SELECT pg_current_wal_flush_lsn()", 0 },
	/* how far the standby has replayed; on a server that is no standby
	 * (the URL fell back to the primary) everything committed is there */
	[SB_REPLAYED] = { "standby_replayed",
	    "SELECT CASE WHEN pg_is_in_recovery() THEN pg_last_wal_replay_lsn()"
	    " ELSE 'FFFFFFFF/FFFFFFFF' END", 0 },
};
const struct db_stmt_set standby_stmt_set = { "standby", stmts, SB__MAX };

/*
 * The replay position the read connection last reported, for its
 * connection generation: replay only moves forward, so while the primary's
 * position is not past it no question to the standby is needed (a
 * read-mostly load asks the standby almost never). A new connection (maybe
 * to another standby) starts over.
 */
static uint64_t replayed;
static unsigned replayed_gen;

/* "X/Y" (pg_lsn's text) as a number; 0 when it is not one. */
static uint64_t
lsn_of(const char *s)
{
	unsigned long hi, lo;
	char *end;

	hi = strtoul(s, &end, 16);
	if (*end != '/')
		return 0;
	lo = strtoul(end + 1, &end, 16);
	if (*end != '\0' || hi > 0xFFFFFFFFul || lo > 0xFFFFFFFFul)
		return 0;
	return (uint64_t)hi << 32 | lo;
}

static void
sleep_ms(int ms)
{
	struct timespec ts = { 0, (long)ms * 1000000L };

	while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
		;
}

static int
caught_up(struct req *r, uint64_t primary)
{
	PGresult *res;

	if (db_connected(r->db_read) && replayed_gen == db_conn_gen(r->db_read) &&
	    replayed >= primary)
		return 1;
	if ((res = db_exec(r->db_read, r->arena, &stmts[SB_REPLAYED], 0, NULL)) == NULL)
		return -1;
	replayed = PQgetisnull(res, 0, 0) ? 0 : lsn_of(PQgetvalue(res, 0, 0));
	replayed_gen = db_conn_gen(r->db_read);
	return replayed >= primary;
}

void
standby_begin(struct req *r)
{
	uint64_t primary;
	PGresult *res;
	int rc;

	if (r->db_read == NULL)
		return;
	/* db_query: the round trip also confirms a cached key */
	if ((res = db_query(r, &stmts[SB_PRIMARY_LSN], 0, NULL)) == NULL || r->key_revoked ||
	    (primary = lsn_of(PQgetvalue(res, 0, 0))) == 0)
		return;
	for (int waited = 0; waited <= STANDBY_WAIT_MS; waited++) {
		if ((rc = caught_up(r, primary)) < 0)
			return;		/* away: the primary */
		if (rc == 1) {
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
