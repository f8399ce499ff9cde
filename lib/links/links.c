/*
 * Links: the rows and what other modules call. Credentials are sealed
 * (XChaCha20-Poly1305 under cfg->secret_key, the link id as associated data,
 * so a sealed value copied to another link fails to open); access tokens are
 * kept as SHA-256 only; every statement is keyed by the caller's client.
 */
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>
#include <sodium.h>

#include "core/arena.h"
#include "core/auth.h"
#include "core/config.h"
#include "core/crypto.h"
#include "core/db.h"
#include "core/jobq.h"
#include "core/json.h"
#include "core/log.h"
#include "core/req.h"
#include "events/events.h"
#include "links/links.h"
#include "links/links_attempts.h"
#include "links/links_entity.h"
#include "links/links_same.h"

#define ROW_COLS "id, client_id, environment, client_user_id, biller_id, status," \
	" disconnect_reason, credential_rejection_reason, link_token_id"
enum row_col {
	R_ID, R_CLIENT_ID, R_ENVIRONMENT, R_CLIENT_USER_ID, R_BILLER_ID, R_STATUS,
	R_DISCONNECT_REASON, R_REJECTION, R_LINK_TOKEN_ID, R__MAX
};
#define EMIT_COLS "environment, client_user_id, biller_id"
enum emit_col { EM_ENVIRONMENT, EM_USER_ID, EM_BILLER_ID, EM__MAX };
#define TOKEN_COLS DB_ISO("expires_at")
enum token_col { T_EXPIRES_AT };
enum one_col { ONE_VALUE };
#define RETRIEVAL_COLS "l.status, l.environment, l.client_user_id, l.biller_id, b.name," \
	" b.connector"
enum retrieval_col { RL_STATUS, RL_ENVIRONMENT, RL_USER_ID, RL_BILLER_ID, RL_BILLER_NAME,
	RL_CONNECTOR };

