/*
 * A bill import's document: the signed upload target and the signed
 * source document URL (imports_api.h). A FastCGI worker never reads a
 * document: nginx writes the PUT body into a file under <data_dir>/imports/
 * (client_body_in_file_only; nginx/bds-app.conf) and passes its path, the
 * app checks the URL, the import and the file's size (stat) and renames
 * the file to <its directory>/<import id>; downloads are nginx's too
 * (X-Accel-Redirect to /_imports/, nginx/bds-api-host.conf).
 *
 * Both URLs are signed as core/urlsign.h says, each with its own purpose,
 * so an upload URL never opens a document nor the reverse.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/arena.h"
#include "core/clock.h"
#include "core/config.h"
#include "core/crypto.h"
#include "core/errors.h"
#include "core/json.h"
#include "core/log.h"
#include "core/req.h"
#include "core/urlsign.h"
#include "core/validate.h"
#include "imports/imports.h"
#include "imports/imports_api.h"
#include "imports/imports_int.h"

#define UPLOAD_URL	"bds import upload url v1"
#define DOCUMENT_URL	"bds import document url v1"

/* Lenient on purpose: the handler runs for every signed-looking request
 * and unlinks the file nginx wrote; what does not parse is a bad signature. */
const struct vfield imports_upload_query[] = {
	{ "expires", NULL, VT_STRING, 0, 1, 20 },
	{ "sig", NULL, VT_STRING, 0, 1, 128 },
	{ NULL }
};

const struct vfield imports_document_query[] = {
	{ "expires", NULL, VT_INT, V_REQUIRED, 1, 0 },
	{ "sig", NULL, VT_STRING, V_REQUIRED, 1, 128 },
	{ NULL }
};

const char *
imports_upload_url(struct req *r, const char *id, long long expires)
{
	return arena_printf(r->arena, "%s/v1/bill_imports/%s/upload?expires=%lld&sig=%s",
	    urlsign_base(r), id, expires, urlsign_sig(r, UPLOAD_URL, id, r->client_id,
	    urlsign_host(r), expires));
}

static int
bad_sig(struct req *r, const char *hint)
{
	return api_error(r, 403, ERR_INVALID_SIGNATURE, hint, "the URL's signature is not valid");
}

static int
expired(struct req *r, const char *hint)
{
	return api_error(r, 403, ERR_URL_EXPIRED, hint, "the URL expired");
}

#define UPLOAD_HINT	"create a new import with POST /v1/bill_imports"
#define DOCUMENT_HINT	"ask GET /v1/bill_imports/{id}/source_document for a new URL"

/* The import a signed URL of purpose names, checked: 0 with *w, or the
 * status written. */
static int
signed_or_reply(struct req *r, const char *purpose, const char *sig, long long expires,
    int lock, struct imports_rec *w)
{
	const char *id = req_cap(r, "id"), *hint;

	hint = strcmp(purpose, UPLOAD_URL) == 0 ? UPLOAD_HINT : DOCUMENT_HINT;
	if (!crypto_id_valid(id, "bimp", 0))
		return bad_sig(r, hint);
	switch (imports_read(r, NULL, id, lock, w)) {
	case 1:
		break;
	case 0:
		return bad_sig(r, hint);
	default:
		return api_db_error(r);
	}
	switch (urlsign_check(r, purpose, id, w->row.client_id, sig, expires)) {
	case URLSIGN_OK:
		return 0;
	case URLSIGN_EXPIRED:
		return expired(r, hint);
	default:
		return bad_sig(r, hint);
	}
}

/* The upload's checks and record; file is nginx's, below imports/, or NULL
 * (no body). */
