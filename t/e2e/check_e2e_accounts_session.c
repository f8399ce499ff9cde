/*
 * Developer accounts end to end, part 2: what a signed-in developer does.
 * The JWTs (checked with an independent implementation: the openssl CLI
 * and the published JWKS; forgeries of every usual kind refused), me,
 * sign-out, refresh, forgot/reset-password, change-password, e-mail
 * verification, and at the end a scan of every log and every table for
 * the passwords, codes and tokens the flows used. One stack
 * (mail_transport = smtp); codes come from the SMTP sink.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>

#include <check.h>
#include <json-c/json.h>
#include <sodium.h>

#include "accounts.h"
#include "harness.h"
#include "smtp_sink.h"

#define JWKS_PATH	"/.well-known/jwks.json"
#define SIGNIN_PATH	"/v1/iam/auth/signin"
#define SIGNOUT_PATH	"/v1/iam/auth/signout"
#define REFRESH_PATH	"/v1/iam/auth/refresh"
#define FORGOT_PATH	"/v1/iam/auth/forgot-password"
#define RESET_PATH	"/v1/iam/auth/reset-password"
#define CHANGE_PATH	"/v1/iam/auth/change-password"
#define ME_PATH		"/v1/iam/auth/me"
#define EREQ_PATH	"/v1/iam/auth/email/request-verification"
#define EVERIFY_PATH	"/v1/iam/auth/email/verify"
#define AUDIENCE	"bds-developer-api"

static void
wrong_code(const char *code, int k, char out[7])
{
	unsigned v = ((unsigned)atoi(code) + (unsigned)k * 111111u) % 1000000u;

	snprintf(out, 7, "%06u", v);
}

static int
is_iso(const char *s)
{
	int y, mo, d, h, mi, sec, ms;
	char z;

	return s != NULL && strlen(s) == 24 && sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2d.%3d%c",
	    &y, &mo, &d, &h, &mi, &sec, &ms, &z) == 8 && z == 'Z';
}

/* GET me with the token: the status. */
static long
me_status(const char *token)
{
	struct harness_resp *r = acct_get(ME_PATH, token);
	long st = r->status;

	if (st == 401)
		acct_assert_iam(r, 401, "UNAUTHORIZED");
	harness_resp_free(r);
	return st;
}

static long
refresh_status(const char *refresh)
{
	struct harness_resp *r = acct_postf(REFRESH_PATH, NULL, "{\"refreshToken\":\"%s\"}",
	    refresh);
	long st = r->status;

	if (st == 401)
		harness_assert_iam(r, 401);
	harness_resp_free(r);
	return st;
}

static long
signin_status(const char *email, const char *password)
{
	struct harness_resp *r = acct_postf(SIGNIN_PATH, NULL,
	    "{\"email\":\"%s\",\"password\":\"%s\"}", email, password);
	long st = r->status;

	harness_resp_free(r);
	return st;
}

/* ------------------------------------------------------------------ */
/* JWT pieces                                                          */

struct jwt_parts {
	char		*header_b64, *payload_b64, *sig_b64;	/* malloc'ed */
	struct json_object *header, *payload;			/* parsed */
	unsigned char	*sig;
	size_t		 sig_len;
};

static void
jwt_split(const char *token, struct jwt_parts *p)
{
	const char *d1 = strchr(token, '.'), *d2 = d1 ? strchr(d1 + 1, '.') : NULL;
	unsigned char *raw;
	size_t len;

	memset(p, 0, sizeof(*p));
	ck_assert_msg(d1 != NULL && d2 != NULL && strchr(d2 + 1, '.') == NULL,
	    "not three parts: %s", token);
	p->header_b64 = strndup(token, (size_t)(d1 - token));
	p->payload_b64 = strndup(d1 + 1, (size_t)(d2 - d1 - 1));
	p->sig_b64 = strdup(d2 + 1);
	ck_assert_ptr_nonnull(raw = acct_b64url_decode(p->header_b64, strlen(p->header_b64), &len));
	ck_assert_msg((p->header = json_tokener_parse((char *)raw)) != NULL, "header %s", raw);
	free(raw);
	ck_assert_ptr_nonnull(raw = acct_b64url_decode(p->payload_b64, strlen(p->payload_b64),
	    &len));
	ck_assert_msg((p->payload = json_tokener_parse((char *)raw)) != NULL, "payload %s", raw);
	free(raw);
	ck_assert_ptr_nonnull(p->sig = acct_b64url_decode(p->sig_b64, strlen(p->sig_b64),
	    &p->sig_len));
}

static void
jwt_parts_free(struct jwt_parts *p)
{
	free(p->header_b64);
	free(p->payload_b64);
	free(p->sig_b64);
	json_object_put(p->header);
	json_object_put(p->payload);
	free(p->sig);
}

static const char *
jstr(struct json_object *o, const char *key)
{
	struct json_object *v;

	return json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_string) ?
	    json_object_get_string(v) : NULL;
}

static long long
jint(struct json_object *o, const char *key)
{
	struct json_object *v;

	ck_assert_msg(json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_int),
	    "%s is not an integer: %s", key, json_object_to_json_string(o));
	return (long long)json_object_get_int64(v);
}

/* The published key: x (32 bytes) and kid. */
struct jwks_key {
	unsigned char	 x[32];
	char		 x_b64[64];
	char		 kid[64];
};

static void
jwks_fetch(struct jwks_key *k)
{
	struct harness_resp *r = acct_get(JWKS_PATH, NULL);
	struct json_object *keys;
	unsigned char *x;
	size_t n;

	harness_assert_status(r, 200);
	harness_assert_common(r);
	keys = acct_json(r, "keys");
	ck_assert_msg(keys != NULL && json_object_is_type(keys, json_type_array) &&
	    json_object_array_length(keys) >= 1, "keys: %s", r->body);
	ck_assert_pstr_eq(acct_str(r, "keys.0.kty"), "OKP");
	ck_assert_pstr_eq(acct_str(r, "keys.0.crv"), "Ed25519");
	ck_assert_pstr_eq(acct_str(r, "keys.0.alg"), "EdDSA");
	ck_assert_pstr_eq(acct_str(r, "keys.0.use"), "sig");
	ck_assert_msg(acct_str(r, "keys.0.kid") && strlen(acct_str(r, "keys.0.kid")) > 0 &&
	    strlen(acct_str(r, "keys.0.kid")) < sizeof(k->kid), "kid: %s", r->body);
	ck_assert_msg(acct_json(r, "keys.0.d") == NULL, "the private key is published: %s",
	    r->body);
	snprintf(k->kid, sizeof(k->kid), "%s", acct_str(r, "keys.0.kid"));
	ck_assert_ptr_nonnull(acct_str(r, "keys.0.x"));
	snprintf(k->x_b64, sizeof(k->x_b64), "%s", acct_str(r, "keys.0.x"));
	x = acct_b64url_decode(k->x_b64, strlen(k->x_b64), &n);
	ck_assert_msg(x != NULL && n == 32, "x is not 32 bytes of base64url: %s", k->x_b64);
	memcpy(k->x, x, 32);
	free(x);
	harness_resp_free(r);
}

/* A scratch directory for files handed to openssl. */
static void
scratch(char *dir, size_t size)
{
	snprintf(dir, size, "%s/jwt-%ld", harness_dir(), (long)getpid());
	ck_assert_msg(mkdir(dir, 0700) == 0 || access(dir, W_OK) == 0, "mkdir %s", dir);
}

static void
write_bytes(const char *path, const void *data, size_t len)
{
	FILE *f = fopen(path, "wb");

	ck_assert_msg(f != NULL, "open %s", path);
	ck_assert_uint_eq(fwrite(data, 1, len, f), len);
	ck_assert_int_eq(fclose(f), 0);
}

/* The SubjectPublicKeyInfo PEM of an Ed25519 public key (RFC 8410). */
static void
write_pub_pem(const char *path, const unsigned char x[32])
{
	static const unsigned char prefix[12] = {
		0x30, 0x2a, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x03, 0x21, 0x00
	};
	unsigned char der[44];
	char *b64, pem[256];

	memcpy(der, prefix, sizeof(prefix));
	memcpy(der + sizeof(prefix), x, 32);
	b64 = acct_b64(der, sizeof(der));
	snprintf(pem, sizeof(pem), "-----BEGIN PUBLIC KEY-----\n%s\n-----END PUBLIC KEY-----\n",
	    b64);
	free(b64);
	write_bytes(path, pem, strlen(pem));
}

/* openssl pkeyutl -verify of header.payload against sig with the key:
 * 1 verified, 0 not. */
static int
openssl_verifies(const char *dir, const char *signing_input, const unsigned char *sig,
    size_t sig_len)
{
	char cmd[2048], path[1024];
	char *out;
	int st, ok;

	snprintf(path, sizeof(path), "%s/msg", dir);
	write_bytes(path, signing_input, strlen(signing_input));
	snprintf(path, sizeof(path), "%s/sig", dir);
	write_bytes(path, sig, sig_len);
	snprintf(cmd, sizeof(cmd), "openssl pkeyutl -verify -pubin -inkey %s/pub.pem -rawin"
	    " -in %s/msg -sigfile %s/sig", dir, dir, dir);
	out = acct_run(cmd, &st);
	ok = st == 0 && strstr(out, "Signature Verified Successfully") != NULL;
	if (!ok && strstr(out, "Signature Verification Failure") == NULL)
		ck_abort_msg("openssl did not run as expected (%d): %s", st, out);
	free(out);
	return ok;
}

static char *
join3(const char *a, const char *b, const char *c)
{
	char *s;

	ck_assert_int_ge(asprintf(&s, "%s.%s%s%s", a, b, c ? "." : "", c ? c : ""), 0);
	return s;
}

/* header.payload signed with an Ed25519 secret key (libsodium). */
static char *
sign_ed25519(const char *header_json, const char *payload_json, const unsigned char sk[64])
{
	char *h = acct_b64url(header_json, strlen(header_json));
	char *p = acct_b64url(payload_json, strlen(payload_json));
	char *input = join3(h, p, NULL), *s, *tok;
	unsigned char sig[64];

	crypto_sign_detached(sig, NULL, (const unsigned char *)input, strlen(input), sk);
	s = acct_b64url(sig, sizeof(sig));
	tok = join3(h, p, s);
	free(h);
	free(p);
	free(input);
	free(s);
	return tok;
}

