/*
 * lib/imports/extract/extract_fields*.c: the field rules of bill
 * extraction. Documents are written here as lines with positions (what
 * extract_doc.c reads from a PDF or OCR): every label vocabulary, money
 * and date formats both ways round, the previous-balance and payment
 * traps, a total on page 2, the arithmetic checks at equal and one cent
 * off, OCR noise, hostile text, ex_recheck and ex_draft_ready.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <json-c/json.h>

#include "imports/extract/extract.h"
#include "tcheck.h"

#define N(x) (sizeof(x) / sizeof((x)[0]))
#define MAXL 64

/*
 * A document in a few strings: "page x y text" per line (x, y the top
 * left in points; the box is 6 points a character wide, 12 high), conf 1
 * unless the document is OCR's.
 */
struct tdoc {
	struct ex_page	 pages[4];
	struct ex_line	 lines[MAXL];
	char		 text[MAXL][512];
	struct ex_doc	 doc;
};

static struct json_object *
run(struct tdoc *t, const char *const *spec, size_t n, float conf)
{
	size_t i;
	int maxpage = 1;

	memset(t, 0, sizeof(*t));
	ck_assert_uint_le(n, MAXL);
	for (i = 0; i < n; i++) {
		int page, x, y, off = 0;

		ck_assert_msg(sscanf(spec[i], "%d %d %d %n", &page, &x, &y, &off) == 3 && off > 0,
		    "bad spec %s", spec[i]);
		snprintf(t->text[i], sizeof(t->text[i]), "%s", spec[i] + off);
		t->lines[i].text = t->text[i];
		t->lines[i].page = page;
		t->lines[i].conf = conf;
		t->lines[i].box.x0 = (float)x;
		t->lines[i].box.y0 = (float)y;
		t->lines[i].box.x1 = (float)x + 6.0f * (float)strlen(t->text[i]);
		t->lines[i].box.y1 = (float)y + 12;
		if (page > maxpage)
			maxpage = page;
	}
	for (i = 0; i < (size_t)maxpage && i < N(t->pages); i++) {
		t->pages[i].number = (int)i + 1;
		t->pages[i].width = 612;
		t->pages[i].height = 792;
		t->pages[i].ocr = conf < 1;
	}
	t->doc.pages = t->pages;
	t->doc.npages = (size_t)maxpage;
	t->doc.lines = t->lines;
	t->doc.nlines = n;
	return ex_fields(&t->doc);
}

static struct json_object *
get(struct json_object *o, const char *key)
{
	struct json_object *v = NULL;

	if (o == NULL || !json_object_object_get_ex(o, key, &v))
		return NULL;
	return v;
}

/* draft.key.value as a string ("" when null) */
static const char *
sval(struct json_object *d, const char *key)
{
	struct json_object *v = get(get(d, key), "value");

	return v != NULL ? json_object_get_string(v) : "";
}

/* an amount field: "value currency" */
static const char *
aval(struct json_object *d, const char *key, char *buf, size_t n)
{
	struct json_object *v = get(get(d, key), "value");

	if (v == NULL)
		return "";
	snprintf(buf, n, "%s %s", json_object_get_string(get(v, "value")),
	    get(v, "currency") != NULL ? json_object_get_string(get(v, "currency")) : "-");
	return buf;
}

static double
conf(struct json_object *d, const char *key)
{
	return json_object_get_double(get(get(d, key), "confidence"));
}

static const char *
check_status(struct json_object *d, const char *name)
{
	struct json_object *c = get(d, "checks");
	size_t i;

	for (i = 0; c != NULL && i < json_object_array_length(c); i++) {
		struct json_object *e = json_object_array_get_idx(c, i);

		if (strcmp(json_object_get_string(get(e, "name")), name) == 0)
			return json_object_get_string(get(e, "status"));
	}
	return "";
}

/* ---- the total amount due: labels and money formats ---- */

static const struct { const char *line; const char *want; } totals[] = {
	{ "Total Amount Due: $1,234.56", "1234.56 USD" },
	{ "Amount Due $98.76", "98.76 USD" },
	{ "Total Due: USD 45.00", "45.00 USD" },
	{ "Balance Due 45.00 USD", "45.00 USD" },
	{ "Please Pay $12.34", "12.34 USD" },
	{ "Amount Payable: \xc2\xa3" "1,234.56", "1234.56 GBP" },
	{ "Total to pay: 1.234,56 \xe2\x82\xac", "1234.56 EUR" },
	{ "New Balance $300.00", "300.00 USD" },
	{ "Total amount payable \xc2\xa3" "56.70", "56.70 GBP" },
	{ "Amount due by 12/04/2026 $77.10", "77.10 USD" },
	{ "Montant \xc3\xa0 payer : 1 234,56 EUR", "1234.56 EUR" },
	{ "Zu zahlender Betrag: 89,90 \xe2\x82\xac", "89.90 EUR" },
	{ "Amount Due \xc2\xa5" "12,345", "12345 JPY" },
	{ "Total Due: BHD 12.345", "12.345 BHD" },
	{ "Amount Due: CA$ 88.10", "88.10 CAD" },
	{ "Total Amount Due (45.00) USD", "-45.00 USD" },
	{ "Balance Due $45.00 CR", "-45.00 USD" },
	{ "Total Due -$12.00", "-12.00 USD" },
	{ "AMOUNT DUE $ 1,000.00", "1000.00 USD" },
	{ "Total a pagar: 50,00 EUR", "50.00 EUR" },
	{ "Te betalen \xe2\x82\xac 19,95", "19.95 EUR" },
	{ "Amount Owing: $64.20", "64.20 USD" },
	{ "Pay this amount $ 210.99", "210.99 USD" },
	{ "Total Amount Due CHF 1'234.50", "1234.50 CHF" },
	{ "Amount due by 18.04.2026 310,08 \xe2\x82\xac", "310.08 EUR" },
};

