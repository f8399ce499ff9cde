/*
 * Operator work on the catalog (bdsctl billers): the CSV import and a
 * status change. The import checks the whole file before it writes, then
 * upserts every row by id in one transaction: a bad row loads nothing.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "billers/billers.h"
#include "billers/billers_csv.h"
#include "core/arena.h"
#include "core/config.h"
#include "core/crypto.h"
#include "core/db.h"
#include "core/json.h"
#include "core/req.h"
#include "events/events.h"

#define BILLERS_FILE_MAX	(16 * 1024 * 1024)

enum upsert_col { U_INSERTED };
#define STATUS_COLS "o.status, b.name"
enum status_col { S_OLD, S_NAME };
#define TENANT_COLS "client_id, environment"
enum tenant_col { T_CLIENT, T_ENV };

enum {
	BA_UPSERT,
	BA_STATUS,
	BA_TENANTS,
	BA_DOMAIN,
	BA_RANK,
	BA__MAX
};
static struct db_stmt stmts[BA__MAX] = {
	/*
	 * One catalog row by id: a row (inserted true) when new, a row
	 * (false) when some column changed, no row when it is unchanged.
	 */
	[BA_UPSERT] = { "billers_upsert",
	    "INSERT INTO billers AS b (id, name, type, status, domains, website, login_url,"
	    " logo_url, country, connectivity_types, consent_scopes, capabilities, connector,"
	    " base_url, search_text)"
	    " VALUES ($1, $2, $3, $4, $5::text[], $6, $7, $8, $9, $10::text[], $11::text[],"
	    " $12::text[], $13, $14, billers_fold($2 || ' ' || array_to_string($5::text[], ' ')))"
	    " ON CONFLICT (id) DO UPDATE SET name = EXCLUDED.name, type = EXCLUDED.type,"
	    " status = EXCLUDED.status, domains = EXCLUDED.domains, website = EXCLUDED.website,"
	    " login_url = EXCLUDED.login_url, logo_url = EXCLUDED.logo_url,"
	    " country = EXCLUDED.country, connectivity_types = EXCLUDED.connectivity_types,"
	    " consent_scopes = EXCLUDED.consent_scopes, capabilities = EXCLUDED.capabilities,"
	    " connector = EXCLUDED.connector, base_url = EXCLUDED.base_url,"
	    /* the file never sets sandbox_portal (sql/050_billers_environments.sql):
	     * kept, or cleared with a connector that is no longer portal */
	    " sandbox_portal = b.sandbox_portal AND EXCLUDED.connector = 'portal',"
	    " search_text = EXCLUDED.search_text, updated_at = now()"
	    " WHERE (b.name, b.type, b.status, b.domains, b.website, b.login_url, b.logo_url,"
	    "  b.country, b.connectivity_types, b.consent_scopes, b.capabilities, b.connector,"
	    "  b.base_url, b.search_text) IS DISTINCT FROM (EXCLUDED.name, EXCLUDED.type,"
	    "  EXCLUDED.status, EXCLUDED.domains, EXCLUDED.website, EXCLUDED.login_url,"
	    "  EXCLUDED.logo_url, EXCLUDED.country, EXCLUDED.connectivity_types,"
	    "  EXCLUDED.consent_scopes, EXCLUDED.capabilities, EXCLUDED.connector,"
	    "  EXCLUDED.base_url, EXCLUDED.search_text)"
	    " RETURNING (b.xmax = 0) AS inserted" },
	/* The old status comes from the locked row before the update. A
	 * portal biller without a base_url (one an operator's discovery
	 * rejection added) stays UNSUPPORTED: no row. */
	[BA_STATUS] = { "billers_set_status",
	    "UPDATE billers b SET status = $2, updated_at = now()"
	    " FROM (SELECT id, status FROM billers WHERE id = $1 FOR UPDATE) o"
	    " WHERE b.id = o.id AND ($2 = 'UNSUPPORTED' OR b.connector <> 'portal'"
	    "  OR b.base_url IS NOT NULL) RETURNING " STATUS_COLS },
	/*
	 * Who hears that a biller is unsupported: every client and
	 * environment with a link on it that is not revoked, or an open
	 * request to link on it.
	 */
	[BA_TENANTS] = { "billers_link_tenants",
	    "SELECT " TENANT_COLS " FROM links WHERE biller_id = $1 AND status <> 'REVOKED'"
	    " UNION SELECT " TENANT_COLS " FROM request_to_links WHERE biller_id = $1"
	    "  AND status IN ('PENDING', 'IN_PROGRESS')"
	    " ORDER BY client_id, environment" },
	[BA_DOMAIN] = { "billers_add_domain",
	    "UPDATE billers SET domains = array_append(domains, $2::text),"
	    " search_text = billers_fold(name || ' ' ||"
	    "  array_to_string(array_append(domains, $2::text), ' ')), updated_at = now()"
	    " WHERE id = $1 AND NOT ($2::text = ANY (domains))" },
	/* the picker's curated order (not the entity: updated_at stays) */
	[BA_RANK] = { "billers_set_rank",
	    "UPDATE billers SET picker_rank = $2::int WHERE id = $1" },
};
const struct db_stmt_set billers_admin_stmt_set = { "billers_admin", stmts, BA__MAX };

