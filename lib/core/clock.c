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

/* n decimal digits at s, or -1. */
static int
num(const char *s, int n)
{
	int v = 0;

	for (int i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	return v;
}

int
time_parse(const char *s, int64_t *ms)
{
	static const int mdays[] = { 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
	struct tm tm = { 0 };
	const char *p;
	int frac = 0, nfrac = 0, off = 0;
	time_t t;

	if (s == NULL || strlen(s) < 20 || s[4] != '-' || s[7] != '-' ||
	    (s[10] != 'T' && s[10] != 't') || s[13] != ':' || s[16] != ':')
		return -1;
	tm.tm_year = num(s, 4);
	tm.tm_mon = num(s + 5, 2);
	tm.tm_mday = num(s + 8, 2);
	tm.tm_hour = num(s + 11, 2);
	tm.tm_min = num(s + 14, 2);
	tm.tm_sec = num(s + 17, 2);
	if (tm.tm_year < 0 || tm.tm_mon < 1 || tm.tm_mon > 12 || tm.tm_mday < 1 ||
	    tm.tm_mday > mdays[tm.tm_mon - 1] || tm.tm_hour < 0 || tm.tm_hour > 23 ||
	    tm.tm_min < 0 || tm.tm_min > 59 || tm.tm_sec < 0 || tm.tm_sec > 59)
		return -1;
	if (tm.tm_mon == 2 && tm.tm_mday == 29 && (tm.tm_year % 4 != 0 ||
	    (tm.tm_year % 100 == 0 && tm.tm_year % 400 != 0)))
		return -1;
	p = s + 19;
	if (*p == '.') {
		for (p++; *p >= '0' && *p <= '9'; p++, nfrac++)
			if (nfrac < 3)
				frac = frac * 10 + (*p - '0');
		if (nfrac == 0)
			return -1;
		for (int i = nfrac; i < 3; i++)
			frac *= 10;
	}
	if ((*p == 'Z' || *p == 'z') && p[1] == '\0') {
		off = 0;
	} else if ((*p == '+' || *p == '-') && strlen(p) == 6 && p[3] == ':' &&
	    num(p + 1, 2) >= 0 && num(p + 1, 2) <= 23 && num(p + 4, 2) >= 0 &&
	    num(p + 4, 2) <= 59) {
		off = (*p == '-' ? -1 : 1) * (num(p + 1, 2) * 3600 + num(p + 4, 2) * 60);
	} else {
		return -1;
	}
	tm.tm_year -= 1900;
	tm.tm_mon -= 1;
	t = timegm(&tm);	/* fields checked: years 0..9999 fit a time_t */
	*ms = ((int64_t)t - off) * 1000 + frac;
	return 0;
}

int64_t
time_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}
