/*
 * Declared input: bodies and query strings checked against field-spec
 * tables and converted into a fresh object holding only declared fields.
 *
 * Ownership. The output tree holds its own references: scalars taken from
 * the input are shared with json_object_get(), objects and arrays are new.
 * A custom check that replaces a value keeps ownership of the replacement
 * (arena- or json-owned, as validate.h says); the output takes a reference
 * of its own. The top-level output is released at the arena's reset.
 *
 * Choices the header leaves open:
 *  - JSON null skips the type, bound, enum, format and custom checks: it is
 *    refused unless V_NULLABLE (VT_ANY accepts it always), and kept as null.
 *  - VT_OBJECT with .fields NULL accepts any object as it is.
 *  - For VT_ARRAY, .enumv, .format, .fields and .check apply to each item;
 *    min/max bound the item count.
 *  - One error per value: the first failed check is reported.
 *  - A member given under its alias is reported under the alias in errors
 *    (the client's own spelling); "required" and "duplicate_field" use the
 *    canonical name.
 *  - Query strings: VT_INT is an optional '-' and decimal digits, VT_NUMBER
 *    a JSON number, VT_BOOL "true" or "false"; VT_ANY stays a string and
 *    VT_OBJECT cannot be given. A VT_ARRAY of any scalar item type takes
 *    repeated keys, each item converted.
 */
#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <json-c/json.h>

#include "core/arena.h"
#include "core/crypto.h"
#include "core/http.h"
#include "core/money.h"
#include "core/validate.h"

/* Where a value sits, materialised as a string only for an error. */
struct vpath {
	const struct vpath	*up;
	const char		*name;	/* member, or NULL for an index */
	size_t			 idx;
};

struct vctx {
	struct arena		*a;
	struct verrs		*errs;
};

static int	 validate_value(struct vctx *, const struct vfield *,
		    struct json_object *, const struct vpath *,
		    struct json_object **);

static void
validate_put(void *o)
{
	json_object_put(o);
}

static char *
vpath_str(struct arena *a, const struct vpath *p)
{
	char	*up;

	if (p == NULL)
		return arena_strdup(a, "");
	up = vpath_str(a, p->up);
	if (p->name == NULL)
		return arena_printf(a, "%s[%zu]", up, p->idx);
	if (*up == '\0')
		return arena_strdup(a, p->name);
	return arena_printf(a, "%s.%s", up, p->name);
}

/* Append one error; field, code and the message are copied into the arena. */
void
verrs_add(struct arena *a, struct verrs *e, const char *field,
    const char *code, const char *fmt, ...)
{
	struct verr	*v;
	va_list		 ap;
	size_t		 cap;

	if (e->n == e->cap) {
		cap = e->cap == 0 ? 8 : e->cap * 2;
		v = arena_alloc(a, cap * sizeof(*v));
		if (e->n > 0)
			memcpy(v, e->v, e->n * sizeof(*v));
		e->v = v;
		e->cap = cap;
	}
	v = &e->v[e->n++];
	v->field = arena_strdup(a, field != NULL ? field : "");
	v->code = arena_strdup(a, code != NULL ? code : "invalid");
	va_start(ap, fmt);
	v->message = arena_vprintf(a, fmt, ap);
	va_end(ap);
	if (v->message == NULL)
		v->message = "";
}

