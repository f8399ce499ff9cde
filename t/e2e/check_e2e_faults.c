/*
 * The process model under faults, end to end: a worker killed mid-request
 * is replaced; PostgreSQL going away is a 503 and coming back heals without
 * a restart; SIGTERM lets the request in flight finish; SIGHUP re-executes
 * the program at its path (a new binary) and replaces every worker under
 * load with no failed request. nginx keeps its FastCGI connections, and
 * idle kept connections hold no worker. One stack for the suite
 * (2 workers); each test starts from a healthy stack (checked fixture), and
 * the SIGTERM test, which ends bds-api, runs last.
 */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <check.h>
#include <curl/curl.h>

#include "devacct.h"
#include "harness.h"

#define WORKERS		2
#define DRAIN_TIMEOUT	5	/* seconds */

static void
setup(void)
{
	struct harness_opts o;

	harness_opts_defaults(&o);
	o.workers = WORKERS;
	o.drain_timeout = DRAIN_TIMEOUT;
	harness_fixture_start(&o);
}

/* Open a raw FastCGI request for GET /v1/health and send only the first
 * half of its params: the worker that accepted it now holds it. */
static struct harness_fcgi *
hold_request(void)
{
	struct harness_fcgi *f = harness_fcgi_open();

	ck_assert_msg(f != NULL, "%s", harness_error());
	harness_fcgi_params_std(f, "GET", "/v1/health", NULL, 0);
	ck_assert_int_eq(harness_fcgi_send_params(f, harness_fcgi_params_pending(f) / 2), 0);
	harness_sleep_ms(200);		/* let an idle worker accept it */
	return f;
}

/*
 * The connections open to bds-api's socket: their accepted ends carry the
 * socket's path in /proc/net/unix, state 03 (connected; the listening
 * socket is 01). Up to max inodes into ino; returns how many there are.
 */
static size_t
app_connections(unsigned long *ino, size_t max)
{
	FILE *fp = fopen("/proc/net/unix", "r");
	char line[4200], path[4096];
	unsigned long inode;
	unsigned st;
	size_t n = 0;

	ck_assert_ptr_nonnull(fp);
	while (fgets(line, sizeof(line), fp) != NULL)
		if (sscanf(line, "%*s %*s %*s %*s %*s %x %lu %4095s", &st, &inode, path) == 3 &&
		    st == 3 && strcmp(path, harness_socket_path()) == 0) {
			if (n < max)
				ino[n] = inode;
			n++;
		}
	fclose(fp);
	return n;
}

static int
ino_in(unsigned long ino, const unsigned long *set, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (set[i] == ino)
			return 1;
	return 0;
}

/* GET /v1/health/live on a raw FastCGI connection asking to be kept. */
static void
kept_request(struct harness_fcgi *f)
{
	struct harness_resp *r;

	harness_fcgi_next(f);
	harness_fcgi_keep_conn(f, 1);
	harness_fcgi_params_std(f, "GET", "/v1/health/live", NULL, 0);
	ck_assert_msg(harness_fcgi_end_params(f) == 0, "%s", harness_error());
	ck_assert_msg(harness_fcgi_send_stdin(f, NULL, 0) == 0, "%s", harness_error());
	r = harness_fcgi_read(f, 5000);
	ck_assert_msg(r->fcgi_complete, "no complete response: %s", r->error);
	harness_assert_status(r, 200);
	harness_resp_free(r);
}

static int
pid_in(pid_t p, const pid_t *set, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (set[i] == p)
			return 1;
	return 0;
}

/* ------------------------------------------------------------------ */