START_TEST(total_labels)
{
	struct tdoc t;
	const char *spec[] = { "1 50 40 Acme Water Company", "1 50 300 ", "1 50 320 Thank you.",
	    "1 50 54 Springfield, IL 62704" };
	char buf[64];
	struct json_object *d;

	spec[1] = NULL;
	{
		char line[256];

		snprintf(line, sizeof(line), "1 50 300 %s", totals[_i].line);
		spec[1] = line;
		d = run(&t, spec, N(spec), 1);
	}
	ck_assert_ptr_nonnull(d);
	ck_assert_msg(strcmp(aval(d, "total_amount", buf, sizeof(buf)), totals[_i].want) == 0,
	    "%s: got '%s', want '%s'", totals[_i].line, buf, totals[_i].want);
	ck_assert_msg(conf(d, "total_amount") >= EX_READY_CONFIDENCE, "%s: confidence %.2f",
	    totals[_i].line, conf(d, "total_amount"));
	json_object_put(d);
}
END_TEST

/* Amounts that are not the total due: previous balance, payments, the
 * minimum, a past-due amount, a line item, the late amount */
START_TEST(total_traps)
{
	static const char *const spec[] = {
		"1 50 40 Contoso Electric Inc.",
		"1 50 54 Springfield, IL 62704",
		"1 50 100 Previous Balance $500.00",
		"1 50 115 Payment Received - Thank You -$500.00",
		"1 50 130 Previous amount due $500.00",
		"1 50 145 Minimum Amount Due $25.00",
		"1 50 160 Past Due Amount $0.00",
		"1 50 175 Electricity 400 kWh $80.00",
		"1 50 190 Current Charges $100.00",
		"1 50 205 Amount due after 12/20/2026 $110.00",
		"1 50 220 Amount Due $100.00",
		"1 50 235 Due Date: 12/04/2026",
	};
	struct tdoc t;
	char buf[64];
	struct json_object *d = run(&t, spec, N(spec), 1);

	ck_assert_str_eq(aval(d, "total_amount", buf, sizeof(buf)), "100.00 USD");
	ck_assert_str_eq(aval(d, "previous_balance", buf, sizeof(buf)), "500.00 USD");
	ck_assert_str_eq(aval(d, "payments_received", buf, sizeof(buf)), "500.00 USD");
	ck_assert_str_eq(aval(d, "current_charges", buf, sizeof(buf)), "100.00 USD");
	ck_assert_str_eq(check_status(d, "balance"), "passed");
	ck_assert_str_eq(sval(d, "due_date_iso"), "2026-12-04");
	json_object_put(d);
}
END_TEST

/* a table: the labels in one row, the values in the row below */
START_TEST(total_table_below)
{
	static const char *const spec[] = {
		"1 50 40 Fabrikam Gas Ltd",
		"1 50 200 Previous Balance",
		"1 170 200 Payments",
		"1 260 200 Current Charges",
		"1 380 200 Amount Due",
		"1 50 214 \xc2\xa3" "40.00",
		"1 170 214 \xc2\xa3" "40.00",
		"1 260 214 \xc2\xa3" "61.17",
		"1 380 214 \xc2\xa3" "61.17",
		"1 50 260 Due date 05/01/2027",
	};
	struct tdoc t;
	char buf[64];
	struct json_object *d = run(&t, spec, N(spec), 1);

	ck_assert_str_eq(aval(d, "total_amount", buf, sizeof(buf)), "61.17 GBP");
	ck_assert_str_eq(aval(d, "previous_balance", buf, sizeof(buf)), "40.00 GBP");
	ck_assert_str_eq(check_status(d, "balance"), "passed");
	/* a UK bill: day first */
	ck_assert_str_eq(sval(d, "due_date_iso"), "2027-01-05");
	json_object_put(d);
}
END_TEST

/* the total only on page 2, in the payment stub, and the summary and stub agreeing */
START_TEST(total_page2)
{
	static const char *const spec[] = {
		"1 50 40 Northwind Telecom",
		"1 50 100 Account Number: 555-0101",
		"1 50 120 Your services this month",
		"1 50 140 Internet 59.99",
		"2 50 100 Payment stub - please return",
		"2 50 120 Total Amount Due $59.99",
		"2 50 140 Due Date December 4, 2026",
	};
	static const char *const spec2[] = {
		"1 50 40 Northwind Telecom",
		"1 50 120 Total Amount Due $59.99",
		"1 50 140 Due Date December 4, 2026",
		"2 50 120 Amount Due $59.99",
	};
	struct tdoc t;
	char buf[64];
	struct json_object *d = run(&t, spec, N(spec), 1), *d2;

	ck_assert_str_eq(aval(d, "total_amount", buf, sizeof(buf)), "59.99 USD");
	ck_assert_int_eq(json_object_get_int(get(get(get(d, "total_amount"), "source"), "page")), 2);
	ck_assert_str_eq(sval(d, "due_date_iso"), "2026-12-04");
	d2 = run(&t, spec2, N(spec2), 1);
	ck_assert_str_eq(aval(d2, "total_amount", buf, sizeof(buf)), "59.99 USD");
	ck_assert(conf(d2, "total_amount") >= conf(d, "total_amount"));
	json_object_put(d);
	json_object_put(d2);
}
END_TEST

/* a bare "$": the addresses say which dollar, and without them it is a
 * guess that keeps the import in review even when the balance holds */
