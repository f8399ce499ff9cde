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

/* Getters on a validated object: NULL/default when absent or null. */
const char *json_get_str(struct json_object *, const char *key);
int64_t	 json_get_int(struct json_object *, const char *key, int64_t dflt);
int	 json_get_bool(struct json_object *, const char *key, int dflt);

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
