/*
 * An extraction's outcome (imports.h imports_extracted), in the job's
 * transaction, the import locked while it is still PROCESSING:
 *
 *   rejected	REJECTED with the answer's rejection_reason;
 *   duplicate	POSSIBLE_DUPLICATE with duplicate_of, when the client's user
 *		has the same document in another open or committed import
 *		(its bill's id when committed) or a bill, or the same payee +
 *		account number + total + due date in an import's draft or a
 *		bill (bills_duplicate: the bills module answers for its table);
 *   ready	READY_TO_COMMIT when bds-extract said ready and
 *		ex_draft_ready agrees, else NEEDS_REVIEW.
 *
 * The draft and the extraction's facts (the answer without its draft, and
 * the reason a draft needs review) are written by the same move. A portal
 * import that is READY_TO_COMMIT is committed to a bill of its link at
 * once (imports_commit).
 */
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "bills/bills.h"
#include "core/arena.h"
#include "core/db.h"
#include "core/json.h"
#include "core/log.h"
#include "core/money.h"
#include "core/req.h"
#include "imports/extract/extract.h"
#include "imports/imports.h"
#include "imports/imports_changes.h"
#include "imports/imports_int.h"
#include "imports/imports_jobs.h"

/* A draft field's value as jsonb text: draft #>> '{field,value}'. */
#define DRAFT(path)	"draft #>> '{" path "}'"
#define SHOWN(x)	"upper(regexp_replace(coalesce(" x ", ''), '[^0-9A-Za-z]', '', 'g'))"
/* the imports a new one may duplicate: not given up on */
#define OPEN_OR_DONE	"status NOT IN ('CANCELLED', 'REJECTED', 'EXPIRED')"

enum { IE_BY_SHA, IE_BY_FIELDS, IE__MAX };

static struct db_stmt stmts[IE__MAX] = {
	/* $1 client, $2 environment, $3 client_user_id, $4 this import */
	[IE_BY_SHA] = { "imports_dupe_sha",
	    "SELECT coalesce(committed_bill_id, id) FROM bill_imports"
	    " WHERE client_id = $1 AND environment = $2 AND client_user_id = $3"
	    "   AND document_sha256 = $5 AND id <> $4 AND " OPEN_OR_DONE
	    " ORDER BY created_at, id LIMIT 1", 0 },
	/* $5 payee, $6 account number, $7 total, $8 currency, $9 due date */
	[IE_BY_FIELDS] = { "imports_dupe_fields",
	    "SELECT coalesce(committed_bill_id, id) FROM bill_imports"
	    " WHERE client_id = $1 AND environment = $2 AND client_user_id = $3"
	    "   AND id <> $4 AND " OPEN_OR_DONE
	    "   AND lower(" DRAFT("payee_name,value") ") = lower($5)"
	    "   AND " SHOWN(DRAFT("account_number,value")) " = " SHOWN("$6::text")
	    "   AND " DRAFT("total_amount,value,value") " = $7"
	    "   AND " DRAFT("total_amount,value,currency") " = $8"
	    "   AND " DRAFT("due_date_iso,value") " = $9"
	    " ORDER BY created_at, id LIMIT 1", 0 },
};
const struct db_stmt_set imports_extracted_stmt_set = { "imports_extracted", stmts, IE__MAX };

/* The draft's figures as the duplicate checks compare them. */
struct figures {
	const char	*payee, *account, *amount, *currency, *due;
	long long	 minor;
	int		 complete;	/* all five found and the amount parsed */
};

static void
figures_of(struct json_object *draft, struct figures *f)
{
	struct json_object *v;
	int exp;

	memset(f, 0, sizeof(*f));
	f->payee = imports_draft_str(draft, "payee_name");
	f->account = imports_draft_str(draft, "account_number");
	f->due = imports_draft_str(draft, "due_date_iso");
	if ((v = imports_draft_value(draft, "total_amount", json_type_object)) != NULL) {
		f->amount = json_get_str(v, "value");
		f->currency = json_get_str(v, "currency");
	}
	f->complete = f->payee != NULL && f->account != NULL && f->due != NULL &&
	    f->amount != NULL && (exp = money_exponent(f->currency)) >= 0 &&
	    money_parse(f->amount, exp, 0, &f->minor) == MONEY_OK;
}

