#ifndef BDS_CLOCK_H
#define BDS_CLOCK_H
/*
 * The monotonic clock, for deadlines, leases and durations (never for a
 * time shown to anyone: that is the wall clock, in UTC).
 */
#include <stdint.h>
#include <time.h>

static inline long long
mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static inline long long
mono_us(void)
{
	return mono_ns() / 1000;
}

static inline long long
mono_ms(void)
{
	return mono_ns() / 1000000;
}

/*
 * An instant as the API writes it, everywhere (responses, webhook
 * envelopes and headers, logs): ISO 8601 UTC with milliseconds and Z,
 * "2026-11-27T18:30:00.123Z" (sql: bds_iso, the same text). ms is epoch
 * milliseconds; years outside 0000..9999 are clamped to the ends of that
 * range (the format has four digits). Writes TIME_ISO_SIZE bytes with the
 * NUL into out and returns out.
 */
#define TIME_ISO_SIZE 25
char	*time_iso(char out[TIME_ISO_SIZE], int64_t ms);
/*
 * An RFC 3339 instant ("2026-11-27T18:30:00Z", "...:00.123456Z",
 * "...:00+02:00") as epoch milliseconds in *ms (a finer fraction rounded
 * down, as bds_iso does): 0, or -1 when s is not one.
 */
int	 time_parse(const char *s, int64_t *ms);
/* The wall clock (UTC) in epoch milliseconds. */
int64_t	 time_now_ms(void);

#endif
