/*
 * The sandbox statement PDF (lib/jobs/connectors/sandbox_pdf.c): a valid PDF 1.4 whose
 * xref offsets each point at "N 0 obj", whose stream /Length is exact,
 * whose text holds the statement's figures, and whose bytes are the same
 * for the same statement.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "core/arena.h"
#include "bills/bills.h"
#include "jobs/connectors/connector.h"
#include "tarena.h"
#include "tcheck.h"

static struct bills_line_item items[] = {
	{ "Energy charge", "usage", "kWh", { 7200, "USD" }, 480, 1 },
	{ "Service charge", "fee", NULL, { 1200, "USD" }, 0, 0 },
	{ "Credit (goodwill) \\ adj", "credit", NULL, { -250, "USD" }, 0, 0 },
};

static struct bills_statement
statement(void)
{
	struct bills_statement st;

	memset(&st, 0, sizeof(st));
	st.ref = "sbx-user_good-1-2026-09";
	st.status = "PENDING";
	st.total = (struct bills_money){ 8150, "USD" };
	st.amount_due = (struct bills_money){ 8150, "USD" };
	st.previous_balance = (struct bills_money){ 7905, "USD" };
	st.payments_received = (struct bills_money){ 7905, "USD" };
	st.current_charges = (struct bills_money){ 8150, "USD" };
	st.has_figures = 1;
	st.due_date = "2026-10-21";
	st.statement_date = "2026-10-01";
	st.period_start = "2026-09-01";
	st.period_end = "2026-09-30";
	st.bill_number = "sbx-user_good-1-2026-09";
	st.items = items;
	st.nitems = sizeof(items) / sizeof(items[0]);
	st.has_document = 1;
	return st;
}

/* memmem over the PDF */
static int
has(const unsigned char *p, size_t len, const char *s)
{
	return memmem(p, len, s, strlen(s)) != NULL;
}

/* Every xref entry of objects 1..n points at "<i> 0 obj"; startxref at
 * "xref"; returns the object count the table declares. */
static int
check_xref(const unsigned char *pdf, size_t len)
{
	const char *sx = memmem(pdf, len, "startxref\n", 10), *x, *e;
	char head[32];
	long xref;
	int first, n;

	ck_assert_ptr_nonnull(sx);
	xref = strtol(sx + 10, NULL, 10);
	ck_assert_int_gt(xref, 0);
	ck_assert_int_lt(xref, (long)len);
	x = (const char *)pdf + xref;
	ck_assert_int_eq(strncmp(x, "xref\n", 5), 0);
	ck_assert_int_eq(sscanf(x + 5, "%d %d", &first, &n), 2);
	ck_assert_int_eq(first, 0);
	ck_assert_int_ge(n, 2);
	e = strchr(x + 5, '\n') + 1;
	ck_assert_int_eq(strncmp(e, "0000000000 65535 f \n", 20), 0);
	for (int i = 1; i < n; i++) {
		const char *ent = e + 20 * i;
		long off = strtol(ent, NULL, 10);

		/* each entry exactly 20 bytes: 10 digits, 5 digits, n, EOL */
		ck_assert_int_eq(strncmp(ent + 10, " 00000 n \n", 10), 0);
		ck_assert_int_lt(off, xref);
		snprintf(head, sizeof(head), "%d 0 obj\n", i);
		ck_assert_msg(strncmp((const char *)pdf + off, head, strlen(head)) == 0,
		    "xref entry %d (offset %ld) does not point at \"%d 0 obj\"", i, off, i);
	}
	snprintf(head, sizeof(head), "/Size %d ", n);
	ck_assert(has(pdf, len, head));
	return n;
}

/* The figures as Helvetica text runs; parentheses and backslashes
 * escaped, so the literal stays balanced. */
static const char *const runs[] = {
	"(Sandbox Electric) Tj",
	"(Bill number: sbx-user_good-1-2026-09) Tj",
	"(Service period: 2026-09-01 to 2026-09-30) Tj",
	"(Statement date: 2026-10-01) Tj",
	"(Due date: 2026-10-21) Tj",
	"(Previous balance: 79.05 USD) Tj",
	"(Payments received: 79.05 USD) Tj",
	"(Current charges: 81.50 USD) Tj",
	"(Energy charge) Tj",
	"(480 kWh) Tj",
	"(72.00 USD) Tj",
	"(-2.50 USD) Tj",
	"(81.50 USD) Tj",
	"(Credit \\(goodwill\\) \\\\ adj) Tj",
	"/BaseFont /Helvetica",
	"/Title (sbx-user_good-1-2026-09)",
};

