/*
 * lib/config.c: defaults, the "key = value" file, BDS_<KEY> environment
 * overrides, the errors each stage reports, and config_free.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <check.h>

#include "core/config.h"
#include "iam/iam.h"
#include "jobs/jobs.h"
#include "links/links.h"
#include "pay/pay.h"
#include "mail/mail.h"
#include "rtl/rtl.h"
#include "tcheck.h"

#define KEY	"00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"
#define KEY2	"ffeeddccbbaa99887766554433221100ffeeddccbbaa99887766554433221100"
#define KEY_UC	"00112233445566778899AABBCCDDEEFF00112233445566778899AABBCCDDEEFF"

static const char *const env_names[] = {
	"BDS_DATABASE_URL", "BDS_SOCKET_PATH", "BDS_SOCKET_MODE", "BDS_WORKERS",
	"BDS_BODY_LIMIT", "BDS_DEPLOYMENT", "BDS_DOCS_URL", "BDS_LOG_PATH",
	"BDS_API_VERSION", "BDS_CURSOR_KEY", "BDS_ALLOW_PRIVATE_TARGETS",
	"BDS_DRAIN_TIMEOUT", "BDS_SQL_DIR", "BDS_REFRESH_JITTER_PCT", "BDS_SMTP_TIMEOUT",
	"BDS_API_URL", "BDS_LINK_URL",
};

static char dir[64];
static char path[128];
static struct config cfg;

static void
setup(void)
{
	for (size_t i = 0; i < sizeof(env_names) / sizeof(env_names[0]); i++)
		unsetenv(env_names[i]);
	/* Required keys these cases do not exercise. */
	setenv("BDS_JWT_SEED", KEY, 1);
	setenv("BDS_SECRET_KEY", KEY, 1);
	snprintf(dir, sizeof(dir), "/tmp/check_config.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/bds.conf", dir);
	memset(&cfg, 0, sizeof(cfg));
}

static void
teardown(void)
{
	config_free(&cfg);
	unlink(path);
	rmdir(dir);
	for (size_t i = 0; i < sizeof(env_names) / sizeof(env_names[0]); i++)
		unsetenv(env_names[i]);
}

static void
write_file(const char *text)
{
	FILE *f = fopen(path, "w");

	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(fputs(text, f) >= 0, 1);
	ck_assert_int_eq(fclose(f), 0);
}

/* One setting as text, the way the file spells it (socket_mode in octal). */
static const char *
view(const struct config *c, const char *key, char *buf, size_t len)
{
	if (strcmp(key, "database_url") == 0)
		return c->database_url;
	if (strcmp(key, "socket_path") == 0)
		return c->socket_path;
	if (strcmp(key, "deployment") == 0)
		return c->deployment;
	if (strcmp(key, "docs_url") == 0)
		return c->docs_url;
	if (strcmp(key, "api_url") == 0)
		return c->api_url;
	if (strcmp(key, "link_url") == 0)
		return links_settings(c)->link_url;
	if (strcmp(key, "legal_url") == 0)
		return iam_settings(c)->legal_url;
	if (strcmp(key, "log_path") == 0)
		return c->log_path;
	if (strcmp(key, "api_version") == 0)
		return c->api_version;
	if (strcmp(key, "sql_dir") == 0)
		return c->sql_dir;
	if (strcmp(key, "socket_mode") == 0)
		snprintf(buf, len, "0%o", (unsigned)c->socket_mode);
	else if (strcmp(key, "workers") == 0)
		snprintf(buf, len, "%d", c->workers);
	else if (strcmp(key, "body_limit") == 0)
		snprintf(buf, len, "%lld", c->body_limit);
	else if (strcmp(key, "allow_private_targets") == 0)
		snprintf(buf, len, "%d", c->allow_private_targets);
	else if (strcmp(key, "drain_timeout") == 0)
		snprintf(buf, len, "%d", c->drain_timeout);
	else if (strcmp(key, "metering") == 0)
		return c->metering;
	else if (strcmp(key, "metering_flush_interval") == 0)
		snprintf(buf, len, "%d", c->metering_flush_interval);
	else if (strcmp(key, "cursor_key") == 0) {
		if (!c->cursor_key_set)
			return "unset";
		for (size_t i = 0; i < 32 && 2 * i + 2 < len; i++)
			snprintf(buf + 2 * i, 3, "%02x", c->cursor_key[i]);
	} else
		ck_abort_msg("view: unknown key %s", key);
	return buf;
}

