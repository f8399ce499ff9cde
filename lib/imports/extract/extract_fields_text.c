/*
 * The field rules' text pieces (extract_fields.h): clean-up of hostile
 * text, currency markers, amounts and dates as bills print them.
 */
#include <string.h>

#include "imports/extract/extract_fields.h"

static int
is_digit(int c)
{
	return c >= '0' && c <= '9';
}

static int
is_alpha(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static int
lower(int c)
{
	return c >= 'A' && c <= 'Z' ? c + 32 : c;
}

/* The code point at s[i] (n bytes) and its length, strictly; -1 invalid. */
static long
utf8_at(const unsigned char *s, size_t i, size_t n, size_t *len)
{
	unsigned char c = s[i];
	long cp;
	size_t k, need;

	if (c < 0x80) {
		*len = 1;
		return c;
	}
	if (c >= 0xc2 && c <= 0xdf) {
		need = 1;
		cp = c & 0x1f;
	} else if (c >= 0xe0 && c <= 0xef) {
		need = 2;
		cp = c & 0x0f;
	} else if (c >= 0xf0 && c <= 0xf4) {
		need = 3;
		cp = c & 0x07;
	} else
		return -1;
	if (n - i <= need)
		return -1;
	for (k = 1; k <= need; k++) {
		if ((s[i + k] & 0xc0) != 0x80)
			return -1;
		cp = (cp << 6) | (s[i + k] & 0x3f);
	}
	/* overlong, surrogates, beyond Unicode */
	if ((need == 2 && cp < 0x800) || (need == 3 && cp < 0x10000) ||
	    (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
		return -1;
	*len = need + 1;
	return cp;
}

size_t
xf_clean(char *dst, const char *src, size_t n)
{
	const unsigned char *s = (const unsigned char *)src;
	size_t i = 0, o = 0, len;
	long cp;
	int space = 1;	/* trims leading spaces */

	if (src == NULL)
		n = 0;
	while (i < n && o < XF_TEXT_MAX) {
		cp = utf8_at(s, i, n, &len);
		if (cp < 0) {
			cp = '?';
			len = 1;
		}
		if (cp == 0)
			break;
		if (cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp < 0xa0) || cp == 0xa0 ||
		    (cp >= 0x2000 && cp <= 0x200b) || cp == 0x202f || cp == 0x205f ||
		    cp == 0x3000 || cp == 0xfeff || cp == 0x2028 || cp == 0x2029)
			cp = ' ';
		else if (cp == 0x2212 || cp == 0x2010 || cp == 0x2011 || cp == 0x2012 ||
		    cp == 0x2013 || cp == 0x2014 || cp == 0xfe63 || cp == 0xff0d)
			cp = '-';
		else if (cp == 0x2018 || cp == 0x2019 || cp == 0x201b || cp == 0x2032)
			cp = '\'';
		else if (cp == 0x201c || cp == 0x201d)
			cp = '"';
		if (cp == ' ') {
			if (!space && o < XF_TEXT_MAX)
				dst[o++] = ' ';
			space = 1;
			i += len;
			continue;
		}
		space = 0;
		if (cp < 0x80) {
			dst[o++] = (char)cp;
		} else {
			if (o + len > XF_TEXT_MAX)
				break;
			memcpy(dst + o, s + i, len);
			o += len;
		}
		i += len;
	}
	while (o > 0 && dst[o - 1] == ' ')
		o--;
	dst[o] = '\0';
	return o;
}

/* ---- currencies ---- */

static const struct { const char *mark; const char *code; } marks[] = {
	{ "US$", "USD" }, { "CA$", "CAD" }, { "C$", "CAD" }, { "AU$", "AUD" },
	{ "A$", "AUD" }, { "NZ$", "NZD" }, { "HK$", "HKD" }, { "S$", "SGD" },
	{ "R$", "BRL" }, { "$", "$" }, { "\xc2\xa3", "GBP" }, { "\xe2\x82\xac", "EUR" },
	{ "\xc2\xa5", "JPY" }, { "\xef\xbf\xa5", "JPY" }, { "\xe5\x86\x86", "JPY" },
	{ "\xe2\x82\xb9", "INR" }, { "\xe2\x82\xa9", "KRW" }, { "\xe2\x82\xba", "TRY" },
	{ "\xe2\x82\xbd", "RUB" }, { "\xe2\x82\xaa", "ILS" }, { "\xe2\x82\xb1", "PHP" },
	{ "z\xc5\x82", "PLN" }, { "K\xc4\x8d", "CZK" },
};

/* ISO codes a bill prints beside its amounts (English words such as ALL,
 * TOP or TRY are left out: a code must also stand beside an amount). */
static const char *const codes[] = {
	"USD", "EUR", "GBP", "CAD", "AUD", "NZD", "JPY", "CHF", "SEK", "NOK", "DKK",
	"PLN", "CZK", "HUF", "RON", "BGN", "ISK", "INR", "CNY", "RMB", "HKD", "SGD",
	"ZAR", "MXN", "BRL", "ARS", "CLP", "COP", "PEN", "KRW", "TWD", "THB", "MYR",
	"IDR", "PHP", "VND", "AED", "SAR", "QAR", "BHD", "KWD", "OMR", "JOD", "ILS",
	"EGP", "NGN", "KES", "TND", "IQD", "LYD", "UAH", "RUB", "TRY",
};

const char *
xf_currency_at(const char *s, size_t i, size_t n, size_t *len)
{
	size_t k, m;

	if (i >= n)
		return NULL;
	for (k = 0; k < sizeof(marks) / sizeof(marks[0]); k++) {
		m = strlen(marks[k].mark);
		if (m <= n - i && memcmp(s + i, marks[k].mark, m) == 0) {
			*len = m;
			return marks[k].code;
		}
	}
	if (n - i >= 3 && (i == 0 || !is_alpha((unsigned char)s[i - 1])) &&
	    (n - i == 3 || !is_alpha((unsigned char)s[i + 3])))
		for (k = 0; k < sizeof(codes) / sizeof(codes[0]); k++)
			if (memcmp(s + i, codes[k], 3) == 0) {
				*len = 3;
				return strcmp(codes[k], "RMB") == 0 ? "CNY" : codes[k];
			}
	return NULL;
}

/* ---- amounts ---- */

static int
lookalike(int c)
{
	return c == 'O' || c == 'o' || c == 'l' || c == 'I' || c == '|' || c == 'S';
}

static char
lookalike_digit(int c)
{
	return c == 'O' || c == 'o' ? '0' : c == 'S' ? '5' : '1';
}

/* OCR lines: a word of digits, separators and look-alike letters with at
 * least one real digit has its look-alikes read as digits. */
static void
ocr_digits(char *b, size_t n)
{
	size_t i = 0, j, k;

	while (i < n) {
		int digits = 0, other = 0;

		for (j = i; j < n && b[j] != ' '; j++) {
			unsigned char c = (unsigned char)b[j];

			if (is_digit(c))
				digits++;
			else if (!lookalike(c) && c != '.' && c != ',' && c != '$' &&
			    c != '(' && c != ')' && c != '-')
				other++;
		}
		if (digits > 0 && other == 0)
			for (k = i; k < j; k++)
				if (lookalike((unsigned char)b[k]))
					b[k] = lookalike_digit((unsigned char)b[k]);
		i = j + 1;
	}
}

/* A currency marker ending at s[end] (exclusive), its start in *at. */
static const char *
currency_before(const char *s, size_t end, size_t *at)
{
	size_t back, len;
	const char *c;

	/* the longest first: "CA$" before "$" */
	for (back = 3; back >= 1; back--) {
		if (back > end)
			continue;
		c = xf_currency_at(s, end - back, end, &len);
		if (c != NULL && len == back) {
			*at = end - back;
			return c;
		}
	}
	return NULL;
}

/*
 * The run s[i..*end) of digits and separators parsed: integer and fraction
 * digits by the rules in xf_amount_find. 0 ok, -1 not an amount.
 */
static int
parse_run(const char *s, size_t i, size_t *endp, enum xf_style style, int exp,
    unsigned long long *ip, char *frac, size_t *nfrac, int *grouped)
{
	size_t end = *endp, k, p, ndot = 0, ncomma = 0, nother = 0, after;
	char dec = 0, grp = 0, last = 0;
	unsigned long long v = 0;
	int idigits = 0, group = 0, first = 1;

	/* trailing separators are punctuation */
	while (end > i && !is_digit((unsigned char)s[end - 1]))
		end--;
	*endp = end;
	for (k = i; k < end; k++) {
		if (s[k] == '.')
			ndot++, last = '.';
		else if (s[k] == ',')
			ncomma++, last = ',';
		else if (!is_digit((unsigned char)s[k]))
			nother++, last = s[k];
	}
	if (last == '.' || last == ',') {
		for (p = end; s[p - 1] != last; p--)
			;
		after = end - p;
		if (ndot > 0 && ncomma > 0)
			dec = last;
		else if ((last == '.' ? ndot : ncomma) > 1)
			dec = 0;
		else if (after != 3)
			dec = last;
		else if (last == (style == XF_STYLE_COMMA ? ',' : '.'))
			dec = exp >= 3 ? last : 0;
		else
			dec = 0;
		/* a lone "1.234" in a dot document with cents is no amount */
		if (dec == 0 && after == 3 && (last == '.' ? ndot : ncomma) == 1 &&
		    last == (style == XF_STYLE_COMMA ? ',' : '.') && nother == 0 &&
		    (last == '.' ? ncomma : ndot) == 0)
			return -1;
		if (dec != 0 && (dec == '.' ? ndot : ncomma) != 1)
			return -1;
	}
	*nfrac = 0;
	*grouped = 0;
	for (k = i; k < end; k++) {
		char c = s[k];

		if (is_digit((unsigned char)c)) {
			idigits++;
			group++;
			if (idigits > 13)
				return -1;
			v = v * 10 + (unsigned long long)(c - '0');
			continue;
		}
		if (c == dec) {
			for (k++; k < end; k++) {
				if (!is_digit((unsigned char)s[k]) || *nfrac >= 8)
					return -1;
				frac[(*nfrac)++] = s[k];
			}
			break;
		}
		/* a grouping separator: one kind only, groups of three after the first */
		if (grp == 0)
			grp = c;
		else if (c != grp)
			return -1;
		if ((first && (group < 1 || group > 3)) || (!first && group != 3))
			return -1;
		first = 0;
		group = 0;
		*grouped = 1;
	}
	if (*grouped && group != 3)
		return -1;
	if (idigits == 0)
		return -1;
	*ip = v;
	return 0;
}

int
xf_amount_find(const char *text, size_t n, size_t from, enum xf_style style,
    int exp, int loose, int ocr, struct xf_amount *a)
{
	char buf[XF_TEXT_MAX + 1];
	const char *s = text;
	size_t i, end, k, len, mark_at, nfrac;
	char frac[8];
	unsigned long long ip;
	int grouped;

	if (text == NULL || n > XF_TEXT_MAX || from >= n || exp < 0 || exp > 4)
		return 0;
	if (ocr) {
		memcpy(buf, text, n);
		buf[n] = '\0';
		ocr_digits(buf, n);
		s = buf;
	}
	for (i = from; i < n; i = end > i ? end : i + 1) {
		const char *cur = NULL;
		size_t start = i;
		int neg = 0, paren = 0;
		long long minor;

		end = i + 1;
		if (!is_digit((unsigned char)s[i]))
			continue;
		/* the run: digits, '.', ',', '\'' and (comma style) spaced groups */
		for (end = i; end < n; end++) {
			unsigned char c = (unsigned char)s[end];

			if (is_digit(c) || c == '.' || c == ',' || c == '\'')
				continue;
			if (c == ' ' && style == XF_STYLE_COMMA && end > i &&
			    is_digit((unsigned char)s[end - 1]) &&
			    end + 3 < n && is_digit((unsigned char)s[end + 1]) &&
			    is_digit((unsigned char)s[end + 2]) && is_digit((unsigned char)s[end + 3]) &&
			    (end + 4 >= n || !is_digit((unsigned char)s[end + 4])))
				continue;
			break;
		}
		/* what stands before: no letter, digit or date/time punctuation */
		if (i > 0) {
			unsigned char p = (unsigned char)s[i - 1];

			if (is_alpha(p) && !(i >= 3 && xf_currency_at(s, i - 3, i, &len) != NULL && len == 3) &&
			    !(i >= 2 && xf_currency_at(s, i - 2, i, &len) != NULL && len == 2))
				continue;
			if (p == '/' || p == ':' || p == '#' || p == '_' || p == '%' || p == '@' ||
			    p == '+' || p == '=' || p == '.' || p == ',')
				continue;
			if (p == '-' && i >= 2 && (is_digit((unsigned char)s[i - 2]) || is_alpha((unsigned char)s[i - 2])))
				continue;
		}
		if (parse_run(s, i, &end, style, exp, &ip, frac, &nfrac, &grouped) != 0) {
			/* "18.04.2026 310,08": the next word may still be one */
			const char *sp = memchr(s + i, ' ', end - i);

			if (sp != NULL)
				end = (size_t)(sp - s);
			continue;
		}
		/* what follows: no date, time, percentage, unit or more digits */
		if (end < n) {
			unsigned char c = (unsigned char)s[end];

			if (c == '/' || c == ':' || c == '%' || c == '_' || c == '@')
				continue;
			if (c == '-' && end + 1 < n && (is_digit((unsigned char)s[end + 1]) ||
			    is_alpha((unsigned char)s[end + 1])))
				continue;
			if (is_alpha(c) && xf_currency_at(s, end, n, &len) == NULL &&
			    !((c == 'C' || c == 'D') && end + 1 < n && s[end + 1] == 'R' &&
			    (end + 2 == n || !is_alpha((unsigned char)s[end + 2]))))
				continue;
		}
		/* the fraction at the currency's exponent */
		if (nfrac > (size_t)exp) {
			for (k = (size_t)exp; k < nfrac; k++)
				if (frac[k] != '0')
					break;
			if (k < nfrac)
				continue;
		}
		minor = (long long)ip;
		for (k = 0; k < (size_t)exp; k++)
			minor = minor * 10 + (k < nfrac ? frac[k] - '0' : 0);
		/* markers and sign before: "-$12.00", "$-12.00", "(12.00)", "$ 12.00" */
		k = start;
		if (k > 0 && s[k - 1] == '-') {
			neg = 1;
			k--;
		}
		if (k > 0 && (cur = currency_before(s, k, &mark_at)) != NULL)
			k = mark_at;
		else if (k > 1 && s[k - 1] == ' ' && (cur = currency_before(s, k - 1, &mark_at)) != NULL)
			k = mark_at;
		if (cur != NULL && k > 0 && s[k - 1] == '-' && !neg) {
			neg = 1;
			k--;
		}
		if (k > 0 && s[k - 1] == '(') {
			paren = 1;
			k--;
		}
		start = k;
		/* and after: "12.00 EUR", "12,00 €", "12.00-", "12.00 CR", ")" */
		k = end;
		if (cur == NULL) {
			const char *c2 = NULL;

			size_t q = k < n && s[k] == ' ' ? k + 1 : k;

			/* a marker that opens the next amount ("2026 \xc2\xa5" "46,371") is not this one's */
			if (q < n && (c2 = xf_currency_at(s, q, n, &len)) != NULL && strcmp(c2, "$") != 0 &&
			    !(q + len < n && is_digit((unsigned char)s[q + len])) &&
			    !(q + len + 1 < n && s[q + len] == ' ' && is_digit((unsigned char)s[q + len + 1])))
				k = q + len;
			else
				c2 = NULL;
			cur = c2;
		}
		if (paren && k < n && s[k] == ')') {
			neg = 1;
			k++;
		} else if (paren) {
			start++;
		}
		if (k < n && s[k] == '-' && (k + 1 == n || !is_digit((unsigned char)s[k + 1]))) {
			neg = 1;
			k++;
		} else {
			size_t q = k < n && s[k] == ' ' ? k + 1 : k;

			if (q + 1 < n && s[q + 1] == 'R' && (s[q] == 'C' || s[q] == 'D') &&
			    (q + 2 == n || !is_alpha((unsigned char)s[q + 2]))) {
				if (s[q] == 'C')
					neg = 1;
				k = q + 2;
			}
		}
		if (!loose && nfrac == 0 && cur == NULL && !(exp == 0 && grouped))
			continue;
		memset(a, 0, sizeof(*a));
		a->minor = neg ? -minor : minor;
		a->exp = exp;
		if (cur != NULL)
			memcpy(a->cur, cur, strlen(cur) + 1 > 4 ? 3 : strlen(cur) + 1);
		a->start = start;
		a->end = k;
		a->has_frac = nfrac > 0;
		a->grouped = grouped;
		return 1;
	}
	return 0;
}

/* ---- dates ---- */

static const struct { const char *name; int month; } months[] = {
	{ "january", 1 }, { "jan", 1 }, { "februar", 2 }, { "february", 2 }, { "feb", 2 },
	{ "march", 3 }, { "mar", 3 }, { "april", 4 }, { "apr", 4 }, { "may", 5 },
	{ "june", 6 }, { "jun", 6 }, { "july", 7 }, { "jul", 7 }, { "august", 8 },
	{ "aug", 8 }, { "september", 9 }, { "sept", 9 }, { "sep", 9 }, { "october", 10 },
	{ "oct", 10 }, { "november", 11 }, { "nov", 11 }, { "december", 12 }, { "dec", 12 },
	/* German */
	{ "januar", 1 }, { "j\xc3\xa4nner", 1 }, { "m\xc3\xa4rz", 3 }, { "maerz", 3 },
	{ "mai", 5 }, { "juni", 6 }, { "juli", 7 }, { "oktober", 10 }, { "okt", 10 },
	{ "dezember", 12 }, { "dez", 12 },
	/* French */
	{ "janvier", 1 }, { "janv", 1 }, { "f\xc3\xa9vrier", 2 }, { "fevrier", 2 },
	{ "f\xc3\xa9v", 2 }, { "f\xc3\xa9vr", 2 }, { "fevr", 2 }, { "mars", 3 }, { "avril", 4 },
	{ "avr", 4 }, { "juin", 6 }, { "juillet", 7 }, { "juil", 7 }, { "ao\xc3\xbbt", 8 },
	{ "aout", 8 }, { "septembre", 9 }, { "octobre", 10 }, { "novembre", 11 },
	{ "d\xc3\xa9" "cembre", 12 }, { "decembre", 12 }, { "d\xc3\xa9" "c", 12 },
	/* Spanish */
	{ "enero", 1 }, { "ene", 1 }, { "febrero", 2 }, { "marzo", 3 }, { "abril", 4 },
	{ "abr", 4 }, { "mayo", 5 }, { "junio", 6 }, { "julio", 7 }, { "agosto", 8 },
	{ "ago", 8 }, { "septiembre", 9 }, { "setiembre", 9 }, { "octubre", 10 },
	{ "noviembre", 11 }, { "diciembre", 12 }, { "dic", 12 },
	/* Italian */
	{ "gennaio", 1 }, { "gen", 1 }, { "febbraio", 2 }, { "aprile", 4 }, { "maggio", 5 },
	{ "mag", 5 }, { "giugno", 6 }, { "giu", 6 }, { "luglio", 7 }, { "lug", 7 },
	{ "settembre", 9 }, { "set", 9 }, { "ottobre", 10 }, { "ott", 10 }, { "dicembre", 12 },
	/* Dutch */
	{ "januari", 1 }, { "februari", 2 }, { "maart", 3 }, { "mrt", 3 }, { "mei", 5 },
	{ "augustus", 8 },
};

/* The month a word of letters at s[i] names, its length in *len; 0 none. */
static int
month_at(const char *s, size_t i, size_t n, size_t *len)
{
	char w[16];
	size_t j = i, k;

	if (i > 0 && (is_alpha((unsigned char)s[i - 1]) || (unsigned char)s[i - 1] >= 0x80))
		return 0;
	while (j < n && j - i < sizeof(w) - 1 &&
	    (is_alpha((unsigned char)s[j]) || (unsigned char)s[j] >= 0x80)) {
		w[j - i] = (char)lower((unsigned char)s[j]);
		j++;
	}
	if (j == i || (j < n && (is_alpha((unsigned char)s[j]) || (unsigned char)s[j] >= 0x80)))
		return 0;
	w[j - i] = '\0';
	for (k = 0; k < sizeof(months) / sizeof(months[0]); k++)
		if (strcmp(w, months[k].name) == 0) {
			*len = j - i;
			return months[k].month;
		}
	return 0;
}

int
xf_date_valid(int y, int m, int d)
{
	static const int mdays[] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
	int leap;

	if (y < 1900 || y > 2199 || m < 1 || m > 12 || d < 1)
		return 0;
	leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
	return d <= mdays[m - 1] + (m == 2 && leap);
}

/* Digits at s[*i] (at most max), their value; the count read. */
static int
number(const char *s, size_t n, size_t *i, int max, int *v)
{
	int k = 0;

	*v = 0;
	while (*i < n && k < max && is_digit((unsigned char)s[*i])) {
		*v = *v * 10 + (s[*i] - '0');
		(*i)++;
		k++;
	}
	if (*i < n && is_digit((unsigned char)s[*i]))
		return 0;	/* too many digits */
	return k;
}

static int
year_of(int v, int digits)
{
	if (digits == 4)
		return v;
	if (digits == 2)
		return v < 70 ? 2000 + v : 1900 + v;
	return -1;
}

static size_t
skip_ordinal(const char *s, size_t n, size_t i)
{
	static const char *const ord[] = { "st", "nd", "rd", "th", "er", "e" };
	size_t k, m;

	for (k = 0; k < sizeof(ord) / sizeof(ord[0]); k++) {
		m = strlen(ord[k]);
		if (m <= n - i && lower((unsigned char)s[i]) == ord[k][0] &&
		    (m == 1 || lower((unsigned char)s[i + 1]) == ord[k][1]) &&
		    (i + m == n || !is_alpha((unsigned char)s[i + m])))
			return i + m;
	}
	return i;
}

static int
end_ok(const char *s, size_t n, size_t i)
{
	return i >= n || (!is_digit((unsigned char)s[i]) && !is_alpha((unsigned char)s[i]));
}

/* a numeric date at s[i]: y-m-d, or a/b/y */
static int
numeric_date(const char *s, size_t n, size_t i, enum xf_order order, struct xf_date *dt)
{
	size_t j = i;
	int v1, v2, v3, k1, k2, k3, y;
	char sep;

	if ((k1 = number(s, n, &j, 4, &v1)) == 0 || j >= n)
		return 0;
	sep = s[j];
	if (sep != '-' && sep != '/' && sep != '.')
		return 0;
	j++;
	if ((k2 = number(s, n, &j, 2, &v2)) == 0 || j >= n || s[j] != sep)
		return 0;
	j++;
	if ((k3 = number(s, n, &j, 4, &v3)) == 0 || !end_ok(s, n, j))
		return 0;
	/* "12.04.2026." ends a sentence; "1.2.3.4" does not */
	if (j + 1 < n && s[j] == sep && is_digit((unsigned char)s[j + 1]))
		return 0;
	memset(dt, 0, sizeof(*dt));
	if (k1 == 4) {
		if (k3 > 2 || !xf_date_valid(v1, v2, v3))
			return 0;
		dt->y = v1, dt->m = v2, dt->d = v3;
	} else {
		if (k1 > 2 || (y = year_of(v3, k3)) < 0)
			return 0;
		dt->a = v1, dt->b = v2;
		if (v1 > 12 && v2 <= 12)
			dt->d = v1, dt->m = v2;
		else if (v2 > 12 && v1 <= 12)
			dt->m = v1, dt->d = v2;
		else {
			dt->ambiguous = v1 != v2;
			if (order == XF_ORDER_DMY || sep == '.')
				dt->d = v1, dt->m = v2;
			else
				dt->m = v1, dt->d = v2;
			/* a dotted date is day first everywhere it is written */
			if (sep == '.')
				dt->ambiguous = 0;
		}
		dt->y = y;
		if (!xf_date_valid(dt->y, dt->m, dt->d))
			return 0;
	}
	dt->start = i;
	dt->end = j;
	return 1;
}

static size_t
skip_seps(const char *s, size_t n, size_t i, int comma)
{
	while (i < n && (s[i] == ' ' || s[i] == '-' || s[i] == '.' || s[i] == '/' ||
	    (comma && s[i] == ',') || s[i] == '\''))
		i++;
	return i;
}

/* A written date's year at s[j], after month m and day d read from s[i]:
 * 1 and *dt when it is a real date. */
static int
year_end(const char *s, size_t n, size_t i, size_t j, int m, int d, struct xf_date *dt)
{
	int k, v, y;

	if ((k = number(s, n, &j, 4, &v)) == 0 || (y = year_of(v, k)) < 0 || !end_ok(s, n, j) ||
	    !xf_date_valid(y, m, d))
		return 0;
	memset(dt, 0, sizeof(*dt));
	dt->y = y, dt->m = m, dt->d = d;
	dt->start = i;
	dt->end = j;
	return 1;
}

/* "4 Dec 2026", "4th of December, 2026", "04-Dec-26", "4. Dezember 2026" */
static int
day_month_year(const char *s, size_t n, size_t i, struct xf_date *dt)
{
	size_t j = i, len;
	int d, k, m;

	if ((k = number(s, n, &j, 2, &d)) == 0)
		return 0;
	j = skip_ordinal(s, n, j);
	j = skip_seps(s, n, j, 0);
	if (n - j > 3 && lower((unsigned char)s[j]) == 'o' && lower((unsigned char)s[j + 1]) == 'f' &&
	    s[j + 2] == ' ')
		j += 3;
	if (j >= n || (m = month_at(s, j, n, &len)) == 0)
		return 0;
	j = skip_seps(s, n, j + len, 1);
	return year_end(s, n, i, j, m, d, dt);
}

/* "December 4, 2026", "Dec. 4 '26", "Dec 4th 2026" */
static int
month_day_year(const char *s, size_t n, size_t i, struct xf_date *dt)
{
	size_t j, len;
	int d, k, m;

	if ((m = month_at(s, i, n, &len)) == 0)
		return 0;
	j = skip_seps(s, n, i + len, 0);
	if ((k = number(s, n, &j, 2, &d)) == 0)
		return 0;
	j = skip_ordinal(s, n, j);
	j = skip_seps(s, n, j, 1);
	return year_end(s, n, i, j, m, d, dt);
}

int
xf_date_find(const char *s, size_t n, size_t from, enum xf_order order, struct xf_date *dt)
{
	size_t i;

	if (s == NULL || n > XF_TEXT_MAX)
		return 0;
	for (i = from; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (is_digit(c)) {
			if (i > 0 && is_digit((unsigned char)s[i - 1]))
				continue;
			if (i > 0 && (s[i - 1] == '.' || s[i - 1] == ',' || s[i - 1] == '/') &&
			    i > 1 && is_digit((unsigned char)s[i - 2]))
				continue;
			if (numeric_date(s, n, i, order, dt) || day_month_year(s, n, i, dt))
				return 1;
		} else if (is_alpha(c) || c >= 0x80) {
			if (month_day_year(s, n, i, dt))
				return 1;
		}
	}
	return 0;
}

const char *
xf_why(const char *prefix, const char *name)
{
	static const char *const whys[] = {
		"missing:payee_name", "missing:total_amount", "missing:due_date_iso",
		"low_confidence:payee_name", "low_confidence:total_amount",
		"low_confidence:due_date_iso", "check_failed:balance",
		"check_failed:line_items",
	};
	size_t k, p = strlen(prefix);

	for (k = 0; k < sizeof(whys) / sizeof(whys[0]); k++)
		if (strncmp(whys[k], prefix, p) == 0 && whys[k][p] == ':' &&
		    strcmp(whys[k] + p + 1, name) == 0)
			return whys[k];
	return strcmp(prefix, "check_failed") == 0 ? "check_failed:other" : "missing:other";
}
