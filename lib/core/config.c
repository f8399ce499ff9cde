/* Defaults, then one "key = value" file, then BDS_<KEY> environment overrides. */
#include <ctype.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/config.h"
#include "core/crypto.h"
#include "core/module.h"
#include "core/vault.h"

#define F(m) offsetof(struct config, m)

/* A typo must not run production with non-production rules. */
static const char *const deployments[] = { "development", "staging", "production", NULL };

/* metering: counting on or off */
static const char *const on_off[] = { "on", "off", NULL };

/* The shared keys; a module's own are in its descriptor. */
static const struct config_key entries[] = {
	{ "database_url", CONFIG_STR, F(database_url), "dbname=bds" },
	/* reads on a standby (ROUTE_READ routes): "" reads on the primary */
	{ "db_read_url", CONFIG_STR, F(db_read_url), "" },
	{ "api_lock_timeout_ms", CONFIG_INT, F(api_lock_timeout_ms), "1000" },
	{ "socket_path", CONFIG_STR, F(socket_path), "/run/bds/api.sock" },
	{ "socket_mode", CONFIG_OCTAL, F(socket_mode), "0660" },
	{ "workers", CONFIG_INT, F(workers), "8" },
	{ "body_limit", CONFIG_LL, F(body_limit), "1048576" },
	{ "deployment", CONFIG_STR, F(deployment), "development", deployments },
	/* the error catalogue the api host serves (nginx/bds-api-host.conf) */
	{ "docs_url", CONFIG_STR, F(docs_url), "${api_url}/docs" },
	{ "log_path", CONFIG_STR, F(log_path), "" },
	{ "api_version", CONFIG_STR, F(api_version), "2026-11-01" },
	{ "cursor_key", CONFIG_KEY32, F(cursor_key), NULL, NULL, F(cursor_key_set) },
	{ "allow_private_targets", CONFIG_BOOL, F(allow_private_targets), "0" },
	{ "drain_timeout", CONFIG_INT, F(drain_timeout), "30" },
	/* usage counting in the workers (core/meter.h) */
	{ "metering", CONFIG_STR, F(metering), "on", on_off },
	{ "metering_flush_interval", CONFIG_INT, F(metering_flush_interval), "5", NULL, 0, 1, 3600 },
	{ "sql_dir", CONFIG_STR, F(sql_dir), "sql" },
	{ "jwt_seed", CONFIG_KEY32, F(jwt_seed), NULL, NULL, F(jwt_seed_set) },
	{ "jwt_issuer", CONFIG_STR, F(jwt_issuer), "https://api.bds.example" },
	{ "secret_key", CONFIG_KEY32, F(secret_key), NULL, NULL, F(secret_key_set) },
	{ "cookie_name", CONFIG_STR, F(cookie_name), "bds_session" },
	/* request path */
	{ "socket_group", CONFIG_STR, F(socket_group), "" },
	/* statement documents */
	{ "data_dir", CONFIG_STR, F(data_dir), "/var/lib/bds" },
	{ "api_url", CONFIG_STR, F(api_url), "https://api.bds.example" },
	{ "sandbox_url", CONFIG_STR, F(sandbox_url), "https://sandbox.bds.example" },
	/* retrieval: the credential vault */
	{ "credential_key_id", CONFIG_STR, F(credential_key_id), "secret_key.v1" },
	{ "credential_key", CONFIG_KEY32, F(credential_key), NULL, NULL, F(credential_key_set) },
	{ "credential_keys_old", CONFIG_STR, F(credential_keys_old), "" },
};
#undef F
#define NENTRIES (sizeof(entries) / sizeof(entries[0]))

/* Set key e, kept at base (struct config or a module's block), from text. */
static int
set_entry(void *base, const struct config_key *e, const char *val, char *err, size_t errlen)
{
	char *p = (char *)base + e->off, *end;
	long long v;

	switch (e->type) {
	case CONFIG_STR:
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
	case CONFIG_INT:
	case CONFIG_LL:
	case CONFIG_OCTAL:
		errno = 0;
		v = strtoll(val, &end, e->type == CONFIG_OCTAL ? 8 : 10);
		if (errno != 0 || end == val || *end != '\0' || v < 0 ||
		    (e->type != CONFIG_LL && v > 0x7fffffff))
			goto bad;
		if (e->max > 0 && (v < e->min || v > e->max)) {
			snprintf(err, errlen, "%s must be %lld..%lld", e->key, e->min, e->max);
			return -1;
		}
		if (e->type == CONFIG_LL)
			*(long long *)p = v;
		else
			*(int *)p = (int)v;
		return 0;
	case CONFIG_BOOL:
		if (strcmp(val, "1") == 0 || strcmp(val, "true") == 0 || strcmp(val, "yes") == 0)
			*(int *)p = 1;
		else if (strcmp(val, "0") == 0 || strcmp(val, "false") == 0 || strcmp(val, "no") == 0)
			*(int *)p = 0;
		else
			goto bad;
		return 0;
	case CONFIG_KEY32:
		if (crypto_hex_decode(val, (unsigned char *)p, 32) != 0)
			goto bad;
		*(int *)((char *)base + e->set_off) = 1;
		return 0;
	}
bad:
	snprintf(err, errlen, "bad value for %s", e->key);
	return -1;
}

