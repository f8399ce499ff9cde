/*
 * End-to-end harness: see harness.h for the model. Layout of this file:
 * shared state, small utilities, the keeper (process owner), the stack
 * lifecycle seen from the suite, HTTP over libcurl, raw FastCGI, checks.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <grp.h>
#include <limits.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>

#include <curl/curl.h>
#include <json-c/json.h>
#include <libpq-fe.h>

#include "harness.h"
#include "record.h"

extern char **environ;

#define H_PATH		512
#define H_ERRLEN	2048

enum host_id {
	HOST_API,
	HOST_SANDBOX,
	HOST_LINK,
	HOST__MAX
};

static const char *const host_names[HOST__MAX] = {
	[HOST_API] = "api",
	[HOST_SANDBOX] = "sandbox",
	[HOST_LINK] = "link",
};

/*
 * Everything about the running stack, in a MAP_SHARED page so the keeper,
 * the suite's main process and every test child see the same values. The
 * paths and settings are written once before the keeper forks; the pids
 * are kept current by the keeper.
 */
struct hstate {
	char		 dir[H_PATH];
	char		 srcdir[H_PATH];
	char		 builddir[H_PATH];
	char		 pgbin[H_PATH];
	char		 nginx[H_PATH];
	char		 pgdata[H_PATH];
	char		 pgsock[H_PATH];
	char		 pglog[H_PATH];
	char		 initdb_log[H_PATH];
	char		 conf[H_PATH];
	char		 sock[H_PATH];
	char		 apilog[H_PATH];
	char		 reqlog[H_PATH];
	char		 ctllog[H_PATH];
	char		 ngx_prefix[H_PATH];
	char		 ngx_conf[H_PATH];
	char		 ngx_errlog[H_PATH];
	char		 ngx_stderr[H_PATH];
	char		 deliverlog[H_PATH];
	char		 jobslog[H_PATH];	/* jobs slice: bds-jobs output */
	char		 maildir[H_PATH];
	char		 vgsupp[H_PATH + 32];	/* BDS_E2E_VALGRIND: suppressions */
	char		 vglog[H_PATH + 96];	/* and the per-process log pattern */
	char		 deliver_args[8][128];	/* extra args of harness_deliver_start() */
	int		 ndeliver_args;
	char		 dburl[H_PATH + 64];
	char		 base_url[HOST__MAX][64];
	char		 docs_url[H_PATH];	/* opts.docs_url, or <api>/docs */
	int		 ports[HOST__MAX];
	int		 smtp_port;
	int		 workers;
	int		 drain_timeout;
	int		 keep;
	int		 pg_drop;	/* run PostgreSQL as pg_uid/pg_gid */
	int		 pg_outside;	/* opts.database_url: no cluster of ours */
	uid_t		 pg_uid;
	gid_t		 pg_gid;
	pid_t		 main_pid;
	pid_t		 keeper_pid;
	int		 cmd_fd;	/* the clients' end of the keeper socketpair */
	atomic_uint	 seq;
	/* kept current by the keeper */
	atomic_int	 pg_pid;
	atomic_int	 api_pid;
	atomic_int	 api_last_pid;
	atomic_int	 api_last_status;
	atomic_int	 nginx_pid;
	atomic_int	 deliver_pid;
	atomic_int	 deliver_last_status;
	atomic_int	 jobs_pid;		/* jobs slice */
	atomic_int	 jobs_last_status;
	int		 data_mounted;	/* opts.data_disk_bytes: data/ is our tmpfs */
};

static struct hstate *H;
static char herr[H_ERRLEN];

enum kcmd {
	K_BOOT,
	K_PG_START,
	K_PG_STOP,
	K_API_START,
	K_API_STOP,
	K_API_KILL,
	K_NGINX_START,
	K_NGINX_STOP,
	K_DELIVER_START,
	K_DELIVER_STOP,
	K_JOBS_START,
	K_JOBS_STOP,
	K_JOBS_KILL,
	K_SHUTDOWN,
	K__MAX
};

struct kmsg {
	unsigned	 seq;
	int		 cmd;
};

struct kreply {
	unsigned	 seq;
	int		 rc;
	char		 err[1024];
};

/* ------------------------------------------------------------------ */
/* Utilities                                                           */

static int
set_err(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(herr, sizeof(herr), fmt, ap);
	va_end(ap);
	return -1;
}

const char *
harness_error(void)
{
	return herr;
}

long long
harness_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void
harness_sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
		;
}

/* Copy src into dst (size bytes), truncating. */
static void
scopy(char *dst, size_t size, const char *src)
{
	size_t n = strlen(src);

	if (n >= size)
		n = size - 1;
	memcpy(dst, src, n);
	dst[n] = '\0';
}

/* dst = dir "/" name, truncating (the temp dir is short). */
static void
sjoin(char *dst, size_t size, const char *dir, const char *name)
{
	scopy(dst, size, dir);
	if (strlen(dst) + 1 < size)
		strcat(dst, "/");
	if (strlen(dst) + strlen(name) < size)
		strcat(dst, name);
}

static void *
xmalloc(size_t n)
{
	void *p = malloc(n == 0 ? 1 : n);

	if (p == NULL) {
		fprintf(stderr, "harness: out of memory\n");
		abort();
	}
	return p;
}

static void *
xrealloc(void *p, size_t n)
{
	if ((p = realloc(p, n == 0 ? 1 : n)) == NULL) {
		fprintf(stderr, "harness: out of memory\n");
		abort();
	}
	return p;
}

static char *
xstrndup(const char *s, size_t n)
{
	char *p = xmalloc(n + 1);

	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

/* A growable byte buffer, always NUL-terminated. */
struct hbuf {
	char		*p;
	size_t		 len;
	size_t		 cap;
};

static void
hbuf_add(struct hbuf *b, const void *data, size_t n)
{
	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 256;

		while (b->len + n + 1 > cap)
			cap *= 2;
		b->p = xrealloc(b->p, cap);
		b->cap = cap;
	}
	if (n > 0)
		memcpy(b->p + b->len, data, n);
	b->len += n;
	b->p[b->len] = '\0';
}

static void
hbuf_adds(struct hbuf *b, const char *s)
{
	hbuf_add(b, s, strlen(s));
}

/* Take the buffer's bytes (never NULL). */
static char *
hbuf_take(struct hbuf *b)
{
	char *p;

	if (b->p == NULL)
		hbuf_add(b, "", 0);
	p = b->p;
	memset(b, 0, sizeof(*b));
	return p;
}

static int
write_file(const char *path, const char *data, size_t len, mode_t mode)
{
	int fd;
	size_t off = 0;

	if ((fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode)) == -1)
		return set_err("open %s: %s", path, strerror(errno));
	while (off < len) {
		ssize_t n = write(fd, data + off, len - off);

		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0) {
			close(fd);
			return set_err("write %s: %s", path, strerror(errno));
		}
		off += (size_t)n;
	}
	if (close(fd) == -1)
		return set_err("close %s: %s", path, strerror(errno));
	return 0;
}

/* Read a whole file (at most max bytes from its end when max > 0). */
static char *
read_file(const char *path, size_t max, size_t *lenp)
{
	struct hbuf b = { 0 };
	char chunk[8192];
	ssize_t n;
	int fd;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return NULL;
	if (max > 0) {
		off_t end = lseek(fd, 0, SEEK_END);

		lseek(fd, end > (off_t)max ? end - (off_t)max : 0, SEEK_SET);
	}
	while ((n = read(fd, chunk, sizeof(chunk))) != 0) {
		if (n == -1) {
			if (errno == EINTR)
				continue;
			break;
		}
		hbuf_add(&b, chunk, (size_t)n);
	}
	close(fd);
	if (lenp != NULL)
		*lenp = b.len;
	return hbuf_take(&b);
}

static int
is_socket(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISSOCK(st.st_mode);
}

static int
rm_cb(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	remove(path);
	return 0;
}

static void
rm_rf(const char *dir)
{
	if (dir[0] != '\0' && strncmp(dir, "/tmp/", 5) == 0)
		nftw(dir, rm_cb, 16, FTW_DEPTH | FTW_PHYS);
}

/* opts.data_disk_bytes: the tmpfs on data/ unmounted (its files go with
 * it, BDS_E2E_KEEP or not), before the temp dir is removed. */
static void
data_disk_umount(void)
{
	if (H->data_mounted && umount2(harness_fmt("%s/data", H->dir), MNT_DETACH) == 0)
		H->data_mounted = 0;
}

/* The environment minus BDS_* (config overrides must not leak in). */
static char **
env_scrubbed(void)
{
	size_t n = 0, i, k = 0;
	char **env;

	while (environ[n] != NULL)
		n++;
	env = xmalloc((n + 1) * sizeof(*env));
	for (i = 0; i < n; i++)
		if (strncmp(environ[i], "BDS_", 4) != 0)
			env[k++] = environ[i];
	env[k] = NULL;
	return env;
}

/*
 * BDS_E2E_VALGRIND=DIR runs our own programs (bds-api and its workers,
 * bds-jobs, bds-deliver, bdsctl) under valgrind's memcheck, one log per
 * process in DIR, named after the suite and the process id
 * (scripts/test --valgrind reads them). Returns argv itself, or out holding
 * valgrind's arguments and then argv (cap entries with the NULL).
 */
static const char *const *
vg_wrap(const char *const *argv, const char **out, size_t cap)
{
	static const char *const vg[] = {
		"/usr/bin/valgrind", "--tool=memcheck",
		"--leak-check=full", "--show-leak-kinds=definite",
		"--errors-for-leak-kinds=definite", "--error-exitcode=99",
		"--num-callers=30", NULL
	};
	size_t n = 0, i;

	if (H->vglog[0] == '\0')
		return argv;
	for (i = 0; vg[i] != NULL; i++)
		out[n++] = vg[i];
	out[n++] = H->vgsupp;
	out[n++] = H->vglog;
	for (i = 0; argv[i] != NULL && n + 1 < cap; i++)
		out[n++] = argv[i];
	out[n] = NULL;
	return out;
}

/* Parent pid and state of a process from /proc; -1 when it is gone. */
static int
proc_stat(pid_t pid, pid_t *ppid, char *state)
{
	char path[64], buf[512], *p;
	int fd;
	ssize_t n;
	int pp;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	if ((p = strrchr(buf, ')')) == NULL)
		return -1;
	if (sscanf(p + 1, " %c %d", state, &pp) != 2)
		return -1;
	*ppid = (pid_t)pp;
	return 0;
}

static int
pid_cmp(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return (x > y) - (x < y);
}

/* Live (non-zombie) children of parent, sorted; returns the count. */
static size_t
proc_children(pid_t parent, pid_t *out, size_t max)
{
	DIR *d;
	struct dirent *de;
	size_t n = 0;

	if (parent <= 0 || (d = opendir("/proc")) == NULL)
		return 0;
	while ((de = readdir(d)) != NULL) {
		char *end, state;
		long v = strtol(de->d_name, &end, 10);
		pid_t ppid;

		if (*end != '\0' || v <= 0)
			continue;
		if (proc_stat((pid_t)v, &ppid, &state) == -1 || ppid != parent)
			continue;
		if (state == 'Z' || state == 'X')
			continue;
		if (n < max)
			out[n] = (pid_t)v;
		n++;
	}
	closedir(d);
	qsort(out, n < max ? n : max, sizeof(*out), pid_cmp);
	return n;
}

/* The lowest port the kernel hands out to outgoing connections
 * (net.ipv4.ip_local_port_range), 32768 when it cannot be read. */
static int
ephemeral_low(void)
{
	char *text = read_file("/proc/sys/net/ipv4/ip_local_port_range", 0, NULL);
	int low = text != NULL ? atoi(text) : 0;

	free(text);
	return low > 0 ? low : 32768;
}

/*
 * Find a free loopback port and keep the socket bound until the caller has
 * all it needs, so the ports differ. The port is taken below the kernel's
 * range for outgoing connections: the ports are closed again before nginx
 * binds them seconds later, and the suites running beside make thousands
 * of connections a second, one of which could take a port of that range
 * in between (nginx then fails with "Address already in use"). Random in
 * [PORT_LOW, the range's low end), tried until one binds; port 0 (the
 * kernel's choice, in that range) when none does.
 */
#define PORT_LOW	10000
static int
free_port(int *fdp)
{
	static unsigned seed;
	struct sockaddr_in sa;
	socklen_t len = sizeof(sa);
	int fd, low = ephemeral_low(), tries;

	if ((fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1)
		return -1;
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (seed == 0)
		seed = (unsigned)getpid() ^ (unsigned)harness_now_ms();
	for (tries = 0; low - PORT_LOW > 100 && tries < 200; tries++) {
		sa.sin_port = htons((uint16_t)(PORT_LOW + rand_r(&seed) % (low - PORT_LOW)));
		if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0)
			break;
	}
	if (!(low - PORT_LOW > 100 && tries < 200))
		sa.sin_port = 0;
	if ((sa.sin_port == 0 && bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == -1) ||
	    getsockname(fd, (struct sockaddr *)&sa, &len) == -1) {
		close(fd);
		return -1;
	}
	*fdp = fd;
	return ntohs(sa.sin_port);
}

static int
tcp_connectable(int port)
{
	struct sockaddr_in sa;
	int fd, ok;

	if ((fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1)
		return 0;
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sa.sin_port = htons((uint16_t)port);
	ok = connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0;
	close(fd);
	return ok;
}

/* ------------------------------------------------------------------ */
/* The keeper: parent of postgres, bds-api and nginx                    */

static volatile sig_atomic_t k_quit;
static int k_pipe[2] = { -1, -1 };
static char kerr[1024];

static int
kfail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(kerr, sizeof(kerr), fmt, ap);
	va_end(ap);
	return -1;
}

static void
k_on_signal(int sig)
{
	int saved = errno;

	if (sig != SIGCHLD)
		k_quit = 1;
	if (k_pipe[1] != -1)
		(void)!write(k_pipe[1], "x", 1);
	errno = saved;
}

/* Reap every exited child and keep the pids in H current. */
static void
k_reap(void)
{
	pid_t p;
	int st;

	while ((p = waitpid(-1, &st, WNOHANG)) > 0) {
		if (p == atomic_load(&H->pg_pid))
			atomic_store(&H->pg_pid, 0);
		if (p == atomic_load(&H->nginx_pid))
			atomic_store(&H->nginx_pid, 0);
		if (p == atomic_load(&H->deliver_pid)) {
			atomic_store(&H->deliver_last_status, st);
			atomic_store(&H->deliver_pid, 0);
		}
		if (p == atomic_load(&H->jobs_pid)) {
			atomic_store(&H->jobs_last_status, st);
			atomic_store(&H->jobs_pid, 0);
		}
		if (p == atomic_load(&H->api_pid)) {
			atomic_store(&H->api_last_status, st);
			atomic_store(&H->api_last_pid, (int)p);
			atomic_store(&H->api_pid, 0);
		}
	}
}

