/*
 * The bills delta sync (DOMAIN.md "Bills and sync", "Sync").
 *
 * Every bill write takes the link's bill_seq row lock and the next number
 * (bills_store.c), so one link's commits happen in sequence order and a
 * reader that reads bill_seq.last_seq (its snapshot, no lock) as an upper
 * bound sees every change up to it: no late commit can land below a bound
 * already read.
 *
 * A cycle is (start, upper]: start is where the previous cycle ended (0
 * for a first sync), upper is the link's last_seq read at the cycle's
 * first page and kept in the cursor for the cycle's other pages. A page is
 * the link's bills with changed_seq in (position, upper] in changed_seq
 * order (the bills_sync index, a range scan at any depth). A change made
 * while a cycle is paged takes a number above upper: it is not in this
 * cycle (its row leaves the window if it was ahead of the position) and is
 * in the next one, so one cycle's pages never skip or repeat a bill.
 *
 * Cursor (lib/core/cursor.c: base64url, keyed BLAKE2b MAC under
 * cursor_key), scope "bills_sync/<client>/<environment>/<link>", so a
 * cursor opens only the link it was issued for. Fields, decimal:
 *	(start)			a cycle not begun: its upper is read at its
 *				first page (the last page's next_cursor)
 *	(start, position, upper) a cycle in progress
 * No cursor is (0).
 *
 * A sandbox key's page that ends a cycle (has_more false) is counted in
 * bill_sync_cycles: the cycles a client completed and the bound of the
 * last, which an anonymous sandbox's evaluation proof reports
 * (bills_sync_stats). Other environments write nothing on a read.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/arena.h"
#include "core/config.h"
#include "core/cursor.h"
#include "core/db.h"
#include "core/errors.h"
#include "core/json.h"
#include "core/req.h"
#include "core/standby.h"
#include "core/validate.h"
#include "links/links.h"
#include "bills/bills.h"
#include "bills/bills_sync.h"

#define LINK_COLS "l.client_id, l.environment, coalesce(s.last_seq, 0)"
enum link_col { LK_CLIENT_ID, LK_ENVIRONMENT, LK_LAST_SEQ, LK__MAX };
#define PAGE_COLS "id, entity, created_seq, changed_seq, coalesce(deleted_seq, 0)"
enum page_col { PG_ID, PG_ENTITY, PG_CREATED, PG_CHANGED, PG_DELETED, PG__MAX };

#define STATS_COLS "coalesce(sum(c.cycles), 0), coalesce((SELECT count(*) FROM bills b" \
	" JOIN bill_sync_cycles k ON k.client_id = b.client_id AND k.link_id = b.link_id" \
	" WHERE k.client_id = $1 AND k.environment = $2 AND b.created_seq <= k.synced_seq), 0)," \
	" " DB_ISO("min(c.first_at)") ", " DB_ISO("max(c.last_at)")
enum stats_col { ST_CYCLES, ST_BILLS, ST_FIRST, ST_LAST, ST__MAX };

enum { S_LINK, S_PAGE, S_CYCLE, S_STATS, S_FORGET, S__MAX };
static struct db_stmt stmts[S__MAX] = {
	/* whose link it is and its last number, one snapshot */
	[S_LINK] = { "bills_sync_link",
	    "SELECT " LINK_COLS " FROM links l"
	    " LEFT JOIN bill_seq s ON s.client_id = l.client_id AND s.link_id = l.id"
	    " WHERE l.id = $1" },
	/* (position, upper] in sequence order: a range scan of bills_sync */
	[S_PAGE] = { "bills_sync_page",
	    "SELECT " PAGE_COLS " FROM bills"
	    " WHERE client_id = $1 AND link_id = $2"
	    "  AND changed_seq > $3::bigint AND changed_seq <= $4::bigint"
	    " ORDER BY changed_seq LIMIT $5::int" },
	/* a cycle completed: one more, and its bound */
	[S_CYCLE] = { "bills_sync_cycle",
	    "INSERT INTO bill_sync_cycles AS c (client_id, link_id, environment, cycles,"
	    " synced_seq) VALUES ($1, $2, $3, 1, $4::bigint)"
	    " ON CONFLICT (client_id, link_id) DO UPDATE SET cycles = c.cycles + 1,"
	    " synced_seq = greatest(c.synced_seq, EXCLUDED.synced_seq), last_at = now()" },
	[S_STATS] = { "bills_sync_stats",
	    "SELECT " STATS_COLS " FROM bill_sync_cycles c"
	    " WHERE c.client_id = $1 AND c.environment = $2" },
	/* bill_seq names no client row (no cascade): forgotten with it */
	[S_FORGET] = { "bills_sync_forget",
	    "DELETE FROM bill_seq WHERE client_id = $1" },
};
const struct db_stmt_set bills_sync_stmt_set = { "bills_sync", stmts, S__MAX };

