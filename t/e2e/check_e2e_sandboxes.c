/*
 * Anonymous sandboxes end to end, through nginx and PostgreSQL: the
 * journey of someone with no account (POST /v1/sandboxes with no
 * credential, a sandbox account link with the key it answers, the bills
 * sync loop to has_more false, the inbox holding the signed deliveries
 * with their headers, the signature checked with the subscription's secret
 * by OpenSSL's HMAC), then a developer's claim (the client is theirs, a new
 * key, the old one working until its grace ends, then 401, sandbox.claimed
 * in the inbox and at a receiver), the expiry sweep of `bdsctl jobs` over
 * rows aged by SQL (sandbox.expiring once; an unclaimed expired sandbox's
 * client deleted with every row of it), the evaluation proof verified by
 * `openssl pkeyutl -verify -rawin` against the JWKS's Ed25519 key, the
 * errors, and nginx's per-address limit on creation.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>
#include <json-c/json.h>
#include <libpq-fe.h>
#include <openssl/evp.h>

#include "devacct.h"
#include "harness.h"
#include "receiver.h"

#define IDLE_MS 60000

static struct devacct dev, dev2;

/* What POST /v1/sandboxes answered (malloc'ed strings). */
struct sbx {
	char	*id, *client, *key, *token, *secret, *webhook;
};

static char *
dup_str(const struct harness_resp *r, const char *path)
{
	const char *s = devacct_str(r, path);

	ck_assert_msg(s != NULL, "no %s in %s", path, r->body);
	return strdup(s);
}

static struct harness_resp *
create_call(const char *body)
{
	return devacct_call("POST", "sandbox", "/v1/sandboxes", NULL, body, NULL);
}

static void
sbx_new(struct sbx *s)
{
	struct harness_resp *r = create_call("{\"name\":\"Evaluation\"}");

	harness_expect(r, 201);
	s->id = dup_str(r, "sandbox_id");
	s->client = dup_str(r, "client_id");
	s->key = dup_str(r, "api_key");
	s->token = dup_str(r, "claim_token");
	s->secret = dup_str(r, "webhook_secret");
	s->webhook = dup_str(r, "webhook_endpoint_id");
	harness_resp_free(r);
}

static void
sbx_free(struct sbx *s)
{
	free(s->id);
	free(s->client);
	free(s->key);
	free(s->token);
	free(s->secret);
	free(s->webhook);
	memset(s, 0, sizeof(*s));
}

static struct harness_resp *
sbx_call(const char *key, const char *method, const char *path, const char *body)
{
	return devacct_call(method, "sandbox", path, key != NULL ? devacct_bearer(key) : NULL,
	    body, NULL);
}

static struct harness_resp *
claim_call(const struct devacct *d, const char *id, const char *token)
{
	return devacct_call("POST", "sandbox", harness_fmt("/v1/sandboxes/%s/claim", id),
	    devacct_bearer(d->access), harness_fmt("{\"claim_token\":\"%s\"}", token), NULL);
}

static void
jobs_idle(void)
{
	ck_assert_msg(harness_jobs_wait_idle(IDLE_MS) == 0, "%s", harness_error());
}

/* The sync loop of link with key until has_more false: the bills it
 * delivered (added). */
static long long
sync_loop(const char *key, const char *link)
{
	char cursor[1100] = "";
	long long added = 0;

	for (int pages = 0; pages < 100; pages++) {
		struct harness_resp *r = sbx_call(key, "GET", cursor[0] == '\0' ?
		    harness_fmt("/v1/account-links/%s/bills/sync?limit=2", link) :
		    harness_fmt("/v1/account-links/%s/bills/sync?limit=2&cursor=%s", link, cursor),
		    NULL);
		struct json_object *a = devacct_json(r, "data.added");
		int more;

		harness_expect(r, 200);
		ck_assert_ptr_nonnull(a);
		added += (long long)json_object_array_length(a);
		more = devacct_bool(r, "data.has_more");
		snprintf(cursor, sizeof(cursor), "%s", devacct_str(r, "data.next_cursor"));
		harness_resp_free(r);
		if (!more)
			return added;
	}
	ck_abort_msg("the sync never ended");
	return 0;
}

/* A header of an inbox item. */
static const char *
item_header(struct json_object *item, const char *name)
{
	struct json_object *h, *v;

	if (!json_object_object_get_ex(item, "headers", &h) ||
	    !json_object_object_get_ex(h, name, &v))
		return NULL;
	return json_object_get_string(v);
}

static const char *
item_str(struct json_object *item, const char *name)
{
	struct json_object *v;

	return json_object_object_get_ex(item, name, &v) ? json_object_get_string(v) : NULL;
}

/* Check one inbox item as a receiver would: the signature over the exact
 * body with the secret (OpenSSL HMAC, receiver.h), the headers naming the
 * body's event. */
