/* The credential vault's key ring (see vault.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "core/arena.h"
#include "core/config.h"
#include "core/crypto.h"
#include "core/db.h"
#include "core/vault.h"

#define VAULT_LEGACY_ID	"secret_key.v1"
#define VAULT_ID_MAX	64

const char *
vault_key_id(const struct config *cfg)
{
	return cfg->credential_key_id != NULL && cfg->credential_key_id[0] != '\0' ?
	    cfg->credential_key_id : VAULT_LEGACY_ID;
}

void
vault_ring_credentials(const struct config *cfg, struct vault_ring *ring)
{
	ring->what = "credential_key";
	ring->id = vault_key_id(cfg);
	/* credential_key when given, else secret_key */
	ring->key = cfg->credential_key_set ? cfg->credential_key : cfg->secret_key;
	ring->old = cfg->credential_keys_old != NULL ? cfg->credential_keys_old : "";
	ring->fixed_id = VAULT_LEGACY_ID;
	ring->fixed = cfg->secret_key;
}

/*
 * The next "id=hex" entry of an old-keys list at *s into id and key;
 * *s moves past it. 1 an entry, 0 the end, -1 a malformed entry.
 */
static int
ring_next(const char **s, char id[VAULT_ID_MAX + 1], unsigned char key[32])
{
	const char *eq = strchr(*s, '='), *end = strchr(*s, ',');
	char hex[65];

	if (**s == '\0')
		return 0;
	if (end == NULL)
		end = *s + strlen(*s);
	if (eq == NULL || eq > end || eq == *s || eq - *s > VAULT_ID_MAX || end - eq - 1 != 64 ||
	    (*end == ',' && end[1] == '\0'))
		return -1;
	memcpy(id, *s, (size_t)(eq - *s));
	id[eq - *s] = '\0';
	memcpy(hex, eq + 1, 64);
	hex[64] = '\0';
	*s = *end == ',' ? end + 1 : end;
	return crypto_hex_decode(hex, key, 32) == 0 ? 1 : -1;
}

/*
 * The key named id into out: the current one, an old one, or the ring's
 * fixed one. 0 found, -1 not in the ring (or a bad entry).
 */
static int
key_find(const struct vault_ring *ring, const char *id, unsigned char out[32])
{
	const char *s = ring->old;
	char oid[VAULT_ID_MAX + 1];
	int rc;

	if (strcmp(id, ring->id) == 0) {
		memcpy(out, ring->key, 32);
		return 0;
	}
	while ((rc = ring_next(&s, oid, out)) == 1)
		if (strcmp(oid, id) == 0)
			return 0;
	if (rc == 0 && ring->fixed_id != NULL && strcmp(id, ring->fixed_id) == 0) {
		memcpy(out, ring->fixed, 32);
		return 0;
	}
	return -1;
}

const char *
vault_ring_seal_hex(struct arena *a, const struct vault_ring *ring, const char *ad,
    const void *msg, size_t len)
{
	unsigned char *sealed;
	size_t slen;

	if ((sealed = crypto_seal(a, ring->key, msg, len, ad, &slen)) == NULL)
		return NULL;
	return crypto_hex_encode(a, sealed, slen);
}

int
vault_ring_open_hex(struct arena *a, const struct vault_ring *ring, const char *key_id,
    const char *hex, const char *ad, unsigned char **msg, size_t *len)
{
	unsigned char key[32], *sealed;
	size_t slen = strlen(hex) / 2;
	int rc;

	if (key_id == NULL || strlen(hex) % 2 != 0 || key_find(ring, key_id, key) != 0)
		return -1;
	sealed = arena_alloc(a, slen + 1);
	rc = crypto_hex_decode(hex, sealed, slen) == 0 &&
	    crypto_open(a, key, sealed, slen, ad, msg, len) == 0 ? 0 : -1;
	sodium_memzero(key, sizeof(key));
	return rc;
}

int
vault_ring_check(const struct vault_ring *ring, char *err, size_t errlen)
{
	const char *s = ring->old;
	char oid[VAULT_ID_MAX + 1];
	unsigned char key[32];
	int rc;

	if (strlen(ring->id) > VAULT_ID_MAX || strpbrk(ring->id, "=,") != NULL) {
		snprintf(err, errlen, "%s_id: at most %d characters, no '=' or ','", ring->what,
		    VAULT_ID_MAX);
		return -1;
	}
	while ((rc = ring_next(&s, oid, key)) == 1)
		;
	sodium_memzero(key, sizeof(key));
	if (rc < 0) {
		snprintf(err, errlen, "%ss_old: expected id=<64 hex>,...", ring->what);
		return -1;
	}
	return 0;
}

