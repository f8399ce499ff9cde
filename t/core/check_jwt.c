/*
 * lib/jwt.c: EdDSA compact JWS. The RFC 8037 A.4 vector, an exact token
 * for fixed claims, round trips, a table of accepted tokens and a table of
 * tampered ones (alg none, HS256 key confusion, kid, signature, claims,
 * shape, size), every bit and character flipped, OpenSSL as an independent
 * Ed25519 implementation both ways, and the JWKS document.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <json-c/json.h>
#include <openssl/evp.h>
#include <sodium.h>

#include "core/arena.h"
#include "core/crypto.h"
#include "core/json.h"
#include "core/jwt.h"
#include "tcheck.h"

/* RFC 8037 A.1: the key every test signs with. */
#define RFC_D	"nWGxne_9WmC6hEr0kuwsxERJxWl7MmkZcDusAxyuf2A"
#define RFC_X	"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"
/* base64url(SHA-256(x)[0..16]), computed outside this code base. */
#define KID	"If4x36FUomFia_hUBG_SJw"

#define NOW	INT64_C(1700000000)
#define ISS	"https://api.example"
#define AUD	"bds-api"

#define C_ISS	"\"iss\":\"" ISS "\""
#define C_SUB	"\"sub\":\"usr_1\""
#define C_AUD	"\"aud\":\"" AUD "\""
#define C_EXP	"\"exp\":1700000600"
#define C_IAT	"\"iat\":1700000000"
#define HDR	"{\"alg\":\"EdDSA\",\"typ\":\"JWT\",\"kid\":\"" KID "\"}"
#define BODY	"{" C_ISS "," C_SUB "," C_AUD "," C_EXP "," C_IAT "}"

/* jwt_sign over BODY's claims with the RFC key; signed independently. */
#define STD_TOKEN \
	"eyJhbGciOiJFZERTQSIsInR5cCI6IkpXVCIsImtpZCI6IklmNHgzNkZVb21GaWFfaFVC" \
	"R19TSncifQ.eyJpc3MiOiJodHRwczovL2FwaS5leGFtcGxlIiwic3ViIjoidXNyXzEi" \
	"LCJhdWQiOiJiZHMtYXBpIiwiZXhwIjoxNzAwMDAwNjAwLCJpYXQiOjE3MDAwMDAwMDB9" \
	".JqFmd_1cxk0iVgCW38ix7zJCWMv5RJEQ2uxJsNc5_Lh_BdP6vSy7Au4eXbEjMi7jZpa" \
	"_fOsdUp9MXMZ-9ZUWDg"

static struct arena	 a;
static struct jwt_key	 key, other;

static void
setup(void)
{
	unsigned char	*seed;
	unsigned char	 oseed[32];
	size_t		 n;

	ck_assert_int_eq(crypto_setup(), 0);
	arena_init(&a);
	ck_assert_int_eq(crypto_b64url_decode(&a, RFC_D, &seed, &n), 0);
	ck_assert_uint_eq(n, 32);
	ck_assert_int_eq(jwt_key_from_seed(&key, seed), 0);
	memset(oseed, 0x42, sizeof(oseed));
	ck_assert_int_eq(jwt_key_from_seed(&other, oseed), 0);
}

static void
teardown(void)
{
	arena_free(&a);
}

static char *
b64(const void *p, size_t n)
{
	return crypto_b64url_encode(&a, p, n);
}

static char *
b64s(const char *s)
{
	return b64(s, strlen(s));
}

/* The claims of BODY as an object, in BODY's order. */
static struct json_object *
std_claims(void)
{
	struct json_object	*c = json_obj(&a);

	json_set_str(c, "iss", ISS);
	json_set_str(c, "sub", "usr_1");
	json_set_str(c, "aud", AUD);
	json_set_int(c, "exp", NOW + 600);
	json_set_int(c, "iat", NOW);
	return c;
}

/* jwt_verify with the test key, ISS, AUD and NOW; checks the out-params agree. */
static int
verify(const char *tok, const char **why)
{
	struct json_object	*claims = (struct json_object *)&claims;
	int			 rc;

	rc = jwt_verify(&a, &key, tok, ISS, AUD, NOW, &claims, why);
	if (rc == 0) {
		ck_assert_ptr_nonnull(claims);
		ck_assert_ptr_null(*why);
	} else {
		ck_assert_int_eq(rc, -1);
		ck_assert_ptr_null(claims);
		ck_assert_ptr_nonnull(*why);
	}
	return rc;
}

/* ---- forging tokens by hand ---- */

enum signer {
	S_ED,		/* Ed25519 with the test key */
	S_OTHER,	/* Ed25519 with another key */
	S_HMAC_PK,	/* HMAC-SHA256 keyed with the raw public key */
	S_HMAC_X,	/* HMAC-SHA256 keyed with base64url(pk), as a JWK "x" */
	S_EMPTY,	/* no signature at all */
	S_ZERO,		/* 64 zero bytes */
	S_SHORT,	/* the Ed25519 signature less its last byte */
	S_LONG,		/* the Ed25519 signature and one byte more */
	S__MAX
};

