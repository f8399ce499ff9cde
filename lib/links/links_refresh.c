/*
 * Links: scheduled retrieval (DOMAIN.md "Connectors and retrieval").
 * Each link is refreshed every
 * refresh_interval_s, the next time drawn within ± refresh_jitter_pct so
 * links spread over the day; `bdsctl jobs` queues the links that are due.
 * A refresh that fails (its retrieval job's attempts exhausted) waits
 * refresh_backoff_s, doubled per failure in a row, capped at
 * refresh_backoff_max_s. Transient portal failures for longer than
 * degraded_after_s move the link to DISCONNECTED credentials_rejected /
 * CONNECTION_DEGRADED. At most biller_max_sessions retrievals or logins
 * talk to one portal biller at once: each holds one of its advisory-lock
 * slots for its transaction. Operators: `bdsctl links refresh ID` (no
 * 10-minute throttle) and `bdsctl links correct-reason` (the spec's
 * link.failure_reason_corrected, the link itself unchanged).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/arena.h"
#include "core/config.h"
#include "core/db.h"
#include "core/errcodes.h"
#include "core/jobq.h"
#include "core/json.h"
#include "core/req.h"
#include "core/sweep.h"
#include "events/events.h"
#include "links/links.h"

#define DUE_BATCH	1000

enum due_col { DU_CLIENT, DU_ENV, DU_ID };
enum fix_col { FX_CLIENT, FX_ENV, FX_USER, FX_BILLER, FX_STATUS, FX_DISCONNECT, FX_REJECTION,
	FX_RTL };
enum fixed_col { FD_VERSION, FD_AT };

enum {
	R_DUE, R_FAILED, R_FIND, R_FIX_LOAD, R_FIX_INSERT, R__MAX
};
static struct db_stmt stmts[R__MAX] = {
	/* the links due, marked to be tried again after the backoff cap
	 * should their job never finish; the job's outcome sets the real time */
	[R_DUE] = { "links_refresh_due",
	    "UPDATE links l SET next_sync_at = now() + make_interval(secs => $1::int)"
	    " FROM (SELECT client_id, id FROM links WHERE status = 'ACTIVE'"
	    "  AND next_sync_at <= now() ORDER BY next_sync_at LIMIT $2::int"
	    "  FOR UPDATE SKIP LOCKED) d"
	    " WHERE l.client_id = d.client_id AND l.id = d.id"
	    " RETURNING l.client_id, l.environment, l.id" },
	/* $3 dead: the refresh failed (backoff); else an attempt that will
	 * be retried. Returns whether the link has failed for long enough
	 * to be degraded. */
	[R_FAILED] = { "links_refresh_failed",
	    "UPDATE links SET sync_status = 'error', last_attempt_at = now(),"
	    " failing_since = coalesce(failing_since, now()),"
	    " refresh_failures = refresh_failures + CASE WHEN $3::boolean THEN 1 ELSE 0 END,"
	    " next_sync_at = CASE WHEN $3::boolean THEN now() + make_interval(secs =>"
	    "  least($5::double precision, $4::double precision * 2 ^ least(refresh_failures, 20)))"
	    "  ELSE next_sync_at END"
	    " WHERE " LINKS_BY_ID("", " AND status = 'ACTIVE'")
	    " RETURNING coalesce(failing_since, now()) <= now() - make_interval(secs => $6::int)" },
	[R_FIND] = { "links_refresh_find",
	    "SELECT client_id, environment, status FROM links WHERE id = $1" },
	[R_FIX_LOAD] = { "links_fix_load",
	    "SELECT l.client_id, l.environment, l.client_user_id, l.biller_id, l.status,"
	    " l.disconnect_reason, l.credential_rejection_reason, t.request_to_link_id"
	    " FROM links l LEFT JOIN link_tokens t"
	    "  ON t.client_id = l.client_id AND t.id = l.link_token_id"
	    " WHERE l.id = $1 FOR UPDATE OF l" },
	[R_FIX_INSERT] = { "links_fix_insert",
	    "INSERT INTO link_reason_corrections (client_id, link_id, target_family,"
	    " correction_version, corrected_reason, original_reason)"
	    " SELECT $1, $2, $3, coalesce(max(correction_version), 0) + 1, $4, $5"
	    "  FROM link_reason_corrections"
	    "  WHERE client_id = $1 AND link_id = $2 AND target_family = $3"
	    " RETURNING correction_version, " DB_ISO("corrected_at") },
};
const struct db_stmt_set links_refresh_stmt_set = { "links_refresh", stmts, R__MAX };

