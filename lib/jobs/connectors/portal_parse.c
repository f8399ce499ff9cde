/*
 * The portal connector's answers, validated (portal.h, docs/portal.md
 * "What is checked"). Every answer is untrusted: a field the connector uses
 * is checked for its type, its form and its range before anything is made
 * of it; unknown members are ignored and order never matters. A bad answer
 * is refused whole, naming the first bad field by its JSON path.
 *
 * A field spec table per object (kcgi's keys[]): name, kind, required,
 * bounds; one walker fills a value array the builders read.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/arena.h"
#include "core/json.h"
#include "core/money.h"
#include "core/validate.h"
#include "jobs/connectors/portal.h"

/* ---- money ---- */

int
portal_money_parse(const char *s, int exponent, long long *minor)
{
	static const long long limit = 1000000000000000LL;	/* 10^PORTAL_MONEY_DIGITS */
	long long v;

	if (money_parse(s, exponent, MONEY_SIGNED | MONEY_EXACT, &v) != MONEY_OK ||
	    v <= -limit || v >= limit)
		return -1;
	*minor = v;
	return 0;
}

/* ---- the walker ---- */

enum pkind {
	PK_ID,		/* 1..PORTAL_ID_MAX bytes, no control characters */
	PK_TEXT,	/* 0..max bytes (PORTAL_TEXT_MAX when max is 0), no controls */
	PK_TOKEN,	/* 1..PORTAL_TOKEN_MAX visible ASCII: goes into headers */
	PK_CURRENCY,	/* an active ISO 4217 code */
	PK_MONEY,	/* a decimal string at the statement's exponent */
	PK_DATE,	/* YYYY-MM-DD */
	PK_INSTANT,	/* RFC 3339 */
	PK_BOOL,
	PK_INT,		/* an integer in [min, max] */
	PK_NUMBER,	/* a finite number, |x| <= PORTAL_QUANTITY_MAX */
	PK_ENUM,	/* a string of the NULL-terminated list */
	PK_OBJECT,
	PK_ARRAY	/* at most max items */
};

#define P_REQ	1	/* present and not null */
#define P_FIG	2	/* a figure: required of a structured statement only */

struct pfield {
	const char		*name;
	enum pkind		 kind;
	unsigned		 flags;
	long long		 min, max;
	const char *const	*oneof;
};

/* A field's value as the walker found it; set 0 when absent or null. */
struct pval {
	int			 set;
	const char		*s;
	long long		 i;	/* INT, BOOL, MONEY (minor units) */
	double			 d;
	struct json_object	*o;	/* OBJECT, ARRAY */
};

struct pctx {
	struct arena	*a;
	const char	**why;
	int		 exponent;	/* of the statement's currency; -1: none yet */
	int		 unstructured;	/* the statement says structured: false */
};

static int
bad(struct pctx *c, const char *path, const char *name)
{
	*c->why = name != NULL ? arena_printf(c->a, "%s.%s", path, name) : path;
	return -1;
}

/* "-"? digits ("." digits)?, at most 40 characters: a quantity as text. */
static int
decimal_text(const char *s)
{
	const char *p = s + (*s == '-'), *q;

	for (q = p; *q >= '0' && *q <= '9'; q++)
		;
	if (q == p)
		return 0;
	if (*q == '.') {
		for (p = ++q; *q >= '0' && *q <= '9'; q++)
			;
		if (q == p)
			return 0;
	}
	return *q == '\0' && q - s <= 40;
}

/*
 * An RFC 3339 instant (validate_format checked it) in one form, UTC with
 * microseconds: "2026-11-16T12:00:00+02:00" and "2026-11-16T10:00:00Z" are
 * the same "2026-11-16T10:00:00.000000Z", so instants order as strings.
 * Digits past the microsecond are dropped. NULL when out of range.
 */
