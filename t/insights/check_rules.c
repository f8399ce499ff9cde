/*
 * lib/insights/insights_rules.c: every rule at, just under and just over
 * its thresholds; the shape of what a finding says (one sentence, the
 * evidence's keys, actions only from the fixed list, no URL or command
 * anywhere); one finding per subject; the same input giving the same
 * bytes; the first target honoured; descriptions and days as the rules
 * read them.
 */
#include <stdio.h>
#include <string.h>

#include <check.h>
#include <json-c/json.h>

#include "core/arena.h"
#include "insights/insights_rules.h"
#include "tcheck.h"

#define N(x) (sizeof(x) / sizeof((x)[0]))

#define MAXBILLS	48
#define MAXITEMS	8
#define MAXUSAGE	4
#define MAXPAYS		8

#define DAY0		19737		/* 2024-01-15 */
#define MONTH0		(2024 * 12)	/* January 2024 */

/* The history being built, fresh for each test. */
static struct arena a;
static struct ins_bill bills[MAXBILLS];
static struct ins_item items[MAXBILLS][MAXITEMS];
static struct ins_usage usage[MAXBILLS][MAXUSAGE];
static struct ins_payment pays[MAXPAYS];
static struct ins_thresholds t;
static struct ins_history h;
static struct ins_findings f;

static void
setup(void)
{
	arena_init(&a);
	memset(bills, 0, sizeof(bills));
	memset(items, 0, sizeof(items));
	memset(usage, 0, sizeof(usage));
	memset(pays, 0, sizeof(pays));
	memset(&f, 0, sizeof(f));
	ins_thresholds_default(&t);
	memset(&h, 0, sizeof(h));
	h.bills = bills;
	h.payments = pays;
	h.today = DAY0 - 100;
	h.t = &t;
}

static void
teardown(void)
{
	ins_findings_free(&f);
	arena_free(&a);
}

/* A paid USD bill of the account "acc1" at Metro Power, the k-th month. */
static struct ins_bill *
bill(long long charges)
{
	struct ins_bill *b;
	size_t k = h.nbills++;

	ck_assert_uint_lt(k, MAXBILLS);
	b = &bills[k];
	b->id = arena_printf(&a, "bill%02zu", k);
	b->account_id = "acc1";
	b->biller_id = "biller1";
	b->biller_name = "Metro Power";
	b->status = "PAID";
	b->currency = "USD";
	b->exponent = 2;
	b->charges = b->total = charges;
	b->day = DAY0 + 30 * (int)k;
	b->due = INS_NO_DAY;
	b->month = MONTH0 + (int)k;
	b->items = items[k];
	b->usage = usage[k];
	return b;
}

static void
item(struct ins_bill *b, const char *description, const char *category, long long minor)
{
	struct ins_item *it = &items[b - bills][b->nitems++];

	ck_assert_uint_le(b->nitems, MAXITEMS);
	it->description = description;
	it->norm = ins_normalise(&a, description);
	it->category = category;
	it->minor = minor;
}

static void
use(struct ins_bill *b, const char *type, const char *unit, double quantity)
{
	struct ins_usage *u = &usage[b - bills][b->nusage++];

	ck_assert_uint_le(b->nusage, MAXUSAGE);
	u->type = type;
	u->unit = unit;
	u->quantity = quantity;
}

static struct ins_payment *
pay(const char *id, const char *bill_id, long long minor, int day)
{
	struct ins_payment *p = &pays[h.npayments++];

	ck_assert_uint_le(h.npayments, MAXPAYS);
	p->id = id;
	p->account_id = "acc1";
	p->bill_id = bill_id;
	p->currency = "USD";
	p->exponent = 2;
	p->minor = minor;
	p->day = day;
	return p;
}

static const char *
text(struct json_object *o)
{
	return json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
	    JSON_C_TO_STRING_NOSLASHESCAPE);
}

/* ---- the shape of every finding ---- */

static const char *const types[] = { INS_DUPLICATE_CHARGE, INS_BILL_ANOMALY,
	INS_NEW_BILLER, INS_OVERDUE_RISK, INS_NEW_FEE, INS_LINE_ITEM_SPIKE,
	INS_USAGE_ANOMALY, NULL };
static const char *const acts[] = { INS_ACT_REVIEW_BILL, INS_ACT_CONTACT_BILLER,
	INS_ACT_DISPUTE_CHARGE, INS_ACT_SET_REMINDER, INS_ACT_PAY_NOW, NULL };
static const char *const severities[] = { "low", "medium", "high", NULL };

static int
listed(const char *const *list, const char *s)
{
	for (; s != NULL && *list != NULL; list++)
		if (strcmp(*list, s) == 0)
			return 1;
	return 0;
}

/* nowhere a key "url" or "command", nor a value that is a link */
static void
no_links(struct json_object *o)
{
	size_t i;

	switch (json_object_get_type(o)) {
	case json_type_object: {
		json_object_object_foreach(o, k, v) {
			ck_assert_msg(strcmp(k, "url") != 0 && strcmp(k, "command") != 0,
			    "key %s in %s", k, text(o));
			no_links(v);
		}
		break;
	}
	case json_type_array:
		for (i = 0; i < json_object_array_length(o); i++)
			no_links(json_object_array_get_idx(o, i));
		break;
	case json_type_string:
		ck_assert_ptr_null(strstr(json_object_get_string(o), "://"));
		break;
	default:
		break;
	}
}

/* an amount: {"value": "<decimal>", "currency": "..."} */
static void
is_money(struct json_object *o)
{
	struct json_object *v;
	const char *s;

	ck_assert_msg(json_object_is_type(o, json_type_object), "no amount: %s", text(o));
	ck_assert(json_object_object_get_ex(o, "value", &v));
	ck_assert(json_object_is_type(v, json_type_string));
	for (s = json_object_get_string(v); *s != '\0'; s++)
		ck_assert_msg((*s >= '0' && *s <= '9') || *s == '.' || *s == '-', "%s", text(o));
	ck_assert(json_object_object_get_ex(o, "currency", &v));
	ck_assert_int_eq(json_object_object_length(o), 2);
}

static void
shape(const struct ins_finding *x)
{
	struct json_object *v, *act, *p;
	size_t i, len;
	const char *s;

	ck_assert_msg(listed(types, x->type), "type %s", x->type);
	ck_assert_msg(listed(severities, x->severity), "severity %s", x->severity);
	ck_assert_ptr_nonnull(x->subject);
	/* one sentence: a capital, one full stop at the end, no line break */
	s = x->reasoning;
	ck_assert_ptr_nonnull(s);
	len = strlen(s);
	ck_assert_msg(len > 10 && s[0] >= 'A' && s[0] <= 'Z' && s[len - 1] == '.' &&
	    strchr(s, '\n') == NULL && strpbrk(s, "0123456789") != NULL, "reasoning: %s", s);
	for (i = 0; i + 2 < len; i++)
		ck_assert_msg(!(s[i] == '.' && s[i + 1] == ' ' && s[i + 2] >= 'A' &&
		    s[i + 2] <= 'Z'), "two sentences: %s", s);
	ck_assert_msg(strstr(s, "%%") == NULL && strstr(s, "(null)") == NULL, "%s", s);

	ck_assert(json_object_is_type(x->evidence, json_type_object));
	ck_assert_msg(json_object_object_get_ex(x->evidence, "bill_ids", &v) &&
	    json_object_is_type(v, json_type_array), "bill_ids: %s", text(x->evidence));
	if (x->bill_id != NULL)
		ck_assert_msg(strstr(text(v), x->bill_id) != NULL, "%s", text(v));
	ck_assert_msg(json_object_object_get_ex(x->evidence, "baseline", &v),
	    "baseline: %s", text(x->evidence));
	ck_assert_msg(json_object_object_get_ex(x->evidence, "threshold", &v) &&
	    json_object_is_type(v, json_type_object), "threshold: %s", text(x->evidence));
	no_links(x->evidence);

	ck_assert(json_object_is_type(x->actions, json_type_array));
	ck_assert_uint_gt(json_object_array_length(x->actions), 0);
	for (i = 0; i < json_object_array_length(x->actions); i++) {
		act = json_object_array_get_idx(x->actions, i);
		ck_assert_int_eq(json_object_object_length(act), 3);
		ck_assert(json_object_object_get_ex(act, "action_type", &v));
		ck_assert_msg(listed(acts, json_object_get_string(v)), "%s", text(act));
		ck_assert(json_object_object_get_ex(act, "label", &v) &&
		    json_object_is_type(v, json_type_string));
		ck_assert(json_object_object_get_ex(act, "params", &p) &&
		    json_object_is_type(p, json_type_object));
		if (json_object_object_get_ex(p, "amount", &v))
			is_money(v);
	}
	no_links(x->actions);
}

