#ifndef BDS_E2E_HARNESS_H
#define BDS_E2E_HARNESS_H
/*
 * End-to-end harness: one real stack per suite, driven like a client would.
 *
 *   throwaway PostgreSQL ◄── bds-api master + N workers ◄── nginx (loopback)
 *   (initdb in a temp dir,     (app/bds-api, config        (nginx/bds-dev.conf.in
 *    unix socket only)          written by the harness)     rendered, free ports)
 *
 * A suite starts the stack once in a Check *unchecked* fixture and stops it
 * in the matching teardown:
 *
 *	static void setup(void)
 *	{
 *		struct harness_opts o;
 *
 *		harness_opts_defaults(&o);
 *		o.body_limit = 65536;
 *		harness_fixture_start(&o);	(ck_abort on failure, logs dumped)
 *	}
 *	tcase_add_unchecked_fixture(tc, setup, harness_fixture_stop);
 *	tcase_add_checked_fixture(tc, harness_fixture_recover, NULL);
 *	tcase_set_timeout(tc, 120);
 *	...
 *	int main(void) { return harness_run_suite(my_suite()); }
 *
 * Tests then talk to the stack as a client would (harness_request() through
 * nginx, or harness_fcgi_*() straight to the app's socket), break it on
 * purpose (harness_pg_stop(), harness_api_signal()...) and assert on the
 * envelopes (harness_assert_coded()...). The checked fixture
 * harness_fixture_recover() restarts whatever an earlier test left down.
 *
 * Process model. Check forks one child per test, and kills that child's
 * process group when the test ends, so nothing a test forks may outlive it.
 * The harness therefore forks a small "keeper" process at start: the keeper
 * is the parent of postgres, bds-api and nginx, reaps them, and performs
 * every start/stop on request (over a socketpair) from whichever process
 * asks — the suite's main process or a test child. State (pids, ports,
 * paths, exit statuses) lives in shared memory, so a restart done by one
 * test is seen by the next and by the final teardown. Every child of the
 * keeper has a parent-death signal, and the keeper has one on the test
 * program: if the test program dies, the stack dies with it and the temp
 * directory is removed. Set BDS_E2E_KEEP=1 to keep the temp directory.
 * PostgreSQL refuses to run as root: when euid is 0, initdb, createdb and
 * postgres run as user `postgres` (setuid in the forked child, so the
 * death signal reaches postgres itself rather than a runuser wrapper).
 * bds-api and bdsctl run with every BDS_* variable removed from their
 * environment, so a developer's overrides never leak into a test.
 *
 * The temp dir (/tmp/bds-e2e-XXXXXX, mode 0755 so nginx workers running
 * as nobody can reach the socket):
 *	pgdata/ pgsock/ postgres.log initdb.log	the cluster, database "bds"
 *	bds-api.conf bds-api.log requests.log	config, stderr, log_path
 *	api.sock bdsctl.log			FastCGI socket, bdsctl output
 *	bds-deliver.log mail/			bds-deliver output, mail spool
 *	nginx/ (nginx.conf error.log access.log stderr.log temp dirs)
 *
 * Environment: BDS_SRCDIR and BDS_BUILDDIR (set by `make check`, default
 * "."), BDS_PG_BINDIR (default /usr/lib/postgresql/15/bin), BDS_NGINX
 * (default /usr/sbin/nginx, else /usr/bin/nginx), BDS_E2E_KEEP.
 * BDS_E2E_VALGRIND=DIR runs bds-api (master and workers), bds-jobs,
 * bds-deliver and bdsctl under valgrind's memcheck, one log per process in
 * DIR named SUITE.PID.log, ending in an ERROR SUMMARY (errors and
 * definite leaks) when the process exits (scripts/test --valgrind reads
 * them). A process a test kills with SIGKILL ends without one: its leaks
 * are not checked.
 *
 * Every function returning int returns 0 on success and -1 on failure with
 * harness_error() describing it, unless it says otherwise. All waits are
 * bounded. Only loopback addresses and unix sockets are used.
 */
#include <stddef.h>
#include <sys/types.h>

#include <check.h>

struct json_object;

/* ------------------------------------------------------------------ */
/* Stack lifecycle                                                     */

