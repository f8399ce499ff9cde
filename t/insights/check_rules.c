/* The insight rules at, just under and just over their thresholds. */
#include <check.h>

#include "insights/insights_rules.h"
#include "tcheck.h"

START_TEST(defaults)
{
	struct ins_thresholds t;

	ins_thresholds_default(&t);
	ck_assert_int_eq(t.duplicate_days, 5);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("insights_rules");
	TCase *tc = tcase_create("rules");

	tcase_add_test(tc, defaults);
	suite_add_tcase(s, tc);
	return tcheck_run(s);
}
