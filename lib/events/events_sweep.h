#ifndef BDS_EVENTS_SWEEP_H
#define BDS_EVENTS_SWEEP_H
/*
 * Retention (bdsctl jobs): events, deliveries and attempt logs are
 * partitioned by month (sql/140_partitions.sql); pg_partman's maintenance
 * makes the months ahead and drops a month once all of it is older than
 * EVENTS_KEPT_DAYS. The reads serve only those days (EVENTS_KEPT_SQL).
 */
struct arena;
struct config;
struct db;
struct db_stmt_set;

/* Run pg_partman's maintenance: the months dropped, or -1. */
long long events_sweep(const struct config *, struct db *, struct arena *);
/* After it: a delivery still pending whose event was dropped with its
 * month (a replay made later) fails, saying why; how many, or -1. */
long long events_sweep_orphans(const struct config *, struct db *, struct arena *);

extern const struct db_stmt_set events_sweep_stmt_set;

#endif
