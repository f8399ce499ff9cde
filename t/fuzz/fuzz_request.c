/*
 * libFuzzer target for the request path short of the database: CGI
 * parameters (http_parse_params), routing (router_match on the real table
 * and on a local one with captures, checked against a reference matcher),
 * the body (json_parse, validate_body on a nested spec), the query
 * (validate_query) and cursors (cursor_decode of fuzzed text and of fuzzed
 * payloads signed here, and cursor_encode -> cursor_decode round trips).
 *
 * Input layout:
 *	byte 0		method: GET POST PUT PATCH DELETE HEAD, or none
 *	byte 1		flags: bit 0 URI in DOCUMENT_URI, bit 1 no QUERY_STRING,
 *			bits 2-3 where the 4th string goes, bits 4-7 cursor
 *			field count
 *	then		REQUEST_URI \0 QUERY_STRING \0 CONTENT_LENGTH \0 header \0
 *	rest		the body (also the cursor material)
 * A missing piece is an empty string.
 *
 * Every invariant that fails calls abort(), which libFuzzer reports as a
 * crash. Build and run with scripts/fuzz; see t/fuzz/README.md.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>
#include <sodium.h>

#include "core/arena.h"
#include "core/config.h"
#include "core/crypto.h"
#include "core/cursor.h"
#include "core/db.h"
#include "core/http.h"
#include "core/json.h"
#include "core/req.h"
#include "core/router.h"
#include "core/server.h"
#include "core/validate.h"

int	 LLVMFuzzerInitialize(int *, char ***);
int	 LLVMFuzzerTestOneInput(const uint8_t *, size_t);

#define FUZZ_BODY_LIMIT	4096
#define FUZZ_SCOPE	"bills:cli_fuzz"

#define CHECK(c) do {							\
	if (!(c)) {							\
		fprintf(stderr, "%s:%d: invariant failed: %s\n",	\
		    __FILE__, __LINE__, #c);				\
		abort();						\
	}								\
} while (0)

static struct arena a;
static const unsigned char key[32] = "fuzz-cursor-key-0123456789abcdef";

/* ---- a body spec with every feature: nesting, arrays, enums, formats, aliases */

static int
check_lower(struct arena *ar, struct json_object **v, const char **code,
    const char **msg)
{
	const char *s = json_object_get_string(*v);
	char *t;

	if (strchr(s, '!') != NULL) {
		*code = "no_bang";
		*msg = "must not contain '!'";
		return -1;
	}
	t = arena_strdup(ar, s);
	for (char *p = t; *p != '\0'; p++)
		if (*p >= 'A' && *p <= 'Z')
			*p = (char)(*p - 'A' + 'a');
	*v = json_own(ar, json_object_new_string(t));
	return 0;
}

static const char *const kinds[] = { "bill", "card", "bank", NULL };
static const char *const events[] = { "bill.created", "bill.updated", "link.created", NULL };
static const char *const statuses[] = { "open", "paid", "overdue", NULL };

static const struct vfield address_fields[] = {
	{ "line1", NULL, VT_STRING, V_REQUIRED, 1, 100, NULL, VF_NONE, NULL, VT_ANY, NULL },
	{ "postal_code", "postalCode", VT_STRING, 0, 0, 10, NULL, VF_DIGITS, NULL, VT_ANY, NULL },
	{ "country", NULL, VT_STRING, V_REQUIRED, 2, 2, NULL, VF_NONE, NULL, VT_ANY, NULL },
	{ NULL, NULL, VT_ANY, 0, 0, 0, NULL, VF_NONE, NULL, VT_ANY, NULL },
};

static const struct vfield update_fields[] = {
	{ "link_id", "linkId", VT_STRING, V_REQUIRED | V_NULLABLE, 0, 0, NULL, VF_UUID,
	    NULL, VT_ANY, NULL },
	{ "address", NULL, VT_OBJECT, 0, 0, 0, NULL, VF_NONE, address_fields, VT_ANY, NULL },
	{ "extra", NULL, VT_OBJECT, V_NULLABLE, 0, 0, NULL, VF_NONE, NULL, VT_ANY, NULL },
	{ NULL, NULL, VT_ANY, 0, 0, 0, NULL, VF_NONE, NULL, VT_ANY, NULL },
};

