/*
 * Biller discovery (rtl.h): the records (bdisc_…) that onboarding URLs
 * made (rtl_onboard.c), listed to their client and settled by an operator
 * (bdsctl discovery list | approve | reject), which resolves the requests
 * waiting on them (rtl.c). The top of lib/rtl: calls rtl.c, never the
 * reverse.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "billers/billers.h"
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
#include "events/events.h"
#include "rtl/rtl.h"
#include "rtl/rtl_canon.h"
#include "rtl/rtl_int.h"


/* A record (alias x) as every statement returns it. */
#define COLS(x) \
	x ".client_id, " x ".id, " x ".environment, " x ".biller_name, " x ".biller_url, " \
	x ".domain, " x ".status, " x ".biller_id, " DB_ISO(x ".created_at") ", " \
	DB_ISO(x ".updated_at") ", " DB_ISO(x ".decided_at") ", " CURSOR_POS(x ".created_at")
enum disc_col {
	D_CLIENT, D_ID, D_ENV, D_NAME, D_URL, D_DOMAIN, D_STATUS, D_BILLER, D_CREATED, D_UPDATED,
	D_DECIDED, D_POS, D__MAX
};
/* The operator's list adds the count of requests waiting on a record. */
enum { OP_WAITING = D__MAX };

enum {
	S_LIST, S_GET, S_OP_LIST, S_OP_LOCK, S_OP_DECIDE, S__MAX
};
static struct db_stmt stmts[S__MAX] = {
	/* newest first, keyset on (created_at, id); one row even when empty */
	[S_LIST] = { "rtl_disc_list",
	    "WITH f AS (SELECT * FROM biller_discoveries d WHERE d.client_id = $1"
	    "  AND d.environment = $2 AND ($3::text IS NULL OR d.status = $3)),"
	    " p AS (SELECT * FROM f WHERE f.created_at <= $4::timestamptz"
	    "  AND (f.created_at < $4::timestamptz OR f.id < $5)"
	    "  ORDER BY f.created_at DESC, f.id DESC LIMIT $6::int)"
	    " SELECT c.total, " COLS("p")
	    " FROM (SELECT count(*) AS total FROM f) c LEFT JOIN p ON true"
	    " ORDER BY p.created_at DESC, p.id DESC" },
	[S_GET] = { "rtl_disc_get",
	    "SELECT " COLS("d") " FROM biller_discoveries d"
	    " WHERE d.client_id = $1 AND d.environment = $2 AND d.id = $3" },
	/* the operator's view, every client: the pending ones ($1 false) or all */
	[S_OP_LIST] = { "rtl_disc_op_list",
	    "SELECT " COLS("d") ", (SELECT count(*) FROM request_to_links r"
	    "  WHERE r.client_id = d.client_id AND r.discovery_id = d.id AND r.biller_id IS NULL"
	    "  AND r.status IN " RTL_OPEN_SQL ")"
	    " FROM biller_discoveries d WHERE $1::boolean OR d.status = 'PENDING'"
	    " ORDER BY d.created_at, d.id" },
	[S_OP_LOCK] = { "rtl_disc_op_lock",
	    "SELECT " COLS("d") " FROM biller_discoveries d WHERE d.id = $1 FOR UPDATE" },
	/* a decision on record $1 and on every other record of its domain $2
	 * in one of the states $5 (every client's: the decision is the
	 * catalog's): $3 the status, $4 the biller */
	[S_OP_DECIDE] = { "rtl_disc_op_decide",
	    "UPDATE biller_discoveries d SET status = $3, biller_id = $4, decided_at = now(),"
	    " updated_at = now() WHERE d.id = $1 OR (d.domain = $2 AND d.status = ANY ($5::text[]))"
	    " RETURNING " COLS("d") },
};
const struct db_stmt_set rtl_discovery_stmt_set = { "rtl_discovery", stmts, S__MAX };

static const char *const disc_states[] = { "PENDING", "MATCHED", "APPROVED", "REJECTED", NULL };

const struct vfield rtl_discoveries_query[] = {
	{ "status", NULL, VT_STRING, 0, 0, 0, disc_states },
	CURSOR_LIMIT_FIELD(CURSOR_LIMIT_MAX),
	CURSOR_QUERY_FIELD,
	{ NULL }
};