static void
set_env(const char *const (*env)[2], size_t n)
{
	for (size_t i = 0; i < n && env[i][0] != NULL; i++)
		ck_assert_int_eq(setenv(env[i][0], env[i][1], 1), 0);
}

#define MAXE 4
#define MAXV 14

/* Configurations that load: each listed setting has the value shown. */
static const struct {
	const char	*file;		/* NULL: no file */
	const char	*env[MAXE][2];
	const char	*want[MAXV][2];
} valid[] = {
	/* defaults: only the key, from the environment */
	{ NULL, { { "BDS_CURSOR_KEY", KEY } }, {
	    { "database_url", "dbname=bds" },
	    { "socket_path", "/run/bds/api.sock" },
	    { "socket_mode", "0660" },
	    { "workers", "8" },
	    { "body_limit", "1048576" },
	    { "deployment", "development" },
	    { "docs_url", "https://api.bds.example/docs" },
	    { "log_path", "" },
	    { "api_version", "2026-11-01" },
	    { "cursor_key", KEY },
	    { "allow_private_targets", "0" },
	    { "drain_timeout", "30" },
	    { "sql_dir", "sql" } } },
	/* the same defaults from a file holding only the key */
	{ "cursor_key = " KEY "\n", { { NULL } }, {
	    { "database_url", "dbname=bds" },
	    { "socket_mode", "0660" },
	    { "workers", "8" },
	    { "body_limit", "1048576" },
	    { "deployment", "development" },
	    { "allow_private_targets", "0" },
	    { "drain_timeout", "30" },
	    { "cursor_key", KEY } } },
	/* every key, comments, blank lines, spaces and tabs around '=' */
	{ "# bds configuration\n"
	  "\n"
	  "database_url = host=/run/postgresql dbname=bds user=bds\n"
	  "socket_path=/tmp/api.sock\n"
	  "  socket_mode\t=\t0600  \n"
	  "   # indented comment = ignored\n"
	  "workers = 4\n"
	  "body_limit = 2097152\n"
	  "\t\n"
	  "deployment = production\n"
	  "docs_url = https://docs.example.org\n"
	  "log_path = /var/log/bds/api.log\n"
	  "api_version = 2027-01-01\n"
	  "cursor_key = " KEY2 "\n"
	  "allow_private_targets = yes\n"
	  "drain_timeout = 5\n"
	  "sql_dir = /usr/share/bds/sql\n", { { NULL } }, {
	    { "database_url", "host=/run/postgresql dbname=bds user=bds" },
	    { "socket_path", "/tmp/api.sock" },
	    { "socket_mode", "0600" },
	    { "workers", "4" },
	    { "body_limit", "2097152" },
	    { "deployment", "production" },
	    { "docs_url", "https://docs.example.org" },
	    { "log_path", "/var/log/bds/api.log" },
	    { "api_version", "2027-01-01" },
	    { "cursor_key", KEY2 },
	    { "allow_private_targets", "1" },
	    { "drain_timeout", "5" },
	    { "sql_dir", "/usr/share/bds/sql" } } },
	/* CRLF line endings, no final newline, upper-case hex */
	{ "workers = 2\r\ncursor_key = " KEY_UC "\r\nlog_path = -", { { NULL } }, {
	    { "workers", "2" },
	    { "cursor_key", KEY },
	    { "log_path", "-" } } },
	/* the last of repeated keys wins; empty string values are allowed */
	{ "workers = 3\nworkers = 5\nlog_path = x\nlog_path =\ncursor_key=" KEY "\n",
	  { { NULL } }, {
	    { "workers", "5" },
	    { "log_path", "" } } },
	/* booleans, both spellings */
	{ "allow_private_targets = true\ncursor_key=" KEY "\n", { { NULL } },
	    { { "allow_private_targets", "1" } } },
	{ "allow_private_targets = 1\nallow_private_targets = no\ncursor_key=" KEY "\n",
	    { { NULL } }, { { "allow_private_targets", "0" } } },
	{ "allow_private_targets = false\ncursor_key=" KEY "\n", { { NULL } },
	    { { "allow_private_targets", "0" } } },
	/* metering: on by default, off; the interval written with '.' or '_' */
	{ "cursor_key=" KEY "\n", { { NULL } }, {
	    { "metering", "on" },
	    { "metering_flush_interval", "5" } } },
	{ "metering = off\nmetering.flush_interval = 1\ncursor_key=" KEY "\n", { { NULL } }, {
	    { "metering", "off" },
	    { "metering_flush_interval", "1" } } },
	{ "metering_flush_interval = 3600\ncursor_key=" KEY "\n", { { NULL } },
	    { { "metering_flush_interval", "3600" } } },
	/* octal without the leading zero is still octal; bounds of workers */
	{ "socket_mode = 660\nworkers = 0\ncursor_key=" KEY "\n", { { NULL } }, {
	    { "socket_mode", "0660" },
	    { "workers", "0" } } },
	{ "workers = 256\nbody_limit = 1\ncursor_key=" KEY "\n", { { NULL } }, {
	    { "workers", "256" },
	    { "body_limit", "1" } } },
	{ "body_limit = 9223372036854775807\ncursor_key=" KEY "\n", { { NULL } },
	    { { "body_limit", "9223372036854775807" } } },
	/* the environment beats the file, key by key */
	{ "workers = 5\ndocs_url = https://file\ncursor_key = " KEY "\n"
	  "allow_private_targets = 0\n",
	  { { "BDS_WORKERS", "3" }, { "BDS_CURSOR_KEY", KEY2 },
	    { "BDS_ALLOW_PRIVATE_TARGETS", "true" }, { "BDS_SOCKET_MODE", "0640" } }, {
	    { "workers", "3" },
	    { "docs_url", "https://file" },
	    { "cursor_key", KEY2 },
	    { "allow_private_targets", "1" },
	    { "socket_mode", "0640" } } },
	/* docs_url follows api_url (${api_url}/docs) wherever api_url is set */
	{ "api_url = https://api.example.org\ncursor_key = " KEY "\n", { { NULL } }, {
	    { "api_url", "https://api.example.org" },
	    { "docs_url", "https://api.example.org/docs" } } },
	{ "api_url = https://file\ncursor_key = " KEY "\n",
	  { { "BDS_API_URL", "http://127.0.0.1:8080" } }, {
	    { "docs_url", "http://127.0.0.1:8080/docs" } } },
	/* ... until docs_url itself is set */
	{ "docs_url = https://docs.example.org\napi_url = https://a\ncursor_key = " KEY "\n",
	  { { NULL } }, {
	    { "docs_url", "https://docs.example.org" } } },
	/* a file may name a setting too, of a module, on either side, more than once */
	{ "docs_url = ${link_url}/d?${api_url}\nlink_url = https://l\napi_url = https://a\n"
	  "cursor_key = " KEY "\n", { { NULL } }, {
	    { "docs_url", "https://l/d?https://a" } } },
	/* a named value may name another in turn */
	{ "link_url = ${api_url}:1\napi_url = https://a\ncursor_key = " KEY "\n", { { NULL } }, {
	    { "link_url", "https://a:1" },
	    { "legal_url", "https://a:1/legal" },
	    { "docs_url", "https://a/docs" } } },
	{ "api_url = ${sandbox_url}\nsandbox_url = ${socket_path}\nsocket_path = /s\n"
	  "cursor_key = " KEY "\n", { { NULL } }, {
	    { "docs_url", "/s/docs" } } },
	/* "$" alone and "{...}" are plain text */
	{ "docs_url = https://d/$x{api_url}$\ncursor_key = " KEY "\n", { { NULL } }, {
	    { "docs_url", "https://d/$x{api_url}$" } } },
	{ "database_url = dbname=file\n",
	  { { "BDS_DATABASE_URL", "dbname=env" }, { "BDS_CURSOR_KEY", KEY },
	    { "BDS_DRAIN_TIMEOUT", "0" }, { "BDS_SQL_DIR", "" } }, {
	    { "database_url", "dbname=env" },
	    { "drain_timeout", "0" },
	    { "sql_dir", "" } } },
};

