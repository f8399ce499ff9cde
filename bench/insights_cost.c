/*
 * bench/insights_cost: what one run of the insights engine costs per bill
 * change. The e2e harness's stack; --links N sandbox account links of one
 * client (mostly user_good and user_insights, a few user_multi, two
 * user_many), each of its own client user, retrieved by bds-jobs, whose
 * insights runs the bill writes queue run too. Then bds-jobs is stopped and
 * this process runs the engine itself, as bds-jobs' apply does: its own
 * connection, a synthetic request (req_init), a fresh arena per run.
 *
 * Each of --runs M iterations: one link at random gets ONE bill change the
 * way the service makes it (bills_status_move, in a transaction of its own:
 * the newest bill of one of its accounts marked paid as mark-paid does, or
 * reverted to PENDING as `bdsctl bills revert` does when it was paid), then
 * the timed window: db_begin + insights_run_apply + db_commit of that link
 * ("after a change"); then the same window for another link at random,
 * untouched since its last run ("no change"). Three clocks per window:
 * CLOCK_MONOTONIC (wall: the round trips and our CPU), this thread's CPU
 * clock, and the PostgreSQL backend's CPU clock (clock_getcpuclockid of
 * the connection's backend: the database's own CPU, to the nanosecond).
 * Prints a markdown section to --out: p50/p90/p99/max of each, by case and
 * by fixture, nearest rank. Twice: on the fresh database as the retrievals
 * left it (autovacuum held off, so the statements keep the generic plans
 * they chose without statistics), then after ANALYZE; then --explain-runs
 * more, untimed, with auto_explain: the executor's time per statement. A
 * measurement, never an assertion: bench/README.md.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <check.h>
#include <libpq-fe.h>

#include "core/arena.h"
#include "core/config.h"
#include "core/crypto.h"
#include "core/db.h"
#include "core/jobq.h"
#include "core/req.h"
#include "bills/bills.h"
#include "insights/insights.h"

#include "devacct.h"
#include "harness.h"
#include "stats.h"

#define REQ_ID		"bench-insights-cost"
#define IDLE_MS		(20 * 60 * 1000)
#define ACCOUNTS_MAX	8

static int nlinks = 300, nruns = 5000, nexplain = 300;
static const char *out_path = "bench/out/insights-cost-latest.md";
static char cmdline[1024];

enum kind { K_GOOD, K_INSIGHTS, K_MULTI, K_MANY, K__MAX };
static const char *const kind_user[K__MAX] = {
	"user_good", "user_insights", "user_multi", "user_many"
};

struct link {
	char		*id;
	enum kind	 kind;
	char		*bills[ACCOUNTS_MAX];	/* each account's newest bill */
	int		 nbills;
};

enum cse { C_CHANGE, C_STEADY, C__MAX };
static const char *const case_name[C__MAX] = { "after a change", "no change" };

enum clk { T_WALL, T_CPU, T_PG, T_SUM, T__MAX };
static const char *const clk_name[T__MAX] = {
	"wall (CLOCK_MONOTONIC: round trips + our CPU)",
	"our CPU (CLOCK_THREAD_CPUTIME_ID)",
	"PostgreSQL backend CPU (its process CPU clock)",
	"our CPU + backend CPU",
};

struct sample {
	enum kind	 kind;
	double		 t[T__MAX];	/* ms */
};

static struct {
	struct config	 cfg;
	struct db	*db;
	int		 pg_pid;
	clockid_t	 pg_clock;
	const char	*client;
} B;

/* ---- clocks ---- */

