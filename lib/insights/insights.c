/*
 * The insights engine (insights.h): a run of one link in bds-jobs reads
 * that link's newest bills, evaluates each account with the rules
 * (insights_rules.h) and reconciles what they found with the link's live
 * insights; the wake of a snoozed insight; the sweeps.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>
#include <libpq-fe.h>

#include "core/arena.h"
#include "core/clock.h"
#include "core/config.h"
#include "core/crypto.h"
#include "core/db.h"
#include "core/jobq.h"
#include "core/json.h"
#include "core/money.h"
#include "core/module.h"
#include "core/req.h"
#include "core/sweep.h"
#include "insights/insights.h"
#include "insights/insights_int.h"
#include "insights/insights_rules.h"

/*
 * A truncated read (an account with more bills than insights_history_bills)
 * judges only the bills whose whole look-back it read: the oldest
 * HISTORY_ONLY bills are history (a year and the baseline's months).
 */
#define HISTORY_ONLY	16
#define PAYMENTS_READ	48	/* a link's newest observed payments read */
#define SWEEP_BATCH	500

/* $1 client, $2 link, $3 bills per account + 1 */
enum {
	E_RUN, E_BILLS, E_PAYMENTS, E_FIRST, E_FIRST_PUT, E_OLDEST, E_LIVE, E_WAKE_LOCK, E_DAILY, E_WAKE_DUE, E__MAX
};
static struct db_stmt stmts[E__MAX] = {
	/* the run's lock: one run of a link at a time (ON CONFLICT DO UPDATE
	 * locks the row even when its WHERE is false); evaluated_at written
	 * once a UTC day, what the daily pass reads, not on every run */
	[E_RUN] = { "insights_run",
	    "INSERT INTO insight_runs (client_id, link_id, environment) VALUES ($1, $2, $3)"
	    " ON CONFLICT (client_id, link_id) DO UPDATE SET evaluated_at = now()"
	    " WHERE insight_runs.evaluated_at < date_trunc('day', now(), 'UTC')" },
	/* each account's newest bills (with a date), oldest first, by the
	 * link's key (the tenant a row check: plan-proof) */
	[E_BILLS] = { "insights_bills",
	    "SELECT b.id, b.account_id, b.biller_id, b.biller_name, b.status, b.currency,"
	    " b.total_minor, coalesce(b.current_charges_minor, b.total_minor),"
	    " b.day::text, b.due_date::text, b.period_end::text, b.line_items::text,"
	    " b.usage::text, b.client_user_id"
	    " FROM link_accounts a CROSS JOIN LATERAL ("
	    "  SELECT x.*, coalesce(x.statement_date, x.due_date) AS day FROM bills x"
	    "  WHERE x.link_id = $2 AND x.account_id = a.id AND x.deleted_at IS NULL"
	    "  AND coalesce(x.statement_date, x.due_date) IS NOT NULL"
	    "  AND " DB_ROW_CHECK("x.client_id = $1")
	    "  ORDER BY coalesce(x.statement_date, x.due_date) DESC, x.id DESC LIMIT $3::int) b"
	    " WHERE a.link_id = $2 AND " DB_ROW_CHECK("a.client_id = $1")
	    " ORDER BY b.account_id, b.day, b.id" },
	[E_PAYMENTS] = { "insights_payments",
	    "SELECT id, account_id, bill_id, currency, amount_minor,"
	    " (paid_at AT TIME ZONE 'UTC')::date::text FROM observed_payments"
	    " WHERE client_id = $1 AND link_id = $2 AND status = 'posted'"
	    " ORDER BY paid_at DESC, id DESC LIMIT $3::int" },
	/* the client user's first bill of a biller, as the engine first saw
	 * it: $1 client, $2 environment, $3 user, $4 biller */
	[E_FIRST] = { "insights_first",
	    "SELECT first_bill_id FROM insight_billers WHERE client_id = $1"
	    " AND environment = $2 AND user_aid = $3 AND biller_id = $4" },
	/* ... or the oldest bill of this link, when it is the first link of
	 * that biller the engine sees for the user ($5 its oldest bill) */
	[E_FIRST_PUT] = { "insights_first_put",
	    "INSERT INTO insight_billers (client_id, environment, user_aid, biller_id,"
	    " first_bill_id) VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING" },
	/* a link's oldest bill with a date, when the read did not reach it */
	[E_OLDEST] = { "insights_oldest",
	    "SELECT id FROM bills WHERE link_id = $2 AND account_id IS NOT NULL"
	    " AND deleted_at IS NULL AND coalesce(statement_date, due_date) IS NOT NULL"
	    " AND " DB_ROW_CHECK("client_id = $1")
	    " ORDER BY coalesce(statement_date, due_date), id LIMIT 1" },
	[E_LIVE] = { "insights_live",
	    "SELECT i.id, i.type, i.subject, i.fingerprint, i.bill_id, i.account_id, i.severity,"
	    " i.status, i.bill_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM bills b"
	    "  WHERE b.id = i.bill_id AND b.deleted_at IS NULL)"
	    " FROM insights i WHERE i.link_id = $2 AND i.status IN ('OPEN', 'SNOOZED')"
	    " AND " DB_ROW_CHECK("i.client_id = $1") " ORDER BY i.created_at, i.id" },
	/* a snoozed insight's wake: its status, whether it is due, and how
	 * many seconds are left when it is not */
	[E_WAKE_LOCK] = { "insights_wake_lock",
	    "SELECT status, environment, snoozed_until <= now(),"
	    " coalesce(ceil(extract(epoch FROM snoozed_until - now()))::int, 0)"
	    " FROM insights WHERE client_id = $1 AND id = $2 FOR UPDATE" },
	/* links not evaluated since the UTC day began, each queued once a day */
	[E_DAILY] = { "insights_daily",
	    "UPDATE insight_runs r SET queued_on = (now() AT TIME ZONE 'UTC')::date"
	    " FROM (SELECT client_id, link_id FROM insight_runs"
	    "  WHERE evaluated_at < date_trunc('day', now(), 'UTC')"
	    "  AND queued_on IS DISTINCT FROM (now() AT TIME ZONE 'UTC')::date"
	    "  ORDER BY evaluated_at LIMIT $1::int FOR UPDATE SKIP LOCKED) d"
	    " WHERE r.client_id = d.client_id AND r.link_id = d.link_id"
	    " RETURNING r.client_id, r.environment, r.link_id" },
	[E_WAKE_DUE] = { "insights_wake_due",
	    "SELECT client_id, environment, id FROM insights"
	    " WHERE status = 'SNOOZED' AND snoozed_until <= now()"
	    " ORDER BY snoozed_until LIMIT $1::int FOR UPDATE SKIP LOCKED" },
};
const struct db_stmt_set insights_engine_stmt_set = { "insights_engine", stmts, E__MAX };

