/*
 * lib/crypto.c, secrets at rest: crypto_seal / crypto_open (XChaCha20-
 * Poly1305 with the row bound as additional data) and crypto_keyed_hash
 * (HMAC-SHA256 of purpose || 0 || s), the latter checked against OpenSSL.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <sodium.h>

#include "core/arena.h"
#include "core/crypto.h"
#include "tcheck.h"

static struct arena	 a;
static unsigned char	 key[32], key2[32];

static void
setup(void)
{
	size_t	 i;

	ck_assert_int_eq(crypto_setup(), 0);
	arena_init(&a);
	for (i = 0; i < sizeof(key); i++) {
		key[i] = (unsigned char)i;
		key2[i] = (unsigned char)i;
	}
	key2[31] ^= 0x01;
}

static void
teardown(void)
{
	arena_free(&a);
}

/* 0 when sealed opens under key and ad; the out-params must agree. */
static int
open_ok(const unsigned char k[32], const unsigned char *sealed, size_t n,
    const char *ad, unsigned char **msg, size_t *len)
{
	int	 rc;

	*msg = (unsigned char *)&rc;
	*len = 12345;
	rc = crypto_open(&a, k, sealed, n, ad, msg, len);
	if (rc != 0) {
		ck_assert_int_eq(rc, -1);
		ck_assert_ptr_null(*msg);
		ck_assert_uint_eq(*len, 0);
	}
	return rc;
}

/* ---- seal / open ---- */

static const struct {
	size_t		 len;
	const char	*ad;
} round_trips[] = {
	{ 0, NULL },
	{ 0, "acl_0190a5b2-7c3e-7def-8abc-0123456789ab" },
	{ 1, NULL },
	{ 15, "row" },
	{ 16, "row" },
	{ 17, "" },
	{ 64, "whsec" },
	{ 1000, "acl_0190a5b2-7c3e-7def-8abc-0123456789ab" },
	{ 65536, NULL },
};

START_TEST(seal_round_trip)
{
	unsigned char	*m, *sealed, *back;
	size_t		 len = round_trips[_i].len, n, blen, i;

	m = arena_alloc(&a, len + 1);
	for (i = 0; i < len; i++)
		m[i] = (unsigned char)(i * 7 + 1);
	sealed = crypto_seal(&a, key, m, len, round_trips[_i].ad, &n);
	ck_assert_ptr_nonnull(sealed);
	ck_assert_uint_eq(n, len + CRYPTO_SEAL_OVERHEAD);
	ck_assert_uint_eq(CRYPTO_SEAL_OVERHEAD, 40);
	/* The plaintext does not appear as is. */
	if (len >= 16)
		ck_assert_ptr_null(memmem(sealed, n, m, 16));
	ck_assert_int_eq(open_ok(key, sealed, n, round_trips[_i].ad, &back,
	    &blen), 0);
	ck_assert_uint_eq(blen, len);
	ck_assert_int_eq(memcmp(back, m, len), 0);
	ck_assert_uint_eq(back[len], 0);
}
END_TEST

START_TEST(seal_string)
{
	unsigned char	*sealed, *back;
	size_t		 n, blen;

	sealed = crypto_seal(&a, key, "whsec_abc", 9, "sub_1", &n);
	ck_assert_int_eq(open_ok(key, sealed, n, "sub_1", &back, &blen), 0);
	ck_assert_str_eq((char *)back, "whsec_abc");
	ck_assert_uint_eq(blen, 9);
}
END_TEST

START_TEST(seal_empty_null_msg)
{
	unsigned char	*sealed, *back;
	size_t		 n, blen;

	sealed = crypto_seal(&a, key, NULL, 0, NULL, &n);
	ck_assert_ptr_nonnull(sealed);
	ck_assert_uint_eq(n, CRYPTO_SEAL_OVERHEAD);
	ck_assert_int_eq(open_ok(key, sealed, n, NULL, &back, &blen), 0);
	ck_assert_uint_eq(blen, 0);
	ck_assert_str_eq((char *)back, "");
	/* Even an empty secret is authenticated. */
	ck_assert_int_eq(open_ok(key2, sealed, n, NULL, &back, &blen), -1);
	ck_assert_int_eq(open_ok(key, sealed, n, "x", &back, &blen), -1);
}
END_TEST

START_TEST(seal_random_nonce)
{
	unsigned char	*s1, *s2;
	size_t		 n1, n2;

	s1 = crypto_seal(&a, key, "same", 4, "row", &n1);
	s2 = crypto_seal(&a, key, "same", 4, "row", &n2);
	ck_assert_uint_eq(n1, n2);
	ck_assert_int_ne(memcmp(s1, s2, 24), 0);
	ck_assert_int_ne(memcmp(s1 + 24, s2 + 24, n1 - 24), 0);
}
END_TEST