struct disc {
	const char	*v[D__MAX];
};

static void
disc_fill(struct arena *a, PGresult *res, int i, int off, struct disc *d)
{
	for (int c = 0; c < D__MAX; c++)
		d->v[c] = PQgetisnull(res, i, off + c) ? NULL :
		    arena_strdup(a, PQgetvalue(res, i, off + c));
}

/* The record as the API shows it (arena-owned). */
static struct json_object *
disc_entity(struct arena *a, const struct disc *d)
{
	struct json_object *o = json_obj(a);

	json_set_str(o, "id", d->v[D_ID]);
	json_set_str(o, "object", "biller_discovery");
	json_set_str(o, "biller_name", d->v[D_NAME]);
	json_set_str(o, "biller_url", d->v[D_URL]);
	json_set_str(o, "registrable_domain", d->v[D_DOMAIN]);
	json_set_str(o, "status", d->v[D_STATUS]);
	json_set_str(o, "biller_id", d->v[D_BILLER]);
	json_set_str(o, "created_at", d->v[D_CREATED]);
	json_set_str(o, "updated_at", d->v[D_UPDATED]);
	json_set_str(o, "decided_at", d->v[D_DECIDED]);
	return o;
}

/* ---- routes ---- */

/* A row of the list: the record (after the total). */
static struct json_object *
list_item(struct req *r, PGresult *res, int i)
{
	struct disc d;

	disc_fill(r->arena, res, i, 1, &d);
	return disc_entity(r->arena, &d);
}

/* Newest first on (created_at, id), the filtered total in every row and
 * one row even for an empty page; the cursor is bound to the key's client
 * and environment and the status filter. */
static const struct cursor_list discoveries_page = {
	.name = "biller_discoveries", .flags = CURSOR_TENANT | CURSOR_KEYSET,
	.shape = CURSOR_TOTALLED, .key = "items", .limit = CURSOR_LIMIT_DEFAULT,
	.prefix = "bdisc", .cols = { 1 + D_POS, 1 + D_ID }, .total_col = 0,
	.item = list_item,
};

int
rtl_discoveries_list(struct req *r, struct json_object *out)
{
	const char *p[6] = { r->client_id, r->env, json_get_str(r->query, "status") };
	struct cursor_page pg;
	PGresult *res;
	int rc;

	if ((rc = cursor_page_open(r, &discoveries_page, &p[2], 1, &pg)) != 0)
		return rc;
	p[3] = pg.pos[0];
	p[4] = pg.pos[1];
	p[5] = pg.limit1;
	if ((res = db_query(r, &stmts[S_LIST], 6, p)) == NULL)
		return api_db_error(r);
	return cursor_page_reply(r, out, &pg, res);
}

int
rtl_discoveries_get(struct req *r, struct json_object *out)
{
	const char *id = req_cap(r, "id"), *p[3] = { r->client_id, r->env, id };
	struct disc d;
	PGresult *res;

	if (crypto_id_valid(id, "bdisc", 0)) {
		if ((res = db_query(r, &stmts[S_GET], 3, p)) == NULL)
			return api_db_error(r);
		if (PQntuples(res) == 1) {
			disc_fill(r->arena, res, 0, 0, &d);
			json_merge(out, disc_entity(r->arena, &d));
			return 200;
		}
	}
	return api_error(r, 404, ERR_BILLER_DISCOVERY_NOT_FOUND, "list them with GET"
	    " /v1/biller-discoveries", "no biller discovery %s", id);
}

/* ---- the operator ---- */

/*
 * What the operator must look at twice, as the list line's tail: a host
 * label that mixes scripts (UTS #39, rtl_canon_mixed_script: a homograph
 * such as a Cyrillic "а" in "pаypal") is " MIXED_SCRIPT=Latin+Cyrillic";
 * the URL beside it shows the host in A-labels, never the look-alike.
 */
static const char *
disc_flags(struct arena *a, const struct disc *d)
{
	const char *url = d->v[D_URL], *host, *scripts, *label;

	if (url == NULL || strncmp(url, "https://", 8) != 0)
		return "";
	host = arena_strndup(a, url + 8, strcspn(url + 8, "/?#"));
	if ((scripts = rtl_canon_mixed_script(a, host, &label)) == NULL)
		return "";
	return arena_printf(a, " MIXED_SCRIPT=%s", scripts);
}

