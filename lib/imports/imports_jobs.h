#ifndef BDS_IMPORTS_JOBS_H
#define BDS_IMPORTS_JOBS_H
/*
 * Inside the imports module: what bds-jobs and bdsctl jobs run of it
 * besides imports.h: the extraction's outcome (imports_extracted.c), the
 * portal's statements (imports_portal.c) and the sweeps (imports_sweep.c),
 * for the module's descriptor.
 */
struct arena;
struct config;
struct db;
struct db_stmt_set;

/* Uncommitted imports past expires_at → EXPIRED (bill_import.updated).
 * The count, -1 on a database failure. */
long long imports_expire_sweep(const struct config *, struct db *, struct arena *);
/* Documents of CANCELLED and EXPIRED imports, and of REJECTED ones after
 * 7 days, removed (document_deleted_at). The count, -1. */
long long imports_docs_sweep(const struct config *, struct db *, struct arena *);

extern const struct db_stmt_set imports_extracted_stmt_set;
extern const struct db_stmt_set imports_portal_stmt_set;
extern const struct db_stmt_set imports_sweep_stmt_set;

#endif
