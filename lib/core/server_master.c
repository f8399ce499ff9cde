/*
 * The prefork master and its listening socket. The master blocks its
 * signals and takes them with sigtimedwait, so it has no handlers and no
 * races; it forks workers (server_worker.c), respawns the dead, drains on
 * SIGTERM and replaces workers one by one on SIGHUP.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/config.h"
#include "core/log.h"
#include "core/server.h"

#define MAX_WORKERS 256

int
server_listen_path(const char *path, int mode, const char *group)
{
	struct sockaddr_un sa;
	struct stat st;
	struct group *gr = NULL;
	mode_t old;
	int fd;

	if (group != NULL && *group != '\0' && (gr = getgrnam(group)) == NULL) {
		errno = ENOENT;
		return -1;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(sa.sun_path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	strcpy(sa.sun_path, path);
	/* A stale socket from a killed master; never remove anything else. */
	if (lstat(path, &st) == 0 && S_ISSOCK(st.st_mode))
		unlink(path);
	if ((fd = socket(AF_UNIX, SOCK_STREAM, 0)) < 0)
		return -1;
	old = umask(0177);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 ||
	    (gr != NULL && chown(path, (uid_t)-1, gr->gr_gid) != 0) ||
	    chmod(path, (mode_t)mode) != 0 || listen(fd, 1024) != 0) {
		int e = errno;

		umask(old);
		close(fd);
		errno = e;
		return -1;
	}
	umask(old);
	return fd;
}

static int
is_listening(int fd)
{
	int v = 0;
	socklen_t len = sizeof(v);

	return getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &v, &len) == 0 && v;
}

int
server_listen_inherited(void)
{
	const char *pid = getenv("LISTEN_PID"), *n = getenv("LISTEN_FDS");

	/* systemd socket activation: the first passed fd is 3. */
	if (pid != NULL && n != NULL && atol(pid) == (long)getpid() && atoi(n) >= 1) {
		unsetenv("LISTEN_PID");
		unsetenv("LISTEN_FDS");
		unsetenv("LISTEN_FDNAMES");
		return is_listening(3) ? 3 : -1;
	}
	/* spawn-fcgi and other FastCGI spawners pass the socket as fd 0. */
	return is_listening(0) ? 0 : -1;
}

struct wslot {
	pid_t		 pid;		/* 0: free slot */
	unsigned	 gen;		/* config generation it was forked with */
	int		 retiring;	/* sent SIGTERM as part of a reload */
	long long	 deadline_us;	/* SIGKILL after this while retiring */
};

struct master {
	const struct config	*cfg;
	struct config		 reloaded;	/* the config after a SIGHUP */
	int			 have_reloaded;
	const char		*config_path;
	int			 fd;
	int			 want;		/* workers to keep */
	unsigned		 gen;
	struct wslot		 w[MAX_WORKERS];
	long long		 crash_window_us;
	int			 crashes;
	int			 adopted;	/* workers of the previous binary to stop */
};

/* What SIGHUP re-executes (server_set_exec); NULL: rolling reload only. */
static const char *exec_path;
static char *const *exec_argv;
static const char *exec_unlink;	/* the socket path the new image removes at exit */

void
server_set_exec(const char *path, char *const argv[], const char *socket_to_unlink)
{
	exec_path = path;
	exec_argv = argv;
	exec_unlink = socket_to_unlink;
}

static const struct config *
master_cfg(const struct master *m)
{
	return m->have_reloaded ? &m->reloaded : m->cfg;
}

static int
spawn(struct master *m)
{
	struct wslot *s = NULL;
	sigset_t none;
	pid_t pid;

	for (int i = 0; i < MAX_WORKERS; i++)
		if (m->w[i].pid == 0) {
			s = &m->w[i];
			break;
		}
	if (s == NULL)
		return -1;
	if ((pid = fork()) < 0) {
		log_msg("error", "fork: %s", strerror(errno));
		return -1;
	}
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		if (getppid() == 1)
			_exit(0);	/* the master died before we ran */
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		_exit(server_worker(master_cfg(m), m->fd));
	}
	memset(s, 0, sizeof(*s));
	s->pid = pid;
	s->gen = m->gen;
	return 0;
}

static int
count_live(const struct master *m, int only_current)
{
	int n = 0;

	for (int i = 0; i < MAX_WORKERS; i++)
		if (m->w[i].pid != 0 && !m->w[i].retiring &&
		    (!only_current || m->w[i].gen == m->gen))
			n++;
	return n;
}