START_TEST(worker_killed_mid_request_is_respawned)
{
	pid_t master = harness_api_pid(), old[WORKERS], now[WORKERS];
	struct harness_fcgi *f;
	struct harness_resp *r;
	long long t0;
	size_t i;

	ck_assert_uint_eq(harness_api_workers(old, WORKERS), WORKERS);
	f = hold_request();
	t0 = harness_now_ms();
	for (i = 0; i < WORKERS; i++)
		ck_assert_int_eq(kill(old[i], SIGKILL), 0);

	/* the held request died with its worker: no response, just EOF */
	r = harness_fcgi_read(f, 2000);
	ck_assert_msg(!r->fcgi_complete, "held request completed: %s", r->fcgi_raw);
	ck_assert_msg(r->fcgi_closed, "held connection not closed: %s", r->error);
	harness_resp_free(r);
	harness_fcgi_close(f);

	ck_assert_msg(harness_api_wait_workers(WORKERS, old, WORKERS,
	    (int)(t0 + 2000 - harness_now_ms())) == 0, "%s", harness_error());
	ck_assert_int_eq(harness_api_pid(), master);
	ck_assert_uint_eq(harness_api_workers(now, WORKERS), WORKERS);
	for (i = 0; i < WORKERS; i++)
		ck_assert_msg(!pid_in(now[i], old, WORKERS), "worker %d not replaced", (int)now[i]);

	r = harness_get("api", "/v1/health");
	harness_assert_status(r, 200);
	ck_assert_pstr_eq(harness_json_string(r, "status"), "ok");
	harness_resp_free(r);
}
END_TEST

/*
 * nginx keeps its connections to bds-api (fastcgi_keep_conn on, upstream
 * keepalive): 50 requests one after another each leave a connection open,
 * and they use only a few new connections between them.
 */
START_TEST(nginx_keeps_connections)
{
	unsigned long before[256], now[256], fresh[256];
	size_t nbefore = app_connections(before, 256), nfresh = 0;

	ck_assert_uint_le(nbefore, 256);
	for (int i = 0; i < 50; i++) {
		struct harness_resp *r = harness_get("api", "/v1/health/live");
		size_t n;

		harness_assert_status(r, 200);
		harness_resp_free(r);
		n = app_connections(now, 256);
		ck_assert_msg(n > 0, "no connection open after request %d", i + 1);
		ck_assert_uint_le(n, 256);
		for (size_t j = 0; j < n; j++)
			if (!ino_in(now[j], before, nbefore) && !ino_in(now[j], fresh, nfresh) &&
			    nfresh < 256)
				fresh[nfresh++] = now[j];
	}
	ck_assert_msg(nfresh <= 4, "%zu new connections for 50 requests", nfresh);
}
END_TEST

/*
 * A worker holds at most one connection, so an idle kept connection holds
 * no worker and no request waits behind another on one worker: 3 × WORKERS
 * raw FastCGI connections asking to be kept are each answered (a plain
 * libfcgi loop would wait on the first WORKERS for their next request and
 * never accept the rest), at most WORKERS of them stay open (a worker
 * taking a new connection closes its idle one: nginx sends a read it had
 * written on it again), and nginx's requests pass meanwhile.
 */
START_TEST(idle_kept_connections_hold_no_worker)
{
	struct harness_fcgi *f[3 * WORKERS];
	struct harness_resp *r;
	int i, n = 3 * WORKERS, open = 0;

	for (i = 0; i < n; i++) {
		f[i] = harness_fcgi_open();
		ck_assert_msg(f[i] != NULL, "%s", harness_error());
		kept_request(f[i]);
	}
	r = harness_get("api", "/v1/health/live");
	harness_assert_status(r, 200);
	harness_resp_free(r);
	for (i = 0; i < n; i++) {
		r = harness_fcgi_read(f[i], 200);
		if (!r->fcgi_closed)
			open++;
		harness_resp_free(r);
	}
	ck_assert_msg(open <= WORKERS, "%d of %d kept connections open with %d workers",
	    open, n, WORKERS);
	ck_assert_uint_le(app_connections(NULL, 0), WORKERS);
	for (i = 0; i < n; i++)
		harness_fcgi_close(f[i]);
	r = harness_get("api", "/v1/health/live");
	harness_assert_status(r, 200);
	harness_resp_free(r);
}
END_TEST

