/* JSON log lines on one file descriptor, one write(2) per line. */
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

#include "core/http.h"
#include "core/log.h"
#include "core/req.h"

static int log_fd = 2;

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

static void
stamp(struct json_object *o)
{
	struct timeval tv;
	struct tm tm;
	char buf[96];

	gettimeofday(&tv, NULL);
	gmtime_r(&tv.tv_sec, &tm);
	snprintf(buf, sizeof(buf), "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ",
	    tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min,
	    tm.tm_sec, (long)(tv.tv_usec / 1000));
	json_object_object_add(o, "ts", json_object_new_string(buf));
}

static void
emit(struct json_object *o)
{
	size_t len;
	const char *s = json_object_to_json_string_length(o,
	    JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE, &len);
	char buf[8192];

	if (len + 1 > sizeof(buf))
		len = sizeof(buf) - 1;	/* never split a line across writes */
	memcpy(buf, s, len);
	buf[len] = '\n';
	if (write(log_fd, buf, len + 1) < 0) {
		/* Nowhere left to report it. */
	}
}

static void
add_str(struct json_object *o, const char *k, const char *v)
{
	json_object_object_add(o, k, v ? json_object_new_string(v) : NULL);
}

void
log_request(const struct req *r, long long duration_us)
{
	struct json_object *o = json_object_new_object();

	stamp(o);
	add_str(o, "level", "info");
	add_str(o, "request_id", r->http.request_id);
	add_str(o, "method", r->http.method_str);
	add_str(o, "route", r->match.route ? r->match.route->pattern : NULL);
	json_object_object_add(o, "status", json_object_new_int(r->status));
	json_object_object_add(o, "duration_us", json_object_new_int64(duration_us));
	add_str(o, "client_id", r->client_id);
	add_str(o, "user_id", r->user_id);
	add_str(o, "env", r->env);
	add_str(o, "host_env", r->http.host_env);
	add_str(o, "error_code", r->error_code);
	json_object_object_add(o, "pid", json_object_new_int((int)getpid()));
	emit(o);
	json_object_put(o);
}

void
log_msg(const char *level, const char *fmt, ...)
{
	struct json_object *o = json_object_new_object();
	char msg[2048];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	stamp(o);
	add_str(o, "level", level);
	add_str(o, "msg", msg);
	json_object_object_add(o, "pid", json_object_new_int((int)getpid()));
	emit(o);
	json_object_put(o);
}
