/*
 * The biller catalog as the API shows it: the list (filters, ranked
 * search, keyset cursor, total_count), the search by e-mail domain, one
 * biller, and the lookups links and jobs use. The catalog is shared by
 * every client: nothing here is tenant-scoped.
 *
 * Search (DOMAIN.md "Billers"): the term is folded like search_text
 * (billers_fold: unaccent + lower case) and matches when pg_trgm's word
 * similarity reaches its threshold or the folded term is a substring.
 * Rank: word similarity, plus 1 when the folded name equals the term, plus
 * 0.5 when it starts with it. Pages are ordered by rank (descending), then
 * the sort key (folded name, or created_at) in sort_order, then id; the
 * cursor holds the last row's (rank, key, id), so ranked pages neither skip
 * nor repeat, and its MAC binds the filters: another filter set refuses it.
 *
 * The list, the search by e-mail and one biller are answered from the
 * worker's cache (billers_cache.c) while the catalog does not change: an
 * answer depends only on the catalog, the request's parameters and the
 * cursor key (the configuration: a reload starts new workers), never on
 * the caller.
 */
#include <stdlib.h>
#include <string.h>

#include "billers/billers.h"
#include "billers/billers_cache.h"
#include "billers/billers_csv.h"
#include "core/arena.h"
#include "core/config.h"
#include "core/crypto.h"
#include "core/cursor.h"
#include "core/db.h"
#include "core/errors.h"
#include "core/json.h"
#include "core/req.h"
#include "core/validate.h"

#define BILLERS_TERM_MAX	100

/* The biller entity (alias b) as JSON text: DOMAIN.md "Billers"; kept
 * beside the row by a trigger (sql/021_billers_fast.sql). */
#define ENTITY "b.entity"

/*
 * The folded term of $1 and its LIKE pattern, once per statement. Both
 * match conditions are served by the trigram index on search_text.
 */
#define TERM "q AS (SELECT billers_fold($1::text) AS t, '%' || replace(replace(replace(" \
	"billers_fold($1::text), '\\', '\\\\'), '%', '\\%'), '_', '\\_') || '%' AS lk)"
/* A biller (alias b) matches the term. */
#define MATCH "(q.t <% b.search_text OR b.search_text LIKE q.lk)"
/* Its rank. */
#define RANK \
	"(word_similarity(q.t, b.search_text)::float8" \
	" + CASE WHEN b.name_folded = q.t THEN 1::float8" \
	"   WHEN starts_with(b.name_folded, q.t) THEN 0.5::float8 ELSE 0::float8 END)"
#define LIST_COLS "total, p.rank, p.k, p.id, "
enum list_col { L_TOTAL, L_RANK, L_KEY, L_ID, L_ENTITY, L__MAX };
#define ROW_COLS "b.id, b.name, b.type, b.status, b.country, b.connector, b.base_url"
enum row_col { R_ID, R_NAME, R_TYPE, R_STATUS, R_COUNTRY, R_CONNECTOR, R_BASE_URL, R__MAX };
enum entity_col { E_ENTITY };

/*
 * The list: $1 term, $2 status, $3 type, $4 consent_scope, $5 sort_by, $6
 * sort_order, $7..$9 the cursor's (rank, key, id) or NULL, $10 the page
 * size + 1. One row even when the page is empty (p.id NULL), so
 * total_count always comes back. RANK_EXPR ranks a row of FROM_WHERE (the
 * searched billers, or the whole catalog).
 */