static int
upload(struct req *r, struct json_object *out, const char *file)
{
	const char *e = json_get_str(r->query, "expires"), *dst, *slash;
	long long expires;
	struct imports_rec w;
	struct stat st;
	char *end;
	int rc;

	expires = e != NULL ? strtoll(e, &end, 10) : 0;
	if (e == NULL || *end != '\0' || expires <= 0)
		return bad_sig(r, UPLOAD_HINT);
	if ((rc = signed_or_reply(r, UPLOAD_URL, json_get_str(r->query, "sig"), expires, 1,
	    &w)) != 0)
		return rc;
	if (w.row.document_path != NULL)
		return api_error(r, 409, ERR_UPLOAD_ALREADY_RECEIVED, NULL,
		    "bill import %s already has its document", w.row.id);
	if (strcmp(w.row.status, "AWAITING_UPLOAD") != 0)
		return api_error(r, 409, ERR_BILL_IMPORT_STATE_CONFLICT, UPLOAD_HINT,
		    "bill import %s is %s: it takes no upload", w.row.id, w.row.status);
	if (file == NULL || lstat(file, &st) != 0 || !S_ISREG(st.st_mode) ||
	    (long long)st.st_size != w.row.size_bytes)
		return api_error(r, 400, ERR_UPLOAD_SIZE_MISMATCH, NULL,
		    "the document has %lld bytes; the import declared size_bytes %lld",
		    file != NULL && S_ISREG(st.st_mode) ? (long long)st.st_size : 0LL,
		    w.row.size_bytes);
	/* the stable name: the import's id, in the directory nginx chose */
	slash = strrchr(file, '/');
	dst = arena_printf(r->arena, "%.*s/%s", (int)(slash - file), file, w.row.id);
	switch (imports_uploaded(r, w.row.client_id, w.row.id, dst)) {
	case 1:
		break;
	case 0:
		return api_error(r, 409, ERR_UPLOAD_ALREADY_RECEIVED, NULL,
		    "bill import %s already has its document", w.row.id);
	default:
		return api_db_error(r);
	}
	if (rename(file, dst) != 0) {
		log_msg("error", "bill import %s: rename of the upload: %s", w.row.id,
		    strerror(errno));
		return api_error(r, 500, ERR_INTERNAL_ERROR, NULL, "the document was not stored");
	}
	json_set_str(out, "id", w.row.id);
	json_set_str(out, "object", "bill_import");
	json_set_str(out, "status", w.row.status);
	json_set_int(out, "size_bytes", w.row.size_bytes);
	return 200;
}

int
imports_upload(struct req *r, struct json_object *out)
{
	const char *file = r->http.upload_file;
	int rc;

	if (file != NULL && imports_path_below(r->cfg, r->arena, file) == NULL) {
		log_msg("error", "bill import upload: a body file outside %s/imports", r->cfg->data_dir);
		file = NULL;	/* never touched */
	}
	rc = upload(r, out, file);
	if (rc != 200 && file != NULL && unlink(file) != 0 && errno != ENOENT)
		log_msg("error", "bill import upload: unlink: %s", strerror(errno));
	return rc;
}

int
imports_source_document(struct req *r, struct json_object *out)
{
	long long expires = (long long)time(NULL) +
	    imports_settings(r->cfg)->imports_document_url_ttl;
	char iso[TIME_ISO_SIZE];
	struct imports_rec w;
	int rc;

	if ((rc = imports_or_reply(r, r->http.client_user_id, 0, &w)) != 0)
		return rc;
	if (w.row.document_path == NULL || w.document_deleted)
		return api_error(r, 404, ERR_SOURCE_DOCUMENT_NOT_FOUND, NULL,
		    "bill import %s has no document", w.row.id);
	json_set_str(out, "url", arena_printf(r->arena,
	    "%s/v1/bill_imports/%s/source_document/content?expires=%lld&sig=%s",
	    urlsign_base(r), w.row.id, expires, urlsign_sig(r, DOCUMENT_URL, w.row.id,
	    r->client_id, urlsign_host(r), expires)));
	json_set_str(out, "expires_at", time_iso(iso, (int64_t)expires * 1000));
	return 200;
}

int
imports_document_download(struct req *r, struct json_object *out)
{
	const char *rel;
	struct imports_rec w;
	int rc;

	(void)out;
	if ((rc = signed_or_reply(r, DOCUMENT_URL, json_get_str(r->query, "sig"),
	    json_get_int(r->query, "expires", 0), 0, &w)) != 0)
		return rc;
	if (w.document_deleted || (rel = imports_path_below(r->cfg, r->arena, w.row.document_path)) == NULL)
		return api_error(r, 404, ERR_SOURCE_DOCUMENT_NOT_FOUND, NULL,
		    "bill import %s has no document", w.row.id);
	/* nginx serves the file from its internal location; no body here */
	req_header_add(r, "X-Accel-Redirect", arena_printf(r->arena, "/_imports/%s", rel));
	req_header_add(r, "Content-Type", w.row.content_type);
	req_header_add(r, "Content-Disposition", arena_printf(r->arena,
	    "attachment; filename=\"%s\"", http_safe_filename(r->arena, w.row.file_name,
	    w.row.id)));
	req_header_add(r, "Cache-Control", "private, no-store");
	r->out = NULL;
	return 200;
}
