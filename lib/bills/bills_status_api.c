/*
 * The bill status lifecycle's entry points (bills_status.h): POST
 * /v1/bills/{id}/mark-paid and the operator's revert (`bdsctl bills
 * revert` prints what it answers). Each is a bills_status_move (bills.h)
 * after its own checks.
 */
#include <stdlib.h>
#include <string.h>

#include "core/arena.h"
#include "core/crypto.h"
#include "core/db.h"
#include "core/errors.h"
#include "core/json.h"
#include "core/money.h"
#include "core/req.h"
#include "core/validate.h"
#include "bills/bills.h"
#include "bills/bills_status.h"

enum bills_status_api_stmt {
	BM_BILL,
	BM_ENTITY,
	BA_CLIENT,
	BA__MAX
};

enum bm_bill_col { MB_STATUS, MB_CURRENCY, MB_OWED, MB_FUTURE, MB_LINK, MB__MAX };

static struct db_stmt stmts[BA__MAX] = {
	/* mark-paid: the bill of the key's tenant; $4 paid_at or NULL */
	[BM_BILL] = { "bills_mark_paid_bill",
	    "SELECT status, currency,"
	    " CASE WHEN amount_due_minor > 0 THEN amount_due_minor ELSE total_minor END,"
	    " $4::timestamptz > now(), coalesce(link_id, '')"
	    " FROM bills WHERE client_id = $1 AND environment = $2 AND id = $3"
	    " AND deleted_at IS NULL", 0 },
	[BM_ENTITY] = { "bills_mark_paid_entity",
	    "SELECT entity FROM bills WHERE " BILLS_BY_ID, 0 },
	[BA_CLIENT] = { "bills_revert_client",
	    "SELECT client_id FROM bills WHERE id = $1 AND deleted_at IS NULL", 0 },
};

const struct db_stmt_set bills_status_api_stmt_set = { "bills_status_api", stmts, BA__MAX };

/* ---- mark-paid ---- */

/* The earliest year a reported payment may carry: older is a typo (0001),
 * not a payment of a bill this service retrieved. */
#define BM_PAID_AT_YEAR_MIN	2000

/* paid_at (already an RFC 3339 instant, VF_DATETIME): not before 2000. */
static int
check_paid_at(struct arena *a, struct json_object **v, const char **code, const char **msg)
{
	const char *s = json_object_get_string(*v);

	(void)a;
	if (atoi(s) >= BM_PAID_AT_YEAR_MIN)	/* YYYY- leads: atoi stops at '-' */
		return 0;
	*code = "out_of_range";
	*msg = "paid_at must not be before 2000-01-01";
	return -1;
}

/* value as money is written (VF_MONEY: at most 4 fractional digits);
 * the currency's own exponent is checked against the bill's below. */
static const struct vfield money_fields[] = {
	{ "value", NULL, VT_STRING, V_REQUIRED, 1, 32, .format = VF_MONEY },
	{ "currency", NULL, VT_STRING, V_REQUIRED, .format = VF_CURRENCY },
	{ NULL }
};

const struct vfield bills_mark_paid_fields[] = {
	{ "paid_at", NULL, VT_STRING, 0, .format = VF_DATETIME, .check = check_paid_at },
	{ "amount", NULL, VT_OBJECT, 0, .fields = money_fields },
	{ NULL }
};

/*
 * The bill as mark-paid reads it: first to find its link, then again
 * once the link's sequence is locked (bills_link_lock), so what is
 * checked is what the write will see: of two calls at once, the second
 * reads the first one's PAID. 0 with *res, or the status written.
 */
static int
mark_bill_locked_or_reply(struct req *r, const char *const *p, PGresult **res)
{
	const char *id = p[2];

	if (!crypto_id_valid(id, "bill", 0))
		return api_error(r, 404, ERR_BILL_NOT_FOUND, NULL, "no bill %s", id);
	if ((*res = db_exec(r->db, r->arena, &stmts[BM_BILL], 4, p)) == NULL)
		return api_db_error(r);
	if (PQntuples(*res) == 1 && PQgetvalue(*res, 0, MB_LINK)[0] != '\0' &&
	    (bills_link_lock(r, r->client_id, PQgetvalue(*res, 0, MB_LINK)) == NULL ||
	    (*res = db_exec(r->db, r->arena, &stmts[BM_BILL], 4, p)) == NULL))
		return api_db_error(r);
	if (PQntuples(*res) != 1)
		return api_error(r, 404, ERR_BILL_NOT_FOUND, NULL, "no bill %s", id);
	return 0;
}

static int
already_paid(struct req *r, const char *id)
{
	return api_error(r, 409, ERR_BILL_ALREADY_PAID, "a PAID bill cannot be marked paid again",
	    "bill %s is already paid", id);
}

