/*
 * GET /v1/metering/usage and GET /v1/metering/summary: parse the period
 * and the scope, read the rows (metering_store.c), write the answer.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/arena.h"
#include "core/env.h"
#include "core/errors.h"
#include "core/json.h"
#include "core/module.h"
#include "core/req.h"
#include "core/validate.h"
#include "iam/iam_clients.h"
#include "metering/metering.h"

static const char *const granularities[] = { "day", NULL };

/* A metric of the catalogue (metering_metric_known), else invalid_enum. */
static int
metric_check(struct arena *a, struct json_object **v, const char **code, const char **msg)
{
	if (metering_metric_known(json_object_get_string(*v)))
		return 0;
	*code = "invalid_enum";
	*msg = "metric must be api_requests.<family> of a route family or a computed metric "
	    "(docs/metering.md)";
	return -1;
}

#define SCOPE_FIELDS \
	{ "environment", NULL, VT_STRING, 0, 0, 0, env_names }, \
	{ "client_id", NULL, VT_STRING, 0, 1, 64, .format = VF_PRINTABLE }

const struct vfield metering_usage_query[] = {
	{ "from", NULL, VT_STRING, 0, 0, 0, NULL, VF_DATE },
	{ "to", NULL, VT_STRING, 0, 0, 0, NULL, VF_DATE },
	{ "metric", NULL, VT_STRING, 0, 1, 64, .check = metric_check },
	{ "granularity", NULL, VT_STRING, 0, 0, 0, granularities },
	SCOPE_FIELDS,
	{ NULL }
};

const struct vfield metering_summary_query[] = {
	SCOPE_FIELDS,
	{ NULL }
};

/* Days since 1970-01-01 of a YYYY-MM-DD the query already checked. */
static long
day_number(const char *s)
{
	struct tm tm = { 0 };

	tm.tm_year = atoi(s) - 1900;
	tm.tm_mon = atoi(s + 5) - 1;
	tm.tm_mday = atoi(s + 8);
	return (long)(timegm(&tm) / 86400);
}

static const char *
day_text(struct arena *a, long day)
{
	time_t t = (time_t)day * 86400;
	char buf[16];
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(buf, sizeof(buf), "%Y-%m-%d", &tm);
	return arena_strdup(a, buf);
}

static const char *
query_str(struct req *r, const char *name)
{
	return r->query != NULL ? json_get_str(r->query, name) : NULL;
}

/*
 * The client and environment the caller reads: an API key's own (a
 * client_id or environment naming another is refused), or for the
 * developer's JWT the client_id of the query, which must be one of the
 * developer's clients (404 CLIENT_NOT_FOUND otherwise, as for an unknown
 * one), and the environment of the query (NULL: every one). 0, or the
 * status written.
 */
static int
scope_or_reply(struct req *r, const char **client, const char **env)
{
	const char *qc = query_str(r, "client_id"), *qe = query_str(r, "environment");
	int rc;

	if (r->client_id != NULL) {
		if (qc != NULL && strcmp(qc, r->client_id) != 0)
			return api_error(r, 403, ERR_CLIENT_ID_MISMATCH,
			    "omit client_id or send your own",
			    "client_id does not match the credential");
		if (qe != NULL && strcmp(qe, r->env) != 0)
			return api_field_error(r, 400, ERR_VALIDATION_ERROR, "environment",
			    "environment_mismatch",
			    "an API key reads its own environment only: omit environment");
		*client = r->client_id;
		*env = r->env;
		return 0;
	}
	if (qc == NULL)
		return api_field_error(r, 400, ERR_VALIDATION_ERROR, "client_id", "required",
		    "client_id is required with a developer token");
	if ((rc = iam_clients_own_or_reply(r, qc)) != 0)
		return rc;
	*client = qc;
	*env = qe;
	return 0;
}

