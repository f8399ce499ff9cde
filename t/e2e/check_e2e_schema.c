/*
 * The schema and the code agree: every statement of every module (the
 * modules' descriptors, core/module.h) prepares against the schema `bdsctl migrate`
 * built, on one connection, so a missing column or table, a wrong type or
 * two statements with one name fails here, not in production. The same
 * function refuses a deliberately broken statement (the test can fail), and
 * every statement set declared in lib/ is listed in a descriptor.
 * bdsctl's migrate, seed and jobs run through the modules' statements.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "core/db.h"
#include "core/module.h"
#include "core/money.h"
#include "harness.h"

static struct db *db;

static void
test_setup(void)
{
	db = db_new(harness_database_url());
	ck_assert_ptr_nonnull(db);
	ck_assert_msg(db_ensure(db) == 0, "%s", db_errmsg(db));
}

static void
test_teardown(void)
{
	db_free(db);
	db = NULL;
}

/* 1 when a descriptor holds a set of that module name. */
static int
listed(const char *module)
{
	for (const struct module *const *m = modules; *m != NULL; m++)
		for (const struct db_stmt_set *const *s = (*m)->stmt_sets; s != NULL && *s != NULL;
		    s++)
			if (strcmp((*s)->module, module) == 0)
				return 1;
	return 0;
}

START_TEST(every_statement_prepares)
{
	size_t nmod = 0, nset = 0, nstmt = 0;

	for (const struct module *const *m = modules; *m != NULL; m++, nmod++) {
		if ((*m)->stmt_sets == NULL)
			continue;
		for (const struct db_stmt_set *const *s = (*m)->stmt_sets; *s != NULL; s++, nset++) {
			const char *failed;

			ck_assert_msg(db_prepare_set(db, *s, &failed) == 0,
			    "module %s, set %s: %s does not prepare: %s", (*m)->name,
			    (*s)->module, failed, db_errmsg(db));
			nstmt += (*s)->n;
		}
	}
	/* core, events, mail, iam, webhooks at least; 13 sets before this suite */
	ck_assert_uint_ge(nmod, 5);
	ck_assert_uint_ge(nset, 13);
	ck_assert_uint_gt(nstmt, nset);
}
END_TEST

/* The check bites: a statement naming a column or table the schema lacks
 * does not prepare, and the failure names it. */
static struct db_stmt broken[] = {
	{ "schema_test_column", "SELECT no_such_column FROM users WHERE id = $1", 0 },
	{ "schema_test_table", "SELECT 1 FROM no_such_table", 0 },
	{ "schema_test_type", "SELECT id FROM users WHERE id = $1::int + 'x'", 0 },
};

START_TEST(broken_statement_fails)
{
	struct db_stmt_set set = { "schema_test", &broken[_i], 1 };
	const char *failed = NULL;

	ck_assert_int_eq(db_prepare_set(db, &set, &failed), -1);
	ck_assert_ptr_nonnull(failed);
	ck_assert_str_eq(failed, broken[_i].name);
	ck_assert_msg(db_errmsg(db)[0] != '\0', "no reason for %s", failed);
}
END_TEST

/* Two statements with one name would collide on a connection: the walk
 * must see it. */
START_TEST(duplicate_name_fails)
{
	static struct db_stmt dup[] = {
		{ "schema_test_dup", "SELECT 1", 0 },
		{ "schema_test_dup", "SELECT 2", 0 },
	};
	struct db_stmt_set set = { "schema_test", dup, 2 };
	const char *failed = NULL;

	ck_assert_int_eq(db_prepare_set(db, &set, &failed), -1);
	ck_assert_ptr_eq(failed, dup[1].name);
}
END_TEST

/*
 * Every `const struct db_stmt_set NAME = { "module", ...` in lib/ is in a
 * module's descriptor: a module that forgets its <name>_module.c fails
 * here. Walks the folder of every listed module and its subfolders.
 */
