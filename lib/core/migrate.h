#ifndef BDS_MIGRATE_H
#define BDS_MIGRATE_H
/*
 * The schema: sql/NNN_name.sql migrations applied in order and recorded in
 * schema_migrations, and sql/seed/NNN_name.sql development data. Each file
 * is applied whole in its own transaction (a failing file changes
 * nothing). Migrations run under an advisory lock, so two migrators at once
 * are safe: the second waits, then finds nothing to do.
 */
struct arena;
struct db;
struct db_stmt_set;

/* Called after each file is applied, with its name (e.g. to print it). */
typedef void (*migrate_cb)(const char *name, void *arg);

/*
 * Apply the migrations of dir not yet recorded. Returns how many were
 * applied (*total: how many dir holds), or -1 with err filled (what failed:
 * a file, its name and the database's message).
 */
int	 migrate_apply(struct db *, struct arena *, const char *dir, migrate_cb,
	    void *arg, int *total, char *err, size_t errlen);

/*
 * Apply every file of dir (seed files are idempotent: ON CONFLICT DO
 * NOTHING), none recorded. Returns how many, or -1 with err filled.
 */
int	 migrate_seed(struct db *, struct arena *, const char *dir, migrate_cb,
	    void *arg, char *err, size_t errlen);

extern const struct db_stmt_set migrate_stmt_set;

#endif
