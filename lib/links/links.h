#ifndef BDS_LINKS_H
#define BDS_LINKS_H
/*
 * Links (DOMAIN.md "Link tokens, the connect flow, links"): a client's end
 * user's linked biller account in one environment. links.c holds the rows
 * and what other modules call (create, repair, access tokens, the entity,
 * link.completed); links_api.c the API-key routes; links_sandbox.c the
 * sandbox account links. The connect flow (link tokens, tickets, sessions,
 * exchange) adds its own links_tokens*.c / links_sessions*.c /
 * links_exchange*.c.
 *
 * Every function takes the caller's client (and environment): another
 * tenant's link is "none".
 */
#include "core/config.h"
#include "core/module.h"
#include "core/validate.h"

struct req;
struct json_object;
struct db_stmt_set;
struct config;
struct db;
struct arena;

#define LINKS_SANDBOX_BILLER	"blr_01900000-0000-7000-8000-000000000001"
#define LINKS_SANDBOX_PASSWORD	"pass_good"
#define LINKS_TOKEN_LAT		"bds_lat_"	/* link access token */
#define LINKS_ACCESS_TOKEN_TTL	3600		/* POST .../access-token: 1 h */
#define LINKS_REFRESH_COOLDOWN	600		/* POST .../refresh: 429 within 10 min */
/*
 * Inside statement text (core/db.h's DB_BY_ID): one link by its id ($2,
 * links_by_id), the tenant ($1) and the conditions in also (" AND ...", or
 * "") checked on the row, where no partial index can take them (links_due:
 * status = 'ACTIVE'); p is the table's prefix, "l." or "" (docs/DECISIONS.md
 * "Plan-proof statements").
 */
#define LINKS_BY_ID(p, also)	DB_BY_ID(p, also)

struct links_row {
	const char *id, *client_id, *environment, *client_user_id, *biller_id,
	    *status, *disconnect_reason, *credential_rejection_reason, *link_token_id;
};

/* The scopes of a link whose token named no consents: the bills, which is
 * what the consent screen then shows (docs/DECISIONS.md). */
#define LINKS_DEFAULT_SCOPES	"[\"bills\"]"

struct links_new {
	const char *client_id, *environment, *client_user_id, *biller_id;
	struct json_object *scopes;		/* array of scope names; NULL or
						 * empty: LINKS_DEFAULT_SCOPES */
	const char *username, *password;	/* sealed into links.credentials */
	const char *link_token_id;		/* NULL for sandbox account links */
	const char *device_token;		/* the portal's "remember this device"
						 * token (MFA), sealed beside them; may be NULL */
};

/*
 * Create an ACTIVE link with sealed credentials in the caller's transaction
 * and queue its first retrieval (jobq_add "retrieval", now). Emits nothing
 * (link.completed is the connect flow's, never the sandbox API's). 0 with
 * *row filled (arena strings), -1 database failure.
 */
int	 links_create(struct req *, const struct links_new *, struct links_row *row);
/*
 * Repair a DISCONNECTED link in place (update mode): new sealed credentials,
 * status ACTIVE, reasons cleared, a retrieval queued now. No event. 0 ok,
 * -1 database failure (or no such DISCONNECTED/ACTIVE link of the client).
 */
int	 links_repair(struct req *, const char *client_id, const char *link_id,
	    const char *username, const char *password);
/*
 * A fresh link access token (bds_lat_…) for the link, stored as SHA-256;
 * ttl_s 0: no expiry. The plaintext (shown once) as an arena string, NULL on
 * failure.
 */
const char *links_access_token_new(struct req *, const char *client_id,
	    const char *environment, const char *link_id, int ttl_s);
/* The link entity JSON (DOMAIN.md "Link entity"), arena-owned; NULL on
 * failure or when the client has no such link. */
struct json_object *links_json_by_id(struct req *, const char *client_id, const char *id);
/* Emit link.completed for the link once (sets completed_event_at). 0 ok,
 * -1 database failure. */
