#ifndef BDS_IMPORTS_INT_H
#define BDS_IMPORTS_INT_H
/*
 * Inside the imports module: its settings block, the whole row of an
 * import and the record the API shows (imports_store.c), the statement
 * sets its descriptor lists. Other modules use imports.h only.
 */
#include <stddef.h>

#include "core/config.h"
#include "imports/imports.h"

struct arena;
struct json_object;
struct req;

extern const struct module imports_module;

/*
 * The module's settings (imports_module.c lists the keys; add a member and
 * its key there together).
 */
struct imports_settings {
	int	 imports_upload_ttl;		/* seconds an upload URL lives */
	int	 imports_document_url_ttl;	/* seconds a source_document URL lives */
	int	 imports_expiry_days;		/* uncommitted imports expire after */
};

static inline const struct imports_settings *
imports_settings(const struct config *c)
{
	return config_module(c, &imports_module);
}

/* Everything of a row imports_read returns (strings in the arena, NULL for
 * SQL NULL): the row of imports.h and what the record adds. */
struct imports_rec {
	struct imports_row row;
	const char	*duplicate_of, *rejection_reason, *committed_bill_id;
	const char	*expires_at, *created_at, *updated_at;	/* ISO 8601 */
	const char	*upload_expires_at, *uploaded_at;
	long long	 upload_expires;	/* upload_expires_at, epoch seconds */
	int		 document_deleted;	/* the sweep removed the file */
};

/* imports_get with the whole row; client_id NULL: by id alone (a signed
 * URL's import, before anything names its client). 1 found, 0 not, -1
 * database failure. */
int	 imports_read(struct req *, const char *client_id, const char *id, int lock,
	    struct imports_rec *out);
/* A new import of r's client and environment (POST /v1/bill_imports). */
struct imports_new {
	const char	*id, *client_user_id, *biller_id, *file_name, *content_type;
	long long	 size_bytes;
	long long	 upload_expires;	/* the upload URL's expiry, epoch seconds */
};
/* Insert it AWAITING_UPLOAD, expiring after imports_expiry_days; *out the
 * row. 0 ok, -1 database failure. */
int	 imports_insert(struct req *, const struct imports_new *, struct imports_rec *out);
/* Record the uploaded document's path (uploaded_at now) while the import is
 * AWAITING_UPLOAD without one. 1 recorded, 0 not (uploaded already or
 * moved on), -1 database failure. */
int	 imports_uploaded(struct req *, const char *client_id, const char *id, const char *path);
/* imports_move that fills *after (may be NULL) with the row as moved. */
int	 imports_move_rec(struct req *, const char *client_id, const char *id,
	    const char *from, const char *to, const struct imports_set *s,
	    struct imports_rec *after);
/*
 * The record the API shows (DOMAIN.md "Bill imports"): id, object
 * "bill_import", client_user_id, status, lifecycle_version, draft_version,
 * draft, duplicate_of, rejection_reason, committed_bill_id, expires_at,
 * created_at, updated_at; and what v1 adds: source, biller_id, file_name,
 * content_type, size_bytes, uploaded_at, and the deprecated amount_due
 * (number), due_date and currency, read from the draft (null before).
 * Arena-owned.
 */
struct json_object *imports_entity(struct req *, const struct imports_rec *);

/*
 * The import {id} of the path for r's client and environment, locked for
 * a write when lock; with client_user_id (not NULL) only that end user's:
 * 0 with *w filled, or the status written (404 BILL_IMPORT_NOT_FOUND for an
 * unknown id and for another client's, environment's or user's; 503).
 */
int	 imports_or_reply(struct req *, const char *client_user_id, int lock,
	    struct imports_rec *w);

/* The signed upload URL of import id for r's client, on r's host
 * (imports_upload.c checks it). Arena string. */
const char *imports_upload_url(struct req *, const char *id, long long expires);

/*
 * path below <data_dir>/imports/, relative to it (a pointer into path);
 * NULL when it is elsewhere, names the directory itself, or has a ".." or
 * "/./" in it. The one test before a document is served or deleted.
 */
const char *imports_path_below(const struct config *, struct arena *, const char *path);

extern const struct db_stmt_set imports_store_stmt_set;

#endif
