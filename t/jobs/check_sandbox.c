/*
 * The sandbox connector (lib/jobs/connectors/sandbox.c): every fixture of
 * DOMAIN.md, table-driven, against the formulas its header documents.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <check.h>

#include "core/arena.h"
#include "jobs/connectors/connector.h"
#include "tcheck.h"

static struct arena a;
static const struct connector *c;

static void
setup(void)
{
	arena_init(&a);
	c = connector_find("sandbox");
	ck_assert_ptr_nonnull(c);
}

static void
teardown(void)
{
	arena_free(&a);
}

static const struct connector_target tgt = { "blr_sandbox", "Sandbox", NULL, NULL, 0 };

/* A fresh session's login. */
static enum connector_status
login_as(const char *user, const char *pass, struct connector_session *s)
{
	connector_session_init(s, &tgt);
	return c->login(&a, s, user, pass);
}

/* A statement's money (docs/DECISIONS.md "A bill's money"): previous
 * balance - payments received + current charges = amount due = total, and
 * what is still owed follows the status. */
static void
money_holds(const struct bills_statement *b)
{
	ck_assert(b->has_figures && b->has_balance);
	ck_assert_int_eq(b->previous_balance.minor - b->payments_received.minor +
	    b->current_charges.minor, b->amount_due.minor);
	ck_assert_int_eq(b->total.minor, b->amount_due.minor);
	if (strcmp(b->status, "PAID") == 0)
		ck_assert_int_eq(b->balance.minor, 0);
	else if (strcmp(b->status, "PENDING") == 0)
		ck_assert_int_eq(b->balance.minor, b->amount_due.minor);
	else
		ck_assert(b->balance.minor > 0 && b->balance.minor < b->amount_due.minor);
}

/* The statements of an account at a refresh, as the bills they make. */
static enum connector_status
stmts(struct connector_session *s, const char *ref, int refresh, struct bills_statement **out,
    size_t *n)
{
	struct connector_query q = { .refresh = refresh };
	struct connector_statement *cs;
	enum connector_status rc = c->statements(&a, s, ref, &q, &cs, n);

	*out = arena_alloc(&a, (*n + 1) * sizeof(**out));
	for (size_t i = 0; i < *n; i++) {
		(*out)[i] = cs[i].b;
		ck_assert(cs[i].structured);
		money_holds(&cs[i].b);
		ck_assert_int_eq(cs[i].balance.minor, cs[i].b.balance.minor);
	}
	return rc;
}

static enum connector_status
pays(struct connector_session *s, const char *ref, int refresh, struct bills_payment **out,
    size_t *n)
{
	struct connector_query q = { .refresh = refresh };

	return c->payments(&a, s, ref, &q, out, n);
}

