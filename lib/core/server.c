/*
 * Process model. The master blocks its signals and takes them with
 * sigtimedwait, so it has no handlers and no races. A worker keeps
 * SIGTERM/SIGHUP blocked except while it waits in epoll_pwait for a
 * connection or a request: a signal never interrupts a request, and a
 * request in flight always completes before the worker exits.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <fcgiapp.h>

#include "core/arena.h"
#include "core/clock.h"
#include "core/config.h"
#include "core/db.h"
#include "core/errors.h"
#include "core/json.h"
#include "core/log.h"
#include "core/req.h"
#include "core/server.h"

#define MAX_WORKERS 256
#define BODY_DRAIN_MAX (16LL << 20)	/* read and drop at most this much of a refused body */

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

/* ---- worker ---- */

static volatile sig_atomic_t worker_stop;

static void
on_stop(int sig)
{
	worker_stop = 1;
}

/* Read exactly the announced body; 0 ok, -1 short. */
static int
read_body(struct req *r, FCGX_Request *fr)
{
	long long cl = r->http.content_length;
	char *buf;
	int n;

	if (cl <= 0)
		return 0;
	buf = arena_alloc(r->arena, (size_t)cl + 1);
	n = FCGX_GetStr(buf, (int)cl, fr->in);
	if (n != (int)cl)
		return -1;
	buf[cl] = '\0';
	r->http.body = buf;
	r->http.body_len = (size_t)cl;
	return 0;
}

/* Consume what is left of the body so the peer never sees a reset. */
static void
drain_body(FCGX_Request *fr)
{
	char buf[16384];
	long long total = 0;
	int n;

	while (total < BODY_DRAIN_MAX && (n = FCGX_GetStr(buf, sizeof(buf), fr->in)) > 0)
		total += n;
}

/*
 * A kept connection carries nginx's next request after this one: read
 * stdin to its end record first (a GET's comes with the params, a body's
 * after the body), or libfcgi would take that record for the start of the
 * next request and drop the connection. Past BODY_DRAIN_MAX, close it.
 */
static void
finish_stdin(FCGX_Request *fr)
{
	drain_body(fr);
	if (FCGX_HasSeenEOF(fr->in) != EOF)
		fr->keepConnection = 0;
}

/* FCGX_PutStr of a literal */
#define PUT_LIT(s, out) FCGX_PutStr((s), (int)sizeof(s) - 1, (out))

