/*
 * Conversations (lib/jobs/jobs_conv.c): coroutines on one libcurl multi
 * handle. What it proves without a clock: N transfers to a loopback server
 * that answers only once all N are connected all succeed (one that blocked
 * the loop would wait for ever); pauses interleave; a conversation's stack
 * holds a deep frame; outside a conversation the calls simply block.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <check.h>
#include <curl/curl.h>

#include "jobs/jobs_conv.h"
#include "tcheck.h"

#define N_CONV		8
#define STEP_MAX	2000	/* loop steps before a test gives up */

/* ---- a server that answers only when all N are in ---- */

struct server {
	int		 fd, port, n;
};

static void *
serve(void *arg)
{
	struct server *sv = arg;
	int fds[N_CONV], i;
	static const char answer[] =
	    "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok";

	for (i = 0; i < sv->n; i++) {
		char buf[2048];
		size_t got = 0;
		ssize_t k;

		if ((fds[i] = accept(sv->fd, NULL, NULL)) < 0)
			return NULL;
		/* the whole request head */
		while (got < sizeof(buf) - 1 && (k = read(fds[i], buf + got,
		    sizeof(buf) - 1 - got)) > 0) {
			got += (size_t)k;
			buf[got] = '\0';
			if (strstr(buf, "\r\n\r\n") != NULL)
				break;
		}
	}
	for (i = 0; i < sv->n; i++) {
		(void)!write(fds[i], answer, sizeof(answer) - 1);
		close(fds[i]);
	}
	return NULL;
}

static void
server_start(struct server *sv, int n, pthread_t *t)
{
	struct sockaddr_in a;
	socklen_t len = sizeof(a);

	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sv->fd = socket(AF_INET, SOCK_STREAM, 0);
	ck_assert_int_ge(sv->fd, 0);
	ck_assert_int_eq(bind(sv->fd, (struct sockaddr *)&a, sizeof(a)), 0);
	ck_assert_int_eq(listen(sv->fd, N_CONV), 0);
	ck_assert_int_eq(getsockname(sv->fd, (struct sockaddr *)&a, &len), 0);
	sv->port = ntohs(a.sin_port);
	sv->n = n;
	ck_assert_int_eq(pthread_create(t, NULL, serve, sv), 0);
}

/* ---- conversations ---- */

struct fetch {
	int		 port;
	CURLcode	 rc;
	char		 body[16];
	size_t		 len;
};

static size_t
sink(char *d, size_t size, size_t nmemb, void *arg)
{
	struct fetch *f = arg;
	size_t n = size * nmemb;

	if (f->len + n >= sizeof(f->body))
		return 0;
	memcpy(f->body + f->len, d, n);
	f->len += n;
	f->body[f->len] = '\0';
	return n;
}

static void
fetch_one(void *arg)
{
	struct fetch *f = arg;
	CURL *c = curl_easy_init();
	char url[64];

	snprintf(url, sizeof(url), "http://127.0.0.1:%d/", f->port);
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, 20000L);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, sink);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, f);
	f->rc = conv_perform(c);
	curl_easy_cleanup(c);
}

/* Step the loop until no conversation runs (bounded). */
static void
drain(struct conv_loop *l)
{
	int steps = 0;

	while (l->running > 0 && steps++ < STEP_MAX)
		ck_assert_int_ge(conv_loop_step(l, NULL, 0, 50), 0);
	ck_assert_int_eq(l->running, 0);
}

START_TEST(transfers_wait_together)
{
	struct fetch f[N_CONV];
	struct conv *c[N_CONV];
	int done[N_CONV], i;
	struct conv_loop l;
	struct server sv;
	pthread_t t;

	server_start(&sv, N_CONV, &t);
	ck_assert_int_eq(conv_loop_init(&l), 0);
	for (i = 0; i < N_CONV; i++) {
		memset(&f[i], 0, sizeof(f[i]));
		f[i].port = sv.port;
		c[i] = conv_start(&l, fetch_one, &f[i], &done[i]);
		ck_assert_ptr_nonnull(c[i]);
		ck_assert_int_eq(done[i], 0);	/* waiting on its transfer */
	}
	ck_assert_int_eq(l.running, N_CONV);
	drain(&l);
	for (i = 0; i < N_CONV; i++) {
		ck_assert_int_eq(done[i], 1);
		ck_assert_int_eq(f[i].rc, CURLE_OK);
		ck_assert_str_eq(f[i].body, "ok");
		conv_free(c[i]);
	}
	pthread_join(t, NULL);
	close(sv.fd);
	conv_loop_free(&l);
}
END_TEST

/* ---- pauses ---- */

static char trace[64];

struct pauser {
	char	 name;
	int	 ms;
};

static void
pause_twice(void *arg)
{
	struct pauser *p = arg;
	size_t n = strlen(trace);

	trace[n] = p->name;
	conv_sleep(p->ms);
	n = strlen(trace);
	trace[n] = (char)(p->name - 'a' + 'A');
}

START_TEST(pauses_interleave)
{
	struct pauser p[3] = { { 'a', 60 }, { 'b', 30 }, { 'c', 1 } };
	struct conv *c[3];
	int done[3], i;
	struct conv_loop l;

	memset(trace, 0, sizeof(trace));
	ck_assert_int_eq(conv_loop_init(&l), 0);
	for (i = 0; i < 3; i++)
		ck_assert_ptr_nonnull(c[i] = conv_start(&l, pause_twice, &p[i], &done[i]));
	/* every first step ran before any second one; they end by due time */
	ck_assert_str_eq(trace, "abc");
	drain(&l);
	ck_assert_str_eq(trace, "abcCBA");
	for (i = 0; i < 3; i++)
		conv_free(c[i]);
	conv_loop_free(&l);
}
END_TEST

/* ---- the stack ---- */

static void
deep(void *arg)
{
	volatile char frame[128 * 1024];

	frame[0] = 1;
	frame[sizeof(frame) - 1] = 2;
	conv_sleep(1);
	*(int *)arg = frame[0] + frame[sizeof(frame) - 1];
}

START_TEST(deep_frame)
{
	struct conv_loop l;
	struct conv *c;
	int done, v = 0;

	ck_assert_int_eq(conv_loop_init(&l), 0);
	ck_assert_ptr_nonnull(c = conv_start(&l, deep, &v, &done));
	drain(&l);
	ck_assert_int_eq(v, 3);
	conv_free(c);
	conv_loop_free(&l);
}
END_TEST

START_TEST(outside_blocks)
{
	struct fetch f;
	struct server sv;
	pthread_t t;

	ck_assert_int_eq(conv_inside(), 0);
	conv_sleep(1);
	server_start(&sv, 1, &t);
	memset(&f, 0, sizeof(f));
	f.port = sv.port;
	fetch_one(&f);
	ck_assert_int_eq(f.rc, CURLE_OK);
	ck_assert_str_eq(f.body, "ok");
	pthread_join(t, NULL);
	close(sv.fd);
}
END_TEST

static Suite *
conv_suite(void)
{
	Suite *s = suite_create("jobs_conv");
	TCase *tc = tcase_create("conv");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, transfers_wait_together);
	tcase_add_test(tc, pauses_interleave);
	tcase_add_test(tc, deep_frame);
	tcase_add_test(tc, outside_blocks);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	int rc;

	curl_global_init(CURL_GLOBAL_DEFAULT);
	rc = tcheck_run(conv_suite());
	curl_global_cleanup();
	return rc;
}