static size_t
sets_listed_in(const char *dir_in, const char *rel_in)
{
	char dir[1024], rel[256];
	struct dirent *e;
	size_t found = 0;
	DIR *d;

	/* harness_fmt's buffers rotate: keep our own copies */
	snprintf(dir, sizeof(dir), "%s", dir_in);
	snprintf(rel, sizeof(rel), "%s", rel_in);
	ck_assert_msg((d = opendir(dir)) != NULL, "cannot open %s", dir);
	while ((e = readdir(d)) != NULL) {
		size_t len = strlen(e->d_name);
		char *text, *p;

		if (e->d_name[0] == '.')
			continue;
		if (e->d_type == DT_DIR) {
			found += sets_listed_in(harness_fmt("%s/%s", dir, e->d_name),
			    harness_fmt("%s/%s", rel, e->d_name));
			continue;
		}
		if (len < 3 || strcmp(e->d_name + len - 2, ".c") != 0)
			continue;
		text = harness_slurp(harness_fmt("%s/%s", dir, e->d_name));
		ck_assert_ptr_nonnull(text);
		for (p = text; (p = strstr(p, "const struct db_stmt_set ")) != NULL; p++) {
			char *q = strchr(p, '\n'), *name, *end;

			/* declarations in headers end in ';' before any '{' */
			if ((name = strstr(p, "= { \"")) == NULL || (q != NULL && name > q))
				continue;
			name += 5;
			ck_assert_ptr_nonnull(end = strchr(name, '"'));
			*end = '\0';
			ck_assert_msg(listed(name), "lib/%s/%s: statement set \"%s\" is in"
			    " no module's descriptor", rel, e->d_name, name);
			found++;
			p = end;
		}
		free(text);
	}
	closedir(d);
	return found;
}

START_TEST(every_declared_set_is_listed)
{
	const char *src = getenv("BDS_SRCDIR") != NULL ? getenv("BDS_SRCDIR") : ".";
	size_t found = 0, nmod = 0;

	for (const struct module *const *m = modules; *m != NULL; m++, nmod++)
		found += sets_listed_in(harness_fmt("%s/lib/%s", src, (*m)->name), (*m)->name);
	ck_assert_uint_ge(nmod, 10);
	ck_assert_uint_ge(found, 40);
}
END_TEST

/*
 * Plan-proof statements (docs/DECISIONS.md): the retrieval's statements and
 * the API's lookups by a key unique on its own (a bill, a link, a token), in
 * the generic plan PostgreSQL freezes after five runs, on tables never
 * analysed (this stack's are empty), scan only the index their key names.
 * With no statistics an index leading with client_id looks as good as a
 * unique key; a plan that took one walked all of the client's bills.
 */
static const struct {
	const char	*stmt;
	const char	*indexes;	/* every index the plan may scan, ' '-separated */
} plans[] = {
	{ "bills_find", "bills_link_statement" },
	{ "bills_update", "bills_link_statement" },
	{ "bills_count", "bills_link_statement" },
	{ "bills_by_ref", "bills_link_statement" },
	{ "bills_delete", "bills_by_id" },
	{ "bills_seq", "bill_seq_pkey links_by_id" },
	{ "bills_statement_attach", "bills_link_statement" },
	{ "bills_status_link", "bills_by_id" },
	{ "bills_status_get", "bills_by_id" },
	{ "bills_status_move", "bills_by_id" },
	{ "bills_payment_find", "observed_payments_link_payment" },
	{ "bills_payment_reverse", "observed_payments_link_payment" },
	{ "bills_payment_by_ref", "bills_link_statement" },
	{ "bills_payment_by_rule", "bills_link_statement" },
	{ "bills_payment_set_bill", "observed_payments_link_payment" },
	{ "bills_payment_bill", "bills_by_id observed_payments_link_payment" },
	{ "bills_insert", "observed_payments_link_payment" },
	{ "bills_reconcile_candidates", "bills_link_statement observed_payments_link_payment" },
	{ "connector_known", "bills_link_statement" },
	{ "connector_since", "links_by_id bills_link_statement" },
	{ "connector_unstructured_sha", "portal_unstructured_pkey" },
	{ "links_retrieval", "links_by_id billers_pkey" },
	{ "links_vault_secrets", "links_by_id" },
	{ "links_sync_done", "links_by_id" },
	{ "links_disconnect", "links_by_id" },
	{ "links_completed", "links_by_id" },
	{ "links_refresh_failed", "links_by_id" },
	{ "bills_statement_get", "bills_by_id" },
	{ "bills_api_get", "bills_by_id" },
	{ "bills_api_exists", "bills_by_id" },
	{ "ls_insert", "link_tokens_by_id" },
	{ "ls_info", "link_tokens_by_id clients_pkey" },
	{ "ls_finish", "link_tokens_by_id" },
	{ "lp_extras", "link_tokens_by_id clients_pkey" },
	{ "links_revoke", "links_by_id" },
	{ "links_refresh", "links_by_id" },
	{ "lt_ticket_insert", "link_tokens_by_id" },
	{ "rtl_disc_match", "biller_discoveries_by_id" },
	{ "rtl_started", "link_tokens_by_id request_to_links_by_id" },
	{ "links_owner", "links_by_id clients_pkey" },
	/* an insights run reads one link's newest bills per account, its
	 * live insights, and its user's first bill of the biller */
	{ "insights_bills", "link_accounts_link_ref bills_account_day" },
	{ "insights_live", "insights_link_live bills_by_id" },
	{ "insights_first", "insight_billers_pkey" },
	{ "insights_oldest", "bills_account_day" },
	/* a customer message by its id; an end user's suppression and consents */
	{ "messages_get", "customer_messages_by_id" },
	{ "messages_lock", "customer_messages_by_id" },
	{ "messages_complain", "customer_messages_by_id" },
	{ "messages_suppression_get", "customer_suppressions_pkey" },
	{ "messages_suppression_delete", "customer_suppressions_pkey" },
	{ "messages_consents", "customer_consents_pkey" },
};

