#ifndef BDS_PORTAL_PROPS_H
#define BDS_PORTAL_PROPS_H
/*
 * What every portal answer parser promises, whatever the bytes: shared by
 * the property test in check_portal.c (seeded mutations, in scripts/test)
 * and the libFuzzer target t/fuzz/fuzz_portal.c (scripts/fuzz portal).
 *
 * portal_props_run() parses body with the parser `which` names, sets *taken
 * to whether it took the answer, and returns NULL when the outcome keeps
 * every promise, or what it broke:
 *  - the answer is 0 (taken) or -1 (refused), nothing else;
 *  - a refusal names a path (why) and hands out nothing (NULL, 0);
 *  - a taken answer holds only what the limits allow: counts within the
 *    caps, ids of 1..PORTAL_ID_MAX bytes without control characters and
 *    unique in their answer, currencies with an exponent, money under
 *    10^15 minor units, the account asked for, statuses and categories of
 *    their enums, dates as YYYY-MM-DD (a service period whole and in
 *    order), instants as UTC to the microsecond.
 */
#include <stddef.h>
#include <string.h>

#include "core/arena.h"
#include "core/money.h"
#include "jobs/connectors/portal.h"

enum portal_props_parser {
	PP_LOGIN, PP_LOGIN_MFA, PP_ACCOUNTS, PP_STATEMENTS, PP_PAYMENTS, PP_ERROR,
	PP_COUNT
};

#define PP_ACCOUNT	"ac-props-1"

static int
pp_text(const char *s, size_t max)
{
	size_t n;

	if (s == NULL || (n = strlen(s)) == 0 || n > max)
		return 0;
	for (; *s != '\0'; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return 0;
	return 1;
}

/* absent, or text of at most max bytes (empty allowed) */
static int
pp_opt_text(const char *s, size_t max)
{
	return s == NULL || *s == '\0' || pp_text(s, max);
}

static int
pp_money(const struct bills_money *m)
{
	return m->currency != NULL && money_exponent(m->currency) >= 0 &&
	    m->minor < 1000000000000000LL && m->minor > -1000000000000000LL;
}

static int
pp_digits(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] < '0' || s[i] > '9')
			return 0;
	return 1;
}

/* YYYY-MM-DD at s (s has at least 10 bytes) */
static int
pp_ymd(const char *s)
{
	return pp_digits(s, 4) && s[4] == '-' && pp_digits(s + 5, 2) && s[7] == '-' &&
	    pp_digits(s + 8, 2);
}

static int
pp_date(const char *s)
{
	return s != NULL && strlen(s) == 10 && pp_ymd(s);
}

/* YYYY-MM-DDTHH:MM:SS.ffffffZ */
static int
pp_instant(const char *s)
{
	return s != NULL && strlen(s) == 27 && pp_ymd(s) && s[10] == 'T' &&
	    pp_digits(s + 11, 2) && s[13] == ':' && pp_digits(s + 14, 2) && s[16] == ':' &&
	    pp_digits(s + 17, 2) && s[19] == '.' && pp_digits(s + 20, 6) && s[26] == 'Z';
}

static int
pp_oneof(const char *s, const char *const *set)
{
	if (s == NULL)
		return 0;
	for (; *set != NULL; set++)
		if (strcmp(s, *set) == 0)
			return 1;
	return 0;
}

/* ids unique within the answer: n is at most a few thousand */
#define PP_UNIQUE(arr, n, field) do {					\
	for (size_t i_ = 0; i_ < (n); i_++)				\
		for (size_t j_ = i_ + 1; j_ < (n); j_++)		\
			if (strcmp((arr)[i_].field, (arr)[j_].field) == 0) \
				return #field " repeated";		\
} while (0)

static const char *
pp_statements(const struct connector_statement *st, size_t n)
{
	static const char *const statuses[] = { "PENDING", "PAID", "PARTIALLY_PAID", NULL };
	static const char *const categories[] = { "usage", "fee", "tax", "credit",
	    "adjustment", "other", NULL };

	if (n > PORTAL_STATEMENTS_MAX)
		return "too many statements";
	for (size_t i = 0; i < n; i++) {
		const struct bills_statement *b = &st[i].b;

		if (!pp_text(b->ref, PORTAL_ID_MAX))
			return "statement id";
		if (b->account_ref == NULL || strcmp(b->account_ref, PP_ACCOUNT) != 0)
			return "statement account";
		if (!pp_oneof(b->status, statuses))
			return "statement status";
		if (!pp_date(b->statement_date) || (b->due_date != NULL && !pp_date(b->due_date)))
			return "statement dates";
		/* a service period is optional, whole, and in order */
		if ((b->period_start == NULL) != (b->period_end == NULL) ||
		    (b->period_start != NULL && (!pp_date(b->period_start) ||
		    !pp_date(b->period_end) || strcmp(b->period_start, b->period_end) > 0)))
			return "statement service period";
		if (b->paid_at != NULL && !pp_instant(b->paid_at))
			return "statement paid_at";
		if (!pp_opt_text(b->bill_number, PORTAL_TEXT_MAX))
			return "statement bill_number";
		if (b->revision < 0 || b->revision > PORTAL_REVISION_MAX)
			return "statement revision";
		if (st[i].structured && (!pp_money(&b->amount_due) || !pp_money(&b->total) ||
		    !pp_money(&st[i].balance)))
			return "statement money";
		if (b->nitems > PORTAL_ITEMS_MAX || (b->nitems > 0 && b->items == NULL))
			return "statement line items";
		if (b->nusage > PORTAL_USAGE_MAX || (b->nusage > 0 && b->usage == NULL))
			return "statement usage";
		for (size_t k = 0; k < b->nitems; k++) {
			const struct bills_line_item *it = &b->items[k];

			if (!pp_text(it->description, PORTAL_TEXT_MAX) ||
			    !pp_oneof(it->category, categories) || !pp_money(&it->amount) ||
			    !pp_opt_text(it->unit, PORTAL_TEXT_MAX) ||
			    (it->has_quantity && !(it->quantity >= -PORTAL_QUANTITY_MAX &&
			    it->quantity <= PORTAL_QUANTITY_MAX)))
				return "line item";
		}
		for (size_t k = 0; k < b->nusage; k++)
			if (b->usage[k].type == NULL ||
			    !(b->usage[k].quantity >= -PORTAL_QUANTITY_MAX &&
			    b->usage[k].quantity <= PORTAL_QUANTITY_MAX))
				return "usage";
	}
	PP_UNIQUE(st, n, b.ref);
	return NULL;
}