/* The amount given, at the bill's currency, in minor units: 0 with *minor,
 * or the status written. */
static int
mark_amount_or_reply(struct req *r, struct json_object *amount, const char *currency,
    long long owed, long long *minor)
{
	if (!bills_is(json_get_str(amount, "currency"), currency))
		return api_field_error(r, 400, ERR_VALIDATION_ERROR, "amount.currency",
		    "currency_mismatch", "the currency is not the bill's");
	if (money_parse(json_get_str(amount, "value"), money_exponent_shown(currency), 0,
	    minor) != MONEY_OK)
		return api_field_error(r, 400, ERR_VALIDATION_ERROR, "amount.value",
		    "invalid_format", "value has more fractional digits than the"
		    " currency's minor unit");
	if (*minor == 0 || *minor > owed)
		return api_field_error(r, 400, ERR_VALIDATION_ERROR, "amount.value",
		    "out_of_range", "value is above zero and at most the amount due");
	return 0;
}

int
bills_mark_paid(struct req *r, struct json_object *out)
{
	const char *id = req_cap(r, "id"), *paid_at = json_get_str(r->body, "paid_at");
	const char *p[4] = { r->client_id, r->env, id, paid_at };
	struct json_object *amount = NULL;
	struct bills_move m = { 0 };
	long long owed, minor;
	PGresult *res = NULL;
	int rc;

	(void)out;
	if ((rc = mark_bill_locked_or_reply(r, p, &res)) != 0)
		return rc;
	if (bills_is(PQgetvalue(res, 0, MB_STATUS), "PAID"))
		return already_paid(r, id);
	if (bills_is(PQgetvalue(res, 0, MB_FUTURE), "t"))
		return api_field_error(r, 400, ERR_VALIDATION_ERROR, "paid_at", "out_of_range",
		    "paid_at is in the future");
	owed = strtoll(PQgetvalue(res, 0, MB_OWED), NULL, 10);
	minor = owed;
	if (json_object_object_get_ex(r->body, "amount", &amount) &&
	    json_object_is_type(amount, json_type_object) &&
	    (rc = mark_amount_or_reply(r, amount, PQgetvalue(res, 0, MB_CURRENCY), owed,
	    &minor)) != 0)
		return rc;
	m.change = minor >= owed ? "paid" : "partially_paid";
	m.remaining = arena_printf(r->arena, "%lld", owed - minor);
	m.paid_at = paid_at;
	m.paid_reason = "client_reported";
	if (PQgetvalue(res, 0, MB_LINK)[0] != '\0')
		m.link_id = PQgetvalue(res, 0, MB_LINK);	/* locked above */
	if ((rc = bills_status_move(r, r->client_id, id, &m)) < 0 && rc != BILLS_NO_BILL)
		return api_db_error(r);
	if (rc == BILLS_NO_BILL)
		return api_error(r, 404, ERR_BILL_NOT_FOUND, NULL, "no bill %s", id);
	if (rc == 0)
		return already_paid(r, id);
	p[1] = id;
	if ((res = db_exec(r->db, r->arena, &stmts[BM_ENTITY], 2, p)) == NULL ||
	    PQntuples(res) != 1)
		return api_db_error(r);
	r->out = db_json_raw(r->arena, res, 0, 0);
	return 200;
}

/* ---- the operator's revert ---- */

int
bills_revert_admin(const struct config *cfg, struct db *d, struct arena *a, const char *id,
    const char **why)
{
	struct bills_move m = { 0 };
	struct req r;
	const char *p[1] = { id };
	PGresult *res;
	int rc;

	if (!crypto_id_valid(id, "bill", 0)) {
		*why = arena_printf(a, "%s is not a bill id", id);
		return -1;
	}
	/* A synthetic request, so events_emit writes as it does in the API. */
	req_init_operator(&r, cfg, d, a);
	if (db_begin(d) != 0)
		goto dbfail;
	if ((res = db_exec(d, a, &stmts[BA_CLIENT], 1, p)) == NULL)
		goto dbfail;
	m.change = "status_reverted";
	m.revert_reason = "manual_admin";
	rc = PQntuples(res) == 1 ? bills_status_move(&r, PQgetvalue(res, 0, 0), id, &m) :
	    BILLS_NO_BILL;
	if (rc == -1)
		goto dbfail;
	if (rc != 1) {
		db_rollback(d);
		*why = rc == 0 ? "the bill is not PAID or PARTIALLY_PAID" : "no such bill";
		return -1;
	}
	if (db_commit(d) != 0)
		goto dbfail;
	return 0;
dbfail:
	*why = arena_printf(a, "%s", db_errmsg(d));
	db_rollback(d);
	return -1;
}
