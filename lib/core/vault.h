#ifndef BDS_VAULT_H
#define BDS_VAULT_H
/*
 * The credential vault: secrets kept for a long time (a link's biller
 * credentials and device token) sealed under a key ring, with the key's id
 * stored beside each ciphertext so keys rotate (`bdsctl keys
 * rotate-credentials` re-seals every row under the current key).
 *
 * The ring, from the config:
 *	credential_key_id	the current key's id (default "secret_key.v1")
 *	credential_key		its 32 bytes, hex (default: secret_key)
 *	credential_keys_old	"id=hex,id=hex": keys that still open old rows
 * "secret_key.v1" always names secret_key, so rows sealed before the ring
 * existed keep opening. Sealing always uses the current key.
 */
#include <stddef.h>

struct arena;
struct config;

/*
 * A key ring: the current key and its id, the old keys that still open
 * rows ("id=hex,id=hex"), and optionally one more id that names a fixed
 * key (the credentials' "secret_key.v1"). The credential ring below is
 * one; another module fills its own from its settings (lib/pay: the
 * card numbers' ring), so each secret kind rotates on its own.
 */
struct vault_ring {
	const char		*what;		/* the setting's name, for errors */
	const char		*id;		/* the current key's id */
	const unsigned char	*key;		/* the current key, 32 bytes */
	const char		*old;		/* "id=hex,...", or "" */
	const char		*fixed_id;	/* NULL, or an id that always opens */
	const unsigned char	*fixed;		/* the key fixed_id names */
};
/* The credential ring of the config (below). */
void	 vault_ring_credentials(const struct config *, struct vault_ring *);
/* vault_seal_hex, vault_open_hex and vault_check on any ring. */
const char *vault_ring_seal_hex(struct arena *, const struct vault_ring *, const char *ad,
	    const void *msg, size_t len);
int	 vault_ring_open_hex(struct arena *, const struct vault_ring *, const char *key_id,
	    const char *hex, const char *ad, unsigned char **msg, size_t *len);
int	 vault_ring_check(const struct vault_ring *, char *err, size_t errlen);

/*
 * Re-seal under the ring's current key every row not under it, in
 * transactions of VAULT_ROTATE_BATCH rows (`bdsctl keys rotate-…`). stale
 * selects ($1 the current id, $2 the last id seen, $3 the batch size) the
 * columns client_id, id, sealed hex, key id, locking them (FOR UPDATE SKIP
 * LOCKED), in id order; reseal writes ($1 client, $2 id, $3 hex, $4 key
 * id). The row's id is the associated data; each plaintext is wiped after
 * use. Prints "keys: <what> re-sealed under <id>: N" and names the rows
 * that open under no key of the ring (left as they are). 0, or -1 when
 * such a row was found or the database failed.
 */
struct db;
struct db_stmt;
#define VAULT_ROTATE_BATCH	500
int	 vault_rotate(struct db *, struct arena *, const struct vault_ring *,
	    struct db_stmt *stale, struct db_stmt *reseal, const char *what);

/* The current key's id. */
const char *vault_key_id(const struct config *);
/* Seal msg under the current key with ad bound (e.g. the row id): hex in
 * the arena, NULL on failure. */
const char *vault_seal_hex(struct arena *, const struct config *, const char *ad,
	    const void *msg, size_t len);
/* Open hex sealed under key_id with ad: 0 with *msg (arena, NUL-terminated,
 * wipe it after use) and *len; -1 unknown key, bad text or tampering. */
int	 vault_open_hex(struct arena *, const struct config *, const char *key_id,
	    const char *hex, const char *ad, unsigned char **msg, size_t *len);
/* 0 when the ring in the config is well-formed; -1 with err. */
int	 vault_check(const struct config *, char *err, size_t errlen);

#endif