START_TEST(test_load_valid)
{
	char err[256] = "", buf[80];

	if (valid[_i].file != NULL)
		write_file(valid[_i].file);
	set_env(valid[_i].env, MAXE);
	ck_assert_msg(config_load(&cfg, valid[_i].file ? path : NULL, err, sizeof(err)) == 0,
	    "config_load: %s", err);
	for (size_t k = 0; k < MAXV && valid[_i].want[k][0] != NULL; k++) {
		const char *got = view(&cfg, valid[_i].want[k][0], buf, sizeof(buf));

		ck_assert_msg(got != NULL && strcmp(got, valid[_i].want[k][1]) == 0,
		    "%s: got \"%s\", want \"%s\"", valid[_i].want[k][0],
		    got ? got : "(null)", valid[_i].want[k][1]);
	}
	ck_assert_int_eq(cfg.cursor_key_set, 1);
}
END_TEST

/*
 * Configurations that do not load, with the exact message. An err that
 * starts with ':' follows the file's path ("<path>:4: ...").
 */
static const struct {
	const char	*file;		/* NULL: no file at all */
	const char	*env[MAXE][2];
	const char	*err;
} invalid[] = {
	/* the cursor key is mandatory */
	{ NULL, { { NULL } }, "cursor_key is not set (64 hex characters)" },
	{ "# nothing\n\nworkers = 2\n", { { NULL } },
	    "cursor_key is not set (64 hex characters)" },
	/* unknown keys and malformed lines, with their line numbers */
	{ "cursor_key = " KEY "\n# c\n\ncolour = blue\n", { { NULL } },
	    ":4: unknown setting colour" },
	{ "Workers = 2\ncursor_key = " KEY "\n", { { NULL } }, ":1: unknown setting Workers" },
	{ "cursor_key = " KEY "\nworkers\n", { { NULL } }, ":2: expected key = value" },
	{ "cursor_key = " KEY "\n= 5\n", { { NULL } }, ":2: unknown setting " },
	{ "cursor_key = " KEY "\nworkers 4\n", { { NULL } }, ":2: expected key = value" },
	/* bad integers */
	{ "workers = four\ncursor_key = " KEY "\n", { { NULL } }, ":1: bad value for workers" },
	{ "workers =\n", { { NULL } }, ":1: bad value for workers" },
	{ "workers = -1\n", { { NULL } }, ":1: bad value for workers" },
	{ "workers = 4 # four\n", { { NULL } }, ":1: bad value for workers" },
	{ "workers = 4.0\n", { { NULL } }, ":1: bad value for workers" },
	{ "workers = 0x10\n", { { NULL } }, ":1: bad value for workers" },
	{ "workers = 2147483648\n", { { NULL } }, ":1: bad value for workers" },
	{ "drain_timeout = 99999999999999999999\n", { { NULL } },
	    ":1: bad value for drain_timeout" },
	{ "body_limit = 1e6\n", { { NULL } }, ":1: bad value for body_limit" },
	{ "body_limit = 9223372036854775808\n", { { NULL } }, ":1: bad value for body_limit" },
	/* bad octal */
	{ "socket_mode = 0680\n", { { NULL } }, ":1: bad value for socket_mode" },
	{ "socket_mode = 0o660\n", { { NULL } }, ":1: bad value for socket_mode" },
	{ "socket_mode = rw-rw----\n", { { NULL } }, ":1: bad value for socket_mode" },
	/* metering: on or off; an interval of 1 to 3600 seconds */
	{ "metering = no\n", { { NULL } }, ":1: bad value for metering" },
	{ "metering.flush_interval = 0\n", { { NULL } },
	    ":1: metering_flush_interval must be 1..3600" },
	/* bad booleans */
	{ "allow_private_targets = on\n", { { NULL } },
	    ":1: bad value for allow_private_targets" },
	{ "allow_private_targets = TRUE\n", { { NULL } },
	    ":1: bad value for allow_private_targets" },
	{ "allow_private_targets =\n", { { NULL } },
	    ":1: bad value for allow_private_targets" },
	/* bad hex keys */
	{ "cursor_key = 0011\n", { { NULL } }, ":1: bad value for cursor_key" },
	{ "cursor_key = " KEY "00\n", { { NULL } }, ":1: bad value for cursor_key" },
	{ "cursor_key = " "zz112233445566778899aabbccddeeff00112233445566778899aabbccddeeff" "\n",
	    { { NULL } }, ":1: bad value for cursor_key" },
	{ "cursor_key = " "00112233445566778899aabbccddeeff00112233445566778899aabbccddeefg" "\n",
	    { { NULL } }, ":1: bad value for cursor_key" },
	{ "cursor_key = 00:11:22:33\n", { { NULL } }, ":1: bad value for cursor_key" },
	/* values that parse but are out of bounds */
	{ "workers = 257\ncursor_key = " KEY "\n", { { NULL } },
	    "workers must be 0..256, body_limit positive and api_lock_timeout_ms 1..60000" },
	{ "body_limit = 0\ncursor_key = " KEY "\n", { { NULL } },
	    "workers must be 0..256, body_limit positive and api_lock_timeout_ms 1..60000" },
	{ "api_lock_timeout_ms = 0\ncursor_key = " KEY "\n", { { NULL } },
	    "workers must be 0..256, body_limit positive and api_lock_timeout_ms 1..60000" },
	/* a module's keys (its descriptor's settings) carry their own bounds */
	{ "jobs_conversations = 0\ncursor_key = " KEY "\n", { { NULL } },
	    ":1: jobs_conversations must be 1..10000" },
	{ "client_max_sessions = 10001\ncursor_key = " KEY "\n", { { NULL } },
	    ":1: client_max_sessions must be 1..10000" },
	{ "refresh_interval_s = 59\ncursor_key = " KEY "\n", { { NULL } },
	    ":1: refresh_interval_s must be 60..2147483647" },
	{ "cursor_key = " KEY "\n", { { "BDS_REFRESH_JITTER_PCT", "51" } },
	    "refresh_jitter_pct must be 0..50" },
	{ "rtl_expiry_days = soon\n", { { NULL } }, ":1: bad value for rtl_expiry_days" },
	{ "mail_transport = pigeon\n", { { NULL } }, ":1: bad value for mail_transport" },
	/* the deployment is one of three names: a typo must not run as development */
	{ "deployment = prod\ncursor_key = " KEY "\n", { { NULL } },
	    ":1: bad value for deployment" },
	/* bad environment values fail the load, even over a good file */
	{ "workers = 2\ncursor_key = " KEY "\n", { { "BDS_WORKERS", "many" } },
	    "bad value for workers" },
	{ "cursor_key = " KEY "\n", { { "BDS_CURSOR_KEY", "short" } },
	    "bad value for cursor_key" },
	{ NULL, { { "BDS_CURSOR_KEY", KEY }, { "BDS_ALLOW_PRIVATE_TARGETS", "maybe" } },
	    "bad value for allow_private_targets" },
	{ NULL, { { "BDS_CURSOR_KEY", KEY }, { "BDS_WORKERS", "300" } },
	    "workers must be 0..256, body_limit positive and api_lock_timeout_ms 1..60000" },
	{ NULL, { { "BDS_CURSOR_KEY", KEY }, { "BDS_BODY_LIMIT", "-5" } },
	    "bad value for body_limit" },
	/* a ${name} must name a string setting that names none itself */
	{ "docs_url = ${nope}/docs\ncursor_key = " KEY "\n", { { NULL } },
	    "docs_url: ${nope} names no string setting" },
	{ "docs_url = ${workers}\ncursor_key = " KEY "\n", { { NULL } },
	    "docs_url: ${workers} names no string setting" },
	{ "docs_url = ${api_url\ncursor_key = " KEY "\n", { { NULL } },
	    "docs_url: \"${\" without \"}\"" },
	{ "api_url = ${docs_url}\ncursor_key = " KEY "\n", { { NULL } },	/* the first key's */
	    "docs_url: its references loop" },
	{ "docs_url = ${docs_url}\ncursor_key = " KEY "\n", { { NULL } },
	    "docs_url: its references loop" },
	{ "cursor_key = " KEY "\n", { { "BDS_LINK_URL", "${}" } },
	    "link_url: ${} names no string setting" },
	/* the first bad line stops the load */
	{ "colour = red\nworkers = x\n", { { NULL } }, ":1: unknown setting colour" },
};