static double
clock_ms(clockid_t c)
{
	struct timespec ts;

	if (clock_gettime(c, &ts) != 0)
		return 0;
	return (double)ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* The connection's backend and its CPU clock (again after a reconnect). */
static void
backend_clock(void)
{
	int pid = PQbackendPID(db_conn(B.db));

	if (pid == B.pg_pid)
		return;
	B.pg_pid = pid;
	ck_assert_msg(pid > 0 && clock_getcpuclockid(pid, &B.pg_clock) == 0,
	    "no CPU clock for backend %d", pid);
}

/* ---- the stack's links ---- */

/* How many links of each fixture of n: two user_many, one in twenty
 * user_multi, the rest user_good and user_insights in turn. */
static void
mix(int n, int *count)
{
	count[K_MANY] = n >= 20 ? 2 : n >= 10 ? 1 : 0;
	count[K_MULTI] = n >= 4 ? (n / 20 > 0 ? n / 20 : 1) : 0;
	n -= count[K_MANY] + count[K_MULTI];
	count[K_INSIGHTS] = n / 2;
	count[K_GOOD] = n - n / 2;
}

static void
links_make(struct link *v, const char *key)
{
	int count[K__MAX], i = 0;

	mix(nlinks, count);
	/* the big ones first: their retrievals run while the rest are made */
	for (int k = K__MAX - 1; k >= 0; k--) {
		for (int j = 0; j < count[k]; j++, i++) {
			v[i].kind = (enum kind)k;
			v[i].id = devacct_sandbox_link(key, harness_fmt("u-%s-%d", kind_user[k], j),
			    kind_user[k]);
		}
	}
}

/* Each account's newest bill, as the engine orders them. */
static void
links_bills(struct link *v)
{
	for (int i = 0; i < nlinks; i++) {
		const char *p[1] = { v[i].id };
		PGresult *res = PQexecParams(devacct_pg(),
		    "SELECT DISTINCT ON (account_id) id FROM bills WHERE link_id = $1"
		    " AND deleted_at IS NULL AND coalesce(statement_date, due_date) IS NOT NULL"
		    " ORDER BY account_id, coalesce(statement_date, due_date) DESC, id DESC",
		    1, NULL, p, NULL, NULL, 0);

		ck_assert_int_eq(PQresultStatus(res), PGRES_TUPLES_OK);
		v[i].nbills = PQntuples(res) < ACCOUNTS_MAX ? PQntuples(res) : ACCOUNTS_MAX;
		ck_assert_msg(v[i].nbills > 0, "link %s (%s) has no bill", v[i].id,
		    kind_user[v[i].kind]);
		for (int j = 0; j < v[i].nbills; j++)
			v[i].bills[j] = strdup(PQgetvalue(res, j, 0));
		PQclear(res);
	}
}

/* ---- the change and the run ---- */

/*
 * One bill change of link l, committed: the newest bill of one of its
 * accounts paid (client_reported, as mark-paid), or back to PENDING
 * (status_reverted manual_admin, as bdsctl bills revert) when it was PAID.
 * 1 changed, 0 when the move did not apply.
 */
static int
change(const struct link *l)
{
	const char *bill = l->bills[random() % l->nbills];
	char *status = devacct_sql_value("SELECT status FROM bills WHERE id = $1", bill, NULL);
	struct bills_move m = { 0 };
	struct arena a;
	struct req r;
	int rc;

	ck_assert_ptr_nonnull(status);
	if (strcmp(status, "PAID") == 0) {
		m.change = "status_reverted";
		m.revert_reason = "manual_admin";
	} else {
		m.change = "paid";
		m.paid_reason = "client_reported";
	}
	free(status);
	arena_init(&a);
	req_init(&r, &B.cfg, B.db, &a, REQ_ID);
	ck_assert_int_eq(db_begin(B.db), 0);
	rc = bills_status_move(&r, B.client, bill, &m);
	ck_assert_msg(rc >= 0, "bills_status_move %s: %d (%s)", bill, rc, db_errmsg(B.db));
	ck_assert_int_eq(db_commit(B.db), 0);
	arena_free(&a);
	return rc == 1;
}

/* One run of link l, timed (s may be NULL: untimed). 0, or -1 when it
 * did not end done and committed. */
static int
run(const struct link *l, struct sample *s)
{
	struct jobs_job job = { 0 };
	struct arena a;
	struct req r;
	double w0, w1, c0, c1, p0, p1;
	int ok;

	job.id = "job_bench";
	job.kind = INSIGHTS_JOB_LINK;
	job.client_id = B.client;
	job.environment = "sandbox";
	job.subject_id = l->id;
	job.attempt = 1;
	arena_init(&a);
	req_init(&r, &B.cfg, B.db, &a, REQ_ID);
	r.client_id = job.client_id;
	r.env = job.environment;
	backend_clock();

	p0 = clock_ms(B.pg_clock);
	c0 = clock_ms(CLOCK_THREAD_CPUTIME_ID);
	w0 = clock_ms(CLOCK_MONOTONIC);
	ok = db_begin(B.db) == 0 && insights_run_apply(&r, &job) == JOBS_DONE &&
	    db_commit(B.db) == 0;
	w1 = clock_ms(CLOCK_MONOTONIC);
	c1 = clock_ms(CLOCK_THREAD_CPUTIME_ID);
	p1 = clock_ms(B.pg_clock);

	if (!ok)
		db_rollback(B.db);
	arena_free(&a);
	if (s != NULL) {
		s->kind = l->kind;
		s->t[T_WALL] = w1 - w0;
		s->t[T_CPU] = c1 - c0;
		s->t[T_PG] = p1 - p0;
		s->t[T_SUM] = s->t[T_CPU] + s->t[T_PG];
	}
	return ok ? 0 : -1;
}

/* ---- the report ---- */

/* The row of clock c over the samples of kind k (K__MAX: all). */
static void
row(FILE *f, const char *label, const struct sample *s, int n, enum clk c, int k, double *tmp)
{
	int m = 0;

	for (int i = 0; i < n; i++)
		if (k == K__MAX || s[i].kind == (enum kind)k)
			tmp[m++] = s[i].t[c];
	if (m == 0)
		return;
	qsort(tmp, (size_t)m, sizeof(*tmp), cmp_double);
	fprintf(f, "| %s | %d | %.3f | %.3f | %.3f | %.3f |\n", label, m, pct(tmp, m, 0.50),
	    pct(tmp, m, 0.90), pct(tmp, m, 0.99), tmp[m - 1]);
}

/* The goal's figures: p99 after a change, all links. */
static void
headline(FILE *f, const struct sample *s, int n, double *tmp)
{
	double p[T__MAX];

	for (int c = 0; c < T__MAX; c++) {
		for (int i = 0; i < n; i++)
			tmp[i] = s[i].t[c];
		qsort(tmp, (size_t)n, sizeof(*tmp), cmp_double);
		p[c] = pct(tmp, n, 0.99);
	}
	fprintf(f, "**p99 after a change, all links: %.3f ms wall (round trips + our CPU),"
	    " %.3f ms of our CPU + the PostgreSQL backend's** (each run's sum; alone: ours"
	    " %.3f, the backend's %.3f). The goal: under 2 ms of database + CPU time at p99.\n",
	    p[T_WALL], p[T_SUM], p[T_CPU], p[T_PG]);
}

/* One line of the summary: all links of a case. */
static void
summary_row(FILE *f, const char *phase, const char *cse, const struct sample *s, int n,
    double *tmp)
{
	double p50[T__MAX], p99[T__MAX];

	for (int c = 0; c < T__MAX; c++) {
		for (int i = 0; i < n; i++)
			tmp[i] = s[i].t[c];
		qsort(tmp, (size_t)n, sizeof(*tmp), cmp_double);
		p50[c] = pct(tmp, n, 0.50);
		p99[c] = pct(tmp, n, 0.99);
	}
	fprintf(f, "| %s | %s | %d | %.3f | **%.3f** | %.3f | **%.3f** | %.3f | %.3f |\n", phase,
	    cse, n, p50[T_WALL], p99[T_WALL], p50[T_SUM], p99[T_SUM], p99[T_CPU], p99[T_PG]);
}

static void
text_of(const char *path, const char *key, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	char line[256];

	snprintf(buf, len, "?");
	if (f == NULL)
		return;
	while (fgets(line, sizeof(line), f) != NULL) {
		char *colon = strchr(line, ':');

		if (key != NULL && (strncmp(line, key, strlen(key)) != 0 || colon == NULL))
			continue;
		snprintf(buf, len, "%s", key != NULL ? colon + 2 : line);
		buf[strcspn(buf, "\n")] = '\0';
		break;
	}
	fclose(f);
}

/* The machine's load averages (1, 5, 15 min). */
static void
loadavg(char *buf, size_t len)
{
	int sp = 0;

	text_of("/proc/loadavg", NULL, buf, len);
	for (size_t i = 0; buf[i] != '\0'; i++)
		if (buf[i] == ' ' && ++sp == 3)
			buf[i] = '\0';
}

static char *
pg_show(const char *what)
{
	return devacct_sql_value(harness_fmt("SELECT current_setting('%s')", what), NULL, NULL);
}

static long long
insight_events(void)
{
	return devacct_sql_int("SELECT count(*) FROM events WHERE type LIKE 'insight.%'", NULL,
	    NULL);
}

static long long
live_insights(void)
{
	return devacct_sql_int("SELECT count(*) FROM insights WHERE client_id = $1 AND"
	    " status IN ('OPEN', 'SNOOZED')", B.client, NULL);
}

/* When the bills table was last analysed (by autovacuum, or by hand). */
static void
analysed(char *buf, size_t len)
{
	char *v = devacct_sql_value("SELECT coalesce(to_char(greatest(last_autoanalyze,"
	    " last_analyze) AT TIME ZONE 'UTC', 'HH24:MI:SS \"UTC\"'), 'never')"
	    " FROM pg_stat_user_tables WHERE relname = 'bills'", NULL, NULL);

	snprintf(buf, len, "%s", v != NULL ? v : "?");
	free(v);
}

/*
 * A phase: the engine on a fresh connection (every statement prepared and
 * every link run once, untimed), then the iterations. Its samples and
 * what the database says before and after.
 */
enum phase_id { P_FRESH, P_ANALYSED, P__MAX };
static const char *const phase_title[P__MAX] = {
	"fresh database (never analysed)",
	"after ANALYZE",
};
static const char *const phase_note[P__MAX] = {
	"the statistics as the retrievals left them, autovacuum held off for the phase"
	" (`ALTER SYSTEM`): a new deployment until autovacuum's first ANALYZE of a table,"
	" when a prepared statement keeps the generic plan it chose without statistics"
	" after five runs",
	"`ANALYZE` of the whole database, then a new connection, so every statement is"
	" planned with statistics (a database in use)",
};

struct phase {
	struct sample	*s[C__MAX];
	int		 ns[C__MAX], nochange, failed;
	long long	 live0, live1, events, evaluated;
	double		 secs;
	double		 busy, ours;	/* machine's busy CPU s; this process + its backend */
	char		 an0[32], an1[32], la0[64], la1[64];
};

/* The machine's busy and total CPU seconds so far (/proc/stat). */
static void
machine_cpu(double *busy, double *total)
{
	unsigned long long v[8] = { 0 };
	double hz = (double)sysconf(_SC_CLK_TCK);
	FILE *f = fopen("/proc/stat", "r");

	*busy = *total = 0;
	if (f == NULL)
		return;
	if (fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2],
	    &v[3], &v[4], &v[5], &v[6], &v[7]) == 8) {
		*total = (double)(v[0] + v[1] + v[2] + v[3] + v[4] + v[5] + v[6] + v[7]) / hz;
		*busy = *total - (double)(v[3] + v[4]) / hz;
	}
	fclose(f);
}

