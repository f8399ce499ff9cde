/*
 * extract_doc_pdf.c: a PDF through MuPDF, every step inside fz_try and
 * MuPDF's allocations under a cap. Before a page is loaded: encryption,
 * the page count (the page tree's claim, read without walking it), then
 * one walk over every object for active content (JavaScript, launch
 * actions, embedded files), image dimensions, and every stream's decoded
 * size against one budget (a deflate bomb ends there). Then each page's
 * text layer; a page without one is rendered and OCR'd.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <leptonica/allheaders.h>
#include <mupdf/fitz.h>
#include <mupdf/pdf.h>

#include "imports/extract/extract_doc.h"

/* A page with fewer printable characters than this is a scan. */
#define TEXT_LAYER_MIN	8
/* How deep a walk follows direct objects inside one object. */
#define WALK_DEPTH	32

/* MuPDF's allocator: every block carries its size, the total is capped. */
struct cap {
	size_t		 used, limit;
	int		 hit;
};

#define CAP_HDR 16

static void *
cap_malloc(void *u, size_t n)
{
	struct cap *c = u;
	unsigned char *p;

	if (n > c->limit - c->used || (p = malloc(n + CAP_HDR)) == NULL) {
		c->hit = 1;
		return NULL;
	}
	c->used += n;
	memcpy(p, &n, sizeof n);
	return p + CAP_HDR;
}

static void
cap_free(void *u, void *q)
{
	struct cap *c = u;
	size_t n;

	if (q == NULL)
		return;
	memcpy(&n, (unsigned char *)q - CAP_HDR, sizeof n);
	c->used -= n;
	free((unsigned char *)q - CAP_HDR);
}

static void *
cap_realloc(void *u, void *q, size_t n)
{
	struct cap *c = u;
	size_t old;
	unsigned char *p;

	if (q == NULL)
		return cap_malloc(u, n);
	if (n == 0) {
		cap_free(u, q);
		return NULL;
	}
	memcpy(&old, (unsigned char *)q - CAP_HDR, sizeof old);
	if (n > old && n - old > c->limit - c->used) {
		c->hit = 1;
		return NULL;
	}
	if ((p = realloc((unsigned char *)q - CAP_HDR, n + CAP_HDR)) == NULL) {
		c->hit = 1;
		return NULL;
	}
	c->used = c->used - old + n;
	memcpy(p, &n, sizeof n);
	return p + CAP_HDR;
}

/* MuPDF's warnings quote the document: not for any log. */
static void
quiet(void *user, const char *message)
{
}

/* What one walk over the objects found. */
struct walk {
	const struct ex_limits *lim;
	const char	*reject;
	char		 detail[120];
	size_t		 inflated;
};

static int
is_name(fz_context *ctx, pdf_obj *o, const char *name)
{
	return pdf_is_name(ctx, o) && strcmp(pdf_to_name(ctx, o), name) == 0;
}

/* The direct objects in o, looking for what a reader must refuse. */
static void
walk_obj(fz_context *ctx, pdf_obj *o, int depth, struct walk *w)
{
	if (w->reject != NULL || depth > WALK_DEPTH || pdf_is_indirect(ctx, o))
		return;
	if (pdf_is_array(ctx, o)) {
		int n = pdf_array_len(ctx, o);
		for (int i = 0; i < n && w->reject == NULL; i++)
			walk_obj(ctx, pdf_array_get(ctx, o, i), depth + 1, w);
		return;
	}
	if (!pdf_is_dict(ctx, o))
		return;
	pdf_obj *s = pdf_dict_gets(ctx, o, "S");
	if (is_name(ctx, s, "JavaScript") || is_name(ctx, s, "Launch") ||
	    pdf_dict_gets(ctx, o, "JS") != NULL) {
		w->reject = EX_REJ_ACTIVE;
		snprintf(w->detail, sizeof w->detail, "a %s action",
		    is_name(ctx, s, "Launch") ? "launch" : "JavaScript");
		return;
	}
	if (pdf_dict_gets(ctx, o, "EmbeddedFiles") != NULL || pdf_dict_gets(ctx, o, "EF") != NULL ||
	    is_name(ctx, pdf_dict_gets(ctx, o, "Type"), "EmbeddedFile")) {
		w->reject = EX_REJ_ACTIVE;
		snprintf(w->detail, sizeof w->detail, "an embedded file");
		return;
	}
	if (is_name(ctx, pdf_dict_gets(ctx, o, "Subtype"), "Image")) {
		long long iw = pdf_to_int(ctx, pdf_dict_gets(ctx, o, "Width"));
		long long ih = pdf_to_int(ctx, pdf_dict_gets(ctx, o, "Height"));
		if (iw < 0 || ih < 0 || iw * ih > w->lim->max_pixels) {
			w->reject = EX_REJ_PIXELS;
			snprintf(w->detail, sizeof w->detail, "an image of %lld x %lld pixels",
			    iw, ih);
			return;
		}
	}
	int n = pdf_dict_len(ctx, o);
	for (int i = 0; i < n && w->reject == NULL; i++)
		walk_obj(ctx, pdf_dict_get_val(ctx, o, i), depth + 1, w);
}

