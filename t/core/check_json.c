/*
 * json_parse: the strict body parser every request goes through; the
 * compacting copy a response makes of PostgreSQL's JSON text; the entity
 * order.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/arena.h"
#include "core/json.h"
#include "tcheck.h"

struct jcase {
	const char	*in;
	size_t		 len;		/* 0: strlen(in) */
	const char	*out;		/* canonical dump when valid */
};

#define S(x) x, sizeof(x) - 1

static const struct jcase valid[] = {
	{ S("{}"), "{}" },
	{ S("  {\"a\":1}\r\n\t "), "{\"a\":1}" },
	{ S("[1,2,3]"), "[1,2,3]" },
	{ S("\"h\xc3\xa9\""), "\"h\xc3\xa9\"" },
	{ S("{\"u\":\"\\u00e9\"}"), "{\"u\":\"\xc3\xa9\"}" },
	{ S("{\"url\":\"https://x/y\"}"), "{\"url\":\"https://x/y\"}" },
	{ S("0"), "0" },
	{ S("null"), "null" },
	/* the same key in different objects, and key-like values, are fine */
	{ S("{\"a\":{\"a\":1},\"b\":[{\"a\":1},{\"a\":2}]}"),
	    "{\"a\":{\"a\":1},\"b\":[{\"a\":1},{\"a\":2}]}" },
	{ S("{\"a\":\"a\",\"b\":\"a\"}"), "{\"a\":\"a\",\"b\":\"a\"}" },
	{ S("{\"a\\\"\":1,\"a\":2}"), "{\"a\\\"\":1,\"a\":2}" },
	{ S("{\"x\":\"{\\\"a\\\":1,\\\"a\\\":2}\"}"),
	    "{\"x\":\"{\\\"a\\\":1,\\\"a\\\":2}\"}" },
	{ S("[{\"k\":1},{\"k\":2}]"), "[{\"k\":1},{\"k\":2}]" },
};

/* A key twice in one object, at any depth: refused, naming the key. */
static const struct {
	const char	*in;
	const char	*why;
} dups[] = {
	{ "{\"a\":1,\"a\":2}", "duplicate key \"a\"" },
	{ "{\"a\":1,\"a\":1}", "duplicate key \"a\"" },
	{ "{\"x\":{\"b\":1,\"c\":[],\"b\":{}}}", "duplicate key \"b\"" },
	{ "[{\"k\":1},{\"k\":1,\"k\":2}]", "duplicate key \"k\"" },
	{ "{\"a\":{\"z\":1,\"y\":[1,{\"a\":1}]},\"a\":2}", "duplicate key \"a\"" },
	{ "{\"amount\":1,\"\\u0061mount\":2}", "duplicate key \"amount\"" },
	{ "{\"\":1,\"\":2}", "duplicate key \"\"" },
	{ "{\"q\\\"\":1, \"q\\\"\" : 2}", "duplicate key \"q\"\"" },
	{ "{\"caf\u00e9\":1,\"caf\xc3\xa9\":2}", "duplicate key \"caf\xc3\xa9\"" },
};

static const char *const invalid[] = {
	"{", "{bad", "{\"a\":1,}", "{'a':1}", "[1 2]", "{}x", "{} {}", "// c\n{}",
	"\xc0\xaf", "{\"a\":\"\xc0\x9f\"}", "{\"\xc0\xaf\":1}", "\"\xed\xa0\x80\"",
	"\"\xff\"", "", "   ",
};

START_TEST(test_valid)
{
	struct arena a;
	const char *why = "unset";
	struct json_object *o;

	arena_init(&a);
	o = json_parse(&a, valid[_i].in, valid[_i].len, &why);
	ck_assert_msg(o != NULL || strcmp(valid[_i].out, "null") == 0,
	    "case %d rejected: %s", _i, why ? why : "");
	ck_assert_ptr_null(why);
	ck_assert_str_eq(o ? json_dump(&a, o, NULL) : "null", valid[_i].out);
	arena_free(&a);
}
END_TEST

START_TEST(test_invalid)
{
	struct arena a;
	const char *why = NULL;

	arena_init(&a);
	ck_assert_ptr_null(json_parse(&a, invalid[_i], strlen(invalid[_i]), &why));
	ck_assert_ptr_nonnull(why);
	arena_free(&a);
}
END_TEST

START_TEST(test_duplicate)
{
	struct arena a;
	const char *why = NULL;

	arena_init(&a);
	ck_assert_ptr_null(json_parse(&a, dups[_i].in, strlen(dups[_i].in), &why));
	ck_assert_ptr_nonnull(why);
	ck_assert_str_eq(why, dups[_i].why);
	arena_free(&a);
}
END_TEST

