#ifndef BDS_BILLS_STATUS_H
#define BDS_BILLS_STATUS_H
/*
 * The bill status lifecycle (SPEC.md "Bill status", DOMAIN.md "Bills and
 * sync" Status) above the bill store: observed payments (payment.observed)
 * and their match, the nightly reconciliation (bills_status.c), POST
 * /v1/bills/{id}/mark-paid and `bdsctl bills revert` (bills_status_api.c).
 * Every status move is one bills_status_move (bills.h), which says what
 * bill.updated carries.
 */
#include <stddef.h>

#include "core/validate.h"

struct arena;
struct config;
struct db;
struct req;
struct json_object;
struct bills_link;
struct bills_payment;
struct db_stmt_set;

/* The reconciliation reverts a bill only this long after its status moved
 * to PAID or PARTIALLY_PAID (SPEC.md Limits: "Bill PAID reversal window"). */
#define BILLS_REVERT_WINDOW	"24 hours"

/*
 * Store one observed payment of a link's account (upsert by the biller's
 * payment ref; id "obp_" + a keyed hash of client, link and ref, so stable
 * across retries) in the caller's transaction, which holds the link's
 * sequence lock (bills_link_lock). A new payment is matched to
 * its bill (by statement ref, else by the amount/date rule of
 * docs/DECISIONS.md): a PENDING bill goes PAID or PARTIALLY_PAID
 * (portal_payment_observed), any other gets match_status MATCHED (folded
 * into an earlier write of this transaction: since_seq is the link's last
 * number before the retrieval); then payment.observed (data.object =
 * payments_json) once. A payment turned reversed reverts its bill
 * (status_reverted observed_payment_reversed, match UNMATCHED). 1 new, 0
 * known, -1 database failure.
 */
int	 bills_payment_store(struct req *r, const struct bills_link *l,
	    const char *account_id, const struct bills_payment *p, long long since_seq);

/*
 * The reconciliation of one link (job kind "reconcile"): every bill PAID or
 * PARTIALLY_PAID within BILLS_REVERT_WINDOW whose account's next statement
 * still carries its total in previous_balance, with no posted payment
 * covering it, goes back to PENDING (status_reverted
 * next_statement_shows_balance), once per newer statement. The number of
 * bills reverted, -1 on failure.
 */
int	 bills_reconcile_link(struct req *r, const char *client_id, const char *link_id);
/* The nightly sweep (bdsctl jobs): queue a reconcile job for every active
 * link with bills that had none in the last 23 hours. Queued, -1. */
long long bills_reconcile_enqueue(const struct config *, struct db *, struct arena *);

/* POST /v1/bills/{id}/mark-paid: the bill entity, 404 BILL_NOT_FOUND, 409
 * BILL_ALREADY_PAID, 400 on a bad amount or a paid_at in the future. */
extern const struct vfield bills_mark_paid_fields[];
int	 bills_mark_paid(struct req *, struct json_object *);

/* bdsctl bills revert ID: status_reverted manual_admin from PAID or
 * PARTIALLY_PAID, in its own transaction. 0 ok, -1 with *why (what failed,
 * arena or static; the caller prints it). */
int	 bills_revert_admin(const struct config *, struct db *, struct arena *, const char *id,
	    const char **why);

extern const struct db_stmt_set bills_status_stmt_set;		/* bills_status.c */
extern const struct db_stmt_set bills_status_api_stmt_set;	/* bills_status_api.c */

#endif
