/*
 * The catalog CSV: an RFC 4180 record reader (quoted fields may hold
 * commas, doubled quotes and line breaks) and the per-row check that
 * `bdsctl billers import` runs before it writes anything.
 */
#include <string.h>

#include "billers/billers_csv.h"
#include "core/arena.h"
#include "core/crypto.h"
#include "core/validate.h"

const char *const billers_csv_header[BC__MAX] = {
	"id", "name", "type", "status", "domains", "website", "login_url", "logo_url",
	"country", "connectivity_types", "consent_scopes", "capabilities", "connector",
	"base_url"
};

const char *const billers_types[] = { "electric", "gas", "water", "sewer", "waste",
	"internet", "mobile", "phone", "cable", "insurance", "other", NULL };
const char *const billers_statuses[] = { "ACTIVE", "DEGRADED", "UNSUPPORTED", NULL };
const char *const billers_connectivity_types[] = { "credentials", "oauth", "document", NULL };
const char *const billers_consent_scopes[] = { "bills", "statements", "payment_history",
	"usage", "account_details", "payments", NULL };
const char *const billers_capabilities[] = { "bills", "statements", "payment_history",
	"usage", "pay", "mfa", NULL };
static const char *const connectors[] = { "sandbox", "portal", NULL };

int
billers_in(const char *const *list, const char *s)
{
	for (size_t i = 0; s != NULL && list[i] != NULL; i++)
		if (strcmp(list[i], s) == 0)
			return 1;
	return 0;
}

void
billers_csv_init(struct billers_csv *c, const char *buf, size_t len)
{
	c->p = buf;
	c->end = buf + len;
	c->line = 1;
	c->rec_line = 0;
}

/* A growable field buffer in the arena. */
struct fbuf {
	char	*s;
	size_t	 n, cap;
};

static void
fb_put(struct arena *a, struct fbuf *b, char ch)
{
	if (b->n + 1 >= b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 64;
		char *s = arena_alloc(a, cap);

		if (b->n > 0)
			memcpy(s, b->s, b->n);
		b->s = s;
		b->cap = cap;
	}
	b->s[b->n++] = ch;
	b->s[b->n] = '\0';
}

static char *
fb_take(struct arena *a, struct fbuf *b)
{
	char *s = b->s != NULL ? b->s : arena_strdup(a, "");

	b->s = NULL;
	b->n = b->cap = 0;
	return s;
}

int
billers_csv_next(struct billers_csv *c, struct arena *a, char ***fields, size_t *n,
    const char **err)
{
	char **f = arena_alloc(a, sizeof(*f) * (BILLERS_CSV_MAX_FIELDS + 1));
	struct fbuf b = { NULL, 0, 0 };
	const char *start;
	size_t nf = 0;

	/* skip empty lines */
	while (c->p < c->end && (*c->p == '\n' || (*c->p == '\r' && c->p + 1 < c->end &&
	    c->p[1] == '\n'))) {
		c->p += *c->p == '\r' ? 2 : 1;
		c->line++;
	}
	if (c->p >= c->end)
		return 0;
	c->rec_line = c->line;
	start = c->p;
	for (;;) {
		int quoted = 0;

		if (c->p < c->end && *c->p == '"') {
			quoted = 1;
			c->p++;
			for (;;) {
				if (c->p >= c->end) {
					*err = "unterminated quoted field";
					return -1;
				}
				if (*c->p == '"') {
					if (c->p + 1 < c->end && c->p[1] == '"') {
						fb_put(a, &b, '"');
						c->p += 2;
						continue;
					}
					c->p++;
					break;
				}
				if (*c->p == '\0') {
					*err = "NUL byte in the record";
					return -1;
				}
				if (*c->p == '\n')
					c->line++;
				fb_put(a, &b, *c->p++);
				if ((size_t)(c->p - start) > BILLERS_CSV_MAX_RECORD) {
					*err = "record too long";
					return -1;
				}
			}
		}
		/* the rest of an unquoted field, or what follows a closing quote */
		while (c->p < c->end && *c->p != ',' && *c->p != '\n' &&
		    !(*c->p == '\r' && c->p + 1 < c->end && c->p[1] == '\n')) {
			if (quoted) {
				*err = "text after a closing quote";
				return -1;
			}
			if (*c->p == '"') {
				*err = "quote inside an unquoted field";
				return -1;
			}
			if (*c->p == '\0' || *c->p == '\r') {
				*err = *c->p == '\0' ? "NUL byte in the record" :
				    "carriage return inside an unquoted field";
				return -1;
			}
			fb_put(a, &b, *c->p++);
			if ((size_t)(c->p - start) > BILLERS_CSV_MAX_RECORD) {
				*err = "record too long";
				return -1;
			}
		}
		if (nf == BILLERS_CSV_MAX_FIELDS) {
			*err = "too many fields";
			return -1;
		}
		f[nf++] = fb_take(a, &b);
		if (c->p < c->end && *c->p == ',') {
			c->p++;
			continue;
		}
		/* end of record: a line end or the end of the input */
		if (c->p < c->end) {
			c->p += *c->p == '\r' ? 2 : 1;
			c->line++;
		}
		break;
	}
	f[nf] = NULL;
	*fields = f;
	*n = nf;
	return 1;
}