struct harness_opts {
	int		 workers;	/* bds-api --workers (default 2) */
	long long	 body_limit;	/* app body limit in bytes (default 1 MiB) */
	int		 drain_timeout;	/* seconds SIGTERM drains (default 10) */
	const char	*rate_ip;	/* nginx @RATE_IP@ (default "10000r/s") */
	const char	*burst_ip;	/* nginx @BURST_IP@ (default "10000") */
	const char	*rate_key;	/* nginx @RATE_KEY@ (default "10000r/s") */
	const char	*burst_key;	/* nginx @BURST_KEY@ (default "10000") */
	const char	*docs_url;	/* config docs_url and @DOCS_URL@, no
					 * trailing slash (default NULL: no
					 * docs_url in the config, so the
					 * app's default, api_url's /docs,
					 * which serves /docs/errors; nginx's
					 * the same) */
	const char	*extra_config;	/* appended verbatim to the config file */
	const char	*mail;		/* mail_transport: NULL or "spool" (.eml
					 * files in harness_mail_dir()), or "smtp"
					 * to smtp://127.0.0.1:harness_smtp_port(),
					 * where a test runs t/e2e/smtp_sink */
	const char	*smtp_user;	/* smtp_user and smtp_password (NULL: none) */
	const char	*smtp_password;
	/* -- high availability -- */
	const char	*database_url;	/* an outside database (a pg_auto_failover
					 * formation's multi-host URL, scripts/ha):
					 * the harness makes no cluster, and
					 * harness_pg_stop/start fail; database
					 * bds exists, empty or migrated (default
					 * NULL: a throwaway cluster) */
	const char	*read_url;	/* db.read_url (reads on a standby,
					 * core/standby.h); NULL: none, or
					 * BDS_E2E_READ_SELF=1: the database
					 * itself, read-only, so a read route
					 * that writes fails */
	/* -- a full documents disk -- */
	long long	 data_disk_bytes; /* > 0: data_dir is a tmpfs of this size
					 * the harness mounts (root only; start
					 * fails when the mount is refused) and
					 * unmounts at stop, so a test fills it
					 * with a file of its own under
					 * harness_data_dir() (default 0: a
					 * plain directory of the temp dir) */
};

/* Fill o with the defaults above. */
void	 harness_opts_defaults(struct harness_opts *o);

/*
 * Build the whole stack: temp dir, PostgreSQL cluster and database `bds`,
 * config file, `bdsctl migrate`, bds-api, nginx; returns once
 * GET /v1/health on the api host answers 200 (bounded at ~15 s).
 * o may be NULL for the defaults. On failure everything started is torn
 * down again and the logs are printed to stderr. Call from the suite's main
 * process (an unchecked fixture), one stack at a time.
 */
int	 harness_start(const struct harness_opts *o);
/* Stop nginx, bds-api (SIGTERM, then SIGKILL after a bound) and postgres,
 * scan the bds-api, request and bdsctl logs for sanitizer reports (printed, and
 * counted for harness_run_suite()), and remove the temp dir. Safe to call
 * when nothing runs. */
void	 harness_stop(void);

/*
 * A suite's whole main(): run s (CK_ENV verbosity), free it, and return
 * EXIT_SUCCESS only if no test failed and no stack's log held a
 * sanitizer report (ASan, LSan, UBSan) — those can surface at shutdown,
 * after every test has passed.
 */
int	 harness_run_suite(Suite *s);

/* Fixture forms: harness_start() that aborts the tcase on failure;
 * harness_stop(); and harness_recover() that fails the test on failure. */
void	 harness_fixture_start(const struct harness_opts *o);
void	 harness_fixture_start_default(void);
void	 harness_fixture_stop(void);
void	 harness_fixture_recover(void);

/*
 * Bring back whatever a previous test left stopped (postgres, bds-api,
 * nginx) and wait until health answers 200. Cheap when all is up: a good
 * checked fixture for tcases whose tests stop parts of the stack.
 */
int	 harness_recover(void);

/* The last failure message of this process (static storage). */
const char *harness_error(void);
/* Print the tails of the stack's logs (bds-api, nginx, postgres). */
void	 harness_dump_logs(void);

/* ------------------------------------------------------------------ */
/* Where things are (valid while the stack runs; static storage)       */