#define LIST(RANK_EXPR, FROM_WHERE) \
	" f AS (SELECT b.id, " RANK_EXPR " AS rank," \
	"  CASE WHEN $5::text = 'created_at' THEN " CURSOR_POS("b.created_at") \
	"  ELSE b.name_folded END AS k" \
	"  FROM " FROM_WHERE \
	"  AND ($2::text IS NULL OR b.status = $2::text)" \
	"  AND ($3::text IS NULL OR b.type = $3::text)" \
	"  AND ($4::text IS NULL OR $4::text = ANY (b.consent_scopes)))," \
	" p AS (SELECT f.* FROM f WHERE $7::float8 IS NULL OR f.rank < $7::float8" \
	"  OR (f.rank = $7::float8 AND CASE WHEN $6::text = 'desc'" \
	"   THEN (f.k, f.id) < ($8::text, $9::text) ELSE (f.k, f.id) > ($8::text, $9::text) END)" \
	"  ORDER BY f.rank DESC, CASE WHEN $6::text = 'desc' THEN f.k END DESC," \
	"  CASE WHEN $6::text = 'desc' THEN f.id END DESC, f.k, f.id LIMIT $10::int)" \
	" SELECT " LIST_COLS ENTITY \
	" FROM (SELECT count(*) AS total FROM f) c LEFT JOIN p ON true" \
	" LEFT JOIN billers b ON b.id = p.id" \
	" ORDER BY p.rank DESC, CASE WHEN $6::text = 'desc' THEN p.k END DESC," \
	" CASE WHEN $6::text = 'desc' THEN p.id END DESC, p.k, p.id"

/*
 * The picker's search (docs/DECISIONS.md "The connect page's picker, logos
 * and resend"): only real matches. The folded term matches a biller when a
 * word of its name starts with it (words: runs of letters and digits), a
 * domain starts with it, or pg_trgm's strict word similarity reaches
 * PICK_SIMILARITY (a typo: "sandbx"). No substring inside a word ("as" is
 * not "Gas"). Rank: the name starting with the term 3, a word 2, a domain
 * 1, plus the similarity.
 */
#define PICK_SIMILARITY	"0.5"
#define PICK_WORDS(x)	"btrim(regexp_replace(" x ", '[^[:alnum:]]+', ' ', 'g'))"
#define PICK_ESC(x)	"replace(replace(replace(" x ", '\\', '\\\\'), '%', '\\%'), '_', '\\_')"
#define PICK_NAME_WORDS	"(' ' || " PICK_WORDS("e.name_folded") ")"
#define PICK_WORD	PICK_NAME_WORDS " LIKE '% ' || " PICK_ESC("q.w") " || '%'"
#define PICK_DOMAIN	"EXISTS (SELECT 1 FROM unnest(e.domains) d WHERE d LIKE q.pre)"
#define PICK_SIMILAR	"strict_word_similarity(q.w, e.search_text) >= " PICK_SIMILARITY
#define PICK_MATCH	"(q.w <> '' AND (" PICK_WORD " OR " PICK_DOMAIN " OR " PICK_SIMILAR "))"
#define PICK_RANK \
	"CASE WHEN $2::text IS NULL THEN 0::float8 ELSE" \
	" CASE WHEN " PICK_WORDS("e.name_folded") " LIKE " PICK_ESC("q.w") " || '%' THEN 3" \
	"  WHEN " PICK_WORD " THEN 2 WHEN " PICK_DOMAIN " THEN 1 ELSE 0 END" \
	" + strict_word_similarity(q.w, e.search_text)::float8 END"

