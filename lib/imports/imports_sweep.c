/*
 * The imports module's sweeps (bdsctl jobs runs them in turn; operators run
 * it every few minutes, docs/DECISIONS.md "Bill import sweeps"):
 *
 * imports_expire_sweep	an import not committed by its expires_at (7 days
 *			after its creation) moves to EXPIRED through
 *			imports_move: lifecycle_version + 1, bill_import.updated
 *			(the sweep's request id, bdsctl-jobs);
 * imports_docs_sweep	the uploaded document of a CANCELLED or EXPIRED import,
 *			and of a REJECTED one IMPORTS_REJECTED_KEEP_DAYS after
 *			its rejection (the client may still fetch its
 *			source_document meanwhile), is unlinked and
 *			document_deleted_at set. Only files under
 *			<data_dir>/imports/ are removed: a portal import's
 *			document is its link's statement in the statements
 *			store, which bills_docs_sweep looks after (an unnamed
 *			copy goes after a day; one a bill names stays).
 *
 * Both work in batches of IMPORTS_SWEEP_BATCH rows, each batch its own
 * transaction, the rows taken FOR UPDATE SKIP LOCKED: two sweeps, or a sweep
 * and a confirm, never take the same row.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "core/arena.h"
#include "core/config.h"
#include "core/db.h"
#include "core/log.h"
#include "core/req.h"
#include "core/sweep.h"
#include "imports/imports.h"
#include "imports/imports_int.h"
#include "imports/imports_jobs.h"

#define IMPORTS_SWEEP_BATCH		200
#define IMPORTS_SWEEP_BATCHES		50	/* per run: the rest next run */
#define IMPORTS_REJECTED_KEEP_DAYS	"7"

enum { SW_EXPIRE, SW_DOCS, SW_DOC_GONE, SW__MAX };

static struct db_stmt stmts[SW__MAX] = {
	/* $1 the batch (bill_imports_open) */
	[SW_EXPIRE] = { "imports_sweep_expire",
	    "SELECT client_id, id, status FROM bill_imports"
	    " WHERE expires_at <= now()"
	    "   AND status NOT IN ('COMMITTED', 'EXPIRED', 'CANCELLED', 'REJECTED')"
	    " ORDER BY expires_at LIMIT $1::int FOR UPDATE SKIP LOCKED", 0 },
	/* $1 the batch, $2 the days a rejected import's document is kept */
	[SW_DOCS] = { "imports_sweep_docs",
	    "SELECT client_id, id, document_path FROM bill_imports"
	    " WHERE document_path IS NOT NULL AND document_deleted_at IS NULL"
	    "   AND (status IN ('EXPIRED', 'CANCELLED')"
	    "     OR (status = 'REJECTED'"
	    "         AND updated_at <= now() - make_interval(days => $2::int)))"
	    " ORDER BY updated_at LIMIT $1::int FOR UPDATE SKIP LOCKED", 0 },
	[SW_DOC_GONE] = { "imports_sweep_doc_gone",
	    "UPDATE bill_imports SET document_deleted_at = now()"
	    " WHERE client_id = $1 AND id = $2", 0 },
};
const struct db_stmt_set imports_sweep_stmt_set = { "imports_sweep", stmts, SW__MAX };

enum { E_CLIENT, E_ID, E_STATUS };
enum { D_CLIENT, D_ID, D_PATH };

/* One batch of expiries (core/sweep.h): how many moved, -1. */
static long long
expire_batch(struct req *r, int limit)
{
	const char *p[1] = { arena_printf(r->arena, "%d", limit) };
	PGresult *res;
	long long n = 0;

	if ((res = db_exec(r->db, r->arena, &stmts[SW_EXPIRE], 1, p)) == NULL)
		return -1;
	for (int i = 0; i < PQntuples(res); i++) {
		int moved = imports_move(r, PQgetvalue(res, i, E_CLIENT), PQgetvalue(res, i, E_ID),
		    PQgetvalue(res, i, E_STATUS), "EXPIRED", NULL);

		if (moved < 0)
			return -1;
		n += moved;
	}
	return n;
}

long long
imports_expire_sweep(const struct config *cfg, struct db *d, struct arena *a)
{
	return sweep_batches(cfg, d, a, IMPORTS_SWEEP_BATCH, IMPORTS_SWEEP_BATCHES, expire_batch);
}

/* One batch of documents (core/sweep.h): how many, -1. */
static long long
docs_batch(struct req *r, int limit)
{
	const char *p[2] = { arena_printf(r->arena, "%d", limit), IMPORTS_REJECTED_KEEP_DAYS };
	PGresult *res;
	int i;

	if ((res = db_exec(r->db, r->arena, &stmts[SW_DOCS], 2, p)) == NULL)
		return -1;
	for (i = 0; i < PQntuples(res); i++) {
		const char *path = PQgetvalue(res, i, D_PATH);
		const char *q[2] = { PQgetvalue(res, i, D_CLIENT), PQgetvalue(res, i, D_ID) };

		/* a file already gone (a commit that failed after its
		 * unlink) is done too */
		if (imports_path_below(r->cfg, r->arena, path) != NULL && unlink(path) != 0 && errno != ENOENT) {
			log_msg("error", "import %s: cannot remove its document: %s", q[1],
			    strerror(errno));
			continue;
		}
		if (db_exec(r->db, r->arena, &stmts[SW_DOC_GONE], 2, q) == NULL)
			return -1;
	}
	return i;
}

long long
imports_docs_sweep(const struct config *cfg, struct db *d, struct arena *a)
{
	return sweep_batches(cfg, d, a, IMPORTS_SWEEP_BATCH, IMPORTS_SWEEP_BATCHES, docs_batch);
}