/* Filters whose output the walk measures (image codecs are images). */
static int
measured(fz_context *ctx, pdf_obj *f)
{
	static const char *const plain[] = {
		"FlateDecode", "Fl", "LZWDecode", "LZW", "ASCIIHexDecode", "AHx",
		"ASCII85Decode", "A85", "RunLengthDecode", "RL",
	};
	int n = pdf_is_array(ctx, f) ? pdf_array_len(ctx, f) : 1;

	if (f == NULL)
		return 1;
	for (int i = 0; i < n; i++) {
		pdf_obj *one = pdf_is_array(ctx, f) ? pdf_array_get(ctx, f, i) : f;
		size_t k;
		for (k = 0; k < sizeof plain / sizeof *plain; k++)
			if (is_name(ctx, one, plain[k]))
				break;
		if (k == sizeof plain / sizeof *plain)
			return 0;
	}
	return 1;
}

/* Decode stream num, counting its bytes against the document's budget. */
static void
inflate_stream(fz_context *ctx, pdf_document *pdf, int num, struct walk *w)
{
	static unsigned char buf[1 << 16];
	fz_stream *volatile stm = NULL;

	fz_try(ctx) {
		size_t n;
		stm = pdf_open_stream_number(ctx, pdf, num);
		while ((n = fz_read(ctx, stm, buf, sizeof buf)) > 0) {
			w->inflated += n;
			if (w->inflated > w->lim->inflate_bytes) {
				w->reject = EX_REJ_TOO_LARGE;
				snprintf(w->detail, sizeof w->detail,
				    "its streams decode to more than %zu MiB",
				    w->lim->inflate_bytes >> 20);
				break;
			}
		}
	}
	fz_always(ctx)
		fz_drop_stream(ctx, stm);
	fz_catch(ctx) {
		/* a broken stream: the page that uses it fails on its own */
		if (fz_caught(ctx) == FZ_ERROR_MEMORY)
			fz_rethrow(ctx);
	}
}

/* Every object of the file, once. Throws only out of memory. */
static void
walk_all(fz_context *ctx, pdf_document *pdf, struct walk *w)
{
	int n = pdf_xref_len(ctx, pdf);

	for (int num = 1; num < n && w->reject == NULL; num++) {
		pdf_obj *volatile o = NULL;
		fz_try(ctx) {
			o = pdf_load_object(ctx, pdf, num);
			walk_obj(ctx, o, 0, w);
			/* an image decodes to its checked dimensions, no further */
			if (w->reject == NULL && pdf_obj_num_is_stream(ctx, pdf, num) &&
			    !is_name(ctx, pdf_dict_gets(ctx, o, "Subtype"), "Image") &&
			    measured(ctx, pdf_dict_gets(ctx, o, "Filter")))
				inflate_stream(ctx, pdf, num, w);
		}
		fz_always(ctx)
			pdf_drop_obj(ctx, o);
		fz_catch(ctx) {
			if (fz_caught(ctx) == FZ_ERROR_MEMORY)
				fz_rethrow(ctx);
		}
	}
}

/* A line's characters as UTF-8, whitespace runs as one space, trimmed. */
static size_t
line_text(fz_stext_line *line, char *out, size_t cap, int *printable)
{
	size_t n = 0;
	int space = 1;

	for (fz_stext_char *ch = line->first_char; ch != NULL; ch = ch->next) {
		char u[FZ_UTFMAX];
		int c = ch->c, k;
		if (c == ' ' || c == '\t' || c == 0xa0 || c < 0x20 || (c >= 0x2000 && c <= 0x200b)) {
			if (!space && n + 1 < cap)
				out[n++] = ' ';
			space = 1;
			continue;
		}
		if (c == 0xfffd)
			continue;
		k = fz_runetochar(u, c);
		if (n + (size_t)k + 1 >= cap)
			break;
		memcpy(out + n, u, (size_t)k);
		n += (size_t)k;
		space = 0;
		(*printable)++;
	}
	while (n > 0 && out[n - 1] == ' ')
		n--;
	out[n] = '\0';
	return n;
}

