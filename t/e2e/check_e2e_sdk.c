/*
 * The TypeScript SDK (sdk/typescript) against this suite's stack. The SDK
 * is built from the tree's document the way its README builds it: `npm run
 * generate` (openapi-typescript writes src/schema.d.ts from
 * docs/openapi.yaml, or $BDS_OPENAPI) and `tsc`, so a document that does not
 * generate, or that types an operation differently from what the
 * quickstart sends and reads, fails here. Then node runs the compiled
 * examples/quickstart.js: sign-up with the code from the mail spool, a
 * client, a sandbox key, a webhook endpoint on its own receiver, a sandbox
 * account link, a verified Service-Signature and the bill sync loop; once
 * as it comes and once triggering its webhook. This suite then checks what
 * the service recorded.
 *
 * The build happens in a copy under the stack's temp dir (sources, with
 * node_modules linked), so the source tree is never written to.
 * node_modules come from `npm ci` in sdk/typescript (scripts/npm-tools):
 * without them the suite fails and says so. BDS_SDK_NODE_MODULES names
 * another node_modules (a distcheck's tree has none of its own).
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <check.h>

#include "devacct.h"
#include "harness.h"

#define BUILD_MS	180000	/* generate + tsc, on a loaded machine */
#define QUICKSTART_MS	60000	/* the quickstart's own bound */
#define RUN_MARGIN_MS	15000	/* node's start and exit around that */
#define SDK_USER	"quickstart-user"

static const char *
srcdir(void)
{
	return getenv("BDS_SRCDIR") != NULL ? getenv("BDS_SRCDIR") : ".";
}

/* The path in the environment variable name, else the tree's rel. */
static const char *
tree_path(char path[PATH_MAX], const char *name, const char *rel)
{
	const char *o = getenv(name);

	if (o != NULL && *o != '\0')
		snprintf(path, PATH_MAX, "%s", o);
	else
		snprintf(path, PATH_MAX, "%s/%s", srcdir(), rel);
	return path;
}

/* The document the SDK is generated from: $BDS_OPENAPI, else the tree's. */
static const char *
document(void)
{
	static char path[PATH_MAX];

	return tree_path(path, "BDS_OPENAPI", "docs/openapi.yaml");
}

/* The SDK's installed packages: $BDS_SDK_NODE_MODULES, else the tree's. */
static const char *
node_modules(void)
{
	static char path[PATH_MAX];

	return tree_path(path, "BDS_SDK_NODE_MODULES", "sdk/typescript/node_modules");
}

/* Where the SDK is built: <temp dir>/sdk. */
static const char *
sdk_dir(void)
{
	return harness_fmt("%s/sdk", harness_dir());
}

/* One step of the build in the SDK's copy, its output in <sdk dir>/<name>.log
 * (set: more environment, harness_run_child's): the test fails with that
 * output unless it exits 0. */
static void
build_step(const char *name, const char *what, const char *const argv[],
    const char *const set[])
{
	char logbuf[PATH_MAX];
	struct harness_child child = { argv, set, sdk_dir(), logbuf, BUILD_MS };
	int rc;

	snprintf(logbuf, sizeof(logbuf), "%s/%s.log", sdk_dir(), name);
	rc = harness_run_child(&child);
	if (rc != 0)
		harness_show_file(what, logbuf);
	ck_assert_msg(rc == 0, "%s failed (exit %d; output above, in %s)", what, rc, logbuf);
}

/*
 * Build: copy the SDK's sources into the temp dir, link its node_modules,
 * generate src/schema.d.ts from the document, compile, and run the SDK's
 * own tests (its webhook signature check).
 */
START_TEST(build)
{
	static const char *const sources[] = { "src", "examples", "test", "package.json",
	    "tsconfig.json" };
	const char *copy[] = { "cp", "-R", NULL, NULL, NULL, NULL, NULL, ".", NULL };
	const char *gen[] = { "npm", "run", "generate", NULL };
	const char *tsc[] = { "node", "node_modules/typescript/bin/tsc", "-p", ".", NULL };
	const char *unit[] = { "npm", "test", NULL };
	const char *genv[] = { "BDS_OPENAPI", document(), NULL };

	ck_assert_msg(mkdir(sdk_dir(), 0755) == 0 || errno == EEXIST, "%s: %s", sdk_dir(),
	    strerror(errno));
	for (size_t i = 0; i < sizeof(sources) / sizeof(sources[0]); i++)
		copy[2 + i] = harness_fmt("%s/sdk/typescript/%s", srcdir(), sources[i]);
	build_step("copy", "copying the SDK's sources", copy, NULL);
	ck_assert_msg(symlink(node_modules(),
	    harness_fmt("%s/node_modules", sdk_dir())) == 0 || errno == EEXIST,
	    "node_modules link: %s", strerror(errno));
	/* a schema.d.ts copied from a developer's tree must not stand in */
	unlink(harness_fmt("%s/src/schema.d.ts", sdk_dir()));

	build_step("generate", harness_fmt("npm run generate (openapi-typescript, from %s)",
	    document()), gen, genv);
	ck_assert_msg(access(harness_fmt("%s/src/schema.d.ts", sdk_dir()), R_OK) == 0,
	    "npm run generate wrote no src/schema.d.ts");
	build_step("tsc", "tsc (the SDK and its quickstart against the generated types)", tsc, NULL);
	ck_assert_msg(access(harness_fmt("%s/dist/examples/quickstart.js", sdk_dir()), R_OK) == 0,
	    "tsc wrote no dist/examples/quickstart.js");
	build_step("test", "npm test (the SDK's own tests, node --test)", unit, NULL);
}
END_TEST

