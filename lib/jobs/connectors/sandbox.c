/*
 * The sandbox connector (DOMAIN.md "Connectors and retrieval"): fixtures
 * chosen by username, password "pass_good", MFA answer "1234". Pure code:
 * the same username and refresh count always give the same data, so a test
 * can predict every figure. The formulas (all money USD, in cents):
 *
 * Accounts. Account k (0-based) of username u: ref "sbx-<u>-<k+1>", name
 *   "Residential service <k+1>", type "residential", mask the last four
 *   digits "%04d" of (seed(u) * 7 + k) % 10000 where seed(u) = sum of
 *   the bytes of u % 1000, service address "<100+k> Sandbox Lane,
 *   Springfield". user_multi has 3 accounts, every other fixture 1.
 *
 * Statements, newest first, i = 0, 1, ... n-1 (n = 12; user_many 1000;
 *   user_empty 0): statement i covers calendar month M(i) = September 2026
 *   minus i months: period_start the 1st, period_end the last day of M(i),
 *   statement_date the 1st of the next month, due_date the 21st of the
 *   next month; ref and bill_number "<account ref>-<YYYY-MM of M(i)>".
 *   Energy E(i) = 400 + (seed(u) + 37 i + 11 k) % 300 kWh.
 *   Line items: "Energy charge" usage = 15 * E(i), quantity E(i) kWh;
 *   "Service charge" fee = 1200; "Sales tax" tax = (energy + 1200) * 5 / 100
 *   (integer division); E(-1) = E(0). current_charges = the sum of the
 *   items; usage [{electricity, E(i), kWh}]. has_document 1.
 *   The statement's figures (docs/DECISIONS.md "A bill's money"), oldest
 *   first: previous_balance = statement i+1's amount_due, payments_received
 *   = what its observed payment paid (0 for the oldest), amount_due =
 *   previous_balance - payments_received + current_charges, total =
 *   amount_due; balance (balance_remaining) = amount_due less what was paid
 *   of it. Every statement is paid in full before the next, so amount_due =
 *   current_charges unless said below.
 *   Status: i = 0 PENDING (balance = amount_due, paid_* NULL); i >= 1 PAID
 *   (balance 0, paid_at the 15th of the month after M(i) 12:00:00Z, before
 *   the due date, paid_reason portal_payment_observed).
 *   Payments: one per statement paid by an observed payment (paid_reason
 *   portal_payment_observed; a portal_balance_zero statement has none),
 *   ref "<statement ref>-pay", statement_ref the statement's, amount the
 *   amount paid (amount_due - balance), paid_at as the statement's, status
 *   "posted", newest first.
 *
 * Fixtures (refresh = the link's refreshes before this retrieval):
 *   user_good      the above.
 *   user_mfa       login answers MFA_REQUIRED (type "code"); mfa "1234" ->
 *                  OK, anything else MFA_FAILED; then as user_good.
 *   user_multi     3 accounts, each as user_good.
 *   user_empty     1 account, no statements, no payments.
 *   user_many      1,000 statements.
 *   user_locked    login ACCOUNT_LOCKED.
 *   user_expiring  as user_good; statements at refresh >= 1: EXPIRED, until
 *                  update mode repairs the link (then as user_good).
 *   user_rejects_later  as user_good; at refresh >= 1: INVALID_CREDENTIALS,
 *                  until update mode repairs the link.
 *   user_degraded  login OK; statements DEGRADED at every retrieval.
 *   user_paid      refresh >= 1: statement 0 PAID, balance 0, paid_reason
 *                  portal_balance_zero, paid_at as the formula's.
 *   user_partial   refresh >= 1: statement 0 PARTIALLY_PAID: paid
 *                  amount_due / 2, balance the rest, paid_reason
 *                  portal_payment_observed; a posted payment of total / 2.
 *   user_reverted  refresh 1: as user_paid. refresh >= 2: a new newest
 *                  statement for October 2026 (i = -1, PENDING) whose
 *                  previous_balance is statement 0's amount due, no
 *                  payments received, and amount_due (and total) its own
 *                  charges + that balance; statement 0 still as at
 *                  refresh 1 (the portal shows it PAID, balance zero, and
 *                  no payment): the service's reconciliation finds the
 *                  balance carried and reverts it (status_reverted
 *                  next_statement_shows_balance).
 *   user_insights  as user_good, but statement 0 has E(0) tripled (a usage
 *                  spike and a bill far above its median), its "Energy
 *                  charge" item twice (a duplicate charge) and a "Late
 *                  payment fee" of 1500 (fee) no earlier statement has.
 *   anything else, or another password: INVALID_CREDENTIALS.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/arena.h"
#include "jobs/connectors/connector.h"

#define SBX_PASSWORD	"pass_good"
#define SBX_MFA_ANSWER	"1234"
#define SBX_MONTHS	12
#define SBX_MANY	1000
/* September 2026 as months since year 0 (month 0-based) */
#define SBX_NEWEST	(2026 * 12 + 8)
#define SBX_FEE		1200
#define SBX_LATE_FEE	1500
#define SBX_CENTS_KWH	15

