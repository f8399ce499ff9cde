/*
 * lib/billers/billers_csv.c: the RFC 4180 reader (quotes, doubled quotes,
 * commas and line breaks inside quotes, CRLF, line numbers) and its
 * refusals of hostile input (unterminated quote, stray quote, NUL, too many
 * fields, an endless record); the header check; the row check over every
 * column, each refusal naming its column.
 */
#include <stdio.h>
#include <string.h>

#include <check.h>

#include "billers/billers_csv.h"
#include "core/arena.h"
#include "tarena.h"
#include "tcheck.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* Input, and the records it holds as fields joined by '#' and ended by
 * ';' with the line each starts on. */
static const struct {
	const char *in;
	size_t len;	/* 0: strlen */
	const char *want;
} valid[] = {
	{ "a,b,c\n", 0, "1:a#b#c;" },
	{ "a,b,c", 0, "1:a#b#c;" },
	{ "a,b\r\nc,d\r\n", 0, "1:a#b;2:c#d;" },
	{ "\"a,b\",c\n", 0, "1:a,b#c;" },
	{ "\"say \"\"hi\"\"\",x\n", 0, "1:say \"hi\"#x;" },
	{ "\"two\nlines\",x\nnext,y\n", 0, "1:two\nlines#x;3:next#y;" },
	{ "a,,c\n", 0, "1:a##c;" },
	{ ",\n", 0, "1:#;" },
	{ "\"\",\"\"\n", 0, "1:#;" },
	{ "\n\na\n\n\nb\n", 0, "3:a;6:b;" },
	{ "É,Île-de-France\n", 0, "1:É#Île-de-France;" },
	{ "", 0, "" },
};

static void
read_all(const char *in, size_t len, char *got, size_t cap)
{
	struct billers_csv c;
	char **f;
	size_t n;
	const char *err = NULL;
	int rc;

	got[0] = '\0';
	billers_csv_init(&c, in, len);
	while ((rc = billers_csv_next(&c, &a, &f, &n, &err)) == 1) {
		size_t l = strlen(got);

		snprintf(got + l, cap - l, "%zu:", c.rec_line);
		for (size_t i = 0; i < n; i++) {
			l = strlen(got);
			snprintf(got + l, cap - l, "%s%s", i ? "#" : "", f[i]);
		}
		l = strlen(got);
		snprintf(got + l, cap - l, ";");
	}
	ck_assert_msg(rc == 0, "refused %s: %s", in, err);
}

START_TEST(reads_valid)
{
	char got[512];
	size_t len = valid[_i].len ? valid[_i].len : strlen(valid[_i].in);

	read_all(valid[_i].in, len, got, sizeof(got));
	ck_assert_str_eq(got, valid[_i].want);
}
END_TEST

static const struct {
	const char *in;
	size_t len;
	size_t line;	/* where the bad record starts */
} invalid[] = {
	{ "a,\"open\n", 0, 1 },
	{ "ok\n\"never closed,b\nmore\n", 0, 2 },
	{ "a\"b,c\n", 0, 1 },
	{ "\"a\"b,c\n", 0, 1 },
	{ "a,b\rc\n", 0, 1 },
	{ "a,b\0c\n", 6, 1 },
	{ "\"a\0\",c\n", 7, 1 },
	{ "x\n,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,\n", 0, 2 },
};

START_TEST(refuses_invalid)
{
	struct billers_csv c;
	char **f;
	size_t n, len = invalid[_i].len ? invalid[_i].len : strlen(invalid[_i].in);
	const char *err = NULL;
	int rc;

	billers_csv_init(&c, invalid[_i].in, len);
	while ((rc = billers_csv_next(&c, &a, &f, &n, &err)) == 1)
		;
	ck_assert_int_eq(rc, -1);
	ck_assert_ptr_nonnull(err);
	ck_assert_uint_eq(c.rec_line, invalid[_i].line);
}
END_TEST

