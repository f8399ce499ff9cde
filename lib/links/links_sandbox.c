/*
 * Sandbox account links (SPEC "Sandbox", DOMAIN.md "Sandbox account
 * links"): a sandbox key on the sandbox host makes a link to a sandbox
 * biller without the connect flow. The link is made with the fixture's
 * username and the sandbox password, and its first retrieval is queued:
 * bds-jobs then emits bill.created per bill and connection.ready, never
 * link.completed. The route is ROUTE_IDEM (the dispatcher replays the
 * original 201 for the same key and body, 409 IDEMPOTENCY_CONFLICT for
 * another body); DELETE /v1/links/{id} drops the replay record.
 *
 * The sandbox API has no login step: the username must name a fixture
 * (400 otherwise) and what the fixture does at login (user_locked,
 * user_degraded) happens at the first retrieval, as link.disconnected.
 */
#include <string.h>

#include "core/arena.h"
#include "core/db.h"
#include "core/errors.h"
#include "core/jobq.h"
#include "core/json.h"
#include "core/req.h"
#include "core/validate.h"
#include "links/links.h"
#include "links/links_same.h"

#define BILLER_COLS "connector"
enum biller_col { B_CONNECTOR, B__MAX };

enum { S_BILLER, S__MAX };
static struct db_stmt stmts[S__MAX] = {
	[S_BILLER] = { "links_sandbox_biller",
	    "SELECT " BILLER_COLS " FROM billers WHERE id = $1" },
};
const struct db_stmt_set links_sandbox_stmt_set = { "links_sandbox", stmts, S__MAX };

/* DOMAIN.md "Connectors and retrieval": the sandbox connector's fixtures. */
static const char *const fixtures[] = {
	"user_good", "user_mfa", "user_multi", "user_empty", "user_many", "user_locked",
	"user_expiring", "user_rejects_later", "user_degraded", "user_paid", "user_partial",
	"user_reverted", "user_insights", NULL
};
static const char *const scopes[] = {
	"bills", "statements", "payment_history", "usage", "account_details", "payments", NULL
};

const struct vfield links_sandbox_create_fields[] = {
	{ "client_user_id", NULL, VT_STRING, V_REQUIRED, 1, 255 },
	{ "biller_id", NULL, VT_STRING, 0, 1, 64 },
	{ "username", NULL, VT_STRING, 0, 0, 0, fixtures },
	{ "consents", NULL, VT_ARRAY, 0, 0, 6, scopes, .items = VT_STRING },
	{ NULL }
};

/*
 * The sandbox tools (account links, reset-login, advance) act on the
 * sandbox connector's fixtures only: a portal biller, even one a sandbox
 * key may link (sandbox_portal), has a real login and the refresh limit.
 * 0 when biller is a sandbox-connector biller, else the 400 written
 * (field; why: errors[].message of not_sandbox) or 503.
 */
static int
fixture_biller_or_reply(struct req *r, const char *biller, const char *field,
    const char *why)
{
	const char *p[1] = { biller };
	PGresult *res;

	if ((res = db_query(r, &stmts[S_BILLER], 1, p)) == NULL)
		return api_db_error(r);
	if (PQntuples(res) != 1)
		return api_field_error(r, 400, ERR_VALIDATION_ERROR, field, "unknown_biller",
		    "no biller has this id");
	if (strcmp(PQgetvalue(res, 0, B_CONNECTOR), "sandbox") != 0)
		return api_field_error(r, 400, ERR_VALIDATION_ERROR, field, "not_sandbox", why);
	return 0;
}

/*
 * POST /v1/sandbox/account-links: 201 {link_id, access_token, link}. The
 * same fixture (username) at the same biller for the same client_user_id
 * while its link is ACTIVE: 200 with that link (a new access token for it),
 * "duplicate": true, no retrieval and no event (links_same.h).
 */
