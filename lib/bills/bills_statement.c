/*
 * Statement documents: the signed URL and its check (DOMAIN.md "Bills and
 * sync": documents are streamed by nginx after the app checks the signed
 * URL, never through a FastCGI worker), and what a retrieval records.
 *
 * The URL: {api_url | sandbox_url}/v1/statements/{bill_id}?expires=E&sig=S,
 * signed as core/urlsign.h says with the purpose "bds statement url v1", E
 * now + BILLS_STATEMENT_URL_TTL.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "core/arena.h"
#include "core/clock.h"
#include "core/config.h"
#include "core/crypto.h"
#include "core/db.h"
#include "core/errors.h"
#include "core/json.h"
#include "core/req.h"
#include "core/urlsign.h"
#include "core/validate.h"
#include "bills/bills.h"
#include "bills/bills_statement.h"

enum bs_stmt { BS_ATTACH, BS_GET, BS_DOC, BS__MAX };

/* BS_GET columns */
enum bs_get_col { BG_HAS, BG_SHA, BG__MAX };
/* BS_DOC columns */
enum bs_doc_col { BD_CLIENT, BD_SHA, BD_NUMBER, BD_LIVE, BD_TYPE, BD__MAX };

static struct db_stmt stmts[BS__MAX] = {
	/* the hash only: no seq, no updated_at (nothing a sync would carry) */
	[BS_ATTACH] = { "bills_statement_attach",
	    "UPDATE bills SET statement_sha256 = $4"
	    " WHERE " BILLS_BY_STATEMENT " AND statement_sha256 IS DISTINCT FROM $4", 0 },
	[BS_GET] = { "bills_statement_get",
	    "SELECT has_statement, statement_sha256 FROM bills"
	    " WHERE " DB_BY_ID("", " AND environment = $3 AND deleted_at IS NULL"
	    "   AND ($4::text IS NULL OR link_id = $4::text)"), 0 },
	/* no credential yet: by id (bills_by_id); the signature names the client */
	[BS_DOC] = { "bills_statement_doc",
	    "SELECT client_id, statement_sha256, bill_number,"
	    "       has_statement AND deleted_at IS NULL, statement_type"
	    "  FROM bills WHERE id = $1", 0 },
};

const struct db_stmt_set bills_statement_stmt_set = { "bills_statement", stmts, BS__MAX };

const struct vfield bills_statement_download_query[] = {
	{ "expires", NULL, VT_INT, V_REQUIRED, 1, 0 },
	{ "sig", NULL, VT_STRING, V_REQUIRED, 1, 128 },
	{ NULL }
};

int
bills_statement_attach(struct req *r, const char *client_id, const char *link_id,
    const char *statement_ref, const char *sha)
{
	const char *p[4] = { client_id, link_id, statement_ref, sha };

	return db_exec(r->db, r->arena, &stmts[BS_ATTACH], 4, p) == NULL ? -1 : 0;
}

/* the purpose of urlsign.h's key for statement URLs */
#define STATEMENT_URL	"bds statement url v1"

static int
bill_not_found(struct req *r, const char *id)
{
	return api_error(r, 404, ERR_BILL_NOT_FOUND, NULL, "no bill %s", id);
}

int
bills_statement_get(struct req *r, struct json_object *out)
{
	/* a link access token (r->link_id) sees its link's bills only */
	const char *id = req_cap(r, "id"), *p[4] = { r->client_id, id, r->env, r->link_id };
	const char *sig;
	long long expires = (long long)time(NULL) + BILLS_STATEMENT_URL_TTL;
	char iso[TIME_ISO_SIZE];
	PGresult *res;

	if (!crypto_id_valid(id, "bill", 0))
		return bill_not_found(r, id);
	if ((res = db_query(r, &stmts[BS_GET], 4, p)) == NULL)
		return api_db_error(r);
	if (PQntuples(res) != 1)
		return bill_not_found(r, id);
	if (strcmp(PQgetvalue(res, 0, BG_HAS), "t") != 0 || PQgetisnull(res, 0, BG_SHA))
		return api_error(r, 404, ERR_STATEMENT_NOT_FOUND, NULL,
		    "bill %s has no statement document", id);
	sig = urlsign_sig(r, STATEMENT_URL, id, r->client_id, urlsign_host(r), expires);
	json_set_str(out, "url", arena_printf(r->arena, "%s/v1/statements/%s?expires=%lld&sig=%s",
	    urlsign_base(r), id, expires, sig));
	json_set_str(out, "expires_at", time_iso(iso, (int64_t)expires * 1000));
	return 200;
}

static int
bad_sig(struct req *r)
{
	return api_error(r, 403, ERR_INVALID_SIGNATURE, "ask GET /v1/bills/{id}/statement for a new URL",
	    "the statement URL's signature is not valid");
}

/* The file name extension of a statement's type (sql/100: the three a
 * document may have). */
static const char *
type_ext(const char *type)
{
	if (bills_is(type, "image/png"))
		return "png";
	if (bills_is(type, "image/jpeg"))
		return "jpg";
	return "pdf";
}

int
bills_statement_download(struct req *r, struct json_object *out)
{
	const char *id = req_cap(r, "id"), *p[1] = { id };
	const char *sig = json_get_str(r->query, "sig"), *sha, *type, *ext;
	long long expires = json_get_int(r->query, "expires", 0);
	PGresult *res;

	(void)out;
	if (!crypto_id_valid(id, "bill", 0))
		return bad_sig(r);
	if ((res = db_exec(r->db, r->arena, &stmts[BS_DOC], 1, p)) == NULL)
		return api_db_error(r);
	switch (PQntuples(res) != 1 ? URLSIGN_BAD : urlsign_check(r, STATEMENT_URL, id,
	    PQgetvalue(res, 0, BD_CLIENT), sig, expires)) {
	case URLSIGN_BAD:
		return bad_sig(r);
	case URLSIGN_EXPIRED:
		return api_error(r, 403, ERR_URL_EXPIRED, "ask GET /v1/bills/{id}/statement for a new URL",
		    "the statement URL expired");
	case URLSIGN_OK:
		break;
	}
	sha = PQgetisnull(res, 0, BD_SHA) ? NULL : PQgetvalue(res, 0, BD_SHA);
	if (sha == NULL || strlen(sha) != 64 || strcmp(PQgetvalue(res, 0, BD_LIVE), "t") != 0)
		return api_error(r, 404, ERR_STATEMENT_NOT_FOUND, NULL,
		    "bill %s has no statement document", id);
	/* nginx serves the file from its internal location; no body here.
	 * The store names every document <sha>.pdf; an imported statement may
	 * be an image, whose type the bill keeps (statement_type). */
	type = PQgetvalue(res, 0, BD_TYPE);
	ext = type_ext(type);
	req_header_add(r, "X-Accel-Redirect", arena_printf(r->arena, "/_statements/%.2s/%s.pdf",
	    sha, sha));
	req_header_add(r, "Content-Type", strcmp(ext, "pdf") == 0 ? "application/pdf" : type);
	req_header_add(r, "Content-Disposition", arena_printf(r->arena,
	    "attachment; filename=\"%s.%s\"", http_safe_filename(r->arena,
	    PQgetisnull(res, 0, BD_NUMBER) ? NULL : PQgetvalue(res, 0, BD_NUMBER), id), ext));
	req_header_add(r, "Cache-Control", "private, no-store");
	r->out = NULL;
	return 200;
}
