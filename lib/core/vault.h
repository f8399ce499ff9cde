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