START_TEST(database_down_is_503_then_heals)
{
	pid_t master = harness_api_pid(), before[WORKERS], after[WORKERS];
	struct harness_resp *r;
	long long t0;
	long status = 0;
	int i, ok_run;

	ck_assert_uint_eq(harness_api_workers(before, WORKERS), WORKERS);
	ck_assert_msg(harness_pg_stop() == 0, "%s", harness_error());
	t0 = harness_now_ms();

	/* within 1 s of the stop: 503, from every worker in turn */
	do {
		r = harness_get("api", "/v1/health");
		status = r->status;
		if (status != 503)
			harness_resp_free(r);
		else
			break;
		harness_sleep_ms(20);
	} while (harness_now_ms() - t0 < 1000);
	ck_assert_msg(status == 503, "health is %ld, not 503, 1 s after the stop", status);
	harness_assert_coded(r, 503, "SERVICE_UNAVAILABLE");
	ck_assert_pstr_ne(harness_json_string(r, "status"), "ok");
	ck_assert_pstr_eq(harness_json_string(r, "database"), "unavailable");
	harness_resp_free(r);
	for (i = 0; i < 4 * WORKERS; i++) {
		r = harness_get("api", "/v1/health");
		harness_assert_coded(r, 503, "SERVICE_UNAVAILABLE");
		harness_resp_free(r);
	}
	ck_assert_int_lt(harness_now_ms() - t0, 1000);

	/* liveness does not touch the database */
	r = harness_get("api", "/v1/health/live");
	harness_assert_status(r, 200);
	ck_assert_pstr_eq(harness_json_string(r, "status"), "ok");
	harness_resp_free(r);

	/* back within 5 s, without restarting anything: 2N 200s in a row
	 * through nginx, then a 200 from each worker */
	ck_assert_msg(harness_pg_start() == 0, "%s", harness_error());
	t0 = harness_now_ms();
	ok_run = 0;
	while (ok_run < 2 * WORKERS && harness_now_ms() - t0 < 5000) {
		r = harness_get("api", "/v1/health");
		ok_run = r->status == 200 ? ok_run + 1 : 0;
		harness_resp_free(r);
		if (ok_run == 0)
			harness_sleep_ms(20);
	}
	ck_assert_msg(ok_run >= 2 * WORKERS, "health not steadily 200 within 5 s of the restart");
	/* and every worker itself, not only those nginx happened to use */
	ck_assert_msg(harness_wait_workers_healthy((int)(t0 + 5000 - harness_now_ms())) == 0,
	    "%s", harness_error());
	ck_assert_int_eq(harness_api_pid(), master);
	ck_assert_uint_eq(harness_api_workers(after, WORKERS), WORKERS);
	for (i = 0; i < WORKERS; i++)
		ck_assert_msg(after[i] == before[i], "worker %d was replaced by %d",
		    (int)before[i], (int)after[i]);
}
END_TEST

/* Make the server read-only for every session but the test's own (on), or
 * writable again (off): what a demoted primary is to the workers still
 * connected to it. */
static void
server_read_only(int on)
{
	devacct_sql_exec("SET default_transaction_read_only = off", NULL, NULL);
	devacct_sql_exec(on ? "ALTER SYSTEM SET default_transaction_read_only = on" :
	    "ALTER SYSTEM RESET default_transaction_read_only", NULL, NULL);
	devacct_sql_exec("SELECT pg_reload_conf()", NULL, NULL);
	harness_sleep_ms(300);	/* every backend has taken the reload */
}

static struct harness_resp *
client_create(const struct devacct *d)
{
	return devacct_jwt(d, "POST", "/v1/iam/clients", "{\"name\":\"Read-only probe\"}", NULL);
}

/*
 * A server that answers but refuses writes (SQLSTATE 25006, as a primary
 * demoted by a failover does) is the database unavailable: a write answers
 * 503 in the envelope, from every worker, never a 500; the workers drop
 * that connection, and once the server takes writes again the next write
 * succeeds without a restart.
 */
