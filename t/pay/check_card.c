/*
 * lib/pay/pay_card.c: the shape of a card number, the Luhn check on the
 * published test numbers and one digit off, the brand of every issuer
 * range at its edges, the expiry by month; and the pay key ring
 * (pay_pan_ring): a number sealed under the key derived from secret_key
 * still opens once a configured key and then a newer one take over, under
 * its own id only, and never with another method's id bound.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>

#include "core/arena.h"
#include "core/config.h"
#include "core/crypto.h"
#include "core/vault.h"
#include "pay/pay.h"
#include "pay/pay_card.h"
#include "pay/pay_int.h"
#include "tcheck.h"

#define N(x) (sizeof(x) / sizeof((x)[0]))
#define K1 "1111111111111111111111111111111111111111111111111111111111111111"
#define K2 "2222222222222222222222222222222222222222222222222222222222222222"
#define K3 "3333333333333333333333333333333333333333333333333333333333333333"

START_TEST(digits)
{
	ck_assert_int_eq(pay_card_digits("4242424242424", 13, 19), 1);
	ck_assert_int_eq(pay_card_digits("424242424242", 13, 19), 0);
	ck_assert_int_eq(pay_card_digits("4242424242424242424", 13, 19), 1);
	ck_assert_int_eq(pay_card_digits("42424242424242424242", 13, 19), 0);
	ck_assert_int_eq(pay_card_digits("4242 4242 4242 4242", 13, 19), 0);
	ck_assert_int_eq(pay_card_digits("424242424242424a", 13, 19), 0);
	ck_assert_int_eq(pay_card_digits("", 3, 4), 0);
	ck_assert_int_eq(pay_card_digits("123", 3, 4), 1);
	ck_assert_int_eq(pay_card_digits("12345", 3, 4), 0);
	ck_assert_int_eq(pay_card_digits("-12", 3, 4), 0);
}
END_TEST

static const char *const good[] = {
	"4242424242424242", "4000056655665556", "5555555555554444", "2223003122003222",
	"378282246310005", "371449635398431", "6011111111111117", "6011000990139424",
	"3056930009020004", "36227206271667", "3566002020360505", "6200000000000005",
	"4111111111111111", "4222222222222",
};

START_TEST(luhn)
{
	char s[32];

	for (size_t i = 0; i < N(good); i++) {
		ck_assert_msg(pay_card_luhn(good[i]), "%s", good[i]);
		/* every single-digit change of the last digit breaks it */
		snprintf(s, sizeof(s), "%s", good[i]);
		for (char d = '0'; d <= '9'; d++) {
			s[strlen(s) - 1] = d;
			if (d != good[i][strlen(good[i]) - 1])
				ck_assert_msg(!pay_card_luhn(s), "%s", s);
		}
	}
	/* two adjacent digits swapped (the error Luhn exists for) */
	ck_assert_int_eq(pay_card_luhn("2424424242424242"), 0);
	ck_assert_int_eq(pay_card_luhn("4242424242424241"), 0);
	ck_assert_int_eq(pay_card_luhn(""), 0);
}
END_TEST

static const struct {
	const char *pan, *brand;
} brands[] = {
	{ "4242424242424242", "visa" },
	{ "5100000000000008", "mastercard" }, { "5555555555554444", "mastercard" },
	{ "5000000000000009", "unknown" }, { "5600000000000003", "unknown" },
	{ "2221000000000009", "mastercard" }, { "2720990000000007", "mastercard" },
	{ "2220990000000000", "unknown" }, { "2721000000000004", "unknown" },
	{ "378282246310005", "amex" }, { "340000000000009", "amex" },
	{ "350000000000000", "unknown" },
	{ "6011111111111117", "discover" }, { "6440000000000000", "discover" },
	{ "6500000000000002", "discover" }, { "6221260000000000", "discover" },
	{ "6229250000000000", "discover" }, { "6221250000000000", "unionpay" },
	{ "6200000000000005", "unionpay" },
	{ "3056930009020004", "diners" }, { "36227206271667", "diners" },
	{ "3060000000000000", "unknown" },
	{ "3528000000000000", "jcb" }, { "3589000000000000", "jcb" },
	{ "3527000000000000", "unknown" }, { "3590000000000000", "unknown" },
	{ "9999999999999995", "unknown" },
};

START_TEST(brand)
{
	ck_assert_str_eq(pay_card_brand(brands[_i].pan), brands[_i].brand);
}
END_TEST

START_TEST(expired)
{
	ck_assert_int_eq(pay_card_expired(2026, 11, 2026, 11), 0);	/* good to its month's end */
	ck_assert_int_eq(pay_card_expired(2026, 10, 2026, 11), 1);
	ck_assert_int_eq(pay_card_expired(2026, 12, 2026, 11), 0);
	ck_assert_int_eq(pay_card_expired(2025, 12, 2026, 1), 1);
	ck_assert_int_eq(pay_card_expired(2027, 1, 2026, 12), 0);
}
END_TEST

