/* One persistent libpq connection, lazily prepared statements, fast failure. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/arena.h"
#include "core/clock.h"
#include "core/db.h"
#include "core/json.h"
#include "core/log.h"
#include "core/req.h"

/* While the database is away, try to reconnect at most this often. */
#define DB_RETRY_MS 100

/* A channel a module listens on (db_channel_version registers it). */
struct db_channel {
	char			 name[DB_CHANNEL_LEN + 1];
	unsigned long long	 version;	/* db_channel_version */
};

struct db {
	PGconn		*conn;
	char		*conninfo;
	char		*options;	/* the session's settings ("-c k=v ..."), or NULL */
	unsigned	 gen;		/* this connection's generation (db_generation) */
	int		 in_tx;
	enum db_fail	 fail;
	char		 sqlstate[6];
	char		 errmsg[256];
	long long	 last_attempt_ms;
	struct db_channel chan[DB_LISTEN_MAX];
	size_t		 nchan;
	unsigned	 listen_gen;	/* the connection every LISTEN was issued on */
	int		 read;		/* db_new_read */
};

/* Connections made by this process so far: each one's generation. */
static unsigned db_generation;
/* The last channel version handed out: process-wide, so a version is never
 * seen twice (not even by another struct db at a reused address). */
static unsigned long long db_version_seq;

static void
notice_quiet(void *arg, const PGresult *res)
{
	/* Notices (e.g. "relation already exists, skipping") are not request errors. */
}

struct db *
db_new(const char *conninfo)
{
	struct db *d = calloc(1, sizeof(*d));

	if (d == NULL)
		return NULL;
	if ((d->conninfo = strdup(conninfo)) == NULL) {
		free(d);
		return NULL;
	}
	return d;
}

struct db *
db_new_read(const char *conninfo)
{
	struct db *d = db_new(conninfo);

	if (d != NULL)
		d->read = 1;
	return d;
}

int
db_set_options(struct db *d, const char *options)
{
	char *o = options != NULL ? strdup(options) : NULL;

	if (options != NULL && o == NULL)
		return -1;
	free(d->options);
	d->options = o;
	return 0;
}

void
db_free(struct db *d)
{
	if (d == NULL)
		return;
	PQfinish(d->conn);
	free(d->conninfo);
	free(d->options);
	free(d);
}

static void
set_err(struct db *d, enum db_fail f, const PGresult *res)
{
	const char *st = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;
	const char *msg = res ? PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY) : NULL;

	d->fail = f;
	snprintf(d->sqlstate, sizeof(d->sqlstate), "%s", st ? st : "");
	/* The primary message only: DETAIL may echo row values. */
	snprintf(d->errmsg, sizeof(d->errmsg), "%s",
	    msg ? msg : d->conn ? PQerrorMessage(d->conn) : "no connection");
}

/*
 * Record the notifications libpq parsed with the last result (it reads
 * them off the socket while it waits for a result; PQnotifies only takes
 * them from its list): each bumps its channel's version. Only a db with
 * channels takes them: other users (queue_run) read their own.
 */
static void
take_notifies(struct db *d)
{
	PGnotify *nt;

	if (d->nchan == 0 || d->conn == NULL)
		return;
	while ((nt = PQnotifies(d->conn)) != NULL) {
		for (size_t i = 0; i < d->nchan; i++)
			if (strcmp(d->chan[i].name, nt->relname) == 0)
				d->chan[i].version = ++db_version_seq;
		PQfreemem(nt);
	}
}

/*
 * LISTEN on every channel of d on the current connection, once per
 * connection (never inside a transaction: LISTEN would wait for its
 * commit). A new connection counts as a change of every channel: what was
 * notified while none listened is lost. 0 ok, -1 not listening (yet).
 */