START_TEST(test_load_invalid)
{
	char err[512] = "", want[512];

	if (invalid[_i].file != NULL)
		write_file(invalid[_i].file);
	set_env(invalid[_i].env, MAXE);
	ck_assert_msg(config_load(&cfg, invalid[_i].file ? path : NULL, err, sizeof(err)) == -1,
	    "loaded; want the error \"%s\"", invalid[_i].err);
	snprintf(want, sizeof(want), "%s%s", invalid[_i].err[0] == ':' ? path : "",
	    invalid[_i].err);
	ck_assert_str_eq(err, want);
}
END_TEST

/*
 * A module's keys (its descriptor's settings) load like the shared ones:
 * defaults, the file, the environment; each module reads its own block.
 */
START_TEST(test_module_settings)
{
	char err[256] = "";

	write_file("cursor_key = " KEY "\nrtl_expiry_days = 7\nlink_url = https://l.example\n"
	    "jobs_conversations = 5\nsmtp_timeout = 4\npay.execution = sandbox\n");
	setenv("BDS_SMTP_TIMEOUT", "9", 1);
	ck_assert_msg(config_load(&cfg, path, err, sizeof(err)) == 0, "config_load: %s", err);
	ck_assert_int_eq(rtl_settings(&cfg)->rtl_expiry_days, 7);
	ck_assert_str_eq(rtl_settings(&cfg)->discovery_hosts, "");
	ck_assert_str_eq(links_settings(&cfg)->link_url, "https://l.example");
	/* a module's default naming another module's key (${link_url}/legal) */
	ck_assert_str_eq(iam_settings(&cfg)->legal_url, "https://l.example/legal");
	ck_assert_int_eq(links_settings(&cfg)->refresh_interval_s, 86400);
	ck_assert_int_eq(jobs_settings(&cfg)->jobs_conversations, 5);
	ck_assert_int_eq(jobs_settings(&cfg)->biller_max_sessions, 4);
	ck_assert_int_eq(mail_settings(&cfg)->smtp_timeout, 9);
	ck_assert_str_eq(mail_settings(&cfg)->mail_transport, "spool");
	/* a '.' in a key stands for '_' */
	ck_assert_str_eq(pay_settings(&cfg)->pay_execution, "sandbox");
	ck_assert_str_eq(pay_settings(&cfg)->pay_pan_key_id, "secret_key.pan");
	ck_assert_int_eq(config_set(&cfg, "pay.execution", "off", err, sizeof(err)), 0);
	ck_assert_str_eq(pay_settings(&cfg)->pay_execution, "off");
	ck_assert_int_eq(config_set(&cfg, "pay.execution", "live", err, sizeof(err)), -1);
	/* config_set reaches a module's key too */
	ck_assert_int_eq(config_set(&cfg, "portal_since_days", "12", err, sizeof(err)), 0);
	ck_assert_int_eq(jobs_settings(&cfg)->portal_since_days, 12);
	config_free(&cfg);
	ck_assert_ptr_null(cfg.module_settings);
}
END_TEST

