/*
 * The insight rules' accuracy over synthetic bill histories: reads the
 * users that bench/insights/gen.py wrote (one JSON object a line), replays
 * each user's time (each statement date, each payment day, each unpaid
 * bill's due date - 3 and + 1 days, none after the user's today), and at
 * each of those days calls ins_evaluate once per biller of the user with
 * the bills and payments of that biller seen so far. A finding counts once
 * per (type, subject) over the whole replay; it is then matched to the
 * generator's labels: true positive (an expected label), allowed (a label
 * the generator marks as a fair consequence: neither), false positive (no
 * label). Expected labels never found are false negatives. ins_evaluate's
 * CPU time is taken per call.
 *
 *   accuracy --in FILE.jsonl --out FILE.md
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <json-c/json.h>

#include "core/arena.h"
#include "insights/insights_rules.h"

#define NTYPES	7
static const char *types[NTYPES] = {
	INS_DUPLICATE_CHARGE, INS_BILL_ANOMALY, INS_NEW_BILLER,
	INS_OVERDUE_RISK, INS_NEW_FEE, INS_LINE_ITEM_SPIKE, INS_USAGE_ANOMALY,
};

enum hint { H_NONE, H_DESC, H_USAGE, H_PAYMENTS, H_BILLS, H_BILLER };

struct label {
	const char	*type, *bill_id, *planted;
	enum hint	 hint;
	const char	*a, *b;		/* norm, usage type, ids, biller id */
	int		 expected, found;
};

struct found {
	const char	*type, *subject, *bill_id, *reasoning;
};

struct group {
	const char	*biller_id;
	struct ins_bill	*bills;		/* oldest first */
	int		*paid;		/* paid day, INT_MAX when never */
	size_t		 nbills;
	struct ins_payment *pays;
	size_t		 npays;
	int		*days;		/* its replay days, sorted, unique */
	size_t		 ndays;
};

struct tstat {
	long	 expected, tp, fp, allowed, fn, clean_fp;
	long	 fp_young;	/* FP on a bill with no year of history */
};

static struct tstat tstats[NTYPES + 1];	/* the last: a type not in the list */
static long	 nusers, nclean, clean_flagged, nbills_all, npays_all, nfindings;
static double	*cpu;			/* seconds per call */
static size_t	 ncpu, cpucap;

/* recall per planted kind and type */
struct pk {
	char	*planted, *type;
	long	 n, found;
};
static struct pk *pks;
static size_t	 npks;

#define NEX	4
static char	*fp_ex[NTYPES + 1][NEX], *fn_ex[NTYPES + 1][NEX];
static int	 nfp_ex[NTYPES + 1], nfn_ex[NTYPES + 1];

static void *
xrealloc(void *p, size_t n)
{
	if ((p = realloc(p, n)) == NULL) {
		perror("realloc");
		exit(2);
	}
	return p;
}

static int
type_index(const char *t)
{
	int	 i;

	for (i = 0; i < NTYPES; i++)
		if (strcmp(types[i], t) == 0)
			return i;
	return NTYPES;
}

static const char *
jstr(struct json_object *o, const char *key)
{
	struct json_object *v;

	if (!json_object_object_get_ex(o, key, &v) || json_object_is_type(v, json_type_null))
		return NULL;
	return json_object_get_string(v);
}

static struct json_object *
jget(struct json_object *o, const char *key)
{
	struct json_object *v;

	return json_object_object_get_ex(o, key, &v) ? v : NULL;
}

/* "YYYY-MM-DD" as days since 1970-01-01 (the bench's own reading, so
 * that a date never depends on the code it measures) */
