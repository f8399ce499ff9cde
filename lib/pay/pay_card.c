/* Card numbers (pay_card.h). */
#include <string.h>

#include "pay/pay_card.h"

int
pay_card_digits(const char *s, size_t min, size_t max)
{
	size_t n = strlen(s);

	return n >= min && n <= max && strspn(s, "0123456789") == n;
}

int
pay_card_luhn(const char *pan)
{
	size_t n = strlen(pan);
	int sum = 0, d;

	for (size_t i = 0; i < n; i++) {
		d = pan[n - 1 - i] - '0';
		if (i % 2 == 1 && (d *= 2) > 9)
			d -= 9;
		sum += d;
	}
	return n > 0 && sum % 10 == 0;
}

/* The number's first n digits as an integer (n <= 8). */
static long
iin(const char *pan, size_t n)
{
	long v = 0;

	for (size_t i = 0; i < n && pan[i] != '\0'; i++)
		v = v * 10 + (pan[i] - '0');
	return v;
}

/* A range of issuer numbers of `digits` leading digits and its brand,
 * first match wins (Discover's part of 622 before UnionPay's 62). */
static const struct {
	size_t		 digits;
	long		 lo, hi;
	const char	*brand;
} ranges[] = {
	{ 1, 4, 4, "visa" },
	{ 2, 51, 55, "mastercard" },
	{ 4, 2221, 2720, "mastercard" },
	{ 2, 34, 34, "amex" },
	{ 2, 37, 37, "amex" },
	{ 4, 6011, 6011, "discover" },
	{ 6, 622126, 622925, "discover" },
	{ 3, 644, 649, "discover" },
	{ 2, 65, 65, "discover" },
	{ 3, 300, 305, "diners" },
	{ 2, 36, 36, "diners" },
	{ 2, 38, 39, "diners" },
	{ 4, 3528, 3589, "jcb" },
	{ 2, 62, 62, "unionpay" },
	{ 2, 81, 81, "unionpay" },
};

const char *
pay_card_brand(const char *pan)
{
	long v;

	for (size_t i = 0; i < sizeof(ranges) / sizeof(ranges[0]); i++) {
		if (strlen(pan) < ranges[i].digits)
			continue;
		v = iin(pan, ranges[i].digits);
		if (v >= ranges[i].lo && v <= ranges[i].hi)
			return ranges[i].brand;
	}
	return "unknown";
}

int
pay_card_expired(int year, int month, int now_year, int now_month)
{
	return year < now_year || (year == now_year && month < now_month);
}
