/*
 * Crypto helpers over libsodium: UUIDv7 ids, base64url and hex, hashing and
 * constant-time comparison. Strings returned by the encoders belong to the
 * arena passed in.
 */
#include <stdint.h>
#include <string.h>
#include <time.h>

#include <sodium.h>

#include "core/arena.h"
#include "core/crypto.h"

#define CRYPTO_B64 sodium_base64_VARIANT_URLSAFE_NO_PADDING
#define CRYPTO_B64_ALPHABET \
	"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"

/* Initialise libsodium once per process: 0 ok, -1 failure. */
int
crypto_setup(void)
{
	return sodium_init() < 0 ? -1 : 0;
}

/* n bytes from the system CSPRNG. */
void
crypto_random_bytes(void *buf, size_t n)
{
	if (n > 0)
		randombytes_buf(buf, n);
}

static uint64_t
crypto_now_ms(void)
{
	struct timespec	 ts;

	if (clock_gettime(CLOCK_REALTIME, &ts) != 0)
		return 0;
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/*
 * RFC 9562 UUIDv7 with a 12-bit counter in rand_a (section 6.2, method 1):
 * ids made by one process are strictly increasing even within one
 * millisecond or when the clock steps back. The counter starts at a random
 * value below 0x800 each new millisecond; on overflow the timestamp moves on.
 */
static _Thread_local uint64_t uuid_last_ms;
static _Thread_local unsigned uuid_counter;

void
crypto_uuid7(unsigned char out[16])
{
	uint64_t	 ms;
	unsigned char	 rnd[10];
	int		 i;

	crypto_random_bytes(rnd, sizeof(rnd));
	ms = crypto_now_ms() & 0xffffffffffffULL;
	if (ms > uuid_last_ms) {
		uuid_last_ms = ms;
		uuid_counter = ((unsigned)rnd[0] << 8 | rnd[1]) & 0x7ffu;
	} else if (++uuid_counter > 0xfffu) {
		uuid_last_ms++;
		uuid_counter = 0;
	}
	ms = uuid_last_ms;

	for (i = 0; i < 6; i++)
		out[i] = (unsigned char)(ms >> (40 - 8 * i));
	out[6] = (unsigned char)(0x70u | (uuid_counter >> 8));
	out[7] = (unsigned char)(uuid_counter & 0xffu);
	memcpy(out + 8, rnd + 2, 8);
	out[8] = (unsigned char)(0x80u | (out[8] & 0x3fu));
}

/* Canonical lower-case 8-4-4-4-12 form into out (37 bytes with the NUL). */
void
crypto_uuid_format(const unsigned char in[16], char out[CRYPTO_UUID_STRLEN + 1])
{
	static const char	 hex[] = "0123456789abcdef";
	size_t			 i, j = 0;

	for (i = 0; i < 16; i++) {
		if (i == 4 || i == 6 || i == 8 || i == 10)
			out[j++] = '-';
		out[j++] = hex[in[i] >> 4];
		out[j++] = hex[in[i] & 0x0f];
	}
	out[j] = '\0';
}

static int
crypto_hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Canonical 8-4-4-4-12 hex in either case: 0 ok, -1 invalid. */
int
crypto_uuid_parse(const char *s, unsigned char out[16])
{
	size_t	 i, j = 0;
	int	 hi, lo;

	if (s == NULL || strlen(s) != CRYPTO_UUID_STRLEN)
		return -1;
	for (i = 0; i < CRYPTO_UUID_STRLEN; ) {
		if (i == 8 || i == 13 || i == 18 || i == 23) {
			if (s[i] != '-')
				return -1;
			i++;
			continue;
		}
		if ((hi = crypto_hexval(s[i])) < 0 ||
		    (lo = crypto_hexval(s[i + 1])) < 0)
			return -1;
		out[j++] = (unsigned char)(hi << 4 | lo);
		i += 2;
	}
	return 0;
}

/* "<prefix>_<uuidv7>" in the arena; a bare UUID when prefix is NULL or "". */
char *
crypto_id_new(struct arena *a, const char *prefix)
{
	unsigned char	 u[16];
	char		 s[CRYPTO_UUID_STRLEN + 1];

	crypto_uuid7(u);
	crypto_uuid_format(u, s);
	if (prefix == NULL || *prefix == '\0')
		return arena_strdup(a, s);
	return arena_printf(a, "%s_%s", prefix, s);
}

/*
 * 1 when s is prefix, '_' and a canonical UUID (either case), or a bare
 * UUID when bare_ok; else 0.
 */
int
crypto_id_valid(const char *s, const char *prefix, int bare_ok)
{
	unsigned char	 u[16];
	size_t		 plen;

	if (s == NULL)
		return 0;
	if (prefix != NULL && *prefix != '\0') {
		plen = strlen(prefix);
		if (strncmp(s, prefix, plen) == 0 && s[plen] == '_' &&
		    crypto_uuid_parse(s + plen + 1, u) == 0)
			return 1;
	}
	return bare_ok && crypto_uuid_parse(s, u) == 0;
}

/* base64url without padding, as an arena string. */
char *
crypto_b64url_encode(struct arena *a, const void *p, size_t n)
{
	static const unsigned char	 empty[1];
	size_t				 len;
	char				*s;

	len = sodium_base64_ENCODED_LEN(n, CRYPTO_B64);
	s = arena_alloc(a, len);
	sodium_bin2base64(s, len, n > 0 ? p : empty, n, CRYPTO_B64);
	return s;
}

/*
 * Strict base64url without padding: only the url-safe alphabet, no
 * whitespace, no padding, zero bits past the last byte. 0 with *out (arena,
 * NUL-terminated) and *outlen; -1 with *out NULL and *outlen 0.
 */
int
crypto_b64url_decode(struct arena *a, const char *s, unsigned char **out,
    size_t *outlen)
{
	const char	*end = NULL;
	unsigned char	*buf;
	size_t		 len, max, got = 0;

	*out = NULL;
	*outlen = 0;
	if (s == NULL)
		return -1;
	len = strlen(s);
	/*
	 * libsodium 1.0.18 decodes bytes 0x80-0xff as if they were letters,
	 * so check the alphabet first. A lone trailing character carries
	 * fewer than 8 bits.
	 */
	if (strspn(s, CRYPTO_B64_ALPHABET) != len || len % 4 == 1)
		return -1;
	max = len / 4 * 3 + 2;
	buf = arena_alloc(a, max + 1);
	if (len > 0 && (sodium_base642bin(buf, max, s, len, NULL, &got, &end,
	    CRYPTO_B64) != 0 || end != s + len))
		return -1;
	buf[got] = '\0';
	*out = buf;
	*outlen = got;
	return 0;
}

/* Lower-case hex as an arena string. */
char *
crypto_hex_encode(struct arena *a, const void *p, size_t n)
{
	static const unsigned char	 empty[1];
	char				*s;

	if (n > (SIZE_MAX - 1) / 2)
		return NULL;
	s = arena_alloc(a, 2 * n + 1);
	sodium_bin2hex(s, 2 * n + 1, n > 0 ? p : empty, n);
	return s;
}

/* Exactly 2 * outlen hex characters (either case) into out: 0 ok, -1 not. */
int
crypto_hex_decode(const char *s, unsigned char *out, size_t outlen)
{
	const char	*end = NULL;
	size_t		 len, got = 0;

	if (s == NULL || outlen > SIZE_MAX / 2)
		return -1;
	len = strlen(s);
	if (len != 2 * outlen)
		return -1;
	if (outlen == 0)
		return 0;
	if (sodium_hex2bin(out, outlen, s, len, NULL, &got, &end) != 0 ||
	    got != outlen || end != s + len)
		return -1;
	return 0;
}

/* 1 when the n bytes are equal; time depends on n only. */
int
crypto_ct_equal(const void *a, const void *b, size_t n)
{
	if (n == 0)
		return 1;
	return sodium_memcmp(a, b, n) == 0;
}

/*
 * Hash both sides and compare the digests: the time taken depends on the
 * two lengths only, never on where the strings first differ.
 */
int
crypto_ct_streq(const char *a, const char *b)
{
	unsigned char	 ha[32], hb[32];
	size_t		 la, lb;
	int		 eq;

	if (a == NULL || b == NULL)
		return 0;
	la = strlen(a);
	lb = strlen(b);
	crypto_hash_sha256(ha, (const unsigned char *)a, la);
	crypto_hash_sha256(hb, (const unsigned char *)b, lb);
	eq = sodium_memcmp(ha, hb, sizeof(ha)) == 0;
	return eq & (la == lb);
}

/* SHA-256 of n bytes. */
void
crypto_sha256(const void *p, size_t n, unsigned char out[32])
{
	crypto_hash_sha256(out, p, n);
}

/* HMAC-SHA-256 (RFC 2104) with a key of any length. */
void
crypto_hmac_sha256(const void *key, size_t keylen, const void *msg,
    size_t msglen, unsigned char out[32])
{
	crypto_auth_hmacsha256_state	 st;

	/* The multi-part API takes keys of any length (RFC 2104). */
	crypto_auth_hmacsha256_init(&st, key, keylen);
	crypto_auth_hmacsha256_update(&st, msg, msglen);
	crypto_auth_hmacsha256_final(&st, out);
	sodium_memzero(&st, sizeof(st));
}

/*
 * XChaCha20-Poly1305 (IETF) under key: nonce(24) || ciphertext || tag(16)
 * in the arena, *sealed_len set. ad NULL binds nothing, else its bytes
 * without the NUL (so "" and NULL are the same). The nonce is random: 192
 * bits never repeat in practice. NULL with *sealed_len 0 when len overflows.
 */
unsigned char *
crypto_seal(struct arena *a, const unsigned char key[32], const void *msg,
    size_t len, const char *ad, size_t *sealed_len)
{
	static const unsigned char	 empty[1];
	unsigned char			*out;
	unsigned long long		 clen = 0;

	*sealed_len = 0;
	if (len > SIZE_MAX - CRYPTO_SEAL_OVERHEAD ||
	    len > crypto_aead_xchacha20poly1305_ietf_MESSAGEBYTES_MAX)
		return NULL;
	out = arena_alloc(a, len + CRYPTO_SEAL_OVERHEAD);
	randombytes_buf(out, crypto_aead_xchacha20poly1305_ietf_NPUBBYTES);
	crypto_aead_xchacha20poly1305_ietf_encrypt(
	    out + crypto_aead_xchacha20poly1305_ietf_NPUBBYTES, &clen,
	    len > 0 ? msg : empty, len,
	    (const unsigned char *)ad, ad != NULL ? strlen(ad) : 0,
	    NULL, out, key);
	*sealed_len = crypto_aead_xchacha20poly1305_ietf_NPUBBYTES +
	    (size_t)clen;
	return out;
}

/*
 * Open what crypto_seal made under the same key and ad. 0 with *msg (arena,
 * NUL-terminated) and *len; -1 with *msg NULL and *len 0 when sealed is too
 * short or anything was altered (key, ad, nonce, ciphertext or tag).
 */
int
crypto_open(struct arena *a, const unsigned char key[32],
    const unsigned char *sealed, size_t sealed_len, const char *ad,
    unsigned char **msg, size_t *len)
{
	unsigned char		*buf;
	unsigned long long	 mlen = 0;

	*msg = NULL;
	*len = 0;
	if (sealed == NULL || sealed_len < CRYPTO_SEAL_OVERHEAD)
		return -1;
	buf = arena_alloc(a, sealed_len - CRYPTO_SEAL_OVERHEAD + 1);
	if (crypto_aead_xchacha20poly1305_ietf_decrypt(buf, &mlen, NULL,
	    sealed + crypto_aead_xchacha20poly1305_ietf_NPUBBYTES,
	    sealed_len - crypto_aead_xchacha20poly1305_ietf_NPUBBYTES,
	    (const unsigned char *)ad, ad != NULL ? strlen(ad) : 0,
	    sealed, key) != 0)
		return -1;
	buf[mlen] = '\0';
	*msg = buf;
	*len = (size_t)mlen;
	return 0;
}

/*
 * HMAC-SHA-256 under key of purpose, one 0 byte, then s: the separator keeps
 * ("ab", "c") and ("a", "bc") apart. NULL purpose or s hash as "".
 */
void
crypto_keyed_hash(const unsigned char key[32], const char *purpose,
    const char *s, unsigned char out[32])
{
	static const unsigned char	 sep[1] = { 0 };
	crypto_auth_hmacsha256_state	 st;

	crypto_auth_hmacsha256_init(&st, key, 32);
	if (purpose != NULL)
		crypto_auth_hmacsha256_update(&st,
		    (const unsigned char *)purpose, strlen(purpose));
	crypto_auth_hmacsha256_update(&st, sep, sizeof(sep));
	if (s != NULL)
		crypto_auth_hmacsha256_update(&st,
		    (const unsigned char *)s, strlen(s));
	crypto_auth_hmacsha256_final(&st, out);
	sodium_memzero(&st, sizeof(st));
}

char *
crypto_seal_hex(struct arena *a, const unsigned char key[32], const char *msg, const char *ad)
{
	size_t slen;
	unsigned char *sealed = crypto_seal(a, key, msg, strlen(msg), ad, &slen);

	return sealed != NULL ? crypto_hex_encode(a, sealed, slen) : NULL;
}

char *
crypto_open_hex(struct arena *a, const unsigned char key[32], const char *hex, const char *ad)
{
	size_t n = strlen(hex) / 2, len;
	unsigned char *raw = arena_alloc(a, n + 1), *msg;

	if (n == 0 || crypto_hex_decode(hex, raw, n) != 0 ||
	    crypto_open(a, key, raw, n, ad, &msg, &len) != 0)
		return NULL;
	return (char *)msg;
}