static void
phase_run(struct phase *ph, const struct link *links)
{
	char *since;
	double t0, b0, b1, tot0, tot1, o0;
	long long ev0;

	if (B.db != NULL)
		db_free(B.db);
	ck_assert_ptr_nonnull(B.db = db_new(harness_database_url()));
	ck_assert_int_eq(db_ensure(B.db), 0);
	B.pg_pid = 0;
	for (int i = 0; i < nlinks; i++)
		ck_assert_msg(run(&links[i], NULL) == 0, "warm-up run of %s: %s", links[i].id,
		    db_errmsg(B.db));
	for (int c = 0; c < C__MAX; c++)
		ck_assert_ptr_nonnull(ph->s[c] = calloc((size_t)nruns, sizeof(*ph->s[c])));
	ph->live0 = live_insights();
	ev0 = insight_events();
	since = devacct_sql_value("SELECT clock_timestamp()::text", NULL, NULL);
	analysed(ph->an0, sizeof(ph->an0));
	loadavg(ph->la0, sizeof(ph->la0));

	backend_clock();
	machine_cpu(&b0, &tot0);
	o0 = clock_ms(CLOCK_PROCESS_CPUTIME_ID) + clock_ms(B.pg_clock);
	t0 = clock_ms(CLOCK_MONOTONIC);
	for (int i = 0; i < nruns; i++) {
		const struct link *a = &links[random() % nlinks], *b;

		if (change(a)) {
			if (run(a, &ph->s[C_CHANGE][ph->ns[C_CHANGE]]) == 0)
				ph->ns[C_CHANGE]++;
			else
				ph->failed++;
		} else {
			ph->nochange++;
		}
		do
			b = &links[random() % nlinks];
		while (b == a);
		if (run(b, &ph->s[C_STEADY][ph->ns[C_STEADY]]) == 0)
			ph->ns[C_STEADY]++;
		else
			ph->failed++;
	}
	ph->secs = (clock_ms(CLOCK_MONOTONIC) - t0) / 1e3;
	ph->ours = (clock_ms(CLOCK_PROCESS_CPUTIME_ID) + clock_ms(B.pg_clock) - o0) / 1e3;
	machine_cpu(&b1, &tot1);
	ph->busy = b1 - b0;
	loadavg(ph->la1, sizeof(ph->la1));
	analysed(ph->an1, sizeof(ph->an1));
	ph->events = insight_events() - ev0;
	ph->live1 = live_insights();
	ph->evaluated = devacct_sql_int("SELECT count(*) FROM insight_runs WHERE client_id = $1"
	    " AND evaluated_at >= $2::timestamptz", B.client, since);
	free(since);
}