/* header.payload with HMAC-SHA256 under key (the HS256 confusion). */
static char *
sign_hs256(const char *header_json, const char *payload_b64, const void *key, size_t keylen)
{
	char *h = acct_b64url(header_json, strlen(header_json));
	char *input = join3(h, payload_b64, NULL), *s, *tok;
	crypto_auth_hmacsha256_state st;
	unsigned char mac[32];

	crypto_auth_hmacsha256_init(&st, key, keylen);
	crypto_auth_hmacsha256_update(&st, (const unsigned char *)input, strlen(input));
	crypto_auth_hmacsha256_final(&st, mac);
	s = acct_b64url(mac, sizeof(mac));
	tok = join3(h, payload_b64, s);
	free(h);
	free(input);
	free(s);
	return tok;
}

/* The server's own signing key, from the stack's config (jwt_seed). */
static void
server_key(unsigned char pk[32], unsigned char sk[64])
{
	char *conf = acct_slurp(harness_config_path(), NULL), *p;
	unsigned char seed[32];
	size_t n = 0;

	ck_assert_ptr_nonnull(conf);
	ck_assert_ptr_nonnull(p = strstr(conf, "\njwt_seed = "));
	p += strlen("\njwt_seed = ");
	ck_assert_int_eq(sodium_hex2bin(seed, sizeof(seed), p, 64, NULL, &n, NULL), 0);
	ck_assert_uint_eq(n, 32);
	ck_assert_int_eq(crypto_sign_seed_keypair(pk, sk, seed), 0);
	free(conf);
}

/* ------------------------------------------------------------------ */
/* JWKS and the JWTs                                                   */

START_TEST(jwks_published)
{
	struct harness_resp *r;
	struct jwks_key k;
	unsigned char pk[32], sk[64], h[32];
	char *kid;

	jwks_fetch(&k);
	/* the published key is the one the config's seed derives, and the kid
	 * is base64url of the first 16 bytes of its SHA-256 (DECISIONS) */
	server_key(pk, sk);
	ck_assert_msg(memcmp(pk, k.x, 32) == 0, "jwks x is not the configured key");
	crypto_hash_sha256(h, k.x, 32);
	kid = acct_b64url(h, 16);
	ck_assert_str_eq(k.kid, kid);
	free(kid);
	/* and it is there on the api host without credentials, GET only */
	r = acct_call("POST", JWKS_PATH, NULL, "{}", NULL);
	ck_assert_int_eq(r->status, 405);
	harness_resp_free(r);
}
END_TEST

