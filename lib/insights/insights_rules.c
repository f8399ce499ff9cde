/*
 * The insight rules (insights_rules.h): pure functions over one link's
 * bill history. Each rule judges one target bill against the bills before
 * it and appends what it finds; ins_evaluate runs them in the header's
 * order. No clock, no I/O: today is h->today.
 *
 * Amounts stay integer minor units; a median of an even count is the mean
 * of the two middle values, so medians and MADs are kept in doubles (exact:
 * halves and quarters of integers far below 2^52). A threshold scaled by a
 * configured ratio (0.30 is not exact in binary) is snapped to the half
 * unit it is meant to be, so that exactly 30% above the median is not
 * "more than 30%". The text of the JSON depends on nothing but the input:
 * numbers are printed by the rules themselves, with a decimal point
 * whatever the locale.
 *
 * Libm is not needed (rounding and absolute values are done here), so a
 * program linking libbds.a alone runs the rules.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "core/arena.h"
#include "core/money.h"
#include "insights/insights_rules.h"

#define SEV_LOW		"low"
#define SEV_MEDIUM	"medium"
#define SEV_HIGH	"high"

/* the factor from a MAD to a standard deviation of a normal sample */
#define MAD_SD		1.4826

static const struct ins_thresholds defaults = {
	.duplicate_days = 5,
	.baseline_bills = 6,
	.baseline_min = 3,
	.anomaly_ratio = 0.30,
	.anomaly_mads = 3.0,
	.overdue_days = 3,
	.spike_ratio = 0.50,
	.spike_units = 5,
	.usage_bills = 12,
	.usage_sds = 2.0,
	.usage_floor = 0.25,
};

void
ins_thresholds_default(struct ins_thresholds *t)
{
	*t = defaults;
}

/* ---- numbers ---- */

static double
dabs(double x)
{
	return x < 0 ? -x : x;
}

static double
dmax(double x, double y)
{
	return x > y ? x : y;
}

/* the nearest integer, halves away from zero */
static long long
dround(double x)
{
	return (long long)(x < 0 ? x - 0.5 : x + 0.5);
}

/*
 * A threshold computed as ratio * value, snapped to the nearest half unit
 * when it is that close to it: 0.35 * 11000 is 3849.9999999999995 in
 * doubles, and 3850 snapped, so a bill 3850 above its median is not above
 * the threshold.
 */
static double
snap(double x)
{
	double r = (double)dround(x * 2) / 2;

	return dabs(x - r) <= 1e-12 * dmax(1, dabs(x)) ? r : x;
}

/* x above lim by more than a rounding error of quantities (usage) */
static int
beyond(double x, double lim)
{
	return x > lim && x - lim > 1e-9 * dmax(dabs(x), dabs(lim));
}

static int
cmp_double(const void *x, const void *y)
{
	double p = *(const double *)x, q = *(const double *)y;

	return p < q ? -1 : p > q;
}

