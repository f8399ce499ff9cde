/*
 * lib/crypto.c: UUIDv7 layout and order, ids, base64url, hex, constant-time
 * comparison, SHA-256 (NIST) and HMAC-SHA-256 (RFC 4231) vectors.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <check.h>

#include "core/arena.h"
#include "core/crypto.h"
#include "tcheck.h"

static struct arena	 a;

static void
setup(void)
{
	ck_assert_int_eq(crypto_setup(), 0);
	arena_init(&a);
}

static void
teardown(void)
{
	arena_free(&a);
}

static uint64_t
now_ms(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* ---- UUIDv7 ---- */

START_TEST(uuid7_layout)
{
	unsigned char	 u[16];
	uint64_t	 before, after, ts;
	int		 i, k;

	for (k = 0; k < 100; k++) {
		before = now_ms();
		crypto_uuid7(u);
		after = now_ms();
		ck_assert_uint_eq(u[6] >> 4, 7);		/* version */
		ck_assert_uint_eq(u[8] >> 6, 2);		/* variant 10 */
		for (ts = 0, i = 0; i < 6; i++)
			ts = ts << 8 | u[i];
		/* The counter may carry the stamp a few ms ahead, no more. */
		ck_assert_uint_ge(ts, before);
		ck_assert_uint_le(ts, after + 2);
	}
}
END_TEST

START_TEST(uuid7_time_ordered)
{
	unsigned char	 prev[16], cur[16];
	char		 ps[CRYPTO_UUID_STRLEN + 1], cs[CRYPTO_UUID_STRLEN + 1];
	int		 i;

	crypto_uuid7(prev);
	crypto_uuid_format(prev, ps);
	/* Far more than one per millisecond: the counter keeps order. */
	for (i = 0; i < 20000; i++) {
		crypto_uuid7(cur);
		crypto_uuid_format(cur, cs);
		ck_assert_int_lt(memcmp(prev, cur, 16), 0);
		ck_assert_int_lt(strcmp(ps, cs), 0);
		memcpy(prev, cur, 16);
		memcpy(ps, cs, sizeof(ps));
	}
}
END_TEST

START_TEST(uuid7_random_tail)
{
	unsigned char	 x[16], y[16];

	crypto_uuid7(x);
	crypto_uuid7(y);
	/* 62 random bits: two ids never share them. */
	ck_assert_int_ne(memcmp(x + 9, y + 9, 7), 0);
}
END_TEST

START_TEST(uuid_format_exact)
{
	static const unsigned char u[16] = {
		0x01, 0x90, 0xa5, 0xb2, 0x7c, 0x3e, 0x7d, 0xef,
		0x8a, 0xbc, 0x01, 0x23, 0x45, 0x67, 0x89, 0xab,
	};
	char		 s[CRYPTO_UUID_STRLEN + 1];
	unsigned char	 back[16];

	crypto_uuid_format(u, s);
	ck_assert_str_eq(s, "0190a5b2-7c3e-7def-8abc-0123456789ab");
	ck_assert_int_eq(crypto_uuid_parse(s, back), 0);
	ck_assert_int_eq(memcmp(u, back, 16), 0);
	ck_assert_int_eq(crypto_uuid_parse(
	    "0190A5B2-7C3E-7DEF-8ABC-0123456789AB", back), 0);
	ck_assert_int_eq(memcmp(u, back, 16), 0);
}
END_TEST

static const char *const uuid_valid[] = {
	"00000000-0000-0000-0000-000000000000",
	"ffffffff-ffff-ffff-ffff-ffffffffffff",
	"0190a5b2-7c3e-7def-8abc-0123456789ab",
	"0190A5B2-7c3e-7DEF-8abc-0123456789AB",
};

