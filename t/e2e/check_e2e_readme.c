/*
 * The README's quickstart as written. At test time every fenced block of
 * README.md whose info string is "sh quickstart" is taken, in order, into
 * one bash script under `set -euo pipefail` and run against this suite's
 * stack, the README's variables pointing at it: API (the api host),
 * SANDBOX (the sandbox host), SPOOL (the mail spool) and HOOK_PORT (the
 * webhook receiver's port, a free one) and BDSCTL (the operator CLI with
 * the stack's config). A block that fails fails the test,
 * which then checks what the blocks should have achieved: a hosted link
 * URL printed, the link's bills listed, the sync loop paged to has_more
 * false with one file per bill, a statement PDF downloaded, and webhooks
 * that the README's receiver verified (none rejected); then, going live, a
 * verified e-mail and a development key. After the blocks the
 * script writes the variables they set (EMAIL, KEY, LINK, BILL) to a file,
 * so the test can look at the same link through the API.
 *
 * The stack is seeded as scripts/dev-up seeds it (`bdsctl seed`: the legal
 * documents the README's sign-up accepts), and bds-deliver runs, so the
 * confirmation mail reaches the spool and the webhooks the receiver.
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <check.h>
#include <json-c/json.h>

#include "devacct.h"
#include "harness.h"

#define MARKER		"```sh quickstart"
#define MIN_BLOCKS	8	/* set-up, five commands, receiver, link, bills, sync,
				 * statement, going live */
#define RUN_MS		240000	/* the blocks' own waits are bounded well below */

static const char *
srcdir(void)
{
	return getenv("BDS_SRCDIR") != NULL ? getenv("BDS_SRCDIR") : ".";
}

/* Where the blocks run: <temp dir>/readme. */
static const char *
work_dir(void)
{
	return harness_fmt("%s/readme", harness_dir());
}

static const char *
work_file(const char *name)
{
	return harness_fmt("%s/%s", work_dir(), name);
}

/*
 * The script: the README's "sh quickstart" blocks in order, each after a
 * line naming where it starts, then the epilogue. Returns the number of
 * blocks; the test fails on an unterminated block.
 */
static int
write_script(const char *readme, const char *path)
{
	FILE *in = fopen(readme, "r"), *out = fopen(path, "w");
	char line[4096];
	int blocks = 0, on = 0, n = 0;

	ck_assert_msg(in != NULL, "%s: %s", readme, strerror(errno));
	ck_assert_msg(out != NULL, "%s: %s", path, strerror(errno));
	fputs("set -euo pipefail\n", out);
	while (fgets(line, sizeof(line), in) != NULL) {
		n++;
		line[strcspn(line, "\n")] = '\0';
		if (!on && strcmp(line, MARKER) == 0) {
			on = 1;
			blocks++;
			fprintf(out, "echo '---- README.md line %d'\n", n);
		} else if (on && strncmp(line, "```", 3) == 0) {
			on = 0;
		} else if (on) {
			fprintf(out, "%s\n", line);
		}
	}
	ck_assert_msg(!on, "%s: the block after the last \"" MARKER "\" never ends", readme);
	/* not the README's: what the test looks at afterwards */
	fputs("printf '%s\\n' \"$EMAIL\" \"$KEY\" \"$LINK\" \"$BILL\" > readme.vars\n", out);
	ck_assert_int_eq(fclose(out), 0);
	fclose(in);
	return blocks;
}

/* A loopback port nothing listens on now. */
static int
free_port(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM, 0), port;

	ck_assert_msg(fd >= 0, "socket: %s", strerror(errno));
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ck_assert_msg(bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0 &&
	    getsockname(fd, (struct sockaddr *)&a, &len) == 0, "bind: %s", strerror(errno));
	port = ntohs(a.sin_port);
	close(fd);
	return port;
}

/* The number of *.json files in dir. */
static int
count_json(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	ck_assert_msg(d != NULL, "%s: %s", dir, strerror(errno));
	while ((e = readdir(d)) != NULL) {
		size_t len = strlen(e->d_name);

		if (len > 5 && strcmp(e->d_name + len - 5, ".json") == 0)
			n++;
	}
	closedir(d);
	return n;
}

