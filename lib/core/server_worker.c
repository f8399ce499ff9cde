/*
 * The worker loop. A worker keeps SIGTERM/SIGHUP blocked except while it
 * waits in epoll_pwait for a connection or a request: a signal never
 * interrupts a request, and a request in flight always completes before
 * the worker exits. It reads a request, dispatches it and writes the answer
 * (server_reply.c).
 */
#include <fcntl.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fcgiapp.h>

#include "core/arena.h"
#include "core/clock.h"
#include "core/config.h"
#include "core/db.h"
#include "core/errors.h"
#include "core/log.h"
#include "core/meter.h"
#include "core/req.h"
#include "core/server.h"
#include "core/server_reply.h"

#define BODY_DRAIN_MAX (16LL << 20)	/* read and drop at most this much of a refused body */

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
serve_one(FCGX_Request *fr, const struct config *cfg, struct db *db, struct db *db_read,
    struct arena *a, int keep)
{
	struct req r;
	enum http_parse pr;
	long long t0 = mono_us();

	req_init(&r, cfg, db, a, NULL);	/* the id comes with the params */
	r.db_read = db_read;
	r.start_us = t0;
	pr = http_parse_env(a, &r.http, (const char *const *)fr->envp,
	    (size_t)cfg->body_limit);
	/* the envelope by path; the raw URI's when the path did not decode */
	r.iam = errors_iam_path(r.http.path != NULL ? r.http.path : r.http.uri);
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
	server_reply_write(&r, fr);
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
	struct db		*db_read;	/* db.read_url's standby, or NULL */
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

		serve_one(&w->held, w->cfg, w->db, w->db_read, &w->a, keep);
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
		serve_one(&w->once, w->cfg, w->db, w->db_read, &w->a, 0);
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
	/* reads on a standby, connected at the first read: a read-only session
	 * whatever server the URL lands on (the primary, when no standby is up) */
	if (cfg->db_read_url[0] != '\0' &&
	    ((w->db_read = db_new_read(cfg->db_read_url)) == NULL ||
	    db_set_options(w->db_read, "-c default_transaction_read_only=on") != 0))
		goto err;
	(void)db_ensure(w->db);	/* connect early; requests retry when it is away */
	arena_init(&w->a);
	/*
	 * A list or sync page's big buffers (the query result, the response
	 * text: up to a few MB) come back every request. Above glibc's
	 * default mmap threshold each would be mmap'd and unmapped per request.
	 */
	mallopt(M_MMAP_THRESHOLD, 16 << 20);
	mallopt(M_TRIM_THRESHOLD, 64 << 20);

	if (strcmp(cfg->metering, "on") == 0)
		meter_start(cfg->metering_flush_interval);

	/*
	 * One event per wait: a signal is seen between any two requests. The
	 * usage counters are flushed when due between two requests, after the
	 * answer went out (the wait ends for it when no request comes).
	 */
	while (!worker_stop) {
		int n = epoll_pwait(w->ep, &ev, 1, meter_wait_ms(mono_us()), &waitmask);

		if (n > 0 && !worker_stop) {
			if (ev.data.fd == -1)
				worker_accept(w);
			else
				worker_serve(w);
		}
		if (meter_wait_ms(mono_us()) == 0)
			(void)meter_flush(w->db, &w->a);
	}
	worker_drain(w);
	(void)meter_flush(w->db, &w->a);	/* what this worker counted, before it ends */
	arena_free(&w->a);
	db_free(w->db);
	db_free(w->db_read);
	close(w->ep);
	free(w);
	return 0;
err:
	if (w->ep >= 0)
		close(w->ep);
	free(w);
	return 1;
}