/* One fixture at one refresh: what login and retrieval answer. */
static const struct {
	const char	*user;
	int		 refresh;
	enum connector_status login, stmts;
	size_t		 accounts, bills;	/* bills per account */
	const char	*newest_status;		/* NULL: no bills */
	const char	*paid_reason;		/* of the newest */
} cases[] = {
	{ "user_good", 0, CONN_OK, CONN_OK, 1, 12, "PENDING", NULL },
	{ "user_good", 5, CONN_OK, CONN_OK, 1, 12, "PENDING", NULL },
	{ "user_mfa", 0, CONN_MFA_REQUIRED, CONN_OK, 1, 12, "PENDING", NULL },
	{ "user_multi", 0, CONN_OK, CONN_OK, 3, 12, "PENDING", NULL },
	{ "user_empty", 0, CONN_OK, CONN_OK, 1, 0, NULL, NULL },
	{ "user_many", 0, CONN_OK, CONN_OK, 1, 1000, "PENDING", NULL },
	{ "user_locked", 0, CONN_ACCOUNT_LOCKED, CONN_OK, 0, 0, NULL, NULL },
	{ "user_expiring", 0, CONN_OK, CONN_OK, 1, 12, "PENDING", NULL },
	{ "user_expiring", 1, CONN_OK, CONN_EXPIRED, 1, 0, NULL, NULL },
	{ "user_rejects_later", 0, CONN_OK, CONN_OK, 1, 12, "PENDING", NULL },
	{ "user_rejects_later", 1, CONN_OK, CONN_INVALID_CREDENTIALS, 1, 0, NULL, NULL },
	{ "user_degraded", 0, CONN_OK, CONN_DEGRADED, 1, 0, NULL, NULL },
	{ "user_paid", 0, CONN_OK, CONN_OK, 1, 12, "PENDING", NULL },
	{ "user_paid", 1, CONN_OK, CONN_OK, 1, 12, "PAID", "portal_balance_zero" },
	{ "user_partial", 1, CONN_OK, CONN_OK, 1, 12, "PARTIALLY_PAID",
	  "portal_payment_observed" },
	{ "user_reverted", 1, CONN_OK, CONN_OK, 1, 12, "PAID", "portal_balance_zero" },
	{ "user_reverted", 2, CONN_OK, CONN_OK, 1, 13, "PENDING", NULL },
	{ "user_insights", 0, CONN_OK, CONN_OK, 1, 12, "PENDING", NULL },
	{ "nobody", 0, CONN_INVALID_CREDENTIALS, CONN_OK, 0, 0, NULL, NULL },
};

/* Log in (passing MFA), or fail the test. */
static void
login(const char *user, struct connector_session *s)
{
	enum connector_status rc = login_as(user, "pass_good", s);

	if (rc == CONN_MFA_REQUIRED)
		rc = c->mfa(&a, s, "1234");
	ck_assert_int_eq(rc, CONN_OK);
}

START_TEST(fixtures)
{
	struct connector_session s;
	struct connector_account *acc;
	struct bills_statement *st;
	size_t na, n, k;

	ck_assert_int_eq(login_as(cases[_i].user, "pass_good", &s), cases[_i].login);
	if (cases[_i].login != CONN_OK && cases[_i].login != CONN_MFA_REQUIRED)
		return;
	if (cases[_i].login == CONN_MFA_REQUIRED)
		ck_assert_int_eq(c->mfa(&a, &s, "1234"), CONN_OK);
	ck_assert_int_eq(c->accounts(&a, &s, &acc, &na), CONN_OK);
	ck_assert_uint_eq(na, cases[_i].accounts);
	for (k = 0; k < na; k++) {
		ck_assert_int_eq(stmts(&s, acc[k].ref, cases[_i].refresh, &st, &n),
		    cases[_i].stmts);
		ck_assert_uint_eq(n, cases[_i].bills);
		if (n == 0)
			continue;
		ck_assert_str_eq(st[0].status, cases[_i].newest_status);
		if (cases[_i].paid_reason == NULL)
			ck_assert_ptr_null(st[0].paid_reason);
		else
			ck_assert_str_eq(st[0].paid_reason, cases[_i].paid_reason);
		/* older ones are paid, refs unique and stable */
		ck_assert_str_eq(st[n - 1].status, "PAID");
		ck_assert_str_ne(st[0].ref, st[1].ref);
	}
}
END_TEST

START_TEST(wrong_password_or_mfa_answer)
{
	struct connector_session s;

	ck_assert_int_eq(login_as("user_good", "pass_bad", &s), CONN_INVALID_CREDENTIALS);
	ck_assert_int_eq(login_as("user_locked", "nope", &s), CONN_INVALID_CREDENTIALS);
	ck_assert_int_eq(login_as("user_mfa", "pass_good", &s), CONN_MFA_REQUIRED);
	ck_assert_str_eq(s.mfa_type, "code");
	ck_assert_ptr_nonnull(s.mfa_prompt);
	ck_assert_int_eq(c->mfa(&a, &s, "0000"), CONN_MFA_FAILED);
	ck_assert_int_eq(c->mfa(&a, &s, "1234"), CONN_OK);
	ck_assert_ptr_null(connector_find("nope"));
}
END_TEST

