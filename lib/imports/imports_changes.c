/*
 * Review changes: the table the dispatcher checks a changes object
 * against, and their application to a draft (imports_changes.h). The
 * table does every check one value allows (type, format, bounds, the
 * set/clear rule); imports_changes_apply the ones that need the draft
 * (the currency an amount is in) or two keys at once.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/arena.h"
#include "core/json.h"
#include "core/money.h"
#include "core/validate.h"
#include "imports/extract/extract.h"
#include "imports/imports_changes.h"

#define CHANGES_STRING_MAX	500
#define CHANGES_TEXT_MAX	2000	/* override_reason, an address */
#define CHANGES_URL_MAX		2048
#define CHANGES_ITEMS_MAX	200
#define CHANGES_LINES_MAX	20
/* amount_due: major units a JSON number carries exactly enough */
#define CHANGES_NUMBER_MAX	1000000000000LL

static const char *const operations[] = { "set", "clear", NULL };
static const char *const categories[] = { "usage", "fee", "tax", "credit", "adjustment",
	"other", NULL };

/* ---- checks of one value ---- */

/* Text people write: not blank; no control characters but line breaks
 * and tabs when lines (an address, a reason). */
static int
text_ok(const char *s, int lines, const char **code, const char **msg)
{
	const unsigned char *p;

	for (p = (const unsigned char *)s; *p == ' ' || (*p >= '\t' && *p <= '\r'); p++)
		;
	if (*p == '\0') {
		*code = "blank";
		*msg = "must not be only spaces";
		return -1;
	}
	for (p = (const unsigned char *)s; *p != '\0'; p++)
		if ((*p < 0x20 && !(lines && (*p == '\n' || *p == '\t' || *p == '\r'))) ||
		    *p == 0x7f || (p[0] == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f)) {
			*code = "control_character";
			*msg = "must not contain control characters";
			return -1;
		}
	return 0;
}

static int
check_text(struct arena *a, struct json_object **v, const char **code, const char **msg)
{
	(void)a;
	return text_ok(json_object_get_string(*v), 1, code, msg);
}

/* A shallow copy of object o (references to its values): what a check
 * returns instead of changing the caller's input. */
static struct json_object *
obj_copy(struct arena *a, struct json_object *o)
{
	struct json_object *c = json_obj(a);

	json_object_object_foreach(o, k, val)
		json_object_object_add(c, k, json_object_get(val));
	return c;
}

/* {value, currency} whose members passed their own checks: the value
 * within the currency's minor-unit digits. 0 with *out the same at
 * exactly the currency's exponent ("12.5" USD: "12.50"), -1 with the
 * message. */
static int
money_norm(struct arena *a, struct json_object *m, struct json_object **out,
    const char **code, const char **msg)
{
	const char *value = json_get_str(m, "value"), *cur = json_get_str(m, "currency");
	int exp = money_exponent(cur);
	long long minor;

	if (value == NULL || exp < 0) {
		*code = "invalid_type";
		*msg = "must be {value, currency}: a decimal string and an ISO 4217 code";
		return -1;
	}
	if (!money_amount_valid(value) || money_parse(value, exp, 0, &minor) != MONEY_OK) {
		*code = "invalid_format";
		*msg = arena_printf(a, "value must be a decimal string with at most %d"
		    " fractional digits, the minor unit of %s", exp, cur);
		return -1;
	}
	*out = json_obj(a);
	json_set_str(*out, "value", money_format(a, minor, exp));
	json_set_str(*out, "currency", cur);
	return 0;
}

static int
check_money(struct arena *a, struct json_object **v, const char **code, const char **msg)
{
	return money_norm(a, *v, v, code, msg);
}

/* A member of an object with undeclared properties: absent or null, or of
 * the given type. */
static int
member_is(struct json_object *o, const char *key, json_type t)
{
	struct json_object *m;

	return !json_object_object_get_ex(o, key, &m) || m == NULL ||
	    json_object_is_type(m, t) || (t == json_type_double && json_object_is_type(m,
	    json_type_int));
}