static void
put_num(unsigned long long v, FCGX_Stream *out)
{
	char d[24];
	int i = (int)sizeof(d);

	do {
		d[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v != 0);
	FCGX_PutStr(d + i, (int)sizeof(d) - i, out);
}

static int
own_cache_control(const struct req *r)
{
	for (size_t i = 0; i < r->nheaders; i++)
		if (strcasecmp(r->headers[i].key, "Cache-Control") == 0)
			return 1;
	return 0;
}

/*
 * Status, headers and the body, written in pieces (no formatting: this is
 * on every request's path). Content-Length is always sent, so HEAD (answered
 * as GET without the body) carries the same headers as GET.
 */
static void
write_response(struct req *r, FCGX_Request *fr)
{
	const char *body = NULL, *text = http_status_text(r->status);
	size_t blen = 0;

	/* Written from where the text lives until the reset, not copied (a
	 * sync page is ~750 KB). */
	if (r->out != NULL)
		body = json_text(r->out, &blen);
	PUT_LIT("Status: ", fr->out);
	put_num((unsigned)r->status, fr->out);
	PUT_LIT(" ", fr->out);
	FCGX_PutS(text, fr->out);
	if (body != NULL)
		PUT_LIT("\r\nContent-Type: application/json; charset=utf-8", fr->out);
	if (r->status != 204) {
		PUT_LIT("\r\nContent-Length: ", fr->out);
		put_num(blen, fr->out);
	}
	PUT_LIT("\r\nX-Request-Id: ", fr->out);
	FCGX_PutS(r->http.request_id, fr->out);
	/* no-store unless the handler chose its own (one header, not two) */
	if (!own_cache_control(r))
		PUT_LIT("\r\nCache-Control: no-store", fr->out);
	PUT_LIT("\r\nX-Content-Type-Options: nosniff\r\n", fr->out);
	for (size_t i = 0; i < r->nheaders; i++) {
		FCGX_PutS(r->headers[i].key, fr->out);
		PUT_LIT(": ", fr->out);
		FCGX_PutS(r->headers[i].val, fr->out);
		PUT_LIT("\r\n", fr->out);
	}
	PUT_LIT("\r\n", fr->out);
	if (body != NULL && !r->http.head)
		FCGX_PutStr(body, (int)blen, fr->out);
}

/*
 * Close a connection at once (libfcgi's own close would shut down our side
 * and wait for nginx's close). Right behind an answer, nginx reads the end
 * of the response and the close together and drops the connection; an idle
 * one reads as EOF to nginx, which drops it from its cache.
 */
static void
conn_close(FCGX_Request *fr)
{
	int fd = fr->ipcFd;

	if (fd >= 0)
		close(fd);
	FCGX_Free(fr, 0);
	fr->ipcFd = -1;
}

/* Answer the request read into fr; close its connection right behind the
 * answer unless keep (before the log line: nginx should find it closed). */
static void
serve_one(FCGX_Request *fr, const struct config *cfg, struct db *db, struct arena *a,
    int keep)
{
	struct req r;
	enum http_parse pr;
	long long t0 = mono_us();

	req_init(&r, cfg, db, a, NULL);	/* the id comes with the params */
	r.start_us = t0;
	pr = http_parse_env(a, &r.http, (const char *const *)fr->envp,
	    (size_t)cfg->body_limit);
	r.iam = errors_iam_path(r.http.path);
	if (pr == HTTP_PARSE_TOO_LARGE) {
		drain_body(fr);
		r.status = api_error(&r, 413, ERR_PAYLOAD_TOO_LARGE, "send a smaller body",
		    "the request body exceeds %lld bytes", cfg->body_limit);
	} else if (pr != HTTP_PARSE_OK) {
		drain_body(fr);
		r.status = api_error(&r, 400, ERR_INVALID_REQUEST, NULL,
		    "the request line is malformed (bad escape or invalid UTF-8)");
	} else if (read_body(&r, fr) != 0) {
		r.status = api_error(&r, 400, ERR_INVALID_REQUEST, NULL,
		    "the request body is shorter than its Content-Length");
	} else {
		dispatch(&r);
	}
	if (fr->keepConnection)
		finish_stdin(fr);
	write_response(&r, fr);
	FCGX_Finish_r(fr);
	if (!keep)
		conn_close(fr);
	log_request(&r, mono_us() - t0);
	arena_reset(a);
}

/*
 * FastCGI connections kept by nginx. nginx sends reads (GET, HEAD) through
 * the bds_api_read upstream, which keeps idle connections (`keepalive`),
 * and every other method through bds_api, a new connection per request
 * (nginx/bds-http.conf). libfcgi alone would read the next request of a kept
 * connection with a blocking read, parking the worker on a connection nginx
 * may not use again for a long time; and a worker keeping several idle
 * connections makes nginx's next read on one of them wait behind whatever
 * the worker does on another (a slow request: seconds).
 *
 * So a worker keeps one connection (`held`). Between requests it watches
 * that one and the listening socket in one epoll set. A request on the held
 * connection is served at once. A new connection becomes the held one if
 * the worker holds none; otherwise its request is served once and the
 * connection closed right behind the answer, so nginx finds it closed and
 * never reuses it. A read nginx sends on the held connection meanwhile
 * waits for that one request; before a write (which may wait on a webhook
 * endpoint or a lock) the held connection is closed, so nothing waits
 * behind a slow request. A read nginx had just written on a connection the
 * worker closes fails on nginx's side and is sent again on another one
 * (fastcgi_next_upstream error: nginx retries a failed cached connection
 * without counting a try); writes never ride a kept connection, so no write
 * is ever sent twice. nginx writes a request's records in one go, so a
 * readable connection holds a request, not a stall.
 */
/*
 * On SIGTERM/SIGHUP a worker stops accepting and, for this long, answers a
 * request nginx sends on its held connection and closes the connection
 * with that answer. Short: a rolling reload retires workers one by one.
 */
#define WORKER_STOP_GRACE_MS	200

struct worker {
	const struct config	*cfg;
	struct db		*db;
	struct arena		 a;
	int			 ep;
	int			 listen_fd;
	int			 listening;	/* listen_fd is in the epoll set */
	FCGX_Request		 held;		/* the kept connection, if ipcFd >= 0 */
	int			 watched;	/* held.ipcFd is in the epoll set */
	FCGX_Request		 once;		/* a connection served once, then closed */
};

/* Signals end the worker only while it waits (see the top of the file);
 * returns the mask epoll_pwait waits with. */
static void
worker_signals(sigset_t *waitmask)
{
	struct sigaction sa;
	sigset_t block;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sigemptyset(&block);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGHUP);
	sigprocmask(SIG_BLOCK, &block, waitmask);
	sigdelset(waitmask, SIGTERM);
	sigdelset(waitmask, SIGINT);
	sigdelset(waitmask, SIGHUP);
	sigdelset(waitmask, SIGCHLD);
}