/* Wait until *slot no longer holds pid (the child was reaped). */
static int
k_wait_gone(atomic_int *slot, pid_t pid, int timeout_ms)
{
	long long end = harness_now_ms() + timeout_ms;

	for (;;) {
		k_reap();
		if (atomic_load(slot) != (int)pid)
			return 0;
		if (harness_now_ms() >= end)
			return -1;
		harness_sleep_ms(5);
	}
}

struct kspawn {
	const char *const *argv;
	const char	*out;		/* stdout+stderr appended here */
	int		 as_pg;		/* drop to the postgres user */
	int		 deathsig;	/* sent when the keeper dies */
	int		 scrub_env;	/* drop BDS_* from the environment */
};

/* Fork and exec a child of the keeper in its own process group. */
static pid_t
k_spawn(const struct kspawn *s)
{
	char **env = s->scrub_env ? env_scrubbed() : environ;
	const char *vgargv[64];
	const char *const *argv = s->scrub_env ? vg_wrap(s->argv, vgargv, 64) : s->argv;
	pid_t keeper = getpid(), pid = -1;
	int out;

	if ((out = open(s->out, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644)) == -1) {
		kfail("open %s: %s", s->out, strerror(errno));
		goto done;
	}
	pid = fork();
	if (pid == 0) {
		sigset_t none;
		int nul, sig;

		setpgid(0, 0);
		for (sig = 1; sig < NSIG; sig++)
			if (sig != SIGKILL && sig != SIGSTOP)
				signal(sig, SIG_DFL);
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		if ((nul = open("/dev/null", O_RDONLY)) != -1)
			dup2(nul, 0);
		dup2(out, 1);
		dup2(out, 2);
		closefrom(3);
		if (chdir(H->dir) == -1)
			_exit(126);
		if (s->as_pg && H->pg_drop &&
		    (setgroups(0, NULL) == -1 || setgid(H->pg_gid) == -1 ||
		    setuid(H->pg_uid) == -1))
			_exit(126);
		/* after setuid: a credential change clears the death signal */
		prctl(PR_SET_PDEATHSIG, s->deathsig);
		if (getppid() != keeper)
			_exit(126);
		execve(argv[0], (char *const *)argv, env);
		dprintf(2, "harness: exec %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	if (pid == -1)
		kfail("fork: %s", strerror(errno));
	close(out);
done:
	if (env != environ)
		free(env);
	return pid > 0 ? pid : -1;
}

/* Run a command to completion (bounded); returns its exit status or -1. */
static int
k_run(const struct kspawn *s, int timeout_ms)
{
	long long end = harness_now_ms() + timeout_ms;
	pid_t pid;
	int st;

	if ((pid = k_spawn(s)) == -1)
		return -1;
	for (;;) {
		pid_t r = waitpid(pid, &st, WNOHANG);

		if (r == pid)
			break;
		if (r == -1 && errno != EINTR)
			return kfail("waitpid %s: %s", s->argv[0], strerror(errno));
		if (harness_now_ms() >= end) {
			killpg(pid, SIGKILL);
			waitpid(pid, &st, 0);
			return kfail("%s timed out after %d ms (log: %s)",
			    s->argv[0], timeout_ms, s->out);
		}
		harness_sleep_ms(10);
	}
	if (WIFEXITED(st))
		return WEXITSTATUS(st);
	return kfail("%s killed by signal %d (log: %s)", s->argv[0],
	    WIFSIGNALED(st) ? WTERMSIG(st) : 0, s->out);
}

static int
k_run_ok(const struct kspawn *s, int timeout_ms)
{
	int rc = k_run(s, timeout_ms);

	if (rc == -1)
		return -1;
	if (rc != 0)
		return kfail("%s exited %d (log: %s)", s->argv[0], rc, s->out);
	return 0;
}

/* postmaster.pid names pid pid and line 8 says "ready". */
static int
k_pg_ready(pid_t pid)
{
	char path[H_PATH + 32], *text, *p;
	int line = 1, ok = 0;

	snprintf(path, sizeof(path), "%s/postmaster.pid", H->pgdata);
	if ((text = read_file(path, 0, NULL)) == NULL)
		return 0;
	if (atoi(text) == (int)pid) {
		for (p = text; *p != '\0' && line < 8; p++)
			if (*p == '\n')
				line++;
		ok = line == 8 && strncmp(p, "ready", 5) == 0;
	}
	free(text);
	return ok;
}

static int
k_pg_start(void)
{
	char bin[H_PATH + 16];
	const char *argv[] = {
		bin, "-D", H->pgdata, "-k", H->pgsock,
		"-c", "listen_addresses=",
		"-c", "fsync=off",
		"-c", "full_page_writes=off",
		"-c", "synchronous_commit=off",
		"-c", "max_connections=200",
		NULL
	};
	struct kspawn s = { argv, H->pglog, 1, SIGQUIT, 0 };
	long long end;
	pid_t pid;

	if (atomic_load(&H->pg_pid) != 0)
		return 0;
	if (H->pg_outside)
		return kfail("the database is outside the harness (opts.database_url)");
	snprintf(bin, sizeof(bin), "%s/postgres", H->pgbin);
	if ((pid = k_spawn(&s)) == -1)
		return -1;
	atomic_store(&H->pg_pid, (int)pid);
	end = harness_now_ms() + 30000;
	for (;;) {
		k_reap();
		if (atomic_load(&H->pg_pid) != (int)pid)
			return kfail("postgres exited at start (log: %s)", H->pglog);
		if (k_pg_ready(pid))
			return 0;
		if (harness_now_ms() >= end)
			return kfail("postgres not ready after 30 s (log: %s)", H->pglog);
		harness_sleep_ms(10);
	}
}

static int
k_pg_stop(void)
{
	pid_t pid = atomic_load(&H->pg_pid);

	if (pid == 0)
		return 0;
	kill(pid, SIGINT);		/* fast shutdown, as pg_ctl stop -m fast */
	if (k_wait_gone(&H->pg_pid, pid, 20000) == 0)
		return 0;
	kill(pid, SIGQUIT);		/* immediate */
	if (k_wait_gone(&H->pg_pid, pid, 5000) == 0)
		return kfail("postgres ignored fast shutdown; stopped immediately");
	killpg(pid, SIGKILL);
	k_wait_gone(&H->pg_pid, pid, 5000);
	return kfail("postgres had to be killed");
}

static int
k_api_start(void)
{
	char bin[H_PATH + 16], workers[16];
	const char *argv[] = {
		bin, "--config", H->conf, "--workers", workers, NULL
	};
	struct kspawn s = { argv, H->apilog, 0, SIGTERM, 1 };
	long long end;
	pid_t pid;

	if (atomic_load(&H->api_pid) != 0)
		return 0;
	snprintf(bin, sizeof(bin), "%s/app/bds-api", H->builddir);
	snprintf(workers, sizeof(workers), "%d", H->workers);
	unlink(H->sock);
	if ((pid = k_spawn(&s)) == -1)
		return -1;
	atomic_store(&H->api_pid, (int)pid);
	end = harness_now_ms() + 15000;
	for (;;) {
		k_reap();
		if (atomic_load(&H->api_pid) != (int)pid) {
			int st = atomic_load(&H->api_last_status);

			return kfail("bds-api exited at start (%s %d; log: %s)",
			    WIFEXITED(st) ? "status" : "signal",
			    WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st), H->apilog);
		}
		if (is_socket(H->sock))
			return 0;
		if (harness_now_ms() >= end)
			return kfail("bds-api created no socket %s in 15 s (log: %s)",
			    H->sock, H->apilog);
		harness_sleep_ms(10);
	}
}

/* SIGKILL what is left of a master's group and its known workers. */
static void
k_api_kill_group(pid_t pid, const pid_t *workers, size_t n)
{
	size_t i;

	killpg(pid, SIGKILL);
	for (i = 0; i < n; i++)
		kill(workers[i], SIGKILL);
}

static int
k_api_stop(int hard)
{
	pid_t pid = atomic_load(&H->api_pid), w[64];
	size_t n;
	int rc = 0;

	if (pid == 0)
		return 0;
	n = proc_children(pid, w, 64);
	if (n > 64)
		n = 64;
	if (!hard) {
		kill(pid, SIGTERM);
		if (k_wait_gone(&H->api_pid, pid, (H->drain_timeout + 5) * 1000) == -1)
			rc = kfail("bds-api did not exit within drain_timeout + 5 s; killed");
	}
	k_api_kill_group(pid, w, n);
	k_wait_gone(&H->api_pid, pid, 5000);
	if (hard)
		unlink(H->sock);
	return rc;
}

static int
k_nginx_start(void)
{
	char prefix[H_PATH + 2];
	const char *argv[] = {
		H->nginx, "-p", prefix, "-c", H->ngx_conf, "-e", H->ngx_errlog,
		"-g", "daemon off;", NULL
	};
	struct kspawn s = { argv, H->ngx_stderr, 0, SIGTERM, 0 };
	long long end;
	pid_t pid;

	if (atomic_load(&H->nginx_pid) != 0)
		return 0;
	snprintf(prefix, sizeof(prefix), "%s/", H->ngx_prefix);
	if ((pid = k_spawn(&s)) == -1)
		return -1;
	atomic_store(&H->nginx_pid, (int)pid);
	end = harness_now_ms() + 10000;
	for (;;) {
		k_reap();
		if (atomic_load(&H->nginx_pid) != (int)pid)
			return kfail("nginx exited at start (logs: %s, %s)",
			    H->ngx_stderr, H->ngx_errlog);
		if (tcp_connectable(H->ports[HOST_API]) &&
		    tcp_connectable(H->ports[HOST_SANDBOX]) &&
		    tcp_connectable(H->ports[HOST_LINK]))
			return 0;
		if (harness_now_ms() >= end)
			return kfail("nginx not listening after 10 s (log: %s)",
			    H->ngx_errlog);
		harness_sleep_ms(10);
	}
}

static int
k_nginx_stop(void)
{
	pid_t pid = atomic_load(&H->nginx_pid);

	if (pid == 0)
		return 0;
	kill(pid, SIGTERM);
	if (k_wait_gone(&H->nginx_pid, pid, 5000) == 0) {
		killpg(pid, SIGKILL);	/* stray workers, if any */
		return 0;
	}
	killpg(pid, SIGKILL);
	k_wait_gone(&H->nginx_pid, pid, 5000);
	return kfail("nginx had to be killed");
}

/* The size of a file, 0 when it is missing. */
static off_t
file_size(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 ? st.st_size : 0;
}

/*
 * Wait until the queue runner just spawned (pid, kept in *slot) writes its
 * "<name>: started" line past off in its log: its signal handlers are in
 * place then, so a stop right after the start is a clean one (under
 * valgrind the start takes seconds). Then, for 200 ms, that it does not
 * exit (a bad flag or config ends it at once).
 */
static int
k_wait_started(atomic_int *slot, pid_t pid, const char *name, const char *log, off_t off)
{
	char needle[64];
	long long end = harness_now_ms() + 30000, settle = 0;

	snprintf(needle, sizeof(needle), "%s: started", name);
	for (;;) {
		k_reap();
		if (atomic_load(slot) != (int)pid)
			return kfail("bds-%s exited at start (log: %s)", name, log);
		if (settle == 0 && file_size(log) > off) {
			/* what came after off: the file's last (size - off) bytes */
			char *text = read_file(log, (size_t)(file_size(log) - off), NULL);

			if (text != NULL && strstr(text, needle) != NULL)
				settle = harness_now_ms() + 200;
			free(text);
		}
		if (settle != 0 && harness_now_ms() >= settle)
			return 0;
		if (harness_now_ms() >= end)
			return kfail("bds-%s wrote no \"%s\" in 30 s (log: %s)", name,
			    needle, log);
		harness_sleep_ms(10);
	}
}

static int
k_deliver_start(void)
{
	char bin[H_PATH + 24];
	const char *argv[8 + 8];
	struct kspawn s = { argv, H->deliverlog, 0, SIGTERM, 1 };
	off_t off;
	size_t n = 0;
	pid_t pid;
	int i;

	if (atomic_load(&H->deliver_pid) != 0)
		return 0;
	snprintf(bin, sizeof(bin), "%s/app/bds-deliver", H->builddir);
	argv[n++] = bin;
	argv[n++] = "--config";
	argv[n++] = H->conf;
	argv[n++] = "--max-seconds";
	argv[n++] = "0";
	for (i = 0; i < H->ndeliver_args; i++)
		argv[n++] = H->deliver_args[i];
	argv[n] = NULL;
	off = file_size(H->deliverlog);
	if ((pid = k_spawn(&s)) == -1)
		return -1;
	atomic_store(&H->deliver_pid, (int)pid);
	return k_wait_started(&H->deliver_pid, pid, "deliver", H->deliverlog, off);
}

static int
k_deliver_stop(void)
{
	pid_t pid = atomic_load(&H->deliver_pid);
	int st;

	if (pid == 0)
		return 0;
	kill(pid, SIGTERM);
	if (k_wait_gone(&H->deliver_pid, pid, 15000) == -1) {
		killpg(pid, SIGKILL);
		k_wait_gone(&H->deliver_pid, pid, 5000);
		return kfail("bds-deliver ignored SIGTERM for 15 s; killed");
	}
	st = atomic_load(&H->deliver_last_status);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		return kfail("bds-deliver ended with %s %d (log: %s)",
		    WIFEXITED(st) ? "status" : "signal",
		    WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st), H->deliverlog);
	return 0;
}

/* ---- jobs slice: bds-jobs, started with every stack ---- */

static int
k_jobs_start(void)
{
	char bin[H_PATH + 24];
	const char *argv[] = { bin, "--config", H->conf, "--max-seconds", "0", NULL };
	struct kspawn s = { argv, H->jobslog, 0, SIGTERM, 1 };
	off_t off;
	pid_t pid;

	if (atomic_load(&H->jobs_pid) != 0)
		return 0;
	snprintf(bin, sizeof(bin), "%s/app/bds-jobs", H->builddir);
	off = file_size(H->jobslog);
	if ((pid = k_spawn(&s)) == -1)
		return -1;
	atomic_store(&H->jobs_pid, (int)pid);
	return k_wait_started(&H->jobs_pid, pid, "jobs", H->jobslog, off);
}

/* SIGTERM (kill: SIGKILL to its whole group, workers included) and wait. */
static int
k_jobs_stop(int kill_it)
{
	pid_t pid = atomic_load(&H->jobs_pid);
	int st;

	if (pid == 0)
		return 0;
	if (kill_it) {
		killpg(pid, SIGKILL);
		k_wait_gone(&H->jobs_pid, pid, 5000);
		return 0;
	}
	kill(pid, SIGTERM);
	if (k_wait_gone(&H->jobs_pid, pid, 30000) == -1) {
		killpg(pid, SIGKILL);
		k_wait_gone(&H->jobs_pid, pid, 5000);
		return kfail("bds-jobs ignored SIGTERM for 30 s; killed");
	}
	killpg(pid, SIGKILL);	/* a worker left behind, if any */
	st = atomic_load(&H->jobs_last_status);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		return kfail("bds-jobs ended with %s %d (log: %s)",
		    WIFEXITED(st) ? "status" : "signal",
		    WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st), H->jobslog);
	return 0;
}

