/*
 * bench/retrieval_bench: retrieval throughput. The e2e
 * harness's stack (PostgreSQL, nginx, bds-api, bds-jobs with --workers jobs
 * workers) and the biller simulator serving --accounts customers over
 * --billers billers with --statements monthly statements each (every
 * statement with its PDF and its payment); as many portal links, made with
 * bds-jobs stopped; then bds-jobs is started and timed until every
 * retrieval is done. Prints a markdown section: bills per second, the
 * simulator's requests and sessions at once, and where the time went —
 * inside the portal's calls (the connector's own clock, summed per link in
 * portal_link_state) against the jobs' whole runs, and against the
 * workers' wall time. A measurement, never an assertion: bench/retrieval
 * runs it (bench/README.md). Also the CPU each part of the stack used in
 * the timed window (cpu_snap), and with --portal-latency-ms N every portal
 * answer is delayed N ms by the simulator (its delay_ms knob on every
 * biller): the share against a portal as slow as a real one.
 *
 * --mode hang (the runner under a black-holed biller): a loopback TCP
 * listener of this process that accepts connections, reads what comes and
 * never answers is a portal biller of the catalog; --hang N links of one
 * client on it are made with bds-jobs stopped, bds-jobs is started, and
 * once their retrievals sit on its sockets (the open connections are
 * counted) another client's --connects M sandbox connects are timed one
 * after another: the POST connect to the session's status connected, as
 * the page sees it (polled every 5 ms) and as the database has it (the
 * connect job's queueing to its done: jobs.created_at to updated_at).
 * portal_timeout_ms is --portal-timeout-ms (60 s: longer than the timed
 * window, so the conversations hang throughout). --hang 0 is the baseline.
 * Every wait is bounded (--connect-timeout-ms per connect).
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <check.h>
#include <json-c/json.h>
#include <libpq-fe.h>

#include "devacct.h"
#include "fleet.h"
#include "harness.h"
#include "sim.h"
#include "stats.h"

static int accounts = 1000, statements = 12, workers = 16, nbillers = 4, limit = 4;
static int latency_ms = 0;
static const char *out_path = "bench/out/retrieval-latest.md";
static const char *mode = "retrieval";
/* --mode hang */
static int nhang = 50, nconnects = 100, connect_timeout_ms = 90000;
static int portal_timeout_ms = 60000;
/* --config 'key = value' lines, appended to the stack's config */
static char extra_conf[2048];

#define SANDBOX_BILLER	"blr_01900000-0000-7000-8000-000000000001"
#define BENCH_BILLER	"blr_01900000-0000-7000-8000-0000000be%03d"

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static long long
sim_total(const char *member)
{
	struct json_object *o, *t, *v;
	long long n = -1;

	if (sim_admin("GET", "/_admin/stats", NULL, &o) != 200)
		return -1;
	if (json_object_object_get_ex(o, "overall", &t) && json_object_object_get_ex(t, member, &v))
		n = json_object_get_int64(v);
	json_object_put(o);
	return n;
}

/* max_concurrent_sessions of the busiest biller */
static long long
sim_max_sessions(void)
{
	struct json_object *o, *b;
	long long m = -1;

	if (sim_admin("GET", "/_admin/stats", NULL, &o) != 200)
		return -1;
	if (json_object_object_get_ex(o, "billers", &b)) {
		json_object_object_foreach(b, k, v) {
			struct json_object *x;

			(void)k;
			if (json_object_object_get_ex(v, "max_concurrent_sessions", &x) &&
			    json_object_get_int64(x) > m)
				m = json_object_get_int64(x);
		}
	}
	json_object_put(o);
	return m;
}


/*
 * The CPU split: utime + stime (and the reaped children's, so a
 * PostgreSQL backend that ended counts in its postmaster) of every process
 * under this one, by class, at the start and the end of the timed window;
 * and the machine's busy time (/proc/stat), so the CPU the rest of the
 * machine used is shown too.
 */
