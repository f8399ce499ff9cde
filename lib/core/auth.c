/* Developer JWTs (AUTH_JWT): signature, claims, and a live session. */
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <sodium.h>

#include "core/arena.h"
#include "core/auth.h"
#include "core/config.h"
#include "core/crypto.h"
#include "core/env.h"
#include "core/db.h"
#include "core/errors.h"
#include "core/json.h"
#include "core/jwt.h"
#include "core/log.h"
#include "core/req.h"
#include "core/router.h"

enum { AUTH_SESSION_LIVE, AUTH_KEY_LOOKUP, AUTH_KEY_LIVE, AUTH__MAX };
static struct db_stmt stmts[AUTH__MAX] = {
	/* One indexed lookup per request: sign-out and password changes
	 * revoke at once. */
	[AUTH_SESSION_LIVE] = { "auth_session_live",
	    "SELECT 1 FROM sessions WHERE id = $1 AND user_id = $2"
	    " AND revoked_at IS NULL" },
	/*
	 * One indexed lookup: a revoked or rotated key fails at once, but for
	 * a key replaced with a grace (a claimed sandbox's, grace_until):
	 * that one works until then, and the fifth column says until when
	 * (epoch seconds; 0 for a live key).
	 */
	[AUTH_KEY_LOOKUP] = { "auth_key_lookup",
	    "SELECT s.client_id, s.environment, s.id, c.user_id,"
	    " CASE WHEN s.revoked_at IS NULL THEN 0"
	    "  ELSE floor(extract(epoch FROM s.grace_until))::bigint END"
	    " FROM client_secrets s JOIN clients c ON c.id = s.client_id"
	    " WHERE s.key_hash = decode($1, 'hex')"
	    " AND (s.revoked_at IS NULL OR s.grace_until > now())" },
	/*
	 * A cached key after a change of client_secrets: still live? It
	 * fails when not (division by zero, SQLSTATE 22012: the count is 0).
	 */
	[AUTH_KEY_LIVE] = { "auth_key_live",
	    "SELECT 1 / count(*) FROM client_secrets WHERE id = $1"
	    " AND (revoked_at IS NULL OR grace_until > now())" },
};
const struct db_stmt_set auth_stmt_set = { "auth", stmts, AUTH__MAX };
/* auth_key_lookup */
enum { KL_CLIENT, KL_ENV, KL_SECRET, KL_OWNER, KL_UNTIL, KL__MAX };

int64_t
auth_now(void)
{
	return (int64_t)time(NULL);
}

const struct jwt_key *
auth_jwt_key(const struct config *cfg)
{
	static struct jwt_key key;
	static const unsigned char *seed_of;

	if (seed_of != cfg->jwt_seed) {
		if (jwt_key_from_seed(&key, cfg->jwt_seed) != 0)
			return NULL;
		seed_of = cfg->jwt_seed;
	}
	return &key;
}

/* The bearer token, or the auth cookie when no Authorization header. */
static const char *
bearer(struct req *r)
{
	const char *h = r->http.authorization, *c, *p;
	size_t nlen;

	if (h != NULL) {
		if (strncasecmp(h, "Bearer ", 7) != 0)
			return NULL;
		for (h += 7; *h == ' '; h++)
			;
		return *h ? h : NULL;
	}
	if ((c = r->http.cookie) == NULL)
		return NULL;
	nlen = strlen(r->cfg->cookie_name);
	for (p = c; (p = strstr(p, r->cfg->cookie_name)) != NULL; p += nlen) {
		if ((p == c || p[-1] == ' ' || p[-1] == ';') && p[nlen] == '=') {
			const char *v = p + nlen + 1;

			return arena_strndup(r->arena, v, strcspn(v, "; "));
		}
	}
	return NULL;
}

