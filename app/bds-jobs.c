/*
 * bds-jobs: runs the background work of lib/jobs (retrieval, connect, later
 * imports, insights, expiry) from the jobs table. Started every minute by
 * systemd/bds-jobs.timer or cron, it stays up to --max-seconds, woken by
 * LISTEN bds_jobs (a poll still finds everything). It forks --workers
 * processes (config jobs_workers), each with its own database connection
 * and its own loop (lib/jobs/jobs_loop.c): up to jobs_conversations jobs in
 * flight at once, their biller conversations driven together on libcurl's
 * multi interface, claimed with FOR UPDATE SKIP LOCKED and a lease, so
 * several runs on several hosts are safe at once. SIGTERM/SIGINT: the jobs
 * in flight finish, and the process exits 0.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>

#include "core/config.h"
#include "core/nodump.h"
#include "core/crypto.h"
#include "core/db.h"
#include "core/log.h"
#include "core/queue.h"
#include "jobs/jobs.h"

/* What the jobs table's insert trigger notifies (sql/013). */
#define JOBS_CHANNEL	"bds_jobs"
#define JOBS_WORKERS_MAX 64

static volatile sig_atomic_t stop;

static void
usage(FILE *f)
{
	fprintf(f,
	    "usage: bds-jobs [--config FILE] [--once] [--max-seconds N] [--workers N]\n"
	    "                [--poll-ms N] [--log FILE]\n"
	    "  --config FILE     settings file (key = value); BDS_<KEY> overrides\n"
	    "  --once            run what is due now in this process, then exit\n"
	    "  --max-seconds N   stop after N seconds (default 55; 0 = until SIGTERM)\n"
	    "  --workers N       forked workers (default: config jobs_workers)\n"
	    "  --poll-ms N       look for due jobs at least this often (default:\n"
	    "                    config jobs_poll_ms)\n"
	    "  --log FILE        append the JSON log lines to FILE (default stderr)\n");
}

/* One worker: its own connection and the runner's loop. 0 on a normal end. */
static int
worker(const struct config *cfg, const struct queue_opts *o)
{
	struct db *db;
	int rc;

	if ((db = db_new(cfg->database_url)) == NULL) {
		fprintf(stderr, "bds-jobs: out of memory\n");
		return 1;
	}
	rc = jobs_loop_run(db, cfg, o);
	db_free(db);
	return rc == 0 ? 0 : 1;
}

static long long
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec;
}

/*
 * Fork n workers and wait for them; a worker that dies before the budget
 * ends is replaced. SIGTERM goes on to the workers. 0 when every worker
 * ended well.
 */
static int
supervise(const struct config *cfg, struct queue_opts *o, int n)
{
	pid_t pids[JOBS_WORKERS_MAX];
	long long end = o->max_seconds > 0 ? now_s() + o->max_seconds : 0;
	pid_t parent = getpid();
	int i, alive = 0, rc = 0, st;

	memset(pids, 0, sizeof(pids));
	for (;;) {
		for (i = 0; i < n; i++) {
			pid_t p;

			if (pids[i] != 0 || stop || (end != 0 && now_s() >= end - 1))
				continue;
			if ((p = fork()) == -1) {
				log_msg("error", "jobs: fork: %s", strerror(errno));
				continue;
			}
			if (p == 0) {
				/* the workers die with the supervisor (SIGKILL too) */
				prctl(PR_SET_PDEATHSIG, SIGTERM);
				if (getppid() != parent)
					_exit(1);
				if (end != 0)
					o->max_seconds = (int)(end - now_s());
				_exit(worker(cfg, o));
			}
			pids[i] = p;
			alive++;
		}
		if (alive == 0)
			break;
		{
			pid_t p = waitpid(-1, &st, 0);

			if (p == -1) {
				if (errno == EINTR) {
					if (stop)
						for (i = 0; i < n; i++)
							if (pids[i] != 0)
								kill(pids[i], SIGTERM);
					continue;
				}
				break;
			}
			for (i = 0; i < n; i++) {
				if (pids[i] != p)
					continue;
				pids[i] = 0;
				alive--;
				if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
					log_msg("warn", "jobs: worker %d ended with %s %d", (int)p,
					    WIFEXITED(st) ? "status" : "signal",
					    WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
					rc = 1;
					/* back off a little before replacing it */
					if (!stop)
						sleep(1);
				}
			}
		}
	}
	return stop ? 0 : rc;
}

int
main(int argc, char **argv)
{
	struct queue_cli cli = { .o = { 0, 55, 0, JOBS_CHANNEL, &stop } };
	struct queue_opts *o = &cli.o;
	struct config cfg;
	int rc, workers;

	if ((rc = queue_cli_parse(&cli, "bds-jobs", argc, argv, JOBS_WORKERS_MAX, usage)) >= 0)
		return rc;
	/* the config's keys and what the jobs open (cards, credentials):
	 * no core dump */
	if (nodump() != 0) {
		fprintf(stderr, "bds-jobs: core dumps cannot be turned off: %s\n", strerror(errno));
		return 1;
	}
	/* no SA_RESTART: the supervisor's waitpid returns EINTR */
	if (queue_cli_start(&cli, "bds-jobs", &cfg, &stop, 0) != 0)
		return 1;
	workers = cli.workers;
	if (workers == 0)
		workers = jobs_settings(&cfg)->jobs_workers;
	if (workers < 1 || workers > JOBS_WORKERS_MAX) {
		fprintf(stderr, "bds-jobs: jobs_workers: 1..%d\n", JOBS_WORKERS_MAX);
		curl_global_cleanup();
		config_free(&cfg);
		return 1;
	}
	if (o->poll_ms == 0)
		o->poll_ms = jobs_settings(&cfg)->jobs_poll_ms >= 10 ? jobs_settings(&cfg)->jobs_poll_ms : 1000;
	log_msg("info", "jobs: started (workers=%d, %s)", o->once ? 1 : workers,
	    o->once ? "once" : "listening on " JOBS_CHANNEL);
	if (o->once)
		rc = worker(&cfg, o);
	else
		rc = supervise(&cfg, o, workers);
	log_msg(rc == 0 ? "info" : "error", "jobs: %s", rc == 0 ? "done" :
	    "stopped: a worker failed");
	curl_global_cleanup();
	config_free(&cfg);
	return rc == 0 ? 0 : 1;
}
