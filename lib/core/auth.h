#ifndef BDS_AUTH_H
#define BDS_AUTH_H
/*
 * Authentication kinds the route table names. The dispatcher calls
 * auth_resolve() before validation; handlers read r->user_id / r->client_id.
 */
#include <stdint.h>
#include <libpq-fe.h>

struct arena;
struct req;
struct config;
struct jwt_key;
struct db_stmt_set;

#define AUTH_ACCESS_TTL 3600	/* seconds, spec: access tokens live 1 hour */
#define AUTH_AUDIENCE "bds-developer-api"

/* API keys: "bds_<env>_<43 base62 chars><6 base62 checksum chars>". */
#define AUTH_KEY_PREFIX_LEN 16	/* characters shown in listings */
/* A new key for env (sandbox, development, production); arena string. */
char	*auth_key_new(struct arena *, const char *env);
/* 1 when key has the format and a valid checksum (cheap pre-check), else 0. */
int	 auth_key_wellformed(const char *key);
/* Bearer secrets a client holds ("bds_lat_", "bds_pub_", "bds_tkt_",
 * "bds_lst_"): prefix + base62 of 32 random bytes (43 chars) + the 6-char
 * checksum keys use; arena string. Store only auth_key_hash() of it. */
char	*auth_token_new(struct arena *, const char *prefix);
/* 1 when s is prefix + 43 base62 chars + a valid checksum, else 0. */
int	 auth_token_wellformed(const char *s, const char *prefix);
/* SHA-256 of a key as hex (what client_secrets.key_hash stores). */
char	*auth_key_hash(struct arena *, const char *key);

/* Fill the principal for the route's auth kinds; 0 ok, else the error status
 * already written (401). */
int	 auth_resolve(struct req *);
/*
 * A key served from the worker's cache leaves r->key_unconfirmed set: it
 * is confirmed after the request's first query (db_query runs
 * r->after_query, which auth sets: the statement was the round trip, then
 * the key's revocation channel; a revoked key sets r->key_revoked and the
 * result is dropped: only reads take this path), or by auth_confirm (a
 * round trip of its own: before a write's handler, and after any handler
 * that answered without a query). auth_confirm: 0 (confirmed or revoked:
 * see r->key_revoked), -1 database failure.
 */
int	 auth_confirm(struct req *);
/*
 * The credential's environment (r->env) against the host: the sandbox host
 * takes sandbox credentials only, the live host the others. 0, or 401
 * WRONG_ENVIRONMENT written ("this sandbox <what> is not accepted ...").
 */
int	 auth_host_or_reply(struct req *, const char *what);
/* The process's signing key, derived once from cfg->jwt_seed. */
const struct jwt_key *auth_jwt_key(const struct config *);
/* Seconds since the epoch (wall clock). */
int64_t	 auth_now(void);

extern const struct db_stmt_set auth_stmt_set;

#endif