enum {
	L_INSERT, L_REPAIR, L_TOKEN, L_GET, L_ENTITY, L_COMPLETED, L_DISCONNECT,
	L_ACCOUNT_UPSERT, L_SYNC_DONE, L_RETRIEVAL, L_RETRIEVAL_LOCK, L_SAME, L_ACTIVITY,
	L__MAX
};
/* links_activity */
enum { LA_COUNT, LA_FIRST, LA_LAST, LA__MAX };
static struct db_stmt stmts[L__MAX] = {
	[L_INSERT] = { "links_insert",
	    "INSERT INTO links (client_id, id, environment, client_user_id, biller_id, scopes,"
	    " link_token_id, credentials, credentials_key_id, login_hash)"
	    " VALUES ($1, $2, $3, $4, $5,"
	    "  ARRAY(SELECT jsonb_array_elements_text(coalesce($6::jsonb, '[]'))),"
	    "  $7, decode($8, 'hex'), $9, decode($10, 'hex'))"
	    " RETURNING " ROW_COLS },
	/* Update mode: a REVOKED link is terminal. */
	[L_REPAIR] = { "links_repair",
	    "UPDATE links SET credentials = decode($3, 'hex'), credentials_key_id = $4,"
	    " status = 'ACTIVE', disconnect_reason = NULL, credential_rejection_reason = NULL,"
	    " sync_status = 'pending', repairs = repairs + 1, updated_at = now()"
	    " WHERE " LINKS_BY_ID("", " AND status <> 'REVOKED'") " RETURNING environment" },
	[L_TOKEN] = { "links_token",
	    "INSERT INTO link_access_tokens (token_sha256, client_id, link_id, environment,"
	    " expires_at) VALUES (decode($1, 'hex'), $2, $3, $4,"
	    " CASE WHEN $5::int > 0 THEN now() + make_interval(secs => $5::int) END)"
	    " RETURNING " TOKEN_COLS },
	/* the ACTIVE link of the same biller login for the same end user;
	 * the lock (until the transaction ends) makes a second linking of
	 * the same login wait for the first and find its link */
	[L_SAME] = { "links_same",
	    "WITH lk AS (SELECT pg_advisory_xact_lock(hashtextextended("
	    "  'links_same/' || $1 || '/' || $2 || '/' || $3 || '/' || $4 || '/' || $5, 0)))"
	    " SELECT " ROW_COLS " FROM lk, links WHERE client_id = $1 AND environment = $2"
	    "  AND client_user_id = $3 AND biller_id = $4 AND login_hash = decode($5, 'hex')"
	    "  AND status = 'ACTIVE' ORDER BY created_at, id LIMIT 1" },
	/* every link the client made in the environment, whatever became of it */
	[L_ACTIVITY] = { "links_activity",
	    "SELECT count(*), " DB_ISO("min(created_at)") ", " DB_ISO("max(created_at)")
	    " FROM links WHERE client_id = $1 AND environment = $2" },
	[L_GET] = { "links_get",
	    "SELECT " ROW_COLS " FROM links WHERE " LINKS_BY_ID("", "") },
	/* The entity as stored (LINKS_JSON_SQL, links.h's neighbour). */
	[L_ENTITY] = { "links_entity",
	    "SELECT " LINKS_JSON_SQL " FROM links l WHERE " LINKS_BY_ID("l.", "") },
	[L_COMPLETED] = { "links_completed",
	    "UPDATE links SET completed_event_at = now(), updated_at = now()"
	    " WHERE " LINKS_BY_ID("", " AND completed_event_at IS NULL")
	    " RETURNING " EMIT_COLS },
	[L_DISCONNECT] = { "links_disconnect",
	    "UPDATE links SET status = 'DISCONNECTED', disconnect_reason = $3,"
	    " credential_rejection_reason = $4, sync_status = 'error', updated_at = now()"
	    " WHERE " LINKS_BY_ID("", " AND status = 'ACTIVE'") " RETURNING " EMIT_COLS },
	[L_ACCOUNT_UPSERT] = { "links_account_upsert",
	    "INSERT INTO link_accounts AS a (client_id, id, link_id, external_ref, name, type,"
	    " account_number_mask, service_address, status)"
	    " VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)"
	    " ON CONFLICT (link_id, external_ref) DO UPDATE SET"
	    "  name = EXCLUDED.name, type = EXCLUDED.type,"
	    "  account_number_mask = EXCLUDED.account_number_mask,"
	    "  service_address = EXCLUDED.service_address, status = EXCLUDED.status,"
	    "  updated_at = CASE WHEN (a.name, a.type, a.account_number_mask, a.service_address,"
	    "   a.status) IS DISTINCT FROM (EXCLUDED.name, EXCLUDED.type,"
	    "   EXCLUDED.account_number_mask, EXCLUDED.service_address, EXCLUDED.status)"
	    "   THEN now() ELSE a.updated_at END"
	    " RETURNING id" },
	/* A successful retrieval: the first one sets first_sync_completed_at
	 * and ready_event_at (connection.ready, once); returns whether this
	 * one was the first and the figures the event carries. */
	[L_SYNC_DONE] = { "links_sync_done",
	    "UPDATE links l SET sync_status = 'ok', last_attempt_at = now(),"
	    " last_success_at = now(),"
	    " next_sync_at = now() + make_interval(secs => $3::int"
	    "  * (1 - $5::int / 100.0 + random() * $5::int / 50.0)), bill_count = $4::int,"
	    " failing_since = NULL, refresh_failures = 0,"
	    " refresh_count = refresh_count + 1,"
	    " first_sync_completed_at = coalesce(first_sync_completed_at, now()),"
	    " ready_event_at = coalesce(ready_event_at, now()), updated_at = now()"
	    " FROM (SELECT ready_event_at IS NULL AS first FROM links"
	    "  WHERE " LINKS_BY_ID("", "") ") o"
	    " WHERE " LINKS_BY_ID("l.", "")
	    " RETURNING o.first, " DB_ISO("l.first_sync_completed_at") ", l.environment,"
	    " l.client_user_id, l.biller_id" },
	/* a link to a biller its environment does not link (made before the
	 * gates, or the catalog changed since) is never retrieved: none */
	[L_RETRIEVAL] = { "links_retrieval",
	    "SELECT " RETRIEVAL_COLS " FROM links l JOIN billers b ON b.id = l.biller_id"
	    " WHERE " LINKS_BY_ID("l.", " AND billers_linkable(l.environment, b)") },
	/* the last look of a retrieval's apply, held to its commit. NO KEY:
	 * rows that name the link (tokens, exchange) do not wait for it. */
	[L_RETRIEVAL_LOCK] = { "links_retrieval_lock",
	    "SELECT status = 'ACTIVE' FROM links"
	    " WHERE " LINKS_BY_ID("", "") " FOR NO KEY UPDATE" },
};
const struct db_stmt_set links_stmt_set = { "links", stmts, L__MAX };