static void
item_verifies(struct json_object *item, const char *secret)
{
	const char *body = item_str(item, "body"), *sig = item_header(item, "Service-Signature");
	char v1[4][65], want[65];
	struct json_object *b, *v;
	long long t;
	int n, ok = 0;

	ck_assert_ptr_nonnull(body);
	ck_assert_ptr_nonnull(sig);
	n = receiver_sig_parse(sig, &t, v1, 4);
	ck_assert_int_ge(n, 1);
	receiver_hmac_hex(secret, t, body, strlen(body), want);
	for (int i = 0; i < n; i++)
		ok |= strcmp(v1[i], want) == 0;
	ck_assert_msg(ok, "signature %s does not verify over %s", sig, body);
	receiver_hmac_hex("whsec_not-the-secret-at-all", t, body, strlen(body), want);
	ck_assert_str_ne(v1[0], want);
	ck_assert_str_eq(item_header(item, "Content-Type"), "application/json");
	ck_assert_str_eq(item_header(item, "X-Webhook-Event-Type"), item_str(item, "event_type"));
	ck_assert_str_eq(item_header(item, "X-Webhook-Id"), item_str(item, "event_id"));
	ck_assert_ptr_nonnull(item_header(item, "X-Webhook-Timestamp"));
	ck_assert_ptr_nonnull(item_header(item, "X-Webhook-Client-Id"));
	b = json_tokener_parse(body);
	ck_assert_ptr_nonnull(b);
	ck_assert(json_object_object_get_ex(b, "type", &v));
	ck_assert_str_eq(json_object_get_string(v), item_str(item, "event_type"));
	ck_assert(json_object_object_get_ex(b, "id", &v));
	ck_assert_str_eq(json_object_get_string(v), item_str(item, "event_id"));
	json_object_put(b);
}

/* The whole inbox of s (every page), each item verified; the number of
 * items of type (NULL: all) and, when data_out is set, the body's
 * data.object of the last one of that type (json_object_put by caller). */
static size_t
inbox_count(const struct sbx *s, const char *key, const char *type,
    struct json_object **data_out)
{
	char cursor[1100] = "";
	size_t n = 0;

	for (int pages = 0; pages < 100; pages++) {
		struct harness_resp *r = sbx_call(key, "GET", cursor[0] == '\0' ?
		    harness_fmt("/v1/sandboxes/%s/inbox?limit=10", s->id) :
		    harness_fmt("/v1/sandboxes/%s/inbox?limit=10&cursor=%s", s->id, cursor), NULL);
		struct json_object *data = devacct_json(r, "data");
		int more;

		harness_expect(r, 200);
		ck_assert_str_eq(devacct_str(r, "object"), "list");
		ck_assert_ptr_nonnull(data);
		for (size_t i = 0; i < json_object_array_length(data); i++) {
			struct json_object *it = json_object_array_get_idx(data, i);

			item_verifies(it, s->secret);
			ck_assert_int_eq(strncmp(item_str(it, "delivery_id"), "dlv_", 4), 0);
			ck_assert_ptr_nonnull(item_str(it, "received_at"));
			if (type != NULL && strcmp(item_str(it, "event_type"), type) != 0)
				continue;
			if (data_out != NULL && *data_out == NULL) {
				struct json_object *b = json_tokener_parse(item_str(it, "body")), *d,
				    *o;

				if (json_object_object_get_ex(b, "data", &d) &&
				    json_object_object_get_ex(d, "object", &o))
					*data_out = json_object_get(o);
				json_object_put(b);
			}
			n++;
		}
		more = devacct_bool(r, "has_more");
		if (more)
			snprintf(cursor, sizeof(cursor), "%s", devacct_str(r, "next_cursor"));
		harness_resp_free(r);
		if (!more)
			return n;
	}
	ck_abort_msg("the inbox never ended");
	return 0;
}

static long long
identity_status(const char *key)
{
	struct harness_resp *r = sbx_call(key, "GET", "/v1/identity", NULL);
	long long st = r->status;

	harness_resp_free(r);
	return st;
}

/* ---- the proof: openssl against the JWKS ---- */

/* base64url (no padding) into out; its length, or -1. */
static int
b64url_decode(const char *in, size_t n, unsigned char *out, size_t max)
{
	char *b = malloc(n + 4);
	size_t m = n;
	int len;

	ck_assert_ptr_nonnull(b);
	for (size_t i = 0; i < n; i++)
		b[i] = in[i] == '-' ? '+' : in[i] == '_' ? '/' : in[i];
	while (m % 4 != 0)
		b[m++] = '=';
	if (m / 4 * 3 > max) {
		free(b);
		return -1;
	}
	len = EVP_DecodeBlock(out, (unsigned char *)b, (int)m);
	if (len >= 0)
		len -= (int)(m - n);	/* the padding decoded as zero bytes */
	free(b);
	return len;
}

static void
write_file(const char *path, const void *data, size_t n)
{
	FILE *f = fopen(path, "wb");

	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(data, 1, n, f), n);
	ck_assert_int_eq(fclose(f), 0);
}

/* `openssl pkeyutl -verify` of the compact JWS jws with the JWKS's key:
 * its exit status (0: verified). The payload's JSON into *payload. */