static int
k_boot(void)
{
	char initdb[H_PATH + 16], createdb[H_PATH + 16], bdsctl[H_PATH + 16];
	const char *initdb_argv[] = {
		initdb, "-D", H->pgdata, "-A", "trust", "-U", "bds", "--no-sync",
		"-E", "UTF8", "--locale=C", NULL
	};
	const char *createdb_argv[] = {
		createdb, "-h", H->pgsock, "-U", "bds", "bds", NULL
	};
	const char *migrate_argv[] = {
		bdsctl, "--config", H->conf, "migrate", NULL
	};
	struct kspawn s_initdb = { initdb_argv, H->initdb_log, 1, SIGKILL, 0 };
	struct kspawn s_createdb = { createdb_argv, H->initdb_log, 1, SIGKILL, 0 };
	struct kspawn s_migrate = { migrate_argv, H->ctllog, 0, SIGKILL, 1 };

	snprintf(initdb, sizeof(initdb), "%s/initdb", H->pgbin);
	snprintf(createdb, sizeof(createdb), "%s/createdb", H->pgbin);
	snprintf(bdsctl, sizeof(bdsctl), "%s/app/bdsctl", H->builddir);
	if (H->pg_outside)
		goto migrate;
	if (mkdir(H->pgdata, 0700) == -1 || mkdir(H->pgsock, 0755) == -1)
		return kfail("mkdir %s: %s", H->pgdata, strerror(errno));
	if (H->pg_drop &&
	    (chown(H->pgdata, H->pg_uid, H->pg_gid) == -1 ||
	    chown(H->pgsock, H->pg_uid, H->pg_gid) == -1))
		return kfail("chown %s: %s", H->pgdata, strerror(errno));
	if (k_run_ok(&s_initdb, 120000) == -1)
		return -1;
	if (k_pg_start() == -1)
		return -1;
	if (k_run_ok(&s_createdb, 30000) == -1)
		return -1;
migrate:
	if (k_run_ok(&s_migrate, 120000) == -1)
		return -1;
	/* billers slice: every stack has the shipped biller catalog */
	{
		char csv[H_PATH + 32];
		const char *import_argv[] = {
			bdsctl, "--config", H->conf, "billers", "import", csv, NULL
		};
		struct kspawn s_import = { import_argv, H->ctllog, 0, SIGKILL, 1 };

		snprintf(csv, sizeof(csv), "%s/data/billers.csv", H->srcdir);
		if (k_run_ok(&s_import, 120000) == -1)
			return -1;
	}
	if (k_api_start() == -1)
		return -1;
	if (k_jobs_start() == -1)
		return -1;
	return k_nginx_start();
}

/* Stop all and kill any descendant left (we are a subreaper); remove the
 * temp dir when asked (the main process removes it after reading logs). */
static void
k_teardown(int remove_dir)
{
	pid_t left[256];
	size_t n, i;

	k_jobs_stop(0);
	k_deliver_stop();
	k_nginx_stop();
	k_api_stop(0);
	k_pg_stop();
	n = proc_children(getpid(), left, 256);
	for (i = 0; i < n && i < 256; i++)
		kill(left[i], SIGKILL);
	harness_sleep_ms(n > 0 ? 50 : 0);
	k_reap();
	if (remove_dir)
		data_disk_umount();
	if (remove_dir && !H->keep)
		rm_rf(H->dir);
}

static int
k_handle(int cmd)
{
	kerr[0] = '\0';
	switch (cmd) {
	case K_BOOT:
		return k_boot();
	case K_PG_START:
		return k_pg_start();
	case K_PG_STOP:
		return k_pg_stop();
	case K_API_START:
		return k_api_start();
	case K_API_STOP:
		return k_api_stop(0);
	case K_API_KILL:
		return k_api_stop(1);
	case K_NGINX_START:
		return k_nginx_start();
	case K_NGINX_STOP:
		return k_nginx_stop();
	case K_DELIVER_START:
		return k_deliver_start();
	case K_DELIVER_STOP:
		return k_deliver_stop();
	case K_JOBS_START:
		return k_jobs_start();
	case K_JOBS_STOP:
		return k_jobs_stop(0);
	case K_JOBS_KILL:
		return k_jobs_stop(1);
	case K_SHUTDOWN:
		k_teardown(0);
		return 0;
	default:
		return kfail("unknown keeper command %d", cmd);
	}
}

