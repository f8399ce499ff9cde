/*
 * The extraction job (kind IMPORTS_JOB_EXTRACT, subject a bill import id):
 * a PROCESSING import's document read by bds-extract, the sandboxed
 * program that alone parses documents (docs/DECISIONS.md "Extraction
 * sandbox"), and its answer handed to the imports module (imports.h).
 *
 * fetch, a conversation of the runner's loop: the document (the row's
 * document_path, opened read-only, never followed through a link) is
 * hashed, SHA-256 streamed, then given as stdin to a child that sets its
 * limits (CPU seconds, address space, no file writes, few descriptors, no
 * core), enters an empty network namespace when the runner may make one
 * (root; otherwise bds-extract's own seccomp filter keeps it off the
 * network), closes every other descriptor and execs extract_program with a
 * minimal environment. The answer is read from a pipe without blocking:
 * the conversation sleeps between reads (conv_sleep), so a slow document
 * costs a child and a timer, never the loop the biller conversations share.
 * Past extract_timeout_s the child's process group is killed and reaped.
 * An extracted document is copied into the statements store
 * (bills_docs_put: a committed bill's statement); a rejected one never is.
 * At most extract_concurrency children run per runner process; a job that
 * finds them all busy is deferred.
 *
 * apply: imports_extracted in the job's transaction. A child that dies by
 * a limit (the timeout, SIGXCPU, SIGXFSZ, SIGKILL) is the rejection
 * processing_limit_exceeded; any other signal, a non-zero exit, an answer
 * that is not one JSON object of the contract or is over EXTRACT_ANSWER_MAX
 * is extraction_failed. Either way the import ends REJECTED and the runner
 * goes on. A job whose attempts are used up (the database failing) rejects
 * its import extraction_failed (jobs_extract_failed).
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <json-c/json.h>
#include <sodium.h>

#include "bills/bills_statement.h"
#include "core/arena.h"
#include "core/clock.h"
#include "core/config.h"
#include "core/crypto.h"
#include "core/json.h"
#include "core/log.h"
#include "core/req.h"
#include "imports/imports.h"
#include "jobs/jobs.h"
#include "jobs/jobs_conv.h"

#define EXTRACT_ANSWER_MAX	(4 << 20)	/* the draft of 50 pages fits well */
#define EXTRACT_NOFILE		32		/* the child's descriptors */
#define EXTRACT_POLL_MIN_MS	5		/* the first waits are short: a text */
#define EXTRACT_POLL_MAX_MS	100		/* PDF answers in tens of ms */
#define EXTRACT_DEFER_MS	1000		/* every child slot busy: again in */

#define REJ_LIMIT	"processing_limit_exceeded"
#define REJ_FAILED	"extraction_failed"

/* Children running in this process (the loop is single-threaded). */
static int running;

struct extract_run {
	int		 skip;		/* nothing to do: gone, or no longer PROCESSING */
	const char	*sha;		/* the document's SHA-256 (hex), NULL: unread */
	struct json_object *answer;	/* bds-extract's, or the rejection made here */
};

static enum jobs_outcome
outcome(struct jobs_job *job, enum jobs_outcome o, const char *why)
{
	job->error = why;
	return o;
}

/* A rejection made here: {"outcome":"rejected", rejection_reason, detail}. */
static struct json_object *
rejected(struct arena *a, const char *reason, const char *detail)
{
	struct json_object *o = json_obj(a);

	json_set_str(o, "outcome", "rejected");
	json_set_str(o, "rejection_reason", reason);
	json_set_str(o, "detail", detail);
	return o;
}

/* A rejection code as the contract writes one: [a-z_], short. */
static int
is_code(const char *s)
{
	size_t n = s != NULL ? strlen(s) : 0;

	return n > 0 && n <= 64 && strspn(s, "abcdefghijklmnopqrstuvwxyz_") == n;
}

/* SHA-256 of fd from its start, streamed. The hex (arena), NULL on a read
 * failure. */
static const char *
hash_fd(struct arena *a, int fd)
{
	crypto_hash_sha256_state st;
	unsigned char buf[65536], md[32];
	ssize_t n;

	if (lseek(fd, 0, SEEK_SET) != 0)
		return NULL;
	crypto_hash_sha256_init(&st);
	while ((n = read(fd, buf, sizeof(buf))) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return NULL;
		}
		crypto_hash_sha256_update(&st, buf, (unsigned long long)n);
	}
	crypto_hash_sha256_final(&st, md);
	return crypto_hex_encode(a, md, sizeof(md));
}

