#ifndef BDS_PORTAL_H
#define BDS_PORTAL_H
/*
 * The Biller Portal Protocol connector (shared PORTAL.md, docs/portal.md):
 * portal.c speaks HTTP (libcurl), portal_parse.c validates every answer.
 * The parsers are here for the unit tests (t/jobs/check_portal.c): each
 * takes a whole answer body, checks every field the connector uses (types,
 * money at the currency's exponent, ISO 4217 codes, dates, instants, enums,
 * lengths, counts), ignores unknown members, and fills arena-owned structs.
 * 0 ok; -1 with *why the JSON path of the first bad field
 * ("statements[3].amount_due", "body" for the text itself), an arena or
 * static string that holds nothing of the answer's values.
 */
#include <stddef.h>

#include "jobs/connectors/connector.h"

struct arena;

#define PORTAL_JSON_MAX		(4L << 20)	/* a JSON answer: 4 MiB */
#define PORTAL_ACCOUNTS_MAX	64
#define PORTAL_STATEMENTS_MAX	2000		/* per account and answer */
#define PORTAL_PAYMENTS_MAX	5000
#define PORTAL_ITEMS_MAX	200		/* line items of a statement */
#define PORTAL_USAGE_MAX	50
#define PORTAL_ID_MAX		128		/* ids: account, statement, payment */
#define PORTAL_TEXT_MAX		512		/* names, descriptions, prompts */
#define PORTAL_TOKEN_MAX	4096		/* session, challenge, device tokens */
#define PORTAL_MONEY_DIGITS	15		/* |minor units| < 10^15 */
#define PORTAL_QUANTITY_MAX	1e12
#define PORTAL_REVISION_MAX	1000000

/* An answer of POST /session or POST /session/mfa. */
struct portal_login {
	const char	*session;	/* NULL when challenged */
	long long	 expires_in;
	const char	*challenge_id, *mfa_type, *mfa_prompt;	/* a challenge */
	const char	*device_token;	/* mfa answers only; NULL when none */
};

/* A money string ("-12.34", "1200" at exponent 0) at exactly exponent
 * digits into minor units (money_parse), |minor| < 10^PORTAL_MONEY_DIGITS.
 * 0 ok, -1. The exponent is money_exponent's (core/money.h). */
int	 portal_money_parse(const char *s, int exponent, long long *minor);

int	 portal_parse_login(struct arena *, const char *body, size_t len, int mfa,
	    struct portal_login *out, const char **why);
int	 portal_parse_accounts(struct arena *, const char *body, size_t len,
	    struct connector_account **out, size_t *n, const char **why);
/* A statement whose balance_remaining is zero reports PAID
 * (portal_balance_zero, no paid_at); every other PENDING. */
int	 portal_parse_statements(struct arena *, const char *body, size_t len,
	    const char *account_ref, struct connector_statement **out, size_t *n,
	    const char **why);
int	 portal_parse_payments(struct arena *, const char *body, size_t len,
	    const char *account_ref, struct bills_payment **out, size_t *n, const char **why);
/* The error code of an error answer ({"error": code, ...}), NULL when the
 * body is not one. */
const char *portal_parse_error(struct arena *, const char *body, size_t len);

#endif
