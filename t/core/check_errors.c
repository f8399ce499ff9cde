/*
 * lib/errors.c: both envelopes, the default code per status, and the
 * api_error / api_verror / api_db_error paths through a struct req.
 */
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <json-c/json.h>

#include "core/arena.h"
#include "core/config.h"
#include "core/db.h"
#include "core/errors.h"
#include "core/json.h"
#include "core/req.h"
#include "core/validate.h"
#include "tcheck.h"

#define DOCS "https://docs.test"

static struct arena a;
static struct config cfg;
static struct req r;

static void
setup(void)
{
	arena_init(&a);
	memset(&cfg, 0, sizeof(cfg));
	cfg.docs_url = (char *)DOCS;
	memset(&r, 0, sizeof(r));
	r.arena = &a;
	r.cfg = &cfg;
	r.http.request_id = "req-42";
}

static void
teardown(void)
{
	arena_free(&a);
}

/* The object's keys, sorted and joined with ",", for an exact comparison. */
static int
cmp_str(const void *x, const void *y)
{
	return strcmp(*(const char *const *)x, *(const char *const *)y);
}

static const char *
keys_of(struct json_object *o)
{
	const char *k[32];
	size_t n = 0;
	char *s;

	json_object_object_foreach(o, key, val) {
		(void)val;
		ck_assert_uint_lt(n, 32);
		k[n++] = key;
	}
	qsort(k, n, sizeof(k[0]), cmp_str);
	s = arena_strdup(&a, "");
	for (size_t i = 0; i < n; i++)
		s = arena_printf(&a, "%s%s%s", s, i ? "," : "", k[i]);
	return s;
}

static struct json_object *
member(struct json_object *o, const char *key)
{
	struct json_object *v = NULL;

	ck_assert_msg(json_object_object_get_ex(o, key, &v), "no member %s", key);
	return v;
}

static void
assert_str_member(struct json_object *o, const char *key, const char *want)
{
	struct json_object *v = member(o, key);

	if (want == NULL) {
		ck_assert_msg(v == NULL, "%s: want null, got %s", key,
		    json_object_to_json_string(v));
		return;
	}
	ck_assert_msg(json_object_is_type(v, json_type_string), "%s: not a string", key);
	ck_assert_str_eq(json_object_get_string(v), want);
}

#define CODED_KEYS	"docs_url,error_code,error_message,hint,request_id"
#define CODED_KEYS_E	"docs_url,error_code,error_message,errors,hint,request_id"
#define IAM_KEYS	"docs_url,error_code,error_message,errors,hint,message," \
			"request_id,statusCode,success"

/* Each status in errors_default_code's table, and the fallbacks around it. */
static const struct {
	int		 status;
	const char	*code;
} statuses[] = {
	{ 400, "VALIDATION_ERROR" },
	{ 401, "UNAUTHORIZED" },
	{ 403, "FORBIDDEN" },
	{ 404, "NOT_FOUND" },
	{ 405, "METHOD_NOT_ALLOWED" },
	{ 409, "CONFLICT" },
	{ 413, "PAYLOAD_TOO_LARGE" },
	{ 415, "UNSUPPORTED_MEDIA_TYPE" },
	{ 429, "RATE_LIMITED" },
	{ 501, "NOT_IMPLEMENTED" },
	{ 503, "SERVICE_UNAVAILABLE" },
	{ 500, "INTERNAL_ERROR" },
	{ 502, "INTERNAL_ERROR" },
	{ 504, "INTERNAL_ERROR" },
	{ 599, "INTERNAL_ERROR" },
	{ 402, "BAD_REQUEST" },
	{ 410, "BAD_REQUEST" },
	{ 422, "BAD_REQUEST" },
	{ 499, "BAD_REQUEST" },
};

START_TEST(test_default_code)
{
	ck_assert_str_eq(errors_default_code(statuses[_i].status), statuses[_i].code);
}
END_TEST

