#ifndef BDS_JSON_H
#define BDS_JSON_H
/*
 * json-c with arena ownership: objects made here are released at the
 * arena's reset, so handlers never call json_object_put.
 */
#include <stddef.h>
#include <stdint.h>
#include <json-c/json.h>

struct arena;

#define JSON_MAX_DEPTH 32

/* A new empty object/array owned by the arena. */
struct json_object *json_obj(struct arena *);
struct json_object *json_arr(struct arena *);
/*
 * A value that serialises as the JSON text given, verbatim (json-c's
 * per-object serializer): an entity PostgreSQL built goes out without a
 * parse and a second print. The text must be one valid JSON value and
 * must live until the answer is written (an arena string or a PGresult
 * value). Owned by the arena; add it to a parent with
 * json_object_get(), or make it the whole answer.
 */
struct json_object *json_raw(struct arena *, const char *text, size_t len);
/*
 * o's compact text, not copied: a json_raw value's own text (no print at
 * all: a bill GET's whole answer), else json-c's print, which lives inside
 * o until the arena's reset.
 */
const char *json_text(struct json_object *o, size_t *len);
/* Take ownership of o (put at reset); returns o. */
struct json_object *json_own(struct arena *, struct json_object *o);

/*
 * Parse a request body strictly: one JSON value, no trailing bytes, valid
 * UTF-8, depth <= JSON_MAX_DEPTH, strings in double quotes, no key twice in
 * one object (at any depth; json-c would keep the last silently). NULL on
 * failure with *why set to a short reason (an arena string naming the key
 * for a duplicate); NULL with *why NULL for the JSON value null. The result
 * is owned by the arena.
 */
struct json_object *json_parse(struct arena *, const char *, size_t, const char **why);

/* Setters that add a new child (the parent owns it). NULL string -> null. */
void	 json_set_str(struct json_object *, const char *key, const char *val);
void	 json_set_int(struct json_object *, const char *key, int64_t val);
void	 json_set_bool(struct json_object *, const char *key, int val);
void	 json_set_null(struct json_object *, const char *key);
/* Add child (ownership moves to the parent). */
void	 json_set(struct json_object *, const char *key, struct json_object *child);

/* Copy every member of src into dst (references taken; dst's same keys
 * replaced): a handler that built an object elsewhere fills out with it. */
void	 json_merge(struct json_object *dst, struct json_object *src);

/*
 * An entity's members in the API's order: "id" and "object" first (those
 * present), the others after them in their own order. A stored entity
 * read back from jsonb has its keys sorted ("id", "type", "amount",
 * "object", ...). Returns a new object holding references to o's values
 * (the caller owns it), or o itself with a new reference when it is no
 * object or already in order.
 */
struct json_object *json_entity_order(struct json_object *o);

/* Getters on a validated object: NULL/default when absent or null. */
const char *json_get_str(struct json_object *, const char *key);
int64_t	 json_get_int(struct json_object *, const char *key, int64_t dflt);
int	 json_get_bool(struct json_object *, const char *key, int dflt);

/*
 * Copy the JSON text src[0..len) to dst without the whitespace outside
 * strings (space, tab, CR, LF between tokens), in one pass: PostgreSQL's
 * {"a" : 1, "b": [1, 2]} becomes {"a":1,"b":[1,2]}. Strings are copied
 * byte for byte, escapes included. Not a validator: text that is not JSON
 * is copied by the same rule (an unterminated string to its end), never
 * reading past len. dst holds at least len bytes (it may be src itself);
 * returns the length written (no NUL added).
 */
size_t	 json_compact(char *dst, const char *src, size_t len);
/* json_raw of text's compact copy (arena), as a response sends it. */
struct json_object *json_raw_compact(struct arena *, const char *text, size_t len);

/* Serialise compactly (no slash escaping); the string is arena-owned. */
const char *json_dump(struct arena *, struct json_object *, size_t *len);

/*
 * One canonical text per value, whatever text it was parsed from: members
 * sorted by key (bytewise, i.e. by code point), no whitespace, strings
 * escaped one way, integers in decimal, other numbers by value (%.17g).
 * Two bodies that mean the same JSON give the same text (an
 * Idempotency-Key compares it). NULL is "null". Arena-owned.
 */
const char *json_canonical(struct arena *, struct json_object *, size_t *len);

#endif