/* Sealed under seal_ad, opened under open_ad: the row binding. */
static const struct {
	const char	*seal_ad;
	const char	*open_ad;
	int		 want;
} ad_cases[] = {
	{ "acl_1", "acl_1", 0 },
	{ NULL, NULL, 0 },
	{ NULL, "", 0 },	/* no bytes either way: the same binding */
	{ "", NULL, 0 },
	{ "acl_1", "acl_2", -1 },
	{ "acl_1", "acl_10", -1 },
	{ "acl_10", "acl_1", -1 },
	{ "acl_1", "ACL_1", -1 },
	{ "acl_1", NULL, -1 },
	{ NULL, "acl_1", -1 },
	{ "acl_1", "", -1 },
};

START_TEST(seal_ad_binding)
{
	unsigned char	*sealed, *back;
	size_t		 n, blen;

	sealed = crypto_seal(&a, key, "4111111111111111", 16,
	    ad_cases[_i].seal_ad, &n);
	ck_assert_int_eq(open_ok(key, sealed, n, ad_cases[_i].open_ad, &back,
	    &blen), ad_cases[_i].want);
	if (ad_cases[_i].want == 0)
		ck_assert_str_eq((char *)back, "4111111111111111");
}
END_TEST

START_TEST(seal_wrong_key)
{
	unsigned char	*sealed, *back, k[32];
	size_t		 n, blen, i;

	sealed = crypto_seal(&a, key, "secret", 6, "row", &n);
	ck_assert_int_eq(open_ok(key2, sealed, n, "row", &back, &blen), -1);
	for (i = 0; i < 32; i++) {
		memcpy(k, key, 32);
		k[i] ^= 0x80;
		ck_assert_int_eq(open_ok(k, sealed, n, "row", &back, &blen), -1);
	}
	ck_assert_int_eq(open_ok(key, sealed, n, "row", &back, &blen), 0);
}
END_TEST

/* Every bit of nonce, ciphertext and tag is covered. */
START_TEST(seal_every_byte_flipped)
{
	unsigned char	*sealed, *back;
	size_t		 n, blen, i;
	int		 b;

	sealed = crypto_seal(&a, key, "0123456789abcdef0123", 20, "row", &n);
	ck_assert_uint_eq(n, 60);
	for (i = 0; i < n; i++)
		for (b = 0; b < 8; b++) {
			sealed[i] ^= (unsigned char)(1u << b);
			ck_assert_msg(open_ok(key, sealed, n, "row", &back,
			    &blen) == -1, "byte %zu bit %d opened", i, b);
			sealed[i] ^= (unsigned char)(1u << b);
		}
	ck_assert_int_eq(open_ok(key, sealed, n, "row", &back, &blen), 0);
	ck_assert_str_eq((char *)back, "0123456789abcdef0123");
}
END_TEST

START_TEST(seal_truncated)
{
	unsigned char	*sealed, *longer, *back;
	size_t		 n, blen, i;

	sealed = crypto_seal(&a, key, "0123456789", 10, NULL, &n);
	for (i = 0; i < n; i++)
		ck_assert_msg(open_ok(key, sealed, i, NULL, &back, &blen) == -1,
		    "%zu bytes opened", i);
	/* Chopped at the front (the nonce shifts) or extended. */
	ck_assert_int_eq(open_ok(key, sealed + 1, n - 1, NULL, &back, &blen), -1);
	longer = arena_alloc(&a, n + 1);
	memcpy(longer, sealed, n);
	ck_assert_int_eq(open_ok(key, longer, n + 1, NULL, &back, &blen), -1);
	ck_assert_int_eq(open_ok(key, sealed, n, NULL, &back, &blen), 0);
}
END_TEST

START_TEST(seal_too_short)
{
	static const unsigned char	 zero[CRYPTO_SEAL_OVERHEAD];
	unsigned char			*back;
	size_t				 blen;

	ck_assert_int_eq(open_ok(key, NULL, 0, NULL, &back, &blen), -1);
	ck_assert_int_eq(open_ok(key, zero, 0, NULL, &back, &blen), -1);
	ck_assert_int_eq(open_ok(key, zero, CRYPTO_SEAL_OVERHEAD - 1, NULL,
	    &back, &blen), -1);
	/* Long enough, but not a seal. */
	ck_assert_int_eq(open_ok(key, zero, CRYPTO_SEAL_OVERHEAD, NULL,
	    &back, &blen), -1);
}
END_TEST

/* An independent implementation opens what we seal: nonce || ct || tag. */
START_TEST(seal_layout)
{
	unsigned char		*sealed, out[32];
	unsigned long long	 olen = 0;
	size_t			 n;

	sealed = crypto_seal(&a, key, "layout", 6, "ad", &n);
	ck_assert_int_eq(crypto_aead_xchacha20poly1305_ietf_decrypt_detached(
	    out, NULL, sealed + 24, 6, sealed + 30,
	    (const unsigned char *)"ad", 2, sealed, key), 0);
	ck_assert_int_eq(memcmp(out, "layout", 6), 0);
	ck_assert_int_eq(crypto_aead_xchacha20poly1305_ietf_decrypt(out, &olen,
	    NULL, sealed + 24, n - 24, (const unsigned char *)"ad", 2, sealed,
	    key), 0);
	ck_assert_uint_eq(olen, 6);
}
END_TEST

/* ---- keyed hash ---- */

