/*
 * Payment attempts: POST /v1/pay/payments (gated: 501 unless the
 * deployment enables execution) and GET /v1/pay/payments/{attemptId}.
 * An attempt is SCHEDULED in the request's transaction with its
 * pay.scheduled event and the processor's job (pay_process.c), one in
 * flight per bill (the unique index payment_attempts_open).
 */
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>
#include <libpq-fe.h>

#include "core/arena.h"
#include "core/crypto.h"
#include "core/db.h"
#include "core/errcodes.h"
#include "core/errors.h"
#include "core/jobq.h"
#include "core/json.h"
#include "core/req.h"
#include "core/validate.h"
#include "events/events.h"
#include "pay/pay.h"
#include "pay/pay_int.h"

enum { P_BILL, P_METHOD, P_INSERT, P_GET, P__MAX };
static struct db_stmt stmts[P__MAX] = {
	/* the bill and what is owed on it (two attempts at once: the unique
	 * index payment_attempts_open lets one in) */
	[P_BILL] = { "pay_payments_bill",
	    "SELECT client_user_id, currency, status, " PAY_OWED("") ", coalesce(link_id, '')"
	    " FROM bills WHERE " DB_BY_ID("", " AND environment = $3 AND deleted_at IS NULL") },
	[P_METHOD] = { "pay_payments_method",
	    "SELECT client_user_id FROM payment_methods"
	    " WHERE " DB_BY_ID("", " AND environment = $3 AND deleted_at IS NULL") },
	/* $1 client, $2 id, $3 env, $4 bill, $5 method, $6 user, $7 amount,
	 * $8 currency, $9 owed */
	[P_INSERT] = { "pay_payments_insert",
	    "INSERT INTO payment_attempts AS a (client_id, id, environment, bill_id,"
	    " payment_method_id, client_user_id, amount_minor, currency, owed_minor)"
	    " VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)"
	    " RETURNING payment_attempt_json(a)" },
	/* the caller's attempt: $4 a link access token's link, $5 a pay
	 * token's user (NULL: an API key) */
	[P_GET] = { "pay_payments_get",
	    "SELECT payment_attempt_json(a) FROM payment_attempts a"
	    " WHERE " DB_BY_ID("a.", " AND a.environment = $3"
	    " AND ($5::text IS NULL OR a.client_user_id = $5)"
	    " AND ($4::text IS NULL OR EXISTS (SELECT 1 FROM bills b"
	    "  WHERE b.id = a.bill_id AND b.client_id = a.client_id AND b.link_id = $4))") },
};
const struct db_stmt_set pay_payments_stmt_set = { "pay_payments", stmts, P__MAX };


const struct vfield pay_payments_create_fields[] = {
	{ "bill_id", NULL, VT_STRING, V_REQUIRED, 1, 255 },
	{ "payment_method_id", NULL, VT_STRING, V_REQUIRED, 1, 255 },
	{ "idempotency_key", NULL, VT_STRING, 0, 1, 255 },
	{ "amount_minor_units", NULL, VT_INT, 0, 1, 0 },
	{ "currency", NULL, VT_STRING, 0, .format = VF_CURRENCY },
	{ NULL }
};

struct json_object *
pay_row_json(struct req *r, PGresult *res)
{
	const char *why = NULL;

	if (PQntuples(res) != 1 || PQgetisnull(res, 0, 0))
		return NULL;
	return json_parse(r->arena, PQgetvalue(res, 0, 0), (size_t)PQgetlength(res, 0, 0), &why);
}

int
pay_bill_find(struct req *r, const char *id, PGresult **res)
{
	const char *p[3] = { r->client_id, id, r->env };

	if (!crypto_id_valid(id, "bill", 0))
		return 0;
	if ((*res = db_query(r, &stmts[P_BILL], 3, p)) == NULL)
		return -1;
	return PQntuples(*res) == 1;
}

int
pay_method_user(struct req *r, const char *id, const char **user)
{
	const char *p[3] = { r->client_id, id, r->env };
	PGresult *res;

	if (!crypto_id_valid(id, PAY_PM, 0))
		return 0;
	if ((res = db_query(r, &stmts[P_METHOD], 3, p)) == NULL)
		return -1;
	if (PQntuples(res) != 1)
		return 0;
	*user = PQgetvalue(res, 0, 0);
	return 1;
}

static int
bill_not_found(struct req *r, const char *id)
{
	return api_error(r, 404, ERR_BILL_NOT_FOUND, NULL, "no bill %s", id);
}

static int
method_not_found(struct req *r, const char *id)
{
	return api_error(r, 404, ERR_PAYMENT_METHOD_NOT_FOUND, NULL,
	    "no payment method %s of the bill's user", id);
}

/* The bill the bearer may pay: 0 with its row, or the status written. */
static int
bill_or_reply(struct req *r, const struct pay_bearer *b, const char *id, PGresult **res)
{
	int rc;

	if (b->bill_id != NULL && strcmp(b->bill_id, id) != 0)
		return bill_not_found(r, id);
	if ((rc = pay_bill_find(r, id, res)) < 0)
		return api_db_error(r);
	if (rc == 0 ||
	    (b->user != NULL && strcmp(PQgetvalue(*res, 0, B_USER), b->user) != 0) ||
	    (b->link_id != NULL && strcmp(PQgetvalue(*res, 0, B_LINK), b->link_id) != 0))
		return bill_not_found(r, id);
	if (strcmp(PQgetvalue(*res, 0, B_STATUS), "PAID") == 0)
		return api_error(r, 409, ERR_BILL_ALREADY_PAID, "a PAID bill cannot be paid again",
		    "bill %s is already paid", id);
	return 0;
}

