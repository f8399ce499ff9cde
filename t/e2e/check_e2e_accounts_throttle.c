/*
 * Developer accounts end to end, part 4: the sign-in throttle.
 * An attempt is counted before the password is checked, so a burst never
 * passes more than the limit; the lock is per (account, client address)
 * with a progressive delay, so an attacker at one address cannot lock the
 * owner out from another; past a much higher account-wide ceiling the
 * operator is alerted (log line and the signin_alerts view) instead.
 * Other client addresses come from binding the client socket to another
 * loopback address (127.0.0.2): nginx passes it as REMOTE_ADDR.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <json-c/json.h>

#include "accounts.h"
#include "harness.h"

#define SIGNIN_PATH	"/v1/iam/auth/signin"
#define PAIR_LIMIT	5	/* attempts per (account, address) */
#define PARALLEL	50
#define OTHER_ADDR	"127.0.0.2"

static const char *const json_ct[] = { "Content-Type: application/json", NULL };

/* A sign-in from src (NULL: the default 127.0.0.1); its status. */
static long
signin_from(const char *src, const char *email, const char *password)
{
	const char *body = harness_fmt("{\"email\":\"%s\",\"password\":\"%s\"}", email, password);
	struct harness_resp *r = src != NULL ?
	    harness_request_from(src, "POST", "api", SIGNIN_PATH, json_ct, body, strlen(body)) :
	    harness_request("POST", "api", SIGNIN_PATH, json_ct, body, strlen(body));
	long status = r->status;

	ck_assert_msg(status == 200 || status == 401 || status == 429, "sign-in from %s: %ld %s %s",
	    src ? src : "127.0.0.1", status, r->error, r->body ? r->body : "");
	harness_resp_free(r);
	return status;
}

/* PAIR_LIMIT wrong passwords from the default address, each a 401. */
static void
fail_to_the_limit(const struct acct_user *u)
{
	for (int i = 0; i < PAIR_LIMIT; i++)
		ck_assert_int_eq(signin_from(NULL, u->email, "Wrong-Pass-123!"), 401);
}

/* The Retry-After of a locked sign-in from the default address. */
static int
locked_retry_after(const struct acct_user *u)
{
	struct harness_resp *r = acct_postf(SIGNIN_PATH, NULL,
	    "{\"email\":\"%s\",\"password\":\"%s\"}", u->email, u->password);
	const char *ra;
	int secs;

	acct_assert_iam(r, 429, "TOO_MANY_ATTEMPTS");
	ra = harness_header(r, "Retry-After");
	ck_assert_msg(ra != NULL, "no Retry-After");
	secs = atoi(ra);
	harness_resp_free(r);
	return secs;
}

/* 50 wrong passwords at once: no more than the limit are judged (401),
 * every other one is throttled (429). */
START_TEST(burst_passes_no_more_than_the_limit)
{
	struct harness_resp *out[PARALLEL];
	struct acct_mail mb;
	struct acct_user u;
	const char *body;
	size_t judged = 0, throttled = 0;

	acct_mail_start(&mb);
	acct_new_user(&u, "throttle-burst", &mb);
	body = harness_fmt("{\"email\":\"%s\",\"password\":\"Wrong-Pass-123!\"}", u.email);
	harness_request_burst(PARALLEL, "POST", "api", SIGNIN_PATH, json_ct, body,
	    strlen(body), out);
	for (size_t i = 0; i < PARALLEL; i++) {
		if (out[i]->status == 401)
			judged += strcmp(harness_json_string(out[i], "error_code") ?
			    harness_json_string(out[i], "error_code") : "", "INVALID_CREDENTIALS") == 0;
		else if (out[i]->status == 429)
			throttled++;
		harness_resp_free(out[i]);
	}
	ck_assert_msg(judged <= PAIR_LIMIT && judged >= 1 && judged + throttled == PARALLEL,
	    "%d wrong passwords at once: %zu x 401 INVALID_CREDENTIALS, %zu x 429",
	    PARALLEL, judged, throttled);
	acct_mail_stop(&mb);
}
END_TEST

/* Locked out at one address, the owner still signs in from another; the
 * first address stays locked. */
START_TEST(lock_is_per_address)
{
	struct acct_mail mb;
	struct acct_user u;

	acct_mail_start(&mb);
	acct_new_user(&u, "throttle-pair", &mb);
	fail_to_the_limit(&u);
	ck_assert_int_eq(signin_from(NULL, u.email, u.password), 429);
	ck_assert_int_eq(signin_from(OTHER_ADDR, u.email, u.password), 200);
	ck_assert_int_eq(signin_from(NULL, u.email, u.password), 429);
	acct_mail_stop(&mb);
}
END_TEST

