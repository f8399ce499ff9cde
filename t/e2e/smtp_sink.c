/*
 * The e2e SMTP sink: see smtp_sink.h. An acceptor thread, one thread per
 * connection, the messages under one mutex.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <sodium.h>

#include "smtp_sink.h"

#define SINK_LINE_MAX	(64 * 1024)		/* longer lines: 500 */
#define SINK_DATA_MAX	(10 * 1024 * 1024)	/* bigger messages: 552 */
#define SINK_NAME	"sink.bds.test"

struct sink_conn {
	struct smtp_sink *s;
	int		 fd;
	pthread_t	 thread;
	struct sink_conn *next;
	/* the read buffer */
	char		*buf;
	size_t		 len;
	size_t		 cap;
	int		 overlong;	/* the head of this line was dropped */
};

struct smtp_sink {
	int		 lfd;
	int		 port;
	int		 wake[2];	/* written by stop: the acceptor returns */
	pthread_t	 acceptor;
	pthread_mutex_t	 mu;
	pthread_cond_t	 cv;
	struct smtp_msg	**msgs;
	size_t		 nmsgs;
	size_t		 cap;
	struct sink_conn *conns;
	int		 fail_data;
	size_t		 rejected;
	size_t		 auths;
	char		*user;
	char		*password;
	char		*auth_mechs;
	char		*reject_rcpt;
};

static char sink_err[256];

static void *
xmalloc(size_t n)
{
	void *p = malloc(n == 0 ? 1 : n);

	if (p == NULL) {
		fprintf(stderr, "smtp_sink: out of memory\n");
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

static char *
xstrdup_or_null(const char *s)
{
	return s != NULL ? xstrndup(s, strlen(s)) : NULL;
}

const char *
smtp_sink_error(void)
{
	return sink_err;
}

/* ------------------------------------------------------------------ */
/* Connection I/O                                                      */

static int
reply(struct sink_conn *c, const char *fmt, ...)
{
	char line[1024];
	size_t off = 0, len;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line) - 2, fmt, ap);
	va_end(ap);
	if (n < 0)
		return -1;
	len = (size_t)n < sizeof(line) - 2 ? (size_t)n : sizeof(line) - 3;
	memcpy(line + len, "\r\n", 2);
	len += 2;
	while (off < len) {
		ssize_t w = send(c->fd, line + off, len - off, MSG_NOSIGNAL);

		if (w == -1 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		off += (size_t)w;
	}
	return 0;
}

/*
 * The next line without its CRLF (or bare LF) into *line (malloc'ed).
 * 1 a line, 0 end of connection, -1 a line longer than SINK_LINE_MAX
 * (consumed).
 */
static int
read_line(struct sink_conn *c, char **line)
{
	for (;;) {
		char *nl = c->len > 0 ? memchr(c->buf, '\n', c->len) : NULL;
		ssize_t n;

		if (nl != NULL) {
			size_t l = (size_t)(nl - c->buf), take = l + 1;

			if (l > 0 && c->buf[l - 1] == '\r')
				l--;
			*line = l <= SINK_LINE_MAX && !c->overlong ? xstrndup(c->buf, l) : NULL;
			memmove(c->buf, c->buf + take, c->len - take);
			c->len -= take;
			c->overlong = 0;
			return *line != NULL ? 1 : -1;
		}
		if (c->len > SINK_LINE_MAX + 2) {
			c->len = 0;	/* drop the head of an overlong line */
			c->overlong = 1;
		}
		if (c->cap - c->len < 4096) {
			c->cap = c->cap ? c->cap * 2 : 8192;
			if ((c->buf = realloc(c->buf, c->cap)) == NULL)
				abort();
		}
		n = recv(c->fd, c->buf + c->len, c->cap - c->len, 0);
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0)
			return 0;
		c->len += (size_t)n;
	}
}

/* ------------------------------------------------------------------ */
/* The session                                                         */

struct session {
	int		 authed;
	char		*from;
	char		**rcpts;
	size_t		 nrcpts;
};

static void
txn_reset(struct session *t)
{
	size_t i;

	free(t->from);
	for (i = 0; i < t->nrcpts; i++)
		free(t->rcpts[i]);
	free(t->rcpts);
	t->from = NULL;
	t->rcpts = NULL;
	t->nrcpts = 0;
}