const struct insights_settings *
insights_settings(const struct config *c)
{
	return config_module(c, &insights_module);
}

void
insights_thresholds(const struct config *c, struct ins_thresholds *t)
{
	const struct insights_settings *s = insights_settings(c);

	ins_thresholds_default(t);
	t->duplicate_days = s->insights_duplicate_days;
	t->baseline_bills = s->insights_baseline_bills;
	t->baseline_min = s->insights_baseline_min;
	t->anomaly_ratio = s->insights_anomaly_pct / 100.0;
	t->anomaly_mads = s->insights_anomaly_mads;
	t->overdue_days = s->insights_overdue_days;
	t->spike_ratio = s->insights_spike_pct / 100.0;
	t->spike_units = s->insights_spike_units;
	t->usage_bills = s->insights_usage_bills;
	t->usage_sds = s->insights_usage_sds;
	t->usage_floor = s->insights_usage_floor_pct / 100.0;
}

/* ---- reading a link ---- */

enum { B_ID, B_ACCOUNT, B_BILLER, B_BILLER_NAME, B_STATUS, B_CURRENCY, B_TOTAL, B_CHARGES,
	B_DAY, B_DUE, B_PERIOD_END, B_ITEMS, B_USAGE, B_USER };

static const char *
value(PGresult *res, int row, int col)
{
	return PQgetisnull(res, row, col) ? NULL : PQgetvalue(res, row, col);
}