enum sbx_fixture {
	SBX_GOOD, SBX_MFA, SBX_MULTI, SBX_EMPTY, SBX_MANY_F, SBX_LOCKED, SBX_EXPIRING,
	SBX_REJECTS_LATER, SBX_DEGRADED, SBX_PAID, SBX_PARTIAL, SBX_REVERTED,
	SBX_INSIGHTS, SBX__MAX
};

static const char *const fixture_names[SBX__MAX] = {
	[SBX_GOOD] = "user_good", [SBX_MFA] = "user_mfa", [SBX_MULTI] = "user_multi",
	[SBX_EMPTY] = "user_empty", [SBX_MANY_F] = "user_many",
	[SBX_LOCKED] = "user_locked", [SBX_EXPIRING] = "user_expiring",
	[SBX_REJECTS_LATER] = "user_rejects_later", [SBX_DEGRADED] = "user_degraded",
	[SBX_PAID] = "user_paid", [SBX_PARTIAL] = "user_partial",
	[SBX_REVERTED] = "user_reverted", [SBX_INSIGHTS] = "user_insights",
};

struct sbx_state {
	enum sbx_fixture f;
	int		 seed;
	int		 ready;		/* logged in (and past MFA) */
};

static int
fixture_of(const char *username)
{
	int i;

	for (i = 0; i < SBX__MAX; i++)
		if (strcmp(fixture_names[i], username) == 0)
			return i;
	return -1;
}

static int
seed_of(const char *u)
{
	unsigned sum = 0;

	for (; *u != '\0'; u++)
		sum += (unsigned char)*u;
	return (int)(sum % 1000);
}

static enum connector_status
sbx_login(struct arena *a, struct connector_session *s, const char *username,
    const char *password)
{
	struct sbx_state *st;
	int f;

	s->priv = NULL;
	s->username = NULL;
	s->mfa_type = s->mfa_prompt = s->mfa_state = NULL;
	if (username == NULL || password == NULL || (f = fixture_of(username)) < 0 ||
	    strcmp(password, SBX_PASSWORD) != 0)
		return CONN_INVALID_CREDENTIALS;
	if (f == SBX_LOCKED)
		return CONN_ACCOUNT_LOCKED;
	st = arena_alloc(a, sizeof(*st));
	st->f = (enum sbx_fixture)f;
	st->seed = seed_of(username);
	st->ready = f != SBX_MFA;
	s->username = arena_printf(a, "%s", username);
	s->priv = st;
	if (!st->ready) {
		s->mfa_type = "code";
		s->mfa_prompt = "Enter the code we sent to your phone (sandbox: 1234)";
		return CONN_MFA_REQUIRED;
	}
	return CONN_OK;
}