int
rtl_discovery_list(const struct config *cfg, struct db *db, struct arena *a, int all)
{
	const char *p[1] = { all ? "true" : "false" };
	PGresult *res;
	struct disc d;

	(void)cfg;
	if ((res = db_exec(db, a, &stmts[S_OP_LIST], 1, p)) == NULL) {
		fprintf(stderr, "discovery list: %s\n", db_errmsg(db));
		return -1;
	}
	for (int i = 0; i < PQntuples(res); i++) {
		disc_fill(a, res, i, 0, &d);
		printf("%s %s %s %s %s waiting=%s client=%s/%s name=\"%s\" url=%s%s\n", d.v[D_ID],
		    d.v[D_STATUS], d.v[D_BILLER] != NULL ? d.v[D_BILLER] : "-", d.v[D_DOMAIN],
		    d.v[D_CREATED], PQgetvalue(res, i, OP_WAITING), d.v[D_CLIENT], d.v[D_ENV],
		    d.v[D_NAME], d.v[D_URL], disc_flags(a, &d));
	}
	printf("discovery list: %d record%s\n", PQntuples(res), PQntuples(res) == 1 ? "" : "s");
	return 0;
}

/* The record named by the operator, locked: 0 with *d, else -1 after
 * saying why. */
static int
op_lock(struct req *r, const char *cmd, const char *id, struct disc *d)
{
	PGresult *res;

	if (!crypto_id_valid(id, "bdisc", 0)) {
		fprintf(stderr, "discovery %s: %s is not a discovery id (bdisc_…)\n", cmd, id);
		return -1;
	}
	if ((res = db_query(r, &stmts[S_OP_LOCK], 1, &id)) == NULL) {
		fprintf(stderr, "discovery %s: %s\n", cmd, db_errmsg(r->db));
		return -1;
	}
	if (PQntuples(res) != 1) {
		fprintf(stderr, "discovery %s: no discovery %s\n", cmd, id);
		return -1;
	}
	disc_fill(r->arena, res, 0, 0, d);
	return 0;
}

/* Record id and the ones of its domain in the states from ("{…}") to
 * status (biller): the decided records, or NULL after saying why. */
static PGresult *
op_decide(struct req *r, const char *cmd, const struct disc *d, const char *from,
    const char *status, const char *biller)
{
	const char *p[5] = { d->v[D_ID], d->v[D_DOMAIN], status, biller, from };
	PGresult *res = db_query(r, &stmts[S_OP_DECIDE], 5, p);

	if (res == NULL)
		fprintf(stderr, "discovery %s: %s\n", cmd, db_errmsg(r->db));
	return res;
}

/* s as one RFC 4180 field (arena). */
static const char *
csv_field(struct arena *a, const char *s)
{
	char *out, *o;

	if (s == NULL || strpbrk(s, ",\"\r\n") == NULL)
		return s != NULL ? s : "";
	o = out = arena_alloc(a, 2 * strlen(s) + 3);
	*o++ = '"';
	for (; *s != '\0'; s++) {
		if (*s == '"')
			*o++ = '"';
		*o++ = *s;
	}
	*o++ = '"';
	*o = '\0';
	return out;
}

/*
 * A catalog row for the record (DOMAIN.md's CSV columns: a portal biller
 * at ap->base_url; an approval's ACTIVE, a rejection's UNSUPPORTED with no
 * base_url), checked as an import checks it and upserted under id (NULL:
 * a new one): the biller's id, or NULL after saying why. The row is
 * printed for the operator to keep in data/billers.csv, the catalog's
 * source of truth.
 */