enum {
	B_LIST,
	B_LIST_SEARCH,
	B_BY_DOMAINS,
	B_ROW,
	B_ENTITY,
	B_PICKER,
	B_PICKER_ITEM,
	B_LINKABLE,
	B_UNDER_DOMAIN,	/* requests to link, discovery (lib/rtl) */
	B__MAX
};
static struct db_stmt stmts[B__MAX] = {
	/* the whole catalog: the keyset walks the (name_folded, id) order */
	[B_LIST] = { "billers_list",
	    "WITH" LIST("0::float8", "billers b WHERE $1::text IS NULL") },
	[B_LIST_SEARCH] = { "billers_list_search",
	    "WITH " TERM "," LIST(RANK, "billers b, q WHERE " MATCH) },
	/* $1: the address's domain and its parents, as a text[] literal. */
	[B_BY_DOMAINS] = { "billers_by_domains",
	    "SELECT " ENTITY " FROM billers b WHERE b.domains && $1::text[]"
	    " ORDER BY b.name_folded, b.id" },
	[B_ROW] = { "billers_row",
	    "SELECT " ROW_COLS " FROM billers b WHERE b.id = $1" },
	[B_ENTITY] = { "billers_entity",
	    "SELECT " ENTITY " FROM billers b WHERE b.id = $1" },
	/*
	 * The connect picker (billers_picker): $1 the environment, $2 the term
	 * or NULL, $3 the page size. One row even when nothing matches (p.id
	 * NULL), so both counts always come back.
	 */
	[B_PICKER] = { "billers_picker",
	    "WITH q AS (SELECT " PICK_WORDS("billers_fold($2::text)") " AS w,"
	    "  " PICK_ESC("billers_fold($2::text)") " || '%' AS pre),"
	    " e AS (SELECT b.id, b.name_folded, b.connector, b.picker_rank, b.search_text,"
	    "  b.domains, COALESCE(c.links, 0) AS links FROM billers b"
	    "  LEFT JOIN biller_link_counts c ON c.environment = $1 AND c.biller_id = b.id"
	    "  WHERE b.status IN ('ACTIVE', 'DEGRADED') AND billers_linkable($1, b)),"
	    " m AS (SELECT e.*, " PICK_RANK " AS rank FROM e, q"
	    "  WHERE $2::text IS NULL OR " PICK_MATCH "),"
	    " p AS (SELECT m.* FROM m ORDER BY m.rank DESC, m.links DESC,"
	    "  m.picker_rank NULLS LAST, m.connector <> 'sandbox', m.name_folded, m.id"
	    "  LIMIT $3::int)"
	    " SELECT (SELECT count(*) FROM e), (SELECT count(*) FROM m),"
	    "  CASE WHEN p.id IS NOT NULL THEN billers_picker_item(b, l) END"
	    " FROM (SELECT 1) one LEFT JOIN p ON true"
	    " LEFT JOIN billers b ON b.id = p.id"
	    " LEFT JOIN biller_logos l ON l.biller_id = p.id"
	    " ORDER BY p.rank DESC, p.links DESC, p.picker_rank NULLS LAST,"
	    "  p.connector <> 'sandbox', p.name_folded, p.id" },
	[B_PICKER_ITEM] = { "billers_picker_item",
	    "SELECT billers_picker_item(b, l) FROM billers b"
	    " LEFT JOIN biller_logos l ON l.biller_id = b.id WHERE b.id = $1" },
	[B_LINKABLE] = { "billers_linkable",
	    "SELECT b.status = 'UNSUPPORTED', billers_linkable($2, b) FROM billers b"
	    " WHERE b.id = $1" },
	/* for lib/rtl: linkable billers with a domain equal to $1 or below
	 * it on a label boundary (the catalog is small: a scan); two rows are
	 * enough to know it is not one */
	/* the linkable ones first, then an UNSUPPORTED one */
	[B_UNDER_DOMAIN] = { "billers_under_domain",
	    "SELECT b.id, b.status = 'UNSUPPORTED' FROM billers b"
	    " WHERE EXISTS (SELECT 1 FROM unnest(b.domains) d WHERE d = $1"
	    "  OR right(d, length($1) + 1) = '.' || $1)"
	    " ORDER BY b.status = 'UNSUPPORTED', b.id LIMIT 2" },
};
const struct db_stmt_set billers_stmt_set = { "billers", stmts, B__MAX };

static const char *const sort_bys[] = { "name", "created_at", NULL };
static const char *const sort_orders[] = { "asc", "desc", NULL };

const struct vfield billers_list_query[] = {
	{ "search_term", NULL, VT_STRING, 0, 0, BILLERS_TERM_MAX },
	{ "status", NULL, VT_STRING, 0, 0, 0, billers_statuses },
	{ "type", NULL, VT_STRING, 0, 0, 0, billers_types },
	{ "consent_scope", NULL, VT_STRING, 0, 0, 0, billers_consent_scopes },
	CURSOR_LIMIT_FIELD(CURSOR_LIMIT_MAX),
	CURSOR_QUERY_FIELD,
	{ "sort_by", NULL, VT_STRING, 0, 0, 0, sort_bys },
	{ "sort_order", NULL, VT_STRING, 0, 0, 0, sort_orders },
	{ NULL }
};

const struct vfield billers_by_email_query[] = {
	{ "email", NULL, VT_STRING, V_REQUIRED, 1, 254 },
	{ NULL }
};

