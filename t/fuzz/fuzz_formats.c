/*
 * libFuzzer target for the string formats of body and query validation
 * (lib/core/validate.c validate_format): dates, RFC 3339 instants, digits,
 * UUIDs, currencies, printable text, e-mail addresses and URLs, every one
 * outside input in a request.
 *
 * Input layout:
 *	byte 0	the format: b % VF__MAX
 *	rest	the text (a NUL ends it, as a C string does)
 *
 * Checked beyond "no crash, no leak, no undefined behaviour", against
 * oracles written apart from validate.c:
 *   - a date is accepted exactly when it is YYYY-MM-DD, year 1 or later,
 *     and the C library's calendar (timegm, then gmtime) gives back the same
 *     year, month and day;
 *   - an instant is accepted exactly when it is such a date, 'T',
 *     HH:MM:SS within 23:59:59, an optional fraction of 1 to 9 digits, and
 *     'Z' or an offset +HH:MM / -HH:MM within 23:59;
 *   - digits exactly when non-empty and only 0-9; printable exactly when
 *     every byte is 0x20-0x7e; a UUID only in the 8-4-4-4-12 hex form; a
 *     currency only as three capitals; an e-mail address at most 254 bytes
 *     with an '@' and no space or control byte; a URL only with an http or
 *     https scheme and "://";
 *   - the answer is 0 or 1, and the same when asked twice.
 * A broken promise calls abort(), which libFuzzer reports as a crash.
 * Build and run with `scripts/fuzz formats`; see t/fuzz/README.md.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "core/validate.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(c)	do { if (!(c)) abort(); } while (0)

static int
digit(char c)
{
	return c >= '0' && c <= '9';
}

/* n digits at s, as a number; -1 when any is not a digit */
static int
num(const char *s, int n)
{
	int v = 0;

	for (int i = 0; i < n; i++) {
		if (!digit(s[i]))
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	return v;
}

/* YYYY-MM-DD at s (its first 10 bytes), a real date by the C library */
static int
date_ok(const char *s)
{
	int y, m, d;
	struct tm tm = { 0 }, back;
	time_t t;

	if (strnlen(s, 10) < 10 || s[4] != '-' || s[7] != '-' ||
	    (y = num(s, 4)) < 1 || (m = num(s + 5, 2)) < 1 || m > 12 ||
	    (d = num(s + 8, 2)) < 1 || d > 31)
		return 0;
	tm.tm_year = y - 1900;
	tm.tm_mon = m - 1;
	tm.tm_mday = d;
	tm.tm_hour = 12;
	t = timegm(&tm);
	return gmtime_r(&t, &back) != NULL && back.tm_year == y - 1900 &&
	    back.tm_mon == m - 1 && back.tm_mday == d;
}

static int
datetime_ok(const char *s)
{
	int h, m, sec;
	size_t i;

	if (!date_ok(s) || s[10] != 'T' || strnlen(s, 19) < 19)
		return 0;
	if ((h = num(s + 11, 2)) < 0 || s[13] != ':' || (m = num(s + 14, 2)) < 0 ||
	    s[16] != ':' || (sec = num(s + 17, 2)) < 0 || h > 23 || m > 59 || sec > 59)
		return 0;
	s += 19;
	if (*s == '.') {
		for (i = 1; digit(s[i]); i++)
			;
		if (i < 2 || i > 10)
			return 0;
		s += i;
	}
	if (strcmp(s, "Z") == 0)
		return 1;
	return (s[0] == '+' || s[0] == '-') && strlen(s) == 6 && (h = num(s + 1, 2)) >= 0 &&
	    s[3] == ':' && (m = num(s + 4, 2)) >= 0 && h <= 23 && m <= 59;
}

static int
uuid_form(const char *s)
{
	if (strlen(s) != 36)
		return 0;
	for (int i = 0; i < 36; i++) {
		if (i == 8 || i == 13 || i == 18 || i == 23) {
			if (s[i] != '-')
				return 0;
		} else if (!digit(s[i]) && !((s[i] | 0x20) >= 'a' && (s[i] | 0x20) <= 'f')) {
			return 0;
		}
	}
	return 1;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	enum vformat f;
	char *s;
	size_t n;
	int ok;

	if (size < 1)
		return 0;
	f = (enum vformat)(data[0] % VF__MAX);
	n = strnlen((const char *)data + 1, size - 1);
	if ((s = malloc(n + 1)) == NULL)
		return 0;
	memcpy(s, data + 1, n);
	s[n] = '\0';

	ok = validate_format(f, s);
	CHECK(ok == 0 || ok == 1);
	CHECK(validate_format(f, s) == ok);
	switch (f) {
	case VF_DATE:
		CHECK(ok == (n == 10 && date_ok(s)));
		break;
	case VF_DATETIME:
		CHECK(ok == datetime_ok(s));
		break;
	case VF_DIGITS:
		CHECK(ok == (n > 0 && strspn(s, "0123456789") == n));
		break;
	case VF_PRINTABLE: {
		int printable = 1;

		for (size_t i = 0; i < n; i++)
			printable &= (unsigned char)s[i] >= 0x20 && (unsigned char)s[i] <= 0x7e;
		CHECK(ok == printable);
		break;
	}
	case VF_UUID:
		CHECK(!ok || uuid_form(s));
		break;
	case VF_CURRENCY:
		CHECK(!ok || (n == 3 && strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZ") == 3));
		break;
	case VF_EMAIL:
		if (ok) {
			CHECK(n <= 254 && strchr(s, '@') != NULL);
			for (size_t i = 0; i < n; i++)
				CHECK((unsigned char)s[i] > 0x20 && s[i] != 0x7f);
		}
		break;
	case VF_URL:
	case VF_HTTPS_URL:
		if (ok) {
			CHECK(strncasecmp(s, "https://", 8) == 0 ||
			    (f == VF_URL && strncasecmp(s, "http://", 7) == 0));
		}
		break;
	default:
		break;
	}
	free(s);
	return 0;
}
