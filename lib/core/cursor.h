#ifndef BDS_CURSOR_H
#define BDS_CURSOR_H
/*
 * Opaque keyset cursors: base64url of (version, fields) followed by a MAC
 * keyed by a server key and bound to a scope (list name, tenant, filters),
 * so a cursor made for one list, tenant or filter set never opens another.
 *
 * And the one list writer: a list declares itself once (struct
 * cursor_list: scope, shape, default page size); its handler opens the
 * page (cursor_page_open), runs its statement with pg.limit1 and answers
 * with cursor_page_reply.
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
 * A keyset position of a timestamp column (SQL): exact to the microsecond
 * PostgreSQL keeps, in UTC, and sorting as text as the instants do.
 */
#define CURSOR_POS(col) \
	"to_char(" col " AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"')"

/*
 * Page sizes. SPEC "Limits": default 100, min 1, max 500 for the list
 * endpoints; a list whose page size the spec names otherwise declares its
 * own pair beside its handler. CURSOR_LIMIT_FIELD is the `limit` query
 * field of a list whose largest page is max (core/validate.h).
 */
#define CURSOR_LIMIT_DEFAULT	100
#define CURSOR_LIMIT_MAX	500
#define CURSOR_LIMIT_FIELD(max) { "limit", NULL, VT_INT, 0, 1, (max) }

/* The members of a page, in this order. */
enum cursor_shape {
	CURSOR_NAMED,		/* {<key>: [items], has_more, next_cursor} */
	CURSOR_OBJECT_LIST,	/* {object: "list", <key>: [items], has_more, next_cursor} */
	CURSOR_COUNTED,		/* {<key>: [items], has_more, next_cursor, total_count} */
	CURSOR_TOTALLED,	/* {<key>: [items], total, limit, next_cursor, has_more} */
	CURSOR_DELTA,		/* {<key>: {<the items' members>, next_cursor, has_more}} */
	CURSOR__MAX
};

/* struct cursor_list flags */
#define CURSOR_TENANT	0x01u	/* bound to the credential's client and environment */
#define CURSOR_KEYSET	0x02u	/* a position is (CURSOR_POS of a timestamp, id); the
				 * first page starts after every one */

struct pg_result;
/* A row of a page as its item, arena-owned (the page takes a reference of
 * its own), or NULL: a failure. */
typedef struct json_object *(*cursor_item_fn)(struct req *, struct pg_result *, int row);

/*
 * One list, declared beside its handler: what its cursors are bound to,
 * how its page is written and its default page size.
 */
struct cursor_list {
	const char		*name;		/* first in every scope */
	unsigned		 flags;		/* CURSOR_TENANT, CURSOR_KEYSET */
	enum cursor_shape	 shape;
	const char		*key;		/* the member holding the items */
	long long		 limit;		/* the page without `limit` */
	/* A position: npos fields (CURSOR_KEYSET: 2; 0: any, the handler
	 * checks them), the last an id of prefix (NULL: unchecked), read
	 * from a row's columns cols. A row whose last position column is
	 * NULL is no item: the one row a statement returns for an empty page
	 * (to carry total_col). */
	size_t			 npos;
	const char		*prefix;
	int			 cols[CURSOR_MAX_FIELDS];
	int			 total_col;	/* CURSOR_COUNTED, CURSOR_TOTALLED */
	/* a row's item: item(), or the JSON text of json_col as it is */
	cursor_item_fn		 item;
	int			 json_col;
	/* the 400 INVALID_CURSOR's hint and message; NULL: "as it is" */
	const char		*hint, *message;
};

/* One page of a list in a request (cursor_page_open). */
struct cursor_page {
	const struct cursor_list *list;
	const char		*scope;
	long long		 limit;		/* the page size */
	const char		*limit1;	/* limit + 1 as text: the statement's LIMIT */
	/* where the page starts: the cursor's fields, NULL past npos; without
	 * a cursor NULL, or for CURSOR_KEYSET ("infinity", "<prefix>_~") */
	const char		*pos[CURSOR_MAX_FIELDS];
	size_t			 npos;		/* fields the cursor held; 0: none */
	/* the answer (cursor_page_reply fills them from rows) */
	struct json_object	*items;
	int			 more;
	const char		*next;		/* next_cursor; NULL: null */
	long long		 total;
};

/*
 * What a cursor of list is bound to, for r: the list's name, the
 * credential's client and environment (CURSOR_TENANT), then the n filter
 * values as the request has them (NULL: absent), "/"-separated, each
 * escaped ("%", "/" and a leading "-" as %XX; absent "-") so no two
 * different inputs spell one scope. Arena string.
 */
const char *cursor_scope(struct req *, const struct cursor_list *,
	    const char *const *filters, size_t n);

/*
 * Begin a page of list for r under the n filters (cursor_scope): the
 * page size (`limit` of r->query, else list->limit) and where the page
 * starts (`cursor` of r->query, opened and checked as the list says).
 * 0 with *pg set, or the 400 INVALID_CURSOR written (cursor_invalid).
 */
int	 cursor_page_open(struct req *, const struct cursor_list *,
	    const char *const *filters, size_t n, struct cursor_page *);
/* The 400 INVALID_CURSOR of list: its status. */
int	 cursor_invalid(struct req *, const struct cursor_list *);
/* Set pg->next to the cursor of position fields (n of them) in pg's scope. */
void	 cursor_page_next(struct req *, struct cursor_page *, const char *const *fields,
	    size_t n);
/*
 * Write a page into out in its list's shape; 200. With res (a statement's
 * up to limit + 1 rows): the items, more, next (the position of the
 * page's last row when there is more) and total come from it, and a row
 * whose item fails is the status of api_db_error. Without res: as the
 * caller set pg->items (an arena array; CURSOR_DELTA: an object), more,
 * next and total.
 */
int	 cursor_page_reply(struct req *, struct json_object *out, struct cursor_page *,
	    struct pg_result *res);

#endif
