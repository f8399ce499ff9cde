/*
 * lib/validate.c: bodies and query strings against field specs. Each
 * table row gives the input and either the exact output object or the
 * exact list of errors as "field:code,field:code".
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <json-c/json.h>

#include "core/arena.h"
#include "core/crypto.h"
#include "core/http.h"
#include "core/validate.h"
#include "tcheck.h"

#define VEND		{ .name = NULL }
#define N(x)		((int)(sizeof(x) / sizeof((x)[0])))
#define JSON_FLAGS	(JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE)

static struct arena	 a;
static struct verrs	 errs;

static void
setup(void)
{
	arena_init(&a);
	memset(&errs, 0, sizeof(errs));
}

static void
teardown(void)
{
	arena_free(&a);
}

static void
put_cb(void *o)
{
	json_object_put(o);
}

/* ---- custom checks ---- */

static int	 reserved_calls;

/* Normalise: lower-case the string (the new value is arena-owned). */
static int
chk_lower(struct arena *ar, struct json_object **v, const char **code,
    const char **msg)
{
	struct json_object	*o;
	char			*s, *p;

	s = arena_strdup(ar, json_object_get_string(*v));
	for (p = s; *p != '\0'; p++)
		*p = (char)tolower((unsigned char)*p);
	o = json_object_new_string(s);
	arena_defer(ar, put_cb, o);
	*v = o;
	return 0;
}

/* Reject one value with a custom code. */
static int
chk_not_reserved(struct arena *ar, struct json_object **v, const char **code,
    const char **msg)
{
	reserved_calls++;
	if (strcmp(json_object_get_string(*v), "admin") == 0) {
		*code = "reserved";
		*msg = "is reserved";
		return -1;
	}
	return 0;
}

/* Refuse without saying why. */
static int
chk_bare_fail(struct arena *ar, struct json_object **v, const char **code,
    const char **msg)
{
	return -1;
}

/* Replace an object by one of its own members. */
static int
chk_unwrap(struct arena *ar, struct json_object **v, const char **code,
    const char **msg)
{
	struct json_object	*c;

	if (!json_object_object_get_ex(*v, "v", &c)) {
		*code = "missing_v";
		*msg = arena_printf(ar, "needs %s", "v");
		return -1;
	}
	*v = c;
	return 0;
}

/* Cross-field check on a validated object. */
static int
chk_range(struct arena *ar, struct json_object **v, const char **code,
    const char **msg)
{
	struct json_object	*from, *to;

	json_object_object_get_ex(*v, "from", &from);
	json_object_object_get_ex(*v, "to", &to);
	if (json_object_get_int64(from) > json_object_get_int64(to)) {
		*code = "invalid_range";
		*msg = "from must not exceed to";
		return -1;
	}
	return 0;
}

/* ---- specs ---- */

static const char *const envs[] =
    { "sandbox", "development", "production", NULL };
static const char *const evtypes[] =
    { "bill.created", "bill.updated", "link.updated", NULL };
static const char *const modes[] = { "read", "write", NULL };
static const char *const statuses[] = { "open", "paid", "overdue", NULL };

static const struct vfield types_spec[] = {
	{ .name = "s", .type = VT_STRING },
	{ .name = "i", .type = VT_INT },
	{ .name = "n", .type = VT_NUMBER },
	{ .name = "b", .type = VT_BOOL },
	{ .name = "o", .type = VT_OBJECT },
	{ .name = "a", .type = VT_ARRAY, .items = VT_STRING },
	{ .name = "any", .type = VT_ANY },
	VEND
};

static const struct vfield req_spec[] = {
	{ .name = "id", .type = VT_STRING, .flags = V_REQUIRED },
	{ .name = "note", .type = VT_STRING, .flags = V_NULLABLE },
	{ .name = "must", .type = VT_INT, .flags = V_REQUIRED | V_NULLABLE },
	VEND
};

static const struct vfield bounds_spec[] = {
	{ .name = "name", .type = VT_STRING, .min = 2, .max = 5 },
	{ .name = "exact", .type = VT_STRING, .min = 3, .max = 3 },
	{ .name = "qty", .type = VT_INT, .min = 1, .max = 100 },
	{ .name = "neg", .type = VT_INT, .min = -10, .max = -1 },
	{ .name = "pct", .type = VT_NUMBER, .min = 0, .max = 1 },
	{ .name = "tags", .type = VT_ARRAY, .items = VT_STRING, .min = 1, .max = 3 },
	/* min == max == 0: no bounds. */
	{ .name = "zero", .type = VT_INT },
	/* min > max: not applied, per validate.h; only the string cap. */
	{ .name = "minonly", .type = VT_STRING, .min = 5 },
	{ .name = "atleast", .type = VT_INT, .min = 1 },
	{ .name = "s", .type = VT_STRING },
	{ .name = "a", .type = VT_ARRAY, .items = VT_STRING },
	VEND
};

static const struct vfield enum_spec[] = {
	{ .name = "env", .type = VT_STRING, .enumv = envs },
	{ .name = "events", .type = VT_ARRAY, .items = VT_STRING, .enumv = evtypes },
	VEND
};

static const struct vfield format_spec[] = {
	{ .name = "email", .type = VT_STRING, .format = VF_EMAIL },
	{ .name = "hook", .type = VT_STRING, .format = VF_HTTPS_URL },
	{ .name = "day", .type = VT_STRING, .format = VF_DATE },
	{ .name = "cur", .type = VT_STRING, .format = VF_CURRENCY },
	{ .name = "amt", .type = VT_STRING, .format = VF_MONEY },
	{ .name = "ids", .type = VT_ARRAY, .items = VT_STRING, .format = VF_UUID },
	VEND
};

static const struct vfield update_fields[] = {
	{ .name = "link_id", .type = VT_STRING, .flags = V_REQUIRED,
	  .format = VF_UUID },
	{ .name = "mode", .type = VT_STRING, .enumv = modes },
	VEND
};

static const struct vfield range_fields[] = {
	{ .name = "from", .type = VT_INT, .flags = V_REQUIRED },
	{ .name = "to", .type = VT_INT, .flags = V_REQUIRED },
	VEND
};

static const struct vfield nested_spec[] = {
	{ .name = "update", .type = VT_OBJECT, .fields = update_fields },
	{ .name = "range", .type = VT_OBJECT, .fields = range_fields,
	  .check = chk_range },
	{ .name = "meta", .type = VT_OBJECT },		/* any members */
	VEND
};

static const struct vfield event_fields[] = {
	{ .name = "type", .type = VT_STRING, .flags = V_REQUIRED },
	{ .name = "amount", .type = VT_INT, .min = 0, .max = 1000 },
	VEND
};

static const struct vfield objarr_spec[] = {
	{ .name = "events", .type = VT_ARRAY, .items = VT_OBJECT,
	  .fields = event_fields, .min = 1, .max = 3 },
	{ .name = "matrix", .type = VT_ARRAY, .items = VT_ARRAY },
	VEND
};

static const struct vfield alias_spec[] = {
	{ .name = "clientName", .alias = "client_name", .type = VT_STRING,
	  .flags = V_REQUIRED, .min = 1, .max = 64 },
	{ .name = "redirectUris", .alias = "redirect_uris", .type = VT_ARRAY,
	  .items = VT_STRING, .format = VF_HTTPS_URL },
	VEND
};

static const struct vfield check_spec[] = {
	{ .name = "email", .type = VT_STRING, .format = VF_EMAIL,
	  .check = chk_lower },
	{ .name = "username", .type = VT_STRING, .min = 1, .max = 32,
	  .check = chk_not_reserved },
	{ .name = "tags", .type = VT_ARRAY, .items = VT_STRING,
	  .check = chk_lower },
	{ .name = "wrap", .type = VT_OBJECT, .check = chk_unwrap },
	{ .name = "never", .type = VT_STRING, .flags = V_NULLABLE,
	  .check = chk_bare_fail },
	VEND
};