static struct db_stmt *
stmt_named(const char *name)
{
	for (const struct module *const *m = modules; *m != NULL; m++)
		for (const struct db_stmt_set *const *s = (*m)->stmt_sets; s != NULL && *s != NULL;
		    s++)
			for (size_t i = 0; i < (*s)->n; i++)
				if (strcmp((*s)->stmts[i].name, name) == 0)
					return &(*s)->stmts[i];
	return NULL;
}

/* 1 when w (len bytes) is one of the ' '-separated words of list. */
static int
in_list(const char *list, const char *w, size_t len)
{
	for (const char *p = list; *p != '\0'; p += strspn(p, " ")) {
		size_t n = strcspn(p, " ");

		if (n == len && strncmp(p, w, len) == 0)
			return 1;
		p += n;
	}
	return 0;
}

START_TEST(retrieval_plans_take_their_key)
{
	struct db_stmt *st = stmt_named(plans[_i].stmt);
	PGconn *c = db_conn(db);
	char sql[1024];
	PGresult *res;
	size_t off, scans = 0;
	int n;

	ck_assert_msg(st != NULL, "no statement %s", plans[_i].stmt);
	res = PQexec(c, "SET plan_cache_mode = force_generic_plan");
	ck_assert_int_eq(PQresultStatus(res), PGRES_COMMAND_OK);
	PQclear(res);
	ck_assert_msg(db_prepare(db, st) == 0, "%s: %s", st->name, db_errmsg(db));
	res = PQdescribePrepared(c, st->name);
	ck_assert_int_eq(PQresultStatus(res), PGRES_COMMAND_OK);
	n = PQnparams(res);
	PQclear(res);
	off = (size_t)snprintf(sql, sizeof(sql), "EXPLAIN EXECUTE %s", st->name);
	for (int i = 0; i < n; i++)
		off += (size_t)snprintf(sql + off, sizeof(sql) - off, "%sNULL", i ? ", " : "(");
	snprintf(sql + off, sizeof(sql) - off, "%s", n > 0 ? ")" : "");
	res = PQexec(c, sql);
	ck_assert_msg(PQresultStatus(res) == PGRES_TUPLES_OK, "%s: %s", sql, PQerrorMessage(c));
	for (int row = 0; row < PQntuples(res); row++) {
		const char *line = PQgetvalue(res, row, 0), *ix;
		size_t len;

		ck_assert_msg(strstr(line, "Seq Scan") == NULL, "%s: %s", st->name, line);
		if ((ix = strstr(line, " Scan using ")) != NULL)
			ix += strlen(" Scan using ");
		else if ((ix = strstr(line, "Bitmap Index Scan on ")) != NULL)
			ix += strlen("Bitmap Index Scan on ");
		else
			continue;
		len = strcspn(ix, " ");
		ck_assert_msg(in_list(plans[_i].indexes, ix, len), "%s scans %.*s, not %s only",
		    st->name, (int)len, ix, plans[_i].indexes);
		scans++;
	}
	ck_assert_msg(scans > 0, "%s: no index scan", st->name);
	PQclear(res);
}
END_TEST

