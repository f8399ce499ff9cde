#ifndef BDS_IMPORTS_REVIEW_H
#define BDS_IMPORTS_REVIEW_H
/*
 * The review and the commit of a bill import (imports_review.c; SPEC.md
 * "Bill imports (KEY)"; docs/DECISIONS.md "Reviewing and confirming a bill
 * import"). Both routes take x-client-user-id (another end user's import
 * is 404 BILL_IMPORT_NOT_FOUND) and lock the import's row, so of two
 * calls carrying the same draft_version exactly one wins.
 */
#include "core/validate.h"

struct db_stmt_set;
struct json_object;
struct req;

/*
 * PATCH /v1/bill_imports/{id}/review_draft {changes, draft_version}: the
 * changes applied to the draft (imports_changes.h), draft_version + 1,
 * the checks recomputed; the status then follows the draft: NEEDS_REVIEW
 * and READY_TO_COMMIT move to what ex_draft_ready says (through
 * imports_move), POSSIBLE_DUPLICATE stays. 200 the whole record. 409
 * DRAFT_VERSION_CONFLICT when draft_version is not the draft's; 409
 * BILL_IMPORT_ALREADY_COMMITTED; 409 BILL_IMPORT_STATE_CONFLICT in any
 * status but the three; 400 VALIDATION_ERROR naming changes.<key>...
 */
int	 imports_review(struct req *, struct json_object *);
extern const struct vfield imports_review_fields[];
/*
 * POST /v1/bill_imports/{id}/confirm {final_changes, draft_version?}: the
 * final changes applied as review_draft does, then the import committed
 * (imports_commit): 200 {outcome "committed", bill (the bill entity,
 * as GET /v1/bills/{id} shows it), bill_import (the record, COMMITTED)}.
 * 400 VALIDATION_ERROR naming final_changes.total_amount when the draft
 * then has no total amount with its currency; the 409s of review_draft
 * (draft_version only when given).
 */
int	 imports_confirm(struct req *, struct json_object *);
extern const struct vfield imports_confirm_fields[];

extern const struct db_stmt_set imports_review_stmt_set;

#endif
