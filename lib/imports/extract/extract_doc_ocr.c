/*
 * extract_doc_ocr.c: PNG and JPEG documents, and Tesseract for them and
 * for the PDF pages without a text layer. An image's dimensions are read
 * from its header (PNG IHDR, JPEG SOF) and checked before Leptonica
 * decodes anything; a JPEG with bad data is refused, not guessed at.
 */
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <leptonica/allheaders.h>
#include <tesseract/capi.h>

#include "imports/extract/extract_doc.h"

/* One Tesseract for the process, made on first use (eng, automatic layout). */
static TessBaseAPI *tess;

static TessBaseAPI *
tess_get(void)
{
	if (tess != NULL)
		return tess;
	if ((tess = TessBaseAPICreate()) == NULL)
		return NULL;
	if (TessBaseAPIInit3(tess, NULL, "eng") != 0) {
		TessBaseAPIDelete(tess);
		tess = NULL;
		return NULL;
	}
	TessBaseAPISetPageSegMode(tess, PSM_AUTO);
	/* bills are dark on light: no second pass over inverted lines (a third of the time) */
	TessBaseAPISetVariable(tess, "tessedit_do_invert", "0");
	return tess;
}

void
ex_ocr_fini(void)
{
	if (tess != NULL) {
		TessBaseAPIEnd(tess);
		TessBaseAPIDelete(tess);
	}
	tess = NULL;
}

static uint32_t
be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* A PNG's width and height from its IHDR (the first chunk). 0 ok, -1 none. */
static int
png_size(const unsigned char *d, size_t n, long long *w, long long *h)
{
	if (n < 33 || memcmp(d, "\x89PNG\r\n\x1a\n", 8) != 0 || be32(d + 8) != 13 ||
	    memcmp(d + 12, "IHDR", 4) != 0)
		return -1;
	*w = be32(d + 16);
	*h = be32(d + 20);
	return 0;
}

/*
 * A JPEG's width and height from its first frame header (SOF0..SOF15 but
 * DHT, JPG and DAC), walking the marker segments from SOI; none before the
 * scan starts is a broken JPEG. 0 ok, -1 none.
 */
static int
jpeg_size(const unsigned char *d, size_t n, long long *w, long long *h)
{
	size_t i = 2;

	if (n < 4 || d[0] != 0xff || d[1] != 0xd8)
		return -1;
	while (i + 4 <= n) {
		unsigned m, len;
		if (d[i] != 0xff)
			return -1;
		m = d[i + 1];
		if (m == 0xff) {		/* fill byte */
			i++;
			continue;
		}
		if (m == 0x01 || (m >= 0xd0 && m <= 0xd7)) {	/* no length */
			i += 2;
			continue;
		}
		if (m == 0xd9 || m == 0xda)	/* EOI or SOS before a frame */
			return -1;
		len = (unsigned)d[i + 2] << 8 | d[i + 3];
		if (len < 2 || i + 2 + len > n)
			return -1;
		if (m >= 0xc0 && m <= 0xcf && m != 0xc4 && m != 0xc8 && m != 0xcc) {
			if (len < 7)
				return -1;
			*h = (long long)d[i + 5] << 8 | d[i + 6];
			*w = (long long)d[i + 7] << 8 | d[i + 8];
			return 0;
		}
		i += 2 + len;
	}
	return -1;
}

int
ex_doc_image(const unsigned char *doc, size_t len, int png, const struct ex_limits *lim,
    struct ex_result *res)
{
	long long w = 0, h = 0;
	PIX *pix = NULL;
	int dpi, rc = -1;

	if ((png ? png_size(doc, len, &w, &h) : jpeg_size(doc, len, &w, &h)) != 0)
		return ex_result_reject(res, EX_REJ_UNREADABLE, "no %s header",
		    png ? "PNG" : "JPEG");
	if (w <= 0 || h <= 0)
		return ex_result_reject(res, EX_REJ_UNREADABLE, "an image of no pixels");
	if (w * h > lim->max_pixels)
		return ex_result_reject(res, EX_REJ_PIXELS, "%lld x %lld pixels, at most %lld",
		    w, h, lim->max_pixels);
	if (png)
		pix = pixReadMemPng(doc, len);
	else {
		l_int32 warnings = 0;
		/* hint 0: bad data fails (not L_JPEG_CONTINUE_WITH_BAD_DATA) */
		pix = pixReadMemJpeg(doc, len, 0, 1, &warnings, 0);
		if (pix != NULL && warnings > 0)
			pixDestroy(&pix);
	}
	if (pix == NULL || pixGetWidth(pix) != w || pixGetHeight(pix) != h) {
		pixDestroy(&pix);
		return ex_result_reject(res, EX_REJ_UNREADABLE, "the %s data is broken",
		    png ? "PNG" : "JPEG");
	}
	dpi = pixGetXRes(pix);
	if (dpi < 50 || dpi > 1200)
		dpi = 300;
	if (ex_ocr_pix(pix, dpi, 1, res) != 0)
		goto out;
	if (ex_result_page(res, 1, (float)(w * 72.0 / dpi), (float)(h * 72.0 / dpi), 1) != 0)
		goto out;
	res->kind = "image";
	res->pages = res->ocr_pages = 1;
	if (res->doc.nlines == 0)
		ex_result_reject(res, EX_REJ_NO_TEXT, "no text in the image");
	rc = 0;
out:
	pixDestroy(&pix);
	return rc;
}

