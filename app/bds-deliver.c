/*
 * bds-deliver: sends what the outboxes hold: e-mail and webhooks. Started every minute by systemd/bds-deliver.timer or cron,
 * it stays up to --max-seconds, woken by LISTEN bds_outbox, so delivery is
 * sub-second while the process stays timer-driven. Several may run at once.
 * SIGTERM/SIGINT: the message in flight finishes, the rest of its batch goes
 * back to the queue, and the process exits 0.
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
#include "core/db.h"
#include "core/queue.h"
#include "core/log.h"
#include "mail/mail.h"
#include "webhooks/webhooks_deliver.h"

/* What the outbox tables' insert triggers notify (sql/003, sql/007). */
#define DELIVER_CHANNEL	"bds_outbox"

/* The queues bds-deliver drains: a new one is one more line. */
static const struct queue_kind kinds[] = {
	{ "mail", mail_sender_init, NULL },
	{ "webhook", webhooks_sender_init, webhooks_sender_free },
};
#define NKINDS	(sizeof(kinds) / sizeof(kinds[0]))

static volatile sig_atomic_t stop;

static void
on_stop(int sig)
{
	stop = 1;
}

static void
usage(FILE *f)
{
	fprintf(f,
	    "usage: bds-deliver [--config FILE] [--once] [--max-seconds N] [--poll-ms N]\n"
	    "                   [--log FILE]\n"
	    "  --config FILE     settings file (key = value); BDS_<KEY> overrides\n"
	    "  --once            send what is due now, then exit\n"
	    "  --max-seconds N   stop after N seconds (default 55; 0 = until SIGTERM)\n"
	    "  --poll-ms N       look for due rows at least this often (default 1000)\n"
	    "  --log FILE        append the JSON log lines to FILE (default stderr:\n"
	    "                    the journal under systemd)\n");
}

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
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "once", no_argument, NULL, '1' },
		{ "max-seconds", required_argument, NULL, 'm' },
		{ "poll-ms", required_argument, NULL, 'p' },
		{ "log", required_argument, NULL, 'l' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	struct queue_opts o = { 0, 55, 1000, DELIVER_CHANNEL, &stop };
	struct queue_sender sender[NKINDS], *senders[NKINDS];
	const char *config_path = NULL, *log_path = NULL;
	struct sigaction sa;
	struct config cfg;
	struct db *db;
	char err[512];
	size_t i, ready = 0;
	int ch, rc = 0;

	while ((ch = getopt_long(argc, argv, "c:1m:p:l:hV", opts, NULL)) != -1) {
		switch (ch) {
		case 'c': config_path = optarg; break;
		case 'l': log_path = optarg; break;
		case '1': o.once = 1; break;
		case 'm':
			if ((o.max_seconds = (int)number(optarg, 0, INT_MAX / 1000)) < 0) {
				fprintf(stderr, "bds-deliver: --max-seconds: not a number of seconds\n");
				return 2;
			}
			break;
		case 'p':
			if ((o.poll_ms = (int)number(optarg, 10, 3600000)) < 0) {
				fprintf(stderr, "bds-deliver: --poll-ms: 10..3600000\n");
				return 2;
			}
			break;
		case 'V': printf("bds-deliver %s\n", PACKAGE_VERSION); return 0;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind != argc) {
		usage(stderr);
		return 2;
	}
	if (config_load(&cfg, config_path, err, sizeof(err)) != 0) {
		fprintf(stderr, "bds-deliver: %s\n", err);
		config_free(&cfg);
		return 1;
	}
	/* not log_path: that is bds-api's request log */
	if (log_open(log_path) != 0) {
		fprintf(stderr, "bds-deliver: cannot open log %s: %s\n", log_path,
		    strerror(errno));
		config_free(&cfg);
		return 1;
	}
	if (crypto_setup() != 0 || curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		fprintf(stderr, "bds-deliver: libsodium or libcurl failed to initialise\n");
		config_free(&cfg);
		return 1;
	}

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;	/* the wait's poll() still returns at once */
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	/* operators (and tests) tell the deliverers apart in pg_stat_activity */
	setenv("PGAPPNAME", "bds-deliver", 0);

	if ((db = db_new(cfg.database_url)) == NULL) {
		fprintf(stderr, "bds-deliver: out of memory\n");
		curl_global_cleanup();
		config_free(&cfg);
		return 1;
	}
	memset(sender, 0, sizeof(sender));
	for (i = 0; i < NKINDS && rc == 0; i++, ready++) {
		senders[i] = &sender[i];
		if ((rc = kinds[i].init(&sender[i], &cfg, err, sizeof(err))) != 0)
			fprintf(stderr, "bds-deliver: %s: %s\n", kinds[i].name, err);
	}
	if (rc == 0) {
		log_msg("info", "deliver: started (mail_transport=%s, webhook_concurrency=%d,"
		    " %s)", cfg.mail_transport, cfg.webhook_concurrency,
		    o.once ? "once" : "listening on " DELIVER_CHANNEL);
		rc = queue_run(db, senders, NKINDS, &o);
		log_msg(rc == 0 ? "info" : "error", "deliver: %s", rc == 0 ? "done" :
		    "stopped: the database failed");
	}
	for (i = 0; i < ready; i++)
		if (kinds[i].free != NULL)
			kinds[i].free(&sender[i]);
	db_free(db);
	curl_global_cleanup();
	config_free(&cfg);
	return rc == 0 ? 0 : 1;
}
