/*
 * What both webhook front ends share: the
 * subscription rows (secrets sealed at rest), URL checks, the activity
 * event of a deletion, and the signed test delivery.
 */
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>
#include <sodium.h>

#include "core/arena.h"
#include "core/auth.h"
#include "core/config.h"
#include "core/crypto.h"
#include "core/db.h"
#include "core/errors.h"
#include "core/idem.h"
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
	W_EVENT,
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
	[W_PRIMARY] = { "webhooks_primary",
	    "SELECT " ROW_COLS " FROM webhooks WHERE client_id = $1 AND environment = $2"
	    " AND enabled ORDER BY created_at, id LIMIT 1" },
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
	    " AND ($3::text IS NULL OR environment = $3) RETURNING environment, url" },
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
	/* The live secrets: the current one, and the previous one in its window. */
	[W_SECRETS] = { "webhooks_secrets",
	    "SELECT secret, CASE WHEN previous_secret_expires_at > now() THEN previous_secret END"
	    " FROM webhooks WHERE client_id = $1 AND id = $2" },
	[W_EVENT] = { "webhooks_event",
	    "INSERT INTO events (client_id, id, environment, type, data, request_id,"
	    " idempotency_key) VALUES ($1, $2, $3, $4, $5::jsonb, $6, $7)" },
};
const struct db_stmt_set webhooks_stmt_set = { "webhooks", stmts, W__MAX };

/* ------------------------------------------------------------------ */
/* Rows                                                                */

static void
row_from(struct req *r, PGresult *res, int i, struct webhooks_row *w)
{
#define COL(c) (PQgetisnull(res, i, c) ? NULL : arena_strdup(r->arena, PQgetvalue(res, i, c)))
	const char *why;

	w->id = COL(0);
	w->client_id = COL(1);
	w->environment = COL(2);
	w->url = COL(3);
	w->events = json_parse(r->arena, PQgetvalue(res, i, 4),
	    (size_t)PQgetlength(res, i, 4), &why);
	if (w->events == NULL)
		w->events = json_arr(r->arena);
	w->enabled = PQgetvalue(res, i, 5)[0] == 't';
	w->disabled_reason = COL(6);
	w->created_at = COL(7);
	w->updated_at = COL(8);
	w->previous_expires_at = COL(9);
#undef COL
}

