/* The wall clock's one written form. */
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "core/clock.h"

/* 0000-01-01T00:00:00.000Z and 9999-12-31T23:59:59.999Z */
#define TIME_ISO_MIN_MS (-62167219200000LL)
#define TIME_ISO_MAX_MS (253402300799999LL)

/* v's last n decimal digits, zero-padded (v >= 0). */
static void
digits(char *p, int v, int n)
{
	while (n-- > 0) {
		p[n] = (char)('0' + v % 10);
		v /= 10;
	}
}

char *
time_iso(char out[TIME_ISO_SIZE], int64_t ms)
{
	int64_t sec, frac;
	time_t t;
	struct tm tm;

	if (ms < TIME_ISO_MIN_MS)
		ms = TIME_ISO_MIN_MS;
	if (ms > TIME_ISO_MAX_MS)
		ms = TIME_ISO_MAX_MS;
	/* floor division: 1 ms before the epoch is 1969-12-31T23:59:59.999Z */
	sec = ms / 1000;
	frac = ms % 1000;
	if (frac < 0) {
		frac += 1000;
		sec--;
	}
	t = (time_t)sec;
	if (gmtime_r(&t, &tm) == NULL)
		memset(&tm, 0, sizeof(tm));
	/* digits by hand: every field is in range after the clamp */
	digits(out, tm.tm_year + 1900, 4);
	out[4] = '-';
	digits(out + 5, tm.tm_mon + 1, 2);
	out[7] = '-';
	digits(out + 8, tm.tm_mday, 2);
	out[10] = 'T';
	digits(out + 11, tm.tm_hour, 2);
	out[13] = ':';
	digits(out + 14, tm.tm_min, 2);
	out[16] = ':';
	digits(out + 17, tm.tm_sec, 2);
	out[19] = '.';
	digits(out + 20, (int)frac, 3);
	out[23] = 'Z';
	out[24] = '\0';
	return out;
}

int64_t
time_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}
