/*
 * lib/imports/imports_changes.c: the review changes table (every key,
 * its operations and value types, each error naming its field) and their
 * application to a draft (set, clear, the deprecated keys on their
 * successors, what only the draft can answer, the checks recomputed).
 */
#include <stdio.h>
#include <string.h>

#include <check.h>

#include "core/arena.h"
#include "core/json.h"
#include "core/validate.h"
#include "imports/imports_changes.h"
#include "tarena.h"
#include "tcheck.h"

#define N(x) (sizeof(x) / sizeof((x)[0]))

/* a route body nesting the table, as PATCH review_draft's does */
static const struct vfield body[] = {
	{ "changes", NULL, VT_OBJECT, V_REQUIRED, .fields = imports_changes_fields },
	{ NULL }
};

/* A draft as extraction leaves it: USD 120.00 due 2026-12-15. */
static const char draft_text[] =
	"{\"payee_name\":{\"value\":\"City Water\",\"confidence\":0.95,"
	"  \"source\":{\"page\":1,\"bbox\":[1,2,3,4]}},"
	" \"account_number\":{\"value\":\"12345\",\"confidence\":0.9,\"source\":null},"
	" \"total_amount\":{\"value\":{\"value\":\"120.00\",\"currency\":\"USD\"},"
	"  \"confidence\":0.9,\"source\":{\"page\":1,\"bbox\":[1,2,3,4]}},"
	" \"currency\":{\"value\":\"USD\",\"confidence\":0.9,\"source\":null},"
	" \"due_date_iso\":{\"value\":\"2026-12-15\",\"confidence\":0.9,\"source\":null},"
	" \"checks\":[]}";

static struct json_object *
parse(const char *s)
{
	struct json_object *o = json_tokener_parse(s);

	ck_assert_msg(o != NULL, "bad test JSON: %s", s);
	return json_own(&a, o);
}