enum cpu_class { CPU_SIM, CPU_PG, CPU_JOBS, CPU_OTHER, CPU__MAX };
static const char *const cpu_class_name[CPU__MAX] = {
	"biller simulator (Python)", "PostgreSQL (all processes)", "bds-jobs (all workers)",
	"the rest of the stack (nginx, bds-api, keepers)"
};

#define CPU_MAXPROC	4096
struct cpu_proc {
	int		 pid, ppid;
	unsigned long long start, ticks;
	enum cpu_class	 cls;
};
struct cpu_snap {
	struct cpu_proc	*p;
	size_t		 n;
	unsigned long long busy, total;	/* machine, ticks */
};

static void
cpu_snap(struct cpu_snap *s)
{
	static struct cpu_proc all[CPU_MAXPROC];
	size_t nall = 0;
	unsigned long long v[10] = { 0 };
	struct dirent *de;
	DIR *d;
	FILE *f;
	int self = (int)getpid();

	s->n = 0;
	s->p = calloc(CPU_MAXPROC, sizeof(*s->p));
	if ((f = fopen("/proc/stat", "r")) != NULL) {
		if (fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0],
		    &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7], &v[8], &v[9]) >= 8) {
			s->total = v[0] + v[1] + v[2] + v[3] + v[4] + v[5] + v[6] + v[7];
			s->busy = s->total - v[3] - v[4];
		}
		fclose(f);
	}
	if ((d = opendir("/proc")) == NULL)
		return;
	while ((de = readdir(d)) != NULL && nall < CPU_MAXPROC) {
		char path[300], buf[1024], comm[64] = "", cmd[512] = "";
		unsigned long long ut, st, cut, cst, start;
		struct cpu_proc *cp = &all[nall];
		char *rp;
		size_t n;
		int ppid;

		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		snprintf(path, sizeof(path), "/proc/%s/stat", de->d_name);
		if ((f = fopen(path, "r")) == NULL)
			continue;
		n = fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
		buf[n] = '\0';
		if ((rp = strrchr(buf, ')')) == NULL || strchr(buf, '(') == NULL)
			continue;
		snprintf(comm, sizeof(comm), "%.*s", (int)(rp - strchr(buf, '(') - 1),
		    strchr(buf, '(') + 1);
		/* state ppid pgrp session tty tpgid flags minflt cminflt majflt
		 * cmajflt utime stime cutime cstime priority nice threads
		 * itrealvalue starttime */
		if (sscanf(rp + 2, "%*c %d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu %llu"
		    " %llu %*d %*d %*d %*d %llu", &ppid, &ut, &st, &cut, &cst, &start) != 6)
			continue;
		snprintf(path, sizeof(path), "/proc/%s/cmdline", de->d_name);
		if ((f = fopen(path, "r")) != NULL) {
			n = fread(cmd, 1, sizeof(cmd) - 1, f);
			fclose(f);
			for (size_t i = 0; i < n; i++)
				if (cmd[i] == '\0')
					cmd[i] = ' ';
			cmd[n] = '\0';
		}
		cp->pid = atoi(de->d_name);
		cp->ppid = ppid;
		cp->start = start;
		cp->ticks = ut + st + cut + cst;
		cp->cls = strstr(cmd, "biller-sim") != NULL ? CPU_SIM :
		    strcmp(comm, "postgres") == 0 || strncmp(cmd, "postgres", 8) == 0 ? CPU_PG :
		    strstr(comm, "bds-jobs") != NULL || strstr(cmd, "bds-jobs") != NULL ?
		    CPU_JOBS : CPU_OTHER;
		nall++;
	}
	closedir(d);
	/* this process's descendants (not itself: its children's reaped time
	 * is the setup's), by a fixed point over the parent links */
	for (int changed = 1; changed;) {
		changed = 0;
		for (size_t i = 0; i < nall; i++) {
			int in = all[i].ppid == self;

			for (size_t j = 0; !in && j < s->n; j++)
				in = s->p[j].pid == all[i].ppid;
			if (!in)
				continue;
			for (size_t j = 0; in && j < s->n; j++)
				if (s->p[j].pid == all[i].pid)
					in = 0;
			if (in) {
				s->p[s->n++] = all[i];
				changed = 1;
			}
		}
	}
}

