#ifndef BDS_EXTRACT_H
#define BDS_EXTRACT_H
/*
 * Bill extraction: a document's text, with positions, to a review draft.
 *
 * Two halves meet here. extract_doc.c (MuPDF, Tesseract, libmagic) reads a
 * hostile document inside bds-extract, the sandboxed program bds-jobs runs
 * per document, and fills a struct ex_doc. extract_fields.c turns an
 * ex_doc into the draft with pure rules: no I/O, no globals, no database,
 * so unit tests and a libFuzzer target drive it directly.
 *
 * Coordinates are PDF points (1/72 inch) from the page's top-left corner,
 * x to the right, y down; an image's pixels are scaled to points by its
 * resolution (300 dpi when it declares none).
 */
#include <stddef.h>

struct json_object;

struct ex_box { float x0, y0, x1, y1; };

/* One line of text as laid out on its page. */
struct ex_line {
	const char	*text;		/* UTF-8, words joined by single spaces */
	struct ex_box	 box;
	float		 conf;		/* 0..1: 1 from a text layer, OCR's mean word confidence */
	int		 page;		/* 1-based */
};

struct ex_page {
	int		 number;	/* 1-based */
	float		 width, height;	/* points */
	int		 ocr;		/* its lines came from OCR */
};

struct ex_doc {
	const struct ex_page *pages;
	size_t		 npages;
	const struct ex_line *lines;	/* page by page, top to bottom, left to right */
	size_t		 nlines;
};

/*
 * The draft of doc: a new JSON object (the caller puts it) with one member
 * per field, each {value, confidence (0..1), source{page, bbox [x0, y0, x1,
 * y1]}}, value null, confidence 0 and source null when the field was not
 * found:
 *
 *	payee_name, account_number, bill_number, reference_number	string
 *	total_amount, previous_balance, payments_received, current_charges
 *		{value: decimal string in the currency's exponent, currency}
 *	currency							ISO 4217
 *	due_date_iso, statement_date					YYYY-MM-DD
 *	service_period		{start_date, end_date}
 *	line_items		[{description, amount{value, currency}, category}]
 *				category usage|fee|tax|credit|adjustment|other
 *	remit_to_address	{lines: [string], text}
 *	payment_url		https URL
 *
 * plus "checks": [{name, status passed|failed|skipped, expected, actual,
 * message}], the arithmetic checks (balance: previous - payments + charges
 * = total; line_items: the items sum to the current charges, or to the
 * total when no charges line is shown). A failed check lowers the
 * confidence of total_amount below the review threshold.
 * NULL only when out of memory.
 */
struct json_object *ex_fields(const struct ex_doc *doc);

/*
 * Recompute draft's "checks" from its fields as they stand (after a
 * review changed them), in place. 0 ok, -1 out of memory.
 */
int	 ex_recheck(struct json_object *draft);

/* The confidence a required field needs for READY_TO_COMMIT. */
#define EX_READY_CONFIDENCE	0.80

/*
 * Whether a draft may be committed without review: payee_name,
 * total_amount (with its currency) and due_date_iso found at
 * EX_READY_CONFIDENCE or above, and no check failed. 1 ready; 0 not, with
 * *why (static) naming the first reason: "missing:<field>",
 * "low_confidence:<field>", "check_failed:<name>".
 */
int	 ex_draft_ready(const struct json_object *draft, const char **why);

#endif