/* An access token verifies with openssl and the JWKS key alone. */
START_TEST(jwt_verifies_with_openssl)
{
	struct acct_mail mb;
	struct acct_user u;
	struct jwks_key k;
	struct jwt_parts a, id;
	char dir[512], path[1024], *input;
	long long now = (long long)time(NULL);

	acct_mail_start(&mb);
	acct_new_user(&u, "jwt-openssl", &mb);
	jwks_fetch(&k);
	scratch(dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/pub.pem", dir);
	write_pub_pem(path, k.x);

	jwt_split(u.access, &a);
	ck_assert_pstr_eq(jstr(a.header, "alg"), "EdDSA");
	ck_assert_pstr_eq(jstr(a.header, "kid"), k.kid);
	ck_assert_msg(jstr(a.header, "typ") == NULL || strcmp(jstr(a.header, "typ"), "JWT") == 0,
	    "typ %s", jstr(a.header, "typ"));
	ck_assert_uint_eq(a.sig_len, 64);
	ck_assert_msg(jstr(a.payload, "iss") != NULL && *jstr(a.payload, "iss") != '\0',
	    "iss: %s", json_object_to_json_string(a.payload));
	ck_assert_pstr_eq(jstr(a.payload, "sub"), u.user_id);
	ck_assert_pstr_eq(jstr(a.payload, "aud"), AUDIENCE);
	ck_assert_pstr_eq(jstr(a.payload, "token_use"), "access");
	ck_assert_msg(jstr(a.payload, "sid") != NULL && jstr(a.payload, "jti") != NULL,
	    "sid/jti: %s", json_object_to_json_string(a.payload));
	ck_assert_int_eq(jint(a.payload, "exp") - jint(a.payload, "iat"), 3600);
	ck_assert_msg(llabs(jint(a.payload, "iat") - now) <= 300, "iat %lld, now %lld",
	    jint(a.payload, "iat"), now);

	input = join3(a.header_b64, a.payload_b64, NULL);
	ck_assert_msg(openssl_verifies(dir, input, a.sig, a.sig_len),
	    "openssl does not verify the access token with the JWKS key");
	free(input);
	/* the check means something: a changed payload does not verify */
	input = join3(a.header_b64, "eyJzdWIiOiJ4In0", NULL);
	ck_assert_msg(!openssl_verifies(dir, input, a.sig, a.sig_len),
	    "openssl verified a changed payload");
	free(input);

	/* the ID token too: same key, same subject, token_use id */
	jwt_split(u.id_token, &id);
	ck_assert_pstr_eq(jstr(id.header, "alg"), "EdDSA");
	ck_assert_pstr_eq(jstr(id.header, "kid"), k.kid);
	ck_assert_pstr_eq(jstr(id.payload, "sub"), u.user_id);
	ck_assert_pstr_eq(jstr(id.payload, "token_use"), "id");
	ck_assert_pstr_eq(jstr(id.payload, "email"), u.email);
	ck_assert_pstr_eq(jstr(id.payload, "sid"), jstr(a.payload, "sid"));
	input = join3(id.header_b64, id.payload_b64, NULL);
	ck_assert_msg(openssl_verifies(dir, input, id.sig, id.sig_len),
	    "openssl does not verify the ID token");
	free(input);
	jwt_parts_free(&a);
	jwt_parts_free(&id);
	acct_mail_stop(&mb);
}
END_TEST

/* Tokens not issued by the service, or altered, or of the wrong kind:
 * 401 in the iam envelope. The genuine one works (so each refusal is
 * about the forgery). */
START_TEST(jwt_forgeries_refused)
{
	struct acct_mail mb;
	struct acct_user u, other;
	struct jwks_key k;
	struct jwt_parts a, o;
	char dir[512], path[1024], cmd[2048], hdr[512], *forged[24], *out, *p;
	const char *names[24];
	size_t n = 0, i;
	int st;

	acct_mail_start(&mb);
	acct_new_user(&u, "jwt-forge", &mb);
	acct_new_user(&other, "jwt-forge-other", &mb);
	jwks_fetch(&k);
	jwt_split(u.access, &a);
	jwt_split(other.access, &o);
	ck_assert_int_eq(me_status(u.access), 200);

#define ADD(name, tok) do { names[n] = (name); forged[n++] = (tok); } while (0)
	/* alg none, with and without kid, with and without the real signature */
	p = acct_b64url("{\"alg\":\"none\",\"typ\":\"JWT\"}", 27);
	ADD("alg none", join3(p, a.payload_b64, ""));
	ADD("alg none, real signature", join3(p, a.payload_b64, a.sig_b64));
	ADD("alg none, no signature part", join3(p, a.payload_b64, NULL));
	free(p);
	snprintf(hdr, sizeof(hdr), "{\"alg\":\"none\",\"typ\":\"JWT\",\"kid\":\"%s\"}", k.kid);
	p = acct_b64url(hdr, strlen(hdr));
	ADD("alg none with kid", join3(p, a.payload_b64, ""));
	free(p);
	/* HS256 keyed with the public key: its bytes, its base64url, its PEM */
	snprintf(hdr, sizeof(hdr), "{\"alg\":\"HS256\",\"typ\":\"JWT\",\"kid\":\"%s\"}", k.kid);
	ADD("HS256 over x bytes", sign_hs256(hdr, a.payload_b64, k.x, 32));
	ADD("HS256 over x text", sign_hs256(hdr, a.payload_b64, k.x_b64, strlen(k.x_b64)));
	scratch(dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/pub.pem", dir);
	write_pub_pem(path, k.x);
	{
		char *pem = acct_slurp(path, NULL);

		ADD("HS256 over the PEM", sign_hs256(hdr, a.payload_b64, pem, strlen(pem)));
		free(pem);
	}
	ADD("HS256 without kid", sign_hs256("{\"alg\":\"HS256\",\"typ\":\"JWT\"}",
	    a.payload_b64, k.x, 32));
	/* EdDSA by another key (openssl genpkey), with the service's kid */
	snprintf(cmd, sizeof(cmd), "openssl genpkey -algorithm ed25519 -out %s/other.pem", dir);
	out = acct_run(cmd, &st);
	ck_assert_msg(st == 0, "genpkey: %s", out);
	free(out);
	{
		char *input = join3(a.header_b64, a.payload_b64, NULL), *sig;
		size_t len;

		snprintf(path, sizeof(path), "%s/msg", dir);
		write_bytes(path, input, strlen(input));
		snprintf(cmd, sizeof(cmd), "openssl pkeyutl -sign -rawin -inkey %s/other.pem"
		    " -in %s/msg -out %s/sig", dir, dir, dir);
		out = acct_run(cmd, &st);
		ck_assert_msg(st == 0, "pkeyutl -sign: %s", out);
		free(out);
		snprintf(path, sizeof(path), "%s/sig", dir);
		ck_assert_ptr_nonnull(sig = acct_slurp(path, &len));
		ck_assert_uint_eq(len, 64);
		p = acct_b64url(sig, len);
		ADD("EdDSA by another key", join3(a.header_b64, a.payload_b64, p));
		free(p);
		free(sig);
		free(input);
	}
	/* tampered: exp moved, sub swapped, signature of another token */
	{
		struct json_object *c = json_tokener_parse(json_object_to_json_string(a.payload));
		char *pb;

		json_object_object_add(c, "exp", json_object_new_int64(jint(a.payload, "exp") + 86400));
		pb = acct_b64url(json_object_to_json_string(c), strlen(json_object_to_json_string(c)));
		ADD("exp changed", join3(a.header_b64, pb, a.sig_b64));
		free(pb);
		json_object_object_add(c, "exp", json_object_new_int64(jint(a.payload, "exp")));
		json_object_object_add(c, "sub", json_object_new_string(other.user_id));
		pb = acct_b64url(json_object_to_json_string(c), strlen(json_object_to_json_string(c)));
		ADD("sub changed", join3(a.header_b64, pb, a.sig_b64));
		free(pb);
		json_object_put(c);
	}
	ADD("another token's signature", join3(a.header_b64, a.payload_b64, o.sig_b64));
	ADD("signature truncated", strndup(u.access, strlen(u.access) - 4));
	ADD("ID token as access token", strdup(u.id_token));
	ADD("garbage", strdup("garbage"));
	ADD("three garbage parts", strdup("abc.def.ghi"));
	ADD("four parts", join3(u.access, "x", NULL));
	ADD("empty parts", strdup(".."));
#undef ADD

	for (i = 0; i < n; i++) {
		struct harness_resp *r = acct_get(ME_PATH, forged[i]);
		const char *m = acct_check_iam(r, 401, "UNAUTHORIZED");

		ck_assert_msg(m == NULL, "%s: %s", names[i], m);
		harness_resp_free(r);
		free(forged[i]);
	}
	/* the genuine token still works: nothing above revoked it */
	ck_assert_int_eq(me_status(u.access), 200);
	jwt_parts_free(&a);
	jwt_parts_free(&o);
	acct_mail_stop(&mb);
}
END_TEST

/*
 * Tokens signed with the service's own key (taken from the stack's config)
 * but wrong in their claims. The first, a faithful copy of a real token's
 * claims, must work: it shows the crafting is right, so each refusal after
 * it is about the claim changed.
 */
START_TEST(jwt_claims_enforced)
{
	struct acct_mail mb;
	struct acct_user u, other;
	struct jwks_key k;
	struct jwt_parts a, o;
	unsigned char pk[32], sk[64];
	char hdr[512];
	long long now = (long long)time(NULL);
	static const struct {
		const char	*name;
		const char	*key;		/* claim to change; NULL: none */
		int		 kind;		/* 0 string, 1 integer offset from now, 2 remove */
		const char	*s;
		long long	 off;
		long		 status;
	} cases[] = {
		{ "faithful copy", NULL, 0, NULL, 0, 200 },
		{ "expired an hour ago", "exp", 1, NULL, -3600, 401 },
		{ "expired a second ago", "exp", 1, NULL, -1, 401 },
		{ "no exp", "exp", 2, NULL, 0, 401 },
		{ "issued in the future", "iat", 1, NULL, 1800, 401 },
		{ "another issuer", "iss", 0, "https://evil.example", 0, 401 },
		{ "another audience", "aud", 0, "someone-else", 0, 401 },
		{ "no audience", "aud", 2, NULL, 0, 401 },
		{ "token_use id", "token_use", 0, "id", 0, 401 },
		{ "no token_use", "token_use", 2, NULL, 0, 401 },
		{ "unknown session", "sid", 0, "ses_00000000-0000-7000-8000-000000000000", 0, 401 },
		{ "no session", "sid", 2, NULL, 0, 401 },
		{ "another user's sub with this session", "sub", 0, NULL, 0, 401 },
	};

	acct_mail_start(&mb);
	acct_new_user(&u, "jwt-claims", &mb);
	acct_new_user(&other, "jwt-claims-other", &mb);
	jwks_fetch(&k);
	server_key(pk, sk);
	ck_assert_msg(memcmp(pk, k.x, 32) == 0, "the config's seed is not the published key");
	jwt_split(u.access, &a);
	jwt_split(other.access, &o);
	snprintf(hdr, sizeof(hdr), "{\"alg\":\"EdDSA\",\"typ\":\"JWT\",\"kid\":\"%s\"}", k.kid);

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct json_object *c = json_tokener_parse(json_object_to_json_string(a.payload));
		struct harness_resp *r;
		char *tok;

		json_object_object_add(c, "jti", json_object_new_string("jti_crafted"));
		if (cases[i].key != NULL && cases[i].kind == 0)
			json_object_object_add(c, cases[i].key, json_object_new_string(
			    cases[i].s ? cases[i].s : other.user_id));
		else if (cases[i].key != NULL && cases[i].kind == 1)
			json_object_object_add(c, cases[i].key,
			    json_object_new_int64(now + cases[i].off));
		else if (cases[i].key != NULL)
			json_object_object_del(c, cases[i].key);
		if (cases[i].key != NULL && strcmp(cases[i].key, "iat") == 0)
			json_object_object_add(c, "exp", json_object_new_int64(now + 1800 + 3600));
		tok = sign_ed25519(hdr, json_object_to_json_string(c), sk);
		r = acct_get(ME_PATH, tok);
		ck_assert_msg(r->status == cases[i].status, "%s: status %ld, want %ld: %s",
		    cases[i].name, r->status, cases[i].status, r->body);
		if (cases[i].status == 401) {
			const char *m = acct_check_iam(r, 401, "UNAUTHORIZED");

			ck_assert_msg(m == NULL, "%s: %s", cases[i].name, m);
		} else {
			ck_assert_pstr_eq(acct_str(r, "user.id"), u.user_id);
		}
		harness_resp_free(r);
		free(tok);
		json_object_put(c);
	}
	/* a header naming another alg over a valid EdDSA signature */
	{
		char *tok = sign_ed25519("{\"alg\":\"ES256\",\"typ\":\"JWT\"}",
		    json_object_to_json_string(a.payload), sk);
		struct harness_resp *r = acct_get(ME_PATH, tok);

		acct_assert_iam(r, 401, "UNAUTHORIZED");
		harness_resp_free(r);
		free(tok);
	}
	jwt_parts_free(&a);
	jwt_parts_free(&o);
	acct_mail_stop(&mb);
}
END_TEST

/* ------------------------------------------------------------------ */
/* me                                                                  */

START_TEST(me_ok)
{
	struct acct_mail mb;
	struct acct_user u;
	struct harness_resp *r;
	struct json_object *ev, *cn;

	acct_mail_start(&mb);
	acct_new_user(&u, "me-ok", &mb);
	r = acct_get(ME_PATH, u.access);
	acct_assert_success(r);
	ck_assert_pstr_eq(acct_str(r, "user.id"), u.user_id);
	ck_assert_pstr_eq(acct_str(r, "user.email"), u.email);
	ck_assert_pstr_eq(acct_str(r, "user.name"), "Ada Lovelace");
	ev = acct_json(r, "user.emailVerified");
	ck_assert_msg(ev != NULL && json_object_is_type(ev, json_type_boolean) &&
	    !json_object_get_boolean(ev), "emailVerified: %s", r->body);
	/* present: a string, or null while no company is known */
	ck_assert_msg(json_object_object_get_ex(acct_json(r, "user"), "companyName", &cn) &&
	    (cn == NULL || json_object_is_type(cn, json_type_string)), "companyName: %s", r->body);
	ck_assert_msg(is_iso(acct_str(r, "user.createdAt")), "createdAt: %s", r->body);
	ck_assert_msg(is_iso(acct_str(r, "user.updatedAt")), "updatedAt: %s", r->body);
	ck_assert_msg(acct_json(r, "user.password_hash") == NULL &&
	    strstr(r->body, "argon2") == NULL, "me shows the hash: %s", r->body);
	harness_resp_free(r);
	acct_mail_stop(&mb);
}
END_TEST

/* No or unusable credentials: 401 in the iam envelope. */
static const char *const me_unauth_headers[][2] = {
	{ NULL, NULL },
	{ "Authorization: Basic Zm9vOmJhcg==", NULL },
	{ "Authorization: Bearer", NULL },
	{ "Authorization: Bearer ", NULL },
	{ "Authorization: Token abc.def.ghi", NULL },
	{ "Cookie: bds_session=garbage", NULL },
	{ "Cookie: bds_session=", NULL },
};

START_TEST(me_unauthenticated)
{
	struct harness_resp *r = acct_call("GET", ME_PATH, NULL, NULL, me_unauth_headers[_i]);

	acct_assert_iam(r, 401, "UNAUTHORIZED");
	ck_assert_ptr_null(acct_json(r, "user"));
	harness_resp_free(r);
}
END_TEST

/* The auth cookie alone is a credential; a header, when sent, wins. */
START_TEST(me_cookie_only)
{
	struct acct_mail mb;
	struct acct_user u;
	struct harness_resp *r;
	char c1[2200], c2[2300], c3[2200];
	const char *h1[] = { c1, NULL }, *h2[] = { c2, NULL }, *h3[] = { c3, NULL };
	const char *h4[] = { "Authorization: Bearer garbage", c1, NULL };

	acct_mail_start(&mb);
	acct_new_user(&u, "me-cookie", &mb);
	snprintf(c1, sizeof(c1), "Cookie: bds_session=%s", u.access);
	snprintf(c2, sizeof(c2), "Cookie: theme=dark; bds_session=%s; lang=en", u.access);
	snprintf(c3, sizeof(c3), "Cookie: xbds_session=%s", u.access);
	r = acct_call("GET", ME_PATH, NULL, NULL, h1);
	acct_assert_success(r);
	ck_assert_pstr_eq(acct_str(r, "user.id"), u.user_id);
	harness_resp_free(r);
	r = acct_call("GET", ME_PATH, NULL, NULL, h2);
	acct_assert_success(r);
	harness_resp_free(r);
	r = acct_call("GET", ME_PATH, NULL, NULL, h3);
	acct_assert_iam(r, 401, "UNAUTHORIZED");
	harness_resp_free(r);
	r = acct_call("GET", ME_PATH, NULL, NULL, h4);
	acct_assert_iam(r, 401, "UNAUTHORIZED");
	harness_resp_free(r);
	acct_mail_stop(&mb);
}
END_TEST

/* ------------------------------------------------------------------ */
/* signout and refresh                                                 */

START_TEST(signout_revokes)
{
	struct acct_mail mb;
	struct acct_user a, b;
	struct harness_resp *r;
	const char *cookie;

	acct_mail_start(&mb);
	acct_new_user(&a, "signout", &mb);
	b = a;
	acct_signin(&b);		/* a second session */
	r = acct_post(SIGNOUT_PATH, a.access, "{}");
	acct_assert_outcome(r, 1, NULL);
	cookie = harness_header(r, "Set-Cookie");
	ck_assert_msg(cookie != NULL && strncmp(cookie, "bds_session=;", 13) == 0 &&
	    strstr(cookie, "Max-Age=0") != NULL, "Set-Cookie: %s", cookie ? cookie : "(none)");
	harness_resp_free(r);

	/* that session is over: its access and refresh tokens */
	ck_assert_int_eq(me_status(a.access), 401);
	r = acct_postf(REFRESH_PATH, NULL, "{\"refreshToken\":\"%s\"}", a.refresh);
	acct_assert_iam(r, 401, "INVALID_REFRESH_TOKEN");
	harness_resp_free(r);
	r = acct_post(SIGNOUT_PATH, a.access, "{}");
	acct_assert_iam(r, 401, "UNAUTHORIZED");
	harness_resp_free(r);

	/* the other one lives; signing it out with its refresh token ends both */
	ck_assert_int_eq(me_status(b.access), 200);
	ck_assert_int_eq(refresh_status(b.refresh), 200);
	r = acct_postf(SIGNOUT_PATH, b.access, "{\"refreshToken\":\"%s\"}", b.refresh);
	acct_assert_outcome(r, 1, NULL);
	harness_resp_free(r);
	ck_assert_int_eq(me_status(b.access), 401);
	ck_assert_int_eq(refresh_status(b.refresh), 401);
	ck_assert_int_eq(acct_sql_int("SELECT count(*) FROM sessions WHERE user_id = $1"
	    " AND revoked_at IS NULL", a.user_id, NULL, NULL), 0);

	/* without a token */
	r = acct_post(SIGNOUT_PATH, NULL, "{}");
	acct_assert_iam(r, 401, "UNAUTHORIZED");
	harness_resp_free(r);
	/* a body field it does not know */
	acct_signin(&a);
	r = acct_post(SIGNOUT_PATH, a.access, "{\"everywhere\":true}");
	acct_assert_iam(r, 400, "VALIDATION_ERROR");
	acct_assert_error(r, "everywhere", "unknown_field");
	harness_resp_free(r);
	acct_mail_stop(&mb);
}
END_TEST

START_TEST(refresh_ok)
{
	struct acct_mail mb;
	struct acct_user u;
	struct harness_resp *r;
	struct jwt_parts old, fresh;
	struct json_object *ei;
	char tok[2048];

	acct_mail_start(&mb);
	acct_new_user(&u, "refresh-ok", &mb);
	r = acct_postf(REFRESH_PATH, NULL, "{\"refreshToken\":\"%s\"}", u.refresh);
	harness_assert_status(r, 200);
	harness_assert_common(r);
	ck_assert_msg(acct_str(r, "access_token") != NULL, "access_token: %s", r->body);
	ei = acct_json(r, "expires_in");
	ck_assert_msg(ei != NULL && json_object_is_type(ei, json_type_int) &&
	    json_object_get_int(ei) == 3600, "expires_in: %s", r->body);
	snprintf(tok, sizeof(tok), "%s", acct_str(r, "access_token"));
	{
		const char *cookie = harness_header(r, "Set-Cookie");
		char want[2100];

		snprintf(want, sizeof(want), "bds_session=%s;", tok);
		ck_assert_msg(cookie != NULL && strncmp(cookie, want, strlen(want)) == 0,
		    "refresh Set-Cookie: %s", cookie ? cookie : "(none)");
	}
	harness_resp_free(r);

	/* the new token works, for the same user and session */
	r = acct_get(ME_PATH, tok);
	acct_assert_success(r);
	ck_assert_pstr_eq(acct_str(r, "user.id"), u.user_id);
	harness_resp_free(r);
	jwt_split(u.access, &old);
	jwt_split(tok, &fresh);
	ck_assert_pstr_eq(jstr(fresh.payload, "sid"), jstr(old.payload, "sid"));
	ck_assert_pstr_eq(jstr(fresh.payload, "token_use"), "access");
	ck_assert_int_eq(jint(fresh.payload, "exp") - jint(fresh.payload, "iat"), 3600);
	jwt_parts_free(&old);
	jwt_parts_free(&fresh);

	/* the snake_case spelling; refresh tokens are not rotated by refresh */
	r = acct_postf(REFRESH_PATH, NULL, "{\"refresh_token\":\"%s\"}", u.refresh);
	harness_assert_status(r, 200);
	harness_resp_free(r);
	acct_mail_stop(&mb);
}
END_TEST

static const struct {
	const char	*body;
	long		 status;
	const char	*error_code;
	const char	*field;
} refresh_bad[] = {
	{ "{\"refreshToken\":\"garbage\"}", 401, "INVALID_REFRESH_TOKEN", NULL },
	{ "{\"refreshToken\":\"rt_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\"}", 401,
	  "INVALID_REFRESH_TOKEN", NULL },
	{ "{}", 400, "VALIDATION_ERROR", "refreshToken" },
	{ NULL, 400, "VALIDATION_ERROR", "refreshToken" },
	{ "{\"refreshToken\":\"\"}", 400, "VALIDATION_ERROR", "refreshToken" },
	{ "{\"refreshToken\":12}", 400, "VALIDATION_ERROR", "refreshToken" },
	{ "{\"refreshToken\":null}", 400, "VALIDATION_ERROR", "refreshToken" },
	{ "{\"refreshToken\":\"x\",\"scope\":\"all\"}", 400, "VALIDATION_ERROR", "scope" },
	{ "{\"refreshToken\":\"x\"", 400, "INVALID_JSON", NULL },
};

START_TEST(refresh_refused)
{
	struct harness_resp *r = acct_post(REFRESH_PATH, NULL, refresh_bad[_i].body);
	const char *m = acct_check_iam(r, refresh_bad[_i].status, refresh_bad[_i].error_code);

	ck_assert_msg(m == NULL, "%s: %s", refresh_bad[_i].body ? refresh_bad[_i].body : "(none)", m);
	if (refresh_bad[_i].field != NULL) {
		struct json_object *f = acct_json(r, "errors.0.field");

		ck_assert_msg(f != NULL && strcmp(json_object_get_string(f),
		    refresh_bad[_i].field) == 0, "errors: %s", r->body);
	}
	harness_resp_free(r);
}
END_TEST

/* A refresh token past its own expiry is refused. */
START_TEST(refresh_expired)
{
	struct acct_mail mb;
	struct acct_user u;
	struct harness_resp *r;

	acct_mail_start(&mb);
	acct_new_user(&u, "refresh-expired", &mb);
	acct_sql_exec("UPDATE sessions SET refresh_expires_at = now() - interval '1 minute'"
	    " WHERE user_id = $1", u.user_id, NULL, NULL);
	r = acct_postf(REFRESH_PATH, NULL, "{\"refreshToken\":\"%s\"}", u.refresh);
	acct_assert_iam(r, 401, "INVALID_REFRESH_TOKEN");
	harness_resp_free(r);
	acct_mail_stop(&mb);
}
END_TEST

/* ------------------------------------------------------------------ */
/* forgot-password and reset-password                                  */

START_TEST(forgot_password_same_answer)
{
	struct acct_mail mb;
	struct acct_user u;
	struct harness_resp *known, *unknown, *again;
	char unknown_addr[128], code[7];
	const struct smtp_msg *m;

	acct_mail_start(&mb);
	acct_new_user(&u, "forgot", &mb);
	snprintf(unknown_addr, sizeof(unknown_addr), "no-such-%ld@example.test", (long)getpid());
	known = acct_postf(FORGOT_PATH, NULL, "{\"email\":\"%s\"}", u.email);
	unknown = acct_postf(FORGOT_PATH, NULL, "{\"email\":\"%s\"}", unknown_addr);
	acct_assert_outcome(known, 1, NULL);
	acct_assert_outcome(unknown, 1, NULL);
	ck_assert_str_eq(known->body, unknown->body);

	/* the known address gets a code; the unknown one nothing */
	m = acct_mail_code(&mb, u.email, code);
	ck_assert_ptr_nonnull(m);
	ck_assert_uint_eq(acct_mail_count(&mb, unknown_addr), 0);
	ck_assert_int_eq(acct_sql_int("SELECT count(*) FROM email_codes WHERE user_id = $1"
	    " AND purpose = 'reset_password'", u.user_id, NULL, NULL), 1);

	/* asked again at once: the same answer, no second e-mail (cooldown) */
	again = acct_postf(FORGOT_PATH, NULL, "{\"email\":\"%s\"}", u.email);
	acct_assert_outcome(again, 1, NULL);
	ck_assert_str_eq(again->body, known->body);
	ck_assert_uint_eq(acct_mail_count(&mb, u.email), 0);
	harness_resp_free(known);
	harness_resp_free(unknown);
	harness_resp_free(again);

	/* bad input */
	known = acct_post(FORGOT_PATH, NULL, "{}");
	acct_assert_iam(known, 400, "VALIDATION_ERROR");
	acct_assert_error(known, "email", "required");
	harness_resp_free(known);
	known = acct_post(FORGOT_PATH, NULL, "{\"email\":[\"a@example.test\"]}");
	acct_assert_iam(known, 400, "VALIDATION_ERROR");
	acct_assert_error(known, "email", "invalid_type");
	harness_resp_free(known);
	acct_mail_stop(&mb);
}
END_TEST

/* 16 forgot-password requests at once: one reset e-mail, as for one
 * request inside the cooldown (no mail bombing through a race). */
START_TEST(forgot_password_burst_one_mail)
{
	static const char *const ct[] = { "Content-Type: application/json", NULL };
	struct acct_mail mb;
	struct acct_user u;
	struct harness_resp *out[16];
	char body[256];
	size_t ok = 0;

	acct_mail_start(&mb);
	acct_new_user(&u, "forgot-burst", &mb);
	snprintf(body, sizeof(body), "{\"email\":\"%s\"}", u.email);
	harness_request_burst(16, "POST", "api", FORGOT_PATH, ct, body, strlen(body), out);
	for (size_t i = 0; i < 16; i++) {
		ok += out[i]->status == 200;
		harness_resp_free(out[i]);
	}
	ck_assert_uint_eq(ok, 16);
	ck_assert_uint_eq(acct_mail_count(&mb, u.email), 1);
	acct_mail_stop(&mb);
}
END_TEST

START_TEST(reset_password_flow)
{
	struct acct_mail mb;
	struct acct_user a, b;
	struct harness_resp *r;
	char code[7], bad[7], newpw[128];

	acct_mail_start(&mb);
	acct_new_user(&a, "reset", &mb);
	b = a;
	acct_signin(&b);
	r = acct_postf(FORGOT_PATH, NULL, "{\"email\":\"%s\"}", a.email);
	acct_assert_outcome(r, 1, NULL);
	harness_resp_free(r);
	acct_mail_code(&mb, a.email, code);
	snprintf(newpw, sizeof(newpw), "%sNew", a.password);

	wrong_code(code, 1, bad);
	r = acct_postf(RESET_PATH, NULL, "{\"email\":\"%s\",\"code\":\"%s\",\"newPassword\":\"%s\"}",
	    a.email, bad, newpw);
	acct_assert_iam(r, 400, "INVALID_CODE");
	harness_resp_free(r);
	r = acct_postf(RESET_PATH, NULL, "{\"email\":\"%s\",\"code\":\"%s\","
	    "\"newPassword\":\"weakpassword\"}", a.email, code);
	acct_assert_iam(r, 400, "VALIDATION_ERROR");
	acct_assert_error(r, "newPassword", "weak_password");
	harness_resp_free(r);
	ck_assert_int_eq(signin_status(a.email, a.password), 200);

	r = acct_postf(RESET_PATH, NULL, "{\"email\":\"%s\",\"code\":\"%s\",\"newPassword\":\"%s\"}",
	    a.email, code, newpw);
	acct_assert_outcome(r, 1, NULL);
	harness_resp_free(r);

	/* the old password is gone, the new one works, every session ended */
	ck_assert_int_eq(signin_status(a.email, a.password), 401);
	ck_assert_int_eq(signin_status(a.email, newpw), 200);
	ck_assert_int_eq(me_status(a.access), 401);
	ck_assert_int_eq(me_status(b.access), 401);
	ck_assert_int_eq(refresh_status(a.refresh), 401);
	ck_assert_int_eq(refresh_status(b.refresh), 401);

	/* the code was single use */
	r = acct_postf(RESET_PATH, NULL, "{\"email\":\"%s\",\"code\":\"%s\","
	    "\"new_password\":\"%sAgain\"}", a.email, code, newpw);
	acct_assert_iam(r, 400, "INVALID_CODE");
	harness_resp_free(r);
	/* an unknown address answers as a wrong code */
	r = acct_postf(RESET_PATH, NULL, "{\"email\":\"nobody-%ld@example.test\",\"code\":\"%s\","
	    "\"newPassword\":\"%s\"}", (long)getpid(), code, newpw);
	acct_assert_iam(r, 400, "INVALID_CODE");
	harness_resp_free(r);
	acct_mail_stop(&mb);
}
END_TEST

START_TEST(reset_password_expired_and_lockout)
{
	struct acct_mail mb;
	struct acct_user u, v;
	struct harness_resp *r;
	const char *ra;
	char code[7], bad[7];

	acct_mail_start(&mb);
	acct_new_user(&u, "reset-expired", &mb);
	r = acct_postf(FORGOT_PATH, NULL, "{\"email\":\"%s\"}", u.email);
	harness_resp_free(r);
	acct_mail_code(&mb, u.email, code);
	acct_sql_exec("UPDATE email_codes SET expires_at = now() - interval '1 minute'"
	    " WHERE user_id = $1 AND purpose = 'reset_password'", u.user_id, NULL, NULL);
	r = acct_postf(RESET_PATH, NULL, "{\"email\":\"%s\",\"code\":\"%s\","
	    "\"newPassword\":\"Brand-New-Pass-1\"}", u.email, code);
	acct_assert_iam(r, 400, "CODE_EXPIRED");
	harness_resp_free(r);
	ck_assert_int_eq(signin_status(u.email, u.password), 200);

	acct_new_user(&v, "reset-lock", &mb);
	r = acct_postf(FORGOT_PATH, NULL, "{\"email\":\"%s\"}", v.email);
	harness_resp_free(r);
	acct_mail_code(&mb, v.email, code);
	for (int k = 1; k <= 5; k++) {
		wrong_code(code, k, bad);
		r = acct_postf(RESET_PATH, NULL, "{\"email\":\"%s\",\"code\":\"%s\","
		    "\"newPassword\":\"Brand-New-Pass-1\"}", v.email, bad);
		acct_assert_iam(r, k < 5 ? 400 : 429, k < 5 ? "INVALID_CODE" : "TOO_MANY_ATTEMPTS");
		harness_resp_free(r);
	}
	r = acct_postf(RESET_PATH, NULL, "{\"email\":\"%s\",\"code\":\"%s\","
	    "\"newPassword\":\"Brand-New-Pass-1\"}", v.email, code);
	acct_assert_iam(r, 429, "TOO_MANY_ATTEMPTS");
	ra = harness_header(r, "Retry-After");
	ck_assert_msg(ra != NULL && atoi(ra) > 0 && atoi(ra) <= 900, "Retry-After: %s",
	    ra ? ra : "(none)");
	harness_resp_free(r);
	ck_assert_int_eq(signin_status(v.email, v.password), 200);
	acct_mail_stop(&mb);
}
END_TEST

/* A reset code proves the mailbox: it confirms an unconfirmed account. */
START_TEST(reset_password_confirms)
{
	struct acct_mail mb;
	struct acct_user u;
	struct harness_resp *r;
	char code[7];

	acct_mail_start(&mb);
	acct_user_init(&u, "reset-confirms");
	acct_signup(&u, &mb);
	ck_assert_int_eq(signin_status(u.email, u.password), 401);
	r = acct_postf(FORGOT_PATH, NULL, "{\"email\":\"%s\"}", u.email);
	harness_resp_free(r);
	acct_mail_code(&mb, u.email, code);
	r = acct_postf(RESET_PATH, NULL, "{\"email\":\"%s\",\"code\":\"%s\","
	    "\"newPassword\":\"%sX\"}", u.email, code, u.password);
	acct_assert_outcome(r, 1, NULL);
	harness_resp_free(r);
	strcat(u.password, "X");
	ck_assert_int_eq(signin_status(u.email, u.password), 200);
	acct_mail_stop(&mb);
}
END_TEST

/* ------------------------------------------------------------------ */
/* change-password                                                     */

START_TEST(change_password_refused)
{
	struct acct_mail mb;
	struct acct_user u;
	struct harness_resp *r;

	acct_mail_start(&mb);
	acct_new_user(&u, "change-refused", &mb);
	r = acct_postf(CHANGE_PATH, u.access, "{\"currentPassword\":\"Not-Mine-123!\","
	    "\"newPassword\":\"Brand-New-Pass-1\"}");
	acct_assert_outcome(r, 0, "INVALID_PASSWORD");
	ck_assert_ptr_null(acct_json(r, "tokens"));
	ck_assert_ptr_null(harness_header(r, "Set-Cookie"));
	harness_resp_free(r);
	r = acct_postf(CHANGE_PATH, u.access, "{\"currentPassword\":\"%s\","
	    "\"newPassword\":\"short\"}", u.password);
	acct_assert_outcome(r, 0, "WEAK_PASSWORD");
	ck_assert_ptr_null(acct_json(r, "tokens"));
	harness_resp_free(r);
	/* nothing changed */
	ck_assert_int_eq(signin_status(u.email, u.password), 200);
	ck_assert_int_eq(me_status(u.access), 200);

	r = acct_post(CHANGE_PATH, u.access, "{\"newPassword\":\"Brand-New-Pass-1\"}");
	acct_assert_iam(r, 400, "VALIDATION_ERROR");
	acct_assert_error(r, "currentPassword", "required");
	harness_resp_free(r);
	r = acct_postf(CHANGE_PATH, u.access, "{\"currentPassword\":\"%s\",\"newPassword\":7}",
	    u.password);
	acct_assert_iam(r, 400, "VALIDATION_ERROR");
	acct_assert_error(r, "newPassword", "invalid_type");
	harness_resp_free(r);
	r = acct_post(CHANGE_PATH, NULL, "{\"currentPassword\":\"a\",\"newPassword\":\"b\"}");
	acct_assert_iam(r, 401, "UNAUTHORIZED");
	harness_resp_free(r);
	acct_mail_stop(&mb);
}
END_TEST

START_TEST(change_password_rotates)
{
	struct acct_mail mb;
	struct acct_user a, b;
	struct harness_resp *r;
	const char *cookie;
	char newpw[128], access[2048], refresh[256], want[2200];
	struct json_object *ei;

	acct_mail_start(&mb);
	acct_new_user(&a, "change", &mb);
	b = a;
	acct_signin(&b);		/* the current session; a is another device */
	snprintf(newpw, sizeof(newpw), "%s2", a.password);
	r = acct_postf(CHANGE_PATH, b.access, "{\"currentPassword\":\"%s\",\"newPassword\":\"%s\"}",
	    b.password, newpw);
	acct_assert_outcome(r, 1, NULL);
	ck_assert_msg(acct_str(r, "tokens.accessToken") && acct_str(r, "tokens.refreshToken") &&
	    acct_str(r, "tokens.idToken"), "tokens: %s", r->body);
	ei = acct_json(r, "tokens.expiresIn");
	ck_assert_msg(ei != NULL && json_object_get_int(ei) == 3600, "expiresIn: %s", r->body);
	snprintf(access, sizeof(access), "%s", acct_str(r, "tokens.accessToken"));
	snprintf(refresh, sizeof(refresh), "%s", acct_str(r, "tokens.refreshToken"));
	ck_assert_str_ne(access, b.access);
	ck_assert_str_ne(refresh, b.refresh);
	/* the cookie is rotated in place */
	cookie = harness_header(r, "Set-Cookie");
	snprintf(want, sizeof(want), "bds_session=%s;", access);
	ck_assert_msg(cookie != NULL && strncmp(cookie, want, strlen(want)) == 0 &&
	    strstr(cookie, "HttpOnly") != NULL, "Set-Cookie: %s", cookie ? cookie : "(none)");
	harness_resp_free(r);

	/* the other device is signed out */
	ck_assert_int_eq(me_status(a.access), 401);
	ck_assert_int_eq(refresh_status(a.refresh), 401);
	/* this one: the new pair works, the old access and refresh tokens do not */
	ck_assert_int_eq(me_status(b.access), 401);
	ck_assert_int_eq(me_status(access), 200);
	ck_assert_int_eq(refresh_status(b.refresh), 401);
	ck_assert_int_eq(refresh_status(refresh), 200);
	/* the passwords */
	ck_assert_int_eq(signin_status(a.email, a.password), 401);
	ck_assert_int_eq(signin_status(a.email, newpw), 200);

	/* snake_case spellings */
	r = acct_postf(CHANGE_PATH, access, "{\"current_password\":\"%s\","
	    "\"new_password\":\"%s3\"}", newpw, a.password);
	acct_assert_outcome(r, 1, NULL);
	harness_resp_free(r);
	acct_mail_stop(&mb);
}
END_TEST

/* ------------------------------------------------------------------ */
/* e-mail verification                                                 */

START_TEST(email_request_cooldown)
{
	struct acct_mail mb;
	struct acct_user u;
	struct harness_resp *r;
	struct json_object *cd, *ra;
	const char *hdr;
	char first[7], second[7];

	acct_mail_start(&mb);
	acct_new_user(&u, "everify-cooldown", &mb);
	r = acct_post(EREQ_PATH, u.access, NULL);
	acct_assert_outcome(r, 1, NULL);
	cd = acct_json(r, "cooldown_seconds");
	ck_assert_msg(cd != NULL && json_object_is_type(cd, json_type_int) &&
	    json_object_get_int(cd) == 300, "cooldown_seconds: %s", r->body);
	harness_resp_free(r);
	acct_mail_code(&mb, u.email, first);

	/* inside the cooldown: 429 with cooldown_seconds, retry_after, Retry-After */
	r = acct_post(EREQ_PATH, u.access, NULL);
	harness_assert_iam(r, 429);
	cd = acct_json(r, "cooldown_seconds");
	ra = acct_json(r, "retry_after");
	ck_assert_msg(cd != NULL && json_object_is_type(cd, json_type_int) &&
	    ra != NULL && json_object_is_type(ra, json_type_int), "429 body: %s", r->body);
	ck_assert_msg(json_object_get_int(ra) > 0 && json_object_get_int(ra) <= 300 &&
	    json_object_get_int(cd) > 0 && json_object_get_int(cd) <= 300, "429 body: %s", r->body);
	hdr = harness_header(r, "Retry-After");
	ck_assert_msg(hdr != NULL && atoi(hdr) == json_object_get_int(ra), "Retry-After %s: %s",
	    hdr ? hdr : "(none)", r->body);
	harness_resp_free(r);
	ck_assert_uint_eq(acct_mail_count(&mb, u.email), 0);

	/* once the cooldown is over, a new code replaces the old one */
	acct_sql_exec("UPDATE email_codes SET sent_at = now() - interval '301 seconds'"
	    " WHERE user_id = $1 AND purpose = 'verify_email'", u.user_id, NULL, NULL);
	r = acct_post(EREQ_PATH, u.access, NULL);
	acct_assert_outcome(r, 1, NULL);
	harness_resp_free(r);
	acct_mail_code(&mb, u.email, second);
	if (strcmp(first, second) != 0) {
		r = acct_postf(EVERIFY_PATH, u.access, "{\"code\":\"%s\"}", first);
		acct_assert_outcome(r, 0, "INVALID_CODE");
		harness_resp_free(r);
	}
	r = acct_postf(EVERIFY_PATH, u.access, "{\"code\":\"%s\"}", second);
	acct_assert_outcome(r, 1, NULL);
	harness_resp_free(r);
	acct_mail_stop(&mb);
}
END_TEST

/* 16 code requests at once: one code goes out, the rest meet the cooldown
 * (a race must not mail a code per request). */
START_TEST(email_request_burst_one_code)
{
	struct acct_mail mb;
	struct acct_user u;
	struct harness_resp *out[16];
	char auth[2100];
	const char *hdrs[] = { auth, NULL };
	size_t ok = 0, cooling = 0;

	acct_mail_start(&mb);
	acct_new_user(&u, "everify-burst-req", &mb);
	snprintf(auth, sizeof(auth), "Authorization: Bearer %s", u.access);
	harness_request_burst(16, "POST", "api", EREQ_PATH, hdrs, NULL, 0, out);
	for (size_t i = 0; i < 16; i++) {
		ok += out[i]->status == 200;
		cooling += out[i]->status == 429;
		harness_resp_free(out[i]);
	}
	ck_assert_msg(ok == 1 && cooling == 15, "16 requests at once: %zu x 200, %zu x 429",
	    ok, cooling);
	ck_assert_uint_eq(acct_mail_count(&mb, u.email), 1);
	acct_mail_stop(&mb);
}
END_TEST

START_TEST(email_verify_ok)
{
	struct acct_mail mb;
	struct acct_user u;
	struct harness_resp *r;
	struct json_object *ev;
	struct jwt_parts id;

	acct_mail_start(&mb);
	acct_new_user(&u, "everify-ok", &mb);
	acct_verify_email(&u, &mb);
	r = acct_get(ME_PATH, u.access);
	acct_assert_success(r);
	ev = acct_json(r, "user.emailVerified");
	ck_assert_msg(ev != NULL && json_object_get_boolean(ev), "emailVerified: %s", r->body);
	harness_resp_free(r);
	/* asking for a code once verified sends nothing */
	r = acct_post(EREQ_PATH, u.access, NULL);
	harness_assert_status(r, 200);
	harness_resp_free(r);
	ck_assert_uint_eq(acct_mail_count(&mb, u.email), 0);
	/* a new ID token says so too */
	acct_signin(&u);
	jwt_split(u.id_token, &id);
	ck_assert_msg(json_object_get_boolean(json_object_object_get(id.payload, "email_verified")),
	    "id token: %s", json_object_to_json_string(id.payload));
	jwt_parts_free(&id);
	acct_mail_stop(&mb);
}
END_TEST

/* 5 wrong codes: TOO_MANY_ATTEMPTS for 15 minutes, even for the right
 * code, and a new code does not end the lockout. */
START_TEST(email_verify_lockout)
{
	struct acct_mail mb;
	struct acct_user u;
	struct harness_resp *r;
	struct json_object *ra, *ev;
	char bad[7];
	int k;

	acct_mail_start(&mb);
	acct_new_user(&u, "everify-lock", &mb);
	r = acct_post(EREQ_PATH, u.access, NULL);
	acct_assert_outcome(r, 1, NULL);
	harness_resp_free(r);
	acct_mail_code(&mb, u.email, u.code);
	for (k = 1; k <= 4; k++) {
		wrong_code(u.code, k, bad);
		r = acct_postf(EVERIFY_PATH, u.access, "{\"code\":\"%s\"}", bad);
		acct_assert_outcome(r, 0, "INVALID_CODE");
		harness_resp_free(r);
	}
	wrong_code(u.code, 5, bad);
	r = acct_postf(EVERIFY_PATH, u.access, "{\"code\":\"%s\"}", bad);
	acct_assert_outcome(r, 0, "TOO_MANY_ATTEMPTS");
	harness_resp_free(r);
	r = acct_postf(EVERIFY_PATH, u.access, "{\"code\":\"%s\"}", u.code);
	acct_assert_outcome(r, 0, "TOO_MANY_ATTEMPTS");
	ra = acct_json(r, "retry_after");
	ck_assert_msg(ra != NULL && json_object_get_int(ra) > 0 && json_object_get_int(ra) <= 900,
	    "retry_after: %s", r->body);
	harness_resp_free(r);

	/* a new code (after the request cooldown) keeps the lockout */
	acct_sql_exec("UPDATE email_codes SET sent_at = now() - interval '301 seconds'"
	    " WHERE user_id = $1 AND purpose = 'verify_email'", u.user_id, NULL, NULL);
	r = acct_post(EREQ_PATH, u.access, NULL);
	acct_assert_outcome(r, 1, NULL);
	harness_resp_free(r);
	acct_mail_code(&mb, u.email, u.code);
	r = acct_postf(EVERIFY_PATH, u.access, "{\"code\":\"%s\"}", u.code);
	acct_assert_outcome(r, 0, "TOO_MANY_ATTEMPTS");
	harness_resp_free(r);

	/* once the lockout is over the right code works */
	acct_sql_exec("UPDATE email_codes SET locked_until = now() - interval '1 second'"
	    " WHERE user_id = $1 AND purpose = 'verify_email'", u.user_id, NULL, NULL);
	r = acct_postf(EVERIFY_PATH, u.access, "{\"code\":\"%s\"}", u.code);
	acct_assert_outcome(r, 1, NULL);
	harness_resp_free(r);
	r = acct_get(ME_PATH, u.access);
	ev = acct_json(r, "user.emailVerified");
	ck_assert_msg(ev != NULL && json_object_get_boolean(ev), "emailVerified: %s", r->body);
	harness_resp_free(r);
	acct_mail_stop(&mb);
}
END_TEST

/* EVERIFY_BURST wrong codes at once: 4 judged wrong, then the lockout for
 * the rest (the attempts are counted under a row lock), however many
 * arrive together. */
#define EVERIFY_BURST	50

START_TEST(email_verify_burst_lockout)
{
	static const char *hdr_ct = "Content-Type: application/json";
	struct acct_mail mb;
	struct acct_user u;
	struct harness_resp *out[EVERIFY_BURST], *r;
	char auth[2100], bad[7], body[32];
	const char *hdrs[] = { hdr_ct, auth, NULL };
	size_t invalid = 0, locked = 0;

	acct_mail_start(&mb);
	acct_new_user(&u, "everify-burst", &mb);
	r = acct_post(EREQ_PATH, u.access, NULL);
	harness_resp_free(r);
	acct_mail_code(&mb, u.email, u.code);
	snprintf(auth, sizeof(auth), "Authorization: Bearer %s", u.access);
	wrong_code(u.code, 2, bad);
	snprintf(body, sizeof(body), "{\"code\":\"%s\"}", bad);
	harness_request_burst(EVERIFY_BURST, "POST", "api", EVERIFY_PATH, hdrs, body, strlen(body), out);
	for (size_t i = 0; i < EVERIFY_BURST; i++) {
		acct_assert_outcome(out[i], 0, NULL);
		invalid += strcmp(acct_str(out[i], "error_code"), "INVALID_CODE") == 0;
		locked += strcmp(acct_str(out[i], "error_code"), "TOO_MANY_ATTEMPTS") == 0;
		harness_resp_free(out[i]);
	}
	ck_assert_msg(invalid == 4 && locked == EVERIFY_BURST - 4, "%d wrong codes at once: %zu"
	    " INVALID_CODE, %zu TOO_MANY_ATTEMPTS", EVERIFY_BURST, invalid, locked);
	r = acct_postf(EVERIFY_PATH, u.access, "{\"code\":\"%s\"}", u.code);
	acct_assert_outcome(r, 0, "TOO_MANY_ATTEMPTS");
	harness_resp_free(r);
	acct_mail_stop(&mb);
}
END_TEST

START_TEST(email_verify_expired)
{
	struct acct_mail mb;
	struct acct_user u;
	struct harness_resp *r;

	acct_mail_start(&mb);
	acct_new_user(&u, "everify-expired", &mb);
	r = acct_post(EREQ_PATH, u.access, NULL);
	harness_resp_free(r);
	acct_mail_code(&mb, u.email, u.code);
	acct_sql_exec("UPDATE email_codes SET expires_at = now() - interval '1 minute'"
	    " WHERE user_id = $1 AND purpose = 'verify_email'", u.user_id, NULL, NULL);
	r = acct_postf(EVERIFY_PATH, u.access, "{\"code\":\"%s\"}", u.code);
	acct_assert_outcome(r, 0, "CODE_EXPIRED");
	harness_resp_free(r);
	/* without any code requested */
	acct_sql_exec("DELETE FROM email_codes WHERE user_id = $1 AND purpose = 'verify_email'",
	    u.user_id, NULL, NULL);
	r = acct_postf(EVERIFY_PATH, u.access, "{\"code\":\"%s\"}", u.code);
	acct_assert_outcome(r, 0, "INVALID_CODE");
	harness_resp_free(r);
	acct_mail_stop(&mb);
}
END_TEST

START_TEST(email_verification_bad_input)
{
	static const struct {
		const char	*body;
		const char	*code;
	} bad[] = {
		{ "{\"code\":\"12345\"}", "too_short" },
		{ "{\"code\":\"abcdef\"}", "invalid_format" },
		{ "{\"code\":123456}", "invalid_type" },
		{ "{}", "required" },
		{ NULL, "required" },
	};
	struct acct_mail mb;
	struct acct_user u;
	struct harness_resp *r;

	acct_mail_start(&mb);
	acct_new_user(&u, "everify-bad", &mb);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const char *m;

		r = acct_post(EVERIFY_PATH, u.access, bad[i].body);
		acct_assert_iam(r, 400, "VALIDATION_ERROR");
		if ((m = acct_check_error(r, "code", bad[i].code)) != NULL &&
		    acct_check_error(r, "code", "invalid_format") == NULL)
			m = NULL;
		ck_assert_msg(m == NULL, "%s: %s", bad[i].body ? bad[i].body : "(none)", m);
		harness_resp_free(r);
	}
	r = acct_post(EVERIFY_PATH, u.access, "{\"code\":\"123456\",\"extra\":1}");
	acct_assert_iam(r, 400, "VALIDATION_ERROR");
	acct_assert_error(r, "extra", "unknown_field");
	harness_resp_free(r);
	/* without a token: 401 on both */
	r = acct_post(EREQ_PATH, NULL, NULL);
	acct_assert_iam(r, 401, "UNAUTHORIZED");
	harness_resp_free(r);
	r = acct_post(EVERIFY_PATH, NULL, "{\"code\":\"123456\"}");
	acct_assert_iam(r, 401, "UNAUTHORIZED");
	harness_resp_free(r);
	acct_mail_stop(&mb);
}
END_TEST

