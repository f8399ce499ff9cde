#ifndef BDS_BILLERS_LOGOS_H
#define BDS_BILLERS_LOGOS_H
/*
 * Biller logos as the connect page shows them: stored copies served by the
 * link host at /logos/<biller_id>.<ext> (the picker's logo_src), never the
 * catalog's logo_url hot-linked (the page keeps CSP img-src 'self'). See
 * billers_logos.c; the fetch is bds-jobs' (lib/jobs/jobs_logos.c).
 */
#include <stddef.h>

struct arena;
struct config;
struct db;
struct db_stmt_set;
struct req;

#define BILLERS_LOGO_MAX	(256 * 1024)	/* bytes */
#define BILLERS_JOB_LOGO	"billers.logo"	/* subject: the biller id; global */

/*
 * The stored extension of a logo's bytes ("png", "jpg", "webp", "svg") as
 * libmagic reads the content, or NULL with *why (static) when it is empty,
 * over BILLERS_LOGO_MAX, of another type, or an SVG with script, entities
 * or embedded content.
 */
const char *billers_logo_type(const unsigned char *bytes, size_t len, const char **why);
/*
 * Check (billers_logo_type) and store a logo of biller_id: the file
 * <data_dir>/logos/<biller_id>.<ext> replaced, any other type's file of it
 * removed, biller_logos upserted with source_url (NULL: shipped with the
 * catalog). In d's transaction when one is open. 0, or -1 with *why.
 */
int	 billers_logo_store(const struct config *, struct db *, struct arena *,
	    const char *biller_id, const unsigned char *bytes, size_t len,
	    const char *source_url, const char **why);
/* The biller's logo_url now (arena), NULL when it has none (*err 0) or on
 * a database failure (*err 1). */
const char *billers_logo_source(struct req *, const char *biller_id, int *err);

/* bdsctl billers import: the logos shipped beside the CSV
 * (<csv dir>/logos/<biller_id>.<ext>) of billers in the catalog stored.
 * How many, -1 on failure (said on stderr). */
long long billers_logos_load_dir(const struct config *, struct db *, struct arena *,
	    const char *csv_path);
/* Queue the fetch of the logo of biller_id (NULL: of every biller whose
 * logo_url is not its stored logo's source). How many, -1. */
long long billers_logos_queue(const struct config *, struct db *, struct arena *,
	    const char *biller_id);

/* bdsctl billers import FILE [--fetch-logos], after the rows: the shipped
 * logos stored and, with fetch, the changed logo_urls' fetches queued;
 * counts printed. 0, -1 (said). */
int	 billers_logos_import(const struct config *, struct db *, struct arena *,
	    const char *csv_path, int fetch);
/* bdsctl billers fetch-logos [ID]: billers_logos_queue, printed. 0, -1. */
int	 billers_logos_fetch(const struct config *, struct db *, struct arena *,
	    const char *biller_id);

extern const struct db_stmt_set billers_logos_stmt_set;

#endif
