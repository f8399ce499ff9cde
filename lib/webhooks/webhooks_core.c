/*
 * What both webhook front ends share: the
 * subscription rows (secrets sealed at rest), URL checks, the activity
 * event of a deletion, and the signed test delivery.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <curl/curl.h>
#include <sodium.h>

#include "core/arena.h"
#include "core/clock.h"
#include "core/config.h"
#include "core/crypto.h"
#include "core/db.h"
#include "core/errors.h"
#include "core/json.h"
#include "core/log.h"
#include "core/req.h"
#include "core/urlsafe.h"
#include "events/events.h"
#include "webhooks/webhooks_sign.h"
#include "webhooks/webhooks.h"

/* A previous secret shows only while it still signs. */
#define ROW_COLS "id, client_id, environment, url, events::text, enabled, disabled_reason, " \
	DB_ISO("created_at") ", " DB_ISO("updated_at") ", CASE WHEN previous_secret_expires_at > now()" \
	" THEN " DB_ISO("previous_secret_expires_at") " END"
enum row_col {
	RC_ID,
	RC_CLIENT_ID,
	RC_ENVIRONMENT,
	RC_URL,
	RC_EVENTS,
	RC_ENABLED,
	RC_DISABLED_REASON,
	RC_CREATED_AT,
	RC_UPDATED_AT,
	RC_PREVIOUS_EXPIRES_AT,
	RC__MAX
};
/* What a deletion reports in its activity event. */
#define DELETED_COLS "environment, url"
enum deleted_col { DC_ENVIRONMENT, DC_URL, DC__MAX };
/* The live secrets: the current one, and the previous one in its window. */
#define SECRET_COLS "secret, CASE WHEN previous_secret_expires_at > now() THEN previous_secret END"
enum secret_col { SC_CURRENT, SC_PREVIOUS, SC__MAX };
/* One count, one flag: single-column answers. */
enum one_col { ONE_VALUE };

/*
 * Test deliveries hold an API worker while the endpoint answers, so they
 * are bounded by PostgreSQL advisory locks on the worker's connection
 * (session level, so a worker that dies or loses its connection frees
 * them): one per developer, and WEBHOOKS_TEST_SLOTS slots per API host
 * (its host name in the key) shared by that host's workers.
 */
#define TEST_DEV_KEY	"hashtextextended('bds-webhook-test/' || $1, 0)"
#define TEST_SLOT_KEY	"hashtext('bds-webhook-test-host/' || $1)"

