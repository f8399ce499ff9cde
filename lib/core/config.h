#ifndef BDS_CONFIG_H
#define BDS_CONFIG_H
/*
 * Configuration: defaults, then one file of "key = value" lines ('#'
 * comments), then environment overrides BDS_<KEY> (key upper-cased).
 */
#include <stddef.h>

struct config {
	char		*database_url;		/* libpq conninfo */
	int		 api_lock_timeout_ms;	/* an API statement's longest wait on a lock */
	char		*socket_path;		/* FastCGI unix socket to create */
	int		 socket_mode;		/* octal, e.g. 0660 */
	int		 workers;		/* prefork workers, default 8 */
	long long	 body_limit;		/* bytes, default 1 MiB */
	char		*deployment;		/* development | staging | production */
	char		*docs_url;		/* docs site; errors link <docs_url>/errors#<code> */
	char		*log_path;		/* request log; "" or "-" = stderr */
	char		*api_version;		/* webhook envelope api_version */
	unsigned char	 cursor_key[32];	/* hex in the file: cursor_key */
	int		 cursor_key_set;
	int		 allow_private_targets;	/* outbound URL safety off (dev, tests) */
	int		 drain_timeout;		/* seconds SIGTERM waits for workers */
	char		*sql_dir;		/* migrations for bdsctl */

	/* developer accounts */
	unsigned char	 jwt_seed[32];		/* hex: jwt_seed; Ed25519 signing key seed */
	int		 jwt_seed_set;
	char		*jwt_issuer;		/* iss and aud of developer tokens */
	unsigned char	 secret_key[32];	/* hex: secret_key; seals secrets at rest, keys code hashes */
	int		 secret_key_set;
	char		*billing;		/* manual (bdsctl billing done) | none (done at once) */
	char		*cookie_name;		/* developer auth cookie */
	int		 cookie_secure;		/* Secure attribute on the cookie */

	/* e-mail, sent by bds-deliver */
	char		*mail_transport;	/* spool (write .eml files) | smtp */
	char		*mail_spool_dir;	/* spool: where .eml files go */
	char		*mail_from;		/* From: address */
	char		*smtp_url;		/* smtp://host:port or smtps://host:port */
	char		*smtp_user;		/* "" = no AUTH */
	char		*smtp_password;
	int		 smtp_timeout;		/* seconds per message */

	/* webhooks, sent by bds-deliver */
	char		*webhook_retry_schedule;	/* seconds after attempt 1, 2...: "5,300,..." */
	int		 webhook_concurrency;	/* requests in flight at once */
	int		 webhook_batch;		/* deliveries per claim */
	int		 webhook_lease;		/* seconds a claim holds its rows */

	/* webhook test deliveries in the API */
	int		 webhook_test_slots;	/* at once per API host; 0: workers / 4, at least 1 */
	/* iam */
	int		 clients_max;		/* clients per developer */
	/* request path */
	char		*socket_group;		/* group of the created socket ("" = ours):
						 * nginx's worker group, with socket_mode 0660 */
	/* bds-jobs */
	int		 jobs_workers;		/* forked workers per bds-jobs run */
	char		*jobs_retry_schedule;	/* seconds after attempt 1, 2...: "5,30,..." */
	int		 jobs_poll_ms;		/* longest wait between claims */
	int		 jobs_conversations;	/* biller jobs in flight at once per worker */
	/* connect flow */
	char		*link_url;		/* the link host's base URL, no trailing slash:
						 * connect_url, hosted_url, CORS origin */
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
	/* scheduled refresh and limits */
	int		 refresh_interval_s;	/* a link's refresh period */
	int		 refresh_jitter_pct;	/* spread: next = interval ± this % */
	int		 refresh_backoff_s;	/* after a failed refresh: base, doubled per failure */
	int		 refresh_backoff_max_s;	/* ... capped here */
	int		 degraded_after_s;	/* transient failures this long: CONNECTION_DEGRADED */
	int		 biller_max_sessions;	/* portal sessions at once per biller */
	int		 client_max_sessions;	/* portal sessions at once per client */
	/* requests to link and biller discovery (lib/rtl) */
	int		 rtl_expiry_days;	/* PENDING/IN_PROGRESS older than this: EXPIRED */
	char		*discovery_hosts;	/* "name=addr[|addr],...": fixed answers for
						 * onboarding URL hosts, asked before DNS (dev
						 * and test stacks; empty in production) */
	/* the portal connector (docs/portal.md) */
	int		 portal_connect_timeout_ms;	/* TCP + TLS connect, per request */
	int		 portal_timeout_ms;	/* a whole request, answer included */
	int		 portal_since_days;	/* the since window before the last success */
};

/* Load defaults, file (may be NULL), env. 0 ok; -1 with err filled. */
int	 config_load(struct config *, const char *path, char *err, size_t errlen);
void	 config_free(struct config *);
/* Set one key from text (file or env); 0 ok, -1 unknown key or bad value. */
int	 config_set(struct config *, const char *key, const char *val, char *err, size_t errlen);

#endif
