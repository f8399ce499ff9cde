/*
 * bdsctl: the operator CLI. One table of commands; each takes the loaded
 * configuration and its own arguments.
 */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>

#include "core/config.h"
#include "core/validate.h"

struct cmd {
	const char	*name;
	const char	*help;
	int		(*fn)(const struct config *, PGconn *, int, char **);
};

static int
ok_result(PGconn *c, PGresult *res, const char *what)
{
	ExecStatusType st = PQresultStatus(res);

	if (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK || st == PGRES_EMPTY_QUERY)
		return 1;
	fprintf(stderr, "bdsctl: %s: %s", what, PQerrorMessage(c));
	return 0;
}

static int
exec_ok(PGconn *c, const char *sql, const char *what)
{
	PGresult *res = PQexec(c, sql);
	int ok = ok_result(c, res, what);

	PQclear(res);
	return ok;
}

static char *
slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	long len;

	if (f == NULL)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (len = ftell(f)) >= 0 &&
	    fseek(f, 0, SEEK_SET) == 0 && (buf = malloc((size_t)len + 1)) != NULL) {
		if (fread(buf, 1, (size_t)len, f) != (size_t)len) {
			free(buf);
			buf = NULL;
		} else {
			buf[len] = '\0';
		}
	}
	fclose(f);
	return buf;
}

/* NNN_name.sql files of dir, sorted. Returns the count (names malloc'ed). */
static int
sql_files(const char *dir, char ***out)
{
	struct dirent **ents;
	int n, k = 0;

	*out = NULL;
	if ((n = scandir(dir, &ents, NULL, alphasort)) < 0)
		return -1;
	*out = calloc((size_t)n + 1, sizeof(char *));
	for (int i = 0; i < n; i++) {
		const char *s = ents[i]->d_name;
		size_t len = strlen(s);

		if (*out != NULL && len > 8 && s[0] >= '0' && s[0] <= '9' &&
		    s[1] >= '0' && s[1] <= '9' && s[2] >= '0' && s[2] <= '9' &&
		    s[3] == '_' && strcmp(s + len - 4, ".sql") == 0)
			(*out)[k++] = strdup(s);
		free(ents[i]);
	}
	free(ents);
	return *out == NULL ? -1 : k;
}

static void
free_list(char **l, int n)
{
	for (int i = 0; i < n; i++)
		free(l[i]);
	free(l);
}

/* Run one file in its own transaction; record it when stmt is not NULL. */
static int
apply_file(PGconn *c, const char *dir, const char *name, const char *record_sql)
{
	char path[4096];
	char *sql;
	int ok;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if ((sql = slurp(path)) == NULL) {
		fprintf(stderr, "bdsctl: cannot read %s: %s\n", path, strerror(errno));
		return -1;
	}
	ok = exec_ok(c, "BEGIN", "begin") && exec_ok(c, sql, name);
	if (ok && record_sql != NULL) {
		const char *p[1] = { name };
		PGresult *res = PQexecParams(c, record_sql, 1, NULL, p, NULL, NULL, 0);

		ok = ok_result(c, res, "record migration");
		PQclear(res);
	}
	ok = ok && exec_ok(c, "COMMIT", "commit");
	if (!ok)
		exec_ok(c, "ROLLBACK", "rollback");
	free(sql);
	return ok ? 0 : -1;
}

