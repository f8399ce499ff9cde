/*
 * The rows of bill imports: one read (imports_get) and the one write of a
 * status (imports_move), which bumps lifecycle_version and emits
 * bill_import.updated in the caller's transaction; and the record the API
 * shows of a row.
 */
#include <stdlib.h>
#include <string.h>

#include "core/arena.h"
#include "core/config.h"
#include "core/db.h"
#include "core/json.h"
#include "core/req.h"
#include "core/validate.h"
#include "events/events.h"
#include "imports/imports.h"
#include "imports/imports_changes.h"
#include "imports/imports_int.h"

/* A row as every statement returns it. */
#define COLS \
	"client_id, id, environment, client_user_id, source, biller_id, link_id, account_id," \
	" statement_ref, file_name, content_type, status, size_bytes, lifecycle_version," \
	" draft_version, document_path, document_sha256, draft::text, duplicate_of," \
	" rejection_reason, committed_bill_id, " DB_ISO("expires_at") ", " \
	DB_ISO("created_at") ", " DB_ISO("updated_at") ", " DB_ISO("upload_expires_at") ", " \
	DB_ISO("uploaded_at") ", extract(epoch FROM upload_expires_at)::bigint," \
	" document_deleted_at IS NOT NULL"
enum imports_col {
	C_CLIENT, C_ID, C_ENV, C_USER, C_SOURCE, C_BILLER, C_LINK, C_ACCOUNT, C_REF,
	C_FILE, C_TYPE, C_STATUS, C_SIZE, C_LIFECYCLE, C_DRAFT_VERSION, C_PATH, C_SHA,
	C_DRAFT, C_DUPLICATE, C_REJECTION, C_BILL, C_EXPIRES, C_CREATED, C_UPDATED,
	C_UPLOAD_EXPIRES, C_UPLOADED, C_UPLOAD_EPOCH, C_DELETED, C__MAX
};

enum imports_store_stmt {
	IS_GET, IS_GET_LOCK, IS_GET_ANY, IS_GET_ANY_LOCK, IS_INSERT, IS_UPLOADED, IS_MOVE, IS__MAX
};

static struct db_stmt stmts[IS__MAX] = {
	[IS_GET] = { "imports_get",
	    "SELECT " COLS " FROM bill_imports WHERE " DB_BY_ID("", ""), 0 },
	[IS_GET_LOCK] = { "imports_get_lock",
	    "SELECT " COLS " FROM bill_imports WHERE " DB_BY_ID("", "") " FOR UPDATE", 0 },
	/* a signed URL's import: by id alone, the signature names the client */
	[IS_GET_ANY] = { "imports_get_any",
	    "SELECT " COLS " FROM bill_imports WHERE id = $1", 0 },
	[IS_GET_ANY_LOCK] = { "imports_get_any_lock",
	    "SELECT " COLS " FROM bill_imports WHERE id = $1 FOR UPDATE", 0 },
	/* $9 the upload URL's expiry (epoch seconds), $10 the days to EXPIRED */
	[IS_INSERT] = { "imports_insert",
	    "INSERT INTO bill_imports (client_id, id, environment, client_user_id, biller_id,"
	    " file_name, content_type, size_bytes, upload_expires_at, expires_at)"
	    " VALUES ($1, $2, $3, $4, $5, $6, $7, $8::bigint, to_timestamp($9::bigint),"
	    "  now() + make_interval(days => $10::int))"
	    " RETURNING " COLS, 0 },
	/* the document nginx received, once: no status move, no event */
	[IS_UPLOADED] = { "imports_uploaded",
	    "UPDATE bill_imports SET document_path = $3, uploaded_at = now(), updated_at = now()"
	    " WHERE " DB_BY_ID("", " AND status = 'AWAITING_UPLOAD' AND document_path IS NULL"), 0 },
	/*
	 * $3 the status it leaves (NULL: any), $4 the one it takes; $5 a new
	 * draft (NULL: kept; else draft_version + 1), $6 the extraction's
	 * facts, $7 the document's hash, $8 duplicate_of, $9 rejection_reason,
	 * $10 committed_bill_id (each NULL: kept)
	 */
	[IS_MOVE] = { "imports_move",
	    "UPDATE bill_imports SET status = $4, lifecycle_version = lifecycle_version + 1,"
	    " draft = coalesce($5::jsonb, draft),"
	    " draft_version = draft_version + CASE WHEN $5::jsonb IS NULL THEN 0 ELSE 1 END,"
	    " extraction = coalesce($6::jsonb, extraction),"
	    " document_sha256 = coalesce($7, document_sha256),"
	    " duplicate_of = coalesce($8, duplicate_of),"
	    " rejection_reason = coalesce($9, rejection_reason),"
	    " committed_bill_id = coalesce($10, committed_bill_id),"
	    " committed_at = CASE WHEN $4 = 'COMMITTED' THEN now() ELSE committed_at END,"
	    " cancelled_at = CASE WHEN $4 = 'CANCELLED' THEN now() ELSE cancelled_at END,"
	    " updated_at = now()"
	    " WHERE " DB_BY_ID("", " AND ($3::text IS NULL OR status = $3::text)")
	    " RETURNING " COLS, 0 },
};

