/*
 * Links: the credential vault (core/vault.h). A link's biller credentials
 * and the portal's "remember this device" token are one JSON object
 * {"u", "p", "d"?} sealed under the ring's current key with the link id as
 * associated data (a value copied to another link fails to open) and the
 * key's id beside it, so `bdsctl keys rotate-credentials` can re-seal every
 * row. They are opened only in bds-jobs (retrieval) and bdsctl (rotation),
 * wiped after use, and dropped when the link is revoked.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>
#include <sodium.h>

#include "core/arena.h"
#include "core/config.h"
#include "core/db.h"
#include "core/json.h"
#include "core/log.h"
#include "core/req.h"
#include "core/vault.h"
#include "links/links.h"

enum secret_col { S_SEALED, S_KEY_ID, S_REFRESH_COUNT, S_REPAIRS, S__MAX };

enum { V_SECRETS, V_RESEAL, V_STALE, V__MAX };
static struct db_stmt stmts[V__MAX] = {
	/* The row locked to the end of the caller's transaction: a connect
	 * job's apply (a revoke waits for the repair, not past it). A
	 * retrieval's fetch runs it outside any transaction: read and let go,
	 * no lock while the biller answers (the jobs claim keeps two runs of
	 * one link apart). NO KEY: the foreign-key checks of rows that name
	 * the link (exchange, tokens) do not wait. */
	[V_SECRETS] = { "links_vault_secrets",
	    "SELECT encode(credentials, 'hex'), credentials_key_id, refresh_count, repairs"
	    " FROM links"
	    " WHERE " LINKS_BY_ID("", "") " FOR NO KEY UPDATE" },
	[V_RESEAL] = { "links_vault_reseal",
	    "UPDATE links SET credentials = decode($3, 'hex'), credentials_key_id = $4"
	    " WHERE " LINKS_BY_ID("", " AND credentials IS NOT NULL") },
	/* rows not under the current key, a batch at a time (core/vault.h's
	 * vault_rotate); a row a runner holds is taken on the next pass */
	[V_STALE] = { "links_vault_stale",
	    "SELECT client_id, id, encode(credentials, 'hex'), credentials_key_id FROM links"
	    " WHERE credentials IS NOT NULL AND credentials_key_id IS DISTINCT FROM $1"
	    "  AND id > $2 ORDER BY id LIMIT $3::int FOR UPDATE SKIP LOCKED" },
};
const struct db_stmt_set links_vault_stmt_set = { "links_vault", stmts, V__MAX };

const char *
links_vault_seal(struct req *r, const char *link_id, const char *username,
    const char *password, const char *device_token)
{
	struct json_object *o = json_obj(r->arena);
	const char *plain, *sealed;
	char *copy;
	size_t len;

	json_set_str(o, "u", username != NULL ? username : "");
	json_set_str(o, "p", password != NULL ? password : "");
	if (device_token != NULL)
		json_set_str(o, "d", device_token);
	plain = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
	len = strlen(plain);
	copy = arena_alloc(r->arena, len + 1);
	memcpy(copy, plain, len + 1);
	/* json-c keeps its own copies: drop them before sealing ours */
	json_set_str(o, "u", "");
	json_set_str(o, "p", "");
	json_set_str(o, "d", "");
	sealed = vault_seal_hex(r->arena, r->cfg, link_id, copy, len);
	sodium_memzero(copy, len);
	return sealed;
}

const char *
links_vault_key_id(struct req *r)
{
	return vault_key_id(r->cfg);
}

/* A copy of o's member k in the arena, its length in *n; NULL when absent. */
static const char *
take(struct req *r, struct json_object *o, const char *k, size_t *n)
{
	const char *v = json_get_str(o, k);

	if (v == NULL)
		return NULL;
	*n = strlen(v);
	v = arena_strdup(r->arena, v);
	json_set_str(o, k, "");
	return v;
}

/* Open one sealed row into c: 1, or -1 when it does not open. */
static int
vault_open(struct req *r, const char *link_id, const char *key_id, const char *hex,
    struct links_credentials *c)
{
	unsigned char *plain;
	struct json_object *o;
	const char *why;
	size_t plen;
	int rc = -1;

	if (vault_open_hex(r->arena, r->cfg, key_id, hex, link_id, &plain, &plen) != 0) {
		log_msg("warn", "link %s: sealed credentials do not open (key %s)", link_id,
		    key_id != NULL ? key_id : "none");
		return -1;
	}
	if ((o = json_parse(r->arena, (const char *)plain, plen, &why)) != NULL &&
	    json_get_str(o, "u") != NULL && json_get_str(o, "p") != NULL) {
		c->username = take(r, o, "u", &c->ulen);
		c->password = take(r, o, "p", &c->plen);
		c->device_token = take(r, o, "d", &c->dlen);
		rc = 1;
	}
	sodium_memzero(plain, plen);
	return rc;
}

int
links_credentials_open(struct req *r, const char *client_id, const char *link_id,
    struct links_credentials *c)
{
	const char *p[2] = { client_id, link_id };
	PGresult *res;

	memset(c, 0, sizeof(*c));
	if ((res = db_query(r, &stmts[V_SECRETS], 2, p)) == NULL)
		return -1;
	if (PQntuples(res) != 1 || PQgetisnull(res, 0, S_SEALED))
		return 0;
	c->refresh_count = (int)strtol(PQgetvalue(res, 0, S_REFRESH_COUNT), NULL, 10);
	c->repairs = (int)strtol(PQgetvalue(res, 0, S_REPAIRS), NULL, 10);
	return vault_open(r, link_id, PQgetisnull(res, 0, S_KEY_ID) ? NULL :
	    PQgetvalue(res, 0, S_KEY_ID), PQgetvalue(res, 0, S_SEALED), c);
}

void
links_credentials_wipe(struct links_credentials *c)
{
	if (c->username != NULL)
		sodium_memzero((char *)c->username, c->ulen);
	if (c->password != NULL)
		sodium_memzero((char *)c->password, c->plen);
	if (c->device_token != NULL)
		sodium_memzero((char *)c->device_token, c->dlen);
	c->username = c->password = c->device_token = NULL;
}

int
links_credentials_device_set(struct req *r, const char *client_id, const char *link_id,
    const char *device_token)
{
	struct links_credentials c;
	const char *p[4] = { client_id, link_id, NULL, vault_key_id(r->cfg) };
	int rc;

	if ((rc = links_credentials_open(r, client_id, link_id, &c)) <= 0)
		return rc == 0 ? 0 : -1;
	p[2] = links_vault_seal(r, link_id, c.username, c.password, device_token);
	links_credentials_wipe(&c);
	if (p[2] == NULL)
		return -1;
	return db_exec_count(r->db, r->arena, &stmts[V_RESEAL], 4, p) < 0 ? -1 : 0;
}

int
links_vault_rotate(const struct config *cfg, struct db *d, struct arena *a)
{
	struct vault_ring ring;

	vault_ring_credentials(cfg, &ring);
	return vault_rotate(d, a, &ring, &stmts[V_STALE], &stmts[V_RESEAL], "credentials");
}
