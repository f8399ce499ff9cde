/* A recording webhook receiver on loopback: see receiver.h. */
#include <errno.h>
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
#include <sys/time.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "receiver.h"
#include "record.h"

#define HEAD_MAX	65536
#define BODY_MAX	(4 * 1024 * 1024)

struct receiver {
	int			 fd;
	int			 port;
	pthread_t		 thread;
	int			 running;
	volatile int		 stop;
	pthread_mutex_t		 mu;
	pthread_cond_t		 cv;
	int			 status;
	int			 delay_ms;
	char			 header[256];	/* extra answer header line, or "" */
	char			 ctype[64];	/* the answer's Content-Type */
	unsigned char		*body;		/* the answer's body (NULL: "ok") */
	size_t			 body_len;
	size_t			 active;	/* connection threads running */
	struct receiver_req	*reqs[RECEIVER_MAX_REQUESTS];
	size_t			 nreqs;
};

static char errbuf[256];

const char *
receiver_error(void)
{
	return errbuf;
}

static void
set_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(errbuf, sizeof(errbuf), fmt, ap);
	va_end(ap);
}

static void
req_free(struct receiver_req *q)
{
	if (q == NULL)
		return;
	for (size_t i = 0; i < q->nheaders; i++) {
		free(q->headers[i].name);
		free(q->headers[i].value);
	}
	free(q->body);
	free(q);
}

/* ------------------------------------------------------------------ */
/* One connection                                                      */

static char *
dup_trim(const char *s, size_t n)
{
	char *out;

	while (n > 0 && (*s == ' ' || *s == '\t')) {
		s++;
		n--;
	}
	while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r'))
		n--;
	if ((out = malloc(n + 1)) == NULL)
		abort();
	memcpy(out, s, n);
	out[n] = '\0';
	return out;
}

/* Parse the head buf[0..n) (ending with the blank line) into q; -1 if malformed. */
static int
parse_head(const char *buf, size_t n, struct receiver_req *q)
{
	const char *line = buf, *end = buf + n, *eol, *sp1, *sp2;

	if ((eol = memchr(line, '\n', (size_t)(end - line))) == NULL)
		return -1;
	sp1 = memchr(line, ' ', (size_t)(eol - line));
	sp2 = sp1 != NULL ? memchr(sp1 + 1, ' ', (size_t)(eol - sp1 - 1)) : NULL;
	if (sp1 == NULL || sp2 == NULL || (size_t)(sp1 - line) >= sizeof(q->method) ||
	    (size_t)(sp2 - sp1 - 1) >= sizeof(q->target))
		return -1;
	memcpy(q->method, line, (size_t)(sp1 - line));
	memcpy(q->target, sp1 + 1, (size_t)(sp2 - sp1 - 1));
	for (line = eol + 1; line < end; line = eol + 1) {
		const char *colon;

		if ((eol = memchr(line, '\n', (size_t)(end - line))) == NULL)
			break;
		if (eol == line || (eol == line + 1 && line[0] == '\r'))
			break;		/* the blank line */
		if ((colon = memchr(line, ':', (size_t)(eol - line))) == NULL)
			return -1;
		if (q->nheaders == RECEIVER_MAX_HEADERS)
			continue;
		q->headers[q->nheaders].name = dup_trim(line, (size_t)(colon - line));
		q->headers[q->nheaders].value = dup_trim(colon + 1, (size_t)(eol - colon - 1));
		q->nheaders++;
	}
	return 0;
}

static void
sleep_ms(struct receiver *rc, int ms)
{
	while (ms > 0 && !rc->stop) {
		struct timespec ts = { 0, 50 * 1000000L };

		nanosleep(&ts, NULL);
		ms -= 50;
	}
}