/* Watch the listening socket (data.fd -1 in the event) or stop; 0 ok.
 * EPOLLEXCLUSIVE: a new connection wakes one waiting worker, not all. */
static int
worker_listen(struct worker *w, int on)
{
	struct epoll_event ev = { .events = EPOLLIN | EPOLLEXCLUSIVE, .data.fd = -1 };

	if (w->listening == on)
		return 0;
	if (epoll_ctl(w->ep, on ? EPOLL_CTL_ADD : EPOLL_CTL_DEL, w->listen_fd, &ev) != 0)
		return -1;
	w->listening = on;
	return 0;
}

static void
worker_drop(struct worker *w)
{
	conn_close(&w->held);
	w->watched = 0;
}

/* A read (GET, HEAD): the only requests that ride a kept connection. */
static int
is_read(FCGX_Request *fr)
{
	const char *m = FCGX_GetParam("REQUEST_METHOD", fr->envp);

	return m != NULL && (strcmp(m, "GET") == 0 || strcmp(m, "HEAD") == 0);
}

/*
 * A connection newly held joins the epoll set. A new connection wakes the
 * first waiting worker in the order they watch the listening socket:
 * watching it anew puts this worker, which now holds one, behind the
 * workers that hold none, so those take the next new connection.
 */
static void
worker_watch(struct worker *w)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.fd = w->held.ipcFd };

	if (w->held.ipcFd < 0) {
		w->watched = 0;
		return;
	}
	if (w->watched)
		return;
	if (epoll_ctl(w->ep, EPOLL_CTL_ADD, w->held.ipcFd, &ev) != 0) {
		worker_drop(w);
		return;
	}
	w->watched = 1;
	if (worker_listen(w, 0) != 0 || worker_listen(w, 1) != 0)
		worker_stop = 1;	/* not listening: end, the master forks anew */
}

/*
 * Read the request on the held connection and answer it; keep the
 * connection for nginx's next read unless this was not a read (nginx closes
 * those) or the worker is stopping. On nginx's close (EOF) or a bad record
 * libfcgi closes it and, with no listening socket in the request, returns
 * instead of accepting.
 */
static void
worker_serve(struct worker *w)
{
	if (FCGX_Accept_r(&w->held) == 0) {
		int keep = !worker_stop && is_read(&w->held);

		serve_one(&w->held, w->cfg, w->db, &w->a, keep);
	}
	worker_watch(w);	/* a closed one (ipcFd -1) is no longer watched */
}