const struct vfield bills_sync_query[] = {
	CURSOR_LIMIT_FIELD(CURSOR_LIMIT_MAX),
	CURSOR_QUERY_FIELD,
	{ NULL }
};

/* The cycle a page belongs to. */
struct cycle {
	long long	 start, pos, upper;
	int		 fixed;		/* upper known (from the cursor) */
};

/* A sequence number as the cursor writes it: 1-18 decimal digits. */
static int
seq_parse(const char *s, long long *v)
{
	size_t n = strspn(s, "0123456789");

	if (n == 0 || n > 18 || s[n] != '\0')
		return -1;
	*v = strtoll(s, NULL, 10);
	return 0;
}

/* One link's changes: the cursor is bound to the key's client and
 * environment and the link; its fields are checked by cycle_or_reply. */
static const struct cursor_list sync_page = {
	.name = "bills_sync", .flags = CURSOR_TENANT, .shape = CURSOR_DELTA, .key = "data",
	.limit = CURSOR_LIMIT_DEFAULT,
	.hint = "drop the stored cursor and sync again from the start (no cursor)",
	.message = "the cursor is malformed or was not issued for this link",
};

/*
 * The cycle of the page: no cursor is a first sync (start 0); else the
 * cursor's, or the 400 written. last is the link's last number now: a
 * cursor never names a number above it.
 */
static int
cycle_or_reply(struct req *r, const struct cursor_page *pg, long long last, struct cycle *c)
{
	const char *const *f = pg->pos;

	memset(c, 0, sizeof(*c));
	if (json_get_str(r->query, "cursor") == NULL)
		return 0;
	if (pg->npos == 1 && seq_parse(f[0], &c->start) == 0 && c->start <= last) {
		c->pos = c->start;
		return 0;
	}
	if (pg->npos == 3 && seq_parse(f[0], &c->start) == 0 && seq_parse(f[1], &c->pos) == 0 &&
	    seq_parse(f[2], &c->upper) == 0 && c->start <= c->pos && c->pos <= c->upper &&
	    c->upper <= last) {
		c->fixed = 1;
		return 0;
	}
	return cursor_invalid(r, &sync_page);
}

/* pg's next_cursor: the n numbers seq. */
static void
next_of(struct req *r, struct cursor_page *pg, const long long *seq, size_t n)
{
	const char *f[3];

	for (size_t i = 0; i < n; i++)
		f[i] = arena_printf(r->arena, "%lld", seq[i]);
	cursor_page_next(r, pg, f, n);
}

/*
 * The link by id for the key: 0 with *link_id (canonical) and *last, or
 * the status written: 404 unknown, another client's or the client's own
 * link in another environment, 503/500 database.
 */
static int
link_or_reply(struct req *r, const char *id, const char **link_id, long long *last)
{
	const char *p[1] = { links_id_canonical(r, id) };
	PGresult *res;

	if (p[0] == NULL)
		return api_error(r, 404, ERR_LINK_NOT_FOUND, NULL, "no link %s", id);
	if ((res = db_query(r, &stmts[S_LINK], 1, p)) == NULL)
		return api_db_error(r);
	/* unknown, another client's (DOMAIN.md: as an unknown id), another
	 * environment's, or not the link a link access token names */
	if (PQntuples(res) != 1 || strcmp(PQgetvalue(res, 0, LK_CLIENT_ID), r->client_id) != 0 ||
	    strcmp(PQgetvalue(res, 0, LK_ENVIRONMENT), r->env) != 0 ||
	    (r->link_id != NULL && strcmp(r->link_id, p[0]) != 0))
		return api_error(r, 404, ERR_LINK_NOT_FOUND, NULL, "no link %s", id);
	*link_id = p[0];
	*last = strtoll(PQgetvalue(res, 0, LK_LAST_SEQ), NULL, 10);
	return 0;
}

