#ifndef BDS_CONFIG_H
#define BDS_CONFIG_H
/*
 * Configuration: defaults, then one file of "key = value" lines ('#'
 * comments; a '.' in a key stands for '_', so a module's key reads as
 * pay.execution for pay_execution), then environment overrides BDS_<KEY>
 * (key upper-cased); then
 * ${name} in a string value becomes the string setting name's value, its
 * own references expanded in turn (docs_url's default is ${api_url}/docs).
 * struct config holds what the request path and every module share; a
 * module's own keys live in its settings block (its descriptor's settings,
 * core/module.h), read with config_module().
 */
#include <stddef.h>

struct module;

enum config_type { CONFIG_STR, CONFIG_INT, CONFIG_LL, CONFIG_BOOL, CONFIG_OCTAL, CONFIG_KEY32 };

/*
 * One key: its name (the file's spelling; the environment's is BDS_<KEY>),
 * its type, where it is kept (offsetof in struct config, or in the module's
 * settings block), its default (NULL: none), the values a CONFIG_STR may
 * take (NULL: any), for CONFIG_KEY32 the int set when it is given, and for
 * CONFIG_INT bounds when max > 0.
 */
struct config_key {
	const char		*key;
	enum config_type	 type;
	size_t			 off;
	const char		*dflt;
	const char *const	*oneof;
	size_t			 set_off;
	long long		 min, max;
};

/* The common shapes of a module's key, member named as the key. */
#define CONFIG_STR_KEY(st, m, dflt)	{ #m, CONFIG_STR, offsetof(st, m), dflt, NULL, 0, 0, 0 }
#define CONFIG_INT_KEY(st, m, dflt, lo, hi) \
	{ #m, CONFIG_INT, offsetof(st, m), dflt, NULL, 0, lo, hi }
#define CONFIG_ONEOF_KEY(st, m, dflt, values) \
	{ #m, CONFIG_STR, offsetof(st, m), dflt, values, 0, 0, 0 }
#define CONFIG_BOOL_KEY(st, m, dflt)	{ #m, CONFIG_BOOL, offsetof(st, m), dflt, NULL, 0, 0, 0 }

struct config {
	char		*database_url;		/* libpq conninfo */
	char		*db_read_url;		/* db.read_url: a standby for reads, or "" */
	int		 api_lock_timeout_ms;	/* an API statement's longest wait on a lock */
	char		*socket_path;		/* FastCGI unix socket to create */
	int		 socket_mode;		/* octal, e.g. 0660 */
	int		 workers;		/* prefork workers, default 8 */
	long long	 body_limit;		/* bytes, default 1 MiB */
	char		*deployment;		/* development | staging | production */
	char		*docs_url;		/* errors link <docs_url>/errors#<code>; default
						 * ${api_url}/docs, the page the api host serves */
	char		*log_path;		/* request log; "" or "-" = stderr */
	char		*api_version;		/* webhook envelope api_version */
	unsigned char	 cursor_key[32];	/* hex in the file: cursor_key */
	int		 cursor_key_set;
	int		 allow_private_targets;	/* outbound URL safety off (dev, tests) */
	int		 drain_timeout;		/* seconds SIGTERM waits for workers */
	char		*metering;		/* "on": count usage in the workers (core/meter.h) */
	int		 metering_flush_interval;	/* seconds between a worker's flushes */
	char		*sql_dir;		/* migrations for bdsctl */

	/* developer accounts */
	unsigned char	 jwt_seed[32];		/* hex: jwt_seed; Ed25519 signing key seed */
	int		 jwt_seed_set;
	char		*jwt_issuer;		/* iss and aud of developer tokens */
	unsigned char	 secret_key[32];	/* hex: secret_key; seals secrets at rest, keys code hashes */
	int		 secret_key_set;
	char		*cookie_name;		/* developer auth cookie */

	/* request path */
	char		*socket_group;		/* group of the created socket ("" = ours):
						 * nginx's worker group, with socket_mode 0660 */
	/* statement documents */
	char		*data_dir;		/* documents: <data_dir>/statements/<aa>/<sha256>.pdf,
						 * written by bds-jobs, served by nginx */
	char		*api_url;		/* the api host's base URL, no trailing slash */
	char		*sandbox_url;		/* the sandbox host's: signed statement URLs */
	/* retrieval: the credential vault's ring (core/vault.h) */
	char		*credential_key_id;	/* the current key's id */
	unsigned char	 credential_key[32];	/* hex: credential_key (default secret_key) */
	int		 credential_key_set;
	char		*credential_keys_old;	/* "id=hex,...": keys that still open old rows */

	void		**module_settings;	/* one block per modules[] entry */
};

/* Load defaults, file (may be NULL), env. 0 ok; -1 with err filled. */
int	 config_load(struct config *, const char *path, char *err, size_t errlen);
void	 config_free(struct config *);
/* Module m's settings block in c (its descriptor's settings_size bytes). */
const void *config_module(const struct config *c, const struct module *m);
/* Set one key from text (file or env); 0 ok, -1 unknown key or bad value. */
int	 config_set(struct config *, const char *key, const char *val, char *err, size_t errlen);

#endif