/* the findings so far: every one well formed, no (type, subject) twice */
static size_t
checked(void)
{
	size_t i, k;

	for (i = 0; i < f.n; i++) {
		shape(&f.v[i]);
		for (k = 0; k < i; k++)
			ck_assert_msg(strcmp(f.v[i].type, f.v[k].type) != 0 ||
			    strcmp(f.v[i].subject, f.v[k].subject) != 0, "twice: %s %s",
			    f.v[i].type, f.v[i].subject);
	}
	return f.n;
}

/* One rule on the last bill: the number of findings. */
static size_t
judge(int (*rule)(struct arena *, const struct ins_history *, size_t, struct ins_findings *))
{
	ins_findings_free(&f);
	ck_assert_uint_gt(h.nbills, 0);
	ck_assert_int_eq(rule(&a, &h, h.nbills - 1, &f), 0);
	return checked();
}

static size_t
evaluate(void)
{
	ins_findings_free(&f);
	ck_assert_int_eq(ins_evaluate(&a, &h, &f), 0);
	return checked();
}

static const struct ins_finding *
found(const char *type, const char *subject)
{
	size_t i;

	for (i = 0; i < f.n; i++)
		if (strcmp(f.v[i].type, type) == 0 && strcmp(f.v[i].subject, subject) == 0)
			return &f.v[i];
	return NULL;
}

static const struct ins_finding *
must(const char *type, const char *subject)
{
	const struct ins_finding *x = found(type, subject);

	ck_assert_msg(x != NULL, "no %s %s among %zu findings", type, subject, f.n);
	return x;
}

/* evidence[key] (a path "a.b") as JSON text */
static const char *
ev(const struct ins_finding *x, const char *path)
{
	struct json_object *o = x->evidence;
	char key[64];
	const char *p = path, *dot;

	while (p != NULL) {
		dot = strchr(p, '.');
		snprintf(key, sizeof(key), "%.*s", dot ? (int)(dot - p) : (int)strlen(p), p);
		ck_assert_msg(json_object_object_get_ex(o, key, &o), "no %s in %s", path,
		    text(x->evidence));
		p = dot ? dot + 1 : NULL;
	}
	return text(o);
}

/* the params of the finding's action of type, as JSON text */
static const char *
params(const struct ins_finding *x, const char *type)
{
	struct json_object *act, *v;
	size_t i;

	for (i = 0; i < json_object_array_length(x->actions); i++) {
		act = json_object_array_get_idx(x->actions, i);
		json_object_object_get_ex(act, "action_type", &v);
		if (strcmp(json_object_get_string(v), type) == 0) {
			json_object_object_get_ex(act, "params", &v);
			return text(v);
		}
	}
	ck_abort_msg("no action %s in %s", type, text(x->actions));
	return NULL;
}

/* ---- 1. duplicate charges ---- */

static const struct {
	int		 apart;		/* days after the first */
	long long	 second;	/* the second bill's total */
	const char	*account;	/* the second's account */
	const char	*currency;
	int		 fires;
} dup_bills[] = {
	{ 0, 10000, "acc1", "USD", 1 },
	{ 5, 10000, "acc1", "USD", 1 },		/* duplicate_days: at */
	{ 6, 10000, "acc1", "USD", 0 },		/* just over */
	{ 4, 10001, "acc1", "USD", 0 },		/* a minor unit more */
	{ 4, 9999, "acc1", "USD", 0 },
	{ 4, 10000, "acc2", "USD", 0 },		/* another account */
	{ 4, 10000, "acc1", "EUR", 0 },		/* another currency */
};

START_TEST(duplicate_bills)
{
	struct ins_bill *b;
	const struct ins_finding *x;

	bill(10000);
	b = bill(dup_bills[_i].second);
	b->day = bills[0].day + dup_bills[_i].apart;
	b->account_id = dup_bills[_i].account;
	b->currency = dup_bills[_i].currency;
	if (!dup_bills[_i].fires) {
		ck_assert_uint_eq(judge(ins_rule_duplicate_charge), 0);
		return;
	}
	ck_assert_uint_eq(judge(ins_rule_duplicate_charge), 1);
	x = must(INS_DUPLICATE_CHARGE, "bills:bill00:bill01");
	ck_assert_str_eq(x->severity, "high");
	ck_assert_str_eq(x->bill_id, "bill01");
	ck_assert_str_eq(x->account_id, "acc1");
	ck_assert_str_eq(x->biller_id, "biller1");
	ck_assert_str_eq(ev(x, "bill_ids"), "[\"bill00\",\"bill01\"]");
	ck_assert_str_eq(ev(x, "amount"), "{\"value\":\"100.00\",\"currency\":\"USD\"}");
	ck_assert_str_eq(ev(x, "threshold.duplicate_days"), "5");
	ck_assert_str_eq(ev(x, "days_apart"), arena_printf(&a, "%d", dup_bills[_i].apart));
	ck_assert_str_eq(params(x, INS_ACT_DISPUTE_CHARGE), "{\"bill_id\":\"bill01\","
	    "\"amount\":{\"value\":\"100.00\",\"currency\":\"USD\"}}");
	ck_assert_str_eq(params(x, INS_ACT_CONTACT_BILLER), "{\"biller_id\":\"biller1\"}");
	ck_assert_str_eq(params(x, INS_ACT_REVIEW_BILL), "{\"bill_id\":\"bill01\"}");
	ck_assert_msg(strstr(x->reasoning, "100.00 USD") != NULL, "%s", x->reasoning);
}
END_TEST

/* no account on either counts as the same; nothing of nothing */
START_TEST(duplicate_bills_edges)
{
	struct ins_bill *b;

	bill(10000)->account_id = NULL;
	bill(10000)->account_id = NULL;
	bills[1].day = bills[0].day + 1;
	ck_assert_uint_eq(judge(ins_rule_duplicate_charge), 1);
	must(INS_DUPLICATE_CHARGE, "bills:bill00:bill01");
	ck_assert_ptr_null(found(INS_DUPLICATE_CHARGE, "bills:bill00:bill01")->account_id);

	/* one NULL, one not: not the same account */
	bills[0].account_id = "acc1";
	ck_assert_uint_eq(judge(ins_rule_duplicate_charge), 0);

	/* a total of zero is no charge */
	bills[0].account_id = bills[1].account_id = "acc1";
	bills[0].total = bills[1].total = 0;
	ck_assert_uint_eq(judge(ins_rule_duplicate_charge), 0);

	/* the earlier of a pair is not judged against the later one */
	bills[0].total = bills[1].total = 10000;
	ck_assert_uint_eq(judge(ins_rule_duplicate_charge), 1);
	ins_findings_free(&f);
	ck_assert_int_eq(ins_rule_duplicate_charge(&a, &h, 0, &f), 0);
	ck_assert_uint_eq(f.n, 0);
	/* nor against a later bill of another total */
	b = bill(5000);
	b->day = bills[1].day + 1;
	ck_assert_uint_eq(judge(ins_rule_duplicate_charge), 0);
}
END_TEST

/* the nearest earlier bill of the same total is the pair */
START_TEST(duplicate_bills_nearest)
{
	bill(10000);
	bill(10000)->day = bills[0].day + 3;
	bill(10000)->day = bills[0].day + 5;
	ck_assert_uint_eq(judge(ins_rule_duplicate_charge), 1);
	must(INS_DUPLICATE_CHARGE, "bills:bill01:bill02");
	/* every bill judged: two pairs, each once */
	ck_assert_uint_eq(evaluate(), 2);
	must(INS_DUPLICATE_CHARGE, "bills:bill00:bill01");
	must(INS_DUPLICATE_CHARGE, "bills:bill01:bill02");
}
END_TEST

