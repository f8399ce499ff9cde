/*
 * Link sessions: what the hosted page and the embedded SDKs call. A ticket
 * opens a session (bds_lst_…, 30 min idle, never beyond its link token);
 * the session token, or the link token itself for server-side SDKs,
 * authenticates the rest. The login runs in bds-jobs (the connect job),
 * which moves the session through connecting -> mfa_required -> connected
 * or failed; five failed logins end the session.
 */
#include <stdlib.h>
#include <string.h>

#include "billers/billers.h"
#include "core/arena.h"
#include "core/auth.h"
#include "core/config.h"
#include "core/crypto.h"
#include "core/cursor.h"
#include "core/db.h"
#include "core/errors.h"
#include "core/jobq.h"
#include "core/json.h"
#include "core/req.h"
#include "core/validate.h"
#include "events/events.h"
#include "links/links.h"
#include "links/links_attempts.h"
#include "links/links_connect.h"
#include "links/links_page.h"	/* the connect page's session extras */

#define LS_SESSION_PREFIX	"bds_lst_"
#define LS_TICKET_PREFIX	"bds_tkt_"
#define LS_PUBLIC_PREFIX	"bds_pub_"
#define LS_IDLE			"interval '30 minutes'"
/* the end user's privacy notice on the link host (web/legal/) */
#define LS_PRIVACY_PATH		"/legal/end-user-privacy"
/* The host name the end user knows the client (alias c) by: its first
 * redirect URI's, else its first allowed origin's; NULL when neither. */
#define LS_HOST_OF(u)	"lower(substring(" u " from '^https?://([a-zA-Z0-9.-]+)'))"
#define LS_CLIENT_HOST \
	"COALESCE(" LS_HOST_OF("c.redirect_uris->>0") ", " LS_HOST_OF("c.allowed_origins->>0") ")"

/* A session with its link token, as every session route reads it. It is
 * live while both are: a token ended early (its request to link closed)
 * ends its sessions at once. */
#define LS_COLS \
	"s.client_id, s.id, s.environment, s.link_token_id, s.status," \
	" s.expires_at > now() AND t.expires_at > now(), " DB_ISO("s.expires_at") "," \
	" t.mode, t.biller_id, t.hosted," \
	" t.client_user_id, t.update_link_id, s.biller_id, s.mfa_type, s.mfa_prompt," \
	" s.error_code, s.ended, encode(s.public_token, 'hex'), s.link_id, s.failed_logins," \
	" s.exit_reason, t.failed_attempts, encode(s.username_hash, 'hex'), s.mfa_resends," \
	" s.credentials IS NOT NULL" \
	" FROM link_sessions s JOIN link_tokens t" \
	" ON t.client_id = s.client_id AND t.id = s.link_token_id"
enum {
	S_CLIENT, S_ID, S_ENV, S_LT, S_STATUS, S_LIVE, S_EXPIRES, S_MODE, S_PINNED,
	S_HOSTED, S_USER, S_UPDATE_LINK, S_BILLER, S_MFA_TYPE, S_MFA_PROMPT, S_ERROR,
	S_ENDED, S_PUBLIC, S_LINK, S_FAILED, S_EXIT, S_TOKEN_FAILED, S_UHASH, S_RESENDS,
	S_HAS_CREDS, S__MAX
};

/* The connect job's view: the session, its token and the biller's connector. */
#define LS_JOB_COLS \
	"s.status, s.environment, s.link_token_id, t.mode, t.hosted, t.client_user_id," \
	" s.biller_id, b.connector, t.update_link_id, t.request_to_link_id," \
	" array_to_json(t.consents)::text, encode(s.credentials, 'hex')," \
	" encode(s.mfa_answer, 'hex'), s.expires_at > now(), s.mfa_type, s.mfa_prompt," \
	" billers_linkable(s.environment, b)"
enum {
	J_STATUS, J_ENV, J_LT, J_MODE, J_HOSTED, J_USER, J_BILLER, J_CONNECTOR,
	J_UPDATE_LINK, J_RTL, J_SCOPES, J_CREDS, J_MFA, J_LIVE, J_MFA_TYPE, J_MFA_PROMPT,
	J_LINKABLE, J__MAX
};

