/*
 * lib/core/money.c: the ISO 4217 table, parsing decimal text into minor
 * units (exact and loose, signed and not, the range of a long long),
 * formatting back, the written-amount check and checked arithmetic.
 */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include <check.h>

#include "core/arena.h"
#include "core/money.h"
#include "tarena.h"
#include "tcheck.h"

#define N(x) (sizeof(x) / sizeof((x)[0]))

/* ---- the table ---- */

static const struct { const char *code; int exp; } exps[] = {
	{ "USD", 2 }, { "EUR", 2 }, { "GBP", 2 }, { "AED", 2 }, { "ZWG", 2 }, { "MXN", 2 },
	{ "JPY", 0 }, { "KRW", 0 }, { "ISK", 0 }, { "CLP", 0 }, { "XOF", 0 }, { "UYI", 0 },
	{ "VND", 0 }, { "PYG", 0 },
	{ "BHD", 3 }, { "KWD", 3 }, { "OMR", 3 }, { "JOD", 3 }, { "IQD", 3 }, { "LYD", 3 },
	{ "TND", 3 },
	{ "CLF", 4 }, { "UYW", 4 },
	{ "usd", -1 }, { "XXX", -1 }, { "ZZZ", -1 }, { "XAU", -1 }, { "US", -1 },
	{ "USDD", -1 }, { "", -1 }, { "U$D", -1 }, { "USD ", -1 },
};

START_TEST(exponent)
{
	ck_assert_msg(money_exponent(exps[_i].code) == exps[_i].exp, "%s", exps[_i].code);
	ck_assert_int_eq(money_exponent_shown(exps[_i].code),
	    exps[_i].exp >= 0 ? exps[_i].exp : MONEY_EXP_FALLBACK);
}
END_TEST

/* sorted (bsearch needs it), no duplicates, every code found, exponents 0..4 */
START_TEST(table)
{
	size_t n, i;
	const struct money_currency *c = money_currencies(&n);

	ck_assert_uint_ge(n, 150);
	ck_assert_int_eq(money_exponent(NULL), -1);
	for (i = 0; i < n; i++) {
		ck_assert_uint_eq(strlen(c[i].code), 3);
		ck_assert(c[i].exp >= 0 && c[i].exp <= MONEY_EXP_MAX);
		ck_assert_int_eq(money_exponent(c[i].code), c[i].exp);
		if (i > 0)
			ck_assert_msg(strcmp(c[i - 1].code, c[i].code) < 0, "%s", c[i].code);
	}
}
END_TEST

/* ---- parse ---- */

#define SE	(MONEY_SIGNED | MONEY_EXACT)

static const struct {
	const char	*s;
	int		 exp;
	unsigned	 flags;
	long long	 minor;
} parse_valid[] = {
	/* exact, signed: as the portal writes money */
	{ "123.45", 2, SE, 12345 }, { "0.00", 2, SE, 0 }, { "-5.00", 2, SE, -500 },
	{ "-0.01", 2, SE, -1 }, { "9120", 0, SE, 9120 }, { "0", 0, SE, 0 },
	{ "12.345", 3, SE, 12345 }, { "1.2345", 4, SE, 12345 },
	{ "999999999999999", 0, SE, 999999999999999LL },
	{ "9999999999999.99", 2, SE, 999999999999999LL },
	/* UYW: four digits, so 1.0000 is ten thousand minor units */
	{ "1.0000", 4, SE, 10000 }, { "-0.0001", 4, SE, -1 },
	/* loose: fewer fractional digits are padded, none at all too */
	{ "12", 2, 0, 1200 }, { "12.5", 2, 0, 1250 }, { "12.50", 2, 0, 1250 },
	{ "1", 4, 0, 10000 }, { "1.2", 4, 0, 12000 }, { "0.0001", 4, 0, 1 },
	{ "12", 0, 0, 12 }, { "0", 3, 0, 0 }, { "-1.5", 2, MONEY_SIGNED, -150 },
	/* the ends of a long long */
	{ "9223372036854775807", 0, 0, LLONG_MAX },
	{ "92233720368547758.07", 2, MONEY_EXACT, LLONG_MAX },
	{ "922337203685477.5807", 4, 0, LLONG_MAX },
	{ "-9223372036854775808", 0, MONEY_SIGNED, LLONG_MIN },
	{ "-922337203685477.5808", 4, SE, LLONG_MIN },
};

START_TEST(parse_ok)
{
	long long v = -7;

	ck_assert_msg(money_parse(parse_valid[_i].s, parse_valid[_i].exp, parse_valid[_i].flags,
	    &v) == MONEY_OK, "%s", parse_valid[_i].s);
	ck_assert_int_eq(v, parse_valid[_i].minor);
}
END_TEST

