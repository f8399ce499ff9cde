/*
 * The routes of customer messages, suppressions and consents: the
 * declared input, the lookups that answer 404, and the answers. The rows
 * and events are messages_store.c's.
 */
#include <string.h>

#include <json-c/json.h>
#include <libpq-fe.h>

#include "billers/billers.h"
#include "core/arena.h"
#include "core/crypto.h"
#include "core/cursor.h"
#include "core/errcodes.h"
#include "core/errors.h"
#include "core/json.h"
#include "core/req.h"
#include "core/validate.h"
#include "messages/messages.h"
#include "messages/messages_int.h"

/* The first page starts below every position (a message id is a UUID, a
 * user printable ASCII). */
#define TOP_TIME	"infinity"
#define TOP_MESSAGE	"ffffffff-ffff-ffff-ffff-ffffffffffff"
#define TOP_USER	"\x7f"

static const char *const categories[] = { "marketing", "account_update", NULL };
static const char *const statuses[] = { "accepted", "suppressed", NULL };

/*
 * Text people read: no control characters. C1 (U+0080-U+009F: 0xC2
 * 0x80-0x9F in UTF-8) and DEL never; C0 never, but line feed and tab when
 * lines is set.
 */
static int
control_free(const char *s, int lines)
{
	const unsigned char *p = (const unsigned char *)s;

	for (; *p != '\0'; p++) {
		if (lines && (*p == '\n' || *p == '\t'))
			continue;
		if (*p < 0x20 || *p == 0x7f || (p[0] == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f))
			return 0;
	}
	return 1;
}

static int
check_subject(struct arena *a, struct json_object **v, const char **code, const char **msg)
{
	(void)a;
	if (control_free(json_object_get_string(*v), 0))
		return 0;
	*code = "control_character";
	*msg = "subject must not contain control characters (line breaks included)";
	return -1;
}

static int
check_body(struct arena *a, struct json_object **v, const char **code, const char **msg)
{
	(void)a;
	if (control_free(json_object_get_string(*v), 1))
		return 0;
	*code = "control_character";
	*msg = "body must not contain control characters other than line feed and tab";
	return -1;
}

/* metadata: an object of at most MESSAGES_METADATA_MAX bytes as JSON */
static int
check_metadata(struct arena *a, struct json_object **v, const char **code, const char **msg)
{
	(void)a;
	if (strlen(json_object_to_json_string_ext(*v, JSON_C_TO_STRING_PLAIN)) <=
	    MESSAGES_METADATA_MAX)
		return 0;
	*code = "too_long";
	*msg = "metadata must be at most 4096 bytes as JSON";
	return -1;
}

#define AID_FIELD(flags) \
	{ "customer_user_aid", NULL, VT_STRING, (flags), 1, MESSAGES_AID_MAX, \
	  .format = VF_PRINTABLE }
#define REASON_FIELD \
	{ "reason", NULL, VT_STRING, 0, 1, MESSAGES_REASON_MAX, .check = validate_name }

const struct vfield messages_create_fields[] = {
	AID_FIELD(V_REQUIRED),
	{ "biller_id", NULL, VT_STRING, V_REQUIRED, 1, 255 },
	{ "category", NULL, VT_STRING, V_REQUIRED, .enumv = categories },
	{ "subject", NULL, VT_STRING, V_REQUIRED, 1, MESSAGES_SUBJECT_MAX,
	  .check = check_subject },
	{ "body", NULL, VT_STRING, V_REQUIRED, 1, MESSAGES_BODY_MAX, .check = check_body },
	{ "metadata", NULL, VT_OBJECT, 0, .check = check_metadata },
	{ NULL }
};

const struct vfield messages_list_query[] = {
	AID_FIELD(0),
	{ "biller_id", NULL, VT_STRING, 0, 1, 255 },
	{ "category", NULL, VT_STRING, 0, .enumv = categories },
	{ "delivery_status", NULL, VT_STRING, 0, .enumv = statuses },
	{ "created_after", NULL, VT_STRING, 0, .format = VF_DATETIME },
	{ "created_before", NULL, VT_STRING, 0, .format = VF_DATETIME },
	CURSOR_LIMIT_FIELD(MESSAGES_LIMIT_MAX),
	CURSOR_QUERY_FIELD,
	{ NULL }
};

const struct vfield messages_complaint_fields[] = {
	REASON_FIELD,
	{ NULL }
};