int	 links_completed(struct req *, const char *client_id, const char *link_id);
/*
 * The client's link by id ("link_…" or the bare UUID), in any environment:
 * 1 found (*row filled), 0 none, -1 database failure. Callers check
 * row->environment themselves.
 */
int	 links_get(struct req *, const char *client_id, const char *id, struct links_row *row);
/*
 * Move an ACTIVE link to DISCONNECTED with reason (expired,
 * credentials_rejected) and rejection (INVALID_CREDENTIALS,
 * CONNECTION_DEGRADED or NULL), emitting link.disconnected once per
 * transition. 1 moved, 0 not ACTIVE (nothing done), -1 database failure.
 */
int	 links_disconnect(struct req *, const char *client_id, const char *link_id,
	    const char *reason, const char *rejection);
/* The links client_id made in env (*n, whatever their status now) and when
 * the first and the last were made (ISO 8601, arena; NULL when none). 0, or
 * -1 on a database failure. */
int	 links_activity(struct req *, const char *client_id, const char *env, long long *n,
	    const char **first_at, const char **last_at);
/* "link_<uuid>" for an id given as "link_<uuid>" or a bare UUID; NULL when
 * it is neither. Arena string. */
const char *links_id_canonical(struct req *, const char *id);

/* ---- retrieval support (lib/jobs/jobs_retrieval.c) ---- */

/* What a retrieval needs of its link and biller (arena strings). */
struct links_retrieval {
	const char *status, *environment, *client_user_id, *biller_id, *biller_name,
	    *connector;
};
/* 1 found (*lr filled), 0 no such link of the client (or one to a biller
 * its environment does not link: billers_linkable), -1 database failure. */
int	 links_retrieval_load(struct req *, const char *client_id, const char *link_id,
	    struct links_retrieval *lr);
/* In the caller's transaction, the link's row locked to its end: 1 the
 * link is ACTIVE, 0 not (or no such link), -1 database failure. */
int	 links_retrieval_active(struct req *, const char *client_id, const char *link_id);
/* A link's opened credentials (arena strings; wipe them after use). */
struct links_credentials {
	const char *username, *password;
	const char *device_token;	/* NULL when none was stored */
	size_t ulen, plen, dlen;
	int refresh_count;	/* successful retrievals so far */
	int repairs;		/* update-mode repairs so far */
};
/* Open the link's credentials, its row locked to the end of the caller's
 * transaction (when there is one): 1 (c filled), 0 none (no
 * link or no credentials: revoked), -1 failure (database, or a sealed value
 * that does not open). */
int	 links_credentials_open(struct req *, const char *client_id, const char *link_id,
	    struct links_credentials *c);
/* Zero the plaintext credentials. */
void	 links_credentials_wipe(struct links_credentials *c);
/* Re-seal the link's credentials with a new device token (NULL: none), in
 * the caller's transaction (locks the row). 0 ok (or no credentials), -1. */
int	 links_credentials_device_set(struct req *, const char *client_id,
	    const char *link_id, const char *device_token);

/* ---- the vault (links_vault.c) ---- */

/* {"u", "p", "d"?} sealed for the link under the vault's current key: hex
 * in the arena, NULL on failure. The plaintext copies are wiped. */
const char *links_vault_seal(struct req *, const char *link_id, const char *username,
	    const char *password, const char *device_token);
/* The id of the key links_vault_seal uses (stored beside the value). */
const char *links_vault_key_id(struct req *);
/* bdsctl keys rotate-credentials: re-seal every link's credentials under
 * the current key, in batches; prints the count. 0 ok, -1 failure (or rows
 * that open under no key of the ring). */
int	 links_vault_rotate(const struct config *, struct db *, struct arena *);
/* Upsert one account of the link by the connector's ref, ACTIVE or (the
 * biller lists it closed) CLOSED: the account id (acct_…, arena), NULL on
 * failure. */
const char *links_account_upsert(struct req *, const char *client_id, const char *link_id,
	    const char *ref, const char *name, const char *type, const char *mask,
	    const char *service_address, int closed);