static int
cmd_migrate(const struct config *cfg, PGconn *c, int argc, char **argv)
{
	char **files;
	int n, applied = 0, rc = 0;

	if (!exec_ok(c, "CREATE TABLE IF NOT EXISTS schema_migrations ("
	    " version text PRIMARY KEY,"
	    " applied_at timestamptz NOT NULL DEFAULT now())", "schema_migrations") ||
	    /* Two migrators at once: the second waits, then finds nothing to do. */
	    !exec_ok(c, "SELECT pg_advisory_lock(7415001)", "lock"))
		return 1;
	if ((n = sql_files(cfg->sql_dir, &files)) < 0) {
		fprintf(stderr, "bdsctl: cannot read %s: %s\n", cfg->sql_dir, strerror(errno));
		return 1;
	}
	for (int i = 0; i < n && rc == 0; i++) {
		const char *p[1] = { files[i] };
		PGresult *res = PQexecParams(c,
		    "SELECT 1 FROM schema_migrations WHERE version = $1",
		    1, NULL, p, NULL, NULL, 0);
		int done = ok_result(c, res, "check") ? PQntuples(res) > 0 : -1;

		PQclear(res);
		if (done < 0)
			rc = 1;
		else if (!done) {
			if (apply_file(c, cfg->sql_dir, files[i],
			    "INSERT INTO schema_migrations (version) VALUES ($1)") != 0)
				rc = 1;
			else {
				printf("applied %s\n", files[i]);
				applied++;
			}
		}
	}
	exec_ok(c, "SELECT pg_advisory_unlock(7415001)", "unlock");
	free_list(files, n);
	if (rc == 0)
		printf("migrate: %d applied, %d total\n", applied, n);
	return rc;
}

static int
cmd_seed(const struct config *cfg, PGconn *c, int argc, char **argv)
{
	char dir[4096], **files;
	int n, rc = 0;

	snprintf(dir, sizeof(dir), "%s/seed", cfg->sql_dir);
	if ((n = sql_files(dir, &files)) < 0) {
		fprintf(stderr, "bdsctl: cannot read %s: %s\n", dir, strerror(errno));
		return 1;
	}
	/* Seed files are idempotent (ON CONFLICT DO NOTHING): safe to re-run. */
	for (int i = 0; i < n && rc == 0; i++) {
		if (apply_file(c, dir, files[i], NULL) != 0)
			rc = 1;
		else
			printf("seeded %s\n", files[i]);
	}
	free_list(files, n);
	return rc;
}

/* Run a parameterised statement; the result (or NULL after printing why). */
static PGresult *
query(PGconn *c, const char *sql, int n, const char *const *p, const char *what)
{
	PGresult *res = PQexecParams(c, sql, n, NULL, p, NULL, NULL, 0);

	if (!ok_result(c, res, what)) {
		PQclear(res);
		return NULL;
	}
	return res;
}

/* A user named by id or e-mail; malloc'ed id or NULL (printed). */
static char *
user_id(PGconn *c, const char *who)
{
	const char *p[1] = { who };
	PGresult *res = query(c, "SELECT id FROM users WHERE id = $1 OR email = lower($1)",
	    1, p, "find user");
	char *id = NULL;

	if (res != NULL && PQntuples(res) == 1)
		id = strdup(PQgetvalue(res, 0, 0));
	else if (res != NULL)
		fprintf(stderr, "bdsctl: no user %s\n", who);
	PQclear(res);
	return id;
}

/* legal add KIND VERSION DATE: register a legal document version. */
static int
cmd_legal(const struct config *cfg, PGconn *c, int argc, char **argv)
{
	PGresult *res;
	int rc = 1;

	if (argc == 1 && strcmp(argv[0], "list") == 0) {
		if ((res = query(c, "SELECT kind, version, effective_date FROM legal_documents"
		    " ORDER BY kind, effective_date", 0, NULL, "list")) == NULL)
			return 1;
		for (int i = 0; i < PQntuples(res); i++)
			printf("%-8s %-16s %s\n", PQgetvalue(res, i, 0), PQgetvalue(res, i, 1),
			    PQgetvalue(res, i, 2));
		PQclear(res);
		return 0;
	}
	if (argc != 4 || strcmp(argv[0], "add") != 0) {
		fprintf(stderr, "usage: bdsctl legal add terms|privacy|dpa VERSION YYYY-MM-DD\n"
		    "       bdsctl legal list\n");
		return 2;
	}
	if (!validate_format(VF_DATE, argv[3])) {
		fprintf(stderr, "bdsctl: %s is not a date (YYYY-MM-DD)\n", argv[3]);
		return 2;
	}
	if ((res = query(c, "INSERT INTO legal_documents (kind, version, effective_date)"
	    " VALUES ($1, $2, $3::date) ON CONFLICT DO NOTHING RETURNING kind",
	    3, (const char *const *)argv + 1, "legal add")) != NULL) {
		if (PQntuples(res) == 1) {
			printf("registered %s %s effective %s\n", argv[1], argv[2], argv[3]);
			rc = 0;
		} else {
			fprintf(stderr, "bdsctl: %s %s is already registered\n", argv[1], argv[2]);
		}
		PQclear(res);
	}
	return rc;
}