START_TEST(test_missing_file)
{
	char err[256], want[256];

	setenv("BDS_CURSOR_KEY", KEY, 1);
	ck_assert_int_eq(config_load(&cfg, path, err, sizeof(err)), -1);
	snprintf(want, sizeof(want), "%s: No such file or directory", path);
	ck_assert_str_eq(err, want);
}
END_TEST

/* An error message is cut to the buffer, never overrun. */
START_TEST(test_short_err_buffer)
{
	char err[8];

	memset(err, 'x', sizeof(err));
	write_file("colour = red\n");
	ck_assert_int_eq(config_load(&cfg, path, err, sizeof(err)), -1);
	ck_assert_uint_eq(strlen(err), sizeof(err) - 1);
}
END_TEST

/* config_set on a loaded config: one key, same rules as the file. */
static const struct {
	const char	*key;
	const char	*val;
	int		 rc;
	const char	*want;	/* view after, or the error */
} sets[] = {
	{ "workers", "12", 0, "12" },
	{ "socket_mode", "0600", 0, "0600" },
	{ "docs_url", "https://d", 0, "https://d" },
	{ "cursor_key", KEY2, 0, KEY2 },
	{ "workers", "x", -1, "bad value for workers" },
	{ "nope", "1", -1, "unknown setting nope" },
	{ "", "1", -1, "unknown setting " },
	{ "BDS_WORKERS", "1", -1, "unknown setting BDS_WORKERS" },
};

