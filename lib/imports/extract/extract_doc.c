/*
 * extract_doc.c: the checks every document passes before a decoder sees
 * it (the declared type against libmagic's, archives inside or after it),
 * the dispatch to the PDF or image reader, and the ex_doc's storage and
 * its lines JSON.
 */
#include <magic.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "imports/extract/extract_doc.h"

static magic_t sniffer;

int
ex_doc_init(void)
{
	if ((sniffer = magic_open(MAGIC_MIME_TYPE | MAGIC_NO_CHECK_COMPRESS |
	    MAGIC_NO_CHECK_ELF)) == NULL || magic_load(sniffer, NULL) != 0) {
		fprintf(stderr, "bds-extract: libmagic: %s\n",
		    sniffer ? magic_error(sniffer) : "out of memory");
		return -1;
	}
	/* Bounds of libmagic's own work on a hostile buffer. */
	size_t bytes = 1 << 20;
	magic_setparam(sniffer, MAGIC_PARAM_BYTES_MAX, &bytes);
	return 0;
}

void
ex_doc_fini(void)
{
	if (sniffer != NULL)
		magic_close(sniffer);
	sniffer = NULL;
	ex_ocr_fini();
}

int
ex_result_reject(struct ex_result *res, const char *code, const char *fmt, ...)
{
	va_list ap;

	res->reject = code;
	va_start(ap, fmt);
	vsnprintf(res->detail, sizeof res->detail, fmt, ap);
	va_end(ap);
	return 0;
}

int
ex_result_page(struct ex_result *res, int number, float w, float h, int ocr)
{
	if (res->doc.npages == res->npagealloc) {
		size_t n = res->npagealloc ? res->npagealloc * 2 : 8;
		struct ex_page *p = realloc(res->pagev, n * sizeof *p);
		if (p == NULL)
			return -1;
		res->pagev = p;
		res->npagealloc = n;
	}
	res->pagev[res->doc.npages++] = (struct ex_page){ number, w, h, ocr };
	res->doc.pages = res->pagev;
	return 0;
}

int
ex_result_line(struct ex_result *res, const char *text, struct ex_box box,
    float conf, int page)
{
	char *t;

	if (res->doc.nlines == res->nlinealloc) {
		size_t n = res->nlinealloc ? res->nlinealloc * 2 : 64;
		struct ex_line *l = realloc(res->linev, n * sizeof *l);
		if (l == NULL)
			return -1;
		res->linev = l;
		res->nlinealloc = n;
	}
	if ((t = strdup(text)) == NULL)
		return -1;
	res->linev[res->doc.nlines++] = (struct ex_line){ t, box, conf, page };
	res->doc.lines = res->linev;
	return 0;
}

void
ex_result_free(struct ex_result *res)
{
	if (res == NULL)
		return;
	for (size_t i = 0; i < res->doc.nlines; i++)
		free((char *)res->linev[i].text);
	free(res->linev);
	free(res->pagev);
	memset(res, 0, sizeof *res);
}

/* Lines ordered top to bottom and, within a row, left to right. */
static int
by_top(const void *a, const void *b)
{
	const struct ex_line *x = a, *y = b;

	return (x->box.y0 > y->box.y0) - (x->box.y0 < y->box.y0);
}

static int
by_left(const void *a, const void *b)
{
	const struct ex_line *x = a, *y = b;

	return (x->box.x0 > y->box.x0) - (x->box.x0 < y->box.x0);
}

void
ex_result_order(struct ex_result *res, size_t first)
{
	struct ex_line *l = res->linev + first;
	size_t n = res->doc.nlines - first, i = 0;

	if (n < 2)
		return;
	qsort(l, n, sizeof *l, by_top);
	while (i < n) {
		/* a row: the lines whose middle lies within the first one's height */
		size_t j = i + 1;
		while (j < n && (l[j].box.y0 + l[j].box.y1) / 2 < l[i].box.y1 &&
		    (l[j].box.y0 + l[j].box.y1) / 2 > l[i].box.y0)
			j++;
		qsort(l + i, j - i, sizeof *l, by_left);
		i = j;
	}
}

static const unsigned char *
find(const unsigned char *hay, size_t n, const void *needle, size_t k)
{
	return k <= n ? memmem(hay, n, needle, k) : NULL;
}

static unsigned
le16(const unsigned char *p)
{
	return p[0] | p[1] << 8;
}

/*
 * A ZIP local file header at p (n bytes left) that a ZIP reader would
 * accept: a sane version, a known method and a file name of printable
 * bytes. The four signature bytes alone turn up by chance in compressed
 * streams; all of this together does not.
 */
static int
zip_local(const unsigned char *p, size_t n)
{
	static const unsigned methods[] = { 0, 1, 6, 8, 9, 12, 14, 93, 95, 98 };
	unsigned version, method, namelen, i;
	int known = 0;

	if (n < 30)
		return 0;
	version = le16(p + 4);
	method = le16(p + 8);
	namelen = le16(p + 26);
	if ((version & 0xff) > 63 || namelen == 0 || namelen > 1024 || 30 + (size_t)namelen > n)
		return 0;
	for (i = 0; i < sizeof methods / sizeof *methods; i++)
		known |= method == methods[i];
	if (!known)
		return 0;
	for (i = 0; i < namelen; i++)
		if (p[30 + i] < 0x20 || p[30 + i] == 0x7f)
			return 0;
	return 1;
}