static const struct vfield empty_spec[] = { VEND };

/* ---- helpers ---- */

static const char *
errs_str(void)
{
	char	*s = arena_strdup(&a, "");
	size_t	 i;

	for (i = 0; i < errs.n; i++)
		s = arena_printf(&a, "%s%s%s:%s", s, i > 0 ? "," : "",
		    errs.v[i].field, errs.v[i].code);
	return s;
}

struct bcase {
	const struct vfield	*spec;
	const char		*in;	/* JSON text; NULL: no body */
	const char		*want;	/* output, or errors */
};

/*
 * Validate, then drop the input before reading the output: the output
 * must hold its own references.
 */
static int
run_body(const struct bcase *c, struct json_object **out)
{
	struct json_object	*in = NULL;
	int			 rc;

	if (c->in != NULL) {
		in = json_tokener_parse(c->in);
		ck_assert_msg(in != NULL, "bad test JSON: %s", c->in);
	}
	rc = validate_body(&a, c->spec, in, out, &errs);
	json_object_put(in);
	return rc;
}

/* ---- body: valid ---- */

static const struct bcase body_valid[] = {
	/* every type */
	{ types_spec, "{\"s\":\"x\",\"i\":5,\"n\":1.5,\"b\":true,\"o\":{\"k\":[1]},"
	  "\"a\":[\"x\",\"y\"],\"any\":[1,{\"z\":null}]}",
	  "{\"s\":\"x\",\"i\":5,\"n\":1.5,\"b\":true,\"o\":{\"k\":[1]},"
	  "\"a\":[\"x\",\"y\"],\"any\":[1,{\"z\":null}]}" },
	{ types_spec, "{\"any\":\"q\",\"s\":\"\"}", "{\"s\":\"\",\"any\":\"q\"}" },
	{ types_spec, "{}", "{}" },
	{ types_spec, NULL, "{}" },
	{ types_spec, "{\"n\":-3}", "{\"n\":-3}" },
	{ types_spec, "{\"n\":2.5e3}", "{\"n\":2.5e3}" },
	{ types_spec, "{\"b\":false}", "{\"b\":false}" },
	{ types_spec, "{\"any\":null}", "{\"any\":null}" },
	{ types_spec, "{\"a\":[]}", "{\"a\":[]}" },
	{ types_spec, "{\"i\":9223372036854775807}", "{\"i\":9223372036854775807}" },
	{ types_spec, "{\"i\":-9223372036854775808}",
	  "{\"i\":-9223372036854775808}" },
	{ types_spec, "{\"s\":\"\\u00e9\\u65e5\"}", "{\"s\":\"\xc3\xa9\xe6\x97\xa5\"}" },
	{ empty_spec, "{}", "{}" },
	{ NULL, NULL, "{}" },
	/* required and nullable */
	{ req_spec, "{\"id\":\"a\",\"must\":null}", "{\"id\":\"a\",\"must\":null}" },
	{ req_spec, "{\"must\":1,\"note\":null,\"id\":\"a\"}",
	  "{\"id\":\"a\",\"note\":null,\"must\":1}" },
	{ req_spec, "{\"id\":\"a\",\"note\":\"n\",\"must\":0}",
	  "{\"id\":\"a\",\"note\":\"n\",\"must\":0}" },
	/* bounds; lengths in code points */
	{ bounds_spec, "{\"name\":\"ab\"}", "{\"name\":\"ab\"}" },
	{ bounds_spec, "{\"name\":\"h\\u00e9llo\"}", "{\"name\":\"h\xc3\xa9llo\"}" },
	{ bounds_spec, "{\"name\":\"\\u65e5\\u672c\"}",
	  "{\"name\":\"\xe6\x97\xa5\xe6\x9c\xac\"}" },
	{ bounds_spec, "{\"exact\":\"abc\"}", "{\"exact\":\"abc\"}" },
	{ bounds_spec, "{\"qty\":1,\"neg\":-10}", "{\"qty\":1,\"neg\":-10}" },
	{ bounds_spec, "{\"qty\":100,\"neg\":-1}", "{\"qty\":100,\"neg\":-1}" },
	{ bounds_spec, "{\"pct\":0}", "{\"pct\":0}" },
	{ bounds_spec, "{\"pct\":1}", "{\"pct\":1}" },
	{ bounds_spec, "{\"pct\":0.5}", "{\"pct\":0.5}" },
	{ bounds_spec, "{\"tags\":[\"a\"]}", "{\"tags\":[\"a\"]}" },
	{ bounds_spec, "{\"tags\":[\"a\",\"b\",\"c\"]}",
	  "{\"tags\":[\"a\",\"b\",\"c\"]}" },
	{ bounds_spec, "{\"zero\":-99999}", "{\"zero\":-99999}" },
	/* min alone is a lower bound ({.min = 5} means "at least 5") */
	{ bounds_spec, "{\"minonly\":\"abcde\"}", "{\"minonly\":\"abcde\"}" },
	{ bounds_spec, "{\"atleast\":1}", "{\"atleast\":1}" },
	{ bounds_spec, "{\"atleast\":9000000000}", "{\"atleast\":9000000000}" },
	/* enums */
	{ enum_spec, "{\"env\":\"sandbox\"}", "{\"env\":\"sandbox\"}" },
	{ enum_spec, "{\"env\":\"production\"}", "{\"env\":\"production\"}" },
	{ enum_spec, "{\"events\":[\"bill.created\",\"link.updated\"]}",
	  "{\"events\":[\"bill.created\",\"link.updated\"]}" },
	{ enum_spec, "{\"events\":[]}", "{\"events\":[]}" },
	/* formats */
	{ format_spec, "{\"email\":\"a@b.co\",\"hook\":\"https://x.io/h\","
	  "\"day\":\"2024-02-29\",\"cur\":\"USD\","
	  "\"ids\":[\"0190a5b2-7c3e-7def-8abc-0123456789ab\"]}",
	  "{\"email\":\"a@b.co\",\"hook\":\"https://x.io/h\","
	  "\"day\":\"2024-02-29\",\"cur\":\"USD\","
	  "\"ids\":[\"0190a5b2-7c3e-7def-8abc-0123456789ab\"]}" },
	/* nested objects */
	{ nested_spec, "{\"update\":{\"mode\":\"read\","
	  "\"link_id\":\"0190a5b2-7c3e-7def-8abc-0123456789ab\"}}",
	  "{\"update\":{\"link_id\":\"0190a5b2-7c3e-7def-8abc-0123456789ab\","
	  "\"mode\":\"read\"}}" },
	{ nested_spec, "{\"range\":{\"to\":5,\"from\":1}}",
	  "{\"range\":{\"from\":1,\"to\":5}}" },
	{ nested_spec, "{\"range\":{\"to\":5,\"from\":5}}",
	  "{\"range\":{\"from\":5,\"to\":5}}" },
	{ nested_spec, "{\"meta\":{\"anything\":[1,2],\"x\":null}}",
	  "{\"meta\":{\"anything\":[1,2],\"x\":null}}" },
	/* arrays of objects and of arrays */
	{ objarr_spec, "{\"events\":[{\"type\":\"a\"},{\"amount\":5,\"type\":\"b\"}]}",
	  "{\"events\":[{\"type\":\"a\"},{\"type\":\"b\",\"amount\":5}]}" },
	{ objarr_spec, "{\"matrix\":[[1,\"x\"],[]]}", "{\"matrix\":[[1,\"x\"],[]]}" },
	/* aliases land under the canonical name */
	{ alias_spec, "{\"client_name\":\"x\"}", "{\"clientName\":\"x\"}" },
	{ alias_spec, "{\"clientName\":\"x\"}", "{\"clientName\":\"x\"}" },
	{ alias_spec, "{\"redirect_uris\":[\"https://a.com/cb\"],\"client_name\":\"x\"}",
	  "{\"clientName\":\"x\",\"redirectUris\":[\"https://a.com/cb\"]}" },
	/* custom checks */
	{ check_spec, "{\"email\":\"Ann@Example.COM\"}", "{\"email\":\"ann@example.com\"}" },
	{ check_spec, "{\"username\":\"bob\"}", "{\"username\":\"bob\"}" },
	{ check_spec, "{\"tags\":[\"A\",\"bC\"]}", "{\"tags\":[\"a\",\"bc\"]}" },
	{ check_spec, "{\"wrap\":{\"v\":\"inner\"}}", "{\"wrap\":\"inner\"}" },
	{ check_spec, "{\"never\":null}", "{\"never\":null}" },
};

