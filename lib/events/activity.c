/*
 * The activity feed: what happened to a client's resources in one
 * environment and what became of each webhook delivery. Everything is
 * scoped to the API key's client and environment, so another client's (or
 * environment's) event id finds nothing: 404.
 *
 * An event's delivery state: "none" without deliveries, "pending" while
 * any is queued, "failed" when the latest delivery to some subscription
 * failed (an older failure a replay fixed does not count), else
 * "succeeded".
 */
#include <stdlib.h>
#include <string.h>

#include "events/activity.h"
#include "core/arena.h"
#include "core/config.h"
#include "core/crypto.h"
#include "core/cursor.h"
#include "core/db.h"
#include "core/errors.h"
#include "events/events.h"
#include "core/json.h"
#include "core/req.h"

/* Per event (alias e): the delivery counts and whether the latest delivery
 * to some subscription failed. */
#define SUMMARY \
	" LEFT JOIN LATERAL (SELECT count(*) AS n," \
	"  count(*) FILTER (WHERE status = 'succeeded') AS ok," \
	"  count(*) FILTER (WHERE status = 'failed') AS bad," \
	"  count(*) FILTER (WHERE status = 'pending') AS pend," \
	"  coalesce(sum(attempts), 0) AS attempts," \
	"  coalesce(bool_or(latest AND status = 'failed'), false) AS latest_failed" \
	"  FROM (SELECT status, attempts, row_number() OVER (PARTITION BY webhook_id" \
	"   ORDER BY created_at DESC, id DESC) = 1 AS latest FROM deliveries d" \
	"   WHERE d.client_id = e.client_id AND d.event_id = e.id) x) s ON true"
#define STATE \
	"CASE WHEN s.n = 0 THEN 'none' WHEN s.pend > 0 THEN 'pending'" \
	" WHEN s.latest_failed THEN 'failed' ELSE 'succeeded' END"
#define SUMMARY_COLS "s.n, s.ok, s.bad, s.pend, s.attempts, " STATE
/* SUMMARY_COLS, as offsets from where a statement lists them */
enum summary_col { SUM_N, SUM_OK, SUM_BAD, SUM_PEND, SUM_ATTEMPTS, SUM_STATE, SUM__MAX };

/* The columns of each statement, read by name. */
#define LIST_COLS "id, type, created, pos, " SUMMARY_COLS_Q
#define SUMMARY_COLS_Q "n, ok, bad, pend, attempts, state"
enum list_col { L_ID, L_TYPE, L_CREATED, L_POS, L_SUMMARY, L__MAX = L_SUMMARY + SUM__MAX };
#define EVENT_COLS "e.id, e.type, floor(extract(epoch FROM e.created_at) * 1000)::bigint," \
	" e.environment, e.api_version, e.producer_service, e.correlation_id," \
	" e.request_id, e.idempotency_key, e.data::text, " SUMMARY_COLS
enum event_col {
	E_ID, E_TYPE, E_CREATED, E_ENVIRONMENT, E_API_VERSION, E_PRODUCER, E_CORRELATION_ID,
	E_REQUEST_ID, E_IDEMPOTENCY_KEY, E_DATA, E_SUMMARY, E__MAX = E_SUMMARY + SUM__MAX
};
#define DELIVERY_COLS "d.id, d.webhook_id, w.url, d.status, d.attempts," \
	" CASE WHEN d.status = 'pending' THEN " DB_ISO("d.next_attempt_at") " END," \
	" d.last_status_code, d.last_error, d.replay_of, " DB_ISO("d.created_at") "," \
	" " DB_ISO("d.updated_at") ", a.attempt, " DB_ISO("a.attempted_at") ", a.status_code," \
	" a.latency_ms, a.error"
enum delivery_col {
	D_ID, D_WEBHOOK_ID, D_URL, D_STATUS, D_ATTEMPTS, D_NEXT_ATTEMPT_AT, D_LAST_STATUS_CODE,
	D_LAST_ERROR, D_REPLAY_OF, D_CREATED_AT, D_UPDATED_AT, D_ATTEMPT, D_ATTEMPTED_AT,
	D_ATTEMPT_STATUS_CODE, D_LATENCY_MS, D_ERROR, D__MAX
};
#define WINDOW_COLS "$1::timestamptz < $2::timestamptz," \
	" $2::timestamptz - $1::timestamptz <= make_interval(days => $3::int)"
