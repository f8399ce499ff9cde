#ifndef BDS_IDEM_H
#define BDS_IDEM_H
/*
 * Idempotency keys (DESIGN "Idempotency"). Inside the caller's transaction:
 *
 *	if ((rc = idem_begin(r, owner, key, &st, &out2)) != 0) return rc;
 *	if (st == IDEM_REPLAY) return the stored status with *stored as body;
 *	... do the work ...
 *	idem_finish(r, owner, key, status, body_or_NULL);  then commit.
 *
 * A concurrent duplicate waits on the row lock and then sees the first
 * one's outcome. Keys are scoped by owner (client or user id) and route,
 * and expire after 24 hours.
 */
struct arena;
struct config;
struct db;
struct req;
struct json_object;
struct db_stmt_set;

enum idem_state {
	IDEM_NEW,	/* first use: do the work, then idem_finish */
	IDEM_REPLAY	/* same key, same body: *status and *stored are the answer */
};

/* 0 when key is an Idempotency-Key (1 to 255 printable ASCII characters),
 * else the 400 written ("required" when none was sent). */
int	 idem_key_or_reply(struct req *, const char *key);
/*
 * Validate the key (idem_key_or_reply) and claim it. The body compared is
 * the validated one in canonical form (json_canonical): the same JSON
 * written otherwise is the same request. Returns 0 with *st set,
 * or an error status already written: 409 IDEMPOTENCY_CONFLICT (same key,
 * other body), 409 IDEMPOTENCY_KEY_NOT_REPLAYABLE (the first answer held a
 * one-time secret, or its sealed secret no longer opens), or a database
 * error.
 */
int	 idem_begin(struct req *, const char *owner, const char *key,
	    enum idem_state *st, int *status, struct json_object **stored);
/* Record the outcome. body NULL: not replayable (a one-time secret was in
 * it). A bearer secret among body's top-level members (a string starting
 * bds_: a sandbox account link's access token) is stored sealed under the
 * credential vault, never readable in the record; a replay opens it.
 * 0 ok, -1 database or sealing failure. */
int	 idem_finish(struct req *, const char *owner, const char *key, int status,
	    struct json_object *body);

/*
 * Drop owner's replay records whose stored answer's top-level member is
 * value (a sandbox account link's {"link_id": ...}), so the same key then
 * makes a new object. Inside the caller's transaction; 0 ok, -1 database
 * failure.
 */
int	 idem_forget(struct req *, const char *owner, const char *member, const char *value);

/* Remove expired keys (bdsctl jobs): how many, or -1. */
long long idem_sweep(const struct config *, struct db *, struct arena *);

extern const struct db_stmt_set idem_stmt_set;

#endif