static const struct {
	const char	*desc1, *cat1;
	long long	 minor1;
	const char	*desc2, *cat2;
	long long	 minor2;
	const char	*subject;	/* NULL: nothing */
} dup_lines[] = {
	{ "Service charge", "fee", 500, "Service charge", "fee", 500,
	  "line:bill00:service charge" },
	/* the same line under its month's name */
	{ "Meter fee - Oct 2026", "fee", 500, "METER FEE (October)", "other", 500,
	  "line:bill00:meter fee" },
	{ "Service charge", "fee", 500, "Service charge", "fee", 501, NULL },
	{ "Service charge", "fee", 500, "Service charges", "fee", 500, NULL },
	{ "Refund", "credit", 500, "Refund", "credit", 500, NULL },
	{ "Refund", "adjustment", 500, "Refund", "fee", 500, NULL },
	{ "Service charge", "fee", 0, "Service charge", "fee", 0, NULL },
	{ "12/2026", "fee", 500, "12/2026", "fee", 500, NULL },	/* no words */
};

START_TEST(duplicate_lines)
{
	struct ins_bill *b = bill(10000);
	const struct ins_finding *x;

	item(b, dup_lines[_i].desc1, dup_lines[_i].cat1, dup_lines[_i].minor1);
	item(b, "Energy", "usage", 9000);
	item(b, dup_lines[_i].desc2, dup_lines[_i].cat2, dup_lines[_i].minor2);
	if (dup_lines[_i].subject == NULL) {
		ck_assert_uint_eq(judge(ins_rule_duplicate_charge), 0);
		return;
	}
	ck_assert_uint_eq(judge(ins_rule_duplicate_charge), 1);
	x = must(INS_DUPLICATE_CHARGE, dup_lines[_i].subject);
	ck_assert_str_eq(x->severity, "high");
	ck_assert_str_eq(x->bill_id, "bill00");
	ck_assert_str_eq(ev(x, "amount"), "{\"value\":\"5.00\",\"currency\":\"USD\"}");
	ck_assert_str_eq(ev(x, "lines"), "2");
	ck_assert_msg(strstr(params(x, INS_ACT_DISPUTE_CHARGE), "\"bill_id\":\"bill00\"") !=
	    NULL, "%s", params(x, INS_ACT_DISPUTE_CHARGE));
}
END_TEST

/* three times, and two norms: one finding per norm */
START_TEST(duplicate_lines_once)
{
	struct ins_bill *b = bill(10000);

	item(b, "Service charge", "fee", 500);
	item(b, "Meter fee", "fee", 300);
	item(b, "Service charge", "fee", 500);
	item(b, "Service charge", "fee", 500);
	item(b, "Meter fee", "fee", 300);
	ck_assert_uint_eq(judge(ins_rule_duplicate_charge), 2);
	ck_assert_str_eq(f.v[0].subject, "line:bill00:service charge");
	ck_assert_str_eq(f.v[1].subject, "line:bill00:meter fee");
	ck_assert_str_eq(ev(&f.v[0], "lines"), "3");
}
END_TEST

static const struct {
	int		 apart;
	long long	 second;
	const char	*currency;
	const char	*bill_p, *bill_q;
	const char	*bill_id;	/* the finding's; "-": nothing found */
} dup_pays[] = {
	{ 0, 5000, "USD", "bill01", "bill01", "bill01" },
	{ 5, 5000, "USD", "bill01", "bill01", "bill01" },
	{ 6, 5000, "USD", "bill01", "bill01", "-" },
	{ 2, 5001, "USD", "bill01", "bill01", "-" },
	{ 2, 5000, "EUR", "bill01", "bill01", "-" },
	{ 2, 5000, "USD", "bill00", NULL, "bill00" },	/* q's bill, else p's */
	{ 2, 5000, "USD", NULL, NULL, NULL },
	/* matched to two bills: each paid its own (a flat plan's late
	 * payment and the next bill's early one) */
	{ 2, 5000, "USD", "bill00", "bill01", "-" },
};

START_TEST(duplicate_payments)
{
	const struct ins_finding *x;
	struct ins_payment *q;

	bill(5000);
	bill(5000);
	pay("pay1", dup_pays[_i].bill_p, 5000, DAY0 + 40);
	q = pay("pay2", dup_pays[_i].bill_q, dup_pays[_i].second, DAY0 + 40 + dup_pays[_i].apart);
	q->currency = dup_pays[_i].currency;
	ins_findings_free(&f);
	ck_assert_int_eq(ins_rule_duplicate_payments(&a, &h, &f), 0);
	if (dup_pays[_i].bill_id != NULL && strcmp(dup_pays[_i].bill_id, "-") == 0) {
		ck_assert_uint_eq(checked(), 0);
		return;
	}
	ck_assert_uint_eq(checked(), 1);
	x = must(INS_DUPLICATE_CHARGE, "payments:pay1:pay2");
	ck_assert_str_eq(x->severity, "high");
	if (dup_pays[_i].bill_id == NULL) {
		ck_assert_ptr_null(x->bill_id);
		ck_assert_str_eq(ev(x, "bill_ids"), "[]");
	} else
		ck_assert_str_eq(x->bill_id, dup_pays[_i].bill_id);
	ck_assert_str_eq(x->account_id, "acc1");
	ck_assert_str_eq(x->biller_id, "biller1");
	ck_assert_str_eq(ev(x, "payment_ids"), "[\"pay1\",\"pay2\"]");
	ck_assert_str_eq(ev(x, "amount"), "{\"value\":\"50.00\",\"currency\":\"USD\"}");
	ck_assert_str_eq(ev(x, "days_apart"), arena_printf(&a, "%d", dup_pays[_i].apart));
}
END_TEST

/* each payment in one pair at most; another account's is no pair */
START_TEST(duplicate_payments_pairs)
{
	bill(5000);
	pay("p1", NULL, 5000, DAY0);
	pay("p2", NULL, 5000, DAY0 + 1);
	pay("p3", NULL, 5000, DAY0 + 2);
	ins_findings_free(&f);
	ck_assert_int_eq(ins_rule_duplicate_payments(&a, &h, &f), 0);
	ck_assert_uint_eq(checked(), 1);
	must(INS_DUPLICATE_CHARGE, "payments:p1:p2");

	pay("p4", NULL, 5000, DAY0 + 3);
	ins_findings_free(&f);
	ck_assert_int_eq(ins_rule_duplicate_payments(&a, &h, &f), 0);
	ck_assert_uint_eq(checked(), 2);
	must(INS_DUPLICATE_CHARGE, "payments:p3:p4");

	pays[3].account_id = "acc2";
	pays[3].minor = 0;
	ins_findings_free(&f);
	ck_assert_int_eq(ins_rule_duplicate_payments(&a, &h, &f), 0);
	ck_assert_uint_eq(checked(), 1);

	/* ins_evaluate runs it once, after the bills */
	ck_assert_uint_eq(evaluate(), 1);
	must(INS_DUPLICATE_CHARGE, "payments:p1:p2");
}
END_TEST

/* ---- 2. bill anomaly ---- */

static const struct {
	size_t		 n;
	long long	 history[8];
	long long	 charges;
	const char	*severity;	/* NULL: nothing */
} anomalies[] = {
	/* flat: 30% of the median is the threshold (MAD 0) */
	{ 6, { 10000, 10000, 10000, 10000, 10000, 10000 }, 13000, NULL },
	{ 6, { 10000, 10000, 10000, 10000, 10000, 10000 }, 13001, "medium" },
	{ 6, { 10000, 10000, 10000, 10000, 10000, 10000 }, 19999, "medium" },
	{ 6, { 10000, 10000, 10000, 10000, 10000, 10000 }, 20000, "high" },
	/* below the median is no anomaly */
	{ 6, { 10000, 10000, 10000, 10000, 10000, 10000 }, 100, NULL },
	/* a median of 81.20: 30% is 24.36 */
	{ 4, { 8120, 8120, 8120, 8120 }, 10556, NULL },
	{ 4, { 8120, 8120, 8120, 8120 }, 10557, "medium" },
	/* spread out: 3 MADs (60.00) win over 30% (30.00) */
	{ 6, { 8000, 12000, 8000, 12000, 10000, 10000 }, 14000, NULL },
	{ 6, { 8000, 12000, 8000, 12000, 10000, 10000 }, 16000, NULL },
	{ 6, { 8000, 12000, 8000, 12000, 10000, 10000 }, 16001, "medium" },
	/* an even count: the median is the mean of the middle two (100.00) */
	{ 4, { 9000, 11000, 11000, 9000 }, 13000, NULL },
	{ 4, { 9000, 11000, 11000, 9000 }, 13001, "medium" },
	/* no year of history: a climb is no anomaly, the bill must step
	 * above the bill before it by as much (median 112.50, 30% 33.75) */
	{ 6, { 10000, 10500, 11000, 11500, 12000, 12500 }, 14700, NULL },
	{ 6, { 10000, 10500, 11000, 11500, 12000, 12500 }, 15875, NULL },
	{ 6, { 10000, 10500, 11000, 11500, 12000, 12000 }, 15875, "medium" },
	/* three bills are a baseline, two are not */
	{ 3, { 10000, 10000, 10000 }, 50000, "high" },
	{ 2, { 10000, 10000 }, 50000, NULL },
	/* a median of zero is no baseline */
	{ 4, { 0, 0, 0, 0 }, 50000, NULL },
};

