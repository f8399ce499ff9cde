/*
 * The sandbox connector's statement PDF (its render in connector.h): PDF
 * 1.4 written by hand, six objects
 * (catalog, pages, one A4 page, Helvetica, the content stream, info), a
 * classic xref table whose offsets are counted as the bytes are written.
 * Nothing depends on the clock or on ids, so one statement always gives the
 * same bytes and therefore the same hash in the document store.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "core/arena.h"
#include "core/money.h"
#include "bills/bills.h"
#include "jobs/connectors/connector.h"

#define PDF_OBJS	6		/* objects 1..6 */
#define PDF_MAX_ITEMS	30		/* rows that fit on the page above the total */

struct pbuf {
	struct arena	*a;
	char		*p;
	size_t		 len, cap;
	int		 failed;	/* a format failed: the render answers NULL */
};

/* Room for n more bytes and the NUL, grown from the arena. */
static void
pb_reserve(struct pbuf *b, size_t n)
{
	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 2048;
		char *np;

		while (cap < b->len + n + 1)
			cap *= 2;
		np = arena_alloc(b->a, cap);
		if (b->len > 0)
			memcpy(np, b->p, b->len);
		b->p = np;
		b->cap = cap;
	}
}

static void
pb_add(struct pbuf *b, const char *s, size_t n)
{
	pb_reserve(b, n);
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
}

/* Formatted text of any length: the buffer grows to hold it all. */
static void __attribute__((format(printf, 2, 3)))
pb_printf(struct pbuf *b, const char *fmt, ...)
{
	va_list ap, again;
	int n;

	va_start(ap, fmt);
	va_copy(again, ap);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0) {
		b->failed = 1;
		va_end(again);
		return;
	}
	pb_reserve(b, (size_t)n);
	vsnprintf(b->p + b->len, (size_t)n + 1, fmt, again);
	va_end(again);
	b->len += (size_t)n;
}

/* A PDF literal string: \ ( ) escaped; bytes outside printable ASCII
 * (Helvetica's standard glyphs) become '?'. At most 90 characters. */
static void
pb_text(struct pbuf *b, const char *s)
{
	size_t i;

	pb_add(b, "(", 1);
	for (i = 0; s != NULL && s[i] != '\0' && i < 90; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '\\' || c == '(' || c == ')') {
			char e[2] = { '\\', (char)c };

			pb_add(b, e, 2);
		} else {
			char ch = c >= 0x20 && c <= 0x7e ? (char)c : '?';

			pb_add(b, &ch, 1);
		}
	}
	pb_add(b, ")", 1);
}

/* One run of text at (x, y) in points. */
static void
pb_line(struct pbuf *b, int x, int y, int size, const char *s)
{
	pb_printf(b, "BT /F1 %d Tf %d %d Td ", size, x, y);
	pb_text(b, s);
	pb_add(b, " Tj ET\n", 7);
}

/* "1234.56 USD" from minor units, at the currency's exponent as the API
 * shows it (core/money.h). */
static const char *
money(struct arena *a, const struct bills_money *m)
{
	return arena_printf(a, "%s %s", money_format(a, m->minor,
	    money_exponent_shown(m->currency)), m->currency ? m->currency : "");
}

static const char *
or_dash(const char *s)
{
	return s != NULL && *s != '\0' ? s : "-";
}