enum {
	W_CLIENT_LOCK,
	W_COUNT,
	W_INSERT,
	W_LIST,
	W_GET,
	W_PRIMARY,
	W_UPDATE,
	W_DELETE,
	W_ROTATE,
	W_SECRETS,
	W_TEST_DEV_LOCK,
	W_TEST_DEV_UNLOCK,
	W_TEST_SLOT_LOCK,
	W_TEST_SLOT_UNLOCK,
	W__MAX
};
static struct db_stmt stmts[W__MAX] = {
	/* Serialises writes to one client's subscriptions (the per-environment
	 * cap, the primary webhook); NO KEY keeps inserts that reference the
	 * client (foreign keys) unblocked. */
	[W_CLIENT_LOCK] = { "webhooks_client_lock",
	    "SELECT 1 FROM clients WHERE id = $1 AND ($2::text IS NULL OR user_id = $2)"
	    " FOR NO KEY UPDATE" },
	[W_COUNT] = { "webhooks_count",
	    "SELECT count(*) FROM webhooks WHERE client_id = $1 AND environment = $2" },
	[W_INSERT] = { "webhooks_insert",
	    "INSERT INTO webhooks (client_id, id, environment, url, events, enabled, secret)"
	    " VALUES ($1, $2, $3, $4, $5::jsonb, $6::bool, $7::bytea) RETURNING " ROW_COLS },
	[W_LIST] = { "webhooks_list",
	    "SELECT " ROW_COLS " FROM webhooks WHERE client_id = $1"
	    " AND ($2::text IS NULL OR environment = $2) ORDER BY created_at, id" },
	[W_GET] = { "webhooks_get",
	    "SELECT " ROW_COLS " FROM webhooks WHERE client_id = $1 AND id = $2"
	    " AND ($3::text IS NULL OR environment = $3)" },
	/* the oldest enabled one, else the oldest disabled one (so a PUT
	 * can enable again what it disabled) */
	[W_PRIMARY] = { "webhooks_primary",
	    "SELECT " ROW_COLS " FROM webhooks WHERE client_id = $1 AND environment = $2"
	    " ORDER BY enabled DESC, created_at, id LIMIT 1" },
	/* Re-enabling clears why it was disabled; disabling keeps an automatic
	 * reason (a 410) rather than overwrite it. */
	[W_UPDATE] = { "webhooks_update",
	    "UPDATE webhooks SET url = coalesce($4, url), events = coalesce($5::jsonb, events),"
	    " enabled = coalesce($6::bool, enabled),"
	    " disabled_reason = CASE WHEN $6::bool IS NULL THEN disabled_reason"
	    "  WHEN $6::bool THEN NULL ELSE coalesce(disabled_reason, 'disabled by request') END,"
	    " updated_at = now()"
	    " WHERE client_id = $1 AND id = $2 AND ($3::text IS NULL OR environment = $3)"
	    " RETURNING " ROW_COLS },
	[W_DELETE] = { "webhooks_delete",
	    "DELETE FROM webhooks WHERE client_id = $1 AND id = $2"
	    " AND ($3::text IS NULL OR environment = $3) RETURNING " DELETED_COLS },
	/* One statement: the current secret becomes the previous one (sealed
	 * bytes moved as they are: both are bound to the row id). */
	[W_ROTATE] = { "webhooks_rotate",
	    "UPDATE webhooks SET"
	    " previous_secret = CASE WHEN $5::int > 0 THEN secret END,"
	    " previous_secret_expires_at = CASE WHEN $5::int > 0"
	    "  THEN now() + make_interval(hours => $5::int) END,"
	    " secret = $4::bytea, updated_at = now()"
	    " WHERE client_id = $1 AND id = $2 AND ($3::text IS NULL OR environment = $3)"
	    " RETURNING " ROW_COLS },
	[W_SECRETS] = { "webhooks_secrets",
	    "SELECT " SECRET_COLS " FROM webhooks WHERE client_id = $1 AND id = $2" },
	[W_TEST_DEV_LOCK] = { "webhooks_test_dev_lock",
	    "SELECT pg_try_advisory_lock(" TEST_DEV_KEY ")" },
	[W_TEST_DEV_UNLOCK] = { "webhooks_test_dev_unlock",
	    "SELECT pg_advisory_unlock(" TEST_DEV_KEY ")" },
	/* The first free slot of $2 (no row: all taken). Without ORDER BY the
	 * scan stops at the first lock taken, so no other slot is held. */
	[W_TEST_SLOT_LOCK] = { "webhooks_test_slot_lock",
	    "SELECT s FROM generate_series(0, $2::int - 1) s"
	    " WHERE pg_try_advisory_lock(" TEST_SLOT_KEY ", s) LIMIT 1" },
	[W_TEST_SLOT_UNLOCK] = { "webhooks_test_slot_unlock",
	    "SELECT pg_advisory_unlock(" TEST_SLOT_KEY ", $2::int)" },
};
const struct db_stmt_set webhooks_stmt_set = { "webhooks", stmts, W__MAX };

/* ------------------------------------------------------------------ */
/* Rows                                                                */

static void
row_from(struct req *r, PGresult *res, int i, struct webhooks_row *w)
{
#define COL(c) (PQgetisnull(res, i, c) ? NULL : arena_strdup(r->arena, PQgetvalue(res, i, c)))
	const char *why;

	w->id = COL(RC_ID);
	w->client_id = COL(RC_CLIENT_ID);
	w->environment = COL(RC_ENVIRONMENT);
	w->url = COL(RC_URL);
	w->events = json_parse(r->arena, PQgetvalue(res, i, RC_EVENTS),
	    (size_t)PQgetlength(res, i, RC_EVENTS), &why);
	if (w->events == NULL)
		w->events = json_arr(r->arena);
	w->enabled = PQgetvalue(res, i, RC_ENABLED)[0] == 't';
	w->disabled_reason = COL(RC_DISABLED_REASON);
	w->created_at = COL(RC_CREATED_AT);
	w->updated_at = COL(RC_UPDATED_AT);
	w->previous_expires_at = COL(RC_PREVIOUS_EXPIRES_AT);
#undef COL
}

