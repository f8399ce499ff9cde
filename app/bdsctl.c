/*
 * bdsctl: the operator CLI. One table of commands; each takes the loaded
 * configuration, a database handle and its own arguments, calls the owning
 * module (no SQL here) and prints what it did.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "billers/billers.h"
#include "billers/billers_logos.h"
#include "bills/bills_statement.h"
#include "bills/bills_status.h"
#include "core/arena.h"
#include "core/config.h"
#include "core/db.h"
#include "core/migrate.h"
#include "core/nodump.h"
#include "core/module.h"
#include "core/validate.h"
#include "links/links.h"
#include "pay/pay.h"
#include "iam/iam.h"
#include "iam/iam_ops.h"
#include "rtl/rtl.h"

struct cmd {
	const char	*name;
	const char	*help;
	int		(*fn)(const struct config *, struct db *, struct arena *, int,
			    char **);
};

/* What the database said about a step that failed; always 1. */
static int
failed(struct db *d, const char *what)
{
	fprintf(stderr, "bdsctl: %s: %s\n", what, db_errmsg(d));
	return 1;
}

static void
print_applied(const char *name, void *arg)
{
	printf("%s %s\n", (const char *)arg, name);
}

static int
cmd_migrate(const struct config *cfg, struct db *d, struct arena *a, int argc,
    char **argv)
{
	char err[512];
	int total, n;

	if ((n = migrate_apply(d, a, cfg->sql_dir, print_applied, "applied", &total,
	    err, sizeof(err))) < 0) {
		fprintf(stderr, "bdsctl: %s\n", err);
		return 1;
	}
	printf("migrate: %d applied, %d total\n", n, total);
	return 0;
}

static int
cmd_seed(const struct config *cfg, struct db *d, struct arena *a, int argc,
    char **argv)
{
	char err[512];

	if (migrate_seed(d, a, arena_printf(a, "%s/seed", cfg->sql_dir), print_applied,
	    "seeded", err, sizeof(err)) < 0) {
		fprintf(stderr, "bdsctl: %s\n", err);
		return 1;
	}
	return 0;
}

/* A user named by id or e-mail; NULL after printing why. */
static const char *
user_id(struct db *d, struct arena *a, const char *who)
{
	const char *id;
	int rc = iam_ops_user_find(d, a, who, &id);

	if (rc < 0)
		failed(d, "find user");
	else if (rc == 0)
		fprintf(stderr, "bdsctl: no user %s\n", who);
	return rc == 1 ? id : NULL;
}

/* legal add KIND VERSION DATE: register a legal document version. */
static int
cmd_legal(const struct config *cfg, struct db *d, struct arena *a, int argc,
    char **argv)
{
	struct iam_ops_legal *docs;
	int n;

	if (argc == 1 && strcmp(argv[0], "list") == 0) {
		if ((n = iam_ops_legal_list(d, a, &docs)) < 0)
			return failed(d, "list");
		for (int i = 0; i < n; i++)
			printf("%-8s %-16s %s\n", docs[i].kind, docs[i].version,
			    docs[i].effective_date);
		return 0;
	}
	if (argc != 4 || strcmp(argv[0], "add") != 0) {
		fprintf(stderr, "usage: bdsctl legal add terms|privacy|dpa VERSION YYYY-MM-DD\n"
		    "       bdsctl legal list\n");
		return 2;
	}
	if (!validate_format(VF_DATE, argv[3])) {
		fprintf(stderr, "bdsctl: %s is not a date (YYYY-MM-DD)\n", argv[3]);
		return 2;
	}
	if ((n = iam_ops_legal_add(d, a, argv[1], argv[2], argv[3])) < 0)
		return failed(d, "legal add");
	if (n == 0) {
		fprintf(stderr, "bdsctl: %s %s is already registered\n", argv[1], argv[2]);
		return 1;
	}
	printf("registered %s %s effective %s\n", argv[1], argv[2], argv[3]);
	return 0;
}