/* request-verification takes no body (route table: "NULL: no body
 * accepted"): a member is unknown, e.g. an address to send the code to. */
START_TEST(email_request_refuses_a_body)
{
	struct acct_mail mb;
	struct acct_user u;
	struct harness_resp *r;

	acct_mail_start(&mb);
	acct_new_user(&u, "everify-body", &mb);
	r = acct_post(EREQ_PATH, u.access, "{\"email\":\"someone-else@example.test\"}");
	acct_assert_iam(r, 400, "VALIDATION_ERROR");
	acct_assert_error(r, "email", "unknown_field");
	harness_resp_free(r);
	ck_assert_uint_eq(acct_mail_count(&mb, u.email), 0);
	acct_mail_stop(&mb);
}
END_TEST

/* A code is bound to its user and purpose: another user's code, or a
 * code of another purpose, is just a wrong code. */
START_TEST(codes_bound_to_user_and_purpose)
{
	struct acct_mail mb;
	struct acct_user a, b;
	struct harness_resp *r;
	char a_verify[7], a_reset[7], b_verify[7];

	acct_mail_start(&mb);
	acct_new_user(&a, "bound-a", &mb);
	acct_new_user(&b, "bound-b", &mb);
	r = acct_post(EREQ_PATH, a.access, NULL);
	harness_resp_free(r);
	acct_mail_code(&mb, a.email, a_verify);
	r = acct_post(EREQ_PATH, b.access, NULL);
	harness_resp_free(r);
	acct_mail_code(&mb, b.email, b_verify);
	r = acct_postf(FORGOT_PATH, NULL, "{\"email\":\"%s\"}", a.email);
	harness_resp_free(r);
	acct_mail_code(&mb, a.email, a_reset);

	/* b cannot use a's verification code */
	if (strcmp(a_verify, b_verify) != 0) {
		r = acct_postf(EVERIFY_PATH, b.access, "{\"code\":\"%s\"}", a_verify);
		acct_assert_outcome(r, 0, "INVALID_CODE");
		harness_resp_free(r);
	}
	/* a's reset code does not reset b's password */
	r = acct_postf(RESET_PATH, NULL, "{\"email\":\"%s\",\"code\":\"%s\","
	    "\"newPassword\":\"Taken-Over-123!\"}", b.email, a_reset);
	acct_assert_iam(r, 400, "INVALID_CODE");
	harness_resp_free(r);
	ck_assert_int_eq(signin_status(b.email, "Taken-Over-123!"), 401);
	/* a's reset code does not verify a's e-mail, nor the reverse */
	if (strcmp(a_reset, a_verify) != 0) {
		r = acct_postf(EVERIFY_PATH, a.access, "{\"code\":\"%s\"}", a_reset);
		acct_assert_outcome(r, 0, "INVALID_CODE");
		harness_resp_free(r);
		r = acct_postf(RESET_PATH, NULL, "{\"email\":\"%s\",\"code\":\"%s\","
		    "\"newPassword\":\"Another-New-123!\"}", a.email, a_verify);
		acct_assert_iam(r, 400, "INVALID_CODE");
		harness_resp_free(r);
	}
	/* and each works where it belongs */
	r = acct_postf(EVERIFY_PATH, b.access, "{\"code\":\"%s\"}", b_verify);
	acct_assert_outcome(r, 1, NULL);
	harness_resp_free(r);
	r = acct_postf(EVERIFY_PATH, a.access, "{\"code\":\"%s\"}", a_verify);
	acct_assert_outcome(r, 1, NULL);
	harness_resp_free(r);
	acct_mail_stop(&mb);
}
END_TEST

