/*
 * /v1/iam/clients: a developer's clients (applications) and the public
 * embed-origins lookup. Every query filters by the signed-in developer, so
 * another developer's client id finds nothing and answers 404.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/arena.h"
#include "core/config.h"
#include "iam/iam.h"
#include "iam/iam_clients.h"
#include "core/crypto.h"
#include "core/db.h"
#include "core/errors.h"
#include "core/json.h"
#include "core/req.h"
#include "core/validate.h"

#define CLIENTS_URI_MAX		2048	/* characters in one redirect URI */
#define CLIENTS_ORIGIN_MAX	512	/* characters in one origin */
#define CLIENTS_LIST_MAX	20	/* redirect URIs, allowed origins */

#define CLIENT_COLS "id, name, description, redirect_uris::text, allowed_origins::text," \
	" user_id, " DB_ISO("created_at") ", " DB_ISO("updated_at")
enum client_col {
	CC_ID, CC_NAME, CC_DESCRIPTION, CC_REDIRECT_URIS, CC_ALLOWED_ORIGINS,
	CC_USER_ID, CC_CREATED_AT, CC_UPDATED_AT, CC__MAX
};
/* iam_clients_embed */
enum { CE_ORIGINS, CE_PCI_APPROVED, CE__MAX };
/* iam_clients_count */
enum { CN_COUNT, CN__MAX };

enum {
	CL_LIST,
	CL_NEW,
	CL_GET,
	CL_UPDATE,
	CL_DELETE,
	CL_OWNED,
	CL_EMBED,
	CL_COUNT,
	CL_NEW_UNOWNED,
	CL_ADOPT,
	CL_REMOVE,
	CL__MAX
};
static struct db_stmt stmts[CL__MAX] = {
	[CL_LIST] = { "iam_clients_list",
	    "SELECT " CLIENT_COLS " FROM clients WHERE user_id = $1"
	    " ORDER BY created_at DESC, id DESC" },
	[CL_NEW] = { "iam_clients_new",
	    "INSERT INTO clients (id, user_id, name, description, redirect_uris,"
	    " allowed_origins) VALUES ($1, $2, $3, $4, $5::jsonb, $6::jsonb)"
	    " RETURNING " CLIENT_COLS },
	[CL_GET] = { "iam_clients_get",
	    "SELECT " CLIENT_COLS " FROM clients WHERE id = $1 AND user_id = $2" },
	/* NULL leaves a field as it is; $4 says whether description was sent
	 * (null clears it). */
	[CL_UPDATE] = { "iam_clients_update",
	    "UPDATE clients SET name = coalesce($3, name),"
	    " description = CASE WHEN $4::bool THEN $5 ELSE description END,"
	    " redirect_uris = coalesce($6::jsonb, redirect_uris),"
	    " allowed_origins = coalesce($7::jsonb, allowed_origins),"
	    " updated_at = now()"
	    " WHERE id = $1 AND user_id = $2 RETURNING " CLIENT_COLS },
	/* Secrets (and webhooks) go with it: ON DELETE CASCADE. */
	[CL_DELETE] = { "iam_clients_delete",
	    "DELETE FROM clients WHERE id = $1 AND user_id = $2 RETURNING id" },
	[CL_OWNED] = { "iam_clients_owned",
	    "SELECT 1 FROM clients WHERE id = $1 AND user_id = $2" },
	[CL_EMBED] = { "iam_clients_embed",
	    "SELECT allowed_origins::text, pci_approved FROM clients WHERE id = $1" },
	/* The developer's row is locked so that parallel creates count in
	 * turn and the cap holds (ROUTE_TX keeps the lock to the insert). */
	[CL_COUNT] = { "iam_clients_count",
	    "SELECT (SELECT count(*) FROM clients WHERE user_id = $1)"
	    " FROM users WHERE id = $1 FOR UPDATE" },
	/* An anonymous sandbox's client: no developer until it is claimed. */
	[CL_NEW_UNOWNED] = { "iam_clients_new_unowned",
	    "INSERT INTO clients (id, user_id, name) VALUES ($1, NULL, $2) RETURNING id" },
	[CL_ADOPT] = { "iam_clients_adopt",
	    "UPDATE clients SET user_id = $2, updated_at = now()"
	    " WHERE id = $1 AND user_id IS NULL RETURNING id" },
	/* Its secrets, webhooks, links, bills, events... go with it (ON
	 * DELETE CASCADE); an owned client is never removed here. */
	[CL_REMOVE] = { "iam_clients_remove",
	    "DELETE FROM clients WHERE id = $1 AND user_id IS NULL RETURNING id" },
};
const struct db_stmt_set iam_clients_stmt_set = { "iam_clients", stmts, CL__MAX };