const char *harness_dir(void);		/* the temp dir */
const char *harness_config_path(void);	/* bds-api config file */
const char *harness_socket_path(void);	/* FastCGI socket */
const char *harness_database_url(void);	/* libpq conninfo of database bds */
const char *harness_api_log_path(void);	/* bds-api stderr */
const char *harness_deliver_log_path(void); /* bds-deliver output and log */
const char *harness_mail_dir(void);	/* mail_spool_dir: <dir>/mail */
const char *harness_data_dir(void);	/* data_dir: <dir>/data */
/* The loopback port smtp_url names when opts.mail is "smtp", else 0.
 * Nothing listens there until a test starts a sink on it. */
int	 harness_smtp_port(void);
/* "api", "sandbox" or "link" → its loopback port / base URL
 * ("http://127.0.0.1:PORT"); 0 / NULL for another name. */
int	 harness_port(const char *host);
const char *harness_base_url(const char *host);

/* ------------------------------------------------------------------ */
/* Processes                                                           */

/* PostgreSQL: fast shutdown and wait for the postmaster to exit;
 * start and wait until it accepts connections. */
int	 harness_pg_stop(void);
int	 harness_pg_start(void);

/* bds-api master pid (0 when not running). */
pid_t	 harness_api_pid(void);
/* Fill out with up to max worker pids (children of the master, sorted);
 * returns how many exist (may exceed max). */
size_t	 harness_api_workers(pid_t *out, size_t max);
/*
 * Wait until the master has exactly n workers, none of which is in
 * avoid[0..navoid) (pass the old pids to wait for replacements), and
 * that set has held still for a second (a reload in flight passes through
 * such sets). 0 once so, -1 after timeout_ms and that second.
 */
int	 harness_api_wait_workers(size_t n, const pid_t *avoid, size_t navoid,
	    int timeout_ms);
/* kill(master, sig). */
int	 harness_api_signal(int sig);
/* Wait for the master to exit: 0 and *wstatus (waitpid status, may be
 * NULL) once it has, -1 after timeout_ms. */
int	 harness_api_wait_exit(int timeout_ms, int *wstatus);
/* Start bds-api (again) and wait until health answers 200. */
int	 harness_api_start(void);
/* SIGTERM and wait (drain_timeout + a margin), then SIGKILL the group. */
int	 harness_api_stop(void);
/* SIGKILL master and workers at once and remove the socket file. */
int	 harness_api_kill(void);

/*
 * Run `bdsctl --config FILE args...` (args NULL-terminated) and wait at
 * most 60 s. Its output goes to bdsctl.log in the temp dir. Returns the
 * exit status, or -1 when it could not run or was killed.
 */
int	 harness_bdsctl(const char *const args[]);

/*
 * bds-deliver with the stack's config (mail settings per opts.mail); its
 * output goes to bds-deliver.log. once: `bds-deliver --config FILE
 * --once` run from the calling process (any thread), at most 90 s; returns
 * the exit status, or -1 when it could not run or was killed. start: a
 * long-running one (`--max-seconds 0` plus args, NULL-terminated, at most
 * 8) owned by the keeper like bds-api; returns once it runs. stop:
 * SIGTERM and wait (15 s, then SIGKILL): 0 when it exited 0 or was not
 * running, else -1. harness_stop() stops it too.
 */
int	 harness_deliver_once(void);
int	 harness_deliver_start(const char *const args[]);
int	 harness_deliver_stop(void);
pid_t	 harness_deliver_pid(void);		/* 0 when not running */

/* ---- jobs slice ---- */
/*
 * bds-jobs: every stack runs one (`--max-seconds 0`, the config's
 * jobs_workers), owned by the keeper; its output goes to bds-jobs.log.
 * start: again after stop/kill; stop: SIGTERM and wait (30 s, then
 * SIGKILL): 0 when it exited 0 or was not running; kill: SIGKILL to its
 * process group (supervisor and workers at once, mid-job). run: one more
 * instance `bds-jobs --config FILE args...` from the calling process, at
 * most timeout_ms: its exit status or -1. wait_idle: until no job is
 * running and none is pending and due (a job waiting for its retry
 * backoff does not count; one deferred for a busy biller slot, due again
 * within 500 ms, does), 0, or -1 after timeout_ms.
 */
