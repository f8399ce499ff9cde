/* json-c objects owned by the request arena. */
#include <stdlib.h>
#include <string.h>

#include "core/arena.h"
#include "core/json.h"
#include "core/validate.h"

static void
json_put_cb(void *o)
{
	json_object_put(o);
}

struct json_object *
json_own(struct arena *a, struct json_object *o)
{
	if (o != NULL)
		arena_defer(a, json_put_cb, o);
	return o;
}

struct json_object *
json_obj(struct arena *a)
{
	return json_own(a, json_object_new_object());
}

/* tag: &raw_tag, which tells a json_raw value from any other object. */
struct json_raw_text { const char *tag; const char *text; size_t len; };
static const char raw_tag[] = "raw";

static int
raw_print(struct json_object *o, struct printbuf *pb, int level, int flags)
{
	const struct json_raw_text *t = json_object_get_userdata(o);

	(void)level;
	(void)flags;
	return printbuf_memappend(pb, t->text, (int)t->len);
}

struct json_object *
json_raw(struct arena *a, const char *text, size_t len)
{
	struct json_raw_text *t = arena_alloc(a, sizeof(*t));
	struct json_object *o = json_object_new_object();

	t->tag = raw_tag;
	t->text = text;
	t->len = len;
	json_object_set_serializer(o, raw_print, t, NULL);
	return json_own(a, o);
}

size_t
json_compact(char *dst, const char *src, size_t len)
{
	size_t i = 0, n = 0;

	while (i < len) {
		char c = src[i++];

		if (c == ' ' || c == '\n' || c == '\t' || c == '\r')
			continue;
		dst[n++] = c;
		if (c != '"')
			continue;
		/* a string: verbatim to its closing quote (an escape's next byte
		 * is never one) */
		while (i < len) {
			c = src[i++];
			dst[n++] = c;
			if (c == '"')
				break;
			if (c == '\\' && i < len)
				dst[n++] = src[i++];
		}
	}
	return n;
}

struct json_object *
json_raw_compact(struct arena *a, const char *text, size_t len)
{
	char *t = arena_alloc(a, len + 1);
	size_t n = json_compact(t, text, len);

	t[n] = '\0';
	return json_raw(a, t, n);
}

const char *
json_text(struct json_object *o, size_t *len)
{
	const struct json_raw_text *t = NULL;
	size_t n = 0;
	const char *s;

	/* Only json_raw sets an object's userdata (json-c uses it for
	 * doubles alone), and its own carries the tag. */
	if (json_object_is_type(o, json_type_object))
		t = json_object_get_userdata(o);
	if (t != NULL && t->tag == raw_tag) {
		*len = t->len;
		return t->text;
	}
	s = json_object_to_json_string_length(o,
	    JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE, &n);
	*len = n;
	return s;
}

struct json_object *
json_arr(struct arena *a)
{
	return json_own(a, json_object_new_array());
}

/* json-c accepts 'single-quoted' strings even in strict mode; JSON does not. */
static int
has_single_quote(const char *s, size_t len)
{
	int in_str = 0;

	for (size_t i = 0; i < len; i++) {
		if (in_str) {
			if (s[i] == '\\')
				i++;
			else if (s[i] == '"')
				in_str = 0;
		} else if (s[i] == '"') {
			in_str = 1;
		} else if (s[i] == '\'') {
			return 1;
		}
	}
	return 0;
}

/* The end of the string starting at s[i] == '"' (index of the closing quote). */
static size_t
string_end(const char *s, size_t len, size_t i)
{
	for (i++; i < len && s[i] != '"'; i++)
		if (s[i] == '\\')
			i++;
	return i;
}

/* A key as its decoded text: escapes resolved by json-c itself. */
static const char *
key_text(struct arena *a, const char *s, size_t qlen, size_t *klen)
{
	struct json_object *k;
	const char *t;

	if (memchr(s, '\\', qlen) == NULL) {
		*klen = qlen - 2;
		return s + 1;
	}
	if ((k = json_tokener_parse(arena_strndup(a, s, qlen))) == NULL) {
		*klen = qlen - 2;
		return s + 1;
	}
	*klen = (size_t)json_object_get_string_len(k);
	t = arena_memdup(a, json_object_get_string(k), *klen);
	json_object_put(k);
	return t;
}

