/*
 * bds-extract: one hostile document on stdin to one JSON answer on
 * stdout (the jobs runner runs it per document, lib/jobs/jobs_extract.c):
 *
 *	bds-extract --type application/pdf|image/png|image/jpeg
 *	    [--max-pages N] [--max-pixels N] [--lines] < document > answer
 *	bds-extract --from-lines FILE
 *
 * It sandboxes itself (rlimits, seccomp) before it reads a byte, reads at
 * most 20 MiB, and always exits 0 with one object: {"outcome":"extracted",
 * kind, pages, ocr_pages, ms, ready, why, draft} or {"outcome":"rejected",
 * rejection_reason, detail}. --lines prints the lines read instead of the
 * answer; --from-lines runs the field rules on such lines. Any other end
 * (a signal, a non-zero exit) is the runner's to report.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>

#include "core/clock.h"
#include "imports/extract/extract.h"
#include "imports/extract/extract_doc.h"

#define DOC_MAX		((size_t)20 << 20)

/* Our own messages (library chatter about the document goes nowhere). */
static int errfd = 2;

static void
fail(const char *fmt, ...)
{
	va_list ap;

	dprintf(errfd, "bds-extract: ");
	va_start(ap, fmt);
	vdprintf(errfd, fmt, ap);
	va_end(ap);
	dprintf(errfd, "\n");
	_exit(1);		/* no atexit work (a sanitizer's, under seccomp) */
}

static void
usage(void)
{
	dprintf(errfd, "usage: bds-extract --type application/pdf|image/png|image/jpeg\n"
	    "           [--max-pages N] [--max-pixels N] [--lines] [--verbose] < document\n"
	    "       bds-extract --from-lines FILE\n");
	exit(2);
}

/* Read fd to its end, at most max + 1 bytes (so that more shows). */
static unsigned char *
slurp(int fd, size_t max, size_t *len)
{
	size_t cap = 1 << 16, n = 0;
	unsigned char *buf = malloc(cap), *p;

	while (buf != NULL) {
		ssize_t r;
		if (n == cap) {
			cap = cap * 2 > max + 1 ? max + 1 : cap * 2;
			if ((p = realloc(buf, cap)) == NULL)
				break;
			buf = p;
		}
		r = read(fd, buf + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			break;
		n += (size_t)r;
		if (r == 0 || n > max) {
			*len = n;
			return buf;
		}
	}
	free(buf);
	return NULL;
}

static long long
number(const char *s, const char *flag, long long min, long long max)
{
	char *end;
	long long v;

	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno != 0 || *end != '\0' || end == s || v < min || v > max)
		fail("%s: not a number from %lld to %lld", flag, min, max);
	return v;
}

static void
print(struct json_object *o)
{
	const char *s;

	if (o == NULL || (s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
	    JSON_C_TO_STRING_NOSLASHESCAPE)) == NULL)
		fail("out of memory");
	if (printf("%s\n", s) < 0 || fflush(stdout) != 0)
		fail("writing the answer failed");
	json_object_put(o);
}

static struct json_object *
rejected(const struct ex_result *res)
{
	struct json_object *o = json_object_new_object();

	if (o == NULL)
		return NULL;
	json_object_object_add(o, "outcome", json_object_new_string("rejected"));
	json_object_object_add(o, "rejection_reason", json_object_new_string(res->reject));
	json_object_object_add(o, "detail", json_object_new_string(res->detail));
	return o;
}