/* The text layer of one page into res; the count of printable characters. */
static int
text_layer(fz_context *ctx, fz_page *page, int number, struct ex_result *res)
{
	fz_stext_page *volatile st = NULL;
	volatile int printable = 0;
	static char text[4096];

	fz_try(ctx) {
		fz_stext_options opts = { 0 };
		st = fz_new_stext_page_from_page(ctx, page, &opts);
		for (fz_stext_block *b = st->first_block; b != NULL; b = b->next) {
			if (b->type != FZ_STEXT_BLOCK_TEXT)
				continue;
			for (fz_stext_line *l = b->u.t.first_line; l != NULL; l = l->next) {
				int p = 0;
				if (line_text(l, text, sizeof text, &p) == 0)
					continue;
				printable += p;
				struct ex_box box = { l->bbox.x0, l->bbox.y0, l->bbox.x1, l->bbox.y1 };
				if (ex_result_line(res, text, box, 1.0f, number) != 0)
					fz_throw(ctx, FZ_ERROR_MEMORY, "out of memory");
			}
		}
	}
	fz_always(ctx)
		fz_drop_stext_page(ctx, st);
	fz_catch(ctx)
		fz_rethrow(ctx);
	return printable;
}

/* Pixels a point for OCR: lim->dpi, less when the page would pass max_pixels. */
static __attribute__((noinline)) double
ocr_scale(fz_rect r, const struct ex_limits *lim)
{
	double w = r.x1 - r.x0, h = r.y1 - r.y0, s = lim->dpi / 72.0;

	return w * h * s * s > (double)lim->max_pixels ?
	    sqrt((double)lim->max_pixels / (w * h)) : s;
}

/* Render page at the OCR resolution (capped by max_pixels) and OCR it. */
static int
ocr_page(fz_context *ctx, fz_page *page, fz_rect r, int number,
    const struct ex_limits *lim, struct ex_result *res)
{
	fz_pixmap *volatile pm = NULL;
	PIX *volatile pix = NULL;
	volatile int rc = -1;
	const volatile double scale = ocr_scale(r, lim);

	fz_try(ctx) {
		fz_matrix m = fz_scale((float)scale, (float)scale);
		pm = fz_new_pixmap_from_page(ctx, page, m, fz_device_gray(ctx), 0);
		int pw = fz_pixmap_width(ctx, pm), ph = fz_pixmap_height(ctx, pm);
		int stride = (int)fz_pixmap_stride(ctx, pm);
		const unsigned char *s = fz_pixmap_samples(ctx, pm);
		if ((pix = pixCreate(pw, ph, 8)) == NULL)
			fz_throw(ctx, FZ_ERROR_MEMORY, "out of memory");
		l_uint32 *data = pixGetData(pix);
		int wpl = pixGetWpl(pix);
		for (int y = 0; y < ph; y++) {
			l_uint32 *row = data + (size_t)y * (size_t)wpl;
			const unsigned char *src = s + (size_t)y * (size_t)stride;
			for (int x = 0; x < pw; x++)
				SET_DATA_BYTE(row, x, src[x]);
		}
		fz_drop_pixmap(ctx, pm);
		pm = NULL;
		/* the image's resolution is scale * 72; boxes come back in points */
		rc = ex_ocr_pix(pix, (int)lround(scale * 72.0), number, res);
	}
	fz_always(ctx) {
		fz_drop_pixmap(ctx, pm);
		PIX *p = pix;
		pixDestroy(&p);
	}
	fz_catch(ctx)
		fz_rethrow(ctx);
	return rc;
}

/* Page i: its text layer, else OCR. Throws on MuPDF failures. */
static void
read_page(fz_context *ctx, fz_document *doc, int i, const struct ex_limits *lim,
    struct ex_result *res)
{
	fz_page *volatile page = NULL;
	const size_t first = res->doc.nlines;