static void
keeper_main(int fd)
{
	struct sigaction sa;
	int sigs[] = { SIGCHLD, SIGTERM, SIGINT, SIGHUP };
	size_t i;

	if (pipe2(k_pipe, O_CLOEXEC | O_NONBLOCK) == -1)
		_exit(1);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = k_on_signal;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaction(sigs[i], &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	prctl(PR_SET_PDEATHSIG, SIGTERM);
	if (getppid() != H->main_pid)
		k_quit = 1;

	while (!k_quit) {
		struct pollfd pfd[2] = { { fd, POLLIN, 0 }, { k_pipe[0], POLLIN, 0 } };
		struct kmsg m;
		struct kreply r;
		char drain[64];
		ssize_t n;

		k_reap();
		if (poll(pfd, 2, 1000) == -1 && errno != EINTR)
			break;
		if (pfd[1].revents & POLLIN)
			while (read(k_pipe[0], drain, sizeof(drain)) > 0)
				;
		if (!(pfd[0].revents & (POLLIN | POLLHUP | POLLERR)))
			continue;
		n = recv(fd, &m, sizeof(m), 0);
		if (n == 0 || (n == -1 && errno != EINTR && errno != EAGAIN))
			break;		/* every client end is closed */
		if (n != (ssize_t)sizeof(m))
			continue;
		memset(&r, 0, sizeof(r));
		r.seq = m.seq;
		r.rc = k_handle(m.cmd);
		snprintf(r.err, sizeof(r.err), "%s", kerr);
		send(fd, &r, sizeof(r), MSG_NOSIGNAL | MSG_DONTWAIT);
		if (m.cmd == K_SHUTDOWN)
			_exit(0);
	}
	k_teardown(1);
	_exit(0);
}

/* Ask the keeper to do cmd and wait for its answer. */
static int
keeper_call(int cmd, int timeout_ms)
{
	struct kmsg m;
	struct kreply r;
	long long end = harness_now_ms() + timeout_ms;

	if (H == NULL)
		return set_err("no stack is running");
	m.seq = atomic_fetch_add(&H->seq, 1) + 1;
	m.cmd = cmd;
	if (send(H->cmd_fd, &m, sizeof(m), MSG_NOSIGNAL) != (ssize_t)sizeof(m))
		return set_err("keeper gone: %s", strerror(errno));
	for (;;) {
		long long left = end - harness_now_ms();
		struct pollfd pfd = { H->cmd_fd, POLLIN, 0 };
		ssize_t n;

		if (left <= 0)
			return set_err("keeper gave no answer in %d ms", timeout_ms);
		if (poll(&pfd, 1, (int)left) <= 0)
			continue;
		n = recv(H->cmd_fd, &r, sizeof(r), 0);
		if (n == 0)
			return set_err("keeper gone");
		if (n != (ssize_t)sizeof(r) || r.seq != m.seq)
			continue;	/* a stale answer to a killed test */
		if (r.rc != 0)
			return set_err("%s", r.err[0] ? r.err : "keeper command failed");
		return 0;
	}
}

/* ------------------------------------------------------------------ */
/* Stack lifecycle                                                     */

void
harness_opts_defaults(struct harness_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->workers = 2;
	o->body_limit = 1048576;
	o->drain_timeout = 10;
	o->rate_ip = "10000r/s";
	o->burst_ip = "10000";
	o->rate_key = "10000r/s";
	o->burst_key = "10000";
	o->docs_url = NULL;	/* the api host's /docs: the error page resolves */
	o->extra_config = NULL;
	o->mail = NULL;
	o->smtp_user = NULL;
	o->smtp_password = NULL;
}

static int
abs_dir(const char *env, char *out)
{
	const char *v = getenv(env);
	char tmp[PATH_MAX];

	if (v == NULL || *v == '\0')
		v = ".";
	if (realpath(v, tmp) == NULL)
		return set_err("%s=%s: %s", env, v, strerror(errno));
	if (strlen(tmp) >= H_PATH)
		return set_err("%s too long", env);
	scopy(out, H_PATH, tmp);
	return 0;
}

/* Replace every occurrence of key in *text with val. */
static void
str_replace_all(char **text, const char *key, const char *val)
{
	struct hbuf b = { 0 };
	const char *p = *text, *q;
	size_t klen = strlen(key);

	while ((q = strstr(p, key)) != NULL) {
		hbuf_add(&b, p, (size_t)(q - p));
		hbuf_adds(&b, val);
		p = q + klen;
	}
	hbuf_adds(&b, p);
	free(*text);
	*text = hbuf_take(&b);
}

static int
render_nginx(const struct harness_opts *o)
{
	char tmpl[H_PATH + 64], nginx_dir[H_PATH + 16], web_root[H_PATH + 16];
	char web_build[H_PATH + 16];
	char ports[HOST__MAX][16], *text, *p, data_dir[H_PATH + 16];
	const char *user = geteuid() == 0 ? "nobody nogroup" : "nobody";
	int rc, i;

	snprintf(data_dir, sizeof(data_dir), "%s/data", H->dir);

	snprintf(tmpl, sizeof(tmpl), "%s/nginx/bds-dev.conf.in", H->srcdir);
	snprintf(nginx_dir, sizeof(nginx_dir), "%s/nginx", H->srcdir);
	snprintf(web_root, sizeof(web_root), "%s/web", H->srcdir);
	/* the build's web/ (web/local.mk): the OpenAPI document, Redoc's bundle */
	snprintf(web_build, sizeof(web_build), "%s/web", H->builddir);
	if ((text = read_file(tmpl, 0, NULL)) == NULL)
		return set_err("read %s: %s", tmpl, strerror(errno));
	for (i = 0; i < HOST__MAX; i++)
		snprintf(ports[i], sizeof(ports[i]), "%d", H->ports[i]);
	str_replace_all(&text, "@PREFIX@", H->ngx_prefix);
	str_replace_all(&text, "@NGINX_DIR@", nginx_dir);
	str_replace_all(&text, "@SOCKET@", H->sock);
	str_replace_all(&text, "@API_PORT@", ports[HOST_API]);
	str_replace_all(&text, "@SANDBOX_PORT@", ports[HOST_SANDBOX]);
	str_replace_all(&text, "@LINK_PORT@", ports[HOST_LINK]);
	str_replace_all(&text, "@WEB_ROOT@", web_root);
	str_replace_all(&text, "@WEB_BUILD@", web_build);
	str_replace_all(&text, "@USER@", user);
	str_replace_all(&text, "@RATE_IP@", o->rate_ip);
	str_replace_all(&text, "@BURST_IP@", o->burst_ip);
	str_replace_all(&text, "@RATE_KEY@", o->rate_key);
	str_replace_all(&text, "@BURST_KEY@", o->burst_key);
	str_replace_all(&text, "@DOCS_URL@", H->docs_url);
	str_replace_all(&text, "@DATA_DIR@", data_dir);	/* statement documents */
	/* a placeholder left over means the template and harness drifted */
	for (p = strchr(text, '@'); p != NULL; p = strchr(p + 1, '@')) {
		size_t n = strspn(p + 1, "ABCDEFGHIJKLMNOPQRSTUVWXYZ_");

		if (n > 0 && p[n + 1] == '@') {
			rc = set_err("%s: unknown placeholder %.*s", tmpl, (int)n + 2, p);
			free(text);
			return rc;
		}
	}
	rc = write_file(H->ngx_conf, text, strlen(text), 0644);
	free(text);
	return rc;
}

/* The mail settings: always an absolute spool dir (bds-deliver may run
 * from any directory), smtp to the reserved port when asked. */
static int
mail_config(const struct harness_opts *o, char *out, size_t size)
{
	int smtp = o->mail != NULL && strcmp(o->mail, "smtp") == 0, n;

	if (o->mail != NULL && !smtp && strcmp(o->mail, "spool") != 0)
		return set_err("opts.mail is \"%s\", want NULL, \"spool\" or \"smtp\"", o->mail);
	n = snprintf(out, size,
	    "mail_transport = %s\n"
	    "mail_spool_dir = %s\n"
	    "mail_from = BDS Tests <no-reply@bds.test>\n"
	    "smtp_url = smtp://127.0.0.1:%d\n"
	    "smtp_timeout = 10\n"
	    "%s%s%s"
	    "%s%s%s",
	    smtp ? "smtp" : "spool", H->maildir, H->smtp_port,
	    o->smtp_user ? "smtp_user = " : "", o->smtp_user ? o->smtp_user : "",
	    o->smtp_user ? "\n" : "",
	    o->smtp_password ? "smtp_password = " : "",
	    o->smtp_password ? o->smtp_password : "", o->smtp_password ? "\n" : "");
	if (n < 0 || (size_t)n >= size)
		return set_err("mail config too long");
	return 0;
}

static int
write_config(const struct harness_opts *o)
{
	char text[8192], mail[2048];
	const char *read_url = o->read_url, *self = getenv("BDS_E2E_READ_SELF");
	int n;

	if (read_url == NULL && self != NULL && strcmp(self, "1") == 0)
		read_url = H->dburl;
	if (mail_config(o, mail, sizeof(mail)) == -1)
		return -1;
	n = snprintf(text, sizeof(text),
	    "# written by the e2e harness\n"
	    "database_url = %s\n"
	    "socket_path = %s\n"
	    "socket_mode = 0660\n"
	    "%s"
	    "workers = %d\n"
	    "body_limit = %lld\n"
	    "deployment = development\n"
	    "%s%s%s"	/* docs_url when given; else the default, api_url's /docs */
	    "log_path = %s\n"
	    "cursor_key = 00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff\n"
	    "jwt_seed = 0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c4b5a69788796a5b4c3d2e1f0\n"
	    "secret_key = a0b1c2d3e4f5061728394a5b6c7d8e9fa0b1c2d3e4f5061728394a5b6c7d8e9f\n"
	    "allow_private_targets = 1\n"
	    "clients_max = 1000\n"	/* iam slice: suites share one developer */
	    "drain_timeout = %d\n"
	    "sql_dir = %s/sql\n"
	    "data_dir = %s/data\n"	/* statement documents */
	    "extract_program = %s/app/bds-extract\n"	/* bill imports' extractor */
	    "%s%s%s"	/* db.read_url */
	    "api_url = %s\n"
	    "sandbox_url = %s\n"
	    "%s"
	    "%s%s",
	    H->dburl, H->sock,
	    /* nginx's workers run as nobody:nogroup when we are root */
	    geteuid() == 0 ? "socket_group = nogroup\n" : "", o->workers, o->body_limit,
	    o->docs_url ? "docs_url = " : "", o->docs_url ? o->docs_url : "",
	    o->docs_url ? "\n" : "", H->reqlog,
	    o->drain_timeout, H->srcdir, H->dir, H->builddir,
	    read_url != NULL ? "db.read_url = " : "", read_url != NULL ? read_url : "",
	    read_url != NULL ? "\n" : "", H->base_url[HOST_API],
	    H->base_url[HOST_SANDBOX], mail,
	    o->extra_config ? o->extra_config : "",
	    o->extra_config && *o->extra_config ? "\n" : "");
	if (n < 0 || (size_t)n >= sizeof(text))
		return set_err("config text too long");
	return write_file(H->conf, text, (size_t)n, 0644);
}

/*
 * data_dir (statement documents) as an operator sets it up: bds-jobs
 * writes, nginx's workers read. As root they run as nobody:nogroup, so
 * the tree's group is nogroup and statements/ is set-group-ID: every
 * directory and file bds-jobs adds below it (0750 / 0640) is theirs too.
 */
static int
data_dirs(const struct harness_opts *o)
{
	char data[H_PATH + 16], st[H_PATH + 32];
	struct group *gr = geteuid() == 0 ? getgrnam("nogroup") : NULL;

	snprintf(data, sizeof(data), "%s/data", H->dir);
	snprintf(st, sizeof(st), "%s/statements", data);
	if (mkdir(data, 0750) == -1)
		return set_err("data_dir %s: %s", data, strerror(errno));
	/* a full documents disk: data/ is a tmpfs of data_disk_bytes */
	if (o->data_disk_bytes > 0) {
		if (mount("bds-e2e-data", data, "tmpfs", MS_NOSUID | MS_NODEV,
		    harness_fmt("size=%lld,mode=0750", o->data_disk_bytes)) == -1)
			return set_err("data_disk_bytes: mount -t tmpfs on %s: %s (the suite"
			    " must run as root, with mounts allowed)", data, strerror(errno));
		H->data_mounted = 1;
	}
	if (mkdir(st, 0750) == -1 ||
	    (gr != NULL && (chown(data, (uid_t)-1, gr->gr_gid) == -1 ||
	    chown(st, (uid_t)-1, gr->gr_gid) == -1)) ||
	    chmod(data, 0750) == -1 || chmod(st, 02750) == -1)
		return set_err("data_dir %s: %s", data, strerror(errno));
	return 0;
}

/* BDS_E2E_VALGRIND=DIR (vg_wrap): the suppressions and DIR/SUITE.%p.log. */
static int
vg_prepare(void)
{
	const char *dir = getenv("BDS_E2E_VALGRIND");
	char abs[PATH_MAX];

	H->vglog[0] = '\0';
	if (dir == NULL || *dir == '\0')
		return 0;
	if (realpath(dir, abs) == NULL || strlen(abs) >= H_PATH)
		return set_err("BDS_E2E_VALGRIND=%s: not a directory", dir);
	if (access("/usr/bin/valgrind", X_OK) == -1)
		return set_err("BDS_E2E_VALGRIND: /usr/bin/valgrind: %s", strerror(errno));
	snprintf(H->vgsupp, sizeof(H->vgsupp), "--suppressions=%s/t/valgrind.supp",
	    H->srcdir);
	snprintf(H->vglog, sizeof(H->vglog), "--log-file=%s/%.40s.%%p.log", abs,
	    program_invocation_short_name);
	return 0;
}

/* Fill the paths and settings in H; create the temp dir. */
static int
prepare(const struct harness_opts *o)
{
	const char *pgbin = getenv("BDS_PG_BINDIR"), *ngx = getenv("BDS_NGINX");
	char path[H_PATH + 64], tmpl[] = "/tmp/bds-e2e-XXXXXX";
	int fds[HOST__MAX], smtp_fd, i, rc = 0;

	if (abs_dir("BDS_SRCDIR", H->srcdir) == -1 ||
	    abs_dir("BDS_BUILDDIR", H->builddir) == -1)
		return -1;
	snprintf(H->pgbin, H_PATH, "%s", pgbin && *pgbin ? pgbin : "/usr/lib/postgresql/15/bin");
	snprintf(H->nginx, H_PATH, "%s", ngx && *ngx ? ngx : "/usr/sbin/nginx");
	if (access(H->nginx, X_OK) == -1 && !(ngx && *ngx))
		snprintf(H->nginx, H_PATH, "/usr/bin/nginx");
	snprintf(path, sizeof(path), "%s/postgres", H->pgbin);
	if (access(path, X_OK) == -1)
		return set_err("%s: %s (set BDS_PG_BINDIR)", path, strerror(errno));
	if (access(H->nginx, X_OK) == -1)
		return set_err("%s: %s (set BDS_NGINX)", H->nginx, strerror(errno));
	snprintf(path, sizeof(path), "%s/app/bds-api", H->builddir);
	if (access(path, X_OK) == -1)
		return set_err("%s: %s (build first; BDS_BUILDDIR?)", path, strerror(errno));
	snprintf(path, sizeof(path), "%s/app/bdsctl", H->builddir);
	if (access(path, X_OK) == -1)
		return set_err("%s: %s (build first; BDS_BUILDDIR?)", path, strerror(errno));

	if (vg_prepare() == -1)
		return -1;
	H->workers = o->workers > 0 ? o->workers : 2;
	H->drain_timeout = o->drain_timeout > 0 ? o->drain_timeout : 10;
	H->keep = getenv("BDS_E2E_KEEP") != NULL && *getenv("BDS_E2E_KEEP") != '\0' &&
	    strcmp(getenv("BDS_E2E_KEEP"), "0") != 0;
	if (geteuid() == 0) {
		struct passwd *pw = getpwnam("postgres");

		if (pw == NULL)
			return set_err("running as root and there is no user postgres");
		H->pg_drop = 1;
		H->pg_uid = pw->pw_uid;
		H->pg_gid = pw->pw_gid;
	}

	if (mkdtemp(tmpl) == NULL)
		return set_err("mkdtemp: %s", strerror(errno));
	snprintf(H->dir, H_PATH, "%s", tmpl);
	if (chmod(H->dir, 0755) == -1)
		return set_err("chmod %s: %s", H->dir, strerror(errno));
#define HPATH(field, name) sjoin(H->field, H_PATH, H->dir, name)
	HPATH(pgdata, "pgdata");
	HPATH(pgsock, "pgsock");
	HPATH(pglog, "postgres.log");
	HPATH(initdb_log, "initdb.log");
	HPATH(conf, "bds-api.conf");
	HPATH(sock, "api.sock");
	HPATH(apilog, "bds-api.log");
	HPATH(reqlog, "requests.log");
	HPATH(ctllog, "bdsctl.log");
	HPATH(ngx_prefix, "nginx");
	HPATH(ngx_conf, "nginx/nginx.conf");
	HPATH(ngx_errlog, "nginx/error.log");
	HPATH(ngx_stderr, "nginx/stderr.log");
	HPATH(deliverlog, "bds-deliver.log");
	HPATH(jobslog, "bds-jobs.log");
	HPATH(maildir, "mail");
#undef HPATH
	if (o->database_url != NULL) {
		if (strlen(o->database_url) >= sizeof(H->dburl))
			return set_err("database_url too long");
		H->pg_outside = 1;
		scopy(H->dburl, sizeof(H->dburl), o->database_url);
	} else
		snprintf(H->dburl, sizeof(H->dburl), "host=%s dbname=bds user=bds", H->pgsock);
	if (mkdir(H->ngx_prefix, 0755) == -1)
		return set_err("mkdir %s: %s", H->ngx_prefix, strerror(errno));
	if (mkdir(H->maildir, 0700) == -1)
		return set_err("mkdir %s: %s", H->maildir, strerror(errno));
	if (data_dirs(o) == -1)
		return -1;

	for (i = 0; i < HOST__MAX; i++)
		fds[i] = -1;
	smtp_fd = -1;
	for (i = 0; i < HOST__MAX && rc == 0; i++) {
		if ((H->ports[i] = free_port(&fds[i])) <= 0)
			rc = set_err("no free loopback port: %s", strerror(errno));
		snprintf(H->base_url[i], sizeof(H->base_url[i]),
		    "http://127.0.0.1:%d", H->ports[i]);
	}
	if (o->docs_url != NULL)
		scopy(H->docs_url, sizeof(H->docs_url), o->docs_url);
	else
		snprintf(H->docs_url, sizeof(H->docs_url), "%s/docs", H->base_url[HOST_API]);
	if (rc == 0 && o->mail != NULL && strcmp(o->mail, "smtp") == 0 &&
	    (H->smtp_port = free_port(&smtp_fd)) <= 0)
		rc = set_err("no free loopback port: %s", strerror(errno));
	for (i = 0; i < HOST__MAX; i++)
		if (fds[i] != -1)
			close(fds[i]);
	if (smtp_fd != -1)
		close(smtp_fd);
	if (rc == -1)
		return -1;
	if (write_config(o) == -1 || render_nginx(o) == -1)
		return -1;
	return 0;
}

static void
unmap_state(void)
{
	if (H != NULL) {
		if (H->cmd_fd != -1)
			close(H->cmd_fd);
		munmap(H, sizeof(*H));
		H = NULL;
	}
}

static void secrets_keep(int dump);

/* Sanitizer reports found in the stack's logs by harness_stop(). */
static int sanitizer_reports;

/* Print and count sanitizer reports (ASan, LSan, UBSan) in a log. */
static int
scan_sanitizer(const char *path)
{
	static const char *const marks[] = {
		"ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "runtime error:",
	};
	char *text = read_file(path, 0, NULL), *first = NULL, *p;
	size_t i;
	int n = 0;

	if (text == NULL)
		return 0;
	for (i = 0; i < sizeof(marks) / sizeof(marks[0]); i++)
		for (p = strstr(text, marks[i]); p != NULL; p = strstr(p + 1, marks[i])) {
			if (first == NULL || p < first)
				first = p;
			n++;
		}
	if (n > 0) {
		while (first > text && first[-1] != '\n')
			first--;
		fprintf(stderr, "harness: %d sanitizer report(s) in %s; the first:\n%.4000s\n",
		    n, path, first);
	}
	free(text);
	return n;
}

void
harness_stop(void)
{
	long long end;
	int st;

	if (H == NULL || getpid() != H->main_pid)
		return;
	secrets_keep(1);	/* the secrets scan's copies: the dump, while PostgreSQL runs */
	if (H->keeper_pid > 0) {
		if (keeper_call(K_SHUTDOWN, 120000) == -1)
			fprintf(stderr, "harness: shutdown: %s\n", herr);
		end = harness_now_ms() + 10000;
		while (waitpid(H->keeper_pid, &st, WNOHANG) == 0) {
			if (harness_now_ms() >= end) {
				kill(H->keeper_pid, SIGKILL);
				waitpid(H->keeper_pid, &st, 0);
				break;
			}
			harness_sleep_ms(10);
		}
	}
	sanitizer_reports += scan_sanitizer(H->apilog) + scan_sanitizer(H->reqlog) +
	    scan_sanitizer(H->ctllog) + scan_sanitizer(H->deliverlog) +
	    scan_sanitizer(H->jobslog);
	secrets_keep(0);	/* the secrets scan's copies: the logs, once complete */
	data_disk_umount();
	if (H->keep)
		fprintf(stderr, "harness: kept %s\n", H->dir);
	else
		rm_rf(H->dir);
	unmap_state();
}

int
harness_run_suite(Suite *s)
{
	SRunner *sr = srunner_create(s);
	int failed;

	srunner_run_all(sr, CK_ENV);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	if (sanitizer_reports > 0)
		fprintf(stderr, "harness: FAIL: %d sanitizer report(s) in the stack's logs\n",
		    sanitizer_reports);
	return failed == 0 && sanitizer_reports == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

int
harness_start(const struct harness_opts *opts)
{
	struct harness_opts o;
	int sv[2];
	pid_t pid;

	if (opts == NULL)
		harness_opts_defaults(&o);
	else
		o = *opts;
	if (H != NULL)
		return set_err("a stack is running already");
	H = mmap(NULL, sizeof(*H), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (H == MAP_FAILED) {
		H = NULL;
		return set_err("mmap: %s", strerror(errno));
	}
	memset(H, 0, sizeof(*H));
	H->cmd_fd = -1;
	H->main_pid = getpid();
	curl_global_init(CURL_GLOBAL_ALL);
	if (prepare(&o) == -1)
		goto fail;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) == -1) {
		set_err("socketpair: %s", strerror(errno));
		goto fail;
	}
	fflush(NULL);
	if ((pid = fork()) == -1) {
		set_err("fork: %s", strerror(errno));
		close(sv[0]);
		close(sv[1]);
		goto fail;
	}
	if (pid == 0) {
		close(sv[0]);
		keeper_main(sv[1]);
		_exit(0);
	}
	close(sv[1]);
	H->cmd_fd = sv[0];
	H->keeper_pid = pid;
	if (keeper_call(K_BOOT, 300000) == -1)
		goto fail;
	if (harness_wait_health(200, 15000) == -1) {
		struct harness_resp *r = harness_get("api", "/v1/health");

		set_err("GET /v1/health did not answer 200 within 15 s (last: %ld %s%.300s)",
		    r->status, r->error, r->body);
		harness_resp_free(r);
		goto fail;
	}
	if (harness_api_wait_workers((size_t)H->workers, NULL, 0, 5000) == -1) {
		set_err("bds-api has %zu workers, not %d", harness_api_workers(NULL, 0),
		    H->workers);
		goto fail;
	}
	return 0;
fail:
	{
		char saved[H_ERRLEN];

		snprintf(saved, sizeof(saved), "%s", herr);
		if (H->dir[0] != '\0') {
			fprintf(stderr, "harness: start failed: %s\n", saved);
			harness_dump_logs();
		}
		harness_stop();
		unmap_state();
		snprintf(herr, sizeof(herr), "%s", saved);
	}
	return -1;
}

void
harness_fixture_start(const struct harness_opts *o)
{
	if (harness_start(o) == -1)
		ck_abort_msg("e2e stack did not start: %s", harness_error());
}

void
harness_fixture_start_default(void)
{
	harness_fixture_start(NULL);
}

void
harness_fixture_stop(void)
{
	harness_stop();
}

int
harness_recover(void)
{
	if (H == NULL)
		return set_err("no stack is running");
	if (!H->pg_outside && atomic_load(&H->pg_pid) == 0 &&
	    keeper_call(K_PG_START, 60000) == -1)
		return -1;
	if (atomic_load(&H->api_pid) == 0 && keeper_call(K_API_START, 60000) == -1)
		return -1;
	if (atomic_load(&H->nginx_pid) == 0 && keeper_call(K_NGINX_START, 60000) == -1)
		return -1;
	if (harness_wait_health(200, 15000) == -1)
		return set_err("health is not 200 after recovery");
	if (harness_api_wait_workers((size_t)H->workers, NULL, 0, 5000) == -1)
		return set_err("bds-api does not have %d workers", H->workers);
	return 0;
}

void
harness_fixture_recover(void)
{
	if (harness_recover() == -1) {
		harness_dump_logs();
		ck_abort_msg("e2e stack could not be recovered: %s", harness_error());
	}
}

static void
dump_one(const char *title, const char *path)
{
	size_t len;
	char *text = read_file(path, 3000, &len);

	if (text == NULL || len == 0) {
		free(text);
		return;
	}
	fprintf(stderr, "----- %s (%s), last %zu bytes -----\n%s%s", title, path, len,
	    text, text[len - 1] == '\n' ? "" : "\n");
	free(text);
}

void
harness_dump_logs(void)
{
	if (H == NULL)
		return;
	dump_one("initdb", H->initdb_log);
	dump_one("postgres", H->pglog);
	dump_one("bdsctl", H->ctllog);
	dump_one("bds-api", H->apilog);
	dump_one("bds-deliver", H->deliverlog);
	dump_one("bds-jobs", H->jobslog);
	dump_one("nginx stderr", H->ngx_stderr);
	dump_one("nginx error log", H->ngx_errlog);
	fflush(stderr);
}

/* ------------------------------------------------------------------ */
/* Where things are                                                    */

const char *harness_dir(void) { return H ? H->dir : ""; }
const char *harness_config_path(void) { return H ? H->conf : ""; }
const char *harness_socket_path(void) { return H ? H->sock : ""; }
const char *harness_database_url(void) { return H ? H->dburl : ""; }
const char *harness_api_log_path(void) { return H ? H->apilog : ""; }
const char *harness_deliver_log_path(void) { return H ? H->deliverlog : ""; }
const char *harness_jobs_log_path(void) { return H ? H->jobslog : ""; }
const char *harness_mail_dir(void) { return H ? H->maildir : ""; }
const char *harness_data_dir(void) { return H ? harness_fmt("%s/data", H->dir) : ""; }
int harness_smtp_port(void) { return H ? H->smtp_port : 0; }

static int
host_index(const char *host)
{
	int i;

	for (i = 0; host != NULL && i < HOST__MAX; i++)
		if (strcmp(host, host_names[i]) == 0)
			return i;
	return -1;
}

int
harness_port(const char *host)
{
	int i = host_index(host);

	return H && i >= 0 ? H->ports[i] : 0;
}

const char *
harness_base_url(const char *host)
{
	int i = host_index(host);

	return H && i >= 0 ? H->base_url[i] : NULL;
}

/* ------------------------------------------------------------------ */
/* Processes                                                           */

int
harness_pg_stop(void)
{
	return keeper_call(K_PG_STOP, 60000);
}

int
harness_pg_start(void)
{
	return keeper_call(K_PG_START, 60000);
}

pid_t
harness_api_pid(void)
{
	return H ? (pid_t)atomic_load(&H->api_pid) : 0;
}

size_t
harness_api_workers(pid_t *out, size_t max)
{
	pid_t buf[1];

	if (out == NULL || max == 0)
		return proc_children(harness_api_pid(), buf, 0);
	return proc_children(harness_api_pid(), out, max);
}

/*
 * How long a worker set must hold still to count as the master's settled
 * state: a reload in flight (a second SIGHUP, an upgrade's --check child)
 * changes the children within milliseconds of the set it passes through.
 */
#define WORKERS_SETTLE_MS	1000

int
harness_api_wait_workers(size_t n, const pid_t *avoid, size_t navoid, int timeout_ms)
{
	long long end = harness_now_ms() + timeout_ms + WORKERS_SETTLE_MS, since = 0;
	pid_t w[256], held[256];
	size_t nheld = 0;

	for (;;) {
		size_t got = harness_api_workers(w, 256), i, j;
		int clash = 0;

		for (i = 0; i < got && i < 256 && !clash; i++)
			for (j = 0; j < navoid; j++)
				if (w[i] == avoid[j])
					clash = 1;
		if (got != n || clash) {
			since = 0;
		} else if (since == 0 || nheld != got ||
		    memcmp(held, w, got * sizeof(*w)) != 0) {
			/* a new set: it counts once it has held still */
			since = harness_now_ms();
			nheld = got;
			memcpy(held, w, got * sizeof(*w));
		} else if (harness_now_ms() - since >= WORKERS_SETTLE_MS) {
			return 0;
		}
		if (harness_now_ms() >= end)
			return set_err("after %d ms bds-api has %zu workers%s, want %zu new",
			    timeout_ms, got, clash ? " (some old)" : "", n);
		harness_sleep_ms(10);
	}
}

int
harness_api_signal(int sig)
{
	pid_t pid = harness_api_pid();

	if (pid == 0)
		return set_err("bds-api is not running");
	if (kill(pid, sig) == -1)
		return set_err("kill %d: %s", (int)pid, strerror(errno));
	return 0;
}

int
harness_api_wait_exit(int timeout_ms, int *wstatus)
{
	long long end = harness_now_ms() + timeout_ms;
	pid_t pid;

	if (H == NULL)
		return set_err("no stack is running");
	if ((pid = atomic_load(&H->api_pid)) == 0)
		pid = atomic_load(&H->api_last_pid);
	for (;;) {
		if (atomic_load(&H->api_pid) != (int)pid &&
		    atomic_load(&H->api_last_pid) == (int)pid) {
			if (wstatus != NULL)
				*wstatus = atomic_load(&H->api_last_status);
			return 0;
		}
		if (harness_now_ms() >= end)
			return set_err("bds-api %d still running after %d ms", (int)pid, timeout_ms);
		harness_sleep_ms(5);
	}
}

int
harness_api_start(void)
{
	if (keeper_call(K_API_START, 60000) == -1)
		return -1;
	if (harness_wait_health(200, 15000) == -1)
		return set_err("health is not 200 after bds-api started");
	return harness_api_wait_workers((size_t)H->workers, NULL, 0, 5000);
}

int
harness_api_stop(void)
{
	return keeper_call(K_API_STOP, (H ? H->drain_timeout : 10) * 1000 + 30000);
}

int
harness_api_kill(void)
{
	return keeper_call(K_API_KILL, 30000);
}

/*
 * Run <builddir>/app/<tool> --config FILE args... from this process, its
 * output appended to log, for at most timeout_ms: the exit status or -1.
 */
static int
run_tool(const char *tool, const char *log, const char *const args[], int timeout_ms)
{
	char bin[H_PATH + 32];
	const char *argv[64], *vgargv[80];
	const char *const *run;
	char **env;
	size_t n = 0;
	long long end;
	pid_t pid;
	int st, out;

	if (H == NULL)
		return set_err("no stack is running");
	snprintf(bin, sizeof(bin), "%s/app/%s", H->builddir, tool);
	argv[n++] = bin;
	argv[n++] = "--config";
	argv[n++] = H->conf;
	while (args != NULL && args[n - 3] != NULL && n < 63) {
		argv[n] = args[n - 3];
		n++;
	}
	argv[n] = NULL;
	run = vg_wrap(argv, vgargv, 80);
	if ((out = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644)) == -1)
		return set_err("open %s: %s", log, strerror(errno));
	env = env_scrubbed();
	fflush(NULL);
	if ((pid = fork()) == 0) {
		dup2(out, 1);
		dup2(out, 2);
		execve(run[0], (char *const *)run, env);
		_exit(127);
	}
	close(out);
	free(env);
	if (pid == -1)
		return set_err("fork: %s", strerror(errno));
	end = harness_now_ms() + timeout_ms;
	while (waitpid(pid, &st, WNOHANG) == 0) {
		if (harness_now_ms() >= end) {
			kill(pid, SIGKILL);
			waitpid(pid, &st, 0);
			return set_err("%s timed out", tool);
		}
		harness_sleep_ms(5);
	}
	if (!WIFEXITED(st))
		return set_err("%s killed by signal %d", tool, WTERMSIG(st));
	return WEXITSTATUS(st);
}

