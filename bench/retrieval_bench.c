/*
 * bench/retrieval_bench: retrieval throughput (issue 12). The e2e
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
 */
#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <check.h>
#include <json-c/json.h>

#include "devacct.h"
#include "fleet.h"
#include "harness.h"
#include "sim.h"

static int accounts = 1000, statements = 12, workers = 16, nbillers = 4, limit = 4;
static int latency_ms = 0;
static const char *out_path = "bench/out/retrieval-latest.md";

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

START_TEST(retrieval)
{
	struct devacct dev;
	struct harness_opts o;
	struct sim_opts so = { 0 };
	char billers[256] = "", csv[1024], base[256], conf[512], *client;
	const char *args[] = { "billers", "import", csv, NULL };
	int per = accounts / nbillers;
	double t0, t1, secs, cpu[CPU__MAX], busy, total, ours = 0;
	long long bills, portal_ns, run_ns, reqs, dead;
	struct cpu_snap c0, c1;
	FILE *f;

	for (int i = 0; i < nbillers; i++)
		snprintf(billers + strlen(billers), sizeof(billers) - strlen(billers), "%sb%d",
		    i ? "," : "", i + 1);
	snprintf(conf, sizeof(conf), "allow_private_targets = 1\njobs_workers = %d\n"
	    "biller_max_sessions = %d\n", workers, limit);
	harness_opts_defaults(&o);
	o.extra_config = conf;
	harness_fixture_start(&o);
	so.billers = billers;
	so.customers = per;
	so.statements = statements;
	so.session_ttl = 900;
	so.today = "2026-11-01";
	ck_assert_int_eq(sim_start(&so), 0);
	devacct_legal();
	devacct_new(&dev, "bench");
	client = devacct_client_new(&dev);
	snprintf(csv, sizeof(csv), "%s/bench-billers.csv", harness_dir());
	ck_assert_ptr_nonnull(f = fopen(csv, "w"));
	fputs("id,name,type,status,domains,website,login_url,logo_url,country,"
	    "connectivity_types,consent_scopes,capabilities,connector,base_url\n", f);
	for (int i = 0; i < nbillers; i++)
		fprintf(f, "blr_01900000-0000-7000-8000-0000000be%03d,Bench Power %d,electric,"
		    "ACTIVE,bench%d.example,https://bench%d.example,https://bench%d.example/login,,"
		    "US,credentials,bills|statements|payment_history,"
		    "bills|statements|payment_history,portal,%s\n", i + 1, i + 1, i + 1, i + 1,
		    i + 1, sim_base_url(harness_fmt("b%d", i + 1), base, sizeof(base)));
	ck_assert_int_eq(fclose(f), 0);
	ck_assert_int_eq(harness_bdsctl(args), 0);
	ck_assert_int_eq(harness_jobs_stop(), 0);
	for (int i = 0; i < nbillers; i++)
		fleet_links(client, "production",
		    harness_fmt("blr_01900000-0000-7000-8000-0000000be%03d", i + 1),
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
	sim_stop();
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
	}
	if (accounts < 1 || nbillers < 1 || nbillers > 99 || accounts % nbillers != 0) {
		fprintf(stderr, "retrieval_bench: --accounts must be a multiple of --billers\n");
		return 2;
	}
	tcase_set_timeout(tc, 3600);
	tcase_add_test(tc, retrieval);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_set_fork_status(sr, CK_NOFORK);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? 0 : 1;
}