START_TEST(body_valid_table)
{
	struct json_object	*out = NULL;
	int			 rc;

	rc = run_body(&body_valid[_i], &out);
	ck_assert_msg(rc == 0, "row %d: %s", _i, errs_str());
	ck_assert_uint_eq(errs.n, 0);
	ck_assert_ptr_nonnull(out);
	ck_assert_str_eq(json_object_to_json_string_ext(out, JSON_FLAGS),
	    body_valid[_i].want);
}
END_TEST

/* ---- body: invalid ---- */

static const struct bcase body_invalid[] = {
	/* types */
	{ types_spec, "{\"s\":1}", "s:invalid_type" },
	{ types_spec, "{\"s\":null}", "s:invalid_type" },
	{ types_spec, "{\"s\":[\"x\"]}", "s:invalid_type" },
	{ types_spec, "{\"i\":\"1\"}", "i:invalid_type" },
	{ types_spec, "{\"i\":1.5}", "i:invalid_type" },
	{ types_spec, "{\"i\":true}", "i:invalid_type" },
	{ types_spec, "{\"n\":\"1\"}", "n:invalid_type" },
	{ types_spec, "{\"n\":null}", "n:invalid_type" },
	{ types_spec, "{\"b\":1}", "b:invalid_type" },
	{ types_spec, "{\"b\":\"true\"}", "b:invalid_type" },
	{ types_spec, "{\"o\":[]}", "o:invalid_type" },
	{ types_spec, "{\"o\":\"x\"}", "o:invalid_type" },
	{ types_spec, "{\"a\":{}}", "a:invalid_type" },
	{ types_spec, "{\"a\":\"x\"}", "a:invalid_type" },
	{ types_spec, "{\"a\":[1]}", "a[0]:invalid_type" },
	{ types_spec, "{\"a\":[\"x\",null]}", "a[1]:invalid_type" },
	{ types_spec, "{\"i\":9223372036854775808}", "i:out_of_range" },
	{ types_spec, "{\"i\":18446744073709551615}", "i:out_of_range" },
	{ types_spec, "[1]", ":invalid_type" },
	{ types_spec, "\"str\"", ":invalid_type" },
	{ types_spec, "5", ":invalid_type" },
	{ types_spec, "true", ":invalid_type" },
	{ types_spec, "{\"s\":1,\"i\":\"x\",\"zz\":1,\"yy\":2}",
	  "s:invalid_type,i:invalid_type,zz:unknown_field,yy:unknown_field" },
	{ types_spec, "{\"S\":\"x\"}", "S:unknown_field" },
	{ empty_spec, "{\"x\":1}", "x:unknown_field" },
	{ NULL, "{\"x\":1}", "x:unknown_field" },
	/* UTF-8 */
	{ types_spec, "{\"s\":\"a\\u0000b\"}", "s:invalid_utf8" },
	{ types_spec, "{\"s\":\"\xff\"}", "s:invalid_utf8" },
	{ types_spec, "{\"s\":\"\xc0\xaf\"}", "s:invalid_utf8" },
	{ types_spec, "{\"a\":[\"ok\",\"\xed\xa0\x80\"]}", "a[1]:invalid_utf8" },
	/* required and nullable */
	{ req_spec, "{}", "id:required,must:required" },
	{ req_spec, NULL, "id:required,must:required" },
	{ req_spec, "{\"id\":null,\"must\":1}", "id:invalid_type" },
	{ req_spec, "{\"id\":\"a\",\"must\":1,\"note\":5}", "note:invalid_type" },
	{ req_spec, "{\"must\":\"1\",\"extra\":1}",
	  "id:required,must:invalid_type,extra:unknown_field" },
	/* bounds */
	{ bounds_spec, "{\"name\":\"a\"}", "name:too_short" },
	{ bounds_spec, "{\"minonly\":\"ab\"}", "minonly:too_short" },
	{ bounds_spec, "{\"atleast\":0}", "atleast:out_of_range" },
	{ bounds_spec, "{\"name\":\"\"}", "name:too_short" },
	{ bounds_spec, "{\"name\":\"h\\u00e9llo!\"}", "name:too_long" },
	{ bounds_spec, "{\"exact\":\"ab\"}", "exact:too_short" },
	{ bounds_spec, "{\"exact\":\"abcd\"}", "exact:too_long" },
	{ bounds_spec, "{\"qty\":0}", "qty:out_of_range" },
	{ bounds_spec, "{\"qty\":101}", "qty:out_of_range" },
	{ bounds_spec, "{\"neg\":0}", "neg:out_of_range" },
	{ bounds_spec, "{\"neg\":-11}", "neg:out_of_range" },
	{ bounds_spec, "{\"pct\":1.01}", "pct:out_of_range" },
	{ bounds_spec, "{\"pct\":-0.1}", "pct:out_of_range" },
	{ bounds_spec, "{\"pct\":2}", "pct:out_of_range" },
	{ bounds_spec, "{\"tags\":[]}", "tags:too_few_items" },
	{ bounds_spec, "{\"tags\":[\"a\",\"b\",\"c\",\"d\"]}", "tags:too_many_items" },
	{ bounds_spec, "{\"tags\":[1,\"b\",2]}", "tags[0]:invalid_type,tags[2]:invalid_type" },
	{ bounds_spec, "{\"name\":\"a\",\"qty\":0,\"tags\":[]}",
	  "name:too_short,qty:out_of_range,tags:too_few_items" },
	/* enums */
	{ enum_spec, "{\"env\":\"Sandbox\"}", "env:invalid_enum" },
	{ enum_spec, "{\"env\":\"\"}", "env:invalid_enum" },
	{ enum_spec, "{\"env\":\"sandbox \"}", "env:invalid_enum" },
	{ enum_spec, "{\"env\":1}", "env:invalid_type" },
	{ enum_spec, "{\"events\":[\"bill.created\",\"nope\"]}", "events[1]:invalid_enum" },
	/* formats */
	{ format_spec, "{\"email\":\"nope\"}", "email:invalid_format" },
	{ format_spec, "{\"hook\":\"http://x.io\"}", "hook:invalid_format" },
	{ format_spec, "{\"day\":\"2023-02-29\"}", "day:invalid_format" },
	{ format_spec, "{\"cur\":\"usd\"}", "cur:invalid_format" },
	/* three capitals, but no ISO 4217 code */
	{ format_spec, "{\"cur\":\"ZZZ\"}", "cur:invalid_format" },
	{ format_spec, "{\"amt\":\"-1.00\"}", "amt:invalid_format" },
	{ format_spec, "{\"amt\":\"1.23456\"}", "amt:invalid_format" },
	{ format_spec, "{\"ids\":[\"0190a5b2-7c3e-7def-8abc-0123456789ab\",\"x\"]}",
	  "ids[1]:invalid_format" },
	/* nested objects */
	{ nested_spec, "{\"update\":{}}", "update.link_id:required" },
	{ nested_spec, "{\"update\":{\"link_id\":1,\"extra\":true}}",
	  "update.link_id:invalid_type,update.extra:unknown_field" },
	{ nested_spec, "{\"update\":\"x\"}", "update:invalid_type" },
	{ nested_spec, "{\"update\":null}", "update:invalid_type" },
	{ nested_spec, "{\"update\":{\"link_id\":\"0190a5b2-7c3e-7def-8abc-"
	  "0123456789ab\",\"mode\":\"x\"}}", "update.mode:invalid_enum" },
	{ nested_spec, "{\"range\":{\"from\":5,\"to\":1}}", "range:invalid_range" },
	{ nested_spec, "{\"range\":{\"from\":5}}", "range.to:required" },
	{ nested_spec, "{\"meta\":[]}", "meta:invalid_type" },
	/* arrays of objects */
	{ objarr_spec, "{\"events\":[{\"type\":\"a\"},{\"amount\":5},"
	  "{\"type\":\"c\",\"amount\":-1}]}",
	  "events[1].type:required,events[2].amount:out_of_range" },
	{ objarr_spec, "{\"events\":[1]}", "events[0]:invalid_type" },
	{ objarr_spec, "{\"events\":[null]}", "events[0]:invalid_type" },
	{ objarr_spec, "{\"events\":[{\"type\":\"a\",\"x\":1}]}",
	  "events[0].x:unknown_field" },
	{ objarr_spec, "{\"events\":[]}", "events:too_few_items" },
	{ objarr_spec, "{\"events\":[{},{},{},{}]}", "events:too_many_items" },
	{ objarr_spec, "{\"matrix\":[[],1]}", "matrix[1]:invalid_type" },
	/* aliases */
	{ alias_spec, "{\"clientName\":\"x\",\"client_name\":\"y\"}",
	  "clientName:duplicate_field" },
	{ alias_spec, "{\"client_name\":5}", "client_name:invalid_type" },
	{ alias_spec, "{\"client_name\":\"\"}", "client_name:too_short" },
	{ alias_spec, "{\"redirect_uris\":[\"https://a.com\",\"http://b.com\"]}",
	  "clientName:required,redirect_uris[1]:invalid_format" },
	{ alias_spec, "{\"clientname\":\"x\"}", "clientName:required,clientname:unknown_field" },
	/* custom checks */
	{ check_spec, "{\"username\":\"admin\"}", "username:reserved" },
	{ check_spec, "{\"email\":\"bad\"}", "email:invalid_format" },
	{ check_spec, "{\"never\":\"x\"}", "never:invalid" },
	{ check_spec, "{\"wrap\":{\"w\":1}}", "wrap:missing_v" },
	{ check_spec, "{\"tags\":[1]}", "tags[0]:invalid_type" },
	{ check_spec, "{\"tags\":[\"a\"],\"username\":\"admin\",\"email\":\"x@y\"}",
	  "email:invalid_format,username:reserved" },
};

