/* Migrations and seed files: whole files, a transaction each. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/arena.h"
#include "core/db.h"
#include "core/migrate.h"

/* The advisory lock every migrator takes (any constant of this project). */
#define MIGRATE_LOCK	"7415001"

enum { MG_LOCK, MG_UNLOCK, MG_DONE, MG_RECORD, MG__MAX };
static struct db_stmt stmts[MG__MAX] = {
	[MG_LOCK] = { "migrate_lock", "SELECT pg_advisory_lock(" MIGRATE_LOCK ")", 0 },
	[MG_UNLOCK] = { "migrate_unlock", "SELECT pg_advisory_unlock(" MIGRATE_LOCK ")", 0 },
	[MG_DONE] = { "migrate_done",
	    "SELECT 1 FROM schema_migrations WHERE version = $1", 0 },
	[MG_RECORD] = { "migrate_record",
	    "INSERT INTO schema_migrations (version) VALUES ($1)", 0 },
};
const struct db_stmt_set migrate_stmt_set = { "migrate", stmts, MG__MAX };

/* DDL cannot be prepared; a constant, run as a script. */
static const char migrate_table[] =
    "CREATE TABLE IF NOT EXISTS schema_migrations ("
    " version text PRIMARY KEY,"
    " applied_at timestamptz NOT NULL DEFAULT now())";

/* A whole file in the arena, NULL when it cannot be read. */
static char *
slurp(struct arena *a, const char *path)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	long len;

	if (f == NULL)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (len = ftell(f)) >= 0 &&
	    fseek(f, 0, SEEK_SET) == 0) {
		buf = arena_alloc(a, (size_t)len + 1);
		if (fread(buf, 1, (size_t)len, f) != (size_t)len)
			buf = NULL;
		else
			buf[len] = '\0';
	}
	fclose(f);
	return buf;
}

static int
is_sql_name(const char *s)
{
	size_t len = strlen(s);

	return len > 8 && s[0] >= '0' && s[0] <= '9' && s[1] >= '0' && s[1] <= '9' &&
	    s[2] >= '0' && s[2] <= '9' && s[3] == '_' && strcmp(s + len - 4, ".sql") == 0;
}

/* NNN_name.sql files of dir, sorted, in the arena; the count or -1. */
static int
sql_files(struct arena *a, const char *dir, char ***out)
{
	struct dirent **ents;
	int n, k = 0;

	if ((n = scandir(dir, &ents, NULL, alphasort)) < 0)
		return -1;
	*out = arena_alloc(a, ((size_t)n + 1) * sizeof(char *));
	for (int i = 0; i < n; i++) {
		if (is_sql_name(ents[i]->d_name))
			(*out)[k++] = arena_strdup(a, ents[i]->d_name);
		free(ents[i]);
	}
	free(ents);
	return k;
}

/* One file in its own transaction, recorded when record is set. */
static int
apply_file(struct db *d, struct arena *a, const char *dir, const char *name,
    int record, char *err, size_t errlen)
{
	const char *path = arena_printf(a, "%s/%s", dir, name), *p[1] = { name };
	char *sql;

	if ((sql = slurp(a, path)) == NULL) {
		snprintf(err, errlen, "cannot read %s: %s", path, strerror(errno));
		return -1;
	}
	if (db_begin(d) != 0 || db_exec_script(d, sql) != 0 ||
	    (record && db_exec(d, a, &stmts[MG_RECORD], 1, p) == NULL) ||
	    db_commit(d) != 0) {
		snprintf(err, errlen, "%s: %s", name, db_errmsg(d));
		db_rollback(d);
		return -1;
	}
	return 0;
}

int
migrate_apply(struct db *d, struct arena *a, const char *dir, migrate_cb cb,
    void *arg, int *total, char *err, size_t errlen)
{
	char **files;
	int n, applied = 0;

	*total = 0;
	if (db_exec(d, a, &stmts[MG_LOCK], 0, NULL) == NULL ||
	    db_exec_script(d, migrate_table) != 0) {
		snprintf(err, errlen, "schema_migrations: %s", db_errmsg(d));
		return -1;
	}
	if ((n = sql_files(a, dir, &files)) < 0) {
		snprintf(err, errlen, "cannot read %s: %s", dir, strerror(errno));
		applied = -1;
	}
	for (int i = 0; i < n && applied >= 0; i++) {
		const char *p[1] = { files[i] };
		PGresult *res = db_exec(d, a, &stmts[MG_DONE], 1, p);

		if (res == NULL) {
			snprintf(err, errlen, "schema_migrations: %s", db_errmsg(d));
			applied = -1;
		} else if (PQntuples(res) == 0) {
			if (apply_file(d, a, dir, files[i], 1, err, errlen) != 0) {
				applied = -1;
			} else {
				cb(files[i], arg);
				applied++;
			}
		}
	}
	/* the session's end releases it too */
	(void)db_exec(d, a, &stmts[MG_UNLOCK], 0, NULL);
	*total = n > 0 ? n : 0;
	return applied;
}

int
migrate_seed(struct db *d, struct arena *a, const char *dir, migrate_cb cb,
    void *arg, char *err, size_t errlen)
{
	char **files;
	int n;

	if ((n = sql_files(a, dir, &files)) < 0) {
		snprintf(err, errlen, "cannot read %s: %s", dir, strerror(errno));
		return -1;
	}
	for (int i = 0; i < n; i++) {
		if (apply_file(d, a, dir, files[i], 0, err, errlen) != 0)
			return -1;
		cb(files[i], arg);
	}
	return n;
}
