#ifndef BDS_INSIGHTS_H
#define BDS_INSIGHTS_H
/*
 * Insights (SPEC "Insight", DOMAIN "Insights"): what the rules
 * (insights_rules.h) find on a link's bills, kept with a lifecycle the
 * client acts on.
 *
 * The engine runs in bds-jobs: a bill write queues a run of its link
 * (INSIGHTS_JOB_LINK, lib/bills), and every link with bills is run once a
 * day (the sweep), so overdue_risk follows the calendar. A run reads that
 * link's newest bills only, evaluates each account, and reconciles:
 *   - one OPEN (or SNOOZED) insight per (client user, type, subject): a
 *     finding already live changes nothing, or updates the evidence
 *     (insight.updated only when the severity moved);
 *   - a new finding is an OPEN insight (insight.created), unless the user
 *     dismissed that subject or resolved it themselves: a user's action
 *     wins and is never undone by the engine;
 *   - a live insight whose finding is gone is RESOLVED by the engine
 *     (insight.updated). If the condition comes back, it is a new insight.
 *
 * The client's moves (insights_api.c), each under the row's lock, each
 * one event when it changes something and none when it does not:
 *   snooze   OPEN or SNOOZED -> SNOOZED until a future instant; the same
 *            `until` again changes nothing; DISMISSED or RESOLVED: 409
 *   dismiss  any -> DISMISSED, terminal; again: nothing
 *   resolve  OPEN or SNOOZED -> RESOLVED (resolved_at as given, else now);
 *            DISMISSED stays DISMISSED, RESOLVED stays as it was
 * A SNOOZED insight returns to OPEN at snoozed_until (INSIGHTS_JOB_WAKE,
 * queued for that instant, and the sweep as a backstop).
 */
#include <stddef.h>

#include "core/jobq.h"
#include "core/validate.h"

struct config;
struct db;
struct arena;
struct json_object;
struct req;
struct jobs_job;
struct db_stmt_set;
struct ins_thresholds;
struct module;

#define INSIGHTS_PREFIX		"ins"
#define INSIGHTS_LIMIT_DEFAULT	25	/* SPEC "Limits": 1 to 100 */
#define INSIGHTS_LIMIT_MAX	100
#define INSIGHTS_JOB_LINK	"insights"		/* subject: a link id */
#define INSIGHTS_JOB_WAKE	"insights.wake"		/* subject: an insight id */

/* ---- handlers (lib/routes.c) ---- */
int	 insights_list(struct req *, struct json_object *out);
int	 insights_get(struct req *, struct json_object *out);
int	 insights_snooze(struct req *, struct json_object *out);
int	 insights_dismiss(struct req *, struct json_object *out);
int	 insights_resolve(struct req *, struct json_object *out);

extern const struct vfield insights_list_query[];
extern const struct vfield insights_user_query[];
extern const struct vfield insights_snooze_fields[];
extern const struct vfield insights_resolve_fields[];

/* ---- settings ---- */
struct insights_settings {
	int	 insights_history_bills;	/* an account's newest bills a run reads */
	int	 insights_duplicate_days;
	int	 insights_baseline_bills;
	int	 insights_baseline_min;
	int	 insights_anomaly_pct;
	int	 insights_anomaly_mads;
	int	 insights_overdue_days;
	int	 insights_spike_pct;
	int	 insights_spike_units;
	int	 insights_usage_bills;
	int	 insights_usage_sds;
	int	 insights_usage_floor_pct;
};
const struct insights_settings *insights_settings(const struct config *);
/* The rules' thresholds as the configuration sets them. */
void	 insights_thresholds(const struct config *, struct ins_thresholds *);

/* ---- the engine (insights.c), run by bds-jobs ---- */
enum jobs_outcome insights_run_apply(struct req *, struct jobs_job *);
enum jobs_outcome insights_wake_apply(struct req *, struct jobs_job *);
/* sweeps: links not evaluated today; snoozed insights past due */
long long insights_daily(const struct config *, struct db *, struct arena *);
long long insights_wake_due(const struct config *, struct db *, struct arena *);

extern const struct db_stmt_set insights_stmt_set, insights_engine_stmt_set,
	insights_api_stmt_set;
extern const struct module insights_module;

#endif