START_TEST(body_invalid_table)
{
	struct json_object	*out = (struct json_object *)&out;

	ck_assert_int_eq(run_body(&body_invalid[_i], &out), -1);
	ck_assert_ptr_null(out);
	ck_assert_str_eq(errs_str(), body_invalid[_i].want);
}
END_TEST

/* ---- body: messages, caps, ownership ---- */

static const struct {
	const struct vfield	*spec;
	const char		*in;
	const char		*message;
} messages[] = {
	{ bounds_spec, "{\"name\":\"a\"}", "must be at least 2 characters" },
	{ bounds_spec, "{\"name\":\"abcdef\"}", "must be at most 5 characters" },
	{ bounds_spec, "{\"qty\":0}", "must be between 1 and 100" },
	{ bounds_spec, "{\"tags\":[]}", "must have at least 1 items" },
	{ enum_spec, "{\"env\":\"x\"}",
	  "must be one of: sandbox, development, production" },
	{ format_spec, "{\"email\":\"x\"}", "must be an e-mail address" },
	{ format_spec, "{\"cur\":\"ZZZ\"}", "must be an ISO 4217 currency code" },
	{ types_spec, "{\"s\":null}", "must be a string, not null" },
	{ types_spec, "[]", "body must be a JSON object" },
	{ req_spec, "{\"must\":1}", "is required" },
	{ check_spec, "{\"username\":\"admin\"}", "is reserved" },
	{ check_spec, "{\"never\":\"x\"}", "is invalid" },
	{ check_spec, "{\"wrap\":{}}", "needs v" },
	{ alias_spec, "{\"clientName\":\"x\",\"client_name\":\"y\"}",
	  "given as both clientName and client_name" },
};

START_TEST(body_messages)
{
	struct bcase		 c = { messages[_i].spec, messages[_i].in, NULL };
	struct json_object	*out;

	ck_assert_int_eq(run_body(&c, &out), -1);
	ck_assert_uint_eq(errs.n, 1);
	ck_assert_str_eq(errs.v[0].message, messages[_i].message);
}
END_TEST

START_TEST(string_cap)
{
	struct json_object	*in, *out;
	char			*s;

	s = arena_alloc(&a, 2 * VALIDATE_STRING_MAX + 2);
	in = json_object_new_object();
	memset(s, 'x', VALIDATE_STRING_MAX);
	json_object_object_add(in, "s", json_object_new_string(s));
	ck_assert_int_eq(validate_body(&a, bounds_spec, in, &out, &errs), 0);
	/* 4096 two-byte code points: 8192 bytes, still within the cap. */
	for (size_t i = 0; i < VALIDATE_STRING_MAX; i++)
		memcpy(s + 2 * i, "\xc3\xa9", 2);
	json_object_object_add(in, "s", json_object_new_string(s));
	ck_assert_int_eq(validate_body(&a, bounds_spec, in, &out, &errs), 0);
	memset(s, 'x', VALIDATE_STRING_MAX + 1);
	s[VALIDATE_STRING_MAX + 1] = '\0';
	json_object_object_add(in, "s", json_object_new_string(s));
	ck_assert_int_eq(validate_body(&a, bounds_spec, in, &out, &errs), -1);
	ck_assert_str_eq(errs_str(), "s:too_long");
	ck_assert_str_eq(errs.v[0].message, "must be at most 4096 characters");
	json_object_put(in);
}
END_TEST

START_TEST(array_cap)
{
	struct json_object	*in, *arr, *out;
	int			 i;

	in = json_object_new_object();
	arr = json_object_new_array();
	for (i = 0; i < VALIDATE_ARRAY_MAX; i++)
		json_object_array_add(arr, json_object_new_string("v"));
	json_object_object_add(in, "a", arr);
	ck_assert_int_eq(validate_body(&a, bounds_spec, in, &out, &errs), 0);
	ck_assert_uint_eq(json_object_array_length(
	    json_object_object_get(out, "a")), VALIDATE_ARRAY_MAX);
	json_object_array_add(arr, json_object_new_string("v"));
	ck_assert_int_eq(validate_body(&a, bounds_spec, in, &out, &errs), -1);
	ck_assert_str_eq(errs_str(), "a:too_many_items");
	json_object_put(in);
}
END_TEST

START_TEST(check_runs_last)
{
	struct bcase		 c = { check_spec, "{\"username\":\"\"}", NULL };
	struct json_object	*out;

	reserved_calls = 0;
	ck_assert_int_eq(run_body(&c, &out), -1);
	ck_assert_str_eq(errs_str(), "username:too_short");
	ck_assert_int_eq(reserved_calls, 0);
	c.in = "{\"username\":\"ok\"}";
	ck_assert_int_eq(run_body(&c, &out), -1 + 1);
	ck_assert_int_eq(reserved_calls, 1);
}
END_TEST