/*
 * Delivery ids (sql/031) made by statements one after another sort in the
 * order they were made, microseconds apart (two events of one transaction:
 * the claim's tie-break), and each is a UUIDv7: version 7, RFC variant,
 * the sub-millisecond fraction below 1000.
 */
START_TEST(delivery_ids_sort_in_order)
{
	PGconn *c = db_conn(db);
	char prev[64] = "";

	for (int i = 0; i < 500; i++) {
		PGresult *res = PQexec(c, "SELECT bds_delivery_id()");
		const char *id;

		ck_assert_int_eq(PQresultStatus(res), PGRES_TUPLES_OK);
		id = PQgetvalue(res, 0, 0);
		ck_assert_uint_eq(strlen(id), 40);
		ck_assert_int_eq(strncmp(id, "dlv_", 4), 0);
		ck_assert_int_eq(id[4 + 14], '7');
		ck_assert_msg(strtol((char[]){ id[4 + 15], id[4 + 16], id[4 + 17], '\0' }, NULL,
		    16) < 1000, "fraction of %s", id);
		ck_assert_msg(strchr("89ab", id[4 + 19]) != NULL, "variant of %s", id);
		ck_assert_msg(strcmp(prev, id) < 0, "%s after %s", id, prev);
		snprintf(prev, sizeof(prev), "%s", id);
		PQclear(res);
	}
}
END_TEST

/* The last lines bdsctl wrote to bdsctl.log since offset. */
static char *
bdsctl_output(long offset)
{
	char *all = harness_slurp(harness_fmt("%s/bdsctl.log", harness_dir()));
	char *out;

	ck_assert_ptr_nonnull(all);
	ck_assert_int_le(offset, (long)strlen(all));
	out = strdup(all + offset);
	free(all);
	return out;
}

static long
bdsctl_log_size(void)
{
	char *all = harness_slurp(harness_fmt("%s/bdsctl.log", harness_dir()));
	long n = all != NULL ? (long)strlen(all) : 0;

	free(all);
	return n;
}

/* A second migrate finds everything applied; seed twice is harmless;
 * legal add/list and live-access list answer through iam_ops; jobs runs
 * each module's sweep. */