/* A record longer than the cap, quoted or not, is refused, not read. */
START_TEST(refuses_endless_record)
{
	size_t len = BILLERS_CSV_MAX_RECORD * 4;
	char *buf = arena_alloc(&a, len + 1);
	struct billers_csv c;
	char **f;
	size_t n;
	const char *err = NULL;

	for (int quoted = 0; quoted <= 1; quoted++) {
		memset(buf, 'x', len);
		buf[0] = quoted ? '"' : 'x';
		buf[len] = '\0';
		billers_csv_init(&c, buf, len);
		ck_assert_int_eq(billers_csv_next(&c, &a, &f, &n, &err), -1);
		ck_assert_str_eq(err, "record too long");
	}
}
END_TEST

static const char *const header =
    "id,name,type,status,domains,website,login_url,logo_url,country,"
    "connectivity_types,consent_scopes,capabilities,connector,base_url\n";

START_TEST(header_checked)
{
	struct billers_csv c;
	char **f;
	size_t n;
	const char *err;
	const char *bad[] = {
		"id,name\n",
		"id,name,type,status,domains,website,login_url,logo_url,country,"
		"connectivity_types,consent_scopes,capabilities,base_url,connector\n",
		"id,name,type,status,domains,website,login_url,logo_url,country,"
		"connectivity_types,consent_scopes,capabilities,connector,base_url,extra\n",
	};

	billers_csv_init(&c, header, strlen(header));
	ck_assert_int_eq(billers_csv_next(&c, &a, &f, &n, &err), 1);
	ck_assert_int_eq(billers_csv_header_ok(f, n), 1);
	for (size_t i = 0; i < N(bad); i++) {
		billers_csv_init(&c, bad[i], strlen(bad[i]));
		ck_assert_int_eq(billers_csv_next(&c, &a, &f, &n, &err), 1);
		ck_assert_int_eq(billers_csv_header_ok(f, n), 0);
	}
}
END_TEST

#define GOOD_ID "blr_01900000-0000-7000-8000-000000000001"
/* A good row; each bad case replaces one column. */
static const char *const good[BC__MAX] = {
	GOOD_ID, "Pacific Gas & Électricité, Inc.", "electric", "ACTIVE",
	"pge.example|mail.pge.example", "https://pge.example", "https://pge.example/login",
	"", "US", "credentials|oauth", "bills|statements|usage", "bills|mfa", "portal",
	"https://pge.example/bpp/v1"
};

static char **
row(const char *const *src)
{
	char **f = arena_alloc(&a, sizeof(*f) * BC__MAX);

	for (int i = 0; i < BC__MAX; i++)
		f[i] = arena_strdup(&a, src[i]);
	return f;
}

START_TEST(row_good)
{
	char **f = row(good);
	const char *field = NULL, *msg = NULL;

	ck_assert_int_eq(billers_csv_row_check(&a, f, BC__MAX, &field, &msg), 0);
	ck_assert_str_eq(f[BC_DOMAINS], "{pge.example,mail.pge.example}");
	ck_assert_str_eq(f[BC_CONSENTS], "{bills,statements,usage}");
	ck_assert_ptr_null(f[BC_LOGO_URL]);
	f = row(good);
	f[BC_DOMAINS] = "";
	f[BC_CONNECTOR] = "sandbox";
	f[BC_BASE_URL] = "";
	ck_assert_int_eq(billers_csv_row_check(&a, f, BC__MAX, &field, &msg), 0);
	ck_assert_str_eq(f[BC_DOMAINS], "{}");
	/* a portal biller that is UNSUPPORTED (never connected) needs no
	 * base_url; bad_rows has the ACTIVE one without */
	f = row(good);
	f[BC_STATUS] = "UNSUPPORTED";
	f[BC_BASE_URL] = "";
	ck_assert_int_eq(billers_csv_row_check(&a, f, BC__MAX, &field, &msg), 0);
	ck_assert_ptr_null(f[BC_BASE_URL]);
}
END_TEST

