#ifndef BDS_MODULE_H
#define BDS_MODULE_H
/*
 * A module as the programs know it (nginx's ngx_module_t on a small scale):
 * one descriptor per folder of lib/, defined in the folder's
 * <name>_module.c, listed once in lib/modules.mk. The build writes modules[]
 * from that list, so nothing else names every module but the route table.
 *
 *	stmt_sets	its statement sets: t/e2e/check_e2e_schema prepares
 *			every one against the migrated schema
 *	job_kinds	the kinds of background work it queues (core/jobq.h):
 *			bds-jobs runs them
 *	sweeps		its periodic batch work: `bdsctl jobs` runs each in turn
 *	settings	its configuration keys (core/config.h): config_load
 *			reads them into a block of settings_size bytes per config,
 *			config_module() finds it
 *	usage		the usage metrics it computes from its own rows:
 *			lib/metering reads them (docs/metering.md)
 *
 * Every list may be NULL; each ends with a NULL (or a NULL name/key).
 */
#include <stddef.h>

struct arena;
struct config;
struct config_key;
struct db;
struct db_stmt;
struct db_stmt_set;
struct jobs_kind;

struct module_sweep {
	const char	*what;		/* "expired idempotency keys removed" */
	/* The rows it handled, or -1 when the database failed. */
	long long	(*run)(const struct config *, struct db *, struct arena *);
};

/*
 * A usage metric computed from the module's own rows at read time (never
 * counted twice: the rows are the count). stmt, one of the module's
 * statements (listed in its stmt_sets too), takes $1 client_id,
 * $2 environment (NULL: every one), $3 and $4 the first and the last UTC
 * day (YYYY-MM-DD) and answers rows (day YYYY-MM-DD, environment, value)
 * for the days and environments whose value is above 0. A level (links
 * active on a day) sums to nothing over days: a period's value is its
 * highest day's.
 */
struct module_usage {
	const char	*metric;	/* "active_links" */
	struct db_stmt	*stmt;
	int		 level;		/* 1: a level, 0: a count of the day */
};

struct module {
	const char			 *name;		/* its folder */
	const struct db_stmt_set *const	 *stmt_sets;
	const struct jobs_kind *const	 *job_kinds;
	const struct module_sweep	 *sweeps;
	const struct config_key		 *settings;
	size_t				  settings_size;
	const struct module_usage	 *usage;
};

/* Every module, lowest layer first, then NULL (lib/modules.mk). */
extern const struct module *const modules[];

/* A NULL-ended list in a descriptor: .stmt_sets = MODULE_LIST(&a_set, &b_set). */
#define MODULE_LIST(type, ...)	((type const *const []){ __VA_ARGS__, NULL })
#define MODULE_SETS(...)	MODULE_LIST(struct db_stmt_set, __VA_ARGS__)
#define MODULE_KINDS(...)	MODULE_LIST(struct jobs_kind, __VA_ARGS__)

/* The kind named name of any module, or NULL. */
const struct jobs_kind *module_job_kind(const char *name);
/* The largest max_attempts of every module's kinds (at least 1). */
int	 module_job_attempts_max(void);

#endif
