/*
 * The command line and start-up both queue runners share (bds-deliver,
 * bds-jobs): options, configuration, log, libraries, signals. See queue.h.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>

#include "core/config.h"
#include "core/crypto.h"
#include "core/log.h"
#include "core/queue.h"

#ifndef PACKAGE_VERSION
#define PACKAGE_VERSION "dev"
#endif

/* A whole decimal number in [min, max]; -1 otherwise. */
static long
number(const char *s, long min, long max)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0' || v < min || v > max)
		return -1;
	return v;
}

int
queue_cli_parse(struct queue_cli *cli, const char *prog, int argc, char **argv,
    int workers_max, void (*usage)(FILE *))
{
	static const struct option opts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "once", no_argument, NULL, '1' },
		{ "max-seconds", required_argument, NULL, 'm' },
		{ "workers", required_argument, NULL, 'w' },
		{ "poll-ms", required_argument, NULL, 'p' },
		{ "log", required_argument, NULL, 'l' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	int ch;

	while ((ch = getopt_long(argc, argv, workers_max > 0 ? "c:1m:w:p:l:hV" :
	    "c:1m:p:l:hV", opts, NULL)) != -1) {
		switch (ch) {
		case 'c': cli->config_path = optarg; break;
		case 'l': cli->log_path = optarg; break;
		case '1': cli->o.once = 1; break;
		case 'm':
			if ((cli->o.max_seconds = (int)number(optarg, 0, INT_MAX / 1000)) < 0) {
				fprintf(stderr, "%s: --max-seconds: not a number of seconds\n", prog);
				return 2;
			}
			break;
		case 'w':
			if (workers_max <= 0) {
				usage(stderr);
				return 2;
			}
			if ((cli->workers = (int)number(optarg, 1, workers_max)) < 0) {
				fprintf(stderr, "%s: --workers: 1..%d\n", prog, workers_max);
				return 2;
			}
			break;
		case 'p':
			if ((cli->o.poll_ms = (int)number(optarg, 10, 3600000)) < 0) {
				fprintf(stderr, "%s: --poll-ms: 10..3600000\n", prog);
				return 2;
			}
			break;
		case 'V': printf("%s %s\n", prog, PACKAGE_VERSION); return 0;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind != argc) {
		usage(stderr);
		return 2;
	}
	return -1;
}

static volatile sig_atomic_t *cli_stop;

static void
on_stop(int sig)
{
	(void)sig;
	if (cli_stop != NULL)
		*cli_stop = 1;
}

int
queue_cli_start(const struct queue_cli *cli, const char *prog, struct config *cfg,
    volatile sig_atomic_t *stop, int sa_flags)
{
	struct sigaction sa;
	char err[512];

	if (config_load(cfg, cli->config_path, err, sizeof(err)) != 0) {
		fprintf(stderr, "%s: %s\n", prog, err);
		config_free(cfg);
		return 1;
	}
	/* not cfg's log_path: that is bds-api's request log */
	if (log_open(cli->log_path) != 0) {
		fprintf(stderr, "%s: cannot open log %s: %s\n", prog, cli->log_path,
		    strerror(errno));
		config_free(cfg);
		return 1;
	}
	if (crypto_setup() != 0 || curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		fprintf(stderr, "%s: libsodium or libcurl failed to initialise\n", prog);
		config_free(cfg);
		return 1;
	}
	cli_stop = stop;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = sa_flags;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	/* operators (and tests) tell the runners apart in pg_stat_activity */
	setenv("PGAPPNAME", prog, 0);
	return 0;
}