/* Line n (0-based) of text, in buf. */
static const char *
nth_line(const char *text, int n, char *buf, size_t size)
{
	const char *p = text;

	for (int i = 0; i < n && p != NULL; i++)
		if ((p = strchr(p, '\n')) != NULL)
			p++;
	ck_assert_msg(p != NULL && *p != '\n' && *p != '\0', "readme.vars: line %d is empty", n);
	snprintf(buf, size, "%.*s", (int)strcspn(p, "\n"), p);
	return buf;
}

START_TEST(quickstart)
{
	const char *readme = harness_fmt("%s/README.md", srcdir());
	const char *argv[] = { "bash", "quickstart.sh", NULL };
	const char *bdsctl = harness_fmt("%s/app/bdsctl --config %s",
	    getenv("BDS_BUILDDIR") != NULL ? getenv("BDS_BUILDDIR") : ".", harness_config_path());
	char script[PATH_MAX], log[PATH_MAX], port[16], email[256], key[512], link[128],
	    bill[128];
	const char *set[] = {
		"API", harness_base_url("api"),
		"SANDBOX", harness_base_url("sandbox"),
		"SPOOL", harness_mail_dir(),
		"HOOK_PORT", port,
		"BDSCTL", bdsctl,
		NULL
	};
	struct harness_child child = { argv, set, NULL, log, RUN_MS };
	char *out, *hooks, *vars, *pdf, *ids;
	struct harness_resp *r;
	int blocks, rc, files;

	snprintf(script, sizeof(script), "%s", work_file("quickstart.sh"));
	snprintf(log, sizeof(log), "%s", work_file("quickstart.log"));
	ck_assert_msg(mkdir(work_dir(), 0755) == 0 || errno == EEXIST, "%s: %s", work_dir(),
	    strerror(errno));
	blocks = write_script(readme, script);
	ck_assert_msg(blocks >= MIN_BLOCKS, "%s has %d \"" MARKER "\" blocks, want %d or more",
	    readme, blocks, MIN_BLOCKS);
	snprintf(port, sizeof(port), "%d", free_port());
	child.dir = work_dir();

	rc = harness_run_child(&child);
	harness_show_file("the README's quickstart blocks", log);
	harness_show_file("webhooks.log", work_file("webhooks.log"));
	ck_assert_msg(rc == 0, "the README's quickstart failed (exit %d; its output above; the"
	    " script is %s)", rc, script);

	out = harness_slurp(log);
	ck_assert_ptr_nonnull(out);
	/* five commands: the link token's hosted URL */
	ck_assert_msg(strstr(out, "/connect#ticket=") != NULL, "no hosted_url printed");
	vars = harness_slurp(work_file("readme.vars"));
	ck_assert_ptr_nonnull(vars);
	nth_line(vars, 0, email, sizeof(email));
	nth_line(vars, 1, key, sizeof(key));
	nth_line(vars, 2, link, sizeof(link));
	nth_line(vars, 3, bill, sizeof(bill));
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM users WHERE email = $1"
	    " AND confirmed_at IS NOT NULL", email, NULL), 1);

	/* the webhooks the receiver verified: the link's bills and its ready */
	hooks = harness_slurp(work_file("webhooks.log"));
	ck_assert_ptr_nonnull(hooks);
	ck_assert_msg(strstr(hooks, "verified connection.ready evt_") != NULL,
	    "the receiver verified no connection.ready");
	ck_assert_msg(strstr(hooks, "verified bill.created evt_") != NULL,
	    "the receiver verified no bill.created");
	ck_assert_msg(strstr(hooks, "REJECTED") == NULL, "the receiver rejected a delivery");

	/* every bill of the link listed, and synced into bills/ */
	ids = devacct_sql_value("SELECT string_agg(id, ' ' ORDER BY id) FROM bills"
	    " WHERE link_id = $1 AND deleted_at IS NULL", link, NULL);
	ck_assert_msg(ids != NULL, "the link %s has no bills", link);
	for (char *save = NULL, *id = strtok_r(ids, " ", &save); id != NULL;
	    id = strtok_r(NULL, " ", &save)) {
		ck_assert_msg(strstr(out, id) != NULL, "bill %s was not listed", id);
		ck_assert_msg(access(harness_fmt("%s/bills/%s.json", work_dir(), id), R_OK) == 0,
		    "bill %s was not synced into bills/", id);
	}
	files = count_json(work_file("bills"));
	ck_assert_int_eq(files, devacct_sql_int("SELECT count(*) FROM bills WHERE link_id = $1"
	    " AND deleted_at IS NULL", link, NULL));
	ck_assert_msg(strstr(out, "has_more false") != NULL, "the sync never ended");
	ck_assert_msg(strstr(out, "has_more true") != NULL, "the sync did not page");

	/* the statement of BILL */
	pdf = harness_slurp(work_file("statement.pdf"));
	ck_assert_msg(pdf != NULL && strncmp(pdf, "%PDF-", 5) == 0,
	    "statement.pdf is not a PDF: %.40s", pdf != NULL ? pdf : "(missing)");

	/* the same link through the API: a link of the README's user-2 */
	r = devacct_call("GET", "sandbox", harness_fmt("/v1/links/%s", link),
	    devacct_bearer(key), NULL, NULL);
	ck_assert_msg(r->status == 200, "GET /v1/links/%s: %ld %s", link, r->status, r->body);
	harness_resp_free(r);
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM links WHERE id = $1"
	    " AND client_user_id = $2", link, "user-2"), 1);
	r = devacct_call("GET", "sandbox", harness_fmt("/v1/bills?account_link_id=%s", link),
	    devacct_bearer(key), NULL, NULL);
	ck_assert_msg(r->status == 200, "GET /v1/bills: %ld %s", r->status, r->body);
	ck_assert_int_eq((int)json_object_array_length(devacct_json(r, "bills")), files);
	harness_resp_free(r);
	r = devacct_call("GET", "sandbox", harness_fmt("/v1/account-links/%s/bills/sync?limit=5",
	    link), devacct_bearer(key), NULL, NULL);
	ck_assert_msg(r->status == 200, "the sync: %ld %s", r->status, r->body);
	ck_assert_int_eq(devacct_bool(r, "data.has_more"), 1);
	harness_resp_free(r);
	r = devacct_call("GET", "sandbox", harness_fmt("/v1/bills/%s/statement", bill),
	    devacct_bearer(key), NULL, NULL);
	ck_assert_msg(r->status == 200, "GET /v1/bills/%s/statement: %ld %s", bill, r->status,
	    r->body);
	harness_resp_free(r);

	/* going live: the e-mail verified, a development key */
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM users WHERE email = $1"
	    " AND email_verified", email, NULL), 1);
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM client_secrets s"
	    " JOIN clients c ON c.id = s.client_id JOIN users u ON u.id = c.user_id"
	    " WHERE u.email = $1 AND s.environment = $2", email, "development"), 1);

	free(ids);
	free(pdf);
	free(hooks);
	free(vars);
	free(out);
}
END_TEST

static void
setup(void)
{
	static const char *const seed[] = { "seed", NULL };

	harness_fixture_start_default();
	/* the development data dev-up loads: the legal documents the README accepts */
	ck_assert_msg(harness_bdsctl(seed) == 0, "bdsctl seed failed");
	/* the confirmation mail and the webhooks leave while the blocks wait */
	ck_assert_msg(harness_deliver_start(NULL) == 0, "bds-deliver: %s", harness_error());
}

static Suite *
readme_suite(void)
{
	Suite *s = suite_create("e2e_readme");
	TCase *tc = tcase_create("readme");

	tcase_add_unchecked_fixture(tc, setup, harness_fixture_stop);
	tcase_add_checked_fixture(tc, harness_fixture_recover, NULL);
	tcase_set_timeout(tc, RUN_MS / 1000 + 60);
	tcase_add_test(tc, quickstart);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return harness_run_suite(readme_suite());
}
