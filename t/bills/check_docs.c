/*
 * The document store (lib/bills/bills_docs.c): content-addressed paths,
 * modes 0640 / 0750, a file already there is not rewritten, the size cap.
 */
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <check.h>

#include "core/arena.h"
#include "core/config.h"
#include "core/crypto.h"
#include "bills/bills_statement.h"
#include "tcheck.h"

static struct arena a;
static struct config cfg;
static char dir[] = "/tmp/bds-docs-XXXXXX";

static void
setup(void)
{
	ck_assert_int_eq(crypto_setup(), 0);
	arena_init(&a);
	memset(&cfg, 0, sizeof(cfg));
	strcpy(dir, "/tmp/bds-docs-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	/* data_dir itself is made on first use */
	cfg.data_dir = arena_printf(&a, "%s/data", dir);
}

static int
rm_one(const char *path, const struct stat *st, int flag, struct FTW *f)
{
	(void)st; (void)flag; (void)f;
	return remove(path);
}

static void
teardown(void)
{
	nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	arena_free(&a);
}

START_TEST(put_and_again)
{
	static const char doc[] = "%PDF-1.4\nnot really\n%%EOF\n";
	unsigned char md[32];
	const char *sha, *path;
	struct stat st1, st2;
	char buf[64];
	FILE *f;

	umask(077);	/* the modes are the store's, whatever the umask */
	sha = bills_docs_put(&a, &cfg, doc, sizeof(doc) - 1);
	ck_assert_ptr_nonnull(sha);
	crypto_sha256(doc, sizeof(doc) - 1, md);
	ck_assert_str_eq(sha, crypto_hex_encode(&a, md, 32));
	path = bills_docs_path(&a, &cfg, sha);
	ck_assert_str_eq(path, arena_printf(&a, "%s/data/statements/%.2s/%s.pdf", dir, sha, sha));
	ck_assert_int_eq(stat(path, &st1), 0);
	ck_assert_int_eq(st1.st_mode & 07777, 0640);
	ck_assert_int_eq((int)st1.st_size, (int)sizeof(doc) - 1);
	f = fopen(path, "rb");
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fread(buf, 1, sizeof(buf), f), sizeof(doc) - 1);
	fclose(f);
	ck_assert_int_eq(memcmp(buf, doc, sizeof(doc) - 1), 0);
	ck_assert_int_eq(stat(arena_printf(&a, "%s/data/statements/%.2s", dir, sha), &st2), 0);
	ck_assert_int_eq(st2.st_mode & 07777, 0750);
	/* no temp file left beside it */
	{
		char cmd[256];

		snprintf(cmd, sizeof(cmd), "test -z \"$(ls -A %s/data/statements/%.2s | grep -v '\\.pdf$')\"",
		    dir, sha);
		ck_assert_int_eq(system(cmd), 0);
	}
	/* the same bytes again: the same hash, the same file not rewritten,
	 * made young again (the sweep leaves a young file alone) */
	{
		struct timespec old[2] = { { time(NULL) - 3 * 86400, 0 },
			{ time(NULL) - 3 * 86400, 0 } };

		ck_assert_int_eq(utimensat(AT_FDCWD, path, old, 0), 0);
	}
	ck_assert_str_eq(bills_docs_put(&a, &cfg, doc, sizeof(doc) - 1), sha);
	ck_assert_int_eq(stat(path, &st2), 0);
	ck_assert(st1.st_ino == st2.st_ino);
	ck_assert_int_ge(st2.st_mtim.tv_sec, time(NULL) - 60);
	umask(022);
}
END_TEST

/* A set-group-ID statements/ passes its bit to the <aa> directories. */
START_TEST(setgid_kept)
{
	const char *top = arena_printf(&a, "%s/data/statements", dir), *sha;
	struct stat st;

	ck_assert_int_eq(mkdir(cfg.data_dir, 0750), 0);
	ck_assert_int_eq(mkdir(top, 0750), 0);
	ck_assert_int_eq(chmod(top, 02750), 0);
	sha = bills_docs_put(&a, &cfg, "x", 1);
	ck_assert_ptr_nonnull(sha);
	ck_assert_int_eq(stat(arena_printf(&a, "%s/%.2s", top, sha), &st), 0);
	ck_assert_int_eq(st.st_mode & 07777, 02750);
}
END_TEST

START_TEST(refused)
{
	size_t big = (size_t)BILLS_DOC_MAX + 1;
	char *buf = calloc(1, big);

	ck_assert_ptr_null(bills_docs_put(&a, &cfg, "", 0));
	ck_assert_ptr_null(bills_docs_put(&a, &cfg, buf, big));
	free(buf);
	/* exactly the cap is fine */
	buf = calloc(1, big - 1);
	ck_assert_ptr_nonnull(bills_docs_put(&a, &cfg, buf, big - 1));
	free(buf);
	/* paths only for 64 lower-case hex digits */
	ck_assert_ptr_null(bills_docs_path(&a, &cfg, "../../etc/passwd"));
	ck_assert_ptr_null(bills_docs_path(&a, &cfg,
	    "ABCDEF0123456789abcdef0123456789abcdef0123456789abcdef0123456789"));
	ck_assert_ptr_null(bills_docs_path(&a, &cfg, "abcdef"));
	ck_assert_ptr_null(bills_docs_path(&a, &cfg, NULL));
}
END_TEST

/* A data_dir that cannot be made: NULL, nothing half-written. */
START_TEST(io_failure)
{
	cfg.data_dir = "/proc/bds-docs-no";
	ck_assert_ptr_null(bills_docs_put(&a, &cfg, "x", 1));
}
END_TEST

static Suite *
docs_suite(void)
{
	Suite *s = suite_create("bills_docs");
	TCase *tc = tcase_create("store");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, put_and_again);
	tcase_add_test(tc, setgid_kept);
	tcase_add_test(tc, refused);
	tcase_add_test(tc, io_failure);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tcheck_run(docs_suite());
}
