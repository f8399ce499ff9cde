/*
 * Scheduled retrieval and the operator's tools: the next
 * refresh drawn within the interval ± jitter, `bdsctl jobs` queueing the
 * links that are due, `bdsctl links refresh` (no throttle), a failing
 * refresh's backoff and CONNECTION_DEGRADED after degraded_after_s of
 * failures (link.disconnected once), `bdsctl links correct-reason`
 * (link.failure_reason_corrected numbered from 1, the link unchanged), and
 * the credential vault: `bdsctl keys rotate-credentials` re-seals every
 * link under the current key, bds-jobs opens them after the rotation, a
 * sealed value moved to another link does not open, and no credential is
 * stored in plaintext.
 *
 * Links come from the sandbox API (its connector opens the credentials
 * like any other); the failing ones point at a portal biller whose
 * base_url is a loopback port where nothing listens (flagged
 * sandbox_portal, so its sandbox links are retrieved): every attempt is a
 * transient failure, retried (jobs_retry_schedule 1) until the job is dead.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>
#include <libpq-fe.h>

#include "devacct.h"
#include "harness.h"

#define IDLE_MS 60000
#define DEAD_BILLER "blr_01900000-0000-7000-8000-00000000dead"
#define KEY2 "2222222222222222222222222222222222222222222222222222222222222222"
#define KEY3 "3333333333333333333333333333333333333333333333333333333333333333"

static struct devacct dev;
static char *client, *key;

static void
jobs_idle(void)
{
	ck_assert_msg(harness_jobs_wait_idle(IDLE_MS) == 0, "%s", harness_error());
}

/* A retrieved sandbox link of fixture username; its id (malloc'ed). */
static char *
link_new(const char *username)
{
	char *id = devacct_sandbox_link(key, harness_fmt("u-%s-%d", username, getpid()),
	    username);

	jobs_idle();
	return id;
}

/* Until the link's retrieval job has no attempt left to make (its retries
 * wait whole seconds, which jobs_idle does not wait for). */
static void
retrieval_settled(const char *link)
{
	ck_assert_msg(harness_jobs_wait_settled("retrieval", link, IDLE_MS) == 0, "%s",
	    harness_error());
}

static long long
link_int(const char *link, const char *expr)
{
	return devacct_sql_int(harness_fmt("SELECT %s FROM links WHERE id = $1", expr), link,
	    NULL);
}

static char *
link_str(const char *link, const char *expr)
{
	return devacct_sql_value(harness_fmt("SELECT %s FROM links WHERE id = $1", expr), link,
	    NULL);
}

static long long
events_of(const char *link, const char *type)
{
	return devacct_sql_int("SELECT count(*) FROM events WHERE type = $2"
	    " AND data->'object'->>'id' = $1", link, type);
}

static int
bdsctl(const char *a1, const char *a2, const char *a3)
{
	const char *args[] = { a1, a2, a3, NULL };

	return harness_bdsctl(args);
}

/* Append settings to the stack's config (read again by bdsctl at once and
 * by bds-jobs when restarted). */
static void
config_append(const char *text)
{
	FILE *f = fopen(harness_config_path(), "a");

	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	ck_assert_int_eq(fclose(f), 0);
}

static void
jobs_restart(void)
{
	ck_assert_int_eq(harness_jobs_stop(), 0);
	ck_assert_msg(harness_jobs_start() == 0, "%s", harness_error());
}

/* ------------------------------------------------------------------ */

START_TEST(next_refresh_jittered)
{
	char *link = link_new("user_good");
	/* default refresh_interval_s 86400, refresh_jitter_pct 20 */
	long long s = link_int(link, "extract(epoch FROM next_sync_at - last_success_at)::bigint");

	ck_assert_msg(s >= 86400 * 8 / 10 && s <= 86400 * 12 / 10, "next refresh in %lld s", s);
	ck_assert_int_eq(link_int(link, "refresh_count"), 1);
	free(link);
}
END_TEST

/* Spread: 12 links do not all get the same next time. */
START_TEST(refresh_spread)
{
	char *links[12];

	for (int i = 0; i < 12; i++)
		links[i] = devacct_sandbox_link(key, harness_fmt("spread-%d-%d", getpid(), i),
		    "user_empty");
	jobs_idle();
	ck_assert_int_ge(devacct_sql_int("SELECT count(DISTINCT (extract(epoch FROM"
	    " next_sync_at - last_success_at) / 600)::bigint) FROM links"
	    " WHERE client_user_id LIKE $1", harness_fmt("spread-%d-%%", getpid()), NULL), 6);
	for (int i = 0; i < 12; i++)
		free(links[i]);
}
END_TEST