static const struct {
	const char	*s;
	int		 exp;
	unsigned	 flags;
	int		 rc;
} parse_invalid[] = {
	{ "12.3", 2, SE, MONEY_ESYNTAX }, { "12", 2, SE, MONEY_ESYNTAX },
	{ "12.345", 2, SE, MONEY_EFRAC }, { "12.345", 2, 0, MONEY_EFRAC },
	{ "1.23456", 4, 0, MONEY_EFRAC }, { "12.0", 0, 0, MONEY_EFRAC },
	{ "12.34", 0, SE, MONEY_ESYNTAX },
	{ ".50", 2, 0, MONEY_ESYNTAX }, { "1.", 2, 0, MONEY_ESYNTAX }, { "5.", 0, 0, MONEY_ESYNTAX },
	{ "01.00", 2, SE, MONEY_ESYNTAX }, { "05", 2, 0, MONEY_ESYNTAX }, { "00", 0, SE, MONEY_ESYNTAX },
	{ "+1.00", 2, SE, MONEY_ESYNTAX }, { "1,00", 2, SE, MONEY_ESYNTAX },
	{ "1e2", 0, SE, MONEY_ESYNTAX }, { "1e1", 2, 0, MONEY_ESYNTAX }, { "", 2, 0, MONEY_ESYNTAX },
	{ "-", 2, SE, MONEY_ESYNTAX }, { "--1.00", 2, SE, MONEY_ESYNTAX },
	{ " 1.00", 2, SE, MONEY_ESYNTAX }, { "1.00 ", 2, SE, MONEY_ESYNTAX },
	{ "1.00\n", 2, SE, MONEY_ESYNTAX }, { "0x10", 0, SE, MONEY_ESYNTAX },
	{ "\xd9\xa1\xd9\xa2.00", 2, SE, MONEY_ESYNTAX }, { "NaN", 2, 0, MONEY_ESYNTAX },
	{ "Infinity", 0, 0, MONEY_ESYNTAX }, { "1.0O", 2, SE, MONEY_ESYNTAX },
	{ "1.2.3", 2, 0, MONEY_ESYNTAX },
	/* a sign only where the caller allows one */
	{ "-1", 2, 0, MONEY_ESYNTAX }, { "-1.00", 2, MONEY_EXACT, MONEY_ESYNTAX },
	{ "-0", 0, 0, MONEY_ESYNTAX },
	/* exponents outside ISO 4217's */
	{ "12.34", 5, 0, MONEY_ESYNTAX }, { "12.34", -1, 0, MONEY_ESYNTAX },
	{ NULL, 2, 0, MONEY_ESYNTAX },
	/* overflow, in the integer part or once scaled */
	{ "9223372036854775808", 0, 0, MONEY_ERANGE },
	{ "-9223372036854775809", 0, MONEY_SIGNED, MONEY_ERANGE },
	{ "92233720368547758.08", 2, 0, MONEY_ERANGE },
	{ "922337203685477.5808", 4, 0, MONEY_ERANGE },
	{ "922337203685478", 4, 0, MONEY_ERANGE },
	{ "99999999999999999999999999999", 0, 0, MONEY_ERANGE },
};

START_TEST(parse_bad)
{
	long long v = -7;

	ck_assert_msg(money_parse(parse_invalid[_i].s, parse_invalid[_i].exp,
	    parse_invalid[_i].flags, &v) == parse_invalid[_i].rc, "%s at %d",
	    parse_invalid[_i].s ? parse_invalid[_i].s : "(null)", parse_invalid[_i].exp);
	ck_assert_int_eq(v, -7);	/* untouched */
}
END_TEST

/* ---- written amounts (VF_MONEY) ---- */

static const struct { const char *s; int ok; } amounts[] = {
	{ "0", 1 }, { "12", 1 }, { "12.5", 1 }, { "12.50", 1 }, { "1.2345", 1 },
	{ "99999999999999.9999", 1 }, { "99999999999999", 1 },
	{ "100000000000000", 0 }, { "999999999999999.99", 0 }, { "1.23456", 0 },
	{ "-1", 0 }, { "+1", 0 }, { ".5", 0 }, { "5.", 0 }, { "05.00", 0 }, { "1e1", 0 },
	{ " 1", 0 }, { "1 ", 0 }, { "", 0 }, { "1.", 0 }, { "abc", 0 }, { NULL, 0 },
};

START_TEST(amount)
{
	ck_assert_msg(money_amount_valid(amounts[_i].s) == amounts[_i].ok, "%s",
	    amounts[_i].s ? amounts[_i].s : "(null)");
}
END_TEST

/* ---- format ---- */

static const struct {
	long long	 minor;
	int		 exp;
	const char	*text;
} formats[] = {
	{ 12345, 0, "12345" }, { 12345, 2, "123.45" }, { 12345, 3, "12.345" },
	{ 12345, 4, "1.2345" }, { -12345, 0, "-12345" }, { -12345, 2, "-123.45" },
	{ -12345, 3, "-12.345" }, { 0, 0, "0" }, { 0, 2, "0.00" }, { 0, 3, "0.000" },
	{ 0, 4, "0.0000" }, { 5, 2, "0.05" }, { -5, 3, "-0.005" }, { 100, 2, "1.00" },
	{ 1, 4, "0.0001" }, { -1, 4, "-0.0001" }, { 7, 3, "0.007" }, { 10000, 4, "1.0000" },
	{ LLONG_MAX, 0, "9223372036854775807" }, { LLONG_MAX, 4, "922337203685477.5807" },
	{ LLONG_MIN, 0, "-9223372036854775808" }, { LLONG_MIN, 2, "-92233720368547758.08" },
	/* an exponent outside 0..4 is the fallback's */
	{ 12345, -1, "123.45" }, { 12345, 9, "123.45" },
};