/*
 * Every key in turn: the shared ones, then each module's. fn returns
 * nonzero to stop the walk (its value is returned), 0 to go on.
 */
static int
walk(struct config *c, int (*fn)(void *base, const struct config_key *, void *), void *arg)
{
	int rc;

	for (size_t i = 0; i < NENTRIES; i++)
		if ((rc = fn(c, &entries[i], arg)) != 0)
			return rc;
	for (size_t m = 0; modules[m] != NULL; m++) {
		const struct config_key *e = modules[m]->settings;

		for (; e != NULL && e->key != NULL; e++)
			if (c->module_settings == NULL || c->module_settings[m] == NULL)
				return -1;
			else if ((rc = fn(c->module_settings[m], e, arg)) != 0)
				return rc;
	}
	return 0;
}

struct one_key {
	const char	*key, *val;
	char		*err;
	size_t		 errlen;
	int		 found;
};

/* The key as written (given) names the setting name: a module's keys may
 * be written with a dot after the module's name ("pay.execution" is
 * pay_execution). */
static int
key_names(const char *given, const char *name)
{
	for (; *given != '\0' && *name != '\0'; given++, name++)
		if (*given != *name && !(*given == '.' && *name == '_'))
			return 0;
	return *given == *name;
}

static int
set_named(void *base, const struct config_key *e, void *arg)
{
	struct one_key *k = arg;

	if (!key_names(k->key, e->key))
		return 0;
	k->found = 1;
	return set_entry(base, e, k->val, k->err, k->errlen) == 0 ? 1 : -1;
}

int
config_set(struct config *c, const char *key, const char *val, char *err, size_t errlen)
{
	struct one_key k = { key, val, err, errlen, 0 };
	int rc = walk(c, set_named, &k);

	if (k.found)
		return rc > 0 ? 0 : -1;
	snprintf(err, errlen, "unknown setting %s", key);
	return -1;
}