START_TEST(due_links_refreshed)
{
	char *link = link_new("user_good"), *other = link_new("user_empty");

	devacct_sql_exec("UPDATE links SET next_sync_at = now() - interval '1 minute'"
	    " WHERE id = $1", link, NULL);
	ck_assert_int_eq(bdsctl("jobs", NULL, NULL), 0);
	jobs_idle();
	ck_assert_int_eq(link_int(link, "refresh_count"), 2);
	ck_assert_int_eq(link_int(other, "refresh_count"), 1);	/* not due */
	ck_assert_int_eq(link_int(link, "(next_sync_at > now() + interval '19 hours')::int"), 1);
	/* nothing due any more */
	ck_assert_int_eq(bdsctl("jobs", NULL, NULL), 0);
	jobs_idle();
	ck_assert_int_eq(link_int(link, "refresh_count"), 2);
	free(link);
	free(other);
}
END_TEST

START_TEST(operator_refresh)
{
	char *link = link_new("user_good"), *bare;

	ck_assert_int_eq(bdsctl("links", "refresh", link), 0);
	jobs_idle();
	ck_assert_int_eq(link_int(link, "refresh_count"), 2);
	/* again at once: no 10-minute throttle for an operator; bare UUID */
	bare = strdup(link + strlen("link_"));
	ck_assert_int_eq(bdsctl("links", "refresh", bare), 0);
	jobs_idle();
	ck_assert_int_eq(link_int(link, "refresh_count"), 3);
	ck_assert_int_eq(bdsctl("links", "refresh", "link_01900000-0000-7000-8000-000000000000"),
	    1);
	ck_assert_int_eq(bdsctl("links", "refresh", "nonsense"), 1);
	ck_assert_int_eq(bdsctl("links", NULL, NULL), 2);
	/* a DISCONNECTED link is repaired, not refreshed */
	devacct_sql_exec("UPDATE links SET status = 'DISCONNECTED', disconnect_reason = 'expired'"
	    " WHERE id = $1", link, NULL);
	ck_assert_int_eq(bdsctl("links", "refresh", link), 1);
	free(bare);
	free(link);
}
END_TEST

START_TEST(correct_reason)
{
	char *link = link_new("user_rejects_later"), *v;
	struct harness_resp *r;
	const char *a[8] = { "links", "correct-reason", NULL, "--family",
	    "credentials_rejected_reason", "--reason", "CONNECTION_DEGRADED", NULL };

	a[2] = link;
	/* ACTIVE: no failure reason to correct */
	ck_assert_int_eq(harness_bdsctl(a), 1);
	r = devacct_call("POST", "sandbox", harness_fmt("/v1/sandbox/links/%s/advance", link),
	    devacct_bearer(key), NULL, NULL);
	harness_expect(r, 202);
	harness_resp_free(r);
	jobs_idle();
	v = link_str(link, "credential_rejection_reason");
	ck_assert_pstr_eq(v, "INVALID_CREDENTIALS");
	free(v);

	ck_assert_int_eq(harness_bdsctl(a), 0);
	ck_assert_int_eq(harness_bdsctl(a), 0);
	ck_assert_int_eq(events_of(link, "link.failure_reason_corrected"), 2);
	v = devacct_sql_value("SELECT data->'object' FROM events WHERE type ="
	    " 'link.failure_reason_corrected' AND data->'object'->>'id' = $1"
	    " ORDER BY (data->'object'->>'correction_version')::int DESC LIMIT 1", link, NULL);
	ck_assert_ptr_nonnull(strstr(v, "\"correction_version\": 2"));
	ck_assert_ptr_nonnull(strstr(v, "\"target_family\": \"credentials_rejected_reason\""));
	ck_assert_ptr_nonnull(strstr(v, "\"corrected_reason\": \"CONNECTION_DEGRADED\""));
	ck_assert_ptr_nonnull(strstr(v, "\"target_original_reason\": \"INVALID_CREDENTIALS\""));
	ck_assert_ptr_nonnull(strstr(v, "\"original_credentials_rejected_reason\":"
	    " \"INVALID_CREDENTIALS\""));
	ck_assert_ptr_nonnull(strstr(v, "\"original_reaped_reason\": \"credentials_rejected\""));
	ck_assert_ptr_nonnull(strstr(v, "\"object\": \"link\""));
	ck_assert_ptr_nonnull(strstr(v, "\"corrected_at\": \""));
	free(v);
	v = devacct_sql_value("SELECT data->'object'->>'correction_version' FROM events WHERE"
	    " type = 'link.failure_reason_corrected' AND data->'object'->>'id' = $1"
	    " ORDER BY created_at, id LIMIT 1", link, NULL);
	ck_assert_pstr_eq(v, "1");
	free(v);
	/* the link itself is unchanged */
	v = link_str(link, "status || '/' || disconnect_reason || '/' || credential_rejection_reason");
	ck_assert_pstr_eq(v, "DISCONNECTED/credentials_rejected/INVALID_CREDENTIALS");
	free(v);
	/* the other family counts on its own */
	a[4] = "reaped_reason";
	a[6] = "expired";
	ck_assert_int_eq(harness_bdsctl(a), 0);
	ck_assert_int_eq(devacct_sql_int("SELECT max(correction_version) FROM"
	    " link_reason_corrections WHERE link_id = $1 AND target_family = $2", link,
	    "reaped_reason"), 1);
	/* a reason of another family, an unknown family: refused, no event */
	a[6] = "INVALID_CREDENTIALS";
	ck_assert_int_eq(harness_bdsctl(a), 1);
	a[4] = "weather";
	ck_assert_int_eq(harness_bdsctl(a), 1);
	ck_assert_int_eq(events_of(link, "link.failure_reason_corrected"), 3);
	free(link);
}
END_TEST

