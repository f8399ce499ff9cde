/*
 * lib/core/log.c: the request line and process lines are written by hand
 * into a buffer, so each is parsed back with json-c: every field present
 * with its value, valid JSON whatever the values hold (quotes,
 * backslashes, control characters, non-ASCII, invalid UTF-8, very long).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>
#include <json-c/json.h>

#include "core/log.h"
#include "core/req.h"
#include "tcheck.h"

static char path[] = "/tmp/bds-check-log-XXXXXX";

static void
setup(void)
{
	int fd = mkstemp(path);

	ck_assert_int_ge(fd, 0);
	close(fd);
	ck_assert_int_eq(log_open(path), 0);
}

static void
teardown(void)
{
	log_open(NULL);
	unlink(path);
	strcpy(path, "/tmp/bds-check-log-XXXXXX");
}

/* The one line the log holds, parsed; fails the test on anything else. */
static struct json_object *
read_line(void)
{
	static char buf[16384];
	struct json_object *o;
	FILE *f = fopen(path, "r");
	size_t n;

	ck_assert_ptr_nonnull(f);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	ck_assert_uint_gt(n, 0);
	ck_assert_msg(buf[n - 1] == '\n' && memchr(buf, '\n', n) == buf + n - 1,
	    "not exactly one line: %s", buf);
	o = json_tokener_parse(buf);
	ck_assert_msg(o != NULL && json_object_is_type(o, json_type_object),
	    "not a JSON object: %s", buf);
	return o;
}

static void
assert_str(struct json_object *o, const char *k, const char *want)
{
	struct json_object *v;

	ck_assert_msg(json_object_object_get_ex(o, k, &v), "no field %s", k);
	if (want == NULL) {
		ck_assert_msg(v == NULL, "%s: want null", k);
		return;
	}
	ck_assert_msg(json_object_is_type(v, json_type_string), "%s: not a string", k);
	ck_assert_str_eq(json_object_get_string(v), want);
}

static const char *const hostile[] = {
	"plain",
	"quote \" and backslash \\ and slash /",
	"\\\"\\\\\"",
	"ctl \x01\x02\x1f\x7f tab\t nl\n cr\r ff\f bs\b",
	"non-ASCII: caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 \xe4\xb8\xad",
	"{\"injected\":true}",
	"",
};

/* Every string field of the request line takes the hostile value as is. */
START_TEST(test_request_line)
{
	const char *s = hostile[_i];
	struct route rt = { .pattern = s };
	struct json_object *o, *v;
	struct req r;

	memset(&r, 0, sizeof(r));
	r.http.request_id = s;
	r.http.method_str = s;
	r.http.host_env = s;
	r.match.route = &rt;
	r.status = 404;
	r.client_id = s;
	r.user_id = s;
	r.env = s;
	r.error_code = s;
	log_request(&r, 1234567);
	o = read_line();
	assert_str(o, "level", "info");
	assert_str(o, "request_id", s);
	assert_str(o, "method", s);
	assert_str(o, "route", s);
	assert_str(o, "client_id", s);
	assert_str(o, "user_id", s);
	assert_str(o, "env", s);
	assert_str(o, "host_env", s);
	assert_str(o, "error_code", s);
	ck_assert(json_object_object_get_ex(o, "status", &v));
	ck_assert_int_eq(json_object_get_int(v), 404);
	ck_assert(json_object_object_get_ex(o, "duration_us", &v));
	ck_assert_int_eq(json_object_get_int64(v), 1234567);
	ck_assert(json_object_object_get_ex(o, "pid", &v));
	ck_assert_int_eq(json_object_get_int(v), (int)getpid());
	/* exactly these fields */
	ck_assert_int_eq(json_object_object_length(o), 13);
	json_object_put(o);
}
END_TEST

/* Absent values are null; the timestamp is ISO 8601 UTC with milliseconds. */
START_TEST(test_request_nulls)
{
	struct json_object *o, *v;
	const char *ts;
	struct req r;

	memset(&r, 0, sizeof(r));
	r.http.request_id = "0123456789abcdef";
	r.http.method_str = "GET";
	r.status = 200;
	log_request(&r, 0);
	o = read_line();
	assert_str(o, "route", NULL);
	assert_str(o, "client_id", NULL);
	assert_str(o, "user_id", NULL);
	assert_str(o, "env", NULL);
	assert_str(o, "host_env", NULL);
	assert_str(o, "error_code", NULL);
	ck_assert(json_object_object_get_ex(o, "ts", &v));
	ts = json_object_get_string(v);
	ck_assert_uint_eq(strlen(ts), 24);
	ck_assert(ts[4] == '-' && ts[10] == 'T' && ts[19] == '.' && ts[23] == 'Z');
	json_object_put(o);
}
END_TEST

/* Invalid UTF-8 becomes U+FFFD; the line stays valid JSON. */
START_TEST(test_bad_utf8)
{
	struct json_object *o;

	log_msg("warn", "bad \xff\xfe utf8 \xc3");
	o = read_line();
	assert_str(o, "level", "warn");
	assert_str(o, "msg", "bad \xef\xbf\xbd\xef\xbf\xbd utf8 \xef\xbf\xbd");
	json_object_put(o);
}
END_TEST

/* A message that escapes to more than a line holds is cut, never split. */
START_TEST(test_long_msg)
{
	static const char *const unit[] = { "\x01", "\"", "\xe2\x82\xac", "a" };
	struct json_object *o, *v;
	char msg[2048];
	size_t n = 0, ulen = strlen(unit[_i]);

	while (n + ulen < sizeof(msg)) {
		memcpy(msg + n, unit[_i], ulen);
		n += ulen;
	}
	msg[n] = '\0';
	log_msg("info", "%s", msg);
	o = read_line();
	ck_assert(json_object_object_get_ex(o, "msg", &v));
	/* a prefix of the message, whole characters only */
	ck_assert_uint_gt(json_object_get_string_len(v), 0);
	ck_assert_uint_eq(json_object_get_string_len(v) % ulen, 0);
	ck_assert(strncmp(json_object_get_string(v), msg,
	    (size_t)json_object_get_string_len(v)) == 0);
	ck_assert(json_object_object_get_ex(o, "pid", &v));
	json_object_put(o);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("log");
	TCase *tc = tcase_create("lines");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_loop_test(tc, test_request_line, 0, sizeof(hostile) / sizeof(hostile[0]));
	tcase_add_test(tc, test_request_nulls);
	tcase_add_test(tc, test_bad_utf8);
	tcase_add_loop_test(tc, test_long_msg, 0, 4);
	suite_add_tcase(s, tc);
	return tcheck_run(s);
}
