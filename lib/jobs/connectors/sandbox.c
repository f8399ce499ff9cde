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
 *   user_empty 0), dated from the basis day B (the link's creation day,
 *   UTC; the sandbox_basis_day setting when set; 2026-10-15 when the query
 *   names none): statements fall on day ds = max(1, day(B) - 14) of a
 *   month, the newest in B's month, so it is on or before B (current) and
 *   due 20 days later, on or after B (due soon). Statement i covers month
 *   M(i) = the month before B's minus i months: period_start day ds of
 *   M(i), period_end the day before its statement_date, statement_date day
 *   ds of the next month, due_date statement_date + 20 days; ref and
 *   bill_number "<account ref>-<YYYY-MM of M(i)>". With B = 2026-10-15:
 *   M(0) September 2026, statement 1 October, due 21 October.
 *   Energy E(i) = 500 + (seed(u) + 37 i + 11 k) % 100 kWh: it wanders within
 *   20 % month to month, as a household's does (no insight but new_biller).
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
 *   (balance 0, paid_at 14 days after the statement date at 12:00:00Z,
 *   before the due date and the next statement, paid_reason
 *   portal_payment_observed). A statement paid at a later refresh (below)
 *   is paid then too, but not after B.
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
 *                  statement for the month after M(0) (i = -1, PENDING,
 *                  dated a month after B's: the refreshes stand for
 *                  time passing) whose
 *                  previous_balance is statement 0's amount due, no
 *                  payments received, and amount_due (and total) its own
 *                  charges + that balance; statement 0 still as at
 *                  refresh 1 (the portal shows it PAID, balance zero, and
 *                  no payment): the service's reconciliation finds the
 *                  balance carried and reverts it (status_reverted
 *                  next_statement_shows_balance).
 *   user_insights  as user_good, but statement 0 has E(0) tripled (a usage
 *                  spike, a line item spike and a bill far above its
 *                  median), its "Energy charge" item twice (a duplicate
 *                  charge), a "Late payment fee" of 1500 (fee) no earlier
 *                  statement has, and is due 2 days after B (unpaid, due
 *                  soon: an overdue risk); its first statement is the
 *                  user's first bill of the biller (a new biller). Every
 *                  insight type of lib/insights/insights_rules.h.
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
/* the basis day when the retrieval names none (unit tests): the newest
 * statement covers September 2026, dated 1 October, due 21 October */
#define SBX_BASIS	"2026-10-15"
#define SBX_PAY_DAYS	14	/* statement date to payment */
#define SBX_DUE_DAYS	20	/* statement date to due date */
#define SBX_FEE		1200
#define SBX_LATE_FEE	1500
#define SBX_INSIGHTS_DUE 2	/* user_insights' statement 0: B to its due date */
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
	long long e = 500 + ((st->seed + 37 * (i < 0 ? 0 : i) + 11 * k) % 100);

	if (st->f == SBX_INSIGHTS && i == 0)
		e *= 3;
	return e;
}