static int
auth_jwt(struct req *r)
{
	const struct jwt_key *key = auth_jwt_key(r->cfg);
	struct json_object *claims;
	const char *tok = bearer(r), *why = NULL, *use, *sub, *sid;
	const char *params[2];
	PGresult *res;

	if (tok == NULL)
		return api_error(r, 401, ERR_UNAUTHORIZED, "send Authorization: Bearer <accessToken>",
		    "missing access token");
	if (key == NULL || jwt_verify(r->arena, key, tok, r->cfg->jwt_issuer,
	    AUTH_AUDIENCE, auth_now(), &claims, &why) != 0) {
		log_msg("info", "request %s: token refused: %s", r->http.request_id,
		    why ? why : "no key");
		return api_error(r, 401, ERR_UNAUTHORIZED, "sign in again",
		    "invalid or expired access token");
	}
	use = json_get_str(claims, "token_use");
	sub = json_get_str(claims, "sub");
	sid = json_get_str(claims, "sid");
	if (use == NULL || strcmp(use, "access") != 0 || sub == NULL || sid == NULL)
		return api_error(r, 401, ERR_UNAUTHORIZED, "use the access token",
		    "invalid or expired access token");
	params[0] = sid;
	params[1] = sub;
	if ((res = db_query(r, &stmts[AUTH_SESSION_LIVE], 2, params)) == NULL)
		return api_db_error(r);
	if (PQntuples(res) != 1)
		return api_error(r, 401, ERR_UNAUTHORIZED, "sign in again",
		    "the session has ended");
	r->user_id = sub;
	r->session_id = sid;
	return 0;
}

/* ---- API keys ---- */

static const char b62[] = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/* n bytes, big-endian, as exactly width base62 digits. */
static void
base62(const unsigned char *in, size_t n, char *out, size_t width)
{
	unsigned char num[64];

	memcpy(num, in, n);
	for (size_t w = width; w-- > 0;) {
		unsigned rem = 0;

		for (size_t i = 0; i < n; i++) {
			unsigned cur = rem * 256 + num[i];

			num[i] = (unsigned char)(cur / 62);
			rem = cur % 62;
		}
		out[w] = b62[rem];
	}
	out[width] = '\0';
}

static uint32_t
crc32(const char *s, size_t n)
{
	uint32_t c = 0xffffffffu;

	for (size_t i = 0; i < n; i++) {
		c ^= (unsigned char)s[i];
		for (int k = 0; k < 8; k++)
			c = (c >> 1) ^ (0xedb88320u & (0u - (c & 1u)));
	}
	return ~c;
}

static void
checksum(const char *s, size_t n, char out[7])
{
	uint32_t c = crc32(s, n);
	unsigned char be[4] = { (unsigned char)(c >> 24), (unsigned char)(c >> 16),
	    (unsigned char)(c >> 8), (unsigned char)c };

	base62(be, 4, out, 6);
}

char *
auth_key_new(struct arena *a, const char *env)
{
	unsigned char raw[32];
	char body[44], sum[7], *key;

	crypto_random_bytes(raw, sizeof(raw));
	base62(raw, sizeof(raw), body, 43);
	key = arena_printf(a, "bds_%s_%s", env, body);
	checksum(key, strlen(key), sum);
	return arena_printf(a, "%s%s", key, sum);
}

int
auth_key_wellformed(const char *key)
{
	size_t n = strlen(key), envlen;
	char sum[7];

	for (size_t i = 0; i < ENV__MAX; i++) {
		envlen = strlen(env_names[i]);
		if (n == 4 + envlen + 1 + 43 + 6 && strncmp(key, "bds_", 4) == 0 &&
		    strncmp(key + 4, env_names[i], envlen) == 0 && key[4 + envlen] == '_') {
			if (strspn(key + 5 + envlen, b62) != 49)
				return 0;
			checksum(key, n - 6, sum);
			return crypto_ct_equal(sum, key + n - 6, 6);
		}
	}
	return 0;
}

char *
auth_token_new(struct arena *a, const char *prefix)
{
	unsigned char raw[32];
	char body[44], sum[7], *tok;

	crypto_random_bytes(raw, sizeof(raw));
	base62(raw, sizeof(raw), body, 43);
	sodium_memzero(raw, sizeof(raw));
	tok = arena_printf(a, "%s%s", prefix, body);
	checksum(tok, strlen(tok), sum);
	return arena_printf(a, "%s%s", tok, sum);
}