static const char *
instant_utc(struct arena *a, const char *s)
{
	struct tm tm = { 0 };
	const char *z = s + 19;
	long usec = 0, off = 0;
	int digits = 0;
	time_t t;

	tm.tm_year = atoi(s) - 1900;
	tm.tm_mon = atoi(s + 5) - 1;
	tm.tm_mday = atoi(s + 8);
	tm.tm_hour = atoi(s + 11);
	tm.tm_min = atoi(s + 14);
	tm.tm_sec = atoi(s + 17);
	if (*z == '.')
		for (z++; *z >= '0' && *z <= '9'; z++)
			if (digits++ < 6)
				usec = usec * 10 + (*z - '0');
	for (; digits < 6; digits++)
		usec *= 10;
	if (*z == '+' || *z == '-')
		off = (*z == '-' ? -1 : 1) * (atoi(z + 1) * 3600L + atoi(z + 4) * 60L);
	if ((t = timegm(&tm)) == (time_t)-1 || gmtime_r(&(time_t){ t - off }, &tm) == NULL ||
	    tm.tm_year + 1900 < 1 || tm.tm_year + 1900 > 9999)
		return NULL;
	return arena_printf(a, "%04d-%02d-%02dT%02d:%02d:%02d.%06ldZ", tm.tm_year + 1900,
	    tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, usec);
}

static int
no_controls(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
			return 0;
	return 1;
}

static int
visible_ascii(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)s[i] <= 0x20 || (unsigned char)s[i] >= 0x7f)
			return 0;
	return 1;
}

/* One field of o into *v; 0 ok, -1 (why set). */
static int
field(struct pctx *c, struct json_object *o, const char *path, const struct pfield *f,
    struct pval *v)
{
	struct json_object *j = NULL;
	enum json_type t;
	size_t len = 0;

	memset(v, 0, sizeof(*v));
	if (!json_object_object_get_ex(o, f->name, &j) || j == NULL)
		return (f->flags & P_REQ) || ((f->flags & P_FIG) && !c->unstructured) ?
		    bad(c, path, f->name) : 0;
	t = json_object_get_type(j);
	switch (f->kind) {
	case PK_ID:
	case PK_TEXT:
	case PK_TOKEN:
	case PK_CURRENCY:
	case PK_MONEY:
	case PK_DATE:
	case PK_INSTANT:
	case PK_ENUM:
		if (t != json_type_string)
			return bad(c, path, f->name);
		v->s = json_object_get_string(j);
		len = (size_t)json_object_get_string_len(j);
		if (strlen(v->s) != len)	/* an embedded NUL */
			return bad(c, path, f->name);
		break;
	case PK_BOOL:
		if (t != json_type_boolean)
			return bad(c, path, f->name);
		v->i = json_object_get_boolean(j);
		v->set = 1;
		return 0;
	case PK_INT:
		/* an integral number written as 1.0 is the integer 1 */
		if (t == json_type_double) {
			double d = json_object_get_double(j);

			if (!isfinite(d) || d != floor(d) || fabs(d) > 1e15)
				return bad(c, path, f->name);
			v->i = (long long)d;
		} else if (t == json_type_int) {
			v->i = json_object_get_int64(j);
		} else {
			return bad(c, path, f->name);
		}
		/* json-c clamps an out-of-range integer to INT64_MIN/MAX */
		if (v->i < f->min || v->i > f->max || v->i == INT64_MAX || v->i == INT64_MIN)
			return bad(c, path, f->name);
		v->set = 1;
		return 0;
	case PK_NUMBER:
		/* a number, or a decimal string as money is written ("4.125") */
		if (t == json_type_string) {
			if (!decimal_text(json_object_get_string(j)))
				return bad(c, path, f->name);
			v->d = strtod(json_object_get_string(j), NULL);
		} else if (t == json_type_int || t == json_type_double) {
			v->d = json_object_get_double(j);
		} else {
			return bad(c, path, f->name);
		}
		if (!isfinite(v->d) || fabs(v->d) > PORTAL_QUANTITY_MAX)
			return bad(c, path, f->name);
		v->set = 1;
		return 0;
	case PK_OBJECT:
		if (t != json_type_object)
			return bad(c, path, f->name);
		v->o = j;
		v->set = 1;
		return 0;
	case PK_ARRAY:
		if (t != json_type_array || json_object_array_length(j) > (size_t)f->max)
			return bad(c, path, f->name);
		v->o = j;
		v->set = 1;
		return 0;
	}
	switch (f->kind) {
	case PK_ID:
		if (len == 0 || len > PORTAL_ID_MAX || !no_controls(v->s, len))
			return bad(c, path, f->name);
		break;
	case PK_TEXT:
		if (len > (size_t)(f->max > 0 ? f->max : PORTAL_TEXT_MAX) ||
		    len < (size_t)f->min || !no_controls(v->s, len))
			return bad(c, path, f->name);
		break;
	case PK_TOKEN:
		if (len == 0 || len > PORTAL_TOKEN_MAX || !visible_ascii(v->s, len))
			return bad(c, path, f->name);
		break;
	case PK_CURRENCY:
		if (money_exponent(v->s) < 0)
			return bad(c, path, f->name);
		break;
	case PK_MONEY:
		if (c->exponent < 0 || portal_money_parse(v->s, c->exponent, &v->i) != 0 ||
		    v->i < f->min || v->i > f->max)
			return bad(c, path, f->name);
		break;
	case PK_DATE:
		if (!validate_format(VF_DATE, v->s))
			return bad(c, path, f->name);
		break;
	case PK_INSTANT:
		if (!validate_format(VF_DATETIME, v->s) || (v->s = instant_utc(c->a, v->s)) == NULL)
			return bad(c, path, f->name);
		break;
	case PK_ENUM: {
		size_t i;

		for (i = 0; f->oneof[i] != NULL && strcmp(f->oneof[i], v->s) != 0; i++)
			;
		if (f->oneof[i] == NULL)
			return bad(c, path, f->name);
		break;
	}
	default:
		break;
	}
	v->set = 1;
	return 0;
}

