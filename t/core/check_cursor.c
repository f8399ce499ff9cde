/*
 * lib/core/cursor.c: round trips, and every kind of forgery or damage is
 * refused: flipped bits anywhere, truncation, wrong key or scope, garbage,
 * overlong input, and authentic-but-malformed payloads (wrong version,
 * truncated fields, trailing bytes, NUL in a field). The list pages: the
 * scope's spelling, a cursor refused in another list, tenant or filter set
 * or when tampered with, a position's round trip, the page sizes, and
 * each page shape member by member from rows made here.
 */
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <json-c/json.h>
#include <libpq-fe.h>
#include <sodium.h>

#include "core/arena.h"
#include "core/config.h"
#include "core/crypto.h"
#include "core/cursor.h"
#include "core/json.h"
#include "core/req.h"
#include "core/validate.h"
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


/* ---- list pages ---- */

static struct config	 cfg;
static struct req	 r;

static void
page_setup(void)
{
	setup();
	memset(&cfg, 0, sizeof(cfg));
	memcpy(cfg.cursor_key, key, sizeof(key));
	memset(&r, 0, sizeof(r));
	r.arena = &a;
	r.cfg = &cfg;
	r.http.request_id = "req-1";
	r.client_id = "cli_1";
	r.env = "sandbox";
	r.query = json_obj(&a);
}

/* A keyset list of the tenant, and one bound to no tenant (a catalog). */
static const struct cursor_list l_keyset = {
	.name = "things", .flags = CURSOR_TENANT | CURSOR_KEYSET, .shape = CURSOR_NAMED,
	.key = "things", .limit = 7, .prefix = "thg", .cols = { 1, 2 }, .json_col = 0,
};
static const struct cursor_list l_other = {
	.name = "others", .flags = CURSOR_TENANT | CURSOR_KEYSET, .shape = CURSOR_NAMED,
	.key = "others", .limit = 7, .prefix = "thg", .cols = { 1, 2 },
};
static const struct cursor_list l_catalog = {
	.name = "catalog", .shape = CURSOR_COUNTED, .key = "entries", .limit = 3,
	.npos = 3, .prefix = "thg", .cols = { 1, 2, 3 }, .total_col = 0, .json_col = 4,
	.hint = "same filters", .message = "not for these filters",
};
static const struct cursor_list l_any = {
	.name = "delta", .flags = CURSOR_TENANT, .shape = CURSOR_DELTA, .key = "data",
	.limit = CURSOR_LIMIT_DEFAULT,
};

#define ID1 "thg_0190a5b2-7c3e-7def-8abc-0123456789ab"
#define AT1 "2024-05-01T10:00:00.123456Z"

/* The cursor of position fields (n) in list under filters, for r as it is. */
static const char *
cursor_for(const struct cursor_list *l, const char *const *filters, size_t nf,
    const char *const *fields, size_t n)
{
	struct cursor_page pg;

	memset(&pg, 0, sizeof(pg));
	pg.list = l;
	pg.scope = cursor_scope(&r, l, filters, nf);
	cursor_page_next(&r, &pg, fields, n);
	ck_assert_ptr_nonnull(pg.next);
	return pg.next;
}

/* Open a page with query cursor c (NULL: none): the status. */
static int
open_with(const struct cursor_list *l, const char *const *filters, size_t nf,
    const char *c, struct cursor_page *pg)
{
	r.query = json_obj(&a);
	r.out = NULL;
	if (c != NULL)
		json_set_str(r.query, "cursor", c);
	return cursor_page_open(&r, l, filters, nf, pg);
}

static void
assert_invalid(int rc, const char *hint)
{
	ck_assert_int_eq(rc, 400);
	ck_assert_ptr_nonnull(r.out);
	ck_assert_str_eq(json_get_str(r.out, "error_code"), "INVALID_CURSOR");
	ck_assert_str_eq(json_get_str(r.out, "hint"), hint);
}

