#ifndef BDS_BILLS_STATEMENT_H
#define BDS_BILLS_STATEMENT_H
/*
 * Statement documents (DOMAIN.md "Bills and sync"): a content-addressed
 * store under config data_dir (bills_docs.c, written only by bds-jobs;
 * what connectors fetch or render, as the sandbox's PDFs), and the two routes
 * (bills_statement.c): GET /v1/bills/{id}/statement answers a signed URL
 * on the same host, GET /v1/statements/{id}?expires=&sig= checks it and
 * hands the file to nginx (X-Accel-Redirect to the internal location
 * /_statements/, which aliases <data_dir>/statements/). A FastCGI worker
 * never reads a document.
 */
#include <stddef.h>

#include "core/validate.h"

struct arena;
struct bills_link;
struct bills_statement;
struct config;
struct json_object;
struct req;
struct db_stmt_set;
struct db;

#define BILLS_DOC_MAX		(20LL << 20)	/* 20 MiB, as bill imports */
#define BILLS_STATEMENT_URL_TTL	300		/* seconds a signed URL lives */

/*
 * Store a document: <data_dir>/statements/<aa>/<sha256>.pdf, aa the first
 * two hex digits. Written to a temp file in the same directory, fsync'd,
 * renamed, the directory fsync'd: a reader sees the whole file or none.
 * Files 0640, directories 0750 (the group comes from a set-group-ID
 * statements/ directory: nginx's). A file already there is not rewritten.
 * Returns the lower-case hex SHA-256 (arena), or NULL (over BILLS_DOC_MAX,
 * empty, or an I/O failure; logged).
 */
const char *bills_docs_put(struct arena *, const struct config *,
	    const void *bytes, size_t len);
/* The file's path for a hex SHA-256 (arena); NULL when sha is not 64
 * lower-case hex digits. */
const char *bills_docs_path(struct arena *, const struct config *, const char *sha);
/*
 * bdsctl jobs, at most once a day (<data_dir>/statements/.swept): remove the
 * documents no row names (a rolled-back retrieval's, a corrected statement's
 * earlier revision) and temp files of dead writers, each only when older
 * than a day. The count removed, -1 on failure.
 */
long long bills_docs_sweep(const struct config *, struct db *, struct arena *);

/*
 * Record a stored document on a link's bill (by statement ref) in the
 * caller's transaction: sets statement_sha256 only. The bill's seq does
 * not move and nothing is emitted: the entity's has_statement (set by
 * bills_store from the statement) already says a document exists.
 * 0 ok (also when the bill already had that hash), -1 database failure.
 */
int	 bills_statement_attach(struct req *, const char *client_id, const char *link_id,
	    const char *statement_ref, const char *sha);
/*
 * GET /v1/bills/{id}/statement (API key): 200 {url, expires_at}, a URL on
 * the host the call came to, valid BILLS_STATEMENT_URL_TTL seconds. 404
 * BILL_NOT_FOUND (unknown, deleted, another client's or environment's),
 * 404 STATEMENT_NOT_FOUND (the bill has no document).
 */
int	 bills_statement_get(struct req *, struct json_object *);
/*
 * GET /v1/statements/{id}?expires=&sig= (no credential: the signature is
 * one). 200 with no body and X-Accel-Redirect: /_statements/<aa>/<sha>.pdf,
 * Content-Type the bill's statement_type (application/pdf, or image/png,
 * image/jpeg for an imported image), Content-Disposition attachment
 * (<bill number or id>.pdf|.png|.jpg); 403
 * INVALID_SIGNATURE (bad, tampered, another bill's or host's, unknown
 * bill), 403 URL_EXPIRED (a genuine URL past its expiry), 404
 * STATEMENT_NOT_FOUND (genuine, but the bill or its document is gone).
 */
int	 bills_statement_download(struct req *, struct json_object *);
extern const struct vfield bills_statement_download_query[];

extern const struct db_stmt_set bills_statement_stmt_set;
extern const struct db_stmt_set bills_docs_stmt_set;

#endif