/* With no code given, both envelopes carry the status's default code. */
START_TEST(test_envelope_status)
{
	int st = statuses[_i].status;
	const char *code = statuses[_i].code;
	struct json_object *o;

	o = errors_envelope(&a, 0, st, NULL, "m", NULL, DOCS, "rid", NULL);
	ck_assert_str_eq(keys_of(o), CODED_KEYS);
	assert_str_member(o, "error_code", code);
	assert_str_member(o, "docs_url", arena_printf(&a, DOCS "/errors#%s", code));

	o = errors_envelope(&a, 1, st, NULL, "m", NULL, DOCS, "rid", NULL);
	ck_assert_str_eq(keys_of(o), IAM_KEYS);
	assert_str_member(o, "error_code", code);
	ck_assert_int_eq(json_object_get_int(member(o, "statusCode")), st);
	assert_str_member(o, "docs_url", arena_printf(&a, DOCS "/errors#%s", code));
}
END_TEST

/* The coded envelope: exact members and values. */
static const struct {
	int		 status;
	const char	*code;		/* given */
	const char	*message;
	const char	*hint;
	const char	*docs;
	const char	*rid;
	const char	*errors;	/* JSON text, or NULL */
	const char	*keys;
	const char	*want_code;
	const char	*want_docs;
} coded[] = {
	{ 404, "LINK_NOT_FOUND", "no link l_1", NULL, DOCS, "r1", NULL,
	    CODED_KEYS, "LINK_NOT_FOUND", DOCS "/errors#LINK_NOT_FOUND" },
	{ 409, "IDEMPOTENCY_CONFLICT", "key reused", "use a new key", DOCS, "r2", NULL,
	    CODED_KEYS, "IDEMPOTENCY_CONFLICT", DOCS "/errors#IDEMPOTENCY_CONFLICT" },
	{ 400, NULL, "bad", NULL, DOCS, "r3", "[{\"field\":\"a\"}]",
	    CODED_KEYS_E, "VALIDATION_ERROR", DOCS "/errors#VALIDATION_ERROR" },
	{ 400, "X", "empty errors", NULL, DOCS, "r4", "[]",
	    CODED_KEYS_E, "X", DOCS "/errors#X" },
	{ 500, NULL, NULL, NULL, DOCS, NULL, NULL,
	    CODED_KEYS, "INTERNAL_ERROR", DOCS "/errors#INTERNAL_ERROR" },
	{ 404, NULL, "no docs base", NULL, NULL, "r6", NULL,
	    CODED_KEYS, "NOT_FOUND", "/errors#NOT_FOUND" },
	{ 403, "FORBIDDEN", "quote \" and slash / and \xc3\xa9", "h\"int", DOCS, "r7", NULL,
	    CODED_KEYS, "FORBIDDEN", DOCS "/errors#FORBIDDEN" },
};

START_TEST(test_envelope_coded)
{
	struct json_object *errs = NULL, *o;

	if (coded[_i].errors != NULL)
		errs = json_own(&a, json_tokener_parse(coded[_i].errors));
	o = errors_envelope(&a, 0, coded[_i].status, coded[_i].code, coded[_i].message,
	    coded[_i].hint, coded[_i].docs, coded[_i].rid, errs);
	ck_assert_ptr_nonnull(o);
	ck_assert_str_eq(keys_of(o), coded[_i].keys);
	assert_str_member(o, "error_code", coded[_i].want_code);
	assert_str_member(o, "error_message", coded[_i].message);
	assert_str_member(o, "hint", coded[_i].hint);
	assert_str_member(o, "docs_url", coded[_i].want_docs);
	assert_str_member(o, "request_id", coded[_i].rid);
	if (errs != NULL) {
		ck_assert_ptr_eq(member(o, "errors"), errs);
		ck_assert_str_eq(json_object_to_json_string_ext(member(o, "errors"),
		    JSON_C_TO_STRING_PLAIN), coded[_i].errors);
	}
}
END_TEST