	fz_try(ctx) {
		page = fz_load_page(ctx, doc, i);
		fz_rect r = fz_bound_page(ctx, page);
		if (r.x1 - r.x0 < 1 || r.y1 - r.y0 < 1 || r.x1 - r.x0 > 14400 ||
		    r.y1 - r.y0 > 14400)
			fz_throw(ctx, FZ_ERROR_SYNTAX, "page size");
		int ocr = text_layer(ctx, page, i + 1, res) < TEXT_LAYER_MIN;
		if (ocr) {
			/* a few stray characters over a scan: OCR replaces them */
			for (size_t k = first; k < res->doc.nlines; k++)
				free((char *)res->linev[k].text);
			res->doc.nlines = first;
			if (ocr_page(ctx, page, r, i + 1, lim, res) != 0)
				fz_throw(ctx, FZ_ERROR_GENERIC, "ocr failed");
			res->ocr_pages++;
		}
		ex_result_order(res, first);
		if (ex_result_page(res, i + 1, r.x1 - r.x0, r.y1 - r.y0, ocr) != 0)
			fz_throw(ctx, FZ_ERROR_MEMORY, "out of memory");
	}
	fz_always(ctx)
		fz_drop_page(ctx, page);
	fz_catch(ctx)
		fz_rethrow(ctx);
}

int
ex_doc_pdf(const unsigned char *bytes, size_t len, const struct ex_limits *lim,
    struct ex_result *res)
{
	struct cap cap = { 0, lim->mupdf_bytes, 0 };
	fz_alloc_context alloc = { &cap, cap_malloc, cap_realloc, cap_free };
	fz_context *ctx;
	fz_stream *volatile stm = NULL;
	fz_document *volatile doc = NULL;
	struct walk w = { lim, NULL, "", 0 };
	volatile int npages = 0, stage = 0;

	if ((ctx = fz_new_context(&alloc, NULL, (size_t)64 << 20)) == NULL)
		return -1;
	fz_set_warning_callback(ctx, quiet, NULL);
	fz_set_error_callback(ctx, quiet, NULL);
	fz_try(ctx) {
		/* the PDF handler alone: no other format's parser is reachable */
		stm = fz_open_memory(ctx, bytes, len);
		pdf_document *pdf = pdf_open_document_with_stream(ctx, stm);
		doc = &pdf->super;
		stage = 1;
		/*
		 * A password we do not have. An owner password alone (printing or
		 * copying restricted, as many statements are) opens with the
		 * empty user password: MuPDF decrypts it and it is read.
		 */
		if (fz_needs_password(ctx, doc)) {
			ex_result_reject(res, EX_REJ_ENCRYPTED, "the PDF needs a password");
			break;
		}
		/* the page tree root's Count: no page is loaded to know it */
		npages = fz_count_pages(ctx, doc);
		if (npages > lim->max_pages) {
			ex_result_reject(res, EX_REJ_PAGES, "%d pages, at most %d",
			    npages, lim->max_pages);
			break;
		}
		if (npages <= 0) {
			ex_result_reject(res, EX_REJ_UNREADABLE, "no pages");
			break;
		}
		stage = 2;
		walk_all(ctx, pdf, &w);
		if (w.reject != NULL) {
			ex_result_reject(res, w.reject, "%s", w.detail);
			break;
		}
		stage = 3;
		for (int i = 0; i < npages; i++)
			read_page(ctx, doc, i, lim, res);
		res->pages = npages;
	}
	fz_always(ctx) {
		fz_drop_document(ctx, doc);
		fz_drop_stream(ctx, stm);
	}
	fz_catch(ctx) {
		static const char *const what[] = {
			"not a readable PDF", "a broken page tree", "broken objects",
			"a page could not be read",
		};
		if (fz_caught(ctx) == FZ_ERROR_MEMORY || cap.hit)
			ex_result_reject(res, EX_REJ_TOO_LARGE,
			    "reading it needs more than %zu MiB", lim->mupdf_bytes >> 20);
		else
			ex_result_reject(res, EX_REJ_UNREADABLE, "%s", what[stage]);
	}
	fz_drop_context(ctx);
	if (res->reject == NULL) {
		res->kind = res->ocr_pages > 0 ? "scan_pdf" : "text_pdf";
		if (res->doc.nlines == 0)
			ex_result_reject(res, EX_REJ_NO_TEXT, "no text on %d pages", npages);
	}
	return 0;
}