START_TEST(read_only_server_is_503_then_heals)
{
	struct harness_resp *r;
	struct devacct d;
	long long t0;
	long status = 0;
	int i;

	devacct_legal();
	devacct_new(&d, "ro");
	server_read_only(1);
	for (i = 0; i < 2 * WORKERS; i++) {
		r = client_create(&d);
		harness_assert_coded(r, 503, "SERVICE_UNAVAILABLE");
		ck_assert_ptr_nonnull(harness_header(r, "Retry-After"));
		harness_resp_free(r);
	}
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM clients WHERE user_id = $1",
	    d.user_id, NULL), 1);
	server_read_only(0);
	t0 = harness_now_ms();
	do {
		r = client_create(&d);
		status = r->status;
		harness_resp_free(r);
		if (status != 201)
			harness_sleep_ms(50);
	} while (status != 201 && harness_now_ms() - t0 < 5000);
	ck_assert_msg(status == 201, "a write is %ld, not 201, 5 s after the server took writes again",
	    status);
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM clients WHERE user_id = $1",
	    d.user_id, NULL), 2);
}
END_TEST

/*
 * Bounded load: LOAD_THREADS clients GET /v1/health through nginx until
 * told to stop, LOAD_MAX requests or LOAD_MS, whichever comes first.
 */
#define LOAD_THREADS	4
#define LOAD_MAX	3000
#define LOAD_MS		8000

struct load {
	atomic_int	 stop;
	atomic_int	 total;
	atomic_int	 failed;
	atomic_int	 after_hup;	/* requests begun after the second SIGHUP */
	atomic_int	 hup_done;
	char		 first_failure[512];
	pthread_mutex_t	 mu;
	char		 url[128];
	long long	 end;
};

static size_t
discard(char *p, size_t size, size_t n, void *arg)
{
	return size * n;
}

static void *
load_thread(void *arg)
{
	struct load *l = arg;
	CURL *c = curl_easy_init();

	if (c == NULL) {
		atomic_fetch_add(&l->failed, 1);
		return NULL;
	}
	curl_easy_setopt(c, CURLOPT_URL, l->url);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_PROXY, "");
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, 10000L);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, discard);
	while (!atomic_load(&l->stop) && harness_now_ms() < l->end &&
	    atomic_fetch_add(&l->total, 1) < LOAD_MAX) {
		long status = 0;
		int after = atomic_load(&l->hup_done);
		CURLcode rc = curl_easy_perform(c);

		if (after)
			atomic_fetch_add(&l->after_hup, 1);
		if (rc == CURLE_OK)
			curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
		if (rc != CURLE_OK || status != 200) {
			pthread_mutex_lock(&l->mu);
			if (atomic_fetch_add(&l->failed, 1) == 0)
				snprintf(l->first_failure, sizeof(l->first_failure),
				    "status %ld, curl: %s", status, curl_easy_strerror(rc));
			pthread_mutex_unlock(&l->mu);
		}
		harness_sleep_ms(2);	/* spread LOAD_MAX over the reloads */
	}
	curl_easy_cleanup(c);
	return NULL;
}

/* LOAD_THREADS clients on /v1/health until load_finish. */
static struct load *
load_start(pthread_t th[LOAD_THREADS])
{
	struct load *l = calloc(1, sizeof(*l));

	ck_assert_ptr_nonnull(l);
	pthread_mutex_init(&l->mu, NULL);
	snprintf(l->url, sizeof(l->url), "%s/v1/health", harness_base_url("api"));
	l->end = harness_now_ms() + LOAD_MS;
	for (int i = 0; i < LOAD_THREADS; i++)
		ck_assert_int_eq(pthread_create(&th[i], NULL, load_thread, l), 0);
	harness_sleep_ms(300);
	return l;
}

/* Stop the load (after a little more on the new workers): none failed,
 * some ran after the signals, and it was a load. */