const struct db_stmt_set imports_store_stmt_set = { "imports_store", stmts, IS__MAX };

/* Row i of res into *w (arena strings). */
static void
rec_fill(struct req *r, PGresult *res, int i, struct imports_rec *w)
{
	const char *v[C__MAX], *why;

	for (int c = 0; c < C__MAX; c++)
		v[c] = PQgetisnull(res, i, c) ? NULL : arena_strdup(r->arena,
		    PQgetvalue(res, i, c));
	memset(w, 0, sizeof(*w));
	w->row.client_id = v[C_CLIENT];
	w->row.environment = v[C_ENV];
	w->row.id = v[C_ID];
	w->row.client_user_id = v[C_USER];
	w->row.source = v[C_SOURCE];
	w->row.biller_id = v[C_BILLER];
	w->row.link_id = v[C_LINK];
	w->row.account_id = v[C_ACCOUNT];
	w->row.statement_ref = v[C_REF];
	w->row.file_name = v[C_FILE];
	w->row.content_type = v[C_TYPE];
	w->row.status = v[C_STATUS];
	w->row.size_bytes = strtoll(v[C_SIZE], NULL, 10);
	w->row.lifecycle_version = atoi(v[C_LIFECYCLE]);
	w->row.draft_version = atoi(v[C_DRAFT_VERSION]);
	w->row.document_path = v[C_PATH];
	w->row.document_sha256 = v[C_SHA];
	w->row.draft = json_parse(r->arena, v[C_DRAFT], strlen(v[C_DRAFT]), &why);
	if (w->row.draft == NULL)
		w->row.draft = json_obj(r->arena);
	w->duplicate_of = v[C_DUPLICATE];
	w->rejection_reason = v[C_REJECTION];
	w->committed_bill_id = v[C_BILL];
	w->expires_at = v[C_EXPIRES];
	w->created_at = v[C_CREATED];
	w->updated_at = v[C_UPDATED];
	w->upload_expires_at = v[C_UPLOAD_EXPIRES];
	w->uploaded_at = v[C_UPLOADED];
	w->upload_expires = strtoll(v[C_UPLOAD_EPOCH], NULL, 10);
	w->document_deleted = strcmp(v[C_DELETED], "t") == 0;
}

int
imports_read(struct req *r, const char *client_id, const char *id, int lock,
    struct imports_rec *out)
{
	const char *p[2] = { client_id, id };
	PGresult *res;

	if (client_id == NULL)
		res = db_exec(r->db, r->arena, &stmts[lock ? IS_GET_ANY_LOCK : IS_GET_ANY], 1, &id);
	else
		res = db_exec(r->db, r->arena, &stmts[lock ? IS_GET_LOCK : IS_GET], 2, p);
	if (res == NULL)
		return -1;
	if (PQntuples(res) != 1)
		return 0;
	rec_fill(r, res, 0, out);
	return 1;
}

int
imports_insert(struct req *r, const struct imports_new *n, struct imports_rec *out)
{
	const char *p[10];
	PGresult *res;

	p[0] = r->client_id;
	p[1] = n->id;
	p[2] = r->env;
	p[3] = n->client_user_id;
	p[4] = n->biller_id;
	p[5] = n->file_name;
	p[6] = n->content_type;
	p[7] = arena_printf(r->arena, "%lld", n->size_bytes);
	p[8] = arena_printf(r->arena, "%lld", n->upload_expires);
	p[9] = arena_printf(r->arena, "%d", imports_settings(r->cfg)->imports_expiry_days);
	if ((res = db_exec(r->db, r->arena, &stmts[IS_INSERT], 10, p)) == NULL ||
	    PQntuples(res) != 1)
		return -1;
	rec_fill(r, res, 0, out);
	return 0;
}

int
imports_uploaded(struct req *r, const char *client_id, const char *id, const char *path)
{
	const char *p[3] = { client_id, id, path };
	long long n = db_exec_count(r->db, r->arena, &stmts[IS_UPLOADED], 3, p);

	return n < 0 ? -1 : n > 0;
}

const char *
imports_path_below(const struct config *cfg, struct arena *a, const char *path)
{
	const char *dir = arena_printf(a, "%s/imports/", cfg->data_dir);
	size_t n = strlen(dir);

	if (path == NULL || strncmp(path, dir, n) != 0 || path[n] == '\0' ||
	    strstr(path + n, "..") != NULL || strstr(path, "/./") != NULL ||
	    path[strlen(path) - 1] == '/')
		return NULL;
	return path + n;
}

