/*
 * Pay tokens: minted by a client's server for one end user (POST
 * /v1/pay-tokens, and POST /v1/pay/sessions, which wraps one in the card
 * page's URL), resolved as a bearer (pay_auth_token), and read back by the
 * card page (GET /v1/pay-tokens/current). The secret is stored as its
 * SHA-256 only; a token lives PAY_TOKEN_TTL_S.
 */
#include <string.h>

#include <json-c/json.h>
#include <libpq-fe.h>

#include "core/arena.h"
#include "core/auth.h"
#include "core/crypto.h"
#include "core/db.h"
#include "core/errcodes.h"
#include "core/errors.h"
#include "core/json.h"
#include "core/req.h"
#include "core/validate.h"
#include "links/links.h"
#include "links/links_page.h"
#include "pay/pay.h"
#include "pay/pay_int.h"

enum { T_INSERT, T_AUTH, T_CURRENT, T_TOKEN, T_LINK_USER, T_SWEEP, T__MAX };
static struct db_stmt stmts[T__MAX] = {
	/* $1 client, $2 id, $3 env, $4 sha256 hex, $5 user, $6 bill, $7
	 * amount, $8 currency, $9 method, $10 metadata, $11 ttl seconds */
	[T_INSERT] = { "pay_tokens_insert",
	    "INSERT INTO pay_tokens (client_id, id, environment, token_sha256, client_user_id,"
	    " bill_id, amount_minor, currency, payment_method_id, metadata_json, expires_at)"
	    " VALUES ($1, $2, $3, decode($4, 'hex'), $5, $6, $7, $8, $9, $10,"
	    " now() + make_interval(secs => $11::int))"
	    " RETURNING bds_iso(expires_at)" },
	[T_AUTH] = { "pay_tokens_auth",
	    "SELECT client_id, environment, id, expires_at <= now() FROM pay_tokens"
	    " WHERE token_sha256 = decode($1, 'hex')" },
	/* the card page's view: the token, its bill, its client's origins */
	[T_CURRENT] = { "pay_tokens_current",
	    "SELECT t.id, t.client_user_id, bds_iso(t.expires_at), b.id,"
	    " CASE WHEN t.amount_minor IS NOT NULL THEN bds_money(t.amount_minor, t.currency)"
	    "  WHEN b.id IS NOT NULL THEN bds_money(" PAY_OWED("b.") ", b.currency) END::text,"
	    " CASE WHEN b.id IS NOT NULL THEN json_build_object('id', b.id,"
	    "  'biller_name', b.biller_name, 'due_date_iso', to_char(b.due_date, 'YYYY-MM-DD'),"
	    "  'amount_due', bds_money(b.amount_due_minor, b.currency)) END::text,"
	    " t.payment_method_id, c.id, c.name, c.allowed_origins::text"
	    " FROM pay_tokens t JOIN clients c ON c.id = t.client_id"
	    " LEFT JOIN bills b ON b.id = t.bill_id AND b.client_id = t.client_id"
	    "  AND b.deleted_at IS NULL"
	    " WHERE t.id = $2 AND " DB_ROW_CHECK("t.client_id = $1") },
	[T_TOKEN] = { "pay_tokens_binding",
	    "SELECT client_user_id, bill_id, payment_method_id, amount_minor, currency"
	    " FROM pay_tokens WHERE " DB_BY_ID("", "") },
	[T_LINK_USER] = { "pay_tokens_link_user",
	    "SELECT client_user_id FROM links WHERE " DB_BY_ID("", "") },
	[T_SWEEP] = { "pay_tokens_sweep",
	    "DELETE FROM pay_tokens WHERE expires_at < now() - interval '1 day'" },
};
const struct db_stmt_set pay_tokens_stmt_set = { "pay_tokens", stmts, T__MAX };

enum { CU_ID, CU_USER, CU_EXPIRES, CU_BILL, CU_AMOUNT, CU_BILL_JSON, CU_METHOD,
	CU_CLIENT, CU_CLIENT_NAME, CU_ORIGINS };

/* metadata_json: an opaque string of JSON text, at most PAY_METADATA_MAX
 * bytes (the field's own bound counts characters). */
static int
check_metadata(struct arena *a, struct json_object **v, const char **code, const char **msg)
{
	const char *s = json_object_get_string(*v), *why = NULL;

	if (strlen(s) > PAY_METADATA_MAX) {
		*code = "too_long";
		*msg = "metadata_json must be at most 4096 bytes";
		return -1;
	}
	if (json_parse(a, s, strlen(s), &why) != NULL || why == NULL)
		return 0;
	*code = "invalid_json";
	*msg = "metadata_json must be a JSON text";
	return -1;
}