static int
openssl_verify(const char *jws, const char *dir, struct json_object **payload)
{
	static const unsigned char prefix[12] = { 0x30, 0x2a, 0x30, 0x05, 0x06, 0x03, 0x2b,
	    0x65, 0x70, 0x03, 0x21, 0x00 };
	struct harness_resp *r = harness_get("sandbox", "/.well-known/jwks.json");
	const char *dot1 = strchr(jws, '.'), *dot2 = dot1 ? strchr(dot1 + 1, '.') : NULL;
	const char *x, *kid;
	unsigned char der[44], sig[128], pay[4096], b64[80];
	char pem[256], hdrtxt[512];
	struct json_object *h;
	int n, st;

	harness_expect(r, 200);
	x = devacct_str(r, "keys.0.x");
	kid = devacct_str(r, "keys.0.kid");
	ck_assert_ptr_nonnull(x);
	ck_assert_str_eq(devacct_str(r, "keys.0.crv"), "Ed25519");
	ck_assert_ptr_nonnull(dot1);
	ck_assert_ptr_nonnull(dot2);
	/* the header: EdDSA, JWT, the JWKS's kid */
	n = b64url_decode(jws, (size_t)(dot1 - jws), (unsigned char *)hdrtxt,
	    sizeof(hdrtxt) - 1);
	ck_assert_int_gt(n, 0);
	hdrtxt[n] = '\0';
	h = json_tokener_parse(hdrtxt);
	ck_assert_ptr_nonnull(h);
	ck_assert_str_eq(json_object_get_string(json_object_object_get(h, "alg")), "EdDSA");
	ck_assert_str_eq(json_object_get_string(json_object_object_get(h, "typ")), "JWT");
	ck_assert_str_eq(json_object_get_string(json_object_object_get(h, "kid")), kid);
	json_object_put(h);
	/* the public key: DER prefix + the 32 bytes of x, as PEM */
	memcpy(der, prefix, sizeof(prefix));
	ck_assert_int_eq(b64url_decode(x, strlen(x), der + 12, sizeof(der) - 12 + 2), 32);
	ck_assert_int_eq(EVP_EncodeBlock(b64, der, 44), 60);
	snprintf(pem, sizeof(pem), "-----BEGIN PUBLIC KEY-----\n%s\n-----END PUBLIC KEY-----\n",
	    b64);
	harness_resp_free(r);
	write_file(harness_fmt("%s/pub.pem", dir), pem, strlen(pem));
	write_file(harness_fmt("%s/signing_input", dir), jws, (size_t)(dot2 - jws));
	n = b64url_decode(dot2 + 1, strlen(dot2 + 1), sig, sizeof(sig));
	ck_assert_int_eq(n, 64);
	write_file(harness_fmt("%s/sig.bin", dir), sig, 64);
	n = b64url_decode(dot1 + 1, (size_t)(dot2 - dot1 - 1), pay, sizeof(pay) - 1);
	ck_assert_int_gt(n, 0);
	pay[n] = '\0';
	*payload = json_tokener_parse((char *)pay);	/* NULL when tampered with */
	{
		const char *argv[] = { "openssl", "pkeyutl", "-verify", "-pubin", "-inkey",
		    harness_fmt("%s/pub.pem", dir), "-rawin", "-in",
		    harness_fmt("%s/signing_input", dir), "-sigfile",
		    harness_fmt("%s/sig.bin", dir), NULL };
		struct harness_child c = { argv, NULL, NULL, NULL, 30000 };

		st = harness_run_child(&c);
	}
	return st;
}

/* A fresh directory for the proof's files. */
static char *
proof_dir(void)
{
	char *d = strdup(harness_fmt("%s/proof-XXXXXX", harness_dir()));

	ck_assert_ptr_nonnull(mkdtemp(d));
	return d;
}

static long long
claim_int(struct json_object *c, const char *k)
{
	struct json_object *v;

	ck_assert_msg(json_object_object_get_ex(c, k, &v), "no claim %s", k);
	return json_object_get_int64(v);
}

static int
types_hold(struct json_object *c, const char *type)
{
	struct json_object *a;

	ck_assert(json_object_object_get_ex(c, "event_types_seen", &a));
	for (size_t i = 0; i < json_object_array_length(a); i++)
		if (strcmp(json_object_get_string(json_object_array_get_idx(a, i)), type) == 0)
			return 1;
	return 0;
}

/* ------------------------------------------------------------------ */

/* POST /v1/sandboxes: a working client of no developer, its key, a claim
 * token kept as its hash, an inbox subscription to every event. */
