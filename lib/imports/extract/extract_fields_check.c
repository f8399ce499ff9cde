/*
 * The draft's arithmetic checks and its readiness (extract.h): previous
 * balance - payments + current charges = total amount due; the line items
 * sum to the current charges (or to the total when the bill shows no
 * charges line and no balance carried). Computed in minor units of the
 * total's currency, never in floating point.
 */
#include <stdio.h>
#include <string.h>

#include <json-c/json.h>

#include "core/money.h"
#include "imports/extract/extract.h"
#include "imports/extract/extract_fields.h"

/* A failed check leaves the total this far under the threshold. */
#define XF_FAILED_CONFIDENCE	0.5

static struct json_object *
member(const struct json_object *o, const char *key)
{
	struct json_object *v = NULL;

	if (o == NULL || !json_object_is_type(o, json_type_object) ||
	    !json_object_object_get_ex(o, key, &v))
		return NULL;
	return v;
}

static const char *
str_of(const struct json_object *o)
{
	return o != NULL && json_object_is_type(o, json_type_string) ? json_object_get_string(
	    (struct json_object *)o) : NULL;
}

/* An amount object {value, currency} in currency cur: 1 and *minor. */
static int
amount_of(const struct json_object *a, const char *cur, int exp, long long *minor)
{
	const char *v = str_of(member(a, "value")), *c = str_of(member(a, "currency"));

	if (v == NULL || (c != NULL && cur != NULL && strcmp(c, cur) != 0))
		return 0;
	return money_parse(v, exp, MONEY_SIGNED, minor) == MONEY_OK;
}

/* A draft field's amount: 1 and *minor when found. */
static int
field_amount(const struct json_object *draft, const char *key, const char *cur, int exp,
    long long *minor)
{
	return amount_of(member(member(draft, key), "value"), cur, exp, minor);
}

static int
reviewed(const struct json_object *f)
{
	struct json_object *r = member(f, "reviewed");

	return r != NULL && json_object_get_boolean(r);
}

static double
confidence(const struct json_object *f)
{
	struct json_object *c = member(f, "confidence");

	return c != NULL && (json_object_is_type(c, json_type_double) ||
	    json_object_is_type(c, json_type_int)) ? json_object_get_double(c) : 0;
}

static int
set_confidence(struct json_object *f, double v)
{
	char buf[16];
	struct json_object *n;

	/* two decimals, the value and its text alike (0.7 + 0.1 is 0.8) */
	v = (double)(long)(v * 100 + 0.5) / 100;
	snprintf(buf, sizeof(buf), "%.2f", v);
	if ((n = json_object_new_double_s(v, buf)) == NULL)
		return -1;
	if (json_object_object_add(f, "confidence", n) != 0) {
		json_object_put(n);
		return -1;
	}
	return 0;
}

/* One entry of checks[]. */
static int
add_check(struct json_object *arr, const char *name, const char *status, const char *expected,
    const char *actual, const char *message)
{
	struct json_object *o = json_object_new_object();
	int bad = o == NULL;

#define ADD(k, v) do { struct json_object *x_ = (v) != NULL ? json_object_new_string(v) : NULL; \
	if (!bad && ((v) != NULL && x_ == NULL)) bad = 1; \
	if (!bad && json_object_object_add(o, k, x_) != 0) { json_object_put(x_); bad = 1; } \
	else if (bad) json_object_put(x_); } while (0)
	ADD("name", name);
	ADD("status", status);
	ADD("expected", expected);
	ADD("actual", actual);
	ADD("message", message);
#undef ADD
	if (bad || json_object_array_add(arr, o) != 0) {
		json_object_put(o);
		return -1;
	}
	return 0;
}

