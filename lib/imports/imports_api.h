#ifndef BDS_IMPORTS_API_H
#define BDS_IMPORTS_API_H
/*
 * The bill import routes (lib/routes.c): create, complete_upload, GET,
 * DELETE (imports_api.c); the signed upload target and the source
 * document (imports_upload.c). Each answers the record of imports_entity.
 */
#include "core/validate.h"

struct json_object;
struct req;

#define IMPORTS_DOC_MAX		(20LL << 20)	/* 20 MiB: size_bytes' ceiling */

/*
 * POST /v1/bill_imports (API key, Idempotency-Key required): 201 the
 * record, AWAITING_UPLOAD, and upload {url, method "PUT", headers
 * {Content-Type}, expires_at}, a signed URL on the host the call came to,
 * valid imports_upload_ttl seconds. 404 BILLER_NOT_FOUND when biller_id is
 * not in the catalog of the key's environment.
 */
int	 imports_create(struct req *, struct json_object *);
extern const struct vfield imports_create_fields[];
/*
 * POST /v1/bill_imports/{id}/complete_upload {client_user_id?}: 202 the
 * record, PROCESSING, its extraction queued; an import already past it
 * answers 202 as it stands (nothing queued again). 409
 * UPLOAD_NOT_RECEIVED before the upload, 409 BILL_IMPORT_STATE_CONFLICT
 * when CANCELLED or EXPIRED; 404 BILL_IMPORT_NOT_FOUND (also another end
 * user's when client_user_id or x-client-user-id names one).
 */
int	 imports_complete_upload(struct req *, struct json_object *);
extern const struct vfield imports_complete_fields[];
/* GET /v1/bill_imports/{id} (x-client-user-id): 200 the record; 404. */
int	 imports_get_route(struct req *, struct json_object *);
/*
 * DELETE /v1/bill_imports/{id} (x-client-user-id): 200 the record,
 * CANCELLED (again: as it stands); 409 BILL_IMPORT_STATE_CONFLICT when
 * COMMITTED or EXPIRED; 404. The document is deleted by the sweep.
 */
int	 imports_cancel(struct req *, struct json_object *);

/*
 * PUT /v1/bill_imports/{id}/upload?expires=&sig= (no credential: the
 * signature is one). nginx wrote the body into a file under
 * <data_dir>/imports/ (BDS_UPLOAD_FILE); the body never reaches the app.
 * 200 {id, object, status, size_bytes} with the file renamed
 * to its stable name beside it and recorded; 403 INVALID_SIGNATURE, 403
 * URL_EXPIRED, 409 UPLOAD_ALREADY_RECEIVED, 409 BILL_IMPORT_STATE_CONFLICT,
 * 400 UPLOAD_SIZE_MISMATCH. Every refusal unlinks the file.
 */
int	 imports_upload(struct req *, struct json_object *);
extern const struct vfield imports_upload_query[];
/*
 * GET /v1/bill_imports/{id}/source_document (x-client-user-id): 200 {url,
 * expires_at}, a signed URL of the document valid imports_document_url_ttl
 * seconds; 404 SOURCE_DOCUMENT_NOT_FOUND (not uploaded, or deleted).
 */
int	 imports_source_document(struct req *, struct json_object *);
/*
 * GET /v1/bill_imports/{id}/source_document/content?expires=&sig= (no
 * credential): 200 with no body and X-Accel-Redirect to the internal
 * location /_imports/ (nginx serves the file), Content-Type the import's;
 * 403 INVALID_SIGNATURE, 403 URL_EXPIRED, 404 SOURCE_DOCUMENT_NOT_FOUND.
 */
int	 imports_document_download(struct req *, struct json_object *);
extern const struct vfield imports_document_query[];

#endif