static const struct {
	enum billers_csv_col col;
	const char *value;
} bad_rows[] = {
	{ BC_ID, "biller_01900000-0000-7000-8000-000000000001" },
	{ BC_ID, "blr_0190000-0000-7000-8000-000000000001" },
	{ BC_ID, "" },
	{ BC_NAME, "" },
	{ BC_NAME, " padded" },
	{ BC_NAME, "tab\there" },
	{ BC_NAME, "\xc3\x28" },
	{ BC_TYPE, "Electric" },
	{ BC_TYPE, "power" },
	{ BC_STATUS, "active" },
	{ BC_DOMAINS, "PGE.example" },
	{ BC_DOMAINS, "pge" },
	{ BC_DOMAINS, "pge.example|" },
	{ BC_DOMAINS, "pge.example||x.example" },
	{ BC_DOMAINS, "pge.example|pge.example" },
	{ BC_DOMAINS, "-pge.example" },
	{ BC_DOMAINS, "pge.example,x.example" },
	{ BC_DOMAINS, "pge_x.example" },
	{ BC_WEBSITE, "http://pge.example" },
	{ BC_LOGIN_URL, "pge.example/login" },
	{ BC_LOGO_URL, "ftp://pge.example/logo.png" },
	{ BC_COUNTRY, "usa" },
	{ BC_COUNTRY, "us" },
	{ BC_CONNECTIVITY, "password" },
	{ BC_CONSENTS, "bills|everything" },
	{ BC_CAPABILITIES, "bills|teleport" },
	{ BC_CONNECTOR, "scraper" },
	{ BC_BASE_URL, "" },
	{ BC_BASE_URL, "http://pge.example/bpp/v1" },
};

START_TEST(row_bad)
{
	char **f = row(good);
	const char *field = NULL, *msg = NULL;

	f[bad_rows[_i].col] = arena_strdup(&a, bad_rows[_i].value);
	ck_assert_int_eq(billers_csv_row_check(&a, f, BC__MAX, &field, &msg), -1);
	ck_assert_str_eq(field, billers_csv_header[bad_rows[_i].col]);
	ck_assert_ptr_nonnull(msg);
}
END_TEST

START_TEST(row_wrong_width)
{
	char **f = row(good);
	const char *field = NULL, *msg = NULL;

	ck_assert_int_eq(billers_csv_row_check(&a, f, BC__MAX - 1, &field, &msg), -1);
	ck_assert_str_eq(field, "base_url");
	ck_assert_int_eq(billers_csv_row_check(&a, f, 3, &field, &msg), -1);
	ck_assert_str_eq(field, "status");
}
END_TEST

static const struct { const char *host; int ok; } hosts[] = {
	{ "pge.example", 1 }, { "e.mail.pge.example", 1 }, { "a-b.c1.example", 1 },
	{ "example", 0 }, { ".pge.example", 0 }, { "pge.example.", 0 }, { "pge..example", 0 },
	{ "pge-.example", 0 }, { "Pge.example", 0 }, { "pge.exam ple", 0 }, { "", 0 },
};

START_TEST(host_names)
{
	ck_assert_int_eq(billers_host_ok(hosts[_i].host), hosts[_i].ok);
}
END_TEST

static Suite *
csv_suite(void)
{
	Suite *s = suite_create("billers_csv");
	TCase *tc = tcase_create("reader");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_loop_test(tc, reads_valid, 0, N(valid));
	tcase_add_loop_test(tc, refuses_invalid, 0, N(invalid));
	tcase_add_test(tc, refuses_endless_record);
	tcase_add_test(tc, header_checked);
	suite_add_tcase(s, tc);

	tc = tcase_create("rows");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, row_good);
	tcase_add_loop_test(tc, row_bad, 0, N(bad_rows));
	tcase_add_test(tc, row_wrong_width);
	tcase_add_loop_test(tc, host_names, 0, N(hosts));
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tcheck_run(csv_suite());
}