static const struct {
	const char		*client, *env;
	const struct cursor_list *list;
	const char		*f[3];
	size_t			 n;
	const char		*want;
} scopes[] = {
	{ "cli_1", "sandbox", &l_keyset, { NULL }, 0, "things/cli_1/sandbox" },
	/* an id as it is: bills_sync's "bills_sync/<client>/<env>/<link>" */
	{ "cli_1", "live", &l_any, { "link_0190a5b2-7c3e-7def-8abc-0123456789ab" }, 1,
	  "delta/cli_1/live/link_0190a5b2-7c3e-7def-8abc-0123456789ab" },
	{ "cli_1", "sandbox", &l_keyset, { NULL, "", "-" }, 3, "things/cli_1/sandbox/-//%2D" },
	{ "cli_1", "sandbox", &l_keyset, { "a/b", "50%", "-x-" }, 3,
	  "things/cli_1/sandbox/a%2Fb/50%25/%2Dx-" },
	{ "cli_2", "sandbox", &l_catalog, { "x", NULL }, 2, "catalog/x/-" },
};

START_TEST(scope_spelling)
{
	r.client_id = scopes[_i].client;
	r.env = scopes[_i].env;
	ck_assert_str_eq(cursor_scope(&r, scopes[_i].list, scopes[_i].f, scopes[_i].n),
	    scopes[_i].want);
}
END_TEST

/* Filter sets that must never share a scope. */
static const char *const fsets[][2] = {
	{ NULL, NULL }, { "-", NULL }, { "", NULL }, { NULL, "" }, { "a/b", NULL },
	{ "a", "b" }, { "a%2Fb", NULL }, { "%2D", NULL }, { "a/", "b" }, { "a", "/b" },
};

START_TEST(scope_distinct)
{
	const char *s[sizeof(fsets) / sizeof(fsets[0])];

	for (size_t i = 0; i < sizeof(fsets) / sizeof(fsets[0]); i++) {
		s[i] = cursor_scope(&r, &l_keyset, fsets[i], 2);
		for (size_t j = 0; j < i; j++)
			ck_assert_str_ne(s[i], s[j]);
	}
}
END_TEST

START_TEST(keyset_first_page)
{
	struct cursor_page pg;

	ck_assert_int_eq(open_with(&l_keyset, NULL, 0, NULL, &pg), 0);
	ck_assert_str_eq(pg.pos[0], "infinity");
	ck_assert_str_eq(pg.pos[1], "thg_~");
	ck_assert_uint_eq(pg.npos, 0);
	ck_assert_int_eq(pg.limit, 7);
	ck_assert_str_eq(pg.limit1, "8");
	ck_assert_str_eq(pg.scope, "things/cli_1/sandbox");
	/* not keyset: nothing */
	ck_assert_int_eq(open_with(&l_catalog, NULL, 0, NULL, &pg), 0);
	ck_assert_ptr_null(pg.pos[0]);
	ck_assert_int_eq(pg.limit, 3);
	/* limit as asked */
	r.query = json_obj(&a);
	json_set_int(r.query, "limit", 500);
	ck_assert_int_eq(cursor_page_open(&r, &l_keyset, NULL, 0, &pg), 0);
	ck_assert_int_eq(pg.limit, 500);
	ck_assert_str_eq(pg.limit1, "501");
}
END_TEST

START_TEST(position_round_trip)
{
	static const char *const f[2] = { "s", NULL };
	const char *const kpos[2] = { AT1, ID1 };
	const char *const cpos[3] = { "0.75", "caf\xc3\xa9 / 50%", ID1 };
	const char *const dpos[3] = { "12", "40", "99" };
	struct cursor_page pg;

	ck_assert_int_eq(open_with(&l_keyset, f, 2, cursor_for(&l_keyset, f, 2, kpos, 2),
	    &pg), 0);
	ck_assert_uint_eq(pg.npos, 2);
	ck_assert_str_eq(pg.pos[0], AT1);
	ck_assert_str_eq(pg.pos[1], ID1);
	ck_assert_ptr_null(pg.pos[2]);

	ck_assert_int_eq(open_with(&l_catalog, f, 2, cursor_for(&l_catalog, f, 2, cpos, 3),
	    &pg), 0);
	ck_assert_uint_eq(pg.npos, 3);
	for (int i = 0; i < 3; i++)
		ck_assert_str_eq(pg.pos[i], cpos[i]);

	/* npos 0: any count reaches the handler */
	for (size_t n = 1; n <= 3; n++) {
		ck_assert_int_eq(open_with(&l_any, NULL, 0, cursor_for(&l_any, NULL, 0, dpos,
		    n), &pg), 0);
		ck_assert_uint_eq(pg.npos, n);
		ck_assert_str_eq(pg.pos[n - 1], dpos[n - 1]);
	}
}
END_TEST