int
auth_token_wellformed(const char *s, const char *prefix)
{
	size_t n, plen = strlen(prefix);
	char sum[7];

	if (s == NULL || strncmp(s, prefix, plen) != 0)
		return 0;
	n = strlen(s);
	if (n != plen + 43 + 6 || strspn(s + plen, b62) != 49)
		return 0;
	checksum(s, n - 6, sum);
	return crypto_ct_equal(sum, s + n - 6, 6);
}

char *
auth_key_hash(struct arena *a, const char *key)
{
	unsigned char h[32];

	crypto_sha256(key, strlen(key), h);
	return crypto_hex_encode(a, h, sizeof(h));
}

/* Bearer <key>, or Basic base64(<client_id>:<key>). */
static const char *
key_credential(struct req *r, const char **basic_client)
{
	const char *h = r->http.authorization;
	unsigned char *dec;
	size_t len;
	char *colon;

	*basic_client = NULL;
	if (h == NULL)
		return NULL;
	if (strncasecmp(h, "Bearer ", 7) == 0) {
		for (h += 7; *h == ' '; h++)
			;
		return h;
	}
	if (strncasecmp(h, "Basic ", 6) != 0)
		return NULL;
	for (h += 6; *h == ' '; h++)
		;
	/* Basic uses standard base64; map it to the url-safe alphabet. */
	{
		char *t = arena_strdup(r->arena, h);
		size_t tl = strlen(t);

		while (tl > 0 && t[tl - 1] == '=')
			t[--tl] = '\0';
		for (char *p = t; *p; p++)
			*p = *p == '+' ? '-' : *p == '/' ? '_' : *p;
		if (crypto_b64url_decode(r->arena, t, &dec, &len) != 0 ||
		    (colon = memchr(dec, ':', len)) == NULL)
			return NULL;
	}
	/*
	 * No control character (NUL above all: "cli_x\0junk" would compare
	 * equal to cli_x) in the client id or the key: refused before any
	 * lookup.
	 */
	for (size_t i = 0; i < len; i++)
		if (dec[i] < 0x20 || dec[i] == 0x7f)
			return NULL;
	*colon = '\0';
	*basic_client = (const char *)dec;
	return colon + 1;
}

/*
 * The worker's key cache: what a key resolved to (none of it changes for a
 * key: a rotation makes a new key). A hit skips the lookup; its liveness
 * comes from LISTEN bds_keys (sql/030_keys_notify.sql: every statement
 * that revokes or deletes a client secret notifies it at commit, before
 * the revoking request is answered). PostgreSQL sends a notification
 * signalled before a query arrives ahead of that query's result, so once
 * a round trip of this request has returned with the channel unchanged
 * since the key was last confirmed, no revocation that ended before this
 * request began was missed. A changed channel (any key revoked, or a new
 * connection) costs one liveness query. Round-robin replacement; entries
 * older than KEY_CACHE_TTL are looked up again.
 */
#define KEY_CACHE_SIZE	64
#define KEY_CACHE_TTL	300
#define KEY_FIELD	64
#define KEY_CHANNEL	"bds_keys"

struct key_entry {
	unsigned char	 hash[32];
	int64_t		 at;		/* 0: empty */
	int64_t		 until;		/* a key in its grace: works before this; 0 none */
	unsigned long long version;	/* KEY_CHANNEL's when last confirmed; 0 never */
	char		 client_id[KEY_FIELD], env[16], secret_id[KEY_FIELD],
			 owner_id[KEY_FIELD];
};
static struct key_entry key_cache[KEY_CACHE_SIZE];
static size_t key_next;

