/*
 * The insights routes (SPEC "Insights"): the list of a link's account, one
 * insight, and the client's three moves (insights.h has the lifecycle).
 * Another client's, environment's or user's insight is 404, as an unknown
 * one is.
 */
#include <stdint.h>
#include <string.h>

#include <json-c/json.h>
#include <libpq-fe.h>

#include "core/clock.h"
#include "core/crypto.h"
#include "core/cursor.h"
#include "core/db.h"
#include "core/errcodes.h"
#include "core/errors.h"
#include "core/jobq.h"
#include "core/json.h"
#include "core/req.h"
#include "core/validate.h"
#include "insights/insights.h"
#include "insights/insights_int.h"
#include "links/links.h"

/* the longest a snooze may last */
#define SNOOZE_MAX_MS	(366LL * 24 * 3600 * 1000)
/* how far ahead of the server's clock a resolved_at may be (clock skew) */
#define RESOLVED_SKEW_MS	(60LL * 1000)

static const char *const states[] = { "OPEN", "SNOOZED", "DISMISSED", "RESOLVED", NULL };

const struct vfield insights_list_query[] = {
	{ "account_link_id", NULL, VT_STRING, V_REQUIRED, 1, 255 },
	{ "account_id", NULL, VT_STRING, V_REQUIRED, 1, 255 },
	{ "user_aid", NULL, VT_STRING, 0, 1, 255 },
	{ "status", NULL, VT_STRING, 0, 0, 0, states },
	CURSOR_LIMIT_FIELD(INSIGHTS_LIMIT_MAX),
	CURSOR_QUERY_FIELD,
	{ NULL }
};

const struct vfield insights_user_query[] = {
	{ "user_aid", NULL, VT_STRING, V_REQUIRED, 1, 255 },
	{ NULL }
};

const struct vfield insights_snooze_fields[] = {
	{ "until", NULL, VT_STRING, V_REQUIRED, 0, 0, NULL, VF_DATETIME },
	{ NULL }
};

const struct vfield insights_resolve_fields[] = {
	{ "resolved_at", NULL, VT_STRING, 0, 0, 0, NULL, VF_DATETIME },
	{ NULL }
};

enum { L_ID, L_POS, L_JSON };
/* newest first on (created_at, id); $3 link, $4 account, $5 user, $6
 * status, $7 $8 the cursor's position, $9 the page size + 1 */
static struct db_stmt list_stmt = { "insights_list",
    "SELECT i.id, " CURSOR_POS("i.created_at") ", insights_json(i) FROM insights i"
    " WHERE i.client_id = $1 AND i.environment = $2 AND i.link_id = $3 AND i.account_id = $4"
    " AND ($5::text IS NULL OR i.user_aid = $5) AND ($6::text IS NULL OR i.status = $6)"
    " AND i.created_at <= $7::timestamptz AND (i.created_at < $7::timestamptz OR i.id < $8)"
    " ORDER BY i.created_at DESC, i.id DESC LIMIT $9::int" };
const struct db_stmt_set insights_api_stmt_set = { "insights_api", &list_stmt, 1 };

static const struct cursor_list insights_page = {
	.name = "insights", .flags = CURSOR_TENANT | CURSOR_KEYSET,
	.shape = CURSOR_NAMED, .key = "insights", .limit = INSIGHTS_LIMIT_DEFAULT,
	.prefix = INSIGHTS_PREFIX, .cols = { L_POS, L_ID }, .json_col = L_JSON,
};

int
insights_list(struct req *r, struct json_object *out)
{
	const char *link = json_get_str(r->query, "account_link_id"), *canon;
	const char *p[9] = { r->client_id, r->env, NULL, json_get_str(r->query, "account_id"),
	    json_get_str(r->query, "user_aid"), json_get_str(r->query, "status") };
	struct cursor_page pg;
	PGresult *res;
	int rc;

	/* a bare UUID names the link too; anything else matches nothing */
	p[2] = (canon = links_id_canonical(r, link)) != NULL ? canon : link;
	if ((rc = cursor_page_open(r, &insights_page, &p[2], 4, &pg)) != 0)
		return rc;
	p[6] = pg.pos[0];
	p[7] = pg.pos[1];
	p[8] = pg.limit1;
	if ((res = db_query(r, &list_stmt, 9, p)) == NULL)
		return api_db_error(r);
	return cursor_page_reply(r, out, &pg, res);
}

static int
not_found(struct req *r, const char *id)
{
	return api_error(r, 404, ERR_INSIGHT_NOT_FOUND, NULL,
	    "no insight %s for this user_aid", id);
}