START_TEST(errors_accumulate)
{
	struct bcase		 bad = { req_spec, "{}", NULL };
	struct bcase		 good = { req_spec, "{\"id\":\"a\",\"must\":1}", NULL };
	struct json_object	*out;

	ck_assert_int_eq(run_body(&bad, &out), -1);
	ck_assert_uint_eq(errs.n, 2);
	/* 0 means this call added nothing, whatever errs held before. */
	ck_assert_int_eq(run_body(&good, &out), 0);
	ck_assert_uint_eq(errs.n, 2);
	ck_assert_str_eq(json_object_get_string(json_object_object_get(out, "id")),
	    "a");
}
END_TEST

START_TEST(output_shares_nothing_mutable)
{
	struct json_object	*in, *out;

	in = json_tokener_parse("{\"update\":{\"link_id\":"
	    "\"0190a5b2-7c3e-7def-8abc-0123456789ab\",\"mode\":\"read\"}}");
	ck_assert_int_eq(validate_body(&a, nested_spec, in, &out, &errs), 0);
	/* Declared objects are rebuilt, not aliased to the input. */
	ck_assert_ptr_ne(json_object_object_get(out, "update"),
	    json_object_object_get(in, "update"));
	json_object_object_del(json_object_object_get(in, "update"), "mode");
	json_object_put(in);
	ck_assert_str_eq(json_object_to_json_string_ext(out, JSON_FLAGS),
	    "{\"update\":{\"link_id\":\"0190a5b2-7c3e-7def-8abc-0123456789ab\","
	    "\"mode\":\"read\"}}");
}
END_TEST

START_TEST(verrs_grow)
{
	int	 i;

	for (i = 0; i < 50; i++)
		verrs_add(&a, &errs, i % 2 ? "f" : NULL, "c", "n=%d", i);
	ck_assert_uint_eq(errs.n, 50);
	ck_assert_uint_ge(errs.cap, 50);
	ck_assert_str_eq(errs.v[0].field, "");
	ck_assert_str_eq(errs.v[49].field, "f");
	ck_assert_str_eq(errs.v[49].message, "n=49");
	ck_assert_str_eq(errs.v[7].message, "n=7");
	ck_assert_str_eq(errs.v[8].message, "n=8");
}
END_TEST

/* ---- UTF-8 and formats ---- */

static const struct {
	const char	*s;
	size_t		 n;
	int		 want;
} utf8_cases[] = {
	{ "", 0, 1 },
	{ "abc", 3, 1 },
	{ "\xc3\xa9", 2, 1 },			/* U+00E9 */
	{ "\xe6\x97\xa5", 3, 1 },		/* U+65E5 */
	{ "\xf0\x9d\x84\x9e", 4, 1 },		/* U+1D11E */
	{ "\xf4\x8f\xbf\xbf", 4, 1 },		/* U+10FFFF */
	{ "\xef\xbf\xbd", 3, 1 },		/* U+FFFD */
	{ "a\0b", 3, 0 },			/* NUL */
	{ "\x80", 1, 0 },			/* lone continuation */
	{ "\xc0\xaf", 2, 0 },			/* overlong '/' */
	{ "\xc1\xbf", 2, 0 },
	{ "\xe0\x80\xaf", 3, 0 },		/* overlong */
	{ "\xf0\x80\x80\xaf", 4, 0 },		/* overlong */
	{ "\xed\xa0\x80", 3, 0 },		/* surrogate U+D800 */
	{ "\xed\xbf\xbf", 3, 0 },		/* surrogate U+DFFF */
	{ "\xf4\x90\x80\x80", 4, 0 },		/* U+110000 */
	{ "\xf5\x80\x80\x80", 4, 0 },
	{ "\xf8\x88\x80\x80\x80", 5, 0 },	/* 5-byte form */
	{ "\xff", 1, 0 },
	{ "\xe6\x97", 2, 0 },			/* truncated */
	{ "\xc3", 1, 0 },
	{ "\xc3\x28", 2, 0 },			/* bad continuation */
	{ "\xe6\x28\xa5", 3, 0 },
};

START_TEST(utf8_table)
{
	ck_assert_int_eq(validate_utf8(utf8_cases[_i].s, utf8_cases[_i].n),
	    utf8_cases[_i].want);
}
END_TEST