static enum connector_status
sbx_mfa(struct arena *a, struct connector_session *s, const char *answer)
{
	struct sbx_state *st = s->priv;

	(void)a;
	if (st == NULL)
		return CONN_INVALID_CREDENTIALS;
	if (st->ready)
		return CONN_OK;
	if (answer == NULL || strcmp(answer, SBX_MFA_ANSWER) != 0)
		return CONN_MFA_FAILED;
	st->ready = 1;
	s->mfa_type = s->mfa_prompt = NULL;
	return CONN_OK;
}

static int
naccounts(const struct sbx_state *st)
{
	return st->f == SBX_MULTI ? 3 : 1;
}

static enum connector_status
sbx_accounts(struct arena *a, struct connector_session *s,
    struct connector_account **out, size_t *n)
{
	struct sbx_state *st = s->priv;
	struct connector_account *acc;
	int k, na;

	*out = NULL;
	*n = 0;
	if (st == NULL || !st->ready)
		return CONN_INVALID_CREDENTIALS;
	na = naccounts(st);
	acc = arena_alloc(a, (size_t)na * sizeof(*acc));
	for (k = 0; k < na; k++) {
		acc[k].ref = arena_printf(a, "sbx-%s-%d", s->username, k + 1);
		acc[k].name = arena_printf(a, "Residential service %d", k + 1);
		acc[k].type = "residential";
		acc[k].mask = arena_printf(a, "%04d", (st->seed * 7 + k) % 10000);
		acc[k].service_address = arena_printf(a, "%d Sandbox Lane, Springfield",
		    100 + k);
	}
	*out = acc;
	*n = (size_t)na;
	return CONN_OK;
}

/* The account index of ref ("sbx-<u>-<k+1>"), -1 when not one of s's. */
static int
account_index(const struct connector_session *s, const char *ref)
{
	const struct sbx_state *st = s->priv;
	size_t ul = strlen(s->username);
	int k;

	if (ref == NULL || strncmp(ref, "sbx-", 4) != 0 ||
	    strncmp(ref + 4, s->username, ul) != 0 || ref[4 + ul] != '-')
		return -1;
	k = atoi(ref + 5 + ul) - 1;
	return k >= 0 && k < naccounts(st) ? k : -1;
}

static int
days_in(int y, int mo)
{
	static const int d[12] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };

	if (mo == 2 && ((y % 4 == 0 && y % 100 != 0) || y % 400 == 0))
		return 29;
	return d[mo - 1];
}

static struct bills_money
usd(long long minor)
{
	struct bills_money m = { minor, "USD" };

	return m;
}

static void
item(struct bills_line_item *it, const char *desc, const char *cat,
    long long minor, double qty, const char *unit)
{
	memset(it, 0, sizeof(*it));
	it->description = desc;
	it->category = cat;
	it->amount = usd(minor);
	if (unit != NULL) {
		it->quantity = qty;
		it->has_quantity = 1;
		it->unit = unit;
	}
}

/* Energy of statement i of account k. */
static long long
energy(const struct sbx_state *st, int i, int k)
{
	long long e = 400 + ((st->seed + 37 * (i < 0 ? 0 : i) + 11 * k) % 300);

	if (st->f == SBX_INSIGHTS && i == 0)
		e *= 3;
	return e;
}

/* Fill statement i (-1: the month after the newest) of account k: figures,
 * dates, items, usage, status PENDING. */
static void
statement(struct arena *a, const struct sbx_state *st, const char *acct, int i, int k,
    struct bills_statement *b)
{
	int m = SBX_NEWEST - i, y = m / 12, mo = m % 12 + 1;
	int ny = (m + 1) / 12, nmo = (m + 1) % 12 + 1;
	long long e = energy(st, i, k), charge = e * SBX_CENTS_KWH, tax, total;
	int extra = st->f == SBX_INSIGHTS && i == 0;
	size_t n = 0;

