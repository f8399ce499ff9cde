/*
 * libFuzzer target for the money parser and formatter (lib/core/money.c):
 * amounts are outside input (request bodies, portal answers, extracted
 * bills, CSV imports).
 *
 * Input layout:
 *	byte 0	exp: b % (MONEY_EXP_MAX + 2), so MONEY_EXP_MAX + 1 is out of range
 *	byte 1	flags: b & (MONEY_SIGNED | MONEY_EXACT)
 *	rest	the amount text (a NUL ends it, as a C string does)
 *
 * Checked beyond "no crash, no leak, no undefined behaviour":
 *   - money_parse answers MONEY_OK or one MONEY_E* code, and writes *minor
 *     only on MONEY_OK;
 *   - a parsed amount formats back (money_format_buf at the same exp) to
 *     text that parses to the same minor units, with MONEY_EXACT too;
 *     without MONEY_SIGNED it is never negative;
 *   - money_amount_valid text parses at MONEY_EXP_MAX and stays below
 *     10^MONEY_AMOUNT_DIGITS major units;
 *   - the formatter refuses a buffer one byte too small and fits
 *     MONEY_TEXT_MAX for any long long;
 *   - money_add and money_sub agree with __builtin overflow checks.
 * A broken promise calls abort(), which libFuzzer reports as a crash.
 * Build and run with `scripts/fuzz money`; see t/fuzz/README.md.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/money.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(c)	do { if (!(c)) abort(); } while (0)

static void
check_format(long long minor, int exp)
{
	char buf[MONEY_TEXT_MAX], small[MONEY_TEXT_MAX];
	long long back = 0;
	size_t len;

	CHECK(money_format_buf(buf, sizeof buf, minor, exp) == buf);
	len = strlen(buf);
	CHECK(len < MONEY_TEXT_MAX);
	/* exactly len + 1 fits, len does not */
	CHECK(money_format_buf(small, len + 1, minor, exp) == small);
	CHECK(strcmp(small, buf) == 0);
	CHECK(money_format_buf(small, len, minor, exp) == NULL);
	if (exp >= 0 && exp <= MONEY_EXP_MAX) {
		CHECK(money_parse(buf, exp, MONEY_SIGNED | MONEY_EXACT, &back) == MONEY_OK);
		CHECK(back == minor);
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const long long sentinel = 0x5a5a5a5a5a5a5a5aLL;
	long long minor = sentinel, sum, a, b;
	unsigned flags;
	char *s;
	int exp, rc;

	if (size < 2)
		return 0;
	exp = data[0] % (MONEY_EXP_MAX + 2);
	flags = data[1] & (MONEY_SIGNED | MONEY_EXACT);
	s = malloc(size - 1);
	if (s == NULL)
		return 0;
	memcpy(s, data + 2, size - 2);
	s[size - 2] = '\0';

	rc = money_parse(s, exp, flags, &minor);
	CHECK(rc == MONEY_OK || rc == MONEY_ESYNTAX || rc == MONEY_EFRAC ||
	    rc == MONEY_ERANGE);
	if (rc != MONEY_OK)
		CHECK(minor == sentinel);
	if (rc == MONEY_OK && exp <= MONEY_EXP_MAX) {
		if (!(flags & MONEY_SIGNED))
			CHECK(minor >= 0);
		check_format(minor, exp);
	}

	if (money_amount_valid(s)) {
		long long m = 0, cap = 1;

		for (int i = 0; i < MONEY_AMOUNT_DIGITS + MONEY_EXP_MAX; i++)
			cap *= 10;
		CHECK(money_parse(s, MONEY_EXP_MAX, 0, &m) == MONEY_OK);
		CHECK(m >= 0 && m < cap);
	}

	/* any long long formats; the fallback exponent for one out of range */
	if (size >= 2 + 2 * sizeof(long long)) {
		memcpy(&a, data + 2, sizeof a);
		memcpy(&b, data + 2 + sizeof a, sizeof b);
		check_format(a, exp);
		check_format(b, exp + MONEY_EXP_MAX + 2);	/* out of range */
		sum = sentinel;
		if (__builtin_add_overflow(a, b, &(long long){0}))
			CHECK(money_add(a, b, &sum) == -1 && sum == sentinel);
		else
			CHECK(money_add(a, b, &sum) == 0 && sum == a + b);
		sum = sentinel;
		if (__builtin_sub_overflow(a, b, &(long long){0}))
			CHECK(money_sub(a, b, &sum) == -1 && sum == sentinel);
		else
			CHECK(money_sub(a, b, &sum) == 0 && sum == a - b);
	}
	free(s);
	return 0;
}