/*
 * Words are gathered into segments: a text line as Tesseract finds it,
 * cut where the gap between two words is wider than OCR_GAP times the
 * smaller word's height. Tesseract runs a line across a page's columns
 * (a payee beside an "Account number" label); the text layer keeps them
 * apart, and so does this.
 */
#define OCR_GAP	2.0

struct seg {
	char	 text[4096];
	size_t	 n;
	double	 conf;
	int	 words;
	int	 box[4];	/* pixels: the union of its words' boxes */
};

/* Append the segment (its words' text and mean confidence) and empty it. */
static int
flush(struct seg *g, double k, int page, struct ex_result *res)
{
	int rc = 0;

	int signal = 0;

	/* specks read as lone punctuation carry nothing: a segment needs a letter or digit */
	for (size_t i = 0; i < g->n && !signal; i++)
		signal = isalnum((unsigned char)g->text[i]) || (unsigned char)g->text[i] >= 0x80;
	if (g->words > 0 && g->n > 0 && signal) {
		struct ex_box b = { (float)(g->box[0] * k), (float)(g->box[1] * k),
		    (float)(g->box[2] * k), (float)(g->box[3] * k) };
		g->text[g->n] = '\0';
		rc = ex_result_line(res, g->text, b, (float)(g->conf / g->words / 100.0), page);
	}
	g->n = 0;
	g->words = 0;
	g->conf = 0;
	return rc;
}

/* Add a word (its box in pixels) to g. */
static void
add_word(struct seg *g, const char *word, const int wb[4], double conf)
{
	size_t wl = strlen(word);

	if (wl == 0 || g->n + wl + 2 >= sizeof g->text)
		return;
	if (g->words == 0)
		memcpy(g->box, wb, sizeof g->box);
	else {
		g->text[g->n++] = ' ';
		g->box[0] = wb[0] < g->box[0] ? wb[0] : g->box[0];
		g->box[1] = wb[1] < g->box[1] ? wb[1] : g->box[1];
		g->box[2] = wb[2] > g->box[2] ? wb[2] : g->box[2];
		g->box[3] = wb[3] > g->box[3] ? wb[3] : g->box[3];
	}
	memcpy(g->text + g->n, word, wl);
	g->n += wl;
	g->conf += conf;
	g->words++;
}

int
ex_ocr_pix(struct Pix *pix, int dpi, int page, struct ex_result *res)
{
	TessBaseAPI *api = tess_get();
	TessResultIterator *ri = NULL;
	PIX *gray = NULL, *straight = NULL;
	l_float32 angle = 0, conf = 0;
	static struct seg g;
	int last[4] = { 0 }, rc = -1;
	const size_t first = res->doc.nlines;
	double k = 72.0 / dpi;

	if (api == NULL)
		return -1;
	/* deskew on a grey copy (any depth in; 8 bits is what both like) */
	gray = pixGetDepth(pix) == 8 && pixGetColormap(pix) == NULL ? pixClone(pix)
	    : pixConvertTo8(pix, 0);
	if (gray == NULL)
		goto out;
	straight = pixFindSkewAndDeskew(gray, 2, &angle, &conf);
	if (straight == NULL)
		straight = pixClone(gray);
	pixSetResolution(straight, dpi, dpi);
	TessBaseAPISetImage2(api, straight);
	TessBaseAPISetSourceResolution(api, dpi);
	if (TessBaseAPIRecognize(api, NULL) != 0)
		goto out;
	if ((ri = TessBaseAPIGetIterator(api)) == NULL) {
		rc = 0;		/* nothing found */
		goto out;
	}
	TessPageIterator *pi = TessResultIteratorGetPageIterator(ri);
	do {
		char *word;
		int wb[4], h;
		if (!TessPageIteratorBoundingBox(pi, RIL_WORD, &wb[0], &wb[1], &wb[2], &wb[3]) ||
		    (word = TessResultIteratorGetUTF8Text(ri, RIL_WORD)) == NULL)
			continue;
		/* the smaller of the two words' heights */
		h = wb[3] - wb[1];
		if (g.words > 0 && last[3] - last[1] < h)
			h = last[3] - last[1];
		if (TessPageIteratorIsAtBeginningOf(pi, RIL_TEXTLINE) ||
		    (g.words > 0 && wb[0] - last[2] > OCR_GAP * h)) {
			if (flush(&g, k, page, res) != 0) {
				TessDeleteText(word);
				goto out;
			}
		}
		add_word(&g, word, wb, TessResultIteratorConfidence(ri, RIL_WORD));
		memcpy(last, wb, sizeof last);
		TessDeleteText(word);
	} while (TessResultIteratorNext(ri, RIL_WORD));
	if (flush(&g, k, page, res) != 0)
		goto out;
	ex_result_order(res, first);
	rc = 0;
out:
	TessResultIteratorDelete(ri);
	TessBaseAPIClear(api);
	pixDestroy(&straight);
	pixDestroy(&gray);
	return rc;
}