/* CPU seconds per class between a and b; machine busy seconds. */
static void
cpu_delta(const struct cpu_snap *a, const struct cpu_snap *b, double *cls, double *busy,
    double *total)
{
	double hz = (double)sysconf(_SC_CLK_TCK);

	for (int c = 0; c < CPU__MAX; c++)
		cls[c] = 0;
	for (size_t i = 0; i < b->n; i++) {
		unsigned long long before = 0;

		for (size_t j = 0; j < a->n; j++)
			if (a->p[j].pid == b->p[i].pid && a->p[j].start == b->p[i].start)
				before = a->p[j].ticks;
		cls[b->p[i].cls] += (double)(b->p[i].ticks - before) / hz;
	}
	*busy = (double)(b->busy - a->busy) / hz;
	*total = (double)(b->total - a->total) / hz;
}

/* The stack with conf and the --config lines in its config. */
static void
stack_start(const char *conf)
{
	static char text[4096];
	struct harness_opts o;

	snprintf(text, sizeof(text), "allow_private_targets = 1\n%s%s", conf, extra_conf);
	harness_opts_defaults(&o);
	o.extra_config = text;
	harness_fixture_start(&o);
}

/* n portal billers BENCH_BILLER 1..n into the catalog, at urls[i]. */
static void
catalog_import(int n, char (*urls)[256])
{
	char csv[1024];
	const char *args[] = { "billers", "import", csv, NULL };
	FILE *f;

	snprintf(csv, sizeof(csv), "%s/bench-billers.csv", harness_dir());
	ck_assert_ptr_nonnull(f = fopen(csv, "w"));
	fputs("id,name,type,status,domains,website,login_url,logo_url,country,"
	    "connectivity_types,consent_scopes,capabilities,connector,base_url\n", f);
	for (int i = 0; i < n; i++)
		fprintf(f, BENCH_BILLER ",Bench Power %d,electric,"
		    "ACTIVE,bench%d.example,https://bench%d.example,https://bench%d.example/login,,"
		    "US,credentials,bills|statements|payment_history,"
		    "bills|statements|payment_history,portal,%s\n", i + 1, i + 1, i + 1, i + 1,
		    i + 1, urls[i]);
	ck_assert_int_eq(fclose(f), 0);
	ck_assert_int_eq(harness_bdsctl(args), 0);
}