static void
phase_report(FILE *f, enum phase_id p, const struct phase *ph, double *tmp)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);

	fprintf(f, "\n#### Phase: %s\n\n", phase_title[p]);
	headline(f, ph->s[C_CHANGE], ph->ns[C_CHANGE], tmp);
	fprintf(f, "\n- %s\n"
	    "- %d changes did not apply (counted as none), %d runs failed; %.1f s for the"
	    " iterations; bills last analysed at the start / the end: %s / %s\n"
	    "- live insights (OPEN, SNOOZED) of the client at the start / the end: %lld / %lld;"
	    " insight events: %lld; links run: %lld\n"
	    "- load average (1, 5, 15 min) at the start / the end: %s / %s; the machine's CPU"
	    " during the iterations: %.0f %% of %ld CPUs busy, of which %.0f points this"
	    " process and its backend, %.0f points the rest (the status reads of the changes,"
	    " other sessions)\n",
	    phase_note[p], ph->nochange, ph->failed, ph->secs, ph->an0, ph->an1, ph->live0,
	    ph->live1, ph->events, ph->evaluated, ph->la0, ph->la1,
	    100.0 * ph->busy / (ph->secs * ncpu), ncpu, 100.0 * ph->ours / (ph->secs * ncpu),
	    100.0 * (ph->busy - ph->ours) / (ph->secs * ncpu));
	for (int c = 0; c < T__MAX; c++) {
		fprintf(f, "\n| %s, ms | runs | p50 | p90 | p99 | max |\n"
		    "|---|---:|---:|---:|---:|---:|\n", clk_name[c]);
		for (int k = 0; k < C__MAX; k++) {
			row(f, harness_fmt("**%s**, all links", case_name[k]), ph->s[k],
			    ph->ns[k], (enum clk)c, K__MAX, tmp);
			for (int j = 0; j < K__MAX; j++)
				row(f, harness_fmt("%s, %s", case_name[k], kind_user[j]), ph->s[k],
				    ph->ns[k], (enum clk)c, j, tmp);
		}
	}
}