START_TEST(test_config_set)
{
	char err[128] = "", buf[80];

	setenv("BDS_CURSOR_KEY", KEY, 1);
	ck_assert_int_eq(config_load(&cfg, NULL, err, sizeof(err)), 0);
	ck_assert_int_eq(config_set(&cfg, sets[_i].key, sets[_i].val, err, sizeof(err)),
	    sets[_i].rc);
	if (sets[_i].rc == 0)
		ck_assert_str_eq(view(&cfg, sets[_i].key, buf, sizeof(buf)), sets[_i].want);
	else
		ck_assert_str_eq(err, sets[_i].want);
}
END_TEST

/*
 * Long lines. A comment of any length is one comment: none of it may be
 * read as a setting. A long value is either taken whole or refused on its
 * own line, never cut.
 */
static const size_t long_lens[] = { 100, 4000, 4093, 4094, 4095, 4096, 5000, 9000 };

static char *
long_file(size_t n, int comment)
{
	/* A commented-out setting ends the comment: it must stay a comment. */
	const char *tail = comment ? "workers = 99\ncursor_key = " KEY "\n" :
	    "\nworkers = 3\ncursor_key = " KEY "\n";
	const char *head = comment ? "workers = 3\n#" : "database_url = dbname=";
	size_t hl = strlen(head), tl = strlen(tail);
	char *t = malloc(hl + n + tl + 1);

	ck_assert_ptr_nonnull(t);
	memcpy(t, head, hl);
	memset(t + hl, comment ? '-' : 'a', n);
	memcpy(t + hl + n, tail, tl + 1);
	return t;
}