START_TEST(scope_mismatch_refused)
{
	static const char *const f[2] = { "ACTIVE", NULL };
	static const char *const g[2] = { "ACTIVE", "u1" };
	static const char *const h[2] = { NULL, "ACTIVE" };
	const char *const pos[2] = { AT1, ID1 };
	struct cursor_page pg;
	const char *c = cursor_for(&l_keyset, f, 2, pos, 2);

	ck_assert_int_eq(open_with(&l_keyset, f, 2, c, &pg), 0);
	/* other filters */
	assert_invalid(open_with(&l_keyset, g, 2, c, &pg),
	    "pass next_cursor from the previous page as it is");
	assert_invalid(open_with(&l_keyset, h, 2, c, &pg),
	    "pass next_cursor from the previous page as it is");
	assert_invalid(open_with(&l_keyset, NULL, 0, c, &pg),
	    "pass next_cursor from the previous page as it is");
	/* another list with the same fields */
	assert_invalid(open_with(&l_other, f, 2, c, &pg),
	    "pass next_cursor from the previous page as it is");
	/* another client, another environment */
	r.client_id = "cli_2";
	assert_invalid(open_with(&l_keyset, f, 2, c, &pg),
	    "pass next_cursor from the previous page as it is");
	r.client_id = "cli_1";
	r.env = "live";
	assert_invalid(open_with(&l_keyset, f, 2, c, &pg),
	    "pass next_cursor from the previous page as it is");
	r.env = "sandbox";
	ck_assert_int_eq(open_with(&l_keyset, f, 2, c, &pg), 0);

	/* a catalog cursor is every client's, and its list's own 400 */
	c = cursor_for(&l_catalog, f, 2, (const char *const[3]){ "1", "k", ID1 }, 3);
	r.client_id = "cli_9";
	ck_assert_int_eq(open_with(&l_catalog, f, 2, c, &pg), 0);
	assert_invalid(open_with(&l_catalog, g, 2, c, &pg), "same filters");
	ck_assert_str_eq(json_get_str(r.out, "error_message"), "not for these filters");
}
END_TEST

/* Authentic cursors whose fields do not fit the list. */
START_TEST(fields_refused)
{
	static const char *const bad2[][2] = {
		{ "yesterday", ID1 }, { AT1, "obp_0190a5b2-7c3e-7def-8abc-0123456789ab" },
		{ AT1, "thg_x" }, { ID1, AT1 }, { "", "" },
	};
	struct cursor_page pg;

	for (size_t i = 0; i < sizeof(bad2) / sizeof(bad2[0]); i++)
		assert_invalid(open_with(&l_keyset, NULL, 0, cursor_for(&l_keyset, NULL, 0,
		    bad2[i], 2), &pg), "pass next_cursor from the previous page as it is");
	/* counts other than the list's */
	assert_invalid(open_with(&l_keyset, NULL, 0, cursor_for(&l_keyset, NULL, 0,
	    (const char *const[1]){ AT1 }, 1), &pg), "pass next_cursor from the previous page as it is");
	assert_invalid(open_with(&l_keyset, NULL, 0, cursor_for(&l_keyset, NULL, 0,
	    (const char *const[3]){ AT1, ID1, ID1 }, 3), &pg),
	    "pass next_cursor from the previous page as it is");
	assert_invalid(open_with(&l_catalog, NULL, 0, cursor_for(&l_catalog, NULL, 0,
	    (const char *const[2]){ "1", ID1 }, 2), &pg), "same filters");
	assert_invalid(open_with(&l_catalog, NULL, 0, cursor_for(&l_catalog, NULL, 0,
	    (const char *const[3]){ "1", "k", "blr_1" }, 3), &pg), "same filters");
}
END_TEST

