/*
 * The onboarding of a request to link (rtl_int.h): its biller URL checked
 * and recorded as the client's biller discovery (bdisc_…) of its
 * registrable domain, and matched against the catalog. Below the requests
 * (rtl.c) and the discovery records' routes and operator (rtl_discovery.c);
 * calls neither.
 *
 * The URL is never fetched; it is checked as if it would be: canonical
 * form (rtl_canon.h), then every address its host resolves to must be
 * public (core/urlsafe's rules, the webhooks' own). The config's
 * discovery_hosts answers for the names it lists before DNS is asked, so a
 * test stack can give a name a public or a private address without the
 * internet; allow_private_targets (the webhooks' dev allowance) does not
 * apply here.
 */
#include <arpa/inet.h>
#include <string.h>
#include <strings.h>

#include "billers/billers.h"
#include "core/arena.h"
#include "core/config.h"
#include "core/crypto.h"
#include "core/db.h"
#include "core/errors.h"
#include "core/json.h"
#include "core/req.h"
#include "core/urlsafe.h"
#include "links/links_connect.h"
#include "rtl/rtl.h"
#include "rtl/rtl_canon.h"
#include "rtl/rtl_int.h"

enum { O_UPSERT, O_MATCH, O__MAX };
static struct db_stmt stmts[O__MAX] = {
	/* the client's record of the domain, made on first use; the first
	 * name and URL stay (U_ columns) */
	[O_UPSERT] = { "rtl_disc_upsert",
	    "INSERT INTO biller_discoveries AS d (client_id, id, environment, biller_name,"
	    " biller_url, domain) VALUES ($1, $2, $3, $4, $5, $6)"
	    " ON CONFLICT (client_id, environment, domain) DO UPDATE SET updated_at = d.updated_at"
	    " RETURNING d.id, d.status, d.biller_id" },
	[O_MATCH] = { "rtl_disc_match",
	    "UPDATE biller_discoveries SET status = 'MATCHED', biller_id = $3, updated_at = now()"
	    " WHERE " DB_BY_ID("", "") },
};
const struct db_stmt_set rtl_onboard_stmt_set = { "rtl_onboard", stmts, O__MAX };

/* Result columns of rtl_disc_upsert */
enum { U_ID, U_STATUS, U_BILLER, U__MAX };

/* Every address of list ("a|b|…") public: 0, else -1 with *why. */
static int
fixed_ok(struct arena *a, const char *list, const char **why)
{
	char *s = arena_strdup(a, list), *save = NULL;
	int n = 0;

	for (char *t = strtok_r(s, "|", &save); t != NULL; t = strtok_r(NULL, "|", &save)) {
		struct in6_addr a6;
		struct in_addr a4;
		enum urlsafe_class c;

		if (inet_pton(AF_INET, t, &a4) == 1)
			c = urlsafe_classify_v4(&a4);
		else if (inet_pton(AF_INET6, t, &a6) == 1)
			c = urlsafe_classify_v6(&a6);
		else
			continue;
		n++;
		if (c != URLSAFE_PUBLIC) {
			*why = arena_printf(a, "the URL's host resolves to a %s address",
			    urlsafe_class_name(c));
			return -1;
		}
	}
	if (n == 0)
		*why = "the URL's host does not resolve";
	return n > 0 ? 0 : -1;
}

/* discovery_hosts' addresses for host ("a|b"), or NULL when it does not
 * name it. Entries "name=addr[|addr]" separated by commas or white space. */
static const char *
fixed_answer(struct arena *a, const char *hosts, const char *host)
{
	char *s = arena_strdup(a, hosts != NULL ? hosts : ""), *save = NULL, *eq;

	for (char *t = strtok_r(s, ", \t\n", &save); t != NULL; t = strtok_r(NULL, ", \t\n", &save))
		if ((eq = strchr(t, '=')) != NULL && (size_t)(eq - t) == strlen(host) &&
		    strncasecmp(t, host, strlen(host)) == 0)
			return eq + 1;
	return NULL;
}

/*
 * The canonical URL's host resolves, and only to public addresses: 0, or
 * -1 with *code (unresolvable, private_address) and *why.
 */