/* year * 12 + month - 1 of a date's text, less back months */
static int
month_of(const char *date, int back)
{
	int y, m;

	if (date == NULL || sscanf(date, "%4d-%2d", &y, &m) != 2)
		return 0;
	return y * 12 + m - 1 - back;
}

/*
 * The elements of a stored JSON array (line_items, usage): the array, with
 * *n set, or NULL (and 0) when text is not one. Arena-owned. The text is
 * the database's own print of a checked jsonb: json-c's tokener alone, not
 * json_parse's checks of outside input (they were a third of a run's CPU).
 */
static struct json_object *
array_of(struct arena *a, const char *text, size_t *n)
{
	struct json_object *arr = json_own(a, json_tokener_parse(text));

	*n = arr != NULL && json_object_is_type(arr, json_type_array) ?
	    json_object_array_length(arr) : 0;
	return *n > 0 ? arr : NULL;
}

static void
read_items(struct arena *a, const char *text, struct ins_bill *b)
{
	size_t i, n;
	struct json_object *arr = array_of(a, text, &n), *it;
	struct ins_item *v = arena_alloc(a, (n + 1) * sizeof(*v));

	b->items = v;
	b->nitems = 0;
	for (i = 0; i < n; i++) {
		it = json_object_array_get_idx(arr, i);
		if ((v[b->nitems].description = json_get_str(it, "description")) == NULL)
			continue;
		v[b->nitems].norm = ins_normalise(a, v[b->nitems].description);
		v[b->nitems].category = json_get_str(it, "category");
		v[b->nitems].minor = json_get_int(json_object_object_get(it, "amount"), "minor", 0);
		b->nitems++;
	}
}

static void
read_usage(struct arena *a, const char *text, struct ins_bill *b)
{
	size_t i, n;
	struct json_object *arr = array_of(a, text, &n), *u, *q;
	struct ins_usage *v = arena_alloc(a, (n + 1) * sizeof(*v));

	b->usage = v;
	b->nusage = 0;
	for (i = 0; i < n; i++) {
		u = json_object_array_get_idx(arr, i);
		q = json_object_object_get(u, "quantity");
		if ((v[b->nusage].type = json_get_str(u, "type")) == NULL || q == NULL ||
		    !(json_object_is_type(q, json_type_double) ||
		    json_object_is_type(q, json_type_int)))
			continue;
		v[b->nusage].unit = json_get_str(u, "unit");
		v[b->nusage].quantity = json_object_get_double(q);
		b->nusage++;
	}
}

/* Row i of E_BILLS as the rules see it: 0, or -1 when its dates are not dates. */
static int
read_bill(struct arena *a, PGresult *res, int i, struct ins_bill *b)
{
	const char *due = value(res, i, B_DUE), *end = value(res, i, B_PERIOD_END);

	memset(b, 0, sizeof(*b));
	b->id = PQgetvalue(res, i, B_ID);
	b->account_id = value(res, i, B_ACCOUNT);
	b->biller_id = value(res, i, B_BILLER);
	b->biller_name = PQgetvalue(res, i, B_BILLER_NAME);
	b->status = PQgetvalue(res, i, B_STATUS);
	b->currency = PQgetvalue(res, i, B_CURRENCY);
	b->exponent = money_exponent_shown(b->currency);
	b->total = strtoll(PQgetvalue(res, i, B_TOTAL), NULL, 10);
	b->charges = strtoll(PQgetvalue(res, i, B_CHARGES), NULL, 10);
	if (ins_day(PQgetvalue(res, i, B_DAY), &b->day) != 0)
		return -1;
	b->due = INS_NO_DAY;
	if (due != NULL && ins_day(due, &b->due) != 0)
		return -1;
	b->month = end != NULL ? month_of(end, 0) : month_of(PQgetvalue(res, i, B_DAY), 1);
	read_items(a, PQgetvalue(res, i, B_ITEMS), b);
	read_usage(a, PQgetvalue(res, i, B_USAGE), b);
	return 0;
}