struct seen_key {
	size_t		 obj;	/* which object (1-based ordinal of its '{'); 0 = free */
	const char	*key;
	size_t		 klen;
};

/*
 * The first key that appears twice in one object of the (well-formed) JSON
 * text s, or NULL. json-c keeps the last value silently. Linear: one pass,
 * one open-addressing table of (object, key) for the whole text.
 */
static const char *
duplicate_key(struct arena *a, const char *s, size_t len)
{
	struct { int obj; int want_key; size_t id; } stack[JSON_MAX_DEPTH + 2];
	struct seen_key *tab;
	size_t nq = 0, cap = 16, objs = 0;
	int depth = -1;

	for (size_t i = 0; i < len; i++)
		nq += s[i] == '"';
	while (cap < nq + 16)	/* at most nq / 2 keys: load factor <= 1/2 */
		cap <<= 1;
	tab = arena_alloc(a, cap * sizeof(*tab));
	memset(tab, 0, cap * sizeof(*tab));
	for (size_t i = 0; i < len; i++) {
		switch (s[i]) {
		case '{':
		case '[':
			if (depth + 1 >= (int)(sizeof(stack) / sizeof(stack[0])))
				return NULL;	/* json-c refused deeper already */
			depth++;
			stack[depth].obj = s[i] == '{';
			stack[depth].want_key = s[i] == '{';
			stack[depth].id = s[i] == '{' ? ++objs : 0;
			break;
		case '}':
		case ']':
			depth--;
			break;
		case ',':
			if (depth >= 0 && stack[depth].obj)
				stack[depth].want_key = 1;
			break;
		case '"': {
			size_t e = string_end(s, len, i), klen, h;
			const char *k;

			if (depth >= 0 && stack[depth].obj && stack[depth].want_key) {
				stack[depth].want_key = 0;
				k = key_text(a, s + i, e - i + 1, &klen);
				h = 2166136261u ^ stack[depth].id;
				for (size_t j = 0; j < klen; j++)
					h = (h ^ (unsigned char)k[j]) * 16777619u;
				for (h &= cap - 1; tab[h].obj != 0; h = (h + 1) & (cap - 1))
					if (tab[h].obj == stack[depth].id && tab[h].klen == klen &&
					    memcmp(tab[h].key, k, klen) == 0)
						return arena_strndup(a, k, klen);
				tab[h].obj = stack[depth].id;
				tab[h].key = k;
				tab[h].klen = klen;
			}
			i = e;
			break;
		}
		default:
			break;
		}
	}
	return NULL;
}

struct json_object *
json_parse(struct arena *a, const char *s, size_t len, const char **why)
{
	struct json_tokener *tok;
	struct json_object *o;
	enum json_tokener_error jerr;
	size_t end;

	*why = NULL;
	/* json-c's own check lets overlong forms and surrogates through. */
	if (!validate_utf8(s, len)) {
		*why = "invalid UTF-8";
		return NULL;
	}
	if (len > INT32_MAX) {
		*why = "body too large";
		return NULL;
	}
	if (has_single_quote(s, len)) {
		*why = "strings must be in double quotes";
		return NULL;
	}
	if ((tok = json_tokener_new_ex(JSON_MAX_DEPTH)) == NULL) {
		*why = "out of memory";
		return NULL;
	}
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
	o = json_tokener_parse_ex(tok, s, (int)len);
	jerr = json_tokener_get_error(tok);
	end = json_tokener_get_parse_end(tok);
	if (o == NULL && jerr == json_tokener_continue && end == len) {
		/* A bare number ("0") ends only at the end of input: say so. */
		o = json_tokener_parse_ex(tok, "", 1);
		jerr = json_tokener_get_error(tok);
	}
	if (jerr == json_tokener_success) {
		/* Only whitespace may follow the value. */
		for (size_t i = end; i < len && *why == NULL; i++)
			if (memchr(" \t\r\n", s[i], 4) == NULL)
				*why = "unexpected data after the JSON value";
	} else if (jerr == json_tokener_error_parse_utf8_string) {
		*why = "invalid UTF-8";
	} else if (jerr == json_tokener_error_depth) {
		*why = "JSON nested too deeply";
	} else if (jerr == json_tokener_continue) {
		*why = "truncated JSON";
	} else {
		*why = json_tokener_error_desc(jerr);
	}
	json_tokener_free(tok);
	if (*why == NULL && memchr(s, '{', len) != NULL) {
		const char *dup = duplicate_key(a, s, len);

		if (dup != NULL) {
			size_t n = strlen(dup);

			if (n > 64)	/* cut long keys at a character boundary */
				for (n = 64; n > 0 && ((unsigned char)dup[n] & 0xc0) == 0x80; n--)
					;
			*why = arena_printf(a, "duplicate key \"%.*s\"", (int)n, dup);
		}
	}
	if (*why != NULL) {
		json_object_put(o);
		return NULL;
	}
	return json_own(a, o);
}