static int
member_date(struct json_object *o, const char *key)
{
	const char *s = json_get_str(o, key);

	return member_is(o, key, json_type_string) &&
	    (s == NULL || validate_format(VF_DATE, s));
}

static int
check_period(struct arena *a, struct json_object **v, const char **code, const char **msg)
{
	const char *start = json_get_str(*v, "start_date"), *end = json_get_str(*v, "end_date");

	(void)a;
	if (!member_date(*v, "start_date") || !member_date(*v, "end_date")) {
		*code = "invalid_format";
		*msg = "start_date and end_date must be dates (YYYY-MM-DD) or null";
		return -1;
	}
	if (start != NULL && end != NULL && strcmp(end, start) < 0) {
		*code = "out_of_range";
		*msg = "end_date must not be before start_date";
		return -1;
	}
	return 0;
}

/* A string of at most max code points (the validator checked UTF-8). */
static int
short_string(struct json_object *s, size_t max)
{
	const unsigned char *p = (const unsigned char *)json_object_get_string(s);
	size_t n = 0;

	for (; *p != '\0'; p++)
		n += (*p & 0xc0) != 0x80;
	return n <= max;
}

/* An address: a string becomes the draft's shape {lines, text}; an object
 * has its lines (strings) and text typed. */
static int
check_address(struct arena *a, struct json_object **v, const char **code, const char **msg)
{
	struct json_object *o, *lines, *l;
	const char *s, *nl;
	size_t i, n;

	if (json_object_is_type(*v, json_type_string)) {
		s = json_object_get_string(*v);
		if (!short_string(*v, CHANGES_TEXT_MAX)) {
			*code = "too_long";
			*msg = "must be at most 2000 characters";
			return -1;
		}
		if (text_ok(s, 1, code, msg) != 0)
			return -1;
		o = json_obj(a);
		lines = json_object_new_array();
		for (n = 0; *s != '\0' && n < CHANGES_LINES_MAX; s = *nl != '\0' ? nl + 1 : nl) {
			const char *b = s, *e;

			if ((nl = strchr(s, '\n')) == NULL)
				nl = s + strlen(s);
			for (e = nl; e > b && (e[-1] == ' ' || e[-1] == '\r' || e[-1] == '\t'); e--)
				;
			while (b < e && (*b == ' ' || *b == '\t'))
				b++;
			if (e > b) {
				json_object_array_add(lines, json_object_new_string_len(b,
				    (int)(e - b)));
				n++;
			}
		}
		json_object_object_add(o, "lines", lines);
		json_set_str(o, "text", json_object_get_string(*v));
		*v = o;
		return 0;
	}
	if (!json_object_is_type(*v, json_type_object)) {
		*code = "invalid_type";
		*msg = "must be a string or an object {lines, text}";
		return -1;
	}
	if (!member_is(*v, "text", json_type_string)) {
		*code = "invalid_type";
		*msg = "text must be a string";
		return -1;
	}
	if (json_object_object_get_ex(*v, "lines", &lines) && lines != NULL) {
		if (!json_object_is_type(lines, json_type_array) ||
		    (n = json_object_array_length(lines)) > CHANGES_LINES_MAX) {
			*code = "invalid_type";
			*msg = "lines must be an array of at most 20 strings";
			return -1;
		}
		for (i = 0; i < n; i++)
			if ((l = json_object_array_get_idx(lines, i)) == NULL ||
			    !json_object_is_type(l, json_type_string) ||
			    !short_string(l, CHANGES_STRING_MAX)) {
				*code = "invalid_type";
				*msg = arena_printf(a, "lines[%zu] must be a string of at most"
				    " 500 characters", i);
				return -1;
			}
	}
	return 0;
}

/* One line item: its declared members typed, an amount normalised (a new
 * object: the input is not changed), the others kept. */