/* user_good, predicted from the formulas alone. */
START_TEST(user_good_figures)
{
	struct connector_session s;
	struct connector_account *acc;
	struct bills_statement *st;
	struct bills_payment *p;
	size_t na, n, np, i;
	int seed = 0;
	const char *u = "user_good";
	long long e0, charge, tax;

	for (i = 0; u[i] != '\0'; i++)
		seed += (unsigned char)u[i];
	seed %= 1000;
	login(u, &s);
	ck_assert_int_eq(c->accounts(&a, &s, &acc, &na), CONN_OK);
	ck_assert_str_eq(acc[0].ref, "sbx-user_good-1");
	ck_assert_str_eq(acc[0].mask, arena_printf(&a, "%04d", (seed * 7) % 10000));
	ck_assert_int_eq(stmts(&s, acc[0].ref, 0, &st, &n), CONN_OK);
	ck_assert_uint_eq(n, 12);
	e0 = 500 + seed % 100;
	charge = e0 * 15;
	tax = (charge + 1200) * 5 / 100;
	ck_assert_str_eq(st[0].ref, "sbx-user_good-1-2026-09");
	ck_assert_str_eq(st[0].period_start, "2026-09-01");
	ck_assert_str_eq(st[0].period_end, "2026-09-30");
	ck_assert_str_eq(st[0].statement_date, "2026-10-01");
	ck_assert_str_eq(st[0].due_date, "2026-10-21");
	ck_assert_int_eq(st[0].total.minor, charge + 1200 + tax);
	ck_assert_int_eq(st[0].amount_due.minor, st[0].total.minor);
	ck_assert_str_eq(st[0].total.currency, "USD");
	ck_assert_uint_eq(st[0].nitems, 3);
	ck_assert_str_eq(st[0].items[0].description, "Energy charge");
	ck_assert_int_eq(st[0].items[0].amount.minor, charge);
	ck_assert(st[0].items[0].quantity == (double)e0);
	ck_assert_str_eq(st[0].items[2].category, "tax");
	ck_assert_uint_eq(st[0].nusage, 1);
	ck_assert(st[0].usage[0].quantity == (double)e0);
	ck_assert_int_eq(st[0].previous_balance.minor, st[1].amount_due.minor);
	ck_assert_int_eq(st[0].payments_received.minor, st[1].amount_due.minor);
	ck_assert_int_eq(st[0].current_charges.minor, st[0].total.minor);
	ck_assert_ptr_null(st[0].paid_at);
	/* the oldest: October 2025; February has 28 days in 2026 */
	ck_assert_str_eq(st[11].ref, "sbx-user_good-1-2025-10");
	ck_assert_str_eq(st[7].period_end, "2026-02-28");
	ck_assert_str_eq(st[1].paid_at, "2026-09-15T12:00:00Z");
	/* paid in full: the statement still asked for its total */
	ck_assert_int_eq(st[1].amount_due.minor, st[1].total.minor);
	ck_assert_int_eq(st[1].balance.minor, 0);
	ck_assert_int_eq(st[11].previous_balance.minor, 0);
	ck_assert_int_eq(st[11].payments_received.minor, 0);
	/* every total is the sum of its items */
	for (i = 0; i < n; i++) {
		long long sum = 0;
		size_t j;

		for (j = 0; j < st[i].nitems; j++)
			sum += st[i].items[j].amount.minor;
		ck_assert_int_eq(sum, st[i].total.minor);
	}
	/* observed payments: one per paid statement */
	ck_assert_int_eq(pays(&s, acc[0].ref, 0, &p, &np), CONN_OK);
	ck_assert_uint_eq(np, 11);
	ck_assert_str_eq(p[0].ref, "sbx-user_good-1-2026-08-pay");
	ck_assert_str_eq(p[0].statement_ref, st[1].ref);
	ck_assert_int_eq(p[0].amount.minor, st[1].total.minor);
	ck_assert_str_eq(p[0].status, "posted");
	/* deterministic: the same again */
	{
		struct bills_statement *again;
		size_t n2;

		ck_assert_int_eq(stmts(&s, acc[0].ref, 0, &again, &n2), CONN_OK);
		ck_assert_int_eq(again[5].total.minor, st[5].total.minor);
		ck_assert_str_eq(again[5].ref, st[5].ref);
	}
	/* someone else's account ref */
	ck_assert_int_eq(stmts(&s, "sbx-user_many-1", 0, &st, &n),
	    CONN_UNAVAILABLE);
}
END_TEST