/* "FROM:<a@b> SIZE=12" after the verb: the address inside <>, or NULL. */
static char *
path_arg(const char *arg, const char *kw)
{
	size_t kl = strlen(kw);
	const char *lt, *gt;

	while (*arg == ' ')
		arg++;
	if (strncasecmp(arg, kw, kl) != 0)
		return NULL;
	arg += kl;
	while (*arg == ' ')
		arg++;
	if ((lt = strchr(arg, '<')) == NULL || lt != arg || (gt = strchr(lt, '>')) == NULL)
		return NULL;
	return xstrndup(lt + 1, (size_t)(gt - lt - 1));
}

static int
b64_decode(const char *in, char *out, size_t cap, size_t *len)
{
	return sodium_base642bin((unsigned char *)out, cap, in, strlen(in), NULL, len,
	    NULL, sodium_base64_VARIANT_ORIGINAL);
}

static int
creds_ok(struct smtp_sink *s, const char *user, const char *pass)
{
	return strcmp(user, s->user) == 0 && strcmp(pass, s->password ? s->password : "") == 0;
}

static int
mech_offered(struct smtp_sink *s, const char *mech)
{
	const char *p = s->auth_mechs;
	size_t ml = strlen(mech);

	while (p != NULL && *p != '\0') {
		size_t n = strcspn(p, " ");

		if (n == ml && strncasecmp(p, mech, n) == 0)
			return 1;
		p += n;
		p += strspn(p, " ");
	}
	return 0;
}

/* AUTH PLAIN [initial] / AUTH LOGIN [initial]. 1 ok, 0 refused, -1 gone. */
static int
do_auth(struct sink_conn *c, const char *arg)
{
	struct smtp_sink *s = c->s;
	char mech[32] = "", init[4096] = "", dec[4096], user[1024] = "";
	char *line = NULL;
	size_t n = 0;
	int rc;

	if (sscanf(arg, "%31s %4095s", mech, init) < 1 || !mech_offered(s, mech))
		return reply(c, "504 5.5.4 mechanism not offered") == 0 ? 0 : -1;
	if (strcasecmp(mech, "PLAIN") == 0) {
		const char *authcid, *pass;

		if (init[0] == '\0') {
			if (reply(c, "334 ") == -1 || (rc = read_line(c, &line)) == 0)
				return -1;
			snprintf(init, sizeof(init), "%s", rc == 1 ? line : "");
			free(line);
		}
		/* authzid NUL authcid NUL passwd */
		if (b64_decode(init, dec, sizeof(dec) - 1, &n) != 0)
			return reply(c, "501 5.5.2 bad base64") == 0 ? 0 : -1;
		dec[n] = '\0';
		authcid = memchr(dec, '\0', n);
		pass = authcid ? memchr(authcid + 1, '\0', n - (size_t)(authcid + 1 - dec)) : NULL;
		if (pass == NULL || !creds_ok(s, authcid + 1, pass + 1))
			return reply(c, "535 5.7.8 authentication credentials invalid") == 0 ? 0 : -1;
	} else {
		if (init[0] == '\0') {
			if (reply(c, "334 VXNlcm5hbWU6") == -1 || (rc = read_line(c, &line)) == 0)
				return -1;
			snprintf(init, sizeof(init), "%s", rc == 1 ? line : "");
			free(line);
		}
		if (b64_decode(init, user, sizeof(user) - 1, &n) != 0)
			return reply(c, "501 5.5.2 bad base64") == 0 ? 0 : -1;
		user[n] = '\0';
		if (reply(c, "334 UGFzc3dvcmQ6") == -1 || (rc = read_line(c, &line)) == 0)
			return -1;
		rc = rc == 1 && b64_decode(line, dec, sizeof(dec) - 1, &n) == 0;
		free(line);
		if (!rc)
			return reply(c, "501 5.5.2 bad base64") == 0 ? 0 : -1;
		dec[n] = '\0';
		if (!creds_ok(s, user, dec))
			return reply(c, "535 5.7.8 authentication credentials invalid") == 0 ? 0 : -1;
	}
	pthread_mutex_lock(&s->mu);
	s->auths++;
	pthread_mutex_unlock(&s->mu);
	return reply(c, "235 2.7.0 authentication successful") == 0 ? 1 : -1;
}