/* The /v1/iam envelope: the iam fields plus the coded ones. */
static const struct {
	int		 status;
	const char	*code;
	const char	*message;
	const char	*hint;
	const char	*errors;	/* given, JSON text or NULL */
	const char	*want_code;
	const char	*want_errors;
} iam[] = {
	{ 401, "USER_NOT_CONFIRMED", "confirm your e-mail first", NULL, NULL,
	    "USER_NOT_CONFIRMED", "[]" },
	{ 400, NULL, "email: is required", NULL,
	    "[{\"field\":\"email\",\"code\":\"required\",\"message\":\"is required\"}]",
	    "VALIDATION_ERROR",
	    "[{\"field\":\"email\",\"code\":\"required\",\"message\":\"is required\"}]" },
	{ 409, "CLIENT_SECRET_ROTATION_CONFLICT", "rotation in progress", "wait", "[]",
	    "CLIENT_SECRET_ROTATION_CONFLICT", "[]" },
	{ 503, NULL, "the database is unavailable", "retry shortly", NULL,
	    "SERVICE_UNAVAILABLE", "[]" },
	{ 500, NULL, NULL, NULL, NULL, "INTERNAL_ERROR", "[]" },
};

START_TEST(test_envelope_iam)
{
	struct json_object *errs = NULL, *o, *v;

	if (iam[_i].errors != NULL)
		errs = json_own(&a, json_tokener_parse(iam[_i].errors));
	o = errors_envelope(&a, 1, iam[_i].status, iam[_i].code, iam[_i].message,
	    iam[_i].hint, DOCS, "rid-iam", errs);
	ck_assert_str_eq(keys_of(o), IAM_KEYS);
	v = member(o, "success");
	ck_assert(json_object_is_type(v, json_type_boolean));
	ck_assert(!json_object_get_boolean(v));
	assert_str_member(o, "message", iam[_i].message);
	v = member(o, "statusCode");
	ck_assert(json_object_is_type(v, json_type_int));
	ck_assert_int_eq(json_object_get_int(v), iam[_i].status);
	v = member(o, "errors");
	ck_assert(json_object_is_type(v, json_type_array));
	ck_assert_str_eq(json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN),
	    iam[_i].want_errors);
	assert_str_member(o, "error_code", iam[_i].want_code);
	assert_str_member(o, "error_message", iam[_i].message);
	assert_str_member(o, "hint", iam[_i].hint);
	assert_str_member(o, "docs_url",
	    arena_printf(&a, DOCS "/errors#%s", iam[_i].want_code));
	assert_str_member(o, "request_id", "rid-iam");
}
END_TEST

/* The caller keeps its own reference to errors: the arena releases both. */
START_TEST(test_envelope_errors_shared)
{
	struct json_object *errs = json_arr(&a), *o1, *o2;

	o1 = errors_envelope(&a, 0, 400, NULL, "x", NULL, DOCS, "r", errs);
	o2 = errors_envelope(&a, 1, 400, NULL, "x", NULL, DOCS, "r", errs);
	ck_assert_ptr_eq(member(o1, "errors"), errs);
	ck_assert_ptr_eq(member(o2, "errors"), errs);
	json_object_array_add(errs, json_object_new_int(1));
	ck_assert_uint_eq(json_object_array_length(member(o1, "errors")), 1);
	ck_assert_uint_eq(json_object_array_length(member(o2, "errors")), 1);
	/* The envelopes are arena-owned: no put here, valgrind checks the reset. */
}
END_TEST

/* api_error: status returned and stored, message formatted, envelope by
 * r->iam; a NULL hint sends the catalogue's fix for the code, a code the
 * catalogue lacks keeps it null. */
