/*
 * bds-api: the FastCGI program. Flags, the listening socket, then the
 * prefork master (or, with --workers 0, one worker on the socket it was
 * handed, as under spawn-fcgi -F N).
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/config.h"
#include "core/nodump.h"
#include "core/crypto.h"
#include "core/log.h"
#include "core/router.h"
#include "core/server.h"

static void
usage(FILE *f)
{
	fprintf(f,
	    "usage: bds-api [--config FILE] [--workers N] [--socket PATH] [--check]\n"
	    "       bds-api --routes [--json]\n"
	    "  --config FILE   settings file (key = value); BDS_<KEY> overrides\n"
	    "  --workers N     prefork N workers (0: serve in this process)\n"
	    "  --socket PATH   create the FastCGI socket at PATH; without it an\n"
	    "                  inherited socket (systemd LISTEN_FDS or fd 0 from\n"
	    "                  spawn-fcgi) is used, else socket_path from the config\n"
	    "  --check         load the configuration and exit 0 when it is valid\n"
	    "  --routes        print the route table (method, pattern, auth, flags);\n"
	    "                  with --json also each route's declared input as JSON Schema\n"
	    "SIGHUP to the master re-executes the program at the same path (binary\n"
	    "upgrade, same pid, socket kept, old workers drain); TERM drains and exits.\n");
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "workers", required_argument, NULL, 'w' },
		{ "socket", required_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ "check", no_argument, NULL, 'k' },
		{ "routes", no_argument, NULL, 'r' },
		{ "json", no_argument, NULL, 'j' },
		{ NULL, 0, NULL, 0 }
	};
	const char *config_path = NULL, *socket_path = NULL;
	struct config cfg;
	char err[512];
	const char *up = getenv("BDS_UPGRADE_FD");
	int workers = -1, fd, ch, rc, created = 0, check = 0, routes_out = 0, json = 0;

	while ((ch = getopt_long(argc, argv, "c:w:s:hVk", opts, NULL)) != -1) {
		switch (ch) {
		case 'c': config_path = optarg; break;
		case 'w': workers = atoi(optarg); break;
		case 's': socket_path = optarg; break;
		case 'k': check = 1; break;
		case 'r': routes_out = 1; break;
		case 'j': json = 1; break;
		case 'V': printf("bds-api %s\n", PACKAGE_VERSION); return 0;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (routes_out) {
		router_print(stdout, routes, routes_count, json);
		return fflush(stdout) == 0 ? 0 : 1;
	}
	/* the config's keys, then the cards in request bodies: no core dump */
	if (nodump() != 0) {
		fprintf(stderr, "bds-api: core dumps cannot be turned off: %s\n", strerror(errno));
		return 1;
	}
	if (config_load(&cfg, config_path, err, sizeof(err)) != 0) {
		fprintf(stderr, "bds-api: %s\n", err);
		return 1;
	}
	if (check) {
		config_free(&cfg);
		return 0;
	}
	if (workers < 0)
		workers = cfg.workers;
	if (log_open(cfg.log_path) != 0) {
		fprintf(stderr, "bds-api: cannot open log %s: %s\n", cfg.log_path, strerror(errno));
		return 1;
	}
	if (crypto_setup() != 0) {
		fprintf(stderr, "bds-api: libsodium failed to initialise\n");
		return 1;
	}
	if (up != NULL) {
		/* Re-executed by our own master on SIGHUP: its socket, as is. */
		const char *path = getenv("BDS_UPGRADE_UNLINK");

		fd = atoi(up);
		created = path != NULL && *path != '\0';
		socket_path = created ? path : NULL;	/* environ outlives main */
		unsetenv("BDS_UPGRADE_FD");
		unsetenv("BDS_UPGRADE_UNLINK");
	} else if (socket_path == NULL && (fd = server_listen_inherited()) >= 0) {
		/* inherited from systemd or spawn-fcgi */
	} else {
		if (socket_path == NULL)
			socket_path = cfg.socket_path;
		if ((fd = server_listen_path(socket_path, cfg.socket_mode, cfg.socket_group)) < 0) {
			fprintf(stderr, "bds-api: cannot listen on %s: %s\n", socket_path,
			    strerror(errno));
			return 1;
		}
		created = 1;
	}
	if (workers == 0) {
		rc = server_worker(&cfg, fd);
	} else {
		server_set_exec(argv[0], argv, created ? socket_path : NULL);
		rc = server_master(&cfg, config_path, fd, workers);
	}
	if (created)
		unlink(socket_path);
	close(fd);
	config_free(&cfg);
	return rc;
}