/* A link moved to a portal biller where nothing answers: every refresh
 * fails (transient), backs off, then degrades. */
START_TEST(backoff_then_degraded)
{
	char *link = link_new("user_good"), *v;
	long long wait1, wait2;

	devacct_sql_exec("UPDATE links SET biller_id = $2 WHERE id = $1", link, DEAD_BILLER);
	ck_assert_int_eq(bdsctl("links", "refresh", link), 0);
	retrieval_settled(link);
	v = link_str(link, "status || '/' || sync_status");
	ck_assert_pstr_eq(v, "ACTIVE/error");
	free(v);
	ck_assert_int_eq(link_int(link, "refresh_failures"), 1);
	wait1 = link_int(link, "extract(epoch FROM next_sync_at - last_attempt_at)::bigint");
	ck_assert_msg(wait1 >= 299 && wait1 <= 301, "first backoff %lld s", wait1);

	/* due again: the next failure waits twice as long */
	devacct_sql_exec("UPDATE links SET next_sync_at = now() WHERE id = $1", link, NULL);
	ck_assert_int_eq(bdsctl("jobs", NULL, NULL), 0);
	retrieval_settled(link);
	ck_assert_int_eq(link_int(link, "refresh_failures"), 2);
	wait2 = link_int(link, "extract(epoch FROM next_sync_at - last_attempt_at)::bigint");
	ck_assert_msg(wait2 >= 599 && wait2 <= 601, "second backoff %lld s", wait2);
	ck_assert_int_eq(events_of(link, "link.disconnected"), 0);

	/* failing for longer than degraded_after_s: CONNECTION_DEGRADED, once */
	devacct_sql_exec("UPDATE links SET failing_since = now() - interval '2 days'"
	    " WHERE id = $1", link, NULL);
	ck_assert_int_eq(bdsctl("links", "refresh", link), 0);
	retrieval_settled(link);
	v = link_str(link, "status || '/' || disconnect_reason || '/' || credential_rejection_reason");
	ck_assert_pstr_eq(v, "DISCONNECTED/credentials_rejected/CONNECTION_DEGRADED");
	free(v);
	ck_assert_int_eq(events_of(link, "link.disconnected"), 1);
	ck_assert_int_eq(bdsctl("jobs", NULL, NULL), 0);
	retrieval_settled(link);
	ck_assert_int_eq(events_of(link, "link.disconnected"), 1);
	free(link);
}
END_TEST

/* Re-seal under k2, then k3 (k2 kept as old), with bds-jobs retrieving
 * after each; a value moved to another link never opens. */
