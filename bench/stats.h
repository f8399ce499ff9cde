#ifndef BDS_BENCH_STATS_H
#define BDS_BENCH_STATS_H
/* Percentiles of the bench programs' samples (included by each; static). */

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Nearest rank: the smallest sample with at least q of them at or under it. */
static double
pct(const double *sorted, int n, double q)
{
	int k = (int)(q * n + 0.999999);

	if (n == 0)
		return 0;
	return sorted[k < 1 ? 0 : k > n ? n - 1 : k - 1];
}

#endif