int
xf_checks(struct json_object *draft, int first)
{
	struct json_object *arr, *total, *items;
	const char *cur, *bal_status = "skipped", *li_status = "skipped";
	char expected[MONEY_TEXT_MAX] = "", actual[MONEY_TEXT_MAX] = "", msg[200];
	char li_expected[MONEY_TEXT_MAX] = "", li_actual[MONEY_TEXT_MAX] = "", li_msg[200];
	long long t = 0, prev = 0, pay = 0, charges = 0, want, sum = 0, v;
	int exp, has_t, has_prev, has_pay, has_charges, treviewed, rc = 0;
	size_t i, n;

	if (draft == NULL || !json_object_is_type(draft, json_type_object))
		return 0;
	total = member(draft, "total_amount");
	treviewed = reviewed(total);
	cur = str_of(member(member(total, "value"), "currency"));
	if (cur == NULL)
		cur = str_of(member(member(draft, "currency"), "value"));
	exp = money_exponent(cur);
	snprintf(msg, sizeof(msg), "no currency to check the amounts in");
	snprintf(li_msg, sizeof(li_msg), "no currency to check the amounts in");
	if (exp >= 0) {
		has_t = field_amount(draft, "total_amount", cur, exp, &t);
		has_prev = field_amount(draft, "previous_balance", cur, exp, &prev);
		has_pay = field_amount(draft, "payments_received", cur, exp, &pay);
		has_charges = field_amount(draft, "current_charges", cur, exp, &charges);
		if (pay < 0)
			pay = -pay;

		/* balance */
		if (!has_t)
			snprintf(msg, sizeof(msg), "no total amount due");
		else if (!has_charges)
			snprintf(msg, sizeof(msg), "no current charges shown");
		else if (!has_prev || !has_pay)
			snprintf(msg, sizeof(msg), "no previous balance or no payments shown");
		else if (money_sub(prev, pay, &want) != 0 || money_add(want, charges, &want) != 0)
			snprintf(msg, sizeof(msg), "the amounts are out of range");
		else {
			money_format_buf(expected, sizeof(expected), want, exp);
			money_format_buf(actual, sizeof(actual), t, exp);
			if (want == t) {
				bal_status = "passed";
				snprintf(msg, sizeof(msg),
				    "previous balance - payments + current charges = total amount due");
			} else if (treviewed) {
				snprintf(msg, sizeof(msg),
				    "previous balance - payments + current charges is %s, the total set by review %s",
				    expected, actual);
			} else {
				bal_status = "failed";
				snprintf(msg, sizeof(msg),
				    "previous balance - payments + current charges is %s, not the total amount due %s",
				    expected, actual);
			}
		}

		/* line items */
		items = member(member(draft, "line_items"), "value");
		n = items != NULL && json_object_is_type(items, json_type_array) ?
		    json_object_array_length(items) : 0;
		for (i = 0; i < n && i < 1000; i++) {
			struct json_object *it = json_object_array_get_idx(items, i);

			if (!amount_of(member(it, "amount"), cur, exp, &v) || money_add(sum, v, &sum) != 0)
				break;
		}
		if (n == 0)
			snprintf(li_msg, sizeof(li_msg), "no line items");
		else if (i < n)
			snprintf(li_msg, sizeof(li_msg), "a line item has no amount in %s", cur);
		else if (!has_charges && (has_prev || has_pay))
			snprintf(li_msg, sizeof(li_msg), "no current charges to sum the items to");
		else if (!has_charges && !has_t)
			snprintf(li_msg, sizeof(li_msg), "no total to sum the items to");
		else {
			long long target = has_charges ? charges : t;
			const char *what = has_charges ? "current charges" : "total amount due";

			money_format_buf(li_expected, sizeof(li_expected), target, exp);
			money_format_buf(li_actual, sizeof(li_actual), sum, exp);
			if (sum == target) {
				li_status = "passed";
				snprintf(li_msg, sizeof(li_msg), "the line items sum to the %s", what);
			} else if (treviewed && !has_charges) {
				snprintf(li_msg, sizeof(li_msg),
				    "the line items sum to %s, the total set by review is %s", li_actual,
				    li_expected);
			} else {
				li_status = "failed";
				snprintf(li_msg, sizeof(li_msg), "the line items sum to %s, not the %s %s",
				    li_actual, what, li_expected);
			}
		}
	}
	if ((arr = json_object_new_array()) == NULL)
		return -1;
	if (add_check(arr, "balance", bal_status, expected[0] ? expected : NULL,
	    actual[0] ? actual : NULL, msg) != 0 ||
	    add_check(arr, "line_items", li_status, li_expected[0] ? li_expected : NULL,
	    li_actual[0] ? li_actual : NULL, li_msg) != 0 ||
	    json_object_object_add(draft, "checks", arr) != 0) {
		json_object_put(arr);
		return -1;
	}
	if (total != NULL && json_object_is_type(total, json_type_object) && !treviewed &&
	    member(total, "value") != NULL) {
		double c = confidence(total);

		if (strcmp(bal_status, "failed") == 0 || strcmp(li_status, "failed") == 0) {
			if (c > XF_FAILED_CONFIDENCE)
				rc = set_confidence(total, XF_FAILED_CONFIDENCE);
		} else if (first && strcmp(bal_status, "passed") == 0 && c >= 0.6 && c < 0.95 &&
		    confidence(member(draft, "currency")) >= EX_READY_CONFIDENCE) {
			/* the arithmetic agrees: the reading is right (its currency
			 * must be sure on its own: the sum cannot tell dollars apart) */
			rc = set_confidence(total, c + 0.1 > 0.95 ? 0.95 : c + 0.1);
		}
	}
	return rc;
}

