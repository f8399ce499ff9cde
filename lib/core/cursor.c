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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "core/arena.h"
#include "core/crypto.h"
#include "core/config.h"
#include "core/cursor.h"
#include "core/db.h"
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

/* s escaped into a scope part: "%", "/" and a leading "-" as %XX. */
static const char *
scope_escape(struct arena *a, const char *s)
{
	char *o, *q;

	q = o = arena_alloc(a, strlen(s) * 3 + 1);
	for (const char *c = s; *c != '\0'; c++) {
		if (*c == '%' || *c == '/' || (*c == '-' && c == s))
			q += sprintf(q, "%%%02X", (unsigned char)*c);
		else
			*q++ = *c;
	}
	*q = '\0';
	return o;
}

const char *
cursor_scope(struct req *r, const struct cursor_list *l, const char *const *filters,
    size_t n)
{
	const char *s = l->name;

	if (l->flags & CURSOR_TENANT)
		s = arena_printf(r->arena, "%s/%s/%s", s, r->client_id, r->env);
	for (size_t i = 0; i < n; i++)
		s = arena_printf(r->arena, "%s/%s", s, filters[i] == NULL ? "-" :
		    scope_escape(r->arena, filters[i]));
	return s;
}

int
cursor_invalid(struct req *r, const struct cursor_list *l)
{
	return api_error(r, 400, "INVALID_CURSOR",
	    l->hint != NULL ? l->hint : "pass next_cursor from the previous page as it is",
	    "%s", l->message != NULL ? l->message :
	    "the cursor is malformed or was not issued for this list");
}

/* The cursor's fields fit the list: 1, else 0. */
static int
fields_fit(const struct cursor_list *l, char **f, size_t n)
{
	size_t want = l->flags & CURSOR_KEYSET ? 2 : l->npos;

	if (want == 0)
		return 1;
	if (n != want)
		return 0;
	if ((l->flags & CURSOR_KEYSET) && !validate_format(VF_DATETIME, f[0]))
		return 0;
	return l->prefix == NULL || crypto_id_valid(f[n - 1], l->prefix, 0);
}

int
cursor_page_open(struct req *r, const struct cursor_list *l, const char *const *filters,
    size_t n, struct cursor_page *pg)
{
	const char *cursor = json_get_str(r->query, "cursor");
	char **f;
	size_t nf;

	memset(pg, 0, sizeof(*pg));
	pg->list = l;
	pg->scope = cursor_scope(r, l, filters, n);
	pg->limit = json_get_int(r->query, "limit", l->limit);
	pg->limit1 = arena_printf(r->arena, "%lld", pg->limit + 1);
	if (cursor == NULL) {
		if (l->flags & CURSOR_KEYSET) {
			pg->pos[0] = "infinity";
			/* "~" sorts after every character of a "<prefix>_<uuid>" */
			pg->pos[1] = arena_printf(r->arena, "%s_~", l->prefix);
		}
		return 0;
	}
	if (cursor_decode(r->arena, r->cfg->cursor_key, pg->scope, cursor, &f, &nf) != 0 ||
	    !fields_fit(l, f, nf))
		return cursor_invalid(r, l);
	for (size_t i = 0; i < nf; i++)
		pg->pos[i] = f[i];
	pg->npos = nf;
	return 0;
}

void
cursor_page_next(struct req *r, struct cursor_page *pg, const char *const *fields, size_t n)
{
	pg->next = cursor_encode(r->arena, r->cfg->cursor_key, pg->scope, fields, n);
}

/* The page from a statement's rows into pg; 0, or -1 when an item fails. */
static int
page_rows(struct req *r, struct cursor_page *pg, PGresult *res)
{
	const struct cursor_list *l = pg->list;
	size_t npos = l->flags & CURSOR_KEYSET ? 2 : l->npos;
	int idcol = npos > 0 ? l->cols[npos - 1] : -1, rows = PQntuples(res), n = 0, last = -1;
	struct json_object *o;

	pg->items = json_arr(r->arena);
	pg->more = 0;
	pg->next = NULL;
	for (int i = 0; i < rows; i++) {
		if (idcol >= 0 && PQgetisnull(res, i, idcol))
			continue;		/* an empty page's row */
		if (n++ == pg->limit) {
			pg->more = 1;
			break;
		}
		o = l->item != NULL ? l->item(r, res, i) : db_json_raw(r->arena, res, i,
		    l->json_col);
		if (o == NULL)
			return -1;
		json_object_array_add(pg->items, json_object_get(o));
		last = i;
	}
	if (pg->more && last >= 0 && npos > 0) {
		const char *pos[CURSOR_MAX_FIELDS];

		for (size_t k = 0; k < npos; k++)
			pos[k] = PQgetvalue(res, last, l->cols[k]);
		cursor_page_next(r, pg, pos, npos);
	}
	if ((l->shape == CURSOR_COUNTED || l->shape == CURSOR_TOTALLED) && rows > 0)
		pg->total = strtoll(PQgetvalue(res, 0, l->total_col), NULL, 10);
	return 0;
}

int
cursor_page_reply(struct req *r, struct json_object *out, struct cursor_page *pg,
    PGresult *res)
{
	const struct cursor_list *l = pg->list;
	struct json_object *items;

	if (res != NULL && page_rows(r, pg, res) != 0)
		return api_db_error(r);
	if ((items = pg->items) == NULL)
		items = l->shape == CURSOR_DELTA ? json_obj(r->arena) : json_arr(r->arena);
	switch (l->shape) {
	case CURSOR_OBJECT_LIST:
		json_set_str(out, "object", "list");
		/* FALLTHROUGH */
	case CURSOR_NAMED:
	case CURSOR_COUNTED:
		json_set(out, l->key, json_object_get(items));
		json_set_bool(out, "has_more", pg->more);
		json_set_str(out, "next_cursor", pg->next);
		if (l->shape == CURSOR_COUNTED)
			json_set_int(out, "total_count", pg->total);
		break;
	case CURSOR_TOTALLED:
		json_set(out, l->key, json_object_get(items));
		json_set_int(out, "total", pg->total);
		json_set_int(out, "limit", pg->limit);
		json_set_str(out, "next_cursor", pg->next);
		json_set_bool(out, "has_more", pg->more);
		break;
	case CURSOR_DELTA:
	case CURSOR__MAX:
		json_set_str(items, "next_cursor", pg->next);
		json_set_bool(items, "has_more", pg->more);
		json_set(out, l->key, json_object_get(items));
		break;
	}
	return 200;
}