START_TEST(next_refresh_fixtures)
{
	struct connector_session s;
	struct bills_statement *st, *before;
	struct bills_payment *p;
	size_t n, nb, np;

	login("user_partial", &s);
	ck_assert_int_eq(stmts(&s, "sbx-user_partial-1", 0, &before, &nb), CONN_OK);
	ck_assert_int_eq(stmts(&s, "sbx-user_partial-1", 1, &st, &n), CONN_OK);
	ck_assert_str_eq(st[0].ref, before[0].ref);	/* the same statement */
	ck_assert_int_eq(st[0].amount_due.minor, st[0].total.minor);
	ck_assert_int_eq(st[0].balance.minor, st[0].total.minor - st[0].total.minor / 2);
	ck_assert_str_eq(st[0].paid_at, "2026-10-15T12:00:00Z");
	/* the partial payment is observed: one more payment, of total / 2 */
	ck_assert_int_eq(pays(&s, "sbx-user_partial-1", 1, &p, &np), CONN_OK);
	ck_assert_uint_eq(np, 12);
	ck_assert_str_eq(p[0].statement_ref, st[0].ref);
	ck_assert_int_eq(p[0].amount.minor, st[0].total.minor / 2);
	ck_assert_str_eq(p[0].status, "posted");
	/* a zero balance is no payment */
	login("user_paid", &s);
	ck_assert_int_eq(pays(&s, "sbx-user_paid-1", 1, &p, &np), CONN_OK);
	ck_assert_uint_eq(np, 11);
	ck_assert_str_eq(p[0].ref, "sbx-user_paid-1-2026-08-pay");

	login("user_reverted", &s);
	ck_assert_int_eq(stmts(&s, "sbx-user_reverted-1", 2, &st, &n), CONN_OK);
	ck_assert_str_eq(st[0].ref, "sbx-user_reverted-1-2026-10");
	ck_assert_str_eq(st[0].status, "PENDING");
	ck_assert_str_eq(st[1].ref, "sbx-user_reverted-1-2026-09");
	/* the portal still reads September paid: the reconciliation reverts it */
	ck_assert_str_eq(st[1].status, "PAID");
	ck_assert_str_eq(st[1].paid_reason, "portal_balance_zero");
	ck_assert_int_eq(st[0].previous_balance.minor, st[1].amount_due.minor);
	ck_assert_int_eq(st[0].payments_received.minor, 0);
	ck_assert_int_eq(st[0].amount_due.minor,
	    st[0].current_charges.minor + st[1].amount_due.minor);
}
END_TEST

START_TEST(user_insights_anomalies)
{
	struct connector_session s;
	struct bills_statement *st;
	size_t n, i, energy = 0, late = 0;

	login("user_insights", &s);
	ck_assert_int_eq(stmts(&s, "sbx-user_insights-1", 0, &st, &n), CONN_OK);
	for (i = 0; i < st[0].nitems; i++) {
		energy += strcmp(st[0].items[i].description, "Energy charge") == 0;
		late += strcmp(st[0].items[i].description, "Late payment fee") == 0;
	}
	ck_assert_uint_eq(energy, 2);	/* the duplicate charge */
	ck_assert_uint_eq(late, 1);	/* the new fee */
	/* unpaid and due 2 days after the basis day (2026-10-15): an overdue risk */
	ck_assert_str_eq(st[0].status, "PENDING");
	ck_assert_str_eq(st[0].due_date, "2026-10-17");
	for (i = 1; i < n; i++) {
		ck_assert_uint_eq(st[i].nitems, 3);	/* no fee before */
		/* a spike (3 x E(0) >= 1500 kWh, earlier ones <= 599) and a
		 * bill far above every earlier one */
		ck_assert(st[0].usage[0].quantity > 1.5 * st[i].usage[0].quantity);
		ck_assert_int_gt(st[0].total.minor, 2 * st[i].total.minor);
	}
}
END_TEST