enum {
	LS_TICKET_USE, LS_INSERT, LS_INFO, LS_BY_TOKEN, LS_BY_LT, LS_LT_LIVE, LS_TOUCH,
	LS_CONNECT, LS_MFA, LS_EXIT, LS_FINISH, LS_CORS_CLIENT, LS_CORS_ANY,
	LS_JOB_LOAD, LS_JOB_MFA, LS_JOB_FAILED, LS_JOB_CONNECTED, LS_PUB_INSERT,
	LS_SWEEP, LS_JOB_END, LS_RECHALLENGE, LS_TICKET_DONE, LS_RESEND, LS__MAX
};
enum { TU_CLIENT, TU_LT, TU_FAILED, TU_RTL };	/* ls_ticket_use */
enum { LT_LIVE_CLIENT, LT_LIVE_FAILED };	/* ls_lt_live */
static struct db_stmt stmts[LS__MAX] = {
	/* single use: the first caller takes it; expired or used: nothing */
	[LS_TICKET_USE] = { "ls_ticket_use",
	    "UPDATE connect_tickets k SET used_at = now() FROM link_tokens t"
	    " WHERE k.token_sha256 = decode($1, 'hex') AND k.used_at IS NULL"
	    " AND k.expires_at > now() AND t.client_id = k.client_id"
	    " AND t.id = k.link_token_id AND t.expires_at > now() AND t.finished_at IS NULL"
	    " RETURNING k.client_id, k.link_token_id, t.failed_attempts, t.request_to_link_id" },
	[LS_INSERT] = { "ls_insert",
	    "INSERT INTO link_sessions (client_id, id, token_sha256, environment,"
	    " link_token_id, expires_at)"
	    " SELECT t.client_id, $2, decode($3, 'hex'), t.environment, t.id,"
	    " LEAST(now() + " LS_IDLE ", t.expires_at)"
	    " FROM link_tokens t WHERE t.client_id = $1 AND t.id = $4"
	    " RETURNING id" },
	[LS_INFO] = { "ls_info",
	    "SELECT t.mode, t.biller_id, array_to_json(t.consents)::text, t.language, c.name,"
	    " t.environment, " LS_CLIENT_HOST
	    " FROM link_tokens t JOIN clients c ON c.id = t.client_id"
	    " WHERE t.client_id = $1 AND t.id = $2" },
	/* a redeemed ticket whose link token made its link: "already linked" */
	[LS_TICKET_DONE] = { "ls_ticket_done",
	    "SELECT 1 FROM connect_tickets k JOIN link_sessions s"
	    " ON s.client_id = k.client_id AND s.link_token_id = k.link_token_id"
	    " WHERE k.token_sha256 = decode($1, 'hex') AND k.used_at IS NOT NULL"
	    " AND s.status = 'connected' LIMIT 1" },
	/* a new challenge: log in again with the sealed credentials */
	[LS_RESEND] = { "ls_resend",
	    "UPDATE link_sessions SET status = 'connecting', mfa_answer = NULL,"
	    " mfa_resends = mfa_resends + 1, error_code = NULL, updated_at = now()"
	    " WHERE client_id = $1 AND id = $2 AND NOT ended AND status = 'mfa_required'"
	    " AND credentials IS NOT NULL AND mfa_resends < $3::int" },
	[LS_BY_TOKEN] = { "ls_by_token",
	    "SELECT " LS_COLS " WHERE s.token_sha256 = decode($1, 'hex')" },
	/* the link token as the credential: its newest session */
	[LS_BY_LT] = { "ls_by_lt",
	    "SELECT " LS_COLS " WHERE t.id = $1 ORDER BY s.created_at DESC, s.id DESC LIMIT 1" },
	[LS_LT_LIVE] = { "ls_lt_live",
	    "SELECT client_id, failed_attempts FROM link_tokens WHERE id = $1"
	    " AND expires_at > now()"
	    " AND finished_at IS NULL" },
	/* every call moves the idle deadline, never past the token's */
	[LS_TOUCH] = { "ls_touch",
	    "UPDATE link_sessions s SET expires_at = LEAST(now() + " LS_IDLE ", t.expires_at),"
	    " updated_at = now() FROM link_tokens t WHERE s.client_id = $1 AND s.id = $2"
	    " AND t.client_id = s.client_id AND t.id = s.link_token_id"
	    " RETURNING " DB_ISO("s.expires_at") },
	[LS_CONNECT] = { "ls_connect",
	    "UPDATE link_sessions SET status = 'connecting', biller_id = $3,"
	    " credentials = decode($4, 'hex'), username_hash = decode($5, 'hex'),"
	    " mfa_answer = NULL, mfa_type = NULL,"
	    " mfa_prompt = NULL, error_code = NULL, updated_at = now()"
	    " WHERE client_id = $1 AND id = $2 AND NOT ended"
	    " AND status IN ('awaiting_credentials', 'failed', 'mfa_required')" },
	[LS_MFA] = { "ls_mfa",
	    "UPDATE link_sessions SET status = 'connecting', mfa_answer = decode($3, 'hex'),"
	    " updated_at = now() WHERE client_id = $1 AND id = $2 AND NOT ended"
	    " AND status = 'mfa_required'" },
	[LS_EXIT] = { "ls_exit",
	    "UPDATE link_sessions SET status = 'exited', exit_reason = $3, credentials = NULL,"
	    " mfa_answer = NULL, updated_at = now() WHERE client_id = $1 AND id = $2"
	    " AND status NOT IN ('connected', 'exited')" },
	/* link.session_finished once per link token */
	[LS_FINISH] = { "ls_finish",
	    "UPDATE link_tokens SET finished_at = now() WHERE client_id = $1 AND id = $2"
	    " AND finished_at IS NULL" },
	[LS_CORS_CLIENT] = { "ls_cors_client",
	    "SELECT 1 FROM clients WHERE id = $1 AND allowed_origins ? $2" },
	[LS_CORS_ANY] = { "ls_cors_any",
	    "SELECT 1 FROM clients WHERE allowed_origins ? $1 LIMIT 1" },
	[LS_JOB_LOAD] = { "ls_job_load",
	    "SELECT " LS_JOB_COLS " FROM link_sessions s JOIN link_tokens t"
	    " ON t.client_id = s.client_id AND t.id = s.link_token_id"
	    " JOIN billers b ON b.id = s.biller_id"
	    " WHERE s.client_id = $1 AND s.id = $2 FOR UPDATE OF s" },
	/* a wrong answer counts as a failed login ($6 = 1); the fifth ends it,
	 * shown as $8 (TOO_MANY_ATTEMPTS) */
	[LS_JOB_MFA] = { "ls_job_mfa",
	    "UPDATE link_sessions SET mfa_type = $3, mfa_prompt = $4,"
	    " error_code = CASE WHEN failed_logins + $6::int >= $7::int THEN $8 ELSE $5 END,"
	    " mfa_answer = NULL, failed_logins = failed_logins + $6::int,"
	    " ended = failed_logins + $6::int >= $7::int,"
	    " status = CASE WHEN failed_logins + $6::int >= $7::int THEN 'failed'"
	    " ELSE 'mfa_required' END,"
	    " credentials = CASE WHEN failed_logins + $6::int >= $7::int THEN NULL"
	    " ELSE credentials END, updated_at = now()"
	    " WHERE client_id = $1 AND id = $2" },
	/* the failure that ends the session is shown as $6 (TOO_MANY_ATTEMPTS) */
	[LS_JOB_FAILED] = { "ls_job_failed",
	    "UPDATE link_sessions SET status = 'failed',"
	    " error_code = CASE WHEN NOT ended AND failed_logins + $4::int >= $5::int"
	    "  THEN $6 ELSE $3 END,"
	    " failed_logins = failed_logins + $4::int,"
	    " ended = ended OR failed_logins + $4::int >= $5::int,"
	    " credentials = NULL, mfa_answer = NULL, updated_at = now()"
	    " WHERE client_id = $1 AND id = $2" },
	[LS_JOB_CONNECTED] = { "ls_job_connected",
	    "UPDATE link_sessions SET status = 'connected', link_id = $3,"
	    " public_token = decode($4, 'hex'), credentials = NULL, mfa_answer = NULL,"
	    " mfa_type = NULL, mfa_prompt = NULL, error_code = NULL, updated_at = now()"
	    " WHERE client_id = $1 AND id = $2" },
	[LS_PUB_INSERT] = { "ls_pub_insert",
	    "INSERT INTO public_tokens (token_sha256, client_id, environment, link_token_id,"
	    " link_id, expires_at) VALUES (decode($1, 'hex'), $2, $3, $4, $5,"
	    " now() + " LS_IDLE ")" },
	/* Sealed secrets of sessions that ended idle: the credentials and MFA
	 * answer at once, the public token once it cannot be exchanged either
	 * (it lives LS_IDLE from its making, which is before the session's
	 * last touch). */
	[LS_SWEEP] = { "ls_sweep",
	    "UPDATE link_sessions SET credentials = NULL, mfa_answer = NULL,"
	    " public_token = CASE WHEN expires_at < now() - " LS_IDLE
	    "  THEN NULL ELSE public_token END, updated_at = now()"
	    " WHERE expires_at < now() AND (credentials IS NOT NULL OR mfa_answer IS NOT NULL"
	    "  OR (public_token IS NOT NULL AND expires_at < now() - " LS_IDLE "))" },
	/* ended before any login (or after a failure spent the token) */
	[LS_JOB_END] = { "ls_job_end",
	    "UPDATE link_sessions SET status = 'failed', error_code = $3, ended = true,"
	    " credentials = NULL, mfa_answer = NULL, updated_at = now()"
	    " WHERE client_id = $1 AND id = $2" },
	/* one new challenge per session after a wrong answer */
	[LS_RECHALLENGE] = { "ls_rechallenge",
	    "UPDATE link_sessions SET fresh_challenges = fresh_challenges + 1"
	    " WHERE client_id = $1 AND id = $2 AND fresh_challenges < $3::int" },
};
const struct db_stmt_set links_sessions_stmt_set = { "links_sessions", stmts, LS__MAX };