static void
serve(struct receiver *rc, int c)
{
	struct timeval tv = { 5, 0 };
	char *buf = malloc(HEAD_MAX), *head_end = NULL, reply[512], extra[260] = "", ctype[64];
	unsigned char *body = NULL;
	size_t blen = 2;
	struct receiver_req *q = calloc(1, sizeof(*q));
	size_t have = 0, head_len, want;
	const char *cl;
	int status, delay, n;

	if (buf == NULL || q == NULL)
		abort();
	setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	while (head_end == NULL && have < HEAD_MAX) {
		ssize_t r = recv(c, buf + have, HEAD_MAX - have, 0);

		if (r <= 0)
			goto out;
		have += (size_t)r;
		if ((unsigned char)buf[0] == 0x16)
			goto out;	/* a TLS handshake: this is plain HTTP */
		head_end = memmem(buf, have, "\r\n\r\n", 4);
	}
	if (head_end == NULL)
		goto out;
	head_len = (size_t)(head_end - buf) + 4;
	if (parse_head(buf, head_len, q) != 0)
		goto out;
	cl = receiver_header(q, "Content-Length");
	want = cl != NULL ? strtoul(cl, NULL, 10) : 0;
	if (want > BODY_MAX)
		goto out;
	if ((q->body = malloc(want + 1)) == NULL)
		abort();
	q->body_len = have - head_len < want ? have - head_len : want;
	memcpy(q->body, buf + head_len, q->body_len);
	while (q->body_len < want) {
		ssize_t r = recv(c, q->body + q->body_len, want - q->body_len, 0);

		if (r <= 0)
			goto out;
		q->body_len += (size_t)r;
	}
	q->body[q->body_len] = '\0';
	q->received_at = (long long)time(NULL);
	record_delivery(q);

	pthread_mutex_lock(&rc->mu);
	status = rc->status;
	delay = rc->delay_ms;
	if (rc->header[0] != '\0')
		snprintf(extra, sizeof(extra), "%s\r\n", rc->header);
	snprintf(ctype, sizeof(ctype), "%s", rc->body != NULL ? rc->ctype : "text/plain");
	if (rc->body != NULL && (body = malloc(rc->body_len)) != NULL) {
		memcpy(body, rc->body, rc->body_len);
		blen = rc->body_len;
	}
	if (rc->nreqs < RECEIVER_MAX_REQUESTS) {
		rc->reqs[rc->nreqs++] = q;
		q = NULL;
	}
	pthread_cond_broadcast(&rc->cv);
	pthread_mutex_unlock(&rc->mu);

	sleep_ms(rc, delay);
	n = snprintf(reply, sizeof(reply), "HTTP/1.1 %d Test\r\nContent-Type: %s\r\n"
	    "%sContent-Length: %zu\r\nConnection: close\r\n\r\n%s", status, ctype, extra,
	    blen, body != NULL ? "" : "ok");
	/* the sender may have given up (timeout): no SIGPIPE */
	(void)send(c, reply, (size_t)n, MSG_NOSIGNAL);
	for (size_t off = 0; body != NULL && off < blen; ) {
		ssize_t w = send(c, body + off, blen - off, MSG_NOSIGNAL);

		if (w <= 0)
			break;
		off += (size_t)w;
	}
	free(body);
out:
	req_free(q);
	free(buf);
	shutdown(c, SHUT_RDWR);
	close(c);
}

struct conn {
	struct receiver	*rc;
	int		 fd;
};

static void *
conn_main(void *arg)
{
	struct conn *k = arg;
	struct receiver *rc = k->rc;

	serve(rc, k->fd);
	free(k);
	pthread_mutex_lock(&rc->mu);
	rc->active--;
	pthread_cond_broadcast(&rc->cv);
	pthread_mutex_unlock(&rc->mu);
	return NULL;
}

static void *
loop(void *arg)
{
	struct receiver *rc = arg;

	while (!rc->stop) {
		struct pollfd p = { rc->fd, POLLIN, 0 };
		struct conn *k;
		pthread_t t;
		int c;

		if (poll(&p, 1, 100) <= 0)
			continue;
		if ((c = accept(rc->fd, NULL, NULL)) < 0)
			continue;
		if ((k = malloc(sizeof(*k))) == NULL)
			abort();
		k->rc = rc;
		k->fd = c;
		pthread_mutex_lock(&rc->mu);
		rc->active++;
		pthread_mutex_unlock(&rc->mu);
		if (pthread_create(&t, NULL, conn_main, k) != 0) {
			conn_main(k);	/* serve it here */
			continue;
		}
		pthread_detach(t);
	}
	return NULL;
}