/* Reap children; returns how many exited. Replacements come from top_up. */
static int
reap(struct master *m, int stopping)
{
	int st, n = 0;
	pid_t pid;

	while ((pid = waitpid(-1, &st, WNOHANG)) > 0) {
		for (int i = 0; i < MAX_WORKERS; i++) {
			if (m->w[i].pid != pid)
				continue;
			if (!m->w[i].retiring && !stopping)
				log_msg("warn", "worker %d exited (%s %d); respawning",
				    (int)pid, WIFSIGNALED(st) ? "signal" : "status",
				    WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
			m->w[i].pid = 0;
			n++;
		}
	}
	return n;
}

/* Keep `want` workers of the current generation; back off on crash loops. */
static void
top_up(struct master *m)
{
	long long t = mono_us();
	int missing = m->want - count_live(m, 0);

	if (missing <= 0)
		return;
	if (t - m->crash_window_us > 1000000) {
		m->crash_window_us = t;
		m->crashes = 0;
	}
	while (missing-- > 0 && m->crashes < 4 * m->want) {
		if (spawn(m) != 0)
			break;
		m->crashes++;
	}
}

/* One step of a rolling reload: replace one old worker at a time. */
static void
roll(struct master *m)
{
	long long t = mono_us();

	for (int i = 0; i < MAX_WORKERS; i++) {
		struct wslot *s = &m->w[i];

		if (s->pid != 0 && s->retiring) {
			if (t > s->deadline_us)
				kill(s->pid, SIGKILL);
			return;		/* wait for it before the next one */
		}
	}
	for (int i = 0; i < MAX_WORKERS; i++) {
		struct wslot *s = &m->w[i];

		if (s->pid == 0 || s->gen == m->gen)
			continue;
		/* The replacement first, so capacity never drops. */
		if (spawn(m) != 0)
			return;
		s->retiring = 1;
		s->deadline_us = t + (long long)master_cfg(m)->drain_timeout * 1000000;
		kill(s->pid, SIGTERM);
		return;
	}
}

static void
reload(struct master *m)
{
	struct config c;
	char err[256];

	if (m->config_path != NULL) {
		if (config_load(&c, m->config_path, err, sizeof(err)) != 0) {
			log_msg("error", "reload: %s; keeping the running configuration", err);
		} else {
			if (m->have_reloaded)
				config_free(&m->reloaded);
			m->reloaded = c;
			m->have_reloaded = 1;
		}
	}
	m->gen++;
	log_msg("info", "reload: replacing workers one by one");
}

/*
 * Binary upgrade on SIGHUP (nginx's, in place): check that the program at
 * the same path starts with this configuration (`--check`), then execve it
 * in this process (same pid) with the listening socket and the running
 * workers' pids in the environment. The new image starts its own workers
 * and stops the old ones, which finish the request in flight. Returns only
 * when there is nothing to exec, the check failed or execve did (the
 * caller then does a rolling reload).
 */
static void
upgrade(struct master *m)
{
	char fdbuf[16], pids[MAX_WORKERS * 12 + 1];
	long long deadline;
	size_t off = 0;
	pid_t pid;
	int st = -1, fl;

	if (exec_path == NULL)
		return;
	fflush(NULL);
	if ((pid = fork()) == 0) {
		char *check[6] = { (char *)exec_path, "--check", NULL, NULL, NULL, NULL };

		if (m->config_path != NULL) {
			check[2] = "--config";
			check[3] = (char *)m->config_path;
		}
		execvp(exec_path, check);
		_exit(127);
	}
	if (pid < 0) {
		log_msg("error", "upgrade: fork: %s", strerror(errno));
		return;
	}
	deadline = mono_us() + 10000000;
	while (waitpid(pid, &st, WNOHANG) == 0) {
		struct timespec ms = { 0, 10 * 1000000 };

		if (mono_us() > deadline) {
			kill(pid, SIGKILL);
			waitpid(pid, &st, 0);
			break;
		}
		nanosleep(&ms, NULL);
	}
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		log_msg("error", "upgrade: %s --check failed; keeping this binary", exec_path);
		return;
	}
	for (int i = 0; i < MAX_WORKERS; i++)
		if (m->w[i].pid != 0)
			off += (size_t)snprintf(pids + off, sizeof(pids) - off, "%s%d",
			    off ? "," : "", (int)m->w[i].pid);
	pids[off] = '\0';
	snprintf(fdbuf, sizeof(fdbuf), "%d", m->fd);
	if ((fl = fcntl(m->fd, F_GETFD)) >= 0)
		fcntl(m->fd, F_SETFD, fl & ~FD_CLOEXEC);
	setenv("BDS_UPGRADE_FD", fdbuf, 1);
	setenv("BDS_UPGRADE_WORKERS", pids, 1);
	setenv("BDS_UPGRADE_UNLINK", exec_unlink ? exec_unlink : "", 1);
	log_msg("info", "upgrade: executing %s (master %d keeps its pid)", exec_path,
	    (int)getpid());
	execvp(exec_path, exec_argv);
	log_msg("error", "upgrade: exec %s: %s; keeping this binary", exec_path,
	    strerror(errno));
	unsetenv("BDS_UPGRADE_FD");
	unsetenv("BDS_UPGRADE_WORKERS");
	unsetenv("BDS_UPGRADE_UNLINK");
}

