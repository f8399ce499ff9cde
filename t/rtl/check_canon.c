/*
 * lib/rtl/rtl_canon.c: onboarding URLs in one canonical form, without any
 * network: scheme, userinfo, IP literals in every numeric form, ports,
 * host case and IDNA, the fragment, path normalisation (dot segments,
 * repeated slashes, escapes), the query; and the registrable domain from
 * the Public Suffix List.
 */
#include <stdio.h>
#include <string.h>

#include <check.h>

#include "core/arena.h"
#include "core/urlsafe.h"
#include "rtl/rtl_canon.h"
#include "tarena.h"
#include "tcheck.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* in -> the canonical URL and its registrable domain (NULL: none). */
static const struct {
	const char *in, *url, *domain;
} valid[] = {
	{ "https://pge.example", "https://pge.example/", "pge.example" },
	{ "https://pge.example/", "https://pge.example/", "pge.example" },
	{ "HTTPS://WWW.PGE.Example/Login", "https://www.pge.example/Login", "pge.example" },
	{ "  https://pge.example/login\t\n", "https://pge.example/login", "pge.example" },
	/* the default port dropped, an empty one too */
	{ "https://pge.example:443/login", "https://pge.example/login", "pge.example" },
	{ "https://pge.example:0443/login", "https://pge.example/login", "pge.example" },
	{ "https://pge.example:/login", "https://pge.example/login", "pge.example" },
	/* the root's trailing dot */
	{ "https://my.pge.example./a", "https://my.pge.example/a", "pge.example" },
	/* the fragment removed, whatever it holds */
	{ "https://pge.example/a#frag", "https://pge.example/a", "pge.example" },
	{ "https://pge.example/a?x=1#f?g/h", "https://pge.example/a?x=1", "pge.example" },
	{ "https://pge.example#", "https://pge.example/", "pge.example" },
	/* dot segments and repeated slashes */
	{ "https://pge.example/a/./b/../c", "https://pge.example/a/c", "pge.example" },
	{ "https://pge.example/a/b/..", "https://pge.example/a/", "pge.example" },
	{ "https://pge.example/a/b/.", "https://pge.example/a/b/", "pge.example" },
	{ "https://pge.example/../../x", "https://pge.example/x", "pge.example" },
	{ "https://pge.example//a///b//", "https://pge.example/a/b/", "pge.example" },
	{ "https://pge.example/./", "https://pge.example/", "pge.example" },
	{ "https://pge.example/a/%2E%2E/b", "https://pge.example/b", "pge.example" },
	/* escapes: unreserved decoded, the rest upper-case, stray '%' and
	 * non-ASCII encoded */
	{ "https://pge.example/%7euser/%61%2f%3a", "https://pge.example/~user/a%2F%3A",
	  "pge.example" },
	{ "https://pge.example/100%/x", "https://pge.example/100%25/x", "pge.example" },
	{ "https://pge.example/caf\xc3\xa9", "https://pge.example/caf%C3%A9", "pge.example" },
	{ "https://pge.example/a\"b<c>", "https://pge.example/a%22b%3Cc%3E", "pge.example" },
	/* the query kept (encoded the same way), an empty one dropped */
	{ "https://pge.example/l?next=/a/../b&x=%7e", "https://pge.example/l?next=/a/../b&x=~",
	  "pge.example" },
	{ "https://pge.example/l?", "https://pge.example/l", "pge.example" },
	{ "https://pge.example?x", "https://pge.example/?x", "pge.example" },
	/* IDNA2008 / UTS #46: A-labels, case folded */
	{ "https://B\xc3\xbc" "cher.Example/", "https://xn--bcher-kva.example/", "xn--bcher-kva.example" },
	{ "https://www.m\xc3\xbcnchen.de", "https://www.xn--mnchen-3ya.de/", "xn--mnchen-3ya.de" },
	{ "https://XN--BCHER-KVA.example", "https://xn--bcher-kva.example/", "xn--bcher-kva.example" },
	/* registrable domains past multi-label suffixes */
	{ "https://login.bills.foo.co.uk/x", "https://login.bills.foo.co.uk/x", "foo.co.uk" },
	{ "https://acme.github.io/", "https://acme.github.io/", "acme.github.io" },
	/* a public suffix itself: canonical, but no registrable domain */
	{ "https://co.uk/", "https://co.uk/", NULL },
	{ "https://localhost/", "https://localhost/", NULL },
};

