/*
 * bds-deliver: sends what the outboxes hold: e-mail and webhooks. Started every minute by systemd/bds-deliver.timer or cron,
 * it stays up to --max-seconds, woken by LISTEN bds_outbox, so delivery is
 * sub-second while the process stays timer-driven. Several may run at once.
 * SIGTERM/SIGINT: the message in flight finishes, the rest of its batch goes
 * back to the queue, and the process exits 0.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <errno.h>
#include <string.h>

#include <curl/curl.h>

#include "core/config.h"
#include "core/nodump.h"
#include "core/crypto.h"
#include "core/db.h"
#include "core/queue.h"
#include "core/log.h"
#include "mail/mail.h"
#include "webhooks/webhooks.h"
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

int
main(int argc, char **argv)
{
	struct queue_cli cli = { .o = { 0, 55, 1000, DELIVER_CHANNEL, &stop } };
	struct queue_sender sender[NKINDS], *senders[NKINDS];
	struct config cfg;
	struct db *db;
	char err[512];
	size_t i, ready = 0;
	int rc = 0;

	if ((rc = queue_cli_parse(&cli, "bds-deliver", argc, argv, 0, usage)) >= 0)
		return rc;
	/* the config's keys and the endpoints' signing secrets: no core dump */
	if (nodump() != 0) {
		fprintf(stderr, "bds-deliver: core dumps cannot be turned off: %s\n", strerror(errno));
		return 1;
	}
	rc = 0;
	/* SA_RESTART: the wait's poll() still returns at once */
	if (queue_cli_start(&cli, "bds-deliver", &cfg, &stop, SA_RESTART) != 0)
		return 1;

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
		    " %s)", mail_settings(&cfg)->mail_transport, webhooks_settings(&cfg)->webhook_concurrency,
		    cli.o.once ? "once" : "listening on " DELIVER_CHANNEL);
		rc = queue_run(db, senders, NKINDS, &cli.o);
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