/* ------------------------------------------------------------------ */

/*
 * An entity column (JSON text) as an arena-owned object: for an answer,
 * the text as stored (json_raw); for a caller that reads it (the module
 * functions), parsed. NULL if null or unparsable.
 */
static struct json_object *
entity_as(struct req *r, PGresult *res, int i, int c, int parsed)
{
	const char *why;

	if (PQgetisnull(res, i, c))
		return NULL;
	if (parsed)
		return json_parse(r->arena, PQgetvalue(res, i, c),
		    (size_t)PQgetlength(res, i, c), &why);
	return db_json_raw(r->arena, res, i, c);
}

static struct json_object *
entity(struct req *r, PGresult *res, int i, int c)
{
	return entity_as(r, res, i, c, 0);
}

/* Every row's entity (column c) as an arena-owned array. */
static struct json_object *
entities(struct req *r, PGresult *res, int c, int parsed)
{
	struct json_object *arr = json_arr(r->arena), *o;

	for (int i = 0; i < PQntuples(res); i++)
		if ((o = entity_as(r, res, i, c, parsed)) != NULL)
			json_object_array_add(arr, json_object_get(o));
	return arr;
}

static const char *
nonempty(const char *s)
{
	return s != NULL && s[0] != '\0' ? s : NULL;
}

/*
 * Ranked, then by the sort key, then id: a position is the last row's
 * (rank, key, id). The catalog is every client's, so the cursor is bound
 * to the list, every filter and the sort, not to a tenant.
 */
static const struct cursor_list billers_page = {
	.name = "billers", .shape = CURSOR_COUNTED, .key = "billers",
	.limit = CURSOR_LIMIT_DEFAULT, .npos = 3, .prefix = "blr",
	.cols = { L_RANK, L_KEY, L_ID }, .total_col = L_TOTAL, .json_col = L_ENTITY,
	.hint = "pass next_cursor from the previous page with the same filters",
	.message = "the cursor is malformed or was not issued for this list and filters",
};

int
billers_list(struct req *r, struct json_object *out)
{
	const char *sort_by = json_get_str(r->query, "sort_by");
	const char *sort_order = json_get_str(r->query, "sort_order");
	const char *p[10] = { nonempty(json_get_str(r->query, "search_term")),
	    json_get_str(r->query, "status"), json_get_str(r->query, "type"),
	    json_get_str(r->query, "consent_scope"), sort_by ? sort_by : "name",
	    sort_order ? sort_order : "asc" };
	struct cursor_page pg;
	unsigned long long mark;
	const char *ck, *parts[8];
	PGresult *res;
	int rc;

	if ((rc = cursor_page_open(r, &billers_page, p, 6, &pg)) != 0)
		return rc;
	p[6] = pg.pos[0];
	p[7] = pg.pos[1];
	p[8] = pg.pos[2];
	p[9] = pg.limit1;
	/* the answer's inputs: filters and sort as normalised, the cursor as
	 * sent (it opened), the page size */
	memcpy(parts, p, 6 * sizeof(*p));
	parts[6] = json_get_str(r->query, "cursor");
	parts[7] = pg.limit1;
	ck = billers_cache_key(r->arena, "list", parts, 8);
	if ((rc = billers_cache_get(r, ck, &mark)) != 0)
		return rc;
	if ((res = db_query(r, &stmts[p[0] != NULL ? B_LIST_SEARCH : B_LIST], 10, p)) == NULL)
		return api_db_error(r);
	if ((rc = cursor_page_reply(r, out, &pg, res)) == 200)
		billers_cache_put(r, ck, mark, out);
	return rc;
}

/*
 * The domain of an address and each parent on a label boundary, as a
 * text[] literal ("{e.mail.pge.example,mail.pge.example,pge.example}");
 * NULL when the address is not local@host with a valid host name. The
 * last label alone (a TLD) is left out: no biller's domain is one.
 */