static const struct {
	enum vformat	 f;
	const char	*s;
	int		 want;
} formats[] = {
	{ VF_NONE, "anything at all", 1 },
	{ VF_EMAIL, "a@b.co", 1 },
	{ VF_EMAIL, "first.last+tag@sub.example.com", 1 },
	{ VF_EMAIL, "x_y-z@example-host.io", 1 },
	{ VF_EMAIL, "o'brien@example.ie", 1 },
	{ VF_EMAIL, "", 0 },
	{ VF_EMAIL, "a", 0 },
	{ VF_EMAIL, "@b.co", 0 },
	{ VF_EMAIL, "a@", 0 },
	{ VF_EMAIL, "a@b", 0 },
	{ VF_EMAIL, "a@b.c", 0 },
	{ VF_EMAIL, "a b@c.com", 0 },
	{ VF_EMAIL, "a@b .com", 0 },
	{ VF_EMAIL, "a@b..com", 0 },
	{ VF_EMAIL, ".a@b.com", 0 },
	{ VF_EMAIL, "a.@b.com", 0 },
	{ VF_EMAIL, "a..b@c.com", 0 },
	{ VF_EMAIL, "a@@b.com", 0 },
	{ VF_EMAIL, "a@b@c.com", 0 },
	{ VF_EMAIL, "a@-b.com", 0 },
	{ VF_EMAIL, "a@b-.com", 0 },
	{ VF_EMAIL, "a@b.c0m", 0 },
	{ VF_EMAIL, "\xc3\xa9@b.com", 0 },
	{ VF_EMAIL, "a@b.com\n", 0 },
	{ VF_EMAIL, "<a@b.com>", 0 },
	{ VF_URL, "http://example.com", 1 },
	{ VF_URL, "https://example.com/path?q=1#f", 1 },
	{ VF_URL, "HTTPS://Example.COM", 1 },
	{ VF_URL, "http://localhost:8080/hook", 1 },
	{ VF_URL, "http://127.0.0.1/x", 1 },
	{ VF_URL, "https://[::1]:8443/", 1 },
	{ VF_URL, "https://a.b.c?x", 1 },
	{ VF_URL, "", 0 },
	{ VF_URL, "example.com", 0 },
	{ VF_URL, "ftp://x.com", 0 },
	{ VF_URL, "javascript:alert(1)", 0 },
	{ VF_URL, "http://", 0 },
	{ VF_URL, "http:///path", 0 },
	{ VF_URL, "http:/x.com", 0 },
	{ VF_URL, "http://exa mple.com", 0 },
	{ VF_URL, "https://host.com/a b", 0 },
	{ VF_URL, "https://host.com/\x01", 0 },
	{ VF_URL, "http://user:pw@host.com/", 0 },
	{ VF_URL, "http://host:0/", 0 },
	{ VF_URL, "http://host:65536/", 0 },
	{ VF_URL, "http://host:/", 0 },
	{ VF_URL, "http://host:8a/", 0 },
	{ VF_URL, "http://-host.com/", 0 },
	{ VF_URL, "http://host..com/", 0 },
	{ VF_URL, "http://ho_st.com/", 0 },
	{ VF_URL, "http://[]/", 0 },
	{ VF_URL, "http://[::1/", 0 },
	{ VF_URL, "http://[::1]x/", 0 },
	{ VF_URL, "http://\xc3\xa9.com/", 0 },
	{ VF_HTTPS_URL, "https://example.com/x", 1 },
	{ VF_HTTPS_URL, "http://example.com", 0 },
	{ VF_HTTPS_URL, "https://", 0 },
	{ VF_DATE, "2024-02-29", 1 },
	{ VF_DATE, "2000-02-29", 1 },
	{ VF_DATE, "1999-12-31", 1 },
	{ VF_DATE, "0001-01-01", 1 },
	{ VF_DATE, "2023-02-29", 0 },
	{ VF_DATE, "1900-02-29", 0 },
	{ VF_DATE, "2024-13-01", 0 },
	{ VF_DATE, "2024-00-10", 0 },
	{ VF_DATE, "2024-04-31", 0 },
	{ VF_DATE, "2024-01-32", 0 },
	{ VF_DATE, "2024-01-00", 0 },
	{ VF_DATE, "0000-01-01", 0 },
	{ VF_DATE, "2024-1-01", 0 },
	{ VF_DATE, "2024/01/01", 0 },
	{ VF_DATE, "20240101", 0 },
	{ VF_DATE, "2024-01-01T00:00:00Z", 0 },
	{ VF_DATE, "2024-01-01 ", 0 },
	{ VF_DATE, "", 0 },
	{ VF_DATETIME, "2024-01-01T00:00:00Z", 1 },
	{ VF_DATETIME, "2024-06-30T23:59:59.123456+02:00", 1 },
	{ VF_DATETIME, "2024-01-01T12:00:00-05:30", 1 },
	{ VF_DATETIME, "2024-01-01T12:00:00.1Z", 1 },
	{ VF_DATETIME, "2024-02-29T12:00:00.123456789Z", 1 },
	{ VF_DATETIME, "2024-01-01T00:00:00", 0 },
	{ VF_DATETIME, "2024-01-01 00:00:00Z", 0 },
	{ VF_DATETIME, "2024-01-01t00:00:00z", 0 },
	{ VF_DATETIME, "2024-01-01T24:00:00Z", 0 },
	{ VF_DATETIME, "2024-01-01T00:60:00Z", 0 },
	{ VF_DATETIME, "2024-01-01T00:00:60Z", 0 },
	{ VF_DATETIME, "2024-01-01T00:00:00.Z", 0 },
	{ VF_DATETIME, "2024-01-01T00:00:00.1234567890Z", 0 },
	{ VF_DATETIME, "2024-01-01T00:00:00+0200", 0 },
	{ VF_DATETIME, "2024-01-01T00:00:00+24:00", 0 },
	{ VF_DATETIME, "2024-01-01T00:00:00+02:60", 0 },
	{ VF_DATETIME, "2024-02-30T00:00:00Z", 0 },
	{ VF_DATETIME, "2024-01-01T00:00:00Zjunk", 0 },
	{ VF_DATETIME, "2024-01-01T0:00:00Z", 0 },
	{ VF_DATETIME, "2024-01-01", 0 },
	{ VF_DATETIME, "", 0 },
	{ VF_UUID, "0190a5b2-7c3e-7def-8abc-0123456789ab", 1 },
	{ VF_UUID, "0190A5B2-7C3E-7DEF-8ABC-0123456789AB", 1 },
	{ VF_UUID, "0190a5b27c3e7def8abc0123456789ab", 0 },
	{ VF_UUID, "0190a5b2-7c3e-7def-8abc-0123456789a", 0 },
	{ VF_UUID, "0190a5b2-7c3e-7def-8abc-0123456789ag", 0 },
	{ VF_DIGITS, "0", 1 },
	{ VF_DIGITS, "0123456789", 1 },
	{ VF_DIGITS, "", 0 },
	{ VF_DIGITS, "12a", 0 },
	{ VF_DIGITS, "-1", 0 },
	{ VF_DIGITS, " 1", 0 },
	{ VF_DIGITS, "1.0", 0 },
	{ VF_CURRENCY, "USD", 1 },
	{ VF_CURRENCY, "EUR", 1 },
	{ VF_CURRENCY, "usd", 0 },
	{ VF_CURRENCY, "US", 0 },
	{ VF_CURRENCY, "USDD", 0 },
	{ VF_CURRENCY, "U5D", 0 },
	{ VF_CURRENCY, "", 0 },
	{ VF_CURRENCY, "UYW", 1 },
	{ VF_CURRENCY, "CLF", 1 },
	{ VF_CURRENCY, "JPY", 1 },
	{ VF_CURRENCY, "XXX", 0 },
	{ VF_CURRENCY, "ABC", 0 },
	{ VF_CURRENCY, "XAU", 0 },
	{ VF_MONEY, "0", 1 },
	{ VF_MONEY, "12", 1 },
	{ VF_MONEY, "12.50", 1 },
	{ VF_MONEY, "1.2345", 1 },
	{ VF_MONEY, "99999999999999.99", 1 },
	{ VF_MONEY, "999999999999999", 0 },
	{ VF_MONEY, "1.23456", 0 },
	{ VF_MONEY, "-1", 0 },
	{ VF_MONEY, "+1", 0 },
	{ VF_MONEY, ".5", 0 },
	{ VF_MONEY, "5.", 0 },
	{ VF_MONEY, "05.00", 0 },
	{ VF_MONEY, "1e1", 0 },
	{ VF_MONEY, " 1", 0 },
	{ VF_MONEY, "", 0 },
	{ VF_PRINTABLE, "Hello, World! ~", 1 },
	{ VF_PRINTABLE, "", 1 },
	{ VF_PRINTABLE, "tab\there", 0 },
	{ VF_PRINTABLE, "line\n", 0 },
	{ VF_PRINTABLE, "\xc3\xa9", 0 },
	{ VF_PRINTABLE, "\x7f", 0 },
};

START_TEST(format_table)
{
	ck_assert_msg(validate_format(formats[_i].f, formats[_i].s) ==
	    formats[_i].want, "format %d on \"%s\" should give %d",
	    formats[_i].f, formats[_i].s, formats[_i].want);
}
END_TEST

START_TEST(format_lengths)
{
	char	 s[300];

	ck_assert_int_eq(validate_format(VF_EMAIL, NULL), 0);
	ck_assert_int_eq(validate_format(VF_NONE, NULL), 0);
	/* 64-byte local part is the limit. */
	memset(s, 'l', 64);
	strcpy(s + 64, "@example.com");
	ck_assert_int_eq(validate_format(VF_EMAIL, s), 1);
	memset(s, 'l', 65);
	strcpy(s + 65, "@example.com");
	ck_assert_int_eq(validate_format(VF_EMAIL, s), 0);
	/* 254 characters overall is the limit. */
	strcpy(s, "a@");
	memset(s + 2, 'd', 60);
	memcpy(s + 62, ".", 1);
	memset(s + 63, 'e', 60);
	memcpy(s + 123, ".", 1);
	memset(s + 124, 'f', 60);
	memcpy(s + 184, ".", 1);
	memset(s + 185, 'g', 60);
	strcpy(s + 245, ".example");		/* 253 chars */
	ck_assert_uint_eq(strlen(s), 253);
	ck_assert_int_eq(validate_format(VF_EMAIL, s), 1);
	memmove(s + 1, s, 254);			/* "aa@...": 254 chars */
	ck_assert_int_eq(validate_format(VF_EMAIL, s), 1);
	memmove(s + 1, s, 255);			/* 255 chars */
	ck_assert_int_eq(validate_format(VF_EMAIL, s), 0);
	/* DNS labels stop at 63 bytes. */
	strcpy(s, "https://");
	memset(s + 8, 'h', 63);
	strcpy(s + 71, ".com/");
	ck_assert_int_eq(validate_format(VF_HTTPS_URL, s), 1);
	memset(s + 8, 'h', 64);
	strcpy(s + 72, ".com/");
	ck_assert_int_eq(validate_format(VF_HTTPS_URL, s), 0);
}
END_TEST

/* ---- query strings ---- */