/* in -> the refusal and its code. */
static const struct {
	const char *in;
	enum rtl_canon_err err;
	const char *code;
} invalid[] = {
	{ "", RTL_CANON_SYNTAX, "invalid_url" },
	{ "   ", RTL_CANON_SYNTAX, "invalid_url" },
	{ "pge.example/login", RTL_CANON_SYNTAX, "invalid_url" },
	{ "ftp://pge.example/", RTL_CANON_SYNTAX, "invalid_url" },
	{ "https:/pge.example/", RTL_CANON_SYNTAX, "invalid_url" },
	{ "javascript:alert(1)", RTL_CANON_SYNTAX, "invalid_url" },
	{ "https://pge.example/a b", RTL_CANON_SYNTAX, "invalid_url" },
	{ "https://pge.example\\@evil.example/", RTL_CANON_SYNTAX, "invalid_url" },
	{ "https://pge.example/\x01", RTL_CANON_SYNTAX, "invalid_url" },
	{ "https:///login", RTL_CANON_SYNTAX, "invalid_url" },
	{ "https://pge.example:abc/", RTL_CANON_SYNTAX, "invalid_url" },
	{ "https://pge.example:443:443/", RTL_CANON_SYNTAX, "invalid_url" },
	/* http */
	{ "http://pge.example/", RTL_CANON_SCHEME, "https_required" },
	{ "HTTP://pge.example/", RTL_CANON_SCHEME, "https_required" },
	/* userinfo */
	{ "https://user@pge.example/", RTL_CANON_USERINFO, "userinfo" },
	{ "https://user:pw@pge.example/", RTL_CANON_USERINFO, "userinfo" },
	{ "https://pge.example@evil.example/", RTL_CANON_USERINFO, "userinfo" },
	{ "https://@pge.example/", RTL_CANON_USERINFO, "userinfo" },
	/* IP literals, every form */
	{ "https://127.0.0.1/", RTL_CANON_IP, "ip_literal" },
	{ "https://8.8.8.8/login", RTL_CANON_IP, "ip_literal" },
	{ "https://2130706433/", RTL_CANON_IP, "ip_literal" },
	{ "https://0x7f000001/", RTL_CANON_IP, "ip_literal" },
	{ "https://0177.0.0.1/", RTL_CANON_IP, "ip_literal" },
	{ "https://127.1/", RTL_CANON_IP, "ip_literal" },
	{ "https://10.0.0.1./", RTL_CANON_IP, "ip_literal" },
	{ "https://1.2.3.999/", RTL_CANON_IP, "ip_literal" },
	{ "https://pge.123/", RTL_CANON_IP, "ip_literal" },
	{ "https://[::1]/", RTL_CANON_IP, "ip_literal" },
	{ "https://[2001:db8::1]:443/", RTL_CANON_IP, "ip_literal" },
	{ "https://[::ffff:127.0.0.1]/", RTL_CANON_IP, "ip_literal" },
	{ "https://\xef\xbc\x91\xef\xbc\x92\xef\xbc\x97.0.0.1/", RTL_CANON_IP, "ip_literal" },
	/* ports other than 443 */
	{ "https://pge.example:8443/", RTL_CANON_PORT, "port_not_allowed" },
	{ "https://pge.example:80/", RTL_CANON_PORT, "port_not_allowed" },
	{ "https://pge.example:65535/", RTL_CANON_PORT, "port_not_allowed" },
	{ "https://pge.example:99999/", RTL_CANON_PORT, "port_not_allowed" },
	{ "https://pge.example:123456/", RTL_CANON_SYNTAX, "invalid_url" },
	/* hosts that are no domain name */
	{ "https://pge_bills.example/", RTL_CANON_HOST, "invalid_host" },
	{ "https://pge..example/", RTL_CANON_HOST, "invalid_host" },
	{ "https://-pge.example/", RTL_CANON_HOST, "invalid_host" },
	{ "https://pge%2eexample/", RTL_CANON_HOST, "invalid_host" },
	{ "https://xn--zz.example/", RTL_CANON_HOST, "invalid_host" },
	{ "https://.example/", RTL_CANON_HOST, "invalid_host" },
	{ "https://pge.example../", RTL_CANON_HOST, "invalid_host" },
};

