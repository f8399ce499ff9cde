/*
 * Developer tokens: compact JWS with Ed25519 ("alg":"EdDSA", RFC 8037).
 * Signing and verifying go through libsodium; the JSON of the header and the
 * payload is json-c owned by the arena passed in. Only EdDSA under our own
 * key is ever accepted: the alg is pinned, never chosen by the token.
 */
#include <stdint.h>
#include <string.h>

#include <json-c/json.h>
#include <sodium.h>

#include "core/arena.h"
#include "core/crypto.h"
#include "core/json.h"
#include "core/jwt.h"

#define JWT_ALG		"EdDSA"
#define JWT_TYP		"JWT"
#define JWT_MAX_LEN	8192	/* longer tokens are refused unread */
#define JWT_SKEW	60	/* seconds of clock skew for iat and nbf */
#define JWT_SIGLEN	crypto_sign_BYTES

/*
 * Derive the Ed25519 pair from the seed; kid is base64url of the first 16
 * bytes of SHA-256(pk). 0 ok, -1 failure (k is zeroed then).
 */
int
jwt_key_from_seed(struct jwt_key *k, const unsigned char seed[32])
{
	unsigned char	 h[crypto_hash_sha256_BYTES];

	memset(k, 0, sizeof(*k));
	if (crypto_sign_seed_keypair(k->pk, k->sk, seed) != 0) {
		sodium_memzero(k, sizeof(*k));
		return -1;
	}
	crypto_hash_sha256(h, k->pk, sizeof(k->pk));
	sodium_bin2base64(k->kid, sizeof(k->kid), h, 16,
	    sodium_base64_VARIANT_URLSAFE_NO_PADDING);
	return 0;
}

/*
 * "b64(header).b64(claims).b64(signature)" as an arena string, the header
 * being {"alg":"EdDSA","typ":"JWT","kid":<kid>}. The same claims give the
 * same token (Ed25519 is deterministic, json_dump keeps insertion order).
 * NULL when claims is not an object.
 */
char *
jwt_sign(struct arena *a, const struct jwt_key *k, struct json_object *claims)
{
	struct json_object	*hdr;
	unsigned char		 sig[JWT_SIGLEN];
	const char		*hjson, *pjson;
	char			*input;
	size_t			 hlen, plen;

	if (claims == NULL || !json_object_is_type(claims, json_type_object))
		return NULL;
	hdr = json_obj(a);
	json_set_str(hdr, "alg", JWT_ALG);
	json_set_str(hdr, "typ", JWT_TYP);
	json_set_str(hdr, "kid", k->kid);
	hjson = json_dump(a, hdr, &hlen);
	pjson = json_dump(a, claims, &plen);
	input = arena_printf(a, "%s.%s", crypto_b64url_encode(a, hjson, hlen),
	    crypto_b64url_encode(a, pjson, plen));
	if (crypto_sign_detached(sig, NULL, (const unsigned char *)input,
	    strlen(input), k->sk) != 0)
		return NULL;
	return arena_printf(a, "%s.%s", input,
	    crypto_b64url_encode(a, sig, sizeof(sig)));
}

/*
 * 1 when v is a JSON string of exactly the bytes of want. The length check
 * keeps "EdDSA\u0000x" from passing as "EdDSA".
 */
static int
jwt_str_is(struct json_object *v, const char *want)
{
	size_t	 n = strlen(want);

	return v != NULL && json_object_is_type(v, json_type_string) &&
	    (size_t)json_object_get_string_len(v) == n &&
	    memcmp(json_object_get_string(v), want, n) == 0;
}

/* 1 when aud is the string want or an array holding it. */
static int
jwt_aud_has(struct json_object *aud, const char *want)
{
	size_t	 i, n;

	if (aud != NULL && json_object_is_type(aud, json_type_array)) {
		n = json_object_array_length(aud);
		for (i = 0; i < n; i++)
			if (jwt_str_is(json_object_array_get_idx(aud, i), want))
				return 1;
		return 0;
	}
	return jwt_str_is(aud, want);
}

/*
 * Decode one base64url part and parse it as a JSON object. NULL when it is
 * not base64url, not strict JSON or not an object; *why says which.
 */
static struct json_object *
jwt_part_object(struct arena *a, const char *part, size_t len,
    const char *bad_b64, const char *bad_json, const char **why)
{
	struct json_object	*o;
	unsigned char		*raw;
	const char		*perr;
	size_t			 rawlen;

	if (crypto_b64url_decode(a, arena_strndup(a, part, len), &raw,
	    &rawlen) != 0) {
		*why = bad_b64;
		return NULL;
	}
	o = json_parse(a, (const char *)raw, rawlen, &perr);
	if (o == NULL || !json_object_is_type(o, json_type_object)) {
		*why = bad_json;
		return NULL;
	}
	return o;
}

/* Integer claim name into *v: 1 found, 0 absent, -1 not an integer. */
static int
jwt_int_claim(struct json_object *p, const char *name, int64_t *v)
{
	struct json_object	*o;

	if (!json_object_object_get_ex(p, name, &o))
		return 0;
	if (o == NULL || !json_object_is_type(o, json_type_int))
		return -1;
	*v = json_object_get_int64(o);
	return 1;
}

