#ifndef BDS_E2E_WEBPAGE_H
#define BDS_E2E_WEBPAGE_H
/*
 * The connect page's suites (check_e2e_web, check_e2e_browser):
 * a stack whose link_url is the harness's own link host (so connect_url,
 * embed_url and hosted_url open the page under test), one developer, and
 * tenants: a client whose allowedOrigins and redirectUris name loopback
 * test origins, with a sandbox key, as a client's backend would hold them.
 */
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

/* Whether a browser suite runs scenario: BDS_BROWSER_SCENARIOS=a,b runs
 * only those (while working on a page); the others pass without running. */
int	 webpage_scenario_wanted(const char *scenario);

#endif