enum shape {
	SH_JWS,		/* h.p.s */
	SH_2PARTS,	/* h.p */
	SH_4PARTS,	/* h.p.s.s */
	SH_SWAP,	/* h.p.s with s made over BODY, p another token's */
	SH_EMPTY_H,	/* .p.s */
	SH_EMPTY_P,	/* h..s */
	SH_PLUS_H,	/* '+' in the header */
	SH_SLASH_P,	/* '/' in the payload */
	SH_PAD_S,	/* '=' padding after the signature */
	SH_SPACE_P,	/* a space in the payload */
	SH_HIGH_S,	/* a byte 0xc3 0xa9 in the signature */
	SH_OVERSIZE,	/* a 6 KB "pad" claim: the token passes 8 KiB */
	SH__MAX
};

/* The signature part for the ASCII signing input in. */
static const char *
sign_input(const char *in, enum signer s)
{
	unsigned char	 sig[crypto_sign_BYTES + 1];
	unsigned char	 mac[32];

	memset(sig, 0, sizeof(sig));
	switch (s) {
	case S_ED:
	case S_SHORT:
	case S_LONG:
		crypto_sign_detached(sig, NULL, (const unsigned char *)in,
		    strlen(in), key.sk);
		return b64(sig, s == S_ED ? 64 : s == S_SHORT ? 63 : 65);
	case S_OTHER:
		crypto_sign_detached(sig, NULL, (const unsigned char *)in,
		    strlen(in), other.sk);
		return b64(sig, 64);
	case S_HMAC_PK:
		crypto_hmac_sha256(key.pk, sizeof(key.pk), in, strlen(in), mac);
		return b64(mac, sizeof(mac));
	case S_HMAC_X:
		crypto_hmac_sha256(RFC_X, strlen(RFC_X), in, strlen(in), mac);
		return b64(mac, sizeof(mac));
	case S_EMPTY:
		return "";
	case S_ZERO:
		return b64(sig, 64);
	default:
		ck_abort_msg("signer %d", (int)s);
	}
	return NULL;
}

/* Replace the character at off in the part that starts at p (a copy). */
static char *
poke(const char *tok, int part, size_t off, char c)
{
	char	*t = arena_strdup(&a, tok), *p = t;

	while (part-- > 0)
		p = strchr(p, '.') + 1;
	p[off] = c;
	return t;
}

static char *
forge(const char *hdr, const char *body, enum signer s, enum shape sh)
{
	const char	*h, *p, *sig;
	char		*pad;

	if (sh == SH_OVERSIZE) {
		pad = arena_alloc(&a, 6201);
		memset(pad, 'x', 6200);
		body = arena_printf(&a, "{\"pad\":\"%s\",%s", pad, body + 1);
	}
	h = b64s(hdr);
	p = b64s(body);
	sig = sign_input(arena_printf(&a, "%s.%s", h,
	    sh == SH_SWAP ? b64s(BODY) : p), s);
	switch (sh) {
	case SH_JWS:
	case SH_SWAP:
	case SH_OVERSIZE:
		return arena_printf(&a, "%s.%s.%s", h, p, sig);
	case SH_2PARTS:
		return arena_printf(&a, "%s.%s", h, p);
	case SH_4PARTS:
		return arena_printf(&a, "%s.%s.%s.%s", h, p, sig, sig);
	case SH_EMPTY_H:
		return arena_printf(&a, ".%s.%s", p, sig);
	case SH_EMPTY_P:
		return arena_printf(&a, "%s..%s", h, sig);
	case SH_PLUS_H:
		return poke(arena_printf(&a, "%s.%s.%s", h, p, sig), 0, 3, '+');
	case SH_SLASH_P:
		return poke(arena_printf(&a, "%s.%s.%s", h, p, sig), 1, 5, '/');
	case SH_PAD_S:
		return arena_printf(&a, "%s.%s.%s==", h, p, sig);
	case SH_SPACE_P:
		return poke(arena_printf(&a, "%s.%s.%s", h, p, sig), 1, 8, ' ');
	case SH_HIGH_S:
		return arena_printf(&a, "%s.%s.%.40s\xc3\xa9%s", h, p, sig,
		    sig + 42);
	default:
		ck_abort_msg("shape %d", (int)sh);
	}
	return NULL;
}

/* Part 0, 1 or 2 of a token (a copy). */
static char *
token_part(const char *tok, int part)
{
	const char	*p = tok;

	while (part-- > 0)
		p = strchr(p, '.') + 1;
	return arena_strndup(&a, p, strcspn(p, "."));
}

/* ---- known answers ---- */

