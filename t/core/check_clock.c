/* time_iso: the one written form of an instant; time_parse reads RFC 3339. */
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

/* RFC 3339 in, epoch ms out; and back through time_iso */
static const struct {
	const char	*in;
	int64_t		 ms;
	const char	*iso;		/* time_iso of ms */
} parse_ok[] = {
	{ "2026-11-27T18:30:00Z", 1795804200000, "2026-11-27T18:30:00.000Z" },
	{ "2026-11-27T18:30:00.123Z", 1795804200123, "2026-11-27T18:30:00.123Z" },
	{ "2026-11-27T18:30:00.123999Z", 1795804200123, "2026-11-27T18:30:00.123Z" },
	{ "2026-11-27T18:30:00.5Z", 1795804200500, "2026-11-27T18:30:00.500Z" },
	{ "2026-11-27T20:30:00.01+02:00", 1795804200010, "2026-11-27T18:30:00.010Z" },
	{ "2026-11-27T18:00:00-00:30", 1795804200000, "2026-11-27T18:30:00.000Z" },
	{ "2000-02-29T00:00:00z", 951782400000, "2000-02-29T00:00:00.000Z" },
	{ "1970-01-01T00:00:00Z", 0, "1970-01-01T00:00:00.000Z" },
	{ "1969-12-31T23:59:59.999Z", -1, "1969-12-31T23:59:59.999Z" },
	{ "9999-12-31T23:59:59.999Z", 253402300799999, "9999-12-31T23:59:59.999Z" },
};

static const char *const parse_bad[] = {
	"", "2026-11-27", "2026-11-27T18:30:00", "2026-11-27 18:30:00Z",
	"2026-11-27T18:30:00.Z", "2026-11-27T18:30:00ZZ", "2026-11-27T18:30:00+0200",
	"2026-11-27T18:30:00+24:00", "2026-13-01T00:00:00Z", "2026-02-29T00:00:00Z",
	"1900-02-29T00:00:00Z", "2026-04-31T00:00:00Z", "2026-11-27T24:00:00Z",
	"2026-11-27T18:60:00Z", "2026-11-27T18:30:60Z", "2026-11-27T18:30:0aZ",
	"+2026-11-27T18:30:00Z", "2026-11-27T18:30:00.123",
};

START_TEST(test_parse_ok)
{
	int64_t ms = 42;
	char out[TIME_ISO_SIZE];

	ck_assert_int_eq(time_parse(parse_ok[_i].in, &ms), 0);
	ck_assert_int_eq(ms, parse_ok[_i].ms);
	ck_assert_str_eq(time_iso(out, ms), parse_ok[_i].iso);
	/* its own output reads back the same */
	ck_assert_int_eq(time_parse(out, &ms), 0);
	ck_assert_int_eq(ms, parse_ok[_i].ms);
}
END_TEST

START_TEST(test_parse_bad)
{
	int64_t ms = 42;

	ck_assert_int_eq(time_parse(parse_bad[_i], &ms), -1);
	ck_assert_int_eq(ms, 42);
	ck_assert_int_eq(time_parse(NULL, &ms), -1);
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
	tcase_add_loop_test(tc, test_parse_ok, 0, sizeof(parse_ok) / sizeof(parse_ok[0]));
	tcase_add_loop_test(tc, test_parse_bad, 0, sizeof(parse_bad) / sizeof(parse_bad[0]));
	suite_add_tcase(s, tc);
	return tcheck_run(s);
}