/* ---- input ---- */

static const char *const exit_reasons[] = { "user_closed", "error", NULL };

const struct vfield links_session_create_fields[] = {
	{ "ticket", NULL, VT_STRING, V_REQUIRED, 1, 128 },
	{ NULL }
};
/* the picker: one page (no cursor) of core/cursor.h's page sizes */
const struct vfield links_session_billers_query[] = {
	{ "search_term", NULL, VT_STRING, 0, 1, 100 },
	CURSOR_LIMIT_FIELD(CURSOR_LIMIT_MAX),
	{ NULL }
};
const struct vfield links_session_connect_fields[] = {
	{ "biller_id", NULL, VT_STRING, 0, 1, 64 },
	{ "username", NULL, VT_STRING, V_REQUIRED, 1, 256 },
	{ "password", NULL, VT_STRING, V_REQUIRED, 1, 256 },
	{ NULL }
};
const struct vfield links_session_mfa_fields[] = {
	{ "answer", NULL, VT_STRING, V_REQUIRED, 1, 64 },
	{ NULL }
};
const struct vfield links_session_exit_fields[] = {
	{ "reason", NULL, VT_STRING, 0, 0, 0, exit_reasons },
	{ NULL }
};

/* ---- sealing: AD = the session id and the purpose, so a sealed value
 * moved to another row or column does not open ---- */

static const char *
seal_hex(struct req *r, const char *session_id, const char *purpose, const char *msg)
{
	return crypto_seal_hex(r->arena, r->cfg->secret_key, msg,
	    arena_printf(r->arena, "%s:%s", session_id, purpose));
}

static const char *
open_hex(struct req *r, const char *session_id, const char *purpose, const char *hex)
{
	return crypto_open_hex(r->arena, r->cfg->secret_key, hex,
	    arena_printf(r->arena, "%s:%s", session_id, purpose));
}

/* ---- the session as a credential ---- */

struct session {
	const char	*v[S__MAX];
	int		 live, hosted, ended;
};

static void
session_fill(struct req *r, PGresult *res, struct session *s)
{
	for (int i = 0; i < S__MAX; i++)
		s->v[i] = PQgetisnull(res, 0, i) ? NULL :
		    arena_strdup(r->arena, PQgetvalue(res, 0, i));
	s->live = strcmp(s->v[S_LIVE], "t") == 0;
	s->hosted = strcmp(s->v[S_HOSTED], "t") == 0;
	s->ended = strcmp(s->v[S_ENDED], "t") == 0;
	r->client_id = s->v[S_CLIENT];
	r->env = s->v[S_ENV];
}

/*
 * The session the bearer names: bds_lst_… (its session) or lt_… (the link
 * token's newest session, opened on first use while the token lives). 0
 * with *s filled (s->live 0 when it expired: only `current` answers
 * then), else the 401 or 503 written.
 */
