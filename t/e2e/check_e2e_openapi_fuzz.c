/*
 * The OpenAPI document against the running service: t/openapi/fuzz.py
 * (python3-hypothesis, python3-jsonschema, python3-yaml) sends every
 * documented operation a few hundred valid, boundary and broken requests
 * built from its own schemas, with a real credential of its security
 * scheme, and fails on a 5xx, an undocumented status, a body outside its
 * documented schema, a 4xx outside the coded envelope, or a 4xx that
 * changed rows. This suite makes what the script needs the way a client
 * does — a developer (and a throwaway one for sign-out and
 * change-password), a client with a sandbox and a development key, two
 * sandbox links with their bills, a link access token, a link token and a
 * connect session — and hands it over in the environment with the base
 * URLs and the database's conninfo.
 *
 * BDS_FUZZ_CASES (cases per operation, default 200), BDS_FUZZ_ONLY,
 * BDS_FUZZ_BUDGET, BDS_FUZZ_TRACE, BDS_FUZZ_REPORT and BDS_FUZZ_DOC
 * (default docs/openapi.yaml of the source tree) pass through (fuzz.py
 * says what each does). The suite skips (77) when the python modules are
 * missing.
 */
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <check.h>
#include <json-c/json.h>

#include "devacct.h"
#include "harness.h"

#define PYTHON		"/usr/bin/python3"
#define RUN_MS		900000	/* the whole fuzz run, bounded */
#define IDLE_MS		120000

static struct devacct dev, throwaway;
static char *client, *sandbox_key, *dev_key, *link_good, *link_spare, *lat;
static char *link_token, *session_token;

/* POST on the sandbox host with the sandbox key; the string at field
 * (malloc'ed) of the 201. */
static char *
sandbox_post(const char *path, const char *bearer, const char *body, const char *field)
{
	struct harness_resp *r = devacct_call("POST", "sandbox", path,
	    bearer ? devacct_bearer(bearer) : NULL, body, NULL);
	char *s;

	ck_assert_msg(r->status == 201, "%s: %ld %s", path, r->status, r->body);
	ck_assert_msg(devacct_str(r, field) != NULL, "%s: no %s in %s", path, field, r->body);
	s = strdup(devacct_str(r, field));
	harness_resp_free(r);
	return s;
}

static void
stack_up(void)
{
	struct harness_resp *r;
	char *ticket;

	harness_fixture_start_default();
	devacct_legal();
	devacct_new(&dev, "fuzz");
	devacct_verify_email(&dev);	/* development keys */
	devacct_new(&throwaway, "fuzz-throwaway");
	client = devacct_client_new(&dev);
	sandbox_key = devacct_key_new(&dev, client, "sandbox");
	dev_key = devacct_key_new(&dev, client, "development");
	r = devacct_jwt(&dev, "PUT", harness_fmt("/v1/iam/clients/%s", client),
	    "{\"redirectUris\":[\"https://app.example/linked\"],"
	    "\"allowedOrigins\":[\"https://app.example\"]}", NULL);
	harness_expect(r, 200);
	harness_resp_free(r);
	link_good = devacct_sandbox_link(sandbox_key, "u-user_good", "user_good");
	link_spare = devacct_sandbox_link(sandbox_key, "u-user_multi", "user_multi");
	ck_assert_msg(harness_jobs_wait_idle(IDLE_MS) == 0, "%s", harness_error());
	lat = sandbox_post(harness_fmt("/v1/links/%s/access-token", link_good), sandbox_key,
	    NULL, "access_token");
	link_token = sandbox_post("/v1/link-tokens", sandbox_key,
	    "{\"client_user_id\":\"u-fuzz\"}", "link_token");
	ticket = sandbox_post("/v1/biller-connect/ticket", link_token, NULL, "ticket");
	session_token = sandbox_post("/v1/link-sessions", NULL,
	    harness_fmt("{\"ticket\":\"%s\"}", ticket), "session_token");
	free(ticket);
}

static void
stack_down(void)
{
	free(client);
	free(sandbox_key);
	free(dev_key);
	free(link_good);
	free(link_spare);
	free(lat);
	free(link_token);
	free(session_token);
	harness_fixture_stop();
}