START_TEST(create_answers_a_working_sandbox)
{
	struct sbx s;
	struct harness_resp *r;
	char *v;

	sbx_new(&s);
	ck_assert_int_eq(strncmp(s.id, "sbx_", 4), 0);
	ck_assert_int_eq(strncmp(s.key, "bds_sandbox_", 12), 0);
	ck_assert_int_eq(strncmp(s.token, "bds_sct_", 8), 0);
	ck_assert_int_eq(strncmp(s.secret, "whsec_", 6), 0);
	/* the answer's other members */
	r = create_call(NULL);
	harness_expect(r, 201);
	ck_assert_str_eq(devacct_str(r, "object"), "sandbox");
	ck_assert_str_eq(devacct_str(r, "name"), "Anonymous sandbox");
	ck_assert_int_eq(devacct_bool(r, "claimed"), 0);
	{
		const char *u = devacct_str(r, "inbox_url");
		const char *want = harness_fmt("/v1/sandboxes/%s/inbox", devacct_str(r,
		    "sandbox_id"));

		ck_assert_ptr_nonnull(u);
		ck_assert_uint_gt(strlen(u), strlen(want));
		ck_assert_str_eq(u + strlen(u) - strlen(want), want);
	}
	v = devacct_sql_value("SELECT (expires_at - created_at = interval '60 days')::text"
	    " FROM sandboxes WHERE id = $1", devacct_str(r, "sandbox_id"), NULL);
	ck_assert_str_eq(v, "true");
	free(v);
	harness_resp_free(r);

	/* no developer; the token only as its SHA-256 */
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM clients WHERE id = $1"
	    " AND user_id IS NULL", s.client, NULL), 1);
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM sandboxes WHERE id = $1"
	    " AND claim_sha256 = sha256(convert_to($2, 'UTF8'))", s.id, s.token), 1);
	/* the key works, on the sandbox host, for its client */
	r = sbx_call(s.key, "GET", "/v1/identity", NULL);
	harness_expect(r, 200);
	ck_assert_str_eq(devacct_str(r, "client_id"), s.client);
	ck_assert_str_eq(devacct_str(r, "environment"), "sandbox");
	harness_resp_free(r);
	/* its subscription: every event, to the inbox */
	r = sbx_call(s.key, "GET", harness_fmt("/v1/webhook-endpoints/%s", s.webhook), NULL);
	harness_expect(r, 200);
	ck_assert_str_eq(devacct_text(r, "events"), "[\"*\"]");
	ck_assert_int_eq(strncmp(devacct_str(r, "url"), "bds-inbox:", 10), 0);
	harness_resp_free(r);
	/* an empty inbox */
	ck_assert_uint_eq(inbox_count(&s, s.key, NULL, NULL), 0);
	/* nobody's client: a developer sees it as unknown (fail closed) */
	r = devacct_jwt(&dev, "GET", harness_fmt("/v1/iam/clients/%s", s.client), NULL, NULL);
	devacct_assert_iam(r, 404, "CLIENT_NOT_FOUND");
	harness_resp_free(r);
	r = devacct_jwt(&dev, "DELETE", harness_fmt("/v1/iam/clients/%s", s.client), NULL, NULL);
	devacct_assert_iam(r, 404, "CLIENT_NOT_FOUND");
	harness_resp_free(r);
	r = devacct_jwt(&dev, "GET", harness_fmt("/v1/iam/clients/%s/webhooks", s.client), NULL,
	    NULL);
	ck_assert_int_eq(r->status, 404);
	harness_resp_free(r);
	r = devacct_jwt(&dev, "GET", harness_fmt("/v1/iam/clients/%s/client-secrets", s.client),
	    NULL, NULL);
	devacct_assert_iam(r, 404, "CLIENT_NOT_FOUND");
	harness_resp_free(r);
	/* the sandbox host only; input checked */
	r = devacct_call("POST", "api", "/v1/sandboxes", NULL, "{}", NULL);
	harness_assert_coded(r, 404, NULL);
	harness_resp_free(r);
	r = create_call("{\"name\":\"\"}");
	harness_assert_coded(r, 400, "VALIDATION_ERROR");
	devacct_assert_error(r, "name", NULL);
	harness_resp_free(r);
	r = create_call("{\"owner\":\"me\"}");
	harness_assert_coded(r, 400, "VALIDATION_ERROR");
	harness_resp_free(r);
	sbx_free(&s);
}
END_TEST

