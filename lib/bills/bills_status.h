#ifndef BDS_BILLS_STATUS_H
#define BDS_BILLS_STATUS_H
/*
 * The bill status lifecycle (SPEC.md "Bill status", DOMAIN.md "Bills and
 * sync" Status): every move of a bill's status, its match to an observed
 * payment and its corrected figures is one write that takes the link's next
 * change number and emits one bill.updated whose data.object is id, object
 * "bill", user_id, biller_id, status, change and the change's own fields:
 *   paid, partially_paid  paid_reason, paid_at
 *   status_reverted       previous_status (paid|partially_paid),
 *                         revert_reason, reverted_at
 *   statement_refreshed   (none)
 *   match_status          match_status (MATCHED|UNMATCHED), matched_payment_ref
 * Also here: observed payments (payment.observed), the nightly
 * reconciliation, POST /v1/bills/{id}/mark-paid and `bdsctl bills revert`.
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

#define BILLS_NO_BILL	(-2)

struct bills_move {
	const char	*change;	/* paid, partially_paid, status_reverted,
					 * statement_refreshed, match_status */
	const char	*paid_at;	/* paid, partially_paid; NULL: now */
	const char	*paid_reason;
	const char	*revert_reason;	/* status_reverted */
	const char	*reverted_by;	/* status_reverted: the newer bill, or NULL */
	const char	*match_status;	/* match_status; with another change: set
					 * in the same write; NULL: unchanged */
	const char	*matched_payment_ref;
	const char	*seq;		/* the number the write already took, or NULL */
	int		 fold;		/* match_status only: a bill written after
					 * since_seq (announced in this transaction)
					 * records the match without number or event */
	long long	 since_seq;
	const char	*link_id;	/* the bill's link, whose sequence the caller
					 * has locked (bills_link_lock) in this
					 * transaction; NULL: looked up and locked */
};

/*
 * Apply m to the client's bill (not deleted) in the caller's transaction:
 * lock the link's sequence, check the move applies (paid: not PAID;
 * partially_paid: not PAID; status_reverted: PAID or PARTIALLY_PAID;
 * match_status: the match differs; statement_refreshed: always), take the
 * next number (or m->seq), update and emit bill.updated. 1 moved, 0 not
 * applicable (nothing written), BILLS_NO_BILL, -1 database failure.
 */
int	 bills_status_move(struct req *r, const char *client_id, const char *bill_id,
	    const struct bills_move *m);

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
 * PARTIALLY_PAID; prints what it did. 0 ok, -1 (message printed). */
int	 bills_revert_admin(const struct config *, struct db *, struct arena *, const char *id);

extern const struct db_stmt_set bills_status_stmt_set;

#endif