static struct key_entry *
key_cache_find(const unsigned char hash[32])
{
	int64_t now = auth_now();

	for (size_t i = 0; i < KEY_CACHE_SIZE; i++) {
		struct key_entry *e = &key_cache[i];

		if (e->at != 0 && now - e->at < KEY_CACHE_TTL &&
		    (e->until == 0 || now < e->until) &&
		    sodium_memcmp(e->hash, hash, 32) == 0)
			return e;
	}
	return NULL;
}

static void
key_cache_put(const unsigned char hash[32], const struct req *r, unsigned long long version,
    int64_t until)
{
	struct key_entry *e = &key_cache[key_next++ % KEY_CACHE_SIZE];

	if (strlen(r->client_id) >= KEY_FIELD || strlen(r->env) >= sizeof(e->env) ||
	    strlen(r->secret_id) >= KEY_FIELD || strlen(r->owner_id) >= KEY_FIELD)
		return;
	memcpy(e->hash, hash, 32);
	strcpy(e->client_id, r->client_id);
	strcpy(e->env, r->env);
	strcpy(e->secret_id, r->secret_id);
	strcpy(e->owner_id, r->owner_id);
	e->version = version;
	e->until = until;
	e->at = auth_now();
}

/* The secret's entries: confirmed at version, or dropped (version 0: revoked,
 * or no version to keep them at). */
static void
key_cache_mark(const char *secret_id, unsigned long long version)
{
	for (size_t i = 0; i < KEY_CACHE_SIZE; i++) {
		if (key_cache[i].at == 0 || strcmp(key_cache[i].secret_id, secret_id) != 0)
			continue;
		if (version == 0)
			key_cache[i].at = 0;
		else
			key_cache[i].version = version;
	}
}

/*
 * Confirm a cached key. after_query: a round trip of this request has
 * returned since the key was taken from the cache; otherwise one is made
 * (an empty query, the cheapest). The channel unchanged: live. Changed: the
 * liveness query, its version read before it is sent (a revocation after
 * its snapshot changes the channel again). 0 confirmed or revoked (see
 * r->key_revoked), -1 database failure.
 */
static int
key_confirm(struct req *r, int after_query)
{
	const char *p[1] = { r->key_unconfirmed };
	unsigned long long v;
	int fresh;

	if (p[0] == NULL)
		return 0;
	fresh = after_query || db_sync(r->db) == 0;
	/* 0 when the worker cannot listen (no connection): asked below */
	v = db_channel_version(r->db, KEY_CHANNEL);
	if (fresh && v != 0 && v == r->key_version) {
		r->key_unconfirmed = NULL;
		r->after_query = NULL;
		return 0;
	}
	if (db_exec(r->db, r->arena, &stmts[AUTH_KEY_LIVE], 1, p) != NULL)
		key_cache_mark(p[0], v);
	else if (strcmp(db_sqlstate(r->db), "22012") == 0) {
		key_cache_mark(p[0], 0);
		r->key_revoked = 1;
	} else
		return -1;
	r->key_unconfirmed = NULL;
	r->after_query = NULL;
	return 0;
}

/* r->after_query of a cached key: the query just made was the round trip;
 * -1 drops its result (database failure, or the key revoked). */
static int
key_after_query(struct req *r)
{
	return key_confirm(r, 1) != 0 || r->key_revoked ? -1 : 0;
}

int
auth_confirm(struct req *r)
{
	return key_confirm(r, 0);
}

int
auth_host_or_reply(struct req *r, const char *what)
{
	int sandbox_host = r->http.host_env != NULL && strcmp(r->http.host_env, "sandbox") == 0;

	/* The sandbox host takes sandbox credentials only; the live host the others. */
	if (sandbox_host != (strcmp(r->env, "sandbox") == 0))
		return api_error(r, 401, ERR_WRONG_ENVIRONMENT,
		    sandbox_host ? "send it to the live host, or use a sandbox credential here" :
		    "send sandbox credentials to the sandbox host",
		    "this %s %s is not accepted on the %s host", r->env, what,
		    sandbox_host ? "sandbox" : "live");
	return 0;
}

