/*
 * Payment methods: cards of a client's end user. The number is checked
 * (shape, Luhn), fingerprinted with a keyed BLAKE2b (the same card of the
 * same user is the same method), sealed under the pay key ring with the
 * method's id bound, and never answered again; the CVV is checked for shape
 * only. The route is ROUTE_SECRET_BODY: the dispatcher wipes the body and
 * every string parsed from it when the request ends, whatever it answered.
 */
#include <string.h>
#include <time.h>

#include <json-c/json.h>
#include <libpq-fe.h>
#include <sodium.h>

#include "core/arena.h"
#include "core/config.h"
#include "core/crypto.h"
#include "core/cursor.h"
#include "core/db.h"
#include "core/errcodes.h"
#include "core/errors.h"
#include "core/json.h"
#include "core/req.h"
#include "core/validate.h"
#include "core/vault.h"
#include "pay/pay.h"
#include "pay/pay_card.h"
#include "pay/pay_int.h"

enum { PM_UPSERT, PM_LIST, PM_DELETE, PM_STALE, PM_RESEAL, PM__MAX };
static struct db_stmt stmts[PM__MAX] = {
	/* a new card, or the user's same card: its expiry and bucket updated,
	 * its sealed number and id kept. $1 client, $2 id, $3 env, $4 user,
	 * $5 fingerprint hex, $6 brand, $7 last4, $8 month, $9 year, $10
	 * bucket, $11 sealed hex, $12 key id */
	[PM_UPSERT] = { "pay_methods_upsert",
	    "INSERT INTO payment_methods AS m (client_id, id, environment, client_user_id,"
	    " fingerprint, brand, last4, exp_month, exp_year, bucket, pan_sealed, pan_key_id)"
	    " VALUES ($1, $2, $3, $4, decode($5, 'hex'), $6, $7, $8, $9, $10,"
	    " decode($11, 'hex'), $12)"
	    " ON CONFLICT (client_id, environment, client_user_id, fingerprint)"
	    "  WHERE deleted_at IS NULL"
	    " DO UPDATE SET exp_month = EXCLUDED.exp_month, exp_year = EXCLUDED.exp_year,"
	    "  bucket = coalesce(EXCLUDED.bucket, m.bucket), updated_at = now()"
	    " RETURNING payment_method_json(m)" },
	/* newest first; $3 user, $4 $5 the cursor's position, $6 page + 1 */
	[PM_LIST] = { "pay_methods_list",
	    "SELECT m.id, " CURSOR_POS("m.created_at") ", payment_method_json(m)"
	    " FROM payment_methods m"
	    " WHERE m.client_id = $1 AND m.environment = $2 AND m.client_user_id = $3"
	    " AND m.deleted_at IS NULL"
	    " AND m.created_at <= $4::timestamptz AND (m.created_at < $4::timestamptz OR m.id < $5)"
	    " ORDER BY m.created_at DESC, m.id DESC LIMIT $6::int" },
	/* the number erased with the method */
	[PM_DELETE] = { "pay_methods_delete",
	    "UPDATE payment_methods SET deleted_at = now(), updated_at = now(),"
	    " pan_sealed = NULL, pan_key_id = NULL"
	    " WHERE " DB_BY_ID("", " AND environment = $3 AND deleted_at IS NULL")
	    " RETURNING id" },
	/* rows not under the current key ($1), a batch ($3) at a time after $2
	 * (core/vault.h's vault_rotate) */
	[PM_STALE] = { "pay_methods_stale",
	    "SELECT client_id, id, encode(pan_sealed, 'hex'), pan_key_id FROM payment_methods"
	    " WHERE pan_sealed IS NOT NULL AND pan_key_id IS DISTINCT FROM $1 AND id > $2"
	    " ORDER BY id LIMIT $3::int FOR UPDATE SKIP LOCKED" },
	[PM_RESEAL] = { "pay_methods_reseal",
	    "UPDATE payment_methods SET pan_sealed = decode($3, 'hex'), pan_key_id = $4"
	    " WHERE " DB_BY_ID("", " AND pan_sealed IS NOT NULL") },
};
const struct db_stmt_set pay_methods_stmt_set = { "pay_methods", stmts, PM__MAX };