struct json_object *
webhooks_json(struct req *r, const struct webhooks_row *w, int iam, const char *secret)
{
	struct json_object *o = json_obj(r->arena);

	json_set_str(o, "id", w->id);
	if (!iam)
		json_set_str(o, "object", "webhook_endpoint");
	json_set_str(o, iam ? "clientId" : "client_id", w->client_id);
	json_set_str(o, "environment", w->environment);
	json_set_str(o, "url", w->url);
	json_set(o, "events", json_object_get(w->events));
	json_set_bool(o, "enabled", w->enabled);
	json_set_str(o, iam ? "disabledReason" : "disabled_reason", w->disabled_reason);
	if (secret != NULL)
		json_set_str(o, "secret", secret);
	json_set_str(o, iam ? "previousSecretExpiresAt" : "previous_secret_expires_at",
	    w->previous_expires_at);
	json_set_str(o, iam ? "createdAt" : "created_at", w->created_at);
	json_set_str(o, iam ? "updatedAt" : "updated_at", w->updated_at);
	return o;
}

static int
not_found(struct req *r, const char *id)
{
	return api_error(r, 404, ERR_WEBHOOK_NOT_FOUND, NULL, "no webhook %s", id);
}

/* A statement's one row into *w: 0, or the 404 (none) or 503 written. */
static int
row_or_reply(struct req *r, PGresult *res, const char *id, struct webhooks_row *w)
{
	memset(w, 0, sizeof(*w));
	if (res == NULL)
		return api_db_error(r);
	if (PQntuples(res) != 1)
		return not_found(r, id);
	row_from(r, res, 0, w);
	return 0;
}

int
webhooks_client_lock_or_reply(struct req *r, const char *client_id, const char *user_id)
{
	const char *p[2] = { client_id, user_id };
	PGresult *res;

	if (!crypto_id_valid(client_id, "cli", 0))
		res = NULL;	/* no such id can exist: no query */
	else if ((res = db_query(r, &stmts[W_CLIENT_LOCK], 2, p)) == NULL)
		return api_db_error(r);
	if (res == NULL || PQntuples(res) != 1)
		return api_error(r, 404, ERR_CLIENT_NOT_FOUND, NULL, "no client %s", client_id);
	return 0;
}

struct json_object *
webhooks_list_json(struct req *r, const char *client_id, const char *environment, int iam)
{
	const char *p[2] = { client_id, environment };
	struct json_object *arr;
	struct webhooks_row w;
	PGresult *res;

	if ((res = db_query(r, &stmts[W_LIST], 2, p)) == NULL)
		return NULL;
	arr = json_arr(r->arena);
	for (int i = 0; i < PQntuples(res); i++) {
		memset(&w, 0, sizeof(w));
		row_from(r, res, i, &w);
		json_object_array_add(arr, json_object_get(webhooks_json(r, &w, iam, NULL)));
	}
	return arr;
}

int
webhooks_get_or_reply(struct req *r, const char *client_id, const char *environment,
    const char *id, struct webhooks_row *w)
{
	const char *p[3] = { client_id, id, environment };

	if (!crypto_id_valid(id, "whk", 0))
		return not_found(r, id);
	return row_or_reply(r, db_query(r, &stmts[W_GET], 3, p), id, w);
}

int
webhooks_primary(struct req *r, const char *client_id, const char *environment,
    struct webhooks_row *w)
{
	const char *p[2] = { client_id, environment };
	PGresult *res;

	memset(w, 0, sizeof(*w));
	if ((res = db_query(r, &stmts[W_PRIMARY], 2, p)) == NULL)
		return -1;
	if (PQntuples(res) != 1)
		return 0;
	row_from(r, res, 0, w);
	return 1;
}