int
harness_bdsctl(const char *const args[])
{
	return run_tool("bdsctl", H ? H->ctllog : "", args, 60000);
}

int
harness_deliver_once(void)
{
	static const char *const args[] = { "--once", NULL };

	return run_tool("bds-deliver", H ? H->deliverlog : "", args, 90000);
}

int
harness_deliver_start(const char *const args[])
{
	size_t n = 0;

	if (H == NULL)
		return set_err("no stack is running");
	for (; args != NULL && args[n] != NULL; n++) {
		if (n >= 8 || strlen(args[n]) >= sizeof(H->deliver_args[0]))
			return set_err("harness_deliver_start: at most 8 args of 127 bytes");
		scopy(H->deliver_args[n], sizeof(H->deliver_args[0]), args[n]);
	}
	H->ndeliver_args = (int)n;
	return keeper_call(K_DELIVER_START, 30000);
}

int
harness_deliver_stop(void)
{
	return keeper_call(K_DELIVER_STOP, 30000);
}

pid_t
harness_deliver_pid(void)
{
	return H ? (pid_t)atomic_load(&H->deliver_pid) : 0;
}

/* ---- jobs slice: bds-jobs ---- */

int
harness_jobs_start(void)
{
	return keeper_call(K_JOBS_START, 30000);
}

int
harness_jobs_stop(void)
{
	return keeper_call(K_JOBS_STOP, 45000);
}

int
harness_jobs_kill(void)
{
	return keeper_call(K_JOBS_KILL, 30000);
}

pid_t
harness_jobs_pid(void)
{
	return H ? (pid_t)atomic_load(&H->jobs_pid) : 0;
}

int
harness_jobs_run(const char *const args[], int timeout_ms)
{
	return run_tool("bds-jobs", H ? H->jobslog : "", args, timeout_ms);
}

/* Poll until the query (its n parameters p1, p2) counts 0 busy jobs: 0,
 * or -1 after timeout_ms. */
static int
jobs_wait(const char *what, const char *q, int n, const char *p1, const char *p2,
    int timeout_ms)
{
	long long end = harness_now_ms() + timeout_ms;
	const char *params[2] = { p1, p2 };
	PGconn *pg;
	int rc = -1;

	if (H == NULL)
		return set_err("no stack is running");
	pg = PQconnectdb(harness_database_url());
	if (PQstatus(pg) != CONNECTION_OK) {
		set_err("%s: %s", what, PQerrorMessage(pg));
		PQfinish(pg);
		return -1;
	}
	for (;;) {
		PGresult *res = PQexecParams(pg, q, n, NULL, params, NULL, NULL, 0);
		int busy = PQresultStatus(res) != PGRES_TUPLES_OK ||
		    strcmp(PQgetvalue(res, 0, 0), "0") != 0;

		PQclear(res);
		if (!busy) {
			rc = 0;
			break;
		}
		if (harness_now_ms() >= end) {
			set_err("%s: jobs still pending or running after %d ms", what, timeout_ms);
			break;
		}
		harness_sleep_ms(20);
	}
	PQfinish(pg);
	return rc;
}

int
harness_jobs_wait_idle(int timeout_ms)
{
	/* a deferred job (JOBS_DEFER: back within 500 ms) is still busy; one
	 * waiting for its retry backoff (whole seconds) is not */
	return jobs_wait("harness_jobs_wait_idle", "SELECT count(*) FROM jobs"
	    " WHERE status = 'running' OR (status = 'pending'"
	    "  AND next_attempt_at <= now() + interval '600 milliseconds')", 0, NULL, NULL,
	    timeout_ms);
}

int
harness_jobs_wait_settled(const char *kind, const char *subject_id, int timeout_ms)
{
	return jobs_wait("harness_jobs_wait_settled", "SELECT count(*) FROM jobs"
	    " WHERE kind = $1 AND ($2::text IS NULL OR subject_id = $2)"
	    " AND status IN ('pending', 'running')", 2, kind, subject_id, timeout_ms);
}

/* ------------------------------------------------------------------ */
/* Responses                                                           */

const char *
harness_header(const struct harness_resp *r, const char *name)
{
	size_t i;

	for (i = 0; r != NULL && i < r->nheaders; i++)
		if (strcasecmp(r->headers[i].name, name) == 0)
			return r->headers[i].value;
	return NULL;
}

struct json_object *
harness_json_get(const struct harness_resp *r, const char *key)
{
	struct json_object *v = NULL;

	if (r == NULL || r->json == NULL || !json_object_is_type(r->json, json_type_object))
		return NULL;
	return json_object_object_get_ex(r->json, key, &v) ? v : NULL;
}

const char *
harness_json_string(const struct harness_resp *r, const char *key)
{
	struct json_object *v = harness_json_get(r, key);

	return v != NULL && json_object_is_type(v, json_type_string) ?
	    json_object_get_string(v) : NULL;
}

static void
headers_clear(struct harness_resp *r)
{
	size_t i;

	for (i = 0; i < r->nheaders; i++) {
		free(r->headers[i].name);
		free(r->headers[i].value);
	}
	free(r->headers);
	r->headers = NULL;
	r->nheaders = 0;
}

void
harness_resp_free(struct harness_resp *r)
{
	if (r == NULL)
		return;
	headers_clear(r);
	free(r->body);
	free(r->fcgi_raw);
	free(r->fcgi_stderr);
	json_object_put(r->json);
	free(r);
}

static struct harness_resp *
resp_new(void)
{
	struct harness_resp *r = xmalloc(sizeof(*r));

	memset(r, 0, sizeof(*r));
	return r;
}

/* Add one "Name: value" line (trailing CR/LF and spaces trimmed). */
static void
header_add(struct harness_resp *r, const char *line, size_t len)
{
	const char *colon = memchr(line, ':', len), *v, *e = line + len;

	if (colon == NULL || colon == line)
		return;
	v = colon + 1;
	while (v < e && (*v == ' ' || *v == '\t'))
		v++;
	while (e > v && (e[-1] == '\r' || e[-1] == '\n' || e[-1] == ' ' || e[-1] == '\t'))
		e--;
	r->headers = xrealloc(r->headers, (r->nheaders + 1) * sizeof(*r->headers));
	r->headers[r->nheaders].name = xstrndup(line, (size_t)(colon - line));
	r->headers[r->nheaders].value = xstrndup(v, (size_t)(e - v));
	r->nheaders++;
}

/* The body as JSON when all of it is one JSON value, else NULL. */
static struct json_object *
parse_json(const char *s, size_t len)
{
	struct json_tokener *t;
	struct json_object *o;
	size_t end;

	if (len == 0 || len > INT_MAX || (t = json_tokener_new()) == NULL)
		return NULL;
	o = json_tokener_parse_ex(t, s, (int)len);
	if (o != NULL && json_tokener_get_error(t) == json_tokener_success) {
		for (end = json_tokener_get_parse_end(t); end < len; end++)
			if (!isspace((unsigned char)s[end]))
				break;
		if (end < len) {
			json_object_put(o);
			o = NULL;
		}
	} else {
		json_object_put(o);
		o = NULL;
	}
	json_tokener_free(t);
	return o;
}

/* ------------------------------------------------------------------ */
/* HTTP through nginx                                                  */

struct xfer {
	CURL		*c;
	struct curl_slist *hl;
	struct hbuf	 body;
	struct harness_resp *r;
	int		 failed;	/* set up could not be done */
	/* what was asked, for the recorder (record.h) */
	const char	*method, *host, *path;
	const char *const *headers;
	const void	*req_body;
	size_t		 req_len;
};