/*
 * A ZIP end-of-central-directory record that ends the buffer exactly (its
 * comment reaching the last byte): what makes any file a ZIP to a reader
 * that looks from the end.
 */
static int
zip_end(const unsigned char *doc, size_t len)
{
	size_t from = len > 65557 ? len - 65557 : 0;

	for (size_t i = len >= 22 ? len - 22 + 1 : 0; i-- > from; ) {
		const unsigned char *p = doc + i;
		if (memcmp(p, "PK\5\6", 4) == 0 && i + 22 + le16(p + 20) == len)
			return 1;
	}
	return 0;
}

/* Archive signatures long enough never to turn up by chance. */
static const struct {
	const char	*name;
	const char	*sig;
	size_t		 len;
} archives[] = {
	{ "RAR", "Rar!\x1a\x07", 6 },
	{ "7z", "7z\xbc\xaf\x27\x1c", 6 },
	{ "xz", "\xfd" "7zXZ\0", 6 },
	{ "cab", "MSCF\0\0\0\0", 8 },
	{ "bzip2", "1AY&SY", 6 },
};

/*
 * An archive inside the document or after its end: a ZIP a reader would
 * open (a plausible local header anywhere, or a central directory closing
 * the file), another archive's signature anywhere, or, after the last
 * %%EOF of a PDF, anything libmagic names an archive. 1 found (detail
 * set), 0 none.
 */
static int
polyglot(const unsigned char *doc, size_t len, int pdf, struct ex_result *res)
{
	const unsigned char *p = doc, *end = doc + len;

	while ((p = find(p, (size_t)(end - p), "PK\3\4", 4)) != NULL) {
		if (zip_local(p, (size_t)(end - p))) {
			ex_result_reject(res, EX_REJ_POLYGLOT,
			    "a ZIP entry at byte %zu", (size_t)(p - doc));
			return 1;
		}
		p++;
	}
	if (zip_end(doc, len)) {
		ex_result_reject(res, EX_REJ_POLYGLOT, "a ZIP directory ends the file");
		return 1;
	}
	for (size_t i = 0; i < sizeof archives / sizeof *archives; i++)
		if ((p = find(doc, len, archives[i].sig, archives[i].len)) != NULL) {
			ex_result_reject(res, EX_REJ_POLYGLOT, "a %s archive at byte %zu",
			    archives[i].name, (size_t)(p - doc));
			return 1;
		}
	if (pdf) {
		const unsigned char *eof = NULL, *q = doc;
		while ((q = find(q, (size_t)(end - q), "%%EOF", 5)) != NULL)
			eof = q++;
		if (eof != NULL) {
			q = eof + 5;
			while (q < end && (*q == ' ' || *q == '\r' || *q == '\n' ||
			    *q == '\t' || *q == '\f' || *q == '\0'))
				q++;
			if (q < end) {
				const char *t = magic_buffer(sniffer, q, (size_t)(end - q));
				if (t != NULL && strcmp(t, "application/octet-stream") != 0 &&
				    strncmp(t, "text/", 5) != 0) {
					ex_result_reject(res, EX_REJ_POLYGLOT,
					    "%s data after the end of the PDF", t);
					return 1;
				}
			}
		}
	}
	return 0;
}

static const struct {
	const char	*type;
	int		 pdf, png;
} types[] = {
	{ "application/pdf", 1, 0 },
	{ "image/png", 0, 1 },
	{ "image/jpeg", 0, 0 },
};

int
ex_doc_read(const unsigned char *doc, size_t len, const char *type,
    const struct ex_limits *lim, struct ex_result *res)
{
	const char *sniffed;
	size_t i;

	memset(res, 0, sizeof *res);
	for (i = 0; i < sizeof types / sizeof *types; i++)
		if (strcmp(type, types[i].type) == 0)
			break;
	if (i == sizeof types / sizeof *types)
		return ex_result_reject(res, EX_REJ_MISMATCH, "type %s is not read", type);
	if (len == 0)
		return ex_result_reject(res, EX_REJ_UNREADABLE, "an empty document");
	sniffed = magic_buffer(sniffer, doc, len);
	if (sniffed == NULL || strcmp(sniffed, type) != 0)
		return ex_result_reject(res, EX_REJ_MISMATCH, "declared %s, the bytes are %s",
		    type, sniffed ? sniffed : "unknown");
	if (polyglot(doc, len, types[i].pdf, res))
		return 0;
	if (types[i].pdf) {
		/* a PDF ends with %%EOF: without one it was cut short (or is not whole) */
		if (find(doc, len, "%%EOF", 5) == NULL)
			return ex_result_reject(res, EX_REJ_UNREADABLE, "the PDF has no end (truncated)");
		return ex_doc_pdf(doc, len, lim, res);
	}
	return ex_doc_image(doc, len, types[i].png, lim, res);
}