START_TEST(dollar_country)
{
	static const char *const au[] = {
		"1 50 40 Eucalypt Energy Retail",
		"1 50 54 12 George Street, Sydney NSW 2000",
		"1 50 100 Previous Balance $50.00",
		"1 50 115 Payments Received -$50.00",
		"1 50 130 Current Charges $100.00",
		"1 50 145 Amount Due $100.00",
		"1 50 160 Due Date: 04/12/2026",
	};
	static const char *const none[] = {
		"1 50 40 Eucalypt Energy Retail",
		"1 50 100 Previous Balance $50.00",
		"1 50 115 Payments Received -$50.00",
		"1 50 130 Current Charges $100.00",
		"1 50 145 Amount Due $100.00",
		"1 50 160 Due Date: 04/12/2026",
	};
	static const char *const head[] = {
		"1 50 40 Eucalypt Energy Retail",
		"1 50 100 Description Amount (AUD)",
		"1 50 145 Amount Due $100.00",
	};
	struct tdoc t;
	const char *why;
	char buf[64];
	struct json_object *d = run(&t, au, N(au), 1);

	ck_assert_str_eq(aval(d, "total_amount", buf, sizeof(buf)), "100.00 AUD");
	ck_assert_str_eq(sval(d, "due_date_iso"), "2026-12-04");
	json_object_put(d);
	d = run(&t, none, N(none), 1);
	ck_assert_str_eq(check_status(d, "balance"), "passed");
	ck_assert(conf(d, "currency") < EX_READY_CONFIDENCE);
	ck_assert(conf(d, "total_amount") < EX_READY_CONFIDENCE);
	ck_assert_int_eq(ex_draft_ready(d, &why), 0);
	json_object_put(d);
	d = run(&t, head, N(head), 1);
	ck_assert_str_eq(aval(d, "total_amount", buf, sizeof(buf)), "100.00 AUD");
	json_object_put(d);
}
END_TEST

/* two strong labels with different totals and nothing to choose: review */
START_TEST(total_conflict)
{
	static const char *const spec[] = {
		"1 50 40 Acme Water Company",
		"1 50 100 Amount Due $100.00",
		"1 50 300 Total Due $120.00",
	};
	struct tdoc t;
	struct json_object *d = run(&t, spec, N(spec), 1);

	ck_assert(conf(d, "total_amount") < EX_READY_CONFIDENCE);
	json_object_put(d);
}
END_TEST

/* ---- dates ---- */

static const struct { const char *cur; const char *line; const char *want; } dates[] = {
	{ "$", "Due Date: 2026-12-04", "2026-12-04" },
	{ "$", "Due Date: 12/04/2026", "2026-12-04" },
	{ "\xc2\xa3", "Due Date: 12/04/2026", "2026-04-12" },
	{ "\xe2\x82\xac", "Due Date: 04.12.2026", "2026-12-04" },
	{ "$", "Due Date: 4 Dec 2026", "2026-12-04" },
	{ "$", "Due Date: December 4, 2026", "2026-12-04" },
	{ "$", "Due Date: Dec. 4, 2026", "2026-12-04" },
	{ "$", "Due Date: 04-Dec-26", "2026-12-04" },
	{ "$", "Due Date: 4th December 2026", "2026-12-04" },
	{ "$", "Payment due by 12/4/26", "2026-12-04" },
	{ "\xc2\xa3", "Please pay by 4th of December 2026", "2026-12-04" },
	{ "\xe2\x82\xac", "F\xc3\xa4llig am 4. Dezember 2026", "2026-12-04" },
	{ "\xe2\x82\xac", "Date d'\xc3\xa9" "ch\xc3\xa9" "ance : 4 d\xc3\xa9" "cembre 2026", "2026-12-04" },
	{ "$", "Pay by: 2026/12/04", "2026-12-04" },
	{ "$", "DUE DATE 13/01/2027", "2027-01-13" },
};

START_TEST(due_dates)
{
	struct tdoc t;
	char amount[128], line[256];
	const char *spec[3];
	struct json_object *d;

	snprintf(amount, sizeof(amount), "1 50 100 Amount Due %s12.00", dates[_i].cur);
	snprintf(line, sizeof(line), "1 50 120 %s", dates[_i].line);
	spec[0] = "1 50 40 Acme Water Company";
	spec[1] = amount;
	spec[2] = line;
	d = run(&t, spec, 3, 1);
	ck_assert_msg(strcmp(sval(d, "due_date_iso"), dates[_i].want) == 0, "%s: got %s",
	    dates[_i].line, sval(d, "due_date_iso"));
	json_object_put(d);
}
END_TEST

/* an unambiguous date anywhere decides the order of the ambiguous ones */
START_TEST(date_order_evidence)
{
	static const char *const us[] = {
		"1 50 40 Acme Water Company",
		"1 50 100 Statement Date: 11/25/2026",
		"1 50 120 Due Date: 12/04/2026",
		"1 50 140 Amount Due $10.00",
	};
	static const char *const eu[] = {
		"1 50 40 Acme Water Company",
		"1 50 100 Statement Date: 25/11/2026",
		"1 50 120 Due Date: 12/04/2026",
		"1 50 140 Amount Due $10.00",
	};
	struct tdoc t;
	struct json_object *d = run(&t, us, N(us), 1);

	ck_assert_str_eq(sval(d, "due_date_iso"), "2026-12-04");
	ck_assert_str_eq(sval(d, "statement_date"), "2026-11-25");
	json_object_put(d);
	d = run(&t, eu, N(eu), 1);
	ck_assert_str_eq(sval(d, "due_date_iso"), "2026-04-12");
	ck_assert_str_eq(sval(d, "statement_date"), "2026-11-25");
	json_object_put(d);
}
END_TEST