int
metering_usage(struct req *r, struct json_object *out)
{
	const char *qf = query_str(r, "from"), *qt = query_str(r, "to");
	const char *metric = query_str(r, "metric"), *client, *env, *from, *to;
	struct metering_row *rows;
	struct json_object *data;
	long f, t;
	size_t n;
	int rc;

	t = qt != NULL ? day_number(qt) : (long)(time(NULL) / 86400);
	f = qf != NULL ? day_number(qf) : t - (METERING_DAYS_DEFAULT - 1);
	if (f > t)
		return api_field_error(r, 400, ERR_VALIDATION_ERROR, "from", "out_of_range",
		    "from must not be after to");
	if (f < 0)	/* no usage before the epoch; and no year 0 for SQL */
		return api_field_error(r, 400, ERR_VALIDATION_ERROR, "from", "out_of_range",
		    "from must be 1970-01-01 or later");
	if (t - f + 1 > METERING_DAYS_MAX)
		return api_field_error(r, 400, ERR_VALIDATION_ERROR, "to", "out_of_range",
		    "from..to spans more than 366 days");
	if ((rc = scope_or_reply(r, &client, &env)) != 0)
		return rc;
	from = day_text(r->arena, f);
	to = day_text(r->arena, t);
	if (metering_rows(r, client, env, metric, from, to, &rows, &n) != 0)
		return api_db_error(r);
	data = json_object_new_array();
	for (size_t i = 0; i < n; i++) {
		struct json_object *o = json_object_new_object();

		json_set_str(o, "date", rows[i].date);
		json_set_str(o, "environment", rows[i].environment);
		json_set_str(o, "metric", rows[i].metric);
		json_set_int(o, "value", rows[i].value);
		json_object_array_add(data, o);
	}
	json_set_str(out, "object", "list");
	json_set_str(out, "client_id", client);
	json_set_str(out, "granularity", "day");
	json_set_str(out, "from", from);
	json_set_str(out, "to", to);
	json_set(out, "data", data);
	json_set_bool(out, "has_more", 0);	/* one answer: at most 366 days */
	json_set_null(out, "next_cursor");
	return 200;
}

/* Summary order: environment, metric, date. */
static int
by_env_metric(const void *x, const void *y)
{
	const struct metering_row *a = x, *b = y;
	int c;

	if ((c = strcmp(a->environment, b->environment)) != 0 ||
	    (c = strcmp(a->metric, b->metric)) != 0)
		return c;
	return strcmp(a->date, b->date);
}

/* env's object in envs, made with every computed metric at 0. */
static struct json_object *
env_object(struct json_object *envs, const char *env)
{
	struct json_object *o;

	if (json_object_object_get_ex(envs, env, &o))
		return o;
	o = json_object_new_object();
	for (const struct module *const *m = modules; *m != NULL; m++)
		for (const struct module_usage *u = (*m)->usage; u != NULL && u->metric != NULL;
		    u++)
			json_set_int(o, u->metric, 0);
	json_set(envs, env, o);
	return o;
}

int
metering_summary(struct req *r, struct json_object *out)
{
	const char *client, *env;
	struct metering_row *rows;
	struct json_object *envs;
	time_t now = time(NULL);
	struct tm tm;
	long first, last;
	size_t n;
	int rc;

	if ((rc = scope_or_reply(r, &client, &env)) != 0)
		return rc;
	gmtime_r(&now, &tm);
	tm.tm_mday = 1;
	tm.tm_hour = tm.tm_min = tm.tm_sec = 0;
	first = (long)(timegm(&tm) / 86400);
	tm.tm_mon++;			/* timegm carries into the next year */
	last = (long)(timegm(&tm) / 86400) - 1;
	if (metering_rows(r, client, env, NULL, day_text(r->arena, first),
	    day_text(r->arena, last), &rows, &n) != 0)
		return api_db_error(r);
	if (n > 1)
		qsort(rows, n, sizeof(*rows), by_env_metric);
	envs = json_object_new_object();
	/* every environment the caller reads, even one with no usage */
	for (int e = 0; e < ENV__MAX; e++)
		if (env == NULL || strcmp(env, env_names[e]) == 0)
			(void)env_object(envs, env_names[e]);
	for (size_t i = 0; i < n;) {
		long long v = 0;
		size_t j;

		for (j = i; j < n && strcmp(rows[j].environment, rows[i].environment) == 0 &&
		    strcmp(rows[j].metric, rows[i].metric) == 0; j++)
			v = rows[i].level ? (rows[j].value > v ? rows[j].value : v) :
			    v + rows[j].value;
		json_set_int(env_object(envs, rows[i].environment), rows[i].metric, v);
		i = j;
	}
	json_set_str(out, "object", "metering_summary");
	json_set_str(out, "client_id", client);
	json_set_str(out, "period_start", day_text(r->arena, first));
	json_set_str(out, "period_end", day_text(r->arena, last));
	json_set(out, "environments", envs);
	return 200;
}