static int
listen_all(struct db *d)
{
	PGresult *res;
	char sql[sizeof("LISTEN ") + DB_CHANNEL_LEN * 2 + 3], *id;
	int ok = 1;

	if (d->nchan == 0 || d->listen_gen == d->gen)
		return 0;
	if (d->conn == NULL || d->in_tx || PQstatus(d->conn) != CONNECTION_OK)
		return -1;
	for (size_t i = 0; i < d->nchan && ok; i++) {
		/* LISTEN takes no parameter: the channel, a constant of the
		 * module, goes in quoted as an identifier */
		if ((id = PQescapeIdentifier(d->conn, d->chan[i].name,
		    strlen(d->chan[i].name))) == NULL)
			return -1;
		snprintf(sql, sizeof(sql), "LISTEN %s", id);
		PQfreemem(id);
		res = PQexec(d->conn, sql);
		ok = PQresultStatus(res) == PGRES_COMMAND_OK;
		if (!ok)
			log_msg("warn", "database: LISTEN %s failed: %s", d->chan[i].name,
			    PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY) ?
			    PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY) : "no connection");
		PQclear(res);
	}
	if (!ok)
		return -1;
	/* notifications queued on an earlier connection went with it */
	d->listen_gen = d->gen;
	for (size_t i = 0; i < d->nchan; i++)
		d->chan[i].version = ++db_version_seq;
	take_notifies(d);
	return 0;
}

int
db_ensure(struct db *d)
{
	long long t;

	if (d->conn != NULL && PQstatus(d->conn) == CONNECTION_OK)
		return 0;
	t = mono_ms();
	if (d->conn == NULL && d->last_attempt_ms != 0 &&
	    t - d->last_attempt_ms < DB_RETRY_MS) {
		d->fail = DB_UNAVAILABLE;
		return -1;
	}
	d->last_attempt_ms = t;
	PQfinish(d->conn);
	d->in_tx = 0;
	{
		/* dbname expands a whole conninfo or URL; options adds to it */
		const char *const keys[] = { "dbname", d->options != NULL ? "options" : NULL,
			NULL };
		const char *const vals[] = { d->conninfo, d->options, NULL };

		d->conn = PQconnectdbParams(keys, vals, 1);
	}
	if (PQstatus(d->conn) != CONNECTION_OK) {
		set_err(d, DB_UNAVAILABLE, NULL);
		log_msg("warn", "database connection failed: %s", d->errmsg);
		PQfinish(d->conn);
		d->conn = NULL;
		return -1;
	}
	PQsetNoticeReceiver(d->conn, notice_quiet, NULL);
	/* process-wide, so a statement prepared on an earlier connection
	 * (of this struct db or of one freed before) is prepared again */
	d->gen = ++db_generation;
	d->fail = DB_OK;
	(void)listen_all(d);
	return 0;
}

unsigned
db_conn_gen(const struct db *d)
{
	return d->gen;
}

int
db_connected(const struct db *d)
{
	return d->conn != NULL && PQstatus(d->conn) == CONNECTION_OK;
}

/*
 * Whether a statement's SQLSTATE says the server is not one to go on with:
 * it is read-only (25006: a primary demoted by a failover, or a standby a
 * multi-host URL landed on), shutting down or starting (57P01, 57P02,
 * 57P03), or the connection failed (class 08). The connection may still
 * look fine to libpq; a new one finds the primary (the URL's
 * target_session_attrs=read-write). On a read handle (db_new_read) a
 * refused write is the statement's own error.
 */
static int
server_unusable(const PGresult *res, int read)
{
	const char *st = res != NULL ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;

	if (st == NULL)
		return 0;
	if (read && strcmp(st, "25006") == 0)
		return 0;
	return strcmp(st, "25006") == 0 || strcmp(st, "57P01") == 0 ||
	    strcmp(st, "57P02") == 0 || strcmp(st, "57P03") == 0 || strncmp(st, "08", 2) == 0;
}

/* After a failure (res its result, or NULL): 1 when it was the connection
 * or the server (the connection now dropped), else 0. */