/* Every field of spec (NULL-name terminated) of the object j at path into
 * vals. 0 ok, -1. */
static int
fields(struct pctx *c, struct json_object *j, const char *path, const struct pfield *spec,
    struct pval *vals)
{
	if (j == NULL || json_object_get_type(j) != json_type_object)
		return bad(c, path, NULL);
	for (size_t i = 0; spec[i].name != NULL; i++)
		if (field(c, j, path, &spec[i], &vals[i]) != 0)
			return -1;
	return 0;
}

/* The answer's top-level object, or NULL (why "body"). */
static struct json_object *
answer(struct pctx *c, const char *body, size_t len)
{
	struct json_object *o;
	const char *jwhy;

	/* a UTF-8 byte order mark before the JSON is ignored (RFC 8259, 8.1) */
	if (body != NULL && len >= 3 && memcmp(body, "\xEF\xBB\xBF", 3) == 0) {
		body += 3;
		len -= 3;
	}
	if (body == NULL || len > (size_t)PORTAL_JSON_MAX ||
	    (o = json_parse(c->a, body, len, &jwhy)) == NULL ||
	    json_object_get_type(o) != json_type_object) {
		*c->why = "body";
		return NULL;
	}
	return o;
}

/* An array member of the top-level object (required), at most max items. */
static struct json_object *
list(struct pctx *c, struct json_object *o, const char *name, long long max)
{
	const struct pfield f = { name, PK_ARRAY, P_REQ, 0, max, NULL };
	struct pval v;

	return field(c, o, "", &f, &v) == 0 ? v.o : NULL;
}

/* 1 when ref is already among the first n ids (a list holds each once). */
static int
seen(const char *const *ids, size_t n, const char *ref)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(ids[i], ref) == 0)
			return 1;
	return 0;
}

/* Item i of arr as a path ("statements[3]"). */
static const char *
item_path(struct pctx *c, const char *base, size_t i)
{
	return arena_printf(c->a, "%s[%zu]", base, i);
}