START_TEST(statement_and_period)
{
	static const char *const spec[] = {
		"1 50 40 Acme Water Company",
		"1 50 100 Bill Date: Nov 15, 2026",
		"1 50 120 Service Period: 10/01/2026 - 10/31/2026",
		"1 50 140 Billing period 1 Oct 2026 to 31 Oct 2026",
		"1 50 160 Amount Due $10.00",
	};
	struct tdoc t;
	struct json_object *d = run(&t, spec, N(spec), 1), *p;

	ck_assert_str_eq(sval(d, "statement_date"), "2026-11-15");
	p = get(get(d, "service_period"), "value");
	ck_assert_str_eq(json_object_get_string(get(p, "start_date")), "2026-10-01");
	ck_assert_str_eq(json_object_get_string(get(p, "end_date")), "2026-10-31");
	ck_assert(conf(d, "service_period") >= 0.9);
	json_object_put(d);
}
END_TEST

/* ---- identifiers ---- */

static const struct { const char *line; const char *key; const char *want; } idents[] = {
	{ "Account Number: 1234-5678-90", "account_number", "1234-5678-90" },
	{ "Account No. 000123456", "account_number", "000123456" },
	{ "Account #: A-77812", "account_number", "A-77812" },
	{ "Acct: 99812", "account_number", "99812" },
	{ "Customer Number 4410 2231 9987", "account_number", "4410 2231 9987" },
	{ "Account ID: ACC-2026-77", "account_number", "ACC-2026-77" },
	{ "Customer ID 55-1234", "account_number", "55-1234" },
	{ "Kundennummer: 700123", "account_number", "700123" },
	{ "Invoice Number: INV-2026-0042", "bill_number", "INV-2026-0042" },
	{ "Invoice #: 88123", "bill_number", "88123" },
	{ "Bill No. B/2026/11", "bill_number", "B/2026/11" },
	{ "Statement Number 20261115-01", "bill_number", "20261115-01" },
	{ "Reference Number: REF778812", "reference_number", "REF778812" },
	{ "Payment Reference 9931 2210", "reference_number", "9931 2210" },
};

START_TEST(identifiers)
{
	struct tdoc t;
	char line[256];
	const char *spec[3];
	struct json_object *d;

	snprintf(line, sizeof(line), "1 50 120 %s", idents[_i].line);
	spec[0] = "1 50 40 Acme Water Company";
	spec[1] = "1 50 100 Amount Due $10.00";
	spec[2] = line;
	d = run(&t, spec, 3, 1);
	ck_assert_msg(strcmp(sval(d, idents[_i].key), idents[_i].want) == 0, "%s: got '%s'",
	    idents[_i].line, sval(d, idents[_i].key));
	json_object_put(d);
}
END_TEST

/* the value in the cell to the right, as its own line */
START_TEST(identifier_next_cell)
{
	static const char *const spec[] = {
		"1 50 40 Acme Water Company",
		"1 50 100 Account Number",
		"1 200 100 7781-22",
		"1 50 120 Statement Date",
		"1 200 120 15/11/2026",
	};
	struct tdoc t;
	struct json_object *d = run(&t, spec, N(spec), 1);

	ck_assert_str_eq(sval(d, "account_number"), "7781-22");
	ck_assert_str_eq(sval(d, "statement_date"), "2026-11-15");
	json_object_put(d);
}
END_TEST

/* ---- payee, remit-to, payment URL, line items ---- */

START_TEST(payee_and_remit)
{
	static const char *const spec[] = {
		"1 50 30 Invoice",
		"1 50 50 Riverside Water Authority",
		"1 50 64 12 Mill Lane, Riverside",
		"1 50 200 Amount Due $42.00",
		"1 50 600 Make checks payable to Riverside Water Authority.",
		"1 350 640 Remit to:",
		"1 350 654 Riverside Water Authority",
		"1 350 668 PO Box 500",
		"1 350 682 Riverside, CA 92501",
		"1 50 720 Pay online at www.riversidewater.gov/pay",
	};
	struct tdoc t;
	struct json_object *d = run(&t, spec, N(spec), 1), *a;

	ck_assert_str_eq(sval(d, "payee_name"), "Riverside Water Authority");
	ck_assert(conf(d, "payee_name") >= EX_READY_CONFIDENCE);
	a = get(get(d, "remit_to_address"), "value");
	ck_assert_int_eq((int)json_object_array_length(get(a, "lines")), 3);
	ck_assert_str_eq(json_object_get_string(get(a, "text")),
	    "Riverside Water Authority\nPO Box 500\nRiverside, CA 92501");
	ck_assert_str_eq(sval(d, "payment_url"), "https://www.riversidewater.gov/pay");
	json_object_put(d);
}
END_TEST

/* the letterhead alone: the tallest name at the top of page 1 */
START_TEST(payee_letterhead)
{
	struct tdoc t;
	static const char *const spec[] = {
		"1 400 30 Page 1 of 2",
		"1 50 60 Summit Energy LLC",
		"1 50 90 Account Number 123456",
		"1 50 200 Amount Due $42.00",
	};
	struct json_object *d;

	d = run(&t, spec, N(spec), 1);
	ck_assert_str_eq(sval(d, "payee_name"), "Summit Energy LLC");
	/* a company word and nothing against it: sure enough */
	ck_assert(conf(d, "payee_name") >= EX_READY_CONFIDENCE);
	json_object_put(d);
}
END_TEST