/*
 * Where the backend's time goes: --explain-runs more iterations after a
 * phase, auto_explain logging the executor's time of each
 * statement of the runs (not of the changes) into the cluster's log, read
 * back by the backend's pid. A pass of its own: the logging costs time,
 * so none of its runs is in the phases' tables.
 */
#define BD_MAX	32
struct stmt_time {
	char	 text[100];
	int	 calls;
	double	 sum, max;
};
struct breakdown {
	struct stmt_time v[BD_MAX];
	int		 n, runs;
	double		 total;
	const char	*skipped;	/* why there is none */
};

/* One statement on the engine's connection, outside any transaction. */
static int
session(const char *sql)
{
	PGresult *res = PQexec(db_conn(B.db), sql);
	int ok = PQresultStatus(res) == PGRES_COMMAND_OK;

	PQclear(res);
	return ok ? 0 : -1;
}

static void
breakdown_add(struct breakdown *bd, const char *text, double ms)
{
	int i;

	for (i = 0; i < bd->n && strncmp(bd->v[i].text, text, sizeof(bd->v[i].text) - 1) != 0;
	    i++)
		;
	if (i == bd->n) {
		if (bd->n == BD_MAX)
			return;
		snprintf(bd->v[bd->n++].text, sizeof(bd->v[0].text), "%s", text);
	}
	bd->v[i].calls++;
	bd->v[i].sum += ms;
	if (ms > bd->v[i].max)
		bd->v[i].max = ms;
	bd->total += ms;
}

