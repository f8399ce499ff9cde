#ifndef BDS_INSIGHTS_INT_H
#define BDS_INSIGHTS_INT_H
/* Inside lib/insights/: the rows (insights_store.c) the engine and the
 * routes share. */
#include <stdint.h>

struct req;
struct json_object;
struct ins_finding;

/* A live (OPEN or SNOOZED) insight of a link, as the engine reads it. */
struct insights_live {
	const char	*id, *type, *subject, *fingerprint, *bill_id, *account_id, *severity,
			*status;
	int		 bill_gone;	/* its bill was deleted */
	int		 seen;		/* a finding of this run names it */
};

/* Where a new insight belongs. */
struct insights_owner {
	const char	*client_id, *environment, *user_aid, *link_id;
};

/*
 * Lock insight id of the key's client and environment and of user_aid
 * (FOR UPDATE): 1 with *status and *snoozed_ms (0 when not snoozed), 0
 * not found (another tenant's, another user's), -1 database failure.
 */
int	 insights_lock(struct req *, const char *id, const char *user_aid,
	    const char **status, int64_t *snoozed_ms);
/*
 * The one write of a status: id (locked, of r's client) moves from `from`
 * to status; until: SNOOZED's instant (ISO); resolved_at: RESOLVED's (NULL:
 * now), resolved_by "engine" or "client". Emits insight.updated with
 * previous_status and sets *entity (arena JSON) when entity is not NULL.
 * 0, or -1 database failure.
 */
int	 insights_move(struct req *, const char *client_id, const char *environment,
	    const char *id, const char *from, const char *status, const char *until,
	    const char *resolved_at, const char *resolved_by, struct json_object **entity);
/* The entity of id, of the key's client and environment and user_aid:
 * 1 with *entity, 0 not found, -1 failure. */
int	 insights_entity(struct req *, const char *id, const char *user_aid,
	    struct json_object **entity);

/* ---- the engine's writes ---- */
/*
 * A finding no live insight holds: a new OPEN insight and insight.created,
 * unless the client user dismissed that subject or resolved it themselves,
 * or another run holds it live. 1 created, 0 not, -1 failure.
 */
int	 insights_create(struct req *, const struct insights_owner *,
	    const struct ins_finding *, const char *fingerprint);
/* The live insight l's finding changed: its figures are written;
 * insight.updated when the severity moved. 0, or -1 failure. */
int	 insights_refresh(struct req *, const struct insights_owner *,
	    const struct insights_live *l, const struct ins_finding *, const char *fingerprint);

#endif
