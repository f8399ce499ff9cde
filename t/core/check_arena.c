/*
 * lib/arena.c: alignment, zeroing, big allocations, block reuse across
 * resets, LIFO cleanups, string helpers.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "core/arena.h"
#include "tarena.h"
#include "tcheck.h"

/* Sizes around the alignment, the big-block threshold and the block size. */
static const size_t sizes[] = {
	0, 1, 3, 7, 15, 16, 17, 31, 33, 100, 4095, 4096, 4097, 5000,
	16383, 16384, 16385, 20000, 100000, 1u << 20,
};
#define NSIZES (sizeof(sizes) / sizeof(sizes[0]))

static int
all_zero(const unsigned char *p, size_t n)
{
	size_t	 i;

	for (i = 0; i < n; i++)
		if (p[i] != 0)
			return 0;
	return 1;
}

START_TEST(alloc_aligned_zeroed)
{
	unsigned char	*p, *q;
	size_t		 n = sizes[_i];

	/* A 1-byte allocation first, so p does not start a block. */
	q = arena_alloc(&a, 1);
	p = arena_alloc(&a, n);
	ck_assert_ptr_nonnull(p);
	ck_assert_uint_eq((uintptr_t)q % 16, 0);
	ck_assert_uint_eq((uintptr_t)p % 16, 0);
	ck_assert(all_zero(p, n));
	/* Fill it all: ASan/valgrind catch an undersized block. */
	memset(p, 0xa5, n);
	ck_assert_uint_eq(q[0], 0);
	ck_assert_uint_eq(a.used, 16 + (n == 0 ? 16 : (n + 15) / 16 * 16));
}
END_TEST

START_TEST(alloc_zeroed_after_reset)
{
	unsigned char	*p, *q;
	size_t		 n = sizes[_i];

	p = arena_alloc(&a, n);
	memset(p, 0xff, n);
	arena_reset(&a);
	ck_assert_uint_eq(a.used, 0);
	q = arena_alloc(&a, n);
	ck_assert(all_zero(q, n));
}
END_TEST

START_TEST(alloc_bump_contiguous)
{
	char	*p, *q, *r;

	p = arena_alloc(&a, 16);
	q = arena_alloc(&a, 1);
	r = arena_alloc(&a, 17);
	ck_assert_ptr_eq(q, p + 16);
	ck_assert_ptr_eq(r, q + 16);
	ck_assert_uint_eq(a.used, 64);
}
END_TEST

START_TEST(alloc_big_keeps_current_block)
{
	char	*p, *big, *q;

	p = arena_alloc(&a, 32);
	big = arena_alloc(&a, 200000);
	memset(big, 1, 200000);
	q = arena_alloc(&a, 32);
	/* The big request got its own block; small ones carry on. */
	ck_assert_ptr_eq(q, p + 32);
	ck_assert_uint_eq(a.used, 32 + 200000 + 32);
}
END_TEST

START_TEST(alloc_many_no_overlap)
{
	uint32_t	*p[5000];
	size_t		 i;

	for (i = 0; i < 5000; i++) {
		p[i] = arena_alloc(&a, 24);
		p[i][0] = (uint32_t)i;
		p[i][5] = (uint32_t)i ^ 0xffffffffu;
	}
	for (i = 0; i < 5000; i++) {
		ck_assert_uint_eq(p[i][0], i);
		ck_assert_uint_eq(p[i][5], i ^ 0xffffffffu);
	}
	ck_assert_uint_eq(a.used, 5000 * 32);
}
END_TEST

START_TEST(reset_reuses_first_block)
{
	char	*first, *again;
	int	 round;

	first = arena_alloc(&a, 100);
	for (round = 0; round < 3; round++) {
		/* Spill into more blocks and a big one, then reset. */
		arena_alloc(&a, 15000);
		arena_alloc(&a, 15000);
		arena_alloc(&a, 1u << 20);
		arena_reset(&a);
		ck_assert_ptr_nonnull(a.head);
		ck_assert_ptr_null(a.defers);
		again = arena_alloc(&a, 100);
		ck_assert_ptr_eq(again, first);
	}
}
END_TEST

START_TEST(reset_drops_lone_big_block)
{
	arena_alloc(&a, 1u << 20);
	ck_assert_ptr_nonnull(a.head);
	arena_reset(&a);
	/* Only a default-sized block is kept: RSS stays flat. */
	ck_assert_ptr_null(a.head);
	ck_assert_uint_eq(a.used, 0);
}
END_TEST

START_TEST(reset_empty)
{
	arena_reset(&a);
	ck_assert_ptr_null(a.head);
	arena_reset(&a);
	ck_assert_uint_eq(a.used, 0);
}
END_TEST

/* Cleanups append their tag to a log. */
static char	 dlog[64];

static void
log_tag(void *arg)
{
	strcat(dlog, arg);
}

static void
log_and_defer(void *arg)
{
	strcat(dlog, "D");
	arena_defer(&a, log_tag, arg);
}