int
bills_sync(struct req *r, struct json_object *out)
{
	const char *id = req_cap(r, "link_id"), *link_id = NULL, *p[5];
	struct json_object *added, *modified, *removed;
	struct cursor_page pg;
	struct cycle c;
	long long last = 0, next[3];
	PGresult *res;
	int rc, n, i;

	if ((rc = link_or_reply(r, id, &link_id, &last)) != 0 ||
	    (rc = cursor_page_open(r, &sync_page, &link_id, 1, &pg)) != 0 ||
	    (rc = cycle_or_reply(r, &pg, last, &c)) != 0)
		return rc;
	if (!c.fixed)
		c.upper = last;		/* the cycle's first page fixes its bound */
	p[0] = r->client_id;
	p[1] = link_id;
	p[2] = arena_printf(r->arena, "%lld", c.pos);
	p[3] = arena_printf(r->arena, "%lld", c.upper);
	p[4] = pg.limit1;
	if ((res = db_query(r, &stmts[S_PAGE], 5, p)) == NULL)
		return api_db_error(r);

	pg.items = json_obj(r->arena);
	added = json_arr(r->arena);
	modified = json_arr(r->arena);
	removed = json_arr(r->arena);
	n = PQntuples(res);
	for (i = 0; i < n && i < pg.limit; i++) {
		long long created = strtoll(PQgetvalue(res, i, PG_CREATED), NULL, 10);
		long long deleted = strtoll(PQgetvalue(res, i, PG_DELETED), NULL, 10);

		c.pos = strtoll(PQgetvalue(res, i, PG_CHANGED), NULL, 10);
		if (deleted > 0) {
			/* existed at the start and deleted in the window: removed;
			 * created and deleted inside it: nowhere (the position
			 * still moves past it) */
			if (created <= c.start && deleted > c.start) {
				struct json_object *o = json_obj(r->arena);

				json_set_str(o, "id", PQgetvalue(res, i, PG_ID));
				json_set_str(o, "bill_id", PQgetvalue(res, i, PG_ID));
				json_object_array_add(removed, json_object_get(o));
			}
			continue;
		}
		json_object_array_add(created > c.start ? added : modified,
		    json_object_get(db_json_raw(r->arena, res, i, PG_ENTITY)));
	}
	json_set(pg.items, "added", json_object_get(added));
	json_set(pg.items, "modified", json_object_get(modified));
	json_set(pg.items, "removed", json_object_get(removed));
	if ((pg.more = n > pg.limit)) {
		next[0] = c.start;
		next[1] = c.pos;
		next[2] = c.upper;
		next_of(r, &pg, next, 3);
	} else {
		next[0] = c.upper;	/* the next cycle starts where this one ends */
		next_of(r, &pg, next, 1);
		if (strcmp(r->env, "sandbox") == 0) {
			p[2] = r->env;
			p[3] = arena_printf(r->arena, "%lld", c.upper);
			if (standby_write(r, &stmts[S_CYCLE], 4, p) == NULL)
				return api_db_error(r);
		}
	}
	return cursor_page_reply(r, out, &pg, NULL);
}

int
bills_sync_stats(struct req *r, const char *client_id, const char *env,
    struct bills_sync_stats *st)
{
	const char *p[2] = { client_id, env };
	PGresult *res;

	memset(st, 0, sizeof(*st));
	if ((res = db_query(r, &stmts[S_STATS], 2, p)) == NULL || PQntuples(res) != 1)
		return -1;
	st->cycles = strtoll(PQgetvalue(res, 0, ST_CYCLES), NULL, 10);
	st->bills = strtoll(PQgetvalue(res, 0, ST_BILLS), NULL, 10);
	if (!PQgetisnull(res, 0, ST_FIRST))
		st->first_at = arena_strdup(r->arena, PQgetvalue(res, 0, ST_FIRST));
	if (!PQgetisnull(res, 0, ST_LAST))
		st->last_at = arena_strdup(r->arena, PQgetvalue(res, 0, ST_LAST));
	return 0;
}

int
bills_client_forget(struct req *r, const char *client_id)
{
	return db_query(r, &stmts[S_FORGET], 1, &client_id) != NULL ? 0 : -1;
}