static int
resolves_public(struct req *r, const struct rtl_canon *c, const char **code, const char **why)
{
	const char *fixed = fixed_answer(r->arena, rtl_settings(r->cfg)->discovery_hosts, c->host);
	struct urlsafe_target t;

	if (fixed != NULL) {
		if (fixed_ok(r->arena, fixed, why) == 0)
			return 0;
		*code = strstr(*why, "does not resolve") != NULL ? "unresolvable" : "private_address";
		return -1;
	}
	switch (urlsafe_check(r->arena, c->url, 0, &t, why)) {
	case URLSAFE_OK:
		return 0;
	case URLSAFE_REFUSED:
		*code = "private_address";
		return -1;
	case URLSAFE_RESOLVE:
		*code = "unresolvable";
		return -1;
	default:
		*code = "invalid_url";
		return -1;
	}
}

int
rtl_onboard_or_reply(struct req *r, struct json_object *onb, const char *field,
    struct rtl_onboarding *o)
{
	const char *code, *why, *p[6], *id, *unsupported;
	struct rtl_canon c;
	PGresult *res;
	int n, rejected;

	if (rtl_canon_url(r->arena, json_get_str(onb, "biller_url"), &c, &code, &why) !=
	    RTL_CANON_OK || resolves_public(r, &c, &code, &why) != 0)
		return api_field_error(r, 400, ERR_VALIDATION_ERROR, field, code, why);
	if (c.domain == NULL)
		return api_field_error(r, 400, ERR_VALIDATION_ERROR, field, "public_suffix",
		    "the URL's host is a public suffix, not a biller's domain");
	p[0] = r->client_id;
	p[1] = crypto_id_new(r->arena, "bdisc");
	p[2] = r->env;
	p[3] = json_get_str(onb, "biller_name");
	p[4] = c.url;
	p[5] = c.domain;
	if ((res = db_query(r, &stmts[O_UPSERT], 6, p)) == NULL || PQntuples(res) != 1)
		return api_db_error(r);
	o->name = p[3];
	o->url = c.url;
	o->discovery_id = arena_strdup(r->arena, PQgetvalue(res, 0, U_ID));
	o->status = arena_strdup(r->arena, PQgetvalue(res, 0, U_STATUS));
	rejected = strcmp(PQgetvalue(res, 0, U_STATUS), "REJECTED") == 0;
	/* matched or approved before (the caller checks it is still
	 * linkable) */
	if (!rejected && !PQgetisnull(res, 0, U_BILLER) &&
	    (o->biller_id = arena_strdup(r->arena, PQgetvalue(res, 0, U_BILLER))) != NULL)
		return 0;
	/* a linkable catalog biller of the domain, one added since a
	 * rejection too */
	if ((n = billers_under_domain(r, c.domain, &id, &unsupported)) < 0)
		return api_db_error(r);
	if (n == 1) {
		p[1] = o->discovery_id;
		p[2] = id;
		if (db_query(r, &stmts[O_MATCH], 3, p) == NULL)
			return api_db_error(r);
		o->biller_id = id;
		o->status = "MATCHED";
		return 0;
	}
	if (rejected)
		return api_field_error(r, 400, ERR_VALIDATION_ERROR, field, "biller_unsupported",
		    "this biller was reviewed and is not supported");
	if (n == 0 && unsupported != NULL)
		return api_field_error(r, 400, ERR_VALIDATION_ERROR, field, "biller_unsupported",
		    "the catalog lists this biller as not supported");
	return 0;	/* it waits for an operator */
}

/* ---- "Can't find your biller?" on the connect page ---- */

int
rtl_biller_request(struct req *r, struct json_object *out)
{
	struct rtl_onboarding o;
	int rc;

	memset(&o, 0, sizeof(o));
	if ((rc = links_session_auth_or_reply(r)) != 0 ||
	    (rc = rtl_onboard_or_reply(r, r->body, "biller_url", &o)) != 0)
		return rc;
	json_set_str(out, "object", "biller_request");
	json_set_str(out, "discovery_id", o.discovery_id);
	json_set_str(out, "status", o.status);
	/* a biller the page can offer at once: one this environment links */
	if (o.biller_id != NULL) {
		switch (billers_linkable(r, r->env, o.biller_id)) {
		case BILLERS_LINK_FAILED:
			return api_db_error(r);
		case BILLERS_LINK_OK:
			break;
		default:
			o.biller_id = NULL;
		}
	}
	json_set_str(out, "biller_id", o.biller_id);
	return 201;
}