int
billers_csv_header_ok(char *const *fields, size_t n)
{
	if (n != BC__MAX)
		return 0;
	for (size_t i = 0; i < n; i++) {
		const char *s = fields[i];

		/* a UTF-8 byte order mark before the first column is tolerated */
		if (i == 0 && strncmp(s, "\xef\xbb\xbf", 3) == 0)
			s += 3;
		if (strcmp(s, billers_csv_header[i]) != 0)
			return 0;
	}
	return 1;
}

int
billers_host_ok(const char *s)
{
	size_t len = strlen(s), label = 0, labels = 1;

	if (len == 0 || len > 253 || s[0] == '.' || s[len - 1] == '.')
		return 0;
	for (size_t i = 0; i < len; i++) {
		char ch = s[i];

		if (ch == '.') {
			if (label == 0 || s[i - 1] == '-')
				return 0;
			label = 0;
			labels++;
			continue;
		}
		if (!((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '-'))
			return 0;
		if (ch == '-' && label == 0)
			return 0;
		if (++label > 63)
			return 0;
	}
	return labels >= 2 && s[len - 1] != '-';
}

/*
 * A '|' list: each item checked (enum when list != NULL, else a host
 * name), no duplicates, rewritten as a PostgreSQL array literal. Items
 * are plain [a-z0-9._-] words, so the literal needs no quoting.
 */
static int
list_check(struct arena *a, char **v, const char *const *list, const char **msg)
{
	const char *s = *v;
	char *out = arena_alloc(a, strlen(s) + 3), *o = out;
	const char *seen[64];
	size_t nseen = 0;

	*o++ = '{';
	while (*s != '\0') {
		size_t len = strcspn(s, "|");
		char *item = arena_strndup(a, s, len);

		if (len == 0) {
			*msg = "has an empty list item";
			return -1;
		}
		if (list != NULL ? !billers_in(list, item) : !billers_host_ok(item)) {
			*msg = list != NULL ? "has an unknown value" :
			    "has an item that is not a lower-case host name";
			return -1;
		}
		for (size_t i = 0; i < nseen; i++)
			if (strcmp(seen[i], item) == 0) {
				*msg = "repeats an item";
				return -1;
			}
		if (nseen == sizeof(seen) / sizeof(seen[0])) {
			*msg = "has too many items";
			return -1;
		}
		seen[nseen++] = item;
		if (o != out + 1)
			*o++ = ',';
		memcpy(o, item, len);
		o += len;
		s += len;
		if (*s == '|') {
			s++;
			if (*s == '\0') {
				*msg = "has an empty list item";
				return -1;
			}
		}
	}
	*o++ = '}';
	*o = '\0';
	*v = out;
	return 0;
}

static int
bad(const char **field, const char **msg, enum billers_csv_col c, const char *m)
{
	*field = billers_csv_header[c];
	*msg = m;
	return -1;
}

/* http on a loopback address: a development portal (tools/biller-sim); the
 * connector still refuses http outside the dev allowance. */
static int
loopback_http(const char *u)
{
	static const char *const hosts[] = { "http://127.0.0.1:", "http://localhost:",
	    "http://[::1]:", NULL };

	for (size_t i = 0; hosts[i] != NULL; i++)
		if (strncmp(u, hosts[i], strlen(hosts[i])) == 0)
			return validate_format(VF_URL, u);
	return 0;
}

int
billers_csv_row_check(struct arena *a, char **f, size_t n, const char **field,
    const char **msg)
{
	static const enum billers_csv_col urls[] = { BC_WEBSITE, BC_LOGIN_URL, BC_LOGO_URL,
	    BC_BASE_URL };
	static const struct { enum billers_csv_col col; const char *const *list; } lists[] = {
		{ BC_DOMAINS, NULL },
		{ BC_CONNECTIVITY, billers_connectivity_types },
		{ BC_CONSENTS, billers_consent_scopes },
		{ BC_CAPABILITIES, billers_capabilities },
	};
	size_t len;

	if (n != BC__MAX) {
		*field = n < BC__MAX ? billers_csv_header[n] : "";
		*msg = n < BC__MAX ? "is missing (too few fields)" : "too many fields";
		return -1;
	}
	if (!crypto_id_valid(f[BC_ID], "blr", 0))
		return bad(field, msg, BC_ID, "is not blr_ followed by a UUID");
	len = strlen(f[BC_NAME]);
	if (len == 0 || len > 200)
		return bad(field, msg, BC_NAME, "must be 1 to 200 bytes");
	if (!validate_utf8(f[BC_NAME], len))
		return bad(field, msg, BC_NAME, "is not valid UTF-8");
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)f[BC_NAME][i] < 0x20 || f[BC_NAME][i] == 0x7f)
			return bad(field, msg, BC_NAME, "holds a control character");
	if (f[BC_NAME][0] == ' ' || f[BC_NAME][len - 1] == ' ')
		return bad(field, msg, BC_NAME, "has leading or trailing spaces");
	if (!billers_in(billers_types, f[BC_TYPE]))
		return bad(field, msg, BC_TYPE, "is not a biller type");
	if (!billers_in(billers_statuses, f[BC_STATUS]))
		return bad(field, msg, BC_STATUS, "is not ACTIVE, DEGRADED or UNSUPPORTED");
	for (size_t i = 0; i < sizeof(lists) / sizeof(lists[0]); i++)
		if (list_check(a, &f[lists[i].col], lists[i].list, msg) != 0) {
			*field = billers_csv_header[lists[i].col];
			return -1;
		}
	if (strlen(f[BC_COUNTRY]) != 2 || f[BC_COUNTRY][0] < 'A' || f[BC_COUNTRY][0] > 'Z' ||
	    f[BC_COUNTRY][1] < 'A' || f[BC_COUNTRY][1] > 'Z')
		return bad(field, msg, BC_COUNTRY, "is not two upper-case letters (ISO 3166)");
	if (!billers_in(connectors, f[BC_CONNECTOR]))
		return bad(field, msg, BC_CONNECTOR, "is not sandbox or portal");
	for (size_t i = 0; i < sizeof(urls) / sizeof(urls[0]); i++) {
		char *u = f[urls[i]];

		if (u[0] == '\0') {
			f[urls[i]] = NULL;
			continue;
		}
		if (strlen(u) > 2048 || !(validate_format(VF_HTTPS_URL, u) ||
		    (urls[i] == BC_BASE_URL && loopback_http(u))))
			return bad(field, msg, urls[i], urls[i] == BC_BASE_URL ?
			    "is not an https URL (or http on a loopback address, for development)" :
			    "is not an https URL");
	}
	/* an UNSUPPORTED biller is never connected: it may have none */
	if (strcmp(f[BC_CONNECTOR], "portal") == 0 && f[BC_BASE_URL] == NULL &&
	    strcmp(f[BC_STATUS], "UNSUPPORTED") != 0)
		return bad(field, msg, BC_BASE_URL, "is required for a portal biller that is not"
		    " UNSUPPORTED");
	return 0;
}