START_TEST(retrieval)
{
	struct devacct dev;
	struct sim_opts so = { 0 };
	char billers[512] = "", conf[512], *client, (*urls)[256];
	int per = accounts / nbillers;
	double t0, t1, secs, cpu[CPU__MAX], busy, total, ours = 0;
	long long bills, portal_ns, run_ns, reqs, dead;
	struct cpu_snap c0, c1;
	FILE *f;

	for (int i = 0; i < nbillers; i++)
		snprintf(billers + strlen(billers), sizeof(billers) - strlen(billers), "%sb%d",
		    i ? "," : "", i + 1);
	ck_assert_ptr_nonnull(urls = calloc((size_t)nbillers, sizeof(*urls)));
	snprintf(conf, sizeof(conf), "jobs_workers = %d\nbiller_max_sessions = %d\n", workers,
	    limit);
	stack_start(conf);
	so.billers = billers;
	so.customers = per;
	so.statements = statements;
	so.session_ttl = 900;
	so.today = "2026-11-01";
	ck_assert_int_eq(sim_start(&so), 0);
	devacct_legal();
	devacct_new(&dev, "bench");
	client = devacct_client_new(&dev);
	for (int i = 0; i < nbillers; i++)
		sim_base_url(harness_fmt("b%d", i + 1), urls[i], sizeof(urls[i]));
	catalog_import(nbillers, urls);
	ck_assert_int_eq(harness_jobs_stop(), 0);
	for (int i = 0; i < nbillers; i++)
		fleet_links(client, "production", harness_fmt(BENCH_BILLER, i + 1),
		    harness_fmt("bench%d", i + 1), 1, (size_t)per, NULL);
	/* a slower portal: every answer of every biller after this long */
	for (int i = 0; latency_ms > 0 && i < nbillers; i++)
		ck_assert_int_eq(sim_biller_knobs(harness_fmt("b%d", i + 1),
		    harness_fmt("{\"delay_ms\": %d}", latency_ms)), 0);
	ck_assert_int_eq(sim_admin("POST", "/_admin/stats/reset", "{}", NULL), 200);

	cpu_snap(&c0);
	t0 = now_s();
	ck_assert_msg(harness_jobs_start() == 0, "%s", harness_error());
	ck_assert_msg(harness_jobs_wait_settled("retrieval", NULL, 3600 * 1000) == 0, "%s",
	    harness_error());
	t1 = now_s();
	cpu_snap(&c1);
	secs = t1 - t0;
	cpu_delta(&c0, &c1, cpu, &busy, &total);

	bills = devacct_sql_int("SELECT count(*) FROM bills WHERE client_id = $1", client, NULL);
	dead = devacct_sql_int("SELECT count(*) FROM jobs WHERE kind = 'retrieval'"
	    " AND status = 'dead'", NULL, NULL);
	portal_ns = devacct_sql_int("SELECT coalesce(sum(portal_ns), 0) FROM portal_link_state"
	    " WHERE client_id = $1", client, NULL);
	run_ns = devacct_sql_int("SELECT coalesce(sum(run_ns), 0) FROM portal_link_state"
	    " WHERE client_id = $1", client, NULL);
	reqs = sim_total("requests_total");

	ck_assert_ptr_nonnull(f = fopen(out_path, "w"));
	fprintf(f, "### Retrieval throughput\n\n"
	    "- %d simulator accounts over %d portal billers, %d statements each (PDF and"
	    " payment per statement), %d jobs workers, biller_max_sessions %d%s\n\n"
	    "| measure | value |\n|---|---|\n"
	    "| wall time, bds-jobs start to the last retrieval done | %.2f s |\n"
	    "| bills stored | %lld (%lld dead jobs) |\n"
	    "| **bills per second** | **%.0f** |\n"
	    "| links per second | %.1f |\n"
	    "| portal requests (simulator count) | %lld (%.0f/s) |\n"
	    "| most sessions at once on one biller | %lld |\n"
	    "| time inside portal calls ÷ the jobs' runs | %.1f %% |\n"
	    "| **our side within the jobs' runs** | **%.1f %%** |\n"
	    "| our side of the workers' wall time (%d × %.2f s; includes claims,"
	    " commits, deferrals, idle) | %.1f %% |\n",
	    accounts, nbillers, statements, workers, limit,
	    latency_ms > 0 ? harness_fmt(", every portal answer delayed %d ms (the simulator's"
	    " delay_ms: not the goal's figure)", latency_ms) : "", secs, bills, dead,
	    bills / secs, accounts / secs, reqs, reqs / secs, sim_max_sessions(),
	    run_ns > 0 ? 100.0 * portal_ns / run_ns : 0.0,
	    run_ns > 0 ? 100.0 * (run_ns - portal_ns) / run_ns : 0.0,
	    workers, secs, 100.0 * (workers * secs * 1e9 - portal_ns) / (workers * secs * 1e9));
	fprintf(f, "\n| CPU in the timed window | CPU s | ms per bill | %% of the machine |\n"
	    "|---|---:|---:|---:|\n");
	for (int c = 0; c < CPU__MAX; c++) {
		ours += cpu[c];
		fprintf(f, "| %s | %.2f | %.2f | %.1f |\n", cpu_class_name[c], cpu[c],
		    bills > 0 ? 1000.0 * cpu[c] / bills : 0.0, total > 0 ? 100.0 * cpu[c] / total : 0);
	}
	fprintf(f, "| the bench's stack in all | %.2f | %.2f | %.1f |\n", ours,
	    bills > 0 ? 1000.0 * ours / bills : 0.0, total > 0 ? 100.0 * ours / total : 0);
	fprintf(f, "| other CPU (the rest of the machine: other sessions) | %.2f | | %.1f |\n"
	    "| idle | %.2f | | %.1f |\n", busy - ours > 0 ? busy - ours : 0,
	    total > 0 && busy > ours ? 100.0 * (busy - ours) / total : 0, total - busy,
	    total > 0 ? 100.0 * (total - busy) / total : 0);
	fclose(f);
	free(c0.p);
	free(c1.p);
	free(client);
	free(urls);
	sim_stop();
	harness_fixture_stop();
}
END_TEST

