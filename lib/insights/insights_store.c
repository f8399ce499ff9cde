/*
 * Insight rows: the one place a status moves and an insight event is
 * written (insights.h has the lifecycle; insights_int.h the calls).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>
#include <libpq-fe.h>

#include "core/arena.h"
#include "core/crypto.h"
#include "core/db.h"
#include "core/json.h"
#include "core/req.h"
#include "events/events.h"
#include "insights/insights.h"
#include "insights/insights_int.h"
#include "insights/insights_rules.h"

/* the key's insight: $1 client, $2 environment, $3 id, $4 user_aid */
#define KEYS_INSIGHT \
	"client_id = $1 AND environment = $2 AND id = $3 AND user_aid = $4"

enum {
	S_GET, S_LOCK, S_MOVE, S_CREATE, S_REFRESH, S__MAX
};
static struct db_stmt stmts[S__MAX] = {
	[S_GET] = { "insights_get",
	    "SELECT insights_json(i) FROM insights i WHERE " KEYS_INSIGHT },
	[S_LOCK] = { "insights_lock",
	    "SELECT status, coalesce((extract(epoch FROM snoozed_until) * 1000)::bigint, 0)"
	    " FROM insights WHERE " KEYS_INSIGHT " FOR UPDATE" },
	/*
	 * $3 the status; $4 snoozed_until (SNOOZED); $5 resolved_at (RESOLVED;
	 * NULL: now); $6 resolved_by. Leaving RESOLVED for DISMISSED keeps
	 * resolved_at: when it was resolved stays true.
	 */
	[S_MOVE] = { "insights_move",
	    "UPDATE insights SET status = $3, snoozed_until = $4::timestamptz,"
	    " resolved_at = CASE WHEN $3 = 'RESOLVED' THEN coalesce($5::timestamptz, now())"
	    "  ELSE resolved_at END,"
	    " resolved_by = CASE WHEN $3 = 'RESOLVED' THEN $6 ELSE resolved_by END,"
	    " dismissed_at = CASE WHEN $3 = 'DISMISSED' THEN now() ELSE dismissed_at END,"
	    " lifecycle_version = lifecycle_version + 1, updated_at = now()"
	    " WHERE client_id = $1 AND id = $2 RETURNING insights_json(insights)" },
	/*
	 * A new insight unless the subject is settled by the user (dismissed,
	 * or resolved by the client) or live already (another run's): $1
	 * client, $2 id, $3 environment, $4 user, $5 link, $6 account, $7
	 * biller, $8 bill, $9 type, $10 subject, $11 severity, $12 evidence,
	 * $13 actions, $14 reasoning, $15 fingerprint.
	 */
	[S_CREATE] = { "insights_create",
	    "INSERT INTO insights AS n (client_id, id, environment, user_aid, link_id, account_id,"
	    " biller_id, bill_id, type, subject, severity, evidence, proposed_actions, reasoning,"
	    " fingerprint)"
	    " SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12::json, $13::json, $14, $15"
	    " WHERE NOT EXISTS (SELECT 1 FROM insights s WHERE s.client_id = $1"
	    "  AND s.environment = $3 AND s.user_aid = $4 AND s.type = $9 AND s.subject = $10"
	    "  AND (s.status = 'DISMISSED' OR s.resolved_by = 'client'))"
	    " ON CONFLICT (client_id, environment, user_aid, type, subject)"
	    "  WHERE status IN ('OPEN', 'SNOOZED') DO NOTHING"
	    " RETURNING insights_json(n)" },
	/* $3 severity, $4 evidence, $5 actions, $6 reasoning, $7 fingerprint,
	 * $8 bill, $9 1 when the severity moved (an event: a new version) */
	[S_REFRESH] = { "insights_refresh",
	    "UPDATE insights SET severity = $3, evidence = $4::json, proposed_actions = $5::json,"
	    " reasoning = $6, fingerprint = $7, bill_id = $8,"
	    " lifecycle_version = lifecycle_version + $9::int, updated_at = now()"
	    " WHERE client_id = $1 AND id = $2 AND status IN ('OPEN', 'SNOOZED')"
	    " RETURNING insights_json(insights)" },
};
const struct db_stmt_set insights_stmt_set = { "insights", stmts, S__MAX };