int
imports_get(struct req *r, const char *client_id, const char *id, int lock,
    struct imports_row *out)
{
	struct imports_rec w;
	int rc;

	if ((rc = imports_read(r, client_id, id, lock, &w)) == 1)
		*out = w.row;
	return rc;
}

/* bill_import.updated for a moved row (contract: the spec's fields). */
static int
emit_updated(struct req *r, const struct imports_rec *w)
{
	struct json_object *o = json_obj(r->arena);

	json_set_str(o, "id", w->row.id);
	json_set_str(o, "object", "bill_import");
	json_set_str(o, "bill_import_id", w->row.id);
	json_set_str(o, "client_id", w->row.client_id);
	json_set_str(o, "client_user_id", w->row.client_user_id);
	json_set_str(o, "status", w->row.status);
	json_set_int(o, "lifecycle_version", w->row.lifecycle_version);
	json_set_str(o, "committed_bill_id", w->committed_bill_id);
	json_set_str(o, "updated_at", w->updated_at);
	return events_emit(r, w->row.client_id, w->row.environment, "bill_import.updated", o,
	    NULL) == NULL ? -1 : 0;
}

/* A JSON value's text for a jsonb parameter, or NULL. */
static const char *
jsonb(struct req *r, struct json_object *o)
{
	return o != NULL ? json_dump(r->arena, o, NULL) : NULL;
}

int
imports_move_rec(struct req *r, const char *client_id, const char *id, const char *from,
    const char *to, const struct imports_set *s, struct imports_rec *after)
{
	static const struct imports_set none;
	const char *p[10];
	struct imports_rec w;
	PGresult *res;

	if (s == NULL)
		s = &none;
	p[0] = client_id;
	p[1] = id;
	p[2] = from;
	p[3] = to;
	p[4] = jsonb(r, s->draft);
	p[5] = jsonb(r, s->extraction);
	p[6] = s->document_sha256;
	p[7] = s->duplicate_of;
	p[8] = s->rejection_reason;
	p[9] = s->committed_bill_id;
	if ((res = db_exec(r->db, r->arena, &stmts[IS_MOVE], 10, p)) == NULL)
		return -1;
	if (PQntuples(res) != 1)
		return 0;
	rec_fill(r, res, 0, &w);
	if (emit_updated(r, &w) != 0)
		return -1;
	if (after != NULL)
		*after = w;
	return 1;
}

int
imports_move(struct req *r, const char *client_id, const char *id, const char *from,
    const char *to, const struct imports_set *s)
{
	return imports_move_rec(r, client_id, id, from, to, s, NULL);
}

/* The deprecated amount_due, due_date and currency from the draft. */
static void
deprecated_fields(struct req *r, struct json_object *o, struct json_object *draft)
{
	struct json_object *total = imports_draft_value(draft, "total_amount", json_type_object);
	const char *amount = NULL, *currency = NULL;
	const char *due = imports_draft_str(draft, "due_date_iso");

	if (total != NULL) {
		amount = json_get_str(total, "value");
		currency = json_get_str(total, "currency");
	}
	if (currency == NULL)
		currency = imports_draft_str(draft, "currency");
	/* a decimal string is a JSON number as it stands: no float rounding */
	if (amount != NULL && validate_format(VF_MONEY, amount))
		json_set(o, "amount_due", json_object_get(json_raw(r->arena, amount,
		    strlen(amount))));
	else
		json_set_null(o, "amount_due");
	json_set_str(o, "due_date", due);
	json_set_str(o, "currency", currency);
}

struct json_object *
imports_entity(struct req *r, const struct imports_rec *w)
{
	struct json_object *o = json_obj(r->arena);

	json_set_str(o, "id", w->row.id);
	json_set_str(o, "object", "bill_import");
	json_set_str(o, "client_user_id", w->row.client_user_id);
	json_set_str(o, "status", w->row.status);
	json_set_int(o, "lifecycle_version", w->row.lifecycle_version);
	json_set_int(o, "draft_version", w->row.draft_version);
	json_set(o, "draft", json_object_get(w->row.draft));
	json_set_str(o, "duplicate_of", w->duplicate_of);
	json_set_str(o, "rejection_reason", w->rejection_reason);
	json_set_str(o, "committed_bill_id", w->committed_bill_id);
	json_set_str(o, "source", w->row.source);
	json_set_str(o, "biller_id", w->row.biller_id);
	json_set_str(o, "file_name", w->row.file_name);
	json_set_str(o, "content_type", w->row.content_type);
	json_set_int(o, "size_bytes", w->row.size_bytes);
	json_set_str(o, "uploaded_at", w->uploaded_at);
	deprecated_fields(r, o, w->row.draft);
	json_set_str(o, "expires_at", w->expires_at);
	json_set_str(o, "created_at", w->created_at);
	json_set_str(o, "updated_at", w->updated_at);
	return o;
}
