#ifndef BDS_BILLS_H
#define BDS_BILLS_H
/*
 * Bills: the store the connectors' statements land in (bills_store.c), in
 * the schema the bills sync reads (sql/013_jobs_bills.sql). Money is
 * integer minor units with an ISO 4217 currency.
 */
#include <stddef.h>
#include <string.h>

#include "core/module.h"

struct arena;
struct json_object;
struct req;
struct db_stmt_set;

/*
 * Inside statement text (core/db.h's DB_ROW_CHECK): a link's bills by the
 * link ($2), and one of them by its statement ref ($3), with the tenant
 * ($1) checked on the rows. Link ids are unique on their own, so the
 * unique index (link_id, statement_ref) finds them whatever the planner
 * knows (docs/DECISIONS.md "Plan-proof statements"). A link's observed
 * payments are found the same way (link_id, payment_ref).
 */
#define BILLS_OF_LINK		"link_id = $2 AND " DB_ROW_CHECK("client_id = $1")
#define BILLS_BY_STATEMENT	BILLS_OF_LINK " AND statement_ref = $3"
/* One bill by its id ($2, bills_by_id), the tenant ($1) checked on it. */
#define BILLS_BY_ID		DB_BY_ID("", "")

struct bills_money { long long minor; const char *currency; };	/* ISO 4217 */

struct bills_line_item {
	const char	*description, *category, *unit;	/* category: usage|fee|tax|credit|adjustment|other */
	struct bills_money amount;
	double		 quantity;
	int		 has_quantity;
};

struct bills_usage { const char *type, *unit; double quantity; };

/* One retrieved statement; all strings arena-owned. */
struct bills_statement {
	const char	*ref;			/* the biller's statement id: stable */
	const char	*account_ref;
	const char	*status;		/* PENDING, PAID, PARTIALLY_PAID */
	/* the statement's figures (docs/DECISIONS.md "A bill's money"):
	 * amount_due = previous_balance - payments_received + current_charges
	 * when all are given; total is amount_due */
	struct bills_money total, amount_due, previous_balance;
	struct bills_money payments_received, current_charges;	/* has_figures */
	struct bills_money balance;	/* what is still owed on it now (has_balance) */
	int		 has_figures;	/* payments_received, current_charges given */
	int		 has_balance;
	const char	*due_date, *statement_date, *period_start, *period_end; /* YYYY-MM-DD */
	const char	*bill_number, *paid_at, *paid_reason;	/* paid_* may be NULL */
	struct bills_line_item *items;
	size_t		 nitems;
	struct bills_usage *usage;
	size_t		 nusage;
	int		 has_document;
	int		 revision;		/* the biller's revision (PORTAL.md); 0: not given (1) */
	int		 withdrawn;		/* the biller withdrew it: the bill is deleted */
	const char	*sha256;		/* its document, stored already (bills_docs_put):
						 * a new bill is written with it; NULL: none */
	const char	*matched_payment_ref;	/* the posted payment of the same answer
						 * that names it last (bills_payment_store
						 * matches it): a new bill not PENDING is
						 * written matched; NULL: none */
};

struct bills_payment {
	const char	*ref, *account_ref, *paid_at, *statement_ref;	/* statement_ref may be NULL */
	const char	*status;		/* posted, reversed (NULL: posted) */
	struct bills_money amount;
};

struct bills_link {
	const char	*client_id, *environment, *link_id, *client_user_id,
			*biller_id, *biller_name;
	const char	*source;	/* a new bill's source (connector, sandbox);
					 * NULL: sandbox in the sandbox environment */
	int		 locked;	/* the caller holds the link's sequence lock
					 * (bills_link_lock) in its transaction */
};