static const char *const uuid_invalid[] = {
	"",
	"0190a5b2-7c3e-7def-8abc-0123456789a",		/* 35 chars */
	"0190a5b2-7c3e-7def-8abc-0123456789abc",	/* 37 chars */
	"0190a5b27c3e7def8abc0123456789ab",		/* no dashes */
	"0190a5b2-7c3e7-def-8abc-0123456789ab",		/* dash moved */
	"0190a5b2_7c3e_7def_8abc_0123456789ab",
	"0190a5g2-7c3e-7def-8abc-0123456789ab",		/* g */
	"{190a5b2-7c3e-7def-8abc-0123456789a}",
	" 190a5b2-7c3e-7def-8abc-0123456789ab",
	"0190a5b2-7c3e-7def-8abc-0123456789a\n",
	"0190a5b2--7c3e-7def-8abc-0123456789a",
};

START_TEST(uuid_parse_valid)
{
	unsigned char	 u[16];
	char		 s[CRYPTO_UUID_STRLEN + 1];

	ck_assert_int_eq(crypto_uuid_parse(uuid_valid[_i], u), 0);
	crypto_uuid_format(u, s);
	ck_assert_int_eq(strcasecmp(s, uuid_valid[_i]), 0);
}
END_TEST

START_TEST(uuid_parse_invalid)
{
	unsigned char	 u[16];

	ck_assert_int_eq(crypto_uuid_parse(uuid_invalid[_i], u), -1);
}
END_TEST

START_TEST(uuid_parse_null)
{
	unsigned char	 u[16];

	ck_assert_int_eq(crypto_uuid_parse(NULL, u), -1);
}
END_TEST

/* ---- ids ---- */

START_TEST(id_new_format)
{
	char		*id, *bare;
	unsigned char	 u[16];

	id = crypto_id_new(&a, "evt");
	ck_assert_uint_eq(strlen(id), 4 + CRYPTO_UUID_STRLEN);
	ck_assert_int_eq(strncmp(id, "evt_", 4), 0);
	ck_assert_int_eq(crypto_uuid_parse(id + 4, u), 0);
	ck_assert_uint_eq(u[6] >> 4, 7);
	ck_assert_int_eq(crypto_id_valid(id, "evt", 0), 1);
	ck_assert_int_eq(crypto_id_valid(id, "link", 1), 0);
	ck_assert_int_eq(crypto_id_valid(id, "ev", 0), 0);
	bare = crypto_id_new(&a, NULL);
	ck_assert_uint_eq(strlen(bare), CRYPTO_UUID_STRLEN);
	ck_assert_int_eq(crypto_id_valid(bare, "link", 1), 1);
	ck_assert_int_eq(crypto_id_valid(bare, "link", 0), 0);
	ck_assert_str_ne(crypto_id_new(&a, "evt"), id);
}
END_TEST

static const struct {
	const char	*s;
	const char	*prefix;
	int		 bare_ok;
	int		 want;
} id_cases[] = {
	{ "link_0190a5b2-7c3e-7def-8abc-0123456789ab", "link", 0, 1 },
	{ "link_0190a5b2-7c3e-7def-8abc-0123456789ab", "link", 1, 1 },
	{ "0190a5b2-7c3e-7def-8abc-0123456789ab", "link", 1, 1 },
	{ "0190a5b2-7c3e-7def-8abc-0123456789ab", "link", 0, 0 },
	{ "bill_0190a5b2-7c3e-7def-8abc-0123456789ab", "link", 1, 0 },
	{ "link-0190a5b2-7c3e-7def-8abc-0123456789ab", "link", 1, 0 },
	{ "link__0190a5b2-7c3e-7def-8abc-0123456789ab", "link", 1, 0 },
	{ "link_", "link", 1, 0 },
	{ "link", "link", 1, 0 },
	{ "", "link", 1, 0 },
	{ "LINK_0190a5b2-7c3e-7def-8abc-0123456789ab", "link", 0, 0 },
	{ "link_0190a5b2-7c3e-7def-8abc-0123456789ab ", "link", 0, 0 },
	{ "link_0190a5b2-7c3e-7def-8abc-0123456789ab_x", "link", 0, 0 },
	{ "xlink_0190a5b2-7c3e-7def-8abc-0123456789ab", "link", 0, 0 },
	{ NULL, "link", 1, 0 },
};