START_TEST(test_valid)
{
	struct rtl_canon c;
	const char *code = "x", *why = "x";
	enum rtl_canon_err e = rtl_canon_url(&a, valid[_i].in, &c, &code, &why);

	ck_assert_msg(e == RTL_CANON_OK, "%s: refused (%s: %s)", valid[_i].in, code, why);
	ck_assert_str_eq(c.url, valid[_i].url);
	if (valid[_i].domain == NULL)
		ck_assert_msg(c.domain == NULL, "%s: domain %s", valid[_i].in, c.domain);
	else
		ck_assert_str_eq(c.domain, valid[_i].domain);
	ck_assert_ptr_null(code);
	ck_assert_ptr_null(why);
	/* the canonical form is a fixed point */
	{
		struct rtl_canon again;

		ck_assert_int_eq(rtl_canon_url(&a, c.url, &again, &code, &why), RTL_CANON_OK);
		ck_assert_str_eq(again.url, c.url);
	}
}
END_TEST

START_TEST(test_invalid)
{
	struct rtl_canon c;
	const char *code = NULL, *why = NULL;
	enum rtl_canon_err e = rtl_canon_url(&a, invalid[_i].in, &c, &code, &why);

	ck_assert_msg(e == invalid[_i].err, "%s: got %d (%s), want %d", invalid[_i].in, e,
	    code ? code : "-", invalid[_i].err);
	ck_assert_str_eq(code, invalid[_i].code);
	ck_assert_msg(why != NULL && why[0] != '\0', "%s: no message", invalid[_i].in);
	ck_assert_ptr_null(c.url);
}
END_TEST

/* A URL of the largest accepted size passes; one byte more is refused, and
 * so is an input whose encoded form grows past the limit. */
START_TEST(test_limits)
{
	char big[RTL_CANON_URL_MAX + 2];
	struct rtl_canon c;
	const char *code, *why;
	size_t n = strlen("https://pge.example/");

	memcpy(big, "https://pge.example/", n);
	memset(big + n, 'a', RTL_CANON_URL_MAX - n);
	big[RTL_CANON_URL_MAX] = '\0';
	ck_assert_int_eq(rtl_canon_url(&a, big, &c, &code, &why), RTL_CANON_OK);
	big[RTL_CANON_URL_MAX] = 'a';
	big[RTL_CANON_URL_MAX + 1] = '\0';
	ck_assert_int_eq(rtl_canon_url(&a, big, &c, &code, &why), RTL_CANON_SYNTAX);
	memset(big + n, '"', RTL_CANON_URL_MAX - n);	/* each becomes %22 */
	big[RTL_CANON_URL_MAX] = '\0';
	ck_assert_int_eq(rtl_canon_url(&a, big, &c, &code, &why), RTL_CANON_SYNTAX);
	ck_assert_int_eq(rtl_canon_url(&a, NULL, &c, &code, &why), RTL_CANON_SYNTAX);
}
END_TEST

/*
 * Generated URLs (a fixed seed, so a failure repeats): pieces that make
 * hosts, ports, paths, escapes, dots and fragments collide. Whatever is
 * accepted is a fixed point, and core/urlsafe's parser (what the DNS check
 * runs) takes it and reads the same host, port 443 and no userinfo.
 */