/* DATA after 354: lines up to ".", unstuffed. 0 stored, -1 gone. */
static int
do_data(struct sink_conn *c, struct session *t)
{
	struct smtp_sink *s = c->s;
	char *data = NULL, *line;
	size_t len = 0, cap = 0;
	int rc, big = 0;

	while ((rc = read_line(c, &line)) != 0) {
		const char *p;
		size_t l;

		if (rc == -1) {
			big = 1;
			continue;
		}
		if (strcmp(line, ".") == 0) {
			free(line);
			break;
		}
		p = line[0] == '.' ? line + 1 : line;	/* RFC 5321 4.5.2 */
		l = strlen(p);
		if (len + l + 3 > SINK_DATA_MAX)
			big = 1;
		if (!big) {
			if (len + l + 3 > cap) {
				cap = (len + l + 3) * 2;
				if ((data = realloc(data, cap)) == NULL)
					abort();
			}
			memcpy(data + len, p, l);
			memcpy(data + len + l, "\r\n", 3);
			len += l + 2;
		}
		free(line);
	}
	if (rc == 0) {
		free(data);
		return -1;
	}
	if (big) {
		free(data);
		return reply(c, "552 5.3.4 message too big") == 0 ? 0 : -1;
	}
	{
		struct smtp_msg *m = xmalloc(sizeof(*m));

		m->from = t->from;
		m->rcpts = t->rcpts;
		m->nrcpts = t->nrcpts;
		m->data = data != NULL ? data : xstrndup("", 0);
		m->len = len;
		m->authed = t->authed;
		m->taken = 0;
		t->from = NULL;
		t->rcpts = NULL;
		t->nrcpts = 0;
		pthread_mutex_lock(&s->mu);
		if (s->nmsgs == s->cap) {
			s->cap = s->cap ? s->cap * 2 : 16;
			if ((s->msgs = realloc(s->msgs, s->cap * sizeof(*s->msgs))) == NULL)
				abort();
		}
		s->msgs[s->nmsgs++] = m;
		pthread_cond_broadcast(&s->cv);
		pthread_mutex_unlock(&s->mu);
	}
	return reply(c, "250 2.0.0 ok: queued") == 0 ? 0 : -1;
}