START_TEST(id_valid_table)
{
	ck_assert_int_eq(crypto_id_valid(id_cases[_i].s, id_cases[_i].prefix,
	    id_cases[_i].bare_ok), id_cases[_i].want);
}
END_TEST

/* ---- base64url ---- */

/* RFC 4648 section 10, then the two url-safe characters. */
static const struct {
	const char	*bin;
	size_t		 len;
	const char	*b64;
} b64_valid[] = {
	{ "", 0, "" },
	{ "f", 1, "Zg" },
	{ "fo", 2, "Zm8" },
	{ "foo", 3, "Zm9v" },
	{ "foob", 4, "Zm9vYg" },
	{ "fooba", 5, "Zm9vYmE" },
	{ "foobar", 6, "Zm9vYmFy" },
	{ "\xfb\xff", 2, "-_8" },
	{ "\xfb\xef\xff", 3, "--__" },
	{ "\0\0\0", 3, "AAAA" },
	{ "a\0b", 3, "YQBi" },
};

START_TEST(b64_encode_table)
{
	ck_assert_str_eq(crypto_b64url_encode(&a, b64_valid[_i].bin,
	    b64_valid[_i].len), b64_valid[_i].b64);
}
END_TEST

START_TEST(b64_decode_table)
{
	unsigned char	*out;
	size_t		 len;

	ck_assert_int_eq(crypto_b64url_decode(&a, b64_valid[_i].b64, &out,
	    &len), 0);
	ck_assert_uint_eq(len, b64_valid[_i].len);
	ck_assert_int_eq(memcmp(out, b64_valid[_i].bin, len), 0);
	ck_assert_uint_eq(out[len], 0);
}
END_TEST

static const char *const b64_invalid[] = {
	"Zg=",		/* padding */
	"Zg==",
	"Zm9v=",
	"Z",		/* a lone character */
	"Zm9vY",
	"Zh",		/* non-zero bits past the last byte */
	"Zm9",
	"Zm+v",		/* standard alphabet */
	"Zm/v",
	"Zm9 v",	/* whitespace */
	"Zm9v\n",
	" Zm9v",
	"Zm9v.",
	"\xc3\xa9\xc3\xa9",	/* libsodium 1.0.18 takes high bytes as letters */
	"Zm9\x80",
	"\xff\xff\xff\xff",
	"*",
};

START_TEST(b64_decode_invalid)
{
	unsigned char	*out = (unsigned char *)"sentinel";
	size_t		 len = 99;

	ck_assert_int_eq(crypto_b64url_decode(&a, b64_invalid[_i], &out,
	    &len), -1);
	ck_assert_ptr_null(out);
	ck_assert_uint_eq(len, 0);
}
END_TEST

START_TEST(b64_round_trip)
{
	unsigned char	 buf[300], *out;
	char		*s;
	size_t		 n, len, i;

	for (n = 0; n < sizeof(buf); n++) {
		crypto_random_bytes(buf, n);
		s = crypto_b64url_encode(&a, buf, n);
		ck_assert_uint_eq(strlen(s), (n * 4 + 2) / 3);
		for (i = 0; s[i] != '\0'; i++)
			ck_assert(strchr("+/=", s[i]) == NULL);
		ck_assert_int_eq(crypto_b64url_decode(&a, s, &out, &len), 0);
		ck_assert_uint_eq(len, n);
		ck_assert_int_eq(memcmp(out, buf, n), 0);
	}
	ck_assert_int_eq(crypto_b64url_decode(&a, NULL, &out, &len), -1);
}
END_TEST