static const struct vfield item_fields[] = {
	{ "id", NULL, VT_STRING, V_REQUIRED, 0, 0, NULL, VF_UUID, NULL, VT_ANY, NULL },
	{ "amount", NULL, VT_INT, V_REQUIRED, 0, 1000000, NULL, VF_NONE, NULL, VT_ANY, NULL },
	{ "currency", NULL, VT_STRING, 0, 0, 0, NULL, VF_CURRENCY, NULL, VT_ANY, NULL },
	{ NULL, NULL, VT_ANY, 0, 0, 0, NULL, VF_NONE, NULL, VT_ANY, NULL },
};

static const struct vfield body_spec[] = {
	{ "email", NULL, VT_STRING, V_REQUIRED, 3, 254, NULL, VF_EMAIL, NULL, VT_ANY, NULL },
	{ "client_name", "clientName", VT_STRING, 0, 1, 64, NULL, VF_NONE, NULL, VT_ANY,
	    check_lower },
	{ "kind", NULL, VT_STRING, 0, 0, 0, kinds, VF_NONE, NULL, VT_ANY, NULL },
	{ "webhook_url", "webhookUrl", VT_STRING, V_NULLABLE, 0, 0, NULL, VF_HTTPS_URL,
	    NULL, VT_ANY, NULL },
	{ "site", NULL, VT_STRING, 0, 0, 0, NULL, VF_URL, NULL, VT_ANY, NULL },
	{ "events", NULL, VT_ARRAY, 0, 1, 5, events, VF_NONE, NULL, VT_STRING, NULL },
	{ "items", NULL, VT_ARRAY, 0, 0, 10, NULL, VF_NONE, item_fields, VT_OBJECT, NULL },
	{ "update", NULL, VT_OBJECT, 0, 0, 0, NULL, VF_NONE, update_fields, VT_ANY, NULL },
	{ "due_date", "dueDate", VT_STRING, 0, 0, 0, NULL, VF_DATE, NULL, VT_ANY, NULL },
	{ "at", NULL, VT_STRING, 0, 0, 0, NULL, VF_DATETIME, NULL, VT_ANY, NULL },
	{ "ratio", NULL, VT_NUMBER, 0, -100, 100, NULL, VF_NONE, NULL, VT_ANY, NULL },
	{ "count", NULL, VT_INT, 0, 0, 0, NULL, VF_NONE, NULL, VT_ANY, NULL },
	{ "enabled", NULL, VT_BOOL, 0, 0, 0, NULL, VF_NONE, NULL, VT_ANY, NULL },
	{ "metadata", NULL, VT_ANY, 0, 0, 0, NULL, VF_NONE, NULL, VT_ANY, NULL },
	{ "tags", NULL, VT_ARRAY, 0, 0, 0, NULL, VF_PRINTABLE, NULL, VT_STRING, check_lower },
	{ "scores", NULL, VT_ARRAY, 0, 0, 3, NULL, VF_NONE, NULL, VT_NUMBER, NULL },
	{ NULL, NULL, VT_ANY, 0, 0, 0, NULL, VF_NONE, NULL, VT_ANY, NULL },
};