/* The first lock is short; a failure after it ran out locks twice as long. */
START_TEST(lock_grows)
{
	struct acct_mail mb;
	struct acct_user u;
	int first, second;

	acct_mail_start(&mb);
	acct_new_user(&u, "throttle-grow", &mb);
	fail_to_the_limit(&u);
	first = locked_retry_after(&u);
	ck_assert_msg(first > 0 && first <= 60, "first lock: Retry-After %d", first);
	/* let the lock run out */
	acct_sql_exec("UPDATE auth_throttle SET locked_until = now() - interval '1 second'"
	    " WHERE scope = 'pair'", NULL, NULL, NULL);
	ck_assert_int_eq(signin_from(NULL, u.email, "Wrong-Pass-123!"), 401);
	second = locked_retry_after(&u);
	ck_assert_msg(second > 60 && second <= 120, "second lock: Retry-After %d", second);
	acct_mail_stop(&mb);
}
END_TEST

/* Past the account-wide ceiling: an alert for the operator (view and log
 * line), and the account is still not locked for its owner. */
START_TEST(account_ceiling_alerts)
{
	struct acct_mail mb;
	struct acct_user u;
	char *log;

	acct_mail_start(&mb);
	acct_new_user(&u, "throttle-alert", &mb);
	ck_assert_int_eq(acct_sql_int("SELECT count(*) FROM signin_alerts", NULL, NULL, NULL), 0);
	/* 98 failures from elsewhere already in this window */
	acct_sql_exec("INSERT INTO auth_throttle (scope, key, failures, window_start)"
	    " VALUES ('account', $1, 98, now())", u.email, NULL, NULL);
	ck_assert_int_eq(signin_from(OTHER_ADDR, u.email, "Wrong-Pass-123!"), 401);
	ck_assert_int_eq(acct_sql_int("SELECT count(*) FROM signin_alerts", NULL, NULL, NULL), 0);
	ck_assert_int_eq(signin_from(OTHER_ADDR, u.email, "Wrong-Pass-123!"), 401);
	ck_assert_int_eq(acct_sql_int("SELECT count(*) FROM signin_alerts WHERE email = $1"
	    " AND failures = 100", u.email, NULL, NULL), 1);
	/* the log_path file, where bds-api writes its log lines */
	log = harness_slurp(harness_fmt("%s/requests.log", harness_dir()));
	ck_assert_msg(log != NULL && strstr(log, "sign-in alert") != NULL &&
	    strstr(log, u.email) != NULL, "no sign-in alert in the API log");
	ck_assert_msg(strstr(log, "Wrong-Pass-123!") == NULL, "a password in the API log");
	free(log);
	/* one alert per window, and the owner is not locked out */
	ck_assert_int_eq(signin_from(NULL, u.email, "Wrong-Pass-123!"), 401);
	ck_assert_int_eq(signin_from(NULL, u.email, u.password), 200);
	ck_assert_int_eq(acct_sql_int("SELECT count(*) FROM signin_alerts", NULL, NULL, NULL), 1);
	/* the operator's view of it */
	{
		static const char *const alerts[] = { "signin-alerts", NULL };
		const char *path = harness_fmt("%s/bdsctl.log", harness_dir());
		char *out;

		ck_assert_int_eq(harness_bdsctl(alerts), 0);
		out = harness_slurp(path);
		ck_assert_msg(out != NULL && strstr(out, u.email) != NULL &&
		    strstr(out, " failed sign-ins since ") != NULL &&
		    strstr(out, "1 alert\n") != NULL, "bdsctl signin-alerts said: %s",
		    out != NULL ? out : "(nothing)");
		free(out);
	}
	acct_mail_stop(&mb);
}
END_TEST

/* A right password gives its attempt back: many sign-ins from one address
 * never meet the address ceiling. */
START_TEST(right_passwords_do_not_count)
{
	struct acct_mail mb;
	struct acct_user u;

	acct_mail_start(&mb);
	acct_new_user(&u, "throttle-right", &mb);
	for (int i = 0; i < 25; i++)
		ck_assert_int_eq(signin_from(NULL, u.email, u.password), 200);
	acct_mail_stop(&mb);
}
END_TEST

static Suite *
accounts_throttle_suite(void)
{
	Suite *s = suite_create("e2e_accounts_throttle");
	TCase *tc = tcase_create("throttle");

	tcase_add_unchecked_fixture(tc, acct_stack_development, harness_fixture_stop);
	tcase_add_checked_fixture(tc, acct_setup, acct_teardown);
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, burst_passes_no_more_than_the_limit);
	tcase_add_test(tc, lock_is_per_address);
	tcase_add_test(tc, lock_grows);
	tcase_add_test(tc, account_ceiling_alerts);
	tcase_add_test(tc, right_passwords_do_not_count);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return harness_run_suite(accounts_throttle_suite());
}
