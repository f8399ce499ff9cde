/*
 * The bill import routes that a credential calls: create, complete_upload,
 * GET and DELETE (imports_api.h). Every status move is imports_move's.
 */
#include <string.h>
#include <time.h>

#include "billers/billers.h"
#include "core/arena.h"
#include "core/clock.h"
#include "core/crypto.h"
#include "core/errors.h"
#include "core/jobq.h"
#include "core/json.h"
#include "core/req.h"
#include "core/validate.h"
#include "imports/imports.h"
#include "imports/imports_api.h"
#include "imports/imports_int.h"

static const char *const content_types[] = { "application/pdf", "image/png", "image/jpeg",
	NULL };

/* file_name: a name people read (validate_name), and a name only: no path
 * separator, not "." or "..". */
static int
check_file_name(struct arena *a, struct json_object **v, const char **code, const char **msg)
{
	const char *s;

	if (validate_name(a, v, code, msg) != 0)
		return -1;
	s = json_object_get_string(*v);
	if (strpbrk(s, "/\\") == NULL && strcmp(s, ".") != 0 && strcmp(s, "..") != 0)
		return 0;
	*code = "invalid_file_name";
	*msg = "must be a file name without a path (no / or \\)";
	return -1;
}

const struct vfield imports_create_fields[] = {
	{ "client_user_id", NULL, VT_STRING, V_REQUIRED, 1, 255 },
	{ "file_name", NULL, VT_STRING, V_REQUIRED, 1, 255, .check = check_file_name },
	{ "content_type", NULL, VT_STRING, V_REQUIRED, 0, 0, content_types },
	{ "size_bytes", NULL, VT_INT, V_REQUIRED, 1, IMPORTS_DOC_MAX },
	{ "biller_id", NULL, VT_STRING, 0, 1, 64 },
	{ NULL }
};

const struct vfield imports_complete_fields[] = {
	{ "client_user_id", NULL, VT_STRING, 0, 1, 255 },
	{ NULL }
};

static int
not_found(struct req *r, const char *id)
{
	return api_error(r, 404, ERR_BILL_IMPORT_NOT_FOUND, NULL, "no bill import %s", id);
}

int
imports_or_reply(struct req *r, const char *client_user_id, int lock, struct imports_rec *w)
{
	const char *id = req_cap(r, "id");

	if (!crypto_id_valid(id, "bimp", 0))
		return not_found(r, id);
	switch (imports_read(r, r->client_id, id, lock, w)) {
	case 1:
		break;
	case 0:
		return not_found(r, id);
	default:
		return api_db_error(r);
	}
	if (strcmp(w->row.environment, r->env) != 0 ||
	    (client_user_id != NULL && strcmp(w->row.client_user_id, client_user_id) != 0))
		return not_found(r, id);
	return 0;
}

/* The record and the answer's status. */
static int
answer(struct req *r, struct json_object *out, const struct imports_rec *w, int status)
{
	json_merge(out, imports_entity(r, w));
	return status;
}

/* biller_id: a biller of the catalog the key's environment sees. */
static int
biller_or_reply(struct req *r, const char *id)
{
	switch (billers_linkable(r, r->env, id)) {
	case BILLERS_LINK_OK:
	case BILLERS_LINK_UNSUPPORTED:	/* a payee still, if no longer linkable */
		return 0;
	case BILLERS_LINK_FAILED:
		return api_db_error(r);
	default:
		return api_error(r, 404, ERR_BILLER_NOT_FOUND, NULL, "no biller %s", id);
	}
}

int
imports_create(struct req *r, struct json_object *out)
{
	struct json_object *b = r->body, *up, *h;
	struct imports_new n;
	struct imports_rec w;
	char iso[TIME_ISO_SIZE];
	int rc;

	n.id = crypto_id_new(r->arena, "bimp");
	n.client_user_id = json_get_str(b, "client_user_id");
	n.biller_id = json_get_str(b, "biller_id");
	n.file_name = json_get_str(b, "file_name");
	n.content_type = json_get_str(b, "content_type");
	n.size_bytes = json_get_int(b, "size_bytes", 0);
	n.upload_expires = (long long)time(NULL) + imports_settings(r->cfg)->imports_upload_ttl;
	if (n.biller_id != NULL && (rc = biller_or_reply(r, n.biller_id)) != 0)
		return rc;
	if (imports_insert(r, &n, &w) != 0)
		return api_db_error(r);
	up = json_obj(r->arena);
	json_set_str(up, "url", imports_upload_url(r, n.id, n.upload_expires));
	json_set_str(up, "method", "PUT");
	h = json_obj(r->arena);
	json_set_str(h, "Content-Type", n.content_type);
	json_set(up, "headers", json_object_get(h));
	json_set_str(up, "expires_at", time_iso(iso, (int64_t)n.upload_expires * 1000));
	rc = answer(r, out, &w, 201);
	json_set(out, "upload", json_object_get(up));
	return rc;
}

/* The import is CANCELLED, EXPIRED or COMMITTED: nothing more moves it. */
static int
is_final(const char *status)
{
	return strcmp(status, "CANCELLED") == 0 || strcmp(status, "EXPIRED") == 0 ||
	    strcmp(status, "COMMITTED") == 0;
}

static int
state_conflict(struct req *r, const struct imports_rec *w, const char *what)
{
	return api_error(r, 409, ERR_BILL_IMPORT_STATE_CONFLICT, NULL,
	    "bill import %s is %s: it cannot %s", w->row.id, w->row.status, what);
}

int
imports_complete_upload(struct req *r, struct json_object *out)
{
	const char *user = json_get_str(r->body, "client_user_id");
	struct imports_rec w;
	int rc;

	if (user == NULL)
		user = r->http.client_user_id;
	if ((rc = imports_or_reply(r, user, 1, &w)) != 0)
		return rc;
	if (strcmp(w.row.status, "AWAITING_UPLOAD") != 0) {
		/* a retry after the answer was lost: the same answer */
		if (strcmp(w.row.status, "COMMITTED") == 0 || !is_final(w.row.status))
			return answer(r, out, &w, 202);
		return state_conflict(r, &w, "be processed");
	}
	if (w.row.document_path == NULL)
		return api_error(r, 409, ERR_UPLOAD_NOT_RECEIVED, NULL,
		    "bill import %s has no document yet", w.row.id);
	if (imports_move_rec(r, r->client_id, w.row.id, "AWAITING_UPLOAD", "PROCESSING", NULL,
	    &w) != 1 ||
	    jobq_add(r, IMPORTS_JOB_EXTRACT, r->client_id, r->env, w.row.id, NULL, 0) != 0)
		return api_db_error(r);
	return answer(r, out, &w, 202);
}

int
imports_get_route(struct req *r, struct json_object *out)
{
	struct imports_rec w;
	int rc;

	if ((rc = imports_or_reply(r, r->http.client_user_id, 0, &w)) != 0)
		return rc;
	return answer(r, out, &w, 200);
}

int
imports_cancel(struct req *r, struct json_object *out)
{
	struct imports_rec w;
	int rc;

	if ((rc = imports_or_reply(r, r->http.client_user_id, 1, &w)) != 0)
		return rc;
	if (strcmp(w.row.status, "CANCELLED") == 0)
		return answer(r, out, &w, 200);
	if (is_final(w.row.status))
		return state_conflict(r, &w, "be cancelled");
	if (imports_move_rec(r, r->client_id, w.row.id, w.row.status, "CANCELLED", NULL, &w) != 1)
		return api_db_error(r);
	return answer(r, out, &w, 200);
}