static int
check_item(struct arena *a, struct json_object **v, const char **code, const char **msg)
{
	struct json_object *amount, *norm, *c;
	const char *cat = json_get_str(*v, "category");
	size_t i;

	*code = "invalid_type";
	if (!member_is(*v, "description", json_type_string) ||
	    !member_is(*v, "unit", json_type_string)) {
		*msg = "description and unit must be strings";
		return -1;
	}
	if (!member_is(*v, "quantity", json_type_double)) {
		*msg = "quantity must be a number";
		return -1;
	}
	if (!member_is(*v, "category", json_type_string)) {
		*msg = "category must be a string";
		return -1;
	}
	if (cat != NULL) {
		for (i = 0; categories[i] != NULL && strcmp(categories[i], cat) != 0; i++)
			;
		if (categories[i] == NULL) {
			*code = "invalid_enum";
			*msg = "category must be one of: usage, fee, tax, credit, adjustment, other";
			return -1;
		}
	}
	if (!json_object_object_get_ex(*v, "amount", &amount) || amount == NULL)
		return 0;
	if (!json_object_is_type(amount, json_type_object) ||
	    !member_is(amount, "value", json_type_string) ||
	    !member_is(amount, "currency", json_type_string) ||
	    json_get_str(amount, "value") == NULL || json_get_str(amount, "currency") == NULL) {
		*msg = "amount must be {value, currency}: a decimal string and an ISO 4217 code";
		return -1;
	}
	if (money_exponent(json_get_str(amount, "currency")) < 0) {
		*code = "invalid_format";
		*msg = "amount.currency must be an ISO 4217 currency code";
		return -1;
	}
	if (money_norm(a, amount, &norm, code, msg) != 0) {
		*msg = arena_printf(a, "amount.%s", *msg);
		return -1;
	}
	c = obj_copy(a, *v);
	json_object_object_add(c, "amount", json_object_get(norm));
	*v = c;
	return 0;
}

static int
check_classification(struct arena *a, struct json_object **v, const char **code,
    const char **msg)
{
	(void)a;
	if (json_object_is_type(*v, json_type_object))
		return 0;
	if (json_object_is_type(*v, json_type_string) && short_string(*v, CHANGES_STRING_MAX))
		return text_ok(json_object_get_string(*v), 0, code, msg);
	*code = "invalid_type";
	*msg = "must be a string (at most 500 characters) or an object";
	return -1;
}

/* The operation object: set carries a value, clear none. */
static int
check_op(struct arena *a, struct json_object **v, const char **code, const char **msg)
{
	struct json_object *val = NULL;
	int has = json_object_object_get_ex(*v, "value", &val) && val != NULL;

	(void)a;
	if (strcmp(json_get_str(*v, "operation"), "set") == 0 && !has) {
		*code = "required";
		*msg = "value is required with operation set";
		return -1;
	}
	if (strcmp(json_get_str(*v, "operation"), "clear") == 0 && has) {
		*code = "invalid";
		*msg = "value must be null or absent with operation clear";
		return -1;
	}
	return 0;
}

/* ---- the table ---- */

#define OPERATION { "operation", NULL, VT_STRING, V_REQUIRED, .enumv = operations }

static const struct vfield money_fields[] = {
	{ "value", NULL, VT_STRING, V_REQUIRED, 1, 32, .format = VF_MONEY },
	{ "currency", NULL, VT_STRING, V_REQUIRED, .format = VF_CURRENCY },
	{ NULL }
};