static int
auth_key(struct req *r)
{
	const char *basic_client, *key = key_credential(r, &basic_client);
	const struct key_entry *e;
	unsigned long long version;
	unsigned char hash[32];
	const char *p[1];
	PGresult *res;

	if (key == NULL)
		return api_error(r, 401, ERR_UNAUTHORIZED, "send Authorization: Bearer <API key>",
		    "missing or invalid credentials");
	crypto_sha256(key, strlen(key), hash);
	/* a cached key was well-formed when it was looked up */
	if ((e = key_cache_find(hash)) == NULL && !auth_key_wellformed(key))
		return api_error(r, 401, ERR_UNAUTHORIZED, "send Authorization: Bearer <API key>",
		    "missing or invalid credentials");
	if (e != NULL) {
		if (basic_client != NULL && strcmp(basic_client, e->client_id) != 0)
			return api_error(r, 401, ERR_UNAUTHORIZED, NULL,
			    "missing or invalid credentials");
		r->client_id = arena_strdup(r->arena, e->client_id);
		r->env = arena_strdup(r->arena, e->env);
		r->secret_id = arena_strdup(r->arena, e->secret_id);
		r->owner_id = arena_strdup(r->arena, e->owner_id);
		r->key_unconfirmed = r->secret_id;
		r->key_version = e->version;
		r->after_query = key_after_query;
		return auth_host_or_reply(r, "key");
	}
	version = db_channel_version(r->db, KEY_CHANNEL);
	p[0] = crypto_hex_encode(r->arena, hash, sizeof(hash));
	if ((res = db_query(r, &stmts[AUTH_KEY_LOOKUP], 1, p)) == NULL)
		return api_db_error(r);
	if (PQntuples(res) != 1 ||
	    (basic_client != NULL && strcmp(basic_client, PQgetvalue(res, 0, KL_CLIENT)) != 0))
		return api_error(r, 401, ERR_UNAUTHORIZED, NULL, "missing or invalid credentials");
	r->client_id = arena_strdup(r->arena, PQgetvalue(res, 0, KL_CLIENT));
	r->env = arena_strdup(r->arena, PQgetvalue(res, 0, KL_ENV));
	r->secret_id = arena_strdup(r->arena, PQgetvalue(res, 0, KL_SECRET));
	r->owner_id = arena_strdup(r->arena, PQgetvalue(res, 0, KL_OWNER));
	key_cache_put(hash, r, version, strtoll(PQgetvalue(res, 0, KL_UNTIL), NULL, 10));
	return auth_host_or_reply(r, "key");
}

/* The row of routes_tokens whose prefix cred starts with, among the
 * kinds the route takes; NULL when none. */
static const struct route_token *
token_kind(unsigned kinds, const char *cred)
{
	for (size_t i = 0; i < routes_tokens_count; i++) {
		const struct route_token *t = &routes_tokens[i];

		if ((kinds & t->kind) && strncmp(cred, t->prefix, strlen(t->prefix)) == 0)
			return t;
	}
	return NULL;
}

int
auth_resolve(struct req *r)
{
	unsigned kinds = r->match.route->auth;

	/* A token of a token kind is recognisable by its prefix. */
	if (kinds & ~(AUTH_JWT | AUTH_KEY)) {
		const char *basic, *cred = key_credential(r, &basic);
		const struct route_token *t;

		if (basic == NULL && cred != NULL && (t = token_kind(kinds, cred)) != NULL)
			return t->resolve != NULL ? t->resolve(r, cred) :
			    api_error(r, 401, ERR_UNAUTHORIZED, NULL,
			    "this kind of token is not accepted yet");
	}
	/* A route taking both: a key is recognisable by its format. */
	if (kinds & AUTH_KEY) {
		const char *basic, *cred = key_credential(r, &basic);

		if (!(kinds & AUTH_JWT) || basic != NULL ||
		    (cred != NULL && auth_key_wellformed(cred)))
			return auth_key(r);
	}
	if (kinds & AUTH_JWT)
		return auth_jwt(r);
	return api_error(r, 401, ERR_UNAUTHORIZED, NULL, "missing or invalid credentials");
}