int
webhooks_room_or_reply(struct req *r, const char *client_id, const char *environment)
{
	const char *p[2] = { client_id, environment };
	PGresult *res;

	if ((res = db_query(r, &stmts[W_COUNT], 2, p)) == NULL)
		return api_db_error(r);
	if (atol(PQgetvalue(res, 0, ONE_VALUE)) >= WEBHOOKS_PER_ENVIRONMENT)
		return api_error(r, 400, ERR_WEBHOOK_LIMIT_REACHED, "delete an unused webhook first",
		    "a client may have at most %d webhooks per environment",
		    WEBHOOKS_PER_ENVIRONMENT);
	return 0;
}

int
webhooks_insert_or_reply(struct req *r, const char *client_id, const char *environment,
    const char *url, struct json_object *events, int enabled, const char *secret,
    struct webhooks_row *w)
{
	const char *id = crypto_id_new(r->arena, "whk");
	const char *sealed = webhooks_secret_seal(r->arena, r->cfg->secret_key, id, secret);
	const char *p[7] = { client_id, id, environment, url,
	    json_dump(r->arena, events, NULL), enabled ? "true" : "false", sealed };
	PGresult *res;

	memset(w, 0, sizeof(*w));
	if (sealed == NULL || (res = db_query(r, &stmts[W_INSERT], 7, p)) == NULL ||
	    PQntuples(res) != 1)
		return api_db_error(r);
	row_from(r, res, 0, w);
	return 0;
}

int
webhooks_update_or_reply(struct req *r, const char *client_id, const char *environment,
    const char *id, const char *url, struct json_object *events, int enabled,
    struct webhooks_row *w)
{
	const char *p[6] = { client_id, id, environment, url,
	    events != NULL ? json_dump(r->arena, events, NULL) : NULL,
	    enabled < 0 ? NULL : enabled ? "true" : "false" };

	if (!crypto_id_valid(id, "whk", 0))
		return not_found(r, id);
	return row_or_reply(r, db_query(r, &stmts[W_UPDATE], 6, p), id, w);
}

/*
 * The deletion is an activity event (webhook_endpoint.deleted) written by
 * events_emit like every event: with api_version and the request, and no
 * delivery (no subscription can name an activity-only type). The object
 * carries webhook_id too, so the flat envelope has it beside the object.
 */
int
webhooks_delete_or_reply(struct req *r, const char *client_id, const char *environment,
    const char *id)
{
	const char *p[3] = { client_id, id, environment };
	struct json_object *obj;
	PGresult *res;

	if (!crypto_id_valid(id, "whk", 0))
		return not_found(r, id);
	if ((res = db_query(r, &stmts[W_DELETE], 3, p)) == NULL)
		return api_db_error(r);
	if (PQntuples(res) != 1)
		return not_found(r, id);
	obj = json_obj(r->arena);
	json_set_str(obj, "id", id);
	json_set_str(obj, "object", "webhook_endpoint");
	json_set_str(obj, "webhook_id", id);
	json_set_str(obj, "environment", PQgetvalue(res, 0, DC_ENVIRONMENT));
	json_set_str(obj, "url", PQgetvalue(res, 0, DC_URL));
	if (events_emit(r, client_id, PQgetvalue(res, 0, DC_ENVIRONMENT),
	    WEBHOOKS_DELETED_EVENT, obj, NULL) == NULL)
		return api_db_error(r);
	return 0;
}

int
webhooks_rotate_or_reply(struct req *r, const char *client_id, const char *environment,
    const char *id, int hours, struct webhooks_row *w, const char **secret)
{
	const char *s = webhooks_secret_new(r->arena);
	const char *p[5] = { client_id, id, environment,
	    webhooks_secret_seal(r->arena, r->cfg->secret_key, id, s),
	    arena_printf(r->arena, "%d", hours) };
	int rc;

	*secret = NULL;
	if (!crypto_id_valid(id, "whk", 0))
		return not_found(r, id);
	if (p[3] == NULL)
		return api_db_error(r);
	if ((rc = row_or_reply(r, db_query(r, &stmts[W_ROTATE], 5, p), id, w)) == 0)
		*secret = s;
	return rc;
}

