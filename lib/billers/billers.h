#ifndef BDS_BILLERS_H
#define BDS_BILLERS_H
/*
 * The biller catalog (DOMAIN.md "Billers"): reference data shared by every
 * client, loaded from data/billers.csv by `bdsctl billers import`. The API
 * reads it (list, search by e-mail domain, get); links and jobs look a
 * biller up by id; the connect picker lists the linkable ones.
 */
#include <stddef.h>

#include "core/validate.h"

struct arena;
struct config;
struct db;
struct db_stmt_set;
struct json_object;
struct req;

struct billers_row {
	const char	*id, *name, *type, *status, *country, *connector, *base_url;
};

/* The biller id (any status); 0 found (b filled, arena strings), else the
 * status already written: 404 BILLER_NOT_FOUND (also for a malformed id),
 * 503/500 on a database failure. */
int	 billers_get_or_reply(struct req *, const char *id, struct billers_row *b);
/* 1 found (b filled), 0 none, -1 database failure: for callers that are not
 * request handlers of the biller routes (links, jobs). */
int	 billers_get(struct req *, const char *id, struct billers_row *b);
/*
 * May environment env ("sandbox", "development", "production") link the
 * biller id now? The one answer every gate of the connect flow asks
 * (docs/DECISIONS.md "Environments: which connector links where"): the
 * biller's connector decides (SQL billers_linkable: sandbox in the
 * sandbox only; portal in development and production, and in the sandbox
 * when the catalog sets sandbox_portal), and an UNSUPPORTED biller links
 * nowhere.
 */
enum billers_link {
	BILLERS_LINK_FAILED = -1,	/* database failure */
	BILLERS_LINK_UNKNOWN = 0,	/* no such biller (or a malformed id) */
	BILLERS_LINK_OK,		/* env may link it */
	BILLERS_LINK_UNSUPPORTED,	/* status UNSUPPORTED */
	BILLERS_LINK_OTHER_ENV		/* its connector does not link in env */
};
enum billers_link billers_linkable(struct req *, const char *env, const char *id);
/* billers_linkable as a reply: 0 when BILLERS_LINK_OK, else the status
 * written: 400 VALIDATION_ERROR naming field with errors[].code
 * unknown_biller, biller_unsupported or biller_not_in_environment; 503 on a
 * database failure. */
int	 billers_linkable_or_reply(struct req *, const char *env, const char *id,
	    const char *field);
/*
 * The connect picker: ACTIVE and DEGRADED billers that env may link
 * (billers_linkable), those matching search_term (NULL: all; only real
 * matches, see billers.c), the most linked in env first, at most limit, as
 * a JSON array of picker items (billers_picker_item); *total the linkable
 * billers, *matches the ones matching. NULL on a database failure.
 */
struct json_object *billers_picker(struct req *, const char *env, const char *search_term,
	    int limit, long long *total, long long *matches);
/* One biller as a picker item {id, object, name, type, status, domains,
 * website, login_url, consent_scopes, capabilities, logo_src} (logo_src:
 * the stored logo's path on the link host, or null); arena-owned, NULL
 * when none or on a database failure. */
struct json_object *billers_picker_item(struct req *, const char *id);
/* The biller entity as the API shows it (arena-owned), or NULL (none or a
 * database failure). */
struct json_object *billers_json_by_id(struct req *, const char *id);

/* For requests to link and discovery (lib/rtl): how many linkable
 * (ACTIVE, DEGRADED) billers have a domain equal to domain or below it on
 * a label boundary (a registrable domain's billers): 0, 1 with *id set
 * (arena), 2 for "more than one", or -1 on a database failure. With none
 * linkable, *unsupported names an UNSUPPORTED biller of the domain, if
 * there is one (else NULL). */
int	 billers_under_domain(struct req *, const char *domain, const char **id,
	    const char **unsupported);
/* bdsctl discovery approve: one catalog row (the CSV's columns, BC__MAX
 * fields already passed billers_csv_row_check) upserted by id in the
 * caller's transaction: 1 inserted, 0 updated or unchanged, -1 database
 * failure. */
int	 billers_row_upsert(struct db *, struct arena *, char *const *fields);
/* bdsctl discovery approve --biller: domain added to the biller's domains
 * (in the caller's transaction): 1 added, 0 there already, -1 failure. */
int	 billers_add_domain(struct db *, struct arena *, const char *id, const char *domain);

/* Routes (lib/routes.c). */
extern const struct vfield billers_list_query[];
extern const struct vfield billers_by_email_query[];
/* GET /v1/billers: 200 {billers, has_more, next_cursor, total_count}. */
int	 billers_list(struct req *, struct json_object *out);
/* GET /v1/billers/search/by-email: 200 {billers}; 400 on a bad address. */
int	 billers_by_email(struct req *, struct json_object *out);
/* GET /v1/billers/{id}: 200 the entity; 404 BILLER_NOT_FOUND. */
int	 billers_get_route(struct req *, struct json_object *out);

/* Operator commands (app/bdsctl.c). Messages go to stdout/stderr. */
/* Load a catalog CSV (DOMAIN.md's columns, RFC 4180): every row validated,
 * upserted by id in one transaction; a bad row names its line and field
 * and loads nothing. 0 ok (counts printed), -1 failure. */
int	 billers_import(const struct config *, struct db *, struct arena *,
	    const char *path);
/* bdsctl billers set-rank ID N|none: the biller's place in the picker's
 * curated order (after popularity; 1 first, none: after every ranked
 * one). 0 ok, -1 (said). */
int	 billers_set_rank(const struct config *, struct db *, struct arena *,
	    const char *id, const char *rank);
/* Set a biller's status; UNSUPPORTED emits biller.unsupported to every
 * (client, environment) with a link on it that is not REVOKED. 0 ok, -1. */
int	 billers_set_status(const struct config *, struct db *, struct arena *,
	    const char *id, const char *status);

extern const struct db_stmt_set billers_stmt_set;
extern const struct db_stmt_set billers_admin_stmt_set;

#endif