/* Run fuzz.py in its own process group, at most RUN_MS; its exit status. */
static int
fuzz(void)
{
	const char *src = getenv("BDS_SRCDIR") ? getenv("BDS_SRCDIR") : ".";
	/* settings a developer gives the suite, passed on; BDS_E2E_RECORD: the
	 * recorder (t/e2e/record.h) */
	const char *pass[] = { "BDS_FUZZ_CASES", "BDS_FUZZ_ONLY", "BDS_FUZZ_BUDGET",
	    "BDS_FUZZ_TRACE", "BDS_E2E_RECORD" };
	char script[PATH_MAX], doc[PATH_MAX], report[PATH_MAX], psql[PATH_MAX];
	const char *argv[] = { PYTHON, script, NULL };
	const char *set[80] = {
		"BDS_FUZZ_DOC", doc,
		"BDS_FUZZ_REPORT", report,
		"BDS_FUZZ_API_URL", harness_base_url("api"),
		"BDS_FUZZ_SANDBOX_URL", harness_base_url("sandbox"),
		"BDS_FUZZ_LINK_URL", harness_base_url("link"),
		"BDS_FUZZ_DSN", harness_database_url(),
		/* the harness's PostgreSQL binaries, psql among them */
		"BDS_FUZZ_PSQL", psql,
		"BDS_FUZZ_JWT", dev.access,
		"BDS_FUZZ_DEV_EMAIL", dev.email,
		"BDS_FUZZ_DEV_PASSWORD", dev.password,
		"BDS_FUZZ_THROW_EMAIL", throwaway.email,
		"BDS_FUZZ_THROW_PASSWORD", throwaway.password,
		"BDS_FUZZ_CLIENT", client,
		"BDS_FUZZ_SANDBOX_KEY", sandbox_key,
		"BDS_FUZZ_API_KEY", dev_key,
		"BDS_FUZZ_LINK", link_good,
		"BDS_FUZZ_SPARE_LINK", link_spare,
		"BDS_FUZZ_LAT", lat,
		"BDS_FUZZ_LINK_TOKEN", link_token,
		"BDS_FUZZ_SESSION", session_token,
		NULL
	};
	struct harness_child child = { argv, set, NULL, NULL, RUN_MS };
	size_t n = 0;
	int rc;

	snprintf(script, sizeof(script), "%s/t/openapi/fuzz.py", src);
	snprintf(doc, sizeof(doc), "%s", getenv("BDS_FUZZ_DOC") ? getenv("BDS_FUZZ_DOC") :
	    harness_fmt("%s/docs/openapi.yaml", src));
	snprintf(report, sizeof(report), "%s", getenv("BDS_FUZZ_REPORT") ?
	    getenv("BDS_FUZZ_REPORT") : harness_fmt("%s/fuzz-violations.jsonl", harness_dir()));
	snprintf(psql, sizeof(psql), "%s/psql", getenv("BDS_PG_BINDIR") ?
	    getenv("BDS_PG_BINDIR") : "/usr/lib/postgresql/15/bin");
	while (set[n] != NULL)
		n++;
	for (size_t i = 0; i < sizeof(pass) / sizeof(pass[0]); i++)
		if (getenv(pass[i]) != NULL) {
			set[n++] = pass[i];
			set[n++] = getenv(pass[i]);
		}
	set[n] = NULL;
	rc = harness_run_child(&child);
	ck_assert_msg(rc != -1, "fuzz.py still running after %d s", RUN_MS / 1000);
	fprintf(stderr, "fuzz.py: violations (if any) in %s\n", report);
	return rc;
}

/* Every documented operation, every case within the document's word. */
START_TEST(fuzz_document)
{
	int rc = fuzz();

	ck_assert_msg(rc != 2, "fuzz.py could not run (no document, no operation, no stack):"
	    " see above");
	ck_assert_msg(rc == 0, "fuzz.py exited %d: the violations are listed above", rc);
}
END_TEST

static Suite *
openapi_fuzz_suite(void)
{
	Suite *s = suite_create("e2e_openapi_fuzz");
	TCase *tc = tcase_create("fuzz");

	tcase_add_unchecked_fixture(tc, stack_up, stack_down);
	tcase_set_timeout(tc, RUN_MS / 1000 + 60);
	tcase_add_test(tc, fuzz_document);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	if (system(PYTHON " -c 'import hypothesis, jsonschema, yaml' 2>/dev/null") != 0) {
		fprintf(stderr, "skip: %s lacks hypothesis, jsonschema or yaml\n", PYTHON);
		return 77;
	}
	return harness_run_suite(openapi_fuzz_suite());
}