START_TEST(tampered_refused)
{
	const char *const pos[2] = { AT1, ID1 };
	struct cursor_page pg;
	const char *c = cursor_for(&l_keyset, NULL, 0, pos, 2);
	char *t = arena_strdup(&a, c);
	size_t len = strlen(c);

	for (size_t i = 0; i < len; i++) {
		t[i] = c[i] == 'A' ? 'B' : 'A';
		assert_invalid(open_with(&l_keyset, NULL, 0, t, &pg),
		    "pass next_cursor from the previous page as it is");
		t[i] = c[i];
	}
	assert_invalid(open_with(&l_keyset, NULL, 0, arena_strndup(&a, c, len - 1), &pg),
	    "pass next_cursor from the previous page as it is");
	assert_invalid(open_with(&l_keyset, NULL, 0, "", &pg),
	    "pass next_cursor from the previous page as it is");
	/* with another server key */
	cfg.cursor_key[0] ^= 1;
	assert_invalid(open_with(&l_keyset, NULL, 0, c, &pg),
	    "pass next_cursor from the previous page as it is");
	cfg.cursor_key[0] ^= 1;
	ck_assert_int_eq(open_with(&l_keyset, NULL, 0, c, &pg), 0);
}
END_TEST

/* ---- writing pages ---- */

/* rows[i][c] as a statement's result (NULL: SQL NULL); the arena clears it. */
static PGresult *
rows_of(int nrows, int ncols, const char *const *cells)
{
	PGresult *res = PQmakeEmptyPGresult(NULL, PGRES_TUPLES_OK);
	PGresAttDesc att[8];

	ck_assert_int_le(ncols, 8);
	memset(att, 0, sizeof(att));
	for (int c = 0; c < ncols; c++) {
		att[c].name = (char *)"c";
		att[c].typid = 25;	/* text */
		att[c].typlen = -1;
		att[c].atttypmod = -1;
	}
	ck_assert_int_eq(PQsetResultAttrs(res, ncols, att), 1);
	for (int i = 0; i < nrows; i++)
		for (int c = 0; c < ncols; c++) {
			const char *v = cells[i * ncols + c];

			ck_assert_int_eq(PQsetvalue(res, i, c, (char *)v, v ? (int)strlen(v) :
			    -1), 1);
		}
	arena_defer(&a, (void (*)(void *))PQclear, res);
	return res;
}

static const char *
text_of(struct json_object *o)
{
	return json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
}

/* A position that opens in the page's scope, and its fields. */
static void
assert_next(const struct cursor_page *pg, const char *const *want, size_t n)
{
	char **f;
	size_t nf;

	ck_assert_ptr_nonnull(pg->next);
	ck_assert_int_eq(cursor_decode(&a, cfg.cursor_key, pg->scope, pg->next, &f, &nf), 0);
	ck_assert_uint_eq(nf, n);
	for (size_t i = 0; i < n; i++)
		ck_assert_str_eq(f[i], want[i]);
}

#define AT2 "2024-05-01T09:00:00.000001Z"
#define AT3 "2024-04-30T09:00:00Z"
#define ID2 "thg_0190a5b2-7c3e-7def-8abc-0123456789aa"
#define ID3 "thg_0190a5b2-7c3e-7def-8abc-0123456789a9"

START_TEST(page_named)
{
	static const char *const cells[] = {
		"{\"id\":1}", AT1, ID1,
		"{\"id\":2}", AT2, ID2,
		"{\"id\":3}", AT3, ID3,
	};
	struct json_object *out = json_obj(&a);
	struct cursor_page pg;

	r.query = json_obj(&a);
	json_set_int(r.query, "limit", 2);
	ck_assert_int_eq(cursor_page_open(&r, &l_keyset, NULL, 0, &pg), 0);
	ck_assert_int_eq(cursor_page_reply(&r, out, &pg, rows_of(3, 3, cells)), 200);
	ck_assert_int_eq(pg.more, 1);
	/* the last row shown, not the one read past it */
	assert_next(&pg, (const char *const[2]){ AT2, ID2 }, 2);
	ck_assert_str_eq(text_of(out), arena_printf(&a,
	    "{\"things\":[{\"id\":1},{\"id\":2}],\"has_more\":true,\"next_cursor\":\"%s\"}",
	    pg.next));

	/* it opens the next page; limit rows and no more: the last page */
	json_set_str(r.query, "cursor", pg.next);
	ck_assert_int_eq(cursor_page_open(&r, &l_keyset, NULL, 0, &pg), 0);
	ck_assert_str_eq(pg.pos[1], ID2);
	out = json_obj(&a);
	ck_assert_int_eq(cursor_page_reply(&r, out, &pg, rows_of(2, 3, cells)), 200);
	ck_assert_str_eq(text_of(out),
	    "{\"things\":[{\"id\":1},{\"id\":2}],\"has_more\":false,\"next_cursor\":null}");
	/* no rows at all */
	out = json_obj(&a);
	ck_assert_int_eq(cursor_page_reply(&r, out, &pg, rows_of(0, 3, cells)), 200);
	ck_assert_str_eq(text_of(out), "{\"things\":[],\"has_more\":false,\"next_cursor\":null}");
}
END_TEST