/* ------------------------------------------------------------------ */
/* URL checks and creation                                             */

static unsigned
url_flags(struct req *r, const char *environment)
{
	unsigned f = 0;

	if (strcmp(environment, "sandbox") == 0)
		f |= URLSAFE_ALLOW_HTTP;
	if (r->cfg->allow_private_targets)
		f |= URLSAFE_ALLOW_PRIVATE;
	return f;
}

int
webhooks_url_check(struct req *r, const char *field, const char *url, const char *environment)
{
	struct urlsafe_target t;
	const char *why, *code;

	switch (urlsafe_check(r->arena, url, url_flags(r, environment), &t, &why)) {
	case URLSAFE_OK:
	case URLSAFE_RESOLVE:
		/* a name may go live later; every delivery checks it again */
		return 0;
	case URLSAFE_SCHEME:
		code = "insecure_url";
		why = strcmp(environment, "sandbox") == 0 ? why :
		    "the URL must use https outside the sandbox";
		break;
	case URLSAFE_REFUSED:
		code = "forbidden_address";
		break;
	default:
		code = "invalid_url";
		break;
	}
	return api_field_error(r, 400, ERR_VALIDATION_ERROR, field, code, why);
}

int
webhooks_create(struct req *r, const char *user_id, const char *client_id,
    const char *environment, struct webhooks_row *w, const char **secret)
{
	const char *url = json_get_str(r->body, "url");
	const char *s = json_get_str(r->body, "secret");
	struct json_object *events = NULL;
	int rc;

	if ((rc = webhooks_url_check(r, "url", url, environment)) != 0)
		return rc;
	json_object_object_get_ex(r->body, "events", &events);
	events = events_types_unique(r->arena, events);
	if (s == NULL)
		s = webhooks_secret_new(r->arena);
	if ((rc = webhooks_client_lock_or_reply(r, client_id, user_id)) != 0 ||
	    (rc = webhooks_room_or_reply(r, client_id, environment)) != 0 ||
	    (rc = webhooks_insert_or_reply(r, client_id, environment, url, events,
	    json_get_bool(r->body, "enabled", 1), s, w)) != 0)
		return rc;
	*secret = s;
	return 0;
}

/* ------------------------------------------------------------------ */
/* The test delivery                                                   */

/* A plausible data member for a test event of type: the resource object
 * and its flat id, with a fresh id of the resource's prefix. */
static struct json_object *
sample_data(struct req *r, const char *type)
{
	static const struct {
		const char	*prefix;	/* of the event type */
		const char	*object;
		const char	*id_prefix;
		const char	*flat;
	} samples[] = {
		{ "bill_import.", "bill_import", "bimp", "bill_import_id" },
		{ "bill.", "bill", "bill", "bill_id" },
		{ "link_token.", "link_token", "lt", "link_token_id" },
		{ "link.session_finished", "link_token", "lt", "link_token_id" },
		{ "link_request.", "link_request", "rtl", "link_request_id" },
		{ "link.", "link", "link", "link_id" },
		{ "connection.", "link", "link", "link_id" },
		{ "payment.", "payment", "pay", "payment_id" },
		{ "pay.", "payment_attempt", "pay", "payment_attempt_id" },
		{ "insight.", "insight", "ins", "insight_id" },
		{ "biller.", "biller", "blr", "biller_id" },
		{ "customer.message.", "customer_message", "msg", "message_id" },
		{ "sandbox.", "sandbox", "sbx", "sandbox_id" },
	};
	struct json_object *data = json_obj(r->arena), *obj = json_object_new_object();
	const char *object = "event", *id = crypto_id_new(r->arena, "evt"), *flat = NULL;

	for (size_t i = 0; i < sizeof(samples) / sizeof(samples[0]); i++) {
		if (strncmp(type, samples[i].prefix, strlen(samples[i].prefix)) == 0) {
			object = samples[i].object;
			id = crypto_id_new(r->arena, samples[i].id_prefix);
			flat = samples[i].flat;
			break;
		}
	}
	json_set_str(obj, "id", id);
	json_set_str(obj, "object", object);
	json_set(data, "object", obj);
	if (flat != NULL)
		json_set_str(data, flat, id);
	return data;
}