#define FIX_LINK_NOT_FOUND	"check the link id; list links with GET /v1/links"
#define FIX_NOT_FOUND		"check the path and the id"
static const struct {
	int		 iam;
	int		 status;
	const char	*code;
	const char	*hint;
	const char	*arg;
	const char	*want_code;
	const char	*want_msg;
	const char	*want_hint;
} apierr[] = {
	{ 0, 404, ERR_LINK_NOT_FOUND, NULL, "l_1", "LINK_NOT_FOUND", "no such thing: l_1",
	    FIX_LINK_NOT_FOUND },
	{ 0, 404, NULL, NULL, "x", "NOT_FOUND", "no such thing: x", FIX_NOT_FOUND },
	{ 0, 429, NULL, "slow down", "%s", "RATE_LIMITED", "no such thing: %s", "slow down" },
	{ 1, 401, ERR_USER_NOT_CONFIRMED, NULL, "u", "USER_NOT_CONFIRMED", "no such thing: u",
	    "confirm your e-mail with the code sent at sign-up first" },
	{ 1, 403, NULL, "ask an admin", "", "FORBIDDEN", "no such thing: ", "ask an admin" },
	{ 0, 501, NULL, NULL, "y", "NOT_IMPLEMENTED", "no such thing: y",
	    "do not retry; see the documentation of the endpoint" },
	{ 0, 418, "NOT_CATALOGUED", NULL, "z", "NOT_CATALOGUED", "no such thing: z", NULL },
	{ 1, 418, "NOT_CATALOGUED", NULL, "z", "NOT_CATALOGUED", "no such thing: z", NULL },
};

START_TEST(test_api_error)
{
	r.iam = apierr[_i].iam;
	ck_assert_int_eq(api_error(&r, apierr[_i].status, apierr[_i].code, apierr[_i].hint,
	    "no such thing: %s", apierr[_i].arg), apierr[_i].status);
	ck_assert_int_eq(r.status, apierr[_i].status);
	ck_assert_str_eq(r.error_code, apierr[_i].want_code);
	ck_assert_ptr_nonnull(r.out);
	ck_assert_str_eq(keys_of(r.out), apierr[_i].iam ? IAM_KEYS : CODED_KEYS);
	assert_str_member(r.out, "error_code", apierr[_i].want_code);
	assert_str_member(r.out, "error_message", apierr[_i].want_msg);
	assert_str_member(r.out, "hint", apierr[_i].want_hint);
	assert_str_member(r.out, "docs_url",
	    arena_printf(&a, DOCS "/errors#%s", apierr[_i].want_code));
	assert_str_member(r.out, "request_id", "req-42");
	if (apierr[_i].iam) {
		assert_str_member(r.out, "message", apierr[_i].want_msg);
		ck_assert_int_eq(json_object_get_int(member(r.out, "statusCode")),
		    apierr[_i].status);
	}
	ck_assert_uint_eq(r.nheaders, 0);
}
END_TEST

/* Without a config the docs link has no base (and nothing crashes). */
START_TEST(test_api_error_no_cfg)
{
	r.cfg = NULL;
	ck_assert_int_eq(api_error(&r, 404, NULL, NULL, "gone"), 404);
	assert_str_member(r.out, "docs_url", "/errors#NOT_FOUND");
}
END_TEST

/* api_verror: 400 VALIDATION_ERROR, errors[] in order, message from the first. */
static const struct {
	int		 iam;
	size_t		 n;
	const char	*e[3][3];	/* field, code, message */
	const char	*want_msg;
	const char	*want_errors;
} verr[] = {
	{ 0, 0, { { NULL } }, "invalid request", "[]" },
	{ 0, 1, { { "email", "required", "is required" } }, "email: is required",
	    "[{\"field\":\"email\",\"code\":\"required\",\"message\":\"is required\"}]" },
	{ 0, 1, { { "", "invalid_type", "body must be a JSON object" } },
	    "body must be a JSON object",
	    "[{\"field\":\"\",\"code\":\"invalid_type\",\"message\":\"body must be a JSON object\"}]" },
	{ 1, 3, { { "update.link_id", "invalid_format", "must be an id" },
	    { "events[2]", "invalid_enum", "must be one of a, b" },
	    { "x", "unknown_field", "is not a known field" } },
	    "update.link_id: must be an id",
	    "[{\"field\":\"update.link_id\",\"code\":\"invalid_format\",\"message\":\"must be an id\"},"
	    "{\"field\":\"events[2]\",\"code\":\"invalid_enum\",\"message\":\"must be one of a, b\"},"
	    "{\"field\":\"x\",\"code\":\"unknown_field\",\"message\":\"is not a known field\"}]" },
};