/* ---- the key ring ---- */

static struct arena a;
static char path[64];

static void
ring_setup(void)
{
	ck_assert_int_eq(crypto_setup(), 0);
	arena_init(&a);
	snprintf(path, sizeof(path), "/tmp/check_card.%d.conf", (int)getpid());
}

static void
ring_teardown(void)
{
	unlink(path);
	arena_free(&a);
}

/* A config of the lines given (the keys every config needs first). */
static void
load(struct config *cfg, const char *lines)
{
	FILE *f = fopen(path, "w");
	char err[256];

	ck_assert_ptr_nonnull(f);
	fprintf(f, "cursor_key = %s\njwt_seed = %s\nsecret_key = %s\n%s", K1, K1, K1, lines);
	fclose(f);
	memset(cfg, 0, sizeof(*cfg));
	ck_assert_msg(config_load(cfg, path, err, sizeof(err)) == 0, "%s", err);
}

static const char *
open_as(const struct vault_ring *ring, const char *id, const char *hex, const char *ad)
{
	unsigned char *msg;
	size_t len;

	return vault_ring_open_hex(&a, ring, id, hex, ad, &msg, &len) == 0 ?
	    (const char *)msg : NULL;
}

START_TEST(ring_rotation)
{
	struct config c1, c2, c3;
	struct vault_ring r1, r2, r3;
	unsigned char d1[32], d2[32], d3[32];
	const char *s1, *s2, *pan = "4242424242424242", *got;
	char err[256];

	/* no pay key configured: the key derived from secret_key */
	load(&c1, "");
	pay_pan_ring(&c1, &r1, d1);
	ck_assert_str_eq(r1.id, "secret_key.pan");
	ck_assert_int_eq(vault_ring_check(&r1, err, sizeof(err)), 0);
	ck_assert_ptr_nonnull(s1 = vault_ring_seal_hex(&a, &r1, "pm_1", pan, strlen(pan)));
	ck_assert_ptr_null(strstr(s1, "4242"));
	ck_assert_str_eq(open_as(&r1, "secret_key.pan", s1, "pm_1"), pan);
	ck_assert_ptr_null(open_as(&r1, "secret_key.pan", s1, "pm_2"));	/* another row */
	/* the derived key differs from secret_key itself and from the
	 * credential ring's */
	ck_assert_ptr_null(open_as(&r1, "nope", s1, "pm_1"));

	/* a configured key takes over; the derived one still opens its rows */
	load(&c2, "pay.pan_key_id = pan.v2\npay_pan_key = " K2 "\n");
	pay_pan_ring(&c2, &r2, d2);
	ck_assert_str_eq(r2.id, "pan.v2");
	ck_assert_str_eq(open_as(&r2, "secret_key.pan", s1, "pm_1"), pan);
	ck_assert_ptr_nonnull(s2 = vault_ring_seal_hex(&a, &r2, "pm_1", pan, strlen(pan)));
	ck_assert_ptr_null(open_as(&r2, "secret_key.pan", s2, "pm_1"));	/* not under that id */
	ck_assert_str_eq(open_as(&r2, "pan.v2", s2, "pm_1"), pan);

	/* the next key: pan.v2 must be listed among the old keys to open */
	load(&c3, "pay_pan_key_id = pan.v3\npay_pan_key = " K3 "\n");
	pay_pan_ring(&c3, &r3, d3);
	ck_assert_ptr_null(open_as(&r3, "pan.v2", s2, "pm_1"));
	config_free(&c3);
	load(&c3, "pay_pan_key_id = pan.v3\npay_pan_key = " K3 "\npay_pan_keys_old = pan.v2=" K2
	    "\n");
	pay_pan_ring(&c3, &r3, d3);
	got = open_as(&r3, "pan.v2", s2, "pm_1");
	ck_assert_ptr_nonnull(got);
	ck_assert_str_eq(got, pan);

	/* a malformed old-keys list is refused by the check */
	config_free(&c3);
	load(&c3, "pay_pan_keys_old = pan.v2=12\n");
	pay_pan_ring(&c3, &r3, d3);
	ck_assert_int_eq(vault_ring_check(&r3, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "pay_pan_keys_old"));
	config_free(&c1);
	config_free(&c2);
	config_free(&c3);
}
END_TEST

static Suite *
card_suite(void)
{
	Suite *s = suite_create("pay_card");
	TCase *tc = tcase_create("card");

	tcase_add_test(tc, digits);
	tcase_add_test(tc, luhn);
	tcase_add_loop_test(tc, brand, 0, N(brands));
	tcase_add_test(tc, expired);
	suite_add_tcase(s, tc);
	tc = tcase_create("ring");
	tcase_add_checked_fixture(tc, ring_setup, ring_teardown);
	tcase_add_test(tc, ring_rotation);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tcheck_run(card_suite());
}