/* The whole file into the arena (NUL-terminated); NULL after printing why. */
static char *
slurp(struct arena *a, const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t n = 0, cap = 0;

	if (f == NULL) {
		fprintf(stderr, "billers import: %s: %s\n", path, strerror(errno));
		return NULL;
	}
	for (;;) {
		char chunk[65536];
		size_t got = fread(chunk, 1, sizeof(chunk), f);

		if (got == 0)
			break;
		if (n + got > BILLERS_FILE_MAX) {
			fprintf(stderr, "billers import: %s: larger than %d bytes\n", path,
			    BILLERS_FILE_MAX);
			fclose(f);
			return NULL;
		}
		if (n + got + 1 > cap) {
			char *nb;

			cap = (n + got + 1) * 2;
			nb = arena_alloc(a, cap);
			if (n > 0)
				memcpy(nb, buf, n);
			buf = nb;
		}
		memcpy(buf + n, chunk, got);
		n += got;
	}
	if (ferror(f)) {
		fprintf(stderr, "billers import: %s: read error\n", path);
		fclose(f);
		return NULL;
	}
	fclose(f);
	if (buf == NULL)
		buf = arena_strdup(a, "");
	buf[n] = '\0';
	*len = n;
	return buf;
}

struct row {
	char	**f;
	size_t	 line;
};

int
billers_import(const struct config *cfg, struct db *d, struct arena *a, const char *path)
{
	struct billers_csv c;
	struct row *rows;
	size_t len, n, nrows = 0, cap = 64;
	long long inserted = 0, updated = 0, unchanged = 0;
	const char *err, *field, *msg;
	char *buf, **f;
	int rc;

	(void)cfg;
	if ((buf = slurp(a, path, &len)) == NULL)
		return -1;
	billers_csv_init(&c, buf, len);
	if ((rc = billers_csv_next(&c, a, &f, &n, &err)) != 1 || !billers_csv_header_ok(f, n)) {
		fprintf(stderr, "billers import: %s: line 1: %s\n", path, rc == -1 ? err :
		    "the header must be id,name,type,status,domains,website,login_url,logo_url,"
		    "country,connectivity_types,consent_scopes,capabilities,connector,base_url");
		return -1;
	}
	rows = arena_alloc(a, cap * sizeof(*rows));
	while ((rc = billers_csv_next(&c, a, &f, &n, &err)) == 1) {
		if (billers_csv_row_check(a, f, n, &field, &msg) != 0) {
			fprintf(stderr, "billers import: %s: line %zu: %s %s; nothing loaded\n",
			    path, c.rec_line, field, msg);
			return -1;
		}
		for (size_t i = 0; i < nrows; i++)
			if (strcmp(rows[i].f[BC_ID], f[BC_ID]) == 0) {
				fprintf(stderr, "billers import: %s: line %zu: id repeats line %zu;"
				    " nothing loaded\n", path, c.rec_line, rows[i].line);
				return -1;
			}
		if (nrows == cap) {
			struct row *nr = arena_alloc(a, 2 * cap * sizeof(*rows));

			memcpy(nr, rows, cap * sizeof(*rows));
			rows = nr;
			cap *= 2;
		}
		rows[nrows].f = f;
		rows[nrows++].line = c.rec_line;
	}
	if (rc == -1) {
		fprintf(stderr, "billers import: %s: line %zu: %s; nothing loaded\n", path,
		    c.rec_line, err);
		return -1;
	}
	if (db_begin(d) != 0) {
		fprintf(stderr, "billers import: begin: %s\n", db_errmsg(d));
		return -1;
	}
	for (size_t i = 0; i < nrows; i++) {
		PGresult *res = db_exec(d, a, &stmts[BA_UPSERT], BC__MAX,
		    (const char *const *)rows[i].f);

		if (res == NULL) {
			fprintf(stderr, "billers import: %s: line %zu: the database refused the row:"
			    " %s; nothing loaded\n", path, rows[i].line, db_errmsg(d));
			db_rollback(d);
			return -1;
		}
		if (PQntuples(res) == 0)
			unchanged++;
		else if (strcmp(PQgetvalue(res, 0, U_INSERTED), "t") == 0)
			inserted++;
		else
			updated++;
	}
	if (db_commit(d) != 0) {
		fprintf(stderr, "billers import: commit: %s\n", db_errmsg(d));
		db_rollback(d);
		return -1;
	}
	printf("billers import: %zu rows: %lld inserted, %lld updated, %lld unchanged\n",
	    nrows, inserted, updated, unchanged);
	return 0;
}

