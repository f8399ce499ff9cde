/* Many links at once through links_create (see fleet.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "core/arena.h"
#include "core/config.h"
#include "core/crypto.h"
#include "core/db.h"
#include "core/req.h"
#include "links/links.h"
#include "fleet.h"
#include "harness.h"

#define FLEET_BATCH 100

void
fleet_links(const char *client_id, const char *env, const char *biller_id,
    const char *user_prefix, int first, size_t n, char **ids)
{
	struct config cfg;
	struct arena a;
	struct db *d;
	struct req r;
	char err[256];

	ck_assert_int_eq(crypto_setup(), 0);
	ck_assert_msg(config_load(&cfg, harness_config_path(), err, sizeof(err)) == 0, "%s", err);
	ck_assert_ptr_nonnull(d = db_new(harness_database_url()));
	for (size_t done = 0; done < n;) {
		arena_init(&a);
		req_init(&r, &cfg, d, &a, "fleet");
		ck_assert_int_eq(db_begin(d), 0);
		for (size_t k = 0; k < FLEET_BATCH && done < n; k++, done++) {
			char user[128], name[16], pass[16];
			struct links_new ln = { 0 };
			struct links_row row;
			int c = first + (int)done;

			snprintf(user, sizeof(user), "%s-%d", user_prefix, c);
			snprintf(name, sizeof(name), "cust%05d", c);
			snprintf(pass, sizeof(pass), "pw-cust%05d", c);
			ln.client_id = client_id;
			ln.environment = env;
			ln.client_user_id = user;
			ln.biller_id = biller_id;
			ln.username = name;
			ln.password = pass;
			ck_assert_msg(links_create(&r, &ln, &row) == 0, "links_create: %s",
			    db_errmsg(d));
			if (ids != NULL)
				ids[done] = strdup(row.id);
		}
		ck_assert_int_eq(db_commit(d), 0);
		arena_free(&a);
	}
	db_free(d);
	config_free(&cfg);
}