/*
 * The event of an insight whose entity (JSON text) is in res: the entity,
 * with `user_id` (the client user, as every event names it) and, for
 * insight.updated, `previous_status`.
 */
static int
emit(struct req *r, const char *client_id, const char *environment, const char *type,
    PGresult *res, const char *previous, struct json_object **entity)
{
	struct json_object *o;
	const char *ev, *why;

	if ((o = json_parse(r->arena, PQgetvalue(res, 0, 0), (size_t)PQgetlength(res, 0, 0),
	    &why)) == NULL)
		return -1;
	if (entity != NULL)
		*entity = db_json_raw(r->arena, res, 0, 0);
	o = json_object_get(o);
	json_set_str(o, "user_id", json_get_str(o, "user_aid"));
	if (previous != NULL)
		json_set_str(o, "previous_status", previous);
	ev = events_emit(r, client_id, environment, type, o, NULL);
	json_object_put(o);
	return ev == NULL ? -1 : 0;
}

int
insights_lock(struct req *r, const char *id, const char *user_aid, const char **status,
    int64_t *snoozed_ms)
{
	const char *p[4] = { r->client_id, r->env, id, user_aid };
	PGresult *res;

	if ((res = db_query(r, &stmts[S_LOCK], 4, p)) == NULL)
		return -1;
	if (PQntuples(res) != 1)
		return 0;
	*status = PQgetvalue(res, 0, 0);
	*snoozed_ms = strtoll(PQgetvalue(res, 0, 1), NULL, 10);
	return 1;
}

int
insights_entity(struct req *r, const char *id, const char *user_aid, struct json_object **entity)
{
	const char *p[4] = { r->client_id, r->env, id, user_aid };
	PGresult *res;

	if ((res = db_query(r, &stmts[S_GET], 4, p)) == NULL)
		return -1;
	if (PQntuples(res) != 1)
		return 0;
	*entity = db_json_raw(r->arena, res, 0, 0);
	return 1;
}

int
insights_move(struct req *r, const char *client_id, const char *environment, const char *id,
    const char *from, const char *status, const char *until, const char *resolved_at,
    const char *resolved_by, struct json_object **entity)
{
	const char *p[6] = { client_id, id, status, until, resolved_at, resolved_by };
	PGresult *res;

	if ((res = db_exec(r->db, r->arena, &stmts[S_MOVE], 6, p)) == NULL ||
	    PQntuples(res) != 1)
		return -1;
	return emit(r, client_id, environment, "insight.updated", res, from, entity);
}

static const char *
json_plain(struct json_object *o)
{
	return json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
}

int
insights_create(struct req *r, const struct insights_owner *w, const struct ins_finding *f,
    const char *fingerprint)
{
	const char *p[15] = { w->client_id, crypto_id_new(r->arena, INSIGHTS_PREFIX),
	    w->environment, w->user_aid, w->link_id, f->account_id, f->biller_id, f->bill_id,
	    f->type, f->subject, f->severity, json_plain(f->evidence), json_plain(f->actions),
	    f->reasoning, fingerprint };
	PGresult *res;

	if ((res = db_exec(r->db, r->arena, &stmts[S_CREATE], 15, p)) == NULL)
		return -1;
	if (PQntuples(res) != 1)
		return 0;
	return emit(r, w->client_id, w->environment, "insight.created", res, NULL, NULL) == 0 ?
	    1 : -1;
}

int
insights_refresh(struct req *r, const struct insights_owner *w, const struct insights_live *l,
    const struct ins_finding *f, const char *fingerprint)
{
	int moved = strcmp(l->severity, f->severity) != 0;
	const char *p[9] = { w->client_id, l->id, f->severity, json_plain(f->evidence),
	    json_plain(f->actions), f->reasoning, fingerprint, f->bill_id, moved ? "1" : "0" };
	PGresult *res;

	if ((res = db_exec(r->db, r->arena, &stmts[S_REFRESH], 9, p)) == NULL)
		return -1;
	if (PQntuples(res) != 1 || !moved)
		return 0;
	/* the severity moved (overdue_risk: due soon -> past due) */
	return emit(r, w->client_id, w->environment, "insight.updated", res, NULL, NULL);
}