/* pan: 13 to 19 digits passing Luhn. The message never repeats the value. */
static int
check_pan(struct arena *a, struct json_object **v, const char **code, const char **msg)
{
	const char *s = json_object_get_string(*v);

	(void)a;
	if (!pay_card_digits(s, PAY_PAN_MIN, PAY_PAN_MAX)) {
		*code = "invalid_format";
		*msg = "pan must be 13 to 19 digits";
		return -1;
	}
	if (!pay_card_luhn(s)) {
		*code = "luhn_check_failed";
		*msg = "pan is not a valid card number (its check digit is wrong)";
		return -1;
	}
	return 0;
}

static int
check_cvv(struct arena *a, struct json_object **v, const char **code, const char **msg)
{
	(void)a;
	if (pay_card_digits(json_object_get_string(*v), 3, 4))
		return 0;
	*code = "invalid_format";
	*msg = "cvv must be 3 or 4 digits";
	return -1;
}

static int
check_year(struct arena *a, struct json_object **v, const char **code, const char **msg)
{
	int64_t y = json_object_get_int64(*v);

	(void)a;
	if (y >= 1000 && y <= 9999)
		return 0;
	*code = "invalid_format";
	*msg = "expiry_year must be a 4-digit year";
	return -1;
}

const struct vfield pay_methods_create_fields[] = {
	/* no length of their own: any string not of the shape is invalid_format */
	{ "pan", NULL, VT_STRING, V_REQUIRED, .check = check_pan },
	{ "expiry_month", NULL, VT_INT, V_REQUIRED, 1, 12 },
	{ "expiry_year", NULL, VT_INT, V_REQUIRED, .check = check_year },
	{ "cvv", NULL, VT_STRING, 0, .check = check_cvv },
	{ "bucket", NULL, VT_STRING, 0, 1, PAY_BUCKET_MAX },
	{ "client_user_id", NULL, VT_STRING, 0, 1, 255 },
	{ NULL }
};

const struct vfield pay_methods_list_query[] = {
	{ "client_user_id", NULL, VT_STRING, V_REQUIRED, 1, 255 },
	CURSOR_LIMIT_FIELD(PAY_LIMIT_MAX),
	CURSOR_QUERY_FIELD,
	{ NULL }
};

static int
not_found(struct req *r, const char *id)
{
	return api_error(r, 404, ERR_PAYMENT_METHOD_NOT_FOUND, NULL, "no payment method %s", id);
}

/* The keyed fingerprint of a number, as hex (arena). */
static const char *
fingerprint(struct req *r, const char *pan)
{
	const struct pay_settings *s = pay_settings(r->cfg);
	unsigned char h[32], key[32];

	if (s->pay_fingerprint_key_set)
		memcpy(key, s->pay_fingerprint_key, sizeof(key));
	else
		pay_derived_key(r->cfg, "bds pay card fingerprint key", key);
	crypto_generichash(h, sizeof(h), (const unsigned char *)pan, strlen(pan), key,
	    sizeof(key));
	sodium_memzero(key, sizeof(key));
	return crypto_hex_encode(r->arena, h, sizeof(h));
}

/* The user a method is added for: 0 with *user, or the 400 written. */
static int
user_or_reply(struct req *r, const struct pay_bearer *b, const char **user)
{
	const char *given = json_get_str(r->body, "client_user_id");

	if (b->user == NULL && given == NULL)
		return api_field_error(r, 400, ERR_VALIDATION_ERROR, "client_user_id",
		    "required", "client_user_id is required with an API key");
	if (b->user != NULL && given != NULL && strcmp(given, b->user) != 0)
		return api_field_error(r, 400, ERR_VALIDATION_ERROR, "client_user_id",
		    "user_mismatch", "client_user_id is not the token's user");
	*user = b->user != NULL ? b->user : given;
	return 0;
}