static void
breakdown_run(struct breakdown *bd, const struct link *links)
{
	char path[512], line[4096], tag[32];
	double ms = -1;
	long off;
	FILE *f;

	if (nexplain == 0) {
		bd->skipped = "--explain-runs 0";
		return;
	}
	snprintf(path, sizeof(path), "%s/postgres.log", harness_dir());
	if ((f = fopen(path, "r")) == NULL || fseek(f, 0, SEEK_END) != 0 ||
	    (off = ftell(f)) < 0 || session("LOAD 'auto_explain'") != 0 ||
	    session("SET auto_explain.log_min_duration = -1") != 0) {
		bd->skipped = "no cluster log, or auto_explain would not load";
		if (f != NULL)
			fclose(f);
		return;
	}
	fclose(f);
	for (int i = 0; i < nexplain; i++) {
		const struct link *a = &links[random() % nlinks], *b;

		change(a);
		do
			b = &links[random() % nlinks];
		while (b == a);
		for (int k = 0; k < 2; k++) {
			ck_assert_int_eq(session("SET auto_explain.log_min_duration = 0"), 0);
			if (run(k == 0 ? a : b, NULL) == 0)
				bd->runs++;
			ck_assert_int_eq(session("SET auto_explain.log_min_duration = -1"), 0);
		}
	}
	/* "... [pid] LOG:  duration: 0.123 ms  plan:", then "\tQuery Text: ..." */
	snprintf(tag, sizeof(tag), "[%d] LOG:  duration: ", B.pg_pid);
	ck_assert_ptr_nonnull(f = fopen(path, "r"));
	ck_assert_int_eq(fseek(f, off, SEEK_SET), 0);
	while (fgets(line, sizeof(line), f) != NULL) {
		char *p;

		if ((p = strstr(line, tag)) != NULL) {
			ms = atof(p + strlen(tag));
			continue;
		}
		if (ms >= 0 && (p = strstr(line, "Query Text: ")) != NULL) {
			p += strlen("Query Text: ");
			p[strcspn(p, "\n")] = '\0';
			breakdown_add(bd, p, ms);
		}
		ms = -1;
	}
	fclose(f);
}

static int
cmp_stmt(const void *a, const void *b)
{
	double x = ((const struct stmt_time *)a)->sum, y = ((const struct stmt_time *)b)->sum;

	return x > y ? -1 : x < y;
}

static void
breakdown_report(FILE *f, struct breakdown *bd)
{
	fprintf(f, "\nWhere the backend's time goes in this phase: ");
	if (bd->skipped != NULL || bd->runs == 0) {
		fprintf(f, "not measured (%s).\n", bd->skipped != NULL ? bd->skipped : "no run");
		return;
	}
	qsort(bd->v, (size_t)bd->n, sizeof(bd->v[0]), cmp_stmt);
	fprintf(f, "%d runs more (half after a change), not in the tables above, with"
	    " auto_explain logging each statement's executor time (parse, bind and planning"
	    " not in it, nor BEGIN and COMMIT): %.3f ms a run in all.\n\n"
	    "| statement (its text's start) | calls a run | mean ms | max ms | share |\n"
	    "|---|---:|---:|---:|---:|\n", bd->runs, bd->total / bd->runs);
	for (int i = 0; i < bd->n; i++) {
		char text[80];

		snprintf(text, sizeof(text), "%s", bd->v[i].text);
		for (char *p = text; *p != '\0'; p++)
			if (*p == '|' || *p == '`')
				*p = ' ';
		fprintf(f, "| `%s…` | %.2f | %.3f | %.3f | %.0f %% |\n", text,
		    (double)bd->v[i].calls / bd->runs, bd->v[i].sum / bd->v[i].calls, bd->v[i].max,
		    bd->total > 0 ? 100.0 * bd->v[i].sum / bd->total : 0.0);
	}
}