START_TEST(defer_lifo)
{
	static const char *const tags[] = { "0", "1", "2", "3", "4" };
	size_t			 i;

	dlog[0] = '\0';
	for (i = 0; i < 5; i++) {
		arena_defer(&a, log_tag, (void *)tags[i]);
		/* Allocations between defers must not disturb them. */
		arena_alloc(&a, 9000);
	}
	arena_defer(&a, NULL, (void *)"x");
	ck_assert_str_eq(dlog, "");
	arena_reset(&a);
	ck_assert_str_eq(dlog, "43210");
	arena_reset(&a);
	ck_assert_str_eq(dlog, "43210");
}
END_TEST

START_TEST(defer_from_cleanup)
{
	dlog[0] = '\0';
	arena_defer(&a, log_tag, (void *)"a");
	arena_defer(&a, log_and_defer, (void *)"b");
	arena_reset(&a);
	ck_assert_str_eq(dlog, "Dba");
}
END_TEST

START_TEST(defer_free_runs)
{
	struct arena	 b;

	dlog[0] = '\0';
	arena_init(&b);
	arena_defer(&b, log_tag, (void *)"z");
	arena_free(&b);
	ck_assert_str_eq(dlog, "z");
	ck_assert_ptr_null(b.head);
	/* Freed arenas can be used again after init. */
	arena_init(&b);
	ck_assert_ptr_nonnull(arena_strdup(&b, "again"));
	arena_free(&b);
	arena_free(NULL);
}
END_TEST

static const struct {
	int		 n;
	const char	*s;
	const char	*want;
} printf_valid[] = {
	{ 0,		"",	"0:" },
	{ 42,		"x",	"42:x" },
	{ -7,		"abc",	"-7:abc" },
	{ 2147483647,	"\xc3\xa9", "2147483647:\xc3\xa9" },
};

START_TEST(printf_table)
{
	ck_assert_str_eq(arena_printf(&a, "%d:%s", printf_valid[_i].n,
	    printf_valid[_i].s), printf_valid[_i].want);
	ck_assert_str_eq(arena_printf(&a, "%s", ""), "");
}
END_TEST

START_TEST(printf_long)
{
	char	*big, *s;
	size_t	 len;

	big = malloc(40001);
	memset(big, 'q', 40000);
	big[40000] = '\0';
	s = arena_printf(&a, "<%s>%zu", big, (size_t)40000);
	len = strlen(s);
	ck_assert_uint_eq(len, 40000 + 2 + 5);
	ck_assert_int_eq(s[0], '<');
	ck_assert_int_eq(s[40001], '>');
	ck_assert_str_eq(s + 40002, "40000");
	free(big);
}
END_TEST

START_TEST(strdup_family)
{
	char	*s;

	ck_assert_ptr_null(arena_strdup(&a, NULL));
	ck_assert_ptr_null(arena_strndup(&a, NULL, 3));
	ck_assert_str_eq(arena_strdup(&a, "hello"), "hello");
	ck_assert_str_eq(arena_strdup(&a, ""), "");
	ck_assert_str_eq(arena_strndup(&a, "hello", 3), "hel");
	ck_assert_str_eq(arena_strndup(&a, "hi", 10), "hi");
	ck_assert_str_eq(arena_strndup(&a, "hi", 0), "");
	s = arena_memdup(&a, "a\0b", 3);
	ck_assert_int_eq(memcmp(s, "a\0b\0", 4), 0);
	s = arena_memdup(&a, "xyz", 0);
	ck_assert_str_eq(s, "");
	ck_assert_ptr_null(arena_memdup(&a, NULL, 4));
}
END_TEST

/* memdup does not zero before copying: its NUL is written, not inherited
 * from a fresh block (the kept block is dirty after a reset). */
START_TEST(memdup_dirty_block)
{
	char	*s;

	memset(arena_alloc(&a, 256), 0xff, 256);
	arena_reset(&a);
	s = arena_memdup(&a, "abc", 3);
	ck_assert_int_eq(memcmp(s, "abc\0", 4), 0);
	/* and arena_alloc still zeroes what it gives on a dirty block */
	arena_reset(&a);
	memset(arena_alloc(&a, 64), 0xff, 64);
	arena_reset(&a);
	s = arena_alloc(&a, 64);
	for (int i = 0; i < 64; i++)
		ck_assert_int_eq(s[i], 0);
}
END_TEST

static Suite *
arena_suite(void)
{
	Suite	*s = suite_create("arena");
	TCase	*tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_loop_test(tc, alloc_aligned_zeroed, 0, NSIZES);
	tcase_add_loop_test(tc, alloc_zeroed_after_reset, 0, NSIZES);
	tcase_add_test(tc, alloc_bump_contiguous);
	tcase_add_test(tc, alloc_big_keeps_current_block);
	tcase_add_test(tc, alloc_many_no_overlap);
	tcase_add_test(tc, reset_reuses_first_block);
	tcase_add_test(tc, reset_drops_lone_big_block);
	tcase_add_test(tc, reset_empty);
	tcase_add_test(tc, defer_lifo);
	tcase_add_test(tc, defer_from_cleanup);
	tcase_add_test(tc, defer_free_runs);
	tcase_add_loop_test(tc, printf_table, 0,
	    sizeof(printf_valid) / sizeof(printf_valid[0]));
	tcase_add_test(tc, printf_long);
	tcase_add_test(tc, strdup_family);
	tcase_add_test(tc, memdup_dirty_block);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tcheck_run(arena_suite());
}