/*
 * Histories dated from the basis day (the link's creation day): the newest
 * statement is on or before it and due on or after it, within 20 days;
 * every paid one is paid before its due date, before the next statement
 * and not after the basis day; periods end the day before their statement.
 */
static const char *const bases[] = {
	"2026-11-28", "2026-03-05", "2026-10-15", "2026-12-16", "2027-01-31", "2028-02-29",
	"2028-03-01",
};

static long
day_no(const char *ymd)
{
	struct tm tm = { 0 };

	ck_assert_ptr_nonnull(strptime(ymd, "%Y-%m-%d", &tm));
	return (long)(timegm(&tm) / 86400);
}

START_TEST(dated_from_basis)
{
	static const char *const users[] = { "user_good", "user_paid", "user_partial",
		"user_reverted" };
	const char *b = bases[_i];

	for (size_t u = 0; u < sizeof(users) / sizeof(users[0]); u++) {
		struct connector_session s;
		struct connector_statement *cs;
		struct connector_query q = { .refresh = 1, .basis = b };
		size_t n, i;

		login(users[u], &s);
		ck_assert_int_eq(c->statements(&a, &s, arena_printf(&a, "sbx-%s-1", users[u]), &q,
		    &cs, &n), CONN_OK);
		ck_assert_uint_eq(n, 12);
		ck_assert_int_le(day_no(cs[0].b.statement_date), day_no(b));
		ck_assert_int_ge(day_no(cs[0].b.due_date), day_no(b));
		ck_assert_int_le(day_no(cs[0].b.due_date) - day_no(b), 20);
		for (i = 0; i < n; i++) {
			const struct bills_statement *st = &cs[i].b;

			money_holds(st);
			ck_assert_int_eq(day_no(st->period_end) + 1, day_no(st->statement_date));
			ck_assert_int_lt(day_no(st->period_start), day_no(st->period_end));
			if (i + 1 < n)	/* periods follow one another */
				ck_assert_str_eq(cs[i + 1].b.statement_date, st->period_start);
			if (st->paid_at == NULL)
				continue;
			ck_assert_int_lt(day_no(st->paid_at), day_no(st->due_date));
			ck_assert_int_le(day_no(st->paid_at), day_no(b));
			ck_assert_int_ge(day_no(st->paid_at), day_no(st->statement_date));
			if (i > 0)
				ck_assert_int_lt(day_no(st->paid_at), day_no(cs[i - 1].b.statement_date));
		}
		/* the same day, the same history */
		{
			struct connector_statement *again;
			size_t n2;

			ck_assert_int_eq(c->statements(&a, &s, arena_printf(&a, "sbx-%s-1",
			    users[u]), &q, &again, &n2), CONN_OK);
			ck_assert_str_eq(again[3].b.ref, cs[3].b.ref);
			ck_assert_str_eq(again[3].b.due_date, cs[3].b.due_date);
		}
	}
}
END_TEST

static Suite *
sandbox_suite(void)
{
	Suite *s = suite_create("sandbox");
	TCase *tc = tcase_create("fixtures");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_loop_test(tc, fixtures, 0, (int)(sizeof(cases) / sizeof(cases[0])));
	tcase_add_test(tc, wrong_password_or_mfa_answer);
	tcase_add_test(tc, user_good_figures);
	tcase_add_test(tc, next_refresh_fixtures);
	tcase_add_test(tc, user_insights_anomalies);
	tcase_add_loop_test(tc, dated_from_basis, 0, (int)(sizeof(bases) / sizeof(bases[0])));
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tcheck_run(sandbox_suite());
}
