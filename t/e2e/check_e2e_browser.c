/*
 * The connect page in a real browser: Debian's chromium,
 * headless, driven by t/browser/connect_flows.py (python3-selenium,
 * chromium-driver) against this suite's stack, one scenario per test. The
 * script serves the test app (t/browser/site/) on two loopback origins,
 * the client's registered one and another, plays the end user and the
 * client's backend, checks the console (no CSP violation) and the network
 * log (no other host), and saves a screenshot of each screen under
 * t/artifacts/<build dir name>/. This suite then checks what the service
 * recorded: link.completed at the client's webhook, link.session_finished
 * completed or exited, the failed logins counted, a biller request. Two
 * scenarios run axe-core on every screen, in English and in Spanish.
 *
 * The suite skips (77) only when chromium or chromium-driver is not
 * installed; scripts/test installs both (BDS_PKGS).
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
#include <json-c/json.h>

#include "receiver.h"
#include "webpage.h"

/* connect_flows.py's SCOPED_BILLER and REQUEST_HOST */
#define SCOPED_BILLER	"blr_01900000-0000-7000-8000-0000000000aa"
#define REQUEST_HOST	"www.newco-power.example"

/*
 * The stack of check_e2e_web, plus: a sandbox biller that gives bills and
 * usage only (the consent list per scopes), and a biller website the
 * stack's resolver calls public (a biller request; no test needs the
 * internet).
 */
static void
setup(void)
{
	FILE *f;

	webpage_start();
	devacct_sql_exec("INSERT INTO billers (id, name, type, status, domains, website, login_url,"
	    " country, connectivity_types, consent_scopes, capabilities, connector, search_text)"
	    " VALUES ($1, $2, 'sewer', 'ACTIVE', '{scoped-sewer.example}',"
	    " 'https://scoped-sewer.example', 'https://scoped-sewer.example/login', 'US',"
	    " '{credentials}', '{bills,usage}', '{bills,usage}', 'sandbox',"
	    " billers_fold($2 || ' scoped-sewer.example'))", SCOPED_BILLER, "Sandbox Scoped Sewer");
	f = fopen(harness_config_path(), "a");
	ck_assert_msg(f != NULL, "%s: %s", harness_config_path(), strerror(errno));
	fprintf(f, "discovery_hosts = " REQUEST_HOST "=93.184.216.34\n");
	ck_assert_int_eq(fclose(f), 0);
	ck_assert_msg(harness_api_stop() == 0 && harness_api_start() == 0,
	    "bds-api restart: %s", harness_error());
}

/* connect_flows.py SCENARIO for tenant t (other: a second client, for the
 * refusals); the script registers its test app's origin for t's client
 * with the developer's token and serves t/browser/site. Its result
 * (json_object_put it). */
static struct json_object *
browse(const struct webpage_tenant *t, const char *other, const char *scenario)
{
	const char *src = getenv("BDS_SRCDIR") ? getenv("BDS_SRCDIR") : ".";
	const char *env[] = { "BDS_SITE", harness_fmt("%s/t/browser/site", src), NULL };

	return webpage_browse("connect_flows.py", "", t, other, env, scenario);
}

static const char *
res_str(struct json_object *res, const char *key)
{
	struct json_object *v;

	ck_assert_msg(json_object_object_get_ex(res, key, &v) &&
	    json_object_is_type(v, json_type_string), "no %s in %s", key,
	    json_object_to_json_string(res));
	return json_object_get_string(v);
}

/* One figure of the sessions of the result's link token `key`: what is
 * "count(*)" or a column of the one session. */
static long long
session_int(struct json_object *res, const char *key, const char *what)
{
	return devacct_sql_int(harness_fmt("SELECT %s FROM link_sessions WHERE link_token_id = $1",
	    what), res_str(res, key), NULL);
}

/* link.session_finished events of a link token: what is "completed",
 * "exited/<exit_reason>", or NULL for any. */
static long long
finished(const char *lt, const char *what)
{
	return devacct_sql_int("SELECT count(*) FROM events"
	    " WHERE type = 'link.session_finished' AND data->'object'->>'link_token_id' = $1"
	    " AND ($2 = '' OR concat_ws('/', data->'object'->>'status',"
	    " data->'object'->>'exit_reason') = $2)", lt, what ? what : "");
}

static long long
completed(const char *link_id)
{
	return devacct_sql_int("SELECT count(*) FROM events WHERE type = 'link.completed'"
	    " AND data->'object'->>'id' = $1", link_id, NULL);
}

/* The embedded flow from the registered origin: the test app got
 * bds:success and exchanged it; link.completed reached its webhook. */