/*
 * The compiled quickstart against the stack, as it comes (it verifies the
 * link's own connection.ready), and told not to wait for that (it triggers
 * one with POST /v1/triggers/{event_type} and verifies that). It exits 0
 * only when every step worked: the signature verified, the sync loop ended
 * with has_more false. Then the service's side: the developer confirmed,
 * the key's client holds one sandbox link of the quickstart's user and one
 * endpoint, and a delivery to it succeeded.
 */
static const struct {
	const char	*name;
	const char	*env;		/* one more variable's name and value, or NULL */
	const char	*value;
	const char	*says;		/* a line its output must hold, or NULL */
} runs[] = {
	{ "quickstart",		NULL, NULL,			"webhook verified: connection.ready" },
	{ "quickstart-trigger",	"BDS_WEBHOOK_WAIT_MS", "0",	"no connection.ready yet; triggered" },
};

START_TEST(quickstart)
{
	const char *js = harness_fmt("%s/dist/examples/quickstart.js", sdk_dir());
	const char *argv[] = { "node", "dist/examples/quickstart.js", NULL };
	char email[128], log[PATH_MAX], timeout[32];
	const char *set[] = {
		"BDS_API_URL", harness_base_url("api"),
		"BDS_SANDBOX_URL", harness_base_url("sandbox"),
		"BDS_MAIL_SPOOL", harness_mail_dir(),
		"BDS_EMAIL", email,
		"BDS_TIMEOUT_MS", timeout,
		runs[_i].env, runs[_i].value,
		NULL
	};
	struct harness_child child = { argv, set, sdk_dir(), log,
	    QUICKSTART_MS + RUN_MARGIN_MS };
	char *client, *out;
	int rc;

	ck_assert_msg(access(js, R_OK) == 0, "%s is missing: the build test failed", js);
	snprintf(email, sizeof(email), "%s-%ld@example.test", runs[_i].name, (long)getpid());
	snprintf(timeout, sizeof(timeout), "%d", QUICKSTART_MS);
	snprintf(log, sizeof(log), "%s/%s.log", sdk_dir(), runs[_i].name);

	rc = harness_run_child(&child);
	harness_show_file(runs[_i].name, log);
	ck_assert_msg(rc == 0, "%s failed (exit %d; its output above)", runs[_i].name, rc);
	out = harness_slurp(log);
	ck_assert_msg(out != NULL && strstr(out, runs[_i].says) != NULL,
	    "%s: its output has no \"%s\"", runs[_i].name, runs[_i].says);
	free(out);

	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM users WHERE email = $1"
	    " AND confirmed_at IS NOT NULL", email, NULL), 1);
	client = devacct_sql_value("SELECT l.client_id FROM links l"
	    " JOIN clients c ON c.id = l.client_id JOIN users u ON u.id = c.user_id"
	    " WHERE u.email = $1 AND l.client_user_id = $2 AND l.environment = 'sandbox'",
	    email, SDK_USER);
	ck_assert_msg(client != NULL, "no sandbox link of %s for %s", SDK_USER, email);
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM webhooks WHERE client_id = $1"
	    " AND environment = 'sandbox'", client, NULL), 1);
	/* the delivery it verified is marked once bds-deliver has its answer */
	for (long long until = harness_now_ms() + 5000; devacct_sql_int("SELECT count(*)"
	    " FROM deliveries WHERE client_id = $1 AND status = 'succeeded'", client, NULL) == 0;
	    harness_sleep_ms(100))
		ck_assert_msg(harness_now_ms() < until, "no delivery to the quickstart's"
		    " endpoint succeeded");
	free(client);
}
END_TEST

static void
setup(void)
{
	harness_fixture_start_default();
	devacct_legal();
	/* mail and webhooks leave while the quickstart waits for them */
	ck_assert_msg(harness_deliver_start(NULL) == 0, "bds-deliver: %s", harness_error());
}

static Suite *
sdk_suite(void)
{
	Suite *s = suite_create("e2e_sdk");
	TCase *tc = tcase_create("sdk");

	tcase_add_unchecked_fixture(tc, setup, harness_fixture_stop);
	tcase_add_checked_fixture(tc, harness_fixture_recover, NULL);
	tcase_set_timeout(tc, (BUILD_MS * 3 + QUICKSTART_MS + RUN_MARGIN_MS) / 1000 + 30);
	tcase_add_test(tc, build);
	tcase_add_loop_test(tc, quickstart, 0, (int)(sizeof(runs) / sizeof(runs[0])));
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	const char *modules = node_modules();
	const char *const need[] = { "openapi-fetch/package.json",
	    "openapi-typescript/bin/cli.js", "typescript/bin/tsc", NULL };

	for (size_t i = 0; need[i] != NULL; i++)
		if (access(harness_fmt("%s/%s", modules, need[i]), R_OK) != 0) {
			fprintf(stderr, "check_e2e_sdk: FAILED: %s/%s is missing: the SDK's"
			    " packages are not installed; run scripts/npm-tools (or `npm ci` in"
			    " sdk/typescript)\n", modules, need[i]);
			return EXIT_FAILURE;
		}
	return harness_run_suite(sdk_suite());
}
