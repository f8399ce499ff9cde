#ifndef BDS_PAY_CARD_H
#define BDS_PAY_CARD_H
/*
 * Card numbers, pure: shape, the Luhn check and the brand by issuer
 * ranges. No clock, no I/O; the number is never copied.
 */
#include <stddef.h>

#define PAY_PAN_MIN	13
#define PAY_PAN_MAX	19

/* 1 when s is min..max ASCII digits, else 0. */
int	 pay_card_digits(const char *s, size_t min, size_t max);
/* 1 when the digits of pan pass the Luhn (mod 10) check. */
int	 pay_card_luhn(const char *pan);
/*
 * The brand of a number by its issuer identification range: visa,
 * mastercard, amex, discover, diners, jcb, unionpay, or unknown. A static
 * string.
 */
const char *pay_card_brand(const char *pan);
/* 1 when a card expiring at the end of (year, month) is past in the month
 * (now_year, now_month), else 0. */
int	 pay_card_expired(int year, int month, int now_year, int now_month);

#endif