/* ---- input ---- */

/* The host of an absolute http(s) URL that passed VF_URL, lower-cased. */
static char *
url_host(struct arena *a, const char *url)
{
	const char *h = strstr(url, "://") + 3;
	size_t n = h[0] == '[' ? strcspn(h, "]") + 1 : strcspn(h, ":/?#");
	char *s = arena_strndup(a, h, n);

	for (char *p = s; *p; p++)
		*p = (char)tolower((unsigned char)*p);
	return s;
}

/* http is for a developer's own machine only. */
static int
scheme_allowed(struct arena *a, const char *url)
{
	const char *host;

	if (strncasecmp(url, "https://", 8) == 0)
		return 1;
	host = url_host(a, url);
	return strcmp(host, "localhost") == 0 || strcmp(host, "127.0.0.1") == 0 ||
	    strcmp(host, "[::1]") == 0;
}

/* A redirect URI: absolute (VF_URL ran first), https or local http, no
 * fragment (RFC 6749 3.1.2). */
static int
check_redirect_uri(struct arena *a, struct json_object **v, const char **code,
    const char **msg)
{
	const char *s = json_object_get_string(*v);

	*code = "invalid_url";
	if (strlen(s) > CLIENTS_URI_MAX)
		*msg = "must be at most 2048 characters";
	else if (strchr(s, '#') != NULL)
		*msg = "must not have a fragment (#)";
	else if (!scheme_allowed(a, s))
		*msg = "must use https (http only for localhost or 127.0.0.1)";
	else
		return 0;
	return -1;
}

/*
 * An origin: scheme://host[:port] and nothing else (a lone trailing "/" is
 * dropped). Stored as a browser sends it in Origin: lower case, without
 * the scheme's default port.
 */
static int
check_origin(struct arena *a, struct json_object **v, const char **code,
    const char **msg)
{
	const char *s = json_object_get_string(*v), *auth;
	size_t n = strlen(s), alen;
	char *o;

	*code = "invalid_origin";
	if (n > CLIENTS_ORIGIN_MAX) {
		*msg = "must be at most 512 characters";
		return -1;
	}
	if (!scheme_allowed(a, s)) {
		*msg = "must use https (http only for localhost or 127.0.0.1)";
		return -1;
	}
	auth = strstr(s, "://") + 3;
	alen = strcspn(auth, "/?#");
	if (auth[alen] != '\0' && strcmp(auth + alen, "/") != 0) {
		*msg = "must be an origin: scheme://host[:port] without a path, query or fragment";
		return -1;
	}
	o = arena_strndup(a, s, (size_t)(auth - s) + alen);
	for (char *p = o; *p; p++)
		*p = (char)tolower((unsigned char)*p);
	n = strlen(o);
	if (strncmp(o, "https://", 8) == 0 && n > 4 && strcmp(o + n - 4, ":443") == 0)
		o[n - 4] = '\0';
	else if (strncmp(o, "http://", 7) == 0 && n > 3 && strcmp(o + n - 3, ":80") == 0)
		o[n - 3] = '\0';
	*v = json_own(a, json_object_new_string(o));
	return 0;
}

#define CLIENT_FIELDS(name_flags)						\
	{ "name", NULL, VT_STRING, name_flags, 1, 100, .check = validate_name },	\
	{ "description", NULL, VT_STRING, V_NULLABLE, 0, 1000 },		\
	{ "redirectUris", "redirect_uris", VT_ARRAY, 0, 0, CLIENTS_LIST_MAX,	\
	  .items = VT_STRING, .format = VF_URL, .check = check_redirect_uri },	\
	{ "allowedOrigins", "allowed_origins", VT_ARRAY, 0, 0, CLIENTS_LIST_MAX,	\
	  .items = VT_STRING, .format = VF_URL, .check = check_origin },	\
	{ NULL }

const struct vfield iam_clients_create_fields[] = { CLIENT_FIELDS(V_REQUIRED) };
const struct vfield iam_clients_update_fields[] = { CLIENT_FIELDS(0) };

/* ---- output ---- */