START_TEST(test_generated)
{
	static const char *const pieces[] = { "https://", "HTTPS://", "a", "B", "0", "9", ".",
	    "..", "/", "//", "./", "../", "%", "%2e", "%2F", "%41", "%zz", "?", "#", ":", ":443",
	    ":8", "@", "-", "_", "~", "[", "]", "x.example", "\xc3\xbc", "\xef\xbc\x8e", "\"",
	    "<", "{", "|", "'", "=", "&" };
	unsigned long long seed = 0x9e3779b97f4a7c15ULL;
	int accepted = 0;

	for (int n = 0; n < 20000; n++) {
		char in[256] = "https://";
		struct rtl_canon c, again;
		struct urlsafe_url u;
		const char *code, *why;
		int k;

		seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
		k = 1 + (int)((seed >> 33) % 12);
		for (int i = 0; i < k; i++) {
			seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
			strncat(in, pieces[(seed >> 33) % N(pieces)], sizeof(in) - strlen(in) - 1);
		}
		if (rtl_canon_url(&a, in, &c, &code, &why) != RTL_CANON_OK) {
			ck_assert_msg(code != NULL && why != NULL, "%s: no reason", in);
			continue;
		}
		accepted++;
		ck_assert_msg(rtl_canon_url(&a, c.url, &again, &code, &why) == RTL_CANON_OK &&
		    strcmp(again.url, c.url) == 0, "%s -> %s -> %s", in, c.url, again.url);
		ck_assert_msg(urlsafe_parse(&a, c.url, &u, &why) == URLSAFE_OK, "%s -> %s: %s",
		    in, c.url, why);
		ck_assert_str_eq(u.host, c.host);
		ck_assert_int_eq(u.port, 443);
		ck_assert_int_eq(u.ip, 0);
		arena_reset(&a);
	}
	ck_assert_msg(accepted > 500, "only %d accepted", accepted);
}
END_TEST

START_TEST(test_domain)
{
	ck_assert_str_eq(rtl_canon_domain(&a, "a.b.pge.example"), "pge.example");
	ck_assert_str_eq(rtl_canon_domain(&a, "www.bbc.co.uk"), "bbc.co.uk");
	ck_assert_ptr_null(rtl_canon_domain(&a, "example"));
	ck_assert_ptr_null(rtl_canon_domain(&a, ""));
	ck_assert_ptr_null(rtl_canon_domain(&a, NULL));
}
END_TEST

/* UTS #39 single script per label: the scripts mixed, or NULL. */
static const struct {
	const char	*host, *mixed, *label;
} scripts[] = {
	{ "www.pge.example", NULL, NULL },
	{ "a1-b.example", NULL, NULL },
	{ "www.xn--bcher-strom-thb.example", NULL, NULL },	/* bücher: Latin */
	{ "xn--hxargifdar.example", NULL, NULL },		/* all Greek */
	{ "xn--d1acpjx3f.example", NULL, NULL },		/* all Cyrillic */
	{ "xn--wgv71a119e.example", NULL, NULL },		/* all Han */
	{ "xn--pple-43d.example", "Latin+Cyrillic", "\xd0\xb0pple" },	/* Cyrillic a */
	{ "login.xn--pypal-4ve.example", "Latin+Cyrillic", "p\xd0\xb0ypal" },
	{ "xn--pple-zld.example", "Latin+Greek", "\xce\xb1pple" },	/* Greek alpha */
	{ "xn--l-7sba6dbr.example", "Latin+Cyrillic", NULL },	/* mostly Cyrillic */
	{ "xn--a-jn6bt1b.example", "Latin+Other", NULL },	/* Han with a Latin a */
};

START_TEST(test_mixed_script)
{
	const char *label, *got = rtl_canon_mixed_script(&a, scripts[_i].host, &label);

	if (scripts[_i].mixed == NULL) {
		ck_assert_msg(got == NULL, "%s: %s", scripts[_i].host, got);
		ck_assert_ptr_null(label);
		return;
	}
	ck_assert_msg(got != NULL, "%s: not flagged", scripts[_i].host);
	ck_assert_str_eq(got, scripts[_i].mixed);
	ck_assert_ptr_nonnull(label);
	if (scripts[_i].label != NULL)
		ck_assert_str_eq(label, scripts[_i].label);
}
END_TEST

static Suite *
canon_suite(void)
{
	Suite *s = suite_create("rtl_canon");
	TCase *tc = tcase_create("canon");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_loop_test(tc, test_valid, 0, N(valid));
	tcase_add_loop_test(tc, test_invalid, 0, N(invalid));
	tcase_add_test(tc, test_limits);
	tcase_add_test(tc, test_generated);
	tcase_add_test(tc, test_domain);
	tcase_add_loop_test(tc, test_mixed_script, 0, N(scripts));
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tcheck_run(canon_suite());
}