START_TEST(kid_and_public_key)
{
	ck_assert_str_eq(key.kid, KID);
	ck_assert_str_eq(b64(key.pk, 32), RFC_X);
	/* libsodium's secret key is seed || pk. */
	ck_assert_str_eq(b64(key.sk, 32), RFC_D);
	ck_assert_int_eq(memcmp(key.sk + 32, key.pk, 32), 0);
	ck_assert_str_ne(other.kid, key.kid);
}
END_TEST

/* RFC 8037 A.4: {"alg":"EdDSA"} over "Example of Ed25519 signing". */
START_TEST(rfc8037_vector)
{
	static const char	 rfc_in[] =
	    "eyJhbGciOiJFZERTQSJ9.RXhhbXBsZSBvZiBFZDI1NTE5IHNpZ25pbmc";
	static const char	 rfc_sig[] =
	    "hgyY0il_MGCjP0JzlnLWG1PPOt7-09PGcvMg3AIbQR6dWbhijcNR4ki4iylGjg5B"
	    "hVsPt9g7sVvpAr_MuM0KAg";
	unsigned char		 sig[64];
	const char		*why;

	ck_assert_str_eq(arena_printf(&a, "%s.%s", b64s("{\"alg\":\"EdDSA\"}"),
	    b64s("Example of Ed25519 signing")), rfc_in);
	ck_assert_int_eq(crypto_sign_detached(sig, NULL,
	    (const unsigned char *)rfc_in, strlen(rfc_in), key.sk), 0);
	ck_assert_str_eq(b64(sig, 64), rfc_sig);
	ck_assert_int_eq(crypto_sign_verify_detached(sig,
	    (const unsigned char *)rfc_in, strlen(rfc_in), key.pk), 0);
	/* A valid JWS, but no kid and no claims: not one of our tokens. */
	ck_assert_int_eq(verify(arena_printf(&a, "%s.%s", rfc_in, rfc_sig),
	    &why), -1);
	ck_assert_str_eq(why, "kid mismatch");
}
END_TEST

START_TEST(sign_exact)
{
	char		*tok;
	unsigned char	*raw;
	size_t		 n;

	tok = jwt_sign(&a, &key, std_claims());
	ck_assert_str_eq(tok, STD_TOKEN);
	/* Deterministic: the same claims, the same token. */
	ck_assert_str_eq(jwt_sign(&a, &key, std_claims()), STD_TOKEN);
	ck_assert_int_eq(crypto_b64url_decode(&a,
	    token_part(tok, 0), &raw, &n), 0);
	ck_assert_str_eq((char *)raw, HDR);
	ck_assert_str_eq(forge(HDR, BODY, S_ED, SH_JWS), STD_TOKEN);
}
END_TEST

START_TEST(sign_not_object)
{
	ck_assert_ptr_null(jwt_sign(&a, &key, NULL));
	ck_assert_ptr_null(jwt_sign(&a, &key, json_arr(&a)));
	ck_assert_ptr_null(jwt_sign(&a, &key,
	    json_own(&a, json_object_new_string("x"))));
}
END_TEST

START_TEST(round_trip)
{
	struct json_object	*c, *back;
	const char		*why = "unset";
	char			*tok;

	c = std_claims();
	json_set_str(c, "jti", "jti_1");
	json_set_str(c, "sid", "ses_ü/1");
	json_set_str(c, "token_use", "access");
	tok = jwt_sign(&a, &key, c);
	ck_assert_int_eq(jwt_verify(&a, &key, tok, ISS, AUD, NOW, &back, &why), 0);
	ck_assert_ptr_null(why);
	ck_assert_int_eq(json_object_equal(c, back), 1);
	ck_assert_str_eq(json_get_str(back, "sid"), "ses_ü/1");
	ck_assert_int_eq(json_get_int(back, "exp", 0), NOW + 600);
	/* The last second before exp, and exp itself. */
	ck_assert_int_eq(jwt_verify(&a, &key, tok, ISS, AUD, NOW + 599, &back,
	    &why), 0);
	ck_assert_int_eq(jwt_verify(&a, &key, tok, ISS, AUD, NOW + 600, &back,
	    &why), -1);
	ck_assert_str_eq(why, "token expired");
	ck_assert_ptr_null(back);
}
END_TEST

/* A token made by another key: its kid is not ours, and neither is its signature. */
START_TEST(other_key)
{
	struct json_object	*back;
	const char		*why;
	char			*tok;

	tok = jwt_sign(&a, &other, std_claims());
	ck_assert_int_eq(jwt_verify(&a, &other, tok, ISS, AUD, NOW, &back, &why), 0);
	ck_assert_int_eq(verify(tok, &why), -1);
	ck_assert_str_eq(why, "kid mismatch");
	/* Same claims under other's key but claiming our kid. */
	ck_assert_int_eq(verify(forge(HDR, BODY, S_OTHER, SH_JWS), &why), -1);
	ck_assert_str_eq(why, "bad signature");
}
END_TEST

