#ifndef BDS_BILLS_SYNC_H
#define BDS_BILLS_SYNC_H
/*
 * The bills delta sync (DOMAIN.md "Bills and sync", "Sync"):
 * GET /v1/account-links/{link_id}/bills/sync.
 */

struct json_object;
struct req;
struct vfield;
struct db_stmt_set;

/* limit (core/cursor.h's page sizes: 1-500, default 100) and cursor;
 * page/page_size are unknown: 400 */
extern const struct vfield bills_sync_query[];

/*
 * One page of a link's changes for the key's client and environment.
 * 200 {"data": {added, modified, removed, next_cursor, has_more}}; 404
 * LINK_NOT_FOUND (unknown link, or the client's link in another
 * environment); 403 CLIENT_ID_MISMATCH (another client's link); 400
 * INVALID_CURSOR (a cursor that is malformed, tampered with, or issued for
 * another link, client or environment). Readers take no locks.
 */
int	 bills_sync(struct req *, struct json_object *);

extern const struct db_stmt_set bills_sync_stmt_set;

#endif
