/* Defaults, then one "key = value" file, then BDS_<KEY> environment overrides. */
#include <ctype.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/config.h"
#include "core/crypto.h"
#include "core/vault.h"

enum ctype { C_STR, C_INT, C_LL, C_BOOL, C_OCTAL, C_KEY32 };

#define F(m) offsetof(struct config, m)

struct centry {
	const char		*key;
	enum ctype		 type;
	size_t			 off;
	const char		*dflt;
	const char *const	*oneof;		/* C_STR: allowed values, or NULL */
	size_t			 set_off;	/* C_KEY32: int flag set when given */
};

/* A typo must not run production with non-production rules. */
static const char *const deployments[] = { "development", "staging", "production", NULL };
static const char *const billings[] = { "manual", "none", NULL };
static const char *const transports[] = { "spool", "smtp", NULL };

static const struct centry entries[] = {
	{ "database_url", C_STR, F(database_url), "dbname=bds" },
	{ "api_lock_timeout_ms", C_INT, F(api_lock_timeout_ms), "1000" },
	{ "socket_path", C_STR, F(socket_path), "/run/bds/api.sock" },
	{ "socket_mode", C_OCTAL, F(socket_mode), "0660" },
	{ "workers", C_INT, F(workers), "8" },
	{ "body_limit", C_LL, F(body_limit), "1048576" },
	{ "deployment", C_STR, F(deployment), "development", deployments },
	{ "docs_url", C_STR, F(docs_url), "https://docs.bds.example" },
	{ "log_path", C_STR, F(log_path), "" },
	{ "api_version", C_STR, F(api_version), "2026-11-01" },
	{ "cursor_key", C_KEY32, F(cursor_key), NULL, NULL, F(cursor_key_set) },
	{ "allow_private_targets", C_BOOL, F(allow_private_targets), "0" },
	{ "drain_timeout", C_INT, F(drain_timeout), "30" },
	{ "sql_dir", C_STR, F(sql_dir), "sql" },
	{ "jwt_seed", C_KEY32, F(jwt_seed), NULL, NULL, F(jwt_seed_set) },
	{ "jwt_issuer", C_STR, F(jwt_issuer), "https://api.bds.example" },
	{ "secret_key", C_KEY32, F(secret_key), NULL, NULL, F(secret_key_set) },
	{ "billing", C_STR, F(billing), "manual", billings },
	{ "cookie_name", C_STR, F(cookie_name), "bds_session" },
	{ "cookie_secure", C_BOOL, F(cookie_secure), "1" },
	{ "mail_transport", C_STR, F(mail_transport), "spool", transports },
	{ "mail_spool_dir", C_STR, F(mail_spool_dir), "var/mail" },
	{ "mail_from", C_STR, F(mail_from), "Bill Data Service <no-reply@bds.example>" },
	{ "smtp_url", C_STR, F(smtp_url), "smtp://127.0.0.1:25" },
	{ "smtp_user", C_STR, F(smtp_user), "" },
	{ "smtp_password", C_STR, F(smtp_password), "" },
	{ "smtp_timeout", C_INT, F(smtp_timeout), "30" },
	{ "webhook_retry_schedule", C_STR, F(webhook_retry_schedule),
	    "5,300,1800,7200,18000,36000,36000" },
	{ "webhook_concurrency", C_INT, F(webhook_concurrency), "64" },
	{ "webhook_batch", C_INT, F(webhook_batch), "256" },
	{ "webhook_lease", C_INT, F(webhook_lease), "120" },
	{ "webhook_test_slots", C_INT, F(webhook_test_slots), "0" },
	/* iam, request path */
	{ "clients_max", C_INT, F(clients_max), "25" },
	{ "socket_group", C_STR, F(socket_group), "" },
	/* bds-jobs, connect flow */
	{ "jobs_workers", C_INT, F(jobs_workers), "2" },
	{ "jobs_retry_schedule", C_STR, F(jobs_retry_schedule), "5,30,120,600,1800" },
	{ "jobs_poll_ms", C_INT, F(jobs_poll_ms), "1000" },
	{ "jobs_conversations", C_INT, F(jobs_conversations), "200" },
	{ "link_url", C_STR, F(link_url), "https://link.bds.example" },
	/* statement documents */
	{ "data_dir", C_STR, F(data_dir), "/var/lib/bds" },
	{ "api_url", C_STR, F(api_url), "https://api.bds.example" },
	{ "sandbox_url", C_STR, F(sandbox_url), "https://sandbox.bds.example" },
	/* retrieval: the credential vault, scheduled refresh, limits */
	{ "credential_key_id", C_STR, F(credential_key_id), "secret_key.v1" },
	{ "credential_key", C_KEY32, F(credential_key), NULL, NULL, F(credential_key_set) },
	{ "credential_keys_old", C_STR, F(credential_keys_old), "" },
	{ "refresh_interval_s", C_INT, F(refresh_interval_s), "86400" },
	{ "refresh_jitter_pct", C_INT, F(refresh_jitter_pct), "20" },
	{ "refresh_backoff_s", C_INT, F(refresh_backoff_s), "300" },
	{ "refresh_backoff_max_s", C_INT, F(refresh_backoff_max_s), "21600" },
	{ "degraded_after_s", C_INT, F(degraded_after_s), "86400" },
	{ "biller_max_sessions", C_INT, F(biller_max_sessions), "4" },
	{ "client_max_sessions", C_INT, F(client_max_sessions), "32" },
	/* requests to link and biller discovery (lib/rtl) */
	{ "rtl_expiry_days", C_INT, F(rtl_expiry_days), "30" },
	{ "discovery_hosts", C_STR, F(discovery_hosts), "" },
	/* the portal connector */
	{ "portal_connect_timeout_ms", C_INT, F(portal_connect_timeout_ms), "5000" },
	{ "portal_timeout_ms", C_INT, F(portal_timeout_ms), "30000" },
	{ "portal_since_days", C_INT, F(portal_since_days), "35" },
};
#undef F
#define NENTRIES (sizeof(entries) / sizeof(entries[0]))