static size_t
on_body(char *p, size_t size, size_t n, void *arg)
{
	struct xfer *x = arg;

	hbuf_add(&x->body, p, size * n);
	return size * n;
}

static size_t
on_header(char *p, size_t size, size_t n, void *arg)
{
	struct xfer *x = arg;
	size_t len = size * n;

	if (len >= 5 && strncmp(p, "HTTP/", 5) == 0)
		headers_clear(x->r);	/* a new (final or interim) response */
	else
		header_add(x->r, p, len);
	return len;
}

static void
xfer_init(struct xfer *x, const char *method, const char *host, const char *path,
    const char *const headers[], const void *body, size_t body_len)
{
	const char *base = harness_base_url(host);
	char *url;
	size_t i;

	memset(x, 0, sizeof(*x));
	x->r = resp_new();
	x->method = method;
	x->host = host;
	x->path = path;
	x->headers = headers;
	x->req_body = body;
	x->req_len = body_len;
	if (base == NULL) {
		snprintf(x->r->error, sizeof(x->r->error), "no stack or unknown host \"%s\"",
		    host ? host : "(null)");
		x->failed = 1;
		return;
	}
	if ((x->c = curl_easy_init()) == NULL) {
		snprintf(x->r->error, sizeof(x->r->error), "curl_easy_init failed");
		x->failed = 1;
		return;
	}
	url = xmalloc(strlen(base) + strlen(path) + 1);
	strcpy(url, base);
	strcat(url, path);
	curl_easy_setopt(x->c, CURLOPT_URL, url);
	free(url);
	curl_easy_setopt(x->c, CURLOPT_PATH_AS_IS, 1L);
	curl_easy_setopt(x->c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(x->c, CURLOPT_PROXY, "");
	curl_easy_setopt(x->c, CURLOPT_NOPROXY, "*");
	curl_easy_setopt(x->c, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(x->c, CURLOPT_TIMEOUT_MS, 10000L);
	curl_easy_setopt(x->c, CURLOPT_CONNECTTIMEOUT_MS, 3000L);
	curl_easy_setopt(x->c, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(x->c, CURLOPT_WRITEDATA, x);
	curl_easy_setopt(x->c, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(x->c, CURLOPT_HEADERDATA, x);
	for (i = 0; headers != NULL && headers[i] != NULL; i++)
		x->hl = curl_slist_append(x->hl, headers[i]);
	if (x->hl != NULL)
		curl_easy_setopt(x->c, CURLOPT_HTTPHEADER, x->hl);
	if (strcmp(method, "HEAD") == 0) {
		curl_easy_setopt(x->c, CURLOPT_NOBODY, 1L);
	} else if (body != NULL || body_len > 0 || strcmp(method, "POST") == 0 ||
	    strcmp(method, "PUT") == 0 || strcmp(method, "PATCH") == 0) {
		curl_easy_setopt(x->c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)body_len);
		curl_easy_setopt(x->c, CURLOPT_POSTFIELDS, body != NULL ? body : "");
		curl_easy_setopt(x->c, CURLOPT_CUSTOMREQUEST, method);
	} else if (strcmp(method, "GET") != 0) {
		curl_easy_setopt(x->c, CURLOPT_CUSTOMREQUEST, method);
	}
}

static struct harness_resp *
xfer_finish(struct xfer *x, CURLcode rc)
{
	struct harness_resp *r = x->r;
	long status = 0;

	if (!x->failed) {
		if (rc == CURLE_OK) {
			curl_easy_getinfo(x->c, CURLINFO_RESPONSE_CODE, &status);
			r->status = status;
		} else {
			snprintf(r->error, sizeof(r->error), "curl: %s", curl_easy_strerror(rc));
		}
	}
	r->body_len = x->body.len;
	r->body = hbuf_take(&x->body);
	r->json = parse_json(r->body, r->body_len);
	if (!x->failed)
		record_exchange(x->method, x->host, x->path, x->headers, x->req_body,
		    x->req_len, r);
	curl_slist_free_all(x->hl);
	curl_easy_cleanup(x->c);
	return r;
}

struct harness_resp *
harness_request(const char *method, const char *host, const char *path,
    const char *const headers[], const void *body, size_t body_len)
{
	struct xfer x;
	CURLcode rc = CURLE_OK;

	xfer_init(&x, method, host, path, headers, body, body_len);
	if (!x.failed)
		rc = curl_easy_perform(x.c);
	return xfer_finish(&x, rc);
}

struct harness_resp *
harness_get(const char *host, const char *path)
{
	return harness_request("GET", host, path, NULL, NULL, 0);
}

void
harness_request_burst(size_t n, const char *method, const char *host,
    const char *path, const char *const headers[], const void *body,
    size_t body_len, struct harness_resp **out)
{
	struct xfer *xs;
	CURLcode *rcs;
	CURLM *m;
	CURLMsg *msg;
	long long end = harness_now_ms() + 30000;
	int running = 0, left;
	size_t i;

	if (n > 256)
		n = 256;
	xs = xmalloc(n * sizeof(*xs));
	rcs = xmalloc(n * sizeof(*rcs));
	m = curl_multi_init();
	for (i = 0; i < n; i++) {
		xfer_init(&xs[i], method, host, path, headers, body, body_len);
		rcs[i] = CURLE_OK;
		if (!xs[i].failed) {
			curl_easy_setopt(xs[i].c, CURLOPT_PRIVATE, (void *)&rcs[i]);
			curl_multi_add_handle(m, xs[i].c);
		}
	}
	do {
		curl_multi_perform(m, &running);
		if (running > 0)
			curl_multi_poll(m, NULL, 0, 200, NULL);
	} while (running > 0 && harness_now_ms() < end);
	while ((msg = curl_multi_info_read(m, &left)) != NULL) {
		CURLcode *slot = NULL;

		if (msg->msg != CURLMSG_DONE)
			continue;
		curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&slot);
		if (slot != NULL)
			*slot = msg->data.result;
	}
	for (i = 0; i < n; i++) {
		if (!xs[i].failed)
			curl_multi_remove_handle(m, xs[i].c);
		if (running > 0 && rcs[i] == CURLE_OK && !xs[i].failed) {
			long code = 0;

			curl_easy_getinfo(xs[i].c, CURLINFO_RESPONSE_CODE, &code);
			if (code == 0)
				rcs[i] = CURLE_OPERATION_TIMEDOUT;
		}
		out[i] = xfer_finish(&xs[i], rcs[i]);
	}
	curl_multi_cleanup(m);
	free(rcs);
	free(xs);
}

int
harness_wait_health(long status, int timeout_ms)
{
	long long end = harness_now_ms() + timeout_ms;

	for (;;) {
		struct harness_resp *r = harness_get("api", "/v1/health");
		long got = r->status;

		harness_resp_free(r);
		if (got == status)
			return 0;
		if (harness_now_ms() >= end)
			return set_err("GET /v1/health is %ld, not %ld, after %d ms",
			    got, status, timeout_ms);
		harness_sleep_ms(20);
	}
}

/* ------------------------------------------------------------------ */
/* Raw FastCGI                                                         */

enum {
	FCGI_VERSION_1 = 1,
	FCGI_BEGIN_REQUEST = 1,
	FCGI_END_REQUEST = 3,
	FCGI_PARAMS = 4,
	FCGI_STDIN = 5,
	FCGI_STDOUT = 6,
	FCGI_STDERR = 7,
	FCGI_RESPONDER = 1,
	FCGI_KEEP_CONN = 1,
	FCGI_REQUEST_ID = 1
};

struct harness_fcgi {
	int		 fd;
	int		 begun;
	int		 keep;		/* FCGI_KEEP_CONN in the next BEGIN_REQUEST */
	struct hbuf	 params;	/* encoded name-value pairs */
	size_t		 sent;		/* of params */
	char		 request_id[33];
};

static int
send_all(int fd, const void *data, size_t len)
{
	const char *p = data;

	while (len > 0) {
		ssize_t n = send(fd, p, len, MSG_NOSIGNAL);

		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0)
			return set_err("fastcgi send: %s", strerror(errno));
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static int
fcgi_record(struct harness_fcgi *f, int type, const void *data, size_t len)
{
	unsigned char h[8];

	h[0] = FCGI_VERSION_1;
	h[1] = (unsigned char)type;
	h[2] = 0;
	h[3] = FCGI_REQUEST_ID;
	h[4] = (unsigned char)(len >> 8);
	h[5] = (unsigned char)(len & 0xff);
	h[6] = 0;
	h[7] = 0;
	if (send_all(f->fd, h, sizeof(h)) == -1)
		return -1;
	return len > 0 ? send_all(f->fd, data, len) : 0;
}

/* Send data as records of type, each at most 65535 bytes. */
static int
fcgi_stream(struct harness_fcgi *f, int type, const char *data, size_t len)
{
	while (len > 0) {
		size_t n = len > 65535 ? 65535 : len;

		if (fcgi_record(f, type, data, n) == -1)
			return -1;
		data += n;
		len -= n;
	}
	return 0;
}

struct harness_fcgi *
harness_fcgi_open(void)
{
	struct sockaddr_un sa;
	struct harness_fcgi *f;
	int fd;

	if (H == NULL) {
		set_err("no stack is running");
		return NULL;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	scopy(sa.sun_path, sizeof(sa.sun_path), H->sock);
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1) {
		set_err("socket: %s", strerror(errno));
		return NULL;
	}
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == -1) {
		set_err("connect %s: %s", H->sock, strerror(errno));
		close(fd);
		return NULL;
	}
	f = xmalloc(sizeof(*f));
	memset(f, 0, sizeof(*f));
	f->fd = fd;
	return f;
}

static void
nv_len(struct hbuf *b, size_t n)
{
	unsigned char l[4];

	if (n < 128) {
		l[0] = (unsigned char)n;
		hbuf_add(b, l, 1);
	} else {
		l[0] = (unsigned char)(((n >> 24) & 0x7f) | 0x80);
		l[1] = (unsigned char)(n >> 16);
		l[2] = (unsigned char)(n >> 8);
		l[3] = (unsigned char)n;
		hbuf_add(b, l, 4);
	}
}

void
harness_fcgi_param(struct harness_fcgi *f, const char *name, const char *value)
{
	size_t nl = strlen(name), vl = strlen(value);

	nv_len(&f->params, nl);
	nv_len(&f->params, vl);
	hbuf_add(&f->params, name, nl);
	hbuf_add(&f->params, value, vl);
}

static void
new_request_id(char out[33])
{
	unsigned char raw[16];
	size_t i;

	if (getrandom(raw, sizeof(raw), 0) != (ssize_t)sizeof(raw)) {
		unsigned long long t = (unsigned long long)harness_now_ms() ^
		    ((unsigned long long)getpid() << 32);

		for (i = 0; i < sizeof(raw); i++)
			raw[i] = (unsigned char)(t >> (8 * (i % 8))) ^ (unsigned char)(i * 37);
	}
	for (i = 0; i < sizeof(raw); i++)
		snprintf(out + 2 * i, 3, "%02x", raw[i]);
}

static void
fcgi_params_std(struct harness_fcgi *f, const char *method, const char *uri,
    const char *host_env, size_t body_len, const char *ctype)
{
	const char *q = strchr(uri, '?');
	char *path = xstrndup(uri, q ? (size_t)(q - uri) : strlen(uri));
	char clen[32] = "", port[16];
	int has_len = body_len > 0 || strcmp(method, "POST") == 0 ||
	    strcmp(method, "PUT") == 0 || strcmp(method, "PATCH") == 0;

	new_request_id(f->request_id);
	if (has_len)
		snprintf(clen, sizeof(clen), "%zu", body_len);
	snprintf(port, sizeof(port), "%d", H ? H->ports[HOST_API] : 0);
	/* the order and the empty values are those of nginx's fastcgi_params */
	harness_fcgi_param(f, "QUERY_STRING", q ? q + 1 : "");
	harness_fcgi_param(f, "REQUEST_METHOD", method);
	harness_fcgi_param(f, "CONTENT_TYPE", body_len > 0 ? (ctype ? ctype : "application/json") : "");
	harness_fcgi_param(f, "CONTENT_LENGTH", clen);
	harness_fcgi_param(f, "SCRIPT_NAME", path);
	harness_fcgi_param(f, "REQUEST_URI", uri);
	harness_fcgi_param(f, "DOCUMENT_URI", path);
	harness_fcgi_param(f, "DOCUMENT_ROOT", H ? H->srcdir : "/");
	harness_fcgi_param(f, "SERVER_PROTOCOL", "HTTP/1.1");
	harness_fcgi_param(f, "REQUEST_SCHEME", "http");
	harness_fcgi_param(f, "GATEWAY_INTERFACE", "CGI/1.1");
	harness_fcgi_param(f, "SERVER_SOFTWARE", "nginx");
	harness_fcgi_param(f, "REMOTE_ADDR", "127.0.0.1");
	harness_fcgi_param(f, "REMOTE_PORT", "40000");
	harness_fcgi_param(f, "SERVER_ADDR", "127.0.0.1");
	harness_fcgi_param(f, "SERVER_PORT", port);
	harness_fcgi_param(f, "SERVER_NAME", "localhost");
	harness_fcgi_param(f, "REQUEST_ID", f->request_id);
	harness_fcgi_param(f, "BDS_HOST_ENV", host_env ? host_env : "live");
	harness_fcgi_param(f, "HTTP_HOST", "127.0.0.1");
	free(path);
}

void
harness_fcgi_params_std(struct harness_fcgi *f, const char *method,
    const char *uri, const char *host_env, size_t body_len)
{
	fcgi_params_std(f, method, uri, host_env, body_len, NULL);
}

const char *
harness_fcgi_request_id(const struct harness_fcgi *f)
{
	return f->request_id;
}

size_t
harness_fcgi_params_pending(const struct harness_fcgi *f)
{
	return f->params.len - f->sent;
}

static int
fcgi_begin(struct harness_fcgi *f)
{
	unsigned char body[8] = { 0, FCGI_RESPONDER, 0, 0, 0, 0, 0, 0 };

	if (f->begun)
		return 0;
	f->begun = 1;
	body[2] = f->keep ? FCGI_KEEP_CONN : 0;
	return fcgi_record(f, FCGI_BEGIN_REQUEST, body, sizeof(body));
}

int
harness_fcgi_send_params(struct harness_fcgi *f, size_t n)
{
	size_t pending = harness_fcgi_params_pending(f);

	if (fcgi_begin(f) == -1)
		return -1;
	if (n > pending)
		n = pending;
	if (n == 0)
		return 0;
	if (fcgi_stream(f, FCGI_PARAMS, f->params.p + f->sent, n) == -1)
		return -1;
	f->sent += n;
	return 0;
}

int
harness_fcgi_end_params(struct harness_fcgi *f)
{
	if (harness_fcgi_send_params(f, harness_fcgi_params_pending(f)) == -1)
		return -1;
	return fcgi_record(f, FCGI_PARAMS, NULL, 0);
}

int
harness_fcgi_send_stdin(struct harness_fcgi *f, const void *data, size_t len)
{
	if (len == 0)
		return fcgi_record(f, FCGI_STDIN, NULL, 0);
	return fcgi_stream(f, FCGI_STDIN, data, len);
}

/* Split a CGI response (headers, blank line, body) into r. */
static void
cgi_parse(struct harness_resp *r, const char *raw, size_t len)
{
	const char *p = raw, *end = raw + len, *body = NULL;
	const char *status;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t l = nl ? (size_t)(nl - p) : (size_t)(end - p);

		if (l == 0 || (l == 1 && p[0] == '\r')) {
			body = nl ? nl + 1 : end;
			break;
		}
		header_add(r, p, l);
		if (nl == NULL)
			break;
		p = nl + 1;
	}
	if (body == NULL) {		/* no end of headers: not a response */
		headers_clear(r);
		r->body = xstrndup("", 0);
		snprintf(r->error, sizeof(r->error), "incomplete CGI response (%zu bytes)", len);
		return;
	}
	r->body_len = (size_t)(end - body);
	r->body = xstrndup(body, r->body_len);
	r->json = parse_json(r->body, r->body_len);
	status = harness_header(r, "Status");
	r->status = status != NULL ? strtol(status, NULL, 10) : 200;
}

struct harness_resp *
harness_fcgi_read(struct harness_fcgi *f, int timeout_ms)
{
	struct harness_resp *r = resp_new();
	struct hbuf in = { 0 }, out = { 0 }, err = { 0 };
	long long end = harness_now_ms() + timeout_ms;
	size_t off = 0;
	int eof = 0;

	while (!r->fcgi_complete && !eof) {
		long long left = end - harness_now_ms();
		struct pollfd pfd = { f->fd, POLLIN, 0 };
		char chunk[16384];
		ssize_t n;

		if (left <= 0) {
			snprintf(r->error, sizeof(r->error), "fastcgi: timed out after %d ms",
			    timeout_ms);
			break;
		}
		if (poll(&pfd, 1, (int)left) <= 0)
			continue;
		n = read(f->fd, chunk, sizeof(chunk));
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0) {
			eof = 1;
			r->fcgi_closed = 1;
			if (n == -1)
				snprintf(r->error, sizeof(r->error), "fastcgi read: %s",
				    strerror(errno));
			break;
		}
		hbuf_add(&in, chunk, (size_t)n);
		/* consume every whole record */
		while (in.len - off >= 8) {
			const unsigned char *h = (const unsigned char *)in.p + off;
			size_t clen = ((size_t)h[4] << 8) | h[5], total = 8 + clen + h[6];

			if (in.len - off < total)
				break;
			if (h[1] == FCGI_STDOUT)
				hbuf_add(&out, h + 8, clen);
			else if (h[1] == FCGI_STDERR)
				hbuf_add(&err, h + 8, clen);
			else if (h[1] == FCGI_END_REQUEST && clen >= 8) {
				r->fcgi_app_status = ((unsigned)h[8] << 24) |
				    ((unsigned)h[9] << 16) | ((unsigned)h[10] << 8) | h[11];
				r->fcgi_complete = 1;
			}
			off += total;
		}
	}
	if (eof && !r->fcgi_complete && r->error[0] == '\0')
		snprintf(r->error, sizeof(r->error), "fastcgi: connection closed before END_REQUEST");
	free(in.p);
	r->fcgi_raw_len = out.len;
	r->fcgi_raw = hbuf_take(&out);
	r->fcgi_stderr = hbuf_take(&err);
	cgi_parse(r, r->fcgi_raw, r->fcgi_raw_len);
	if (!r->fcgi_complete && r->error[0] == '\0')
		snprintf(r->error, sizeof(r->error), "fastcgi: no END_REQUEST");
	if (!r->fcgi_complete)
		r->status = 0;
	return r;
}