/*
 * Store one statement of a link's account (upsert by statement ref) in the
 * caller's transaction: a new bill gets the next seq, emits bill.created
 * (data.object: id, object "bill", user_id, biller_id, status) and, when
 * created PAID, bill.updated change paid. An existing bill whose figures
 * or reported status changed gets the next seq and one bill.updated
 * (bills_status.h): a move of the status the portal reports (paid,
 * partially_paid, or status_reverted next_statement_shows_balance when it
 * reports PENDING again), else statement_refreshed when the figures or the
 * revision changed. The status moves only when the portal's report
 * changed, so a bill reverted here or marked paid by the client keeps its
 * status against the same report. A withdrawn statement is bills_withdraw;
 * a deleted one the portal lists again comes back (bill.created, its id and
 * status as they stood). An older revision than the stored one changes
 * nothing. *created = 1 when new or back. 0 ok, -1 database failure.
 */
int	 bills_store(struct req *r, const struct bills_link *l, const char *account_id,
	    const char *account_mask, const struct bills_statement *st, int *created);
/*
 * Delete a link's bill (the biller withdrew the statement) in the caller's
 * transaction: the row stays as a tombstone (deleted_at, deleted_seq =
 * changed_seq = the link's next number) and bill.deleted is emitted
 * (data.object: id, object "bill", user_id, biller_id). 1 deleted, 0
 * already deleted or not the link's, -1 database failure.
 */
int	 bills_delete(struct req *r, const char *client_id, const char *link_id,
	    const char *bill_id);
/* The statement ref of a link withdrawn by the biller: bills_delete of
 * its bill when stored. 1 deleted, 0 nothing to delete, -1 failure. */
int	 bills_withdraw(struct req *r, const struct bills_link *l, const char *statement_ref);
/*
 * Lock the link's change sequence (the first step of every write to its
 * bills, in the caller's transaction): the last number taken, as text in
 * the arena, or NULL on failure. bills_link_next takes the next one and
 * queues the link's insights run (lib/insights) in the same transaction.
 */
const char *bills_link_lock(struct req *r, const char *client_id, const char *link_id);
const char *bills_link_next(struct req *r, const char *client_id, const char *link_id);
/* Bills of a link that are not deleted: count, -1 on failure. */
long long bills_count(struct req *r, const char *client_id, const char *link_id);

/*
 * A bill from a bill import (lib/imports; docs/DECISIONS.md "Bills from
 * imports"). The figures come as a statement (ref, total, amount_due,
 * dates, bill_number, items, the figures when has_figures, sha256: the
 * document, NULL none); its status is PENDING.
 */
struct bills_import {
	const char	*client_id, *environment, *client_user_id;
	const char	*import_id;
	const char	*biller_id;	/* the import's; NULL: the catalog biller
					 * named payee (case-insensitive, one only) */
	const char	*payee;		/* the draft's payee_name, or NULL */
	const char	*account_number; /* the draft's, or NULL: its last four
					 * characters are the mask */
	const char	*link_id;	/* a portal import's link (its bill, source
					 * connector, ref st->ref, account_id);
					 * NULL: an upload */
	const char	*account_id;
	const char	*content_type;	/* the document's: statement_type */
};

/*
 * Write the bill of an import in the caller's transaction. An upload's
 * bill joins the client user's link of the same biller when there is one
 * (not REVOKED; ACTIVE first, then the newest), on the account whose mask
 * matches the account number when exactly one does; it takes the link's
 * next change number (a sync `added` entry). Without such a link its
 * link_id is null: GET /v1/bills?client_user_id= lists it. biller_id is
 * null when neither the import nor the catalog names one (biller_name the
 * payee). source import (a portal import's: connector), import_id set,
 * statement_sha256 and statement_type the document's, bill.created
 * emitted as bills_store does. 1 created, 0 the link had a bill of that
 * statement already (*bill_id is it; nothing written), -1 failure.
 * *bill_id is an arena string; *entity (entity may be NULL) the bill as
 * GET /v1/bills/{id} shows it, arena-owned.
 */
int	 bills_import_create(struct req *r, const struct bills_import *imp,
	    const struct bills_statement *st, const char **bill_id,
	    struct json_object **entity);