/* ------------------------------------------------------------------ */
/* No secret in a log or in plaintext in the database                  */

#define MAX_SECRETS 64

struct secrets {
	const char	*what[MAX_SECRETS];
	char		*value[MAX_SECRETS];
	int		 is_code[MAX_SECRETS];
	size_t		 n;
};

static void
secret_add(struct secrets *s, const char *what, const char *value, int is_code)
{
	ck_assert_uint_lt(s->n, MAX_SECRETS);
	ck_assert_msg(value != NULL && strlen(value) >= 6, "%s: empty", what);
	s->what[s->n] = what;
	s->value[s->n] = strdup(value);
	s->is_code[s->n++] = is_code;
}

/* A token's parts worth finding: the whole, and its signature (any log
 * that kept part of a token would keep that). */
static void
secret_token(struct secrets *s, const char *what, const char *tok)
{
	const char *sig = strrchr(tok, '.');

	secret_add(s, what, tok, 0);
	if (sig != NULL && strlen(sig + 1) >= 40)
		secret_add(s, what, sig + 1, 0);
}

/*
 * A 6-digit code standing alone: not inside a longer run of letters or
 * digits, not the fraction of a timestamp (".123456"), and not a JSON
 * number value (":123456", a duration or a size in a log line; a code
 * would be a string). Anything else — "123456" in quotes, after a space
 * or an '=' — is a leak.
 */