enum window_col { WIN_ORDERED, WIN_SHORT, WIN__MAX };
/* One count or flag. */
enum one_col { ONE_VALUE };

/* Activity events nothing can subscribe to ("*" does not cover them). */
static const char *const activity_only_types[] = { "webhook_endpoint.deleted", NULL };
#define ACTIVITY_ONLY_SQL "{webhook_endpoint.deleted}"

/* A subscription matches an event (aliases w, e). */
#define MATCHES \
	" w.enabled AND (w.events ? e.type OR ((w.events ? '*' OR w.events ? 'all')" \
	"  AND NOT e.type = ANY ($9::text[])))"

enum {
	A_LIST,
	A_EVENT,
	A_DELIVERIES,
	A_WINDOW,
	A_REPLAY,
	A_WEBHOOK,
	A__MAX
};
static struct db_stmt stmts[A__MAX] = {
	/*
	 * Keyset pagination: every bound is a real value ('-infinity',
	 * 'infinity' and an id above every id stand in for "none"), so the
	 * range is an index condition on events (client_id, created_at) and
	 * a deep page costs what the first does.
	 */
	[A_LIST] = { "activity_list",
	    "SELECT " LIST_COLS " FROM ("
	    " SELECT e.id, e.type, " DB_ISO("e.created_at") " AS created, " CURSOR_POS("e.created_at")
	    " AS pos, e.created_at, " SUMMARY_COLS " AS state"
	    " FROM events e" SUMMARY
	    " WHERE e.client_id = $1 AND e.environment = $2 AND " EVENTS_KEPT_SQL
	    "  AND ($3::text IS NULL OR e.type = $3)"
	    "  AND e.created_at > $5::timestamptz AND e.created_at < $6::timestamptz"
	    "  AND e.created_at <= $7::timestamptz"
	    "  AND (e.created_at < $7::timestamptz OR e.id < $8)) q"
	    " WHERE ($4::text IS NULL OR state = $4)"
	    " ORDER BY created_at DESC, id DESC LIMIT $9::int" },
	[A_EVENT] = { "activity_event",
	    "SELECT " EVENT_COLS " FROM events e" SUMMARY
	    " WHERE e.client_id = $1 AND e.environment = $2 AND e.id = $3"
	    "  AND " EVENTS_KEPT_SQL },
	[A_DELIVERIES] = { "activity_deliveries",
	    "SELECT " DELIVERY_COLS " FROM deliveries d JOIN webhooks w ON w.client_id = d.client_id AND w.id = d.webhook_id"
	    " LEFT JOIN delivery_attempts a ON a.client_id = d.client_id AND a.delivery_id = d.id"
	    " WHERE d.client_id = $1 AND d.event_id = $2"
	    " ORDER BY d.created_at, d.id, a.attempt" },
	[A_WINDOW] = { "activity_window",
	    "SELECT " WINDOW_COLS },
	/*
	 * One new delivery per (event, current enabled matching subscription),
	 * replay_of = the latest delivery of that pair (the one it repeats;
	 * NULL when the subscription never had one), capped at $8 rows.
	 */
	[A_REPLAY] = { "activity_replay",
	    "WITH pairs AS (SELECT e.client_id, e.id AS event_id, w.id AS webhook_id,"
	    "  l.id AS last_id"
	    " FROM events e JOIN webhooks w ON w.client_id = e.client_id"
	    "  AND w.environment = e.environment"
	    " LEFT JOIN LATERAL (SELECT d.id, d.status FROM deliveries d"
	    "  WHERE d.client_id = e.client_id AND d.event_id = e.id AND d.webhook_id = w.id"
	    "  ORDER BY d.created_at DESC, d.id DESC LIMIT 1) l ON true"
	    " WHERE e.client_id = $1 AND e.environment = $2 AND " EVENTS_KEPT_SQL
	    "  AND ($3::text IS NULL OR e.id = $3)"
	    "  AND ($4::timestamptz IS NULL OR e.created_at >= $4::timestamptz)"
	    "  AND ($5::timestamptz IS NULL OR e.created_at < $5::timestamptz)"
	    "  AND ($7::text IS NULL OR w.id = $7) AND" MATCHES
	    "  AND (NOT $6::bool OR l.status = 'failed')"
	    " ORDER BY e.created_at, e.id, w.created_at, w.id LIMIT $8::int),"
	    " ins AS (INSERT INTO deliveries (client_id, id, event_id, webhook_id, replay_of)"
	    "  SELECT client_id, " EVENTS_DELIVERY_ID_SQL ", event_id, webhook_id, last_id"
	    "  FROM pairs RETURNING 1)"
	    " SELECT count(*) FROM ins" },
	[A_WEBHOOK] = { "activity_webhook",
	    "SELECT enabled FROM webhooks WHERE client_id = $1 AND environment = $2 AND id = $3" },
};
const struct db_stmt_set activity_stmt_set = { "activity", stmts, A__MAX };