START_TEST(valid_pdf)
{
	struct bills_statement st = statement();
	size_t len;
	unsigned char *pdf = sandbox_pdf_render(&a, "Sandbox Electric", &st, &len);
	const char *s, *stream;
	long slen;

	ck_assert_int_gt(len, 200);
	ck_assert_int_eq(memcmp(pdf, "%PDF-1.4\n", 9), 0);
	ck_assert(len > 6 && memcmp(pdf + len - 6, "%%EOF\n", 6) == 0);
	ck_assert_int_eq(check_xref(pdf, len), 7);
	/* the stream's /Length is its byte count up to "endstream" */
	s = memmem(pdf, len, "/Length ", 8);
	ck_assert_ptr_nonnull(s);
	slen = strtol(s + 8, NULL, 10);
	stream = strstr(s, "stream\n") + 7;
	ck_assert_int_eq(strncmp(stream + slen, "endstream", 9), 0);
	for (size_t i = 0; i < sizeof(runs) / sizeof(runs[0]); i++)
		ck_assert_msg(has(pdf, len, runs[i]), "no %s in the PDF", runs[i]);
}
END_TEST

START_TEST(deterministic)
{
	struct bills_statement st = statement();
	size_t l1, l2;
	unsigned char *p1 = sandbox_pdf_render(&a, "Sandbox Electric", &st, &l1);
	unsigned char *p2 = sandbox_pdf_render(&a, "Sandbox Electric", &st, &l2);

	ck_assert_uint_eq(l1, l2);
	ck_assert_int_eq(memcmp(p1, p2, l1), 0);
	/* and another statement differs */
	st.total.minor = 8151;
	p2 = sandbox_pdf_render(&a, "Sandbox Electric", &st, &l2);
	ck_assert(l1 != l2 || memcmp(p1, p2, l1) != 0);
}
END_TEST

/* Absent fields, non-ASCII names, zero-exponent currencies, many items. */
START_TEST(edges)
{
	static struct bills_line_item many[60];
	struct bills_statement st = statement();
	size_t len;
	unsigned char *pdf;

	for (size_t i = 0; i < 60; i++)
		many[i] = (struct bills_line_item){ "Item", "other", NULL, { 100, "JPY" }, 0, 0 };
	st.bill_number = NULL;
	st.due_date = NULL;
	st.items = many;
	st.nitems = 60;
	st.total = (struct bills_money){ 6000, "JPY" };
	pdf = sandbox_pdf_render(&a, "\xc3\x89lectricit\xc3\xa9 (Sud)", &st, &len);
	check_xref(pdf, len);
	ck_assert(has(pdf, len, "(??lectricit?? \\(Sud\\)) Tj"));
	ck_assert(has(pdf, len, "(Bill number: -) Tj"));
	ck_assert(has(pdf, len, "(6000 JPY) Tj"));
	ck_assert(has(pdf, len, "(... and 30 more items) Tj"));
	ck_assert(has(pdf, len, "/Title (Statement)"));
}
END_TEST

/* Every amount at its currency's own exponent (core/money.h): UYW and CLF
 * at four digits, BHD at three; an unknown code at the SQL fallback. */
START_TEST(exponents)
{
	static struct bills_line_item four[] = {
		{ "Indexed charge", "usage", NULL, { 1234567, "UYW" }, 0, 0 },
		{ "Unit charge", "fee", NULL, { 5, "CLF" }, 0, 0 },
		{ "Fee", "fee", NULL, { -12345, "BHD" }, 0, 0 },
		{ "Legacy", "other", NULL, { 12345, "ZZZ" }, 0, 0 },
	};
	struct bills_statement st = statement();
	size_t len;
	unsigned char *pdf;

	st.items = four;
	st.nitems = sizeof(four) / sizeof(four[0]);
	st.total = (struct bills_money){ 1234567, "UYW" };
	st.amount_due = (struct bills_money){ 10000, "UYW" };
	st.previous_balance = (struct bills_money){ 0, "UYW" };
	pdf = sandbox_pdf_render(&a, "Sandbox Electric", &st, &len);
	ck_assert_ptr_nonnull(pdf);
	check_xref(pdf, len);
	ck_assert(has(pdf, len, "(123.4567 UYW) Tj"));
	ck_assert(has(pdf, len, "(1.0000 UYW) Tj"));
	ck_assert(has(pdf, len, "(Previous balance: 0.0000 UYW) Tj"));
	ck_assert(has(pdf, len, "(0.0005 CLF) Tj"));
	ck_assert(has(pdf, len, "(-12.345 BHD) Tj"));
	ck_assert(has(pdf, len, "(123.45 ZZZ) Tj"));
	ck_assert(!has(pdf, len, "(12345.67 UYW) Tj"));
}
END_TEST

static Suite *
pdf_suite(void)
{
	Suite *s = suite_create("sandbox_pdf");
	TCase *tc = tcase_create("render");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, valid_pdf);
	tcase_add_test(tc, deterministic);
	tcase_add_test(tc, edges);
	tcase_add_test(tc, exponents);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tcheck_run(pdf_suite());
}
