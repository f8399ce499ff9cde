/*
 * The connect page's suites' stack and tenants (webpage.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "webpage.h"

struct devacct webpage_dev;

void
webpage_start(void)
{
	FILE *f;

	harness_fixture_start(NULL);
	/* the pages under test are the harness's link host: connect_url,
	 * embed_url and hosted_url must name it (the default names
	 * https://link.bds.example); later keys win in the config file */
	f = fopen(harness_config_path(), "a");
	ck_assert_msg(f != NULL, "%s: %s", harness_config_path(), strerror(errno));
	fprintf(f, "link_url = %s\n", harness_base_url("link"));
	ck_assert_int_eq(fclose(f), 0);
	ck_assert_msg(harness_api_stop() == 0 && harness_api_start() == 0,
	    "bds-api restart: %s", harness_error());
	devacct_legal();
	devacct_new(&webpage_dev, "web");
}

void
webpage_tenant_new(struct webpage_tenant *t, const char *origin, const char *redirect)
{
	struct harness_resp *r;

	t->client = devacct_client_new(&webpage_dev);
	t->key = devacct_key_new(&webpage_dev, t->client, "sandbox");
	r = devacct_jwt(&webpage_dev, "PUT", harness_fmt("/v1/iam/clients/%s", t->client),
	    harness_fmt("{\"redirectUris\":[%s%s%s],\"allowedOrigins\":[%s%s%s]}",
	    redirect ? "\"" : "", redirect ? redirect : "", redirect ? "\"" : "",
	    origin ? "\"" : "", origin ? origin : "", origin ? "\"" : ""), NULL);
	harness_expect(r, 200);
	harness_resp_free(r);
}

void
webpage_tenant_free(struct webpage_tenant *t)
{
	free(t->client);
	free(t->key);
}

struct harness_resp *
webpage_link_token(const struct webpage_tenant *t, const char *body)
{
	struct harness_resp *r = devacct_call("POST", "sandbox", "/v1/link-tokens",
	    devacct_bearer(t->key), body, NULL);

	harness_expect(r, 201);
	return r;
}

struct harness_resp *
webpage_ticket(const char *lt)
{
	struct harness_resp *r = devacct_call("POST", "sandbox", "/v1/biller-connect/ticket",
	    devacct_bearer(lt), NULL, NULL);

	harness_expect(r, 201);
	return r;
}

int
webpage_scenario_wanted(const char *scenario)
{
	const char *only = getenv("BDS_BROWSER_SCENARIOS");
	size_t n = strlen(scenario);
	const char *p;

	if (only == NULL || *only == '\0')
		return 1;
	for (p = only; (p = strstr(p, scenario)) != NULL; p += n)
		if ((p == only || p[-1] == ',') && (p[n] == '\0' || p[n] == ','))
			return 1;
	return 0;
}
