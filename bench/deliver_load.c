/*
 * bench/deliver_load: the load side of bench/deliver (not a test).
 *
 *   deliver_load CONFIG setup URL	a user, a client and a sandbox webhook to URL
 *					(every type); prints "client_id webhook_id"
 *   deliver_load CONFIG backlog CLIENT WEBHOOK N
 *					N events and their deliveries, one transaction
 *   deliver_load CONFIG steady CLIENT WEBHOOK RATE SECONDS OUT
 *					one event (and its delivery) per transaction at
 *					RATE a second for SECONDS; writes "event_id
 *					commit_epoch_ms" lines to OUT
 *
 * Events are written as events_emit writes them: the event row and its
 * delivery in one transaction, the trigger notifying bds_outbox at commit.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <libpq-fe.h>

#include "core/arena.h"
#include "core/config.h"
#include "core/crypto.h"
#include "webhooks/webhooks_sign.h"

static long long
wall_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static PGresult *
run(PGconn *c, const char *q, int n, const char *const *p)
{
	PGresult *r = PQexecParams(c, q, n, NULL, p, NULL, NULL, 0);

	if (PQresultStatus(r) != PGRES_TUPLES_OK && PQresultStatus(r) != PGRES_COMMAND_OK) {
		fprintf(stderr, "deliver_load: %s\n", PQerrorMessage(c));
		exit(1);
	}
	return r;
}

#define EVENT_SQL \
	"WITH e AS (INSERT INTO events (client_id, id, environment, type, data, request_id," \
	" api_version) SELECT $1, 'evt_' || gen_random_uuid(), 'sandbox', 'bill.created'," \
	" jsonb_build_object('object', jsonb_build_object('id', 'bill_' || g, 'object', 'bill'," \
	" 'user_id', 'usr_bench', 'biller_id', 'blr_bench'), 'bill_id', 'bill_' || g," \
	" 'user_id', 'usr_bench'), 'req-' || g, '2026-11-01'" \
	" FROM generate_series(1, $3::int) g RETURNING client_id, id)," \
	" d AS (INSERT INTO deliveries (client_id, id, event_id, webhook_id)" \
	" SELECT client_id, 'dlv_' || gen_random_uuid(), id, $2 FROM e RETURNING event_id)" \
	" SELECT event_id FROM d"

int
main(int argc, char **argv)
{
	struct config cfg;
	struct arena a;
	char err[256];
	PGconn *c;

	if (argc < 3) {
		fprintf(stderr, "usage: deliver_load CONFIG setup|backlog|steady ...\n");
		return 2;
	}
	if (config_load(&cfg, argv[1], err, sizeof(err)) != 0 || crypto_setup() != 0) {
		fprintf(stderr, "deliver_load: %s\n", err);
		return 1;
	}
	arena_init(&a);
	c = PQconnectdb(cfg.database_url);
	if (PQstatus(c) != CONNECTION_OK) {
		fprintf(stderr, "deliver_load: %s\n", PQerrorMessage(c));
		return 1;
	}
	if (strcmp(argv[2], "setup") == 0 && argc == 4) {
		const char *user = crypto_id_new(&a, "usr"), *client = crypto_id_new(&a, "cli");
		const char *wh = crypto_id_new(&a, "whk");
		const char *secret = "whsec_benchbenchbenchbenchbenchbench";
		const char *p[4] = { user, client, wh, argv[3] };
		const char *ps[2] = { wh, webhooks_secret_seal(&a, cfg.secret_key, wh, secret) };

		PQclear(run(c, "INSERT INTO users (id, email, password_hash) VALUES ($1::text,"
		    " $1::text || '@bench.test', 'x')", 1, p));
		PQclear(run(c, "INSERT INTO clients (id, user_id, name) VALUES ($2, $1, 'bench')",
		    2, p));
		PQclear(run(c, "INSERT INTO webhooks (client_id, id, environment, url, events,"
		    " secret) VALUES ($1, $2, 'sandbox', $3, '[\"*\"]', '\\x00')", 3, p + 1));
		PQclear(run(c, "UPDATE webhooks SET secret = $2::bytea WHERE id = $1", 2, ps));
		printf("%s %s %s\n", client, wh, secret);
	} else if (strcmp(argv[2], "backlog") == 0 && argc == 6) {
		const char *p[3] = { argv[3], argv[4], argv[5] };

		PQclear(run(c, EVENT_SQL, 3, p));
	} else if (strcmp(argv[2], "steady") == 0 && argc == 8) {
		const char *p[3] = { argv[3], argv[4], "1" };
		int rate = atoi(argv[5]), secs = atoi(argv[6]);
		long long t0 = wall_ms(), n = (long long)rate * secs;
		FILE *out = fopen(argv[7], "w");

		if (rate <= 0 || secs <= 0 || out == NULL) {
			fprintf(stderr, "deliver_load: bad rate, seconds or output\n");
			return 2;
		}
		for (long long i = 0; i < n; i++) {
			long long due = t0 + i * 1000 / rate, now;
			PGresult *r;

			while ((now = wall_ms()) < due) {
				struct timespec ts = { 0, (long)(due - now) * 1000000L };

				nanosleep(&ts, NULL);
			}
			r = run(c, EVENT_SQL, 3, p);	/* autocommit: committed on return */
			fprintf(out, "%s %lld\n", PQgetvalue(r, 0, 0), wall_ms());
			PQclear(r);
		}
		fclose(out);
		fprintf(stderr, "deliver_load: %lld events in %.1f s\n", n,
		    (double)(wall_ms() - t0) / 1000.0);
	} else {
		fprintf(stderr, "deliver_load: bad arguments\n");
		return 2;
	}
	PQfinish(c);
	arena_free(&a);
	config_free(&cfg);
	return 0;
}
