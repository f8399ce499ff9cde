#ifndef BDS_CLOCK_H
#define BDS_CLOCK_H
/*
 * The monotonic clock, for deadlines, leases and durations (never for a
 * time shown to anyone: that is the wall clock, in UTC).
 */
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

#endif