/* What one run holds. */
struct run {
	struct req		*r;
	struct insights_owner	 owner;
	struct ins_thresholds	 t;
	int			 today;
	struct ins_payment	*pays;
	size_t			 npays;
	const char		*first;		/* the user's first bill of the biller */
	struct insights_live	*live;
	size_t			 nlive;
	const char	       **targets;	/* the bill ids the rules judged */
	size_t			 ntargets;
};

static int
read_payments(struct run *u)
{
	char lim[16];
	const char *p[3] = { u->owner.client_id, u->owner.link_id, lim };
	PGresult *res;
	int i, n;

	snprintf(lim, sizeof(lim), "%d", PAYMENTS_READ);
	if ((res = db_exec(u->r->db, u->r->arena, &stmts[E_PAYMENTS], 3, p)) == NULL)
		return -1;
	n = PQntuples(res);
	u->pays = arena_alloc(u->r->arena, ((size_t)n + 1) * sizeof(*u->pays));
	/* newest first in the answer: oldest first for the rules */
	for (i = n - 1; i >= 0; i--) {
		struct ins_payment *y = &u->pays[u->npays];

		y->id = PQgetvalue(res, i, 0);
		y->account_id = value(res, i, 1);
		y->bill_id = value(res, i, 2);
		y->currency = PQgetvalue(res, i, 3);
		y->exponent = money_exponent_shown(y->currency);
		y->minor = strtoll(PQgetvalue(res, i, 4), NULL, 10);
		if (ins_day(PQgetvalue(res, i, 5), &y->day) == 0)
			u->npays++;
	}
	return 0;
}

static int
read_live(struct run *u)
{
	const char *p[2] = { u->owner.client_id, u->owner.link_id };
	PGresult *res;
	int i, n;

	if ((res = db_exec(u->r->db, u->r->arena, &stmts[E_LIVE], 2, p)) == NULL)
		return -1;
	n = PQntuples(res);
	u->live = arena_alloc(u->r->arena, ((size_t)n + 1) * sizeof(*u->live));
	for (i = 0; i < n; i++) {
		struct insights_live *l = &u->live[i];

		l->id = PQgetvalue(res, i, 0);
		l->type = PQgetvalue(res, i, 1);
		l->subject = PQgetvalue(res, i, 2);
		l->fingerprint = PQgetvalue(res, i, 3);
		l->bill_id = value(res, i, 4);
		l->account_id = PQgetvalue(res, i, 5);
		l->severity = PQgetvalue(res, i, 6);
		l->status = PQgetvalue(res, i, 7);
		l->bill_gone = strcmp(PQgetvalue(res, i, 8), "t") == 0;
		l->seen = 0;
	}
	u->nlive = (size_t)n;
	return 0;
}

/* ---- reconciling ---- */

static const char *
fingerprint(struct arena *a, const struct ins_finding *f)
{
	const char *text = arena_printf(a, "%s\x1f%s\x1f%s\x1f%s\x1f%s", f->severity,
	    f->bill_id != NULL ? f->bill_id : "", f->reasoning,
	    json_object_to_json_string_ext(f->evidence, JSON_C_TO_STRING_PLAIN),
	    json_object_to_json_string_ext(f->actions, JSON_C_TO_STRING_PLAIN));
	unsigned char h[32];

	crypto_sha256(text, strlen(text), h);
	return crypto_hex_encode(a, h, sizeof(h));
}

static int
reconcile_finding(struct run *u, const struct ins_finding *f)
{
	const char *fp = fingerprint(u->r->arena, f);
	size_t i;

	for (i = 0; i < u->nlive; i++) {
		struct insights_live *l = &u->live[i];

		if (strcmp(l->type, f->type) != 0 || strcmp(l->subject, f->subject) != 0)
			continue;
		l->seen = 1;
		if (strcmp(l->fingerprint, fp) == 0)
			return 0;
		return insights_refresh(u->r, &u->owner, l, f, fp);
	}
	return insights_create(u->r, &u->owner, f, fp) < 0 ? -1 : 0;
}

