/*
 * bench/bare.c: the baseline for bench/run. The least a libfcgi program can
 * do behind nginx: blocking FCGX_Accept_r on a unix socket in N forked
 * workers, one persistent libpq connection per worker, no arena, no router,
 * no JSON library, no log line.
 *
 *   GET .../hello    {"status":"ok"}
 *   GET .../select   one prepared SELECT by primary key on bench_items
 *                    (id cycles 1..1000 per worker), the row as JSON
 *   GET .../bill/ID  one prepared SELECT of the bill's stored entity by id
 *                    (bills.entity, bills_by_id), written as the body as
 *                    stored: what GET /v1/bills/{id} sends, without the key
 *                    check, the tenant condition or anything else
 *
 * Response headers as bds-api sends them (Status, Content-Type,
 * X-Request-Id from nginx's REQUEST_ID, Cache-Control, X-Content-Type-
 * Options), so nginx and wrk see the same bytes give or take the body.
 *
 * Bench-only, not part of the autotools build. bench/run builds it with
 *   gcc -std=c11 -O2 -Wall -Wextra -o bare bench/bare.c -lfcgi -lpq
 *
 * Usage:
 *   bare --socket PATH --workers N --db CONNINFO   own socket, N forked workers
 *   spawn-fcgi -s PATH -F N -- bare --db CONNINFO  inherited fd 0, one process
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fcgiapp.h>
#include <libpq-fe.h>

#define NITEMS 1000

static const char *conninfo = "dbname=bds";

static int
listen_unix(const char *path)
{
	struct sockaddr_un sa;
	int fd;

	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(sa.sun_path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	strcpy(sa.sun_path, path);
	unlink(path);
	if ((fd = socket(AF_UNIX, SOCK_STREAM, 0)) < 0)
		return -1;
	/* Same backlog and mode as bds-api's bench config. */
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 ||
	    chmod(path, 0666) != 0 || listen(fd, 1024) != 0) {
		close(fd);
		return -1;
	}
	return fd;
}

static PGconn *
db_connect(void)
{
	PGconn *c = PQconnectdb(conninfo);
	PGresult *res;

	if (PQstatus(c) != CONNECTION_OK) {
		fprintf(stderr, "bare: connect: %s", PQerrorMessage(c));
		PQfinish(c);
		return NULL;
	}
	res = PQprepare(c, "item", "SELECT id, name FROM bench_items WHERE id = $1", 1, NULL);
	if (PQresultStatus(res) != PGRES_COMMAND_OK) {
		fprintf(stderr, "bare: prepare: %s", PQerrorMessage(c));
		PQclear(res);
		PQfinish(c);
		return NULL;
	}
	PQclear(res);
	/* bench/run --targets bills; absent table (other sets): no /bill */
	res = PQprepare(c, "bill", "SELECT entity FROM bills WHERE id = $1", 1, NULL);
	PQclear(res);
	return c;
}

/* JSON string body without the quotes; the bench rows are plain ASCII, but
 * escape what JSON requires anyway so the output is always valid. */
static size_t
json_escape(char *dst, size_t cap, const char *s)
{
	size_t j = 0;

	for (; *s != '\0' && j + 7 < cap; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\') {
			dst[j++] = '\\';
			dst[j++] = (char)c;
		} else if (c < 0x20) {
			j += (size_t)snprintf(dst + j, cap - j, "\\u%04x", c);
		} else {
			dst[j++] = (char)c;
		}
	}
	dst[j] = '\0';
	return j;
}

static void
respond(FCGX_Request *fr, int status, const char *reason, const char *body, int blen)
{
	const char *rid = FCGX_GetParam("REQUEST_ID", fr->envp);
	char head[512];
	int n;

	n = snprintf(head, sizeof(head),
	    "Status: %d %s\r\n"
	    "Content-Type: application/json; charset=utf-8\r\n"
	    "X-Request-Id: %s\r\n"
	    "Cache-Control: no-store\r\n"
	    "X-Content-Type-Options: nosniff\r\n"
	    "\r\n", status, reason, rid != NULL ? rid : "-");
	FCGX_PutStr(head, n, fr->out);
	FCGX_PutStr(body, blen, fr->out);
}

static int
ends_with(const char *s, size_t len, const char *suffix)
{
	size_t sl = strlen(suffix);

	return len >= sl && memcmp(s + len - sl, suffix, sl) == 0;
}

/* The prepared statement stmt with one parameter, reconnecting once if the
 * connection broke, like bds-api; NULL (503 written) when it failed. */
static PGresult *
exec1(FCGX_Request *fr, PGconn **db, const char *stmt, const char *param)
{
	static const char down[] = "{\"error_code\":\"SERVICE_UNAVAILABLE\"}";
	const char *params[1] = { param };
	PGresult *res;

	for (int attempt = 0; attempt < 2; attempt++) {
		if (*db == NULL && (*db = db_connect()) == NULL)
			break;
		res = PQexecPrepared(*db, stmt, 1, params, NULL, NULL, 0);
		if (PQresultStatus(res) == PGRES_TUPLES_OK)
			return res;
		PQclear(res);
		if (PQstatus(*db) == CONNECTION_OK)
			break;
		PQfinish(*db);
		*db = NULL;
	}
	respond(fr, 503, "Service Unavailable", down, (int)sizeof(down) - 1);
	return NULL;
}