static void
load_finish(struct load *l, pthread_t th[LOAD_THREADS])
{
	int total;

	harness_sleep_ms(300);
	atomic_store(&l->stop, 1);
	for (int i = 0; i < LOAD_THREADS; i++)
		pthread_join(th[i], NULL);
	total = atomic_load(&l->total);
	ck_assert_msg(atomic_load(&l->failed) == 0, "%d of %d requests failed; first: %s",
	    atomic_load(&l->failed), total, l->first_failure);
	ck_assert_msg(atomic_load(&l->after_hup) > 0, "no load after the last SIGHUP");
	ck_assert_msg(total >= 100, "only %d requests: not a load", total);
	pthread_mutex_destroy(&l->mu);
	free(l);
}

START_TEST(sighup_under_load_fails_nothing)
{
	pid_t master = harness_api_pid(), old[WORKERS], now[WORKERS];
	pthread_t th[LOAD_THREADS];
	struct harness_fcgi *idle;
	struct harness_resp *r;
	struct load *l;
	int i, replaced;

	ck_assert_uint_eq(harness_api_workers(old, WORKERS), WORKERS);
	idle = harness_fcgi_open();
	ck_assert_msg(idle != NULL, "%s", harness_error());
	kept_request(idle);
	l = load_start(th);
	/* the load runs on kept connections: the reload must close them */
	ck_assert_msg(app_connections(NULL, 0) >= 1, "no connection kept under load");
	ck_assert_msg(harness_api_signal(SIGHUP) == 0, "%s", harness_error());
	harness_sleep_ms(1000);
	ck_assert_msg(harness_api_signal(SIGHUP) == 0, "%s", harness_error());
	atomic_store(&l->hup_done, 1);
	replaced = harness_api_wait_workers(WORKERS, old, WORKERS, 10000);
	load_finish(l, th);

	ck_assert_msg(replaced == 0, "workers not all replaced within 10 s of the SIGHUPs");
	/* the idle kept connection was closed by its worker, which exited */
	r = harness_fcgi_read(idle, 2000);
	ck_assert_msg(r->fcgi_closed && !r->fcgi_complete, "idle kept connection: %s",
	    r->error);
	harness_resp_free(r);
	harness_fcgi_close(idle);
	ck_assert_int_eq(harness_api_pid(), master);
	ck_assert_uint_eq(harness_api_workers(now, WORKERS), WORKERS);
	for (i = 0; i < WORKERS; i++)
		ck_assert_msg(!pid_in(now[i], old, WORKERS), "worker %d not replaced", (int)now[i]);
}
END_TEST

/* The inode of the program a process runs. */
static ino_t
exe_ino(pid_t pid)
{
	struct stat st;

	ck_assert_int_eq(stat(harness_fmt("/proc/%d/exe", (int)pid), &st), 0);
	return st.st_ino;
}

/*
 * Binary upgrade: the file at bds-api's path is replaced (a byte-identical
 * copy renamed over it, so other suites sharing the build are unaffected:
 * what counts is the new inode); SIGHUP under load; no request fails, the
 * master keeps its pid and socket, and it and every worker now run the
 * new file.
 */
START_TEST(sighup_execs_new_binary)
{
	pid_t master = harness_api_pid(), old[WORKERS], now[WORKERS];
	pthread_t th[LOAD_THREADS];
	char bin[4096], tmp[4200];
	struct stat st;
	struct load *l;
	ssize_t n;
	ino_t before;

	ck_assert_uint_eq(harness_api_workers(old, WORKERS), WORKERS);
	n = readlink(harness_fmt("/proc/%d/exe", (int)master), bin, sizeof(bin) - 1);
	ck_assert_int_gt(n, 0);
	bin[n] = '\0';
	ck_assert_msg(strstr(bin, " (deleted)") == NULL, "%s", bin);
	before = exe_ino(master);
	snprintf(tmp, sizeof(tmp), "%s.upgrade-%d", bin, (int)getpid());
	ck_assert_int_eq(system(harness_fmt("cp -p '%s' '%s'", bin, tmp)), 0);
	ck_assert_int_eq(rename(tmp, bin), 0);
	ck_assert_int_eq(stat(bin, &st), 0);
	ck_assert(st.st_ino != before);
	ck_assert(exe_ino(master) == before);

	l = load_start(th);
	ck_assert_msg(harness_api_signal(SIGHUP) == 0, "%s", harness_error());
	atomic_store(&l->hup_done, 1);
	ck_assert_msg(harness_api_wait_workers(WORKERS, old, WORKERS, 10000) == 0,
	    "workers not all replaced within 10 s of SIGHUP");
	load_finish(l, th);

	ck_assert_int_eq(harness_api_pid(), master);
	ck_assert_msg(exe_ino(master) == st.st_ino, "the master still runs the old file");
	ck_assert_uint_eq(harness_api_workers(now, WORKERS), WORKERS);
	for (int i = 0; i < WORKERS; i++) {
		ck_assert_msg(!pid_in(now[i], old, WORKERS), "worker %d not replaced", (int)now[i]);
		ck_assert_msg(exe_ino(now[i]) == st.st_ino, "worker %d runs the old file",
		    (int)now[i]);
	}
}
END_TEST