static int
session_or_reply(struct req *r, struct session *s, int expired_ok)
{
	const char *h = r->http.authorization, *tok, *p[4];
	PGresult *res;
	int rc;

	if (h == NULL || strncmp(h, "Bearer ", 7) != 0)
		return api_error(r, 401, ERR_INVALID_SESSION,
		    "send Authorization: Bearer <session_token>", "missing session token");
	tok = h + 7;
	if (auth_token_wellformed(tok, LS_SESSION_PREFIX)) {
		p[0] = auth_key_hash(r->arena, tok);
		res = db_query(r, &stmts[LS_BY_TOKEN], 1, p);
	} else if (crypto_id_valid(tok, "lt", 0)) {
		if ((res = db_query(r, &stmts[LS_BY_LT], 1, &tok)) != NULL &&
		    PQntuples(res) == 0) {
			if ((res = db_query(r, &stmts[LS_LT_LIVE], 1, &tok)) == NULL)
				return api_db_error(r);
			if (PQntuples(res) != 1)
				return api_error(r, 401, ERR_INVALID_SESSION, NULL,
				    "the link token is unknown or expired");
			p[0] = PQgetvalue(res, 0, LT_LIVE_CLIENT);
			if ((rc = links_attempts_or_reply(r, p[0],
			    atol(PQgetvalue(res, 0, LT_LIVE_FAILED)), NULL, NULL)) != 0)
				return rc;
			p[1] = crypto_id_new(r->arena, "lses");
			p[2] = auth_key_hash(r->arena, auth_token_new(r->arena, LS_SESSION_PREFIX));
			p[3] = tok;
			if (db_query(r, &stmts[LS_INSERT], 4, p) == NULL)
				return api_db_error(r);
			res = db_query(r, &stmts[LS_BY_LT], 1, &tok);
		}
	} else
		return api_error(r, 401, ERR_INVALID_SESSION, NULL, "invalid session token");
	if (res == NULL)
		return api_db_error(r);
	if (PQntuples(res) != 1)
		return api_error(r, 401, ERR_INVALID_SESSION, NULL, "unknown session token");
	session_fill(r, res, s);
	if (!s->live && !expired_ok)
		return api_error(r, 401, ERR_SESSION_EXPIRED, "start again with a new ticket",
		    "the link session has expired");
	if (s->live) {
		p[0] = s->v[S_CLIENT];
		p[1] = s->v[S_ID];
		if ((res = db_query(r, &stmts[LS_TOUCH], 2, p)) == NULL || PQntuples(res) != 1)
			return api_db_error(r);
		s->v[S_EXPIRES] = arena_strdup(r->arena, PQgetvalue(res, 0, 0));
	}
	return 0;
}

int
links_session_auth_or_reply(struct req *r)
{
	struct session s;

	return session_or_reply(r, &s, 0);
}

/* link.session_finished, once per link token (status completed or exited). */
static int
session_finished(struct req *r, const char *client_id, const char *env, const char *lt,
    const char *status, const char *link_id, const char *exit_reason,
    const char *biller_id, const char *user_id)
{
	const char *p[2] = { client_id, lt };
	struct json_object *o;
	long long n;

	if ((n = db_exec_count(r->db, r->arena, &stmts[LS_FINISH], 2, p)) < 0)
		return -1;
	if (n == 0)
		return 0;
	o = json_obj(r->arena);
	json_set_str(o, "id", lt);
	json_set_str(o, "object", "link_token");
	json_set_str(o, "link_token_id", lt);
	json_set_str(o, "status", status);
	if (link_id != NULL)
		json_set_str(o, "link_id", link_id);
	if (exit_reason != NULL)
		json_set_str(o, "exit_reason", exit_reason);
	json_set_str(o, "biller_id", biller_id);
	json_set_str(o, "user_id", user_id);
	return events_emit(r, client_id, env, "link.session_finished", o, NULL) != NULL ? 0 : -1;
}

/* ---- handlers ---- */

/* POST /v1/link-sessions with a ticket that opens nothing (its hash in
 * sha): 409 LINK_SESSION_COMPLETED when it was redeemed and its link token
 * made its link (a hosted URL reopened after success), else 400. */
static int
ticket_refused(struct req *r, const char *sha)
{
	PGresult *res = db_query(r, &stmts[LS_TICKET_DONE], 1, &sha);

	if (res == NULL)
		return api_db_error(r);
	if (PQntuples(res) == 1)
		return api_error(r, 409, ERR_LINK_SESSION_COMPLETED, NULL,
		    "the biller account of this connect link is already linked");
	return api_field_error(r, 400, ERR_INVALID_TICKET, "ticket", "invalid",
	    "the ticket is unknown, used or expired");
}

