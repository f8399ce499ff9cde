/*
 * The portal connector's answer validation (lib/jobs/connectors/
 * portal_parse.c): table-driven, no network. Every answer is hostile: wrong
 * types, huge numbers, bad money strings, bad dates, missing fields, deep
 * nesting, duplicates, oversized lists; each bad one is refused naming its
 * field by JSON path, and unknown members are ignored.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <json-c/json.h>

#include "core/arena.h"
#include "core/money.h"
#include "jobs/connectors/portal.h"
#include "portal_props.h"
#include "tarena.h"
#include "tcheck.h"

#define N(x) (sizeof(x) / sizeof((x)[0]))

/* ------------------------------------------------------------------ */
/* Money and currencies                                                */

START_TEST(currencies)
{
	static const struct { const char *code; int exp; } cases[] = {
		{ "USD", 2 }, { "EUR", 2 }, { "GBP", 2 }, { "JPY", 0 }, { "KRW", 0 },
		{ "BHD", 3 }, { "KWD", 3 }, { "CLF", 4 }, { "AED", 2 }, { "ZWG", 2 },
		{ "MXN", 2 }, { "XOF", 0 }, { "usd", -1 }, { "XXX", -1 }, { "ZZZ", -1 },
		{ "US", -1 }, { "USDD", -1 }, { "", -1 }, { "U$D", -1 },
	};

	for (size_t i = 0; i < N(cases); i++)
		ck_assert_msg(money_exponent(cases[i].code) == cases[i].exp, "%s",
		    cases[i].code);
	ck_assert_int_eq(money_exponent(NULL), -1);
}
END_TEST

static const struct { const char *s; int exp; long long minor; } money_valid[] = {
	{ "123.45", 2, 12345 }, { "0.00", 2, 0 }, { "-5.00", 2, -500 }, { "-0.01", 2, -1 },
	{ "9120", 0, 9120 }, { "0", 0, 0 }, { "12.345", 3, 12345 }, { "1.2345", 4, 12345 },
	{ "999999999999999", 0, 999999999999999LL },
	{ "9999999999999.99", 2, 999999999999999LL },
};
static const struct { const char *s; int exp; } money_invalid[] = {
	{ "12.3", 2 }, { "12.345", 2 }, { "12", 2 }, { ".50", 2 }, { "1.", 2 },
	{ "01.00", 2 }, { "00", 0 }, { "+1.00", 2 }, { "1,00", 2 }, { "1e2", 0 }, { "", 2 },
	{ "-", 2 }, { "--1.00", 2 }, { " 1.00", 2 }, { "1.00 ", 2 }, { "1.00\n", 2 },
	{ "1234567890123456", 0 }, { "99999999999999.99", 2 }, { "12.34", 0 }, { "0x10", 0 },
	{ "\xd9\xa1\xd9\xa2.00", 2 }, { "NaN", 2 }, { "Infinity", 0 }, { "1.0O", 2 },
	{ "12.34", 5 }, { "12.34", -1 },
};

START_TEST(money_ok)
{
	long long v = -7;

	ck_assert_msg(portal_money_parse(money_valid[_i].s, money_valid[_i].exp, &v) == 0, "%s",
	    money_valid[_i].s);
	ck_assert_int_eq(v, money_valid[_i].minor);
}
END_TEST