static const char *
email_domains(struct arena *a, const char *email)
{
	const char *at = strrchr(email, '@');
	char *host, *lit, *d;

	if (at == NULL || at == email || strchr(email, '@') != at ||
	    strpbrk(email, " \t\r\n\"<>,;") != NULL)
		return NULL;
	host = arena_strdup(a, at + 1);
	for (char *c = host; *c != '\0'; c++)
		if (*c >= 'A' && *c <= 'Z')
			*c = (char)(*c - 'A' + 'a');
	if (!billers_host_ok(host))
		return NULL;
	lit = arena_strdup(a, "{");
	for (d = host; strchr(d, '.') != NULL; d = strchr(d, '.') + 1)
		lit = arena_printf(a, "%s%s%s", lit, lit[1] != '\0' ? "," : "", d);
	return arena_printf(a, "%s}", lit);
}

int
billers_by_email(struct req *r, struct json_object *out)
{
	const char *email = json_get_str(r->query, "email");
	const char *p[1] = { email_domains(r->arena, email) };
	unsigned long long mark;
	const char *ck;
	PGresult *res;
	int rc;

	if (p[0] == NULL)
		return api_field_error(r, 400, ERR_VALIDATION_ERROR, "email", "invalid_format",
		    "is not an e-mail address (local@domain)");
	/* the answer depends on the domains only */
	ck = billers_cache_key(r->arena, "by-email", p, 1);
	if ((rc = billers_cache_get(r, ck, &mark)) != 0)
		return rc;
	if ((res = db_query(r, &stmts[B_BY_DOMAINS], 1, p)) == NULL)
		return api_db_error(r);
	json_set(out, "billers", json_object_get(entities(r, res, E_ENTITY, 0)));
	billers_cache_put(r, ck, mark, out);
	return 200;
}

int
billers_get(struct req *r, const char *id, struct billers_row *b)
{
	const char *p[1] = { id };
	PGresult *res;

	if (id == NULL || !crypto_id_valid(id, "blr", 0))
		return 0;	/* no such id can exist: no query */
	if ((res = db_query(r, &stmts[B_ROW], 1, p)) == NULL)
		return -1;
	if (PQntuples(res) != 1)
		return 0;
	b->id = arena_strdup(r->arena, PQgetvalue(res, 0, R_ID));
	b->name = arena_strdup(r->arena, PQgetvalue(res, 0, R_NAME));
	b->type = arena_strdup(r->arena, PQgetvalue(res, 0, R_TYPE));
	b->status = arena_strdup(r->arena, PQgetvalue(res, 0, R_STATUS));
	b->country = arena_strdup(r->arena, PQgetvalue(res, 0, R_COUNTRY));
	b->connector = arena_strdup(r->arena, PQgetvalue(res, 0, R_CONNECTOR));
	b->base_url = PQgetisnull(res, 0, R_BASE_URL) ? NULL :
	    arena_strdup(r->arena, PQgetvalue(res, 0, R_BASE_URL));
	return 1;
}

static int
biller_not_found(struct req *r, const char *id)
{
	return api_error(r, 404, ERR_BILLER_NOT_FOUND, "list billers with GET /v1/billers",
	    "no biller %s", id);
}

int
billers_get_or_reply(struct req *r, const char *id, struct billers_row *b)
{
	switch (billers_get(r, id, b)) {
	case 1:
		return 0;
	case 0:
		return biller_not_found(r, id);
	default:
		return api_db_error(r);
	}
}

struct json_object *
billers_json_by_id(struct req *r, const char *id)
{
	const char *p[1] = { id };
	PGresult *res;

	if (id == NULL || !crypto_id_valid(id, "blr", 0))
		return NULL;
	if ((res = db_query(r, &stmts[B_ENTITY], 1, p)) == NULL || PQntuples(res) != 1)
		return NULL;
	return entity_as(r, res, 0, E_ENTITY, 1);
}

