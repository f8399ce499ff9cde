/*
 * Money (money.h): the ISO 4217 table, the decimal parser and formatter,
 * checked arithmetic in minor units.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "core/arena.h"
#include "core/money.h"

/*
 * The active ISO 4217 codes with their minor-unit exponents (the list of
 * 2024; X-codes without minor units, metals and test codes are not money a
 * bill is in). Sorted for bsearch. sql/085_money.sql gives every one of
 * them the same exponent (t/e2e/check_e2e_schema.c compares them).
 */
static const struct money_currency currencies[] = {
	{ "AED", 2 }, { "AFN", 2 }, { "ALL", 2 }, { "AMD", 2 }, { "ANG", 2 }, { "AOA", 2 },
	{ "ARS", 2 }, { "AUD", 2 }, { "AWG", 2 }, { "AZN", 2 }, { "BAM", 2 }, { "BBD", 2 },
	{ "BDT", 2 }, { "BGN", 2 }, { "BHD", 3 }, { "BIF", 0 }, { "BMD", 2 }, { "BND", 2 },
	{ "BOB", 2 }, { "BRL", 2 }, { "BSD", 2 }, { "BTN", 2 }, { "BWP", 2 }, { "BYN", 2 },
	{ "BZD", 2 }, { "CAD", 2 }, { "CDF", 2 }, { "CHF", 2 }, { "CLF", 4 }, { "CLP", 0 },
	{ "CNY", 2 }, { "COP", 2 }, { "CRC", 2 }, { "CUP", 2 }, { "CVE", 2 }, { "CZK", 2 },
	{ "DJF", 0 }, { "DKK", 2 }, { "DOP", 2 }, { "DZD", 2 }, { "EGP", 2 }, { "ERN", 2 },
	{ "ETB", 2 }, { "EUR", 2 }, { "FJD", 2 }, { "FKP", 2 }, { "GBP", 2 }, { "GEL", 2 },
	{ "GHS", 2 }, { "GIP", 2 }, { "GMD", 2 }, { "GNF", 0 }, { "GTQ", 2 }, { "GYD", 2 },
	{ "HKD", 2 }, { "HNL", 2 }, { "HTG", 2 }, { "HUF", 2 }, { "IDR", 2 }, { "ILS", 2 },
	{ "INR", 2 }, { "IQD", 3 }, { "IRR", 2 }, { "ISK", 0 }, { "JMD", 2 }, { "JOD", 3 },
	{ "JPY", 0 }, { "KES", 2 }, { "KGS", 2 }, { "KHR", 2 }, { "KMF", 0 }, { "KPW", 2 },
	{ "KRW", 0 }, { "KWD", 3 }, { "KYD", 2 }, { "KZT", 2 }, { "LAK", 2 }, { "LBP", 2 },
	{ "LKR", 2 }, { "LRD", 2 }, { "LSL", 2 }, { "LYD", 3 }, { "MAD", 2 }, { "MDL", 2 },
	{ "MGA", 2 }, { "MKD", 2 }, { "MMK", 2 }, { "MNT", 2 }, { "MOP", 2 }, { "MRU", 2 },
	{ "MUR", 2 }, { "MVR", 2 }, { "MWK", 2 }, { "MXN", 2 }, { "MYR", 2 }, { "MZN", 2 },
	{ "NAD", 2 }, { "NGN", 2 }, { "NIO", 2 }, { "NOK", 2 }, { "NPR", 2 }, { "NZD", 2 },
	{ "OMR", 3 }, { "PAB", 2 }, { "PEN", 2 }, { "PGK", 2 }, { "PHP", 2 }, { "PKR", 2 },
	{ "PLN", 2 }, { "PYG", 0 }, { "QAR", 2 }, { "RON", 2 }, { "RSD", 2 }, { "RUB", 2 },
	{ "RWF", 0 }, { "SAR", 2 }, { "SBD", 2 }, { "SCR", 2 }, { "SDG", 2 }, { "SEK", 2 },
	{ "SGD", 2 }, { "SHP", 2 }, { "SLE", 2 }, { "SOS", 2 }, { "SRD", 2 }, { "SSP", 2 },
	{ "STN", 2 }, { "SVC", 2 }, { "SYP", 2 }, { "SZL", 2 }, { "THB", 2 }, { "TJS", 2 },
	{ "TMT", 2 }, { "TND", 3 }, { "TOP", 2 }, { "TRY", 2 }, { "TTD", 2 }, { "TWD", 2 },
	{ "TZS", 2 }, { "UAH", 2 }, { "UGX", 0 }, { "USD", 2 }, { "UYI", 0 }, { "UYU", 2 },
	{ "UYW", 4 }, { "UZS", 2 }, { "VED", 2 }, { "VES", 2 }, { "VND", 0 }, { "VUV", 0 },
	{ "WST", 2 }, { "XAF", 0 }, { "XCD", 2 }, { "XOF", 0 }, { "XPF", 0 }, { "YER", 2 },
	{ "ZAR", 2 }, { "ZMW", 2 }, { "ZWG", 2 },
};

