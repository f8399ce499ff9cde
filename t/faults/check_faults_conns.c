/*
 * Hostile and heavy connections through nginx (nginx/bds-dev.conf.in,
 * bds-server.conf):
 *   - 1,000 idle connections and a slow-loris crowd (a request header sent
 *     a byte every second) held open while an ordinary client goes on:
 *     every ordinary request answers, nginx closes the slow and idle ones
 *     after client_header_timeout (10 s), and the stack serves after;
 *   - a saturation soak (SOAK_SECS, 60 with BDS_FAULTS_LONG=1): as many
 *     requests as SOAK_CONNS connections carry, a mix of health, a keyed
 *     read and a keyed write, with 0 answers 5xx, each bds-api worker's
 *     resident memory grown by less than 1 MiB from after the warm-up to
 *     the end, and no worker holding more open files at the end (nor
 *     sockets beyond its own three: listening, database, one kept nginx
 *     connection). The
 *     figures are printed (bench/RESULTS.md "Soak"). Under the sanitizers
 *     (BDS_SANITIZED=1) memory is not compared: ASan's quarantine keeps
 *     freed memory on purpose, and LeakSanitizer checks the workers there.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>

#include <check.h>

#include "e2e/devacct.h"
#include "e2e/harness.h"

#define IDLE		1000	/* connections opened and left idle */
#define SLOW		50	/* slow-loris connections */
#define HEADER_TIMEOUT_S 10	/* client_header_timeout in bds-server.conf */
#define WORKERS		2
#define SOAK_CONNS	32	/* requests in flight during the soak */
#define SOAK_WARMUP_S	3

static struct devacct dev;

static void
setup(void)
{
	struct harness_opts o;
	struct rlimit rl;

	/* the test's own end of IDLE + SLOW connections, and libcurl's */
	ck_assert_int_eq(getrlimit(RLIMIT_NOFILE, &rl), 0);
	if (rl.rlim_cur < 4096) {
		rl.rlim_cur = rl.rlim_max < 4096 ? rl.rlim_max : 4096;
		ck_assert_int_eq(setrlimit(RLIMIT_NOFILE, &rl), 0);
	}
	harness_opts_defaults(&o);
	o.workers = WORKERS;
	harness_fixture_start(&o);
	devacct_legal();
	devacct_new(&dev, "conns");
}

/* A TCP connection to nginx's api port, non-blocking; -1 on failure. */
static int
connect_api(void)
{
	struct sockaddr_in sa = { .sin_family = AF_INET,
	    .sin_port = htons((uint16_t)harness_port("api")) };
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd == -1)
		return -1;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == -1) {
		close(fd);
		return -1;
	}
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	return fd;
}

/* 1 when nginx has closed fd (end of file, a reset, or a 408 then the
 * end); 0 while it is open. */
static int
closed_by_peer(int fd)
{
	char buf[512];
	ssize_t n;

	for (;;) {
		n = read(fd, buf, sizeof(buf));
		if (n == 0 || (n == -1 && errno != EAGAIN && errno != EWOULDBLOCK))
			return 1;
		if (n == -1)
			return 0;
		/* an answer (408): keep reading until the close */
	}
}

static int
count_closed(const int *fd, size_t n)
{
	int c = 0;

	for (size_t i = 0; i < n; i++)
		c += fd[i] == -1 || closed_by_peer(fd[i]);
	return c;
}