/* ---- hex ---- */

START_TEST(hex_table)
{
	static const unsigned char	 bin[4] = { 0x00, 0xab, 0x7f, 0xff };
	unsigned char			 out[4];

	ck_assert_str_eq(crypto_hex_encode(&a, bin, 4), "00ab7fff");
	ck_assert_str_eq(crypto_hex_encode(&a, bin, 0), "");
	ck_assert_int_eq(crypto_hex_decode("00AB7fFf", out, 4), 0);
	ck_assert_int_eq(memcmp(out, bin, 4), 0);
	ck_assert_int_eq(crypto_hex_decode("", out, 0), 0);
	ck_assert_int_eq(crypto_hex_decode("00ab7ff", out, 4), -1);
	ck_assert_int_eq(crypto_hex_decode("00ab7fff00", out, 4), -1);
	ck_assert_int_eq(crypto_hex_decode("00ab7ffg", out, 4), -1);
	ck_assert_int_eq(crypto_hex_decode("00ab 7ff", out, 4), -1);
	ck_assert_int_eq(crypto_hex_decode("00ab:fff", out, 4), -1);
	ck_assert_int_eq(crypto_hex_decode("00ab7f\xc3\xa9", out, 4), -1);
	ck_assert_int_eq(crypto_hex_decode("00", out, 4), -1);
	ck_assert_int_eq(crypto_hex_decode(NULL, out, 4), -1);
}
END_TEST

/* ---- constant-time comparison ---- */

static const struct {
	const char	*a, *b;
	int		 want;
} streq_cases[] = {
	{ "", "", 1 },
	{ "secret", "secret", 1 },
	{ "secret", "Secret", 0 },	/* first byte differs */
	{ "secret", "secreT", 0 },	/* last byte differs */
	{ "secret", "secret2", 0 },	/* prefix */
	{ "secret2", "secret", 0 },
	{ "", "a", 0 },
	{ "a", "", 0 },
	{ "bds_sandbox_x", "bds_sandbox_y", 0 },
	{ NULL, "a", 0 },
	{ "a", NULL, 0 },
	{ NULL, NULL, 0 },
};

START_TEST(ct_streq_table)
{
	ck_assert_int_eq(crypto_ct_streq(streq_cases[_i].a, streq_cases[_i].b),
	    streq_cases[_i].want);
}
END_TEST

START_TEST(ct_equal_bytes)
{
	unsigned char	 x[32], y[32];
	size_t		 i;

	crypto_random_bytes(x, sizeof(x));
	memcpy(y, x, sizeof(y));
	ck_assert_int_eq(crypto_ct_equal(x, y, 32), 1);
	ck_assert_int_eq(crypto_ct_equal(x, y, 0), 1);
	for (i = 0; i < 32; i++) {
		y[i] ^= 0x01;
		ck_assert_int_eq(crypto_ct_equal(x, y, 32), 0);
		ck_assert_int_eq(crypto_ct_equal(x, y, i), 1);
		y[i] ^= 0x01;
	}
}
END_TEST

/* ---- hashes ---- */

