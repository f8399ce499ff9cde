#ifndef BDS_CURSOR_H
#define BDS_CURSOR_H
/*
 * Opaque keyset cursors: base64url of (version, fields) followed by a MAC
 * keyed by a server key and bound to a scope (list name + tenant), so a
 * cursor made for one list or tenant never opens another.
 */
#include <stddef.h>

struct arena;

#define CURSOR_MAX_FIELDS 8
#define CURSOR_MAX_LEN 1024	/* longest accepted cursor string */

/* Encode n (<= CURSOR_MAX_FIELDS) strings. Returns an arena string. */
char	*cursor_encode(struct arena *, const unsigned char key[32],
	    const char *scope, const char *const *fields, size_t n);
/* Decode and verify. 0 ok with *fields (arena) and *n set; -1 on any
 * malformation, wrong scope, tampering or wrong key. */
int	 cursor_decode(struct arena *, const unsigned char key[32],
	    const char *scope, const char *cursor, char ***fields, size_t *n);

#endif
