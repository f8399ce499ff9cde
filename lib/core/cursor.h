#ifndef BDS_CURSOR_H
#define BDS_CURSOR_H
/*
 * Opaque keyset cursors: base64url of (version, fields) followed by a MAC
 * keyed by a server key and bound to a scope (list name + tenant), so a
 * cursor made for one list or tenant never opens another.
 */
#include <stddef.h>

struct arena;
struct json_object;
struct req;

#define CURSOR_MAX_FIELDS 8
#define CURSOR_MAX_LEN 1024	/* longest accepted cursor string */

/*
 * The `cursor` query field of a list (core/validate.h): any text, no length
 * limit, so a cursor too long, truncated or tampered with is answered 400
 * INVALID_CURSOR by its decoder, never VALIDATION_ERROR. (A value that is
 * not text at all reaches it as "%": http_query_parse.)
 */
#define CURSOR_QUERY_FIELD { "cursor", NULL, VT_STRING, V_OPAQUE, 0, 0 }

/* Encode n (<= CURSOR_MAX_FIELDS) strings. Returns an arena string. */
char	*cursor_encode(struct arena *, const unsigned char key[32],
	    const char *scope, const char *const *fields, size_t n);
/* Decode and verify. 0 ok with *fields (arena) and *n set; -1 on any
 * malformation, wrong scope, tampering or wrong key. */
int	 cursor_decode(struct arena *, const unsigned char key[32],
	    const char *scope, const char *cursor, char ***fields, size_t *n);

/*
 * A tenant's list paged by (timestamp, id), as GET /v1/activity and
 * GET /v1/links are: the cursor is bound to "<list>/<client>/<environment>"
 * of the request's credential.
 *
 * cursor_keyset_or_reply: cursor NULL → 0, *at and *id untouched; else 0
 * with both set (arena), or the 400 INVALID_CURSOR already written when it
 * does not open here or its fields are not a timestamp and an id of prefix.
 * cursor_keyset_next: sets out's next_cursor to the position (at, id), or
 * to null when at is NULL (the last page).
 */
int	 cursor_keyset_or_reply(struct req *, const char *list, const char *prefix,
	    const char *cursor, const char **at, const char **id);
void	 cursor_keyset_next(struct req *, struct json_object *out, const char *list,
	    const char *at, const char *id);

#endif