static const struct {
	const char	*msg;
	const char	*hex;
} sha256_vectors[] = {
	{ "", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" },
	{ "abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" },
	{ "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
	  "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1" },
};

START_TEST(sha256_nist)
{
	unsigned char	 md[32];

	crypto_sha256(sha256_vectors[_i].msg, strlen(sha256_vectors[_i].msg), md);
	ck_assert_str_eq(crypto_hex_encode(&a, md, 32), sha256_vectors[_i].hex);
}
END_TEST

START_TEST(sha256_million_a)
{
	unsigned char	 md[32];
	char		*m;

	m = malloc(1000000);
	memset(m, 'a', 1000000);
	crypto_sha256(m, 1000000, md);
	free(m);
	ck_assert_str_eq(crypto_hex_encode(&a, md, 32),
	    "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}
END_TEST

/* RFC 4231 test cases 1-4, 6 and 7 (5 is truncated output). */
static const struct {
	unsigned char	 kbyte;		/* key of klen bytes of kbyte... */
	size_t		 klen;
	const char	*key;		/* ...or this key when set */
	unsigned char	 dbyte;		/* data of dlen bytes of dbyte... */
	size_t		 dlen;
	const char	*data;		/* ...or this text when set */
	const char	*hex;
} hmac_vectors[] = {
	{ 0x0b, 20, NULL, 0, 0, "Hi There",
	  "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7" },
	{ 0, 4, "Jefe", 0, 0, "what do ya want for nothing?",
	  "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843" },
	{ 0xaa, 20, NULL, 0xdd, 50, NULL,
	  "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe" },
	{ 0, 25, "\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f"
	  "\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19", 0xcd, 50, NULL,
	  "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b" },
	{ 0xaa, 131, NULL, 0, 0,
	  "Test Using Larger Than Block-Size Key - Hash Key First",
	  "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54" },
	{ 0xaa, 131, NULL, 0, 0,
	  "This is a test using a larger than block-size key and a larger "
	  "than block-size data. The key needs to be hashed before being "
	  "used by the HMAC algorithm.",
	  "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2" },
};

START_TEST(hmac_rfc4231)
{
	unsigned char	 key[131], data[64], mac[32];
	const void	*k = key, *d = data;
	size_t		 dlen;

	memset(key, hmac_vectors[_i].kbyte, sizeof(key));
	memset(data, hmac_vectors[_i].dbyte, sizeof(data));
	if (hmac_vectors[_i].key != NULL)
		k = hmac_vectors[_i].key;
	dlen = hmac_vectors[_i].dlen;
	if (hmac_vectors[_i].data != NULL) {
		d = hmac_vectors[_i].data;
		dlen = strlen(hmac_vectors[_i].data);
	}
	crypto_hmac_sha256(k, hmac_vectors[_i].klen, d, dlen, mac);
	ck_assert_str_eq(crypto_hex_encode(&a, mac, 32), hmac_vectors[_i].hex);
}
END_TEST

#define N(x) ((int)(sizeof(x) / sizeof((x)[0])))

static Suite *
crypto_suite(void)
{
	Suite	*s = suite_create("crypto");
	TCase	*tc;

	tc = tcase_create("uuid");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, uuid7_layout);
	tcase_add_test(tc, uuid7_time_ordered);
	tcase_add_test(tc, uuid7_random_tail);
	tcase_add_test(tc, uuid_format_exact);
	tcase_add_loop_test(tc, uuid_parse_valid, 0, N(uuid_valid));
	tcase_add_loop_test(tc, uuid_parse_invalid, 0, N(uuid_invalid));
	tcase_add_test(tc, uuid_parse_null);
	tcase_add_test(tc, id_new_format);
	tcase_add_loop_test(tc, id_valid_table, 0, N(id_cases));
	suite_add_tcase(s, tc);

	tc = tcase_create("encoding");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_loop_test(tc, b64_encode_table, 0, N(b64_valid));
	tcase_add_loop_test(tc, b64_decode_table, 0, N(b64_valid));
	tcase_add_loop_test(tc, b64_decode_invalid, 0, N(b64_invalid));
	tcase_add_test(tc, b64_round_trip);
	tcase_add_test(tc, hex_table);
	suite_add_tcase(s, tc);

	tc = tcase_create("compare_hash");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_loop_test(tc, ct_streq_table, 0, N(streq_cases));
	tcase_add_test(tc, ct_equal_bytes);
	tcase_add_loop_test(tc, sha256_nist, 0, N(sha256_vectors));
	tcase_add_test(tc, sha256_million_a);
	tcase_add_loop_test(tc, hmac_rfc4231, 0, N(hmac_vectors));
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tcheck_run(crypto_suite());
}
