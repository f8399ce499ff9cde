#ifndef BDS_BILLERS_CACHE_H
#define BDS_BILLERS_CACHE_H
/*
 * The worker's cache of catalog answers: the exact request
 * (billers_cache_key) → the 200 body as sent. The catalog is the same for
 * every caller, so nothing of the caller is in the key. It is dropped as a
 * whole when the billers table changed (the trigger of
 * sql/028_billers_notify.sql notifies BILLERS_CACHE_CHANNEL) or the
 * worker's connection changed (db_channel_version). Bounded by
 * BILLERS_CACHE_ENTRIES and BILLERS_CACHE_BYTES (least recently used out).
 *
 * A handler:
 *	key = billers_cache_key(r->arena, "list", parts, n);
 *	if ((rc = billers_cache_get(r, key, &mark)) != 0)
 *		return rc;
 *	... the query, out filled ...
 *	billers_cache_put(r, key, mark, out);
 *	return 200;
 */
#include <stddef.h>

struct arena;
struct json_object;
struct req;

#define BILLERS_CACHE_CHANNEL	"bds_billers"
#define BILLERS_CACHE_ENTRIES	128
#define BILLERS_CACHE_BYTES	(2u << 20)	/* keys and bodies */

/* kind and each part (NULL allowed) length-prefixed: no two requests share
 * a key. Arena string. */
const char *billers_cache_key(struct arena *, const char *kind, const char *const *parts,
	    size_t n);
/*
 * 200 with r->out the stored answer; 0 on a miss, with *mark to hand to
 * billers_cache_put; otherwise the status already written (a database
 * failure; 401 for a key found revoked, which the dispatcher answers).
 * It looks only after a query of this request has returned (notifications
 * come with results): a key from the worker's key cache that no query
 * confirmed yet is confirmed first, the round trip the dispatcher makes
 * after such a handler anyway.
 */
int	 billers_cache_get(struct req *, const char *key, unsigned long long *mark);
/* After a miss: out, the complete 200 answer, serialised once; stored
 * unless the catalog or the connection changed since mark; r->out becomes
 * that text. */
void	 billers_cache_put(struct req *, const char *key, unsigned long long mark,
	    struct json_object *out);
/* Drop everything (tests; exit). */
void	 billers_cache_free(void);

#endif