static const struct vfield query_spec[] = {
	{ "limit", NULL, VT_INT, 0, 1, 100, NULL, VF_NONE, NULL, VT_ANY, NULL },
	{ "cursor", NULL, VT_STRING, 0, 1, CURSOR_MAX_LEN, NULL, VF_NONE, NULL, VT_ANY, NULL },
	{ "status", NULL, VT_ARRAY, 0, 0, 3, statuses, VF_NONE, NULL, VT_STRING, NULL },
	{ "since", "updatedSince", VT_STRING, 0, 0, 0, NULL, VF_DATETIME, NULL, VT_ANY, NULL },
	{ "include_removed", "includeRemoved", VT_BOOL, 0, 0, 0, NULL, VF_NONE, NULL, VT_ANY,
	    NULL },
	{ "min_amount", NULL, VT_NUMBER, 0, 0, 0, NULL, VF_NONE, NULL, VT_ANY, NULL },
	{ "ids", NULL, VT_ARRAY, 0, 0, 0, NULL, VF_UUID, NULL, VT_STRING, NULL },
	{ NULL, NULL, VT_ANY, 0, 0, 0, NULL, VF_NONE, NULL, VT_ANY, NULL },
};

/* ---- a route table with captures, and a reference matcher for it */

static int
h_stub(struct req *r, struct json_object *out)
{
	return 200;
}

static const struct route local_routes[] = {
	{ M_GET,    "/v1/links",                          0, NULL, NULL, h_stub, 0 },
	{ M_POST,   "/v1/links",                          0, NULL, NULL, h_stub, 0 },
	{ M_GET,    "/v1/links/new",                      0, NULL, NULL, h_stub, 0 },
	{ M_GET,    "/v1/links/{id}",                     0, NULL, NULL, h_stub, 0 },
	{ M_DELETE, "/v1/links/:id",                      0, NULL, NULL, h_stub, 0 },
	{ M_GET,    "/v1/account-links/{id}/bills/sync",  0, NULL, NULL, h_stub, 0 },
	{ M_PATCH,  "/v1/a/{a}/b/{b}/c/{c}/d/{d}",        0, NULL, NULL, h_stub, 0 },
	{ M_PUT,    "/v1/{x}",                            0, NULL, NULL, h_stub, 0 },
	{ M_GET,    "/.well-known/jwks.json",             0, NULL, NULL, h_stub, 0 },
};
#define NLOCAL (sizeof(local_routes) / sizeof(local_routes[0]))

/* Segment by segment with strtok-free splitting; 1 on a match. */
static int
ref_match(const char *pat, const char *path, size_t *ncaps)
{
	size_t n = 0;

	if (pat[0] != '/' || path[0] != '/')
		return 0;
	while (*pat == '/' && *path == '/') {
		const char *ps = pat + 1, *ss = path + 1;
		const char *pe = strchr(ps, '/'), *se = strchr(ss, '/');
		size_t pl = pe ? (size_t)(pe - ps) : strlen(ps);
		size_t sl = se ? (size_t)(se - ss) : strlen(ss);
		int cap = (pl >= 3 && ps[0] == '{' && ps[pl - 1] == '}') ||
		    (pl >= 2 && ps[0] == ':');

		if (sl == 0)
			return 0;
		if (cap)
			n++;
		else if (pl != sl || strncmp(ps, ss, pl) != 0)
			return 0;
		pat = ps + pl;
		path = ss + sl;
	}
	if (*pat != '\0' || *path != '\0' || n > ROUTER_MAX_CAPS)
		return 0;
	*ncaps = n;
	return 1;
}

static void
fuzz_router(const struct route *t, size_t n, enum http_method m, const char *path)
{
	struct route_match rm;
	const struct route *want = NULL;
	size_t want_caps = 0, caps;
	unsigned allowed = 0;
	int rc;

	for (size_t i = 0; i < n; i++) {
		if (!ref_match(t[i].pattern, path, &caps))
			continue;
		if (t[i].method == m) {
			want = &t[i];
			want_caps = caps;
			break;
		}
		allowed |= 1u << t[i].method;
	}
	rc = router_match(t, n, m, path, &a, &rm);
	if (want != NULL) {
		CHECK(rc == 0);
		CHECK(rm.route == want);
		CHECK(rm.ncaps == want_caps);
		CHECK(rm.allow[0] == '\0');
		for (size_t k = 0; k < rm.ncaps; k++) {
			CHECK(rm.cap_names[k] != NULL && rm.caps[k] != NULL);
			CHECK(rm.caps[k][0] != '\0' && strchr(rm.caps[k], '/') == NULL);
			CHECK(strstr(path, rm.caps[k]) != NULL);
			/* the first capture of a name wins */
			CHECK(router_cap(&rm, rm.cap_names[k]) != NULL);
		}
	} else if (allowed != 0) {
		char allow[64] = "";

		CHECK(rc == 405);
		CHECK(rm.route == NULL);
		for (int k = 0; k < M__MAX; k++)
			if (allowed & (1u << k)) {
				if (allow[0] != '\0')
					strcat(allow, ", ");
				strcat(allow, http_method_name((enum http_method)k));
			}
		CHECK(strcmp(rm.allow, allow) == 0);
	} else {
		CHECK(rc == 404);
		CHECK(rm.route == NULL && rm.allow[0] == '\0');
	}
}