/* The first row of res into *w: 1, or 0 when none. */
static int
one_row(struct req *r, PGresult *res, struct webhooks_row *w)
{
	memset(w, 0, sizeof(*w));
	if (PQntuples(res) != 1)
		return 0;
	row_from(r, res, 0, w);
	return 1;
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
client_query(struct req *r, int stmt, const char *client_id, const char *user_id)
{
	const char *p[2] = { client_id, user_id };
	PGresult *res;

	if (!crypto_id_valid(client_id, "cli", 0))
		return 0;	/* no such id can exist: no query */
	if ((res = db_query(r, &stmts[stmt], 2, p)) == NULL)
		return -1;
	return PQntuples(res) == 1;
}

int
webhooks_client_lock(struct req *r, const char *client_id, const char *user_id)
{
	return client_query(r, W_CLIENT_LOCK, client_id, user_id);
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
webhooks_get(struct req *r, const char *client_id, const char *environment, const char *id,
    struct webhooks_row *w)
{
	const char *p[3] = { client_id, id, environment };
	PGresult *res;

	memset(w, 0, sizeof(*w));
	if (!crypto_id_valid(id, "whk", 0))
		return 0;
	if ((res = db_query(r, &stmts[W_GET], 3, p)) == NULL)
		return -1;
	return one_row(r, res, w);
}

int
webhooks_primary(struct req *r, const char *client_id, const char *environment,
    struct webhooks_row *w)
{
	const char *p[2] = { client_id, environment };
	PGresult *res;

	if ((res = db_query(r, &stmts[W_PRIMARY], 2, p)) == NULL)
		return -1;
	return one_row(r, res, w);
}

long
webhooks_count(struct req *r, const char *client_id, const char *environment)
{
	const char *p[2] = { client_id, environment };
	PGresult *res;

	if ((res = db_query(r, &stmts[W_COUNT], 2, p)) == NULL)
		return -1;
	return atol(PQgetvalue(res, 0, 0));
}

int
webhooks_insert(struct req *r, const char *client_id, const char *environment,
    const char *url, struct json_object *events, int enabled, const char *secret,
    struct webhooks_row *w)
{
	const char *id = crypto_id_new(r->arena, "whk");
	const char *sealed = webhooks_secret_seal(r->arena, r->cfg->secret_key, id, secret);
	const char *p[7] = { client_id, id, environment, url,
	    json_dump(r->arena, events, NULL), enabled ? "true" : "false", sealed };
	PGresult *res;

	if (sealed == NULL || (res = db_query(r, &stmts[W_INSERT], 7, p)) == NULL)
		return -1;
	return one_row(r, res, w) == 1 ? 0 : -1;
}

int
webhooks_update(struct req *r, const char *client_id, const char *environment,
    const char *id, const char *url, struct json_object *events, int enabled,
    struct webhooks_row *w)
{
	const char *p[6] = { client_id, id, environment, url,
	    events != NULL ? json_dump(r->arena, events, NULL) : NULL,
	    enabled < 0 ? NULL : enabled ? "true" : "false" };
	PGresult *res;

	memset(w, 0, sizeof(*w));
	if (!crypto_id_valid(id, "whk", 0))
		return 0;
	if ((res = db_query(r, &stmts[W_UPDATE], 6, p)) == NULL)
		return -1;
	return one_row(r, res, w);
}

int
webhooks_event_record(struct req *r, const char *client_id, const char *environment,
    const char *type, struct json_object *data)
{
	const char *p[7] = { client_id, crypto_id_new(r->arena, "evt"), environment, type,
	    json_dump(r->arena, data, NULL), r->http.request_id, r->http.idempotency_key };

	return db_query(r, &stmts[W_EVENT], 7, p) != NULL ? 0 : -1;
}

int
webhooks_delete(struct req *r, const char *client_id, const char *environment,
    const char *id)
{
	const char *p[3] = { client_id, id, environment };
	struct json_object *data, *obj;
	PGresult *res;

	if (!crypto_id_valid(id, "whk", 0))
		return 0;
	if ((res = db_query(r, &stmts[W_DELETE], 3, p)) == NULL)
		return -1;
	if (PQntuples(res) != 1)
		return 0;
	data = json_obj(r->arena);
	obj = json_object_new_object();
	json_set_str(obj, "id", id);
	json_set_str(obj, "object", "webhook_endpoint");
	json_set_str(obj, "environment", PQgetvalue(res, 0, 0));
	json_set_str(obj, "url", PQgetvalue(res, 0, 1));
	json_set(data, "object", obj);
	json_set_str(data, "webhook_id", id);
	return webhooks_event_record(r, client_id, PQgetvalue(res, 0, 0),
	    "webhook_endpoint.deleted", data) == 0 ? 1 : -1;
}

int
webhooks_rotate(struct req *r, const char *client_id, const char *environment,
    const char *id, int hours, struct webhooks_row *w, const char **secret)
{
	const char *s = webhooks_secret_new(r->arena);
	const char *p[5] = { client_id, id, environment,
	    webhooks_secret_seal(r->arena, r->cfg->secret_key, id, s),
	    arena_printf(r->arena, "%d", hours) };
	PGresult *res;
	int found;

	memset(w, 0, sizeof(*w));
	*secret = NULL;
	if (!crypto_id_valid(id, "whk", 0))
		return 0;
	if (p[3] == NULL || (res = db_query(r, &stmts[W_ROTATE], 5, p)) == NULL)
		return -1;
	if ((found = one_row(r, res, w)) == 1)
		*secret = s;
	return found;
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
	return api_field_error(r, 400, "VALIDATION_ERROR", field, code, why);
}

int
webhooks_create(struct req *r, const char *user_id, const char *client_id,
    const char *environment, const char *idem_owner, struct webhooks_row *w,
    const char **secret)
{
	const char *url = json_get_str(r->body, "url");
	const char *s = json_get_str(r->body, "secret");
	const char *key = r->http.idempotency_key;
	struct json_object *events = NULL, *stored;
	enum idem_state st;
	int rc, status;
	long n;

	if ((rc = webhooks_url_check(r, "url", url, environment)) != 0)
		return rc;
	json_object_object_get_ex(r->body, "events", &events);
	events = events_types_unique(r->arena, events);
	if (s == NULL)
		s = webhooks_secret_new(r->arena);

	if (db_begin(r->db) != 0 || (rc = webhooks_client_lock(r, client_id, user_id)) < 0)
		return api_db_error(r);
	if (rc == 0)
		return api_error(r, 404, "CLIENT_NOT_FOUND", NULL, "no client %s", client_id);
	if ((rc = idem_begin(r, idem_owner, key, &st, &status, &stored)) != 0)
		return rc;
	if (st == IDEM_REPLAY) {
		/* never stored for this route (the answer holds the secret) */
		return api_error(r, 409, "IDEMPOTENCY_KEY_NOT_REPLAYABLE",
		    "use a new Idempotency-Key; the secret is never shown twice",
		    "this Idempotency-Key was already used");
	}
	if ((n = webhooks_count(r, client_id, environment)) < 0)
		return api_db_error(r);
	if (n >= WEBHOOKS_PER_ENVIRONMENT)
		return api_error(r, 400, "WEBHOOK_LIMIT_REACHED", "delete an unused webhook first",
		    "a client may have at most %d webhooks per environment",
		    WEBHOOKS_PER_ENVIRONMENT);
	if (webhooks_insert(r, client_id, environment, url, events,
	    json_get_bool(r->body, "enabled", 1), s, w) != 0 ||
	    idem_finish(r, idem_owner, key, 201, NULL) != 0 || db_commit(r->db) != 0)
		return api_db_error(r);
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
	for (int c = 0; c < WEBHOOKS_MAX_SECRETS; c++) {
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

int
webhooks_test_deliver(struct req *r, struct json_object *out, const char *client_id,
    const char *id, const char *event_type)
{
	const char *secrets[WEBHOOKS_MAX_SECRETS], *why, *body, *sig;
	struct webhooks_result res;
	struct events_wire ev;
	struct urlsafe_target t;
	struct webhooks_row w;
	CURL *c = NULL;
	size_t len;
	int found, n;

	if ((found = webhooks_get(r, client_id, NULL, id, &w)) < 0)
		return api_db_error(r);
	if (found == 0)
		return api_error(r, 404, "WEBHOOK_NOT_FOUND", NULL, "no webhook %s", id);
	if (!events_types_match(w.events, event_type))
		return api_field_error(r, 400, "EVENT_TYPE_NOT_SUBSCRIBED", "event_type",
		    "not_subscribed", "the webhook is not subscribed to this event type");
	if ((n = live_secrets(r, client_id, id, secrets)) == -1)
		return api_db_error(r);
	if (n <= 0)
		return api_error(r, 500, "INTERNAL_ERROR", NULL, "internal error");

	memset(&ev, 0, sizeof(ev));
	ev.id = crypto_id_new(r->arena, "evt");
	ev.type = event_type;
	ev.created = auth_now();
	ev.client_id = client_id;
	ev.mode = w.environment;
	ev.api_version = r->cfg->api_version;
	ev.producer_service = "webhook-test";
	ev.request_id = r->http.request_id;
	ev.idempotency_key = r->http.idempotency_key;
	ev.data = sample_data(r, event_type);
	body = json_dump(r->arena, events_envelope(r->arena, &ev), &len);
	sig = webhooks_signature(r->arena, ev.created, body, len, secrets, (size_t)n);
	for (int i = 0; i < n; i++)
		sodium_memzero((void *)secrets[i], strlen(secrets[i]));

	memset(&res, 0, sizeof(res));
	/* The URL is checked again now: DNS may say otherwise than at registration. */
	if (urlsafe_check(r->arena, w.url, url_flags(r, w.environment), &t, &why) != URLSAFE_OK) {
		res.error = why;
	} else if ((c = curl_easy_init()) == NULL ||
	    webhooks_request(c, r->arena, &t, &ev, body, len, sig, &res) != 0) {
		res.error = "the request could not be prepared";
	} else {
		webhooks_result_finish(c, curl_easy_perform(c), &res);
	}
	curl_easy_cleanup(c);
	log_msg("info", "request %s: webhook test %s event=%s type=%s status=%ld latency_ms=%lld%s%s",
	    r->http.request_id, id, ev.id, event_type, res.status, res.latency_ms,
	    res.status == 0 ? " error=" : "", res.status == 0 ?
	    (res.errbuf[0] != '\0' ? res.errbuf : res.error) : "");

	json_set_bool(out, "success", res.status >= 200 && res.status <= 299);
	json_set_int(out, "status_code", res.status);
	json_set_str(out, "delivery_id", crypto_id_new(r->arena, "dlv"));
	json_set_str(out, "event_id", ev.id);
	json_set_str(out, "message", res.status != 0 ?
	    arena_printf(r->arena, "the endpoint answered %ld", res.status) : res.error);
	return 200;
}