void
harness_fcgi_keep_conn(struct harness_fcgi *f, int on)
{
	f->keep = on;
}

void
harness_fcgi_next(struct harness_fcgi *f)
{
	f->begun = 0;
	f->params.len = 0;
	f->sent = 0;
	f->request_id[0] = '\0';
}

void
harness_fcgi_close(struct harness_fcgi *f)
{
	if (f == NULL)
		return;
	close(f->fd);
	free(f->params.p);
	free(f);
}

/*
 * One GET /v1/health per worker, held open at once (half its params sent:
 * the worker that accepted it waits on it, so the next connection goes to
 * another), then completed. 0 when every worker answered 200, each a
 * different one.
 */
#define HEALTH_HOLD_MAX	16

static int
workers_answer_200(void)
{
	struct harness_fcgi *f[HEALTH_HOLD_MAX];
	long long pid[HEALTH_HOLD_MAX];
	int i, j, n = H->workers < HEALTH_HOLD_MAX ? H->workers : HEALTH_HOLD_MAX, ok = 1;

	for (i = 0; i < n; i++) {
		if ((f[i] = harness_fcgi_open()) == NULL)
			break;
		harness_fcgi_params_std(f[i], "GET", "/v1/health", NULL, 0);
		(void)harness_fcgi_send_params(f[i], harness_fcgi_params_pending(f[i]) / 2);
		harness_sleep_ms(50);	/* let an idle worker accept it */
	}
	if (i < n)
		ok = 0;
	for (j = 0; j < i; j++) {
		struct harness_resp *r = NULL;
		struct json_object *v;

		if (harness_fcgi_end_params(f[j]) == 0 && harness_fcgi_send_stdin(f[j], NULL, 0) == 0)
			r = harness_fcgi_read(f[j], 5000);
		v = r != NULL ? harness_json_get(r, "pid") : NULL;
		pid[j] = v != NULL ? json_object_get_int64(v) : -1;
		if (r == NULL || r->status != 200 || pid[j] <= 0)
			ok = 0;
		for (int k = 0; k < j; k++)
			if (pid[k] == pid[j])
				ok = 0;
		harness_resp_free(r);
		harness_fcgi_close(f[j]);
	}
	return ok ? 0 : -1;
}

int
harness_wait_workers_healthy(int timeout_ms)
{
	long long end = harness_now_ms() + timeout_ms;

	if (H == NULL)
		return set_err("no stack is running");
	while (workers_answer_200() != 0) {
		if (harness_now_ms() >= end)
			return set_err("not every worker answers GET /v1/health 200 after %d ms",
			    timeout_ms);
		harness_sleep_ms(20);
	}
	return 0;
}

struct harness_resp *
harness_fcgi_request(const char *method, const char *uri,
    const char *const headers[], const void *body, size_t body_len)
{
	struct harness_fcgi *f = harness_fcgi_open();
	struct harness_resp *r;
	const char *ctype = NULL;
	size_t i;

	if (f == NULL) {
		r = resp_new();
		r->body = xstrndup("", 0);
		scopy(r->error, sizeof(r->error), herr);
		return r;
	}
	for (i = 0; headers != NULL && headers[i] != NULL; i++)
		if (strncasecmp(headers[i], "Content-Type:", 13) == 0)
			ctype = headers[i] + 13 + strspn(headers[i] + 13, " \t");
	fcgi_params_std(f, method, uri, NULL, body_len, ctype);
	for (i = 0; headers != NULL && headers[i] != NULL; i++) {
		const char *colon = strchr(headers[i], ':');
		char name[256];
		size_t k, n;

		if (colon == NULL || (n = (size_t)(colon - headers[i])) > 200)
			continue;
		memcpy(name, "HTTP_", 5);
		for (k = 0; k < n; k++)
			name[5 + k] = headers[i][k] == '-' ? '_' :
			    (char)toupper((unsigned char)headers[i][k]);
		name[5 + n] = '\0';
		harness_fcgi_param(f, name, colon + 1 + strspn(colon + 1, " \t"));
	}
	if (harness_fcgi_end_params(f) == -1 ||
	    (body_len > 0 && harness_fcgi_send_stdin(f, body, body_len) == -1) ||
	    harness_fcgi_send_stdin(f, NULL, 0) == -1) {
		r = resp_new();
		r->body = xstrndup("", 0);
		scopy(r->error, sizeof(r->error), herr);
	} else {
		r = harness_fcgi_read(f, 5000);
	}
	harness_fcgi_close(f);
	return r;
}

/* ------------------------------------------------------------------ */
/* Checks                                                              */

static _Thread_local char cmsg[4096];

static const char *
cfail(const struct harness_resp *r, const char *fmt, ...)
{
	va_list ap;
	size_t n;

	va_start(ap, fmt);
	vsnprintf(cmsg, sizeof(cmsg), fmt, ap);
	va_end(ap);
	n = strlen(cmsg);
	if (r != NULL && n < sizeof(cmsg))
		snprintf(cmsg + n, sizeof(cmsg) - n, " [status %ld%s%s; body: %.600s]",
		    r->status, r->error[0] ? "; " : "", r->error, r->body ? r->body : "");
	return cmsg;
}

const char *
harness_check_status(const struct harness_resp *r, long status)
{
	if (r == NULL)
		return cfail(NULL, "no response");
	if (r->status != status)
		return cfail(r, "status is %ld, want %ld", r->status, status);
	return NULL;
}

static size_t
header_count(const struct harness_resp *r, const char *name)
{
	size_t i, n = 0;

	for (i = 0; i < r->nheaders; i++)
		if (strcasecmp(r->headers[i].name, name) == 0)
			n++;
	return n;
}

const char *
harness_check_common(const struct harness_resp *r)
{
	static const char *const once[] = {
		"Content-Type", "X-Request-Id", "Cache-Control", "X-Content-Type-Options",
		"Content-Length", "Allow", "Retry-After",
	};
	const char *ct, *rid, *cc, *xcto;
	size_t i;

	if (r == NULL)
		return cfail(NULL, "no response");
	ct = harness_header(r, "Content-Type");
	if (ct == NULL || strncasecmp(ct, "application/json", 16) != 0 ||
	    (ct[16] != '\0' && ct[16] != ';' && ct[16] != ' '))
		return cfail(r, "Content-Type is \"%s\", want application/json", ct ? ct : "(none)");
	if (r->json == NULL)
		return cfail(r, "body is not JSON");
	rid = harness_header(r, "X-Request-Id");
	if (rid == NULL || *rid == '\0')
		return cfail(r, "no X-Request-Id header");
	cc = harness_header(r, "Cache-Control");
	if (cc == NULL || strstr(cc, "no-store") == NULL)
		return cfail(r, "Cache-Control is \"%s\", want no-store", cc ? cc : "(none)");
	xcto = harness_header(r, "X-Content-Type-Options");
	if (xcto == NULL || strcasecmp(xcto, "nosniff") != 0)
		return cfail(r, "X-Content-Type-Options is \"%s\", want nosniff",
		    xcto ? xcto : "(none)");
	/* app and nginx both setting one would send it twice */
	for (i = 0; i < sizeof(once) / sizeof(once[0]); i++)
		if (header_count(r, once[i]) > 1)
			return cfail(r, "header %s sent %zu times", once[i],
			    header_count(r, once[i]));
	return NULL;
}

/* request_id in the body equals the X-Request-Id header. */
static const char *
check_request_id(const struct harness_resp *r)
{
	const char *hdr = harness_header(r, "X-Request-Id");
	const char *body = harness_json_string(r, "request_id");

	if (body == NULL || *body == '\0')
		return cfail(r, "request_id missing or not a non-empty string");
	if (hdr == NULL || strcmp(hdr, body) != 0)
		return cfail(r, "request_id \"%s\" differs from X-Request-Id \"%s\"", body,
		    hdr ? hdr : "(none)");
	return NULL;
}

const char *
harness_check_coded(const struct harness_resp *r, long status, const char *code)
{
	const char *m, *s;
	struct json_object *hint;

	if ((m = harness_check_status(r, status)) != NULL ||
	    (m = harness_check_common(r)) != NULL)
		return m;
	if (!json_object_is_type(r->json, json_type_object))
		return cfail(r, "body is not a JSON object");
	s = harness_json_string(r, "error_code");
	if (s == NULL || *s == '\0')
		return cfail(r, "error_code missing or not a non-empty string");
	if (code != NULL && strcmp(s, code) != 0)
		return cfail(r, "error_code is \"%s\", want \"%s\"", s, code);
	s = harness_json_string(r, "error_message");
	if (s == NULL || *s == '\0')
		return cfail(r, "error_message missing or not a non-empty string");
	if (!json_object_object_get_ex(r->json, "hint", &hint))
		return cfail(r, "hint missing");
	if (hint != NULL && !json_object_is_type(hint, json_type_string))
		return cfail(r, "hint is neither a string nor null");
	if (harness_json_string(r, "docs_url") == NULL)
		return cfail(r, "docs_url missing or not a string");
	return check_request_id(r);
}

const char *
harness_check_iam(const struct harness_resp *r, long status)
{
	const char *m;
	struct json_object *v;

	if ((m = harness_check_status(r, status)) != NULL ||
	    (m = harness_check_common(r)) != NULL)
		return m;
	if (!json_object_is_type(r->json, json_type_object))
		return cfail(r, "body is not a JSON object");
	v = harness_json_get(r, "success");
	if (v == NULL || !json_object_is_type(v, json_type_boolean) || json_object_get_boolean(v))
		return cfail(r, "success is not false");
	if (harness_json_string(r, "message") == NULL)
		return cfail(r, "message missing or not a string");
	v = harness_json_get(r, "statusCode");
	if (v == NULL || !json_object_is_type(v, json_type_int) ||
	    json_object_get_int64(v) != status)
		return cfail(r, "statusCode is not %ld", status);
	v = harness_json_get(r, "errors");
	if (v == NULL || !json_object_is_type(v, json_type_array))
		return cfail(r, "errors missing or not an array");
	return check_request_id(r);
}

const char *
harness_fmt(const char *f, ...)
{
	static _Thread_local char bufs[16][4096];
	static _Thread_local int next;
	char *b = bufs[next++ % 16];
	va_list ap;

	va_start(ap, f);
	vsnprintf(b, sizeof(bufs[0]), f, ap);
	va_end(ap);
	return b;
}

const char *
harness_idem_header(void)
{
	static _Thread_local char buf[8][96];
	static _Thread_local int slot;
	static int seq;
	struct timespec ts;
	char *b = buf[slot++ % 8];

	clock_gettime(CLOCK_REALTIME, &ts);
	snprintf(b, sizeof(buf[0]), "Idempotency-Key: t-%ld-%d-%ld%09ld", (long)getpid(),
	    __atomic_add_fetch(&seq, 1, __ATOMIC_RELAXED), (long)ts.tv_sec, ts.tv_nsec);
	return b;
}

char *
harness_slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t cap = 0, len = 0, n;

	if (f == NULL)
		return NULL;
	do {
		if (len + 4096 + 1 > cap) {
			cap = cap ? cap * 2 : 8192;
			buf = realloc(buf, cap);
			ck_assert_ptr_nonnull(buf);
		}
		n = fread(buf + len, 1, cap - len - 1, f);
		len += n;
	} while (n > 0);
	fclose(f);
	buf[len] = '\0';
	return buf;
}