/* The whole anonymous journey, the claim and the grace of the old key. */
START_TEST(journey_to_claim)
{
	struct receiver *rc = receiver_start(NULL);
	struct json_object *o = NULL;
	struct harness_resp *r;
	struct sbx s;
	char *link, *newkey, *v;
	long long bills, sync_bills;
	size_t n;

	ck_assert_msg(rc != NULL, "%s", receiver_error());
	sbx_new(&s);
	devacct_subscribe(s.key, rc);
	link = devacct_sandbox_link(s.key, "u-journey", "user_good");
	jobs_idle();
	bills = devacct_sql_int("SELECT count(*) FROM bills WHERE link_id = $1", link, NULL);
	ck_assert_int_gt(bills, 0);
	sync_bills = sync_loop(s.key, link);
	ck_assert_int_eq(sync_bills, bills);

	/* the inbox: the signed deliveries, with their headers */
	ck_assert_int_eq(harness_deliver_once(), 0);
	ck_assert_uint_eq(inbox_count(&s, s.key, "bill.created", NULL), (size_t)bills);
	ck_assert_uint_eq(inbox_count(&s, s.key, "connection.ready", NULL), 1);
	n = inbox_count(&s, s.key, NULL, NULL);
	ck_assert_int_eq((long long)n, devacct_sql_int("SELECT count(*) FROM deliveries d"
	    " JOIN webhooks w ON w.client_id = d.client_id AND w.id = d.webhook_id"
	    " WHERE d.client_id = $1 AND w.url LIKE 'bds-inbox:%' AND d.status = 'succeeded'",
	    s.client, NULL));
	/* a page of 1, then its next */
	r = sbx_call(s.key, "GET", harness_fmt("/v1/sandboxes/%s/inbox?limit=1", s.id), NULL);
	harness_expect(r, 200);
	ck_assert_int_eq(devacct_bool(r, "has_more"), 1);
	ck_assert_ptr_nonnull(devacct_str(r, "next_cursor"));
	harness_resp_free(r);

	/* the claim: a wrong token, then the right one, then again */
	r = claim_call(&dev, s.id, "bds_sct_not-the-token");
	harness_assert_coded(r, 403, "INVALID_CLAIM_TOKEN");
	harness_resp_free(r);
	r = claim_call(&dev, s.id, s.token);
	harness_expect(r, 200);
	ck_assert_str_eq(devacct_str(r, "sandbox_id"), s.id);
	ck_assert_str_eq(devacct_str(r, "client_id"), s.client);
	ck_assert_ptr_nonnull(devacct_str(r, "claimed_at"));
	newkey = dup_str(r, "api_key");
	ck_assert_str_ne(newkey, s.key);
	v = devacct_sql_value("SELECT (abs(extract(epoch FROM $1::timestamptz - now())"
	    " - 86400) < 120)::text", devacct_str(r, "previous_key_expires_at"), NULL);
	ck_assert_str_eq(v, "true");
	free(v);
	harness_resp_free(r);
	r = claim_call(&dev2, s.id, s.token);
	harness_assert_coded(r, 409, "SANDBOX_ALREADY_CLAIMED");
	harness_resp_free(r);
	r = claim_call(&dev2, s.id, "bds_sct_still-not-the-token");
	harness_assert_coded(r, 403, "INVALID_CLAIM_TOKEN");
	harness_resp_free(r);

	/* the client is the developer's now */
	r = devacct_jwt(&dev, "GET", "/v1/iam/clients", NULL, NULL);
	harness_expect(r, 200);
	ck_assert_msg(strstr(r->body, s.client) != NULL, "%s not in %s", s.client, r->body);
	harness_resp_free(r);
	r = devacct_jwt(&dev2, "GET", harness_fmt("/v1/iam/clients/%s", s.client), NULL, NULL);
	devacct_assert_iam(r, 404, "CLIENT_NOT_FOUND");
	harness_resp_free(r);

	/* both keys work during the grace; then the old one is 401 */
	ck_assert_int_eq(identity_status(s.key), 200);
	ck_assert_int_eq(identity_status(newkey), 200);
	r = sbx_call(s.key, "GET", harness_fmt("/v1/sandboxes/%s/inbox", s.id), NULL);
	harness_expect(r, 200);
	harness_resp_free(r);
	devacct_sql_exec("UPDATE client_secrets SET grace_until = now() - interval '1 second'"
	    " WHERE client_id = $1 AND grace_until IS NOT NULL", s.client, NULL);
	r = sbx_call(s.key, "GET", "/v1/identity", NULL);
	harness_assert_coded(r, 401, "UNAUTHORIZED");
	harness_resp_free(r);
	ck_assert_int_eq(identity_status(s.key), 401);
	ck_assert_int_eq(identity_status(newkey), 200);

	/* the developer's webhook test of the inbox subscription lands in it */
	r = devacct_jwt(&dev, "POST", harness_fmt("/v1/iam/clients/%s/webhooks/%s/test",
	    s.client, s.webhook), "{\"event_type\":\"bill.deleted\"}", NULL);
	harness_expect(r, 200);
	ck_assert_int_eq(devacct_bool(r, "success"), 1);
	ck_assert_int_eq(devacct_int(r, "status_code"), 200);
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM webhook_inbox WHERE client_id = $1"
	    " AND id = $2 AND event_type = 'bill.deleted'", s.client, devacct_str(r, "delivery_id")),
	    1);
	harness_resp_free(r);
	ck_assert_uint_eq(inbox_count(&s, newkey, "bill.deleted", NULL), 1);

	/* sandbox.claimed: at the receiver and in the inbox, with its data */
	ck_assert_ptr_nonnull(devacct_received(rc, "sandbox.claimed", s.id));
	ck_assert_uint_eq(inbox_count(&s, newkey, "sandbox.claimed", &o), 1);
	ck_assert_ptr_nonnull(o);
	ck_assert_str_eq(json_object_get_string(json_object_object_get(o, "sandbox_id")), s.id);
	ck_assert_str_eq(json_object_get_string(json_object_object_get(o, "client_id")),
	    s.client);
	ck_assert_ptr_nonnull(json_object_object_get(o, "claimed_at"));
	ck_assert_ptr_nonnull(json_object_object_get(o, "previous_key_expires_at"));
	json_object_put(o);

	receiver_stop(rc);
	free(newkey);
	free(link);
	sbx_free(&s);
}
END_TEST

/* The evaluation proof: a JWS of the JWKS's key over the sandbox's
 * figures, verified by openssl; the owner's JWT reads it after a claim. */