/* live-access list | approve USER | deny USER [REASON]: the operator queue. */
static int
cmd_live_access(const struct config *cfg, struct db *d, struct arena *a, int argc,
    char **argv)
{
	struct iam_ops_live_request *q;
	const char *id;
	int n, approve;

	if (argc == 1 && strcmp(argv[0], "list") == 0) {
		if ((n = iam_ops_live_access_list(d, a, &q)) < 0)
			return failed(d, "list");
		for (int i = 0; i < n; i++)
			printf("%s %s %s %s\n", q[i].user_id, q[i].email, q[i].status,
			    q[i].requested_at);
		printf("%d pending\n", n);
		return 0;
	}
	if (argc < 2 || argc > 3 || (strcmp(argv[0], "approve") != 0 &&
	    strcmp(argv[0], "deny") != 0) || (argc == 3 && argv[0][0] == 'a')) {
		fprintf(stderr, "usage: bdsctl live-access list | approve USER | deny USER [REASON]\n");
		return 2;
	}
	approve = argv[0][0] == 'a';
	if ((id = user_id(d, a, argv[1])) == NULL)
		return 1;
	if ((n = iam_ops_live_access_decide(d, a, id, approve,
	    argc == 3 ? argv[2] : NULL)) < 0)
		return failed(d, argv[0]);
	if (n == 0) {
		fprintf(stderr, "bdsctl: %s has no pending live access request\n", id);
		return 1;
	}
	printf("%s: %s\n", id, approve ? "live access granted" : "denied");
	return 0;
}

/* billing done USER: the billing setup is complete (live access prerequisite). */
static int
cmd_billing(const struct config *cfg, struct db *d, struct arena *a, int argc,
    char **argv)
{
	const char *id;

	if (argc != 2 || strcmp(argv[0], "done") != 0) {
		fprintf(stderr, "usage: bdsctl billing done USER\n");
		return 2;
	}
	if ((id = user_id(d, a, argv[1])) == NULL)
		return 1;
	if (iam_ops_billing_done(d, a, id) != 0)
		return failed(d, "billing done");
	printf("%s: billing done\n", id);
	return 0;
}

/* Accounts past the account-wide sign-in ceiling in their current window
 * (never locked: the operator decides). */
static int
cmd_signin_alerts(const struct config *cfg, struct db *d, struct arena *a, int argc,
    char **argv)
{
	struct iam_signin_alert *al;
	size_t n;

	if (argc != 0) {
		fprintf(stderr, "usage: bdsctl signin-alerts\n");
		return 2;
	}
	if (iam_signin_alerts(d, a, &al, &n) != 0)
		return failed(d, "signin-alerts");
	for (size_t i = 0; i < n; i++)
		printf("%s %lld failed sign-ins since %s (alerted %s)\n", al[i].email,
		    al[i].failures, al[i].window_start, al[i].alerted_at);
	printf("%zu alert%s\n", n, n == 1 ? "" : "s");
	return 0;
}

/* Timer-driven batch work (systemd/bds-jobs.timer, every minute): every
 * module's sweeps (its descriptor, core/module.h), lower layers first. */
static int
cmd_jobs(const struct config *cfg, struct db *d, struct arena *a, int argc,
    char **argv)
{
	int rc = 0;

	(void)argc;
	(void)argv;
	for (size_t m = 0; modules[m] != NULL; m++)
		for (const struct module_sweep *w = modules[m]->sweeps; w != NULL && w->what != NULL;
		    w++) {
			long long n = w->run(cfg, d, a);

			if (n >= 0)
				printf("jobs: %s: %lld\n", w->what, n);
			else
				rc = failed(d, w->what);
		}
	return rc;
}

#define BILLERS_USAGE \
	"billers import FILE [--fetch-logos] | set-status ID STATUS | set-rank ID N|none" \
	" | fetch-logos [ID...]"
/* The biller catalog: import (with the logos shipped beside the file, and
 * with --fetch-logos the fetch of every changed logo_url queued),
 * set-status, set-rank (the picker's curated order), fetch-logos (queue the
 * fetch of the IDs' logos, or of every changed one). */