START_TEST(format)
{
	char buf[MONEY_TEXT_MAX];
	long long back;
	int exp = formats[_i].exp < 0 || formats[_i].exp > MONEY_EXP_MAX ? MONEY_EXP_FALLBACK :
	    formats[_i].exp;

	ck_assert_pstr_eq(money_format(&a, formats[_i].minor, formats[_i].exp), formats[_i].text);
	ck_assert_pstr_eq(money_format_buf(buf, sizeof(buf), formats[_i].minor, formats[_i].exp),
	    formats[_i].text);
	/* what is written reads back exactly */
	ck_assert_int_eq(money_parse(formats[_i].text, exp, SE, &back), MONEY_OK);
	ck_assert_int_eq(back, formats[_i].minor);
}
END_TEST

START_TEST(format_small_buffer)
{
	char buf[7];

	ck_assert_ptr_null(money_format_buf(buf, sizeof(buf), 12345678, 2));	/* "123456.78" */
	ck_assert_pstr_eq(money_format_buf(buf, sizeof(buf), 12345, 2), "123.45");
	ck_assert_ptr_null(money_format_buf(buf, 6, 12345, 2));
	ck_assert_ptr_null(money_format_buf(NULL, 0, 1, 2));
}
END_TEST

/* A UYW amount read at its four digits is shown at four, not at two. */
START_TEST(uyw_round_trip)
{
	long long v;
	int e = money_exponent("UYW");

	ck_assert_int_eq(e, 4);
	ck_assert_int_eq(money_parse("123.4567", e, SE, &v), MONEY_OK);
	ck_assert_int_eq(v, 1234567);
	ck_assert_pstr_eq(money_format(&a, v, money_exponent_shown("UYW")), "123.4567");
	ck_assert_int_eq(money_parse("123.45", e, SE, &v), MONEY_ESYNTAX);
	ck_assert_int_eq(money_parse("123.45", e, 0, &v), MONEY_OK);
	ck_assert_int_eq(v, 1234500);
}
END_TEST

/* ---- arithmetic ---- */

START_TEST(arithmetic)
{
	long long v = 42;

	ck_assert_int_eq(money_add(1, 2, &v), 0);
	ck_assert_int_eq(v, 3);
	ck_assert_int_eq(money_add(-5, 3, &v), 0);
	ck_assert_int_eq(v, -2);
	ck_assert_int_eq(money_add(LLONG_MAX - 1, 1, &v), 0);
	ck_assert_int_eq(v, LLONG_MAX);
	ck_assert_int_eq(money_add(LLONG_MIN, -1, &v), -1);
	ck_assert_int_eq(v, LLONG_MAX);			/* untouched */
	ck_assert_int_eq(money_add(LLONG_MAX, 1, &v), -1);
	ck_assert_int_eq(money_add(LLONG_MIN, LLONG_MAX, &v), 0);
	ck_assert_int_eq(v, -1);
	ck_assert_int_eq(money_sub(10, 3, &v), 0);
	ck_assert_int_eq(v, 7);
	ck_assert_int_eq(money_sub(3, 10, &v), 0);
	ck_assert_int_eq(v, -7);
	ck_assert_int_eq(money_sub(LLONG_MIN, 1, &v), -1);
	ck_assert_int_eq(money_sub(0, LLONG_MIN, &v), -1);
	ck_assert_int_eq(money_sub(-1, LLONG_MIN, &v), 0);
	ck_assert_int_eq(v, LLONG_MAX);
	ck_assert_int_eq(money_sub(LLONG_MAX, -1, &v), -1);
}
END_TEST

static Suite *
money_suite(void)
{
	Suite *s = suite_create("money");
	TCase *tc;

	tc = tcase_create("currencies");
	tcase_add_loop_test(tc, exponent, 0, (int)N(exps));
	tcase_add_test(tc, table);
	suite_add_tcase(s, tc);

	tc = tcase_create("parse");
	tcase_add_loop_test(tc, parse_ok, 0, (int)N(parse_valid));
	tcase_add_loop_test(tc, parse_bad, 0, (int)N(parse_invalid));
	tcase_add_loop_test(tc, amount, 0, (int)N(amounts));
	suite_add_tcase(s, tc);

	tc = tcase_create("format");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_loop_test(tc, format, 0, (int)N(formats));
	tcase_add_test(tc, format_small_buffer);
	tcase_add_test(tc, uyw_round_trip);
	suite_add_tcase(s, tc);

	tc = tcase_create("arithmetic");
	tcase_add_test(tc, arithmetic);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tcheck_run(money_suite());
}