START_TEST(bill_anomaly)
{
	const struct ins_finding *x;
	size_t k;

	for (k = 0; k < anomalies[_i].n; k++)
		bill(anomalies[_i].history[k]);
	bill(anomalies[_i].charges);
	if (anomalies[_i].severity == NULL) {
		ck_assert_uint_eq(judge(ins_rule_bill_anomaly), 0);
		return;
	}
	ck_assert_uint_eq(judge(ins_rule_bill_anomaly), 1);
	x = must(INS_BILL_ANOMALY, arena_printf(&a, "bill:%s", bills[k].id));
	ck_assert_str_eq(x->severity, anomalies[_i].severity);
	ck_assert_str_eq(x->bill_id, bills[k].id);
	ck_assert_str_eq(ev(x, "baseline.bills"), arena_printf(&a, "%zu", k));
	ck_assert_str_eq(ev(x, "seasonal_baseline"), "null");
	ck_assert_str_eq(ev(x, "threshold.ratio"), "0.3");
	ck_assert_str_eq(ev(x, "threshold.mads"), "3");
	ck_assert_str_eq(params(x, INS_ACT_REVIEW_BILL),
	    arena_printf(&a, "{\"bill_id\":\"%s\"}", bills[k].id));
	ck_assert_str_eq(params(x, INS_ACT_CONTACT_BILLER), "{\"biller_id\":\"biller1\"}");
}
END_TEST

/* the sentence names the charges, the share, the median and the threshold */
START_TEST(bill_anomaly_reasoning)
{
	const struct ins_finding *x;
	int k;

	for (k = 0; k < 6; k++)
		bill(8120);
	bill(12345);
	ck_assert_uint_eq(judge(ins_rule_bill_anomaly), 1);
	x = must(INS_BILL_ANOMALY, "bill:bill06");
	ck_assert_str_eq(x->reasoning, "This bill's charges of 123.45 USD are 52% above "
	    "the median of 81.20 USD of the previous 6 bills (the threshold is 30%).");
	ck_assert_str_eq(ev(x, "charges"), "{\"value\":\"123.45\",\"currency\":\"USD\"}");
	ck_assert_str_eq(ev(x, "baseline.median"), "{\"value\":\"81.20\",\"currency\":\"USD\"}");
	ck_assert_str_eq(ev(x, "baseline.bill_ids"), "[\"bill00\",\"bill01\",\"bill02\","
	    "\"bill03\",\"bill04\",\"bill05\"]");
	ck_assert_str_eq(ev(x, "threshold.amount"), "{\"value\":\"24.36\",\"currency\":\"USD\"}");
	ck_assert_str_eq(ev(x, "observed.above_median"),
	    "{\"value\":\"42.25\",\"currency\":\"USD\"}");
}
END_TEST

/* when 3 MADs are the larger threshold, the sentence says so */
START_TEST(bill_anomaly_reasoning_mads)
{
	static const long long history[] = { 8000, 12000, 8000, 12000, 10000, 10000 };
	size_t k;

	for (k = 0; k < N(history); k++)
		bill(history[k]);
	bill(16001);
	ck_assert_uint_eq(judge(ins_rule_bill_anomaly), 1);
	ck_assert_str_eq(f.v[0].reasoning, "This bill's charges of 160.01 USD are 60% above "
	    "the median of 100.00 USD of the previous 6 bills (the threshold is 3 MADs, "
	    "60.00 USD).");
	ck_assert_str_eq(ev(&f.v[0], "baseline.mad"), "{\"value\":\"20.00\",\"currency\":\"USD\"}");
}
END_TEST

/* only the last baseline_bills previous bills of the same account and
 * currency are the baseline */
START_TEST(bill_anomaly_baseline)
{
	struct ins_bill *b;
	int k;

	for (k = 0; k < 6; k++)
		bill(100000);		/* long ago: not read */
	for (k = 0; k < 6; k++) {
		bill(10000);
		b = bill(900000);	/* another account's, between them */
		b->account_id = "acc2";
		b = bill(1);		/* another currency's */
		b->currency = "EUR";
	}
	bill(13001);
	ck_assert_uint_eq(judge(ins_rule_bill_anomaly), 1);
	ck_assert_str_eq(ev(&f.v[0], "baseline.bills"), "6");
	bills[h.nbills - 1].charges = 13000;
	ck_assert_uint_eq(judge(ins_rule_bill_anomaly), 0);

	/* a longer baseline reaches the old bills: four leave the median,
	 * six move it to 550.00 */
	bills[h.nbills - 1].charges = 13001;
	t.baseline_bills = 10;
	ck_assert_uint_eq(judge(ins_rule_bill_anomaly), 1);
	ck_assert_str_eq(ev(&f.v[0], "baseline.bills"), "10");
	t.baseline_bills = 12;
	ck_assert_uint_eq(judge(ins_rule_bill_anomaly), 0);
}
END_TEST

/*
 * A seasonal biller: last winter's bills were high, so this winter's high
 * bill is no anomaly, though it is far above the summer's.
 */
static void
seasons(long long winter)
{
	int k;

	/* January..March 2024: winter */
	bill(20000);
	bill(19000);
	bill(10000);
	for (k = 3; k < 13; k++)	/* April 2024 .. January 2025 */
		bill(10000);
	bill(winter);			/* February 2025 */
}

START_TEST(bill_anomaly_seasonal)
{
	const struct ins_finding *x;

	/* 95% above the last 6 bills, 2.6% above last winter's median (190.00) */
	seasons(19500);
	ck_assert_uint_eq(judge(ins_rule_bill_anomaly), 0);

	/* past last winter's too */
	bills[13].charges = 24700;
	ck_assert_uint_eq(judge(ins_rule_bill_anomaly), 0);
	bills[13].charges = 24701;
	ck_assert_uint_eq(judge(ins_rule_bill_anomaly), 1);
	x = must(INS_BILL_ANOMALY, "bill:bill13");
	ck_assert_str_eq(x->severity, "high");
	ck_assert_str_eq(ev(x, "seasonal_baseline.median"),
	    "{\"value\":\"190.00\",\"currency\":\"USD\"}");
	ck_assert_str_eq(ev(x, "seasonal_baseline.bill_ids"),
	    "[\"bill00\",\"bill01\",\"bill02\"]");
	ck_assert_msg(strstr(x->reasoning, "a year earlier") != NULL, "%s", x->reasoning);
}
END_TEST

START_TEST(bill_anomaly_no_season)
{
	int k;

	/* last winter's bills all of month - 11: less than a year of history,
	 * the second test is not run */
	seasons(19500);
	bills[0].month = bills[1].month = bills[2].month;
	ck_assert_uint_eq(judge(ins_rule_bill_anomaly), 1);
	ck_assert_str_eq(ev(&f.v[0], "seasonal_baseline"), "null");
	/* one of month - 12: a year */
	bills[0].month = bills[2].month - 1;
	ck_assert_uint_eq(judge(ins_rule_bill_anomaly), 0);

	/* a year of history, but no bill of the same months a year earlier */
	teardown();
	setup();
	bill(20000);		/* January 2024 */
	for (k = 0; k < 12; k++)
		bill(10000);
	bills[1].month = bills[2].month = bills[3].month = MONTH0 + 4;
	bill(19500)->month = MONTH0 + 14;	/* March 2025: months 1..3 have none */
	ck_assert_uint_eq(judge(ins_rule_bill_anomaly), 1);
	ck_assert_str_eq(ev(&f.v[0], "seasonal_baseline"), "null");
}
END_TEST

