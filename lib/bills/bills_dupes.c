/*
 * A bill that an import's draft may duplicate (bills.h bills_duplicate):
 * the imports module asks here instead of reading the bills table itself.
 * The same document (statement_sha256), or the same payee, account, total
 * and due date. Bills carry the account number only masked, so an account
 * matches when the mask's visible characters (at least 4) end the draft's
 * number, separators ignored.
 */
#include <stdio.h>
#include <string.h>

#include "core/arena.h"
#include "core/db.h"
#include "core/req.h"
#include "bills/bills.h"

/* What a mask or an account number shows: letters and digits, upper case. */
#define SHOWN(x)	"upper(regexp_replace(coalesce(" x ", ''), '[^0-9A-Za-z]', '', 'g'))"

enum { DUPES_FIND, DUPES__MAX };

static struct db_stmt stmts[DUPES__MAX] = {
	/* $1 client, $2 environment, $3 client_user_id, $4 the document's
	 * hash (NULL: not by document); by figures when $9 (the due date) is
	 * given: $5 payee, $6 biller_id, $7 currency, $8 total (minor), $10
	 * the account number. The document's match first, then the oldest. */
	[DUPES_FIND] = { "bills_dupes_find",
	    "SELECT id FROM bills"
	    " WHERE client_id = $1 AND environment = $2 AND client_user_id = $3"
	    "   AND deleted_at IS NULL"
	    "   AND (statement_sha256 = $4::text"
	    "    OR ($9::date IS NOT NULL AND due_date = $9::date AND currency = $7::text"
	    "        AND total_minor = $8::bigint"
	    "        AND (lower(biller_name) = lower($5::text) OR biller_id = $6::text)"
	    "        AND length(" SHOWN("account_number_mask") ") >= 4"
	    "        AND right(" SHOWN("$10::text") ", length(" SHOWN("account_number_mask") "))"
	    "            = " SHOWN("account_number_mask") "))"
	    " ORDER BY statement_sha256 IS NOT DISTINCT FROM $4::text DESC, created_at, id"
	    " LIMIT 1", 0 },
};
const struct db_stmt_set bills_dupes_stmt_set = { "bills_dupes", stmts, DUPES__MAX };

const char *
bills_duplicate(struct req *r, const struct bills_dupe_key *k, int *err)
{
	char minor[32];
	int figures = k->due_date != NULL && k->total.currency != NULL &&
	    k->account_number != NULL && (k->payee != NULL || k->biller_id != NULL);
	const char *p[10] = { k->client_id, k->environment, k->client_user_id, k->sha,
	    k->payee, k->biller_id, k->total.currency, minor, figures ? k->due_date : NULL,
	    k->account_number };
	PGresult *res;

	*err = 0;
	snprintf(minor, sizeof(minor), "%lld", k->total.minor);
	if (k->sha == NULL && !figures)
		return NULL;
	if ((res = db_query(r, &stmts[DUPES_FIND], 10, p)) == NULL) {
		*err = 1;
		return NULL;
	}
	return PQntuples(res) > 0 ? arena_strdup(r->arena, PQgetvalue(res, 0, 0)) : NULL;
}