int
links_session_create(struct req *r, struct json_object *out)
{
	const char *ticket = json_get_str(r->body, "ticket"), *p[4], *token;
	struct json_object *client, *consents;
	struct session s;
	PGresult *res;
	int rc, bound;

	if (!auth_token_wellformed(ticket, LS_TICKET_PREFIX))
		return api_field_error(r, 400, ERR_INVALID_TICKET, "ticket", "invalid",
		    "the ticket is unknown, used or expired");
	p[0] = auth_key_hash(r->arena, ticket);
	if ((res = db_query(r, &stmts[LS_TICKET_USE], 1, p)) == NULL)
		return api_db_error(r);
	if (PQntuples(res) != 1)
		return ticket_refused(r, p[0]);
	bound = !PQgetisnull(res, 0, TU_RTL);	/* to a request to link */
	p[0] = arena_strdup(r->arena, PQgetvalue(res, 0, TU_CLIENT));
	/* a spent token opens no session (the ticket stays unused: rolled back) */
	if ((rc = links_attempts_or_reply(r, p[0], atol(PQgetvalue(res, 0, TU_FAILED)),
	    NULL, NULL)) != 0)
		return rc;
	p[1] = crypto_id_new(r->arena, "lses");
	token = auth_token_new(r->arena, LS_SESSION_PREFIX);
	p[2] = auth_key_hash(r->arena, token);
	p[3] = arena_strdup(r->arena, PQgetvalue(res, 0, TU_LT));
	if (db_query(r, &stmts[LS_INSERT], 4, p) == NULL)
		return api_db_error(r);
	if ((res = db_query(r, &stmts[LS_BY_TOKEN], 1, &p[2])) == NULL || PQntuples(res) != 1)
		return api_db_error(r);
	session_fill(r, res, &s);
	/* the request to link the token is bound to hears it (lib/rtl) */
	if (bound && jobq_add(r, LINKS_JOB_SESSION_STARTED, p[0],
	    s.v[S_ENV], s.v[S_LT], NULL, 0) != 0)
		return api_db_error(r);
	p[1] = s.v[S_LT];
	if ((res = db_query(r, &stmts[LS_INFO], 2, p)) == NULL || PQntuples(res) != 1)
		return api_db_error(r);
	json_set_str(out, "session_token", token);
	json_set_str(out, "expires_at", s.v[S_EXPIRES]);
	json_set_str(out, "mode", PQgetvalue(res, 0, 0));
	json_set_str(out, "environment", PQgetvalue(res, 0, 5));
	client = json_obj(r->arena);
	json_set_str(client, "name", PQgetvalue(res, 0, 4));
	json_set_str(client, "domain", PQgetisnull(res, 0, 6) ? NULL : PQgetvalue(res, 0, 6));
	json_set(out, "client", json_object_get(client));
	json_set_str(out, "privacy_url", LS_PRIVACY_PATH);
	if (!PQgetisnull(res, 0, 1)) {
		struct json_object *b = billers_picker_item(r, PQgetvalue(res, 0, 1));

		if (b == NULL)
			return api_db_error(r);
		json_set(out, "biller", json_object_get(b));
	}
	consents = json_tokener_parse(PQgetvalue(res, 0, 2));
	if (consents == NULL || json_object_array_length(consents) == 0) {
		json_object_put(consents);
		consents = json_tokener_parse(LINKS_DEFAULT_SCOPES);
	}
	json_set(out, "consents", consents);
	json_set_str(out, "language", PQgetvalue(res, 0, 3));
	/* the connect page's client.id, allowed_embed_origins, hosted, redirect_uri */
	if (links_page_session_extras(r, s.v[S_CLIENT], s.v[S_LT], out) != 0)
		return api_db_error(r);
	return 201;
}

int
links_session_billers(struct req *r, struct json_object *out)
{
	struct session s;
	struct json_object *list;
	long long total, matches;
	int rc;

	if ((rc = session_or_reply(r, &s, 0)) != 0)
		return rc;
	list = billers_picker(r, s.v[S_ENV], json_get_str(r->query, "search_term"),
	    (int)json_get_int(r->query, "limit", CURSOR_LIMIT_DEFAULT), &total, &matches);
	if (list == NULL)
		return api_db_error(r);
	json_set_str(out, "object", "list");
	json_set(out, "data", json_object_get(list));
	json_set_int(out, "total_count", total);
	json_set_int(out, "match_count", matches);
	return 200;
}

static int
state_error(struct req *r, const struct session *s, const char *what)
{
	const char *why = s->v[S_ERROR];

	/* ended by its failed logins, or before a login (TOO_MANY_ATTEMPTS,
	 * LINK_REVOKED) */
	if (s->ended && why != NULL && strcmp(why, ERR_INVALID_CREDENTIALS) != 0 &&
	    strcmp(why, ERR_MFA_FAILED) != 0)
		return api_error(r, 409, ERR_SESSION_ENDED, "start again with a new link token",
		    "the session ended (%s)", why);
	if (s->ended)
		return api_error(r, 409, ERR_SESSION_ENDED, "start again with a new link token",
		    "the session ended after %d failed logins", LINKS_FAILED_LOGINS_MAX);
	return api_error(r, 409, ERR_INVALID_SESSION_STATE, NULL,
	    "%s is not possible while the session is %s", what, s->v[S_STATUS]);
}

/*
 * Move the session to connecting with statement stmt (its n parameters p)
 * and queue the connect job that logs in: 202 {status: connecting}, or
 * the session's state error when the statement changed nothing (what: the
 * step refused).
 */
static int
queue_login(struct req *r, const struct session *s, int stmt, int n, const char **p,
    const char *what, struct json_object *out)
{
	long long rows = db_exec_count(r->db, r->arena, &stmts[stmt], n, p);

	if (rows < 0)
		return api_db_error(r);
	if (rows == 0)
		return state_error(r, s, what);
	if (jobq_add(r, "connect", s->v[S_CLIENT], s->v[S_ENV], s->v[S_ID], NULL, 0) != 0)
		return api_db_error(r);
	json_set_str(out, "status", "connecting");
	return 202;
}