static const struct vfield op_string[] = {
	OPERATION,
	{ "value", NULL, VT_STRING, V_NULLABLE, 1, CHANGES_STRING_MAX, .check = validate_name },
	{ NULL }
};
static const struct vfield op_text[] = {
	OPERATION,
	{ "value", NULL, VT_STRING, V_NULLABLE, 1, CHANGES_TEXT_MAX, .check = check_text },
	{ NULL }
};
static const struct vfield op_money[] = {
	OPERATION,
	{ "value", NULL, VT_OBJECT, V_NULLABLE, .fields = money_fields, .check = check_money },
	{ NULL }
};
static const struct vfield op_date[] = {
	OPERATION,
	{ "value", NULL, VT_STRING, V_NULLABLE, .format = VF_DATE },
	{ NULL }
};
static const struct vfield op_number[] = {
	OPERATION,
	{ "value", NULL, VT_NUMBER, V_NULLABLE, 0, CHANGES_NUMBER_MAX },
	{ NULL }
};
static const struct vfield op_currency[] = {
	OPERATION,
	{ "value", NULL, VT_STRING, V_NULLABLE, .format = VF_CURRENCY },
	{ NULL }
};
static const struct vfield op_period[] = {
	OPERATION,
	{ "value", NULL, VT_OBJECT, V_NULLABLE, .check = check_period },
	{ NULL }
};
static const struct vfield op_address[] = {
	OPERATION,
	{ "value", NULL, VT_ANY, 0, .check = check_address },
	{ NULL }
};
static const struct vfield op_url[] = {
	OPERATION,
	{ "value", NULL, VT_STRING, V_NULLABLE, 1, CHANGES_URL_MAX, .format = VF_HTTPS_URL },
	{ NULL }
};
static const struct vfield op_items[] = {
	OPERATION,
	{ "value", NULL, VT_ARRAY, V_NULLABLE, 0, CHANGES_ITEMS_MAX, .items = VT_OBJECT,
	  .check = check_item },
	{ NULL }
};
static const struct vfield op_any[] = {
	OPERATION,
	{ "value", NULL, VT_ANY, 0, .check = check_classification },
	{ NULL }
};

#define CHANGE(name, ops) { name, NULL, VT_OBJECT, 0, .fields = ops, .check = check_op }

const struct vfield imports_changes_fields[] = {
	CHANGE("payee_name", op_string),
	CHANGE("account_number", op_string),
	CHANGE("reference_number", op_string),
	CHANGE("bill_number", op_string),
	CHANGE("payment_method", op_string),
	CHANGE("override_reason", op_text),
	CHANGE("total_amount", op_money),
	CHANGE("due_date_iso", op_date),
	CHANGE("payment_date", op_date),
	CHANGE("statement_date", op_date),	/* a v1 addition: the draft has it */
	CHANGE("amount_due", op_number),	/* deprecated: total_amount.value */
	CHANGE("due_date", op_date),		/* deprecated: due_date_iso */
	CHANGE("currency", op_currency),	/* deprecated: total_amount.currency */
	CHANGE("service_period", op_period),
	CHANGE("remit_to_address", op_address),
	CHANGE("payment_url", op_url),
	CHANGE("line_items", op_items),
	CHANGE("classification_override", op_any),
	{ NULL }
};

/* ---- applying ---- */

/* Keys written as they are (deprecated due_date onto its successor). */
static const struct { const char *key, *field; } plain[] = {
	{ "payee_name", "payee_name" },
	{ "account_number", "account_number" },
	{ "reference_number", "reference_number" },
	{ "bill_number", "bill_number" },
	{ "payment_method", "payment_method" },
	{ "override_reason", "override_reason" },
	{ "due_date_iso", "due_date_iso" },
	{ "due_date", "due_date_iso" },
	{ "payment_date", "payment_date" },
	{ "statement_date", "statement_date" },
	{ "service_period", "service_period" },
	{ "remit_to_address", "remit_to_address" },
	{ "payment_url", "payment_url" },
	{ "line_items", "line_items" },
	{ "classification_override", "classification_override" },
};

/* A reviewed field: {value, confidence, source: null, reviewed: true};
 * value NULL: cleared (confidence 0). The draft takes value's reference. */
static void
field_put(struct json_object *draft, const char *key, struct json_object *value)
{
	struct json_object *f = json_object_new_object();

	json_object_object_add(f, "value", value);
	json_object_object_add(f, "confidence", json_object_new_int(value != NULL ? 1 : 0));
	json_object_object_add(f, "source", NULL);
	json_object_object_add(f, "reviewed", json_object_new_boolean(1));
	json_object_object_add(draft, key, f);
}

struct json_object *
imports_draft_value(struct json_object *draft, const char *key, json_type t)
{
	struct json_object *f, *v;

	if (draft == NULL || !json_object_object_get_ex(draft, key, &f) || f == NULL ||
	    !json_object_is_type(f, json_type_object) ||
	    !json_object_object_get_ex(f, "value", &v) || v == NULL ||
	    !json_object_is_type(v, t))
		return NULL;
	return v;
}

