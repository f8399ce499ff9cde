/*
 * Opaque keyset cursors.
 *
 * Wire form: base64url (no padding) of
 *	payload = version (1 byte) | field count (1 byte) |
 *	          per field: length (2 bytes, big-endian) | bytes
 *	mac     = keyed BLAKE2b-128 of
 *	          len(scope) (2 bytes, big-endian) | scope | payload
 * The scope is length-prefixed so (scope, payload) pairs cannot be shifted
 * into one another. The MAC is checked, in constant time, before anything
 * in the payload is trusted.
 */
#include <stdint.h>
#include <string.h>

#include <sodium.h>

#include "core/arena.h"
#include "core/crypto.h"
#include "core/config.h"
#include "core/cursor.h"
#include "core/errors.h"
#include "core/json.h"
#include "core/req.h"
#include "core/validate.h"

#define CURSOR_VERSION		1
#define CURSOR_MAC_LEN		16
#define CURSOR_HDR_LEN		2
#define CURSOR_FIELD_MAX	0xffffu

static void
cursor_mac(const unsigned char key[32], const char *scope,
    const unsigned char *payload, size_t len, unsigned char mac[CURSOR_MAC_LEN])
{
	crypto_generichash_state	 st;
	unsigned char			 slen[2];
	size_t				 sl;

	sl = strlen(scope);
	if (sl > CURSOR_FIELD_MAX)
		sl = CURSOR_FIELD_MAX;
	slen[0] = (unsigned char)(sl >> 8);
	slen[1] = (unsigned char)(sl & 0xff);
	crypto_generichash_init(&st, key, 32, CURSOR_MAC_LEN);
	crypto_generichash_update(&st, slen, sizeof(slen));
	crypto_generichash_update(&st, (const unsigned char *)scope, sl);
	crypto_generichash_update(&st, payload, len);
	crypto_generichash_final(&st, mac, CURSOR_MAC_LEN);
}

/*
 * Encode n fields under key and scope. Returns an arena string, or NULL
 * when the input cannot make a cursor that cursor_decode() would accept:
 * n > CURSOR_MAX_FIELDS, a NULL field, or a result over CURSOR_MAX_LEN.
 */
char *
cursor_encode(struct arena *a, const unsigned char key[32], const char *scope,
    const char *const *fields, size_t n)
{
	unsigned char	*buf;
	size_t		 i, len, fl, off;
	char		*s;

	if (n > CURSOR_MAX_FIELDS || (n > 0 && fields == NULL))
		return NULL;
	if (scope == NULL)
		scope = "";
	len = CURSOR_HDR_LEN;
	for (i = 0; i < n; i++) {
		if (fields[i] == NULL)
			return NULL;
		/* Bound each length before adding, so the sum cannot wrap. */
		if ((fl = strlen(fields[i])) > CURSOR_MAX_LEN)
			return NULL;
		len += 2 + fl;
	}
	/* ENCODED_LEN counts the terminating NUL. */
	if (sodium_base64_ENCODED_LEN(len + CURSOR_MAC_LEN,
	    sodium_base64_VARIANT_URLSAFE_NO_PADDING) - 1 > CURSOR_MAX_LEN)
		return NULL;

	buf = arena_alloc(a, len + CURSOR_MAC_LEN);
	buf[0] = CURSOR_VERSION;
	buf[1] = (unsigned char)n;
	off = CURSOR_HDR_LEN;
	for (i = 0; i < n; i++) {
		fl = strlen(fields[i]);
		buf[off++] = (unsigned char)(fl >> 8);
		buf[off++] = (unsigned char)(fl & 0xff);
		memcpy(buf + off, fields[i], fl);
		off += fl;
	}
	cursor_mac(key, scope, buf, len, buf + len);
	s = crypto_b64url_encode(a, buf, len + CURSOR_MAC_LEN);
	sodium_memzero(buf, len + CURSOR_MAC_LEN);
	return s;
}

/*
 * Decode and verify a cursor. 0 with *fields (an arena array of *n arena
 * strings, NULL-terminated) on success; -1 with *fields NULL and *n 0 on
 * any malformation, wrong key, wrong scope or tampering.
 */
int
cursor_decode(struct arena *a, const unsigned char key[32], const char *scope,
    const char *cursor, char ***fields, size_t *n)
{
	unsigned char	 mac[CURSOR_MAC_LEN];
	unsigned char	*buf;
	size_t		 len, plen, off, cnt, fl, i;
	char		**out;

	*fields = NULL;
	*n = 0;
	if (cursor == NULL ||
	    strnlen(cursor, CURSOR_MAX_LEN + 1) > CURSOR_MAX_LEN)
		return -1;
	if (scope == NULL)
		scope = "";
	if (crypto_b64url_decode(a, cursor, &buf, &len) != 0)
		return -1;
	if (len < CURSOR_HDR_LEN + CURSOR_MAC_LEN)
		return -1;
	plen = len - CURSOR_MAC_LEN;
	cursor_mac(key, scope, buf, plen, mac);
	if (!crypto_ct_equal(mac, buf + plen, CURSOR_MAC_LEN))
		return -1;

	/* Authentic from here on; still parse defensively. */
	if (buf[0] != CURSOR_VERSION)
		return -1;
	if ((cnt = buf[1]) > CURSOR_MAX_FIELDS)
		return -1;
	out = arena_alloc(a, (cnt + 1) * sizeof(*out));
	off = CURSOR_HDR_LEN;
	for (i = 0; i < cnt; i++) {
		if (plen - off < 2)
			return -1;
		fl = (size_t)buf[off] << 8 | buf[off + 1];
		off += 2;
		if (plen - off < fl)
			return -1;
		if (memchr(buf + off, '\0', fl) != NULL)
			return -1;
		out[i] = arena_memdup(a, buf + off, fl);
		off += fl;
	}
	if (off != plen)
		return -1;
	*fields = out;
	*n = cnt;
	return 0;
}

static const char *
keyset_scope(struct req *r, const char *list)
{
	return arena_printf(r->arena, "%s/%s/%s", list, r->client_id, r->env);
}

int
cursor_keyset_or_reply(struct req *r, const char *list, const char *prefix,
    const char *cursor, const char **at, const char **id)
{
	char **fields;
	size_t nf;

	if (cursor == NULL)
		return 0;
	if (cursor_decode(r->arena, r->cfg->cursor_key, keyset_scope(r, list), cursor,
	    &fields, &nf) != 0 || nf != 2 || !validate_format(VF_DATETIME, fields[0]) ||
	    !crypto_id_valid(fields[1], prefix, 0))
		return api_error(r, 400, ERR_INVALID_CURSOR,
		    "pass next_cursor from the previous page as it is",
		    "the cursor is malformed or was not issued for this list");
	*at = fields[0];
	*id = fields[1];
	return 0;
}

void
cursor_keyset_next(struct req *r, struct json_object *out, const char *list,
    const char *at, const char *id)
{
	const char *pos[2] = { at, id };

	if (at == NULL) {
		json_set_null(out, "next_cursor");
		return;
	}
	json_set_str(out, "next_cursor", cursor_encode(r->arena, r->cfg->cursor_key,
	    keyset_scope(r, list), pos, 2));
}