static const struct vfield query_spec[] = {
	{ .name = "limit", .type = VT_INT, .min = 1, .max = 100 },
	{ .name = "cursor", .type = VT_STRING, .max = 1024 },
	{ .name = "active", .type = VT_BOOL },
	{ .name = "min_amount", .type = VT_NUMBER },
	{ .name = "status", .type = VT_ARRAY, .items = VT_STRING,
	  .enumv = statuses, .max = 3 },
	{ .name = "start_date", .alias = "startDate", .type = VT_STRING,
	  .format = VF_DATE },
	{ .name = "ids", .type = VT_ARRAY, .items = VT_INT },
	{ .name = "code", .type = VT_STRING, .check = chk_lower },
	VEND
};

static const struct vfield query_req_spec[] = {
	{ .name = "link_id", .type = VT_STRING, .flags = V_REQUIRED,
	  .format = VF_UUID },
	{ .name = "obj", .type = VT_OBJECT },
	VEND
};

struct qcase {
	const struct vfield	*spec;
	struct http_kv		 kv[5];		/* ends at the first NULL key */
	const char		*want;		/* output, or errors */
};

static size_t
qcount(const struct qcase *c)
{
	size_t	 n = 0;

	while (n < 5 && c->kv[n].key != NULL)
		n++;
	return n;
}

static const struct qcase query_valid[] = {
	{ query_spec, { { NULL, NULL } }, "{}" },
	{ query_spec, { { "active", "true" }, { "limit", "10" } },
	  "{\"limit\":10,\"active\":true}" },
	{ query_spec, { { "active", "false" } }, "{\"active\":false}" },
	{ query_spec, { { "limit", "007" } }, "{\"limit\":7}" },
	{ query_spec, { { "limit", "100" } }, "{\"limit\":100}" },
	{ query_spec, { { "min_amount", "1.5" } }, "{\"min_amount\":1.5}" },
	{ query_spec, { { "min_amount", "-2" } }, "{\"min_amount\":-2}" },
	{ query_spec, { { "min_amount", "0" } }, "{\"min_amount\":0}" },
	{ query_spec, { { "min_amount", "1e3" } }, "{\"min_amount\":1000.0}" },
	{ query_spec, { { "status", "open" }, { "limit", "5" },
	  { "status", "paid" } }, "{\"limit\":5,\"status\":[\"open\",\"paid\"]}" },
	{ query_spec, { { "startDate", "2024-01-01" } },
	  "{\"start_date\":\"2024-01-01\"}" },
	{ query_spec, { { "start_date", "2024-01-01" } },
	  "{\"start_date\":\"2024-01-01\"}" },
	{ query_spec, { { "cursor", "" } }, "{\"cursor\":\"\"}" },
	{ query_spec, { { "cursor", NULL } }, "{\"cursor\":\"\"}" },
	{ query_spec, { { "cursor", "a b+c" } }, "{\"cursor\":\"a b+c\"}" },
	{ query_spec, { { "ids", "1" }, { "ids", "-2" } }, "{\"ids\":[1,-2]}" },
	{ query_spec, { { "code", "ABC" } }, "{\"code\":\"abc\"}" },
	{ query_req_spec, { { "link_id", "0190a5b2-7c3e-7def-8abc-0123456789ab" } },
	  "{\"link_id\":\"0190a5b2-7c3e-7def-8abc-0123456789ab\"}" },
};

START_TEST(query_valid_table)
{
	const struct qcase	*c = &query_valid[_i];
	struct json_object	*out = NULL;
	int			 rc;

	rc = validate_query(&a, c->spec, c->kv, qcount(c), &out, &errs);
	ck_assert_msg(rc == 0, "row %d: %s", _i, errs_str());
	ck_assert_uint_eq(errs.n, 0);
	ck_assert_str_eq(json_object_to_json_string_ext(out, JSON_FLAGS), c->want);
}
END_TEST

static const struct qcase query_invalid[] = {
	{ query_spec, { { "limit", "abc" } }, "limit:invalid_type" },
	{ query_spec, { { "limit", "" } }, "limit:invalid_type" },
	{ query_spec, { { "limit", "+5" } }, "limit:invalid_type" },
	{ query_spec, { { "limit", " 5" } }, "limit:invalid_type" },
	{ query_spec, { { "limit", "5 " } }, "limit:invalid_type" },
	{ query_spec, { { "limit", "1.0" } }, "limit:invalid_type" },
	{ query_spec, { { "limit", "0x10" } }, "limit:invalid_type" },
	{ query_spec, { { "limit", "-" } }, "limit:invalid_type" },
	{ query_spec, { { "limit", "0" } }, "limit:out_of_range" },
	{ query_spec, { { "limit", "101" } }, "limit:out_of_range" },
	{ query_spec, { { "limit", "-5" } }, "limit:out_of_range" },
	{ query_spec, { { "limit", "99999999999999999999" } }, "limit:out_of_range" },
	{ query_spec, { { "active", "yes" } }, "active:invalid_type" },
	{ query_spec, { { "active", "TRUE" } }, "active:invalid_type" },
	{ query_spec, { { "active", "1" } }, "active:invalid_type" },
	{ query_spec, { { "active", "" } }, "active:invalid_type" },
	{ query_spec, { { "min_amount", "abc" } }, "min_amount:invalid_type" },
	{ query_spec, { { "min_amount", "1." } }, "min_amount:invalid_type" },
	{ query_spec, { { "min_amount", ".5" } }, "min_amount:invalid_type" },
	{ query_spec, { { "min_amount", "01" } }, "min_amount:invalid_type" },
	{ query_spec, { { "min_amount", "1e" } }, "min_amount:invalid_type" },
	{ query_spec, { { "min_amount", "--1" } }, "min_amount:invalid_type" },
	{ query_spec, { { "min_amount", "NaN" } }, "min_amount:invalid_type" },
	{ query_spec, { { "min_amount", "inf" } }, "min_amount:invalid_type" },
	{ query_spec, { { "min_amount", "1e999" } }, "min_amount:out_of_range" },
	{ query_spec, { { "status", "bogus" } }, "status[0]:invalid_enum" },
	{ query_spec, { { "status", "open" }, { "status", "x" } },
	  "status[1]:invalid_enum" },
	{ query_spec, { { "status", "open" }, { "status", "paid" },
	  { "status", "overdue" }, { "status", "open" } }, "status:too_many_items" },
	{ query_spec, { { "limit", "1" }, { "limit", "2" } }, "limit:duplicate_field" },
	{ query_spec, { { "start_date", "2024-01-01" }, { "startDate", "2024-01-02" } },
	  "start_date:duplicate_field" },
	{ query_spec, { { "startDate", "2024-13-01" } }, "startDate:invalid_format" },
	{ query_spec, { { "page", "2" }, { "page_size", "10" } },
	  "page:unknown_field,page_size:unknown_field" },
	{ query_spec, { { "page", "1" }, { "page", "2" } }, "page:unknown_field" },
	{ query_spec, { { "Limit", "1" } }, "Limit:unknown_field" },
	{ query_spec, { { "limit", "abc" }, { "active", "maybe" }, { "page", "1" } },
	  "limit:invalid_type,active:invalid_type,page:unknown_field" },
	{ query_spec, { { "ids", "1" }, { "ids", "x" } }, "ids[1]:invalid_type" },
	{ query_spec, { { "cursor", "\xff" } }, "cursor:invalid_utf8" },
	{ query_req_spec, { { NULL, NULL } }, "link_id:required" },
	{ query_req_spec, { { "link_id", "x" } }, "link_id:invalid_format" },
	{ query_req_spec, { { "obj", "x" } }, "link_id:required,obj:invalid_type" },
};

START_TEST(query_invalid_table)
{
	const struct qcase	*c = &query_invalid[_i];
	struct json_object	*out = (struct json_object *)&out;

	ck_assert_int_eq(validate_query(&a, c->spec, c->kv, qcount(c), &out,
	    &errs), -1);
	ck_assert_ptr_null(out);
	ck_assert_str_eq(errs_str(), c->want);
}
END_TEST