START_TEST(line_items)
{
	static const char *const spec[] = {
		"1 50 40 Contoso Electric Inc.",
		"1 50 54 Springfield, IL 62704",
		"1 50 100 Current Charges",
		"1 50 115 Electricity usage 450 kWh 54.00",
		"1 50 130 Basic service charge 12.50",
		"1 50 145 Sales tax 3.26",
		"1 50 160 Loyalty discount -2.00",
		"1 50 175 Total Current Charges $67.76",
		"1 50 200 Amount Due $67.76",
	};
	struct tdoc t;
	struct json_object *d = run(&t, spec, N(spec), 1), *items;

	items = get(get(d, "line_items"), "value");
	ck_assert_int_eq((int)json_object_array_length(items), 4);
	ck_assert_str_eq(json_object_get_string(get(json_object_array_get_idx(items, 0), "category")), "usage");
	ck_assert_str_eq(json_object_get_string(get(json_object_array_get_idx(items, 1), "category")), "fee");
	ck_assert_str_eq(json_object_get_string(get(json_object_array_get_idx(items, 2), "category")), "tax");
	ck_assert_str_eq(json_object_get_string(get(json_object_array_get_idx(items, 3), "category")), "credit");
	ck_assert_str_eq(json_object_get_string(get(get(json_object_array_get_idx(items, 3), "amount"), "value")), "-2.00");
	ck_assert_str_eq(check_status(d, "line_items"), "passed");
	json_object_put(d);
}
END_TEST

/* a payment stub: the remit-to block is the column beside "payable to" */
START_TEST(remit_beside_payable)
{
	static const char *const spec[] = {
		"1 40 40 NORTHERN LIGHTS ENERGY",
		"1 40 200 Amount Due 212.23 CAD",
		"1 40 663 Make checks payable to Northern Lights Energy",
		"1 330 663 Northern Lights Energy",
		"1 40 682 Alex Morgan",
		"1 330 676 PO Box 39605",
		"1 40 693 654 Rideau Street",
		"1 330 689 Ottawa, ON K1P 5J9",
	};
	struct tdoc t;
	struct json_object *d = run(&t, spec, N(spec), 1), *a;

	a = get(get(d, "remit_to_address"), "value");
	ck_assert_ptr_nonnull(a);
	ck_assert_str_eq(json_object_get_string(get(a, "text")),
	    "Northern Lights Energy\nPO Box 39605\nOttawa, ON K1P 5J9");
	/* the letterhead in capitals and the payable-to name agree */
	ck_assert(conf(d, "payee_name") >= EX_READY_CONFIDENCE);
	json_object_put(d);
}
END_TEST

/* a label that ends a line of running text: its value opens the next line */
START_TEST(wrapped_value)
{
	static const char *const spec[] = {
		"1 40 40 Acme Water Company",
		"1 50 217 Thank you for being a customer. This statement covers the statement period",
		"1 50 231 Jan 27, 2027 - Feb 25, 2027. The details are below.",
		"1 50 300 Amount Due $10.00",
	};
	struct tdoc t;
	struct json_object *d = run(&t, spec, N(spec), 1), *p;

	p = get(get(d, "service_period"), "value");
	ck_assert_ptr_nonnull(p);
	ck_assert_str_eq(json_object_get_string(get(p, "start_date")), "2027-01-27");
	ck_assert_str_eq(json_object_get_string(get(p, "end_date")), "2027-02-25");
	json_object_put(d);
}
END_TEST

/* ---- the checks ---- */

/* two totals disagree; the balance says which one is due */
START_TEST(balance_picks_total)
{
	static const char *const spec[] = {
		"1 50 40 Contoso Electric Inc.",
		"1 50 54 Springfield, IL 62704",
		"1 50 100 Previous Balance $50.00",
		"1 50 115 Payments Received -$50.00",
		"1 50 130 Current Charges $100.00",
		"1 50 145 Amount Due $100.00",
		"1 50 300 Total Due $120.00",
		"1 50 160 Due Date: 12/04/2026",
	};
	struct tdoc t;
	char buf[64];
	struct json_object *d = run(&t, spec, N(spec), 1);

	ck_assert_str_eq(aval(d, "total_amount", buf, sizeof(buf)), "100.00 USD");
	ck_assert_str_eq(check_status(d, "balance"), "passed");
	ck_assert(conf(d, "total_amount") >= EX_READY_CONFIDENCE);
	json_object_put(d);
}
END_TEST

/* an OCR item that lost its decimal point, put back by the sum */
START_TEST(items_decimal_repair)
{
	static const char *const spec[] = {
		"1 50 40 Contoso Electric Inc.",
		"1 50 54 Springfield, IL 62704",
		"1 50 200 Details of Current Charges",
		"1 50 215 Energy charge $20.00",
		"1 50 230 Delivery charge $3833",
		"1 50 245 Current Charges $58.33",
		"1 50 260 Amount Due $58.33",
	};
	struct tdoc t;
	struct json_object *d = run(&t, spec, N(spec), 0.9f), *items;

	items = get(get(d, "line_items"), "value");
	ck_assert_int_eq((int)json_object_array_length(items), 2);
	ck_assert_str_eq(json_object_get_string(get(get(json_object_array_get_idx(items, 1), "amount"),
	    "value")), "38.33");
	ck_assert_str_eq(check_status(d, "line_items"), "passed");
	json_object_put(d);
}
END_TEST

/* items that miss the charges while the balance holds are misread rows:
 * left out, the total stays confirmed */