static void
vfail(struct vctx *c, const struct vpath *p, const char *code,
    const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static void
vfail(struct vctx *c, const struct vpath *p, const char *code,
    const char *fmt, ...)
{
	va_list	 ap;
	char	*msg;

	va_start(ap, fmt);
	msg = arena_vprintf(c->a, fmt, ap);
	va_end(ap);
	verrs_add(c->a, c->errs, vpath_str(c->a, p), code, "%s",
	    msg != NULL ? msg : "");
}

static const char *
vtype_name(enum vtype t)
{
	static const char *const names[VT__MAX] = {
		"a string",	/* VT_STRING */
		"an integer",	/* VT_INT */
		"a number",	/* VT_NUMBER */
		"a boolean",	/* VT_BOOL */
		"an object",	/* VT_OBJECT */
		"an array",	/* VT_ARRAY */
		"any value",	/* VT_ANY */
	};

	return (unsigned)t < VT__MAX ? names[t] : "a value";
}

int
validate_name(struct arena *a, struct json_object **v, const char **code, const char **msg)
{
	const unsigned char	*s = (const unsigned char *)json_object_get_string(*v), *p;

	(void)a;
	for (p = s; *p == ' ' || (*p >= '\t' && *p <= '\r'); p++)
		;
	if (*p == '\0') {
		*code = "blank";
		*msg = "must not be only spaces";
		return -1;
	}
	/* C0, DEL, and C1 (U+0080-U+009F: 0xC2 0x80-0x9F in UTF-8) */
	for (p = s; *p != '\0'; p++)
		if (*p < 0x20 || *p == 0x7f || (p[0] == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f)) {
			*code = "control_character";
			*msg = "must not contain control characters";
			return -1;
		}
	return 0;
}

/* ---- UTF-8 and formats ---- */

/* 1 when the n bytes are well-formed UTF-8 (RFC 3629) without NUL. */
int
validate_utf8(const char *s, size_t n)
{
	const unsigned char	*p = (const unsigned char *)s, *end;
	unsigned		 c, lo, hi;
	size_t			 need, i;

	if (s == NULL)
		return n == 0;
	end = p + n;
	while (p < end) {
		c = *p;
		if (c == 0)
			return 0;
		if (c < 0x80) {
			p++;
			continue;
		}
		/* RFC 3629 table: no overlongs, surrogates or > U+10FFFF. */
		lo = 0x80;
		hi = 0xbf;
		if (c >= 0xc2 && c <= 0xdf)
			need = 1;
		else if (c == 0xe0) {
			need = 2;
			lo = 0xa0;
		} else if ((c >= 0xe1 && c <= 0xec) || c == 0xee || c == 0xef)
			need = 2;
		else if (c == 0xed) {
			need = 2;
			hi = 0x9f;
		} else if (c == 0xf0) {
			need = 3;
			lo = 0x90;
		} else if (c >= 0xf1 && c <= 0xf3)
			need = 3;
		else if (c == 0xf4) {
			need = 3;
			hi = 0x8f;
		} else
			return 0;
		if ((size_t)(end - p) <= need)
			return 0;
		if (p[1] < lo || p[1] > hi)
			return 0;
		for (i = 2; i <= need; i++)
			if ((p[i] & 0xc0) != 0x80)
				return 0;
		p += need + 1;
	}
	return 1;
}

/* Code points in valid UTF-8. */
static size_t
utf8_count(const char *s, size_t n)
{
	size_t	 i, cp = 0;

	for (i = 0; i < n; i++)
		if (((unsigned char)s[i] & 0xc0) != 0x80)
			cp++;
	return cp;
}

static int
is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static int
is_alpha(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/*
 * DNS name: dot-separated labels of 1-63 letters, digits and hyphens, not
 * starting or ending with a hyphen, 253 bytes at most. With tld, at least
 * two labels and the last is 2+ letters.
 */
static int
vf_hostname(const char *s, size_t n, int tld)
{
	size_t	 i, start = 0, labels = 0, len;

	if (n == 0 || n > 253)
		return 0;
	for (i = 0; i <= n; i++) {
		if (i < n && s[i] != '.') {
			if (!is_alpha(s[i]) && !is_digit(s[i]) && s[i] != '-')
				return 0;
			continue;
		}
		len = i - start;
		if (len == 0 || len > 63 || s[start] == '-' || s[i - 1] == '-')
			return 0;
		labels++;
		if (i == n && tld) {
			if (labels < 2 || len < 2)
				return 0;
			for (; start < n; start++)
				if (!is_alpha(s[start]))
					return 0;
		}
		start = i + 1;
	}
	return 1;
}

static int
vf_email(const char *s)
{
	static const char	 atext[] = "!#$%&'*+/=?^_`{|}~-";
	const char		*at;
	size_t			 len, i, llen;

	len = strlen(s);
	if (len == 0 || len > 254)
		return 0;
	if ((at = strchr(s, '@')) == NULL || strchr(at + 1, '@') != NULL)
		return 0;
	llen = (size_t)(at - s);
	if (llen == 0 || llen > 64 || s[0] == '.' || s[llen - 1] == '.')
		return 0;
	for (i = 0; i < llen; i++) {
		if (s[i] == '.') {
			if (s[i + 1] == '.')
				return 0;
		} else if (!is_alpha(s[i]) && !is_digit(s[i]) &&
		    strchr(atext, s[i]) == NULL)
			return 0;
	}
	return vf_hostname(at + 1, len - llen - 1, 1);
}

static int
vf_port(const char *s, size_t n)
{
	size_t	 i;
	long	 v = 0;

	if (n == 0 || n > 5)
		return 0;
	for (i = 0; i < n; i++) {
		if (!is_digit(s[i]))
			return 0;
		v = v * 10 + (s[i] - '0');
	}
	return v >= 1 && v <= 65535;
}

/* Absolute http(s) URL with a host; no userinfo, no spaces or controls. */
static int
vf_url(const char *s, int https_only)
{
	const char	*rest, *close;
	size_t		 i, alen, hlen;

	if (strncasecmp(s, "https://", 8) == 0)
		rest = s + 8;
	else if (!https_only && strncasecmp(s, "http://", 7) == 0)
		rest = s + 7;
	else
		return 0;
	for (i = 0; s[i] != '\0'; i++)
		if ((unsigned char)s[i] <= 0x20 || (unsigned char)s[i] >= 0x7f)
			return 0;
	alen = strcspn(rest, "/?#");
	if (alen == 0 || memchr(rest, '@', alen) != NULL)
		return 0;
	if (rest[0] == '[') {
		close = memchr(rest, ']', alen);
		if (close == NULL || close == rest + 1)
			return 0;
		hlen = (size_t)(close - rest) + 1;
		for (i = 1; i < hlen - 1; i++)
			if (!is_digit(rest[i]) && strchr("abcdefABCDEF:.",
			    rest[i]) == NULL)
				return 0;
		if (memchr(rest, ':', hlen) == NULL)
			return 0;
	} else {
		hlen = strcspn(rest, ":/?#");
		if (!vf_hostname(rest, hlen, 0))
			return 0;
	}
	if (hlen == alen)
		return 1;
	if (rest[hlen] != ':')
		return 0;
	return vf_port(rest + hlen + 1, alen - hlen - 1);
}

static int
num2(const char *s, int *v)
{
	if (!is_digit(s[0]) || !is_digit(s[1]))
		return 0;
	*v = (s[0] - '0') * 10 + (s[1] - '0');
	return 1;
}

/* "YYYY-MM-DD", a real calendar date (proleptic Gregorian, year >= 1). */
static int
vf_date_prefix(const char *s)
{
	static const int	 mdays[12] =
	    { 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
	int			 hi, lo, y, m, d;

	if (!num2(s, &hi) || !num2(s + 2, &lo) || s[4] != '-' ||
	    !num2(s + 5, &m) || s[7] != '-' || !num2(s + 8, &d))
		return 0;
	y = hi * 100 + lo;
	if (y < 1 || m < 1 || m > 12 || d < 1 || d > mdays[m - 1])
		return 0;
	if (m == 2 && d == 29 &&
	    !(y % 4 == 0 && (y % 100 != 0 || y % 400 == 0)))
		return 0;
	return 1;
}

static int
vf_date(const char *s)
{
	return strlen(s) == 10 && vf_date_prefix(s);
}

/*
 * RFC 3339 date-time: YYYY-MM-DDTHH:MM:SS[.frac](Z|+HH:MM|-HH:MM), upper
 * case T and Z, 1-9 fraction digits, no leap second.
 */
static int
vf_datetime(const char *s)
{
	int	 h, m, sec;
	size_t	 i;

	if (strlen(s) < 20 || !vf_date_prefix(s) || s[10] != 'T')
		return 0;
	if (!num2(s + 11, &h) || s[13] != ':' || !num2(s + 14, &m) ||
	    s[16] != ':' || !num2(s + 17, &sec) || h > 23 || m > 59 || sec > 59)
		return 0;
	s += 19;
	if (*s == '.') {
		for (i = 1; is_digit(s[i]); i++)
			;
		if (i == 1 || i > 10)
			return 0;
		s += i;
	}
	if (s[0] == 'Z')
		return s[1] == '\0';
	if (s[0] != '+' && s[0] != '-')
		return 0;
	return num2(s + 1, &h) && s[3] == ':' && num2(s + 4, &m) &&
	    s[6] == '\0' && h <= 23 && m <= 59;
}

/* 1 when s matches format f; NULL never matches. */
int
validate_format(enum vformat f, const char *s)
{
	unsigned char	 u[16];
	size_t		 i;

	if (s == NULL)
		return 0;
	switch (f) {
	case VF_NONE:
		return 1;
	case VF_EMAIL:
		return vf_email(s);
	case VF_URL:
		return vf_url(s, 0);
	case VF_HTTPS_URL:
		return vf_url(s, 1);
	case VF_DATE:
		return vf_date(s);
	case VF_DATETIME:
		return vf_datetime(s);
	case VF_UUID:
		return crypto_uuid_parse(s, u) == 0;
	case VF_DIGITS:
		for (i = 0; is_digit(s[i]); i++)
			;
		return i > 0 && s[i] == '\0';
	case VF_CURRENCY:
		return money_exponent(s) >= 0;
	case VF_MONEY:
		return money_amount_valid(s);
	case VF_PRINTABLE:
		for (i = 0; s[i] != '\0'; i++)
			if ((unsigned char)s[i] < 0x20 ||
			    (unsigned char)s[i] > 0x7e)
				return 0;
		return 1;
	default:
		return 0;
	}
}

static const char *
vformat_what(enum vformat f)
{
	static const char *const what[VF__MAX] = {
		"be valid",				/* VF_NONE */
		"be an e-mail address",			/* VF_EMAIL */
		"be an absolute http(s) URL",		/* VF_URL */
		"be an absolute https URL",		/* VF_HTTPS_URL */
		"be a date (YYYY-MM-DD)",		/* VF_DATE */
		"be an RFC 3339 date-time with a time zone", /* VF_DATETIME */
		"be a UUID",				/* VF_UUID */
		"contain only digits",			/* VF_DIGITS */
		"be an ISO 4217 currency code",		/* VF_CURRENCY */
		"contain only printable ASCII",	/* VF_PRINTABLE */
		"be a decimal amount: digits, no sign or leading zero, and at most"
		" 4 digits after a '.' (\"12.50\", \"12\")",	/* VF_MONEY */
	};

	return (unsigned)f < VF__MAX ? what[f] : "be valid";
}

/* ---- values ---- */

/* The header's rule for when min/max apply to a number. */
static int
vhas_max(const struct vfield *f)
{
	return f->max > f->min || (f->max == f->min && f->min != 0);
}

static int
vhas_min(const struct vfield *f)
{
	return vhas_max(f) || f->min != 0;
}

/* 1 when the number x is outside the declared bounds. */
static int
vout_of_range(const struct vfield *f, double x)
{
	return (vhas_min(f) && x < (double)f->min) || (vhas_max(f) && x > (double)f->max);
}

static char *
venum_list(struct arena *a, const char *const *e)
{
	size_t	 i, len = 0;
	char	*s;

	for (i = 0; e[i] != NULL; i++)
		len += strlen(e[i]) + 2;
	s = arena_alloc(a, len + 1);
	for (i = 0; e[i] != NULL; i++) {
		if (i > 0)
			strcat(s, ", ");
		strcat(s, e[i]);
	}
	return s;
}

static int
validate_string(struct vctx *c, const struct vfield *f, struct json_object *v,
    const struct vpath *p)
{
	const char	*s;
	size_t		 len, cp, i;
	long long	 lo, hi;

	if (json_object_get_type(v) != json_type_string) {
		vfail(c, p, "invalid_type", "must be a string");
		return -1;
	}
	s = json_object_get_string(v);
	len = (size_t)json_object_get_string_len(v);
	if (!validate_utf8(s, len)) {
		vfail(c, p, "invalid_utf8", "must be valid UTF-8 without NUL");
		return -1;
	}
	cp = utf8_count(s, len);
	lo = f->min;
	hi = (f->flags & V_OPAQUE) ? -1 : f->max > 0 ? f->max : VALIDATE_STRING_MAX;
	if (lo > 0 && cp < (unsigned long long)lo) {
		vfail(c, p, "too_short", "must be at least %lld characters",
		    lo);
		return -1;
	}
	if (hi >= 0 && cp > (unsigned long long)hi) {
		vfail(c, p, "too_long", "must be at most %lld characters", hi);
		return -1;
	}
	if (f->enumv != NULL) {
		for (i = 0; f->enumv[i] != NULL; i++)
			if (strcmp(f->enumv[i], s) == 0)
				break;
		if (f->enumv[i] == NULL) {
			vfail(c, p, "invalid_enum", "must be one of: %s",
			    venum_list(c->a, f->enumv));
			return -1;
		}
	}
	if (f->format != VF_NONE && !validate_format(f->format, s)) {
		vfail(c, p, "invalid_format", "must %s",
		    vformat_what(f->format));
		return -1;
	}
	return 0;
}

static int
vrange_fail(struct vctx *c, const struct vfield *f, const struct vpath *p)
{
	if (vhas_max(f))
		vfail(c, p, "out_of_range", "must be between %lld and %lld",
		    f->min, f->max);
	else if (vhas_min(f))
		vfail(c, p, "out_of_range", "must be at least %lld", f->min);
	else
		vfail(c, p, "out_of_range", "is out of range");
	return -1;
}

static int
validate_int(struct vctx *c, const struct vfield *f, struct json_object *v,
    const struct vpath *p)
{
	int64_t	 i;

	if (json_object_get_type(v) != json_type_int) {
		vfail(c, p, "invalid_type", "must be an integer");
		return -1;
	}
	i = json_object_get_int64(v);
	/* json-c holds values above INT64_MAX as uint64 and clamps here. */
	if (i == INT64_MAX && json_object_get_uint64(v) > (uint64_t)INT64_MAX)
		return vrange_fail(c, f, p);
	if ((vhas_min(f) && i < f->min) || (vhas_max(f) && i > f->max))
		return vrange_fail(c, f, p);
	return 0;
}

static int
validate_number(struct vctx *c, const struct vfield *f, struct json_object *v,
    const struct vpath *p)
{
	double	 d;

	switch (json_object_get_type(v)) {
	case json_type_int:
		if (json_object_get_int64(v) != INT64_MAX ||
		    json_object_get_uint64(v) <= (uint64_t)INT64_MAX) {
			int64_t i = json_object_get_int64(v);

			if ((vhas_min(f) && i < f->min) || (vhas_max(f) && i > f->max))
				return vrange_fail(c, f, p);
			return 0;
		}
		d = (double)json_object_get_uint64(v);
		break;
	case json_type_double:
		d = json_object_get_double(v);
		if (!isfinite(d)) {
			vfail(c, p, "invalid_type", "must be a finite number");
			return -1;
		}
		break;
	default:
		vfail(c, p, "invalid_type", "must be a number");
		return -1;
	}
	if (vout_of_range(f, d))
		return vrange_fail(c, f, p);
	return 0;
}

/* ---- the closest declared name to an unknown one ---- */

#define VSUGGEST_MAX	64

size_t
validate_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	unsigned char d[VSUGGEST_MAX + 1][VSUGGEST_MAX + 1];	/* <= VSUGGEST_MAX */

	if (la > VSUGGEST_MAX || lb > VSUGGEST_MAX)
		return SIZE_MAX;
	for (size_t i = 0; i <= la; i++)
		d[i][0] = (unsigned char)i;
	for (size_t j = 0; j <= lb; j++)
		d[0][j] = (unsigned char)j;
	for (size_t i = 1; i <= la; i++)
		for (size_t j = 1; j <= lb; j++) {
			size_t cost = tolower((unsigned char)a[i - 1]) !=
			    tolower((unsigned char)b[j - 1]), v = d[i - 1][j - 1] + cost;

			if (d[i - 1][j] + 1u < v)
				v = d[i - 1][j] + 1u;
			if (d[i][j - 1] + 1u < v)
				v = d[i][j - 1] + 1u;
			if (i > 1 && j > 1 && cost &&
			    tolower((unsigned char)a[i - 1]) == tolower((unsigned char)b[j - 2]) &&
			    tolower((unsigned char)a[i - 2]) == tolower((unsigned char)b[j - 1]) &&
			    d[i - 2][j - 2] + 1u < v)
				v = d[i - 2][j - 2] + 1u;
			d[i][j] = (unsigned char)v;
		}
	return d[la][lb];
}

/* 1 when a and b are equal but for case and the separators '_' and '-'. */
static int
vsame_words(const char *a, const char *b)
{
	for (;;) {
		while (*a == '_' || *a == '-')
			a++;
		while (*b == '_' || *b == '-')
			b++;
		if (*a == '\0' || *b == '\0')
			return *a == *b;
		if (tolower((unsigned char)*a++) != tolower((unsigned char)*b++))
			return 0;
	}
}

const char *
validate_suggest(const struct vfield *spec, const char *key)
{
	size_t len = strlen(key), limit = len <= 4 ? 1 : len <= 8 ? 2 : 3, best = SIZE_MAX;
	const char *name = NULL;

	for (const struct vfield *f = spec; f != NULL && f->name != NULL; f++) {
		const char *cand[2] = { f->name, f->alias };

		for (size_t k = 0; k < 2 && cand[k] != NULL; k++) {
			size_t d = vsame_words(cand[k], key) ? 0 : validate_distance(cand[k], key);

			if (d <= limit && d < best) {
				best = d;
				name = cand[k];
			}
		}
	}
	return name;
}

/* An unknown key at the top level: the message, and the first one's hint. */
static void
vunknown(struct vctx *c, const struct vpath *p, const struct vfield *spec,
    const char *what)
{
	const char *near = validate_suggest(spec, p->name);
	char *list = NULL;

	if (near != NULL)
		vfail(c, p, "unknown_field", "is not a known %s; did you mean %s?", what, near);
	else
		vfail(c, p, "unknown_field", "is not a known %s", what);
	if (c->errs->hint != NULL || p->up != NULL)
		return;
	if (near != NULL) {
		c->errs->hint = arena_printf(c->a, "%s is not a known %s: did you mean `%s`?",
		    p->name, what, near);
		return;
	}
	for (const struct vfield *f = spec; f != NULL && f->name != NULL; f++)
		list = list == NULL ? arena_strdup(c->a, f->name) :
		    arena_printf(c->a, "%s, %s", list, f->name);
	c->errs->hint = list == NULL ?
	    arena_printf(c->a, "this endpoint takes no %s", strcmp(what, "field") == 0 ?
	    "body fields" : "query parameters") :
	    arena_printf(c->a, "the accepted %ss: %s", what, list);
}

/* 1 when key is a name or alias in spec. */
static int
vdeclared(const struct vfield *spec, const char *key)
{
	const struct vfield	*f;

	for (f = spec; f != NULL && f->name != NULL; f++)
		if (strcmp(f->name, key) == 0 ||
		    (f->alias != NULL && strcmp(f->alias, key) == 0))
			return 1;
	return 0;
}

static int
validate_members(struct vctx *c, const struct vfield *spec,
    struct json_object *in, const struct vpath *p, struct json_object **res)
{
	const struct vfield	*f;
	struct json_object	*out, *vn, *va, *r;
	struct vpath		 mp;
	size_t			 before = c->errs->n;
	int			 hn, ha;

	out = json_object_new_object();
	for (f = spec; f != NULL && f->name != NULL; f++) {
		hn = in != NULL && json_object_object_get_ex(in, f->name, &vn);
		ha = in != NULL && f->alias != NULL &&
		    strcmp(f->alias, f->name) != 0 &&
		    json_object_object_get_ex(in, f->alias, &va);
		mp.up = p;
		mp.name = f->name;
		mp.idx = 0;
		if (hn && ha) {
			vfail(c, &mp, "duplicate_field",
			    "given as both %s and %s", f->name, f->alias);
			continue;
		}
		if (!hn && !ha) {
			if (f->flags & V_REQUIRED)
				vfail(c, &mp, "required", "is required");
			continue;
		}
		if (ha)
			mp.name = f->alias;
		if (validate_value(c, f, hn ? vn : va, &mp, &r) == 0)
			json_object_object_add(out, f->name, r);
	}

	if (in != NULL) {
		json_object_object_foreach(in, key, val) {
			(void)val;
			if (vdeclared(spec, key))
				continue;
			mp.up = p;
			mp.name = key;
			vunknown(c, &mp, spec, "field");
		}
	}

	if (c->errs->n != before) {
		json_object_put(out);
		*res = NULL;
		return -1;
	}
	*res = out;
	return 0;
}

/* 1 (after failing item p) when string item r is already in out. */
static int
vrepeats(struct vctx *c, struct json_object *out, struct json_object *r,
    const struct vpath *p)
{
	size_t	i, n = json_object_array_length(out);

	if (!json_object_is_type(r, json_type_string))
		return 0;
	for (i = 0; i < n; i++)
		if (strcmp(json_object_get_string(json_object_array_get_idx(out, i)),
		    json_object_get_string(r)) == 0) {
			vfail(c, p, "duplicate_item", "repeats item %zu", i);
			return 1;
		}
	return 0;
}

static int
validate_array(struct vctx *c, const struct vfield *f, struct json_object *v,
    const struct vpath *p, struct json_object **res)
{
	struct vfield		 item;
	struct json_object	*out, *r;
	struct vpath		 ip;
	size_t			 i, n;
	long long		 lo, hi;
	int			 failed = 0;

	*res = NULL;
	if (json_object_get_type(v) != json_type_array) {
		vfail(c, p, "invalid_type", "must be an array");
		return -1;
	}
	n = json_object_array_length(v);
	lo = f->min;
	hi = f->max > 0 ? f->max : VALIDATE_ARRAY_MAX;
	if (lo > 0 && n < (unsigned long long)lo) {
		vfail(c, p, "too_few_items", "must have at least %lld items",
		    lo);
		return -1;
	}
	if (hi >= 0 && n > (unsigned long long)hi) {
		vfail(c, p, "too_many_items", "must have at most %lld items",
		    hi);
		return -1;
	}

	/* Items inherit enum, format, members and check; not bounds. */
	item = *f;
	item.name = NULL;
	item.alias = NULL;
	item.type = f->items;
	item.flags = 0;
	item.min = item.max = 0;
	item.items = VT_ANY;

	out = json_object_new_array_ext(n > 0 ? (int)n : 1);
	ip.up = p;
	ip.name = NULL;
	for (i = 0; i < n; i++) {
		ip.idx = i;
		if (validate_value(c, &item, json_object_array_get_idx(v, i),
		    &ip, &r) != 0)
			failed = 1;
		else if ((f->flags & V_UNIQUE) && vrepeats(c, out, r, &ip)) {
			json_object_put(r);
			failed = 1;
		} else if (!failed)
			json_object_array_add(out, r);
		else
			json_object_put(r);
	}
	if (failed) {
		json_object_put(out);
		return -1;
	}
	*res = out;
	return 0;
}

/*
 * Check v (borrowed; NULL is JSON null) against f. On success *res holds a
 * new reference for the output tree; on failure errors were added and -1
 * is returned.
 */
static int
validate_value(struct vctx *c, const struct vfield *f, struct json_object *v,
    const struct vpath *p, struct json_object **res)
{
	struct json_object	*r = NULL, *cur;
	const char		*code, *msg;
	int			 rc = 0;

	*res = NULL;
	if (v == NULL) {
		if (f->type == VT_ANY || (f->flags & V_NULLABLE))
			return 0;
		vfail(c, p, "invalid_type", "must be %s, not null",
		    vtype_name(f->type));
		return -1;
	}

	switch (f->type) {
	case VT_STRING:
		rc = validate_string(c, f, v, p);
		break;
	case VT_INT:
		rc = validate_int(c, f, v, p);
		break;
	case VT_NUMBER:
		rc = validate_number(c, f, v, p);
		break;
	case VT_BOOL:
		if (json_object_get_type(v) != json_type_boolean) {
			vfail(c, p, "invalid_type", "must be a boolean");
			rc = -1;
		}
		break;
	case VT_OBJECT:
		if (json_object_get_type(v) != json_type_object) {
			vfail(c, p, "invalid_type", "must be an object");
			return -1;
		}
		if (f->fields != NULL)
			rc = validate_members(c, f->fields, v, p, &r);
		break;
	case VT_ARRAY:
		/* The check, if any, ran on each item. */
		return validate_array(c, f, v, p, res);
	case VT_ANY:
		break;
	default:
		vfail(c, p, "invalid_type", "has an undeclared type");
		return -1;
	}
	if (rc != 0)
		return -1;
	if (r == NULL)
		r = json_object_get(v);

	if (f->check != NULL) {
		cur = r;
		code = NULL;
		msg = NULL;
		if (f->check(c->a, &cur, &code, &msg) != 0) {
			vfail(c, p, code != NULL ? code : "invalid", "%s",
			    msg != NULL ? msg : "is invalid");
			json_object_put(r);
			return -1;
		}
		if (cur != r) {
			/* Take ours first: cur may live inside r. */
			json_object_get(cur);
			json_object_put(r);
			r = cur;
		}
	}
	*res = r;
	return 0;
}

/*
 * Check a parsed body against spec. 0 with *out, a new object of the
 * declared fields under canonical names, released at the arena's reset;
 * -1 with *out NULL when errs gained errors. The input is not changed and
 * may be released before *out.
 */
int
validate_body(struct arena *a, const struct vfield *spec,
    struct json_object *in, struct json_object **out, struct verrs *errs)
{
	struct vctx		 c = { a, errs };
	struct json_object	*o;

	*out = NULL;
	if (in != NULL && json_object_get_type(in) != json_type_object) {
		verrs_add(a, errs, "", "invalid_type",
		    "body must be a JSON object");
		return -1;
	}
	if (validate_members(&c, spec, in, NULL, &o) != 0)
		return -1;
	arena_defer(a, validate_put, o);
	*out = o;
	return 0;
}

/* ---- query strings ---- */

/* Optional '-' then 1+ decimal digits, within int64. */
static int
query_int(const char *s, int64_t *out, int *range)
{
	const char	*d = s;
	uint64_t	 v = 0, lim;

	*range = 0;
	if (*d == '-')
		d++;
	if (!is_digit(*d))
		return -1;
	lim = *s == '-' ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
	for (; is_digit(*d); d++) {
		if (v > (lim - (uint64_t)(*d - '0')) / 10) {
			*range = 1;
			return -1;
		}
		v = v * 10 + (uint64_t)(*d - '0');
	}
	if (*d != '\0')
		return -1;
	if (*s == '-')
		*out = v == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)v;
	else
		*out = (int64_t)v;
	return 0;
}

/* JSON number grammar: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? */
static int
query_number_syntax(const char *s, int *integral)
{
	*integral = 1;
	if (*s == '-')
		s++;
	if (*s == '0')
		s++;
	else if (*s >= '1' && *s <= '9')
		while (is_digit(*s))
			s++;
	else
		return 0;
	if (*s == '.') {
		*integral = 0;
		if (!is_digit(*++s))
			return 0;
		while (is_digit(*s))
			s++;
	}
	if (*s == 'e' || *s == 'E') {
		*integral = 0;
		s++;
		if (*s == '+' || *s == '-')
			s++;
		if (!is_digit(*s))
			return 0;
		while (is_digit(*s))
			s++;
	}
	return *s == '\0';
}

/* A query string value as t; a new reference in *res, or -1 with an error. */
static int
query_convert(struct vctx *c, enum vtype t, const char *s,
    const struct vpath *p, struct json_object **res)
{
	int64_t	 i;
	double	 d;
	int	 range, integral;

	*res = NULL;
	if (!validate_utf8(s, strlen(s))) {
		vfail(c, p, "invalid_utf8", "must be valid UTF-8 without NUL");
		return -1;
	}
	switch (t) {
	case VT_STRING:
	case VT_ANY:
		*res = json_object_new_string(s);
		return 0;
	case VT_INT:
		if (query_int(s, &i, &range) == 0) {
			*res = json_object_new_int64(i);
			return 0;
		}
		if (range)
			vfail(c, p, "out_of_range", "is out of range");
		else
			vfail(c, p, "invalid_type", "must be an integer");
		return -1;
	case VT_NUMBER:
		if (!query_number_syntax(s, &integral)) {
			vfail(c, p, "invalid_type", "must be a number");
			return -1;
		}
		if (integral && query_int(s, &i, &range) == 0) {
			*res = json_object_new_int64(i);
			return 0;
		}
		d = strtod(s, NULL);
		if (!isfinite(d)) {
			vfail(c, p, "out_of_range", "is out of range");
			return -1;
		}
		*res = json_object_new_double(d);
		return 0;
	case VT_BOOL:
		if (strcmp(s, "true") == 0 || strcmp(s, "false") == 0) {
			*res = json_object_new_boolean(s[0] == 't');
			return 0;
		}
		vfail(c, p, "invalid_type", "must be true or false");
		return -1;
	default:
		vfail(c, p, "invalid_type",
		    "cannot be given in a query string");
		return -1;
	}
}

static size_t
query_count(const struct http_kv *kv, size_t n, const char *key)
{
	size_t	 i, cnt = 0;

	if (key == NULL)
		return 0;
	for (i = 0; i < n; i++)
		if (kv[i].key != NULL && strcmp(kv[i].key, key) == 0)
			cnt++;
	return cnt;
}

/*
 * Check query pairs against spec, converting strings to the declared types.
 * Same results and ownership as validate_body().
 */
int
validate_query(struct arena *a, const struct vfield *spec,
    const struct http_kv *kv, size_t n, struct json_object **out,
    struct verrs *errs)
{
	struct vctx		 c = { a, errs };
	const struct vfield	*f;
	struct json_object	*o, *v, *r;
	struct vpath		 fp, ip;
	const char		*key;
	size_t			 before = errs->n, nn, na, i, j;
	int			 failed;

	*out = NULL;
	o = json_object_new_object();
	for (f = spec; f != NULL && f->name != NULL; f++) {
		nn = query_count(kv, n, f->name);
		na = f->alias != NULL && strcmp(f->alias, f->name) != 0 ?
		    query_count(kv, n, f->alias) : 0;
		fp.up = NULL;
		fp.name = f->name;
		fp.idx = 0;
		if (nn > 0 && na > 0) {
			vfail(&c, &fp, "duplicate_field",
			    "given as both %s and %s", f->name, f->alias);
			continue;
		}
		if (nn == 0 && na == 0) {
			if (f->flags & V_REQUIRED)
				vfail(&c, &fp, "required", "is required");
			continue;
		}
		key = nn > 0 ? f->name : f->alias;
		fp.name = key;

		if (f->type != VT_ARRAY) {
			if (nn + na > 1) {
				vfail(&c, &fp, "duplicate_field",
				    "given more than once");
				continue;
			}
			for (i = 0; strcmp(kv[i].key != NULL ? kv[i].key : "",
			    key) != 0; i++)
				;
			if (query_convert(&c, f->type, kv[i].val != NULL ?
			    kv[i].val : "", &fp, &v) != 0)
				continue;
		} else {
			v = json_object_new_array();
			ip.up = &fp;
			ip.name = NULL;
			failed = 0;
			for (i = j = 0; i < n; i++) {
				if (kv[i].key == NULL ||
				    strcmp(kv[i].key, key) != 0)
					continue;
				ip.idx = j++;
				if (query_convert(&c, f->items,
				    kv[i].val != NULL ? kv[i].val : "", &ip,
				    &r) != 0)
					failed = 1;
				else
					json_object_array_add(v, r);
			}
			if (failed) {
				json_object_put(v);
				continue;
			}
		}
		if (validate_value(&c, f, v, &fp, &r) == 0)
			json_object_object_add(o, f->name, r);
		json_object_put(v);
	}

	/* Unknown keys, each reported once. */
	for (i = 0; i < n; i++) {
		if (kv[i].key == NULL || vdeclared(spec, kv[i].key))
			continue;
		for (j = 0; j < i; j++)
			if (kv[j].key != NULL &&
			    strcmp(kv[j].key, kv[i].key) == 0)
				break;
		if (j < i)
			continue;
		fp.up = NULL;
		fp.name = kv[i].key;
		vunknown(&c, &fp, spec, "parameter");
	}

	if (errs->n != before) {
		json_object_put(o);
		return -1;
	}
	arena_defer(a, validate_put, o);
	*out = o;
	return 0;
}

/* ---- the declared input as JSON Schema (bds-api --routes --json) ---- */

static const char *const vtype_schema[VT__MAX] = {
	[VT_STRING] = "string", [VT_INT] = "integer", [VT_NUMBER] = "number",
	[VT_BOOL] = "boolean", [VT_OBJECT] = "object", [VT_ARRAY] = "array",
	[VT_ANY] = NULL,
};

/* The JSON Schema format a vformat is, where there is one. */
static const char *
vformat_schema(enum vformat f)
{
	switch (f) {
	case VF_EMAIL: return "email";
	case VF_URL: case VF_HTTPS_URL: return "uri";
	case VF_DATE: return "date";
	case VF_DATETIME: return "date-time";
	case VF_UUID: return "uuid";
	default: return NULL;
	}
}

static struct json_object *vfield_schema(const struct vfield *f, enum vtype t);

static void
vset_int(struct json_object *o, const char *k, long long v)
{
	json_object_object_add(o, k, json_object_new_int64(v));
}

struct json_object *
validate_schema(const struct vfield *spec)
{
	struct json_object *o = json_object_new_object(), *props = json_object_new_object(),
	    *req = json_object_new_array();

	json_object_object_add(o, "type", json_object_new_string("object"));
	json_object_object_add(o, "additionalProperties", json_object_new_boolean(0));
	for (const struct vfield *f = spec; f != NULL && f->name != NULL; f++) {
		json_object_object_add(props, f->name, vfield_schema(f, f->type));
		if (f->alias != NULL) {
			struct json_object *a = vfield_schema(f, f->type);

			json_object_object_add(a, "x-alias-of", json_object_new_string(f->name));
			json_object_object_add(props, f->alias, a);
		}
		if (f->flags & V_REQUIRED)
			json_object_array_add(req, json_object_new_string(f->name));
	}
	json_object_object_add(o, "properties", props);
	json_object_object_add(o, "required", req);
	return o;
}

/* One field's schema; t is its type (an array's items use the field's
 * enum, format and members but not its bounds, as validate_array does). */
static struct json_object *
vfield_schema(const struct vfield *f, enum vtype t)
{
	struct json_object *o;
	const char *ty = (unsigned)t < VT__MAX ? vtype_schema[t] : NULL;

	if (t == VT_OBJECT && f->fields != NULL)
		o = validate_schema(f->fields);
	else
		o = json_object_new_object();
	if (ty != NULL && t != VT_OBJECT) {
		if (f->flags & V_NULLABLE) {
			struct json_object *a = json_object_new_array();

			json_object_array_add(a, json_object_new_string(ty));
			json_object_array_add(a, json_object_new_string("null"));
			json_object_object_add(o, "type", a);
		} else {
			json_object_object_add(o, "type", json_object_new_string(ty));
		}
	} else if (t == VT_OBJECT && (f->flags & V_NULLABLE)) {
		struct json_object *a = json_object_new_array();

		json_object_array_add(a, json_object_new_string("object"));
		json_object_array_add(a, json_object_new_string("null"));
		json_object_object_add(o, "type", a);
	}
	switch (t) {
	case VT_STRING:
		if (f->min > 0)
			vset_int(o, "minLength", f->min);
		if (!(f->flags & V_OPAQUE))
			vset_int(o, "maxLength", f->max > 0 ? f->max : VALIDATE_STRING_MAX);
		if (vformat_schema(f->format) != NULL)
			json_object_object_add(o, "format",
			    json_object_new_string(vformat_schema(f->format)));
		break;
	case VT_INT:
	case VT_NUMBER:
		if (vhas_min(f))
			vset_int(o, "minimum", f->min);
		if (vhas_max(f))
			vset_int(o, "maximum", f->max);
		break;
	case VT_ARRAY: {
		struct vfield item = *f;

		item.flags = 0;
		item.min = item.max = 0;
		if (f->min > 0)
			vset_int(o, "minItems", f->min);
		vset_int(o, "maxItems", f->max > 0 ? f->max : VALIDATE_ARRAY_MAX);
		if (f->flags & V_UNIQUE)
			json_object_object_add(o, "uniqueItems", json_object_new_boolean(1));
		json_object_object_add(o, "items", vfield_schema(&item, f->items));
		break;
	}
	default:
		break;
	}
	if (f->check != NULL && t != VT_ARRAY)	/* the handler's own rule narrows it */
		json_object_object_add(o, "x-check", json_object_new_boolean(1));
	if (f->enumv != NULL && t != VT_ARRAY) {
		struct json_object *e = json_object_new_array();

		for (size_t i = 0; f->enumv[i] != NULL; i++)
			json_object_array_add(e, json_object_new_string(f->enumv[i]));
		json_object_object_add(o, "enum", e);
	}
	return o;
}