static const char *
op_put_biller(struct req *r, const char *cmd, const char *id, const char *status,
    const struct disc *d, const struct rtl_approve *ap)
{
	char **f = arena_alloc(r->arena, BC__MAX * sizeof(*f));
	const char *field, *msg, *line = "";

	f[BC_ID] = id != NULL ? arena_strdup(r->arena, id) : crypto_id_new(r->arena, "blr");
	f[BC_NAME] = arena_strdup(r->arena, ap->name != NULL ? ap->name : d->v[D_NAME]);
	f[BC_TYPE] = arena_strdup(r->arena, ap->type != NULL ? ap->type : "other");
	f[BC_STATUS] = arena_strdup(r->arena, status);
	f[BC_DOMAINS] = arena_strdup(r->arena, d->v[D_DOMAIN]);
	f[BC_WEBSITE] = arena_printf(r->arena, "https://%s", d->v[D_DOMAIN]);
	f[BC_LOGIN_URL] = arena_strdup(r->arena, d->v[D_URL]);
	f[BC_LOGO_URL] = arena_strdup(r->arena, "");
	f[BC_COUNTRY] = arena_strdup(r->arena, ap->country != NULL ? ap->country : "US");
	f[BC_CONNECTIVITY] = arena_strdup(r->arena, "credentials");
	f[BC_CONSENTS] = arena_strdup(r->arena, "bills|statements|payment_history");
	f[BC_CAPABILITIES] = arena_strdup(r->arena, "bills|statements|payment_history");
	f[BC_CONNECTOR] = arena_strdup(r->arena, "portal");
	f[BC_BASE_URL] = arena_strdup(r->arena, ap->base_url != NULL ? ap->base_url : "");
	/* before the check rewrites the lists as array literals */
	for (int i = 0; i < BC__MAX; i++)
		line = arena_printf(r->arena, "%s%s%s", line, i ? "," : "", csv_field(r->arena,
		    f[i]));
	if (billers_csv_row_check(r->arena, f, BC__MAX, &field, &msg) != 0) {
		fprintf(stderr, "discovery %s: the new biller's %s %s (see --name, --type,"
		    " --country, --base-url; or bind an existing one with --biller)\n", cmd, field,
		    msg);
		return NULL;
	}
	if (billers_row_upsert(r->db, r->arena, f) < 0) {
		fprintf(stderr, "discovery %s: %s\n", cmd, db_errmsg(r->db));
		return NULL;
	}
	printf("discovery %s: %s %s %s; its row for data/billers.csv:\n%s\n", cmd,
	    id != NULL ? "updated" : "added", status, f[BC_ID], line);
	return f[BC_ID];
}

/*
 * The biller a rejected record's domain had from the rejection (an
 * UNSUPPORTED portal biller without a base_url), or NULL: an approval with
 * --base-url makes that one ACTIVE rather than add a second.
 */
static const char *
rejected_biller(struct req *r, const struct disc *d)
{
	struct billers_row b;

	if (strcmp(d->v[D_STATUS], "REJECTED") != 0 || d->v[D_BILLER] == NULL ||
	    billers_get(r, d->v[D_BILLER], &b) != 1 || strcmp(b.status, "UNSUPPORTED") != 0)
		return NULL;
	return d->v[D_BILLER];
}

int
rtl_discovery_approve(const struct config *cfg, struct db *db, struct arena *a, const char *id,
    const struct rtl_approve *ap)
{
	const char *biller = ap->biller_id;
	struct billers_row b;
	struct disc d, k;
	PGresult *res;
	struct req r;
	int n = 0, rc;

	req_init_operator(&r, cfg, db, a);
	if (db_begin(db) != 0 || op_lock(&r, "approve", id, &d) != 0)
		goto fail;
	if (strcmp(d.v[D_STATUS], "PENDING") != 0 && strcmp(d.v[D_STATUS], "REJECTED") != 0) {
		fprintf(stderr, "discovery approve: %s is %s already (biller %s)\n", id,
		    d.v[D_STATUS], d.v[D_BILLER]);
		goto fail;
	}
	if (biller != NULL) {
		if ((rc = billers_get(&r, biller, &b)) <= 0 || strcmp(b.status, "UNSUPPORTED") == 0) {
			fprintf(stderr, "discovery approve: %s\n", rc < 0 ? db_errmsg(db) : rc == 0 ?
			    "no such biller" : "the biller is UNSUPPORTED");
			goto fail;
		}
		/* the domain is the biller's from now on: later requests
		 * naming it match at once */
		if ((rc = billers_add_domain(db, a, biller, d.v[D_DOMAIN])) < 0) {
			fprintf(stderr, "discovery approve: %s\n", db_errmsg(db));
			goto fail;
		}
		if (rc == 1)
			printf("discovery approve: %s added to the domains of %s (add it to its row"
			    " in data/billers.csv)\n", d.v[D_DOMAIN], biller);
	} else if ((biller = op_put_biller(&r, "approve", rejected_biller(&r, &d), "ACTIVE", &d,
	    ap)) == NULL)
		goto fail;
	if ((res = op_decide(&r, "approve", &d, "{PENDING,REJECTED}", "APPROVED", biller)) == NULL)
		goto fail;
	for (int i = 0; i < PQntuples(res); i++, n += rc) {
		disc_fill(a, res, i, 0, &k);
		if ((rc = rtl_resolve_waiting(&r, k.v[D_CLIENT], k.v[D_ID], biller)) < 0) {
			fprintf(stderr, "discovery approve: %s\n", db_errmsg(db));
			goto fail;
		}
	}
	if (db_commit(db) != 0)
		goto fail;
	printf("discovery approve: %d record%s of %s -> %s; %d request%s to link resolved\n",
	    PQntuples(res), PQntuples(res) == 1 ? "" : "s", d.v[D_DOMAIN], biller, n,
	    n == 1 ? "" : "s");
	return 0;
fail:
	db_rollback(db);
	return -1;
}