/* A path's leading "." dropped (top-level members). */
#define TOP(s)	((s) + 1)

/* One item of a list at path into slot; *id its id (unique in the list). */
typedef int (*item_fn)(struct pctx *, struct json_object *j, const char *path,
    const char *account_ref, void *slot, const char **id);

/*
 * The answer's list member name (at most max items, each size bytes made
 * by fn): the items (arena, *n of them), or NULL with *why. An id twice in
 * the list is refused.
 */
static void *
parse_list(struct arena *a, const char *body, size_t len, const char *name, long long max,
    size_t size, item_fn fn, const char *account_ref, size_t *n, const char **why)
{
	struct pctx c = { a, why, -1 };
	struct json_object *o, *arr;
	const char **ids;
	char *items;
	size_t cnt;

	*n = 0;
	if ((o = answer(&c, body, len)) == NULL || (arr = list(&c, o, name, max)) == NULL)
		goto fail;
	cnt = json_object_array_length(arr);
	items = arena_alloc(a, (cnt + 1) * size);
	ids = arena_alloc(a, (cnt + 1) * sizeof(*ids));
	for (size_t i = 0; i < cnt; i++) {
		const char *path = item_path(&c, name, i);

		memset(items + i * size, 0, size);
		c.exponent = -1;
		if (fn(&c, json_object_array_get_idx(arr, i), path, account_ref, items + i * size,
		    &ids[i]) != 0)
			goto fail;
		if (seen(ids, i, ids[i])) {
			bad(&c, path, "id");
			goto fail;
		}
	}
	*n = cnt;
	return items;
fail:
	if (**why == '.')
		*why = TOP(*why);
	return NULL;
}

/* ---- login ---- */

enum { LG_SESSION, LG_EXPIRES, LG_DEVICE, LG_MFA, LG__MAX };
static const struct pfield login_spec[] = {
	[LG_SESSION] = { "session", PK_TOKEN, 0, 0, 0, NULL },
	[LG_EXPIRES] = { "expires_in", PK_INT, 0, 0, 1000000000, NULL },
	[LG_DEVICE] = { "device_token", PK_TOKEN, 0, 0, 0, NULL },
	[LG_MFA] = { "mfa", PK_OBJECT, 0, 0, 0, NULL },
	{ NULL }
};
enum { CH_ID, CH_TYPE, CH_PROMPT, CH__MAX };
static const struct pfield challenge_spec[] = {
	[CH_ID] = { "challenge_id", PK_TOKEN, P_REQ, 0, 0, NULL },
	[CH_TYPE] = { "type", PK_TEXT, P_REQ, 1, 32, NULL },
	[CH_PROMPT] = { "prompt", PK_TEXT, P_REQ, 1, PORTAL_TEXT_MAX, NULL },
	{ NULL }
};

int
portal_parse_login(struct arena *a, const char *body, size_t len, int mfa,
    struct portal_login *out, const char **why)
{
	struct pctx c = { a, why, -1 };
	struct pval v[LG__MAX], ch[CH__MAX];
	struct json_object *o;

	memset(out, 0, sizeof(*out));
	if ((o = answer(&c, body, len)) == NULL || fields(&c, o, "", login_spec, v) != 0)
		goto fail;
	/* a challenge: only POST /session answers one */
	if (v[LG_MFA].set && !mfa) {
		if (fields(&c, v[LG_MFA].o, "mfa", challenge_spec, ch) != 0)
			goto fail;
		out->challenge_id = ch[CH_ID].s;
		out->mfa_type = ch[CH_TYPE].s;
		out->mfa_prompt = ch[CH_PROMPT].s;
		return 0;
	}
	if (!v[LG_SESSION].set) {
		bad(&c, "", "session");
		goto fail;
	}
	if (!v[LG_EXPIRES].set) {
		bad(&c, "", "expires_in");
		goto fail;
	}
	out->session = v[LG_SESSION].s;
	out->expires_in = v[LG_EXPIRES].i;
	out->device_token = mfa && v[LG_DEVICE].set ? v[LG_DEVICE].s : NULL;
	return 0;
fail:
	if (**why == '.')
		*why = TOP(*why);
	return -1;
}