enum sync_done_col { SD_FIRST, SD_FIRST_SYNC, SD_ENVIRONMENT, SD_USER_ID, SD_BILLER_ID };

const char *
links_id_canonical(struct req *r, const char *id)
{
	if (id == NULL)
		return NULL;
	if (crypto_id_valid(id, "link", 0))
		return id;
	if (crypto_id_valid(id, "link", 1))
		return arena_printf(r->arena, "link_%s", id);
	return NULL;
}

static void
row_fill(PGresult *res, int i, struct links_row *row)
{
	const char **f[R__MAX] = {
		[R_ID] = &row->id, [R_CLIENT_ID] = &row->client_id,
		[R_ENVIRONMENT] = &row->environment, [R_CLIENT_USER_ID] = &row->client_user_id,
		[R_BILLER_ID] = &row->biller_id, [R_STATUS] = &row->status,
		[R_DISCONNECT_REASON] = &row->disconnect_reason,
		[R_REJECTION] = &row->credential_rejection_reason,
		[R_LINK_TOKEN_ID] = &row->link_token_id,
	};

	/* PQgetvalue strings live as long as the result (the arena's). */
	for (int c = 0; c < R__MAX; c++)
		*f[c] = PQgetisnull(res, i, c) ? NULL : PQgetvalue(res, i, c);
}

int
links_create(struct req *r, const struct links_new *n, struct links_row *row)
{
	const char *id = crypto_id_new(r->arena, "link");
	const char *sealed = links_vault_seal(r, id, n->username, n->password, n->device_token);
	const char *p[10] = { n->client_id, id, n->environment, n->client_user_id, n->biller_id,
	    n->scopes != NULL && json_object_array_length(n->scopes) > 0 ?
	    json_object_to_json_string_ext(n->scopes, JSON_C_TO_STRING_PLAIN) :
	    LINKS_DEFAULT_SCOPES, n->link_token_id, sealed, links_vault_key_id(r),
	    links_username_hash(r, n->username) };
	PGresult *res;

	if (sealed == NULL)
		return -1;
	if ((res = db_query(r, &stmts[L_INSERT], 10, p)) == NULL || PQntuples(res) != 1)
		return -1;
	row_fill(res, 0, row);
	return jobq_add(r, "retrieval", n->client_id, n->environment, id, NULL, 0);
}

int
links_same(struct req *r, const struct links_new *n, struct links_row *row)
{
	const char *p[5] = { n->client_id, n->environment, n->client_user_id, n->biller_id,
	    links_username_hash(r, n->username) };
	PGresult *res;

	if ((res = db_query(r, &stmts[L_SAME], 5, p)) == NULL)
		return -1;
	if (PQntuples(res) != 1)
		return 0;
	row_fill(res, 0, row);
	return 1;
}

int
links_repair(struct req *r, const char *client_id, const char *link_id,
    const char *username, const char *password)
{
	const char *sealed = links_vault_seal(r, link_id, username, password, NULL);
	const char *p[4] = { client_id, link_id, sealed, links_vault_key_id(r) };
	PGresult *res;

	if (sealed == NULL)
		return -1;
	if ((res = db_query(r, &stmts[L_REPAIR], 4, p)) == NULL || PQntuples(res) != 1)
		return -1;
	return jobq_add(r, "retrieval", client_id, PQgetvalue(res, 0, 0), link_id, NULL, 0);
}