int
ex_recheck(struct json_object *draft)
{
	return xf_checks(draft, 0);
}

/* The field's value is there, and of the shape a commit needs. */
static int
present(const char *key, const struct json_object *f)
{
	struct json_object *v = member(f, "value");
	const char *s, *cur;
	long long minor;
	int y, m, d, exp;
	char tail;

	if (v == NULL)
		return 0;
	if (strcmp(key, "total_amount") == 0) {
		s = str_of(member(v, "value"));
		cur = str_of(member(v, "currency"));
		exp = money_exponent(cur);
		return s != NULL && exp >= 0 && money_parse(s, exp, MONEY_SIGNED, &minor) == MONEY_OK;
	}
	if ((s = str_of(v)) == NULL || s[0] == '\0')
		return 0;
	if (strcmp(key, "due_date_iso") == 0)
		return strlen(s) == 10 && sscanf(s, "%4d-%2d-%2d%c", &y, &m, &d, &tail) == 3 &&
		    s[4] == '-' && s[7] == '-' && xf_date_valid(y, m, d);
	return 1;
}

int
ex_draft_ready(const struct json_object *draft, const char **why)
{
	static const char *const required[] = { "payee_name", "total_amount", "due_date_iso" };
	struct json_object *checks;
	const char *dummy;
	size_t i, n;

	if (why == NULL)
		why = &dummy;
	*why = NULL;
	/* what is missing first, then what is unsure, then the checks */
	for (i = 0; i < sizeof(required) / sizeof(required[0]); i++)
		if (!present(required[i], member(draft, required[i]))) {
			*why = xf_why("missing", required[i]);
			return 0;
		}
	for (i = 0; i < sizeof(required) / sizeof(required[0]); i++)
		if (confidence(member(draft, required[i])) < EX_READY_CONFIDENCE) {
			*why = xf_why("low_confidence", required[i]);
			return 0;
		}
	checks = member(draft, "checks");
	n = checks != NULL && json_object_is_type(checks, json_type_array) ?
	    json_object_array_length(checks) : 0;
	for (i = 0; i < n; i++) {
		struct json_object *c = json_object_array_get_idx(checks, i);
		const char *st = str_of(member(c, "status"));

		if (st != NULL && strcmp(st, "failed") == 0) {
			const char *name = str_of(member(c, "name"));

			*why = xf_why("check_failed", name != NULL ? name : "");
			return 0;
		}
	}
	return 1;
}
