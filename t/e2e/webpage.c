/*
 * The connect page's suites' stack and tenants (webpage.h).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

int
webpage_browser_missing(const char *suite)
{
	if (access(WEBPAGE_CHROMIUM, X_OK) == 0 && access(WEBPAGE_CHROMEDRIVER, X_OK) == 0)
		return 0;
	fprintf(stderr, "%s: skipped: %s or %s is not installed"
	    " (Debian: chromium chromium-driver)\n", suite, WEBPAGE_CHROMIUM, WEBPAGE_CHROMEDRIVER);
	return 77;
}

#define BROWSE_ENV_MAX	32	/* names and values */

struct json_object *
webpage_browse(const char *script, const char *shot_prefix, const struct webpage_tenant *t,
    const char *other, const char *const *extra_env, const char *scenario)
{
	const char *src = getenv("BDS_SRCDIR") ? getenv("BDS_SRCDIR") : ".";
	char path[PATH_MAX], result[PATH_MAX];
	const char *argv[] = { "/usr/bin/python3", path, scenario, NULL };
	const char *set[BROWSE_ENV_MAX + 1] = {
		"BDS_API_URL", harness_base_url("sandbox"),
		"BDS_LINK_URL", harness_base_url("link"),
		"BDS_IAM_URL", harness_base_url("api"),
		"BDS_KEY", t->key,
		"BDS_CLIENT", t->client,
		"BDS_OTHER_CLIENT", other ? other : "",
		"BDS_JWT", webpage_dev.access,
		"BDS_ARTIFACTS", harness_artifacts_dir(),
		"BDS_RESULT", result,
	};
	struct harness_child child = { argv, set, NULL, NULL, WEBPAGE_RUN_MS };
	struct json_object *out;
	size_t n = 18;
	int rc;

	for (size_t i = 0; extra_env != NULL && extra_env[i] != NULL; i += 2) {
		ck_assert_msg(n + 2 <= BROWSE_ENV_MAX, "too many variables for %s", script);
		set[n++] = extra_env[i];
		set[n++] = extra_env[i + 1];
	}
	snprintf(path, sizeof(path), "%s/t/browser/%s", src, script);
	snprintf(result, sizeof(result), "%s/browser-%s-%s-%d.json", harness_dir(), script,
	    scenario, (int)getpid());
	unlink(result);
	rc = harness_run_child(&child);
	ck_assert_msg(rc != -1, "%s: still running after %d s", scenario, WEBPAGE_RUN_MS / 1000);
	ck_assert_msg(rc == 0, "browser scenario %s failed (exit %d; screenshot %s/%s%s-failure.png)",
	    scenario, rc, harness_artifacts_dir(), shot_prefix, scenario);
	out = json_object_from_file(result);
	ck_assert_msg(out != NULL, "%s: no result in %s", scenario, result);
	/* it may name what the page was given (the pay page's cards): not
	 * left among the stack's files */
	unlink(result);
	return out;
}