const char *
links_token_mint(struct req *r, const char *client_id, const char *environment,
    const char *link_id, int ttl_s, const char **expires_at)
{
	const char *tok = auth_token_new(r->arena, LINKS_TOKEN_LAT);
	const char *p[5] = { auth_key_hash(r->arena, tok), client_id, link_id, environment,
	    arena_printf(r->arena, "%d", ttl_s) };
	PGresult *res;

	if ((res = db_query(r, &stmts[L_TOKEN], 5, p)) == NULL || PQntuples(res) != 1)
		return NULL;
	if (expires_at != NULL)
		*expires_at = PQgetisnull(res, 0, T_EXPIRES_AT) ? NULL :
		    PQgetvalue(res, 0, T_EXPIRES_AT);
	return tok;
}

const char *
links_access_token_new(struct req *r, const char *client_id, const char *environment,
    const char *link_id, int ttl_s)
{
	return links_token_mint(r, client_id, environment, link_id, ttl_s, NULL);
}

int
links_get(struct req *r, const char *client_id, const char *id, struct links_row *row)
{
	const char *p[2] = { client_id, links_id_canonical(r, id) };
	PGresult *res;

	if (p[1] == NULL)
		return 0;
	if ((res = db_query(r, &stmts[L_GET], 2, p)) == NULL)
		return -1;
	if (PQntuples(res) != 1)
		return 0;
	row_fill(res, 0, row);
	return 1;
}

int
links_activity(struct req *r, const char *client_id, const char *env, long long *n,
    const char **first_at, const char **last_at)
{
	const char *p[2] = { client_id, env };
	PGresult *res;

	*n = 0;
	*first_at = *last_at = NULL;
	if ((res = db_query(r, &stmts[L_ACTIVITY], 2, p)) == NULL || PQntuples(res) != 1)
		return -1;
	*n = strtoll(PQgetvalue(res, 0, LA_COUNT), NULL, 10);
	if (!PQgetisnull(res, 0, LA_FIRST))
		*first_at = arena_strdup(r->arena, PQgetvalue(res, 0, LA_FIRST));
	if (!PQgetisnull(res, 0, LA_LAST))
		*last_at = arena_strdup(r->arena, PQgetvalue(res, 0, LA_LAST));
	return 0;
}

struct json_object *
links_json_by_id(struct req *r, const char *client_id, const char *id)
{
	const char *p[2] = { client_id, links_id_canonical(r, id) }, *why;
	PGresult *res;

	if (p[1] == NULL || (res = db_query(r, &stmts[L_ENTITY], 2, p)) == NULL ||
	    PQntuples(res) != 1)
		return NULL;
	return json_parse(r->arena, PQgetvalue(res, 0, 0), (size_t)PQgetlength(res, 0, 0), &why);
}

int
links_completed(struct req *r, const char *client_id, const char *link_id)
{
	const char *p[2] = { client_id, link_id };
	struct json_object *o;
	PGresult *res;

	if ((res = db_query(r, &stmts[L_COMPLETED], 2, p)) == NULL)
		return -1;
	if (PQntuples(res) != 1)
		return 0;	/* sent before: once per link */
	o = json_obj(r->arena);
	json_set_str(o, "id", link_id);
	json_set_str(o, "object", "link");
	json_set_str(o, "user_id", PQgetvalue(res, 0, EM_USER_ID));
	json_set_str(o, "biller_id", PQgetvalue(res, 0, EM_BILLER_ID));
	return events_emit(r, client_id, PQgetvalue(res, 0, EM_ENVIRONMENT), "link.completed",
	    o, NULL) == NULL ? -1 : 0;
}

int
links_disconnected_emit(struct req *r, const char *client_id, const char *environment,
    const char *link_id, const char *user_id, const char *biller_id, const char *reason,
    const char *rejection, const char *link_token_id, const char *link_request_id)
{
	struct json_object *o = json_obj(r->arena);

	json_set_str(o, "id", link_id);
	json_set_str(o, "object", "link");
	json_set_str(o, "user_id", user_id);
	json_set_str(o, "reason", reason);
	if (rejection != NULL)
		json_set_str(o, "credential_rejection_reason", rejection);
	if (link_token_id != NULL) {
		json_set_str(o, "link_token_id", link_token_id);
		json_set_str(o, "link_request_id", link_request_id);
	}
	json_set_str(o, "biller_id", biller_id);
	return events_emit(r, client_id, environment, "link.disconnected", o, NULL) == NULL ?
	    -1 : 0;
}

