/*
 * The sandbox processor (bds-jobs, job kind pay.process): settles one
 * SCHEDULED attempt by its amount's last two digits in minor units, so a
 * client chooses the outcome it wants to test:
 *	..01	FAILED     card_declined
 *	..02	ESCALATED  manual_review
 *	..03	FAILED     insufficient_funds
 *	..04	FAILED     processing_error
 *	other	SUCCEEDED  confirmation_number SBX-<12 characters>
 * A card expired or deleted by then fails with expired_card or
 * payment_method_deleted (its number is gone), and a bill paid or
 * deleted meanwhile (another attempt settled between this one's checks
 * and its run) with bill_already_paid or bill_unavailable, and one whose
 * amount is now above what is owed with amount_exceeds_balance: nothing is
 * ever charged twice. A success moves the bill (bills_status_move: paid, or partially_paid when
 * the amount was below what was owed, paid_reason pay_succeeded). The
 * outcome, its pay.* event and the bill's move are one transaction.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <json-c/json.h>
#include <libpq-fe.h>
#include <sodium.h>

#include "core/arena.h"
#include "core/db.h"
#include "core/jobq.h"
#include "core/json.h"
#include "core/log.h"
#include "core/req.h"
#include "bills/bills.h"
#include "events/events.h"
#include "pay/pay.h"
#include "pay/pay_card.h"
#include "pay/pay_int.h"

enum { X_LOCK, X_SETTLE, X__MAX };
static struct db_stmt stmts[X__MAX] = {
	/* the attempt, locked, with its card's expiry and its bill's owed */
	[X_LOCK] = { "pay_process_lock",
	    "SELECT a.status, a.amount_minor, a.bill_id, m.exp_year, m.exp_month,"
	    " m.deleted_at IS NOT NULL,"
	    " (SELECT " PAY_OWED("b.") " FROM bills b WHERE b.id = a.bill_id"
	    "  AND b.client_id = a.client_id AND b.deleted_at IS NULL)"
	    " FROM payment_attempts a"
	    " JOIN payment_methods m ON m.id = a.payment_method_id AND m.client_id = a.client_id"
	    " WHERE " DB_BY_ID("a.", "") " FOR UPDATE OF a" },
	/* $3 status, $4 confirmation, $5 failure code, $6 escalation reason */
	[X_SETTLE] = { "pay_process_settle",
	    "UPDATE payment_attempts AS a SET status = $3, confirmation_number = $4,"
	    " failure_code = $5, escalation_reason = $6, updated_at = now(), completed_at = now()"
	    " WHERE " DB_BY_ID("", " AND status = 'SCHEDULED'")
	    " RETURNING payment_attempt_json(a)" },
};
const struct db_stmt_set pay_process_stmt_set = { "pay_process", stmts, X__MAX };

enum { L_STATUS, L_AMOUNT, L_BILL, L_EXP_YEAR, L_EXP_MONTH, L_DELETED, L_OWED };

struct outcome {
	const char	*status, *event;
	const char	*confirmation, *code, *reason;
};

/* The outcome the amount and the card's expiry choose. */
static void
decide(struct req *r, PGresult *res, struct outcome *o)
{
	static const char alnum[] = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789";
	long long minor = strtoll(PQgetvalue(res, 0, L_AMOUNT), NULL, 10);
	time_t t = time(NULL);
	struct tm now;
	char conf[17] = "SBX-";

	memset(o, 0, sizeof(*o));
	gmtime_r(&t, &now);
	if (strcmp(PQgetvalue(res, 0, L_DELETED), "t") == 0)
		o->code = "payment_method_deleted";
	else if (PQgetisnull(res, 0, L_OWED))
		o->code = "bill_unavailable";
	else if (strtoll(PQgetvalue(res, 0, L_OWED), NULL, 10) <= 0)
		o->code = "bill_already_paid";
	else if (minor > strtoll(PQgetvalue(res, 0, L_OWED), NULL, 10))
		o->code = "amount_exceeds_balance";
	else if (pay_card_expired(atoi(PQgetvalue(res, 0, L_EXP_YEAR)),
	    atoi(PQgetvalue(res, 0, L_EXP_MONTH)), now.tm_year + 1900, now.tm_mon + 1))
		o->code = "expired_card";
	else if (minor % 100 == 1)
		o->code = "card_declined";
	else if (minor % 100 == 3)
		o->code = "insufficient_funds";
	else if (minor % 100 == 4)
		o->code = "processing_error";
	else if (minor % 100 == 2)
		o->reason = "manual_review";
	if (o->code != NULL) {
		o->status = "FAILED", o->event = "pay.failed";
		return;
	}
	if (o->reason != NULL) {
		o->status = "ESCALATED", o->event = "pay.escalated";
		return;
	}
	for (int i = 4; i < 16; i++)
		conf[i] = alnum[randombytes_uniform(sizeof(alnum) - 1)];
	o->status = "SUCCEEDED", o->event = "pay.succeeded";
	o->confirmation = arena_strdup(r->arena, conf);
}

/* A success's move of the bill; 0, or -1 on a database failure. */
static int
bill_paid(struct req *r, PGresult *res)
{
	struct bills_move m = { 0 };
	long long minor = strtoll(PQgetvalue(res, 0, L_AMOUNT), NULL, 10), owed;
	int rc;

	owed = strtoll(PQgetvalue(res, 0, L_OWED), NULL, 10);
	m.change = minor >= owed ? "paid" : "partially_paid";
	m.remaining = arena_printf(r->arena, "%lld", minor >= owed ? 0 : owed - minor);
	m.paid_reason = "pay_succeeded";
	rc = bills_status_move(r, r->client_id, PQgetvalue(res, 0, L_BILL), &m);
	/* 0: already PAID by other means; the payment still succeeded */
	return rc < 0 && rc != BILLS_NO_BILL ? -1 : 0;
}

enum jobs_outcome
pay_process_apply(struct req *r, struct jobs_job *job)
{
	const char *p[6] = { r->client_id, job->subject_id };
	struct json_object *entity;
	struct outcome o;
	PGresult *res, *lock;

	if ((lock = db_query(r, &stmts[X_LOCK], 2, p)) == NULL)
		goto dbfail;
	if (PQntuples(lock) != 1 || strcmp(PQgetvalue(lock, 0, L_STATUS), "SCHEDULED") != 0)
		return JOBS_DONE;	/* settled already (or gone with its client) */
	decide(r, lock, &o);
	p[2] = o.status, p[3] = o.confirmation, p[4] = o.code, p[5] = o.reason;
	if ((res = db_query(r, &stmts[X_SETTLE], 6, p)) == NULL ||
	    (entity = pay_row_json(r, res)) == NULL)
		goto dbfail;
	/* the spec's names on the event: code of a failure, reason of an escalation */
	if (o.code != NULL)
		json_set_str(entity, "code", o.code);
	if (o.reason != NULL)
		json_set_str(entity, "reason", o.reason);
	if (events_emit(r, r->client_id, r->env, o.event, entity, NULL) == NULL)
		goto dbfail;
	if (o.confirmation != NULL && bill_paid(r, lock) != 0)
		goto dbfail;
	return JOBS_DONE;
dbfail:
	job->error = "database failure";
	return JOBS_RETRY;
}