/* Many distinct keys pass; a long duplicate key is named in 64 bytes. */
START_TEST(test_duplicate_many)
{
	struct arena a;
	const char *why = NULL;
	char *body, *p;
	size_t n = 5000;

	arena_init(&a);
	p = body = arena_alloc(&a, n * 16 + 300);
	*p++ = '{';
	for (size_t i = 0; i < n; i++)
		p += sprintf(p, "%s\"k%zu\":%zu", i ? "," : "", i, i);
	strcpy(p, "}");
	ck_assert_ptr_nonnull(json_parse(&a, body, strlen(body), &why));
	ck_assert_ptr_null(why);
	/* the same with k4999 once more, then a 100-byte key twice */
	p[0] = '\0';
	strcpy(p, ",\"k4999\":1}");
	ck_assert_ptr_null(json_parse(&a, body, strlen(body), &why));
	ck_assert_str_eq(why, "duplicate key \"k4999\"");
	ck_assert_ptr_null(json_parse(&a, "{\"" "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
	    "\":1,\"" "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
	    "\":2}", 211, &why));
	ck_assert_str_eq(why, "duplicate key \""
	    "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\"");
	arena_free(&a);
}
END_TEST

/* Bytes after the value: a NUL is not whitespace. */
START_TEST(test_trailing_nul)
{
	static const char *const bodies[] = { "0", "{}", "[1]" };
	struct arena a;
	const char *why = NULL;
	char buf[8];

	arena_init(&a);
	for (size_t i = 0; i < sizeof(bodies) / sizeof(bodies[0]); i++) {
		size_t n = strlen(bodies[i]);

		memcpy(buf, bodies[i], n);
		buf[n] = '\0';
		ck_assert_ptr_null(json_parse(&a, buf, n + 1, &why));
	}
	arena_free(&a);
}
END_TEST

START_TEST(test_depth)
{
	struct arena a;
	const char *why = NULL;
	char deep[2 * (JSON_MAX_DEPTH + 2) + 1], ok[2 * (JSON_MAX_DEPTH - 1) + 1];
	size_t d = JSON_MAX_DEPTH + 2;

	memset(deep, '[', d);
	memset(deep + d, ']', d);
	deep[2 * d] = '\0';
	memset(ok, '[', JSON_MAX_DEPTH - 1);
	memset(ok + JSON_MAX_DEPTH - 1, ']', JSON_MAX_DEPTH - 1);
	ok[2 * (JSON_MAX_DEPTH - 1)] = '\0';
	arena_init(&a);
	ck_assert_ptr_null(json_parse(&a, deep, strlen(deep), &why));
	ck_assert_ptr_nonnull(json_parse(&a, ok, strlen(ok), &why));
	arena_free(&a);
}
END_TEST

START_TEST(test_getters)
{
	struct arena a;
	const char *why;
	struct json_object *o;

	arena_init(&a);
	o = json_parse(&a, S("{\"s\":\"x\",\"i\":7,\"b\":true,\"n\":null}"), &why);
	ck_assert_ptr_nonnull(o);
	ck_assert_str_eq(json_get_str(o, "s"), "x");
	ck_assert_ptr_null(json_get_str(o, "i"));
	ck_assert_ptr_null(json_get_str(o, "n"));
	ck_assert_int_eq(json_get_int(o, "i", -1), 7);
	ck_assert_int_eq(json_get_int(o, "s", -1), -1);
	ck_assert_int_eq(json_get_bool(o, "b", 0), 1);
	ck_assert_int_eq(json_get_bool(o, "missing", 0), 0);
	json_set_str(o, "t", NULL);
	ck_assert_str_eq(json_dump(&a, o, NULL),
	    "{\"s\":\"x\",\"i\":7,\"b\":true,\"n\":null,\"t\":null}");
	arena_free(&a);
}
END_TEST