START_TEST(bdsctl_runs_through_modules)
{
	static const char *const migrate[] = { "migrate", NULL };
	static const char *const seed[] = { "seed", NULL };
	static const char *const jobs[] = { "jobs", NULL };
	static const char *const add[] = { "legal", "add", "dpa", "schema-v1", "2026-02-03",
	    NULL };
	static const char *const list[] = { "legal", "list", NULL };
	static const char *const pending[] = { "live-access", "list", NULL };
	static const char *const sweeps[] = {
		"jobs: expired idempotency keys removed: ",
		"jobs: stale sign-in throttles removed: ",
		"jobs: ended sessions removed: ",
		"jobs: expired months of events and deliveries dropped: ",
	};
	long at = bdsctl_log_size();
	PGresult *res;
	char *out;

	ck_assert_int_eq(harness_bdsctl(migrate), 0);
	out = bdsctl_output(at);
	ck_assert_msg(strstr(out, "migrate: 0 applied, ") != NULL, "bdsctl said: %s", out);
	ck_assert_msg(strstr(out, "applied 0") == NULL, "migrate applied again: %s", out);
	free(out);

	ck_assert_int_eq(harness_bdsctl(seed), 0);
	ck_assert_int_eq(harness_bdsctl(seed), 0);
	/* the seed lets sandbox keys link the simulator's billers, and no other
	 * (sandbox_portal: docs/DECISIONS.md "Environments: which connector
	 * links where") */
	res = PQexec(db_conn(db), "SELECT count(*) FILTER (WHERE sandbox_portal),"
	    " count(*) FILTER (WHERE sandbox_portal AND (connector <> 'portal'"
	    " OR base_url NOT LIKE 'http://127.0.0.1:8090/b/%')) FROM billers");
	ck_assert_int_eq(PQresultStatus(res), PGRES_TUPLES_OK);
	ck_assert_str_eq(PQgetvalue(res, 0, 0), "4");
	ck_assert_str_eq(PQgetvalue(res, 0, 1), "0");
	PQclear(res);

	at = bdsctl_log_size();
	ck_assert_int_eq(harness_bdsctl(add), 0);
	ck_assert_int_ne(harness_bdsctl(add), 0);	/* already registered */
	ck_assert_int_eq(harness_bdsctl(list), 0);
	ck_assert_int_eq(harness_bdsctl(pending), 0);
	out = bdsctl_output(at);
	ck_assert_msg(strstr(out, "registered dpa schema-v1 effective 2026-02-03\n") != NULL &&
	    strstr(out, "dpa schema-v1 is already registered") != NULL &&
	    strstr(out, "dpa      schema-v1        2026-02-03\n") != NULL &&
	    strstr(out, "0 pending\n") != NULL, "bdsctl said: %s", out);
	free(out);

	at = bdsctl_log_size();
	ck_assert_int_eq(harness_bdsctl(jobs), 0);
	out = bdsctl_output(at);
	for (size_t i = 0; i < sizeof(sweeps) / sizeof(sweeps[0]); i++)
		ck_assert_msg(strstr(out, sweeps[i]) != NULL, "no \"%s\" in: %s", sweeps[i], out);
	free(out);
}
END_TEST

/*
 * One money: the migrated bds_currency_exponent() gives every code of
 * core/money.c's table the table's exponent, and a code outside it the
 * fallback C shows it at; a UYW amount is written at four digits.
 */
START_TEST(currency_exponents_match_c)
{
	PGconn *c = db_conn(db);
	const struct money_currency *cur;
	size_t n, i;

	cur = money_currencies(&n);
	for (i = 0; i <= n; i++) {
		const char *code = i < n ? cur[i].code : "ZZZ";
		int want = i < n ? cur[i].exp : money_exponent_shown("ZZZ");
		const char *p[1] = { code };
		PGresult *res = PQexecParams(c, "SELECT bds_currency_exponent($1)", 1, NULL, p,
		    NULL, NULL, 0);

		ck_assert_msg(PQresultStatus(res) == PGRES_TUPLES_OK, "%s", PQerrorMessage(c));
		ck_assert_msg(atoi(PQgetvalue(res, 0, 0)) == want, "%s: SQL %s, C %d", code,
		    PQgetvalue(res, 0, 0), want);
		PQclear(res);
	}
	{
		PGresult *res = PQexec(c, "SELECT bds_money(1234567, 'UYW')->>'value'");

		ck_assert_int_eq(PQresultStatus(res), PGRES_TUPLES_OK);
		ck_assert_str_eq(PQgetvalue(res, 0, 0), "123.4567");
		PQclear(res);
	}
}
END_TEST

static Suite *
schema_suite(void)
{
	Suite *s = suite_create("e2e_schema");
	TCase *tc = tcase_create("schema");

	tcase_add_unchecked_fixture(tc, harness_fixture_start_default, harness_fixture_stop);
	tcase_add_checked_fixture(tc, test_setup, test_teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, every_statement_prepares);
	tcase_add_loop_test(tc, broken_statement_fails, 0, sizeof(broken) / sizeof(broken[0]));
	tcase_add_test(tc, duplicate_name_fails);
	tcase_add_test(tc, every_declared_set_is_listed);
	tcase_add_test(tc, bdsctl_runs_through_modules);
	tcase_add_test(tc, delivery_ids_sort_in_order);
	tcase_add_test(tc, currency_exponents_match_c);
	tcase_add_loop_test(tc, retrieval_plans_take_their_key, 0,
	    sizeof(plans) / sizeof(plans[0]));
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return harness_run_suite(schema_suite());
}