static int
conn_lost(struct db *d, const PGresult *res)
{
	if (d->conn != NULL && PQstatus(d->conn) == CONNECTION_OK &&
	    !server_unusable(res, d->read))
		return 0;
	if (res != NULL)
		log_msg("warn", "database: connection dropped: %s",
		    PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY) != NULL ?
		    PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY) : "connection lost");
	PQfinish(d->conn);
	d->conn = NULL;
	d->in_tx = 0;
	d->fail = DB_UNAVAILABLE;
	d->last_attempt_ms = 0;	/* the next call may reconnect at once */
	return 1;
}

int
db_prepare(struct db *d, struct db_stmt *s)
{
	unsigned *gen = d->read ? &s->gen_read : &s->gen;
	PGresult *res;
	int ok;

	if (db_ensure(d) != 0)
		return -1;
	if (*gen == d->gen)
		return 0;
	res = PQprepare(d->conn, s->name, s->sql, 0, NULL);
	take_notifies(d);
	ok = PQresultStatus(res) == PGRES_COMMAND_OK;
	if (ok)
		*gen = d->gen;
	else if (!conn_lost(d, res))
		set_err(d, DB_ERROR, res);
	PQclear(res);
	return ok ? 0 : -1;
}

int
db_prepare_set(struct db *d, const struct db_stmt_set *set, const char **failed)
{
	*failed = NULL;
	for (size_t i = 0; i < set->n; i++) {
		if (db_prepare(d, &set->stmts[i]) != 0) {
			*failed = set->stmts[i].name;
			return -1;
		}
	}
	return 0;
}

static void
clear_cb(void *res)
{
	PQclear(res);
}

PGresult *
db_exec(struct db *d, struct arena *a, struct db_stmt *s, int nparams,
    const char *const *params)
{
	for (int attempt = 0; attempt < 2; attempt++) {
		int was_tx = d->in_tx;
		PGresult *res;
		ExecStatusType st;

		if (db_prepare(d, s) != 0) {
			if (d->fail == DB_UNAVAILABLE && !was_tx && attempt == 0)
				continue;
			return NULL;
		}
		res = PQexecPrepared(d->conn, s->name, nparams, params, NULL, NULL, 0);
		take_notifies(d);
		st = PQresultStatus(res);
		if (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK) {
			d->fail = DB_OK;
			arena_defer(a, clear_cb, res);
			return res;
		}
		if (!conn_lost(d, res)) {
			set_err(d, DB_ERROR, res);
			PQclear(res);
			return NULL;
		}
		PQclear(res);
		if (was_tx)
			return NULL;	/* the transaction died with the connection */
	}
	return NULL;
}

int
db_sync(struct db *d)
{
	PGresult *res;
	int ok;

	if (db_ensure(d) != 0)
		return -1;
	res = PQexec(d->conn, "");
	take_notifies(d);
	ok = PQresultStatus(res) == PGRES_EMPTY_QUERY;
	if (!ok && !conn_lost(d, res))
		set_err(d, DB_ERROR, res);
	PQclear(res);
	return ok ? 0 : -1;
}

long long
db_exec_count(struct db *d, struct arena *a, struct db_stmt *s, int nparams,
    const char *const *params)
{
	PGresult *res = db_exec(d, a, s, nparams, params);

	return res == NULL ? -1 : strtoll(PQcmdTuples(res), NULL, 10);
}

struct json_object *
db_json_raw(struct arena *a, const PGresult *res, int row, int col)
{
	if (PQgetisnull(res, row, col))
		return NULL;
	return json_raw_compact(a, PQgetvalue(res, row, col),
	    (size_t)PQgetlength(res, row, col));
}

PGresult *
db_query(struct req *r, struct db_stmt *s, int nparams, const char *const *params)
{
	PGresult *res = db_exec(r->db, r->arena, s, nparams, params);

	if (res == NULL || r->after_query == NULL || r->db->in_tx)
		return res;
	return r->after_query(r) == 0 ? res : NULL;
}

