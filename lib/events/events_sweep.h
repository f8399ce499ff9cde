#ifndef BDS_EVENTS_SWEEP_H
#define BDS_EVENTS_SWEEP_H
/*
 * Retention (bdsctl jobs): events are kept 30 days (the activity feed's
 * window); their deliveries and attempt logs go with them (ON DELETE
 * CASCADE).
 */
struct arena;
struct config;
struct db;
struct db_stmt_set;

/* Remove events older than 30 days: how many, or -1. */
long long events_sweep(const struct config *, struct db *, struct arena *);

extern const struct db_stmt_set events_sweep_stmt_set;

#endif