/* The method of the bill's user: 0, or the status written. */
static int
method_or_reply(struct req *r, const struct pay_bearer *b, const char *id, const char *user)
{
	const char *owner = NULL;
	int rc;

	if (b->method_id != NULL && strcmp(b->method_id, id) != 0)
		return method_not_found(r, id);
	if ((rc = pay_method_user(r, id, &owner)) < 0)
		return api_db_error(r);
	if (rc == 0 || strcmp(owner, user) != 0)
		return method_not_found(r, id);
	return 0;
}

/* The amount to pay in minor units: the body's, the pay token's, else
 * what is owed; 0 with *minor, or the 400 written. */
static int
amount_or_reply(struct req *r, const struct pay_bearer *b, long long owed, long long *minor)
{
	struct json_object *v;

	*minor = owed;
	if (b->amount_minor != NULL)
		*minor = strtoll(b->amount_minor, NULL, 10);
	if (json_object_object_get_ex(r->body, "amount_minor_units", &v)) {
		if (b->amount_minor != NULL && json_object_get_int64(v) != *minor)
			return api_field_error(r, 400, ERR_VALIDATION_ERROR, "amount_minor_units",
			    "amount_mismatch", "the amount is not the pay token's");
		*minor = json_object_get_int64(v);
	}
	if (*minor > owed)
		return api_field_error(r, 400, ERR_VALIDATION_ERROR, "amount_minor_units",
		    "out_of_range", "the amount is above what is owed on the bill");
	return 0;
}

int
pay_payments_create(struct req *r, struct json_object *out)
{
	const char *bill = json_get_str(r->body, "bill_id");
	const char *method = json_get_str(r->body, "payment_method_id");
	const char *currency = json_get_str(r->body, "currency"), *p[9];
	struct json_object *entity;
	struct pay_bearer b;
	long long minor;
	PGresult *res, *br = NULL;
	int rc;

	(void)out;
	/* Gated: after the credential and the body's shape, nothing is
	 * looked up, so the answer says nothing of the bill or the card. */
	if (!pay_execution_enabled(r->cfg))
		return api_error(r, 501, ERR_PAYMENT_EXECUTION_NOT_AVAILABLE,
		    "payments are not enabled on this deployment; add payment methods and"
		    " pay tokens meanwhile", "payment initiation is not available");
	if ((rc = pay_bearer(r, &b)) != 0 || (rc = bill_or_reply(r, &b, bill, &br)) != 0 ||
	    (rc = method_or_reply(r, &b, method, PQgetvalue(br, 0, B_USER))) != 0)
		return rc;
	if (currency != NULL && strcmp(currency, PQgetvalue(br, 0, B_CURRENCY)) != 0)
		return api_field_error(r, 400, ERR_VALIDATION_ERROR, "currency",
		    "currency_mismatch", "the currency is not the bill's");
	if ((rc = amount_or_reply(r, &b, strtoll(PQgetvalue(br, 0, B_OWED), NULL, 10),
	    &minor)) != 0)
		return rc;
	p[0] = r->client_id, p[1] = crypto_id_new(r->arena, PAY_PAY), p[2] = r->env;
	p[3] = bill, p[4] = method, p[5] = PQgetvalue(br, 0, B_USER);
	p[6] = arena_printf(r->arena, "%lld", minor);
	p[7] = PQgetvalue(br, 0, B_CURRENCY), p[8] = PQgetvalue(br, 0, B_OWED);
	if ((res = db_query(r, &stmts[P_INSERT], 9, p)) == NULL) {
		if (strcmp(db_sqlstate(r->db), "23505") == 0)
			return api_error(r, 409, ERR_PAYMENT_IN_PROGRESS,
			    "wait for its outcome (GET /v1/pay/payments/{attemptId} or the"
			    " pay.* events)", "bill %s has a payment in progress", bill);
		return api_db_error(r);
	}
	if ((entity = pay_row_json(r, res)) == NULL ||
	    jobq_add(r, PAY_JOB_PROCESS, r->client_id, r->env, p[1], NULL, 0) != 0 ||
	    events_emit(r, r->client_id, r->env, "pay.scheduled", entity, NULL) == NULL)
		return api_db_error(r);
	r->out = entity;
	return 202;
}

int
pay_payments_get(struct req *r, struct json_object *out)
{
	const char *id = req_cap(r, "attemptId"), *p[5] = { r->client_id, id, r->env };
	struct pay_bearer b;
	PGresult *res;
	int rc;

	(void)out;
	if (!crypto_id_valid(id, PAY_PAY, 0))
		return api_error(r, 404, ERR_PAYMENT_NOT_FOUND, NULL, "no payment attempt %s", id);
	if ((rc = pay_bearer(r, &b)) != 0)
		return rc;
	p[3] = b.link_id;
	p[4] = r->pay_token_id != NULL ? b.user : NULL;
	if ((res = db_query(r, &stmts[P_GET], 5, p)) == NULL)
		return api_db_error(r);
	if (PQntuples(res) != 1)
		return api_error(r, 404, ERR_PAYMENT_NOT_FOUND, NULL, "no payment attempt %s", id);
	r->out = db_json_raw(r->arena, res, 0, 0);
	return 200;
}