int
billers_set_status(const struct config *cfg, struct db *d, struct arena *a, const char *id,
    const char *status)
{
	struct req r;
	const char *p[2] = { id, status };
	PGresult *res, *tenants;
	int notified = 0;

	if (!crypto_id_valid(id, "blr", 0)) {
		fprintf(stderr, "billers set-status: %s is not a biller id\n", id);
		return -1;
	}
	if (!billers_in(billers_statuses, status)) {
		fprintf(stderr, "billers set-status: %s is not ACTIVE, DEGRADED or UNSUPPORTED\n",
		    status);
		return -1;
	}
	/* A synthetic request, so events_emit writes as it does in the API. */
	req_init_operator(&r, cfg, d, a);
	if (db_begin(d) != 0)
		goto dbfail;
	if ((res = db_exec(d, a, &stmts[BA_STATUS], 2, p)) == NULL)
		goto dbfail;
	if (PQntuples(res) != 1) {
		db_rollback(d);
		fprintf(stderr, "billers set-status: no biller %s (or a portal biller without a"
		    " base_url: import its row with one)\n", id);
		return -1;
	}
	/* Only the change to UNSUPPORTED is news; setting it again is not. */
	if (strcmp(status, "UNSUPPORTED") == 0 &&
	    strcmp(PQgetvalue(res, 0, S_OLD), "UNSUPPORTED") != 0) {
		if ((tenants = db_exec(d, a, &stmts[BA_TENANTS], 1, p)) == NULL)
			goto dbfail;
		for (int i = 0; i < PQntuples(tenants); i++) {
			struct json_object *o = json_obj(a);

			json_set_str(o, "id", id);
			json_set_str(o, "object", "biller");
			json_set_str(o, "biller_id", id);
			json_set_str(o, "name", PQgetvalue(res, 0, S_NAME));
			json_set_str(o, "status", status);
			if (events_emit(&r, PQgetvalue(tenants, i, T_CLIENT),
			    PQgetvalue(tenants, i, T_ENV), "biller.unsupported", o, NULL) == NULL)
				goto dbfail;
			notified++;
		}
	}
	if (db_commit(d) != 0)
		goto dbfail;
	printf("billers set-status: %s %s -> %s; biller.unsupported sent to %d client"
	    " environment(s)\n", id, PQgetvalue(res, 0, S_OLD), status, notified);
	return 0;
dbfail:
	fprintf(stderr, "billers set-status: %s\n", db_errmsg(d));
	db_rollback(d);
	return -1;
}

int
billers_add_domain(struct db *d, struct arena *a, const char *id, const char *domain)
{
	const char *p[2] = { id, domain };
	PGresult *res = db_exec(d, a, &stmts[BA_DOMAIN], 2, p);

	return res == NULL ? -1 : atoi(PQcmdTuples(res)) > 0;
}

/* bdsctl discovery approve adds a biller as an import row would */
int
billers_row_upsert(struct db *d, struct arena *a, char *const *fields)
{
	PGresult *res = db_exec(d, a, &stmts[BA_UPSERT], BC__MAX, (const char *const *)fields);

	if (res == NULL)
		return -1;
	return PQntuples(res) == 1 && strcmp(PQgetvalue(res, 0, U_INSERTED), "t") == 0;
}

int
billers_set_rank(const struct config *cfg, struct db *d, struct arena *a, const char *id,
    const char *rank)
{
	const char *p[2] = { id, strcmp(rank, "none") == 0 ? NULL : rank };
	char *end;
	long n;
	long long rows;

	(void)cfg;
	if (!crypto_id_valid(id, "blr", 0)) {
		fprintf(stderr, "billers set-rank: %s is not a biller id\n", id);
		return -1;
	}
	if (p[1] != NULL) {
		errno = 0;
		n = strtol(rank, &end, 10);
		if (errno != 0 || *end != '\0' || end == rank || n < 1 || n > 1000000) {
			fprintf(stderr, "billers set-rank: %s is not a rank (1..1000000, or none)\n",
			    rank);
			return -1;
		}
	}
	if ((rows = db_exec_count(d, a, &stmts[BA_RANK], 2, p)) < 0) {
		fprintf(stderr, "billers set-rank: database: %s\n", db_errmsg(d));
		return -1;
	}
	if (rows == 0) {
		fprintf(stderr, "billers set-rank: no biller %s\n", id);
		return -1;
	}
	printf("billers set-rank: %s %s\n", id, rank);
	return 0;
}