/* The draft of res's lines and whether it may be committed as it is. */
static struct json_object *
extracted(const struct ex_result *res, long long ms)
{
	struct json_object *o = json_object_new_object(), *draft = ex_fields(&res->doc);
	const char *why = NULL;
	int ready;

	if (o == NULL || draft == NULL) {
		json_object_put(o);
		json_object_put(draft);
		return NULL;
	}
	ready = ex_draft_ready(draft, &why);
	json_object_object_add(o, "outcome", json_object_new_string("extracted"));
	json_object_object_add(o, "kind", json_object_new_string(res->kind ? res->kind : "text_pdf"));
	json_object_object_add(o, "pages", json_object_new_int(res->pages));
	json_object_object_add(o, "ocr_pages", json_object_new_int(res->ocr_pages));
	json_object_object_add(o, "ms", json_object_new_int64(ms));
	json_object_object_add(o, "ready", json_object_new_boolean(ready));
	json_object_object_add(o, "why", ready || why == NULL ? NULL : json_object_new_string(why));
	json_object_object_add(o, "draft", draft);
	return o;
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "type", required_argument, NULL, 't' },
		{ "max-pages", required_argument, NULL, 'p' },
		{ "max-pixels", required_argument, NULL, 'x' },
		{ "lines", no_argument, NULL, 'l' },
		{ "from-lines", required_argument, NULL, 'f' },
		{ "verbose", no_argument, NULL, 'v' },
		{ NULL, 0, NULL, 0 }
	};
	struct ex_limits lim = EX_LIMITS_DEFAULT;
	struct ex_sandbox sb = EX_SANDBOX_DEFAULT;
	struct ex_result res;
	const char *type = NULL, *from = NULL;
	unsigned char *doc;
	size_t len = 0;
	int c, lines = 0, verbose = 0, fd = 0, null;
	long long t0;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1)
		switch (c) {
		case 't': type = optarg; break;
		case 'p': lim.max_pages = (int)number(optarg, "--max-pages", 1, 100000); break;
		case 'x': lim.max_pixels = number(optarg, "--max-pixels", 1, 1LL << 40); break;
		case 'l': lines = 1; break;
		case 'f': from = optarg; break;
		case 'v': verbose = 1; break;
		default: usage();
		}
	if (optind != argc || (type == NULL) == (from == NULL) || (from != NULL && lines))
		usage();
	/*
	 * Tesseract's OpenMP stays on this one thread. libgomp reads the
	 * variable when it is loaded, before main: set it and start again
	 * (once; the runner sets it already, so only a run by hand pays this).
	 */
	if (getenv("OMP_THREAD_LIMIT") == NULL || strcmp(getenv("OMP_THREAD_LIMIT"), "1") != 0) {
		if (setenv("OMP_THREAD_LIMIT", "1", 1) != 0)
			fail("setenv: %s", strerror(errno));
		execv("/proc/self/exe", argv);
		fail("re-exec: %s", strerror(errno));
	}
	if (!verbose) {
		if ((errfd = dup(2)) < 0 || (null = open("/dev/null", O_WRONLY)) < 0 ||
		    dup2(null, 2) < 0)
			fail("stderr: %s", strerror(errno));
		close(null);
	}
	if (from != NULL && (fd = open(from, O_RDONLY)) < 0)
		fail("%s: %s", from, strerror(errno));
	if (ex_doc_init() != 0 || ex_sandbox_enter(&sb) != 0)
		fail("the sandbox could not be set up");

	t0 = mono_ms();
	if ((doc = slurp(fd, from ? (size_t)64 << 20 : DOC_MAX, &len)) == NULL)
		fail("reading the document: %s", strerror(errno));
	if (from != NULL) {
		struct json_object *j = json_tokener_parse((const char *)doc);
		if (ex_doc_from_json(j, &res) != 0)
			fail("%s: %s", from, res.detail);
		json_object_put(j);
		res.pages = (int)res.doc.npages;
		for (size_t i = 0; i < res.doc.npages; i++)
			res.ocr_pages += res.doc.pages[i].ocr;
		res.kind = "lines";
	} else if (len > DOC_MAX) {
		memset(&res, 0, sizeof res);
		ex_result_reject(&res, EX_REJ_TOO_LARGE, "more than %zu MiB", DOC_MAX >> 20);
	} else if (ex_doc_read(doc, len, type, &lim, &res) != 0)
		fail("the document could not be read (internal failure)");
	free(doc);

	if (res.reject != NULL)
		print(rejected(&res));
	else if (lines)
		print(ex_doc_json(&res.doc));
	else
		print(extracted(&res, mono_ms() - t0));
	ex_result_free(&res);
	ex_doc_fini();
#if defined(__SANITIZE_ADDRESS__)
	/*
	 * LeakSanitizer's exit check clones a tracer that ptraces the process:
	 * the sandbox kills both. A sanitizer build ends here without it (the
	 * reader's leaks are checked by t/imports/check_extract_doc, unsandboxed).
	 */
	_exit(0);
#endif
	return 0;
}
