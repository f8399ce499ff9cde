#ifndef BDS_TCHECK_H
#define BDS_TCHECK_H
/* The main of every unit suite: run it, exit 0 only when every check passed. */
#include <check.h>
#include <stdlib.h>

static inline int
tcheck_run(Suite *s)
{
	SRunner *sr = srunner_create(s);
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

#endif