static void
session(struct sink_conn *c)
{
	struct smtp_sink *s = c->s;
	struct session t = { 0 };
	char *line;
	int rc;

	if (reply(c, "220 " SINK_NAME " ESMTP bds e2e sink") == -1)
		return;
	while ((rc = read_line(c, &line)) != 0) {
		char verb[16] = "";
		const char *arg;
		size_t vl;
		int gone = 0;

		if (rc == -1) {
			if (reply(c, "500 5.5.6 line too long") == -1)
				break;
			continue;
		}
		vl = strcspn(line, " ");
		if (vl < sizeof(verb))
			memcpy(verb, line, vl);
		arg = line + vl + strspn(line + vl, " ");
		if (strcasecmp(verb, "EHLO") == 0) {
			txn_reset(&t);
			gone = reply(c, "250-" SINK_NAME " hello") == -1 ||
			    reply(c, "250-8BITMIME") == -1 ||
			    reply(c, "250-SIZE %d", SINK_DATA_MAX) == -1 ||
			    (s->user != NULL && reply(c, "250-AUTH %s", s->auth_mechs) == -1) ||
			    reply(c, "250 ENHANCEDSTATUSCODES") == -1;
		} else if (strcasecmp(verb, "HELO") == 0) {
			txn_reset(&t);
			gone = reply(c, "250 " SINK_NAME) == -1;
		} else if (strcasecmp(verb, "AUTH") == 0) {
			if (s->user == NULL)
				gone = reply(c, "503 5.5.1 AUTH not offered") == -1;
			else if (t.authed)
				gone = reply(c, "503 5.5.1 already authenticated") == -1;
			else if ((rc = do_auth(c, arg)) == -1)
				gone = 1;
			else
				t.authed = rc;
		} else if (strcasecmp(verb, "MAIL") == 0) {
			char *from = path_arg(arg, "FROM:");

			if (s->user != NULL && !t.authed) {
				gone = reply(c, "530 5.7.0 authentication required") == -1;
			} else if (t.from != NULL) {
				/* as Postfix: a client must RSET or finish first */
				gone = reply(c, "503 5.5.1 nested MAIL command") == -1;
			} else if (from == NULL) {
				gone = reply(c, "501 5.5.4 syntax: MAIL FROM:<address>") == -1;
			} else {
				txn_reset(&t);
				t.from = from;
				from = NULL;
				gone = reply(c, "250 2.1.0 ok") == -1;
			}
			free(from);
		} else if (strcasecmp(verb, "RCPT") == 0) {
			char *to = path_arg(arg, "TO:");

			if (t.from == NULL) {
				gone = reply(c, "503 5.5.1 MAIL first") == -1;
			} else if (to == NULL) {
				gone = reply(c, "501 5.5.4 syntax: RCPT TO:<address>") == -1;
			} else if (s->reject_rcpt != NULL && strstr(to, s->reject_rcpt) != NULL) {
				gone = reply(c, "550 5.1.1 no such user") == -1;
			} else {
				if ((t.rcpts = realloc(t.rcpts, (t.nrcpts + 1) * sizeof(*t.rcpts))) == NULL)
					abort();
				t.rcpts[t.nrcpts++] = to;
				to = NULL;
				gone = reply(c, "250 2.1.5 ok") == -1;
			}
			free(to);
		} else if (strcasecmp(verb, "DATA") == 0) {
			int fail;

			pthread_mutex_lock(&s->mu);
			fail = s->fail_data && t.nrcpts > 0;
			if (fail)
				s->rejected++;
			pthread_mutex_unlock(&s->mu);
			if (t.nrcpts == 0) {
				gone = reply(c, "503 5.5.1 RCPT first") == -1;
			} else if (fail) {
				txn_reset(&t);
				gone = reply(c, "451 4.3.0 try again later") == -1;
			} else {
				gone = reply(c, "354 end data with <CR><LF>.<CR><LF>") == -1 ||
				    do_data(c, &t) == -1;
				txn_reset(&t);
			}
		} else if (strcasecmp(verb, "RSET") == 0) {
			txn_reset(&t);
			gone = reply(c, "250 2.0.0 ok") == -1;
		} else if (strcasecmp(verb, "NOOP") == 0) {
			gone = reply(c, "250 2.0.0 ok") == -1;
		} else if (strcasecmp(verb, "QUIT") == 0) {
			reply(c, "221 2.0.0 bye");
			gone = 1;
		} else {
			gone = reply(c, "502 5.5.2 command not recognised") == -1;
		}
		free(line);
		if (gone)
			break;
	}
	txn_reset(&t);
}

static void *
conn_main(void *arg)
{
	struct sink_conn *c = arg;

	session(c);
	shutdown(c->fd, SHUT_RDWR);
	return NULL;
}

static void *
accept_main(void *arg)
{
	struct smtp_sink *s = arg;

	for (;;) {
		struct pollfd pfd[2] = { { s->lfd, POLLIN, 0 }, { s->wake[0], POLLIN, 0 } };
		struct sink_conn *c;
		int fd;

		if (poll(pfd, 2, -1) == -1) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (pfd[1].revents != 0)
			break;
		if ((fd = accept4(s->lfd, NULL, NULL, SOCK_CLOEXEC)) == -1)
			continue;
		c = xmalloc(sizeof(*c));
		memset(c, 0, sizeof(*c));
		c->s = s;
		c->fd = fd;
		pthread_mutex_lock(&s->mu);
		if (pthread_create(&c->thread, NULL, conn_main, c) != 0) {
			pthread_mutex_unlock(&s->mu);
			close(fd);
			free(c);
			continue;
		}
		c->next = s->conns;
		s->conns = c;
		pthread_mutex_unlock(&s->mu);
	}
	return NULL;
}

/* ------------------------------------------------------------------ */
/* Lifecycle                                                           */

