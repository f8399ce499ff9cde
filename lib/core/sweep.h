#ifndef BDS_SWEEP_H
#define BDS_SWEEP_H
/*
 * A sweep of `bdsctl jobs` in batches (struct module_sweep's run). Each
 * call of batch runs in a transaction of its own, begun before and
 * committed after it, and answers how many rows it handled, at most limit
 * (its statement's LIMIT, rows taken FOR UPDATE SKIP LOCKED so two sweeps
 * share the work). The next batch follows while one comes back full, at
 * most max_batches (0: no bound): a sweep that fell behind catches up
 * without one transaction holding every row. The arena is reset after each
 * batch, so a batch makes its parameters itself.
 *
 * The rows handled in all, or -1 when a batch or the database failed (that
 * batch rolled back; the earlier ones stay committed).
 */
struct arena;
struct config;
struct db;
struct req;

typedef long long (*sweep_batch_fn)(struct req *, int limit);

long long sweep_batches(const struct config *, struct db *, struct arena *,
	    int limit, int max_batches, sweep_batch_fn batch);

#endif
