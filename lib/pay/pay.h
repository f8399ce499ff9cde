#ifndef BDS_PAY_H
#define BDS_PAY_H
/*
 * Pay (SPEC "Pay", DOMAIN "Pay"): pay tokens a client's server mints for
 * one end user, payment methods (cards: the number sealed under the pay
 * key ring, fingerprinted, never readable again; the CVV checked for shape
 * and wiped), and payment attempts, gated: POST /v1/pay/payments answers
 * 501 PAYMENT_EXECUTION_NOT_AVAILABLE unless the deployment sets
 * pay.execution = sandbox, and then the sandbox processor of bds-jobs
 * settles each attempt by its amount (pay_process.c). docs/pay.md says what
 * is stored and how keys rotate.
 *
 * Bearers: an API key, a link access token (its link's user and bills)
 * or a pay token (its user, and its bill and method when it binds them).
 */
#include <stddef.h>

#include "core/config.h"
#include "core/validate.h"

struct arena;
struct config;
struct db;
struct req;
struct json_object;
struct db_stmt_set;

#define PAY_TOKEN_PREFIX	"bds_pay_"
#define PAY_TOKEN_TTL_S		(15 * 60)	/* SPEC "Limits": pay token TTL */
#define PAY_METADATA_MAX	4096		/* bytes of a pay token's metadata_json */
#define PAY_BUCKET_MAX		64
#define PAY_LIMIT_DEFAULT	25		/* payment methods per page */
#define PAY_LIMIT_MAX		100
#define PAY_JOB_PROCESS		"pay.process"	/* the sandbox processor, subject the attempt */

/* ---- handlers (lib/routes.c) ---- */
int	 pay_tokens_create(struct req *, struct json_object *);
int	 pay_tokens_current(struct req *, struct json_object *);
int	 pay_sessions_create(struct req *, struct json_object *);
int	 pay_methods_create(struct req *, struct json_object *);
int	 pay_methods_list(struct req *, struct json_object *);
int	 pay_methods_delete(struct req *, struct json_object *);
int	 pay_payments_create(struct req *, struct json_object *);
int	 pay_payments_get(struct req *, struct json_object *);

extern const struct vfield pay_tokens_create_fields[], pay_sessions_create_fields[],
    pay_methods_create_fields[], pay_methods_list_query[], pay_payments_create_fields[];

/* The bearer resolver of "bds_pay_" tokens (routes_tokens): r->client_id,
 * r->env and r->pay_token_id, or the 401 written (INVALID_PAY_TOKEN,
 * PAY_TOKEN_EXPIRED). The link host takes a token of any environment, as
 * it serves the card page of both; the api hosts only their own. */
int	 pay_auth_token(struct req *, const char *token);

/* `bdsctl keys rotate-pan`: every sealed card number re-sealed under the
 * ring's current key (pay_pan_key_id); 0, or -1 with the reason printed. */
int	 pay_rotate_pan(const struct config *, struct db *, struct arena *);

/* bds-jobs: the sandbox processor's run of one attempt */
struct jobs_job;
enum jobs_outcome pay_process_apply(struct req *, struct jobs_job *);

/* Sweep (`bdsctl jobs`): expired pay tokens removed. */
long long pay_tokens_sweep(const struct config *, struct db *, struct arena *);

extern const struct db_stmt_set pay_tokens_stmt_set, pay_methods_stmt_set,
    pay_payments_stmt_set;

/* The module's settings (config keys of the same names, written
 * pay.execution or pay_execution alike). */
struct pay_settings {
	char		*pay_execution;		/* off | sandbox */
	char		*pay_pan_key_id;	/* the current card key's id */
	unsigned char	 pay_pan_key[32];	/* hex; default: derived from secret_key */
	int		 pay_pan_key_set;
	char		*pay_pan_keys_old;	/* "id=hex,...": keys that still open rows */
	unsigned char	 pay_fingerprint_key[32]; /* hex; default: derived from secret_key */
	int		 pay_fingerprint_key_set;
};

/* The module (pay_module.c) and its settings block (core/config.h). */
extern const struct module pay_module;
static inline const struct pay_settings *
pay_settings(const struct config *c)
{
	return config_module(c, &pay_module);
}

#endif