START_TEST(insights_cost)
{
	struct devacct dev;
	struct harness_opts o;
	struct link *links;
	struct phase ph[P__MAX];
	struct breakdown bd[P__MAX];
	int count[K__MAX];
	long long created, resolved;
	double t0, *tmp;
	char err[512], model[256], *key, *ver, *fsync, *sync, *autovac;
	FILE *f;

	ck_assert_ptr_nonnull(links = calloc((size_t)nlinks, sizeof(*links)));
	ck_assert_ptr_nonnull(tmp = calloc((size_t)nruns + 1, sizeof(*tmp)));
	memset(ph, 0, sizeof(ph));
	memset(bd, 0, sizeof(bd));
	srandom(1);

	/* 1. the stack, the links, retrieved (and their first runs) */
	harness_opts_defaults(&o);
	harness_fixture_start(&o);
	devacct_legal();
	devacct_new(&dev, "cost");
	B.client = devacct_client_new(&dev);
	key = devacct_key_new(&dev, B.client, "sandbox");
	t0 = clock_ms(CLOCK_MONOTONIC);
	links_make(links, key);
	ck_assert_msg(harness_jobs_wait_idle(IDLE_MS) == 0, "%s", harness_error());
	fprintf(stderr, "insights_cost: %d links retrieved in %.1f s\n", nlinks,
	    (clock_ms(CLOCK_MONOTONIC) - t0) / 1e3);

	/* 2. bds-jobs stopped; the engine in this process, twice */
	ck_assert_msg(harness_jobs_stop() == 0, "%s", harness_error());
	ck_assert_int_eq(crypto_setup(), 0);
	ck_assert_msg(config_load(&B.cfg, harness_config_path(), err, sizeof(err)) == 0, "%s",
	    err);
	links_bills(links);
	/* the first phase as it stands until autovacuum's first ANALYZE, which
	 * would otherwise come at any moment of it */
	devacct_sql_exec("ALTER SYSTEM SET autovacuum = off", NULL, NULL);
	devacct_sql_exec("SELECT pg_reload_conf()", NULL, NULL);
	phase_run(&ph[P_FRESH], links);
	breakdown_run(&bd[P_FRESH], links);
	devacct_sql_exec("ALTER SYSTEM RESET autovacuum", NULL, NULL);
	devacct_sql_exec("SELECT pg_reload_conf()", NULL, NULL);
	devacct_sql_exec("ANALYZE", NULL, NULL);
	phase_run(&ph[P_ANALYSED], links);
	breakdown_run(&bd[P_ANALYSED], links);
	created = devacct_sql_int("SELECT count(*) FROM insights WHERE client_id = $1",
	    B.client, NULL);
	resolved = devacct_sql_int("SELECT count(*) FROM insights WHERE client_id = $1 AND"
	    " status = 'RESOLVED' AND resolved_by = 'engine'", B.client, NULL);

	/* 3. the report */
	mix(nlinks, count);
	text_of("/proc/cpuinfo", "model name", model, sizeof(model));
	ver = pg_show("server_version");
	fsync = pg_show("fsync");
	sync = pg_show("synchronous_commit");
	autovac = pg_show("autovacuum");
	ck_assert_ptr_nonnull(f = fopen(out_path, "w"));
	fprintf(f, "### Insights engine: cost of one link's run per bill change\n\n");
	fprintf(f, "The goal: under 2 ms of database + CPU time at p99. All links, ms:\n\n"
	    "| phase | case | runs | wall p50 | **wall p99** | CPU p50 | **CPU p99** |"
	    " ours p99 | backend p99 |\n|---|---|---:|---:|---:|---:|---:|---:|---:|\n");
	for (int p = 0; p < P__MAX; p++)
		for (int c = 0; c < C__MAX; c++)
			summary_row(f, phase_title[p], case_name[c], ph[p].s[c], ph[p].ns[c], tmp);
	fprintf(f, "\nwall: CLOCK_MONOTONIC over the window (round trips + our CPU); CPU: our"
	    " thread's CPU + the PostgreSQL backend's CPU in the window, summed per run (ours"
	    " and the backend's p99 each on its own)\n\n");
	fprintf(f,
	    "- %d sandbox links of one client, each its own client user: %d user_good,"
	    " %d user_insights, %d user_multi (3 accounts), %d user_many (1,000 bills);"
	    " insights_history_bills %d\n"
	    "- two phases of %d iterations each (below): one link at random gets one bill"
	    " change (the newest bill of one of its accounts marked paid, or reverted to"
	    " PENDING when paid: bills_status_move in its own transaction, outside the"
	    " window), then that link's run is timed (**after a change**); then another link"
	    " at random, untouched since its last run, is timed (**no change**)\n"
	    "- the timed window: db_begin + insights_run_apply + db_commit, in this process on"
	    " its own connection (bds-jobs stopped), a fresh arena per run; not in it: the"
	    " runner's claim and its marking the job done\n"
	    "- insights of the client in all: %lld, resolved by the engine: %lld%s\n"
	    "- machine: %ld CPUs (nproc), %s\n"
	    "- PostgreSQL %s on a unix socket, autovacuum %s, fsync %s, synchronous_commit %s"
	    " (the harness's settings: a commit flushes no WAL here)\n"
	    "- bench command line:%s\n",
	    nlinks, count[K_GOOD], count[K_INSIGHTS], count[K_MULTI], count[K_MANY],
	    insights_settings(&B.cfg)->insights_history_bills, nruns, created, resolved,
	    created == 0 ? " (**the rules found nothing: the placeholder?**)" : "",
	    sysconf(_SC_NPROCESSORS_ONLN), model, ver, autovac, fsync, sync, cmdline);
	for (int p = 0; p < P__MAX; p++) {
		phase_report(f, (enum phase_id)p, &ph[p], tmp);
		breakdown_report(f, &bd[p]);
	}
	fclose(f);
	free(ver);
	free(fsync);
	free(sync);
	free(autovac);
	db_free(B.db);
	config_free(&B.cfg);
	for (int i = 0; i < nlinks; i++) {
		free(links[i].id);
		for (int j = 0; j < links[i].nbills; j++)
			free(links[i].bills[j]);
	}
	free(links);
	free(key);
	free((char *)B.client);
	for (int p = 0; p < P__MAX; p++)
		for (int c = 0; c < C__MAX; c++)
			free(ph[p].s[c]);
	free(tmp);
	harness_fixture_stop();
}
END_TEST