/*
 * A configured ratio binary does not hold: 0.35 × 110.00 is a hair below
 * 38.50 in doubles, yet a bill exactly 35% above is not more than 35% above.
 */
START_TEST(configured_ratio)
{
	struct ins_bill *b;
	int k;

	t.anomaly_ratio = 0.35;
	t.spike_ratio = 0.35;
	for (k = 0; k < 3; k++)
		item(bill(11000), "Meter fee", "fee", 2800);
	b = bill(14850);
	item(b, "Meter fee", "fee", 3780);
	ck_assert_uint_eq(judge(ins_rule_bill_anomaly), 0);
	ck_assert_uint_eq(judge(ins_rule_line_item_spike), 0);
	b->charges = 14851;
	items[3][0].minor = 3781;
	ck_assert_uint_eq(judge(ins_rule_bill_anomaly), 1);
	ck_assert_str_eq(ev(&f.v[0], "threshold.amount"),
	    "{\"value\":\"38.50\",\"currency\":\"USD\"}");
	ck_assert_str_eq(ev(&f.v[0], "threshold.ratio"), "0.35");
	ck_assert_uint_eq(judge(ins_rule_line_item_spike), 1);
}
END_TEST

/* no year of history: a rise the usage explains is not the bill's anomaly */
START_TEST(bill_anomaly_usage)
{
	struct ins_bill *b;
	int k;

	for (k = 0; k < 6; k++)
		use(bill(10000), "electricity", "kWh", 100);
	b = bill(14000);
	use(b, "electricity", "kWh", 140);	/* usage +40%, charges +40% */
	ck_assert_uint_eq(judge(ins_rule_bill_anomaly), 0);
	usage[6][0].quantity = 100;		/* the same usage: the bill's */
	ck_assert_uint_eq(judge(ins_rule_bill_anomaly), 1);
	usage[6][0].quantity = 131;		/* 31% more usage, charges 40%: */
	ck_assert_uint_eq(judge(ins_rule_bill_anomaly), 0);	/* within 30% of it */
	bills[6].charges = bills[6].total = 30000;	/* charges x3: beyond it */
	ck_assert_uint_eq(judge(ins_rule_bill_anomaly), 1);
}
END_TEST

/* ---- 3. new biller ---- */

START_TEST(new_biller)
{
	const struct ins_finding *x;

	bill(10000);
	bill(12000);
	h.first_bill_of_biller = "bill01";
	ck_assert_uint_eq(judge(ins_rule_new_biller), 1);
	x = must(INS_NEW_BILLER, "biller:biller1");
	ck_assert_str_eq(x->severity, "low");
	ck_assert_str_eq(x->bill_id, "bill01");
	ck_assert_msg(strstr(x->reasoning, "Metro Power") != NULL, "%s", x->reasoning);
	ck_assert_str_eq(params(x, INS_ACT_REVIEW_BILL), "{\"bill_id\":\"bill01\"}");
	ck_assert_uint_eq(json_object_array_length(x->actions), 1);

	h.first_bill_of_biller = "bill00";
	ck_assert_uint_eq(judge(ins_rule_new_biller), 0);
	h.first_bill_of_biller = NULL;
	ck_assert_uint_eq(judge(ins_rule_new_biller), 0);
}
END_TEST

/* ---- 4. overdue risk ---- */

static const struct {
	int		 to_due;	/* due - today; INS_NO_DAY: no due date */
	const char	*status;
	const char	*severity;	/* NULL: nothing */
	const char	*words;		/* in the reasoning */
	int		 remind;	/* the reminder, days from today */
} overdue[] = {
	{ 4, "PENDING", NULL, NULL, 0 },
	{ 3, "PENDING", "medium", "due in 3 days", 2 },
	{ 1, "PENDING", "medium", "due in 1 day,", 0 },
	{ 0, "PENDING", "medium", "due today", 0 },
	{ -1, "PENDING", "high", "past due by 1 day", 0 },
	{ -40, "PENDING", "high", "past due by 40 days", 0 },
	{ 2, "PARTIALLY_PAID", "medium", "due in 2 days", 1 },
	{ -1, "PARTIALLY_PAID", "high", "past due", 0 },
	{ 2, "PAID", NULL, NULL, 0 },
	{ -10, "PAID", NULL, NULL, 0 },
	{ INS_NO_DAY, "PENDING", NULL, NULL, 0 },
};

START_TEST(overdue_risk)
{
	struct ins_bill *b = bill(12345);
	const struct ins_finding *x;
	int day;

	h.today = DAY0 + 10;
	b->status = overdue[_i].status;
	b->due = overdue[_i].to_due == INS_NO_DAY ? INS_NO_DAY : h.today + overdue[_i].to_due;
	b->total = 12345;
	if (overdue[_i].severity == NULL) {
		ck_assert_uint_eq(judge(ins_rule_overdue_risk), 0);
		return;
	}
	ck_assert_uint_eq(judge(ins_rule_overdue_risk), 1);
	x = must(INS_OVERDUE_RISK, "bill:bill00");
	ck_assert_str_eq(x->severity, overdue[_i].severity);
	ck_assert_msg(strstr(x->reasoning, overdue[_i].words) != NULL, "%s", x->reasoning);
	ck_assert_msg(strstr(x->reasoning, "123.45 USD") != NULL, "%s", x->reasoning);
	ck_assert_str_eq(params(x, INS_ACT_PAY_NOW), "{\"bill_id\":\"bill00\","
	    "\"amount\":{\"value\":\"123.45\",\"currency\":\"USD\"}}");
	/* 2024-01-25 is today */
	ck_assert_int_eq(ins_day("2024-01-25", &day), 0);
	ck_assert_int_eq(day, h.today);
	ck_assert_str_eq(params(x, INS_ACT_SET_REMINDER), arena_printf(&a,
	    "{\"bill_id\":\"bill00\",\"date\":\"2024-01-%02d\"}", 25 + overdue[_i].remind));
	ck_assert_str_eq(ev(x, "days_to_due"), arena_printf(&a, "%d", overdue[_i].to_due));
	ck_assert_str_eq(ev(x, "threshold.overdue_days"), "3");
}
END_TEST

/* ---- 5. new fee ---- */

START_TEST(new_fee)
{
	const struct ins_finding *x;
	struct ins_bill *b;
	int k;

	for (k = 0; k < 3; k++)
		item(bill(10000), "Service charge", "fee", 500);
	b = bill(10700);
	item(b, "Service charge", "fee", 500);
	item(b, "Late payment fee - Oct 2026", "fee", 700);
	ck_assert_uint_eq(judge(ins_rule_new_fee), 1);
	x = must(INS_NEW_FEE, "fee:bill03:late payment fee");
	ck_assert_str_eq(x->severity, "medium");
	ck_assert_str_eq(ev(x, "amount"), "{\"value\":\"7.00\",\"currency\":\"USD\"}");
	ck_assert_str_eq(ev(x, "baseline.bill_ids"), "[\"bill00\",\"bill01\",\"bill02\"]");
	ck_assert_str_eq(params(x, INS_ACT_DISPUTE_CHARGE), "{\"bill_id\":\"bill03\","
	    "\"description\":\"Late payment fee - Oct 2026\","
	    "\"amount\":{\"value\":\"7.00\",\"currency\":\"USD\"}}");
	ck_assert_str_eq(params(x, INS_ACT_REVIEW_BILL), "{\"bill_id\":\"bill03\"}");
	ck_assert_str_eq(params(x, INS_ACT_CONTACT_BILLER), "{\"biller_id\":\"biller1\"}");
	ck_assert_msg(strstr(x->reasoning, "Late payment fee - Oct 2026") != NULL, "%s",
	    x->reasoning);

	/* seen before under another month's name and another category */
	item(&bills[1], "LATE PAYMENT FEE (November)", "other", 700);
	ck_assert_uint_eq(judge(ins_rule_new_fee), 0);
}
END_TEST