/*
 * The black hole: a loopback listener whose thread accepts every
 * connection, reads and drops what the client sends and never answers;
 * a connection the client closed is closed here too, so hole.open is the
 * conversations sitting on it now.
 */
#define HOLE_MAX	512
static struct {
	int		 lfd, port;
	int		 fds[HOLE_MAX];
	int		 nfds;
	volatile int	 stop;
	int		 open, accepted;	/* under mu */
	pthread_mutex_t	 mu;
	pthread_t	 th;
} hole = { .mu = PTHREAD_MUTEX_INITIALIZER };

static void *
hole_run(void *arg)
{
	struct pollfd p[HOLE_MAX + 1];
	char buf[4096];

	(void)arg;
	while (!hole.stop) {
		int n = 0;

		p[n++] = (struct pollfd){ .fd = hole.lfd, .events = POLLIN };
		for (int i = 0; i < hole.nfds; i++)
			p[n++] = (struct pollfd){ .fd = hole.fds[i], .events = POLLIN };
		if (poll(p, (nfds_t)n, 50) <= 0)
			continue;
		/* the clients' ends first: the indices shift as they close */
		for (int i = n - 1; i >= 1; i--) {
			ssize_t got;

			if (p[i].revents == 0)
				continue;
			got = read(p[i].fd, buf, sizeof(buf));
			if (got > 0 || (got < 0 && errno == EINTR))
				continue;
			close(p[i].fd);
			hole.fds[i - 1] = hole.fds[--hole.nfds];
			pthread_mutex_lock(&hole.mu);
			hole.open--;
			pthread_mutex_unlock(&hole.mu);
		}
		if ((p[0].revents & POLLIN) && hole.nfds < HOLE_MAX) {
			int fd = accept(hole.lfd, NULL, NULL);

			if (fd >= 0) {
				hole.fds[hole.nfds++] = fd;
				pthread_mutex_lock(&hole.mu);
				hole.open++;
				hole.accepted++;
				pthread_mutex_unlock(&hole.mu);
			}
		}
	}
	for (int i = 0; i < hole.nfds; i++)
		close(hole.fds[i]);
	return NULL;
}