/*
 * Reject: the domain's biller is not supported. The catalog gets it as an
 * UNSUPPORTED biller (or keeps the one it has), so every later request
 * naming the domain is refused at once, whoever sends it; every PENDING
 * record of the domain is REJECTED with that biller, and each client
 * environment with requests waiting on one hears biller.unsupported.
 */
int
rtl_discovery_reject(const struct config *cfg, struct db *db, struct arena *a, const char *id)
{
	struct rtl_approve named = { 0 };
	const char *biller, *active;
	struct billers_row b;
	struct json_object *ids, *o;
	struct disc d, k;
	PGresult *res;
	struct req r;
	int told = 0;

	req_init_operator(&r, cfg, db, a);
	if (db_begin(db) != 0 || op_lock(&r, "reject", id, &d) != 0)
		goto fail;
	if (strcmp(d.v[D_STATUS], "PENDING") != 0) {
		fprintf(stderr, "discovery reject: %s is %s, not PENDING\n", id, d.v[D_STATUS]);
		goto fail;
	}
	if (billers_under_domain(&r, d.v[D_DOMAIN], &active, &biller) < 0)
		goto dbfail;
	/* named by its domain: a client's own words stay out of the catalog */
	named.name = d.v[D_DOMAIN];
	if (biller == NULL && (biller = op_put_biller(&r, "reject", NULL, "UNSUPPORTED", &d,
	    &named)) == NULL)
		goto fail;
	if (billers_get(&r, biller, &b) != 1)
		goto dbfail;
	if ((res = op_decide(&r, "reject", &d, "{PENDING}", "REJECTED", biller)) == NULL)
		goto fail;
	for (int i = 0; i < PQntuples(res); i++) {
		disc_fill(a, res, i, 0, &k);
		if ((ids = rtl_waiting_ids(&r, k.v[D_CLIENT], k.v[D_ID])) == NULL)
			goto dbfail;
		if (json_object_array_length(ids) == 0)
			continue;
		/* as billers set-status tells it, with the record and requests */
		o = json_obj(a);
		json_set_str(o, "id", biller);
		json_set_str(o, "object", "biller");
		json_set_str(o, "biller_id", biller);
		json_set_str(o, "name", b.name);
		json_set_str(o, "status", "UNSUPPORTED");
		json_set_str(o, "biller_discovery_id", k.v[D_ID]);
		json_set_str(o, "registrable_domain", k.v[D_DOMAIN]);
		json_set(o, "request_to_link_ids", json_object_get(ids));
		if (events_emit(&r, k.v[D_CLIENT], k.v[D_ENV], "biller.unsupported", o, NULL) == NULL)
			goto dbfail;
		told++;
	}
	if (db_commit(db) != 0)
		goto dbfail;
	printf("discovery reject: %d record%s of %s rejected (biller %s UNSUPPORTED);"
	    " biller.unsupported sent to %d client environment(s)\n", PQntuples(res),
	    PQntuples(res) == 1 ? "" : "s", d.v[D_DOMAIN], biller, told);
	return 0;
dbfail:
	fprintf(stderr, "discovery reject: %s\n", db_errmsg(db));
fail:
	db_rollback(db);
	return -1;
}
