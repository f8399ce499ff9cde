/*
 * lib/billers/billers_logos.c: what a logo may be, read from its bytes by
 * libmagic and never from a name or a Content-Type: PNG, JPEG, WebP and SVG
 * under the size cap; an SVG that scripts, declares entities or embeds
 * content, an HTML page, a PDF, nothing at all and too much are refused.
 */
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "billers/billers_logos.h"
#include "tcheck.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))
#define PNG_SIG	"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\1\0\0\0\1\x08\x02\0\0\0\x90wS\xde"
#define SVG_OPEN "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 8 8\">"

static const struct {
	const char	*bytes;
	size_t		 len;	/* 0: strlen */
	const char	*ext;	/* NULL: refused */
} cases[] = {
	{ PNG_SIG, sizeof(PNG_SIG) - 1, "png" },
	{ "\xff\xd8\xff\xe0\0\x10JFIF\0\1\1\0\0\1\0\1\0\0", 20, "jpg" },
	{ "RIFF\x1a\0\0\0WEBPVP8L\x0d\0\0\0\x2f\0\0\0\x10\x07\x10\x11\x11\x88\x88\xfe\x07\0", 34,
	  "webp" },
	{ SVG_OPEN "<rect width=\"8\" height=\"8\" fill=\"#123\"/></svg>\n", 0, "svg" },
	{ "<?xml version=\"1.0\"?>\n" SVG_OPEN "<circle r=\"4\"/></svg>\n", 0, "svg" },
	{ SVG_OPEN "<script>alert(1)</script></svg>\n", 0, NULL },
	{ SVG_OPEN "<SCRIPT>alert(1)</SCRIPT></svg>\n", 0, NULL },
	{ SVG_OPEN "<foreignObject><p>x</p></foreignObject></svg>\n", 0, NULL },
	{ SVG_OPEN "<a href=\"javascript:alert(1)\"><rect/></a></svg>\n", 0, NULL },
	{ "<?xml version=\"1.0\"?>\n<!DOCTYPE svg [<!ENTITY x \"y\">]>\n" SVG_OPEN "</svg>\n", 0,
	  NULL },
	{ "<!DOCTYPE html><html><body><script>alert(1)</script></body></html>\n", 0, NULL },
	{ "%PDF-1.4\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<<>>\nendobj\n", 0, NULL },
	{ "GIF89a\1\0\1\0\0\0\0;", 13, NULL },
	{ "just some text\n", 0, NULL },
	{ "", 0, NULL },
};

START_TEST(types)
{
	const char *why = NULL, *ext;
	size_t len = cases[_i].len ? cases[_i].len : strlen(cases[_i].bytes);

	ext = billers_logo_type((const unsigned char *)cases[_i].bytes, len, &why);
	if (cases[_i].ext == NULL)
		ck_assert_msg(ext == NULL && why != NULL, "case %d: taken as %s", _i, ext);
	else
		ck_assert_msg(ext != NULL && strcmp(ext, cases[_i].ext) == 0,
		    "case %d: %s, want %s (%s)", _i, ext, cases[_i].ext, why);
}
END_TEST

/* The cap: a PNG of exactly the cap is one, a byte more is not. */
START_TEST(size_cap)
{
	unsigned char *b = calloc(1, BILLERS_LOGO_MAX + 1);
	const char *why = NULL;

	ck_assert_ptr_nonnull(b);
	memcpy(b, PNG_SIG, sizeof(PNG_SIG) - 1);
	ck_assert_pstr_eq(billers_logo_type(b, BILLERS_LOGO_MAX, &why), "png");
	ck_assert_ptr_null(billers_logo_type(b, BILLERS_LOGO_MAX + 1, &why));
	ck_assert_ptr_nonnull(strstr(why, "size cap"));
	free(b);
}
END_TEST

static Suite *
logos_suite(void)
{
	Suite *s = suite_create("billers_logos");
	TCase *tc = tcase_create("types");

	tcase_add_loop_test(tc, types, 0, N(cases));
	tcase_add_test(tc, size_cap);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tcheck_run(logos_suite());
}