static int
set_entry(struct config *c, const struct centry *e, const char *val, char *err, size_t errlen)
{
	char *p = (char *)c + e->off, *end;
	long long v;

	switch (e->type) {
	case C_STR:
		if (e->oneof != NULL) {
			size_t i;

			for (i = 0; e->oneof[i] != NULL && strcmp(e->oneof[i], val) != 0; i++)
				;
			if (e->oneof[i] == NULL)
				goto bad;
		}
		free(*(char **)p);
		if ((*(char **)p = strdup(val)) == NULL)
			goto bad;
		return 0;
	case C_INT:
	case C_LL:
	case C_OCTAL:
		errno = 0;
		v = strtoll(val, &end, e->type == C_OCTAL ? 8 : 10);
		if (errno != 0 || end == val || *end != '\0' || v < 0 ||
		    (e->type != C_LL && v > 0x7fffffff))
			goto bad;
		if (e->type == C_LL)
			*(long long *)p = v;
		else
			*(int *)p = (int)v;
		return 0;
	case C_BOOL:
		if (strcmp(val, "1") == 0 || strcmp(val, "true") == 0 || strcmp(val, "yes") == 0)
			*(int *)p = 1;
		else if (strcmp(val, "0") == 0 || strcmp(val, "false") == 0 || strcmp(val, "no") == 0)
			*(int *)p = 0;
		else
			goto bad;
		return 0;
	case C_KEY32:
		if (crypto_hex_decode(val, (unsigned char *)p, 32) != 0)
			goto bad;
		*(int *)((char *)c + e->set_off) = 1;
		return 0;
	}
bad:
	snprintf(err, errlen, "bad value for %s", e->key);
	return -1;
}