/* A successful retrieval: sync fields, refresh_count + 1, bill_count; the
 * first one emits connection.ready (once per link). 0 ok, -1. */
int	 links_sync_done(struct req *, const char *client_id, const char *link_id,
	    long long bill_count);

/* ---- scheduled refresh, limits, operators (links_refresh.c) ---- */

/* bdsctl jobs: queue a retrieval of every ACTIVE link whose refresh is due;
 * how many, -1 on failure. */
long long links_refresh_due(const struct config *, struct db *, struct arena *);
/*
 * A retrieval of the link failed transiently (the jobs runner's failure
 * hook, in its own transaction): sync.status error; dead (the job's last
 * attempt) also schedules the next refresh after the backoff. A link
 * failing longer than degraded_after_s becomes DISCONNECTED
 * credentials_rejected / CONNECTION_DEGRADED (link.disconnected). 0, -1.
 */
int	 links_retrieval_failed(struct req *, const char *client_id, const char *link_id,
	    int dead);
/* bdsctl links refresh ID: queue an ACTIVE link's retrieval now (no
 * throttle). bdsctl links correct-reason ID FAMILY REASON: record the
 * correction and emit link.failure_reason_corrected. 0 ok, -1 (printed). */
int	 links_refresh_admin(const struct config *, struct db *, struct arena *, const char *id);
int	 links_correct_reason(const struct config *, struct db *, struct arena *,
	    const char *id, const char *family, const char *reason);
/*
 * Emit link.disconnected (data.object as the spec's table). A rejection
 * before any link exists (pre-completion) has link_id "" and names the
 * link token and its request to link (NULL: none); NULL link_token_id for a
 * link's own disconnection. 0 ok, -1.
 */
int	 links_disconnected_emit(struct req *, const char *client_id, const char *environment,
	    const char *link_id, const char *user_id, const char *biller_id, const char *reason,
	    const char *rejection, const char *link_token_id, const char *link_request_id);
/* links_access_token_new that also gives the expiry (ISO 8601, arena; NULL
 * when the token does not expire). */
const char *links_token_mint(struct req *, const char *client_id, const char *environment,
	    const char *link_id, int ttl_s, const char **expires_at);

/* ---- handlers (lib/routes.c), API key of the link's client ---- */
int	 links_list(struct req *, struct json_object *);
int	 links_get_one(struct req *, struct json_object *);
int	 links_delete(struct req *, struct json_object *);
int	 links_refresh(struct req *, struct json_object *);
int	 links_access_token(struct req *, struct json_object *);
/* sandbox host, sandbox key */
int	 links_sandbox_create(struct req *, struct json_object *);
int	 links_sandbox_reset_login(struct req *, struct json_object *);
int	 links_sandbox_advance(struct req *, struct json_object *);

extern const struct vfield links_list_query[], links_sandbox_create_fields[];

extern const struct db_stmt_set links_stmt_set, links_api_stmt_set, links_sandbox_stmt_set,
    links_vault_stmt_set, links_refresh_stmt_set;

/* The module's settings (config keys of the same names). */
struct links_settings {
	char	*link_url;		/* the link host's base URL, no trailing slash:
					 * connect_url, hosted_url, CORS origin */
	int	 refresh_interval_s;	/* a link's refresh period */
	int	 refresh_jitter_pct;	/* spread: next = interval ± this % */
	int	 refresh_backoff_s;	/* after a failed refresh: base, doubled per failure */
	int	 refresh_backoff_max_s;	/* ... capped here */
	int	 degraded_after_s;	/* transient failures this long: CONNECTION_DEGRADED */
};

/* The module (links_module.c) and its settings block (core/config.h). */
extern const struct module links_module;
static inline const struct links_settings *
links_settings(const struct config *c)
{
	return config_module(c, &links_module);
}

/* The usage metric computed from its rows (core/module.h; links_usage.c). */
extern const struct db_stmt_set links_usage_stmt_set;
extern const struct module_usage links_usage[];

#endif