START_TEST(new_fee_limits)
{
	struct ins_bill *b;
	int k;

	/* two previous bills: no baseline */
	for (k = 0; k < 2; k++)
		item(bill(10000), "Service charge", "fee", 500);
	b = bill(10700);
	item(b, "Paper bill fee", "fee", 200);
	ck_assert_uint_eq(judge(ins_rule_new_fee), 0);

	/* not in the last 6 bills: it is new */
	teardown();
	setup();
	item(bill(10000), "Paper bill fee", "fee", 200);	/* 7 bills before */
	for (k = 0; k < 6; k++)
		item(bill(10000), "Service charge", "fee", 500);
	b = bill(10700);
	item(b, "Paper bill fee", "fee", 200);
	item(b, "paper-bill fee", "fee", 300);		/* the same norm: once */
	item(b, "Collection charge", "other", 900);	/* not a fee */
	item(b, "Waived fee", "fee", 0);		/* nothing charged */
	ck_assert_uint_eq(judge(ins_rule_new_fee), 1);
	must(INS_NEW_FEE, "fee:bill07:paper bill fee");

	/* a baseline of 7 bills reaches the old one */
	t.baseline_bills = 7;
	ck_assert_uint_eq(judge(ins_rule_new_fee), 0);
}
END_TEST

/* ---- 6. line item spike ---- */

static const struct {
	long long	 usual;		/* the line in the 6 previous bills */
	long long	 now;
	int		 fires;
} spikes[] = {
	/* 20.00: 50% (10.00) is the larger threshold */
	{ 2000, 3000, 0 },
	{ 2000, 3001, 1 },
	{ 2000, 2999, 0 },	/* above 5 units alone is not enough */
	/* 4.00: 5 units is the larger threshold */
	{ 400, 900, 0 },
	{ 400, 899, 0 },	/* above 50% alone is not enough */
	{ 400, 901, 1 },
	{ 2000, 100, 0 },	/* down is no spike */
};

START_TEST(line_item_spike)
{
	const struct ins_finding *x;
	struct ins_bill *b;
	int k;

	for (k = 0; k < 6; k++) {
		b = bill(10000);
		item(b, "Energy", "usage", 8000);
		item(b, "Meter fee", "fee", spikes[_i].usual);
	}
	b = bill(10000);
	item(b, "Energy", "usage", 8000);
	item(b, "Meter fee", "fee", spikes[_i].now);
	if (!spikes[_i].fires) {
		ck_assert_uint_eq(judge(ins_rule_line_item_spike), 0);
		return;
	}
	ck_assert_uint_eq(judge(ins_rule_line_item_spike), 1);
	x = must(INS_LINE_ITEM_SPIKE, "item:bill06:meter fee");
	ck_assert_str_eq(x->severity, "medium");
	ck_assert_str_eq(x->bill_id, "bill06");
	ck_assert_str_eq(ev(x, "baseline.median"), arena_printf(&a,
	    "{\"value\":\"%lld.%02lld\",\"currency\":\"USD\"}", spikes[_i].usual / 100,
	    spikes[_i].usual % 100));
	ck_assert_str_eq(ev(x, "baseline.bills"), "6");
	ck_assert_str_eq(ev(x, "threshold.amount"), "{\"value\":\"5.00\",\"currency\":\"USD\"}");
	ck_assert_str_eq(ev(x, "threshold.ratio"), "0.5");
	ck_assert_str_eq(params(x, INS_ACT_REVIEW_BILL), "{\"bill_id\":\"bill06\"}");
	ck_assert_str_eq(params(x, INS_ACT_CONTACT_BILLER), "{\"biller_id\":\"biller1\"}");
}
END_TEST

START_TEST(line_item_spike_history)
{
	struct ins_bill *b;
	int k;

	/* the line in only 2 of the previous bills: no baseline */
	for (k = 0; k < 6; k++) {
		b = bill(10000);
		if (k >= 4)
			item(b, "Meter fee", "fee", 400);
	}
	b = bill(10000);
	item(b, "Meter fee", "fee", 5000);
	ck_assert_uint_eq(judge(ins_rule_line_item_spike), 0);
	/* in 3 of them: it is */
	item(&bills[3], "Meter fee - March", "fee", 400);
	ck_assert_uint_eq(judge(ins_rule_line_item_spike), 1);
	ck_assert_str_eq(ev(&f.v[0], "baseline.bill_ids"),
	    "[\"bill03\",\"bill04\",\"bill05\"]");

	/* the largest line of the norm is the one judged; credits are not lines */
	item(b, "Meter fee", "fee", 400);
	item(b, "Meter fee", "credit", 90000);
	ck_assert_uint_eq(judge(ins_rule_line_item_spike), 1);
	ck_assert_str_eq(ev(&f.v[0], "amount"), "{\"value\":\"50.00\",\"currency\":\"USD\"}");
	/* in the history too: the largest of a bill's lines of that norm */
	item(&bills[5], "Meter fee", "fee", 4000);
	item(&bills[4], "Meter fee", "fee", 4000);
	ck_assert_uint_eq(judge(ins_rule_line_item_spike), 0);
}
END_TEST

/* a currency without minor units: 5 units are 5 */
START_TEST(line_item_spike_exponent)
{
	struct ins_bill *b;
	int k;

	for (k = 0; k < 3; k++) {
		b = bill(1000);
		b->currency = "JPY";
		b->exponent = 0;
		item(b, "Meter fee", "fee", 100);
	}
	b = bill(1000);
	b->currency = "JPY";
	b->exponent = 0;
	item(b, "Meter fee", "fee", 150);
	ck_assert_uint_eq(judge(ins_rule_line_item_spike), 0);
	items[3][0].minor = 151;
	ck_assert_uint_eq(judge(ins_rule_line_item_spike), 1);
	ck_assert_str_eq(ev(&f.v[0], "amount"), "{\"value\":\"151\",\"currency\":\"JPY\"}");
	ck_assert_str_eq(ev(&f.v[0], "threshold.amount"), "{\"value\":\"5\",\"currency\":\"JPY\"}");
}
END_TEST

/* a winter line that was as high last winter is no spike */
START_TEST(line_item_spike_seasonal)
{
	struct ins_bill *b;
	int k;

	for (k = 0; k < 14; k++) {
		b = bill(10000);
		item(b, "Heating", "usage", k < 3 ? 6000 : 2000);
	}
	b = bill(10000);		/* March 2025: months 1..3 a year earlier */
	item(b, "Heating", "usage", 6000);
	ck_assert_uint_eq(judge(ins_rule_line_item_spike), 0);
	items[14][0].minor = 9001;	/* median 60.00: 50% more is 90.00 */
	ck_assert_uint_eq(judge(ins_rule_line_item_spike), 1);
	ck_assert_str_eq(ev(&f.v[0], "seasonal_baseline.median"),
	    "{\"value\":\"60.00\",\"currency\":\"USD\"}");
	items[14][0].minor = 9000;
	ck_assert_uint_eq(judge(ins_rule_line_item_spike), 0);
	/* no such line a year earlier: the first test alone */
	for (k = 0; k < 4; k++)
		items[k][0].description = items[k][0].norm = "gas";
	ck_assert_uint_eq(judge(ins_rule_line_item_spike), 1);
	ck_assert_str_eq(ev(&f.v[0], "seasonal_baseline"), "null");
}
END_TEST

/* ---- 7. usage anomaly ---- */

static const struct {
	double		 history[12];	/* 0 ends */
	double		 q;
	const char	*severity;	/* NULL: nothing */
} usages[] = {
	/* flat: the floor (25% of 100) is the sd: 2 sd are 50 */
	{ { 100, 100, 100, 100, 100, 100 }, 150, NULL },
	{ { 100, 100, 100, 100, 100, 100 }, 150.5, "medium" },
	{ { 100, 100, 100, 100, 100, 100 }, 50, NULL },
	{ { 100, 100, 100, 100, 100, 100 }, 49.5, "low" },
	/* month-to-month changes of MAD 60 (sd 88.956, 2 sd 177.912) around
	 * the level of the last three readings (100) */
	{ { 60, 140, 60, 140, 60, 140, 100 }, 277.912, NULL },
	{ { 60, 140, 60, 140, 60, 140, 100 }, 277.92, "medium" },
	/* a climb (no year yet): the level of the last three is 146, 2 sd
	 * 73; 230 is beyond it but no step of 50% from the last (161) */
	{ { 100, 110, 121, 133, 146, 161 }, 177, NULL },
	{ { 100, 110, 121, 133, 146, 161 }, 230, NULL },
	{ { 100, 110, 121, 133, 146, 161 }, 250, "medium" },
	/* three reports are a history, two are not */
	{ { 100, 100, 100 }, 400, "medium" },
	{ { 100, 100 }, 400, NULL },
};