/* The first row's text of stmt, or NULL (*err on a database failure). */
static const char *
first(struct req *r, int stmt, int n, const char *const *p, int *err)
{
	PGresult *res = db_query(r, &stmts[stmt], n, p);

	if (res == NULL) {
		*err = 1;
		return NULL;
	}
	return PQntuples(res) > 0 ? arena_strdup(r->arena, PQgetvalue(res, 0, 0)) : NULL;
}

/*
 * What imp duplicates (an import's or a bill's id), by document first,
 * then by figures; NULL. *err on a database failure.
 */
static const char *
duplicate_of(struct req *r, const struct imports_row *imp, const char *sha,
    struct json_object *draft, int *err)
{
	struct bills_dupe_key k;
	struct figures f;
	const char *p[9] = { imp->client_id, imp->environment, imp->client_user_id, imp->id,
	    sha }, *d;

	*err = 0;
	figures_of(draft, &f);
	if (sha != NULL && ((d = first(r, IE_BY_SHA, 5, p, err)) != NULL || *err))
		return d;
	memset(&k, 0, sizeof(k));
	k.client_id = imp->client_id;
	k.environment = imp->environment;
	k.client_user_id = imp->client_user_id;
	k.sha = sha;
	if (f.complete) {
		k.payee = f.payee;
		k.biller_id = imp->biller_id;
		k.account_number = f.account;
		k.due_date = f.due;
		k.total.minor = f.minor;
		k.total.currency = f.currency;
	}
	/* the bills': by document, then by figures */
	if ((d = bills_duplicate(r, &k, err)) != NULL || *err)
		return d;
	if (!f.complete)
		return NULL;
	p[4] = f.payee;
	p[5] = f.account;
	p[6] = f.amount;
	p[7] = f.currency;
	p[8] = f.due;
	return first(r, IE_BY_FIELDS, 9, p, err);
}

/* The answer's facts: every member but the draft. */
static struct json_object *
facts_of(struct req *r, struct json_object *result)
{
	struct json_object *o = json_obj(r->arena);

	json_object_object_foreach(result, key, val) {
		if (strcmp(key, "draft") != 0)
			json_set(o, key, json_object_get(val));
	}
	return o;
}

int
imports_extracted(struct req *r, const char *client_id, const char *id, const char *sha,
    struct json_object *result)
{
	struct imports_set s;
	struct imports_row imp;
	struct json_object *draft = NULL;
	const char *outcome = json_get_str(result, "outcome"), *to, *why = NULL, *bill;
	int err, ready;

	switch (imports_get(r, client_id, id, 1, &imp)) {
	case -1:
		return -1;
	case 0:
		return 0;
	}
	if (strcmp(imp.status, "PROCESSING") != 0)
		return 0;
	memset(&s, 0, sizeof(s));
	s.document_sha256 = sha;
	s.extraction = facts_of(r, result);
	if (outcome == NULL || strcmp(outcome, "extracted") != 0 ||
	    !json_object_object_get_ex(result, "draft", &draft) ||
	    !json_object_is_type(draft, json_type_object)) {
		s.rejection_reason = json_get_str(result, "rejection_reason");
		if (s.rejection_reason == NULL)
			s.rejection_reason = "extraction_failed";
		return imports_move(r, client_id, id, "PROCESSING", "REJECTED", &s) < 0 ? -1 : 0;
	}
	s.draft = draft;
	if ((s.duplicate_of = duplicate_of(r, &imp, sha, draft, &err)) == NULL && err)
		return -1;
	if (s.duplicate_of != NULL)
		return imports_move(r, client_id, id, "PROCESSING", "POSSIBLE_DUPLICATE",
		    &s) < 0 ? -1 : 0;
	/* bds-extract's word, and ours on the draft as it is stored */
	ready = json_get_bool(result, "ready", 0);
	if (!ex_draft_ready(draft, &why))
		ready = 0;
	else if (!ready)
		why = json_get_str(result, "why");
	if (!ready)
		json_set_str(s.extraction, "review_reason", why);
	to = ready ? "READY_TO_COMMIT" : "NEEDS_REVIEW";
	if (imports_move(r, client_id, id, "PROCESSING", to, &s) < 0)
		return -1;
	if (!ready || strcmp(imp.source, "portal") != 0)
		return 0;
	/* a portal statement ready as extracted: its link's bill at once */
	if (imports_get(r, client_id, id, 1, &imp) != 1 ||
	    imports_commit(r, &imp, &bill) < 0)
		return -1;
	return 0;
}
