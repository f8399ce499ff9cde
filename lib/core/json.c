/* json-c objects owned by the request arena. */
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

	s = json_object_to_json_string_length(o,
	    JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE, &n);
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
