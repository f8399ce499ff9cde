/* GET /v1/health and /v1/health/live. */
#include <unistd.h>

#include "core/db.h"
#include "core/errors.h"
#include "core/health.h"
#include "core/json.h"
#include "core/req.h"

#ifndef PACKAGE_VERSION
#define PACKAGE_VERSION "dev"
#endif

enum { HEALTH_PING, HEALTH__MAX };
/* Columns of HEALTH_PING. */
enum { HEALTH_COL_VERSION, HEALTH_COL__MAX };
static struct db_stmt stmts[HEALTH__MAX] = {
	/* One index lookup: the same cost as any primary-key read. */
	[HEALTH_PING] = { "health_schema",
	    "SELECT version FROM schema_migrations ORDER BY version DESC LIMIT 1", 0 },
};
const struct db_stmt_set health_stmt_set = { "health", stmts, HEALTH__MAX };

int
health_live(struct req *r, struct json_object *out)
{
	json_set_str(out, "status", "ok");
	json_set_str(out, "version", PACKAGE_VERSION);
	json_set_int(out, "pid", getpid());
	return 200;
}

int
health_get(struct req *r, struct json_object *out)
{
	PGresult *res = db_query(r, &stmts[HEALTH_PING], 0, NULL);
	int up = res != NULL;
	struct json_object *o = out;

	if (!up) {
		api_db_error(r);
		o = r->out;
	}
	json_set_str(o, "status", up ? "ok" : "unavailable");
	json_set_str(o, "process", "ok");
	json_set_str(o, "database", up ? "ok" : "unavailable");
	json_set_str(o, "schema", up && PQntuples(res) > 0 ?
	    PQgetvalue(res, 0, HEALTH_COL_VERSION) : NULL);
	json_set_str(o, "version", PACKAGE_VERSION);
	json_set_int(o, "pid", getpid());
	return up ? 200 : r->status;
}