START_TEST(rotate_credentials)
{
	char *a = link_new("user_good"), *b = link_new("user_many"), *v;
	const char *args[] = { "keys", "rotate-credentials", NULL };

	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM links WHERE credentials IS NOT NULL"
	    " AND credentials_key_id <> 'secret_key.v1'", NULL, NULL), 0);
	/* the current key is still the legacy one: nothing to do */
	ck_assert_int_eq(harness_bdsctl(args), 0);

	config_append("credential_key_id = k2\ncredential_key = " KEY2 "\n");
	ck_assert_int_eq(harness_bdsctl(args), 0);
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM links WHERE credentials IS NOT NULL"
	    " AND credentials_key_id IS DISTINCT FROM 'k2'", NULL, NULL), 0);
	jobs_restart();
	ck_assert_int_eq(bdsctl("links", "refresh", a), 0);
	jobs_idle();
	ck_assert_int_eq(link_int(a, "refresh_count"), 2);
	v = link_str(a, "status || '/' || sync_status");
	ck_assert_pstr_eq(v, "ACTIVE/ok");
	free(v);

	config_append("credential_key_id = k3\ncredential_key = " KEY3 "\n"
	    "credential_keys_old = k2=" KEY2 "\n");
	ck_assert_int_eq(harness_bdsctl(args), 0);
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM links WHERE credentials IS NOT NULL"
	    " AND credentials_key_id IS DISTINCT FROM 'k3'", NULL, NULL), 0);
	jobs_restart();
	ck_assert_int_eq(bdsctl("links", "refresh", a), 0);
	jobs_idle();
	ck_assert_int_eq(link_int(a, "refresh_count"), 3);

	/* a's sealed value copied onto b, under an old key id: it does not
	 * open for b, the rotation says so and leaves it */
	devacct_sql_exec("UPDATE links SET credentials = (SELECT credentials FROM links"
	    " WHERE id = $1), credentials_key_id = 'k2' WHERE id = $2", a, b);
	ck_assert_int_eq(harness_bdsctl(args), 1);
	v = link_str(b, "credentials_key_id");
	ck_assert_pstr_eq(v, "k2");
	free(v);
	/* nor does retrieval open it: the job fails, b stays as it was */
	ck_assert_int_eq(bdsctl("links", "refresh", b), 0);
	jobs_idle();
	ck_assert_int_eq(link_int(b, "refresh_count"), 1);
	devacct_sql_exec("UPDATE links SET credentials = NULL WHERE id = $1", b, NULL);

	/* an id without its key is a configuration error */
	config_append("credential_key_id = k9\n");
	ck_assert_int_eq(harness_bdsctl(args), 1);
	config_append("credential_key_id = k3\n");
	ck_assert_int_eq(harness_bdsctl(args), 0);
	free(a);
	free(b);
}
END_TEST

/* No credential in any table in plaintext: the sandbox password and the
 * fixture usernames of the links never appear in a dump of the tables
 * that hold credentials or sessions. */
START_TEST(no_plaintext_credentials)
{
	char *link = link_new("user_good");

	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM links WHERE"
	    " position(convert_to('pass_good', 'UTF8') IN credentials) > 0"
	    " OR position(convert_to('user_good', 'UTF8') IN credentials) > 0", NULL, NULL), 0);
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM links WHERE credentials IS NULL"
	    " AND status <> 'REVOKED' AND id = $1", link, NULL), 0);
	free(link);
}
END_TEST

/* ------------------------------------------------------------------ */

static void
stack_up(void)
{
	struct harness_opts o;
	char csv[4096];
	FILE *f;

	harness_opts_defaults(&o);
	o.extra_config = "allow_private_targets = 1\njobs_retry_schedule = 1\n";
	harness_fixture_start(&o);
	devacct_legal();
	devacct_new(&dev, "refresh");
	client = devacct_client_new(&dev);
	key = devacct_key_new(&dev, client, "sandbox");
	/* a portal biller on a port nothing listens on (the harness's
	 * ports are free ones; 1 is never ours) */
	snprintf(csv, sizeof(csv), "%s/dead-biller.csv", harness_dir());
	ck_assert_ptr_nonnull(f = fopen(csv, "w"));
	fputs("id,name,type,status,domains,website,login_url,logo_url,country,"
	    "connectivity_types,consent_scopes,capabilities,connector,base_url\n"
	    DEAD_BILLER ",Dead Portal Power,electric,ACTIVE,dead-portal.example,"
	    "https://dead-portal.example,https://dead-portal.example/login,,US,credentials,"
	    "bills|statements,bills|statements,portal,http://127.0.0.1:1/b/dead\n", f);
	ck_assert_int_eq(fclose(f), 0);
	ck_assert_int_eq(bdsctl("billers", "import", csv), 0);
	/* the sandbox links moved onto it are retrieved only while a sandbox
	 * key may link it: a simulator-like portal, flagged as the development
	 * seed flags the simulator's billers */
	devacct_sql_exec("UPDATE billers SET sandbox_portal = true WHERE id = $1", DEAD_BILLER,
	    NULL);
}

static void
stack_down(void)
{
	free(client);
	free(key);
	harness_fixture_stop();
}

static Suite *
refresh_suite(void)
{
	Suite *s = suite_create("e2e_refresh");
	TCase *tc = tcase_create("refresh");

	tcase_add_unchecked_fixture(tc, stack_up, stack_down);
	tcase_add_checked_fixture(tc, harness_fixture_recover, NULL);
	tcase_set_timeout(tc, 180);
	tcase_add_test(tc, next_refresh_jittered);
	tcase_add_test(tc, refresh_spread);
	tcase_add_test(tc, due_links_refreshed);
	tcase_add_test(tc, operator_refresh);
	tcase_add_test(tc, correct_reason);
	tcase_add_test(tc, backoff_then_degraded);
	tcase_add_test(tc, no_plaintext_credentials);
	/* last: it changes the stack's keys */
	tcase_add_test(tc, rotate_credentials);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return harness_run_suite(refresh_suite());
}