/* Days since 1970-01-01 of a civil date, and back (proleptic Gregorian). */
static long
days_of(int y, int m, int d)
{
	long era, yoe, doy, doe;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = y - era * 400;
	doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

static const char *
day_text(struct arena *a, long z)
{
	long era, doe, yoe, y, doy, mp, d, m;

	z += 719468;
	era = (z >= 0 ? z : z - 146096) / 146097;
	doe = z - era * 146097;
	yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	y = yoe + era * 400;
	doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	mp = (5 * doy + 2) / 153;
	d = doy - (153 * mp + 2) / 5 + 1;
	m = mp + (mp < 10 ? 3 : -9);
	return arena_printf(a, "%04ld-%02ld-%02ld", y + (m <= 2), m, d);
}

/*
 * The calendar of a history, from its basis day B (the link's creation
 * day; q->basis): statements on day ds = max(1, day(B) - 14) of each month,
 * the newest in B's month (so on or before B: the newest is current, due
 * SBX_DUE_DAYS later, on or after B: due soon), each covering the month
 * before it from day ds.
 */
struct sbx_dates {
	int	 newest;	/* the newest statement's covered month, months
				 * since year 0 (0-based month) */
	int	 ds;		/* the statements' day of the month */
	long	 basis;		/* B, days since 1970-01-01 */
};

static void
dates_of(const char *basis, struct sbx_dates *d)
{
	int y, m, day;
	char tail;

	if (basis == NULL || sscanf(basis, "%4d-%2d-%2d%c", &y, &m, &day, &tail) != 3 ||
	    m < 1 || m > 12 || day < 1 || day > days_in(y, m))
		(void)sscanf(SBX_BASIS, "%4d-%2d-%2d", &y, &m, &day);
	d->newest = y * 12 + (m - 1) - 1;
	d->ds = day > 15 ? day - 14 : 1;
	d->basis = days_of(y, m, day);
}

/* Fill statement i (-1: the month after the newest) of account k: figures,
 * dates, items, usage, status PENDING. */
static void
statement(struct arena *a, const struct sbx_state *st, const struct sbx_dates *d,
    const char *acct, int i, int k, struct bills_statement *b)
{
	int m = d->newest - i, y = m / 12, mo = m % 12 + 1;
	int ny = (m + 1) / 12, nmo = (m + 1) % 12 + 1;
	long sd = days_of(ny, nmo, d->ds);
	long long e = energy(st, i, k), charge = e * SBX_CENTS_KWH, tax, total;
	int extra = st->f == SBX_INSIGHTS && i == 0;
	size_t n = 0;

	memset(b, 0, sizeof(*b));
	b->ref = arena_printf(a, "%s-%04d-%02d", acct, y, mo);
	b->bill_number = b->ref;
	b->account_ref = acct;
	b->status = "PENDING";
	b->period_start = day_text(a, days_of(y, mo, d->ds));
	b->period_end = day_text(a, sd - 1);
	b->statement_date = day_text(a, sd);
	b->due_date = day_text(a, extra ? d->basis + SBX_INSIGHTS_DUE : sd + SBX_DUE_DAYS);
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

/* Paid (paid of its amount due): PAID when all of it, else PARTIALLY_PAID;
 * SBX_PAY_DAYS after its statement date at noon UTC (before its due date),
 * but not after the basis day d->basis. */
static void
set_paid(struct arena *a, const struct sbx_dates *d, struct bills_statement *b,
    long long paid, const char *reason)
{
	int y, m, day;
	long on;

	b->status = paid >= b->amount_due.minor ? "PAID" : "PARTIALLY_PAID";
	b->balance = usd(b->amount_due.minor - paid);
	(void)sscanf(b->statement_date, "%4d-%2d-%2d", &y, &m, &day);
	on = days_of(y, m, day) + SBX_PAY_DAYS;
	b->paid_at = arena_printf(a, "%sT12:00:00Z", day_text(a, on < d->basis ? on : d->basis));
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
all_statements(struct arena *a, const struct connector_session *s, int k,
    const struct connector_query *q, struct bills_statement **out)
{
	int refresh = q->refresh;
	struct sbx_dates d;

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
	dates_of(q->basis, &d);
	n = (size_t)(count - first);
	b = arena_alloc(a, n * sizeof(*b));
	/* oldest first: each statement carries the one before it (its amount
	 * due as the previous balance, what was paid of it as payments) */
	for (i = count - 1; i >= first; i--) {
		struct bills_statement *c = &b[i - first], *older = i + 1 < count ? c + 1 : NULL;
		long long prev = older != NULL ? older->amount_due.minor : 0;
		long long recv = older != NULL ? observed_paid(older) : 0;

		statement(a, st, &d, acct, i, k, c);
		c->previous_balance = usd(prev);
		c->payments_received = usd(recv);
		c->amount_due = usd(prev - recv + c->current_charges.minor);
		c->total = c->amount_due;
		c->balance = c->amount_due;
		if (i >= 1)
			set_paid(a, &d, c, c->amount_due.minor, "portal_payment_observed");
		/* statement 0 at a later refresh; user_reverted: it reads paid,
		 * balance zero and no payment, while the new one carries it */
		else if (i == 0 && refresh >= 1 && (st->f == SBX_PAID || st->f == SBX_REVERTED))
			set_paid(a, &d, c, c->amount_due.minor, "portal_balance_zero");
		else if (i == 0 && refresh >= 1 && st->f == SBX_PARTIAL)
			set_paid(a, &d, c, c->amount_due.minor / 2, "portal_payment_observed");
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
	*n = all_statements(a, s, k, q, &b);
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
	ns = all_statements(a, s, k, q, &st);
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