/* ---- validation */

static void
check_errs(const struct verrs *e, size_t before, int rc)
{
	CHECK((rc == 0) == (e->n == before));
	CHECK(rc == 0 || rc == -1);
	for (size_t i = 0; i < e->n; i++) {
		CHECK(e->v[i].field != NULL);
		CHECK(e->v[i].code != NULL && e->v[i].code[0] != '\0');
		CHECK(e->v[i].message != NULL);
		CHECK(validate_utf8(e->v[i].code, strlen(e->v[i].code)));
	}
}

static void
fuzz_body(const char *body, size_t len)
{
	struct json_object *doc, *out = NULL, *again = NULL, *back;
	struct verrs errs = { 0 };
	const char *why, *dump;
	size_t dlen;
	int rc;

	/* Every body goes through the parser, for memory safety. */
	doc = json_parse(&a, body, len, &why);
	/* NULL without a reason only for the JSON value null (json.h). */
	if (doc == NULL && why == NULL) {
		size_t i = 0, j = len;

		while (i < j && strchr(" \t\r\n", body[i]) && body[i] != '\0')
			i++;
		while (j > i && strchr(" \t\r\n", body[j - 1]) && body[j - 1] != '\0')
			j--;
		CHECK(j - i == 4 && memcmp(body + i, "null", 4) == 0);
	}
	CHECK(why == NULL || why[0] != '\0');
	/* json_parse itself refuses invalid UTF-8, NUL and trailing bytes. */
	if (!validate_utf8(body, len))
		return;
	if (doc == NULL) {
		rc = validate_body(&a, body_spec, NULL, &out, &errs);
		CHECK(rc == -1 && out == NULL);	/* email is required */
		check_errs(&errs, 0, rc);
		return;
	}

	rc = validate_body(&a, body_spec, doc, &out, &errs);
	check_errs(&errs, 0, rc);
	if (rc != 0) {
		CHECK(out == NULL);
		return;
	}
	CHECK(out != NULL && json_object_is_type(out, json_type_object));
	/* canonical output validates again, unchanged */
	memset(&errs, 0, sizeof(errs));
	rc = validate_body(&a, body_spec, out, &again, &errs);
	check_errs(&errs, 0, rc);
	CHECK(rc == 0);
	CHECK(json_object_equal(out, again));
	/* what we echo back, our own parser accepts */
	dump = json_dump(&a, out, &dlen);
	CHECK(dump != NULL && strlen(dump) == dlen);
	CHECK(validate_utf8(dump, dlen));
	back = json_parse(&a, dump, dlen, &why);
	CHECK(back != NULL);
	CHECK(json_object_equal(out, back));
}

static void
fuzz_query(const struct http_req *h)
{
	struct json_object *out = NULL;
	struct verrs errs = { 0 };
	int rc;

	rc = validate_query(&a, query_spec, h->query, h->nquery, &out, &errs);
	check_errs(&errs, 0, rc);
	CHECK((rc == 0) == (out != NULL));
	if (rc == 0)
		CHECK(json_object_object_length(out) <= (int)h->nquery);
}

/* ---- cursors */

