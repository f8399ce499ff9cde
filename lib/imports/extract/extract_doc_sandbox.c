/*
 * extract_doc_sandbox.c: bds-extract's own walls, in depth behind the
 * jobs runner's (its rlimits, an empty network namespace, a wall clock).
 * rlimits first, then a seccomp allowlist: what MuPDF, Leptonica,
 * Tesseract and libc need to read memory and write the answer; anything
 * else (sockets, exec, fork, ptrace, writing files it opens) kills the
 * process, whose end the runner reports as a processing limit.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <sys/resource.h>

#include <seccomp.h>

#include "imports/extract/extract_doc.h"

/* Lower limit r to v (never raise it). */
static int
lower(int r, rlim_t v)
{
	struct rlimit rl;

	if (getrlimit(r, &rl) != 0)
		return -1;
	if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < v)
		v = rl.rlim_max;
	if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < v)
		v = rl.rlim_cur;
	rl.rlim_cur = v;
	rl.rlim_max = v;
	return setrlimit(r, &rl);
}

/* The system calls a read needs, whatever their arguments. */
static const int allowed[] = {
	SCMP_SYS(read), SCMP_SYS(pread64), SCMP_SYS(readv), SCMP_SYS(write),
	SCMP_SYS(writev), SCMP_SYS(lseek), SCMP_SYS(close), SCMP_SYS(fstat),
	SCMP_SYS(newfstatat), SCMP_SYS(statx), SCMP_SYS(stat), SCMP_SYS(lstat),
	SCMP_SYS(access), SCMP_SYS(faccessat), SCMP_SYS(faccessat2), SCMP_SYS(readlink),
	SCMP_SYS(getcwd), SCMP_SYS(fcntl), SCMP_SYS(dup),
	SCMP_SYS(brk), SCMP_SYS(mmap), SCMP_SYS(munmap), SCMP_SYS(mremap),
	SCMP_SYS(mprotect), SCMP_SYS(madvise),
	SCMP_SYS(futex), SCMP_SYS(set_robust_list), SCMP_SYS(get_robust_list),
	SCMP_SYS(rseq), SCMP_SYS(set_tid_address), SCMP_SYS(sched_yield),
	SCMP_SYS(sched_getaffinity),
	SCMP_SYS(rt_sigaction), SCMP_SYS(rt_sigprocmask), SCMP_SYS(rt_sigreturn),
	SCMP_SYS(sigaltstack), SCMP_SYS(tgkill), SCMP_SYS(gettid), SCMP_SYS(getpid),
	SCMP_SYS(getppid), SCMP_SYS(getuid), SCMP_SYS(geteuid), SCMP_SYS(getgid),
	SCMP_SYS(getegid), SCMP_SYS(clock_gettime), SCMP_SYS(clock_getres),
	SCMP_SYS(gettimeofday), SCMP_SYS(time), SCMP_SYS(nanosleep),
	SCMP_SYS(clock_nanosleep), SCMP_SYS(getrandom), SCMP_SYS(getrusage),
	SCMP_SYS(getrlimit), SCMP_SYS(prlimit64), SCMP_SYS(sysinfo), SCMP_SYS(uname),
	SCMP_SYS(times), SCMP_SYS(exit), SCMP_SYS(exit_group), SCMP_SYS(membarrier),
	SCMP_SYS(arch_prctl), SCMP_SYS(getdents64),
};

int
ex_sandbox_enter(const struct ex_sandbox *sb)
{
	scmp_filter_ctx f = NULL;
	int rc = -1;

	size_t as = sb->address_space;

#if defined(__SANITIZE_ADDRESS__)
	/* AddressSanitizer reserves terabytes of shadow address space */
	as = 0;
#endif
	if (lower(RLIMIT_CORE, 0) != 0 || lower(RLIMIT_CPU, (rlim_t)sb->cpu_seconds) != 0 ||
	    lower(RLIMIT_FSIZE, sb->file_size) != 0 || lower(RLIMIT_NOFILE, (rlim_t)sb->open_files) != 0 ||
	    (as > 0 && lower(RLIMIT_AS, as) != 0)) {
		perror("bds-extract: setrlimit");
		return -1;
	}
	if ((f = seccomp_init(SCMP_ACT_KILL_PROCESS)) == NULL)
		goto out;
	for (size_t i = 0; i < sizeof allowed / sizeof *allowed; i++)
		if (seccomp_rule_add(f, SCMP_ACT_ALLOW, allowed[i], 0) != 0)
			goto out;
	/* files are opened to read (Tesseract's model, libc's locale): never to write */
	if (seccomp_rule_add(f, SCMP_ACT_ALLOW, SCMP_SYS(openat), 1,
	    SCMP_A2(SCMP_CMP_MASKED_EQ, O_ACCMODE | O_CREAT | O_TRUNC, O_RDONLY)) != 0 ||
	    seccomp_rule_add(f, SCMP_ACT_ALLOW, SCMP_SYS(open), 1,
	    SCMP_A1(SCMP_CMP_MASKED_EQ, O_ACCMODE | O_CREAT | O_TRUNC, O_RDONLY)) != 0)
		goto out;
	/* stdio asks whether a descriptor is a terminal; no other ioctl works */
	if (seccomp_rule_add(f, SCMP_ACT_ALLOW, SCMP_SYS(ioctl), 1,
	    SCMP_A1(SCMP_CMP_EQ, TCGETS)) != 0 ||
	    seccomp_rule_add(f, SCMP_ACT_ERRNO(ENOTTY), SCMP_SYS(ioctl), 1,
	    SCMP_A1(SCMP_CMP_NE, TCGETS)) != 0)
		goto out;
	/* threads (a library's worker pool), never a new process */
	if (seccomp_rule_add(f, SCMP_ACT_ALLOW, SCMP_SYS(clone), 1,
	    SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_THREAD, CLONE_THREAD)) != 0 ||
	    seccomp_rule_add(f, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0) != 0)
		goto out;
	if (seccomp_load(f) != 0)
		goto out;
	rc = 0;
out:
	if (rc != 0)
		fprintf(stderr, "bds-extract: the seccomp filter could not be installed\n");
	seccomp_release(f);
	return rc;
}