START_TEST(evaluation_proof_verifies)
{
	struct json_object *payload = NULL, *claims;
	struct harness_resp *r;
	struct sbx s;
	char *link, *dir = NULL, *proof;
	long long bills, acked;

	sbx_new(&s);
	/* nothing done yet: zeros, no activity */
	r = sbx_call(s.key, "GET", harness_fmt("/v1/sandboxes/%s/evaluation-proof", s.id), NULL);
	harness_expect(r, 200);
	ck_assert_int_eq(devacct_int(r, "claims.links_made"), 0);
	ck_assert_int_eq(devacct_int(r, "claims.cursor_loops_completed"), 0);
	{
		struct json_object *c = devacct_json(r, "claims"), *v = NULL;

		ck_assert_ptr_nonnull(c);
		ck_assert(json_object_object_get_ex(c, "first_activity_at", &v) && v == NULL);
		ck_assert(json_object_object_get_ex(c, "last_activity_at", &v) && v == NULL);
		ck_assert(json_object_object_get_ex(c, "event_types_seen", &v) &&
		    json_object_array_length(v) == 0);
	}
	harness_resp_free(r);

	link = devacct_sandbox_link(s.key, "u-proof", "user_good");
	jobs_idle();
	bills = sync_loop(s.key, link);
	ck_assert_int_gt(bills, 0);
	(void)sync_loop(s.key, link);	/* a second loop: nothing new, one more completed */
	ck_assert_int_eq(harness_deliver_once(), 0);
	acked = devacct_sql_int("SELECT count(*) FROM deliveries WHERE client_id = $1"
	    " AND status = 'succeeded'", s.client, NULL);
	ck_assert_int_gt(acked, 0);

	r = sbx_call(s.key, "GET", harness_fmt("/v1/sandboxes/%s/evaluation-proof", s.id), NULL);
	harness_expect(r, 200);
	ck_assert_str_eq(devacct_str(r, "object"), "evaluation_proof");
	ck_assert_str_eq(devacct_str(r, "sandbox_id"), s.id);
	proof = dup_str(r, "proof");
	dir = proof_dir();
	ck_assert_int_eq(openssl_verify(proof, dir, &payload), 0);
	ck_assert_ptr_nonnull(payload);
	/* the signed claims are the answer's, and the figures the database's */
	claims = devacct_json(r, "claims");
	ck_assert_str_eq(json_object_to_json_string_ext(payload, JSON_C_TO_STRING_PLAIN),
	    json_object_to_json_string_ext(claims, JSON_C_TO_STRING_PLAIN));
	ck_assert_str_eq(json_object_get_string(json_object_object_get(payload, "sub")), s.id);
	ck_assert_str_eq(json_object_get_string(json_object_object_get(payload, "client_id")),
	    s.client);
	ck_assert_ptr_nonnull(json_object_object_get(payload, "iss"));
	ck_assert_int_gt(claim_int(payload, "iat"), 1700000000);
	ck_assert_int_eq(claim_int(payload, "links_made"), 1);
	ck_assert_int_eq(claim_int(payload, "bills_synced"), bills);
	ck_assert_int_eq(claim_int(payload, "cursor_loops_completed"), 2);
	ck_assert_int_eq(claim_int(payload, "webhook_deliveries_acknowledged"), acked);
	ck_assert(types_hold(payload, "bill.created"));
	ck_assert(types_hold(payload, "connection.ready"));
	ck_assert(!types_hold(payload, "sandbox.claimed"));
	ck_assert_ptr_nonnull(json_object_get_string(json_object_object_get(payload,
	    "first_activity_at")));
	ck_assert_ptr_nonnull(json_object_get_string(json_object_object_get(payload,
	    "last_activity_at")));
	json_object_put(payload);
	payload = NULL;
	harness_resp_free(r);

	/* the check bites: one byte of the signing input changed */
	{
		char *bad = strdup(proof);
		char *dot = strchr(bad, '.');

		dot[1] = dot[1] == 'e' ? 'f' : 'e';
		ck_assert_int_ne(openssl_verify(bad, dir, &payload), 0);
		json_object_put(payload);
		payload = NULL;
		free(bad);
	}
	/* the proof is no developer token: a JWT route refuses it */
	r = devacct_call("GET", "api", "/v1/iam/clients", devacct_bearer(proof), NULL, NULL);
	ck_assert_int_eq(r->status, 401);
	harness_resp_free(r);

	/* claimed: the owner's JWT reads it, another developer's does not */
	r = devacct_call("GET", "sandbox", harness_fmt("/v1/sandboxes/%s/evaluation-proof", s.id),
	    devacct_bearer(dev.access), NULL, NULL);
	harness_assert_coded(r, 404, "SANDBOX_NOT_FOUND");
	harness_resp_free(r);
	r = claim_call(&dev, s.id, s.token);
	harness_expect(r, 200);
	harness_resp_free(r);
	r = devacct_call("GET", "sandbox", harness_fmt("/v1/sandboxes/%s/evaluation-proof", s.id),
	    devacct_bearer(dev.access), NULL, NULL);
	harness_expect(r, 200);
	ck_assert_int_eq(devacct_int(r, "claims.links_made"), 1);
	ck_assert_int_eq(openssl_verify(devacct_str(r, "proof"), dir, &payload), 0);
	json_object_put(payload);
	harness_resp_free(r);
	r = devacct_call("GET", "sandbox", harness_fmt("/v1/sandboxes/%s/evaluation-proof", s.id),
	    devacct_bearer(dev2.access), NULL, NULL);
	harness_assert_coded(r, 404, "SANDBOX_NOT_FOUND");
	harness_resp_free(r);

	free(proof);
	free(dir);
	free(link);
	sbx_free(&s);
}
END_TEST