int
links_sandbox_create(struct req *r, struct json_object *out)
{
	const char *biller = json_get_str(r->body, "biller_id");
	const char *username = json_get_str(r->body, "username");
	struct json_object *consents = NULL, *link;
	struct links_new n = { 0 };
	struct links_row row;
	const char *tok;
	int rc;

	if (biller == NULL)
		biller = LINKS_SANDBOX_BILLER;
	if ((rc = fixture_biller_or_reply(r, biller, "biller_id",
	    "sandbox account links take a sandbox biller")) != 0)
		return rc;
	json_object_object_get_ex(r->body, "consents", &consents);
	n.client_id = r->client_id;
	n.environment = r->env;
	n.client_user_id = json_get_str(r->body, "client_user_id");
	n.biller_id = biller;
	n.scopes = consents;
	n.username = username != NULL ? username : "user_good";
	n.password = LINKS_SANDBOX_PASSWORD;
	if ((rc = links_same(r, &n, &row)) < 0)
		return api_db_error(r);
	if ((rc == 0 && links_create(r, &n, &row) != 0) ||
	    (tok = links_access_token_new(r, r->client_id, r->env, row.id, 0)) == NULL ||
	    (link = links_json_by_id(r, r->client_id, row.id)) == NULL)
		return api_db_error(r);
	json_set_str(out, "link_id", row.id);
	json_set_str(out, "access_token", tok);
	json_set(out, "link", json_object_get(link));
	json_set_bool(out, "duplicate", rc == 1);
	return rc == 1 ? 200 : 201;
}

/* The key's sandbox link (links on the sandbox host are sandbox links) to
 * a sandbox biller: 0 with *row, or the 404 (no such link), 400 (a portal
 * biller's link: VALIDATION_ERROR, id, not_sandbox) or 503 written. */
static int
sandbox_link_or_reply(struct req *r, struct links_row *row)
{
	const char *id = req_cap(r, "id");
	int rc = links_get(r, r->client_id, id, row);

	if (rc < 0)
		return api_db_error(r);
	if (rc == 0 || strcmp(row->environment, r->env) != 0)
		return api_error(r, 404, ERR_LINK_NOT_FOUND, NULL, "no link %s", id);
	return fixture_biller_or_reply(r, row->biller_id, "id", "reset-login and advance act on"
	    " links to a sandbox biller; this link's biller is a portal");
}

/* POST /v1/sandbox/links/{id}/reset-login: an ACTIVE link becomes
 * DISCONNECTED credentials_rejected (INVALID_CREDENTIALS) with one
 * link.disconnected; a link not ACTIVE is answered as it is. 200 the link. */
int
links_sandbox_reset_login(struct req *r, struct json_object *out)
{
	struct links_row row;
	struct json_object *o;
	int rc;

	if ((rc = sandbox_link_or_reply(r, &row)) != 0)
		return rc;
	if (strcmp(row.status, "REVOKED") == 0)
		return api_error(r, 409, ERR_LINK_REVOKED, "a revoked link needs a new link",
		    "link %s is revoked", row.id);
	if (links_disconnect(r, r->client_id, row.id, "credentials_rejected",
	    ERR_INVALID_CREDENTIALS) < 0 ||
	    (o = links_json_by_id(r, r->client_id, row.id)) == NULL)
		return api_db_error(r);
	json_merge(out, o);
	return 200;
}

/* POST /v1/sandbox/links/{id}/advance: the fixture's next refresh, queued
 * now (no refresh cooldown in the sandbox). 202 {link_id, status queued};
 * 409 when the link is not ACTIVE. */
int
links_sandbox_advance(struct req *r, struct json_object *out)
{
	struct links_row row;
	int rc;

	if ((rc = sandbox_link_or_reply(r, &row)) != 0)
		return rc;
	if (strcmp(row.status, "ACTIVE") != 0)
		return api_error(r, 409, strcmp(row.status, "REVOKED") == 0 ? ERR_LINK_REVOKED :
		    ERR_LINK_DISCONNECTED, NULL, "link %s is not active", row.id);
	if (jobq_add(r, "retrieval", r->client_id, r->env, row.id, NULL, 0) != 0)
		return api_db_error(r);
	json_set_str(out, "link_id", row.id);
	json_set_str(out, "status", "queued");
	return 202;
}