static const char *
code_leak(const char *text, const char *code)
{
	for (const char *p = text; (p = strstr(p, code)) != NULL; p++) {
		char prev = p > text ? p[-1] : ' ', next = p[6];

		if (isalnum((unsigned char)prev) || isalnum((unsigned char)next) ||
		    prev == '.' || prev == ':')
			continue;
		return p;
	}
	return NULL;
}

static void
scan(const struct secrets *s, const char *where, const char *text)
{
	for (size_t i = 0; i < s->n; i++) {
		const char *hit = s->is_code[i] ? code_leak(text, s->value[i]) :
		    strstr(text, s->value[i]);

		if (hit != NULL) {
			size_t off = (size_t)(hit - text);

			ck_abort_msg("%s holds %s (\"%s\"): ...%.120s...", where, s->what[i],
			    s->value[i], hit - (off > 60 ? 60 : off));
		}
	}
}

START_TEST(secrets_nowhere)
{
	struct acct_mail mb;
	struct acct_user u, w;
	struct secrets s = { 0 };
	struct harness_resp *r;
	char code[7], bad[7], pw2[128], pw3[160], path[1024];
	const char *logs[] = { "requests.log", "bds-api.log", "bds-deliver.log", "bdsctl.log",
	    "postgres.log", "nginx/access.log", "nginx/error.log", "nginx/stderr.log" };
	PGresult *tables;
	int scanned = 0;

	acct_mail_start(&mb);
	/* sign-up, confirm, sign-in */
	acct_user_init(&u, "secrets");
	secret_add(&s, "the sign-up password", u.password, 0);
	acct_signup(&u, &mb);
	secret_add(&s, "the sign-up code", u.code, 1);
	/* the matcher finds a code where it stands in real text: the mail */
	ck_assert_msg(code_leak(smtp_sink_wait(mb.sink, 0, 0)->data, u.code) != NULL,
	    "code_leak() misses the code in the message that carried it");
	acct_confirm(&u);
	acct_signin(&u);
	secret_token(&s, "an access token", u.access);
	secret_token(&s, "an ID token", u.id_token);
	secret_add(&s, "a refresh token", u.refresh, 0);
	/* a failed sign-in with a near miss of the password */
	ck_assert_int_eq(signin_status(u.email, "Wrong-But-Secret-Pass-9"), 401);
	secret_add(&s, "a wrong password", "Wrong-But-Secret-Pass-9", 0);
	/* refresh */
	r = acct_postf(REFRESH_PATH, NULL, "{\"refreshToken\":\"%s\"}", u.refresh);
	harness_assert_status(r, 200);
	secret_token(&s, "a refreshed access token", acct_str(r, "access_token"));
	harness_resp_free(r);
	/* e-mail verification, with one wrong try */
	r = acct_post(EREQ_PATH, u.access, NULL);
	harness_resp_free(r);
	acct_mail_code(&mb, u.email, code);
	secret_add(&s, "the verification code", code, 1);
	wrong_code(code, 1, bad);
	r = acct_postf(EVERIFY_PATH, u.access, "{\"code\":\"%s\"}", bad);
	harness_resp_free(r);
	r = acct_postf(EVERIFY_PATH, u.access, "{\"code\":\"%s\"}", code);
	acct_assert_outcome(r, 1, NULL);
	harness_resp_free(r);
	/* forgot and reset */
	r = acct_postf(FORGOT_PATH, NULL, "{\"email\":\"%s\"}", u.email);
	harness_resp_free(r);
	acct_mail_code(&mb, u.email, code);
	secret_add(&s, "the reset code", code, 1);
	snprintf(pw2, sizeof(pw2), "%sR", u.password);
	secret_add(&s, "the reset password", pw2, 0);
	r = acct_postf(RESET_PATH, NULL, "{\"email\":\"%s\",\"code\":\"%s\",\"newPassword\":\"%s\"}",
	    u.email, code, pw2);
	acct_assert_outcome(r, 1, NULL);
	harness_resp_free(r);
	ck_assert_uint_lt(strlen(pw2), sizeof(u.password));
	strcpy(u.password, pw2);
	acct_signin(&u);
	secret_token(&s, "an access token", u.access);
	secret_add(&s, "a refresh token", u.refresh, 0);
	/* change password, through the cookie this time */
	snprintf(pw3, sizeof(pw3), "%sC", pw2);
	secret_add(&s, "the changed password", pw3, 0);
	{
		char cookie[2200], *body;
		const char *h[] = { cookie, NULL };

		snprintf(cookie, sizeof(cookie), "Cookie: bds_session=%s", u.access);
		ck_assert_int_ge(asprintf(&body, "{\"currentPassword\":\"%s\",\"newPassword\":\"%s\"}",
		    pw2, pw3), 0);
		r = acct_call("POST", CHANGE_PATH, NULL, body, h);
		free(body);
	}
	acct_assert_outcome(r, 1, NULL);
	secret_token(&s, "a rotated access token", acct_str(r, "tokens.accessToken"));
	secret_token(&s, "a rotated ID token", acct_str(r, "tokens.idToken"));
	secret_add(&s, "a rotated refresh token", acct_str(r, "tokens.refreshToken"), 0);
	snprintf(u.access, sizeof(u.access), "%s", acct_str(r, "tokens.accessToken"));
	snprintf(u.refresh, sizeof(u.refresh), "%s", acct_str(r, "tokens.refreshToken"));
	harness_resp_free(r);
	/* a refused token, and sign-out with the refresh token */
	ck_assert_int_eq(me_status("eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.c2VjcmV0LWZvcmdlZA"), 401);
	secret_add(&s, "a forged token", "c2VjcmV0LWZvcmdlZA", 0);
	r = acct_postf(SIGNOUT_PATH, u.access, "{\"refreshToken\":\"%s\"}", u.refresh);
	acct_assert_outcome(r, 1, NULL);
	harness_resp_free(r);
	/* confirm-and-signin for another user */
	acct_user_init(&w, "secrets-w");
	secret_add(&s, "another password", w.password, 0);
	acct_signup(&w, &mb);
	secret_add(&s, "another sign-up code", w.code, 1);
	r = acct_postf("/v1/iam/auth/confirm-and-signin", NULL, "{\"email\":\"%s\",\"code\":\"%s\","
	    "\"password\":\"%s\"}", w.email, w.code, w.password);
	acct_assert_outcome(r, 1, NULL);
	secret_token(&s, "a confirm-and-signin access token", acct_str(r, "tokens.accessToken"));
	secret_add(&s, "a confirm-and-signin refresh token", acct_str(r, "tokens.refreshToken"), 0);
	harness_resp_free(r);
	acct_mail_stop(&mb);
	harness_sleep_ms(300);		/* let nginx and the app flush their lines */

	/* every log of the stack */
	for (size_t i = 0; i < sizeof(logs) / sizeof(logs[0]); i++) {
		char *text;

		snprintf(path, sizeof(path), "%s/%s", harness_dir(), logs[i]);
		if ((text = acct_slurp(path, NULL)) == NULL)
			continue;
		scan(&s, logs[i], text);
		if (strcmp(logs[i], "requests.log") == 0 || strcmp(logs[i], "nginx/access.log") == 0) {
			ck_assert_msg(strstr(text, "/v1/iam/auth/") != NULL || strstr(text,
			    "signin") != NULL, "%s does not log the requests", logs[i]);
			scanned++;
		}
		free(text);
	}
	ck_assert_msg(scanned == 2, "the request log and the access log were not both found");

	/* every table, row by row, as JSON text (bytea as hex) */
	tables = acct_sql("SELECT format('%I', tablename) FROM pg_tables"
	    " WHERE schemaname = 'public' ORDER BY 1", NULL, NULL, NULL);
	ck_assert_int_ge(PQntuples(tables), 8);
	for (int i = 0; i < PQntuples(tables); i++) {
		char q[512], where[256], *dump;

		snprintf(q, sizeof(q), "SELECT coalesce(string_agg(row_to_json(t)::text, E'\\n'),"
		    " '') FROM public.%s t", PQgetvalue(tables, i, 0));
		snprintf(where, sizeof(where), "table %s", PQgetvalue(tables, i, 0));
		dump = acct_sql_value(q, NULL, NULL, NULL);
		if (strcmp(PQgetvalue(tables, i, 0), "users") == 0)
			ck_assert_msg(strstr(dump, u.email) != NULL, "users dump lacks %s", u.email);
		scan(&s, where, dump);
		free(dump);
	}
	PQclear(tables);
	/* the spool is not in use (smtp), so no mail file anywhere either */
	for (size_t i = 0; i < s.n; i++)
		free(s.value[i]);
}
END_TEST

