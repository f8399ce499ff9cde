/* The credential vault's key ring (see vault.h). */
#include <stdio.h>
#include <string.h>

#include <sodium.h>

#include "core/arena.h"
#include "core/config.h"
#include "core/crypto.h"
#include "core/vault.h"

#define VAULT_LEGACY_ID	"secret_key.v1"
#define VAULT_ID_MAX	64

const char *
vault_key_id(const struct config *cfg)
{
	return cfg->credential_key_id != NULL && cfg->credential_key_id[0] != '\0' ?
	    cfg->credential_key_id : VAULT_LEGACY_ID;
}

/* The current key: credential_key when given, else secret_key. */
static const unsigned char *
current_key(const struct config *cfg)
{
	return cfg->credential_key_set ? cfg->credential_key : cfg->secret_key;
}

/*
 * The next "id=hex" entry of credential_keys_old at *s into id and key;
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

static const char *
ring_old(const struct config *cfg)
{
	return cfg->credential_keys_old != NULL ? cfg->credential_keys_old : "";
}

/*
 * The key named id into out: the current one, one of credential_keys_old,
 * or the legacy secret_key. 0 found, -1 not in the ring (or a bad entry).
 */
static int
key_find(const struct config *cfg, const char *id, unsigned char out[32])
{
	const char *s = ring_old(cfg);
	char oid[VAULT_ID_MAX + 1];
	int rc;

	if (strcmp(id, vault_key_id(cfg)) == 0) {
		memcpy(out, current_key(cfg), 32);
		return 0;
	}
	while ((rc = ring_next(&s, oid, out)) == 1)
		if (strcmp(oid, id) == 0)
			return 0;
	if (rc == 0 && strcmp(id, VAULT_LEGACY_ID) == 0) {
		memcpy(out, cfg->secret_key, 32);
		return 0;
	}
	return -1;
}

const char *
vault_seal_hex(struct arena *a, const struct config *cfg, const char *ad, const void *msg,
    size_t len)
{
	unsigned char *sealed;
	size_t slen;

	if ((sealed = crypto_seal(a, current_key(cfg), msg, len, ad, &slen)) == NULL)
		return NULL;
	return crypto_hex_encode(a, sealed, slen);
}

int
vault_open_hex(struct arena *a, const struct config *cfg, const char *key_id,
    const char *hex, const char *ad, unsigned char **msg, size_t *len)
{
	unsigned char key[32], *sealed;
	size_t slen = strlen(hex) / 2;
	int rc;

	if (key_id == NULL || strlen(hex) % 2 != 0 || key_find(cfg, key_id, key) != 0)
		return -1;
	sealed = arena_alloc(a, slen + 1);
	rc = crypto_hex_decode(hex, sealed, slen) == 0 &&
	    crypto_open(a, key, sealed, slen, ad, msg, len) == 0 ? 0 : -1;
	sodium_memzero(key, sizeof(key));
	return rc;
}

int
vault_check(const struct config *cfg, char *err, size_t errlen)
{
	const char *s = ring_old(cfg), *id = vault_key_id(cfg);
	char oid[VAULT_ID_MAX + 1];
	unsigned char key[32];
	int rc;

	if (strlen(id) > VAULT_ID_MAX || strpbrk(id, "=,") != NULL) {
		snprintf(err, errlen, "credential_key_id: at most %d characters, no '=' or ','",
		    VAULT_ID_MAX);
		return -1;
	}
	if (strcmp(id, VAULT_LEGACY_ID) != 0 && !cfg->credential_key_set) {
		snprintf(err, errlen, "credential_key_id %s needs credential_key", id);
		return -1;
	}
	while ((rc = ring_next(&s, oid, key)) == 1)
		;
	sodium_memzero(key, sizeof(key));
	if (rc < 0) {
		snprintf(err, errlen, "credential_keys_old: expected id=<64 hex>,...");
		return -1;
	}
	return 0;
}