/* ---- accounts ---- */

static const char *const account_statuses[] = { "active", "closed", NULL };
enum { AC_ID, AC_NAME, AC_TYPE, AC_MASK, AC_ADDRESS, AC_STATUS, AC__MAX };
static const struct pfield account_spec[] = {
	[AC_ID] = { "id", PK_ID, P_REQ, 0, 0, NULL },
	[AC_NAME] = { "name", PK_TEXT, 0, 0, 200, NULL },
	[AC_TYPE] = { "type", PK_TEXT, 0, 0, 64, NULL },
	[AC_MASK] = { "number_mask", PK_TEXT, 0, 0, 32, NULL },
	[AC_ADDRESS] = { "service_address", PK_TEXT, 0, 0, 300, NULL },
	[AC_STATUS] = { "status", PK_ENUM, P_REQ, 0, 0, account_statuses },
	{ NULL }
};

static int
account_item(struct pctx *c, struct json_object *j, const char *path, const char *account_ref,
    void *slot, const char **id)
{
	struct connector_account *acc = slot;
	struct pval v[AC__MAX];

	(void)account_ref;
	if (fields(c, j, path, account_spec, v) != 0)
		return -1;
	*id = acc->ref = v[AC_ID].s;
	acc->name = v[AC_NAME].s;
	acc->type = v[AC_TYPE].s;
	acc->mask = v[AC_MASK].s;
	acc->service_address = v[AC_ADDRESS].s;
	acc->closed = strcmp(v[AC_STATUS].s, "closed") == 0;
	return 0;
}

int
portal_parse_accounts(struct arena *a, const char *body, size_t len,
    struct connector_account **out, size_t *n, const char **why)
{
	*out = parse_list(a, body, len, "accounts", PORTAL_ACCOUNTS_MAX, sizeof(**out),
	    account_item, NULL, n, why);
	return *out != NULL ? 0 : -1;
}

/* ---- statements ---- */

#define MONEY_MAX	999999999999999LL	/* 15 digits */

static const char *const categories[] = { "usage", "fee", "tax", "credit", "adjustment",
	"other", NULL };

enum {
	ST_ID, ST_REVISION, ST_WITHDRAWN, ST_DATE, ST_DUE, ST_PERIOD, ST_NUMBER, ST_CURRENCY,
	ST_AMOUNT_DUE, ST_PREVIOUS, ST_RECEIVED, ST_CHARGES, ST_BALANCE, ST_ITEMS, ST_USAGE,
	ST_STRUCTURED, ST_DOCUMENT, ST__MAX
};
/* Read first: the currency (every money field is read at its exponent) and
 * whether the figures are required (structured: false asks only for the
 * document). */