START_TEST(usage_anomaly)
{
	const struct ins_finding *x;
	struct ins_bill *b;
	size_t k;

	for (k = 0; usages[_i].history[k] != 0; k++)
		use(bill(10000), "electricity", "kWh", usages[_i].history[k]);
	b = bill(10000);
	use(b, "electricity", "kWh", usages[_i].q);
	if (usages[_i].severity == NULL) {
		ck_assert_uint_eq(judge(ins_rule_usage_anomaly), 0);
		return;
	}
	ck_assert_uint_eq(judge(ins_rule_usage_anomaly), 1);
	x = must(INS_USAGE_ANOMALY, arena_printf(&a, "usage:%s:electricity", b->id));
	ck_assert_str_eq(x->severity, usages[_i].severity);
	ck_assert_str_eq(ev(x, "direction"), strcmp(usages[_i].severity, "low") == 0 ?
	    "\"below\"" : "\"above\"");
	ck_assert_str_eq(ev(x, "usage_type"), "\"electricity\"");
	ck_assert_str_eq(ev(x, "baseline.bills"), arena_printf(&a, "%zu", k));
	ck_assert_str_eq(ev(x, "threshold.sds"), "2");
	ck_assert_msg(strstr(x->reasoning, "kWh") != NULL, "%s", x->reasoning);
	ck_assert_str_eq(params(x, INS_ACT_REVIEW_BILL),
	    arena_printf(&a, "{\"bill_id\":\"%s\"}", b->id));
}
END_TEST

/* no floor and no spread: any change is one */
START_TEST(usage_anomaly_no_spread)
{
	int k;

	t.usage_floor = 0;
	for (k = 0; k < 4; k++)
		use(bill(10000), "water", "m3", 12);
	use(bill(10000), "water", "m3", 12);
	ck_assert_uint_eq(judge(ins_rule_usage_anomaly), 0);
	usage[4][0].quantity = 12.001;
	ck_assert_uint_eq(judge(ins_rule_usage_anomaly), 1);
	usage[4][0].quantity = 11.999;
	ck_assert_uint_eq(judge(ins_rule_usage_anomaly), 1);
	ck_assert_str_eq(f.v[0].severity, "low");
}
END_TEST

/* the last usage_bills bills that report it; other types apart; one per type */
START_TEST(usage_anomaly_history)
{
	struct ins_bill *b;
	int k;

	for (k = 0; k < 7; k++)
		use(bill(10000), "electricity", "kWh", 1000);
	for (k = 0; k < 12; k++) {
		b = bill(10000);
		use(b, "gas", "therm", 50);
		if (k % 2 == 0)
			use(b, "electricity", "kWh", 100);
	}
	b = bill(10000);
	use(b, "electricity", "kWh", 130);
	use(b, "gas", "therm", 50);
	use(b, "electricity", "kWh", 5000);	/* the first entry counts */
	/* all of one month: no year earlier to be the center */
	for (k = 0; k < (int)h.nbills; k++)
		bills[k].month = MONTH0;
	usage[19][0].quantity = 200;
	/* the last 12 reports: 6 of 1000 and 6 of 100 */
	ck_assert_uint_eq(judge(ins_rule_usage_anomaly), 1);
	ck_assert_str_eq(ev(&f.v[0], "baseline.bills"), "12");
	/* the last 6: all of 100 */
	t.usage_bills = 6;
	ck_assert_uint_eq(judge(ins_rule_usage_anomaly), 1);
	ck_assert_str_eq(f.v[0].subject, "usage:bill19:electricity");
	ck_assert_str_eq(f.v[0].severity, "medium");
	ck_assert_str_eq(ev(&f.v[0], "baseline.bills"), "6");
	ck_assert_str_eq(ev(&f.v[0], "baseline.bill_ids"), "[\"bill07\",\"bill09\","
	    "\"bill11\",\"bill13\",\"bill15\",\"bill17\"]");
	usage[19][0].quantity = 150;	/* the level 100, 2 sd of the floor 50 */
	ck_assert_uint_eq(judge(ins_rule_usage_anomaly), 0);
}
END_TEST

/* the same months a year earlier are the center */
START_TEST(usage_anomaly_seasonal)
{
	int k;

	for (k = 0; k < 13; k++)	/* January 2024 .. January 2025 */
		use(bill(10000), "gas", "therm", k < 3 ? 300 : 100);
	use(bill(10000), "gas", "therm", 310);	/* February 2025 */
	ck_assert_uint_eq(judge(ins_rule_usage_anomaly), 0);
	/* center 300; one year-over-year change only: the floor, 75 */
	usage[13][0].quantity = 450;
	ck_assert_uint_eq(judge(ins_rule_usage_anomaly), 0);
	usage[13][0].quantity = 450.5;
	ck_assert_uint_eq(judge(ins_rule_usage_anomaly), 1);
	ck_assert_str_eq(ev(&f.v[0], "baseline.center"), "300");
	usage[13][0].quantity = 149.5;
	ck_assert_uint_eq(judge(ins_rule_usage_anomaly), 1);
	ck_assert_str_eq(f.v[0].severity, "low");
	/* without last winter's: far above the usual 100 */
	for (k = 0; k < 3; k++)
		usage[k][0].type = "electricity";
	usage[13][0].quantity = 310;
	ck_assert_uint_eq(judge(ins_rule_usage_anomaly), 1);
	ck_assert_str_eq(ev(&f.v[0], "baseline.center"), "100");
}
END_TEST

/* ---- all of them ---- */

/* A history where every rule finds something on the last bills. */
static void
busy(void)
{
	struct ins_bill *b;
	int k;

	for (k = 0; k < 6; k++) {
		b = bill(10000);
		item(b, "Energy", "usage", 9500);
		item(b, "Meter fee", "fee", 500);
		use(b, "electricity", "kWh", 400 + k);
	}
	b = bill(30000);
	b->status = "PENDING";
	b->due = b->day + 20;
	h.today = b->day + 25;
	item(b, "Energy", "usage", 28000);
	item(b, "Meter fee", "fee", 500);
	item(b, "Meter fee", "fee", 500);
	item(b, "Reconnection fee", "fee", 1000);
	/* its first usage (no history) explains nothing of the rise */
	use(b, "water", "gal", 100);
	use(b, "electricity", "kWh", 1200);
	b = bill(30000);
	b->day = bills[6].day + 2;
	b->month = bills[6].month;
	h.first_bill_of_biller = "bill00";
	pay("pay1", "bill06", 30000, b->day + 1);
	pay("pay2", "bill06", 30000, b->day + 3);
}

START_TEST(evaluate_order)
{
	static const char *const want[][2] = {
		{ INS_NEW_BILLER, "biller:biller1" },
		{ INS_DUPLICATE_CHARGE, "line:bill06:meter fee" },
		{ INS_BILL_ANOMALY, "bill:bill06" },
		{ INS_OVERDUE_RISK, "bill:bill06" },
		{ INS_NEW_FEE, "fee:bill06:reconnection fee" },
		{ INS_LINE_ITEM_SPIKE, "item:bill06:energy" },
		{ INS_USAGE_ANOMALY, "usage:bill06:electricity" },
		{ INS_DUPLICATE_CHARGE, "bills:bill06:bill07" },
		{ INS_DUPLICATE_CHARGE, "payments:pay1:pay2" },
	};
	size_t k;

	busy();
	ck_assert_uint_eq(evaluate(), N(want));
	for (k = 0; k < N(want); k++) {
		ck_assert_str_eq(f.v[k].type, want[k][0]);
		ck_assert_str_eq(f.v[k].subject, want[k][1]);
	}
	ck_assert_str_eq(f.v[3].severity, "high");
	ck_assert_str_eq(f.v[2].severity, "high");

	/* once more into the same findings: nothing twice */
	ck_assert_int_eq(ins_evaluate(&a, &h, &f), 0);
	ck_assert_uint_eq(checked(), N(want));
}
END_TEST