void
json_set(struct json_object *o, const char *key, struct json_object *child)
{
	json_object_object_add(o, key, child);
}

void
json_set_str(struct json_object *o, const char *key, const char *val)
{
	json_object_object_add(o, key, val ? json_object_new_string(val) : NULL);
}

void
json_set_int(struct json_object *o, const char *key, int64_t val)
{
	json_object_object_add(o, key, json_object_new_int64(val));
}

void
json_set_bool(struct json_object *o, const char *key, int val)
{
	json_object_object_add(o, key, json_object_new_boolean(val != 0));
}

void
json_set_null(struct json_object *o, const char *key)
{
	json_object_object_add(o, key, NULL);
}

/* 1 when o's first members are its "id" then its "object" (those present). */
static int
entity_in_order(struct json_object *o)
{
	const char *want[2];
	size_t n = 0, at = 0;

	if (json_object_object_get_ex(o, "id", NULL))
		want[n++] = "id";
	if (json_object_object_get_ex(o, "object", NULL))
		want[n++] = "object";
	json_object_object_foreach(o, k, v) {
		(void)v;
		if (at == n)
			break;
		if (strcmp(k, want[at++]) != 0)
			return 0;
	}
	return 1;
}

struct json_object *
json_entity_order(struct json_object *o)
{
	static const char *const first[] = { "id", "object" };
	struct json_object *n, *v;

	if (o == NULL || !json_object_is_type(o, json_type_object) || entity_in_order(o))
		return json_object_get(o);
	n = json_object_new_object();
	for (size_t i = 0; i < sizeof(first) / sizeof(first[0]); i++)
		if (json_object_object_get_ex(o, first[i], &v))
			json_object_object_add(n, first[i], json_object_get(v));
	json_object_object_foreach(o, k, m)
		if (strcmp(k, "id") != 0 && strcmp(k, "object") != 0)
			json_object_object_add(n, k, json_object_get(m));
	return n;
}

const char *
json_get_str(struct json_object *o, const char *key)
{
	struct json_object *v;

	if (o == NULL || !json_object_object_get_ex(o, key, &v) ||
	    !json_object_is_type(v, json_type_string))
		return NULL;
	return json_object_get_string(v);
}

int64_t
json_get_int(struct json_object *o, const char *key, int64_t dflt)
{
	struct json_object *v;

	if (o == NULL || !json_object_object_get_ex(o, key, &v) ||
	    !json_object_is_type(v, json_type_int))
		return dflt;
	return json_object_get_int64(v);
}

int
json_get_bool(struct json_object *o, const char *key, int dflt)
{
	struct json_object *v;

	if (o == NULL || !json_object_object_get_ex(o, key, &v) ||
	    !json_object_is_type(v, json_type_boolean))
		return dflt;
	return json_object_get_boolean(v);
}

const char *
json_dump(struct arena *a, struct json_object *o, size_t *len)
{
	size_t n = 0;
	const char *s;

	s = json_text(o, &n);
	if (len != NULL)
		*len = n;
	/* The string lives inside o; copy so it outlives any later change. */
	return arena_memdup(a, s, n);
}

