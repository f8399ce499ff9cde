#ifndef BDS_ERRORS_H
#define BDS_ERRORS_H
/*
 * The one error path. Every failure becomes one of the spec's envelopes:
 *   coded: error_code, error_message, hint, docs_url, request_id
 *   iam:   success:false, message, statusCode, errors, plus error_code and
 *          request_id (and the coded fields, so readers of either work)
 * Handlers `return api_error(r, 404, ERR_LINK_NOT_FOUND, NULL, "no link %s", id);`
 * Every code is an ERR_<CODE> constant from the one catalogue,
 * lib/core/errcodes.txt (core/errcodes.h is generated from it); the
 * message says what is wrong, the hint what to do (NULL: the catalogue's fix).
 */
#include <stddef.h>

#include "core/errcodes.h"

struct req;
struct verrs;
struct arena;
struct json_object;

/* Fill r's response with the envelope; returns status for `return`. A NULL
 * hint sends the catalogue's fix for the code (errors_fix). */
int	 api_error(struct req *, int status, const char *code, const char *hint,
	    const char *fmt, ...) __attribute__((format(printf, 5, 6)));
/* 400 VALIDATION_ERROR with errors[] {field, code, message}. */
int	 api_verror(struct req *, const struct verrs *);
/* The same list under another status and code (e.g. PREREQUISITES_NOT_MET). */
int	 api_verror_as(struct req *, int status, const char *code, const struct verrs *);
/* An error naming one field: errors[] = [{field, code: field_code, message}]. */
int	 api_field_error(struct req *, int status, const char *code,
	    const char *field, const char *field_code, const char *message);
/* A failed database call: 503 SERVICE_UNAVAILABLE when the database is
 * away, else 500 INTERNAL_ERROR. Detail goes to the log only. */
int	 api_db_error(struct req *);

/*
 * Build an envelope object (owned by the caller's arena). errors may be NULL.
 * docs_url is "<docs_base>/errors#<code>"; docs_base has no trailing slash.
 */
/* 1 when path is under /v1/iam (the /v1/iam envelope): the one test, used
 * before routing and for paths no route matches. */
int	 errors_iam_path(const char *path);

struct json_object *errors_envelope(struct arena *, int iam, int status,
	    const char *code, const char *message, const char *hint,
	    const char *docs_base, const char *request_id, struct json_object *errors);

/* The default code for a status with no more specific one (404 NOT_FOUND...). */
const char *errors_default_code(int status);

/* The catalogue's fix for code (static text), or NULL for a code it lacks. */
const char *errors_fix(const char *code);

#endif
