#ifndef BDS_METER_H
#define BDS_METER_H
/*
 * Usage counting in the worker (docs/metering.md): every answer to a
 * request whose credential named a client adds one to the worker's counter
 * of (client, environment, UTC day, "api_requests.<family>"), the family
 * being the route pattern's segment after /v1. The counters live in this
 * process's memory only; meter_flush adds them to usage_counters, one
 * UPSERT per counter, between requests (the worker loop, core/server_worker.c)
 * every `metering.flush_interval` seconds and when the worker stops. A
 * worker killed -9 loses what it counted since its last flush: at most
 * one interval of its requests.
 *
 * Nothing counts until meter_start (the workers call it when `metering`
 * is on), so the other programs that dispatch count nothing.
 */
#include <stddef.h>
#include <stdint.h>

struct arena;
struct config;
struct db;
struct db_stmt_set;
struct req;

#define METER_FAMILY_MAX	48	/* "api_requests." + the family fits */

/* Counting on from now, flushed every interval_s seconds. */
void	 meter_start(int interval_s);
/* Count r's answer when its credential named a client (dispatch). */
void	 meter_count(const struct req *);
/* Milliseconds until the next flush is due: 0 due now, -1 nothing counted. */
int	 meter_wait_ms(int64_t now_us);
/*
 * Add every counter to usage_counters, one UPSERT each; a counter written
 * is cleared, one the database refused for its row (its client is gone)
 * is dropped, the rest stay for the next flush. Returns the counters left,
 * 0 when all were written.
 */
int	 meter_flush(struct db *, struct arena *);
/* The family of a route pattern ("/v1/bills/{id}" → "bills") into out;
 * 0, or -1 when the pattern has none or it does not fit. */
int	 meter_family(const char *pattern, char *out, size_t outlen);

extern const struct db_stmt_set meter_stmt_set;

#endif