START_TEST(money_bad)
{
	long long v;

	ck_assert_msg(portal_money_parse(money_invalid[_i].s, money_invalid[_i].exp, &v) != 0,
	    "%s at %d taken", money_invalid[_i].s, money_invalid[_i].exp);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Bodies built from a good one with one change                        */

/* text with member path (dotted: "document.available", "line_items.0.amount")
 * replaced by the JSON value repl, or removed when repl is NULL (malloc'ed). */
static char *
mutate(const char *text, const char *path, const char *repl)
{
	struct json_object *root = json_tokener_parse(text), *o = root;
	char *p = strdup(path), *key = p, *dot;
	char *out;

	ck_assert_ptr_nonnull(root);
	while ((dot = strchr(key, '.')) != NULL) {
		*dot = '\0';
		if (json_object_is_type(o, json_type_array))
			o = json_object_array_get_idx(o, (size_t)atoi(key));
		else
			ck_assert(json_object_object_get_ex(o, key, &o));
		key = dot + 1;
	}
	if (repl == NULL) {
		json_object_object_del(o, key);
	} else {
		struct json_object *v = json_tokener_parse(repl);

		/* "null" parses as NULL: json-c's null */
		ck_assert_msg(v != NULL || strcmp(repl, "null") == 0, "bad replacement %s", repl);
		if (json_object_is_type(o, json_type_array))
			json_object_array_put_idx(o, (size_t)atoi(key), v);
		else
			json_object_object_add(o, key, v);
	}
	out = strdup(json_object_to_json_string_ext(root, JSON_C_TO_STRING_PLAIN));
	json_object_put(root);
	free(p);
	return out;
}

#define STATEMENT \
	"{\"id\":\"st-power-00001-1-202603\",\"revision\":1,\"withdrawn\":false," \
	"\"statement_date\":\"2026-03-08\",\"due_date\":\"2026-03-29\"," \
	"\"service_period\":{\"start\":\"2026-02-08\",\"end\":\"2026-03-07\"}," \
	"\"bill_number\":\"POW-00001-1-202603\",\"currency\":\"USD\"," \
	"\"amount_due\":\"84.17\",\"previous_balance\":\"80.00\"," \
	"\"payments_received\":\"80.00\",\"current_charges\":\"84.17\"," \
	"\"balance_remaining\":\"84.17\"," \
	"\"line_items\":[{\"description\":\"Energy\",\"amount\":\"70.00\",\"category\":\"usage\"," \
	"\"quantity\":500,\"unit\":\"kWh\"},{\"description\":\"Service\",\"amount\":\"10.00\"," \
	"\"category\":\"fee\",\"quantity\":1,\"unit\":\"month\"},{\"description\":\"Tax\"," \
	"\"amount\":\"4.17\",\"category\":\"tax\",\"quantity\":1,\"unit\":\"each\"}]," \
	"\"usage\":[{\"type\":\"electricity\",\"quantity\":500.5,\"unit\":\"kWh\"}]," \
	"\"structured\":true," \
	"\"document\":{\"available\":true,\"content_type\":\"application/pdf\"}}"
#define STATEMENTS	"{\"statements\":[" STATEMENT "]}"

START_TEST(statement_good)
{
	struct connector_statement *st;
	const char *why = NULL;
	size_t n;

	ck_assert_int_eq(portal_parse_statements(&a, STATEMENTS, strlen(STATEMENTS), "ac-1", &st,
	    &n, &why), 0);
	ck_assert_uint_eq(n, 1);
	ck_assert_str_eq(st[0].b.ref, "st-power-00001-1-202603");
	ck_assert_str_eq(st[0].b.account_ref, "ac-1");
	ck_assert_int_eq(st[0].b.revision, 1);
	ck_assert_int_eq(st[0].b.withdrawn, 0);
	ck_assert_str_eq(st[0].b.statement_date, "2026-03-08");
	ck_assert_str_eq(st[0].b.due_date, "2026-03-29");
	ck_assert_str_eq(st[0].b.period_start, "2026-02-08");
	ck_assert_str_eq(st[0].b.period_end, "2026-03-07");
	ck_assert_str_eq(st[0].b.bill_number, "POW-00001-1-202603");
	ck_assert_int_eq(st[0].b.total.minor, 8417);
	ck_assert_int_eq(st[0].b.amount_due.minor, 8417);
	ck_assert_str_eq(st[0].b.total.currency, "USD");
	ck_assert_int_eq(st[0].b.previous_balance.minor, 8000);
	ck_assert_int_eq(st[0].balance.minor, 8417);
	ck_assert_str_eq(st[0].b.status, "PENDING");
	ck_assert_ptr_null(st[0].b.paid_reason);
	ck_assert_uint_eq(st[0].b.nitems, 3);
	ck_assert_str_eq(st[0].b.items[0].category, "usage");
	ck_assert_int_eq(st[0].b.items[2].amount.minor, 417);
	ck_assert(st[0].b.items[0].has_quantity && st[0].b.items[0].quantity == 500);
	ck_assert_str_eq(st[0].b.items[1].unit, "month");
	ck_assert_uint_eq(st[0].b.nusage, 1);
	ck_assert(st[0].b.usage[0].quantity == 500.5);
	ck_assert(st[0].structured && st[0].document && st[0].b.has_document);
}
END_TEST

/* Forms the page allows that a strict reading might refuse: an integral
 * revision written 2.0, a quantity written as a decimal string (as money
 * is), a UTF-8 byte order mark before the answer. */
START_TEST(statement_lenient)
{
	char *body = mutate(STATEMENTS, "statements.0.revision", "2.0");
	char *q = mutate(body, "statements.0.usage.0.quantity", "\"-4.125\"");
	char *bom = malloc(strlen(q) + 4);
	struct connector_statement *st;
	const char *why = NULL;
	size_t n;

	memcpy(bom, "\xEF\xBB\xBF", 3);
	strcpy(bom + 3, q);
	ck_assert_msg(portal_parse_statements(&a, bom, strlen(bom), "ac-1", &st, &n, &why) == 0,
	    "%s", why);
	ck_assert_uint_eq(n, 1);
	ck_assert_int_eq(st[0].b.revision, 2);
	ck_assert(st[0].b.usage[0].quantity == -4.125);
	free(bom);
	free(q);
	free(body);
}
END_TEST

/* A statement answer with one change: accepted (why NULL) or refused
 * naming that field. */
static const struct { const char *path, *repl, *why; } statement_cases[] = {
	/* unknown members, nulls where allowed, other forms that are right */
	{ "statements.0.extra", "{\"deep\":[1,2,{\"x\":null}]}", NULL },
	{ "statements.0.due_date", "null", NULL },
	{ "statements.0.due_date", NULL, NULL },
	{ "statements.0.service_period", "null", NULL },
	{ "statements.0.bill_number", NULL, NULL },
	{ "statements.0.previous_balance", NULL, NULL },
	{ "statements.0.current_charges", "null", NULL },
	{ "statements.0.amount_due", "\"-12.50\"", NULL },
	{ "statements.0.line_items", "[]", NULL },
	{ "statements.0.line_items.0.quantity", NULL, NULL },
	{ "statements.0.line_items.0.unit", "null", NULL },
	{ "statements.0.document", "{\"available\":false}", NULL },
	{ "statements.0.revision", "99", NULL },
	{ "statements.0.revision", "2.0", NULL },
	{ "statements.0.usage.0.quantity", "\"4.125\"", NULL },
	/* missing required fields */
	{ "statements.0.id", NULL, "statements[0].id" },
	{ "statements.0.revision", NULL, "statements[0].revision" },
	{ "statements.0.withdrawn", NULL, "statements[0].withdrawn" },
	{ "statements.0.statement_date", NULL, "statements[0].statement_date" },
	{ "statements.0.statement_date", "null", "statements[0].statement_date" },
	{ "statements.0.currency", NULL, "statements[0].currency" },
	{ "statements.0.amount_due", NULL, "statements[0].amount_due" },
	{ "statements.0.balance_remaining", NULL, "statements[0].balance_remaining" },
	{ "statements.0.line_items", NULL, "statements[0].line_items" },
	{ "statements.0.usage", NULL, "statements[0].usage" },
	{ "statements.0.structured", NULL, "statements[0].structured" },
	{ "statements.0.document", NULL, "statements[0].document" },
	{ "statements", NULL, "statements" },
	/* wrong types */
	{ "statements.0.id", "17", "statements[0].id" },
	{ "statements.0.id", "\"\"", "statements[0].id" },
	{ "statements.0.id", "\"a\\u0000b\"", "statements[0].id" },
	{ "statements.0.id", "\"line\\nbreak\"", "statements[0].id" },
	{ "statements.0.amount_due", "84.17", "statements[0].amount_due" },
	{ "statements.0.amount_due", "8417", "statements[0].amount_due" },
	{ "statements.0.revision", "\"1\"", "statements[0].revision" },
	{ "statements.0.revision", "1.5", "statements[0].revision" },
	{ "statements.0.revision", "true", "statements[0].revision" },
	{ "statements.0.withdrawn", "\"false\"", "statements[0].withdrawn" },
	{ "statements.0.withdrawn", "0", "statements[0].withdrawn" },
	{ "statements.0.structured", "\"yes\"", "statements[0].structured" },
	{ "statements.0.line_items", "{}", "statements[0].line_items" },
	{ "statements.0.line_items.0", "1", "statements[0].line_items[0]" },
	{ "statements.0.usage", "\"none\"", "statements[0].usage" },
	{ "statements.0.document", "\"x\"", "statements[0].document" },
	{ "statements.0.service_period", "[]", "statements[0].service_period" },
	{ "statements.0.bill_number", "5", "statements[0].bill_number" },
	{ "statements", "{}", "statements" },
	{ "statements.0", "[]", "statements[0]" },
	/* huge numbers */
	{ "statements.0.revision", "0", "statements[0].revision" },
	{ "statements.0.revision", "-1", "statements[0].revision" },
	{ "statements.0.revision", "1000001", "statements[0].revision" },
	{ "statements.0.revision", "99999999999999999999", "statements[0].revision" },
	{ "statements.0.revision", "1e30", "statements[0].revision" },
	{ "statements.0.amount_due", "\"99999999999999999999.00\"", "statements[0].amount_due" },
	{ "statements.0.line_items.0.quantity", "1e300", "statements[0].line_items[0].quantity" },
	{ "statements.0.line_items.0.quantity", "-1e13", "statements[0].line_items[0].quantity" },
	{ "statements.0.usage.0.quantity", "\"5x\"", "statements[0].usage[0].quantity" },
	{ "statements.0.usage.0.quantity", "\"\"", "statements[0].usage[0].quantity" },
	{ "statements.0.usage.0.quantity", "\"1e3\"", "statements[0].usage[0].quantity" },
	{ "statements.0.usage.0.quantity", "\"4.\"", "statements[0].usage[0].quantity" },
	{ "statements.0.usage.0.quantity", "\" 4\"", "statements[0].usage[0].quantity" },
	/* bad money strings */
	{ "statements.0.amount_due", "\"84.1\"", "statements[0].amount_due" },
	{ "statements.0.amount_due", "\"84.170\"", "statements[0].amount_due" },
	{ "statements.0.amount_due", "\"84\"", "statements[0].amount_due" },
	{ "statements.0.amount_due", "\"$84.17\"", "statements[0].amount_due" },
	{ "statements.0.previous_balance", "\"1,000.00\"", "statements[0].previous_balance" },
	{ "statements.0.balance_remaining", "\"-1.00\"", "statements[0].balance_remaining" },
	{ "statements.0.line_items.1.amount", "\"10\"", "statements[0].line_items[1].amount" },
	{ "statements.0.currency", "\"usd\"", "statements[0].currency" },
	{ "statements.0.currency", "\"XXX\"", "statements[0].currency" },
	{ "statements.0.currency", "\"JPY\"", "statements[0].amount_due" },
	/* bad dates */
	{ "statements.0.statement_date", "\"2024-13-45\"", "statements[0].statement_date" },
	{ "statements.0.statement_date", "\"2023-02-29\"", "statements[0].statement_date" },
	{ "statements.0.statement_date", "\"20240101\"", "statements[0].statement_date" },
	{ "statements.0.statement_date", "\"2024-01-01T00:00:00Z\"",
	  "statements[0].statement_date" },
	{ "statements.0.due_date", "\"2024-02-30\"", "statements[0].due_date" },
	{ "statements.0.service_period.start", "\"x\"", "statements[0].service_period.start" },
	{ "statements.0.service_period.end", NULL, "statements[0].service_period.end" },
	{ "statements.0.service_period.end", "\"2026-01-01\"", "statements[0].service_period.end" },
	/* enums and lengths */
	{ "statements.0.line_items.0.category", "\"misc\"", "statements[0].line_items[0].category" },
	{ "statements.0.line_items.0.category", "\"USAGE\"", "statements[0].line_items[0].category" },
	{ "statements.0.line_items.0.description", "\"\"",
	  "statements[0].line_items[0].description" },
	{ "statements.0.line_items.0.unit", "7", "statements[0].line_items[0].unit" },
	{ "statements.0.usage.0.type", NULL, "statements[0].usage[0].type" },
	{ "statements.0.document.available", NULL, "statements[0].document.available" },
	{ "statements.0.document.content_type", NULL, "statements[0].document.content_type" },
	{ "statements.0.document.content_type", "\"text/html\"",
	  "statements[0].document.content_type" },
	{ "statements.0.id", "\"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
	  "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\"", "statements[0].id" },
};

START_TEST(statement_mutations)
{
	char *body = mutate(STATEMENTS, statement_cases[_i].path, statement_cases[_i].repl);
	struct connector_statement *st;
	const char *why = NULL;
	size_t n;
	int rc = portal_parse_statements(&a, body, strlen(body), "ac-1", &st, &n, &why);

	if (statement_cases[_i].why == NULL) {
		ck_assert_msg(rc == 0, "%s=%s refused: %s", statement_cases[_i].path,
		    statement_cases[_i].repl, why);
		ck_assert_uint_eq(n, 1);
	} else {
		ck_assert_msg(rc == -1, "%s=%s taken", statement_cases[_i].path,
		    statement_cases[_i].repl);
		ck_assert_pstr_eq(why, statement_cases[_i].why);
		ck_assert_ptr_null(st);
		ck_assert_uint_eq(n, 0);
	}
	free(body);
}
END_TEST

/* mutate() that frees its input: a chain of changes. */
static char *
chain(char *text, const char *path, const char *repl)
{
	char *out = mutate(text, path, repl);

	free(text);
	return out;
}

/* structured: false asks only for the document: the figures may be absent
 * or null (a PDF-only biller has none to give); given, they are still
 * checked. A structured statement without them is refused (the cases
 * below). */
START_TEST(statement_unstructured)
{
	static const char *const figures[] = { "statements.0.amount_due",
	    "statements.0.balance_remaining", "statements.0.line_items", "statements.0.usage" };
	char *body = mutate(STATEMENTS, "statements.0.structured", "false");
	struct connector_statement *st;
	const char *why = NULL;
	size_t n;

	for (size_t i = 0; i < N(figures); i++)
		body = chain(body, figures[i], i % 2 ? "null" : NULL);
	ck_assert_msg(portal_parse_statements(&a, body, strlen(body), "ac-1", &st, &n, &why) == 0,
	    "%s", why);
	ck_assert_uint_eq(n, 1);
	ck_assert(!st[0].structured && st[0].document);
	ck_assert_uint_eq(st[0].b.nitems, 0);
	ck_assert_str_eq(st[0].b.status, "PENDING");
	body = chain(body, "statements.0.amount_due", "\"84.1\"");
	ck_assert_int_eq(portal_parse_statements(&a, body, strlen(body), "ac-1", &st, &n, &why), -1);
	ck_assert_str_eq(why, "statements[0].amount_due");
	free(body);
}
END_TEST

/* What a statement's figures say about its status. */
START_TEST(statement_status)
{
	char *body = mutate(STATEMENTS, "statements.0.balance_remaining", "\"0.00\"");
	char *jpy = strdup(STATEMENTS);
	struct connector_statement *st;
	const char *why;
	size_t n;

	ck_assert_int_eq(portal_parse_statements(&a, body, strlen(body), "a", &st, &n, &why), 0);
	ck_assert_str_eq(st[0].b.status, "PAID");
	ck_assert_str_eq(st[0].b.paid_reason, "portal_balance_zero");
	ck_assert_ptr_null(st[0].b.paid_at);
	ck_assert_int_eq(st[0].b.amount_due.minor, 8417);
	body = chain(body, "statements.0.structured", "false");
	ck_assert_int_eq(portal_parse_statements(&a, body, strlen(body), "a", &st, &n, &why), 0);
	ck_assert_int_eq(st[0].structured, 0);
	/* JPY: exponent 0 everywhere in the statement, its items too */
	jpy = chain(jpy, "statements.0.currency", "\"JPY\"");
	jpy = chain(jpy, "statements.0.amount_due", "\"9120\"");
	jpy = chain(jpy, "statements.0.previous_balance", "\"9000\"");
	jpy = chain(jpy, "statements.0.payments_received", "\"9000\"");
	jpy = chain(jpy, "statements.0.current_charges", "\"9120\"");
	jpy = chain(jpy, "statements.0.balance_remaining", "\"9120\"");
	ck_assert_int_eq(portal_parse_statements(&a, jpy, strlen(jpy), "a", &st, &n, &why), -1);
	ck_assert_str_eq(why, "statements[0].line_items[0].amount");
	jpy = chain(jpy, "statements.0.line_items", "[{\"description\":\"Gas\","
	    "\"amount\":\"9120\",\"category\":\"usage\"}]");
	ck_assert_int_eq(portal_parse_statements(&a, jpy, strlen(jpy), "a", &st, &n, &why), 0);
	ck_assert_int_eq(st[0].b.total.minor, 9120);
	ck_assert_str_eq(st[0].b.total.currency, "JPY");
	ck_assert_int_eq(st[0].b.items[0].amount.minor, 9120);
	ck_assert_int_eq(st[0].b.items[0].has_quantity, 0);
	free(body);
	free(jpy);
}
END_TEST

/* Bodies that are no answer at all, lists too long, duplicates, nesting. */
START_TEST(statement_bodies)
{
	static const struct { const char *body, *why; } cases[] = {
		{ "", "body" }, { "null", "body" }, { "[]", "body" }, { "\"statements\"", "body" },
		{ "{\"statements\":[", "body" }, { "{\"statements\":[]} x", "body" },
		{ "{\"statements\":[],\"statements\":[]}", "body" },
		{ "{'statements':[]}", "body" }, { "{\"statements\":[\"\xff\"]}", "body" },
		{ "<html>oops</html>", "body" }, { "{\"statements\":null}", "statements" },
		{ "{\"statements\":[" STATEMENT "," STATEMENT "]}", "statements[1].id" },
		{ "{\"statements\":[]}", NULL }, { "{\"statements\":[],\"more\":1}", NULL },
	};
	struct connector_statement *st;
	const char *why;
	size_t n;

	for (size_t i = 0; i < N(cases); i++) {
		why = NULL;
		ck_assert_msg(portal_parse_statements(&a, cases[i].body, strlen(cases[i].body), "a",
		    &st, &n, &why) == (cases[i].why ? -1 : 0), "%s", cases[i].body);
		ck_assert_pstr_eq(why, cases[i].why);
	}
}
END_TEST

/* Deep nesting: refused by the parser's depth limit, not by the stack. */
START_TEST(deep_nesting)
{
	size_t depth = 100000, len = 0;
	char *body = malloc(2 * depth + 64);
	struct connector_statement *st;
	const char *why;
	size_t n;

	len += (size_t)sprintf(body, "{\"statements\":[],\"x\":");
	memset(body + len, '[', depth);
	len += depth;
	memset(body + len, ']', depth);
	len += depth;
	body[len++] = '}';
	ck_assert_int_eq(portal_parse_statements(&a, body, len, "a", &st, &n, &why), -1);
	ck_assert_str_eq(why, "body");
	free(body);
}
END_TEST

/* Counts and the size cap. */
START_TEST(too_many)
{
	size_t cnt = PORTAL_STATEMENTS_MAX + 1, len = 0;
	char *body = malloc(3 * cnt + 64), *big;
	struct connector_statement *st;
	struct bills_payment *p;
	const char *why;
	size_t n;

	len += (size_t)sprintf(body, "{\"statements\":[");
	for (size_t i = 0; i < cnt; i++) {
		memcpy(body + len, "{},", 3);
		len += 3;
	}
	body[len - 1] = ']';
	body[len++] = '}';
	ck_assert_int_eq(portal_parse_statements(&a, body, len, "a", &st, &n, &why), -1);
	ck_assert_str_eq(why, "statements");
	free(body);
	/* an answer over the cap is refused before it is parsed */
	big = malloc((size_t)PORTAL_JSON_MAX + 64);
	len = (size_t)sprintf(big, "{\"payments\":[],\"pad\":\"");
	memset(big + len, 'x', (size_t)PORTAL_JSON_MAX);
	len += (size_t)PORTAL_JSON_MAX;
	memcpy(big + len, "\"}", 2);
	len += 2;
	ck_assert_int_eq(portal_parse_payments(&a, big, len, "a", &p, &n, &why), -1);
	ck_assert_str_eq(why, "body");
	free(big);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Accounts, payments, login, errors                                   */

#define ACCOUNTS "{\"accounts\":[{\"id\":\"ac-power-00001-1\",\"name\":\"Residential\"," \
	"\"type\":\"residential\",\"number_mask\":\"****1234\",\"service_address\":\"1 Main St\"," \
	"\"status\":\"active\"}]}"

static const struct { const char *path, *repl, *why; } account_cases[] = {
	{ "accounts.0.surprise", "true", NULL },
	{ "accounts.0.name", "null", NULL },
	{ "accounts.0.service_address", NULL, NULL },
	{ "accounts.0.status", "\"closed\"", NULL },
	{ "accounts.0.id", NULL, "accounts[0].id" },
	{ "accounts.0.id", "12", "accounts[0].id" },
	{ "accounts.0.id", "\"tab\\there\"", "accounts[0].id" },
	{ "accounts.0.status", "\"open\"", "accounts[0].status" },
	{ "accounts.0.status", NULL, "accounts[0].status" },
	{ "accounts.0.name", "[\"x\"]", "accounts[0].name" },
	{ "accounts.0.number_mask", "\"0123456789012345678901234567890123\"",
	  "accounts[0].number_mask" },
	{ "accounts", "\"all\"", "accounts" },
};

START_TEST(accounts)
{
	char *body = mutate(ACCOUNTS, account_cases[_i].path, account_cases[_i].repl);
	struct connector_account *acc;
	const char *why = NULL;
	size_t n;
	int rc = portal_parse_accounts(&a, body, strlen(body), &acc, &n, &why);

	if (account_cases[_i].why == NULL) {
		ck_assert_msg(rc == 0, "%s refused: %s", account_cases[_i].path, why);
		ck_assert_str_eq(acc[0].ref, "ac-power-00001-1");
		ck_assert_int_eq(acc[0].closed, strcmp(account_cases[_i].path,
		    "accounts.0.status") == 0);
	} else {
		ck_assert_int_eq(rc, -1);
		ck_assert_pstr_eq(why, account_cases[_i].why);
	}
	free(body);
}
END_TEST

START_TEST(accounts_lists)
{
	const char *dup = "{\"accounts\":[{\"id\":\"x\",\"status\":\"active\"},"
	    "{\"id\":\"x\",\"status\":\"closed\"}]}";
	struct connector_account *acc;
	const char *why;
	char *many = malloc(64 * 40 + 64);
	size_t n, len;

	ck_assert_int_eq(portal_parse_accounts(&a, dup, strlen(dup), &acc, &n, &why), -1);
	ck_assert_str_eq(why, "accounts[1].id");
	len = (size_t)sprintf(many, "{\"accounts\":[");
	for (int i = 0; i <= PORTAL_ACCOUNTS_MAX; i++)
		len += (size_t)sprintf(many + len, "{\"id\":\"a%d\",\"status\":\"active\"},", i);
	many[len - 1] = ']';
	many[len++] = '}';
	ck_assert_int_eq(portal_parse_accounts(&a, many, len, &acc, &n, &why), -1);
	ck_assert_str_eq(why, "accounts");
	free(many);
}
END_TEST

#define PAYMENTS "{\"payments\":[{\"id\":\"pm-1\",\"amount\":\"84.17\",\"currency\":\"USD\"," \
	"\"paid_at\":\"2026-03-26T14:03:09Z\",\"status\":\"posted\"," \
	"\"statement_id\":\"st-1\"},{\"id\":\"pm-2\",\"amount\":\"9120\",\"currency\":\"JPY\"," \
	"\"paid_at\":\"2026-02-26T14:03:09.250+09:00\",\"status\":\"reversed\"}]}"

static const struct { const char *path, *repl, *why; } payment_cases[] = {
	{ "payments.0.statement_id", "null", NULL },
	{ "payments.1.statement_id", "\"st-2\"", NULL },
	{ "payments.0.note", "\"hello\"", NULL },
	{ "payments.0.amount", "\"0.00\"", "payments[0].amount" },
	{ "payments.0.amount", "\"-84.17\"", "payments[0].amount" },
	{ "payments.0.amount", "84.17", "payments[0].amount" },
	{ "payments.1.amount", "\"91.20\"", "payments[1].amount" },
	{ "payments.0.currency", "\"EURO\"", "payments[0].currency" },
	{ "payments.0.status", "\"pending\"", "payments[0].status" },
	{ "payments.0.status", NULL, "payments[0].status" },
	{ "payments.0.paid_at", "\"2024-13-45T00:00:00Z\"", "payments[0].paid_at" },
	{ "payments.0.paid_at", "\"2024-01-01 10:00:00\"", "payments[0].paid_at" },
	{ "payments.0.paid_at", "\"2024-01-01\"", "payments[0].paid_at" },
	{ "payments.0.paid_at", "1700000000", "payments[0].paid_at" },
	{ "payments.0.paid_at", "\"2024-02-30T10:00:00Z\"", "payments[0].paid_at" },
	{ "payments.0.statement_id", "5", "payments[0].statement_id" },
	{ "payments.0.id", "\"pm-2\"", "payments[1].id" },
	{ "payments.1.id", NULL, "payments[1].id" },
};

START_TEST(payments)
{
	char *body = mutate(PAYMENTS, payment_cases[_i].path, payment_cases[_i].repl);
	struct bills_payment *p;
	const char *why = NULL;
	size_t n;
	int rc = portal_parse_payments(&a, body, strlen(body), "ac-1", &p, &n, &why);

	if (payment_cases[_i].why == NULL) {
		ck_assert_msg(rc == 0, "%s refused: %s", payment_cases[_i].path, why);
		ck_assert_uint_eq(n, 2);
		ck_assert_int_eq(p[0].amount.minor, 8417);
		ck_assert_str_eq(p[1].amount.currency, "JPY");
		ck_assert_int_eq(p[1].amount.minor, 9120);
		ck_assert_str_eq(p[1].status, "reversed");
		ck_assert_str_eq(p[0].account_ref, "ac-1");
		/* instants in one form (UTC, microseconds), so they order as strings */
		ck_assert_str_eq(p[0].paid_at, "2026-03-26T14:03:09.000000Z");
		ck_assert_str_eq(p[1].paid_at, "2026-02-26T05:03:09.250000Z");
	} else {
		ck_assert_int_eq(rc, -1);
		ck_assert_pstr_eq(why, payment_cases[_i].why);
	}
	free(body);
}
END_TEST

static const struct {
	const char *body;
	int mfa;
	const char *why, *session, *challenge, *device;
	long long expires;
} login_cases[] = {
	{ "{\"session\":\"sess-abc\",\"expires_in\":900}", 0, NULL, "sess-abc", NULL, NULL, 900 },
	{ "{\"expires_in\":0,\"session\":\"s\",\"x\":[]}", 0, NULL, "s", NULL, NULL, 0 },
	/* a device token only counts on the MFA answer */
	{ "{\"session\":\"s\",\"expires_in\":9,\"device_token\":\"dt-1\"}", 0, NULL, "s", NULL,
	  NULL, 9 },
	{ "{\"session\":\"s\",\"expires_in\":9,\"device_token\":\"dt-1\"}", 1, NULL, "s", NULL,
	  "dt-1", 9 },
	{ "{\"session\":\"s\",\"expires_in\":9}", 1, NULL, "s", NULL, NULL, 9 },
	{ "{\"mfa\":{\"challenge_id\":\"ch-1\",\"type\":\"code\",\"prompt\":\"Code?\"}}", 0, NULL,
	  NULL, "ch-1", NULL, 0 },
	/* a challenge is no answer to an answer */
	{ "{\"mfa\":{\"challenge_id\":\"ch-1\",\"type\":\"code\",\"prompt\":\"Code?\"}}", 1,
	  "session", NULL, NULL, NULL, 0 },
	{ "{\"mfa\":{\"type\":\"code\",\"prompt\":\"Code?\"}}", 0, "mfa.challenge_id", NULL, NULL,
	  NULL, 0 },
	{ "{\"mfa\":{\"challenge_id\":\"c\",\"type\":\"code\"}}", 0, "mfa.prompt", NULL, NULL,
	  NULL, 0 },
	{ "{\"mfa\":\"code\"}", 0, "mfa", NULL, NULL, NULL, 0 },
	{ "{\"expires_in\":900}", 0, "session", NULL, NULL, NULL, 0 },
	{ "{\"session\":\"s\"}", 0, "expires_in", NULL, NULL, NULL, 0 },
	{ "{\"session\":17,\"expires_in\":900}", 0, "session", NULL, NULL, NULL, 0 },
	{ "{\"session\":\"s\",\"expires_in\":\"900\"}", 0, "expires_in", NULL, NULL, NULL, 0 },
	{ "{\"session\":\"s\",\"expires_in\":-1}", 0, "expires_in", NULL, NULL, NULL, 0 },
	/* a token goes into a header: visible ASCII only */
	{ "{\"session\":\"s\\r\\nX-Evil: 1\",\"expires_in\":9}", 0, "session", NULL, NULL, NULL,
	  0 },
	{ "{\"session\":\"a b\",\"expires_in\":9}", 0, "session", NULL, NULL, NULL, 0 },
	{ "{\"session\":\"\",\"expires_in\":9}", 0, "session", NULL, NULL, NULL, 0 },
	{ "{\"session\":\"s\",\"expires_in\":9,\"device_token\":\"\\u00e9\"}", 1, "device_token",
	  NULL, NULL, NULL, 0 },
	{ "[\"session\"]", 0, "body", NULL, NULL, NULL, 0 },
	{ "{\"session\":\"s\",\"expires_in\":9", 0, "body", NULL, NULL, NULL, 0 },
};

START_TEST(login)
{
	struct portal_login l;
	const char *why = NULL;
	int rc = portal_parse_login(&a, login_cases[_i].body, strlen(login_cases[_i].body),
	    login_cases[_i].mfa, &l, &why);

	ck_assert_msg(rc == (login_cases[_i].why ? -1 : 0), "%s: %s", login_cases[_i].body, why);
	ck_assert_pstr_eq(why, login_cases[_i].why);
	if (rc != 0)
		return;
	ck_assert_pstr_eq(l.session, login_cases[_i].session);
	ck_assert_pstr_eq(l.challenge_id, login_cases[_i].challenge);
	ck_assert_pstr_eq(l.device_token, login_cases[_i].device);
	if (l.session != NULL)
		ck_assert_int_eq(l.expires_in, login_cases[_i].expires);
	else
		ck_assert_pstr_eq(l.mfa_type, "code");
}
END_TEST

START_TEST(errors)
{
	static const struct { const char *body, *code; } cases[] = {
		{ "{\"error\":\"session_expired\",\"message\":\"x\"}", "session_expired" },
		{ "{\"message\":\"x\",\"error\":\"consent_expired\"}", "consent_expired" },
		{ "{\"error\":5}", NULL }, { "{\"error\":\"\"}", NULL }, { "oops", NULL },
		{ "", NULL }, { "{\"code\":\"x\"}", NULL },
	};

	for (size_t i = 0; i < N(cases); i++)
		ck_assert_pstr_eq(portal_parse_error(&a, cases[i].body, strlen(cases[i].body)),
		    cases[i].code);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Properties over random answers                                      */

/*
 * Good answers changed at random, a few thousand times per parser with a
 * fixed seed (so a failure names its iteration and body): values replaced
 * by others of every type, members removed or added, array elements
 * repeated, strings lengthened, nodes copied elsewhere, then sometimes
 * bytes flipped, cut or repeated. Each outcome must keep portal_props.h's
 * promises; both outcomes must occur often enough to mean something.
 */
#define PROPS_ITER	3000

static unsigned long long rng;

static unsigned
rnd(unsigned n)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return (unsigned)((rng * 2685821657736338717ULL) >> 33) % n;
}

static const char *const props_pool[] = {
	"null", "true", "false", "0", "-1", "1", "2.0", "1.5", "1e308", "-0", "1e-400",
	"9223372036854775807", "18446744073709551616", "\"\"", "\"x\"", "\"\\u0000\"",
	"\"\\ud800\"", "\"\\t\"", "\"\\u00e9t\\u00e9\"", "\"2026-02-30\"", "\"2026-03-26\"",
	"\"2026-03-26T14:03:09Z\"", "\"2026-03-26T14:03:09.123456789-11:30\"",
	"\"9999-12-31T23:59:59-14:00\"", "\"0001-01-01T00:00:00+14:00\"", "\"84.17\"",
	"\"-0.00\"", "\"0.00\"", "\"9999999999999.99\"", "\"99999999999999.99\"", "\"4.125\"",
	"\"USD\"", "\"JPY\"", "\"BHD\"", "\"XXX\"", "\"PAID\"", "\"posted\"", "\"reversed\"",
	"\"usage\"", "\"application/pdf\"", "{}", "[]", "[{}]", "[null]",
	"{\"a\":[1,{\"b\":null}]}", "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]"
	"]]]]]]]]]]]]]]]]]]",
};
static const char *const props_suffix[] = { "0", ".", "-", "Z", " ", "\t", "\xc3\xa9",
	"\xff", "e5", ":00", "+01:00", "\\", "\"" };

struct slot {
	struct json_object *parent;
	char		*key;		/* NULL: an array element */
	size_t		 idx;
};

#define PROPS_SLOTS	4096

static size_t
slots_of(struct json_object *o, struct slot *s, size_t n)
{
	if (json_object_is_type(o, json_type_object)) {
		json_object_object_foreach(o, k, v) {
			if (n == PROPS_SLOTS)
				return n;
			s[n++] = (struct slot){ o, k, 0 };
			n = slots_of(v, s, n);
		}
	} else if (json_object_is_type(o, json_type_array)) {
		for (size_t i = 0; i < json_object_array_length(o) && n < PROPS_SLOTS; i++) {
			s[n++] = (struct slot){ o, NULL, i };
			n = slots_of(json_object_array_get_idx(o, i), s, n);
		}
	}
	return n;
}

static struct json_object *
slot_get(const struct slot *s)
{
	struct json_object *v = NULL;

	if (s->key == NULL)
		return json_object_array_get_idx(s->parent, s->idx);
	json_object_object_get_ex(s->parent, s->key, &v);
	return v;
}

static void
slot_put(const struct slot *s, struct json_object *v)
{
	if (s->key == NULL)
		json_object_array_put_idx(s->parent, s->idx, v);
	else
		json_object_object_add(s->parent, s->key, v);
}

static struct json_object *
copy_of(struct json_object *v)
{
	struct json_object *c = NULL;

	/* json null is a NULL object, and its copy too */
	ck_assert(v == NULL || json_object_deep_copy(v, &c, NULL) == 0);
	return c;
}

/* One change somewhere in the tree under root (which stays the root). */
static void
tree_change(struct json_object *root)
{
	static struct slot s[PROPS_SLOTS];
	size_t n = slots_of(root, s, 0);
	struct slot t;
	struct json_object *v;

	if (n == 0)
		return;
	t = s[rnd((unsigned)n)];
	if (t.key != NULL)
		t.key = strdup(t.key);
	v = slot_get(&t);
	switch (rnd(6)) {
	case 0:
	case 1:		/* another value of any type */
		slot_put(&t, json_tokener_parse(props_pool[rnd(N(props_pool))]));
		break;
	case 2:		/* gone */
		if (t.key != NULL)
			json_object_object_del(t.parent, t.key);
		else
			json_object_array_del_idx(t.parent, t.idx, 1);
		break;
	case 3:		/* a copy of another node */
		slot_put(&t, copy_of(slot_get(&s[rnd((unsigned)n)])));
		break;
	case 4:		/* an element repeated, or a member added */
		if (t.key == NULL)
			json_object_array_add(t.parent, copy_of(v));
		else
			json_object_object_add(t.parent, rnd(2) ? "surprise" : "id",
			    json_tokener_parse(props_pool[rnd(N(props_pool))]));
		break;
	default:	/* a string made longer, or a long one */
		if (json_object_is_type(v, json_type_string) && rnd(4) != 0) {
			char buf[600];

			snprintf(buf, sizeof(buf), "%s%s", json_object_get_string(v),
			    props_suffix[rnd(N(props_suffix))]);
			slot_put(&t, json_object_new_string(buf));
		} else {
			char buf[600];

			memset(buf, 'a' + (char)rnd(26), sizeof(buf) - 1);
			buf[(size_t[]){ 64, 65, 128, 129, 512, 513, 599 }[rnd(7)]] = '\0';
			slot_put(&t, json_object_new_string(buf));
		}
		break;
	}
	free(t.key);
}

/* Now and then a change to the bytes themselves; len updated. */
static void
byte_change(char *text, size_t *len)
{
	size_t at, span;

	if (*len == 0)
		return;
	at = rnd((unsigned)*len);
	switch (rnd(4)) {
	case 0:		/* one bit */
		text[at] = (char)(text[at] ^ (1 << rnd(8)));
		break;
	case 1:		/* cut off */
		*len = at;
		break;
	case 2:		/* a span gone */
		span = rnd((unsigned)(*len - at)) + 1;
		memmove(text + at, text + at + span, *len - at - span);
		*len -= span;
		break;
	default:	/* one byte of the grammar */
		text[at] = "{}[]\",:0.-eE\\ \x00\xff"[rnd(17)];
		break;
	}
}

static void
props(enum portal_props_parser which, const char *const *seeds, size_t nseeds)
{
	unsigned taken = 0, refused = 0;

	rng = 0x9e3779b97f4a7c15ULL ^ (unsigned long long)which;
	for (unsigned i = 0; i < PROPS_ITER; i++) {
		struct json_object *root = json_tokener_parse(seeds[i % nseeds]);
		const char *broken;
		char *text;
		size_t len;
		int took;

		ck_assert_ptr_nonnull(root);
		for (unsigned k = 1 + rnd(3); k > 0; k--)
			tree_change(root);
		text = strdup(json_object_to_json_string_ext(root, JSON_C_TO_STRING_PLAIN));
		len = strlen(text);
		json_object_put(root);
		if (rnd(4) == 0)
			byte_change(text, &len);
		arena_free(&a);
		arena_init(&a);
		broken = portal_props_run(&a, which, text, len, &took);
		ck_assert_msg(broken == NULL, "parser %d, iteration %u: %s: %.*s", (int)which, i,
		    broken, (int)len, text);
		took ? taken++ : refused++;
		free(text);
	}
	ck_assert_msg(taken >= PROPS_ITER / 20 && refused >= PROPS_ITER / 4,
		    "parser %d: %u taken, %u refused", (int)which, taken, refused);
}

START_TEST(props_statements)
{
	static const char *const seeds[] = { STATEMENTS,
	    "{\"statements\":[" STATEMENT "," STATEMENT "]}", "{\"statements\":[]}" };
	char *two = mutate(seeds[1], "statements.1.id", "\"st-2\"");
	const char *const all[] = { seeds[0], two, seeds[2] };

	props(PP_STATEMENTS, all, N(all));
	free(two);
}
END_TEST

START_TEST(props_others)
{
	static const char *const s_accounts[] = { ACCOUNTS };
	static const char *const s_payments[] = { PAYMENTS };
	static const char *const s_login[] = { "{\"session\":\"sess-abc\",\"expires_in\":900}",
	    "{\"mfa\":{\"challenge_id\":\"ch-1\",\"type\":\"code\",\"prompt\":\"Code?\"}}",
	    "{\"session\":\"s\",\"expires_in\":9,\"device_token\":\"dt-1\"}" };
	static const char *const s_errors[] = { "{\"error\":\"session_expired\",\"message\":\"x\"}" };

	props(PP_ACCOUNTS, s_accounts, N(s_accounts));
	props(PP_PAYMENTS, s_payments, N(s_payments));
	props(PP_LOGIN, s_login, N(s_login));
	props(PP_LOGIN_MFA, s_login, N(s_login));
	props(PP_ERROR, s_errors, N(s_errors));
}
END_TEST

static Suite *
portal_suite(void)
{
	Suite *s = suite_create("portal");
	TCase *tc = tcase_create("parse");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, currencies);
	tcase_add_loop_test(tc, money_ok, 0, (int)N(money_valid));
	tcase_add_loop_test(tc, money_bad, 0, (int)N(money_invalid));
	tcase_add_test(tc, statement_good);
	tcase_add_test(tc, statement_lenient);
	tcase_add_test(tc, statement_unstructured);
	tcase_add_loop_test(tc, statement_mutations, 0, (int)N(statement_cases));
	tcase_add_test(tc, statement_status);
	tcase_add_test(tc, statement_bodies);
	tcase_add_test(tc, deep_nesting);
	tcase_add_test(tc, too_many);
	tcase_add_loop_test(tc, accounts, 0, (int)N(account_cases));
	tcase_add_test(tc, accounts_lists);
	tcase_add_loop_test(tc, payments, 0, (int)N(payment_cases));
	tcase_add_loop_test(tc, login, 0, (int)N(login_cases));
	tcase_add_test(tc, errors);
	tcase_add_test(tc, props_statements);
	tcase_add_test(tc, props_others);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tcheck_run(portal_suite());
}