/* A jsonb column as a json-c array attached to o. */
static void
set_json_array(struct req *r, struct json_object *o, const char *key, PGresult *res,
    int row, int col)
{
	const char *why;
	struct json_object *v = json_parse(r->arena, PQgetvalue(res, row, col),
	    (size_t)PQgetlength(res, row, col), &why);

	json_set(o, key, v != NULL && json_object_is_type(v, json_type_array) ?
	    json_object_get(v) : json_object_new_array());
}

/* One client row (CLIENT_COLS) as the API shows it. */
static struct json_object *
client_json(struct req *r, PGresult *res, int row)
{
	struct json_object *o = json_object_new_object();

	json_set_str(o, "id", PQgetvalue(res, row, CC_ID));
	json_set_str(o, "name", PQgetvalue(res, row, CC_NAME));
	json_set_str(o, "description", PQgetisnull(res, row, CC_DESCRIPTION) ? NULL :
	    PQgetvalue(res, row, CC_DESCRIPTION));
	set_json_array(r, o, "redirectUris", res, row, CC_REDIRECT_URIS);
	set_json_array(r, o, "allowedOrigins", res, row, CC_ALLOWED_ORIGINS);
	json_set_str(o, "userId", PQgetvalue(res, row, CC_USER_ID));
	json_set_str(o, "createdAt", PQgetvalue(res, row, CC_CREATED_AT));
	json_set_str(o, "updatedAt", PQgetvalue(res, row, CC_UPDATED_AT));
	return o;
}

static int
not_found(struct req *r, const char *id)
{
	return api_error(r, 404, ERR_CLIENT_NOT_FOUND, "list your clients with GET /v1/iam/clients",
	    "no client %s", id);
}

/* Run a statement on the path's client (p[0]) that answers its row: 0
 * with *res, else the status written (404 for none, as for another
 * developer's client). */
static int
client_row_or_reply(struct req *r, int stmt, int n, const char *const *p, PGresult **res)
{
	if ((*res = db_query(r, &stmts[stmt], n, p)) == NULL)
		return api_db_error(r);
	return PQntuples(*res) == 1 ? 0 : not_found(r, p[0]);
}

/* The validated array member as JSON text, or NULL when absent. */
static const char *
array_param(struct req *r, const char *key)
{
	struct json_object *v;

	if (!json_object_object_get_ex(r->body, key, &v) || v == NULL)
		return NULL;
	return json_dump(r->arena, v, NULL);
}

/* ---- handlers ---- */

int
iam_clients_owned(struct req *r, const char *client_id, const char *user_id)
{
	const char *p[2] = { client_id, user_id };
	PGresult *res = db_query(r, &stmts[CL_OWNED], 2, p);

	if (res == NULL)
		return -1;
	return PQntuples(res) == 1;
}

int
iam_clients_own_or_reply(struct req *r, const char *client_id)
{
	int rc = iam_clients_owned(r, client_id, r->user_id);

	if (rc < 0)
		return api_db_error(r);
	return rc == 1 ? 0 : not_found(r, client_id);
}

const char *
iam_clients_new_unowned(struct req *r, const char *name)
{
	const char *p[2] = { crypto_id_new(r->arena, "cli"), name };
	PGresult *res;

	if ((res = db_query(r, &stmts[CL_NEW_UNOWNED], 2, p)) == NULL || PQntuples(res) != 1)
		return NULL;
	return p[0];
}

int
iam_clients_adopt(struct req *r, const char *client_id, const char *user_id)
{
	const char *p[2] = { client_id, user_id };
	PGresult *res;

	if ((res = db_query(r, &stmts[CL_COUNT], 1, &p[1])) == NULL || PQntuples(res) != 1)
		return -1;
	if (atoll(PQgetvalue(res, 0, CN_COUNT)) >= iam_settings(r->cfg)->clients_max)
		return 2;
	if ((res = db_query(r, &stmts[CL_ADOPT], 2, p)) == NULL)
		return -1;
	return PQntuples(res) == 1;
}

int
iam_clients_remove_unowned(struct req *r, const char *client_id)
{
	PGresult *res = db_query(r, &stmts[CL_REMOVE], 1, &client_id);

	if (res == NULL)
		return -1;
	return PQntuples(res) == 1;
}