START_TEST(null_arguments)
{
	struct json_object	*back;
	const char		*why;

	ck_assert_int_eq(jwt_verify(&a, &key, NULL, ISS, AUD, NOW, &back, &why), -1);
	ck_assert_ptr_nonnull(why);
	ck_assert_int_eq(jwt_verify(&a, &key, STD_TOKEN, NULL, AUD, NOW, &back,
	    &why), -1);
	ck_assert_int_eq(jwt_verify(&a, &key, STD_TOKEN, ISS, NULL, NOW, &back,
	    &why), -1);
	ck_assert_ptr_null(back);
	ck_assert_int_eq(jwt_verify(&a, &key, "", ISS, AUD, NOW, &back, &why), -1);
	ck_assert_str_eq(why, "not three parts");
}
END_TEST

/* ---- accepted ---- */

static const struct {
	const char	*name;
	const char	*hdr;
	const char	*body;
	const char	*sub;
} valid[] = {
	{ "standard", HDR, BODY, "usr_1" },
	{ "no typ", "{\"alg\":\"EdDSA\",\"kid\":\"" KID "\"}", BODY, "usr_1" },
	{ "kid first, extra header field",
	  "{\"kid\":\"" KID "\",\"alg\":\"EdDSA\",\"x-extra\":1}", BODY, "usr_1" },
	{ "aud array holding ours", HDR,
	  "{" C_ISS "," C_SUB ",\"aud\":[\"other\",7,\"" AUD "\"]," C_EXP ","
	  C_IAT "}", "usr_1" },
	{ "exp one second ahead", HDR,
	  "{" C_ISS "," C_SUB "," C_AUD ",\"exp\":1700000001," C_IAT "}", "usr_1" },
	{ "iat at the skew limit", HDR,
	  "{" C_ISS "," C_SUB "," C_AUD "," C_EXP ",\"iat\":1700000060}", "usr_1" },
	{ "nbf at the skew limit", HDR,
	  "{" C_ISS "," C_SUB "," C_AUD "," C_EXP "," C_IAT
	  ",\"nbf\":1700000060}", "usr_1" },
	{ "nbf past", HDR,
	  "{" C_ISS "," C_SUB "," C_AUD "," C_EXP "," C_IAT
	  ",\"nbf\":1600000000}", "usr_1" },
	{ "escaped unicode sub", HDR,
	  "{" C_ISS ",\"sub\":\"usr_\\u00e9\"," C_AUD "," C_EXP "," C_IAT "}",
	  "usr_\xc3\xa9" },
	{ "whitespace in JSON", HDR,
	  "{ " C_ISS " , " C_SUB ",\n" C_AUD "," C_EXP "," C_IAT " }", "usr_1" },
};

START_TEST(verify_valid)
{
	struct json_object	*back;
	const char		*why;
	char			*tok;

	tok = forge(valid[_i].hdr, valid[_i].body, S_ED, SH_JWS);
	ck_assert_msg(jwt_verify(&a, &key, tok, ISS, AUD, NOW, &back, &why) == 0,
	    "%s: %s", valid[_i].name, why);
	ck_assert_ptr_null(why);
	ck_assert_str_eq(json_get_str(back, "sub"), valid[_i].sub);
}
END_TEST

/* ---- refused ---- */

#define H_KID	",\"kid\":\"" KID "\"}"