static int
day_of(const char *s)
{
	int	 y, m, d, era, yoe, doy, doe;

	if (s == NULL || sscanf(s, "%4d-%2d-%2d", &y, &m, &d) != 3 ||
	    m < 1 || m > 12 || d < 1 || d > 31)
		return INS_NO_DAY;
	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = y - era * 400;
	doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

/* year * 12 + month - 1 of "YYYY-MM-DD" */
static int
month_of(const char *s)
{
	int	 y, m;

	if (s == NULL || sscanf(s, "%d-%d", &y, &m) != 2)
		return 0;
	return y * 12 + m - 1;
}

static int
cmp_int(const void *a, const void *b)
{
	int	 x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

static int
cmp_double(const void *a, const void *b)
{
	double	 x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

struct billx {
	struct ins_bill	 b;
	int		 paid;
};

static int
cmp_bill(const void *a, const void *b)
{
	const struct billx *x = a, *y = b;

	if (x->b.day != y->b.day)
		return x->b.day < y->b.day ? -1 : 1;
	return strcmp(x->b.id, y->b.id);
}

static int
cmp_pay(const void *a, const void *b)
{
	const struct ins_payment *x = a, *y = b;

	if (x->day != y->day)
		return x->day < y->day ? -1 : 1;
	return strcmp(x->id, y->id);
}

static void
example(char **ex, int *n, const char *fmt, const char *user, const char *s1,
    const char *s2)
{
	char	 buf[1024];

	snprintf(buf, sizeof(buf), fmt, user, s1 ? s1 : "-", s2 ? s2 : "-");
	/* ACCURACY_ALL=1: every one, on stderr (for a look at what is missed) */
	if (getenv("ACCURACY_ALL") != NULL)
		fprintf(stderr, "%s\n", buf);
	if (*n >= NEX)
		return;
	if ((ex[*n] = strdup(buf)) != NULL)
		(*n)++;
}

static void
count_planted(const char *planted, const char *type, int found)
{
	size_t	 i;

	for (i = 0; i < npks; i++)
		if (strcmp(pks[i].planted, planted) == 0 && strcmp(pks[i].type, type) == 0)
			break;
	if (i == npks) {
		pks = xrealloc(pks, (npks + 1) * sizeof(*pks));
		pks[i].planted = strdup(planted);
		pks[i].type = strdup(type);
		pks[i].n = pks[i].found = 0;
		npks++;
	}
	pks[i].n++;
	pks[i].found += found != 0;
}

/* whether bill id has no previous bill of its account 12 months before it */
static int
young(const struct billx *bx, size_t nb, const char *id)
{
	size_t	 i, j;

	if (id == NULL)
		return 0;
	for (j = 0; j < nb; j++)
		if (strcmp(bx[j].b.id, id) == 0)
			break;
	if (j == nb)
		return 0;
	for (i = 0; i < j; i++)
		if (strcmp(bx[i].b.account_id, bx[j].b.account_id) == 0 &&
		    bx[i].b.month <= bx[j].b.month - 12)
			return 0;
	return 1;
}

/* the label a finding is about, or NULL */
static struct label *
match(struct label *lv, size_t nl, const struct found *f)
{
	const char *s = f->subject, *c1, *c2;
	char	 kind[16], x[256], y[256];
	size_t	 i, k;
	struct label *best = NULL;

	if ((c1 = strchr(s, ':')) == NULL || (size_t)(c1 - s) >= sizeof(kind))
		return NULL;
	k = c1 - s;
	memcpy(kind, s, k);
	kind[k] = '\0';
	c1++;
	if ((c2 = strchr(c1, ':')) != NULL) {
		snprintf(x, sizeof(x), "%.*s", (int)(c2 - c1), c1);
		snprintf(y, sizeof(y), "%s", c2 + 1);
	} else {
		snprintf(x, sizeof(x), "%s", c1);
		y[0] = '\0';
	}
	for (i = 0; i < nl; i++) {
		struct label *l = &lv[i];
		int	 ok = 0;

		if (strcmp(l->type, f->type) != 0)
			continue;
		if (strcmp(kind, "bills") == 0)
			ok = l->hint == H_BILLS && strcmp(l->b, y) == 0;
		else if (strcmp(kind, "payments") == 0)
			ok = l->hint == H_PAYMENTS &&
			    ((strcmp(l->a, x) == 0 && strcmp(l->b, y) == 0) ||
			    (strcmp(l->a, y) == 0 && strcmp(l->b, x) == 0));
		else if (strcmp(kind, "line") == 0 || strcmp(kind, "fee") == 0 ||
		    strcmp(kind, "item") == 0)
			ok = l->hint == H_DESC && l->bill_id != NULL &&
			    strcmp(l->bill_id, x) == 0 && strcmp(l->a, y) == 0;
		else if (strcmp(kind, "usage") == 0)
			ok = l->hint == H_USAGE && l->bill_id != NULL &&
			    strcmp(l->bill_id, x) == 0 && strcmp(l->a, y) == 0;
		else if (strcmp(kind, "bill") == 0)
			ok = l->hint == H_NONE && l->bill_id != NULL &&
			    strcmp(l->bill_id, x) == 0;
		else if (strcmp(kind, "biller") == 0)
			ok = l->hint == H_BILLER && strcmp(l->a, x) == 0;
		if (!ok)
			continue;
		/* an expected label not yet found first */
		if (best == NULL || (l->expected && !l->found && !(best->expected && !best->found)))
			best = l;
	}
	return best;
}

static void
add_day(int **v, size_t *n, size_t *cap, int d, int today)
{
	if (d == INS_NO_DAY || d > today)
		return;
	if (*n == *cap) {
		*cap = *cap ? *cap * 2 : 64;
		*v = xrealloc(*v, *cap * sizeof(**v));
	}
	(*v)[(*n)++] = d;
}

static void
run_user(struct json_object *u, const struct ins_thresholds *t)
{
	struct arena ua, ca;
	struct json_object *jb, *jp, *jt;
	struct billx *bx;
	struct ins_payment *pv;
	struct group *gv = NULL;
	struct label *lv;
	struct found *fv = NULL;
	size_t	 nb, np, nl, ng = 0, nf = 0, fcap = 0, i, j, k;
	int	 today, clean, flagged = 0;
	const char *user = jstr(u, "user");

	arena_init(&ua);
	arena_init(&ca);
	today = day_of(jstr(u, "today"));
	clean = json_object_get_boolean(jget(u, "clean"));
	nusers++;
	nclean += clean;

	jb = jget(u, "bills");
	nb = json_object_array_length(jb);
	bx = arena_alloc(&ua, (nb + 1) * sizeof(*bx));
	for (i = 0; i < nb; i++) {
		struct json_object *b = json_object_array_get_idx(jb, i), *its, *us;
		struct ins_bill *ib = &bx[i].b;
		struct ins_item *iv;
		struct ins_usage *uv;
		size_t	 n;

		ib->id = jstr(b, "id");
		ib->account_id = jstr(b, "account_id");
		ib->biller_id = jstr(b, "biller_id");
		ib->biller_name = jstr(b, "biller_name");
		ib->currency = jstr(b, "currency");
		ib->exponent = 2;
		ib->charges = json_object_get_int64(jget(b, "charges_minor"));
		ib->total = json_object_get_int64(jget(b, "total_minor"));
		ib->day = day_of(jstr(b, "statement_date"));
		ib->due = day_of(jstr(b, "due_date"));
		ib->month = month_of(jstr(b, "period_end"));
		bx[i].paid = jstr(b, "paid_at") ? day_of(jstr(b, "paid_at")) : INT_MAX;
		its = jget(b, "items");
		n = json_object_array_length(its);
		iv = arena_alloc(&ua, (n + 1) * sizeof(*iv));
		for (j = 0; j < n; j++) {
			struct json_object *it = json_object_array_get_idx(its, j);

			iv[j].description = jstr(it, "description");
			iv[j].norm = ins_normalise(&ua, iv[j].description);
			iv[j].category = jstr(it, "category");
			iv[j].minor = json_object_get_int64(jget(it, "minor"));
		}
		ib->items = iv;
		ib->nitems = n;
		us = jget(b, "usage");
		n = us ? json_object_array_length(us) : 0;
		uv = arena_alloc(&ua, (n + 1) * sizeof(*uv));
		for (j = 0; j < n; j++) {
			struct json_object *x = json_object_array_get_idx(us, j);

			uv[j].type = jstr(x, "type");
			uv[j].unit = jstr(x, "unit");
			uv[j].quantity = json_object_get_double(jget(x, "quantity"));
		}
		ib->usage = uv;
		ib->nusage = n;
	}
	qsort(bx, nb, sizeof(*bx), cmp_bill);
	nbills_all += nb;

	jp = jget(u, "payments");
	np = json_object_array_length(jp);
	pv = arena_alloc(&ua, (np + 1) * sizeof(*pv));
	for (i = 0; i < np; i++) {
		struct json_object *p = json_object_array_get_idx(jp, i);

		pv[i].id = jstr(p, "id");
		pv[i].account_id = jstr(p, "account_id");
		pv[i].bill_id = jstr(p, "bill_id");
		pv[i].currency = jstr(p, "currency");
		pv[i].exponent = 2;
		pv[i].minor = json_object_get_int64(jget(p, "minor"));
		pv[i].day = day_of(jstr(p, "day"));
	}
	qsort(pv, np, sizeof(*pv), cmp_pay);
	npays_all += np;

	/* one group per biller, in the order of its first bill */
	for (i = 0; i < nb; i++) {
		for (k = 0; k < ng; k++)
			if (strcmp(gv[k].biller_id, bx[i].b.biller_id) == 0)
				break;
		if (k == ng) {
			gv = xrealloc(gv, (ng + 1) * sizeof(*gv));
			memset(&gv[k], 0, sizeof(*gv));
			gv[k].biller_id = bx[i].b.biller_id;
			gv[k].bills = arena_alloc(&ua, nb * sizeof(struct ins_bill));
			gv[k].paid = arena_alloc(&ua, nb * sizeof(int));
			gv[k].pays = arena_alloc(&ua, (np + 1) * sizeof(struct ins_payment));
			ng++;
		}
		gv[k].bills[gv[k].nbills] = bx[i].b;
		gv[k].paid[gv[k].nbills++] = bx[i].paid;
	}
	for (k = 0; k < ng; k++) {
		struct group *g = &gv[k];
		size_t	 cap = 0;

		/* the payments of its accounts */
		for (i = 0; i < np; i++)
			for (j = 0; j < g->nbills; j++)
				if (strcmp(g->bills[j].account_id, pv[i].account_id) == 0) {
					g->pays[g->npays++] = pv[i];
					break;
				}
		for (j = 0; j < g->nbills; j++) {
			const struct ins_bill *b = &g->bills[j];

			add_day(&g->days, &g->ndays, &cap, b->day, today);
			if (b->due != INS_NO_DAY && g->paid[j] > b->due - 3)
				add_day(&g->days, &g->ndays, &cap, b->due - 3, today);
			if (b->due != INS_NO_DAY && g->paid[j] > b->due + 1)
				add_day(&g->days, &g->ndays, &cap, b->due + 1, today);
		}
		for (i = 0; i < g->npays; i++)
			add_day(&g->days, &g->ndays, &cap, g->pays[i].day, today);
		if (g->ndays > 0) {
			qsort(g->days, g->ndays, sizeof(int), cmp_int);
			for (i = 1, j = 1; i < g->ndays; i++)
				if (g->days[i] != g->days[j - 1])
					g->days[j++] = g->days[i];
			g->ndays = j;
		}
	}

	/* the replay */
	for (k = 0; k < ng; k++) {
		struct group *g = &gv[k];

		for (i = 0; i < g->ndays; i++) {
			int	 d = g->days[i];
			size_t	 n = 0, m = 0;
			struct ins_history h;
			struct ins_findings out;
			struct timespec t0, t1;

			while (n < g->nbills && g->bills[n].day <= d) {
				g->bills[n].status = g->paid[n] <= d ? "PAID" : "PENDING";
				n++;
			}
			while (m < g->npays && g->pays[m].day <= d)
				m++;
			if (n == 0)
				continue;
			memset(&h, 0, sizeof(h));
			h.bills = g->bills;
			h.nbills = n;
			h.first_target = 0;
			h.payments = g->pays;
			h.npayments = m;
			h.first_bill_of_biller = g->bills[0].id;
			h.today = d;
			h.t = t;
			memset(&out, 0, sizeof(out));
			clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t0);
			if (ins_evaluate(&ca, &h, &out) != 0) {
				fprintf(stderr, "ins_evaluate failed (%s)\n", user);
				exit(2);
			}
			clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t1);
			if (ncpu == cpucap) {
				cpucap = cpucap ? cpucap * 2 : 1 << 16;
				cpu = xrealloc(cpu, cpucap * sizeof(*cpu));
			}
			cpu[ncpu++] = (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
			for (j = 0; j < out.n; j++) {
				const struct ins_finding *f = &out.v[j];
				size_t	 x;

				for (x = 0; x < nf; x++)
					if (strcmp(fv[x].type, f->type) == 0 &&
					    strcmp(fv[x].subject, f->subject) == 0)
						break;
				if (x < nf)
					continue;
				if (nf == fcap) {
					fcap = fcap ? fcap * 2 : 32;
					fv = xrealloc(fv, fcap * sizeof(*fv));
				}
				fv[nf].type = arena_strdup(&ua, f->type);
				fv[nf].subject = arena_strdup(&ua, f->subject);
				fv[nf].bill_id = arena_strdup(&ua, f->bill_id);
				fv[nf].reasoning = arena_strdup(&ua, f->reasoning);
				nf++;
			}
			ins_findings_free(&out);
			arena_reset(&ca);
		}
	}

	/* the labels */
	jt = jget(u, "truth");
	nl = json_object_array_length(jt);
	lv = arena_alloc(&ua, (nl + 1) * sizeof(*lv));
	for (i = 0; i < nl; i++) {
		struct json_object *x = json_object_array_get_idx(jt, i), *hh, *v;
		struct label *l = &lv[i];

		l->type = jstr(x, "type");
		l->bill_id = jstr(x, "bill_id");
		l->planted = jstr(x, "planted");
		if (l->planted == NULL)
			l->planted = "-";
		l->expected = json_object_get_boolean(jget(x, "expected"));
		hh = jget(x, "subject_hint");
		l->hint = H_NONE;
		if (hh == NULL)
			continue;
		if ((v = jget(hh, "description")) != NULL) {
			l->hint = H_DESC;
			l->a = ins_normalise(&ua, json_object_get_string(v));
		} else if ((v = jget(hh, "usage_type")) != NULL) {
			l->hint = H_USAGE;
			l->a = json_object_get_string(v);
		} else if ((v = jget(hh, "payments")) != NULL) {
			l->hint = H_PAYMENTS;
			l->a = json_object_get_string(json_object_array_get_idx(v, 0));
			l->b = json_object_get_string(json_object_array_get_idx(v, 1));
		} else if ((v = jget(hh, "bills")) != NULL) {
			l->hint = H_BILLS;
			l->a = json_object_get_string(json_object_array_get_idx(v, 0));
			l->b = json_object_get_string(json_object_array_get_idx(v, 1));
		} else if ((v = jget(hh, "biller_id")) != NULL) {
			l->hint = H_BILLER;
			l->a = json_object_get_string(v);
		}
		if (l->expected)
			tstats[type_index(l->type)].expected++;
	}

	nfindings += nf;
	for (i = 0; i < nf; i++) {
		struct label *l = match(lv, nl, &fv[i]);
		int	 ti = type_index(fv[i].type);

		if (l != NULL && l->expected && !l->found) {
			l->found = 1;
			tstats[ti].tp++;
		} else if (l != NULL) {
			tstats[ti].allowed++;
		} else {
			tstats[ti].fp++;
			tstats[ti].fp_young += young(bx, nb, fv[i].bill_id);
			if (clean) {
				tstats[ti].clean_fp++;
				flagged = 1;
			}
			example(fp_ex[ti], &nfp_ex[ti], "%s `%s`: %s", user, fv[i].subject,
			    fv[i].reasoning);
		}
	}
	clean_flagged += flagged;
	for (i = 0; i < nl; i++) {
		struct label *l = &lv[i];
		int	 ti = type_index(l->type);

		if (!l->expected)
			continue;
		count_planted(l->planted, l->type, l->found);
		if (!l->found) {
			tstats[ti].fn++;
			example(fn_ex[ti], &nfn_ex[ti], "%s bill %s (planted: %s)", user,
			    l->bill_id, l->planted);
		}
	}

	for (k = 0; k < ng; k++)
		free(gv[k].days);
	free(gv);
	free(fv);
	arena_free(&ca);
	arena_free(&ua);
}

static void
ratio(FILE *f, long num, long den)
{
	if (den == 0)
		fprintf(f, " – |");
	else
		fprintf(f, " %.3f |", (double)num / den);
}

static int
cmp_pk(const void *a, const void *b)
{
	const struct pk *x = a, *y = b;
	int	 c = strcmp(x->type, y->type);

	return c ? c : strcmp(x->planted, y->planted);
}

static void
report(FILE *f, const char *in)
{
	struct tstat all;
	size_t	 i;
	int	 ti, e;
	double	 sum = 0;

	memset(&all, 0, sizeof(all));
	fprintf(f, "# Insight rules: accuracy on synthetic bill histories\n\n");
	fprintf(f, "- input: %s — %ld users (%ld clean: no planted anomaly), "
	    "%ld bills, %ld payments\n", in, nusers, nclean, nbills_all, npays_all);
	fprintf(f, "- replay: %zu ins_evaluate calls, %ld distinct findings "
	    "(type, subject)\n\n", ncpu, nfindings);
	fprintf(f, "| type | expected | TP | FP | allowed | FN | precision | recall "
	    "| FP on clean users | FP in an account's first year |\n");
	fprintf(f, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
	for (ti = 0; ti <= NTYPES; ti++) {
		struct tstat *s = &tstats[ti];

		if (ti == NTYPES && s->expected + s->tp + s->fp + s->allowed == 0)
			continue;
		fprintf(f, "| %s | %ld | %ld | %ld | %ld | %ld |",
		    ti < NTYPES ? types[ti] : "(other)", s->expected, s->tp, s->fp,
		    s->allowed, s->fn);
		ratio(f, s->tp, s->tp + s->fp);
		ratio(f, s->tp, s->tp + s->fn);
		fprintf(f, " %ld | %ld |\n", s->clean_fp, s->fp_young);
		all.expected += s->expected;
		all.tp += s->tp;
		all.fp += s->fp;
		all.allowed += s->allowed;
		all.fn += s->fn;
		all.clean_fp += s->clean_fp;
		all.fp_young += s->fp_young;
	}
	fprintf(f, "| **all** | %ld | %ld | %ld | %ld | %ld |", all.expected, all.tp,
	    all.fp, all.allowed, all.fn);
	ratio(f, all.tp, all.tp + all.fp);
	ratio(f, all.tp, all.tp + all.fn);
	fprintf(f, " %ld | %ld |\n\n", all.clean_fp, all.fp_young);
	fprintf(f, "Clean users with at least one false positive: %ld of %ld. "
	    "An account's first year: its bill has no previous bill of the account "
	    "12 months before it (no seasonal comparison possible).\n\n",
	    clean_flagged, nclean);

	qsort(pks, npks, sizeof(*pks), cmp_pk);
	fprintf(f, "Recall by what the generator planted:\n\n");
	fprintf(f, "| type | planted | expected | found | recall |\n|---|---|---:|---:|---:|\n");
	for (i = 0; i < npks; i++) {
		fprintf(f, "| %s | %s | %ld | %ld |", pks[i].type, pks[i].planted,
		    pks[i].n, pks[i].found);
		ratio(f, pks[i].found, pks[i].n);
		fprintf(f, "\n");
	}

	for (i = 0; i < ncpu; i++)
		sum += cpu[i];
	qsort(cpu, ncpu, sizeof(*cpu), cmp_double);
	fprintf(f, "\nins_evaluate CPU time per call (CLOCK_PROCESS_CPUTIME_ID):\n\n");
	fprintf(f, "| calls | mean µs | p50 µs | p99 µs | max µs | total s |\n");
	fprintf(f, "|---:|---:|---:|---:|---:|---:|\n");
	if (ncpu > 0)
		fprintf(f, "| %zu | %.1f | %.1f | %.1f | %.1f | %.2f |\n", ncpu,
		    sum / ncpu * 1e6, cpu[ncpu / 2] * 1e6,
		    cpu[(size_t)(ncpu * 0.99)] * 1e6, cpu[ncpu - 1] * 1e6, sum);

	fprintf(f, "\nExamples (at most %d per type):\n\n", NEX);
	for (ti = 0; ti <= NTYPES; ti++) {
		for (e = 0; e < nfp_ex[ti]; e++)
			fprintf(f, "- FP %s: %s\n", ti < NTYPES ? types[ti] : "(other)",
			    fp_ex[ti][e]);
		for (e = 0; e < nfn_ex[ti]; e++)
			fprintf(f, "- FN %s: %s\n", ti < NTYPES ? types[ti] : "(other)",
			    fn_ex[ti][e]);
	}
}

static void
usage(void)
{
	fprintf(stderr, "usage: accuracy --in FILE.jsonl --out FILE.md\n");
	exit(2);
}

int
main(int argc, char **argv)
{
	struct ins_thresholds t;
	const char *in = NULL, *outp = NULL;
	FILE	*fin, *fout;
	char	*line = NULL;
	size_t	 cap = 0, i;
	ssize_t	 len;
	int	 a, e;

	for (a = 1; a < argc; a++) {
		if (strcmp(argv[a], "--in") == 0 && a + 1 < argc)
			in = argv[++a];
		else if (strcmp(argv[a], "--out") == 0 && a + 1 < argc)
			outp = argv[++a];
		else
			usage();
	}
	if (in == NULL || outp == NULL)
		usage();
	if ((fin = fopen(in, "r")) == NULL) {
		perror(in);
		return 2;
	}
	ins_thresholds_default(&t);
	while ((len = getline(&line, &cap, fin)) > 0) {
		struct json_object *u;

		if (len <= 1)
			continue;
		if ((u = json_tokener_parse(line)) == NULL) {
			fprintf(stderr, "%s: a line that is not JSON\n", in);
			return 2;
		}
		run_user(u, &t);
		json_object_put(u);
	}
	free(line);
	fclose(fin);
	if ((fout = fopen(outp, "w")) == NULL) {
		perror(outp);
		return 2;
	}
	report(fout, in);
	fclose(fout);

	free(cpu);
	for (i = 0; i < npks; i++) {
		free(pks[i].planted);
		free(pks[i].type);
	}
	free(pks);
	for (a = 0; a <= NTYPES; a++) {
		for (e = 0; e < nfp_ex[a]; e++)
			free(fp_ex[a][e]);
		for (e = 0; e < nfn_ex[a]; e++)
			free(fn_ex[a][e]);
	}
	return 0;
}
