#ifndef BDS_TARENA_H
#define BDS_TARENA_H
/*
 * The fixture of a unit suite whose tests allocate: one arena `a`, fresh
 * for each test (tcase_add_checked_fixture(tc, setup, teardown)).
 */
#include "core/arena.h"

static struct arena a;

static void
setup(void)
{
	arena_init(&a);
}

static void
teardown(void)
{
	arena_free(&a);
}

#endif
