#ifndef BDS_INSIGHTS_RULES_H
#define BDS_INSIGHTS_RULES_H
/*
 * The insight rules: pure functions over one link's bill history (no
 * database, no clock, no I/O), so that a unit suite and the accuracy bench
 * drive them exactly as bds-jobs does. The thresholds are settings
 * (struct ins_thresholds, read from [insights] in the configuration); the
 * reason for each is in docs/insights.md.
 *
 * A finding names its type and its subject: the rule's own key of what it
 * is about (a bill, a pair of bills, a line of a bill, ...). The engine
 * (insights.c) keeps one OPEN insight per (type, subject) and resolves the
 * ones whose finding is gone (ins_reconcile).
 *
 * Money is integer minor units; the days are days since 1970-01-01 (UTC).
 */
#include <stddef.h>

struct arena;
struct json_object;

#define INS_NO_DAY	(-2147483647 - 1)	/* a date the bill does not give */

/* the types the rules find (unknown types stored by others pass through) */
#define INS_DUPLICATE_CHARGE	"duplicate_charge"
#define INS_BILL_ANOMALY	"bill_anomaly"
#define INS_NEW_BILLER		"new_biller"
#define INS_OVERDUE_RISK	"overdue_risk"
#define INS_NEW_FEE		"new_fee"
#define INS_LINE_ITEM_SPIKE	"line_item_spike"
#define INS_USAGE_ANOMALY	"usage_anomaly"

/* the fixed list of proposed actions (never a command or a URL to run) */
#define INS_ACT_REVIEW_BILL	"review_bill"
#define INS_ACT_CONTACT_BILLER	"contact_biller"
#define INS_ACT_DISPUTE_CHARGE	"dispute_charge"
#define INS_ACT_SET_REMINDER	"set_reminder"
#define INS_ACT_PAY_NOW		"pay_now"

struct ins_item {
	const char	*description;	/* as the bill gives it */
	const char	*norm;		/* ins_normalise(description) */
	const char	*category;	/* usage|fee|tax|credit|adjustment|other */
	long long	 minor;
};

struct ins_usage {
	const char	*type, *unit;
	double		 quantity;
};

/* One bill (not deleted) of the link, as the rules see it. */
struct ins_bill {
	const char	*id, *account_id, *biller_id, *biller_name;
	const char	*status;	/* PENDING, PAID, PARTIALLY_PAID */
	const char	*currency;	/* ISO 4217 */
	int		 exponent;	/* the currency's minor-unit exponent */
	/* the bill's own charges: current_charges when the statement gives
	 * them, else the total (a carried balance is not this month's spend) */
	long long	 charges;
	long long	 total;		/* total_amount */
	int		 day;		/* statement date, else due date, else the
					 * day it was created */
	int		 due;		/* due date or INS_NO_DAY */
	int		 month;		/* the month it bills for: year * 12 +
					 * month - 1 of the period's end, else of
					 * day - 1 month */
	const struct ins_item *items;
	size_t		 nitems;
	const struct ins_usage *usage;
	size_t		 nusage;
};

/* One payment observed on the biller's portal (posted, not reversed). */
struct ins_payment {
	const char	*id, *account_id, *bill_id;	/* bill_id: matched, or NULL */
	const char	*currency;
	int		 exponent;
	long long	 minor;
	int		 day;
};

struct ins_thresholds {
	int	 duplicate_days;	/* 5: same amount within this many days */
	int	 baseline_bills;	/* 6: previous bills a baseline reads */
	int	 baseline_min;		/* 3: fewer previous bills: no baseline */
	double	 anomaly_ratio;		/* 0.30: total above median by more than */
	double	 anomaly_mads;		/* 3.0: ... and by more than this many MADs */
	int	 overdue_days;		/* 3: unpaid this close to due: medium */
	double	 spike_ratio;		/* 0.50: a line above its median by more */
	long long spike_units;		/* 5: ... and by more currency units */
	int	 usage_bills;		/* 12: the usage history read */
	double	 usage_sds;		/* 2.0: robust standard deviations */
	double	 usage_floor;		/* 0.10: the least sd, a share of the baseline */
};

/* The defaults above, as the configuration's. */
void	 ins_thresholds_default(struct ins_thresholds *);

/*
 * What the rules read: the link's bills oldest first (by day, then id), its
 * posted payments oldest first, and today. first_bill_of_biller: the id of
 * the client user's first bill (oldest day, any link) of the link's biller,
 * or NULL when none of these bills is it.
 *
 * targets: the bills (indices) the rules judge; bills before them are
 * history only. The engine passes all of them but the oldest of a
 * truncated read, whose history it did not read.
 */
struct ins_history {
	const struct ins_bill	 *bills;
	size_t			  nbills;
	size_t			  first_target;	/* bills[first_target..] are judged */
	const struct ins_payment *payments;
	size_t			  npayments;
	const char		 *first_bill_of_biller;
	int			  today;
	const struct ins_thresholds *t;
};

/* One finding; strings and JSON owned by the arena (JSON: see ins_findings_free). */
struct ins_finding {
	const char	*type, *subject;
	const char	*severity;		/* low, medium, high */
	const char	*bill_id;		/* the bill it is about, or NULL */
	const char	*account_id, *biller_id;
	const char	*reasoning;		/* one sentence with the numbers */
	struct json_object *evidence;		/* object */
	struct json_object *actions;		/* array of {action_type, label, params} */
};

struct ins_findings {
	struct ins_finding *v;
	size_t		 n, cap;
};

/*
 * Every rule over h, appended to out (allocations in a): deterministic, the
 * same input gives the same findings in the same order, one finding per
 * (type, subject). 0, or -1 when out of memory.
 */
int	 ins_evaluate(struct arena *a, const struct ins_history *h, struct ins_findings *out);
/* The JSON of findings (evidence, actions) is reference counted; this puts it. */
void	 ins_findings_free(struct ins_findings *);

/* The rules one by one (ins_evaluate calls each for every target bill). */
int	 ins_rule_duplicate_charge(struct arena *, const struct ins_history *, size_t bill,
	    struct ins_findings *);
int	 ins_rule_bill_anomaly(struct arena *, const struct ins_history *, size_t bill,
	    struct ins_findings *);
int	 ins_rule_new_biller(struct arena *, const struct ins_history *, size_t bill,
	    struct ins_findings *);
int	 ins_rule_overdue_risk(struct arena *, const struct ins_history *, size_t bill,
	    struct ins_findings *);
int	 ins_rule_new_fee(struct arena *, const struct ins_history *, size_t bill,
	    struct ins_findings *);
int	 ins_rule_line_item_spike(struct arena *, const struct ins_history *, size_t bill,
	    struct ins_findings *);
int	 ins_rule_usage_anomaly(struct arena *, const struct ins_history *, size_t bill,
	    struct ins_findings *);
/* duplicate observed payments: over h->payments, once per evaluation */
int	 ins_rule_duplicate_payments(struct arena *, const struct ins_history *,
	    struct ins_findings *);

/*
 * A line's description as the rules compare it: lower case, every run of
 * characters that are not letters one space, no words that are month names
 * or their three-letter forms, trimmed ("Late payment fee - Oct 2026" and
 * "LATE PAYMENT FEE (November)" are both "late payment fee"). Bytes of
 * UTF-8 sequences are kept as they are. In the arena.
 */
const char *ins_normalise(struct arena *, const char *description);

/* "YYYY-MM-DD" as days since 1970-01-01: 0, or -1 when s is not a date. */
int	 ins_day(const char *s, int *day);

#endif
