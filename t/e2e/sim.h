#ifndef BDS_E2E_SIM_H
#define BDS_E2E_SIM_H
/*
 * The biller simulator (tools/biller-sim, its README is the contract) for
 * the end-to-end suites: started on a loopback port, told what to do over
 * its admin API, killed and started again on the same port.
 *
 *	sim_start(NULL);			(the suite's unchecked fixture,
 *						 after harness_start)
 *	sim_base_url("power", buf, sizeof(buf))	the biller's base_url
 *	sim_knobs("power", "cust00001", "{\"mfa\":\"123456\"}");
 *	sim_kill(); sim_restart();		(from a test: same port)
 *	sim_stop();				(the suite's teardown)
 *
 * Process model. Check forks one child per test and a test child's
 * processes die with it, yet a test may kill the simulator and start it
 * again for the tests after it. So sim_start forks a small keeper (in its
 * own process group, dying with the suite's main process) that owns the
 * simulator: it starts, kills and stops it on request from any process of
 * the suite over a socketpair, and reaps it. The port lives in shared
 * memory.
 *
 * The program is $BDS_SRCDIR/tools/biller-sim/biller-sim (BDS_SRCDIR as
 * the harness reads it, default "."), run with /usr/bin/python3; its output
 * and request log go to <harness_dir()>/biller-sim.log. Functions returning
 * int return 0 on success and -1 on failure (stderr says why).
 */
#include <stddef.h>

struct json_object;

struct sim_opts {
	const char	*billers;	/* --billers (default "power,water") */
	int		 customers;	/* --customers (default 20) */
	int		 statements;	/* --statements (default 12) */
	int		 session_ttl;	/* --session-ttl (default 900) */
	const char	*today;		/* --today (default: the simulator's own today) */
};

/* Start the keeper and the simulator (--port 0) and wait until it is
 * ready (bounded at ~20 s). From the suite's main process, once. */
int	 sim_start(const struct sim_opts *);
/* Stop the simulator (SIGTERM) and the keeper. Safe when nothing runs. */
void	 sim_stop(void);
/* SIGKILL the simulator and reap it (sessions and knobs are lost). */
int	 sim_kill(void);
/* Start it again on the same port, once it is not running. */
int	 sim_restart(void);
/* 1 while the simulator runs. */
int	 sim_running(void);

int	 sim_port(void);
/* "http://127.0.0.1:<port>/b/<key>" into buf; returns buf. */
char	*sim_base_url(const char *key, char *buf, size_t len);

/*
 * One admin request (method, path such as "/_admin/reset", JSON body or
 * NULL): the HTTP status, and the parsed answer in *out when out is not
 * NULL (json_object_put it; NULL when it was not JSON). -1 on a transport
 * failure.
 */
int	 sim_admin(const char *method, const char *path, const char *body,
	    struct json_object **out);
/* POST /_admin/accounts/KEY/USER with knobs (a JSON object): 0 when 200. */
int	 sim_knobs(const char *key, const char *user, const char *knobs);
/* POST /_admin/billers/KEY with knobs. */
int	 sim_biller_knobs(const char *key, const char *knobs);
/* POST /_admin/reset. */
int	 sim_reset(void);
/* A counter of GET /_admin/stats for biller key: "logins", "mfa_challenges",
 * "requests.session" (group.name); -1 when it cannot be read. */
long long sim_counter(const char *key, const char *name);

#endif
