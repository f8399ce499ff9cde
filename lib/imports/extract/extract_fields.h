#ifndef BDS_EXTRACT_FIELDS_H
#define BDS_EXTRACT_FIELDS_H
/*
 * The field rules' own pieces (extract_fields*.c), shared between their
 * files and nothing else: text clean-up, amounts, dates, currencies. Every
 * function is pure and bounded by its arguments' lengths.
 */
#include <stddef.h>

struct json_object;

#define XF_TEXT_MAX	480	/* bytes of a line the rules read */

/* Decimal separator of a document's amounts. */
enum xf_style { XF_STYLE_DOT, XF_STYLE_COMMA };
/* Day/month order of a document's numeric dates. */
enum xf_order { XF_ORDER_MDY, XF_ORDER_DMY };

/*
 * src (n bytes, any bytes) as clean UTF-8 into dst (size XF_TEXT_MAX + 1):
 * invalid sequences become '?', controls and Unicode spaces a space, dashes
 * and the minus sign '-', runs of spaces one, trimmed; cut on a character
 * boundary. Returns the length.
 */
size_t	 xf_clean(char *dst, const char *src, size_t n);

/* A currency marker (symbol or ISO code) starting at s[i], length *len, or
 * NULL. strict: ISO codes only when upper case. */
const char *xf_currency_at(const char *s, size_t i, size_t n, size_t *len);

/* An amount as printed. */
struct xf_amount {
	long long	 minor;		/* at exp */
	int		 exp;
	char		 cur[4];	/* the marker's code beside it, or "" */
	size_t		 start, end;	/* its bytes in the text, markers and sign included */
	int		 has_frac;	/* printed with a fractional part */
	int		 grouped;	/* printed with thousands separators */
};

/*
 * The first amount in s[from, n) as money is printed there: digits with
 * the style's grouping and decimal separator, an optional currency marker
 * before or after, negative as "-12.00", "(12.00)", "12.00-", "12.00 CR".
 * exp: the document currency's exponent (a fraction of more digits is not
 * an amount of it). loose: accept a bare integer; otherwise the amount
 * needs a fraction or a marker. ocr: read O/o as 0, l/I as 1 and S as 5
 * between digits. 1 and *a, or 0.
 */
int	 xf_amount_find(const char *s, size_t n, size_t from, enum xf_style style,
	    int exp, int loose, int ocr, struct xf_amount *a);

/* A date as printed. */
struct xf_date {
	int		 y, m, d;
	int		 ambiguous;	/* numeric, both parts <= 12: order decided by the document */
	int		 a, b;		/* the two numbers of a numeric date, as printed */
	size_t		 start, end;
};

/*
 * The first date in s[from, n): 2026-12-04, 12/04/2026 and 04/12/2026 (by
 * order when both parts are 12 or less), 04.12.2026, 4 Dec 2026, 4th of
 * December 2026, December 4, 2026, 04-Dec-26, Dec. 4 '26; month names in
 * English, German, French, Spanish, Italian and Dutch. 1 and *dt, or 0.
 */
int	 xf_date_find(const char *s, size_t n, size_t from, enum xf_order order,
	    struct xf_date *dt);
/* y-m-d is a real date of 1900..2199. */
int	 xf_date_valid(int y, int m, int d);

/*
 * draft's "checks" recomputed from its fields (ex_fields: first, then a
 * passed balance check also raises an unreviewed total's confidence). A
 * failed check lowers an unreviewed total_amount's confidence below
 * EX_READY_CONFIDENCE; against a reviewed total it is reported skipped.
 * 0, or -1 out of memory.
 */
int	 xf_checks(struct json_object *draft, int first);

/* The reason ex_draft_ready reports, a static string. */
const char *xf_why(const char *prefix, const char *name);

#endif
