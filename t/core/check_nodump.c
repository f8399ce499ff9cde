/*
 * lib/core/nodump.c: after nodump() the process may not dump core (the
 * soft and hard RLIMIT_CORE are 0, so not even root raises them back
 * without CAP_SYS_RESOURCE, and PR_GET_DUMPABLE answers 0), and a child
 * forked after it inherits both (bds-api's workers).
 */
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <check.h>

#include "core/nodump.h"
#include "tcheck.h"

START_TEST(no_core)
{
	struct rlimit rl;
	int st;
	pid_t pid;

	ck_assert_int_eq(nodump(), 0);
	ck_assert_int_eq(getrlimit(RLIMIT_CORE, &rl), 0);
	ck_assert_uint_eq(rl.rlim_cur, 0);
	ck_assert_uint_eq(rl.rlim_max, 0);
	ck_assert_int_eq(prctl(PR_GET_DUMPABLE, 0, 0, 0, 0), 0);
	if ((pid = fork()) == 0)
		_exit(getrlimit(RLIMIT_CORE, &rl) == 0 && rl.rlim_cur == 0 && rl.rlim_max == 0 &&
		    prctl(PR_GET_DUMPABLE, 0, 0, 0, 0) == 0 ? 0 : 1);
	ck_assert_int_gt(pid, 0);
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}
END_TEST

static Suite *
nodump_suite(void)
{
	Suite *s = suite_create("nodump");
	TCase *tc = tcase_create("nodump");

	tcase_add_test(tc, no_core);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tcheck_run(nodump_suite());
}