START_TEST(embedded)
{
	struct receiver *rc;
	struct webpage_tenant t;
	struct json_object *res;
	const char *link;

	if (!webpage_scenario_wanted("embedded"))
		return;
	rc = receiver_start(NULL);
	ck_assert_msg(rc != NULL, "receiver: %s", receiver_error());
	webpage_tenant_new(&t, NULL, NULL);
	devacct_subscribe(t.key, rc);

	res = browse(&t, NULL, "embedded");
	link = res_str(res, "link_id");
	ck_assert_int_eq(completed(link), 1);
	ck_assert_int_eq(finished(res_str(res, "link_token"), "completed"), 0);
	ck_assert_msg(devacct_received(rc, "link.completed", link) != NULL,
	    "link.completed for %s never reached the webhook", link);
	json_object_put(res);
	receiver_stop(rc);
	webpage_tenant_free(&t);
}
END_TEST

/* From an origin the client did not register: not framed, nothing posted,
 * the ticket untouched (the script opened a session with it after), so no
 * session of the page's and no link. */
static void
after_not_allowed(const struct webpage_tenant *t, struct json_object *res)
{
	ck_assert_int_eq(session_int(res, "link_token", "count(*)"), 1);
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM links WHERE client_id = $1",
	    t->client, NULL), 0);
}

/* hosted_url to the registered redirect_uri: the service exchanged it. */
static void
after_hosted(const struct webpage_tenant *t, struct json_object *res)
{
	char *link;

	(void)t;
	ck_assert_int_eq(finished(res_str(res, "link_token"), "completed"), 1);
	link = devacct_sql_value("SELECT data->'object'->>'link_id' FROM events"
	    " WHERE type = 'link.session_finished' AND data->'object'->>'link_token_id' = $1",
	    res_str(res, "link_token"), NULL);
	ck_assert_ptr_nonnull(link);
	ck_assert_int_eq(completed(link), 1);
	free(link);
}

/* MFA, a wrong code first (a failed login), then 1234: completed. */
static void
after_mfa(const struct webpage_tenant *t, struct json_object *res)
{
	(void)t;
	ck_assert_int_eq(finished(res_str(res, "link_token"), "completed"), 1);
	ck_assert_int_eq(session_int(res, "link_token", "failed_logins"), 1);
}

/* In a popup: locked (not a failed login), a wrong password (one), then
 * linked. */
static void
after_wrong_password(const struct webpage_tenant *t, struct json_object *res)
{
	(void)t;
	ck_assert_int_eq(session_int(res, "link_token", "failed_logins"), 1);
	ck_assert_int_eq(completed(res_str(res, "link_id")), 1);
}

/* The close button, embedded and hosted, a page replaced by another
 * open(), and the embedder's close(): exited, user_closed. */
static void
after_exit(const struct webpage_tenant *t, struct json_object *res)
{
	(void)t;
	ck_assert_int_eq(finished(res_str(res, "link_token"), "exited/user_closed"), 1);
	ck_assert_int_eq(finished(res_str(res, "link_token_hosted"), "exited/user_closed"), 1);
	ck_assert_int_eq(finished(res_str(res, "link_token_closed"), "exited/user_closed"), 1);
	ck_assert_int_eq(finished(res_str(res, "link_token_again"), "exited/user_closed"), 1);
}

/* Keyboard only at 320 px: completed. */
static void
after_keyboard(const struct webpage_tenant *t, struct json_object *res)
{
	(void)t;
	ck_assert_int_eq(finished(res_str(res, "link_token"), "completed"), 1);
}

/* The es catalog, then the close button. */
static void
after_es(const struct webpage_tenant *t, struct json_object *res)
{
	(void)t;
	ck_assert_int_eq(finished(res_str(res, "link_token"), "exited/user_closed"), 1);
}

/* A lost login answer, then a refused exit: completed all the same, one
 * link, never exited. */
static void
after_unsure(const struct webpage_tenant *t, struct json_object *res)
{
	(void)t;
	ck_assert_int_eq(finished(res_str(res, "link_token"), "completed"), 1);
	ck_assert_int_eq(finished(res_str(res, "link_token"), "exited/user_closed"), 0);
}

/* Update mode: completed on the same link, repaired in place (no new link). */
static void
after_update(const struct webpage_tenant *t, struct json_object *res)
{
	char *link;

	ck_assert_int_eq(finished(res_str(res, "link_token"), "completed"), 1);
	link = devacct_sql_value("SELECT data->'object'->>'link_id' FROM events"
	    " WHERE type = 'link.session_finished' AND data->'object'->>'link_token_id' = $1",
	    res_str(res, "link_token"), NULL);
	ck_assert_pstr_eq(link, res_str(res, "link_id"));
	free(link);
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM links WHERE client_id = $1"
	    " AND client_user_id = 'web-update'", t->client, NULL), 1);
}