const void *
config_module(const struct config *c, const struct module *m)
{
	for (size_t i = 0; modules[i] != NULL; i++)
		if (modules[i] == m)
			return c->module_settings != NULL ? c->module_settings[i] : NULL;
	return NULL;
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

struct load {
	char	*err;
	size_t	 errlen;
};

static int
set_default(void *base, const struct config_key *e, void *arg)
{
	struct load *l = arg;

	if (e->dflt == NULL)
		return 0;
	return set_entry(base, e, e->dflt, l->err, l->errlen);
}

static int
set_from_env(void *base, const struct config_key *e, void *arg)
{
	struct load *l = arg;
	char name[64];
	const char *v;
	size_t k;

	snprintf(name, sizeof(name), "BDS_%s", e->key);
	for (k = 4; name[k] != '\0'; k++)
		name[k] = (char)toupper((unsigned char)name[k]);
	if ((v = getenv(name)) == NULL)
		return 0;
	return set_entry(base, e, v, l->err, l->errlen);
}

/* One zeroed settings block per module (NULL for a module with none). */
static int
alloc_modules(struct config *c, char *err, size_t errlen)
{
	size_t n = 0;

	while (modules[n] != NULL)
		n++;
	if ((c->module_settings = calloc(n + 1, sizeof(void *))) == NULL)
		goto oom;
	for (size_t i = 0; i < n; i++)
		if (modules[i]->settings_size > 0 &&
		    (c->module_settings[i] = calloc(1, modules[i]->settings_size)) == NULL)
			goto oom;
	return 0;
oom:
	snprintf(err, errlen, "out of memory");
	return -1;
}

/* ---- ${key}: a string setting that names another ---- */

struct lookup {
	const char	*key;
	size_t		 len;
	const char	*val;	/* out: the string setting named key */
};

static int
find_str(void *base, const struct config_key *e, void *arg)
{
	struct lookup *l = arg;

	if (e->type != CONFIG_STR || strlen(e->key) != l->len ||
	    strncmp(e->key, l->key, l->len) != 0)
		return 0;
	l->val = *(char **)((char *)base + e->off);
	return 1;
}

struct expand {
	struct config	*c;
	char		**out;	/* per key in walk order: its expanded value */
	size_t		 i;
	char		*err;
	size_t		 errlen;
};

static int
count_key(void *base, const struct config_key *e, void *arg)
{
	(void)base;
	(void)e;
	++*(size_t *)arg;
	return 0;
}

#define REF_DEPTH	8	/* ${a} naming ${b} naming ...: deeper is a loop */

/* Write s, the value of key (klen bytes), to f with each ${name} replaced
 * by that setting's value, whose own references are replaced in turn. 0,
 * or -1 with x->err naming the key whose value holds the bad reference. */
static int
put_expanded(struct expand *x, const char *key, int klen, const char *s, int depth, FILE *f)
{
	const char *ref, *end;

	for (; (ref = strstr(s, "${")) != NULL; s = end + 1) {
		struct lookup l = { ref + 2, 0, NULL };

		if ((end = strchr(ref, '}')) == NULL) {
			snprintf(x->err, x->errlen, "%.*s: \"${\" without \"}\"", klen, key);
			return -1;
		}
		l.len = (size_t)(end - l.key);
		if (walk(x->c, find_str, &l) <= 0 || l.val == NULL) {
			snprintf(x->err, x->errlen, "%.*s: ${%.*s} names no string setting",
			    klen, key, (int)l.len, l.key);
			return -1;
		}
		if (depth >= REF_DEPTH) {
			snprintf(x->err, x->errlen, "%.*s: its references loop", klen, key);
			return -1;
		}
		fwrite(s, 1, (size_t)(ref - s), f);
		if (put_expanded(x, l.key, (int)l.len, l.val, depth + 1, f) != 0)
			return -1;
	}
	fputs(s, f);
	return 0;
}

/*
 * A string value holding ${name} gets the value of the string setting
 * name in its place, once every source is read: a default can follow
 * another key (docs_url's is ${api_url}/docs), and so can a file. Every
 * value is expanded from the values as read (into x->out), then all are
 * set (assign_ref), so the order of the keys does not matter.
 */
static int
expand_ref(void *base, const struct config_key *e, void *arg)
{
	struct expand *x = arg;
	const char *s;
	char *out = NULL;
	size_t n = 0, at = x->i++;
	FILE *f;
	int rc;

	if (e->type != CONFIG_STR)
		return 0;
	s = *(char **)((char *)base + e->off);
	if (s == NULL || strstr(s, "${") == NULL)
		return 0;
	if ((f = open_memstream(&out, &n)) == NULL) {
		snprintf(x->err, x->errlen, "out of memory");
		return -1;
	}
	rc = put_expanded(x, e->key, (int)strlen(e->key), s, 0, f);
	if (fclose(f) != 0 && rc == 0) {
		snprintf(x->err, x->errlen, "out of memory");
		rc = -1;
	}
	if (rc != 0) {
		free(out);
		return -1;
	}
	x->out[at] = out;
	return 0;
}

static int
assign_ref(void *base, const struct config_key *e, void *arg)
{
	struct expand *x = arg;
	char **p = (char **)((char *)base + e->off);

	if (x->out[x->i] != NULL) {
		free(*p);
		*p = x->out[x->i];
		x->out[x->i] = NULL;
	}
	x->i++;
	return 0;
}

static int
expand_refs(struct config *c, char *err, size_t errlen)
{
	struct expand x = { c, NULL, 0, err, errlen };
	size_t n = 0;
	int rc;

	walk(c, count_key, &n);
	if ((x.out = calloc(n, sizeof(*x.out))) == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if ((rc = walk(c, expand_ref, &x)) == 0) {
		x.i = 0;
		walk(c, assign_ref, &x);
	}
	for (size_t i = 0; i < n; i++)
		free(x.out[i]);
	free(x.out);
	return rc;
}

int
config_load(struct config *c, const char *path, char *err, size_t errlen)
{
	struct load l = { err, errlen };

	memset(c, 0, sizeof(*c));
	if (alloc_modules(c, err, errlen) != 0 || walk(c, set_default, &l) != 0)
		return -1;
	if (path != NULL && load_file(c, path, err, errlen) != 0)
		return -1;
	if (walk(c, set_from_env, &l) != 0)
		return -1;
	if (expand_refs(c, err, errlen) != 0)
		return -1;
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
	if (vault_check(c, err, errlen) != 0)
		return -1;
	if (c->socket_mode > 0777) {
		snprintf(err, errlen, "socket_mode must be a permission mode (at most 0777)");
		return -1;
	}
	return 0;
}

static int
free_string(void *base, const struct config_key *e, void *arg)
{
	(void)arg;
	if (e->type == CONFIG_STR) {
		char **p = (char **)((char *)base + e->off);

		free(*p);
		*p = NULL;
	}
	return 0;
}

void
config_free(struct config *c)
{
	if (c == NULL)
		return;
	walk(c, free_string, NULL);
	if (c->module_settings != NULL) {
		for (size_t i = 0; modules[i] != NULL; i++)
			free(c->module_settings[i]);
		free(c->module_settings);
		c->module_settings = NULL;
	}
}