int
links_session_connect(struct req *r, struct json_object *out)
{
	const char *biller = json_get_str(r->body, "biller_id"), *p[5], *creds, *uhash;
	struct json_object *c;
	struct session s;
	int rc;

	if ((rc = session_or_reply(r, &s, 0)) != 0)
		return rc;
	if ((rc = links_attempts_or_reply(r, s.v[S_CLIENT], atol(s.v[S_TOKEN_FAILED]), NULL,
	    NULL)) != 0)
		return rc;
	if (s.ended)
		return state_error(r, &s, "connect");
	if (biller == NULL && (biller = s.v[S_PINNED]) == NULL)
		return api_field_error(r, 400, ERR_VALIDATION_ERROR, "biller_id", "required",
		    "choose a biller");
	if (s.v[S_PINNED] != NULL && strcmp(biller, s.v[S_PINNED]) != 0)
		return api_field_error(r, 400, ERR_VALIDATION_ERROR, "biller_id", "not_pinned",
		    "this link token is for another biller");
	/* the pinned biller too: the catalog may have changed since the token */
	if ((rc = billers_linkable_or_reply(r, s.v[S_ENV], biller, "biller_id")) != 0)
		return rc;
	uhash = links_username_hash(r, json_get_str(r->body, "username"));
	if ((rc = links_attempts_or_reply(r, s.v[S_CLIENT], 0, biller, uhash)) != 0)
		return rc;
	c = json_obj(r->arena);
	json_set_str(c, "username", json_get_str(r->body, "username"));
	json_set_str(c, "password", json_get_str(r->body, "password"));
	if ((creds = seal_hex(r, s.v[S_ID], "credentials", json_object_to_json_string(c))) == NULL)
		return api_db_error(r);
	p[0] = s.v[S_CLIENT];
	p[1] = s.v[S_ID];
	p[2] = biller;
	p[3] = creds;
	p[4] = uhash;
	return queue_login(r, &s, LS_CONNECT, 5, p, "connect", out);
}

int
links_session_mfa(struct req *r, struct json_object *out)
{
	const char *p[3];
	struct session s;
	int rc;

	if ((rc = session_or_reply(r, &s, 0)) != 0)
		return rc;
	/* the answer counts against the token and the username it logs in */
	if ((rc = links_attempts_or_reply(r, s.v[S_CLIENT], atol(s.v[S_TOKEN_FAILED]),
	    s.v[S_BILLER], s.v[S_UHASH])) != 0)
		return rc;
	p[0] = s.v[S_CLIENT];
	p[1] = s.v[S_ID];
	if ((p[2] = seal_hex(r, s.v[S_ID], "mfa", json_get_str(r->body, "answer"))) == NULL)
		return api_db_error(r);
	return queue_login(r, &s, LS_MFA, 3, p, "an MFA answer", out);
}

int
links_session_mfa_resend(struct req *r, struct json_object *out)
{
	const char *p[3];
	struct session s;
	int rc;

	if ((rc = session_or_reply(r, &s, 0)) != 0)
		return rc;
	if (s.ended || strcmp(s.v[S_STATUS], "mfa_required") != 0)
		return state_error(r, &s, "a new code");
	if (atoi(s.v[S_RESENDS]) >= LINKS_MFA_RESENDS_MAX)
		return api_error(r, 409, ERR_MFA_RESEND_LIMIT, NULL,
		    "a new code was sent %d times in this session", LINKS_MFA_RESENDS_MAX);
	p[0] = s.v[S_CLIENT];
	p[1] = s.v[S_ID];
	p[2] = arena_printf(r->arena, "%d", LINKS_MFA_RESENDS_MAX);
	return queue_login(r, &s, LS_RESEND, 3, p, "a new code", out);
}

/* What the session may still fail: its own failed logins and its token's
 * (links_attempts.h), the fewer of the two. */
static int
attempts_remaining(const struct session *s)
{
	int own = LINKS_FAILED_LOGINS_MAX - atoi(s->v[S_FAILED]);
	int token = LINKS_TOKEN_FAILURES_MAX - atoi(s->v[S_TOKEN_FAILED]);

	if (s->ended)
		return 0;
	own = own < token ? own : token;
	return own > 0 ? own : 0;
}

/* New MFA challenges the session may still ask for (mfa/resend): none
 * once it ended or holds no credentials to log in again with. */
static int
resends_remaining(const struct session *s)
{
	int n = LINKS_MFA_RESENDS_MAX - atoi(s->v[S_RESENDS]);

	if (s->ended || strcmp(s->v[S_HAS_CREDS], "t") != 0)
		return 0;
	return n > 0 ? n : 0;
}

int
links_session_current(struct req *r, struct json_object *out)
{
	const char *status, *pub;
	struct session s;
	int rc;

	if ((rc = session_or_reply(r, &s, 1)) != 0)
		return rc;
	status = s.v[S_STATUS];
	if (!s.live && strcmp(status, "connected") != 0 && strcmp(status, "exited") != 0)
		status = "expired";
	json_set_str(out, "status", status);
	json_set_str(out, "mode", s.v[S_MODE]);
	json_set_str(out, "biller_id", s.v[S_BILLER] != NULL ? s.v[S_BILLER] : s.v[S_PINNED]);
	if (strcmp(status, "mfa_required") == 0) {
		struct json_object *m = json_obj(r->arena);

		json_set_str(m, "type", s.v[S_MFA_TYPE]);
		json_set_str(m, "prompt", s.v[S_MFA_PROMPT]);
		json_set_bool(m, "can_resend", resends_remaining(&s) > 0);
		json_set_int(m, "resends_remaining", resends_remaining(&s));
		json_set(out, "mfa", json_object_get(m));
	}
	if (s.v[S_ERROR] != NULL)
		json_set_str(out, "error_code", s.v[S_ERROR]);
	if (strcmp(status, "connected") == 0) {
		if (!s.hosted && s.v[S_PUBLIC] != NULL && s.live) {
			if ((pub = open_hex(r, s.v[S_ID], "public", s.v[S_PUBLIC])) == NULL)
				return api_error(r, 500, ERR_INTERNAL_ERROR, NULL,
				    "the session cannot be read");
			json_set_str(out, "public_token", pub);
		}
		if (s.hosted)
			json_set_str(out, "link_id", s.v[S_LINK]);
	}
	if (s.v[S_EXIT] != NULL)
		json_set_str(out, "exit_reason", s.v[S_EXIT]);
	json_set_int(out, "attempts_remaining", attempts_remaining(&s));
	json_set_bool(out, "ended", s.ended);
	json_set_str(out, "expires_at", s.v[S_EXPIRES]);
	return 200;
}