/* The page's content stream. */
static void
content(struct pbuf *c, const char *biller, const struct bills_statement *st)
{
	struct arena *a = c->a;
	int y = 780;
	size_t i;

	pb_line(c, 50, y, 18, or_dash(biller));
	pb_line(c, 50, y -= 24, 12, "Statement");
	pb_line(c, 50, y -= 28, 10, arena_printf(a, "Bill number: %s", or_dash(st->bill_number)));
	pb_line(c, 50, y -= 15, 10, arena_printf(a, "Service period: %s to %s",
	    or_dash(st->period_start), or_dash(st->period_end)));
	pb_line(c, 50, y -= 15, 10, arena_printf(a, "Statement date: %s",
	    or_dash(st->statement_date)));
	pb_line(c, 50, y -= 15, 10, arena_printf(a, "Due date: %s", or_dash(st->due_date)));
	pb_line(c, 50, y -= 15, 10, arena_printf(a, "Previous balance: %s",
	    money(a, &st->previous_balance)));
	if (st->has_figures) {
		pb_line(c, 50, y -= 15, 10, arena_printf(a, "Payments received: %s",
		    money(a, &st->payments_received)));
		pb_line(c, 50, y -= 15, 10, arena_printf(a, "Current charges: %s",
		    money(a, &st->current_charges)));
	}
	pb_line(c, 50, y -= 28, 12, "Line items");
	for (i = 0; i < st->nitems && i < PDF_MAX_ITEMS; i++) {
		const struct bills_line_item *it = &st->items[i];

		y -= 15;
		pb_line(c, 50, y, 10, or_dash(it->description));
		if (it->has_quantity)
			pb_line(c, 300, y, 10, arena_printf(a, "%g %s", it->quantity,
			    it->unit != NULL ? it->unit : ""));
		pb_line(c, 430, y, 10, money(a, &it->amount));
	}
	if (st->nitems > PDF_MAX_ITEMS)
		pb_line(c, 50, y -= 15, 10, arena_printf(a, "... and %zu more items",
		    st->nitems - PDF_MAX_ITEMS));
	pb_line(c, 50, y -= 28, 12, "Total");
	pb_line(c, 430, y, 12, money(a, &st->total));
	pb_line(c, 50, y -= 18, 12, "Amount due");
	pb_line(c, 430, y, 12, money(a, &st->amount_due));
}

unsigned char *
sandbox_pdf_render(struct arena *a, const char *biller_name, const struct bills_statement *st,
    size_t *len)
{
	struct pbuf b = { a, NULL, 0, 0, 0 }, c = { a, NULL, 0, 0, 0 };
	size_t off[PDF_OBJS + 1], xref;
	int i;

	content(&c, biller_name, st);
	/* the second line: bytes above 127 mark the file as binary */
	pb_add(&b, "%PDF-1.4\n%\xe2\xe3\xcf\xd3\n", 15);
	off[1] = b.len;
	pb_printf(&b, "1 0 obj\n<< /Type /Catalog /Pages 2 0 R >>\nendobj\n");
	off[2] = b.len;
	pb_printf(&b, "2 0 obj\n<< /Type /Pages /Kids [3 0 R] /Count 1 >>\nendobj\n");
	off[3] = b.len;
	pb_printf(&b, "3 0 obj\n<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842]"
	    " /Resources << /Font << /F1 4 0 R >> >> /Contents 5 0 R >>\nendobj\n");
	off[4] = b.len;
	pb_printf(&b, "4 0 obj\n<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica"
	    " /Encoding /WinAnsiEncoding >>\nendobj\n");
	off[5] = b.len;
	pb_printf(&b, "5 0 obj\n<< /Length %zu >>\nstream\n", c.len);
	pb_add(&b, c.p, c.len);
	pb_printf(&b, "endstream\nendobj\n");
	off[6] = b.len;
	pb_printf(&b, "6 0 obj\n<< /Producer (Bill Data Service) /Title ");
	pb_text(&b, st->bill_number != NULL ? st->bill_number : "Statement");
	pb_printf(&b, " >>\nendobj\n");
	xref = b.len;
	pb_printf(&b, "xref\n0 %d\n0000000000 65535 f \n", PDF_OBJS + 1);
	for (i = 1; i <= PDF_OBJS; i++)
		pb_printf(&b, "%010zu 00000 n \n", off[i]);
	pb_printf(&b, "trailer\n<< /Size %d /Root 1 0 R /Info 6 0 R >>\nstartxref\n%zu\n%%%%EOF\n",
	    PDF_OBJS + 1, xref);
	if (b.failed || c.failed)
		return NULL;
	*len = b.len;
	return (unsigned char *)b.p;
}
