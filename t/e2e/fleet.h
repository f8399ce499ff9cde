#ifndef BDS_E2E_FLEET_H
#define BDS_E2E_FLEET_H
/*
 * Many links at once, for the suites (and bench/) that need hundreds of
 * portal links: each made by lib/links' own links_create() (sealed
 * credentials, the first retrieval queued) on the stack's database with
 * the stack's config, as the connect job makes them, without a thousand
 * connect flows. Customer i (from 1) of the biller simulator logs in as
 * cust%05d with password pw-cust%05d (tools/biller-sim/README.md).
 */
#include <stddef.h>

/*
 * n links of client_id in environment env on biller_id, client_user_id
 * "<user_prefix>-<i>", simulator customers first..first+n-1. Their ids are
 * written to ids[0..n) when ids is not NULL (malloc'ed). The test fails on
 * any error.
 */
void	 fleet_links(const char *client_id, const char *env, const char *biller_id,
	    const char *user_prefix, int first, size_t n, char **ids);

#endif