int	 harness_jobs_start(void);
int	 harness_jobs_stop(void);
int	 harness_jobs_kill(void);
pid_t	 harness_jobs_pid(void);		/* 0 when not running */
int	 harness_jobs_run(const char *const args[], int timeout_ms);
int	 harness_jobs_wait_idle(int timeout_ms);
/* Until no job of kind (of subject_id, when not NULL) is pending or
 * running, retries waiting for their backoff included: 0, or -1 after
 * timeout_ms. */
int	 harness_jobs_wait_settled(const char *kind, const char *subject_id, int timeout_ms);
const char *harness_jobs_log_path(void);

/* ------------------------------------------------------------------ */
/* Responses (HTTP through nginx, or raw FastCGI)                      */

struct harness_header {
	char		*name;
	char		*value;
};

struct harness_resp {
	long		 status;	/* HTTP status; 0 when the exchange failed */
	char		 error[256];	/* why, when status is 0 */
	struct harness_header *headers;	/* of the final response, in order */
	size_t		 nheaders;
	char		*body;		/* raw body, NUL-terminated (never NULL) */
	size_t		 body_len;
	struct json_object *json;	/* body parsed as JSON; NULL if it is not */
	/* raw FastCGI only */
	int		 fcgi_complete;	/* FCGI_END_REQUEST was received */
	int		 fcgi_closed;	/* the app closed the connection first */
	unsigned	 fcgi_app_status;
	char		*fcgi_raw;	/* the whole STDOUT stream (headers+body) */
	size_t		 fcgi_raw_len;
	char		*fcgi_stderr;	/* the STDERR stream, NUL-terminated */
};

/* First header of that name (case-insensitive), or NULL. */
const char *harness_header(const struct harness_resp *r, const char *name);
/* Top-level member of the JSON body: the string, or NULL when absent or
 * not a string; the object (borrowed), or NULL. */
const char *harness_json_string(const struct harness_resp *r, const char *key);
struct json_object *harness_json_get(const struct harness_resp *r, const char *key);
/* Free a response (NULL is fine). */
void	 harness_resp_free(struct harness_resp *r);

/* ------------------------------------------------------------------ */
/* HTTP through nginx (libcurl)                                        */

/*
 * One request to http://127.0.0.1:<port of host><path>. host is "api",
 * "sandbox" or "link". headers is a NULL-terminated list of "Name: value"
 * (NULL for none). A body (may be NULL with body_len 0) is sent as is.
 * The path is sent as given (no normalisation). No redirects are
 * followed; 10 s timeout. Never returns NULL: a transport failure is
 * status 0 with error set. Free with harness_resp_free().
 */
struct harness_resp *harness_request(const char *method, const char *host,
	    const char *path, const char *const headers[], const void *body,
	    size_t body_len);
/* GET without headers or body. */
struct harness_resp *harness_get(const char *host, const char *path);
/*
 * Send n identical requests at once (libcurl multi, n ≤ 256) and wait for
 * all; out[i] receives each response. For races and rate limits.
 */
void	 harness_request_burst(size_t n, const char *method, const char *host,
	    const char *path, const char *const headers[], const void *body,
	    size_t body_len, struct harness_resp **out);
/* Poll GET /v1/health on the api host until it answers status, for at
 * most timeout_ms. 0 once it did, -1 otherwise. */
int	 harness_wait_health(long status, int timeout_ms);
/* Poll until every bds-api worker answers GET /v1/health 200 itself
 * (nginx may keep sending to one of them; after PostgreSQL comes back,
 * another may still be inside its reconnect pause). 0, or -1 after
 * timeout_ms. */
int	 harness_wait_workers_healthy(int timeout_ms);

/* ------------------------------------------------------------------ */
/* Raw FastCGI over the app's unix socket (no nginx)                   */

/*
 * A connection whose request is sent in pieces under the caller's
 * control, so a test can hold a request "in flight" inside a worker: the
 * worker that accepted the connection is mid-request while it waits for
 * the rest of the params.
 *
 *	struct harness_fcgi *f = harness_fcgi_open();
 *	harness_fcgi_params_std(f, "GET", "/v1/health", NULL, 0);
 *	harness_fcgi_send_params(f, harness_fcgi_params_pending(f) / 2);
 *	... the request is held by a worker ...
 *	harness_fcgi_end_params(f);
 *	harness_fcgi_send_stdin(f, NULL, 0);
 *	struct harness_resp *r = harness_fcgi_read(f, 5000);
 *	harness_fcgi_close(f);
 *
 * Sending functions return 0, or -1 when the peer is gone.
 */