/* Opened for another client: the page stopped after opening the session
 * and sent nothing more. */
static void
after_refused(const struct webpage_tenant *t, struct json_object *res)
{
	(void)t;
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM link_sessions WHERE"
	    " link_token_id = $1 AND status = 'awaiting_credentials'", res_str(res, "link_token"),
	    NULL), 1);
	ck_assert_int_eq(finished(res_str(res, "link_token"), NULL), 0);
}

/* A link token whose ten failed logins were spent (two sessions, by the
 * script): its hosted_url opened no third session, nothing was linked.
 * Then five wrong passwords typed in the page ended its session. */
static void
after_too_many(const struct webpage_tenant *t, struct json_object *res)
{
	ck_assert_int_eq(session_int(res, "link_token", "count(*)"), 2);
	ck_assert_int_eq(devacct_sql_int("SELECT failed_attempts FROM link_tokens"
	    " WHERE id = $1", res_str(res, "link_token"), NULL), 10);
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM links WHERE client_id = $1",
	    t->client, NULL), 0);
	/* and the page's five wrong passwords, in one session */
	ck_assert_int_eq(session_int(res, "link_token_page", "failed_logins"), 5);
}

/* Every step reloaded: one session of the link token (the used ticket
 * never redeemed again, the hosted_url opened twice after), completed. */
static void
after_resume(const struct webpage_tenant *t, struct json_object *res)
{
	(void)t;
	ck_assert_int_eq(session_int(res, "link_token", "count(*)"), 1);
	ck_assert_int_eq(finished(res_str(res, "link_token"), "completed"), 1);
}

/* The biller request reached the client's biller discoveries; ✕ then
 * Leave exited the picker's session. */
static void
after_trust(const struct webpage_tenant *t, struct json_object *res)
{
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM biller_discoveries"
	    " WHERE client_id = $1 AND biller_name = $2", t->client, "Newco Power"), 1);
	ck_assert_int_eq(finished(res_str(res, "link_token_picker"), "exited/user_closed"), 1);
}

/* Done in a window the app opened; axe-core's walks end linked too. */
static void
after_completed(const struct webpage_tenant *t, struct json_object *res)
{
	(void)t;
	ck_assert_int_eq(finished(res_str(res, "link_token"), "completed"), 1);
}

/* Every scenario but the embedded one (it has its webhook receiver): the
 * script's name, whether it needs a second client, and what the service
 * must hold after it. */
static const struct {
	const char	*name;
	int		 other;
	void		(*after)(const struct webpage_tenant *, struct json_object *);
} scenarios[] = {
	{ "not_allowed",	0, after_not_allowed },
	{ "hosted",		0, after_hosted },
	{ "mfa",		0, after_mfa },
	{ "wrong_password",	0, after_wrong_password },
	{ "exit",		0, after_exit },
	{ "keyboard",		0, after_keyboard },
	{ "es",			0, after_es },
	{ "refused",		1, after_refused },
	{ "unsure",		0, after_unsure },
	{ "update",		0, after_update },
	{ "too_many",		0, after_too_many },
	{ "resume",		0, after_resume },
	{ "trust",		0, after_trust },
	{ "done",		0, after_completed },
	{ "axe_en",		0, after_completed },
	{ "axe_es",		0, after_completed },
};

START_TEST(scenario)
{
	struct webpage_tenant t, other = { NULL, NULL };
	struct json_object *res;

	if (!webpage_scenario_wanted(scenarios[_i].name))
		return;
	webpage_tenant_new(&t, NULL, NULL);
	if (scenarios[_i].other)
		webpage_tenant_new(&other, NULL, NULL);
	res = browse(&t, other.client, scenarios[_i].name);
	scenarios[_i].after(&t, res);
	json_object_put(res);
	webpage_tenant_free(&t);
	webpage_tenant_free(&other);
}
END_TEST

static Suite *
browser_suite(void)
{
	Suite *s = suite_create("e2e_browser");
	TCase *tc = tcase_create("browser");

	tcase_add_unchecked_fixture(tc, setup, harness_fixture_stop);
	tcase_add_checked_fixture(tc, harness_fixture_recover, NULL);
	tcase_set_timeout(tc, WEBPAGE_RUN_MS / 1000 + 60);
	tcase_add_test(tc, embedded);
	tcase_add_loop_test(tc, scenario, 0, (int)(sizeof(scenarios) / sizeof(scenarios[0])));
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	if (webpage_browser_missing("check_e2e_browser"))
		return 77;
	return harness_run_suite(browser_suite());
}