static const struct vfield amount_fields[] = {
	{ "value", NULL, VT_INT, V_REQUIRED, 1, 0 },
	{ "currency", NULL, VT_STRING, V_REQUIRED, .format = VF_CURRENCY },
	{ NULL }
};

const struct vfield pay_tokens_create_fields[] = {
	{ "client_user_id", NULL, VT_STRING, V_REQUIRED, 1, 255 },
	{ "bill_id", NULL, VT_STRING, 0, 1, 255 },
	{ "amount", NULL, VT_OBJECT, 0, .fields = amount_fields },
	{ "payment_method_id", NULL, VT_STRING, 0, 1, 255 },
	{ "metadata_json", NULL, VT_STRING, 0, 0, PAY_METADATA_MAX, .check = check_metadata },
	{ NULL }
};

const struct vfield pay_sessions_create_fields[] = {
	{ "client_user_id", NULL, VT_STRING, V_REQUIRED, 1, 255 },
	{ "bill_id", NULL, VT_STRING, 0, 1, 255 },
	{ "amount", NULL, VT_OBJECT, 0, .fields = amount_fields },
	{ NULL }
};

struct minted {
	const char	*id, *secret, *expires_at;
};

/*
 * Check what the body binds (bill, amount, payment method) against the
 * key's tenant and mint the token: 0 with *m, or the status written.
 */
static int
mint(struct req *r, struct minted *m)
{
	const char *user = json_get_str(r->body, "client_user_id");
	const char *bill = json_get_str(r->body, "bill_id");
	const char *method = json_get_str(r->body, "payment_method_id");
	const char *currency = NULL, *minor = NULL, *owner = NULL, *p[11];
	struct json_object *amount;
	PGresult *res;
	int rc;

	if (json_object_object_get_ex(r->body, "amount", &amount) && amount != NULL) {
		minor = arena_printf(r->arena, "%lld", (long long)json_get_int(amount, "value", 0));
		currency = json_get_str(amount, "currency");
	}
	if (bill != NULL) {
		if ((rc = pay_bill_find(r, bill, &res)) < 0)
			return api_db_error(r);
		if (rc == 0)
			return api_error(r, 404, ERR_BILL_NOT_FOUND, NULL, "no bill %s", bill);
		if (strcmp(PQgetvalue(res, 0, B_USER), user) != 0)
			return api_field_error(r, 400, ERR_VALIDATION_ERROR, "bill_id",
			    "user_mismatch", "the bill is not client_user_id's");
		if (currency != NULL && strcmp(PQgetvalue(res, 0, B_CURRENCY), currency) != 0)
			return api_field_error(r, 400, ERR_VALIDATION_ERROR, "amount.currency",
			    "currency_mismatch", "the currency is not the bill's");
	}
	if (method != NULL) {
		if ((rc = pay_method_user(r, method, &owner)) < 0)
			return api_db_error(r);
		if (rc == 0 || strcmp(owner, user) != 0)
			return api_error(r, 404, ERR_PAYMENT_METHOD_NOT_FOUND, NULL,
			    "no payment method %s of client_user_id", method);
	}
	m->id = crypto_id_new(r->arena, PAY_PT);
	m->secret = auth_token_new(r->arena, PAY_TOKEN_PREFIX);
	p[0] = r->client_id, p[1] = m->id, p[2] = r->env;
	p[3] = auth_key_hash(r->arena, m->secret);
	p[4] = user, p[5] = bill, p[6] = minor, p[7] = currency, p[8] = method;
	p[9] = json_get_str(r->body, "metadata_json");
	p[10] = arena_printf(r->arena, "%d", PAY_TOKEN_TTL_S);
	if ((res = db_query(r, &stmts[T_INSERT], 11, p)) == NULL || PQntuples(res) != 1)
		return api_db_error(r);
	m->expires_at = arena_strdup(r->arena, PQgetvalue(res, 0, 0));
	return 0;
}

int
pay_tokens_create(struct req *r, struct json_object *out)
{
	struct minted m;
	int rc;

	if ((rc = mint(r, &m)) != 0)
		return rc;
	json_set_bool(out, "success", 1);
	json_set_str(out, "pay_token", m.secret);
	json_set_str(out, "pay_token_id", m.id);
	json_set_str(out, "expires_at", m.expires_at);
	return 201;
}

int
pay_sessions_create(struct req *r, struct json_object *out)
{
	struct minted m;
	int rc;

	if ((rc = mint(r, &m)) != 0)
		return rc;
	/* the secret in the fragment: it never reaches a server's log */
	json_set_str(out, "url", arena_printf(r->arena, "%s/pay?client_id=%s#pay_token=%s",
	    links_settings(r->cfg)->link_url, r->client_id, m.secret));
	json_set_str(out, "pay_token_id", m.id);
	json_set_str(out, "expires_at", m.expires_at);
	return 201;
}

