#ifndef BDS_RTL_H
#define BDS_RTL_H
/*
 * Requests to link and biller discovery (SPEC "Request to link",
 * DOMAIN.md "Link tokens, the connect flow, links"). A request to link
 * (rtl_…) asks a client's end user to link one biller: created with a
 * catalog biller_id or with onboarding {biller_name, biller_url}; proceed
 * makes a hosted link token bound to it and answers the link-host URL the
 * user opens; its link session starting moves it to IN_PROGRESS, the link
 * being made to COMPLETED; `bdsctl jobs` expires the open ones after
 * rtl_expiry_days. An onboarding URL is canonicalised (rtl_canon.h),
 * checked like an outbound URL (every address public) and recorded as a
 * biller discovery (bdisc_…) matched by registrable domain against the
 * catalog, or settled by an operator (`bdsctl discovery`).
 *
 * Every row is the key's client and environment: another client's id
 * answers as an unknown one (404).
 */
#include "core/config.h"
#include "core/validate.h"

struct arena;
struct config;
struct db;
struct db_stmt_set;
struct json_object;
struct req;

/* ---- routes (lib/routes.c) ---- */

extern const struct vfield rtl_create_fields[];
extern const struct vfield rtl_list_query[];
extern const struct vfield rtl_status_fields[];
extern const struct vfield rtl_cancel_fields[];
extern const struct vfield rtl_discoveries_query[];

/* POST /v1/request-to-links (KEY, ROUTE_IDEM; both hosts): 201 the request;
 * 400 a bad field, both or neither of biller_id and onboarding, an
 * unknown or unsupported biller, a refused onboarding URL. */
int	 rtl_create(struct req *, struct json_object *out);
/* GET /v1/request-to-links (live host): 200 {items, total, limit,
 * next_cursor, has_more}, newest first. */
int	 rtl_list(struct req *, struct json_object *out);
/* GET /v1/request-to-links/{id}: 200 the request; 404
 * REQUEST_TO_LINK_NOT_FOUND. */
int	 rtl_get(struct req *, struct json_object *out);
/* PATCH /v1/request-to-links/{id}/status (ROUTE_TX): 200 the request. */
int	 rtl_status(struct req *, struct json_object *out);
/* POST /v1/request-to-links/{id}/cancel (ROUTE_IDEM): 201 the request;
 * 409 RTL_STATE_CONFLICT unless PENDING or IN_PROGRESS. */
int	 rtl_cancel(struct req *, struct json_object *out);
/* POST /v1/request-to-links/{id}/proceed (ROUTE_ONCE): 201 {link_token,
 * session_url, expires_at, request_to_link_id}; 409 RTL_STATE_CONFLICT,
 * RTL_BILLER_PENDING, BILLER_UNSUPPORTED. */
int	 rtl_proceed(struct req *, struct json_object *out);
/* GET /v1/biller-discoveries: 200 {items, total, limit, next_cursor,
 * has_more}, the key's own records, newest first. */
int	 rtl_discoveries_list(struct req *, struct json_object *out);
/* GET /v1/biller-discoveries/{id}: 200; 404 BILLER_DISCOVERY_NOT_FOUND. */
int	 rtl_discoveries_get(struct req *, struct json_object *out);

/*
 * POST /v1/link-sessions/biller-request {biller_name, biller_url} (the
 * connect session's bearer, ROUTE_TX): the page's "Can't find your
 * biller?". The same biller discovery record an onboarding makes (its
 * client and environment: the session's): 201 {object: biller_request,
 * discovery_id, status, biller_id (a biller of the domain the session's
 * environment links, else null)}; 400 on a bad biller_url exactly as an
 * onboarding (naming biller_url); 401 a bad session.
 */
extern const struct vfield rtl_biller_request_fields[];
int	 rtl_biller_request(struct req *, struct json_object *out);

/* ---- the connect flow's notifications (rtl_jobs.h: the job kinds) ---- */

/* ---- operator work (app/bdsctl.c) ---- */

/* bdsctl jobs: open requests older than cfg->rtl_expiry_days become
 * EXPIRED (link_request.updated). How many, or -1. */
long long rtl_expire(const struct config *, struct db *, struct arena *);

struct rtl_approve {
	const char	*biller_id;	/* bind to this catalog biller, or NULL: add one */
	/* the added biller: a portal biller at base_url (required), named
	 * name (default: the record's), of type (other) and country (US) */
	const char	*base_url, *name, *type, *country;
};
/* bdsctl discovery list [--all]: the records waiting for a decision (all
 * of them with all), one a line. 0, or -1. */
int	 rtl_discovery_list(const struct config *, struct db *, struct arena *, int all);
/* bdsctl discovery approve ID: the record (and every other PENDING or
 * REJECTED record of its registrable domain) bound to a catalog biller that
 * holds the domain from then on, every waiting request resolved
 * (link_request.updated). 0, or -1 after saying why. */
int	 rtl_discovery_approve(const struct config *, struct db *, struct arena *,
	    const char *id, const struct rtl_approve *);
/* bdsctl discovery reject ID: the domain an UNSUPPORTED catalog biller,
 * the record (and every other PENDING record of its domain) REJECTED with
 * it; biller.unsupported to each client environment with a request waiting
 * on one. 0, or -1 after saying why. */
int	 rtl_discovery_reject(const struct config *, struct db *, struct arena *,
	    const char *id);

extern const struct db_stmt_set rtl_stmt_set;
extern const struct db_stmt_set rtl_discovery_stmt_set;
extern const struct db_stmt_set rtl_onboard_stmt_set;

/* The module's settings (config keys of the same names). */
struct rtl_settings {
	int	 rtl_expiry_days;	/* PENDING/IN_PROGRESS older than this: EXPIRED */
	char	*discovery_hosts;	/* "name=addr[|addr],...": fixed answers for
					 * onboarding URL hosts, asked before DNS (dev
					 * and test stacks; empty in production) */
};

/* The module (rtl_module.c) and its settings block (core/config.h). */
extern const struct module rtl_module;
static inline const struct rtl_settings *
rtl_settings(const struct config *c)
{
	return config_module(c, &rtl_module);
}

#endif
