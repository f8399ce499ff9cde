/*
 * The engine of anonymous sandboxes: who may see one, the evaluation
 * proof's claims, and the sweeps (the expiry warning, the deletion).
 */
#include <string.h>

#include "bills/bills.h"
#include "core/arena.h"
#include "core/auth.h"
#include "core/config.h"
#include "core/crypto.h"
#include "core/db.h"
#include "core/errors.h"
#include "core/json.h"
#include "core/log.h"
#include "core/req.h"
#include "core/sweep.h"
#include "events/events.h"
#include "iam/iam_clients.h"
#include "links/links.h"
#include "sandboxes/sandboxes.h"
#include "webhooks/webhooks.h"

static int
not_found(struct req *r, const char *id)
{
	return api_error(r, 404, ERR_SANDBOX_NOT_FOUND, NULL, "no sandbox %s", id);
}

int
sandboxes_get_or_reply(struct req *r, const char *id, int jwt_ok, struct sandboxes_row *s)
{
	int rc;

	if (!crypto_id_valid(id, SANDBOXES_PREFIX, 0))
		return not_found(r, id);
	if ((rc = sandboxes_store_get(r, id, 0, s)) < 0)
		return api_db_error(r);
	if (rc == 0 || s->expired)
		return not_found(r, id);
	if (r->client_id != NULL)	/* an API key: its client, in the sandbox */
		return strcmp(s->client_id, r->client_id) == 0 &&
		    strcmp(r->env, "sandbox") == 0 ? 0 : not_found(r, id);
	if (!jwt_ok || r->user_id == NULL)
		return not_found(r, id);
	/* the developer's JWT: the client must be theirs now */
	if ((rc = iam_clients_owned(r, s->client_id, r->user_id)) < 0)
		return api_db_error(r);
	return rc == 1 ? 0 : not_found(r, id);
}

/* The earlier (later) of two ISO 8601 UTC times of one format; NULL ones
 * lose. */
static const char *
iso_pick(const char *a, const char *b, int later)
{
	if (a == NULL)
		return b;
	if (b == NULL)
		return a;
	return (strcmp(a, b) > 0) == later ? a : b;
}

struct json_object *
sandboxes_claims(struct req *r, const struct sandboxes_row *s)
{
	struct json_object *c = json_obj(r->arena);
	struct bills_sync_stats st;
	struct webhooks_acks ak;
	const char *lfirst, *llast, *first, *last;
	long long links;

	if (links_activity(r, s->client_id, "sandbox", &links, &lfirst, &llast) != 0 ||
	    bills_sync_stats(r, s->client_id, "sandbox", &st) != 0 ||
	    webhooks_acknowledged(r, s->client_id, "sandbox", &ak) != 0)
		return NULL;
	first = iso_pick(iso_pick(lfirst, st.first_at, 0), ak.first_at, 0);
	last = iso_pick(iso_pick(llast, st.last_at, 1), ak.last_at, 1);
	json_set_str(c, "iss", r->cfg->jwt_issuer);
	json_set_str(c, "sub", s->id);
	json_set_int(c, "iat", auth_now());
	json_set_str(c, "client_id", s->client_id);
	json_set_int(c, "links_made", links);
	json_set_int(c, "bills_synced", st.bills);
	json_set_int(c, "cursor_loops_completed", st.cycles);
	json_set_int(c, "webhook_deliveries_acknowledged", ak.count);
	json_set(c, "event_types_seen", json_object_get(ak.types));
	json_set_str(c, "first_activity_at", first);	/* null: nothing done yet */
	json_set_str(c, "last_activity_at", last);
	return c;
}

/* The data.object of a sandbox's events. */
static struct json_object *
event_object(struct req *r, const struct sandboxes_row *s)
{
	struct json_object *o = json_obj(r->arena);

	json_set_str(o, "id", s->id);
	json_set_str(o, "object", "sandbox");
	json_set_str(o, "sandbox_id", s->id);
	json_set_str(o, "client_id", s->client_id);
	return o;
}

/* ---- sweeps ---- */

/* One batch of each sweep (core/sweep.h): the rows handled, or -1. */
static long long
warn_batch(struct req *r, int limit)
{
	struct sandboxes_row *rows;
	int n;

	if ((n = sandboxes_store_expiring(r, limit, &rows)) < 0)
		return -1;
	for (int i = 0; i < n; i++) {
		struct json_object *o = event_object(r, &rows[i]);

		json_set_str(o, "expires_at", rows[i].expires_at);
		json_set_str(o, "created_at", rows[i].created_at);
		if (events_emit(r, rows[i].client_id, "sandbox", "sandbox.expiring", o,
		    NULL) == NULL)
			return -1;
	}
	return n;
}

/* The client goes with everything that cascades from it (the sandbox row,
 * keys, subscriptions and inbox, links, bills, events and deliveries...)
 * and what the bills keep beside it. */
static long long
delete_batch(struct req *r, int limit)
{
	struct sandboxes_row *rows;
	int n;

	if ((n = sandboxes_store_expired(r, limit, &rows)) < 0)
		return -1;
	for (int i = 0; i < n; i++) {
		if (bills_client_forget(r, rows[i].client_id) != 0 ||
		    iam_clients_remove_unowned(r, rows[i].client_id) < 0)
			return -1;
		log_msg("info", "sandbox %s expired: client %s deleted", rows[i].id,
		    rows[i].client_id);
	}
	return n;
}

long long
sandboxes_warn_due(const struct config *cfg, struct db *d, struct arena *a)
{
	return sweep_batches(cfg, d, a, SANDBOXES_SWEEP_BATCH, 0, warn_batch);
}

long long
sandboxes_delete_expired(const struct config *cfg, struct db *d, struct arena *a)
{
	return sweep_batches(cfg, d, a, SANDBOXES_SWEEP_BATCH, 0, delete_batch);
}

/* ---- the claim's event ---- */

const char *
sandboxes_claimed_emit(struct req *r, const struct sandboxes_row *s,
    const char *previous_key_expires_at)
{
	struct json_object *o = event_object(r, s);

	json_set_str(o, "claimed_at", s->claimed_at);
	json_set_str(o, "previous_key_expires_at", previous_key_expires_at);
	return events_emit(r, s->client_id, "sandbox", "sandbox.claimed", o, NULL);
}