static int
simple(struct db *d, const char *sql, const char *expect)
{
	PGresult *res;
	int ok;

	if (d->conn == NULL)
		return -1;
	res = PQexec(d->conn, sql);
	take_notifies(d);
	ok = PQresultStatus(res) == PGRES_COMMAND_OK &&
	    strcmp(PQcmdStatus(res), expect) == 0;
	if (!ok && !conn_lost(d, res))
		set_err(d, DB_ERROR, res);
	PQclear(res);
	return ok ? 0 : -1;
}

int
db_exec_script(struct db *d, const char *sql)
{
	PGresult *res;
	ExecStatusType st;

	if (db_ensure(d) != 0)
		return -1;
	res = PQexec(d->conn, sql);
	take_notifies(d);
	st = PQresultStatus(res);
	if (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK || st == PGRES_EMPTY_QUERY) {
		PQclear(res);
		d->fail = DB_OK;
		return 0;
	}
	if (!conn_lost(d, res))
		set_err(d, DB_ERROR, res);
	PQclear(res);
	return -1;
}

int
db_begin(struct db *d)
{
	for (int attempt = 0; attempt < 2; attempt++) {
		if (db_ensure(d) != 0)
			continue;
		if (simple(d, "BEGIN", "BEGIN") == 0) {
			d->in_tx = 1;
			return 0;
		}
		if (d->fail != DB_UNAVAILABLE)
			return -1;
	}
	return -1;
}

int
db_commit(struct db *d)
{
	int rc;

	if (!d->in_tx)
		return -1;
	/* COMMIT of a failed transaction reports ROLLBACK: that is a failure. */
	rc = simple(d, "COMMIT", "COMMIT");
	if (rc != 0 && d->conn != NULL && d->fail == DB_OK)
		d->fail = DB_ERROR;
	if (rc != 0 && d->conn != NULL)
		(void)simple(d, "ROLLBACK", "ROLLBACK");
	d->in_tx = 0;
	return rc;
}

void
db_rollback(struct db *d)
{
	if (d->in_tx && d->conn != NULL) {
		enum db_fail keep = d->fail;

		(void)simple(d, "ROLLBACK", "ROLLBACK");
		d->fail = keep;
	}
	d->in_tx = 0;
}

int
db_savepoint(struct db *d)
{
	if (!d->in_tx)
		return -1;
	return simple(d, "SAVEPOINT bds_mark", "SAVEPOINT");
}

int
db_rollback_to_savepoint(struct db *d)
{
	if (!d->in_tx)
		return -1;
	return simple(d, "ROLLBACK TO SAVEPOINT bds_mark", "ROLLBACK");
}

int
db_in_tx(const struct db *d)
{
	return d->in_tx;
}

enum db_fail
db_last_fail(const struct db *d)
{
	return d->fail;
}

const char *
db_sqlstate(const struct db *d)
{
	return d->sqlstate;
}

const char *
db_errmsg(const struct db *d)
{
	return d->errmsg;
}

PGconn *
db_conn(struct db *d)
{
	return d->conn;
}

/* channel's slot in d, registered (and LISTENed on) the first time;
 * NULL when DB_LISTEN_MAX channels are taken or the name is too long. */
static struct db_channel *
channel_of(struct db *d, const char *channel)
{
	struct db_channel *c;

	for (size_t i = 0; i < d->nchan; i++)
		if (strcmp(d->chan[i].name, channel) == 0)
			return &d->chan[i];
	if (d->nchan == DB_LISTEN_MAX || strlen(channel) > DB_CHANNEL_LEN)
		return NULL;
	c = &d->chan[d->nchan++];
	snprintf(c->name, sizeof(c->name), "%s", channel);
	c->version = 0;
	d->listen_gen = 0;	/* LISTEN on the current connection too */
	return c;
}

unsigned long long
db_channel_version(struct db *d, const char *channel)
{
	struct db_channel *c = d->read ? NULL : channel_of(d, channel);

	if (c == NULL || !db_connected(d) || listen_all(d) != 0 || d->listen_gen != d->gen)
		return 0;
	take_notifies(d);
	return c->version;
}