/* json_canonical: one text per meaning. */
static const struct {
	const char	*in;
	const char	*out;
} canon[] = {
	{ "{}", "{}" },
	{ " { \"b\" : 1 ,\n \"a\" : [ 2 , {\"d\":null,\"c\":true} ] } ",
	  "{\"a\":[2,{\"c\":true,\"d\":null}],\"b\":1}" },
	{ "{\"a\":{\"z\":\"x\",\"y\":\"\\u00e9\"}}", "{\"a\":{\"y\":\"\xc3\xa9\",\"z\":\"x\"}}" },
	{ "{\"u\":\"https:\\/\\/x\"}", "{\"u\":\"https://x\"}" },
	{ "{\"B\":1,\"a\":2,\"\xc3\xa9\":3,\"\":4}", "{\"\":4,\"B\":1,\"a\":2,\"\xc3\xa9\":3}" },
	{ "[1.50,-0,10]", "[1.5,0,10]" },
	/* integers past INT64_MAX keep their own text: two bodies, two texts */
	{ "[9223372036854775807,18446744073709551615,-9223372036854775808]",
	  "[9223372036854775807,18446744073709551615,-9223372036854775808]" },
	{ "\"q\\\"\"", "\"q\\\"\"" },
};

START_TEST(test_canonical)
{
	struct arena a;
	const char *why;
	struct json_object *o;
	size_t n;

	arena_init(&a);
	o = json_parse(&a, canon[_i].in, strlen(canon[_i].in), &why);
	ck_assert_ptr_nonnull(o);
	ck_assert_str_eq(json_canonical(&a, o, &n), canon[_i].out);
	ck_assert_uint_eq(n, strlen(canon[_i].out));
	ck_assert_str_eq(json_canonical(&a, NULL, NULL), "null");
	arena_free(&a);
}
END_TEST

/* PostgreSQL's spellings in, the API's out; strings kept byte for byte. */
static const struct {
	const char	*in;
	size_t		 len;
	const char	*out;
	int		 valid;		/* in is JSON: out parses to the same value */
} compact[] = {
	/* json_build_object::text, jsonb::text, json_agg */
	{ S("{\"a\" : 1, \"b\" : [1, 2]}"), "{\"a\":1,\"b\":[1,2]}", 1 },
	{ S("{\"a\": 1, \"b\": {\"c\": [true, null, -1.5e3]}}"),
	    "{\"a\":1,\"b\":{\"c\":[true,null,-1.5e3]}}", 1 },
	{ S("[{\"a\":1}, \n {\"a\":2}]"), "[{\"a\":1},{\"a\":2}]", 1 },
	{ S(" \t\r\n{ } \n"), "{}", 1 },
	{ S("{}"), "{}", 1 },
	/* spaces, commas and colons inside strings are the string's */
	{ S("{\"s\" : \"a b  c , d : e\", \"k y\": \" \"}"),
	    "{\"s\":\"a b  c , d : e\",\"k y\":\" \"}", 1 },
	/* escaped quotes do not end a string; an escaped backslash does not
	 * escape the quote after it */
	{ S("{\"q\": \"say \\\"hi, there\\\" : ok\", \"b\": \"x\\\\\" , \"c\": \"\\\\\\\" \"}"),
	    "{\"q\":\"say \\\"hi, there\\\" : ok\",\"b\":\"x\\\\\",\"c\":\"\\\\\\\" \"}", 1 },
	{ S("[\"\\n \\t \\/ \\u0020\"]"), "[\"\\n \\t \\/ \\u0020\"]", 1 },
	/* UTF-8 and \u escapes untouched */
	{ S("{\"\xc3\xa9\" : \"h\\u00e9 \xc3\xbc \xf0\x9f\x98\x80\"}"),
	    "{\"\xc3\xa9\":\"h\\u00e9 \xc3\xbc \xf0\x9f\x98\x80\"}", 1 },
	{ S("{\"\": \"\", \"e\": [ ]}"), "{\"\":\"\",\"e\":[]}", 1 },
	/* nested */
	{ S("{\"a\": [{\"b\": [[1, [2, {\"c\": \"d e\"}]]]}], \"z\": {\"y\": {}}}"),
	    "{\"a\":[{\"b\":[[1,[2,{\"c\":\"d e\"}]]]}],\"z\":{\"y\":{}}}", 1 },
	{ S("\"just a string\""), "\"just a string\"", 1 },
	{ S(" 12 "), "12", 1 },
	/* not JSON: the same rule, nothing read past the end */
	{ S(""), "", 0 },
	{ S(" \n "), "", 0 },
	{ S("{\"a\" : \"b c"), "{\"a\":\"b c", 0 },
	{ S("[\"ab\\"), "[\"ab\\", 0 },
	{ S("\""), "\"", 0 },
	{ S("{a : b}"), "{a:b}", 0 },
	{ S("{\"a\":1} }"), "{\"a\":1}}", 0 },
};

