/*
 * The biller simulator for the end-to-end suites: see sim.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <curl/curl.h>
#include <json-c/json.h>

#include "harness.h"
#include "sim.h"

#define SIM_READY_MS	20000
#define SIM_STOP_MS	10000
#define SIM_ARGS_MAX	24

/* What every process of the suite sees. */
struct sim_shared {
	int	 port;		/* 0 until the first start */
	pid_t	 pid;		/* the simulator, 0 when not running */
	pid_t	 keeper;
	int	 fd;		/* the suite's end of the keeper's socketpair */
	char	 prog[PATH_MAX];
	char	 ready[PATH_MAX];
	char	 log[PATH_MAX];
	char	 billers[256], today[16];
	int	 customers, statements, session_ttl;
};

static struct sim_shared *S;

static long long
now_ms(void)
{
	return harness_now_ms();
}

/* ---- the keeper ---- */

/* Exec the simulator on S->port (0 the first time); runs in the child. */
static void
sim_exec(void)
{
	char port[16], customers[16], statements[16], ttl[16];
	const char *argv[SIM_ARGS_MAX];
	int n = 0, fd;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if ((fd = open(S->log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644)) >= 0) {
		dup2(fd, 1);
		dup2(fd, 2);
	}
	snprintf(port, sizeof(port), "%d", S->port);
	snprintf(customers, sizeof(customers), "%d", S->customers);
	snprintf(statements, sizeof(statements), "%d", S->statements);
	snprintf(ttl, sizeof(ttl), "%d", S->session_ttl);
	argv[n++] = "/usr/bin/python3";
	argv[n++] = S->prog;
	argv[n++] = "--host";
	argv[n++] = "127.0.0.1";
	argv[n++] = "--port";
	argv[n++] = port;
	argv[n++] = "--billers";
	argv[n++] = S->billers;
	argv[n++] = "--customers";
	argv[n++] = customers;
	argv[n++] = "--statements";
	argv[n++] = statements;
	argv[n++] = "--session-ttl";
	argv[n++] = ttl;
	argv[n++] = "--ready-file";
	argv[n++] = S->ready;
	argv[n++] = "--quiet";
	if (S->today[0] != '\0') {
		argv[n++] = "--today";
		argv[n++] = S->today;
	}
	argv[n] = NULL;
	execv(argv[0], (char *const *)argv);
	_exit(127);
}

/* Start the simulator and wait for its ready file: the port, or -1. */
static int
keeper_start(void)
{
	long long end = now_ms() + SIM_READY_MS;
	pid_t pid;

	unlink(S->ready);
	if ((pid = fork()) < 0)
		return -1;
	if (pid == 0)
		sim_exec();
	S->pid = pid;
	while (now_ms() < end) {
		FILE *f = fopen(S->ready, "r");
		int port = 0, st;

		if (f != NULL) {
			if (fscanf(f, "%d", &port) != 1)
				port = 0;
			fclose(f);
			if (port > 0) {
				S->port = port;
				return port;
			}
		}
		if (waitpid(pid, &st, WNOHANG) == pid) {
			S->pid = 0;
			return -1;
		}
		harness_sleep_ms(20);
	}
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	S->pid = 0;
	return -1;
}

/* Signal the simulator and reap it (SIGKILL after SIM_STOP_MS). */
static int
keeper_signal(int sig)
{
	long long end = now_ms() + SIM_STOP_MS;
	pid_t pid = S->pid;

	if (pid <= 0)
		return 0;
	kill(pid, sig);
	while (waitpid(pid, NULL, WNOHANG) != pid) {
		if (now_ms() > end) {
			kill(pid, SIGKILL);
			waitpid(pid, NULL, 0);
			break;
		}
		harness_sleep_ms(10);
	}
	S->pid = 0;
	return 0;
}

/* The keeper's loop: one byte per request ('S'tart, 'K'ill, 'T'erm, 'Q'uit),
 * an int answer (the port, 0, or -1). */
static void
keeper(int fd)
{
	char c;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	setpgid(0, 0);
	signal(SIGPIPE, SIG_IGN);
	while (read(fd, &c, 1) == 1) {
		int rc = -1;

		switch (c) {
		case 'S':
			rc = S->pid > 0 ? S->port : keeper_start();
			break;
		case 'K':
			rc = keeper_signal(SIGKILL);
			break;
		case 'T':
		case 'Q':
			rc = keeper_signal(SIGTERM);
			break;
		}
		if (write(fd, &rc, sizeof(rc)) != (ssize_t)sizeof(rc) || c == 'Q')
			break;
	}
	keeper_signal(SIGTERM);
	_exit(0);
}

/* One request to the keeper. */
static int
ask(char c)
{
	int rc = -1;

	if (S == NULL || S->keeper <= 0)
		return -1;
	if (write(S->fd, &c, 1) != 1 || read(S->fd, &rc, sizeof(rc)) != (ssize_t)sizeof(rc))
		return -1;
	return rc;
}

/* ---- the suite's side ---- */

/* dir/name into out (PATH_MAX); -1 when too long. */
static int
path_of(char *out, const char *dir, const char *name)
{
	int n = snprintf(out, PATH_MAX, "%.*s/%s", PATH_MAX - 64, dir, name);

	return n > 0 && n < PATH_MAX ? 0 : -1;
}

