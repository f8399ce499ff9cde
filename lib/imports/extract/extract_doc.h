#ifndef BDS_EXTRACT_DOC_H
#define BDS_EXTRACT_DOC_H
/*
 * The document-reading half of extraction (extract.h): a hostile PDF, PNG
 * or JPEG in memory to a struct ex_doc, or a rejection. Linked only into
 * bds-extract and its tests (lib/libbdsextract.a): MuPDF, Tesseract and
 * Leptonica never reach the service's other programs.
 *
 * Every check that can be made from headers is made before anything is
 * decoded: the declared type against libmagic's, archives hidden in or
 * after the document, encryption, active content, the page count, image
 * dimensions, and how far each PDF stream inflates.
 */
#include <stddef.h>

#include "imports/extract/extract.h"

struct json_object;

/* The rejection codes (contract: bds-extract's rejection_reason). */
#define EX_REJ_MISMATCH		"content_type_mismatch"
#define EX_REJ_UNREADABLE	"unreadable_document"
#define EX_REJ_ENCRYPTED	"encrypted_document"
#define EX_REJ_PAGES		"too_many_pages"
#define EX_REJ_PIXELS		"image_too_large"
#define EX_REJ_ACTIVE		"active_content"
#define EX_REJ_POLYGLOT		"polyglot"
#define EX_REJ_TOO_LARGE	"too_large"
#define EX_REJ_NO_TEXT		"no_text"

/* Limits of one read (bds-extract's flags). */
struct ex_limits {
	int		 max_pages;	/* --max-pages, default 50 */
	long long	 max_pixels;	/* --max-pixels per page or image, default 40,000,000 */
	int		 dpi;		/* OCR rendering, default 300 (capped by max_pixels) */
	size_t		 mupdf_bytes;	/* MuPDF's allocator cap */
	size_t		 inflate_bytes;	/* all PDF streams decoded together, at most */
};

#define EX_LIMITS_DEFAULT { 50, 40000000LL, 300, (size_t)768 << 20, (size_t)256 << 20 }

/* The outcome of one read. The lines and their texts (malloc'd) belong to it. */
struct ex_result {
	const char	*reject;	/* NULL: read; else an EX_REJ_ code */
	char		 detail[160];	/* why, never the document's text */
	const char	*kind;		/* text_pdf, scan_pdf or image */
	int		 pages, ocr_pages;
	struct ex_doc	 doc;
	/* storage behind doc */
	struct ex_page	*pagev;
	struct ex_line	*linev;
	size_t		 npagealloc, nlinealloc;
};

/*
 * Set up what must be loaded before the sandbox closes (libmagic's
 * database, Tesseract's model). 0 ok, -1 failure (a message on stderr).
 */
int	 ex_doc_init(void);
void	 ex_doc_fini(void);

/*
 * Read doc (len bytes, declared MIME type `type`) within lim into *res.
 * 0 with res->reject NULL (read) or set (rejected); -1 an internal failure
 * (out of memory outside MuPDF's cap, Tesseract unusable).
 */
int	 ex_doc_read(const unsigned char *doc, size_t len, const char *type,
	    const struct ex_limits *lim, struct ex_result *res);

/* Free what res holds (not res itself); NULL-safe. */
void	 ex_result_free(struct ex_result *res);

/* Storage: append a page or a line (text copied). 0 ok, -1 out of memory. */
int	 ex_result_page(struct ex_result *, int number, float w, float h, int ocr);
int	 ex_result_line(struct ex_result *, const char *text, struct ex_box box,
	    float conf, int page);

/* Order the lines from index first on (one page's): rows top to bottom, a row left to right. */
void	 ex_result_order(struct ex_result *, size_t first);

/* Set res's rejection (detail printf-style). Returns 0. */
int	 ex_result_reject(struct ex_result *, const char *code, const char *fmt, ...)
	    __attribute__((format(printf, 3, 4)));

/*
 * doc as the lines JSON of bds-extract --lines: {"pages":[{number, width,
 * height, ocr}], "lines":[{text, box:[x0,y0,x1,y1], conf, page}]}. A new
 * object, NULL when out of memory.
 */
struct json_object *ex_doc_json(const struct ex_doc *doc);

/*
 * The reverse (bds-extract --from-lines): res's doc from such JSON. 0 ok,
 * -1 not that shape (a message in res->detail).
 */
int	 ex_doc_from_json(const struct json_object *j, struct ex_result *res);

/* Steps of ex_doc_read, one per file (extract_doc_pdf.c, extract_doc_ocr.c). */
int	 ex_doc_pdf(const unsigned char *doc, size_t len, const struct ex_limits *,
	    struct ex_result *);
int	 ex_doc_image(const unsigned char *doc, size_t len, int png,
	    const struct ex_limits *, struct ex_result *);

/*
 * OCR one Leptonica image scanned at dpi onto page `page` (extract_doc_ocr.c):
 * deskewed, its lines in points with their mean word confidence. 0 ok
 * (maybe no line), -1 failure.
 */
struct Pix;
int	 ex_ocr_pix(struct Pix *pix, int dpi, int page, struct ex_result *);
void	 ex_ocr_fini(void);

/*
 * The sandbox bds-extract enters before it reads a byte of the document
 * (extract_doc_sandbox.c): rlimits lowered (never raised) to these, then a
 * seccomp allowlist whose default kills the process: no network, no exec,
 * no new process, no ptrace, files opened read-only. 0 ok, -1 failure.
 */
struct ex_sandbox {
	long		 cpu_seconds;
	size_t		 address_space;	/* 0: leave RLIMIT_AS alone */
	size_t		 file_size;	/* the largest file it may write (its answer) */
	int		 open_files;
};

#define EX_SANDBOX_DEFAULT { 120, (size_t)2048 << 20, (size_t)32 << 20, 32 }

int	 ex_sandbox_enter(const struct ex_sandbox *);

#endif