/* A type filter: a deliverable type (historic names normalised) or an
 * activity-only type. */
static int
type_check(struct arena *a, struct json_object **v, const char **code, const char **msg)
{
	const char *s = json_object_get_string(*v);

	for (size_t i = 0; activity_only_types[i] != NULL; i++)
		if (strcmp(s, activity_only_types[i]) == 0)
			return 0;
	return events_type_check(a, v, code, msg);
}

static const char *const states[] = { "pending", "succeeded", "failed", "none", NULL };

const struct vfield activity_list_query[] = {
	{ "type", NULL, VT_STRING, 0, 1, 100, .check = type_check },
	{ "status", NULL, VT_STRING, 0, 0, 0, states },
	{ "created_after", NULL, VT_STRING, 0, 0, 64, .format = VF_DATETIME },
	{ "created_before", NULL, VT_STRING, 0, 0, 64, .format = VF_DATETIME },
	CURSOR_LIMIT_FIELD(CURSOR_LIMIT_MAX),
	CURSOR_QUERY_FIELD,
	{ NULL }
};

const struct vfield activity_replay_fields[] = {
	{ "event_id", NULL, VT_STRING, 0, 1, 64 },
	{ "from", NULL, VT_STRING, 0, 0, 64, .format = VF_DATETIME },
	{ "to", NULL, VT_STRING, 0, 0, 64, .format = VF_DATETIME },
	{ "only_failed", NULL, VT_BOOL },
	{ "webhook_id", NULL, VT_STRING, 0, 1, 64 },
	{ NULL }
};

/* ------------------------------------------------------------------ */

/* A statement failed: an instant PostgreSQL refuses (a value the format
 * check let through) is the client's 400, anything else ours. */
static int
query_failed(struct req *r, const char *field)
{
	if (field != NULL && db_last_fail(r->db) == DB_ERROR &&
	    strncmp(db_sqlstate(r->db), "22", 2) == 0)
		return api_field_error(r, 400, ERR_VALIDATION_ERROR, field, "invalid_format",
		    "is not a valid instant");
	return api_db_error(r);
}

static long long
col_int(PGresult *res, int i, int c)
{
	return strtoll(PQgetvalue(res, i, c), NULL, 10);
}

static const char *
col_str(struct req *r, PGresult *res, int i, int c)
{
	return PQgetisnull(res, i, c) ? NULL : arena_strdup(r->arena, PQgetvalue(res, i, c));
}

/* The delivery summary from SUMMARY_COLS starting at column c. */
static struct json_object *
summary_json(PGresult *res, int i, int c)
{
	struct json_object *o = json_object_new_object();

	json_set_str(o, "status", PQgetvalue(res, i, c + SUM_STATE));
	json_set_int(o, "attempts", col_int(res, i, c + SUM_ATTEMPTS));
	json_set_int(o, "deliveries", col_int(res, i, c + SUM_N));
	json_set_int(o, "succeeded", col_int(res, i, c + SUM_OK));
	json_set_int(o, "failed", col_int(res, i, c + SUM_BAD));
	json_set_int(o, "pending", col_int(res, i, c + SUM_PEND));
	return o;
}

/* A row of the list: id, object, type, created_at and the delivery summary. */
static struct json_object *
list_item(struct req *r, PGresult *res, int i)
{
	struct json_object *o = json_obj(r->arena);

	json_set_str(o, "id", PQgetvalue(res, i, L_ID));
	json_set_str(o, "object", "event");
	json_set_str(o, "type", PQgetvalue(res, i, L_TYPE));
	json_set_str(o, "created_at", PQgetvalue(res, i, L_CREATED));
	json_set(o, "delivery", summary_json(res, i, L_SUMMARY));
	return o;
}