static char *
keyed_hex(const unsigned char k[32], const char *purpose, const char *s)
{
	unsigned char	 out[32];

	crypto_keyed_hash(k, purpose, s, out);
	return crypto_hex_encode(&a, out, 32);
}

/* HMAC-SHA256 by OpenSSL over purpose, a 0 byte, then s. */
static char *
ossl_hex(const unsigned char k[32], const char *purpose, const char *s)
{
	unsigned char	 md[EVP_MAX_MD_SIZE];
	unsigned int	 mdlen = 0;
	size_t		 plen = strlen(purpose), slen = strlen(s);
	char		*data;

	data = arena_alloc(&a, plen + 1 + slen + 1);
	memcpy(data, purpose, plen);
	memcpy(data + plen + 1, s, slen);
	ck_assert_ptr_nonnull(HMAC(EVP_sha256(), k, 32,
	    (const unsigned char *)data, plen + 1 + slen, md, &mdlen));
	ck_assert_uint_eq(mdlen, 32);
	return crypto_hex_encode(&a, md, mdlen);
}

static char *
plain_hex_n(const unsigned char k[32], const char *m, size_t n)
{
	unsigned char	 out[32];

	crypto_hmac_sha256(k, 32, m, n, out);
	return crypto_hex_encode(&a, out, 32);
}

static char *
plain_hex(const unsigned char k[32], const char *m)
{
	return plain_hex_n(k, m, strlen(m));
}

/* Computed outside this code base (Python hmac, key bytes 0..31). */
START_TEST(keyed_hash_vector)
{
	ck_assert_str_eq(keyed_hex(key, "email_code", "123456"),
	    "65681d7087dc494dd920edf0089bb52e60662dc3d83b5a6dfb386b2b9c65baa9");
	ck_assert_str_eq(keyed_hex(key, "", ""),
	    "e711546e3faad4c7c4aa756bc26cad6abea8241984a0f6b0839c70ca61c4ef88");
	ck_assert_str_eq(keyed_hex(key, NULL, NULL), keyed_hex(key, "", ""));
}
END_TEST

static const struct {
	const char	*purpose;
	const char	*s;
} keyed_cases[] = {
	{ "email_code", "123456" },
	{ "email_code", "123457" },
	{ "reset_code", "123456" },
	{ "email_cod", "e123456" },	/* the 0 byte keeps these apart */
	{ "email_code1", "23456" },
	{ "", "email_code" },
	{ "email_code", "" },
	{ "", "" },
	{ "p", "\xc3\xa9" },
};

START_TEST(keyed_hash_openssl)
{
	const char	*p = keyed_cases[_i].purpose, *s = keyed_cases[_i].s;

	ck_assert_str_eq(keyed_hex(key, p, s), ossl_hex(key, p, s));
	ck_assert_str_eq(keyed_hex(key2, p, s), ossl_hex(key2, p, s));
	ck_assert_str_ne(keyed_hex(key, p, s), keyed_hex(key2, p, s));
}
END_TEST

/* No two cases collide: purpose, s and where one ends all count. */
START_TEST(keyed_hash_distinct)
{
	size_t	 i, j, n = sizeof(keyed_cases) / sizeof(keyed_cases[0]);

	for (i = 0; i < n; i++)
		for (j = i + 1; j < n; j++)
			ck_assert_msg(strcmp(
			    keyed_hex(key, keyed_cases[i].purpose, keyed_cases[i].s),
			    keyed_hex(key, keyed_cases[j].purpose, keyed_cases[j].s))
			    != 0, "cases %zu and %zu collide", i, j);
	/* Not the plain HMAC of s, nor of purpose || s without the 0 byte. */
	ck_assert_str_ne(keyed_hex(key, "email_code", "123456"),
	    plain_hex(key, "123456"));
	ck_assert_str_ne(keyed_hex(key, "email_code", "123456"),
	    plain_hex(key, "email_code123456"));
	ck_assert_str_eq(keyed_hex(key, "email_code", "123456"),
	    plain_hex_n(key, "email_code\0" "123456", 17));
}
END_TEST

#define N(x) ((int)(sizeof(x) / sizeof((x)[0])))

static Suite *
seal_suite(void)
{
	Suite	*s = suite_create("seal");
	TCase	*tc;

	tc = tcase_create("seal");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_loop_test(tc, seal_round_trip, 0, N(round_trips));
	tcase_add_test(tc, seal_string);
	tcase_add_test(tc, seal_empty_null_msg);
	tcase_add_test(tc, seal_random_nonce);
	tcase_add_loop_test(tc, seal_ad_binding, 0, N(ad_cases));
	tcase_add_test(tc, seal_wrong_key);
	tcase_add_test(tc, seal_every_byte_flipped);
	tcase_add_test(tc, seal_truncated);
	tcase_add_test(tc, seal_too_short);
	tcase_add_test(tc, seal_layout);
	suite_add_tcase(s, tc);

	tc = tcase_create("keyed_hash");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, keyed_hash_vector);
	tcase_add_loop_test(tc, keyed_hash_openssl, 0, N(keyed_cases));
	tcase_add_test(tc, keyed_hash_distinct);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tcheck_run(seal_suite());
}