/* live-access list | approve USER | deny USER [REASON]: the operator queue. */
static int
cmd_live_access(const struct config *cfg, PGconn *c, int argc, char **argv)
{
	static const char approve[] =
	    "WITH d AS (UPDATE live_access_requests SET status = 'approved', decided_at = now()"
	    " WHERE user_id = $1 AND status = 'pending' RETURNING user_id)"
	    " UPDATE users SET live_access = 'granted', updated_at = now()"
	    " WHERE id IN (SELECT user_id FROM d) RETURNING id";
	static const char deny[] =
	    "WITH d AS (UPDATE live_access_requests SET status = 'denied', decided_at = now(),"
	    " reason = $2 WHERE user_id = $1 AND status = 'pending' RETURNING user_id)"
	    " UPDATE users SET live_access = 'denied', updated_at = now()"
	    " WHERE id IN (SELECT user_id FROM d) RETURNING id";
	PGresult *res;
	char *id;
	int rc = 1;

	if (argc == 1 && strcmp(argv[0], "list") == 0) {
		if ((res = query(c, "SELECT u.id, u.email, q.status, q.requested_at"
		    " FROM live_access_requests q JOIN users u ON u.id = q.user_id"
		    " WHERE q.status = 'pending' ORDER BY q.requested_at", 0, NULL, "list")) == NULL)
			return 1;
		for (int i = 0; i < PQntuples(res); i++)
			printf("%s %s %s %s\n", PQgetvalue(res, i, 0), PQgetvalue(res, i, 1),
			    PQgetvalue(res, i, 2), PQgetvalue(res, i, 3));
		printf("%d pending\n", PQntuples(res));
		PQclear(res);
		return 0;
	}
	if (argc < 2 || argc > 3 || (strcmp(argv[0], "approve") != 0 &&
	    strcmp(argv[0], "deny") != 0) || (argc == 3 && argv[0][0] == 'a')) {
		fprintf(stderr, "usage: bdsctl live-access list | approve USER | deny USER [REASON]\n");
		return 2;
	}
	if ((id = user_id(c, argv[1])) == NULL)
		return 1;
	{
		const char *p[2] = { id, argc == 3 ? argv[2] : NULL };

		res = query(c, argv[0][0] == 'a' ? approve : deny, argv[0][0] == 'a' ? 1 : 2,
		    p, argv[0]);
	}
	if (res != NULL) {
		if (PQntuples(res) == 1) {
			printf("%s: %s\n", id, argv[0][0] == 'a' ? "live access granted" : "denied");
			rc = 0;
		} else {
			fprintf(stderr, "bdsctl: %s has no pending live access request\n", id);
		}
		PQclear(res);
	}
	free(id);
	return rc;
}

/* billing done USER: the billing setup is complete (live access prerequisite). */
static int
cmd_billing(const struct config *cfg, PGconn *c, int argc, char **argv)
{
	PGresult *res;
	char *id;

	if (argc != 2 || strcmp(argv[0], "done") != 0) {
		fprintf(stderr, "usage: bdsctl billing done USER\n");
		return 2;
	}
	if ((id = user_id(c, argv[1])) == NULL)
		return 1;
	{
		const char *p[1] = { id };

		res = query(c, "UPDATE users SET billing_done_at = coalesce(billing_done_at, now()),"
		    " updated_at = now() WHERE id = $1", 1, p, "billing done");
	}
	if (res != NULL)
		printf("%s: billing done\n", id);
	PQclear(res);
	free(id);
	return res != NULL ? 0 : 1;
}