static int
cmd_billers(const struct config *cfg, struct db *d, struct arena *a, int argc,
    char **argv)
{
	int fetch = argc == 3 && strcmp(argv[2], "--fetch-logos") == 0;

	if ((argc == 2 || fetch) && strcmp(argv[0], "import") == 0)
		return billers_import(cfg, d, a, argv[1]) == 0 &&
		    billers_logos_import(cfg, d, a, argv[1], fetch) == 0 ? 0 : 1;
	if (argc == 3 && strcmp(argv[0], "set-status") == 0)
		return billers_set_status(cfg, d, a, argv[1], argv[2]) == 0 ? 0 : 1;
	if (argc == 3 && strcmp(argv[0], "set-rank") == 0)
		return billers_set_rank(cfg, d, a, argv[1], argv[2]) == 0 ? 0 : 1;
	if (argc >= 1 && strcmp(argv[0], "fetch-logos") == 0) {
		for (int i = 1; i < argc; i++)
			if (billers_logos_fetch(cfg, d, a, argv[i]) != 0)
				return 1;
		return argc > 1 || billers_logos_fetch(cfg, d, a, NULL) == 0 ? 0 : 1;
	}
	fprintf(stderr, "usage: bdsctl " BILLERS_USAGE "\n");
	return 2;
}

/* bills revert ID: an operator's status_reverted manual_admin. */
static int
cmd_bills(const struct config *cfg, struct db *d, struct arena *a, int argc,
    char **argv)
{
	const char *why;

	if (argc == 2 && strcmp(argv[0], "revert") == 0) {
		if (bills_revert_admin(cfg, d, a, argv[1], &why) != 0) {
			fprintf(stderr, "bills revert: %s\n", why);
			return 1;
		}
		printf("bills revert: %s -> PENDING (status_reverted manual_admin)\n", argv[1]);
		return 0;
	}
	fprintf(stderr, "usage: bdsctl bills revert ID\n");
	return 2;
}

/* keys rotate-credentials: re-seal every link's credentials under the
 * vault's current key (credential_key_id); keys rotate-pan: every card
 * number under the pay ring's current key (pay_pan_key_id). */
static int
cmd_keys(const struct config *cfg, struct db *d, struct arena *a, int argc, char **argv)
{
	if (argc == 1 && strcmp(argv[0], "rotate-credentials") == 0)
		return links_vault_rotate(cfg, d, a) == 0 ? 0 : 1;
	if (argc == 1 && strcmp(argv[0], "rotate-pan") == 0)
		return pay_rotate_pan(cfg, d, a) == 0 ? 0 : 1;
	fprintf(stderr, "usage: bdsctl keys rotate-credentials | rotate-pan\n");
	return 2;
}

/* links refresh ID | links correct-reason ID --family F --reason R */
static int
cmd_links(const struct config *cfg, struct db *d, struct arena *a, int argc, char **argv)
{
	const char *family = NULL, *reason = NULL;

	if (argc == 2 && strcmp(argv[0], "refresh") == 0)
		return links_refresh_admin(cfg, d, a, argv[1]) == 0 ? 0 : 1;
	if (argc == 6 && strcmp(argv[0], "correct-reason") == 0) {
		for (int i = 2; i + 1 < argc; i += 2) {
			if (strcmp(argv[i], "--family") == 0)
				family = argv[i + 1];
			else if (strcmp(argv[i], "--reason") == 0)
				reason = argv[i + 1];
		}
		if (family != NULL && reason != NULL)
			return links_correct_reason(cfg, d, a, argv[1], family, reason) == 0 ?
			    0 : 1;
	}
	fprintf(stderr, "usage: bdsctl links refresh ID\n"
	    "       bdsctl links correct-reason ID --family credentials_rejected_reason|"
	    "reaped_reason --reason REASON\n");
	return 2;
}

/*
 * discovery list [--all] | approve ID (--biller BLR | --base-url URL [--name
 * NAME] [--type TYPE] [--country CC]) | reject ID: the onboarding records
 * of requests to link.
 */
