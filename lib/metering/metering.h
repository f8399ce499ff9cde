#ifndef BDS_METERING_H
#define BDS_METERING_H
/*
 * Usage metering (docs/metering.md): what a client used, per UTC day and
 * environment. Two kinds of metric:
 *   api_requests.<family>	counted by the workers (core/meter.h) and
 *				flushed into usage_counters, the one table of
 *				this module
 *   active_links, ...		computed at read time from the rows of the
 *				module that owns them (its descriptor's usage
 *				entries, core/module.h), so never counted twice
 * Both routes take an API key (its client and environment) or the
 * developer's JWT with client_id (the developer's own client, else 404
 * CLIENT_NOT_FOUND, as on the iam client routes).
 */
#include <stddef.h>

#include "core/db.h"
#include "core/validate.h"

struct json_object;
struct req;

#define METERING_DAYS_MAX	366	/* the longest from..to, days counted inclusive */
#define METERING_DAYS_DEFAULT	30	/* without from: the 30 days up to to */

/* ---- handlers (lib/routes.c) ---- */

/* GET /v1/metering/usage: the per-day values of [from, to]. */
int	 metering_usage(struct req *, struct json_object *);
/* GET /v1/metering/summary: the current UTC month's totals per environment. */
int	 metering_summary(struct req *, struct json_object *);
extern const struct vfield metering_usage_query[];
extern const struct vfield metering_summary_query[];

/* ---- the rows (metering_store.c) ---- */

/* One value of one day. */
struct metering_row {
	const char	*date;		/* YYYY-MM-DD */
	const char	*environment;
	const char	*metric;
	long long	 value;
	int		 level;		/* the metric is a level (core/module.h) */
};

/*
 * Every value of client (in env, or every environment when NULL) from day
 * from to day to (YYYY-MM-DD), of metric only when not NULL, ordered by
 * date, environment, metric; 0 with *rows (the arena's) and *n, -1 on a
 * database failure.
 */
int	 metering_rows(struct req *, const char *client, const char *env,
	    const char *metric, const char *from, const char *to,
	    struct metering_row **rows, size_t *n);
/* 1 when name is a metric: api_requests.<a family of the route table> or
 * a module's computed one. */
int	 metering_metric_known(const char *name);

extern const struct db_stmt_set metering_stmt_set;

#endif