const char *
imports_draft_str(struct json_object *draft, const char *key)
{
	struct json_object *v = imports_draft_value(draft, key, json_type_string);

	return v != NULL ? json_object_get_string(v) : NULL;
}

/* The operation under key, or NULL when changes does not name it. */
static struct json_object *
op_of(struct json_object *changes, const char *key)
{
	struct json_object *o;

	return json_object_object_get_ex(changes, key, &o) ? o : NULL;
}

static int
is_set(struct json_object *op)
{
	return op != NULL && strcmp(json_get_str(op, "operation"), "set") == 0;
}

int
imports_draft_total(struct json_object *draft, long long *minor, const char **currency)
{
	struct json_object *v = imports_draft_value(draft, "total_amount", json_type_object);
	const char *cur, *value;
	int exp;

	if (v == NULL)
		return 0;
	cur = json_get_str(v, "currency");
	value = json_get_str(v, "value");
	if ((exp = money_exponent(cur)) < 0 || value == NULL ||
	    money_parse(value, exp, MONEY_SIGNED, minor) != MONEY_OK)
		return 0;
	*currency = cur;
	return 1;
}

/* The currency the draft's amount is in: total_amount's, else the
 * currency field's; NULL when neither is an ISO 4217 code. */
static const char *
draft_currency(struct json_object *draft)
{
	struct json_object *v = imports_draft_value(draft, "total_amount", json_type_object);
	const char *cur = v != NULL ? json_get_str(v, "currency") : NULL;

	if (money_exponent(cur) < 0)
		cur = imports_draft_str(draft, "currency");
	return money_exponent(cur) >= 0 ? cur : NULL;
}

/* amount_due's number in minor units at exp: 0, or -1 when it has more
 * fractional digits than exp (a double within rounding noise of a whole
 * number of minor units counts as one). */
static int
number_minor(struct json_object *n, int exp, long long *minor)
{
	double scale = 1, x, r, tol;
	int i;

	for (i = 0; i < exp; i++)
		scale *= 10;
	if (json_object_is_type(n, json_type_int)) {
		*minor = (long long)json_object_get_int64(n) * (long long)scale;
		return 0;
	}
	/* no libm: x is finite, >= 0 and below 2^53 before any rounding */
	x = json_object_get_double(n) * scale;
	if (!isfinite(x) || x < 0 || x >= 9007199254740992.0)
		return -1;
	r = (double)(long long)(x + 0.5);
	tol = x * 1e-15 > 1e-6 ? x * 1e-15 : 1e-6;
	if (x - r > tol || r - x > tol)
		return -1;
	*minor = (long long)r;
	return 0;
}

/* The draft's amount text (at its old currency) at exponent exp: 0 with
 * *minor, -1 when it does not fit (more digits than exp keeps). */
static int
rescale(const char *value, int exp, long long *minor)
{
	long long m4, div = 1;
	int i;

	if (value == NULL || money_parse(value, MONEY_EXP_MAX, MONEY_SIGNED, &m4) != MONEY_OK)
		return -1;
	for (i = exp; i < MONEY_EXP_MAX; i++)
		div *= 10;
	if (m4 % div != 0)
		return -1;
	*minor = m4 / div;
	return 0;
}

/* What the changes do to the total: */
struct total {
	int		 touch;		/* total_amount is written */
	struct json_object *money;	/* its new value; NULL: cleared */
	int		 cur_touch;	/* the currency field is written */
	const char	*cur;		/* its new value; NULL: cleared */
};

static struct json_object *
money_new(struct arena *a, long long minor, const char *cur)
{
	struct json_object *m = json_obj(a);

	json_set_str(m, "value", money_format(a, minor, money_exponent(cur)));
	json_set_str(m, "currency", cur);
	return m;
}

/* The deprecated amount_due and currency, alone or together, on the
 * draft's total. Errors into errs. */