START_TEST(items_left_out)
{
	static const char *const spec[] = {
		"1 50 40 Contoso Electric Inc.",
		"1 50 54 Springfield, IL 62704",
		"1 50 100 Previous Balance $50.00",
		"1 50 115 Payments Received -$50.00",
		"1 50 200 Description",
		"1 50 215 Water usage 20.00",
		"1 50 230 Meter fee 5.00",
		"1 50 245 Current Charges $30.00",
		"1 50 260 Amount Due $30.00",
		"1 50 275 Due Date: 12/04/2026",
	};
	struct tdoc t;
	const char *why;
	struct json_object *d = run(&t, spec, N(spec), 1);

	ck_assert_ptr_null(get(get(d, "line_items"), "value"));
	ck_assert_str_eq(check_status(d, "line_items"), "skipped");
	ck_assert_str_eq(check_status(d, "balance"), "passed");
	ck_assert_int_eq(ex_draft_ready(d, &why), 1);
	json_object_put(d);
}
END_TEST

/* previous - payments + charges against the total: equal, one cent off */
START_TEST(balance_check)
{
	static const char *const good[] = {
		"1 50 40 Contoso Electric Inc.",
		"1 50 54 Springfield, IL 62704",
		"1 50 100 Previous Balance $100.00",
		"1 50 115 Payments Received -$60.00",
		"1 50 130 Current Charges $45.50",
		"1 50 145 Total Amount Due $85.50",
		"1 50 160 Due Date: 12/04/2026",
	};
	static const char *const bad[] = {
		"1 50 40 Contoso Electric Inc.",
		"1 50 54 Springfield, IL 62704",
		"1 50 100 Previous Balance $100.00",
		"1 50 115 Payments Received -$60.00",
		"1 50 130 Current Charges $45.50",
		"1 50 145 Total Amount Due $85.51",
		"1 50 160 Due Date: 12/04/2026",
	};
	struct tdoc t;
	const char *why = NULL;
	struct json_object *d = run(&t, good, N(good), 1);

	ck_assert_str_eq(check_status(d, "balance"), "passed");
	ck_assert_int_eq(ex_draft_ready(d, &why), 1);
	ck_assert_ptr_null(why);
	json_object_put(d);
	d = run(&t, bad, N(bad), 1);
	ck_assert_str_eq(check_status(d, "balance"), "failed");
	ck_assert(conf(d, "total_amount") < EX_READY_CONFIDENCE);
	ck_assert_int_eq(ex_draft_ready(d, &why), 0);
	ck_assert_str_eq(why, "low_confidence:total_amount");
	json_object_put(d);
}
END_TEST

/* line items one cent off the charges: failed, not ready */
START_TEST(line_items_check)
{
	static const char *const spec[] = {
		"1 50 40 Contoso Electric Inc.",
		"1 50 54 Springfield, IL 62704",
		"1 50 100 Description",
		"1 50 115 Water usage 20.00",
		"1 50 130 Meter fee 5.00",
		"1 50 145 Total Current Charges $25.01",
		"1 50 200 Amount Due $25.01",
		"1 50 215 Due Date: 12/04/2026",
	};
	struct tdoc t;
	const char *why;
	struct json_object *d = run(&t, spec, N(spec), 1);

	ck_assert_str_eq(check_status(d, "line_items"), "failed");
	ck_assert_int_eq(ex_draft_ready(d, &why), 0);
	json_object_put(d);
}
END_TEST

/* ---- OCR ---- */

START_TEST(ocr_noise)
{
	static const char *const spec[] = {
		"1 50 40 Contoso Electric Inc.",
		"1 50 54 Springfield, IL 62704",
		"1 50 100 Arnount Due: $1O5.OO",
		"1 50 120 Due Dat: 12/04/2026",
		"1 50 140 Acount Number: 4412-99",
	};
	struct tdoc t;
	char buf[64];
	struct json_object *d = run(&t, spec, N(spec), 0.8f);

	ck_assert_str_eq(aval(d, "total_amount", buf, sizeof(buf)), "105.00 USD");
	/* one OCR reading alone is never enough for READY */
	ck_assert(conf(d, "total_amount") < EX_READY_CONFIDENCE);
	ck_assert_str_eq(sval(d, "due_date_iso"), "2026-12-04");
	ck_assert_str_eq(sval(d, "account_number"), "4412-99");
	json_object_put(d);
}
END_TEST

/* OCR runs a label's words together and strews debris before a value */
START_TEST(ocr_joined)
{
	static const char *const spec[] = {
		"1 50 40 Riverbend Water District accounnumber + 897 630 7277",
		"1 50 100 Amount Due $10.00",
	};
	struct tdoc t;
	struct json_object *d = run(&t, spec, N(spec), 0.9f);

	ck_assert_str_eq(sval(d, "account_number"), "897 630 7277");
	ck_assert_str_eq(sval(d, "payee_name"), "Riverbend Water District");
	json_object_put(d);
}
END_TEST

/* a letter-spaced OCR letterhead respelled from its other mention; a
 * title in capitals after a mixed-case name is not part of it */
START_TEST(ocr_letterhead)
{
	static const char *const spaced[] = {
		"1 50 40 KEYSTO N E GAS S ERVICE ACCOUNT NUMBER",
		"1 50 100 Amount Due $10.00",
		"1 50 600 KEYSTONE GAS SERVICE Due Date 06-19-2026",
	};
	static const char *const title[] = {
		"1 50 40 City of Cedar Rapids UTILITY BILL",
		"1 50 100 Amount Due $10.00",
	};
	struct tdoc t;
	struct json_object *d = run(&t, spaced, N(spaced), 0.9f);

	ck_assert_str_eq(sval(d, "payee_name"), "KEYSTONE GAS SERVICE");
	json_object_put(d);
	d = run(&t, title, N(title), 1);
	ck_assert_str_eq(sval(d, "payee_name"), "City of Cedar Rapids");
	json_object_put(d);
}
END_TEST

