#ifndef BDS_E2E_WEBPAGE_H
#define BDS_E2E_WEBPAGE_H
/*
 * The connect page's suites (check_e2e_web, check_e2e_browser):
 * a stack whose link_url is the harness's own link host (so connect_url,
 * embed_url and hosted_url open the page under test), one developer, and
 * tenants: a client whose allowedOrigins and redirectUris name loopback
 * test origins, with a sandbox key, as a client's backend would hold them.
 */
#include <json-c/json.h>

#include "devacct.h"
#include "harness.h"

struct webpage_tenant {
	char	*client, *key;
};

/* The suite's developer (made by webpage_start()). */
extern struct devacct webpage_dev;

/*
 * Unchecked fixture: the stack, then link_url = the link host's base URL
 * (appended to the config; bds-api restarted on it), the legal documents
 * and one developer. Aborts the tcase on failure.
 */
void	 webpage_start(void);

/* A client of the developer with allowedOrigins [origin] and redirectUris
 * [redirect] (either NULL: none) and its sandbox key. */
void	 webpage_tenant_new(struct webpage_tenant *, const char *origin, const char *redirect);
void	 webpage_tenant_free(struct webpage_tenant *);

/* POST /v1/link-tokens on the sandbox host with the tenant's key: 201
 * expected; the whole answer (free it). */
struct harness_resp *webpage_link_token(const struct webpage_tenant *, const char *body);
/* POST /v1/biller-connect/ticket with the link token as bearer on the
 * sandbox host: 201 expected; the answer (free it). */
struct harness_resp *webpage_ticket(const char *link_token);

/*
 * The browser suites: Debian's chromium and its driver, and the page
 * scripts of t/browser/ run by /usr/bin/python3.
 */
#define WEBPAGE_CHROMIUM	"/usr/bin/chromium"
#define WEBPAGE_CHROMEDRIVER	"/usr/bin/chromedriver"
#define WEBPAGE_RUN_MS		150000	/* one scenario, chromium's start included */

/* main() of a browser suite named suite: 77 (skipped, said on stderr)
 * when chromium or its driver is not installed, else 0. */
int	 webpage_browser_missing(const char *suite);

/*
 * Run t/browser/<script> SCENARIO for tenant t (other: a second client, or
 * NULL) in its own process group, at most WEBPAGE_RUN_MS; the test fails
 * unless it exits 0. The script gets the stack's three base URLs, t's key
 * and client, the developer's token, the artifacts directory and a result
 * file (BDS_API_URL, BDS_LINK_URL, BDS_IAM_URL, BDS_KEY, BDS_CLIENT,
 * BDS_OTHER_CLIENT, BDS_JWT, BDS_ARTIFACTS, BDS_RESULT), and the pairs of
 * extra_env (name, value, ..., NULL; or NULL). The result it wrote, removed
 * once read (json_object_put it). shot_prefix: what the script puts before
 * the scenario's name in its screenshots' names.
 */
struct json_object *webpage_browse(const char *script, const char *shot_prefix,
	    const struct webpage_tenant *t, const char *other, const char *const *extra_env,
	    const char *scenario);

/* Whether a browser suite runs scenario: BDS_BROWSER_SCENARIOS=a,b runs
 * only those (while working on a page); the others pass without running. */
int	 webpage_scenario_wanted(const char *scenario);

#endif