START_TEST(test_api_verror)
{
	struct verrs e = { 0 };

	r.iam = verr[_i].iam;
	for (size_t k = 0; k < verr[_i].n; k++)
		verrs_add(&a, &e, verr[_i].e[k][0], verr[_i].e[k][1], "%s", verr[_i].e[k][2]);
	ck_assert_int_eq(api_verror(&r, &e), 400);
	ck_assert_int_eq(r.status, 400);
	ck_assert_str_eq(r.error_code, "VALIDATION_ERROR");
	ck_assert_str_eq(keys_of(r.out), verr[_i].iam ? IAM_KEYS : CODED_KEYS_E);
	assert_str_member(r.out, "error_code", "VALIDATION_ERROR");
	assert_str_member(r.out, "error_message", verr[_i].want_msg);
	assert_str_member(r.out, "hint", "correct the fields errors[] names and send again");
	assert_str_member(r.out, "docs_url", DOCS "/errors#VALIDATION_ERROR");
	assert_str_member(r.out, "request_id", "req-42");
	ck_assert_str_eq(json_object_to_json_string_ext(member(r.out, "errors"),
	    JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE), verr[_i].want_errors);
	if (verr[_i].iam)
		assert_str_member(r.out, "message", verr[_i].want_msg);
}
END_TEST

/* The database is away: 503 SERVICE_UNAVAILABLE with Retry-After. */
START_TEST(test_api_db_error_unavailable)
{
	struct db *d = db_new("host=/nonexistent dbname=x connect_timeout=1");

	ck_assert_ptr_nonnull(d);
	ck_assert_int_eq(db_ensure(d), -1);
	ck_assert_int_eq(db_last_fail(d), DB_UNAVAILABLE);
	ck_assert(!db_connected(d));
	r.db = d;
	r.iam = _i;
	ck_assert_int_eq(api_db_error(&r), 503);
	ck_assert_int_eq(r.status, 503);
	ck_assert_str_eq(r.error_code, "SERVICE_UNAVAILABLE");
	ck_assert_str_eq(keys_of(r.out), _i ? IAM_KEYS : CODED_KEYS);
	assert_str_member(r.out, "error_code", "SERVICE_UNAVAILABLE");
	assert_str_member(r.out, "error_message", "the database is unavailable");
	assert_str_member(r.out, "hint", "retry shortly");
	assert_str_member(r.out, "docs_url", DOCS "/errors#SERVICE_UNAVAILABLE");
	assert_str_member(r.out, "request_id", "req-42");
	ck_assert_uint_eq(r.nheaders, 1);
	ck_assert_str_eq(r.headers[0].key, "Retry-After");
	ck_assert_str_eq(r.headers[0].val, "1");
	/* No connection detail reaches the client. */
	ck_assert_ptr_null(strstr(json_object_to_json_string(r.out), "nonexistent"));
	db_free(d);
}
END_TEST

/* Any other database failure: 500 INTERNAL_ERROR, no Retry-After, no detail. */
START_TEST(test_api_db_error_other)
{
	struct db *d = db_new("host=/nonexistent dbname=x connect_timeout=1");

	/* A handle with no unavailability recorded: the failure was not the link. */
	ck_assert_int_eq(db_last_fail(d), DB_OK);
	r.db = d;
	ck_assert_int_eq(api_db_error(&r), 500);
	ck_assert_int_eq(r.status, 500);
	ck_assert_str_eq(r.error_code, "INTERNAL_ERROR");
	ck_assert_str_eq(keys_of(r.out), CODED_KEYS);
	assert_str_member(r.out, "error_message", "internal error");
	assert_str_member(r.out, "hint", "retry later; report the request_id if it persists");
	ck_assert_uint_eq(r.nheaders, 0);
	db_free(d);
}
END_TEST

