#ifndef BDS_BILLERS_CSV_H
#define BDS_BILLERS_CSV_H
/*
 * The catalog file (DOMAIN.md "Billers"): RFC 4180 CSV with a header row,
 * list fields separated by '|'. Pure code: a record reader and the row
 * check, no database, so both are unit-tested table-driven.
 */
#include <stddef.h>

struct arena;

#define BILLERS_CSV_MAX_FIELDS	32	/* a record with more is refused */
#define BILLERS_CSV_MAX_RECORD	16384	/* bytes of one record, quotes included */

/* A reader over a buffer (which may hold NULs: they are refused). */
struct billers_csv {
	const char	*p, *end;
	size_t		 line;		/* line the next record starts on (1-based) */
	size_t		 rec_line;	/* line the last record started on */
};

void	 billers_csv_init(struct billers_csv *, const char *buf, size_t len);
/*
 * The next record: 1 with *fields (arena strings) and *n, 0 at the end of
 * the input, -1 with *err (static) when the record is malformed (an
 * unterminated quote, a stray quote, a NUL, more than
 * BILLERS_CSV_MAX_FIELDS fields, longer than BILLERS_CSV_MAX_RECORD).
 * Empty lines are skipped. Line ends: LF or CRLF.
 */
int	 billers_csv_next(struct billers_csv *, struct arena *, char ***fields,
	    size_t *n, const char **err);

/* The columns, in header order. */
enum billers_csv_col {
	BC_ID, BC_NAME, BC_TYPE, BC_STATUS, BC_DOMAINS, BC_WEBSITE, BC_LOGIN_URL,
	BC_LOGO_URL, BC_COUNTRY, BC_CONNECTIVITY, BC_CONSENTS, BC_CAPABILITIES,
	BC_CONNECTOR, BC_BASE_URL, BC__MAX
};
extern const char *const billers_csv_header[BC__MAX];

/* The enums of the catalog, NULL-terminated. */
extern const char *const billers_types[];
extern const char *const billers_statuses[];
extern const char *const billers_connectivity_types[];
extern const char *const billers_consent_scopes[];
extern const char *const billers_capabilities[];	/* the 6 flags, entity order */

/* 1 when s is one of the NULL-terminated list, else 0. */
int	 billers_in(const char *const *list, const char *s);

/* 1 when the header record names exactly the columns in order, else 0. */
int	 billers_csv_header_ok(char *const *fields, size_t n);

/*
 * Check one data record. 0 ok: every field is valid, lists are rewritten
 * in place as PostgreSQL array literals ({a,b}) and empty optional fields
 * become NULL. -1 with *field (the column name) and *msg (static) naming
 * the first problem.
 */
int	 billers_csv_row_check(struct arena *, char **fields, size_t n,
	    const char **field, const char **msg);

/* A lower-case host name (labels of [a-z0-9-], not starting or ending with
 * '-', at least two labels, <= 253 characters): 1, else 0. */
int	 billers_host_ok(const char *);

#endif