const struct vfield messages_suppressions_list_query[] = {
	CURSOR_LIMIT_FIELD(MESSAGES_LIMIT_MAX),
	CURSOR_QUERY_FIELD,
	{ NULL }
};

const struct vfield messages_suppressions_create_fields[] = {
	AID_FIELD(V_REQUIRED),
	REASON_FIELD,
	{ NULL }
};

const struct vfield messages_consents_fields[] = {
	{ "marketing", NULL, VT_BOOL, 0 },
	{ "account_update", NULL, VT_BOOL, 0 },
	{ NULL }
};

/* ---- messages ---- */

static int
message_not_found(struct req *r, const char *id)
{
	return api_error(r, 404, ERR_CUSTOMER_MESSAGE_NOT_FOUND, NULL, "no customer message %s",
	    id);
}

/* The path's message id in its canonical spelling, or NULL: no UUID. */
static const char *
message_id(struct req *r)
{
	char *out = arena_alloc(r->arena, CRYPTO_UUID_STRLEN + 1);
	unsigned char u[16];

	if (crypto_uuid_parse(req_cap(r, "message_id"), u) != 0)
		return NULL;
	crypto_uuid_format(u, out);
	return out;
}

int
messages_create(struct req *r, struct json_object *out)
{
	struct json_object *meta = NULL;
	struct billers_row b;
	struct msg_new m;
	unsigned char u[16];
	char *id = arena_alloc(r->arena, CRYPTO_UUID_STRLEN + 1);
	int rc;

	(void)out;
	if ((rc = billers_get_or_reply(r, json_get_str(r->body, "biller_id"), &b)) != 0)
		return rc;
	crypto_uuid7(u);
	crypto_uuid_format(u, id);
	json_object_object_get_ex(r->body, "metadata", &meta);
	m.id = id;
	m.user = json_get_str(r->body, "customer_user_aid");
	m.biller = b.id;
	m.category = json_get_str(r->body, "category");
	m.subject = json_get_str(r->body, "subject");
	m.body = json_get_str(r->body, "body");
	m.metadata = meta != NULL ? json_dump(r->arena, meta, NULL) : NULL;
	if ((rc = msg_insert(r, &m, &r->out)) < 0)
		return api_db_error(r);
	return rc == 1 ? 201 : 200;
}

int
messages_get(struct req *r, struct json_object *out)
{
	const char *id = message_id(r);
	int rc;

	(void)out;
	if (id == NULL)
		return message_not_found(r, req_cap(r, "message_id"));
	if ((rc = msg_get(r, id, &r->out)) < 0)
		return api_db_error(r);
	return rc == 1 ? 200 : message_not_found(r, id);
}

static const struct cursor_list messages_page = {
	.name = "customer_messages", .flags = CURSOR_TENANT, .shape = CURSOR_OBJECT_LIST,
	.key = "data", .limit = MESSAGES_LIMIT_DEFAULT, .npos = 2, .cols = { 1, 0 },
	.json_col = 2,
};

int
messages_list(struct req *r, struct json_object *out)
{
	static const char *const names[] = { "customer_user_aid", "biller_id", "category",
	    "delivery_status", "created_after", "created_before" };
	const char *p[9];
	struct cursor_page pg;
	PGresult *res;
	int rc;

	for (size_t i = 0; i < 6; i++)
		p[i] = json_get_str(r->query, names[i]);
	if ((rc = cursor_page_open(r, &messages_page, p, 6, &pg)) != 0)
		return rc;
	p[6] = pg.npos == 2 ? pg.pos[0] : TOP_TIME;
	p[7] = pg.npos == 2 ? pg.pos[1] : TOP_MESSAGE;
	p[8] = pg.limit1;
	if ((res = msg_page(r, p)) == NULL)
		return api_db_error(r);
	return cursor_page_reply(r, out, &pg, res);
}

int
messages_complaint(struct req *r, struct json_object *out)
{
	const char *id = message_id(r), *reason = json_get_str(r->body, "reason");
	struct msg_complaint c;
	int rc;

	if (id == NULL)
		return message_not_found(r, req_cap(r, "message_id"));
	if ((rc = msg_complain(r, id, reason != NULL ? reason : "complaint", &c)) < 0)
		return api_db_error(r);
	if (rc == 0)
		return message_not_found(r, id);
	json_set_str(out, "message_id", id);
	json_set_str(out, "customer_user_aid", c.user);
	json_set_str(out, "reason", c.reason);
	json_set_bool(out, "suppressed", 1);
	json_set_bool(out, "marketing_consent", 0);
	json_set_str(out, "created_at", c.created_at);
	return 200;
}

