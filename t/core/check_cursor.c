/*
 * lib/cursor.c: round trips, and every kind of forgery or damage is
 * refused: flipped bits anywhere, truncation, wrong key or scope, garbage,
 * overlong input, and authentic-but-malformed payloads (wrong version,
 * truncated fields, trailing bytes, NUL in a field).
 */
#include <string.h>

#include <check.h>
#include <sodium.h>

#include "core/arena.h"
#include "core/crypto.h"
#include "core/cursor.h"
#include "tcheck.h"

static struct arena	 a;
static unsigned char	 key[32], key2[32];

static void
setup(void)
{
	ck_assert_int_eq(crypto_setup(), 0);
	arena_init(&a);
	memset(key, 0x42, sizeof(key));
	memset(key2, 0x42, sizeof(key2));
	key2[31] ^= 0x01;
}

static void
teardown(void)
{
	arena_free(&a);
}

static const char *const f_keyset[] = {
	"2024-05-01T10:00:00.123456Z", "bill_0190a5b2-7c3e-7def-8abc-0123456789ab"
};
static const char *const f_one[] = { "42" };
static const char *const f_empty[] = { "" };
static const char *const f_utf8[] = { "\xc3\xa9t\xc3\xa9", "\xe6\x97\xa5", "" };
static const char *const f_eight[] = { "1", "2", "3", "4", "5", "6", "7", "8" };
static const char *const f_odd[] = { "a=b&c", "../..", "\"quoted\"", "+/=" };

static const struct {
	const char		*scope;
	const char *const	*fields;
	size_t			 n;
} rt_valid[] = {
	{ "bills:cli_1", f_keyset, 2 },
	{ "bills:cli_1", f_one, 1 },
	{ "links:cli_2", f_empty, 1 },
	{ "x", f_utf8, 3 },
	{ "events:cli_3", f_eight, 8 },
	{ "", f_odd, 4 },
	{ "nothing", NULL, 0 },
};

START_TEST(round_trip)
{
	char	*c, **out;
	size_t	 n, i;

	c = cursor_encode(&a, key, rt_valid[_i].scope, rt_valid[_i].fields,
	    rt_valid[_i].n);
	ck_assert_ptr_nonnull(c);
	ck_assert_uint_le(strlen(c), CURSOR_MAX_LEN);
	/* base64url only: safe in a query string as is. */
	ck_assert_uint_eq(strspn(c, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmn"
	    "opqrstuvwxyz0123456789-_"), strlen(c));
	ck_assert_int_eq(cursor_decode(&a, key, rt_valid[_i].scope, c, &out, &n),
	    0);
	ck_assert_uint_eq(n, rt_valid[_i].n);
	for (i = 0; i < n; i++)
		ck_assert_str_eq(out[i], rt_valid[_i].fields[i]);
	ck_assert_ptr_null(out[n]);
}
END_TEST