int
links_session_exit(struct req *r, struct json_object *out)
{
	const char *reason = json_get_str(r->body, "reason"), *p[3];
	struct session s;
	int rc;

	if ((rc = session_or_reply(r, &s, 0)) != 0)
		return rc;
	if (reason == NULL)
		reason = "user_closed";
	p[0] = s.v[S_CLIENT];
	p[1] = s.v[S_ID];
	p[2] = reason;
	if ((rc = (int)db_exec_count(r->db, r->arena, &stmts[LS_EXIT], 3, p)) < 0)
		return api_db_error(r);
	if (rc == 0)
		return state_error(r, &s, "exit");
	if (session_finished(r, s.v[S_CLIENT], s.v[S_ENV], s.v[S_LT], "exited", NULL, reason,
	    s.v[S_BILLER] != NULL ? s.v[S_BILLER] : s.v[S_PINNED], s.v[S_USER]) != 0)
		return api_db_error(r);
	json_set_str(out, "status", "exited");
	json_set_str(out, "exit_reason", reason);
	return 200;
}

/* ---- CORS ---- */

/* The scheme://host[:port] of a base URL. */
static const char *
origin_of(struct arena *a, const char *url)
{
	const char *h = strstr(url, "://");

	return h == NULL ? url : arena_strndup(a, url, (size_t)(h + 3 - url) + strcspn(h + 3, "/"));
}

int
links_connect_cors_allow(struct req *r, const char *origin)
{
	const char *p[2] = { r->client_id, origin };
	PGresult *res;

	if (strcmp(origin, origin_of(r->arena, links_settings(r->cfg)->link_url)) == 0)
		return 1;
	if (r->client_id != NULL)
		res = db_query(r, &stmts[LS_CORS_CLIENT], 2, p);
	else
		res = db_query(r, &stmts[LS_CORS_ANY], 1, &origin);
	return res != NULL && PQntuples(res) == 1;
}

/* ---- the connect job ---- */

/* End the job's session without a login: failed with error_code, no more
 * connects, credentials wiped. 0, -1. */
static int
job_end(struct req *r, const struct links_connect_job *j, const char *error_code)
{
	const char *p[3] = { j->client_id, j->session_id, error_code };

	return db_exec_count(r->db, r->arena, &stmts[LS_JOB_END], 3, p) == 1 ? 0 : -1;
}

/*
 * What a job must not try, before any login: 1 go on; 0 the session was
 * ended or failed here; -1. The link of an update session stays locked
 * (links_credentials_open) until the job commits, so a revoke waits for the
 * repair instead of slipping between this check and it.
 */
static int
job_guard(struct req *r, const struct links_connect_job *j)
{
	struct links_credentials c;
	int rc, same;

	if ((rc = links_attempts_spent(r, j->client_id, j->link_token_id, j->biller_id,
	    j->username_hash)) != 0)
		return rc < 0 ? -1 : job_end(r, j, ERR_TOO_MANY_ATTEMPTS);
	if (strcmp(j->mode, "update") != 0)
		return 1;
	/* revoked: its credentials are gone, nothing can be repaired */
	if ((rc = links_credentials_open(r, j->client_id, j->update_link_id, &c)) <= 0)
		return rc < 0 ? -1 : job_end(r, j, ERR_LINK_REVOKED);
	/* another biller login would put a second person's accounts under the
	 * link (Plaid's INVALID_UPDATED_USERNAME) */
	same = crypto_ct_streq(links_username_hash(r, c.username), j->username_hash);
	links_credentials_wipe(&c);
	return same ? 1 : links_connect_job_failed(r, j, ERR_INVALID_UPDATED_USERNAME, 1);
}

/* A counted failure, against the token and the username too: the one that
 * spends either ends the session (TOO_MANY_ATTEMPTS). 0, -1. */
static int
job_counted(struct req *r, const struct links_connect_job *j, const char *error_code)
{
	int rc;

	if (links_attempts_record(r, j->client_id, j->link_token_id, j->biller_id,
	    j->username_hash, error_code) != 0 ||
	    (rc = links_attempts_spent(r, j->client_id, j->link_token_id, j->biller_id,
	    j->username_hash)) < 0)
		return -1;
	return rc == 1 ? job_end(r, j, ERR_TOO_MANY_ATTEMPTS) : 0;
}

int
links_connect_job_load(struct req *r, const char *client_id, const char *session_id,
    struct links_connect_job *j)
{
	const char *p[2] = { client_id, session_id }, *creds;
	struct json_object *c;
	PGresult *res;