START_TEST(test_compact)
{
	struct arena a;
	size_t len = compact[_i].len, n;
	char *in = malloc(len ? len : 1), *out = malloc(len ? len : 1);
	struct json_object *o, *want;
	const char *why, *text;

	/* exact-size buffers, no NUL: a read or write past len is ASan's */
	memcpy(in, compact[_i].in, len);
	n = json_compact(out, in, len);
	ck_assert_uint_eq(n, strlen(compact[_i].out));
	ck_assert(memcmp(out, compact[_i].out, n) == 0);
	/* compact text stays as it is */
	ck_assert_uint_eq(json_compact(out, out, n), n);
	ck_assert(memcmp(out, compact[_i].out, n) == 0);
	/* in place */
	ck_assert_uint_eq(json_compact(in, in, len), n);
	ck_assert(memcmp(in, compact[_i].out, n) == 0);
	arena_init(&a);
	/* as a response sends it */
	o = json_raw_compact(&a, compact[_i].in, len);
	text = json_text(o, &n);
	ck_assert_str_eq(text, compact[_i].out);
	if (compact[_i].valid) {
		want = json_parse(&a, compact[_i].in, len, &why);
		o = json_parse(&a, compact[_i].out, strlen(compact[_i].out), &why);
		ck_assert_ptr_nonnull(o);
		ck_assert_str_eq(json_canonical(&a, o, NULL), json_canonical(&a, want, NULL));
	}
	arena_free(&a);
	free(in);
	free(out);
}
END_TEST

/* "id" and "object" first, the rest in their order; nothing else changes. */
static const struct {
	const char	*in;
	const char	*out;
} order[] = {
	{ "{\"id\":\"b_1\",\"usage\":null,\"amount\":1,\"object\":\"bill\",\"status\":\"x\"}",
	  "{\"id\":\"b_1\",\"object\":\"bill\",\"usage\":null,\"amount\":1,\"status\":\"x\"}" },
	{ "{\"amount\":1,\"object\":\"bill\",\"id\":\"b_1\"}",
	  "{\"id\":\"b_1\",\"object\":\"bill\",\"amount\":1}" },
	{ "{\"id\":\"b_1\",\"object\":\"bill\",\"a\":{\"x\":1,\"id\":2}}",
	  "{\"id\":\"b_1\",\"object\":\"bill\",\"a\":{\"x\":1,\"id\":2}}" },
	{ "{\"name\":\"n\",\"id\":\"cli_1\"}", "{\"id\":\"cli_1\",\"name\":\"n\"}" },
	{ "{\"type\":\"t\",\"object\":\"list\"}", "{\"object\":\"list\",\"type\":\"t\"}" },
	{ "{\"a\":1}", "{\"a\":1}" },
	{ "{}", "{}" },
	{ "[{\"object\":\"x\",\"id\":1}]", "[{\"object\":\"x\",\"id\":1}]" },
	{ "\"s\"", "\"s\"" },
};

START_TEST(test_entity_order)
{
	struct arena a;
	struct json_object *o, *n;
	const char *why;

	arena_init(&a);
	o = json_parse(&a, order[_i].in, strlen(order[_i].in), &why);
	ck_assert_ptr_nonnull(o);
	n = json_own(&a, json_entity_order(o));
	ck_assert_str_eq(json_dump(&a, n, NULL), order[_i].out);
	/* o itself is not changed */
	ck_assert_str_eq(json_dump(&a, o, NULL), order[_i].in);
	ck_assert_ptr_null(json_entity_order(NULL));
	arena_free(&a);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("json");
	TCase *tc = tcase_create("parse");

	tcase_add_loop_test(tc, test_valid, 0, sizeof(valid) / sizeof(valid[0]));
	tcase_add_loop_test(tc, test_invalid, 0, sizeof(invalid) / sizeof(invalid[0]));
	tcase_add_loop_test(tc, test_duplicate, 0, sizeof(dups) / sizeof(dups[0]));
	tcase_add_test(tc, test_duplicate_many);
	tcase_add_test(tc, test_trailing_nul);
	tcase_add_test(tc, test_depth);
	tcase_add_test(tc, test_getters);
	tcase_add_loop_test(tc, test_canonical, 0, sizeof(canon) / sizeof(canon[0]));
	suite_add_tcase(s, tc);
	tc = tcase_create("compact");
	tcase_add_loop_test(tc, test_compact, 0, sizeof(compact) / sizeof(compact[0]));
	tcase_add_loop_test(tc, test_entity_order, 0, sizeof(order) / sizeof(order[0]));
	suite_add_tcase(s, tc);
	return tcheck_run(s);
}