START_TEST(test_long_comment)
{
	char err[256] = "";
	char *t = long_file(long_lens[_i], 1);

	write_file(t);
	free(t);
	ck_assert_msg(config_load(&cfg, path, err, sizeof(err)) == 0,
	    "comment of %zu bytes: %s", long_lens[_i], err);
	ck_assert_msg(cfg.workers == 3, "comment of %zu bytes: workers %d",
	    long_lens[_i], cfg.workers);
}
END_TEST

START_TEST(test_long_value)
{
	char err[256] = "", want[256];
	char *t = long_file(long_lens[_i], 0);
	int rc;

	write_file(t);
	free(t);
	rc = config_load(&cfg, path, err, sizeof(err));
	if (rc == 0) {
		ck_assert_uint_eq(strlen(cfg.database_url), strlen("dbname=") + long_lens[_i]);
		ck_assert_int_eq(cfg.workers, 3);
		return;
	}
	snprintf(want, sizeof(want), "%s:1: ", path);
	ck_assert_msg(strncmp(err, want, strlen(want)) == 0,
	    "value of %zu bytes: \"%s\" does not name line 1", long_lens[_i], err);
}
END_TEST

/* config_free releases every string and leaves NULLs; twice is harmless. */
START_TEST(test_free)
{
	char err[128];

	setenv("BDS_CURSOR_KEY", KEY, 1);
	ck_assert_int_eq(config_load(&cfg, NULL, err, sizeof(err)), 0);
	config_free(&cfg);
	ck_assert_ptr_null(cfg.database_url);
	ck_assert_ptr_null(cfg.socket_path);
	ck_assert_ptr_null(cfg.deployment);
	ck_assert_ptr_null(cfg.docs_url);
	ck_assert_ptr_null(cfg.log_path);
	ck_assert_ptr_null(cfg.api_version);
	ck_assert_ptr_null(cfg.sql_dir);
	config_free(&cfg);
}
END_TEST