	memset(j, 0, sizeof(*j));
	if ((res = db_query(r, &stmts[LS_JOB_LOAD], 2, p)) == NULL)
		return -1;
	if (PQntuples(res) != 1 || strcmp(PQgetvalue(res, 0, J_STATUS), "connecting") != 0 ||
	    strcmp(PQgetvalue(res, 0, J_LIVE), "t") != 0 || PQgetisnull(res, 0, J_CREDS))
		return 0;
#define COL(c) (PQgetisnull(res, 0, (c)) ? NULL : arena_strdup(r->arena, PQgetvalue(res, 0, (c))))
	j->session_id = arena_strdup(r->arena, session_id);
	j->client_id = arena_strdup(r->arena, client_id);
	j->environment = COL(J_ENV);
	j->link_token_id = COL(J_LT);
	j->mode = COL(J_MODE);
	j->hosted = strcmp(PQgetvalue(res, 0, J_HOSTED), "t") == 0;
	j->client_user_id = COL(J_USER);
	j->biller_id = COL(J_BILLER);
	j->connector = COL(J_CONNECTOR);
	j->linkable = strcmp(PQgetvalue(res, 0, J_LINKABLE), "t") == 0;
	j->update_link_id = COL(J_UPDATE_LINK);
	j->request_to_link_id = COL(J_RTL);
	j->scopes = json_own(r->arena, json_tokener_parse(PQgetvalue(res, 0, J_SCOPES)));
	if ((creds = open_hex(r, session_id, "credentials", PQgetvalue(res, 0, J_CREDS))) == NULL ||
	    (c = json_parse(r->arena, creds, strlen(creds), &creds)) == NULL)
		return -1;
	j->username = json_get_str(c, "username");
	j->password = json_get_str(c, "password");
	if (!PQgetisnull(res, 0, J_MFA) &&
	    (j->mfa_answer = open_hex(r, session_id, "mfa", PQgetvalue(res, 0, J_MFA))) == NULL)
		return -1;
	j->mfa_type = COL(J_MFA_TYPE);
	j->mfa_prompt = COL(J_MFA_PROMPT);
#undef COL
	if (j->username == NULL || j->password == NULL)
		return -1;
	j->username_hash = links_username_hash(r, j->username);
	return job_guard(r, j);
}

int
links_connect_job_mfa(struct req *r, const struct links_connect_job *j, const char *type,
    const char *prompt, const char *error_code)
{
	const char *p[8] = { j->client_id, j->session_id, type, prompt, error_code,
		error_code != NULL ? "1" : "0", arena_printf(r->arena, "%d",
		LINKS_FAILED_LOGINS_MAX), ERR_TOO_MANY_ATTEMPTS };

	if (db_exec_count(r->db, r->arena, &stmts[LS_JOB_MFA], 8, p) != 1)
		return -1;
	return error_code != NULL ? job_counted(r, j, error_code) : 0;
}

int
links_connect_job_rechallenge(struct req *r, const struct links_connect_job *j)
{
	const char *p[3] = { j->client_id, j->session_id,
		arena_printf(r->arena, "%d", LINKS_FRESH_CHALLENGES) };
	long long n = db_exec_count(r->db, r->arena, &stmts[LS_RECHALLENGE], 3, p);

	return n < 0 ? -1 : n == 1;
}

int
links_connect_job_failed(struct req *r, const struct links_connect_job *j,
    const char *error_code, int counts_login)
{
	const char *p[6] = { j->client_id, j->session_id, error_code, counts_login ? "1" : "0",
		arena_printf(r->arena, "%d", LINKS_FAILED_LOGINS_MAX), ERR_TOO_MANY_ATTEMPTS };

	if (db_exec_count(r->db, r->arena, &stmts[LS_JOB_FAILED], 6, p) != 1 ||
	    (counts_login && job_counted(r, j, error_code) != 0))
		return -1;
	/* The biller rejected the credentials before any link exists: the
	 * spec's pre-completion link.disconnected (no id; the link token and
	 * its request to link), one per rejected login. A repair's rejection
	 * leaves its link as it was (already disconnected): no event. */
	if (strcmp(error_code, ERR_INVALID_CREDENTIALS) != 0 || strcmp(j->mode, "create") != 0)
		return 0;
	return links_disconnected_emit(r, j->client_id, j->environment, "", j->client_user_id,
	    j->biller_id, "credentials_rejected", ERR_INVALID_CREDENTIALS, j->link_token_id,
	    j->request_to_link_id);
}

/* Tell the request to link of j's token that link_id is made
 * (LINKS_JOB_LINK_ACTIVATED, in this transaction). 0 ok, -1. */
static int
link_activated_queue(struct req *r, const struct links_connect_job *j, const char *link_id)
{
	struct json_object *o = json_obj(r->arena);

	json_set_str(o, "request_to_link_id", j->request_to_link_id);
	json_set_str(o, "link_id", link_id);
	json_set_bool(o, "hosted", j->hosted);
	json_set_str(o, "client_user_id", j->client_user_id);
	json_set_str(o, "biller_id", j->biller_id);
	/* the token is the subject: one token makes one link, while one link
	 * may be made (repaired) by several tokens, whose pending jobs must
	 * not fold into one */
	return jobq_add(r, LINKS_JOB_LINK_ACTIVATED, j->client_id, j->environment,
	    j->link_token_id, o, 0);
}

int
links_connect_job_connected(struct req *r, const struct links_connect_job *j,
    const char *link_id)
{
	const char *p[5], *sealed = NULL;

	if (!j->hosted) {
		const char *pub = auth_token_new(r->arena, LS_PUBLIC_PREFIX);

		p[0] = auth_key_hash(r->arena, pub);
		p[1] = j->client_id;
		p[2] = j->environment;
		p[3] = j->link_token_id;
		p[4] = link_id;
		if (db_query(r, &stmts[LS_PUB_INSERT], 5, p) == NULL ||
		    (sealed = seal_hex(r, j->session_id, "public", pub)) == NULL)
			return -1;
	}
	p[0] = j->client_id;
	p[1] = j->session_id;
	p[2] = link_id;
	p[3] = sealed;
	if (db_exec_count(r->db, r->arena, &stmts[LS_JOB_CONNECTED], 4, p) != 1)
		return -1;
	if (j->request_to_link_id != NULL && link_activated_queue(r, j, link_id) != 0)
		return -1;	/* requests to link (lib/rtl) */
	/* hosted: exchanged here, the client learns the link from the event */
	if (j->hosted)
		return session_finished(r, j->client_id, j->environment, j->link_token_id,
		    "completed", link_id, NULL, j->biller_id, j->client_user_id);
	return 0;
}

long long
links_sessions_sweep(const struct config *cfg, struct db *d, struct arena *a)
{
	(void)cfg;
	return db_exec_count(d, a, &stmts[LS_SWEEP], 0, NULL);
}