static const struct {
	const char	*name;
	const char	*hdr;
	const char	*body;
	enum signer	 sig;
	enum shape	 shape;
	const char	*why;
} invalid[] = {
	/* alg */
	{ "alg none, no signature", "{\"alg\":\"none\",\"typ\":\"JWT\"" H_KID,
	  BODY, S_EMPTY, SH_JWS, "empty part" },
	{ "alg none, bare header, no signature", "{\"alg\":\"none\"}",
	  BODY, S_EMPTY, SH_JWS, "empty part" },
	{ "alg none with a valid signature", "{\"alg\":\"none\"" H_KID,
	  BODY, S_ED, SH_JWS, "alg not EdDSA" },
	{ "alg None", "{\"alg\":\"None\"" H_KID, BODY, S_ED, SH_JWS,
	  "alg not EdDSA" },
	{ "HS256 keyed with the public key", "{\"alg\":\"HS256\",\"typ\":\"JWT\""
	  H_KID, BODY, S_HMAC_PK, SH_JWS, "alg not EdDSA" },
	{ "HS256 keyed with the JWK x", "{\"alg\":\"HS256\"" H_KID,
	  BODY, S_HMAC_X, SH_JWS, "alg not EdDSA" },
	{ "HS256 header, Ed25519 signature", "{\"alg\":\"HS256\"" H_KID,
	  BODY, S_ED, SH_JWS, "alg not EdDSA" },
	{ "EdDSA header, HMAC signature", HDR, BODY, S_HMAC_PK, SH_JWS,
	  "signature not 64 bytes" },
	{ "alg with a trailing space", "{\"alg\":\"EdDSA \"" H_KID,
	  BODY, S_ED, SH_JWS, "alg not EdDSA" },
	{ "alg lower case", "{\"alg\":\"eddsa\"" H_KID, BODY, S_ED, SH_JWS,
	  "alg not EdDSA" },
	{ "alg Ed25519", "{\"alg\":\"Ed25519\"" H_KID, BODY, S_ED, SH_JWS,
	  "alg not EdDSA" },
	{ "alg with an embedded NUL", "{\"alg\":\"EdDSA\\u0000\"" H_KID,
	  BODY, S_ED, SH_JWS, "alg not EdDSA" },
	{ "alg an array", "{\"alg\":[\"EdDSA\"]" H_KID, BODY, S_ED, SH_JWS,
	  "alg not EdDSA" },
	{ "alg null", "{\"alg\":null" H_KID, BODY, S_ED, SH_JWS,
	  "alg not EdDSA" },
	{ "alg missing", "{\"typ\":\"JWT\"" H_KID, BODY, S_ED, SH_JWS,
	  "alg not EdDSA" },
	/* other header fields */
	{ "crit", "{\"alg\":\"EdDSA\",\"crit\":[\"exp\"],\"exp\":1" H_KID,
	  BODY, S_ED, SH_JWS, "crit not supported" },
	{ "crit null", "{\"alg\":\"EdDSA\",\"crit\":null" H_KID,
	  BODY, S_ED, SH_JWS, "crit not supported" },
	{ "typ JWS", "{\"alg\":\"EdDSA\",\"typ\":\"JWS\"" H_KID,
	  BODY, S_ED, SH_JWS, "typ not JWT" },
	{ "wrong kid", "{\"alg\":\"EdDSA\",\"kid\":\"If4x36FUomFia_hUBG_SJx\"}",
	  BODY, S_ED, SH_JWS, "kid mismatch" },
	{ "kid missing", "{\"alg\":\"EdDSA\",\"typ\":\"JWT\"}",
	  BODY, S_ED, SH_JWS, "kid mismatch" },
	{ "kid a number", "{\"alg\":\"EdDSA\",\"kid\":1}",
	  BODY, S_ED, SH_JWS, "kid mismatch" },
	{ "kid prefix", "{\"alg\":\"EdDSA\",\"kid\":\"If4x36FUomFia_hUBG_SJ\"}",
	  BODY, S_ED, SH_JWS, "kid mismatch" },
	{ "embedded jwk of another key",
	  "{\"alg\":\"EdDSA\",\"jwk\":{\"kty\":\"OKP\",\"crv\":\"Ed25519\","
	  "\"x\":\"x\"}" H_KID, BODY, S_OTHER, SH_JWS, "bad signature" },
	/* signature */
	{ "signed by another key", HDR, BODY, S_OTHER, SH_JWS, "bad signature" },
	{ "zero signature", HDR, BODY, S_ZERO, SH_JWS, "bad signature" },
	{ "signature 63 bytes", HDR, BODY, S_SHORT, SH_JWS,
	  "signature not 64 bytes" },
	{ "signature 65 bytes", HDR, BODY, S_LONG, SH_JWS,
	  "signature not 64 bytes" },
	{ "empty signature", HDR, BODY, S_EMPTY, SH_JWS, "empty part" },
	{ "payload swapped from another token", HDR,
	  "{" C_ISS ",\"sub\":\"usr_2\"," C_AUD "," C_EXP "," C_IAT "}",
	  S_ED, SH_SWAP, "bad signature" },
	/* claims */
	{ "expired", HDR, "{" C_ISS "," C_SUB "," C_AUD ",\"exp\":1700000000,"
	  C_IAT "}", S_ED, SH_JWS, "token expired" },
	{ "expired long ago", HDR, "{" C_ISS "," C_SUB "," C_AUD ",\"exp\":-1,"
	  C_IAT "}", S_ED, SH_JWS, "token expired" },
	{ "exp a string", HDR, "{" C_ISS "," C_SUB "," C_AUD
	  ",\"exp\":\"1700000600\"," C_IAT "}", S_ED, SH_JWS,
	  "exp missing or not an integer" },
	{ "exp a double", HDR, "{" C_ISS "," C_SUB "," C_AUD
	  ",\"exp\":1700000600.0," C_IAT "}", S_ED, SH_JWS,
	  "exp missing or not an integer" },
	{ "exp null", HDR, "{" C_ISS "," C_SUB "," C_AUD ",\"exp\":null," C_IAT
	  "}", S_ED, SH_JWS, "exp missing or not an integer" },
	{ "exp missing", HDR, "{" C_ISS "," C_SUB "," C_AUD "," C_IAT "}",
	  S_ED, SH_JWS, "exp missing or not an integer" },
	{ "iat in the future", HDR, "{" C_ISS "," C_SUB "," C_AUD "," C_EXP
	  ",\"iat\":1700000061}", S_ED, SH_JWS, "iat in the future" },
	{ "iat a string", HDR, "{" C_ISS "," C_SUB "," C_AUD "," C_EXP
	  ",\"iat\":\"1700000000\"}", S_ED, SH_JWS,
	  "iat missing or not an integer" },
	{ "iat missing", HDR, "{" C_ISS "," C_SUB "," C_AUD "," C_EXP "}",
	  S_ED, SH_JWS, "iat missing or not an integer" },
	{ "nbf in the future", HDR, "{" C_ISS "," C_SUB "," C_AUD "," C_EXP ","
	  C_IAT ",\"nbf\":1700000061}", S_ED, SH_JWS, "token not yet valid" },
	{ "nbf a string", HDR, "{" C_ISS "," C_SUB "," C_AUD "," C_EXP ","
	  C_IAT ",\"nbf\":\"0\"}", S_ED, SH_JWS, "nbf not an integer" },
	{ "wrong iss", HDR, "{\"iss\":\"https://evil.example\"," C_SUB ","
	  C_AUD "," C_EXP "," C_IAT "}", S_ED, SH_JWS, "iss mismatch" },
	{ "iss with a trailing slash", HDR, "{\"iss\":\"" ISS "/\"," C_SUB ","
	  C_AUD "," C_EXP "," C_IAT "}", S_ED, SH_JWS, "iss mismatch" },
	{ "iss with an embedded NUL", HDR, "{\"iss\":\"" ISS "\\u0000x\","
	  C_SUB "," C_AUD "," C_EXP "," C_IAT "}", S_ED, SH_JWS,
	  "iss mismatch" },
	{ "iss an array", HDR, "{\"iss\":[\"" ISS "\"]," C_SUB "," C_AUD ","
	  C_EXP "," C_IAT "}", S_ED, SH_JWS, "iss mismatch" },
	{ "iss missing", HDR, "{" C_SUB "," C_AUD "," C_EXP "," C_IAT "}",
	  S_ED, SH_JWS, "iss mismatch" },
	{ "wrong aud", HDR, "{" C_ISS "," C_SUB ",\"aud\":\"bds-admin\","
	  C_EXP "," C_IAT "}", S_ED, SH_JWS, "aud mismatch" },
	{ "aud array without ours", HDR, "{" C_ISS "," C_SUB
	  ",\"aud\":[\"bds-admin\",\"bds-api2\"]," C_EXP "," C_IAT "}",
	  S_ED, SH_JWS, "aud mismatch" },
	{ "aud empty array", HDR, "{" C_ISS "," C_SUB ",\"aud\":[]," C_EXP ","
	  C_IAT "}", S_ED, SH_JWS, "aud mismatch" },
	{ "aud nested array", HDR, "{" C_ISS "," C_SUB ",\"aud\":[[\"" AUD
	  "\"]]," C_EXP "," C_IAT "}", S_ED, SH_JWS, "aud mismatch" },
	{ "aud missing", HDR, "{" C_ISS "," C_SUB "," C_EXP "," C_IAT "}",
	  S_ED, SH_JWS, "aud mismatch" },
	/* shape */
	{ "2 parts", HDR, BODY, S_ED, SH_2PARTS, "not three parts" },
	{ "4 parts", HDR, BODY, S_ED, SH_4PARTS, "not three parts" },
	{ "empty header", HDR, BODY, S_ED, SH_EMPTY_H, "empty part" },
	{ "empty payload", HDR, BODY, S_ED, SH_EMPTY_P, "empty part" },
	{ "'+' in the header", HDR, BODY, S_ED, SH_PLUS_H,
	  "header not base64url" },
	{ "'/' in the payload", HDR, BODY, S_ED, SH_SLASH_P, "bad signature" },
	{ "padding after the signature", HDR, BODY, S_ED, SH_PAD_S,
	  "signature not base64url" },
	{ "space in the payload", HDR, BODY, S_ED, SH_SPACE_P, "bad signature" },
	{ "non-ASCII in the signature", HDR, BODY, S_ED, SH_HIGH_S,
	  "signature not base64url" },
	{ "header not JSON", "{\"alg\":\"EdDSA\"", BODY, S_ED, SH_JWS,
	  "header not a JSON object" },
	{ "header an array", "[\"EdDSA\"]", BODY, S_ED, SH_JWS,
	  "header not a JSON object" },
	{ "header a string", "\"EdDSA\"", BODY, S_ED, SH_JWS,
	  "header not a JSON object" },
	{ "header null", "null", BODY, S_ED, SH_JWS, "header not a JSON object" },
	{ "header with trailing data", HDR "x", BODY, S_ED, SH_JWS,
	  "header not a JSON object" },
	{ "payload an array", HDR, "[" BODY "]", S_ED, SH_JWS,
	  "payload not a JSON object" },
	{ "payload a number", HDR, "1700000600", S_ED, SH_JWS,
	  "payload not a JSON object" },
	{ "payload null", HDR, "null", S_ED, SH_JWS, "payload not a JSON object" },
	{ "payload not JSON", HDR, "Example of Ed25519 signing", S_ED, SH_JWS,
	  "payload not a JSON object" },
	{ "payload invalid UTF-8", HDR, "{\"sub\":\"\xc3\x28\"}", S_ED, SH_JWS,
	  "payload not a JSON object" },
	{ "oversize token", HDR, BODY, S_ED, SH_OVERSIZE, "token too long" },
};