static void
not_found(FCGX_Request *fr)
{
	static const char nf[] = "{\"error_code\":\"NOT_FOUND\"}";

	respond(fr, 404, "Not Found", nf, (int)sizeof(nf) - 1);
}

/* GET .../bill/ID: the stored entity of bill ID, as stored. */
static void
bill_reply(FCGX_Request *fr, PGconn **db, const char *id, size_t idlen)
{
	char idbuf[64];
	PGresult *res;

	if (idlen == 0 || idlen >= sizeof(idbuf)) {
		not_found(fr);
		return;
	}
	memcpy(idbuf, id, idlen);
	idbuf[idlen] = '\0';
	if ((res = exec1(fr, db, "bill", idbuf)) == NULL)
		return;
	if (PQntuples(res) != 1)
		not_found(fr);
	else
		respond(fr, 200, "OK", PQgetvalue(res, 0, 0), PQgetlength(res, 0, 0));
	PQclear(res);
}

static void
serve(FCGX_Request *fr, PGconn **db, unsigned *seq)
{
	const char *uri = FCGX_GetParam("DOCUMENT_URI", fr->envp);
	const char *bill;
	size_t len;
	char body[512];
	int n;

	if (uri == NULL)
		uri = "";
	len = strcspn(uri, "?");
	if ((bill = strstr(uri, "/bill/")) != NULL && bill < uri + len) {
		bill_reply(fr, db, bill + 6, len - (size_t)(bill + 6 - uri));
	} else if (ends_with(uri, len, "/hello")) {
		static const char hello[] = "{\"status\":\"ok\"}";

		respond(fr, 200, "OK", hello, (int)sizeof(hello) - 1);
	} else if (ends_with(uri, len, "/select")) {
		char idbuf[16], name[256];
		PGresult *res;

		snprintf(idbuf, sizeof(idbuf), "%u", (*seq)++ % NITEMS + 1);
		if ((res = exec1(fr, db, "item", idbuf)) == NULL)
			return;
		if (PQntuples(res) != 1) {
			PQclear(res);
			not_found(fr);
			return;
		}
		json_escape(name, sizeof(name), PQgetvalue(res, 0, 1));
		n = snprintf(body, sizeof(body), "{\"id\":%s,\"name\":\"%s\"}",
		    PQgetvalue(res, 0, 0), name);
		PQclear(res);
		respond(fr, 200, "OK", body, n);
	} else {
		not_found(fr);
	}
}

static int
worker(int fd)
{
	FCGX_Request fr;
	PGconn *db;
	unsigned seq = (unsigned)getpid();

	signal(SIGPIPE, SIG_IGN);
	if (FCGX_Init() != 0 || FCGX_InitRequest(&fr, fd, 0) != 0)
		return 1;
	db = db_connect();	/* early, like bds-api; reconnects on demand */
	while (FCGX_Accept_r(&fr) >= 0) {
		serve(&fr, &db, &seq);
		FCGX_Finish_r(&fr);
	}
	PQfinish(db);
	return 0;
}

static volatile sig_atomic_t stop;

static void
on_term(int sig)
{
	(void)sig;
	stop = 1;
}

int
main(int argc, char **argv)
{
	const char *sock = NULL;
	int nworkers = 1, fd;
	pid_t *pids;
	struct sigaction sa;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--socket") == 0 && i + 1 < argc)
			sock = argv[++i];
		else if (strcmp(argv[i], "--workers") == 0 && i + 1 < argc)
			nworkers = atoi(argv[++i]);
		else if (strcmp(argv[i], "--db") == 0 && i + 1 < argc)
			conninfo = argv[++i];
		else {
			fprintf(stderr, "usage: bare [--socket PATH --workers N] --db CONNINFO\n");
			return 2;
		}
	}
	if (sock == NULL)
		return worker(0);	/* spawn-fcgi: the socket is fd 0 */
	if (nworkers < 1 || nworkers > 256 || (fd = listen_unix(sock)) < 0) {
		fprintf(stderr, "bare: cannot listen on %s: %s\n", sock, strerror(errno));
		return 1;
	}
	if ((pids = calloc((size_t)nworkers, sizeof(*pids))) == NULL)
		return 1;
	for (int i = 0; i < nworkers; i++) {
		if ((pids[i] = fork()) == 0) {
			prctl(PR_SET_PDEATHSIG, SIGTERM);	/* never outlive the master */
			_exit(worker(fd));
		}
		if (pids[i] < 0) {
			perror("bare: fork");
			return 1;
		}
	}
	/* The master only waits: SIGTERM/SIGINT stop every worker. */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_term;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	while (!stop) {
		int st;
		pid_t p = wait(&st);

		if (p < 0 && errno != EINTR)
			break;
		if (p > 0)
			fprintf(stderr, "bare: worker %d exited\n", (int)p);
	}
	for (int i = 0; i < nworkers; i++)
		if (pids[i] > 0)
			kill(pids[i], SIGTERM);
	while (wait(NULL) > 0 || errno == EINTR)
		;
	unlink(sock);
	free(pids);
	return 0;
}
