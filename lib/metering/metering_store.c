/*
 * The rows of the usage routes: usage_counters (the API requests the
 * workers counted) and, through the descriptors' usage entries, the
 * metrics the other modules compute from their own rows.
 */
#include <stdlib.h>
#include <string.h>

#include "core/arena.h"
#include "core/db.h"
#include "core/meter.h"
#include "core/module.h"
#include "core/req.h"
#include "core/router.h"
#include "metering/metering.h"

enum { MS_COUNTERS, MS__MAX };
/* Columns of MS_COUNTERS. */
enum { MC_DAY, MC_ENV, MC_METRIC, MC_VALUE };
static struct db_stmt stmts[MS__MAX] = {
	[MS_COUNTERS] = { "metering_counters",
	    "SELECT to_char(day, 'YYYY-MM-DD'), environment, metric, value FROM usage_counters "
	    "WHERE client_id = $1 AND ($2::text IS NULL OR environment = $2) "
	    "AND ($3::text IS NULL OR metric = $3) "
	    "AND day BETWEEN $4::date AND $5::date", 0 },
};
const struct db_stmt_set metering_stmt_set = { "metering", stmts, MS__MAX };

int
metering_metric_known(const char *name)
{
	char fam[METER_FAMILY_MAX];

	for (const struct module *const *m = modules; *m != NULL; m++)
		for (const struct module_usage *u = (*m)->usage; u != NULL && u->metric != NULL;
		    u++)
			if (strcmp(u->metric, name) == 0)
				return 1;
	if (strncmp(name, "api_requests.", 13) != 0)
		return 0;
	/* every route's: a handler may resolve a token itself (link-sessions) */
	for (size_t i = 0; i < routes_count; i++)
		if (meter_family(routes[i].pattern, fam, sizeof(fam)) == 0 &&
		    strcmp(fam, name) == 0)
			return 1;
	return 0;
}

/* A growing array of rows in the arena. */
struct rowbuf {
	struct metering_row	*v;
	size_t			 n, cap;
};

static struct metering_row *
row_add(struct arena *a, struct rowbuf *b)
{
	if (b->n == b->cap) {
		size_t cap = b->cap > 0 ? b->cap * 2 : 32;
		struct metering_row *v = arena_alloc(a, cap * sizeof(*v));

		if (b->n > 0)
			memcpy(v, b->v, b->n * sizeof(*v));
		b->v = v;
		b->cap = cap;
	}
	return &b->v[b->n++];
}

static int
row_cmp(const void *x, const void *y)
{
	const struct metering_row *a = x, *b = y;
	int c;

	if ((c = strcmp(a->date, b->date)) != 0 ||
	    (c = strcmp(a->environment, b->environment)) != 0)
		return c;
	return strcmp(a->metric, b->metric);
}

int
metering_rows(struct req *r, const char *client, const char *env, const char *metric,
    const char *from, const char *to, struct metering_row **rows, size_t *n)
{
	const char *p[5] = { client, env, metric, from, to };
	const char *q[4] = { client, env, from, to };
	struct rowbuf b = { NULL, 0, 0 };
	PGresult *res;

	if (metric == NULL || strncmp(metric, "api_requests.", 13) == 0) {
		if ((res = db_query(r, &stmts[MS_COUNTERS], 5, p)) == NULL)
			return -1;
		for (int i = 0; i < PQntuples(res); i++) {
			struct metering_row *w = row_add(r->arena, &b);

			w->date = PQgetvalue(res, i, MC_DAY);
			w->environment = PQgetvalue(res, i, MC_ENV);
			w->metric = PQgetvalue(res, i, MC_METRIC);
			w->value = strtoll(PQgetvalue(res, i, MC_VALUE), NULL, 10);
			w->level = 0;
		}
	}
	for (const struct module *const *m = modules; *m != NULL; m++)
		for (const struct module_usage *u = (*m)->usage; u != NULL && u->metric != NULL;
		    u++) {
			if (metric != NULL && strcmp(metric, u->metric) != 0)
				continue;
			if ((res = db_query(r, u->stmt, 4, q)) == NULL)
				return -1;
			for (int i = 0; i < PQntuples(res); i++) {
				struct metering_row *w = row_add(r->arena, &b);

				w->date = PQgetvalue(res, i, 0);
				w->environment = PQgetvalue(res, i, 1);
				w->metric = u->metric;
				w->value = strtoll(PQgetvalue(res, i, 2), NULL, 10);
				w->level = u->level;
			}
		}
	if (b.n > 1)
		qsort(b.v, b.n, sizeof(*b.v), row_cmp);
	*rows = b.v;
	*n = b.n;
	return 0;
}