static void
total_deprecated(struct arena *a, struct json_object *draft, struct json_object *ad,
    struct json_object *cu, const char *path, struct verrs *errs, struct total *t)
{
	struct json_object *old = imports_draft_value(draft, "total_amount", json_type_object);
	const char *cur;
	long long minor;

	if (cu != NULL && !is_set(cu)) {
		/* no amount without its currency: clearing it clears the total */
		if (is_set(ad)) {
			verrs_add(a, errs, arena_printf(a, "%s.currency", path),
			    "conflicting_operation", "the currency cannot be cleared while"
			    " amount_due is set");
			return;
		}
		t->touch = t->cur_touch = 1;
		return;
	}
	cur = cu != NULL ? json_get_str(cu, "value") : draft_currency(draft);
	if (cu != NULL) {
		t->cur_touch = 1;
		t->cur = cur;
	}
	if (ad != NULL && !is_set(ad)) {
		t->touch = 1;
		return;
	}
	if (ad != NULL) {
		if (cur == NULL) {
			verrs_add(a, errs, arena_printf(a, "%s.amount_due", path),
			    "currency_required", "the draft has no currency: set currency"
			    " or total_amount instead");
			return;
		}
		if (number_minor(json_object_object_get(ad, "value"), money_exponent(cur),
		    &minor) != 0) {
			verrs_add(a, errs, arena_printf(a, "%s.amount_due.value", path),
			    "invalid_format", "has more fractional digits than %s allows (%d)",
			    cur, money_exponent(cur));
			return;
		}
		t->touch = 1;
		t->money = money_new(a, minor, cur);
		return;
	}
	/* the currency alone: the amount stays, in the new currency */
	if (old == NULL)
		return;
	if (rescale(json_get_str(old, "value"), money_exponent(cur), &minor) != 0) {
		verrs_add(a, errs, arena_printf(a, "%s.currency", path), "invalid_for_currency",
		    "the draft's total_amount has more fractional digits than %s allows", cur);
		return;
	}
	t->touch = 1;
	t->money = money_new(a, minor, cur);
}

static void
both(struct arena *a, struct verrs *errs, const char *path, const char *old,
    const char *now)
{
	verrs_add(a, errs, arena_printf(a, "%s.%s", path, old), "duplicate_field",
	    "given with %s, which replaces it: send one", now);
}

int
imports_changes_apply(struct arena *a, struct json_object *draft,
    struct json_object *changes, const char *path, struct verrs *errs)
{
	struct json_object *ta = op_of(changes, "total_amount"), *op;
	struct json_object *ad = op_of(changes, "amount_due"), *cu = op_of(changes, "currency");
	struct total t = { 0 };
	size_t before = errs->n, i;

	if (op_of(changes, "due_date") != NULL && op_of(changes, "due_date_iso") != NULL)
		both(a, errs, path, "due_date", "due_date_iso");
	if (ta != NULL && ad != NULL)
		both(a, errs, path, "amount_due", "total_amount");
	if (ta != NULL && cu != NULL)
		both(a, errs, path, "currency", "total_amount");
	if (errs->n != before)
		return -1;
	if (ta != NULL) {
		t.touch = 1;
		t.money = is_set(ta) ? json_object_object_get(ta, "value") : NULL;
		if (t.money != NULL) {
			t.cur_touch = 1;
			t.cur = json_get_str(t.money, "currency");
		}
	} else if (ad != NULL || cu != NULL)
		total_deprecated(a, draft, ad, cu, path, errs, &t);
	if (errs->n != before)
		return -1;

	for (i = 0; i < sizeof(plain) / sizeof(plain[0]); i++)
		if ((op = op_of(changes, plain[i].key)) != NULL)
			field_put(draft, plain[i].field, is_set(op) ?
			    json_object_get(json_object_object_get(op, "value")) : NULL);
	if (t.touch)
		field_put(draft, "total_amount", json_object_get(t.money));
	if (t.cur_touch)
		field_put(draft, "currency", t.cur != NULL ? json_object_new_string(t.cur) : NULL);
	return ex_recheck(draft);
}
