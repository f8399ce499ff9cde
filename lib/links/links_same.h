#ifndef BDS_LINKS_SAME_H
#define BDS_LINKS_SAME_H
/*
 * Linking the same biller login again (docs/DECISIONS.md "Linking the same
 * account twice"): a link remembers the keyed hash of its login
 * (links_attempts.h, links_username_hash), so the same end user
 * (client_user_id) linking the same biller with the same login finds the
 * ACTIVE link made the first time instead of a second one that would
 * retrieve the same bills. The sandbox account links and the connect flow
 * ask before links_create.
 */
struct req;
struct links_new;
struct links_row;

/*
 * The client's ACTIVE link in n's environment for n's client_user_id,
 * biller and username, in the caller's transaction, which then holds a lock
 * on that identity until it ends (a concurrent linking of the same login
 * waits, then finds this one's link). 1 with *row filled (arena strings),
 * 0 none, -1 database failure.
 */
int	 links_same(struct req *, const struct links_new *n, struct links_row *row);

#endif
