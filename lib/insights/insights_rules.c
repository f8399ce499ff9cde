/* The insight rules (insights_rules.h). Placeholder until the rules land:
 * finds nothing. */
#include <stdio.h>
#include <string.h>

#include <json-c/json.h>

#include "core/arena.h"
#include "insights/insights_rules.h"

void
ins_thresholds_default(struct ins_thresholds *t)
{
	t->duplicate_days = 5;
	t->baseline_bills = 6;
	t->baseline_min = 3;
	t->anomaly_ratio = 0.30;
	t->anomaly_mads = 3.0;
	t->overdue_days = 3;
	t->spike_ratio = 0.50;
	t->spike_units = 5;
	t->usage_bills = 12;
	t->usage_sds = 2.0;
	t->usage_floor = 0.10;
}

int
ins_evaluate(struct arena *a, const struct ins_history *h, struct ins_findings *out)
{
	(void)a;
	(void)h;
	(void)out;
	return 0;
}

void
ins_findings_free(struct ins_findings *f)
{
	size_t i;

	for (i = 0; i < f->n; i++) {
		json_object_put(f->v[i].evidence);
		json_object_put(f->v[i].actions);
	}
	f->n = 0;
}

const char *
ins_normalise(struct arena *a, const char *description)
{
	return arena_printf(a, "%s", description);
}

int
ins_day(const char *s, int *day)
{
	int y, m, d;

	if (sscanf(s, "%4d-%2d-%2d", &y, &m, &d) != 3)
		return -1;
	*day = 0;
	return -1;
}