START_TEST(verify_invalid)
{
	const char	*why;
	char		*tok;

	tok = forge(invalid[_i].hdr, invalid[_i].body, invalid[_i].sig,
	    invalid[_i].shape);
	ck_assert_msg(verify(tok, &why) == -1, "%s: accepted", invalid[_i].name);
	ck_assert_msg(strcmp(why, invalid[_i].why) == 0, "%s: \"%s\", want \"%s\"",
	    invalid[_i].name, why, invalid[_i].why);
}
END_TEST

/* The oversize case is refused for its size, not its content: just below passes. */
START_TEST(size_limit)
{
	struct json_object	*c;
	const char		*why;
	char			*tok, *pad;
	size_t			 n, len;
	int			 under = 0, over = 0;

	pad = arena_alloc(&a, 6200);
	for (n = 5900; n < 6150; n++) {
		memset(pad, 'x', n);
		pad[n] = '\0';
		c = std_claims();
		json_set_str(c, "pad", pad);
		tok = jwt_sign(&a, &key, c);
		len = strlen(tok);
		if (len <= 8192) {
			ck_assert_msg(verify(tok, &why) == 0, "%zu: %s", len, why);
			under += len >= 8189;
		} else {
			ck_assert_int_eq(verify(tok, &why), -1);
			ck_assert_str_eq(why, "token too long");
			over += len <= 8195;
		}
	}
	ck_assert_int_gt(under, 0);
	ck_assert_int_gt(over, 0);
}
END_TEST

