/* time_iso: the one written form of an instant. */
#include <check.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "core/clock.h"
#include "tcheck.h"

static const struct {
	int64_t		 ms;
	const char	*iso;
} iso[] = {
	{ 0, "1970-01-01T00:00:00.000Z" },
	{ 1, "1970-01-01T00:00:00.001Z" },
	{ 999, "1970-01-01T00:00:00.999Z" },
	{ 1000, "1970-01-01T00:00:01.000Z" },
	{ 1795804200123, "2026-11-27T18:30:00.123Z" },
	{ 1767225599999, "2025-12-31T23:59:59.999Z" },
	{ 951782400010, "2000-02-29T00:00:00.010Z" },
	{ 4107542399999, "2100-02-28T23:59:59.999Z" },
	/* before the epoch: rounded down, the milliseconds still 0..999 */
	{ -1, "1969-12-31T23:59:59.999Z" },
	{ -1000, "1969-12-31T23:59:59.000Z" },
	{ -1001, "1969-12-31T23:59:58.999Z" },
	/* four-digit years only: clamped */
	{ 253402300799999, "9999-12-31T23:59:59.999Z" },
	{ 253402300800000, "9999-12-31T23:59:59.999Z" },
	{ INT64_MAX, "9999-12-31T23:59:59.999Z" },
	{ -62167219200000, "0000-01-01T00:00:00.000Z" },
	{ INT64_MIN, "0000-01-01T00:00:00.000Z" },
};

START_TEST(test_iso)
{
	char out[TIME_ISO_SIZE + 1];

	memset(out, '#', sizeof(out));
	ck_assert_ptr_eq(time_iso(out, iso[_i].ms), out);
	ck_assert_str_eq(out, iso[_i].iso);
	ck_assert_uint_eq(strlen(out), TIME_ISO_SIZE - 1);
	ck_assert_int_eq(out[TIME_ISO_SIZE], '#');	/* nothing past the NUL */
}
END_TEST

/* The wall clock, in the same form: now, to the millisecond. */
START_TEST(test_now)
{
	int64_t before = (int64_t)time(NULL) * 1000, ms = time_now_ms(),
	    after = ((int64_t)time(NULL) + 1) * 1000;
	char out[TIME_ISO_SIZE];
	struct tm tm;
	time_t t = (time_t)(ms / 1000);

	ck_assert(ms >= before && ms < after);
	time_iso(out, ms);
	gmtime_r(&t, &tm);
	ck_assert_int_eq(out[19], '.');
	ck_assert_int_eq(out[23], 'Z');
	ck_assert_int_eq((out[20] - '0') * 100 + (out[21] - '0') * 10 + (out[22] - '0'),
	    (int)(ms % 1000));
	ck_assert_int_eq((out[17] - '0') * 10 + (out[18] - '0'), tm.tm_sec);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("clock");
	TCase *tc = tcase_create("iso");

	tcase_add_loop_test(tc, test_iso, 0, sizeof(iso) / sizeof(iso[0]));
	tcase_add_test(tc, test_now);
	suite_add_tcase(s, tc);
	return tcheck_run(s);
}
