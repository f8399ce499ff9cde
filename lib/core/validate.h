#ifndef BDS_VALIDATE_H
#define BDS_VALIDATE_H
/*
 * Declared input. A body or a query string is checked against a table of
 * field specs and converted into a fresh json object holding only declared
 * fields, under their canonical names. Handlers read only that object.
 *
 * Every failure is collected (not only the first) as {field, code, message};
 * the field is a path such as "update.link_id" or "events[2]".
 */
#include <stddef.h>

struct arena;
struct json_object;
struct http_kv;

enum vtype {
	VT_STRING,
	VT_INT,		/* 64-bit integer; from a query string: decimal digits */
	VT_NUMBER,	/* integer or double */
	VT_BOOL,	/* from a query string: "true" or "false" */
	VT_OBJECT,	/* members in .fields */
	VT_ARRAY,	/* items of type .items; object items use .fields */
	VT_ANY,		/* any JSON value, unchecked */
	VT__MAX
};

enum vformat {
	VF_NONE,
	VF_EMAIL,	/* local@domain.tld, no spaces, <= 254 chars */
	VF_URL,		/* absolute http:// or https:// URL with a host */
	VF_HTTPS_URL,	/* absolute https:// URL with a host */
	VF_DATE,	/* YYYY-MM-DD, a real calendar date */
	VF_DATETIME,	/* ISO 8601 / RFC 3339 instant with Z or offset */
	VF_UUID,	/* canonical UUID */
	VF_DIGITS,	/* only 0-9 */
	VF_CURRENCY,	/* an active ISO 4217 code (core/money.h's table) */
	VF_PRINTABLE,	/* printable ASCII 0x20-0x7e only */
	VF_MONEY,	/* an amount as money is written: "12.50", "12"
			 * (money_amount_valid; the currency's own exponent
			 * is the handler's check, money_parse) */
	VF__MAX
};

/* flags */
#define V_REQUIRED	0x01u	/* absent -> "required" */
#define V_NULLABLE	0x02u	/* JSON null accepted (kept as null) */
#define V_OPAQUE	0x04u	/* a string of any length: the handler judges it
				 * (a cursor: what does not open is INVALID_CURSOR) */
#define V_UNIQUE	0x08u	/* an array of strings: an item twice ->
				 * "duplicate_item" */

struct verr {
	const char	*field;
	const char	*code;		/* required, invalid_type, too_short, too_long,
					 * out_of_range, invalid_enum, invalid_format,
					 * unknown_field, too_many_items, too_few_items,
					 * invalid_utf8, or a custom code */
	const char	*message;
};

struct verrs {
	struct verr	*v;
	size_t		 n, cap;
	const char	*hint;		/* what to do about the first unknown field
					 * (validate_suggest's name, else the
					 * accepted ones), or NULL */
};

/*
 * A custom check runs after the type, bound, enum and format checks passed.
 * It may replace *value (arena- or json-owned) to normalise it. Return 0 to
 * accept, or fill code/message (static or arena strings) and return -1.
 */
typedef int (*vcheck_fn)(struct arena *, struct json_object **value,
    const char **code, const char **message);

struct vfield {
	const char		*name;		/* canonical name */
	const char		*alias;		/* also accepted (camelCase/snake_case), or NULL */
	enum vtype		 type;
	unsigned		 flags;		/* V_REQUIRED, V_NULLABLE */
	long long		 min, max;	/* string: length in code points; array:
						 * item count; min applies when > 0, max
						 * when > 0, else the caps VALIDATE_STRING_MAX
						 * and VALIDATE_ARRAY_MAX. int/number: value;
						 * max applies when max > min (or min ==
						 * max != 0), min when that holds or min !=
						 * 0: {.min = 1} means ">= 1", {0, 0} none. */
	const char *const	*enumv;		/* NULL-terminated allowed strings, or NULL */
	enum vformat		 format;
	const struct vfield	*fields;	/* members of an object (or of object items);
						 * terminated by a {NULL} entry */
	enum vtype		 items;		/* item type of an array */
	vcheck_fn		 check;		/* per value (per item for arrays) */
};

#define VALIDATE_STRING_MAX	4096
#define VALIDATE_ARRAY_MAX	1000

/*
 * Validate a parsed JSON body against spec (terminated by {NULL}). in may be
 * NULL (no body): then only V_REQUIRED matters. A non-object body is one
 * error on field "" with code invalid_type. Unknown members are errors
 * (unknown_field). On success *out is a new object owned by the arena.
 * Returns 0 when errs gained nothing, else -1.
 */
int	 validate_body(struct arena *, const struct vfield *spec,
	    struct json_object *in, struct json_object **out, struct verrs *errs);

/*
 * Validate query parameters (strings; repeated keys -> error unless the
 * field is VT_ARRAY of strings). Unknown keys are errors, so "page" and
 * "page_size" are refused on every list. Same return as validate_body.
 */
int	 validate_query(struct arena *, const struct vfield *spec,
	    const struct http_kv *kv, size_t n, struct json_object **out,
	    struct verrs *errs);

/*
 * The declared name or alias of spec closest to an unknown key, or NULL when
 * none is close: the Damerau-Levenshtein distance (adjacent transpositions
 * count one) ignoring case, at most 1 for keys up to 4 characters, 2 up to
 * 8, else 3; a key equal to a name but for case, '_' and '-' (clientUserId,
 * client-user-id) is always close. Ties go to the table's first field.
 */
const char *validate_suggest(const struct vfield *spec, const char *key);
/* The edit distance validate_suggest uses (case-insensitive); SIZE_MAX for
 * a string over 64 bytes. */
size_t	 validate_distance(const char *, const char *);

/* Append one error (strings copied into the arena). */
void	 verrs_add(struct arena *, struct verrs *, const char *field,
	    const char *code, const char *fmt, ...)
	    __attribute__((format(printf, 5, 6)));

/* 1 when the n bytes are valid UTF-8 with no NUL, else 0. */
int	 validate_utf8(const char *, size_t);
/* A .check for a name people read: not only white space ("blank"), no
 * control characters ("control_character"). */
int	 validate_name(struct arena *, struct json_object **, const char **,
	    const char **);

/*
 * The JSON Schema (Draft 2020-12) of what validate_body accepts for spec:
 * types, required, bounds (string lengths in code points), enums, the
 * formats JSON Schema names, additionalProperties false; an alias is a
 * second property marked "x-alias-of", a field with its own check (which
 * may narrow the bounds) "x-check". A new object the caller puts.
 */
struct json_object *validate_schema(const struct vfield *spec);

/* Format checks, exposed for handlers and tests: 1 when s matches. */
int	 validate_format(enum vformat, const char *s);

#endif