static int
cmd_discovery(const struct config *cfg, struct db *d, struct arena *a, int argc,
    char **argv)
{
	static const char *const usage_text =
	    "usage: bdsctl discovery list [--all]\n"
	    "       bdsctl discovery approve ID --biller BLR_ID\n"
	    "       bdsctl discovery approve ID --base-url URL [--name NAME] [--type TYPE]"
	    " [--country CC]\n"
	    "       bdsctl discovery reject ID\n";
	struct rtl_approve ap = { 0 };

	if (argc >= 1 && strcmp(argv[0], "list") == 0 && (argc == 1 ||
	    (argc == 2 && strcmp(argv[1], "--all") == 0)))
		return rtl_discovery_list(cfg, d, a, argc == 2) == 0 ? 0 : 1;
	if (argc == 2 && strcmp(argv[0], "reject") == 0)
		return rtl_discovery_reject(cfg, d, a, argv[1]) == 0 ? 0 : 1;
	if (argc >= 2 && strcmp(argv[0], "approve") == 0 && argc % 2 == 0) {
		for (int i = 2; i < argc; i += 2) {
			const char **v = strcmp(argv[i], "--biller") == 0 ? &ap.biller_id :
			    strcmp(argv[i], "--base-url") == 0 ? &ap.base_url :
			    strcmp(argv[i], "--name") == 0 ? &ap.name :
			    strcmp(argv[i], "--type") == 0 ? &ap.type :
			    strcmp(argv[i], "--country") == 0 ? &ap.country : NULL;

			if (v == NULL || *v != NULL)
				goto usage;
			*v = argv[i + 1];
		}
		if ((ap.biller_id != NULL) == (ap.base_url != NULL) || (ap.biller_id != NULL &&
		    (ap.name != NULL || ap.type != NULL || ap.country != NULL)))
			goto usage;
		return rtl_discovery_approve(cfg, d, a, argv[1], &ap) == 0 ? 0 : 1;
	}
usage:
	fputs(usage_text, stderr);
	return 2;
}

static const struct cmd cmds[] = {
	{ "migrate", "apply sql/NNN_*.sql not yet applied, each in a transaction", cmd_migrate },
	{ "seed", "load development data (sql/seed/NNN_*.sql, idempotent)", cmd_seed },
	{ "jobs", "batch work run every minute (expiry of keys, throttles, sessions, events;"
	  " scheduled refresh; reconciliation)", cmd_jobs },
	{ "legal", "legal add KIND VERSION DATE | legal list: the sign-up registry", cmd_legal },
	{ "live-access", "live-access list | approve USER | deny USER [REASON]", cmd_live_access },
	{ "billing", "billing done USER: mark billing set up", cmd_billing },
	{ "signin-alerts", "accounts past the account-wide sign-in ceiling (alerted, not locked)",
	  cmd_signin_alerts },
	{ "billers", BILLERS_USAGE ": the biller catalog", cmd_billers },
	{ "bills", "bills revert ID: a PAID or PARTIALLY_PAID bill back to PENDING", cmd_bills },
	{ "keys", "keys rotate-credentials | rotate-pan: re-seal link credentials or card"
	  " numbers under the current key",
	  cmd_keys },
	{ "links", "links refresh ID | correct-reason ID --family F --reason R", cmd_links },
	{ "discovery", "discovery list [--all] | approve ID ... | reject ID: biller onboarding",
	  cmd_discovery },
};

static void
usage(FILE *f)
{
	fprintf(f, "usage: bdsctl [--config FILE] COMMAND [ARGS]\n");
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		fprintf(f, "  %-10s %s\n", cmds[i].name, cmds[i].help);
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	const char *config_path = NULL;
	struct config cfg;
	struct arena a;
	struct db *d;
	char err[512];
	int ch, rc;

	while ((ch = getopt_long(argc, argv, "+c:h", opts, NULL)) != -1) {
		switch (ch) {
		case 'c': config_path = optarg; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind >= argc) {
		usage(stderr);
		return 2;
	}
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		if (strcmp(cmds[i].name, argv[optind]) != 0)
			continue;
		/* the config's keys, and the card numbers keys rotate-pan opens */
		if (nodump() != 0) {
			fprintf(stderr, "bdsctl: core dumps cannot be turned off\n");
			return 1;
		}
		if (config_load(&cfg, config_path, err, sizeof(err)) != 0) {
			fprintf(stderr, "bdsctl: %s\n", err);
			return 1;
		}
		if ((d = db_new(cfg.database_url)) == NULL || db_ensure(d) != 0) {
			fprintf(stderr, "bdsctl: database: %s\n",
			    d != NULL ? db_errmsg(d) : "out of memory");
			db_free(d);
			config_free(&cfg);
			return 1;
		}
		arena_init(&a);
		rc = cmds[i].fn(&cfg, d, &a, argc - optind - 1, argv + optind + 1);
		arena_free(&a);
		db_free(d);
		config_free(&cfg);
		return rc;
	}
	fprintf(stderr, "bdsctl: unknown command %s\n", argv[optind]);
	usage(stderr);
	return 2;
}