static int
invalid(struct req *r)
{
	return api_error(r, 401, ERR_INVALID_PAY_TOKEN,
	    "mint a new one with POST /v1/pay-tokens", "missing or invalid pay token");
}

int
pay_auth_token(struct req *r, const char *token)
{
	const char *p[1];
	PGresult *res;

	if (!auth_token_wellformed(token, PAY_TOKEN_PREFIX))
		return invalid(r);
	p[0] = auth_key_hash(r->arena, token);
	if ((res = db_query(r, &stmts[T_AUTH], 1, p)) == NULL)
		return api_db_error(r);
	if (PQntuples(res) != 1)
		return invalid(r);
	if (strcmp(PQgetvalue(res, 0, 3), "t") == 0)
		return api_error(r, 401, ERR_PAY_TOKEN_EXPIRED,
		    "mint a new one with POST /v1/pay-tokens", "the pay token has expired");
	r->client_id = arena_strdup(r->arena, PQgetvalue(res, 0, 0));
	r->env = arena_strdup(r->arena, PQgetvalue(res, 0, 1));
	r->pay_token_id = arena_strdup(r->arena, PQgetvalue(res, 0, 2));
	/* the link host serves the card page of every environment */
	if (r->http.host_env != NULL && strcmp(r->http.host_env, "link") == 0)
		return 0;
	return auth_host_or_reply(r, "pay token");
}

int
pay_tokens_current(struct req *r, struct json_object *out)
{
	const char *p[2] = { r->client_id, r->pay_token_id };
	struct json_object *client;
	PGresult *res;

	if ((res = db_query(r, &stmts[T_CURRENT], 2, p)) == NULL)
		return api_db_error(r);
	if (PQntuples(res) != 1)
		return invalid(r);
	json_set_str(out, "pay_token_id", PQgetvalue(res, 0, CU_ID));
	json_set_str(out, "object", "pay_token");
	json_set_str(out, "client_user_id", PQgetvalue(res, 0, CU_USER));
	json_set_str(out, "expires_at", PQgetvalue(res, 0, CU_EXPIRES));
	json_set_str(out, "bill_id", PQgetisnull(res, 0, CU_BILL) ? NULL :
	    PQgetvalue(res, 0, CU_BILL));
	json_set(out, "amount", json_object_get(db_json_raw(r->arena, res, 0, CU_AMOUNT)));
	json_set(out, "bill", json_object_get(db_json_raw(r->arena, res, 0, CU_BILL_JSON)));
	json_set_str(out, "payment_method_id", PQgetisnull(res, 0, CU_METHOD) ? NULL :
	    PQgetvalue(res, 0, CU_METHOD));
	client = json_obj(r->arena);
	json_set_str(client, "id", PQgetvalue(res, 0, CU_CLIENT));
	json_set_str(client, "name", PQgetvalue(res, 0, CU_CLIENT_NAME));
	json_set(client, "allowed_embed_origins",
	    json_object_get(links_page_origins(r, PQgetvalue(res, 0, CU_ORIGINS))));
	json_set(out, "client", json_object_get(client));
	return 200;
}

int
pay_bearer(struct req *r, struct pay_bearer *b)
{
	const char *p[2] = { r->client_id, NULL };
	PGresult *res;

	memset(b, 0, sizeof(*b));
	if (r->pay_token_id != NULL) {
		p[1] = r->pay_token_id;
		if ((res = db_query(r, &stmts[T_TOKEN], 2, p)) == NULL || PQntuples(res) != 1)
			return api_db_error(r);
		b->user = arena_strdup(r->arena, PQgetvalue(res, 0, 0));
		b->bill_id = PQgetisnull(res, 0, 1) ? NULL : arena_strdup(r->arena,
		    PQgetvalue(res, 0, 1));
		b->method_id = PQgetisnull(res, 0, 2) ? NULL : arena_strdup(r->arena,
		    PQgetvalue(res, 0, 2));
		b->amount_minor = PQgetisnull(res, 0, 3) ? NULL : arena_strdup(r->arena,
		    PQgetvalue(res, 0, 3));
		b->currency = PQgetisnull(res, 0, 4) ? NULL : arena_strdup(r->arena,
		    PQgetvalue(res, 0, 4));
	} else if (r->link_id != NULL) {
		p[1] = r->link_id;
		if ((res = db_query(r, &stmts[T_LINK_USER], 2, p)) == NULL || PQntuples(res) != 1)
			return api_db_error(r);
		b->user = arena_strdup(r->arena, PQgetvalue(res, 0, 0));
		b->link_id = r->link_id;
	}
	return 0;
}

long long
pay_tokens_sweep(const struct config *cfg, struct db *d, struct arena *a)
{
	(void)cfg;
	return db_exec_count(d, a, &stmts[T_SWEEP], 0, NULL);
}