START_TEST(page_counted)
{
	/* total, rank, key, id, entity; an empty page is one row of NULLs */
	static const char *const cells[] = {
		"9", "1.5", "acme", ID1, "{\"n\":\"a\"}",
		"9", "1.5", "beta", ID2, "{\"n\":\"b\"}",
		"9", "0.5", "acme", ID3, "{\"n\":\"c\"}",
		"9", "0.5", "beta", ID3, "{\"n\":\"d\"}",
	};
	static const char *const empty[] = { "0", NULL, NULL, NULL, NULL };
	struct json_object *out = json_obj(&a);
	struct cursor_page pg;

	ck_assert_int_eq(open_with(&l_catalog, NULL, 0, NULL, &pg), 0);
	ck_assert_int_eq(cursor_page_reply(&r, out, &pg, rows_of(4, 5, cells)), 200);
	assert_next(&pg, (const char *const[3]){ "0.5", "acme", ID3 }, 3);
	ck_assert_str_eq(text_of(out), arena_printf(&a, "{\"entries\":[{\"n\":\"a\"},"
	    "{\"n\":\"b\"},{\"n\":\"c\"}],\"has_more\":true,\"next_cursor\":\"%s\","
	    "\"total_count\":9}", pg.next));

	out = json_obj(&a);
	ck_assert_int_eq(open_with(&l_catalog, NULL, 0, NULL, &pg), 0);
	ck_assert_int_eq(cursor_page_reply(&r, out, &pg, rows_of(1, 5, empty)), 200);
	ck_assert_str_eq(text_of(out),
	    "{\"entries\":[],\"has_more\":false,\"next_cursor\":null,\"total_count\":0}");
}
END_TEST

static struct json_object *
named_item(struct req *rq, PGresult *res, int i)
{
	struct json_object *o = json_obj(rq->arena);

	if (strcmp(PQgetvalue(res, i, 2), "fail") == 0)
		return NULL;
	json_set_str(o, "id", PQgetvalue(res, i, 2));
	return o;
}

START_TEST(page_totalled_and_list)
{
	static const struct cursor_list totalled = {
		.name = "t", .flags = CURSOR_TENANT | CURSOR_KEYSET, .shape = CURSOR_TOTALLED,
		.key = "items", .limit = 50, .prefix = "thg", .cols = { 1, 2 },
		.total_col = 0, .item = named_item,
	};
	static const struct cursor_list listed = {
		.name = "l", .flags = CURSOR_TENANT | CURSOR_KEYSET,
		.shape = CURSOR_OBJECT_LIST, .key = "data", .limit = 50, .prefix = "thg",
		.cols = { 1, 2 }, .item = named_item,
	};
	static const char *const cells[] = { "2", AT1, ID1, "2", AT2, ID2 };
	static const char *const empty[] = { "0", NULL, NULL };
	static const char *const failing[] = { "1", AT1, "fail" };
	struct json_object *out = json_obj(&a);
	struct cursor_page pg;

	ck_assert_int_eq(open_with(&totalled, NULL, 0, NULL, &pg), 0);
	ck_assert_int_eq(cursor_page_reply(&r, out, &pg, rows_of(2, 3, cells)), 200);
	ck_assert_str_eq(text_of(out), "{\"items\":[{\"id\":\"" ID1 "\"},{\"id\":\"" ID2
	    "\"}],\"total\":2,\"limit\":50,\"next_cursor\":null,\"has_more\":false}");
	out = json_obj(&a);
	ck_assert_int_eq(open_with(&totalled, NULL, 0, NULL, &pg), 0);
	ck_assert_int_eq(cursor_page_reply(&r, out, &pg, rows_of(1, 3, empty)), 200);
	ck_assert_str_eq(text_of(out), "{\"items\":[],\"total\":0,\"limit\":50,"
	    "\"next_cursor\":null,\"has_more\":false}");

	out = json_obj(&a);
	ck_assert_int_eq(open_with(&listed, NULL, 0, NULL, &pg), 0);
	ck_assert_int_eq(cursor_page_reply(&r, out, &pg, rows_of(1, 3, cells)), 200);
	ck_assert_str_eq(text_of(out), "{\"object\":\"list\",\"data\":[{\"id\":\"" ID1
	    "\"}],\"has_more\":false,\"next_cursor\":null}");
	/* an item that fails is api_db_error's answer, not a page (here its
	 * revoked-key one: a unit test has no database handle) */
	out = json_obj(&a);
	ck_assert_int_eq(open_with(&listed, NULL, 0, NULL, &pg), 0);
	r.key_revoked = 1;
	ck_assert_int_eq(cursor_page_reply(&r, out, &pg, rows_of(1, 3, failing)), 401);
	ck_assert_str_eq(json_get_str(r.out, "error_code"), "UNAUTHORIZED");
	ck_assert_ptr_null(json_get_str(out, "object"));
}
END_TEST