struct harness_fcgi;

/* Connect to the socket (request id 1, role RESPONDER, no keep-conn).
 * NULL on failure (see harness_error()). */
struct harness_fcgi *harness_fcgi_open(void);
/* Queue one CGI parameter (encoded now, sent by the functions below). */
void	 harness_fcgi_param(struct harness_fcgi *f, const char *name, const char *value);
/*
 * Queue the parameters nginx would send for this request: REQUEST_METHOD,
 * REQUEST_URI (uri as given), DOCUMENT_URI/SCRIPT_NAME (path part),
 * QUERY_STRING (after '?'), CONTENT_LENGTH (when body_len > 0 or the
 * method is POST/PUT/PATCH), CONTENT_TYPE (when body_len > 0),
 * REQUEST_ID (a fresh 32-hex id), BDS_HOST_ENV (host_env, default
 * "live"), REMOTE_ADDR, SERVER_PROTOCOL and the usual rest.
 */
void	 harness_fcgi_params_std(struct harness_fcgi *f, const char *method,
	    const char *uri, const char *host_env, size_t body_len);
/* The REQUEST_ID queued by harness_fcgi_params_std() (or ""). */
const char *harness_fcgi_request_id(const struct harness_fcgi *f);
/* Bytes of queued params not sent yet. */
size_t	 harness_fcgi_params_pending(const struct harness_fcgi *f);
/* Send FCGI_BEGIN_REQUEST if not yet sent, then the next n bytes of the
 * queued params (fewer if fewer are queued) as FCGI_PARAMS records. */
int	 harness_fcgi_send_params(struct harness_fcgi *f, size_t n);
/* Send every queued byte and the empty record that ends the params. */
int	 harness_fcgi_end_params(struct harness_fcgi *f);
/* Send len bytes as FCGI_STDIN records; len 0 sends the end of stdin. */
int	 harness_fcgi_send_stdin(struct harness_fcgi *f, const void *data, size_t len);
/*
 * Read records until FCGI_END_REQUEST, end of file or timeout_ms; parse
 * STDOUT as a CGI response (Status: header, default 200) into a response.
 * Never NULL: status is 0 unless FCGI_END_REQUEST arrived (fcgi_closed
 * tells a closed connection from a timeout; error says which).
 */
struct harness_resp *harness_fcgi_read(struct harness_fcgi *f, int timeout_ms);
/* Ask, in the next FCGI_BEGIN_REQUEST, that the app keep the connection
 * open after its response (FCGI_KEEP_CONN, as nginx's fastcgi_keep_conn). */
void	 harness_fcgi_keep_conn(struct harness_fcgi *f, int on);
/* After a response on a kept connection: forget the request sent, so the
 * next params_std/send_params begin a new one on the same connection. */
void	 harness_fcgi_next(struct harness_fcgi *f);
void	 harness_fcgi_close(struct harness_fcgi *f);
/*
 * One whole request over raw FastCGI: params_std, headers ("Name: value"
 * → HTTP_NAME params; NULL-terminated or NULL), body, read (5 s).
 */
struct harness_resp *harness_fcgi_request(const char *method, const char *uri,
	    const char *const headers[], const void *body, size_t body_len);

/* ------------------------------------------------------------------ */
/* Checks and assertions                                               */

/*
 * Each check returns NULL when the response is right, else a message
 * naming the first thing wrong and quoting the body (static storage).
 * The assert macros fail the running Check test with that message.
 *
 * common: Content-Type application/json, a JSON body, X-Request-Id
 *   present, Cache-Control containing no-store, X-Content-Type-Options:
 *   nosniff, and none of those (nor Content-Length, Allow, Retry-After)
 *   sent twice.
 * status: the status is `status`.
 * coded: status, common, error_code == code (any non-empty string when
 *   code is NULL), error_message a non-empty string, hint present (string
 *   or null), docs_url a string, request_id == the X-Request-Id header.
 * iam: status, common, success false, message a string, statusCode ==
 *   status, errors an array, request_id == X-Request-Id.
 */
const char *harness_check_status(const struct harness_resp *r, long status);
const char *harness_check_common(const struct harness_resp *r);
const char *harness_check_coded(const struct harness_resp *r, long status, const char *code);
const char *harness_check_iam(const struct harness_resp *r, long status);

