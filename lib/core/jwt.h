#ifndef BDS_JWT_H
#define BDS_JWT_H
/*
 * Developer tokens: compact JWS signed with Ed25519 ("alg":"EdDSA", RFC 8037).
 * Only EdDSA is accepted: "none", HS256 or any other alg, a wrong kid, a bad
 * signature or an expired token all fail verification.
 */
#include <stdint.h>

struct arena;
struct json_object;

struct jwt_key {
	unsigned char	 pk[32];	/* public key */
	unsigned char	 sk[64];	/* libsodium secret key (seed || pk) */
	char		 kid[24];	/* base64url of the first 16 bytes of SHA-256(pk) */
};

/* Derive the key pair from a 32-byte seed. 0 ok, -1 failure. */
int	 jwt_key_from_seed(struct jwt_key *, const unsigned char seed[32]);

/*
 * Sign claims (a JSON object; not consumed) into "header.payload.signature"
 * with header {"alg":"EdDSA","typ":"JWT","kid":<kid>}. Arena string.
 */
char	*jwt_sign(struct arena *, const struct jwt_key *, struct json_object *claims);

/*
 * Verify a token: exactly three base64url parts, header alg "EdDSA" and typ
 * "JWT" (if present) and kid equal to the key's, valid signature, payload an
 * object with integer exp > now, iat <= now + 60 (clock skew), and iss and
 * aud equal to the given strings (aud may be a string or an array holding
 * it). 0 ok with *claims set (arena-owned); -1 otherwise with *why set to a
 * short static reason for the log (never for the client).
 */
int	 jwt_verify(struct arena *, const struct jwt_key *, const char *token,
	    const char *iss, const char *aud, int64_t now,
	    struct json_object **claims, const char **why);

/* {"keys":[{"kty":"OKP","crv":"Ed25519","x":...,"kid":...,"alg":"EdDSA","use":"sig"}]} */
struct json_object *jwt_jwks(struct arena *, const struct jwt_key *);

#endif