START_TEST(page_without_rows)
{
	struct json_object *out = json_obj(&a), *items = json_obj(&a);
	struct cursor_page pg;
	static const struct cursor_list all = {
		.name = "all", .shape = CURSOR_OBJECT_LIST, .key = "data",
	};

	/* a delta: the caller's members, then next_cursor and has_more */
	ck_assert_int_eq(open_with(&l_any, (const char *const[1]){ "link_1" }, 1, NULL, &pg),
	    0);
	pg.items = items;
	json_set(items, "added", json_object_get(json_arr(&a)));
	json_set(items, "removed", json_object_get(json_arr(&a)));
	cursor_page_next(&r, &pg, (const char *const[1]){ "42" }, 1);
	ck_assert_int_eq(cursor_page_reply(&r, out, &pg, NULL), 200);
	ck_assert_str_eq(text_of(out), arena_printf(&a, "{\"data\":{\"added\":[],"
	    "\"removed\":[],\"next_cursor\":\"%s\",\"has_more\":false}}", pg.next));
	assert_next(&pg, (const char *const[1]){ "42" }, 1);

	/* one page holds them all */
	memset(&pg, 0, sizeof(pg));
	pg.list = &all;
	pg.items = json_arr(&a);
	out = json_obj(&a);
	ck_assert_int_eq(cursor_page_reply(&r, out, &pg, NULL), 200);
	ck_assert_str_eq(text_of(out),
	    "{\"object\":\"list\",\"data\":[],\"has_more\":false,\"next_cursor\":null}");
}
END_TEST

START_TEST(limit_field)
{
	static const struct vfield spec[] = {
		CURSOR_LIMIT_FIELD(CURSOR_LIMIT_MAX), CURSOR_QUERY_FIELD, { NULL }
	};

	/* SPEC "Limits": default 100, 1 to 500 */
	ck_assert_int_eq(CURSOR_LIMIT_DEFAULT, 100);
	ck_assert_int_eq(spec[0].min, 1);
	ck_assert_int_eq(spec[0].max, 500);
	ck_assert_str_eq(spec[0].name, "limit");
	ck_assert_int_eq(spec[0].type, VT_INT);
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

	tc = tcase_create("pages");
	tcase_add_checked_fixture(tc, page_setup, teardown);
	tcase_add_loop_test(tc, scope_spelling, 0, N(scopes));
	tcase_add_test(tc, scope_distinct);
	tcase_add_test(tc, keyset_first_page);
	tcase_add_test(tc, position_round_trip);
	tcase_add_test(tc, scope_mismatch_refused);
	tcase_add_test(tc, fields_refused);
	tcase_add_test(tc, tampered_refused);
	tcase_add_test(tc, page_named);
	tcase_add_test(tc, page_counted);
	tcase_add_test(tc, page_totalled_and_list);
	tcase_add_test(tc, page_without_rows);
	tcase_add_test(tc, limit_field);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tcheck_run(cursor_suite());
}