int
billers_get_route(struct req *r, struct json_object *out)
{
	const char *id = req_cap(r, "id");
	const char *p[1] = { id };
	unsigned long long mark;
	struct json_object *o;
	const char *ck;
	PGresult *res;
	int rc;

	if (!crypto_id_valid(id, "blr", 0))
		return biller_not_found(r, id);
	ck = billers_cache_key(r->arena, "id", p, 1);
	if ((rc = billers_cache_get(r, ck, &mark)) != 0)
		return rc;
	if ((res = db_query(r, &stmts[B_ENTITY], 1, p)) == NULL)
		return api_db_error(r);
	if (PQntuples(res) != 1 || (o = entity(r, res, 0, E_ENTITY)) == NULL)
		return biller_not_found(r, id);
	(void)out;
	r->out = o;
	billers_cache_put(r, ck, mark, o);
	return 200;
}

enum billers_link
billers_linkable(struct req *r, const char *env, const char *id)
{
	const char *p[2] = { id, env };
	PGresult *res;

	if (id == NULL || !crypto_id_valid(id, "blr", 0))
		return BILLERS_LINK_UNKNOWN;
	if ((res = db_query(r, &stmts[B_LINKABLE], 2, p)) == NULL)
		return BILLERS_LINK_FAILED;
	if (PQntuples(res) != 1)
		return BILLERS_LINK_UNKNOWN;
	if (strcmp(PQgetvalue(res, 0, 0), "t") == 0)
		return BILLERS_LINK_UNSUPPORTED;
	return strcmp(PQgetvalue(res, 0, 1), "t") == 0 ? BILLERS_LINK_OK :
	    BILLERS_LINK_OTHER_ENV;
}

int
billers_linkable_or_reply(struct req *r, const char *env, const char *id, const char *field)
{
	int sandbox = env != NULL && strcmp(env, "sandbox") == 0;

	switch (billers_linkable(r, env, id)) {
	case BILLERS_LINK_OK:
		return 0;
	case BILLERS_LINK_UNKNOWN:
		return api_field_error(r, 400, ERR_VALIDATION_ERROR, field, "unknown_biller",
		    "no such biller");
	case BILLERS_LINK_UNSUPPORTED:
		return api_field_error(r, 400, ERR_VALIDATION_ERROR, field, "biller_unsupported",
		    "the biller is not supported; choose another");
	case BILLERS_LINK_OTHER_ENV:
		return api_field_error(r, 400, ERR_VALIDATION_ERROR, field,
		    "biller_not_in_environment", sandbox ?
		    "a sandbox key links the sandbox billers only; link a real biller with a"
		    " development or production key" :
		    "the sandbox billers link with a sandbox key only; a live key links real"
		    " billers");
	default:
		return api_db_error(r);
	}
}

struct json_object *
billers_picker(struct req *r, const char *env, const char *search_term, int limit,
    long long *total, long long *matches)
{
	const char *p[3] = { env, nonempty(search_term), arena_printf(r->arena, "%d", limit) };
	PGresult *res;

	if ((res = db_query(r, &stmts[B_PICKER], 3, p)) == NULL || PQntuples(res) < 1)
		return NULL;
	*total = atoll(PQgetvalue(res, 0, 0));
	*matches = atoll(PQgetvalue(res, 0, 1));
	return entities(r, res, 2, 1);
}

struct json_object *
billers_picker_item(struct req *r, const char *id)
{
	const char *p[1] = { id };
	PGresult *res;

	if (id == NULL || !crypto_id_valid(id, "blr", 0))
		return NULL;
	if ((res = db_query(r, &stmts[B_PICKER_ITEM], 1, p)) == NULL || PQntuples(res) != 1)
		return NULL;
	return entity_as(r, res, 0, 0, 1);
}

/* requests to link and discovery (lib/rtl) */
int
billers_under_domain(struct req *r, const char *domain, const char **id,
    const char **unsupported)
{
	const char *p[1] = { domain };
	PGresult *res;
	int n = 0;

	*unsupported = NULL;
	if ((res = db_query(r, &stmts[B_UNDER_DOMAIN], 1, p)) == NULL)
		return -1;
	for (int i = 0; i < PQntuples(res); i++)
		if (strcmp(PQgetvalue(res, i, 1), "t") != 0)
			n++;
		else if (n == 0)
			*unsupported = arena_strdup(r->arena, PQgetvalue(res, i, 0));
	if (n == 1)
		*id = arena_strdup(r->arena, PQgetvalue(res, 0, 0));
	return n;
}