/* Any single bit flipped in the bytes under any part fails. */
START_TEST(bit_flips)
{
	const char	*why;
	char		*part[3], *tok;
	unsigned char	*raw;
	size_t		 n, i;
	int		 p, b, k;

	for (p = 0; p < 3; p++)
		part[p] = token_part(STD_TOKEN, p);
	for (p = 0; p < 3; p++) {
		ck_assert_int_eq(crypto_b64url_decode(&a, part[p], &raw, &n), 0);
		for (i = 0; i < n; i++)
			for (b = 0; b < 8; b++) {
				raw[i] ^= (unsigned char)(1u << b);
				tok = arena_printf(&a, "%s.%s.%s",
				    p == 0 ? b64(raw, n) : part[0],
				    p == 1 ? b64(raw, n) : part[1],
				    p == 2 ? b64(raw, n) : part[2]);
				raw[i] ^= (unsigned char)(1u << b);
				ck_assert_msg(verify(tok, &why) == -1,
				    "part %d byte %zu bit %d accepted", p, i, b);
			}
		k = verify(arena_printf(&a, "%s.%s.%s", part[0], part[1],
		    part[2]), &why);
		ck_assert_int_eq(k, 0);
	}
}
END_TEST

/* Any single character of the token changed to another one fails. */
START_TEST(char_flips)
{
	static const char	 alpha[] =
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.";
	const char		*why;
	char			*tok;
	size_t			 i, len = strlen(STD_TOKEN);

	for (i = 0; i < len; i++) {
		tok = arena_strdup(&a, STD_TOKEN);
		tok[i] = alpha[(strchr(alpha, tok[i]) - alpha + 1) %
		    (sizeof(alpha) - 1)];
		ck_assert_msg(verify(tok, &why) == -1, "offset %zu accepted", i);
		arena_reset(&a);
	}
	ck_assert_int_eq(verify(STD_TOKEN, &why), 0);
}
END_TEST

/* ---- OpenSSL as a second Ed25519 implementation ---- */

/* 1 when OpenSSL accepts sig over msg under pk, 0 when not, -1 on error. */
static int
ossl_verify(const unsigned char pk[32], const void *msg, size_t len,
    const unsigned char *sig, size_t siglen)
{
	EVP_PKEY	*pkey = NULL;
	EVP_MD_CTX	*ctx = NULL;
	int		 rc = -1;

	if ((pkey = EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, NULL, pk,
	    32)) == NULL || (ctx = EVP_MD_CTX_new()) == NULL ||
	    EVP_DigestVerifyInit(ctx, NULL, NULL, NULL, pkey) != 1)
		goto out;
	rc = EVP_DigestVerify(ctx, sig, siglen, msg, len) == 1;
out:
	EVP_MD_CTX_free(ctx);
	EVP_PKEY_free(pkey);
	return rc;
}