int
sim_start(const struct sim_opts *o)
{
	const char *src = getenv("BDS_SRCDIR");
	char srcdir[PATH_MAX];
	int sv[2];
	pid_t pid;

	if (S == NULL) {
		S = mmap(NULL, sizeof(*S), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
		    -1, 0);
		if (S == MAP_FAILED) {
			S = NULL;
			return -1;
		}
	}
	memset(S, 0, sizeof(*S));
	if (realpath(src != NULL && *src != '\0' ? src : ".", srcdir) == NULL)
		return -1;
	if (path_of(S->prog, srcdir, "tools/biller-sim/biller-sim") != 0 ||
	    path_of(S->ready, harness_dir(), "biller-sim.ready") != 0 ||
	    path_of(S->log, harness_dir(), "biller-sim.log") != 0)
		return -1;
	snprintf(S->billers, sizeof(S->billers), "%s",
	    o != NULL && o->billers != NULL ? o->billers : "power,water");
	snprintf(S->today, sizeof(S->today), "%s", o != NULL && o->today != NULL ? o->today : "");
	S->customers = o != NULL && o->customers > 0 ? o->customers : 20;
	S->statements = o != NULL && o->statements > 0 ? o->statements : 12;
	S->session_ttl = o != NULL && o->session_ttl > 0 ? o->session_ttl : 900;
	if (access(S->prog, R_OK) != 0) {
		fprintf(stderr, "sim: %s: %s\n", S->prog, strerror(errno));
		return -1;
	}
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
		return -1;
	if ((pid = fork()) < 0)
		return -1;
	if (pid == 0) {
		close(sv[0]);
		keeper(sv[1]);
	}
	close(sv[1]);
	S->fd = sv[0];
	S->keeper = pid;
	if (ask('S') <= 0) {
		fprintf(stderr, "sim: the simulator did not start (see %s)\n", S->log);
		sim_stop();
		return -1;
	}
	return 0;
}

void
sim_stop(void)
{
	if (S == NULL || S->keeper <= 0)
		return;
	ask('Q');
	close(S->fd);
	waitpid(S->keeper, NULL, 0);
	S->keeper = 0;
}

int
sim_kill(void)
{
	return ask('K') == 0 ? 0 : -1;
}

int
sim_restart(void)
{
	return ask('S') > 0 ? 0 : -1;
}

int
sim_running(void)
{
	return S != NULL && S->pid > 0 && kill(S->pid, 0) == 0;
}

int
sim_port(void)
{
	return S != NULL ? S->port : 0;
}

char *
sim_base_url(const char *key, char *buf, size_t len)
{
	snprintf(buf, len, "http://127.0.0.1:%d/b/%s", sim_port(), key);
	return buf;
}

struct sbuf {
	char	*p;
	size_t	 len;
};

static size_t
sbuf_put(char *d, size_t size, size_t n, void *arg)
{
	struct sbuf *b = arg;
	char *p = realloc(b->p, b->len + size * n + 1);

	if (p == NULL)
		return 0;
	memcpy(p + b->len, d, size * n);
	b->p = p;
	b->len += size * n;
	b->p[b->len] = '\0';
	return size * n;
}

int
sim_admin(const char *method, const char *path, const char *body, struct json_object **out)
{
	struct curl_slist *h = curl_slist_append(NULL, "Content-Type: application/json");
	struct sbuf b = { NULL, 0 };
	char url[512];
	long status = -1;
	CURL *c = curl_easy_init();

	if (out != NULL)
		*out = NULL;
	snprintf(url, sizeof(url), "http://127.0.0.1:%d%s", sim_port(), path);
	if (c == NULL || h == NULL)
		goto out;
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, 10000L);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_PROXY, "");
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, sbuf_put);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &b);
	if (body != NULL)
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
	if (curl_easy_perform(c) != CURLE_OK)
		goto out;
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
	if (out != NULL && b.p != NULL)
		*out = json_tokener_parse(b.p);
out:
	if (status != 200 && b.p != NULL)
		fprintf(stderr, "sim: %s %s: %ld %s\n", method, path, status, b.p);
	free(b.p);
	curl_slist_free_all(h);
	curl_easy_cleanup(c);
	return (int)status;
}

int
sim_knobs(const char *key, const char *user, const char *knobs)
{
	char path[256];

	snprintf(path, sizeof(path), "/_admin/accounts/%s/%s", key, user);
	return sim_admin("POST", path, knobs, NULL) == 200 ? 0 : -1;
}

int
sim_biller_knobs(const char *key, const char *knobs)
{
	char path[256];

	snprintf(path, sizeof(path), "/_admin/billers/%s", key);
	return sim_admin("POST", path, knobs, NULL) == 200 ? 0 : -1;
}

int
sim_reset(void)
{
	return sim_admin("POST", "/_admin/reset", "{}", NULL) == 200 ? 0 : -1;
}

long long
sim_counter(const char *key, const char *name)
{
	struct json_object *o = NULL, *b, *v;
	const char *dot = strchr(name, '.');
	char group[64];
	long long n = -1;

	if (sim_admin("GET", "/_admin/stats", NULL, &o) != 200)
		goto out;
	if (json_object_object_get_ex(o, "billers", &b) && json_object_object_get_ex(b, key, &b)) {
		if (dot != NULL) {
			snprintf(group, sizeof(group), "%.*s", (int)(dot - name), name);
			if (!json_object_object_get_ex(b, group, &b))
				goto out;
			name = dot + 1;
		}
		if (json_object_object_get_ex(b, name, &v))
			n = json_object_get_int64(v);
	}
out:
	json_object_put(o);
	return n;
}