static const char *
text(struct json_object *o)
{
	return o == NULL ? "null" : json_object_to_json_string_ext(o,
	    JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
}

/* Validate {"changes": changes} and apply it to draft (NULL: draft_text).
 * The draft after it, or NULL with errs filled. */
static struct json_object *
apply(const char *draft, const char *changes, struct verrs *errs)
{
	struct json_object *in, *out, *d;

	in = parse(arena_printf(&a, "{\"changes\":%s}", changes));
	if (validate_body(&a, body, in, &out, errs) != 0)
		return NULL;
	d = parse(draft != NULL ? draft : draft_text);
	if (imports_changes_apply(&a, d, json_object_object_get(out, "changes"), "changes",
	    errs) != 0) {
		ck_assert_uint_gt(errs->n, 0);
		return NULL;
	}
	return d;
}

/* One field of a draft as text: the whole {value, ...} member. */
static const char *
field(struct json_object *d, const char *key)
{
	struct json_object *f = NULL;

	ck_assert_msg(json_object_object_get_ex(d, key, &f), "no %s in the draft", key);
	return text(f);
}

#define SET(v)	"{\"value\":" v ",\"confidence\":1,\"source\":null,\"reviewed\":true}"
#define CLEARED	"{\"value\":null,\"confidence\":0,\"source\":null,\"reviewed\":true}"

/* ---- every key set and cleared ---- */

static const struct {
	const char *changes, *field, *want;
} valid[] = {
	{ "{\"payee_name\":{\"operation\":\"set\",\"value\":\"Metro Power\"}}",
	  "payee_name", SET("\"Metro Power\"") },
	{ "{\"payee_name\":{\"operation\":\"clear\"}}", "payee_name", CLEARED },
	{ "{\"payee_name\":{\"operation\":\"clear\",\"value\":null}}", "payee_name", CLEARED },
	{ "{\"account_number\":{\"operation\":\"set\",\"value\":\"0042-77\"}}",
	  "account_number", SET("\"0042-77\"") },
	{ "{\"account_number\":{\"operation\":\"clear\"}}", "account_number", CLEARED },
	{ "{\"reference_number\":{\"operation\":\"set\",\"value\":\"REF 9\"}}",
	  "reference_number", SET("\"REF 9\"") },
	{ "{\"reference_number\":{\"operation\":\"clear\"}}", "reference_number", CLEARED },
	{ "{\"bill_number\":{\"operation\":\"set\",\"value\":\"INV-1\"}}",
	  "bill_number", SET("\"INV-1\"") },
	{ "{\"bill_number\":{\"operation\":\"clear\"}}", "bill_number", CLEARED },
	{ "{\"payment_method\":{\"operation\":\"set\",\"value\":\"direct debit\"}}",
	  "payment_method", SET("\"direct debit\"") },
	{ "{\"payment_method\":{\"operation\":\"clear\"}}", "payment_method", CLEARED },
	{ "{\"override_reason\":{\"operation\":\"set\",\"value\":\"read the paper\\ncopy\"}}",
	  "override_reason", SET("\"read the paper\\ncopy\"") },
	{ "{\"override_reason\":{\"operation\":\"clear\"}}", "override_reason", CLEARED },
	/* written at exactly the currency's exponent */
	{ "{\"total_amount\":{\"operation\":\"set\",\"value\":{\"value\":\"99.5\",\"currency\":\"USD\"}}}",
	  "total_amount", SET("{\"value\":\"99.50\",\"currency\":\"USD\"}") },
	{ "{\"total_amount\":{\"operation\":\"set\",\"value\":{\"value\":\"1200\",\"currency\":\"JPY\"}}}",
	  "total_amount", SET("{\"value\":\"1200\",\"currency\":\"JPY\"}") },
	{ "{\"total_amount\":{\"operation\":\"set\",\"value\":{\"value\":\"1.234\",\"currency\":\"BHD\"}}}",
	  "total_amount", SET("{\"value\":\"1.234\",\"currency\":\"BHD\"}") },
	{ "{\"total_amount\":{\"operation\":\"set\",\"value\":{\"value\":\"0\",\"currency\":\"EUR\"}}}",
	  "total_amount", SET("{\"value\":\"0.00\",\"currency\":\"EUR\"}") },
	/* the currency field follows the total's */
	{ "{\"total_amount\":{\"operation\":\"set\",\"value\":{\"value\":\"5\",\"currency\":\"GBP\"}}}",
	  "currency", SET("\"GBP\"") },
	{ "{\"total_amount\":{\"operation\":\"clear\"}}", "total_amount", CLEARED },
	{ "{\"due_date_iso\":{\"operation\":\"set\",\"value\":\"2028-02-29\"}}",
	  "due_date_iso", SET("\"2028-02-29\"") },
	{ "{\"due_date_iso\":{\"operation\":\"clear\"}}", "due_date_iso", CLEARED },
	{ "{\"payment_date\":{\"operation\":\"set\",\"value\":\"2026-12-01\"}}",
	  "payment_date", SET("\"2026-12-01\"") },
	{ "{\"payment_date\":{\"operation\":\"clear\"}}", "payment_date", CLEARED },
	{ "{\"statement_date\":{\"operation\":\"set\",\"value\":\"2026-11-20\"}}",
	  "statement_date", SET("\"2026-11-20\"") },
	{ "{\"statement_date\":{\"operation\":\"clear\"}}", "statement_date", CLEARED },
	/* deprecated: amount_due in the draft's currency, major units */
	{ "{\"amount_due\":{\"operation\":\"set\",\"value\":88.1}}",
	  "total_amount", SET("{\"value\":\"88.10\",\"currency\":\"USD\"}") },
	{ "{\"amount_due\":{\"operation\":\"set\",\"value\":42}}",
	  "total_amount", SET("{\"value\":\"42.00\",\"currency\":\"USD\"}") },
	{ "{\"amount_due\":{\"operation\":\"set\",\"value\":0.30000000000000004}}",
	  "total_amount", SET("{\"value\":\"0.30\",\"currency\":\"USD\"}") },
	{ "{\"amount_due\":{\"operation\":\"set\",\"value\":7},\"currency\":{\"operation\":\"set\",\"value\":\"JPY\"}}",
	  "total_amount", SET("{\"value\":\"7\",\"currency\":\"JPY\"}") },
	{ "{\"amount_due\":{\"operation\":\"clear\"}}", "total_amount", CLEARED },
	{ "{\"due_date\":{\"operation\":\"set\",\"value\":\"2027-01-31\"}}",
	  "due_date_iso", SET("\"2027-01-31\"") },
	{ "{\"due_date\":{\"operation\":\"clear\"}}", "due_date_iso", CLEARED },
	/* deprecated currency: the amount stays, in the new currency */
	{ "{\"currency\":{\"operation\":\"set\",\"value\":\"EUR\"}}",
	  "total_amount", SET("{\"value\":\"120.00\",\"currency\":\"EUR\"}") },
	{ "{\"currency\":{\"operation\":\"set\",\"value\":\"JPY\"}}",
	  "total_amount", SET("{\"value\":\"120\",\"currency\":\"JPY\"}") },
	{ "{\"currency\":{\"operation\":\"set\",\"value\":\"KWD\"}}",
	  "currency", SET("\"KWD\"") },
	{ "{\"currency\":{\"operation\":\"clear\"}}", "total_amount", CLEARED },
	{ "{\"currency\":{\"operation\":\"clear\"}}", "currency", CLEARED },
	{ "{\"service_period\":{\"operation\":\"set\",\"value\":{\"start_date\":\"2026-10-01\",\"end_date\":\"2026-10-31\",\"days\":31}}}",
	  "service_period", SET("{\"start_date\":\"2026-10-01\",\"end_date\":\"2026-10-31\",\"days\":31}") },
	{ "{\"service_period\":{\"operation\":\"set\",\"value\":{\"label\":\"October\"}}}",
	  "service_period", SET("{\"label\":\"October\"}") },
	{ "{\"service_period\":{\"operation\":\"clear\"}}", "service_period", CLEARED },
	{ "{\"remit_to_address\":{\"operation\":\"set\",\"value\":\" PO Box 1 \\n\\nSpringfield, IL \"}}",
	  "remit_to_address", SET("{\"lines\":[\"PO Box 1\",\"Springfield, IL\"],"
	  "\"text\":\" PO Box 1 \\n\\nSpringfield, IL \"}") },
	{ "{\"remit_to_address\":{\"operation\":\"set\",\"value\":{\"lines\":[\"PO Box 1\"],\"zip\":\"62701\"}}}",
	  "remit_to_address", SET("{\"lines\":[\"PO Box 1\"],\"zip\":\"62701\"}") },
	{ "{\"remit_to_address\":{\"operation\":\"clear\"}}", "remit_to_address", CLEARED },
	{ "{\"payment_url\":{\"operation\":\"set\",\"value\":\"https://pay.example.com/x?a=1\"}}",
	  "payment_url", SET("\"https://pay.example.com/x?a=1\"") },
	{ "{\"payment_url\":{\"operation\":\"clear\"}}", "payment_url", CLEARED },
	{ "{\"line_items\":{\"operation\":\"set\",\"value\":[{\"description\":\"Water\","
	  "\"amount\":{\"value\":\"100.5\",\"currency\":\"USD\"},\"category\":\"usage\",\"meter\":\"A\"},"
	  "{\"description\":\"Tax\",\"quantity\":1}]}}",
	  "line_items", SET("[{\"description\":\"Water\",\"amount\":{\"value\":\"100.50\","
	  "\"currency\":\"USD\"},\"category\":\"usage\",\"meter\":\"A\"},"
	  "{\"description\":\"Tax\",\"quantity\":1}]") },
	{ "{\"line_items\":{\"operation\":\"set\",\"value\":[]}}", "line_items", SET("[]") },
	{ "{\"line_items\":{\"operation\":\"clear\"}}", "line_items", CLEARED },
	{ "{\"classification_override\":{\"operation\":\"set\",\"value\":\"water\"}}",
	  "classification_override", SET("\"water\"") },
	{ "{\"classification_override\":{\"operation\":\"set\",\"value\":{\"type\":\"water\",\"tags\":[1]}}}",
	  "classification_override", SET("{\"type\":\"water\",\"tags\":[1]}") },
	{ "{\"classification_override\":{\"operation\":\"clear\"}}",
	  "classification_override", CLEARED },
};

START_TEST(set_and_clear)
{
	struct verrs e = { 0 };
	struct json_object *d = apply(NULL, valid[_i].changes, &e);

	ck_assert_msg(d != NULL, "%s: %s %s %s", valid[_i].changes, e.n ? e.v[0].field : "",
	    e.n ? e.v[0].code : "", e.n ? e.v[0].message : "");
	ck_assert_str_eq(field(d, valid[_i].field), valid[_i].want);
}
END_TEST

/* what a change does not name stays as extraction left it */
START_TEST(others_untouched)
{
	struct verrs e = { 0 };
	struct json_object *d = apply(NULL,
	    "{\"payee_name\":{\"operation\":\"set\",\"value\":\"Metro Power\"}}", &e);

	ck_assert_ptr_nonnull(d);
	ck_assert_str_eq(field(d, "account_number"),
	    "{\"value\":\"12345\",\"confidence\":0.9,\"source\":null}");
	ck_assert_str_eq(field(d, "total_amount"), "{\"value\":{\"value\":\"120.00\","
	    "\"currency\":\"USD\"},\"confidence\":0.9,\"source\":{\"page\":1,\"bbox\":[1,2,3,4]}}");
}
END_TEST

/* several keys at once, and the empty changes object */
START_TEST(many_and_none)
{
	struct verrs e = { 0 };
	struct json_object *d = apply(NULL,
	    "{\"payee_name\":{\"operation\":\"set\",\"value\":\"A\"},"
	    " \"due_date\":{\"operation\":\"set\",\"value\":\"2027-03-01\"},"
	    " \"amount_due\":{\"operation\":\"set\",\"value\":1.5},"
	    " \"currency\":{\"operation\":\"set\",\"value\":\"EUR\"},"
	    " \"bill_number\":{\"operation\":\"clear\"}}", &e);

	ck_assert_ptr_nonnull(d);
	ck_assert_str_eq(field(d, "payee_name"), SET("\"A\""));
	ck_assert_str_eq(field(d, "due_date_iso"), SET("\"2027-03-01\""));
	ck_assert_str_eq(field(d, "total_amount"), SET("{\"value\":\"1.50\",\"currency\":\"EUR\"}"));
	ck_assert_str_eq(field(d, "currency"), SET("\"EUR\""));
	ck_assert_str_eq(field(d, "bill_number"), CLEARED);

	d = apply(NULL, "{}", &e);
	ck_assert_ptr_nonnull(d);
	ck_assert_str_eq(field(d, "payee_name"), "{\"value\":\"City Water\",\"confidence\":0.95,"
	    "\"source\":{\"page\":1,\"bbox\":[1,2,3,4]}}");
}
END_TEST

/* the draft's checks are recomputed (ex_recheck): the stale one is gone,
 * the balance of the figures as they stand is checked */
static const char unbalanced[] =
	"{\"total_amount\":{\"value\":{\"value\":\"90.00\",\"currency\":\"USD\"},"
	"  \"confidence\":0.9,\"source\":null},"
	" \"previous_balance\":{\"value\":{\"value\":\"50.00\",\"currency\":\"USD\"},"
	"  \"confidence\":0.9,\"source\":null},"
	" \"payments_received\":{\"value\":{\"value\":\"50.00\",\"currency\":\"USD\"},"
	"  \"confidence\":0.9,\"source\":null},"
	" \"current_charges\":{\"value\":{\"value\":\"100.00\",\"currency\":\"USD\"},"
	"  \"confidence\":0.9,\"source\":null},"
	" \"checks\":[{\"name\":\"stale\",\"status\":\"failed\"}]}";

/* The status of check name in d, or NULL; fails on a check named stale. */
static const char *
check_status(struct json_object *d, const char *name)
{
	struct json_object *checks, *c;
	const char *st = NULL;
	size_t i;

	ck_assert(json_object_object_get_ex(d, "checks", &checks));
	ck_assert(json_object_is_type(checks, json_type_array));
	for (i = 0; i < json_object_array_length(checks); i++) {
		c = json_object_array_get_idx(checks, i);
		ck_assert_str_ne(json_get_str(c, "name"), "stale");
		if (strcmp(json_get_str(c, "name"), name) == 0)
			st = json_get_str(c, "status");
	}
	return st;
}

START_TEST(recheck)
{
	struct verrs e = { 0 };
	struct json_object *d = apply(unbalanced,
	    "{\"payee_name\":{\"operation\":\"set\",\"value\":\"City Water\"}}", &e);

	ck_assert_ptr_nonnull(d);
	/* 50 - 50 + 100 is not 90 */
	ck_assert_pstr_eq(check_status(d, "balance"), "failed");
	/* the reviewer's own total is no extraction error */
	d = apply(unbalanced, "{\"total_amount\":{\"operation\":\"set\","
	    "\"value\":{\"value\":\"90\",\"currency\":\"USD\"}}}", &e);
	ck_assert_ptr_nonnull(d);
	ck_assert_pstr_ne(check_status(d, "balance"), "failed");
}
END_TEST

/* ---- what the table refuses: every error names its field ---- */

static const struct {
	const char *changes, *field, *code;
} invalid[] = {
	{ "{\"payee\":{\"operation\":\"set\",\"value\":\"x\"}}", "changes.payee", "unknown_field" },
	{ "{\"checks\":{\"operation\":\"clear\"}}", "changes.checks", "unknown_field" },
	{ "{\"payee_name\":\"Metro\"}", "changes.payee_name", "invalid_type" },
	{ "{\"payee_name\":null}", "changes.payee_name", "invalid_type" },
	{ "{\"payee_name\":{\"value\":\"x\"}}", "changes.payee_name.operation", "required" },
	{ "{\"payee_name\":{\"operation\":\"replace\",\"value\":\"x\"}}",
	  "changes.payee_name.operation", "invalid_enum" },
	{ "{\"payee_name\":{\"operation\":\"set\",\"value\":\"x\",\"extra\":1}}",
	  "changes.payee_name.extra", "unknown_field" },
	{ "{\"payee_name\":{\"operation\":\"set\"}}", "changes.payee_name", "required" },
	{ "{\"payee_name\":{\"operation\":\"set\",\"value\":null}}", "changes.payee_name", "required" },
	{ "{\"payee_name\":{\"operation\":\"clear\",\"value\":\"x\"}}", "changes.payee_name", "invalid" },
	{ "{\"payee_name\":{\"operation\":\"set\",\"value\":12}}",
	  "changes.payee_name.value", "invalid_type" },
	{ "{\"payee_name\":{\"operation\":\"set\",\"value\":\"\"}}",
	  "changes.payee_name.value", "too_short" },
	{ "{\"payee_name\":{\"operation\":\"set\",\"value\":\"   \"}}",
	  "changes.payee_name.value", "blank" },
	{ "{\"account_number\":{\"operation\":\"set\",\"value\":\"12\\n34\"}}",
	  "changes.account_number.value", "control_character" },
	{ "{\"reference_number\":{\"operation\":\"set\",\"value\":[\"x\"]}}",
	  "changes.reference_number.value", "invalid_type" },
	{ "{\"bill_number\":{\"operation\":\"set\",\"value\":true}}",
	  "changes.bill_number.value", "invalid_type" },
	{ "{\"payment_method\":{\"operation\":\"set\",\"value\":{}}}",
	  "changes.payment_method.value", "invalid_type" },
	{ "{\"override_reason\":{\"operation\":\"set\",\"value\":\"a\\u0001b\"}}",
	  "changes.override_reason.value", "control_character" },
	{ "{\"total_amount\":{\"operation\":\"set\",\"value\":\"12.50\"}}",
	  "changes.total_amount.value", "invalid_type" },
	{ "{\"total_amount\":{\"operation\":\"set\",\"value\":{\"value\":12.5,\"currency\":\"USD\"}}}",
	  "changes.total_amount.value.value", "invalid_type" },
	{ "{\"total_amount\":{\"operation\":\"set\",\"value\":{\"value\":\"12.50\"}}}",
	  "changes.total_amount.value.currency", "required" },
	{ "{\"total_amount\":{\"operation\":\"set\",\"value\":{\"currency\":\"USD\"}}}",
	  "changes.total_amount.value.value", "required" },
	{ "{\"total_amount\":{\"operation\":\"set\",\"value\":{\"value\":\"12.505\",\"currency\":\"USD\"}}}",
	  "changes.total_amount.value", "invalid_format" },
	{ "{\"total_amount\":{\"operation\":\"set\",\"value\":{\"value\":\"12.5\",\"currency\":\"JPY\"}}}",
	  "changes.total_amount.value", "invalid_format" },
	{ "{\"total_amount\":{\"operation\":\"set\",\"value\":{\"value\":\"-1.00\",\"currency\":\"USD\"}}}",
	  "changes.total_amount.value.value", "invalid_format" },
	{ "{\"total_amount\":{\"operation\":\"set\",\"value\":{\"value\":\"1,000.00\",\"currency\":\"USD\"}}}",
	  "changes.total_amount.value.value", "invalid_format" },
	{ "{\"total_amount\":{\"operation\":\"set\",\"value\":{\"value\":\"1e3\",\"currency\":\"USD\"}}}",
	  "changes.total_amount.value.value", "invalid_format" },
	{ "{\"total_amount\":{\"operation\":\"set\",\"value\":{\"value\":\"10.00\",\"currency\":\"usd\"}}}",
	  "changes.total_amount.value.currency", "invalid_format" },
	{ "{\"total_amount\":{\"operation\":\"set\",\"value\":{\"value\":\"10.00\",\"currency\":\"XXX\"}}}",
	  "changes.total_amount.value.currency", "invalid_format" },
	{ "{\"total_amount\":{\"operation\":\"set\",\"value\":{\"value\":\"1\",\"currency\":\"USD\",\"x\":1}}}",
	  "changes.total_amount.value.x", "unknown_field" },
	{ "{\"due_date_iso\":{\"operation\":\"set\",\"value\":\"2026-02-30\"}}",
	  "changes.due_date_iso.value", "invalid_format" },
	{ "{\"due_date_iso\":{\"operation\":\"set\",\"value\":\"12/15/2026\"}}",
	  "changes.due_date_iso.value", "invalid_format" },
	{ "{\"due_date_iso\":{\"operation\":\"set\",\"value\":\"2026-12-15T00:00:00Z\"}}",
	  "changes.due_date_iso.value", "invalid_format" },
	{ "{\"payment_date\":{\"operation\":\"set\",\"value\":\"2027-13-01\"}}",
	  "changes.payment_date.value", "invalid_format" },
	{ "{\"statement_date\":{\"operation\":\"set\",\"value\":20261120}}",
	  "changes.statement_date.value", "invalid_type" },
	{ "{\"amount_due\":{\"operation\":\"set\",\"value\":\"12.50\"}}",
	  "changes.amount_due.value", "invalid_type" },
	{ "{\"amount_due\":{\"operation\":\"set\",\"value\":-1}}",
	  "changes.amount_due.value", "out_of_range" },
	{ "{\"due_date\":{\"operation\":\"set\",\"value\":\"2025-02-29\"}}",
	  "changes.due_date.value", "invalid_format" },
	{ "{\"currency\":{\"operation\":\"set\",\"value\":\"DOLLARS\"}}",
	  "changes.currency.value", "invalid_format" },
	{ "{\"currency\":{\"operation\":\"set\",\"value\":840}}",
	  "changes.currency.value", "invalid_type" },
	{ "{\"service_period\":{\"operation\":\"set\",\"value\":\"October\"}}",
	  "changes.service_period.value", "invalid_type" },
	{ "{\"service_period\":{\"operation\":\"set\",\"value\":{\"start_date\":\"2026-10-32\"}}}",
	  "changes.service_period.value", "invalid_format" },
	{ "{\"service_period\":{\"operation\":\"set\",\"value\":{\"end_date\":5}}}",
	  "changes.service_period.value", "invalid_format" },
	{ "{\"service_period\":{\"operation\":\"set\",\"value\":{\"start_date\":\"2026-10-31\",\"end_date\":\"2026-10-01\"}}}",
	  "changes.service_period.value", "out_of_range" },
	{ "{\"remit_to_address\":{\"operation\":\"set\",\"value\":42}}",
	  "changes.remit_to_address.value", "invalid_type" },
	{ "{\"remit_to_address\":{\"operation\":\"set\",\"value\":\"  \"}}",
	  "changes.remit_to_address.value", "blank" },
	{ "{\"remit_to_address\":{\"operation\":\"set\",\"value\":{\"lines\":\"PO Box 1\"}}}",
	  "changes.remit_to_address.value", "invalid_type" },
	{ "{\"remit_to_address\":{\"operation\":\"set\",\"value\":{\"lines\":[1]}}}",
	  "changes.remit_to_address.value", "invalid_type" },
	{ "{\"remit_to_address\":{\"operation\":\"set\",\"value\":{\"text\":[]}}}",
	  "changes.remit_to_address.value", "invalid_type" },
	{ "{\"payment_url\":{\"operation\":\"set\",\"value\":\"http://pay.example.com/\"}}",
	  "changes.payment_url.value", "invalid_format" },
	{ "{\"payment_url\":{\"operation\":\"set\",\"value\":\"javascript:alert(1)\"}}",
	  "changes.payment_url.value", "invalid_format" },
	{ "{\"payment_url\":{\"operation\":\"set\",\"value\":{\"url\":\"https://x.example\"}}}",
	  "changes.payment_url.value", "invalid_type" },
	{ "{\"line_items\":{\"operation\":\"set\",\"value\":{\"description\":\"x\"}}}",
	  "changes.line_items.value", "invalid_type" },
	{ "{\"line_items\":{\"operation\":\"set\",\"value\":[\"Water 10.00\"]}}",
	  "changes.line_items.value[0]", "invalid_type" },
	{ "{\"line_items\":{\"operation\":\"set\",\"value\":[{\"description\":7}]}}",
	  "changes.line_items.value[0]", "invalid_type" },
	{ "{\"line_items\":{\"operation\":\"set\",\"value\":[{},{\"amount\":\"10.00\"}]}}",
	  "changes.line_items.value[1]", "invalid_type" },
	{ "{\"line_items\":{\"operation\":\"set\",\"value\":[{\"amount\":{\"value\":\"1.001\",\"currency\":\"USD\"}}]}}",
	  "changes.line_items.value[0]", "invalid_format" },
	{ "{\"line_items\":{\"operation\":\"set\",\"value\":[{\"amount\":{\"value\":\"1\",\"currency\":\"ABC\"}}]}}",
	  "changes.line_items.value[0]", "invalid_format" },
	{ "{\"line_items\":{\"operation\":\"set\",\"value\":[{\"category\":\"food\"}]}}",
	  "changes.line_items.value[0]", "invalid_enum" },
	{ "{\"line_items\":{\"operation\":\"set\",\"value\":[{\"quantity\":\"2\"}]}}",
	  "changes.line_items.value[0]", "invalid_type" },
	{ "{\"classification_override\":{\"operation\":\"set\",\"value\":7}}",
	  "changes.classification_override.value", "invalid_type" },
	{ "{\"classification_override\":{\"operation\":\"set\",\"value\":[\"water\"]}}",
	  "changes.classification_override.value", "invalid_type" },
};

START_TEST(refused)
{
	struct verrs e = { 0 };
	size_t i;

	ck_assert_ptr_null(apply(NULL, invalid[_i].changes, &e));
	ck_assert_uint_ge(e.n, 1);
	for (i = 0; i < e.n; i++)
		if (strcmp(e.v[i].field, invalid[_i].field) == 0)
			break;
	ck_assert_msg(i < e.n, "%s: wanted %s, got %s (%s)", invalid[_i].changes,
	    invalid[_i].field, e.v[0].field, e.v[0].code);
	ck_assert_msg(strcmp(e.v[i].code, invalid[_i].code) == 0, "%s: %s is %s, not %s",
	    invalid[_i].changes, e.v[i].field, e.v[i].code, invalid[_i].code);
	ck_assert(e.v[i].message != NULL && e.v[i].message[0] != '\0');
}
END_TEST

/* an unknown key's message names the close one */
START_TEST(unknown_hint)
{
	struct verrs e = { 0 };

	ck_assert_ptr_null(apply(NULL, "{\"payee_nmae\":{\"operation\":\"clear\"}}", &e));
	ck_assert_uint_eq(e.n, 1);
	ck_assert_ptr_nonnull(strstr(e.v[0].message, "payee_name"));
}
END_TEST

/* every error of a body, not only the first */
START_TEST(all_errors)
{
	struct verrs e = { 0 };

	ck_assert_ptr_null(apply(NULL, "{\"payee_name\":{\"operation\":\"set\",\"value\":1},"
	    "\"due_date_iso\":{\"operation\":\"set\",\"value\":\"x\"},\"nope\":{}}", &e));
	ck_assert_uint_eq(e.n, 3);
}
END_TEST

/* ---- what only the draft, or two keys at once, can answer ---- */

static const char no_currency[] =
	"{\"payee_name\":{\"value\":\"City Water\",\"confidence\":0.95,\"source\":null},"
	" \"total_amount\":{\"value\":null,\"confidence\":0,\"source\":null},"
	" \"currency\":{\"value\":null,\"confidence\":0,\"source\":null}}";

static const struct {
	const char *draft, *changes, *field, *code;
} conflicts[] = {
	{ NULL, "{\"due_date\":{\"operation\":\"set\",\"value\":\"2027-01-01\"},"
	  "\"due_date_iso\":{\"operation\":\"set\",\"value\":\"2027-01-01\"}}",
	  "changes.due_date", "duplicate_field" },
	{ NULL, "{\"amount_due\":{\"operation\":\"set\",\"value\":1},"
	  "\"total_amount\":{\"operation\":\"clear\"}}", "changes.amount_due", "duplicate_field" },
	{ NULL, "{\"currency\":{\"operation\":\"set\",\"value\":\"EUR\"},"
	  "\"total_amount\":{\"operation\":\"set\",\"value\":{\"value\":\"1\",\"currency\":\"USD\"}}}",
	  "changes.currency", "duplicate_field" },
	{ no_currency, "{\"amount_due\":{\"operation\":\"set\",\"value\":12.5}}",
	  "changes.amount_due", "currency_required" },
	{ NULL, "{\"amount_due\":{\"operation\":\"set\",\"value\":12.345}}",
	  "changes.amount_due.value", "invalid_format" },
	{ NULL, "{\"amount_due\":{\"operation\":\"set\",\"value\":1.5},"
	  "\"currency\":{\"operation\":\"set\",\"value\":\"JPY\"}}",
	  "changes.amount_due.value", "invalid_format" },
	{ "{\"total_amount\":{\"value\":{\"value\":\"120.50\",\"currency\":\"USD\"},"
	  "\"confidence\":0.9,\"source\":null}}", "{\"currency\":{\"operation\":\"set\",\"value\":\"JPY\"}}",
	  "changes.currency", "invalid_for_currency" },
	{ NULL, "{\"amount_due\":{\"operation\":\"set\",\"value\":5},"
	  "\"currency\":{\"operation\":\"clear\"}}", "changes.currency", "conflicting_operation" },
};

START_TEST(draft_refused)
{
	struct verrs e = { 0 };
	const char *before = conflicts[_i].draft != NULL ? conflicts[_i].draft : draft_text;
	struct json_object *in, *out, *d;

	in = parse(arena_printf(&a, "{\"changes\":%s}", conflicts[_i].changes));
	ck_assert_int_eq(validate_body(&a, body, in, &out, &e), 0);
	d = parse(before);
	ck_assert_int_eq(imports_changes_apply(&a, d, json_object_object_get(out, "changes"),
	    "changes", &e), -1);
	ck_assert_uint_ge(e.n, 1);
	ck_assert_str_eq(e.v[0].field, conflicts[_i].field);
	ck_assert_str_eq(e.v[0].code, conflicts[_i].code);
	/* nothing written */
	ck_assert_str_eq(text(d), text(parse(before)));
}
END_TEST

/* the path names the body's member: confirm's final_changes */
START_TEST(path_named)
{
	struct verrs e = { 0 };
	struct json_object *ch = parse("{\"amount_due\":{\"operation\":\"set\",\"value\":1}}");

	ck_assert_int_eq(imports_changes_apply(&a, parse(no_currency), ch, "final_changes", &e), -1);
	ck_assert_str_eq(e.v[0].field, "final_changes.amount_due");
}
END_TEST

/* ---- the draft's total ---- */

START_TEST(draft_total)
{
	long long minor = 0;
	const char *cur = NULL;

	ck_assert_int_eq(imports_draft_total(parse(draft_text), &minor, &cur), 1);
	ck_assert_int_eq(minor, 12000);
	ck_assert_str_eq(cur, "USD");
	ck_assert_int_eq(imports_draft_total(parse(no_currency), &minor, &cur), 0);
	ck_assert_int_eq(imports_draft_total(parse("{}"), &minor, &cur), 0);
	ck_assert_int_eq(imports_draft_total(parse("{\"total_amount\":{\"value\":"
	    "{\"value\":\"1.00\",\"currency\":null}}}"), &minor, &cur), 0);
	ck_assert_int_eq(imports_draft_total(parse("{\"total_amount\":{\"value\":"
	    "{\"value\":\"abc\",\"currency\":\"USD\"}}}"), &minor, &cur), 0);
	ck_assert_int_eq(imports_draft_total(parse("{\"total_amount\":{\"value\":"
	    "{\"value\":\"7\",\"currency\":\"JPY\"}}}"), &minor, &cur), 1);
	ck_assert_int_eq(minor, 7);
}
END_TEST

/* the table's schema: every key of SPEC.md's table, and no other but statement_date */
START_TEST(schema_keys)
{
	static const char *const keys[] = { "payee_name", "account_number", "reference_number",
		"bill_number", "payment_method", "override_reason", "total_amount", "due_date_iso",
		"payment_date", "amount_due", "due_date", "currency", "service_period",
		"remit_to_address", "payment_url", "line_items", "classification_override",
		"statement_date" };
	struct json_object *s = json_own(&a, validate_schema(imports_changes_fields)), *props;
	size_t i;

	ck_assert(json_object_object_get_ex(s, "properties", &props));
	ck_assert_int_eq(json_object_object_length(props), (int)N(keys));
	for (i = 0; i < N(keys); i++)
		ck_assert_msg(json_object_object_get_ex(props, keys[i], NULL), "%s", keys[i]);
}
END_TEST

static Suite *
suite(void)
{
	Suite *s = suite_create("imports_changes");
	TCase *tc = tcase_create("changes");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_loop_test(tc, set_and_clear, 0, (int)N(valid));
	tcase_add_test(tc, others_untouched);
	tcase_add_test(tc, many_and_none);
	tcase_add_test(tc, recheck);
	tcase_add_loop_test(tc, refused, 0, (int)N(invalid));
	tcase_add_test(tc, unknown_hint);
	tcase_add_test(tc, all_errors);
	tcase_add_loop_test(tc, draft_refused, 0, (int)N(conflicts));
	tcase_add_test(tc, path_named);
	tcase_add_test(tc, draft_total);
	tcase_add_test(tc, schema_keys);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tcheck_run(suite());
}