	memset(b, 0, sizeof(*b));
	b->ref = arena_printf(a, "%s-%04d-%02d", acct, y, mo);
	b->bill_number = b->ref;
	b->account_ref = acct;
	b->status = "PENDING";
	b->period_start = arena_printf(a, "%04d-%02d-01", y, mo);
	b->period_end = arena_printf(a, "%04d-%02d-%02d", y, mo, days_in(y, mo));
	b->statement_date = arena_printf(a, "%04d-%02d-01", ny, nmo);
	b->due_date = arena_printf(a, "%04d-%02d-21", ny, nmo);
	b->items = arena_alloc(a, 5 * sizeof(*b->items));
	item(&b->items[n++], "Energy charge", "usage", charge, (double)e, "kWh");
	if (extra)
		item(&b->items[n++], "Energy charge", "usage", charge, (double)e, "kWh");
	item(&b->items[n++], "Service charge", "fee", SBX_FEE, 0, NULL);
	if (extra)
		item(&b->items[n++], "Late payment fee", "fee", SBX_LATE_FEE, 0, NULL);
	tax = (charge + SBX_FEE) * 5 / 100;
	item(&b->items[n++], "Sales tax", "tax", tax, 0, NULL);
	b->nitems = n;
	total = charge * (extra ? 2 : 1) + SBX_FEE + (extra ? SBX_LATE_FEE : 0) + tax;
	b->current_charges = usd(total);
	b->has_figures = 1;
	b->has_balance = 1;
	b->usage = arena_alloc(a, sizeof(*b->usage));
	b->usage[0].type = "electricity";
	b->usage[0].unit = "kWh";
	b->usage[0].quantity = (double)e;
	b->nusage = 1;
	b->has_document = 1;
}

/* Paid (paid of its amount due): PAID when all of it, else PARTIALLY_PAID. */
static void
set_paid(struct arena *a, struct bills_statement *b, long long paid, const char *reason)
{
	b->status = paid >= b->amount_due.minor ? "PAID" : "PARTIALLY_PAID";
	b->balance = usd(b->amount_due.minor - paid);
	/* the 15th of the statement's month, at noon UTC: before its due date */
	b->paid_at = arena_printf(a, "%.8s15T12:00:00Z", b->statement_date);
	b->paid_reason = reason;
}

/* What an observed payment paid of b (the sandbox's payments list). */
static long long
observed_paid(const struct bills_statement *b)
{
	if (b->paid_reason == NULL || strcmp(b->paid_reason, "portal_payment_observed") != 0)
		return 0;
	return b->amount_due.minor - b->balance.minor;
}

/* Every statement of account k at refresh, newest first (arena). */
static size_t
all_statements(struct arena *a, const struct connector_session *s, int k, int refresh,
    struct bills_statement **out)
{
	const struct sbx_state *st = s->priv;
	const char *acct = arena_printf(a, "sbx-%s-%d", s->username, k + 1);
	int count = st->f == SBX_EMPTY ? 0 : st->f == SBX_MANY_F ? SBX_MANY : SBX_MONTHS;
	int first = st->f == SBX_REVERTED && refresh >= 2 ? -1 : 0;
	struct bills_statement *b;
	size_t n;
	int i;

	*out = NULL;
	if (count == 0)
		return 0;
	n = (size_t)(count - first);
	b = arena_alloc(a, n * sizeof(*b));
	/* oldest first: each statement carries the one before it (its amount
	 * due as the previous balance, what was paid of it as payments) */
	for (i = count - 1; i >= first; i--) {
		struct bills_statement *c = &b[i - first], *older = i + 1 < count ? c + 1 : NULL;
		long long prev = older != NULL ? older->amount_due.minor : 0;
		long long recv = older != NULL ? observed_paid(older) : 0;

		statement(a, st, acct, i, k, c);
		c->previous_balance = usd(prev);
		c->payments_received = usd(recv);
		c->amount_due = usd(prev - recv + c->current_charges.minor);
		c->total = c->amount_due;
		c->balance = c->amount_due;
		if (i >= 1)
			set_paid(a, c, c->amount_due.minor, "portal_payment_observed");
		/* statement 0 at a later refresh; user_reverted: it reads paid,
		 * balance zero and no payment, while the new one carries it */
		else if (i == 0 && refresh >= 1 && (st->f == SBX_PAID || st->f == SBX_REVERTED))
			set_paid(a, c, c->amount_due.minor, "portal_balance_zero");
		else if (i == 0 && refresh >= 1 && st->f == SBX_PARTIAL)
			set_paid(a, c, c->amount_due.minor / 2, "portal_payment_observed");
	}
	*out = b;
	return n;
}