static int
is_target(const struct run *u, const char *id)
{
	size_t i;

	for (i = 0; id != NULL && i < u->ntargets; i++)
		if (strcmp(u->targets[i], id) == 0)
			return 1;
	return 0;
}

static int
is_payment(const struct run *u, const char *id, size_t len)
{
	size_t i;

	for (i = 0; i < u->npays; i++)
		if (strlen(u->pays[i].id) == len && strncmp(u->pays[i].id, id, len) == 0)
			return 1;
	return 0;
}

/* The rules' types: an insight of another type (a later engine's) is left
 * as it is. */
static int
is_rule_type(const char *type)
{
	static const char *const types[] = { INS_DUPLICATE_CHARGE, INS_BILL_ANOMALY,
	    INS_NEW_BILLER, INS_OVERDUE_RISK, INS_NEW_FEE, INS_LINE_ITEM_SPIKE,
	    INS_USAGE_ANOMALY };
	size_t i;

	for (i = 0; i < sizeof(types) / sizeof(types[0]); i++)
		if (strcmp(types[i], type) == 0)
			return 1;
	return 0;
}

/*
 * Whether this run judged what live insight l is about, so that its
 * finding missing means the condition is gone: its bill was judged or is
 * deleted; a pair of payments, both read.
 */
static int
judged(const struct run *u, const struct insights_live *l)
{
	const char *p, *q;

	if (!is_rule_type(l->type))
		return 0;
	if (l->bill_gone || is_target(u, l->bill_id))
		return 1;
	if (strncmp(l->subject, "payments:", 9) == 0) {
		p = l->subject + 9;
		if ((q = strchr(p, ':')) == NULL)
			return 0;
		return is_payment(u, p, (size_t)(q - p)) && is_payment(u, q + 1, strlen(q + 1));
	}
	return 0;
}

/* The bills of one account (rows lo..hi-1 of res): evaluated, reconciled. */
static int
run_account(struct run *u, PGresult *res, int lo, int hi, int truncated)
{
	struct arena *a = u->r->arena;
	struct ins_findings found = { 0 };
	struct ins_history h = { 0 };
	struct ins_bill *bills;
	struct ins_payment *pays;
	size_t n = 0, np = 0, i;
	const char *acct;
	int rc = 0;

	if (truncated)
		lo++;	/* the extra row only said there are more */
	bills = arena_alloc(a, ((size_t)(hi - lo) + 1) * sizeof(*bills));
	for (int k = lo; k < hi; k++)
		if (read_bill(a, res, k, &bills[n]) == 0)
			n++;
	if (n == 0)
		return 0;
	acct = bills[0].account_id;
	pays = arena_alloc(a, (u->npays + 1) * sizeof(*pays));
	for (i = 0; i < u->npays; i++)
		if (u->pays[i].account_id != NULL && acct != NULL &&
		    strcmp(u->pays[i].account_id, acct) == 0)
			pays[np++] = u->pays[i];
	h.bills = bills;
	h.nbills = n;
	h.first_target = truncated && n > HISTORY_ONLY ? HISTORY_ONLY : 0;
	h.payments = pays;
	h.npayments = np;
	h.first_bill_of_biller = u->first;
	h.today = u->today;
	h.t = &u->t;
	for (i = h.first_target; i < n; i++)
		u->targets[u->ntargets++] = bills[i].id;
	if (ins_evaluate(a, &h, &found) != 0)
		return -1;
	for (i = 0; i < found.n && rc == 0; i++)
		rc = reconcile_finding(u, &found.v[i]);
	ins_findings_free(&found);	/* the array is the arena's */
	return rc;
}

static int
today_of(void)
{
	char iso[TIME_ISO_SIZE];
	int day = 0;

	time_iso(iso, time_now_ms());
	iso[10] = '\0';
	ins_day(iso, &day);
	return day;
}

