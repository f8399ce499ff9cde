/*
 * lib/core/vault.c: the credential key ring. Sealing uses the current key
 * (credential_key, else secret_key) and names it; opening finds the named
 * key among the current one, credential_keys_old and the legacy
 * "secret_key.v1"; an unknown id, another row's associated data or a
 * tampered value never opens; vault_check refuses a malformed ring.
 */
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "core/arena.h"
#include "core/config.h"
#include "core/crypto.h"
#include "core/vault.h"
#include "tcheck.h"

#define K1 "1111111111111111111111111111111111111111111111111111111111111111"
#define K2 "2222222222222222222222222222222222222222222222222222222222222222"
#define K3 "3333333333333333333333333333333333333333333333333333333333333333"

static struct arena a;
static struct config cfg;

static void
set(const char *k, const char *v)
{
	char err[256];

	ck_assert_msg(config_set(&cfg, k, v, err, sizeof(err)) == 0, "%s", err);
}

static void
setup(void)
{
	ck_assert_int_eq(crypto_setup(), 0);
	arena_init(&a);
	memset(&cfg, 0, sizeof(cfg));
	set("secret_key", K1);
	set("credential_key_id", "secret_key.v1");
	set("credential_keys_old", "");
}

static void
teardown(void)
{
	config_free(&cfg);
	arena_free(&a);
}

/* Open hex under id and ad: the text, or NULL when it does not open. */
static const char *
open_as(const char *id, const char *hex, const char *ad)
{
	unsigned char *msg;
	size_t len;

	return vault_open_hex(&a, &cfg, id, hex, ad, &msg, &len) == 0 ? (const char *)msg : NULL;
}

static const char *
seal(const char *ad, const char *text)
{
	const char *hex = vault_seal_hex(&a, &cfg, ad, text, strlen(text));

	ck_assert_ptr_nonnull(hex);
	return hex;
}

START_TEST(legacy_key_by_default)
{
	const char *h = seal("link_a", "secret");

	ck_assert_str_eq(vault_key_id(&cfg), "secret_key.v1");
	ck_assert_pstr_eq(open_as("secret_key.v1", h, "link_a"), "secret");
	ck_assert_ptr_null(open_as("secret_key.v1", h, "link_b"));
	ck_assert_ptr_null(open_as("k2", h, "link_a"));
	ck_assert_ptr_null(open_as(NULL, h, "link_a"));
}
END_TEST

START_TEST(rotation)
{
	const char *legacy = seal("link_a", "one"), *h2, *h3;
	char err[256];

	set("credential_key_id", "k2");
	set("credential_key", K2);
	ck_assert_int_eq(vault_check(&cfg, err, sizeof(err)), 0);
	h2 = seal("link_a", "two");
	ck_assert_str_eq(vault_key_id(&cfg), "k2");
	/* the legacy key keeps opening old rows; k2 opens the new one */
	ck_assert_pstr_eq(open_as("secret_key.v1", legacy, "link_a"), "one");
	ck_assert_pstr_eq(open_as("k2", h2, "link_a"), "two");
	/* a value under k2 is not one under the legacy key */
	ck_assert_ptr_null(open_as("secret_key.v1", h2, "link_a"));

	set("credential_key_id", "k3");
	set("credential_key", K3);
	set("credential_keys_old", "k0=" K1 ",k2=" K2);
	ck_assert_int_eq(vault_check(&cfg, err, sizeof(err)), 0);
	h3 = seal("link_a", "three");
	ck_assert_pstr_eq(open_as("k3", h3, "link_a"), "three");
	ck_assert_pstr_eq(open_as("k2", h2, "link_a"), "two");
	ck_assert_pstr_eq(open_as("k0", legacy, "link_a"), "one");
	ck_assert_ptr_null(open_as("k2", h3, "link_a"));

	/* k2 dropped from the ring: its rows no longer open */
	set("credential_keys_old", "k0=" K1);
	ck_assert_ptr_null(open_as("k2", h2, "link_a"));
}
END_TEST

START_TEST(tampered)
{
	char *h = (char *)seal("link_a", "secret");

	ck_assert_ptr_null(open_as("secret_key.v1", "zz", "link_a"));
	ck_assert_ptr_null(open_as("secret_key.v1", "abc", "link_a"));
	h[strlen(h) - 1] = h[strlen(h) - 1] == '0' ? '1' : '0';
	ck_assert_ptr_null(open_as("secret_key.v1", h, "link_a"));
}
END_TEST

START_TEST(ring_checked)
{
	static const char *const bad_old[] = {
		"k2", "k2=", "k2=" K2 ",", "=" K2, "k2=" K2 "0", "k2=zz22222222222222222222222222"
		"22222222222222222222222222222222222222",
	};
	char err[256];

	for (size_t i = 0; i < sizeof(bad_old) / sizeof(bad_old[0]); i++) {
		set("credential_keys_old", bad_old[i]);
		ck_assert_msg(vault_check(&cfg, err, sizeof(err)) == -1, "%s", bad_old[i]);
	}
	set("credential_keys_old", "");
	/* an id of its own needs its own key */
	set("credential_key_id", "k9");
	ck_assert_int_eq(vault_check(&cfg, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "credential_key"));
	set("credential_key_id", "a,b");
	set("credential_key", K2);
	ck_assert_int_eq(vault_check(&cfg, err, sizeof(err)), -1);
}
END_TEST

static Suite *
vault_suite(void)
{
	Suite *s = suite_create("vault");
	TCase *tc = tcase_create("ring");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, legacy_key_by_default);
	tcase_add_test(tc, rotation);
	tcase_add_test(tc, tampered);
	tcase_add_test(tc, ring_checked);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tcheck_run(vault_suite());
}