static const char *
pp_payments(const struct bills_payment *p, size_t n)
{
	static const char *const statuses[] = { "posted", "reversed", NULL };

	if (n > PORTAL_PAYMENTS_MAX)
		return "too many payments";
	for (size_t i = 0; i < n; i++) {
		if (!pp_text(p[i].ref, PORTAL_ID_MAX))
			return "payment id";
		if (p[i].account_ref == NULL || strcmp(p[i].account_ref, PP_ACCOUNT) != 0)
			return "payment account";
		if (!pp_instant(p[i].paid_at))
			return "payment paid_at";
		if (p[i].statement_ref != NULL && !pp_text(p[i].statement_ref, PORTAL_ID_MAX))
			return "payment statement_id";
		if (p[i].status != NULL && !pp_oneof(p[i].status, statuses))
			return "payment status";
		if (!pp_money(&p[i].amount))
			return "payment amount";
	}
	PP_UNIQUE(p, n, ref);
	return NULL;
}

static const char *
pp_accounts(const struct connector_account *acc, size_t n)
{
	if (n > PORTAL_ACCOUNTS_MAX)
		return "too many accounts";
	for (size_t i = 0; i < n; i++)
		if (!pp_text(acc[i].ref, PORTAL_ID_MAX) ||
		    !pp_opt_text(acc[i].name, PORTAL_TEXT_MAX) ||
		    !pp_opt_text(acc[i].mask, PORTAL_TEXT_MAX) ||
		    !pp_opt_text(acc[i].service_address, PORTAL_TEXT_MAX))
			return "account";
	PP_UNIQUE(acc, n, ref);
	return NULL;
}

static const char *
pp_login(const struct portal_login *l)
{
	if (l->session != NULL)
		return pp_text(l->session, PORTAL_TOKEN_MAX) ? NULL : "session token";
	if (!pp_text(l->challenge_id, PORTAL_TOKEN_MAX))
		return "neither a session nor a challenge";
	return pp_opt_text(l->mfa_prompt, PORTAL_TEXT_MAX) ? NULL : "mfa prompt";
}

/* The refusal half: -1 with a path and nothing handed out. */
static const char *
pp_refused(int rc, const char *why, const void *out, size_t n)
{
	if (rc != -1)
		return "neither 0 nor -1";
	if (why == NULL || *why == '\0')
		return "refused without a path";
	if (out != NULL || n != 0)
		return "refused with results";
	return NULL;
}

static const char *
portal_props_run(struct arena *a, enum portal_props_parser which, const char *body,
    size_t len, int *taken)
{
	const char *why = NULL, *broken = NULL;
	const void *got = NULL;		/* what a list parser handed out */
	size_t n = 7;
	int rc;

	switch (which) {
	case PP_LOGIN:
	case PP_LOGIN_MFA: {
		struct portal_login l;

		memset(&l, 0, sizeof(l));
		rc = portal_parse_login(a, body, len, which == PP_LOGIN_MFA, &l, &why);
		n = 0;
		broken = rc == 0 ? pp_login(&l) : NULL;
		break;
	}
	case PP_ACCOUNTS: {
		struct connector_account *acc = (void *)1;

		rc = portal_parse_accounts(a, body, len, &acc, &n, &why);
		got = acc;
		broken = rc == 0 ? pp_accounts(acc, n) : NULL;
		break;
	}
	case PP_STATEMENTS: {
		struct connector_statement *st = (void *)1;

		rc = portal_parse_statements(a, body, len, PP_ACCOUNT, &st, &n, &why);
		got = st;
		broken = rc == 0 ? pp_statements(st, n) : NULL;
		break;
	}
	case PP_PAYMENTS: {
		struct bills_payment *p = (void *)1;

		rc = portal_parse_payments(a, body, len, PP_ACCOUNT, &p, &n, &why);
		got = p;
		broken = rc == 0 ? pp_payments(p, n) : NULL;
		break;
	}
	case PP_ERROR: {
		const char *code = portal_parse_error(a, body, len);

		*taken = code != NULL;
		return code == NULL || pp_text(code, PORTAL_TEXT_MAX) ? NULL : "error code";
	}
	default:
		*taken = 0;
		return "no such parser";
	}
	*taken = rc == 0;
	if (rc == 0)
		return why != NULL ? "taken with a path" : broken;
	return pp_refused(rc, why, got, n);
}

#endif