START_TEST(idle_and_slow_clients_leave_others_served)
{
	static const char head[] = "GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ";
	static int idle[IDLE], slow[SLOW];
	char *client = devacct_client_new(&dev), *key = devacct_key_new(&dev, client, "sandbox");
	char auth[256];
	const char *hdr[] = { auth, NULL };
	long long start = harness_now_ms(), end;
	int served = 0, opened = 0, sent_slow = 0;

	snprintf(auth, sizeof(auth), "Authorization: Bearer %s", key);
	for (int i = 0; i < IDLE; i++)
		opened += (idle[i] = connect_api()) != -1;
	for (int i = 0; i < SLOW; i++) {
		if ((slow[i] = connect_api()) != -1 &&
		    send(slow[i], head, sizeof(head) - 1, MSG_NOSIGNAL) ==
		    (ssize_t)(sizeof(head) - 1))
			opened++;
	}
	ck_assert_msg(opened == IDLE + SLOW, "only %d of %d connections opened", opened,
	    IDLE + SLOW);
	/* an ordinary client, while the slow ones send a byte a second, until
	 * past the header timeout */
	end = start + (HEADER_TIMEOUT_S + 4) * 1000LL;
	while (harness_now_ms() < end) {
		struct harness_resp *h = harness_get("api", "/v1/health");
		struct harness_resp *r = harness_request("GET", "sandbox", "/v1/bills?limit=5",
		    hdr, NULL, 0);

		harness_expect(h, 200);
		harness_expect(r, 200);
		harness_resp_free(h);
		harness_resp_free(r);
		served += 2;
		for (int i = 0; i < SLOW; i++)	/* nginx may have closed it */
			if (slow[i] != -1 && send(slow[i], "x", 1, MSG_NOSIGNAL) == 1)
				sent_slow++;
		harness_sleep_ms(1000);
	}
	/* nginx closed every idle and slow connection by now (bounded wait
	 * for the last timers) */
	{
		long long until = harness_now_ms() + 10000;
		int ci, cs;

		while ((ci = count_closed(idle, IDLE)) < IDLE ||
		    (cs = count_closed(slow, SLOW)) < SLOW) {
			if (harness_now_ms() >= until)
				break;
			harness_sleep_ms(250);
		}
		ci = count_closed(idle, IDLE);
		cs = count_closed(slow, SLOW);
		fprintf(stderr, "conns: %d idle and %d slow held %lld s; %d ordinary requests served;"
		    " closed by nginx: %d idle, %d slow (after %d slow bytes)\n", IDLE, SLOW,
		    (harness_now_ms() - start) / 1000, served, ci, cs, sent_slow);
		ck_assert_int_eq(ci, IDLE);
		ck_assert_int_eq(cs, SLOW);
	}
	for (int i = 0; i < IDLE; i++)
		close(idle[i]);
	for (int i = 0; i < SLOW; i++)
		close(slow[i]);
	{
		struct harness_resp *h = harness_get("api", "/v1/health");

		harness_expect(h, 200);
		harness_resp_free(h);
	}
	free(client);
	free(key);
}
END_TEST

/* ---- the soak ---- */

struct worker_use {
	pid_t		 pid;
	long long	 rss_kb;
	int		 files;		/* open descriptors other than sockets */
	int		 sockets;
};

static long long
rss_kb(pid_t pid)
{
	char path[64], *text, *p;
	long long kb = -1;

	snprintf(path, sizeof(path), "/proc/%ld/status", (long)pid);
	if ((text = harness_slurp(path)) == NULL)
		return -1;
	if ((p = strstr(text, "VmRSS:")) != NULL)
		kb = strtoll(p + 6, NULL, 10);
	free(text);
	return kb;
}

/* The worker's open descriptors: sockets and the rest. */
static void
open_fds(struct worker_use *w)
{
	char path[64], link[320], target[64];
	struct dirent *e;
	DIR *d;

	w->files = w->sockets = -1;
	snprintf(path, sizeof(path), "/proc/%ld/fd", (long)w->pid);
	if ((d = opendir(path)) == NULL)
		return;
	w->files = w->sockets = 0;
	while ((e = readdir(d)) != NULL) {
		ssize_t n;

		if (e->d_name[0] == '.')
			continue;
		snprintf(link, sizeof(link), "%s/%s", path, e->d_name);
		n = readlink(link, target, sizeof(target) - 1);
		target[n > 0 ? n : 0] = '\0';
		if (strncmp(target, "socket:", 7) == 0)
			w->sockets++;
		else
			w->files++;
	}
	closedir(d);
}

/* Each worker's pid, resident memory and open files; how many. */
static size_t
workers_use(struct worker_use *w, size_t max)
{
	pid_t pids[16];
	size_t n = harness_api_workers(pids, 16);

	for (size_t i = 0; i < n && i < max; i++) {
		w[i].pid = pids[i];
		w[i].rss_kb = rss_kb(pids[i]);
		open_fds(&w[i]);
	}
	return n < max ? n : max;
}

static atomic_int soak_stop;
static atomic_long soak_ok, soak_5xx, soak_other;
static char soak_key[256];

static void *
soak_thread(void *arg)
{
	char auth[300];
	const char *hdr[] = { auth, "Content-Type: application/json", NULL };
	long i = (long)(intptr_t)arg;

	snprintf(auth, sizeof(auth), "Authorization: Bearer %s", soak_key);
	while (!atomic_load(&soak_stop)) {
		struct harness_resp *r;

		switch (i++ % 4) {
		case 0:
			r = harness_get("api", "/v1/health");
			break;
		case 1:
		case 2:
			r = harness_request("GET", "sandbox", "/v1/bills?limit=5", hdr, NULL, 0);
			break;
		default:
			r = harness_request("POST", "sandbox", "/v1/link-tokens", hdr,
			    "{\"client_user_id\":\"soak\"}", 25);
			break;
		}
		if (r->status >= 200 && r->status < 300)
			atomic_fetch_add(&soak_ok, 1);
		else if (r->status >= 500)
			atomic_fetch_add(&soak_5xx, 1);
		else
			atomic_fetch_add(&soak_other, 1);
		harness_resp_free(r);
	}
	return NULL;
}