#define NCURRENCIES	(sizeof(currencies) / sizeof(currencies[0]))

const struct money_currency *
money_currencies(size_t *n)
{
	*n = NCURRENCIES;
	return currencies;
}

static int
currency_cmp(const void *k, const void *e)
{
	return strcmp(k, ((const struct money_currency *)e)->code);
}

int
money_exponent(const char *code)
{
	const struct money_currency *hit;

	if (code == NULL || strlen(code) != 3)
		return -1;
	hit = bsearch(code, currencies, NCURRENCIES, sizeof(currencies[0]), currency_cmp);
	return hit != NULL ? hit->exp : -1;
}

int
money_exponent_shown(const char *code)
{
	int e = money_exponent(code);

	return e >= 0 ? e : MONEY_EXP_FALLBACK;
}

static int
is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* *v = *v * 10 + d without overflow (v is never negative here). */
static int
push_digit(unsigned long long *v, int d, unsigned long long limit)
{
	if (*v > (limit - (unsigned long long)d) / 10)
		return -1;
	*v = *v * 10 + (unsigned long long)d;
	return 0;
}

int
money_parse(const char *s, int exp, unsigned flags, long long *minor)
{
	/* a negative amount may reach LLONG_MIN, a positive one LLONG_MAX */
	unsigned long long v = 0, limit = (unsigned long long)LLONG_MAX;
	const char *p = s, *int_start;
	int neg = 0, frac = 0, erange = 0;

	if (s == NULL || exp < 0 || exp > MONEY_EXP_MAX)
		return MONEY_ESYNTAX;
	if (*p == '-' && (flags & MONEY_SIGNED)) {
		neg = 1;
		limit += 1;
		p++;
	}
	int_start = p;
	for (; is_digit(*p); p++)
		erange |= push_digit(&v, *p - '0', limit);
	/* one integer digit at least, no leading zeros ("007.00") */
	if (p == int_start || (*int_start == '0' && p - int_start > 1))
		return MONEY_ESYNTAX;
	if (*p == '.') {
		const char *f = ++p;

		for (; is_digit(*p); p++, frac++)
			if (frac < exp)
				erange |= push_digit(&v, *p - '0', limit);
		if (p == f || *p != '\0')
			return MONEY_ESYNTAX;
		if (frac > exp)
			return (flags & MONEY_EXACT) && exp == 0 ? MONEY_ESYNTAX : MONEY_EFRAC;
	}
	if (*p != '\0')
		return MONEY_ESYNTAX;
	if ((flags & MONEY_EXACT) && frac != exp)
		return MONEY_ESYNTAX;
	for (; frac < exp; frac++)
		erange |= push_digit(&v, 0, limit);
	if (erange)
		return MONEY_ERANGE;
	*minor = neg ? (long long)(0ULL - v) : (long long)v;
	return MONEY_OK;
}

int
money_amount_valid(const char *s)
{
	static const long long limit = 1000000000000000000LL;	/* 10^(14+4) */
	long long v;

	return money_parse(s, MONEY_EXP_MAX, 0, &v) == MONEY_OK && v < limit;
}

char *
money_format_buf(char *buf, size_t n, long long minor, int exp)
{
	char tmp[MONEY_TEXT_MAX];
	unsigned long long v = minor < 0 ? 0ULL - (unsigned long long)minor :
	    (unsigned long long)minor;
	size_t i = sizeof(tmp), len;
	int d = 0;

	if (exp < 0 || exp > MONEY_EXP_MAX)
		exp = MONEY_EXP_FALLBACK;
	tmp[--i] = '\0';
	/* digits from the right: the fraction, '.', then at least one more */
	do {
		if (d == exp && exp > 0)
			tmp[--i] = '.';
		tmp[--i] = (char)('0' + v % 10);
		v /= 10;
		d++;
	} while (v > 0 || d <= exp);
	if (minor < 0)
		tmp[--i] = '-';
	len = sizeof(tmp) - i;
	if (buf == NULL || n < len)
		return NULL;
	memcpy(buf, tmp + i, len);
	return buf;
}

const char *
money_format(struct arena *a, long long minor, int exp)
{
	char *buf = arena_alloc(a, MONEY_TEXT_MAX);

	return money_format_buf(buf, MONEY_TEXT_MAX, minor, exp);
}

int
money_add(long long a, long long b, long long *out)
{
	long long r;

	if (__builtin_add_overflow(a, b, &r))
		return -1;
	*out = r;
	return 0;
}

int
money_sub(long long a, long long b, long long *out)
{
	long long r;

	if (__builtin_sub_overflow(a, b, &r))
		return -1;
	*out = r;
	return 0;
}
