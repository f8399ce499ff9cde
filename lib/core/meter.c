/*
 * The worker's usage counters (core/meter.h): an open-addressing table of
 * (client, environment, day, metric) → count, kept in this process only.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/arena.h"
#include "core/clock.h"
#include "core/db.h"
#include "core/log.h"
#include "core/meter.h"
#include "core/req.h"
#include "core/router.h"

#define METER_CLIENT_MAX	64
#define METER_ENV_MAX		16
#define METER_CAP_MIN		64

struct meter_entry {
	uint32_t	 hash;		/* 0: the slot is free */
	int32_t		 day;		/* days since 1970-01-01 UTC */
	long long	 n;
	char		 client[METER_CLIENT_MAX];
	char		 env[METER_ENV_MAX];
	char		 metric[METER_FAMILY_MAX];
};

static struct {
	int			 on;
	int64_t			 interval_us;
	int64_t			 due_us;	/* when the oldest unwritten count must go */
	struct meter_entry	*slots;
	size_t			 cap, used;
} meter;

enum { METER_UPSERT, METER__MAX };
static struct db_stmt stmts[METER__MAX] = {
	/* the worker's counts since its last flush, added to the day's row */
	[METER_UPSERT] = { "meter_upsert",
	    "INSERT INTO usage_counters (client_id, environment, day, metric, value) "
	    "VALUES ($1, $2, $3::date, $4, $5::bigint) "
	    "ON CONFLICT (client_id, environment, day, metric) "
	    "DO UPDATE SET value = usage_counters.value + EXCLUDED.value, updated_at = now()", 0 },
};
const struct db_stmt_set meter_stmt_set = { "meter", stmts, METER__MAX };

void
meter_start(int interval_s)
{
	meter.on = 1;
	meter.interval_us = (int64_t)(interval_s > 0 ? interval_s : 1) * 1000000;
}

int
meter_family(const char *pattern, char *out, size_t outlen)
{
	static const char prefix[] = "api_requests.";
	size_t n;

	if (pattern == NULL || strncmp(pattern, "/v1/", 4) != 0)
		return -1;
	pattern += 4;
	n = strcspn(pattern, "/");
	if (n == 0 || pattern[0] == '{' || sizeof(prefix) + n > outlen)
		return -1;
	memcpy(out, prefix, sizeof(prefix) - 1);
	memcpy(out + sizeof(prefix) - 1, pattern, n);
	out[sizeof(prefix) - 1 + n] = '\0';
	return 0;
}

/* FNV-1a over the key's parts; never 0 (the free slot's mark). */
static uint32_t
key_hash(const char *client, const char *env, int32_t day, const char *metric)
{
	const char *parts[3] = { client, env, metric };
	uint32_t h = 2166136261u;

	for (int i = 0; i < 3; i++) {
		for (const unsigned char *p = (const unsigned char *)parts[i]; *p != '\0'; p++)
			h = (h ^ *p) * 16777619u;
		h = (h ^ 0xff) * 16777619u;
	}
	h = (h ^ (uint32_t)day) * 16777619u;
	return h != 0 ? h : 1;
}

/* The slot of the key in slots (cap a power of two): its own or a free one. */
static struct meter_entry *
slot_of(struct meter_entry *slots, size_t cap, uint32_t h, const char *client,
    const char *env, int32_t day, const char *metric)
{
	for (size_t i = h & (cap - 1);; i = (i + 1) & (cap - 1)) {
		struct meter_entry *e = &slots[i];

		if (e->hash == 0 || (e->hash == h && e->day == day &&
		    strcmp(e->client, client) == 0 && strcmp(e->env, env) == 0 &&
		    strcmp(e->metric, metric) == 0))
			return e;
	}
}

/* Rehash the counters still held into a table of cap slots; 0 ok. */
static int
rehash(size_t cap)
{
	struct meter_entry *slots = calloc(cap, sizeof(*slots));

	if (slots == NULL)
		return -1;
	for (size_t i = 0; i < meter.cap; i++) {
		struct meter_entry *e = &meter.slots[i];

		if (e->hash != 0)
			*slot_of(slots, cap, e->hash, e->client, e->env, e->day, e->metric) = *e;
	}
	free(meter.slots);
	meter.slots = slots;
	meter.cap = cap;
	return 0;
}

void
meter_count(const struct req *r)
{
	char metric[METER_FAMILY_MAX];
	struct meter_entry *e;
	int32_t day;
	uint32_t h;

	if (!meter.on || r->client_id == NULL || r->env == NULL || r->match.route == NULL ||
	    r->status == 401 || r->key_revoked ||
	    strlen(r->client_id) >= METER_CLIENT_MAX || strlen(r->env) >= METER_ENV_MAX ||
	    meter_family(r->match.route->pattern, metric, sizeof(metric)) != 0)
		return;
	if ((meter.used + 1) * 2 > meter.cap &&
	    rehash(meter.cap > 0 ? meter.cap * 2 : METER_CAP_MIN) != 0)
		return;
	day = (int32_t)(time(NULL) / 86400);
	h = key_hash(r->client_id, r->env, day, metric);
	e = slot_of(meter.slots, meter.cap, h, r->client_id, r->env, day, metric);
	if (e->hash == 0) {
		e->hash = h;
		e->day = day;
		e->n = 0;
		strcpy(e->client, r->client_id);
		strcpy(e->env, r->env);
		strcpy(e->metric, metric);
		if (meter.used++ == 0)
			meter.due_us = mono_us() + meter.interval_us;
	}
	e->n++;
}

int
meter_wait_ms(int64_t now_us)
{
	if (meter.used == 0)
		return -1;
	if (meter.due_us <= now_us)
		return 0;
	return (int)((meter.due_us - now_us + 999) / 1000);
}

/* Write one counter; 0 written or dropped, -1 to keep for the next flush. */
static int
flush_one(struct db *db, struct arena *a, const struct meter_entry *e)
{
	char day[16], n[24];
	const char *p[5] = { e->client, e->env, day, e->metric, n };
	time_t t = (time_t)e->day * 86400;
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(day, sizeof(day), "%Y-%m-%d", &tm);
	snprintf(n, sizeof(n), "%lld", e->n);
	if (db_exec(db, a, &stmts[METER_UPSERT], 5, p) != NULL)
		return 0;
	if (db_last_fail(db) == DB_ERROR && strncmp(db_sqlstate(db), "23", 2) == 0) {
		log_msg("warn", "metering: %lld %s of %s/%s dropped: %s", e->n, e->metric,
		    e->client, e->env, db_errmsg(db));
		return 0;	/* the client is gone: its count has no row to go to */
	}
	return -1;
}

int
meter_flush(struct db *db, struct arena *a)
{
	size_t left = 0;

	if (meter.used == 0)
		return 0;
	for (size_t i = 0; i < meter.cap; i++) {
		struct meter_entry *e = &meter.slots[i];

		if (e->hash == 0)
			continue;
		if (left == 0 && flush_one(db, a, e) == 0)
			e->hash = 0;
		else
			left++;	/* after a failure the rest wait too */
	}
	arena_reset(a);
	meter.used = left;
	if (left == 0)
		return 0;
	log_msg("warn", "metering: %zu counters kept for the next flush: %s", left,
	    db_errmsg(db));
	meter.due_us = mono_us() + meter.interval_us;
	/* the slots kept keep their probe order only in a table rebuilt */
	(void)rehash(meter.cap);
	return (int)left;
}