/*
 * Check a token against k, iss, aud and now. The header is checked before
 * the signature (alg pinned, no crit, kid ours) and the payload is parsed
 * only once the signature holds. iat is required; nbf is optional. 0 with
 * *claims (the arena owns it) and *why NULL; -1 with *claims NULL and *why a
 * static reason for the log.
 */
int
jwt_verify(struct arena *a, const struct jwt_key *k, const char *token,
    const char *iss, const char *aud, int64_t now,
    struct json_object **claims, const char **why)
{
	struct json_object	*hdr, *p, *v;
	unsigned char		*sig;
	const char		*dot1, *dot2;
	size_t			 len, siglen;
	int64_t			 exp, iat, nbf;
	int			 rc;

	*claims = NULL;
	*why = NULL;
	if (token == NULL || iss == NULL || aud == NULL) {
		*why = "no token, issuer or audience";
		return -1;
	}
	if ((len = strnlen(token, JWT_MAX_LEN + 1)) > JWT_MAX_LEN) {
		*why = "token too long";
		return -1;
	}
	if ((dot1 = memchr(token, '.', len)) == NULL ||
	    (dot2 = strchr(dot1 + 1, '.')) == NULL ||
	    strchr(dot2 + 1, '.') != NULL) {
		*why = "not three parts";
		return -1;
	}
	if (dot1 == token || dot2 == dot1 + 1 || dot2 + 1 == token + len) {
		*why = "empty part";
		return -1;
	}

	/* Header: the alg is ours to choose, never the token's. */
	if ((hdr = jwt_part_object(a, token, (size_t)(dot1 - token),
	    "header not base64url", "header not a JSON object", why)) == NULL)
		return -1;
	if (!json_object_object_get_ex(hdr, "alg", &v) ||
	    !jwt_str_is(v, JWT_ALG)) {
		*why = "alg not EdDSA";
		return -1;
	}
	if (json_object_object_get_ex(hdr, "crit", NULL)) {
		*why = "crit not supported";
		return -1;
	}
	if (json_object_object_get_ex(hdr, "typ", &v) &&
	    !jwt_str_is(v, JWT_TYP)) {
		*why = "typ not JWT";
		return -1;
	}
	if (!json_object_object_get_ex(hdr, "kid", &v) ||
	    !jwt_str_is(v, k->kid)) {
		*why = "kid mismatch";
		return -1;
	}

	/* Signature over the ASCII "header.payload" exactly as received. */
	if (crypto_b64url_decode(a, dot2 + 1, &sig, &siglen) != 0) {
		*why = "signature not base64url";
		return -1;
	}
	if (siglen != JWT_SIGLEN) {
		*why = "signature not 64 bytes";
		return -1;
	}
	if (crypto_sign_verify_detached(sig, (const unsigned char *)token,
	    (unsigned long long)(dot2 - token), k->pk) != 0) {
		*why = "bad signature";
		return -1;
	}

	/* Claims. */
	if ((p = jwt_part_object(a, dot1 + 1, (size_t)(dot2 - dot1 - 1),
	    "payload not base64url", "payload not a JSON object", why)) == NULL)
		return -1;
	if (jwt_int_claim(p, "exp", &exp) != 1) {
		*why = "exp missing or not an integer";
		return -1;
	}
	if (exp <= now) {
		*why = "token expired";
		return -1;
	}
	if (jwt_int_claim(p, "iat", &iat) != 1) {
		*why = "iat missing or not an integer";
		return -1;
	}
	if (now > INT64_MAX - JWT_SKEW || iat > now + JWT_SKEW) {
		*why = "iat in the future";
		return -1;
	}
	if ((rc = jwt_int_claim(p, "nbf", &nbf)) == -1) {
		*why = "nbf not an integer";
		return -1;
	}
	if (rc == 1 && nbf > now + JWT_SKEW) {
		*why = "token not yet valid";
		return -1;
	}
	if (!json_object_object_get_ex(p, "iss", &v) || !jwt_str_is(v, iss)) {
		*why = "iss mismatch";
		return -1;
	}
	if (!json_object_object_get_ex(p, "aud", &v) || !jwt_aud_has(v, aud)) {
		*why = "aud mismatch";
		return -1;
	}
	*claims = p;
	return 0;
}

/*
 * The public key set: {"keys":[{"kty":"OKP","crv":"Ed25519","x":b64url(pk),
 * "kid":...,"alg":"EdDSA","use":"sig"}]}, owned by the arena.
 */
struct json_object *
jwt_jwks(struct arena *a, const struct jwt_key *k)
{
	struct json_object	*set, *keys, *jwk;

	set = json_obj(a);
	keys = json_object_new_array();
	jwk = json_object_new_object();
	json_set_str(jwk, "kty", "OKP");
	json_set_str(jwk, "crv", "Ed25519");
	json_set_str(jwk, "x", crypto_b64url_encode(a, k->pk, sizeof(k->pk)));
	json_set_str(jwk, "kid", k->kid);
	json_set_str(jwk, "alg", JWT_ALG);
	json_set_str(jwk, "use", "sig");
	json_object_array_add(keys, jwk);
	json_set(set, "keys", keys);
	return set;
}