/* Newest first on (created_at, id); the cursor is bound to the list and
 * the key's client and environment. */
static const struct cursor_list activity_page = {
	.name = "activity", .flags = CURSOR_TENANT | CURSOR_KEYSET,
	.shape = CURSOR_OBJECT_LIST, .key = "data", .limit = CURSOR_LIMIT_DEFAULT,
	.prefix = "evt", .cols = { L_POS, L_ID }, .item = list_item,
};

int
activity_list(struct req *r, struct json_object *out)
{
	const char *after = json_get_str(r->query, "created_after");
	const char *before = json_get_str(r->query, "created_before");
	const char *p[9] = { r->client_id, r->env, json_get_str(r->query, "type"),
	    json_get_str(r->query, "status"), after != NULL ? after : "-infinity",
	    before != NULL ? before : "infinity" };
	struct cursor_page pg;
	PGresult *res;
	int rc;

	if ((rc = cursor_page_open(r, &activity_page, NULL, 0, &pg)) != 0)
		return rc;
	p[6] = pg.pos[0];
	p[7] = pg.pos[1];
	p[8] = pg.limit1;
	if ((res = db_query(r, &stmts[A_LIST], 9, p)) == NULL)
		return query_failed(r, after != NULL ? "created_after" : before != NULL ?
		    "created_before" : NULL);
	return cursor_page_reply(r, out, &pg, res);
}

static int
event_not_found(struct req *r, const char *id)
{
	return api_error(r, 404, ERR_NOT_FOUND, NULL, "no event %s", id);
}

/* The key's event id (EVENT_COLS) into *res: 0, or the 404 (a malformed,
 * unknown, another client's or environment's id) or 503 written. */
static int
event_or_reply(struct req *r, const char *id, PGresult **res)
{
	const char *p[3] = { r->client_id, r->env, id };

	*res = NULL;
	if (!crypto_id_valid(id, "evt", 0))
		return event_not_found(r, id);	/* no such id can exist: no query */
	if ((*res = db_query(r, &stmts[A_EVENT], 3, p)) == NULL)
		return api_db_error(r);
	if (PQntuples(*res) != 1)
		return event_not_found(r, id);
	return 0;
}

/* The deliveries of event id, oldest first, each with its attempt log. */
static struct json_object *
deliveries_json(struct req *r, const char *id)
{
	const char *p[2] = { r->client_id, id };
	struct json_object *arr, *d = NULL, *log = NULL;
	const char *prev = "";
	PGresult *res;

	if ((res = db_query(r, &stmts[A_DELIVERIES], 2, p)) == NULL)
		return NULL;
	arr = json_arr(r->arena);
	for (int i = 0; i < PQntuples(res); i++) {
		if (strcmp(prev, PQgetvalue(res, i, D_ID)) != 0) {
			prev = PQgetvalue(res, i, D_ID);
			d = json_object_new_object();
			log = json_object_new_array();
			json_set_str(d, "id", prev);
			json_set_str(d, "object", "delivery");
			json_set_str(d, "webhook_id", PQgetvalue(res, i, D_WEBHOOK_ID));
			json_set_str(d, "url", PQgetvalue(res, i, D_URL));
			json_set_str(d, "status", PQgetvalue(res, i, D_STATUS));
			json_set_int(d, "attempts", col_int(res, i, D_ATTEMPTS));
			json_set_str(d, "next_attempt_at", col_str(r, res, i, D_NEXT_ATTEMPT_AT));
			if (PQgetisnull(res, i, D_LAST_STATUS_CODE))
				json_set_null(d, "last_status_code");
			else
				json_set_int(d, "last_status_code", col_int(res, i, D_LAST_STATUS_CODE));
			json_set_str(d, "last_error", col_str(r, res, i, D_LAST_ERROR));
			json_set_str(d, "replay_of", col_str(r, res, i, D_REPLAY_OF));
			json_set_str(d, "created_at", PQgetvalue(res, i, D_CREATED_AT));
			json_set_str(d, "updated_at", PQgetvalue(res, i, D_UPDATED_AT));
			json_set(d, "attempt_log", log);
			json_object_array_add(arr, d);
		}
		if (!PQgetisnull(res, i, D_ATTEMPT)) {
			struct json_object *a = json_object_new_object();

			json_set_int(a, "attempt", col_int(res, i, D_ATTEMPT));
			json_set_str(a, "attempted_at", PQgetvalue(res, i, D_ATTEMPTED_AT));
			json_set_int(a, "status_code", col_int(res, i, D_ATTEMPT_STATUS_CODE));
			if (PQgetisnull(res, i, D_LATENCY_MS))
				json_set_null(a, "latency_ms");
			else
				json_set_int(a, "latency_ms", col_int(res, i, D_LATENCY_MS));
			json_set_str(a, "error", col_str(r, res, i, D_ERROR));
			json_object_array_add(log, a);
		}
	}
	return arr;
}