enum { SH_CURRENCY, SH_STRUCTURED, SH__MAX };
static const struct pfield statement_head[] = {
	[SH_CURRENCY] = { "currency", PK_CURRENCY, P_REQ, 0, 0, NULL },
	[SH_STRUCTURED] = { "structured", PK_BOOL, P_REQ, 0, 0, NULL },
	{ NULL }
};
static const struct pfield statement_spec[] = {
	[ST_ID] = { "id", PK_ID, P_REQ, 0, 0, NULL },
	[ST_REVISION] = { "revision", PK_INT, P_REQ, 1, PORTAL_REVISION_MAX, NULL },
	[ST_WITHDRAWN] = { "withdrawn", PK_BOOL, P_REQ, 0, 0, NULL },
	[ST_DATE] = { "statement_date", PK_DATE, P_REQ, 0, 0, NULL },
	[ST_DUE] = { "due_date", PK_DATE, 0, 0, 0, NULL },
	[ST_PERIOD] = { "service_period", PK_OBJECT, 0, 0, 0, NULL },
	[ST_NUMBER] = { "bill_number", PK_TEXT, 0, 0, PORTAL_ID_MAX, NULL },
	[ST_CURRENCY] = { "currency", PK_CURRENCY, P_REQ, 0, 0, NULL },
	[ST_AMOUNT_DUE] = { "amount_due", PK_MONEY, P_FIG, -MONEY_MAX, MONEY_MAX, NULL },
	[ST_PREVIOUS] = { "previous_balance", PK_MONEY, 0, -MONEY_MAX, MONEY_MAX, NULL },
	[ST_RECEIVED] = { "payments_received", PK_MONEY, 0, -MONEY_MAX, MONEY_MAX, NULL },
	[ST_CHARGES] = { "current_charges", PK_MONEY, 0, -MONEY_MAX, MONEY_MAX, NULL },
	/* what is still owed: never below zero */
	[ST_BALANCE] = { "balance_remaining", PK_MONEY, P_FIG, 0, MONEY_MAX, NULL },
	[ST_ITEMS] = { "line_items", PK_ARRAY, P_FIG, 0, PORTAL_ITEMS_MAX, NULL },
	[ST_USAGE] = { "usage", PK_ARRAY, P_FIG, 0, PORTAL_USAGE_MAX, NULL },
	[ST_STRUCTURED] = { "structured", PK_BOOL, P_REQ, 0, 0, NULL },
	[ST_DOCUMENT] = { "document", PK_OBJECT, P_REQ, 0, 0, NULL },
	{ NULL }
};
enum { SP_START, SP_END, SP__MAX };
static const struct pfield period_spec[] = {
	[SP_START] = { "start", PK_DATE, P_REQ, 0, 0, NULL },
	[SP_END] = { "end", PK_DATE, P_REQ, 0, 0, NULL },
	{ NULL }
};
enum { LI_DESCRIPTION, LI_AMOUNT, LI_CATEGORY, LI_QUANTITY, LI_UNIT, LI__MAX };
static const struct pfield item_spec[] = {
	[LI_DESCRIPTION] = { "description", PK_TEXT, P_REQ, 1, PORTAL_TEXT_MAX, NULL },
	[LI_AMOUNT] = { "amount", PK_MONEY, P_REQ, -MONEY_MAX, MONEY_MAX, NULL },
	[LI_CATEGORY] = { "category", PK_ENUM, P_REQ, 0, 0, categories },
	[LI_QUANTITY] = { "quantity", PK_NUMBER, 0, 0, 0, NULL },
	[LI_UNIT] = { "unit", PK_TEXT, 0, 0, 32, NULL },
	{ NULL }
};
enum { US_TYPE, US_QUANTITY, US_UNIT, US__MAX };
static const struct pfield usage_spec[] = {
	[US_TYPE] = { "type", PK_TEXT, P_REQ, 1, 64, NULL },
	[US_QUANTITY] = { "quantity", PK_NUMBER, P_REQ, 0, 0, NULL },
	[US_UNIT] = { "unit", PK_TEXT, 0, 0, 32, NULL },
	{ NULL }
};
enum { DC_AVAILABLE, DC_TYPE, DC__MAX };
static const char *const pdf_only[] = { "application/pdf", NULL };
static const struct pfield document_spec[] = {
	[DC_AVAILABLE] = { "available", PK_BOOL, P_REQ, 0, 0, NULL },
	[DC_TYPE] = { "content_type", PK_ENUM, 0, 0, 0, pdf_only },
	{ NULL }
};

static struct bills_money
money(const struct pval *v, const char *currency)
{
	struct bills_money m = { v->set ? v->i : 0, currency };

	return m;
}

