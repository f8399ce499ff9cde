#ifndef BDS_IMPORTS_H
#define BDS_IMPORTS_H
/*
 * Bill imports (DOMAIN.md "Bill imports", sql/100_bill_imports.sql): a
 * document uploaded for a client's user, or a PDF-only statement of a
 * portal, extracted by bds-jobs (lib/jobs/jobs_extract.c running
 * bds-extract) into a draft, reviewed and committed to one bill.
 *
 * What the rest of the service calls: the jobs runner's extraction kind and
 * the retrieval's PDF-only statements. Every status move goes through
 * imports_move, which bumps lifecycle_version and emits bill_import.updated
 * in the caller's transaction.
 */
#include <stddef.h>

#include "core/module.h"

struct arena;
struct config;
struct db;
struct json_object;
struct req;
struct db_stmt_set;

/* the job kind of an extraction, its subject the import id */
#define IMPORTS_JOB_EXTRACT	"imports.extract"

/* One import as its row stands (strings in the arena). */
struct imports_row {
	const char	*client_id, *environment, *id, *client_user_id, *source;
	const char	*biller_id, *link_id, *account_id, *statement_ref;
	const char	*file_name, *content_type, *status;
	long long	 size_bytes;
	int		 lifecycle_version, draft_version;
	const char	*document_path, *document_sha256;	/* NULL: none yet */
	struct json_object *draft;				/* {} before extraction */
};

/*
 * Read import id of client_id (no lock; FOR UPDATE when lock, inside the
 * caller's transaction). 1 found, 0 not, -1 database failure.
 */
int	 imports_get(struct req *, const char *client_id, const char *id, int lock,
	    struct imports_row *out);

/* What a status move writes besides the status (NULL / -1: unchanged). */
struct imports_set {
	struct json_object *draft;	/* the new draft: draft_version + 1 */
	struct json_object *extraction;	/* bds-extract's facts */
	const char	*document_sha256;
	const char	*duplicate_of;
	const char	*rejection_reason;
	const char	*committed_bill_id;
};

/*
 * Move import id from status `from` (NULL: any) to `to` in the caller's
 * transaction, writing what s sets, lifecycle_version + 1, updated_at, and
 * emit bill_import.updated (bill_import_id, client_id, client_user_id,
 * status, lifecycle_version, committed_bill_id, updated_at).
 * 1 moved, 0 the import was not in `from` (nothing written), -1 failure.
 */
int	 imports_move(struct req *, const char *client_id, const char *id,
	    const char *from, const char *to, const struct imports_set *s);

/*
 * The extraction's outcome, in the job's transaction (imports_extracted.c):
 * result is bds-extract's answer ({"outcome":"extracted", "draft", ...} or
 * {"outcome":"rejected", "rejection_reason"}), sha the document's SHA-256.
 * Moves PROCESSING to REJECTED, POSSIBLE_DUPLICATE, NEEDS_REVIEW or
 * READY_TO_COMMIT; a portal import that is READY_TO_COMMIT is committed to
 * a bill of its link at once. 0 ok (also when the import was no longer
 * PROCESSING: nothing written), -1 failure.
 */
int	 imports_extracted(struct req *, const char *client_id, const char *id,
	    const char *sha, struct json_object *result);

/*
 * Commit an import's draft to a bill (imports_review.c), in the caller's
 * transaction, the import locked: the bill is written by the bills store
 * (source import, or its link's connector source for a portal import), the
 * import moves to COMMITTED with committed_bill_id. 1 committed with
 * *bill_id set, 0 the draft lacks what a bill needs (total amount and
 * currency), -1 failure.
 */
int	 imports_commit(struct req *, const struct imports_row *imp, const char **bill_id);

/*
 * A link's PDF-only statement whose document is stored (sha, in the
 * statements store) becomes an import of source portal, PROCESSING, with
 * its extraction queued; the same statement again changes nothing.
 * In the retrieval's transaction. 0 ok, -1 failure.
 */
int	 imports_from_portal(struct req *, const char *client_id, const char *environment,
	    const char *link_id, const char *account_id, const char *client_user_id,
	    const char *biller_id, const char *statement_ref, const char *sha);

/* The usage metric computed from its rows (core/module.h; imports_usage.c). */
extern const struct db_stmt_set imports_usage_stmt_set;
extern const struct module_usage imports_usage[];

#endif