/* One batch of due links (core/sweep.h): the retrievals queued, or -1. */
static long long
due_batch(struct req *r, int limit)
{
	const char *p[2] = { arena_printf(r->arena, "%d", links_settings(r->cfg)->refresh_backoff_max_s),
	    arena_printf(r->arena, "%d", limit) };
	PGresult *res;

	if ((res = db_query(r, &stmts[R_DUE], 2, p)) == NULL)
		return -1;
	for (int i = 0; i < PQntuples(res); i++)
		if (jobq_add(r, "retrieval", PQgetvalue(res, i, DU_CLIENT),
		    PQgetvalue(res, i, DU_ENV), PQgetvalue(res, i, DU_ID), NULL, 0) != 0)
			return -1;
	return PQntuples(res);
}

long long
links_refresh_due(const struct config *cfg, struct db *d, struct arena *a)
{
	return sweep_batches(cfg, d, a, DUE_BATCH, 0, due_batch);
}

int
links_retrieval_failed(struct req *r, const char *client_id, const char *link_id, int dead)
{
	const struct config *c = r->cfg;
	const char *p[6] = { client_id, link_id, dead ? "true" : "false",
	    arena_printf(r->arena, "%d", links_settings(c)->refresh_backoff_s),
	    arena_printf(r->arena, "%d", links_settings(c)->refresh_backoff_max_s),
	    arena_printf(r->arena, "%d", links_settings(c)->degraded_after_s) };
	PGresult *res;

	if ((res = db_query(r, &stmts[R_FAILED], 6, p)) == NULL)
		return -1;
	if (PQntuples(res) != 1 || strcmp(PQgetvalue(res, 0, 0), "t") != 0)
		return 0;
	return links_disconnect(r, client_id, link_id, "credentials_rejected",
	    ERR_CONNECTION_DEGRADED) < 0 ? -1 : 0;
}

int
links_refresh_admin(const struct config *cfg, struct db *d, struct arena *a, const char *id)
{
	struct req r;
	const char *p[1];
	PGresult *res;

	req_init_operator(&r, cfg, d, a);
	if ((p[0] = links_id_canonical(&r, id)) == NULL) {
		fprintf(stderr, "bdsctl: links: %s is not a link id\n", id);
		return -1;
	}
	if ((res = db_exec(d, a, &stmts[R_FIND], 1, p)) == NULL)
		goto db_fail;
	if (PQntuples(res) != 1) {
		fprintf(stderr, "bdsctl: links: no link %s\n", p[0]);
		return -1;
	}
	if (strcmp(PQgetvalue(res, 0, 2), "ACTIVE") != 0) {
		fprintf(stderr, "bdsctl: links: link %s is %s; only an ACTIVE link is refreshed"
		    " (a DISCONNECTED one is repaired in update mode)\n", p[0],
		    PQgetvalue(res, 0, 2));
		return -1;
	}
	if (jobq_add(&r, "retrieval", PQgetvalue(res, 0, 0), PQgetvalue(res, 0, 1), p[0],
	    NULL, 0) != 0)
		goto db_fail;
	printf("links: retrieval of %s queued\n", p[0]);
	return 0;
db_fail:
	fprintf(stderr, "bdsctl: links: database: %s\n", db_errmsg(d));
	return -1;
}