/* The JSON text line items are stored as (bills_store.c), in the arena. */
const char *bills_items_json(struct arena *, const struct bills_statement *);

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
	const char	*remaining;	/* partially_paid: what is still owed, in
					 * minor units; NULL: as the source last said.
					 * paid makes it 0, status_reverted the amount
					 * due (balance_remaining) */
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
 * The bill status lifecycle's one write (bills_status_store.c; SPEC.md
 * "Bill status"): every move of a bill's status, its match to an observed
 * payment and its corrected figures takes the link's next change number
 * and emits one bill.updated whose data.object is id, object "bill",
 * user_id, biller_id, status, change and the change's own fields:
 *   paid, partially_paid  paid_reason, paid_at
 *   status_reverted       previous_status (paid|partially_paid),
 *                         revert_reason, reverted_at
 *   statement_refreshed   (none)
 *   match_status          match_status (MATCHED|UNMATCHED), matched_payment_ref
 * The lifecycle itself (payments, reconciliation, mark-paid) is
 * bills_status.h, above this store.
 *
 * Apply m to the client's bill (not deleted) in the caller's transaction:
 * lock the link's sequence, check the move applies (paid: not PAID;
 * partially_paid: not PAID; status_reverted: PAID or PARTIALLY_PAID;
 * match_status: the match differs; statement_refreshed: always), take the
 * next number (or m->seq), update and emit bill.updated. 1 moved, 0 not
 * applicable (nothing written), BILLS_NO_BILL, -1 database failure.
 */
int	 bills_status_move(struct req *r, const char *client_id, const char *bill_id,
	    const struct bills_move *m);


/* What an import's draft shows of its bill (bills_dupes.c); strings may
 * be NULL. */
struct bills_dupe_key {
	const char	*client_id, *environment, *client_user_id;
	const char	*sha;		/* the document's SHA-256; NULL: not by document */
	/* by figures when due_date, total.currency, account_number and payee
	 * or biller_id are all given */
	const char	*payee, *biller_id, *account_number, *due_date;
	struct bills_money total;
};
/*
 * A bill of the client's user (not deleted) an import may duplicate: one
 * whose statement is the same document, else one of the same payee
 * (biller_name, case-insensitive, or biller_id), account (its mask's
 * visible tail), total and due date; the oldest. Its id (arena), or NULL
 * (*err 1 on a database failure).
 */
const char *bills_duplicate(struct req *r, const struct bills_dupe_key *k, int *err);

/* a and b both set and equal: a status or code read from a row. */
static inline int
bills_is(const char *a, const char *b)
{
	return a != NULL && b != NULL && strcmp(a, b) == 0;
}

/*
 * The sync cycles client_id completed in env (a sync page answered
 * has_more false; recorded for sandbox keys only, bills_sync.c), the bills
 * those cycles delivered (created at or below a link's last completed
 * bound) and the first and last completion (ISO 8601, arena; NULL when
 * none). 0, or -1 on a database failure.
 */
struct bills_sync_stats {
	long long	 cycles, bills;
	const char	*first_at, *last_at;
};
int	 bills_sync_stats(struct req *, const char *client_id, const char *env,
	    struct bills_sync_stats *);
/* Remove what the bills keep of client_id outside its rows' cascade (the
 * links' change sequences), when the client is deleted. 0, or -1. */
int	 bills_client_forget(struct req *, const char *client_id);

extern const struct db_stmt_set bills_stmt_set;
extern const struct db_stmt_set bills_status_store_stmt_set;	/* bills_status_store.c */
extern const struct db_stmt_set bills_dupes_stmt_set;		/* bills_dupes.c */
extern const struct db_stmt_set bills_import_stmt_set;		/* bills_import.c */

/* The usage metric computed from its rows (core/module.h; bills_usage.c). */
extern const struct db_stmt_set bills_usage_stmt_set;
extern const struct module_usage bills_usage[];

#endif
