#ifndef BDS_MONEY_H
#define BDS_MONEY_H
/*
 * Money: integer minor units of an ISO 4217 currency. The one table of
 * currencies and their minor-unit exponents (bds_currency_exponent() in
 * SQL answers the same for every code of it), the one parser of decimal
 * amount text into minor units, the one formatter back, and checked
 * arithmetic. No floating point anywhere.
 */
#include <stddef.h>

struct arena;

#define MONEY_EXP_MAX		4	/* CLF, UYW */
/* The exponent SQL and the formatters use for a code not in the table
 * (rows written before codes were checked): ISO 4217's common one. */
#define MONEY_EXP_FALLBACK	2
/* A written amount (money_amount_valid) stays below 10^14 major units: at
 * MONEY_EXP_MAX digits its minor units stay below 10^18. */
#define MONEY_AMOUNT_DIGITS	14

struct money_currency {
	char		 code[4];
	signed char	 exp;
};

/* The table, sorted by code: *n entries. Static storage. */
const struct money_currency *money_currencies(size_t *n);
/* The minor-unit exponent of an active ISO 4217 code; -1 when code (NULL
 * too) is not one. */
int	 money_exponent(const char *code);
/* As money_exponent, but MONEY_EXP_FALLBACK for a code not in the table:
 * what a stored amount is shown at, as in SQL. */
int	 money_exponent_shown(const char *code);

/* money_parse flags */
#define MONEY_SIGNED	0x1	/* a leading '-' is allowed */
#define MONEY_EXACT	0x2	/* exactly exp fractional digits ("12.50"; exp 0: none);
				 * otherwise '.' and 1..exp of them, or none */
/* money_parse results */
#define MONEY_OK	0
#define MONEY_ESYNTAX	(-1)	/* not a decimal as money is written */
#define MONEY_EFRAC	(-2)	/* more fractional digits than exp allows */
#define MONEY_ERANGE	(-3)	/* the minor units overflow a long long */

/*
 * Decimal text into minor units at exponent exp (0..MONEY_EXP_MAX), exactly:
 * digits without a leading zero ("0", "12", not "012", not ".5", not "+1"),
 * then optionally '.' and fractional digits as flags say; nothing else (no
 * spaces, exponents, thousands separators). *minor is written only on
 * MONEY_OK. MONEY_OK or one of the MONEY_E* codes.
 */
int	 money_parse(const char *s, int exp, unsigned flags, long long *minor);
/*
 * 1 when s is an amount as a client writes one (the VF_MONEY format): not
 * negative, at most MONEY_AMOUNT_DIGITS integer digits, at most
 * MONEY_EXP_MAX fractional ones; whether its currency allows that many is
 * the caller's check (money_parse at the currency's exponent).
 */
int	 money_amount_valid(const char *s);

/*
 * Minor units as decimal text at exponent exp (0..MONEY_EXP_MAX; otherwise
 * MONEY_EXP_FALLBACK): "-123.45", "0.0001", "12345". Into buf of size n
 * (MONEY_TEXT_MAX is always enough); returns buf, or NULL when n is too
 * small.
 */
#define MONEY_TEXT_MAX	24
char	*money_format_buf(char *buf, size_t n, long long minor, int exp);
/* The same in the arena. */
const char *money_format(struct arena *, long long minor, int exp);

/* *out = a + b, a - b: 0, or -1 on overflow (*out untouched). */
int	 money_add(long long a, long long b, long long *out);
int	 money_sub(long long a, long long b, long long *out);

#endif