/* ---- hostile input ---- */

START_TEST(hostile)
{
	static char big[200000];
	struct ex_line lines[6];
	struct ex_page pages[1] = { { 1, 612, 792, 0 } };
	struct ex_doc doc = { pages, 1, lines, N(lines) };
	struct json_object *d;
	size_t i;

	for (i = 0; i + 1 < sizeof(big); i++)
		big[i] = (char)("9,.$ \xc2\xa3" "Amount Due"[i % 16]);
	memset(lines, 0, sizeof(lines));
	lines[0].text = big;
	lines[0].page = 1;
	lines[1].text = NULL;
	lines[1].page = -5;
	lines[2].text = "\xff\xfe\xc0\x80 Amount Due \xed\xa0\x80 $12.00";
	lines[2].page = 1;
	lines[2].box.x0 = NAN;
	lines[2].box.y1 = INFINITY;
	lines[3].text = "Due Date 99/99/9999 31/02/2026 2026-02-29";
	lines[3].page = 1;
	lines[4].text = "Amount Due $99999999999999999999.99";
	lines[4].page = 2147483647;
	lines[4].conf = NAN;
	lines[5].text = "";
	d = ex_fields(&doc);
	ck_assert_ptr_nonnull(d);
	ck_assert_ptr_nonnull(json_object_to_json_string(d));
	ck_assert_str_eq(sval(d, "due_date_iso"), "");
	json_object_put(d);
	/* nothing at all */
	doc.nlines = 0;
	doc.lines = NULL;
	d = ex_fields(&doc);
	ck_assert_ptr_nonnull(d);
	ck_assert_ptr_null(get(get(d, "total_amount"), "value"));
	json_object_put(d);
	d = ex_fields(NULL);
	ck_assert_ptr_nonnull(d);
	json_object_put(d);
}
END_TEST

/* long names of many-byte characters are cut between characters: the
 * draft stays valid UTF-8 */
START_TEST(utf8_cut)
{
	static char remit[400], item[400];
	const char *spec[6];
	struct tdoc t;
	struct json_tokener *tok;
	struct json_object *d, *back;
	const char *text;
	size_t i;

	strcpy(remit, "1 350 654 ");
	strcpy(item, "1 50 115 ");
	for (i = 0; i < 120; i++) {
		strcat(remit, i % 2 ? "\xc3\xa9" : "\xe2\x82\xac");
		strcat(item, "\xc3\xa9");
	}
	strcat(item, " 12.00");
	spec[0] = "1 50 40 Contoso Electric Inc.";
	spec[1] = "1 50 100 Description";
	spec[2] = item;
	spec[3] = "1 50 200 Amount Due $12.00";
	spec[4] = "1 350 640 Remit to:";
	spec[5] = remit;
	d = run(&t, spec, N(spec), 1);
	ck_assert_ptr_nonnull(get(get(d, "remit_to_address"), "value"));
	ck_assert_ptr_nonnull(get(get(d, "line_items"), "value"));
	text = json_object_to_json_string(d);
	tok = json_tokener_new();
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
	back = json_tokener_parse_ex(tok, text, (int)strlen(text));
	ck_assert_ptr_nonnull(back);
	json_object_put(back);
	json_tokener_free(tok);
	json_object_put(d);
}
END_TEST

/* ---- ex_recheck and ex_draft_ready ---- */

static struct json_object *
field(struct json_object *value, double c, int reviewed)
{
	struct json_object *f = json_object_new_object();

	json_object_object_add(f, "value", value);
	json_object_object_add(f, "confidence", json_object_new_double(c));
	json_object_object_add(f, "source", NULL);
	if (reviewed)
		json_object_object_add(f, "reviewed", json_object_new_boolean(1));
	return f;
}

static struct json_object *
money(const char *v, const char *cur)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "value", json_object_new_string(v));
	json_object_object_add(o, "currency", json_object_new_string(cur));
	return o;
}

START_TEST(recheck)
{
	static const char *const spec[] = {
		"1 50 40 Contoso Electric Inc.",
		"1 50 54 Springfield, IL 62704",
		"1 50 100 Previous Balance $100.00",
		"1 50 115 Payments Received -$60.00",
		"1 50 130 Current Charges $45.50",
		"1 50 145 Total Amount Due $85.57",
		"1 50 160 Due Date: 12/04/2026",
	};
	struct tdoc t;
	const char *why;
	struct json_object *d = run(&t, spec, N(spec), 1);

	ck_assert_str_eq(check_status(d, "balance"), "failed");
	/* the reviewer corrects the total: the check passes */
	json_object_object_add(d, "total_amount", field(money("85.50", "USD"), 1, 1));
	ck_assert_int_eq(ex_recheck(d), 0);
	ck_assert_str_eq(check_status(d, "balance"), "passed");
	ck_assert_int_eq(ex_draft_ready(d, &why), 1);
	/* a reviewed total the arithmetic disagrees with: reported, not failed */
	json_object_object_add(d, "total_amount", field(money("90.00", "USD"), 1, 1));
	ck_assert_int_eq(ex_recheck(d), 0);
	ck_assert_str_eq(check_status(d, "balance"), "skipped");
	ck_assert_int_eq(ex_draft_ready(d, &why), 1);
	/* an unreviewed total that disagrees: failed, and its confidence drops */
	json_object_object_add(d, "total_amount", field(money("90.00", "USD"), 0.95, 0));
	ck_assert_int_eq(ex_recheck(d), 0);
	ck_assert_str_eq(check_status(d, "balance"), "failed");
	ck_assert(conf(d, "total_amount") < EX_READY_CONFIDENCE);
	/* cleared charges: nothing to check */
	json_object_object_add(d, "current_charges", field(NULL, 0, 1));
	ck_assert_int_eq(ex_recheck(d), 0);
	ck_assert_str_eq(check_status(d, "balance"), "skipped");
	json_object_put(d);
	/* not an object: nothing done */
	ck_assert_int_eq(ex_recheck(NULL), 0);
}
END_TEST