/* An unknown name: the closest declared one, only when close enough. */
static const struct {
	const char	*key;
	const char	*want;		/* NULL: none is close */
} suggest_cases[] = {
	{ "limt", "limit" },		/* a letter left out */
	{ "limti", "limit" },		/* two letters swapped: one edit */
	{ "Limit", "limit" },		/* case only */
	{ "curser", "cursor" },
	{ "startdate", "start_date" },	/* separators and case only */
	{ "START-DATE", "start_date" },
	{ "start_dat", "start_date" },
	{ "stat", NULL },		/* two edits: too far for a short key */
	{ "page", NULL },
	{ "page_size", NULL },
	{ "x", NULL },
	{ "", NULL },
	{ "min_amnt", "min_amount" },
	{ "id", "ids" },
};

START_TEST(suggest_table)
{
	const char *got = validate_suggest(query_spec, suggest_cases[_i].key);

	if (suggest_cases[_i].want == NULL)
		ck_assert_msg(got == NULL, "%s: suggested %s", suggest_cases[_i].key, got);
	else
		ck_assert_pstr_eq(got, suggest_cases[_i].want);
}
END_TEST

START_TEST(distance_counts)
{
	ck_assert_uint_eq(validate_distance("limit", "limit"), 0);
	ck_assert_uint_eq(validate_distance("limit", "LIMIT"), 0);
	ck_assert_uint_eq(validate_distance("limit", "limt"), 1);
	ck_assert_uint_eq(validate_distance("limit", "limti"), 1);	/* transposition */
	ck_assert_uint_eq(validate_distance("abc", ""), 3);
	ck_assert_uint_eq(validate_distance("kitten", "sitting"), 3);
	ck_assert_uint_eq(validate_distance("ca", "abc"), 3);	/* OSA: no edit of a swapped pair */
	ck_assert_uint_eq(validate_distance(
	    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "a"), SIZE_MAX);
}
END_TEST

/* The first unknown name sets the hint: the closest known one, else the
 * list of the accepted ones; the field's message says it too. */
START_TEST(unknown_hint)
{
	struct http_kv one[] = { { "limt", "5" }, { "pgae", "1" } };
	struct http_kv far[] = { { "zzzzzz", "5" } };
	struct json_object *out, *in;
	static const struct vfield none[] = { VEND };

	ck_assert_int_eq(validate_query(&a, query_spec, one, 2, &out, &errs), -1);
	ck_assert_str_eq(errs.v[0].field, "limt");
	ck_assert_str_eq(errs.v[0].message, "is not a known parameter; did you mean limit?");
	ck_assert_str_eq(errs.v[1].message, "is not a known parameter");
	ck_assert_pstr_eq(errs.hint, "limt is not a known parameter: did you mean `limit`?");

	memset(&errs, 0, sizeof(errs));
	ck_assert_int_eq(validate_query(&a, query_spec, far, 1, &out, &errs), -1);
	ck_assert_pstr_eq(errs.hint, "the accepted parameters: limit, cursor, active, "
	    "min_amount, status, start_date, ids, code");

	memset(&errs, 0, sizeof(errs));
	ck_assert_int_eq(validate_query(&a, none, far, 1, &out, &errs), -1);
	ck_assert_pstr_eq(errs.hint, "this endpoint takes no query parameters");

	memset(&errs, 0, sizeof(errs));
	in = json_tokener_parse("{\"curser\":\"x\"}");
	ck_assert_int_eq(validate_body(&a, query_spec, in, &out, &errs), -1);
	ck_assert_str_eq(errs.v[0].message, "is not a known field; did you mean cursor?");
	ck_assert_pstr_eq(errs.hint, "curser is not a known field: did you mean `cursor`?");
	json_object_put(in);
}
END_TEST

/* The schema of a spec says what the validator enforces, field by field. */
static const char *const schema_colors[] = { "red", "blue", NULL };
static const struct vfield schema_inner[] = {
	{ .name = "n", .type = VT_INT, .min = 1, .max = 9 },
	{ NULL }
};
static const struct vfield schema_spec[] = {
	{ .name = "email", .alias = "eMail", .type = VT_STRING, .flags = V_REQUIRED,
	  .min = 3, .max = 254, .format = VF_EMAIL },
	{ .name = "note", .type = VT_STRING, .flags = V_NULLABLE },
	{ .name = "color", .type = VT_STRING, .enumv = schema_colors },
	{ .name = "tags", .type = VT_ARRAY, .items = VT_STRING, .max = 5, .flags = V_UNIQUE },
	{ .name = "inner", .type = VT_OBJECT, .fields = schema_inner },
	{ .name = "cursor", .type = VT_STRING, .flags = V_OPAQUE },
	{ .name = "name", .type = VT_STRING, .check = validate_name },
	{ NULL }
};

START_TEST(schema_of_spec)
{
	struct json_object *o = validate_schema(schema_spec);

	ck_assert_str_eq(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
	    JSON_C_TO_STRING_NOSLASHESCAPE),
	    "{\"type\":\"object\",\"additionalProperties\":false,\"properties\":{"
	    "\"email\":{\"type\":\"string\",\"minLength\":3,\"maxLength\":254,\"format\":\"email\"},"
	    "\"eMail\":{\"type\":\"string\",\"minLength\":3,\"maxLength\":254,\"format\":\"email\","
	    "\"x-alias-of\":\"email\"},"
	    "\"note\":{\"type\":[\"string\",\"null\"],\"maxLength\":4096},"
	    "\"color\":{\"type\":\"string\",\"maxLength\":4096,\"enum\":[\"red\",\"blue\"]},"
	    "\"tags\":{\"type\":\"array\",\"maxItems\":5,\"uniqueItems\":true,"
	    "\"items\":{\"type\":\"string\",\"maxLength\":4096}},"
	    "\"inner\":{\"type\":\"object\",\"additionalProperties\":false,\"properties\":{"
	    "\"n\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":9}},\"required\":[]},"
	    "\"cursor\":{\"type\":\"string\"},"
	    "\"name\":{\"type\":\"string\",\"maxLength\":4096,\"x-check\":true}},"
	    "\"required\":[\"email\"]}");
	json_object_put(o);
}
END_TEST

static Suite *
validate_suite(void)
{
	Suite	*s = suite_create("validate");
	TCase	*tc;

	tc = tcase_create("body");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_loop_test(tc, body_valid_table, 0, N(body_valid));
	tcase_add_loop_test(tc, body_invalid_table, 0, N(body_invalid));
	tcase_add_loop_test(tc, body_messages, 0, N(messages));
	tcase_add_test(tc, string_cap);
	tcase_add_test(tc, array_cap);
	tcase_add_test(tc, check_runs_last);
	tcase_add_test(tc, errors_accumulate);
	tcase_add_test(tc, output_shares_nothing_mutable);
	tcase_add_test(tc, verrs_grow);
	suite_add_tcase(s, tc);

	tc = tcase_create("formats");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_loop_test(tc, utf8_table, 0, N(utf8_cases));
	tcase_add_loop_test(tc, format_table, 0, N(formats));
	tcase_add_test(tc, format_lengths);
	suite_add_tcase(s, tc);

	tc = tcase_create("query");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_loop_test(tc, query_valid_table, 0, N(query_valid));
	tcase_add_loop_test(tc, query_invalid_table, 0, N(query_invalid));
	tcase_add_loop_test(tc, suggest_table, 0, N(suggest_cases));
	tcase_add_test(tc, distance_counts);
	tcase_add_test(tc, unknown_hint);
	suite_add_tcase(s, tc);

	tc = tcase_create("schema");
	tcase_add_test(tc, schema_of_spec);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tcheck_run(validate_suite());
}