/* Another sandbox's id answers as an unknown one; no credential is 401. */
START_TEST(errors)
{
	struct harness_resp *r;
	struct sbx a, b;

	sbx_new(&a);
	sbx_new(&b);
	r = sbx_call(a.key, "GET", harness_fmt("/v1/sandboxes/%s/inbox", b.id), NULL);
	harness_assert_coded(r, 404, "SANDBOX_NOT_FOUND");
	harness_resp_free(r);
	r = sbx_call(a.key, "GET", harness_fmt("/v1/sandboxes/%s/evaluation-proof", b.id), NULL);
	harness_assert_coded(r, 404, "SANDBOX_NOT_FOUND");
	harness_resp_free(r);
	r = sbx_call(a.key, "GET",
	    "/v1/sandboxes/sbx_01900000-0000-7000-8000-000000000000/inbox", NULL);
	harness_assert_coded(r, 404, "SANDBOX_NOT_FOUND");
	harness_resp_free(r);
	r = sbx_call(a.key, "GET", "/v1/sandboxes/not-an-id/inbox", NULL);
	harness_assert_coded(r, 404, "SANDBOX_NOT_FOUND");
	harness_resp_free(r);
	r = sbx_call(NULL, "GET", harness_fmt("/v1/sandboxes/%s/inbox", a.id), NULL);
	harness_assert_coded(r, 401, "UNAUTHORIZED");
	harness_resp_free(r);
	r = sbx_call(NULL, "GET", harness_fmt("/v1/sandboxes/%s/evaluation-proof", a.id), NULL);
	harness_assert_coded(r, 401, "UNAUTHORIZED");
	harness_resp_free(r);
	r = sbx_call(a.key, "GET", harness_fmt("/v1/sandboxes/%s/inbox?cursor=forged", a.id),
	    NULL);
	harness_assert_coded(r, 400, "INVALID_CURSOR");
	harness_resp_free(r);
	r = sbx_call(a.key, "GET", harness_fmt("/v1/sandboxes/%s/inbox?limit=101", a.id), NULL);
	harness_assert_coded(r, 400, "VALIDATION_ERROR");
	harness_resp_free(r);
	/* the claim: a key is no developer; unknown; no token; B's token on A */
	r = devacct_call("POST", "sandbox", harness_fmt("/v1/sandboxes/%s/claim", a.id),
	    devacct_bearer(a.key), harness_fmt("{\"claim_token\":\"%s\"}", a.token), NULL);
	harness_assert_coded(r, 401, NULL);
	harness_resp_free(r);
	r = claim_call(&dev, "sbx_01900000-0000-7000-8000-000000000000", a.token);
	harness_assert_coded(r, 404, "SANDBOX_NOT_FOUND");
	harness_resp_free(r);
	r = devacct_call("POST", "sandbox", harness_fmt("/v1/sandboxes/%s/claim", a.id),
	    devacct_bearer(dev.access), "{}", NULL);
	harness_assert_coded(r, 400, "VALIDATION_ERROR");
	devacct_assert_error(r, "claim_token", "required");
	harness_resp_free(r);
	r = claim_call(&dev, a.id, b.token);
	harness_assert_coded(r, 403, "INVALID_CLAIM_TOKEN");
	harness_resp_free(r);
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM clients WHERE id = $1"
	    " AND user_id IS NULL", a.client, NULL), 1);
	sbx_free(&a);
	sbx_free(&b);
}
END_TEST

/* The number of rows naming client in every table with a client_id. */
static long long
rows_of_client(const char *client)
{
	return devacct_sql_int("SELECT coalesce(sum((xpath('/row/n/text()', query_to_xml("
	    "  format('SELECT count(*) AS n FROM %I WHERE client_id = %L', c.table_name, $1::text),"
	    "  false, true, '')))[1]::text::bigint), 0)"
	    " FROM information_schema.columns c JOIN information_schema.tables t"
	    "  USING (table_schema, table_name)"
	    " WHERE c.table_schema = 'public' AND c.column_name = 'client_id'"
	    "  AND t.table_type = 'BASE TABLE'", client, NULL);
}

/* `bdsctl jobs`: sandbox.expiring once, 7 days before; an expired
 * unclaimed sandbox deleted with all it made; a claimed one never. */
START_TEST(sweep_warns_and_deletes)
{
	static const char *const jobs[] = { "jobs", NULL };
	struct json_object *o = NULL;
	struct sbx warn, gone, kept, claimed, fresh;
	struct harness_resp *r;
	char *link;

	sbx_new(&warn);
	sbx_new(&gone);
	sbx_new(&kept);
	sbx_new(&claimed);
	sbx_new(&fresh);
	/* data of the one to go: a link, its bills, events, deliveries */
	link = devacct_sandbox_link(gone.key, "u-gone", "user_good");
	jobs_idle();
	(void)sync_loop(gone.key, link);
	ck_assert_int_eq(harness_deliver_once(), 0);
	ck_assert_int_gt(rows_of_client(gone.client), 5);
	r = claim_call(&dev, claimed.id, claimed.token);
	harness_expect(r, 200);
	harness_resp_free(r);

	devacct_sql_exec("UPDATE sandboxes SET expires_at = now() + interval '6 days'"
	    " WHERE id = $1", warn.id, NULL);
	devacct_sql_exec("UPDATE sandboxes SET expires_at = now() + interval '8 days'"
	    " WHERE id = $1", kept.id, NULL);
	devacct_sql_exec("UPDATE sandboxes SET expires_at = now() - interval '1 minute'"
	    " WHERE id = $1 OR id = $2", gone.id, claimed.id);
	ck_assert_int_eq(harness_bdsctl(jobs), 0);
	ck_assert_int_eq(harness_bdsctl(jobs), 0);

	/* warned once, with the expiry; the others not */
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM events WHERE client_id = $1"
	    " AND type = 'sandbox.expiring'", warn.client, NULL), 1);
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM events WHERE type ="
	    " 'sandbox.expiring' AND client_id IN ($1, $2)", kept.client, claimed.client), 0);
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM events WHERE type ="
	    " 'sandbox.expiring' AND client_id = $1", fresh.client, NULL), 0);
	ck_assert_int_eq(harness_deliver_once(), 0);
	ck_assert_uint_eq(inbox_count(&warn, warn.key, "sandbox.expiring", &o), 1);
	ck_assert_ptr_nonnull(o);
	ck_assert_str_eq(json_object_get_string(json_object_object_get(o, "sandbox_id")),
	    warn.id);
	ck_assert_ptr_nonnull(json_object_object_get(o, "expires_at"));
	json_object_put(o);

	/* the expired unclaimed one: nothing of it is left, its key is 401 */
	ck_assert_int_eq(rows_of_client(gone.client), 0);
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM clients WHERE id = $1",
	    gone.client, NULL), 0);
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM sandboxes WHERE id = $1",
	    gone.id, NULL), 0);
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM bill_seq WHERE client_id = $1",
	    gone.client, NULL), 0);
	ck_assert_int_eq(identity_status(gone.key), 401);
	/* the claimed one stays, whatever its date */
	ck_assert_int_eq(devacct_sql_int("SELECT count(*) FROM sandboxes WHERE id = $1",
	    claimed.id, NULL), 1);
	ck_assert_int_gt(rows_of_client(claimed.client), 0);
	ck_assert_int_eq(identity_status(warn.key), 200);

	free(link);
	sbx_free(&warn);
	sbx_free(&gone);
	sbx_free(&kept);
	sbx_free(&claimed);
	sbx_free(&fresh);
}
END_TEST