/* The catalogue (lib/core/errcodes.txt, through core/errcodes.h). */
static const struct {
	const char	*code;
	int		 status;
	const char	*meaning;
	const char	*fix;
} rows[] = {
#define ROW(code, status, meaning, fix)	{ code, status, meaning, fix },
	ERRCODES(ROW)
#undef ROW
};

/* Each row: sorted after the one before (errors_fix searches by halves),
 * a code of capitals, digits and _, its ERR_ constant its own name, a
 * status, a meaning and a fix, and errors_fix finds that fix. */
START_TEST(test_catalogue_row)
{
	const char *c = rows[_i].code;

	ck_assert_uint_eq(sizeof(rows) / sizeof(rows[0]), ERRCODES_N);
	if (_i > 0)
		ck_assert_int_lt(strcmp(rows[_i - 1].code, c), 0);
	ck_assert_uint_eq(strspn(c, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_"), strlen(c));
	ck_assert(rows[_i].status == 0 || (rows[_i].status >= 200 && rows[_i].status <= 599));
	ck_assert_uint_gt(strlen(rows[_i].meaning), 0);
	ck_assert_uint_gt(strlen(rows[_i].fix), 0);
	ck_assert_pstr_eq(errors_fix(c), rows[_i].fix);
	/* a copy of the name finds it too (no pointer equality) */
	ck_assert_pstr_eq(errors_fix(arena_strdup(&a, c)), rows[_i].fix);
}
END_TEST

/* What the catalogue lacks has no fix; the constants spell their names. */
START_TEST(test_catalogue_lookup)
{
	static const char *const none[] = { "", "A", "LINK_NOT_FOUN", "LINK_NOT_FOUND_",
	    "link_not_found", "ZZZ", "AAA", "NOT_CATALOGUED" };

	ck_assert_ptr_null(errors_fix(NULL));
	for (size_t i = 0; i < sizeof(none) / sizeof(none[0]); i++)
		ck_assert_ptr_null(errors_fix(none[i]));
	ck_assert_str_eq(ERR_LINK_NOT_FOUND, "LINK_NOT_FOUND");
	ck_assert_str_eq(ERR_VALIDATION_ERROR, "VALIDATION_ERROR");
	ck_assert_str_eq(errors_fix(ERR_LINK_NOT_FOUND), FIX_LINK_NOT_FOUND);
	/* every default code is catalogued */
	for (int st = 100; st < 600; st++)
		ck_assert_msg(errors_fix(errors_default_code(st)) != NULL,
		    "%d: %s", st, errors_default_code(st));
}
END_TEST

static Suite *
errors_suite(void)
{
	Suite *s = suite_create("errors");
	TCase *tc;

	tc = tcase_create("envelope");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_loop_test(tc, test_default_code, 0, sizeof(statuses) / sizeof(statuses[0]));
	tcase_add_loop_test(tc, test_envelope_status, 0, sizeof(statuses) / sizeof(statuses[0]));
	tcase_add_loop_test(tc, test_envelope_coded, 0, sizeof(coded) / sizeof(coded[0]));
	tcase_add_loop_test(tc, test_envelope_iam, 0, sizeof(iam) / sizeof(iam[0]));
	tcase_add_test(tc, test_envelope_errors_shared);
	suite_add_tcase(s, tc);

	tc = tcase_create("catalogue");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_loop_test(tc, test_catalogue_row, 0, sizeof(rows) / sizeof(rows[0]));
	tcase_add_test(tc, test_catalogue_lookup);
	suite_add_tcase(s, tc);

	tc = tcase_create("api");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_loop_test(tc, test_api_error, 0, sizeof(apierr) / sizeof(apierr[0]));
	tcase_add_test(tc, test_api_error_no_cfg);
	tcase_add_loop_test(tc, test_api_verror, 0, sizeof(verr) / sizeof(verr[0]));
	tcase_add_loop_test(tc, test_api_db_error_unavailable, 0, 2);
	tcase_add_test(tc, test_api_db_error_other);
	tcase_set_timeout(tc, 30);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tcheck_run(errors_suite());
}