int
harness_run_child(const struct harness_child *c)
{
	extern char **environ;
	size_t n = 0, cap = 1;
	long long until = harness_now_ms() + c->timeout_ms;
	char **env;
	int status = 0, rc;
	pid_t pid, w;

	/* the environment built before fork: the test may run threads */
	for (char **e = environ; *e != NULL; e++)
		cap++;
	for (size_t i = 0; c->set != NULL && c->set[i] != NULL; i += 2)
		cap++;
	env = xmalloc(cap * sizeof(*env));
	for (char **e = environ; *e != NULL; e++)
		if (strncmp(*e, "BDS_", 4) != 0)
			env[n++] = xstrndup(*e, strlen(*e));
	for (size_t i = 0; c->set != NULL && c->set[i] != NULL; i += 2) {
		const char *v = c->set[i + 1] != NULL ? c->set[i + 1] : "";

		env[n] = xmalloc(strlen(c->set[i]) + strlen(v) + 2);
		sprintf(env[n++], "%s=%s", c->set[i], v);
	}
	env[n] = NULL;

	fflush(NULL);
	if ((pid = fork()) < 0) {
		rc = set_err("fork: %s", strerror(errno));
		goto out;
	}
	if (pid == 0) {
		int fd;

		setpgid(0, 0);
		if (c->dir != NULL && chdir(c->dir) != 0)
			_exit(126);
		if (c->log != NULL) {
			if ((fd = open(c->log, O_WRONLY | O_CREAT | O_TRUNC, 0644)) < 0 ||
			    dup2(fd, STDOUT_FILENO) < 0 || dup2(fd, STDERR_FILENO) < 0)
				_exit(126);
			close(fd);
		}
		environ = env;
		execvp(c->argv[0], (char *const *)c->argv);
		fprintf(stderr, "%s: %s\n", c->argv[0], strerror(errno));
		_exit(127);
	}
	setpgid(pid, pid);
	while ((w = waitpid(pid, &status, WNOHANG)) == 0 && harness_now_ms() < until)
		harness_sleep_ms(100);
	if (w == 0) {
		kill(-pid, SIGKILL);
		waitpid(pid, &status, 0);
		rc = -1;
	} else {
		rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	}
	kill(-pid, SIGKILL);	/* whatever it left behind */
out:
	for (size_t i = 0; i < n; i++)
		free(env[i]);
	free(env);
	return rc;
}

const char *
harness_artifacts_dir(void)
{
	static char dir[PATH_MAX];
	const char *src = getenv("BDS_SRCDIR"), *build = getenv("BDS_BUILDDIR");
	const char *name;

	if (dir[0] != '\0')
		return dir;
	name = strrchr(build ? build : "build", '/');
	name = name != NULL ? name + 1 : (build ? build : "build");
	snprintf(dir, sizeof(dir), "%s/t/artifacts", src ? src : ".");
	if ((mkdir(dir, 0755) == 0 || errno == EEXIST) &&
	    snprintf(dir + strlen(dir), sizeof(dir) - strlen(dir), "/%s", name) > 0 &&
	    (mkdir(dir, 0755) == 0 || errno == EEXIST))
		return dir;
	snprintf(dir, sizeof(dir), "%s/t/artifacts", build ? build : ".");
	if (mkdir(dir, 0755) != 0 && errno != EEXIST)
		ck_abort_msg("%s: %s", dir, strerror(errno));
	return dir;
}

/* ---- iam slice ---------------------------------------------------- */

struct harness_resp *
harness_request_from(const char *src, const char *method, const char *host,
    const char *path, const char *const headers[], const void *body, size_t body_len)
{
	struct xfer x;
	CURLcode rc = CURLE_OK;
	char iface[64];

	xfer_init(&x, method, host, path, headers, body, body_len);
	snprintf(iface, sizeof(iface), "host!%s", src);
	if (!x.failed && (rc = curl_easy_setopt(x.c, CURLOPT_INTERFACE, iface)) == CURLE_OK)
		rc = curl_easy_perform(x.c);
	return xfer_finish(&x, rc);
}

void
harness_show_file(const char *title, const char *path)
{
	char *text = harness_slurp(path);

	fprintf(stderr, "---- %s (%s) ----\n%s---- end ----\n", title, path,
	    text != NULL && *text != '\0' ? text : "(nothing)\n");
	free(text);
}

/* ---- secrets at rest ---------------------------------------------- */

/* The scan in progress (nftw's callback takes no argument). */
static struct {
	const char *const	*needles;
	size_t			 n;
	char			*found;
	size_t			 foundlen;
	int			 rc;		/* 0 none yet, 1 found, -1 failure */
} scan;

/* The first needle in buf[0..len) (binary safe), or -1. */
static long
scan_buf(const char *buf, size_t len, size_t *off)
{
	for (size_t i = 0; i < scan.n; i++) {
		size_t nl = strlen(scan.needles[i]);
		const char *p;

		if (nl == 0 || (p = memmem(buf, len, scan.needles[i], nl)) == NULL)
			continue;
		*off = (size_t)(p - buf);
		return (long)i;
	}
	return -1;
}

/*
 * Everything fd gives until its end into *out (malloc'ed, binary): 0, or
 * -1 (errno set) on a read error, out of memory or at deadline_ms
 * (harness_now_ms()'s clock).
 */
static int
scan_read_fd(int fd, long long deadline_ms, char **out, size_t *outlen)
{
	size_t cap = 65536, n = 0;
	char *b = malloc(cap), *nb;
	ssize_t got;

	if (b == NULL)
		return -1;
	for (;;) {
		struct pollfd pf = { fd, POLLIN, 0 };
		long long left = deadline_ms - harness_now_ms();
		int ready;

		if (left <= 0) {
			errno = ETIMEDOUT;
			goto fail;
		}
		if ((ready = poll(&pf, 1, (int)left)) == -1 && errno == EINTR)
			continue;
		if (ready == -1)
			goto fail;
		if (ready == 0)
			continue;	/* the deadline, above */
		if (n == cap) {
			if ((nb = realloc(b, cap * 2)) == NULL)
				goto fail;
			b = nb;
			cap *= 2;
		}
		if ((got = read(fd, b + n, cap - n)) == -1 && errno == EINTR)
			continue;
		if (got == -1)
			goto fail;
		if (got == 0)
			break;
		n += (size_t)got;
	}
	*out = b;
	*outlen = n;
	return 0;
fail:
	free(b);
	return -1;
}

/* The whole file at path into *buf (malloc'ed, binary); -1 on failure. */
static int
scan_read(const char *path, char **buf, size_t *len)
{
	int fd, rc, saved;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) == -1)
		return -1;
	rc = scan_read_fd(fd, harness_now_ms() + 60000, buf, len);
	saved = errno;
	close(fd);
	errno = saved;
	return rc;
}

/* Name needle i, where and at which byte of buf it is, with the bytes
 * around it (unprintable ones as '.'). */
static void
scan_report(const char *where, long i, const char *buf, size_t len, size_t off)
{
	size_t nl = strlen(scan.needles[i]), from = off > 40 ? off - 40 : 0;
	size_t to = off + nl + 40 < len ? off + nl + 40 : len;
	char ctx[128 + 1];
	size_t k = 0;

	for (size_t j = from; j < to && k < sizeof(ctx) - 1; j++)
		ctx[k++] = buf[j] >= 0x20 && buf[j] < 0x7f ? buf[j] : '.';
	ctx[k] = '\0';
	scan.rc = 1;
	snprintf(scan.found, scan.foundlen, "\"%s\" in %s at byte %zu: ...%s...",
	    scan.needles[i], where, off, ctx);
}

static int
scan_file(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	char pgdata[H_PATH + 16];
	size_t len, off;
	char *buf;
	long i;

	(void)ftw;
	snprintf(pgdata, sizeof(pgdata), "%s/pgdata", H->dir);
	if (type == FTW_D && strcmp(path, pgdata) == 0)
		return FTW_SKIP_SUBTREE;
	/* regular files only (nftw calls sockets and fifos FTW_F too) */
	if (type != FTW_F || !S_ISREG(st->st_mode))
		return FTW_CONTINUE;
	if (scan_read(path, &buf, &len) == -1) {
		/* a log removed while the walk runs (rotated, a temp file) */
		if (errno == ENOENT)
			return FTW_CONTINUE;
		scan.rc = -1;
		set_err("%s: %s", path, strerror(errno));
		return FTW_STOP;
	}
	if ((i = scan_buf(buf, len, &off)) >= 0)
		scan_report(path, i, buf, len, off);
	free(buf);
	return scan.rc != 0 ? FTW_STOP : FTW_CONTINUE;
}

/*
 * pg_dump of database bds (the cluster's own binary, over its socket) into
 * *out (malloc'ed): 0, or -1 when it could not run, failed or took over 60 s.
 */
static int
scan_dump(char **out, size_t *outlen)
{
	char bin[H_PATH + 16];
	int p[2], st = -1, rc;
	size_t n = 0;
	pid_t pid;

	snprintf(bin, sizeof(bin), "%s/pg_dump", H->pgbin);
	if (pipe2(p, O_CLOEXEC) == -1)
		return set_err("pipe: %s", strerror(errno));
	if ((pid = fork()) == -1) {
		close(p[0]);
		close(p[1]);
		return set_err("fork: %s", strerror(errno));
	}
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		dup2(p[1], STDOUT_FILENO);
		if (null != -1)
			dup2(null, STDERR_FILENO);
		if (H->pg_outside)
			execl(bin, "pg_dump", "-d", H->dburl, "-w", (char *)NULL);
		else
			execl(bin, "pg_dump", "-h", H->pgsock, "-U", "bds", "-d", "bds", "-w",
			    (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	if ((rc = scan_read_fd(p[0], harness_now_ms() + 60000, out, &n)) == -1)
		kill(pid, SIGKILL);
	close(p[0]);
	while (waitpid(pid, &st, 0) == -1 && errno == EINTR)
		;
	if (rc == 0 && st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0 && n > 0) {
		*outlen = n;
		return 0;
	}
	if (rc == 0)
		free(*out);
	return set_err("%s failed (status %d, %zu bytes)", bin, st, n);
}

int
harness_secret_scan(const char *const *needles, size_t n, char *found, size_t foundlen)
{
	static char nofound[1];
	char *dump = NULL, where[H_PATH + 64];
	size_t len = 0, off;
	long i;

	memset(&scan, 0, sizeof(scan));
	scan.needles = needles;
	scan.n = n;
	scan.found = found != NULL && foundlen > 0 ? found : nofound;
	scan.foundlen = found != NULL && foundlen > 0 ? foundlen : sizeof(nofound);
	scan.found[0] = '\0';
	if (H == NULL || H->dir[0] == '\0')
		return set_err("harness_secret_scan: no stack");
	if (scan_dump(&dump, &len) == -1)
		return -1;
	if ((i = scan_buf(dump, len, &off)) >= 0) {
		snprintf(where, sizeof(where), "the pg_dump of database bds");
		scan_report(where, i, dump, len, off);
	} else {
		/* bytea is dumped as hex: a needle stored as bytes shows so */
		for (size_t k = 0; k < n && scan.rc == 0; k++) {
			size_t nl = strlen(needles[k]);
			char *hex = malloc(2 * nl + 1);
			const char *p;

			if (hex == NULL || nl == 0) {
				free(hex);
				continue;
			}
			for (size_t j = 0; j < nl; j++)
				snprintf(hex + 2 * j, 3, "%02x", (unsigned char)needles[k][j]);
			if ((p = memmem(dump, len, hex, 2 * nl)) != NULL) {
				snprintf(where, sizeof(where), "the pg_dump of database bds"
				    " (as bytea hex)");
				scan_report(where, (long)k, dump, len, (size_t)(p - dump));
			}
			free(hex);
		}
	}
	free(dump);
	if (scan.rc == 0 && nftw(H->dir, scan_file, 16, FTW_PHYS | FTW_ACTIONRETVAL) == -1) {
		set_err("nftw %s: %s", H->dir, strerror(errno));
		return -1;
	}
	return scan.rc;
}

/*
 * -- the secrets scan's copies --
 * BDS_E2E_SECRETS_DIR=DIR: at harness_stop(), the pg_dump of database bds
 * into DIR/<suite>.<pid>.sql (dump != 0, while PostgreSQL still runs) and
 * every *.log of the temp dir (the cluster's data dir and the mail spool
 * aside) into DIR/<suite>.<pid>/, '/' of a nested path made '_'
 * (dump == 0, after the stack stopped), for scripts/secrets-scan. Best
 * effort: a copy that fails is said on stderr and the scan misses it.
 */
static const char *secrets_to;

static int
secrets_copy_log(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	char pgdata[H_PATH + 16], mail[H_PATH + 16], to[2 * H_PATH];
	size_t len = 0, plen = strlen(path);
	char *text, *t;

	(void)ftw;
	snprintf(pgdata, sizeof(pgdata), "%s/pgdata", H->dir);
	snprintf(mail, sizeof(mail), "%s/mail", H->dir);
	if (type == FTW_D && (strcmp(path, pgdata) == 0 || strcmp(path, mail) == 0))
		return FTW_SKIP_SUBTREE;
	if (type != FTW_F || !S_ISREG(st->st_mode) || plen < 4 ||
	    strcmp(path + plen - 4, ".log") != 0)
		return FTW_CONTINUE;
	t = to + snprintf(to, sizeof(to), "%s/", secrets_to);
	snprintf(t, sizeof(to) - (size_t)(t - to), "%s", path + strlen(H->dir) + 1);
	for (; *t != '\0'; t++)
		if (*t == '/')
			*t = '_';
	if ((text = read_file(path, 0, &len)) == NULL ||
	    write_file(to, text, len, 0600) == -1)
		fprintf(stderr, "harness: secrets copy of %s: %s\n", path,
		    text == NULL ? strerror(errno) : herr);
	free(text);
	return FTW_CONTINUE;
}

static void
secrets_keep(int dump)
{
	const char *dir = getenv("BDS_E2E_SECRETS_DIR");
	char to[H_PATH * 2], *sql = NULL;
	size_t len = 0;

	if (dir == NULL || *dir == '\0' || H == NULL || H->dir[0] == '\0')
		return;
	snprintf(to, sizeof(to), "%s/%s.%ld%s", dir, program_invocation_short_name,
	    (long)getpid(), dump ? ".sql" : "");
	if (dump) {
		if (scan_dump(&sql, &len) == -1 || write_file(to, sql, len, 0600) == -1)
			fprintf(stderr, "harness: secrets dump: %s\n", herr);
		free(sql);
		return;
	}
	if (mkdir(to, 0700) == -1 && errno != EEXIST) {
		fprintf(stderr, "harness: mkdir %s: %s\n", to, strerror(errno));
		return;
	}
	secrets_to = to;
	if (nftw(H->dir, secrets_copy_log, 16, FTW_PHYS | FTW_ACTIONRETVAL) == -1)
		fprintf(stderr, "harness: secrets copy of %s: %s\n", H->dir, strerror(errno));
	secrets_to = NULL;
}