/* After an upgrade: the previous image's workers, to stop once ours run. */
static void
adopt(struct master *m)
{
	const char *s = getenv("BDS_UPGRADE_WORKERS");
	long long t = mono_us();
	int n = 0;

	if (s == NULL)
		return;
	while (*s != '\0' && n < MAX_WORKERS) {
		char *end;
		long v = strtol(s, &end, 10);

		if (end == s)
			break;
		if (v > 0) {
			m->w[n].pid = (pid_t)v;
			m->w[n].gen = 0;
			m->w[n].retiring = 1;
			m->w[n].deadline_us = t + (long long)m->cfg->drain_timeout * 1000000;
			n++;
		}
		s = *end == ',' ? end + 1 : end;
	}
	unsetenv("BDS_UPGRADE_WORKERS");
	m->adopted = n;
}

static int
drain_all(struct master *m)
{
	long long deadline = mono_us() + (long long)master_cfg(m)->drain_timeout * 1000000;
	struct timespec tick = { 0, 50 * 1000000 };
	sigset_t chld;

	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	for (int i = 0; i < MAX_WORKERS; i++)
		if (m->w[i].pid != 0)
			kill(m->w[i].pid, SIGTERM);
	for (;;) {
		int left = 0;

		reap(m, 1);
		for (int i = 0; i < MAX_WORKERS; i++)
			if (m->w[i].pid != 0)
				left++;
		if (left == 0)
			return 0;
		if (mono_us() > deadline) {
			log_msg("warn", "drain timeout: killing %d workers", left);
			for (int i = 0; i < MAX_WORKERS; i++)
				if (m->w[i].pid != 0)
					kill(m->w[i].pid, SIGKILL);
			deadline = mono_us() + 5000000;
		}
		(void)sigtimedwait(&chld, NULL, &tick);
	}
}

int
server_master(const struct config *cfg, const char *config_path, int fd, int workers)
{
	struct timespec tick = { 0, 100 * 1000000 };
	struct master *m;
	sigset_t set;
	int rc;

	if ((m = calloc(1, sizeof(*m))) == NULL)
		return 1;
	m->cfg = cfg;
	m->config_path = config_path;
	m->fd = fd;
	m->want = workers > MAX_WORKERS ? MAX_WORKERS : workers;
	m->gen = 1;
	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	sigprocmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);
	adopt(m);
	log_msg("info", "master %d starting %d workers", (int)getpid(), m->want);

	for (;;) {
		int sig;

		top_up(m);
		if (m->adopted) {
			/* ours are forked: the previous binary's finish and go */
			for (int i = 0; i < MAX_WORKERS; i++)
				if (m->w[i].pid != 0 && m->w[i].gen == 0)
					kill(m->w[i].pid, SIGTERM);
			m->adopted = 0;
		}
		roll(m);
		sig = sigtimedwait(&set, NULL, &tick);
		if (sig == SIGTERM || sig == SIGINT)
			break;
		if (sig == SIGHUP) {
			upgrade(m);	/* returns only when there is nothing to exec */
			reload(m);
		}
		reap(m, 0);
	}
	log_msg("info", "master %d draining", (int)getpid());
	rc = drain_all(m);
	if (m->have_reloaded)
		config_free(&m->reloaded);
	free(m);
	return rc;
}