START_TEST(openssl_verifies_ours)
{
	unsigned char	*sig;
	char		*tok, *in;
	size_t		 n;

	tok = jwt_sign(&a, &key, std_claims());
	in = arena_strndup(&a, tok, (size_t)(strrchr(tok, '.') - tok));
	ck_assert_int_eq(crypto_b64url_decode(&a, token_part(tok, 2), &sig, &n), 0);
	ck_assert_uint_eq(n, 64);
	ck_assert_int_eq(ossl_verify(key.pk, in, strlen(in), sig, n), 1);
	ck_assert_int_eq(ossl_verify(other.pk, in, strlen(in), sig, n), 0);
	in[strlen(in) - 1] ^= 0x01;
	ck_assert_int_eq(ossl_verify(key.pk, in, strlen(in), sig, n), 0);
	in[strlen(in) - 1] ^= 0x01;
	sig[0] ^= 0x01;
	ck_assert_int_eq(ossl_verify(key.pk, in, strlen(in), sig, n), 0);
}
END_TEST

/* OpenSSL signs the same input: the same bytes (Ed25519 is deterministic). */
START_TEST(we_verify_openssl)
{
	EVP_PKEY	*pkey;
	EVP_MD_CTX	*ctx;
	unsigned char	 sig[64];
	size_t		 siglen = sizeof(sig);
	const char	*why;
	char		*in, *tok;
	int		 ok;

	in = arena_printf(&a, "%s.%s", b64s(HDR), b64s(BODY));
	pkey = EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, NULL, key.sk, 32);
	ck_assert_ptr_nonnull(pkey);
	ctx = EVP_MD_CTX_new();
	ck_assert_ptr_nonnull(ctx);
	ok = EVP_DigestSignInit(ctx, NULL, NULL, NULL, pkey) == 1 &&
	    EVP_DigestSign(ctx, sig, &siglen, (const unsigned char *)in,
	    strlen(in)) == 1;
	EVP_MD_CTX_free(ctx);
	EVP_PKEY_free(pkey);
	ck_assert_int_eq(ok, 1);
	ck_assert_uint_eq(siglen, 64);
	tok = arena_printf(&a, "%s.%s", in, b64(sig, siglen));
	ck_assert_str_eq(tok, STD_TOKEN);
	ck_assert_int_eq(verify(tok, &why), 0);
}
END_TEST

/* ---- JWKS ---- */

START_TEST(jwks_shape)
{
	struct json_object	*set, *keys, *k;
	unsigned char		*x;
	size_t			 n;

	set = jwt_jwks(&a, &key);
	ck_assert_str_eq(json_dump(&a, set, NULL),
	    "{\"keys\":[{\"kty\":\"OKP\",\"crv\":\"Ed25519\",\"x\":\"" RFC_X
	    "\",\"kid\":\"" KID "\",\"alg\":\"EdDSA\",\"use\":\"sig\"}]}");
	ck_assert_int_eq(json_object_object_length(set), 1);
	ck_assert_int_eq(json_object_object_get_ex(set, "keys", &keys), 1);
	ck_assert_uint_eq(json_object_array_length(keys), 1);
	k = json_object_array_get_idx(keys, 0);
	ck_assert_int_eq(json_object_object_length(k), 6);
	ck_assert_str_eq(json_get_str(k, "kty"), "OKP");
	ck_assert_str_eq(json_get_str(k, "crv"), "Ed25519");
	ck_assert_str_eq(json_get_str(k, "alg"), "EdDSA");
	ck_assert_str_eq(json_get_str(k, "use"), "sig");
	ck_assert_str_eq(json_get_str(k, "kid"), key.kid);
	ck_assert_uint_eq(strlen(json_get_str(k, "x")), 43);
	ck_assert_int_eq(crypto_b64url_decode(&a, json_get_str(k, "x"), &x, &n), 0);
	ck_assert_uint_eq(n, 32);
	ck_assert_int_eq(memcmp(x, key.pk, 32), 0);
	ck_assert_ptr_null(strstr(json_dump(&a, set, NULL), "\"d\""));
	/* Another key, another document. */
	ck_assert_str_ne(json_dump(&a, jwt_jwks(&a, &other), NULL),
	    json_dump(&a, set, NULL));
}
END_TEST

#define N(x) ((int)(sizeof(x) / sizeof((x)[0])))

static Suite *
jwt_suite(void)
{
	Suite	*s = suite_create("jwt");
	TCase	*tc;

	tc = tcase_create("sign");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, kid_and_public_key);
	tcase_add_test(tc, rfc8037_vector);
	tcase_add_test(tc, sign_exact);
	tcase_add_test(tc, sign_not_object);
	tcase_add_test(tc, round_trip);
	tcase_add_test(tc, other_key);
	tcase_add_test(tc, jwks_shape);
	suite_add_tcase(s, tc);

	tc = tcase_create("verify");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, null_arguments);
	tcase_add_loop_test(tc, verify_valid, 0, N(valid));
	tcase_add_loop_test(tc, verify_invalid, 0, N(invalid));
	tcase_add_test(tc, size_limit);
	tcase_add_test(tc, bit_flips);
	tcase_add_test(tc, char_flips);
	suite_add_tcase(s, tc);

	tc = tcase_create("openssl");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, openssl_verifies_ours);
	tcase_add_test(tc, we_verify_openssl);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tcheck_run(jwt_suite());
}