struct smtp_sink *
smtp_sink_start(const struct smtp_sink_opts *o)
{
	struct smtp_sink *s = xmalloc(sizeof(*s));
	struct sockaddr_in sa;
	socklen_t sl = sizeof(sa);
	pthread_condattr_t ca;
	int one = 1;

	memset(s, 0, sizeof(*s));
	s->wake[0] = s->wake[1] = -1;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&s->cv, &ca);
	pthread_condattr_destroy(&ca);
	pthread_mutex_init(&s->mu, NULL);
	if ((s->lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1)
		goto fail;
	setsockopt(s->lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sa.sin_port = htons((unsigned short)o->port);
	if (bind(s->lfd, (struct sockaddr *)&sa, sizeof(sa)) == -1 ||
	    listen(s->lfd, 64) == -1 ||
	    getsockname(s->lfd, (struct sockaddr *)&sa, &sl) == -1 ||
	    pipe2(s->wake, O_CLOEXEC) == -1)
		goto fail;
	s->port = ntohs(sa.sin_port);
	s->fail_data = o->fail_data;
	s->user = xstrdup_or_null(o->user);
	s->password = xstrdup_or_null(o->password);
	s->auth_mechs = xstrdup_or_null(o->auth_mechs ? o->auth_mechs : "PLAIN LOGIN");
	s->reject_rcpt = xstrdup_or_null(o->reject_rcpt);
	if ((errno = pthread_create(&s->acceptor, NULL, accept_main, s)) != 0)
		goto fail;
	return s;
fail:
	snprintf(sink_err, sizeof(sink_err), "smtp sink on 127.0.0.1:%d: %s",
	    o->port, strerror(errno));
	if (s->lfd != -1)
		close(s->lfd);
	if (s->wake[0] != -1) {
		close(s->wake[0]);
		close(s->wake[1]);
	}
	free(s->user);
	free(s->password);
	free(s->auth_mechs);
	free(s->reject_rcpt);
	pthread_cond_destroy(&s->cv);
	pthread_mutex_destroy(&s->mu);
	free(s);
	return NULL;
}

static void
msg_free(struct smtp_msg *m)
{
	size_t i;

	free(m->from);
	for (i = 0; i < m->nrcpts; i++)
		free(m->rcpts[i]);
	free(m->rcpts);
	free(m->data);
	free(m);
}

void
smtp_sink_stop(struct smtp_sink *s)
{
	struct sink_conn *c, *next;
	size_t i;

	if (s == NULL)
		return;
	(void)!write(s->wake[1], "x", 1);
	pthread_join(s->acceptor, NULL);
	/* the acceptor is gone: the list no longer changes */
	for (c = s->conns; c != NULL; c = c->next)
		shutdown(c->fd, SHUT_RDWR);
	for (c = s->conns; c != NULL; c = next) {
		next = c->next;
		pthread_join(c->thread, NULL);
		close(c->fd);
		free(c->buf);
		free(c);
	}
	close(s->lfd);
	close(s->wake[0]);
	close(s->wake[1]);
	for (i = 0; i < s->nmsgs; i++)
		msg_free(s->msgs[i]);
	free(s->msgs);
	free(s->user);
	free(s->password);
	free(s->auth_mechs);
	free(s->reject_rcpt);
	pthread_cond_destroy(&s->cv);
	pthread_mutex_destroy(&s->mu);
	free(s);
}

int
smtp_sink_port(const struct smtp_sink *s)
{
	return s->port;
}

void
smtp_sink_set_fail_data(struct smtp_sink *s, int on)
{
	pthread_mutex_lock(&s->mu);
	s->fail_data = on;
	pthread_mutex_unlock(&s->mu);
}

static size_t
counter(struct smtp_sink *s, const size_t *p)
{
	size_t v;

	pthread_mutex_lock(&s->mu);
	v = *p;
	pthread_mutex_unlock(&s->mu);
	return v;
}

size_t smtp_sink_count(struct smtp_sink *s) { return counter(s, &s->nmsgs); }
size_t smtp_sink_rejected(struct smtp_sink *s) { return counter(s, &s->rejected); }
size_t smtp_sink_auths(struct smtp_sink *s) { return counter(s, &s->auths); }

/* now + ms on the clock the condition variable waits on */
static void
deadline(struct timespec *end, int ms)
{
	clock_gettime(CLOCK_MONOTONIC, end);
	end->tv_sec += ms / 1000;
	end->tv_nsec += (long)(ms % 1000) * 1000000L;
	if (end->tv_nsec >= 1000000000L) {
		end->tv_sec++;
		end->tv_nsec -= 1000000000L;
	}
}

const struct smtp_msg *
smtp_sink_wait(struct smtp_sink *s, size_t n, int timeout_ms)
{
	const struct smtp_msg *m = NULL;
	struct timespec end;

	deadline(&end, timeout_ms);
	pthread_mutex_lock(&s->mu);
	while (s->nmsgs <= n)
		if (pthread_cond_timedwait(&s->cv, &s->mu, &end) == ETIMEDOUT)
			break;
	if (s->nmsgs > n)
		m = s->msgs[n];
	pthread_mutex_unlock(&s->mu);
	return m;
}

const struct smtp_msg *
smtp_sink_take(struct smtp_sink *s, const char *to, int timeout_ms)
{
	const struct smtp_msg *m = NULL;
	struct timespec end;
	size_t i = 0;

	deadline(&end, timeout_ms);
	pthread_mutex_lock(&s->mu);
	for (;;) {
		for (; i < s->nmsgs && m == NULL; i++)
			if (!s->msgs[i]->taken && s->msgs[i]->nrcpts == 1 &&
			    strcasecmp(s->msgs[i]->rcpts[0], to) == 0) {
				s->msgs[i]->taken = 1;
				m = s->msgs[i];
			}
		if (m != NULL || pthread_cond_timedwait(&s->cv, &s->mu, &end) == ETIMEDOUT)
			break;
	}
	pthread_mutex_unlock(&s->mu);
	return m;
}

/* ------------------------------------------------------------------ */
/* Reading messages                                                    */

/* Decode RFC 2047 B words ("=?UTF-8?B?...?="); whitespace between two
 * encoded words goes, as the RFC says. Returns a malloc'ed string. */
static char *
decode_words(const char *v)
{
	size_t len = strlen(v), o = 0;
	char *out = xmalloc(len + 1);
	const char *p = v;
	int prev_word = 0;

	while (*p != '\0') {
		const char *q, *e;
		size_t n = 0;

		if (strncasecmp(p, "=?UTF-8?B?", 10) == 0 && (e = strstr(p + 10, "?=")) != NULL) {
			char *b64 = xstrndup(p + 10, (size_t)(e - p - 10));

			if (b64_decode(b64, out + o, len - o, &n) == 0) {
				o += n;
				free(b64);
				p = e + 2;
				prev_word = 1;
				continue;
			}
			free(b64);
		}
		if (prev_word && (*p == ' ' || *p == '\t')) {
			q = p + strspn(p, " \t");
			if (strncasecmp(q, "=?UTF-8?B?", 10) == 0) {
				p = q;
				continue;
			}
		}
		out[o++] = *p++;
		prev_word = 0;
	}
	out[o] = '\0';
	return out;
}

char *
smtp_msg_header(const struct smtp_msg *m, const char *name)
{
	size_t nl = strlen(name);
	const char *p = m->data;

	while (*p != '\0' && strncmp(p, "\r\n", 2) != 0) {
		const char *eol = strstr(p, "\r\n");

		if (eol == NULL)
			return NULL;
		if (strncasecmp(p, name, nl) == 0 && p[nl] == ':') {
			char *v = xmalloc(strlen(p) + 1), *d;
			size_t o = 0;
			const char *s = p + nl + 1;

			/* unfold: a CRLF followed by white space continues the value */
			for (;;) {
				while (s < eol)
					v[o++] = *s++;
				if (eol[2] != ' ' && eol[2] != '\t')
					break;
				s = eol + 2;
				if ((eol = strstr(s, "\r\n")) == NULL)
					break;
			}
			v[o] = '\0';
			s = v + strspn(v, " \t");
			d = decode_words(s);
			free(v);
			return d;
		}
		p = eol + 2;
	}
	return NULL;
}

const char *
smtp_msg_body(const struct smtp_msg *m)
{
	const char *p = strstr(m->data, "\r\n\r\n");

	if (strncmp(m->data, "\r\n", 2) == 0)
		return m->data + 2;
	return p != NULL ? p + 4 : "";
}

static int
is_word(int ch)
{
	return (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'z') ||
	    (ch >= 'A' && ch <= 'Z') || ch == '_';
}

int
smtp_find_code(const char *text, char out[7])
{
	size_t i, len = strlen(text);

	for (i = 0; i + 6 <= len; i++) {
		size_t k;

		if (i > 0 && is_word((unsigned char)text[i - 1]))
			continue;
		for (k = 0; k < 6 && text[i + k] >= '0' && text[i + k] <= '9'; k++)
			;
		if (k == 6 && !is_word((unsigned char)text[i + 6])) {
			memcpy(out, text + i, 6);
			out[6] = '\0';
			return 0;
		}
	}
	return -1;
}

int
smtp_msg_code(const struct smtp_msg *m, char out[7])
{
	return m != NULL ? smtp_find_code(smtp_msg_body(m), out) : -1;
}
