/*
 * bench/meter_cost: what core/meter.c's counting costs a request, in
 * nanoseconds per meter_count (the dispatcher's one call), for one client
 * (one hot counter) and for 10,000 clients (a big table).
 * bench/meter_cost.sh builds and runs it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/clock.h"
#include "core/meter.h"
#include "core/req.h"
#include "core/router.h"

static const struct route bill = { M_GET, "/v1/bills/{id}", AUTH_KEY, NULL, NULL, NULL, 0 };

/* ns per meter_count over n calls spread over k clients. */
static double
run(long n, int k)
{
	char (*ids)[24] = calloc((size_t)k, 24);
	struct req r;
	long long t0, t1;

	for (int i = 0; i < k; i++)
		snprintf(ids[i], 24, "cli_%08d", i);
	memset(&r, 0, sizeof(r));
	r.match.route = &bill;
	r.env = "sandbox";
	r.status = 200;
	t0 = mono_ns();
	for (long i = 0; i < n; i++) {
		r.client_id = ids[i % k];
		meter_count(&r);
	}
	t1 = mono_ns();
	free(ids);
	return (double)(t1 - t0) / (double)n;
}

int
main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 20000000;

	meter_start(5);
	(void)run(n / 10, 1);		/* warm */
	printf("meter_count, 1 client: %.1f ns per request (%ld calls)\n", run(n, 1), n);
	printf("meter_count, 10000 clients: %.1f ns per request (%ld calls)\n", run(n, 10000), n);
	return 0;
}