/* the same input, the same findings, byte for byte */
START_TEST(evaluate_deterministic)
{
	struct ins_findings g = { 0 };
	struct arena b;
	size_t k;

	busy();
	ck_assert_uint_eq(evaluate(), 9);
	arena_init(&b);
	ck_assert_int_eq(ins_evaluate(&b, &h, &g), 0);
	ck_assert_uint_eq(g.n, f.n);
	for (k = 0; k < f.n; k++) {
		ck_assert_str_eq(g.v[k].type, f.v[k].type);
		ck_assert_str_eq(g.v[k].subject, f.v[k].subject);
		ck_assert_str_eq(g.v[k].severity, f.v[k].severity);
		ck_assert_str_eq(g.v[k].reasoning, f.v[k].reasoning);
		ck_assert_str_eq(text(g.v[k].evidence), text(f.v[k].evidence));
		ck_assert_str_eq(text(g.v[k].actions), text(f.v[k].actions));
	}
	ins_findings_free(&g);
	ck_assert_uint_eq(g.n, 0);
	ck_assert_ptr_null(g.v);

	/* put, the arena reset, and again: the same findings anew */
	arena_reset(&b);
	ck_assert_int_eq(ins_evaluate(&b, &h, &g), 0);
	ck_assert_uint_eq(g.n, f.n);
	ck_assert_str_eq(text(g.v[8].evidence), text(f.v[8].evidence));
	ins_findings_free(&g);
	arena_free(&b);
}
END_TEST

/* bills before first_target are history only */
START_TEST(evaluate_first_target)
{
	busy();
	h.first_target = 7;
	ck_assert_uint_eq(evaluate(), 2);
	ck_assert_str_eq(f.v[0].subject, "bills:bill06:bill07");
	ck_assert_str_eq(f.v[1].subject, "payments:pay1:pay2");
	h.first_target = 8;
	ck_assert_uint_eq(evaluate(), 1);
	h.npayments = 0;
	ck_assert_uint_eq(evaluate(), 0);
	h.first_target = 0;
	h.nbills = 0;
	ck_assert_uint_eq(evaluate(), 0);
}
END_TEST

/* no thresholds given: the defaults */
START_TEST(evaluate_defaults)
{
	busy();
	h.t = NULL;
	ck_assert_uint_eq(evaluate(), 9);
	t.baseline_min = 8;
	h.t = &t;
	ck_assert_uint_lt(evaluate(), 9);
}
END_TEST

/* ---- descriptions and days ---- */

static const struct {
	const char *in, *want;
} norms[] = {
	{ "Late payment fee - Oct 2026", "late payment fee" },
	{ "LATE PAYMENT FEE (November)", "late payment fee" },
	{ "  Meter   fee  ", "meter fee" },
	{ "Service charge: 01/12-31/12", "service charge" },
	{ "sept fee", "sept fee" },
	{ "Maybe fee", "maybe fee" },
	{ "May", "" },
	{ "Dec-2026 JAN feb MARCH", "" },
	{ "Marketing fee", "marketing fee" },
	{ "2026", "" },
	{ "", "" },
	{ "Fee\tnov.", "fee" },
	{ "\xc3\x89lectricit\xc3\xa9 Jan", "\xc3\x89lectricit\xc3\xa9" },
	{ "Gas\xe2\x80\x94supply", "gas\xe2\x80\x94supply" },
	{ "Wi-Fi", "wi fi" },
};

START_TEST(normalise)
{
	ck_assert_str_eq(ins_normalise(&a, norms[_i].in), norms[_i].want);
}
END_TEST

START_TEST(normalise_null)
{
	ck_assert_str_eq(ins_normalise(&a, NULL), "");
}
END_TEST

static const struct {
	const char	*s;
	int		 ok, day;
} days[] = {
	{ "1970-01-01", 1, 0 },
	{ "1969-12-31", 1, -1 },
	{ "2026-11-28", 1, 20785 },
	{ "2000-02-29", 1, 11016 },
	{ "2024-01-15", 1, DAY0 },
	{ "0001-01-01", 1, -719162 },
	{ "9999-12-31", 1, 2932896 },
	{ "1900-02-29", 0, 0 },
	{ "2026-02-29", 0, 0 },
	{ "2026-04-31", 0, 0 },
	{ "2026-13-01", 0, 0 },
	{ "2026-00-10", 0, 0 },
	{ "2026-01-00", 0, 0 },
	{ "2026-1-01", 0, 0 },
	{ "2026-01-1", 0, 0 },
	{ "2026-01-011", 0, 0 },
	{ "2026/01/01", 0, 0 },
	{ "2026-01-01T00:00:00Z", 0, 0 },
	{ " 2026-01-01", 0, 0 },
	{ "+026-01-01", 0, 0 },
	{ "", 0, 0 },
};

START_TEST(day)
{
	int d = 12345;

	ck_assert_int_eq(ins_day(days[_i].s, &d), days[_i].ok ? 0 : -1);
	if (days[_i].ok)
		ck_assert_int_eq(d, days[_i].day);
}
END_TEST

START_TEST(thresholds)
{
	ck_assert_int_eq(t.duplicate_days, 5);
	ck_assert_int_eq(t.baseline_bills, 6);
	ck_assert_int_eq(t.baseline_min, 3);
	ck_assert(t.anomaly_ratio == 0.30);
	ck_assert(t.anomaly_mads == 3.0);
	ck_assert_int_eq(t.overdue_days, 3);
	ck_assert(t.spike_ratio == 0.50);
	ck_assert_int_eq(t.spike_units, 5);
	ck_assert_int_eq(t.usage_bills, 12);
	ck_assert(t.usage_sds == 2.0);
	ck_assert(t.usage_floor == 0.25);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("insights_rules");
	TCase *tc = tcase_create("rules");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_loop_test(tc, duplicate_bills, 0, N(dup_bills));
	tcase_add_test(tc, duplicate_bills_edges);
	tcase_add_test(tc, duplicate_bills_nearest);
	tcase_add_loop_test(tc, duplicate_lines, 0, N(dup_lines));
	tcase_add_test(tc, duplicate_lines_once);
	tcase_add_loop_test(tc, duplicate_payments, 0, N(dup_pays));
	tcase_add_test(tc, duplicate_payments_pairs);
	tcase_add_test(tc, bill_anomaly_usage);
	tcase_add_loop_test(tc, bill_anomaly, 0, N(anomalies));
	tcase_add_test(tc, bill_anomaly_reasoning);
	tcase_add_test(tc, bill_anomaly_reasoning_mads);
	tcase_add_test(tc, bill_anomaly_baseline);
	tcase_add_test(tc, bill_anomaly_seasonal);
	tcase_add_test(tc, bill_anomaly_no_season);
	tcase_add_test(tc, configured_ratio);
	tcase_add_test(tc, new_biller);
	tcase_add_loop_test(tc, overdue_risk, 0, N(overdue));
	tcase_add_test(tc, new_fee);
	tcase_add_test(tc, new_fee_limits);
	tcase_add_loop_test(tc, line_item_spike, 0, N(spikes));
	tcase_add_test(tc, line_item_spike_history);
	tcase_add_test(tc, line_item_spike_exponent);
	tcase_add_test(tc, line_item_spike_seasonal);
	tcase_add_loop_test(tc, usage_anomaly, 0, N(usages));
	tcase_add_test(tc, usage_anomaly_no_spread);
	tcase_add_test(tc, usage_anomaly_history);
	tcase_add_test(tc, usage_anomaly_seasonal);
	tcase_add_test(tc, evaluate_order);
	tcase_add_test(tc, evaluate_deterministic);
	tcase_add_test(tc, evaluate_first_target);
	tcase_add_test(tc, evaluate_defaults);
	tcase_add_loop_test(tc, normalise, 0, N(norms));
	tcase_add_test(tc, normalise_null);
	tcase_add_loop_test(tc, day, 0, N(days));
	tcase_add_test(tc, thresholds);
	suite_add_tcase(s, tc);
	return tcheck_run(s);
}