START_TEST(ready)
{
	struct json_object *d = json_object_new_object();
	const char *why;

	ck_assert_int_eq(ex_draft_ready(d, &why), 0);
	ck_assert_str_eq(why, "missing:payee_name");
	json_object_object_add(d, "payee_name", field(json_object_new_string("Acme"), 0.79, 0));
	ck_assert_int_eq(ex_draft_ready(d, &why), 0);
	ck_assert_str_eq(why, "missing:total_amount");
	json_object_object_add(d, "total_amount", field(money("10.00", "USD"), 0.9, 0));
	json_object_object_add(d, "due_date_iso", field(json_object_new_string("2026-12-04"), 0.9, 0));
	ck_assert_int_eq(ex_draft_ready(d, &why), 0);
	ck_assert_str_eq(why, "low_confidence:payee_name");
	json_object_object_add(d, "payee_name", field(json_object_new_string("Acme"), 0.8, 0));
	ck_assert_int_eq(ex_draft_ready(d, &why), 1);
	/* a total without a currency, a date that is none */
	json_object_object_add(d, "total_amount", field(money("10.00", "XXX"), 1, 1));
	ck_assert_int_eq(ex_draft_ready(d, &why), 0);
	ck_assert_str_eq(why, "missing:total_amount");
	json_object_object_add(d, "total_amount", field(money("10.00", "USD"), 1, 1));
	json_object_object_add(d, "due_date_iso", field(json_object_new_string("2026-02-30"), 1, 1));
	ck_assert_int_eq(ex_draft_ready(d, &why), 0);
	ck_assert_str_eq(why, "missing:due_date_iso");
	json_object_object_add(d, "due_date_iso", field(json_object_new_string("2026-02-28"), 1, 1));
	ck_assert_int_eq(ex_draft_ready(d, NULL), 1);
	/* a failed check */
	json_object_object_add(d, "previous_balance", field(money("5.00", "USD"), 1, 0));
	json_object_object_add(d, "payments_received", field(money("0.00", "USD"), 1, 0));
	json_object_object_add(d, "current_charges", field(money("5.00", "USD"), 1, 0));
	json_object_object_add(d, "total_amount", field(money("10.01", "USD"), 0.95, 0));
	ck_assert_int_eq(ex_recheck(d), 0);
	ck_assert_int_eq(ex_draft_ready(d, &why), 0);
	ck_assert_str_eq(why, "low_confidence:total_amount");
	json_object_object_add(d, "total_amount", field(money("10.01", "USD"), 0.95, 0));
	ck_assert_int_eq(ex_draft_ready(d, &why), 0);
	ck_assert_str_eq(why, "check_failed:balance");
	json_object_put(d);
}
END_TEST

/* deterministic: the same lines, the same draft */
START_TEST(deterministic)
{
	static const char *const spec[] = {
		"1 50 40 Contoso Electric Inc.",
		"1 50 54 Springfield, IL 62704",
		"1 50 100 Previous Balance $100.00",
		"1 50 145 Total Amount Due $85.50",
		"1 50 160 Due Date: 12/04/2026",
	};
	struct tdoc t;
	struct json_object *a = run(&t, spec, N(spec), 1), *b = run(&t, spec, N(spec), 1);

	ck_assert_str_eq(json_object_to_json_string(a), json_object_to_json_string(b));
	json_object_put(a);
	json_object_put(b);
}
END_TEST

static Suite *
fields_suite(void)
{
	Suite *s = suite_create("fields");
	TCase *tc = tcase_create("rules");

	tcase_add_loop_test(tc, total_labels, 0, N(totals));
	tcase_add_test(tc, total_traps);
	tcase_add_test(tc, total_table_below);
	tcase_add_test(tc, total_page2);
	tcase_add_test(tc, total_conflict);
	tcase_add_test(tc, dollar_country);
	tcase_add_loop_test(tc, due_dates, 0, N(dates));
	tcase_add_test(tc, date_order_evidence);
	tcase_add_test(tc, statement_and_period);
	tcase_add_loop_test(tc, identifiers, 0, N(idents));
	tcase_add_test(tc, identifier_next_cell);
	tcase_add_test(tc, payee_and_remit);
	tcase_add_test(tc, payee_letterhead);
	tcase_add_test(tc, line_items);
	tcase_add_test(tc, remit_beside_payable);
	tcase_add_test(tc, wrapped_value);
	tcase_add_test(tc, balance_picks_total);
	tcase_add_test(tc, items_left_out);
	tcase_add_test(tc, items_decimal_repair);
	tcase_add_test(tc, balance_check);
	tcase_add_test(tc, line_items_check);
	tcase_add_test(tc, ocr_noise);
	tcase_add_test(tc, ocr_joined);
	tcase_add_test(tc, ocr_letterhead);
	tcase_add_test(tc, hostile);
	tcase_add_test(tc, utf8_cut);
	tcase_add_test(tc, recheck);
	tcase_add_test(tc, ready);
	tcase_add_test(tc, deterministic);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tcheck_run(fields_suite());
}