/* v with `places` decimals as written (json-c would print 17 digits). */
static struct json_object *
fixed(double v, int places)
{
	char buf[48];

	snprintf(buf, sizeof buf, "%.*f", places, v);
	return json_object_new_double_s(v, buf);
}

struct json_object *
ex_doc_json(const struct ex_doc *doc)
{
	struct json_object *o = json_object_new_object(), *pages, *lines;

	if (o == NULL)
		return NULL;
	pages = json_object_new_array_ext((int)doc->npages);
	lines = json_object_new_array_ext((int)doc->nlines);
	json_object_object_add(o, "pages", pages);
	json_object_object_add(o, "lines", lines);
	if (pages == NULL || lines == NULL)
		goto oom;
	for (size_t i = 0; i < doc->npages; i++) {
		const struct ex_page *p = &doc->pages[i];
		struct json_object *pj = json_object_new_object();
		if (pj == NULL || json_object_array_add(pages, pj) != 0)
			goto oom;
		json_object_object_add(pj, "number", json_object_new_int(p->number));
		json_object_object_add(pj, "width", fixed(p->width, 2));
		json_object_object_add(pj, "height", fixed(p->height, 2));
		json_object_object_add(pj, "ocr", json_object_new_boolean(p->ocr));
	}
	for (size_t i = 0; i < doc->nlines; i++) {
		const struct ex_line *l = &doc->lines[i];
		struct json_object *lj = json_object_new_object();
		struct json_object *box = json_object_new_array_ext(4);
		if (lj == NULL || json_object_array_add(lines, lj) != 0)
			goto oom;
		json_object_object_add(lj, "text", json_object_new_string(l->text));
		json_object_object_add(lj, "box", box);
		if (box == NULL)
			goto oom;
		json_object_array_add(box, fixed(l->box.x0, 2));
		json_object_array_add(box, fixed(l->box.y0, 2));
		json_object_array_add(box, fixed(l->box.x1, 2));
		json_object_array_add(box, fixed(l->box.y1, 2));
		json_object_object_add(lj, "conf", fixed(l->conf, 3));
		json_object_object_add(lj, "page", json_object_new_int(l->page));
	}
	return o;
oom:
	json_object_put(o);
	return NULL;
}

static int
number(const struct json_object *o, const char *key, double *out)
{
	struct json_object *v;

	if (!json_object_object_get_ex(o, key, &v) ||
	    !(json_object_is_type(v, json_type_double) || json_object_is_type(v, json_type_int)))
		return -1;
	*out = json_object_get_double(v);
	return 0;
}

int
ex_doc_from_json(const struct json_object *j, struct ex_result *res)
{
	struct json_object *pages, *lines, *v;
	double n, w, h, conf, page;

	memset(res, 0, sizeof *res);
	if (!json_object_is_type(j, json_type_object) ||
	    !json_object_object_get_ex(j, "pages", &pages) ||
	    !json_object_object_get_ex(j, "lines", &lines) ||
	    !json_object_is_type(pages, json_type_array) ||
	    !json_object_is_type(lines, json_type_array))
		goto bad;
	for (size_t i = 0; i < json_object_array_length(pages); i++) {
		struct json_object *p = json_object_array_get_idx(pages, i);
		if (number(p, "number", &n) || number(p, "width", &w) || number(p, "height", &h))
			goto bad;
		int ocr = json_object_object_get_ex(p, "ocr", &v) && json_object_get_boolean(v);
		if (ex_result_page(res, (int)n, (float)w, (float)h, ocr) != 0)
			goto bad;
	}
	for (size_t i = 0; i < json_object_array_length(lines); i++) {
		struct json_object *l = json_object_array_get_idx(lines, i), *box, *t;
		struct ex_box b;
		double c[4];
		if (!json_object_object_get_ex(l, "text", &t) ||
		    !json_object_is_type(t, json_type_string) ||
		    !json_object_object_get_ex(l, "box", &box) ||
		    !json_object_is_type(box, json_type_array) ||
		    json_object_array_length(box) != 4 ||
		    number(l, "conf", &conf) || number(l, "page", &page))
			goto bad;
		for (size_t k = 0; k < 4; k++) {
			struct json_object *e = json_object_array_get_idx(box, k);
			if (!json_object_is_type(e, json_type_double) &&
			    !json_object_is_type(e, json_type_int))
				goto bad;
			c[k] = json_object_get_double(e);
		}
		b = (struct ex_box){ (float)c[0], (float)c[1], (float)c[2], (float)c[3] };
		if (ex_result_line(res, json_object_get_string(t), b, (float)conf, (int)page) != 0)
			goto bad;
	}
	return 0;
bad:
	ex_result_free(res);
	snprintf(res->detail, sizeof res->detail,
	    "not a lines document ({\"pages\":[...],\"lines\":[...]})");
	return -1;
}