void
json_merge(struct json_object *dst, struct json_object *src)
{
	if (dst == NULL || src == NULL || !json_object_is_type(src, json_type_object))
		return;
	json_object_object_foreach(src, k, v)
		json_object_object_add(dst, k, json_object_get(v));
}

/* A canonical piece: its text and length (arena). */
struct canon { const char *s; size_t n; };

static int
canon_key_cmp(const void *x, const void *y)
{
	return strcmp(*(const char *const *)x, *(const char *const *)y);
}

/* One scalar's compact JSON text; a string escaped as json-c prints it. */
static struct canon
canon_scalar(struct arena *a, struct json_object *o)
{
	struct canon c;

	switch (json_object_get_type(o)) {
	case json_type_null:
		c.s = "null";
		break;
	case json_type_boolean:
		c.s = json_object_get_boolean(o) ? "true" : "false";
		break;
	case json_type_double:
		/* the value, not the text it was written as (1.50 and 1.5 agree) */
		c.s = arena_printf(a, "%.17g", json_object_get_double(o));
		break;
	default:
		/* strings; integers from their value, uint64 beyond INT64_MAX
		 * too (json_object_get_int64 would clamp them into one) */
		c.s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
		    JSON_C_TO_STRING_NOSLASHESCAPE);
		break;
	}
	c.n = strlen(c.s);
	return c;
}

/* Join n pieces between open and close, separated by commas. */
static struct canon
canon_join(struct arena *a, char open, const struct canon *v, size_t n, char close)
{
	struct canon c;
	size_t len = 2 + (n > 0 ? n - 1 : 0), at = 0;
	char *s;

	for (size_t i = 0; i < n; i++)
		len += v[i].n;
	s = arena_alloc(a, len + 1);
	s[at++] = open;
	for (size_t i = 0; i < n; i++) {
		if (i > 0)
			s[at++] = ',';
		memcpy(s + at, v[i].s, v[i].n);
		at += v[i].n;
	}
	s[at++] = close;
	s[at] = '\0';
	c.s = s;
	c.n = at;
	return c;
}

static struct canon
canon_value(struct arena *a, struct json_object *o)
{
	struct canon *v, key, val;
	const char **keys;
	size_t n = 0, i = 0;

	if (json_object_is_type(o, json_type_array)) {
		n = json_object_array_length(o);
		v = arena_alloc(a, (n ? n : 1) * sizeof(*v));
		for (i = 0; i < n; i++)
			v[i] = canon_value(a, json_object_array_get_idx(o, i));
		return canon_join(a, '[', v, n, ']');
	}
	if (!json_object_is_type(o, json_type_object))
		return canon_scalar(a, o);
	n = (size_t)json_object_object_length(o);
	keys = arena_alloc(a, (n ? n : 1) * sizeof(*keys));
	json_object_object_foreach(o, k, unused) {
		(void)unused;
		keys[i++] = k;
	}
	/* byte order of UTF-8 is code point order; keys are unique (json_parse) */
	qsort(keys, n, sizeof(*keys), canon_key_cmp);
	v = arena_alloc(a, (n ? n : 1) * sizeof(*v));
	for (i = 0; i < n; i++) {
		struct json_object *ko = json_own(a, json_object_new_string(keys[i]));
		struct json_object *m = NULL;
		char *s;

		json_object_object_get_ex(o, keys[i], &m);
		key = canon_scalar(a, ko);
		val = canon_value(a, m);
		s = arena_alloc(a, key.n + 1 + val.n + 1);
		memcpy(s, key.s, key.n);
		s[key.n] = ':';
		memcpy(s + key.n + 1, val.s, val.n);
		s[key.n + 1 + val.n] = '\0';
		v[i].s = s;
		v[i].n = key.n + 1 + val.n;
	}
	return canon_join(a, '{', v, n, '}');
}

const char *
json_canonical(struct arena *a, struct json_object *o, size_t *len)
{
	struct canon c = canon_value(a, o);

	if (len != NULL)
		*len = c.n;
	return c.s;
}