static void
soak_for(int secs)
{
	pthread_t th[SOAK_CONNS];

	atomic_store(&soak_stop, 0);
	for (long i = 0; i < SOAK_CONNS; i++)
		ck_assert_int_eq(pthread_create(&th[i], NULL, soak_thread, (void *)(intptr_t)i), 0);
	harness_sleep_ms(secs * 1000);
	atomic_store(&soak_stop, 1);
	for (int i = 0; i < SOAK_CONNS; i++)
		pthread_join(th[i], NULL);
}

START_TEST(saturation_soak_holds_memory_and_files)
{
	const char *lv = getenv("BDS_FAULTS_LONG");
	int secs = lv != NULL && strcmp(lv, "1") == 0 ? 60 : 10;
	char *client = devacct_client_new(&dev), *key = devacct_key_new(&dev, client, "sandbox");
	struct worker_use before[WORKERS], after[WORKERS];
	const char *sv = getenv("BDS_SANITIZED");
	int sanitized = sv != NULL && strcmp(sv, "1") == 0;
	size_t nb, na;
	long ok, bad, other;

	snprintf(soak_key, sizeof(soak_key), "%s", key);
	soak_for(SOAK_WARMUP_S);	/* the workers' caches and arenas at size */
	nb = workers_use(before, WORKERS);
	atomic_store(&soak_ok, 0);
	atomic_store(&soak_5xx, 0);
	atomic_store(&soak_other, 0);
	soak_for(secs);
	na = workers_use(after, WORKERS);
	ok = atomic_load(&soak_ok);
	bad = atomic_load(&soak_5xx);
	other = atomic_load(&soak_other);
	fprintf(stderr, "soak: %d s at %d connections: %ld requests (%.0f/s), %ld 5xx, %ld other"
	    " non-2xx\n", secs, SOAK_CONNS, ok + bad + other, (double)(ok + bad + other) / secs,
	    bad, other);
	ck_assert_int_eq(nb, WORKERS);
	ck_assert_int_eq(na, WORKERS);
	for (size_t i = 0; i < WORKERS; i++) {
		fprintf(stderr, "soak: worker %ld: RSS %lld -> %lld KiB, files %d -> %d,"
		    " sockets %d -> %d\n", (long)before[i].pid, before[i].rss_kb,
		    after[i].rss_kb, before[i].files, after[i].files, before[i].sockets,
		    after[i].sockets);
		ck_assert_msg(after[i].pid == before[i].pid, "a worker was replaced during the soak");
		ck_assert_msg(sanitized || after[i].rss_kb - before[i].rss_kb < 1024,
		    "worker %ld grew by %lld KiB", (long)after[i].pid,
		    after[i].rss_kb - before[i].rss_kb);
		ck_assert_msg(after[i].files <= before[i].files, "worker %ld: %d open files,"
		    " was %d", (long)after[i].pid, after[i].files, before[i].files);
		/* the listening socket, the database's, and at most one
		 * connection nginx keeps with the worker between requests */
		ck_assert_msg(after[i].sockets <= before[i].sockets + 1 && after[i].sockets <= 3,
		    "worker %ld: %d sockets, was %d", (long)after[i].pid, after[i].sockets,
		    before[i].sockets);
	}
	ck_assert_msg(bad == 0, "%ld answers 5xx", bad);
	ck_assert_msg(other == 0, "%ld answers neither 2xx nor 5xx", other);
	ck_assert_int_gt(ok, secs * 50);
	free(client);
	free(key);
}
END_TEST

static Suite *
conns_suite(void)
{
	Suite *s = suite_create("faults_conns");
	TCase *tc = tcase_create("conns");

	tcase_add_unchecked_fixture(tc, setup, harness_fixture_stop);
	tcase_add_checked_fixture(tc, harness_fixture_recover, NULL);
	tcase_set_timeout(tc, 240);
	tcase_add_test(tc, idle_and_slow_clients_leave_others_served);
	tcase_add_test(tc, saturation_soak_holds_memory_and_files);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return harness_run_suite(conns_suite());
}