/* The live secrets of subscription id, opened: 1 to 2 of them; -1 when the
 * database failed, -2 when one does not open (logged). */
static int
live_secrets(struct req *r, const char *client_id, const char *id, const char **out)
{
	const char *p[2] = { client_id, id };
	PGresult *res;
	int n = 0;

	if ((res = db_query(r, &stmts[W_SECRETS], 2, p)) == NULL)
		return -1;
	if (PQntuples(res) != 1)
		return -2;
	for (int c = SC_CURRENT; c < SC__MAX && c < WEBHOOKS_MAX_SECRETS; c++) {
		const char *s;

		if (PQgetisnull(res, 0, c))
			continue;
		s = webhooks_secret_open(r->arena, r->cfg->secret_key, id, PQgetvalue(res, 0, c));
		if (s == NULL) {
			log_msg("error", "request %s: webhook %s: a signing secret does not open",
			    r->http.request_id, id);
			return -2;
		}
		out[n++] = s;
	}
	return n;
}

/* The host's slot count: configured, else a quarter of the workers (at
 * least one), so stuck tests never hold every worker. */
static int
test_slots(struct req *r)
{
	int n = webhooks_settings(r->cfg)->webhook_test_slots;

	if (n <= 0)
		n = r->cfg->workers / 4;
	return n > 0 ? n : 1;
}

/* This API host's name: the slots are per host (cached per process). */
static const char *
test_host(void)
{
	static char host[256];

	if (host[0] == '\0' && (gethostname(host, sizeof(host) - 1) != 0 || host[0] == '\0'))
		snprintf(host, sizeof(host), "localhost");
	return host;
}

static int
test_busy(struct req *r, const char *code, const char *hint, const char *message)
{
	req_header_add(r, "Retry-After",
	    arena_printf(r->arena, "%d", (WEBHOOKS_TIMEOUT_MS + 999) / 1000));
	return api_error(r, 429, code, hint, "%s", message);
}

/* Release what test_begin_or_reply took (slot < 0: none). */
static void
test_end(struct req *r, int slot)
{
	const char *pd[1] = { req_owner(r) };
	const char *ps[2] = { test_host(), arena_printf(r->arena, "%d", slot) };

	if (slot >= 0)
		(void)db_query(r, &stmts[W_TEST_SLOT_UNLOCK], 2, ps);
	(void)db_query(r, &stmts[W_TEST_DEV_UNLOCK], 1, pd);
}

/*
 * Take the developer's one test and one of this host's slots: 0 with
 * *slot, else 429 (Retry-After: the test budget) or 503 written, nothing
 * held.
 */
static int
test_begin_or_reply(struct req *r, int *slot)
{
	const char *pd[1] = { req_owner(r) };
	const char *ps[2] = { test_host(), arena_printf(r->arena, "%d", test_slots(r)) };
	PGresult *res;

	*slot = -1;
	if ((res = db_query(r, &stmts[W_TEST_DEV_LOCK], 1, pd)) == NULL)
		return api_db_error(r);
	if (PQgetvalue(res, 0, ONE_VALUE)[0] != 't')
		return test_busy(r, ERR_WEBHOOK_TEST_IN_PROGRESS,
		    "wait for your running webhook test to finish",
		    "one webhook test at a time: another of yours is running");
	if ((res = db_query(r, &stmts[W_TEST_SLOT_LOCK], 2, ps)) == NULL ||
	    PQntuples(res) != 1) {
		test_end(r, -1);
		return res == NULL ? api_db_error(r) : test_busy(r, ERR_WEBHOOK_TESTS_BUSY,
		    "try again in a few seconds",
		    "too many webhook tests are running; try again shortly");
	}
	*slot = atoi(PQgetvalue(res, 0, ONE_VALUE));
	return 0;
}

/* Send the signed test event to w's URL (checked again now) within the test
 * budget, or keep it in w's inbox as delivery dlv; *res says what came back. */