/* The reasons a family's correction may name. */
static int
reason_ok(const char *family, const char *reason)
{
	static const char *const rejected[] = { ERR_INVALID_CREDENTIALS, ERR_CONNECTION_DEGRADED,
		NULL };
	static const char *const reaped[] = { "expired", "credentials_rejected", "revoked",
		NULL };
	const char *const *set = strcmp(family, "credentials_rejected_reason") == 0 ? rejected :
	    strcmp(family, "reaped_reason") == 0 ? reaped : NULL;

	for (size_t i = 0; set != NULL && set[i] != NULL; i++)
		if (strcmp(set[i], reason) == 0)
			return 1;
	return 0;
}

/* link.failure_reason_corrected for the loaded link (res row 0). */
static int
fix_emit(struct req *r, PGresult *res, const char *link_id, const char *family,
    const char *reason, const char *original, PGresult *fixed)
{
	struct json_object *o = json_obj(r->arena);

#define COL(c) (PQgetisnull(res, 0, (c)) ? NULL : PQgetvalue(res, 0, (c)))
	json_set_str(o, "id", link_id);
	json_set_str(o, "object", "link");
	json_set_str(o, "user_id", COL(FX_USER));
	json_set_str(o, "biller_id", COL(FX_BILLER));
	json_set_str(o, "target_family", family);
	json_set_str(o, "corrected_reason", reason);
	json_set_int(o, "correction_version", atoll(PQgetvalue(fixed, 0, FD_VERSION)));
	json_set_str(o, "corrected_at", PQgetvalue(fixed, 0, FD_AT));
	json_set_str(o, "target_original_reason", original);
	json_set_str(o, "original_credentials_rejected_reason", COL(FX_REJECTION));
	json_set_str(o, "original_reaped_reason", COL(FX_DISCONNECT));
	json_set_str(o, "link_request_id", COL(FX_RTL));
	return events_emit(r, COL(FX_CLIENT), COL(FX_ENV), "link.failure_reason_corrected", o,
	    NULL) != NULL ? 0 : -1;
#undef COL
}

int
links_correct_reason(const struct config *cfg, struct db *d, struct arena *a, const char *id,
    const char *family, const char *reason)
{
	const char *p[5], *original;
	PGresult *res, *fixed;
	struct req r;
	int col;

	req_init_operator(&r, cfg, d, a);
	if (!reason_ok(family, reason)) {
		fprintf(stderr, "bdsctl: links: --family credentials_rejected_reason takes"
		    " INVALID_CREDENTIALS or CONNECTION_DEGRADED; --family reaped_reason takes"
		    " expired, credentials_rejected or revoked\n");
		return -1;
	}
	if ((p[0] = links_id_canonical(&r, id)) == NULL) {
		fprintf(stderr, "bdsctl: links: %s is not a link id\n", id);
		return -1;
	}
	if (db_begin(d) != 0 || (res = db_exec(d, a, &stmts[R_FIX_LOAD], 1, p)) == NULL)
		goto db_fail;
	/* the family's current reason: what is corrected */
	col = strcmp(family, "reaped_reason") == 0 ? FX_DISCONNECT : FX_REJECTION;
	if (PQntuples(res) != 1 || PQgetisnull(res, 0, col)) {
		fprintf(stderr, "bdsctl: links: %s %s\n", p[0], PQntuples(res) != 1 ?
		    "is not a link" : "has no failure reason of that family to correct");
		db_rollback(d);
		return -1;
	}
	original = PQgetvalue(res, 0, col);
	p[1] = p[0];
	p[0] = PQgetvalue(res, 0, FX_CLIENT);
	p[2] = family;
	p[3] = reason;
	p[4] = original;
	if ((fixed = db_exec(d, a, &stmts[R_FIX_INSERT], 5, p)) == NULL ||
	    PQntuples(fixed) != 1 || fix_emit(&r, res, p[1], family, reason, original, fixed) != 0 ||
	    db_commit(d) != 0)
		goto db_fail;
	printf("links: %s %s corrected to %s (correction %s)\n", p[1], family, reason,
	    PQgetvalue(fixed, 0, FD_VERSION));
	return 0;
db_fail:
	fprintf(stderr, "bdsctl: links: database: %s\n", db_errmsg(d));
	db_rollback(d);
	return -1;
}
