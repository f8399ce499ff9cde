/*
 * A portal's PDF-only statement becomes an import (imports.h
 * imports_from_portal), in the retrieval's transaction: source portal,
 * PROCESSING from the start (its document is already in the statements
 * store: document_path that file, document_sha256 its name), the link,
 * account, biller and statement ref of the statement, and its extraction
 * queued. One import per statement (the unique index bill_imports_portal):
 * the statement seen again, or a new revision of it, changes nothing. What
 * follows is an upload's path: READY_TO_COMMIT is committed to a bill of
 * the link at once (imports_extracted), anything else waits for the
 * client's review like an upload.
 */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "bills/bills_statement.h"
#include "core/arena.h"
#include "core/crypto.h"
#include "core/db.h"
#include "core/jobq.h"
#include "core/req.h"
#include "imports/imports.h"
#include "imports/imports_int.h"
#include "imports/imports_jobs.h"

enum { IP_INSERT, IP__MAX };

static struct db_stmt stmts[IP__MAX] = {
	/* $1 client, $2 id, $3 environment, $4 client_user_id, $5 biller, $6
	 * link, $7 account, $8 statement ref, $9 file name, $10 size, $11
	 * path, $12 sha, $13 days to expiry */
	[IP_INSERT] = { "imports_portal_insert",
	    "INSERT INTO bill_imports (client_id, id, environment, client_user_id, source,"
	    " biller_id, link_id, account_id, statement_ref, file_name, content_type,"
	    " size_bytes, status, upload_expires_at, uploaded_at, document_path,"
	    " document_sha256, expires_at)"
	    " VALUES ($1, $2, $3, $4, 'portal', $5, $6, $7, $8, $9, 'application/pdf',"
	    "  $10::bigint, 'PROCESSING', now(), now(), $11, $12,"
	    "  now() + make_interval(days => $13::int))"
	    " ON CONFLICT (client_id, link_id, statement_ref) WHERE source = 'portal'"
	    " DO NOTHING RETURNING id", 0 },
};
const struct db_stmt_set imports_portal_stmt_set = { "imports_portal", stmts, IP__MAX };

int
imports_from_portal(struct req *r, const char *client_id, const char *environment,
    const char *link_id, const char *account_id, const char *client_user_id,
    const char *biller_id, const char *statement_ref, const char *sha)
{
	const char *path = bills_docs_path(r->arena, r->cfg, sha), *p[13], *id;
	struct stat st;
	PGresult *res;

	/* a statement whose document is not stored here has nothing to read */
	if (path == NULL || stat(path, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size <= 0 ||
	    st.st_size > BILLS_DOC_MAX)
		return 0;
	id = crypto_id_new(r->arena, "bimp");
	p[0] = client_id;
	p[1] = id;
	p[2] = environment;
	p[3] = client_user_id;
	p[4] = biller_id;
	p[5] = link_id;
	p[6] = account_id;
	p[7] = statement_ref;
	p[8] = arena_printf(r->arena, "statement-%s.pdf", statement_ref);
	p[9] = arena_printf(r->arena, "%lld", (long long)st.st_size);
	p[10] = path;
	p[11] = sha;
	p[12] = arena_printf(r->arena, "%d", imports_settings(r->cfg)->imports_expiry_days);
	if ((res = db_query(r, &stmts[IP_INSERT], 13, p)) == NULL)
		return -1;
	if (PQntuples(res) != 1)
		return 0;	/* this statement's import exists */
	return jobq_add(r, IMPORTS_JOB_EXTRACT, client_id, environment, id, NULL, 0);
}