static void
test_send(struct req *r, const struct webhooks_row *w, const struct events_wire *ev,
    const char *dlv, const char *body, size_t len, const char *sig,
    struct webhooks_result *res)
{
	struct urlsafe_target t;
	const char *why;
	CURL *c = NULL;

	memset(res, 0, sizeof(*res));
	if (webhooks_inbox_url(w->url)) {
		if (webhooks_inbox_store(r->db, r->arena, ev, dlv, w->id, body, sig) == 0)
			res->status = 200;
		else
			res->error = "the inbox could not keep the delivery";
		return;
	}
	/* The URL is checked again now: DNS may say otherwise than at registration. */
	if (urlsafe_check(r->arena, w->url, url_flags(r, w->environment), &t, &why) != URLSAFE_OK) {
		res->error = why;
	} else if ((c = curl_easy_init()) == NULL ||
	    webhooks_request(c, r->arena, &t, ev, body, len, sig, res) != 0) {
		res->error = "the request could not be prepared";
	} else {
		webhooks_result_finish(c, curl_easy_perform(c), res);
		if (res->status == 0 && res->curl_code == CURLE_OPERATION_TIMEDOUT)
			res->error = arena_printf(r->arena, "no response within %d seconds",
			    WEBHOOKS_TIMEOUT_MS / 1000);
	}
	curl_easy_cleanup(c);
}

int
webhooks_test_deliver(struct req *r, struct json_object *out, const char *client_id,
    const char *id, const char *event_type)
{
	const char *secrets[WEBHOOKS_MAX_SECRETS], *body, *sig;
	const char *dlv = crypto_id_new(r->arena, "dlv");
	struct webhooks_result res;
	struct events_wire ev;
	struct webhooks_row w;
	size_t len;
	int rc, n, slot;

	if ((rc = webhooks_get_or_reply(r, client_id, NULL, id, &w)) != 0)
		return rc;
	if (!events_types_match(w.events, event_type))
		return api_field_error(r, 400, ERR_EVENT_TYPE_NOT_SUBSCRIBED, "event_type",
		    "not_subscribed", "the webhook is not subscribed to this event type");
	if ((n = live_secrets(r, client_id, id, secrets)) == -1)
		return api_db_error(r);
	if (n <= 0)
		return api_error(r, 500, ERR_INTERNAL_ERROR, NULL, "internal error");

	memset(&ev, 0, sizeof(ev));
	ev.id = crypto_id_new(r->arena, "evt");
	ev.type = event_type;
	ev.created_ms = time_now_ms();
	ev.client_id = client_id;
	ev.mode = w.environment;
	ev.api_version = r->cfg->api_version;
	ev.producer_service = "webhook-test";
	ev.request_id = r->http.request_id;
	ev.idempotency_key = r->http.idempotency_key;
	ev.data = sample_data(r, event_type);
	body = json_dump(r->arena, events_envelope(r->arena, &ev), &len);
	sig = webhooks_signature(r->arena, events_created(&ev), body, len, secrets, (size_t)n);
	for (int i = 0; i < n; i++)
		sodium_memzero((void *)secrets[i], strlen(secrets[i]));

	if ((rc = test_begin_or_reply(r, &slot)) != 0)
		return rc;
	test_send(r, &w, &ev, dlv, body, len, sig, &res);
	test_end(r, slot);
	log_msg("info", "request %s: webhook test %s event=%s type=%s status=%ld latency_ms=%lld%s%s",
	    r->http.request_id, id, ev.id, event_type, res.status, res.latency_ms,
	    res.status == 0 ? " error=" : "", res.status == 0 ?
	    (res.errbuf[0] != '\0' ? res.errbuf : res.error) : "");

	json_set_bool(out, "success", res.status >= 200 && res.status <= 299);
	json_set_int(out, "status_code", res.status);
	json_set_str(out, "delivery_id", dlv);
	json_set_str(out, "event_id", ev.id);
	json_set_str(out, "message", res.status != 0 ?
	    arena_printf(r->arena, "the endpoint answered %ld", res.status) : res.error);
	return 200;
}
