/*
 * The document reader's own checks (lib/imports/extract/extract_doc*.c),
 * on buffers built here: the sandbox kills what it must and lets a read
 * through; archives are found inside and after a PDF while chance bytes
 * are not; image headers are checked before decoding; the lines JSON
 * goes out and back.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <check.h>
#include <json-c/json.h>

#include "imports/extract/extract_doc.h"
#include "tcheck.h"

/* ---- the sandbox: each attempt in a child that entered it ---- */

static void *
thread_main(void *arg)
{
	return arg;
}

enum attempt { A_READ, A_THREAD, A_SOCKET, A_EXEC, A_FORK, A_WRITE_FILE, A_PTRACE, A__MAX };

static void
attempt(enum attempt a)
{
	struct ex_sandbox sb = EX_SANDBOX_DEFAULT;
	pthread_t t;
	char buf[16];
	int fd;

	if (ex_sandbox_enter(&sb) != 0)
		_exit(3);
	switch (a) {
	case A_READ:
		if ((fd = open("/proc/self/stat", O_RDONLY)) < 0 || read(fd, buf, sizeof buf) <= 0)
			_exit(4);
		close(fd);
		break;
	case A_THREAD:
		if (pthread_create(&t, NULL, thread_main, NULL) != 0 || pthread_join(t, NULL) != 0)
			_exit(4);
		break;
	case A_SOCKET:
		socket(AF_INET, SOCK_STREAM, 0);
		break;
	case A_EXEC:
		execl("/bin/true", "true", (char *)NULL);
		break;
	case A_FORK:
		if (fork() == 0)
			_exit(0);
		break;
	case A_WRITE_FILE:
		open("/tmp/bds-extract-sandbox-test", O_WRONLY | O_CREAT, 0600);
		break;
	case A_PTRACE:
		ptrace(PTRACE_TRACEME, 0, NULL, NULL);
		break;
	case A__MAX:
		break;
	}
	_exit(0);
}

/* How the child ended: its exit status, or 128 + the signal. */
static int
ended(enum attempt a)
{
	int st;
	pid_t pid = fork();

	ck_assert_int_ge(pid, 0);
	if (pid == 0)
		attempt(a);
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	return WIFSIGNALED(st) ? 128 + WTERMSIG(st) : WEXITSTATUS(st);
}

static const struct {
	enum attempt	 a;
	const char	*what;
	int		 end;
} attempts[] = {
	{ A_READ, "a read-only open and read", 0 },
	{ A_THREAD, "a thread", 0 },
	{ A_SOCKET, "a socket", 128 + SIGSYS },
	{ A_EXEC, "an exec", 128 + SIGSYS },
	{ A_FORK, "a new process", 128 + SIGSYS },
	{ A_WRITE_FILE, "opening a file to write", 128 + SIGSYS },
	{ A_PTRACE, "ptrace", 128 + SIGSYS },
};

START_TEST(sandbox_attempts)
{
	int end = ended(attempts[_i].a);

	ck_assert_msg(end == attempts[_i].end, "%s: ended %d, expected %d",
	    attempts[_i].what, end, attempts[_i].end);
}
END_TEST

/* ---- checks before decoding ---- */

static const char *
read_as(const void *doc, size_t len, const char *type)
{
	static struct ex_result res;
	struct ex_limits lim = EX_LIMITS_DEFAULT;

	ex_result_free(&res);
	ck_assert_int_eq(ex_doc_read(doc, len, type, &lim, &res), 0);
	return res.reject ? res.reject : "read";
}

/* a tiny PDF around a tail of bytes (in a stream or after %%EOF) */
static size_t
pdf_with(unsigned char *out, size_t cap, const void *inside, size_t n, const void *after,
    size_t m)
{
	static const char head[] =
	    "%PDF-1.4\n1 0 obj\n<< /Type /Catalog /Pages 2 0 R >>\nendobj\n"
	    "2 0 obj\n<< /Type /Pages /Kids [3 0 R] /Count 1 >>\nendobj\n"
	    "3 0 obj\n<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] /Contents 4 0 R >>\nendobj\n";
	size_t len;

	len = (size_t)snprintf((char *)out, cap, "%s4 0 obj\n<< /Length %zu >>\nstream\n", head, n);
	memcpy(out + len, inside, n);
	len += n;
	len += (size_t)snprintf((char *)out + len, cap - len,
	    "\nendstream\nendobj\ntrailer\n<< /Root 1 0 R >>\n%%%%EOF\n");
	memcpy(out + len, after, m);
	return len + m;
}

/* a byte string and its length (they hold NULs) */
#define B(s)	s, sizeof s - 1