START_TEST(round_trip_long_field)
{
	char		 big[700], *c, **out;
	const char	*fields[1] = { big };
	size_t		 n;

	memset(big, 'z', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	c = cursor_encode(&a, key, "s", fields, 1);
	ck_assert_ptr_nonnull(c);
	ck_assert_int_eq(cursor_decode(&a, key, "s", c, &out, &n), 0);
	ck_assert_uint_eq(n, 1);
	ck_assert_str_eq(out[0], big);
}
END_TEST

START_TEST(encode_refuses)
{
	char		 big[800];
	const char	*fields[9] = { "1", "2", "3", "4", "5", "6", "7", "8", "9" };
	const char	*withnull[2] = { "a", NULL };
	const char	*longf[1] = { big };

	ck_assert_ptr_null(cursor_encode(&a, key, "s", fields, 9));
	ck_assert_ptr_null(cursor_encode(&a, key, "s", withnull, 2));
	ck_assert_ptr_null(cursor_encode(&a, key, "s", NULL, 1));
	/* 800 bytes make more than CURSOR_MAX_LEN characters. */
	memset(big, 'z', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	ck_assert_ptr_null(cursor_encode(&a, key, "s", longf, 1));
}
END_TEST

START_TEST(same_input_same_cursor)
{
	char	*c1, *c2;

	/* Deterministic: the same position always gives the same cursor. */
	c1 = cursor_encode(&a, key, "bills:cli_1", f_keyset, 2);
	c2 = cursor_encode(&a, key, "bills:cli_1", f_keyset, 2);
	ck_assert_str_eq(c1, c2);
	c2 = cursor_encode(&a, key2, "bills:cli_1", f_keyset, 2);
	ck_assert_str_ne(c1, c2);
}
END_TEST

static void
assert_refused(const char *scope, const unsigned char *k, const char *c)
{
	char	**out = (char **)"sentinel";
	size_t	 n = 99;

	ck_assert_int_eq(cursor_decode(&a, k, scope, c, &out, &n), -1);
	ck_assert_ptr_null(out);
	ck_assert_uint_eq(n, 0);
}

START_TEST(tamper_every_bit)
{
	unsigned char	*raw, *copy;
	size_t		 len, i, n;
	int		 bit;
	char		*c, **out;

	c = cursor_encode(&a, key, "bills:cli_1", f_keyset, 2);
	ck_assert_int_eq(crypto_b64url_decode(&a, c, &raw, &len), 0);
	copy = arena_alloc(&a, len);
	for (i = 0; i < len; i++) {
		for (bit = 0; bit < 8; bit++) {
			memcpy(copy, raw, len);
			copy[i] ^= (unsigned char)(1u << bit);
			assert_refused("bills:cli_1", key,
			    crypto_b64url_encode(&a, copy, len));
		}
	}
	/* The original still opens. */
	memcpy(copy, raw, len);
	c = crypto_b64url_encode(&a, copy, len);
	ck_assert_int_eq(cursor_decode(&a, key, "bills:cli_1", c, &out, &n), 0);
	ck_assert_uint_eq(n, 2);
}
END_TEST

START_TEST(tamper_every_char)
{
	static const char	 alpha[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	    "abcdefghijklmnopqrstuvwxyz0123456789-_";
	char			*c, *t;
	size_t			 i, j, len;

	c = cursor_encode(&a, key, "s", f_keyset, 2);
	len = strlen(c);
	t = arena_strdup(&a, c);
	for (i = 0; i < len; i++) {
		for (j = 0; alpha[j] != '\0'; j++) {
			if (alpha[j] == c[i])
				continue;
			t[i] = alpha[j];
			assert_refused("s", key, t);
		}
		t[i] = c[i];
	}
}
END_TEST

START_TEST(truncated_every_length)
{
	char	*c, *t;
	size_t	 i, len;

	c = cursor_encode(&a, key, "s", f_keyset, 2);
	len = strlen(c);
	for (i = 0; i < len; i++) {
		t = arena_strndup(&a, c, i);
		assert_refused("s", key, t);
	}
}
END_TEST

START_TEST(wrong_key_or_scope)
{
	char	*c;

	c = cursor_encode(&a, key, "bills:cli_1", f_keyset, 2);
	assert_refused("bills:cli_1", key2, c);
	assert_refused("bills:cli_2", key, c);		/* another tenant */
	assert_refused("links:cli_1", key, c);		/* another list */
	assert_refused("bills:cli_", key, c);
	assert_refused("bills:cli_10", key, c);
	assert_refused("", key, c);
	assert_refused(NULL, key, c);
	/* Scope and payload bytes do not slide into one another. */
	c = cursor_encode(&a, key, "ab", f_one, 1);
	assert_refused("a", key, c);
	assert_refused("abc", key, c);
}
END_TEST

static const char *const garbage[] = {
	"",
	"A",
	"AAAA",
	"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
	"!!!!",
	"====",
	"null",
	"eyJpZCI6MX0",			/* base64 of {"id":1} */
	"Zm9vYmFy Zm9vYmFy",
	"\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9",
	"../../etc/passwd",
	"%41%41%41%41",
};

START_TEST(garbage_refused)
{
	assert_refused("s", key, garbage[_i]);
}
END_TEST

START_TEST(appended_refused)
{
	char	*c;

	c = cursor_encode(&a, key, "s", f_keyset, 2);
	assert_refused("s", key, arena_printf(&a, "%sA", c));
	assert_refused("s", key, arena_printf(&a, "%sAAAA", c));
	assert_refused("s", key, arena_printf(&a, "%s=", c));
	assert_refused("s", key, arena_printf(&a, "%s==", c));
	assert_refused("s", key, arena_printf(&a, " %s", c));
	assert_refused("s", key, arena_printf(&a, "%s\n", c));
	assert_refused("s", key, arena_printf(&a, "%s%s", c, c));
	assert_refused("s", key, NULL);
}
END_TEST

START_TEST(overlong_refused)
{
	char	*c;

	c = arena_alloc(&a, 100001);
	memset(c, 'A', 100000);
	assert_refused("s", key, c);
	c[CURSOR_MAX_LEN + 1] = '\0';
	assert_refused("s", key, c);
}
END_TEST

/*
 * Authentic but malformed payloads: the MAC is made exactly as cursor.c
 * makes it, so these reach the parser behind it.
 */
static char *
forge(const char *scope, const unsigned char *p, size_t len)
{
	crypto_generichash_state	 st;
	unsigned char			 buf[2048], slen[2];
	size_t				 sl = strlen(scope);

	ck_assert_uint_le(len + 16, sizeof(buf));
	memcpy(buf, p, len);
	slen[0] = (unsigned char)(sl >> 8);
	slen[1] = (unsigned char)sl;
	crypto_generichash_init(&st, key, 32, 16);
	crypto_generichash_update(&st, slen, 2);
	crypto_generichash_update(&st, (const unsigned char *)scope, sl);
	crypto_generichash_update(&st, buf, len);
	crypto_generichash_final(&st, buf + len, 16);
	return crypto_b64url_encode(&a, buf, len + 16);
}

static const struct {
	const char	*what;
	const char	*p;
	size_t		 len;
} forged_invalid[] = {
	{ "empty payload",	"", 0 },
	{ "version only",	"\x01", 1 },
	{ "version 0",		"\x00\x01\x00\x01x", 5 },
	{ "version 2",		"\x02\x01\x00\x01x", 5 },
	{ "9 fields",		"\x01\x09", 2 },
	{ "255 fields",		"\x01\xff", 2 },
	{ "length cut",		"\x01\x01\x00", 3 },
	{ "field cut",		"\x01\x01\x00\x05" "abc", 7 },
	{ "field missing",	"\x01\x02\x00\x01" "a", 5 },
	{ "trailing byte",	"\x01\x01\x00\x01" "ab", 6 },
	{ "trailing field",	"\x01\x00\x00\x01" "a", 5 },
	{ "NUL in field",	"\x01\x01\x00\x03" "a\0b", 7 },
	{ "NUL field",		"\x01\x01\x00\x01" "\0", 5 },
};

START_TEST(forged_malformed)
{
	assert_refused("s", key, forge("s", (const unsigned char *)
	    forged_invalid[_i].p, forged_invalid[_i].len));
}
END_TEST

START_TEST(forged_well_formed_opens)
{
	char	**out;
	size_t	 n;

	/* The forge helper matches the format: a good payload opens. */
	ck_assert_int_eq(cursor_decode(&a, key, "s", forge("s",
	    (const unsigned char *)"\x01\x02\x00\x01" "a\x00\x00", 7), &out,
	    &n), 0);
	ck_assert_uint_eq(n, 2);
	ck_assert_str_eq(out[0], "a");
	ck_assert_str_eq(out[1], "");
}
END_TEST

START_TEST(forged_overlong)
{
	unsigned char	 p[1000];

	/* Authentic, but longer than any cursor we hand out. */
	memset(p, 'x', sizeof(p));
	p[0] = 1;
	p[1] = 1;
	p[2] = (sizeof(p) - 4) >> 8;
	p[3] = (sizeof(p) - 4) & 0xff;
	assert_refused("s", key, forge("s", p, sizeof(p)));
}
END_TEST

#define N(x) ((int)(sizeof(x) / sizeof((x)[0])))

static Suite *
cursor_suite(void)
{
	Suite	*s = suite_create("cursor");
	TCase	*tc;

	tc = tcase_create("valid");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_loop_test(tc, round_trip, 0, N(rt_valid));
	tcase_add_test(tc, round_trip_long_field);
	tcase_add_test(tc, encode_refuses);
	tcase_add_test(tc, same_input_same_cursor);
	tcase_add_test(tc, forged_well_formed_opens);
	suite_add_tcase(s, tc);

	tc = tcase_create("invalid");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, tamper_every_bit);
	tcase_add_test(tc, tamper_every_char);
	tcase_add_test(tc, truncated_every_length);
	tcase_add_test(tc, wrong_key_or_scope);
	tcase_add_loop_test(tc, garbage_refused, 0, N(garbage));
	tcase_add_test(tc, appended_refused);
	tcase_add_test(tc, overlong_refused);
	tcase_add_loop_test(tc, forged_malformed, 0, N(forged_invalid));
	tcase_add_test(tc, forged_overlong);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tcheck_run(cursor_suite());
}