/* The event as delivered (the webhook envelope), its delivery summary and
 * its deliveries. */
int
activity_get(struct req *r, struct json_object *out)
{
	const char *id = req_cap(r, "event_id"), *why;
	struct json_object *deliveries;
	struct events_wire ev;
	PGresult *res;
	int rc;

	if ((rc = event_or_reply(r, id, &res)) != 0)
		return rc;
	if ((deliveries = deliveries_json(r, id)) == NULL)
		return api_db_error(r);

	memset(&ev, 0, sizeof(ev));
	ev.id = col_str(r, res, 0, E_ID);
	ev.type = col_str(r, res, 0, E_TYPE);
	ev.created_ms = col_int(res, 0, E_CREATED);
	ev.client_id = r->client_id;
	ev.mode = col_str(r, res, 0, E_ENVIRONMENT);
	/* events recorded before sql/007_deliveries.sql carry no api_version */
	ev.api_version = PQgetisnull(res, 0, E_API_VERSION) ? r->cfg->api_version :
	    col_str(r, res, 0, E_API_VERSION);
	ev.producer_service = col_str(r, res, 0, E_PRODUCER);
	ev.correlation_id = col_str(r, res, 0, E_CORRELATION_ID);
	ev.request_id = col_str(r, res, 0, E_REQUEST_ID);
	ev.idempotency_key = col_str(r, res, 0, E_IDEMPOTENCY_KEY);
	ev.data = json_parse(r->arena, PQgetvalue(res, 0, E_DATA),
	    (size_t)PQgetlength(res, 0, E_DATA), &why);
	if (ev.data == NULL)
		ev.data = json_obj(r->arena);
	json_merge(out, events_envelope(r->arena, &ev));
	json_set(out, "delivery", summary_json(res, 0, E_SUMMARY));
	json_set(out, "deliveries", json_object_get(deliveries));
	return 200;
}

/* The body's shape: event_id, or from and to (from < to, at most
 * ACTIVITY_WINDOW_DAYS apart). 0 ok, else the 400 written. */
static int
replay_check(struct req *r, const char *event_id, const char *from, const char *to)
{
	const char *p[3] = { from, to, arena_printf(r->arena, "%d", ACTIVITY_WINDOW_DAYS) };
	PGresult *res;

	if (event_id != NULL && (from != NULL || to != NULL))
		return api_field_error(r, 400, ERR_VALIDATION_ERROR, from != NULL ? "from" : "to",
		    "not_allowed", "send either event_id, or from and to");
	if (event_id != NULL)
		return 0;
	if (from == NULL && to == NULL)
		return api_field_error(r, 400, ERR_VALIDATION_ERROR, "event_id", "required",
		    "send event_id, or from and to");
	if (from == NULL || to == NULL)
		return api_field_error(r, 400, ERR_VALIDATION_ERROR, from == NULL ? "from" : "to",
		    "required", "is required with the other end of the window");
	if ((res = db_query(r, &stmts[A_WINDOW], 3, p)) == NULL)
		return query_failed(r, "from");
	if (PQgetvalue(res, 0, WIN_ORDERED)[0] != 't')
		return api_field_error(r, 400, ERR_VALIDATION_ERROR, "to", "out_of_range",
		    "must be after from");
	if (PQgetvalue(res, 0, WIN_SHORT)[0] != 't')
		return api_field_error(r, 400, ERR_VALIDATION_ERROR, "to", "out_of_range",
		    arena_printf(r->arena, "the window is at most %d days", ACTIVITY_WINDOW_DAYS));
	return 0;
}