/* Timer-driven batch work (systemd/bds-jobs.timer, every minute). */
static int
cmd_jobs(const struct config *cfg, PGconn *c, int argc, char **argv)
{
	static const struct {
		const char *what, *sql;
	} jobs[] = {
		{ "expired idempotency keys", "DELETE FROM idempotency_keys WHERE expires_at < now()" },
		{ "stale sign-in throttles", "DELETE FROM auth_throttle WHERE"
		  " window_start < now() - interval '1 day' AND"
		  " (locked_until IS NULL OR locked_until < now())" },
		{ "ended sessions", "DELETE FROM sessions WHERE"
		  " (revoked_at IS NOT NULL AND revoked_at < now() - interval '30 days')"
		  " OR refresh_expires_at < now() - interval '30 days'" },
		/* Events are kept 30 days (ACTIVITY_WINDOW_DAYS); their deliveries
		 * and attempt logs go with them (ON DELETE CASCADE). */
		{ "events older than 30 days", "DELETE FROM events WHERE"
		  " created_at < now() - interval '30 days'" },
	};
	int rc = 0;

	for (size_t i = 0; i < sizeof(jobs) / sizeof(jobs[0]); i++) {
		PGresult *res = PQexec(c, jobs[i].sql);

		if (ok_result(c, res, jobs[i].what))
			printf("jobs: %s removed: %s\n", jobs[i].what, PQcmdTuples(res));
		else
			rc = 1;
		PQclear(res);
	}
	return rc;
}

static const struct cmd cmds[] = {
	{ "migrate", "apply sql/NNN_*.sql not yet applied, each in a transaction", cmd_migrate },
	{ "seed", "load development data (sql/seed/NNN_*.sql, idempotent)", cmd_seed },
	{ "jobs", "batch work run every minute (expiry of keys, throttles, sessions, events)", cmd_jobs },
	{ "legal", "legal add KIND VERSION DATE | legal list: the sign-up registry", cmd_legal },
	{ "live-access", "live-access list | approve USER | deny USER [REASON]", cmd_live_access },
	{ "billing", "billing done USER: mark billing set up", cmd_billing },
};

static void
usage(FILE *f)
{
	fprintf(f, "usage: bdsctl [--config FILE] COMMAND [ARGS]\n");
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		fprintf(f, "  %-10s %s\n", cmds[i].name, cmds[i].help);
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	const char *config_path = NULL;
	struct config cfg;
	char err[512];
	PGconn *c;
	int ch, rc;

	while ((ch = getopt_long(argc, argv, "+c:h", opts, NULL)) != -1) {
		switch (ch) {
		case 'c': config_path = optarg; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind >= argc) {
		usage(stderr);
		return 2;
	}
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		if (strcmp(cmds[i].name, argv[optind]) != 0)
			continue;
		if (config_load(&cfg, config_path, err, sizeof(err)) != 0) {
			fprintf(stderr, "bdsctl: %s\n", err);
			return 1;
		}
		c = PQconnectdb(cfg.database_url);
		if (PQstatus(c) != CONNECTION_OK) {
			fprintf(stderr, "bdsctl: database: %s", PQerrorMessage(c));
			PQfinish(c);
			config_free(&cfg);
			return 1;
		}
		exec_ok(c, "SET client_min_messages = warning", "set");
		rc = cmds[i].fn(&cfg, c, argc - optind - 1, argv + optind + 1);
		PQfinish(c);
		config_free(&cfg);
		return rc;
	}
	fprintf(stderr, "bdsctl: unknown command %s\n", argv[optind]);
	usage(stderr);
	return 2;
}
