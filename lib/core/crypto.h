#ifndef BDS_CRYPTO_H
#define BDS_CRYPTO_H
/*
 * Crypto helpers over libsodium: ids, encodings, hashing, constant-time
 * comparison. Names avoid libsodium's own crypto_* symbols.
 */
#include <stddef.h>
#include <stdint.h>

struct arena;

#define CRYPTO_UUID_STRLEN 36

int	 crypto_setup(void);		/* sodium_init; 0 ok, -1 failure */
void	 crypto_random_bytes(void *, size_t);
/* Time-ordered UUIDv7 (RFC 9562): 48-bit unix ms, version 7, variant 10. */
void	 crypto_uuid7(unsigned char out[16]);
void	 crypto_uuid_format(const unsigned char in[16], char out[CRYPTO_UUID_STRLEN + 1]);
/* Parse canonical 8-4-4-4-12 hex (either case); 0 ok, -1 invalid. */
int	 crypto_uuid_parse(const char *, unsigned char out[16]);
/* "<prefix>_<uuidv7>", prefix without the underscore ("evt" -> "evt_..."). */
char	*crypto_id_new(struct arena *, const char *prefix);
/* 1 when s is "<prefix>_<uuid>" (or a bare uuid when bare_ok), else 0. */
int	 crypto_id_valid(const char *s, const char *prefix, int bare_ok);

/* base64url without padding. decode: 0 ok (out NUL-terminated too), -1 invalid. */
char	*crypto_b64url_encode(struct arena *, const void *, size_t);
int	 crypto_b64url_decode(struct arena *, const char *, unsigned char **out, size_t *outlen);
char	*crypto_hex_encode(struct arena *, const void *, size_t);
/* Exactly outlen bytes from 2*outlen hex chars; 0 ok, -1 invalid. */
int	 crypto_hex_decode(const char *, unsigned char *out, size_t outlen);

/* Constant-time: 1 when equal. streq takes time independent of where they differ. */
int	 crypto_ct_equal(const void *, const void *, size_t);
int	 crypto_ct_streq(const char *a, const char *b);

void	 crypto_sha256(const void *, size_t, unsigned char out[32]);
void	 crypto_hmac_sha256(const void *key, size_t keylen,
	    const void *msg, size_t msglen, unsigned char out[32]);

/*
 * Secrets at rest: XChaCha20-Poly1305 (IETF) under a 32-byte key.
 * sealed = nonce(24) || ciphertext || tag(16); ad (may be NULL) is bound to
 * it (e.g. the row id), so a sealed value moved to another row fails to open.
 */
#define CRYPTO_SEAL_OVERHEAD (24 + 16)
unsigned char *crypto_seal(struct arena *, const unsigned char key[32],
	    const void *msg, size_t len, const char *ad, size_t *sealed_len);
/* 0 ok with *msg (arena, NUL-terminated) and *len; -1 on any tampering. */
int	 crypto_open(struct arena *, const unsigned char key[32],
	    const unsigned char *sealed, size_t sealed_len, const char *ad,
	    unsigned char **msg, size_t *len);
/*
 * A string sealed as hex, for a bytea parameter (decode($n, 'hex')): NULL
 * on failure. open: such hex back to the string (arena), NULL when it is
 * malformed or does not open under ad. (The link sessions'
 * seal and the request-to-link session URL share it.)
 */
char	*crypto_seal_hex(struct arena *, const unsigned char key[32], const char *msg,
	    const char *ad);
char	*crypto_open_hex(struct arena *, const unsigned char key[32], const char *hex,
	    const char *ad);
/* Keyed hash of a short secret (codes): HMAC-SHA256(key, purpose || 0 || s). */
void	 crypto_keyed_hash(const unsigned char key[32], const char *purpose,
	    const char *s, unsigned char out[32]);

#endif