/* The documented wire form, signed here so the payload parser is reachable. */
static char *
sign_payload(const unsigned char *p, size_t len, const char *scope)
{
	crypto_generichash_state st;
	unsigned char *buf = arena_alloc(&a, len + 16);
	unsigned char sl[2];
	size_t n = strlen(scope);

	sl[0] = (unsigned char)(n >> 8);
	sl[1] = (unsigned char)(n & 0xff);
	memcpy(buf, p, len);
	crypto_generichash_init(&st, key, 32, 16);
	crypto_generichash_update(&st, sl, 2);
	crypto_generichash_update(&st, (const unsigned char *)scope, n);
	crypto_generichash_update(&st, p, len);
	crypto_generichash_final(&st, buf + len, 16);
	return crypto_b64url_encode(&a, buf, len + 16);
}

static void
fuzz_cursor_text(const char *s)
{
	char **f = (char **)1;
	size_t n = 99;

	if (cursor_decode(&a, key, FUZZ_SCOPE, s, &f, &n) != 0) {
		CHECK(f == NULL && n == 0);
		return;
	}
	/* a forged MAC is beyond a fuzzer: only well-formed cursors get here */
	CHECK(n <= CURSOR_MAX_FIELDS && f != NULL);
}

static void
fuzz_cursor_payload(const unsigned char *p, size_t len)
{
	char **f;
	size_t n;
	const char *c, *again;

	if (len > 700)
		len = 700;	/* stays under CURSOR_MAX_LEN once encoded */
	c = sign_payload(p, len, FUZZ_SCOPE);
	if (cursor_decode(&a, key, FUZZ_SCOPE, c, &f, &n) != 0)
		return;
	CHECK(n <= CURSOR_MAX_FIELDS);
	CHECK(f[n] == NULL);
	/* accepted payloads are canonical: re-encoding gives the same text */
	again = cursor_encode(&a, key, FUZZ_SCOPE, (const char *const *)f, n);
	CHECK(again != NULL && strcmp(again, c) == 0);
}