int
pay_methods_create(struct req *r, struct json_object *out)
{
	const char *pan = json_get_str(r->body, "pan"), *user = NULL, *p[12];
	int month = (int)json_get_int(r->body, "expiry_month", 0);
	int year = (int)json_get_int(r->body, "expiry_year", 0);
	unsigned char derived[32];
	struct vault_ring ring;
	struct pay_bearer b;
	struct tm now;
	time_t t = time(NULL);
	PGresult *res;
	int rc;

	(void)out;
	if ((rc = pay_bearer(r, &b)) != 0 || (rc = user_or_reply(r, &b, &user)) != 0)
		return rc;
	gmtime_r(&t, &now);
	if (pay_card_expired(year, month, now.tm_year + 1900, now.tm_mon + 1))
		return api_field_error(r, 400, ERR_VALIDATION_ERROR, "expiry_year", "card_expired",
		    "the card has expired");
	pay_pan_ring(r->cfg, &ring, derived);
	p[0] = r->client_id, p[1] = crypto_id_new(r->arena, PAY_PM), p[2] = r->env;
	p[3] = user;
	p[4] = fingerprint(r, pan);
	p[5] = pay_card_brand(pan);
	p[6] = pan + strlen(pan) - 4;
	p[7] = arena_printf(r->arena, "%d", month);
	p[8] = arena_printf(r->arena, "%d", year);
	p[9] = json_get_str(r->body, "bucket");
	p[10] = vault_ring_seal_hex(r->arena, &ring, p[1], pan, strlen(pan));
	sodium_memzero(derived, sizeof(derived));
	if (p[10] == NULL)
		return api_db_error(r);
	p[11] = ring.id;
	if ((res = db_query(r, &stmts[PM_UPSERT], 12, p)) == NULL || PQntuples(res) != 1)
		return api_db_error(r);
	r->out = db_json_raw(r->arena, res, 0, 0);
	return 201;
}

static const struct cursor_list methods_page = {
	.name = "payment_methods", .flags = CURSOR_TENANT | CURSOR_KEYSET,
	.shape = CURSOR_NAMED, .key = "payment_methods", .limit = PAY_LIMIT_DEFAULT,
	.prefix = PAY_PM, .cols = { 1, 0 }, .json_col = 2,
};

int
pay_methods_list(struct req *r, struct json_object *out)
{
	const char *p[6] = { r->client_id, r->env, json_get_str(r->query, "client_user_id") };
	struct cursor_page pg;
	PGresult *res;
	int rc;

	if ((rc = cursor_page_open(r, &methods_page, &p[2], 1, &pg)) != 0)
		return rc;
	p[3] = pg.pos[0];
	p[4] = pg.pos[1];
	p[5] = pg.limit1;
	if ((res = db_query(r, &stmts[PM_LIST], 6, p)) == NULL)
		return api_db_error(r);
	return cursor_page_reply(r, out, &pg, res);
}

int
pay_methods_delete(struct req *r, struct json_object *out)
{
	const char *id = req_cap(r, "id"), *p[3] = { r->client_id, id, r->env };
	PGresult *res;

	if (!crypto_id_valid(id, PAY_PM, 0))
		return not_found(r, id);
	if ((res = db_query(r, &stmts[PM_DELETE], 3, p)) == NULL)
		return api_db_error(r);
	if (PQntuples(res) != 1)
		return not_found(r, id);
	json_set_str(out, "id", id);
	json_set_str(out, "object", "payment_method");
	json_set_str(out, "payment_method_id", id);
	json_set_bool(out, "deleted", 1);
	return 200;
}

/* ---- key rotation ---- */

int
pay_rotate_pan(const struct config *cfg, struct db *d, struct arena *a)
{
	unsigned char derived[32];
	struct vault_ring ring;
	int rc;

	pay_pan_ring(cfg, &ring, derived);
	rc = vault_rotate(d, a, &ring, &stmts[PM_STALE], &stmts[PM_RESEAL], "card numbers");
	sodium_memzero(derived, sizeof(derived));
	return rc;
}
