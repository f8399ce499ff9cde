/* The pay module: its routes' statements, the sandbox processor, its keys. */
#include <stddef.h>
#include <string.h>

#include <sodium.h>

#include "core/config.h"
#include "core/db.h"
#include "core/jobq.h"
#include "core/module.h"
#include "core/vault.h"
#include "pay/pay.h"
#include "pay/pay_int.h"

/* The id of the card key derived from secret_key, used while no
 * pay_pan_key is configured; it stays in the ring so its rows open after
 * a configured key takes over (and `bdsctl keys rotate-pan` re-seals them). */
#define PAY_DERIVED_PAN_ID	"secret_key.pan"

extern const struct db_stmt_set pay_process_stmt_set;

/* name, fetch, apply, max_attempts, lease_s, failed */
/* the sandbox processor: no network, apply only */
static const struct jobs_kind process = { PAY_JOB_PROCESS, NULL, pay_process_apply, 10, 60,
	NULL };

static const char *const executions[] = { "off", "sandbox", NULL };

#define S struct pay_settings
const struct module pay_module = {
	.name = "pay",
	.stmt_sets = MODULE_SETS(&pay_tokens_stmt_set, &pay_methods_stmt_set,
	    &pay_payments_stmt_set, &pay_process_stmt_set),
	.job_kinds = MODULE_KINDS(&process),
	.sweeps = (const struct module_sweep[]){
		{ "expired pay tokens removed", pay_tokens_sweep },
		{ NULL, NULL }
	},
	.settings = (const struct config_key[]){
		CONFIG_ONEOF_KEY(S, pay_execution, "off", executions),
		CONFIG_STR_KEY(S, pay_pan_key_id, PAY_DERIVED_PAN_ID),
		{ "pay_pan_key", CONFIG_KEY32, offsetof(S, pay_pan_key), NULL, NULL,
		  offsetof(S, pay_pan_key_set), 0, 0 },
		CONFIG_STR_KEY(S, pay_pan_keys_old, ""),
		{ "pay_fingerprint_key", CONFIG_KEY32, offsetof(S, pay_fingerprint_key), NULL, NULL,
		  offsetof(S, pay_fingerprint_key_set), 0, 0 },
		{ NULL }
	},
	.settings_size = sizeof(S),
};
#undef S

int
pay_execution_enabled(const struct config *c)
{
	return strcmp(pay_settings(c)->pay_execution, "sandbox") == 0;
}

/* A 32-byte key for purpose derived from secret_key (keyed BLAKE2b). */
void
pay_derived_key(const struct config *c, const char *purpose, unsigned char out[32])
{
	crypto_generichash(out, 32, (const unsigned char *)purpose, strlen(purpose),
	    c->secret_key, 32);
}

void
pay_pan_ring(const struct config *c, struct vault_ring *ring, unsigned char derived[32])
{
	const struct pay_settings *s = pay_settings(c);

	pay_derived_key(c, "bds pay card number key", derived);
	ring->what = "pay_pan_key";
	ring->id = s->pay_pan_key_id;
	ring->key = s->pay_pan_key_set ? s->pay_pan_key : derived;
	ring->old = s->pay_pan_keys_old != NULL ? s->pay_pan_keys_old : "";
	ring->fixed_id = PAY_DERIVED_PAN_ID;
	ring->fixed = derived;
}