int
links_disconnect(struct req *r, const char *client_id, const char *link_id,
    const char *reason, const char *rejection)
{
	const char *p[4] = { client_id, link_id, reason, rejection };
	PGresult *res;

	if ((res = db_query(r, &stmts[L_DISCONNECT], 4, p)) == NULL)
		return -1;
	if (PQntuples(res) != 1)
		return 0;
	if (links_disconnected_emit(r, client_id, PQgetvalue(res, 0, EM_ENVIRONMENT), link_id,
	    PQgetvalue(res, 0, EM_USER_ID), PQgetvalue(res, 0, EM_BILLER_ID), reason,
	    rejection, NULL, NULL) != 0)
		return -1;
	return 1;
}

/* ---- retrieval support (lib/jobs/jobs_retrieval.c) ---- */

int
links_retrieval_load(struct req *r, const char *client_id, const char *link_id,
    struct links_retrieval *lr)
{
	const char *p[2] = { client_id, link_id };
	PGresult *res;

	if ((res = db_query(r, &stmts[L_RETRIEVAL], 2, p)) == NULL)
		return -1;
	if (PQntuples(res) != 1)
		return 0;
	lr->status = PQgetvalue(res, 0, RL_STATUS);
	lr->environment = PQgetvalue(res, 0, RL_ENVIRONMENT);
	lr->client_user_id = PQgetvalue(res, 0, RL_USER_ID);
	lr->biller_id = PQgetvalue(res, 0, RL_BILLER_ID);
	lr->biller_name = PQgetvalue(res, 0, RL_BILLER_NAME);
	lr->connector = PQgetvalue(res, 0, RL_CONNECTOR);
	return 1;
}

int
links_retrieval_active(struct req *r, const char *client_id, const char *link_id)
{
	const char *p[2] = { client_id, link_id };
	PGresult *res;

	if ((res = db_query(r, &stmts[L_RETRIEVAL_LOCK], 2, p)) == NULL)
		return -1;
	return PQntuples(res) == 1 && strcmp(PQgetvalue(res, 0, 0), "t") == 0;
}

const char *
links_account_upsert(struct req *r, const char *client_id, const char *link_id,
    const char *ref, const char *name, const char *type, const char *mask,
    const char *service_address, int closed)
{
	const char *p[9] = { client_id, crypto_id_new(r->arena, "acct"), link_id, ref, name, type,
	    mask, service_address, closed ? "CLOSED" : "ACTIVE" };
	PGresult *res;

	if ((res = db_query(r, &stmts[L_ACCOUNT_UPSERT], 9, p)) == NULL || PQntuples(res) != 1)
		return NULL;
	return PQgetvalue(res, 0, 0);
}

int
links_sync_done(struct req *r, const char *client_id, const char *link_id,
    long long bill_count)
{
	const char *p[5] = { client_id, link_id,
	    arena_printf(r->arena, "%d", links_settings(r->cfg)->refresh_interval_s),
	    arena_printf(r->arena, "%lld", bill_count),
	    arena_printf(r->arena, "%d", links_settings(r->cfg)->refresh_jitter_pct) };
	struct json_object *o;
	PGresult *res;

	if ((res = db_query(r, &stmts[L_SYNC_DONE], 5, p)) == NULL || PQntuples(res) != 1)
		return -1;
	if (strcmp(PQgetvalue(res, 0, SD_FIRST), "t") != 0)
		return 0;
	/* connection.ready: once, after the first retrieval's bill.created
	 * events (same transaction, emitted last). */
	o = json_obj(r->arena);
	json_set_str(o, "id", link_id);
	json_set_str(o, "object", "link");
	json_set_str(o, "link_id", link_id);
	json_set_str(o, "user_id", PQgetvalue(res, 0, SD_USER_ID));
	json_set_str(o, "biller_id", PQgetvalue(res, 0, SD_BILLER_ID));
	json_set_int(o, "bill_count", bill_count);
	json_set_str(o, "first_sync_completed_at", PQgetvalue(res, 0, SD_FIRST_SYNC));
	return events_emit(r, client_id, PQgetvalue(res, 0, SD_ENVIRONMENT), "connection.ready",
	    o, NULL) == NULL ? -1 : 0;
}