/* nginx limits creation per address: a burst from one address runs into
 * 429 RATE_LIMITED, another address still creates. */
START_TEST(create_limited_per_address)
{
	const char *const hdr[] = { "Content-Type: application/json", NULL };
	int created = 0, limited = 0;

	for (int i = 0; i < 30; i++) {
		struct harness_resp *r = harness_request_from("127.0.0.9", "POST", "sandbox",
		    "/v1/sandboxes", hdr, "{}", 2);

		if (r->status == 201)
			created++;
		else {
			harness_assert_coded(r, 429, "RATE_LIMITED");
			limited++;
		}
		harness_resp_free(r);
	}
	ck_assert_int_ge(created, 1);
	ck_assert_int_le(created, 22);
	ck_assert_int_ge(limited, 8);
	{
		struct harness_resp *r = harness_request_from("127.0.0.10", "POST", "sandbox",
		    "/v1/sandboxes", hdr, "{}", 2);

		harness_expect(r, 201);
		harness_resp_free(r);
	}
}
END_TEST

/* With sandboxes.previous_key_ttl = GRACE_S: the old key works until the
 * grace ends by the clock alone (no change of the key's row: a worker's
 * cached key stops too), then 401. */
#define GRACE_S 3
START_TEST(grace_ends_on_time)
{
	struct harness_resp *r;
	struct sbx s;
	char *newkey;
	long long claimed, last_ok;

	sbx_new(&s);
	r = claim_call(&dev, s.id, s.token);
	harness_expect(r, 200);
	claimed = harness_now_ms();
	newkey = dup_str(r, "api_key");
	harness_resp_free(r);
	last_ok = claimed;
	for (;;) {
		long long st = identity_status(s.key), now = harness_now_ms();

		if (st != 200) {
			ck_assert_int_eq(st, 401);
			break;
		}
		last_ok = now;
		ck_assert_msg(now - claimed < (GRACE_S + 5) * 1000,
		    "the old key still works %lld ms after the claim", now - claimed);
		harness_sleep_ms(100);
	}
	/* it worked for (about) the grace, and stopped then */
	ck_assert_int_ge(last_ok - claimed, (GRACE_S - 1) * 1000);
	for (int i = 0; i < 4; i++)
		ck_assert_int_eq(identity_status(s.key), 401);
	ck_assert_int_eq(identity_status(newkey), 200);
	free(newkey);
	sbx_free(&s);
}
END_TEST

static void
short_grace_up(void)
{
	struct harness_opts o;

	harness_opts_defaults(&o);
	o.extra_config = "sandboxes.previous_key_ttl = 3\n";
	harness_fixture_start(&o);
	devacct_legal();
	devacct_new(&dev, "sbxg");
}

static void
stack_up(void)
{
	harness_fixture_start(NULL);
	devacct_legal();
	devacct_new(&dev, "sbx");
	devacct_new(&dev2, "sbx2");
}

static void
recover(void)
{
	harness_fixture_recover();
	if (harness_jobs_pid() == 0)
		ck_assert_msg(harness_jobs_start() == 0, "%s", harness_error());
}

static Suite *
sandboxes_suite(void)
{
	Suite *s = suite_create("e2e_sandboxes");
	TCase *tc = tcase_create("sandboxes");

	tcase_add_unchecked_fixture(tc, stack_up, harness_fixture_stop);
	tcase_add_checked_fixture(tc, recover, NULL);
	tcase_set_timeout(tc, 180);
	tcase_add_test(tc, create_answers_a_working_sandbox);
	tcase_add_test(tc, journey_to_claim);
	tcase_add_test(tc, evaluation_proof_verifies);
	tcase_add_test(tc, errors);
	tcase_add_test(tc, sweep_warns_and_deletes);
	tcase_add_test(tc, create_limited_per_address);
	suite_add_tcase(s, tc);

	tc = tcase_create("grace");
	tcase_add_unchecked_fixture(tc, short_grace_up, harness_fixture_stop);
	tcase_add_checked_fixture(tc, recover, NULL);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, grace_ends_on_time);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return harness_run_suite(sandboxes_suite());
}