const char *
vault_seal_hex(struct arena *a, const struct config *cfg, const char *ad, const void *msg,
    size_t len)
{
	struct vault_ring ring;

	vault_ring_credentials(cfg, &ring);
	return vault_ring_seal_hex(a, &ring, ad, msg, len);
}

int
vault_open_hex(struct arena *a, const struct config *cfg, const char *key_id,
    const char *hex, const char *ad, unsigned char **msg, size_t *len)
{
	struct vault_ring ring;

	vault_ring_credentials(cfg, &ring);
	return vault_ring_open_hex(a, &ring, key_id, hex, ad, msg, len);
}

int
vault_check(const struct config *cfg, char *err, size_t errlen)
{
	struct vault_ring ring;

	vault_ring_credentials(cfg, &ring);
	if (strcmp(ring.id, VAULT_LEGACY_ID) != 0 && !cfg->credential_key_set) {
		snprintf(err, errlen, "credential_key_id %s needs credential_key", ring.id);
		return -1;
	}
	return vault_ring_check(&ring, err, errlen);
}

/* One batch of vault_rotate after the id in after (updated): how many rows
 * were re-sealed (*stuck counts those that open under no key), -1 on a
 * database failure; *more when the batch was full. */
static long long
rotate_batch(struct db *d, struct arena *a, const struct vault_ring *ring,
    struct db_stmt *stale, struct db_stmt *reseal, const char *what, char *after,
    size_t afterlen, long long *stuck, int *more)
{
	const char *p[4] = { ring->id, after, NULL };
	char batch[16];
	unsigned char *plain;
	long long n = 0;
	PGresult *res;
	size_t len;

	snprintf(batch, sizeof(batch), "%d", VAULT_ROTATE_BATCH);
	p[2] = batch;
	if (db_begin(d) != 0)
		return -1;
	if ((res = db_exec(d, a, stale, 3, p)) == NULL)
		goto fail;
	*more = PQntuples(res) == VAULT_ROTATE_BATCH;
	for (int i = 0; i < PQntuples(res); i++) {
		const char *q[4] = { PQgetvalue(res, i, 0), PQgetvalue(res, i, 1), NULL, ring->id };

		snprintf(after, afterlen, "%s", q[1]);
		if (vault_ring_open_hex(a, ring, PQgetisnull(res, i, 3) ? NULL :
		    PQgetvalue(res, i, 3), PQgetvalue(res, i, 2), q[1], &plain, &len) != 0) {
			fprintf(stderr, "bdsctl: keys: %s of %s open under no key of the ring"
			    " (key %s; left as they are)\n", what, q[1],
			    PQgetisnull(res, i, 3) ? "none" : PQgetvalue(res, i, 3));
			(*stuck)++;
			continue;
		}
		q[2] = vault_ring_seal_hex(a, ring, q[1], plain, len);
		sodium_memzero(plain, len);
		if (q[2] == NULL || db_exec_count(d, a, reseal, 4, q) != 1)
			goto fail;
		n++;
	}
	if (db_commit(d) != 0)
		goto fail;
	arena_reset(a);
	return n;
fail:
	db_rollback(d);
	return -1;
}

int
vault_rotate(struct db *d, struct arena *a, const struct vault_ring *ring,
    struct db_stmt *stale, struct db_stmt *reseal, const char *what)
{
	char after[128] = "", err[160];
	long long n, total = 0, stuck = 0;
	int more = 1;

	if (vault_ring_check(ring, err, sizeof(err)) != 0) {
		fprintf(stderr, "bdsctl: keys: %s\n", err);
		return -1;
	}
	while (more) {
		if ((n = rotate_batch(d, a, ring, stale, reseal, what, after, sizeof(after),
		    &stuck, &more)) < 0) {
			fprintf(stderr, "bdsctl: keys: database: %s\n", db_errmsg(d));
			return -1;
		}
		total += n;
	}
	printf("keys: %s re-sealed under %s: %lld\n", what, ring->id, total);
	if (stuck > 0) {
		fprintf(stderr, "bdsctl: keys: %lld row%s whose %s open under no key of the ring"
		    " (left as they are)\n", stuck, stuck == 1 ? "" : "s", what);
		return -1;
	}
	return 0;
}