/* A new connection while one is held: its request once, then it closes. */
static void
worker_once(struct worker *w, int fd)
{
	/* keepConnection: Accept_r's Finish_r must not close the new fd */
	w->once.ipcFd = fd;
	w->once.keepConnection = 1;
	if (FCGX_Accept_r(&w->once) == 0) {
		if (!is_read(&w->once))
			worker_drop(w);
		serve_one(&w->once, w->cfg, w->db, &w->a, 0);
	} else {
		conn_close(&w->once);
	}
}

/* The listening socket is readable: accept (EAGAIN when another worker
 * took the connection) and serve the new connection's request. */
static void
worker_accept(struct worker *w)
{
	int fd = accept4(w->listen_fd, NULL, NULL, SOCK_CLOEXEC);

	if (fd < 0)
		return;
	if (w->held.ipcFd >= 0) {
		worker_once(w, fd);
		return;
	}
	w->held.ipcFd = fd;
	w->held.keepConnection = 1;
	worker_serve(w);
}

/*
 * Stop (WORKER_STOP_GRACE_MS above): a request nginx sends on the held
 * connection meanwhile is answered and the connection closes with it; an
 * idle one is closed at the end.
 */
static void
worker_drain(struct worker *w)
{
	long long end = mono_us() + WORKER_STOP_GRACE_MS * 1000LL;
	struct epoll_event ev;

	(void)worker_listen(w, 0);
	while (w->held.ipcFd >= 0) {
		long long left = end - mono_us();

		if (epoll_wait(w->ep, &ev, 1, left > 0 ? (int)((left + 999) / 1000) : 0) <= 0)
			break;
		worker_serve(w);
	}
	worker_drop(w);
}

int
server_worker(const struct config *cfg, int listen_fd)
{
	struct epoll_event ev;
	sigset_t waitmask;
	struct worker *w;
	int fl;

	worker_signals(&waitmask);
	/* A connection lost to another worker is EAGAIN, not a blocked accept. */
	if ((fl = fcntl(listen_fd, F_GETFL)) < 0 ||
	    fcntl(listen_fd, F_SETFL, fl | O_NONBLOCK) < 0)
		return 1;
	if ((w = calloc(1, sizeof(*w))) == NULL)
		return 1;
	w->cfg = cfg;
	w->listen_fd = listen_fd;
	if ((w->ep = epoll_create1(EPOLL_CLOEXEC)) < 0)
		goto err;
	/* no listening socket in the request: libfcgi never accepts itself */
	if (worker_listen(w, 1) != 0 || FCGX_Init() != 0 ||
	    FCGX_InitRequest(&w->held, -1, 0) != 0 ||
	    FCGX_InitRequest(&w->once, -1, 0) != 0)
		goto err;
	if ((w->db = db_new(cfg->database_url)) == NULL)
		goto err;
	/* a request never waits long on a row a job or another request
	 * holds: past api_lock_timeout_ms it answers 409 LOCK_TIMEOUT
	 * (api_db_error) */
	{
		char opt[64];

		snprintf(opt, sizeof(opt), "-c lock_timeout=%d", cfg->api_lock_timeout_ms);
		if (db_set_options(w->db, opt) != 0)
			goto err;
	}
	(void)db_ensure(w->db);	/* connect early; requests retry when it is away */
	arena_init(&w->a);
	/*
	 * A list or sync page's big buffers (the query result, the response
	 * text: up to a few MB) come back every request. Above glibc's
	 * default mmap threshold each would be mmap'd and unmapped per request.
	 */
	mallopt(M_MMAP_THRESHOLD, 16 << 20);
	mallopt(M_TRIM_THRESHOLD, 64 << 20);

	/* One event per wait: a signal is seen between any two requests. */
	while (!worker_stop) {
		int n = epoll_pwait(w->ep, &ev, 1, -1, &waitmask);

		if (n <= 0 || worker_stop)
			continue;
		if (ev.data.fd == -1)
			worker_accept(w);
		else
			worker_serve(w);
	}
	worker_drain(w);
	arena_free(&w->a);
	db_free(w->db);
	close(w->ep);
	free(w);
	return 0;
err:
	if (w->ep >= 0)
		close(w->ep);
	free(w);
	return 1;
}

/* ---- master ---- */

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