int
config_set(struct config *c, const char *key, const char *val, char *err, size_t errlen)
{
	for (size_t i = 0; i < NENTRIES; i++)
		if (strcmp(entries[i].key, key) == 0)
			return set_entry(c, &entries[i], val, err, errlen);
	snprintf(err, errlen, "unknown setting %s", key);
	return -1;
}

static char *
trim(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = '\0';
	return s;
}

static int
load_file(struct config *c, const char *path, char *err, size_t errlen)
{
	FILE *f;
	char *line = NULL;
	size_t cap = 0;
	int lineno = 0, rc = 0;

	if ((f = fopen(path, "r")) == NULL) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	/* getline: a line of any length is one line, never split in two. */
	while (rc == 0 && getline(&line, &cap, f) >= 0) {
		char *s = trim(line), *eq;
		char sub[256];

		lineno++;
		if (*s == '\0' || *s == '#')
			continue;
		if ((eq = strchr(s, '=')) == NULL) {
			snprintf(err, errlen, "%s:%d: expected key = value", path, lineno);
			rc = -1;
			break;
		}
		*eq = '\0';
		if (config_set(c, trim(s), trim(eq + 1), sub, sizeof(sub)) != 0) {
			snprintf(err, errlen, "%s:%d: %s", path, lineno, sub);
			rc = -1;
		}
	}
	free(line);
	fclose(f);
	return rc;
}

int
config_load(struct config *c, const char *path, char *err, size_t errlen)
{
	memset(c, 0, sizeof(*c));
	for (size_t i = 0; i < NENTRIES; i++)
		if (entries[i].dflt != NULL &&
		    set_entry(c, &entries[i], entries[i].dflt, err, errlen) != 0)
			return -1;
	if (path != NULL && load_file(c, path, err, errlen) != 0)
		return -1;
	for (size_t i = 0; i < NENTRIES; i++) {
		char name[64];
		const char *v;
		size_t k;

		snprintf(name, sizeof(name), "BDS_%s", entries[i].key);
		for (k = 4; name[k] != '\0'; k++)
			name[k] = (char)toupper((unsigned char)name[k]);
		if ((v = getenv(name)) != NULL &&
		    set_entry(c, &entries[i], v, err, errlen) != 0)
			return -1;
	}
	/* Keys are never generated per process: workers must agree on them. */
	if (!c->cursor_key_set || !c->jwt_seed_set || !c->secret_key_set) {
		snprintf(err, errlen, "%s is not set (64 hex characters)",
		    !c->cursor_key_set ? "cursor_key" : !c->jwt_seed_set ?
		    "jwt_seed" : "secret_key");
		return -1;
	}
	if (c->workers < 0 || c->workers > 256 || c->body_limit <= 0 ||
	    c->api_lock_timeout_ms < 1 || c->api_lock_timeout_ms > 60000) {
		snprintf(err, errlen, "workers must be 0..256, body_limit positive and"
		    " api_lock_timeout_ms 1..60000");
		return -1;
	}
	if (c->refresh_interval_s < 60 || c->refresh_jitter_pct > 50 ||
	    c->biller_max_sessions < 1 || c->biller_max_sessions > 1000 ||
	    c->client_max_sessions < 1 || c->client_max_sessions > 10000 ||
	    c->jobs_conversations < 1 || c->jobs_conversations > 10000) {
		snprintf(err, errlen, "refresh_interval_s must be at least 60, refresh_jitter_pct"
		    " at most 50, biller_max_sessions 1..1000, client_max_sessions and"
		    " jobs_conversations 1..10000");
		return -1;
	}
	if (vault_check(c, err, errlen) != 0)
		return -1;
	if (c->socket_mode > 0777) {
		snprintf(err, errlen, "socket_mode must be a permission mode (at most 0777)");
		return -1;
	}
	return 0;
}

void
config_free(struct config *c)
{
	if (c == NULL)
		return;
	for (size_t i = 0; i < NENTRIES; i++)
		if (entries[i].type == C_STR) {
			char **p = (char **)((char *)c + entries[i].off);

			free(*p);
			*p = NULL;
		}
}