static void
fuzz_cursor_roundtrip(const char *body, size_t len, size_t nf)
{
	const char *fields[CURSOR_MAX_FIELDS + 1];
	char **got;
	size_t n, i, off = 0, payload = 2;
	char *c;
	unsigned char other[32];

	/* fields are the NUL-separated pieces of the body */
	for (i = 0; i < nf && i <= CURSOR_MAX_FIELDS; i++) {
		fields[i] = off < len ? body + off : "";
		off += strlen(fields[i]) + 1;
		payload += 2 + strlen(fields[i]);
	}
	nf = i;
	c = cursor_encode(&a, key, FUZZ_SCOPE, fields, nf);
	if (c == NULL) {
		/* refused only when too many fields or too long */
		CHECK(nf > CURSOR_MAX_FIELDS ||
		    (4 * (payload + 16) + 2) / 3 > CURSOR_MAX_LEN);
		return;
	}
	CHECK(nf <= CURSOR_MAX_FIELDS && strlen(c) <= CURSOR_MAX_LEN);
	for (const char *p = c; *p != '\0'; p++)
		CHECK((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') ||
		    (*p >= '0' && *p <= '9') || *p == '-' || *p == '_');
	CHECK(cursor_decode(&a, key, FUZZ_SCOPE, c, &got, &n) == 0);
	CHECK(n == nf);
	for (i = 0; i < n; i++)
		CHECK(strcmp(got[i], fields[i]) == 0);
	CHECK(got[n] == NULL);
	/* another scope, another key, or one changed character: refused */
	CHECK(cursor_decode(&a, key, "bills:cli_other", c, &got, &n) == -1);
	memcpy(other, key, sizeof(other));
	other[31] ^= 1;
	CHECK(cursor_decode(&a, other, FUZZ_SCOPE, c, &got, &n) == -1);
	c[0] = c[0] == 'A' ? 'B' : 'A';
	CHECK(cursor_decode(&a, key, FUZZ_SCOPE, c, &got, &n) == -1);
}

/* ---- the CGI environment */

struct fuzz_env {
	const char *method, *uri, *doc_uri, *qs, *cl, *rid, *auth, *idem;
};

static const char *
get_param(void *ctx, const char *name)
{
	const struct fuzz_env *e = ctx;

	if (strcmp(name, "REQUEST_METHOD") == 0)
		return e->method;
	if (strcmp(name, "REQUEST_URI") == 0)
		return e->uri;
	if (strcmp(name, "DOCUMENT_URI") == 0)
		return e->doc_uri;
	if (strcmp(name, "QUERY_STRING") == 0)
		return e->qs;
	if (strcmp(name, "CONTENT_LENGTH") == 0)
		return e->cl;
	if (strcmp(name, "REQUEST_ID") == 0)
		return e->rid;
	if (strcmp(name, "HTTP_AUTHORIZATION") == 0)
		return e->auth;
	if (strcmp(name, "HTTP_IDEMPOTENCY_KEY") == 0)
		return e->idem;
	return NULL;
}

/* The next NUL-terminated piece, copied; "" past the end. */
static const char *
piece(const uint8_t **p, const uint8_t *end)
{
	const uint8_t *nul;
	const char *s;

	if (*p >= end)
		return "";
	nul = memchr(*p, '\0', (size_t)(end - *p));
	if (nul == NULL)
		nul = end;
	s = arena_memdup(&a, *p, (size_t)(nul - *p));
	*p = nul < end ? nul + 1 : end;
	return s;
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	if (sodium_init() < 0)
		abort();
	arena_init(&a);
	return 0;
}

/*
 * The whole pipeline after parsing: body syntax, route, host, auth, declared
 * input and the handler, against a database that is never there (every query
 * fails at once and the handler answers its error). Whatever comes in, the
 * answer is a status in 200..599 with a JSON body that serialises.
 */
static void
fuzz_dispatch(struct http_req *h, const char *body, size_t blen, unsigned flags)
{
	static struct config cfg;
	static struct db *db;
	struct req r;
	size_t len;

	if (db == NULL) {
		static const char *const keys[] = { "BDS_CURSOR_KEY", "BDS_JWT_SEED",
		    "BDS_SECRET_KEY" };
		char err[256];

		/* every module's defaults, the keys fixed (never secret here) */
		for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
			setenv(keys[i], "00112233445566778899aabbccddeeff"
			    "00112233445566778899aabbccddeeff", 1);
		if (config_load(&cfg, NULL, err, sizeof(err)) != 0) {
			fprintf(stderr, "fuzz_request: %s\n", err);
			abort();
		}
		free(cfg.docs_url);
		cfg.docs_url = strdup("https://docs.example");
		free(cfg.jwt_issuer);
		cfg.jwt_issuer = strdup("https://api.example");
		cfg.body_limit = FUZZ_BODY_LIMIT;
		db = db_new("host=/nonexistent/bds-fuzz dbname=none connect_timeout=1");
	}
	memset(&r, 0, sizeof(r));
	r.arena = &a;
	r.cfg = &cfg;
	r.db = db;
	r.http = *h;
	r.http.body = blen > 0 ? (char *)body : NULL;
	r.http.body_len = blen;
	r.http.host_env = (flags & 0x40) ? "sandbox" : "live";
	dispatch(&r);
	CHECK(r.status >= 200 && r.status <= 599);
	CHECK(r.out != NULL);
	CHECK(json_dump(&a, r.out, &len) != NULL && len > 0);
	if (r.status >= 400)
		CHECK(json_get_str(r.out, "error_code") != NULL &&
		    json_get_str(r.out, "request_id") != NULL);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const methods[] = { "GET", "POST", "PUT", "PATCH", "DELETE",
	    "HEAD", NULL };
	const uint8_t *p = data, *end = data + size;
	struct fuzz_env e = { 0 };
	struct http_req h;
	enum http_parse rc;
	const char *uri, *fourth, *body, *cur;
	unsigned flags;
	size_t blen;

	if (size < 2)
		return 0;
	e.method = methods[data[0] % 7];
	flags = data[1];
	p += 2;
	uri = piece(&p, end);
	if (flags & 1)
		e.doc_uri = uri;
	else
		e.uri = uri;
	e.qs = piece(&p, end);
	if (flags & 2)
		e.qs = NULL;
	e.cl = piece(&p, end);
	fourth = piece(&p, end);
	switch ((flags >> 2) & 3) {
	case 0: e.rid = fourth; break;
	case 1: e.auth = fourth; break;
	case 2: e.idem = fourth; break;
	default: break;
	}
	blen = (size_t)(end - p);
	body = arena_memdup(&a, p, blen);

	rc = http_parse_params(&a, &h, get_param, &e, FUZZ_BODY_LIMIT);
	CHECK(rc == HTTP_PARSE_OK || rc == HTTP_PARSE_BAD || rc == HTTP_PARSE_TOO_LARGE);
	/* a request id always exists, printable and bounded, for the envelope */
	CHECK(h.request_id != NULL && h.request_id[0] != '\0' && strlen(h.request_id) <= 64);
	CHECK(validate_format(VF_PRINTABLE, h.request_id));
	if (rc == HTTP_PARSE_TOO_LARGE)
		CHECK(h.content_length > FUZZ_BODY_LIMIT);
	if (rc == HTTP_PARSE_OK) {
		CHECK(h.path != NULL && h.path[0] == '/');
		CHECK(validate_utf8(h.path, strlen(h.path)));
		CHECK(h.content_length >= -1 && h.content_length <= FUZZ_BODY_LIMIT);
		CHECK(h.nquery == 0 || h.query != NULL);
		for (size_t i = 0; i < h.nquery; i++) {
			CHECK(h.query[i].key != NULL && h.query[i].key[0] != '\0');
			CHECK(h.query[i].val != NULL);
			CHECK(validate_utf8(h.query[i].key, strlen(h.query[i].key)));
			CHECK(validate_utf8(h.query[i].val, strlen(h.query[i].val)));
		}
		CHECK(http_method_parse(http_method_name(h.method)) == h.method ||
		    h.method == M__MAX);
		fuzz_router(routes, routes_count, h.method, h.path);
		fuzz_router(local_routes, NLOCAL, h.method, h.path);
		fuzz_query(&h);
		if ((cur = http_query_get(&h, "cursor")) != NULL)
			fuzz_cursor_text(cur);
		fuzz_dispatch(&h, body, blen, flags);
	}
	fuzz_body(body, blen);
	fuzz_cursor_text(body);
	fuzz_cursor_text(uri);
	fuzz_cursor_payload((const unsigned char *)body, blen);
	fuzz_cursor_roundtrip(body, blen, flags >> 4);
	arena_reset(&a);
	return 0;
}

#ifdef BDS_FUZZ_MAIN
/*
 * Replay files without libFuzzer (gcc, valgrind):
 *	cc -DBDS_FUZZ_MAIN ... t/fuzz/fuzz_request.c ... && ./a.out corpus/ *
 */
int
main(int argc, char **argv)
{
	LLVMFuzzerInitialize(&argc, &argv);
	for (int i = 1; i < argc; i++) {
		FILE *f = fopen(argv[i], "rb");
		uint8_t *buf;
		long len;

		if (f == NULL || fseek(f, 0, SEEK_END) != 0 || (len = ftell(f)) < 0) {
			perror(argv[i]);
			return 1;
		}
		rewind(f);
		if ((buf = malloc((size_t)len + 1)) == NULL ||
		    fread(buf, 1, (size_t)len, f) != (size_t)len) {
			perror(argv[i]);
			return 1;
		}
		fclose(f);
		LLVMFuzzerTestOneInput(buf, (size_t)len);
		free(buf);
	}
	arena_free(&a);
	return 0;
}
#endif