/* A load that failed half way still frees cleanly (valgrind checks). */
START_TEST(test_free_after_failure)
{
	char err[128];

	write_file("docs_url = https://x\nsql_dir = /s\nworkers = bad\n");
	ck_assert_int_eq(config_load(&cfg, path, err, sizeof(err)), -1);
	ck_assert_str_eq(cfg.docs_url, "https://x");
	config_free(&cfg);
	ck_assert_ptr_null(cfg.docs_url);
}
END_TEST

/* Loading again replaces the old values without leaking them. */
START_TEST(test_reload)
{
	char err[128];

	setenv("BDS_CURSOR_KEY", KEY, 1);
	write_file("workers = 2\n");
	ck_assert_int_eq(config_load(&cfg, path, err, sizeof(err)), 0);
	config_free(&cfg);
	write_file("workers = 6\n");
	ck_assert_int_eq(config_load(&cfg, path, err, sizeof(err)), 0);
	ck_assert_int_eq(cfg.workers, 6);
}
END_TEST

/* Free functions accept NULL (STYLE.md). Run in a child: a crash is a failure. */
START_TEST(test_free_null)
{
	int status;
	pid_t pid = fork();

	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		config_free(NULL);
		_exit(0);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	    "config_free(NULL) did not return (status 0x%x)", (unsigned)status);
}
END_TEST

/* Each key that workers must share is required; none is made up. */
START_TEST(test_required_keys)
{
	static const char *const names[] = { "BDS_CURSOR_KEY", "BDS_JWT_SEED", "BDS_SECRET_KEY" };
	static const char *const keys[] = { "cursor_key", "jwt_seed", "secret_key" };
	char err[256], want[128];

	for (size_t i = 0; i < 3; i++)
		setenv(names[i], KEY, 1);
	unsetenv(names[_i]);
	ck_assert_int_eq(config_load(&cfg, NULL, err, sizeof(err)), -1);
	snprintf(want, sizeof(want), "%s is not set (64 hex characters)", keys[_i]);
	ck_assert_str_eq(err, want);
	unsetenv("BDS_CURSOR_KEY");
}
END_TEST

static Suite *
config_suite(void)
{
	Suite *s = suite_create("config");
	TCase *tc;

	tc = tcase_create("load");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_loop_test(tc, test_load_valid, 0, sizeof(valid) / sizeof(valid[0]));
	tcase_add_loop_test(tc, test_load_invalid, 0, sizeof(invalid) / sizeof(invalid[0]));
	tcase_add_loop_test(tc, test_required_keys, 0, 3);
	tcase_add_test(tc, test_missing_file);
	tcase_add_test(tc, test_module_settings);
	tcase_add_test(tc, test_short_err_buffer);
	tcase_add_loop_test(tc, test_config_set, 0, sizeof(sets) / sizeof(sets[0]));
	tcase_add_loop_test(tc, test_long_comment, 0, sizeof(long_lens) / sizeof(long_lens[0]));
	tcase_add_loop_test(tc, test_long_value, 0, sizeof(long_lens) / sizeof(long_lens[0]));
	suite_add_tcase(s, tc);

	tc = tcase_create("free");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_free);
	tcase_add_test(tc, test_free_after_failure);
	tcase_add_test(tc, test_reload);
	tcase_add_test(tc, test_free_null);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tcheck_run(config_suite());
}
