#ifndef BDS_DB_H
#define BDS_DB_H
/*
 * One persistent libpq connection per worker. Statements are declared by the
 * modules as static struct db_stmt and prepared lazily once per connection.
 * A broken connection is reset on the next call; while the database is away
 * calls fail fast and handlers answer 503 (api_db_error).
 */
#include <stddef.h>
#include <libpq-fe.h>

struct req;
struct arena;
struct json_object;

/* A timestamptz column as the API writes it: ISO 8601 UTC, milliseconds,
 * "2026-01-02T03:04:05.678Z", by the one SQL function for it (bds_iso,
 * sql/016; time_iso in C). Used inside statement text only. */
#define DB_ISO(col) "bds_iso(" col ")"

/*
 * A condition checked on every row found but never used to choose an index
 * (docs/DECISIONS.md "Plan-proof statements"): the tenant beside a lookup
 * by a key unique on its own (a bill's id, a link's id and a statement
 * ref). With no statistics (a fresh database) the planner rates
 * `client_id = $1` as selective as a unique key and may freeze a generic
 * plan on any index leading with client_id, walking all of the client's
 * rows. Inside statement text only: DB_ROW_CHECK("client_id = $1").
 */
#define DB_ROW_CHECK(cond) "(" cond ") IS TRUE"
/*
 * One row by its id ($2) where the table has a unique index on id alone,
 * the tenant ($1) and the conditions in also (" AND ...", or "") checked on
 * the row; p is the table's prefix ("l." or ""). Inside statement text.
 */
#define DB_BY_ID(p, also)	p "id = $2 AND " DB_ROW_CHECK(p "client_id = $1" also)

struct db_stmt {
	const char	*name;		/* unique, used as the prepared name */
	const char	*sql;		/* $1.. parameters, never formatted */
	unsigned	 gen;		/* connection generation it was prepared on */
	unsigned	 gen_read;	/* the same on a read connection (db_new_read) */
};

/* One enum-indexed statement array of a module. */
struct db_stmt_set {
	const char	*module;
	struct db_stmt	*stmts;
	size_t		 n;
};


enum db_fail {
	DB_OK = 0,
	DB_UNAVAILABLE,		/* no connection */
	DB_ERROR		/* the statement failed; see db_sqlstate */
};

struct db;

/* Create the handle; connects lazily, so it succeeds with the database away. */
struct db *db_new(const char *conninfo);
/*
 * A handle for reads on a standby (db.read_url). Its statements are
 * prepared apart from the primary handle's (a statement may be prepared on
 * both at once), it never LISTENs (a standby refuses: db_channel_version
 * answers 0, "unknown"), and a statement refused as a write (25006) is an
 * error of the statement, not a reason to drop the connection: a read
 * route that writes is a bug to see, not a failover.
 */
struct db *db_new_read(const char *conninfo);
void	 db_free(struct db *);
/* Settings for every session of d from its next connection on, as libpq's
 * options ("-c lock_timeout=1000"); NULL none. 0 ok, -1 out of memory. */
int	 db_set_options(struct db *, const char *options);
/* Connect or reconnect if needed; 0 when the connection is usable. */
int	 db_ensure(struct db *);
/* 1 when the last call found the connection usable. */
int	 db_connected(const struct db *);
/* The current connection's generation: it changes with every new
 * connection (what a cache of something about the server must check). */
unsigned db_conn_gen(const struct db *);

/*
 * Run a prepared statement with text parameters (NULL = SQL NULL). The
 * result is PQclear'ed at the arena's reset. NULL on failure, with the
 * reason in db_last_fail() and db_sqlstate(). Outside a transaction a
 * statement that fails because the connection broke is retried once on a
 * fresh connection.
 */
PGresult *db_exec(struct db *, struct arena *, struct db_stmt *,
	    int nparams, const char *const *params);
/*
 * A round trip that runs nothing (an empty query): what the server sent
 * before it, notifications above all, has arrived when it returns. 0 ok,
 * -1 failure (the connection may be gone: see db_connected).
 */
int	 db_sync(struct db *);
/* db_exec for a statement whose row count is the answer (UPDATE,
 * DELETE): the rows it touched, or -1. */
long long db_exec_count(struct db *, struct arena *, struct db_stmt *,
	    int nparams, const char *const *params);
/*
 * A column holding JSON text (an entity PostgreSQL built or keeps beside
 * its row) as a value that prints that text without a parse (json_raw),
 * compacted (json_compact: PostgreSQL writes "a": 1 and "a" : 1, a
 * response "a":1); NULL for SQL NULL. The copy is the arena's.
 */
struct json_object *db_json_raw(struct arena *, const PGresult *, int row, int col);
/* Same through the request's handles. */
PGresult *db_query(struct req *, struct db_stmt *, int nparams,
	    const char *const *params);

/*
 * Change notification for a module's cache (LISTEN/NOTIFY). The first
 * db_channel_version of a channel registers it: d LISTENs on it now when
 * connected and again on every connection it makes. No extra round trip
 * per call: PostgreSQL sends a notification committed before a query was
 * sent ahead of that query's result, and d takes what libpq received after
 * every statement it runs. A db with channels owns its notifications: its
 * users must not read PQnotifies (queue_run, which does, never asks for a
 * channel's version). At most DB_LISTEN_MAX channels of at most
 * DB_CHANNEL_LEN bytes.
 *
 * db_channel_version: a number that changes with every notification taken
 * on channel and with every new connection (what was notified while no
 * connection listened is lost: a reconnect is a change too); process-wide
 * unique, so equal values at two moments mean nothing was notified in
 * between. 0 when d does not listen on channel right now (no connection,
 * no room for it, LISTEN failed): nothing may be served from a cache then.
 * It reflects only what the queries completed so far brought: a cache
 * must look after one query of the request has returned.
 */
#define DB_LISTEN_MAX	4
#define DB_CHANNEL_LEN	63
unsigned long long db_channel_version(struct db *, const char *channel);

/* Transactions: 0 ok, -1 failure. rollback is safe to call any time. */
int	 db_begin(struct db *);
int	 db_commit(struct db *);
void	 db_rollback(struct db *);
/* One mark inside the open transaction (a second replaces it), and the
 * way back to it: what came after is undone, the transaction goes on.
 * 0 ok, -1 (no transaction, or the database failed). */
int	 db_savepoint(struct db *);
int	 db_rollback_to_savepoint(struct db *);
int	 db_in_tx(const struct db *);

enum db_fail db_last_fail(const struct db *);
const char *db_sqlstate(const struct db *);	/* "23505"..., or "" */
const char *db_errmsg(const struct db *);	/* for the log only */
PGconn	*db_conn(struct db *);			/* LISTEN, tests */
/* Prepare a statement on the current connection now (tests). 0 ok. */
int	 db_prepare(struct db *, struct db_stmt *);
/* Prepare every statement of set now. 0 ok; -1 with *failed naming the
 * first one that did not prepare (db_errmsg says why). */
int	 db_prepare_set(struct db *, const struct db_stmt_set *set,
	    const char **failed);
/*
 * Run a trusted script (a migration file: several statements, no
 * parameters) with the simple query protocol. Never for input. 0 ok, -1
 * with the reason in db_errmsg().
 */
int	 db_exec_script(struct db *, const char *sql);

#endif