/* The key's webhook_id, enabled: 0, else 404 WEBHOOK_NOT_FOUND, 409
 * WEBHOOK_DISABLED or 503 written. */
static int
replay_webhook_or_reply(struct req *r, const char *webhook_id)
{
	const char *p[3] = { r->client_id, r->env, webhook_id };
	PGresult *res;

	if ((res = db_query(r, &stmts[A_WEBHOOK], 3, p)) == NULL)
		return api_db_error(r);
	if (PQntuples(res) != 1)
		return api_error(r, 404, ERR_WEBHOOK_NOT_FOUND, NULL, "no webhook %s", webhook_id);
	if (PQgetvalue(res, 0, ONE_VALUE)[0] != 't')
		return api_error(r, 409, ERR_WEBHOOK_DISABLED, "enable the webhook first",
		    "webhook %s is disabled", webhook_id);
	return 0;
}

/*
 * Queue new deliveries of one event, or of every event in [from, to), to
 * the current enabled subscriptions that match (only webhook_id's when
 * given; only pairs whose latest delivery failed with only_failed). The
 * event id is kept, so receivers deduplicate. ROUTE_IDEM: an
 * Idempotency-Key, when sent, makes a retry answer the first 202 without
 * queueing again; a refusal rolls the key back with everything else.
 */
int
activity_replay(struct req *r, struct json_object *out)
{
	const char *event_id = json_get_str(r->body, "event_id");
	const char *from = json_get_str(r->body, "from"), *to = json_get_str(r->body, "to");
	const char *webhook_id = json_get_str(r->body, "webhook_id");
	int only_failed = json_get_bool(r->body, "only_failed", 0);
	const char *p[9] = { r->client_id, r->env, event_id, from, to,
	    only_failed ? "true" : "false", webhook_id,
	    arena_printf(r->arena, "%d", ACTIVITY_REPLAY_MAX + 1), ACTIVITY_ONLY_SQL };
	PGresult *res;
	long long queued;
	int rc;

	if ((rc = replay_check(r, event_id, from, to)) != 0 ||
	    (event_id != NULL && (rc = event_or_reply(r, event_id, &res)) != 0) ||
	    (webhook_id != NULL && (rc = replay_webhook_or_reply(r, webhook_id)) != 0))
		return rc;
	if ((res = db_query(r, &stmts[A_REPLAY], 9, p)) == NULL)
		return query_failed(r, from != NULL ? "from" : NULL);
	if ((queued = col_int(res, 0, ONE_VALUE)) > ACTIVITY_REPLAY_MAX)
		return api_error(r, 400, ERR_REPLAY_TOO_LARGE, "replay a shorter window",
		    "a replay may queue at most %d deliveries", ACTIVITY_REPLAY_MAX);
	json_set_int(out, "queued", queued);
	return 202;
}

/*
 * A synthetic event of the path's type (historic names normalised) whose
 * data.object is the body as sent (any object, {} when none, at most
 * ACTIVITY_TRIGGER_DATA_MAX bytes), emitted to every matching sandbox
 * subscription of the client. ROUTE_IDEM: the same Idempotency-Key and
 * body answer the first 202 (the same event) and emit nothing.
 */
int
activity_trigger(struct req *r, struct json_object *out)
{
	const char *type = events_type(req_cap(r, "event_type")), *id;
	int n;

	if (type == NULL)
		return api_field_error(r, 400, ERR_VALIDATION_ERROR, "event_type",
		    "unknown_event_type", "is not a deliverable event type");
	if (r->http.body_len > ACTIVITY_TRIGGER_DATA_MAX)
		return api_error(r, 413, ERR_PAYLOAD_TOO_LARGE,
		    "send at most 64 KiB of event data",
		    "the event data is %zu bytes; at most %d are accepted", r->http.body_len,
		    ACTIVITY_TRIGGER_DATA_MAX);
	if ((id = events_emit(r, r->client_id, r->env, type, r->body, &n)) == NULL)
		return api_db_error(r);
	json_set_str(out, "event_id", id);
	json_set_str(out, "object", "event");
	json_set_str(out, "type", type);
	json_set_int(out, "deliveries", n);
	return 202;
}
