/*
 * libFuzzer target for the field rules of bill extraction
 * (lib/imports/extract/extract_fields*.c): bytes become lines of a
 * document, ex_fields turns them into a draft, and the draft must keep the
 * promises of extract.h whatever the text (OCR debris, invalid UTF-8, huge
 * lines, absurd boxes).
 *
 * Input layout: lines separated by '\n'; each line's first three bytes are
 *	byte 0	page (b & 3) + 1; bit 2 an OCR line (conf (b >> 3) / 31);
 *		bit 7 a box of NaN and infinity
 *	byte 1	y: b * 3 points
 *	byte 2	x: b * 2 points
 *	rest	the text (NUL bytes end it early, as a C string does)
 *
 * Checked beyond "no crash, no leak, no undefined behaviour":
 *   - a draft always (NULL only for out of memory), serialised as valid
 *     UTF-8 JSON that parses back;
 *   - every field present as {value, confidence 0..1, source}; a found
 *     field has source {page, bbox of 4 numbers}, a missing one null/0;
 *   - amounts are decimal strings at their currency's exponent, currencies
 *     ISO 4217, dates real YYYY-MM-DD dates, a period ordered;
 *   - checks[]: balance and line_items, each passed|failed|skipped; a failed
 *     one leaves total_amount under EX_READY_CONFIDENCE;
 *   - ex_draft_ready answers 0 with a reason or 1 without, and never 1 with
 *     a failed check or a required field under the threshold;
 *   - ex_recheck keeps the checks as they were; ex_fields twice gives the
 *     same draft.
 * A broken promise calls abort(), which libFuzzer reports as a crash.
 * Build and run with `scripts/fuzz fields`; see t/fuzz/README.md.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "core/money.h"
#include "imports/extract/extract.h"

#define MAXLINES	512

int	 LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static void
broken(const char *what, const char *detail)
{
	fprintf(stderr, "fuzz_fields: %s: %s\n", what, detail != NULL ? detail : "");
	abort();
}

static struct json_object *
get(struct json_object *o, const char *key)
{
	struct json_object *v = NULL;

	if (o == NULL || !json_object_is_type(o, json_type_object) ||
	    !json_object_object_get_ex(o, key, &v))
		return NULL;
	return v;
}

static int
is_date(struct json_object *v)
{
	const char *s;
	int y, m, d;
	static const int mdays[] = { 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };

	if (!json_object_is_type(v, json_type_string))
		return 0;
	s = json_object_get_string(v);
	if (strlen(s) != 10 || s[4] != '-' || s[7] != '-' || sscanf(s, "%4d-%2d-%2d", &y, &m, &d) != 3)
		return 0;
	if (m < 1 || m > 12 || d < 1 || d > mdays[m - 1])
		return 0;
	return !(m == 2 && d == 29 && !((y % 4 == 0 && y % 100 != 0) || y % 400 == 0));
}

static void
check_amount(struct json_object *a, const char *key)
{
	struct json_object *v = get(a, "value"), *c = get(a, "currency");
	long long minor;
	int exp = 2;

	if (v == NULL || !json_object_is_type(v, json_type_string))
		broken("amount without a value", key);
	if (c != NULL) {
		if (!json_object_is_type(c, json_type_string) ||
		    (exp = money_exponent(json_object_get_string(c))) < 0)
			broken("amount in no currency", key);
	}
	if (money_parse(json_object_get_string(v), exp, MONEY_SIGNED | MONEY_EXACT, &minor) != MONEY_OK)
		broken("amount not at its exponent", json_object_get_string(v));
}

static const char *const keys[] = {
	"payee_name", "account_number", "bill_number", "reference_number", "total_amount",
	"previous_balance", "payments_received", "current_charges", "currency", "due_date_iso",
	"statement_date", "service_period", "line_items", "remit_to_address", "payment_url",
};

static void
check_draft(struct json_object *d)
{
	struct json_object *checks, *total;
	const char *why = NULL, *text;
	struct json_tokener *tok;
	struct json_object *back;
	size_t i;
	int ready, failed = 0;

	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		struct json_object *f = get(d, keys[i]), *v, *c, *src, *box;
		double conf;

		if (f == NULL || !json_object_is_type(f, json_type_object))
			broken("field missing", keys[i]);
		v = get(f, "value");
		c = get(f, "confidence");
		src = get(f, "source");
		if (c == NULL || (!json_object_is_type(c, json_type_double) &&
		    !json_object_is_type(c, json_type_int)))
			broken("confidence missing", keys[i]);
		conf = json_object_get_double(c);
		if (!(conf >= 0 && conf <= 1))
			broken("confidence out of 0..1", keys[i]);
		if (v == NULL) {
			if (src != NULL || conf != 0)
				broken("a missing field with a source or a confidence", keys[i]);
			continue;
		}
		box = get(src, "bbox");
		if (src == NULL || get(src, "page") == NULL || box == NULL ||
		    !json_object_is_type(box, json_type_array) || json_object_array_length(box) != 4)
			broken("a found field without its source", keys[i]);
		if (strcmp(keys[i], "total_amount") == 0 || strcmp(keys[i], "previous_balance") == 0 ||
		    strcmp(keys[i], "payments_received") == 0 || strcmp(keys[i], "current_charges") == 0)
			check_amount(v, keys[i]);
		else if (strcmp(keys[i], "currency") == 0) {
			if (money_exponent(json_object_get_string(v)) < 0)
				broken("currency not ISO 4217", json_object_get_string(v));
		} else if (strcmp(keys[i], "due_date_iso") == 0 || strcmp(keys[i], "statement_date") == 0) {
			if (!is_date(v))
				broken("not a date", json_object_get_string(v));
		} else if (strcmp(keys[i], "service_period") == 0) {
			if (!is_date(get(v, "start_date")) || !is_date(get(v, "end_date")) ||
			    strcmp(json_object_get_string(get(v, "start_date")),
			    json_object_get_string(get(v, "end_date"))) > 0)
				broken("not a period", json_object_to_json_string(v));
		} else if (strcmp(keys[i], "line_items") == 0) {
			size_t k;

			if (!json_object_is_type(v, json_type_array) || json_object_array_length(v) == 0)
				broken("line items not a list", NULL);
			for (k = 0; k < json_object_array_length(v); k++) {
				struct json_object *it = json_object_array_get_idx(v, k);

				check_amount(get(it, "amount"), "line item");
				if (get(it, "description") == NULL || get(it, "category") == NULL)
					broken("line item incomplete", NULL);
			}
		} else if (strcmp(keys[i], "payment_url") == 0) {
			if (strncmp(json_object_get_string(v), "https://", 8) != 0)
				broken("payment URL not https", json_object_get_string(v));
		} else if (strcmp(keys[i], "remit_to_address") == 0) {
			if (get(v, "lines") == NULL || get(v, "text") == NULL)
				broken("address incomplete", NULL);
		} else if (!json_object_is_type(v, json_type_string) ||
		    json_object_get_string_len(v) == 0) {
			broken("empty string field", keys[i]);
		}
	}
	checks = get(d, "checks");
	if (checks == NULL || !json_object_is_type(checks, json_type_array) ||
	    json_object_array_length(checks) != 2)
		broken("checks not two", NULL);
	for (i = 0; i < 2; i++) {
		const char *st = json_object_get_string(get(json_object_array_get_idx(checks, i), "status"));

		if (st == NULL || (strcmp(st, "passed") != 0 && strcmp(st, "failed") != 0 &&
		    strcmp(st, "skipped") != 0))
			broken("check status", st);
		if (strcmp(st, "failed") == 0)
			failed = 1;
	}
	total = get(d, "total_amount");
	if (failed && get(total, "value") != NULL &&
	    json_object_get_double(get(total, "confidence")) >= EX_READY_CONFIDENCE)
		broken("a failed check left the total ready", NULL);
	ready = ex_draft_ready(d, &why);
	if ((ready == 1) != (why == NULL) || (ready != 0 && ready != 1))
		broken("ready and its reason disagree", why);
	if (ready && failed)
		broken("ready with a failed check", NULL);
	if (ready && json_object_get_double(get(total, "confidence")) < EX_READY_CONFIDENCE)
		broken("ready with an unsure total", NULL);
	/* valid UTF-8 JSON that parses back */
	text = json_object_to_json_string_ext(d, JSON_C_TO_STRING_PLAIN);
	if ((tok = json_tokener_new()) == NULL)
		return;
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
	back = json_tokener_parse_ex(tok, text, (int)strlen(text));
	if (back == NULL)
		broken("the draft does not parse back", text);
	json_object_put(back);
	json_tokener_free(tok);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct ex_line lines[MAXLINES];
	static struct ex_page pages[4];
	static char *texts[MAXLINES];
	struct ex_doc doc;
	struct json_object *d, *d2;
	char *before;
	size_t i = 0, n = 0;

	while (i < size && n < MAXLINES) {
		size_t e = i;
		const uint8_t *h;
		char *t;

		while (e < size && data[e] != '\n')
			e++;
		h = data + i;
		memset(&lines[n], 0, sizeof(lines[n]));
		if (e - i >= 3) {
			lines[n].page = (h[0] & 3) + 1;
			lines[n].conf = (h[0] & 4) ? (float)(h[0] >> 3) / 31.0f : 1.0f;
			lines[n].box.y0 = (float)h[1] * 3;
			lines[n].box.x0 = (float)h[2] * 2;
			lines[n].box.y1 = lines[n].box.y0 + 10;
			lines[n].box.x1 = lines[n].box.x0 + 5.0f * (float)(e - i - 3);
			if (h[0] & 0x80) {
				lines[n].box.x0 = NAN;
				lines[n].box.y1 = INFINITY;
			}
			i += 3;
		} else
			lines[n].page = 1;
		if ((t = malloc(e - i + 1)) == NULL)
			break;
		memcpy(t, data + i, e - i);
		t[e - i] = '\0';
		texts[n] = t;
		lines[n].text = t;
		n++;
		i = e + 1;
	}
	for (i = 0; i < 4; i++) {
		pages[i].number = (int)i + 1;
		pages[i].width = 612;
		pages[i].height = 792;
		pages[i].ocr = 0;
	}
	doc.pages = pages;
	doc.npages = 4;
	doc.lines = lines;
	doc.nlines = n;
	if ((d = ex_fields(&doc)) == NULL)
		broken("no draft", NULL);
	check_draft(d);
	/* deterministic, and ex_recheck leaves the checks alone */
	if ((d2 = ex_fields(&doc)) == NULL)
		broken("no draft", NULL);
	before = strdup(json_object_to_json_string(d));
	if (before == NULL || strcmp(before, json_object_to_json_string(d2)) != 0)
		broken("two drafts of one document differ", NULL);
	if (ex_recheck(d2) != 0)
		broken("recheck failed", NULL);
	if (strcmp(json_object_to_json_string(get(d, "checks")),
	    json_object_to_json_string(get(d2, "checks"))) != 0)
		broken("recheck changed the checks", NULL);
	free(before);
	json_object_put(d);
	json_object_put(d2);
	for (i = 0; i < n; i++)
		free(texts[i]);
	return 0;
}
