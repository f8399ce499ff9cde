#ifndef BDS_IMPORTS_CHANGES_H
#define BDS_IMPORTS_CHANGES_H
/*
 * Review changes (SPEC.md "Bill imports (KEY)", the review changes table):
 * the object PATCH review_draft's `changes` and confirm's `final_changes`
 * carry, and what applying one does to an import's draft (the contract of
 * lib/imports/extract/extract.h's draft). Pure: json-c, core/validate and
 * core/money only; no database, no I/O.
 *
 * Every key is optional and holds an operation object {operation: "set" |
 * "clear", value}. `set` needs a value of the key's type; `clear` takes
 * none (absent or null). The keys:
 *
 *	payee_name, account_number, reference_number, bill_number,
 *	payment_method, override_reason	  a string (1..500 characters, not
 *					  blank, no control characters)
 *	total_amount	{value: a decimal string with at most the currency's
 *			 minor-unit digits, currency: ISO 4217}; written back
 *			 at exactly the currency's exponent ("12.5" USD: "12.50")
 *	due_date_iso, payment_date, statement_date	YYYY-MM-DD, a real date
 *	amount_due	(deprecated) a number of major units, >= 0, in the
 *			 currency of currency, else of the draft's total
 *	due_date	(deprecated) YYYY-MM-DD: due_date_iso
 *	currency	(deprecated) ISO 4217: total_amount's currency
 *	service_period	an object; start_date and end_date, when given,
 *			 dates, end not before start; other members kept
 *	remit_to_address  a string (kept as {lines, text}) or an object whose
 *			 lines (array of strings) and text (string) are typed
 *	payment_url	an https URL
 *	line_items	an array (at most 200) of objects; description
 *			 (string), amount ({value, currency} as total_amount),
 *			 category (usage|fee|tax|credit|adjustment|other),
 *			 quantity (number) and unit (string) typed when given,
 *			 other members kept
 *	classification_override	a string or an object, kept as given
 */
#include <stddef.h>

#include <json-c/json.h>

#include "core/validate.h"

struct arena;
struct json_object;
struct verrs;

/* The changes object's members as a field-spec table ({NULL}-terminated):
 * a route body nests it as a VT_OBJECT's .fields, so the dispatcher's
 * validate_body checks every key, operation and value type (400
 * VALIDATION_ERROR naming "changes.<key>.value" and the like). */
extern const struct vfield imports_changes_fields[];

/*
 * Apply changes (validate_body's output for imports_changes_fields) to
 * draft, in place, then recompute its checks (ex_recheck). A `set` makes
 * the field {value, confidence: 1, source: null, reviewed: true}, a
 * `clear` {value: null, confidence: 0, source: null, reviewed: true}. The
 * deprecated keys land on their successors: amount_due on total_amount's
 * value, due_date on due_date_iso, currency on total_amount's currency
 * (and the draft's currency field, which follows total_amount's).
 *
 * What only the draft can answer is checked here, errors named under path
 * (e.g. "changes"): a deprecated key beside its successor
 * (duplicate_field), amount_due with no currency known
 * (currency_required) or finer than its currency allows, a new currency
 * the draft's amount does not fit (invalid_for_currency), clearing the
 * currency of an amount set in the same changes (conflicting_operation).
 * 0 applied; -1 with errs filled and draft unchanged, or (errs untouched)
 * out of memory.
 */
int	 imports_changes_apply(struct arena *, struct json_object *draft,
	    struct json_object *changes, const char *path, struct verrs *errs);

/*
 * The draft's total amount: 1 with *minor and *currency (the draft's
 * string) when total_amount holds a value and an ISO 4217 currency, else 0.
 */
int	 imports_draft_total(struct json_object *draft, long long *minor,
	    const char **currency);

/*
 * The value of the draft's field key (a {value, confidence, source} object)
 * when it is of JSON type t; NULL when the field is absent, its value null
 * or of another type. imports_draft_str: a string value.
 */
struct json_object *imports_draft_value(struct json_object *draft, const char *key,
	    json_type t);
const char *imports_draft_str(struct json_object *draft, const char *key);

#endif