int
main(int argc, char **argv)
{
	Suite *su = suite_create("bench_insights_cost");
	TCase *tc = tcase_create("insights_cost");
	SRunner *sr;
	int failed;

	for (int i = 0; i < argc; i++)
		snprintf(cmdline + strlen(cmdline), sizeof(cmdline) - strlen(cmdline), " %s",
		    argv[i]);
	for (int i = 1; i + 1 < argc; i += 2) {
		if (strcmp(argv[i], "--links") == 0)
			nlinks = atoi(argv[i + 1]);
		else if (strcmp(argv[i], "--runs") == 0)
			nruns = atoi(argv[i + 1]);
		else if (strcmp(argv[i], "--explain-runs") == 0)
			nexplain = atoi(argv[i + 1]);
		else if (strcmp(argv[i], "--out") == 0)
			out_path = argv[i + 1];
		else {
			fprintf(stderr, "insights_cost: unknown option %s\n", argv[i]);
			return 2;
		}
	}
	if (nlinks < 2 || nlinks > 5000 || nruns < 1 || nruns > 1000000 || nexplain < 0 ||
	    nexplain > 100000) {
		fprintf(stderr, "insights_cost: --links 2..5000, --runs 1..1000000,"
		    " --explain-runs 0..100000\n");
		return 2;
	}
	tcase_add_test(tc, insights_cost);
	tcase_set_timeout(tc, 1800);
	suite_add_tcase(su, tc);
	sr = srunner_create(su);
	srunner_set_fork_status(sr, CK_NOFORK);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? 0 : 1;
}