static const struct {
	const char	*what;
	const char	*inside;
	size_t		 ninside;
	const char	*after;
	size_t		 nafter;
	const char	*want;
} archives[] = {
	{ "chance bytes PK\\3\\4 in a stream", B("BT PK\x03\x04\xff\xff\xff ET"), B(""),
	  EX_REJ_NO_TEXT },
	{ "a ZIP entry in a stream",
	  B("PK\x03\x04\x14\x00\x00\x00\x08\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"
	  "\x00\x00\x00\x00\x00\x00\x05\x00\x00\x00" "a.txt"), B(""), EX_REJ_POLYGLOT },
	{ "a RAR signature", B("Rar!\x1a\x07\x00"), B(""), EX_REJ_POLYGLOT },
	{ "gzip data after %%EOF", B(""), B("\n\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03\x03\x00"
	  "\x00\x00\x00\x00\x00\x00\x00\x00"), EX_REJ_POLYGLOT },
	{ "a ZIP directory closing the file", B(""),
	  B("PK\x05\x06\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0"), EX_REJ_POLYGLOT },
	{ "whitespace after %%EOF", B(""), B("\r\n \n"), EX_REJ_NO_TEXT },
};

START_TEST(pdf_archives)
{
	unsigned char buf[2048];
	size_t n = pdf_with(buf, sizeof buf, archives[_i].inside, archives[_i].ninside,
	    archives[_i].after, archives[_i].nafter);

	ck_assert_msg(strcmp(read_as(buf, n, "application/pdf"), archives[_i].want) == 0,
	    "%s: %s, expected %s", archives[_i].what, read_as(buf, n, "application/pdf"),
	    archives[_i].want);
}
END_TEST

/* JPEG headers: the frame's size is found past other segments, before any decoding */
START_TEST(jpeg_headers)
{
	/* SOI, APP0 (16 bytes), SOF0 of 30000 x 20000, then nothing */
	static const unsigned char big[] = {
		0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 'J', 'F', 'I', 'F', 0, 1, 1, 0, 0, 1, 0, 1, 0, 0,
		0xff, 0xc0, 0x00, 0x0b, 0x08, 0x4e, 0x20, 0x75, 0x30, 0x01, 0x01, 0x11, 0x00,
	};
	/* SOI, APP0, then a scan with no frame before it */
	static const unsigned char noframe[] = {
		0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 'J', 'F', 'I', 'F', 0, 1, 1, 0, 0, 1, 0, 1, 0, 0,
		0xff, 0xda, 0x00, 0x08, 0x01, 0x01, 0x00, 0x00, 0x3f, 0x00,
	};

	ck_assert_str_eq(read_as(big, sizeof big, "image/jpeg"), EX_REJ_PIXELS);
	ck_assert_str_eq(read_as(noframe, sizeof noframe, "image/jpeg"), EX_REJ_UNREADABLE);
	ck_assert_str_eq(read_as(big, sizeof big, "image/png"), EX_REJ_MISMATCH);
	ck_assert_str_eq(read_as(big, sizeof big, "image/gif"), EX_REJ_MISMATCH);
	ck_assert_str_eq(read_as("%PDF-1.4\n1 0 obj\n", 17, "application/pdf"), EX_REJ_UNREADABLE);
}
END_TEST

/* ---- the lines JSON, out and back ---- */

START_TEST(lines_round_trip)
{
	struct ex_result a = { 0 }, b;
	struct json_object *j, *k;

	ck_assert_int_eq(ex_result_page(&a, 1, 612, 792, 0), 0);
	ck_assert_int_eq(ex_result_page(&a, 2, 612, 792, 1), 0);
	ck_assert_int_eq(ex_result_line(&a, "Amount due $57.25", (struct ex_box){ 72, 100, 200, 112 },
	    1, 1), 0);
	ck_assert_int_eq(ex_result_line(&a, "Due 12/01/2026", (struct ex_box){ 72.5, 40.25, 180, 52 },
	    0.875f, 2), 0);
	j = ex_doc_json(&a.doc);
	ck_assert_ptr_nonnull(j);
	ck_assert_int_eq(ex_doc_from_json(j, &b), 0);
	ck_assert_uint_eq(b.doc.npages, 2);
	ck_assert_uint_eq(b.doc.nlines, 2);
	ck_assert_str_eq(b.doc.lines[1].text, "Due 12/01/2026");
	ck_assert(b.doc.lines[1].box.y0 == 40.25f && b.doc.lines[1].conf == 0.875f);
	ck_assert(b.doc.pages[1].ocr && !b.doc.pages[0].ocr);
	json_object_put(j);
	ex_result_free(&b);

	k = json_tokener_parse("{\"pages\":[],\"lines\":[{\"text\":\"x\",\"box\":[1,2,3],"
	    "\"conf\":1,\"page\":1}]}");
	ck_assert_int_eq(ex_doc_from_json(k, &b), -1);
	json_object_put(k);
	ex_result_free(&a);
}
END_TEST

static Suite *
suite(void)
{
	Suite *s = suite_create("extract_doc");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 60);
	tcase_add_checked_fixture(tc, NULL, ex_ocr_fini);
	tcase_add_loop_test(tc, sandbox_attempts, 0, sizeof attempts / sizeof *attempts);
	tcase_add_loop_test(tc, pdf_archives, 0, sizeof archives / sizeof *archives);
	tcase_add_test(tc, jpeg_headers);
	tcase_add_test(tc, lines_round_trip);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	if (ex_doc_init() != 0)
		return EXIT_FAILURE;
	return tcheck_run(suite());
}