#define HARNESS_ASSERT_(check) do {					\
	const char *harness_msg_ = (check);				\
	ck_assert_msg(harness_msg_ == NULL, "%s", harness_msg_);	\
} while (0)
#define harness_assert_status(r, status)	HARNESS_ASSERT_(harness_check_status((r), (status)))
#define harness_assert_common(r)		HARNESS_ASSERT_(harness_check_common((r)))
#define harness_assert_coded(r, status, code)	HARNESS_ASSERT_(harness_check_coded((r), (status), (code)))
#define harness_assert_iam(r, status)		HARNESS_ASSERT_(harness_check_iam((r), (status)))

/* The status is `status` (the message quotes the body) and the common
 * headers hold; reports the caller's line. */
#define harness_expect(resp_, want_) do {					\
	ck_assert_msg((resp_)->status == (long)(want_), "status %ld, want %ld: %s",	\
	    (resp_)->status, (long)(want_), (resp_)->body);			\
	harness_assert_common(resp_);						\
} while (0)

/* printf into one of 16 rotating thread-local 4 KiB buffers: paths and
 * bodies inside one test step. */
const char *harness_fmt(const char *f, ...) __attribute__((format(printf, 1, 2)));
/* "Idempotency-Key: t-<pid>-<n>-<ns>": a fresh key on every call (thread-local
 * buffers, 8 rotating). */
const char *harness_idem_header(void);

/* A whole file, malloc'ed and NUL-terminated (the caller frees it); NULL
 * when it cannot be opened. */
char	*harness_slurp(const char *path);

/*
 * A program a suite drives (a browser script, the fuzzer, node): argv[0]
 * (looked up in PATH when it has no '/') runs with the suite's environment
 * less BDS_* (the harness's own settings) plus set, NAME and value in
 * turn, NULL-terminated; in dir (NULL: here), its stdout and stderr into
 * log (NULL: the suite's), in its own process group, at most timeout_ms.
 * The group is killed after it (helpers that outlived it). Returns the exit
 * status, 128 + the signal that ended it, or -1 when it ran out of time.
 */
struct harness_child {
	const char *const	*argv;
	const char *const	*set;
	const char		*dir;
	const char		*log;
	int			 timeout_ms;
};
int	 harness_run_child(const struct harness_child *);
/* Where a suite leaves screenshots and the like: t/artifacts/<build dir
 * name>/ in the source tree (gitignored), or t/artifacts in the build tree
 * when the source is read-only (distcheck). Made on first use. */
const char *harness_artifacts_dir(void);

/* Milliseconds on a monotonic clock; sleep for ms. */
long long harness_now_ms(void);
void	 harness_sleep_ms(int ms);

/* ---- iam slice ---------------------------------------------------- */

/*
 * harness_request() from the source address src (e.g. "127.0.0.2": all of
 * 127.0.0.0/8 is loopback on Linux), so the API sees another client
 * address in REMOTE_ADDR. A source that cannot be bound is status 0.
 */
struct harness_resp *harness_request_from(const char *src, const char *method,
	    const char *host, const char *path, const char *const headers[],
	    const void *body, size_t body_len);

/* Print a file (a child's log, say) to stderr between lines naming title
 * and path; "(nothing)" when it is empty or cannot be read. */
void	 harness_show_file(const char *title, const char *path);

/* ---- secrets at rest ---------------------------------------------- */

/*
 * Search what the stack keeps for secrets a suite sent (card numbers,
 * CVVs, passwords): a pg_dump of database bds (the cluster's own pg_dump,
 * BDS_PG_BINDIR; each needle also as the hex a bytea column is dumped in)
 * and the bytes of every regular file under harness_dir() except pgdata/
 * (bds-api.log, requests.log, bds-jobs.log, bds-deliver.log, the nginx logs,
 * postgres.log, mail/...), binary safe. needles are NUL-terminated
 * strings (empty ones are skipped). Returns 0 when none is found, 1 when
 * one is, with found (foundlen bytes, may be NULL) naming the needle and
 * where, and -1 when the dump or a file could not be read
 * (harness_error() says why). One scan at a time in a process (it keeps
 * its state in static storage); at most 60 s for the dump.
 */
int	 harness_secret_scan(const char *const *needles, size_t n, char *found,
	    size_t foundlen);

#endif