/* The document (size bytes, at most BILLS_DOC_MAX) into the statements
 * store; 0 when stored under sha, -1 on a failure or when it changed. */
static int
store_copy(struct req *r, int fd, off_t size, const char *sha)
{
	unsigned char *buf = malloc(size > 0 ? (size_t)size : 1);
	const char *got = NULL;
	size_t len = 0;
	ssize_t n;

	if (buf == NULL || lseek(fd, 0, SEEK_SET) != 0) {
		free(buf);
		return -1;
	}
	while (len < (size_t)size && (n = read(fd, buf + len, (size_t)size - len)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			break;
		len += (size_t)n;
	}
	if (len == (size_t)size)
		got = bills_docs_put(r->arena, r->cfg, buf, len);
	free(buf);
	return got != NULL && strcmp(got, sha) == 0 ? 0 : -1;
}

/* What the child is given, made before the fork (nothing is allocated
 * after it). */
struct child_plan {
	const char	*prog;
	char *const	*argv;
	char *const	*envp;
	int		 doc, out, null;	/* stdin, stdout, stderr */
	rlim_t		 cpu_s, as_bytes;	/* as_bytes 0: no address space cap */
	int		 netns;
};

/* The variables passed on when set: the sanitizers' options (a sanitizer
 * build's extractor reads them). */
static const char *const passed_env[] = {
	"ASAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS", NULL
};

static char *const *
child_env(struct arena *a)
{
	char **env = arena_alloc(a, 8 * sizeof(*env));
	size_t n = 0;

	env[n++] = arena_strdup(a, "PATH=/usr/bin:/bin");
	env[n++] = arena_strdup(a, "LC_ALL=C");
	/* one core: Tesseract's OpenMP threads otherwise take every one */
	env[n++] = arena_strdup(a, "OMP_THREAD_LIMIT=1");
	for (size_t i = 0; passed_env[i] != NULL; i++) {
		const char *v = getenv(passed_env[i]);

		if (v != NULL)
			env[n++] = arena_printf(a, "%s=%s", passed_env[i], v);
	}
	env[n] = NULL;
	return env;
}

static void
limit(int res, rlim_t soft, rlim_t hard)
{
	struct rlimit rl = { soft, hard };

	if (setrlimit(res, &rl) != 0)
		_exit(126);
}

/*
 * Descriptors: EXTRACT_NOFILE, hard limit too. Under valgrind (a memcheck
 * run of bds-jobs) the forked child is still valgrind's until exec, and
 * valgrind refuses any hard limit but its own: then the soft limit alone
 * (bds-extract lowers both again itself).
 */
static void
limit_nofile(void)
{
	struct rlimit rl = { EXTRACT_NOFILE, EXTRACT_NOFILE };

	if (setrlimit(RLIMIT_NOFILE, &rl) == 0)
		return;
	if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
		_exit(126);
	limit(RLIMIT_NOFILE, EXTRACT_NOFILE, rl.rlim_max);
}

/* In the child: only async-signal-safe calls, then exec. */
static void
child(const struct child_plan *p, pid_t parent)
{
	sigset_t none;

	(void)prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(126);
	(void)setpgid(0, 0);
	signal(SIGPIPE, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGINT, SIG_DFL);
	sigemptyset(&none);
	(void)sigprocmask(SIG_SETMASK, &none, NULL);
	if (dup2(p->doc, 0) != 0 || dup2(p->out, 1) != 1 || dup2(p->null, 2) != 2)
		_exit(126);
	if (close_range(3, ~0U, 0) != 0) {
		for (int fd = 3; fd < 65536; fd++)
			(void)close(fd);
	}
	/* an empty network namespace when permitted: no interface but a
	 * loopback that is down; otherwise the extractor's seccomp filter */
	if (p->netns)
		(void)unshare(CLONE_NEWNET);
	limit(RLIMIT_CPU, p->cpu_s, p->cpu_s + 1);
	if (p->as_bytes > 0)
		limit(RLIMIT_AS, p->as_bytes, p->as_bytes);
	limit(RLIMIT_FSIZE, 0, 0);
	limit_nofile();
	limit(RLIMIT_CORE, 0, 0);
	execve(p->prog, p->argv, p->envp);
	_exit(127);
}

static void
kill_reap(pid_t pid, int *status)
{
	(void)kill(-pid, SIGKILL);
	(void)kill(pid, SIGKILL);
	while (waitpid(pid, status, 0) < 0 && errno == EINTR)
		;
}

/*
 * Run the extractor on doc (its type declared) and read its answer. The
 * answer object, or NULL with *reason and *detail (static) set.
 */
static struct json_object *
run_extract(struct req *r, int doc, const char *type, const char **reason,
    const char **detail)
{
	const struct jobs_settings *js = jobs_settings(r->cfg);
	struct child_plan p;
	char *argv[4], *buf;
	long long deadline, wait = EXTRACT_POLL_MIN_MS, t0 = mono_ms();
	size_t len = 0;
	int fds[2], status = -1, eof = 0, reaped = 0, timed_out = 0, over = 0;
	struct json_object *answer;
	pid_t pid, parent = getpid();
	const char *why;

	*reason = REJ_FAILED;
	*detail = "the extractor could not be started";
	argv[0] = js->extract_program;
	argv[1] = "--type";
	argv[2] = (char *)type;
	argv[3] = NULL;
	memset(&p, 0, sizeof(p));
	p.prog = js->extract_program;
	p.argv = argv;
	p.envp = child_env(r->arena);
	p.doc = doc;
	p.cpu_s = (rlim_t)js->extract_cpu_s;
#if defined(__SANITIZE_ADDRESS__)
	p.as_bytes = 0;	/* the sanitizer's shadow memory is terabytes of address space */
#else
	p.as_bytes = (rlim_t)js->extract_memory_mb << 20;
#endif
	p.netns = js->extract_netns;
	if ((p.null = open("/dev/null", O_WRONLY | O_CLOEXEC)) < 0)
		return NULL;
	if (pipe2(fds, O_CLOEXEC) != 0) {
		close(p.null);
		return NULL;
	}
	p.out = fds[1];
	if ((pid = fork()) < 0) {
		close(fds[0]);
		close(fds[1]);
		close(p.null);
		return NULL;
	}
	if (pid == 0)
		child(&p, parent);
	running++;
	close(fds[1]);
	close(p.null);
	(void)fcntl(fds[0], F_SETFL, O_NONBLOCK);
	buf = arena_alloc(r->arena, EXTRACT_ANSWER_MAX + 1);
	deadline = t0 + (long long)js->extract_timeout_s * 1000;
	while (!eof || !reaped) {
		ssize_t n = 0;

		if (!eof) {
			n = read(fds[0], buf + len, EXTRACT_ANSWER_MAX + 1 - len);
			if (n > 0) {
				len += (size_t)n;
				if (len > EXTRACT_ANSWER_MAX) {
					over = 1;
					break;
				}
				continue;
			}
			if (n == 0)
				eof = 1;
			else if (errno == EINTR)
				continue;
			else if (errno != EAGAIN && errno != EWOULDBLOCK)
				eof = 1;
		}
		if (!reaped) {
			pid_t w = waitpid(pid, &status, WNOHANG);

			if (w == pid)
				reaped = 1;
			else if (w < 0 && errno != EINTR)
				break;
		}
		if (eof && reaped)
			break;
		if (mono_ms() >= deadline) {
			timed_out = 1;
			break;
		}
		/* the loop runs the other conversations meanwhile */
		conv_sleep(wait);
		if (wait < EXTRACT_POLL_MAX_MS)
			wait *= 2;
	}
	if (!reaped)
		kill_reap(pid, &status);
	running--;
	close(fds[0]);
	if (timed_out) {
		*reason = REJ_LIMIT;
		*detail = "the extraction ran out of time";
		return NULL;
	}
	if (over) {
		*detail = "the extractor's answer is over the size cap";
		return NULL;
	}
	if (WIFSIGNALED(status)) {
		int sig = WTERMSIG(status);

		if (sig == SIGXCPU || sig == SIGKILL || sig == SIGXFSZ) {
			*reason = REJ_LIMIT;
			*detail = sig == SIGXFSZ ? "the extractor tried to write a file" :
			    "the extraction ran out of CPU time";
		} else {
			*detail = "the extractor died";
		}
		return NULL;
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		/* 126: the child could not set its limits (a service manager's
		 * filter refusing setrlimit?); 127: no program to exec */
		*detail = WIFEXITED(status) && WEXITSTATUS(status) == 126 ?
		    "the extractor's limits could not be set" :
		    WIFEXITED(status) && WEXITSTATUS(status) == 127 ?
		    "extract_program could not be run" : "the extractor failed";
		return NULL;
	}
	buf[len] = '\0';
	if ((answer = json_parse(r->arena, buf, len, &why)) == NULL ||
	    !json_object_is_type(answer, json_type_object)) {
		*detail = "the extractor's answer is not a JSON object";
		return NULL;
	}
	log_msg("info", "extraction: %s answered in %lld ms", type, mono_ms() - t0);
	return answer;
}

/* The answer as the contract has it: extracted with a draft object, or
 * rejected with a code. */
static int
answer_valid(struct json_object *a)
{
	const char *o = json_get_str(a, "outcome");
	struct json_object *d;

	if (o != NULL && strcmp(o, "extracted") == 0)
		return json_object_object_get_ex(a, "draft", &d) &&
		    json_object_is_type(d, json_type_object);
	return o != NULL && strcmp(o, "rejected") == 0 &&
	    is_code(json_get_str(a, "rejection_reason"));
}

enum jobs_outcome
jobs_extract_fetch(struct req *r, struct jobs_job *job)
{
	struct extract_run *u = arena_alloc(r->arena, sizeof(*u));
	const char *reason, *detail;
	struct imports_row row;
	struct stat st;
	int fd;

	memset(u, 0, sizeof(*u));
	job->state = u;
	switch (imports_get(r, job->client_id, job->subject_id, 0, &row)) {
	case -1:
		return outcome(job, JOBS_RETRY, "cannot read the import");
	case 0:
		u->skip = 1;
		return JOBS_DONE;
	}
	if (strcmp(row.status, "PROCESSING") != 0) {
		u->skip = 1;
		return JOBS_DONE;
	}
	if (running >= jobs_settings(r->cfg)->extract_concurrency) {
		job->defer_ms = EXTRACT_DEFER_MS;
		return outcome(job, JOBS_DEFER, "every extraction slot is busy");
	}
	if (row.document_path == NULL ||
	    (fd = open(row.document_path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) < 0) {
		if (row.document_path != NULL && errno != ENOENT && errno != ELOOP)
			return outcome(job, JOBS_RETRY, "cannot open the document");
		u->answer = rejected(r->arena, REJ_FAILED, "the document is missing");
		return JOBS_DONE;
	}
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		u->answer = rejected(r->arena, REJ_FAILED, "the document is not a file");
		return JOBS_DONE;
	}
	if (st.st_size > BILLS_DOC_MAX || st.st_size == 0) {
		close(fd);
		u->answer = rejected(r->arena, st.st_size ? "too_large" : "unreadable_document",
		    st.st_size ? "over 20 MiB" : "empty");
		return JOBS_DONE;
	}
	if ((u->sha = hash_fd(r->arena, fd)) == NULL || lseek(fd, 0, SEEK_SET) != 0) {
		close(fd);
		return outcome(job, JOBS_RETRY, "cannot read the document");
	}
	u->answer = run_extract(r, fd, row.content_type, &reason, &detail);
	if (u->answer != NULL && !answer_valid(u->answer)) {
		u->answer = NULL;
		reason = REJ_FAILED;
		detail = "the extractor's answer is not of the contract";
	}
	if (u->answer == NULL) {
		close(fd);
		log_msg("warn", "extraction of %s: %s", job->subject_id, detail);
		u->answer = rejected(r->arena, reason, detail);
		return JOBS_DONE;
	}
	if (strcmp(json_get_str(u->answer, "outcome"), "extracted") == 0 &&
	    store_copy(r, fd, st.st_size, u->sha) != 0) {
		close(fd);
		return outcome(job, JOBS_RETRY, "cannot store the document's copy");
	}
	close(fd);
	return JOBS_DONE;
}

enum jobs_outcome
jobs_extract_apply(struct req *r, struct jobs_job *job)
{
	struct extract_run *u = job->state;

	if (u == NULL || u->skip || u->answer == NULL)
		return JOBS_DONE;
	if (imports_extracted(r, job->client_id, job->subject_id, u->sha, u->answer) != 0)
		return outcome(job, JOBS_RETRY, "cannot record the extraction");
	return JOBS_DONE;
}

int
jobs_extract_failed(struct req *r, struct jobs_job *job, int dead)
{
	struct extract_run *u = job->state;

	if (!dead)
		return 0;
	return imports_extracted(r, job->client_id, job->subject_id,
	    u != NULL ? u->sha : NULL, rejected(r->arena, REJ_FAILED,
	    "the extraction could not be completed")) == 0 ? 0 : -1;
}