/* ------------------------------------------------------------------ */

#define N(a) ((int)(sizeof(a) / sizeof((a)[0])))

static Suite *
accounts_session_suite(void)
{
	Suite *s = suite_create("e2e_accounts_session");
	TCase *tc = tcase_create("session");

	tcase_add_unchecked_fixture(tc, acct_stack_development, harness_fixture_stop);
	tcase_add_checked_fixture(tc, acct_setup, acct_teardown);
	tcase_set_timeout(tc, 300);

	tcase_add_test(tc, jwks_published);
	tcase_add_test(tc, jwt_verifies_with_openssl);
	tcase_add_test(tc, jwt_forgeries_refused);
	tcase_add_test(tc, jwt_claims_enforced);

	tcase_add_test(tc, me_ok);
	tcase_add_loop_test(tc, me_unauthenticated, 0, N(me_unauth_headers));
	tcase_add_test(tc, me_cookie_only);

	tcase_add_test(tc, signout_revokes);
	tcase_add_test(tc, refresh_ok);
	tcase_add_loop_test(tc, refresh_refused, 0, N(refresh_bad));
	tcase_add_test(tc, refresh_expired);

	tcase_add_test(tc, forgot_password_same_answer);
	tcase_add_test(tc, forgot_password_burst_one_mail);
	tcase_add_test(tc, reset_password_flow);
	tcase_add_test(tc, reset_password_expired_and_lockout);
	tcase_add_test(tc, reset_password_confirms);

	tcase_add_test(tc, change_password_refused);
	tcase_add_test(tc, change_password_rotates);

	tcase_add_test(tc, email_request_cooldown);
	tcase_add_test(tc, email_request_burst_one_code);
	tcase_add_test(tc, email_verify_ok);
	tcase_add_test(tc, email_verify_lockout);
	tcase_add_test(tc, email_verify_burst_lockout);
	tcase_add_test(tc, email_verify_expired);
	tcase_add_test(tc, email_verification_bad_input);
	tcase_add_test(tc, email_request_refuses_a_body);
	tcase_add_test(tc, codes_bound_to_user_and_purpose);

	tcase_add_test(tc, secrets_nowhere);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	if (sodium_init() < 0)
		return 1;
	return harness_run_suite(accounts_session_suite());
}