/* Last: SIGTERM with a request held in a worker; the request completes,
 * then the master exits 0 within drain_timeout and removes its socket. */
START_TEST(sigterm_drains_request_in_flight)
{
	pid_t master = harness_api_pid();
	struct harness_fcgi *f = hold_request();
	struct harness_resp *r;
	long long t0;
	int st = -1, gone;

	ck_assert_msg(harness_api_signal(SIGTERM) == 0, "%s", harness_error());
	t0 = harness_now_ms();
	harness_sleep_ms(200);
	ck_assert_msg(harness_api_pid() != 0, "master exited before the request completed");

	ck_assert_int_eq(harness_fcgi_end_params(f), 0);
	ck_assert_int_eq(harness_fcgi_send_stdin(f, NULL, 0), 0);
	r = harness_fcgi_read(f, 5000);
	ck_assert_msg(r->fcgi_complete, "no complete response: %s (%zu bytes: %.300s)",
	    r->error, r->fcgi_raw_len, r->fcgi_raw);
	harness_assert_status(r, 200);
	harness_assert_common(r);
	ck_assert_pstr_eq(harness_json_string(r, "status"), "ok");
	ck_assert_pstr_eq(harness_header(r, "X-Request-Id"), harness_fcgi_request_id(f));
	harness_resp_free(r);
	harness_fcgi_close(f);

	ck_assert_msg(harness_api_wait_exit((int)(t0 + DRAIN_TIMEOUT * 1000 + 500 -
	    harness_now_ms()), &st) == 0, "%s", harness_error());
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "master ended with status %s %d",
	    WIFEXITED(st) ? "exit" : "signal", WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
	ck_assert_msg(access(harness_socket_path(), F_OK) == -1, "socket %s still there",
	    harness_socket_path());

	/* and no worker outlives it (the master's process group is empty) */
	t0 = harness_now_ms();
	while (!(gone = killpg(master, 0) == -1) && harness_now_ms() - t0 < 1000)
		harness_sleep_ms(10);
	ck_assert_msg(gone, "processes of bds-api's group %d outlive the master", (int)master);
}
END_TEST

static Suite *
faults_suite(void)
{
	Suite *s = suite_create("e2e_faults");
	TCase *tc = tcase_create("faults");

	tcase_add_unchecked_fixture(tc, setup, harness_fixture_stop);
	tcase_add_checked_fixture(tc, harness_fixture_recover, NULL);
	tcase_set_timeout(tc, 90);
	tcase_add_test(tc, worker_killed_mid_request_is_respawned);
	tcase_add_test(tc, nginx_keeps_connections);
	tcase_add_test(tc, idle_kept_connections_hold_no_worker);
	tcase_add_test(tc, database_down_is_503_then_heals);
	tcase_add_test(tc, read_only_server_is_503_then_heals);
	tcase_add_test(tc, sighup_under_load_fails_nothing);
	tcase_add_test(tc, sighup_execs_new_binary);
	tcase_add_test(tc, sigterm_drains_request_in_flight);	/* last: ends bds-api */
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return harness_run_suite(faults_suite());
}