int
iam_clients_limit_reply(struct req *r)
{
	return api_error(r, 409, ERR_CLIENT_LIMIT_REACHED,
	    "delete a client you no longer use with DELETE /v1/iam/clients/{id}",
	    "a developer can have at most %d clients", iam_settings(r->cfg)->clients_max);
}

int
iam_clients_list(struct req *r, struct json_object *out)
{
	const char *p[1] = { r->user_id };
	struct json_object *arr;
	PGresult *res;

	if ((res = db_query(r, &stmts[CL_LIST], 1, p)) == NULL)
		return api_db_error(r);
	arr = json_object_new_array_ext(PQntuples(res) > 0 ? PQntuples(res) : 1);
	for (int i = 0; i < PQntuples(res); i++)
		json_object_array_add(arr, client_json(r, res, i));
	json_set_bool(out, "success", 1);
	json_set(out, "clients", arr);
	return 200;
}

int
iam_clients_create(struct req *r, struct json_object *out)
{
	const char *uris = array_param(r, "redirectUris");
	const char *origins = array_param(r, "allowedOrigins");
	const char *p[6] = { crypto_id_new(r->arena, "cli"), r->user_id,
	    json_get_str(r->body, "name"), json_get_str(r->body, "description"),
	    uris ? uris : "[]", origins ? origins : "[]" };
	PGresult *res;

	if ((res = db_query(r, &stmts[CL_COUNT], 1, &p[1])) == NULL || PQntuples(res) != 1)
		return api_db_error(r);
	if (atoll(PQgetvalue(res, 0, CN_COUNT)) >= iam_settings(r->cfg)->clients_max)
		return iam_clients_limit_reply(r);
	if ((res = db_query(r, &stmts[CL_NEW], 6, p)) == NULL || PQntuples(res) != 1)
		return api_db_error(r);
	json_set_bool(out, "success", 1);
	json_set_str(out, "message", "client created");
	json_set(out, "client", client_json(r, res, 0));
	return 201;
}

int
iam_clients_get(struct req *r, struct json_object *out)
{
	const char *p[2] = { req_cap(r, "id"), r->user_id };
	PGresult *res;
	int rc;

	if ((rc = client_row_or_reply(r, CL_GET, 2, p, &res)) != 0)
		return rc;
	json_set_bool(out, "success", 1);
	json_set(out, "client", client_json(r, res, 0));
	return 200;
}

int
iam_clients_update(struct req *r, struct json_object *out)
{
	struct json_object *desc = NULL;
	int has_desc = json_object_object_get_ex(r->body, "description", &desc);
	const char *p[7] = { req_cap(r, "id"), r->user_id, json_get_str(r->body, "name"),
	    has_desc ? "true" : "false", desc ? json_object_get_string(desc) : NULL,
	    array_param(r, "redirectUris"), array_param(r, "allowedOrigins") };
	PGresult *res;
	int rc;

	if ((rc = client_row_or_reply(r, CL_UPDATE, 7, p, &res)) != 0)
		return rc;
	json_set_bool(out, "success", 1);
	json_set_str(out, "message", "client updated");
	json_set(out, "client", client_json(r, res, 0));
	return 200;
}

int
iam_clients_delete(struct req *r, struct json_object *out)
{
	const char *p[2] = { req_cap(r, "id"), r->user_id };
	PGresult *res;
	int rc;

	if ((rc = client_row_or_reply(r, CL_DELETE, 2, p, &res)) != 0)
		return rc;
	json_set_bool(out, "success", 1);
	json_set_str(out, "message", "client deleted with its secrets and webhooks");
	json_set_str(out, "id", p[0]);
	return 200;
}

/* Public and fail-closed: whatever goes wrong, no origin is allowed. */
int
iam_clients_embed_origins(struct req *r, struct json_object *out)
{
	const char *p[1] = { req_cap(r, "id") };
	PGresult *res = NULL;
	int found;

	found = crypto_id_valid(p[0], "cli", 0) &&
	    (res = db_query(r, &stmts[CL_EMBED], 1, p)) != NULL && PQntuples(res) == 1;
	if (found) {
		set_json_array(r, out, "allowed_embed_origins", res, 0, CE_ORIGINS);
		json_set_bool(out, "pci_approved", PQgetvalue(res, 0, CE_PCI_APPROVED)[0] == 't');
	} else {
		json_set(out, "allowed_embed_origins", json_object_new_array());
		json_set_bool(out, "pci_approved", 0);
	}
	return 200;
}
