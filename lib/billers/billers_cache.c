/*
 * The worker's cache of catalog answers. Every API client reads
 * the same catalog and it changes rarely (an operator's import or status
 * change, a migration), so a worker keeps the answers it gave, keyed by
 * the exact request, and answers them again without asking PostgreSQL to
 * rank, count and build the page.
 *
 * Invalidation: a statement trigger on billers notifies
 * BILLERS_CACHE_CHANNEL; the worker's connection listens on it
 * (db_channel_version registers it), and its version changes with every
 * notification and every new connection. The entries were made under one
 * version; another one drops them all. PostgreSQL sends a notification
 * committed before a query ahead of that query's result, so once a query
 * of this request has returned, every change committed before the request
 * came is known: an answer is never older than the request.
 *
 * Memory: malloc'd outside the request arena, at most
 * BILLERS_CACHE_ENTRIES entries and BILLERS_CACHE_BYTES of keys and
 * bodies; the least recently used go first. An answer larger than a
 * quarter of that is not kept.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "billers/billers_cache.h"
#include "core/arena.h"
#include "core/auth.h"
#include "core/db.h"
#include "core/errors.h"
#include "core/json.h"
#include "core/req.h"

#define ENTRY_MAX	(BILLERS_CACHE_BYTES / 4)

struct entry {
	uint64_t	 hash;		/* of the key */
	char		*key;		/* one malloc'd block: key, NUL, body */
	size_t		 klen, blen;
	unsigned long long used;	/* last hit or store; 0: empty slot */
};

static struct {
	struct entry	 e[BILLERS_CACHE_ENTRIES];
	size_t		 bytes;		/* keys and bodies held */
	unsigned long long tick;
	unsigned long long version;	/* what every entry was made under */
	int		 at_exit;
} bc;

static uint64_t
fnv1a(const char *s, size_t n)
{
	uint64_t h = 14695981039346656037ull;

	for (size_t i = 0; i < n; i++) {
		h ^= (unsigned char)s[i];
		h *= 1099511628211ull;
	}
	return h;
}

static void
drop(struct entry *e)
{
	if (e->used == 0)
		return;
	bc.bytes -= e->klen + e->blen;
	free(e->key);
	memset(e, 0, sizeof(*e));
}

void
billers_cache_free(void)
{
	for (size_t i = 0; i < BILLERS_CACHE_ENTRIES; i++)
		drop(&bc.e[i]);
}

/* The entries were made under another version: all go. */
static void
revalidate(unsigned long long v)
{
	if (v != bc.version) {
		billers_cache_free();
		bc.version = v;
	}
}

const char *
billers_cache_key(struct arena *a, const char *kind, const char *const *parts, size_t n)
{
	const char *k = kind;

	for (size_t i = 0; i < n; i++)
		k = parts[i] == NULL ? arena_printf(a, "%s/~", k) :
		    arena_printf(a, "%s/%zu:%s", k, strlen(parts[i]), parts[i]);
	return k;
}

static struct entry *
find(const char *key, size_t klen, uint64_t h)
{
	for (size_t i = 0; i < BILLERS_CACHE_ENTRIES; i++) {
		struct entry *e = &bc.e[i];

		if (e->used != 0 && e->hash == h && e->klen == klen &&
		    memcmp(e->key, key, klen) == 0)
			return e;
	}
	return NULL;
}

int
billers_cache_get(struct req *r, const char *key, unsigned long long *mark)
{
	size_t klen = strlen(key);
	uint64_t h = fnv1a(key, klen);
	struct entry *e = find(key, klen, h);
	unsigned long long v;
	const char *body;

	if (e == NULL || r->db == NULL) {
		/* a miss costs what it did: the query confirms the key */
		*mark = r->db != NULL ? db_channel_version(r->db, BILLERS_CACHE_CHANNEL) : 0;
		return 0;
	}
	/*
	 * Something to serve: the notifications of changes committed before
	 * this request come with the result of its first query. The API key
	 * (auth_key's lookup) or the session (auth_jwt) made one, unless the
	 * key came from the worker's key cache: then its confirmation is that
	 * round trip.
	 */
	if (r->key_unconfirmed != NULL) {
		if (auth_confirm(r) != 0)
			return api_db_error(r);
		if (r->key_revoked)
			return 401;	/* the dispatcher answers it */
	}
	v = db_channel_version(r->db, BILLERS_CACHE_CHANNEL);
	revalidate(v);
	if (v == 0 || (e = find(key, klen, h)) == NULL) {
		*mark = v;
		return 0;
	}
	e->used = ++bc.tick;
	body = e->key + e->klen + 1;
	r->out = json_raw(r->arena, arena_memdup(r->arena, body, e->blen), e->blen);
	return 200;
}

/* Room for need more bytes and one more entry: the least recently used
 * go. The free slot. */
static struct entry *
make_room(size_t need)
{
	for (;;) {
		struct entry *lru = NULL, *free_slot = NULL;

		for (size_t i = 0; i < BILLERS_CACHE_ENTRIES; i++) {
			struct entry *e = &bc.e[i];

			if (e->used == 0) {
				if (free_slot == NULL)
					free_slot = e;
			} else if (lru == NULL || e->used < lru->used) {
				lru = e;
			}
		}
		if (free_slot != NULL && bc.bytes + need <= BILLERS_CACHE_BYTES)
			return free_slot;
		drop(lru);	/* never NULL here: need <= ENTRY_MAX */
	}
}

void
billers_cache_put(struct req *r, const char *key, unsigned long long mark,
    struct json_object *out)
{
	size_t klen = strlen(key), blen;
	uint64_t h = fnv1a(key, klen);
	unsigned long long v;
	const char *body;
	struct entry *e;
	char *block;

	if (mark == 0 || r->db == NULL)
		return;
	v = db_channel_version(r->db, BILLERS_CACHE_CHANNEL);
	revalidate(v);
	/* changed while the query ran: its answer may predate the change */
	if (v != mark)
		return;
	body = json_dump(r->arena, out, &blen);
	r->out = json_raw(r->arena, body, blen);	/* serialised once */
	if (klen + blen > ENTRY_MAX || find(key, klen, h) != NULL)
		return;
	if ((block = malloc(klen + 1 + blen)) == NULL)
		return;
	e = make_room(klen + blen);
	memcpy(block, key, klen + 1);
	memcpy(block + klen + 1, body, blen);
	e->hash = h;
	e->key = block;
	e->klen = klen;
	e->blen = blen;
	e->used = ++bc.tick;
	bc.bytes += klen + blen;
	if (!bc.at_exit)
		bc.at_exit = atexit(billers_cache_free) == 0;
}
