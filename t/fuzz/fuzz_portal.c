/*
 * libFuzzer target for the portal connector's answer parsers
 * (lib/jobs/connectors/portal_parse.c): what a biller's portal sends is
 * hostile input, parsed in bds-jobs. Each input is one answer body for the
 * parser its first byte names (login, the MFA answer, accounts, statements,
 * payments, an error answer); every outcome must keep the promises of
 * t/jobs/portal_props.h (the property test in check_portal.c checks the
 * same ones on seeded mutations in scripts/test).
 *
 * Input layout:
 *	byte 0		the parser: byte % PP_COUNT (enum portal_props_parser; the
 *			seeds in portal-seeds/ write it as a digit, '0' is login)
 *	rest		the answer body
 *
 * A broken promise calls abort(), which libFuzzer reports as a crash.
 * Build and run with `scripts/fuzz portal`; see t/fuzz/README.md.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/arena.h"
#include "../jobs/portal_props.h"

int	 LLVMFuzzerTestOneInput(const uint8_t *, size_t);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct arena a;
	const char *broken;
	int taken;

	if (size < 1)
		return 0;
	arena_init(&a);
	broken = portal_props_run(&a, (enum portal_props_parser)(data[0] % PP_COUNT),
	    (const char *)data + 1, size - 1, &taken);
	if (broken != NULL) {
		fprintf(stderr, "parser %d: %s\n", data[0] % PP_COUNT, broken);
		abort();
	}
	arena_free(&a);
	return 0;
}