/* The failures some fixtures answer with at retrieval. */
static enum connector_status
retrieval_status(const struct connector_session *s, const struct connector_query *q)
{
	const struct sbx_state *st = s->priv;

	if (st == NULL || !st->ready)
		return CONN_INVALID_CREDENTIALS;
	if (st->f == SBX_DEGRADED)
		return CONN_DEGRADED;
	/* until update mode repairs the link: then it retrieves again */
	if (st->f == SBX_EXPIRING && q->refresh >= 1 && q->repairs == 0)
		return CONN_EXPIRED;
	if (st->f == SBX_REJECTS_LATER && q->refresh >= 1 && q->repairs == 0)
		return CONN_INVALID_CREDENTIALS;
	return CONN_OK;
}

static enum connector_status
sbx_statements(struct arena *a, struct connector_session *s, const char *account_ref,
    const struct connector_query *q, struct connector_statement **out, size_t *n)
{
	struct bills_statement *b;
	struct connector_statement *cs;
	enum connector_status rc;
	size_t i;
	int k;

	*out = NULL;
	*n = 0;
	if ((rc = retrieval_status(s, q)) != CONN_OK)
		return rc;
	if ((k = account_index(s, account_ref)) < 0)
		return CONN_UNAVAILABLE;
	*n = all_statements(a, s, k, q->refresh, &b);
	cs = arena_alloc(a, (*n + 1) * sizeof(*cs));
	for (i = 0; i < *n; i++) {
		memset(&cs[i], 0, sizeof(cs[i]));
		cs[i].b = b[i];
		cs[i].balance = b[i].balance;
		cs[i].structured = 1;
		cs[i].document = b[i].has_document;
	}
	*out = cs;
	return CONN_OK;
}

static enum connector_status
sbx_payments(struct arena *a, struct connector_session *s, const char *account_ref,
    const struct connector_query *q, struct bills_payment **out, size_t *n)
{
	struct bills_statement *st;
	struct bills_payment *p;
	enum connector_status rc;
	size_t ns, i, np = 0;
	int k;

	*out = NULL;
	*n = 0;
	if ((rc = retrieval_status(s, q)) != CONN_OK)
		return rc;
	if ((k = account_index(s, account_ref)) < 0)
		return CONN_UNAVAILABLE;
	ns = all_statements(a, s, k, q->refresh, &st);
	p = arena_alloc(a, (ns + 1) * sizeof(*p));
	for (i = 0; i < ns; i++) {
		if (observed_paid(&st[i]) == 0)
			continue;
		p[np].ref = arena_printf(a, "%s-pay", st[i].ref);
		p[np].account_ref = st[i].account_ref;
		p[np].statement_ref = st[i].ref;
		p[np].paid_at = st[i].paid_at;
		p[np].amount = usd(observed_paid(&st[i]));
		p[np].status = "posted";
		np++;
	}
	*out = p;
	*n = np;
	return CONN_OK;
}

/* No document function: the retrieval stores the PDFs the sandbox
 * renders (sandbox_pdf.c). */
const struct connector connector_sandbox = {
	"sandbox", sbx_login, sbx_mfa, sbx_accounts, sbx_statements, sbx_payments, NULL,
	sandbox_pdf_render
};