/*
 * The client user's first bill of the link's biller (u->first): as the
 * engine first saw it, else this link's oldest bill, which becomes it (a
 * link seen first for a biller brings the user's first bill of it). res:
 * the link's bills read (E_BILLS, per account oldest first; more than
 * history rows of an account: the read did not reach its oldest).
 */
static int
first_bill(struct run *u, PGresult *res, int history)
{
	struct req *r = u->r;
	const char *p[5] = { u->owner.client_id, u->owner.environment, u->owner.user_aid,
	    value(res, 0, B_BILLER), NULL };
	const char *q[2] = { u->owner.client_id, u->owner.link_id };
	PGresult *got;
	int i, n = PQntuples(res), start, oldest = -1, truncated = 0;

	if (p[3] == NULL)
		return 0;	/* an import's bill of no catalog biller */
	if ((got = db_exec(r->db, r->arena, &stmts[E_FIRST], 4, p)) == NULL)
		return -1;
	if (PQntuples(got) == 1) {
		u->first = PQgetvalue(got, 0, 0);
		return 0;
	}
	/* the oldest of the accounts' oldest rows, unless one was cut */
	for (start = 0, i = 1; i <= n; i++) {
		if (i < n && strcmp(PQgetvalue(res, i, B_ACCOUNT),
		    PQgetvalue(res, start, B_ACCOUNT)) == 0)
			continue;
		truncated |= i - start > history;
		if (oldest < 0 || strcmp(PQgetvalue(res, start, B_DAY),
		    PQgetvalue(res, oldest, B_DAY)) < 0)
			oldest = start;
		start = i;
	}
	p[4] = PQgetvalue(res, oldest, B_ID);
	if (truncated) {
		if ((got = db_exec(r->db, r->arena, &stmts[E_OLDEST], 2, q)) == NULL)
			return -1;
		p[4] = PQntuples(got) == 1 ? PQgetvalue(got, 0, 0) : NULL;
	}
	if (p[4] == NULL || db_exec(r->db, r->arena, &stmts[E_FIRST_PUT], 5, p) == NULL ||
	    (got = db_exec(r->db, r->arena, &stmts[E_FIRST], 4, p)) == NULL)
		return p[4] == NULL ? 0 : -1;
	u->first = PQntuples(got) == 1 ? PQgetvalue(got, 0, 0) : NULL;
	return 0;
}

/* One run of a link (the caller's transaction). 0, or -1 on failure. */
static int
run_link(struct req *r, const char *client_id, const char *environment, const char *link_id)
{
	const struct insights_settings *s = insights_settings(r->cfg);
	struct run u = { 0 };
	char lim[16];
	const char *p[4] = { client_id, link_id, environment, NULL };
	PGresult *res;
	int i, n, start;

	u.r = r;
	u.owner.client_id = client_id;
	u.owner.environment = environment;
	u.owner.link_id = link_id;
	u.today = today_of();
	insights_thresholds(r->cfg, &u.t);
	if (db_exec(r->db, r->arena, &stmts[E_RUN], 3, p) == NULL)
		return -1;
	snprintf(lim, sizeof(lim), "%d", s->insights_history_bills + 1);
	p[2] = lim;
	if ((res = db_exec(r->db, r->arena, &stmts[E_BILLS], 3, p)) == NULL ||
	    read_payments(&u) != 0 || read_live(&u) != 0)
		return -1;
	n = PQntuples(res);
	u.targets = arena_alloc(r->arena, ((size_t)n + 1) * sizeof(*u.targets));
	if (n > 0) {
		u.owner.user_aid = PQgetvalue(res, 0, B_USER);
		if (first_bill(&u, res, s->insights_history_bills) != 0)
			return -1;
	}
	for (start = 0, i = 1; i <= n; i++) {
		if (i < n && strcmp(PQgetvalue(res, i, B_ACCOUNT),
		    PQgetvalue(res, start, B_ACCOUNT)) == 0)
			continue;
		if (run_account(&u, res, start, i,
		    i - start > s->insights_history_bills) != 0)
			return -1;
		start = i;
	}
	for (size_t k = 0; k < u.nlive; k++) {
		const struct insights_live *l = &u.live[k];

		if (!l->seen && judged(&u, l) &&
		    insights_move(r, client_id, environment, l->id, l->status, "RESOLVED", NULL,
		    NULL, "engine", NULL) != 0)
			return -1;
	}
	return 0;
}