/* The median of v[0..n) (sorted in place); 0 when n is 0. */
static double
median(double *v, size_t n)
{
	if (n == 0)
		return 0;
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* The median of |v[i] - m| (v untouched). */
static double
mad(struct arena *a, const double *v, size_t n, double m)
{
	double *d = arena_alloc(a, (n ? n : 1) * sizeof(*d));
	size_t i;

	for (i = 0; i < n; i++)
		d[i] = dabs(v[i] - m);
	return median(d, n);
}

/* A number as the text and the JSON print it: "0.3", "402.5", "3". */
static const char *
num_text(struct arena *a, double x)
{
	char buf[64];
	char *p;

	if (!isfinite(x))
		return "0";
	snprintf(buf, sizeof(buf), dabs(x) < 1e15 ? "%.6f" : "%.15g", x);
	/* a decimal point, whatever the locale's */
	for (p = buf; *p != '\0'; p++)
		if (*p == ',')
			*p = '.';
	/* no trailing zeros, no lone point, no "-0" */
	if ((p = strchr(buf, '.')) != NULL) {
		for (p += strlen(p) - 1; *p == '0'; p--)
			*p = '\0';
		if (*p == '.')
			*p = '\0';
	}
	if (strcmp(buf, "-0") == 0)
		return "0";
	return arena_strdup(a, buf);
}

/* A share as a percentage: "52%", "30.5%". */
static const char *
percent(struct arena *a, double share)
{
	double p = (double)dround(share * 1000) / 10;

	return arena_printf(a, "%s%%", num_text(a, p));
}

/* ---- days ---- */

/* days since 1970-01-01 of a proleptic Gregorian date */
static long
days_from_civil(long y, long m, long d)
{
	long era, yoe, doy, doe;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = y - era * 400;
	doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

static int
leap(long y)
{
	return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

int
ins_day(const char *s, int *day)
{
	static const int mdays[] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
	long y, m, d;
	int i;

	if (s == NULL || strlen(s) != 10 || s[4] != '-' || s[7] != '-')
		return -1;
	for (i = 0; i < 10; i++)
		if (i != 4 && i != 7 && (s[i] < '0' || s[i] > '9'))
			return -1;
	y = (s[0] - '0') * 1000 + (s[1] - '0') * 100 + (s[2] - '0') * 10 + (s[3] - '0');
	m = (s[5] - '0') * 10 + (s[6] - '0');
	d = (s[8] - '0') * 10 + (s[9] - '0');
	if (m < 1 || m > 12 || d < 1 || d > mdays[m - 1] + (m == 2 && leap(y)))
		return -1;
	*day = (int)days_from_civil(y, m, d);
	return 0;
}

/* A day as "YYYY-MM-DD"; NULL for INS_NO_DAY. */
static const char *
day_text(struct arena *a, int day)
{
	long z, era, doe, yoe, doy, mp, y, m, d;

	if (day == INS_NO_DAY)
		return NULL;
	z = (long)day + 719468;
	era = (z >= 0 ? z : z - 146096) / 146097;
	doe = z - era * 146097;
	yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	mp = (5 * doy + 2) / 153;
	d = doy - (153 * mp + 2) / 5 + 1;
	m = mp < 10 ? mp + 3 : mp - 9;
	y = yoe + era * 400 + (m <= 2);
	return arena_printf(a, "%04ld-%02ld-%02ld", y, m, d);
}

/* ---- descriptions ---- */

static const char *const months[] = {
	"january", "february", "march", "april", "may", "june", "july", "august",
	"september", "october", "november", "december",
	"jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
	NULL
};

/* a letter: ASCII ones and every byte of a UTF-8 sequence */
static int
letter(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c >= 0x80;
}

static int
month_word(const char *w, size_t n)
{
	size_t i;

	for (i = 0; months[i] != NULL; i++)
		if (strlen(months[i]) == n && memcmp(months[i], w, n) == 0)
			return 1;
	return 0;
}

const char *
ins_normalise(struct arena *a, const char *description)
{
	const unsigned char *p = (const unsigned char *)(description ? description : "");
	char *out = arena_alloc(a, strlen((const char *)p) + 1);
	size_t n = 0, w, k;

	for (;;) {
		while (*p != '\0' && !letter(*p))
			p++;
		if (*p == '\0')
			break;
		/* one word, lower case, after a space unless it is the first */
		w = n + (n > 0);
		for (k = w; letter(*p); p++)
			out[k++] = *p >= 'A' && *p <= 'Z' ? (char)(*p - 'A' + 'a') : (char)*p;
		if (month_word(out + w, k - w))
			continue;
		if (n > 0)
			out[n] = ' ';
		n = k;
	}
	out[n] = '\0';
	return out;
}

/* ---- the history ---- */

/* the history's thresholds, the defaults when it gives none */
static const struct ins_thresholds *
thresholds(const struct ins_history *h)
{
	return h->t != NULL ? h->t : &defaults;
}

/* equal strings, both NULL too */
static int
same(const char *x, const char *y)
{
	if (x == y)
		return 1;
	if (x == NULL || y == NULL)
		return x == y;
	return strcmp(x, y) == 0;
}

static int
nonempty(const char *s)
{
	return s != NULL && *s != '\0';
}

static size_t
count(int n)
{
	return n > 0 ? (size_t)n : 0;
}

/* the same account and currency: bills whose amounts compare */
static int
same_line(const struct ins_bill *x, const struct ins_bill *y)
{
	return same(x->account_id, y->account_id) && same(x->currency, y->currency);
}

/*
 * The previous bills of j: the last max of the bills before it of the same
 * account and currency (max SIZE_MAX: all), as indices oldest first into
 * *idx (arena). Their number.
 */
static size_t
previous(struct arena *a, const struct ins_history *h, size_t j, size_t max, size_t **idx)
{
	size_t *v = arena_alloc(a, (j < max ? j + 1 : max + 1) * sizeof(*v));
	size_t n = 0, i, k;

	for (i = j; i-- > 0 && n < max;)
		if (same_line(&h->bills[i], &h->bills[j]))
			v[n++] = i;
	for (k = 0; k < n / 2; k++) {
		i = v[k];
		v[k] = v[n - 1 - k];
		v[n - 1 - k] = i;
	}
	*idx = v;
	return n;
}

/*
 * The seasonal bills of j: previous bills of the months a year earlier
 * (month - 13 .. month - 11), oldest first into *idx. *year: whether j has
 * a year of history (a previous bill of month - 12 or before).
 */
static size_t
seasonal(struct arena *a, const struct ins_history *h, size_t j, size_t **idx, int *year)
{
	long m = h->bills[j].month;
	size_t *v = NULL, i, k, pass;

	*year = 0;
	/* count them, then note them */
	for (pass = 0; pass < 2; pass++) {
		for (k = 0, i = 0; i < j; i++) {
			long pm = h->bills[i].month;

			if (!same_line(&h->bills[i], &h->bills[j]))
				continue;
			*year |= pm <= m - 12;
			if (pm >= m - 13 && pm <= m - 11) {
				if (v != NULL)
					v[k] = i;
				k++;
			}
		}
		if (v == NULL)
			v = arena_alloc(a, (k + 1) * sizeof(*v));
	}
	*idx = v;
	return k;
}

static int
credit(const struct ins_item *it)
{
	return it->category != NULL && (strcmp(it->category, "credit") == 0 ||
	    strcmp(it->category, "adjustment") == 0);
}

/* A line that is a charge: not a credit or an adjustment, above zero. */
static int
charge_line(const struct ins_item *it)
{
	return !credit(it) && it->minor > 0;
}

/* The largest charge line of bill b named norm, or NULL. */
static const struct ins_item *
largest(const struct ins_bill *b, const char *norm)
{
	const struct ins_item *best = NULL;
	size_t i;

	for (i = 0; i < b->nitems; i++)
		if (charge_line(&b->items[i]) && same(b->items[i].norm, norm) &&
		    (best == NULL || b->items[i].minor > best->minor))
			best = &b->items[i];
	return best;
}

/* Whether a charge line of b before k has the same norm as line k. */
static int
norm_seen(const struct ins_bill *b, size_t k)
{
	size_t i;

	for (i = 0; i < k; i++)
		if (charge_line(&b->items[i]) && same(b->items[i].norm, b->items[k].norm))
			return 1;
	return 0;
}

/* The first usage entry of type in b, or NULL. */
static const struct ins_usage *
usage_of(const struct ins_bill *b, const char *type)
{
	size_t i;

	for (i = 0; i < b->nusage; i++)
		if (same(b->usage[i].type, type))
			return &b->usage[i];
	return NULL;
}

/* ---- findings and their JSON ---- */

/* JSON being built: bad once an allocation failed. */
struct jb {
	struct arena	*a;
	int		 bad;
};

static struct json_object *
jcheck(struct jb *b, struct json_object *o)
{
	if (o == NULL)
		b->bad = 1;
	return o;
}

static struct json_object *
jobj(struct jb *b)
{
	return jcheck(b, json_object_new_object());
}

static struct json_object *
jarr(struct jb *b)
{
	return jcheck(b, json_object_new_array());
}

/* a string, or JSON null for NULL */
static struct json_object *
jstr(struct jb *b, const char *s)
{
	return s == NULL ? NULL : jcheck(b, json_object_new_string(s));
}

static struct json_object *
jint(struct jb *b, long long v)
{
	return jcheck(b, json_object_new_int64(v));
}

static struct json_object *
jnum(struct jb *b, double x)
{
	return jcheck(b, json_object_new_double_s(x, num_text(b->a, x)));
}

/* o[key] = v (v NULL: null); o takes v */
static void
jset(struct jb *b, struct json_object *o, const char *key, struct json_object *v)
{
	if (o == NULL || json_object_object_add(o, key, v) != 0) {
		json_object_put(v);
		b->bad = 1;
	}
}

/* Amount: {"value": "<decimal at the exponent>", "currency": "USD"}. */
static struct json_object *
jmoney(struct jb *b, long long minor, const struct ins_bill *cur)
{
	struct json_object *o = jobj(b);

	jset(b, o, "value", jstr(b, money_format(b->a, minor, cur->exponent)));
	jset(b, o, "currency", jstr(b, cur->currency));
	return o;
}

static void
jpush(struct jb *b, struct json_object *arr, struct json_object *v)
{
	if (arr == NULL || json_object_array_add(arr, v) != 0) {
		json_object_put(v);
		b->bad = 1;
	}
}

/* ["id", ...] of bills idx[0..n) and then of bill last (when not NULL) */
static struct json_object *
jbill_ids(struct jb *b, const struct ins_history *h, const size_t *idx, size_t n,
    const char *last)
{
	struct json_object *arr = jarr(b);
	size_t i;

	for (i = 0; i < n; i++)
		jpush(b, arr, jstr(b, h->bills[idx[i]].id));
	if (last != NULL)
		jpush(b, arr, jstr(b, last));
	return arr;
}

/* One action: {action_type, label, params}; the action takes params. */
static void
action(struct jb *b, struct json_object *acts, const char *type, const char *label,
    struct json_object *params)
{
	struct json_object *o = jobj(b);

	jset(b, o, "action_type", jstr(b, type));
	jset(b, o, "label", jstr(b, label));
	jset(b, o, "params", params);
	jpush(b, acts, o);
}

/* {bill_id: id} */
static struct json_object *
pbill(struct jb *b, const char *id)
{
	struct json_object *o = jobj(b);

	jset(b, o, "bill_id", jstr(b, id));
	return o;
}

static void
act_review(struct jb *b, struct json_object *acts, const struct ins_bill *bill)
{
	action(b, acts, INS_ACT_REVIEW_BILL, "Review the bill", pbill(b, bill->id));
}

static void
act_contact(struct jb *b, struct json_object *acts, const char *biller_id)
{
	struct json_object *p = jobj(b);

	jset(b, p, "biller_id", jstr(b, biller_id));
	action(b, acts, INS_ACT_CONTACT_BILLER, "Contact the biller", p);
}

/*
 * Append a finding to out; it takes ev and acts. Nothing when out has a
 * finding of the same type and subject already (the first one stands).
 * The array grows in the arena: out starts zeroed, or as
 * ins_findings_free leaves it. 0, or -1 when building the JSON failed.
 */
static int
emit(struct jb *b, struct ins_findings *out, const char *type, const char *subject,
    const char *severity, const char *bill_id, const char *account_id,
    const char *biller_id, const char *reasoning, struct json_object *ev,
    struct json_object *acts)
{
	struct arena *a = b->a;
	struct ins_finding *f;
	size_t i;

	if (b->bad || ev == NULL || acts == NULL)
		goto drop;
	for (i = 0; i < out->n; i++)
		if (strcmp(out->v[i].type, type) == 0 && strcmp(out->v[i].subject, subject) == 0)
			goto drop;
	if (out->n == out->cap) {
		size_t cap = out->cap ? out->cap * 2 : 8;

		f = arena_alloc(a, cap * sizeof(*f));
		if (out->n > 0)
			memcpy(f, out->v, out->n * sizeof(*f));
		out->v = f;
		out->cap = cap;
	}
	f = &out->v[out->n++];
	f->type = arena_strdup(a, type);
	f->subject = arena_strdup(a, subject);
	f->severity = severity;
	f->bill_id = arena_strdup(a, bill_id);
	f->account_id = arena_strdup(a, account_id);
	f->biller_id = arena_strdup(a, biller_id);
	f->reasoning = arena_strdup(a, reasoning);
	f->evidence = ev;
	f->actions = acts;
	return 0;
drop:
	json_object_put(ev);
	json_object_put(acts);
	return b->bad ? -1 : 0;
}

/* An amount as the reasoning writes it: "123.45 USD". */
static const char *
amount(struct arena *a, long long minor, const struct ins_bill *cur)
{
	return arena_printf(a, "%s%s%s", money_format(a, minor, cur->exponent),
	    cur->currency ? " " : "", cur->currency ? cur->currency : "");
}

static const char *
plural(size_t n, const char *one, const char *many)
{
	return n == 1 ? one : many;
}

/* ---- 1. duplicate charges ---- */

/* the days between two days, either way */
static long long
days_apart(int x, int y)
{
	long long d = (long long)x - y;

	return d < 0 ? -d : d;
}

/* a. the same total billed twice within duplicate_days */
static int
duplicate_bills(struct jb *b, const struct ins_history *h, size_t j,
    struct ins_findings *out)
{
	const struct ins_thresholds *t = thresholds(h);
	const struct ins_bill *bj = &h->bills[j], *bi;
	struct json_object *ev, *acts, *p, *th;
	struct arena *a = b->a;
	size_t i, best = j;
	long long apart, best_apart = 0;
	size_t pair[2];

	if (bj->total <= 0)
		return 0;
	for (i = j; i-- > 0;) {
		bi = &h->bills[i];
		if (bi->total != bj->total || !same_line(bi, bj))
			continue;
		apart = days_apart(bj->day, bi->day);
		if (apart <= t->duplicate_days && (best == j || apart < best_apart)) {
			best = i;
			best_apart = apart;
		}
	}
	if (best == j)
		return 0;
	bi = &h->bills[best];
	pair[0] = best;
	pair[1] = j;

	ev = jobj(b);
	jset(b, ev, "bill_ids", jbill_ids(b, h, pair, 2, NULL));
	jset(b, ev, "amount", jmoney(b, bj->total, bj));
	p = jobj(b);
	jset(b, p, "bill_id", jstr(b, bi->id));
	jset(b, p, "total", jmoney(b, bi->total, bi));
	jset(b, p, "date", jstr(b, day_text(a, bi->day)));
	jset(b, ev, "baseline", p);
	th = jobj(b);
	jset(b, th, "duplicate_days", jint(b, t->duplicate_days));
	jset(b, ev, "threshold", th);
	jset(b, ev, "date", jstr(b, day_text(a, bj->day)));
	jset(b, ev, "days_apart", jint(b, best_apart));

	acts = jarr(b);
	p = pbill(b, bj->id);
	jset(b, p, "amount", jmoney(b, bj->total, bj));
	action(b, acts, INS_ACT_DISPUTE_CHARGE, "Dispute the duplicate charge", p);
	act_contact(b, acts, bj->biller_id);
	act_review(b, acts, bj);

	return emit(b, out, INS_DUPLICATE_CHARGE,
	    arena_printf(a, "bills:%s:%s", bi->id, bj->id), SEV_HIGH, bj->id,
	    bj->account_id, bj->biller_id,
	    arena_printf(a, "This bill's total of %s is the same as that of the bill of %s, "
	    "%lld %s apart (the threshold is %d %s).", amount(a, bj->total, bj),
	    day_text(a, bi->day), best_apart, plural((size_t)best_apart, "day", "days"),
	    t->duplicate_days, plural((size_t)count(t->duplicate_days), "day", "days")),
	    ev, acts);
}

/* b. one bill billing the same line twice */
static int
duplicate_lines(struct jb *b, const struct ins_history *h, size_t j,
    struct ins_findings *out)
{
	const struct ins_bill *bj = &h->bills[j];
	const struct ins_item *x, *y;
	struct json_object *ev, *acts, *p, *th;
	struct arena *a = b->a;
	size_t k, l, m, times;

	for (k = 0; k < bj->nitems; k++) {
		if (!nonempty(bj->items[k].norm) || !charge_line(&bj->items[k]) ||
		    norm_seen(bj, k))
			continue;
		/* the first line of this norm whose amount comes again */
		for (y = NULL, l = k; l < bj->nitems && y == NULL; l++) {
			x = &bj->items[l];
			if (!charge_line(x) || !same(x->norm, bj->items[k].norm))
				continue;
			for (m = l + 1; m < bj->nitems && y == NULL; m++)
				if (charge_line(&bj->items[m]) &&
				    same(bj->items[m].norm, x->norm) &&
				    bj->items[m].minor == x->minor)
					y = x;
		}
		if (y == NULL)
			continue;
		for (times = 0, l = 0; l < bj->nitems; l++)
			if (charge_line(&bj->items[l]) && same(bj->items[l].norm, y->norm) &&
			    bj->items[l].minor == y->minor)
				times++;

		ev = jobj(b);
		jset(b, ev, "bill_ids", jbill_ids(b, h, NULL, 0, bj->id));
		jset(b, ev, "description", jstr(b, y->description));
		jset(b, ev, "norm", jstr(b, y->norm));
		jset(b, ev, "amount", jmoney(b, y->minor, bj));
		p = jobj(b);
		jset(b, p, "bill_id", jstr(b, bj->id));
		jset(b, p, "lines", jint(b, 1));
		jset(b, ev, "baseline", p);
		th = jobj(b);
		jset(b, th, "lines", jint(b, 1));
		jset(b, ev, "threshold", th);
		jset(b, ev, "lines", jint(b, (long long)times));

		acts = jarr(b);
		p = pbill(b, bj->id);
		jset(b, p, "description", jstr(b, y->description));
		jset(b, p, "amount", jmoney(b, y->minor, bj));
		action(b, acts, INS_ACT_DISPUTE_CHARGE, "Dispute the duplicate line", p);
		act_contact(b, acts, bj->biller_id);
		act_review(b, acts, bj);

		if (emit(b, out, INS_DUPLICATE_CHARGE,
		    arena_printf(a, "line:%s:%s", bj->id, y->norm), SEV_HIGH, bj->id,
		    bj->account_id, bj->biller_id,
		    arena_printf(a, "This bill lists the line \"%s\" of %s %zu times "
		    "(a line is billed once).", y->description ? y->description : y->norm,
		    amount(a, y->minor, bj), times), ev, acts) != 0)
			return -1;
	}
	return 0;
}

int
ins_rule_duplicate_charge(struct arena *a, const struct ins_history *h, size_t j,
    struct ins_findings *out)
{
	struct jb b = { a, 0 };

	if (duplicate_bills(&b, h, j, out) != 0)
		return -1;
	return duplicate_lines(&b, h, j, out);
}

/* The biller of a payment: its bill's, else that of a bill of its account. */
static const char *
payment_biller(const struct ins_history *h, const struct ins_payment *p, const char *bill_id)
{
	size_t i;

	if (bill_id != NULL)
		for (i = 0; i < h->nbills; i++)
			if (same(h->bills[i].id, bill_id))
				return h->bills[i].biller_id;
	for (i = h->nbills; i-- > 0;)
		if (same(h->bills[i].account_id, p->account_id))
			return h->bills[i].biller_id;
	return NULL;
}

int
ins_rule_duplicate_payments(struct arena *a, const struct ins_history *h,
    struct ins_findings *out)
{
	const struct ins_thresholds *t = thresholds(h);
	const struct ins_payment *p, *q;
	struct json_object *ev, *acts, *o, *th, *ids;
	struct jb b = { a, 0 };
	struct ins_bill cur;
	unsigned char *paired;
	size_t i, k, best;
	long long apart, best_apart = 0;
	const char *bill_id, *biller_id;

	if (h->npayments == 0)
		return 0;
	paired = arena_alloc(a, h->npayments);
	for (k = 0; k < h->npayments; k++) {
		q = &h->payments[k];
		if (q->minor <= 0)
			continue;
		best = k;
		for (i = k; i-- > 0;) {
			p = &h->payments[i];
			if (paired[i] || p->minor != q->minor ||
			    !same(p->account_id, q->account_id) || !same(p->currency, q->currency))
				continue;
			/* matched to two bills: each paid its own (a flat plan's
			 * late payment and the next bill's early one) */
			if (p->bill_id != NULL && q->bill_id != NULL && !same(p->bill_id, q->bill_id))
				continue;
			apart = days_apart(q->day, p->day);
			if (apart <= t->duplicate_days && (best == k || apart < best_apart)) {
				best = i;
				best_apart = apart;
			}
		}
		if (best == k)
			continue;
		paired[best] = paired[k] = 1;
		p = &h->payments[best];
		bill_id = q->bill_id != NULL ? q->bill_id : p->bill_id;
		biller_id = payment_biller(h, q, bill_id);
		memset(&cur, 0, sizeof(cur));
		cur.currency = q->currency;
		cur.exponent = q->exponent;

		ev = jobj(&b);
		ids = jarr(&b);
		if (p->bill_id != NULL)
			jpush(&b, ids, jstr(&b, p->bill_id));
		if (q->bill_id != NULL && !same(q->bill_id, p->bill_id))
			jpush(&b, ids, jstr(&b, q->bill_id));
		jset(&b, ev, "bill_ids", ids);
		ids = jarr(&b);
		jpush(&b, ids, jstr(&b, p->id));
		jpush(&b, ids, jstr(&b, q->id));
		jset(&b, ev, "payment_ids", ids);
		jset(&b, ev, "amount", jmoney(&b, q->minor, &cur));
		o = jobj(&b);
		jset(&b, o, "payment_id", jstr(&b, p->id));
		jset(&b, o, "amount", jmoney(&b, p->minor, &cur));
		jset(&b, o, "date", jstr(&b, day_text(a, p->day)));
		jset(&b, ev, "baseline", o);
		th = jobj(&b);
		jset(&b, th, "duplicate_days", jint(&b, t->duplicate_days));
		jset(&b, ev, "threshold", th);
		jset(&b, ev, "date", jstr(&b, day_text(a, q->day)));
		jset(&b, ev, "days_apart", jint(&b, best_apart));

		acts = jarr(&b);
		o = pbill(&b, bill_id);
		jset(&b, o, "payment_id", jstr(&b, q->id));
		jset(&b, o, "amount", jmoney(&b, q->minor, &cur));
		action(&b, acts, INS_ACT_DISPUTE_CHARGE, "Dispute the duplicate payment", o);
		if (biller_id != NULL)
			act_contact(&b, acts, biller_id);
		if (bill_id != NULL)
			action(&b, acts, INS_ACT_REVIEW_BILL, "Review the bill",
			    pbill(&b, bill_id));

		if (emit(&b, out, INS_DUPLICATE_CHARGE,
		    arena_printf(a, "payments:%s:%s", p->id, q->id), SEV_HIGH, bill_id,
		    q->account_id, biller_id,
		    arena_printf(a, "A payment of %s on %s was taken again on %s, "
		    "%lld %s apart (the threshold is %d %s).", amount(a, q->minor, &cur),
		    day_text(a, p->day), day_text(a, q->day), best_apart,
		    plural((size_t)best_apart, "day", "days"), t->duplicate_days,
		    plural(count(t->duplicate_days), "day", "days")), ev, acts) != 0)
			return -1;
	}
	return 0;
}

/* ---- 2. bill anomaly ---- */

/* A baseline of amounts: their median and MAD. */
struct base {
	size_t	 n;
	double	 m, mad;
};

static struct base
base_of(struct arena *a, double *v, size_t n)
{
	struct base s;

	s.n = n;
	s.m = median(v, n);
	s.mad = mad(a, v, n, s.m);
	return s;
}

/* x above s's median by more than max(ratio × median, mads × MAD); *lim it */
static int
anomalous(const struct ins_thresholds *t, double x, const struct base *s, double *lim)
{
	*lim = dmax(snap(t->anomaly_ratio * s->m), snap(t->anomaly_mads * s->mad));
	return s->m > 0 && x - s->m > *lim;
}

static struct json_object *
jbase(struct jb *b, const struct ins_history *h, const size_t *idx, const struct base *s,
    const struct ins_bill *cur)
{
	struct json_object *o = jobj(b);

	jset(b, o, "bill_ids", jbill_ids(b, h, idx, s->n, NULL));
	jset(b, o, "bills", jint(b, (long long)s->n));
	jset(b, o, "median", jmoney(b, dround(s->m), cur));
	jset(b, o, "mad", jmoney(b, dround(s->mad), cur));
	return o;
}

/*
 * Whether j's first usage explains its charges x against their median m
 * over the bills prev[0..n): the charges rose no more than the usage did
 * (against its median over those of them that report it), give or take
 * anomaly_ratio (a price change). Then the rise is the usage's,
 * usage_anomaly's to judge.
 */
static int
usage_explains(struct arena *a, const struct ins_history *h, size_t j, const size_t *prev,
    size_t n, const struct ins_thresholds *t, double x, double m)
{
	double um;

	const struct ins_bill *bj = &h->bills[j];
	const struct ins_usage *us;
	double *v = arena_alloc(a, (n + 1) * sizeof(*v));
	size_t i, k = 0;

	if (bj->nusage == 0 || !nonempty(bj->usage[0].type) || !isfinite(bj->usage[0].quantity))
		return 0;
	for (i = 0; i < n; i++)
		if ((us = usage_of(&h->bills[prev[i]], bj->usage[0].type)) != NULL &&
		    isfinite(us->quantity))
			v[k++] = us->quantity;
	if (k == 0 || (um = median(v, k)) <= 0 || m <= 0)
		return 0;
	return x / m <= bj->usage[0].quantity / um * (1 + t->anomaly_ratio);
}

int
ins_rule_bill_anomaly(struct arena *a, const struct ins_history *h, size_t j,
    struct ins_findings *out)
{
	const struct ins_thresholds *t = thresholds(h);
	const struct ins_bill *bj = &h->bills[j];
	struct json_object *ev, *acts, *o, *th;
	struct jb b = { a, 0 };
	struct base s, ss;
	size_t *prev, *sea, n, ns, i;
	double *v, lim, slim = 0, x = (double)bj->charges;
	int year, second = 0;

	n = previous(a, h, j, count(t->baseline_bills), &prev);
	if (n == 0 || n < count(t->baseline_min))
		return 0;
	v = arena_alloc(a, n * sizeof(*v));
	for (i = 0; i < n; i++)
		v[i] = (double)h->bills[prev[i]].charges;
	s = base_of(a, v, n);
	if (!anomalous(t, x, &s, &lim))
		return 0;
	ns = seasonal(a, h, j, &sea, &year);
	if (year && ns > 0) {
		v = arena_alloc(a, ns * sizeof(*v));
		for (i = 0; i < ns; i++)
			v[i] = (double)h->bills[sea[i]].charges;
		ss = base_of(a, v, ns);
		if (!anomalous(t, x, &ss, &slim) || usage_explains(a, h, j, sea, ns, t, x, ss.m))
			return 0;
		second = 1;
	} else if (x - (double)h->bills[prev[n - 1]].charges <= lim ||
	    usage_explains(a, h, j, prev, n, t, x, s.m))
		return 0;	/* no year yet: a season climbs, an anomaly steps; a
				 * rise of the usage is usage_anomaly's to judge */

	ev = jobj(&b);
	jset(&b, ev, "bill_ids", jbill_ids(&b, h, NULL, 0, bj->id));
	jset(&b, ev, "charges", jmoney(&b, bj->charges, bj));
	jset(&b, ev, "baseline", jbase(&b, h, prev, &s, bj));
	jset(&b, ev, "seasonal_baseline", second ? jbase(&b, h, sea, &ss, bj) : NULL);
	th = jobj(&b);
	jset(&b, th, "ratio", jnum(&b, t->anomaly_ratio));
	jset(&b, th, "mads", jnum(&b, t->anomaly_mads));
	jset(&b, th, "amount", jmoney(&b, dround(lim), bj));
	if (second)
		jset(&b, th, "seasonal_amount", jmoney(&b, dround(slim), bj));
	jset(&b, ev, "threshold", th);
	o = jobj(&b);
	jset(&b, o, "above_median", jmoney(&b, dround(x - s.m), bj));
	jset(&b, o, "ratio", jnum(&b, (x - s.m) / s.m));
	if (second) {
		jset(&b, o, "above_seasonal_median", jmoney(&b, dround(x - ss.m), bj));
		jset(&b, o, "seasonal_ratio", jnum(&b, (x - ss.m) / ss.m));
	}
	jset(&b, ev, "observed", o);

	acts = jarr(&b);
	act_review(&b, acts, bj);
	act_contact(&b, acts, bj->biller_id);

	return emit(&b, out, INS_BILL_ANOMALY, arena_printf(a, "bill:%s", bj->id),
	    x >= 2 * s.m ? SEV_HIGH : SEV_MEDIUM, bj->id, bj->account_id, bj->biller_id,
	    arena_printf(a, "This bill's charges of %s are %s above the median of %s "
	    "of the previous %zu %s%s (the threshold is %s).", amount(a, bj->charges, bj),
	    percent(a, (x - s.m) / s.m), amount(a, dround(s.m), bj), s.n,
	    plural(s.n, "bill", "bills"),
	    second ? arena_printf(a, " and %s above the median of %s of the same months "
	    "a year earlier", percent(a, (x - ss.m) / ss.m), amount(a, dround(ss.m), bj)) : "",
	    lim > snap(t->anomaly_ratio * s.m) ?
	    arena_printf(a, "%s MADs, %s", num_text(a, t->anomaly_mads),
	    amount(a, dround(lim), bj)) : percent(a, t->anomaly_ratio)), ev, acts);
}

/* ---- 3. new biller ---- */

int
ins_rule_new_biller(struct arena *a, const struct ins_history *h, size_t j,
    struct ins_findings *out)
{
	const struct ins_bill *bj = &h->bills[j];
	struct json_object *ev, *acts, *o;
	struct jb b = { a, 0 };
	const char *name;

	if (h->first_bill_of_biller == NULL || !same(bj->id, h->first_bill_of_biller))
		return 0;
	name = nonempty(bj->biller_name) ? bj->biller_name :
	    bj->biller_id ? bj->biller_id : "this biller";

	ev = jobj(&b);
	jset(&b, ev, "bill_ids", jbill_ids(&b, h, NULL, 0, bj->id));
	jset(&b, ev, "biller_id", jstr(&b, bj->biller_id));
	jset(&b, ev, "biller_name", jstr(&b, bj->biller_name));
	jset(&b, ev, "total", jmoney(&b, bj->total, bj));
	jset(&b, ev, "date", jstr(&b, day_text(a, bj->day)));
	o = jobj(&b);
	jset(&b, o, "first_bill_of_biller", jstr(&b, h->first_bill_of_biller));
	jset(&b, ev, "baseline", o);
	o = jobj(&b);
	jset(&b, o, "earlier_bills", jint(&b, 0));
	jset(&b, ev, "threshold", o);

	acts = jarr(&b);
	act_review(&b, acts, bj);

	return emit(&b, out, INS_NEW_BILLER,
	    arena_printf(a, "biller:%s", bj->biller_id ? bj->biller_id : ""), SEV_LOW, bj->id,
	    bj->account_id, bj->biller_id,
	    arena_printf(a, "This is the first bill from %s, of %s.", name,
	    amount(a, bj->total, bj)), ev, acts);
}

/* ---- 4. overdue risk ---- */

int
ins_rule_overdue_risk(struct arena *a, const struct ins_history *h, size_t j,
    struct ins_findings *out)
{
	const struct ins_thresholds *t = thresholds(h);
	const struct ins_bill *bj = &h->bills[j];
	struct json_object *ev, *acts, *o;
	struct jb b = { a, 0 };
	long long d;
	int remind;
	const char *why;

	if ((bj->status != NULL && strcmp(bj->status, "PAID") == 0) || bj->due == INS_NO_DAY)
		return 0;
	d = (long long)bj->due - h->today;
	if (d > t->overdue_days)
		return 0;
	if (d < 0)
		why = arena_printf(a, "was due on %s and is past due by %lld %s",
		    day_text(a, bj->due), -d, plural((size_t)-d, "day", "days"));
	else if (d == 0)
		why = arena_printf(a, "is due today, %s, and is not paid (the threshold is %d %s)",
		    day_text(a, bj->due), t->overdue_days,
		    plural(count(t->overdue_days), "day", "days"));
	else
		why = arena_printf(a, "is due in %lld %s, on %s, and is not paid "
		    "(the threshold is %d %s)", d, plural((size_t)d, "day", "days"),
		    day_text(a, bj->due), t->overdue_days,
		    plural(count(t->overdue_days), "day", "days"));
	/* remind the day before it is due, or today when that is past */
	remind = d >= 1 ? bj->due - 1 : h->today;

	ev = jobj(&b);
	jset(&b, ev, "bill_ids", jbill_ids(&b, h, NULL, 0, bj->id));
	jset(&b, ev, "total", jmoney(&b, bj->total, bj));
	jset(&b, ev, "status", jstr(&b, bj->status));
	o = jobj(&b);
	jset(&b, o, "due_date", jstr(&b, day_text(a, bj->due)));
	jset(&b, o, "today", jstr(&b, day_text(a, h->today)));
	jset(&b, ev, "baseline", o);
	o = jobj(&b);
	jset(&b, o, "overdue_days", jint(&b, t->overdue_days));
	jset(&b, ev, "threshold", o);
	jset(&b, ev, "days_to_due", jint(&b, d));

	acts = jarr(&b);
	o = pbill(&b, bj->id);
	jset(&b, o, "amount", jmoney(&b, bj->total, bj));
	action(&b, acts, INS_ACT_PAY_NOW, "Pay now", o);
	o = pbill(&b, bj->id);
	jset(&b, o, "date", jstr(&b, day_text(a, remind)));
	action(&b, acts, INS_ACT_SET_REMINDER, "Set a reminder", o);

	return emit(&b, out, INS_OVERDUE_RISK, arena_printf(a, "bill:%s", bj->id),
	    d < 0 ? SEV_HIGH : SEV_MEDIUM, bj->id, bj->account_id, bj->biller_id,
	    arena_printf(a, "This bill of %s %s.", amount(a, bj->total, bj), why), ev, acts);
}

/* ---- 5. new fee ---- */

/* a fee charged, with a name to compare */
static int
fee_line(const struct ins_item *it)
{
	return it->category != NULL && strcmp(it->category, "fee") == 0 && it->minor > 0 &&
	    nonempty(it->norm);
}

int
ins_rule_new_fee(struct arena *a, const struct ins_history *h, size_t j,
    struct ins_findings *out)
{
	const struct ins_thresholds *t = thresholds(h);
	const struct ins_bill *bj = &h->bills[j];
	const struct ins_item *it;
	struct json_object *ev, *acts, *o;
	struct jb b = { a, 0 };
	size_t *prev, *all, n, k, l, i;
	int seen;

	if (previous(a, h, j, count(t->baseline_min), &all) < count(t->baseline_min))
		return 0;
	n = previous(a, h, j, count(t->baseline_bills), &prev);
	for (k = 0; k < bj->nitems; k++) {
		it = &bj->items[k];
		if (!fee_line(it))
			continue;
		/* once per norm: its first fee line */
		for (seen = 0, l = 0; l < k && !seen; l++)
			seen = fee_line(&bj->items[l]) && same(bj->items[l].norm, it->norm);
		for (i = 0; i < n && !seen; i++)
			for (l = 0; l < h->bills[prev[i]].nitems && !seen; l++)
				seen = same(h->bills[prev[i]].items[l].norm, it->norm);
		if (seen)
			continue;

		ev = jobj(&b);
		jset(&b, ev, "bill_ids", jbill_ids(&b, h, NULL, 0, bj->id));
		jset(&b, ev, "description", jstr(&b, it->description));
		jset(&b, ev, "norm", jstr(&b, it->norm));
		jset(&b, ev, "amount", jmoney(&b, it->minor, bj));
		o = jobj(&b);
		jset(&b, o, "bill_ids", jbill_ids(&b, h, prev, n, NULL));
		jset(&b, o, "bills", jint(&b, (long long)n));
		jset(&b, ev, "baseline", o);
		o = jobj(&b);
		jset(&b, o, "baseline_bills", jint(&b, t->baseline_bills));
		jset(&b, o, "baseline_min", jint(&b, t->baseline_min));
		jset(&b, ev, "threshold", o);
		jset(&b, ev, "seen_before", jint(&b, 0));

		acts = jarr(&b);
		act_review(&b, acts, bj);
		o = pbill(&b, bj->id);
		jset(&b, o, "description", jstr(&b, it->description));
		jset(&b, o, "amount", jmoney(&b, it->minor, bj));
		action(&b, acts, INS_ACT_DISPUTE_CHARGE, "Dispute the fee", o);
		act_contact(&b, acts, bj->biller_id);

		if (emit(&b, out, INS_NEW_FEE, arena_printf(a, "fee:%s:%s", bj->id, it->norm),
		    SEV_MEDIUM, bj->id, bj->account_id, bj->biller_id,
		    arena_printf(a, "This bill charges a fee \"%s\" of %s that none of the "
		    "previous %zu %s had.", it->description ? it->description : it->norm,
		    amount(a, it->minor, bj), n, plural(n, "bill", "bills")), ev, acts) != 0)
			return -1;
	}
	return 0;
}

/* ---- 6. line item spike ---- */

/* The largest lines named norm of bills idx[0..n) into v, their bills
 * into with (both arena); their number. */
static size_t
line_history(struct arena *a, const struct ins_history *h, const size_t *idx, size_t n,
    const char *norm, double **v, size_t **with)
{
	const struct ins_item *it;
	size_t i, k = 0;

	*v = arena_alloc(a, (n ? n : 1) * sizeof(**v));
	*with = arena_alloc(a, (n ? n : 1) * sizeof(**with));
	for (i = 0; i < n; i++)
		if ((it = largest(&h->bills[idx[i]], norm)) != NULL) {
			(*v)[k] = (double)it->minor;
			(*with)[k++] = idx[i];
		}
	return k;
}

/* x above median m by more than spike_ratio × m and by more than units */
static int
spiked(const struct ins_thresholds *t, double x, double m, double units)
{
	return m > 0 && x - m > snap(t->spike_ratio * m) && x - m > units;
}

int
ins_rule_line_item_spike(struct arena *a, const struct ins_history *h, size_t j,
    struct ins_findings *out)
{
	const struct ins_thresholds *t = thresholds(h);
	const struct ins_bill *bj = &h->bills[j];
	const struct ins_item *it;
	struct json_object *ev, *acts, *o;
	struct jb b = { a, 0 };
	size_t *prev, *sea, *with, *swith, n, ns, nh, nsh = 0, k;
	double *v, *sv, x, m, sm = 0, units, last;
	long long u;
	int year, e, second;

	n = previous(a, h, j, count(t->baseline_bills), &prev);
	if (n == 0 || n < count(t->baseline_min))
		return 0;
	ns = seasonal(a, h, j, &sea, &year);
	for (u = t->spike_units, e = 0; e < bj->exponent; e++)
		u *= 10;
	units = (double)u;
	for (k = 0; k < bj->nitems; k++) {
		if (!nonempty(bj->items[k].norm) || !charge_line(&bj->items[k]) ||
		    norm_seen(bj, k))
			continue;
		it = largest(bj, bj->items[k].norm);
		x = (double)it->minor;
		nh = line_history(a, h, prev, n, it->norm, &v, &with);
		if (nh == 0 || nh < count(t->baseline_min))
			continue;
		last = v[nh - 1];
		m = median(v, nh);
		if (!spiked(t, x, m, units))
			continue;
		second = 0;
		if (year && ns > 0 &&
		    (nsh = line_history(a, h, sea, ns, it->norm, &sv, &swith)) > 0) {
			sm = median(sv, nsh);
			if (!spiked(t, x, sm, units))
				continue;
			second = 1;
		} else if (!spiked(t, x, last, units))
			continue;	/* no year yet: the line must step, not climb */

		ev = jobj(&b);
		jset(&b, ev, "bill_ids", jbill_ids(&b, h, NULL, 0, bj->id));
		jset(&b, ev, "description", jstr(&b, it->description));
		jset(&b, ev, "norm", jstr(&b, it->norm));
		jset(&b, ev, "amount", jmoney(&b, it->minor, bj));
		o = jobj(&b);
		jset(&b, o, "bill_ids", jbill_ids(&b, h, with, nh, NULL));
		jset(&b, o, "bills", jint(&b, (long long)nh));
		jset(&b, o, "median", jmoney(&b, dround(m), bj));
		jset(&b, ev, "baseline", o);
		if (second) {
			o = jobj(&b);
			jset(&b, o, "bill_ids", jbill_ids(&b, h, swith, nsh, NULL));
			jset(&b, o, "bills", jint(&b, (long long)nsh));
			jset(&b, o, "median", jmoney(&b, dround(sm), bj));
			jset(&b, ev, "seasonal_baseline", o);
		} else
			jset(&b, ev, "seasonal_baseline", NULL);
		o = jobj(&b);
		jset(&b, o, "ratio", jnum(&b, t->spike_ratio));
		jset(&b, o, "amount", jmoney(&b, u, bj));
		jset(&b, ev, "threshold", o);
		o = jobj(&b);
		jset(&b, o, "above_median", jmoney(&b, dround(x - m), bj));
		jset(&b, o, "ratio", jnum(&b, (x - m) / m));
		if (second) {
			jset(&b, o, "above_seasonal_median", jmoney(&b, dround(x - sm), bj));
			jset(&b, o, "seasonal_ratio", jnum(&b, (x - sm) / sm));
		}
		jset(&b, ev, "observed", o);

		acts = jarr(&b);
		act_review(&b, acts, bj);
		act_contact(&b, acts, bj->biller_id);

		if (emit(&b, out, INS_LINE_ITEM_SPIKE,
		    arena_printf(a, "item:%s:%s", bj->id, it->norm), SEV_MEDIUM, bj->id,
		    bj->account_id, bj->biller_id,
		    arena_printf(a, "The line \"%s\" of %s is %s above its median of %s over "
		    "%zu previous %s%s (the threshold is %s and %s).",
		    it->description ? it->description : it->norm, amount(a, it->minor, bj),
		    percent(a, (x - m) / m), amount(a, dround(m), bj), nh,
		    plural(nh, "bill", "bills"),
		    second ? arena_printf(a, " and %s above the same months a year earlier",
		    percent(a, (x - sm) / sm)) : "",
		    percent(a, t->spike_ratio), amount(a, u, bj)), ev, acts) != 0)
			return -1;
	}
	return 0;
}

/* ---- 7. usage anomaly ---- */

/* A quantity as the reasoning writes it: "130.25 kWh". */
static const char *
quantity(struct arena *a, double x, const char *unit)
{
	return nonempty(unit) ? arena_printf(a, "%s %s", num_text(a, x), unit) :
	    num_text(a, x);
}

/* The quantities of type in the last max bills of idx[0..n) that report
 * it (oldest first), into v and with (arena); their number. */
static size_t
usage_history(struct arena *a, const struct ins_history *h, const size_t *idx, size_t n,
    size_t max, const char *type, double **v, size_t **with)
{
	const struct ins_usage *us;
	size_t i, k = 0, l;
	double d;

	*v = arena_alloc(a, (n < max ? n + 1 : max + 1) * sizeof(**v));
	*with = arena_alloc(a, (n < max ? n + 1 : max + 1) * sizeof(**with));
	for (i = n; i-- > 0 && k < max;)
		if ((us = usage_of(&h->bills[idx[i]], type)) != NULL && isfinite(us->quantity)) {
			(*v)[k] = us->quantity;
			(*with)[k++] = idx[i];
		}
	for (i = 0; i < k / 2; i++) {
		d = (*v)[i];
		(*v)[i] = (*v)[k - 1 - i];
		(*v)[k - 1 - i] = d;
		l = (*with)[i];
		(*with)[i] = (*with)[k - 1 - i];
		(*with)[k - 1 - i] = l;
	}
	return k;
}

/*
 * The year-over-year changes of the quantities v[0..n) of bills with[0..n):
 * each less the quantity of type on the account's bill of 12 months before
 * it, where there is one, into *r (arena). Their number.
 */
static size_t
usage_yoy(struct arena *a, const struct ins_history *h, const size_t *with, const double *v,
    size_t n, const char *type, double **r)
{
	const struct ins_bill *bk;
	const struct ins_usage *us;
	size_t i, k, c = 0;

	*r = arena_alloc(a, (n + 1) * sizeof(**r));
	for (k = 0; k < n; k++) {
		bk = &h->bills[with[k]];
		for (i = with[k]; i-- > 0;)
			if (same_line(&h->bills[i], bk) && h->bills[i].month == bk->month - 12 &&
			    (us = usage_of(&h->bills[i], type)) != NULL &&
			    isfinite(us->quantity)) {
				(*r)[c++] = v[k] - us->quantity;
				break;
			}
	}
	return c;
}

/* The month-to-month changes of v[0..n) into *d (arena): n - 1 of them. */
static size_t
usage_steps(struct arena *a, const double *v, size_t n, double **d)
{
	size_t i;

	*d = arena_alloc(a, (n + 1) * sizeof(**d));
	for (i = 1; i < n; i++)
		(*d)[i - 1] = v[i] - v[i - 1];
	return n > 0 ? n - 1 : 0;
}

int
ins_rule_usage_anomaly(struct arena *a, const struct ins_history *h, size_t j,
    struct ins_findings *out)
{
	const struct ins_thresholds *t = thresholds(h);
	const struct ins_bill *bj = &h->bills[j];
	const struct ins_usage *us;
	struct json_object *ev, *acts, *o;
	struct jb b = { a, 0 };
	size_t *all, *sea, *with, *swith, nall, ns, nh, nsh, k, l;
	double *v, *sv, *r, *d, lv[3], q, m, sd, center, spread, lim, dev, level, last;
	size_t nr, nd;
	const char *dir, *over, *why;
	int year, dup, above;

	nall = previous(a, h, j, SIZE_MAX, &all);
	ns = seasonal(a, h, j, &sea, &year);
	for (k = 0; k < bj->nusage; k++) {
		us = &bj->usage[k];
		if (!nonempty(us->type) || !isfinite(us->quantity))
			continue;
		for (dup = 0, l = 0; l < k && !dup; l++)
			dup = same(bj->usage[l].type, us->type);
		if (dup)
			continue;
		q = us->quantity;
		nh = usage_history(a, h, all, nall, count(t->usage_bills), us->type, &v, &with);
		if (nh == 0 || nh < count(t->baseline_min))
			continue;
		nr = usage_yoy(a, h, with, v, nh, us->type, &r);
		nd = usage_steps(a, v, nh, &d);
		/* the level of the last (up to 3) readings */
		last = v[nh - 1];
		for (l = 0; l < 3 && l < nh; l++)
			lv[l] = v[nh - 1 - l];
		level = median(lv, l);
		m = median(v, nh);
		nsh = usage_history(a, h, sea, ns, SIZE_MAX, us->type, &sv, &swith);
		if (nsh > 0) {
			/* the season's level a year ago, and the spread of a
			 * year's changes (not the season's own swing) */
			center = median(sv, nsh);
			sd = nr >= count(t->baseline_min) ? MAD_SD * mad(a, r, nr, median(r, nr)) : 0;
		} else {
			/* no year yet: the level of the last readings, and the
			 * spread of a month's changes (a season moves it month
			 * by month; an anomaly at once) */
			center = level;
			sd = nd > 0 ? MAD_SD * mad(a, d, nd, median(d, nd)) : 0;
		}
		spread = dmax(sd, t->usage_floor * dabs(center));
		lim = t->usage_sds * spread;
		dev = dabs(q - center);
		if (spread == 0 ? q == center : !beyond(dev, lim))
			continue;
		/* ... and, with no year, at once: a step from the last reading
		 * beyond the floor's band around it */
		if (nsh == 0 && !beyond(dabs(q - last), t->usage_sds * t->usage_floor * dabs(last)))
			continue;
		above = q > center;
		dir = above ? "above" : "below";

		ev = jobj(&b);
		jset(&b, ev, "bill_ids", jbill_ids(&b, h, NULL, 0, bj->id));
		jset(&b, ev, "usage_type", jstr(&b, us->type));
		jset(&b, ev, "unit", jstr(&b, us->unit));
		jset(&b, ev, "quantity", jnum(&b, q));
		jset(&b, ev, "direction", jstr(&b, dir));
		o = jobj(&b);
		jset(&b, o, "bill_ids", jbill_ids(&b, h, with, nh, NULL));
		jset(&b, o, "bills", jint(&b, (long long)nh));
		jset(&b, o, "median", jnum(&b, m));
		jset(&b, o, "sd", jnum(&b, sd));
		if (nsh > 0)
			jset(&b, o, "seasonal_bill_ids", jbill_ids(&b, h, swith, nsh, NULL));
		jset(&b, o, "center", jnum(&b, center));
		jset(&b, o, "spread", jnum(&b, spread));
		jset(&b, ev, "baseline", o);
		o = jobj(&b);
		jset(&b, o, "sds", jnum(&b, t->usage_sds));
		jset(&b, o, "floor", jnum(&b, t->usage_floor));
		jset(&b, o, "deviation", jnum(&b, lim));
		jset(&b, ev, "threshold", o);
		jset(&b, ev, "deviation", jnum(&b, dev));
		jset(&b, ev, "sds", spread > 0 ? jnum(&b, dev / spread) : NULL);

		acts = jarr(&b);
		act_review(&b, acts, bj);
		act_contact(&b, acts, bj->biller_id);

		if (nsh > 0)
			over = "the same months a year earlier";
		else
			over = arena_printf(a, "the previous %zu %s", nh,
			    plural(nh, "bill", "bills"));
		if (spread > 0)
			why = arena_printf(a, "This bill's %s usage of %s is %s robust standard "
			    "deviations %s the usual %s of %s (the threshold is %s standard "
			    "deviations of %s).", us->type, quantity(a, q, us->unit),
			    num_text(a, (double)dround(dev / spread * 10) / 10), dir,
			    quantity(a, center, us->unit), over, num_text(a, t->usage_sds),
			    quantity(a, spread, us->unit));
		else
			why = arena_printf(a, "This bill's %s usage of %s is %s the usual %s, "
			    "which did not change over %s.", us->type, quantity(a, q, us->unit),
			    dir, quantity(a, center, us->unit), over);
		if (emit(&b, out, INS_USAGE_ANOMALY,
		    arena_printf(a, "usage:%s:%s", bj->id, us->type),
		    above ? SEV_MEDIUM : SEV_LOW, bj->id, bj->account_id, bj->biller_id, why,
		    ev, acts) != 0)
			return -1;
	}
	return 0;
}

/* ---- all of them ---- */

int
ins_evaluate(struct arena *a, const struct ins_history *h, struct ins_findings *out)
{
	static int (*const rules[])(struct arena *, const struct ins_history *, size_t,
	    struct ins_findings *) = {
		ins_rule_duplicate_charge,
		ins_rule_bill_anomaly,
		ins_rule_new_biller,
		ins_rule_overdue_risk,
		ins_rule_new_fee,
		ins_rule_line_item_spike,
		ins_rule_usage_anomaly,
	};
	size_t j, r;

	for (j = h->first_target; j < h->nbills; j++)
		for (r = 0; r < sizeof(rules) / sizeof(rules[0]); r++)
			if (rules[r](a, h, j, out) != 0)
				return -1;
	return ins_rule_duplicate_payments(a, h, out);
}

/*
 * The array itself is arena memory: it is forgotten, not freed, so that
 * findings put before their arena's reset start afresh in the next one.
 */
void
ins_findings_free(struct ins_findings *f)
{
	size_t i;

	if (f == NULL)
		return;
	for (i = 0; i < f->n; i++) {
		json_object_put(f->v[i].evidence);
		json_object_put(f->v[i].actions);
	}
	f->v = NULL;
	f->n = f->cap = 0;
}