/* The line items and usage of statement v into b. */
static int
statement_lists(struct pctx *c, const char *path, struct pval *v, struct bills_statement *b)
{
	const char *currency = b->total.currency;
	size_t ni = v[ST_ITEMS].set ? json_object_array_length(v[ST_ITEMS].o) : 0;
	size_t nu = v[ST_USAGE].set ? json_object_array_length(v[ST_USAGE].o) : 0;
	struct pval f[LI__MAX];

	b->items = arena_alloc(c->a, (ni + 1) * sizeof(*b->items));
	for (size_t i = 0; i < ni; i++) {
		struct bills_line_item *it = &b->items[i];

		if (fields(c, json_object_array_get_idx(v[ST_ITEMS].o, i),
		    item_path(c, arena_printf(c->a, "%s.line_items", path), i), item_spec, f) != 0)
			return -1;
		memset(it, 0, sizeof(*it));
		it->description = f[LI_DESCRIPTION].s;
		it->amount = money(&f[LI_AMOUNT], currency);
		it->category = f[LI_CATEGORY].s;
		it->has_quantity = f[LI_QUANTITY].set;
		it->quantity = f[LI_QUANTITY].d;
		it->unit = f[LI_UNIT].s;
	}
	b->nitems = ni;
	b->usage = arena_alloc(c->a, (nu + 1) * sizeof(*b->usage));
	for (size_t i = 0; i < nu; i++) {
		if (fields(c, json_object_array_get_idx(v[ST_USAGE].o, i),
		    item_path(c, arena_printf(c->a, "%s.usage", path), i), usage_spec, f) != 0)
			return -1;
		b->usage[i].type = f[US_TYPE].s;
		b->usage[i].quantity = f[US_QUANTITY].d;
		b->usage[i].unit = f[US_UNIT].s;
	}
	b->nusage = nu;
	return 0;
}

/* One statement object at path into *st. */
static int
statement(struct pctx *c, struct json_object *j, const char *path, const char *account_ref,
    struct connector_statement *st)
{
	struct pval v[ST__MAX], head[SH__MAX], sp[SP__MAX], dc[DC__MAX];
	struct bills_statement *b = &st->b;
	const char *currency;
	int rc;

	c->exponent = -1;
	if (fields(c, j, path, statement_head, head) != 0)
		return -1;
	currency = head[SH_CURRENCY].s;
	c->exponent = money_exponent(currency);
	c->unstructured = !head[SH_STRUCTURED].i;
	rc = fields(c, j, path, statement_spec, v);
	c->unstructured = 0;
	if (rc != 0)
		return -1;
	memset(st, 0, sizeof(*st));
	b->ref = v[ST_ID].s;
	b->account_ref = account_ref;
	b->revision = (int)v[ST_REVISION].i;
	b->withdrawn = (int)v[ST_WITHDRAWN].i;
	b->statement_date = v[ST_DATE].s;
	b->due_date = v[ST_DUE].s;
	if (v[ST_PERIOD].set) {
		if (fields(c, v[ST_PERIOD].o, arena_printf(c->a, "%s.service_period", path),
		    period_spec, sp) != 0)
			return -1;
		/* the same form: text order is date order */
		if (strcmp(sp[SP_START].s, sp[SP_END].s) > 0)
			return bad(c, path, "service_period.end");
		b->period_start = sp[SP_START].s;
		b->period_end = sp[SP_END].s;
	}
	b->bill_number = v[ST_NUMBER].s;
	/* the statement's total is the amount it asks for; see docs/portal.md */
	b->total = money(&v[ST_AMOUNT_DUE], currency);
	b->amount_due = b->total;
	b->previous_balance = money(&v[ST_PREVIOUS], currency);
	/* the statement's other figures, kept when the biller gives both,
	 * and what is still owed on it today */
	b->payments_received = money(&v[ST_RECEIVED], currency);
	b->current_charges = money(&v[ST_CHARGES], currency);
	b->has_figures = v[ST_RECEIVED].set && v[ST_CHARGES].set;
	st->balance = money(&v[ST_BALANCE], currency);
	b->balance = st->balance;
	b->has_balance = v[ST_BALANCE].set;
	if (statement_lists(c, path, v, b) != 0)
		return -1;
	st->structured = (int)v[ST_STRUCTURED].i;
	if (fields(c, v[ST_DOCUMENT].o, arena_printf(c->a, "%s.document", path), document_spec,
	    dc) != 0)
		return -1;
	if (dc[DC_AVAILABLE].i && !dc[DC_TYPE].set)
		return bad(c, path, "document.content_type");
	st->document = (int)dc[DC_AVAILABLE].i;
	b->has_document = st->document;
	/* nothing owed any more: paid (the payments may name the reason); an
	 * unstructured statement's figures, if any, are not used */
	if (st->structured && st->balance.minor == 0) {
		b->status = "PAID";
		b->paid_reason = "portal_balance_zero";
	} else {
		b->status = "PENDING";
	}
	return 0;
}