/* ---- suppressions and consents ---- */

/* The path's end user: 0 with *user, or the 400 written. */
static int
path_user(struct req *r, const char **user)
{
	const char *s = req_cap(r, "customer_user_aid");
	size_t n = s != NULL ? strlen(s) : 0;

	if (n == 0 || n > MESSAGES_AID_MAX || !validate_format(VF_PRINTABLE, s))
		return api_field_error(r, 400, ERR_VALIDATION_ERROR, "customer_user_aid",
		    "invalid_format", "customer_user_aid must be 1 to 255 printable characters");
	*user = s;
	return 0;
}

static int
suppression_not_found(struct req *r, const char *user)
{
	return api_error(r, 404, ERR_CUSTOMER_SUPPRESSION_NOT_FOUND, NULL,
	    "%s is not on the suppression list", user);
}

static const struct cursor_list suppressions_page = {
	.name = "customer_suppressions", .flags = CURSOR_TENANT, .shape = CURSOR_OBJECT_LIST,
	.key = "data", .limit = MESSAGES_LIMIT_DEFAULT, .npos = 2, .cols = { 1, 0 },
	.json_col = 2,
};

int
messages_suppressions_list(struct req *r, struct json_object *out)
{
	struct cursor_page pg;
	const char *p[3];
	PGresult *res;
	int rc;

	if ((rc = cursor_page_open(r, &suppressions_page, NULL, 0, &pg)) != 0)
		return rc;
	p[0] = pg.npos == 2 ? pg.pos[0] : TOP_TIME;
	p[1] = pg.npos == 2 ? pg.pos[1] : TOP_USER;
	p[2] = pg.limit1;
	if ((res = msg_suppression_page(r, p)) == NULL)
		return api_db_error(r);
	return cursor_page_reply(r, out, &pg, res);
}

int
messages_suppressions_create(struct req *r, struct json_object *out)
{
	const char *reason = json_get_str(r->body, "reason");
	int rc;

	(void)out;
	rc = msg_suppression_add(r, json_get_str(r->body, "customer_user_aid"),
	    reason != NULL ? reason : "manual", &r->out);
	if (rc < 0)
		return api_db_error(r);
	return rc == 1 ? 201 : 200;
}

int
messages_suppressions_get(struct req *r, struct json_object *out)
{
	const char *user;
	int rc;

	(void)out;
	if ((rc = path_user(r, &user)) != 0)
		return rc;
	if ((rc = msg_suppression_get(r, user, &r->out)) < 0)
		return api_db_error(r);
	return rc == 1 ? 200 : suppression_not_found(r, user);
}

int
messages_suppressions_delete(struct req *r, struct json_object *out)
{
	const char *user;
	int rc;

	if ((rc = path_user(r, &user)) != 0)
		return rc;
	if ((rc = msg_suppression_delete(r, user)) < 0)
		return api_db_error(r);
	if (rc == 0)
		return suppression_not_found(r, user);
	json_set_str(out, "object", "customer_suppression");
	json_set_str(out, "customer_user_aid", user);
	json_set_bool(out, "deleted", 1);
	return 200;
}

int
messages_consents_get(struct req *r, struct json_object *out)
{
	const char *user;
	int rc;

	(void)out;
	if ((rc = path_user(r, &user)) != 0)
		return rc;
	return msg_consents_get(r, user, &r->out) == 1 ? 200 : api_db_error(r);
}

/* A declared boolean of the body as SQL text, or NULL when absent. */
static const char *
flag(struct req *r, const char *name)
{
	struct json_object *v;

	if (!json_object_object_get_ex(r->body, name, &v) || v == NULL)
		return NULL;
	return json_object_get_boolean(v) ? "true" : "false";
}

int
messages_consents_put(struct req *r, struct json_object *out)
{
	const char *user, *marketing = flag(r, "marketing"), *update = flag(r, "account_update");
	int rc;

	(void)out;
	if ((rc = path_user(r, &user)) != 0)
		return rc;
	if (marketing == NULL && update == NULL)
		return api_field_error(r, 400, ERR_VALIDATION_ERROR, "", "required",
		    "send marketing, account_update or both");
	return msg_consents_set(r, user, marketing, update, &r->out) == 1 ? 200 :
	    api_db_error(r);
}
