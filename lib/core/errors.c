/* The one error path: both of the spec's envelopes from one function. */
#include <stdarg.h>
#include <string.h>

#include "core/arena.h"
#include "core/config.h"
#include "core/db.h"
#include "core/errors.h"
#include "core/json.h"
#include "core/log.h"
#include "core/req.h"
#include "core/validate.h"

const char *
errors_default_code(int status)
{
	switch (status) {
	case 400: return ERR_VALIDATION_ERROR;
	case 401: return ERR_UNAUTHORIZED;
	case 403: return ERR_FORBIDDEN;
	case 404: return ERR_NOT_FOUND;
	case 405: return ERR_METHOD_NOT_ALLOWED;
	case 409: return ERR_CONFLICT;
	case 413: return ERR_PAYLOAD_TOO_LARGE;
	case 415: return ERR_UNSUPPORTED_MEDIA_TYPE;
	case 429: return ERR_RATE_LIMITED;
	case 501: return ERR_NOT_IMPLEMENTED;
	case 503: return ERR_SERVICE_UNAVAILABLE;
	default: return status >= 500 ? ERR_INTERNAL_ERROR : ERR_BAD_REQUEST;
	}
}

/* The catalogue (lib/core/errcodes.txt), sorted by code. */
static const struct {
	const char	*code;
	const char	*fix;
} catalogue[] = {
#define ERRCODE_ROW(code, status, meaning, fix)	{ code, fix },
	ERRCODES(ERRCODE_ROW)
#undef ERRCODE_ROW
};

const char *
errors_fix(const char *code)
{
	size_t lo = 0, hi = sizeof(catalogue) / sizeof(catalogue[0]);

	while (code != NULL && lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(code, catalogue[mid].code);

		if (c == 0)
			return catalogue[mid].fix;
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return NULL;
}

struct json_object *
errors_envelope(struct arena *a, int iam, int status, const char *code,
    const char *message, const char *hint, const char *docs_base,
    const char *request_id, struct json_object *errors)
{
	struct json_object *o = json_obj(a);

	if (code == NULL)
		code = errors_default_code(status);
	if (iam) {
		json_set_bool(o, "success", 0);
		json_set_str(o, "message", message);
		json_set_int(o, "statusCode", status);
		json_set(o, "errors", errors ? json_object_get(errors) :
		    json_object_new_array());
	} else if (errors != NULL) {
		json_set(o, "errors", json_object_get(errors));
	}
	json_set_str(o, "error_code", code);
	json_set_str(o, "error_message", message);
	json_set_str(o, "hint", hint);
	json_set(o, "docs_url", json_object_new_string(
	    arena_printf(a, "%s/errors#%s", docs_base ? docs_base : "", code)));
	json_set_str(o, "request_id", request_id);
	return o;
}

static int
api_error_obj(struct req *r, int status, const char *code, const char *hint,
    const char *msg, struct json_object *errors)
{
	r->status = status;
	r->error_code = code ? code : errors_default_code(status);
	r->out = errors_envelope(r->arena, r->iam, status, r->error_code, msg,
	    hint ? hint : errors_fix(r->error_code), r->cfg ? r->cfg->docs_url : NULL,
	    r->http.request_id, errors);
	return status;
}

int
api_error(struct req *r, int status, const char *code, const char *hint,
    const char *fmt, ...)
{
	va_list ap;
	char *msg;

	va_start(ap, fmt);
	msg = arena_vprintf(r->arena, fmt, ap);
	va_end(ap);
	return api_error_obj(r, status, code, hint, msg, NULL);
}

int
api_verror(struct req *r, const struct verrs *e)
{
	return api_verror_as(r, 400, ERR_VALIDATION_ERROR, e);
}

int
api_verror_as(struct req *r, int status, const char *code, const struct verrs *e)
{
	struct json_object *arr = json_arr(r->arena);
	const char *msg = "invalid request";

	for (size_t i = 0; i < e->n; i++) {
		struct json_object *it = json_object_new_object();

		json_set_str(it, "field", e->v[i].field);
		json_set_str(it, "code", e->v[i].code);
		json_set_str(it, "message", e->v[i].message);
		json_object_array_add(arr, it);
	}
	if (e->n > 0)
		msg = e->v[0].field && *e->v[0].field ?
		    arena_printf(r->arena, "%s: %s", e->v[0].field, e->v[0].message) :
		    e->v[0].message;
	/* an unknown name: the hint names the closest known one */
	return api_error_obj(r, status, code, e->hint, msg, arr);
}

int
api_field_error(struct req *r, int status, const char *code, const char *field,
    const char *field_code, const char *message)
{
	struct json_object *arr = json_arr(r->arena), *it = json_object_new_object();

	json_set_str(it, "field", field);
	json_set_str(it, "code", field_code);
	json_set_str(it, "message", message);
	json_object_array_add(arr, it);
	return api_error_obj(r, status, code, NULL, message, arr);
}

int
api_db_error(struct req *r)
{
	if (r->key_revoked)	/* not the database's fault: dispatch answers 401 */
		return api_error(r, 401, ERR_UNAUTHORIZED, NULL, "missing or invalid credentials");
	if (db_last_fail(r->db) == DB_UNAVAILABLE) {
		req_header_add(r, "Retry-After", "1");
		return api_error(r, 503, ERR_SERVICE_UNAVAILABLE, "retry shortly",
		    "the database is unavailable");
	}
	/* lock_not_available (lock_timeout) or a deadlock: a job or another
	 * request holds the row; nothing was changed */
	if (strcmp(db_sqlstate(r->db), "55P03") == 0 ||
	    strcmp(db_sqlstate(r->db), "40P01") == 0) {
		req_header_add(r, "Retry-After", "1");
		return api_error(r, 409, ERR_LOCK_TIMEOUT, "retry the request in a second",
		    "another request or a background job is changing this object right now");
	}
	log_msg("error", "request %s: database error %s: %s", r->http.request_id,
	    db_sqlstate(r->db), db_errmsg(r->db));
	return api_error(r, 500, ERR_INTERNAL_ERROR, NULL, "internal error");
}

int
errors_iam_path(const char *path)
{
	return path != NULL && strncmp(path, "/v1/iam", 7) == 0 &&
	    (path[7] == '\0' || path[7] == '/');
}