static int
statement_item(struct pctx *c, struct json_object *j, const char *path,
    const char *account_ref, void *slot, const char **id)
{
	struct connector_statement *st = slot;

	if (statement(c, j, path, account_ref, st) != 0)
		return -1;
	*id = st->b.ref;
	return 0;
}

int
portal_parse_statements(struct arena *a, const char *body, size_t len,
    const char *account_ref, struct connector_statement **out, size_t *n, const char **why)
{
	*out = parse_list(a, body, len, "statements", PORTAL_STATEMENTS_MAX, sizeof(**out),
	    statement_item, account_ref, n, why);
	return *out != NULL ? 0 : -1;
}

/* ---- payments ---- */

static const char *const payment_statuses[] = { "posted", "reversed", NULL };
enum { PY_ID, PY_AMOUNT, PY_PAID_AT, PY_STATUS, PY_STATEMENT, PY__MAX };
static const struct pfield payment_head[] = {
	{ "currency", PK_CURRENCY, P_REQ, 0, 0, NULL },
	{ NULL }
};
static const struct pfield payment_spec[] = {
	[PY_ID] = { "id", PK_ID, P_REQ, 0, 0, NULL },
	/* a payment pays something */
	[PY_AMOUNT] = { "amount", PK_MONEY, P_REQ, 1, MONEY_MAX, NULL },
	[PY_PAID_AT] = { "paid_at", PK_INSTANT, P_REQ, 0, 0, NULL },
	[PY_STATUS] = { "status", PK_ENUM, P_REQ, 0, 0, payment_statuses },
	[PY_STATEMENT] = { "statement_id", PK_ID, 0, 0, 0, NULL },
	{ NULL }
};

static int
payment_item(struct pctx *c, struct json_object *j, const char *path, const char *account_ref,
    void *slot, const char **id)
{
	struct bills_payment *p = slot;
	struct pval v[PY__MAX], head[1];

	if (fields(c, j, path, payment_head, head) != 0)
		return -1;
	c->exponent = money_exponent(head[0].s);
	if (fields(c, j, path, payment_spec, v) != 0)
		return -1;
	*id = p->ref = v[PY_ID].s;
	p->account_ref = account_ref;
	p->amount = money(&v[PY_AMOUNT], head[0].s);
	p->paid_at = v[PY_PAID_AT].s;
	p->status = v[PY_STATUS].s;
	p->statement_ref = v[PY_STATEMENT].s;
	return 0;
}

int
portal_parse_payments(struct arena *a, const char *body, size_t len,
    const char *account_ref, struct bills_payment **out, size_t *n, const char **why)
{
	*out = parse_list(a, body, len, "payments", PORTAL_PAYMENTS_MAX, sizeof(**out),
	    payment_item, account_ref, n, why);
	return *out != NULL ? 0 : -1;
}

/* ---- errors ---- */

const char *
portal_parse_error(struct arena *a, const char *body, size_t len)
{
	static const struct pfield spec[] = {
		{ "error", PK_TEXT, P_REQ, 1, 64, NULL },
		{ NULL }
	};
	const char *why;
	struct pctx c = { a, &why, -1 };
	struct json_object *o;
	struct pval v[1];

	if ((o = answer(&c, body, len)) == NULL || fields(&c, o, "", spec, v) != 0)
		return NULL;
	return v[0].s;
}