static void
hole_start(void)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t len = sizeof(sa);

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ck_assert_int_ge(hole.lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), 0);
	ck_assert_int_eq(bind(hole.lfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	ck_assert_int_eq(listen(hole.lfd, 256), 0);
	ck_assert_int_eq(getsockname(hole.lfd, (struct sockaddr *)&sa, &len), 0);
	hole.port = ntohs(sa.sin_port);
	ck_assert_int_eq(pthread_create(&hole.th, NULL, hole_run, NULL), 0);
}

static void
hole_stop(void)
{
	hole.stop = 1;
	pthread_join(hole.th, NULL);
	close(hole.lfd);
}

static int
hole_count(int *accepted)
{
	int n;

	pthread_mutex_lock(&hole.mu);
	n = hole.open;
	if (accepted != NULL)
		*accepted = hole.accepted;
	pthread_mutex_unlock(&hole.mu);
	return n;
}

/* The machine's load averages (1, 5, 15 min) into buf. */
static void
loadavg(char *buf, size_t len)
{
	FILE *f = fopen("/proc/loadavg", "r");
	int sp = 0;

	buf[0] = '\0';
	if (f != NULL) {
		if (fgets(buf, (int)len, f) == NULL)
			buf[0] = '\0';
		fclose(f);
	}
	for (size_t i = 0; buf[i] != '\0'; i++)
		if (buf[i] == ' ' && ++sp == 3)
			buf[i] = '\0';
}

/* Member of a session's answer body, copied. */
static char *
answer(struct harness_resp *r, long status, const char *member)
{
	char *v;

	harness_expect(r, status);
	v = strdup(devacct_str(r, member));
	harness_resp_free(r);
	return v;
}

/* A sandbox link token and a session on it: the session token (malloc'ed). */
static char *
session_open(const char *key, int n)
{
	char *lt, *tk, *st;

	lt = answer(devacct_call("POST", "sandbox", "/v1/link-tokens", devacct_bearer(key),
	    harness_fmt("{\"client_user_id\":\"u-connect-%d\"}", n), NULL), 201, "link_token");
	tk = answer(devacct_call("POST", "sandbox", "/v1/biller-connect/ticket",
	    devacct_bearer(lt), NULL, NULL), 201, "ticket");
	st = answer(devacct_call("POST", "sandbox", "/v1/link-sessions", NULL,
	    harness_fmt("{\"ticket\":\"%s\"}", tk), NULL), 201, "session_token");
	free(lt);
	free(tk);
	return st;
}

/*
 * One sandbox connect of session st, timed: ms from the POST connect to
 * the page reading the status connected; -1 when it never came within
 * connect_timeout_ms, -2 when it ended otherwise.
 */
static double
connect_timed(const char *st)
{
	struct harness_resp *r;
	double t0 = now_s(), ms = -1;
	long long end = harness_now_ms() + connect_timeout_ms;

	r = devacct_call("POST", "sandbox", "/v1/link-sessions/connect", devacct_bearer(st),
	    "{\"biller_id\":\"" SANDBOX_BILLER "\",\"username\":\"user_good\","
	    "\"password\":\"pass_good\"}", NULL);
	harness_expect(r, 202);
	harness_resp_free(r);
	while (harness_now_ms() < end) {
		const char *status;

		r = devacct_call("GET", "sandbox", "/v1/link-sessions/current",
		    devacct_bearer(st), NULL, NULL);
		harness_expect(r, 200);
		status = devacct_str(r, "status");
		if (strcmp(status, "connecting") != 0) {
			ms = strcmp(status, "connected") == 0 ? (now_s() - t0) * 1000 : -2;
			harness_resp_free(r);
			break;
		}
		harness_resp_free(r);
		harness_sleep_ms(5);
	}
	return ms;
}

static void
print_pcts(FILE *f, const char *what, double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	fprintf(f, "| %s | %d | %.0f | %.0f | %.0f | %.0f |\n", what, n, pct(v, n, 0.50),
	    pct(v, n, 0.95), pct(v, n, 0.99), n > 0 ? v[n - 1] : 0.0);
}

START_TEST(hang)
{
	struct devacct dev;
	char conf[512], url[1][256], *holder, *other, *key, la0[64], la1[64];
	double *client_ms, *server_ms, t0, secs;
	int in0, in1, acc0, acc1, ok = 0, lost = 0, other_end = 0, nserver;
	long long end, grew;
	PGresult *res;
	FILE *f;

	ck_assert_ptr_nonnull(client_ms = calloc((size_t)nconnects + 1, sizeof(double)));
	ck_assert_ptr_nonnull(server_ms = calloc((size_t)nconnects + 1, sizeof(double)));
	hole_start();
	snprintf(conf, sizeof(conf), "jobs_workers = %d\nbiller_max_sessions = %d\n"
	    "portal_timeout_ms = %d\n", workers, limit, portal_timeout_ms);
	stack_start(conf);
	snprintf(url[0], sizeof(url[0]), "http://127.0.0.1:%d/b/hole", hole.port);
	catalog_import(1, url);
	devacct_legal();
	devacct_new(&dev, "bench");
	holder = devacct_client_new(&dev);
	other = devacct_client_new(&dev);
	key = devacct_key_new(&dev, other, "sandbox");
	ck_assert_int_eq(harness_jobs_stop(), 0);
	if (nhang > 0)
		fleet_links(holder, "production", harness_fmt(BENCH_BILLER, 1), "hole", 1,
		    (size_t)nhang, NULL);
	ck_assert_msg(harness_jobs_start() == 0, "%s", harness_error());
	/* the retrievals on the hole's sockets: all of them, or as many as
	 * the runner puts there (no new one for 3 s), within 60 s */
	for (end = harness_now_ms() + 60000, grew = harness_now_ms(), in0 = 0;
	    nhang > 0 && in0 < nhang && harness_now_ms() < end &&
	    (in0 == 0 || harness_now_ms() - grew < 3000);) {
		int n = hole_count(NULL);

		if (n > in0) {
			in0 = n;
			grew = harness_now_ms();
		}
		harness_sleep_ms(20);
	}
	in0 = hole_count(&acc0);
	loadavg(la0, sizeof(la0));
	t0 = now_s();
	for (int i = 0; i < nconnects; i++) {
		char *st = session_open(key, i);
		double ms = connect_timed(st);

		free(st);
		if (ms >= 0)
			client_ms[ok++] = ms;
		else if (ms == -1)
			lost++;
		else
			other_end++;
	}
	secs = now_s() - t0;
	in1 = hole_count(&acc1);
	loadavg(la1, sizeof(la1));
	res = PQexecParams(devacct_pg(), "SELECT extract(epoch FROM updated_at - created_at)"
	    " * 1000 FROM jobs WHERE kind = 'connect' AND client_id = $1 AND status = 'done'",
	    1, NULL, (const char *const[]){ other }, NULL, NULL, 0);
	ck_assert_int_eq(PQresultStatus(res), PGRES_TUPLES_OK);
	nserver = PQntuples(res) < nconnects ? PQntuples(res) : nconnects;
	for (int i = 0; i < nserver; i++)
		server_ms[i] = atof(PQgetvalue(res, i, 0));
	PQclear(res);

	ck_assert_ptr_nonnull(f = fopen(out_path, "w"));
	fprintf(f, "### Sandbox connects while conversations hang on a black-holed biller\n\n"
	    "- %d links of one client on a portal biller whose base_url is a loopback listener"
	    " that accepts and never answers; %d jobs workers, biller_max_sessions %d,"
	    " portal_timeout_ms %d%s%s\n"
	    "- %d sandbox connects of another client, one after another\n\n"
	    "| measure | value |\n|---|---|\n"
	    "| conversations on the black hole when the connects began (accepted so far) |"
	    " %d (%d) |\n"
	    "| conversations on the black hole when they ended (accepted so far) | %d (%d) |\n"
	    "| connects that reached connected / never did within %d ms / ended otherwise |"
	    " %d / %d / %d |\n"
	    "| the connects' window | %.1f s |\n"
	    "| load average at its start / end | %s / %s |\n\n"
	    "| connect → connected, ms | n | p50 | p95 | p99 | max |\n|---|---:|---:|---:|---:|---:|\n",
	    nhang, workers, limit, portal_timeout_ms, *extra_conf ? "; config also: " : "",
	    *extra_conf ? harness_fmt("%.*s", (int)strlen(extra_conf) - 1, extra_conf) : "",
	    nconnects, in0, acc0, in1, acc1, connect_timeout_ms, ok, lost, other_end, secs, la0,
	    la1);
	print_pcts(f, "the page (POST connect → GET current says connected, polled every 5 ms)",
	    client_ms, ok);
	print_pcts(f, "the database (connect job queued → done: jobs.created_at → updated_at)",
	    server_ms, nserver);
	fclose(f);
	/* the hanging jobs would hold a SIGTERM up to portal_timeout_ms */
	ck_assert_int_eq(harness_jobs_kill(), 0);
	hole_stop();
	free(client_ms);
	free(server_ms);
	free(holder);
	free(other);
	free(key);
	harness_fixture_stop();
}
END_TEST

int
main(int argc, char **argv)
{
	Suite *s = suite_create("bench_retrieval");
	TCase *tc = tcase_create("retrieval");
	SRunner *sr;
	int failed;

	for (int i = 1; i + 1 < argc; i += 2) {
		if (strcmp(argv[i], "--accounts") == 0)
			accounts = atoi(argv[i + 1]);
		else if (strcmp(argv[i], "--statements") == 0)
			statements = atoi(argv[i + 1]);
		else if (strcmp(argv[i], "--workers") == 0)
			workers = atoi(argv[i + 1]);
		else if (strcmp(argv[i], "--billers") == 0)
			nbillers = atoi(argv[i + 1]);
		else if (strcmp(argv[i], "--limit") == 0)
			limit = atoi(argv[i + 1]);
		else if (strcmp(argv[i], "--portal-latency-ms") == 0)
			latency_ms = atoi(argv[i + 1]);
		else if (strcmp(argv[i], "--out") == 0)
			out_path = argv[i + 1];
		else if (strcmp(argv[i], "--mode") == 0)
			mode = argv[i + 1];
		else if (strcmp(argv[i], "--hang") == 0)
			nhang = atoi(argv[i + 1]);
		else if (strcmp(argv[i], "--connects") == 0)
			nconnects = atoi(argv[i + 1]);
		else if (strcmp(argv[i], "--connect-timeout-ms") == 0)
			connect_timeout_ms = atoi(argv[i + 1]);
		else if (strcmp(argv[i], "--portal-timeout-ms") == 0)
			portal_timeout_ms = atoi(argv[i + 1]);
		else if (strcmp(argv[i], "--config") == 0)
			snprintf(extra_conf + strlen(extra_conf), sizeof(extra_conf) -
			    strlen(extra_conf), "%s\n", argv[i + 1]);
	}
	if (strcmp(mode, "hang") == 0) {
		if (nhang < 0 || nhang > HOLE_MAX || nconnects < 1 || nconnects > 10000) {
			fprintf(stderr, "retrieval_bench: --hang 0..%d, --connects 1..10000\n",
			    HOLE_MAX);
			return 2;
		}
		tcase_add_test(tc, hang);
	} else if (strcmp(mode, "retrieval") == 0) {
		tcase_add_test(tc, retrieval);
	} else {
		fprintf(stderr, "retrieval_bench: --mode retrieval or hang\n");
		return 2;
	}
	if (strcmp(mode, "retrieval") == 0 &&
	    (accounts < 1 || nbillers < 1 || nbillers > 99 || accounts % nbillers != 0)) {
		fprintf(stderr, "retrieval_bench: --accounts must be a multiple of --billers\n");
		return 2;
	}
	tcase_set_timeout(tc, 3600);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_set_fork_status(sr, CK_NOFORK);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? 0 : 1;
}
