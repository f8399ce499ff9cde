#ifndef BDS_SANDBOXES_H
#define BDS_SANDBOXES_H
/*
 * Anonymous sandboxes (docs/sandboxes.md): POST /v1/sandboxes, with no
 * credential, makes a client of no developer with a sandbox key, a claim
 * token (shown once, kept as its SHA-256) and a webhook subscription to
 * every event whose deliveries land in the sandbox's inbox (the webhooks
 * module's inbox target). A developer claims it with the token: the client
 * becomes theirs, a new key replaces the old one, which keeps working for
 * sandboxes_previous_key_ttl seconds, and sandbox.claimed is emitted.
 * Unclaimed, it expires SANDBOXES_TTL_DAYS after its creation:
 * sandbox.expiring SANDBOXES_WARN_DAYS before, and at expiry the client
 * and all it made are deleted (`bdsctl jobs`). The evaluation proof is a
 * JWS of the service's EdDSA key (/.well-known/jwks.json) over what the
 * sandbox did.
 *
 * Every route is on the sandbox host (ROUTE_SANDBOX). A sandbox's id in a
 * path is looked up for the credential: another client's sandbox is 404
 * SANDBOX_NOT_FOUND, exactly as an unknown one.
 *
 *	api.c	handlers: parse, call the engine, write the answer
 *	.c	the engine: creation, the claim, the proof's claims, the sweeps
 *	store.c	the rows (sandboxes), the only SQL of the module
 */
#include <stdint.h>

#include "core/config.h"
#include "core/validate.h"

struct arena;
struct db;
struct req;
struct json_object;
struct db_stmt_set;

#define SANDBOXES_PREFIX	"sbx"		/* sbx_<uuidv7> */
#define SANDBOXES_CLAIM_PREFIX	"bds_sct_"	/* a claim token (auth_token_new) */
#define SANDBOXES_TTL_DAYS	60
#define SANDBOXES_WARN_DAYS	7		/* sandbox.expiring before expiry */
#define SANDBOXES_NAME_MAX	100
#define SANDBOXES_DEFAULT_NAME	"Anonymous sandbox"
#define SANDBOXES_SWEEP_BATCH	100		/* sandboxes per transaction of a sweep */

/* ---- handlers (lib/routes.c) ---- */

/* POST /v1/sandboxes (no credential, ROUTE_TX): 201 the sandbox with its
 * key, claim token and inbox subscription's secret, each shown once. */
int	 sandboxes_create(struct req *, struct json_object *);
/* GET /v1/sandboxes/{sandbox_id}/inbox (the sandbox client's key): a page
 * of what its inbox kept, newest first. */
int	 sandboxes_inbox(struct req *, struct json_object *);
/* POST /v1/sandboxes/{sandbox_id}/claim (developer JWT, ROUTE_TX): 200;
 * 403 INVALID_CLAIM_TOKEN, 409 SANDBOX_ALREADY_CLAIMED or
 * CLIENT_LIMIT_REACHED, 404 SANDBOX_NOT_FOUND. */
int	 sandboxes_claim(struct req *, struct json_object *);
/* GET /v1/sandboxes/{sandbox_id}/evaluation-proof (the sandbox's key, or
 * its owner's JWT once claimed): 200 {sandbox_id, object, kid, proof,
 * claims}. */
int	 sandboxes_proof(struct req *, struct json_object *);

extern const struct vfield sandboxes_create_fields[], sandboxes_claim_fields[],
	sandboxes_inbox_query[];

/* ---- the rows (sandboxes_store.c) ---- */

/* One sandbox as stored; arena strings, NULL where the column is. */
struct sandboxes_row {
	const char	*id, *client_id, *name, *webhook_id, *expires_at, *claimed_at,
			*claimed_by, *created_at;
	const char	*claim_sha256;	/* hex */
	int		 expired;	/* unclaimed and past expires_at */
};
/* Insert s (id, client_id, name, webhook_id) with the claim token's hash;
 * *s filled back. 0, or -1 on a database failure. */
int	 sandboxes_store_insert(struct req *, struct sandboxes_row *s, const char *claim_hex);
/* The sandbox id (FOR UPDATE when lock): 1 with *s, 0 none, -1 db. */
int	 sandboxes_store_get(struct req *, const char *id, int lock, struct sandboxes_row *s);
/* Mark it claimed by user_id now: 1 with *s, 0 already claimed, -1 db. */
int	 sandboxes_store_claim(struct req *, const char *id, const char *user_id,
	    struct sandboxes_row *s);
/* Up to n unclaimed sandboxes within SANDBOXES_WARN_DAYS of expiry not yet
 * warned, marked warned (locked, SKIP LOCKED); *rows (arena), -1 db. */
int	 sandboxes_store_expiring(struct req *, int n, struct sandboxes_row **rows);
/* Up to n unclaimed expired sandboxes, locked (SKIP LOCKED); *rows, -1 db. */
int	 sandboxes_store_expired(struct req *, int n, struct sandboxes_row **rows);

extern const struct db_stmt_set sandboxes_stmt_set;

/* ---- the engine (sandboxes.c) ---- */

/* The sandbox of the path for the credential, or the 404 written: an API
 * key of its client in the sandbox environment, or (jwt_ok) the JWT of the
 * developer owning its client. An expired one is gone. */
int	 sandboxes_get_or_reply(struct req *, const char *id, int jwt_ok,
	    struct sandboxes_row *s);
/* The proof's claims of s, now, computed from the database (arena); NULL
 * on a database failure. */
struct json_object *sandboxes_claims(struct req *, const struct sandboxes_row *s);

/* sandbox.claimed of s (claimed), in the claim's transaction: the event's
 * id, or NULL on a database failure. */
const char *sandboxes_claimed_emit(struct req *, const struct sandboxes_row *s,
	    const char *previous_key_expires_at);

/* `bdsctl jobs`: sandbox.expiring to the sandboxes due; the expired ones
 * deleted with their client. The rows handled, or -1. */
long long sandboxes_warn_due(const struct config *, struct db *, struct arena *);
long long sandboxes_delete_expired(const struct config *, struct db *, struct arena *);

/* The module's settings (config keys of the same names). */
struct sandboxes_settings {
	int	 sandboxes_previous_key_ttl;	/* seconds a claimed sandbox's old key works */
};

/* The module (sandboxes_module.c) and its settings block (core/config.h). */
extern const struct module sandboxes_module;
static inline const struct sandboxes_settings *
sandboxes_settings(const struct config *c)
{
	return config_module(c, &sandboxes_module);
}

#endif