/* ------------------------------------------------------------------ */
/* Lifecycle                                                           */

struct receiver *
receiver_start(const struct receiver_opts *o)
{
	struct receiver *rc = calloc(1, sizeof(*rc));
	struct sockaddr_in sa;
	socklen_t len = sizeof(sa);

	if (rc == NULL) {
		set_error("out of memory");
		return NULL;
	}
	rc->status = o != NULL && o->status != 0 ? o->status : 200;
	rc->delay_ms = o != NULL ? o->delay_ms : 0;
	pthread_mutex_init(&rc->mu, NULL);
	pthread_cond_init(&rc->cv, NULL);
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sa.sin_port = htons(o != NULL ? (unsigned short)o->port : 0);
	if ((rc->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0 ||
	    setsockopt(rc->fd, SOL_SOCKET, SO_REUSEADDR, &(int){ 1 }, sizeof(int)) != 0 ||
	    bind(rc->fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 ||
	    listen(rc->fd, 64) != 0 ||
	    getsockname(rc->fd, (struct sockaddr *)&sa, &len) != 0) {
		set_error("listen on 127.0.0.1: %s", strerror(errno));
		goto fail;
	}
	rc->port = ntohs(sa.sin_port);
	if (pthread_create(&rc->thread, NULL, loop, rc) != 0) {
		set_error("pthread_create failed");
		goto fail;
	}
	rc->running = 1;
	return rc;
fail:
	if (rc->fd >= 0)
		close(rc->fd);
	pthread_mutex_destroy(&rc->mu);
	pthread_cond_destroy(&rc->cv);
	free(rc);
	return NULL;
}

void
receiver_stop(struct receiver *rc)
{
	if (rc == NULL)
		return;
	rc->stop = 1;
	if (rc->running)
		pthread_join(rc->thread, NULL);
	close(rc->fd);
	/* connection threads see stop within 50 ms and end */
	pthread_mutex_lock(&rc->mu);
	while (rc->active > 0)
		pthread_cond_wait(&rc->cv, &rc->mu);
	pthread_mutex_unlock(&rc->mu);
	for (size_t i = 0; i < rc->nreqs; i++)
		req_free(rc->reqs[i]);
	pthread_mutex_destroy(&rc->mu);
	pthread_cond_destroy(&rc->cv);
	free(rc->body);
	free(rc);
}

int
receiver_port(const struct receiver *rc)
{
	return rc->port;
}

char *
receiver_url(const struct receiver *rc, const char *path, char *buf, size_t len)
{
	snprintf(buf, len, "http://127.0.0.1:%d%s", rc->port, path);
	return buf;
}

void
receiver_set(struct receiver *rc, int status, int delay_ms)
{
	pthread_mutex_lock(&rc->mu);
	rc->status = status;
	rc->delay_ms = delay_ms;
	pthread_mutex_unlock(&rc->mu);
}

void
receiver_set_body(struct receiver *rc, const char *content_type, const void *body,
    size_t len)
{
	unsigned char *copy = body != NULL ? malloc(len ? len : 1) : NULL;

	if (copy != NULL)
		memcpy(copy, body, len);
	pthread_mutex_lock(&rc->mu);
	free(rc->body);
	rc->body = copy;
	rc->body_len = copy != NULL ? len : 0;
	snprintf(rc->ctype, sizeof(rc->ctype), "%s", content_type != NULL ? content_type :
	    "application/octet-stream");
	pthread_mutex_unlock(&rc->mu);
}

void
receiver_set_header(struct receiver *rc, const char *line)
{
	pthread_mutex_lock(&rc->mu);
	snprintf(rc->header, sizeof(rc->header), "%s", line != NULL ? line : "");
	pthread_mutex_unlock(&rc->mu);
}

size_t
receiver_busy(struct receiver *rc)
{
	size_t n;

	pthread_mutex_lock(&rc->mu);
	n = rc->active;
	pthread_mutex_unlock(&rc->mu);
	return n;
}

size_t
receiver_count(struct receiver *rc)
{
	size_t n;

	pthread_mutex_lock(&rc->mu);
	n = rc->nreqs;
	pthread_mutex_unlock(&rc->mu);
	return n;
}

const struct receiver_req *
receiver_wait(struct receiver *rc, size_t i, int ms)
{
	struct timespec until;
	const struct receiver_req *q = NULL;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += ms / 1000;
	until.tv_nsec += (long)(ms % 1000) * 1000000L;
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&rc->mu);
	while (rc->nreqs <= i)
		if (pthread_cond_timedwait(&rc->cv, &rc->mu, &until) == ETIMEDOUT)
			break;
	if (rc->nreqs > i)
		q = rc->reqs[i];
	pthread_mutex_unlock(&rc->mu);
	return q;
}

const char *
receiver_header(const struct receiver_req *q, const char *name)
{
	for (size_t i = 0; i < q->nheaders; i++)
		if (strcasecmp(q->headers[i].name, name) == 0)
			return q->headers[i].value;
	return NULL;
}

/* ------------------------------------------------------------------ */
/* Signatures, independently of lib/ (OpenSSL)                         */

void
receiver_hmac_hex(const char *secret, long long t, const char *body, size_t len, char out[65])
{
	unsigned char mac[EVP_MAX_MD_SIZE];
	unsigned int maclen = 0;
	char prefix[32];
	int plen = snprintf(prefix, sizeof(prefix), "%lld.", t);
	unsigned char *msg = malloc((size_t)plen + len + 1);

	if (msg == NULL)
		abort();
	memcpy(msg, prefix, (size_t)plen);
	memcpy(msg + plen, body, len);
	if (HMAC(EVP_sha256(), secret, (int)strlen(secret), msg, (size_t)plen + len, mac,
	    &maclen) == NULL || maclen != 32)
		abort();
	for (unsigned i = 0; i < maclen; i++)
		snprintf(out + 2 * i, 3, "%02x", mac[i]);
	free(msg);
}

int
receiver_sig_parse(const char *header, long long *t, char v1[][65], size_t max)
{
	const char *p = header;
	int n = 0, have_t = 0;

	while (*p != '\0') {
		size_t len = strcspn(p, ",");

		while (len > 0 && *p == ' ') {
			p++;
			len--;
		}
		if (len > 2 && strncmp(p, "t=", 2) == 0) {
			char *end;

			*t = strtoll(p + 2, &end, 10);
			if (end != p + len)
				return -1;
			have_t = 1;
		} else if (len >= 3 && strncmp(p, "v1=", 3) == 0) {
			if ((size_t)n < max) {
				size_t vl = len - 3 < 64 ? len - 3 : 64;

				memcpy(v1[n], p + 3, vl);
				v1[n][vl] = '\0';
			}
			n++;
		}
		p += len;
		if (*p == ',')
			p++;
	}
	return have_t ? n : -1;
}

enum receiver_sig
receiver_verify(const struct receiver_req *q, const char *secret, long long now, int tolerance)
{
	const char *h = receiver_header(q, "Service-Signature");
	char v1[RECEIVER_MAX_V1][65], want[65];
	long long t = 0;
	int n, match = 0;

	if (h == NULL)
		return RECEIVER_SIG_MISSING;
	if ((n = receiver_sig_parse(h, &t, v1, RECEIVER_MAX_V1)) <= 0)
		return RECEIVER_SIG_MALFORMED;
	if (t < now - tolerance || t > now + tolerance)
		return RECEIVER_SIG_STALE;
	receiver_hmac_hex(secret, t, q->body, q->body_len, want);
	for (int i = 0; i < n && i < RECEIVER_MAX_V1; i++)
		if (strlen(v1[i]) == 64 && CRYPTO_memcmp(v1[i], want, 64) == 0)
			match = 1;
	return match ? RECEIVER_SIG_OK : RECEIVER_SIG_MISMATCH;
}
