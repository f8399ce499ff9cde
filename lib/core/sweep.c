/* Sweeps in batches, one transaction each. */
#include <stddef.h>

#include "core/arena.h"
#include "core/db.h"
#include "core/req.h"
#include "core/sweep.h"

long long
sweep_batches(const struct config *cfg, struct db *d, struct arena *a,
    int limit, int max_batches, sweep_batch_fn batch)
{
	long long total = 0, n;
	struct req r;

	req_init(&r, cfg, d, a, REQ_ID_SWEEP);
	for (int b = 0; max_batches == 0 || b < max_batches; b++) {
		if (db_begin(d) != 0)
			return -1;
		if ((n = batch(&r, limit)) < 0 || db_commit(d) != 0) {
			db_rollback(d);
			return -1;
		}
		total += n;
		arena_reset(a);
		if (n < limit)
			break;
	}
	return total;
}