int
insights_get(struct req *r, struct json_object *out)
{
	const char *id = req_cap(r, "id");
	int rc;

	(void)out;
	if (!crypto_id_valid(id, INSIGHTS_PREFIX, 0))
		return not_found(r, id);
	if ((rc = insights_entity(r, id, json_get_str(r->query, "user_aid"), &r->out)) < 0)
		return api_db_error(r);
	return rc == 0 ? not_found(r, id) : 200;
}

/*
 * The route's insight, locked: 0 with its status (and snoozed_until as
 * epoch ms), or the status written (404).
 */
static int
lock_or_reply(struct req *r, const char **id, const char **status, int64_t *snoozed_ms)
{
	int rc;

	*id = req_cap(r, "id");
	if (!crypto_id_valid(*id, INSIGHTS_PREFIX, 0))
		return not_found(r, *id);
	if ((rc = insights_lock(r, *id, json_get_str(r->query, "user_aid"), status,
	    snoozed_ms)) < 0)
		return api_db_error(r);
	return rc == 0 ? not_found(r, *id) : 0;
}

/* The answer of a move that changed nothing: the insight as it is. */
static int
unchanged(struct req *r, const char *id)
{
	if (insights_entity(r, id, json_get_str(r->query, "user_aid"), &r->out) != 1)
		return api_db_error(r);
	return 200;
}

static int
move(struct req *r, const char *id, const char *from, const char *to, const char *until,
    const char *resolved_at)
{
	if (insights_move(r, r->client_id, r->env, id, from, to, until, resolved_at,
	    strcmp(to, "RESOLVED") == 0 ? "client" : NULL, &r->out) != 0)
		return api_db_error(r);
	return 200;
}

int
insights_snooze(struct req *r, struct json_object *out)
{
	const char *until = json_get_str(r->body, "until"), *id, *status;
	char iso[TIME_ISO_SIZE];
	int64_t ms = 0, now = time_now_ms(), snoozed;
	int rc;

	(void)out;
	time_parse(until, &ms);		/* VF_DATETIME checked it parses */
	if (ms <= now)
		return api_field_error(r, 400, ERR_VALIDATION_ERROR, "until", "not_in_future",
		    "until must be an instant in the future");
	if (ms - now > SNOOZE_MAX_MS)
		return api_field_error(r, 400, ERR_VALIDATION_ERROR, "until", "too_far",
		    "an insight can be snoozed for at most 366 days");
	if ((rc = lock_or_reply(r, &id, &status, &snoozed)) != 0)
		return rc;
	if (strcmp(status, "DISMISSED") == 0 || strcmp(status, "RESOLVED") == 0)
		return api_error(r, 409, ERR_INSIGHT_STATE_CONFLICT, NULL,
		    "insight %s is %s: only an OPEN or SNOOZED insight can be snoozed", id, status);
	if (strcmp(status, "SNOOZED") == 0 && snoozed == ms)
		return unchanged(r, id);	/* the same until: idempotent */
	time_iso(iso, ms);
	if ((rc = move(r, id, status, "SNOOZED", iso, NULL)) != 200)
		return rc;
	/* back to OPEN at `until` (a later snooze's wake re-queues itself) */
	if (jobq_add(r, INSIGHTS_JOB_WAKE, r->client_id, r->env, id, NULL,
	    (int)((ms - now + 999) / 1000)) != 0)
		return api_db_error(r);
	return 200;
}

int
insights_dismiss(struct req *r, struct json_object *out)
{
	const char *id, *status;
	int64_t snoozed;
	int rc;

	(void)out;
	if ((rc = lock_or_reply(r, &id, &status, &snoozed)) != 0)
		return rc;
	if (strcmp(status, "DISMISSED") == 0)
		return unchanged(r, id);
	return move(r, id, status, "DISMISSED", NULL, NULL);
}

int
insights_resolve(struct req *r, struct json_object *out)
{
	const char *at = json_get_str(r->body, "resolved_at"), *id, *status;
	char iso[TIME_ISO_SIZE];
	int64_t ms = 0, snoozed;
	int rc;

	(void)out;
	if (at != NULL) {
		time_parse(at, &ms);
		if (ms > time_now_ms() + RESOLVED_SKEW_MS)
			return api_field_error(r, 400, ERR_VALIDATION_ERROR, "resolved_at",
			    "in_future", "resolved_at cannot be in the future");
		at = time_iso(iso, ms);
	}
	if ((rc = lock_or_reply(r, &id, &status, &snoozed)) != 0)
		return rc;
	/* the user's dismissal stays; a resolved insight stays as it was */
	if (strcmp(status, "DISMISSED") == 0 || strcmp(status, "RESOLVED") == 0)
		return unchanged(r, id);
	return move(r, id, status, "RESOLVED", NULL, at);
}