enum jobs_outcome
insights_run_apply(struct req *r, struct jobs_job *job)
{
	if (job->client_id == NULL || job->environment == NULL || job->subject_id == NULL) {
		job->error = "insights job without a link";
		return JOBS_FAILED;
	}
	if (run_link(r, job->client_id, job->environment, job->subject_id) != 0) {
		job->error = "database failure";
		return JOBS_RETRY;
	}
	return JOBS_DONE;
}

/* ---- snoozed insights ---- */

enum jobs_outcome
insights_wake_apply(struct req *r, struct jobs_job *job)
{
	const char *p[2] = { job->client_id, job->subject_id };
	PGresult *res;

	if (job->client_id == NULL || job->subject_id == NULL) {
		job->error = "wake job without an insight";
		return JOBS_FAILED;
	}
	if ((res = db_exec(r->db, r->arena, &stmts[E_WAKE_LOCK], 2, p)) == NULL)
		goto fail;
	if (PQntuples(res) != 1 || strcmp(PQgetvalue(res, 0, 0), "SNOOZED") != 0)
		return JOBS_DONE;	/* gone, or no longer snoozed */
	if (strcmp(PQgetvalue(res, 0, 2), "t") != 0) {
		/* snoozed again, for longer: wake it then */
		if (jobq_add(r, INSIGHTS_JOB_WAKE, job->client_id, PQgetvalue(res, 0, 1),
		    job->subject_id, NULL, atoi(PQgetvalue(res, 0, 3))) != 0)
			goto fail;
		return JOBS_DONE;
	}
	if (insights_move(r, job->client_id, PQgetvalue(res, 0, 1), job->subject_id, "SNOOZED",
	    "OPEN", NULL, NULL, NULL, NULL) != 0)
		goto fail;
	return JOBS_DONE;
fail:
	job->error = "database failure";
	return JOBS_RETRY;
}

/* One batch of snoozed insights whose time came (core/sweep.h): how many, -1. */
static long long
wake_batch(struct req *r, int limit)
{
	const char *p[1] = { arena_printf(r->arena, "%d", limit) };
	PGresult *res;

	if ((res = db_query(r, &stmts[E_WAKE_DUE], 1, p)) == NULL)
		return -1;
	for (int i = 0; i < PQntuples(res); i++)
		if (insights_move(r, PQgetvalue(res, i, 0), PQgetvalue(res, i, 1),
		    PQgetvalue(res, i, 2), "SNOOZED", "OPEN", NULL, NULL, NULL, NULL) != 0)
			return -1;
	return PQntuples(res);
}

long long
insights_wake_due(const struct config *cfg, struct db *d, struct arena *a)
{
	return sweep_batches(cfg, d, a, SWEEP_BATCH, 0, wake_batch);
}

/* One batch of links due a daily run (core/sweep.h): the runs queued, or -1. */
static long long
daily_batch(struct req *r, int limit)
{
	const char *p[1] = { arena_printf(r->arena, "%d", limit) };
	PGresult *res;

	if ((res = db_query(r, &stmts[E_DAILY], 1, p)) == NULL)
		return -1;
	for (int i = 0; i < PQntuples(res); i++)
		if (jobq_add(r, INSIGHTS_JOB_LINK, PQgetvalue(res, i, 0),
		    PQgetvalue(res, i, 1), PQgetvalue(res, i, 2), NULL, 0) != 0)
			return -1;
	return PQntuples(res);
}

long long
insights_daily(const struct config *cfg, struct db *d, struct arena *a)
{
	return sweep_batches(cfg, d, a, SWEEP_BATCH, 0, daily_batch);
}
