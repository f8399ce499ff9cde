/*
 * JSON log lines on one file descriptor, one write(2) per line. Written
 * straight into a stack buffer (no JSON object, no printf, the pid and the
 * current second cached): the request line is on every request's path.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "core/http.h"
#include "core/log.h"
#include "core/req.h"
#include "core/validate.h"

#define LOG_LINE_MAX	8192
#define LOG_TAIL	64	/* kept free for the closing fields: ,"pid":N}\n */

static int log_fd = 2;
static pid_t log_pid;		/* cached; 0 until first use and after a fork */

int
log_open(const char *path)
{
	int fd;

	if (path == NULL || *path == '\0' || strcmp(path, "-") == 0) {
		log_fd = 2;
		return 0;
	}
	if ((fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0640)) < 0)
		return -1;
	if (log_fd > 2)
		close(log_fd);
	log_fd = fd;
	return 0;
}

/* A line being built; len never passes LOG_LINE_MAX - LOG_TAIL for strings. */
struct line {
	char	 buf[LOG_LINE_MAX];
	size_t	 len;
};

static void
put(struct line *l, const char *s, size_t n)
{
	if (n > sizeof(l->buf) - l->len)
		n = sizeof(l->buf) - l->len;
	memcpy(l->buf + l->len, s, n);
	l->len += n;
}

#define PUTLIT(l, s) put((l), (s), sizeof(s) - 1)

static void
put_uint(struct line *l, unsigned long long v)
{
	char d[24];
	size_t i = sizeof(d);

	do {
		d[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v != 0);
	put(l, d + i, sizeof(d) - i);
}

static void
put_int(struct line *l, long long v)
{
	if (v < 0) {
		PUTLIT(l, "-");
		put_uint(l, 0ULL - (unsigned long long)v);
	} else
		put_uint(l, (unsigned long long)v);
}

/*
 * A JSON string value: quotes, backslashes and control characters escaped;
 * valid UTF-8 kept as is, any other byte as U+FFFD; NULL as null. Cut (at a
 * character boundary) rather than overflow, so the line stays valid JSON.
 */
static void
put_str(struct line *l, const char *s)
{
	static const char hex[] = "0123456789abcdef";
	size_t n, room;
	int utf8;

	if (s == NULL) {
		PUTLIT(l, "null");
		return;
	}
	n = strlen(s);
	utf8 = validate_utf8(s, n);
	PUTLIT(l, "\"");
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		char esc[6];
		size_t k = 0, adv = 1;

		room = sizeof(l->buf) - LOG_TAIL - l->len;
		if (c == '"' || c == '\\') {
			esc[k++] = '\\';
			esc[k++] = (char)c;
		} else if (c == '\n' || c == '\r' || c == '\t') {
			esc[k++] = '\\';
			esc[k++] = c == '\n' ? 'n' : c == '\r' ? 'r' : 't';
		} else if (c < 0x20 || c == 0x7f) {
			memcpy(esc, "\\u00", 4);
			esc[4] = hex[c >> 4];
			esc[5] = hex[c & 15];
			k = 6;
		} else if (c >= 0x80 && !utf8) {
			memcpy(esc, "\\ufffd", 6);
			k = 6;
		} else if (c >= 0x80) {
			/* A whole UTF-8 sequence, never half of one. */
			adv = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : 2;
			if (adv > room)
				break;
			put(l, s + i, adv);
			i += adv - 1;
			continue;
		} else {
			esc[k++] = (char)c;
		}
		if (k > room)
			break;
		put(l, esc, k);
	}
	PUTLIT(l, "\"");
}

static void
put_key(struct line *l, const char *k, size_t klen)
{
	put(l, k, klen);
}

/* ,"key": then the string */
#define FIELD_STR(l, k, v) do { put_key((l), ",\"" k "\":", sizeof(",\"" k "\":") - 1); \
	put_str((l), (v)); } while (0)

/* {"ts":"2026-01-02T03:04:05.678Z","level": */
static void
put_head(struct line *l, const char *level)
{
	static time_t last_sec = -1;
	static char last[64];	/* "2026-01-02T03:04:05." */
	struct timeval tv;
	char ms[3];

	gettimeofday(&tv, NULL);
	if (tv.tv_sec != last_sec) {
		struct tm tm;

		gmtime_r(&tv.tv_sec, &tm);
		snprintf(last, sizeof(last), "%04d-%02d-%02dT%02d:%02d:%02d.",
		    tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
		    tm.tm_min, tm.tm_sec);
		last_sec = tv.tv_sec;
	}
	ms[0] = (char)('0' + tv.tv_usec / 100000);
	ms[1] = (char)('0' + tv.tv_usec / 10000 % 10);
	ms[2] = (char)('0' + tv.tv_usec / 1000 % 10);
	PUTLIT(l, "{\"ts\":\"");
	put(l, last, strlen(last));
	put(l, ms, 3);
	PUTLIT(l, "Z\",\"level\":");
	put_str(l, level);
}

static void
forget_pid(void)
{
	log_pid = 0;
}

/* getpid() once per process; a fork (a new worker) forgets it. */
static pid_t
cached_pid(void)
{
	static int registered;

	if (!registered) {
		pthread_atfork(NULL, NULL, forget_pid);
		registered = 1;
	}
	if (log_pid == 0)
		log_pid = getpid();
	return log_pid;
}

static void
finish(struct line *l)
{
	PUTLIT(l, ",\"pid\":");
	put_int(l, (long long)cached_pid());
	PUTLIT(l, "}\n");
	if (write(log_fd, l->buf, l->len) < 0) {
		/* Nowhere left to report it. */
	}
}

void
log_request(const struct req *r, long long duration_us)
{
	struct line l;

	l.len = 0;
	put_head(&l, "info");
	FIELD_STR(&l, "request_id", r->http.request_id);
	FIELD_STR(&l, "method", r->http.method_str);
	FIELD_STR(&l, "route", r->match.route ? r->match.route->pattern : NULL);
	PUTLIT(&l, ",\"status\":");
	put_int(&l, r->status);
	PUTLIT(&l, ",\"duration_us\":");
	put_int(&l, duration_us);
	FIELD_STR(&l, "client_id", r->client_id);
	FIELD_STR(&l, "user_id", r->user_id);
	FIELD_STR(&l, "env", r->env);
	FIELD_STR(&l, "host_env", r->http.host_env);
	FIELD_STR(&l, "error_code", r->error_code);
	finish(&l);
}

void
log_msg(const char *level, const char *fmt, ...)
{
	struct line l;
	char msg[2048];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	l.len = 0;
	put_head(&l, level);
	FIELD_STR(&l, "msg", msg);
	finish(&l);
}
